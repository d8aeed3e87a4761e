#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg trace against the workload's own counters: abort events and summary counts per
# section equal what the workload counted, every abort names its section by function and by
# a source line holding one of its instructions, -p keeps a second workload out, a tiny ring
# buffer reports its drops while the in-kernel counts stay exact, Ctrl-C ends cleanly, -p ends
# with its process, -o writes what stdout would hold, a command writing to the same pipe never
# splits a record line, the summary names abort handlers, and nothing stays attached.
source "$(dirname "$0")/../lib.sh"

W="$BUILD/tests/workloads/rseq_workload"
out=$("$RSEQDBG" trace --check)
rc=$?
if [ -r /sys/kernel/btf/vmlinux ]; then
	if [ $rc -eq 0 ] && grep -qE '^mode: (event-mask|no-event-mask): ' <<<"$out" &&
		grep -qE '^(yes|no) +rseq_event_mask' <<<"$out" && grep -qE '^yes +programs_load' <<<"$out"; then
		pass "trace --check: the programs load, features and the mode in use"
	else
		fail "trace --check: the programs load, features and the mode in use" "rc=$rc: $out"
	fi
	out=$("$RSEQDBG" trace --check --json)
	check "trace --check --json: one object with the mode" \
		python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["loaded"] and d["supported"] and d["mode"] and "rseq_event_mask" in d["features"]' "$out"
	# The mode follows the kernel's task_struct layout, read independently from its BTF.
	if bpftool btf dump file /sys/kernel/btf/vmlinux format c 2>/dev/null | grep -qE '[[:space:]]rseq_event_mask;'; then
		want=event-mask
	else
		want=no-event-mask
	fi
	check "trace --check: mode $want on this kernel" grep -q "^mode: $want: " <<<"$(
		"$RSEQDBG" trace --check)"
else
	check "trace --check without BTF: says BTF is missing, exit 1" \
		bash -c "[ $rc -eq 1 ] && grep -q 'CONFIG_DEBUG_INFO_BTF' <<<'$out'"
fi

# A kernel that refuses the programs (here: a seccomp filter fails every BPF_PROG_LOAD, as a
# verifier that rejects them would): --check names no mode, says why, exits 1; tracing exits 2.
NPL=$BUILD/tests/tools/no_prog_load
if [ -r /sys/kernel/btf/vmlinux ] && [ -x "$NPL" ] && have_root; then
	out=$("$NPL" "$RSEQDBG" trace --check)
	rc=$?
	if [ $rc -eq 1 ] && grep -qE '^no +programs_load' <<<"$out" &&
		grep -qx 'mode: none: loading the BPF programs failed: Invalid argument (RSEQDBG_DEBUG=1 shows the verifier log)' <<<"$out"; then
		pass "trace --check, programs refused: exit 1, mode none with the reason"
	else
		fail "trace --check, programs refused: exit 1, mode none with the reason" "rc=$rc: $(tail -2 <<<"$out")"
	fi
	out=$("$NPL" "$RSEQDBG" trace --check --json)
	rc=$?
	check "trace --check --json, programs refused: exit 1, not loaded, the reason" \
		python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert sys.argv[2] == "1"
assert d["loaded"] is False and d["supported"] is False and d["mode"] is None
assert d["missing"].startswith("loading the BPF programs failed: ")' "$out" "$rc"
	err=$("$NPL" "$RSEQDBG" trace -- true 2>&1 >/dev/null)
	rc=$?
	check "trace, programs refused: exit 2, one line with the reason" \
		bash -c '[ "$1" -eq 2 ] && [ "$(wc -l <<<"$2")" -eq 1 ] &&
			grep -q "^rseqdbg: trace: loading the BPF programs failed: " <<<"$2"' sh "$rc" "$err"
else
	skip "trace --check, programs refused" "needs root, kernel BTF and $NPL (make tests)"
fi

if command -v setpriv >/dev/null && have_root; then
	err=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$RSEQDBG" trace -- true 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -q 'CAP_BPF and CAP_PERFMON' <<<"$err"; then
		pass "trace non-root: one line naming root or CAP_BPF and CAP_PERFMON, exit 2"
	else
		fail "trace non-root: one line naming root or CAP_BPF and CAP_PERFMON, exit 2" "rc=$rc: $err"
	fi
