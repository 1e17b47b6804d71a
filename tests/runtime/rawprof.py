#!/usr/bin/env python3
"""rawprof.py - a strict reader of MemProf raw profiles, version 4, for the
runtime tests; independent of memprof-data's reader.

The MIB field list is read from include/memprof/raw_format.h (RAW_MIB_FIELDS), so
the offsets are the format facts the runtime was written against.  Every
invariant compiler-rt's writer keeps is checked: header offsets follow from
the section sizes (segments 64 bytes each, MIB records 8 + 144 + 8 per
histogram entry, stack entries 16 + 8 per PC), sections end where the next
begins, profiles end exactly at EOF, stack ids of both sections match.

    rawprof.py check FILE [--binary BIN] [--ours]
        validate; print one JSON line summarising each profile
    rawprof.py json FILE
        every profile decoded, as JSON

--ours adds what only our runtime promises: a histogram sums to
TotalAccessCount and is ceil(MaxSize / 8) entries long, and the stale
histogram pointer is 0.
"""
import json
import os
import re
import struct
import subprocess
import sys

SAMPLE_MAGIC = 0x31706d6173706d81  # raw_format.h, RAW_SAMPLE_MAGIC
HERE = os.path.dirname(os.path.abspath(__file__))
FORMAT_H = os.path.join(HERE, "..", "..", "include", "memprof", "raw_format.h")

MAGIC = 0xFF6D70726F667281
HEADER = 48
SEGMENT = 64
MIB_V4 = 144
HIST_PTR = 136


def mib_fields():
    text = open(FORMAT_H).read()
    body = text[text.index("#define RAW_MIB_FIELDS"):]
    fields = []
    for m in re.finditer(r"X\((\w+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\w+)\)", body):
        fields.append((m.group(1), int(m.group(3)), int(m.group(4))))
        if m.group(1) == "AccessHistogramSize":
            break
    return fields


FIELDS = mib_fields()


class Bad(Exception):
    pass


def u64(b, off):
    if off + 8 > len(b):
        raise Bad("read past end at offset %#x" % off)
    return struct.unpack_from("<Q", b, off)[0]


def decode_mib(b, off):
    m = {}
    for name, width, foff in FIELDS:
        m[name] = int.from_bytes(b[off + foff:off + foff + width], "little")
    m["_hist_ptr"] = u64(b, off + HIST_PTR)
    return m


def read(path):
    data = open(path, "rb").read()
    profiles = []
    pos = 0
    if not data:
        raise Bad("empty file")
    while pos < len(data):
        p = read_profile(data, pos)
        profiles.append(p)
        pos += p["total_size"]
    if pos != len(data):
        raise Bad("profiles end at %d, file has %d bytes" % (pos, len(data)))
    return profiles


