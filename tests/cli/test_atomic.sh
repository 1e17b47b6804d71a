#!/bin/sh
# Outputs are complete or absent, never partial.  `memprof-data merge -o
# OUT` (plain and .zst) is run with one call made to fail by the
# LD_PRELOAD shim of tests/fault/ (BUILD/tests/libfault.so, built by
# tests/fuzz/fuzz.mk): every write, fsync, rename and close, a disk that
# fills at every write, every malloc.  Whatever fails, either the merge
# succeeds and OUT is exactly what a clean run writes, or it exits 1 with
# "memprof-data: 'FILE': REASON", a pre-existing OUT is byte-identical,
# and no temporary (.memprof-data-XXXXXX) is left.  Then merges are killed at random moments
# (SIGKILL, SIGTERM): OUT is always the old file or the complete new one.
#
# ATOMIC_TRIALS=N sets the number of SIGKILL trials (default 100).
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
SHIM="$BUILD/tests/libfault.so"
FX=tests/fixtures
TRIALS=${ATOMIC_TRIALS:-100}

if [ ! -f "$SHIM" ]; then
	echo "# skipped: $SHIM is not built (include tests/fuzz/fuzz.mk)"
	exit 0
fi
case $SHIM in /*) ;; *) SHIM="$PWD/$SHIM" ;; esac

# Known bugs in src/ awaiting a fix (tests/fuzz/pending/README.md): a
# merge showing one's exact symptom (symptom() below) is reported on a
# "# known bug" line, not as a failure.  Delete the entry once the fix
# is in, so that the symptom fails again.
KNOWN_BUGS=""

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
known() { case " $KNOWN_BUGS " in *" $1 "*) return 0 ;; esac; return 1; }
known_seen=""
# How many temporaries (.memprof-data-XXXXXX, next to OUT) are there.
temps() {
	n=0
	for f in "$tmp"/.memprof-data-*; do
		[ -e "$f" ] && n=$((n + 1))
	done
	echo $n
}

# The known bug whose symptom the last merge ($rc, $msg) shows, if any;
# none now.  An entry looks like
#	case $rc:$msg in
#	1:*"': cannot write output") echo idx-write-error-without-reason ;;
#	esac
symptom() {
	:
}

# An ASan build has the sanitizer runtime after the preloaded shim.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
unset FAULT_AT FAULT_COUNT FAULT_SLOW FAULT_TRACE

# Inputs that never reach libdw (a v1 profile has no build ids, an
# indexed one is symbolized already): libdw 0.188 itself crashes when
# some of its allocations fail, which is not what is tested here.  The
# output-fault sweeps add an input of 3000 contexts, so that the output
# takes more than one write.
"$MD" merge --no-progress -o "$tmp/in.memprof" "$FX/cxx.v4.profraw" 2>/dev/null
python3 tests/fuzz/synth.py --many 3000 "$tmp/many.profraw"
printf 'the old output\n' >"$tmp/old"

# One merge to $OUT of inputs $2... with FAULT_AT=$1; sets rc, msg and
# result:
#   old         exit 1, OUT unchanged, no temporary, "memprof-data: ..."
#   new         exit 0, OUT identical to a clean run's, no temporary
#   known:BUG   the symptom of a bug in KNOWN_BUGS
#   bad:WHY
fm() {
	f=$1
	shift
	cp "$tmp/old" "$OUT"
	FAULT_AT=$f LD_PRELOAD="$SHIM" "$MD" merge --no-progress -j 1 -o "$OUT" \
		"$@" >/dev/null 2>"$tmp/err"
	rc=$?
	msg=$(cat "$tmp/err")
	left=$(temps)
	rm -f "$tmp"/.memprof-data-*
	bug=$(symptom)
	if [ "$left" -ne 0 ]; then
		result="bad:$left temporary file(s) left, exit $rc, '$msg'"
	elif [ -n "$bug" ] && known "$bug" && cmp -s "$OUT" "$tmp/old"; then
		result="known:$bug"
		case " $known_seen " in *" $bug "*) ;;
		*) known_seen="$known_seen $bug" ;; esac
	elif [ $rc -eq 0 ] && cmp -s "$OUT" "$tmp/good"; then
		result=new
	elif [ $rc -eq 1 ] && cmp -s "$OUT" "$tmp/old" &&
	     [ "${msg#memprof-data: }" != "$msg" ]; then
		result=old
	else
		result="bad:exit $rc, OUT $(cmp -s "$OUT" "$tmp/old" && echo unchanged || echo changed), '$msg'"
	fi
}

# The clean output of inputs "$@" to $OUT, and how many calls of each
# kind a merge makes.
setup_inputs() {
	rm -f "$tmp/count"
	"$MD" merge --no-progress -j 1 -o "$tmp/good.out$ext" "$@" 2>/dev/null
	mv "$tmp/good.out$ext" "$tmp/good"
	FAULT_COUNT="$tmp/count" LD_PRELOAD="$SHIM" "$MD" merge --no-progress \
		-j 1 -o "$tmp/counted$ext" "$@" 2>/dev/null
	if ! cmp -s "$tmp/counted$ext" "$tmp/good" || [ -z "$(count write)" ]; then
		notok "the shim changes a clean merge"
		exit 0
	fi
}
count() { awk -v op="$1" '$1 == op { print $2 }' "$tmp/count"; }

for ext in "" .zst; do
	OUT="$tmp/out.memprof$ext"
	what="merge -o OUT${ext:+ (zstd)}"
	set -- "$tmp/in.memprof" "$FX/basic.clang14.v1.profraw" "$tmp/many.profraw"
	setup_inputs "$@"

	# Output faults: every one must fail the merge, naming OUT and why.
	for spec in "write:Input/output error" "enospc:No space left on device" \
		    "fsync:Input/output error" "rename:Input/output error"; do
		op=${spec%%:*} reason=${spec#*:}
		n=$(count "$op") fails=""
		# The last fsync is the directory's, after the rename: only a
		# best effort (the new OUT is in place, whole), never a failure.
		if [ "$op" = fsync ]; then
			fm "fsync:$n" "$@"
			[ "$result" = new ] || fails=" [fsync:$n, the directory's: $result]"
			n=$((n - 1))
		fi
		for k in $(seq 1 "$n"); do
			fm "$op:$k" "$@"
			case "$result:$msg" in
			old:*"'$OUT': "*"$reason"*|known:*) ;;
			*) fails="$fails [$op:$k $result]" ;;
			esac
		done
		fm "$op:$((n + 1))" "$@"
		[ "$result" = new ] || fails="$fails [$op:$((n + 1)), past the last call: $result]"
		[ -z "$fails" ] &&
			ok "$what: every $op fault ($n calls) fails it: exit 1, OUT named with '$reason', old OUT intact, no temporary" ||
			notok "$what: $op faults:$fails"
	done

	# close: inputs are closed too, and their close may fail harmlessly;
	# the output's must fail the merge.
	n=$(count close) fails="" failed=0
	for k in $(seq 1 "$n"); do
		fm "close:$k" "$@"
		case "$result:$msg" in
		new:*) ;;
		old:*"'$OUT': "*"Input/output error"*) failed=$((failed + 1)) ;;
		*) fails="$fails [close:$k $result]" ;;
		esac
	done
	[ -z "$fails" ] && [ $failed -ge 1 ] &&
		ok "$what: close faults ($n calls): the output's fails it, the others are harmless" ||
		notok "$what: close faults ($failed failed the merge):$fails"

	# Every allocation in turn, of a smaller merge.
	set -- "$tmp/in.memprof" "$FX/basic.clang14.v1.profraw"
	setup_inputs "$@"
	n=$(count malloc) fails="" failed=0
	for k in $(seq 1 "$n"); do
		fm "malloc:$k" "$@"
		case "$result:$msg" in
		new:*|known:*) ;;
		# "out of memory", or zstd's "not enough memory"
		old:*"memory"*) failed=$((failed + 1)) ;;
		*) fails="$fails [malloc:$k $result]" ;;
		esac
	done
	[ -z "$fails" ] && [ $failed -ge 1 ] &&
		ok "$what: every malloc fault ($n calls; $failed failed it): out of memory, exit 1, old OUT intact, or a complete OUT" ||
		notok "$what: malloc faults:$fails"
done

# Another errno gets through as it is.
OUT="$tmp/out.memprof" ext=""
set -- "$tmp/in.memprof" "$FX/basic.clang14.v1.profraw" "$tmp/many.profraw"
setup_inputs "$@"
for spec in "rename:1:EXDEV:Invalid cross-device link" \
	    "fsync:1:EDQUOT:Disk quota exceeded" "write:1:EROFS:Read-only file system"; do
	f=${spec%:*} reason=${spec##*:}
	fm "$f" "$@"
	case "$result:$msg" in
	old:*"'$OUT': "*"$reason"*) ok "FAULT_AT=$f: exit 1 with '$reason'" ;;
	known:*) echo "# FAULT_AT=$f: known bug ${result#known:}: '$msg'" ;;
	*) notok "FAULT_AT=$f: $result" ;;
	esac
done

for bug in $known_seen; do
	echo "# known bug $bug (tests/fuzz/pending/README.md): its symptom was seen and tolerated"
done

# ---- signals at random moments ----

# A merge long enough to be hit mid-way: one profile 200 times.
OUT="$tmp/out.memprof"
for _ in $(seq 200); do echo "$FX/basic.pie.v4.profraw"; done >"$tmp/list"
cp "$tmp/in.memprof" "$tmp/old.memprof"	# a valid old OUT
now() { date +%s.%N; }
t0=$(now)
"$MD" merge --no-progress -o "$tmp/new.memprof" --input-files="$tmp/list" 2>/dev/null
t1=$(now)
T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
"$MD" show "$tmp/new.memprof" >/dev/null || notok "clean 200-input merge"

rand() { od -An -N4 -tu4 /dev/urandom | tr -d ' '; }
# One merge killed with signal $1 after a random delay; half of them
# preload the shim with 50 ms writes, so that the kill often lands
# between the temporary's creation and the rename.
killed_merge() {
	cp "$tmp/old.memprof" "$OUT"
	r=$(rand)
	if [ $((r % 2)) -eq 0 ]; then
		slow=50000 pre="$SHIM" extra=0.05
	else
		slow=0 pre="" extra=0
	fi
	delay=$(awk -v r="$r" -v t="$T" -v e="$extra" \
		'BEGIN { printf "%.3f", r / 4294967296 * (t + e) * 1.2 }')
	FAULT_SLOW=$slow LD_PRELOAD="$pre" "$MD" merge --no-progress \
		-j $((r % 3 + 1)) -o "$OUT" --input-files="$tmp/list" 2>/dev/null &
	pid=$!
	sleep "$delay"
	kill "-$1" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if cmp -s "$OUT" "$tmp/old.memprof"; then
		result=old
	elif cmp -s "$OUT" "$tmp/new.memprof" && "$MD" show "$OUT" >/dev/null 2>&1; then
		result=new
	else
		result=bad
	fi
	left=$(temps)
	rm -f "$tmp"/.memprof-data-*
}

start=$(now) olds=0 news=0 bads=0 lefts=0
for _ in $(seq 1 "$TRIALS"); do
	killed_merge KILL
	case $result in old) olds=$((olds + 1)) ;; new) news=$((news + 1)) ;;
	*) bads=$((bads + 1)) ;; esac
	[ "$left" -gt 0 ] && lefts=$((lefts + 1))
done
secs=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
[ $bads -eq 0 ] &&
	ok "SIGKILL at random moments ($TRIALS trials, merge of ${T}s, ${secs}s): OUT was the old file $olds times, the complete new one $news times, never partial" ||
	notok "SIGKILL: OUT partial or invalid in $bads of $TRIALS trials"
echo "# $lefts of $TRIALS SIGKILLs left a .memprof-data-XXXXXX behind: expected, SIGKILL cannot be caught; OUT itself was never touched"

# SIGTERM is caught: the temporary goes too.
olds=0 news=0 bads=0 lefts=0
for _ in $(seq 1 20); do
	killed_merge TERM
	case $result in old) olds=$((olds + 1)) ;; new) news=$((news + 1)) ;;
	*) bads=$((bads + 1)) ;; esac
	[ "$left" -gt 0 ] && lefts=$((lefts + 1))
done
[ $bads -eq 0 ] && [ $lefts -eq 0 ] &&
	ok "SIGTERM at random moments (20 trials): OUT old $olds times, new $news times, no temporary left" ||
	notok "SIGTERM: $bads partial OUT, $lefts temporaries left"
