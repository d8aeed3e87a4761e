#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg scan --core and audit --core on cores of core_crash, whose threads wait inside one
# critical section, fault inside another and sleep outside any: a core the kernel writes
# (core_pattern as the machine has it, a file when it pipes to a handler), the same core
# compressed with zstd as systemd-coredump stores it, a core written with coredump_filter 0
# (the rseq state is then named as missing), and gdb's gcore of the process stopped. Every
# thread's state must be what the workload recorded before the fault: tids, CPUs, rseq areas
# (checked by the workload against the kernel's registration), armed descriptors, sections,
# the faulting instruction and the signal.
source "$(dirname "$0")/../lib.sh"

CC="$BUILD/tests/workloads/core_crash"
CHECK=$TOP/tests/tools/check_schema.py
PY=/usr/bin/python3

if [ ! -x "$RSEQDBG" ] || [ ! -x "$CC" ]; then
	fail "scan --core: built" "$RSEQDBG or $CC missing (make tests)"
	finish
	exit
fi
"$PY" -c 'import jsonschema' 2>/dev/null || PY=

# schema_ok WHAT SCHEMA FILE: the document matches its schema (a format no kernel changes:
# not in the quick runs of the kernel matrix)
schema_ok() {
	if quick; then
		return
	elif [ -z "$PY" ]; then
		skip "$1: JSON schema" "python3-jsonschema not installed"
	elif out=$("$PY" "$CHECK" "$TOP/schemas" "$2" "$3" 2>&1); then
		pass "$1: JSON schema ($out)"
	else
		fail "$1: JSON schema" "$(head -c 400 <<<"$out" | tr '\n' '|')"
	fi
}

# one_line_error WHAT PATTERN CMD...: exit 2, one line on stderr matching PATTERN, no stdout
one_line_error() {
	local what=$1 pat=$2 rc
	shift 2
	"$@" >"$TMP/err.out" 2>"$TMP/err.err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err.err")" -eq 1 ] &&
		grep -q -- "$pat" "$TMP/err.err" && [ ! -s "$TMP/err.out" ]; then
		pass "$what: exit 2, one line"
	else
		fail "$what: exit 2, one line" "rc $rc: $(head -c 300 "$TMP/err.err")"
	fi
}

# --- the kernel's core -----------------------------------------------------------------------
# The machine's core_pattern when it names a file (written in the working directory, or at an
# absolute path), else, as root, a file of ours until the script ends.
pattern=$(cat /proc/sys/kernel/core_pattern)
restore_pattern=
case $pattern in
'|'* | '')
	if have_root; then
		restore_pattern=$pattern
		trap 'printf "%s\n" "$restore_pattern" >/proc/sys/kernel/core_pattern; rm -rf "$TMP"' EXIT
		mkdir -p "$TMP/kcore"
		echo "$TMP/kcore/core.%p" >/proc/sys/kernel/core_pattern
	fi
	;;
esac
pattern=$(cat /proc/sys/kernel/core_pattern)

