#!/bin/sh
# bench/sampling/coverage.sh [SEEDS [R [SCALE]]] - the longer version of
# tests/cli/test_sampling.sh's statistics: tests/cli/src/sampled_sites.c
# (sites from 1 byte to 1 MiB, SCALE times their counts) run under
# libmemprof with sample_interval=R (default 4096) and SEEDS seeds (default
# 1000), one `memprof-data show` of all the profiles, then
# tests/cli/sampling_check.py: coverage of the 95 % intervals over (site,
# seed) pairs and the bias of each site's mean estimate.  At R = 524288
# use SCALE 128 so that the sites see as many samples as at 4096.
set -eu
SEEDS=${1:-1000}
R=${2:-4096}
SCALE=${3:-1}
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
MD=$BUILD/memprof-data
[ -x "$MD" ] && [ -f "$BUILD/libmemprof.a" ] || make -j2 all >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/sites" tests/cli/src/sampled_sites.c \
	"$BUILD/libmemprof.a" -pthread
mkdir "$tmp/runs"
start=$(date +%s)
i=1
while [ "$i" -le "$SEEDS" ]; do
	MEMPROF_OPTIONS="log_path=$tmp/runs/p$i:sample_interval=$R:sample_seed=$i" \
		"$tmp/sites" "$SCALE" >"$tmp/truth"
	i=$((i + 1))
done
"$MD" show --format=json --binary="$tmp/sites" "$tmp"/runs/p* >"$tmp/all.json"
echo "sampled_sites x$SCALE, sample_interval=$R, $SEEDS seeds ($(( $(date +%s) - start )) s):"
python3 tests/cli/sampling_check.py "$tmp/truth" "$tmp/all.json" || true
