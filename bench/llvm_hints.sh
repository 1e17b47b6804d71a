#!/bin/sh
# bench/llvm_hints.sh - the compiler as the judge of `merge --format=llvm`
# on a real C++ program: cppcheck 2.10 (Debian's source; the default) or
# RE2 2022-06-01 (--program=re2: Debian's source and a driver of ours,
# bench/re2_driver.cc), built with -fmemory-profile, run four times; its
# raw profiles merged by llvm-profdata-19 and by memprof-data, four runs
# and one; then every source file (cppcheck: lib/*.cpp) compiled with
# each profile, at clang's default thresholds and with
# -memprof-ave-lifetime-cold-threshold=1 (our merge then given
# --cold-lifetime=1).  Prints, per case, the hint lines of each and how
# many differ, and how many files' IR differ (byte for byte, less the
# ModuleID line); exits 1 if any does.
#
#	bench/llvm_hints.sh [--program=cppcheck|re2] [WORKDIR]
#	(default WORKDIR: bench/work/llvm_hints, bench/work/llvm_hints_re2)
#
# Needs clang-19, llvm-19 and the program's source: apt-get source
# cppcheck (or re2) in WORKDIR, which wants a deb-src line; or
# CPPCHECK_SRC=DIR (RE2_SRC=DIR).  RE2's generated tables are made again
# (Debian leaves them out), which needs perl, python3-six and
# unicode-data.  cppcheck: about 15 minutes on two cores; RE2 about 8, of
# which 3.5 are its runs waiting past clang's 200 s cold threshold
# (RE2_HOLD_MS, default 205000).  The figures are in README.md
# ("Building with the profile").
set -eu

# One compile, for xargs: PROFILE THRESHOLD FILE OUTDIR; INC from the
# environment.
use() {
	extra=
	[ "$2" = t1 ] && extra="-mllvm -memprof-ave-lifetime-cold-threshold=1"
	b=$(basename "$3")
	b=${b%.*}
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

PROGRAM=cppcheck
case "${1:-}" in
--program=cppcheck | --program=re2)
	PROGRAM=${1#--program=}
	shift
	;;
--program=*)
	echo "unknown program '${1#--program=}': cppcheck or re2" >&2
	exit 2
	;;
esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MD=$ROOT/build/memprof-data
if [ "$PROGRAM" = cppcheck ]; then
	WORK=${1:-$ROOT/bench/work/llvm_hints}
else
	WORK=${1:-$ROOT/bench/work/llvm_hints_re2}
fi
JOBS=$(nproc)

mkdir -p "$WORK" && cd "$WORK"
[ -x "$MD" ] || { echo "build memprof-data first (make)" >&2; exit 2; }
for tool in clang++-19 llvm-profdata-19; do
	command -v $tool >/dev/null ||
		{ echo "$tool is missing: apt-get install clang-19 llvm-19" >&2; exit 2; }
done

# SRC: the source of package $1 in WORK (apt-get source), unless given
# ($2 names the variable that gives it).
source_of() {
	if [ -z "$SRC" ]; then
		SRC=$(ls -d "$WORK/$1"-*/ 2>/dev/null | head -n 1)
		if [ -z "$SRC" ]; then
			apt-get source "$1" >/dev/null 2>&1 || {
				echo "no $1 source: add a deb-src line, e.g." >&2
				echo "  echo 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main' >/etc/apt/sources.list.d/src.list && apt-get update" >&2
				echo "or give $2=DIR" >&2
				exit 2
			}
			SRC=$(ls -d "$WORK/$1"-*/ | head -n 1)
		fi
	fi
	SRC=${SRC%/}
}

# 1. The instrumented build: BIN, of OBJS (make's words for the objects
# under obj/ of sources under SRC, .cpp or .cc) and EXTRA (one source of
# ours), each compiled with INC.
build() {
	[ -x "$BIN" ] && return
	{
		echo "OBJS=$OBJS${EXTRA:+ obj/extra.o}"
		echo "$BIN: \$(OBJS)"
		printf '\tclang++-19 -fmemory-profile -pthread -o $@ $^\n'
		for ext in cpp cc; do
			echo "obj/%.o: $SRC/%.$ext"
			printf '\t@mkdir -p $(dir $@)\n'
			printf '\tclang++-19 -g -O2 -fno-omit-frame-pointer -fmemory-profile -w %s -c -o $@ $<\n' "$INC"
		done
		if [ -n "$EXTRA" ]; then
			echo "obj/extra.o: $EXTRA"
			printf '\t@mkdir -p $(dir $@)\n'
			printf '\tclang++-19 -g -O2 -fno-omit-frame-pointer -fmemory-profile -w %s -c -o $@ $<\n' "$INC"
		fi
	} >Makefile.mp
	make -s -j"$JOBS" -f Makefile.mp
}

