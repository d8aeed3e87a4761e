#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Malformed input: every file made by tests/tools/mkbad (bad-*), plus a directory, a missing
# path, an empty file and /dev/null, must give exit 2, exactly one line on stderr
# "rseqdbg: scan: FILE: what is wrong", nothing on stdout in text mode and, in JSON mode, one
# document holding an {"error": ...} object for the file (the document itself, or the file's
# entry in "files"); never a crash, a sanitizer report or a file left behind.
# ok-* files are odd but valid and must scan. Under BUILD=build-san this runs with ASan/UBSan.
source "$(dirname "$0")/../lib.sh"

MKBAD="$BUILD/tests/tools/mkbad"
if [ ! -x "$RSEQDBG" ] || [ ! -x "$MKBAD" ]; then
	fail scan_bad "build first: $RSEQDBG or $MKBAD missing"
	finish
	exit
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

mkdir -p "$TMP/bad" "$TMP/cwd"
if ! "$MKBAD" "$FIX/bin/x86_64" "$TMP/bad" >"$TMP/mkbad.out" 2>&1; then
	fail mkbad "$(cat "$TMP/mkbad.out")"
fi
n=$(find "$TMP/bad" -name 'bad-*' | wc -l)
check "mkbad writes at least 30 malformed files ($n)" test "$n" -ge 30

: >"$TMP/empty"
mkdir "$TMP/a directory"

# sanitized NAME FILE: fail when a sanitizer spoke on stderr
sanitized() {
	if grep -qE 'Sanitizer|runtime error|LeakSanitizer' "$2"; then
		fail "$1" "sanitizer: $(grep -m1 -E 'Sanitizer|runtime error' "$2")"
		return 1
	fi
}

# refused NAME FILE...: text and JSON mode both report the last FILE and exit 2
refused() {
	local name=$1; shift
	local f=${*: -1} rc lines first

	(cd "$TMP/cwd" && "$RSEQDBG" scan "$@") >"$TMP/out" 2>"$TMP/err"
	rc=$?
	sanitized "$name" "$TMP/err" || return
	lines=$(wc -l <"$TMP/err")
	first=$(head -n1 "$TMP/err")
	if [ $rc -ne 2 ]; then
		fail "$name" "exit $rc, expected 2 (stderr: $first)"
	elif [ "$lines" -ne 1 ]; then
		fail "$name" "$lines lines on stderr, expected 1: $(tr '\n' '|' <"$TMP/err" | head -c 300)"
	elif [[ "$first" != "rseqdbg: scan: $f: "?* ]]; then
		fail "$name" "stderr does not read 'rseqdbg: scan: $f: <problem>': $first"
	elif [ "$#" -eq 1 ] && [ -s "$TMP/out" ]; then
		fail "$name" "stdout not empty in text mode: $(head -c 200 "$TMP/out")"
	else
		pass "$name"
	fi

	(cd "$TMP/cwd" && "$RSEQDBG" scan --json "$@") >"$TMP/out" 2>"$TMP/err"
	rc=$?
	sanitized "$name json" "$TMP/err" || return
	lines=$(wc -l <"$TMP/err")
	if [ $rc -ne 2 ] || [ "$lines" -ne 1 ]; then
		fail "$name json" "exit $rc, $lines lines on stderr: $(head -c 200 "$TMP/err")"
	elif ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = sys.argv[2]
# The error object is the document, or the failed file'"'"'s entry in "files".
errs = [d] + [x for x in d.get("files", []) if isinstance(x, dict) and x.get("path") == f]
sys.exit(0 if any(isinstance(x.get("error"), str) and f in x["error"] for x in errs) else 1)
' "$TMP/out" "$f" 2>/dev/null; then
		fail "$name json" "stdout has no {\"error\": \"...$f...\"} object for the file: $(head -c 300 "$TMP/out")"
	else
		pass "$name json"
	fi

	if [ -n "$(ls -A "$TMP/cwd")" ]; then
		fail "$name clean" "left behind: $(ls -A "$TMP/cwd")"
		rm -rf "${TMP:?}/cwd/"* "${TMP:?}"/cwd/.[!.]*
	fi
}

for f in "$TMP"/bad/bad-*; do
	refused "$(basename "$f")" "$f"
done
refused "directory" "$TMP/a directory"
refused "missing path" "$TMP/no such file"
refused "empty file" "$TMP/empty"
refused "/dev/null" /dev/null
# A good file before a bad one: the bad one is named, the run still fails.
refused "good then bad" "$FIX/bin/x86_64/cs-pie" "$TMP/bad/bad-trunc-shdrs"

