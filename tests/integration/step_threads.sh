#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step with several threads: attach to a running multi-threaded workload, step one
# worker through its sections while the others run (and hit the temporary breakpoints), or
# are held with --lock-others, detach: the workload's own checks pass. Launched programs have
# their new threads traced.
source "$(dirname "$0")/../lib.sh"

WL="$BUILD/tests/workloads/rseq_workload"
if ! have_ptrace; then
	skip "step threads" "ptrace not permitted"
	finish
	exit
fi
kv() { sed -n "s/^$2=//p" "$1"; }

# attach_case NAME EXTRA...: step the third thread (a worker) of a 4-worker run, 30000
# instructions. The state of every other worker is noted while it steps: the stepping is
# stopped (SIGINT) only once that is done, so a fast machine cannot end it before.
attach_case() {
	local name=$1; shift
	local rep="$TMP/$name.rep" out="$TMP/$name.json" p worker rc states="" t
	# runs until told to end (SIGTERM), however slowly it is stepped
	"$WL" --mode counter --threads 4 --seconds 600 --out "$rep" &
	p=$!
	wait_tasks $p 5
	worker=$(printf '%s\n' /proc/$p/task/* | sed 's|.*/||' | sort -n | sed -n 3p)
	"$RSEQDBG" step --pid $p --tid "$worker" --json --until 0x1 "$@" >"$out" 2>&1 &
	local d=$!
	wait_for -p $d -i 0.2 120 "$name: the stepped thread's first 30000 instructions" \
		sh -c "[ \$(grep -c '\"kind\":\"step\"' '$out') -ge 30000 ]"
	for t in /proc/$p/task/*; do
		t=${t##*/}
		[ "$t" = "$worker" ] || [ "$t" = "$p" ] && continue
		states="$states$(awk '{print $3}' /proc/$p/task/$t/stat 2>/dev/null)"
	done
	kill -0 $d 2>/dev/null || states="$states(rseqdbg had ended)"
	kill -INT $d
	wait $d
	rc=$?
	kill -TERM $p
	wait $p
	local wrc=$?
	echo "$states" >"$TMP/$name.states"
	local passages
	passages=$(grep -c '"kind":"passage"' "$out")
	if [ $rc -ne 0 ] || [ $wrc -ne 0 ] || [ "$(kv "$rep" result)" != ok ] || [ "$passages" -eq 0 ]; then
		fail "$name" "rseqdbg rc=$rc workload rc=$wrc $(kv "$rep" result) passages=$passages $(tail -1 "$out")"
		return 1
	fi
	pass "$name ($passages passages, workload: $(kv "$rep" iterations) iterations, result ok)"
	echo "$passages" >"$TMP/$name.passages"
}

if ! quick; then
if attach_case "step attach, others running"; then
	# The others ran at full speed: far more iterations than the stepped thread's passages.
	it=$(kv "$TMP/step attach, others running.rep" section.wl_counter_add.iterations)
	ps=$(cat "$TMP/step attach, others running.passages")
	if [ "$it" -gt $((ps * 10)) ]; then
		pass "step attach: other threads kept running"
	else
		fail "step attach: other threads kept running" "iterations $it, passages $ps"
	fi
fi
if attach_case "step attach --lock-others" --lock-others; then
	st=$(cat "$TMP/step attach --lock-others.states")
	if [ -n "$st" ] && [ -z "${st//t/}" ]; then
		pass "step --lock-others holds the other threads ($st)"
	else
		fail "step --lock-others holds the other threads" "states '$st'"
	fi
fi
fi # quick

# Launch: the main thread creates the workers while it is stepped; each new thread is
# traced and reported, and the run completes.
"$RSEQDBG" step --json --quiet --from main --count 400000 --detach -- \
	"$WL" --mode counter --threads 3 --iters 200 --out "$TMP/launch.rep" >"$TMP/launch.json" 2>&1
rc=$?
nthreads=$(grep -c '"kind":"thread"' "$TMP/launch.json")
if [ $rc -eq 0 ] && [ "$nthreads" -ge 3 ] && [ "$(kv "$TMP/launch.rep" result)" = ok ]; then
	pass "step launch follows new threads ($nthreads reported)"
else
	fail "step launch follows new threads" "rc=$rc threads=$nthreads $(kv "$TMP/launch.rep" result) $(tail -1 "$TMP/launch.json")"
fi

# Attach to a thread that is itself inside a section's loop with signals: the stepped
# thread receives them (delivered) and the run stays correct.
"$WL" --mode all --threads 2 --seconds 600 --signal-us 200 --out "$TMP/sig.rep" &
p=$!
wait_tasks $p 3
worker=$(ls /proc/$p/task | sort -n | sed -n 2p)
"$RSEQDBG" step --pid $p --tid "$worker" --json --quiet --count 20000 >"$TMP/sig.json" 2>&1
rc=$?
kill -TERM $p
wait $p
wrc=$?
sigs=$(grep -c '"kind":"signal"' "$TMP/sig.json")
if [ $rc -eq 0 ] && [ $wrc -eq 0 ] && [ "$(kv "$TMP/sig.rep" result)" = ok ] && [ "$sigs" -gt 0 ]; then
	pass "step delivers signals to the stepped thread ($sigs seen)"
else
	fail "step delivers signals to the stepped thread" "rc=$rc wrc=$wrc signals=$sigs $(kv "$TMP/sig.rep" result) $(grep -v '"kind":"signal"' "$TMP/sig.json" | tail -c 300)"
fi

# A call through a pointer that another thread keeps changing: the stepped thread goes where
# the pointer says when the call runs. flip_calls is 5 instructions a call plus 3
# (fnptr_flip.S; 10 a call plus 7 on aarch64, arm64/fnptr_flip.S), whichever function each
# call reaches; detached, the program then checks that its calls add up.
FLIP="$BUILD/tests/workloads/fnptr_flip"
n=1000
per=5 extra=3
[ "$(uname -m)" = aarch64 ] && per=10 extra=7
for mode in default --single-step; do
	args=(--quiet --json --detach --from flip_calls --finish)
	[ $mode = default ] || args+=("$mode")
	timeout 120 "$RSEQDBG" step "${args[@]}" -- "$FLIP" --calls $n --out "$TMP/flip.$mode" \
		>"$TMP/flip.$mode.json" 2>&1
	rc=$?
	got=$(sed -n 's/.*"kind":"summary".*"instructions":\([0-9]*\).*/\1/p' "$TMP/flip.$mode.json")
	if [ $rc -eq 0 ] && [ "$got" = $((per * n + extra)) ] && [ "$(kv "$TMP/flip.$mode" result)" = ok ]; then
		pass "step $mode: calls through a pointer another thread flips: $got instructions ($per x $n + $extra), $(kv "$TMP/flip.$mode" one) + $(kv "$TMP/flip.$mode" two) calls"
	else
		fail "step $mode: calls through a pointer another thread flips" "rc=$rc instructions=$got, want $((per * n + extra)); $(kv "$TMP/flip.$mode" result) $(tail -c 300 "$TMP/flip.$mode.json")"
	fi
done

finish
