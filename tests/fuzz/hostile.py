#!/usr/bin/env python3
"""Write small hostile profiles that cost far more to read than their size.

    python3 tests/fuzz/hostile.py OUTDIR [SCALE]

Each is valid by every check the readers made when it was written; what
it attacked is the work or memory per input byte.  Each found a bug: the
first four fixed in 1a86d5b, the others as each says.  The small ones
(SCALE 1) are in tests/fuzz/regress/ and guard the fixes;
tests/cli/test_limits.sh makes and reads the others.  SCALE (default 1) multiplies the sizes, to see the
effect with `memprof-data show` at a glance.

raw-shared-stack.profraw
    v4: K MIB records that all name one stack of N PCs.  The raw reader
    copied the stack's PCs for every record: memory and time K x N,
    quadratic in the file size (now once per stack).
idx-deep-trie.memprof
    indexed: a trie that is one chain of N nodes, each node a context, one
    function, a small MIB schema.  Every context is N/2 frames deep on
    average: N^2/2 frames in all, read frame by frame from the leaf in
    N^3/6 steps (now: walked up in O(depth), and a file whose contexts
    expand to more than 16 frames per byte of it is refused when opened,
    node depths computed in one pass).
idx-shared-record.memprof
    indexed: K hash-table items with the same name pointing at the same
    record of C contexts: walked K times, K x C contexts listed (now
    rejected: records may not overlap, a function has one; and since its
    C - 1 nodes are one frame under one parent, the trie check refuses it
    first).
idx-long-name.memprof
    indexed: a chain of N nodes as in idx-deep-trie, within the frames-per-
    byte cap, all in one function whose name is 64 KiB x SCALE long.  Every
    frame carries the name: `diff` and `overlap` built match keys from the
    names, N^2/2 x 64 KiB bytes (34 GB at SCALE 1); now a frame costs a few
    string ids whatever its name's length.  The pprof and flame graph
    exports hashed the same 34 GB (18 and 15 s) until they too looked
    names up by address (src/export/exp_intern.c).
idx-no-histogram-field.memprof (SCALE 1 only)
    indexed: one context, a MIB schema without the histogram field (the
    format lets a writer choose its fields).  `show` crashed copying from
    hist == NULL (now fixed in src/cli/view.c).
idx-hist-field-not-array.memprof (SCALE 1 only)
    indexed: the same, the histogram's tag typed as a plain varint (a
    reader keeps no histogram then): the same crash.  The first
    reproducer was found by fuzz_show in a version 8 file.
json-invalid-utf8.memprof (SCALE 1 only)
    indexed: a function name that is not UTF-8.  JSON and YAML output
    copied it as it was (now escaped in src/cli/emit.c).  Also first found
    by fuzz_show in a version 8 file.
idx-demangle-bomb.memprof (SCALE 1 only)
    indexed: one function whose 400-byte name nests substitutions 40 deep,
    each a template of two copies of the one before: demangled, 2^40 types
    (10 TB).  __cxa_demangle wrote it out until memory ran out; now the
    demangler stops at 64 bytes per byte of the name (src/symbolize/
    sym_demangle.c) and the name is shown as it is.

The indexed files are version 9 (memprof-data-format(5)).
"""
import os
import struct
import sys

RAW_MAGIC = 0xFF6D70726F667281


def raw_shared_stack(k, n):
    seg = struct.pack("<Q", 1) + struct.pack("<QQQQ", 0x1000, 0x100000, 0, 20) \
        + bytes(range(20)) + b"\0" * 12
    mib = bytearray(144)
    struct.pack_into("<I", mib, 0, 1)           # AllocCount
    struct.pack_into("<Q", mib, 28, 16)         # TotalSize
    mibs = struct.pack("<Q", k) + b"".join(struct.pack("<Q", 7) + bytes(mib)
                                           for _ in range(k))
    pcs = b"".join(struct.pack("<Q", 0x1000 + 4 * i) for i in range(n))
    stacks = struct.pack("<QQQ", 1, 7, n) + pcs
    seg_off = 48
    mib_off = seg_off + len(seg)
    stk_off = mib_off + len(mibs)
    total = stk_off + len(stacks)
    hdr = struct.pack("<QQQQQQ", RAW_MAGIC, 4, total, seg_off, mib_off, stk_off)
    return hdr + seg + mibs + stacks


def varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def fnv1a(s):
    h = 0xCBF29CE484222325
    for c in s:
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def trie_section(trie):
    """The trie section of TRIE, a list of (frame, parent index + 1), parents
    first, and the offset of each node (its stack id)."""
    body = bytearray(struct.pack("<I", len(trie)))
    offs = []
    for fr, p1 in trie:
        off = len(body)
        offs.append(off)
        body += varint(fr) + varint(off - offs[p1 - 1] if p1 else 0)
    return bytes(body), offs


