#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step through a per-CPU spinlock shaped like librseq's: pcpu_lock's threads (twice as
# many as CPUs) take the locks of libpcpu_lock.so, a shared object whose section checks the
# CPU, leaves by an exit point when the lock is held and turns a delay loop before its commit.
# Each holder sleeps HOLD_US holding its lock, so the threads of its CPU find it held (exit
# after exit, as behind a preempted holder) in every run, the stepped one included.
# One worker is stepped from its start (`--from worker`) to its end while the others keep
# taking the same locks, in the default mode and with --single-step, on an idle machine and
# beside two busy loops this script starts. Each run must:
#  (a) finish (within a generous outer timeout: a livelock is a failure, said as such), with
#      exit status 0 and the program's own check result=ok;
#  (b) report, for the stepped thread, as many aborted passages as the kernel aborted its
#      sections (its abort handler entries less its stale-cpu branches, counted by the
#      program per TID), exactly, as many committed passages as it took locks, and as many
#      exits as it found the lock held or branched on a stale cpu;
#  (c) lose no passage and need no safety net.
# pcpu_lock_dlopen, which loads the library with dlopen once it runs, must do the same (step_names
# checks --from a name of a dlopen'ed library). No
# random seed: the stale-cpu branches are every STALE'th operation. STEP_SPINLOCK_ITERS,
# _DELAY, _HOLD_US and _LIMIT (the outer timeout, in seconds) change the sizes.
source "$(dirname "$0")/../lib.sh"

PL="$BUILD/tests/workloads/pcpu_lock"
PLD="$BUILD/tests/workloads/pcpu_lock_dlopen"
ITERS=${STEP_SPINLOCK_ITERS:-100}
DELAY=${STEP_SPINLOCK_DELAY:-200000}
HOLD_US=${STEP_SPINLOCK_HOLD_US:-50}
# Under emulation (the kernel matrix's guests, quick) the idle runs only, each bounded lower to
# stay within the guest's budget.
LIMIT=${STEP_SPINLOCK_LIMIT:-600}
quick && LIMIT=${STEP_SPINLOCK_LIMIT:-200}
STALE=5
if ! have_ptrace; then
	skip "step spinlock" "ptrace not permitted"
	finish
	exit
fi
for f in "$PL" "$PLD"; do
	[ -x "$f" ] || { fail "step spinlock: workload" "$f not built (make tests)"; finish; exit; }
done