# crash NAME [FILTER]: run core_crash --mode fault in $TMP/NAME with the core size unlimited
# (and coredump_filter FILTER); sets core to the core file it left, empty when none
crash() {
	local dir=$TMP/$1 filter=${2:-} pid f
	mkdir -p "$dir"
	core=
	(
		cd "$dir" || exit 2
		ulimit -c unlimited
		[ -z "$filter" ] || echo "$filter" >/proc/self/coredump_filter
		exec "$CC" --mode fault --out "$dir/rec.txt"
	) >"$dir/out" 2>&1 &
	pid=$!
	# bash's own line about the signal is not the test's
	{ wait "$pid"; } 2>/dev/null
	echo "$?" >"$dir/rc"
	case $pattern in
	/*) f=${pattern//%p/$pid} ;;
	*) f=$dir/${pattern//%p/$pid} ;;
	esac
	for c in "$f" "$f.$pid" "$dir/core" "$dir/core.$pid"; do
		if [ -f "$c" ]; then
			core=$c
			return
		fi
	done
}

if [ "${pattern#|}" != "$pattern" ]; then
	fail "kernel core" "core_pattern pipes to '$pattern' and only root may change it"
	finish
	exit
fi
crash kc
if [ -z "$core" ]; then
	fail "kernel core: written" "exit $(cat "$TMP/kc/rc"), core_pattern '$pattern': $(head -c 200 "$TMP/kc/out")"
	finish
	exit
fi
check "kernel core: core_crash died of SIGSEGV (exit 139)" test "$(cat "$TMP/kc/rc")" = 139
kcore=$core

# state_ok DOC RECORD KIND: the threads and modules of the scan's document are what the
# workload recorded; KIND is "fault" (a kernel core: the fault thread at its faulting
# instruction, the signal its SIGSEGV) or "stop" (gcore: it waits inside its section). A
# thread that gcore's stop caught just after the kernel aborted its section (preempted as gdb
# attached: at its abort handler, rseq_cs cleared, inside nothing) is that state truly
# reported, and is printed as "aborted ROLE" on stdout.
state_ok() {
	python3 - "$1" "$2" "$3" "$(readlink -f "$CC")" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
kind, exe = sys.argv[3], sys.argv[4]
lines = open(sys.argv[2]).read().split('\n')
head = dict(kv.split('=') for kv in lines[0].split())
rec = {}
for l in lines[1:]:
    if l.startswith('thread '):
        f = dict(kv.split('=') for kv in l.split()[1:])
        rec[f['role']] = {k: (v if k == 'role' else int(v, 0)) for k, v in f.items()}
def die(msg):
    sys.exit(msg)
threads = {t['tid']: t for t in doc['threads']}
if sorted(threads) != sorted(r['tid'] for r in rec.values()):
    die('threads %s, recorded %s' % (sorted(threads), sorted(r['tid'] for r in rec.values())))
for role, r in rec.items():
    t = threads[r['tid']]
    want = {'addr': r['area'], 'size': int(head['rseq_len']), 'signature': int(head['sig'], 0),
            'flags': 0}
    if t['rseq'] != want:
        die('%s: rseq %s, recorded %s' % (role, t['rseq'], want))
    if (kind == 'stop' and role in ('fault', 'wait') and t['ip'] == r['abort'] and
            t['rseq_cs'] == 0 and t['inside'] is None and t['cpu_id'] == r['cpu']):
        print('aborted', role)
        continue
    if t['cpu_id'] != r['cpu'] or t['rseq_cs'] != r['cs']:
        die('%s: cpu_id %s rseq_cs %s, recorded cpu %d cs %#x' % (role, t['cpu_id'],
            t['rseq_cs'], r['cpu'], r['cs']))
    if t.get('not_in_core'):
        die('%s: not in the core: %s' % (role, t['not_in_core']))
    i = t['inside']
    if role in ('sleep', 'main'):
        if i is not None:
            die('%s: inside %s' % (role, i))
        continue
    if i is None:
        die('%s: not inside a section, ip %#x' % (role, t['ip']))
    if (i['start_ip'], i['post_commit_ip'], i['abort_ip']) != (r['start'], r['post'], r['abort']):
        die('%s: inside %s' % (role, i))
    fn = 'fault_op' if role == 'fault' else 'wait_op'
    if i['at']['function'] != fn or i['at']['module'] != exe or i['start']['module'] != exe:
        die('%s: at %s' % (role, i['at']))
    if not r['start'] <= t['ip'] < r['post']:
        die('%s: ip %#x outside [%#x, %#x)' % (role, t['ip'], r['start'], r['post']))
    if kind == 'fault' and role == 'fault' and t['ip'] != r['insn']:
        die('fault: ip %#x, the faulting store is at %#x' % (t['ip'], r['insn']))
s = doc['signal']
if kind == 'fault':
    want = {'tid': rec['fault']['tid'], 'signo': 11, 'name': 'SIGSEGV', 'addr': 0, 'fault': True}
    if s is None or any(s[k] != v for k, v in want.items()):
        die('signal %s, want %s' % (s, want))
    if doc['threads'][0]['tid'] != rec['fault']['tid']:
        die('the faulting thread is not listed first')
elif s is not None and s['fault']:
    die('gcore: signal %s' % s)
mods = [m for m in doc['modules'] if m['path'] == exe]
if len(mods) != 1 or mods[0]['build_id_check'] != 'match':
    die('module %s: %s' % (exe, mods))
got = {(x['start_ip'], x['post_commit_ip'], x['abort_ip']) for x in mods[0]['sections']}
for role in ('fault', 'wait'):
    r = rec[role]
    if (r['start'], r['post'], r['abort']) not in got:
        die('%s: section not among the module\'s %s' % (role, got))
if doc['modules_not_scanned']:
    die('not scanned: %s' % doc['modules_not_scanned'])
EOF
}

"$RSEQDBG" scan --json --core "$core" >"$TMP/kc.json" 2>"$TMP/kc.err"
check "kernel core: scan --core exits 0, nothing on stderr" \
	bash -c "[ $? -eq 0 ] && [ ! -s '$TMP/kc.err' ]"
if why=$(state_ok "$TMP/kc.json" "$TMP/kc/rec.txt" fault 2>&1); then
	pass "kernel core: every thread's rseq state as the workload recorded it"
else
	fail "kernel core: every thread's rseq state as the workload recorded it" "$why"
fi
schema_ok "kernel core" scan.json "$TMP/kc.json"
"$RSEQDBG" scan --core "$core" >"$TMP/kc.txt" 2>&1
fault_tid=$(sed -n 's/.*role=fault tid=\([0-9]*\) .*/\1/p' "$TMP/kc/rec.txt")
check "kernel core text: the signal, its thread and the fault inside the section" bash -c "
	grep -q '^  signal SIGSEGV (code [0-9]*), address 0 in tid $fault_tid, raised by its' '$TMP/kc.txt' &&
	grep -q 'the fault is inside the section: it never committed' '$TMP/kc.txt' &&
	grep -q 'armed: a preemption here would have aborted it, to 0x' '$TMP/kc.txt'"

# --- compressed as systemd-coredump stores it --------------------------------------------------
if command -v zstd >/dev/null; then
	zstd -q "$core" -o "$TMP/core.zst"
	"$RSEQDBG" scan --json --core "$TMP/core.zst" >"$TMP/zst.json" 2>"$TMP/zst.err"
	check "zstd core: the same threads and modules as the core it compresses" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(b["compression"] != "zstd" or a["compression"] is not None or
         {k: v for k, v in a.items() if k not in ("core", "compression")} !=
         {k: v for k, v in b.items() if k not in ("core", "compression")})' \
		"$TMP/kc.json" "$TMP/zst.json"
else
	fail "zstd core" "zstd not installed (scripts/deps.sh installs it)"
fi
if ! quick; then
	printf '\3757zXZ\0junk' >"$TMP/core.xz"
	one_line_error "an xz core" "core.xz: a core compressed with xz (decompress it with" \
		"$RSEQDBG" scan --core "$TMP/core.xz"
fi

# --- audit of the modules a core maps ----------------------------------------------------------
"$RSEQDBG" audit --json --core "$core" >"$TMP/audit.json" 2>"$TMP/audit.err"
arc=$?
"$RSEQDBG" audit --json "$CC" >"$TMP/audit-exe.json" 2>/dev/null
check "audit --core: the program's findings are its file's, none about the core" python3 -c '
import json, os, sys
a, f = (json.load(open(p)) for p in sys.argv[1:3])
exe, core, rc = os.path.realpath(sys.argv[3]), sys.argv[4], int(sys.argv[5])
m = [u for u in a["modules"] if u.get("path") == exe]
key = lambda x, bias: sorted((g["check"], g["addr"] - bias) for g in x["findings"])
ok = (rc in (0, 1) and a["core"] == core and len(m) == 1 and
      key(m[0], m[0]["bias"]) == key(f["files"][0], 0) and
      not any(u.get("path") == core for u in a["modules"]) and
      not any(g["check"] == "RSEQ050" for u in a["modules"] for g in u.get("findings", [])))
sys.exit(not ok)' "$TMP/audit.json" "$TMP/audit-exe.json" "$CC" "$core" "$arc"
schema_ok "audit --core" audit.json "$TMP/audit.json"

# --- what the core left out --------------------------------------------------------------------
crash kf 0
if [ -n "$core" ]; then
	"$RSEQDBG" scan --json --core "$core" >"$TMP/kf.json" 2>/dev/null
	check "coredump_filter 0: each thread's rseq state named as not in the core" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not d["threads"] or any(t["rseq"] is not None or t["not_in_core"] != ["__rseq_offset"]
         for t in d["threads"]))' "$TMP/kf.json"
	"$RSEQDBG" scan --core "$core" >"$TMP/kf.txt" 2>&1
	check "coredump_filter 0: the text says why" \
		grep -q "rseq area unknown: glibc's __rseq_offset is not in the core" "$TMP/kf.txt"
	schema_ok "coredump_filter 0" scan.json "$TMP/kf.json"
