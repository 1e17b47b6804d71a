#!/bin/sh
# bench/llvm_hints.sh - the compiler as the judge of `merge --format=llvm`
# on a real C++ program: cppcheck (Debian's source), built with
# -fmemory-profile, run four times; its raw profiles merged by
# llvm-profdata-19 and by memprof-data, four runs and one; then every
# lib/*.cpp compiled with each profile, at clang's default thresholds
# and with -memprof-ave-lifetime-cold-threshold=1 (our merge then given
# --cold-lifetime=1).  Prints, per case, the hint lines of each and how
# many differ, and how many files' IR differ (byte for byte, less the
# ModuleID line); exits 1 if any does.
#
#	bench/llvm_hints.sh [WORKDIR]	(default bench/work/llvm_hints)
#
# Needs clang-19, llvm-19 and the cppcheck source: apt-get source
# cppcheck in WORKDIR, which wants a deb-src line; or CPPCHECK_SRC=DIR.
# About 15 minutes on two cores.  The figures are in README.md
# ("Building with the profile").
set -eu

# One compile, for xargs: PROFILE THRESHOLD FILE OUTDIR; INC from the
# environment.
use() {
	extra=
	[ "$2" = t1 ] && extra="-mllvm -memprof-ave-lifetime-cold-threshold=1"
	b=$(basename "$3" .cpp)
	# shellcheck disable=SC2086
	clang++-19 -g -O2 $INC -S -emit-llvm -mllvm -memprof-report-hinted-sizes \
		$extra -fmemory-profile-use="$1" -o "$4/$b.ll" "$3" 2>"$4/$b.err"
	grep '^Total size for allocation' "$4/$b.err" | sort >"$4/$b.hints" || true
	grep -v '^; ModuleID' "$4/$b.ll" >"$4/$b.ir"
	rm -f "$4/$b.ll"
}
if [ "${1:-}" = --use ]; then
	shift
	use "$@"
	exit
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MD=$ROOT/build/memprof-data
WORK=${1:-$ROOT/bench/work/llvm_hints}
JOBS=$(nproc)

mkdir -p "$WORK" && cd "$WORK"
[ -x "$MD" ] || { echo "build memprof-data first (make)" >&2; exit 2; }
for tool in clang++-19 llvm-profdata-19; do
	command -v $tool >/dev/null ||
		{ echo "$tool is missing: apt-get install clang-19 llvm-19" >&2; exit 2; }
done
SRC=${CPPCHECK_SRC:-}
if [ -z "$SRC" ]; then
	SRC=$(ls -d "$WORK"/cppcheck-*/ 2>/dev/null | head -n 1)
	if [ -z "$SRC" ]; then
		apt-get source cppcheck >/dev/null 2>&1 || {
			echo "no cppcheck source: add a deb-src line, e.g." >&2
			echo "  echo 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main' >/etc/apt/sources.list.d/src.list && apt-get update" >&2
			echo "or give CPPCHECK_SRC=DIR" >&2
			exit 2
		}
		SRC=$(ls -d "$WORK"/cppcheck-*/ | head -n 1)
	fi
fi
SRC=${SRC%/}
INC="-std=c++11 -I$SRC/lib -I$SRC/externals -I$SRC/externals/picojson -I$SRC/externals/simplecpp -I$SRC/externals/tinyxml2 -I$SRC/cli -DNDEBUG"

# 1. The instrumented build.
if [ ! -x cppcheck-mp ]; then
	cat >Makefile.mp <<EOF
