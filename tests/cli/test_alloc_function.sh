#!/bin/sh
# --alloc-function=GLOB: a program's own allocation wrappers are dropped
# as allocator frames by show (raw and indexed inputs), merge (raw and
# indexed inputs) and diff; patterns match linkage or demangled names.
set -u
BUILD=${1:-build}
MD="$BUILD/memprof-data"
FX=tests/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }

B="--binary=$FX/basic.pie --binary=$FX/libfixture.so"
# The first frame of each context, in the order of show --format=json.
leaf() {
	python3 -c 'import json, sys
for c in json.load(sys.stdin)["contexts"]:
    f = c["frames"][0] if c["frames"] else {}
    print(f.get("function"))'
}
# shellcheck disable=SC2086
"$MD" show --format=json --sort=bytes $B "$FX/basic.pie.v4.profraw" 2>/dev/null | leaf >"$tmp/plain"
# shellcheck disable=SC2086
"$MD" show --format=json --sort=bytes --alloc-function='hot_*' $B \
	"$FX/basic.pie.v4.profraw" 2>/dev/null | leaf >"$tmp/raw"
if [ "$(head -n 1 "$tmp/plain")" = hot_alloc ] && [ "$(head -n 1 "$tmp/raw")" = main ] &&
   ! grep -q '^hot_' "$tmp/raw"; then
	ok "show of a raw profile drops frames matching --alloc-function='hot_*'"
else
	notok "raw show with --alloc-function: $(head -n 2 "$tmp/raw" | tr '\n' ' ')"
fi
# shellcheck disable=SC2086
"$MD" merge --no-progress -o "$tmp/all.memprof" $B "$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" show --format=json --sort=bytes --alloc-function='hot_*' "$tmp/all.memprof" |
	leaf >"$tmp/idx"
if cmp -s "$tmp/raw" "$tmp/idx"; then
	ok "show of an indexed profile drops them the same way"
else
	notok "indexed show: $(head -n 2 "$tmp/idx" | tr '\n' ' ')"
fi
# Merge from raw, and merge of the indexed file, with the rule: the same bytes.
# shellcheck disable=SC2086
"$MD" merge --no-progress -o "$tmp/r.memprof" --alloc-function='hot_*' $B \
	"$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" merge --no-progress -o "$tmp/i.memprof" --alloc-function='hot_*' "$tmp/all.memprof"
if cmp -s "$tmp/r.memprof" "$tmp/i.memprof" &&
   "$MD" show --format=json --sort=bytes "$tmp/r.memprof" | leaf | head -n 1 | grep -qx main; then
	ok "merge drops them from raw and from indexed inputs alike"
else
	notok "merge with --alloc-function: raw and indexed results differ"
fi
# A demangled pattern on the C++ fixture.
"$MD" show --format=json --alloc-function='scalar_new()' --binary="$FX/cxx.pie" \
	"$FX/cxx.v4.profraw" 2>/dev/null | leaf >"$tmp/cxx"
"$MD" show --format=json --binary="$FX/cxx.pie" "$FX/cxx.v4.profraw" 2>/dev/null | leaf >"$tmp/cxx0"
if grep -qx _Z10scalar_newv "$tmp/cxx0" && ! grep -qx _Z10scalar_newv "$tmp/cxx"; then
	ok "a pattern matches a C++ function by its demangled name"
else
	notok "demangled pattern: $(tr '\n' ' ' <"$tmp/cxx")"
fi
# diff by context prints the stacks without them (walked from the file's
# trie, the leading frames the rule hides skipped), and with them without.
lead() {
	python3 -c 'import json, sys
for r in json.load(sys.stdin)["rows"]:
    print(r["frames"][0].split(" ")[0] if r["frames"] else "")'
}
"$MD" diff --format=json --alloc-function='hot_*' "$tmp/all.memprof" "$tmp/all.memprof" |
	lead >"$tmp/dl"
"$MD" diff --format=json "$tmp/all.memprof" "$tmp/all.memprof" | lead >"$tmp/dl0"
if grep -qx hot_alloc "$tmp/dl0" && ! grep -q '^hot_' "$tmp/dl" && grep -qx main "$tmp/dl" &&
   [ "$(wc -l <"$tmp/dl")" -gt 0 ]; then
	ok "diff by context drops the leading frames matching the rule"
else
	notok "diff stacks with --alloc-function: $(tr '\n' ' ' <"$tmp/dl")"
