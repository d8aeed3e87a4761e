#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step's --from and --until names: a function of a library the program links (mapped
# by the dynamic loader after the first instruction), of one loaded later by dlopen, of libc
# (malloc), one no module ever has (an error once the program ended), and a function that
# exists only inlined, whose sections are named by the inlined operation. Each stop is
# compared with the address computed without rseqdbg (nm, /proc/PID/maps, llvm-dwarfdump).
# Then --quiet: the same lines as without it, but the line per step.
source "$(dirname "$0")/../lib.sh"

WLD="$BUILD/tests/workloads"
SO="$WLD/librseq_workload.so"
LH="$WLD/linked_host"
DL="$WLD/dlopen_host"
PL="$WLD/percpu_lib"
if ! have_ptrace; then
	skip "step_names" "ptrace not permitted"
	finish
	exit
fi
for f in "$SO" "$LH" "$DL" "$PL"; do
	[ -e "$f" ] || { fail "step_names: workloads" "$f not built"; finish; exit; }
done

# nmaddr FILE NAME: the address nm gives the defined symbol NAME (dynamic symbols with -D)
nmaddr() { nm ${3:+"$3"} "$1" 2>/dev/null | awk -v s="$2" '$2 ~ /^[TtWi]$/ { sub(/@.*/, "", $3); if ($3 == s) { print "0x" $1; exit } }'; }
# jfield LINE KEY: a number or string member of a JSON line
jfield() { python3 -c 'import json, sys; v = json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2"; }
kv() { sed -n "s/^$2=//p" "$1"; }
first_step() { grep -m1 '"kind":"step"' "$1"; }

# A library the program links: named once the loader mapped it. The first step is the
# function's first instruction in that library, and every passage is its section's.
want=$(nmaddr "$SO" wl_counter_add)
"$RSEQDBG" step --json --from wl_counter_add --count 1000000 -- "$LH" --iters 50 \
	--out "$TMP/lh.rep" >"$TMP/lh.json" 2>"$TMP/lh.err"
rc=$?
s=$(first_step "$TMP/lh.json")
mod=$(jfield "$s" module)
off=$(jfield "$s" module_offset)
np=$(grep -c '"kind":"passage"' "$TMP/lh.json")
nw=$(grep '"kind":"passage"' "$TMP/lh.json" | grep -c '"function":"wl_counter_add"')
if [ $rc -eq 0 ] && [ "${mod##*/}" = librseq_workload.so ] && [ -n "$want" ] &&
	[ "$off" = $((want)) ] && [ "$(kv "$TMP/lh.rep" result)" = ok ] &&
	[ "$np" = "$(kv "$TMP/lh.rep" iterations)" ] && [ "$nw" = "$np" ]; then
	pass "step --from a function of a linked library: stops at librseq_workload.so+$(printf %#x "$want"), $np passages"
else
	fail "step --from a function of a linked library" "rc=$rc module=$mod offset=$off nm=$want passages=$np/$(kv "$TMP/lh.rep" iterations) $(head -c 300 "$TMP/lh.err")"
fi

# The same, attached to a running program: the stop is the library's load address (its
# mapping at file offset 0 in /proc/PID/maps) plus nm's address.
"$LH" --iters 0 >"$TMP/ready" 2>&1 &
lh=$!
if wait_grep '^ready$' "$TMP/ready"; then
	base=$(awk -v so="$(realpath "$SO")" '$6 == so && $3 == "00000000" { print "0x" substr($1, 1, index($1, "-") - 1); exit }' "/proc/$lh/maps")
	"$RSEQDBG" step --json -p "$lh" --from wl_counter_add --count 1 >"$TMP/at.json" 2>"$TMP/at.err"
	rc=$?
	addr=$(jfield "$(first_step "$TMP/at.json")" addr)
	tracer=$(awk '/TracerPid/ {print $2}' "/proc/$lh/status")
	if [ $rc -eq 0 ] && [ -n "$base" ] && [ -n "$addr" ] && [ "$addr" = $((base + want)) ] &&
		[ "$tracer" = 0 ] && kill -0 "$lh"; then
		pass "step -p --from a library function: stops at its load address + nm's ($(printf %#x "$addr"))"
	else
		fail "step -p --from a library function" "rc=$rc addr=$addr base=$base nm=$want tracer=$tracer $(head -c 300 "$TMP/at.err")"
	fi
else
	fail "step -p --from a library function" "the program did not start: $(head -c 200 "$TMP/ready")"
fi
kill "$lh" 2>/dev/null
wait "$lh" 2>/dev/null

# A library loaded by dlopen long after the start: found at the loader's rendezvous.
"$RSEQDBG" step --json --from wl_counter_add --count 1000000 -- "$DL" --lib "$SO" --iters 50 \
	--out "$TMP/dl.rep" >"$TMP/dl.json" 2>"$TMP/dl.err"
rc=$?
s=$(first_step "$TMP/dl.json")
mod=$(jfield "$s" module)
off=$(jfield "$s" module_offset)
np=$(grep -c '"kind":"passage"' "$TMP/dl.json")
if [ $rc -eq 0 ] && [ "${mod##*/}" = librseq_workload.so ] && [ "$off" = $((want)) ] &&
	[ "$(kv "$TMP/dl.rep" result)" = ok ] && [ "$np" = "$(kv "$TMP/dl.rep" iterations)" ]; then
	pass "step --from a function of a dlopen'd library: stops at librseq_workload.so+$(printf %#x "$want"), $np passages"
else
	fail "step --from a function of a dlopen'd library" "rc=$rc module=$mod offset=$off nm=$want passages=$np $(head -c 300 "$TMP/dl.err")"
fi

# malloc: libc's, not the dynamic loader's inline copy, which runs first.
"$RSEQDBG" step --json --from malloc --count 1 -- "$LH" --iters 5 >"$TMP/malloc.json" 2>"$TMP/malloc.err"
rc=$?
s=$(first_step "$TMP/malloc.json")
mod=$(jfield "$s" module)
off=$(jfield "$s" module_offset)
libc_malloc=$([ -n "$mod" ] && nmaddr "$mod" malloc -D)
if [ $rc -eq 0 ] && [[ "${mod##*/}" == libc.so* ]] && [ -n "$libc_malloc" ] &&
	[ "$off" = $((libc_malloc)) ]; then
	pass "step --from malloc: stops at ${mod##*/}+$(printf %#x "$off")"
else
	fail "step --from malloc" "rc=$rc module=$mod offset=$off nm=$libc_malloc $(head -c 300 "$TMP/malloc.err")"
fi

# --until a function of a library the stepped thread maps while it is stepped (dlopen):
# stepping ends at the call into it, in main, before any passage.
"$RSEQDBG" step --json --quiet --from host_start --until wl_counter_add --count 5000000 -- \
	"$DL" --lib "$SO" --iters 5 >"$TMP/until.json" 2>"$TMP/until.err"
rc=$?
"$RSEQDBG" step --json --from host_start --until wl_counter_add --count 5000000 -- \
	"$DL" --lib "$SO" --iters 5 2>/dev/null | grep '"kind":"step"' | tail -1 >"$TMP/until.last"
last=$(cat "$TMP/until.last")
insn=$(jfield "$last" insn)
if [ $rc -eq 0 ] && grep -q '"end":"until"' "$TMP/until.json" && grep -q '"passages":0,' "$TMP/until.json" &&
	[ "$(jfield "$last" function)" = main ] && [[ "$insn" == call* || "$insn" == bl* ]]; then
	pass "step --until a function of a library mapped while stepping: ends at '$insn' in main"
else
	fail "step --until a function of a library mapped while stepping" "rc=$rc last=$last $(tail -c 300 "$TMP/until.json") $(head -c 200 "$TMP/until.err")"
fi

# A name no module ever has: the program runs to its end (it writes its report), then one
# line on stderr, exit 2, nothing left running.
"$RSEQDBG" step --from no_such_function_xyz -- "$LH" --iters 5 --out "$TMP/never.rep" \
	>"$TMP/never.out" 2>"$TMP/never.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/never.err")" -eq 1 ] &&
	grep -q "^rseqdbg: step: --from: no function 'no_such_function_xyz' in process [0-9]*: the program ended" "$TMP/never.err" &&
	[ "$(kv "$TMP/never.rep" result)" = ok ] && ! pgrep -f "$TMP/never.rep" >/dev/null; then
	pass "step --from a name that never appears: error after the program ended"
