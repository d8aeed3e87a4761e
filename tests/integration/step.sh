#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step through each critical-section style of the workload: the program's result is
# correct and every passage reported matches the workload's own per-section counters. Next to
# it, the problem: naive single-stepping (a ptrace helper and gdb's stepi) never completes a
# section.
source "$(dirname "$0")/../lib.sh"

WL="$BUILD/tests/workloads/rseq_workload"
NAIVE="$BUILD/tests/tools/naive_step"
if ! have_ptrace; then
	skip "step" "ptrace not permitted"
	finish
	exit
fi
[ -x "$WL" ] || { fail "step: workload" "$WL not built"; finish; exit; }

# sym NAME: the symbol's address in the workload (file address, as nm prints it)
sym() { nm "$WL" | awk -v s="$1" '$3 == s { print "0x" $1; exit }'; }
# kv FILE KEY: a value of the workload's report
kv() { sed -n "s/^$2=//p" "$1"; }
# jcount FILE PATTERN: JSON lines of rseqdbg containing PATTERN
jcount() { grep -c -- "$2" "$1"; }

section_fn() {
	case $1 in
	counter) echo wl_counter_add ;;
	tcmalloc) echo wl_tcmalloc_push ;;
	condexit) echo wl_condexit ;;
	esac
}

# run_case NAME MODE EXTRA...: step the whole run from the section function
run_case() {
	local name=$1 mode=$2; shift 2
	local fn out="$TMP/$name.json" rep="$TMP/$name.report" why=""
	fn=$(section_fn "$mode")
	timeout 300 "$RSEQDBG" step --quiet --json --from "$fn" --count 1000000 --detach -- \
		"$WL" --mode "$mode" --out "$rep" "$@" >"$out" 2>"$TMP/$name.err"
	local rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name" "rseqdbg exited $rc: $(head -c 300 "$TMP/$name.err")"
		return
	fi
	if [ "$(kv "$rep" result)" != ok ]; then
		fail "$name" "workload: $(kv "$rep" result)"
		return
	fi
	local iters commits aborts exits passages c a e
	iters=$(kv "$rep" "section.$fn.iterations")
	commits=$(kv "$rep" "section.$fn.commits")
	aborts=$(kv "$rep" "section.$fn.aborts")
	exits=$(kv "$rep" "section.$fn.exits")
	passages=$(jcount "$out" '"kind":"passage"')
	c=$(jcount "$out" '"result":"commit"')
	a=$(jcount "$out" '"result":"abort"')
	e=$(jcount "$out" '"result":"exit"')
	grep -q '"kind":"summary"' "$out" || why="no summary"
	[ "$passages" = "$iters" ] || why="$why passages $passages != iterations $iters"
	[ "$c" = "$commits" ] || why="$why commits $c != $commits"
	[ "$a" = "$aborts" ] || why="$why aborts $a != $aborts"
	[ "$e" = "$exits" ] || why="$why exits $e != $exits"
	# every passage names the section's function (a signal's stop inside the section, an
	# "inside" event, names it too)
	[ "$(grep '"kind":"passage"' "$out" | jcount - "\"function\":\"$fn\"")" = "$passages" ] ||
		why="$why passage not named $fn"
	if [ -z "$why" ]; then pass "$name ($iters passages: $c commits, $a aborts, $e exits)"; else fail "$name" "$why"; fi
}

for mode in counter tcmalloc condexit; do
	run_case "step $mode" "$mode" --iters 1000
done
# Signals delivered to the stepped thread, and any section they abort: the counts still match. The period
# leaves the run inside --count even when each step is slow (sanitizer build, loaded machine):
# every signal delivered while stepping is a handler stepped instruction by instruction.
run_case "step counter with signals" counter --iters 1000 --signal-us 5000

# Without any table (the sections renamed away), sections are learned at run time from the
# descriptor the thread arms through rseq_cs: still every passage, none aborted by us.
hidden="$TMP/wl_hidden"
if objcopy --rename-section __rseq_cs=.data.hidden_cs \
	--rename-section __rseq_cs_ptr_array=.data.hidden_ptr \
	--rename-section __rseq_exit_point_array=.data.hidden_exit "$WL" "$hidden" 2>/dev/null; then
	"$RSEQDBG" step --quiet --json --from wl_counter_add --count 1000000 --detach -- \
		"$hidden" --mode counter --iters 500 --out "$TMP/hidden.rep" >"$TMP/hidden.json" 2>&1
	it=$(kv "$TMP/hidden.rep" section.wl_counter_add.iterations)
	ab=$(kv "$TMP/hidden.rep" section.wl_counter_add.aborts)
	np=$(jcount "$TMP/hidden.json" '"kind":"passage"')
	nr=$(jcount "$TMP/hidden.json" '"source":"rseq_cs"')
	na=$(jcount "$TMP/hidden.json" '"result":"abort"')
	if [ "$(kv "$TMP/hidden.rep" result)" = ok ] && [ "$np" = "$it" ] && [ "$nr" = "$np" ] &&
		[ "$na" = "$ab" ]; then
		pass "step without tables: sections from rseq_cs ($np passages)"
	else
		fail "step without tables: sections from rseq_cs" "passages $np/$it from rseq_cs $nr aborts $na/$ab"
	fi
