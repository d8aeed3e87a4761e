# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Shared helpers for integration tests: source it, then call pass/fail/skip per case.
# Each case prints one line the runner counts: "PASS: name", "FAIL: name: why", "SKIP: name: why".
set -u
# No test reaches a debuginfod server it did not start (Debian's profile sets DEBUGINFOD_URLS
# in login shells): symbols come from the files in the tree.
unset DEBUGINFOD_URLS
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac
# shellcheck disable=SC2034 # for the scripts that source this file
RSEQDBG="$BUILD/rseqdbg"
# The signature glibc registers rseq with on this machine's architecture
# shellcheck disable=SC2034 # for the scripts that source this file
case $(uname -m) in
aarch64) RSEQ_SIG_HEX=0xd428bc00 ;;
*) RSEQ_SIG_HEX=0x53053053 ;;
esac
# shellcheck disable=SC2034 # for the scripts that source this file
FIX="$TOP/tests/fixtures"
TMP=$(mktemp -d /tmp/rseqdbg-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
_fails=0

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+: $2}"; _fails=$((_fails + 1)); }
skip() { echo "SKIP: $1${2:+: $2}"; }

# check NAME CMD...: pass when CMD succeeds
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }

# Privilege probes: print nothing, return 0 when available.
have_root() { [ "$(id -u)" -eq 0 ]; }
have_ptrace() {
	[ "$(id -u)" -eq 0 ] && return 0
	[ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -le 1 ]
}
have_bpf() { [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ]; }

# RSEQDBG_TEST_QUICK=1 (the kernel matrix, whose guests run on an emulated CPU 10-20 times
# slower): the scripts leave out the cases that test nothing a kernel changes (usage errors,
# output formats, repetitions), and keep every case that does with the same assertions.
quick() { [ "${RSEQDBG_TEST_QUICK:-0}" = 1 ]; }

# wait_for [-q] [-p PID] [-i INTERVAL] SECONDS WHAT CMD...: run CMD every INTERVAL seconds
# (0.05) until it succeeds, for SECONDS at most, or until process PID is gone. When it never
# does, it prints "FAIL: waiting for WHAT: why" and returns 1, so no wait ends unnoticed; -q
# leaves the line out, for a caller that says itself what failed.
wait_for() {
	local quiet=0 pid="" iv=0.05 secs what n
	while [ $# -gt 0 ]; do
		case $1 in
		-q) quiet=1; shift ;;
		-p) pid=$2; shift 2 ;;
		-i) iv=$2; shift 2 ;;
		*) break ;;
		esac
	done
	secs=$1 what=$2
	shift 2
	n=$(awk -v s="$secs" -v i="$iv" 'BEGIN { n = int(s / i + 0.5); print (n > 0 ? n : 1) }')
	while :; do
		"$@" && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			# what it waited for may have come just before the end
			"$@" && return 0
			[ $quiet = 1 ] || fail "waiting for $what" "process $pid ended first"
			return 1
		fi
		n=$((n - 1))
		[ $n -gt 0 ] || break
		sleep "$iv"
	done
	[ $quiet = 1 ] || fail "waiting for $what" "not within $secs s"
	return 1
}

# has_tasks PID N: process PID has N threads or more
has_tasks() {
	local t=(/proc/"$1"/task/*)
	[ -e "${t[0]}" ] && [ ${#t[@]} -ge "$2" ]
}

# wait_tasks PID N: wait (up to 60 s: an emulated guest is slow to start threads) until
# process PID has N threads; fails when it does not
wait_tasks() { wait_for -p "$1" 60 "process $1 to have $2 threads" has_tasks "$1" "$2"; }

# wait_grep PATTERN FILE: wait (up to 60 s) until FILE holds a line matching PATTERN; fails
# when it does not
wait_grep() { wait_for 60 "'$1' in $(basename "$2")" file_has "$1" "$2"; }

# exited PID: process PID has ended
exited() { ! kill -0 "$1" 2>/dev/null; }

# file_has [GREP-OPTION...] PATTERN FILE: a line of FILE matches; false while FILE is missing
file_has() { grep -q "$@" 2>/dev/null; }

# seed_random: seed $RANDOM with RSEQDBG_SEED (by default the time) and print it, so that a
# run's random choices can be made again: RSEQDBG_SEED=N make check TESTS=NAME. Only $RANDOM
# read by this shell follows the seed: a $(...) subshell draws from a seed of its own.
seed_random() {
	RSEQDBG_SEED=${RSEQDBG_SEED:-$(date +%s)}
	echo "seed: $RSEQDBG_SEED"
	RANDOM=$RSEQDBG_SEED
}

# The tracer's BPF programs (trace, stat, exporter): the highest program id loaded now, and
# those of ours loaded after id $1 and still there (left_behind ID prints "name:id ..."). A
# script's programs are those with ids above the highest at its start; one still loaded at its
# end (after other users' short runs had time to end) was left behind.
max_prog_id() { bpftool prog show -j 2>/dev/null | python3 -c 'import json, sys; print(max([p["id"] for p in json.load(sys.stdin)] or [0]))'; }
left_behind() {
	bpftool prog show -j 2>/dev/null | python3 -c 'import json, sys
# the kernel keeps 15 characters of a name
names = {n[:15] for n in ("rseq_ip_fixup", "rseq_ip_fixup_backup", "rseq_update", "sched_switch",
    "sched_migrate_task", "signal_deliver", "sched_process_exit", "sched_process_exec",
    "sched_process_fork", "abort_handler", "abort_handler_nopreempt")}
print(" ".join("%s:%d" % (p["name"], p["id"]) for p in json.load(sys.stdin) if p.get("name") in names and p["id"] > int(sys.argv[1])))' "$1"
}

# The tracer leaves the removal of its uprobes, which waits for the kernel's grace periods,
# to processes of its own (rseqdbg-detach) that end about 0.1 s after it: released waits for
# them (what they remove is still in every process that maps a probed file until then).
released() { wait_for 60 "the tracer's uprobes to be removed" sh -c '! pgrep -x rseqdbg-detach >/dev/null'; }

# The exit status of a test script: non-zero when a case failed.
finish() { [ "$_fails" -eq 0 ]; }