else
	skip "trace non-root message" "needs root and setpriv to drop privileges"
fi

quick || for bad in "--ringbuf-size 1000" "--events nothing" "--interval 1" "-p 0" "--comm 0123456789abcdefg" \
	"--cgroup /nonexistent"; do
	# shellcheck disable=SC2086
	err=$("$RSEQDBG" trace $bad --duration 1 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ]; then
		pass "trace $bad: one error line, exit 2"
	else
		fail "trace $bad: one error line, exit 2" "rc=$rc: $err"
	fi
done

if ! have_bpf; then
	skip "trace" "needs root and kernel BTF"
	finish
	exit
fi
if [ ! -x "$W" ]; then
	fail "workload built" "$W missing"
	finish
	exit
fi
first_id=$(max_prog_id)

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
mkdir -p "$TMP/lines"
for f in wl_counter_add wl_tcmalloc_push wl_condexit; do section_lines $f >"$TMP/lines/$f"; done

cat >"$TMP/check.py" <<'PY'
import json, sys
# argv: trace-json-lines workload-report expect linesdir events(exact|drops) [pid]
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rep = dict(l.strip().split('=', 1) for l in open(sys.argv[2]) if '=' in l)
expect, linesdir, evmode = sys.argv[3], sys.argv[4], sys.argv[5]
pid = int(sys.argv[6]) if len(sys.argv) > 6 else None
errs = []
summ = [l['summary'] for l in lines if 'summary' in l and l['summary']['final']]
if len(summ) != 1:
    print('%d final summaries' % len(summ)); sys.exit(1)
s = summ[0]
aborts = [l for l in lines if l.get('kind') == 'abort']
theirs = {k.split('.')[1]: int(v) for k, v in rep.items()
          if k.startswith('section.') and k.endswith('.aborts') and int(v) > 0}
if pid is not None:
    others = set(x['pid'] for x in s['sections'] + aborts if x['pid'] != pid)
    if others:
        errs.append('other processes traced: %s' % others)
bysum = {}
for x in s['sections']:
    f = x['start']['function']
    bysum[f] = bysum.get(f, 0) + x['aborts']
# An abort is missed only when the kernel skipped both programs for it (one already running
# on that CPU), which it counts: a shortfall within the backup's skips, said in the summary,
# is the kernel's; any other difference is ours.
short = sum(theirs.values()) - sum(bysum.values())
extra = any(bysum.get(k, 0) > v for k, v in theirs.items()) or set(bysum) - set(theirs)
if bysum != theirs and (extra or short > s.get('backup_program_skipped', 0)):
    errs.append('summary aborts per section %s, workload counted %s (backup skipped %s times)'
                % (bysum, theirs, s.get('backup_program_skipped')))
byev = {}
for a in aborts:
    f = a['section']['start']['function']
    byev[f] = byev.get(f, 0) + 1
    try:
        ok = open('%s/%s' % (linesdir, f)).read().split()
    except (OSError, TypeError):
        errs.append('abort names section %r' % f); break
    st = a['section']['start']
    where = '%s:%s' % ((st['file'] or '').rsplit('/', 1)[-1], st['line'])
    if where not in ok:
        errs.append('abort in %s named at %s; its instructions are at %s' % (f, where, ' '.join(ok))); break
    if not a['insn'] or a['insn'] == '?':
        errs.append('abort without the interrupted instruction'); break
if evmode == 'exact':
    # Aborts the kernel did not run the main program for were counted by the backup one,
    # which sends their events too: every abort is an event.
    if s['ringbuf_drops'] != 0:
        errs.append('%d events dropped' % s['ringbuf_drops'])
    elif byev != bysum:
        errs.append('abort events per section %s (%d by the backup program), summary counted %s'
                    % (byev, s['backup_aborts'], bysum))
else:
    if s['ringbuf_drops'] <= 0:
        errs.append('no drops reported from a tiny ring buffer under a flood')
    if len(aborts) > s['aborts']:
        errs.append('more events than aborts')
