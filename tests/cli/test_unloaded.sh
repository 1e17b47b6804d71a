#!/bin/sh
# A library closed with dlclose before the profile is written: its return
# addresses lie in no segment, as garbage past code without frame
# pointers does, but the stack comes back to mapped code for good after
# them (raw_unmapped_run_end()).  show and merge keep such a stack: the
# plugin's frames as addresses, the host's symbolized; a stack that does
# not come back is still cut (test_merge.sh, the fixtures' garbage).
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
SRC=tests/cli/src
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need python3

CF="-g -O1 -fno-omit-frame-pointer -fmemory-profile"
# shellcheck disable=SC2086
if ! command -v clang-19 >/dev/null ||
   ! clang-19 $CF -fPIC -shared "$SRC/unloaded_plugin.c" -o "$tmp/libplugin.so" 2>"$tmp/err" ||
   ! clang-19 $CF "$SRC/unloaded_host.c" -o "$tmp/host" -ldl 2>>"$tmp/err" ||
   ! MEMPROF_OPTIONS=log_path="$tmp/closed" "$tmp/host" "$tmp/libplugin.so" 1 2>>"$tmp/err" ||
   ! MEMPROF_OPTIONS=log_path="$tmp/open" "$tmp/host" "$tmp/libplugin.so" 0 2>>"$tmp/err"; then
	notok "build and run unloaded_host.c: $(cat "$tmp/err")"
	exit 0
fi
closed=$(ls "$tmp"/closed.*) open=$(ls "$tmp"/open.*)
B="--binary=$tmp/host --binary=$tmp/libplugin.so"

# The context of the plugin's 100 allocations: its frames' functions.
plugin_stack() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
c = [c for c in d["contexts"] if c["mib"]["AllocCount"] == 100]
assert len(c) == 1, len(c)
sym = d.get("symbolization")
print(" ".join(f.get("function") or ("addr" if "address" in f or "offset" in f else "?")
               for f in c[0]["frames"]),
      sym["frames"]["stacks_through_unmapped_code"] if sym else "")'
}
# shellcheck disable=SC2086
s_closed=$("$MD" show --format=json --no-demangle $B "$closed" 2>"$tmp/err" | plugin_stack 2>&1)
# shellcheck disable=SC2086
s_open=$("$MD" show --format=json --no-demangle $B "$open" 2>/dev/null | plugin_stack 2>&1)
case "$s_closed" in
"addr addr call_plugin main "*" 1")
	case "$s_open" in
	"plugin_inner plugin_alloc call_plugin main "*" 0")
		ok "show keeps a stack through a library closed before exit: the plugin's 2 frames as addresses, then call_plugin and main (open: named)" ;;
	*) notok "show, plugin kept open: $s_open" ;;
	esac ;;
*) notok "show, plugin closed: $s_closed $(cat "$tmp/err")" ;;
esac

# shellcheck disable=SC2086
"$MD" merge --no-progress -o "$tmp/m.memprof" $B "$closed" 2>"$tmp/err"
m=$("$MD" show --format=json --no-demangle "$tmp/m.memprof" 2>&1 | plugin_stack 2>&1)
case "$m" in
"addr addr call_plugin main "*)
	if grep -q "note: 1 raw stack through code unmapped before the profile was written (a library closed with dlclose?), kept" "$tmp/err"; then
		ok "merge keeps it too, and says so in a note"
	else
		notok "merge's notes: $(cat "$tmp/err")"
	fi ;;
*)
	notok "merge of the closed plugin's profile: $m $(cat "$tmp/err")" ;;
esac

# A module without a binary: show and merge say its frames stay
# unsymbolized; an LLVM export leaves them out (as llvm-profdata does),
# and says that instead.
"$MD" merge --no-progress -o "$tmp/o.memprof" --binary="$tmp/host" "$open" 2>"$tmp/err1"
"$MD" merge --no-progress --format=llvm -o "$tmp/o.profdata" --binary="$tmp/host" "$open" 2>"$tmp/err2"
w="warning: no binary with build id [0-9a-f]* for segment 0x[0-9a-f]*-0x[0-9a-f]*;"
if grep -q "$w its frames stay unsymbolized$" "$tmp/err1" &&
   grep -q "$w its frames are left out of the LLVM profile, as llvm-profdata leaves them$" "$tmp/err2" &&
   ! grep -q "stay unsymbolized" "$tmp/err2"; then
	ok "a module without a binary: its frames stay unsymbolized, or in an LLVM export are left out, and the warning says which"
else
	notok "the warnings of a module without a binary: $(cat "$tmp/err1" "$tmp/err2")"
fi

# show's summary line counts in the singular what is one.
# shellcheck disable=SC2086
"$MD" show --top=0 $B "$closed" 2>/dev/null | grep "frames:" >"$tmp/line"
if grep -q "; 1 stack through code unmapped before the profile was written, kept$" "$tmp/line" &&
   ! grep -q " 1 [a-z]*s \| 1 addresses" "$tmp/line"; then
	ok "show's symbolization line: 1 stack, not 1 stacks"
else
	notok "show's symbolization line: $(cat "$tmp/line")"
fi
