#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Audit benchmark.
#  1. A generated PIE with 100,000 critical sections (scripts/gen-bigpie.sh): every check,
#     code decoded with capstone, in sections per second; side by side, what a reviewer would
#     otherwise run to read the same code: `objdump -d -j .text` over the same file.
#     Median of 3 runs each.
#  2. Every ELF file under /usr/lib (at most BENCH_MAX_FILES, default 2000), audited in
#     batches of 100 files per process, in files per second (median of 3 runs).
# BUILD names the build directory.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
N=${BENCH_SECTIONS:-100000}
MAXF=${BENCH_MAX_FILES:-2000}
[ -x "$RSEQDBG" ] || { echo "bench-audit: $RSEQDBG not built" >&2; exit 2; }
command -v objdump >/dev/null || { echo "bench-audit: objdump not found" >&2; exit 2; }
[ -x scripts/gen-bigpie.sh ] || { echo "bench-audit: scripts/gen-bigpie.sh missing" >&2; exit 2; }
W=$(mktemp -d /tmp/bench-audit.XXXXXX)
trap 'rm -rf "$W"' EXIT

echo "generating a PIE with $N critical sections..."
scripts/gen-bigpie.sh "$W/big.pie" "$N" || exit 2

python3 - "$RSEQDBG" "$W/big.pie" "$N" "$MAXF" <<'PYEOF'
import os, statistics, subprocess, sys, time

sys.path.insert(0, "scripts")
import benchlib

rseqdbg, big, nsec, maxf = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
devnull = subprocess.DEVNULL

def run(cmd):
    return subprocess.run(cmd, stdout=devnull, stderr=devnull).returncode

def timed(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)

# 1. The big PIE.
rc = run([rseqdbg, "audit", "--fail-on", "info", big])
if rc not in (0, 1):
    sys.exit("bench-audit: rseqdbg audit failed on %s (exit %d)" % (big, rc))
t_audit = timed(lambda: run([rseqdbg, "audit", big]), 3)
t_json = timed(lambda: run([rseqdbg, "audit", "--json", big]), 3)
t_objdump = timed(lambda: run(["objdump", "-d", "-j", ".text", big]), 3)
print("1. %d-section PIE (%s audit %s)" % (nsec, "clean" if rc == 0 else "findings", big.split("/")[-1]))
print("  %-40s %5s %12s %14s %8s" % ("tool", "runs", "median (s)", "sections/s", "ratio"))
for tool, t in (("rseqdbg audit", t_audit), ("rseqdbg audit --json", t_json),
                ("objdump -d -j .text", t_objdump)):
    print("  %-40s %5d %12.3f %14.0f %8.2f" % (tool, 3, t, nsec / t, t / t_audit))
print("  ratio = time / time of rseqdbg audit; objdump/rseqdbg = %.2f (%s)" % (
    t_objdump / t_audit, "rseqdbg faster" if t_objdump > t_audit else "objdump faster"))
print("  (objdump only disassembles; rseqdbg decodes the tables, every section's code and")
print("   every instruction of .text for jumps into sections and orphan signatures)")

# 2. Every ELF file under /usr/lib.
files = benchlib.elf_files("/usr/lib", maxf)
batches = [files[i:i + 100] for i in range(0, len(files), 100)]

# A batch stops at its first file that cannot be audited (exit 2): those are run one by one,
# once, to count them; the timed runs then use the batches of auditable files.
ok, bad = [], 0
for b in batches:
    if run([rseqdbg, "audit", "--fail-on", "info"] + b) in (0, 1):
        ok.append(b)
        continue
    good = [f for f in b if run([rseqdbg, "audit", "--fail-on", "info", f]) in (0, 1)]
    bad += len(b) - len(good)
    if good:
        ok.append(good)
nok = sum(len(b) for b in ok)
def audit_all():
    for b in ok:
        run([rseqdbg, "audit"] + b)
t_all = timed(audit_all, 3)
print()
print("2. ELF files under /usr/lib: %d audited (%d not auditable: no sections table, ...)" %
      (nok, bad))
print("  %-40s %5s %12s %14s" % ("tool", "runs", "median (s)", "files/s"))
print("  %-40s %5d %12.3f %14.0f" % ("rseqdbg audit (100 files per run)", 3, t_all,
                                     nok / t_all if t_all else 0))
PYEOF
