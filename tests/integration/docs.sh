#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The documentation stays true to the code: every man page renders without warnings and its
# macros print what they say (no words run together, no quotes lost), every long option a
# command's --help lists is documented in its man page, and the reverse.
source "$(dirname "$0")/../lib.sh"

# mangled PAGE: the macro lines of PAGE that do not print what their author wrote, one line
# each; fails when any:
# - an alternating font macro (.BR, .RB, .BI, .IB, .IR, .RI) prints its arguments with nothing
#   between them, so prose written as more arguments loses its spaces (".BR \-\-x ), and more"
#   prints "--x),andmore"): a word right after a word or after ",;.)!?" is flagged; a suffix
#   (".IR n th") and punctuation (".RB ( x ),", ".IR ADDR : PORT") are meant;
# - .B and .I print theirs a space apart: an argument starting with ",;:)!?" prints after a
#   space (".I a ", " b" prints "a ,  b");
# - a quote that opens an argument is groff's: text right after its closing quote starts
#   another argument and the quotes are lost ('.B {"a": "b"}' prints '{"a": b }'), and a quote
#   never closed takes the rest of the line into one argument.
mangled() {
	python3 - "$1" <<'PY'
import re, sys

ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}
SUFFIXES = {"th", "st", "nd", "rd", "s", "es"}

def split_args(line):
    """The arguments of a macro line as groff splits them (at spaces, "..." quoted with ""
    inside a quote, a backslash escape kept with what it escapes), and what in the quoting
    loses text."""
    args, faults, i, n = [], [], 0, len(line)
    while i < n:
        if line[i] == " ":
            i += 1
            continue
        quoted = line[i] == '"'
        i += quoted
        a, closed = "", not quoted
        while i < n:
            if quoted and line.startswith('""', i):
                a, i = a + '"', i + 2
            elif quoted and line[i] == '"':
                i, closed = i + 1, True
                if i < n and line[i] != " ":
                    faults.append("'%s' right after the quoted \"%s\"" % (line[i:].split(" ")[0], a))
                break
            elif not quoted and line[i] == " ":
                break
            elif line[i] == "\\":
                a, i = a + line[i:i + 2], i + 2
            else:
                a, i = a + line[i], i + 1
        if not closed:
            faults.append("a quote never closed")
        args.append(a)
    return args, faults

def printed(a):
    """What an argument prints, as far as its ends tell: font changes and \\& print
    nothing, \\- is a hyphen, \\(xx and \\e a symbol, "\\ " a space."""
    a = re.sub(r"\\f(\[[^]]*\]|\(..|.)|\\&", "", a)
    a = a.replace("\\-", "-").replace("\\ ", " ")
    return re.sub(r"\\\(..|\\e", "#", a)

bad = False
for no, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    m = re.match(r"\.([A-Za-z]{1,2}) +(.*)", line.rstrip("\n"))
    if not m:
        continue
    raw, faults = split_args(m.group(2))
    args = [printed(a) for a in raw]
    if m.group(1) in ALTERNATING:
        for l, r in zip(args, args[1:]):
            if l and r and r[0].isalnum() and (
                    (l[-1].isalnum() and r not in SUFFIXES) or l[-1] in ",;.)!?"):
                faults.append("'%s%s' runs words together" % (l, r))
                break
    elif m.group(1) in ("B", "I"):
        for a in args[1:]:
            if a.lstrip()[:1] in tuple(",;:)!?"):
                faults.append("'%s' prints after a space" % a.strip())
                break
    for f in faults:
        print("line %d: %s: %s" % (no, f, line.strip()))
        bad = True
sys.exit(bad)
PY
}

# Every page renders without a warning, and every line as it was written.
for page in "$TOP"/man/*.[0-9]; do
	name=$(basename "$page")
	warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	if [ -z "$warn" ]; then pass "man $name renders"; else fail "man $name renders" "$warn"; fi
	if out=$(mangled "$page"); then pass "man $name: macros print what they say"
	else fail "man $name: macros print what they say" "$out"; fi
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
