#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg scan on files: help and usage errors, golden text and JSON outputs (checked by hand
# against nm and readelf), several files, a file without rseq, unreadable files mixed with
# good ones, --addr, and the JSON values against the fixtures' symbols read by nm.
source "$(dirname "$0")/../lib.sh"

cd "$TOP" || exit 2
GOLD=tests/golden/scan
X86=tests/fixtures/bin/x86_64

# run NAME ARGS...: rseqdbg with stdout, stderr and exit status in $TMP/NAME.{out,err,rc}
run() {
	local n=$1
	shift
	"$RSEQDBG" "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
	echo $? >"$TMP/$n.rc"
}
rc() { cat "$TMP/$1.rc"; }
lines() { wc -l <"$1" | tr -d ' '; }
json_ok() { python3 -m json.tool "$1" >/dev/null 2>&1; }

# expect_usage_error NAME ARGS...: exit 2, exactly one line on stderr, nothing on stdout
expect_usage_error() {
	local n=$1
	shift
	run "$n" "$@"
	if [ "$(rc "$n")" -eq 2 ] && [ "$(lines "$TMP/$n.err")" -eq 1 ] &&
		grep -q '^rseqdbg: scan: ' "$TMP/$n.err" && [ ! -s "$TMP/$n.out" ]; then
		pass "usage error: $n"
	else
		fail "usage error: $n" "rc $(rc "$n"), stderr: $(head -c 300 "$TMP/$n.err")"
	fi
}

if [ ! -x "$RSEQDBG" ]; then
	fail "rseqdbg is built" "$RSEQDBG missing"
	finish
	exit
fi

# --- help, version, usage errors --------------------------------------------------------------
run help scan --help
check "scan --help exits 0" test "$(rc help)" -eq 0
check "scan --help prints the usage" grep -q '^Usage: rseqdbg scan \[OPTIONS\] FILE\.\.\.' \
	"$TMP/help.out"
for opt in --json --pretty --addr --pid --no-debuginfo --debug-dir --help; do
	check "scan --help lists $opt" grep -q -- "$opt" "$TMP/help.out"
done
run h scan -h
check "scan -h is --help" cmp -s "$TMP/h.out" "$TMP/help.out"
run version --version
check "--version prints the version" grep -qxE 'rseqdbg [0-9]+\.[0-9]+\.[0-9]+' "$TMP/version.out"

expect_usage_error no-file scan
expect_usage_error unknown-option scan --frobnicate "$X86/cs-pie"
expect_usage_error missing-argument scan "$X86/cs-pie" --addr
expect_usage_error bad-addr scan --addr 0xzz "$X86/cs-pie"
expect_usage_error bad-pid scan --pid abc
expect_usage_error pid-and-file scan --pid 1 "$X86/cs-pie"
expect_usage_error pid-too-high scan --pid 4194305

# -p is --pid, as in gdb, strace and perf; indented JSON is --pretty, before or after the command
expect_usage_error old-pretty scan -p "$X86/cs-pie"
check "scan -p FILE says that -p is --pid and names --pretty" \
	grep -q -- "-p is --pid; indented JSON is --pretty" "$TMP/old-pretty.err"
run global-p -p scan "$X86/cs-pie"
check "rseqdbg -p COMMAND: exit 2, names --pretty, nothing on stdout" bash -c \
	"[ $(rc global-p) -eq 2 ] && grep -q -- --pretty '$TMP/global-p.err' && [ ! -s '$TMP/global-p.out' ]"
sleep 30 &
SLEEPER=$!
# Both scans must see the same program: sleep exec'd, not bash between fork and exec.
SLEEP_EXE=$(readlink -f "$(command -v sleep)")
# sleeping PID: PID runs sleep and sleeps
sleeping() {
	[ "$(readlink "/proc/$1/exe")" = "$SLEEP_EXE" ] &&
		grep -q '^State:[[:space:]]*S' "/proc/$1/status"
}
wait_for -p "$SLEEPER" 5 "sleep $SLEEPER to be exec'd and asleep" sleeping "$SLEEPER"
run short-pid scan -p "$SLEEPER" --json
run long-pid scan --pid "$SLEEPER" --json
kill "$SLEEPER" 2>/dev/null
wait "$SLEEPER" 2>/dev/null
# The same process, modules and threads; a thread's cpu_id may change between the two.
check "scan -p PID is scan --pid PID" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
tids = lambda d: [t["tid"] for t in d["threads"]]
sys.exit(not (a["pid"] == b["pid"] and a["modules"] == b["modules"] and tids(a) == tids(b)))' \
	"$TMP/short-pid.out" "$TMP/long-pid.out"
