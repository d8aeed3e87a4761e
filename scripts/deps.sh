#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install the Debian packages rseqdbg needs that are missing. As root it installs them
# (apt-get update first); otherwise it prints the command to run and fails.
#   scripts/deps.sh           building and `make check` (what the tests run: gdb, binutils'
#                             readelf, objdump and nm, python3, pkg-config,
#                             strace, and prometheus with its promtool for the exporter's)
#   scripts/deps.sh bench     also the benchmarks (`make bench`): bpftrace, node_exporter
#   scripts/deps.sh fuzz      also the fuzz target (`make fuzz`): clang's libFuzzer runtime
#   scripts/deps.sh format    also the format check (`make format-check`): clang-format
#   scripts/deps.sh kernels   also the kernel matrix (`make check-kernels`): QEMU, busybox
#   scripts/deps.sh fixtures  also regenerating the committed fixtures (scripts/gen-*.sh):
#                             lld and the cross binutils
set -eu

PKGS="make gcc clang pkg-config libelf-dev libdw-dev zlib1g-dev libbpf-dev bpftool libcmocka-dev
libcapstone-dev libmicrohttpd-dev gdb binutils python3 strace prometheus"
case "${1:-}" in
"") ;;
bench) PKGS="$PKGS bpftrace prometheus-node-exporter" ;;
fuzz) PKGS="$PKGS libclang-rt-14-dev" ;;
format) PKGS="$PKGS clang-format" ;;
kernels) PKGS="$PKGS qemu-system-x86 busybox-static xz-utils zstd" ;;
fixtures)
	PKGS="$PKGS lld binutils-i686-linux-gnu binutils-aarch64-linux-gnu
	binutils-arm-linux-gnueabihf binutils-powerpc64le-linux-gnu binutils-powerpc64-linux-gnu
	binutils-s390x-linux-gnu binutils-riscv64-linux-gnu"
	;;
*) echo "deps.sh: unknown group $1 (bench, fuzz, format, kernels, fixtures)" >&2; exit 2 ;;
esac

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages:$missing" >&2
	echo "deps.sh: run as root: apt-get update && apt-get install -y$missing" >&2
	exit 1
fi
echo "deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