else
	skip "step without tables: sections from rseq_cs" "objcopy failed"
fi

# Stepping from before a dlopen: the object's tables are read when it is mapped, so each
# passage through its section is known from the table (not only from rseq_cs once armed).
DL="$BUILD/tests/workloads/dlopen_host"
"$RSEQDBG" step --quiet --json --from host_start --count 5000000 -- "$DL" \
	--lib "$BUILD/tests/workloads/librseq_workload.so" --iters 300 --out "$TMP/dl.rep" \
	>"$TMP/dl.json" 2>&1
rc=$?
it=$(kv "$TMP/dl.rep" iterations)
np=$(jcount "$TMP/dl.json" '"kind":"passage"')
nt=$(grep '"kind":"passage"' "$TMP/dl.json" | grep -c '"function":"wl_counter_add".*"source":"table"')
if [ $rc -eq 0 ] && [ "$(kv "$TMP/dl.rep" result)" = ok ] && [ "$np" = "$it" ] && [ "$nt" = "$it" ] &&
	grep -q '"end":"exited"' "$TMP/dl.json"; then
	pass "step through a dlopen: $np passages of the loaded object, known from its tables"
else
	fail "step through a dlopen" "rc=$rc iterations=$it passages=$np from the table=$nt $(tail -c 300 "$TMP/dl.json")"
fi

# fork and exec are reported, never lost: the child runs on its own with none of our
# breakpoints (it computes a checksum the parent checks), and stepping goes on in the new
# image after the exec until the program exits.
FE="$BUILD/tests/workloads/fork_exec"
"$RSEQDBG" step --quiet --json --from main -- "$FE" --exec /bin/true >"$TMP/fe.json" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '"kind":"fork".*child [0-9]* (not followed' "$TMP/fe.json" &&
	grep -q '"kind":"exec".*new image [^"]*/true"' "$TMP/fe.json" &&
	grep -q '"kind":"end".*program exited with status 0"' "$TMP/fe.json" &&
	[ "$(grep -n '"kind":"fork"' "$TMP/fe.json" | cut -d: -f1)" -lt \
		"$(grep -n '"kind":"exec"' "$TMP/fe.json" | cut -d: -f1)" ]; then
	pass "step reports fork and exec and steps on in the new image"
else
	fail "step reports fork and exec and steps on in the new image" "rc=$rc $(head -c 600 "$TMP/fe.json")"
fi

# The exits of condexit are found by decoding the section (no table lists them).
out="$TMP/condexit.json"
if grep '"kind":"passage"' "$TMP/step condexit.json" 2>/dev/null | grep -q '"result":"exit"'; then
	pass "step condexit: exit found by decoding"
else
	fail "step condexit: exit found by decoding" "no passage left through an exit"
fi

