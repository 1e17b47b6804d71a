#!/bin/sh
# demo.sh BUILD_DIR - what `make demo` shows: memprof-data show on the sample
# profiles in tests/fixtures (see tests/fixtures/regen.sh for how each was
# made), with a heading before each part.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BIN=$(cd "$1" && pwd)/memprof-data
[ -x "$BIN" ] || { echo "demo.sh: '$BIN' not found; run make first" >&2; exit 1; }
cd "$(dirname "$0")/.."
F=tests/fixtures

heading() {
	printf '\n==== %s\n' "$1"
	printf '$ %s\n\n' "$2"
}

heading "The 5 allocation contexts with the most allocations (clang 19, raw v4)" \
	"memprof-data show --top=5 $F/basic.pie.v4.profraw"
"$BIN" show --top=5 "$F/basic.pie.v4.profraw"

heading "The context with the most accesses, as JSON, with its access histogram (8 bytes per entry)" \
	"memprof-data show --format=json --sort=accesses --top=1 $F/basic.hist.v4.profraw"
# The contexts part only; the document's head is as in the text above.
"$BIN" show --format=json --sort=accesses --top=1 "$F/basic.hist.v4.profraw" |
	sed -n '/^  "contexts"/,$p'

heading "A clang 14 profile (raw v1: no build ids, file offsets): inputs, memory map, summary" \
	"memprof-data show $F/basic.clang14.v1.profraw"
"$BIN" show "$F/basic.clang14.v1.profraw" | sed '/^contexts:/,$d'
echo "(llvm-profdata-19 rejects raw v1 and v2 profiles)"

heading "The same program's v4 profile, zstd-compressed: detected by its magic" \
	"memprof-data show $F/basic.pie.v4.profraw.zst"
"$BIN" show "$F/basic.pie.v4.profraw.zst" | sed -n '/^inputs:/,/^segments:/p' | sed '$d'

heading "Two profiles in one file (a dump, then exit): equal contexts fold, the object live at both counts twice" \
	"memprof-data show $F/dump2.v4.profraw"
"$BIN" show "$F/dump2.v4.profraw"

printf '\n==== See man/memprof-data-show.1 (man -l man/memprof-data-show.1) for every field.\n'
