#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg stat against the workload's own counters: abort counts per critical section must
# be equal exactly, causes must match what the workload provokes, migrations at least the
# affinity changes it made, and every section must be named by function and by a source
# line that holds one of its instructions (read independently with nm/objdump/addr2line).
source "$(dirname "$0")/../lib.sh"

W="$BUILD/tests/workloads/rseq_workload"
# Non-root: one line naming what is needed, exit 2.
if command -v setpriv >/dev/null && have_root; then
	err=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$RSEQDBG" stat -- true 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -q 'CAP_BPF and CAP_PERFMON' <<<"$err"; then
		pass "non-root: one line naming root or CAP_BPF and CAP_PERFMON, exit 2"
	else
		fail "non-root: one line naming root or CAP_BPF and CAP_PERFMON, exit 2" "rc=$rc: $err"
	fi
else
	skip "non-root message" "needs root and setpriv to drop privileges"
fi

if ! have_bpf; then
	skip "stat" "needs root and kernel BTF"
	finish
	exit
fi
if [ ! -x "$W" ]; then
	fail "workload built" "$W missing"
	finish
	exit
fi

first_id=$(max_prog_id)

# The source lines of the instructions of a section, from the symbols the workload exports.
section_lines() { # $1 = function name
	local tag start end
	case "$1" in
	wl_counter_add) tag=counter ;; wl_tcmalloc_push) tag=tcmalloc ;; wl_condexit) tag=condexit ;;
	*) return 1 ;;
	esac
	start=$(nm "$W" | awk -v s="rseq_start_$tag" '$3 == s { print $1 }')
	end=$(nm "$W" | awk -v s="rseq_post_commit_$tag" '$3 == s { print $1 }')
	objdump -d --start-address=0x$start --stop-address=0x$end "$W" |
		awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }' |
		addr2line -e "$W" | sed 's|.*/||' | sort -u
}

cat >"$TMP/check.py" <<'PY'
import json, sys
# argv: stat.json workload-report expect(signal|preempt|migrate) lines-dir
d = json.load(open(sys.argv[1]))
rep = dict(l.strip().split('=', 1) for l in open(sys.argv[2]) if '=' in l)
expect = sys.argv[3]
linesdir = sys.argv[4]
errs = []
mine = {}
for s in d['sections']:
    f = s['start']['function']
    mine[f] = mine.get(f, 0) + s['aborts']
theirs = {k.split('.')[1]: int(v) for k, v in rep.items()
          if k.startswith('section.') and k.endswith('.aborts') and int(v) > 0}
if mine != theirs:
    errs.append('aborts per section %s, workload counted %s' % (mine, theirs))
if d['aborts'] != int(rep['aborts']):
    errs.append('aborts %d, workload counted %s' % (d['aborts'], rep['aborts']))
c = d['causes']
total = d['aborts']
if sum(c.values()) != total:
    errs.append('causes %s do not add up to %d aborts' % (c, total))
# A signal aborts at most one section; an abort without a signal needs its thread to have
# been switched out (each switch aborts at most one section; the workload uses no
# membarrier). Under CPU load genuine preemptions take a share, so bounds, not a ratio.
if c['signal'] > int(rep['signals']):
    errs.append('%d signal causes, %s signals delivered' % (c['signal'], rep['signals']))
if 'switches' in rep and total - c['signal'] > int(rep['switches']):
    errs.append('%d aborts without a signal cause, %s context switches: causes %s'
                % (total - c['signal'], rep['switches'], c))
if expect == 'preempt' and c['signal'] != 0:
    errs.append('%d aborts blamed on signals, none were sent' % c['signal'])
if expect == 'migrate':
    if d['migrations'] < int(rep['affinity_changes']):
        errs.append('%d migrations < %s affinity changes' % (d['migrations'], rep['affinity_changes']))
    if int(rep['affinity_changes']) == 0:
        errs.append('the workload made no affinity changes')
if d['cpu_id_updates'] <= 0:
    errs.append('no cpu_id updates')
for s in d['sections']:
    f = s['start']['function']
    try:
        lines = open('%s/%s' % (linesdir, f)).read().split()
    except OSError:
        errs.append('section %r is not one of the workload\'s' % f)
        continue
    where = '%s:%s' % ((s['start']['file'] or '').rsplit('/', 1)[-1], s['start']['line'])
    if where not in lines:
        errs.append('%s named at %s, its instructions are at %s' % (f, where, ' '.join(lines)))
print('; '.join(errs))
sys.exit(1 if errs else 0)
PY
mkdir -p "$TMP/lines"
for f in wl_counter_add wl_tcmalloc_push wl_condexit; do section_lines $f >"$TMP/lines/$f"; done

# Runs a command and appends to its report the context switches of all its threads.
cat >"$TMP/switches.py" <<'PY'
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, st, ru = os.wait4(pid, 0)
with open(sys.argv[1], 'a') as f:
    f.write('switches=%d\n' % (ru.ru_nvcsw + ru.ru_nivcsw))
sys.exit(os.waitstatus_to_exitcode(st))
PY

