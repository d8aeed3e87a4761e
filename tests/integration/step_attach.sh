#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Attaching to a running program and leaving it, whatever happens to our output or to its
# threads: a reader that goes away (a closed pipe), threads that come and go during the
# attach, a zombie, a program another tracer holds.
source "$(dirname "$0")/../lib.sh"

MC="$BUILD/tests/workloads/malloc_churn"
TC="$BUILD/tests/workloads/thread_churn"
if ! have_ptrace; then
	skip "step attach" "ptrace not permitted"
	finish
	exit
fi
for f in "$MC" "$TC"; do
	[ -x "$f" ] || { fail "step attach: workload" "$f not built"; finish; exit; }
done
seed_random

# start_churn NAME ARGS...: malloc_churn in the background, once its threads run; pid in $pid
start_churn() {
	local n=$1
	shift
	rm -f "$TMP/$n.ready"
	"$MC" "$@" --ready "$TMP/$n.ready" >"$TMP/$n.out" 2>&1 &
	pid=$!
	wait_for -p $pid 20 "malloc_churn $n to be ready" test -s "$TMP/$n.ready"
}

# status_of PID KEY: a field of /proc/PID/status
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
# traced_now PID: a tracer is attached to PID
traced_now() {
	local t
	t=$(status_of "$1" TracerPid)
	[ -n "$t" ] && [ "$t" != 0 ]
}

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

# --- threads that come and go during the attach -----------------------------------------------
# Threads that exit while they are seized, or are created by threads seized already, are no
# reason to fail. Five attaches to batches of 200 (or 50) short-lived threads, each for 500
# instructions, at a random moment; the program must end with its own sum right.
tries=0 good=0 why=""
for life in 0 1000 50 1000 0; do
	for batch in 200 50; do
		tries=$((tries + 1))
		rm -f "$TMP/tc.ready"
		"$TC" --batch $batch --life-us $life --seconds 2 --ready "$TMP/tc.ready" >"$TMP/tc.out" 2>&1 &
		pid=$!
		wait_for -p $pid 20 "thread_churn (batch $batch, life $life) to be ready" \
			test -s "$TMP/tc.ready"
		sleep "0.$((RANDOM % 10))"
		timeout 60 "$RSEQDBG" step -q --pid $pid --count 500 >"$TMP/tc.step" 2>"$TMP/tc.err"
		rc=$?
		wait $pid
		wrc=$?
		if [ $rc -eq 0 ] && grep -q "^summary: count; 500 instructions" "$TMP/tc.step" &&
			[ $wrc -eq 0 ] && grep -q "result=ok" "$TMP/tc.out"; then
			good=$((good + 1))
		else
			why="$why; batch $batch life $life: rseqdbg rc $rc $(head -c 200 "$TMP/tc.err")$(grep -E '^summary' "$TMP/tc.step" | cut -c1-60), program rc $wrc $(head -c 100 "$TMP/tc.out")"
		fi
	done
done
if [ $good -eq $tries ]; then
	pass "step attach: $tries attaches to thread_churn while threads come and go: 500 instructions each, program result=ok"
else
	fail "step attach: attaches to thread_churn" "$good of $tries good${why}"
fi

# --- a zombie ----------------------------------------------------------------------------------
# The child of a shell that execs a program which never waits: a zombie until that one ends.
bash -c 'sleep 0.1 & echo $! >"$1"; exec sleep 30' sh "$TMP/zpid" &
holder=$!
# a_zombie: the pid in zpid is a zombie
a_zombie() { [ -s "$TMP/zpid" ] && [ "$(status_of "$(cat "$TMP/zpid")" State)" = Z ]; }
# the case below says why when there is none
wait_for -q 5 "a zombie" a_zombie
z=$(cat "$TMP/zpid")
if [ "$(status_of "$z" State)" != Z ]; then
	fail "step attach: a zombie" "could not make one (pid $z: $(status_of "$z" State))"
else
	"$RSEQDBG" step --pid "$z" >"$TMP/z.out" 2>"$TMP/z.err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/z.err")" = 1 ] &&
		grep -q "^rseqdbg: step: cannot trace process $z: it is a zombie (it exited; its parent $holder (sleep) has not reaped it)$" "$TMP/z.err"; then
		pass "step attach: a zombie is called one, with its parent: $(cat "$TMP/z.err")"
	else
		fail "step attach: a zombie is called one" "rc $rc: $(head -c 300 "$TMP/z.err")"
	fi
fi
kill $holder 2>/dev/null
wait $holder 2>/dev/null

# --- a program another tracer holds ------------------------------------------------------------
# traced_by NAME CMD...: CMD traces a sleeping program; rseqdbg must name that tracer.
traced_by() {
	local name=$1 tracer tpid
	shift
	sleep 60 &
	local victim=$!
	"$@" $victim >/dev/null 2>&1 &
	tpid=$!
	# the case below says why when it does not attach
	wait_for -q -p $tpid 10 "$name to attach" traced_now $victim
	tracer=$(status_of $victim TracerPid)
	if [ "${tracer:-0}" = 0 ]; then
		fail "step attach: already traced by $name" "$name did not attach to $victim"
	else
		"$RSEQDBG" step --pid $victim >"$TMP/t.out" 2>"$TMP/t.err"
		rc=$?
		if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/t.err")" = 1 ] &&
			grep -q "^rseqdbg: step: cannot trace process $victim (thread $victim): already traced by PID $tracer ($name)$" "$TMP/t.err"; then
			pass "step attach: already traced by $name: $(cat "$TMP/t.err")"
		else
			fail "step attach: already traced by $name" "rc $rc: $(head -c 300 "$TMP/t.err")"
		fi
	fi
	kill $(pgrep -P $tpid) $tpid 2>/dev/null
	wait $tpid 2>/dev/null
	kill $victim 2>/dev/null
	wait $victim 2>/dev/null
}
traced_by rseqdbg "$RSEQDBG" step -q --pid
if command -v strace >/dev/null; then
	traced_by strace strace -o /dev/null -p
else
	skip "step attach: already traced by strace" "strace not installed"
fi
if command -v gdb >/dev/null; then
	traced_by gdb gdb -batch -ex "shell sleep 30" -p
else
	skip "step attach: already traced by gdb" "gdb not installed"
fi

finish
