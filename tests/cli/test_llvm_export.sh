#!/bin/sh
# merge --format=llvm, judged by the compiler: clang++-19 building with our
# LLVM indexed profile gives the same hint lines and the same memprof
# attributes and !memprof/!callsite metadata as with llvm-profdata-19's
# profile of the same raw profiles, for a C++ program built and run here
# (tests/cli/src/hotcold.cc: cold, notcold and mixed contexts, inline
# frames, a shared library), for an allocation inlined only in the
# profiled build (tests/cli/src/inlined_alloc.cc) and for the C++ fixture;
# with one profile and
# with eight merged; with headers 8 and 12, MemProf 3 and 0, and the full
# schema.  And the
# shared library, whose frames llvm-profdata-19 drops, gets its hint from
# our profile only.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
ROOT=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need clang++-19 llvm-profdata-19 objcopy

SRC=$ROOT/tests/cli/src
CF="-g -O2 -fno-omit-frame-pointer -fmemory-profile"
cd "$tmp" || exit 1
if ! clang++-19 $CF -fPIC -shared "$SRC/hotcold_lib.cc" -o libhc.so 2>err ||
   ! clang++-19 $CF "$SRC/hotcold.cc" -L. -lhc -Wl,-rpath,"$tmp" -o hc 2>>err; then
	notok "build tests/cli/src/hotcold.cc: $(cat err)"
	exit 1
fi
# Nine runs side by side (each sleeps 2 s): one alone, eight to merge;
# and tests/cli/src/mixed_runs.cc's three, if it builds.
for i in 1 2 3 4 5 6 7 8 9; do
	mkdir -p run$i
	(MEMPROF_OPTIONS=log_path="$tmp/run$i/p" ./hc) &
done
if clang++-19 $CF "$SRC/mixed_runs.cc" -o mixed 2>err.mixed; then
	for mode in cold hot brief; do
		(MEMPROF_OPTIONS=log_path="$tmp/mixed.$mode" ./mixed $mode) &
	done
fi
wait
one=$(ls run1/p.*)
eight=$(ls run[2-9]/p.*)
[ -n "$one" ] && [ "$(echo "$eight" | wc -w)" -eq 8 ] ||
	{ notok "the program wrote no profiles"; exit 1; }

# Build SRC with PROFILE into NAME.ll, its hint lines sorted in NAME.hints.
use() {
	clang++-19 -g -O2 -S -emit-llvm -mllvm -memprof-report-hinted-sizes \
		-mllvm -memprof-ave-lifetime-cold-threshold=1 \
		-fmemory-profile-use="$2" -o "$1.ll" "$3" 2>"$1.err"
	rc=$?
	grep '^Total size for allocation' "$1.err" | sort >"$1.hints"
	grep -v '^; ModuleID' "$1.ll" >"$1.ir" 2>/dev/null
	return $rc
}

# Compare our export with llvm-profdata-19's for INPUTS built as SRC;
# MDOPTS, options of ours only.
MDOPTS=
compare() {
	name=$1 src=$2 bin=$3
	shift 3
	# shellcheck disable=SC2086
	if ! llvm-profdata-19 merge --profiled-binary "$bin" "$@" -o llvm.prof 2>err ||
	   ! "$MD" merge --format=llvm --no-progress -o ours.prof --binary="$bin" \
		$MDOPTS "$@" 2>>err; then
		notok "$name: merge: $(head -c 300 err)"
		return
	fi
	if ! use L llvm.prof "$src" || ! use O ours.prof "$src"; then
		notok "$name: clang++-19 rejected a profile: $(cat L.err O.err | head -c 300)"
		return
	fi
	# A context clang finds both cold and not cold gets no hint line,
	# only its attribute.
	if [ ! -s L.hints ] && ! grep -q '"memprof"=' L.ir; then
		notok "$name: llvm-profdata-19's profile gives no hint to compare"
	elif cmp -s L.hints O.hints && cmp -s L.ir O.ir; then
		ok "$name: clang++-19 gives the same $(wc -l <O.hints) hint lines and the same IR with our profile as with llvm-profdata-19's"
	else
		notok "$name: hints or IR differ: $(diff L.hints O.hints | head -c 300) $(diff L.ir O.ir | grep -c memprof) memprof lines differ"
	fi
}

compare "hotcold.cc, one profile" "$SRC/hotcold.cc" hc $one
# shellcheck disable=SC2086
compare "hotcold.cc, eight profiles merged" "$SRC/hotcold.cc" hc $eight
# Folded at clang's default thresholds, several runs' records of one
# context give other types to a clang given others (a helper's check of
# glslang: 6 hint lines under a 1 s cold lifetime): a note says so when
# the thresholds were not given, not for one input or given ones.
# shellcheck disable=SC2086
"$MD" merge --format=llvm --no-progress -o n.prof --binary=hc $eight 2>n8.err
# shellcheck disable=SC2086
"$MD" merge --format=llvm --no-progress -o n.prof --binary=hc --cold-lifetime=1 $eight 2>n8t.err
"$MD" merge --format=llvm --no-progress -o n.prof --binary=hc $one 2>n1.err
if grep -q "folded by the type clang gives them at its default thresholds" n8.err &&
   ! grep -q "default thresholds" n8t.err n1.err; then
	ok "eight inputs exported at the default thresholds: a note to give clang's own"
else
	notok "the note on thresholds: $(cat n8.err n8t.err n1.err | head -c 400)"
fi
compare "the C++ fixture cxx.cc" "$ROOT/tests/fixtures/src/cxx.cc" \
	"$ROOT/tests/fixtures/cxx.pie" "$ROOT/tests/fixtures/cxx.v4.profraw"
