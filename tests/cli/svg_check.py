#!/usr/bin/env python3
"""svg_check.py - what tests/cli/test_svg.sh asks of our flame graphs.

    svg_check.py layout FILE.svg          -> "FRAMES ROOT_VALUE"
    svg_check.py png FILE.png             -> "WIDTH HEIGHT PAINTED COLOURS"
    svg_check.py dom DUMP REGEX           -> "READY HIDDEN FULL_WIDTH MATCHED"

layout parses the SVG (it must be well-formed XML), checks that every
drawn frame lies within the frame below it and that children of one frame
do not overlap, and prints the frame count and the root's value (from its
tooltip).  png decodes a screenshot (8-bit RGB or RGBA, the PNG filters
by hand: no imaging library needed) and counts the pixels painted in
neither the background nor white, and their distinct colours.  dom reads
the DOM Chromium dumped after the script ran.
"""
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"


def layout(path):
    root = ET.parse(path).getroot()
    frames = root.find(SVG + "g[@id='frames']")
    boxes = []
    for g in frames.findall(SVG + "g"):
        r = g.find(SVG + "rect")
        title = g.find(SVG + "title").text
        boxes.append((int(g.get("data-d")), float(g.get("data-x")),
                      float(g.get("data-w")), float(r.get("y")), title))
    by_depth = {}
    for d, x, w, y, t in boxes:
        by_depth.setdefault(d, []).append((x, w, t))
    for d, row in by_depth.items():
        row.sort()
        for (x0, w0, t0), (x1, w1, t1) in zip(row, row[1:]):
            if x0 + w0 > x1 + 0.02:
                sys.exit("frames overlap at depth %d: %r and %r" % (d, t0, t1))
        if d == 0:
            continue
        below = by_depth.get(d - 1, [])
        for x, w, t in row:
            if not any(bx - 0.02 <= x and x + w <= bx + bw + 0.02
                       for bx, bw, _ in below):
                sys.exit("frame %r at depth %d stands on nothing" % (t, d))
    if not boxes:
        print(0, 0)
        return
    root_title = by_depth[0][0][2]
    value = re.search(r"\n(?:test )?([0-9,]+) ", root_title).group(1)
    print(len(boxes), value.replace(",", ""))


def png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6) and not interlace, "unexpected PNG"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    painted, colours, i = 0, set(), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for k in range(stride):
            a = line[k - bpp] if k >= bpp else 0
            b = prev[k]
            c = prev[k - bpp] if k >= bpp else 0
            if f == 1:
                line[k] = (line[k] + a) & 255
            elif f == 2:
                line[k] = (line[k] + b) & 255
            elif f == 3:
                line[k] = (line[k] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[k] = (line[k] + pred) & 255
        for k in range(0, stride, bpp):
            px = tuple(line[k:k + 3])
            if px not in ((248, 248, 244), (255, 255, 255)):
                painted += 1
                colours.add(px)
        prev = line
    print(w, h, painted, len(colours))


def dom(path, regex):
    text = open(path, encoding="utf-8", errors="replace").read()
    ready = re.search(r'data-ready="(\d+)"', text)
    hidden = text.count('class="hide"')
    full = 0
    for g in re.finditer(r'<g [^>]*><title>([^<]*)</title><rect ([^>]*)>', text):
        if re.search(regex, g.group(1).split("\n")[0]) and \
           'width="1180.00"' in g.group(2):
            full += 1
    matched = re.search(r"Matched: ([0-9.]+)%", text)
    print(ready.group(1) if ready else "none", hidden, full,
          matched.group(1) if matched else "none")


if __name__ == "__main__":
    {"layout": lambda: layout(sys.argv[2]), "png": lambda: png(sys.argv[2]),
     "dom": lambda: dom(sys.argv[2], sys.argv[3])}[sys.argv[1]]()
