#!/bin/sh
# The forms debug information comes in: a program of two units built here
# with clang++-19 -fmemory-profile at -O2 as plain -g, split DWARF 5 and 4
# (-gsplit-dwarf: skeleton units in the binary, functions and inlined
# frames in a .dwo per unit) and sections compressed with zlib.  The code
# is the same, and so must be every frame `show` prints; also with zstd
# (which libelf 0.188 cannot inflate: memprof-data does, bounded), in the
# binary and in a separate debug file, and corrupt.  A .dwo that is missing is said, by name, and its
# unit's addresses keep their lines; split modules stay out of the symbol
# cache, whose key does not cover the .dwo files.  test_sym_oracle.sh
# compares every address of the split binaries with llvm-symbolizer-19.
set -u
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD="$(pwd)/$BUILD" ;; esac
MD="$BUILD/memprof-data"
SRC="$(pwd)/tests/cli/src"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

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
# One line per context of $tmp/NAME.raw.*, symbolized with $tmp/NAME and
# OPTIONS: its frames, function file:line:column and inlined.
frames() {
	name=$1
	shift
	"$MD" show --format=json --binary="$tmp/$name" "$@" "$tmp/$name".raw.* \
		2>"$tmp/$name.err" | python3 -c '
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
# -gz=zstd needs a linker built with zstd (Debian 12's binutils is);
# libelf 0.188 cannot inflate it, and memprof-data does.
if (cd "$tmp" && clang++-19 $CF -g -gz=zstd "$SRC/split_main.cc" \
	"$SRC/split_lib.cc" -o zs &&
      MEMPROF_OPTIONS=log_path="$tmp/zs.raw" ./zs) 2>"$tmp/err"; then
	frames zs >"$tmp/zs.frames"
	if cmp -s "$tmp/s0.frames" "$tmp/zs.frames" && ! grep -q warning "$tmp/zs.err"; then
		ok "-gz=zstd: every frame as with plain -g"
	else
		notok "-gz=zstd: $(cat "$tmp/zs.err") $(diff "$tmp/s0.frames" "$tmp/zs.frames")"
	fi
	# The same as a separate debug file, found by build id.
	zbid=$(python3 -c '
import json, sys
print(json.load(sys.stdin)["segments"][0]["build_id"])' <<EOT
$("$MD" show --format=json "$tmp"/zs.raw.* 2>/dev/null)
EOT
)
	mkdir -p "$tmp/dbg/.build-id/$(echo "$zbid" | cut -c1-2)"
	objcopy --only-keep-debug "$tmp/zs" \
		"$tmp/dbg/.build-id/$(echo "$zbid" | cut -c1-2)/$(echo "$zbid" | cut -c3-).debug" &&
		objcopy --strip-debug "$tmp/zs" "$tmp/zs.stripped"
	cp "$tmp"/zs.raw.* "$tmp/zs.stripped.raw.1"
	frames zs.stripped --debug-dir="$tmp/dbg" >"$tmp/zsd.frames"
	if cmp -s "$tmp/s0.frames" "$tmp/zsd.frames"; then
		ok "-gz=zstd in a separate debug file found by build id: every frame as with plain -g"
	else
		notok "-gz=zstd debug file: $(cat "$tmp/zs.stripped.err") $(diff "$tmp/s0.frames" "$tmp/zsd.frames")"
	fi
	# Hostile: .debug_info's zstd frame corrupt, or its header claiming
	# a terabyte.  Said, by reason; frames by ELF symbol; no memory spent.
	for how in corrupt huge; do
		python3 - "$tmp/zs" "$tmp/zs.$how" "$how" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shnum, shstrndx = struct.unpack_from("<HH", b, 0x3c)
sh = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + 64 * i) for i in range(shnum)]
stroff = sh[shstrndx][4]
for s in sh:
    name = bytes(b[stroff + s[0]:b.index(0, stroff + s[0])])
    if name == b".debug_info":
        assert s[2] & 0x800, "not compressed"
        if sys.argv[3] == "corrupt":
            b[s[4] + 24 + 6:s[4] + 24 + 30] = b"\xff" * 24
        else:
            struct.pack_into("<Q", b, s[4] + 8, 1 << 40)
