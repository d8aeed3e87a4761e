#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The documentation stays true to the code: every man page renders without warnings and without
# words run together, every long option a command's --help lists is documented in its man page,
# and the reverse.
source "$(dirname "$0")/../lib.sh"

# joins PAGE: the lines of PAGE where an alternating font macro (.BR, .RB, .BI, .IB, .IR, .RI)
# prints two of its arguments run together as no reader would: a word right after a word, or
# right after one of ",;.)!?". They print with nothing between them, so prose written as more
# arguments loses its spaces (".BR \-\-x ), and more" prints "--x),andmore"); a suffix
# (".IR n th") and punctuation (".RB ( x ),", ".IR ADDR : PORT") are meant. Fails when any.
joins() {
	python3 - "$1" <<'PY'
import re, sys

SUFFIXES = {"th", "st", "nd", "rd", "s", "es"}

def split_args(line):
    """The arguments of a macro line as groff splits them: at spaces, "..." quoted (""
    inside a quote), a backslash escape kept with what it escapes."""
    args, i, n = [], 0, len(line)
    while i < n:
        if line[i] == " ":
            i += 1
            continue
        quoted = line[i] == '"'
        i += quoted
        a = ""
        while i < n:
            if quoted and line.startswith('""', i):
                a, i = a + '"', i + 2
            elif quoted and line[i] == '"':
                i += 1
                break
            elif not quoted and line[i] == " ":
                break
            elif line[i] == "\\":
                a, i = a + line[i:i + 2], i + 2
            else:
                a, i = a + line[i], i + 1
        args.append(a)
    return args

def printed(a):
    """What an argument prints, as far as its ends tell: font changes and \\& print
    nothing, \\- is a hyphen, \\(xx and \\e a symbol, "\\ " a space."""
    a = re.sub(r"\\f(\[[^]]*\]|\(..|.)|\\&", "", a)
    a = a.replace("\\-", "-").replace("\\ ", " ")
    return re.sub(r"\\\(..|\\e", "#", a)

bad = False
path = sys.argv[1]
for no, line in enumerate(open(path, encoding="utf-8"), 1):
    m = re.match(r"\.(BR|RB|BI|IB|IR|RI) +(.*)", line.rstrip("\n"))
    if not m:
        continue
    args = [printed(a) for a in split_args(m.group(2))]
    for l, r in zip(args, args[1:]):
        if not l or not r or not r[0].isalnum():
            continue
        if (l[-1].isalnum() and r not in SUFFIXES) or l[-1] in ",;.)!?":
            print("line %d prints '%s%s': %s" % (no, l, r, line.strip()))
            bad = True
            break
sys.exit(bad)
PY
}

# Every page renders without a warning, and no line of it runs words together.
for page in "$TOP"/man/*.[0-9]; do
	name=$(basename "$page")
	warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	if [ -z "$warn" ]; then pass "man $name renders"; else fail "man $name renders" "$warn"; fi
	if out=$(joins "$page"); then pass "man $name: no words run together"
	else fail "man $name: no words run together" "$out"; fi
done

longopts() { grep -oE -- '--[a-z][a-z0-9-]+' | sort -u; }

for cmd in scan audit step trace stat exporter; do
	page="$TOP/man/rseqdbg-$cmd.1"
	if [ ! -f "$page" ]; then
		fail "rseqdbg-$cmd.1 exists"
		continue
	fi
	help=$("$RSEQDBG" "$cmd" --help 2>&1)
	rc=$?
	check "rseqdbg $cmd --help exits 0" test "$rc" -eq 0
	# man source writes options as \-\-name; normalise before comparing.
	in_man=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' "$page" | longopts)
	in_help=$(longopts <<<"$help")
	missing=$(comm -23 <(echo "$in_help") <(echo "$in_man") | tr '\n' ' ')
	extra=$(comm -13 <(echo "$in_help") <(echo "$in_man") | tr '\n' ' ')
	if [ -z "$missing" ]; then pass "$cmd: --help options are in the man page"
	else fail "$cmd: --help options are in the man page" "missing: $missing"; fi
	if [ -z "$extra" ]; then pass "$cmd: man page options are in --help"
	else fail "$cmd: man page options are in --help" "not in --help: $extra"; fi
done

out=$("$RSEQDBG" --version)
check "--version prints the version" grep -qE '^rseqdbg [0-9]+\.[0-9]+\.[0-9]+$' <<<"$out"
check "README quick start names make demo and make check" \
	bash -c "grep -q 'make demo' '$TOP/README.md' && grep -q 'make check' '$TOP/README.md'"
finish
