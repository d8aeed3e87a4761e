#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg audit: every check fires on its fixture and not on the clean twin, at the address
# the fixture marks (audit_expect, read with nm); exact check ids on the scan fixtures and the
# workloads; golden human, JSON and SARIF outputs; exit codes per --fail-on; usage errors
# (audit_pid.sh: --pid on running processes). AUDIT_UPDATE_GOLDEN=1 rewrites the goldens (review the diff).
source "$(dirname "$0")/../lib.sh"

# the system interpreter directly: version-manager shims cost a second per call here
[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

cd "$TOP" || exit 2
SRC=tests/fixtures/audit
GOLD=$TOP/tests/golden/audit
B=$TMP/fix

if [ ! -x "$RSEQDBG" ]; then
	fail "rseqdbg is built" "$RSEQDBG missing"
	finish
	exit
fi

# run NAME ARGS...: rseqdbg with stdout, stderr and exit status in $TMP/NAME.{out,err,rc}
# (NAME may hold '/' and spaces: the files use it with those replaced)
fname() { echo "${1//[^A-Za-z0-9._-]/_}"; }
run() {
	local n
	n=$(fname "$1")
	shift
	"$RSEQDBG" "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
	echo $? >"$TMP/$n.rc"
}
rc() { cat "$TMP/$(fname "$1").rc"; }

# The check ids of a JSON document, sorted, one per finding, space separated.
ids_of() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
units = d.get("files", d.get("modules", []))
print(" ".join(sorted(f["check"] for u in units for f in u["findings"])))' "$1"
}

# expect_ids NAME WANT ARGS...: audit --json ARGS gives exactly the ids WANT
expect_ids() {
	local n=$1 want=$2 got f
	shift 2
	f=$TMP/$(fname "$n")
	run "$n" --json audit "$@"
	got=$(ids_of "$f.out" 2>/dev/null)
	if [ "$got" = "$want" ]; then
		pass "$n: findings {$want}"
	else
		fail "$n: findings {$want}" "got {$got} (rc $(rc "$n"): $(head -c 200 "$f.err"))"
	fi
}

# --- build the x86_64 fixtures, each with the defect (-bad) and without (-clean) ------------
mkdir -p "$B"
built=1
for s in "$SRC"/rseq*.S; do
	n=$(basename "$s" .S)
	for v in bad clean; do
		d=
		[ $v = bad ] && d=-DBAD
		# from the source directory, with a prefix map: DWARF names "rseqNNN-x.S" alone
		if ! (cd "$SRC" && gcc -c -g $d -Wa,--debug-prefix-map="$PWD"=. "$n.S" \
			-o "$B/$n-$v.o" && ld --build-id=none -o "$B/$n-$v" "$B/$n-$v.o") \
			>"$TMP/build.log" 2>&1; then
			built=0
			fail "build $n-$v" "$(head -c 300 "$TMP/build.log")"
		fi
	done
done
[ $built = 1 ] && pass "x86_64 audit fixtures build"

