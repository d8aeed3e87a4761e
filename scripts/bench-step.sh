#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Step benchmark, every tool side by side in one run, on the same programs and counts:
#  1. instructions per second of `rseqdbg step --quiet --count N` (default: thread held on one
#     CPU with rseqdbg; --no-pin; --single-step) against gdb `stepi N` (gdb -batch), and the
#     ptrace stops per instruction of each rseqdbg mode, from
#       a. the first instruction of the workload (the dynamic loader, then libc's start-up);
#       b. the same, through the whole dynamic loader: as many instructions as there are from
#          the first instruction to main (counted by a run of `step --until main`);
#       c. its hot function `worker` (the counter loop, through rseq critical sections);
#       d. the first instruction of the largest static non-PIE program under /usr that carries
#          rseq sections (tcmalloc), if there is one.
#     Each tool's start-up is taken out by timing a run of 1 step and subtracting it. Each
#     figure is the median of BENCH_REPEAT rounds (default 3), the tools interleaved within a
#     round so a busy machine slows them alike. Goals: >= 10x gdb from the first instruction,
#     >= 40x from a function, <= 1 stop per 8 instructions through the loader.
#  2. ptrace stops per critical-section passage for each section style (goal: <= 3), from
#     rseqdbg's own summary, with the section's length in bytes.
# N is BENCH_STEP_N (default 20000) but in b. The first N instructions of the loader are mostly
# its scan of the environment for tunables: short loops, one stop per turn (about 1 stop per 5
# instructions with 37 variables); the loader as a whole is measured in b.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
WL="$BUILD/tests/workloads/rseq_workload"
N=${BENCH_STEP_N:-20000}
R=${BENCH_REPEAT:-3}
[ -x "$RSEQDBG" ] || { echo "bench-step: $RSEQDBG not built" >&2; exit 2; }
[ -x "$WL" ] || { echo "bench-step: $WL not built (make tests)" >&2; exit 2; }
TMP=$(mktemp -d /tmp/rseqdbg-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
have_gdb=false
command -v gdb >/dev/null && have_gdb=true

now() { echo "${EPOCHREALTIME/./}"; } # microseconds

# The largest static non-PIE executable over 20 MB under /usr with rseq critical sections.
big_static() {
	local f
	find /usr -xdev -type f -size +20M -perm -u+x -printf '%s %p\n' 2>/dev/null |
		sort -rn | while read -r _ f; do
			readelf -h "$f" 2>/dev/null | grep -q 'Type:.*EXEC' || continue
			readelf -l "$f" 2>/dev/null | grep -q INTERP && continue
			"$RSEQDBG" scan "$f" 2>/dev/null | grep -qE '^ *[1-9][0-9]* critical sections' ||
				continue
			echo "$f"
			break
		done
}

# Runners: FROM (empty: the first instruction) COUNT PROG... ; rseqdbg's take options first.
rd_run() {
	local from=$1 n=$2 opts=$3
	shift 3
	# shellcheck disable=SC2086
	"$RSEQDBG" step --quiet $opts ${from:+--from "$from"} --count "$n" -- "$@"
}
gdb_run() {
	local from=$1 n=$2
	shift 3
	if [ -n "$from" ]; then
		gdb -nx -batch -ex "break $from" -ex run -ex "stepi $n" -ex kill --args "$@"
	else
		gdb -nx -batch -ex starti -ex "stepi $n" -ex kill --args "$@"
	fi
}

# measure KEY RUNNER FROM OPTS PROG...: one round; appends "us_for_1_step us_for_N_steps
# ptrace_stops" to $TMP/KEY.
measure() {
	local key=$1 runner=$2 from=$3 opts=$4 t0 t1 t2 stops
	shift 4
	t0=$(now)
	"$runner" "$from" 1 "$opts" "$@" >/dev/null 2>&1
	t1=$(now)
	"$runner" "$from" "$N" "$opts" "$@" >"$TMP/out" 2>&1
	t2=$(now)
	stops=$(sed -n 's/^summary: .* instructions stepped, .* \([0-9]*\) ptrace stops.*/\1/p' "$TMP/out")
	echo "$((t1 - t0)) $((t2 - t1)) ${stops:-0}" >>"$TMP/$key"
}

# median KEY COLUMN
median() { sort -n -k"$2" "$TMP/$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
# ips KEY: instructions per second of the N - 1 steps beyond the first (medians of each)
ips() {
	awk -v n="$N" -v a="$(median "$1" 1)" -v b="$(median "$1" 2)" \
		'BEGIN { if (b - a <= 0) print "n/a"; else printf "%.0f", (n - 1) / ((b - a) / 1e6) }'
}

# bench TITLE FROM GOAL N PROG...: every tool on one program, N steps, R rounds, then the table
bench() {
	local title=$1 from=$2 goal=$3 N=$4 k
	shift 4
	rm -f "$TMP"/k_*
	for ((i = 0; i < R; i++)); do
		measure k_pin rd_run "$from" "" "$@"
		measure k_nopin rd_run "$from" "--no-pin" "$@"
		measure k_single rd_run "$from" "--single-step" "$@"
		$have_gdb && measure k_gdb gdb_run "$from" "" "$@"
	done
	echo "$title ($N steps, median of $R):"
	for k in pin:"rseqdbg step --quiet" nopin:"  the same, --no-pin" single:"  the same, --single-step"; do
		printf "  %-28s %9s instructions/s  %.3f ptrace stops/instruction (1 per %.1f)\n" \
			"${k#*:}" "$(ips "k_${k%%:*}")" \
			"$(awk -v s="$(median "k_${k%%:*}" 3)" -v n="$N" 'BEGIN { print s / n }')" \
			"$(awk -v s="$(median "k_${k%%:*}" 3)" -v n="$N" 'BEGIN { print s ? n / s : 0 }')"
	done
	if $have_gdb; then
		printf "  %-28s %9s instructions/s\n" "gdb -batch stepi" "$(ips k_gdb)"
		awk -v a="$(ips k_pin)" -v b="$(ips k_nopin)" -v g="$(ips k_gdb)" -v goal="$goal" \
			'BEGIN { if (g + 0 <= 0 || a + 0 <= 0 || b + 0 <= 0) { print "  ratio: n/a (too noisy)"; exit }
				printf "  ratio rseqdbg / gdb: %.1fx (--no-pin %.1fx; goal >= %sx)\n", a / g, b / g, goal }'
	else
		echo "  gdb not installed: no comparison"
	fi
	echo
}

bench "from the first instruction of the workload (dynamic loader)" "" 10 "$N" \
	"$WL" --mode counter --iters 100000000
n_main=$("$RSEQDBG" step --quiet --until main -- "$WL" --mode counter --iters 1 2>&1 |
	sed -n 's/^summary: until; \([0-9]*\) instructions stepped.*/\1/p')
if [ -n "$n_main" ]; then
	bench "through the dynamic loader: the first instruction to main (goal <= 1 stop per 8)" "" \
		10 "$n_main" "$WL" --mode counter --iters 100000000
else
	echo "step --until main did not reach main: the loader case is skipped"
	echo
fi
bench "from worker() of the counter workload" worker 40 "$N" "$WL" --mode counter --iters 100000000
big=$(big_static)
if [ -n "$big" ]; then
	bench "from the first instruction of $big (static, non-PIE)" "" 10 "$N" "$big" --help
else
	echo "no static non-PIE program with rseq sections over 20 MB under /usr: skipped"
	echo
fi
echo "(gdb's stepi never gets through a section: it loops in the abort handler; rseqdbg"
echo " completes every passage)"

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
