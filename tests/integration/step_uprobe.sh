#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step beside another tool's uprobes. The kernel takes every trap at a uprobe's
# address for the uprobe's, so a debugger's breakpoint instruction there never stops the
# thread. The tracers of rseqdbg (trace, stat, exporter) probe every abort handler, and
# stat -- CMD also the loader's _dl_debug_state: beside them, a step that plants software
# breakpoints at those addresses saw no abort at all, and missed the dlopen of a library
# that --from names. With `rseqdbg stat` running another instance of each program (its
# probes are on the files, so in every process that maps them):
#  - spin_cs signalled inside its sections: every passage, commit and abort must match the
#    program's own counts, as in step_fold;
#  - pcpu_lock_dlopen stepped --from a function of the library it loads with dlopen: the
#    name must be found and the run end with result=ok, its aborts all seen.
source "$(dirname "$0")/../lib.sh"

WL="$BUILD/tests/workloads/spin_cs"
PLD="$BUILD/tests/workloads/pcpu_lock_dlopen"
if ! have_ptrace || ! have_bpf; then
	skip "step uprobe" "needs ptrace and BPF (root, BTF)"
	finish
	exit
fi
for f in "$WL" "$PLD"; do
	[ -x "$f" ] || { fail "step uprobe: workload" "$f not built (make tests)"; finish; exit; }
done
kv() { sed -n "s/^$2=//p" "$1"; }
abort_off=$(nm "$WL" | awk '$3 == "spin_abort" { print $1 }' | sed 's/^0*//')

STATS=()
trap 'for p in "${STATS[@]}"; do pkill -P "$p" 2>/dev/null; done; wait; rm -rf "$TMP"' EXIT

# probed NAME: whether a uprobe sits in a file whose name starts with NAME (bpftool names it).
probed() { bpftool perf list 2>/dev/null | grep -q "uprobe  filename \(.*/\)\?$1[^ ]*  offset"; }
# hold NAME FILE CMD...: run CMD under rseqdbg stat until the script ends, once its uprobes
# are on FILE (the one with the sections) and on the loader.
hold() {
	local name=$1 file=$2
	shift 2
	# Perf-event uprobes, as perf and bpftrace place them (a multi-uprobe link does the
	# same to the program's text, but bpftool 7.1 does not say where it is).
	RSEQDBG_UPROBES=perf-event "$RSEQDBG" stat -o "$TMP/$name.stat" -- "$@" >/dev/null \
		2>"$TMP/$name.stat.err" &
	STATS+=($!)
	wait_for -p $! 60 "stat to probe $file" probed "$file" &&
		wait_for -p "${STATS[-1]}" 60 "stat to probe the loader" probed ld-linux
}

if hold spin spin_cs "$WL" --iters 100000000 --spin 100000 --out "$TMP/held.rep"; then
	out="$TMP/sig.json" rep="$TMP/sig.rep"
	timeout 900 "$RSEQDBG" step --quiet --json --detach --from spin_op -- \
		"$WL" --iters 200 --spin 100000 --signal-us 500 --out "$rep" >"$out" 2>"$TMP/sig.err"
	rc=$?
	p=$(grep -c '"kind":"passage"' "$out")
	c=$(grep -c '"result":"commit"' "$out")
	a=$(grep -c '"result":"abort"' "$out")
	l=$(grep -c '"result":"lost"' "$out")
	why=
	[ $rc -eq 0 ] || why="rc=$rc $(tail -c 300 "$TMP/sig.err")"
	[ "$(kv "$rep" result)" = ok ] || why="$why workload: $(kv "$rep" result)"
	[ "$c" = "$(kv "$rep" commits)" ] || why="$why commits $c != $(kv "$rep" commits)"
	[ "$a" = "$(kv "$rep" aborts)" ] || why="$why aborts $a != $(kv "$rep" aborts)"
	[ "$p" = "$(kv "$rep" iterations)" ] || why="$why passages $p != iterations $(kv "$rep" iterations)"
	[ "$l" = 0 ] || why="$why $l lost"
	! grep -q 'were not seen' "$TMP/sig.err" || why="$why $(grep 'were not seen' "$TMP/sig.err")"
	if [ -z "$why" ]; then
		pass "step uprobe: abort handlers probed by stat ($p passages: $c commits, $a aborts, as the program counted)"
	else
		fail "step uprobe: abort handlers probed by stat" "$why"
	fi

	# The steps list the file's instruction at a probed address, not the probe's: the
	# workload has no breakpoint instruction of its own.
	timeout 900 "$RSEQDBG" step --detach --from spin_op -- "$WL" --iters 20 --spin 100000 \
		--signal-us 500 --out "$TMP/text.rep" >"$TMP/text.out" 2>&1
	at=$(grep -c "^[0-9]* 0x[0-9a-f]* spin_cs+0x${abort_off} " "$TMP/text.out")
	bad=$(grep -cE '^[0-9]+ 0x.*  (int3|brk) ' "$TMP/text.out")
	if [ "$at" -gt 0 ] && [ "$bad" = 0 ] && [ "$(kv "$TMP/text.rep" result)" = ok ]; then
		pass "step uprobe: the file's instruction at a probed abort handler ($at steps there)"
	else
		fail "step uprobe: the file's instruction at a probed abort handler" \
			"$at steps there, $bad breakpoint instructions listed: $(grep -m1 -E '  (int3|brk) ' "$TMP/text.out")"
	fi
fi

if hold lock libpcpu_lock.so "$PLD" --iters 100000000 --out "$TMP/held-lock.rep"; then
	out="$TMP/lock.json" rep="$TMP/lock.rep"
	timeout 900 "$RSEQDBG" step --quiet --json --detach --from pcpu_lock_acquire -- \
		"$PLD" --iters 20 --delay 2000 --hold-us 50 --stale-every 5 --out "$rep" \
		>"$out" 2>"$TMP/lock.err"
	rc=$?
	p=$(grep -c '"kind":"passage"' "$out")
	if [ $rc -eq 0 ] && [ "$(kv "$rep" result)" = ok ] && [ "$p" -gt 0 ]; then
		pass "step uprobe: --from a dlopen'ed function with the loader probed by stat ($p passages)"
	else
		fail "step uprobe: --from a dlopen'ed function with the loader probed by stat" \
			"rc=$rc result=$(kv "$rep" result) $p passages $(tail -c 300 "$TMP/lock.err")"
	fi
fi
finish
