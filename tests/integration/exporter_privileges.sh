#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The exporter as its unit runs it: a user that is not root (nobody here, a dynamic one under
# systemd) with exactly the unit's AmbientCapabilities, given by setpriv. It loads, attaches
# its uprobes to a root process's abort handlers and serves the right counts; every system
# call it makes is in the unit's SystemCallFilter; systemd-analyze rates the unit 2.5 at most;
# a program in a directory hidden from it has its aborts counted under their function names.
source "$(dirname "$0")/../lib.sh"

UNIT="$TOP/scripts/rseqdbg-exporter.service.in"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

ambient=$(sed -n 's/^AmbientCapabilities=//p' "$UNIT")
bounding=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
check "unit: DynamicUser, and the bounding set is the ambient capabilities ($ambient)" \
	test -n "$ambient" -a "$ambient" = "$bounding" -a "$(sed -n 's/^DynamicUser=//p' "$UNIT")" = yes

# systemd-analyze reads the unit as installed (its ExecStart need not exist here).
if command -v systemd-analyze >/dev/null && systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	sed "s|@BINDIR@|$BUILD|" "$UNIT" >"$TMP/rseqdbg-exporter.service"
	exposure=$(systemd-analyze security --offline=true "$TMP/rseqdbg-exporter.service" 2>&1 |
		sed -n 's/.*Overall exposure level for rseqdbg-exporter.service: \([0-9.]*\).*/\1/p')
	check "systemd-analyze security: the unit's exposure is 2.5 at most (${exposure:-none})" \
		python3 -c 'import sys; sys.exit(0 if sys.argv[1] and float(sys.argv[1]) <= 2.5 else 1)' "$exposure"
else
	skip "systemd-analyze security" "needs systemd-analyze with --offline (systemd 250+)"
fi

if ! have_bpf; then
	skip "exporter as a user with the unit's capabilities" "needs root and kernel BTF"
	finish
	exit
fi
for t in setpriv strace; do
	if ! command -v $t >/dev/null; then
		fail "exporter as a user with the unit's capabilities" "$t missing (scripts/deps.sh installs it)"
		finish
		exit
	fi
done
first_id=$(max_prog_id)

