#!/bin/sh
# overlap and diff against numbers computed by hand from the programs
# (tests/fixtures/shift/EXPECTED.md shows the arithmetic).
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
S=tests/fixtures/shift
B="--binary=$S/shift"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

# check NAME FILE PYTHON-EXPRESSION-ON-d
check() {
	if python3 - "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2], {"d": d, "abs": abs})
sys.exit(0 if ok else 1)
PY
	then ok "$1"; else notok "$1: $(cat "$2" | head -c 600)"; fi
}

ov() { out=$1; shift; "$MD" overlap --format=json "$@" >"$tmp/$out" 2>"$tmp/err" || cat "$tmp/err"; }

# A profile against itself, and against a weighted merge of itself.
ov self.json $B "$S/base.profraw" "$S/base.profraw"
check "overlap of a profile with itself is exactly 1, 0 flips" "$tmp/self.json" \
	'all(v == 1.0 for v in d["overlap"].values()) and d["hot_cold"]["flips"] == 0'
"$MD" merge --no-progress -o "$tmp/w5.memprof" $B --weight=5,"$S/base.profraw"
ov weighted.json $B "$S/base.profraw" "$tmp/w5.memprof"
check "overlap with a weight-5 merge of itself stays exactly 1" "$tmp/weighted.json" \
	'all(v == 1.0 for v in d["overlap"].values()) and d["matching"]["contexts"]["common"] == 3'

# base vs shifted: 50 allocations moved from site_a (64 B) to site_b (128 B).
ov shifted.json $B "$S/base.profraw" "$S/shifted.profraw"
check "base vs shifted: AllocCount overlap 16/21" "$tmp/shifted.json" \
	'abs(d["overlap"]["AllocCount"] - 16/21) < 1e-6'
check "base vs shifted: TotalSize overlap 3511/4331" "$tmp/shifted.json" \
	'abs(d["overlap"]["TotalSize"] - 3511/4331) < 1e-6'
check "base vs shifted: all 3 contexts common" "$tmp/shifted.json" \
	'd["matching"]["contexts"] == {"base": 3, "test": 3, "common": 3, "base_only": 0, "test_only": 0}'

# base vs a rebuild whose lines moved by 3.
M="$B --binary=$S/shift-moved"
ov col.json $M "$S/base.profraw" "$S/moved.profraw"
ov line.json --match=line $M "$S/base.profraw" "$S/moved.profraw"
ov func.json --match=function $M "$S/base.profraw" "$S/moved.profraw"
check "moved lines, --match=column: nothing matches, overlap 0" "$tmp/col.json" \
	'd["matching"]["contexts"]["common"] == 0 and d["overlap"]["AllocCount"] == 0 and d["matching"]["base"]["AllocCount"] == 0'
check "moved lines, --match=line: nothing matches" "$tmp/line.json" \
	'd["matching"]["contexts"]["common"] == 0 and d["matching"]["contexts"]["base_only"] == 3'
check "moved lines, --match=function: all 3 match, overlap 1, 100% matched" "$tmp/func.json" \
	'd["matching"]["contexts"]["common"] == 3 and d["overlap"]["AllocCount"] == 1.0 and d["overlap"]["TotalSize"] == 1.0 and d["matching"]["test"]["TotalSize"] == 1.0'

# Hot/cold: site_a's density goes from 10 to 1560 (LLVM's hot threshold 1000).
ov hot.json $B "$S/base.profraw" "$S/hotter.profraw"
check "base vs hotter: site_a flips notcold -> hot at LLVM's default threshold" "$tmp/hot.json" \
	'd["hot_cold"]["flips"] == 1 and d["hot_cold"]["flipped"][0]["function"] == "site_a" and d["hot_cold"]["flipped"][0]["base"] == "notcold" and d["hot_cold"]["flipped"][0]["test"] == "hot" and d["hot_cold"]["flipped_bytes"]["base"] == 6400'
check "base vs hotter: TotalAccessCount overlap 1149/2359" "$tmp/hot.json" \
	'abs(d["overlap"]["TotalAccessCount"] - 1149/2359) < 1e-6'
ov hot2.json --hot-density=2000 $B "$S/base.profraw" "$S/hotter.profraw"
check "base vs hotter: no flip with --hot-density=2000" "$tmp/hot2.json" 'd["hot_cold"]["flips"] == 0'
ov cold.json --cold-lifetime=0 --cold-density=20 $B "$S/base.profraw" "$S/hotter.profraw"
check "cold with --cold-lifetime=0 --cold-density=20: site_a cold -> notcold(hot)" "$tmp/cold.json" \
	'd["hot_cold"]["base"]["cold"] == 2 and d["hot_cold"]["test"]["cold"] == 1 and d["hot_cold"]["flips"] == 1'

# diff gates: grow10 grows TotalSize by 6/61 = 9.84 %, grow1 by 0.98 %.
"$MD" diff --fail-if=TotalSize:+5% $B "$S/base.profraw" "$S/grow10.profraw" >"$tmp/g10.txt" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q "CROSSED" "$tmp/g10.txt" && ok "diff --fail-if=TotalSize:+5% exits 3 on a 9.8% growth, saying which" ||
	notok "grow10 rc=$rc"
