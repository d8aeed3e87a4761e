#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The userland of the guests of another architecture than this machine's: the arm64 guests
# cannot run the host's programs, so they get a root of their own, unpacked from Debian's
# arm64 packages (nothing of theirs runs here: no maintainer scripts, a few of their links
# made by hand), and cached beside the kernels. What the integration tests run: bash,
# coreutils, python3, binutils, bpftool, strace, zstd, gdb, the libraries rseqdbg links, a static
# busybox for the initramfs.
#
#   RSEQDBG_KERNEL_ARCH=arm64 tests/kernels/userland.sh     prints the root's directory
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$KARCH" != amd64 ] || kdie "userland.sh: the amd64 guests share this machine's root"
PKGS="bash dash coreutils grep sed gawk findutils diffutils procps util-linux mount
debianutils base-files base-passwd binutils python3-minimal libpython3.11-stdlib strace
busybox-static iproute2 bpftool libc-bin libelf1 libdw1 libbpf1 libcapstone4 libmicrohttpd12 zlib1g
libyaml-0-2 libgnutls30 libcrypt1 libzstd1 zstd gdb"
key=$(echo "$KUSUITE-security $KUSUITE $PKGS" | md5sum | cut -c1-12)
ul=$KCACHE/userland-$KARCH
if [ "$(cat "$ul/.made" 2>/dev/null)" = "$key" ]; then
	echo "$ul"
	exit 0
fi
mkdir -p "$KCACHE" || kdie "cannot create $KCACHE"
# Its own apt configuration, with only the userland's suite (and its security updates): the
# kernels' suites would offer newer libraries than its C library can run.
KAPT=$KCACHE/apt-userland-$KARCH
KLIST=$KCACHE/userland-$KARCH.list
echo "$KUSUITE-security - -" >"$KLIST"
kapt_setup
ls "$KAPT"/lists/*"${KUSUITE}"_main_binary-"${KARCH}"_Packages >/dev/null 2>&1 || kapt_update
# every package the list needs, Essential ones excepted unless named
# shellcheck disable=SC2086
all=$(apt-cache "${KAPT_OPTS[@]}" depends --recurse --no-recommends --no-suggests \
	--no-conflicts --no-breaks --no-replaces --no-enhances $PKGS 2>/dev/null |
	awk '/^[a-z0-9]/ { sub(/:.*/, ""); print }' | sort -u)
debs=$KCACHE/userland-debs-$KARCH
rm -rf "$debs"
mkdir -p "$debs"
# shellcheck disable=SC2086
(cd "$debs" && apt-get "${KAPT_OPTS[@]}" -qq download $all) >&2 ||
	kdie "cannot download the $KARCH userland's packages"
rm -rf "$ul.new"
mkdir -p "$ul.new"
for p in $all; do
	f=$(ls "$debs/${p}"_*.deb 2>/dev/null | sort -V | tail -n 1)
	[ -n "$f" ] || kdie "no package file for $p in $debs"
	dpkg-deb -x "$f" "$ul.new"
done
# what maintainer scripts and alternatives would have made
cd "$ul.new"
[ -e bin/sh ] || ln -s dash bin/sh
[ -e usr/bin/awk ] || ln -s gawk usr/bin/awk
[ -e usr/bin/which ] || [ ! -e usr/bin/which.debianutils ] || ln -s which.debianutils usr/bin/which
cp usr/share/base-passwd/passwd.master etc/passwd
cp usr/share/base-passwd/group.master etc/group
mkdir -p proc sys dev tmp run var/tmp root
cd - >/dev/null
echo "$key" >"$ul.new/.made"
rm -rf "$ul"
mv "$ul.new" "$ul"
echo "$ul"
