#!/bin/sh
# Build the seed corpora of the fuzz targets from the fixtures:
#
#	tests/fuzz/seed.sh [BUILD [OUT]]	(make fuzz-seed)
#
# OUT/raw        every fixture profile, the zstd one, tests/fixtures/bad/*,
#                and synthetic v3 and v5 profiles (synth.py)
# OUT/roundtrip  the same, minus zstd (the target takes decoded bytes)
# OUT/indexed    `memprof-data merge` of each fixture, with and without its
#                binaries, of all of them at once, of nothing (an empty
#                profile), and tests/fuzz/bad-indexed/*.memprof
# OUT/show       raw and indexed seeds, a zstd-compressed indexed file, and
#                LLVM indexed profiles (ours, and llvm-profdata-19's)
#
# The committed corpora are these seeds plus what fuzzing found, minimized:
#	make fuzz-minimize	(libFuzzer -merge=1 into tests/fuzz/corpus/)
set -eu
BUILD=${1:-build}
OUT=${2:-tests/fuzz/out/seed}
MD="$BUILD/memprof-data"
FX=tests/fixtures

rm -rf "$OUT"
mkdir -p "$OUT/raw" "$OUT/roundtrip" "$OUT/indexed" "$OUT/show"

cp "$FX"/*.profraw "$FX"/*.profraw.zst "$OUT/raw/"
for f in "$FX"/bad/*; do
	case $f in *.expect|*.py|*.md) continue ;; esac
	cp "$f" "$OUT/raw/bad-$(basename "$f")"
done
python3 tests/fuzz/synth.py "$OUT/raw"
for f in "$OUT"/raw/*; do
	case $f in *.zst) continue ;; esac
	cp "$f" "$OUT/roundtrip/"
done

# profile:binaries, as tests/cli/test_merge.sh
for spec in \
	"basic.pie.v4.profraw:basic.pie libfixture.so" \
	"basic.nopie.v4.profraw:basic.nopie libfixture.so" \
	"basic.hist.v4.profraw:basic.hist libfixture-hist.so" \
	"cxx.v4.profraw:cxx.pie" \
	"dump2.v4.profraw:dump2" \
	"basic.clang14.v1.profraw:basic.clang14 libfixture-clang14.so" \
	"basic.clang16.v2.profraw:basic.clang16 libfixture-clang16.so"
do
	prof=${spec%%:*}
	bins=""
	for b in ${spec#*:}; do bins="$bins --binary=$FX/$b"; done
	# shellcheck disable=SC2086
	"$MD" merge --no-progress -o "$OUT/indexed/$prof.sym.memprof" $bins "$FX/$prof"
	"$MD" merge --no-progress -o "$OUT/indexed/$prof.nosym.memprof" "$FX/$prof"
done
"$MD" merge --no-progress -o "$OUT/indexed/all.memprof" \
	--binary="$FX/basic.pie" --binary="$FX/libfixture.so" --binary="$FX/cxx.pie" \
	--binary="$FX/dump2" "$FX/basic.pie.v4.profraw" "$FX/cxx.v4.profraw" \
	"$FX/dump2.v4.profraw" "$FX/basic.clang14.v1.profraw"
"$MD" merge --no-progress --failure-mode=warn -o "$OUT/indexed/empty.memprof" \
	"$FX/bad/version-99.profraw" 2>/dev/null
cp tests/fuzz/bad-indexed/*.memprof "$OUT/indexed/"

cp "$OUT"/raw/* "$OUT"/indexed/* "$OUT/show/"
"$MD" merge --no-progress -o "$OUT/show/cxx.memprof.zst" \
	--binary="$FX/cxx.pie" "$FX/cxx.v4.profraw"
# LLVM's indexed profiles, which show reads too: ours in each header and
# MemProf version, and llvm-profdata-19's (radix call stacks) if it is here.
for opts in "" "--llvm-header=12" "--llvm-memprof-version=0" "--llvm-full-schema"; do
	name=cxx.llvm$(echo "$opts" | tr -d ' =-' | sed 's/^llvm/./').prof
	# shellcheck disable=SC2086
	"$MD" merge --no-progress --format=llvm $opts -o "$OUT/show/$name" \
		--binary="$FX/cxx.pie" "$FX/cxx.v4.profraw"
done
if command -v llvm-profdata-19 >/dev/null 2>&1; then
	llvm-profdata-19 merge --profiled-binary "$FX/cxx.pie" \
		"$FX/cxx.v4.profraw" -o "$OUT/show/cxx.llvm-profdata.prof"
	llvm-profdata-19 merge --profiled-binary "$FX/basic.pie" \
		"$FX/basic.pie.v4.profraw" -o "$OUT/show/basic.llvm-profdata.prof"
fi

for t in raw roundtrip indexed show; do
	echo "seed/$t: $(ls "$OUT/$t" | wc -l) files, $(du -sk "$OUT/$t" | cut -f1) KB"
done