c, total = s['causes'], s['aborts']
if sum(c.values()) != total:
    errs.append('causes %s do not add up to %d aborts' % (c, total))
# A signal aborts at most one section; an abort without a signal needs its thread to have
# been switched out (each switch aborts at most one section; the workloads use no
# membarrier). Under CPU load genuine preemptions take a share, so bounds, not a ratio.
if c['signal'] > int(rep['signals']):
    errs.append('%d signal causes, %s signals delivered' % (c['signal'], rep['signals']))
if 'switches' in rep and total - c['signal'] > int(rep['switches']):
    errs.append('%d aborts without a signal cause, %s context switches: causes %s'
                % (total - c['signal'], rep['switches'], c))
if expect == 'preempt' and c['signal'] != 0:
    errs.append('%d aborts blamed on signals, none were sent' % c['signal'])
if expect == 'migrate' and s['migrations'] < int(rep['affinity_changes']):
    errs.append('%d migrations < %s affinity changes' % (s['migrations'], rep['affinity_changes']))
if s['cpu_id_updates'] <= 0:
    errs.append('no cpu_id updates')
for a in aborts:
    if a['cause'] != 'signal' and expect == 'signal-all':
        errs.append('abort cause %s' % a['cause']); break
# What the causes came out as against what the workload did, for the kernel matrix's table
with open(sys.argv[1] + '.causes', 'w') as f:
    f.write('aborts=%d %s workload_signals=%s switches=%s affinity_changes=%s migrations=%d\n' % (
        total, ' '.join('%s=%d' % kv for kv in sorted(c.items())), rep.get('signals', 0),
        rep.get('switches', '-'), rep.get('affinity_changes', 0), s['migrations']))
print('; '.join(errs))
sys.exit(1 if errs else 0)
PY

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

run_case() { # name expect evmode extra-trace-args -- workload-args
	local name=$1 expect=$2 evmode=$3 targs=() why rc
	shift 3
	while [ "$1" != "--" ]; do targs+=("$1"); shift; done
	shift
	# The signal cases run under a wrapper that records the context switches; the others
	# run the workload itself, the tracer's direct child, whose mappings it reads at once
	# (a grandchild's are read when its first section is seen, too late for a tracer
	# starved of CPU by an oversubscribed workload).
	local wrap=()
	[ "$expect" = signal ] && wrap=(python3 "$TMP/switches.py" "$TMP/$name.txt")
	"$RSEQDBG" trace --json "${targs[@]}" -- "${wrap[@]}" "$W" "$@" --out "$TMP/$name.txt" \
		>"$TMP/$name.json"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "trace $name" "rseqdbg exited $rc: $(tail -2 "$TMP/$name.json")"
		return
	fi
	if why=$(python3 "$TMP/check.py" "$TMP/$name.json" "$TMP/$name.txt" "$expect" "$TMP/lines" "$evmode"); then
		pass "trace $name: abort counts exact, causes, every abort named by source line"
	else
		fail "trace $name: abort counts exact, causes, every abort named by source line" "$why"
	fi
	[ -s "$TMP/$name.json.causes" ] && echo "causes: $name: $(cat "$TMP/$name.json.causes")"
}

run_case preemption preempt exact -- --oversubscribe --seconds 2
run_case signals signal exact -- --signal-us 100 --seconds 2 --mode all --threads 2
run_case migrations migrate exact --events all -- --affinity --seconds 2
run_case tiny-ringbuf none drops --ringbuf-size 4096 --events all --stack -- \
	--oversubscribe --signal-us 50 --mode all --seconds 2

# -p: a second workload running at the same time stays out.
mkfifo "$TMP/goA" "$TMP/goB"
"$W" --wait --signal-us 200 --seconds 2 --out "$TMP/A.txt" <"$TMP/goA" 2>/dev/null &
A=$!
"$W" --wait --signal-us 200 --seconds 2 --out "$TMP/B.txt" <"$TMP/goB" 2>/dev/null &
B=$!
"$RSEQDBG" trace --json -p "$A" >"$TMP/p.json" 2>"$TMP/p.err" &
T=$!
wait_for -p $T 10 "trace -p to say tracing" file_has tracing "$TMP/p.err"
exec 3>"$TMP/goA" 4>"$TMP/goB"
exec 3>&- 4>&-
wait $A $B
kill -INT $T
wait $T
rc=$?
if [ $rc -ne 0 ]; then
	fail "trace -p: Ctrl-C ends with status 0" "exit $rc: $(cat "$TMP/p.err")"
