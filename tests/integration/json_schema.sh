#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every command's JSON output matches its schema in schemas/ (JSON Schema draft 2020-12,
# checked with python3-jsonschema): scan of every bundled fixture, of a file it cannot read,
# of a tree (-r: file_counts), of a live process with a thread inside a section and of a core;
# audit of the workloads (with their findings), of a tree, of a process, of a core and its
# checks list; step's lines (steps, passages, a thread found
# inside a section, fork and exec events, the summary); trace's events, user-abort events,
# summaries and --check; stat's document; and each command's error document. The schemas
# allow no unknown member where the shape is stable and require every member the commands
# always write, which a document with one member too many or too few shows.
source "$(dirname "$0")/../lib.sh"

cd "$TOP" || exit 2
SCHEMAS=$TOP/schemas
CHECK=$TOP/tests/tools/check_schema.py
WL="$BUILD/tests/workloads/rseq_workload"
SPIN="$BUILD/tests/workloads/spin_cs"
PL="$BUILD/tests/workloads/percpu_lib"
FE="$BUILD/tests/workloads/fork_exec"

# Debian's python3-jsonschema is what scripts/deps.sh installs: its interpreter first.
PY=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'import jsonschema' 2>/dev/null; then
		PY=$p
		break
	fi
done
if [ -z "$PY" ]; then
	fail "json schema: python3-jsonschema" "not installed (scripts/deps.sh installs it)"
	finish
	exit
fi
for f in "$WL" "$SPIN" "$PL" "$FE"; do
	[ -x "$f" ] || { fail "json schema: workloads" "$f not built (make tests)"; finish; exit; }
done

# valid WHAT SCHEMA [--lines] FILE...: the documents (or lines) of each FILE match SCHEMA
valid() {
	local what=$1 schema=$2 out
	shift 2
	if out=$("$PY" "$CHECK" "$SCHEMAS" "$schema" "$@" 2>&1); then
		pass "json schema: $what ($(tail -1 <<<"$out"))"
	else
		fail "json schema: $what" "$(head -c 600 <<<"$out" | tr '\n' '|')"
	fi
}
# has FILE PATTERN: the output holds what the case is meant to cover
has() { grep -q -- "$2" "$1" || fail "json schema: $(basename "$1") covers $2" "$(head -c 300 "$1")"; }

# --- the schemas refuse what they are meant to ---------------------------------------------------
"$RSEQDBG" scan --json "$TOP/tests/fixtures/bin/x86_64/cs-pie" >"$TMP/one.json"
"$PY" - "$TMP/one.json" "$TMP" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
extra = json.loads(json.dumps(d))
extra["files"][0]["sections"][0]["start"]["address"] = 1
json.dump(extra, open(sys.argv[2] + "/extra.json", "w"))
missing = json.loads(json.dumps(d))
del missing["files"][0]["sections"][0]["abort"]["module" if "module" in
        missing["files"][0]["sections"][0]["abort"] else "line"]
json.dump(missing, open(sys.argv[2] + "/missing.json", "w"))
EOF
for bad in extra missing; do
	if "$PY" "$CHECK" "$SCHEMAS" scan.json "$TMP/$bad.json" >"$TMP/$bad.out" 2>&1; then
		fail "json schema: a location with a member $bad is refused" "$(cat "$TMP/$bad.out")"
	else
		pass "json schema: a location with a member $bad is refused ($(head -1 "$TMP/$bad.out" | cut -d: -f3-))"
	fi
done

