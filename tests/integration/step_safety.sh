#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The stepper's safety net and --no-signals.
# step_indirect leaves its section through an indirect jump to a label no table lists and
# decoding cannot find: no planted breakpoint is hit, the thread is interrupted after the
# bound, and the passage is reported as lost by the safety net. The workload parks after each
# such exit until it has been stopped, so every passage is seen and the counts are exact.
# --no-signals: with one worker whose timer signals all target it, stepped from its first
# instruction, the workload's handler never runs; without it, it runs once per signal the
# stepper reported.
source "$(dirname "$0")/../lib.sh"

SI="$BUILD/tests/workloads/step_indirect"
WL="$BUILD/tests/workloads/rseq_workload"
if ! have_ptrace; then
	skip "step safety net" "ptrace not permitted"
	skip "step --no-signals" "ptrace not permitted"
	finish
	exit
fi
for f in "$SI" "$WL"; do
	[ -x "$f" ] || { fail "step safety: workload" "$f not built"; finish; exit; }
done

# kv FILE KEY: a value of a workload's report
kv() { sed -n "s/^$2=//p" "$1"; }
# summary FILE KEY: a field of rseqdbg's JSON summary
summary() {
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("kind") == "summary":
        print(d[sys.argv[2]])' "$1" "$2"
}

# --- the safety net ----------------------------------------------------------------------------
ITERS=24
EVERY=4
out="$TMP/si.json" rep="$TMP/si.rep"
timeout 120 "$RSEQDBG" step --json --from si_indirect --count 1000000 --detach -- \
	"$SI" --iters $ITERS --every $EVERY --park --out "$rep" >"$out" 2>"$TMP/si.err"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$rep" ]; then
	fail "step safety net: run" "rseqdbg exited $rc: $(head -c 300 "$TMP/si.err")"
else
	pass "step safety net: run completes"
	check "step safety net: workload result=ok" test "$(kv "$rep" result)" = ok
	check "step safety net: section text equals the file's after stepping" \
		test "$(kv "$rep" text)" = same
	# Compare every passage with the workload's own counters and the symbols read by nm.
	start=$(nm "$SI" | awk '$3 == "rseq_start_indirect" { print "0x" $1 }')
	post=$(nm "$SI" | awk '$3 == "rseq_post_commit_indirect" { print "0x" $1 }')
	exitl=$(nm "$SI" | awk '$3 == "rseq_exit_indirect" { print "0x" $1 }')
	why=$(python3 - "$out" "$rep" "$start" "$post" "$exitl" "$ITERS" "$EVERY" <<'PY'
import json, sys
out, rep, start, post, exitl, iters, every = sys.argv[1:]
start, post, exitl = int(start, 16), int(post, 16), int(exitl, 16)
iters, every = int(iters), int(every)
kv = dict(l.rstrip("\n").split("=", 1) for l in open(rep) if "=" in l)
ev = [json.loads(l) for l in open(out)]
ps = [e for e in ev if e["kind"] == "passage"]
nets = [e for e in ev if e["kind"] == "safety-net"]
summ = [e for e in ev if e["kind"] == "summary"]
res = lambda r: sum(1 for p in ps if p["result"] == r)
want_exits = (iters + every - 1) // every
why = []
if int(kv["exits"]) != want_exits:
    why.append("workload exits %s, expected %d" % (kv["exits"], want_exits))
if len(ps) != int(kv["iterations"]):
    why.append("%d passages, workload iterations %s" % (len(ps), kv["iterations"]))
if res("commit") != int(kv["commits"]):
    why.append("%d commits reported, workload %s" % (res("commit"), kv["commits"]))
if res("abort") != int(kv["aborts"]):
    why.append("%d aborts reported, workload %s" % (res("abort"), kv["aborts"]))
if res("lost") != int(kv["exits"]) or res("exit") != 0:
    why.append("%d lost + %d exits reported, workload exits %s" % (res("lost"), res("exit"), kv["exits"]))
if len(nets) != int(kv["exits"]) or int(kv["parks"]) != int(kv["exits"]):
    why.append("%d safety-net events, %s parks, %s exits" % (len(nets), kv["parks"], kv["exits"]))
for p in ps:
    s = p["section"]
    if s["start"]["function"] != "si_indirect":
        why.append("passage names %s" % s["start"]["function"]); break
    bias = s["start_ip"] - start
    if s["post_commit_ip"] - bias != post:
        why.append("post_commit %#x, nm says %#x" % (s["post_commit_ip"] - bias, post)); break
    lost = p["result"] == "lost"
    if p["safety_net"] != lost:
        why.append("safety_net %s on a %s passage" % (p["safety_net"], p["result"])); break
    # the thread was found outside the section and past the exit label (parked)
    if lost and start <= p["at"] - bias < post:
        why.append("lost passage found inside the section at %#x" % p["at"]); break
    if lost and p["at"] == exitl + bias:
        why.append("lost passage at the exit label: a breakpoint was there"); break
if not summ or summ[0]["lost"] != int(kv["exits"]) or summ[0]["end"] != "exited":
    why.append("summary: %s" % (summ[0] if summ else "missing"))
print("; ".join(why))
PY
)
	if [ -z "$why" ]; then
		pass "step safety net: $(kv "$rep" iterations) passages, $(kv "$rep" exits) lost through the indirect jump, counts agree"
	else
		fail "step safety net: passages agree with the workload" "$why"
	fi
