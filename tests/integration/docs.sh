#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The documentation stays true to the code: every man page renders without warnings, every
# long option a command's --help lists is documented in its man page, and the reverse.
source "$(dirname "$0")/../lib.sh"

for page in "$TOP"/man/*.[0-9]; do
	name=$(basename "$page")
	warn=$(groff -man -ww -z "$page" 2>&1)
	if [ -z "$warn" ]; then pass "man $name renders"; else fail "man $name renders" "$warn"; fi
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
