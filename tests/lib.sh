# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Shared helpers for integration tests: source it, then call pass/fail/skip per case.
# Each case prints one line the runner counts: "PASS: name", "FAIL: name: why", "SKIP: name: why".
set -u
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

# wait_tasks PID N: wait (up to 60 s: an emulated guest is slow to start threads) until
# process PID has N threads; fails when it does not
wait_tasks() {
	for _ in $(seq 1200); do
		[ "$(ls /proc/$1/task 2>/dev/null | wc -l)" -ge "$2" ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# wait_grep PATTERN FILE: wait (up to 60 s) until FILE holds a line matching PATTERN
wait_grep() {
	for _ in $(seq 1200); do
		grep -q "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
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

# The exit status of a test script: non-zero when a case failed.
finish() { [ "$_fails" -eq 0 ]; }