"$RSEQDBG" --pretty scan "$X86/cs-pie" >"$TMP/global-pretty.out" 2>/dev/null
"$RSEQDBG" scan --pretty "$X86/cs-pie" >"$TMP/cmd-pretty.out" 2>/dev/null
check "rseqdbg --pretty scan equals rseqdbg scan --pretty" \
	cmp -s "$TMP/global-pretty.out" "$TMP/cmd-pretty.out"

# --- golden outputs ---------------------------------------------------------------------------
# Paths are relative to the top of the tree so the outputs do not depend on where it lives.
golden() { # NAME FILE: text and pretty JSON compared byte for byte
	local n=$1 f=$2
	run "gold-$n-txt" scan "$f"
	if [ "$(rc "gold-$n-txt")" -eq 0 ] && diff -u "$GOLD/$n.txt" "$TMP/gold-$n-txt.out" \
		>"$TMP/gold-$n-txt.diff"; then
		pass "golden text: $n"
	else
		fail "golden text: $n" \
			"rc $(rc "gold-$n-txt"); $(head -n 20 "$TMP/gold-$n-txt.diff")"
	fi
	run "gold-$n-json" scan --pretty "$f"
	if [ "$(rc "gold-$n-json")" -eq 0 ] && diff -u "$GOLD/$n.json" "$TMP/gold-$n-json.out" \
		>"$TMP/gold-$n-json.diff"; then
		pass "golden JSON: $n"
	else
		fail "golden JSON: $n" \
			"rc $(rc "gold-$n-json"); $(head -n 20 "$TMP/gold-$n-json.diff")"
	fi
	# compact and pretty JSON are the same document
	run "compact-$n" scan --json "$f"
	check "compact JSON is one line and equals the pretty one: $n" python3 -c '
import json, sys
a, b = open(sys.argv[1]).read(), open(sys.argv[2]).read()
sys.exit(not (a.count("\n") == 1 and json.loads(a) == json.loads(b)))' \
		"$TMP/compact-$n.out" "$TMP/gold-$n-json.out"
	# the global option before the command means the same
	"$RSEQDBG" --json scan "$f" >"$TMP/global-$n.out" 2>/dev/null
	check "rseqdbg --json scan equals rseqdbg scan --json: $n" \
		cmp -s "$TMP/global-$n.out" "$TMP/compact-$n.out"
}
golden x86_64-cs-pie "$X86/cs-pie"
golden x86_64-cs-pie-dwarf "$X86/cs-pie-dwarf"

