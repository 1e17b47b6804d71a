#!/bin/sh
# memprof-data show on every fixture: valid JSON, exit codes, error
# messages, and agreement with llvm-profdata-19 where it can read the file.
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
FX=tests/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

for f in "$FX"/*.profraw "$FX"/*.profraw.zst; do
	n=$(basename "$f")
	if "$MD" show --format=json "$f" >"$tmp/out.json" 2>"$tmp/err" &&
	   python3 -m json.tool "$tmp/out.json" >/dev/null 2>&1; then
		ok "show --format=json $n parses"
	else
		notok "show --format=json $n: $(cat "$tmp/err")"
	fi
	if "$MD" show --format=text "$f" >"$tmp/out.txt" 2>"$tmp/err" &&
	   "$MD" show --format=yaml "$f" >"$tmp/out.yaml" 2>>"$tmp/err"; then
		/usr/bin/python3 tests/cli/show_formats.py "$tmp/out.json" \
			"$tmp/out.yaml" "$tmp/out.txt" "$n"
	else
		notok "show --format=text/yaml $n: $(cat "$tmp/err")"
	fi
done
# The same with symbolized frames (C++ names demangled in text and YAML).
for case in "basic.pie.v4.profraw --binary=$FX/basic.pie --binary=$FX/libfixture.so" \
	    "cxx.v4.profraw --binary=$FX/cxx.pie" "dump2.v4.profraw --binary=$FX/dump2"; do
	set -- $case
	n=$1
	shift
	"$MD" show --format=json "$@" "$FX/$n" >"$tmp/out.json" 2>/dev/null
	"$MD" show --format=yaml "$@" "$FX/$n" >"$tmp/out.yaml" 2>/dev/null
	"$MD" show "$@" "$FX/$n" >"$tmp/out.txt" 2>/dev/null
	/usr/bin/python3 tests/cli/show_formats.py "$tmp/out.json" "$tmp/out.yaml" \
		"$tmp/out.txt" "$n with its binaries"
done

# The JSON document's shape (issue: schema memprof-data/show/2).
"$MD" show --format=json "$FX/basic.pie.v4.profraw" >"$tmp/s.json"
if python3 - "$tmp/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "memprof-data/show/2"
i = d["inputs"][0]
assert i["kind"] == "raw" and i["version"] == 4 and i["profiles"] == 1
s = d["segments"][0]
assert len(s["build_id"]) == 40 and s["start"].startswith("0x")
assert d["summary"]["contexts"] == len(d["contexts"])
c = d["contexts"][0]
assert c["mib"]["AllocCount"] == 1000 and c["mib"]["TotalSize"] == 100000
assert isinstance(c["histogram"], list)
assert all(f["address"].startswith("0x") for f in c["frames"])
assert sum(x["mib"]["AllocCount"] for x in d["contexts"]) == d["summary"]["AllocCount"]
PY
then ok "JSON document has the documented shape"; else notok "JSON shape"; fi

# --top and --sort.
n=$("$MD" show --format=json --top=2 --sort=bytes "$FX/cxx.v4.profraw" |
	python3 -c 'import json,sys; c=json.load(sys.stdin)["contexts"]; print(len(c), c[0]["mib"]["TotalSize"] >= c[1]["mib"]["TotalSize"])')
[ "$n" = "2 True" ] && ok "--top=2 --sort=bytes" || notok "--top/--sort gave '$n'"
# --top=N picks the first N of the whole order (a heap, not a sort of all;
# of an indexed input only N are kept): the same contexts in the same
# order, ties included, for every key, on a merge of several fixtures
# (contexts with equal keys from two inputs), and the rest of the document
# (the summary's totals of every context, the inputs' counts) the same.
"$MD" merge -o "$tmp/m.memprof" --binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" \
	"$FX/dump2.v4.profraw" "$FX/basic.hist.v4.profraw" 2>/dev/null
for key in allocs bytes accesses lifetime; do
	"$MD" show --format=json --sort=$key "$tmp/m.memprof" "$FX/cxx.v4.profraw" \
		>"$tmp/all.json" 2>/dev/null
	bad=
	for top in 1 2 3 5 8 13; do
		"$MD" show --format=json --sort=$key --top=$top "$tmp/m.memprof" \
			"$FX/cxx.v4.profraw" >"$tmp/top.json" 2>/dev/null
		python3 - "$tmp/all.json" "$tmp/top.json" $top <<'PY' || bad="$bad $top"
import json, sys
whole = json.load(open(sys.argv[1]))
top = json.load(open(sys.argv[2]))
a, t = whole.pop("contexts"), top.pop("contexts")
n = int(sys.argv[3])
key = lambda c: (c["input"], c["id"])
assert len(a) > 13, len(a)
assert [key(c) for c in t] == [key(c) for c in a[:n]], (t, a[:n])
assert top == whole, (top, whole)
assert whole["summary"]["contexts"] == len(a), whole["summary"]
PY
	done
	[ -z "$bad" ] && ok "--top=N is the head of the full order (--sort=$key)" ||
		notok "--top=N differs from the full order (--sort=$key) at:$bad"
done

# Usage errors exit 2, input errors exit 1, each naming the file.
"$MD" show --format=xml "$FX/cxx.v4.profraw" >/dev/null 2>&1
[ $? -eq 2 ] && ok "unknown format exits 2" || notok "unknown format exit code"
"$MD" show >/dev/null 2>&1
[ $? -eq 2 ] && ok "no input exits 2" || notok "no input exit code"
"$MD" nosuchcommand >/dev/null 2>&1
[ $? -eq 2 ] && ok "unknown command exits 2" || notok "unknown command exit code"
"$MD" show "$tmp/missing.profraw" >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "'$tmp/missing.profraw': cannot open: No such file" "$tmp/err"; then
	ok "missing file exits 1 naming it"
else
	notok "missing file: rc=$rc $(cat "$tmp/err")"
fi
"$MD" show "$FX/bad/version-99.profraw" >/dev/null 2>"$tmp/err"
if [ $? -eq 1 ] && grep -q "version-99.profraw': unsupported raw profile version 99" "$tmp/err"; then
	ok "bad version names file and version"
else
	notok "bad version: $(cat "$tmp/err")"
fi
"$MD" --version | grep -q '^memprof-data [0-9]' && ok "--version" || notok "--version"
"$MD" help show | grep -q '^usage: memprof-data show' && ok "help show" || notok "help show"

# A write error on stdout is reported (git's run_builtin check).
if [ -w /dev/full ]; then
	"$MD" show "$FX/cxx.v4.profraw" >/dev/full 2>"$tmp/err"
	[ $? -eq 1 ] && grep -q "write error" "$tmp/err" && ok "write error on stdout exits 1" ||
		notok "write error on stdout not reported"
fi

# The oracle: llvm-profdata-19 reads v3+ raw profiles of one binary.
if command -v llvm-profdata-19 >/dev/null 2>&1; then
	for p in basic.pie basic.nopie basic.hist cxx dump2; do
		prof="$FX/$p.v4.profraw"
		bin="$FX/$p"
		[ "$p" = cxx ] && bin="$FX/cxx.pie"
		[ -f "$prof" ] || continue
		"$MD" show --format=json "$prof" >"$tmp/ours.json"
		if llvm-profdata-19 show --memory --profiled-binary "$bin" "$prof" \
			-o "$tmp/llvm.yaml" 2>"$tmp/err"; then
			python3 tests/cli/compare_llvm.py "$tmp/ours.json" "$tmp/llvm.yaml" \
				"$p.v4.profraw vs llvm-profdata-19"
		else
			notok "llvm-profdata-19 failed on $prof: $(cat "$tmp/err")"
		fi
	done
elif [ -n "${CI:-}" ]; then
	notok "llvm-profdata-19 is not installed (CI runs every oracle test)"
else
	echo "# skipped: llvm-profdata-19 is not installed; 'make check' installs it"
fi

# Errors in JSON mode stay valid JSON (an error document on stdout).
"$MD" show --format=json "$FX/bad/version-99.profraw" >"$tmp/e.json" 2>/dev/null
rc=$?
if [ $rc -eq 1 ] && python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
assert d["schema"] == "memprof-data/error/1"
assert d["error"]["file"].endswith("version-99.profraw")
assert "unsupported raw profile version 99" in d["error"]["message"]' "$tmp/e.json"; then
	ok "an error in JSON mode is a JSON error document, exit 1"
else
	notok "JSON error document (rc=$rc)"
fi
"$MD" show "$FX/bad/version-99.profraw" >"$tmp/e.txt" 2>/dev/null
[ ! -s "$tmp/e.txt" ] && ok "an error in text mode prints nothing on stdout" || notok "text error on stdout"

# The symbolization summary's modules: one without DWARF that addresses
# were looked up in says so; one no address was looked up in (a --binary
# of another program) says nothing of DWARF, unknown there.
objcopy --strip-debug "$FX/basic.pie" "$tmp/stripped.pie" 2>/dev/null
"$MD" show --top=0 --binary="$tmp/stripped.pie" --binary="$FX/dump2" \
	"$FX/basic.pie.v4.profraw" >"$tmp/mods.txt" 2>/dev/null
if grep -q "stripped.pie: 0 of [1-9][0-9]* addresses with a source line, [1-9][0-9]* with a symbol only (no DWARF)$" "$tmp/mods.txt" &&
   grep -q "dump2: 0 of 0 addresses with a source line, 0 with a symbol only$" "$tmp/mods.txt"; then
	ok "show's modules: (no DWARF) for a module looked up without it, nothing for one not looked up"
else
	notok "show's modules: $(grep -A4 'modules:' "$tmp/mods.txt")"
fi

# A v3+ segment whose offset (the module's load address) was damaged puts
# the binary's code where the binary has none: said, not symbolized
# against the wrong addresses; an LLVM export, which needs the program's
# frames, fails naming the segment.
python3 - "$FX/basic.pie.v4.profraw" "$tmp/badoff.profraw" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
seg = struct.unpack_from("<Q", d, 24)[0]
off = struct.unpack_from("<Q", d, seg + 8 + 16)[0]
struct.pack_into("<Q", d, seg + 8 + 16, off ^ (1 << 40))
open(sys.argv[2], "wb").write(d)
PY
"$MD" show --top=0 --binary="$FX/basic.pie" "$tmp/badoff.profraw" >/dev/null 2>"$tmp/err1"; r1=$?
"$MD" show --top=0 --binary="$FX/basic.pie" "$FX/basic.pie.v4.profraw" >/dev/null 2>"$tmp/err0"
"$MD" merge --no-progress --format=llvm -o "$tmp/badoff.profdata" --binary="$FX/basic.pie" \
	"$tmp/badoff.profraw" 2>"$tmp/err2"; r2=$?
msg="segment 0x[0-9a-f]*-0x[0-9a-f]* has the build id of '$FX/basic.pie', but its offset 0x545555554000 puts it in no executable segment of the file"
if [ "$r1$r2" = 01 ] && grep -q "warning: $msg (a damaged profile?); its frames stay unsymbolized" "$tmp/err1" &&
   grep -q "badoff.profraw': $msg$" "$tmp/err2" && [ ! -e "$tmp/badoff.profdata" ] &&
   ! grep -q "no executable segment" "$tmp/err0"; then
	ok "a damaged segment offset is warned about (show) or refused (LLVM export), naming the segment"
else
	notok "damaged segment offset: $r1$r2 $(cat "$tmp/err1" "$tmp/err2")"
fi
