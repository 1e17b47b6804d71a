#!/bin/sh
# test_man_synopsis.sh BUILD_DIR - the SYNOPSIS of each man/memprof-data-CMD.1
# must be the "usage:" line that `memprof-data CMD -h` prints (git's t0450),
# and every command must have its man page.
#
# From the man page: the lines between ".SH SYNOPSIS" and the next ".SH",
# with roff taken off: request lines (.nf, .fi, .PP, comments, ...) dropped,
# except that .B and .I keep their text; \fB \fI \fR \fP \& and the
# backslash of every other escape (\- \e ...) removed.  From the command: the
# "usage: " line and any lines after it up to the first empty one.  Both
# sides are joined with single spaces before they are compared.
set -u

die() { echo "test_man_synopsis.sh: $*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BIN=$1/memprof-data
[ -x "$BIN" ] || die "'$BIN' not found; run make first"
ROOT=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
fail=0

# man_synopsis PAGE: the SYNOPSIS of PAGE as plain text, on one line.
man_synopsis() {
	awk '
		/^\.SH/ { insyn = ($2 == "SYNOPSIS" || $2 == "\"SYNOPSIS\""); next }
		!insyn { next }
		/^\.(B|I)[ \t]/ { sub(/^\.(B|I)[ \t]+/, ""); gsub(/"/, ""); print; next }
		/^[.\047]/ { next }
		{ print }
	' "$1" |
	sed -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\&//g' \
	    -e 's/\\(aq/'"'"'/g' -e 's/\\~/ /g' -e 's/\\\(.\)/\1/g' |
	tr '\n\t' '  ' | sed -e 's/  */ /g' -e 's/^ //' -e 's/ $//'
}

# usage_line CMD: what `memprof-data CMD -h` gives as its usage, on one line.
usage_line() {
	"$BIN" "$1" -h 2>&1 |
	awk '/^usage: / { on = 1; sub(/^usage: /, "") } on && /^$/ { exit } on' |
	tr '\n\t' '  ' | sed -e 's/  */ /g' -e 's/^ //' -e 's/ $//'
}

# Commands as `memprof-data --help` lists them: the lines after "Commands:"
# up to the first empty one, first word of each.
"$BIN" --help >"$TMP/help" 2>&1 || die "'$BIN --help' failed"
commands=$(awk '/^Commands:/ { on = 1; next } on && /^$/ { exit }
	on { print $1 }' "$TMP/help")
[ -n "$commands" ] || die "'$BIN --help' lists no commands"

for cmd in $commands; do
	[ -f "$ROOT/man/memprof-data-$cmd.1" ] || {
		echo "not ok - memprof-data-$cmd: command has no man page man/memprof-data-$cmd.1"
		fail=1
	}
done

for page in "$ROOT"/man/memprof-data-*.1; do
	[ -f "$page" ] || continue
	name=$(basename "$page" .1)
	cmd=${name#memprof-data-}
	if ! "$BIN" help "$cmd" >/dev/null 2>&1; then
		echo "ok - $name # skip: no command '$cmd' in this build"
		continue
	fi
	syn=$(man_synopsis "$page")
	printf '%s\n' "$syn" >"$TMP/man"
	printf '%s\n' "$(usage_line "$cmd")" >"$TMP/usage"
	if [ -z "$syn" ]; then
		echo "not ok - $name: no SYNOPSIS in $page"
		fail=1
	elif cmp -s "$TMP/man" "$TMP/usage"; then
		echo "ok - $name"
	else
		echo "not ok - $name: man page and '-h' differ"
		diff -u "$TMP/man" "$TMP/usage" | sed -e 's/^/# /' \
			-e "s|^# --- $TMP/man.*|# --- $name.1 SYNOPSIS|" \
			-e "s|^# +++ $TMP/usage.*|# +++ memprof-data $cmd -h|"
		fail=1
	fi
done
exit $fail
