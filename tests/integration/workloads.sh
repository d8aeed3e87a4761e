#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The workloads the step and trace tests rely on are themselves right: their reports add up,
# aborts really happen under signals and oversubscription, and their rseq tables, read from
# the binaries with binutils, describe the labels the assembly exports, with the signature
# in front of every abort handler.
source "$(dirname "$0")/../lib.sh"

W="$BUILD/tests/workloads/rseq_workload"
EX="$BUILD/examples/percpu_counter"
SECTS="wl_counter_add wl_tcmalloc_push wl_condexit"
NCPU=$(nproc)

if [ ! -x "$W" ] || [ ! -x "$EX" ]; then
	fail "workloads built" "$W or $EX missing (make tests)"
	finish
	exit
fi

val() { sed -n "s/^$2=//p" "$1"; }

# report_adds_up NAME FILE: per section iterations = commits + aborts + exits, totals = sums.
report_adds_up() {
	local f=$2 s it co ab ex ti=0 tc=0 ta=0 te=0 bad=""
	for s in $SECTS; do
		it=$(val "$f" "section.$s.iterations")
		[ -n "$it" ] || continue
		co=$(val "$f" "section.$s.commits")
		ab=$(val "$f" "section.$s.aborts")
		ex=$(val "$f" "section.$s.exits")
		[ "$it" -eq $((co + ab + ex)) ] || bad+="$s: $it != $co + $ab + $ex; "
		ti=$((ti + it)) tc=$((tc + co)) ta=$((ta + ab)) te=$((te + ex))
	done
	[ "$(val "$f" iterations)" = "$ti" ] || bad+="iterations total; "
	[ "$(val "$f" commits)" = "$tc" ] || bad+="commits total; "
	[ "$(val "$f" aborts)" = "$ta" ] || bad+="aborts total; "
	[ "$(val "$f" exits)" = "$te" ] || bad+="exits total; "
	[ "$(val "$f" result)" = ok ] || bad+="result=$(val "$f" result); "
	if [ -z "$bad" ]; then pass "$1"; else fail "$1" "$bad"; fi
}

# --- reports --------------------------------------------------------------------------------
"$W" >"$TMP/default" 2>"$TMP/err"
rc=$?
check "default run exits 0" test "$rc" -eq 0
report_adds_up "default run reports add up" "$TMP/default"
check "default run: mode=counter threads=1 and 10000 commits" \
	test "$(val "$TMP/default" mode)/$(val "$TMP/default" threads)/$(val "$TMP/default" \
		section.wl_counter_add.commits)" = "counter/1/10000"
check "default run reports only the counter section" \
	test "$(grep -c '^section\.' "$TMP/default")" -eq 4
keys=$(sed 's/=.*//' "$TMP/default" | tr '\n' ' ')
check "report keys in the documented order" test "$keys" = "mode threads iterations commits \
aborts exits section.wl_counter_add.iterations section.wl_counter_add.commits \
section.wl_counter_add.aborts section.wl_counter_add.exits signals affinity_changes cpus_seen \
result "

"$W" --mode all --threads 3 --iters 40000 >"$TMP/all"
rc=$?
check "mode all exits 0" test "$rc" -eq 0
report_adds_up "mode all reports add up" "$TMP/all"
for s in $SECTS; do
	ok=1
	case $s in
	wl_condexit)
		# ops 0, 8, 16... leave through the conditional exit: 5000 per thread
		[ "$(val "$TMP/all" section.$s.exits)" = 15000 ] || ok=0
		[ "$(val "$TMP/all" section.$s.commits)" = 105000 ] || ok=0 ;;
	*)	[ "$(val "$TMP/all" section.$s.commits)" = 120000 ] || ok=0 ;;
	esac
	check "mode all: $s commits the expected number of operations" test $ok -eq 1
done
check "tcmalloc section has no exits" test "$(val "$TMP/all" section.wl_tcmalloc_push.exits)" = 0

