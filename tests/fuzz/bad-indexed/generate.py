#!/usr/bin/env python3
"""Regenerate the must-fail indexed profiles in this directory.

Each NAME.memprof has NAME.memprof.expect holding text that the message of
`memprof-data show NAME.memprof` must contain (tests/cli/
test_fuzz_regression.sh checks it, and that the exit status is 1).  All
are derived by one precise corruption from base.memprof.in, which is

    memprof-data merge -o base.memprof.in --binary=tests/fixtures/basic.pie \\
        --binary=tests/fixtures/libfixture.so tests/fixtures/basic.pie.v4.profraw

(an indexed v8 profile: symbolized frames with paths, an inlined frame, a
discriminator; 12 contexts of 11 functions).  Run from anywhere:
    python3 tests/fuzz/bad-indexed/generate.py
The layout is memprof-data-format(5).
"""
import glob
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "base.memprof.in")
SEC = {"summary": 1, "strings": 2, "paths": 3, "frames": 4, "trie": 5,
       "schema": 6, "records": 7, "hash": 8}


def get(b, fmt, off):
    return struct.unpack_from("<" + fmt, b, off)[0]


def put(b, fmt, off, v):
    struct.pack_into("<" + fmt, b, off, v)


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

    def sec(self, name):
        return self.off[SEC[name]]

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


def fnv1a(s):
    h = 0xCBF29CE484222325
    for c in s:
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    orig = bytes(open(BASE, "rb").read())
    L = Layout(orig)
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
    strings = L.sec("strings")
    paths, frames, trie = L.sec("paths"), L.sec("frames"), L.sec("trie")
    schema, records, hsec = L.sec("schema"), L.sec("records"), L.sec("hash")
    items = L.hash_items(orig)
    item0 = items[0][0]
    name0 = get(orig, "I", item0 + 8)
    fname0 = orig[strings + name0:orig.index(b"\0", strings + name0)].decode()
    rec0 = records + get(orig, "I", item0 + 12)

    # Header.
    case("version-7", "unsupported indexed profile version 7 (supported: 8)",
         lambda b: put(b, "I", 8, 7))
    case("hash-type-2", "unsupported hash type 2", lambda b: put(b, "I", 12, 2))
    write("truncated", orig[:size // 2],
          "header says the file has %d bytes, it has %d" % (size, size // 2))
    case("trailing-bytes", "header says the file has %d bytes, it has %d"
         % (size, size + 8), lambda b: b + b"\0" * 8)
    write("header-only", orig[:40], "header is truncated (40 of 64 bytes)")
    case("function-count", "header says 12 functions, the hash table holds 11",
         lambda b: put(b, "Q", 40, 12))
    case("context-count", "header says 13 contexts, the records hold 12",
         lambda b: put(b, "Q", 32, 13))

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
    case("section-misaligned", "section paths (offset 0x%x, size 140) is "
         "misaligned or outside the file" % (paths + 4),
         lambda b: put(b, "Q", L.entry[SEC["paths"]] + 8, paths + 4))
    case("section-outside", "section hash (offset 0x%x, size 4096) is "
         "misaligned or outside the file" % hsec,
         lambda b: put(b, "Q", L.entry[SEC["hash"]] + 16, 4096))
    case("sections-overlap", "sections strings and paths overlap",
         lambda b: put(b, "Q", L.entry[SEC["strings"]] + 16, paths - strings + 8))

    # Tables.
    case("strings-unterminated", "string table does not end with a NUL byte",
         lambda b: put(b, "B", strings + L.size[SEC["strings"]] - 1, 0x41))
    case("summary-count-huge", "section summary claims 1000000 entries of 16 bytes",
         lambda b: put(b, "I", L.sec("summary"), 1000000))
    case("path-not-a-string", "path node 0 names string id 5000, which is not a string",
         lambda b: put(b, "I", paths + 4, 5000))
    case("path-parent-forward", "path node 0 has parent 0, not an earlier node",
         lambda b: put(b, "I", paths + 8, 1))
    case("frame-not-a-string", "stack entry 0 names string id 5000, which is not a string",
         lambda b: put(b, "I", frames + 8, 5000))
    case("frame-file-node", "stack entry 0 has file node 1000 (of 17)",
         lambda b: put(b, "I", frames + 8 + 4, 1000))
    case("frame-flags", "stack entry 0 has unknown flags 0x4",
         lambda b: put(b, "I", frames + 8 + 20, 4))
    case("trie-frame", "trie node 0 names stack entry 23 of 23",
         lambda b: put(b, "I", trie + 4, 23))
    case("trie-parent-forward", "trie node 0 has parent 0, not an earlier node",
         lambda b: put(b, "I", trie + 8, 1))
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
    case("record-stack-id", "record of '%s': context 0 has a bad or unsorted "
         "stack id" % fname0, lambda b: put(b, "B", rec0 + 1, 0x7F))

    def other_leaf(b):
        # A valid trie node whose leaf frame is another function's.
        own = get(orig, "B", rec0 + 1)
        for node in range(get(orig, "I", trie)):
            fr = get(orig, "I", trie + 4 + 8 * node)
            if node < 0x80 and get(orig, "I", frames + 8 + 24 * fr) != name0:
                put(b, "B", rec0 + 1, node)
                return
        raise SystemExit("no other leaf")
    case("record-other-function", "record of '%s' holds stack" % fname0, other_leaf)

    def varint_runs_off(b):
        # The record's last byte continues a varint past the record.
        end = rec0 + get(orig, "I", item0 + 16)
        put(b, "B", end - 1, 0x80 | get(orig, "B", end - 1))
    case("record-varint", "record of '%s': a MIB field is malformed or runs "
         "past the record" % fname0, varint_runs_off)
    # The last record, grown by one byte of the section's alignment padding
    # (so that it overlaps nothing): a byte after its last context.
    last = max(items, key=lambda it: get(orig, "I", it[0] + 12))[0]
    lname = get(orig, "I", last + 8)
    lname = orig[strings + lname:orig.index(b"\0", strings + lname)].decode()
    assert records + L.size[SEC["records"]] < hsec

    def trailing(b):
        put(b, "I", last + 16, get(orig, "I", last + 16) + 1)
        put(b, "Q", L.entry[SEC["records"]] + 16, L.size[SEC["records"]] + 1)
    case("record-trailing", "record of '%s' has 1 bytes after its last context"
         % lname, trailing)


if __name__ == "__main__":
    main()