elif why=$(python3 "$TMP/check.py" "$TMP/p.json" "$TMP/A.txt" signal "$TMP/lines" exact "$A"); then
	pass "trace -p: only the chosen process, its aborts exact; Ctrl-C prints the summary"
else
	fail "trace -p: only the chosen process, its aborts exact; Ctrl-C prints the summary" "$why"
fi

# -p ends by itself once the process has exited, as perf and strace do: a workload that stops
# after a set number of iterations, the trace written with -o; the file holds what stdout
# would have (every abort as an event, a final summary, the counts exact), stdout nothing,
# and the summary names each section's abort handler as events do. timeout is only a guard.
iters=30000000
quick && iters=5000000
mkfifo "$TMP/goE"
"$W" --wait --iters $iters --signal-us 200 --mode all --out "$TMP/E.txt" <"$TMP/goE" 2>/dev/null &
A=$!
timeout 300 "$RSEQDBG" trace --json -p "$A" -o "$TMP/e.json" >"$TMP/e.out" 2>"$TMP/e.err" &
T=$!
wait_for -p $T 10 "trace -p -o to say tracing" file_has tracing "$TMP/e.err"
exec 3>"$TMP/goE"
exec 3>&-
wait $A
wait $T
rc=$?
if [ $rc -ne 0 ]; then
	fail "trace -p: ends with the process, status 0" "exit $rc: $(cat "$TMP/e.err")"
elif [ -s "$TMP/e.out" ]; then
	fail "trace -p -o FILE: nothing on stdout" "$(head -2 "$TMP/e.out")"
elif why=$(python3 "$TMP/check.py" "$TMP/e.json" "$TMP/E.txt" signal "$TMP/lines" exact "$A"); then
	pass "trace -p -o FILE: ends with the process, status 0; the file has its aborts exact and the summary"
else
	fail "trace -p -o FILE: ends with the process, status 0; the file has its aborts exact and the summary" "$why"
fi
check "trace summary: each section's abort handler named by function and source line" \
	python3 -c 'import json, re, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]["summary"]
assert s["sections"], "no sections"
for x in s["sections"]:
    assert re.fullmatch(r"%s\+0x[0-9a-f]+ \(rseq_workload\.S:[0-9]+\)" % x["start"]["function"],
                        x["abort_handler"] or ""), x["abort_handler"]' "$TMP/e.json"

# Two -p: the trace ends once both have ended, not with the first; the second, running three
# times as long, has every abort counted.
if ! quick; then
	mkfifo "$TMP/goF" "$TMP/goG"
	"$W" --wait --iters $((iters / 3)) --signal-us 200 --out "$TMP/F.txt" <"$TMP/goF" 2>/dev/null &
	A=$!
	"$W" --wait --iters $iters --signal-us 200 --out "$TMP/G.txt" <"$TMP/goG" 2>/dev/null &
	B=$!
	timeout 300 "$RSEQDBG" trace --json --summary -p "$A" -p "$B" >"$TMP/fg.json" 2>"$TMP/fg.err" &
	T=$!
	wait_for -p $T 10 "trace -p -p to say tracing" file_has tracing "$TMP/fg.err"
	exec 3>"$TMP/goF" 4>"$TMP/goG"
	exec 3>&- 4>&-
	wait $A $B
	wait $T
	rc=$?
	check "trace -p A -p B: ends with the last, status 0 ($rc), the last one's aborts all counted" \
		python3 -c 'import json, sys
assert sys.argv[4] == "0"
s = [json.loads(l) for l in open(sys.argv[1])][-1]["summary"]
assert s["final"]
theirs = sum(int(l.split("=")[1]) for l in open(sys.argv[2]) if l.startswith("section.") and ".aborts=" in l)
ours = sum(x["aborts"] for x in s["sections"] if x["pid"] == int(sys.argv[3]))
assert ours + s["backup_program_skipped"] >= theirs >= ours > 0, (ours, theirs)' \
		"$TMP/fg.json" "$TMP/G.txt" "$B" "$rc"