# Two busy loops beside the program, ended by their PIDs whatever ends the script.
LOAD=()
start_load() {
	(while :; do :; done) &
	LOAD+=($!)
	(while :; do :; done) &
	LOAD+=($!)
}
stop_load() {
	[ ${#LOAD[@]} -gt 0 ] && kill "${LOAD[@]}" 2>/dev/null && wait "${LOAD[@]}" 2>/dev/null
	LOAD=()
}
# A program left running by a run the timeout ended: found by its report path under $TMP.
stop_left() {
	local d args
	for d in /proc/[0-9]*; do
		[ "${d#/proc/}" = $$ ] && continue
		mapfile -d '' args 2>/dev/null <"$d/cmdline" || continue
		[[ " ${args[*]} " == *" --out $TMP/"* ]] && kill -KILL "${d#/proc/}" 2>/dev/null
	done
}
trap 'stop_load; stop_left; rm -rf "$TMP"' EXIT

echo "step spinlock: --iters $ITERS --delay $DELAY --hold-us $HOLD_US --stale-every $STALE," \
	"$(nproc) CPUs, outer timeout $LIMIT s, no random seed"

# run NAME FROM PROG STEP-OPTS...: step PROG from FROM, then compare with its report
run() {
	local name=$1 from=$2 prog=$3 rc last
	shift 3
	local out="$TMP/$name.json" rep="$TMP/$name.rep" err="$TMP/$name.err"
	timeout -k 10 "$LIMIT" "$RSEQDBG" step --json --quiet --detach --from "$from" "$@" -- \
		"$prog" --iters "$ITERS" --delay "$DELAY" --hold-us "$HOLD_US" --stale-every "$STALE" \
		--out "$rep" \
		>"$out" 2>"$err"
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		stop_left
		last=$(grep '"kind":"summary"' "$out" | tail -1)
		[ -n "$last" ] || last="$(grep -c '"kind":"passage"' "$out") passages, no summary"
		fail "step $name: finishes" "did not finish in $LIMIT s (livelock): $last"
		return
	fi
	if [ $rc -ne 0 ] || [ "$(sed -n 's/^result=//p' "$rep" 2>/dev/null)" != ok ]; then
		fail "step $name: finishes" "rc=$rc $(sed -n 's/^result=//p' "$rep" 2>/dev/null) $(tail -c 300 "$err")"
		return
	fi
	pass "step $name: finishes, result=ok"
	python3 - "$out" "$rep" "$name" >"$TMP/$name.res" <<'PY'
import json, sys
out, rep, name = sys.argv[1:]
kv = dict(l.rstrip("\n").split("=", 1) for l in open(rep) if "=" in l)
ev = [json.loads(l) for l in open(out) if l.startswith("{")]
ps = [e for e in ev if e["kind"] == "passage"]
nets = [e for e in ev if e["kind"] == "safety-net"]
loops = [e for e in ev if e["kind"] == "retry-loop"]
summ = [e for e in ev if e["kind"] == "summary"]
def line(ok, what, why):
    print(("PASS: step %s: %s" % (name, what)) if ok else ("FAIL: step %s: %s: %s" % (name, what, why)))
tids = sorted({p["tid"] for p in ps})
if len(tids) != 1:
    line(False, "passages of one stepped thread", "passages of threads %s" % tids)
    sys.exit()
tid = tids[0]
def wl(key):
    v = kv.get("thread.%d.%s" % (tid, key))
    return int(v) if v is not None else None
res = lambda r: sum(1 for p in ps if p["result"] == r)
note = "%d passages (%d commit, %d abort, %d exit, %d lost), %d retry-loop events; thread %d: " \
       "%s ops, %s kernel aborts, %s stale branches, %s busy; %s s" % (
           len(ps), res("commit"), res("abort"), res("exit"), res("lost"), len(loops), tid,
           wl("ops"), wl("kernel_aborts"), wl("user_branches"), wl("busy"),
           summ[-1]["seconds"] if summ else "?")
if wl("ops") is None:
    line(False, "the stepped thread in the report", "no thread.%d lines" % tid)
    sys.exit()
line(res("abort") == wl("kernel_aborts"),
     "aborted passages = the thread's kernel aborts (%s)" % note if res("abort") == wl("kernel_aborts")
     else "aborted passages = the thread's kernel aborts",
     "%d aborted passages, %d kernel aborts; %s" % (res("abort"), wl("kernel_aborts"), note))
line(res("commit") == wl("commits"),
     "committed passages = the thread's commits (%d)" % wl("commits"),
     "%d committed passages, %d commits; %s" % (res("commit"), wl("commits"), note))
want = wl("busy") + wl("user_branches")
line(res("exit") == want,
     "exits = lock found held + stale-cpu branches (%d)" % want,
     "%d exits, %d busy + %d stale branches; %s" % (res("exit"), wl("busy"), wl("user_branches"), note))
line(res("lost") == 0 and not nets,
     "no passage lost, no safety net",
     "%d lost, %d safety-net events; %s" % (res("lost"), len(nets), note))
PY
	cat "$TMP/$name.res"
	_fails=$((_fails + $(grep -c '^FAIL:' "$TMP/$name.res")))
}

loads="idle busy"
quick && loads=idle
for load in $loads; do
	[ "$load" = busy ] && start_load
	run "default $load" worker "$PL"
	run "single-step $load" worker "$PL" --single-step
	stop_load
done
# The library mapped by dlopen after the program started: its sections are known from the
# tables of a module that was not there at launch.
quick || run "dlopen default idle" worker "$PLD"

finish