# --- the JSON values against the symbols (nm, independent of libelfscan) --------------------
# Every section's start, post-commit and abort equals the rseq_start_/post_commit_/abort_
# symbols of one id, every id is there, and each exit point is a rseq_exit_<id>[_N] symbol
# of the section's id.
symcheck() { # FILE
	local f=$1 n
	n=$(basename "$f")
	nm "$f" >"$TMP/nm-$n" 2>/dev/null || { fail "symbols: $f" "nm failed"; return; }
	"$RSEQDBG" scan --json "$f" >"$TMP/sym-$n.json" 2>/dev/null
	if python3 - "$TMP/nm-$n" "$TMP/sym-$n.json" >"$TMP/sym-$n.why" 2>&1 <<'EOF'; then
import json, re, sys
syms = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3:
        syms[p[2]] = int(p[0], 16)
ids = {}
for name, v in syms.items():
    m = re.match(r'rseq_(start|post_commit|abort)_([A-Za-z0-9]+)$', name)
    if m:
        ids.setdefault(m.group(2), {})[m.group(1)] = v
want = sorted((d['start'], d['post_commit'], d['abort']) for d in ids.values())
doc = json.load(open(sys.argv[2]))
secs = doc['files'][0]['sections']
got = sorted((s['start_ip'], s['post_commit_ip'], s['abort_ip']) for s in secs)
if got != want:
    sys.exit('sections %s, symbols say %s' % ([tuple(map(hex, t)) for t in got],
                                              [tuple(map(hex, t)) for t in want]))
for s in secs:
    if s['post_commit_ip'] - s['start_ip'] != s['post_commit_offset']:
        sys.exit('post_commit_offset of %#x' % s['start_ip'])
    sid = [i for i, d in ids.items() if d['start'] == s['start_ip']][0]
    exits = sorted(v for k, v in syms.items() if re.match(r'rseq_exit_%s(_\d+)?$' % sid, k))
    if sorted(e['exit_ip'] for e in s['exit_points']) != exits:
        sys.exit('exit points of %s' % sid)
    for e in s['exit_points']:
        if e['start_ip'] != s['start_ip'] or e['exit']['addr'] != e['exit_ip']:
            sys.exit('exit point of %s' % sid)
EOF
		pass "sections equal the symbols: $f"
	else
		fail "sections equal the symbols: $f" "$(head -c 400 "$TMP/sym-$n.why")"
	fi
}
symcheck "$X86/cs-pie"
symcheck "$X86/cs-pie-dwarf"
symcheck "$X86/cs-nopie"

# The signature bytes are the file's bytes before abort_ip: read them at the file offset that
# readelf -S gives for .text (independent of libelfscan).
sigbytes=$(readelf -SW "$X86/cs-pie" | python3 -c '
import json, re, sys
text = [l.split() for l in sys.stdin if re.search(r"\] \.text ", l)][0]
i = text.index(".text")
addr, off = int(text[i + 2], 16), int(text[i + 3], 16)
data = open(sys.argv[2], "rb").read()
doc = json.load(open(sys.argv[1]))
bad = [s["abort_ip"] for s in doc["files"][0]["sections"]
       if s["signature"]["bytes"] != data[s["abort_ip"] - 4 - addr + off:][:4].hex(" ")]
print("ok" if not bad else "differ at " + " ".join(map(hex, bad)))' "$TMP/sym-cs-pie.json" \
	"$X86/cs-pie")
check "signature bytes equal readelf's bytes before abort_ip" test "$sigbytes" = ok

# --- several files, no rseq, bad files --------------------------------------------------------
run multi scan "$X86/cs-pie" "$X86/table2018"
check "two files: exit 0" test "$(rc multi)" -eq 0
check "two files: both headers" bash -c "grep -qx '$X86/cs-pie' '$TMP/multi.out' &&
	grep -qx '$X86/table2018' '$TMP/multi.out'"
check "two files: one footer each" test "$(grep -c 'critical sections\?, ' "$TMP/multi.out")" -eq 2
run multi-json scan --json "$X86/cs-pie" "$X86/table2018"
check "two files: one JSON document with two files" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (len(d["files"]) == 2 and d["files"][1]["tables"] == ["__rseq_table(2018)"]))' \
	"$TMP/multi-json.out"

norseq=$(type -P true)
run norseq scan "$norseq"
check "file without rseq: exit 0" test "$(rc norseq)" -eq 0
check "file without rseq: says so" grep -qx '  no rseq critical sections' "$TMP/norseq.out"
check "file without rseq: nothing on stderr" test ! -s "$TMP/norseq.err"
run norseq-json scan --json "$norseq"
check "file without rseq: JSON with no sections" python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["files"][0]
sys.exit(not (f["sections"] == [] and f["tables"] == [] and f["exit_points"] == []))' \
	"$TMP/norseq-json.out"

# An ELF file cut short is bad; among several files one that is not ELF is skipped (bulk.sh).
printf '\177ELF\2\1' >"$TMP/cut"
printf 'not an ELF file\n' >"$TMP/text.txt"
run mixed scan "$X86/cs-pie" "$TMP/missing" "$TMP/text.txt" "$TMP/cut" "$X86/table2016"
check "good and bad files: exit 2" test "$(rc mixed)" -eq 2
check "good and bad files: one line per bad file" test "$(lines "$TMP/mixed.err")" -eq 2
check "good and bad files: lines name the files" bash -c "
	sed -n 1p '$TMP/mixed.err' | grep -q '^rseqdbg: scan: $TMP/missing: ' &&
	sed -n 2p '$TMP/mixed.err' | grep -q '^rseqdbg: scan: $TMP/cut: '"