else
	fail "step --from a name that never appears" "rc=$rc $(cat "$TMP/never.err") $(tail -1 "$TMP/never.rep" 2>/dev/null)"
fi
"$RSEQDBG" step --quiet --from main --until no_such_function_xyz -- "$LH" --iters 5 \
	--out "$TMP/never2.rep" >"$TMP/never2.out" 2>"$TMP/never2.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/never2.err")" -eq 1 ] &&
	grep -q "^rseqdbg: step: --until: no function 'no_such_function_xyz'" "$TMP/never2.err" &&
	grep -q '^summary: exited; ' "$TMP/never2.out" && [ "$(kv "$TMP/never2.rep" result)" = ok ]; then
	pass "step --until a name that never appears: error after the summary"
else
	fail "step --until a name that never appears" "rc=$rc $(cat "$TMP/never2.err") $(tail -1 "$TMP/never2.out")"
fi
# An address or FILE:LINE is resolved at once: a bad one is an error before the program runs.
if ! quick; then
	"$RSEQDBG" step --from linked_host.c:99999 -- "$LH" --iters 5 --out "$TMP/never3.rep" \
		>/dev/null 2>"$TMP/never3.err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/never3.err")" -eq 1 ] && [ ! -e "$TMP/never3.rep" ]; then
		pass "step --from FILE:LINE without code: error before the program runs"
	else
		fail "step --from FILE:LINE without code" "rc=$rc $(cat "$TMP/never3.err")"
	fi