# --- each check on its fixture ---------------------------------------------------------------
# Expected ids of each -bad fixture; every -clean twin has none. Where a defect brings
# others with it, the reason:
#   rseq003: the 32-byte stride walk of __rseq_cs reads the 8 pad bytes and the misaligned
#            descriptor as two bogus descriptors (start_ip 0): they fail the descriptor checks
#            (version, empty, abort inside, not executable, signature unreadable), are not in
#            the pointer array, and the one spanning [0, 0x401030) overlaps the real one. The
#            pointer to the misaligned descriptor lands inside the first of them (RSEQ020).
#   rseq020: the bad pointer is 8 bytes past a descriptor: what it points at is misaligned too
#            (RSEQ003); no other check runs on bytes that are no descriptor.
#   rseq011: x86 knows one signature, so the odd one out is also unknown (RSEQ010).
#   rseq026: the exit the missing array would declare is an undeclared branch (RSEQ037).
declare -A WANT=(
	[rseq001-version]="RSEQ001"
	[rseq002-flags]="RSEQ002"
	[rseq003-align]="RSEQ001 RSEQ003 RSEQ004 RSEQ006 RSEQ007 RSEQ007 RSEQ007 RSEQ007 RSEQ010 RSEQ010 RSEQ020 RSEQ021 RSEQ021 RSEQ027"
	[rseq004-empty]="RSEQ004"
	[rseq005-overflow]="RSEQ005"
	[rseq006-abort-inside]="RSEQ006"
	[rseq007-not-exec]="RSEQ007"
	[rseq010-signature]="RSEQ010"
	[rseq011-signatures-differ]="RSEQ010 RSEQ011"
	[rseq012-registered]=""
	[rseq020-ptr-dangling]="RSEQ003 RSEQ020"
	[rseq021-unlisted]="RSEQ021"
	[rseq022-duplicate]="RSEQ022"
	[rseq023-exit-no-section]="RSEQ023"
	[rseq024-exit-inside]="RSEQ024"
	[rseq025-no-ptr-array]="RSEQ025"
	[rseq026-no-exit-array]="RSEQ026 RSEQ037"
	[rseq027-overlap]="RSEQ027"
	[rseq030-post-commit-boundary]="RSEQ030"
	[rseq031-abort-boundary]="RSEQ031"
	[rseq032-call]="RSEQ032"
	[rseq033-syscall]="RSEQ033"
	[rseq034-trap]="RSEQ034"
	[rseq035-return]="RSEQ035"
	[rseq036-stack-pointer]="RSEQ036"
	[rseq037-undeclared-exit]="RSEQ037"
	[rseq037-exit-stub]="RSEQ037"
	[rseq038-jump-into]="RSEQ038"
	[rseq039-spans-functions]="RSEQ039"
	[rseq040-no-commit]="RSEQ040"
	[rseq050-orphan]="RSEQ050"
)
# The severity of each check as the issue of each defect warrants (not read from the tool).
declare -A SEV=(
	[RSEQ001]=error [RSEQ002]=error [RSEQ003]=warning [RSEQ004]=error [RSEQ005]=error
	[RSEQ006]=error [RSEQ007]=error [RSEQ010]=error [RSEQ011]=error [RSEQ012]=error
	[RSEQ020]=error [RSEQ021]=warning [RSEQ022]=warning [RSEQ023]=warning [RSEQ024]=warning
	[RSEQ025]=info [RSEQ026]=info [RSEQ027]=warning [RSEQ030]=error [RSEQ031]=error
	[RSEQ032]=error [RSEQ033]=error [RSEQ034]=error [RSEQ035]=warning [RSEQ036]=warning
	[RSEQ037]=warning [RSEQ038]=error [RSEQ039]=warning [RSEQ040]=warning [RSEQ050]=info
)

cd "$B" || exit 2
for s in "$TOP/$SRC"/rseq*.S; do
	n=$(basename "$s" .S)
	expect_ids "$n-bad" "${WANT[$n]}" "$n-bad"
	expect_ids "$n-clean" "" "$n-clean"
	# the finding of the fixture's own check points at audit_expect (nm, not the tool)
	id=RSEQ${n:4:3}
	want=$(nm "$n-bad" | awk '$3 == "audit_expect" { print $1 }')
	[ -n "$want" ] || continue
	got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%016x" % f["addr"] for u in d["files"] for f in u["findings"]
	       if f["check"] == sys.argv[2]))' "$TMP/$n-bad.out" "$id")
	if grep -qw "$want" <<<"$got"; then
		pass "$n-bad: $id points at audit_expect"
	else
		fail "$n-bad: $id points at audit_expect" "want $want, got {$got}"
	fi
done

