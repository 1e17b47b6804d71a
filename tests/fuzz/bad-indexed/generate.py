#!/usr/bin/env python3
"""Regenerate the must-fail indexed profiles in this directory.

Each NAME.memprof has NAME.memprof.expect holding text that the message of
`memprof-data show NAME.memprof` must contain (tests/cli/
test_fuzz_regression.sh checks it, and that the exit status is 1).  All
are derived by one precise corruption from base.memprof.in, which is

    memprof-data merge -o base.memprof.in --binary=tests/fixtures/basic.pie \\
        --binary=tests/fixtures/libfixture.so tests/fixtures/basic.pie.v4.profraw

(an indexed v9 profile: symbolized frames with paths, an inlined frame, a
discriminator; 12 contexts of 11 functions).  Run from anywhere:
    python3 tests/fuzz/bad-indexed/generate.py
The layout is memprof-data-format(5).
"""
import glob
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "base.memprof.in")
SEC = {"summary": 1, "strings": 2, "paths": 3, "frames": 4, "trie": 5,
       "schema": 6, "records": 7, "hash": 8}
VERSION = 9


def get(b, fmt, off):
    return struct.unpack_from("<" + fmt, b, off)[0]


def put(b, fmt, off, v):
    struct.pack_into("<" + fmt, b, off, v)


def get_varint(b, off):
    """(value, offset after it) of the LEB128 varint at OFF."""
    v, shift = 0, 0
    while True:
        c = b[off]
        off += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, off


def varint_fixed(v, n):
    """V as a varint of exactly N bytes (padded with continuation bytes,
    which the reader accepts), so that it replaces N bytes in place."""
    out = bytearray()
    for i in range(n):
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if i < n - 1 else 0))
    assert v == 0, "value does not fit %d varint bytes" % n
    return bytes(out)


def varint_fixed_min(v):
    """V as a varint in the fewest bytes."""
    n = 1
    while v >> (7 * n):
        n += 1
    return varint_fixed(v, n)


def put_varint(b, off, v):
    """Overwrite the varint at OFF with V, in as many bytes as it had."""
    _, end = get_varint(b, off)
    b[off:end] = varint_fixed(v, end - off)


class Layout:
    def __init__(self, b):
        self.n = get(b, "I", 24)
        self.entry = {}     # section id -> offset of its table entry
        self.off = {}
        self.size = {}
        for i in range(self.n):
            e = 64 + 24 * i
            sid = get(b, "I", e)
            self.entry[sid] = e
            self.off[sid] = get(b, "Q", e + 8)
            self.size[sid] = get(b, "Q", e + 16)
        # Stack-entry table: column widths and entry size.
        fr = self.sec("frames")
        self.nframes = get(b, "I", fr)
        self.width = list(b[fr + 4:fr + 10])
        self.col = [sum(self.width[:c]) for c in range(6)]
        self.esize = sum(self.width)
        # Trie nodes: offset in the section -> (frame, up, file offset
        # of up).
        self.nodes = {}
        t, end = self.sec("trie"), self.sec("trie") + self.size[SEC["trie"]]
        p = t + 4
        while p < end:
            frame, q = get_varint(b, p)
            up, r = get_varint(b, q)
            self.nodes[p - t] = (frame, up, q)
            p = r
        self.nschema = get(b, "I", self.sec("schema"))

    def sec(self, name):
        return self.off[SEC[name]]

    def frame_at(self, i):
        """File offset of stack entry I."""
        return self.sec("frames") + 12 + i * self.esize

    def frame_col(self, b, i, c):
        p = self.frame_at(i) + self.col[c]
        return int.from_bytes(b[p:p + self.width[c]], "little")

    def hash_items(self, b):
        """(offset of item, bucket) for every hash-table item."""
        h = self.sec("hash")
        nb = get(b, "I", h)
        items = []
        for k in range(nb):
            off = get(b, "I", h + 8 + 4 * k)
            if off:
                for i in range(get(b, "I", h + off)):
                    items.append((h + off + 4 + 24 * i, k))
        return items

    def record_mibs(self, b, item):
        """[(offset of step, stack id, offset of mask)] of ITEM's record,
        assuming the schema memprof-data writes (26 varints, then the
        histogram array)."""
        p = self.sec("records") + get(b, "I", item + 12)
        n, p = get_varint(b, p)
        out, sid = [], 0
        for _ in range(n):
            step, q = get_varint(b, p)
            sid += step
            mask, r = get_varint(b, q)
            out.append((p, sid, q))
            for f in range(self.nschema):
                if mask >> f & 1:
                    v, r = get_varint(b, r)
                    if f == 26:             # histogram: v entries follow
                        for _ in range(v):
                            _, r = get_varint(b, r)
            p = r
        return out


