# tests/need.sh - sourced by test scripts that need an oracle or a
# compiler from LLVM 19.  `need TOOL...` returns when every TOOL is on the
# PATH.  Otherwise the script stops: skipped with a message on a
# developer's machine (`make check` installs the tools: scripts/deps.sh
# check), failed under CI (CI set), which must run the oracle tests.
need() {
	for _tool in "$@"; do
		command -v "$_tool" >/dev/null 2>&1 && continue
		if [ -n "${CI:-}" ]; then
			echo "not ok - $_tool is not installed (CI runs every oracle test)"
			exit 1
		fi
		echo "# skipped: $_tool is not installed; 'make check' installs it (scripts/deps.sh check)"
		exit 0
	done
}
