#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Boot one fetched kernel under QEMU and run a command inside, on this machine's own userspace:
# the host's root is shared read-only over virtiofs (the cloud kernels have no 9p), with
# tmpfs on /tmp, /run, /var/tmp and /dev/shm. The current directory and each -k DIR stay
# the host's even under one of those (a checkout in /tmp). The command's output comes back
# on the serial console, then the guest powers off; the exit status is the command's.
#
#   tests/kernels/boot.sh [-t SECONDS] [-l CONSOLE.LOG] [-k DIR]... RELEASE -- COMMAND [ARG...]
#
# RELEASE is a kernel release of tests/kernels/list (or a part that names one line). The
# command runs in the current directory, as root. Exit 124 on timeout, 125 when the guest
# died before the command finished (panic, no result): the console log (default
# $RSEQDBG_KERNEL_CACHE/logs/RELEASE.log, kept) says why.
# RSEQDBG_QEMU_ACCEL overrides the accelerator options (default TCG, see below).
# RSEQDBG_KERNEL_ARCH=arm64: a kernel of tests/kernels/list-arm64, booted under
# qemu-system-aarch64 on the arm64 userland of userland.sh (shared read-only over virtiofs
# like the host's root, which is mounted at /hostroot beside it): the current directory and
# each -k DIR are the host's, bound in at the same paths.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tmo=600 log=
keep=("$PWD")
while getopts t:l:k: o; do
	case $o in
	t) tmo=$OPTARG ;;
	l) log=$OPTARG ;;
	k) keep+=("$(realpath -m "$OPTARG")") ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] && [ "$2" = -- ] || { sed -n '3,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }
name=$1
shift 2

case $KARCH in
amd64) QEMU=${QEMU:-qemu-system-x86_64} ;;
arm64) QEMU=${QEMU:-qemu-system-aarch64} ;;
esac
VIRTIOFSD=${VIRTIOFSD:-/usr/lib/qemu/virtiofsd}
BUSYBOX=${BUSYBOX:-/bin/busybox} # the host's, for the archive; the guest's below
for t in "$QEMU" "$VIRTIOFSD" "$BUSYBOX"; do
	command -v "$t" >/dev/null || kdie "$t missing (scripts/deps.sh kernels)"
done
# not "| grep -q": under pipefail, busybox writing after grep quit (SIGPIPE) fails the test
grep -x switch_root <<<"$("$BUSYBOX" --list 2>/dev/null)" >/dev/null || kdie "$BUSYBOX is not busybox"
ldd "$BUSYBOX" >/dev/null 2>&1 && kdie "$BUSYBOX is not static (busybox-static)"

# The guest's busybox, and for arm64 its root
ul="" gbusybox=$BUSYBOX
if [ "$KARCH" != amd64 ]; then
	ul=$("$(dirname "$0")/userland.sh") || kdie "no $KARCH userland (tests/kernels/userland.sh)"
	gbusybox=$ul/bin/busybox
fi

line=$(klines "$name" | head -n 1)
[ -n "$line" ] || kdie "no kernel $name in $KLIST"
read -r _ pkg _ _ <<<"$line"
rel=$(krelease "$pkg")
root=$(kroot "$rel")
[ -e "$root/.fetched" ] || kdie "$rel not fetched (tests/kernels/fetch.sh $rel)"
vmlinuz=$root/boot/vmlinuz-$rel
[ -e "$vmlinuz" ] || vmlinuz=$root/usr/lib/modules/$rel/vmlinuz
mods=$root/lib/modules/$rel
[ -d "$mods" ] || mods=$root/usr/lib/modules/$rel

