#!/usr/bin/env python3
"""Compare `memprof-data show --format=json` with `llvm-profdata-19 show
--memory` on one raw profile.

Every MemInfoBlock llvm-profdata prints must equal, field for field, a
distinct context of ours (llvm-profdata prunes contexts with no frame in
the profiled binary, so we may have more, never fewer).  Prints one line
"ok - ..." or "not ok - ..." and exits 0 or 1.

usage: compare_llvm.py OURS.json LLVM.yaml NAME
"""
import json
import re
import sys


def llvm_mibs(text):
    """The MemInfoBlock mappings of llvm-profdata's YAML, as dicts, one per
    allocation context: llvm-profdata lists an inlined allocation site under
    every function of its inline chain, so equal (call stack, MIB) pairs are
    one context."""
    mibs, cur, indent, stack, seen = [], None, None, [], set()
    for line in text.splitlines():
        if line.strip() == "Callstack:":
            stack = []
        elif line.strip() == "MemInfoBlock:":
            cur, indent = {}, len(line) - len(line.lstrip())
            mibs.append((tuple(stack), cur))
            continue
        else:
            stack.append(line.strip())
        if cur is not None:
            m = re.match(r"^(\s*)(\w+):\s*(\S+)\s*$", line)
            if m and len(m.group(1)) > indent:
                try:
                    cur[m.group(2)] = int(m.group(3), 0)
                except ValueError:
                    pass
                continue
            cur = None
    unique = []
    for stack, mib in mibs:
        key = (stack, tuple(sorted(mib.items())))
        if key not in seen:
            seen.add(key)
            unique.append(mib)
    return unique


def main():
    ours_path, llvm_path, name = sys.argv[1:4]
    ours = json.load(open(ours_path))
    theirs = llvm_mibs(open(llvm_path).read())
    if not theirs:
        print(f"not ok - {name}: llvm-profdata printed no MemInfoBlock")
        return 1
    pool = [c["mib"] for c in ours["contexts"]]
    used = [False] * len(pool)
    for t in theirs:
        # Compare the fields both sides print; the histogram pointer
        # llvm-profdata shows is a stale address, not data.
        keys = [k for k in t if k in pool[0] and k != "AccessHistogram"]
        for i, mib in enumerate(pool):
            if not used[i] and all(mib[k] == t[k] for k in keys):
                used[i] = True
                break
        else:
            print(f"not ok - {name}: no context of ours equals llvm-profdata's "
                  f"MIB {json.dumps(t)}")
            return 1
    a = sum(t["AllocCount"] for t in theirs)
    s = sum(t["TotalSize"] for t in theirs)
    print(f"ok - {name}: {len(theirs)} llvm-profdata MIBs equal ours field by "
          f"field (AllocCount {a}, TotalSize {s}; we keep "
          f"{len(pool) - len(theirs)} contexts it prunes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