# A PC in no segment past the leaf (an unwinder's garbage past code
# without frame pointers, as in libstdc++; tests/cli/src/garbage_frame.cc
# makes one): llvm-profdata-19 drops that PC and keeps the frames past
# it, so main's call gets a !callsite; so must the export keep them,
# where show and our format cut the stack there.
if [ "$(uname -m)" = x86_64 ]; then
	if clang++-19 $CF -mno-red-zone "$SRC/garbage_frame.cc" -o gf 2>err &&
	   (MEMPROF_OPTIONS=log_path="$tmp/gf.prof" ./gf) 2>>err; then
		compare "garbage_frame.cc, a return address in no segment past the leaf" \
			"$SRC/garbage_frame.cc" gf gf.prof.*
		if grep -q 'call .*caller.*!callsite' O.ir; then
			ok "garbage_frame.cc: main's call of caller(), past the garbage, gets its !callsite"
		else
			notok "garbage_frame.cc: no !callsite on main's call of caller()"
		fi
		# Said once, as a count: not the first garbage PC a thread met.
		"$MD" merge --format=llvm --no-progress -o w.prof --binary=gf gf.prof.* 2>err
		if grep -q "note: 10 raw stacks with a PC in no segment past the leaf (garbage past code without frame pointers), kept whole, as llvm-profdata keeps them (--format=llvm, --keep-types)" err &&
		   ! grep -q "lies in no segment" err; then
			ok "garbage_frame.cc: the stacks kept past a PC in no segment are counted in a note"
		else
			notok "garbage_frame.cc: merge said '$(cat err)'"
		fi
		# A shard for a later export keeps them too.
		"$MD" merge --keep-types --no-progress -o gf.memprof --binary=gf gf.prof.* 2>/dev/null
		if "$MD" merge --format=llvm --no-progress -o gfs.prof gf.memprof 2>err &&
		   cmp -s w.prof gfs.prof; then
			ok "garbage_frame.cc: a --keep-types shard keeps the frames past the garbage, and exports to the raw profile's bytes"
		else
			notok "garbage_frame.cc: --keep-types shard export differs: $(cat err)"
		fi
	else
		notok "build and run tests/cli/src/garbage_frame.cc: $(cat err)"
	fi
fi
# Garbage that falls inside the program's addresses: llvm-profdata-19
# looks every PC outside the binary's text up as it is, as an address of
# the binary, and keeps the frames its DWARF names; a PIE's addresses are
# small numbers, which garbage read past libstdc++'s frames often is
# (protoc: 15,440 of 16,148 stacks).  One such value, main's address plus
# 16, put at the root of every stack of a profile: our export takes
# the same frames, and clang the same IR.
main_addr=$(nm hc | awk '$3 == "main" { print $1 }')
if [ -n "$main_addr" ] && python3 - "$one" garbage.prof "$main_addr" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
value = int(sys.argv[3], 16) + 16
magic, version, total, segoff, miboff, stkoff = struct.unpack_from("<6Q", data, 0)
assert version == 4 and total == len(data), (version, total, len(data))
n = struct.unpack_from("<Q", data, stkoff)[0]
p, out = stkoff + 8, [struct.pack("<Q", n)]
for _ in range(n):
    sid, npc = struct.unpack_from("<2Q", data, p)
    pcs = list(struct.unpack_from("<%dQ" % npc, data, p + 16))
    p += 16 + 8 * npc
    pcs.append(value)
    out.append(struct.pack("<2Q", sid, len(pcs)) + struct.pack("<%dQ" % len(pcs), *pcs))
new = bytearray(data[:stkoff] + b"".join(out))
struct.pack_into("<Q", new, 16, len(new))
open(sys.argv[2], "wb").write(new)
PY
then
	compare "hotcold.cc, a garbage PC inside the binary's addresses at each root" \
		"$SRC/hotcold.cc" hc garbage.prof
else
	notok "could not put a garbage PC into $one"
fi
# An allocation inlined into its caller when profiled, a call of its own
# when the profile is used: the caller's call site comes from the inline
# frames of the allocation's own address.  The IR must be llvm-profdata's,
# with a !callsite on that call.
if clang++-19 -DPROFILED $CF "$SRC/inlined_alloc.cc" -o ia 2>err &&
   (MEMPROF_OPTIONS=log_path="$tmp/ia.prof" ./ia) 2>>err; then
	ia=$(ls ia.prof.*)
	compare "inlined_alloc.cc, the wrapper not inlined where the profile is used" \
		"$SRC/inlined_alloc.cc" ia $ia
	if grep -q 'call .*make_buffer.*!callsite' O.ir; then
		ok "inlined_alloc.cc: make_record's call of make_buffer gets its !callsite"
	else
		notok "inlined_alloc.cc: no !callsite on make_record's call of make_buffer"
	fi
else
	notok "build and run tests/cli/src/inlined_alloc.cc: $(cat err)"
fi
# Allocations inside code of other modules, which llvm-profdata-19 drops:
# fopen() of the C library (named by libc6-dbg's debug file, when
# installed) and a library of ours that only a --debug-dir has.  Kept,
# they would give the calls into them !callsite metadata.
if clang++-19 $CF -fPIC -shared "$SRC/foreign_leaf_lib.cc" -o libfl.so 2>err &&
   clang++-19 $CF "$SRC/foreign_leaf.cc" -L. -lfl -Wl,-rpath,"$tmp" -o fl 2>>err &&
   (MEMPROF_OPTIONS=log_path="$tmp/fl.prof" ./fl) 2>>err; then
	fl=$(ls fl.prof.*)
	bid=$(readelf -n libfl.so | awk '/Build ID/ { print $3 }')
	mkdir -p "fldbg/.build-id/$(echo "$bid" | cut -c1-2)"
	cp libfl.so "fldbg/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug"
	# The library's frames are there for show: the case is real.
	if "$MD" show --debug-dir=fldbg --binary=fl "$fl" 2>/dev/null | grep -q 'lib_make(unsigned int) .*foreign_leaf_lib.cc'; then
		MDOPTS=--debug-dir=fldbg
		compare "foreign_leaf.cc, allocations inside other modules' code" \
			"$SRC/foreign_leaf.cc" fl $fl
		MDOPTS=
		# Every frame of our file is one of the program's functions.
		"$MD" show --binary=fl --binary=libfl.so ours.prof >fl.show 2>&1
		if grep -q 'lib_make\|guid:' fl.show || ! grep -q 'make(unsigned int) +' fl.show; then
			notok "foreign_leaf.cc: our LLVM file keeps frames of other modules: $(grep 'lib_make\|guid:' fl.show | head -3)"
		else
			ok "foreign_leaf.cc: our LLVM file keeps the program's frames only"
		fi
		if ! "$MD" show --binary=fl "$fl" 2>/dev/null | grep -q '__fopen_internal'; then
			echo "# libc6-dbg not installed: fopen()'s frames were not named here"
		fi
	else
		notok "foreign_leaf.cc: show --debug-dir does not name lib_make"
	fi
