#!/bin/sh
# sym-oracle.sh - compare our symbolizer with llvm-symbolizer-19 on every PC
# of the fixture profiles.
#
#   tests/cli/test_sym_oracle.sh [BUILD]   (from the repository root)
#
# For each fixture profile, `sym-dump -p` maps every PC to (module, ELF
# address) with the profile's own memory map; the modules are the fixture
# binaries and whatever the debug directories supply by build id (libc and
# ld.so on a machine with libc6-dbg).  Each distinct address is then
# symbolized by `sym-dump BIN ADDR...` and by
#   llvm-symbolizer-19 --obj=BIN --inlining --no-demangle --output-style=JSON
# and the two frame lists (function, file, line, column, discriminator,
# function start line; innermost first) must be equal, with one allowance:
# llvm-symbolizer renames the outermost frame after the ELF symbol at the
# address, where we keep the DWARF linkage name (as LLVM's own MemProf
# reader does, UseSymbolTable=false); glibc's __GI_ aliases and gcc's
# clones (f.isra.0) differ so, and nm must show both names at one address,
# or the ELF symbol must be the DWARF name plus a clone or version suffix.
# Each innermost discriminator is also checked against the line table of
# llvm-dwarfdump-19 --debug-line.  Addresses are ELF addresses (PC minus
# the segment's load bias, or PC - start + p_vaddr in v1/v2), which is what
# llvm-symbolizer --obj expects for a PIE or shared object too.
#
# Prints "ok - ..." / "not ok - ..." lines (tests/run.sh counts them) and a
# summary per module.  Needs python3, llvm-symbolizer-19, llvm-dwarfdump-19,
# and BUILD/tests/sym-dump (built here with cc if missing).
set -u
BUILD=${1:-build}
FIX=${FIXTURES:-tests/fixtures}
unset DEBUGINFOD_URLS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

