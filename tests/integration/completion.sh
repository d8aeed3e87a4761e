#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The bash completion (completions/rseqdbg), driven as bash-completion drives it (COMP_WORDS,
# COMP_CWORD, COMP_LINE, COMP_POINT), offers what other sources say there is: the commands
# with a man page, each command's long options as its man page lists them, the check ids of
# rseqdbg-audit(1), the PID and threads of a process this script started (/proc), the
# functions nm finds in that program, values the tool's own parser accepts, and after -- the
# commands and files bash itself would complete.
source "$(dirname "$0")/../lib.sh"

BC=/usr/share/bash-completion/bash_completion
if [ ! -r "$BC" ]; then
	fail "bash-completion is installed" "$BC missing (scripts/deps.sh installs it)"
	finish
	exit
fi
if [ ! -x "$RSEQDBG" ]; then
	fail "rseqdbg is built" "$RSEQDBG missing"
	finish
	exit
fi
cd "$TOP" || exit 2

# comp CWORD WORD...: the candidates, one a line and sorted, that the completion offers for
# word CWORD of the command line WORD... (the cursor at the end of that word)
comp() {
	bash --norc --noprofile -c '
		source "$1"
		source "$2"
		COMP_CWORD=$3
		shift 3
		COMP_WORDS=("$@")
		COMP_LINE="${COMP_WORDS[*]}"
		before=("${COMP_WORDS[@]:0:COMP_CWORD+1}")
		before="${before[*]}"
		COMP_POINT=${#before}
		_rseqdbg "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BC" "$TOP/completions/rseqdbg" "$@" 2>/dev/null |
		sed '/^$/d' | sort -u
}

# same NAME WANT GOT: pass when the two lists (one item a line) are the same set
same() {
	local want got
	want=$(sort -u <<<"$2" | sed '/^$/d')
	got=$(sort -u <<<"$3" | sed '/^$/d')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "$1"
	else
		fail "$1" "missing: $(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' ')" \
			"extra: $(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')"
	fi
}

# has NAME ITEM LIST: pass when ITEM is a line of LIST
has() { if grep -qxF -- "$2" <<<"$3"; then pass "$1"; else fail "$1" "got: $(tr '\n' ' ' <<<"$3")"; fi; }
# lacks NAME TEXT LIST: pass when no line of LIST holds TEXT
lacks() { if ! grep -qF -- "$2" <<<"$3"; then pass "$1"; else fail "$1" "got: $(tr '\n' ' ' <<<"$3")"; fi; }

# The long options a man page documents (as docs.sh reads them)
man_longopts() { sed 's/\\-/-/g; s/\\f[BIRP]//g' "$1" | grep -oE -- '--[a-z][a-z0-9.-]*[a-z0-9]' | sort -u; }

R=$RSEQDBG

# --- commands and options ---------------------------------------------------------------------
cmds=$(ls man/rseqdbg-*.1 | sed 's|man/rseqdbg-||; s|\.1$||')
same "commands: those with a man page" "$cmds" "$(comp 1 "$R" "")"
same "commands after a global option" "$cmds" "$(comp 2 "$R" --json "")"
has "a command's start: scan" scan "$(comp 1 "$R" sc)"
# rseqdbg(1)'s OPTIONS, the items of its .TP list
global=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' man/rseqdbg.1 | awk 'p { print; p = 0 } /^\.TP/ { p = 1 }' |
	sed 's/\\-/-/g' | grep -oE -- '--[a-z-]+')
same "global long options: rseqdbg(1)'s" "$global" "$(comp 1 "$R" -- --)"

for cmd in $cmds; do
	same "$cmd: long options are those of rseqdbg-$cmd(1)" "$(man_longopts "man/rseqdbg-$cmd.1")" \
		"$(comp 2 "$R" "$cmd" --)"
done
has "scan: a short option (-p)" -p "$(comp 2 "$R" scan -)"