fi
# diff --by=function sees the callers once the wrapper is an allocator frame.
"$MD" diff --by=function --format=json --alloc-function='hot_*' "$tmp/all.memprof" \
	"$tmp/all.memprof" >"$tmp/d.json" 2>"$tmp/err"
if python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
names = [r["function"] for r in rows]
assert "hot_alloc" not in names and "main" in names, names' "$tmp/d.json" 2>>"$tmp/err"; then
	ok "diff --by=function groups by the wrapper's callers"
else
	notok "diff with --alloc-function: $(cat "$tmp/err")"
fi

# A wrapper that is a function template: its demangled name starts with
# its return type, "int* my_alloc<int>(unsigned long)".  --alloc-function
# and --function match the name past it, with or without the template
# arguments (tests/cli/src/template_alloc.cc).
if command -v clang++-19 >/dev/null &&
   clang++-19 -g -O1 -fno-omit-frame-pointer -fmemory-profile \
	tests/cli/src/template_alloc.cc -o "$tmp/ta" 2>"$tmp/err" &&
   (MEMPROF_OPTIONS=log_path="$tmp/ta.prof" "$tmp/ta") 2>>"$tmp/err"; then
	"$MD" merge --no-progress -o "$tmp/ta.memprof" --binary="$tmp/ta" "$tmp"/ta.prof.* 2>/dev/null
	"$MD" show --format=json --alloc-function='my_alloc*' "$tmp/ta.memprof" | leaf >"$tmp/tleaf"
	# (and libstdc++'s start-up allocation, no frame of the program)
	if grep -qx _Z6user_ai "$tmp/tleaf" && grep -qx _Z6user_bi "$tmp/tleaf" &&
	   ! grep -q my_alloc "$tmp/tleaf"; then
		ok "--alloc-function='my_alloc*' hides a function template's frames (int* my_alloc<int>(...))"
	else
		notok "--alloc-function of a function template: leaves $(tr '\n' ' ' <"$tmp/tleaf")"
	fi
	n=
	for q in 'my_alloc<int>' 'my_alloc<int>(unsigned long)' 'int* my_alloc<int>' my_alloc; do
		n="$n $("$MD" show --format=json --function="$q" "$tmp/ta.memprof" 2>/dev/null |
			python3 -c 'import json, sys; print(len(json.load(sys.stdin)["contexts"]))' 2>/dev/null)"
	done
	if [ "$n" = " 1 1 1 2" ]; then
		ok "show --function finds a function template with or without its return type and template arguments"
	else
		notok "show --function of a function template: contexts$n (want 1 1 1 2)"
	fi
	# --alloc-function by the name alone: without the parameters, the
	# ABI tag, the template arguments (the demangled name had to match
	# whole, "tagged_alloc" matched nothing).
	"$MD" show --format=json --alloc-function=tagged_alloc --alloc-function=my_alloc \
		"$tmp/ta.memprof" 2>"$tmp/err" | leaf >"$tmp/aleaf"
	if grep -qx _Z6user_ai "$tmp/aleaf" && grep -qx _Z6user_bi "$tmp/aleaf" &&
	   ! grep -q "alloc" "$tmp/aleaf" && ! grep -q "matched no function" "$tmp/err"; then
		ok "--alloc-function=tagged_alloc, =my_alloc: the name alone, past its ABI tag and template arguments"
	else
		notok "--alloc-function by the name alone: leaves $(tr '\n' ' ' <"$tmp/aleaf") $(cat "$tmp/err")"
	fi
	# A name with an ABI tag, by its name alone; a typo of it, and of a
	# function the profile has only as a caller, gets it suggested (the
	# suggestions were the records' functions only).
	n=
	for q in tagged_alloc 'tagged_alloc[abi:cxx11](unsigned long)'; do
		n="$n $("$MD" show --format=json --function="$q" "$tmp/ta.memprof" 2>/dev/null |
			python3 -c 'import json, sys; print(len(json.load(sys.stdin)["contexts"]))' 2>/dev/null)"
	done
	"$MD" show --function=taged_alloc "$tmp/ta.memprof" >/dev/null 2>"$tmp/err"; r1=$?
	"$MD" show --function=usr_a "$tmp/ta.memprof" >/dev/null 2>"$tmp/err2"; r2=$?
	if [ "$n" = " 1 1" ] && [ "$r1$r2" = 11 ] &&
	   grep -q "closest: 'tagged_alloc\[abi:cxx11\](unsigned long)'" "$tmp/err" &&
	   grep -q "no function 'usr_a' .*'user_a(int)'" "$tmp/err2"; then
		ok "show --function: a name with an ABI tag found by its name; typos get callers suggested too"
	else
		notok "show --function of an ABI-tagged name, suggestions: contexts$n (want 1 1), $(cat "$tmp/err" "$tmp/err2")"
	fi
