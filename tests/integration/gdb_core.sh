#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The gdb extension on a core file: `rseq info` in gdb, with core_crash's core loaded, lists
# its sections and every thread's rseq state as core_crash recorded it before its fault
# (rseq area, CPU, armed descriptor, the section each was inside) and the signal that ended
# it, with the fault inside its section.
source "$(dirname "$0")/../lib.sh"

CC="$BUILD/tests/workloads/core_crash"
EXT="$TOP/gdb/rseqdbg-gdb.py"
export RSEQDBG

if ! command -v gdb >/dev/null; then
	skip "gdb extension on a core" "gdb is not installed"
	finish
	exit
fi
if [ ! -x "$CC" ] || [ ! -x "$RSEQDBG" ]; then
	fail "gdb extension on a core" "$CC or $RSEQDBG missing (make tests)"
	finish
	exit
fi
pattern=$(cat /proc/sys/kernel/core_pattern)
case $pattern in
'|'* | '')
	if ! have_root; then
		fail "gdb extension on a core" "core_pattern pipes to '$pattern' and only root may change it"
		finish
		exit
	fi
	trap 'printf "%s\n" "$pattern" >/proc/sys/kernel/core_pattern; rm -rf "$TMP"' EXIT
	mkdir -p "$TMP/kcore"
	echo "$TMP/kcore/core.%p" >/proc/sys/kernel/core_pattern
	;;
esac
now=$(cat /proc/sys/kernel/core_pattern)

(
	cd "$TMP" || exit 2
	ulimit -c unlimited
	exec "$CC" --mode fault --out "$TMP/rec.txt"
) >"$TMP/out" 2>&1 &
pid=$!
{ wait "$pid"; } 2>/dev/null
case $now in
/*) f=${now//%p/$pid} ;;
*) f=$TMP/${now//%p/$pid} ;;
esac
core=
for c in "$f" "$f.$pid"; do
	[ -f "$c" ] && core=$c
done
if [ -z "$core" ]; then
	fail "gdb extension on a core: a core" "none written (core_pattern '$now'): $(head -c 200 "$TMP/out")"
	finish
	exit
fi

timeout 300 gdb -nx -q -batch -ex "source $EXT" -ex "rseq info" "$CC" "$core" >"$TMP/gdb.log" 2>&1
if why=$(python3 - "$TMP/gdb.log" "$TMP/rec.txt" <<'EOF'
import re, sys
log = open(sys.argv[1]).read()
rec = {}
for l in open(sys.argv[2]):
    if l.startswith('thread '):
        f = dict(kv.split('=') for kv in l.split()[1:])
        rec[f['role']] = {k: (v if k == 'role' else int(v, 0)) for k, v in f.items()}
m = re.search(r'^(\d+) threads \(from rseqdbg scan --core\):$', log, re.M)
if not m or int(m.group(1)) != len(rec):
    sys.exit('no thread list of %d threads' % len(rec))
for role, r in rec.items():
    pat = r'^  tid %d: rseq area 0x%x cpu %d rseq_cs 0x%x, ip 0x[0-9a-f]+$' % (
        r['tid'], r['area'], r['cpu'], r['cs'])
    if not re.search(pat, log, re.M):
        sys.exit('%s: no line %r' % (role, pat))
    if role in ('fault', 'wait'):
        fn = role + '_op'
        pat = r'^  tid %d: .*\n    inside %s \(core_crash\.S:\d+\), critical section ' \
              r'\[0x%x, 0x%x\), abort 0x%x%s$' % (
                  r['tid'], fn, r['start'], r['post'], r['abort'],
                  ': the fault is inside it, before its commit' if role == 'fault' else '')
        if not re.search(pat, log, re.M):
            sys.exit('%s: no line %r' % (role, pat))
if not re.search(r'^signal SIGSEGV \(code \d+\), address 0x0 in thread %d, raised by its '
                 r'instruction$' % rec['fault']['tid'], log, re.M):
    sys.exit('no signal line')
for s in ('fault', 'wait'):
    if not re.search(r'^  %s_op start=0x%x post_commit=0x%x abort=0x%x ' % (
            s, rec[s]['start'], rec[s]['post'], rec[s]['abort']), log, re.M):
        sys.exit('section %s_op not listed' % s)
EOF
); then
	pass "gdb: rseq info on a core shows each thread's rseq state as the workload recorded it"
else
	fail "gdb: rseq info on a core shows each thread's rseq state as the workload recorded it" \
		"$why; $(tail -c 400 "$TMP/gdb.log" | tr '\n' '|')"
fi
finish
