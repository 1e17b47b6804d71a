#!/bin/sh
# Fuzz regression: replay every committed corpus input (tests/fuzz/corpus/
# and the named reproducers of fixed bugs, tests/fuzz/regress/) through its target
# (BUILD/tests/fuzz-regress-*, built from tests/fuzz/ by tests/fuzz/fuzz.mk)
# within the time and heap bounds of tests/fuzz/regression.c; check that
# every must-fail indexed file of tests/fuzz/bad-indexed/ is rejected by
# `memprof-data show` with exit status 1 and its expected message; and
# report, without failing, whether the reproducers of known bugs in
# tests/fuzz/pending/ still fail.
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

for t in raw indexed roundtrip show; do
	bin="$BUILD/tests/fuzz-regress-$t"
	if [ ! -x "$bin" ]; then
		echo "# skipped: $bin is not built (include tests/fuzz/fuzz.mk)"
		continue
	fi
	dirs="tests/fuzz/corpus/$t"
	[ -d "tests/fuzz/regress/$t" ] && dirs="$dirs tests/fuzz/regress/$t"
	# shellcheck disable=SC2086
	if "$bin" $dirs >"$tmp/out" 2>"$tmp/err"; then
		ok "$(cat "$tmp/out")"
	else
		notok "fuzz_$t corpus replay (status $?): $(tail -n 5 "$tmp/err" | tr '\n' ' ')"
	fi
done

# The renderer, which the fuzz targets do not link: every input of the
# show corpus that loads gives a JSON document that parses, and text and
# YAML that are written whole.
n=0 bad=0
for f in tests/fuzz/corpus/show/*; do
	[ -f "$f" ] || continue
	"$MD" show --format=json "$f" >"$tmp/show.json" 2>/dev/null
	rc=$?
	[ $rc -eq 1 ] && continue
	n=$((n + 1))
	if [ $rc -ne 0 ] || ! python3 -m json.tool "$tmp/show.json" >/dev/null 2>&1 ||
	   ! "$MD" show --format=yaml --sort=bytes --top=3 "$f" >/dev/null 2>&1 ||
	   ! "$MD" show --sort=lifetime "$f" >/dev/null 2>&1; then
		notok "show of corpus/show/$(basename "$f") (status $rc)"
		bad=$((bad + 1))
	fi
done
[ $bad -eq 0 ] && [ $n -ge 50 ] &&
	ok "show corpus: $n loadable inputs render as text, YAML and parseable JSON"

# Must-fail indexed profiles: exit 1, "memprof-data: 'FILE': <expected>",
# and never a message that says only "malformed".
n=0 bad=0
for f in tests/fuzz/bad-indexed/*.memprof; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	want=$(cat "$f.expect")
	"$MD" show "$f" >/dev/null 2>"$tmp/err"
	rc=$?
	msg=$(cat "$tmp/err")
	case $msg in
	*"'$f': "*"$want"*) ;;
	*) rc=-1 ;;
	esac
	case $msg in
	*": malformed"|*": malformed "*) rc=-1 ;;
	esac
	if [ $rc -ne 1 ]; then
		notok "bad-indexed/$(basename "$f"): status $rc, message '$msg', want '$want'"
		bad=$((bad + 1))
	fi
done
[ $bad -eq 0 ] && [ $n -ge 30 ] &&
	ok "bad-indexed: $n must-fail indexed profiles rejected, exit 1, each with its message"

# Known bugs awaiting a fix in src/ (see tests/fuzz/pending/README.md):
# each must still fail its target, quickly; once one passes, move it to
# tests/fuzz/regress/<target>/ so that it guards the fix.
for d in tests/fuzz/pending/*/; do
	t=$(basename "$d")
	bin="$BUILD/tests/fuzz-regress-$t"
	[ -x "$bin" ] || continue
	for f in "$d"*; do
		[ -f "$f" ] || continue
		case $f in *.md) continue ;; esac
		if FUZZ_TIMEOUT=2 "$bin" "$f" >"$tmp/out" 2>&1; then
			if grep -q 'heap <=' "$tmp/out"; then
				echo "# pending $t/$(basename "$f"): passes now; move it to tests/fuzz/regress/$t/"
			else
				echo "# pending $t/$(basename "$f"): passes, but this build (ASan) does not bound the heap; judge it with a plain build"
			fi
		else
			echo "# pending $t/$(basename "$f"): still fails (known bug, tests/fuzz/pending/README.md)"
		fi
	done
done
