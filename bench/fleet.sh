#!/bin/sh
# bench/fleet.sh [N] [SHARDS] - the fleet recipe of README.md on the
# benchmark workload: the first N profiles (default 64) merged flat, and
# as a tree of SHARDS (default 8) shards merged by GNU parallel and then
# merged again; the two outputs must be the same bytes.  Prints the wall
# time and peak RSS of each way.  The workload is generated (and cached)
# by bench/gen/gen.py in bench/work/, as bench/run does.
set -eu
N=${1:-64}
SHARDS=${2:-8}
cd "$(dirname "$0")/.."
WORK=${WORK:-bench/work}
MD=$(pwd)/build/memprof-data
[ -x "$MD" ] || make -j2 all >/dev/null
command -v parallel >/dev/null || { echo "bench/fleet.sh: needs GNU parallel (apt-get install parallel)" >&2; exit 1; }
python3 bench/gen/gen.py --preset merge --runs "$N" --work "$WORK" >/dev/null
BIN=$WORK/merge/workload
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ls "$WORK"/merge/profiles/* | head -n "$N" >"$tmp/all.txt"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

t() { /usr/bin/time -f '%e s, %M KiB peak' "$@"; }
echo "flat merge of $N profiles:"
t "$MD" merge --no-progress -o "$tmp/flat.memprof" --binary="$BIN" --input-files="$tmp/all.txt"
cd "$tmp"
split -n "r/$SHARDS" all.txt shard.
echo "$SHARDS shards by GNU parallel -j 2, then one merge of them:"
t parallel -j 2 "$MD" merge --no-progress -j 1 -o {}.memprof --binary="$BIN" \
	--input-files={} ::: shard.*
t "$MD" merge --no-progress -o tree.memprof shard.*.memprof
if cmp -s flat.memprof tree.memprof; then
	echo "tree == flat: $(stat -c %s flat.memprof) bytes, identical"
else
	echo "tree and flat merges DIFFER" >&2
	exit 1
fi