fi

# -t: one worker thread of two; --cgroup: only the process placed in a cgroup v2 directory.
mkfifo "$TMP/goT"
"$W" --wait --threads 2 --signal-us 200 --seconds 1 --out "$TMP/T.txt" <"$TMP/goT" 2>"$TMP/T.err" &
A=$!
exec 3>"$TMP/goT" # the workload opens its end, starts its threads and waits for EOF
wait_for -p $A 10 "the workload's ready line" file_has '^ready' "$TMP/T.err"
TID=$(ls /proc/$A/task | sort -n | tail -1)
"$RSEQDBG" trace --json -t "$TID" >"$TMP/t.json" 2>"$TMP/t.err" 3>&- &
T=$!
wait_for -p $T 10 "trace -t to say tracing" file_has tracing "$TMP/t.err"
exec 3>&-
wait $A
kill -INT $T
wait $T
check "trace -t: only the chosen thread's aborts" python3 -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
ev = [l for l in ls if l.get("kind") == "abort"]
total = int([l for l in open(sys.argv[2]) if l.startswith("aborts=")][0].split("=")[1])
assert ev and all(e["tid"] == int(sys.argv[3]) for e in ev), "other threads"
s = ls[-1]["summary"]
assert s["aborts"] == len(ev) < total, (len(ev), s["backup_aborts"], total)
' "$TMP/t.json" "$TMP/T.txt" "$TID"

CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$CG2" ] && mkdir -p "$CG2/rseqdbg-test.$$/sub" 2>/dev/null; then
	CG="$CG2/rseqdbg-test.$$"
	mkfifo "$TMP/goC" "$TMP/goD"
	# In a cgroup below the one traced: --cgroup takes the whole subtree.
	(echo $BASHPID >"$CG/sub/cgroup.procs" && exec "$W" --wait --signal-us 200 --seconds 1 \
		--out "$TMP/C.txt" <"$TMP/goC" 2>/dev/null) &
	A=$!
	"$W" --wait --signal-us 200 --seconds 1 --out "$TMP/D.txt" <"$TMP/goD" 2>/dev/null &
	B=$!
	"$RSEQDBG" trace --json --cgroup "$CG" >"$TMP/cg.json" 2>"$TMP/cg.err" &
	T=$!
	wait_for -p $T 10 "trace --cgroup to say tracing" file_has tracing "$TMP/cg.err"
	exec 3>"$TMP/goC" 4>"$TMP/goD"
	exec 3>&- 4>&-
	wait $A $B
	kill -INT $T
	wait $T
	if why=$(python3 "$TMP/check.py" "$TMP/cg.json" "$TMP/C.txt" signal "$TMP/lines" exact "$A"); then
		pass "trace --cgroup: only the process in the cgroup's subtree, its aborts exact"
	else
		fail "trace --cgroup: only the process in the cgroup's subtree, its aborts exact" "$why"
	fi
	rmdir "$CG/sub" "$CG"
elif [ -n "$CG2" ]; then
	# No cgroup of our own to make: our own cgroup must keep the command, another drop it.
	OWN="$CG2$(sed -n 's/^0:://p' /proc/self/cgroup)"
	OWN=${OWN%/}
	OTHER=
	while IFS= read -r d; do
		case "$OWN/" in "$d/"*) continue ;; esac # our cgroup or one above it
		OTHER=$d
		break
	done < <(find "$CG2" -mindepth 1 -maxdepth 2 -type d 2>/dev/null)
	"$RSEQDBG" trace --json --cgroup "$OWN" -- "$W" --signal-us 200 --seconds 1 \
		--out "$TMP/C.txt" >"$TMP/cg.json"
	if why=$(python3 "$TMP/check.py" "$TMP/cg.json" "$TMP/C.txt" signal "$TMP/lines" exact); then
		pass "trace --cgroup: the command in our own cgroup, its aborts exact"
	else
		fail "trace --cgroup: the command in our own cgroup, its aborts exact" "$why"
	fi
	if [ -n "$OTHER" ]; then
		"$RSEQDBG" trace --json --cgroup "$OTHER" -- "$W" --signal-us 200 --seconds 1 \
			--out "$TMP/C2.txt" >"$TMP/cg2.json"
		check "trace --cgroup: a command outside the cgroup is not traced" \
			python3 -c 'import json,sys; s=[json.loads(l) for l in open(sys.argv[1])][-1]["summary"]; assert s["aborts"] == 0, s' "$TMP/cg2.json"
	fi
