#!/bin/sh
# What -o replaces, and how a merge ends (issue 16, items 5 and 6): the
# replaced file's mode and owner are kept, a symbolic link is followed and
# stays, a device is written in place, as is standard output ("-",
# /dev/stdout of a pipe), a directory is refused, names of
# 255 bytes work, no temporary is left behind; --input-files errors,
# SIGHUP under nohup and SIGXFSZ under ulimit -f end as they should.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
cd "$tmp" || exit 1
IN="--no-progress --binary=$FX/cxx.pie $FX/cxx.v4.profraw"
"$MD" merge -o want.memprof $IN 2>/dev/null || notok "a plain merge"
leftovers() { ls -A "${1:-.}" | grep -c '^\.memprof-data-' ; }

# Mode: a 0600 profile stays 0600 (not world-readable again).
echo old >private.memprof
chmod 600 private.memprof
# shellcheck disable=SC2086
"$MD" merge -o private.memprof $IN 2>/dev/null
if [ "$(stat -c %a private.memprof)" = 600 ] && cmp -s private.memprof want.memprof; then
	ok "a replaced 0600 file keeps its mode"
else
	notok "mode after replace: $(stat -c %a private.memprof)"
fi
echo old >shared.memprof
chmod 664 shared.memprof
# shellcheck disable=SC2086
"$MD" merge -o shared.memprof $IN 2>/dev/null
[ "$(stat -c %a shared.memprof)" = 664 ] && ok "a replaced 0664 file keeps its mode" ||
	notok "0664 became $(stat -c %a shared.memprof)"
(umask 077; "$MD" merge -o new.memprof $IN 2>/dev/null)
[ "$(stat -c %a new.memprof)" = 600 ] && ok "a new file follows the umask (077: 0600)" ||
	notok "new file under umask 077: $(stat -c %a new.memprof)"

# Owner: as root, a file of another user stays that user's.
if [ "$(id -u)" = 0 ]; then
	echo old >theirs.memprof
	chown 65534:65534 theirs.memprof
	# shellcheck disable=SC2086
	"$MD" merge -o theirs.memprof $IN 2>/dev/null
	if [ "$(stat -c %u:%g theirs.memprof)" = 65534:65534 ]; then
		ok "as root, a replaced file keeps its owner and group"
	else
		notok "owner after replace: $(stat -c %u:%g theirs.memprof)"
	fi
fi

# A symbolic link is followed: the file it names is replaced, it stays.
mkdir real
echo old >real/target.memprof
ln -s real/target.memprof link.memprof
ln -s real/new.memprof dangling.memprof
# shellcheck disable=SC2086
"$MD" merge -o link.memprof $IN 2>/dev/null
# shellcheck disable=SC2086
"$MD" merge -o dangling.memprof $IN 2>/dev/null
if [ -L link.memprof ] && cmp -s real/target.memprof want.memprof &&
   [ -L dangling.memprof ] && cmp -s real/new.memprof want.memprof &&
   [ "$(leftovers real)" = 0 ]; then
	ok "a symbolic link at the output is followed: its target replaced, the link kept"
else
	notok "symbolic link output: $(ls -l link.memprof real)"
fi

# A device is written in place; a directory is refused.
if [ -w /dev/null ]; then
	# shellcheck disable=SC2086
	"$MD" merge -o /dev/null $IN 2>err
	if [ $? = 0 ] && [ -c /dev/null ] && [ "$(leftovers /dev)" = 0 ]; then
		ok "-o /dev/null writes to the device and leaves it a device"
	else
		notok "-o /dev/null: $(ls -l /dev/null) $(cat err)"
	fi
fi
# Standard output: "-", and /dev/stdout of a pipe (a link through /proc to
# "pipe:[N]", no path): the bytes of a file output, no file made; "-" on a
# terminal refused for a binary profile (exit 2), allowed for folded text.
# shellcheck disable=SC2086
"$MD" merge -o - $IN 2>err | cat >dash.memprof
r1=$?
# shellcheck disable=SC2086
"$MD" merge -o /dev/stdout $IN 2>err2 | cat >devstdout.memprof
if cmp -s dash.memprof want.memprof && cmp -s devstdout.memprof want.memprof &&
   [ ! -e ./- ] && [ "$(leftovers)" = 0 ] && [ "$(leftovers /proc/self/fd)" = 0 ]; then
	ok "-o - and -o /dev/stdout into a pipe: the file's bytes, no file made"
else
	notok "-o - / -o /dev/stdout into a pipe: $r1 $(cat err err2)"
fi
if command -v script >/dev/null 2>&1; then
	script -qec "\"$MD\" merge -o - $IN 2>err; echo rc=\$?" /dev/null >tty.out
	script -qec "\"$MD\" merge -o - --format=folded $IN 2>/dev/null; echo rc=\$?" \
		/dev/null >tty2.out
	if grep -q 'rc=2' tty.out && grep -q 'standard output is a terminal' err &&
	   grep -q 'rc=0' tty2.out && grep -q ';' tty2.out; then
		ok "-o - on a terminal: a binary profile refused (exit 2), folded stacks written"
	else
		notok "-o - on a terminal: $(cat tty.out err tty2.out | head -5)"
	fi
