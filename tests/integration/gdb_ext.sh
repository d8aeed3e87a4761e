#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The gdb extension (gdb/rseqdbg-gdb.py) in batch mode over the workload: plain stepi
# into a critical section never reaches its post-commit address (the problem), rseq stepi
# gets through every section and the workload, left to finish, still computes the right
# result; rseq info agrees with gdb's own symbol addresses; the warnings appear.
source "$(dirname "$0")/../lib.sh"

W="$BUILD/tests/workloads/rseq_workload"
EXT="$TOP/gdb/rseqdbg-gdb.py"
export RSEQDBG

if ! command -v gdb >/dev/null; then
	skip "gdb extension" "gdb is not installed"
	finish
	exit
fi
if ! have_ptrace; then
	skip "gdb extension" "ptrace is not permitted here"
	finish
	exit
fi
if [ ! -x "$W" ] || [ ! -x "$RSEQDBG" ]; then
	fail "gdb extension" "$W or $RSEQDBG missing (make tests)"
	finish
	exit
fi
seed_random

# gdb_run NAME: run gdb in batch mode on $TMP/NAME.gdb, output in $TMP/NAME.log
gdb_run() {
	timeout 500 gdb -nx -q -batch -x "$TMP/$1.gdb" >"$TMP/$1.log" 2>&1
}
# report_of FILE: wait (60 s at most) until the detached workload wrote its result line
report_of() {
	wait_for -q -i 0.1 60 "the result line in $1" file_has '^result=' "$1"
	sed -n 's/^result=//p' "$1"
}
val() { sed -n "s/^$2=//p" "$1"; }
LABELS="rseq_start_counter rseq_post_commit_counter rseq_abort_counter rseq_exit_counter
	rseq_start_tcmalloc rseq_post_commit_tcmalloc rseq_abort_tcmalloc
	rseq_start_condexit rseq_post_commit_condexit rseq_abort_condexit rseq_exit_condexit"
PRINT_LABELS="python
for n in '''$LABELS'''.split():
    gdb.write('sym %s 0x%x\n' % (n, int(gdb.parse_and_eval('&' + n))))
end"
# sym LOG NAME: the address gdb printed for a label
sym() { awk -v n="$2" '$1 == "sym" && $2 == n { print $3 }' "$1"; }
# info_line LOG FUNC N: the Nth "rseq info" line of FUNC
info_line() { grep -E "^  $2 start=" "$1" | sed -n "${3}p"; }
# expect_info NAME LOG N ADDR-OF: rseq info line N of each section matches ADDR-OF addresses
expect_info() {
	local name=$1 log=$2 n=$3 get=$4 f short line want
	for f in counter:wl_counter_add tcmalloc:wl_tcmalloc_push condexit:wl_condexit; do
		short=${f%%:*}
		line=$(info_line "$log" "${f#*:}" "$n")
		want="${f#*:} start=$($get rseq_start_$short) post_commit=$($get \
			rseq_post_commit_$short) abort=$($get rseq_abort_$short)"
		[ "$short" = counter ] && want+=" exits=$($get rseq_exit_counter)"
		line=$(sed 's/^ *//; s/ branch_exits=[^ ]*//; s/ tests\/.*//' <<<"$line")
		if [ "$line" = "$want" ]; then pass "$name: ${f#*:}"
		else fail "$name: ${f#*:}" "got '$line', want '$want'"; fi
	done
}

# --- the problem: plain stepi, without the extension ------------------------------------------
cat >"$TMP/plain.gdb" <<EOF
file $W
break wl_counter_add
run --mode counter --iters 200 --out $TMP/plain.out
delete
python
post = int(gdb.parse_and_eval('&rseq_post_commit_counter'))
handler = (int(gdb.parse_and_eval('&rseq_abort_counter')),
           int(gdb.parse_and_eval('&rseq_exit_counter')))
seen = {'post': 0, 'abort': 0}
for _ in range(300):
    gdb.execute('stepi', to_string=True)
    pc = int(gdb.selected_frame().pc())
    seen['post'] += pc == post
    seen['abort'] += handler[0] <= pc < handler[1]
gdb.write('plain post=%d abort=%d\n' % (seen['post'], seen['abort']))
end
detach
EOF
gdb_run plain
line=$(grep '^plain ' "$TMP/plain.log")
check "plain stepi never reaches post-commit ($line)" grep -q 'post=0 ' <<<"$line"
check "plain stepi lands in the abort handler again and again" \
	test "$(sed -n 's/.*abort=//p' <<<"$line")" -ge 5
check "workload after plain stepi: result=ok" test "$(report_of "$TMP/plain.out")" = ok
check "workload counted the aborts plain stepi caused" \
	test "$(val "$TMP/plain.out" section.wl_counter_add.aborts)" -ge \
	"$(sed -n 's/.*abort=//p' <<<"$line")"