for m in tcmalloc condexit; do
	"$W" --mode $m --threads 2 --iters 20000 >"$TMP/$m"
	rc=$?
	check "mode $m exits 0" test "$rc" -eq 0
	report_adds_up "mode $m reports add up" "$TMP/$m"
done

GLIBC_TUNABLES=glibc.pthread.rseq=0 "$W" --mode all --threads 2 --iters 20000 --signal-us 200 \
	>"$TMP/own"
rc=$?
check "own rseq registration (glibc's turned off) exits 0" test "$rc" -eq 0
report_adds_up "own registration reports add up" "$TMP/own"

# --- aborts happen where they should ----------------------------------------------------------
"$W" --mode all --threads 2 --seconds 1 --signal-us 100 >"$TMP/sig"
report_adds_up "signal run reports add up" "$TMP/sig"
check "signal run: signals were delivered" test "$(val "$TMP/sig" signals)" -gt 0
check "signal run: sections aborted" test "$(val "$TMP/sig" aborts)" -gt 0

"$W" --mode all --oversubscribe --seconds 1 >"$TMP/over"
report_adds_up "oversubscribed run reports add up" "$TMP/over"
check "oversubscribed run uses 4 threads per CPU" \
	test "$(val "$TMP/over" threads)" -eq $((4 * NCPU))
check "oversubscribed run: sections aborted (preemption)" test "$(val "$TMP/over" aborts)" -gt 0
check "oversubscribed run: no signals" test "$(val "$TMP/over" signals)" -eq 0

"$W" --mode counter --threads 2 --seconds 1 --affinity >"$TMP/aff"
report_adds_up "affinity run reports add up" "$TMP/aff"
check "affinity run: affinity changes counted" test "$(val "$TMP/aff" affinity_changes)" -gt 0
if [ "$NCPU" -gt 1 ]; then
	check "affinity run: commits on more than one CPU" test "$(val "$TMP/aff" cpus_seen)" -gt 1
else
	skip "affinity run: commits on more than one CPU" "one CPU"
fi

# --- options --------------------------------------------------------------------------------
"$W" --iters 1000 --out "$TMP/outfile" >"$TMP/stdout"
check "--out writes the report to the file" \
	bash -c "[ ! -s '$TMP/stdout' ] && grep -qx 'result=ok' '$TMP/outfile'"

# start_waiting NAME CMD...: run CMD with stdin on a FIFO held open by this shell (fd $hold)
start_waiting() {
	local name=$1
	shift
	mkfifo "$TMP/$name.in"
	exec {hold}<>"$TMP/$name.in"
	"$@" <"$TMP/$name.in" >"$TMP/$name.out" 2>"$TMP/$name.err" {hold}>&- &
	wpid=$!
}
# wait_line FILE PATTERN: until a line of FILE matches (10 s at most); fails when none does
wait_line() { wait_for -i 0.1 10 "'$2' in $(basename "$1")" file_has -E "$2" "$1"; }

start_waiting eof "$W" --wait --iters 1000
wait_line "$TMP/eof.err" '^ready'
check "--wait prints ready pid=N on stderr" test "$(cat "$TMP/eof.err")" = "ready pid=$wpid"
sleep 0.2
check "--wait: still waiting before stdin closes" \
	bash -c "kill -0 $wpid && [ ! -s '$TMP/eof.out' ]"
exec {hold}>&-
wait "$wpid"
rc=$?
check "--wait: runs once stdin closes" \
	bash -c "[ $rc -eq 0 ] && grep -qx 'result=ok' '$TMP/eof.out'"

start_waiting term "$W" --wait --iters 1000
wait_line "$TMP/term.err" '^ready'
kill -TERM "$wpid"
wait "$wpid"
rc=$?
exec {hold}>&-
check "--wait: SIGTERM starts the run" \
	bash -c "[ $rc -eq 0 ] && grep -qx 'result=ok' '$TMP/term.out'"
