#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Tracing overhead benchmark: the workload doing rseq operations at full speed on every CPU
# with a per-thread signal timer (a fixed number of iterations, so wall time shows the cost),
#   alone | under `rseqdbg stat` | under a bpftrace script counting the same tracepoints,
# interleaved in each round, median of BENCH_ROUNDS (default 3) rounds, ratios to "alone".
# Wall time and CPU time (user + system of everything run, which also catches the BPF
# programs' cost in the workload's threads and is less disturbed by other load) are shown.
# Then start-up (tracing `true`: attach, run, detach) and peak RSS of rseqdbg vs bpftrace.
# Needs root (both tools load BPF programs).
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
WL="$BUILD/tests/workloads/rseq_workload"
ROUNDS=${BENCH_ROUNDS:-3}
ITERS=${BENCH_ITERS:-1000000000}
SIGUS=${BENCH_SIGNAL_US:-1000}
[ -x "$RSEQDBG" ] || { echo "bench-trace: $RSEQDBG not built" >&2; exit 2; }
[ -x "$WL" ] || { echo "bench-trace: $WL not built" >&2; exit 2; }
command -v bpftrace >/dev/null || { echo "bench-trace: bpftrace not found" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench-trace: needs root to load BPF programs" >&2; exit 2; }
W=$(mktemp -d /tmp/bench-trace.XXXXXX)
trap 'rm -rf "$W"' EXIT

# The same tracepoints rseqdbg stat uses, counted per section, cause source and CPU, for the
# traced command only (cpid).
cat >"$W/count.bt" <<'BT'
tracepoint:rseq:rseq_ip_fixup /pid == cpid/ { @aborts[args->start_ip] = count(); @cpu[cpu] = count(); }
tracepoint:rseq:rseq_update /pid == cpid/ { @updates = count(); }
tracepoint:sched:sched_migrate_task /args->pid == cpid/ { @migrations = count(); }
tracepoint:signal:signal_deliver /pid == cpid/ { @signals = count(); }
tracepoint:sched:sched_switch /args->next_pid == cpid/ { @switches = count(); }
BT

python3 - "$RSEQDBG" "$WL" "$W/count.bt" "$ROUNDS" "$ITERS" "$SIGUS" "$(nproc)" <<'PYEOF'
import os, resource, statistics, subprocess, sys, time

rseqdbg, wl, bt, rounds, iters, sigus, ncpu = sys.argv[1:8]
rounds = int(rounds)
work = [wl, "--threads", ncpu, "--iters", iters, "--signal-us", sigus, "--out", os.devnull]
runs = {
    "workload alone": work,
    "rseqdbg stat": [rseqdbg, "stat", "-o", os.devnull, "--"] + work,
    "bpftrace (same tracepoints)": ["bpftrace", bt, "-c", " ".join(work)],
}

def run(cmd):
    """Wall time, CPU time and peak RSS (KiB) of cmd and what it waits for."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(cmd[0], cmd)
    t = time.perf_counter()
    _, status, ru = os.wait4(pid, 0)
    dt = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("bench-trace: %s failed" % " ".join(cmd))
    return dt, ru.ru_maxrss, ru.ru_utime + ru.ru_stime

print("workload: %s threads x %s iterations, signal every %s us, median of %d rounds"
      % (ncpu, iters, sigus, rounds))
times = {k: [] for k in runs}
cpu = {k: [] for k in runs}
for _ in range(rounds):
    for k, cmd in runs.items():
        r = run(cmd)
        times[k].append(r[0])
        cpu[k].append(r[2])
base = statistics.median(times["workload alone"])
cbase = statistics.median(cpu["workload alone"])
print("  %-30s %10s %7s %10s %7s" % ("run", "wall (s)", "ratio", "CPU (s)", "ratio"))
for k in runs:
    m, c = statistics.median(times[k]), statistics.median(cpu[k])
    print("  %-30s %10.3f %7.3f %10.3f %7.3f" % (k, m, m / base, c, c / cbase))
for what, d, b in (("wall", times, base), ("CPU", cpu, cbase)):
    over_r = statistics.median(d["rseqdbg stat"]) / b - 1
    over_b = statistics.median(d["bpftrace (same tracepoints)"]) / b - 1
    print("  %s overhead: rseqdbg %+.1f%%, bpftrace %+.1f%%" % (what, 100 * over_r, 100 * over_b))

# Start-up: trace a command that does nothing; what remains is attach + detach.
starts = {
    "rseqdbg stat -- true": [rseqdbg, "stat", "-o", os.devnull, "--", "/bin/true"],
    "bpftrace -c true": ["bpftrace", bt, "-c", "/bin/true"],
}
print("start-up and peak memory (tracing `true`), median of %d" % rounds)
print("  %-30s %12s %14s" % ("tool", "median (s)", "peak RSS (KiB)"))
res = {}
for k, cmd in starts.items():
    r = [run(cmd) for _ in range(rounds)]
    res[k] = (statistics.median(x[0] for x in r), max(x[1] for x in r))
    print("  %-30s %12.3f %14d" % (k, res[k][0], res[k][1]))
a, b = res["rseqdbg stat -- true"], res["bpftrace -c true"]
print("  bpftrace/rseqdbg: start-up %.1fx, peak RSS %.1fx" % (b[0] / a[0], b[1] / a[1]))
PYEOF