# --- rseq info and rseq stepi 100000 --------------------------------------------------------

cat >"$TMP/main.gdb" <<EOF
source $EXT
file $W
python
try:
    gdb.execute('rseq stepi')
except gdb.error as e:
    gdb.write('error: %s\n' % e)
end
rseq info
$PRINT_LABELS
break wl_counter_add
run --mode all --iters 1000000 --out $TMP/main.out
delete
set \$t = (unsigned long *)\$rdi
python gdb.write('before=%d\n' % int(gdb.parse_and_eval('\$t[2] + \$t[6] + \$t[10]')))
rseq info
$PRINT_LABELS
rseq stepi 100000
python gdb.write('after=%d\n' % int(gdb.parse_and_eval('\$t[2] + \$t[6] + \$t[10]')))
detach
EOF
gdb_run main
log="$TMP/main.log"
check "rseq stepi before the program runs says so" grep -q 'The program is not being run' "$log"
check "sections from rseqdbg scan, before and during the run (no memory fallback)" \
	bash -c "! grep -q 'reading __rseq_cs from memory' '$log'"
# The first listing is before the run (file addresses), the second after (runtime addresses).
static_addr() { awk -v n="$1" '$1 == "sym" && $2 == n { print $3; exit }' "$log"; }
runtime_addr() { awk -v n="$1" '$1 == "sym" && $2 == n { a = $3 } END { print a }' "$log"; }
expect_info "rseq info before run lists each section at its file addresses" "$log" 1 static_addr
expect_info "rseq info lists each section at its runtime addresses" "$log" 2 runtime_addr
check "runtime addresses differ from file addresses (PIE)" \
	test "$(static_addr rseq_start_counter)" != "$(runtime_addr rseq_start_counter)"
check "rseq info: wl_condexit's branch exit found by decoding" \
	grep -q "branch_exits=$(runtime_addr rseq_exit_condexit)" <<<"$(info_line "$log" \
	wl_condexit 2)"
summary=$(grep -E '^rseq: [0-9]+ steps' "$log")
check "rseq stepi 100000 completes ($summary)" grep -q '^rseq: 100000 steps' <<<"$summary"
passages=$(sed -n 's/.*steps, \([0-9]*\) critical.*/\1/p' <<<"$summary")
before=$(val "$log" before)
after=$(val "$log" after)
# The run may stop between counting an entry and entering: then one entry is not a passage yet.
check "passages reported ($passages) = section entries the workload counted ($((after - before)))" \
	bash -c "[ '$passages' -gt 0 ] && [ $((after - before)) -ge '$passages' ] &&
		[ $((after - before)) -le $((passages + 1)) ]"
for f in wl_counter_add wl_tcmalloc_push wl_condexit; do
	check "rseq stepi went through $f and saw it commit" \
		grep -q "^stepped over rseq critical section $f (rseq_workload.S:[0-9]*): committed" "$log"
done
check "wl_condexit passages leave through its conditional exit" \
	grep -q "^stepped over rseq critical section wl_condexit .*: exited (to $(runtime_addr \
	rseq_exit_condexit)[ )]" "$log"
check "no stop inside a section during rseq stepi (no warning)" \
	bash -c "! grep -q 'stopped inside rseq critical section' '$log'"
check "workload left to finish after rseq stepi: result=ok" \
	test "$(report_of "$TMP/main.out")" = ok

# --- to the end of the program: passages = the workload's own counts, exactly ----------------
cat >"$TMP/end.gdb" <<EOF
source $EXT
file $W
break wl_counter_add
run --mode all --iters 150 --out $TMP/end.out
delete
rseq stepi 10000000
EOF
gdb_run end
log="$TMP/end.log"
check "stepping to the end: the program exits" grep -q '^rseq: the program exited' "$log"
summary=$(grep -E '^rseq: [0-9]+ steps' "$log")
want="$(val "$TMP/end.out" iterations) critical section passages ($(val "$TMP/end.out" \
	commits) committed, $(val "$TMP/end.out" aborts) aborted, $(val "$TMP/end.out" exits) exited)"
check "passages and outcomes = the workload's iterations, commits, aborts, exits" \
	grep -qF "$want" <<<"$summary"
check "stepped to the end: result=ok" test "$(report_of "$TMP/end.out")" = ok

# --- warnings: breakpoint inside a section, stop inside a section -----------------------------
cat >"$TMP/warn.gdb" <<EOF
source $EXT
file $W
break wl_counter_add
run --mode counter --iters 200 --out $TMP/warn.out
$PRINT_LABELS
break *((char *)&rseq_start_counter + 3)
continue
delete
rseq step 12
rseq nexti 40
detach
EOF
gdb_run warn
log="$TMP/warn.log"
check "setting a breakpoint inside a section warns" \
	grep -q "warning: breakpoint 2 at .* is inside rseq critical section wl_counter_add" "$log"