else
	notok "build and run tests/cli/src/foreign_leaf.cc: $(cat err)"
fi

# One context, cold in one run and not in another: llvm-profdata-19 keeps
# both records, and clang hints the context not cold; so must our file,
# which keeps records of different types apart.  Types under the
# thresholds clang is given: the cold and the brief run are alike (short
# lived) under the default 200 s, and fold; --cold-lifetime=1 keeps them
# apart, as clang's -memprof-ave-lifetime-cold-threshold=1 tells them.
if [ -x mixed ] && [ -n "$(ls mixed.cold.* mixed.hot.* mixed.brief.* 2>/dev/null)" ]; then
	compare "mixed_runs.cc, a cold run and a hot one" "$SRC/mixed_runs.cc" \
		mixed mixed.cold.* mixed.hot.*
	if grep -q '"memprof"="notcold"' O.ir && [ "$("$MD" show ours.prof 2>/dev/null | grep -c '^  - id:')" -eq 2 ]; then
		ok "mixed_runs.cc: the context is hinted not cold; our file keeps the two records"
	else
		notok "mixed_runs.cc: $(cat O.hints) $(grep -c memprof O.ir)"
	fi
	MDOPTS=--cold-lifetime=1
	compare "mixed_runs.cc, a cold run and a brief one, --cold-lifetime=1" \
		"$SRC/mixed_runs.cc" mixed mixed.cold.* mixed.brief.*
	MDOPTS=
	"$MD" merge --format=llvm --no-progress -o ours.prof --binary=mixed \
		mixed.cold.* mixed.brief.* 2>/dev/null
	use O ours.prof "$SRC/mixed_runs.cc"
	if grep -q 'single alloc type cold' O.hints; then
		ok "mixed_runs.cc: without --cold-lifetime=1 the two short-lived (under 200 s) records fold, and clang told 1 s hints the sum cold"
	else
		notok "mixed_runs.cc, default thresholds: $(cat O.hints)"
	fi
	if "$MD" merge --no-progress -o x.memprof --cold-lifetime=1 --binary=mixed mixed.cold.* 2>err ||
	   ! grep -q "are for --format=llvm or --keep-types" err; then
		notok "merge --cold-lifetime without --format=llvm: $(cat err)"
	else
		ok "merge --cold-lifetime without --format=llvm or --keep-types: a usage error"
	fi
	# A fleet's shards in our format, exported at the end: with
	# --keep-types, the same bytes as the export of the raw profiles;
	# without, the shards' merge folds the cold run's record with the
	# hot one's.
	"$MD" merge --format=llvm --no-progress -o raw.prof --binary=mixed \
		mixed.cold.* mixed.hot.* 2>/dev/null
	"$MD" merge --keep-types --no-progress -o s1.memprof --binary=mixed mixed.cold.* 2>/dev/null
	"$MD" merge --keep-types --no-progress -o s2.memprof --binary=mixed mixed.hot.* 2>/dev/null
	"$MD" merge --keep-types --no-progress -o s12.memprof s1.memprof s2.memprof 2>/dev/null
	"$MD" merge --no-progress -o f1.memprof --binary=mixed mixed.cold.* 2>/dev/null
	"$MD" merge --no-progress -o f2.memprof --binary=mixed mixed.hot.* 2>/dev/null
	"$MD" merge --no-progress -o f12.memprof f1.memprof f2.memprof 2>/dev/null
	if "$MD" merge --format=llvm --no-progress -o shards.prof s1.memprof s2.memprof 2>err &&
	   "$MD" merge --format=llvm --no-progress -o tree.prof s12.memprof 2>>err &&
	   "$MD" merge --format=llvm --no-progress -o folded.prof f12.memprof 2>fold.err &&
	   cmp -s raw.prof shards.prof && cmp -s raw.prof tree.prof && ! cmp -s raw.prof folded.prof &&
	   [ "$("$MD" show s12.memprof 2>/dev/null | grep -c 'make(unsigned int) .*mixed_runs.cc')" -eq 2 ] &&
	   ! "$MD" show s12.memprof 2>/dev/null | grep -q '0xffffffffffffff'; then
		ok "mixed_runs.cc: shards merged with --keep-types export to the raw profiles' bytes, in one or two levels (without, the types fold); show lists the context once per type, with no class frame"
	else
		notok "mixed_runs.cc, --keep-types shards: $(cat err)"
	fi
	# A shard records the thresholds its classes were decided under: a
	# later merge with others fails, naming the shard (its records of
	# one class are folded and cannot be classed again); with the same,
	# or keeping no classes, it goes.
	"$MD" merge --keep-types --cold-lifetime=1 --no-progress -o s1t.memprof \
		--binary=mixed mixed.cold.* 2>/dev/null
	rm -f t.prof
	if ! "$MD" merge --format=llvm --no-progress -o t.prof s1.memprof --cold-lifetime=1 2>err &&
	   [ ! -e t.prof ] &&
	   grep -q "s1.memprof': its records' types were kept apart under --cold-density=0.05 --cold-lifetime=200 --hot-density=1000, this merge's are 0.05, 1 and 1000" err &&
	   ! "$MD" merge --keep-types --no-progress -o t.memprof s1t.memprof s2.memprof 2>err2 &&
	   grep -q "s1t.memprof': its records' types were kept apart under .*--cold-lifetime=1 " err2 &&
	   "$MD" merge --format=llvm --cold-lifetime=1 --no-progress -o t.prof s1t.memprof 2>/dev/null &&
	   "$MD" merge --no-progress -o t.memprof s1t.memprof s2.memprof 2>/dev/null &&
	   "$MD" show --stats s1t.memprof 2>/dev/null | grep -q '^      classes: 12$' &&
	   "$MD" show s1t.memprof 2>/dev/null | grep -q "s1t.memprof: indexed v[0-9]*, 1 profile, [0-9]* contexts, types kept apart (--keep-types: cold density 0.05, cold lifetime 1 s, hot density 1000)" &&
	   ! "$MD" show --stats f1.memprof 2>/dev/null | grep -q 'classes:'; then
		ok "a --keep-types shard records its thresholds: merged under others, an error naming it; under the same, or keeping no classes, merged"
	else
		notok "shard thresholds: $(cat err err2)"
	fi
	# Its section checked on reading: a threshold not a finite number
	# >= 0, or a section of another size, is refused (with the file's
	# checksum made to hold, as a writer of such bytes would).
	if python3 - s1t.memprof <<'PY'
