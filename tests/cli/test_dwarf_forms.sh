#!/bin/sh
# The forms debug information comes in: a program of two units built here
# with clang++-19 -fmemory-profile at -O2 as plain -g, split DWARF 5 and 4
# (-gsplit-dwarf: skeleton units in the binary, functions and inlined
# frames in a .dwo per unit) and sections compressed with zlib.  The code
# is the same, and so must be every frame `show` prints.  Sections
# compressed with zstd, which libelf 0.188 cannot read, are said so.  A .dwo that is missing is said, by name, and its
# unit's addresses keep their lines; split modules stay out of the symbol
# cache, whose key does not cover the .dwo files.  test_sym_oracle.sh
# compares every address of the split binaries with llvm-symbolizer-19.
set -u
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD="$(pwd)/$BUILD" ;; esac
MD="$BUILD/memprof-data"
SRC="$(pwd)/tests/cli/src"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need clang++-19 python3

CF="-fmemory-profile -O2 -fno-omit-frame-pointer"
for b in "s5 -gdwarf-5 -gsplit-dwarf" "s4 -gdwarf-4 -gsplit-dwarf" "s0 -g" \
	 "zl -g -gz=zlib"; do
	set -- $b
	name=$1
	shift
	# shellcheck disable=SC2086
	if ! (cd "$tmp" && clang++-19 $CF "$@" "$SRC/split_main.cc" \
		"$SRC/split_lib.cc" -o "$name" &&
	      MEMPROF_OPTIONS=log_path="$tmp/$name.raw" "./$name") 2>"$tmp/err"; then
		notok "build and run $name ($*): $(cat "$tmp/err")"
		exit 1
	fi
done
[ -f "$tmp/s5-split_lib.dwo" ] && [ -f "$tmp/s4-split_main.dwo" ] ||
	{ notok "clang++-19 -gsplit-dwarf wrote no .dwo files"; exit 1; }

export XDG_CACHE_HOME="$tmp/cache"
# One line per context: its frames, function file:line:column and inlined.
frames() {
	"$MD" show --format=json --binary="$tmp/$1" "$tmp/$1".raw.* \
		2>"$tmp/$1.err" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["contexts"]:
    print(" | ".join("%s %s:%s:%s%s" % (f.get("function", "?"), f.get("file"),
          f.get("line"), f.get("column"), " (inlined)" if f.get("inlined") else "")
          for f in c["frames"]))' | sort
}
frames s0 >"$tmp/s0.frames"
frames s5 >"$tmp/s5.frames"
frames s4 >"$tmp/s4.frames"
if grep -q '_ZL5fresh.*split_lib.cc:.* (inlined) | _Z4growi ' "$tmp/s0.frames"; then
	ok "plain -g: fresh() inlined into grow() is a frame of its own"
else
	notok "plain -g: no inlined fresh() frame: $(cat "$tmp/s0.frames")"
fi
frames zl >"$tmp/zl.frames"
for v in s5 s4 zl; do
	if [ "$(wc -l <"$tmp/s0.frames")" -ge 3 ] &&
	   cmp -s "$tmp/s0.frames" "$tmp/$v.frames"; then
		ok "$v: every frame as with plain -g ($(wc -l <"$tmp/s0.frames") contexts)"
	else
		notok "$v: frames differ from plain -g: $(diff "$tmp/s0.frames" "$tmp/$v.frames")"
	fi
done
# -gz=zstd needs a linker built with zstd; Debian 12's binutils is.
if (cd "$tmp" && clang++-19 $CF -g -gz=zstd "$SRC/split_main.cc" \
	"$SRC/split_lib.cc" -o zs &&
      MEMPROF_OPTIONS=log_path="$tmp/zs.raw" ./zs) 2>"$tmp/err"; then
	frames zs >"$tmp/zs.frames"
	if grep -q "warning: '.*zs': its DWARF is compressed with zstd (-gz=zstd), which this libelf (elfutils [0-9.]*) cannot read; using ELF symbols" "$tmp/zs.err" &&
	   grep -q '^_Z4growi None:0:0 |' "$tmp/zs.frames"; then
		ok "-gz=zstd: said why there is no DWARF; frames by ELF symbol"
	elif ! grep -q zstd "$tmp/zs.err" && cmp -s "$tmp/s0.frames" "$tmp/zs.frames"; then
		ok "-gz=zstd: read (a libelf that inflates zstd)"
	else
		notok "-gz=zstd: $(cat "$tmp/zs.err") $(cat "$tmp/zs.frames")"
	fi
else
	echo "# skipped -gz=zstd: $(cat "$tmp/err")"
fi
bid=$(python3 -c '
import json, sys
print(json.load(sys.stdin)["segments"][0]["build_id"])' <<EOT
$("$MD" show --format=json "$tmp"/s5.raw.* 2>/dev/null)
EOT
)
if [ -n "$bid" ] && [ -d "$tmp/cache" ] &&
   ! ls -R "$tmp/cache" | grep -q "$bid"; then
	ok "the split binary is not kept in the symbol cache"
else
	notok "symbol cache for the split binary ($bid): $(ls -R "$tmp/cache" 2>&1)"
fi

# The .dwo of split_lib.cc gone: said, and its unit's lines stay.
mv "$tmp/s5-split_lib.dwo" "$tmp/gone.dwo"
frames s5 >"$tmp/nodwo.frames"
if grep -q "warning: '.*s5': split DWARF file 's5-split_lib.dwo' not found (looked in '$tmp'" "$tmp/s5.err" &&
   grep -q '^_Z4growi [^|]*split_lib.cc:6:9 |' "$tmp/nodwo.frames" &&
   ! grep -q '_ZL5fresh' "$tmp/nodwo.frames" &&
   grep -q '_ZL4keep.*split_main.cc:15:.* (inlined)' "$tmp/nodwo.frames"; then
	ok "a missing .dwo: named in a warning; its unit by ELF symbol and line, the other unit whole"
else
	notok "a missing .dwo: $(cat "$tmp/s5.err") $(cat "$tmp/nodwo.frames")"
fi
