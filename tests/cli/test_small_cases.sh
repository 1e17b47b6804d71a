#!/bin/sh
# Issue 16, item 9: text output escapes C1 and bidirectional controls as
# well as C0; --binary=DIR says it is a directory, a truncated --binary
# that it is truncated; weighted sums that stop
# at 2^64 - 1 are warned about; a weight with blanks around it is refused
# either way.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
ROOT=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need python3
cd "$tmp" || exit 1

# The cxx fixture's binary with vector_growth renamed, in every string
# table, to 13 bytes holding U+009B (CSI) in UTF-8, U+202E (right-to-left
# override) and U+2066 (left-to-right isolate); and an indexed file whose
# function name is not UTF-8 (tests/fuzz/hostile.py).
python3 "$ROOT/tests/cli/rename_function.py" "$FX/cxx.pie" hostile.pie vector_growth \
	'v\xc2\x9b\xe2\x80\xaeg\xe2\x81\xa6hxy'
python3 "$ROOT/tests/fuzz/hostile.py" hostile >/dev/null
for fmt in text json yaml; do
	"$MD" show --no-demangle --format=$fmt --binary=hostile.pie "$FX/cxx.v4.profraw" >$fmt.out 2>/dev/null
	"$MD" show --format=$fmt hostile/json-invalid-utf8.memprof >u$fmt.out 2>/dev/null
done
if grep -qF 'v\u009b\u202eg\u2066hxy' text.out &&
   grep -qF 'v\u009b\u202eg\u2066hxy' json.out &&
   grep -qF 'v\u009b\u202eg\u2066hxy' yaml.out &&
   grep -qF '\xffbad\xc3(utf8' utext.out && grep -qF '\ufffdbad\ufffd(utf8' ujson.out &&
   ! LC_ALL=C grep -q "$(printf '\302\233\|\342\200\256\|\377')" text.out json.out yaml.out utext.out &&
   python3 -c 'import json, sys; json.load(open(sys.argv[1]))' json.out; then
	ok "C1 (CSI), bidirectional controls and bytes that are not UTF-8 are escaped in text, JSON and YAML"
else
	notok "escapes: $(grep -a 'hxy' text.out | head -n 1) $(grep -a 'bad' utext.out | head -n 1)"
fi

# diff prints each frame's text from a cache, checked once for escapes:
# a frame on many rows gets the same escapes on each, in every format, as
# show's (a quote and a backslash: printable, but quoted in JSON and YAML).
# recurse() is 21 frames of basic's stacks.
python3 "$ROOT/tests/cli/rename_function.py" "$FX/basic.pie" odd.pie recurse \
	'r\xc2\x9b\"\\ee'
"$MD" merge --no-progress --binary=odd.pie -o odd.memprof "$FX/basic.pie.v4.profraw" 2>/dev/null
for fmt in text json yaml; do
	"$MD" diff --format=$fmt odd.memprof odd.memprof >d$fmt.out 2>/dev/null
