#!/usr/bin/env python3
"""Write raw profiles that no packaged clang produces here.

    python3 tests/fuzz/synth.py OUTDIR
    python3 tests/fuzz/synth.py --many N FILE

v3.profraw is basic.clang16.v2.profraw with v3 segment entries (a build id
size field and a 20-byte build id); v5.profraw is basic.hist.v4.profraw
with v5 histograms (u16 entries, 12-bit mantissa and 4-bit exponent).
They seed the fuzz corpora (tests/fuzz/seed.sh) so that the fuzzers start
from every version the raw reader accepts.

--many writes a v4 profile of N distinct three-frame contexts in one
segment without a build id (nothing to symbolize, so libdw is never
involved): an input whose merge writes an output of many blocks
(tests/cli/test_atomic.sh).
"""
import os
import struct
import sys

FX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def u64(b, off):
    return struct.unpack_from("<Q", b, off)[0]


def u32(b, off):
    return struct.unpack_from("<I", b, off)[0]


def split(b):
    """Header fields and the three sections of a one-profile file."""
    version, total = u64(b, 8), u64(b, 16)
    seg, mib, stk = u64(b, 24), u64(b, 32), u64(b, 40)
    return version, b[seg:mib], b[mib:stk], b[stk:total]


def assemble(version, segs, mibs, stacks):
    def pad(x):
        return x + b"\0" * (-len(x) % 8)

    segs, mibs, stacks = pad(segs), pad(mibs), pad(stacks)
    seg = 48
    mib = seg + len(segs)
    stk = mib + len(mibs)
    total = stk + len(stacks)
    hdr = struct.pack("<QQQQQQ", 0xFF6D70726F667281, version, total, seg, mib, stk)
    return hdr + segs + mibs + stacks


def v3_from_v2(b):
    version, segs, mibs, stacks = split(b)
    assert version == 2
    n = u64(segs, 0)
    out = struct.pack("<Q", n)
    for i in range(n):
        e = segs[8 + 56 * i: 8 + 56 * (i + 1)]
        build_id = bytes((i * 16 + k) & 0xFF for k in range(20)) + b"\0" * 12
        out += e[:24] + struct.pack("<Q", 20) + build_id
    return assemble(3, out, mibs, stacks)


def encode_v5(v):
    e = 0
    while (v >> e) > 0xFFF and e < 15:
        e += 1
    return min(v >> e, 0xFFF) | (e << 12)


def v5_from_v4(b):
    version, segs, mibs, stacks = split(b)
    assert version == 4
    n = u64(mibs, 0)
    out, pos = struct.pack("<Q", n), 8
    for _ in range(n):
        rec = mibs[pos: pos + 8 + 144]
        nh = u32(rec, 8 + 132)
        pos += 8 + 144
        hist = [u64(mibs, pos + 8 * k) for k in range(nh)]
        pos += 8 * nh
        out += rec + b"".join(struct.pack("<H", encode_v5(h)) for h in hist)
    return assemble(5, segs, out, stacks)


def many(n):
    seg = struct.pack("<Q", 1) + struct.pack("<QQQQ", 0x400000, 0x800000, 0, 0) \
        + b"\0" * 32
    mibs, stacks = [struct.pack("<Q", n)], [struct.pack("<Q", n)]
    for i in range(n):
        mib = bytearray(144)
        struct.pack_into("<I", mib, 0, i + 1)           # AllocCount
        struct.pack_into("<Q", mib, 28, 16 * (i + 1))   # TotalSize
        struct.pack_into("<II", mib, 36, 16, 16)        # MinSize, MaxSize
        mibs.append(struct.pack("<Q", i + 1) + bytes(mib))
        pcs = (0x400000 + 16 * i, 0x500000 + 16 * (i % 97), 0x600000)
        stacks.append(struct.pack("<QQ", i + 1, 3) + struct.pack("<3Q", *pcs))
    return assemble(4, seg, b"".join(mibs), b"".join(stacks))


def main():
    if sys.argv[1] == "--many":
        open(sys.argv[3], "wb").write(many(int(sys.argv[2])))
        return
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    v2 = open(os.path.join(FX, "basic.clang16.v2.profraw"), "rb").read()
    v4 = open(os.path.join(FX, "basic.hist.v4.profraw"), "rb").read()
    open(os.path.join(out, "v3.profraw"), "wb").write(v3_from_v2(v2))
    open(os.path.join(out, "v5.profraw"), "wb").write(v5_from_v4(v4))


if __name__ == "__main__":
    main()
