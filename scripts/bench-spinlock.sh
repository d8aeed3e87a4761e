#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Stepping a slow section in a shared object: pcpu_lock (threads twice the CPUs, each holder
# sleeping --hold-us with its per-CPU lock of libpcpu_lock.so, whose section turns a delay
# loop) run natively and under `rseqdbg step --from worker --detach` (default mode: one worker
# stepped from its start to its end while the others run), on an idle machine and beside two
# busy loops; wall times, and the ratio stepped / native. Each run is bounded by
# BENCH_SPINLOCK_TIMEOUT seconds (default 300): one that takes longer is reported as not
# finished, with the passages stepped by then. Sizes: BENCH_SPINLOCK_ITERS (100),
# BENCH_SPINLOCK_DELAY (200000), BENCH_SPINLOCK_HOLD_US (50), as tests/integration/step_spinlock.sh
# runs it. Figures only: nothing here passes or fails on a time.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
WL="$BUILD/tests/workloads/pcpu_lock"
[ -x "$RSEQDBG" ] || { echo "bench-spinlock: $RSEQDBG not built" >&2; exit 2; }
[ -x "$WL" ] || { echo "bench-spinlock: $WL not built (make tests)" >&2; exit 2; }

python3 - "$RSEQDBG" "$WL" "${BENCH_SPINLOCK_TIMEOUT:-300}" "${BENCH_SPINLOCK_ITERS:-100}" \
	"${BENCH_SPINLOCK_DELAY:-200000}" "${BENCH_SPINLOCK_HOLD_US:-50}" <<'PYEOF'
import json, os, signal, subprocess, sys, tempfile, time

rseqdbg, wl = sys.argv[1], sys.argv[2]
limit, iters, delay, hold = (int(a) for a in sys.argv[3:7])
work = [wl, "--iters", str(iters), "--delay", str(delay), "--hold-us", str(hold),
        "--stale-every", "5"]
step = [rseqdbg, "step", "--json", "--quiet", "--detach", "--from", "worker", "--"]

def run(cmd):
    """Wall time of cmd, or None when it did not finish in limit seconds; its JSON events."""
    with tempfile.TemporaryFile("w+") as out:
        t = time.perf_counter()
        p = subprocess.Popen(cmd + ["--out", os.devnull], stdout=out,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            p.wait(timeout=limit)
            wall = time.perf_counter() - t
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            wall = None
        out.seek(0)
        ev = [json.loads(l) for l in out if l.startswith("{")]
    return wall, ev

def load(on):
    """Two busy loops while on."""
    if not on:
        return []
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]

print("pcpu_lock --iters %d --delay %d --hold-us %d --stale-every 5, %d CPUs, %d threads; "
      "limit %d s a run" % (iters, delay, hold, os.cpu_count(), 2 * os.cpu_count(), limit))
print("  %-6s %10s %10s %8s  %s" % ("load", "native s", "step s", "ratio", "stepped thread"))
for busy in (False, True):
    loops = load(busy)
    try:
        native, _ = run(work)
        stepped, ev = run(step + work)
    finally:
        for p in loops:
            p.kill()
            p.wait()
    ps = [e for e in ev if e.get("type") == "passage"]
    res = {r: sum(1 for p in ps if p["result"] == r) for r in ("commit", "abort", "exit", "lost")}
    what = "%d passages (%d commit, %d abort, %d exit, %d lost)" % (
        len(ps), res["commit"], res["abort"], res["exit"], res["lost"])
    fmt = lambda w: "%.2f" % w if w is not None else "-"
    ratio = "x%.1f" % (stepped / native) if native and stepped else "-"
    print("  %-6s %10s %10s %8s  %s" % ("busy" if busy else "idle", fmt(native), fmt(stepped),
                                        ratio, what))
    for name, w in (("native", native), ("step", stepped)):
        if w is None:
            print("    %s: did not finish in %d s" % (name, limit))
PYEOF