done
if [ "$(grep -cF '      - r\u009b"\ee /fixtures/src/basic.c:' dtext.out)" = 21 ] &&
   [ "$(grep -cF '"r\u009b\"\\ee /fixtures/src/basic.c:' djson.out)" = 21 ] &&
   [ "$(grep -cF '      - "r\u009b\"\\ee /fixtures/src/basic.c:' dyaml.out)" = 21 ] &&
   ! LC_ALL=C grep -q "$(printf '\302\233')" dtext.out djson.out dyaml.out &&
   python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
frames = [f for r in rows for f in r.get("frames", [])]
assert sum(f.startswith("r\u009b\"\\ee /fixtures") for f in frames) == 21, frames' djson.out; then
	ok "diff: a frame on many rows is escaped alike on each, in text, JSON and YAML"
else
	notok "diff escapes: $(grep -a -m 2 'ee /fixtures' dtext.out dyaml.out | tr '\n' ' ')"
fi

# --binary=DIR.
"$MD" show --binary="$tmp" "$FX/cxx.v4.profraw" >/dev/null 2>err
if grep -q 'is a directory, not an executable' err && ! grep -q 'file descriptor' err; then
	ok "--binary=DIR: 'is a directory'"
else
	notok "--binary=DIR: $(cat err)"
fi

# --binary= another build of a library the profile maps (a helper's
# check of Graphviz: libtool relinks libraries as it installs them, and
# the build tree's copy has another build id): show and merge name the
# file; with the right build given too, or no segment left without a
# binary, nothing.
args="--binary=$FX/basic.pie $FX/basic.pie.v4.profraw"
# shellcheck disable=SC2086
"$MD" show --binary="$FX/libfixture-clang16.so" $args >/dev/null 2>err; r=$?
# shellcheck disable=SC2086
"$MD" merge --no-progress -o ob.memprof --binary="$FX/libfixture-clang16.so" $args 2>err2; r2=$?
# shellcheck disable=SC2086
"$MD" show --binary="$FX/libfixture.so" --binary="$FX/libfixture-clang16.so" $args >/dev/null 2>err3
# shellcheck disable=SC2086
"$MD" merge --no-progress -o ob2.memprof --binary="$FX/libfixture.so" \
	--binary="$FX/libfixture-clang16.so" $args 2>>err3
bid=$(readelf -n "$FX/libfixture-clang16.so" | awk '/Build ID/ { print $3 }')
say="memprof-data: warning: '$FX/libfixture-clang16.so': its build id $bid is in no input's memory map, where a build id no binary has is: another build of the file?"
if [ $r = 0 ] && [ $r2 = 0 ] && grep -qF "$say" err && grep -qF "$say" err2 &&
   ! grep -q "no input's memory map" err3; then
	ok "--binary= another build of a mapped library: show and merge name it; nothing when every map has its binary"
else
	notok "another build's --binary: exit $r $r2 $(cat err err2 err3)"
fi

# --binary= a build tree's libtool wrapper script (a helper's check of
# Graphviz: the real dot is in cmd/dot/.libs): said, as a script.
printf '#! /bin/bash\n# dot - temporary wrapper script for .libs/dot\n' >wrapper
"$MD" show --binary=wrapper "$FX/cxx.v4.profraw" >/dev/null 2>err; r=$?
"$MD" merge --no-progress -o w.memprof --binary=wrapper "$FX/cxx.v4.profraw" 2>err2; r2=$?
if [ $r = 1 ] && [ $r2 = 1 ] && [ ! -e w.memprof ] &&
   grep -qF "memprof-data: 'wrapper': a script, not an ELF file (a libtool wrapper? the program it runs is in .libs beside it)" err &&
   grep -qF "'wrapper': a script, not an ELF file" err2; then
	ok "--binary=a libtool wrapper script: said to be a script, exit 1, nothing written"
else
	notok "--binary=wrapper script: exit $r $r2 $(cat err err2)"
fi

# --binary= a copy cut short, its build id still right: an error naming
# the file, whether --strict or not, and merge writes nothing.
head -c 1000 "$FX/cxx.pie" >cut.pie
"$MD" show --binary=cut.pie "$FX/cxx.v4.profraw" >/dev/null 2>err; r=$?
"$MD" merge --no-progress -o cut.memprof --binary=cut.pie "$FX/cxx.v4.profraw" 2>err2; r2=$?
if [ $r -eq 1 ] && [ $r2 -eq 1 ] && [ ! -e cut.memprof ] &&
   grep -q "^memprof-data: 'cut.pie': truncated: the section headers would end at byte" err; then
	ok "--binary= a truncated binary: exit 1 naming it, nothing written"
else
	notok "--binary=truncated: status $r/$r2: $(cat err err2)"
fi

# Weighted sums at 2^64 - 1: a warning.
"$MD" merge --no-progress -o sat.memprof --weight="18446744073709551615,$FX/cxx.v4.profraw" \
	--weight="5,$FX/cxx.v4.profraw" 2>err; r=$?
if [ $r = 0 ] && grep -q 'warning: 4 contexts reached 2^64 - 1' err; then
	ok "weighted sums that stop at 2^64 - 1: a warning naming how many contexts"
else
	notok "saturation: exit $r, $(cat err)"
fi
"$MD" merge --no-progress -o fine.memprof --weight="3,$FX/cxx.v4.profraw" 2>err
grep -q 'reached 2^64' err && notok "a warning without saturation" ||
	ok "no warning when nothing saturates"

# Blanks around a weight: refused before as after it.
"$MD" merge --no-progress -o b.memprof --weight=" 3,$FX/cxx.v4.profraw" 2>/dev/null; r1=$?
"$MD" merge --no-progress -o b.memprof --weight="3 ,$FX/cxx.v4.profraw" 2>/dev/null; r2=$?
"$MD" merge --no-progress -o b.memprof --weight="+3,$FX/cxx.v4.profraw" 2>/dev/null; r3=$?
if [ "$r1$r2$r3" = 222 ]; then
	ok "--weight=' 3', '3 ' and '+3': each a usage error"
else
	notok "--weight with blanks: $r1 $r2 $r3"
fi

# Issue 17, item 7: a library given alone is not "the wrong main binary".
"$MD" show --binary="$FX/libfixture.so" "$FX/basic.pie.v4.profraw" >lib.out 2>err
if ! grep -q "main segment" err && grep -q 'no binary with build id adf75c4e' err &&
   grep -q 'fixturelib_alloc /fixtures/src/fixturelib.c' lib.out; then
	ok "show --binary=lib.so alone: its frames symbolized, no 'main segment' warning"
else
	notok "show --binary=lib.so: $(cat err)"
fi

# Issue 17, item 2: a raw stack is cut at its first PC after the leaf in
# no segment (garbage past code without frame pointers), counted, and
# kept with --keep-bad-frames.  The cxx fixture with two return addresses
# replaced by addresses in no segment, the stack back in mapped code for
# one PC only, as protoc's garbage is; with one replaced, the stack comes
# back for two (main and its caller) and is kept, as code unmapped before
# the profile was written (raw_unmapped_run_end(), test_unloaded.sh).
python3 - "$FX/cxx.v4.profraw" garbage.profraw one.profraw <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
q = lambda v: struct.pack("<Q", v)
for old in (0x5555555daa67, 0x5555555dab52):
    assert d.count(q(old)) == 1
one = d.replace(q(0x5555555daa67), q(0x6bc6b61e02bf))
open(sys.argv[3], "wb").write(one)
open(sys.argv[2], "wb").write(one.replace(q(0x5555555dab52), q(0x6bc6b61e0400)))
PY
"$MD" show --format=json --binary="$FX/cxx.pie" garbage.profraw >cut.json 2>/dev/null
"$MD" show --format=json --keep-bad-frames --binary="$FX/cxx.pie" garbage.profraw >kept.json 2>/dev/null
"$MD" merge --no-progress -o cut.memprof --binary="$FX/cxx.pie" garbage.profraw 2>merr
"$MD" merge --no-progress --keep-bad-frames -o kept.memprof --binary="$FX/cxx.pie" garbage.profraw 2>>merr
"$MD" show --format=json --binary="$FX/cxx.pie" one.profraw >one.json 2>/dev/null
kept_note='note: 1 raw stack with a PC in no segment past the leaf (garbage past code without frame pointers), kept whole$'
if python3 - cut.json kept.json one.json <<'PY' && grep -q 'note: 1 raw stack cut at a PC in no segment' merr && grep -q "$kept_note" merr
import json, sys
cut, kept, one = (json.load(open(f)) for f in sys.argv[1:])
assert cut["symbolization"]["frames"]["stacks_cut"] == 1
assert kept["symbolization"]["frames"]["stacks_cut"] == 0
assert one["symbolization"]["frames"]["stacks_cut"] == 0
assert one["symbolization"]["frames"]["stacks_through_unmapped_code"] == 1
names = lambda d: [[f.get("function") or f.get("address") for f in c["frames"]]
                   for c in d["contexts"]]
# Cut after the leaf: operator new alone (kept whole, being all
# allocator); kept, the garbage PC and the two frames past it.
assert ["_Znwm"] in names(cut), names(cut)
assert ["0x6bc6b61e02bf", "0x6bc6b61e0400", "__libc_start_call_main"] in names(kept), names(kept)
assert ["0x6bc6b61e02bf", "main", "__libc_start_call_main"] in names(one), names(one)
PY
then
	ok "a stack with a PC in no segment: cut after the leaf and counted (show's stacks_cut, merge's note), kept with --keep-bad-frames (counted too), kept when two mapped PCs follow to the root"
else
	notok "stack cut: $(cat merr)"
fi

# A stale return address in the runtime's code past the program's frames
# (what a walk of frame pointers meets past code built without them):
# left out by show and merge, as llvm-profdata leaves it out, counted,
# and kept with --keep-runtime.  The cxx fixture with main's return
# address in vector_growth's context replaced by one inside compiler-rt's
# operator delete (no DWARF: known by its name).
python3 - "$FX/cxx.v4.profraw" stale.profraw "$(nm "$FX/cxx.pie" | awk '$3 == "_ZdlPv" { print $1 }')" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
old = struct.pack("<Q", 0x5555555dab52)
new = struct.pack("<Q", 0x555555554000 + int(sys.argv[3], 16) + 9)
assert d.count(old) == 1
open(sys.argv[2], "wb").write(d.replace(old, new))
PY
"$MD" show --format=json --binary="$FX/cxx.pie" stale.profraw >stale.json 2>/dev/null
"$MD" show --format=json --keep-runtime --binary="$FX/cxx.pie" stale.profraw >stalek.json 2>/dev/null
"$MD" merge --no-progress -o stale.memprof --binary="$FX/cxx.pie" stale.profraw 2>merr
"$MD" show --format=json stale.memprof >stalem.json 2>/dev/null
# Merged unsymbolized, then with the binary: the same bytes (resymbolize).
"$MD" merge --no-progress -o stale0.memprof stale.profraw 2>/dev/null
"$MD" merge --no-progress -o stale1.memprof --binary="$FX/cxx.pie" stale0.memprof 2>/dev/null
if python3 - stale.json stalek.json stalem.json <<'PY' &&
import json, sys
dropped, kept, merged = (json.load(open(f)) for f in sys.argv[1:])
names = lambda d: [[f.get("function") for f in c["frames"]] for c in d["contexts"]]
grow = lambda d: [n for n in names(d) if "_Z13vector_growthv" in n][0]
assert grow(dropped)[-2:] == ["_Z13vector_growthv", "__libc_start_call_main"], grow(dropped)
assert grow(merged) == grow(dropped), grow(merged)
assert "_ZdlPv" in grow(kept), grow(kept)
assert dropped["symbolization"]["frames"]["stale_runtime_dropped"] == 1
assert kept["symbolization"]["frames"]["stale_runtime_dropped"] == 0
PY
   grep -q "note: 1 return address in the profiling runtime's code left out of stacks past their first frame" merr &&
   cmp -s stale.memprof stale1.memprof; then
	ok "a stale return address in the runtime's code past the program's frames: left out by show and merge, counted, kept with --keep-runtime"
else
	notok "stale runtime return address: $(cat merr)"
fi

# A preloaded run (LD_PRELOAD=libmemprof_preload.so): a stale return
# address in the runtime's own code, as a walk of frame pointers past
# code without them meets, is the runtime's even with no --binary for it:
# the preload library beside this command is found by its build id, and
# the PC left out as above.  The profile's first stack with a PC past its
# leaf gets, there, one inside the runtime's free().
PRELOAD=$(cd "$(dirname "$MD")" && pwd)/libmemprof_preload.so
if [ -f "$PRELOAD" ] && command -v cc >/dev/null; then
	cat >pl.c <<'C'
#include <stdlib.h>
__attribute__((noinline)) static void *get(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *use(size_t n) { void *p = get(n); *(volatile char *)p = 1; return p; }
int main(void) { for (int i = 0; i < 4; i++) free(use(32 + i)); return 0; }
C
	cc -g -O1 -fno-omit-frame-pointer pl.c -o pl &&
	LD_PRELOAD=$PRELOAD MEMPROF_OPTIONS=log_path="$tmp/pl.prof" ./pl
	bid=$(readelf -n "$PRELOAD" | awk '/Build ID/ { print $3 }')
	free_at=$(nm -D --defined-only "$PRELOAD" | awk '$3 == "free" { print $1 }')
	if python3 - pl.prof.* plstale.profraw "$bid" "$free_at" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
bid, free_at = bytes.fromhex(sys.argv[3]), int(sys.argv[4], 16)
magic, version, total, segoff, miboff, stkoff = struct.unpack_from("<6Q", d, 0)
assert version == 4
bias = None
for i in range(struct.unpack_from("<Q", d, segoff)[0]):
    start, end, off, n = struct.unpack_from("<4Q", d, segoff + 8 + 64 * i)
    if d[segoff + 8 + 64 * i + 32:][:n] == bid:
        bias = off
assert bias is not None, "no segment of the preload library"
p = stkoff + 8
for _ in range(struct.unpack_from("<Q", d, stkoff)[0]):
    sid, npc = struct.unpack_from("<2Q", d, p)
    if npc >= 3:
        struct.pack_into("<Q", d, p + 16 + 8, bias + free_at + 9)
        break
    p += 16 + 8 * npc
else:
    raise SystemExit("no stack of three PCs")
open(sys.argv[2], "wb").write(d)
PY
	then
		"$MD" show --format=json plstale.profraw >pl.json 2>plerr
		if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["symbolization"]["frames"]["stale_runtime_dropped"] == 1, d["symbolization"]
assert any(m["path"].endswith("libmemprof_preload.so") for m in d["symbolization"]["modules"]), d["symbolization"]["modules"]' pl.json 2>>plerr &&
		   ! grep -q "$bid" plerr; then
			ok "a preloaded run: the runtime's stale return address found in the preload library beside the command, left out"
		else
			notok "preloaded run's stale runtime PC: $(cat plerr)"
		fi
	else
		notok "could not make a preloaded profile with a stale runtime PC"
	fi
else
	notok "no $PRELOAD beside the command (make builds it)"
fi

# That preloaded run (no access counts: the code is not instrumented)
# against an instrumented run of the same source: diff and overlap say
# that its hot and cold classes do not compare; two instrumented runs
# hear nothing of it.
if [ -f "$PRELOAD" ] && command -v clang-19 >/dev/null &&
   clang-19 -g -O1 -fno-omit-frame-pointer -fmemory-profile pl.c -o pli 2>plerr &&
   MEMPROF_OPTIONS=log_path="$tmp/pli.prof" ./pli 2>>plerr; then
	pl=$(ls pl.prof.*) pli=$(ls pli.prof.*)
	"$MD" diff --binary=pl --binary=pli "$pli" "$pl" >/dev/null 2>plerr; r=$?
	"$MD" overlap --binary=pl --binary=pli "$pl" "$pli" >/dev/null 2>plerr2
	"$MD" diff --binary=pli "$pli" "$pli" >/dev/null 2>plerr3
	say="holds no access counts (a profile of code not instrumented?): its hot and cold classes and TotalAccessCount do not compare with those of"
	if [ $r -eq 0 ] && grep -qF "memprof-data: warning: '$pl': $say '$pli'" plerr &&
	   grep -qF "memprof-data: warning: '$pl': $say '$pli'" plerr2 &&
	   ! grep -q "access counts" plerr3; then
		ok "diff and overlap of a preloaded run against an instrumented one say the first has no access counts"
	else
		notok "no access counts: exit $r $(cat plerr plerr2 plerr3)"
	fi
else
	notok "could not build and run pl.c instrumented: $(cat plerr)"
fi

# Issue 17, item 6: show --function takes demangled names, with or without
# parameters, and suggests the closest names when none matches.
"$MD" merge --no-progress -o cx.memprof --binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" 2>/dev/null
n() { "$MD" show --format=json --function="$1" cx.memprof 2>err |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)["contexts"]))' 2>/dev/null; }
a=$(n _Z10scalar_newv) b=$(n 'scalar_new()') c=$(n scalar_new)
"$MD" show --function=scalr_new cx.memprof >/dev/null 2>err; r=$?
if [ "$a$b$c" = 111 ] && [ $r = 1 ] &&
   grep -q "no function 'scalr_new' in the profile, by linkage or demangled name (closest: 'scalar_new()'" err; then
	ok "show --function: linkage name, demangled name with and without parameters; a typo gets the closest names"
