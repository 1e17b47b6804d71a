#!/usr/bin/env python3
"""check_known.py - compare what known.c implies with the profile it wrote.

    check_known.py show   MODE SHOW.json        field by field, MODE A, B or H
    check_known.py llvm   LLVM.yaml             llvm-profdata-19 show --memory
    check_known.py crt    OURS.json CRT.json    ours vs compiler-rt, same .o
    check_known.py first  SHOW.json             built without frame pointers:
                                                counts per first frame only

SHOW.json is `memprof-data show --format=json --binary=PROGRAM FILE`.
MODE B: uninstrumented (access fields 0); A: clang-19 -fmemory-profile
(access counts exact); H: A plus -memprof-histogram (histograms exact).
The program runs under `taskset -c 0`, so CPU ids are 0 and nothing
migrates.  Prints "ok - ..." / "not ok - ..." lines; exits 1 on a failure.
"""
import json
import re
import sys

# site (first frame), caller (second frame) -> the sizes of its objects and
# the accesses each object gets in mode A (touch() stores).
GROW = [32 << k for k in range(8)]
SITES = {
    ("small_site", "main"): dict(sizes=[24] * 100, acc=24),
    ("calloc_site", "main"): dict(sizes=[120] * 50, acc=120),
    ("grow_start", "grow_site"): dict(sizes=[16] * 3, acc=0),
    ("grow_realloc", "grow_site"): dict(sizes=GROW * 3, acc=8, overlaps=None),
    ("large_site", "main"): dict(sizes=[1 << 20] * 3, acc=1000),
    ("live_site", "main"): dict(sizes=[333] * 7, acc=10, overlaps=6, min_life=20),
    ("thread_site", "thread_main"): dict(sizes=[48] * 100, acc=48, overlaps=None),
    ("posix_site", "main"): dict(sizes=[200] * 5, acc=16),
    ("aligned_site", "main"): dict(sizes=[512] * 3, acc=16),
    ("memalign_site", "main"): dict(sizes=[100] * 2, acc=16),
    ("valloc_site", "main"): dict(sizes=[100], acc=16),
    ("pvalloc_site", "main"): dict(sizes=[8192], acc=16),
    ("zero_site", "main"): dict(sizes=[1] * 3, acc=0),
    ("lifetime_site", "main"): dict(sizes=[77] * 2, acc=77, min_life=30),
    ("common_site", "caller_a"): dict(sizes=[40] * 4, acc=4),
    ("common_site", "caller_b"): dict(sizes=[50] * 6, acc=4),
    ("recurse", "recurse"): dict(sizes=[56], acc=56),
    ("deep_site", "descend"): dict(sizes=[64], acc=64),
}
FUNCS = {s for s, _ in SITES} | {c for _, c in SITES} | {"touch", "thread_main"}

failures = 0


def result(ok, what):
    global failures
    print("%s - %s" % ("ok" if ok else "not ok", what))
    failures += not ok


def funcs(ctx):
    return [f.get("function") for f in ctx["frames"]]


def find(contexts, site, caller):
    return [c for c in contexts if funcs(c)[:2] == [site, caller]]


