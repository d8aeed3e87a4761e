#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step runs a critical section inside a tree when it can see every way out of it:
# the passage then takes no stop of its own. spin_cs's section spins inside itself, commits
# or aborts, and the program counts both:
#  - while a second thread signals the stepped one, most signals stop it inside the section,
#    in the middle of a tree: the instructions before it are counted, the signal is delivered
#    and the passage goes on to the abort handler. Every passage must match the program's
#    own counts (with this path missing, stepping ends with "left the decoded paths");
#  - without signals, the default mode steps what --single-step steps, instruction for
#    instruction (kernel aborts, and the report when they differ, aside: see below), and a
#    turn of the loop costs at most 1.5 stops (on x86_64 three trees per two turns,
#    stopping at the commit, the arming store and the return after the section; on aarch64
#    five per four, its return going to x30, which the section does not write), where a
#    stop before the section and one after it made 2. On aarch64 the comparison
#    also covers the steps over svc where the program writes its report, each of which left the
#    next single step pending (step(1)).
source "$(dirname "$0")/../lib.sh"

WL="$BUILD/tests/workloads/spin_cs"
if ! have_ptrace; then
	skip "step fold" "ptrace not permitted"
	finish
	exit
fi
if [ ! -x "$WL" ]; then
	skip "step fold" "$WL not built"
	finish
	exit
fi
kv() { sed -n "s/^$2=//p" "$1"; }
js() { sed -n "s/.*\"kind\":\"summary\".*\"$2\":\([0-9]*\).*/\1/p" "$1"; }

# Signals into the section: the workload signals each odd attempt once, and an odd attempt
# spins long enough for the signal to land inside it, under a debugger too; even attempts
# are not signalled, so the run ends however slow the CPU. Every passage, commit and abort
# must match the program's own counts, retry loops included (their aborts are counted on
# the way, step(1)). The timeout only turns a livelock into a failure. Whether a signal
# reaches the thread while it is inside the section, not while it is stopped in front of
# it, is the scheduler's choice: a run in which none did is run again, up to 4 runs.
why="no run"
for try in 1 2 3 4; do
	out="$TMP/sig.$try.json"
	rep="$TMP/sig.$try.report"
	timeout 900 "$RSEQDBG" step --quiet --json --detach --from spin_op -- \
		"$WL" --iters 200 --spin 100000 --signal-us 500 --out "$rep" >"$out" 2>"$TMP/sig.err"
	rc=$?
	why=
	[ $rc -ne 124 ] || why="did not finish in 900 s (livelock?)"
	[ $rc -eq 0 ] || why="$why rc=$rc $(tail -c 300 "$TMP/sig.err")"
	[ "$(kv "$rep" result)" = ok ] || why="$why workload: $(kv "$rep" result)"
	p=$(grep -c '"kind":"passage"' "$out")
	c=$(grep -c '"result":"commit"' "$out")
	a=$(grep -c '"result":"abort"' "$out")
	l=$(grep -c '"result":"lost"' "$out")
	inside=$(grep -c '"kind":"signal".*during the passage' "$out")
	[ "$c" = "$(kv "$rep" commits)" ] || why="$why commits $c != $(kv "$rep" commits)"
	[ "$l" = 0 ] || why="$why $l lost"
	[ "$p" = "$(kv "$rep" iterations)" ] || why="$why passages $p != iterations $(kv "$rep" iterations)"
	[ "$a" = "$(kv "$rep" aborts)" ] || why="$why aborts $a != $(kv "$rep" aborts)"
	[ -z "$why" ] || break
	[ "$inside" -gt 0 ] && break
	why="no signal landed inside a passage in $try runs"
done
if [ -z "$why" ]; then
	pass "step fold: signals inside sections ($p passages: $c commits, $a aborts, $inside signals inside, as the program counted; run $try)"
else
	fail "step fold: signals inside sections" "$why"
fi

# Without signals: the same instructions as --single-step, and the stops per turn, with a
# section of one turn of its spin. A kernel abort (a preemption inside the section: under
# emulation, and in nearly every --single-step run on a real-time kernel) adds the abort
# path to its run: the abort handler and the retry up to the arming store again. Those are
# taken out of both listings, and must be as many as the program counted aborts.
# Two runs that counted different aborts also part inside the program's report: glibc's
# printf formats a zero on a path of its own. Then the report's statement (spin_cs.c, from
# its fprintf to the line that ends it) is taken out of both listings too, named by its
# source lines; fclose after it, with its system calls, stays compared.
abort_at="spin_cs+0x$(nm "$WL" | awk '$3 == "spin_abort" { print $1 }' | sed 's/^0*//')"
report_from=$(grep -n 'fprintf(out, "iterations=' "$TOP/tests/workloads/spin_cs.c" | cut -d: -f1)
report_to=$(awk -v from="$report_from" 'NR >= from && /\);$/ { print NR; exit }' \
	"$TOP/tests/workloads/spin_cs.c")