else
	notok "show --function: $a $b $c, exit $r, $(cat err)"
fi
# --function follows the first frame show prints: vector<int>'s context
# starts, in the file, at std::__new_allocator<int>::allocate, which show
# hides (allocator library) unless --keep-runtime; its first frame shown
# is _Vector_base<int>::_M_allocate.  The same of the LLVM export, whose
# frames --binary names.  A hidden function asked for by name keeps its
# own contexts.
vb='std::_Vector_base<int, std::allocator<int> >::_M_allocate'
na='std::__new_allocator<int>::allocate'
"$MD" merge --no-progress --format=llvm -o cx.llvm --binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" 2>/dev/null
nl() { "$MD" show --format=json --binary="$FX/cxx.pie" "$@" cx.llvm 2>err |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)["contexts"]))' 2>/dev/null; }
a=$(n "$vb") b=$(n "$na") c=$(nl --function="$vb") d=$(nl --function="$na")
e=$(nl --keep-runtime --function="$na")
"$MD" show --keep-runtime --function="$vb" cx.memprof >/dev/null 2>err; r=$?
"$MD" show --binary="$FX/cxx.pie" --function=main cx.llvm >/dev/null 2>err2; r2=$?
if [ "$a$b$c$d$e" = 11111 ] && [ $r = 1 ] && [ $r2 = 1 ] &&
   grep -q "no context allocated in function 'main': the profile has only calls through it" err2; then
	ok "show --function: the contexts whose first frame shown is the function's, past the allocator library's (ours and LLVM's); a caller only is an error"
