#!/bin/sh
# bench/runtime/run.sh [BUILD [RUNS]] - the overhead of libmemprof.
#
# Builds alloc_bench.c five ways and runs each RUNS times (default 5) on two
# workloads, 1 thread x 4M iterations and 4 threads x 1M:
#   plain          clang-19 -O2, glibc malloc, no profiling
#   crt-A          clang-19 -fmemory-profile at compile and link time:
#                  compiler-rt's MemProf runtime, accesses counted
#   ours-A         compiled with -fmemory-profile, linked with libmemprof.a
#   crt-B          uninstrumented object linked with -fmemory-profile:
#                  compiler-rt's allocator and profiling, no access counting
#   ours-B         uninstrumented object linked with libmemprof.a
# and, with the same binaries and different MEMPROF_OPTIONS:
#   ours-A-s512k   ours-A with sample_interval=524288 (sampled profiling:
#                  one byte in 512 KB on average picks its object)
#   ours-B-s512k   ours-B with sample_interval=524288
#   ours-B-backtrace  ours-B with unwind=backtrace (glibc backtrace()
#                  instead of the frame-pointer walk), exact
# Prints a Markdown table of medians: wall time, CPU time (user + sys) and
# peak RSS (GNU time's %M).
# Needs BUILD/libmemprof.a (make build/libmemprof.a), clang-19,
# libclang-rt-19-dev and /usr/bin/time (package time).
set -eu
BUILD=${1:-build}
RUNS=${2:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LIB=$BUILD/libmemprof.a
OUT=$BUILD/bench-runtime
SRC=$ROOT/bench/runtime/alloc_bench.c
[ -f "$LIB" ] || { echo "run.sh: '$LIB' not built (make $BUILD/libmemprof.a)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "run.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/prof"

# No sibling calls: the sites must keep their frames (3 to 8 deep), or
# clang -O2 makes every call on the way a tail call and one context.
CF="-O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls"
x() { echo "+ $*" >&2; "$@"; }
x clang-19 $CF -o "$OUT/plain" "$SRC" -pthread
x clang-19 $CF -fmemory-profile -c -o "$OUT/a.o" "$SRC"
x clang-19 $CF -c -o "$OUT/b.o" "$SRC"
x clang-19 -fmemory-profile -o "$OUT/crt-A" "$OUT/a.o" -pthread
x clang-19 -o "$OUT/ours-A" "$OUT/a.o" "$LIB" -pthread
x clang-19 -fmemory-profile -o "$OUT/crt-B" "$OUT/b.o" -pthread
x clang-19 -o "$OUT/ours-B" "$OUT/b.o" "$LIB" -pthread

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure NAME OPTIONS ARGS...: RUNS runs of OUT/NAME (or the binary named
# by BIN), one "wall cpu rss" line each.
measure() {
	name=$1 opts=$2
	shift 2
	bin=${BIN:-$name}
	: >"$OUT/$name.times"
	i=0
	while [ $i -lt "$RUNS" ]; do
		rm -f "$OUT"/prof/*
		MEMPROF_OPTIONS="log_path=$OUT/prof/p$opts" /usr/bin/time -f "%e %U %S %M" \
			-o "$OUT/t" "$OUT/$bin" "$@" >/dev/null
		awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$OUT/t" >>"$OUT/$name.times"
		i=$((i + 1))
	done
	wall=$(cut -d' ' -f1 "$OUT/$name.times" | median)
	cpu=$(cut -d' ' -f2 "$OUT/$name.times" | median)
	rss=$(cut -d' ' -f3 "$OUT/$name.times" | median)
	echo "$wall $cpu $rss"
}

echo
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(uname -r)," \
	"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
echo "$(ldd --version | head -1); $(clang-19 --version | head -1); $(date -u +%Y-%m-%d)"
echo "median of $RUNS runs; CPU = user + sys; RSS = peak resident set"
for w in "4000000 1" "1000000 4"; do
	set -- $w
	echo
	echo "alloc_bench $1 $2 ($2 thread(s) x $1 iterations)"
	echo
	echo "| runtime | wall s | CPU s | peak RSS MB | CPU vs plain |"
	echo "|---|---:|---:|---:|---:|"
	base=""
	for v in plain crt-A ours-A ours-A-s512k crt-B ours-B ours-B-s512k ours-B-backtrace; do
		case $v in
		ours-A-s512k) r=$(BIN=ours-A measure $v ":sample_interval=524288" "$1" "$2") ;;
		ours-B-s512k) r=$(BIN=ours-B measure $v ":sample_interval=524288" "$1" "$2") ;;
		ours-B-backtrace) r=$(BIN=ours-B measure $v ":unwind=backtrace" "$1" "$2") ;;
		*) r=$(measure $v "" "$1" "$2") ;;
		esac
		set -- $w
		cpu=$(echo "$r" | cut -d' ' -f2)
		[ -n "$base" ] || base=$cpu
		echo "$r" | awk -v v="$v" -v b="$base" \
			'{ printf "| %s | %.2f | %.2f | %.1f | %.1fx |\n", v, $1, $2, $3 / 1024, $2 / b }'
	done
done
