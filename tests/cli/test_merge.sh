#!/bin/sh
# memprof-data merge: round trip through the indexed format for every
# fixture, order- and grouping-independence byte for byte, weights, failure
# modes, and outputs that are complete or absent, never partial.
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
FX=tests/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

# profile:binaries (the main executable first)
set -- \
	"basic.pie.v4.profraw:basic.pie libfixture.so" \
	"basic.nopie.v4.profraw:basic.nopie libfixture.so" \
	"basic.hist.v4.profraw:basic.hist libfixture-hist.so" \
	"cxx.v4.profraw:cxx.pie" \
	"dump2.v4.profraw:dump2" \
	"basic.clang14.v1.profraw:basic.clang14 libfixture-clang14.so" \
	"basic.clang16.v2.profraw:basic.clang16 libfixture-clang16.so" \
	"basic.pie.v4.profraw.zst:basic.pie libfixture.so"

for spec in "$@"; do
	prof=${spec%%:*}
	bins=""
	for b in ${spec#*:}; do bins="$bins --binary=$FX/$b"; done
	# shellcheck disable=SC2086
	if ! "$MD" merge --no-progress -o "$tmp/rt.memprof" $bins "$FX/$prof" 2>"$tmp/err"; then
		notok "merge $prof: $(cat "$tmp/err")"
		continue
	fi
	# shellcheck disable=SC2086
	"$MD" show --format=json --no-demangle $bins "$FX/$prof" >"$tmp/raw.json" 2>/dev/null
	"$MD" show --format=json --no-demangle "$tmp/rt.memprof" >"$tmp/idx.json"
	python3 tests/cli/compare_roundtrip.py "$tmp/raw.json" "$tmp/idx.json" \
		"round trip $prof"
done

# The same without binaries: frames stay build id + offset and still fold.
"$MD" merge --no-progress -o "$tmp/nobin.memprof" "$FX/basic.pie.v4.profraw" "$FX/basic.pie.v4.profraw"
"$MD" show --format=json "$FX/basic.pie.v4.profraw" >"$tmp/raw.json"
"$MD" show --format=json "$tmp/nobin.memprof" >"$tmp/idx.json"
python3 tests/cli/compare_roundtrip.py "$tmp/raw.json" "$tmp/idx.json" \
	"unsymbolized round trip (twice the same input)" 2

B="--binary=$FX/basic.pie --binary=$FX/libfixture.so --binary=$FX/cxx.pie --binary=$FX/dump2"
a=$FX/basic.pie.v4.profraw b=$FX/cxx.v4.profraw c=$FX/dump2.v4.profraw
m() { out=$1; shift; "$MD" merge --no-progress $B -o "$tmp/$out" "$@" 2>>"$tmp/err"; }
m ab.memprof "$a" "$b"
m ba.memprof "$b" "$a"
cmp -s "$tmp/ab.memprof" "$tmp/ba.memprof" && ok "merge(a,b) == merge(b,a) byte for byte" ||
	notok "merge(a,b) != merge(b,a)"
m bc.memprof "$b" "$c"
m ab_c.memprof "$tmp/ab.memprof" "$c"
m a_bc.memprof "$a" "$tmp/bc.memprof"
cmp -s "$tmp/ab_c.memprof" "$tmp/a_bc.memprof" && ok "merge(merge(a,b),c) == merge(a,merge(b,c)) byte for byte" ||
	notok "merge is not associative"
m abc.memprof "$c" "$a" "$b"
cmp -s "$tmp/abc.memprof" "$tmp/ab_c.memprof" && ok "merge(c,a,b) == merge(merge(a,b),c)" ||
	notok "flat and nested merges differ"
m j1.memprof -j 1 "$a" "$b" "$c"
m j2.memprof -j 2 "$a" "$b" "$c"
cmp -s "$tmp/j1.memprof" "$tmp/j2.memprof" && cmp -s "$tmp/j1.memprof" "$tmp/abc.memprof" &&
	ok "-j 1 and -j 2 write the same bytes" || notok "-j changes the output"

# Weights: a file with itself under weight 2 doubles the counts.
m w1.memprof "$a"
m w2.memprof --weight=2,"$a"
"$MD" show --format=json "$tmp/w1.memprof" >"$tmp/w1.json"
"$MD" show --format=json "$tmp/w2.memprof" >"$tmp/w2.json"
if python3 - "$tmp/w1.json" "$tmp/w2.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["contexts"]
b = json.load(open(sys.argv[2]))["contexts"]
assert len(a) == len(b) and a
for x, y in zip(a, b):
    for k in ("AllocCount", "TotalSize", "TotalAccessCount", "TotalLifetime"):
        assert y["mib"][k] == 2 * x["mib"][k], k
    for k in ("MinSize", "MaxSize", "MaxLifetime"):
        assert y["mib"][k] == x["mib"][k], k
PY
then ok "--weight=2 doubles counts and totals, not minima and maxima"; else notok "--weight=2"; fi
m self.memprof "$a" "$a"
cmp -s "$tmp/self.memprof" "$tmp/w2.memprof" && notok "weight 2 equals merging twice (inputs count differs)" ||
	ok "merging a file with itself and weighting it 2 differ only in what they record"
m wl.memprof --input-files=/dev/stdin <<EOF2
# a list of inputs
2,$a

EOF2
cmp -s "$tmp/wl.memprof" "$tmp/w2.memprof" && ok "--input-files with W,FILE lines" || notok "--input-files"

# zstd output, read back.
m out.memprof.zst "$a"
if [ "$(head -c 4 "$tmp/out.memprof.zst" | od -An -tx1 | tr -d ' ')" = 28b52ffd ] &&
   "$MD" show --format=json "$tmp/out.memprof.zst" | python3 -c 'import json,sys; assert json.load(sys.stdin)["inputs"][0]["compressed"]'; then
	ok ".zst output is zstd and reads back"
else
	notok ".zst output"
fi

# Failure modes; a failed merge leaves the old output untouched.
bad=$FX/bad/version-99.profraw
echo "precious" >"$tmp/keep.memprof"
"$MD" merge --no-progress -o "$tmp/keep.memprof" "$a" "$bad" 2>"$tmp/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(cat "$tmp/keep.memprof")" = precious ] &&
   grep -q "version-99.profraw': unsupported raw profile version 99" "$tmp/err" &&
   [ -z "$(ls -A "$tmp" | grep '^\.memprof-data-')" ]; then
	ok "failure-mode any: exit 1 naming the input, old output untouched, no temporary"
