#!/bin/sh
# bench/sampling/growth.sh [SEEDS [R [K [REPEAT]]]] - how often the 95 %
# intervals of a sampled context whose sizes lie far apart cover the
# truth: bench/sampling/growth.c (K objects of 101 bytes to 100 * 2^(K-1)
# + 1, REPEAT times; defaults 15 and 1) under libmemprof with
# sample_interval=R (default 32768) and SEEDS seeds (default 200).  The
# bytes' interval should hold (about 95 %); the count's assumes the
# objects not sampled were like the sampled ones, which this context
# breaks: see SAMPLED PROFILES in memprof-data-show(1).
set -eu
SEEDS=${1:-200}
R=${2:-32768}
K=${3:-15}
REPEAT=${4:-1}
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
MD=$BUILD/memprof-data
[ -x "$MD" ] && [ -f "$BUILD/libmemprof.a" ] || make -j2 all >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/growth" bench/sampling/growth.c \
	"$BUILD/libmemprof.a" -pthread
mkdir "$tmp/runs"
i=1
while [ "$i" -le "$SEEDS" ]; do
	MEMPROF_OPTIONS="log_path=$tmp/runs/p$i:sample_interval=$R:sample_seed=$i" \
		"$tmp/growth" "$K" "$REPEAT" >"$tmp/truth"
	i=$((i + 1))
done
"$MD" show --format=json --binary="$tmp/growth" "$tmp"/runs/p* >"$tmp/all.json"
echo "growth K=$K x$REPEAT, sample_interval=$R, $SEEDS seeds:"
python3 - "$tmp/truth" "$tmp/all.json" <<'PY'
import json, sys
name, objects, size = open(sys.argv[1]).read().split()
truth = {"AllocCount": int(objects), "TotalSize": int(size)}
doc = json.load(open(sys.argv[2]))
hit = {f: 0 for f in truth}
n = 0
for c in doc["contexts"]:
    if not any(f.get("function") == "grow" for f in c["frames"][:1]):
        continue
    n += 1
    for f, t in truth.items():
        e = c["estimates"][f] if "estimates" in c else None
        lo, hi = e["ci95"] if e else (c["mib"][f], c["mib"][f])
        hit[f] += lo <= t <= hi
for f in truth:
    print("  %s: the 95 %% interval covers the truth (%d) in %.1f %% of %d runs"
          % (f, truth[f], 100.0 * hit[f] / max(n, 1), n))
PY
