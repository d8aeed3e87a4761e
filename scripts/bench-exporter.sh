#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exporter benchmark, beside node_exporter (the exporter every machine of a fleet already
# runs, scraped the same way):
#   - CPU and memory of the exporter process over BENCH_SECONDS (default 10) with a scrape
#     every second, on this machine as it is ("idle": nothing of ours runs), then while the
#     abort-heavy workload runs on every CPU; and the workload's own cost alone and under the
#     exporter, in turns (its BPF programs run in the workload's threads);
#   - the same CPU and memory with TLS and basic auth on (--web.config.file), and the cost of
#     one scrape over TLS;
#   - scrape latency (median and slowest of BENCH_SCRAPES) with no other client connected and
#     with 200 slow clients, each holding a connection open with a request header it sends a
#     line a second and never finishes;
#   - the cost of one scrape (wall time, the exporter's CPU time, bytes) with 1,000 and 10,000
#     series of rseq_aborts_total. The series are real: that many short processes, each run
#     for 3 ms under a name of its own (a symlink to the workload) with a signal every 100 us,
#     each leaving a series per cause it saw once it exited. A test-only switch that made up series would
#     measure the writer alone; this measures what a fleet machine with that much churn runs.
# Needs root (BPF).
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
RSEQDBG="$BUILD/rseqdbg"
WL="$BUILD/tests/workloads/rseq_workload"
[ -x "$RSEQDBG" ] || { echo "bench-exporter: $RSEQDBG not built" >&2; exit 2; }
[ -x "$WL" ] || { echo "bench-exporter: $WL not built" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench-exporter: needs root to load BPF programs" >&2; exit 2; }
NODE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
W=$(mktemp -d /tmp/bench-exporter.XXXXXX)
trap 'rm -rf "$W"' EXIT

python3 - "$RSEQDBG" "$WL" "$W" "$NODE" "$(nproc)" <<'PYEOF'
import base64, os, re, signal, socket, ssl, statistics, subprocess, sys, time, urllib.request

rseqdbg, wl, tmp, node, ncpu = sys.argv[1:6]
secs = float(os.environ.get("BENCH_SECONDS", "10"))
targets = [int(x) for x in os.environ.get("BENCH_SERIES", "1000 10000").split()]
scrapes = int(os.environ.get("BENCH_SCRAPES", "50"))
iters = os.environ.get("BENCH_ITERS", "300000000")
sigus = os.environ.get("BENCH_SIGNAL_US", "50")
procs = []

def cpu_s(pid):
    """CPU seconds of pid's threads, in nanoseconds from the scheduler (not clock ticks)."""
    t = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            t += int(open("/proc/%d/task/%s/schedstat" % (pid, tid)).read().split()[0])
        except OSError:
            pass
    return t / 1e9

def mem_kib(pid, key):
    for l in open("/proc/%d/status" % pid):
        if l.startswith(key + ":"):
            return int(l.split()[1])
    return 0

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p

# Ports served over TLS with basic auth: the client's TLS context and Authorization header.
tls_ports = {}

def scrape(port):
    h = {"Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"}
    ctx, scheme = None, "http"
    if port in tls_ports:
        ctx, auth = tls_ports[port]
        h["Authorization"] = auth
        scheme = "https"
    r = urllib.request.urlopen(urllib.request.Request(
        "%s://127.0.0.1:%d/metrics" % (scheme, port), headers=h), timeout=60, context=ctx)
    return r.read()

def web_config():
    """A CA, a certificate for 127.0.0.1 from it, a bcrypt password (cost 10, as htpasswd
    -B makes by default): the web configuration file, the client's TLS context and header."""
    def run(*a):
        subprocess.run(a, check=True, cwd=tmp, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
        "ca.crt", "-days", "2", "-subj", "/CN=bench CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
        "server.csr", "-subj", "/CN=localhost")
    open(os.path.join(tmp, "san.ext"), "w").write("subjectAltName=IP:127.0.0.1\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.ext")
    hash_ = subprocess.run(["htpasswd", "-nbB", "prom", "bench"], check=True,
                           capture_output=True, text=True).stdout.strip().split(":", 1)[1]
    path = os.path.join(tmp, "web.yml")
    open(path, "w").write("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                          "basic_auth_users:\n  prom: '%s'\n" % hash_)
    ctx = ssl.create_default_context(cafile=os.path.join(tmp, "ca.crt"))
    return path, ctx, "Basic " + base64.b64encode(b"prom:bench").decode()

def start_exporter(extra=()):
    err = open(os.path.join(tmp, "exporter.err"), "w+")
    p = subprocess.Popen([rseqdbg, "exporter", "--listen", "127.0.0.1:0", "--max-series",
                          "100000", "--interval", "3600", *extra], stderr=err)
    procs.append(p)
    for _ in range(600):
        err.seek(0)
        m = re.search(r"ready .*https?://127\.0\.0\.1:(\d+)/metrics", err.read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.1)
    sys.exit("bench-exporter: the exporter did not start")

def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait()
    procs.remove(p)

def start_node():
    port = free_port()
    p = subprocess.Popen([node, "--web.listen-address=127.0.0.1:%d" % port],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs.append(p)
    for _ in range(300):
        try:
            scrape(port)
            return p, port
        except OSError:
            time.sleep(0.1)
    sys.exit("bench-exporter: node_exporter did not start")

def watch(pid, port, seconds):
    """CPU % of pid and its RSS (MiB) over seconds, with a scrape every second."""
    c0, t0 = cpu_s(pid), time.monotonic()
    while time.monotonic() - t0 < seconds:
        scrape(port)
        time.sleep(1)
    return 100 * (cpu_s(pid) - c0) / (time.monotonic() - t0), mem_kib(pid, "VmRSS") / 1024

def scrape_cost(pid, port, n):
    """Median wall ms of a scrape, the server's CPU ms per scrape, bytes, series."""
    walls = []
    c0 = cpu_s(pid)
    for _ in range(n):
        t = time.perf_counter()
        body = scrape(port)
        walls.append((time.perf_counter() - t) * 1000)
    cpu = (cpu_s(pid) - c0) * 1000 / n
    lines = [l for l in body.split(b"\n") if l and not l.startswith(b"#")]
    return statistics.median(walls), cpu, len(body), len(lines)

def series(port):
    m = re.search(rb"^rseqdbg_abort_series (\d+)", scrape(port), re.M)
    return int(m.group(1))

def churn(port, want, state):
    """Short processes under names of their own until the exporter has want series."""
    running = []
    while True:
        have = series(port)
        if have >= want:
            break
        # Most processes leave one series (their signal aborts), some two: smaller batches
        # near the target, so that it ends close to it.
        for _ in range(max(4, min(200, (want - have) * 2 // 3))):
            state["n"] += 1
            link = os.path.join(tmp, "w%06d" % state["n"])
            os.symlink(wl, link)
            running.append(subprocess.Popen(
                [link, "--threads", "1", "--signal-us", "100", "--seconds", "0.003",
                 "--out", os.devnull], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            while len(running) >= 4:
                running.pop(0).wait()
        for r in running:
            r.wait()
        running = []

def slow_clients(port, n):
    """n connections that send a request line and then a header line now and then."""
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        socks.append(s)
    return socks

def trickle(socks):
    for i, s in enumerate(socks):
        try:
            s.sendall(b"X-Slow-%d: 1\r\n" % i)
        except OSError:
            pass

def latency(port, n, socks):
    """Median and slowest wall ms of n scrapes, the slow clients kept talking."""
    walls = []
    for _ in range(n):
        trickle(socks)
        t = time.perf_counter()
        scrape(port)
        walls.append((time.perf_counter() - t) * 1000)
    return statistics.median(walls), max(walls)

def report(path):
    return dict(l.strip().split("=", 1) for l in open(path) if "=" in l)

def work_run():
    """Wall and CPU seconds of a fixed amount of work, and the aborts and signals it saw."""
    out = os.path.join(tmp, "run.txt")
    t = time.perf_counter()
    ru0 = os.times()
    subprocess.run([wl, "--threads", ncpu, "--iters", iters, "--signal-us", sigus, "--out", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ru1 = os.times()
    rep = report(out)
    return (time.perf_counter() - t, (ru1.children_user + ru1.children_system) -
            (ru0.children_user + ru0.children_system), int(rep["aborts"]), int(rep["signals"]))

try:
    # The workload alone and under an exporter of its own, in turns, so that whatever else
    # the machine does weighs on both alike.
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    alone, under = [], []
    for _ in range(rounds):
        alone.append(work_run())
        exp, port = start_exporter()
        under.append(work_run())
        stop(exp)
    exp, port = start_exporter()
    nd = start_node() if node else None
    print("exporter and node_exporter, a scrape every second for %.0f s, this machine as it is:"
          % secs)
    print("  %-44s %8s %9s" % ("", "CPU %", "RSS MiB"))
    c, r = watch(exp.pid, port, secs)
    print("  %-44s %8.2f %9.1f" % ("rseqdbg exporter, idle", c, r))
    # The same over TLS with basic auth: a TLS handshake per scrape (a new connection each
    # time) and the password's bcrypt once, then its remembered digest.
    path, ctx, auth = web_config()
    texp, tport = start_exporter(["--web.config.file", path])
    tls_ports[tport] = (ctx, auth)
    c, r = watch(texp.pid, tport, secs)
    print("  %-44s %8.2f %9.1f" % ("rseqdbg exporter, idle, TLS and basic auth", c, r))
    w, c, b, n = scrape_cost(texp.pid, tport, scrapes)
    print("    (one scrape over TLS: %.2f ms wall, %.2f ms of the server's CPU)" % (w, c))
    stop(texp)
    if nd:
        c, r = watch(nd[0].pid, nd[1], secs)
        print("  %-44s %8.2f %9.1f" % ("node_exporter (default collectors)", c, r))
    # Under the workload: the exporter's own process while it runs, then its cost.
    load = subprocess.Popen([wl, "--threads", ncpu, "--seconds", str(secs), "--signal-us",
                             sigus, "--out", os.path.join(tmp, "load.txt")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c, r = watch(exp.pid, port, secs)
    load.wait()
    rep = report(os.path.join(tmp, "load.txt"))
    print("  %-44s %8.2f %9.1f" % ("rseqdbg exporter, abort-heavy workload", c, r))
    print("  (workload: %s threads, signal every %s us: %.0f aborts/s)"
          % (ncpu, sigus, int(rep["aborts"]) / secs))
    wa, ca, aa, sa = (statistics.median(x[i] for x in alone) for i in range(4))
    wu, cu, au, su = (statistics.median(x[i] for x in under) for i in range(4))
    print("workload (%s threads x %s iterations), median of %d, in turns: alone %.3f s wall"
          " %.3f s CPU;" % (ncpu, iters, rounds, wa, ca))
    print("  under the exporter %.3f s wall (x%.3f), %.3f s CPU (x%.3f)"
          % (wu, wu / wa, cu, cu / ca))
    print("  (aborts %d alone, %d under; signals %d alone, %d under)" % (aa, au, sa, su))
    print("scrape latency (%d scrapes):" % scrapes)
    print("  %-44s %9s %9s" % ("", "median ms", "max ms"))
    for n in (0, 200):
        socks = slow_clients(port, n)
        m, x = latency(port, scrapes, socks)
        print("  %-44s %9.2f %9.2f" % ("rseqdbg exporter, %d slow clients connected" % n, m, x))
        for s in socks:
            s.close()
    print("one scrape (median of %d; CPU: the server's user + system per scrape):" % scrapes)
    print("  %-44s %8s %9s %9s %9s" % ("", "series", "wall ms", "CPU ms", "bytes"))
    if nd:
        w, c, b, n = scrape_cost(nd[0].pid, nd[1], scrapes)
        print("  %-44s %8d %9.2f %9.2f %9d" % ("node_exporter (default collectors)", n, w, c, b))
    state = {"n": 0}
    for want in targets:
        t = time.monotonic()
        churn(port, want, state)
        made = time.monotonic() - t
        # A scrape reads the exited processes' entries from the maps, the next one removes
        # them: then the maps are empty and the series stay.
        scrape(port)
        scrape(port)
        w, c, b, n = scrape_cost(exp.pid, port, scrapes)
        print("  %-44s %8d %9.2f %9.2f %9d" % ("rseqdbg exporter, %d processes exited" % state["n"],
                                              series(port), w, c, b))
        print("    (%d processes run in %.0f s; exporter RSS then %.1f MiB)"
              % (state["n"], made, mem_kib(exp.pid, "VmRSS") / 1024))
finally:
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        p.wait()
PYEOF
