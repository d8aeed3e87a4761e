#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install the Debian packages rseqdbg needs that are missing. As root it installs them
# (apt-get update first); otherwise it prints the command to run and fails.
#   scripts/deps.sh           building and `make check` (what the tests run: gdb, binutils'
#                             readelf, objdump and nm, python3 with python3-jsonschema for
#                             the JSON schemas, pkg-config,
#                             strace, prometheus with its promtool for the exporter's, openssl
#                             and apache2-utils' htpasswd for its TLS and passwords, and
#                             debuginfod, curl and unshare for the symbols served by build-id,
#                             bash-completion for the completion's test, zstd for a compressed
#                             core; libbz2-dev, which libdw's pkg-config file names for a static
#                             link)
#   scripts/deps.sh bench     also the benchmarks (`make bench`): bpftrace, node_exporter
#   scripts/deps.sh fuzz      also the fuzz target (`make fuzz`): clang's libFuzzer runtime
#   scripts/deps.sh format    also the format check (`make format-check`): clang-format
#   scripts/deps.sh lint      also the shell scripts' check (`make lint`): shellcheck
#   scripts/deps.sh kernels   also the kernel matrix (`make check-kernels`): QEMU, busybox
#   scripts/deps.sh package   also the Debian packages (`make deb`, `make check-package`):
#                             dpkg-dev, debhelper, lintian, git, and debootstrap for the
#                             fresh Debian root the packages are tried in
#   scripts/deps.sh fixtures  also regenerating the committed fixtures (scripts/gen-*.sh):
#                             lld and the cross binutils
#   scripts/deps.sh arm64     also the arm64 cross build (`make ARCH=arm64`): the cross
#                             compiler, the libraries' arm64 -dev packages (multiarch: the
#                             arm64 architecture is added to dpkg) and qemu-user-static to
#                             start the arm64 programs here
#   scripts/deps.sh kernels-arm64  the arm64 cross build and the arm64 kernel matrix
#                             (`make check-kernels-arm64`): qemu-system-aarch64, busybox
set -eu

PKGS="make gcc clang pkg-config libelf-dev libdw-dev zlib1g-dev libbz2-dev libzstd-dev libbpf-dev
bpftool libcmocka-dev libcapstone-dev libmicrohttpd-dev libgnutls28-dev libyaml-dev libcrypt-dev
libdebuginfod-dev gdb binutils python3 python3-jsonschema strace prometheus openssl apache2-utils
debuginfod curl util-linux bash-completion zstd"
case "${1:-}" in
"") ;;
bench) PKGS="$PKGS bpftrace prometheus-node-exporter" ;;
fuzz) PKGS="$PKGS libclang-rt-14-dev" ;;
format) PKGS="$PKGS clang-format" ;;
lint) PKGS="$PKGS shellcheck" ;;
kernels) PKGS="$PKGS qemu-system-x86 busybox-static xz-utils zstd" ;;
package) PKGS="$PKGS dpkg-dev debhelper lintian git xz-utils debootstrap" ;;
fixtures)
	PKGS="$PKGS lld binutils-i686-linux-gnu binutils-aarch64-linux-gnu
	binutils-arm-linux-gnueabihf binutils-powerpc64le-linux-gnu binutils-powerpc64-linux-gnu
	binutils-s390x-linux-gnu binutils-riscv64-linux-gnu"
	;;
arm64 | kernels-arm64)
	# Linked dynamically: libdw's own dependencies (liblzma, libbz2) come with libdw1:arm64
	# and need no -dev package; libzstd is rseqdbg's too (compressed cores).
	PKGS="$PKGS gcc-aarch64-linux-gnu libc6-dev:arm64 libelf-dev:arm64 libdw-dev:arm64
	zlib1g-dev:arm64 libzstd-dev:arm64 libbpf-dev:arm64 libcapstone-dev:arm64 libmicrohttpd-dev:arm64
	libgnutls28-dev:arm64 libyaml-dev:arm64 libcrypt-dev:arm64 libcmocka-dev:arm64
	qemu-user-static"
	[ "$1" = arm64 ] || PKGS="$PKGS qemu-system-arm busybox-static xz-utils zstd"
	;;
*) echo "deps.sh: unknown group $1 (bench, fuzz, format, lint, kernels, package, fixtures, arm64, kernels-arm64)" >&2; exit 2 ;;
esac

# The arm64 packages install beside the host's only once dpkg knows the architecture.
add_arch=""
group=${1:-}
if [ "${group#kernels-}" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	add_arch=arm64
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages:$missing" >&2
	echo "deps.sh: run as root:${add_arch:+ dpkg --add-architecture $add_arch &&}" \
	     "apt-get update && apt-get install -y$missing" >&2
	exit 1
fi
if [ -n "$add_arch" ]; then
	echo "deps.sh: adding the dpkg architecture $add_arch"
	dpkg --add-architecture "$add_arch"
fi
echo "deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
