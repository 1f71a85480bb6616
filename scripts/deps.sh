#!/usr/bin/env bash
# Install what building and testing pystitch needs on Debian 12 (bookworm).
# Sourced by scripts/demo and scripts/test; safe to run again.
set -euo pipefail

PYSTITCH_DEB_PACKAGES=(
	build-essential autoconf automake libtool pkg-config make
	libdw-dev libelf-dev libtraceevent-dev libcapstone-dev libzstd-dev libdeflate-dev libiberty-dev check
	libprotobuf-c-dev protobuf-c-compiler zlib1g-dev liblzma-dev nodejs default-jdk-headless
	libarchive-dev nettle-dev
	linux-perf gawk python3 python3-dev zstd time
	clang lld libclang-rt-dev clang-format cppcheck shellcheck
	chromium golang-go
)
# the pprof test decodes profiles with an npm package; nodesource's nodejs
# bundles npm and conflicts with Debian's npm package
command -v npm >/dev/null 2>&1 || PYSTITCH_DEB_PACKAGES+=(npm)

pystitch_install_deps() {
	local sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "deps: run as root or install sudo" >&2; return 1; }
		sudo="sudo"
	fi
	local missing=()
	for p in "${PYSTITCH_DEB_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		echo "deps: installing ${missing[*]}" >&2
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	else
		echo "deps: all ${#PYSTITCH_DEB_PACKAGES[@]} packages are installed; nothing to install" >&2
	fi
}

# Configure and build in the given directory (default: the source tree).
pystitch_build() {
	local top builddir
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	builddir=${1:-$top}
	shift || true
	(cd "$top" && { [ -x configure ] || autoreconf -fi >/dev/null; })
	mkdir -p "$builddir"
	(cd "$builddir" && { [ -f Makefile ] || "$top/configure" -q "$@"; } && make -s -j"$(nproc)")
}
