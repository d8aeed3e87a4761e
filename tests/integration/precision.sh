#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A program built the way rseq libraries are (percpu_lib: per-CPU operations as static inline
# asm goto functions, abort handlers in __rseq_failure, a cpu_id check at the top of every
# section): sections are named by their inline chain and handlers by section and offset
# (checked against addr2line and objdump); audit names the stub a stale cpu_id branches
# through; stat and trace count every entry into each abort handler with uprobes and tell the
# kernel's aborts from the program's own branches, equal per section to the workload's
# counters, also through wrappers (env, sh -c, nested); the uprobes are gone on every exit path.
source "$(dirname "$0")/../lib.sh"

W="$BUILD/tests/workloads/percpu_lib"
if [ ! -x "$W" ]; then
	fail "workload built" "$W missing"
	finish
	exit
fi

# --- names: inline chain and section, against binutils -----------------------------------------
# (the same on every kernel: not under quick)
quick || {
"$RSEQDBG" scan --json "$W" >"$TMP/scan.json"
"$RSEQDBG" scan "$W" >"$TMP/scan.txt"
base=$(objdump -h "$W" | awk '$2 == "__rseq_failure" { print $4 }')
if python3 - "$TMP/scan.json" "$TMP/scan.txt" "$W" "$base" <<'EOF'; then
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
txt = open(sys.argv[2]).read()
w, base = sys.argv[3], int(sys.argv[4], 16)
secs = d["files"][0]["sections"]
assert len(secs) == 2, secs
for s in secs:
    st = s["start"]
    # addr2line -i: the innermost inlined function first, then each caller
    out = subprocess.run(["addr2line", "-f", "-i", "-e", w, hex(st["addr"])],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    funcs, places = out[0::2][:-1], out[1::2]
    want = [(f, p.split(" ")[0]) for f, p in zip(funcs, places)]
    got = [(x["function"], None) for x in st["inlined"]] + [(st["function"], None)]
    assert [f for f, _ in want] == [f for f, _ in got], (want, got)
    inner = places[0].split(" ")[0].rsplit("/", 1)[-1]
    assert "%s:%d" % (st["file"].rsplit("/", 1)[-1], st["line"]) == inner, (st, inner)
    for i, x in enumerate(st["inlined"]):
        callsite = places[i + 1].split(" ")[0].rsplit("/", 1)[-1]
        assert "%s:%d" % (x["call_file"].rsplit("/", 1)[-1], x["call_line"]) == callsite, (x, callsite)
    line = "start        %s (%s) inlined in %s+%#x (%s)" % (
        st["inlined"][0]["function"], inner, st["function"], st["offset"],
        places[len(st["inlined"])].split(" ")[0].rsplit("/", 1)[-1])
    assert line in txt, (line, txt)
    ab = s["abort"]
    assert ab["function"] is None and ab["section"] == "__rseq_failure", ab
    assert ab["offset"] == ab["addr"] - base, (ab, base)
    assert "abort        __rseq_failure+%#x" % ab["offset"] in txt, txt
EOF
	pass "scan: sections named by their inline chain, handlers by __rseq_failure+offset (addr2line, objdump)"
else
	fail "scan: sections named by their inline chain, handlers by __rseq_failure+offset (addr2line, objdump)"
fi
"$RSEQDBG" audit "$W" >"$TMP/audit.txt" 2>&1
# the stub counts and branches: 2 instructions on x86_64, 4 on aarch64 (ldr, add, str, b)
stub=2
[ "$(uname -m)" = aarch64 ] && stub=4
n=$(grep -c "leaves the section through a $stub-instruction stub at __rseq_failure+0x[0-9a-f]* that jumps to abort_ip __rseq_failure+0x[0-9a-f]*: a debugger that plants breakpoints only at the declared exits misses the stub" "$TMP/audit.txt")
check "audit: the stale-cpu_id branch through its stub named, with the abort handler it reaches" test "$n" -eq 2
check "audit: the section named by its inline chain" grep -q "^  section pcpu_addv (percpu_ops.h:[0-9]*) inlined in worker_main+0x[0-9a-f]* (percpu_lib.c:[0-9]*)" "$TMP/audit.txt"
}

if ! have_bpf; then
	skip "handler entries" "needs root and kernel BTF"
	finish
	exit
fi

# --- handler entries: exact per section, against the workload's own counts ----------------------
cat >"$TMP/check.py" <<'PY'
import json, sys
# argv: json (stat, or trace --summary's last line) workload-report [uprobes|none] [user-abort events]
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
d = json.loads(lines[-1])
d = d.get("summary", d)
rep = dict(l.strip().split("=", 1) for l in open(sys.argv[2]) if "=" in l)
errs = []
if rep.get("result") != "ok":
    errs.append("workload: %s" % rep.get("result"))
got = {}
for s in d["sections"]:
    st = s["start"]
    name = st["inlined"][0]["function"] if st["inlined"] else st["function"]
    got[name] = (s["aborts"], s["handler_entries"], s["user_aborts"])
for op in ("pcpu_addv", "pcpu_cmpeqv_storev"):
    k, h, u = (int(rep["section.%s.%s" % (op, x)]) for x in ("kernel_aborts", "handler_entries", "user_branches"))
    want = (k, h, u) if sys.argv[3] == "uprobes" else (k, None, None)
    have = got.get(op, (0, 0, 0) if want[1] is not None else (0, None, None))
    if have[0] != want[0] or any(
            want[i] is None and have[i] is not None or want[i] is not None and
            (have[i] is None or have[i] != want[i]) for i in (1, 2)):
        errs.append("%s: aborts, handler_entries, user_aborts %s; workload %s" % (op, have, want))
if sys.argv[3] == "uprobes" and (d["uprobes"]["failed"] or d["uprobes"]["program_skipped"]):
    errs.append("uprobes %s" % d["uprobes"])
if len(sys.argv) > 4:
    ev = int(sys.argv[4])
    u = sum(int(rep["section.%s.user_branches" % op]) for op in ("pcpu_addv", "pcpu_cmpeqv_storev"))
    if d["ringbuf_drops"] == 0 and ev != u:
        errs.append("%d user-abort events, workload branched %d times" % (ev, u))
print("; ".join(errs))
sys.exit(1 if errs else 0)
PY
ARGS=(--threads 2 --seconds 1 --stale-every 700 --signal-us 150)
stat_run() { # name [stat options]
	local name=$1
	shift
	"$RSEQDBG" stat --json -o "$TMP/$name.json" "$@" -- "$W" "${ARGS[@]}" --out "$TMP/$name.txt"
}
stat_check() { # name mode(uprobes|none)
	local why
	if why=$(python3 "$TMP/check.py" "$TMP/$1.json" "$TMP/$1.txt" "$2"); then
		pass "stat $1: kernel aborts, handler entries and branches exact per section"
	else
		fail "stat $1: kernel aborts, handler entries and branches exact per section" "$why"
	fi
}
stat_case() { # name mode(uprobes|none) [stat options]
	local name=$1 mode=$2
	shift 2
	stat_run "$name" "$@"
	stat_check "$name" "$mode"
}
# both_ways REPORT: the workload both branched to its handlers and was aborted by the kernel
# in each section. Kernel aborts come from signals landing inside a section; a 1 s run now
# and then has none in the short pcpu_cmpeqv_storev (once in the sanitizer build: 0, against
# 886 in pcpu_addv), and then the uprobes run, which the check needs with both, is run
# again, up to 3 runs.
both_ways() {
	python3 -c '
import sys
rep = dict(l.strip().split("=", 1) for l in open(sys.argv[1]) if "=" in l)
for op in ("pcpu_addv", "pcpu_cmpeqv_storev"):
    assert int(rep["section.%s.user_branches" % op]) > 0 and int(rep["section.%s.kernel_aborts" % op]) > 0, rep
' "$1"
}
for run in 1 2 3; do
	stat_run uprobes
	both_ways "$TMP/uprobes.txt" 2>/dev/null && break
done
stat_check uprobes uprobes
# Through wrappers (env, sh -c, and env sh -c 'exec env ...'): each new program is held at its
# exec and at its loader's announcements until its handlers are probed, so the counts are
# exact from its first instruction, not from whenever the tracer caught up.
wrap_case() { # name wrapper...
	local name=$1
	shift
	"$RSEQDBG" stat --json -o "$TMP/$name.json" -- "$@" "$W" "${ARGS[@]}" --out "$TMP/$name.txt"
	stat_check "$name" uprobes
}
wrap_case env env
wrap_case sh-c sh -c '"$0" "$@"'
wrap_case nested env sh -c 'exec env "$0" "$@"'
check "stat: each of the 4 programs of the nested wrappers held until probed, none missed" python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))["uprobes"]
assert u["holds"] >= 4 and u["hold_misses"] == 0, u
d = json.load(open(sys.argv[1]))
assert d["counted_from"] == "start", d["counted_from"]
' "$TMP/nested.json"
quick || RSEQDBG_TRACE_MODE=no-event-mask stat_case no-mask uprobes
quick || stat_case no-uprobes none --no-uprobes
check "stat: the workload both branched to its handlers and was aborted by the kernel (run $run)" \
	both_ways "$TMP/uprobes.txt"