OBJS=\$(patsubst $SRC/%.cpp,obj/%.o,\$(wildcard $SRC/lib/*.cpp $SRC/cli/*.cpp $SRC/externals/tinyxml2/*.cpp $SRC/externals/simplecpp/*.cpp))
cppcheck-mp: \$(OBJS)
	clang++-19 -fmemory-profile -o \$@ \$^
obj/%.o: $SRC/%.cpp
	@mkdir -p \$(dir \$@)
	clang++-19 -g -O2 -fno-omit-frame-pointer -fmemory-profile -w $INC -c -o \$@ \$<
EOF
	make -s -j"$JOBS" -f Makefile.mp
	ln -sf "$SRC/cfg" cfg
fi

# 2. Four runs on different inputs.
S=$SRC
if [ ! -d prof ]; then
	mkdir -p prof
	run() { i=$1; shift; MEMPROF_OPTIONS=log_path="$WORK/prof/run$i" ./cppcheck-mp --enable=all --quiet "$@" >/dev/null 2>&1 || true; }
	run 1 $S/lib/check64bit.cpp $S/lib/checkbool.cpp
	run 2 $S/samples $S/test/cfg $S/lib/color.cpp $S/lib/timer.cpp
	run 3 $S/cli/filelister.cpp $S/cli/main.cpp $S/cli/threadexecutor.cpp $S/cli/processexecutor.cpp
	run 4 $S/lib/path.cpp $S/lib/utils.cpp $S/lib/pathmatch.cpp $S/lib/mathlib.cpp $S/lib/suppressions.cpp
fi
R4=$(ls prof/run[1-4].*)
R1=$(ls prof/run1.*)

# 3. The merges: llvm-profdata-19's (L) and ours (O), thresholds def and t1;
# the first two timed (wall seconds and peak RSS, GNU time).
mkdir -p merged
for n in 4 1; do
	eval "runs=\$R$n"
	# shellcheck disable=SC2154,SC2086
	/usr/bin/time -f '%e s, %M kB' -o merged/L$n.time \
		llvm-profdata-19 merge --profiled-binary cppcheck-mp $runs -o merged/L$n.prof
	# shellcheck disable=SC2086
	/usr/bin/time -f '%e s, %M kB' -o merged/O$n.time \
		"$MD" merge --format=llvm --no-progress --binary=cppcheck-mp $runs \
		-o merged/O$n.def.prof 2>/dev/null
	# shellcheck disable=SC2086
	"$MD" merge --format=llvm --no-progress --cold-lifetime=1 \
		--binary=cppcheck-mp $runs -o merged/O$n.t1.prof 2>/dev/null
done

# 4. Every lib/*.cpp compiled with each profile.
export INC
for t in def t1; do
	for n in 4 1; do
		mkdir -p "use/$t/L$n" "use/$t/O$n"
		for f in "$SRC"/lib/*.cpp; do
			echo "merged/L$n.prof $t $f use/$t/L$n"
			echo "merged/O$n.$t.prof $t $f use/$t/O$n"
		done
	done
done >jobs.txt
xargs -P "$JOBS" -L 1 sh "$ROOT/bench/llvm_hints.sh" --use <jobs.txt

# 5. The comparison.
status=0
printf '| thresholds | runs | files | hint lines, llvm-profdata-19 | hint lines, memprof-data | hint lines that differ | files whose IR differs |\n'
printf '|---|---|---|---|---|---|---|\n'
for t in def t1; do
	for n in 4 1; do
		files=0 hl=0 ho=0 hd=0 ird=0
		for f in use/$t/L$n/*.ir; do
			b=$(basename "$f" .ir)
			files=$((files + 1))
			hl=$((hl + $(wc -l <"use/$t/L$n/$b.hints")))
			ho=$((ho + $(wc -l <"use/$t/O$n/$b.hints")))
			hd=$((hd + $(comm -3 "use/$t/L$n/$b.hints" "use/$t/O$n/$b.hints" | wc -l)))
			cmp -s "$f" "use/$t/O$n/$b.ir" || ird=$((ird + 1))
		done
		[ $hd -eq 0 ] && [ $ird -eq 0 ] || status=1
		printf '| %s | %d | %d | %d | %d | %d | %d |\n' \
			"$([ $t = def ] && echo "clang's defaults" || echo "cold lifetime 1 s")" \
			"$n" "$files" "$hl" "$ho" "$hd" "$ird"
	done
done
printf '\nprofiles: %s\n' "$(ls -l merged/*.prof | awk '{ printf "%s %d B; ", $9, $5 }')"
printf 'merges: '
for n in 4 1; do
	printf 'llvm-profdata-19, %d run(s): %s; memprof-data: %s; ' "$n" \
		"$(tail -1 merged/L$n.time)" "$(tail -1 merged/O$n.time)"
done
echo
exit $status