# Valid but odd files (symbol tables and DWARF of odd sizes, hostile symbol names, an unknown
# machine) scan and audit: exit 0 (audit: 0 or 1), JSON that a strict parser accepts (UTF-8,
# no raw control character), text without a control byte but the newline, and the same
# critical sections as the fixture they were made from.
tables() { # FILE: the sections' addresses from scan --json
	python3 -c '
import json, sys
fo = json.load(open(sys.argv[1], encoding="utf-8"))["files"][0]
print(" ".join("%x:%x:%x" % (s["start"]["addr"], s["post_commit"]["addr"], s["abort"]["addr"])
	       for s in fo["sections"]))' "$1" 2>&1
}
"$RSEQDBG" scan --json "$FIX/bin/x86_64/cs-pie" >"$TMP/ref.json" 2>/dev/null
want_tables=$(tables "$TMP/ref.json")
for f in "$TMP"/bad/ok-*; do
	name=$(basename "$f")
	"$RSEQDBG" scan --json "$f" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	sanitized "$name" "$TMP/err" || continue
	if [ $rc -ne 0 ]; then
		fail "$name" "exit $rc: $(head -c 200 "$TMP/err")"
		continue
	fi
	if [ "$name" = ok-unknown-machine ]; then
		# the tables decode; signatures cannot be judged
		why=$(python3 -c '
import json, sys
fo = json.load(open(sys.argv[1]))["files"][0]
st = {s["signature"]["status"] for s in fo["sections"]}
if fo["machine"] != 32343 or fo["arch"] != "EM_32343":
    print("machine %r arch %r" % (fo["machine"], fo["arch"]))
elif len(fo["sections"]) != 6:
    print("%d sections, the fixture has 6" % len(fo["sections"]))
elif st != {"unknown-arch"}:
    print("signature statuses %s, expected unknown-arch" % sorted(st))' "$TMP/out" 2>&1)
	else
		got=$(tables "$TMP/out")
		why=
		[ "$got" = "$want_tables" ] || why="sections {$got}, the fixture has {$want_tables}"
	fi
	if [ -n "$why" ]; then fail "$name" "$why"; else pass "$name"; fi
	"$RSEQDBG" scan "$f" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	sanitized "$name text" "$TMP/err" || continue
	if [ $rc -ne 0 ] || [ ! -s "$TMP/out" ]; then
		fail "$name text" "exit $rc: $(head -c 200 "$TMP/err")"
	elif LC_ALL=C grep -q '[[:cntrl:]]' "$TMP/out"; then
		fail "$name text" "raw control bytes: $(LC_ALL=C grep -m1 '[[:cntrl:]]' "$TMP/out" | od -c | head -3)"
	else
		pass "$name text"
	fi
	"$RSEQDBG" audit "$f" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	sanitized "$name audit" "$TMP/err" || continue
	check "$name audit (exit $rc)" test $rc -le 1
done

# Hostile names: each shown escaped in text, each well-formed in JSON (ill-formed UTF-8 as
# U+FFFD, control characters escaped), as the file's bytes say (mkbad.c).
"$RSEQDBG" scan "$TMP/bad/ok-hostile-names" >"$TMP/out" 2>&1
for want in 'r\xff\n\x1b[31m+0xe' '\xc3(\xed\xa0\x80\u009b'$'\xf0\x9f\x98\x80''x+0xe' \
	'a\tb\x7f\\c\x01d+0xe'; do
	check "hostile name escaped in text: $want" grep -qF -- "$want" "$TMP/out"
done
"$RSEQDBG" scan --json "$TMP/bad/ok-hostile-names" >"$TMP/out" 2>&1
check "hostile names in JSON: strict RFC 8259, as the bytes say" python3 -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw.decode("utf-8", "strict"))  # strict: no raw control character
names = {s["start"]["function"] for s in d["files"][0]["sections"]}
want = {"r\ufffd\n\x1b[31m", "\ufffd(\ufffd\ufffd\ufffd\x9b\U0001f600x", "a\tb\x7f\\c\x01d"}
sys.exit(0 if want <= names else "names %r" % sorted(names))' "$TMP/out"
for mode in --json --sarif; do
	"$RSEQDBG" audit $mode "$TMP/bad/ok-hostile-names" >"$TMP/out" 2>&1
	check "hostile names in audit $mode: strict RFC 8259" python3 -c '
import json, sys
json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$TMP/out"
done
# A path with a newline and an escape sequence: one line on stderr, escaped.
bad_path="$TMP/cwd/a"$'\n\e[31m'"b"
cp "$TMP/bad/bad-shstrndx-xindex-zero" "$bad_path"
"$RSEQDBG" scan "$bad_path" >"$TMP/out" 2>"$TMP/err"
check "a path with a newline and ESC: one escaped stderr line" \
	test "$(wc -l <"$TMP/err")" -eq 1 -a "$(LC_ALL=C grep -c '[[:cntrl:]]' "$TMP/err")" -eq 0
"$RSEQDBG" audit "$bad_path" >"$TMP/out" 2>"$TMP/err"
check "audit of that path: one escaped stderr line" \
	test "$(wc -l <"$TMP/err")" -eq 1 -a "$(LC_ALL=C grep -c '[[:cntrl:]]' "$TMP/err")" -eq 0
cp "$TMP/bad/ok-hostile-names" "$bad_path"
"$RSEQDBG" audit "$bad_path" >"$TMP/out" 2>"$TMP/err"
check "audit text of hostile names under that path: no raw control byte" \
	test "$(LC_ALL=C grep -c '[[:cntrl:]]' "$TMP/out")" -eq 0 -a -s "$TMP/out"
rm -f "$bad_path"

# Inputs the fuzzer once crashed the library with (tests/fixtures/bad), and small sections of
# zeros at a far offset (tests/fixtures/hostile): scanned and audited, exit 0, 1 or 2, and no
# sanitizer report.
for f in "$FIX"/bad/* "$FIX"/hostile/*; do
	[ -f "$f" ] || continue
	for cmd in scan audit; do
		"$RSEQDBG" $cmd "$f" >/dev/null 2>"$TMP/fz.err"
		rc=$?
		if sanitized "$cmd ${f##*/}" "$TMP/fz.err"; then
			check "$cmd ${f#"$FIX"/}: exit $rc, no crash" test $rc -le 2
		fi
	done
done
finish
