#!/bin/sh
# demo.sh BUILD_DIR - what `make demo` shows: the main job of memprof-data,
# end to end, on the sample profiles in tests/fixtures (tests/fixtures/
# regen.sh and tests/fixtures/shift/regen.sh say how each was made).  Each
# step prints a heading and the exact command, then its output.  Files it
# writes go to BUILD_DIR/demo/ and stay there to be looked at.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BIN=$(cd "$1" && pwd)/memprof-data
OUT=$(cd "$1" && pwd)/demo
[ -x "$BIN" ] || { echo "demo.sh: '$BIN' not found; run make first" >&2; exit 1; }
cd "$(dirname "$0")/.."
F=tests/fixtures
S=tests/fixtures/shift
rm -rf "$OUT"
mkdir -p "$OUT"

step=0
heading() {
	step=$((step + 1))
	printf '\n==== %d. %s\n' "$step" "$1"
	shift
	printf '$ %s\n' "$@"
	echo
}
run() {
	"$BIN" "$@"
}
# Keep four MIB fields of each context (man memprof-data-show lists all 26).
brief() {
	grep -v -E '^      (Min|Max|Alloc(Timestamp|CpuId)|Dealloc|Num|DataType|Total(AccessDensity|LifetimeAccessDensity)|AccessHistogramSize)' |
		sed '/^    histogram:/d'
}

heading "A raw profile with the binaries that ran: the 3 contexts with the most bytes, symbolized, the allocator's own frames dropped" \
	"memprof-data show --top=3 --sort=bytes --binary=$F/basic.pie --binary=$F/libfixture.so $F/basic.pie.v4.profraw"
run show --top=3 --sort=bytes --binary=$F/basic.pie --binary=$F/libfixture.so \
	$F/basic.pie.v4.profraw | sed '/^inputs:/,/^summary:/{/^summary:/!d}' | brief
echo "(only 4 of each context's 26 MIB fields are shown here)"

heading "Merge profiles of clang 14 (raw v1), clang 16 (raw v2) and clang 19 (raw v4, one of them zstd-compressed) into one indexed profile" \
	"memprof-data merge -o $OUT/basic.memprof --binary=... $F/basic.clang14.v1.profraw $F/basic.clang16.v2.profraw $F/basic.pie.v4.profraw $F/basic.pie.v4.profraw.zst"
run merge -o "$OUT/basic.memprof" --no-progress \
	--binary=$F/basic.clang14 --binary=$F/libfixture-clang14.so \
	--binary=$F/basic.clang16 --binary=$F/libfixture-clang16.so \
	--binary=$F/basic.pie --binary=$F/libfixture.so \
	$F/basic.clang14.v1.profraw $F/basic.clang16.v2.profraw \
	$F/basic.pie.v4.profraw $F/basic.pie.v4.profraw.zst
echo "(the two clang 19 profiles fold context by context; the v1 and v2 profiles have no"
echo " build ids, so their C library frames stay addresses and their contexts stay apart;"
echo " llvm-profdata-19 rejects raw v1 and v2 profiles outright)"

heading "The merged profile: its tables, and its largest context" \
	"memprof-data show --stats --top=1 --sort=bytes $OUT/basic.memprof"
run show --stats --top=1 --sort=bytes "$OUT/basic.memprof" | brief

heading "Profiles of two runs merged, then compared: a CI gate on 5 % growth of TotalSize" \
	"memprof-data diff --fail-if=TotalSize:+5% --top=3 $OUT/base.memprof $OUT/grow10.memprof"
run merge -o "$OUT/base.memprof" --no-progress --binary=$S/shift $S/base.profraw
run merge -o "$OUT/grow10.memprof" --no-progress --binary=$S/shift $S/grow10.profraw
set +e
run diff --fail-if=TotalSize:+5% --top=3 "$OUT/base.memprof" "$OUT/grow10.memprof"
rc=$?
set -e
echo "(exit status $rc: 3 means a gate was crossed, so CI fails the change)"
[ "$rc" -eq 3 ] || { echo "demo.sh: diff should have exited 3" >&2; exit 1; }

heading "How much two profiles agree, metric by metric" \
	"memprof-data overlap $OUT/base.memprof $OUT/grow10.memprof"
run overlap "$OUT/base.memprof" "$OUT/grow10.memprof" | sed '/^functions:/,$d'

heading "Feed the compiler: LLVM's indexed profile, then clang building with it" \
	"memprof-data merge --format=llvm -o $OUT/cxx.memprofdata --binary=$F/cxx.pie $F/cxx.v4.profraw"
run merge --format=llvm --no-progress -o "$OUT/cxx.memprofdata" --binary=$F/cxx.pie \
	$F/cxx.v4.profraw 2>/dev/null
ls -l "$OUT/cxx.memprofdata" | awk '{ print $5 " bytes, LLVM indexed profile version 8 with MemProf" }'
cmd="clang++-19 -g -O2 -fmemory-profile-use=$OUT/cxx.memprofdata -mllvm -memprof-report-hinted-sizes -c $F/src/cxx.cc -o $OUT/cxx.o"
printf '$ %s\n\n' "$cmd"
if command -v clang++-19 >/dev/null 2>&1; then
	$cmd 2>&1 | grep "^Total size" || true
	echo "(one line per allocation the compiler hinted; make check compares them with llvm-profdata-19's)"
else
	echo "(clang++-19 is not installed: apt-get install clang-19 to run it; make check does)"
fi

heading "Look at it: a flame graph, and one of the change, for a browser or a CI artifact" \
	"memprof-data merge --format=svg -o $OUT/basic.svg --binary=$F/basic.pie --binary=$F/libfixture.so $F/basic.pie.v4.profraw" \
	"memprof-data diff --format=svg -o $OUT/grow10.svg $OUT/base.memprof $OUT/grow10.memprof"
run merge --format=svg --no-progress -o "$OUT/basic.svg" --binary=$F/basic.pie \
	--binary=$F/libfixture.so $F/basic.pie.v4.profraw 2>/dev/null
run diff --format=svg -o "$OUT/grow10.svg" "$OUT/base.memprof" "$OUT/grow10.memprof"
for f in basic.svg grow10.svg; do
	echo "$OUT/$f: $(grep -c '<g data-x' "$OUT/$f") frames (open it in a browser: hover, click to zoom, Ctrl-F)"
done
echo "(--format=pprof writes the same for go tool pprof -http, --format=folded for speedscope)"

printf '\n==== The files are in %s.\n' "$OUT"
printf '==== man -l man/memprof-data.1 (and memprof-data-show.1, -merge.1, -diff.1) for every option and field.\n'
