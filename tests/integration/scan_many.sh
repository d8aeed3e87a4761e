#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# scan and audit over many files, as CI runs them: -r over a tree of ELF files with and without
# rseq tables, files that are not ELF, hard and symbolic links (a loop among them), a FIFO, an
# ELF file cut short and nested directories. The summary's counts equal those of find, the ELF
# magic read with head and the __rseq sections readelf lists; files that are not ELF are
# skipped quietly (exit 0), unreadable files and directories are errors (exit 2, run as an
# unprivileged user), and with --strict so are files that are not ELF; --with-tables prints
# exactly the files with tables, in sorted order, in text and JSON; the progress line shows on
# a terminal (a pty), also within one large file audited, and never in a pipe or in JSON; and
# a run over /usr/bin, -r or every name, reports no file for not being ELF.
source "$(dirname "$0")/../lib.sh"

if [ ! -x "$RSEQDBG" ]; then
	fail "scan_many" "build first: $RSEQDBG missing"
	finish
	exit
fi
X86=$FIX/bin/x86_64
EX=$BUILD/examples/percpu_counter
TRUE=$(type -P true)
for f in "$X86/cs-pie" "$X86/table2018" "$X86/cs.o" "$X86/sections2015" "$EX" "$TRUE"; do
	[ -f "$f" ] || { fail "scan_many: inputs" "$f missing (make tests)"; finish; exit; }
done

# --- the tree -----------------------------------------------------------------------------------
T=$TMP/tree
mkdir -p "$T/a/b/c" "$T/d" "$T/empty-dir"
cp "$X86/cs-pie" "$X86/table2018" "$X86/cs.o" "$T/a/"
cp "$TRUE" "$T/a/true"
cp "$X86/sections2015" "$T/a/b/c/"
cp "$EX" "$T/d/percpu_counter"
cp "$TRUE" "$T/d/no-tables"
printf '#!/bin/sh\necho hi\n' >"$T/a/script.sh"
printf 'text\n' >"$T/a/b/notes.txt"
: >"$T/a/b/c/empty"
printf '\177EL' >"$T/a/b/c/short"
printf '\177ELF\2\1' >"$T/d/cut" # ELF, cut short: an error
ln "$T/a/cs-pie" "$T/d/hard-cs-pie"
ln -s .. "$T/a/b/up"          # a loop, were it followed
ln -s self "$T/a/self"        # a link to itself
ln -s ../a/cs-pie "$T/d/link" # a link to a file of the tree
ln -s /nonexistent "$T/d/dangling"
mkfifo "$T/d/fifo"