def expect_fields(site, spec, mode):
    """The MIB fields the program implies, or None where timing decides."""
    sizes = spec["sizes"]
    n = len(sizes)
    acc = spec["acc"] if mode in "AH" else 0
    dens = [acc * 100 // s for s in sizes]
    e = {
        "AllocCount": n, "TotalSize": sum(sizes),
        "MinSize": min(sizes), "MaxSize": max(sizes),
        "TotalAccessCount": acc * n, "MinAccessCount": acc, "MaxAccessCount": acc,
        "TotalAccessDensity": sum(dens), "MinAccessDensity": min(dens),
        "MaxAccessDensity": max(dens),
        "AllocCpuId": 0, "DeallocCpuId": 0, "NumMigratedCpu": 0,
        "NumSameAllocCpu": n - 1, "NumSameDeallocCpu": n - 1,
        "DataTypeId": 0,
        "NumLifetimeOverlaps": spec.get("overlaps", 0),
        "AccessHistogramSize": (max(sizes) + 7) // 8 if mode == "H" else 0,
    }
    return {k: v for k, v in e.items() if v is not None}


def check_show(mode, path):
    doc = json.load(open(path))
    ctxs = doc["contexts"]
    for (site, caller), spec in SITES.items():
        name = "%s %s <- %s" % (mode, site, caller)
        found = find(ctxs, site, caller)
        if len(found) != 1:
            result(False, "%s: %d contexts, expected 1" % (name, len(found)))
            continue
        c = found[0]
        m = c["mib"]
        want = expect_fields(site, spec, mode)
        bad = ["%s %s != %s" % (k, m.get(k), v) for k, v in want.items() if m.get(k) != v]
        result(not bad, "%s: %s" % (name, "; ".join(bad) if bad else
                                    "%d fields as implied" % len(want)))
        # Lifetimes and their densities depend on the clock: bounds only.
        life_ok = (m["MinLifetime"] <= m["MaxLifetime"] and
                   m["MinLifetime"] * m["AllocCount"] <= m["TotalLifetime"] <=
                   m["MaxLifetime"] * m["AllocCount"] and
                   m["MinLifetime"] >= spec.get("min_life", 0) and
                   m["MaxLifetime"] < 60000 and
                   m["AllocTimestamp"] <= m["DeallocTimestamp"] + (m["AllocCount"] > 1) * 60000)
        lad_ok = (m["MaxLifetimeAccessDensity"] <= m["MaxAccessDensity"] * 1000 and
                  m["TotalLifetimeAccessDensity"] <= m["TotalAccessDensity"] * 1000 and
                  (m["MaxLifetime"] > 0 or
                   m["TotalLifetimeAccessDensity"] == m["TotalAccessDensity"] * 1000))
        result(life_ok and lad_ok, "%s: lifetimes %d..%d ms (>= %d), lifetime densities "
               "consistent" % (name, m["MinLifetime"], m["MaxLifetime"],
                               spec.get("min_life", 0)))
        if mode == "H":
            h = c["histogram"]
            ok = len(h) == want["AccessHistogramSize"] and sum(h) == want["TotalAccessCount"]
            # touch() stores bytes 0..acc-1: 8 per full 8-byte entry.
            full = [8 * len(spec["sizes"])] * (spec["acc"] // 8)
            ok = ok and h[:len(full)] == full
            result(ok, "%s: histogram of %d entries, %s..." % (name, len(h), h[:4]))
    rec = find(ctxs, "recurse", "recurse")
    if rec:
        f = funcs(rec[0])
        result(f[:7] == ["recurse"] * 6 + ["main"], "%s recurse(5): six recurse frames "
               "then main (%s)" % (mode, ",".join(str(x) for x in f[:8])))
    deep = find(ctxs, "deep_site", "descend")
    if deep:
        f = funcs(deep[0])
        result(f == ["deep_site"] + ["descend"] * 28,
               "%s deep_site 41 calls deep: 29 frames kept, as compiler-rt keeps "
               "with malloc_context_size=30, its own frame the 30th (%d: %s...)" %
               (mode, len(f), ",".join(str(x) for x in f[:3])))
    strays = [c for c in ctxs if c["frames"] and funcs(c)[0] in FUNCS and
              (funcs(c)[0], (funcs(c) + [None])[1]) not in SITES]
    result(not strays, "%s: no unexpected context at a site of known.c" % mode)
    t = find(ctxs, "thread_site", "thread_main")
    if t:
        result(funcs(t[0])[2] == "start_thread", "%s thread_site: third frame start_thread" % mode)


def parse_llvm(path):
    """(first, second frame symbol) -> [AllocCount, TotalSize] summed."""
    sites = {}
    frames, in_stack, mib = [], False, None
    for line in open(path):
        s = line.strip()
        if s == "Callstack:":
            frames, in_stack, mib = [], True, None
        elif s == "MemInfoBlock:":
            in_stack, mib = False, {}
            key = tuple(frames[:2])
            sites.setdefault(key, [0, 0])
        elif in_stack and s.startswith("SymbolName:"):
            frames.append(s.split(":", 1)[1].strip())
        elif mib is not None and re.match(r"(AllocCount|TotalSize): ", s):
            k, v = s.split(":")
            sites[tuple(frames[:2])][0 if k == "AllocCount" else 1] += int(v)
    return sites


def check_llvm(path):
    sites = parse_llvm(path)
    for (site, caller), spec in SITES.items():
        got = sites.get((site, caller))
        want = [len(spec["sizes"]), sum(spec["sizes"])]
        result(got == want, "llvm-profdata-19 show: %s <- %s AllocCount/TotalSize %s "
               "(expected %s)" % (site, caller, got, want))


def key(ctx):
    return tuple((f.get("function"), f.get("line"), f.get("column")) for f in ctx["frames"])


def check_crt(ours_path, crt_path):
    """Same instrumented object, linked with each runtime."""
    ours = {key(c): c for c in json.load(open(ours_path))["contexts"]}
    crt = {key(c): c for c in json.load(open(crt_path))["contexts"]}
    exact = 0
    for k, c in sorted(ours.items(), key=lambda kv: str(kv[0])):
        if not k or k[0][0] not in FUNCS:
            continue
        name = "vs compiler-rt: %s <- %s" % (k[0][0], k[1][0] if len(k) > 1 else "?")
        if k not in crt:
            result(False, "%s: context missing from compiler-rt's profile" % name)
            continue
        a, b = c["mib"], crt[k]["mib"]
        same = all(a[f] == b[f] for f in ("AllocCount", "TotalSize", "MinSize", "MaxSize"))
        result(same, "%s: AllocCount %d/%d TotalSize %d/%d equal" % (
            name, a["AllocCount"], b["AllocCount"], a["TotalSize"], b["TotalSize"]))
        # Tolerance: compiler-rt never clears the counter of an object's
        # last, partial granule and sums one granule past the end, so it
        # may count up to 8 stale accesses more per object; never fewer.
        d = b["TotalAccessCount"] - a["TotalAccessCount"]
        ok = 0 <= d <= 8 * a["AllocCount"]
        if d == 0:
            ok = ok and a["TotalAccessDensity"] == b["TotalAccessDensity"]
            exact += 1
        result(ok, "%s: TotalAccessCount ours %d, compiler-rt %d (tolerance 0..+%d)" % (
            name, a["TotalAccessCount"], b["TotalAccessCount"], 8 * a["AllocCount"]))
    for k in crt:
        if k and k[0][0] in FUNCS and k not in ours:
            result(False, "vs compiler-rt: %s only in compiler-rt's profile" % (k[0][0],))
    result(exact >= len(SITES) - 2, "vs compiler-rt: %d of %d contexts have identical "
           "access counts" % (exact, len(SITES)))


def check_first(path):
    """Without frame pointers only the first frame is sure: sum per site."""
    per = {}
    for c in json.load(open(path))["contexts"]:
        if c["frames"]:
            f = funcs(c)[0]
            per.setdefault(f, [0, 0])
            per[f][0] += c["mib"]["AllocCount"]
            per[f][1] += c["mib"]["TotalSize"]
    want = {}
    for (site, _), spec in SITES.items():
        want.setdefault(site, [0, 0])
        want[site][0] += len(spec["sizes"])
        want[site][1] += sum(spec["sizes"])
    for site, w in sorted(want.items()):
        result(per.get(site) == w, "no frame pointers: first frame %s, AllocCount/TotalSize "
               "%s (expected %s)" % (site, per.get(site), w))


def main(argv):
    if len(argv) == 4 and argv[1] == "show":
        check_show(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "llvm":
        check_llvm(argv[2])
    elif len(argv) == 4 and argv[1] == "crt":
        check_crt(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "first":
        check_first(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
