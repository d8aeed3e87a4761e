#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A process whose main thread has exited (pthread_exit in main) while a worker runs rseq
# critical sections: /proc/PID/maps and /proc/PID/mem no longer show its memory, yet scan,
# audit and step --pid read it through the live thread, list that thread and step it, and
# trace -p probes its abort handler; once no thread is left, scan, audit and step call the
# process gone in one line (a zombie while its parent has not reaped it, then no such
# process), with exit status 2.
source "$(dirname "$0")/../lib.sh"

WL="$BUILD/tests/workloads/main_exit"
WLREAL=$(readlink -f "$WL")
RSEQ_SIG=$((RSEQ_SIG_HEX))
wl="" holder=""
trap 'kill $wl $holder 2>/dev/null; rm -rf "$TMP"' EXIT

if ! have_ptrace; then
	skip "--pid with the main thread exited" "ptrace not permitted (need root or ptrace_scope <= 1)"
	finish
	exit
fi
for f in "$RSEQDBG" "$WL"; do
	[ -x "$f" ] || { fail "--pid with the main thread exited" "$f not built (make tests)"; finish; exit; }
done

# status_of PID [TID] KEY: a field of /proc/PID/status (of /proc/PID/task/TID/status)
status_of() {
	local f=/proc/$1/status
	[ $# -eq 3 ] && f=/proc/$1/task/$2/status && shift
	awk -v k="$2:" '$1 == k { print $2 }' "$f" 2>/dev/null
}

# whole_zombie PID: every thread of PID has exited; its parent has not reaped it yet
whole_zombie() {
	[ "$(find /proc/"$1"/task -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" = 1 ] &&
		[ "$(status_of "$1" State)" = Z ]
}

# one_line NAME RC WANT_RC ERRFILE PATTERN: exit status WANT_RC and one stderr line matching PATTERN
one_line() {
	if [ "$2" -eq "$3" ] && [ "$(wc -l <"$4")" -eq 1 ] && grep -qE "$5" "$4"; then
		pass "$1"
	else
		fail "$1" "rc $2: $(head -c 300 "$4")"
	fi
}

"$WL" >"$TMP/wl.out" 2>&1 &
wl=$!
if ! wait_grep '^ready ' "$TMP/wl.out"; then
	fail "the workload's main thread exits, its worker runs" "$(head -c 300 "$TMP/wl.out")"
	finish
	exit
fi
tid=$(sed -n 's/^ready pid=[0-9]* tid=\([0-9]*\)$/\1/p' "$TMP/wl.out")
# What the test is about: the main thread a zombie, /proc/PID's maps without a mapping, and
# the worker's view of the same process whole.
check "the workload's main thread exited, its worker $tid runs, /proc/PID/maps is empty" \
	bash -c "[ '$(status_of "$wl" State)' = Z ] && [ -n '$tid' ] &&
	[ '$(status_of "$wl" "$tid" State)' != Z ] && [ -z \"\$(cat /proc/$wl/maps 2>/dev/null)\" ] &&
	grep -q ' $WLREAL\$' /proc/$wl/task/$tid/maps"

# --- scan --pid ----------------------------------------------------------------------------------
# The workload's sections at its run-time addresses: the file's own table (scan FILE) moved by
# the load bias that the live thread's /proc/PID/task/TID/maps and the ELF program headers give.
"$RSEQDBG" scan --json "$WL" >"$TMP/file.json" 2>"$TMP/file.err"
cp "/proc/$wl/task/$tid/maps" "$TMP/maps"
"$RSEQDBG" scan --json --pid "$wl" >"$TMP/scan.json" 2>"$TMP/scan.err"
rc=$?
check "scan --json --pid: exit 0, nothing on stderr" bash -c "[ $rc -eq 0 ] && [ ! -s '$TMP/scan.err' ]"
if python3 - "$TMP/scan.json" "$TMP/file.json" "$TMP/maps" "$WLREAL" "$(getconf PAGESIZE)" \
	"$wl" >"$TMP/scan.why" 2>&1 <<'EOF'; then
import json, struct, sys
doc, filedoc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
exe, page, pid = sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
# The load bias: where file offset 0 is mapped, less the address its PT_LOAD asks for.
with open(exe, 'rb') as f:
    eh = f.read(64)
    phoff, phentsize, phnum = struct.unpack_from('<Q', eh, 32)[0], *struct.unpack_from('<HH', eh, 54)
    f.seek(phoff)
    ph = [struct.unpack_from('<IIQQ', f.read(phentsize)) for _ in range(phnum)]
vaddr0 = min(p[3] for p in ph if p[0] == 1 and p[2] == 0)
maps = [l.split() for l in open(sys.argv[3]) if l.rstrip().endswith(' ' + exe)]
lo = min(int(l[0].split('-')[0], 16) for l in maps if int(l[2], 16) == 0)
bias = lo - (vaddr0 & ~(page - 1))
want = sorted((s['start_ip'] + bias, s['post_commit_ip'] + bias, s['abort_ip'] + bias)
              for s in filedoc['files'][0]['sections'])
if not want:
    sys.exit('scan FILE found no section')
if doc['pid'] != pid:
    sys.exit('pid %s' % doc['pid'])
mods = [m for m in doc['modules'] if m['path'] == exe]
if len(mods) != 1:
    sys.exit('module %s not listed once: %s' % (exe, [m['path'] for m in doc['modules']]))
if mods[0]['bias'] != bias:
    sys.exit('bias %#x, the maps say %#x' % (mods[0]['bias'], bias))
got = sorted((s['start_ip'], s['post_commit_ip'], s['abort_ip']) for s in mods[0]['sections'])
if got != want:
    sys.exit('sections %s, want %s' % ([tuple(map(hex, g)) for g in got],
                                        [tuple(map(hex, w)) for w in want]))
print(len(got), 'at bias', hex(bias))
EOF
	pass "scan --pid: the workload's sections at run-time addresses ($(cat "$TMP/scan.why"))"
else
	fail "scan --pid: the workload's sections at run-time addresses" "$(head -c 400 "$TMP/scan.why")"
fi
check "scan --pid: the live thread alone, with its rseq area and cpu_id" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["threads"]
sys.exit(not (len(t) == 1 and t[0]["tid"] == int(sys.argv[2]) and t[0]["rseq"] and
              t[0]["rseq"]["signature"] == int(sys.argv[3]) and t[0]["cpu_id"] is not None))' \
	"$TMP/scan.json" "$tid" "$RSEQ_SIG"

if ! quick; then
	"$RSEQDBG" scan --pid "$wl" >"$TMP/scan.txt" 2>"$TMP/scan-txt.err"
	rc=$?
	check "scan --pid text: exit 0, the live thread listed, not the exited one" bash -c "
		[ $rc -eq 0 ] && [ ! -s '$TMP/scan-txt.err' ] &&
		grep -q '^pid $wl: 1 module with rseq critical sections' '$TMP/scan.txt' &&
		grep -qx 'threads: 1' '$TMP/scan.txt' &&
		grep -q '^  tid $tid  rseq area 0x' '$TMP/scan.txt' &&
		! grep -q '^  tid $wl ' '$TMP/scan.txt'"
fi

# --- audit --pid ---------------------------------------------------------------------------------
# Exit 0: no finding at the default --fail-on level (error).
"$RSEQDBG" audit --json --pid "$wl" >"$TMP/audit.json" 2>"$TMP/audit.err"
rc=$?
check "audit --json --pid: exit 0, the live thread's signature, the workload's sections" \
	python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
exe, pid, tid, sig, rc = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
want = len(json.load(open(sys.argv[7]))["files"][0]["sections"])
m = [m for m in doc["modules"] if m["path"] == exe]
sys.exit(not (rc == 0 and doc["pid"] == pid and doc["threads"] == [{"tid": tid, "signature": sig}]
              and len(m) == 1 and m[0]["sections"] == want and doc["summary"]["errors"] == 0
              and "zombie" not in open(sys.argv[8]).read()))' \
	"$TMP/audit.json" "$WLREAL" "$wl" "$tid" "$RSEQ_SIG" "$rc" "$TMP/file.json" "$TMP/audit.err"
if ! quick; then
	"$RSEQDBG" audit --pid "$wl" >"$TMP/audit.txt" 2>&1
	rc=$?
	check "audit --pid text: exit 0, the live thread, no word of a zombie" bash -c "
		[ $rc -eq 0 ] && grep -q '^pid $wl: tid $tid signature $RSEQ_SIG_HEX' '$TMP/audit.txt' &&
		grep -q '^$WLREAL (.*1 section' '$TMP/audit.txt' && ! grep -qi zombie '$TMP/audit.txt'"
fi

# --- step --pid ----------------------------------------------------------------------------------
# Without --tid the live thread is stepped: 200 instructions of its loop, a passage through
# the section scan found on each turn.
timeout 120 "$RSEQDBG" step --json --pid "$wl" --count 200 >"$TMP/step.json" 2>"$TMP/step.err"
rc=$?
if python3 - "$TMP/step.json" "$TMP/scan.json" "$tid" "$WLREAL" "$rc" >"$TMP/step.why" 2>&1 <<'EOF'; then
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
tid, exe, rc = int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
secs = {(s['start_ip'], s['post_commit_ip'], s['abort_ip'])
        for m in json.load(open(sys.argv[2]))['modules'] if m['path'] == exe for s in m['sections']}
if rc:
    sys.exit('exit %d' % rc)
other = {e['tid'] for e in ev if 'tid' in e} - {tid}
if other:
    sys.exit('events of threads %s' % other)
sums = [e for e in ev if e['kind'] == 'summary']
passages = [e for e in ev if e['kind'] == 'passage']
if len(sums) != 1 or sums[0]['end'] != 'count' or sums[0]['instructions'] != 200:
    sys.exit('summary %s' % sums)
if not passages or sums[0]['passages'] != len(passages):
    sys.exit('%d passages, the summary says %d' % (len(passages), sums[0]['passages']))
for p in passages:
    s = p['section']
    if (s['start_ip'], s['post_commit_ip'], s['abort_ip']) not in secs:
        sys.exit('passage through %s, not a section scan found' % s)
print(len(passages), 'passages,', sums[0]['commits'], 'committed')
EOF
	pass "step --pid: the live thread stepped 200 instructions, $(cat "$TMP/step.why")"
else
	fail "step --pid: the live thread stepped 200 instructions" \
		"$(head -c 300 "$TMP/step.why") $(head -c 300 "$TMP/step.err")"
fi
"$RSEQDBG" step --pid "$wl" --tid "$wl" --count 1 >"$TMP/steptid.out" 2>"$TMP/steptid.err"
one_line "step --pid --tid of the exited main thread: exit 2, one line" $? 2 "$TMP/steptid.err" \
	"^rseqdbg: step: --tid $wl: no such thread in process $wl\$"
if ! quick; then
	timeout 120 "$RSEQDBG" step --pid "$wl" --count 200 >"$TMP/step.txt" 2>"$TMP/step-txt.err"
	rc=$?
	check "step --pid text: exit 0, the worker's instructions and passages" bash -c "
		[ $rc -eq 0 ] && grep -q '^summary: count; 200 instructions stepped, [1-9][0-9]* passages' \
		'$TMP/step.txt' && grep -q '^$tid passage ' '$TMP/step.txt' &&
		! grep -vE '^($tid |summary: )' '$TMP/step.txt' | grep -q ."
fi

# --- trace -p ------------------------------------------------------------------------------------
# Before it says it is tracing, the tracer reads the modules of -p's process to put a uprobe on
# each abort handler (a section may only ever branch to its own): through the live thread, one
# for the workload's section. A section it reports is named, not a bare address.
if have_bpf; then
	"$RSEQDBG" trace --json -p "$wl" >"$TMP/trace.json" 2>"$TMP/trace.err" &
	tpid=$!
	wait_grep 'tracing rseq events' "$TMP/trace.err"
	kill -INT "$tpid"
	wait "$tpid"
	rc=$?
	if python3 - "$TMP/trace.json" "$TMP/file.json" "$wl" "$rc" >"$TMP/trace.why" 2>&1 <<'EOF'; then
import json, sys
rc, pid = int(sys.argv[4]), int(sys.argv[3])
handlers = {s['abort_ip'] for s in json.load(open(sys.argv[2]))['files'][0]['sections']}
if rc:
    sys.exit('exit %d' % rc)
summ = [json.loads(l)['summary'] for l in open(sys.argv[1]) if l.startswith('{"kind":"summary"')]
if not summ:
    sys.exit('no summary')
u = summ[-1]['uprobes']
if u['attached'] != len(handlers) or u['failed']:
    sys.exit('uprobes %s, the workload has %d abort handlers' % (u, len(handlers)))
secs = [s for s in summ[-1]['sections'] if s['pid'] == pid]
if any(s['start']['function'] != 'worker' for s in secs):
    sys.exit('sections %s' % secs)
print('%d uprobe, %d aborts' % (u['attached'], summ[-1]['aborts']))
EOF
		pass "trace -p: the workload's abort handler probed, its sections named ($(cat "$TMP/trace.why"))"
	else
		fail "trace -p: the workload's abort handler probed" \
			"$(head -c 300 "$TMP/trace.why") $(head -c 200 "$TMP/trace.err")"
	fi
else
	skip "trace -p: the workload's abort handler probed" "needs root and the kernel's BTF"
fi

# --- every thread gone -----------------------------------------------------------------------------
# gone NAME PID PATTERN: scan, audit and step --pid PID exit 2 with one line matching PATTERN,
# and (not quick) a JSON error document saying the same.
gone() {
	local cmd rc
	for cmd in scan audit step; do
		"$RSEQDBG" $cmd --pid "$2" >"$TMP/gone.out" 2>"$TMP/gone.err"
		rc=$?
		one_line "$1: $cmd --pid: exit 2, one line" $rc 2 "$TMP/gone.err" "^rseqdbg: $cmd: $3"
		quick && continue
		"$RSEQDBG" $cmd --json --pid "$2" >"$TMP/gone.json" 2>/dev/null
		rc=$?
		check "$1: $cmd --json --pid: exit 2, an error document" python3 -c '
import json, re, sys
doc = json.load(open(sys.argv[1]))
sys.exit(not (int(sys.argv[3]) == 2 and list(doc) == ["kind", "error"] and doc["kind"] == "error" and re.search(sys.argv[2], doc["error"])))' \
			"$TMP/gone.json" "$3" "$rc"
	done
}

# A zombie: the workload's parent is a shell that became sleep and never waits.
bash -c '"$1" >"$2" 2>&1 & echo $! >"$3"; exec sleep 600' sh "$WL" "$TMP/z.out" "$TMP/z.pid" &
holder=$!
if wait_grep '^ready ' "$TMP/z.out"; then
	z=$(cat "$TMP/z.pid")
	kill -TERM "$z"
	wait_grep '^commits=' "$TMP/z.out"
	for _ in $(seq 1200); do
		whole_zombie "$z" && break
		sleep 0.05
	done
	if whole_zombie "$z"; then
		gone "a zombie" "$z" "cannot trace (pid|process) $z: it is a zombie \(it exited; its parent $holder \(sleep\) has not reaped it\)\$"
	else
		fail "a zombie" "pid $z did not become one (state $(status_of "$z" State))"
	fi
else
	fail "a zombie" "the workload under a shell that does not wait: $(head -c 200 "$TMP/z.out")"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=""

# The workload's own check after the inspections, then no such process once reaped.
kill -TERM "$wl"
wait "$wl"
rc=$?
check "the workload ran on through scan, audit and step: exit 0, result=ok" \
	bash -c "[ $rc -eq 0 ] && grep -q 'result=ok' '$TMP/wl.out'"
gone "reaped" "$wl" "(pid $wl: no such process|no process $wl)\$"
wl=""
finish