# --- exit codes per --fail-on ----------------------------------------------------------------
# Worst severity of each fixture from the table above; exit 1 when at or above the level.
rank() { case $1 in error) echo 2 ;; warning) echo 1 ;; info) echo 0 ;; *) echo -1 ;; esac; }
fails_before=$_fails
for n in "${!WANT[@]}"; do
	worst=-1
	for id in ${WANT[$n]}; do
		r=$(rank "${SEV[$id]}")
		[ "$r" -gt "$worst" ] && worst=$r
	done
	for lvl in error warning info; do
		want=0
		[ "$worst" -ge "$(rank $lvl)" ] && want=1
		"$RSEQDBG" audit --fail-on $lvl "$n-bad" >/dev/null 2>&1
		got=$?
		[ "$got" = "$want" ] || fail "$n-bad --fail-on $lvl exits $want" "exited $got"
	done
	# no finding at all: 0 even at the lowest level
	"$RSEQDBG" audit --fail-on info "$n-clean" >/dev/null 2>&1
	got=$?
	[ "$got" = 0 ] || fail "$n-clean --fail-on info exits 0" "exited $got"
done
# one pass for the loop, and only when none of its cases failed
[ "$_fails" -eq "$fails_before" ] &&
	pass "exit codes for --fail-on error, warning and info on every fixture"
run default-fail audit rseq037-undeclared-exit-bad
check "default --fail-on is error (a warning exits 0)" test "$(rc default-fail)" -eq 0

# --- severities, --list-checks ---------------------------------------------------------------
run list --json audit --list-checks
if python3 - "$TMP/list.out" "$(declare -p SEV)" <<'EOF'; then
import json, re, sys
d = json.load(open(sys.argv[1]))["checks"]
want = dict(re.findall(r'\[(RSEQ\d+)\]="?(\w+)', sys.argv[2]))
got = {c["id"]: c["severity"] for c in d}
assert got == want, (got, want)
for c in d:
    assert all(c[k].strip() for k in ("id", "group", "severity", "title", "description", "hint")), c
    assert c["group"] in ("descriptor", "signature", "tables", "code", "orphans"), c
EOF
	pass "--list-checks documents every check with its severity, title, description and hint"
else
	fail "--list-checks documents every check with its severity, title, description and hint"
fi
run list-human audit --list-checks
check "--list-checks (text) names all ${#SEV[@]} checks" \
	test "$(grep -cE '^RSEQ[0-9]{3}  ' "$TMP/list-human.out")" -eq "${#SEV[@]}"

# --- --check and --skip ----------------------------------------------------------------------
expect_ids skip-own "" --skip RSEQ032 rseq032-call-bad
expect_ids check-other "" --check RSEQ001 rseq032-call-bad
expect_ids check-own "RSEQ032" --check RSEQ032 --check RSEQ001 rseq032-call-bad
expect_ids check-lowercase "RSEQ032" --check rseq032 rseq032-call-bad
run skip-exit audit --skip RSEQ032 rseq032-call-bad
check "--skip of the only error exits 0" test "$(rc skip-exit)" -eq 0

# --- several files: grouped by file, summary per file -----------------------------------------
run multi audit rseq032-call-bad rseq037-undeclared-exit-bad rseq001-version-clean
check "several files: one summary line per file" \
	test "$(grep -v '^total:' "$TMP/multi.out" | grep -cE '^[^ ].*: [0-9]+ errors?, [0-9]+ warnings?, [0-9]+ info$')" -eq 3
check "several files: exit 1 (an error in one of them)" test "$(rc multi)" -eq 1
check "several files: findings of the second file under it" \
	bash -c "sed -n '/^rseq037-undeclared-exit-bad (/,/^rseq037-undeclared-exit-bad:/p' '$TMP/multi.out' | grep -q RSEQ037"

# --- SARIF: rules, results, source lines from the fixture's own text ---------------------------
run sarif audit --sarif rseq032-call-bad rseq025-no-ptr-array-bad
start_line=$(($(grep -n '^rseq_start_f:' "$TOP/$SRC/rseq032-call.S" | cut -d: -f1) + 1))
if python3 - "$TMP/sarif.out" "$start_line" <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "2.1.0" and "sarif-2.1.0" in d["$schema"]
run = d["runs"][0]
rules = run["tool"]["driver"]["rules"]
ids = [r["id"] for r in rules]
assert len(ids) == len(set(ids)) == 30, ids
for r in rules:
    assert r["shortDescription"]["text"] and r["help"]["text"], r
