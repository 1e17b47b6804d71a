#!/bin/sh
# Run the tests: the Check unit suites in BUILD/tests/test_*, then the
# command-line tests tests/cli/*.sh (which print "ok - ..." / "not ok - ...")
# and the runtime's tests/runtime/run.sh.
#
#   tests/run.sh [--unit | --only-cli] BUILD [PATTERN]
#
# --unit runs the Check suites only, --only-cli the scripts only; PATTERN
# keeps the tests whose file name contains it (`make check T=merge`).
# Ends with one line "check: N passed, N failed"; exits 1 if anything failed
# or nothing ran.
set -u
only=
case ${1:-} in
--unit|--only-cli) only=$1; shift ;;
esac
BUILD=${1:-build}
PATTERN=${2:-}
# Does test file $1 pass the --unit/--only-cli and PATTERN filters ($2: its kind)?
wanted() {
	case $only/$2 in
	--unit/cli|--unit/runtime|--only-cli/unit) return 1 ;;
	esac
	case $(basename "$1") in
	*"$PATTERN"*) return 0 ;;
	esac
	return 1
}
export MEMPROF_DATA="$BUILD/memprof-data" BUILD FIXTURES=tests/fixtures
unset DEBUGINFOD_URLS
passed=0 failed=0
log=$(mktemp)
# The symbol cache of every command run by the tests: a fresh one, so that
# no test reads or writes the user's ~/.cache and no result depends on an
# earlier run.  Tests of the cache itself make their own.
XDG_CACHE_HOME=$(mktemp -d)
export XDG_CACHE_HOME
trap 'rm -f "$log"; rm -rf "$XDG_CACHE_HOME"' EXIT

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	wanted "$t" unit || continue
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	# Check ends with "NN%: Checks: N, Failures: F, Errors: E".
	f=0 e=0
	line=$(grep -E 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		n=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
		f=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
		e=$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
		passed=$((passed + n - f - e))
		failed=$((failed + f + e))
	fi
	# A non-zero exit after the summary (a leak report, a crash at exit)
	# is a failure too.
	if [ $rc -ne 0 ] && [ $((f + e)) -eq 0 ]; then
		echo "not ok - $t exited with status $rc"
		failed=$((failed + 1))
	fi
done

# Run a script that prints "ok - ..." / "not ok - ..." lines and add them
# up; a non-zero exit with no failure line counts as one failure.
run_tap() {
	name=$1
	shift
	echo "# $name"
	"$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^not ok - ' "$log")
	passed=$((passed + p))
	failed=$((failed + f))
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc"
		failed=$((failed + 1))
	fi
}

for t in tests/cli/*.sh; do
	[ -f "$t" ] && wanted "$t" cli && run_tap "$t" sh "$t" "$BUILD"
done

# The runtime's tests build programs against BUILD/libmemprof.a.
if [ -f "$BUILD/libmemprof.a" ] && [ -x tests/runtime/run.sh ] &&
   wanted runtime runtime; then
	run_tap tests/runtime/run.sh tests/runtime/run.sh "$BUILD"
fi

echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
