#!/bin/sh
# bench/show_throughput.sh [N] - how fast `memprof-data show` writes a deep
# profile's document: the first N (default 8) profiles of the benchmark
# workload merged, then shown as text, JSON and JSON with --frame-table
# into a file; prints the bytes, wall time and MB/s of each (best of 3).
# The workload is generated (and cached) by bench/gen/gen.py in
# bench/work/, as bench/run does.  Issue 17 asks for >= 100 MB/s of text.
set -eu
N=${1:-8}
cd "$(dirname "$0")/.."
WORK=${WORK:-bench/work}
MD=${MD:-$(pwd)/build/memprof-data}
[ -x "$MD" ] || make -j2 all >/dev/null
python3 bench/gen/gen.py --preset merge --runs "$N" --work "$WORK" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ls "$WORK"/merge/profiles/* | head -n "$N" >"$tmp/all.txt"
"$MD" merge --no-progress -o "$tmp/m.memprof" --binary="$WORK/merge/workload" \
	--input-files="$tmp/all.txt" 2>/dev/null
echo "show of $N merged profiles ($(wc -c <"$tmp/m.memprof") bytes):"
for args in "--format=text" "--format=json" "--format=json --frame-table"; do
	best=""
	for _ in 1 2 3; do
		s=$(date +%s.%N)
		# shellcheck disable=SC2086
		"$MD" show $args "$tmp/m.memprof" >"$tmp/out"
		e=$(date +%s.%N)
		best=$(echo "$s $e ${best:-1e9}" | awk '{ t = $2 - $1; print (t < $3 ? t : $3) }')
	done
	size=$(wc -c <"$tmp/out")
	echo "$args" "$size" "$best" | awk '{ n = NF; printf "  %-28s %11d bytes  %6.2f s  %6.1f MB/s\n", \
		substr($0, 1, index($0, $(n - 1)) - 2), $(n - 1), $n, $(n - 1) / $n / 1e6 }'
done
