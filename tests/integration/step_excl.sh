#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg step through load-exclusive/store-exclusive loops (aarch64): stepped one instruction
# at a time the store fails forever, so step runs each sequence as a unit, in the default mode
# and with --single-step alike. excl_loop counts its increments and the failed stores: the
# instructions stepped from excl_calls to its return must be what excl_loop.S says for them,
# and the program must end with its count right. On x86_64 the same loop is a locked add.
source "$(dirname "$0")/../lib.sh"

WL="$BUILD/tests/workloads/excl_loop"
if ! have_ptrace; then
	skip "step exclusive" "ptrace not permitted"
	finish
	exit
fi
kv() { sed -n "s/.*$2=\([^ ]*\).*/\1/p" "$1"; }

n=300
for mode in default --single-step; do
	args=(--quiet --json --detach --from excl_calls --finish)
	[ $mode = default ] || args+=("$mode")
	timeout 120 "$RSEQDBG" step "${args[@]}" -- "$WL" $n >"$TMP/excl.$mode.json" 2>"$TMP/excl.$mode.err"
	rc=$?
	grep -v '^{' "$TMP/excl.$mode.json" >"$TMP/excl.$mode.out"
	got=$(sed -n 's/.*"kind":"summary".*"instructions":\([0-9]*\).*/\1/p' "$TMP/excl.$mode.json")
	r=$(kv "$TMP/excl.$mode.out" retries)
	case $(uname -m) in
	aarch64) want=$((5 + 7 * n + 9 * ${r:-0})) how="5 + 7 x $n + 9 x ${r:-?} retries" ;;
	*) want=$((3 + 5 * n)) how="3 + 5 x $n" ;;
	esac
	if [ $rc -eq 0 ] && [ "$got" = "$want" ] && [ "$(kv "$TMP/excl.$mode.out" result)" = ok ]; then
		pass "step $mode: exclusive loops run whole: $got instructions ($how), counter $(kv "$TMP/excl.$mode.out" counter)"
	else
		fail "step $mode: exclusive loops run whole" "rc=$rc instructions=$got, want $want ($how); $(cat "$TMP/excl.$mode.out") $(tail -c 300 "$TMP/excl.$mode.err")"
	fi
done

finish