else
	fail "coredump_filter 0: a core" "none written: $(head -c 200 "$TMP/kf/out")"
fi

# --- files read from elsewhere ----------------------------------------------------------------
if ! quick; then
	"$RSEQDBG" scan --json --core "$kcore" --sysroot "$TMP/nowhere" >"$TMP/sr.json" 2>"$TMP/sr.err"
	check "--sysroot without the files: each module named as not scanned, and why" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(d["modules"] or not d["modules_not_scanned"] or
         any("nowhere" not in m["error"] for m in d["modules_not_scanned"]))' "$TMP/sr.json"
	cp "$CC" "$TMP/moved"
	"$RSEQDBG" scan --json --core "$kcore" --exe "$TMP/moved" >"$TMP/exe.json" 2>/dev/null
	check "--exe: the program read from where it was moved" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit([m["file"] for m in d["modules"]] != [sys.argv[2]])' "$TMP/exe.json" "$TMP/moved"
	"$RSEQDBG" scan --json --core "$kcore" --exe "$BUILD/tests/workloads/spin_cs" \
		>"$TMP/other.json" 2>"$TMP/other.err"
	check "--exe of another build: refused by build ID, a warning says so" bash -c "
		grep -q 'is another build: build ID' '$TMP/other.err' && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(d[\"modules\"] or \"another build\" not in d[\"modules_not_scanned\"][0][\"error\"])' '$TMP/other.json'"
	head -c "$(($(stat -c %s "$kcore") / 2))" "$kcore" >"$TMP/half"
	"$RSEQDBG" scan --json --core "$TMP/half" >"$TMP/half.json" 2>"$TMP/half.err"
	check "a truncated core: its threads, and a warning that it is cut short" bash -c "
		[ $? -eq 0 ] && grep -q 'half: truncated: the memory past its end is not in the core' \
			'$TMP/half.err' && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
tids = [int(l.split()[2].split(\"=\")[1]) for l in open(sys.argv[2]) if l.startswith(\"thread \")]
sys.exit(sorted(t[\"tid\"] for t in d[\"threads\"]) != sorted(tids))' '$TMP/half.json' '$TMP/kc/rec.txt'"
	one_line_error "scan of a core as a FILE" \
		"a core file: 'rseqdbg scan --core FILE' shows" "$RSEQDBG" scan "$kcore"
	one_line_error "audit of a core as a FILE" \
		"a core file: 'rseqdbg audit --core FILE' audits" "$RSEQDBG" audit "$kcore"
	one_line_error "scan --core of a program" "not a core file (an ELF file of type DYN)" \
		"$RSEQDBG" scan --core "$CC"
	one_line_error "scan --core of a missing file" "No such file or directory" \
		"$RSEQDBG" scan --core "$TMP/none"
	one_line_error "--exe without --core" "--exe goes with --core" \
		"$RSEQDBG" scan --exe "$CC" "$CC"
fi

# --- gcore of the process stopped --------------------------------------------------------------
if ! command -v gcore >/dev/null; then
	skip "gcore of a stopped process" "gdb's gcore not installed here"
elif ! have_ptrace; then
	skip "gcore of a stopped process" "ptrace not permitted (need root or ptrace_scope <= 1)"
else
	# A thread preempted as gdb attaches can be stopped just after the kernel aborted its
	# section: that state is checked as such, and the core taken again (at most 10 times)
	# until both wait inside their sections, which the record describes.
	for attempt in $(seq 10); do
		rm -rf "$TMP/gc"
		mkdir -p "$TMP/gc"
		"$CC" --mode stop --out "$TMP/gc/rec.txt" >"$TMP/gc/out" 2>&1 &
		gpid=$!
		if ! wait_grep '^ready$' "$TMP/gc/out"; then
			kill -KILL "$gpid" 2>/dev/null
			wait "$gpid" 2>/dev/null
			fail "gcore: the workload is ready" "$(head -c 200 "$TMP/gc/out")"
			break
		fi
		gcore -o "$TMP/gc/core" "$gpid" >"$TMP/gc/gcore.out" 2>&1
		kill -KILL "$gpid"
		wait "$gpid" 2>/dev/null
		"$RSEQDBG" scan --json --core "$TMP/gc/core.$gpid" >"$TMP/gc.json" 2>"$TMP/gc.err"
		if ! why=$(state_ok "$TMP/gc.json" "$TMP/gc/rec.txt" stop 2>&1); then
			fail "gcore: every thread's rseq state as the workload recorded it" \
				"$why $(head -c 200 "$TMP/gc.err")"
			break
		fi
		if [ -z "$why" ]; then
			pass "gcore: every thread's rseq state as the workload recorded it (core $attempt)"
			schema_ok "gcore" scan.json "$TMP/gc.json"
			break
		fi
		echo "gcore $attempt: $why (stopped just after an abort, reported as such): again"
		[ "$attempt" -lt 10 ] ||
			fail "gcore: both threads inside their sections in one of 10 cores" "$why"
	done
fi
finish
