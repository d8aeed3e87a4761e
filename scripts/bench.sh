#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run every capability's benchmark (scripts/bench-*.sh) against the tool a user would
# otherwise pick, side by side in one run. BUILD names the build directory.
set -u
cd "$(dirname "$0")/.." || exit 2
export BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
status=0
for b in scripts/bench-scan.sh scripts/bench-audit.sh scripts/bench-step.sh scripts/bench-trace.sh \
	scripts/bench-startup.sh scripts/bench-exporter.sh scripts/bench-handler.sh scripts/bench-spinlock.sh; do
	[ -x "$b" ] || continue
	echo "=== $(basename "$b" .sh)"
	bash "$b" || { echo "$(basename "$b"): failed"; status=1; }
	echo
done
exit $status
