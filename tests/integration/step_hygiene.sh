#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Nothing of rseqdbg step stays in the tracee: the bytes of every executable mapping, read from
# /proc/PID/mem before the attach and after the detach, are identical, also when rseqdbg is
# interrupted (SIGINT, SIGQUIT, SIGTERM, SIGHUP) while it steps; the program runs on and reports
# a correct result. In launch mode an interrupt kills the program and leaves nothing behind.
source "$(dirname "$0")/../lib.sh"

# A private copy: the uprobes other tests attach to the build's workload (trace, stat) go into
# every process that maps that file, and would change the text compared here.
WL="$TMP/rseq_workload"
cp "$BUILD/tests/workloads/rseq_workload" "$WL"
if ! have_ptrace; then
	skip "step hygiene" "ptrace not permitted"
	finish
	exit
fi
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
	done </proc/$1/maps
}

# traced PID: a tracer is attached to PID
traced() {
	local t
	t=$(awk '/TracerPid/ {print $2}' "/proc/$1/status" 2>/dev/null)
	[ -n "$t" ] && [ "$t" != 0 ]
}

# wait_ok PID REPORT NAME: the workload, told to end, finishes with result=ok
wait_ok() {
	kill -TERM "$1" 2>/dev/null
	wait "$1"
	wrc=$?
	[ $wrc -eq 0 ] && grep -qx "result=ok" "$2"
}

# Attach, step, detach. The workloads run until told to end (SIGTERM), however slowly they
# are stepped (an emulated guest steps 10-20 times slower than the host).
# A signal every 500 us: signal stops in the middle of the planned paths and of passages.
# Emulated aarch64 steps a handler's 9 instructions in about 7 ms: at 500 us the worker would
# step nothing but handlers (555 of them in 5000 instructions, no passage); there, 20 ms.
sig1="--signal-us 500"
[ "$(uname -m)" = aarch64 ] && sig1="--signal-us 20000"
# shellcheck disable=SC2086
"$WL" --mode all --threads 2 --seconds 600 $sig1 --out "$TMP/r1" &
p=$!
wait_tasks $p 3
snapshot $p "$TMP/before1"
worker=$(ls /proc/$p/task | sort -n | sed -n 2p)
"$RSEQDBG" step --pid $p --tid "$worker" --quiet --count 5000 >"$TMP/s1.out" 2>&1
rc=$?
snapshot $p "$TMP/after1"
tracer=$(awk '/TracerPid/ {print $2}' /proc/$p/status)
if [ $rc -eq 0 ] && [ -s "$TMP/before1" ] && cmp -s "$TMP/before1" "$TMP/after1" &&
	[ "$tracer" = 0 ]; then
	pass "step detach restores text ($(wc -l <"$TMP/before1") mappings compared)"
else
	fail "step detach restores text" "rc=$rc tracer=$tracer $(tail -c 300 "$TMP/s1.out") $(diff "$TMP/before1" "$TMP/after1" | head -3)"
fi
if grep -q "^summary: count; .* [1-9][0-9]* passages" "$TMP/s1.out"; then
	pass "step attach steps a worker through its sections"
else
	fail "step attach steps a worker through its sections" "$(tail -2 "$TMP/s1.out")"
fi
if wait_ok $p "$TMP/r1"; then pass "step detach: workload result ok"; else fail "step detach: workload result ok" "exit $wrc $(grep result "$TMP/r1")"; fi

if ! quick; then
# Interrupt rseqdbg while it steps a worker thread through sections: several rounds, at
# different moments; each time the bytes are restored and the program keeps going.
# Each interrupt comes once stepping has begun (its first passage), after a random delay.
"$WL" --mode all --threads 2 --seconds 600 --signal-us 200 --out "$TMP/r2" &
p=$!
wait_tasks $p 3
snapshot $p "$TMP/before2"
worker=$(ls /proc/$p/task | sort -n | sed -n 2p)
bad=""
rounds=0
passages=0
sigs="INT QUIT TERM HUP INT"
for sig in $sigs; do
	"$RSEQDBG" step --pid $p --tid "$worker" --json --quiet >"$TMP/s2.json" 2>"$TMP/s2.err" &
	d=$!
	wait_grep '"kind":"passage"' "$TMP/s2.json"
	sleep 0.$((RANDOM % 5))
	kill -$sig $d
	wait $d
	rc=$?
	snapshot $p "$TMP/after2"
	rounds=$((rounds + 1))
	passages=$((passages + $(grep -c '"kind":"passage"' "$TMP/s2.json")))
	state=$(awk '{print $3}' /proc/$p/stat)
	tracer=$(awk '/TracerPid/ {print $2}' /proc/$p/status)
	if [ $rc -ne 0 ] || ! cmp -s "$TMP/before2" "$TMP/after2" || [ "$tracer" != 0 ] ||
		[ "$state" = t ] || ! grep -q '"end":"interrupted"' "$TMP/s2.json"; then
		bad="$bad round $rounds ($sig): rc=$rc state=$state tracer=$tracer text $(cmp -s "$TMP/before2" "$TMP/after2" && echo same || echo differs) end $(sed -n 's/.*"kind":"summary","end":"\([a-z]*\)".*/\1/p' "$TMP/s2.json") $(head -c 200 "$TMP/s2.err")"
	fi
