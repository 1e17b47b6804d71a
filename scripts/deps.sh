#!/bin/sh
# Make sure the Debian packages memprof-data needs are installed.
#   scripts/deps.sh build   what `make` needs (compiler, elfutils, zstd)
#   scripts/deps.sh check   also Check and the LLVM 19 oracles/fixture tools
# As root, missing packages are installed with apt-get; otherwise the exact
# command is printed and the script fails.
set -eu

# g++ brings libsupc++ (libstdc++-12-dev), linked statically for
# __cxa_demangle.
need_build="gcc g++ make pkg-config libdw-dev libelf-dev libzstd-dev zstd libmd-dev zlib1g-dev"
need_check="$need_build check python3 python3-yaml clang-19 llvm-19 libclang-rt-19-dev time parallel golang-go curl chromium dwz"

case "${1:-build}" in
build) want=$need_build ;;
check) want=$need_check ;;
*) echo "usage: $0 build|check" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "memprof-data: missing Debian packages:$missing" >&2
	echo "install them with:  sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "memprof-data: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends $missing >&2; then
	apt-get update >&2
	apt-get install -y --no-install-recommends $missing >&2
fi