"$MD" diff --fail-if=TotalSize:+5% $B "$S/base.profraw" "$S/grow1.profraw" >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && ok "diff --fail-if=TotalSize:+5% exits 0 on a 0.98% growth" || notok "grow1 rc=$rc"
"$MD" diff --format=json --fail-if=TotalSize:+1920 $B "$S/base.profraw" "$S/grow10.profraw" >"$tmp/abs.json"
rc=$?
[ $rc -eq 0 ] && check "an absolute gate at exactly the growth is not crossed" "$tmp/abs.json" 'd["result"] == "pass"' ||
	notok "absolute gate rc=$rc"
"$MD" diff --format=json --fail-if=TotalSize:+1919 $B "$S/base.profraw" "$S/grow10.profraw" >/dev/null
[ $? -eq 3 ] && ok "an absolute gate one below the growth is crossed" || notok "absolute gate +1919"
"$MD" diff --format=json --per-context --fail-if=AllocCount:+5% $B "$S/base.profraw" "$S/grow1.profraw" >"$tmp/pc.json"
[ $? -eq 0 ] && check "per-context gate: each site grew 1% (site_c 0%), none crossed" "$tmp/pc.json" \
	'd["gates"][0]["rows_crossed"] == 0' || notok "per-context grow1"
"$MD" diff --format=json --per-context --fail-if=AllocCount:+5% $B "$S/base.profraw" "$S/shifted.profraw" >"$tmp/pc2.json"
[ $? -eq 3 ] && check "per-context gate: site_b +50% crosses though the total is flat" "$tmp/pc2.json" \
	'd["gates"][0]["rows_crossed"] == 1 and not d["gates"][0]["profile_crossed"]' || notok "per-context shifted"
"$MD" diff --fail-on-flip $B "$S/base.profraw" "$S/hotter.profraw" >/dev/null 2>&1
[ $? -eq 3 ] && ok "--fail-on-flip exits 3 on base vs hotter" || notok "--fail-on-flip"
"$MD" diff --fail-on-flip $B "$S/base.profraw" "$S/grow1.profraw" >/dev/null 2>&1
[ $? -eq 0 ] && ok "--fail-on-flip exits 0 without a flip" || notok "--fail-on-flip without flip"
# --fail-on-flip=N%: only flips holding N% of a side's bytes fail; the
# share is in the report.
"$MD" diff --format=json --fail-on-flip=0.001% $B "$S/base.profraw" "$S/hotter.profraw" >"$tmp/fl1.json"; f1=$?
"$MD" diff --format=json --fail-on-flip=100% $B "$S/base.profraw" "$S/hotter.profraw" >"$tmp/fl2.json"; f2=$?
"$MD" diff --fail-on-flip=5 $B "$S/base.profraw" "$S/hotter.profraw" >/dev/null 2>"$tmp/err"; f3=$?
if [ "$f1$f2$f3" = 302 ] && python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["flip_failed"] and not b["flip_failed"], (a["flip_failed"], b["flip_failed"])
assert 0 < a["flipped_share"] == b["flipped_share"] < 100, a["flipped_share"]
assert a["result"] == "fail" and b["result"] == "pass"' "$tmp/fl1.json" "$tmp/fl2.json" &&
   grep -q "fail-on-flip wants a share of the bytes such as 1%, not '5'" "$tmp/err"; then
	ok "--fail-on-flip=N%: fails only when the flipped contexts hold N% of a side's bytes (exit 3 at 0.001%, 0 at 100%); '5' without % is a usage error"
else
	notok "--fail-on-flip=N%: $f1$f2$f3 $(cat "$tmp/err")"
fi

# diff rows: values, sorting, new and vanished.
"$MD" diff --format=json $B "$S/base.profraw" "$S/shifted.profraw" >"$tmp/d.json"
check "diff rows sorted by |TotalSize change|: site_b +6400 then site_a -3200" "$tmp/d.json" \
	'[r["function"] for r in d["rows"]][:2] == ["site_b", "site_a"] and d["rows"][0]["metrics"]["TotalSize"]["change"] == 6400 and d["rows"][1]["metrics"]["TotalSize"]["change"] == -3200 and abs(d["rows"][0]["metrics"]["TotalSize"]["relative"] - 0.5) < 1e-9'
"$MD" diff --format=json $M "$S/base.profraw" "$S/moved.profraw" >"$tmp/nv.json"
check "moved lines: 3 new and 3 vanished rows" "$tmp/nv.json" \
	'sorted(r["status"] for r in d["rows"]) == ["new"] * 3 + ["vanished"] * 3'
"$MD" diff --format=json --by=function --match=function --metrics=allocs $M "$S/base.profraw" "$S/shifted.profraw" >"$tmp/f.json"
check "--by=function --metrics=allocs" "$tmp/f.json" \
	'len(d["rows"]) == 3 and list(d["rows"][0]["metrics"]) == ["AllocCount"]'

