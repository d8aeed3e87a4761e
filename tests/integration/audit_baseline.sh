#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg audit --baseline and suppressions: a baseline made from one build lets a rebuild
# whose code moved report only its truly new finding (text, JSON, SARIF's baselineState new,
# unchanged and absent), --fail-on counts only new findings, suppressions accept the findings
# of a check in the functions of a module their globs name and no other, and a baseline or
# suppression file that cannot be used is one error line and exit 2. The programs are
# assembled here from one source: which sections have an undeclared exit (RSEQ037) is known
# from it, and nm tells that a rebuild moved them.
source "$(dirname "$0")/../lib.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

if [ ! -x "$RSEQDBG" ]; then
	fail "rseqdbg is built" "$RSEQDBG missing"
	finish
	exit
fi

# --- the programs: tcmalloc-style sections with an exit no table declares ------------------
# UNDECL f: a section in f that branches to a label __rseq_exit_point_array does not list,
# as tcmalloc's do (RSEQ037 once). PAD moves every function; NEW adds new_push, a new
# finding; NO_APP leaves app_push out.
cat >"$TMP/prog.S" <<'EOF'
#include "audit.inc"
	.macro	UNDECL name
	FUNC	\name
rseq_start_\name:
	movl	4(%rdi), %eax
	cmpl	%eax, %esi
	jne	rseq_exit_\name
	movq	%rdx, (%rcx)
rseq_post_commit_\name:
	ret
	SIGNATURE
rseq_abort_\name:
	jmp	\name
rseq_exit_\name:
	ret
	ENDF	\name
	DESC	.Lcs_\name, rseq_start_\name, rseq_post_commit_\name, rseq_abort_\name
	.endm

	FUNC	padding
	.fill	PAD, 1, 0x90
	ret
	ENDF	padding
	UNDECL	tcmalloc_push
	UNDECL	tcmalloc_pop
#ifndef NO_APP
	UNDECL	app_push
#endif
#ifdef NEW
	UNDECL	new_push
#endif
EOF
build() { # NAME CPP-FLAGS...
	local n=$1
	shift
	gcc -c -I"$TOP/tests/fixtures/audit" "$@" "$TMP/prog.S" -o "$TMP/$n.o" &&
		ld --build-id=sha1 -o "$TMP/$n" "$TMP/$n.o"
}
built=1
mkdir -p "$TMP/v1" "$TMP/v2" "$TMP/v3" "$TMP/v4"
build v1/libtcm.so -DPAD=16 || built=0
build v2/libtcm.so -DPAD=4096 || built=0
build v3/libtcm.so -DPAD=4096 -DNEW || built=0
build v4/libtcm.so -DPAD=300 -DNO_APP || built=0
cp "$TMP/v1/libtcm.so" "$TMP/v1/app"
if [ $built = 0 ]; then
	fail "the test programs build"
	finish
	exit
fi
addr() { nm "$1" | awk -v s="$2" '$3 == s { print $1 }'; }
if [ "$(addr "$TMP/v1/libtcm.so" tcmalloc_push)" != "$(addr "$TMP/v3/libtcm.so" tcmalloc_push)" ] &&
	[ "$(addr "$TMP/v1/libtcm.so" app_push)" != "$(addr "$TMP/v3/libtcm.so" app_push)" ]; then
	pass "the rebuilds move every section (nm)"
else
	fail "the rebuilds move every section (nm)"
fi

# run NAME ARGS...: rseqdbg with stdout, stderr and exit status in $TMP/NAME.{out,err,rc}
run() {
	local n=$1
	shift
	"$RSEQDBG" "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
	echo $? >"$TMP/$n.rc"
}
rc() { cat "$TMP/$1.rc"; }
# funcs NAME: the function of each finding of a JSON document, sorted, space separated
funcs() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(f["location"]["function"] for u in d["files"] for f in u["findings"])))' \
		"$TMP/$1.out"
}
# expect_funcs CASE NAME WANT: the findings of $TMP/NAME.out are in the functions WANT
expect_funcs() {
	local got
	got=$(funcs "$2" 2>&1)
	if [ "$got" = "$3" ]; then
		pass "$1: findings in {$3}"
	else
		fail "$1: findings in {$3}" "got {$got} (rc $(rc "$2"): $(head -c 200 "$TMP/$2.err"))"
	fi
}