# --- scan -------------------------------------------------------------------------------------
"$RSEQDBG" scan --json tests/fixtures/bin/*/* >"$TMP/scan-all.json" 2>/dev/null
"$RSEQDBG" scan --json --pretty "$WL" "$PL" /nonexistent/file >"$TMP/scan-err.json" 2>/dev/null
"$RSEQDBG" scan --json --addr 0x1 "$WL" >"$TMP/scan-addr.json" 2>/dev/null
"$RSEQDBG" scan --json --bogus-option >"$TMP/scan-usage.json" 2>/dev/null
# -r over a tree with a text file and an ELF file cut short: file_counts and an error entry
mkdir -p "$TMP/tree/sub"
cp tests/fixtures/bin/x86_64/cs-pie "$(type -P true)" "$TMP/tree/sub/"
echo text >"$TMP/tree/notes"
printf '\177ELF' >"$TMP/tree/cut"
"$RSEQDBG" scan --json -r "$TMP/tree" >"$TMP/scan-tree.json" 2>/dev/null
"$RSEQDBG" audit --json -r "$TMP/tree" >"$TMP/audit-tree.json" 2>/dev/null
has "$TMP/scan-tree.json" '"file_counts":{'
has "$TMP/scan-tree.json" '"error"'
has "$TMP/audit-tree.json" '"file_counts":{'
has "$TMP/scan-err.json" '"error"'
has "$TMP/scan-all.json" '"exit":'
"$SPIN" --iters 1000000 --spin 100000000 >/dev/null 2>&1 &
sp=$!
for _ in $(seq 20); do
	"$RSEQDBG" scan --json --pid "$sp" >"$TMP/scan-pid.json" 2>/dev/null &&
		grep -q '"inside":{' "$TMP/scan-pid.json" && break
done
has "$TMP/scan-pid.json" '"inside":{'
has "$TMP/scan-pid.json" '"module":"/'
valid "scan: files, fixtures of every machine, --addr, errors, --pid, -r" scan.json \
	"$TMP/scan-all.json" "$TMP/scan-err.json" "$TMP/scan-addr.json" "$TMP/scan-pid.json" \
	"$TMP/scan-usage.json" "$TMP/scan-tree.json" tests/golden/scan/*.json

# A core of core_crash stopped with its threads inside and outside sections (gdb's gcore: no
# core_pattern to depend on); scan_core covers the kernel's cores.
CC="$BUILD/tests/workloads/core_crash"
# A thread preempted as gdb attaches can be stopped just after the kernel aborted its section,
# inside none: the core is taken again (at most 10 times) until one shows a thread inside.
if have_ptrace && command -v gcore >/dev/null && [ -x "$CC" ]; then
	for _ in $(seq 10); do
		rm -f "$TMP"/cc.core.*
		"$CC" --mode stop --out "$TMP/cc.rec" >"$TMP/cc.out" 2>&1 &
		cc=$!
		wait_grep '^ready$' "$TMP/cc.out" && gcore -o "$TMP/cc.core" "$cc" >/dev/null 2>&1
		kill -KILL "$cc"
		wait "$cc" 2>/dev/null
		"$RSEQDBG" scan --json --core "$TMP/cc.core.$cc" >"$TMP/scan-core.json" 2>/dev/null
		grep -q '"inside":{' "$TMP/scan-core.json" && break
	done
	"$RSEQDBG" audit --json --core "$TMP/cc.core.$cc" >"$TMP/audit-core.json" 2>/dev/null
	has "$TMP/scan-core.json" '"inside":{'
	valid "scan --core of a gcore" scan.json "$TMP/scan-core.json"
	valid "audit --core of a gcore" audit.json "$TMP/audit-core.json"
fi

# --- audit ------------------------------------------------------------------------------------
"$RSEQDBG" audit --json "$BUILD"/tests/workloads/* >"$TMP/audit-wl.json" 2>/dev/null
"$RSEQDBG" audit --json --list-checks >"$TMP/audit-checks.json"
"$RSEQDBG" audit --json "$WL" /nonexistent/file >"$TMP/audit-err.json" 2>/dev/null
"$RSEQDBG" audit --json --pid "$sp" >"$TMP/audit-pid.json" 2>/dev/null
"$RSEQDBG" audit --json --pid 4194304 >"$TMP/audit-nopid.json" 2>/dev/null
has "$TMP/audit-wl.json" '"location":{'
has "$TMP/audit-pid.json" '"modules"'
valid "audit: workloads with findings, --list-checks, errors, --pid, -r" audit.json \
	"$TMP/audit-wl.json" "$TMP/audit-checks.json" "$TMP/audit-err.json" "$TMP/audit-tree.json" \
	"$TMP/audit-pid.json" "$TMP/audit-nopid.json" tests/golden/audit/*.json

# --- step -------------------------------------------------------------------------------------
if have_ptrace; then
	timeout 120 "$RSEQDBG" step --json --from wl_counter_add --finish --count 2000 -- \
		"$WL" --mode all --iters 20 >"$TMP/step-wl.json" 2>/dev/null
	timeout 120 "$RSEQDBG" step --json --quiet --from main -- "$FE" --exec /bin/true \
		>"$TMP/step-fe.json" 2>/dev/null
	timeout 60 "$RSEQDBG" step --json --count 50 --pid "$sp" >"$TMP/step-pid.json" 2>/dev/null
	"$RSEQDBG" step --json -- /nonexistent/cmd >"$TMP/step-err.json" 2>/dev/null
	has "$TMP/step-wl.json" '"kind":"passage"'
	has "$TMP/step-wl.json" '"kind":"step"'
	has "$TMP/step-fe.json" '"kind":"fork"'
	has "$TMP/step-pid.json" '"kind":"inside"'
	has "$TMP/step-err.json" '"error"'
	valid "step: steps, passages, inside, events, summaries, errors (JSON lines)" step.json \
		--lines "$TMP/step-wl.json" "$TMP/step-fe.json" "$TMP/step-pid.json" \
		"$TMP/step-err.json"
else
	skip "json schema: step" "ptrace not permitted"
fi
kill "$sp" 2>/dev/null
wait "$sp" 2>/dev/null

# --- trace and stat ---------------------------------------------------------------------------
if have_bpf; then
	"$RSEQDBG" trace --check --json >"$TMP/trace-check.json"
	# Few cpu_id updates: a short run of its own (a loaded machine makes thousands a second)
	timeout 60 "$RSEQDBG" trace --json --events abort,migrate,signal --stack \
		-o "$TMP/trace-wl.json" -- "$WL" --mode all --signal-us 1000 --seconds 1 >/dev/null 2>&1
	timeout 60 "$RSEQDBG" trace --json --events update -o "$TMP/trace-up.json" -- \
		"$WL" --mode counter --iters 1000 >/dev/null 2>&1
	timeout 60 "$RSEQDBG" trace --json --events user-abort -o "$TMP/trace-pl.json" -- \
		"$PL" --threads 1 --iters 20000 --stale-every 1000 --out /dev/null >/dev/null 2>&1
	timeout 60 "$RSEQDBG" trace --json --summary --interval 0.4 --duration 1 \
		-o "$TMP/trace-sum.json" >/dev/null 2>&1
	"$RSEQDBG" trace --json -- /nonexistent/cmd >"$TMP/trace-err.json" 2>/dev/null
	for k in abort signal summary; do has "$TMP/trace-wl.json" "\"kind\":\"$k\""; done
	has "$TMP/trace-up.json" '"kind":"cpu_id"'
	has "$TMP/trace-pl.json" '"kind":"user-abort"'
	valid "trace: events of every kind, --stack, summaries, --check, errors (JSON lines)" \
		trace.json --lines "$TMP/trace-wl.json" "$TMP/trace-up.json" "$TMP/trace-pl.json" \
		"$TMP/trace-sum.json" "$TMP/trace-check.json" "$TMP/trace-err.json"

	timeout 60 "$RSEQDBG" stat --json -o "$TMP/stat-wl.json" -- \
		"$WL" --mode all --signal-us 1000 --seconds 1 >/dev/null 2>&1
	timeout 60 "$RSEQDBG" stat --json --no-uprobes -o "$TMP/stat-pl.json" -- \
		"$PL" --threads 1 --iters 20000 --stale-every 1000 --out /dev/null >/dev/null 2>&1
	"$RSEQDBG" stat --json -o "$TMP/stat-err.json" -- /nonexistent/cmd >/dev/null 2>&1
	has "$TMP/stat-wl.json" '"start":{'
	valid "stat: with and without uprobes, errors" stat.json \
		"$TMP/stat-wl.json" "$TMP/stat-pl.json" "$TMP/stat-err.json"
else
	skip "json schema: trace and stat" "needs root and kernel BTF"
fi

finish
