#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step through a section whose check the stops of stepping undo: slab_cache keeps a
# "cache valid" bit in rseq->cpu_id_start as tcmalloc does, which the kernel clears whenever
# the thread returns to user space after it was switched out, so a stepped exit path never
# leaves the bit set for the retry. Regression: the stepper passed through the exit again and
# again (220,275 passages, none committed, in 15 s) and the program never got past its first
# allocation, in both modes. Now, after RETRY_LOOP_PASSAGES passages in a row without a commit,
# one retry-loop event names the section and its retries run at full speed to the commit:
# each allocation is one committed passage, and each exit on the way one passage too (a
# breakpoint outside the section counts it, and the retry runs on), counted against the
# program's own counters.
# Stepping runs from the first allocation to sc_done, called after the last. With
# --single-step every instruction stops, so the event must come. In the default mode the
# exit path, the retry and the section often run in one tree without a stop, which keeps the
# bit: the section may then commit without the event, and every exit must be seen.
source "$(dirname "$0")/../lib.sh"

WL="$BUILD/tests/workloads/slab_cache"
N=40
if ! have_ptrace; then
	skip "step retry loop" "ptrace not permitted"
	finish
	exit
fi

for mode in default single-step; do
	opt=
	[ $mode = single-step ] && opt=--single-step
	# shellcheck disable=SC2086
	timeout 120 "$RSEQDBG" step $opt --json --from sc_alloc --until sc_done --detach -- \
		"$WL" --iters $N >"$TMP/$mode.json" 2>"$TMP/$mode.err"
	rc=$?
	# the program's own report is on the same stdout, after the summary
	c=$(sed -n 's/^commits=//p' "$TMP/$mode.json")
	x=$(sed -n 's/^exits=//p' "$TMP/$mode.json")
	python3 - "$TMP/$mode.json" "$N" "${c:-x}" "${x:-x}" $mode >"$TMP/$mode.res" <<'PY'
import json, sys
path, n, commits, exits, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
ev = []
for line in open(path):
    if line.startswith("{"):
        ev.append(json.loads(line))
pas = [e for e in ev if e.get("kind") == "passage"]
loops = [i for i, e in enumerate(ev) if e.get("kind") == "retry-loop"]
end = [e for e in ev if e.get("kind") == "summary"]
bad = []
if commits != str(n):
    bad.append(f"program committed {commits} of {n}")
got = sum(1 for p in pas if p["result"] == "commit")
if str(got) != commits:
    bad.append(f"{got} committed passages, the program counted {commits} commits")
if not loops and mode == "default":
    seen = sum(1 for p in pas if p["result"] == "exit")
    if str(seen) != exits:
        bad.append(f"no retry-loop event and {seen} exits seen, program counted {exits} exits")
elif len(loops) != 1:
    bad.append(f"{len(loops)} retry-loop events")
elif "sc_alloc" not in ev[loops[0]]["message"]:
    bad.append("retry-loop event names no sc_alloc: " + ev[loops[0]]["message"])
else:
    after = [e for e in ev[loops[0]:] if e.get("kind") == "passage"]
    before = [e for e in ev[:loops[0]] if e.get("kind") == "passage"]
    if not after or not all(p["retry_loop"] for p in after):
        bad.append("passages after the event not all retry_loop")
    if any(p["retry_loop"] for p in before):
        bad.append("retry_loop passage before the event")
    seen = sum(1 for p in pas if p["result"] == "exit")
    if str(seen) != exits:
        bad.append(f"{seen} exits seen ({len(after)} passages in the retry loop), program counted {exits} exits")
if not end or end[-1]["end"] != "until":
    bad.append("summary end " + (end[-1]["end"] if end else "missing"))
print("; ".join(bad) if bad else f"ok {len(pas)} passages, {got} committed")
PY
	res=$(cat "$TMP/$mode.res")
	if [ $rc -eq 0 ] && [ "${res%% *}" = ok ]; then
		pass "step $mode: retry loop run to its commits ($res, program: $c commits, $x exits)"
	else
		fail "step $mode: retry loop run to its commits" "rc=$rc $res $(tail -c 300 "$TMP/$mode.err")"
	fi
done

# In text, the event and the passages say what happened.
"$RSEQDBG" step --quiet --single-step --from sc_alloc --until sc_done --detach -- "$WL" --iters 3 >"$TMP/text.out" 2>&1
check "step text: retry-loop event names the section" \
	grep -qE '^[0-9]+ retry-loop: section sc_alloc \(slab_cache.S:[0-9]+\) .* did not commit in [0-9]+ passages in a row' "$TMP/text.out"
check "step text: 3 passages committed after retries at full speed" \
	test "$(grep -c 'passage sc_alloc .*: committed (0x[0-9a-f]*) after retries at full speed' "$TMP/text.out")" = 3
finish
