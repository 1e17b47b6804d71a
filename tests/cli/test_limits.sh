#!/bin/sh
# Inputs that would cost memory out of proportion (issue 16, items 3 and
# 4): the first bytes are checked as they arrive, zstd is decompressed as
# it is read under a fixed cap that --max-input-size moves, and no input
# is mapped.  Peak RSS (GNU time) stays flat while the hostile input grows.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
SRC=$(pwd)/src
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need zstd python3
[ -x /usr/bin/time ] || { echo "# skipped: GNU time (Debian time) is not installed"; exit 0; }
cd "$tmp" || exit 1
# Under AddressSanitizer a process starts some 20 MiB larger and every
# allocation has redzones: the absolute bounds below get this much more.
SLACK=0
case $BUILD in *asan*) SLACK=65536 ;; esac

# Peak RSS in KiB and the exit status of a command: "KIB STATUS".
rss() {
	/usr/bin/time -f '%M' -o rss.txt "$@" >/dev/null 2>err.txt
	echo "$(tail -n 1 rss.txt) $?"
}

# /dev/zero and a stream of zeros: refused on their first bytes.
set -- $(rss timeout 20 "$MD" show /dev/zero)
if [ "$2" = 1 ] && grep -q "'/dev/zero': not a profile" err.txt && [ "$1" -lt $((65536 + SLACK)) ]; then
	ok "show /dev/zero: exit 1 on the first bytes, $1 KiB"
else
	notok "show /dev/zero: $* $(cat err.txt)"
fi
set -- $(rss timeout 20 sh -c "head -c 1000000000 /dev/zero | '$MD' show -")
if [ "$2" = 1 ] && grep -q "'-': not a profile" err.txt; then
	ok "show - of a stream of zeros: refused on its first bytes"
else
	notok "show - of zeros: $* $(cat err.txt)"
fi

# zstd bombs of zeros: 10 MB, 100 MB and 1 GB of them, refused as soon as
# the first decompressed bytes arrive; the peak does not grow with them.
peaks=""
for mb in 10 100 1000; do
	head -c ${mb}000000 /dev/zero | zstd -q -19 >zero$mb.zst
	set -- $(rss "$MD" show zero$mb.zst)
	[ "$2" = 1 ] && grep -q 'not a profile' err.txt || peaks="$peaks bad"
	peaks="$peaks $1"
