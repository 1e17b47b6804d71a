#!/bin/sh
# Damaged DWARF, at random: the fixtures' binaries with a few bytes of
# one debug section changed (tests/cli/mutate_dwarf.py), symbolizing
# their real profiles.  test_dwarf_trust.sh checks what is said of four
# known corruptions; this checks that no corruption of the kinds a disk,
# a download or a bad tool makes costs a crash or a hang (under
# `make check-asan`, nor a sanitizer report).  Fixed seeds: a failure
# names its seed and copy, and reproduces.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
MUT=$(pwd)/tests/cli/mutate_dwarf.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need python3
cd "$tmp" || exit 1

# C++ with inlined frames (DWARF 5: str_offsets, addrx, rnglists), and C
# with a shared library whose DWARF stays whole.
for run in "cxx.pie 1 $FX/cxx.v4.profraw" \
	   "basic.pie 2 $FX/basic.pie.v4.profraw"; do
	set -- $run
	out=$(python3 "$MUT" "$MD" "$FX/$1" 120 "$2" "$3" 2>&1)
	if [ "$out" = "ok 120" ]; then
		ok "120 damaged copies of $1: no crash, hang or sanitizer report"
	else
		notok "damaged copies of $1: $out"
		trap - EXIT	# the damaged copies stay, for a look
		echo "# kept in $tmp"
	fi
done
