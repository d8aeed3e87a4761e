#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg exporter as a web service: scrapes are answered while 200 slow clients (each sending
# a request header a line at a time, never finishing it) stay connected; a textfile it cannot
# write is an error; content negotiation by quality, gzip, the landing page and process_*;
# --cgroup-label tells the processes of two cgroups apart; --web.config.file's TLS, basic auth
# and client certificates, with Debian's Prometheus scraping over https.
source "$(dirname "$0")/../lib.sh"

PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! have_bpf; then
	skip "exporter_web" "needs root and kernel BTF"
	finish
	exit
fi

# start_exporter NAME ARGS...: runs it, waits for its ready line; sets EPID, EPORT.
start_exporter() {
	local name=$1
	shift
	"$RSEQDBG" exporter "$@" 2>"$TMP/$name.err" &
	EPID=$!
	PIDS+=("$EPID")
	if ! wait_for -q -p "$EPID" 60 "the exporter's ready line" \
		file_has 'exporter: ready' "$TMP/$name.err"; then
		EPORT=
		return 1
	fi
	EPORT=$(sed -n 's|.*https\?://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$TMP/$name.err")
}

# slow.py PORT N STATE: N connections that each send a request line and then a header line
# every second, never the blank line that ends the header. STATE gets "connected N" once all
# are connected, then, on SIGUSR1, "open N": how many the server has not closed.
cat >"$TMP/slow.py" <<'PY'
import signal, socket, sys, time
port, n, state = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = []
for i in range(n):
    s = socket.create_connection(('127.0.0.1', port), timeout=30)
    s.settimeout(None)
    s.sendall(b'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    socks.append(s)
def still_open(s):
    try:
        return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b''
    except BlockingIOError:
        return True
    except OSError:
        return False
def report(*_):
    with open(state, 'a') as f:
        f.write('open %d\n' % sum(still_open(s) for s in socks))
signal.signal(signal.SIGUSR1, report)
with open(state, 'a') as f:
    f.write('connected %d\n' % n)
while True:
    time.sleep(1)
    for i, s in enumerate(socks):
        try:
            s.sendall(b'X-Slow-%d: 1\r\n' % i)
        except OSError:
            pass
PY

# scrapes.py PORT N BOUND: N scrapes one after another, each given BOUND seconds; prints how
# many succeeded and the slowest one's time.
cat >"$TMP/scrapes.py" <<'PY'
import sys, time, urllib.request
port, n, bound = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
ok, slowest, why = 0, 0.0, ''
for _ in range(n):
    t = time.monotonic()
    try:
        body = urllib.request.urlopen('http://127.0.0.1:%s/metrics' % port, timeout=bound).read()
        if b'rseqdbg_info' in body:
            ok += 1
        else:
            why = 'a reply without the metrics'
    except Exception as e:
        why = str(e)
    slowest = max(slowest, time.monotonic() - t)
print('%d %.3f %s' % (ok, slowest, why))
PY

# --- a textfile it cannot write: an error, before or after attaching ----------------------
# one_error NAME ARGS...: the exporter with ARGS exits 2 with one error line naming the file.
one_error() {
	local name=$1 err rc
	shift
	err=$("$RSEQDBG" exporter "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] &&
		grep -q '^rseqdbg: exporter: --textfile: cannot write ' <<<"$err"; then
		pass "$name"
	else
		fail "$name" "rc=$rc: $err"
	fi
}
one_error "exporter --textfile in a missing directory: one error line, exit 2" \
	--textfile "$TMP/none/m.prom"
# PATH.tmp can be written but not renamed over a directory: found after attaching.
mkdir "$TMP/dir.prom"
one_error "exporter --textfile over a directory: one error line, exit 2" \
	--textfile "$TMP/dir.prom" --comm rseqdbg_none

# --- what Prometheus users expect: negotiation, gzip, a landing page, process_* ------------
export TMP
start_exporter http --listen 127.0.0.1:0 --comm rseqdbg_none
if [ -z "$EPORT" ]; then
	fail "exporter: ready" "$(cat "$TMP/http.err")"
else
	# get.py PORT PATH [HEADER=VALUE...]: "status content-type content-encoding" and the body
	# (decompressed) in $TMP/body.
	cat >"$TMP/get.py" <<'PY'
import gzip, os, sys, urllib.error, urllib.request
port, path = sys.argv[1], sys.argv[2]
h = dict(a.split('=', 1) for a in sys.argv[3:])
try:
    r = urllib.request.urlopen(urllib.request.Request('http://127.0.0.1:%s%s' % (port, path), headers=h), timeout=30)
except urllib.error.HTTPError as e:
    r = e
body = r.read()
enc = r.headers.get('Content-Encoding') or '-'
if enc == 'gzip':
    body = gzip.decompress(body)
open(os.path.join(os.environ['TMP'], 'body'), 'wb').write(body)
print(r.status, (r.headers.get('Content-Type') or '-').split(';')[0], enc)
PY
	# got CASE WANT PATH HEADERS...: the status, type and encoding are WANT.
	got() {
		local name=$1 want=$2 res
		shift 2
		res=$(python3 "$TMP/get.py" "$EPORT" "$@" 2>&1)
		if [ "$res" = "$want" ]; then
			pass "$name"
		else
			fail "$name" "got '$res', expected '$want'"
		fi
	}
	got "exporter: Prometheus' Accept gets OpenMetrics" \
		"200 application/openmetrics-text -" /metrics \
		"Accept=application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
	got "exporter: OpenMetrics refused with q=0 gets the text format" "200 text/plain -" \
		/metrics "Accept=application/openmetrics-text;q=0,*/*"
	got "exporter: both formats refused with q=0 is 406" "406 text/plain -" /metrics \
		"Accept=application/openmetrics-text;q=0,text/plain;q=0"
	got "exporter: gzip when the client takes it" "200 text/plain gzip" /metrics \
		"Accept-Encoding=gzip, deflate"
	check "exporter: the gzip body is the exposition" grep -q '^rseqdbg_info{' "$TMP/body"
	got "exporter: no gzip when refused with q=0" "200 text/plain -" /metrics \
		"Accept-Encoding=gzip;q=0, *"
	got "exporter: a landing page at /" "200 text/html -" /
	check "exporter: the landing page links to /metrics" grep -q 'href="metrics"' "$TMP/body"
	python3 "$TMP/get.py" "$EPORT" /metrics >/dev/null
	check "exporter: process_* of the exporter itself" python3 - "$TMP/body" "$EPID" <<'PY'
import os, re, sys, time
text = open(sys.argv[1]).read()
v = {m.group(1): float(m.group(2)) for m in re.finditer(r'^(process_\w+) (\S+)$', text, re.M)}
pid = int(sys.argv[2])
rss = int(open('/proc/%d/statm' % pid).read().split()[1]) * os.sysconf('SC_PAGE_SIZE')
fds = len(os.listdir('/proc/%d/fd' % pid))
start = os.stat('/proc/%d' % pid).st_mtime
assert v['process_cpu_seconds_total'] >= 0, v
assert 0.5 * rss < v['process_resident_memory_bytes'] < 2 * rss, (v, rss)
assert v['process_virtual_memory_bytes'] >= v['process_resident_memory_bytes'], v
assert 0 < v['process_open_fds'] <= v['process_max_fds'] and abs(v['process_open_fds'] - fds) < 16, (v, fds)
assert abs(v['process_start_time_seconds'] - time.time()) < 600, v
PY
	kill -TERM "$EPID"
	wait "$EPID"
fi

# --- --cgroup-label: two copies of the workload in two cgroups count in two series ---------
W="$BUILD/tests/workloads/rseq_workload"
COMM=rwl_web_$$
COMM=${COMM:0:15}
cp "$W" "$TMP/$COMM"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
OWNCG=$(sed -n 's/^0:://p' /proc/self/cgroup)
OWNCG=${OWNCG%/}
if [ -z "$CG2" ] || ! mkdir -p "$CG2$OWNCG/rseqdbg-web.$$/a" "$CG2$OWNCG/rseqdbg-web.$$/b" 2>/dev/null; then
	skip "exporter --cgroup-label" "no cgroup v2 hierarchy to make cgroups in"
else
	CG="$OWNCG/rseqdbg-web.$$"
	start_exporter cg --listen 127.0.0.1:0 --comm "$COMM" --cgroup-label --interval 0.2
	for c in a b; do
		mkfifo "$TMP/go.$c"
		(echo $BASHPID >"$CG2$CG/$c/cgroup.procs" && exec "$TMP/$COMM" --wait --signal-us 200 \
			--seconds 1 --out "$TMP/cg.$c.txt" <"$TMP/go.$c" 2>/dev/null) &
		PIDS+=("$!")
		exec 3>"$TMP/go.$c"
		exec 3>&-
	done
	wait_for -q 30 "both workloads to end" test -s "$TMP/cg.b.txt" -a -s "$TMP/cg.a.txt"
	python3 "$TMP/get.py" "$EPORT" /metrics >/dev/null
	check "exporter --cgroup-label: each cgroup's aborts in series of its own" python3 - \
		"$TMP/body" "$COMM" "$CG" <<'PY'
import re, sys
text, comm, cg = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
got = {}
for m in re.finditer(r'^rseq_aborts_total\{(.*)\} (\S+)$', text, re.M):
    l = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
    if l['comm'] == comm:
        got[l['cgroup']] = got.get(l['cgroup'], 0) + float(m.group(2))
assert set(got) == {cg + '/a', cg + '/b'} and all(got.values()), got
PY
	kill -TERM "$EPID"
	wait "$EPID"
	rmdir "$CG2$CG/a" "$CG2$CG/b" "$CG2$CG"
fi

# --- --web.config.file: TLS, basic auth, client certificates -----------------------------
# A CA, the server's certificate from it (for 127.0.0.1), a client's from it and one from
# nobody the server knows; prom's password as htpasswd -B writes it.
mkcert() { # NAME CN [CA]: NAME.key, NAME.crt, signed by CA (self-signed without one)
	local name=$1 cn=$2 ca=${3:-}
	if [ -z "$ca" ]; then
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/$name.key" -out "$TMP/$name.crt" \
			-days 2 -subj "/CN=$cn" 2>/dev/null
	else
		openssl req -newkey rsa:2048 -nodes -keyout "$TMP/$name.key" -out "$TMP/$name.csr" \
			-subj "/CN=$cn" 2>/dev/null &&
			printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$TMP/$name.ext" &&
			openssl x509 -req -in "$TMP/$name.csr" -CA "$TMP/$ca.crt" -CAkey "$TMP/$ca.key" \
				-CAcreateserial -out "$TMP/$name.crt" -days 2 -extfile "$TMP/$name.ext" 2>/dev/null
	fi
}
# status ARGS...: the HTTP status curl gets (000: no HTTP answer), the body in curl.out
status() {
	curl -s -o "$TMP/curl.out" -w '%{http_code}' --max-time 30 "$@" 2>/dev/null
}
if ! command -v openssl >/dev/null || ! command -v htpasswd >/dev/null || ! command -v curl >/dev/null; then
	fail "exporter --web.config.file" "openssl, htpasswd or curl missing (scripts/deps.sh installs them)"
elif ! { mkcert ca "rseqdbg test CA" && mkcert server localhost ca && mkcert client prom ca &&
	mkcert rogue prom; }; then
	fail "exporter --web.config.file: certificates made" "openssl failed"
else
	HASH=$(htpasswd -nbB -C 4 prom "s3cret pass" | cut -d: -f2)
	# Paths relative to the file, as the toolkit reads them.
	cat >"$TMP/web.yml" <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  prom: $HASH
EOF
	start_exporter tls --listen 127.0.0.1:0 --comm rseqdbg_none --web.config.file "$TMP/web.yml"
	check "exporter --web.config.file: the ready line names https" \
		grep -q 'ready .*https://127.0.0.1:[0-9]*/metrics' "$TMP/tls.err"
	U="https://127.0.0.1:$EPORT/metrics"
	got=$(status --cacert "$TMP/ca.crt" -u "prom:s3cret pass" "$U")
	check "exporter over TLS with the right password: 200 and the metrics (got $got)" \
		test "$got" = 200 -a -n "$(grep '^rseqdbg_info' "$TMP/curl.out")"
	got=$(status --cacert "$TMP/ca.crt" -u "prom:wrong" "$U")
	check "exporter over TLS, a wrong password: 401 (got $got)" test "$got" = 401
	got=$(status --cacert "$TMP/ca.crt" -u "nobody:s3cret pass" "$U")
	check "exporter over TLS, an unknown user: 401 (got $got)" test "$got" = 401
	got=$(status --cacert "$TMP/ca.crt" "$U")
	check "exporter over TLS, no credentials: 401 (got $got)" test "$got" = 401
	got=$(status --cacert "$TMP/ca.crt" "https://127.0.0.1:$EPORT/")
	check "exporter over TLS: the landing page asks for credentials too (got $got)" test "$got" = 401
	got=$(status -u "prom:s3cret pass" "http://127.0.0.1:$EPORT/metrics")
	check "exporter over TLS: plain http gets no answer (got $got)" test "$got" = 000
	got=$(status --tls-max 1.1 --cacert "$TMP/ca.crt" -u "prom:s3cret pass" "$U")
	check "exporter over TLS: TLS 1.1 refused, 1.2 the least by default (got $got)" test "$got" = 000

	# Debian's Prometheus scraping it over https with basic_auth; a second job with a wrong
	# password is down.
	if ! command -v prometheus >/dev/null; then
		fail "Prometheus over https" "prometheus missing (scripts/deps.sh installs it)"
	else
		cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rseqdbg
    scheme: https
    tls_config:
      ca_file: $TMP/ca.crt
    basic_auth:
      username: prom
      password: 's3cret pass'
    static_configs:
      - targets: ['127.0.0.1:$EPORT']
  - job_name: wrong
    scheme: https
    tls_config:
      ca_file: $TMP/ca.crt
    basic_auth:
      username: prom
      password: wrong
    static_configs:
      - targets: ['127.0.0.1:$EPORT']
EOF
		PPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
			--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom.log" 2>&1 &
		PROM=$!
		PIDS+=("$PROM")
		# up JOB: the job's last up sample, empty before its first scrape
		up() {
			python3 -c 'import json, sys, urllib.parse, urllib.request
u = "http://127.0.0.1:%s/api/v1/query?%s" % (sys.argv[1], urllib.parse.urlencode({"query": "up{job=\"%s\"}" % sys.argv[2]}))
r = json.load(urllib.request.urlopen(u, timeout=10))["data"]["result"]
print(r[0]["value"][1] if r else "")' "$PPORT" "$1" 2>/dev/null
		}
		both_scraped() { [ -n "$(up rseqdbg)" ] && [ -n "$(up wrong)" ]; }
		wait_for -q -p "$PROM" 60 "Prometheus' first scrapes" both_scraped
		got=$(up rseqdbg)
		check "Prometheus scrapes the exporter over https with basic_auth: up == 1 (got $got)" \
			test "$got" = 1
		got=$(up wrong)
		check "Prometheus with a wrong password: up == 0 (got $got)" test "$got" = 0
		kill "$PROM"
		wait "$PROM" 2>/dev/null
	fi
	kill -TERM "$EPID"
	wait "$EPID"

	# Client certificates: RequireAndVerifyClientCert takes the CA's, refuses others and none.
	cat >"$TMP/web-mtls.yml" <<EOF
tls_server_config:
  cert_file: $TMP/server.crt
  key_file: $TMP/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $TMP/ca.crt
  min_version: TLS13
EOF
	start_exporter mtls --listen 127.0.0.1:0 --comm rseqdbg_none --web.config.file "$TMP/web-mtls.yml"
	U="https://127.0.0.1:$EPORT/metrics"
	got=$(status --cacert "$TMP/ca.crt" --cert "$TMP/client.crt" --key "$TMP/client.key" "$U")
	check "exporter, RequireAndVerifyClientCert: the CA's client certificate gets 200 (got $got)" \
		test "$got" = 200
	got=$(status --cacert "$TMP/ca.crt" "$U")
	check "exporter, RequireAndVerifyClientCert: no client certificate is refused (got $got)" \
		test "$got" = 403
	got=$(status --cacert "$TMP/ca.crt" --cert "$TMP/rogue.crt" --key "$TMP/rogue.key" "$U")
	check "exporter, RequireAndVerifyClientCert: another CA's certificate is refused (got $got)" \
		test "$got" = 403
	got=$(status --tls-max 1.2 --cacert "$TMP/ca.crt" --cert "$TMP/client.crt" --key "$TMP/client.key" "$U")
	check "exporter, min_version TLS13: TLS 1.2 refused (got $got)" test "$got" = 000
	kill -TERM "$EPID"
	wait "$EPID"

	# A configuration it cannot use: one error line naming the line, exit 2, before attaching.
	printf 'tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth: x\n' >"$TMP/bad.yml"
	err=$("$RSEQDBG" exporter --listen 127.0.0.1:0 --web.config.file "$TMP/bad.yml" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -q 'line 4: .*client_auth is not supported' <<<"$err"; then
		pass "exporter --web.config.file with an unknown key: one error line naming it, exit 2"
	else
		fail "exporter --web.config.file with an unknown key: one error line naming it, exit 2" "rc=$rc: $err"
	fi
	err=$("$RSEQDBG" exporter --listen 127.0.0.1:0 --web.config.file "$TMP/web-missing.yml" 2>&1 >/dev/null)
	rc=$?
	check "exporter --web.config.file missing: one error line, exit 2" \
		test $rc -eq 2 -a "$(wc -l <<<"$err")" -eq 1
fi

# --- slow clients do not stop the scrapes ------------------------------------------------
start_exporter slow --listen 127.0.0.1:0 --comm rseqdbg_none
if [ -z "$EPORT" ]; then
	fail "exporter: ready" "$(cat "$TMP/slow.err")"
	finish
	exit
fi
python3 "$TMP/slow.py" "$EPORT" 200 "$TMP/slow.state" 2>"$TMP/slow.py.err" &
SLOW=$!
PIDS+=("$SLOW")
if ! wait_for -q -p "$SLOW" 60 "200 slow clients" file_has '^connected 200' "$TMP/slow.state"; then
	fail "exporter: 200 slow clients connect" "$(cat "$TMP/slow.py.err")"
else
	# Each scrape is given 10 s, ten times what it takes on an idle machine: this asserts that
	# the slow clients do not block scrapes, not how fast a loaded machine answers.
	read -r ok slowest why < <(python3 "$TMP/scrapes.py" "$EPORT" 10 10)
	kill -USR1 "$SLOW"
	wait_for -q 10 "the slow clients' count" file_has '^open' "$TMP/slow.state"
	open=$(sed -n 's/^open //p' "$TMP/slow.state")
	if [ "$ok" = 10 ] && [ "$open" = 200 ]; then
		pass "exporter: 10 of 10 scrapes answered while 200 slow clients stay connected (slowest ${slowest} s)"
	else
		fail "exporter: 10 of 10 scrapes answered while 200 slow clients stay connected" \
			"$ok answered (slowest $slowest s${why:+, $why}), $open slow clients still connected"
	fi
fi
kill "$SLOW"
wait "$SLOW" 2>/dev/null
kill -TERM "$EPID"
wait "$EPID"
check "exporter: SIGTERM ends it with status 0 after the slow clients" test $? -eq 0

finish
