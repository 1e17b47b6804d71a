#!/bin/sh
# Sampled profiles (issue 15): libmemprof with sample_interval=R, end to
# end.  A program of known allocations (tests/cli/src/sampled_sites.c),
# run with 150 seeds at R = 4096: the estimates are unbiased and the 95 %
# intervals cover the truth in 93-97 % of (site, seed) pairs
# (sampling_check.py).  Then: llvm-profdata-19 reads a sampled profile;
# merge carries the samples into an indexed profile (version 13) whose
# show gives the raw profile's intervals, exactly through trees of merges
# and from the older version 12's binary64 sums; inputs at different
# intervals merge; a seed makes a run reproducible; fork gives the child new draws;
# an exact profile stays version 10; diff counts only significant changes.
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

[ -f "$BUILD/libmemprof.a" ] || make --no-print-directory -s BUILD="$BUILD" "$BUILD/libmemprof.a" >/dev/null
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/sites" tests/cli/src/sampled_sites.c \
	"$BUILD/libmemprof.a" -pthread || { notok "build sampled_sites.c"; exit 1; }

# 150 seeds; one show of all of them.
mkdir "$tmp/runs"
i=1
while [ $i -le 150 ]; do
	MEMPROF_OPTIONS="log_path=$tmp/runs/p$i:sample_interval=4096:sample_seed=$i" \
		"$tmp/sites" >"$tmp/truth"
	i=$((i + 1))
done
"$MD" show --format=json --binary="$tmp/sites" "$tmp"/runs/p* >"$tmp/all.json" 2>"$tmp/err" ||
	notok "show of 150 sampled profiles: $(head -c 300 "$tmp/err")"
python3 tests/cli/sampling_check.py "$tmp/truth" "$tmp/all.json"

one=$(ls "$tmp"/runs/p1.* | head -n 1)
two=$(ls "$tmp"/runs/p2.* | head -n 1)

# llvm-profdata-19 skips the block: the MIBs it reads are the estimates.
if command -v llvm-profdata-19 >/dev/null; then
	if llvm-profdata-19 show --memory --profiled-binary="$tmp/sites" "$one" >"$tmp/llvm.txt" 2>&1 &&
	   llvm-profdata-19 merge --profiled-binary="$tmp/sites" -o "$tmp/llvm.profdata" "$one" 2>>"$tmp/llvm.txt"; then
		want=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(sum(c["mib"]["AllocCount"] for c in d["contexts"] if c["input"] == 0))' "$tmp/all.json")
		got=$(awk '/AllocCount:/ { s += $2 } END { print s + 0 }' "$tmp/llvm.txt")
		if [ "$want" = "$got" ]; then
			ok "llvm-profdata-19 show --memory and merge read a sampled profile (AllocCount $got, the estimates)"
		else
			notok "llvm-profdata-19 AllocCount $got, ours $want"
		fi
	else
		notok "llvm-profdata-19 rejects a sampled profile: $(head -c 300 "$tmp/llvm.txt")"
	fi
fi

# show says it is sampled, and the summary has intervals.
"$MD" show --binary="$tmp/sites" "$one" >"$tmp/one.txt" 2>&1
if grep -q 'sampled (1 byte in 4096; ' "$tmp/one.txt" &&
   grep -Eq '^    TotalSize: [0-9]+ \(95% CI [0-9]+\.\.[0-9]+, [0-9]+ samples\)' "$tmp/one.txt"; then
	ok "show marks the input as sampled and prints each estimate with its 95% interval"
else
	notok "show's text of a sampled profile: $(grep -m3 -e sampled -e CI "$tmp/one.txt")"
fi

# The whole profile's interval is of the bytes only (objects far smaller
# than R can go unseen: nothing bounds their count), and it covers the
# exact run's bytes for most seeds (fixed seeds: a fixed outcome).
MEMPROF_OPTIONS="log_path=$tmp/exact" "$tmp/sites" >/dev/null
for f in "$tmp"/runs/p*; do
	"$MD" show --format=json --no-symbol-cache "$f" 2>/dev/null
	echo
done >"$tmp/each.json"
"$MD" show --format=json "$tmp"/exact.* 2>/dev/null | python3 -c '
import json, sys
exact = json.load(sys.stdin)["summary"]["TotalSize"]
text, docs, at = open(sys.argv[1]).read(), [], 0
while text[at:].strip():
    doc, at = json.JSONDecoder().raw_decode(text, len(text) - len(text[at:].lstrip()))
    docs.append(doc)