open(sys.argv[2], "wb").write(b)
PY
		cp "$tmp"/zs.raw.* "$tmp/zs.$how.raw.1"
		/usr/bin/time -f %M -o "$tmp/rss" "$MD" show --no-symbol-cache \
			--binary="$tmp/zs.$how" "$tmp/zs.$how.raw.1" >"$tmp/out" 2>"$tmp/zh.err"
		rc=$?
		case $how in
		corrupt) want="section [0-9]* does not inflate to the [0-9]* bytes its header says" ;;
		huge) want="section [0-9]* would inflate from [0-9]* to 1099511627776 bytes, more than 64 times" ;;
		esac
		if [ $rc -eq 0 ] && [ "$(cat "$tmp/rss")" -lt 100000 ] &&
		   grep -q "warning: '.*zs.$how': its DWARF, compressed with zstd, cannot be read: $want.*; using ELF symbols" "$tmp/zh.err" &&
		   grep -q -- "- grow(int) ??:0:0" "$tmp/out"; then
			ok "-gz=zstd, $how: a warning says why; ELF symbols; $(cat "$tmp/rss") kB"
		else
			notok "-gz=zstd, $how: exit $rc, $(cat "$tmp/rss") kB: $(cat "$tmp/zh.err")"
		fi
	done
else
	echo "# skipped -gz=zstd: $(cat "$tmp/err")"
fi
# dwz: two binaries' common DWARF moved to an alternate file, which each
# names in .gnu_debugaltlink by a path that does not exist here: found by
# its build id in a --debug-dir, as libdwfl looks for it.
if command -v dwz >/dev/null 2>&1; then
	if (cd "$tmp" && clang++-19 $CF -g -gdwarf-4 "$SRC/split_main.cc" \
		"$SRC/split_lib.cc" -o dz && cp dz dz2 &&
	      MEMPROF_OPTIONS=log_path="$tmp/dz.raw" ./dz &&
	      dwz -m common.debug -M /nonexistent/memprof-data/common.debug dz dz2) 2>"$tmp/err" &&
	   readelf -S "$tmp/dz" | grep -q gnu_debugaltlink; then
		alt=$(readelf -n "$tmp/common.debug" | awk '/Build ID/ { print $3 }')
		mkdir -p "$tmp/dzdbg/.build-id/$(echo "$alt" | cut -c1-2)"
		mv "$tmp/common.debug" "$tmp/dzdbg/.build-id/$(echo "$alt" | cut -c1-2)/$(echo "$alt" | cut -c3-).debug"
		frames dz --debug-dir="$tmp/dzdbg" >"$tmp/dz.frames"
		if cmp -s "$tmp/s0.frames" "$tmp/dz.frames"; then
			ok "dwz: every frame as with plain -g, the alternate file found by build id"
		else
			notok "dwz: $(cat "$tmp/dz.err") $(diff "$tmp/s0.frames" "$tmp/dz.frames")"
		fi
	else
		notok "dwz -m: $(cat "$tmp/err")"
	fi
elif [ -n "${CI:-}" ]; then
	notok "dwz is not installed (CI runs every test)"
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
# A DWARF package made of the same units beside the binary (llvm-dwp-19):
# libdw 0.188 does not read packages; the warning says it was not used.
if command -v llvm-dwp-19 >/dev/null 2>&1 &&
   llvm-dwp-19 "$tmp/gone.dwo" "$tmp/s5-split_main.dwo" -o "$tmp/s5.dwp" 2>"$tmp/err"; then
	frames s5 --no-symbol-cache >/dev/null
	if grep -q "warning: '.*s5': the DWARF package '.*s5.dwp' beside it was not used" "$tmp/s5.err" ||
	   ! grep -q "split DWARF file" "$tmp/s5.err"; then
		ok "a DWARF package beside the binary: used, or said to be unused ($(grep -c 'DWARF package' "$tmp/s5.err") warning)"
	else
		notok "a DWARF package beside the binary: $(cat "$tmp/s5.err")"
	fi
	rm -f "$tmp/s5.dwp"
else
	notok "llvm-dwp-19: $(cat "$tmp/err")"
fi
