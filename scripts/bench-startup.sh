#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Start-up of `rseqdbg stat -- CMD` for a command that does nothing (load, attach, hold the
# command at its exec and loader calls, detach): with the uprobes on the abort handlers (and
# the loader's), as perf-event uprobes (one each, as kernels before 6.6 have them) and
# without uprobes, side by side, interleaved, BENCH_ROUNDS (default 20) runs each after 3
# warm-up runs; minimum, median and mean, and their ratios to --no-uprobes. Needs root.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
ROUNDS=${BENCH_ROUNDS:-20}
[ -x "$RSEQDBG" ] || { echo "bench-startup: $RSEQDBG not built" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench-startup: needs root to load BPF programs" >&2; exit 2; }

python3 - "$RSEQDBG" "$ROUNDS" <<'PYEOF'
import os, statistics, subprocess, sys, time

rseqdbg, rounds = sys.argv[1], int(sys.argv[2])
check = subprocess.run([rseqdbg, "trace", "--check"], capture_output=True, text=True).stdout
multi = any(l.split()[:2] == ["yes", "uprobe_multi"] for l in check.splitlines())
stat = [rseqdbg, "stat", "-o", os.devnull]
runs = {
    "stat --no-uprobes -- true": (stat + ["--no-uprobes", "--", "true"], {}),
    "stat -- true": (stat + ["--", "true"], {}),
}
if multi:
    runs["stat -- true (perf-event uprobes)"] = (stat + ["--", "true"],
                                                 {"RSEQDBG_UPROBES": "perf-event"})

def run(cmd, env):
    t = time.perf_counter()
    subprocess.run(cmd, env=dict(os.environ, **env), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t

times = {k: [] for k in runs}
for i in range(rounds + 3):
    for k, (cmd, env) in runs.items():
        dt = run(cmd, env)
        if i >= 3:
            times[k].append(dt)
print("abort handlers' uprobes as %s; %d runs each, interleaved" %
      ("multi-uprobe links" if multi else "perf-event uprobes (no multi-uprobe links)", rounds))
print("  %-36s %8s %8s %8s %7s %7s" % ("run", "min ms", "median", "mean", "ratio", "(mean)"))
base = min(times["stat --no-uprobes -- true"])
mbase = statistics.mean(times["stat --no-uprobes -- true"])
for k, v in times.items():
    print("  %-36s %8.1f %8.1f %8.1f %7.2f %7.2f" %
          (k, 1e3 * min(v), 1e3 * statistics.median(v), 1e3 * statistics.mean(v),
           min(v) / base, statistics.mean(v) / mbase))
PYEOF
