#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The main job on the bundled example: scan and audit its rseq tables, step over one of its
# critical sections, and (as root) summarize its aborts live with eBPF.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
R="$BUILD/rseqdbg"
EX="$BUILD/examples/percpu_counter"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say rseqdbg scan "$EX"
"$R" scan "$EX" || exit 1

say rseqdbg audit "$EX"
"$R" audit "$EX"
[ $? -le 1 ] || exit 1

say rseqdbg step --from percpu_inc --count 40 -- "$EX" --threads 1 --iters 3
"$R" step --from percpu_inc --count 40 -- "$EX" --threads 1 --iters 3 || exit 1

if [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	say rseqdbg stat -- "$EX" --threads 8 --iters 2000000
	"$R" stat -- "$EX" --threads 8 --iters 2000000 || exit 1
else
	echo
	echo "(rseqdbg stat needs root, or CAP_BPF and CAP_PERFMON, and kernel BTF: skipped)"
fi
