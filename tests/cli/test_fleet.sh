#!/bin/sh
# The fleet recipe of README.md ("Merging a fleet's profiles"), run with
# GNU parallel: inputs split into shards merged side by side, the shards'
# results merged again, in two and three levels, give the same bytes as
# one flat merge of every input.  Merging is associative and commutative,
# so any batch engine can run it as a tree.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need parallel

# 40 inputs: raw profiles of three binaries, plain and zstd, some weighted.
: >"$tmp/all.txt"
for i in $(seq 1 10); do
	echo "$FX/basic.pie.v4.profraw" >>"$tmp/all.txt"
	echo "$i,$FX/cxx.v4.profraw" >>"$tmp/all.txt"
	echo "$FX/basic.pie.v4.profraw.zst" >>"$tmp/all.txt"
	echo "$FX/dump2.v4.profraw" >>"$tmp/all.txt"
done
bins="--binary=$FX/basic.pie --binary=$FX/libfixture.so --binary=$FX/cxx.pie --binary=$FX/dump2"
cd "$tmp" || exit 1

# shellcheck disable=SC2086
"$MD" merge --no-progress -o flat.memprof $bins --input-files=all.txt 2>/dev/null ||
	{ notok "flat merge"; exit 1; }

# Level 1: 8 shards, round robin, merged by parallel jobs.
split -n r/8 all.txt shard.
# shellcheck disable=SC2016
if parallel --halt now,fail=1 -j 4 \
	"$MD" merge --no-progress -o {}.memprof $bins --input-files={} ::: shard.* 2>err &&
   "$MD" merge --no-progress -o two.memprof shard.*.memprof 2>>err &&
   cmp -s flat.memprof two.memprof; then
	ok "8 shards merged by GNU parallel, then merged: the flat merge's bytes"
else
	notok "two-level merge differs from the flat one: $(head -c 400 err)"
fi

# Level 2: the 8 shard results in pairs, then the pairs (a three-level tree).
ls shard.*.memprof | paste -d ' ' - - >pairs
if parallel --halt now,fail=1 --colsep ' ' -j 4 \
	"$MD" merge --no-progress -o pair.{#}.memprof {1} {2} :::: pairs 2>err &&
   "$MD" merge --no-progress -o three.memprof pair.*.memprof 2>>err &&
   cmp -s flat.memprof three.memprof; then
	ok "a three-level tree (8 shards, 4 pairs, 1) gives the flat merge's bytes"
else
	notok "three-level merge differs from the flat one: $(head -c 400 err)"
fi