keys = set(tuple(sorted(d["summary"]["estimates"])) for d in docs)
assert keys == {("TotalSize",)}, keys
cover = sum(1 for d in docs
            if d["summary"]["estimates"]["TotalSize"]["ci95"][0] <= exact <=
               d["summary"]["estimates"]["TotalSize"]["ci95"][1])
print("%d %d" % (cover, len(docs)))
assert len(docs) == 150 and cover >= 0.9 * len(docs), (cover, len(docs))
' "$tmp/each.json" >"$tmp/cover" 2>&1
if [ $? -eq 0 ]; then
	ok "the summary's only interval is TotalSize's, covering the exact run's bytes for $(cut -d" " -f1 "$tmp/cover") of 150 seeds"
else
	notok "summary intervals: $(tail -n 3 "$tmp/cover")"
fi

# merge carries the sample entries: the indexed file's intervals are the
# raw file's, and its version is 13.
"$MD" merge --no-progress -o "$tmp/one.memprof" --binary="$tmp/sites" "$one" 2>/dev/null
"$MD" show --format=json --binary="$tmp/sites" "$one" >"$tmp/a.json"
"$MD" show --format=json "$tmp/one.memprof" >"$tmp/b.json"
est() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
rows = []
for c in d["contexts"]:
    site = next((f["function"] for f in c["frames"] if f["function"].startswith("site_")), None)
    if site and "estimates" in c:
        e = c["estimates"]
        rows.append("%s %s %s %s" % (site, e["TotalSize"]["estimate"], e["TotalSize"]["ci95"], e["AllocCount"]["samples"]))
print("\n".join(sorted(rows)))' "$1"
}
est "$tmp/a.json" >"$tmp/a.est"
est "$tmp/b.json" >"$tmp/b.est"
ver=$(od -A n -t u4 -j 8 -N 4 "$tmp/one.memprof" | tr -d ' ')
if [ -s "$tmp/a.est" ] && cmp -s "$tmp/a.est" "$tmp/b.est" && [ "$ver" = 13 ]; then
	ok "merge keeps the samples: the indexed profile (version $ver) shows the raw profile's intervals"
else
	notok "raw vs indexed estimates (version $ver): $(diff "$tmp/a.est" "$tmp/b.est" | head -n 4)"
fi

# A tree of merges gives the bytes of one flat merge: the sample sums are
# kept exact in the file (binary64, in versions 11 and 12, rounded sums
# past 2^33, and a merged file merged again gave other bytes; a weight
# makes this program's sums that large).
three=$(ls "$tmp"/runs/p3.* | head -n 1)
w="--weight=1000003,$one"
"$MD" merge --no-progress -o "$tmp/flat.memprof" --binary="$tmp/sites" "$w" "$two" "$three" 2>/dev/null
"$MD" merge --no-progress -o "$tmp/ab.memprof" --binary="$tmp/sites" "$w" "$two" 2>/dev/null
"$MD" merge --no-progress -o "$tmp/tree.memprof" --binary="$tmp/sites" "$tmp/ab.memprof" "$three" 2>/dev/null
"$MD" merge --no-progress -o "$tmp/bc.memprof" --binary="$tmp/sites" "$three" "$two" 2>/dev/null
"$MD" merge --no-progress -o "$tmp/tree2.memprof" --binary="$tmp/sites" "$tmp/bc.memprof" "$w" 2>/dev/null
if [ -s "$tmp/flat.memprof" ] && cmp -s "$tmp/flat.memprof" "$tmp/tree.memprof" &&
   cmp -s "$tmp/flat.memprof" "$tmp/tree2.memprof"; then
	ok "sampled profiles, one weighted: (a+b)+c and (c+b)+a are the bytes of a+b+c"
else
	notok "sampled profiles: a tree of merges gives other bytes than a flat one"
fi

# A version 12 file (binary64 sums, tests/fixtures/sampled.v12.memprof)
# reads with its intervals, and merges into version 13 with the same ones.
"$MD" merge --no-progress -o "$tmp/from12.memprof" tests/fixtures/sampled.v12.memprof 2>/dev/null
"$MD" show --format=json tests/fixtures/sampled.v12.memprof >"$tmp/v12.json"
"$MD" show --format=json "$tmp/from12.memprof" >"$tmp/v13.json"
v13=$(od -A n -t u4 -j 8 -N 4 "$tmp/from12.memprof" | tr -d ' ')
if python3 - "$tmp/v12.json" "$tmp/v13.json" <<'PY' && [ "$v13" = 13 ]
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert len(a["contexts"]) == 13 and all("estimates" in c for c in a["contexts"])
assert [c["estimates"] for c in a["contexts"]] == [c["estimates"] for c in b["contexts"]]
assert a["summary"] == b["summary"]
PY
then
	ok "a version 12 file's binary64 sample sums read, and merge into version 13 unchanged"
