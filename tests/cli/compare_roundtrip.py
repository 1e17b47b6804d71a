#!/usr/bin/env python3
"""Check that an indexed profile holds exactly the contexts of the raw
profiles it was merged from.

usage: compare_roundtrip.py RAW.json INDEXED.json NAME [WEIGHT]

RAW.json is `memprof-data show --format=json --binary=...` of the raw
inputs, INDEXED.json the same of the merge output.  Raw contexts whose
symbolized stacks are equal fold into one; the folded MIB fields (sums,
minima, maxima, histograms) must equal the indexed ones.  Prints one
"ok - ..." or "not ok - ..." line.
"""
import json
import sys

SUM = ["AllocCount", "TotalAccessCount", "TotalSize", "TotalLifetime",
       "NumMigratedCpu", "TotalAccessDensity", "TotalLifetimeAccessDensity"]
MIN = ["MinAccessCount", "MinSize", "MinLifetime", "MinAccessDensity",
       "MinLifetimeAccessDensity"]
MAX = ["MaxAccessCount", "MaxSize", "MaxLifetime", "MaxAccessDensity",
       "MaxLifetimeAccessDensity", "AccessHistogramSize"]


def frame_key(f):
    if "function" in f:
        return (f["function"], f["file"], f["line"], f["column"],
                f["discriminator"], f["inlined"])
    if "build_id" in f:
        return ("?", f["build_id"], int(f["offset"], 16))
    return ("?", "", int(f["address"], 16))


def fold(contexts, weight=1):
    out = {}
    for c in contexts:
        key = tuple(frame_key(f) for f in c["frames"])
        m = dict(c["mib"])
        for k in SUM:
            m[k] *= weight
        h = [x * weight for x in c["histogram"]]
        if key not in out:
            out[key] = (m, h)
            continue
        a, ha = out[key]
        for k in SUM:
            a[k] += m[k]
        for k in MIN:
            a[k] = min(a[k], m[k])
        for k in MAX:
            a[k] = max(a[k], m[k])
        ha.extend([0] * (len(h) - len(ha)))
        for i, x in enumerate(h):
            ha[i] += x
    return out


def main():
    raw = json.load(open(sys.argv[1]))
    idx = json.load(open(sys.argv[2]))
    name = sys.argv[3]
    weight = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    want = fold(raw["contexts"], weight)
    got = fold(idx["contexts"])
    if len(idx["contexts"]) != len(got):
        print(f"not ok - {name}: the indexed profile repeats a context")
        return 1
    if set(want) != set(got):
        missing = set(want) - set(got)
        extra = set(got) - set(want)
        print(f"not ok - {name}: contexts differ; missing {list(missing)[:2]}"
              f" extra {list(extra)[:2]}")
        return 1
    for key, (m, h) in want.items():
        gm, gh = got[key]
        for k in SUM + MIN + MAX:
            if m[k] != gm[k]:
                print(f"not ok - {name}: {k} {gm[k]} != {m[k]} for {key[0]}")
                return 1
        if h != gh:
            print(f"not ok - {name}: histogram differs for {key[0]}")
            return 1
    print(f"ok - {name}: {len(want)} contexts, frames and MIB fields equal "
          f"(from {len(raw['contexts'])} raw contexts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