fi

mkdir adir
# shellcheck disable=SC2086
"$MD" merge -o adir $IN 2>err
r=$?
if [ $r = 1 ] && grep -q "'adir': is a directory" err && [ -d adir ]; then
	ok "-o DIRECTORY: exit 1, 'is a directory'"
else
	notok "-o DIRECTORY: exit $r, $(cat err)"
fi

# Names up to NAME_MAX: the temporary's name does not grow with them.
long=$(printf '%0255d' 0)
# shellcheck disable=SC2086
if "$MD" merge -o "$long" $IN 2>err && cmp -s "$long" want.memprof; then
	ok "an output name of 255 bytes"
else
	notok "255-byte output name: $(cat err)"
fi
[ "$(leftovers)" = 0 ] && ok "no temporary left in the output directory" ||
	notok "temporaries left: $(ls -A | grep '^\.memprof-data-')"

# An output whose directory is missing or read-only: said before the work
# (a helper's check of glslang: a whole merge, its notes, then the error).
# Without the library's binary the merge warns of its segment: that
# warning must not come, only the error naming the output.
"$MD" merge --no-progress -o nodir/x.memprof --binary="$FX/basic.pie" \
	"$FX/basic.pie.v4.profraw" 2>err; r1=$?
mkdir ro && chmod 555 ro
# (root writes anywhere: the read-only directory is tried as nobody)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$MD" merge \
		--no-progress -o ro/x.memprof "$FX/basic.pie.v4.profraw" 2>err2; r2=$?
else
	"$MD" merge --no-progress -o ro/x.memprof "$FX/basic.pie.v4.profraw" 2>err2; r2=$?
fi
"$MD" diff --format=svg -o nodir/d.svg "$FX/basic.memprof" "$FX/basic.memprof" 2>err3; r3=$?
if [ "$r1$r2$r3" = 111 ] && [ "$(wc -l <err)" = 1 ] &&
   grep -q "nodir/x.memprof': cannot create a temporary file in nodir: No such file" err &&
   grep -q "ro/x.memprof': cannot create a temporary file in ro: Permission denied" err2 &&
   grep -q "nodir/d.svg': cannot create a temporary file in nodir" err3; then
	ok "an output in a missing or read-only directory: exit 1 naming it, before any work"
else
	notok "output directory checked first: $r1 $r2 $r3: $(cat err err2 err3)"
fi

# --input-files: a directory, a NUL byte, a missing list.
"$MD" merge --no-progress -o l.memprof --input-files="$tmp" 2>err; r1=$?
printf '%s\0junk\n' "$FX/cxx.v4.profraw" >nul.txt
"$MD" merge --no-progress -o l.memprof --input-files=nul.txt 2>err2; r2=$?
"$MD" merge --no-progress -o l.memprof --input-files=missing.txt 2>err3; r3=$?
if [ "$r1$r2$r3" = 111 ] && grep -q 'Is a directory' err &&
   grep -q 'line 1: NUL byte' err2 && grep -q "missing.txt" err3 && [ ! -e l.memprof ]; then
	ok "--input-files: a directory, a NUL byte, a missing list each exit 1 naming it, no output"
else
	notok "--input-files errors: $r1 $r2 $r3: $(cat err err2 err3)"
fi

# SIGHUP under nohup: the merge, blocked opening a FIFO for its output,
# is sent SIGHUP; an ignored SIGHUP must stay ignored.
mkfifo out.fifo
# shellcheck disable=SC2086
(trap '' HUP; exec "$MD" merge -o out.fifo $IN) 2>/dev/null &
pid=$!
sleep 1
kill -HUP $pid 2>/dev/null
cat out.fifo >from.fifo &
cat_pid=$!
wait $pid
r=$?
wait $cat_pid
if [ $r = 0 ] && cmp -s from.fifo want.memprof; then
	ok "nohup: an ignored SIGHUP stays ignored, the merge completes (into a FIFO, written in place)"
else
	notok "merge after SIGHUP with SIGHUP ignored: exit $r"
fi

# SIGXFSZ: past ulimit -f the write fails with a message, exit 1, and the
# temporary is removed (the LLVM export writes as it goes, through a
# buffer: 1.7 kB here, past the 1 kB limit).
for fmt in svg llvm; do
	# shellcheck disable=SC2086
	(ulimit -f 1; exec "$MD" merge --format=$fmt -o big.$fmt $IN) 2>err
	r=$?
	if [ $r = 1 ] && grep -q 'File too large' err && [ ! -e big.$fmt ] &&
	   [ "$(leftovers)" = 0 ]; then
		ok "ulimit -f, --format=$fmt: exit 1 with 'File too large', no output, no temporary"
	else
		notok "ulimit -f, --format=$fmt: exit $r, $(cat err)"
	fi
done
