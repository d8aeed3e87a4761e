#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A mistyped command or long option: exit 2, one line on stderr naming what was likely meant,
# nothing on stdout. The names typed are made from those --help lists (the command table of
# `rseqdbg --help`, each command's long options), two neighbouring letters swapped.
source "$(dirname "$0")/../lib.sh"

if [ ! -x "$RSEQDBG" ]; then
	fail "rseqdbg is built" "$RSEQDBG missing"
	finish
	exit
fi

# expect NAME PATTERN ARGS...: rseqdbg ARGS exits 2 with one line on stderr matching PATTERN
# (grep -F) and nothing on stdout
expect() {
	local n=$1 want=$2 rc
	shift 2
	"$RSEQDBG" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qF -- "$want" "$TMP/err" &&
		[ ! -s "$TMP/out" ]; then
		pass "$n"
	else
		fail "$n" "rc $rc, stderr: $(head -c 300 "$TMP/err"), stdout: $(head -c 100 "$TMP/out")"
	fi
}

# swap WORD: WORD with its last two letters swapped ("json" -> "jsno")
swap() { local w=$1 n=${#1}; echo "${w:0:n-2}${w:n-1:1}${w:n-2:1}"; }

cmds=$("$RSEQDBG" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]\+\) .*/\1/p')
check "rseqdbg --help lists the commands" test "$(wc -w <<<"$cmds")" -ge 6
for cmd in $cmds; do
	typo=$(swap "$cmd")
	expect "command '$typo' suggests '$cmd'" "rseqdbg: '$typo' is not a command; did you mean '$cmd'?" \
		"$typo"
	# the start of one command names it, as getopt takes the start of one long option; the
	# start of several names none
	start=${cmd:0:2}
	if [ "$(grep -c "^$start" <<<"$cmds")" -eq 1 ]; then
		expect "command '$start' suggests '$cmd'" "did you mean '$cmd'?" "$start"
	else
		expect "command '$start' (several) gets no guess" "(try 'rseqdbg --help')" "$start"
	fi

	for opt in $("$RSEQDBG" "$cmd" --help | grep -oE -- '--[a-z][a-z0-9.-]+' | sort -u); do
		name=${opt#--}
		[ "${name: -1}" != "${name: -2:1}" ] || continue
		typo=--$(swap "$name")
		expect "$cmd $typo suggests $opt" \
			"rseqdbg: $cmd: unknown option '$typo'; did you mean '$opt'?" "$cmd" "$typo"
	done
done

# Before the command, the global options
expect "global --jsno suggests --json" "rseqdbg: unknown option '--jsno'; did you mean '--json'?" \
	--jsno scan /bin/true
expect "global --vresion suggests --version" "did you mean '--version'?" --vresion

# Nothing close: no guess, the way to the help instead
expect "a far command gets no guess" "rseqdbg: 'frobnicate' is not a command (try 'rseqdbg --help')" \
	frobnicate
expect "'help' is not taken for a command" "(try 'rseqdbg --help')" help
expect "a far option gets no guess" "unknown option '--frobnicate' (try 'rseqdbg scan --help')" \
	scan --frobnicate /bin/true
expect "two typos in a short name get no guess" "unknown option '--jnso=' (try" scan --jnso= /bin/true
if grep -q "did you mean" "$TMP/err"; then fail "two typos: no 'did you mean'"; fi

# What getopt itself refuses: the start of several options, a value to a flag
expect "--p names --pid and --pretty" "option '--p' is ambiguous: --pid, --pretty" scan --p 1
expect "--json=1: --json takes no argument" "option '--json' takes no argument" scan --json=1 /bin/true
finish
