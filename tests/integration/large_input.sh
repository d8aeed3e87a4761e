#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Large input costs what its contents cost: a file padded to 100 GB (sparse) scans and audits
# with the same output as the file itself; 1,000,000 identical exit points give one finding
# with a count (text, JSON, SARIF), not a million; audit's memory does not grow with the
# number of files (the figure is printed); a section that declares 50 GiB is refused unread.
source "$(dirname "$0")/../lib.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

if [ ! -x "$RSEQDBG" ]; then
	fail "large_input" "build first: $RSEQDBG missing"
	finish
	exit
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
sanitizer=0
grep -qa __asan_init "$RSEQDBG" && sanitizer=1

# --- a valid file padded to 100 GB ------------------------------------------------------------
mkdir -p "$TMP/plain" "$TMP/padded"
for f in cs-pie-dwarf cs-static cs.so; do
	cp "$FIX/bin/x86_64/$f" "$TMP/plain/$f"
	cp "$FIX/bin/x86_64/$f" "$TMP/padded/$f"
	truncate -s 100G "$TMP/padded/$f"
done
used=$(du -k "$TMP/padded" | tail -n 1 | cut -f1)
if [ "$(stat -c %s "$TMP/padded/cs-pie-dwarf")" -ne $((100 << 30)) ] || [ "$used" -gt 4096 ]; then
	rm -rf "$TMP/padded"
	fail "100 GB sparse file" "$TMP does not hold sparse files (${used} KB used)"
else
	for mode in "scan" "scan --json" "audit" "audit --json" "audit --sarif"; do
		for d in plain padded; do
			# shellcheck disable=SC2086
			(cd "$TMP/$d" && "$RSEQDBG" $mode cs-pie-dwarf cs-static cs.so) \
				>"$TMP/$d.out" 2>"$TMP/$d.err"
			echo "exit $?" >>"$TMP/$d.out"
		done
		if ! grep -q '^exit [01]$' "$TMP/padded.out"; then
			fail "$mode of files padded to 100 GB" "$(tail -n 1 "$TMP/padded.out"): $(head -c 300 "$TMP/padded.err")"
		elif ! cmp -s "$TMP/plain.out" "$TMP/padded.out"; then
			fail "$mode of files padded to 100 GB" "output differs from the files unpadded: $(diff "$TMP/plain.out" "$TMP/padded.out" | head -c 300)"
		else
			pass "$mode of files padded to 100 GB: the output of the files unpadded"
		fi
	done
	rm -rf "$TMP/padded"
fi

