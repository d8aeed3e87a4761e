#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg scan --pid on live processes: the sections at the runtime addresses the example
# program prints from its own descriptors, the thread's rseq area as the program registered
# it, a thread caught inside a critical section, the process running on unharmed after the
# scan, and the errors for a dead process and for a process the user may not trace.
source "$(dirname "$0")/../lib.sh"

EX="$BUILD/examples/percpu_counter"
WL="$BUILD/tests/workloads/rseq_workload"
RSEQ_SIG=$((RSEQ_SIG_HEX))
json_ok() { python3 -m json.tool "$1" >/dev/null 2>&1; }

if [ ! -x "$RSEQDBG" ]; then
	fail "rseqdbg is built" "$RSEQDBG missing"
	finish
	exit
fi

# --- errors that need no privilege -------------------------------------------------------------
if ! quick; then
true &
dead=$!
wait "$dead"
"$RSEQDBG" scan --pid "$dead" >"$TMP/dead.out" 2>"$TMP/dead.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/dead.err")" -eq 1 ] &&
	grep -qx "rseqdbg: scan: pid $dead: no such process" "$TMP/dead.err"; then
	pass "dead pid: exit 2, one line"
else
	fail "dead pid: exit 2, one line" "rc $rc: $(cat "$TMP/dead.err")"
fi
"$RSEQDBG" scan --json --pid "$dead" >"$TMP/dead-json.out" 2>/dev/null
check "dead pid: JSON error document" python3 -c '
import json, sys
sys.exit("no such process" not in json.load(open(sys.argv[1]))["error"])' "$TMP/dead-json.out"

# A process of another user (root's, seen from an unprivileged user): no ptrace permission.
perm_case() { # CMD...: run rseqdbg as the unprivileged user against $victim
	"$@" scan --pid "$victim" >"$TMP/perm.out" 2>"$TMP/perm.err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/perm.err")" -eq 1 ] &&
		grep -q "^rseqdbg: scan: cannot trace pid $victim: Operation not permitted (need" \
			"$TMP/perm.err" && [ ! -s "$TMP/perm.out" ]; then
		pass "no permission: exit 2, one clear line"
	else
		fail "no permission: exit 2, one clear line" "rc $rc: $(cat "$TMP/perm.err")"
	fi
}
if have_root; then
	if command -v setpriv >/dev/null; then
		sleep 60 &
		victim=$!
		# The unprivileged user needs a copy it can execute.
		mkdir -p "$TMP/nobody" && cp "$RSEQDBG" "$TMP/nobody/rseqdbg"
		chmod 755 "$TMP" "$TMP/nobody" "$TMP/nobody/rseqdbg"
		perm_case setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/nobody/rseqdbg"
		kill "$victim" 2>/dev/null
		wait "$victim" 2>/dev/null
	else
		skip "no permission: exit 2, one clear line" "setpriv not installed"
	fi
else
	victim=1 # init, owned by root
	perm_case "$RSEQDBG"
fi
fi # quick

if ! have_ptrace; then
	skip "scan --pid of the example" "ptrace not permitted (need root or ptrace_scope <= 1)"
	finish
	exit
