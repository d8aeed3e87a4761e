#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Cost of counting entries into abort handlers: percpu_lib with one thread, its two sections
# branching to their handlers on every operation (--stale-every 1) or never (0), the same
# number of operations; the difference over the entries is the cost of one entry,
#   alone | under `rseqdbg stat --no-uprobes` | under `rseqdbg stat` (uprobes),
# minimum of BENCH_ROUNDS (default 3) rounds, in ns per handler entry. (bpftrace cannot stand
# beside it: its uprobes need a symbol, and these handlers have none.) Needs root.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
WL="$BUILD/tests/workloads/percpu_lib"
ROUNDS=${BENCH_ROUNDS:-3}
ITERS=${BENCH_ITERS:-2000000}
[ -x "$RSEQDBG" ] || { echo "bench-handler: $RSEQDBG not built" >&2; exit 2; }
[ -x "$WL" ] || { echo "bench-handler: $WL not built" >&2; exit 2; }

python3 - "$RSEQDBG" "$WL" "$ROUNDS" "$ITERS" <<'PYEOF'
import subprocess, sys, time

rseqdbg, wl, rounds, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tools = {
    "alone": [],
    "rseqdbg stat --no-uprobes": [rseqdbg, "stat", "--no-uprobes", "-o", "/dev/null", "--"],
    "rseqdbg stat": [rseqdbg, "stat", "-o", "/dev/null", "--"],
}

def run(tool, every):
    work = [wl, "--threads", "1", "--iters", str(iters), "--stale-every", str(every),
            "--out", "/dev/null"]
    cmd = tools[tool] + work
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t

best = {(k, e): float("inf") for k in tools for e in (0, 1)}
for _ in range(rounds):
    for k in tools:
        for e in (0, 1):
            best[k, e] = min(best[k, e], run(k, e))
entries = 2 * iters
print("%d handler entries (2 sections x %d operations), minimum of %d rounds" %
      (entries, iters, rounds))
for k in tools:
    print("  %-36s %8.1f ns per handler entry (%.3f s without entries)" %
          (k, (best[k, 1] - best[k, 0]) / entries * 1e9, best[k, 0]))
PYEOF
