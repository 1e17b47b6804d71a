#!/bin/sh
# The shape of the code, checked: layers call downwards only,
#	cli -> export -> merge, profile -> symbolize, indexed, raw ->
#	hashtable -> common
# (the exports write the profile model in other tools' formats); library code (src/ but
# src/cli/ and src/runtime/) never prints, never returns an exit status,
# and has no mutable file-scope or static state, read from the symbol
# table of the built library.  The runtime shares nothing with the tool
# but include/memprof/raw_format.h.
set -u
BUILD=${1:-build}
LIBA="$BUILD/libmemprofdata.a"

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

# What each module may include from src/ (itself always).
allowed() {
	case $1 in
	common) echo "" ;;
	hashtable) echo "common" ;;
	raw|indexed|llvm) echo "common hashtable" ;;
	symbolize) echo "common hashtable raw" ;;
	merge|profile) echo "common hashtable raw indexed llvm symbolize" ;;
	export) echo "common hashtable raw indexed llvm symbolize profile" ;;
	cli) echo "common hashtable raw indexed llvm symbolize merge profile export" ;;
	esac
}

bad=0
for dir in src/*/; do
	mod=$(basename "$dir")
	[ "$mod" = runtime ] && continue
	ok_mods="$mod $(allowed "$mod")"
	for dep in $(grep -ho '#include "[a-z_]*/' "$dir"*.[ch] 2>/dev/null |
		     sed 's/#include "//; s@/@@' | sort -u); do
		[ "$dep" = memprof ] && continue
		case " $ok_mods " in
		*" $dep "*) ;;
		*) notok "src/$mod includes src/$dep/: not a layer below it"
		   bad=$((bad + 1)) ;;
		esac
	done
done
[ $bad -eq 0 ] && ok "every module includes only the layers below it"

# The runtime: no header of the tool's.
if grep -n '#include "' src/runtime/*.[ch] | grep -v '"rt.h"\|"memprof/' ; then
	notok "src/runtime includes a tool header (above)"
else
	ok "the runtime shares only include/memprof/ with the tool"
fi

lib_src=$(ls src/*/*.[ch] | grep -v '^src/cli/\|^src/runtime/')
# shellcheck disable=SC2086
if grep -nE '\b(f?printf|puts|fputs|perror|putchar|vfprintf)\s*\(|\bstd(out|err)\b|\bEXIT_[A-Z]+' $lib_src |
   grep -v '^[^:]*:[0-9]*:[[:space:]]*/\?\*' |
   grep -v 'snprintf\|fprintf(fp\|fprintf(f,\|fputs(.*, \(fp\|out\|w->out\))\|fprintf(\(out\|w->out\)' >"${TMPDIR:-/tmp}/layers.$$"; then
	notok "library code prints or returns exit statuses: $(cat "${TMPDIR:-/tmp}/layers.$$")"
else
	ok "library code neither prints nor returns exit statuses"
fi
rm -f "${TMPDIR:-/tmp}/layers.$$"

# Mutable state with static storage: symbols of the library in .data,
# .bss or their thread-local twins (.data.rel.ro is read-only once
# relocated: const tables of pointers live there).  The one exception is mp_file.c's registry of temporary
# files, which its signal handler must reach (git's tempfile.c has the
# same): nothing else can reach a handler.  Symbols a sanitizer adds
# (ASan's __odr_asan.NAME one-definition-rule markers beside every global,
# const or not) are the instrumentation's, not ours.
if [ ! -f "$LIBA" ]; then
	notok "$LIBA is not built"
else
	found=$(objdump -t "$LIBA" 2>/dev/null | awk '
		/^In archive|file format/ { if ($1 !~ /^In/) obj = $1 }
		$0 ~ / (\.data|\.bss|\.tdata|\.tbss)(\.[A-Za-z0-9_.]*)?[ \t]/ &&
		$0 !~ /\.data\.rel\.ro/ && $NF !~ /^\./ &&
		$NF !~ /^(__odr_asan|___asan_gen|__asan_|__tsan_|__sancov_)/ { print obj $NF }' |
		grep -v '^mp_file.o:\(live_tmp\|handlers_installed\)$' | sort -u)
	if [ -n "$found" ]; then
		notok "mutable static state in library code: $(echo "$found" | tr '\n' ' ')"
	else
		ok "no mutable file-scope or static variable in library code (but mp_file.c's signal registry)"
	fi
fi
