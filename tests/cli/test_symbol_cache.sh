#!/bin/sh
# The persistent symbol cache (issue 18, item 3): outputs and warnings are
# the same bytes with the cache cold, warm and off (--no-symbol-cache), for
# C and C++ fixtures with inline frames, libc's frames from its debug file
# and v1/v2 profiles; a corrupt, truncated or hostile entry is ignored and
# replaced; several merges writing one cache at once leave valid entries;
# a cache that cannot be written fails nothing; the cache lives under
# $XDG_CACHE_HOME, else ~/.cache.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need python3

# check_entries DIR: every file in DIR is a whole, valid entry named by its
# build id, and no temporary is left.  Prints what is wrong, if anything.
check_entries() {
	python3 - "$1" <<'PY'
import os, struct, sys, zlib
d = sys.argv[1]
bad = []
names = os.listdir(d)
if not names:
    bad.append("no entry")
for n in names:
    p = os.path.join(d, n)
    b = open(p, "rb").read()
    if n.startswith(".tmp-"):
        bad.append(n + ": temporary left")
        continue
    if len(b) < 112 or b[:8] != b"MPDSYMC\n":
        bad.append(n + ": bad magic or short")
        continue
    ver, flags, na, nf, sb, bs = struct.unpack_from("<6I", b, 8)
    crc = struct.unpack_from("<I", b, 100)[0]
    body = b[:100] + b"\0\0\0\0" + b[104:]
    if ver != 1 or len(b) != 112 + 16 * na + 28 * nf + sb:
        bad.append(n + ": sizes")
    elif zlib.crc32(body) != crc:
        bad.append(n + ": crc")
    elif b[32:32 + bs].hex() != n:
        bad.append(n + ": build id is " + b[32:32 + bs].hex())
print("; ".join(bad))
PY
}

# ---- the same bytes cold, warm and off --------------------------------------

# name | command line (after the command) | what it covers
cases="basic-show|show --format=json --binary=$FX/basic.pie --binary=$FX/libfixture.so $FX/basic.pie.v4.profraw|inline frames, a shared library, libc from /usr/lib/debug
basic-keep|show --keep-runtime --binary=$FX/basic.pie --binary=$FX/libfixture.so $FX/basic.pie.v4.profraw|runtime frames kept
cxx-show|show --format=json --binary=$FX/cxx.pie $FX/cxx.v4.profraw|C++, inline chains, libstdc++
cxx-merge|merge --no-progress -o OUT --binary=$FX/cxx.pie $FX/cxx.v4.profraw|C++ merged
cxx-llvm|merge --no-progress --format=llvm -o OUT --binary=$FX/cxx.pie $FX/cxx.v4.profraw|C++ exported for clang
basic-merge|merge --no-progress -o OUT --binary=$FX/basic.pie --binary=$FX/libfixture.so $FX/basic.pie.v4.profraw $FX/dump2.v4.profraw|merge
v1|show --binary=$FX/basic.clang14 --binary=$FX/libfixture-clang14.so $FX/basic.clang14.v1.profraw|a v1 profile
v2|show --binary=$FX/basic.clang16 --binary=$FX/libfixture-clang16.so $FX/basic.clang16.v2.profraw|a v2 profile
nopie|show --binary=$FX/basic.nopie $FX/basic.nopie.v4.profraw|a non-PIE executable
dump2|show --format=json --binary=$FX/dump2 $FX/dump2.v4.profraw|two profiles in one file
diff|diff --binary=$FX/basic.pie --binary=$FX/libfixture.so $FX/basic.pie.v4.profraw $FX/basic.hist.v4.profraw|diff
overlap|overlap --binary=$FX/cxx.pie $FX/cxx.v4.profraw $FX/cxx.v4.profraw|overlap"