else
	notok "show --function past hidden frames: $a $b $c $d $e, exit $r $r2, $(cat err err2)"
fi

# Issue 17, item 5: show --frame-table: each distinct frame once, contexts
# as indices, the same frames once expanded; --max-frames applies too.
args="--binary=$FX/basic.pie --binary=$FX/libfixture.so $FX/basic.pie.v4.profraw"
# shellcheck disable=SC2086
"$MD" show --format=json $args >plain.json 2>/dev/null
# shellcheck disable=SC2086
"$MD" show --format=json --frame-table $args >table.json 2>/dev/null
# shellcheck disable=SC2086
"$MD" show --format=json --frame-table --max-frames=2 $args >table2.json 2>/dev/null
if python3 - plain.json table.json table2.json <<'PY'
import json, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:])
t = b["frame_table"]
assert len(t) == len({json.dumps(f, sort_keys=True) for f in t}), "duplicates"
for x, y in zip(a["contexts"], b["contexts"]):
    assert [t[i] for i in y["frames"]] == x["frames"]
    assert x["mib"] == y["mib"]
assert sum(len(x["frames"]) for x in b["contexts"]) > len(t)
for x, y in zip(a["contexts"], c["contexts"]):
    n = len(x["frames"])
    assert len(y["frames"]) == min(n, 2)
    assert y.get("frames_elided", 0) == max(0, n - 2)