def checksum(b):
    """CRC-32 (zlib's) of B with the header's checksum field as zero."""
    return zlib.crc32(bytes(b[:56]) + b"\0" * 8 + bytes(b[64:]))


def fnv1a(s):
    h = 0xCBF29CE484222325
    for c in s:
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    orig = bytes(open(BASE, "rb").read())
    L = Layout(orig)
    assert get(orig, "I", 8) == VERSION
    for old in glob.glob(os.path.join(HERE, "*.memprof*")):
        if not old.endswith(".in"):
            os.remove(old)

    def write(name, data, expect):
        path = os.path.join(HERE, name + ".memprof")
        open(path, "wb").write(bytes(data))
        open(path + ".expect", "w").write(expect + "\n")

    def case(name, expect, edit):
        b = bytearray(orig)
        b = edit(b) or b
        write(name, b, expect)

    size = len(orig)
    ncontexts, nfunctions = get(orig, "Q", 32), get(orig, "Q", 40)
    strings = L.sec("strings")
    nstrings = L.size[SEC["strings"]]
    paths, frames, trie = L.sec("paths"), L.sec("frames"), L.sec("trie")
    schema, records, hsec = L.sec("schema"), L.sec("records"), L.sec("hash")
    npaths = get(orig, "I", paths)
    items = L.hash_items(orig)
    item0 = items[0][0]
    name0 = get(orig, "I", item0 + 8)
    fname0 = orig[strings + name0:orig.index(b"\0", strings + name0)].decode()
    rec0 = records + get(orig, "I", item0 + 12)

    # Header.
    case("version-8", "unsupported indexed profile version 8 (supported: 9 to 13)",
         lambda b: put(b, "I", 8, 8))
    case("hash-type-2", "unsupported hash type 2", lambda b: put(b, "I", 12, 2))
    # The header's flags and checksum (base.memprof.in predates them).
    crc = checksum(orig)

    def damaged(b):
        put(b, "I", 28, 1)
        put(b, "I", 56, crc)
        b[-1] ^= 0x20
    bad = bytearray(orig)
    damaged(bad)
    case("checksum-mismatch", "checksum mismatch (header %08x, contents %08x)"
         % (crc, checksum(bad)), damaged)
    case("checksum-no-flag", "header has a checksum but no flag for it",
         lambda b: put(b, "I", 56, crc))
    case("header-flags", "unknown header flags 0x3", lambda b: put(b, "I", 28, 3))
    write("truncated", orig[:size // 2],
          "header says the file has %d bytes, it has %d" % (size, size // 2))
    case("trailing-bytes", "header says the file has %d bytes, it has %d"
         % (size, size + 8), lambda b: b + b"\0" * 8)
    write("header-only", orig[:40], "header is truncated (40 of 64 bytes)")
    case("function-count", "header says %d functions, the hash table holds %d"
         % (nfunctions + 1, nfunctions),
         lambda b: put(b, "Q", 40, nfunctions + 1))
    case("context-count", "header says %d contexts, the records hold %d"
         % (ncontexts + 1, ncontexts), lambda b: put(b, "Q", 32, ncontexts + 1))

    # Section table.
    case("section-count-0", "section count 0 is not between 1 and 16",
         lambda b: put(b, "I", 24, 0))
    case("section-count-17", "section count 17 is not between 1 and 16",
         lambda b: put(b, "I", 24, 17))

    def short_table(b):
        b = b[:200]
        put(b, "Q", 16, 200)
        put(b, "I", 24, 16)
        return b
    case("section-table-past-end",
         "section table of 16 entries runs past the end of the file", short_table)
    case("section-twice", "section summary appears twice",
         lambda b: put(b, "I", L.entry[SEC["strings"]], SEC["summary"]))
    case("section-missing", "section hash is missing",
         lambda b: put(b, "I", L.entry[SEC["hash"]], 12))
    case("section-misaligned", "section paths (offset 0x%x, size %d) is "
         "misaligned or outside the file" % (paths + 4, L.size[SEC["paths"]]),
         lambda b: put(b, "Q", L.entry[SEC["paths"]] + 8, paths + 4))
    case("section-outside", "section hash (offset 0x%x, size 4096) is "
         "misaligned or outside the file" % hsec,
         lambda b: put(b, "Q", L.entry[SEC["hash"]] + 16, 4096))
    case("sections-overlap", "sections strings and paths overlap",
         lambda b: put(b, "Q", L.entry[SEC["strings"]] + 16, paths - strings + 8))

    # Tables.
    case("strings-unterminated", "string table does not end with a NUL byte",
         lambda b: put(b, "B", strings + nstrings - 1, 0x41))
    case("summary-count-huge", "section summary claims 1000000 entries of 16 bytes",
         lambda b: put(b, "I", L.sec("summary"), 1000000))
    case("path-not-a-string", "path node 0 names string id 5000, which is not a string",
         lambda b: put(b, "I", paths + 4, 5000))
    case("path-parent-forward", "path node 0 has parent 0, not an earlier node",
         lambda b: put(b, "I", paths + 8, 1))

    # Stack entries: fixed-width columns.
    def put_col(b, i, c, v):
        assert v < 256 ** L.width[c], "column %d is too narrow for %d" % (c, v)
        p = L.frame_at(i) + L.col[c]
        b[p:p + L.width[c]] = v.to_bytes(L.width[c], "little")

    # The first value of column 0's width that is not a string id.
    bad_str = next(v for v in range(1, 256 ** L.width[0])
                   if v >= nstrings or orig[strings + v - 1] != 0)
    case("frame-not-a-string", "stack entry 0 names string id %d, which is "
         "not a string" % bad_str, lambda b: put_col(b, 0, 0, bad_str))
    bad_path = min(npaths + 100, 256 ** L.width[1] - 1)
    case("frame-file-node", "stack entry 0 has file node %d (of %d)"
         % (bad_path, npaths), lambda b: put_col(b, 0, 1, bad_path))
    case("frame-flags", "stack entry 0 has unknown flags 0x4",
         lambda b: put_col(b, 0, 5, 4))
    # Bit 3, a frame of a file found by build id, is version 12's.
    case("frame-flags-found", "stack entry 0 has unknown flags 0x8",
         lambda b: put_col(b, 0, 5, 8))
    def unsymbolized_not_hex(b):
        put_col(b, 0, 1, 0)     # no file, as an unsymbolized entry has
        put_col(b, 0, 5, 2)     # its name, a function's, is no build id
    case("frame-build-id-not-hex", "stack entry 0 is unsymbolized but its "
         "build id is not lowercase hex of at most 32 bytes",
         unsymbolized_not_hex)
    case("frame-width", "stack-entry column 2 has width 5 (at most 4)",
         lambda b: put(b, "B", frames + 4 + 2, 5))
    case("frame-count-huge", "section frames claims 1000000 entries of %d bytes"
         % L.esize, lambda b: put(b, "I", frames, 1000000))

    def swap_entries(b):
        a, c = L.frame_at(0), L.frame_at(1)
        b[a:a + L.esize], b[c:c + L.esize] = orig[c:c + L.esize], orig[a:a + L.esize]
    case("frame-order", "stack entry 1 does not sort after stack entry 0",
         swap_entries)

    # Trie: varint nodes named by their offsets.
    first = min(L.nodes)
    case("trie-frame", "trie node at offset %d names stack entry %d of %d"
         % (first, L.nframes, L.nframes),
         lambda b: put_varint(b, trie + first, L.nframes))
    case("trie-parent-forward", "trie node at offset %d has its parent 1 bytes "
         "back, not at an earlier node" % first,
         lambda b: put_varint(b, L.nodes[first][2], 1))
    # A child whose parent offset lands on its parent's second byte.
    child = next(o for o, (fr, up, q) in sorted(L.nodes.items()) if up >= 2)
    case("trie-parent-not-a-node", "trie node at offset %d has its parent %d "
         "bytes back, not at an earlier node" % (child, L.nodes[child][1] - 1),
         lambda b: put_varint(b, L.nodes[child][2], L.nodes[child][1] - 1))
    # Two children of one parent made the same frame: forbidden by
    # memprof-data-format(5), as it would split one stack in two.
    by_parent = {}
    for o, (fr, up, q) in sorted(L.nodes.items()):
        by_parent.setdefault(o - up if up else None, []).append(o)
    sib_a, sib_b = next((v[0], v[1]) for v in by_parent.values()
                        if len(v) >= 2 and L.nodes[v[0]][0] < 128
                        and L.nodes[v[1]][0] < 128)
    case("trie-duplicate-node", "trie nodes at offsets %d and %d are the same "
         "frame under the same parent" % (sib_a, sib_b),
         lambda b: put_varint(b, trie + sib_b, L.nodes[sib_a][0]))
    # The writer lays nodes out in depth-first pre-order, siblings by
    # increasing frame; readers check both (memprof-data-format(5)).
    sib_c, sib_d = next((v[i], v[i + 1]) for v in by_parent.values()
                        for i in range(len(v) - 1)
                        if 1 <= L.nodes[v[i]][0] < 128
                        and L.nodes[v[i + 1]][0] < 128)
    case("trie-sibling-order", "trie nodes at offsets %d and %d are siblings "
         "out of frame order" % (sib_c, sib_d),
         lambda b: put_varint(b, trie + sib_d, L.nodes[sib_c][0] - 1))
    # A node whose parent is an earlier node, but one whose subtree had
    # ended: in pre-order a parent is on the path to the node before.
    path, late = [], None
    for o, (fr, up, q) in sorted(L.nodes.items()):
        keep = [n for n in path if n <= o - up] if up else []
        if up and late is None:
            _, end = get_varint(orig, q)
            late = next(((o, n) for n in sorted(L.nodes) if n < o
                         and n not in path
                         and len(varint_fixed_min(o - n)) <= end - q), None)
        path = keep + [o]
    assert late, "no node to re-parent"
    case("trie-not-preorder", "trie node at offset %d is out of depth-first "
         "order: its parent at offset %d is not on the path to the node "
         "before it" % late,
         lambda b: put_varint(b, L.nodes[late[0]][2], late[0] - late[1]))
    case("trie-count", "trie holds %d nodes, its count says %d"
         % (len(L.nodes), len(L.nodes) + 1),
         lambda b: put(b, "I", trie, len(L.nodes) + 1))
    last = max(L.nodes)
    case("trie-varint", "trie node at offset %d is malformed or runs past the "
         "section" % last,
         lambda b: put(b, "B", trie + L.size[SEC["trie"]] - 1,
                       0x80 | orig[trie + L.size[SEC["trie"]] - 1]))

    case("schema-type", "MIB schema field 0 (tag 1) has unknown type 9",
         lambda b: put(b, "B", schema + 5, 9))
    case("schema-tag-twice", "MIB schema lists tag 1 twice",
         lambda b: put(b, "B", schema + 6, 1))

    # Hash table.
    case("hash-buckets", "function hash table has 3 buckets, not a power of two",
         lambda b: put(b, "I", hsec, 3))
    case("hash-bucket-outside", "bucket 0 of the function hash table points "
         "outside its chains (offset 4)", lambda b: put(b, "I", hsec + 8, 4))
    case("hash-chain-long", "runs past the function hash table",
         lambda b: put(b, "I", item0 - 4, 1000))
    case("hash-item-bucket", "has a hash of bucket",
         lambda b: put(b, "Q", item0, get(orig, "Q", item0) ^ 1))

    def item_hash(b):
        # In its bucket, but not the hash of its name.
        put(b, "Q", item0, get(orig, "Q", item0) ^ (1 << 40))
    case("hash-item-name-hash", "is not its name's", item_hash)
    case("hash-item-name", "function hash table item names string id 5000",
         lambda b: put(b, "I", item0 + 8, 5000))

    # Records.
    case("record-outside", "record of '%s' (offset 100000, size %d) lies "
         "outside the records section" % (fname0, get(orig, "I", item0 + 16)),
         lambda b: put(b, "I", item0 + 12, 100000))
    case("record-count", "record of '%s' does not hold the %d contexts its "
         "hash-table item says" % (fname0, get(orig, "I", item0 + 20) + 1),
         lambda b: put(b, "I", item0 + 20, get(orig, "I", item0 + 20) + 1))
    def name_of(item):
        n = get(orig, "I", item + 8)
        return orig[strings + n:orig.index(b"\0", strings + n)].decode()
    mibs0 = L.record_mibs(orig, item0)
    # A record of two contexts or more: the second's step set to 0.
    item2 = next(it for it, _ in items if get(orig, "I", it + 20) >= 2)
    mibs2 = L.record_mibs(orig, item2)
    case("record-stack-id", "record of '%s': context 1 has a bad or unsorted "
         "stack id" % name_of(item2), lambda b: put_varint(b, mibs2[1][0], 0))
    # A stack id one byte into its node: not the start of a node.
    case("record-not-a-node", "record of '%s': context 0 has stack id %d, "
         "which is not a trie node" % (fname0, mibs0[0][1] + 1),
         lambda b: put_varint(b, mibs0[0][0], mibs0[0][1] + 1))

    def other_leaf(b):
        # A valid trie node whose leaf frame is another function's.
        _, end = get_varint(orig, mibs0[0][0])
        for off, (fr, up, q) in sorted(L.nodes.items()):
            if off < 128 ** (end - mibs0[0][0]) and \
               L.frame_col(orig, fr, 0) != name0:
                put_varint(b, mibs0[0][0], off)
                return None
        raise SystemExit("no other leaf")
    case("record-other-function", "record of '%s' holds stack" % fname0, other_leaf)
    # A schema of one field: every MIB's mask names fields it lacks, and
    # the first record checked (in name order) says so.
    firstname = min(name_of(it) for it, _ in items)
    case("record-mask", "record of '%s': context 0 stores fields the schema "
         "does not have" % firstname, lambda b: put(b, "I", schema, 1))

    def varint_runs_off(b):
        # The record's last byte continues a varint past the record.
        end = rec0 + get(orig, "I", item0 + 16)
        put(b, "B", end - 1, 0x80 | get(orig, "B", end - 1))
    case("record-varint", "record of '%s': a MIB field is malformed or runs "
         "past the record" % fname0, varint_runs_off)
    # The last record, grown by one byte of the section's alignment padding
    # (so that it overlaps nothing): a byte after its last context.
    lastrec = max(items, key=lambda it: get(orig, "I", it[0] + 12))[0]
    lname = name_of(lastrec)
    assert records + L.size[SEC["records"]] < hsec

    def trailing(b):
        put(b, "I", lastrec + 16, get(orig, "I", lastrec + 16) + 1)
        put(b, "Q", L.entry[SEC["records"]] + 16, L.size[SEC["records"]] + 1)
    case("record-trailing", "record of '%s' has 1 bytes after its last context"
         % lname, trailing)


if __name__ == "__main__":
    main()
