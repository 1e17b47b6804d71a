#!/usr/bin/env python3
"""Check sampled profiles of tests/cli/src/sampled_sites.c against the truth.

    sampling_check.py TRUTH SHOW_JSON [--mean-tol T]

TRUTH holds the program's lines "site objects bytes"; SHOW_JSON is
`memprof-data show --format=json` of the runs' profiles (one input per
seed).  For every (site, seed) pair where the site was sampled, the 95 %
intervals of AllocCount and TotalSize must cover the truth in 93-97 % of
the pairs (site_1x50, almost never sampled, is left out and must be absent
in most runs); and for every site the mean estimate over the seeds (0 when
absent) must lie within T standard errors of the truth (unbiased).  Prints
TAP lines.
"""
import json
import math
import sys


def main():
    truth_path, show_path = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[4]) if len(sys.argv) > 4 else 4.0
    truth = {}
    for line in open(truth_path):
        name, objects, size = line.split()
        truth[name] = (int(objects), int(size))
    doc = json.load(open(show_path))
    ninputs = len(doc["inputs"])
    est = {name: [[0.0, 0.0] for _ in range(ninputs)] for name in truth}
    covered = {"AllocCount": [0, 0], "TotalSize": [0, 0]}
    seen = {name: 0 for name in truth}
    failures = []
    for c in doc["contexts"]:
        site = next((f.get("function") for f in c["frames"]
                     if str(f.get("function", "")).startswith("site_")), None)
        if site not in truth:
            continue  # the C library's own (stdio's buffer)
        e = c.get("estimates")
        if e is None:
            failures.append("%s: no estimates in a sampled profile" % site)
            continue
        seen[site] += 1
        for k, field in enumerate(("AllocCount", "TotalSize")):
            est[site][c["input"]][k] += e[field]["estimate"]
            if site == "site_1x50":
                continue
            lo, hi = e[field]["ci95"]
            covered[field][1] += 1
            if lo <= truth[site][k] <= hi:
                covered[field][0] += 1
    ok = True
    for f in failures[:5]:
        print("not ok - %s" % f)
        ok = False
    for field, (hit, n) in covered.items():
        rate = 100.0 * hit / n if n else 0
        good = 93.0 <= rate <= 97.0
        print("%s - %s: 95%% intervals cover the truth in %.1f%% of %d "
              "(site, seed) pairs (93-97 wanted)"
              % ("ok" if good else "not ok", field, rate, n))
        ok &= good
    absent = ninputs - seen["site_1x50"]
    good = absent >= 0.9 * ninputs
    print("%s - site_1x50 (50 bytes in all) absent from %d of %d runs"
          % ("ok" if good else "not ok", absent, ninputs))
    ok &= good
    worst = (0, "")
    for site, runs in est.items():
        for k in (0, 1):
            xs = [r[k] for r in runs]
            mean = sum(xs) / len(xs)
            var = sum((x - mean) ** 2 for x in xs) / max(len(xs) - 1, 1)
            se = math.sqrt(var / len(xs))
            t = truth[site][k]
            if abs(mean - t) <= 1:
                z = 0.0  # within rounding of the truth
            else:
                z = abs(mean - t) / se if se > 0 else math.inf
            if site == "site_1x50":
                continue
            if z > worst[0]:
                worst = (z, "%s %s: mean %.1f, truth %d, se %.1f"
                         % (site, ("objects", "bytes")[k], mean, t, se))
    good = worst[0] <= tol
    print("%s - estimates unbiased: every site's mean over %d seeds within %g "
          "standard errors of the truth (worst %.2f: %s)"
          % ("ok" if good else "not ok", ninputs, tol, worst[0], worst[1]))
    ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
