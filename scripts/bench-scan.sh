#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Scan benchmark: rseqdbg scan against readelf on the same inputs.
#  1. A generated PIE with 100,000 relocated critical sections (scripts/gen-bigpie.sh):
#     `rseqdbg scan --json` (decode, relocate, symbolize) vs `readelf -r -x __rseq_cs`
#     (list the relocations and dump the raw table), median of 5 runs each.
#  2. Every ELF file under /usr/lib (at most BENCH_MAX_FILES, default 2000): `rseqdbg scan`
#     vs `readelf -S`, both given the same batches of files, median of 3 runs each.
#  3. A system directory walked whole (BENCH_TREE, default /usr/lib/$(uname -m)-linux-gnu):
#     `rseqdbg scan -r --with-tables` (which skips the files that are not ELF itself) vs
#     `find DIR -type f -exec readelf -S {} +` (every regular file given to readelf, which
#     refuses those that are not ELF), median of 3 runs each.
# Prints tool, runs, median seconds and the ratio readelf / rseqdbg (> 1: rseqdbg faster).
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
N=${BENCH_SECTIONS:-100000}
MAXF=${BENCH_MAX_FILES:-2000}
TREE=${BENCH_TREE:-/usr/lib/$(uname -m)-linux-gnu}
[ -x "$RSEQDBG" ] || { echo "bench-scan: $RSEQDBG not built" >&2; exit 2; }
command -v readelf >/dev/null || { echo "bench-scan: readelf not found" >&2; exit 2; }
W=$(mktemp -d /tmp/bench-scan.XXXXXX)
trap 'rm -rf "$W"' EXIT

echo "generating a PIE with $N critical sections..."
scripts/gen-bigpie.sh "$W/big.pie" "$N" || exit 2

python3 - "$RSEQDBG" "$W/big.pie" "$MAXF" "$TREE" <<'PYEOF'
import os, statistics, subprocess, sys, time

sys.path.insert(0, "scripts")
import benchlib

rseqdbg, big, maxf, tree = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
devnull = subprocess.DEVNULL

def timed(cmds, runs):
    """Median wall time of running every command of cmds in sequence, and the exit codes."""
    times, codes = [], set()
    for _ in range(runs):
        t = time.perf_counter()
        for c in cmds:
            codes.add(subprocess.run(c, stdout=devnull, stderr=devnull).returncode)
        times.append(time.perf_counter() - t)
    return statistics.median(times), codes

def table(title, rows):
    print(title)
    print("  %-36s %5s %12s %8s" % ("tool", "runs", "median (s)", "ratio"))
    base = rows[0][2]
    for tool, runs, med in rows:
        print("  %-36s %5d %12.3f %8.2f" % (tool, runs, med, med / base if base else 0))
    print("  ratio = time / time of rseqdbg; readelf/rseqdbg = %.2f (%s)" % (
        rows[1][2] / base, "rseqdbg faster" if rows[1][2] > base else "readelf faster"))

# 1. One big PIE.
size = os.path.getsize(big)
print("file: %s, %.1f MiB" % (os.path.basename(big), size / 2**20))
rd, codes = timed([[rseqdbg, "scan", "--json", big]], 5)
if codes != {0}:
    print("rseqdbg scan failed on the generated PIE (exit %s)" % sorted(codes))
    sys.exit(1)
re_, _ = timed([["readelf", "-r", "-x", "__rseq_cs", big]], 5)
print("load average: %.2f %.2f %.2f on %d CPUs (wall-clock medians; a busy machine slows "
      "both tools)" % (os.getloadavg() + (os.cpu_count(),)))
table("100k relocated descriptors", [("rseqdbg scan --json", 5, rd),
                                     ("readelf -r -x __rseq_cs", 5, re_)])
print()

# 2. Every ELF file under /usr/lib.
files = benchlib.elf_files("/usr/lib", maxf)
total = sum(os.path.getsize(p) for p in files)
batches = [files[i:i + 200] for i in range(0, len(files), 200)]
# How many files rseqdbg refuses (exit 2) and how many carry rseq tables, for the record.
refused = 0
for b in batches:
    if subprocess.run([rseqdbg, "scan"] + b, stdout=devnull, stderr=devnull).returncode:
        refused += sum(subprocess.run([rseqdbg, "scan", p], stdout=devnull,
                                      stderr=devnull).returncode != 0 for p in b)
print("files: %d ELF files under /usr/lib, %.0f MiB, %d batches of up to 200; "
      "rseqdbg refused %d" % (len(files), total / 2**20, len(batches), refused))
rd, _ = timed([[rseqdbg, "scan"] + b for b in batches], 3)
re_, _ = timed([["readelf", "-S"] + b for b in batches], 3)
nd, _ = timed([[rseqdbg, "scan", "--no-debuginfo"] + b for b in batches], 3)
table("/usr/lib ELF files", [("rseqdbg scan", 3, rd), ("readelf -S", 3, re_),
                             ("rseqdbg scan --no-debuginfo", 3, nd)])
print("load average at the end: %.2f %.2f %.2f on %d CPUs" % (os.getloadavg() +
                                                               (os.cpu_count(),)))

# 3. A directory walked whole.
print()
summary = subprocess.run([rseqdbg, "scan", "-r", "--with-tables", "--no-progress", tree],
                         capture_output=True, text=True).stdout.strip().split("\n")[-1]
print("tree: %s: %s" % (tree, summary))
rd, codes = timed([[rseqdbg, "scan", "-r", "--with-tables", "--no-progress", tree]], 3)
re_, _ = timed([["find", tree, "-type", "f", "-exec", "readelf", "-S", "{}", "+"]], 3)
table("%s, walked" % tree, [("rseqdbg scan -r --with-tables", 3, rd),
                            ("find -type f -exec readelf -S {} +", 3, re_)])
print("load average at the end: %.2f %.2f %.2f on %d CPUs" % (os.getloadavg() +
                                                               (os.cpu_count(),)))
PYEOF