# --- sections that declare 50 GiB ---------------------------------------------------------------
# A section header declaring 50 GiB at offset 1 GiB of a 100 GB sparse file (mkhuge.py): scan and
# audit answer with exit 2 and one line naming the file, the section and what was expected,
# without walking the zeros. timeout only turns a hang into a failure; the bound asserted is
# memory: every page of the file that a walk touches counts in maxrss (it was 7 to 12 GB).
MKHUGE=$TOP/tests/tools/mkhuge.py
bounded() { # ERRFILE CMD...: "EXIT MAXRSS_KB" of rseqdbg CMD... (stderr to ERRFILE)
	python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as err:
    rc = subprocess.run(["timeout", "60"] + sys.argv[2:], stdout=subprocess.DEVNULL,
                        stderr=err).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
# sanitizer builds map shadow memory: the bound is loose enough for them too
RSS_MAX=$((256 << 10))
mkdir -p "$TMP/huge"
for c in "note .note.gnu.build-id" "text .text" "text-segment .text --segment" \
	"rseq-cs __rseq_cs" "ptr-array __rseq_cs_ptr_array" "symtab .symtab --size 0xc00000000" \
	"strtab .strtab" "rela-dyn .rela.dyn --size 0xc00000000"; do
	read -r name sec opt <<<"$c"
	f=$TMP/huge/$name
	# shellcheck disable=SC2086
	if ! python3 "$MKHUGE" "$FIX/bin/x86_64/cs-pie-dwarf" "$f" "$sec" $opt 2>"$TMP/huge.err"; then
		fail "make $name" "$(head -c 300 "$TMP/huge.err")"
		continue
	fi
	if [ "$(du -k "$f" | cut -f1)" -gt 4096 ]; then
		fail "$name: 100 GB sparse file" "$TMP does not hold sparse files"
		break
	fi
	for cmd in scan audit; do
		read -r rc rss < <(bounded "$TMP/huge.err" "$RSEQDBG" "$cmd" "$f")
		line=$(head -n 1 "$TMP/huge.err")
		if [ "$rc" != 2 ] || [ "$(wc -l <"$TMP/huge.err")" -ne 1 ]; then
			fail "$cmd of a $sec of 50 GiB ($name)" "exit $rc: $(head -c 300 "$TMP/huge.err")"
		elif [[ "$line" != "rseqdbg: $cmd: $f: section $sec ["*"] at offset 0x40000000 declares 0x"*" bytes; expected "?* ]]; then
			fail "$cmd of a $sec of 50 GiB ($name)" "unclear: $line"
		elif [ "$rss" -gt "$RSS_MAX" ]; then
			fail "$cmd of a $sec of 50 GiB ($name)" "maxrss $rss KB: the section was read"
		else
			pass "$cmd of a $sec of 50 GiB ($name): exit 2, one line, maxrss $rss KB"
		fi
	done
	rm -f "$f"
done
# Code within the limit (512 MiB, one segment with it): audit decodes the function of each
# critical section, not the whole; without symbols it says which section went unchecked.
python3 "$MKHUGE" "$FIX/bin/x86_64/cs-pie-dwarf" "$TMP/huge/code" .text --segment \
	--size 0x20000000
strip -o "$TMP/huge/stripped.tmp" "$FIX/bin/x86_64/cs-pie-dwarf"
python3 "$MKHUGE" "$TMP/huge/stripped.tmp" "$TMP/huge/stripped" .text --segment --size 0x20000000
for f in code stripped; do
	read -r rc rss < <(bounded "$TMP/huge.err" "$RSEQDBG" audit --check RSEQ038 \
		--check RSEQ031 "$TMP/huge/$f")
	if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
		fail "audit of 512 MiB of code ($f)" "exit $rc: $(head -c 300 "$TMP/huge.err")"
	elif [ "$rss" -gt "$RSS_MAX" ]; then
		fail "audit of 512 MiB of code ($f)" "maxrss $rss KB: the code was decoded whole"
	else
		pass "audit of 512 MiB of code ($f): exit $rc, maxrss $rss KB"
	fi
done
"$RSEQDBG" audit --check RSEQ038 "$TMP/huge/stripped" >"$TMP/huge.out" 2>&1
check "without symbols, audit says RSEQ038 went unchecked in 512 MiB of code" \
	grep -q "code checks skipped: RSEQ038 for the section at 0x.*is over 0x4000000 bytes" \
	"$TMP/huge.out"
# Compressed DWARF, which libelf decompresses in place, in a file whose headers reach 1 GiB:
# the file is mapped again copy-on-write, not copied (that took 11 s and 2 GB).
python3 "$MKHUGE" "$FIX/bin/x86_64/cs-pie-zdebug" "$TMP/huge/zdebug" .eh_frame \
	--offset 0x40000000 --size 0x100000 --total 0x40100000
read -r rc rss < <(bounded "$TMP/huge.err" "$RSEQDBG" scan "$TMP/huge/zdebug")
"$RSEQDBG" scan "$TMP/huge/zdebug" >"$TMP/huge.out" 2>&1
if [ "$rc" != 0 ] || ! grep -q "rseq_inc+0xe (cs-x86_64.S:53)" "$TMP/huge.out"; then
	fail "scan of compressed DWARF, headers reaching 1 GiB" "exit $rc: $(head -c 300 "$TMP/huge.out")"
elif [ "$rss" -gt "$RSS_MAX" ]; then
	fail "scan of compressed DWARF, headers reaching 1 GiB" "maxrss $rss KB: the file was copied"
else
	pass "scan of compressed DWARF, headers reaching 1 GiB: lines read, maxrss $rss KB"
fi
# A .gnu_debuglink naming a debug file padded to 100 GB: its CRC, which covers the whole
# file, is not computed (that read the 100 GB); the file is not used.
objcopy --only-keep-debug "$FIX/bin/x86_64/cs-pie-dwarf" "$TMP/huge/cs.debug"
objcopy --strip-debug --add-gnu-debuglink="$TMP/huge/cs.debug" "$FIX/bin/x86_64/cs-pie-dwarf" \
	"$TMP/huge/cs"
truncate -s 100G "$TMP/huge/cs.debug"
read -r rc rss < <(bounded "$TMP/huge.err" "$RSEQDBG" scan "$TMP/huge/cs")
"$RSEQDBG" scan "$TMP/huge/cs" >"$TMP/huge.out" 2>&1
if [ "$rc" != 0 ] || ! grep -q "debuginfo  no DWARF" "$TMP/huge.out"; then
	fail "scan with a debuglink to a 100 GB file" "exit $rc: $(head -c 300 "$TMP/huge.out")"
elif [ "$rss" -gt "$RSS_MAX" ]; then
	fail "scan with a debuglink to a 100 GB file" "maxrss $rss KB: its CRC was computed"
else
	pass "scan with a debuglink to a 100 GB file: not used, maxrss $rss KB"
fi
rm -rf "$TMP/huge"

# --- repeated exit points -----------------------------------------------------------------------
# One section with 1,000,000 copies of one valid exit point (999,999 duplicates), 1,000 of an
# exit point inside it, and 1,000 of one that matches no section.
N=1000000
M=1000
mkdir -p "$TMP/exits"
cat >"$TMP/exits/many.S" <<EOF
#include "audit.inc"
	FUNC	f
rseq_start_f:
	movl	4(%rdi), %eax
	cmpl	%eax, %esi
	jne	rseq_exit_f
rseq_mid_f:
	movq	%rdx, (%rcx)
rseq_post_commit_f:
	ret
	SIGNATURE
rseq_abort_f:
	jmp	f
rseq_exit_f:
	ret
	ENDF	f
	DESC	.Lcs_f, rseq_start_f, rseq_post_commit_f, rseq_abort_f
	.pushsection __rseq_exit_point_array, "aw"
	.rept	$N
	.quad	rseq_start_f, rseq_exit_f
	.endr
	.rept	$M
	.quad	rseq_start_f, rseq_mid_f
	.endr
	.rept	$M
	.quad	rseq_exit_f, rseq_abort_f
	.endr
	.popsection
EOF
if ! gcc -c -I"$TOP/tests/fixtures/audit" "$TMP/exits/many.S" -o "$TMP/exits/many.o" \
	>"$TMP/exits/build.log" 2>&1 ||
	! ld --build-id=none -o "$TMP/exits/many" "$TMP/exits/many.o" >>"$TMP/exits/build.log" 2>&1; then
	fail "build the file of $N exit points" "$(head -c 300 "$TMP/exits/build.log")"
else
	rm -f "$TMP/exits/many.o"
	"$RSEQDBG" audit --json "$TMP/exits/many" >"$TMP/exits/json" 2>"$TMP/exits/err"
	check "audit --json of $N identical exit points: one finding per kind, with its count" \
		python3 -c '
import json, sys
n, m = int(sys.argv[2]), int(sys.argv[3])
fs = json.load(open(sys.argv[1]))["files"][0]["findings"]
got = sorted((f["check"], f.get("count", 1)) for f in fs)
want = [("RSEQ022", n - 1), ("RSEQ022", m - 1), ("RSEQ022", m - 1),
	("RSEQ023", m), ("RSEQ024", m)]
sys.exit(0 if got == sorted(want) else "findings %r, expected %r" % (got, sorted(want)))' \
		"$TMP/exits/json" "$N" "$M"
	"$RSEQDBG" audit "$TMP/exits/many" >"$TMP/exits/txt" 2>"$TMP/exits/err"
	lines=$(wc -l <"$TMP/exits/txt")
	check "audit text of $N identical exit points: $lines lines, the count shown" \
		test "$lines" -lt 40 -a "$(grep -c "($((N - 1)) times)" "$TMP/exits/txt")" -eq 1
	"$RSEQDBG" scan "$TMP/exits/many" >"$TMP/exits/txt" 2>"$TMP/exits/err"
	check "scan text of $N identical exit points: one line with the count" \
		test "$(grep -c "^ *exit point .*($N times)\$" "$TMP/exits/txt")" -eq 1 -a \
		"$(wc -l <"$TMP/exits/txt")" -lt 40
	"$RSEQDBG" audit --sarif "$TMP/exits/many" >"$TMP/exits/sarif" 2>"$TMP/exits/err"
	check "audit --sarif of $N identical exit points: occurrenceCount" python3 -c '
import json, sys
rs = json.load(open(sys.argv[1]))["runs"][0]["results"]
c = sorted(r.get("occurrenceCount", 1) for r in rs if r["ruleId"] == "RSEQ022")
sys.exit(0 if len(rs) == 5 and c[-1] == int(sys.argv[2]) - 1 else "results %d, counts %r" % (len(rs), c))' \
		"$TMP/exits/sarif" "$N"
	rm -rf "$TMP/exits"
fi

# --- memory over many files ---------------------------------------------------------------------
# maxrss of audit over 100 and over 3,000 files (the same fixture named 3,000 times: each
# is opened, audited, printed and closed on its own).
rss() { # COUNT FILE: the peak resident set of audit over COUNT copies of FILE, in KB
	python3 -c '
import resource, subprocess, sys
n, f, exe = int(sys.argv[1]), sys.argv[2], sys.argv[3]
subprocess.run([exe, "audit", "--json"] + [f] * n, stdout=subprocess.DEVNULL,
	       stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$1" "$2" "$RSEQDBG"
}
f=$FIX/bin/x86_64/cs-pie-dwarf
small=$(rss 100 "$f")
big=$(rss 3000 "$f")
per=$(((big - small) * 1024 / 2900))
echo "large_input: audit maxrss ${small} KB over 100 files, ${big} KB over 3000 ($per bytes per added file)"
if [ $sanitizer = 1 ]; then
	# ASan keeps freed memory in quarantine: the figure above says little, assert nothing
	echo "large_input: sanitizer build, memory figure not checked"
else
	check "audit memory does not grow with the files: $per bytes per file (was ~48 KB)" \
		test "$per" -lt 2048
fi
finish