else
	notok "failure-mode any: rc=$rc $(cat "$tmp/err")"
fi
"$MD" merge --no-progress --failure-mode=all -o "$tmp/all.memprof" "$a" "$bad" 2>"$tmp/err"
[ $? -eq 0 ] && [ -s "$tmp/all.memprof" ] && grep -q "version-99" "$tmp/err" &&
	ok "failure-mode all: good inputs merged, bad one reported" || notok "failure-mode all"
"$MD" merge --no-progress --failure-mode=all -o "$tmp/none.memprof" "$bad" "$bad" 2>"$tmp/err"
[ $? -eq 1 ] && [ ! -e "$tmp/none.memprof" ] && ok "failure-mode all: all bad fails, writes nothing" ||
	notok "failure-mode all with only bad inputs"
"$MD" merge --no-progress --failure-mode=warn -o "$tmp/warn.memprof" "$bad" 2>"$tmp/err"
[ $? -eq 0 ] && "$MD" show "$tmp/warn.memprof" >/dev/null && ok "failure-mode warn: never fails" ||
	notok "failure-mode warn"

# Profiles of another program than the one given: merged unsymbolized,
# the first named with its build id, the others counted; none of them
# makes the symbolizer's own unnamed warning.
"$MD" merge --no-progress -o "$tmp/others.memprof" --binary=$FX/basic.pie "$a" "$b" \
	"$FX/basic.pie.v4.profraw.zst" "$b" "$b" 2>"$tmp/err"