def read_profile(data, base):
    if u64(data, base) != MAGIC:
        raise Bad("bad magic at %#x" % base)
    version = u64(data, base + 8)
    if version != 4:
        raise Bad("version %d, expected 4" % version)
    total, seg_off, mib_off, stk_off = (u64(data, base + 16 + 8 * i) for i in range(4))
    if total % 8 or total < HEADER or base + total > len(data):
        raise Bad("bad TotalSize %d" % total)
    b = data[base:base + total]
    samples = read_samples(b, seg_off)

    nseg = u64(b, seg_off)
    segments = []
    for i in range(nseg):
        o = seg_off + 8 + SEGMENT * i
        start, end, offset, idsize = (u64(b, o + 8 * k) for k in range(4))
        bid = b[o + 32:o + 64]
        if idsize > 32 or any(bid[idsize:]):
            raise Bad("segment %d: build id size %d, padding not zero" % (i, idsize))
        if not (offset <= start < end):
            raise Bad("segment %d: start %#x end %#x offset %#x" % (i, start, end, offset))
        segments.append({"start": start, "end": end, "offset": offset,
                         "build_id": bid[:idsize].hex()})
    if mib_off != seg_off + 8 + SEGMENT * nseg:
        raise Bad("MIBOffset %d, segments end at %d" % (mib_off, seg_off + 8 + SEGMENT * nseg))

    nmib = u64(b, mib_off)
    mibs = {}
    o = mib_off + 8
    for i in range(nmib):
        sid = u64(b, o)
        if o + 8 + MIB_V4 > len(b):
            raise Bad("MIB %d runs past the profile" % i)
        m = decode_mib(b, o + 8)
        o += 8 + MIB_V4
        n = m["AccessHistogramSize"]
        m["histogram"] = [u64(b, o + 8 * k) for k in range(n)]
        o += 8 * n
        if sid in mibs:
            raise Bad("stack id %d twice in the MIB section" % sid)
        mibs[sid] = m
    if (o + 7) // 8 * 8 != stk_off:
        raise Bad("StackOffset %d, MIB section ends at %d" % (stk_off, o))

    nstk = u64(b, stk_off)
    stacks = {}
    o = stk_off + 8
    for i in range(nstk):
        sid, n = u64(b, o), u64(b, o + 8)
        pcs = [u64(b, o + 16 + 8 * k) for k in range(n)]
        o += 16 + 8 * n
        if sid in stacks:
            raise Bad("stack id %d twice in the stack section" % sid)
        if n == 0 or 0 in pcs:
            raise Bad("stack %d: empty or zero PC" % sid)
        stacks[sid] = pcs
    if (o + 7) // 8 * 8 != total:
        raise Bad("TotalSize %d, stack section ends at %d" % (total, o))
    if set(mibs) != set(stacks):
        raise Bad("stack ids differ between the MIB and stack sections")
    for sid, entries in (samples or {}).items():
        if sid not in mibs:
            raise Bad("sample entry for stack id %d, which has no MIB" % sid)
        if sum(e["n"] for e in entries) > mibs[sid]["AllocCount"]:
            raise Bad("stack id %d: more samples than its estimated count" % sid)
    prof = {"total_size": total, "version": version, "segments": segments,
            "mibs": mibs, "stacks": stacks}
    if samples is not None:
        prof["samples"] = samples
    return prof


def read_samples(b, seg_off):
    """The sampled profile's block between the header and the segments
    (raw_format.h), or None; without it the segments start at 48."""
    if seg_off == HEADER:
        return None
    if seg_off < HEADER + 40 or u64(b, HEADER) != SAMPLE_MAGIC:
        raise Bad("SegmentOffset %d, expected 48 or a sample block" % seg_off)
    size, interval, k = u64(b, HEADER + 8), u64(b, HEADER + 16), u64(b, HEADER + 24)
    if HEADER + size != seg_off or k != 10:
        raise Bad("sample block of %d bytes, %d fields, segments at %d" % (size, k, seg_off))
    tags = [u64(b, HEADER + 32 + 8 * i) for i in range(k)]
    count = u64(b, HEADER + 32 + 8 * k)
    esize = 32 + 16 * k
    if 40 + 8 * k + count * esize != size:
        raise Bad("sample block: %d entries do not fill %d bytes" % (count, size))
    out = {}
    o = HEADER + 40 + 8 * k
    for _ in range(count):
        sid, r, n, u = (u64(b, o + 8 * i) for i in range(4))
        est = struct.unpack_from("<%dd" % k, b, o + 32)
        var = struct.unpack_from("<%dd" % k, b, o + 32 + 8 * k)
        if r == 0 or n == 0 or u == 0 or min(est + var) < 0:
            raise Bad("sample entry for stack %d: interval %d, n %d, u %d" % (sid, r, n, u))
        if any(e["interval"] == r for e in out.get(sid, [])):
            raise Bad("two sample entries for stack %d at interval %d" % (sid, r))
        out.setdefault(sid, []).append(
            {"interval": r, "n": n, "u": u, "interval_at_dump": interval,
             "est": dict(zip(tags, est)), "var": dict(zip(tags, var))})
        o += esize
    return out


