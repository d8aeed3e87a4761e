#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The kernel matrix (make check-kernels): boot each kernel of tests/kernels/list under QEMU
# and run the privileged integration tests inside, then print one row per kernel (mode,
# tests passed/failed/skipped, time) and one total line "N passed, N failed, N skipped".
#
#   tests/kernels/matrix.sh [NAME...]     all kernels, or those matching NAME
#
#   BUILD                    build directory holding rseqdbg and the workloads (build)
#   KERNEL_TESTS             integration scripts run in every guest, instead of the list's
#                            fourth column (comma-separated) or, without one, all of:
#                            trace stat step step_safety step_threads step_hygiene scan_pid audit precision
#   KERNEL_TIMEOUT           seconds one guest may take, boot included (900)
#   KERNEL_JOBS              guests booted at the same time (3)
#   RSEQDBG_KERNEL_CACHE     downloaded kernels and console logs (/var/cache/rseqdbg-kernels)
#   RSEQDBG_REQUIRE_ALL=1    a matrix that cannot run (no QEMU, no kernels) fails
#   RSEQDBG_KERNEL_ARCH      amd64, or arm64: the kernels of tests/kernels/list-arm64, the
#                            arm64 build (BUILD build-arm64) on an arm64 userland
#
# Results land in $BUILD/kernels: results.tsv (one line per kernel) and, per kernel,
# RELEASE.log (the tests' output) and RELEASE.console.log (the whole serial console).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$KTOP" || exit 2
if [ "$KARCH" = amd64 ]; then
	export BUILD=${BUILD:-build}
else
	export BUILD=${BUILD:-build-$KARCH}
fi
case "$BUILD" in /*) ;; *) BUILD="$KTOP/$BUILD" ;; esac
ALL_TESTS="trace stat step step_safety step_threads step_hygiene scan_pid audit precision"
TMO=${KERNEL_TIMEOUT:-900}
JOBS=${KERNEL_JOBS:-3}
OUT=$BUILD/kernels

# not run at all: a skip, or with RSEQDBG_REQUIRE_ALL=1 a failure
cannot() {
	echo "SKIP: kernel matrix: $*"
	if [ "${RSEQDBG_REQUIRE_ALL:-0}" = 1 ]; then
		echo "skips are failures here (RSEQDBG_REQUIRE_ALL=1)"
		echo "0 passed, 1 failed, 1 skipped"
		exit 1
	fi
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}

qemu="qemu-system-x86_64"
[ "$KARCH" = arm64 ] && qemu="qemu-system-aarch64"
for t in $qemu /usr/lib/qemu/virtiofsd busybox; do
	command -v "$t" >/dev/null || cannot "$t missing (scripts/deps.sh kernels)"
done
ldd "$(command -v busybox)" >/dev/null 2>&1 && cannot "busybox is not static (busybox-static)"
[ "$(id -u)" -eq 0 ] || cannot "not root (virtiofsd shares / as root)"
[ -x "$BUILD/rseqdbg" ] || cannot "$BUILD/rseqdbg missing (make tests)"
if ! tests/kernels/fetch.sh "$@" >&2; then
	cannot "fetching the kernels failed (network? tests/kernels/fetch.sh)"
fi
if [ "$KARCH" != amd64 ] && ! tests/kernels/userland.sh >/dev/null; then
	cannot "the $KARCH userland could not be made (network? tests/kernels/userland.sh)"
fi
mapfile -t rels < <(tests/kernels/fetch.sh --print "$@" | awk '{ print $1 }')
[ ${#rels[@]} -gt 0 ] || cannot "no kernel of $KLIST matches ${*:-anything}"

mkdir -p "$OUT"
res=$OUT/results.tsv
printf '#release\tsuite\tpackage\tversion\tmode\tpassed\tfailed\tskipped\tseconds\tstatus\ttests\n' >"$res"
# One guest: boot RELEASE and run its tests; its exit status and seconds land in $OUT.
guest() {
	local rel=$1 tests=$2 log=$OUT/$1.log clog=$OUT/$1.console.log t0 rc try
	t0=$(date +%s)
	# A guest oops under TCG ("int3" in a tracepoint's patch site, seen once in three runs of
	# 7.2.13) is the emulator's, not the tests': boot such a kernel once more, and say so.
	for try in 1 2; do
		tests/kernels/boot.sh -t "$TMO" -l "$clog" -k "$BUILD" "$rel" -- \
			env BUILD="$BUILD" TESTS="$tests" tests/kernels/guest.sh >"$log" 2>&1
		rc=$?
		grep -q 'Kernel panic' "$clog" 2>/dev/null || break
		[ $try = 1 ] && echo "kernel $rel: guest panicked; console log kept as $clog.1; booting again" >>"$OUT/$rel.note" &&
			cp "$clog" "$clog.1"
	done
	echo "$rc $(($(date +%s) - t0))" >"$OUT/$rel.rc"
}

# Guests run JOBS at a time: a guest spends much of its time in its boot and in the tests'
# waits (two at a time kept 2 cores 53% busy), which leave the host's CPUs to the others.
tp=0 tf=0 ts=0
declare -A want
for rel in "${rels[@]}"; do
	read -r suite pkg ver tests < <(klines "$rel" | head -n 1)
	tests=${KERNEL_TESTS:-$tests}
	tests=${tests//,/ }
	want[$rel]=${tests:-$ALL_TESTS}
	rm -f "$OUT/$rel.rc" "$OUT/$rel.note"
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	echo "== kernel $rel ($suite $pkg $ver): ${want[$rel]}"
	guest "$rel" "${want[$rel]}" &
done
wait
for rel in "${rels[@]}"; do
	read -r suite pkg ver _ < <(klines "$rel" | head -n 1)
	tests=${want[$rel]}
	log=$OUT/$rel.log
	clog=$OUT/$rel.console.log
	rc=125 secs=0
	[ -r "$OUT/$rel.rc" ] && read -r rc secs <"$OUT/$rel.rc"
	echo "== kernel $rel: $tests"
	[ -r "$OUT/$rel.note" ] && cat "$OUT/$rel.note"
	cat "$log"
	mode=$(sed -n 's/^mode: //p' "$log" | head -n 1)
	total=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
	seen=$(sed -n 's/^kernel: //p' "$log" | head -n 1)
	p=0 f=0 s=0 status=ok
	if [ -n "$total" ]; then
		read -r p _ f _ s _ <<<"$total"
	fi
	if [ $rc = 124 ]; then
		status=hang
	elif grep -q 'Kernel panic' "$clog" 2>/dev/null; then
		status=panic
	elif [ -z "$total" ]; then
		status=no-result
	elif [ "$seen" != "$rel" ]; then
		status="ran-on-${seen:-unknown}"
	elif [ "$f" -gt 0 ] || [ $rc -ne 0 ]; then
		status=failed
	fi
	# a guest that did not report counts as one failure more than it told
	if [ "$status" != ok ] && [ "$status" != failed ]; then
		f=$((f + 1))
		echo "FAIL: kernel $rel: $status; console log: $clog"
	elif [ "$status" = failed ]; then
		echo "kernel $rel: failures; tests' output: $log, console log: $clog"
	fi
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rel" "$suite" "$pkg" "$ver" \
		"${mode:-unknown}" "$p" "$f" "$s" "$secs" "$status" "$tests" >>"$res"
done

echo
echo "kernel matrix:"
awk -F'\t' '!/^#/ { printf "  %-28s %-22s %4s passed %3s failed %3s skipped %5ss  %-9s %s\n",
	$1, $5, $6, $7, $8, $9, $10, $11 }' "$res"
echo "results: $res"
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