cd "$TMP/v1" || exit 2
run base-sarif audit --sarif libtcm.so
run base-json audit --json libtcm.so
expect_funcs "without a baseline" base-json "app_push tcmalloc_pop tcmalloc_push"
run base-gate audit --fail-on warning --sarif libtcm.so
check "without a baseline, --fail-on warning exits 1" test "$(rc base-gate)" -eq 1
cp "$TMP/base-sarif.out" "$TMP/base.sarif"
cp "$TMP/base-json.out" "$TMP/base.json"
# The same baselines indented, and rewritten by another JSON writer (every string escaped
# as \uXXXX, "/" as "\/"): the reader takes any well-formed JSON.
"$RSEQDBG" audit --pretty --sarif libtcm.so >"$TMP/pretty.sarif"
python3 -c '
import json, sys
t = json.dumps(json.load(open(sys.argv[1])), indent="\t", ensure_ascii=True)
t = t.replace("/", "\\/").replace("RSEQ", "\\u0052SEQ")
open(sys.argv[2], "w").write(t)' "$TMP/base.json" "$TMP/escaped.json"
grep -q '\\u0052SEQ037\\/libtcm' "$TMP/escaped.json" ||
	fail "the escaped baseline holds escapes" "$(head -c 300 "$TMP/escaped.json")"

# --- a rebuild: the moved findings are the baseline's, the new one alone is reported -------
for fmt in sarif json; do
	cd "$TMP/v3" || exit 2
	run "new-$fmt" audit --json --baseline "$TMP/base.$fmt" libtcm.so
	expect_funcs "rebuild with one new finding, $fmt baseline" "new-$fmt" "new_push"
	check "rebuild, $fmt baseline: the summary counts 3 unchanged" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"] == {"errors": 0, "warnings": 1, "info": 0, "unchanged": 3}, d["summary"]
assert d["baseline"] == {"path": sys.argv[2], "unchanged": 3, "absent": 0}, d["baseline"]' \
		"$TMP/new-$fmt.out" "$TMP/base.$fmt"
	run "new-$fmt-fail" audit --fail-on warning --baseline "$TMP/base.$fmt" libtcm.so
	check "rebuild with a new warning, $fmt baseline: --fail-on warning exits 1" \
		test "$(rc "new-$fmt-fail")" -eq 1
	check "rebuild, $fmt baseline: the text names the new finding alone" \
		test "$(grep -c RSEQ037 "$TMP/new-$fmt-fail.out")" -eq 1 -a \
		"$(grep -c 'section new_push' "$TMP/new-$fmt-fail.out")" -eq 1
	check "rebuild, $fmt baseline: the summary line says 3 unchanged" \
		grep -qx 'libtcm.so: 0 errors, 1 warning, 0 info (3 unchanged from the baseline)' \
		"$TMP/new-$fmt-fail.out"
	cd "$TMP/v2" || exit 2
	run "moved-$fmt" audit --fail-on warning --baseline "$TMP/base.$fmt" libtcm.so
	check "rebuild that only moved code, $fmt baseline: exit 0 at --fail-on warning" \
		test "$(rc "moved-$fmt")" -eq 0
	check "rebuild that only moved code, $fmt baseline: no finding printed" \
		test "$(grep -c RSEQ "$TMP/moved-$fmt.out")" -eq 0
done
cd "$TMP/v3" || exit 2
for b in pretty.sarif escaped.json; do
	run "new-$b" audit --json --baseline "$TMP/$b" libtcm.so
	expect_funcs "rebuild, baseline $b" "new-$b" "new_push"