import struct, sys, zlib
def sealed(b):
    struct.pack_into("<I", b, 56, zlib.crc32(bytes(b[:56]) + bytes(8) + bytes(b[64:])))
    return b
d = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack_from("<I", d, 24)[0]
for i in range(n):
    sid, off, size = struct.unpack_from("<I4xQQ", d, 64 + 24 * i)
    if sid == 9:
        nan = d[:]
        struct.pack_into("<I", nan, off + 4, 0x7fc00000)
        open("nan.memprof", "wb").write(sealed(nan))
        big = d[:]
        struct.pack_into("<Q", big, 64 + 24 * i + 16, size + 4)
        open("size.memprof", "wb").write(sealed(big))
PY
	   ! "$MD" show nan.memprof >/dev/null 2>err &&
	   grep -q "nan.memprof': section classes: threshold 1 (0x7fc00000) is negative or not finite" err &&
	   ! "$MD" show size.memprof >/dev/null 2>err2 &&
	   grep -q "size.memprof': section classes holds 16 bytes, not 12" err2; then
		ok "a shard's thresholds section with a NaN, or of 16 bytes, is refused with what is wrong"
	else
		notok "bad thresholds section: $(cat err err2)"
	fi
	# One run's shard merged without --keep-types: each context classed
	# by its MIB, which is the run's record's, so such shards export to
	# the raw profiles' bytes too; a shard of two runs cannot, and the
	# merge says so.
	cp f12.memprof f12b.memprof
	if "$MD" merge --format=llvm --no-progress -o plain.prof f1.memprof f2.memprof 2>err &&
	   cmp -s raw.prof plain.prof && ! grep -q 'several runs' err &&
	   grep -q "f12.memprof': merged from several runs without --keep-types" fold.err &&
	   "$MD" merge --format=llvm --no-progress -o two.prof f12.memprof f12b.memprof 2>err2 &&
	   [ "$(grep -c 'several runs' err2)" = 2 ] &&
	   grep -q 'note: 1 more input merged from several runs without --keep-types' err2; then
		ok "mixed_runs.cc: one-run shards without --keep-types export to the raw profiles' bytes; a two-run shard gets a note, named once"
	else
		notok "mixed_runs.cc, plain shards: $(cat err fold.err err2 2>/dev/null)"
	fi
	# Compared with the merge that folds the types, the same contexts.
	if "$MD" overlap --format=json s12.memprof f12.memprof >ov.json 2>err &&
	   python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); c = d["matching"]["contexts"]; assert d["overlap"]["AllocCount"] == 1 and c["base_only"] == c["test_only"] == 0 and c["base"] == c["test"], d' ov.json 2>>err; then
		ok "overlap of a --keep-types merge and a plain one: the same contexts, overlap 1"
	else
		notok "overlap of --keep-types and plain merges: $(tail -c 300 err)"
	fi
	if "$MD" merge --keep-types --format=pprof --no-progress -o x.pb --binary=mixed mixed.cold.* 2>err ||
	   ! grep -q "keep-types is for our indexed format" err; then
		notok "merge --keep-types --format=pprof: $(cat err)"
	else
		ok "merge --keep-types with a viewer format: a usage error"
	fi
else
	notok "build and run tests/cli/src/mixed_runs.cc: $(cat err.mixed 2>/dev/null)"
fi

# The kinds of hint the program is made to have, in our profile's IR.
"$MD" merge --format=llvm --no-progress -o ours.prof --binary=hc $one 2>/dev/null
use O ours.prof "$SRC/hotcold.cc"
if grep -q 'single alloc type cold' O.hints && grep -q 'single alloc type notcold' O.hints &&
   grep -q '!memprof' O.ir && grep -q '!callsite' O.ir; then
	ok "hotcold.cc gets cold and notcold hints and !memprof/!callsite metadata for its mixed site"
else
	notok "hotcold.cc's hints: $(cat O.hints)"
fi

# Headers 8 (the default) and 12, MemProf 3 (the default) and 0, and the
# full schema: accepted alike.
for opt in --llvm-header=8 --llvm-header=12 --llvm-full-schema \
	   --llvm-memprof-version=0 "--llvm-memprof-version=0 --llvm-header=12"; do
	# shellcheck disable=SC2086
	if "$MD" merge --format=llvm $opt --no-progress -o v.prof --binary=hc $one 2>err &&
	   use V v.prof "$SRC/hotcold.cc" && cmp -s V.hints O.hints && cmp -s V.ir O.ir; then
		ok "merge --format=llvm $opt: clang++-19 reads it, same hints"
	else
		notok "merge --format=llvm $opt: $(head -c 300 err V.err)"
	fi
done
# show of an LLVM file prints the MIB fields its schema keeps, not zeros
# for the others: our default file has four; the full schema all.
"$MD" merge --format=llvm --llvm-full-schema --no-progress -o full.prof --binary=hc $one 2>/dev/null
if "$MD" show --format=json ours.prof >s4.json 2>err && "$MD" show --format=json full.prof >s26.json 2>>err &&
   "$MD" show ours.prof 2>>err | grep -q 'MIB fields: AllocCount TotalSize TotalLifetime TotalLifetimeAccessDensity$' &&
   python3 - s4.json s26.json <<'PY' 2>>err
import json, sys
four, full = (json.load(open(p)) for p in sys.argv[1:3])
want = ["AllocCount", "TotalSize", "TotalLifetime", "TotalLifetimeAccessDensity"]
assert four["inputs"][0]["mib_fields"] == want, four["inputs"][0]
assert all(sorted(c["mib"]) == sorted(want) for c in four["contexts"])
assert "TotalAccessCount" not in four["summary"] and "AllocCount" in four["summary"]
assert "mib_fields" not in full["inputs"][0]
assert all(len(c["mib"]) > 20 for c in full["contexts"])
assert "TotalAccessCount" in full["summary"]
PY
then
	ok "show of an LLVM file: the MIB fields of its schema only (four, or all with --llvm-full-schema)"
else
	notok "show of an LLVM file's schema: $(tail -c 400 err)"
