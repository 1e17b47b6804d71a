#!/bin/sh
# merge --format=pprof and --format=folded, read by the tools people use:
# go tool pprof (Debian golang-go, offline, -symbolize=none, HOME in a
# scratch directory) lists exactly our contexts, each sample's values the
# MIB fields of its context in show --format=json, and -top's totals
# show's summary; its web UI serves the flame graph; folded stacks hold
# the same bytes; exports do not depend on input order or -j.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
BUILDABS=$(cd "$BUILD" && pwd)
ROOT=$(pwd)
FX=$(cd tests/fixtures && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need go python3
export HOME="$tmp/home"
mkdir -p "$HOME"
cd "$tmp" || exit 1

# The samples of pprof -raw: "allocs lifetime accesses bytes", sorted.
samples() {
	go tool pprof -raw -symbolize=none "$1" 2>/dev/null | awk '
		/^Samples:/ { s = 1; next }
		/^Locations/ { s = 0 }
		s && /^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ {
			sub(":", "", $4); print $1, $2, $3, $4 }' | sort
}
# The same four MIB fields of every context show prints, sorted.
mibs() {
	python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["contexts"]:
    m = c["mib"]
    print(m["AllocCount"], m["TotalLifetime"], m["TotalAccessCount"], m["TotalSize"])' "$1" | sort
}

# The benchmark workload (bench/gen/gen.py, the merge preset), four runs
# of it, generated once into the build directory and reused.
WORK=$BUILDABS/workload
need clang-19
python3 "$ROOT/bench/gen/gen.py" --preset merge --runs 4 --work "$WORK" \
	>/dev/null 2>"$tmp/gen.err" || { notok "bench/gen/gen.py: $(tail -n 3 "$tmp/gen.err")"; }
W=$WORK/merge

# Every fixture (raw profiles of each version, the indexed one) and the
# workload: "NAME ARGUMENTS...", the inputs among the arguments.
while read -r n args; do
	[ -n "$n" ] || continue
	# shellcheck disable=SC2086
	set -- $args
	"$MD" merge --no-progress -o m.memprof "$@" 2>/dev/null
	"$MD" merge --no-progress --format=pprof -o p.pb.gz "$@" 2>err ||
		{ notok "pprof export of $n: $(cat err)"; continue; }
	"$MD" show --format=json m.memprof >m.json
	samples p.pb.gz >got
	mibs m.json >want
	if [ -s want ] && cmp -s got want; then
		ok "pprof -raw of $n's export: $(wc -l <want) samples, each with its context's four MIB values"
	else
		notok "pprof samples of $n differ: $(diff want got | head -c 300)"
	fi
	bad=0
	for t in alloc_objects:AllocCount:count total_lifetime:TotalLifetime:ms \
		 access_count:TotalAccessCount:count alloc_space:TotalSize:byte; do
		idx=${t%%:*} rest=${t#*:}
		field=${rest%%:*} unit=${rest#*:}
		total=$(go tool pprof -top -sample_index=$idx -symbolize=none -unit=$unit \
			p.pb.gz 2>/dev/null | sed -n 's/.* of \([0-9.]*\)[a-zA-Z]* total.*/\1/p')
		want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"][sys.argv[2]])' m.json "$field")
		[ "$want" = 0 ] && continue	# pprof prints no total for 0
		[ "$total" = "$want" ] || { bad=1; echo "# $n $idx: pprof $total, show $want"; }
	done
	[ $bad -eq 0 ] && ok "pprof -top totals of $n's export equal show's summary"
	"$MD" merge --no-progress --format=folded -o f.folded "$@" 2>/dev/null
	sum=$(awk '{ s += $NF } END { print s + 0 }' f.folded)
	want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["TotalSize"])' m.json)
	if [ "$sum" = "$want" ] && ! grep -qv ' [0-9][0-9]*$' f.folded; then
		ok "folded stacks of $n: one 'a;b;c N' line per context, bytes summing to show's TotalSize"
	else
		notok "folded stacks of $n: $sum bytes, show says $want"
	fi
done <<EOF
basic.pie.v4.profraw --binary=$FX/basic.pie --binary=$FX/libfixture.so $FX/basic.pie.v4.profraw
basic.pie.v4.profraw.zst --binary=$FX/basic.pie --binary=$FX/libfixture.so $FX/basic.pie.v4.profraw.zst
basic.nopie.v4.profraw --binary=$FX/basic.nopie --binary=$FX/libfixture.so $FX/basic.nopie.v4.profraw
basic.hist.v4.profraw --binary=$FX/basic.hist --binary=$FX/libfixture-hist.so $FX/basic.hist.v4.profraw
basic.clang16.v2.profraw --binary=$FX/basic.clang16 --binary=$FX/libfixture-clang16.so $FX/basic.clang16.v2.profraw
basic.clang14.v1.profraw --binary=$FX/basic.clang14 --binary=$FX/libfixture-clang14.so $FX/basic.clang14.v1.profraw
cxx.v4.profraw --binary=$FX/cxx.pie $FX/cxx.v4.profraw
dump2.v4.profraw --binary=$FX/dump2 $FX/dump2.v4.profraw
basic.memprof $FX/basic.memprof
workload(4-runs) --binary=$W/workload $W/profiles/001.profraw $W/profiles/002.profraw $W/profiles/003.profraw $W/profiles/004.profraw
EOF

# Labels: every sample has alloc_type (hot, cold or notcold) and the
# average object size TotalSize / AllocCount in bytes.
"$MD" merge --no-progress --format=pprof -o c.pb.gz --binary="$FX/cxx.pie" \
	"$FX/cxx.v4.profraw" 2>/dev/null
go tool pprof -raw -symbolize=none c.pb.gz 2>/dev/null | awk '
	/^Samples:/ { s = 1; next }
	/^Locations/ { s = 0 }
	s && /^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ { n++; a = $1; b = $4; sub(":", "", b) }
	s && /alloc_type:\[(hot|cold|notcold)\]/ { t++ }
	s && /bytes:\[/ { v = $0; sub(/.*bytes:\[/, "", v); sub(/ .*/, "", v)
		if (v == int(b / a)) m++ }
	END { print n, t, m }' >labels
if [ "$(cat labels)" = "4 4 4" ]; then
	ok "pprof labels: alloc_type and the average size in bytes on every sample"
else
	notok "pprof labels (samples, alloc_type, size): $(cat labels)"
fi

# Mappings: the program first (pprof's header names it), a module the
# symbolizer knew named by its path and marked symbolized (a stripped
# program's frames stay addresses there: pprof shows "[cxx.stripped]" and
# does not look again), a module nothing here knew by its build id, for
# PPROF_BINARY_PATH.
go tool pprof -top -symbolize=none c.pb.gz 2>/dev/null | sed -n 1p >head
go tool pprof -raw -symbolize=none c.pb.gz 2>/dev/null | sed -n '/^Mappings/{n;p;}' >map1
if [ "$(cat head)" = "File: cxx.pie" ] &&
   grep -q "^1: .*/cxx.pie [0-9a-f]\{40\} \[FN\]\[FL\]\[LN\]\[IN\]$" map1; then
	ok "pprof: the program is the first mapping, by path, symbolized ('File: cxx.pie')"
else
	notok "pprof's header and first mapping: $(cat head) / $(cat map1)"
fi
cp "$FX/cxx.pie" cxx.stripped && strip --strip-all cxx.stripped
"$MD" merge --no-progress --format=pprof -o s.pb.gz --binary=cxx.stripped \
	"$FX/cxx.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=pprof -o n.pb.gz "$FX/cxx.v4.profraw" 2>/dev/null
go tool pprof -top -symbolize=none s.pb.gz 2>/dev/null | grep -c '  \[cxx.stripped\]$' >stripped
go tool pprof -raw -symbolize=none s.pb.gz 2>/dev/null | sed -n '/^Mappings/{n;p;}' >map1
if [ "$(cat stripped)" = 1 ] &&
   grep -q "^1: .* cxx.stripped [0-9a-f]\{40\} \[FN\]\[FL\]\[LN\]\[IN\]$" map1; then
	ok "pprof: a stripped program's frames in its mapping, by name, not looked up again"
else
	notok "pprof of a stripped program: $(cat stripped) [cxx.stripped] rows, mapping $(cat map1)"
fi
# The program is the executable the raw profiles were of (their main
# segment's build id), whatever the order of the --binary options (a
# helper's check of Graphviz, whose dot maps libraries and plugins, named
# the first --binary, a library), and found under --binary-dir by its own
# name, not by one of the links to it (Graphviz installs neato and
# patchwork as links to dot): the walk takes regular files first.
mkdir -p bd && cp "$FX/basic.pie" "$FX/libfixture.so" bd/ &&
	for i in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19; do
		ln -sf basic.pie "bd/link$i"
	done
"$MD" merge --no-progress --format=pprof -o o1.pb.gz --binary="$FX/libfixture.so" \
	--binary="$FX/basic.pie" "$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=pprof -o o2.pb.gz --binary-dir=bd \
	"$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" show --binary-dir=bd "$FX/basic.pie.v4.profraw" 2>/dev/null | grep -c "bd/basic.pie:" >dirname
o1=$(go tool pprof -top -symbolize=none o1.pb.gz 2>/dev/null | sed -n 1p)
o2=$(go tool pprof -top -symbolize=none o2.pb.gz 2>/dev/null | sed -n 1p)
if [ "$o1" = "File: basic.pie" ] && [ "$o2" = "File: basic.pie" ] && [ "$(cat dirname)" = 1 ]; then
	ok "pprof: the raw profiles' executable is the program, given after a library or found under --binary-dir past 20 links to it"
else
	notok "pprof's program: '$o1' (library first), '$o2' (--binary-dir); show named bd/basic.pie $(cat dirname) times"
fi
# From an indexed input (a helper's check of PostgreSQL): no raw stack
# is looked up, and pprof's header named a library found by build id
# for the indexed file's unsymbolized frames (libstdc++ here, the C
# library's debug file there), with --binary too.  Now the --binary; and
# without one, no file rather than a library.
"$MD" merge --no-progress -o i.memprof --no-system-libraries --binary="$FX/cxx.pie" \
	"$FX/cxx.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=pprof -o i1.pb.gz --binary="$FX/cxx.pie" i.memprof 2>/dev/null
"$MD" merge --no-progress --format=pprof -o i0.pb.gz i.memprof 2>/dev/null
h1=$(go tool pprof -top -symbolize=none i1.pb.gz 2>/dev/null | sed -n 1p)
h0=$(go tool pprof -top -symbolize=none i0.pb.gz 2>/dev/null | sed -n 1p)
if [ "$h1" = "File: cxx.pie" ] && [ "$h0" = "Type: alloc_space" ]; then
	ok "pprof of an indexed input: the --binary is the program; without one, no library passes for it"
else
	notok "pprof header of an indexed input: '$h1' / '$h0'"
fi
go tool pprof -raw -symbolize=none n.pb.gz 2>/dev/null | sed -n '/^Mappings/{n;p;}' >map1
if grep -q "^1: 0x0/0x0/0x0 \([0-9a-f]\{40\}\) \1 *$" map1; then
	ok "pprof: a module no binary names is its build id, left for pprof to symbolize"
else
	notok "pprof mapping of an unknown module: $(cat map1)"
fi

# Each location's lines carry the frames' columns (Line.column, field 3):
# the (function, line, column) of every line in the file are those show
# prints for the same profile.
"$MD" show --format=json --binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" >c.json 2>/dev/null
if python3 - c.pb.gz c.json <<'PY' 2>err
import gzip, json, sys

def fields(b):
    i = 0
    while i < len(b):
        key = v = 0
        shift = 0
        while True:
            x = b[i]; i += 1; key |= (x & 0x7f) << shift; shift += 7
            if x < 0x80: break
        f, t = key >> 3, key & 7
        if t == 0:
            shift = 0
            while True:
                x = b[i]; i += 1; v |= (x & 0x7f) << shift; shift += 7
                if x < 0x80: break
            yield f, v
        elif t == 2:
            n = shift = 0
            while True:
                x = b[i]; i += 1; n |= (x & 0x7f) << shift; shift += 7
                if x < 0x80: break
            yield f, b[i:i + n]; i += n
        else:
            raise ValueError("wire type %d" % t)

prof = gzip.open(sys.argv[1]).read()
strings, funcs, lines = [], {}, set()
for f, v in fields(prof):
    if f == 6:
        strings.append(v.decode())
    elif f == 5:
        d = dict(fields(v)); funcs[d[1]] = d.get(3, d.get(2, 0))  # system_name: the linkage name
    elif f == 4:
        for g, w in fields(v):
            if g == 4:
                d = dict(fields(w)); lines.add((d[1], d.get(2, 0), d.get(3, 0)))
got = {(strings[funcs[fid]], ln, col) for fid, ln, col in lines}
want = {(fr["function"], fr["line"], fr["column"])
        for c in json.load(open(sys.argv[2]))["contexts"] for fr in c["frames"]
        if fr.get("function") and fr.get("line")}
assert got == want, (sorted(got - want), sorted(want - got))
assert any(col for _, _, col in got), got
PY
then
	ok "pprof lines carry the frames' columns, as show prints them"
else
	notok "pprof columns: $(tail -c 400 err)"
fi

# --value picks the field; the leaf is last.
"$MD" merge --no-progress --format=folded --value=allocs -o a.folded \
	--binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" 2>/dev/null
if grep -qx '__libc_start_call_main;main;scalar_new() 11' a.folded; then
	ok "--format=folded --value=allocs: outermost first, AllocCount as the value"
else
	notok "folded --value=allocs: $(head -n 3 a.folded)"
fi

# Byte-identical whatever the input order and -j.
"$MD" merge --no-progress --format=pprof -j 1 -o o1.pb.gz --binary="$FX/basic.pie" \
	--binary="$FX/cxx.pie" "$FX/basic.pie.v4.profraw" "$FX/cxx.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=pprof -j 2 -o o2.pb.gz --binary="$FX/basic.pie" \
	--binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" "$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=folded -j 1 -o o1.folded --binary="$FX/basic.pie" \
	--binary="$FX/cxx.pie" "$FX/basic.pie.v4.profraw" "$FX/cxx.v4.profraw" 2>/dev/null
"$MD" merge --no-progress --format=folded -j 2 -o o2.folded --binary="$FX/basic.pie" \
	--binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" "$FX/basic.pie.v4.profraw" 2>/dev/null
if [ -s o1.pb.gz ] && cmp -s o1.pb.gz o2.pb.gz && [ -s o1.folded ] &&
   cmp -s o1.folded o2.folded; then
	ok "the pprof and folded exports are the same bytes whatever the input order and -j"
else
	notok "the pprof export depends on input order or -j"
fi

# The web UI serves our profile's flame graph (loopback, a bounded wait).
need curl
port=$((20000 + $$ % 20000))
go tool pprof -symbolize=none -no_browser -http=127.0.0.1:$port o1.pb.gz \
	>http.log 2>&1 &
pid=$!
got=""
for i in $(seq 1 60); do
	if curl -sf "http://127.0.0.1:$port/ui/flamegraph" -o fg.html 2>/dev/null; then
		got=yes
		break
	fi
	sleep 0.5
done
kill $pid 2>/dev/null
wait $pid 2>/dev/null
if [ -n "$got" ] && grep -q 'scalar_new' fg.html; then
	ok "go tool pprof -http serves the flame graph of our export"
else
	notok "pprof web UI: $(tail -n 3 http.log)"
fi