fi
if ! quick; then
# ptrace refuses zombies, kernel threads and processes another tracer holds, whatever the
# privilege: scan and audit say which, in one line, with the parent or the tracer named.
refusals=$(python3 -c '
import os, re, subprocess, sys, time
def run(cmd, pid):
    r = subprocess.run([sys.argv[1], cmd, "--pid", str(pid)], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr
pid = os.fork()
if pid == 0:
    os._exit(0)
time.sleep(0.2)
me = open("/proc/self/comm").read().strip()
for cmd in ("scan", "audit"):
    rc, out, err = run(cmd, pid)
    want = "rseqdbg: %s: cannot trace pid %d: it is a zombie (it exited; its parent %d (%s) has not reaped it)\n" % (cmd, pid, os.getpid(), me)
    print("zombie", cmd, rc == 2 and out == "" and err == want or repr((rc, err, want)))
os.waitpid(pid, 0)
sleeper = subprocess.Popen(["sleep", "30"])
tracer = subprocess.Popen(["strace", "-q", "-o", "/dev/null", "-p", str(sleeper.pid)])
for _ in range(100):
    if re.search(r"TracerPid:\s*%d\b" % tracer.pid, open("/proc/%d/status" % sleeper.pid).read()):
        break
    time.sleep(0.05)
for cmd in ("scan", "audit"):
    rc, out, err = run(cmd, sleeper.pid)
    want = "rseqdbg: %s: cannot trace pid %d: already traced by PID %d (strace)\n" % (cmd, sleeper.pid, tracer.pid)
    print("traced", cmd, rc == 2 and out == "" and err == want or repr((rc, err, want)))
tracer.terminate(); tracer.wait(); sleeper.kill(); sleeper.wait()
' "$RSEQDBG")
for c in "zombie scan" "zombie audit" "traced scan" "traced audit"; do
	got=$(grep "^$c " <<<"$refusals")
	check "$c: exit 2, one line naming why" test "$got" = "$c True"
done
kthread=$(grep -l '^Kthread:[[:space:]]*1' /proc/[0-9]*/status 2>/dev/null | head -n 1 |
	cut -d/ -f3)
if have_root && [ -n "$kthread" ]; then
	"$RSEQDBG" scan --pid "$kthread" >"$TMP/kt.out" 2>"$TMP/kt.err"
	rc=$?
	check "kernel thread: exit 2, one line saying so" bash -c "[ $rc -eq 2 ] &&
		[ \$(wc -l <'$TMP/kt.err') -eq 1 ] && grep -q 'kernel thread' '$TMP/kt.err'"
fi
fi # quick

if [ ! -x "$EX" ]; then
	fail "scan --pid of the example" "$EX not built (make tests)"
	finish
	exit
fi

# --- the example program, waiting before its threads start -------------------------------------
# start_waiting NAME EXE ARGS...: run EXE --wait with stdin from a FIFO we hold open and stdout
# in $TMP/NAME.out; returns once it printed "ready". Sets wpid and wfd (close wfd to let it run).
start_waiting() {
	local n=$1
	shift
	mkfifo "$TMP/$n.in"
	"$@" --wait <"$TMP/$n.in" >"$TMP/$n.out" 2>&1 &
	wpid=$!
	exec {wfd}>"$TMP/$n.in"
	wait_for -q -p "$wpid" -i 0.1 20 "$n's ready line" file_has -x ready "$TMP/$n.out"
}

if ! start_waiting pc "$EX" --threads 2 --iters 20000; then
	fail "example prints its sections and ready" "$(cat "$TMP/pc.out")"
	kill "$wpid" 2>/dev/null
	finish
	exit
fi
pc=$wpid
pc_in=$wfd
grep '^cs ' "$TMP/pc.out" >"$TMP/cs.txt"
check "example prints its sections" test "$(wc -l <"$TMP/cs.txt")" -ge 2

"$RSEQDBG" scan --json --pid "$pc" >"$TMP/pid.json" 2>"$TMP/pid.err"
check "scan --json --pid: exit 0" test $? -eq 0
check "scan --json --pid: valid JSON" json_ok "$TMP/pid.json"

# Each section the program printed (its own descriptors, relocated by the dynamic loader) is
# in the module of the program at exactly those runtime addresses, in the printed function.
if python3 - "$TMP/pid.json" "$TMP/cs.txt" "$(readlink -f "$EX")" "$pc" \
	>"$TMP/pid.why" 2>&1 <<'EOF'; then
import json, re, sys
doc = json.load(open(sys.argv[1]))
exe, pid = sys.argv[3], int(sys.argv[4])
if doc['pid'] != pid:
    sys.exit('pid %d' % doc['pid'])
mods = [m for m in doc['modules'] if m['path'] == exe]
if len(mods) != 1:
    sys.exit('module %s not listed once: %s' % (exe, [m['path'] for m in doc['modules']]))
m = mods[0]
maps = [l.split() for l in open('/proc/%d/maps' % pid) if l.rstrip().endswith(' ' + exe)]
lo = min(int(l[0].split('-')[0], 16) for l in maps)
hi = max(int(l[0].split('-')[1], 16) for l in maps)
if (m['start'], m['end']) != (lo, hi):
    sys.exit('module range %#x-%#x, /proc/PID/maps says %#x-%#x' % (m['start'], m['end'], lo, hi))
for line in open(sys.argv[2]):
    f = re.match(r'cs (\S+) start=0x([0-9a-f]+) post_commit=0x([0-9a-f]+) abort=0x([0-9a-f]+)$',
                 line.strip())
    if not f:
        sys.exit('bad line from the program: ' + line)
    func, start, post, abort = f.group(1), *(int(f.group(i), 16) for i in (2, 3, 4))
    hit = [s for s in m['sections'] if s['start_ip'] == start]
    if len(hit) != 1:
        sys.exit('%s: no section at start %#x' % (func, start))
    s = hit[0]
    if (s['post_commit_ip'], s['abort_ip']) != (post, abort):
        sys.exit('%s: post_commit %#x abort %#x, program says %#x %#x' %
                 (func, s['post_commit_ip'], s['abort_ip'], post, abort))
    if s['start']['function'] != func or s['start']['addr'] != start:
        sys.exit('%s: start symbolized as %s' % (func, s['start']))
    if s['signature']['status'] != 'match':
        sys.exit('%s: signature %s' % (func, s['signature']))
    if not (m['start'] <= start < m['end'] and m['start'] <= abort < m['end']):
        sys.exit('%s: outside the module' % func)
if len(m['sections']) != sum(1 for _ in open(sys.argv[2])):
    sys.exit('%d sections, the program has %d' % (len(m['sections']),
                                                   sum(1 for _ in open(sys.argv[2]))))
EOF
	pass "scan --pid: sections at the runtime addresses the program printed"
else
	fail "scan --pid: sections at the runtime addresses the program printed" \
		"$(head -c 500 "$TMP/pid.why")"
fi

# The waiting thread has the area glibc (or the program) registered with the signature of the
# architecture.
ncpu=$(getconf _NPROCESSORS_CONF)
check "scan --pid: a thread with an rseq area, signature $RSEQ_SIG_HEX and a cpu_id" python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
ok = [t for t in doc["threads"] if t["rseq"] and t["rseq"]["signature"] == int(sys.argv[2])
      and t["rseq"]["size"] >= 32 and t["rseq"]["addr"] and t["cpu_id"] is not None
      and t["cpu_id"] < int(sys.argv[3])]
sys.exit(not (ok and any(t["tid"] == doc["pid"] for t in ok)))' "$TMP/pid.json" "$RSEQ_SIG" "$ncpu"
tids=$(ls /proc/"$pc"/task | sort -n | tr '\n' ' ')
check "scan --pid: one entry per thread of /proc/PID/task" python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
sys.exit(sorted(t["tid"] for t in doc["threads"]) != sorted(map(int, sys.argv[2].split())))' \
	"$TMP/pid.json" "$tids"

if ! quick; then
"$RSEQDBG" scan --pid "$pc" >"$TMP/pid.txt" 2>&1
check "scan --pid text: exit 0" test $? -eq 0
first=$(head -n 1 "$TMP/cs.txt" | sed -E 's/.* start=(0x[0-9a-f]+) .*/\1/')
check "scan --pid text: module, runtime start address and thread shown" bash -c "
	grep -q '^pid $pc: 1 module with rseq critical sections' '$TMP/pid.txt' &&
	grep -q '  0  $first  ' '$TMP/pid.txt' && grep -q '^  tid $pc  rseq area 0x' '$TMP/pid.txt'"

"$RSEQDBG" scan --json --addr "$first" --pid "$pc" >"$TMP/pid-addr.json" 2>/dev/null
check "scan --pid --addr: only the section at that runtime address" python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
s = [s for m in doc["modules"] for s in m["sections"]]
sys.exit(not (len(s) == 1 and s[0]["start_ip"] == int(sys.argv[2], 16)))' \
	"$TMP/pid-addr.json" "$first"
fi # quick

# Detached, the program runs on as before: start it and check its own result.
exec {pc_in}>&-
wait "$pc"
rc=$?
result=$(cat "$TMP/pc.out")
check "the program runs on after the scan and its counters add up" \
	bash -c "[ $rc -eq 0 ] && grep -qx 'result=ok' <<<'$result'"

# --- a program whose file was deleted: read through /proc/PID/map_files -------------------------
if ! quick; then
cp "$EX" "$TMP/pc-deleted"
start_waiting pd "$TMP/pc-deleted" --threads 1 --iters 10 ||
	fail "deleted program file: the program is ready" "$(head -c 300 "$TMP/pd.out")"
pd=$wpid
pd_in=$wfd
del_cs=$(grep -m1 '^cs ' "$TMP/pd.out")
rm -f "$TMP/pc-deleted"
"$RSEQDBG" scan --json --pid "$pd" >"$TMP/deleted.json" 2>"$TMP/deleted.err"
check "deleted program file: its sections at the printed runtime addresses" python3 -c '
import json, re, sys
doc = json.load(open(sys.argv[1]))
f = re.match(r"cs \S+ start=0x([0-9a-f]+) post_commit=0x([0-9a-f]+) abort=0x([0-9a-f]+)$",
             sys.argv[2])
want = tuple(int(x, 16) for x in f.groups())
got = [(s["start_ip"], s["post_commit_ip"], s["abort_ip"]) for m in doc["modules"]
       if m["path"].endswith("/pc-deleted (deleted)") for s in m["sections"]]
sys.exit(want not in got)' "$TMP/deleted.json" "$del_cs"
exec {pd_in}>&-
wait "$pd"
fi # quick

# --- a thread caught inside a critical section ---------------------------------------------------
# spin_cs with a spin that never ends by itself: its thread is inside its section all the time
# but for the few instructions from an abort (a preemption, or a scan's own stop) back into
# it, so a scan finds it there; a scan that stopped it on that short way is run again (up to
# 20 scans). Then the workload with the most sections is scanned while it runs, and its own
# checks afterwards count the aborts the scans cause: the result stays ok.
SPIN="$BUILD/tests/workloads/spin_cs"
if [ -x "$SPIN" ] && [ -x "$WL" ]; then
	nm "$SPIN" >"$TMP/wl.nm"
	"$SPIN" --iters 1 --spin 1000000000000000 >/dev/null 2>&1 &
	sp=$!
	found=0
	tries=0
	: >"$TMP/wl.lasterr"
	while [ $tries -lt 20 ] && kill -0 "$sp" 2>/dev/null; do
		tries=$((tries + 1))
		if ! "$RSEQDBG" scan --json --no-debuginfo --pid "$sp" >"$TMP/wl.json" \
			2>"$TMP/wl.err"; then
			cp "$TMP/wl.err" "$TMP/wl.lasterr"
			continue
		fi
		if grep -q '"inside":{' "$TMP/wl.json"; then
			found=1
			break
		fi
	done
	[ $found -eq 1 ] || echo "no thread inside a section in $tries scans;" \
		"last error: $(tr '\n' ' ' <"$TMP/wl.lasterr")" >"$TMP/wl.why"
if [ $found -eq 1 ] && python3 - "$TMP/wl.json" "$TMP/wl.nm" "$(readlink -f "$SPIN")" \
		>"$TMP/wl.why" 2>&1 <<'EOF'; then
import json, sys
doc = json.load(open(sys.argv[1]))
syms = {p[2]: int(p[0], 16) for p in (l.split() for l in open(sys.argv[2])) if len(p) == 3}
for t in doc['threads']:
    i = t['inside']
    if not i:
        continue
    if i['start']['module'] != sys.argv[3] or i['at']['module'] != sys.argv[3]:
        sys.exit('inside module %s' % i['start']['module'])
    m = [m for m in doc['modules'] if m['path'] == i['start']['module']][0]
    s = [s for s in m['sections'] if s['start_ip'] == i['start_ip']]
    if len(s) != 1 or s[0]['abort_ip'] != i['abort_ip']:
        sys.exit('inside %s matches no section' % i)
    if not (s[0]['start_ip'] <= t['ip'] < s[0]['post_commit_ip']):
        sys.exit('ip %#x not in [%#x, %#x)' % (t['ip'], s[0]['start_ip'], s[0]['post_commit_ip']))
    fn = i['at']['function']
    if fn not in syms or not (syms[fn] + m['bias'] <= t['ip']):
        sys.exit('function %s' % fn)
    if t['rseq_cs'] == 0:
        sys.exit('inside a section but rseq_cs is not armed')
EOF
		pass "scan --pid: a thread inside a critical section, with its abort_ip (scan $tries)"
	else
		fail "scan --pid: a thread inside a critical section, with its abort_ip" \
			"$(head -c 300 "$TMP/wl.why" | tr '\n' ' ')"
	fi
	kill -KILL "$sp"
	wait "$sp" 2>/dev/null
	"$WL" --mode all --threads 2 --seconds 600 >"$TMP/wl.out" 2>&1 &
	wl=$!
	wait_tasks "$wl" 3
	for _ in $(seq 20); do
		"$RSEQDBG" scan --json --no-debuginfo --pid "$wl" >/dev/null 2>&1
	done
	kill -TERM "$wl"
	wait "$wl"
	rc=$?
	check "the workload's own checks pass after being scanned" \
		bash -c "[ $rc -eq 0 ] && grep -qx 'result=ok' '$TMP/wl.out'"
else
	fail "scan --pid: a thread inside a critical section" "$SPIN or $WL not built (make tests)"
fi
finish
