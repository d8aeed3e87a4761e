#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run the libelfscan fuzzer for a bounded time: scripts/fuzz.sh FUZZER SECONDS
# The corpus starts from every fixture (good and malformed) and lives in a temporary
# directory; a crash, leak or sanitizer report fails the run and keeps the reproducer.
set -eu
bin=${1:?usage: fuzz.sh FUZZER SECONDS}
secs=${2:-60}
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/rseqdbg-fuzz.XXXXXX)
trap 'rm -rf "$work/corpus"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"

n=0
for dir in "$top/tests/fixtures/bin" "$top/tests/fixtures/bad" "$top/tests/fixtures/hostile"; do
	[ -d "$dir" ] || continue
	while IFS= read -r -d '' f; do
		cp "$f" "$work/corpus/seed-$n"
		n=$((n + 1))
	done < <(find "$dir" -type f -size -4M -print0)
done
echo "fuzz: $n seeds, ${secs}s, artifacts in $work/artifacts"

if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1; then
	tail -n 12 "$work/log"
	echo "fuzz: no crash in ${secs}s"
	rm -rf "$work"
	exit 0
fi
tail -n 60 "$work/log"
echo "fuzz: FAILED; reproducer(s) kept in $work/artifacts:" >&2
ls -l "$work/artifacts" >&2
exit 1
