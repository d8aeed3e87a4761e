#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run every unit test binary (cmocka) and every integration script, then print one total:
# "N passed, N failed, N skipped". With RSEQDBG_REQUIRE_ALL=1 (CI) a skip counts as a failure.
# TESTS="a b" runs only the integration scripts named; UNIT=0 leaves out the unit tests (the
# kernel matrix runs the integration scripts in guests, where the unit tests teach nothing new).
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
export RSEQDBG="$BUILD/rseqdbg"
log=$(mktemp -d /tmp/rseqdbg-tests.XXXXXX)
pass=0 fail=0 skip=0
failed=()

count() { # $1 = log file, $2 = name
	local p f s
	p=$(grep -cE '^(PASS:|\[       OK \])' "$1")
	f=$(grep -cE '^(FAIL:|\[  FAILED  \] [a-z_])' "$1")
	s=$(grep -cE '^(SKIP:|\[  SKIPPED \] [a-z_])' "$1")
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	[ "$f" -eq 0 ] || failed+=("$2")
}

for t in "$BUILD"/tests/test_*; do
	[ "${UNIT:-1}" = 1 ] || break
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "== $name"
	out="$log/$name.log"
	( cd tests && CMOCKA_MESSAGE_OUTPUT=stdout "$t" ) >"$out" 2>&1
	rc=$?
	cat "$out"
	count "$out" "$name"
	if [ $rc -ne 0 ] && ! grep -qE '^\[  FAILED  \] [a-z_]' "$out"; then
		echo "FAIL: $name exited $rc"; fail=$((fail + 1)); failed+=("$name")
	fi
done

for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	[ -n "${TESTS:-}" ] && ! grep -qw "$name" <<<"$TESTS" && continue
	echo "== $name"
	out="$log/$name.log"
	timeout "${TEST_TIMEOUT:-600}" bash "$t" >"$out" 2>&1 </dev/null
	rc=$?
	cat "$out"
	count "$out" "$name"
	if [ $rc -ne 0 ] && ! grep -qE '^FAIL:' "$out"; then
		echo "FAIL: $name exited $rc"; fail=$((fail + 1)); failed+=("$name")
	fi
done

if [ "${RSEQDBG_REQUIRE_ALL:-0}" = 1 ] && [ $skip -gt 0 ]; then
	echo "skips are failures here (RSEQDBG_REQUIRE_ALL=1):"
	grep -hE '^SKIP:' "$log"/*.log
	fail=$((fail + skip))
fi
[ ${#failed[@]} -eq 0 ] || echo "failed: ${failed[*]}"
rm -rf "$log"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