# The independent counts: regular files by inode (find), ELF by their first four bytes (head),
# tables by the section names readelf lists.
python3 - "$T" >"$TMP/expect" <<'EOF'
import os, sys
seen, elf, tables, not_elf, other = set(), [], [], 0, 0
for root, dirs, files in os.walk(sys.argv[1]):
    dirs.sort()
    for n in dirs + sorted(files):
        p = os.path.join(root, n)
        st = os.lstat(p)
        if os.path.islink(p) or not (os.path.isdir(p) or os.path.isfile(p)):
            other += 1
            continue
        if os.path.isdir(p) or (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        with open(p, "rb") as f:
            if f.read(4) == b"\x7fELF":
                elf.append(p)
            else:
                not_elf += 1
print(len(elf), not_elf, other)
print("\n".join(elf))
EOF
read -r n_elf n_not_elf n_other <"$TMP/expect"
tail -n +2 "$TMP/expect" >"$TMP/elf-files"
n_tables=0
: >"$TMP/with-tables"
while read -r f; do
	if readelf -SW "$f" 2>/dev/null |
		grep -qE ' (__rseq_cs|__rseq_cs_ptr_array|__rseq_exit_point_array|__rseq_table|__rseq_sections) '; then
		n_tables=$((n_tables + 1))
		echo "$f" >>"$TMP/with-tables"
	fi
done <"$TMP/elf-files"
echo "scan_many: tree: $n_elf ELF files ($n_tables with tables, 1 cut short), $n_not_elf not ELF, $n_other other entries"
check "the tree has what the cases need" test "$n_elf" -ge 7 -a "$n_tables" -ge 5 -a \
	"$n_not_elf" -eq 4 -a "$n_other" -eq 5

# run NAME ARGS...: rseqdbg with stdout, stderr and exit status in $TMP/NAME.{out,err,rc}
run() {
	local n=$1
	shift
	"$RSEQDBG" "$@" >"$TMP/$n.out" 2>"$TMP/$n.err"
	echo $? >"$TMP/$n.rc"
}
rc() { cat "$TMP/$1.rc"; }
for cmd in scan audit; do
	verb=${cmd}ned
	[ $cmd = audit ] && verb=audited
	run "$cmd-r" $cmd -r "$T"
	check "$cmd -r: exit 2 (the ELF file cut short), one stderr line naming it" bash -c "
		[ $(rc "$cmd-r") -eq 2 ] && [ \$(wc -l <'$TMP/$cmd-r.err') -eq 1 ] &&
		grep -q '^rseqdbg: $cmd: $T/d/cut: ' '$TMP/$cmd-r.err'"
	last=$(tail -n 1 "$TMP/$cmd-r.out")
	want="files: $((n_elf - 1)) ELF files $verb, $n_tables with rseq tables ("
	want_end="), $n_not_elf not ELF skipped, $n_other other entries skipped, 1 error"
	if [[ "$last" == "$want"*"$want_end" ]]; then
		pass "$cmd -r: the summary line counts as find, head and readelf do"
	else
		fail "$cmd -r: the summary line counts as find, head and readelf do" \
			"got '$last', expected '$want...$want_end'"
	fi
	check "$cmd -r: no file is named for not being ELF" \
		test "$(grep -c 'not an ELF' "$TMP/$cmd-r.err")" -eq 0
done

# JSON: file_counts and the files printed with --with-tables, in the walk's order (each
# directory's names in byte order, depth first).
run json scan -r --json --with-tables "$T"
check "scan -r --json --with-tables: exit 2" test "$(rc json)" -eq 2
python3 - "$TMP/json.out" "$T" "$TMP/with-tables" "$((n_elf - 1))" "$n_tables" "$n_not_elf" \
	"$n_other" >"$TMP/json.why" 2>&1 <<'EOF'
import json, os, sys
doc, top, tables = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
n_read, n_tables, n_not_elf, n_other = map(int, sys.argv[4:8])
def walk(d):
    for n in sorted(os.listdir(d), key=os.fsencode):
        p = os.path.join(d, n)
        if os.path.islink(p):
            continue
        if os.path.isdir(p):
            yield from walk(p)
        else:
            yield p
order = {p: i for i, p in enumerate(walk(top))}
want = sorted((l.strip() for l in open(tables) if l.strip()), key=order.get)
files = [f for f in doc["files"] if "error" not in f]
errors = [f["path"] for f in doc["files"] if "error" in f]
got = [f["path"] for f in files]
c = doc["file_counts"]
sections = sum(len(f["sections"]) for f in files)
if got != want:
    sys.exit("files %r, expected %r" % (got, want))
if errors != [top + "/d/cut"]:
    sys.exit("errors %r" % errors)
if (c["read"], c["with_tables"], c["not_elf"], c["other"], c["errors"]) != \
        (n_read, n_tables, n_not_elf, n_other, 1):
    sys.exit("file_counts %r" % c)
if c["sections"] != sections or not all(f["tables"] for f in files):
    sys.exit("sections %d, the files hold %d" % (c["sections"], sections))
EOF
if [ -s "$TMP/json.why" ]; then
	fail "scan -r --json --with-tables: the files with tables in walk order, counted as find and readelf count" \
		"$(head -c 300 "$TMP/json.why")"
else
	pass "scan -r --json --with-tables: the files with tables in walk order, counted as find and readelf count"
fi
run wt scan -r --with-tables "$T"
grep -E "^$T/" "$TMP/wt.out" >"$TMP/wt.paths"
check "scan -r --with-tables text: the same files, in the same order" \
	cmp -s "$TMP/wt.paths" <(python3 -c '
import json, sys
print("\n".join(f["path"] for f in json.load(open(sys.argv[1]))["files"] if "error" not in f))' \
	"$TMP/json.out")
run wt2 scan -r --with-tables "$T"
check "scan -r: the same output twice" cmp -s "$TMP/wt.out" "$TMP/wt2.out"
run awt audit -r --with-tables --json "$T"
check "audit -r --with-tables --json: the files with tables (no other has findings)" \
	cmp -s <(python3 -c '
import json, sys
print("\n".join(sorted(f["path"] for f in json.load(open(sys.argv[1]))["files"] if "error" not in f)))' \
	"$TMP/awt.out") <(sort "$TMP/with-tables")
run asarif audit -r --sarif "$T"
check "audit -r --sarif: the cut file is the run's notification" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
n = r["invocations"][0]["toolExecutionNotifications"]
sys.exit(not (len(n) == 1 and sys.argv[2] in n[0]["message"]["text"]))' "$TMP/asarif.out" "$T/d/cut"

# --- operands ----------------------------------------------------------------------------------
run ops scan "$T/a/cs-pie" "$T/a/script.sh" "$T/a/b/c/empty" "$T/a/b" "$T/d/fifo" "$T/a/true"
check "several FILEs: not ELF, a directory without -r and a FIFO skipped, exit 0" bash -c "
	[ $(rc ops) -eq 0 ] && [ ! -s '$TMP/ops.err' ] &&
	tail -n 1 '$TMP/ops.out' | grep -qx 'files: 2 ELF files scanned, 1 with rseq tables ([0-9]* critical sections), 2 not ELF skipped, 2 other entries skipped, 0 errors'"
for cmd in scan audit; do
	run "strict-$cmd" $cmd --strict "$T/a/cs-pie" "$T/a/script.sh" "$T/a/b/c/empty" "$T/a/b" \
		"$T/d/fifo" "$T/a/true"
	check "$cmd --strict: each of the four is an error (exit 2, a line each), the ELF files read" bash -c "
		[ $(rc "strict-$cmd") -eq 2 ] && [ \$(wc -l <'$TMP/strict-$cmd.err') -eq 4 ] &&
		grep -q '^rseqdbg: $cmd: $T/a/script.sh: not an ELF file' '$TMP/strict-$cmd.err' &&
		grep -q '^rseqdbg: $cmd: $T/a/b: is a directory' '$TMP/strict-$cmd.err' &&
		tail -n 1 '$TMP/strict-$cmd.out' | grep -q '^files: 2 ELF files .*, 0 not ELF skipped, 0 other entries skipped, 4 errors\$'"
done
run one scan "$T/a/script.sh"
check "one FILE that is not ELF: still an error (exit 2, one line), no summary" bash -c "
	[ $(rc one) -eq 2 ] && [ \$(wc -l <'$TMP/one.err') -eq 1 ] && [ ! -s '$TMP/one.out' ]"
run onedir scan "$T"
check "one directory without -r: still an error" test "$(rc onedir)" -eq 2
run twice scan "$X86/cs-pie" "$X86/cs-pie"
check "a file named twice is read twice" \
	test "$(grep -cx "$X86/cs-pie" "$TMP/twice.out")" -eq 2
run missing scan "$X86/cs-pie" "$TMP/nonexistent"
check "a missing FILE among several: an error" bash -c "
	[ $(rc missing) -eq 2 ] && grep -q '^rseqdbg: scan: $TMP/nonexistent: ' '$TMP/missing.err'"
run pid-r scan -r --pid 1
check "-r with --pid: a usage error" bash -c "[ $(rc pid-r) -eq 2 ] && [ ! -s '$TMP/pid-r.out' ]"

# --- unreadable files and directories, as an unprivileged user ---------------------------------
P=$TMP/perm
mkdir -p "$P/closed"
cp "$X86/cs-pie" "$P/ok"
cp "$X86/cs-pie" "$P/secret"
cp "$X86/cs-pie" "$P/closed/inside"
chmod 000 "$P/secret" "$P/closed"
AS=()
if have_root; then
	if command -v setpriv >/dev/null; then
		chmod 755 "$TMP"
		cp "$RSEQDBG" "$TMP/rseqdbg-copy"
		AS=(setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/rseqdbg-copy")
	fi
else
	AS=("$RSEQDBG")
fi
if [ ${#AS[@]} -eq 0 ]; then
	skip "unreadable entries" "root without setpriv: no unprivileged user to run as"
else
	"${AS[@]}" scan -r "$P" >"$TMP/perm.out" 2>"$TMP/perm.err"
	prc=$?
	check "unreadable file and directory: exit 2, one line each, the readable file scanned" bash -c "
		[ $prc -eq 2 ] && [ \$(wc -l <'$TMP/perm.err') -eq 2 ] &&
		grep -q '^rseqdbg: scan: $P/closed: cannot read the directory: Permission denied' '$TMP/perm.err' &&
		grep -q '^rseqdbg: scan: $P/secret: .*Permission denied' '$TMP/perm.err' &&
		grep -qx '$P/ok' '$TMP/perm.out' &&
		tail -n 1 '$TMP/perm.out' | grep -q ', 2 errors\$'"
fi
chmod 755 "$P/closed"

# --- the progress line -------------------------------------------------------------------------
# PTY CMD...: run rseqdbg CMD with stderr (and with --both, stdout too) on a terminal; stdout
# and stderr bytes in $TMP/pty.out and $TMP/pty.err. RSEQDBG_PROGRESS_DELAY=0 shows the line
# from the first file: what is asserted is that it shows, not when.
PTY() {
	python3 - "$TMP" "$RSEQDBG" "$@" <<'EOF'
import os, pty, subprocess, sys
tmp, exe, args = sys.argv[1], sys.argv[2], sys.argv[3:]
both = args[0] == "--both"
if both:
    args = args[1:]
master, slave = pty.openpty()
env = dict(os.environ, RSEQDBG_PROGRESS_DELAY="0")
out = open(tmp + "/pty.out", "wb")
p = subprocess.Popen([exe] + args, stdin=subprocess.DEVNULL, stdout=slave if both else out,
                     stderr=slave, env=env)
os.close(slave)
err = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    err += chunk
p.wait()
open(tmp + "/pty.err", "wb").write(err)
sys.exit(p.returncode)
EOF
}
# Progress lines are "\r" + text + ESC[K, erased by "\r" ESC[K: what else is on the terminal
strip_progress() {
	python3 -c '
import re, sys
b = open(sys.argv[1], "rb").read()
b = re.sub(rb"\r(scanning|auditing|finding files)[^\r\n\x1b]*\x1b\[K", b"", b)
b = b.replace(b"\r\x1b[K", b"").replace(b"\r\n", b"\n")
sys.stdout.buffer.write(b)' "$1"
}
ops=("$X86/cs-pie" "$X86/table2018" "$T/a/script.sh" "$X86/cs.o")
"$RSEQDBG" scan "${ops[@]}" >"$TMP/pipe.out" 2>"$TMP/pipe.err"
PTY scan "${ops[@]}"
check "progress on a terminal: 'scanning 1/3 files: PATH' on stderr" \
	grep -qaF $'\r'"scanning 1/3 files: $X86/cs-pie" "$TMP/pty.err"
check "progress on a terminal: erased at the end" bash -c \
	"tail -c 4 '$TMP/pty.err' | cmp -s - <(printf '\r\033[K')"
check "progress on a terminal: nothing else on stderr" test -z "$(strip_progress "$TMP/pty.err")"
check "progress on a terminal: stdout as in a pipe" cmp -s "$TMP/pty.out" "$TMP/pipe.out"
PTY --both scan "${ops[@]}"
check "stdout on the same terminal: the output as in a pipe once the progress is taken out" \
	cmp -s <(strip_progress "$TMP/pty.err") "$TMP/pipe.out"
check "stdout on the same terminal: the progress was there" \
	grep -qaF $'\r'"scanning 1/3 files: " "$TMP/pty.err"
PTY audit -r "$T"
check "audit -r on a terminal: progress shown" grep -qaE $'\r(auditing|finding files)' "$TMP/pty.err"
check "audit -r on a terminal: stderr is the error line once the progress is taken out" \
	cmp -s <(strip_progress "$TMP/pty.err") "$TMP/audit-r.err"
# A single large file: audit says how far into it it is (the decoding, then the code checks).
if "$TOP/scripts/gen-bigpie.sh" "$TMP/big.pie" 2000 >/dev/null 2>&1; then
	PTY audit "$TMP/big.pie"
	check "audit of one large file on a terminal: its progress at 0%" \
		grep -qaF $'\r'"auditing 1/1 files (0%): $TMP/big.pie" "$TMP/pty.err"
	check "audit of one large file on a terminal: its progress at 50% (the code checks)" \
		grep -qaF $'\r'"auditing 1/1 files (50%): $TMP/big.pie" "$TMP/pty.err"
	check "audit of one large file on a terminal: nothing else on stderr" \
		test -z "$(strip_progress "$TMP/pty.err")"
	rm -f "$TMP/big.pie"
else
	fail "a PIE of 2000 sections (scripts/gen-bigpie.sh)"
fi
PTY scan --no-progress "${ops[@]}"
check "--no-progress: nothing on a terminal's stderr" test ! -s "$TMP/pty.err"
PTY scan --json "${ops[@]}"
check "--json: nothing on a terminal's stderr" test ! -s "$TMP/pty.err"
PTY audit --sarif "${ops[@]}"
check "--sarif: nothing on a terminal's stderr" test ! -s "$TMP/pty.err"
RSEQDBG_PROGRESS_DELAY=0 "$RSEQDBG" scan -r "$T" 2>&1 >/dev/null | cat >"$TMP/piped.err"
check "stderr in a pipe: the error line only, no progress" bash -c "
	[ \$(wc -l <'$TMP/piped.err') -eq 1 ] && ! grep -qa $'\r' '$TMP/piped.err'"

# --- /usr/bin ----------------------------------------------------------------------------------
run usrbin-r scan -r /usr/bin
run usrbin-all scan /usr/bin/*
for n in usrbin-r usrbin-all; do
	check "$n: no file reported for not being ELF" test "$(grep -c 'not an ELF' "$TMP/$n.err")" -eq 0
done
# the files that are not ELF, by inode, as head reads them
not_elf=$(python3 -c '
import os, stat, sys
seen, n = set(), 0
for root, dirs, files in os.walk("/usr/bin"):
    for f in files:
        p = os.path.join(root, f)
        st = os.lstat(p)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        try:
            with open(p, "rb") as fh:
                n += fh.read(4) != b"\x7fELF"
        except OSError:
            pass
print(n)')
check "scan -r /usr/bin: exit 0 and $not_elf files not ELF, as head counts them" bash -c "
	[ $(rc usrbin-r) -eq 0 ] &&
	tail -n 1 '$TMP/usrbin-r.out' | grep -q ', $not_elf not ELF skipped, .*, 0 errors\$'"
echo "scan_many: /usr/bin: $(tail -n 1 "$TMP/usrbin-r.out")"
finish