# Between breakpoints and with --single-step the same instructions are reported, in the same
# order, with the same passages: from the first section call of a worker that runs every
# section kind to its exit through glibc (returns, PLT jumps, system calls). The address space
# is the same in both runs (no ASLR, no lazy binding); thread ids and times are taken out. The
# first mode needs far fewer ptrace stops: it runs straight-line code unseen.
if command -v setarch >/dev/null; then
	trace_of() {
		setarch -R env LD_BIND_NOW=1 "$RSEQDBG" step "$@" --from wl_counter_add --count 20000 \
			-- "$WL" --mode all --iters 300 --out /dev/null 2>&1
	}
	same() { sed -E 's/^[0-9]+ //; s/ in [0-9]+ ns//; s/ [0-9]+ ptrace stops \(.*//' "$1"; }
	stops_of() { sed -n 's/.* \([0-9]*\) ptrace stops.*/\1/p' "$1"; }
	# A section the kernel aborted in one run only (a preemption: frequent in an emulated
	# guest) adds its abort handler and retry there: unaborted drops each aborted passage and
	# what ran until the next passage of that section, and the count of 20,000 then ends the
	# traces at different places, so the shorter is compared with the start of the longer.
	unaborted() {
		python3 -c 'import re, sys
skip = None
for line in open(sys.argv[1]):
    m = re.match(r"passage (.*?): ", line)
    if skip is not None:
        if m and m.group(1) == skip:
            skip = None
        else:
            continue
    if m and ": aborted to the abort handler" in line:
        skip = m.group(1)
        continue
    if not line.startswith(("summary:", "rseqdbg:")):
        sys.stdout.write(line)' <(same "$1")
	}
	agree() {
		local a b
		a=$(unaborted "$1")
		b=$(unaborted "$2")
		[ "${#a}" -gt 0 ] && [ "${#b}" -gt 0 ] || return 1
		if [ "${#a}" -lt "${#b}" ]; then
			a=$(sed '$d' <<<"$a") # the last line may be cut by the count: not compared
			[ "${b:0:${#a}}" = "$a" ] && [ $((${#a} * 100)) -gt $((${#b} * 99)) ]
		else
			b=$(sed '$d' <<<"$b")
			[ "${a:0:${#b}}" = "$b" ] && [ $((${#b} * 100)) -gt $((${#a} * 99)) ]
		fi
	}
	why="differs"
	for _ in 1 2 3; do # a passage that differs otherwise (a signal, a lost one): try again
		trace_of >"$TMP/blocks.out"
		trace_of --single-step >"$TMP/single.out"
		if agree "$TMP/blocks.out" "$TMP/single.out"; then
			why=""
			break
		fi
		why="differs: $(diff <(same "$TMP/blocks.out") <(same "$TMP/single.out") | head -3 | tr '\n' ' ')"
	done
	sb=$(stops_of "$TMP/blocks.out")
	ss=$(stops_of "$TMP/single.out")
	steps=$(grep -c '^[0-9]* 0x' "$TMP/single.out")
	np=$(grep -c ' passage ' "$TMP/single.out")
	if [ -z "$why" ] && [ "$steps" -gt 10000 ] && [ "$np" -gt 800 ] && [ -n "$sb" ] &&
		[ -n "$ss" ] && [ $((sb * 2)) -lt "$ss" ]; then
		pass "step between breakpoints reports what --single-step does ($steps steps, $np passages; $sb against $ss ptrace stops)"
	else
		fail "step between breakpoints reports what --single-step does" "$why; $steps steps, $np passages; stops $sb vs $ss"
	fi
	# From the program's first instruction through the dynamic loader, which runs cpuid: a
	# hypervisor that emulates cpuid may deliver its single-step trap one instruction late,
	# so both modes run it to a breakpoint; the instruction after each cpuid is reported.
	trace_ld() {
		setarch -R "$RSEQDBG" step "$@" --count 40000 -- "$FE" 2>&1 | same /dev/stdin
	}
	FE="$BUILD/tests/workloads/fork_exec"
	trace_ld >"$TMP/ld-blocks.out"
	trace_ld --single-step >"$TMP/ld-single.out"
	ncpuid=$(grep -c ' cpuid$' "$TMP/ld-single.out")
	after=0 # cpuid is 2 bytes: the next line is at its address + 2
	while read -r a _ && read -r b _; do
		[ $((b)) -eq $((a + 2)) ] || after=$((after + 1))
	done < <(grep --no-group-separator -A1 ' cpuid$' "$TMP/ld-single.out")
	if cmp -s "$TMP/ld-blocks.out" "$TMP/ld-single.out" && [ "$ncpuid" -gt 0 ] && [ "$after" = 0 ]; then
		pass "step through the dynamic loader: both modes agree, the instruction after each of $ncpuid cpuid reported"
	else
		fail "step through the dynamic loader" "cpuid $ncpuid, $after missing after one; $(diff "$TMP/ld-blocks.out" "$TMP/ld-single.out" | head -3 | tr '\n' ' ')"
	fi
	# The same in generated code (an anonymous executable mapping, no module): stepped to
	# the program's end in both modes, the instruction after its cpuid is the pop at +2.
	JC="$BUILD/tests/workloads/jit_cpuid"
	setarch -R "$RSEQDBG" step --from main -- "$JC" >"$TMP/jit-blocks.out" 2>&1
	setarch -R "$RSEQDBG" step --single-step --from main -- "$JC" >"$TMP/jit-single.out" 2>&1
	why=""
	for f in "$TMP/jit-blocks.out" "$TMP/jit-single.out"; do
		grep -q 'end: program exited with status 0$' "$f" || why="$why ${f##*/}: no exit 0;"
		grep -A1 '? ?  cpuid$' "$f" | tail -1 | grep -q '? ?  pop rbx$' ||
			why="$why ${f##*/}: no pop after the generated cpuid;"
	done
	cmp -s <(same "$TMP/jit-blocks.out" | grep -v '^summary') \
		<(same "$TMP/jit-single.out" | grep -v '^summary') || why="$why the traces differ"
	if [ -z "$why" ]; then
		pass "step through generated code: both modes agree, cpuid then its next instruction"
	else
		fail "step through generated code" "$why"
	fi
else
	skip "step between breakpoints reports what --single-step does" "setarch not installed"
fi

# Plain output: one line per step with tid, address, module+offset, symbol, source, insn.
"$RSEQDBG" step --from wl_counter_add --count 8 -- "$WL" --mode counter --iters 50 \
	>"$TMP/text.out" 2>&1
start=$(sym rseq_start_counter)
line1=$(head -1 "$TMP/text.out")
if [[ "$line1" =~ ^[0-9]+\ 0x[0-9a-f]+\ rseq_workload\+0x[0-9a-f]+\ wl_counter_add\ \(rseq_workload.S:[0-9]+\)\ \ [a-z] ]]; then
	pass "step text line"
else
	fail "step text line" "got: $line1"
fi
if grep -q "passage wl_counter_add (rseq_workload.S:[0-9]*) .*: committed" "$TMP/text.out" &&
	grep -q "^summary: count; 8 instructions stepped, 1 passages" "$TMP/text.out"; then
	pass "step text passage and summary"
else
	fail "step text passage and summary" "$(tail -3 "$TMP/text.out")"
fi
# The passage is reported at the section's start address as nm sees it (bias removed).
pstart=$(grep -o 'passage wl_counter_add ([^)]*) \[0x[0-9a-f]*' "$TMP/text.out" | head -1 | sed 's/.*\[//')
modoff=$(grep -o 'rseq_workload+0x[0-9a-f]* wl_counter_add (' "$TMP/text.out" | head -1 | sed 's/rseq_workload+\(0x[0-9a-f]*\).*/\1/')
addr1=$(awk '{print $2; exit}' "$TMP/text.out")
if [ -n "$pstart" ] && [ $((pstart - addr1 + $(sym wl_counter_add))) -eq $((start)) ] &&
	[ $((modoff)) -eq $(($(sym wl_counter_add))) ]; then
	pass "step addresses agree with nm"
else
	fail "step addresses agree with nm" "start $pstart first $addr1 modoff $modoff"
fi

# --until stops before the given address; --finish at the function's return.
"$RSEQDBG" step --json --from wl_counter_add --until rseq_post_commit_counter --count 1000 -- \
	"$WL" --mode counter --iters 50 >"$TMP/until.json" 2>&1
if grep -q '"end":"until"' "$TMP/until.json"; then pass "step --until"; else fail "step --until" "$(tail -1 "$TMP/until.json")"; fi
"$RSEQDBG" step --json --from wl_counter_add --finish --count 1000 -- \
	"$WL" --mode counter --iters 50 >"$TMP/finish.json" 2>&1
last=$(grep '"kind":"step"' "$TMP/finish.json" | tail -1)
if grep -q '"end":"finish"' "$TMP/finish.json" && [[ "$last" == *'"insn":"ret"'* ]]; then
	pass "step --finish"
else
	fail "step --finish" "$(tail -1 "$TMP/finish.json")"
fi

# Launch without --from: stepping starts at the program's first instruction (the dynamic
# loader's entry point for this PIE).
"$RSEQDBG" step --json --count 3 -- "$WL" --mode counter --iters 5 >"$TMP/first.json" 2>&1
interp=$(readelf -l "$WL" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
entry=$(readelf -h "$interp" 2>/dev/null | awk '/Entry point/ {print $4}')
first_off=$(grep -m1 '"kind":"step"' "$TMP/first.json" | sed -n 's/.*"module_offset":\([0-9]*\).*/\1/p')
if [ -n "$first_off" ] && [ -n "$entry" ] && [ $((first_off)) -eq $((entry)) ]; then
	pass "step starts at the first instruction"
else
	fail "step starts at the first instruction" "offset $first_off, entry $entry"
fi

# The problem, shown: naive single-stepping never gets through a section.
for mode in counter tcmalloc condexit; do
	fn=$(section_fn "$mode")
	res=$("$NAIVE" --func "$(sym "$fn")" --start "$(sym "rseq_start_$mode")" \
		--post "$(sym "rseq_post_commit_$mode")" --abort "$(sym "rseq_abort_$mode")" \
		--max 3000 -- "$WL" --mode "$mode" --iters 100000 2>&1)
	ab=$(sed -n 's/.*abort_hits=\([0-9]*\).*/\1/p' <<<"$res")
	po=$(sed -n 's/.*post_commit_hits=\([0-9]*\).*/\1/p' <<<"$res")
	if [ -n "$ab" ] && [ "$ab" -gt 10 ] && [ "$po" = 0 ]; then
		pass "naive stepping never completes $fn ($res)"
	else
		fail "naive stepping never completes $fn" "$res"
	fi
done

if command -v gdb >/dev/null; then
	cat >"$TMP/gdb.cmd" <<'GDB'
set pagination off
set confirm off
break wl_counter_add
run
set $start = (long)&rseq_start_counter
set $post = (long)&rseq_post_commit_counter
set $abort = (long)&rseq_abort_counter
set $n = 0
set $in = 0
set $starts = 0
set $posts = 0
set $aborts = 0
while $n < 300
  stepi
  if $in && $pc == $post
    set $posts = $posts + 1
  end
  if $in && $pc >= $abort && $pc < $abort + 16
    set $aborts = $aborts + 1
  end
  set $in = ($pc >= $start && $pc < $post)
  if $pc == $start
    set $starts = $starts + 1
  end
  set $n = $n + 1
end
printf "gdb: start_hits=%d abort_hits=%d post_commit_hits=%d\n", $starts, $aborts, $posts
kill
GDB
	res=$(timeout 300 gdb -nx -batch -x "$TMP/gdb.cmd" --args "$WL" --mode counter --iters 100000 2>&1 | grep '^gdb: ')
	ab=$(sed -n 's/.*abort_hits=\([0-9]*\).*/\1/p' <<<"$res")
	po=$(sed -n 's/.*post_commit_hits=\([0-9]*\).*/\1/p' <<<"$res")
	if [ -n "$ab" ] && [ "$ab" -gt 5 ] && [ "$po" = 0 ]; then
		pass "gdb stepi never completes wl_counter_add (${res#gdb: })"
	else
		fail "gdb stepi never completes wl_counter_add" "${res:-no output}"
	fi
else
	skip "gdb stepi never completes wl_counter_add" "gdb not installed"
fi

# Errors: one line, exit 2, nothing left behind (a name no module has: once the program ended).
marker="$TMP/unknown-name-$$"
"$RSEQDBG" step --from no_such_function_xyz -- "$WL" --out "$marker" >"$TMP/e1.out" 2>"$TMP/e1.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/e1.err")" -eq 1 ] && grep -q "no_such_function_xyz" "$TMP/e1.err" &&
	! pgrep -f "$marker" >/dev/null; then
	pass "step unknown symbol"
else
	fail "step unknown symbol" "rc=$rc $(cat "$TMP/e1.err")"
fi
# A process that has exited and been reaped (killing a fresh background job could hit the
# shell's own subshell before it runs the command).
/bin/true &
dead=$!
wait $dead
"$RSEQDBG" step --pid "$dead" --count 1 >/dev/null 2>"$TMP/e2.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/e2.err")" -eq 1 ] && grep -q "$dead" "$TMP/e2.err"; then
	pass "step --pid of a dead process"
else
	fail "step --pid of a dead process" "rc=$rc $(cat "$TMP/e2.err")"
fi
if have_root && command -v setpriv >/dev/null; then
	sleep 30 &
	victim=$!
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$RSEQDBG" step --pid "$victim" \
		--count 1 >/dev/null 2>"$TMP/e3.err"
	rc=$?
	state=$(awk '{print $3}' /proc/$victim/stat 2>/dev/null)
	tracer=$(awk '/TracerPid/ {print $2}' /proc/$victim/status 2>/dev/null)
	if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/e3.err")" -eq 1 ] && grep -qi "permi" "$TMP/e3.err" &&
		[ "$state" = S ] && [ "$tracer" = 0 ]; then
		pass "step without permission"
	else
		fail "step without permission" "rc=$rc state=$state tracer=$tracer $(cat "$TMP/e3.err")"
	fi
	kill $victim; wait $victim 2>/dev/null
else
	skip "step without permission" "needs root and setpriv"
fi
"$RSEQDBG" step --count 0 -- /bin/true >/dev/null 2>"$TMP/e4.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/e4.err")" -eq 1 ]; then pass "step bad --count"; else fail "step bad --count" "rc=$rc"; fi
"$RSEQDBG" step -- /nonexistent/prog >/dev/null 2>"$TMP/e5.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/e5.err")" -eq 1 ] && grep -q /nonexistent/prog "$TMP/e5.err"; then
	pass "step missing program"
else
	fail "step missing program" "rc=$rc $(cat "$TMP/e5.err")"
fi

finish
