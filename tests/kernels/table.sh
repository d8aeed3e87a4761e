#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The README's "Kernel support" table from the last kernel matrix run (make check-kernels):
# one row per kernel with its mode, whether the abort counts per section came out exact
# (every case of trace and stat passed in that kernel's guest), the causes measured against
# the workloads' known ones, what tests/kernels/modes says the mode tells apart and infers,
# and the step, scan --pid and audit --pid cases passed there.
#
#   tests/kernels/table.sh              print the rows
#   tests/kernels/table.sh README.md    put them in place of the table's rows in README.md
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
res=$BUILD/kernels/results.tsv
[ -r "$res" ] || { echo "table.sh: no $res: run make check-kernels first" >&2; exit 2; }

# CASES LOG SCRIPT: "P/N" for the cases of SCRIPT in a guest's run.sh output
cases() {
	awk -v t="$2" '/^== / { on = ($2 == t) } on && /^PASS:/ { p++ } on && /^(FAIL|SKIP):/ { f++ }
		END { if (p + f) printf "%d/%d", p, p + f }' "$1"
}

# CAUSES LOG: the causes trace gave in a guest against the workloads' known ones, from the
# "causes: CASE: key=value..." lines of trace.sh: of the signal-timer workload's aborts those
# named "signal", of the oversubscribed one's those named for the scheduler (preemption,
# migration, deferred; it sends no signal), of the affinity-change one's those named
# "migration", with the moves the workload made and the migrations the tracer saw.
causes() {
	awk '/^causes: / {
		k = $2; sub(/:$/, "", k)
		for (i = 3; i <= NF; i++) { split($i, kv, "="); v[k, kv[1]] = kv[2] }
		seen[k] = 1
	}
	END {
		out = ""
		if (seen["signals"])
			out = sprintf("signal timer: signal %d/%d", v["signals", "signal"], v["signals", "aborts"])
		if (seen["preemption"]) {
			s = v["preemption", "preemption"] + v["preemption", "migration"] + v["preemption", "deferred"]
			out = out sprintf("%soversubscribed: scheduler %d/%d", out ? "; " : "", s, v["preemption", "aborts"])
		}
		if (seen["migrations"])
			out = out sprintf("%saffinity: migration %d/%d (moves %d, migrations seen %d)", out ? "; " : "",
				v["migrations", "migration"], v["migrations", "aborts"],
				v["migrations", "affinity_changes"], v["migrations", "migrations"])
		print out
	}' "$1"
}

rows() {
	local rel suite mode status log tr st counts told inferred cz others t c
	while IFS=$'\t' read -r rel suite _ _ mode _ _ _ _ status _; do
		case $rel in '#'* | '') continue ;; esac
		log=$BUILD/kernels/$rel.log
		tr=$(cases "$log" trace) st=$(cases "$log" stat)
		cz=$(causes "$log")
		others=
		for t in step step_hygiene step_threads step_retry step_fold step_spinlock scan_pid audit_pid; do
			c=$(cases "$log" $t)
			[ -n "$c" ] && others="${others:+$others, }$t $c"
		done
		if [ "$status" != ok ] && [ "$status" != failed ]; then
			counts="not measured: the guest gave no result ($status)"
		elif [ -z "$tr$st" ]; then
			counts="not measured (trace and stat not run)"
		else
			ran=${tr:+trace $tr}${tr:+${st:+, }}${st:+stat $st}
			if [ "${tr%/*}" = "${tr#*/}" ] && [ "${st%/*}" = "${st#*/}" ]; then
				counts="exact in every case ($ran passed)"
			else
				counts="**failed**: $ran passed"
			fi
		fi
		told=$(awk -F'\t' -v m="${mode%% *}" '$1 == m { print $2 }' tests/kernels/modes)
		inferred=$(awk -F'\t' -v m="${mode%% *}" '$1 == m { print $3 }' tests/kernels/modes)
		printf '| %s (%s) | %s | %s | %s | %s | %s | %s |\n' "$rel" "$suite" "$mode" "$counts" \
			"${cz:-not measured}" "${told:-?}" "${inferred:-?}" "${others:-not run}"
	done <"$res"
}

if [ $# -eq 0 ]; then
	rows
	exit 0
fi
# The table under "Kernel support" whose header starts "| kernel | mode |": the rows of the
# kernels the run measured (and the @MATRIX@ placeholder) give way to the new ones; rows of
# other kernels (the build machine's) stay, after them.
rows >"$BUILD/kernels/rows.md"
python3 - "$1" "$BUILD/kernels/rows.md" <<'PY'
import sys
path, rows = sys.argv[1], open(sys.argv[2]).read()
lines = open(path).read().split("\n")
out, i, done = [], 0, False
while i < len(lines):
    l = lines[i]
    out.append(l)
    if not done and l.startswith("| kernel | mode |") and i + 1 < len(lines) \
            and lines[i + 1].startswith("|---"):
        out.append(lines[i + 1])
        i += 2
        new = rows.rstrip("\n").split("\n")
        measured = {r.split("|")[1].split()[0] for r in new}
        kept = []
        while i < len(lines) and (lines[i].startswith("|") or lines[i].strip() == "@MATRIX@"):
            if lines[i].startswith("|") and lines[i].split("|")[1].split()[0] not in measured:
                kept.append(lines[i])
            i += 1
        out.extend(new + kept)
        done = True
        continue
    i += 1
if not done:
    sys.exit("table.sh: no table starting '| kernel | mode |' in " + path)
open(path, "w").write("\n".join(out))
PY