done
if [ -z "$bad" ] && [ "$passages" -gt 0 ]; then
	pass "step interrupted by ${sigs// //} restores text ($rounds rounds, $passages passages)"
else
	fail "step interrupted by ${sigs// //} restores text" "${bad:-no passage seen}"
fi
if wait_ok $p "$TMP/r2"; then pass "step interrupted: workload result ok"; else fail "step interrupted: workload result ok" "$(grep result "$TMP/r2")"; fi
fi # quick

if ! quick; then
# The same in the middle of a step-over: --lock-others with a thread that spins in
# sections, interrupted as soon as a passage was reported.
"$WL" --mode counter --threads 3 --seconds 600 --signal-us 300 --out "$TMP/r3" &
p=$!
wait_tasks $p 4
snapshot $p "$TMP/before3"
worker=$(ls /proc/$p/task | sort -n | sed -n 3p)
"$RSEQDBG" step --pid $p --tid "$worker" --json --quiet --lock-others >"$TMP/s3.json" 2>&1 &
d=$!
wait_grep '"kind":"passage"' "$TMP/s3.json"
kill -INT $d
wait $d
rc=$?
snapshot $p "$TMP/after3"
tracer=$(awk '/TracerPid/ {print $2}' /proc/$p/status)
if [ $rc -eq 0 ] && cmp -s "$TMP/before3" "$TMP/after3" && [ "$tracer" = 0 ]; then
	pass "step --lock-others interrupted restores text"
else
	fail "step --lock-others interrupted restores text" "rc=$rc tracer=$tracer"
fi
if wait_ok $p "$TMP/r3"; then pass "step --lock-others interrupted: workload result ok"; else fail "step --lock-others interrupted: workload result ok" "$(grep result "$TMP/r3")"; fi

# Launch mode: SIGINT kills the program we started; no process is left.
marker="$TMP/launched-$$"
"$RSEQDBG" step --quiet -- "$WL" --mode counter --seconds 30 --out "$marker" >"$TMP/s4.out" 2>&1 &
d=$!
sleep 1
kill -INT $d
wait $d
rc=$?
sleep 0.2
if [ $rc -eq 0 ] && ! pgrep -f "$marker" >/dev/null && grep -q "^summary: interrupted" "$TMP/s4.out"; then
	pass "step launch interrupted: program killed, nothing left"
else
	fail "step launch interrupted: program killed, nothing left" "rc=$rc $(pgrep -af "$marker") $(tail -2 "$TMP/s4.out")"
	pkill -f "$marker"
fi
fi # quick

# The tracee dying under us: rseqdbg ends cleanly.
# Killed once it is being stepped (a passage reported; a tracing stop alone may still be the
# attach, which stops every thread once).
"$WL" --mode counter --seconds 600 --out "$TMP/r5" &
p=$!
wait_tasks $p 2
"$RSEQDBG" step --pid $p --tid "$(ls /proc/$p/task | sort -n | sed -n 2p)" --quiet --json \
	>"$TMP/s5.json" 2>&1 &
d=$!
wait_grep '"kind":"passage"' "$TMP/s5.json"
kill -KILL $p
wait $d
rc=$?
wait $p 2>/dev/null
if [ $rc -eq 0 ] && grep -q '"end":"exited"' "$TMP/s5.json"; then
	pass "step survives the tracee being killed"
else
	fail "step survives the tracee being killed" "rc=$rc $(tail -2 "$TMP/s5.json")"
fi

# Someone else's breakpoint under ours: a trace of another process of the same file puts
# uprobes on the abort handlers of every process that maps the file. step --from an abort
# handler this run never reaches plants its breakpoint over the uprobe's; the trace ends (the
# kernel puts the instruction back in place of the breakpoint byte it finds there), then the
# step. Removing ours must not bring the uprobe's byte back: a trap the program dies of.
if have_bpf; then
	"$WL" --mode counter --threads 2 --seconds 600 --out "$TMP/r6" &
	p=$!
	"$WL" --mode counter --threads 1 --seconds 600 --out "$TMP/r7" &
	q=$!
	wait_tasks $p 3
	wait_tasks $q 2
	snapshot $p "$TMP/before6"
	"$RSEQDBG" trace --pid $q >/dev/null 2>"$TMP/t6.err" &
	t=$!
	wait_grep 'tracing rseq events' "$TMP/t6.err"
	"$RSEQDBG" step --pid $p --from rseq_abort_condexit --quiet --json >"$TMP/s6.json" 2>&1 &
	d=$!
	wait_for -p $p 5 "step to attach to $p" traced $p
	sleep 0.5
	kill -INT $t
	wait $t
	released
	kill -INT $d
	wait $d
	rc=$?
	snapshot $p "$TMP/after6"
	text=$(cmp -s "$TMP/before6" "$TMP/after6" && echo same || echo differs)
	ok=0
	wait_ok $p "$TMP/r6" || ok=1
	if [ $rc -eq 0 ] && [ "$text" = same ] && [ $ok -eq 0 ]; then
		pass "step over a uprobe that goes away: text restored, result ok"
	else
		fail "step over a uprobe that goes away" "rc=$rc text $text, workload exit $wrc $(grep result "$TMP/r6") $(tail -c 200 "$TMP/s6.json")"
	fi
	kill -TERM $q 2>/dev/null
	wait $q 2>/dev/null
fi
finish
