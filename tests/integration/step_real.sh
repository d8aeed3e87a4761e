#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step on real programs found on this machine, from their first instruction: the
# largest statically linked non-PIE executable under /usr that carries rseq critical sections
# (tcmalloc), a dynamically linked C++ program (gdb, else python3) and a small C program (ls).
# Each runs 1,000,000 instructions in the default mode (between breakpoints), the static one
# 1,500,000, and the addresses of its first 50,000 instructions are those --single-step
# reports, one by one.
# Address space randomization is turned off for both runs (setarch -R) so they compare.
# Regression: in the static program a never-taken "call 0" (an undefined weak function behind
# a test) was planted a breakpoint at address 0 and stepping stopped with an I/O error; at
# 1,270,210 instructions a breakpoint byte kept in the code cache after its removal was
# decoded as an int3 inside an instruction, and the tracee ran off the decoded paths.
source "$(dirname "$0")/../lib.sh"

CMP=50000
if ! have_ptrace; then
	skip "step real programs" "ptrace not permitted"
	finish
	exit
fi
if ! command -v setarch >/dev/null; then
	skip "step real programs" "setarch (util-linux) not installed"
	finish
	exit
fi

# The largest ELF executable of type EXEC (not PIE) without a program interpreter, over
# 20 MB under /usr, in which rseqdbg scan finds critical sections.
big_static() {
	local f
	find /usr -xdev -type f -size +20M -perm -u+x -printf '%s %p\n' 2>/dev/null |
		sort -rn | while read -r _ f; do
			readelf -h "$f" 2>/dev/null | grep -q 'Type:.*EXEC' || continue
			readelf -l "$f" 2>/dev/null | grep -q INTERP && continue
			"$RSEQDBG" scan "$f" 2>/dev/null | grep -qE '^ *[1-9][0-9]* critical sections' ||
				continue
			echo "$f"
			break
		done
}

# first_of PROG...: the first of the programs that is an ELF executable on this machine
first_of() {
	local p f
	for p in "$@"; do
		f=$(command -v "$p") || continue
		f=$(readlink -f "$f")
		head -c 4 "$f" 2>/dev/null | grep -q ELF && { echo "$f"; return; }
	done
}

# addresses FILE: the address of each stepped instruction, in order
addresses() { awk '$1 ~ /^[0-9]+$/ && $2 ~ /^0x[0-9a-f]+$/ { print $2 }' "$1"; }

# real NAME N PROG ARGS...
real() {
	local name=$1 N=$2 out rc why="" got
	shift 2
	out="$TMP/$name"
	# The default mode through N instructions: no error, and the count reached.
	timeout 300 setarch -R "$RSEQDBG" step --quiet --count "$N" -- "$@" >"$out.n" 2>"$out.err"
	rc=$?
	got=$(sed -n 's/^summary: \([a-z]*\); \([0-9]*\) instructions.*/\1 \2/p' "$out.n")
	if [ $rc -ne 0 ] || [ "$got" != "count $N" ]; then
		fail "step real: $name" "exit $rc, summary '$got', $(head -c 300 "$out.err")"
		return
	fi
	timeout 300 setarch -R "$RSEQDBG" step --count "$CMP" -- "$@" >"$out.d" 2>&1 ||
		why="default run of $CMP failed"
	timeout 300 setarch -R "$RSEQDBG" step --single-step --count "$CMP" -- "$@" >"$out.s" 2>&1 ||
		why="$why --single-step run of $CMP failed"
	addresses "$out.d" >"$out.da"
	addresses "$out.s" >"$out.sa"
	[ "$(wc -l <"$out.sa")" -ge $((CMP * 9 / 10)) ] ||
		why="$why only $(wc -l <"$out.sa") instructions printed by --single-step"
	if ! cmp -s "$out.da" "$out.sa"; then
		why="$why addresses differ from --single-step: $(diff "$out.da" "$out.sa" | head -3 |
			tr '\n' ' ')"
	fi
	if [ -z "$why" ]; then
		pass "step real: $name ($N instructions; first $(wc -l <"$out.sa") as --single-step)"
	else
		fail "step real: $name" "$why"
	fi
}

