#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Killing rseqdbg step with SIGKILL never harms the program it steps. The process the user sees
# only waits; the tracer is its child and, when its parent dies, removes every breakpoint and
# detaches as on SIGINT. 20 trials of `step --pid` on a self-checking workload, each killed
# with kill -9 at a random moment: each time the workload ends with its own result=ok, and the
# bytes of every executable mapping read from /proc/PID/mem are the same before and after.
# Launch mode: the program started by rseqdbg is killed with it (nothing is left), or with
# --detach runs on to a correct result.
source "$(dirname "$0")/../lib.sh"

# A private copy: the uprobes other tests attach to the build's workload (trace, stat) go into
# every process that maps that file, and would change the text compared here.
WL="$TMP/rseq_workload"
cp "$BUILD/tests/workloads/rseq_workload" "$WL"
TRIALS=${STEP_KILL_TRIALS:-20}
if ! have_ptrace; then
	skip "step kill -9" "ptrace not permitted"
	finish
	exit
fi
[ -x "$WL" ] || { fail "step kill -9: workload" "$WL not built"; finish; exit; }
seed_random

# snapshot PID FILE: checksum of each r-x mapping's bytes read from /proc/PID/mem
snapshot() {
	local range perms path lo hi
	: >"$2"
	while read -r range perms _ _ _ path; do
		[ "$perms" = r-xp ] || continue
		case "$path" in "[vsyscall]" | "[vdso]") continue ;; esac
		lo=$((16#${range%-*}))
		hi=$((16#${range#*-}))
		echo "$range $path $(dd if=/proc/$1/mem bs=65536 iflag=skip_bytes,count_bytes \
			skip=$lo count=$((hi - lo)) 2>/dev/null | sha256sum | cut -d' ' -f1)" >>"$2"
	done <"/proc/$1/maps"
}

# untraced PID: wait (at most 20 s) until no tracer is attached to PID; false if it died
untraced() { wait_for -q -p "$1" -i 0.1 20 "no tracer on $1" no_tracer "$1"; }
no_tracer() { [ "$(awk '/TracerPid/ {print $2}' "/proc/$1/status" 2>/dev/null)" = 0 ]; }

# reap PID SECONDS: wait for a background job, killing it after SECONDS; its exit status
reap() {
	wait_for -q -i 0.1 "$2" "$1 to end" exited "$1" || kill -KILL "$1" 2>/dev/null
	wait "$1"
}

# Attached: 20 kill -9 at random moments, from during the attach to deep in the stepping.
survived=0
bad=""
passages=0
for i in $(seq "$TRIALS"); do
	"$WL" --mode all --threads 2 --seconds 3 --signal-us 500 --out "$TMP/r$i" &
	p=$!
	sleep 0.3
	snapshot $p "$TMP/before"
	worker=$(ls /proc/$p/task | sort -n | sed -n 2p)
	# Every other trial with --lock-others: the tracer must notice its parent's death even
	# when it comes while every thread is stopped and no wait can return by itself.
	opt=""
	[ $((i % 2)) -eq 0 ] && opt="--lock-others"
	"$RSEQDBG" step --pid $p --tid "$worker" --json --quiet $opt >"$TMP/s$i.json" \
		2>"$TMP/s$i.err" &
	d=$!
	# $RANDOM read here, not in a $(...) subshell that would draw from a seed of its own
	s=$((RANDOM % 1500 / 1000)) ms=$((RANDOM % 1000))
	sleep "$s.$(printf %03d $ms)"
	kill -KILL $d
	wait $d 2>/dev/null
	why=""
	if untraced $p; then
		snapshot $p "$TMP/after"
		cmp -s "$TMP/before" "$TMP/after" ||
			why="text differs: $(diff "$TMP/before" "$TMP/after" | grep '^>' | cut -c3- |
				cut -d' ' -f1,2 | tr '\n' ' ')"
	else
		why="still traced or gone (TracerPid $(awk '/TracerPid/ {print $2}' \
			"/proc/$p/status" 2>/dev/null || echo "-: exited"); rseqdbg said: \
			$(tail -n 1 "$TMP/s$i.err"))"
	fi
	reap $p 30
	rc=$?
	[ $rc -eq 0 ] && grep -qx "result=ok" "$TMP/r$i" || why="$why workload rc=$rc"
	passages=$((passages + $(grep -c '"kind":"passage"' "$TMP/s$i.json")))
	if [ -z "$why" ]; then
		survived=$((survived + 1))
	else
		bad="$bad; trial $i${opt:+ $opt}: $why $(grep -h result "$TMP/r$i" 2>/dev/null)"
	fi
done
echo "kill -9 of rseqdbg step --pid: the workload survived $survived of $TRIALS" \
	"($passages passages reported)"
if [ "$survived" -eq "$TRIALS" ]; then
	pass "step --pid killed with SIGKILL: the program survives ($survived of $TRIALS)"
else
	fail "step --pid killed with SIGKILL: the program survives ($survived of $TRIALS)" "${bad#; }"
fi

# Launch mode, default: the program dies with rseqdbg and nothing is left.
marker="$TMP/launched-$$"
"$RSEQDBG" step --quiet -- "$WL" --mode counter --seconds 30 --out "$marker" \
	>"$TMP/l1.out" 2>&1 &
d=$!
sleep 1
kill -KILL $d
wait $d 2>/dev/null
# no_marker: no process has $marker in its command line
no_marker() { ! pgrep -f "$marker" >/dev/null; }
left=yes
wait_for -q -i 0.1 10 "the launched program to be killed" no_marker && left=""
if [ -z "$left" ] && grep -q "^summary: interrupted" "$TMP/l1.out"; then
	pass "step launch killed with SIGKILL: program killed, nothing left"
else
	fail "step launch killed with SIGKILL: program killed, nothing left" \
		"$(pgrep -af "$marker") $(tail -2 "$TMP/l1.out")"
	pkill -KILL -f "$marker"
fi

# Launch mode with --detach: the program runs on untraced to a correct result.
marker="$TMP/detached-$$"
"$RSEQDBG" step --quiet --detach -- "$WL" --mode all --threads 2 --seconds 3 \
	--signal-us 500 --out "$marker" >"$TMP/l2.out" 2>&1 &
d=$!
sleep 1
kill -KILL $d
wait $d 2>/dev/null
wait_for -q -i 0.1 20 "the detached program to end" no_marker
if grep -qx "result=ok" "$marker" 2>/dev/null && grep -q "program exited with status 0" \
	"$TMP/l2.out"; then
	pass "step --detach launch killed with SIGKILL: program runs on, result ok"
else
	fail "step --detach launch killed with SIGKILL: program runs on, result ok" \
		"$(cat "$marker" 2>/dev/null) $(tail -2 "$TMP/l2.out")"
	pkill -KILL -f "$marker"
fi

finish