# --- option values ----------------------------------------------------------------------------
ids=$(grep -oE '^\.BR RSEQ[0-9]+ ' man/rseqdbg-audit.1 | awk '{ print $2 }')
check "rseqdbg-audit(1) documents check ids" test "$(wc -l <<<"$ids")" -ge 20
same "audit --check: the ids of rseqdbg-audit(1)" "$ids" "$(comp 3 "$R" audit --check "")"
same "audit --skip RSEQ0: the ids of rseqdbg-audit(1) so starting" "$(grep '^RSEQ0' <<<"$ids")" \
	"$(comp 3 "$R" audit --skip RSEQ0)"
same "audit --skip=RSEQ01: the value after =" "$(grep '^RSEQ01' <<<"$ids")" \
	"$(comp 2 "$R" audit --skip=RSEQ01)"
lacks "trace --check takes no value: no check id after it" RSEQ "$(comp 3 "$R" trace --check "")"

# Each value offered is one the tool's own parser takes (the error is then about the next
# option, not this one: "--events: '...' is not ..."), and a value not offered is refused.
for opt in "audit --fail-on" "trace --events"; do
	read -r cmd o <<<"$opt"
	vals=$(comp 3 "$R" "$cmd" "$o" "")
	check "$cmd $o: values offered" test "$(wc -l <<<"$vals")" -ge 3
	for v in $vals; do
		lacks "$cmd $o $v: the parser takes it" "$o: " \
			"$("$R" "$cmd" "$o" "$v" --frobnicate 2>&1 >/dev/null)"
	done
	has_err=$("$R" "$cmd" "$o" nonsense --frobnicate 2>&1 >/dev/null)
	check "$cmd $o nonsense: the parser refuses it" grep -qF -- "$o: " <<<"$has_err"
done
same "trace --events abort,m: the list's last item" "abort,migrate" "$(comp 3 "$R" trace --events abort,m)"

# A process of this script's: its PID, its threads, its functions
wl=$BUILD/examples/percpu_counter
"$wl" --threads 2 --wait >"$TMP/wl.out" 2>&1 < <(sleep 120) &
pid=$!
if wait_for -p "$pid" 60 "$wl to be ready" file_has '^ready' "$TMP/wl.out"; then
	for cmd in "scan -p" "audit --pid" "step -p" "trace -p" "exporter --pid"; do
		read -r c o <<<"$cmd"
		has "$c $o ${pid:0:2}: the live PID $pid" "$pid" "$(comp 3 "$R" "$c" "$o" "${pid:0:2}")"
	done
	same "step -p PID -t: the threads of PID" "$(ls /proc/"$pid"/task)" \
		"$(comp 5 "$R" step -p "$pid" -t "")"
	funcs=$(nm -f sysv --defined-only "$wl" | awk -F'|' '$4 ~ /FUNC/ { n = $1; gsub(/ /, "", n);
		sub(/\..*/, "", n); print n }' | sort -u)
	check "nm finds percpu_inc in the workload" grep -qx percpu_inc <<<"$funcs"
	same "step -p PID --from: the functions of its program (nm)" "$funcs" \
		"$(comp 5 "$R" step -p "$pid" --from "")"
	same "step --until per -- PROG: its functions so starting (nm)" "$(grep '^per' <<<"$funcs")" \
		"$(comp 3 "$R" step --until per -- "$wl" --threads 1)"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# --- operands, and after -- ------------------------------------------------------------------
has "scan FILE: a directory of fixtures" tests/fixtures/bin/x86_64 \
	"$(comp 2 "$R" scan tests/fixtures/bin/x86_6)"
same "stat -- bas: the commands bash completes" "$(compgen -c bas | sort -u)" \
	"$(comp 3 "$R" stat -- bas)"
same "step -- PROG ./tests/fixtures/bin/x86_6: PROG's operands are files" "./tests/fixtures/bin/x86_64" \
	"$(comp 4 "$R" step -- /bin/true ./tests/fixtures/bin/x86_6)"
finish