# run NAME MODE ARGS...: the command's output and standard error in
# $tmp/NAME.MODE.{out,err}; OUT in ARGS is the output file.
run() {
	name=$1 mode=$2
	shift 2
	args=$(echo "$*" | sed "s|OUT|$tmp/$name.$mode.file|")
	# shellcheck disable=SC2086
	"$MD" $args >"$tmp/$name.$mode.out" 2>"$tmp/$name.$mode.err"
	echo $? >>"$tmp/$name.$mode.out"
	[ -f "$tmp/$name.$mode.file" ] && cat "$tmp/$name.$mode.file" >>"$tmp/$name.$mode.out"
	rm -f "$tmp/$name.$mode.file"
	sed -i "s|$tmp/$name.$mode.file|OUT|g" "$tmp/$name.$mode.err"
}

XDG_CACHE_HOME=$tmp/xdg
export XDG_CACHE_HOME
entries=$tmp/xdg/memprof-data/symbols
echo "$cases" | while IFS='|' read -r name line what; do
	cmd=${line%% *} rest=${line#* }
	rm -rf "$tmp/xdg"
	# shellcheck disable=SC2086
	run "$name" off $cmd --no-symbol-cache $rest
	if [ -e "$tmp/xdg" ]; then
		notok "$name: --no-symbol-cache wrote $tmp/xdg"
	fi
	run "$name" cold $line
	run "$name" warm $line
	# A second warm run: nothing left to write.
	before=$(ls -l --time-style=full-iso "$entries" 2>/dev/null)
	run "$name" warm2 $line
	after=$(ls -l --time-style=full-iso "$entries" 2>/dev/null)
	bad=$(check_entries "$entries")
	if cmp -s "$tmp/$name.off.out" "$tmp/$name.cold.out" &&
	   cmp -s "$tmp/$name.off.out" "$tmp/$name.warm.out" &&
	   cmp -s "$tmp/$name.off.out" "$tmp/$name.warm2.out" &&
	   cmp -s "$tmp/$name.off.err" "$tmp/$name.cold.err" &&
	   cmp -s "$tmp/$name.off.err" "$tmp/$name.warm.err" &&
	   [ -z "$bad" ] && [ "$before" = "$after" ]; then
		ok "$name ($what): output and warnings the same bytes cold, warm and off; $(ls "$entries" | wc -l) valid entries, not rewritten when warm"
	else
		notok "$name ($what): differs ($bad; rewritten: $([ "$before" = "$after" ] && echo no || echo yes)): $(diff "$tmp/$name.off.out" "$tmp/$name.warm.out" | head -5) $(diff "$tmp/$name.off.err" "$tmp/$name.warm.err" | head -5)"
	fi
done

# ---- corrupt, truncated and hostile entries ---------------------------------

SHOW="show --format=json --binary=$FX/cxx.pie $FX/cxx.v4.profraw"
rm -rf "$tmp/xdg"
run ref off "$SHOW" --no-symbol-cache
run ref cold "$SHOW"
entry=$entries/$(ls "$entries" | head -1)
for e in "$entries"/*; do
	# The cxx.pie entry is the largest: corrupt that one.
	[ "$(stat -c %s "$e")" -gt "$(stat -c %s "$entry")" ] && entry=$e
done
cp "$entry" "$tmp/good-entry"
# damage HOW: replace the entry by a damaged copy of the good one.
damage() {
	python3 - "$tmp/good-entry" "$entry" "$1" <<'PY'
import struct, sys, zlib
src, dst, how = sys.argv[1:]
b = bytearray(open(src, "rb").read())
def fix_crc():
    b[100:104] = b"\0\0\0\0"
    b[100:104] = struct.pack("<I", zlib.crc32(bytes(b)))
na, nf, sb = struct.unpack_from("<3I", b, 16)
frames = 112 + 16 * na
if how == "truncated":
    b = b[:len(b) // 2]
elif how == "flipped":
    b[len(b) // 2] ^= 0x40
elif how == "empty":
    b = b""
elif how == "garbage":
    b = bytearray((i * 131 + 7) & 0xff for i in range(len(b)))
elif how == "huge-counts":            # sizes that overflow, CRC fixed
    struct.pack_into("<3I", b, 16, 0xffffffff, 0xffffffff, 0xffffffff)
    fix_crc()
elif how == "frame-out-of-range":     # first frame past the end, CRC fixed
    struct.pack_into("<I", b, 112 + 8, nf)
    fix_crc()
elif how == "string-out-of-range":    # a function name past the strings
    struct.pack_into("<I", b, frames, sb + 1)
    fix_crc()
elif how == "unsorted":               # addresses out of order
    a0 = b[112:128]; b[112:128] = b[128:144]; b[128:144] = a0
    fix_crc()
elif how == "unterminated":           # strings not NUL-terminated
    b[-1] = ord("x")
    fix_crc()
elif how == "deep":                   # more frames than any inline chain
    struct.pack_into("<H", b, 112 + 12, 60000)
    fix_crc()
elif how == "other-build-id":         # a foreign entry under this name
    b[32] ^= 1
    fix_crc()
elif how == "other-fingerprint":      # made from other files
    b[64] ^= 1; b[84] ^= 1
    fix_crc()
elif how == "unknown-reason":         # a why-unsymbolized code never used
    for i in range(na):
        if struct.unpack_from("<H", b, 112 + 16 * i + 12)[0] == 0:
            break
    else:
        i = 0
        struct.pack_into("<H", b, 112 + 12, 0)
    b[112 + 16 * i + 14] = 0xf0
    fix_crc()
elif how == "version":
    struct.pack_into("<I", b, 8, 2)
    fix_crc()
open(dst, "wb").write(b)
PY
}
for how in truncated flipped empty garbage huge-counts frame-out-of-range \
	   string-out-of-range unsorted unterminated deep other-build-id \
	   other-fingerprint unknown-reason version; do
	damage "$how"
	run "$how" warm "$SHOW"
	bad=$(check_entries "$entries")
	# The new entry holds the good one's records (its header may differ:
	# a stale entry's replacement records a fingerprint of the contents).
	tail -c +113 "$entry" >"$tmp/new-records" 2>/dev/null
	tail -c +113 "$tmp/good-entry" >"$tmp/good-records"
	if cmp -s "$tmp/ref.off.out" "$tmp/$how.warm.out" &&
	   cmp -s "$tmp/ref.off.err" "$tmp/$how.warm.err" && [ -z "$bad" ] &&
	   cmp -s "$tmp/new-records" "$tmp/good-records"; then
		ok "an entry damaged ($how) is ignored and replaced by a valid one; output unchanged"
	else
		notok "an entry damaged ($how): $bad; $(diff "$tmp/ref.off.out" "$tmp/$how.warm.out" | head -3) $(head -c 300 "$tmp/$how.warm.err")"
	fi
done

# A symbolic link or a directory at the entry's name: not followed, no error.
rm -f "$entry"
ln -s "$tmp/good-entry" "$entry"
run link warm "$SHOW"
if cmp -s "$tmp/ref.off.out" "$tmp/link.warm.out" && [ ! -L "$entry" ] &&
   [ -z "$(check_entries "$entries")" ]; then
	ok "a symbolic link at the entry's name is not followed, and is replaced by a file"
else
	notok "symbolic link entry: $(ls -l "$entry") $(head -c 300 "$tmp/link.warm.err")"
fi
rm -f "$entry"
mkdir "$entry"
run dir warm "$SHOW"
if cmp -s "$tmp/ref.off.out" "$tmp/dir.warm.out" &&
   cmp -s "$tmp/ref.off.err" "$tmp/dir.warm.err"; then
	ok "a directory at the entry's name: output unchanged, nothing said"
else
	notok "directory entry: $(head -c 300 "$tmp/dir.warm.err")"
fi
rmdir "$entry"

# ---- concurrent writers ------------------------------------------------------

# Six merges at once into one empty cache, each of different inputs (so
# that they write different sets of addresses), then a warm merge of all.
rm -rf "$tmp/xdg"
MERGE="merge --no-progress -o OUT --binary=$FX/basic.pie --binary=$FX/libfixture.so --binary=$FX/cxx.pie --binary=$FX/dump2"
inputs="$FX/basic.pie.v4.profraw $FX/cxx.v4.profraw $FX/dump2.v4.profraw"
pids=
for i in 1 2 3 4 5 6; do
	case $i in
	1|4) in=$FX/basic.pie.v4.profraw ;;
	2|5) in=$FX/cxx.v4.profraw ;;
	*) in="$FX/dump2.v4.profraw $FX/basic.pie.v4.profraw" ;;
	esac
	run "conc$i" cold "$MERGE" "$in" &
	pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
bad=$(check_entries "$entries")
run conc off "$MERGE" --no-symbol-cache "$inputs"
run conc warm "$MERGE" "$inputs"
run conc1 off "$MERGE" --no-symbol-cache "$FX/basic.pie.v4.profraw"
if [ -z "$bad" ] && cmp -s "$tmp/conc.off.out" "$tmp/conc.warm.out" &&
   cmp -s "$tmp/conc1.off.out" "$tmp/conc1.cold.out" &&
   cmp -s "$tmp/conc1.off.out" "$tmp/conc4.cold.out"; then
	ok "six concurrent merges leave $(ls "$entries" | wc -l) valid entries, no temporary; their outputs and a warm merge are those without cache"
else
	notok "concurrent writers: $bad; $(diff "$tmp/conc.off.out" "$tmp/conc.warm.out" | head -3)"
fi

# ---- a cache that cannot be written ----------------------------------------

# A regular file where the cache's directory should be: mkdir fails.
: >"$tmp/afile"
XDG_CACHE_HOME=$tmp/afile run nodir cold "$SHOW"
if cmp -s "$tmp/ref.off.out" "$tmp/nodir.cold.out" &&
   cmp -s "$tmp/ref.off.err" "$tmp/nodir.cold.err"; then
	ok "a cache directory that cannot be made: same output, exit 0, nothing said"
else
	notok "unwritable cache: $(tail -c 300 "$tmp/nodir.cold.out") $(head -c 300 "$tmp/nodir.cold.err")"
fi
# A read-only directory (not for root, whom permissions do not stop).
mkdir -p "$tmp/ro/memprof-data/symbols"
chmod 555 "$tmp/ro/memprof-data/symbols"
XDG_CACHE_HOME=$tmp/ro run ro cold "$SHOW"
if cmp -s "$tmp/ref.off.out" "$tmp/ro.cold.out" &&
   cmp -s "$tmp/ref.off.err" "$tmp/ro.cold.err"; then
	ok "a read-only cache directory: same output, exit 0, nothing said"
else
	notok "read-only cache: $(head -c 300 "$tmp/ro.cold.err")"
fi
# A full disk, where there is /dev/full to bind... not portable: a file
# system of 64 KiB is not either; writing fails the same way as above.

# ---- where the cache is -------------------------------------------------------

rm -rf "$tmp/home"
mkdir -p "$tmp/home"
# shellcheck disable=SC2086
env -u XDG_CACHE_HOME HOME="$tmp/home" "$MD" $SHOW >/dev/null 2>&1
a=$(ls "$tmp/home/.cache/memprof-data/symbols" 2>/dev/null | wc -l)
# shellcheck disable=SC2086
env XDG_CACHE_HOME=relative/dir HOME="$tmp/home2" "$MD" $SHOW >/dev/null 2>&1
b=$(ls "$tmp/home2/.cache/memprof-data/symbols" 2>/dev/null | wc -l)
# shellcheck disable=SC2086
env -u XDG_CACHE_HOME -u HOME "$MD" $SHOW >"$tmp/nohome.out" 2>&1
echo $? >>"$tmp/nohome.out"
# shellcheck disable=SC2086
"$MD" $SHOW --no-symbol-cache >"$tmp/nocache.out" 2>&1
echo $? >>"$tmp/nocache.out"
if [ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ ! -e relative ] &&
   cmp -s "$tmp/nohome.out" "$tmp/nocache.out"; then
	ok "without XDG_CACHE_HOME (or with a relative one) the cache is ~/.cache/memprof-data/symbols; without HOME either, there is none"
else
	notok "cache location: $a entries in ~/.cache, $b with a relative XDG_CACHE_HOME"
fi
