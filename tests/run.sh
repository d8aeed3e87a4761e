#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run every unit test binary (cmocka) and every integration script, then print one total:
# "N passed, N failed, N skipped". With RSEQDBG_REQUIRE_ALL=1 (CI) a skip counts as a failure.
# TESTS="a b" runs only what the words name, each a name or a shell pattern: an integration
# script (scan_pid), a unit test binary (test_formats), a cmocka test of one (test_bad_*); a
# word that names nothing is a failure. UNIT=0 leaves out the unit tests (the kernel matrix
# runs the integration scripts in guests, where the unit tests teach nothing new). The scripts of
# NAMED_ONLY run only when a word of TESTS is their very name: package (make check-package)
# builds and installs the Debian packages, which neither make check nor its sanitizer run
# need to repeat.
set -u
cd "$(dirname "$0")/.." || exit 2
export BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
export RSEQDBG="$BUILD/rseqdbg"
log=$(mktemp -d /tmp/rseqdbg-tests.XXXXXX)
pass=0 fail=0 skip=0
failed=()

read -ra words <<<"${TESTS:-}"
declare -A used=()
NAMED_ONLY=(package)
# selected NAME: whether TESTS is empty or one of its words matches NAME (noted as used); for
# a script of NAMED_ONLY, whether a word is NAME
selected() {
	local w hit=1
	if [[ " ${NAMED_ONLY[*]} " == *" $1 "* ]]; then
		for w in "${words[@]}"; do
			[ "$w" = "$1" ] && used[$w]=1 && hit=0
		done
		return $hit
	fi
	[ ${#words[@]} -eq 0 ] && return 0
	for w in "${words[@]}"; do
		# shellcheck disable=SC2053 # the word is a pattern
		[[ $1 == $w ]] && used[$w]=1 && hit=0
	done
	return $hit
}

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
	# The whole binary, or the cmocka tests its source lists that TESTS names.
	args=()
	if ! selected "$name"; then
		for c in $(grep -oE 'cmocka_unit_test[a-z_]*\( *[A-Za-z0-9_]+' tests/unit/"$name".c \
			2>/dev/null | sed 's/.*( *//'); do
			selected "$c" && args+=("$c")
		done
		[ ${#args[@]} -gt 0 ] || continue
	fi
	echo "== $name${args[*]:+ ${args[*]}}"
	out="$log/$name.log"
	CMOCKA_MESSAGE_OUTPUT=stdout "$t" "${args[@]}" >"$out" 2>&1
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
	selected "$name" || continue
	echo "== $name"
	out="$log/$name.log"
	t0=$SECONDS
	timeout "${TEST_TIMEOUT:-600}" bash "$t" >"$out" 2>&1 </dev/null
	rc=$?
	cat "$out"
	echo "-- $name: $((SECONDS - t0))s"
	count "$out" "$name"
	if [ $rc -ne 0 ] && ! grep -qE '^FAIL:' "$out"; then
		echo "FAIL: $name exited $rc"; fail=$((fail + 1)); failed+=("$name")
	fi
done

for w in "${words[@]}"; do
	[ -n "${used[$w]:-}" ] && continue
	echo "FAIL: TESTS: no test matches '$w'"
	fail=$((fail + 1)); failed+=("$w")
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