else
	skip "trace --cgroup" "no cgroup v2 hierarchy mounted"
fi

# --comm filters in the kernel too.
"$RSEQDBG" trace --json --comm no-such-comm -- "$W" --signal-us 200 --seconds 1 --out "$TMP/c.txt" >"$TMP/c.json"
check "trace --comm: a command name no thread has traces nothing" \
	python3 -c 'import json,sys; s=[json.loads(l) for l in open(sys.argv[1])][-1]["summary"]; assert s["aborts"] == 0 and not s["sections"], s' "$TMP/c.json"

# Stacks: each abort carries the aborting thread's stack, innermost frame in the section.
out=$("$RSEQDBG" trace --stack -- "$W" --signal-us 500 --seconds 1 --out "$TMP/s.txt")
check "trace --stack: stack frames symbolized inside the section" \
	grep -qE '^ +0x[0-9a-f]+ wl_(counter_add|tcmalloc_push|condexit)\+0x[0-9a-f]+ \(rseq_workload\.S:[0-9]+\)' <<<"$out"
if ! quick; then
out=$("$RSEQDBG" trace --folded -- "$W" --signal-us 500 --seconds 1 --out "$TMP/f.txt")
if grep -qE '^rseq_workload;.*wl_counter_add[^ ]* [0-9]+$' <<<"$out" &&
	[ "$(awk '{ n += $NF } END { print n }' <<<"$out")" -eq "$(sed -n 's/^aborts=//p' "$TMP/f.txt")" ]; then
	pass "trace --folded: folded stacks, counts adding up to the workload's aborts"
else
	fail "trace --folded: folded stacks, counts adding up to the workload's aborts" "$(head -3 <<<"$out")"
fi

# Live plain lines: time, pid/tid, comm, cpu, event, section with file:line, cause, instruction.
out=$("$RSEQDBG" trace -- "$W" --signal-us 300 --seconds 1 --out "$TMP/l.txt")
check "trace: live abort lines name section, source line, cause and instruction" \
	grep -qE '^[0-9:.]+ +[0-9]+/[0-9]+ +rseq_workload +[0-9]+ +abort +section wl_counter_add\+0x[0-9a-f]+ \(rseq_workload\.S:[0-9]+\) \+0x[0-9a-f]+ cause=signal insn="[a-z]' <<<"$out"
# A command writing to the same pipe as the records: every line is a whole record or a whole
# line of the command, whose lines (one write each) all arrive, and the records still count
# every abort. The writer outlives the workload, so it also runs beside the summary and the
# folded stacks printed at the end.
cat >"$TMP/lines.py" <<'PY'
import os, sys, time
end = time.monotonic() + float(sys.argv[1])
n = 0
while time.monotonic() < end:
    os.write(1, b"command line %d: %s\n" % (n, b"x" * (n % 200)))
    n += 1
    time.sleep(0.0002)
with open(sys.argv[2], "w") as f:
    f.write("%d\n" % n)
PY
cat >"$TMP/mixed.py" <<'PY'
import json, re, sys
# argv: output mode(json|folded|plain) lines-written records-file
seen, recs, bad = set(), [], []
summary = False # plain: the lines of the summary, free-form, come last
event = re.compile(r"[0-9:.]+ +[0-9]+/[0-9]+ +\S+ +[0-9]+ +(abort|user-abort|migrate|cpu_id|signal) +\S.*")
for l in open(sys.argv[1], errors="replace"):
    l = l.rstrip("\n")
    m = re.fullmatch(r"command line (\d+): (x*)", l)
    if m and len(m.group(2)) == int(m.group(1)) % 200:
        seen.add(int(m.group(1)))
        continue
    try:
        if sys.argv[2] == "json":
            assert isinstance(json.loads(l), dict)
        elif sys.argv[2] == "folded":
            assert re.fullmatch(r"rseq_workload(;\S+)+ \d+", l)
        else:
            summary = summary or l == "--- summary ---"
            assert "command" not in l and (summary or l == "" or event.fullmatch(l))
        recs.append(l)
    except (ValueError, AssertionError):
        bad.append(l)
