#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Symbols wherever the binary lives: a fully stripped program (build-id note kept) runs from a
# tmpfs root that only its own mount namespace sees, as in a container. trace, stat and the
# exporter name every section by function and file:line (the unstripped binary's scan says
# which) with its debug file served by a local debuginfod (DEBUGINFOD_URLS), or placed in the
# container's /usr/lib/debug by build-id or by debuglink; without DEBUGINFOD_URLS no socket is
# opened and nothing local names them; a server that does not answer is said once.
source "$(dirname "$0")/../lib.sh"

W="$BUILD/tests/workloads/percpu_lib"
if ! have_bpf; then
	skip "symbols from debuginfod and the container's root" "needs root and kernel BTF"
	finish
	exit
fi
if [ ! -x "$W" ]; then
	fail "workload built" "$W missing"
	finish
	exit
fi
for c in debuginfod curl objcopy strip unshare pivot_root strace; do
	if ! command -v "$c" >/dev/null; then
		skip "symbols from debuginfod and the container's root" "$c missing (scripts/deps.sh)"
		finish
		exit
	fi
done

first_id=$(max_prog_id)
SRV=""
cleanup() {
	[ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# --- the stripped program, its debug file, and what the unstripped one says ---------------------
mkdir -p "$TMP/srv" "$TMP/root"
objcopy --only-keep-debug "$W" "$TMP/srv/percpu_lib.debug"
strip --strip-all -o "$TMP/percpu_lib" "$W"
# the same, with a .gnu_debuglink to the debug file (its CRC computed from it)
objcopy --add-gnu-debuglink="$TMP/srv/percpu_lib.debug" "$TMP/percpu_lib" "$TMP/percpu_lib-link"
ID=$("$RSEQDBG" scan --json "$W" | python3 -c 'import json, sys; print(json.load(sys.stdin)["files"][0]["build_id"])')
"$RSEQDBG" scan --json "$W" >"$TMP/scan.json"
if [ "$("$RSEQDBG" scan --json "$TMP/percpu_lib" | python3 -c 'import json, sys; print(json.load(sys.stdin)["files"][0]["build_id"])')" = "$ID" ] &&
	! readelf -S "$TMP/percpu_lib" | grep -qE '\.symtab|\.debug_'; then
	pass "the copy is fully stripped (no .symtab, no .debug_*) and keeps the build-id $ID"
else
	fail "the copy is fully stripped and keeps the build-id" "$(readelf -S "$TMP/percpu_lib" | grep -E 'symtab|debug_')"
fi

# The program and its shared libraries on a tmpfs that becomes its root (pivot_root), in a mount
# namespace of its own: the host sees neither the files nor the mount, only the process.
# Arguments: the program's copy, where the debug file goes in the new root ("" for nowhere).
cat >"$TMP/container.sh" <<'EOF'
set -e
r=$1 prog=$2 dbg=$3 libs=$4
shift 4
mount -t tmpfs none "$r"
mkdir -p "$r/bin" "$r/old"
for l in $libs; do cp --parents -L "$l" "$r"; done
cp "$prog" "$r/bin/percpu_dbgd"
if [ -n "$dbg" ]; then
	mkdir -p "$r${dbg%/*}"
	cp "$DEBUG_FILE" "$r$dbg"
fi
cd "$r"
pivot_root . old
exec /bin/percpu_dbgd "$@"
EOF
LIBS=$(ldd "$W" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | tr '\n' ' ')
export DEBUG_FILE="$TMP/srv/percpu_lib.debug"
WARGS=(--threads 2 --seconds 1 --stale-every 700 --signal-us 150)
container() { # program-copy debug-path-in-root: sets CMD
	CMD=(unshare -m --propagation private sh "$TMP/container.sh" "$TMP/root" "$1" "$2" "$LIBS"
		"${WARGS[@]}")
}

# The names every abort must carry: the section's function, file:line and inline chain as the
# unstripped binary's scan gives them, found by the section's shape (length, abort offset).
cat >"$TMP/check.py" <<'EOF'
import json, sys
mode, out, scan = sys.argv[1], sys.argv[2], sys.argv[3]
want = {}
for s in json.load(open(scan))["files"][0]["sections"]:
    st = s["start"]
    key = (s["post_commit_offset"], s["abort_ip"] - s["start_ip"])
    assert key not in want, key
    want[key] = (st["function"], st["file"], st["line"], [x["function"] for x in st["inlined"]])
assert all(w[0] and w[1] and w[2] for w in want.values()), want
def name(sec):
    st = sec["start"]
    return (st["function"], st["file"], st["line"], [x["function"] for x in st["inlined"]])
errs, n = [], 0
docs = [json.loads(l) for l in open(out) if l.startswith("{")]
for d in docs:
    if d.get("kind") != "abort":
        continue
    n += 1
    sec = d["section"]
    key = (sec["post_commit_offset"], sec["abort_ip"] - sec["start_ip"])
    if key not in want:
        errs.append("abort in a section the scan does not have: %s" % sec)
    elif mode == "named" and name(sec) != want[key]:
        errs.append("abort named %s, the unstripped binary's scan says %s" % (name(sec), want[key]))
    elif mode == "unnamed" and any(name(sec)[:3]):
        errs.append("abort named %s with no debug information to be had" % (name(sec),))
sums = [d.get("summary", d) for d in docs if "summary" in d or "sections" in d]
if not sums:
    errs.append("no summary")
else:
    secs = sums[-1]["sections"]
    if not secs:
        errs.append("no section in the summary")
    for s in secs:
        if mode == "named" and name(s) not in want.values():
            errs.append("summary section named %s, not one of %s" % (name(s), list(want.values())))
        elif mode == "unnamed" and s["start"]["function"]:
            errs.append("summary section named %s" % (name(s),))
if len(sys.argv) > 4 and n == 0:
    errs.append("no abort event")
print("%d aborts, %d sections in the summary; %s" % (n, len(sums[-1]["sections"]) if sums else 0, "; ".join(errs[:3]) or "ok"))
sys.exit(1 if errs else 0)
EOF

# trace_case FILE-NAME CASE MODE(named|unnamed) PROGRAM-COPY DEBUG-PATH-IN-ROOT [ENV...]
trace_case() {
	local f=$TMP/$1 name=$2 mode=$3 prog=$4 dbg=$5 why rc
	shift 5
	container "$prog" "$dbg"
	env "$@" "$RSEQDBG" trace --json --events abort -- "${CMD[@]}" >"$f.json" 2>"$f.err"
	rc=$?
	if why=$(python3 "$TMP/check.py" "$mode" "$f.json" "$TMP/scan.json" events) &&
		why="$why, exit $rc" && [ $rc -eq 0 ]; then
		pass "trace, $name: every abort $mode ($why)"
	else
		fail "trace, $name: every abort $mode" "$why; $(tail -3 "$f.err")"
	fi
}

# --- DEBUGINFOD_URLS unset: nothing leaves the machine, and nothing names the sections ----------
container "$TMP/percpu_lib" ""
# (LeakSanitizer, in a SANITIZE build, cannot run under strace's ptrace)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -q -o "$TMP/strace.txt" \
	-e trace=socket,connect "$RSEQDBG" trace --json --events abort -- "${CMD[@]}" >"$TMP/unset.json" 2>"$TMP/unset.err"
rc=$?
if why=$(python3 "$TMP/check.py" unnamed "$TMP/unset.json" "$TMP/scan.json" events) &&
	why="$why, exit $rc" && [ $rc -eq 0 ]; then
	pass "trace, no DEBUGINFOD_URLS, no debug file: aborts traced, unnamed as the file is ($why)"
else
	fail "trace, no DEBUGINFOD_URLS, no debug file: aborts traced, unnamed" "$why; $(tail -3 "$TMP/unset.err")"
fi
if ! grep -qE 'AF_INET6?\b' "$TMP/strace.txt" && grep -q '^+++ exited' "$TMP/strace.txt"; then
	pass "trace, no DEBUGINFOD_URLS: no network socket opened"
else
	fail "trace, no DEBUGINFOD_URLS: no network socket opened" "$(grep -E 'AF_INET|exited' "$TMP/strace.txt" | head -3)"
fi

# --- the debug file in the container's own root ----------------------------------------------
trace_case root-id "build-id in the container's /usr/lib/debug" named "$TMP/percpu_lib" \
	"/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug"
trace_case root-link "debuglink in the container's /usr/lib/debug/bin" named "$TMP/percpu_lib-link" \
	"/usr/lib/debug/bin/percpu_lib.debug"

# --- served by debuginfod ---------------------------------------------------------------------
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env -u DEBUGINFOD_URLS debuginfod -p "$PORT" -F "$TMP/srv" -d "$TMP/srv.sqlite" >"$TMP/srv.log" 2>&1 &
SRV=$!
URL="http://127.0.0.1:$PORT"
if ! wait_for -p "$SRV" 30 "debuginfod on port $PORT to serve build-id $ID" \
	curl -sf -o /dev/null "$URL/buildid/$ID/debuginfo"; then
	tail -5 "$TMP/srv.log"
	finish
	exit
fi
served() { grep -c "GET /buildid/$ID/debuginfo 200" "$TMP/srv.log"; }
before=$(served)
trace_case served debuginfod named "$TMP/percpu_lib" "" DEBUGINFOD_URLS="$URL" \
	DEBUGINFOD_CACHE_PATH="$TMP/cache"
check "trace, debuginfod: fetched once, into DEBUGINFOD_CACHE_PATH" \
	test "$(($(served) - before))" -eq 1 -a -s "$TMP/cache/$ID/debuginfo"

# a server that does not answer: said once, and the trace goes on unnamed
DEAD=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
trace_case dead "no server on port $DEAD" unnamed "$TMP/percpu_lib" "" \
	DEBUGINFOD_URLS="http://127.0.0.1:$DEAD" DEBUGINFOD_CACHE_PATH="$TMP/cache-dead"
check "trace, no server on port $DEAD: one warning naming the build-id" \
	test "$(grep -c "warning: debuginfod: no debug file for build-id $ID: " "$TMP/dead.err")" -eq 1

# stat's summary, from a cache of its own
container "$TMP/percpu_lib" ""
if env DEBUGINFOD_URLS="$URL" DEBUGINFOD_CACHE_PATH="$TMP/cache-stat" "$RSEQDBG" stat --json \
	-o "$TMP/stat.json" -- "${CMD[@]}" >/dev/null 2>"$TMP/stat.err" &&
	why=$(python3 "$TMP/check.py" named "$TMP/stat.json" "$TMP/scan.json"); then
	pass "stat, debuginfod: every section of the summary named ($why)"
else
	fail "stat, debuginfod: every section of the summary named" "${why:-}; $(tail -3 "$TMP/stat.err")"
fi

# the exporter's labels: the program runs untraced, the exporter follows it by command name
env DEBUGINFOD_URLS="$URL" DEBUGINFOD_CACHE_PATH="$TMP/cache-exp" "$RSEQDBG" exporter \
	--comm percpu_dbgd --textfile "$TMP/m.prom" --interval 0.2 2>"$TMP/exp.err" &
EXP=$!
if wait_for -p "$EXP" 60 "the exporter's ready line" file_has 'exporter: ready' "$TMP/exp.err"; then
	container "$TMP/percpu_lib" ""
	"${CMD[@]}" >/dev/null 2>&1
	labels() {
		python3 - "$TMP/m.prom" "$TMP/scan.json" <<'EOF'
import json, re, sys
want = {"%s inlined in %s" % (s["start"]["inlined"][0]["function"], s["start"]["function"])
        for s in json.load(open(sys.argv[2]))["files"][0]["sections"]}
got = set(re.findall(r'^rseq_aborts_total\{comm="percpu_dbgd",function="([^"]*)"', open(sys.argv[1]).read(), re.M))
print(sorted(got), "expected among", sorted(want))
sys.exit(0 if got and got <= want else 1)
EOF
	}
	wait_for -q -p "$EXP" 10 "named series in the textfile" labels >/dev/null
	if why=$(labels); then
		pass "exporter, debuginfod: rseq_aborts_total labelled with the sections' names ($why)"
	else
		fail "exporter, debuginfod: rseq_aborts_total labelled with the sections' names" "$why"
	fi
else
	tail -3 "$TMP/exp.err"
fi
kill -TERM "$EXP" 2>/dev/null
wait "$EXP"

none_left() { left=$(left_behind "$first_id"); [ -z "$left" ]; }
wait_for -q -i 0.5 20 "our BPF programs to be unloaded" none_left
check "no BPF program left loaded${left:+: $left}" test -z "$left"
finish