fi

# A function that exists only inlined (percpu_ops.h's pcpu_addv in percpu_lib): stops at the
# entry of its inlined instance as DWARF gives it (llvm-dwarfdump: DW_AT_entry_pc when the
# instance's ranges hold it, else the start of its first range), and each passage is named by
# the inlined operation, in text and in JSON.
inline_entries() { # inline_entries FILE NAME: the entry of each inlined instance, one a line
	llvm-dwarfdump --debug-info "$1" 2>/dev/null | python3 -c 'import re, sys
name, blocks, cur = sys.argv[1], [], None
for line in sys.stdin:
    if re.match(r"^0x[0-9a-f]+:\s+DW_TAG_", line):
        cur = {"inl": "DW_TAG_inlined_subroutine" in line, "ranges": []}
        blocks.append(cur)
    elif cur is not None:
        m = re.search(r"DW_AT_abstract_origin\s+\(0x[0-9a-f]+ \"(.*)\"\)", line)
        if m:
            cur["name"] = m.group(1)
        m = re.search(r"DW_AT_(entry_pc|low_pc|high_pc)\s+\((0x[0-9a-f]+)\)", line)
        if m:
            cur[m.group(1)] = int(m.group(2), 16)
        for lo, hi in re.findall(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)", line):
            cur["ranges"].append((int(lo, 16), int(hi, 16)))
for b in blocks:
    if not b["inl"] or b.get("name") != name:
        continue
    r = [x for x in b["ranges"] if x[1] > x[0]]
    if not r and "low_pc" in b:
        hi = b.get("high_pc", b["low_pc"] + 1)
        r = [(b["low_pc"], hi if hi > b["low_pc"] else b["low_pc"] + hi)]
    e = b.get("entry_pc")
    print(e if e is not None and any(lo <= e < hi for lo, hi in r) else r[0][0])' "$2" | sort -n
}
for op in pcpu_addv pcpu_cmpeqv_storev; do
	"$RSEQDBG" step --json --from "$op" --count 200 -- "$PL" --threads 1 --iters 20 \
		--out /dev/null >"$TMP/$op.json" 2>"$TMP/$op.err"
	rc=$?
	s=$(first_step "$TMP/$op.json")
	off=$(jfield "$s" module_offset)
	if command -v llvm-dwarfdump >/dev/null; then
		locs=$(inline_entries "$PL" "$op" | tr '\n' ' ')
	else
		locs="$off " # the exact place needs llvm-dwarfdump: the names are still checked
	fi
	inl=$(grep -m1 '"kind":"passage"' "$TMP/$op.json" | python3 -c 'import json, sys
s = json.loads(sys.stdin.read())["section"]["start"]
print(s["function"], s["inlined"][0]["function"], s["file"])' 2>/dev/null)
	if [ $rc -eq 0 ] && [ -n "$off" ] && [ "$locs" = "$off " ] &&
		[ "$(jfield "$s" function)" = worker_main ] &&
		[[ "$inl" == "worker_main pcpu_addv "* || "$inl" == "worker_main pcpu_cmpeqv_storev "* ]]; then
		pass "step --from $op (only inlined): stops at its inlined entry $(printf %#x "$off"), first passage $inl"
	else
		fail "step --from $op (only inlined)" "rc=$rc offset=$off entries=$locs step=$s passage=$inl $(head -c 300 "$TMP/$op.err")"
	fi
done
# A function inlined in several places (pcpu_rseq, in each operation and in worker_main): a
# breakpoint at each, and the first one the thread reaches is where stepping starts.
if command -v llvm-dwarfdump >/dev/null; then
	"$RSEQDBG" step --json --from pcpu_rseq --count 1 -- "$PL" --threads 1 --iters 20 \
		--out /dev/null >"$TMP/multi.json" 2>"$TMP/multi.err"
	rc=$?
	off=$(jfield "$(first_step "$TMP/multi.json")" module_offset)
	locs=$(inline_entries "$PL" pcpu_rseq | tr '\n' ' ')
	if [ $rc -eq 0 ] && [ -n "$off" ] && [ "$(wc -w <<<"$locs")" -gt 1 ] && [[ " $locs" == *" $off "* ]]; then
		pass "step --from a function inlined in $(wc -w <<<"$locs") places: stops at one of them ($(printf %#x "$off"))"
	else
		fail "step --from a function inlined in several places" "rc=$rc offset=$off entries=$locs $(head -c 300 "$TMP/multi.err")"
	fi
else
	skip "step --from a function inlined in several places" "llvm-dwarfdump not installed"
fi
# The program's report goes elsewhere: written between two flushes of ours, it would cut a line.
"$RSEQDBG" step --quiet --from pcpu_addv --count 100000 -- "$PL" --threads 1 --iters 20 \
	--stale-every 0 --out /dev/null >"$TMP/inl.out" 2>&1
rc=$?
np=$(grep -c ' passage ' "$TMP/inl.out")
na=$(grep -cE '^[0-9]+ passage pcpu_addv \(percpu_ops\.h:[0-9]+\) inlined in worker_main\+0x[0-9a-f]+ \(percpu_lib\.c:[0-9]+\) \[0x[0-9a-f]+, 0x[0-9a-f]+\): ' "$TMP/inl.out")
nc=$(grep -cE '^[0-9]+ passage pcpu_cmpeqv_storev \(percpu_ops\.h:[0-9]+\) inlined in worker_main\+0x[0-9a-f]+ \(percpu_lib\.c:[0-9]+\) \[' "$TMP/inl.out")
if [ $rc -eq 0 ] && [ "$na" -ge 20 ] && [ "$nc" -ge 20 ] && [ $((na + nc)) = "$np" ]; then
	pass "step names inlined sections by their operation ($na pcpu_addv, $nc pcpu_cmpeqv_storev passages)"
else
	fail "step names inlined sections by their operation" "rc=$rc $np passages, $na + $nc named; others: $(grep ' passage ' "$TMP/inl.out" | grep -vE '^[0-9]+ passage (pcpu_addv|pcpu_cmpeqv_storev) \(percpu_ops\.h:[0-9]+\) inlined in worker_main\+0x[0-9a-f]+ \(percpu_lib\.c:[0-9]+\) \[' | head -2)"
fi

# --quiet leaves out the line per step and nothing else: the same run (no address space
# randomization, no lazy binding) with and without it gives the same other lines, numbers
# aside, and the same counts. A section the kernel aborted in one run only changes a passage
# line: then the pair is run again.
if quick; then
	: # an output format: nothing a kernel changes
elif command -v setarch >/dev/null; then
	run() { setarch -R env LD_BIND_NOW=1 "$RSEQDBG" step "$@" 2>&1; }
	shape() { grep -vE '^[0-9]+ 0x[0-9a-f]+ ' "$1" | grep -v '^summary:' | sed -E 's/[0-9]+/N/g'; }
	counts() { sed -n 's/^summary: \([a-z]*; [0-9]* instructions stepped, [0-9]* passages ([^)]*)\).*/\1/p' "$1"; }
	why=""
	for _ in 1 2 3; do
		why=""
		for c in "wl:--from wl_counter_add --count 3000 -- $BUILD/tests/workloads/rseq_workload --mode all --iters 100 --out /dev/null" \
			"fe:--from main -- $BUILD/tests/workloads/fork_exec --exec /bin/true"; do
			n=${c%%:*}
			read -ra a <<<"${c#*:}"
			run "${a[@]}" >"$TMP/q-$n-full.out"
			run --quiet "${a[@]}" >"$TMP/q-$n-quiet.out"
			if grep -qE '^[0-9]+ 0x[0-9a-f]+ ' "$TMP/q-$n-quiet.out"; then
				why="$why $n: a step line with --quiet;"
			elif ! cmp -s <(shape "$TMP/q-$n-full.out") <(shape "$TMP/q-$n-quiet.out"); then
				why="$why $n: $(diff <(shape "$TMP/q-$n-full.out") <(shape "$TMP/q-$n-quiet.out") | head -3 | tr '\n' ' ');"
			elif [ -z "$(counts "$TMP/q-$n-quiet.out")" ] ||
				[ "$(counts "$TMP/q-$n-full.out")" != "$(counts "$TMP/q-$n-quiet.out")" ]; then
				why="$why $n: summaries differ: $(counts "$TMP/q-$n-full.out") / $(counts "$TMP/q-$n-quiet.out");"
			fi
		done
		[ -z "$why" ] && break
	done
	np=$(grep -c ' passage ' "$TMP/q-wl-quiet.out")
	ev=$(grep -oE '^[0-9]+ (fork|exec|end):' "$TMP/q-fe-quiet.out" | awk '{print $2}' | tr -d ':' | tr '\n' ' ')
	if [ -z "$why" ] && [ "$np" -gt 50 ] && [ "$ev" = "fork exec end " ]; then
		pass "step --quiet: every line but the steps ($np passages; events: $ev)"
	else
		fail "step --quiet: every line but the steps" "$why passages $np events '$ev'"
	fi
else
	skip "step --quiet: every line but the steps" "setarch not installed"
fi

finish
