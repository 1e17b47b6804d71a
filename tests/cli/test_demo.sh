#!/bin/sh
# `make demo` (tests/demo.sh) runs clean and shows what it promises:
# symbolized frames first, then the merge, the diff with its gate and the
# overlap, and no unsymbolized frame of the fixtures' own binaries.
set -u
BUILD=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

if sh tests/demo.sh "$BUILD" >"$tmp/out" 2>"$tmp/err"; then
	ok "make demo runs clean"
else
	notok "make demo failed: $(tail -n 5 "$tmp/err")"
fi
# The first step's first frame is a function of basic.c, by name.
first=$(sed -n '/^==== 1\./,/^==== 2\./p' "$tmp/out" | grep -m1 '^      - ')
case $first in
*"hot_alloc /fixtures/src/basic.c:"*) ok "the demo starts with symbolized frames ($first)" ;;
*) notok "the demo's first frame is '$first'" ;;
esac
n=0
for want in "==== 2. Merge" "==== 3. The merged profile" "inputs_merged: 4" \
	    "==== 4. Profiles of two runs" "CROSSED by the whole profile" \
	    "(exit status 3" "==== 5. How much" "overlap: AllocCount" \
	    "==== 6. Feed the compiler" "LLVM indexed profile version 8" \
	    "Total size for allocation with location hash"; do
	grep -qF -- "$want" "$tmp/out" || { notok "demo output lacks '$want'"; n=$((n + 1)); }
done
[ $n -eq 0 ] && ok "the demo shows the merge, the diff with its gate, the overlap and the LLVM export with clang's hints"
# Frames of the fixtures' binaries (basic.*, libfixture*, shift) are all
# symbolized: no "<their build id>+0x..." in the output.
bids=$(for b in tests/fixtures/basic.pie tests/fixtures/libfixture.so \
		tests/fixtures/basic.clang14 tests/fixtures/basic.clang16 \
		tests/fixtures/libfixture-clang14.so tests/fixtures/libfixture-clang16.so \
		tests/fixtures/shift/shift; do
	readelf -n "$b" 2>/dev/null | sed -n 's/.*Build ID: //p'
done)
bad=0
for id in $bids; do
	grep -q "$id+0x" "$tmp/out" && { notok "unsymbolized frame of build id $id in the demo"; bad=1; }
done
# Without a build id (raw v1/v2) an unsymbolized frame is "?+ADDRESS":
# the fixtures' executables load at 0x5555555xxxxx, their library at
# 0x7ffff7fc8000-0x7ffff7fca000 (tests/fixtures/README.md).
if grep -E '\?\+0x5555555|\?\+0x7ffff7fc[89]' "$tmp/out"; then
	notok "unsymbolized frame of a fixture binary without build id (above)"
	bad=1
fi
[ $bad -eq 0 ] && [ -n "$bids" ] && ok "no unsymbolized frame of the fixtures' own binaries in the demo"
