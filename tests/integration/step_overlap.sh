#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Branches into the middle of an instruction must not make the stepper harm its tracee.
# "je 1f; lock; 1: cmpxchg" (glibc's atomics when single-threaded) has two paths that
# disagree on where the cmpxchg starts: a breakpoint at the jump's target is the second byte
# of "lock cmpxchg", which the fall-through then runs as "lock int3" (SIGILL). lock_skip
# runs that pattern and a jump into an immediate in a loop and checks its own results;
# malloc_churn frees through glibc's _int_free, single- and multi-threaded.
source "$(dirname "$0")/../lib.sh"

LS="$BUILD/tests/workloads/lock_skip"
MC="$BUILD/tests/workloads/malloc_churn"
if ! have_ptrace; then
	for n in "lock_skip" "glibc _int_free" "attached to malloc_churn"; do
		skip "step overlap: $n" "ptrace not permitted"
	done
	finish
	exit
fi
for f in "$LS" "$MC"; do
	[ -x "$f" ] || { fail "step overlap: workload" "$f not built"; finish; exit; }
done

# offsets FILE: the module offsets (third column) of the stepped instructions
offsets() { awk '$2 ~ /^0x/ { print $3 }' "$1"; }

# same_path NAME FROM COUNT PROG ARGS...: the default mode and --single-step report the same
# instructions (module offsets: the two runs load at different addresses).
same_path() {
	local n=$1 from=$2 count=$3
	shift 3
	timeout 300 "$RSEQDBG" step --from "$from" --count "$count" --detach -- "$@" \
		>"$TMP/$n.run" 2>"$TMP/$n.err"
	echo $? >"$TMP/$n.rc"
	timeout 300 "$RSEQDBG" step --single-step --from "$from" --count "$count" --detach -- \
		"$@" >"$TMP/$n.ss" 2>"$TMP/$n.sserr"
	echo $? >"$TMP/$n.ssrc"
	offsets "$TMP/$n.run" >"$TMP/$n.run.off"
	offsets "$TMP/$n.ss" >"$TMP/$n.ss.off"
}

# --- the minimal program -----------------------------------------------------------------------
want="iterations=1000000 word=1000000 inner=500000 wrong=0 result=ok"
timeout 300 "$RSEQDBG" step -q --from main --count 100000 --detach -- "$LS" \
	>"$TMP/ls.out" 2>"$TMP/ls.err"
rc=$?
if [ $rc -eq 0 ] && grep -qx "$want" "$TMP/ls.out" && ! grep -q " signal: " "$TMP/ls.out" &&
	grep -q "^summary: count; 100000 instructions" "$TMP/ls.out"; then
	pass "step overlap: lock_skip stepped 100000 instructions, detached, ran on to result=ok"
else
	fail "step overlap: lock_skip survives 100000 steps" \
		"rc $rc: $(grep -E 'result=|signal|end:|summary' "$TMP/ls.out" | head -4 | tr '\n' ' ')$(head -c 200 "$TMP/ls.err")"
fi

same_path ls ls_run 20000 "$LS"
# Both ways of each branch into an instruction were stepped: the lock prefix and the cmpxchg
# after it, the mov and the instruction inside its immediate (offsets from the file's bytes).
sites=$(python3 - "$LS" <<'PY'
import subprocess, sys
out = subprocess.run(["nm", sys.argv[1]], capture_output=True, text=True).stdout
ls_run = next(int(l.split()[0], 16) for l in out.splitlines() if l.endswith(" ls_run"))
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % ls_run,
                      "--stop-address=%#x" % (ls_run + 0x80), sys.argv[1]],
                     capture_output=True, text=True).stdout
lock = mov = None
for l in dis.splitlines():
    f = l.split(":", 1)
    if len(f) < 2 or not f[1].strip():
        continue
    try:
        a = int(f[0], 16)
    except ValueError:
        continue
    if "lock cmpxchg" in f[1] and lock is None:
        lock = a
    if "$0x90c1ff49,%eax" in f[1] and "mov" in f[1] and mov is None:
        mov = a
print(" ".join("lock_skip+%#x" % x for x in (lock, lock + 1, mov, mov + 1)))
PY
)
missing=""
for s in $sites; do grep -qx "$s" "$TMP/ls.run.off" || missing="$missing $s"; done
if [ "$(cat "$TMP/ls.rc")" = 0 ] && [ "$(cat "$TMP/ls.ssrc")" = 0 ] &&
	[ "$(wc -l <"$TMP/ls.run.off")" = 20000 ] && [ -n "$sites" ] && [ -z "$missing" ] &&
	cmp -s "$TMP/ls.run.off" "$TMP/ls.ss.off"; then
	pass "step overlap: lock_skip, 20000 instructions through both paths ($sites) as --single-step"
