#!/bin/sh
# Issue 16, item 9: text output escapes C1 and bidirectional controls as
# well as C0; --binary=DIR says it is a directory; weighted sums that stop
# at 2^64 - 1 are warned about; a weight with blanks around it is refused
# either way.
set -u
BUILD=${1:-build}
MD=$(cd "$(dirname "$BUILD/memprof-data")" && pwd)/memprof-data
FX=$(cd tests/fixtures && pwd)
ROOT=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
. tests/need.sh
need python3
cd "$tmp" || exit 1

# The cxx fixture's binary with vector_growth renamed, in every string
# table, to 13 bytes holding U+009B (CSI) in UTF-8, U+202E (right-to-left
# override) and U+2066 (left-to-right isolate); and an indexed file whose
# function name is not UTF-8 (tests/fuzz/hostile.py).
python3 - "$FX/cxx.pie" hostile.pie <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
new = b"v\xc2\x9b\xe2\x80\xaeg\xe2\x81\xa6hxy"
assert len(new) == len(b"vector_growth") and b"vector_growth" in data
open(sys.argv[2], "wb").write(data.replace(b"vector_growth", new))
PY
python3 "$ROOT/tests/fuzz/hostile.py" hostile >/dev/null
for fmt in text json yaml; do
	"$MD" show --no-demangle --format=$fmt --binary=hostile.pie "$FX/cxx.v4.profraw" >$fmt.out 2>/dev/null
	"$MD" show --format=$fmt hostile/json-invalid-utf8.memprof >u$fmt.out 2>/dev/null
done
if grep -qF 'v\u009b\u202eg\u2066hxy' text.out &&
   grep -qF 'v\u009b\u202eg\u2066hxy' json.out &&
   grep -qF 'v\u009b\u202eg\u2066hxy' yaml.out &&
   grep -qF '\xffbad\xc3(utf8' utext.out && grep -qF '\ufffdbad\ufffd(utf8' ujson.out &&
   ! LC_ALL=C grep -q "$(printf '\302\233\|\342\200\256\|\377')" text.out json.out yaml.out utext.out &&
   python3 -c 'import json, sys; json.load(open(sys.argv[1]))' json.out; then
	ok "C1 (CSI), bidirectional controls and bytes that are not UTF-8 are escaped in text, JSON and YAML"
else
	notok "escapes: $(grep -a 'hxy' text.out | head -n 1) $(grep -a 'bad' utext.out | head -n 1)"
fi

# --binary=DIR.
"$MD" show --binary="$tmp" "$FX/cxx.v4.profraw" >/dev/null 2>err
if grep -q 'is a directory, not an executable' err && ! grep -q 'file descriptor' err; then
	ok "--binary=DIR: 'is a directory'"
else
	notok "--binary=DIR: $(cat err)"
fi

# Weighted sums at 2^64 - 1: a warning.
"$MD" merge --no-progress -o sat.memprof --weight="18446744073709551615,$FX/cxx.v4.profraw" \
	--weight="5,$FX/cxx.v4.profraw" 2>err; r=$?
if [ $r = 0 ] && grep -q 'warning: 4 contexts reached 2^64 - 1' err; then
	ok "weighted sums that stop at 2^64 - 1: a warning naming how many contexts"
else
	notok "saturation: exit $r, $(cat err)"
fi
"$MD" merge --no-progress -o fine.memprof --weight="3,$FX/cxx.v4.profraw" 2>err
grep -q 'reached 2^64' err && notok "a warning without saturation" ||
	ok "no warning when nothing saturates"

# Blanks around a weight: refused before as after it.
"$MD" merge --no-progress -o b.memprof --weight=" 3,$FX/cxx.v4.profraw" 2>/dev/null; r1=$?
"$MD" merge --no-progress -o b.memprof --weight="3 ,$FX/cxx.v4.profraw" 2>/dev/null; r2=$?
"$MD" merge --no-progress -o b.memprof --weight="+3,$FX/cxx.v4.profraw" 2>/dev/null; r3=$?
if [ "$r1$r2$r3" = 222 ]; then
	ok "--weight=' 3', '3 ' and '+3': each a usage error"
else
	notok "--weight with blanks: $r1 $r2 $r3"
fi