done
cd "$TMP/v2" || exit 2
run moved-nobase audit --fail-on warning libtcm.so
check "the same without the baseline exits 1 (its 3 warnings)" test "$(rc moved-nobase)" -eq 1

# --- SARIF: baselineState new, unchanged, absent; fingerprints ------------------------------
cd "$TMP/v3" || exit 2
run state-new audit --sarif --baseline "$TMP/base.sarif" libtcm.so
cd "$TMP/v4" || exit 2
run state-absent audit --sarif --baseline "$TMP/base.sarif" libtcm.so
if python3 - "$TMP/state-new.out" "$TMP/state-absent.out" <<'EOF'; then
import json, sys
def results(p):
    r = json.load(open(p))["runs"][0]["results"]
    for x in r:
        fp = x["partialFingerprints"]["rseqdbg/v1"]
        assert fp and x["fingerprints"]["rseqdbg/v1"] == fp, x
    return r
def func(x):
    ll = x["locations"][0].get("logicalLocations")
    return ll[0]["name"] if ll else x["message"]["text"]
new = results(sys.argv[1])
got = sorted((func(x), x["baselineState"]) for x in new)
assert got == [("app_push", "unchanged"), ("new_push", "new"), ("tcmalloc_pop", "unchanged"),
               ("tcmalloc_push", "unchanged")], got
absent = results(sys.argv[2])
got = sorted((x["baselineState"], x["ruleId"]) for x in absent)
assert got == [("absent", "RSEQ037"), ("unchanged", "RSEQ037"), ("unchanged", "RSEQ037")], got
gone = [x for x in absent if x["baselineState"] == "absent"][0]
assert "section app_push" in gone["message"]["text"], gone
assert gone["level"] == "warning" and gone["properties"]["binary"] == "libtcm.so", gone
EOF
	pass "--sarif --baseline: baselineState new, unchanged and absent (the section removed)"
else
	fail "--sarif --baseline: baselineState new, unchanged and absent (the section removed)"
fi
run absent-text audit --baseline "$TMP/base.sarif" libtcm.so
check "text: the baseline line counts the finding no longer found" \
	grep -qx "baseline $TMP/base.sarif: 2 findings unchanged, 1 no longer found" \
	"$TMP/absent-text.out"
# A log written with a baseline is a baseline too: its absent results are no findings.
cp "$TMP/state-absent.out" "$TMP/second.sarif"
cd "$TMP/v1" || exit 2
run second audit --json --baseline "$TMP/second.sarif" libtcm.so
expect_funcs "a SARIF log with absent results as the baseline" second "app_push"
# The baseline's findings of another file are not absent from a run that did not audit it.
run other-module audit --json --baseline "$TMP/base.sarif" app
check "another module: nothing is absent, all its findings are new" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["baseline"]["absent"] == 0 and d["summary"]["warnings"] == 3, d' "$TMP/other-module.out"

# --- suppressions: a check in the functions of a module ------------------------------------
cat >"$TMP/supp" <<'EOF'
# rseqdbg audit suppressions: CHECK MODULE FUNCTION [REASON]

RSEQ037	libtcm.so*	tcmalloc_*	tcmalloc declares no exit points (upstream)
EOF
rule_line=$(grep -n '^RSEQ037' "$TMP/supp" | cut -d: -f1)
run supp-json audit --json --suppressions "$TMP/supp" libtcm.so app
check "suppressions: tcmalloc_* in libtcm.so* only; app_push and the other module reported" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
got = {u["path"]: sorted(f["location"]["function"] for f in u["findings"]) for u in d["files"]}
assert got == {"libtcm.so": ["app_push"],
               "app": ["app_push", "tcmalloc_pop", "tcmalloc_push"]}, got
assert [u["summary"]["suppressed"] for u in d["files"]] == [2, 0], d
assert d["summary"]["suppressed"] == 2 and d["summary"]["warnings"] == 4, d["summary"]' \
	"$TMP/supp-json.out"