res = run["results"]
assert sorted(r["ruleId"] for r in res) == ["RSEQ025", "RSEQ032"], res
for r in res:
    assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    assert r["level"] in ("error", "warning", "note")
call = [r for r in res if r["ruleId"] == "RSEQ032"][0]
assert call["level"] == "error"
pl = call["locations"][0]["physicalLocation"]
assert pl["artifactLocation"]["uri"].endswith("rseq032-call.S"), pl
assert pl["region"]["startLine"] == int(sys.argv[2]), (pl, sys.argv[2])
assert call["locations"][0]["logicalLocations"][0]["name"] == "f"
info = [r for r in res if r["ruleId"] == "RSEQ025"][0]
assert info["level"] == "note"
EOF
	pass "--sarif: 2.1.0 rules and results, source line of the section from the .S file"
else
	fail "--sarif: 2.1.0 rules and results, source line of the section from the .S file"
fi
check "--sarif exits like the text output" test "$(rc sarif)" -eq 1

# --- JSON fields -----------------------------------------------------------------------------
run json --json audit rseq032-call-bad
call_addr=$(nm rseq032-call-bad | awk '$3 == "audit_expect" { print $1 }')
start_addr=$(nm rseq032-call-bad | awk '$3 == "rseq_start_f" { print $1 }')
if python3 - "$TMP/json.out" "$call_addr" "$start_addr" "$start_line" <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"][0]
assert f["path"] == "rseq032-call-bad" and f["arch"] == "x86_64" and f["sections"] == 2
assert f["summary"] == {"errors": 1, "warnings": 0, "info": 0}
x = f["findings"][0]
assert x["check"] == "RSEQ032" and x["severity"] == "error"
assert x["addr"] == int(sys.argv[2], 16) and x["start_ip"] == int(sys.argv[3], 16)
loc = x["location"]
assert loc["addr"] == x["start_ip"] and loc["function"] == "f" and loc["file"].endswith("rseq032-call.S")
assert loc["line"] == int(sys.argv[4])
assert "section f (rseq032-call.S:%s)" % sys.argv[4] in x["message"] and x["hint"]
assert d["summary"]["errors"] == 1 and d["fail_on"] == "error"
EOF
	pass "--json: check, severity, message, hint, addr, start_ip, and the location: function, file, line"
else
	fail "--json: check, severity, message, hint, addr, start_ip, and the location: function, file, line"
fi

# --- golden outputs (messages, grouping, formats), byte for byte -----------------------------
# The tool's version in SARIF's driver is @VERSION@ in the golden files: it is debian/changelog's.
version=$(sed -n '1s/^rseqdbg (\([^)]*\)).*/\1/p' "$TOP/debian/changelog")
golden() { # NAME ARGS...
	local n=$1
	shift
	"$RSEQDBG" "$@" 2>/dev/null |
		sed "s/^\( *\"version\": \)\"$version\",\$/\1\"@VERSION@\",/" >"$TMP/g.out"
	if [ "${AUDIT_UPDATE_GOLDEN:-0}" = 1 ]; then
		mkdir -p "$GOLD"
		cp "$TMP/g.out" "$GOLD/$n"
	fi
	if cmp -s "$TMP/g.out" "$GOLD/$n"; then
		pass "golden $n"
	else
		fail "golden $n" "$(diff "$GOLD/$n" "$TMP/g.out" 2>&1 | head -5 | tr '\n' '|')"
	fi
}
for n in "${!WANT[@]}"; do
	golden "$n.txt" audit "$n-bad"
done
golden clean.txt audit rseq032-call-clean
golden multi.txt audit rseq032-call-bad rseq037-undeclared-exit-bad rseq025-no-ptr-array-bad
golden multi.json --pretty audit rseq032-call-bad rseq037-undeclared-exit-bad rseq025-no-ptr-array-bad
golden multi.sarif --pretty audit --sarif rseq032-call-bad rseq037-undeclared-exit-bad rseq025-no-ptr-array-bad
golden list-checks.txt audit --list-checks
cd "$TOP" || exit 2
golden aarch64.txt audit $SRC/aarch64/clean $SRC/aarch64/call $SRC/aarch64/svc $SRC/aarch64/sp \
	$SRC/aarch64/sig $SRC/aarch64/nocommit $SRC/aarch64/undeclared