run_case() { # name expect workload-args...
	local name=$1 expect=$2 rc wrc why
	shift 2
	# The signal cases run under a wrapper that records the context switches; the others
	# run the workload itself, the tracer's direct child, whose mappings it reads at once
	# (a grandchild's are read when its first section is seen, too late for a tracer
	# starved of CPU by an oversubscribed workload).
	local wrap=()
	[ "$expect" = signal ] && wrap=(python3 "$TMP/switches.py" "$TMP/$name.txt")
	"$RSEQDBG" stat --json -o "$TMP/$name.json" -- "${wrap[@]}" "$W" "$@" --out "$TMP/$name.txt"
	rc=$?
	wrc=1
	grep -q '^result=ok' "$TMP/$name.txt" 2>/dev/null && wrc=0
	if [ $rc -ne $wrc ]; then
		fail "stat $name: exits with the command's status" "rseqdbg $rc, workload $wrc"
		return
	fi
	pass "stat $name: exits with the command's status"
	if why=$(python3 "$TMP/check.py" "$TMP/$name.json" "$TMP/$name.txt" "$expect" "$TMP/lines"); then
		pass "stat $name: aborts per section exact, causes, sections named by source line"
	else
		fail "stat $name: aborts per section exact, causes, sections named by source line" "$why"
	fi
}

run_case preemption preempt --oversubscribe --seconds 2
run_case signals signal --signal-us 100 --seconds 2 --mode all --threads 2
run_case migrations migrate --affinity --seconds 2
run_case all-sections preempt --oversubscribe --mode all --seconds 2

# The attribution used on kernels without rseq_event_mask (6.19 style), run on this one.
RSEQDBG_TRACE_MODE=no-event-mask run_case no-mask-signals signal --signal-us 100 --seconds 2 --mode all
RSEQDBG_TRACE_MODE=no-event-mask run_case no-mask-preemption preempt --oversubscribe --seconds 2
check "stat: RSEQDBG_TRACE_MODE=no-event-mask is reported as the mode" \
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["mode"] == "no-event-mask"' \
	"$TMP/no-mask-signals.json"

# Children of the command are followed: two workloads run one after the other by a shell.
"$RSEQDBG" stat --json -o "$TMP/kids.json" -- sh -c "'$W' --signal-us 200 --seconds 1 --mode all \
	--out '$TMP/kid1.txt' && '$W' --oversubscribe --seconds 1 --out '$TMP/kid2.txt'"
check "stat: children of the command followed, each one's aborts exact" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = []
for f in sys.argv[2:]:
    rep = dict(l.strip().split("=", 1) for l in open(f) if "=" in l)
    want.append(sorted((k.split(".")[1], int(v)) for k, v in rep.items()
                       if k.startswith("section.") and k.endswith(".aborts") and int(v) > 0))
got = {}
for s in d["sections"]:
    got.setdefault(s["pid"], []).append((s["start"]["function"], s["aborts"]))
got = sorted(sorted(v) for v in got.values())
assert got == sorted(want), (got, want)
' "$TMP/kids.json" "$TMP/kid1.txt" "$TMP/kid2.txt"

# The plain summary names the sections and the causes.
out=$("$RSEQDBG" stat -- "$W" --signal-us 200 --seconds 1 --out "$TMP/plain.txt" 2>&1 >/dev/null)
if grep -q 'wl_counter_add' <<<"$out" && grep -q 'rseq_workload.S:' <<<"$out" && grep -q '^  signal' <<<"$out"; then
	pass "stat: plain summary names sections, source lines and causes"
else
	fail "stat: plain summary names sections, source lines and causes" "$out"
fi

"$RSEQDBG" stat -o /dev/null -- sh -c 'exit 3'
check "stat: exit status of the command (3)" test $? -eq 3
"$RSEQDBG" stat -o /dev/null -- sh -c 'kill -TERM $$'
check "stat: a command killed by SIGTERM gives 143" test $? -eq 143
err=$("$RSEQDBG" stat -- /nonexistent/cmd 2>&1 >/dev/null)
rc=$?
if [ $rc -eq 127 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -q '/nonexistent/cmd' <<<"$err"; then
	pass "stat: a command that cannot run: one line, exit 127"
else
	fail "stat: a command that cannot run: one line, exit 127" "rc=$rc: $err"
fi
err=$("$RSEQDBG" stat 2>&1 >/dev/null)
check "stat: no command is an error (exit 2)" test $? -eq 2

# Each process is named after the program it runs, not after rseqdbg that forked it.
check "stat --json: processes[].comm is the command's name" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted({p["comm"] for p in d["processes"]})
assert got == ["rseq_workload"], got
' "$TMP/migrations.json"

# JSON mode: an error object goes to the summary's stream (stderr, or --output), stdout
# stays the command's.
"$RSEQDBG" stat --json -- /nonexistent/cmd >"$TMP/err.stdout" 2>"$TMP/err.stderr"
check "stat --json: an error is a JSON object on stderr, nothing on stdout" python3 -c '
import json, sys
assert open(sys.argv[1]).read() == "", "stdout not empty"
docs = [l for l in open(sys.argv[2]) if l.startswith("{")]
assert len(docs) == 1 and "/nonexistent/cmd" in json.loads(docs[0])["error"], docs
' "$TMP/err.stdout" "$TMP/err.stderr"
"$RSEQDBG" stat --json -o "$TMP/err.json" -- /nonexistent/cmd >"$TMP/err.stdout" 2>/dev/null
check "stat --json -o FILE: the error object is in FILE" python3 -c '
import json, sys
assert open(sys.argv[1]).read() == "", "stdout not empty"
assert "/nonexistent/cmd" in json.load(open(sys.argv[2]))["error"]
' "$TMP/err.stdout" "$TMP/err.json"

none_left() { left=$(left_behind "$first_id"); [ -z "$left" ]; }
wait_for -q -i 0.5 20 "our BPF programs to be unloaded" none_left
if [ -z "$left" ]; then pass "stat: no BPF program left loaded"; else fail "stat: no BPF program left loaded" "$left"; fi
finish
