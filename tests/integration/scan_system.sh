#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Real binaries through the sanitizers: `scan` and `audit` every ELF file under a few system
# directories. Each run must exit 0, 1 (audit findings) or 2 (a file it cannot read), print
# at most one line on stderr per file and only "rseqdbg: CMD: FILE: what is wrong" lines, and
# never crash, hang or make ASan/UBSan speak.
#
# The whole sweep runs where it matters, in the sanitizer build (make SANITIZE=address,undefined
# check), or with SYSSCAN_FORCE=1; any other build checks a sample of SYSSCAN_SAMPLE files
# (default 100, no large static executables) within a budget of 30 s. The time it may take is
# bounded: files are taken in a shuffled order (SYSSCAN_SEED, or else RSEQDBG_SEED: printed,
# it reproduces the order) until SYSSCAN_BUDGET seconds (default 240) are spent, and the count
# of files done is printed. SYSSCAN_DIRS overrides the directories.
source "$(dirname "$0")/../lib.sh"

if [ ! -x "$RSEQDBG" ]; then
	fail "scan_system" "build first: $RSEQDBG missing"
	finish
	exit
fi
if grep -qa __asan_init "$RSEQDBG" || [ "${SYSSCAN_FORCE:-0}" = 1 ]; then
	SAMPLE=${SYSSCAN_SAMPLE:-0} SANITIZED=", no sanitizer report"
	STATIC=${SYSSCAN_STATIC:-5}
	BUDGET=${SYSSCAN_BUDGET:-240}
else
	echo "scan_system: $RSEQDBG is not a sanitizer build: a sample, the whole sweep is the sanitizer build's"
	SAMPLE=${SYSSCAN_SAMPLE:-100} SANITIZED=""
	STATIC=${SYSSCAN_STATIC:-0}
	BUDGET=${SYSSCAN_BUDGET:-30}
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

DIRS=${SYSSCAN_DIRS:-/usr/bin /usr/sbin /usr/lib/$(uname -m)-linux-gnu /usr/libexec /usr/lib/debug}
seed_random
SEED=${SYSSCAN_SEED:-$RSEQDBG_SEED}
BATCH=25
start=$SECONDS

# Regular ELF files (no symlinks, each inode once), shuffled by SEED, NUL-separated; first
# STATIC (SYSSCAN_STATIC) statically linked executables from anywhere under /usr, those
# with rseq tables (tcmalloc's) first, then the largest: they carry what the others do not.
# shellcheck disable=SC2086 # DIRS is a list of directories
python3 - "$SEED" "$STATIC" $DIRS >"$TMP/files" <<'EOF'
import os, random, stat, struct, sys

def static_exec(p, size):
    """For an ELF executable without PT_INTERP or PT_DYNAMIC, whether it has rseq tables;
    None for any other file."""
    with open(p, "rb") as f:
        h = f.read(64)
        if len(h) < 64 or h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
            return None
        e_type, = struct.unpack("<H", h[16:18])
        phoff, shoff = struct.unpack("<QQ", h[32:48])
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack("<HHHHH", h[54:64])
        if e_type != 2 or phentsize != 56 or phoff + phnum * 56 > size:
            return None
        f.seek(phoff)
        ph = f.read(phnum * 56)
        if {struct.unpack("<I", ph[i * 56:i * 56 + 4])[0] for i in range(phnum)} & {2, 3}:
            return None
        if shentsize != 64 or not 0 < shstrndx < shnum or shoff + shnum * 64 > size:
            return False
        f.seek(shoff + shstrndx * 64 + 24)
        off, n = struct.unpack("<QQ", f.read(16))
        f.seek(off)
        return b"\0__rseq_" in f.read(min(n, 1 << 16))

big = []
if int(sys.argv[2]) > 0:
    for root, dirs, names in os.walk("/usr"):
        for n in names:
            p = os.path.join(root, n)
            try:
                st = os.lstat(p)
                if stat.S_ISREG(st.st_mode) and st.st_size > (1 << 20):
                    rseq = static_exec(p, st.st_size)
                    if rseq is not None:
                        big.append((rseq, st.st_size, p))
            except OSError:
                pass
big = [p for _, _, p in sorted(big, reverse=True)[:int(sys.argv[2])]]
seen, files = set(), []
for p in big:
    st = os.stat(p)
    seen.add((st.st_dev, st.st_ino))