fi
# diff leaves out a metric an input does not keep (its zeros would read
# as a drop to nothing), and a gate on one is an error, not a verdict.
"$MD" diff --match=function ours.prof full.prof >d.txt 2>err
rc=$?
"$MD" diff --match=function --fail-if=accesses:+10% ours.prof full.prof >/dev/null 2>err2
rc2=$?
"$MD" diff --match=function --metrics=accesses ours.prof full.prof >/dev/null 2>err3
rc3=$?
if [ $rc -eq 0 ] && grep -q "ours.prof': keeps no TotalAccessCount (its MIB schema lacks it): left out of the diff" err &&
   ! grep -q TotalAccessCount d.txt && grep -q AllocCount d.txt &&
   [ $rc2 -eq 1 ] && grep -q "ours.prof': keeps no TotalAccessCount (its MIB schema lacks it): --fail-if=accesses:+10% cannot be judged" err2 &&
   [ $rc3 -eq 1 ] && grep -q "no metric left to compare" err3; then
	ok "diff of a four-field LLVM file: TotalAccessCount left out with a note; a gate on it, or it alone, exits 1"
else
	notok "diff of a four-field LLVM file: $rc $rc2 $rc3 $(cat err err2 err3)"
fi
# The file's header: magic, version 8 or 12 with the MemProf bit.
"$MD" merge --format=llvm --no-progress -o v8.prof --binary=hc $one 2>/dev/null
"$MD" merge --format=llvm --llvm-header=12 --no-progress -o v12.prof --binary=hc $one 2>/dev/null
h8=$(od -A n -t x1 -N 16 v8.prof | tr -d ' \n')
h12=$(od -A n -t x1 -N 16 v12.prof | tr -d ' \n')
if [ "$h8" = ff6c70726f6669810800000000000040 ] &&
   [ "$h12" = ff6c70726f6669810c00000000000040 ]; then
	ok "headers: indexed version 8 (default) and 12, each with the MemProf variant bit"
else
	notok "headers: $h8 / $h12"
fi

# The shared library: hinted with our profile, not with llvm-profdata-19's.
"$MD" merge --format=llvm --no-progress -o ours.prof --binary=hc \
	--binary=libhc.so $one 2>/dev/null
llvm-profdata-19 merge --profiled-binary hc $one -o llvm.prof 2>/dev/null
use LL llvm.prof "$SRC/hotcold_lib.cc"
use OL ours.prof "$SRC/hotcold_lib.cc"
if [ ! -s LL.hints ] && grep -q 'single alloc type cold' OL.hints; then
	ok "the shared library gets a cold hint from our profile, none from llvm-profdata-19's"
else
	notok "shared library: ours '$(cat OL.hints)', llvm's '$(cat LL.hints)'"
fi

# show reads LLVM's files, ours and llvm-profdata-19's, MemProf version 0
# (its default) to 3: the same contexts, by leaf frame and MIB, and the
# same totals.
"$MD" merge --format=llvm --no-progress -o ours.prof --binary=hc $one 2>/dev/null
"$MD" show --format=json ours.prof >ours.json 2>err
for mv in 0 1 2 3; do
	llvm-profdata-19 merge --memprof-version=$mv --profiled-binary hc $one \
		-o llvm$mv.prof 2>/dev/null
	if "$MD" show --format=json llvm$mv.prof >llvm.json 2>>err &&
	   python3 - ours.json llvm.json <<'PY' 2>>err
import json, sys
def key(path):
    d = json.load(open(path))
    ctx = sorted((c["frames"][0]["function"], c["frames"][0]["line"],
                  c["frames"][0]["column"], c["mib"]["AllocCount"],
                  c["mib"]["TotalSize"], c["mib"]["TotalLifetime"])
                 for c in d["contexts"])
    s = d["summary"]
    return ctx, (s["contexts"], s["AllocCount"], s["TotalSize"], s["TotalLifetime"])
a, b = key(sys.argv[1]), key(sys.argv[2])
assert a == b, (a, b)
assert a[1][0] >= 3, a
PY
	then
		ok "show lists the same contexts and totals from our LLVM file and llvm-profdata-19's MemProf $mv"
	else
		notok "show of LLVM files, MemProf $mv: $(tail -c 400 err)"
	fi
done
# With --binary, GUIDs are named by the binary's functions.
if "$MD" show --binary=hc --binary=libhc.so llvm0.prof 2>err | grep -q '^      - main +' &&
   "$MD" show --binary=hc --binary=libhc.so llvm0.prof 2>/dev/null | grep -q 'churn() +' &&
   "$MD" show llvm0.prof 2>/dev/null | grep -q '^      - guid:db956436e78dd5fa +'; then
	ok "show names an LLVM file's GUIDs by the functions of --binary (guid:HEX without)"
else
	notok "GUID names: $(cat err)"
fi
# An LLVM file's stacks are read from it for the contexts printed only:
# show --top=2 gives the first two of the whole listing, frames and all;
# --frame-table lists each distinct frame once (a GUID's name is made
# once); an input's ids are its contexts' offsets in its own file,
# whatever input comes before it.
"$MD" show --format=json llvm0.prof >all.json 2>err
"$MD" show --format=json --top=2 llvm0.prof >top.json 2>>err
"$MD" show --format=json --frame-table llvm0.prof >ft.json 2>>err
"$MD" show --format=json ours.prof llvm0.prof >two.json 2>>err
if python3 - all.json top.json ft.json two.json <<'PY' 2>>err
import json, sys
a, t, f, two = (json.load(open(p)) for p in sys.argv[1:5])
def strip(c):
    return c["id"], c["frames"], c["mib"]
assert len(a["contexts"]) >= 3, a["contexts"]
assert [strip(c) for c in t["contexts"]] == [strip(c) for c in a["contexts"][:2]]
table = f["frame_table"]
assert len({json.dumps(x, sort_keys=True) for x in table}) == len(table), table
assert [[table[i] for i in c["frames"]] for c in f["contexts"]] == \
       [c["frames"] for c in a["contexts"]]
second = sorted((strip(c) for c in two["contexts"] if c["input"] == 1),
                key=lambda x: x[0])
assert second == sorted((strip(c) for c in a["contexts"]), key=lambda x: x[0])
PY
then
	ok "show --top of an LLVM file: the whole listing's first contexts; --frame-table lists each frame once; ids per file"
else
	notok "show of LLVM files read lazily: $(tail -c 400 err)"