check "stopping inside a section warns that resuming aborts to the abort handler" \
	grep -q "warning: thread [0-9]* stopped inside rseq critical section wl_counter_add .*abort \
the section to $(sym "$log" rseq_abort_counter)" "$log"
check "rseq step and rseq nexti step over sections" \
	test "$(grep -c '^stepped over rseq critical section wl_counter_add' "$log")" -ge 2
check "workload after the warnings: result=ok" test "$(report_of "$TMP/warn.out")" = ok

# --- without rseqdbg: sections read from the process's memory ---------------------------------
cat >"$TMP/mem.gdb" <<EOF
source $EXT
file $W
break wl_counter_add
run --mode counter --iters 100 --out $TMP/mem.out
rseq info
$PRINT_LABELS
rseq stepi 200
detach
EOF
RSEQDBG=/bin/false gdb_run mem
log="$TMP/mem.log"
check "without a working rseqdbg the extension says it reads memory" \
	grep -q 'reading __rseq_cs from memory' "$log"
expect_info "memory fallback lists each section at its runtime addresses" "$log" 1 \
	"sym $log"
check "memory fallback: rseq stepi steps over sections" \
	grep -q '^stepped over rseq critical section wl_counter_add' "$log"
check "workload after the memory fallback: result=ok" test "$(report_of "$TMP/mem.out")" = ok

# --- several threads keep running while one is stepped ----------------------------------------
cat >"$TMP/mt.gdb" <<EOF
source $EXT
file $W
break wl_tcmalloc_push
run --mode all --threads 3 --iters 300000 --out $TMP/mt.out
delete
rseq stepi 3000
detach
EOF
gdb_run mt
check "multi-threaded workload: rseq stepi completes" grep -q '^rseq: 3000 steps' "$TMP/mt.log"
check "multi-threaded workload after rseq stepi: result=ok" \
	test "$(report_of "$TMP/mt.out")" = ok

# --- a per-thread timer signal keeps interrupting the stepped thread --------------------------
cat >"$TMP/sig.gdb" <<EOF
source $EXT
file $W
break wl_counter_add
run --mode all --iters 200000 --signal-us 5000 --out $TMP/sig.out
delete
rseq stepi 3000
detach
EOF
gdb_run sig
check "signal workload: rseq stepi completes" grep -q '^rseq: 3000 steps' "$TMP/sig.log"
check "signal workload after rseq stepi: result=ok, signals delivered" \
	bash -c "[ '$(report_of "$TMP/sig.out")' = ok ] && [ $(val "$TMP/sig.out" signals) -gt 0 ]"

# --- SIGINT stops a long rseq stepi, in the thread being stepped ------------------------------
# A SIGINT reaches the program (passed on by gdb, or sent by the terminal to whichever thread)
# while gdb steps it, or gdb itself while the extension's Python runs. Either way the command
# ends at once with the program stopped and the stepped thread selected, and stepping goes on
# from there. Each round notes the selected thread, starts rseq stepi 100000 (far longer than a
# round), sends gdb SIGINT after a random delay and checks.
ROUNDS=5
cat >"$TMP/int.gdb" <<EOF
source $EXT
file $W
break wl_counter_add
run --mode all --threads 2 --iters 3000000 --out $TMP/int.out
delete
python
def int_mark(r):
    global int_before
    int_before = gdb.selected_thread().num
    gdb.write('begin %d\n' % r)
    with open('$TMP/int.go', 'a') as f:
        f.write('%d\n' % r)
def int_check(r):
    t, inf = gdb.selected_thread(), gdb.selected_inferior()
    try:
        with open('/proc/%d/task/%d/stat' % (inf.pid, t.ptid[1])) as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
    except (OSError, AttributeError):
        state = 'gone'
    gdb.write('round %d before=%d after=%d state=%s\n'
              % (r, int_before, t.num if t else -1, state))
end
EOF
for r in $(seq $ROUNDS); do
	printf 'python int_mark(%d)\nrseq stepi 100000\npython int_check(%d)\nrseq stepi 5\n' \
		"$r" "$r" >>"$TMP/int.gdb"
done
echo detach >>"$TMP/int.gdb"
gdb -nx -q -batch -x "$TMP/int.gdb" >"$TMP/int.log" 2>&1 &
g=$!
for r in $(seq $ROUNDS); do
	wait_for -p $g -i 0.1 60 "gdb to begin round $r" file_has -x "$r" "$TMP/int.go" || break
	sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
	kill -INT $g 2>/dev/null