DUMP=$BUILD/tests/sym-dump
if [ ! -x "$DUMP" ]; then
	DUMP=$tmp/sym-dump
	${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -o "$DUMP" tests/tools/sym-dump.c \
		src/common/*.c src/raw/*.c src/symbolize/*.c \
		-ldw -lelf -lzstd -lstdc++ || { echo "not ok - build sym-dump"; exit 1; }
fi
. tests/need.sh
need llvm-symbolizer-19 llvm-dwarfdump-19 python3

# profile, then the binaries to register (main executable first)
cat >"$tmp/cases" <<EOF
basic.pie.v4.profraw basic.pie libfixture.so
basic.nopie.v4.profraw basic.nopie libfixture.so
basic.hist.v4.profraw basic.hist libfixture-hist.so
cxx.v4.profraw cxx.pie
dump2.v4.profraw dump2
basic.clang14.v1.profraw basic.clang14 libfixture-clang14.so
basic.clang16.v2.profraw basic.clang16 libfixture-clang16.so
EOF

status=0
: >"$tmp/profpairs"
while read -r prof bins; do
	args=""
	for b in $bins; do args="$args $FIX/$b"; done
	# shellcheck disable=SC2086
	if ! "$DUMP" -p "$FIX/$prof" $args >>"$tmp/profpairs" 2>"$tmp/err"; then
		echo "not ok - sym-dump -p $prof: $(cat "$tmp/err")"
		status=1
		continue
	fi
	echo "ok - $prof: $(tail -n 1 "$tmp/err")"
done <"$tmp/cases"
# module, step
cat >"$tmp/sweeps" <<EOF
$FIX/basic.pie 7
$FIX/cxx.pie 3
$FIX/libfixture.so 1
$FIX/basic.clang14 11
EOF
cut -f1 "$tmp/profpairs" | grep '^/usr/lib/debug/' | sort -u | sed 's/$/ 97/' >>"$tmp/sweeps"
# Split DWARF, 5 and 4: the skeletons in the binary, the functions and
# inlined frames in a .dwo per unit, found through DW_AT_comp_dir.
if command -v clang++-19 >/dev/null 2>&1; then
	for v in 5 4; do
		if (cd "$tmp" && clang++-19 -O2 -gdwarf-$v -gsplit-dwarf \
			-o split$v "$OLDPWD/tests/cli/src/split_main.cc" \
			"$OLDPWD/tests/cli/src/split_lib.cc") 2>"$tmp/err"; then
			echo "$tmp/split$v 1" >>"$tmp/sweeps"
		else
			echo "not ok - clang++-19 -gdwarf-$v -gsplit-dwarf: $(cat "$tmp/err")"
			status=1
		fi
	done
elif [ -n "${CI:-}" ]; then
	echo "not ok - clang++-19 is not installed (CI runs every oracle test)"
	status=1
fi
cp "$tmp/profpairs" "$tmp/pairs"
while read -r mod step; do
	"$DUMP" -l "$step" "$mod" | sed "s|^|$mod	|" >>"$tmp/pairs"
done <"$tmp/sweeps"
sort -u "$tmp/pairs" >"$tmp/pairs.u"

# One run of each tool per module.
cut -f1 "$tmp/pairs.u" | sort -u >"$tmp/modules"
i=0
while read -r mod; do
	i=$((i + 1))
	awk -F '\t' -v m="$mod" '$1 == m { print $2 }' "$tmp/pairs.u" >"$tmp/a.$i"
	"$DUMP" "$mod" <"$tmp/a.$i" >"$tmp/ours.$i" 2>>"$tmp/warnings"
	llvm-symbolizer-19 --obj="$mod" --inlining --no-demangle \
		--output-style=JSON <"$tmp/a.$i" >"$tmp/llvm.$i"
	llvm-dwarfdump-19 --debug-line "$mod" >"$tmp/lines.$i" 2>/dev/null
	{ nm "$mod"; nm -D "$mod"; } 2>/dev/null >"$tmp/nm.$i"
	printf '%s\t%s\n' "$i" "$mod" >>"$tmp/index"
done <"$tmp/modules"

python3 - "$tmp" <<'EOF' || status=1
import bisect, json, os, re, sys

tmp = sys.argv[1]

def ours(path):
    out = {}
    for line in open(path):
        a, fn, file, ln, col, disc, start = line.rstrip("\n").split("\t")
        out.setdefault(int(a, 16), []).append(
            (fn, file, int(ln), int(col), int(disc), int(start)))
    return out

def llvm(path):
    out = {}
    for line in open(path):      # one JSON value per input line
        if not line.strip():
            continue
        v = json.loads(line)
        for rec in (v if isinstance(v, list) else [v]):
            out[int(rec["Address"], 16)] = [
                (s["FunctionName"] or "??", s["FileName"] or "??", s["Line"],
                 s["Column"], s["Discriminator"], s["StartLine"])
                for s in rec.get("Symbol", [])]
    return out

def symbols(path):
    """name -> set of addresses, from nm."""
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3:
            out.setdefault(f[2], set()).add(int(f[0], 16))
    return out

def line_table(path):
    """(addr, discriminator, end_sequence) rows of every sequence."""
    rows = []
    row = re.compile(r"^0x([0-9a-f]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*(.*)$")
    for line in open(path):
        m = row.match(line)
        if m:
            rows.append((int(m.group(1), 16), int(m.group(6)), "end_sequence" in m.group(8)))
    # At one address an end_sequence comes first, then the rows that start
    # the next sequence; among those the last one wins (as in both tools).
    rows.sort(key=lambda r: (r[0], not r[2]))
    return rows

def row_for(rows, addrs, a):
    i = bisect.bisect_right(addrs, a) - 1
    if i < 0 or rows[i][2]:
        return None
    return rows[i]

def real(frames):
    return [f for f in frames if f[0] != "??" or f[1] != "??"]

# The addresses the fixture profiles' PCs map to, per module.
profile_addrs = {}
for line in open(os.path.join(tmp, "profpairs")):
    mod, a = line.rstrip("\n").split("\t")
    profile_addrs.setdefault(mod, set()).add(int(a, 16))

bad = 0
tot = {"n": 0, "eq": 0, "alias": 0, "sym": 0, "symsame": 0}
prof = {"n": 0, "eq": 0, "user": 0}
for line in open(os.path.join(tmp, "index")):
    i, mod = line.rstrip("\n").split("\t")
    o = ours(os.path.join(tmp, "ours." + i))
    l = llvm(os.path.join(tmp, "llvm." + i))
    syms = symbols(os.path.join(tmp, "nm." + i))
    rows = line_table(os.path.join(tmp, "lines." + i))
    addrs = [r[0] for r in rows]
    c = {"n": 0, "eq": 0, "alias": 0, "sym": 0, "symsame": 0, "disc": 0}
    for a in sorted(o):
        c["n"] += 1
        mine, theirs = real(o[a]), real(l.get(a, []))
        in_profile = a in profile_addrs.get(mod, ())
        prof["n"] += in_profile
        if all(f[1] == "??" for f in mine) and all(f[2] == 0 for f in theirs):
            # ELF symbols only, no DWARF on either side (llvm-symbolizer
            # may add the STT_FILE name, with line 0).
            c["sym"] += 1
            c["symsame"] += [f[0] for f in mine] == [f[0] for f in theirs]
            continue
        alias = False
        if mine != theirs and len(mine) == len(theirs) and mine[:-1] == theirs[:-1] \
                and mine[-1][1:] == theirs[-1][1:]:
            # llvm-symbolizer names the outermost frame by the ELF symbol
            # (its symbol-table override); we keep the DWARF linkage name,
            # as LLVM's MemProf reader does.  Fine if both name one address.
            # gcc's clones (f.constprop.0, f.isra.0) count too: the DWARF
            # names f, the symbol table only the clone.
            # So do versioned names from .symver (f@GLIBC_2.2.5).
            alias = theirs[-1][0] in syms and (
                bool(syms.get(mine[-1][0], set()) & syms[theirs[-1][0]])
                or theirs[-1][0].startswith(mine[-1][0] + ".")
                or theirs[-1][0].split("@")[0] == mine[-1][0])
        if mine != theirs and not alias:
            bad += 1
            print("not ok - %s 0x%x:\n  ours: %s\n  llvm: %s" % (mod, a, mine, theirs))
            continue
        c["eq"] += 1
        c["alias"] += alias
        prof["eq"] += in_profile
        prof["user"] += in_profile
        r = row_for(rows, addrs, a)
        if r is None or r[1] != mine[0][4]:
            bad += 1
            print("not ok - %s 0x%x: discriminator %d, line table row %s" % (mod, a, mine[0][4], r))
        else:
            c["disc"] += 1
    for k in tot:
        tot[k] += c[k]
    print("# %s: %d addresses; with DWARF %d equal (%d by an alias of the "
          "outermost name, %d discriminators = line table); ELF symbol only "
          "%d (%d the same symbol)"
          % (mod, c["n"], c["eq"], c["alias"], c["disc"], c["sym"], c["symsame"]))
print("%s - fixture profile PCs: %d distinct module addresses, %d with DWARF, "
      "all equal to llvm-symbolizer-19's; the other %d are ELF-symbol-only "
      "runtime frames" % ("ok" if bad == 0 else "not ok", prof["n"], prof["eq"],
                          prof["n"] - prof["eq"]))
print("%s - llvm-symbolizer-19 agrees on %d of %d addresses with DWARF "
      "(%d by an alias); %d of %d symbol-only addresses name the same symbol"
      % ("ok" if bad == 0 else "not ok", tot["eq"], tot["n"] - tot["sym"],
         tot["alias"], tot["symsame"], tot["sym"]))
sys.exit(1 if bad else 0)
EOF
if [ -s "$tmp/warnings" ]; then
	sed 's/^/# /' "$tmp/warnings"
fi
exit $status