# --- aarch64 (committed, scripts/gen-audit-fixtures.sh) --------------------------------------
A=$SRC/aarch64
declare -A AWANT=([clean]="" [call]="RSEQ032" [svc]="RSEQ033" [sp]="RSEQ036" [sig]="RSEQ010"
	[nocommit]="RSEQ040" [undeclared]="RSEQ037")
for v in "${!AWANT[@]}"; do
	expect_ids "aarch64-$v" "${AWANT[$v]}" "$A/$v"
	[ "$v" = clean ] && continue
	want=$(nm "$A/$v" | awk '$3 == "audit_expect" { print $1 }')
	got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%016x" % f["addr"] for u in d["files"] for f in u["findings"]))' \
		"$TMP/aarch64-$v.out")
	# the signature finding points at the 4 bytes before abort_ip, not at audit_expect
	[ "$v" = sig ] && want=$(printf '%016x' $((0x$(nm "$A/$v" | awk '$3 == "rseq_abort_f" { print $1 }') - 4)))
	[ "$v" = nocommit ] && want=$(printf '%016x' $((0x$(nm "$A/$v" | awk '$3 == "rseq_post_commit_f" { print $1 }') - 4)))
	if [ "$got" = "$want" ]; then pass "aarch64-$v: finding at $want (nm)"
	else fail "aarch64-$v: finding at $want (nm)" "got $got"; fi
done