if ! quick; then
	out=$("$RSEQDBG" stat -- "$W" --threads 1 --iters 100000 --stale-every 1000 --out /dev/null 2>&1 >/dev/null)
	check "stat: the text summary shows handler entries and branches per section" \
		grep -q "handler entries 100: 0 after kernel aborts, 100 from branches in user space" <<<"$out"
fi

# trace: the summary, and one user-abort event per branch
"$RSEQDBG" trace --json --events user-abort -- "$W" "${ARGS[@]}" --out "$TMP/trace.txt" >"$TMP/trace.json" 2>/dev/null
ev=$(grep -c '"kind":"user-abort"' "$TMP/trace.json")
if why=$(python3 "$TMP/check.py" "$TMP/trace.json" "$TMP/trace.txt" uprobes "$ev"); then
	pass "trace: summary exact per section, one user-abort event per branch ($ev)"
else
	fail "trace: summary exact per section, one user-abort event per branch" "$why"
fi
check "trace: a user-abort event names its section by its inline chain" python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("kind") == "user-abort":
        assert e["section"]["start"]["inlined"][0]["function"] in ("pcpu_addv", "pcpu_cmpeqv_storev"), e
        assert e["section"]["abort_ip"] - e["section"]["start_ip"] > e["section"]["post_commit_offset"], e
        sys.exit(0)