else
	fail "step overlap: lock_skip steps as --single-step" \
		"rc $(cat "$TMP/ls.rc")/$(cat "$TMP/ls.ssrc"), $(wc -l <"$TMP/ls.run.off") lines, sites '$sites' missing '$missing', first difference: $(cmp "$TMP/ls.run.off" "$TMP/ls.ss.off" 2>&1 | head -1)"
fi

# --- glibc: _int_free --------------------------------------------------------------------------
# The sites of the pattern in the C library the workload maps: "je" to the byte after a lock
# prefix, then the lock cmpxchg.
LIBC=$(ldd "$MC" | awk '$1 ~ /^libc\.so/ { print $3 }')
libc_sites=""
if [ -r "$LIBC" ] && command -v objdump >/dev/null; then
	libc_sites=$(objdump -d "$LIBC" | python3 -c '
import re, sys
lock, jumps = set(), []
for l in sys.stdin:
    m = re.match(r"\s*([0-9a-f]+):\t[0-9a-f ]+\t(\S+)\s*(\S*)", l)
    if not m:
        continue
    a = int(m.group(1), 16)
    if m.group(2) == "lock":
        lock.add(a)
    elif m.group(2).startswith("j") and re.fullmatch(r"[0-9a-f]+", m.group(3)):
        jumps.append((a, int(m.group(3), 16)))
print(" ".join("%#x" % (t - 1) for a, t in jumps if t - 1 in lock))
')
fi
for mode in single once; do
	args=(--threads 0 --rounds 300)
	[ $mode = once ] && args+=(--once-threaded)
	same_path "mc$mode" churn 30000 "$MC" "${args[@]}"
	hits=0
	for s in $libc_sites; do
		hits=$((hits + $(grep -c "^libc\.so\.6+$s\$" "$TMP/mc$mode.run.off")))
	done
	rep=$(grep -c "result=ok" "$TMP/mc$mode.run")
	name="step overlap: glibc malloc/free, $([ $mode = once ] && echo "lock prefixes run (a thread was created once)" || echo "single-threaded")"
	if [ "$(cat "$TMP/mc$mode.rc")" = 0 ] && [ "$(cat "$TMP/mc$mode.ssrc")" = 0 ] &&
		[ "$rep" = 1 ] && [ "$(wc -l <"$TMP/mc$mode.run.off")" = 30000 ] &&
		cmp -s "$TMP/mc$mode.run.off" "$TMP/mc$mode.ss.off" &&
		{ [ $mode = single ] || [ $hits -gt 0 ]; }; then
		pass "$name: 30000 instructions as --single-step, $hits lock cmpxchg guarded by je, result=ok"
	elif [ $mode = once ] && [ -z "$libc_sites" ]; then
		skip "$name" "no 'je over lock' site found in $LIBC (objdump missing?)"
	else
		fail "$name" "rc $(cat "$TMP/mc$mode.rc")/$(cat "$TMP/mc$mode.ssrc"), $rep result=ok, $hits sites, $(wc -l <"$TMP/mc$mode.run.off") lines, $(cmp "$TMP/mc$mode.run.off" "$TMP/mc$mode.ss.off" 2>&1 | head -1) $(grep -E 'signal|end:' "$TMP/mc$mode.run" | head -2 | tr '\n' ' ')"
	fi
done

# --- attached to a multi-threaded program that frees in every thread ----------------------------
# Every thread runs _int_free's lock cmpxchg while the main thread is stepped through the same
# code: a breakpoint inside it would kill the program within a fraction of a second.
for try in 1 2 3; do
	rm -f "$TMP/ready"
	"$MC" --threads 3 --seconds 4 --ready "$TMP/ready" >"$TMP/mt.out" 2>&1 &
	pid=$!
	wait_for -p $pid 10 "malloc_churn to be ready (try $try)" test -s "$TMP/ready"
	timeout -s INT 2 "$RSEQDBG" step -q --pid $pid >"$TMP/mt.step" 2>"$TMP/mt.err"
	rc=$?
	wait $pid
	wrc=$?
	stepped=$(sed -n 's/^summary: [a-z]*; \([0-9]*\) instructions.*/\1/p' "$TMP/mt.step")
	if [ $wrc -eq 0 ] && grep -q "^threads=4 .* errors=0 result=ok$" "$TMP/mt.out" &&
		[ "${stepped:-0}" -gt 0 ] && ! grep -q " signal: " "$TMP/mt.step"; then
		pass "step overlap: attached to malloc_churn (4 threads) for 2 s, try $try: $stepped instructions, program result=ok"
	else
		fail "step overlap: attached to malloc_churn, try $try" \
			"program exit $wrc: $(head -c 200 "$TMP/mt.out"); rseqdbg rc $rc: $(grep -E 'signal|exit|summary' "$TMP/mt.step" | head -3 | tr '\n' ' ')$(head -c 200 "$TMP/mt.err")"
	fi
done

finish
