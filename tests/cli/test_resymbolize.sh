#!/bin/sh
# An indexed profile merged without the program's binaries keeps its
# frames unsymbolized (build id and address).  Merged again with the same
# profile merged with them, its stacks used to stay apart from the
# symbolized ones, doubling every context (issue 17 item 7).  Now a merge
# given the binaries symbolizes such frames (and says so), and one without
# them says which input keeps unsymbolized frames.
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
FX=tests/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

B="--binary=$FX/basic.pie --binary=$FX/libfixture.so"
P="$FX/basic.pie.v4.profraw"
contexts() { "$MD" show --format=json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["contexts"])'; }

"$MD" merge --no-progress -o "$tmp/bare.memprof" "$P" 2>/dev/null
# shellcheck disable=SC2086
"$MD" merge --no-progress -o "$tmp/sym.memprof" $B "$P" 2>/dev/null
n=$(contexts "$tmp/sym.memprof")

# shellcheck disable=SC2086
"$MD" merge --no-progress -o "$tmp/both.memprof" $B "$tmp/bare.memprof" "$tmp/sym.memprof" 2>"$tmp/err"
got=$(contexts "$tmp/both.memprof")
if [ "$got" = "$n" ] && grep -q 'unsymbolized frames\? of indexed inputs symbolized' "$tmp/err"; then
	ok "with the binaries, the bare profile's frames are symbolized: $got contexts, not twice $n"
else
	notok "with the binaries: $got contexts (want $n); $(cat "$tmp/err")"
fi
# The result is what merging the raw profile twice gives.
# shellcheck disable=SC2086
"$MD" merge --no-progress -o "$tmp/twice.memprof" $B "$P" "$P" 2>/dev/null
"$MD" show --format=json "$tmp/both.memprof" | python3 -c 'import json,sys
d = json.load(sys.stdin); print(sorted((c["mib"]["AllocCount"], c["mib"]["TotalSize"], [f.get("function") for f in c["frames"]]) for c in d["contexts"]))' >"$tmp/a"
"$MD" show --format=json "$tmp/twice.memprof" | python3 -c 'import json,sys
d = json.load(sys.stdin); print(sorted((c["mib"]["AllocCount"], c["mib"]["TotalSize"], [f.get("function") for f in c["frames"]]) for c in d["contexts"]))' >"$tmp/b"
if cmp -s "$tmp/a" "$tmp/b"; then
	ok "and its contexts, frames and MIBs are those of the raw profile merged twice"
else
	notok "resymbolized merge differs from the raw profile merged twice"
fi

# Without the binaries: the contexts stay apart, and a note names the input.
"$MD" merge --no-progress -o "$tmp/apart.memprof" "$tmp/bare.memprof" "$tmp/sym.memprof" 2>"$tmp/err"
if grep -q "bare.memprof'*: .*unsymbolized frame.* with no binary here" "$tmp/err" &&
   ! grep -q "sym.memprof" "$tmp/err"; then
	ok "without them, a note names the input whose frames stay unsymbolized"
else
	notok "no note for the unsymbolized input: $(cat "$tmp/err")"
fi

# The note names the build id of the frames it counts, and says "and
# others" only when some are of another: with the library given, all
# that stay unsymbolized are the program's.
"$MD" merge --no-progress -o "$tmp/lib.memprof" --binary="$FX/libfixture.so" \
	"$tmp/bare.memprof" 2>"$tmp/err2"
if grep -q "unsymbolized frames (build ids [0-9a-f]* and others) .* --binary with each build id" "$tmp/err" &&
   grep -q "unsymbolized frames (build id [0-9a-f]*) .* --binary with that build id" "$tmp/err2"; then
	ok "the note says 'and others' only of frames of several build ids"
else
	notok "build ids in the note: $(cat "$tmp/err" "$tmp/err2")"
fi

# A fleet's shards would repeat that note a thousand times: the first
# input is named, the others counted in one note after the merge.
cp "$tmp/bare.memprof" "$tmp/bare2.memprof"
cp "$tmp/bare.memprof" "$tmp/bare3.memprof"
"$MD" merge --no-progress -o "$tmp/three.memprof" "$tmp/bare.memprof" \
	"$tmp/bare2.memprof" "$tmp/bare3.memprof" 2>"$tmp/err"
one=$(sed -n "s/.*bare.memprof'*: \([0-9]*\) unsymbolized frames\{0,1\} .*/\1/p" "$tmp/err")
if [ -n "$one" ] && [ "$(grep -c 'unsymbolized frame' "$tmp/err")" = 2 ] &&
   grep -q "note: 2 more inputs with $((2 * one)) unsymbolized frames in all that no binary here symbolizes" "$tmp/err" &&
   ! grep -q "bare[23].memprof" "$tmp/err"; then
	ok "three unsymbolized shards: the first named, the two others counted in one note"
else
	notok "notes for three unsymbolized shards: $(cat "$tmp/err")"
fi