run supp-sarif audit --sarif --suppressions "$TMP/supp" libtcm.so
check "suppressions in SARIF: listed, kind external, the reason and the rule's line" \
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]["results"]
s = {x["locations"][0]["logicalLocations"][0]["name"]: x.get("suppressions") for x in r}
assert sorted(s) == ["app_push", "tcmalloc_pop", "tcmalloc_push"], s
assert s["app_push"] is None, s
for f in ("tcmalloc_pop", "tcmalloc_push"):
    (x,) = s[f]
    assert x["kind"] == "external" and x["status"] == "accepted", x
    assert x["justification"] == "tcmalloc declares no exit points (upstream)", x
    pl = x["location"]["physicalLocation"]
    assert pl["artifactLocation"]["uri"] == sys.argv[2], pl
    assert pl["region"]["startLine"] == int(sys.argv[3]), pl' \
	"$TMP/supp-sarif.out" "$TMP/supp" "$rule_line"
run supp-all audit --fail-on warning --suppress 'rseq03? */v1/libtcm.so tcmalloc_*' \
	--suppress 'RSEQ037 libtcm.so app_* reviewed' "$TMP/v1/libtcm.so"
check "--suppress: every finding accepted, exit 0 at --fail-on warning" \
	test "$(rc supp-all)" -eq 0 -a "$(grep -c RSEQ037 "$TMP/supp-all.out")" -eq 0
check "--suppress: the summary line counts 3 suppressed" \
	grep -qx "$TMP/v1/libtcm.so: 0 errors, 0 warnings, 0 info (3 suppressed)" "$TMP/supp-all.out"
run supp-other-check audit --json --suppress 'RSEQ032 libtcm.so *' libtcm.so
expect_funcs "a rule for another check suppresses nothing" supp-other-check \
	"app_push tcmalloc_pop tcmalloc_push"
run supp-path audit --json --suppress 'RSEQ037 /nowhere/* *' libtcm.so
expect_funcs "a module glob with '/' is matched against the path" supp-path \
	"app_push tcmalloc_pop tcmalloc_push"

# --- JSON documents with a baseline and suppressions match the schema ----------------------
SCHEMAS=$TOP/schemas
if python3 -c 'import jsonschema' 2>/dev/null; then
	cd "$TMP/v3" || exit 2
	run schema-both audit --json --baseline "$TMP/base.json" --suppressions "$TMP/supp" libtcm.so
	if out=$(python3 "$TOP/tests/tools/check_schema.py" "$SCHEMAS" audit.json \
		"$TMP/schema-both.out" "$TMP/base.json" "$TMP/supp-json.out" 2>&1); then
		pass "json schema: audit with a baseline and suppressions"
	else
		fail "json schema: audit with a baseline and suppressions" "$(head -c 400 <<<"$out")"
	fi
else
	fail "json schema: python3-jsonschema" "not installed (scripts/deps.sh installs it)"
fi

# --- a baseline or suppression file that cannot be used: one line, exit 2 ------------------
expect_error() { # NAME ARGS...
	local n=$1
	shift
	run "$n" "$@"
	if [ "$(rc "$n")" -eq 2 ] && [ "$(wc -l <"$TMP/$n.err")" -eq 1 ] &&
		grep -q '^rseqdbg: audit: ' "$TMP/$n.err" && [ ! -s "$TMP/$n.out" ]; then
		pass "error: $n ($(cut -c1-110 "$TMP/$n.err"))"
	else
		fail "error: $n" "rc $(rc "$n"), stderr: $(head -c 200 "$TMP/$n.err"), stdout: $(head -c 100 "$TMP/$n.out")"
	fi
}
cd "$TMP/v1" || exit 2
printf '{"runs": [{"results": [' >"$TMP/truncated.sarif"
: >"$TMP/empty.json"
echo '{"checks": []}' >"$TMP/checks.json"
echo '{"error": "rseqdbg: audit: no FILE given"}' >"$TMP/errdoc.json"
python3 - "$TMP/base.sarif" "$TMP/nofp.sarif" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for x in d["runs"][0]["results"]:
    del x["fingerprints"], x["partialFingerprints"]
