#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Step benchmark, side by side in one run on the same program (the workload's counter loop,
# stepped from its hot function `worker`):
#  1. instructions per second of `rseqdbg step --quiet --count N` against gdb `stepi N`
#     (gdb -batch), same N (BENCH_STEP_N, default 50000); rseqdbg with --single-step (a ptrace
#     stop per instruction) shown too. Each tool's startup is taken out by
#     timing a run of 1 step and subtracting it. Ratio printed (goal: >= 10).
#  2. ptrace stops per critical-section passage for each section style (goal: <= 3), from
#     rseqdbg's own summary, with the section's length in bytes.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
WL="$BUILD/tests/workloads/rseq_workload"
N=${BENCH_STEP_N:-50000}
[ -x "$RSEQDBG" ] || { echo "bench-step: $RSEQDBG not built" >&2; exit 2; }
[ -x "$WL" ] || { echo "bench-step: $WL not built (make tests)" >&2; exit 2; }
PROG=("$WL" --mode counter --iters 100000000)

now() { echo "${EPOCHREALTIME/./}"; } # microseconds

# elapsed_us CMD...: wall time of a command in microseconds
elapsed_us() {
	local t0 t1
	t0=$(now)
	"$@" >/dev/null 2>&1
	t1=$(now)
	echo $((t1 - t0))
}

rd_run() { "$RSEQDBG" step --quiet "${@:2}" --from worker --count "$1" -- "${PROG[@]}"; }
gdb_run() { gdb -nx -batch -ex 'break worker' -ex run -ex "stepi $1" -ex kill --args "${PROG[@]}"; }

# rate LABEL CMD...: time CMD 1 and CMD N (CMD takes the step count first), print the
# instructions per second of the N - 1 steps beyond the first (startup taken out); sets IPS.
rate() {
	local label=$1 t1 tn
	shift
	t1=$(elapsed_us "$1" 1 "${@:2}")
	tn=$(elapsed_us "$1" "$N" "${@:2}")
	IPS=$(awk -v n="$N" -v a="$t1" -v b="$tn" \
		'BEGIN { d = (b - a) / 1e6; if (d <= 0) d = 1e-6; printf "%.0f", (n - 1) / d }')
	printf "  %-28s %10s instructions/s  (%.2f s for %d steps)\n" "$label" "$IPS" \
		"$(awk -v a="$t1" -v b="$tn" 'BEGIN { print (b - a) / 1e6 }')" "$N"
}

echo "instructions per second, $N steps from worker() of the counter workload:"
rate "rseqdbg step --quiet" rd_run
rd_ips=$IPS
rate "  the same, --single-step" rd_run --single-step
if command -v gdb >/dev/null; then
	rate "gdb -batch stepi" gdb_run
	gdb_ips=$IPS
	awk -v r="$rd_ips" -v g="$gdb_ips" 'BEGIN { printf "  ratio rseqdbg / gdb: %.1fx (goal >= 10x)\n", r / g }'
	echo "  (gdb's stepi never gets through a section: it loops in the abort handler;"
	echo "   rseqdbg completes every passage)"
else
	echo "  gdb not installed: no comparison"
fi

echo
echo "ptrace stops per section passage (goal <= 3):"
for m in counter:wl_counter_add:counter tcmalloc:wl_tcmalloc_push:tcmalloc condexit:wl_condexit:condexit; do
	IFS=: read -r mode fn lab <<<"$m"
	a=$(nm "$WL" | awk -v s="rseq_start_$lab" '$3 == s { print $1 }')
	b=$(nm "$WL" | awk -v s="rseq_post_commit_$lab" '$3 == s { print $1 }')
	len=$((16#$b - 16#$a))
	sum=$("$RSEQDBG" step --quiet --json --from "$fn" --count 1000000 --detach -- \
		"$WL" --mode "$mode" --iters 2000 --out /dev/null 2>/dev/null | grep '"type":"summary"')
	p=$(sed -n 's/.*"passages":\([0-9]*\).*/\1/p' <<<"$sum")
	s=$(sed -n 's/.*"passage_stops":\([0-9]*\).*/\1/p' <<<"$sum")
	spp=$(sed -n 's/.*"stops_per_passage":\([0-9.e+-]*\).*/\1/p' <<<"$sum")
	printf "  %-18s section %3s bytes: %6s passages, %6s stops, %s stops/passage\n" "$fn" \
		"$len" "${p:-?}" "${s:-?}" "${spp:-?}"
done