big=$(big_static)
if [ -z "$big" ]; then
	skip "step real: large static program" "no static non-PIE executable over 20 MB with rseq critical sections under /usr"
else
	# The case as first seen: 300,000 instructions of --help.
	timeout 300 "$RSEQDBG" step --quiet --count 300000 -- "$big" --help >"$TMP/big300k" \
		2>"$TMP/big300k.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^summary: count; 300000 instructions' "$TMP/big300k"; then
		pass "step real: $(basename "$big") --help, 300000 instructions (call to address 0 not taken)"
	else
		fail "step real: $(basename "$big") --help, 300000 instructions" \
			"exit $rc: $(head -c 300 "$TMP/big300k.err")"
	fi
	real "$(basename "$big") (static, non-PIE)" 1500000 "$big" --help
fi

cxx=$(first_of gdb python3)
if [ -z "$cxx" ]; then
	skip "step real: dynamically linked program" "neither gdb nor python3 installed"
elif [ "$(basename "$cxx")" = gdb ]; then
	real "gdb (dynamic, C++)" 1000000 "$cxx" -nx -batch -ex 'info version'
else
	real "$(basename "$cxx") (dynamic)" 1000000 "$cxx" -c 'pass'
fi

small=$(first_of ls)
if [ -z "$small" ]; then
	skip "step real: small C program" "ls not installed"
else
	real "ls (dynamic, C)" 1000000 "$small" -l /usr/bin
fi
# The vDSO, code no file holds: date's clock_gettime from its first instruction to its return.
# Its symbols are those of the image this shell's python reads out of its own memory
# (the kernel maps one image into every process), and it runs between breakpoints: far
# fewer ptrace stops than instructions.
date=$(first_of date)
if [ -z "$date" ]; then
	skip "step real: the vDSO" "date not installed"
else
	python3 - "$TMP/vdso.so" <<'PY'
import sys
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[vdso]"):
        a, b = (int(x, 16) for x in line.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as m:
            m.seek(a)
            open(sys.argv[1], "wb").write(m.read(b - a))
PY
	want=$(readelf -Ws "$TMP/vdso.so" 2>/dev/null |
		awk '$8 ~ /^__vdso_clock_gettime(@|$)/ { print $2; exit }')
	[ -z "$want" ] || want=$(printf %#x "0x$want")
	timeout 60 "$RSEQDBG" step --json --from __vdso_clock_gettime --finish -- "$date" \
		>"$TMP/vdso.json" 2>&1
	rc=$?
	first=$(grep -m1 '"kind":"step"' "$TMP/vdso.json")
	nstep=$(grep -c '"kind":"step"' "$TMP/vdso.json")
	nvdso=$(grep '"kind":"step"' "$TMP/vdso.json" | grep -c '"module":"\[vdso\]"')
	off=$(sed -n 's/.*"module_offset":\([0-9]*\).*/\1/p' <<<"$first")
	sum=$(grep '"kind":"summary"' "$TMP/vdso.json")
	ins=$(sed -n 's/.*"instructions":\([0-9]*\).*/\1/p' <<<"$sum")
	stops=$(sed -n 's/.*"ptrace_stops":\([0-9]*\).*/\1/p' <<<"$sum")
	if [ $rc -eq 0 ] && [ -n "$want" ] && [ -n "$off" ] && [ "$(printf %#x "$off")" = "$want" ] &&
		grep -q '"function":"__vdso_clock_gettime"' <<<"$first" &&
		[ "$nstep" -gt 0 ] && [ "$nvdso" = "$nstep" ] && [ "$ins" = "$nstep" ] &&
		[ "$((stops * 3))" -lt "$ins" ] && grep -q '"end":"finish"' <<<"$sum"; then
		pass "step real: date's clock_gettime in the vDSO: $ins instructions, all named in [vdso] (entry at $want as its image says), $stops ptrace stops"
	else
		fail "step real: date's clock_gettime in the vDSO" \
			"rc=$rc entry $want, first step offset ${off:-none}; $nvdso of $nstep steps in [vdso]; $ins instructions, $stops stops; $(grep -v '"kind":"step"' "$TMP/vdso.json" | head -c 300)"
	fi
fi
finish
