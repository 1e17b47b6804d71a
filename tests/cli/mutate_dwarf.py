#!/usr/bin/env python3
"""Symbolize a real profile through many damaged copies of its binary.

    python3 tests/cli/mutate_dwarf.py MEMPROF_DATA BINARY COUNT SEED PROFILE...

Each copy of BINARY has a few bytes of one of its .debug_* sections
changed (bits flipped, bytes set to 0, 0x7f, 0x80 or 0xff, 32-bit words
made random: offsets, lengths and forms gone wrong), its build id note
untouched, so that the profile still names it.  `memprof-data show
--binary=COPY PROFILE...` must then exit 0 (what it could read, with a
warning for what it distrusts) or 1 (an error naming the file), within
20 seconds each, with no sanitizer report: never a signal, a hang, or
the shell's 127/126.  The copies are made from SEED, so a failure
reproduces: its seed and index are printed, and the copy kept under
the current directory.  Prints one line: "ok N" or the failures.
"""
import os
import random
import struct
import subprocess
import sys


def debug_sections(data):
    """(name, offset, size) of the ELF64 file's .debug_* sections."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("not an ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)

    def header(i):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
        return struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)

    strtab = header(shstrndx)[4]
    found = []
    for i in range(shnum):
        name_at, kind, _, _, offset, size = header(i)
        name = data[strtab + name_at:data.index(b"\0", strtab + name_at)]
        if name.startswith(b".debug") and kind != 8 and size:  # 8: NOBITS
            found.append((name.decode(), offset, size))
    return found


def damage(data, sections, rnd):
    b = bytearray(data)
    name, offset, size = rnd.choice(sections)
    kind = rnd.randrange(3)
    for _ in range(rnd.randint(1, 6)):
        at = offset + rnd.randrange(size)
        if kind == 0:
            b[at] ^= 1 << rnd.randrange(8)
        elif kind == 1:
            b[at] = rnd.choice((0, 0x7f, 0x80, 0xff))
        elif at + 4 <= offset + size:
            b[at:at + 4] = struct.pack("<I", rnd.getrandbits(32))
    return b, name


def main():
    md, binary, count, seed = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                               int(sys.argv[4]))
    profiles = sys.argv[5:]
    data = open(binary, "rb").read()
    sections = debug_sections(data)
    rnd = random.Random(seed)
    copy = os.path.basename(binary) + ".damaged"
    failures = []
    for i in range(count):
        damaged, section = damage(data, sections, rnd)
        with open(copy, "wb") as f:
            f.write(damaged)
        os.chmod(copy, 0o755)
        try:
            r = subprocess.run([md, "show", "--no-symbol-cache",
                                "--binary=" + copy] + profiles,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=20)
            rc, err = r.returncode, r.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, err = "a hang (20 s)", ""
        if rc not in (0, 1) or "runtime error" in err or "Sanitizer" in err:
            keep = "%s.%d.%d" % (copy, seed, i)
            os.replace(copy, keep)
            failures.append("seed %d copy %d (%s damaged, kept as %s): %s %s"
                            % (seed, i, section, keep, rc, err[-400:]))
    print("ok %d" % count if not failures else "\n".join(failures))


if __name__ == "__main__":
    main()