else
	notok "version 12 sampled file: version $v13"
fi

# Two runs at the same interval merge into one entry per context (sums of
# samples); a run at another interval stays apart but its estimates add.
MEMPROF_OPTIONS="log_path=$tmp/r8k:sample_interval=8192:sample_seed=7" "$tmp/sites" >/dev/null
r8k=$(ls "$tmp"/r8k.* | head -n 1)
"$MD" merge --no-progress -o "$tmp/mix.memprof" --binary="$tmp/sites" "$one" "$two" "$r8k" 2>/dev/null
"$MD" show --format=json "$tmp/mix.memprof" >"$tmp/mix.json"
python3 - "$tmp/mix.json" "$tmp"/runs/p1.* "$tmp"/runs/p2.* "$r8k" "$MD" "$tmp/sites" >"$tmp/mixcheck" 2>&1 <<'PY'
import json, subprocess, sys
mix, a, b, c, md, sites = sys.argv[1:7]
def load(path, extra=()):
    out = subprocess.run([md, "show", "--format=json", *extra, path], capture_output=True, check=True).stdout
    return json.loads(out)
def by_site(d):
    r = {}
    for ctx in d["contexts"]:
        s = next((f["function"] for f in ctx["frames"] if f["function"].startswith("site_")), None)
        if s:
            r[s] = ctx
    return r
m = by_site(json.load(open(mix)))
parts = [by_site(load(p, ["--binary=" + sites])) for p in (a, b, c)]
bad = []
for s, ctx in m.items():
    size = sum(p[s]["mib"]["TotalSize"] for p in parts if s in p)
    n = sum(p[s]["estimates"]["TotalSize"]["samples"] for p in parts if s in p)
    if ctx["mib"]["TotalSize"] != size or ctx["estimates"]["TotalSize"]["samples"] != n:
        bad.append(s)
print(" ".join(bad))
sys.exit(1 if bad else 0)
PY
if [ $? -eq 0 ]; then
	ok "merged estimates and sample counts are the inputs' sums, site by site"
else
	notok "merged sums differ for: $(cat "$tmp/mixcheck" | tail -n 3)"
fi

# Deterministic output: any order of inputs, any number of threads.
"$MD" merge --no-progress -j 2 -o "$tmp/o1.memprof" "$tmp"/runs/p1.* "$tmp"/runs/p2.* \
	"$tmp"/runs/p3.* "$r8k" 2>/dev/null
"$MD" merge --no-progress -j 1 -o "$tmp/o2.memprof" "$r8k" "$tmp"/runs/p3.* \
	"$tmp"/runs/p2.* "$tmp"/runs/p1.* 2>/dev/null
"$MD" merge --no-progress -o "$tmp/o3.memprof" "$tmp/o1.memprof" 2>/dev/null
if cmp -s "$tmp/o1.memprof" "$tmp/o2.memprof" && cmp -s "$tmp/o1.memprof" "$tmp/o3.memprof"; then
	ok "sampled inputs merge to the same bytes in any order, with -j 1 or 2, and again from the merged file"
else
	notok "merge of sampled inputs depends on order or threads"
fi

# fork: the parent's draws go on as without it, the child's are new.
MEMPROF_OPTIONS="log_path=$tmp/fork:sample_interval=4096:sample_seed=1" "$tmp/sites" 1 fork >/dev/null
nf=0
for f in "$tmp"/fork.*; do
	"$MD" show --format=json --binary="$tmp/sites" "$f" >"$tmp/f.json" 2>/dev/null
	est "$tmp/f.json" >"$tmp/f$nf.est"
	nf=$((nf + 1))
done
if [ $nf = 2 ] && { cmp -s "$tmp/f0.est" "$tmp/a.est" || cmp -s "$tmp/f1.est" "$tmp/a.est"; } &&
   ! cmp -s "$tmp/f0.est" "$tmp/f1.est"; then
	ok "fork: the parent samples as an unforked run with its seed, the child draws anew"
else
	notok "fork: $nf profiles; parent/child estimates $(cmp "$tmp/f0.est" "$tmp/f1.est" 2>&1)"
fi