else
	notok "build and run tests/cli/src/template_alloc.cc: $(cat "$tmp/err")"
fi

# A pattern that matches no function of a merge's inputs (a typo hides
# nothing) is warned about; each pattern that matches, also past the
# first that did, is not.
# shellcheck disable=SC2086
"$MD" merge --no-progress -o "$tmp/w.memprof" $B --alloc-function='hot_*' \
	--alloc-function='*_alloc' --alloc-function='hot_alloc_typo*' \
	"$FX/basic.pie.v4.profraw" 2>"$tmp/err"
if [ "$(grep -c 'matched no function' "$tmp/err")" = 1 ] &&
   grep -q "warning: --alloc-function='hot_alloc_typo\*' matched no function of the inputs" "$tmp/err"; then
	ok "merge warns of an --alloc-function pattern that matched no function, and only of it"
else
	notok "unmatched --alloc-function: $(cat "$tmp/err")"
fi

# diff and overlap see every distinct frame when they match: they warn of
# a pattern that matched none too (indexed and raw inputs), and of no
# other; with --function they see one function's contexts only, and say
# nothing.
"$MD" merge --no-progress -o "$tmp/plain.memprof" $B "$FX/basic.pie.v4.profraw" 2>/dev/null
"$MD" diff --alloc-function='hot_*' --alloc-function='hot_alloc_typo*' \
	"$tmp/plain.memprof" "$tmp/plain.memprof" >/dev/null 2>"$tmp/err1"
# shellcheck disable=SC2086
"$MD" overlap $B --alloc-function='*_alloc' --alloc-function='nope*' \
	"$FX/basic.pie.v4.profraw" "$FX/basic.pie.v4.profraw" >/dev/null 2>"$tmp/err2"
"$MD" diff --function=hot_alloc --alloc-function='nope*' \
	"$tmp/plain.memprof" "$tmp/plain.memprof" >/dev/null 2>"$tmp/err3"
if [ "$(grep -c 'matched no function' "$tmp/err1")" = 1 ] &&
   grep -q "warning: --alloc-function='hot_alloc_typo\*' matched no function of the inputs" "$tmp/err1" &&
   [ "$(grep -c 'matched no function' "$tmp/err2")" = 1 ] &&
   grep -q "warning: --alloc-function='nope\*' matched no function of the inputs" "$tmp/err2" &&
   ! grep -q 'matched no function' "$tmp/err3"; then
	ok "diff and overlap warn of an --alloc-function pattern that matched no function, and only of it"
else
	notok "diff/overlap unmatched --alloc-function: $(cat "$tmp/err1" "$tmp/err2" "$tmp/err3")"
fi

# show prints a few contexts but looks at every function for the warning:
# a raw input's (symbolized whole), an indexed file's stack entries (the
# callers too: 'main' is never a leaf), an LLVM file's functions once a
# --binary names them; an LLVM file without one says nothing (a GUID
# could be any function).
"$MD" merge --no-progress --format=llvm -o "$tmp/plain.profdata" \
	--binary=$FX/basic.pie "$FX/basic.pie.v4.profraw" 2>/dev/null
i=0
for args in "$B $FX/basic.pie.v4.profraw" "$tmp/plain.memprof" \
	    "--binary=$FX/basic.pie $tmp/plain.profdata"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$MD" show --top=1 --alloc-function='main' --alloc-function='hot_*' \
		--alloc-function='nope*' $args >/dev/null 2>"$tmp/show$i"
done
"$MD" show --alloc-function='nope*' "$tmp/plain.profdata" >/dev/null 2>"$tmp/show4"
bad=
for i in 1 2 3; do
	if [ "$(grep -c 'matched no function' "$tmp/show$i")" != 1 ] ||
	   ! grep -q "warning: --alloc-function='nope\*' matched no function of the inputs" "$tmp/show$i"; then
		bad="$bad $i: $(cat "$tmp/show$i")"
	fi
done
if [ -z "$bad" ] && ! grep -q 'matched no function' "$tmp/show4"; then
	ok "show warns of an --alloc-function pattern that matched no function of raw, indexed and named LLVM inputs, and only of it"
else
	notok "show unmatched --alloc-function:$bad $(cat "$tmp/show4")"
fi