fi
# --function of an LLVM file: the contexts whose leaf is that function,
# found by the MD5 of its linkage name through the record table; a name
# the file does not have is an error.
fn=$("$MD" show --format=json --no-demangle --binary=hc --binary=libhc.so llvm0.prof 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["contexts"][0]["frames"][0]["function"])')
"$MD" show --format=json --function="$fn" llvm0.prof >fn.json 2>err
"$MD" show --function=no_such_function llvm0.prof >/dev/null 2>nf.err
rc=$?
if python3 - all.json fn.json <<'PY' 2>>err && [ $rc = 1 ] &&
import json, sys
a, f = (json.load(open(p)) for p in sys.argv[1:3])
leaf = {c["frames"][0]["function"] for c in f["contexts"]}
assert len(leaf) == 1 and f["contexts"], f["contexts"]
want = [c for c in a["contexts"] if c["frames"][0]["function"] in leaf]
assert f["contexts"] == want, (f["contexts"], want)
PY
   grep -q "no function 'no_such_function' in the profile (an LLVM file knows a function by the MD5 of its linkage name" nf.err; then
	ok "show --function=$fn of an LLVM file: the contexts allocated there, through the record table; an unknown name is an error"
else
	notok "show --function of an LLVM file (status $rc): $(tail -c 400 err) $(cat nf.err)"