fi

# The bound holds while other threads keep the stepper busy. A second thread signals itself
# every 20 ms, each signal an event the stepper handles while it waits for the stepped one:
# regression, each such event started the 200 ms over, the parked thread was never found and
# rseqdbg waited for ever (as under a Go program's runtime signals).
timeout 60 "$RSEQDBG" step --json --from si_indirect --count 1000000 --detach -- \
	"$SI" --iters 8 --every 4 --park --noise-us 20000 --out "$TMP/sn.rep" >"$TMP/sn.json" \
	2>"$TMP/sn.err"
rc=$?
nets=$(grep -c '"kind":"safety-net"' "$TMP/sn.json")
if [ $rc -eq 0 ] && [ "$(kv "$TMP/sn.rep" result)" = ok ] &&
	[ "$nets" = "$(kv "$TMP/sn.rep" exits)" ]; then
	pass "step safety net with another thread's signals every 20 ms: $nets lost passages found"
else
	fail "step safety net with another thread's signals every 20 ms" \
		"rc=$rc, $nets safety-net events, workload: $(tr '\n' ' ' <"$TMP/sn.rep" 2>/dev/null) $(head -c 200 "$TMP/sn.err")"
fi

# --- --no-signals --------------------------------------------------------------------------
# run_sig NAME OPTS...: step the worker from its first instruction; its timer signals every
# millisecond target it alone, all while it is stepped.
run_sig() {
	local n=$1
	shift
	timeout 120 "$RSEQDBG" step --quiet --json "$@" --from worker --count 100000000 --detach -- \
		"$WL" --mode counter --threads 1 --iters 1000 --signal-us 1000 \
		--out "$TMP/$n.rep" >"$TMP/$n.json" 2>"$TMP/$n.err"
}
run_sig nosig --no-signals
rc=$?
seen=$(summary "$TMP/nosig.json" signals 2>/dev/null)
events=$(grep -c '"kind":"signal"' "$TMP/nosig.json")
withheld=$(grep '"kind":"signal"' "$TMP/nosig.json" | grep -c 'not delivered')
if [ $rc -eq 0 ] && [ "$(kv "$TMP/nosig.rep" result)" = ok ] &&
	[ "$(kv "$TMP/nosig.rep" signals)" = 0 ] && [ "${seen:-0}" -gt 0 ] &&
	[ "$events" = "$seen" ] && [ "$withheld" = "$seen" ]; then
	pass "step --no-signals: $seen signals reported and withheld, the handler ran 0 times"
else
	fail "step --no-signals" "rc $rc, workload $(kv "$TMP/nosig.rep" signals) signals ($(kv "$TMP/nosig.rep" result)), rseqdbg saw ${seen:-?}, $events events, $withheld withheld: $(head -c 200 "$TMP/nosig.err")"
fi
run_sig sig
rc=$?
seen=$(summary "$TMP/sig.json" signals 2>/dev/null)
withheld=$(grep -c 'not delivered' "$TMP/sig.json")
if [ $rc -eq 0 ] && [ "$(kv "$TMP/sig.rep" result)" = ok ] && [ "${seen:-0}" -gt 0 ] &&
	[ "$(kv "$TMP/sig.rep" signals)" = "$seen" ] && [ "$withheld" = 0 ]; then
	pass "step without --no-signals: each of the $seen signals reached the handler"
else
	fail "step without --no-signals" "rc $rc, workload $(kv "$TMP/sig.rep" signals) signals ($(kv "$TMP/sig.rep" result)), rseqdbg saw ${seen:-?}, $withheld withheld"
fi

finish