check "good and bad files: good files still printed" bash -c "
	grep -qx '$X86/cs-pie' '$TMP/mixed.out' && grep -qx '$X86/table2016' '$TMP/mixed.out'"
run mixed-json scan --json "$X86/cs-pie" "$TMP/missing" "$X86/table2016"
check "good and bad files: JSON exit 2" test "$(rc mixed-json)" -eq 2
check "good and bad files: one JSON document, error entry in place" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"]
sys.exit(not (len(f) == 3 and f[0]["sections"] and "error" in f[1] and
              f[1]["path"].endswith("/missing") and f[2]["sections"]))' "$TMP/mixed-json.out"
run dir scan "$TMP"
check "a directory: exit 2 with one line" bash -c "[ \$(cat '$TMP/dir.rc') -eq 2 ] &&
	[ \$(wc -l <'$TMP/dir.err') -eq 1 ] && grep -q '^rseqdbg: scan: $TMP: ' '$TMP/dir.err'"

# --- --addr -----------------------------------------------------------------------------------
nm "$X86/cs-pie" >"$TMP/nm-pie"
sym() { awk -v n="$1" '$3 == n { print "0x" $1 }' "$TMP/nm-pie"; }
start=$(sym rseq_start_cmpxchg)
post=$(sym rseq_post_commit_cmpxchg)
inside=$(printf '%#x' $((start + 3)))
run addr scan --json --addr "$inside" "$X86/cs-pie"
check "--addr inside a section: exit 0" test "$(rc addr)" -eq 0
check "--addr inside a section: only that section" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["files"][0]["sections"]
sys.exit(not (len(s) == 1 and s[0]["start_ip"] == int(sys.argv[2], 16)))' "$TMP/addr.out" "$start"
run addr-end scan --json --addr "$post" "$X86/cs-pie"
check "--addr at post_commit_ip is outside the section" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["files"][0]["sections"]
sys.exit(any(x["start_ip"] == int(sys.argv[2], 16) for x in s))' "$TMP/addr-end.out" "$start"
run addr-none scan --addr 0x10 "$X86/cs-pie"
check "--addr in no section: exit 0" test "$(rc addr-none)" -eq 0
check "--addr in no section: says so" grep -qx '  no rseq critical section contains 0x10' \
	"$TMP/addr-none.out"
run addr-txt scan --addr "$inside" "$X86/cs-pie"
check "--addr text: one row" test "$(grep -cE '^ +[0-9]+  0x' "$TMP/addr-txt.out")" -eq 1

# --- debug information ------------------------------------------------------------------------
run nodbg scan --json --no-debuginfo "$X86/cs-pie-dwarf"
check "--no-debuginfo: no DWARF, functions still named" python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["files"][0]
s = f["sections"]
sys.exit(not (f["dwarf"] is False and s and all(x["start"]["file"] is None and
              x["start"]["line"] is None and x["start"]["function"] for x in s)))' \
	"$TMP/nodbg.out"
run dwarf scan --json "$X86/cs-pie-dwarf"
check "DWARF: start lines point into the assembly source" python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["files"][0]
sys.exit(not (f["dwarf"] and all(x["start"]["file"].endswith("cs-x86_64.S") and
              x["start"]["line"] > 0 for x in f["sections"])))' "$TMP/dwarf.out"
run debugdir scan --debug-dir "$TMP" --debug-dir /nonexistent "$X86/cs-pie"
check "--debug-dir (repeated, missing dirs) is accepted" test "$(rc debugdir)" -eq 0

# --- every JSON output above is valid JSON -----------------------------------------------------
bad=""
for f in "$TMP"/*.out; do
	grep -q '^[{[]' "$f" || continue
	json_ok "$f" || bad="$bad $(basename "$f")"
done
check "every JSON output parses (python3 -m json.tool)${bad:+: bad$bad}" test -z "$bad"

finish
