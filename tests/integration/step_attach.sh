#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Attaching to a running program and leaving it, whatever happens to our output or to its
# threads: a reader that goes away (a closed pipe), threads that come and go during the
# attach, a zombie, a program another tracer holds.
source "$(dirname "$0")/../lib.sh"

MC="$BUILD/tests/workloads/malloc_churn"
if ! have_ptrace; then
	skip "step attach" "ptrace not permitted"
	finish
	exit
fi
for f in "$MC"; do
	[ -x "$f" ] || { fail "step attach: workload" "$f not built"; finish; exit; }
done

# start_churn NAME ARGS...: malloc_churn in the background, once its threads run; pid in $pid
start_churn() {
	local n=$1
	shift
	rm -f "$TMP/$n.ready"
	"$MC" "$@" --ready "$TMP/$n.ready" >"$TMP/$n.out" 2>&1 &
	pid=$!
	for _ in $(seq 400); do [ -s "$TMP/$n.ready" ] && break; sleep 0.05; done
}

# status_of PID KEY: a field of /proc/PID/status
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }

# --- a closed pipe -----------------------------------------------------------------------------
# "step --pid P | head -3": once head is gone, writing fails (SIGPIPE is ignored). Stepping
# must end as on SIGINT: breakpoints removed, the program detached and running on, one error
# line, a non-zero exit.
for mode in text json; do
	start_churn pipe$mode --threads 1 --seconds 6
	opt=()
	[ $mode = json ] && opt=(--json)
	timeout 60 "$RSEQDBG" step "${opt[@]}" --pid $pid 2>"$TMP/pipe.err" | head -3 >"$TMP/pipe.head"
	rcs=("${PIPESTATUS[@]}")
	state=$(status_of $pid State) tracer=$(status_of $pid TracerPid)
	# Still running after we left: its work goes on (rounds grow) until its own end.
	wait $pid
	wrc=$?
	why=""
	[ "${rcs[0]}" = 124 ] && why="rseqdbg still stepping after 60 s"
	[ "${rcs[0]}" = 0 ] && why="rseqdbg exited 0"
	[ "$(wc -l <"$TMP/pipe.head")" = 3 ] || why="$why; head got $(wc -l <"$TMP/pipe.head") lines"
	[ "$(wc -l <"$TMP/pipe.err")" = 1 ] && grep -q "^rseqdbg: step: writing the output: Broken pipe: breakpoints removed, program detached$" "$TMP/pipe.err" ||
		why="$why; stderr: $(head -c 300 "$TMP/pipe.err")"
	[ "$tracer" = 0 ] || why="$why; still traced by $tracer after rseqdbg exited"
	case "$state" in R | S) ;; *) why="$why; state '$state' after rseqdbg exited" ;; esac
	[ $wrc -eq 0 ] && grep -q "errors=0 result=ok" "$TMP/pipe$mode.out" ||
		why="$why; program exit $wrc: $(head -c 200 "$TMP/pipe$mode.out")"
	if [ -z "$why" ]; then
		pass "step attach: $mode output into a closed pipe: exit ${rcs[0]}, one error line, program detached and ran on to result=ok"
	else
		fail "step attach: $mode output into a closed pipe" "${why#; }"
	fi
done

finish