# --- the scan fixtures: exactly what is true of them ------------------------------------------
# Every fixture of tests/fixtures/bin has a "dup" section listed twice in the pointer array
# (RSEQ022). The generic sources (every architecture but x86_64) make each section of adds
# only (A_WORK), so none of their 3 sections ends with a store (3 x RSEQ040), except riscv64,
# whose code capstone 4 cannot decode, and the unknown machine. With --gc-sections the pointer
# and exit-point arrays are gone (RSEQ025; RSEQ026 as inc and cmpxchg branch to exits: 3 x
# RSEQ037). table2018's section retries by branching back before its start (RSEQ037);
# sections2015 is the 2015 RFC layout (restart == begin, no signature: those checks do not
# apply) whose sections branch to labels no table declares (5 x RSEQ037); table2016 is clean.
FB=tests/fixtures/bin
GEN="RSEQ022 RSEQ040 RSEQ040 RSEQ040"
for arch in aarch64 arm armeb i386 ppc ppc64 ppc64le s390x; do
	for f in "$FB/$arch"/*; do
		expect_ids "scan fixture $arch/$(basename "$f")" "$GEN" "$f"
	done
done
for f in "$FB"/riscv64/* "$FB"/unknown/*; do
	expect_ids "scan fixture ${f#"$FB"/}" "RSEQ022" "$f"
done
run riscv audit "$FB/riscv64/cs-pie"
check "riscv64: code checks are said to be skipped (not decoded)" \
	grep -q 'code checks skipped: riscv: not decoded' "$TMP/riscv.out"
for f in cs.o cs.so cs-pie cs-pie-dwarf cs-nopie cs-static cs-lld-pie cs-relr; do
	expect_ids "scan fixture x86_64/$f" "RSEQ022" "$FB/x86_64/$f"
done
for f in cs-gc cs-lld-gc; do
	expect_ids "scan fixture x86_64/$f" "RSEQ025 RSEQ026 RSEQ037 RSEQ037 RSEQ037" "$FB/x86_64/$f"
done
expect_ids "scan fixture x86_64/table2018" "RSEQ037" "$FB/x86_64/table2018"
expect_ids "scan fixture x86_64/table2016" "" "$FB/x86_64/table2016"
expect_ids "scan fixture x86_64/sections2015" "RSEQ037 RSEQ037 RSEQ037 RSEQ037 RSEQ037" \
	"$FB/x86_64/sections2015"
for f in "$FB"/symbols/*; do
	[ -f "$f" ] && expect_ids "scan fixture symbols/$(basename "$f")" "" "$f"
done

# --- the project's workloads ---------------------------------------------------------------
# rseq_workload's wl_condexit leaves its section by a branch no table declares, on purpose
# (it exercises that path in the tracer and stepper): one RSEQ037 warning, no error, exit 0.
WL=$BUILD/tests/workloads/rseq_workload
EX=$BUILD/examples/percpu_counter
if [ -x "$WL" ]; then
	expect_ids "rseq_workload" "RSEQ037" "$WL"
	run wl audit "$WL"
	check "rseq_workload: exit 0 (no error)" test "$(rc wl)" -eq 0
	check "rseq_workload: the warning names wl_condexit" grep -q 'section wl_condexit' "$TMP/wl.out"
else
	fail "rseq_workload audits" "$WL not built"
fi
if [ -x "$EX" ]; then
	expect_ids "percpu_counter" "" "$EX"
	run ex audit --fail-on info "$EX"
	check "percpu_counter: clean at --fail-on info" test "$(rc ex)" -eq 0
else
	fail "percpu_counter audits" "$EX not built"
fi

# --- errors: exit 2 and one line -------------------------------------------------------------
expect_error() { # NAME ARGS...
	local n=$1
	shift
	run "$n" "$@"
	if [ "$(rc "$n")" -eq 2 ] && [ "$(wc -l <"$TMP/$n.err")" -eq 1 ] &&
		grep -q '^rseqdbg: audit: ' "$TMP/$n.err"; then
		pass "error: $n"
	else
		fail "error: $n" "rc $(rc "$n"), stderr: $(head -c 200 "$TMP/$n.err")"
	fi
}
echo "not an ELF file" >"$TMP/text"
# Among several files one that is not ELF is skipped (bulk.sh): this one is ELF, cut short.
printf '\177ELF\2\1' >"$TMP/cut"
expect_error missing-file audit "$TMP/nonexistent"
expect_error not-elf audit "$TMP/text"
expect_error no-file audit
expect_error unknown-check audit --check RSEQ999 "$EX"
expect_error bad-fail-on audit --fail-on fatal "$EX"
expect_error unknown-option audit --frobnicate "$EX"
expect_error pid-and-file audit --pid 1 "$EX"
expect_error bad-pid audit --pid x
expect_error one-bad-of-two audit "$EX" "$TMP/cut"
check "a file that cannot be audited is named" grep -q "$TMP/cut" "$TMP/one-bad-of-two.err"
check "the file that can be audited still is" grep -q "^$EX: " "$TMP/one-bad-of-two.out"
check "the path is named once in the error line" \
	test "$(grep -o "$TMP/cut" "$TMP/one-bad-of-two.err" | wc -l)" -eq 1
run dir-error audit "$TMP"
check "a directory: one line, its path once" \
	test "$(rc dir-error)" -eq 2 -a "$(cat "$TMP/dir-error.err")" = "rseqdbg: audit: $TMP: is a directory, not an ELF file"
run json-error --json audit "$EX" "$TMP/cut"
check "JSON mode: the file's entry holds the error, the other file is audited" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
bad = [f for f in d["files"] if f["path"] == sys.argv[2]]
assert len(d["files"]) == 2 and "error" in bad[0] and "findings" in d["files"][0]' \
	"$TMP/json-error.out" "$TMP/cut"
run sarif-error audit --sarif "$EX" "$TMP/cut"
check "SARIF mode: the error is the invocation's notification" \
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
inv = r["invocations"][0]
assert inv["executionSuccessful"] is False
assert sys.argv[2] in inv["toolExecutionNotifications"][0]["message"]["text"]' \
	"$TMP/sarif-error.out" "$TMP/cut"
run help audit --help
check "audit --help exits 0" test "$(rc help)" -eq 0

finish
