#!/usr/bin/env python3
"""contexts.py - count the distinct allocation contexts of raw profiles.

    bench/gen/contexts.py [--json] [--prefixes=K1,K2,...] FILE...

A context is a call stack.  Raw profiles of different processes of one
PIE binary hold different PCs for the same stack (ASLR), so each PC is
first made module-relative: (build id, PC - load bias) using the segment
that contains it (raw v3/v4/v5 store the load bias in the segment's Offset).
Prints the contexts of each file, and the distinct contexts and PCs of the
union of all files (and, with --prefixes, of the first K files for each K).
Uncompressed raw v3-v5 only; Python 3 standard library only.
"""

import json
import struct
import sys

MAGIC = 0xFF6D70726F667281


class Normalizer(dict):
    """PC -> (build id, PC - bias), computed once per distinct PC."""

    def __init__(self, segs):
        super().__init__()
        self.segs = segs

    def __missing__(self, pc):
        for start, end, bias, bid in self.segs:
            if start <= pc < end:
                v = (bid, pc - bias)
                break
        else:
            v = ("", pc)
        self[pc] = v
        return v


def stacks(path):
    """Yield each stack of PATH as a tuple of module-relative frames."""
    with open(path, "rb") as f:
        data = f.read()
    off = 0
    while off + 48 <= len(data):
        magic, ver, total, seg, _mib, stk = struct.unpack_from("<6Q", data,
                                                               off)
        if magic != MAGIC or total == 0 or ver < 3:
            raise ValueError("%s: not a raw MemProf v3+ profile" % path)
        p = memoryview(data)[off:off + total]
        off += total
        n = struct.unpack_from("<Q", p, seg)[0]
        segs = []
        for i in range(n):
            e = seg + 8 + 64 * i
            start, end, bias, idlen = struct.unpack_from("<4Q", p, e)
            segs.append((start, end, bias, bytes(p[e + 32:e + 32 +
                                                   min(idlen, 32)]).hex()))
        norm = Normalizer(segs).__getitem__
        n = struct.unpack_from("<Q", p, stk)[0]
        pos = stk + 8
        for _ in range(n):
            npc = struct.unpack_from("<Q", p, pos + 8)[0]
            yield tuple(map(norm, struct.unpack_from("<%dQ" % npc, p,
                                                     pos + 16)))
            pos += 16 + 8 * npc


def count(paths, prefixes=()):
    union, per_file, at = set(), [], {}
    for i, path in enumerate(paths, 1):
        mine = set(stacks(path))
        per_file.append(len(mine))
        union |= mine
        if i in prefixes:
            at[i] = {"union_contexts": len(union),
                     "distinct_pcs": len({f for s in union for f in s})}
    return {"files": len(paths), "contexts_per_file": per_file,
            "union_contexts": len(union),
            "distinct_pcs": len({f for s in union for f in s}),
            "prefixes": at}


def main():
    args, as_json, prefixes = sys.argv[1:], False, set()
    while args and args[0].startswith("--"):
        if args[0] == "--json":
            as_json = True
        elif args[0].startswith("--prefixes="):
            prefixes = {int(k) for k in args[0].split("=", 1)[1].split(",")}
        else:
            sys.exit("contexts.py: unknown option '%s'" % args[0])
        args = args[1:]
    if not args:
        sys.exit("usage: contexts.py [--json] [--prefixes=K,...] FILE...")
    r = count(args, prefixes)
    if as_json:
        print(json.dumps(r))
        return
    for p, n in zip(args, r["contexts_per_file"]):
        print("%8d  %s" % (n, p))
    for k, v in sorted(r["prefixes"].items()):
        print("%8d  union of the first %d files (%d distinct PCs)" %
              (v["union_contexts"], k, v["distinct_pcs"]))
    print("%8d  union of %d files (%d distinct PCs)" %
          (r["union_contexts"], r["files"], r["distinct_pcs"]))


if __name__ == "__main__":
    main()