json.dump(d, open(sys.argv[2], "w"))
EOF
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
del d["files"][0]["findings"][0]["fingerprint"]
json.dump(d, open(sys.argv[2], "w"))' "$TMP/base.json" "$TMP/nofp.json"
printf '\xff\xfe' >"$TMP/binary.json"
python3 -c 'print("[" * 300 + "]" * 300)' >"$TMP/deep.json"
printf '{"files": [], "fail_on": "error"} {}' >"$TMP/trailing.json"
printf '{"files": [{"path": "\\ud800x"}]}' >"$TMP/surrogate.json"
expect_error baseline-missing audit --baseline "$TMP/nonexistent" libtcm.so
expect_error baseline-directory audit --baseline "$TMP" libtcm.so
expect_error baseline-truncated audit --baseline "$TMP/truncated.sarif" libtcm.so
expect_error baseline-empty audit --baseline "$TMP/empty.json" libtcm.so
expect_error baseline-binary audit --baseline "$TMP/binary.json" libtcm.so
expect_error baseline-deep audit --baseline "$TMP/deep.json" libtcm.so
expect_error baseline-trailing audit --baseline "$TMP/trailing.json" libtcm.so
expect_error baseline-lone-surrogate audit --baseline "$TMP/surrogate.json" libtcm.so
expect_error baseline-checks-list audit --baseline "$TMP/checks.json" libtcm.so
expect_error baseline-error-document audit --baseline "$TMP/errdoc.json" libtcm.so
expect_error baseline-sarif-no-fingerprint audit --baseline "$TMP/nofp.sarif" libtcm.so
expect_error baseline-json-no-fingerprint audit --baseline "$TMP/nofp.json" libtcm.so
expect_error baseline-no-argument audit libtcm.so --baseline
check "a truncated baseline: the message says where" grep -q 'truncated.sarif: not JSON: line 1' \
	"$TMP/baseline-truncated.err"
printf 'RSEQ037 libtcm.so\n' >"$TMP/short.supp"
printf '# ok\nRSEQ999 libtcm.so *\n' >"$TMP/unknown.supp"
expect_error suppressions-missing audit --suppressions "$TMP/nonexistent" libtcm.so
expect_error suppressions-directory audit --suppressions "$TMP" libtcm.so
expect_error suppressions-short-rule audit --suppressions "$TMP/short.supp" libtcm.so
expect_error suppressions-unknown-check audit --suppressions "$TMP/unknown.supp" libtcm.so
expect_error suppress-short-rule audit --suppress RSEQ037 libtcm.so
check "a bad rule is named by its file and line" grep -q "unknown.supp:2: unknown check 'RSEQ999'" \
	"$TMP/suppressions-unknown-check.err"

# --- a real tcmalloc: google-cloud-cli's local-extract, where installed ---------------------
# Statically linked with tcmalloc, stripped: its sections are named by ELF section
# (google_malloc, .text). Its RSEQ037 warnings are counted with grep on the plain output.
LE=/usr/lib/google-cloud-sdk/bin/local-extract
if [ -f "$LE" ] && ! quick; then
	run le-plain audit "$LE"
	n037=$(grep -c '^ *RSEQ037 warning' "$TMP/le-plain.out")
	run le-base audit --sarif "$LE"
	cp "$TMP/le-base.out" "$TMP/le.sarif"
	run le-gate audit --fail-on warning --baseline "$TMP/le.sarif" "$LE"
	check "local-extract: $n037 RSEQ037 in the plain run; with its own baseline, exit 0" \
		test "$n037" -gt 0 -a "$(rc le-gate)" -eq 0
	run le-supp audit --fail-on warning --suppress 'RSEQ037 local-extract * tcmalloc' "$LE"
	check "local-extract: a module-wide RSEQ037 rule suppresses the $n037 warnings" \
		grep -q " (${n037} suppressed)\$" "$TMP/le-supp.out"
else
	skip "local-extract (tcmalloc)" "$LE not installed"
fi

finish