sys.exit(1)' "$TMP/trace.json"

# trace -p: the handlers of a running process get their uprobes when tracing starts, not at
# its first kernel abort (a section may only ever branch to its handler)
mkfifo "$TMP/go"
# its standard input a pipe that ends when go is opened: the workload has run exec (ready)
# before it is traced
"$W" --wait --threads 2 --iters 200000 --stale-every 100 --out "$TMP/p.txt" < <(cat "$TMP/go") 2>"$TMP/w.err" &
P=$!
wait_for -p $P 10 "the workload's ready line" file_has ready "$TMP/w.err"
"$RSEQDBG" trace --summary --json -p "$P" >"$TMP/p.json" 2>"$TMP/p.err" &
T=$!
wait_for -p $T 10 "trace -p to say tracing" file_has tracing "$TMP/p.err"
exec 3>"$TMP/go"
exec 3>&-
wait $P
kill -INT $T
wait $T
if why=$(python3 "$TMP/check.py" "$TMP/p.json" "$TMP/p.txt" uprobes); then
	pass "trace -p: kernel aborts, handler entries and branches exact per section"
else
	fail "trace -p: kernel aborts, handler entries and branches exact per section" "$why"
fi

check "trace -p: the summary says its counts start at the attach, no section short of entries" python3 -c '
import json, sys
d = json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
d = d.get("summary", d)
assert d["counted_from"] == "attach", d["counted_from"]
assert all(s["handler_entries_missing"] == 0 for s in d["sections"]), d["sections"]
' "$TMP/p.json"

# --- no uprobe left: command exits, SIGINT, SIGTERM, SIGKILL ------------------------------------
# abort_handler, or abort_handler_nopreempt (its name cut to 15 characters) where it loads
probes() { bpftool prog show 2>/dev/null | grep -c '^[0-9]*: kprobe  name abort_handler'; }
no_probes() { [ "$(probes)" -eq 0 ]; }
some_probes() { [ "$(probes)" -gt 0 ]; }
# no handler program left (its uprobes hold it) within 10 s
gone() { wait_for -q -i 0.1 10 "the handler programs to be unloaded" no_probes; }
check "no uprobe left after the command exits" gone
sigs="INT TERM KILL"
quick && sigs=INT
for sig in $sigs; do
	"$RSEQDBG" trace --summary -- "$W" --threads 1 --seconds 30 --out /dev/null >/dev/null 2>&1 &
	tp=$!
	# loading and verifying the programs takes seconds under emulation
	wait_for -q -p $tp -i 0.1 60 "the handler programs to load" some_probes
	attached=$(probes)
	kill -$sig $tp
	# the workload ends too, as a terminal's Ctrl-C would end it: the tracer waits for it
	pkill -TERM -P $tp 2>/dev/null
	wait $tp 2>/dev/null
	pkill -KILL -P $tp 2>/dev/null
	if [ "$attached" -gt 0 ] && gone; then
		pass "no uprobe left after SIG$sig"
	else
		fail "no uprobe left after SIG$sig" "attached $attached, left $(probes)"
	fi
done
finish