# CAP_BPF CAP_PERFMON -> +bpf,+perfmon
caps=$(tr 'A-Z ' 'a-z\n' <<<"$ambient" | sed -n 's/^cap_/+/p' | paste -sd, -)
# The bits of those capabilities, as /proc/PID/status shows them.
mask=$(python3 -c 'import sys
bits = {"cap_dac_read_search": 2, "cap_sys_ptrace": 19, "cap_sys_admin": 21, "cap_perfmon": 38,
    "cap_bpf": 39}
m = 0
for c in sys.argv[1].lower().split():
    m |= 1 << bits[c]
print("%016x" % m)' "$ambient")

# percpu_lib, run by root, held until the exporter is attached: it branches to its own
# handler every 100th operation and gets kernel aborts from a signal timer, and counts both.
PL="$BUILD/tests/workloads/percpu_lib"
mkfifo "$TMP/go"
"$PL" --wait --threads 2 --iters 100000 --stale-every 100 --signal-us 300 --out "$TMP/pl.txt" \
	< <(cat "$TMP/go") 2>"$TMP/pl.err" &
PLP=$!
PIDS+=("$PLP")
wait_grep ready "$TMP/pl.err"

# A sanitizer build's leak check cannot run in a traced process (it stops the world with
# ptrace of its own): under strace it is off.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -o "$TMP/strace" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps="-all,$caps" --ambient-caps="-all,$caps" --bounding-set="-all,$caps" \
		"$RSEQDBG" exporter --listen 127.0.0.1:0 -p "$PLP" 2>"$TMP/exp.err" &
EPID=$!
PIDS+=("$EPID")
if ! wait_for -q -p "$EPID" 60 "the exporter's ready line" file_has 'exporter: ready' "$TMP/exp.err"; then
	fail "exporter as uid 65534 with $caps: ready" "$(cat "$TMP/exp.err")"
	finish
	exit
fi
pass "exporter as uid 65534 with exactly $caps: loaded and attached"
EPORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$TMP/exp.err")
XPID=$(pgrep -P "$EPID" -x rseqdbg || pgrep -f -n "^$RSEQDBG exporter --listen 127.0.0.1:0 -p $PLP\$")
check "exporter: runs as uid 65534 with capabilities $mask only (pid $XPID)" python3 -c '
import sys
st = dict(l.split(":", 1) for l in open("/proc/%s/status" % sys.argv[1]))
assert st["Uid"].split()[0] == "65534", st["Uid"]
for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb"):
    assert st[k].strip() == sys.argv[2], (k, st[k])' "$XPID" "$mask"
exec 3>"$TMP/go"
exec 3>&-
wait "$PLP"
# The handler entries the uprobes counted, and the aborts, against the workload's counts.
if why=$(python3 - "$EPORT" "$TMP/pl.txt" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen('http://127.0.0.1:%s/metrics' % sys.argv[1], timeout=30).read().decode()
theirs = {}
for l in open(sys.argv[2]):
    k, _, v = l.strip().partition('=')
    p = k.split('.')
    if p[0] == 'section' and p[2] in ('kernel_aborts', 'user_branches') and int(v):
        theirs[(p[1], 'kernel' if p[2] == 'kernel_aborts' else 'user')] = int(v)
mine = {}
for m in re.finditer(r'^rseq_abort_handler_entries_total\{(.*)\} (\S+)$', text, re.M):
    l = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
    k = (l['function'].split(' ')[0], l['kind'])
    mine[k] = mine.get(k, 0) + int(float(m.group(2)))
mine = {k: v for k, v in mine.items() if v}
# Without the event mask (7.x kernels) an entry's kind is sometimes off by one
# (rseqdbg-trace(1)).
slack = 2 if 'mode="no-event-mask"' in text else 0
if not any(k[1] == 'user' for k in theirs) or \
        any(abs(mine.get(k, 0) - theirs.get(k, 0)) > slack for k in set(mine) | set(theirs)):
    print('entries per section and kind %s, the workload counted %s' % (mine, theirs))
PY
) && [ -z "$why" ]; then
	pass "exporter as uid 65534: its uprobes count the root process's handler entries exactly"
else
	fail "exporter as uid 65534: its uprobes count the root process's handler entries exactly" "$why"
fi
kill -TERM "$XPID"
wait "$EPID"
check "exporter as uid 65534: SIGTERM ends it with status 0" test $? -eq 0

# Every system call the exporter made (after setpriv's execve of it) is one the unit allows.
filter=$(sed -n 's/^SystemCallFilter=//p' "$UNIT")
if ! command -v systemd-analyze >/dev/null; then
	skip "the unit's SystemCallFilter" "needs systemd-analyze"
elif why=$(python3 - "$filter" "$TMP/strace" "$RSEQDBG" <<'PY'
import re, subprocess, sys
out = subprocess.run(['systemd-analyze', 'syscall-filter'], capture_output=True, text=True).stdout
groups, cur = {}, None
for l in out.splitlines():
    if l.startswith('@'):
        cur = l.strip()
        groups[cur] = []
    elif cur and l.strip() and not l.strip().startswith('#'):
        groups[cur].append(l.strip())
def expand(n, seen=()):
    if not n.startswith('@'):
        return {n}
    return set().union(*[expand(m, seen + (n,)) for m in groups.get(n, []) if m not in seen])
# One SystemCallFilter= line after another, as systemd reads them: "~" takes away.
allowed = set()
for line in sys.argv[1].splitlines():
    if line.startswith('~'):
        allowed -= set().union(*[expand(w) for w in line[1:].split()])
    else:
        allowed |= set().union(*[expand(w) for w in line.split()])
used, started = set(), False
for l in open(sys.argv[2]):
    m = re.match(r'^\d+ +([a-z0-9_]+)\((.*)', l)
    if not m:
        continue
    if m.group(1) == 'execve' and m.group(2).startswith('"%s"' % sys.argv[3]):
        started = True
    elif started:
        used.add(m.group(1))
if not started or not used or used - allowed:
    print('outside the filter: %s' % sorted(used - allowed) if started else 'no execve seen')
PY
) && [ -z "$why" ]; then
	pass "exporter: every system call it made is in the unit's SystemCallFilter ($(paste -sd' ' <<<"$filter"))"
else
	fail "exporter: every system call it made is in the unit's SystemCallFilter" "$why"
fi

# A program in a directory the service does not see (ProtectHome=, PrivateTmp=): the exporter
# in a mount namespace where that directory is an empty tmpfs still counts its aborts under
# their function names, reading the program through the process, and its abort handler
# entries, its uprobes placed through the process's root. Each entry here is a kernel abort
# (the workload branches to no handler itself); the uprobes come once the exporter has seen
# the program's first events, so the first aborts have none.
W="$BUILD/tests/workloads/rseq_workload"
COMM=rwl_priv_$$
COMM=${COMM:0:15}
mkdir "$TMP/hidden"
cp "$W" "$TMP/hidden/$COMM"
unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs "$1" && shift && exec "$@"' sh \
	"$TMP/hidden" setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps="-all,$caps" --ambient-caps="-all,$caps" --bounding-set="-all,$caps" \
	"$RSEQDBG" exporter --listen 127.0.0.1:0 --comm "$COMM" 2>"$TMP/hid.err" &
HPID=$!
PIDS+=("$HPID")
if ! wait_for -q -p "$HPID" 60 "the exporter's ready line" file_has 'exporter: ready' "$TMP/hid.err"; then
	fail "exporter as uid 65534, the program's directory hidden: ready" "$(cat "$TMP/hid.err")"
else
	HPORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$TMP/hid.err")
	"$TMP/hidden/$COMM" --signal-us 200 --seconds 1 --out "$TMP/hid.txt" 2>/dev/null
	if why=$(python3 - "$HPORT" "$TMP/hid.txt" "$COMM" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen('http://127.0.0.1:%s/metrics' % sys.argv[1], timeout=30).read().decode()
theirs = {}
for l in open(sys.argv[2]):
    k, _, v = l.strip().partition('=')
    if k.startswith('section.') and k.endswith('.aborts') and int(v):
        theirs[k.split('.')[1]] = theirs.get(k.split('.')[1], 0) + int(v)
mine, skips, entries = {}, 0, 0
for m in re.finditer(r'^(\w+)\{(.*)\} (\S+)$', text, re.M):
    l = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
    if m.group(1) == 'rseq_aborts_total' and l['comm'] == sys.argv[3]:
        mine[l['function']] = mine.get(l['function'], 0) + int(float(m.group(3)))
    if m.group(1) == 'rseq_abort_handler_entries_total' and l['comm'] == sys.argv[3]:
        entries += int(float(m.group(3)))
    if m.group(1) == 'rseqdbg_program_skips_total' and l['program'] == 'abort_backup':
        skips = int(float(m.group(3)))
# An abort is missed only when the kernel skipped both programs for it, which it counts.
short = sum(theirs.values()) - sum(mine.values())
if not theirs or set(mine) - set(theirs) or any(mine.get(k, 0) > v for k, v in theirs.items()) or short > skips:
    print('aborts per function %s, the workload counted %s' % (mine, theirs))
elif not 0 < entries <= sum(theirs.values()):
    print('%d abort handler entries, the workload counted %d aborts' % (entries, sum(theirs.values())))
PY
) && [ -z "$why" ]; then
		pass "exporter as uid 65534, the program's directory hidden: its aborts per function exact, its handler entries counted"
	else
		fail "exporter as uid 65534, the program's directory hidden: its aborts per function exact, its handler entries counted" "$why"
	fi
	kill -TERM "$HPID"
	wait "$HPID"
fi

none_left() { left=$(left_behind "$first_id"); [ -z "$left" ]; }
wait_for -q -i 0.5 20 "our BPF programs to be unloaded" none_left
check "exporter: no BPF program left loaded${left:+ ($left)}" test -z "$left"
finish