done
wait_for -i 0.1 120 "gdb to end after the interrupts" exited $g || kill -KILL $g 2>/dev/null
wait $g
log="$TMP/int.log"
# round_out N: what round N printed, from rseq stepi 100000 to the check
round_out() { sed -n "/^begin $1\$/,/^round $1 /p" "$log"; }
bad=""
for r in $(seq $ROUNDS); do
	out=$(round_out "$r")
	res=$(grep "^round $r " <<<"$out")
	if [ -z "$res" ]; then
		bad="$bad; round $r: did not end"
		continue
	fi
	steps=$(sed -n 's/^rseq: \([0-9]*\) steps.*/\1/p' <<<"$out")
	grep -q '^rseq: interrupted (SIGINT): thread [0-9]* stopped' <<<"$out" ||
		bad="$bad; round $r: no interrupt reported"
	[ -n "$steps" ] && [ "$steps" -lt 100000 ] || bad="$bad; round $r: $steps steps"
	grep -qE "^round $r before=([0-9]+) after=\\1 " <<<"$res" || bad="$bad; $res"
	grep -q 'state=t$' <<<"$res" || bad="$bad; not stopped: $res"
done
if [ -z "$bad" ]; then
	pass "SIGINT stops rseq stepi 100000: program stopped, same thread ($ROUNDS rounds)"
else
	fail "SIGINT stops rseq stepi 100000: program stopped, same thread" "${bad#; }"
fi
check "rseq stepi 5 steps on after each interrupt ($ROUNDS rounds)" \
	test "$(grep -c '^rseq: 5 steps' "$log")" -eq $ROUNDS
check "interrupted, then detached: result=ok" test "$(report_of "$TMP/int.out")" = ok

# The same with Ctrl-C typed on gdb's terminal, which sends SIGINT to the program.
cat >"$TMP/gdb_tty.py" <<'EOF'
import os, pty, random, re, select, sys, time
rounds, wl, ext, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
random.seed(int(sys.argv[5]))
os.environ["TERM"] = "dumb"
pid, fd = pty.fork()
if pid == 0:
    os.execvp("gdb", ["gdb", "-nx", "-q"])
buf = b""
def prompt(timeout=120):
    global buf
    end = time.time() + timeout
    while not buf.endswith(b"(gdb) "):
        if not select.select([fd], [], [], max(0.0, end - time.time()))[0]:
            sys.exit("no gdb prompt within %ds: %r" % (timeout, buf[-500:]))
        try:
            d = os.read(fd, 65536)
        except OSError:
            d = b""
        if not d:
            sys.exit("gdb went away: %r" % buf[-500:])
        buf += d
    text, buf = buf.decode(errors="replace").replace("\r", ""), b""
    sys.stdout.write(text + "\n")
    return text
def cmd(c):
    os.write(fd, c.encode() + b"\n")
    return prompt()
def current():
    return re.search(r"Current thread is (\d+)", cmd("thread")).group(1)
prompt()
for c in ("set pagination off", "set confirm off", "set style enabled off",
          "source " + ext, "file " + wl, "break wl_counter_add",
          "run --mode all --threads 2 --iters 3000000 --out " + out, "delete"):
    cmd(c)
for r in range(rounds):
    before = current()
    os.write(fd, b"rseq stepi 100000\n")
    time.sleep(random.uniform(0.5, 2.0))
    os.write(fd, b"\x03")
    prompt()
    print("tty round %d before=%s after=%s" % (r + 1, before, current()))
    cmd("rseq stepi 5")
cmd("detach")
os.write(fd, b"quit\n")
os.waitpid(pid, 0)
EOF
TROUNDS=2
log="$TMP/tty.log"
timeout 300 python3 "$TMP/gdb_tty.py" $TROUNDS "$W" "$EXT" "$TMP/tty.out" "$RSEQDBG_SEED" \
	>"$log" 2>&1
bad=""
n=$(grep -c 'rseq: interrupted (SIGINT): thread [0-9]* stopped' "$log")
[ "$n" -eq $TROUNDS ] || bad="$n interrupts reported"
grep -q 'rseq: the program exited' "$log" && bad="$bad; the program exited"
[ "$(grep -cE '^tty round [0-9]+ before=([0-9]+) after=\1$' "$log")" -eq $TROUNDS ] ||
	bad="$bad; $(grep '^tty round' "$log" | tr '\n' ' ')"
[ "$(grep -c '^rseq: 5 steps' "$log")" -eq $TROUNDS ] || bad="$bad; rseq stepi 5 failed"
if [ -z "$bad" ]; then
	pass "Ctrl-C on gdb's terminal stops rseq stepi in the stepped thread ($TROUNDS rounds)"
else
	fail "Ctrl-C on gdb's terminal stops rseq stepi in the stepped thread" \
		"${bad#; } $(tail -3 "$log")"
fi
check "Ctrl-C, then detached: result=ok" test "$(report_of "$TMP/tty.out")" = ok
finish
