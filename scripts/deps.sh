#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install the Debian packages rseqdbg needs that are missing. As root it installs them
# (apt-get update first); otherwise it prints the command to run.
#   scripts/deps.sh           building and `make check`
#   scripts/deps.sh kernels   also the kernel matrix (`make check-kernels`): QEMU, busybox
set -eu

PKGS="make gcc clang llvm lld pkg-config libelf-dev libdw-dev zlib1g-dev libbpf-dev bpftool
libcmocka-dev libcapstone-dev libclang-rt-14-dev gdb binutils python3 bpftrace"
case "${1:-}" in
"") ;;
kernels) PKGS="$PKGS qemu-system-x86 busybox-static xz-utils zstd" ;;
*) echo "deps.sh: unknown group $1 (kernels)" >&2; exit 2 ;;
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