def check_mib(sid, m, ours):
    def need(cond, what):
        if not cond:
            raise Bad("MIB of stack %d: %s (%s)" % (sid, what, json.dumps(
                {k: v for k, v in m.items() if k != "histogram"})))
    need(m["AllocCount"] >= 1, "AllocCount 0")
    for f in ("AccessCount", "Size", "Lifetime", "AccessDensity", "LifetimeAccessDensity"):
        need(m["Min" + f] <= m["Max" + f], "Min%s > Max%s" % (f, f))
        need(m["Total" + f] >= m["Max" + f], "Total%s < Max%s" % (f, f))
        need(m["Total" + f] <= m["Max" + f] * m["AllocCount"], "Total%s too big" % f)
    need(m["AllocTimestamp"] <= m["DeallocTimestamp"] or m["AllocCount"] > 1,
         "dealloc before alloc")
    need(m["NumSameAllocCpu"] < m["AllocCount"] and
         m["NumSameDeallocCpu"] < m["AllocCount"] and
         m["NumLifetimeOverlaps"] < m["AllocCount"], "a pair count >= AllocCount")
    if ours:
        need(m["NumMigratedCpu"] <= m["AllocCount"], "NumMigratedCpu > AllocCount")
        need(m["_hist_ptr"] == 0, "histogram pointer not 0")
        if m["AccessHistogramSize"]:
            need(m["AccessHistogramSize"] == (m["MaxSize"] + 7) // 8,
                 "histogram length is not ceil(MaxSize / 8)")
            need(sum(m["histogram"]) == m["TotalAccessCount"],
                 "histogram does not sum to TotalAccessCount")


def binary_facts(path):
    """The build id and the executable PT_LOAD's p_vaddr, from readelf."""
    notes = subprocess.run(["readelf", "-nW", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", notes)
    phdrs = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    vaddr = None
    for line in phdrs.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[-2]:
            vaddr = int(f[2], 16)
    return (m.group(1) if m else None), vaddr


def check(path, binary=None, ours=False):
    profiles = read(path)
    facts = binary_facts(binary) if binary else None
    for p in profiles:
        if not p["segments"]:
            raise Bad("no segments")
        for sid, m in p["mibs"].items():
            check_mib(sid, m, ours)
        if facts:
            bid, vaddr = facts
            s = p["segments"][0]
            if s["build_id"] != bid:
                raise Bad("first segment's build id %s is not %s's %s" % (s["build_id"], binary, bid))
            if s["start"] - s["offset"] != vaddr:
                raise Bad("first segment: start - offset = %#x, PT_LOAD p_vaddr %#x"
                          % (s["start"] - s["offset"], vaddr))
        if len(profiles) > 1 and p["segments"] != profiles[0]["segments"]:
            raise Bad("segments differ between the profiles of one file")
    return profiles


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "json"):
        sys.stderr.write(__doc__)
        return 2
    path = argv[2]
    binary = None
    if "--binary" in argv:
        binary = argv[argv.index("--binary") + 1]
    try:
        if argv[1] == "json":
            profs = read(path)
            for p in profs:
                p["mibs"] = {str(k): v for k, v in p["mibs"].items()}
                p["stacks"] = {str(k): v for k, v in p["stacks"].items()}
            json.dump(profs, sys.stdout)
            return 0
        profs = check(path, binary, "--ours" in argv)
    except (Bad, OSError) as e:
        print("rawprof.py: '%s': %s" % (path, e))
        return 1
    for p in profs:
        print(json.dumps({"size": p["total_size"], "segments": len(p["segments"]),
                          "mibs": len(p["mibs"]),
                          "allocs": sum(m["AllocCount"] for m in p["mibs"].values())}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