# unabort FILE DROP: FILE without its abort paths (from a line at the abort handler,
# spin_abort, named by its place in the file, to the next instance of the line before it),
# and with DROP=1 without the report's lines, into FILE.clean; prints how many abort paths
# it took out.
unabort() {
	awk -v out="$1.clean" -v at="$abort_at" -v drop="$2" -v from="$report_from" \
		-v to="$report_to" '
		function srcline(f) {
			return f ~ /^\(spin_cs\.c:[0-9]+\)$/ ? substr(f, length("(spin_cs.c:") + 1) + 0 : 0
		}
		drop && !gone && srcline($4) == from { gone = 1 }
		gone == 1 && srcline($4) > to { gone = 2 }
		gone == 1 { next }
		skip && $1 == until { skip = 0; next }
		skip { next }
		$2 == at && prev != "" { skip = 1; until = prev; n++; next }
		{ print > out; prev = $1 }
		END { print n + 0 }' "$1"
}
for mode in default --single-step; do
	args=(--detach --from spin_op)
	[ $mode = default ] || args+=("$mode")
	setarch -R "$RSEQDBG" step "${args[@]}" -- "$WL" --iters 100 --spin 1 \
		--out "$TMP/same.$mode.report" >"$TMP/same.$mode" 2>&1
	grep -E '^[0-9]+ 0x' "$TMP/same.$mode" | cut -d' ' -f2- >"$TMP/steps.$mode"
done
declare -A ab
drop=0 what="the same"
if [ "$(kv "$TMP/same.default.report" aborts)" != "$(kv "$TMP/same.--single-step.report" aborts)" ]; then
	drop=1 what="but the report (spin_cs.c:$report_from-$report_to) the same"
fi
for mode in default --single-step; do
	ab[$mode]=$(unabort "$TMP/steps.$mode" $drop)
done
n=$(wc -l <"$TMP/steps.default.clean")
if [ "$n" -gt 1000 ] && [ "${ab[default]}" = "$(kv "$TMP/same.default.report" aborts)" ] &&
	[ "${ab[--single-step]}" = "$(kv "$TMP/same.--single-step.report" aborts)" ] &&
	cmp -s "$TMP/steps.default.clean" "$TMP/steps.--single-step.clean"; then
	pass "step fold: default and --single-step step $what $n instructions (aborts: ${ab[default]}, ${ab[--single-step]}, as the program counted)"
else
	fail "step fold: default and --single-step step the same instructions" "$n steps; abort paths ${ab[default]}, ${ab[--single-step]}; $(cat "$TMP"/same.*.report | grep aborts | tr '\n' ' ') $(diff "$TMP/steps.default.clean" "$TMP/steps.--single-step.clean" | head -4)"
fi
# The stops: runs without an abort, each repeated on its own up to 8 times.
# clean NAME ARGS...: ARGS --out $TMP/NAME.report >$TMP/NAME until the program counted no
# abort.
clean() {
	local name=$1
	shift
	for _ in 1 2 3 4 5 6 7 8; do
		"$@" --out "$TMP/$name.report" >"$TMP/$name" 2>&1
		grep -q '^aborts=0$' "$TMP/$name.report" && return
	done
}
for n in 100 300; do
	clean "stops.$n" "$RSEQDBG" step --quiet --json --detach --from spin_op -- "$WL" \
		--iters $n --spin 1
done
s1=$(js "$TMP/stops.100" ptrace_stops) s3=$(js "$TMP/stops.300" ptrace_stops)
p1=$(js "$TMP/stops.100" passages) p3=$(js "$TMP/stops.300" passages)
if [ -n "$s1" ] && [ -n "$s3" ] && [ "$((p3 - p1))" = 200 ] && [ $((2 * (s3 - s1))) -le $((3 * 200)) ]; then
	pass "step fold: $((s3 - s1)) stops for 200 more turns through the section (at most 1.5 a turn)"
else
	fail "step fold: at most 1.5 stops a turn through the section" "stops $s1 -> $s3, passages $p1 -> $p3 (aborts: $(cat "$TMP"/stops.*.report | grep aborts | tr '\n' ' '))"
fi

finish