if [ "$PROGRAM" = cppcheck ]; then
	SRC=${CPPCHECK_SRC:-}
	source_of cppcheck CPPCHECK_SRC
	INC="-std=c++11 -I$SRC/lib -I$SRC/externals -I$SRC/externals/picojson -I$SRC/externals/simplecpp -I$SRC/externals/tinyxml2 -I$SRC/cli -DNDEBUG"
	BIN=cppcheck-mp
	OBJS="\$(patsubst $SRC/%.cpp,obj/%.o,\$(wildcard $SRC/lib/*.cpp $SRC/cli/*.cpp $SRC/externals/tinyxml2/*.cpp $SRC/externals/simplecpp/*.cpp))"
	EXTRA=
	build
	ln -sf "$SRC/cfg" cfg
	FILES=$(ls "$SRC"/lib/*.cpp)
else
	SRC=${RE2_SRC:-}
	source_of re2 RE2_SRC
	# Debian's source leaves out the tables RE2's Makefile generates.
	if [ ! -s "$SRC/re2/unicode_groups.cc" ]; then
		if ! python3 -c 'import six' 2>/dev/null || [ ! -d /usr/share/unicode ]; then
			echo "RE2's tables need: apt-get install python3-six unicode-data" >&2
			exit 2
		fi
		(cd "$SRC/re2" && perl make_perl_groups.pl >perl_groups.cc &&
		 python3 make_unicode_casefold.py >unicode_casefold.cc &&
		 python3 make_unicode_groups.py >unicode_groups.cc)
	fi
	INC="-pthread -std=c++17 -I$SRC"
	BIN=re2-mp
	# The library's files, as its Makefile's OFILES lists them.
	FILES="$SRC/util/rune.cc $SRC/util/strutil.cc"
	OBJS="obj/util/rune.o obj/util/strutil.o"
	for f in bitstate compile dfa filtered_re2 mimics_pcre nfa onepass parse \
		perl_groups prefilter prefilter_tree prog re2 regexp set simplify \
		stringpiece tostring unicode_casefold unicode_groups; do
		FILES="$FILES $SRC/re2/$f.cc"
		OBJS="$OBJS obj/re2/$f.o"
	done
	EXTRA=$ROOT/bench/re2_driver.cc
	build
	FILES="$FILES $EXTRA"
fi

# 2. Four runs on different inputs.
if [ ! -d prof ]; then
	mkdir -p prof
	if [ "$PROGRAM" = cppcheck ]; then
		S=$SRC
		run() { i=$1; shift; MEMPROF_OPTIONS=log_path="$WORK/prof/run$i" ./cppcheck-mp --enable=all --quiet "$@" >/dev/null 2>&1 || true; }
		run 1 $S/lib/check64bit.cpp $S/lib/checkbool.cpp
		run 2 $S/samples $S/test/cfg $S/lib/color.cpp $S/lib/timer.cpp
		run 3 $S/cli/filelister.cpp $S/cli/main.cpp $S/cli/threadexecutor.cpp $S/cli/processexecutor.cpp
		run 4 $S/lib/path.cpp $S/lib/utils.cpp $S/lib/pathmatch.cpp $S/lib/mathlib.cpp $S/lib/suppressions.cpp
	else
		# At once: each keeps its long-lived objects past clang's cold
		# threshold, so that cold hints come at both thresholds.
		i=0
		for args in "1 150" "2 200" "3 250" "4 120"; do
			i=$((i + 1))
			# shellcheck disable=SC2086
			MEMPROF_OPTIONS=log_path="$WORK/prof/run$i" ./re2-mp $args \
				"${RE2_HOLD_MS:-205000}" >/dev/null &
		done
		wait
	fi
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
		llvm-profdata-19 merge --profiled-binary $BIN $runs -o merged/L$n.prof
	# shellcheck disable=SC2086
	/usr/bin/time -f '%e s, %M kB' -o merged/O$n.time \
		"$MD" merge --format=llvm --no-progress --binary=$BIN $runs \
		-o merged/O$n.def.prof 2>/dev/null
	# shellcheck disable=SC2086
	"$MD" merge --format=llvm --no-progress --cold-lifetime=1 \
		--binary=$BIN $runs -o merged/O$n.t1.prof 2>/dev/null
done

# 4. Every file of FILES compiled with each profile.
export INC
for t in def t1; do
	for n in 4 1; do
		mkdir -p "use/$t/L$n" "use/$t/O$n"
		for f in $FILES; do
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