done
set -- $peaks
if [ $# = 3 ] && [ "$3" -lt $((65536 + SLACK)) ] && [ "$3" -lt $(($1 * 2)) ]; then
	ok "zstd of 10 MB, 100 MB, 1 GB of zeros ($(wc -c <zero1000.zst) bytes): refused at once, peak $1, $2, $3 KiB"
else
	notok "zstd bombs of zeros: $peaks $(cat err.txt)"
fi

# A zstd frame's window is allocated before its content: ten bytes of
# header asking for 128 MiB, and a file compressed with --long=27, are
# refused with a message saying why; zstd -19 from a pipe (its window,
# 8 MiB, declared whatever the content) reads.
printf '\050\265\057\375\000\210\112\112\010\000' >bigwin.zst
{ cat "$FX/cxx.v4.profraw"; head -c 9000000 /dev/urandom; } | zstd -q --long=27 >long.zst
zstd -q -19 <"$FX/cxx.v4.profraw" >l19.zst
res=""
for f in bigwin.zst long.zst; do
	"$MD" show "$f" >/dev/null 2>err.txt
	r=$?
	[ $r = 1 ] && grep -q "$f': zstd: the frame's window is over 8 MiB" err.txt ||
		res="$res $f:$r:$(cat err.txt)"
done
if [ -z "$res" ] && "$MD" show --format=json l19.zst >l19.json 2>err.txt &&
   "$MD" show --format=json "$FX/cxx.v4.profraw" >plain.json 2>>err.txt &&
   grep -q '"contexts": 4,' l19.json && grep -q '"compressed": true' l19.json &&
   [ "$(grep -m 1 '"AllocCount"' l19.json)" = "$(grep -m 1 '"AllocCount"' plain.json)" ]; then
	ok "zstd windows over 8 MiB refused with a message (a 10-byte header, --long=27); zstd -19's 8 MiB reads"
else
	notok "zstd windows:$res $(cat err.txt)"
fi

# A raw header, then zeros: a bomb whose first bytes pass.  The cap stops
# it; peak RSS is the cap plus a constant, whatever the bomb's size.
peaks=""
for mb in 64 256; do
	{ head -c 8 "$FX/cxx.v4.profraw"; head -c ${mb}000000 /dev/zero; } |
		zstd -q -19 >hdr$mb.zst
	set -- $(rss "$MD" show --max-input-size=16M hdr$mb.zst)
	[ "$2" = 1 ] && grep -q 'larger than the input size limit of 16777216 bytes' err.txt ||
		peaks="$peaks bad:$(cat err.txt)"
	peaks="$peaks $1"
done
set -- $peaks
if [ $# = 2 ] && [ "$1" -lt $((65536 + SLACK)) ] && [ "$2" -lt $((65536 + SLACK)) ]; then
	ok "a raw header then 64 MB or 256 MB of zeros, --max-input-size=16M: refused at the cap, peak $1 and $2 KiB"
else
	notok "header bombs: $peaks"
fi
set -- $(rss "$MD" merge --no-progress --max-input-size=16M -o m.memprof hdr64.zst)
if [ "$2" = 1 ] && grep -q "'hdr64.zst': larger than the input size limit" err.txt && [ ! -e m.memprof ]; then
	ok "merge keeps the same cap (exit 1 naming the input, no output)"
else
	notok "merge of a header bomb: $* $(cat err.txt)"
fi

# The default cap, 1 GiB, and raising it.
"$MD" show --max-input-size=1K "$FX/cxx.v4.profraw" >/dev/null 2>err.txt; r1=$?
"$MD" show --max-input-size=2K "$FX/cxx.v4.profraw" >/dev/null 2>&1; r2=$?
"$MD" show --max-input-size=12 "$FX/cxx.v4.profraw" >/dev/null 2>err2.txt; r3=$?
if [ "$r1$r2$r3" = 102 ] && grep -q 'limit of 1024 bytes (--max-input-size raises it)' err.txt &&
   grep -q 'from 1K to 1T' err2.txt; then
	ok "--max-input-size: the cap, raised, and a usage error for a bad size"
else
	notok "--max-input-size: $r1 $r2 $r3 $(cat err.txt err2.txt)"
fi

# A profile in a pipe and a compressed one in a pipe read as files do.
"$MD" show --format=json "$FX/basic.pie.v4.profraw" >file.json 2>/dev/null
cat "$FX/basic.pie.v4.profraw.zst" | "$MD" show --format=json - >pipe.json 2>/dev/null
if python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(not (a["contexts"] == b["contexts"] and len(a["contexts"]) == 12))' file.json pipe.json; then
	ok "a zstd profile through a pipe: the same 12 contexts as the plain file"
else
	notok "zstd through a pipe differs from the file"
fi

# A pipe that hands over the zstd magic one byte at a time.
if (printf '\050'; sleep 0.2; tail -c +2 "$FX/basic.pie.v4.profraw.zst") |
   "$MD" show --format=json - >slow.json 2>err.txt &&
   python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(a["contexts"] != b["contexts"])' file.json slow.json; then
	ok "a pipe delivering the zstd magic in pieces: still decompressed"
else
	notok "slow pipe: $(cat err.txt)"
fi

# Inputs are read, never mapped: a file shrinking under a reader is a
# short read (an error naming the file), not SIGBUS.
if grep -n 'mmap' "$SRC"/common/*.c "$SRC"/raw/*.c "$SRC"/indexed/*.c \
	"$SRC"/llvm/*.c "$SRC"/merge/*.c "$SRC"/profile/*.c >found.txt; then
	notok "inputs mapped: $(cat found.txt)"
else
	ok "no input is mapped (read(2) only; the runtime alone maps memory)"
fi

# Deep tries (tests/fuzz/hostile.py, a chain of N nodes, each a context:
# N^2/2 frames from a file of a few bytes per node): refused when opened,
# from node depths computed in one pass, before any stack is built.  At
# scales 1, 8 and 50 (6 KB to 300 KB) the peak stays a few MiB.
peaks=""
for scale in 1 8 50; do
	python3 "$SRC/../tests/fuzz/hostile.py" h$scale $scale
	f=h$scale/idx-deep-trie.memprof
	for cmd in "show $f" "diff $f $f" "merge --no-progress -o m$scale.memprof $f"; do
		# shellcheck disable=SC2086
		set -- $(rss "$MD" $cmd)
		if [ "$2" != 1 ] || ! grep -q 'its stacks expand to [0-9]* frames, more than' err.txt; then
			peaks="$peaks bad($cmd: $2 $(cat err.txt))"
		fi
		peaks="$peaks $1"
	done
done
set -- $peaks
max=0
for p; do case $p in *[!0-9]*) max=999999999 ;; *) [ "$p" -gt $max ] && max=$p ;; esac; done
if [ $# = 9 ] && [ $max -lt $((32768 + SLACK)) ]; then
	ok "deep tries of 6 KB, 48 KB, 300 KB: show, diff and merge refuse them on opening, peaks $* KiB"
else
	notok "deep tries: $peaks"
fi

# A deep trie within the cap (hostile.py's idx-long-name: one chain of
# N nodes, each a context, N^2/2 frames, every frame one function whose
# name is 64 KiB x scale long): overlap and diff match contexts on keys
# computed once per trie node, of string ids, not on copies of the names
# (34 GB at scale 1 before) nor on expanded stacks (about 1 KiB per byte
# of the file given twice before: 70 MiB at scale 1, 521 MiB at scale 8).
# Peak RSS is at most 64 x the file plus 8 MiB for the process.
res=""
for scale in 1 2 4 8; do
	[ -d h$scale ] || python3 "$SRC/../tests/fuzz/hostile.py" h$scale $scale
	f=h$scale/idx-long-name.memprof
	size=$(wc -c <"$f")
	for cmd in "overlap $f $f" "diff --by=function $f $f"; do
		# shellcheck disable=SC2086
		set -- $(rss timeout 60 "$MD" $cmd)
		if [ "$2" != 0 ] || [ "$1" -gt $((size * 64 / 1024 + 8192 + SLACK)) ]; then
			res="$res bad($cmd: exit $2, $1 KiB for $size bytes)"
		fi
		res="$res $1"
	done
done
case $res in
*bad*) notok "deep trie, long names: $res" ;;
*) ok "a chain of 1024 to 2896 nodes with a 64 KiB to 512 KiB name on every frame: overlap and diff peak at$res KiB, within 64 x the file + 8 MiB" ;;
esac

# The same files exported: pprof keyed its locations, and the flame graph
# its frames, on the name's bytes, hashed on every frame (scale 1: 18 and
# 15 s, 34 GB hashed; pprof at scale 2: 128 s); now on the name's
# address, a lookup per frame (0.13 and 1.4 s, the graph's 67 MB
# written).  The timeout only stops a regression from running on.
res=""
for run in "1 --format=pprof" "2 --format=pprof" "1 --format=svg --value=allocs"; do
	set -- $run
	scale=$1
	shift
	# shellcheck disable=SC2086
	timeout 10 "$MD" merge --no-progress "$@" -o out.x h$scale/idx-long-name.memprof 2>err.txt ||
		res="$res [scale $scale $*: exit $? $(cat err.txt)]"
done
rm -f out.x
if [ -z "$res" ]; then
	ok "deep trie, long names: pprof (scale 1 and 2) and flame graph exports key frames by the name's address, not its bytes"
else
	notok "long-name exports:$res"
fi

# What show and diff keep of big LLVM and raw files (50,000 contexts of
# twelve frames, wide_profile.py): an LLVM file is held whole and each
# context is its MIB and where its stack is, read again when printed or
# matched; a raw file is held and parsed whole, its stacks symbolized
# again when printed, none kept.  So show --top=10 keeps ten contexts
# (it kept every stack, 88 bytes a frame: 64 MB for a 3 MB LLVM file),
# and a full show a context record each (512 bytes here, with room).
python3 "$SRC/../tests/cli/wide_profile.py" "$SRC/.." 50000 wide.profraw
B="--binary=$FX/basic.pie --binary=$FX/libfixture.so"
# shellcheck disable=SC2086
"$MD" merge --format=llvm --no-progress -o wide.llvm $B wide.profraw 2>err.txt
lsize=$(($(wc -c <wide.llvm) / 1024))
rsize=$(($(wc -c <wide.profraw) / 1024))
res=""
check_peak() {	# LABEL LIMIT-KIB COMMAND...
	label=$1 limit=$2
	shift 2
	set -- $(rss "$@")
	if [ "$2" != 0 ] || [ "$1" -gt $((limit + SLACK)) ]; then
		res="$res bad($label: exit $2, $1 KiB, over $limit)"
	else
		res="$res $label $1 KiB,"
	fi
}
check_peak "LLVM --top=10" $((2 * lsize + 8192)) "$MD" show --top=10 wide.llvm
check_peak "LLVM all" $((2 * lsize + 50000 * 512 / 1024 + 8192)) \
	"$MD" show --format=json wide.llvm
# shellcheck disable=SC2086
check_peak "raw --top=10 --binary" $((4 * rsize + 8192)) \
	"$MD" show --top=10 $B wide.profraw
case $res in
*bad*) notok "show of wide files (LLVM $lsize KiB, raw $rsize KiB):$res" ;;
*) ok "show of wide files (LLVM $lsize KiB, raw $rsize KiB):${res%,}" ;;
esac

# A 400-byte function name whose substitutions nest 40 deep, each a
# template of two copies of the one before (tests/fuzz/hostile.py): 10 TB
# demangled.  The demangler stops at 64 bytes per byte of the name: show
# prints it mangled, counts it as a name it could not read, and stays
# small (it wrote the type out until memory ran out).
bomb=h1/idx-demangle-bomb.memprof	# made above, with scale 1
set -- $(rss timeout 60 "$MD" show --format=json "$bomb")
"$MD" show --format=json "$bomb" >bomb.json 2>err.txt
"$MD" show --stats "$bomb" >bomb.stats 2>>err.txt
if [ "$2" = 0 ] && [ "$1" -lt $((65536 + SLACK)) ] &&
   grep -q '"function": "_Z1f1aIiiES_IS0_S0_ES_IS1_S1_E.*S_IS12_S12_E", "file"' bomb.json &&
   ! grep -q '"demangled"' bomb.json && grep -q '^demangle_failures: 1$' bomb.stats; then
	ok "a name that demangles to 10 TB: shown mangled, counted as unreadable, peak $1 KiB"
else
	notok "demangle bomb: $* $(cat err.txt) $(grep -c demangled bomb.json)"
fi