def record(ids):
    """A record of contexts at the increasing stack ids IDS, each with
    AllocCount 1 and no histogram: the first MIB stores AllocCount (mask
    bit 0), the others store nothing (the same as the MIB before)."""
    out, prev = bytearray(varint(len(ids))), 0
    for k, i in enumerate(ids):
        out += varint(i - prev) + (b"\x01\x01" if k == 0 else b"\x00")
        prev = i
    return bytes(out)


def indexed(trie_b, records, items, ncontexts, hist="array", name=b"f"):
    """An indexed v9 file: one function NAME (string id 1), one frame.

    TRIE_B is the trie section (trie_section()); RECORDS the records
    section; ITEMS a list of (record offset, record size, contexts), all
    for NAME.  The MIB schema is AllocCount and the histogram, tag 27,
    typed as HIST says: "array" (its type), "varint" (wrong, but legal:
    the reader then keeps no histogram) or None (no such field).
    """
    def pad(x):
        return x + b"\0" * (-len(x) % 8)

    strings = b"\0" + name + b"\0"
    summary = struct.pack("<II", 0, 0)
    paths = struct.pack("<I", 0)
    # One stack entry: function 1, line 1, column 1, in 1-byte columns.
    frames = struct.pack("<I", 1) + bytes([1, 0, 1, 1, 0, 0, 0, 0]) + \
        bytes([1, 1, 1])
    schema = struct.pack("<I", 1 if hist is None else 2) + bytes([1, 1])
    if hist == "array":
        schema += bytes([27, 2])
    elif hist == "varint":
        schema += bytes([27, 1])
    h = fnv1a(name)
    nb = 1
    chain = struct.pack("<I", len(items)) + b"".join(
        struct.pack("<QIIII", h, 1, off, size, n) for off, size, n in items)
    hash_b = struct.pack("<II", nb, len(items)) + struct.pack("<I", 12) + chain
    secs = [summary, strings, paths, frames, trie_b, schema, records, hash_b]
    off = 64 + 24 * len(secs)
    table, body = b"", b""
    for i, s in enumerate(secs):
        table += struct.pack("<IIQQ", i + 1, 0, off + len(body), len(s))
        body += pad(s)
    size = off + len(body)
    hdr = b"\x89MPIDX\r\n" + struct.pack("<IIQIIQQQ", 9, 1, size, len(secs), 0,
                                          ncontexts, len(items), 1)
    hdr += b"\0" * (64 - len(hdr))
    return hdr + table + body


def idx_deep_trie(n, hist="array", name=b"f"):
    trie_b, offs = trie_section([(0, i) for i in range(n)])  # parent: i-1
    rec = record(offs)
    return indexed(trie_b, rec, [(0, len(rec), n)], n, hist, name)


def idx_shared_record(k, c):
    # Node 0 and c-1 children of it.
    trie_b, offs = trie_section([(0, 0)] + [(0, 1)] * (c - 1))
    rec = record(offs)
    return indexed(trie_b, rec, [(0, len(rec), c)] * k, k * c)


def doubling_name(k):
    """_Z1f1aIiiE, then k - 1 parameters a<S, S> of the one before."""
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def seq(i):
        s = ""
        while True:
            s = digits[i % 36] + s
            i //= 36
            if not i:
                return s

    name = "_Z1f1aIiiE"
    for j in range(1, k):
        name += "S_IS%s_S%s_E" % (seq(j - 1), seq(j - 1))
    return name.encode()


def main():
    out = sys.argv[1]
    scale = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    os.makedirs(out, exist_ok=True)
    files = {
        "raw-shared-stack.profraw": raw_shared_stack(300 * scale, 6000 * scale),
        "idx-deep-trie.memprof": idx_deep_trie(1500 * scale),
        "idx-shared-record.memprof": idx_shared_record(400 * scale, 1500 * scale),
        # sqrt(16 x name bytes) nodes: the most frames the cap allows.
        "idx-long-name.memprof": idx_deep_trie(
            int((16 * 65536 * scale) ** 0.5), name=b"n" * (65536 * scale)),
    }
    if scale == 1:
        # Not hostile, just legal: a schema without the histogram field.
        files["idx-no-histogram-field.memprof"] = idx_deep_trie(1, hist=None)
        files["idx-hist-field-not-array.memprof"] = idx_deep_trie(
            4, hist="varint")
        files["json-invalid-utf8.memprof"] = idx_deep_trie(
            2, name=b"\xffbad\xc3(utf8")
        files["idx-demangle-bomb.memprof"] = idx_deep_trie(
            2, name=doubling_name(40))
    for name, data in files.items():
        open(os.path.join(out, name), "wb").write(data)


if __name__ == "__main__":
    main()