run=$(mktemp -d "$KCACHE/run.XXXXXX")
vfsd_pid="" ulfsd_pid="" made=()
cleanup() {
	[ -n "$vfsd_pid" ] && kill "$vfsd_pid" 2>/dev/null
	[ -n "$ulfsd_pid" ] && kill "$ulfsd_pid" 2>/dev/null
	rm -rf "$run"
	# the mount points made in the shared userland, innermost first
	for ((i = ${#made[@]} - 1; i >= 0; i--)); do rmdir "${made[i]}" 2>/dev/null; done
}
trap cleanup EXIT

# --- initramfs: busybox, the modules virtiofs needs, /init ---------------------------------
ird=$run/initramfs
mkdir -p "$ird/bin" "$ird/lib/modules" "$ird/newroot"
cp "$gbusybox" "$ird/bin/busybox"
declare -A kofile
while IFS= read -r f; do
	b=$(basename "$f")
	b=${b%%.ko*}
	kofile[${b//-/_}]=$f
done < <(find "$mods/kernel" -name '*.ko*')
declare -A loaded
order=()
# MODULE: its dependencies (from its .modinfo), then itself; built-in ones have no file
want() {
	local m=${1//-/_} f d deps
	[ -n "${loaded[$m]:-}" ] && return 0
	loaded[$m]=1
	f=${kofile[$m]:-}
	[ -n "$f" ] || return 0
	case $f in
	*.xz) xz -dc "$f" >"$ird/lib/modules/$m.ko" ;;
	*.zst) zstd -qdc "$f" >"$ird/lib/modules/$m.ko" ;;
	*.gz) gzip -dc "$f" >"$ird/lib/modules/$m.ko" ;;
	*) cp "$f" "$ird/lib/modules/$m.ko" ;;
	esac
	deps=$(readelf -p .modinfo "$ird/lib/modules/$m.ko" 2>/dev/null |
		sed -n 's/.*\]  *depends=//p')
	for d in ${deps//,/ }; do want "$d"; done
	order+=("$m")
}
for m in virtio_pci virtiofs; do want "$m"; done
printf '%s\n' "${order[@]}" >"$ird/modules"

cwd=$PWD
# The kept directories that a tmpfs of the guest would hide: bound aside before those mounts,
# back in place after them. On another architecture's userland every kept directory (and
# the run directory, where the command is) comes from the host's root, onto a mount point
# made in the userland where no tmpfs of the guest will be.
hide=() show=()
if [ -n "$ul" ]; then
	keep+=("$run")
	for d in "${keep[@]}"; do
		q=$(printf %q "$d")
		case $d in
		/tmp/* | /var/tmp/* | /run/* | /dev/shm/*) ;;
		*)
			p=$ul
			IFS=/ read -ra parts <<<"${d#/}"
			for c in "${parts[@]}"; do
				p=$p/$c
				[ -d "$p" ] && continue
				mkdir "$p" && made+=("$p")
			done
			;;
		esac
		show+=("mkdir -p \$n$q && mount -o bind /hostroot$q \$n$q")
	done
	keep=()
fi
for d in "${keep[@]}"; do
	case $d in /tmp/* | /var/tmp/* | /run/* | /dev/shm/*) ;; *) continue ;; esac
	q=$(printf %q "$d")
	hide+=("mkdir -p /keep/${#hide[@]} && mount -o bind \$n$q /keep/${#hide[@]}")
	show+=("mkdir -p \$n$q && mount -o bind /keep/${#show[@]} \$n$q")
done
{
	echo "cd $(printf %q "$cwd") || exit 125"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$run/cmd"
# the guest reaches the command file through the shared root
cat >"$ird/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in \$(cat /modules); do insmod /lib/modules/\$m.ko || echo "rseqdbg-guest: insmod \$m failed"; done
$(if [ -n "$ul" ]; then
	echo 'mkdir -p /hostroot'
	echo 'if ! mount -t virtiofs -o ro hostroot /hostroot || ! mount -t virtiofs -o ro userland /newroot; then'
else
	echo 'if ! mount -t virtiofs -o ro hostroot /newroot; then'
fi)
	echo "rseqdbg-guest: cannot mount the host root"; poweroff -f
fi
n=/newroot
$(printf '%s\n' "${hide[@]}")
mount -t tmpfs -o mode=1777 tmp \$n/tmp
mount -t tmpfs -o mode=1777 vtmp \$n/var/tmp
mount -t tmpfs run \$n/run
mount -t proc proc \$n/proc
mount -t sysfs sys \$n/sys
mount -t devtmpfs dev \$n/dev
mkdir -p \$n/dev/pts \$n/dev/shm
# what udev would add: bash's process substitution and /dev/stdin need them
ln -sf /proc/self/fd \$n/dev/fd
ln -sf /proc/self/fd/0 \$n/dev/stdin
ln -sf /proc/self/fd/1 \$n/dev/stdout
ln -sf /proc/self/fd/2 \$n/dev/stderr
mount -t devpts devpts \$n/dev/pts
mount -t tmpfs -o mode=1777 shm \$n/dev/shm
$(printf '%s\n' "${show[@]}")
mount -t tracefs tracefs \$n/sys/kernel/tracing
mount -t debugfs debugfs \$n/sys/kernel/debug
mount -t bpf bpf \$n/sys/fs/bpf
mount -t cgroup2 cgroup2 \$n/sys/fs/cgroup
# the loopback interface, for tests that talk to a local server
ip link set lo up || echo "rseqdbg-guest: cannot bring up lo"
# the cache directory and run directory stay readable: the command lives there
echo; echo "rseqdbg-guest: running"
HOME=/tmp PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
	chroot \$n /bin/sh $(printf %q "$run/cmd") </dev/console >/dev/console 2>&1
echo "rseqdbg-guest: exit \$?"
sync
poweroff -f
INIT
chmod +x "$ird/init"
(cd "$ird" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null) >"$run/initramfs.cpio"

# --- virtiofsd and QEMU ---------------------------------------------------------------------
"$VIRTIOFSD" --socket-path="$run/vfs.sock" -o source=/ -o cache=always -o sandbox=chroot \
	>"$run/virtiofsd.log" 2>&1 &
vfsd_pid=$!
ulfs=()
if [ -n "$ul" ]; then
	"$VIRTIOFSD" --socket-path="$run/ul.sock" -o source="$ul" -o cache=always \
		-o sandbox=chroot >"$run/virtiofsd-ul.log" 2>&1 &
	ulfsd_pid=$!
	ulfs=(-chardev "socket,id=ulfs,path=$run/ul.sock"
		-device "vhost-user-fs-pci,chardev=ulfs,tag=userland")
fi
for _ in $(seq 50); do
	[ -S "$run/vfs.sock" ] && { [ -z "$ul" ] || [ -S "$run/ul.sock" ]; } && break
	sleep 0.1
done
[ -S "$run/vfs.sock" ] || kdie "virtiofsd did not start: $(cat "$run/virtiofsd.log")"
[ -z "$ul" ] || [ -S "$run/ul.sock" ] ||
	kdie "virtiofsd did not start: $(cat "$run/virtiofsd-ul.log")"

# This machine's KVM cannot boot a stock kernel (emulation failure in the decompressor), so
# TCG. -cx16: this QEMU's TCG cmpxchg16b corrupts the flags, and guests oops at random
# (double faults in kmem_cache_alloc); without the instruction the kernel takes its
# fallback path. thread=single: under this QEMU's multi-threaded TCG, a breakpoint that a
# debugger writes through /proc/PID/mem while another vCPU runs that code may never take
# effect: the threads of a stepped program ran past an int3 that /proc/PID/mem showed in
# place, for 30 s, until the same byte was written once more (rseqdbg step hung on the first
# try in 5 of 5 boots of 6.1 and 7.2; one TCG thread: 10 of 10 clean).
# arm64: the virt board, every feature of the emulated CPU, the same single TCG thread.
case $KARCH in
amd64) accel=${RSEQDBG_QEMU_ACCEL:--accel tcg,thread=single -cpu max,-cx16} console=ttyS0 ;;
arm64) accel=${RSEQDBG_QEMU_ACCEL:--M virt -accel tcg,thread=single -cpu max} console=ttyAMA0 ;;
esac
if [ -z "$log" ]; then
	mkdir -p "$KCACHE/logs"
	log=$KCACHE/logs/$rel.log
fi
start=$(date +%s.%N)
# shellcheck disable=SC2086
timeout --foreground -k 5 "$tmo" "$QEMU" $accel -smp 2 -m 2G -nographic -no-reboot -nic none \
	-object memory-backend-memfd,id=mem,size=2G,share=on -numa node,memdev=mem \
	-chardev socket,id=vfs,path="$run/vfs.sock" \
	-device vhost-user-fs-pci,chardev=vfs,tag=hostroot "${ulfs[@]}" \
	-kernel "$vmlinuz" -initrd "$run/initramfs.cpio" \
	-append "console=$console panic=-1 oops=panic loglevel=4 rdinit=/init" \
	-chardev stdio,id=ser,logfile="$log" -serial chardev:ser -monitor none -display none \
	</dev/null | tr -d '\r' |
	awk '/^rseqdbg-guest: exit/ { on = 0 } on { print } /^rseqdbg-guest: running/ { on = 1 }'
qrc=${PIPESTATUS[0]}
sed -i 's/\r$//' "$log"
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
rc=$(sed -n 's/^rseqdbg-guest: exit \([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ "$qrc" = 124 ]; then
	echo "boot: $rel: timed out after ${tmo}s; console log: $log" >&2
	exit 124
fi
if [ -z "$rc" ]; then
	echo "boot: $rel: no result from the guest (qemu exit $qrc); console log: $log" >&2
	exit 125
fi
echo "boot: $rel: exit $rc in ${secs}s; console log: $log" >&2
exit "$rc"