# The same seed draws the same objects: the sample blocks are equal.
MEMPROF_OPTIONS="log_path=$tmp/again:sample_interval=4096:sample_seed=1" "$tmp/sites" >/dev/null
again=$(ls "$tmp"/again.* | head -n 1)
"$MD" show --format=json --binary="$tmp/sites" "$again" >"$tmp/c.json"
est "$tmp/c.json" >"$tmp/c.est"
if cmp -s "$tmp/a.est" "$tmp/c.est"; then
	ok "sample_seed=1 twice: the same estimates and sample counts"
else
	notok "sample_seed does not reproduce: $(diff "$tmp/a.est" "$tmp/c.est" | head -n 4)"
fi

# A profile with sampling off has no block and says it is exact.
MEMPROF_OPTIONS="log_path=$tmp/exact" "$tmp/sites" >/dev/null
exact=$(ls "$tmp"/exact.* | head -n 1)
"$MD" merge --no-progress -o "$tmp/exact.memprof" --binary="$tmp/sites" "$exact" 2>/dev/null
ver=$(od -A n -t u4 -j 8 -N 4 "$tmp/exact.memprof" | tr -d ' ')
if "$MD" show --format=json --binary="$tmp/sites" "$exact" |
	python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d["summary"]["sampled"] or any("estimates" in c for c in d["contexts"]))' &&
   { [ "$ver" = 10 ] || [ "$ver" = 12 ]; }; then
	ok "an exact profile has no estimates, and merges to version $ver (10 as before, 12 with frames of files found by build id), not 13"
else
	notok "exact profile: version $ver or estimates shown"
fi

# diff: two seeds of one program differ only by chance, and a gate on
# sampled profiles counts significant changes only; three times the work
# is significant.
"$MD" diff --binary="$tmp/sites" --per-context --fail-if=bytes:+1% --fail-if=allocs:+1% \
	"$one" "$two" >"$tmp/d.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q 'sampled: only changes outside the 95% intervals count' "$tmp/d.txt" &&
   grep -q 'within the 95% intervals' "$tmp/d.txt"; then
	ok "diff of two seeds: changes within the intervals, gates pass (exit 0) and say they count significant changes only"
else
	notok "diff of two seeds: exit $rc; $(grep -m2 -e CROSSED -e gates "$tmp/d.txt")"
fi
MEMPROF_OPTIONS="log_path=$tmp/x3:sample_interval=4096:sample_seed=5" "$tmp/sites" 3 >/dev/null
x3=$(ls "$tmp"/x3.* | head -n 1)
"$MD" diff --format=json --binary="$tmp/sites" --fail-if=bytes:+50% "$one" "$x3" >"$tmp/d3.json" 2>"$tmp/err"
rc=$?
if [ $rc = 3 ] && python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["sampled"] and d["totals"]["TotalSize"]["significant"]
assert d["gates"][0]["profile_crossed"] and d["gates"][0]["significant_only"]
rows = [r for r in d["rows"] if r["metrics"]["TotalSize"]["significant"]]
assert len(rows) >= 8, len(rows)' "$tmp/d3.json"; then
	ok "diff of 1x against 3x the allocations: significant, the gate fails (exit 3)"
else
	notok "diff 1x vs 3x: exit $rc $(head -c 200 "$tmp/err")"
fi

# Hostile sample blocks: each refused with a message naming the file.
python3 - "$one" "$tmp" <<'PY'
import struct, sys
src, out = sys.argv[1], sys.argv[2]
d = bytearray(open(src, "rb").read())
assert struct.unpack_from("<Q", d, 48)[0] == 0x31706d6173706d81
k = struct.unpack_from("<Q", d, 72)[0]
first = 48 + 40 + 8 * k          # the first entry
def save(name, b):
    open(out + "/bad-" + name, "wb").write(b)
b = bytearray(d); struct.pack_into("<Q", b, 56, 1 << 40); save("size", b)
b = bytearray(d); struct.pack_into("<Q", b, first + 16, 0); save("count", b)
b = bytearray(d); struct.pack_into("<Q", b, first, 0xdeadbeef); save("stack", b)
b = bytearray(d); struct.pack_into("<d", b, first + 32 + 8 * k, float("nan")); save("nan", b)
b = bytearray(d); struct.pack_into("<Q", b, 72, 1000); save("fields", b)
PY
for bad in size count stack nan fields; do
	"$MD" show "$tmp/bad-$bad" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ $rc = 1 ] && grep -q "bad-$bad" "$tmp/err" && grep -qi "sample" "$tmp/err"; then
		ok "a sample block with a bad $bad is refused: $(head -n 1 "$tmp/err" | cut -c1-110)"
	else
		notok "bad $bad: exit $rc, $(head -n 1 "$tmp/err")"
	fi
done
