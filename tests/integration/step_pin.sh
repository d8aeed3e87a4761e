#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step holds the stepped thread on one CPU while it steps, and gives every thread its
# affinity mask back exactly: the masks of all threads of an attached process, read from
# /proc before the attach and after the detach, are identical, after --count and after
# SIGINT; while stepping, the stepped thread's mask (sampled from outside) is one CPU, and
# with --no-pin it never changes. A process the held thread forks inherits the mask it had,
# not the one-CPU mask.
source "$(dirname "$0")/../lib.sh"

WL="$BUILD/tests/workloads/rseq_workload"
if ! have_ptrace; then
	skip "step pin" "ptrace not permitted"
	finish
	exit
fi
[ -x "$WL" ] || { fail "step pin: workload" "$WL not built"; finish; exit; }
mask() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1" 2>/dev/null; }
if [ "$(nproc)" -lt 2 ]; then
	skip "step pin" "fewer than 2 CPUs allowed: no mask to narrow"
	finish
	exit
fi

# masks PID: "TID MASK" for every thread of the process
masks() {
	local t
	for t in /proc/$1/task/*; do
		echo "${t##*/} $(mask "$t/status")"
	done
}

# sample PID TID FILE: append the thread's mask to FILE every 20 ms while PID lives
sample() {
	while kill -0 "$1" 2>/dev/null; do
		mask "/proc/$2/task/$3/status" >>"$4"
		sleep 0.02
	done
}

# attach NAME HOW [OPTIONS...]: step a worker of a running workload, ended by HOW (count or
# sigint); the masks before and after are compared, and the samples taken while stepping
# must show one CPU (or, with --no-pin, only the original mask).
attach() {
	local name=$1 how=$2 p w rp sp rc why="" orig
	shift 2
	"$WL" --mode all --threads 2 --seconds 8 --out "$TMP/$name.rep" &
	p=$!
	sleep 0.5
	w=$(ls /proc/$p/task | sort -n | sed -n 2p)
	masks $p >"$TMP/$name.before"
	orig=$(mask /proc/$p/task/$w/status)
	: >"$TMP/$name.samples"
	if [ "$how" = count ]; then
		"$RSEQDBG" step --pid $p --tid "$w" --quiet --count 50000 "$@" >"$TMP/$name.out" 2>&1 &
	else
		"$RSEQDBG" step --pid $p --tid "$w" --quiet "$@" >"$TMP/$name.out" 2>&1 &
	fi
	rp=$!
	sample $rp $p "$w" "$TMP/$name.samples" &
	sp=$!
	if [ "$how" = sigint ]; then
		sleep 1.5
		kill -INT $rp
	fi
	wait $rp
	rc=$?
	wait $sp
	masks $p >"$TMP/$name.after"
	[ $rc -eq 0 ] || why="rseqdbg exited $rc: $(tail -1 "$TMP/$name.out")"
	cmp -s "$TMP/$name.before" "$TMP/$name.after" ||
		why="$why masks differ: $(diff "$TMP/$name.before" "$TMP/$name.after" | grep '^[<>]' | head -4 | tr '\n' ' ')"
	if [ "${1:-}" = --no-pin ]; then
		grep -qvx -- "$orig" "$TMP/$name.samples" &&
			why="$why the mask changed under --no-pin: $(sort -u "$TMP/$name.samples" | tr '\n' ' ')"
	else
		grep -qE '^[0-9]+$' "$TMP/$name.samples" ||
			why="$why never seen on one CPU while stepping ($(sort -u "$TMP/$name.samples" | tr '\n' ' '))"
	fi
	wait $p
	if [ -z "$why" ]; then
		pass "$name ($(wc -l <"$TMP/$name.before") threads' masks '$orig' equal after the detach; $(wc -l <"$TMP/$name.samples") samples while stepping)"
	else
		fail "$name" "$why"
	fi
}

attach "step pin: masks restored after --count" count
attach "step pin: masks restored after SIGINT" sigint
attach "step --no-pin: the mask never changes" count --no-pin

# A child forked while the shell is held gets the shell's own mask, the held shell one CPU.
"$RSEQDBG" step --quiet -- /bin/sh -c \
	'grep Cpus_allowed_list /proc/self/status; grep Cpus_allowed_list /proc/$$/status' \
	>"$TMP/fork.out" 2>&1
child=$(sed -n 1p "$TMP/fork.out" | sed 's/^Cpus_allowed_list:[[:space:]]*//')
held=$(sed -n 2p "$TMP/fork.out" | sed 's/^Cpus_allowed_list:[[:space:]]*//')
if [ "$child" = "$(mask /proc/self/status)" ] && [[ "$held" =~ ^[0-9]+$ ]]; then
	pass "step pin: a forked child has the mask '$child', the held thread CPU $held"
else
	fail "step pin: forked child's mask" "child '$child', held '$held', ours '$(mask /proc/self/status)'"
fi
finish