# Usage and errors.
"$MD" diff --fail-if=TotalSize:5% "$S/base.profraw" "$S/grow1.profraw" >/dev/null 2>&1
[ $? -eq 2 ] && ok "a gate without a sign is a usage error" || notok "gate syntax"
"$MD" overlap "$S/base.profraw" >/dev/null 2>&1
[ $? -eq 2 ] && ok "overlap with one profile is a usage error" || notok "overlap arity"
"$MD" overlap "$S/base.profraw" "$S/nosuch.profraw" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "nosuch.profraw': cannot open" "$tmp/err" && ok "a missing input is named" || notok "missing input"
# The two sides are read at once; a failure is told as if one after the
# other: the base's when both fail, else the side that failed.
"$MD" diff "$S/nosuch1.profraw" "$S/nosuch2.profraw" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "nosuch1.profraw': cannot open" "$tmp/err" &&
	! grep -q nosuch2 "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	ok "both sides missing: the base is named, once" ||
	notok "both missing: $(cat "$tmp/err")"
head -c 1000 "$S/grow1.profraw" >"$tmp/cut.profraw"
"$MD" diff --format=json $B "$S/base.profraw" "$tmp/cut.profraw" >"$tmp/cut.json" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "cut.profraw'" "$tmp/err" && ! grep -q "base.profraw" "$tmp/err" &&
	grep -q '"file": ".*cut.profraw"' "$tmp/cut.json" &&
	ok "a truncated test side is named, on stderr and in the JSON error document" ||
	notok "truncated test side: $(cat "$tmp/err" "$tmp/cut.json")"
"$MD" diff --fail-if=Bogus:+5% "$S/base.profraw" "$S/grow1.profraw" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "unknown metric 'Bogus'" "$tmp/err" &&
	ok "an unknown metric in a gate is named" || notok "unknown metric: $(cat "$tmp/err")"

# Comparisons that can hardly mean anything say so, and still report:
# an LLVM indexed profile against ours by column (its frames keep line
# offsets, no file names), and two programs with no context in common.
"$MD" merge --format=llvm --no-progress -o "$tmp/base.llvm" $B "$S/base.profraw" 2>/dev/null
"$MD" overlap $B "$S/base.profraw" "$tmp/base.llvm" >/dev/null 2>"$tmp/err"; r=$?
[ $r -eq 0 ] && grep -q "base.llvm': an LLVM indexed profile, whose frames keep line offsets and no file names: by column none can match" "$tmp/err" &&
	ok "ours against an LLVM file by column: a warning saying why nothing can match" ||
	notok "LLVM side by column: status $r: $(cat "$tmp/err")"
"$MD" overlap --match=function $B "$S/base.profraw" "$tmp/base.llvm" >/dev/null 2>"$tmp/err"
! grep -q warning "$tmp/err" &&
	ok "ours against an LLVM file by function, named by --binary: matched, no warning" ||
	notok "LLVM side by function: $(cat "$tmp/err")"
"$MD" diff --binary=tests/fixtures/basic.pie --binary=tests/fixtures/cxx.pie \
	tests/fixtures/basic.pie.v4.profraw tests/fixtures/cxx.v4.profraw >/dev/null 2>"$tmp/err"; r=$?
[ $r -eq 0 ] && grep -q "warning: no context of 'tests/fixtures/basic.pie.v4.profraw' matches one of 'tests/fixtures/cxx.v4.profraw' by column: different programs or builds?" "$tmp/err" &&
	ok "two programs with nothing in common: a warning, the report still made" ||
	notok "nothing in common: status $r: $(cat "$tmp/err")"

# Function rows name the function as show names a frame: its linkage name
# and, unless --no-demangle, its demangled one.
"$MD" merge --no-progress -o "$tmp/cxx.memprof" --binary=tests/fixtures/cxx.pie \
	tests/fixtures/cxx.v4.profraw 2>/dev/null
"$MD" diff --by=function --format=json "$tmp/cxx.memprof" "$tmp/cxx.memprof" >"$tmp/fd.json"
"$MD" diff --by=function --format=json --no-demangle "$tmp/cxx.memprof" "$tmp/cxx.memprof" >"$tmp/fdn.json"
"$MD" overlap --format=json "$tmp/cxx.memprof" "$tmp/cxx.memprof" >"$tmp/fo.json"
if python3 - "$tmp/fd.json" "$tmp/fdn.json" "$tmp/fo.json" <<'PY'
import json, sys
d, n, o = (json.load(open(f)) for f in sys.argv[1:])
rows = {r["function"]: r for r in d["rows"]}
assert rows["_Z10scalar_newv"]["demangled"] == "scalar_new()", rows
assert all("demangled" not in r for r in n["rows"])
fns = {f["function"]: f for f in o["functions"]}
assert fns["_Z9array_newv"]["demangled"] == "array_new()", fns
PY
then
	ok "diff --by=function and overlap's functions: linkage and demangled names, none with --no-demangle"
else
	notok "function rows' names"
fi
