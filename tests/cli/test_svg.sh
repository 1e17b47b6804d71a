#!/bin/sh
# Flame graphs: merge --format=svg and diff --format=svg.  The SVG is
# well-formed XML whose frames stand on their callers, the root's value is
# show's total, the bytes do not depend on input order or -j, hostile
# names stay text; headless Chromium (Debian chromium) renders it with no
# script error, and its script zooms and searches; a diff gates CI as the
# text report does.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
ROOT=$(pwd)
CHECK=$ROOT/tests/cli/svg_check.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need python3
export HOME="$tmp/home"
mkdir -p "$HOME"
cd "$tmp" || exit 1

total() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"][sys.argv[2]])' "$@"
}

# Layout and totals, per fixture and value.
for case in "basic.pie.v4.profraw --binary=$FX/basic.pie --binary=$FX/libfixture.so" \
	    "cxx.v4.profraw --binary=$FX/cxx.pie" \
	    "basic.clang14.v1.profraw --binary=$FX/basic.clang14" "basic.memprof"; do
	set -- $case
	n=$1
	shift
	"$MD" merge --no-progress -o m.memprof "$@" "$FX/$n" 2>/dev/null
	"$MD" show --format=json m.memprof >m.json
	for v in bytes:TotalSize allocs:AllocCount; do
		"$MD" merge --no-progress --format=svg --value=${v%%:*} -o f.svg \
			"$@" "$FX/$n" 2>err || { notok "svg of $n: $(cat err)"; continue; }
		got=$(python3 "$CHECK" layout f.svg 2>&1)
		want=$(total m.json ${v#*:})
		if [ "${got#* }" = "$want" ]; then
			ok "svg of $n, --value=${v%%:*}: ${got%% *} frames, each on its caller, the root ${v#*:} $want"
		else
			notok "svg of $n, --value=${v%%:*}: $got, show says $want"
		fi
	done
done

# The same bytes whatever the input order and -j.
"$MD" merge --no-progress --format=svg -j 1 -o o1.svg --binary="$FX/basic.pie" \
	--binary="$FX/cxx.pie" "$FX/basic.pie.v4.profraw" "$FX/cxx.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=svg -j 2 -o o2.svg --binary="$FX/basic.pie" \
	--binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" "$FX/basic.pie.v4.profraw" 2>/dev/null
if [ -s o1.svg ] && cmp -s o1.svg o2.svg; then
	ok "the svg is the same bytes whatever the input order and -j"
else
	notok "the svg depends on input order or -j"
fi

# Hostile names: the cxx fixture's binary with one function renamed, in
# every string table, to text XML must escape or a reader should not see
# ('<', '&', a right-to-left override, a C1 control).  The build id is
# unchanged, so the renamed binary matches.  (Names that are not text at
# all, control bytes or invalid UTF-8, mark the binary's DWARF untrusted:
# test_dwarf_trust.sh.)  And an indexed file whose function name is not
# UTF-8 (tests/fuzz/hostile.py).
python3 "$ROOT/tests/cli/rename_function.py" "$FX/cxx.pie" hostile.pie vector_growth \
	'v<&\xe2\x80\xae\xc2\x9bowthx'
python3 "$ROOT/tests/fuzz/hostile.py" hostile >/dev/null
"$MD" merge --no-progress --format=svg -o h.svg --binary=hostile.pie \
	"$FX/cxx.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=svg --value=allocs -o u.svg hostile/json-invalid-utf8.memprof 2>/dev/null
"$MD" merge --no-progress --format=folded -o h.folded --binary=hostile.pie \
	"$FX/cxx.v4.profraw" 2>/dev/null
if python3 "$CHECK" layout h.svg >/dev/null 2>err && python3 "$CHECK" layout u.svg >/dev/null 2>>err &&
   grep -q 'v&lt;&amp;??owthx' h.svg && ! LC_ALL=C grep -q "$(printf '\342\200\256')" h.svg &&
   grep -q '&#xfffd;bad&#xfffd;(utf8' u.svg &&
   [ "$(wc -l <h.folded)" = 4 ]; then
	ok "hostile function names ('<', '&', bidi and C1 controls, invalid UTF-8): the svg stays well-formed XML, shows them escaped"
else
	notok "hostile names: $(cat err) $(grep -o 'v&lt;[^ ]*owth' h.svg | head -n 1)"
fi

# diff --format=svg: gates as the text report, -o only with svg.
"$MD" merge --no-progress -o base.memprof --binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" 2>/dev/null
"$MD" merge --no-progress -o test.memprof --weight=3,"$FX/cxx.v4.profraw" \
	--binary="$FX/basic.pie" --binary="$FX/libfixture.so" --binary="$FX/cxx.pie" \
	"$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" diff --format=svg -o d.svg base.memprof test.memprof; r1=$?
"$MD" diff --format=svg -o d3.svg --fail-if=bytes:+50% base.memprof test.memprof; r2=$?
"$MD" diff --fail-if=bytes:+50% base.memprof test.memprof >/dev/null; r3=$?
"$MD" diff -o x.svg base.memprof test.memprof 2>/dev/null; r4=$?
if [ "$r1$r2$r3$r4" = 0332 ] && cmp -s d.svg d3.svg; then
	ok "diff --format=svg: exit 0, 3 when a gate is crossed (as the text report), -o alone is a usage error"
else
	notok "diff --format=svg exit statuses: $r1 $r2 $r3 $r4 (want 0 3 3 2)"
fi
"$MD" diff --format=svg base.memprof test.memprof >stdout.svg
got=$(python3 "$CHECK" layout d.svg 2>&1)
"$MD" show --format=json test.memprof >t.json
want=$(total t.json TotalSize)
if cmp -s d.svg stdout.svg && [ "${got#* }" = "$want" ] &&
   grep -q 'fill="rgb(255,' d.svg; then
	ok "diff svg: widths from TEST ($want bytes), red for growth; standard output without -o"
else
	notok "diff svg: $got, want $want"
fi
"$MD" diff --format=svg test.memprof test.memprof >same.svg
if ! grep -q 'fill="rgb(255,\|fill="rgb([0-9]*,[0-9]*,255)' same.svg &&
   python3 "$CHECK" layout same.svg >/dev/null; then
	ok "diff svg of a profile with itself: no frame coloured as a change"
else
	notok "diff svg of a profile with itself shows changes"
fi
"$MD" diff --format=svg test.memprof base.memprof >shrink.svg
if grep -q 'fill="rgb([0-9]*,[0-9]*,255)' shrink.svg; then
	ok "diff svg, test smaller than base: blue for shrinkage"
else
	notok "diff svg shows no shrinkage"
fi

# Headless Chromium: the pictures render, the script runs without error,
# "#z=" zooms and "#s=" searches.
need chromium
browse() {
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/chromium" --enable-logging=stderr --v=0 \
		--virtual-time-budget=3000 "$@" 2>>console.log
}
"$MD" merge --no-progress --format=svg -o cxx.svg --binary="$FX/cxx.pie" \
	"$FX/cxx.v4.profraw" 2>/dev/null
for f in cxx.svg d.svg; do
	: >console.log
	browse --window-size=1200,1000 --screenshot="$tmp/$f.png" "file://$tmp/$f" >/dev/null
	set -- $(python3 "$CHECK" png "$f.png" 2>&1)
	if [ "${3:-0}" -gt 20000 ] && [ "${4:-0}" -gt 8 ] &&
	   ! grep -qi 'uncaught\|error.*CONSOLE\|CONSOLE.*error' console.log; then
		ok "chromium renders $f: $3 painted pixels in $4 colours, no script error"
	else
		notok "chromium and $f: $* $(grep -i console console.log | head -n 3)"
	fi
done
: >console.log
browse --dump-dom "file://$tmp/cxx.svg#z=vector_growth&s=^main$" >dom.txt
set -- $(python3 "$CHECK" dom dom.txt 'vector_growth')
# Zoomed to vector_growth(): it and what stands on it fill the width, its
# callers too (faded), the rest hidden; main is 2.73% of all bytes.
if [ "$1" = 10 ] && [ "$2" -ge 3 ] && [ "$3" = 1 ] && [ "$4" = 2.7 ] &&
   ! grep -qi uncaught console.log; then
	ok "the script: #z= zooms to the frame (full width, $2 others hidden), #s= finds main's 2.7%"
else
	notok "the script after #z= and #s=: ready $1, hidden $2, full $3, matched $4 $(grep -i uncaught console.log)"
fi