"$W" --threads 2 --seconds 600 --out "$TMP/sterm.out" &
wpid=$!
sleep 0.3
kill -TERM "$wpid"
t0=$SECONDS
wait "$wpid"
rc=$?
check "--seconds: SIGTERM ends the run early, checked as usual" \
	bash -c "[ $rc -eq 0 ] && [ $((SECONDS - t0)) -lt 30 ] && grep -qx 'result=ok' '$TMP/sterm.out'"
for bad in "--mode nope" "--threads 0" "--iters -3" "--seconds x" "--signal-us 0" "--bogus" \
	   "extra"; do
	# shellcheck disable=SC2086
	"$W" $bad >"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	check "bad option '$bad' exits 2 with a message" \
		bash -c "[ $rc -eq 2 ] && [ -s '$TMP/bad.err' ] && [ ! -s '$TMP/bad.out' ]"
done

# --- the tables, read from the binary ---------------------------------------------------------
symaddr() { nm "$1" | awk -v s="$2" '$3 == s { print $1; exit }'; }
# sect_hex FILE SECTION: the section's bytes as one hex string, in file order
sect_hex() {
	objdump -s -j "$2" "$1" | awk '/^ [0-9a-f]+ / {
		for (i = 2; i <= 5; i++) if ($i ~ /^[0-9a-f]+$/ && length($i) <= 8) printf "%s", $i }'
}
sect_addr() { objdump -h "$1" | awk -v s="$2" '$2 == s { print $4 }'; }
# le64 HEX OFFSET: little-endian u64 at byte OFFSET of HEX
le64() {
	local h=${1:$(($2 * 2)):16} out="" i
	for i in 7 6 5 4 3 2 1 0; do out+=${h:$((i * 2)):2}; done
	echo $((16#$out))
}
# bytes_before FILE ADDR N: the N bytes before ADDR, hex without spaces
bytes_before() {
	objdump -s --start-address=$(($2 - $3)) --stop-address=$2 -j .text "$1" |
		awk '/^ [0-9a-f]+ / { for (i = 2; i <= 5; i++) if ($i ~ /^[0-9a-f]+$/) printf "%s", $i }'
}

cs_hex=$(sect_hex "$W" __rseq_cs)
ptr_hex=$(sect_hex "$W" __rseq_cs_ptr_array)
exit_hex=$(sect_hex "$W" __rseq_exit_point_array)
cs_base=$((16#$(sect_addr "$W" __rseq_cs)))
check "__rseq_cs holds 3 descriptors" test "${#cs_hex}" -eq $((3 * 64))
check "__rseq_cs_ptr_array holds 3 pointers" test "${#ptr_hex}" -eq $((3 * 16))
check "__rseq_exit_point_array holds 1 exit point" test "${#exit_hex}" -eq 32
i=0
for name in counter tcmalloc condexit; do
	start=$((16#$(symaddr "$W" rseq_start_$name)))
	post=$((16#$(symaddr "$W" rseq_post_commit_$name)))
	abort=$((16#$(symaddr "$W" rseq_abort_$name)))
	off=$((i * 32))
	desc="$(le64 "$cs_hex" $off)/$(le64 "$cs_hex" $((off + 8)))/$(le64 "$cs_hex" $((off + 16)))"
	desc+="/$(le64 "$cs_hex" $((off + 24)))"
	check "descriptor $name matches the rseq_*_$name labels" \
		test "$desc" = "0/$start/$((post - start))/$abort"
	check "pointer array slot $i points at the $name descriptor" \
		test "$(le64 "$ptr_hex" $((i * 8)))" -eq $((cs_base + off))
	sig=$(bytes_before "$W" "$abort" 4)
	check "signature 53 30 05 53 before rseq_abort_$name" test "$sig" = 53300553
	wrap=$(bytes_before "$W" "$abort" 7)
	case $name in
	tcmalloc) want=0f1f0553300553 ;;
	*) want=0fb93d53300553 ;;
	esac
	check "rseq_abort_$name signature wrapped as in its style ($want)" test "$wrap" = "$want"
	check "rseq_abort_$name lies outside its section" \
		bash -c "[ $abort -lt $start ] || [ $abort -ge $post ]"
	last=$(objdump -d --no-show-raw-insn --start-address=$start --stop-address=$post "$W" |
		awk -F'\t' '/^ +[0-9a-f]+:/ { l = $2 } END { print l }')
	check "$name: the last instruction of the section is the commit store ($last)" \
		grep -qE '^mov +%r[a-z0-9]+,.*\(' <<<"$last"
	src=$(addr2line -e "$W" "$(printf '0x%x' "$start")")
	check "$name: line info of the start points into rseq_workload.S" \
		grep -q 'rseq_workload\.S:[0-9]' <<<"$src"
	i=$((i + 1))
done
check "exit point is (rseq_start_counter, rseq_exit_counter)" \
	test "$(le64 "$exit_hex" 0)/$(le64 "$exit_hex" 8)" = \
	"$((16#$(symaddr "$W" rseq_start_counter)))/$((16#$(symaddr "$W" rseq_exit_counter)))"
ce_start=$((16#$(symaddr "$W" rseq_start_condexit)))
ce_post=$((16#$(symaddr "$W" rseq_post_commit_condexit)))
ce_exit=$(printf %x $((16#$(symaddr "$W" rseq_exit_condexit))))
check "wl_condexit: a conditional branch inside the section leaves to rseq_exit_condexit" \
	bash -c "objdump -d --start-address=$ce_start --stop-address=$ce_post '$W' |
		grep -qE 'j[a-z]+ +$ce_exit <rseq_exit_condexit>'"
for f in wl_counter_add wl_tcmalloc_push wl_condexit; do
	check "$f is a sized function symbol" \
		bash -c "readelf -sW '$W' | awk '\$8 == \"$f\" && \$4 == \"FUNC\" && \$3 > 0' | grep -q ."
done
check "sections carry CFI (.eh_frame covers wl_counter_add)" \
	bash -c "readelf --debug-dump=frames '$W' | grep -qi 'pc=0*$(symaddr "$W" wl_counter_add)'"

# --- the bundled example --------------------------------------------------------------------
"$EX" --threads 2 --iters 100000 >"$TMP/ex"
rc=$?
check "percpu_counter exits 0 with result=ok" \
	bash -c "[ $rc -eq 0 ] && grep -qx 'result=ok' '$TMP/ex'"
start_waiting ex "$EX" --wait --threads 1 --iters 1000
expid=$wpid
wait_line "$TMP/ex.out" '^ready$'
mapfile -t lines <"$TMP/ex.out"
check "percpu_counter --wait: two cs lines then ready" \
	bash -c "[ ${#lines[@]} -eq 3 ] && [ '${lines[2]:-}' = ready ]"
base=$(awk -v exe="$(readlink -f "$EX")" '$6 == exe && $3 == "00000000" {
	split($1, a, "-"); print a[1]; exit }' "/proc/$expid/maps")
ex_hex=$(sect_hex "$EX" __rseq_cs)
i=0
for func in percpu_inc percpu_add; do
	off=$((i * 32))
	start=$(($(le64 "$ex_hex" $((off + 8))) + 16#$base))
	post=$((start + $(le64 "$ex_hex" $((off + 16)))))
	abort=$(($(le64 "$ex_hex" $((off + 24))) + 16#$base))
	want=$(printf 'cs %s start=0x%x post_commit=0x%x abort=0x%x' "$func" $start $post $abort)
	check "percpu_counter --wait: $func at its runtime addresses" \
		test "${lines[$i]:-}" = "$want"
	i=$((i + 1))
done
exec {hold}>&-
wait "$expid"
rc=$?
check "percpu_counter --wait runs once stdin closes" \
	bash -c "[ $rc -eq 0 ] && grep -qx 'result=ok' '$TMP/ex.out'"
finish