for top in sys.argv[3:]:
    for root, dirs, names in os.walk(top):
        for n in names:
            p = os.path.join(root, n)
            try:
                st = os.lstat(p)
                if not stat.S_ISREG(st.st_mode) or st.st_size < 4 or (st.st_dev, st.st_ino) in seen:
                    continue
                with open(p, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
            except OSError:
                continue
            seen.add((st.st_dev, st.st_ino))
            files.append(p)
files.sort()
random.Random(int(sys.argv[1])).shuffle(files)
sys.stdout.write("".join(p + "\0" for p in big + files))
EOF
mapfile -d '' files <"$TMP/files"
found=${#files[@]}
[ "$SAMPLE" -gt 0 ] && files=("${files[@]:0:SAMPLE}")
total=${#files[@]}
echo "scan_system: $total of $found ELF files under $DIRS and static executables under /usr (seed $SEED, budget ${BUDGET}s)"
[ "$STATIC" -gt 0 ] && echo "scan_system: first: $(printf '%s ' "${files[@]:0:STATIC}")"
if [ "$total" -eq 0 ]; then
	fail "scan_system" "no ELF file found under $DIRS"
	finish
	exit
fi

# judge CMD RC ERRFILE FILE...: why the run of CMD on FILE... is wrong, empty when it is not
judge() {
	local cmd=$1 rc=$2 err=$3
	shift 3
	if grep -qE 'Sanitizer|runtime error|AddressSanitizer|LeakSanitizer' "$err"; then
		grep -m1 -E 'Sanitizer|runtime error' "$err"
		return
	fi
	case $rc in
	0 | 2) ;;
	1) [ "$cmd" = audit ] || { echo "exit 1"; return; } ;;
	124) echo "no answer within 300 s"; return ;;
	*) echo "exit $rc"; return ;;
	esac
	python3 - "$cmd" "$rc" "$err" "$@" <<'EOF'
import sys
cmd, rc, err, files = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
lines = open(err, "rb").read().decode("utf-8", "replace").split("\n")[:-1]
named = []
for l in lines:
    pre = "rseqdbg: %s: " % cmd
    f = next((f for f in files if l.startswith(pre + f + ": ")), None)
    if f is None:
        print("stderr line names none of the files: %r" % l[:200])
        sys.exit()
    named.append(f)
if len(set(named)) != len(named):
    print("more than one stderr line for %s" % [f for f in named if named.count(f) > 1][0])
elif rc == 2 and not named:
    print("exit 2 without a line on stderr")
elif rc != 2 and named:
    print("exit %d with an error line: %r" % (rc, lines[0][:200]))
EOF
}

# run CMD FILE...: run CMD over the files; on a wrong answer, find the file alone
run() {
	local cmd=$1 rc why f
	shift
	timeout 300 "$RSEQDBG" "$cmd" -- "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	why=$(judge "$cmd" $rc "$TMP/err" "$@")
	[ -z "$why" ] && return 0
	[ $# -eq 1 ] && { fail "$cmd $1" "$why"; return 1; }
	for f in "$@"; do
		run "$cmd" "$f" || return 1
	done
	fail "$cmd of a batch holding ${1}..." "$why (no file alone reproduces it)"
	return 1
}

done_n=0
for ((i = 0; i < total; i += BATCH)); do
	# the budget counts the search for files too; the first batch always runs
	if [ "$i" -gt 0 ] && [ $((SECONDS - start)) -ge "$BUDGET" ]; then
		break
	fi
	batch=("${files[@]:i:BATCH}")
	run scan "${batch[@]}"
	grep '^rseqdbg: scan: ' "$TMP/err" >>"$TMP/refused"
	run audit "${batch[@]}"
	done_n=$((done_n + ${#batch[@]}))
done
: >>"$TMP/refused"
echo "scan_system: $done_n of $total files scanned and audited in $((SECONDS - start)) s" \
	"($(wc -l <"$TMP/refused") refused by scan)"
head -n 5 "$TMP/refused"
# Linkers never write sections that share file bytes or lose the name table: a real file
# refused for that means the checks are wrong, not the file.
if grep -E 'overlap|section name table|SHN_XINDEX' "$TMP/refused" >"$TMP/wrong"; then
	fail "real files refused by the section header checks" "$(head -n 3 "$TMP/wrong")"
fi
[ "$_fails" -eq 0 ] && check "scan and audit of $done_n real ELF files: no crash$SANITIZED, exit 0/1/2, one stderr line per refused file" \
	test "$done_n" -gt 0
finish