PY
then
	ok "show --frame-table: distinct frames once, contexts as indices that expand to show's frames; --max-frames elides"
else
	notok "show --frame-table"
fi

# A program built without frame pointers under compiler-rt's runtime,
# whose unwinder follows them: every stack stops at its first frame or
# two.  show and merge say so, once, and how to get whole stacks; the
# same program built with frame pointers hears nothing of it.
if command -v clang-19 >/dev/null; then
	cat >shallow.c <<'C'
#include <stdlib.h>
void *volatile sink;
/* 20 allocation sites, each 3 calls below main. */
#define SITE(k) __attribute__((noinline)) void a##k(int i) { sink = malloc(16 + i + k); free(sink); } \
	__attribute__((noinline)) void b##k(int i) { a##k(i); a##k(i + 1); } \
	__attribute__((noinline)) void c##k(int i) { b##k(i); b##k(i + 2); }
#define CALL(k) c##k(k);
#define X20(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(8) m(9) \
	m(10) m(11) m(12) m(13) m(14) m(15) m(16) m(17) m(18) m(19)
X20(SITE)
int main(void) { X20(CALL) return 0; }
C
	if clang-19 -g -O2 -fomit-frame-pointer -fmemory-profile shallow.c -o shnofp 2>sherr &&
	   clang-19 -g -O2 -fno-omit-frame-pointer -fmemory-profile shallow.c -o shfp 2>>sherr &&
	   MEMPROF_OPTIONS=log_path="$tmp/shnofp.prof" ./shnofp 2>>sherr &&
	   MEMPROF_OPTIONS=log_path="$tmp/shnofp2.prof" ./shnofp 2>>sherr &&
	   MEMPROF_OPTIONS=log_path="$tmp/shfp.prof" ./shfp 2>>sherr; then
		a=$(ls shnofp.prof.*) b=$(ls shnofp2.prof.*) c=$(ls shfp.prof.*)
		"$MD" show --binary=shnofp "$a" >/dev/null 2>sh1
		"$MD" merge --no-progress -o sh.memprof --binary=shnofp "$a" "$b" 2>sh2
		"$MD" show --binary=shfp "$c" >/dev/null 2>sh3
		"$MD" merge --no-progress -o shfp.memprof --binary=shfp "$c" 2>>sh3
		n=$("$MD" show --format=json "$a" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["inputs"][0]["deepest_stack"])')
		say="a program built without frame pointers, which the runtime follows? (build it with -fno-omit-frame-pointer, or run it with MEMPROF_OPTIONS=fast_unwind_on_malloc=0)"
		if [ "$n" -le 4 ] && grep -qF "memprof-data: note: '$a': no stack deeper than $n address" sh1 &&
		   grep -qF "$say" sh1 && grep -qF "'$a': no stack deeper" sh2 &&
		   grep -qF "memprof-data: note: 1 more input of stacks as shallow" sh2 &&
		   [ "$(grep -c "no stack deeper" sh2)" = 1 ] && ! grep -q "frame pointers" sh3; then
			ok "stacks $n addresses deep at most (built without frame pointers): show and merge say why, once; built with them, nothing"
		else
			notok "shallow stacks ($n): $(cat sh1 sh2 sh3)"
		fi
	else
		notok "could not build and run shallow.c: $(cat sherr)"
	fi
fi
