#!/bin/sh
# Threads: merge -j 1 and -j 8 give the same bytes on raw inputs, on
# indexed inputs (opened by the workers concurrently) and on a mix, and
# -j 2 and -j 8 on inputs whose new stacks come in batches; show
# and diff of the results (diff reads its two sides on two threads).  `make check-tsan` runs this script with
# memprof-data built under ThreadSanitizer (halt_on_error=1), where a data
# race fails the command; in `make check` it is a determinism test.
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
FX=tests/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

bins="--binary=$FX/basic.pie --binary=$FX/libfixture.so --binary=$FX/cxx.pie"
# shellcheck disable=SC2086
if ! "$MD" merge -j 1 -o "$tmp/a.memprof" $bins "$FX/basic.pie.v4.profraw" 2>"$tmp/err" ||
   ! "$MD" merge -j 1 -o "$tmp/b.memprof" $bins "$FX/cxx.v4.profraw" 2>>"$tmp/err" ||
   ! "$MD" merge -j 1 -o "$tmp/c.memprof" $bins "$FX/basic.pie.v4.profraw.zst" \
	"$FX/dump2.v4.profraw" 2>>"$tmp/err"; then
	notok "merge the seed inputs: $(cat "$tmp/err")"
	exit 1
fi
# 96 inputs of each kind, so that eight workers overlap for real.
raw="" idx=""
for i in $(seq 1 32); do
	raw="$raw $FX/basic.pie.v4.profraw $FX/cxx.v4.profraw $FX/basic.pie.v4.profraw.zst"
	idx="$idx $tmp/a.memprof $tmp/b.memprof $tmp/c.memprof"
done

same_jobs() {
	name=$1
	shift
	# shellcheck disable=SC2086
	if "$MD" merge -j 1 --no-progress -o "$tmp/j1.memprof" $bins "$@" 2>"$tmp/err" &&
	   "$MD" merge -j 8 --no-progress -o "$tmp/j8.memprof" $bins "$@" 2>>"$tmp/err" &&
	   cmp -s "$tmp/j1.memprof" "$tmp/j8.memprof"; then
		ok "merge -j 1 and -j 8 of $name give the same bytes"
	else
		notok "merge -j 1 / -j 8 of $name: $(head -c 600 "$tmp/err")"
	fi
}
# shellcheck disable=SC2086
same_jobs "96 raw inputs" $raw
# Without the symbol cache every module's DWARF is read, all but one of a
# batch's on a helper thread beside the lookups (symbolize_pending).
same_jobs "96 raw inputs, no symbol cache" --no-symbol-cache $raw
# shellcheck disable=SC2086
same_jobs "96 indexed inputs" $idx
# shellcheck disable=SC2086
same_jobs "raw and indexed inputs mixed" $raw $idx

# Stacks new in every input (wide_profile.py, a seed each): while inputs
# are left to take, they wait and are placed in batches beside the
# folding (drain_now()), the last ones once the workers are done.
wide=""
for seed in 1 2 3 4 5 6 7 8; do
	python3 tests/cli/wide_profile.py . 6000 "$tmp/w$seed.profraw" "$seed"
	wide="$wide $tmp/w$seed.profraw"
done
# shellcheck disable=SC2086
"$MD" merge -j 1 --no-progress -o "$tmp/w1.memprof" $bins $wide 2>"$tmp/err1"
for j in 2 8; do
	# shellcheck disable=SC2086
	if [ -s "$tmp/w1.memprof" ] &&
	   "$MD" merge -j $j --no-progress -o "$tmp/wj.memprof" $bins $wide 2>"$tmp/err" &&
	   cmp -s "$tmp/w1.memprof" "$tmp/wj.memprof" &&
	   [ "$("$MD" show --stats --format=json "$tmp/wj.memprof" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["contexts"])')" = 48000 ]; then
		ok "merge -j 1 and -j $j of 8 inputs of 6000 new stacks each give the same 48000 contexts"
	else
		notok "merge -j 1 / -j $j of the wide inputs: $(cat "$tmp/err1" "$tmp/err" | head -c 600)"
	fi
done

# The LLVM export sorts the stacks two ways at once given two threads.
# shellcheck disable=SC2086
if "$MD" merge -j 1 --format=llvm --no-progress -o "$tmp/l1.prof" --binary="$FX/cxx.pie" \
	$FX/cxx.v4.profraw $FX/cxx.v4.profraw 2>"$tmp/err" &&
   "$MD" merge -j 2 --format=llvm --no-progress -o "$tmp/l2.prof" --binary="$FX/cxx.pie" \
	$FX/cxx.v4.profraw $FX/cxx.v4.profraw 2>>"$tmp/err" &&
   cmp -s "$tmp/l1.prof" "$tmp/l2.prof"; then
	ok "merge --format=llvm -j 1 and -j 2 give the same bytes"
else
	notok "merge --format=llvm -j 1 / -j 2: $(head -c 600 "$tmp/err")"
fi

# The indexed merge equals the raw one it was made from, weighted.
# shellcheck disable=SC2086
"$MD" merge -j 8 --no-progress -o "$tmp/i.memprof" $idx 2>/dev/null
if "$MD" show --format=json "$tmp/i.memprof" >"$tmp/i.json" 2>"$tmp/err" &&
   "$MD" show --format=json --top=3 --sort=bytes "$tmp/j8.memprof" >/dev/null 2>>"$tmp/err"; then
	ok "show of the -j 8 merges"
else
	notok "show of the -j 8 merges: $(cat "$tmp/err")"
fi
"$MD" diff "$tmp/a.memprof" "$tmp/i.memprof" >"$tmp/diff" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'result: pass' "$tmp/diff"; then
	ok "diff of a merge against the -j 8 merge of 96 inputs"
else
	notok "diff: status $rc: $(cat "$tmp/err")"
fi
# shellcheck disable=SC2086
"$MD" diff --format=json $bins "$FX/basic.pie.v4.profraw.zst" "$FX/cxx.v4.profraw" \
	>"$tmp/rdiff" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["rows"] and d["matching"]' "$tmp/rdiff" 2>>"$tmp/err"; then
	ok "diff of two raw profiles, read at once and symbolized"
else
	notok "raw diff: status $rc: $(cat "$tmp/err")"
fi