n = int(open(sys.argv[3]).read())
if bad:
    sys.exit("%d lines neither a record nor a line of the command, first: %r" % (len(bad), bad[0][:120]))
if seen != set(range(n)):
    sys.exit("%d of the command's %d lines arrived whole" % (len(seen), n))
open(sys.argv[4], "w").write("".join(r + "\n" for r in recs))
print(len(recs), n)
PY
for mode in json folded plain; do
	case $mode in json) flag=--json ;; folded) flag=--folded ;; *) flag=--events=all ;; esac
	name="trace $flag -- CMD writing to the same pipe"
	out=$("$RSEQDBG" trace $flag -- sh -c 'python3 "$1" 3 "$2" & exec "$3" --signal-us 200 --seconds 1 --out "$4"' \
		sh "$TMP/lines.py" "$TMP/mixed-$mode.n" "$W" "$TMP/mixed-$mode.txt" >"$TMP/mixed-$mode.out"; echo $?)
	# the writer ends after rseqdbg, saying how many lines it wrote
	wait_for 60 "the command's writer to end" test -s "$TMP/mixed-$mode.n" || continue
	if [ "$out" != 0 ]; then
		fail "$name" "exit $out"
	elif ! counts=$(python3 "$TMP/mixed.py" "$TMP/mixed-$mode.out" $mode "$TMP/mixed-$mode.n" "$TMP/mixed-$mode.rec"); then
		fail "$name: lines whole" "$counts"
	elif [ $mode = json ] && ! why=$(python3 "$TMP/check.py" "$TMP/mixed-$mode.rec" "$TMP/mixed-$mode.txt" signal "$TMP/lines" exact); then
		fail "$name: records complete" "$why"
	elif [ $mode = folded ] && [ "$(awk '{ n += $NF } END { print n }' "$TMP/mixed-$mode.rec")" -ne "$(sed -n 's/^aborts=//p' "$TMP/mixed-$mode.txt")" ]; then
		fail "$name: records complete" "folded counts differ from the workload's aborts"
	elif [ $mode = plain ] && ! grep -q ' abort  *section ' "$TMP/mixed-$mode.rec"; then
		fail "$name: records complete" "no abort line"
	else
		pass "$name: every line a whole record or a whole line of the command (records, lines: $counts)"
	fi
done

# The summary for people names the abort handler too.
out=$("$RSEQDBG" trace --summary -- "$W" --signal-us 300 --seconds 1 --out "$TMP/h.txt")
check "trace --summary: the abort handler named beside its address" \
	grep -qE '^ +rseq_workload, [0-9.]+ aborts/s, section 0x[0-9a-f]+\+[0-9]+ abort 0x[0-9a-f]+ wl_counter_add\+0x[0-9a-f]+ \(rseq_workload\.S:[0-9]+\) in ' <<<"$out"
fi # quick: output formats of the same events

# --summary with --interval and --duration, system-wide.
out=$("$RSEQDBG" trace --summary --interval 0.5 --duration 1.2 --json)
n=$(grep -c '"summary"' <<<"$out")
check "trace --summary --interval 0.5 --duration 1.2: interval summaries then a final one ($n)" \
	bash -c "[ $n -ge 3 ] && tail -1 <<<'$out' | grep -q '\"final\":true'"

none_left() { left=$(left_behind "$first_id"); [ -z "$left" ]; }
wait_for -q -i 0.5 20 "our BPF programs to be unloaded" none_left
if [ -z "$left" ]; then pass "trace: no BPF program left loaded"; else fail "trace: no BPF program left loaded" "$left"; fi
finish