fi
# Given --binary, --function of an LLVM file finds a demangled name too
# (without its parameters here) among the binaries' functions; a name
# none has is an error naming the closest; without --binary the error
# says to give the linkage name or --binary.
"$MD" show --format=json --binary=hc --binary=libhc.so llvm0.prof >named.json 2>/dev/null
pretty=$(python3 -c 'import json,sys
fs = [c["frames"][0] for c in json.load(open(sys.argv[1]))["contexts"] if c["frames"]]
print([f.get("demangled", "") for f in fs if f["function"] == sys.argv[2]][0])' named.json "$fn" 2>/dev/null)
bare=${pretty%%(*}
"$MD" show --format=json --binary=hc --binary=libhc.so --function="$bare" llvm0.prof \
	>fd.json 2>err
"$MD" show --binary=hc --binary=libhc.so --function="${bare}x" llvm0.prof >/dev/null 2>nd.err
rc=$?
"$MD" show --function="$bare" llvm0.prof >/dev/null 2>nb.err
rc2=$?
if [ -n "$bare" ] && [ "$bare" != "$fn" ] && [ $rc = 1 ] && [ $rc2 = 1 ] &&
   python3 -c 'import json,sys
a, b = (json.load(open(p))["contexts"] for p in sys.argv[1:3])
assert a and [c["mib"] for c in a] == [c["mib"] for c in b], (a, b)' fn.json fd.json 2>>err &&
   grep -q "no function '${bare}x' in the profile, by linkage name or by the demangled names of the binaries' functions (closest: '$pretty'" nd.err &&
   grep -q "or --binary to find it by its demangled name" nb.err; then
	ok "show --binary --function=$bare of an LLVM file: the contexts of $fn; a misspelling names the closest; without --binary, the linkage name is asked for"
else
	notok "--function by demangled name of an LLVM file ($bare, status $rc $rc2): $(tail -c 300 err) $(cat nd.err nb.err)"
fi
# Named by --binary, an LLVM file's contexts lose their leading allocator
# frames (std::allocator and kin) as the raw profile's do in show: the
# same first frames from llvm-profdata-19's file of the C++ fixture as
# from its raw profile, and --alloc-function applies to them too.
llvm-profdata-19 merge --profiled-binary "$ROOT/tests/fixtures/cxx.pie" "$ROOT/tests/fixtures/cxx.v4.profraw" \
	-o cxxl.prof 2>/dev/null
"$MD" show --format=json --binary="$ROOT/tests/fixtures/cxx.pie" cxxl.prof >cxxl.json 2>err
"$MD" show --format=json --binary="$ROOT/tests/fixtures/cxx.pie" "$ROOT/tests/fixtures/cxx.v4.profraw" >cxxr.json 2>/dev/null
"$MD" show --format=json --binary="$ROOT/tests/fixtures/cxx.pie" --alloc-function='*_Vector_base*' \
	cxxl.prof >cxxa.json 2>>err
if python3 - cxxl.json cxxr.json cxxa.json <<'PY' 2>>err
import json, sys
def firsts(path):
    return sorted(tuple(f.get("demangled", f.get("function")) for f in c["frames"][:2])
                  for c in json.load(open(path))["contexts"] if c["frames"] and c["frames"][0].get("function"))
l, r, a = firsts(sys.argv[1]), firsts(sys.argv[2]), firsts(sys.argv[3])
assert len(l) == 3 and l == [x for x in r if x in l], (l, r)
assert any(x[0].startswith("std::_Vector_base<int") for x in l), l
assert not any("_Vector_base" in x[0] for x in a) and len(a) == 3, a
PY
then
	ok "show --binary of an LLVM file drops the leading allocator frames as for raw stacks, --alloc-function too"
else
	notok "LLVM file's allocator frames: $(tail -c 400 err)"
fi
# A field our LLVM file lacks (its schema keeps the four clang uses) is
# left out of overlap with a note, not measured as 0 against a file that
# has it (llvm-profdata-19's MemProf version 0 keeps all 26).
if llvm-profdata-19 merge --memprof-version=0 --profiled-binary hc $one -o l0.prof 2>/dev/null &&
   "$MD" overlap --format=json ours.prof l0.prof >ov0.json 2>err &&
   grep -q "note: 'ours.prof': keeps no TotalAccessCount (its MIB schema lacks it): left out of the overlap" err &&
   python3 -c 'import json,sys; o = json.load(open(sys.argv[1]))["overlap"]; assert sorted(o) == ["AllocCount", "TotalLifetime", "TotalSize"], o' ov0.json 2>>err; then
	ok "overlap of our LLVM file and llvm-profdata's full schema: TotalAccessCount, which ours lacks, left out with a note"
else
	notok "overlap, a field one side lacks: $(cat err)"
fi
# overlap and diff read LLVM files too: one run's against eight runs'.
# shellcheck disable=SC2086
"$MD" merge --format=llvm --no-progress -o ours8.prof --binary=hc $eight 2>/dev/null
if "$MD" overlap --format=json ours.prof ours8.prof >ov.json 2>err &&
   python3 -c 'import json,sys; o = json.load(open(sys.argv[1]))["overlap"]; assert o["AllocCount"] == 1, o' ov.json 2>>err; then
	ok "overlap of one run's LLVM file and eight runs': AllocCount shares agree (1.0)"
else
	notok "overlap of LLVM files: $(cat err)"
fi
"$MD" diff --fail-if=AllocCount:+100% ours.prof ours8.prof >/dev/null 2>err
rc=$?
if [ $rc -eq 3 ]; then
	ok "diff of LLVM files gates: eight runs' AllocCount crosses +100%"
else
	notok "diff of LLVM files: status $rc: $(cat err)"
fi
# Raw profiles of clang 14 (v1), which llvm-profdata-19 rejects, export too.
FX=$ROOT/tests/fixtures
if "$MD" merge --format=llvm --no-progress -o v1.prof --binary="$FX/basic.clang14" \
	--binary="$FX/libfixture-clang14.so" "$FX/basic.clang14.v1.profraw" 2>err &&
   [ "$(od -A n -t x1 -N 8 v1.prof | tr -d ' \n')" = ff6c70726f666981 ]; then
	ok "a clang 14 (raw v1) profile exports"
else
	notok "raw v1 export: $(cat err)"
fi
# From our indexed profile (format 10 keeps start lines and the
# allocator's frames, --keep-types the records' types): the same bytes
# as from the raw profiles.
# shellcheck disable=SC2086
"$MD" merge --keep-types --no-progress -o idx.memprof --binary=hc --binary=libhc.so $eight 2>/dev/null
# shellcheck disable=SC2086
"$MD" merge --format=llvm --no-progress -o raw.prof --binary=hc --binary=libhc.so $eight 2>/dev/null
if "$MD" merge --format=llvm --no-progress -o fromidx.prof idx.memprof 2>err &&
   cmp -s raw.prof fromidx.prof; then
	ok "the export of our indexed profile equals the export of its raw profiles"
else
	notok "export from indexed: $(cat err)"
fi
# Format 9 had no function start lines: a clear refusal, nothing written.
v9="$ROOT/tests/fuzz/bad-indexed/base.memprof.in"
"$MD" merge --format=llvm --no-progress -o x.prof "$v9" 2>err
rc=$?
if [ $rc -eq 1 ] && grep -q "base.memprof.in': an indexed profile of format 9 keeps no function start lines" err &&
   [ ! -e x.prof ]; then
	ok "a format 9 input is refused with a message saying to merge its raw profiles again"
else
	notok "format 9 input to --format=llvm: status $rc: $(cat err)"
fi
# -j and input order do not change the bytes.
# shellcheck disable=SC2086
"$MD" merge --format=llvm --no-progress -j 1 -o j1.prof --binary=hc --binary=libhc.so $eight 2>/dev/null
rev=$(for p in $eight; do echo "$p"; done | sort -r)
# shellcheck disable=SC2086
"$MD" merge --format=llvm --no-progress -j 2 -o j2.prof --binary=hc --binary=libhc.so $rev 2>/dev/null
if cmp -s j1.prof raw.prof && cmp -s j2.prof raw.prof; then
	ok "the LLVM export is the same bytes with -j 1 and -j 2 and the inputs reversed"
else
	notok "the LLVM export depends on -j or input order"
fi
# Written front to back, no offset patched afterwards: a pipe gets the
# same bytes as a file, for every header and MemProf version.
pipe_ok=1
for opts in "" "--llvm-header=12" "--llvm-memprof-version=0" "--llvm-full-schema"; do
	# shellcheck disable=SC2086
	"$MD" merge --format=llvm $opts --no-progress -o file.prof --binary=hc --binary=libhc.so $eight 2>/dev/null
	# shellcheck disable=SC2086
	"$MD" merge --format=llvm $opts --no-progress -o - --binary=hc --binary=libhc.so $eight 2>/dev/null | cat >pipe.prof
	cmp -s file.prof pipe.prof || pipe_ok=0
done
if [ $pipe_ok = 1 ]; then
	ok "the LLVM export to a pipe is the file's bytes (headers 8 and 12, MemProf 3 and 0)"
else
	notok "the LLVM export to a pipe differs from the file"
fi
# An LLVM file cut short at its end: said to be truncated, with where.
head -c $(($(wc -c <raw.prof) - 8)) raw.prof >cut.prof
"$MD" show cut.prof >/dev/null 2>err
rc=$?
if [ $rc -eq 1 ] && grep -q "cut.prof': record table at 0x[0-9a-f]*: its [0-9]* buckets run past the end of the file ([0-9]* bytes)" err; then
	ok "an LLVM file 8 bytes short: exit 1, its record table said to run past the end"
else
	notok "an LLVM file 8 bytes short: status $rc: $(cat err)"
fi
# Without the program's binary, or with another build of it, an LLVM
# profile would hold no frame of the program: an error, no file (other
# formats only warn).
rm -f w.prof
"$MD" merge --format=llvm --no-progress -o w.prof --binary=libhc.so $one 2>err
rc=$?
"$MD" merge --no-progress -o w.memprof --binary=libhc.so $one 2>err2
rc2=$?
if [ $rc -eq 1 ] && [ ! -e w.prof ] &&
   grep -q "no binary with build id [0-9a-f]* for segment 0x[0-9a-f]*-0x[0-9a-f]* (the program's binary is needed)" err &&
   [ $rc2 -eq 0 ] && grep -q "warning: no binary with build id" err2; then
	ok "merge --format=llvm without the program's binary: exit 1, no file (our format: a warning)"
else
	notok "merge --format=llvm without the program's binary: status $rc/$rc2: $(cat err err2)"
fi
# A fleet's profile of another program, for an LLVM export of this one:
# the input's fault, found before anything of it is folded, so it
# follows --failure-mode (skipped with a warning under warn and all),
# where --strict still fails the merge.
if [ -n "$(ls mixed.cold.* 2>/dev/null)" ]; then
	other=$(ls mixed.cold.* | head -n 1)
	rm -f w.prof w1.prof
	"$MD" merge --format=llvm --no-progress -o w1.prof --binary=hc --binary=libhc.so $one 2>/dev/null
	cp "$other" other2.prof && cp "$other" other3.prof
	"$MD" merge --format=llvm --no-progress --failure-mode=warn -o w.prof \
		--binary=hc --binary=libhc.so $one "$other" other2.prof other3.prof 2>err
	rc=$?
	"$MD" merge --format=llvm --no-progress -o w2.prof --binary=hc --binary=libhc.so $one "$other" 2>err2
	rc2=$?
	"$MD" merge --format=llvm --no-progress --failure-mode=warn --strict -o w3.prof \
		--binary=hc --binary=libhc.so $one "$other" 2>err3
	rc3=$?
	if [ $rc -eq 0 ] && cmp -s w.prof w1.prof &&
	   grep -q "warning: '$other': 'hc' has build id [0-9a-f]*, the profile's main segment 0x[0-9a-f]*-0x[0-9a-f]* has [0-9a-f]* (the program's binary is needed); input skipped" err &&
	   [ "$(grep -c 'input skipped' err)" = 1 ] &&
	   grep -q "warning: 2 more inputs skipped for a binary that does not match, as the first" err &&
	   [ $rc2 -eq 1 ] && [ ! -e w2.prof ] && [ $rc3 -eq 1 ] && [ ! -e w3.prof ]; then
		ok "merge --format=llvm, profiles of another program: the first skipped with a warning under --failure-mode=warn, the others counted (the other's bytes), an error by default and with --strict"
	else
		notok "another program's profile in an LLVM export: status $rc/$rc2/$rc3: $(cat err err2 err3)"
	fi
fi
# Nor is the program's debug file, found by build id, its binary: the
# export keeps no frame of such files (our format takes it and keeps them).
if [ -n "${fl:-}" ]; then
	bid=$(readelf -n fl | awk '/Build ID/ { print $3 }')
	mkdir -p "prog/.build-id/$(echo "$bid" | cut -c1-2)"
	cp fl "prog/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug"
	rm -f w.prof
	"$MD" merge --format=llvm --no-progress -o w.prof --debug-dir=prog "$fl" 2>err
	rc=$?
	"$MD" merge --no-progress -o w.memprof --debug-dir=prog "$fl" 2>err2
	rc2=$?
	if [ $rc -eq 1 ] && [ ! -e w.prof ] && grep -q "(the program's binary is needed)" err &&
	   [ $rc2 -eq 0 ] && "$MD" show w.memprof 2>/dev/null | grep -q 'make(unsigned int) .*foreign_leaf.cc'; then
		ok "merge --format=llvm with the program's debug file found by build id only: exit 1, no file (our format: symbolized)"
	else
		notok "the program's debug file, no --binary: status $rc/$rc2: $(cat err err2)"
	fi
fi
# A stripped program (and library): no frame has the debug information
# LLVM's format keeps, so the file would be empty; an error and no file,
# as llvm-profdata-19 fails.  With the library's debug information left,
# the contexts with no frame in it are left out, and a note counts them.
if objcopy --strip-debug hc hc.stripped &&
   objcopy --strip-debug libhc.so libhc.stripped.so; then
	rm -f w.prof
	"$MD" merge --format=llvm --no-progress -o w.prof --binary=hc.stripped \
		--binary=libhc.stripped.so $one 2>err
	rc=$?
	llvm-profdata-19 merge --profiled-binary hc.stripped $one -o l.prof 2>/dev/null
	lrc=$?
	if [ $rc -eq 1 ] && [ ! -e w.prof ] && [ $lrc -ne 0 ] &&
	   grep -q "none of the [0-9]* contexts has a frame LLVM's format can hold .*; is the binary stripped?" err; then
		ok "merge --format=llvm of stripped binaries: exit 1, no file (llvm-profdata-19 fails too)"
	else
		notok "merge --format=llvm of stripped binaries: status $rc (llvm-profdata-19 $lrc): $(cat err)"
	fi
	"$MD" merge --format=llvm --no-progress -o w.prof --binary=hc.stripped \
		--binary=libhc.so $one 2>err
	rc=$?
	"$MD" merge --format=llvm --no-progress -o w1.prof --binary=hc \
		--binary=libhc.so $one 2>err1
	total=$("$MD" show w1.prof 2>/dev/null | awk '/^  contexts:/ { print $2; exit }')
	kept=$("$MD" show w.prof 2>/dev/null | awk '/^  contexts:/ { print $2; exit }')
	if [ $rc -eq 0 ] && [ -n "$kept" ] && [ "$kept" -gt 0 ] && [ "$kept" -lt "$total" ] &&
	   grep -q "note: [0-9]* of [0-9]* contexts left out of the LLVM profile: no frame with debug information" err; then
		ok "merge --format=llvm with the program stripped, its library not: the library's contexts ($kept of $total), a note for the others"
	else
		notok "merge --format=llvm, program stripped: status $rc, $kept of $total contexts: $(cat err)"
	fi
else
	notok "objcopy --strip-debug failed"
fi

# A line above its function's first line (#line, as yacc's output has):
# LLVM's offset is a uint32 that wraps; show prints it signed, "-1", in
# text and JSON, the same from our file and from llvm-profdata-19's.
if clang-19 $CF "$SRC/line_above.c" -o la 2>err &&
   (MEMPROF_OPTIONS=log_path="$tmp/la.prof" ./la) 2>>err; then
	la=$(ls la.prof.*)
	"$MD" merge --format=llvm --no-progress -o la.ours --binary=la $la 2>/dev/null
	llvm-profdata-19 merge --profiled-binary la $la -o la.theirs 2>/dev/null
	for f in ours theirs; do
		"$MD" show --binary=la la.$f 2>/dev/null | grep -c '^      - make -1:6$' >$f.text
		"$MD" show --format=json la.$f 2>/dev/null | grep -c '"line": -1,' >$f.json
	done
	if [ "$(cat ours.text ours.json theirs.text theirs.json)" = "$(printf '1\n1\n1\n1')" ]; then
		ok "a line above its function's start: 'make -1:6', JSON line -1, from our LLVM file and llvm-profdata-19's"
	else
		notok "line above the function: text $(cat ours.text)/$(cat theirs.text), JSON $(cat ours.json)/$(cat theirs.json): $("$MD" show --binary=la la.ours 2>&1 | grep make)"
	fi
else
	notok "build and run tests/cli/src/line_above.c: $(cat err)"
fi
