#!/usr/bin/python3
"""Check show's text and YAML documents against its JSON document.

    show_formats.py DOC.json DOC.yaml DOC.txt NAME

The YAML must parse and hold the same contexts, frames and MIBs as the
JSON; the text must list the same contexts in the same order, each frame
as the JSON's frame string, and the same summary.  Prints one TAP line.
"""
import json
import sys

import yaml


def frame_text(f):
    if "function" in f:
        s = "%s %s:%d:%d" % (f.get("demangled") or f["function"] or "??",
                              f["file"] or "??", f["line"], f["column"])
        if f["discriminator"]:
            s += " [discriminator %d]" % f["discriminator"]
        if f["inlined"]:
            s += " (inlined)"
        return s
    if "build_id" in f:
        return "%s+%s" % (f["build_id"] or "?", f["offset"])
    return f["address"]


def main():
    doc = json.load(open(sys.argv[1]))
    ydoc = yaml.safe_load(open(sys.argv[2]))
    text = open(sys.argv[3]).read().split("\n")
    name = sys.argv[4]
    problems = []
    yc = ydoc.get("contexts") or []
    if len(yc) != len(doc["contexts"]):
        problems.append("YAML has %d contexts, JSON %d" % (len(yc), len(doc["contexts"])))
    for j, y in zip(doc["contexts"], yc):
        if y["id"] != j["id"] or y["mib"] != j["mib"]:
            problems.append("YAML context %s differs" % j["id"])
        if (y["frames"] or []) != j["frames"]:
            problems.append("YAML frames of context %s differ" % j["id"])
    for key in ("AllocCount", "TotalSize", "TotalAccessCount", "TotalLifetime"):
        if ydoc["summary"][key] != doc["summary"][key]:
            problems.append("YAML summary %s differs" % key)
        if "  %s: %d" % (key, doc["summary"][key]) not in text:
            problems.append("text summary lacks %s: %d" % (key, doc["summary"][key]))
    # Text: "  - id: N" per context in order, its frames after "    frames:".
    ids = [int(l.split(": ")[1]) for l in text if l.startswith("  - id: ")]
    if ids != [c["id"] for c in doc["contexts"]]:
        problems.append("text lists contexts %s, JSON %s" % (ids[:5], [c["id"] for c in doc["contexts"]][:5]))
    frames = [l[8:] for l in text if l.startswith("      - ")]
    want = [frame_text(f) for c in doc["contexts"] for f in c["frames"]]
    if frames != want:
        problems.append("text frames differ (%d vs %d)" % (len(frames), len(want)))
    if problems:
        print("not ok - show text/YAML of %s: %s" % (name, "; ".join(problems[:3])))
    else:
        print("ok - show text and YAML of %s hold the JSON's %d contexts and their frames"
              % (name, len(doc["contexts"])))


main()
