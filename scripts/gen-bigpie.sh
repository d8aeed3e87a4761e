#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Generate a PIE with N critical sections (default 100000) for the scan benchmark: one
# function per section, a descriptor in __rseq_cs, a __rseq_cs_ptr_array slot and an exit
# point each, linked with GNU ld so every table value is an R_X86_64_RELATIVE relocation.
# Usage: scripts/gen-bigpie.sh OUT [N]
set -eu
[ $# -ge 1 ] || { echo "usage: $0 OUT [N]" >&2; exit 2; }
out=$1 n=${2:-100000}
w=$(mktemp -d /tmp/gen-bigpie.XXXXXX)
trap 'rm -rf "$w"' EXIT

python3 - "$n" >"$w/big.s" <<'PYEOF'
import sys
n = int(sys.argv[1])
w = sys.stdout.write
w("\t.text\n")
for i in range(n):
    w(f"""\t.globl\tcs_fn{i}
\t.type\tcs_fn{i}, @function
cs_fn{i}:
\tleaq\t.Lc{i}(%rip), %rax
\tmovq\t%rax, rseq_area+8(%rip)
.Ls{i}:
\tmovl\trseq_area+4(%rip), %eax
\tcmpl\t%edi, %eax
\tjne\t.Le{i}
\taddq\t$1, counters(%rip)
.Lp{i}:
\tret
\t.byte\t0x0f, 0xb9, 0x3d
\t.long\t0x53053053
.La{i}:
\tjmp\tcs_fn{i}
.Le{i}:
\tret
\t.size\tcs_fn{i}, .-cs_fn{i}
\t.pushsection __rseq_cs, "aw"
\t.balign\t32
.Lc{i}:
\t.long\t0, 0
\t.quad\t.Ls{i}, .Lp{i} - .Ls{i}, .La{i}
\t.popsection
\t.pushsection __rseq_cs_ptr_array, "aw"
\t.quad\t.Lc{i}
\t.popsection
\t.pushsection __rseq_exit_point_array, "aw"
\t.quad\t.Ls{i}, .Le{i}
\t.popsection
""")
w("""\t.globl\t_start
\t.type\t_start, @function
_start:
\tmovl\t$60, %eax
\txorl\t%edi, %edi
\tsyscall
\t.size\t_start, .-_start
\t.bss
\t.p2align 5
rseq_area:
\t.zero\t32
counters:
\t.zero\t8
\t.section .note.GNU-stack, "", @progbits
""")
PYEOF
as -o "$w/big.o" "$w/big.s"
ld -pie --build-id=sha1 -e _start --dynamic-linker /lib64/ld-linux-x86-64.so.2 -o "$out" "$w/big.o"
