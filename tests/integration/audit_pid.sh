#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg audit --pid on running processes: the example program's module audits clean and its
# threads registered the x86 signature; a static program that registers rseq itself with
# another signature gets RSEQ012 (its twin with the right one, nothing). Apart from audit.sh
# because the kernel matrix runs it in every guest: it needs ptrace and the kernel's rseq.
source "$(dirname "$0")/../lib.sh"

# the system interpreter directly: version-manager shims cost a second per call here
[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

cd "$TOP" || exit 2
B=$TMP/fix
EX=$BUILD/examples/percpu_counter

if [ ! -x "$RSEQDBG" ]; then
	fail "rseqdbg is built" "$RSEQDBG missing"
	finish
	exit
fi

# run NAME ARGS...: rseqdbg with stdout, stderr and exit status in $TMP/NAME.{out,err,rc}
run() {
	local n=$1
	shift
	"$RSEQDBG" "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
	echo $? >"$TMP/$n.rc"
}
rc() { cat "$TMP/$1.rc"; }

# --- --pid ----------------------------------------------------------------------------------
if ! have_ptrace; then
	skip "audit --pid" "ptrace not permitted"
	finish
	exit
fi
# start_wait NAME CMD...: run CMD with a held stdin; $pid set once it said "ready"
start_wait() {
	local n=$1
	shift
	mkfifo "$TMP/$n.in"
	"$@" <"$TMP/$n.in" >"$TMP/$n.prog" 2>&1 &
	pid=$!
	exec {holder}>"$TMP/$n.in"
	wait_for -q -p "$pid" 5 "$n's ready line" file_has ready "$TMP/$n.prog"
}
if [ -x "$EX" ] && start_wait pc "$EX" --wait; then
	run pid-ex --json audit --pid "$pid"
	run pid-ex-text audit --pid "$pid"
	exec {holder}>&-
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	check "--pid percpu_counter: exit 0" test "$(rc pid-ex)" -eq 0
	if python3 - "$TMP/pid-ex.out" "$pid" "$EX" "$RSEQ_SIG_HEX" <<'EOF'; then
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["pid"] == int(sys.argv[2])
assert d["threads"] and all(t["signature"] == int(sys.argv[4], 16) for t in d["threads"]), d["threads"]
mods = {os.path.realpath(m["path"]): m for m in d["modules"]}
m = mods[os.path.realpath(sys.argv[3])]
assert m["sections"] == 2 and m["findings"] == [], m
assert all(f["check"] != "RSEQ012" for u in d["modules"] for f in u["findings"])
EOF
		pass "--pid percpu_counter: its module audits clean, threads registered $RSEQ_SIG_HEX"
	else
		fail "--pid percpu_counter: its module audits clean, threads registered $RSEQ_SIG_HEX" \
			"$(head -c 300 "$TMP/pid-ex.out") $(head -c 200 "$TMP/pid-ex.err")"
	fi
	check "--pid (text): names the threads' signatures" \
		grep -qE "^pid [0-9]+: tid [0-9]+ signature $RSEQ_SIG_HEX" "$TMP/pid-ex-text.out"
else
	fail "--pid percpu_counter" "percpu_counter --wait did not get ready"
	exec {holder}>&- 2>/dev/null
	kill "$pid" 2>/dev/null
fi

# The static program of the RSEQ012 fixture, with the defect (-bad) and without (-clean), as
# make tests builds it for the architecture (tests/fixtures/audit/[ARCH/]rseq012-registered.S)
mkdir -p "$B"
for v in bad clean; do
	cp "$BUILD/tests/fixtures/rseq012-registered-$v" "$B/" 2>"$TMP/build.log" ||
		fail "build rseq012-registered-$v" "$(head -c 300 "$TMP/build.log") (make tests)"
done

# A static program that registers rseq itself: with 0x11223344 (-bad), its section carrying
# the architecture's signature gets RSEQ012; with that signature (-clean), none.
for v in bad clean; do
	p=$B/rseq012-registered-$v
	"$p" &
	pid=$!
	# wait until it sits in pause(2) (registered), or died because rseq was refused
	wait_for -q -p "$pid" -i 0.02 2 "rseq012-registered-$v to sleep" \
		file_has -E '^State:\s+S' "/proc/$pid/status"
	if ! kill -0 "$pid" 2>/dev/null; then
		skip "--pid rseq012-registered-$v" "the kernel refused rseq registration"
		continue
	fi
	run pid-$v --json audit --pid "$pid"
	kill "$pid"
	wait "$pid" 2>/dev/null
	want=""
	[ $v = bad ] && want="RSEQ012"
	got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(f["check"] for u in d["modules"] for f in u["findings"])))' \
		"$TMP/pid-$v.out" 2>/dev/null)
	if [ "$got" = "$want" ]; then
		pass "--pid rseq012-registered-$v: findings {$want}"
	else
		fail "--pid rseq012-registered-$v: findings {$want}" "got {$got} $(head -c 200 "$TMP/pid-$v.err")"
	fi
	want=0
	[ $v = bad ] && want=1
	check "--pid rseq012-registered-$v: exit $want" test "$(rc pid-$v)" -eq $want
done
finish