rc=$?
bid=$("$MD" show --format=json "$b" | python3 -c '
import json,sys; print(json.load(sys.stdin)["segments"][0]["build_id"])')
if [ $rc -eq 0 ] &&
   [ "$(grep -c "cxx.v4.profraw': a profile of another program than the first --binary's (build id $bid, which no binary here has): its own frames stay unsymbolized" "$tmp/err")" = 1 ] &&
   grep -q "warning: 2 more inputs of other programs, their own frames unsymbolized" "$tmp/err" &&
   ! grep -q "the profile's main segment" "$tmp/err" &&
   "$MD" show --format=json "$tmp/others.memprof" | python3 -c '
import json,sys; d=json.load(sys.stdin)
assert any("function" not in f for c in d["contexts"] for f in c["frames"])'; then
	ok "inputs of another program: the first named with its build id, the others counted"
else
	notok "inputs of another program: rc=$rc bid=$bid $(cat "$tmp/err")"
fi

# -o may name an input.
cp "$tmp/w1.memprof" "$tmp/inout.memprof"
"$MD" merge --no-progress -o "$tmp/inout.memprof" "$tmp/inout.memprof" "$tmp/inout.memprof" &&
	"$MD" show --format=json "$tmp/inout.memprof" | python3 -c '
import json,sys; d=json.load(sys.stdin)
assert d["contexts"][0]["mib"]["AllocCount"] == 2000' &&
	ok "-o equal to an input" || notok "-o equal to an input"

# A directory that cannot be written: clear error, exit 1, in every format.
for fmt in memprof llvm pprof folded svg; do
	"$MD" merge --no-progress --format=$fmt --binary=$FX/basic.pie \
		-o /proc/version.$fmt "$a" 2>"$tmp/err"
	r=$?
	if [ $r -eq 1 ] && grep -q "/proc/version.$fmt': cannot create a temporary file in /proc" "$tmp/err"; then
		ok "unwritable output directory named, exit 1 (--format=$fmt)"
	else
		notok "unwritable output (--format=$fmt): exit $r, $(cat "$tmp/err")"
	fi
done

# Usage errors.
"$MD" merge "$a" >/dev/null 2>&1; [ $? -eq 2 ] && ok "no -o exits 2" || notok "no -o"
"$MD" merge -o x --weight=0,"$a" >/dev/null 2>&1; [ $? -eq 2 ] && ok "weight 0 exits 2" || notok "weight 0"
"$MD" merge -o x --failure-mode=some "$a" >/dev/null 2>&1; [ $? -eq 2 ] && ok "bad failure mode exits 2" || notok "failure mode"

# show --function goes through the hash table.
"$MD" show --format=json --function=hot_alloc "$tmp/w1.memprof" >"$tmp/f.json" &&
	python3 -c '
import json,sys; c=json.load(open(sys.argv[1]))["contexts"]
assert len(c) == 1 and c[0]["frames"][0]["function"] == "hot_alloc"
assert c[0]["mib"]["AllocCount"] == 1000' "$tmp/f.json" &&
	ok "show --function=hot_alloc finds its one context" || notok "show --function"
"$MD" show --function=nosuch "$tmp/w1.memprof" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "no function 'nosuch'" "$tmp/err" && ok "show --function of an unknown name" ||
	notok "show --function unknown"
# A function the profile has only as a caller (main): said so, not "no
# function", by linkage and by demangled name.
"$MD" show --function=main "$tmp/w1.memprof" >/dev/null 2>"$tmp/err"; r1=$?
grep -q "no context allocated in function 'main': the profile has only calls through it" "$tmp/err"; g1=$?
"$MD" show --function='main' "$tmp/ab.memprof" >/dev/null 2>"$tmp/err2"; r2=$?
"$MD" show --function='vector_growth()' "$tmp/ab.memprof" >/dev/null 2>"$tmp/err3"; r3=$?
if [ "$r1$g1$r2$r3" = 1011 ] && grep -q "only calls through it" "$tmp/err3"; then
	ok "show --function of a function the profile has only as a caller says so"
else
	notok "show --function=main: $r1$g1$r2$r3 $(cat "$tmp/err" "$tmp/err3")"
fi
# The header's checksum: CRC-32 (zlib's) of the file with its 8 bytes as
# zero, which Python's zlib agrees with; a byte changed anywhere in a
# merged file (every 7th byte, 4 ways each) is refused by show, merge
# and diff, exit 1, naming the file, and merge leaves its output alone.
if python3 - "$tmp/ab.memprof" "$tmp" <<'PY'
import struct, sys, zlib
path, tmp = sys.argv[1], sys.argv[2]
d = open(path, "rb").read()
flags, crc, high = struct.unpack_from("<I", d, 28)[0], *struct.unpack_from("<II", d, 56)
assert flags == 1 and high == 0, (flags, high)
assert crc == zlib.crc32(d[:56] + bytes(8) + d[64:]), "checksum is not zlib's CRC-32"
n = 0
for off in range(0, len(d), 7):
    for x in (0x01, 0x80, 0xff, 0x10):
        b = bytearray(d)
        b[off] ^= x
        open("%s/flip%d.memprof" % (tmp, n), "wb").write(b)
        n += 1
open(tmp + "/nflips", "w").write(str(n))
PY
then
	n=$(cat "$tmp/nflips"); i=0; bad=""
	cp "$tmp/ab.memprof" "$tmp/keep.memprof"
	while [ $i -lt "$n" ]; do
		f="$tmp/flip$i.memprof"
		"$MD" show "$f" >/dev/null 2>"$tmp/err"; r=$?
		if [ $r -ne 1 ] || ! grep -q "'$f': " "$tmp/err"; then
			bad="$bad show:$i:$r"
		fi
		i=$((i + 1))
	done
	"$MD" show "$tmp/flip9.memprof" 2>&1 | grep -q "checksum mismatch (header [0-9a-f]\{8\}, contents [0-9a-f]\{8\}): the file was damaged or changed after it was written" ||
		bad="$bad message"
	"$MD" merge --no-progress -o "$tmp/keep.memprof" "$tmp/w1.memprof" "$tmp/flip30.memprof" 2>"$tmp/err"; r1=$?
	"$MD" diff "$tmp/ab.memprof" "$tmp/flip31.memprof" >/dev/null 2>"$tmp/err2"; r2=$?
	if [ -z "$bad" ] && [ "$r1$r2" = 11 ] && cmp -s "$tmp/keep.memprof" "$tmp/ab.memprof" &&
	   grep -q "flip30.memprof': checksum mismatch" "$tmp/err" &&
	   grep -q "flip31.memprof': checksum mismatch" "$tmp/err2"; then
		ok "a byte changed anywhere in a merged file ($n cases) is refused by its checksum (zlib's CRC-32): show, merge and diff exit 1 naming the file"
	else
		notok "checksum: $bad $r1$r2 $(cat "$tmp/err" "$tmp/err2")"
	fi
else
	notok "checksum: the header's checksum is not CRC-32 of the file"
fi

# --prefix-map: the same sources built in two directories (two CI
# workspaces) give frames of other file paths, which fold only once both
# are mapped to one prefix; the map rewrites indexed inputs too, leaves
# the LLVM export (which has no paths) alone, and diff then matches every
# context by line.
ws="$tmp/ws"
if command -v clang++-19 >/dev/null && mkdir -p "$ws/a" "$ws/b" &&
   cp tests/cli/src/template_alloc.cc "$ws/a/t.cc" && cp tests/cli/src/template_alloc.cc "$ws/b/t.cc" &&
   (cd "$ws/a" && clang++-19 -g -O1 -fno-omit-frame-pointer -fmemory-profile t.cc -o t &&
    MEMPROF_OPTIONS=log_path="$ws/a.prof" ./t) 2>"$tmp/err" &&
   (cd "$ws/b" && clang++-19 -g -O1 -fno-omit-frame-pointer -fmemory-profile t.cc -o t &&
    MEMPROF_OPTIONS=log_path="$ws/b.prof" ./t) 2>>"$tmp/err"; then
	pa=$(ls "$ws"/a.prof.*) pb=$(ls "$ws"/b.prof.*)
	WB="--binary=$ws/a/t --binary=$ws/b/t"
	ctx() { "$MD" show --format=json --top=0 "$1" | python3 -c 'import json, sys; s = json.load(sys.stdin)["summary"]; print(s["contexts"], s["AllocCount"])'; }
	# shellcheck disable=SC2086
	"$MD" merge --no-progress -o "$tmp/pa.memprof" $WB "$pa" 2>/dev/null
	# shellcheck disable=SC2086
	"$MD" merge --no-progress -o "$tmp/pab.memprof" $WB "$pa" "$pb" 2>/dev/null
	# shellcheck disable=SC2086
	"$MD" merge --no-progress -o "$tmp/mab.memprof" $WB --prefix-map="$ws/a=/src" \
		--prefix-map="$ws/b/=/src/" "$pa" "$pb" 2>/dev/null
	# The map given to a merge of indexed inputs: the same bytes.
	# shellcheck disable=SC2086
	"$MD" merge --no-progress -o "$tmp/pb.memprof" $WB "$pb" 2>/dev/null
	"$MD" merge --no-progress -o "$tmp/iab.memprof" --prefix-map="$ws/a=/src" \
		--prefix-map="$ws/b=/src" "$tmp/pa.memprof" "$tmp/pb.memprof" 2>/dev/null
	# shellcheck disable=SC2086
	"$MD" merge --no-progress -o "$tmp/ma.memprof" $WB --prefix-map="$ws/a=/src" "$pa" 2>/dev/null
	# shellcheck disable=SC2086
	"$MD" merge --no-progress -o "$tmp/mb.memprof" $WB --prefix-map="$ws/b=/src" "$pb" 2>/dev/null
	"$MD" diff --format=json "$tmp/ma.memprof" "$tmp/mb.memprof" >"$tmp/d.json" 2>/dev/null
	"$MD" diff --format=json "$tmp/pa.memprof" "$tmp/pb.memprof" >"$tmp/d0.json" 2>"$tmp/d0.err"
	"$MD" overlap "$tmp/pa.memprof" "$tmp/pb.memprof" >/dev/null 2>"$tmp/o0.err"
	# diff and overlap map paths for their matching only.
	"$MD" diff --format=json --prefix-map="$ws/a=/src" --prefix-map="$ws/b=/src" \
		"$tmp/pa.memprof" "$tmp/pb.memprof" >"$tmp/d1.json" 2>/dev/null
	ov=$("$MD" overlap --format=json --prefix-map="$ws/a=/src" --prefix-map="$ws/b=/src" \
		"$tmp/pa.memprof" "$tmp/pb.memprof" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["overlap"]["AllocCount"])' 2>&1)
	ov0=$("$MD" overlap --format=json "$tmp/pa.memprof" "$tmp/pb.memprof" 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["overlap"]["AllocCount"])' 2>&1)
	# shellcheck disable=SC2086
	"$MD" merge --no-progress --format=llvm -o "$tmp/l0.profdata" --binary="$ws/a/t" "$pa" 2>/dev/null
	# shellcheck disable=SC2086
	"$MD" merge --no-progress --format=llvm -o "$tmp/l1.profdata" --binary="$ws/a/t" \
		--prefix-map="$ws/a=/src" "$pa" 2>/dev/null
	one=$(ctx "$tmp/pa.memprof") two=$(ctx "$tmp/pab.memprof") mapped=$(ctx "$tmp/mab.memprof")
	files=$("$MD" show --format=json "$tmp/mab.memprof" | python3 -c '
import json, sys
print(" ".join(sorted({f["file"] for c in json.load(sys.stdin)["contexts"]
                       for f in c["frames"] if f.get("file", "").endswith("t.cc")})))')
	# Contexts in common, and in one file only, by line: mapped, unmapped.
	matched=$(python3 -c '
import json, sys
print(" ".join("%(common)d/%(base_only)d/%(test_only)d" % json.load(open(p))["matching"]["contexts"]
               for p in sys.argv[1:]))' "$tmp/d.json" "$tmp/d0.json" "$tmp/d1.json" 2>&1)
	n1=${one%% *} a1=${one#* } n2=${two%% *} nm=${mapped%% *} am=${mapped#* }
	read -r m_merged m_none m_diff <<-EOM
	$matched
	EOM
	if [ -n "$n1" ] && [ "$n2" -gt "$n1" ] && [ "$nm" = "$n1" ] && [ "$am" = $((a1 * 2)) ] &&
	   [ "$files" = "/src/t.cc" ] && cmp -s "$tmp/mab.memprof" "$tmp/iab.memprof" &&
	   [ "$m_merged" = "$n1/0/0" ] && [ "$m_none" != "$n1/0/0" ] &&
	   [ "$m_diff" = "$n1/0/0" ] && [ "$ov" = 1.0 ] && [ "$ov0" != 1.0 ] &&
	   cmp -s "$tmp/l0.profdata" "$tmp/l1.profdata"; then
		ok "--prefix-map folds two build directories' frames ($n2 contexts apart, $nm mapped, as one build's $n1), raw or indexed inputs alike; diff matches all $n1 (common/base only/test only: $m_merged, unmapped $m_none, mapped by diff itself $m_diff), overlap $ov (unmapped $ov0); --format=llvm unchanged"
	else
		notok "--prefix-map: one '$one' two '$two' mapped '$mapped' files '$files' matched '$matched' overlap '$ov' '$ov0' $(cmp "$tmp/mab.memprof" "$tmp/iab.memprof") $(cmp "$tmp/l0.profdata" "$tmp/l1.profdata")"
	fi
	# Unmapped, diff and overlap say which map would match the two.
	hint="${m_none%%/*} of $n1 contexts of '$tmp/pa.memprof' match one of '$tmp/pb.memprof' by column: their files differ by a leading part ($ws/a/t.cc, $ws/b/t.cc); --prefix-map=$ws/b=$ws/a matches them"
	"$MD" diff --format=json --prefix-map="$ws/b=$ws/a" "$tmp/pa.memprof" "$tmp/pb.memprof" \
		>"$tmp/d2.json" 2>"$tmp/d2.err"
	m_hint=$(python3 -c '
import json, sys
print("%(common)d/%(base_only)d/%(test_only)d" % json.load(open(sys.argv[1]))["matching"]["contexts"])' "$tmp/d2.json" 2>&1)
	if grep -qF "memprof-data: warning: $hint" "$tmp/d0.err" &&
	   grep -qF "memprof-data: warning: $hint" "$tmp/o0.err" &&
	   [ "$m_hint" = "$n1/0/0" ] && [ ! -s "$tmp/d2.err" ]; then
		ok "two build directories unmapped: diff and overlap name the --prefix-map that matches them, which then matches all $n1"
	else
		notok "prefix hint: unmapped $m_none, with the hint's map $m_hint; $(cat "$tmp/d0.err" "$tmp/o0.err" "$tmp/d2.err")"
	fi
	"$MD" merge --no-progress -o "$tmp/x.memprof" --prefix-map==/x "$pa" 2>"$tmp/err"; r=$?
	if [ $r -eq 2 ] && grep -q "prefix-map wants OLD=NEW with OLD not empty, not '=/x'" "$tmp/err" &&
	   [ ! -e "$tmp/x.memprof" ]; then
		ok "--prefix-map without OLD is a usage error (exit 2)"
	else
		notok "--prefix-map=/x: exit $r $(cat "$tmp/err")"
	fi
else
	notok "build and run template_alloc.cc in two directories: $(cat "$tmp/err")"
fi

# --binary-dir=DIR: the files of a tree taken by build id for modules no
# --binary is for, as given binaries (the same bytes as with --binary for
# each, in our format and LLVM's); other files and a link back up the
# tree are passed over; a directory that is not there is an error.
bd="$tmp/bd"
mkdir -p "$bd/lib/deeper" && cp "$FX/basic.pie" "$bd/" && cp "$FX/libfixture.so" "$bd/lib/deeper/" &&
	echo "not ELF" >"$bd/lib/notes.txt" && ln -s .. "$bd/lib/up" && cp "$FX/dump2" "$bd/lib/"
"$MD" merge --no-progress -o "$tmp/bd1.memprof" --binary="$FX/basic.pie" --binary="$FX/libfixture.so" \
	"$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" merge --no-progress -o "$tmp/bd2.memprof" --binary-dir="$bd" "$FX/basic.pie.v4.profraw" 2>"$tmp/err"; r2=$?
"$MD" merge --no-progress --format=llvm -o "$tmp/bd1.profdata" --binary="$FX/basic.pie" \
	--binary="$FX/libfixture.so" "$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=llvm -o "$tmp/bd2.profdata" --binary-dir="$bd" \
	"$FX/basic.pie.v4.profraw" 2>/dev/null; r3=$?
"$MD" show --format=json --binary-dir="$bd" "$FX/basic.pie.v4.profraw" 2>/dev/null |
	python3 -c 'import json, sys; print(" ".join(sorted(m["path"].rsplit("/", 1)[-1] for m in json.load(sys.stdin)["symbolization"]["modules"] if m["addresses"])))' >"$tmp/mods" 2>&1
"$MD" show --binary-dir="$tmp/no-such-dir" "$FX/basic.pie.v4.profraw" >/dev/null 2>"$tmp/err4"; r4=$?
if [ "$r2$r3$r4" = 001 ] && cmp -s "$tmp/bd1.memprof" "$tmp/bd2.memprof" &&
   cmp -s "$tmp/bd1.profdata" "$tmp/bd2.profdata" && ! grep -q "no binary with build id" "$tmp/err" &&
   grep -q "basic.pie" "$tmp/mods" && grep -q "libfixture.so" "$tmp/mods" &&
   grep -q "no-such-dir': cannot open directory: No such file or directory" "$tmp/err4"; then
	ok "--binary-dir finds a tree's binaries by build id: the bytes of --binary for each (ours and LLVM's); a missing directory is an error"
else
	notok "--binary-dir: $r2$r3$r4 $(cat "$tmp/mods" "$tmp/err" "$tmp/err4")"
fi
