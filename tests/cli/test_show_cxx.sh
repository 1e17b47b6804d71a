#!/bin/sh
# show on a C++ program built here with clang++-19 -fmemory-profile, whose
# frames carry long template names: every name demangled whole (as
# c++filt does, whatever its length), the text not cut, --max-frames
# eliding the middle of a stack and saying how much.
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need clang++-19 c++filt python3

if ! clang++-19 -g -O0 -fno-omit-frame-pointer -fmemory-profile \
	tests/cli/src/deep.cc -o "$tmp/deep" 2>"$tmp/err" ||
   ! (cd "$tmp" && MEMPROF_OPTIONS=log_path="$tmp/p" ./deep) 2>>"$tmp/err"; then
	notok "build and run tests/cli/src/deep.cc: $(cat "$tmp/err")"
	exit 1
fi
prof=$(ls "$tmp"/p.*)
"$MD" show --format=json --binary="$tmp/deep" "$prof" >"$tmp/show.json" 2>/dev/null
python3 - "$tmp/show.json" >"$tmp/names" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["contexts"]:
    for f in c["frames"]:
        if f.get("function", "").startswith("_ZN4Deep"):
            print(f["function"], f.get("demangled", ""), sep="\t")
PY
n=0 bad=0 longest=0
while IFS="$(printf '\t')" read -r fn dem; do
	n=$((n + 1))
	want=$(c++filt "$fn")
	[ "$dem" = "$want" ] || bad=$((bad + 1))
	[ ${#dem} -gt $longest ] && longest=${#dem}
done <"$tmp/names"
if [ $n -ge 8 ] && [ $bad -eq 0 ] && [ $longest -gt 1000 ]; then
	ok "show --format=json: $n frames demangled as c++filt does, the longest $longest bytes"
else
	notok "demangled names: $n frames, $bad differ from c++filt, longest $longest"
fi
# Text: the longest name in full, then the frame's location.
long=$(c++filt "$(sed -n 's/^\(_ZN4DeepILi0E[^	]*\)	.*/\1/p' "$tmp/names" | head -n 1)")
if "$MD" show --binary="$tmp/deep" "$prof" 2>/dev/null | grep -qF -- "- $long /"; then
	ok "show (text) prints a ${#long}-byte demangled name whole"
else
	notok "show (text) cut or lost the ${#long}-byte name"
fi
# --max-frames=4 of a 10-frame stack: 2 innermost, "6 frames elided", 2 outermost.
"$MD" show --max-frames=4 --binary="$tmp/deep" "$prof" >"$tmp/max.txt" 2>/dev/null
"$MD" show --max-frames=4 --format=json --binary="$tmp/deep" \
	"$prof" 2>/dev/null | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["contexts"]
     if c["frames"][0].get("function", "").startswith("_ZN4DeepILi0E")]
assert len(c) == 1, c
f = c[0]["frames"]
assert len(f) == 5 and f[2] == {"elided": 6}, f
assert f[0]["function"].startswith("_ZN4DeepILi0E") and f[4]["function"] == "__libc_start_call_main", f
' 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q '^      - \.\.\. 6 frames elided \.\.\.$' "$tmp/max.txt"; then
	ok "--max-frames=4 keeps 2 + 2 frames of 10 and says 6 were elided (text and JSON)"
else
	notok "--max-frames: $(cat "$tmp/err") $(grep -c elided "$tmp/max.txt")"
fi
