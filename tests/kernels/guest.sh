#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Inside a matrix guest: the kernel, the tracer's mode as `trace --check` names it, then the
# privileged integration tests (TESTS) through tests/run.sh, skips counting as failures.
set -u
cd "$(dirname "$0")/../.." || exit 2
export BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
echo "kernel: $(uname -r)"
out=$("$BUILD/rseqdbg" trace --check --json 2>/dev/null)
rc=$?
mode=$(python3 -c 'import json, sys
try:
    print(json.loads(sys.stdin.read()).get("mode") or "none")
except ValueError:
    print("none")' <<<"$out")
[ $rc -eq 0 ] || mode="$mode (--check exit $rc)"
echo "mode: $mode"
# the cases a kernel can change, not the usage errors and output formats (tests/lib.sh)
export RSEQDBG_TEST_QUICK=${RSEQDBG_TEST_QUICK:-1}
UNIT=0 RSEQDBG_REQUIRE_ALL=1 tests/run.sh
