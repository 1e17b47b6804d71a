#!/usr/bin/env python3
"""A raw profile of N distinct deep contexts of the basic fixture.

    python3 tests/cli/wide_profile.py ROOT N OUT [SEED]

Every stack is 12 PCs drawn at random (seeded) from the PCs of
tests/fixtures/basic.pie.v4.profraw, under its memory map, so that they
symbolize through basic.pie, libfixture.so and the C library as the
fixture's do; MIBs as synth.py --many writes them.  test_limits.sh makes
big raw and LLVM files of it to bound what show and diff keep;
test_tsan.sh merges several, of different SEEDs (default 1), so that new
stacks come in batches while the workers fold.
"""
import random
import struct
import sys

DEPTH = 12


def fixture_pcs(synth, stacks):
    """Every distinct PC of a stack section, sorted."""
    pcs, pos = set(), 8
    for _ in range(synth.u64(stacks, 0)):
        n = synth.u64(stacks, pos + 8)
        pcs.update(synth.u64(stacks, pos + 16 + 8 * k) for k in range(n))
        pos += 16 + 8 * n
    return sorted(pcs)


def wide(synth, root, n, seed=1):
    path = root + "/tests/fixtures/basic.pie.v4.profraw"
    version, segs, _, stacks = synth.split(open(path, "rb").read())
    assert version == 4, version
    pcs = fixture_pcs(synth, stacks)
    rnd = random.Random(seed)
    mibs, stks = [struct.pack("<Q", n)], [struct.pack("<Q", n)]
    for i in range(n):
        mib = bytearray(144)
        struct.pack_into("<I", mib, 0, 1 + i % 50)          # AllocCount
        struct.pack_into("<Q", mib, 28, 64 * (1 + i % 50))  # TotalSize
        struct.pack_into("<II", mib, 36, 64, 64)            # MinSize, MaxSize
        mibs.append(struct.pack("<Q", i + 1) + bytes(mib))
        st = [rnd.choice(pcs) for _ in range(DEPTH)]
        stks.append(struct.pack("<QQ", i + 1, DEPTH) +
                    struct.pack("<%dQ" % DEPTH, *st))
    return synth.assemble(4, segs, b"".join(mibs), b"".join(stks))


def main():
    root, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    sys.path.insert(0, root + "/tests/fuzz")
    import synth
    open(out, "wb").write(wide(synth, root, n, seed))


if __name__ == "__main__":
    main()
