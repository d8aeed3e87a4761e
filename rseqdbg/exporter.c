// SPDX-License-Identifier: GPL-2.0-only
/* rseqdbg exporter: the tracer kept attached, its counters served to Prometheus (or any
 * OpenMetrics reader) over HTTP, or written for node_exporter's textfile collector. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <zlib.h>

#include "common.h"
#include "exporter/metrics.h"
#include "exporter/negotiate.h"
#include "exporter/process.h"
#include "exporter/webconfig.h"
#include "trace/tracer.h"

#define DEFAULT_MAX_SERIES 5000

/* HTTP clients served at once, each with a bounded pool for its request, and the seconds a
 * client may stay silent. Slow or idle clients take a connection each but no thread: the
 * server's threads wait on all of them at once (epoll), so a scrape is answered whatever
 * the others do, until the limit, which is far above what a fleet's scrapers open. */
#define HTTP_CONNECTIONS 1024
#define HTTP_THREADS 2
#define HTTP_CONN_MEMORY (16 * 1024)
#define HTTP_IDLE_SECONDS 10

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: rseqdbg exporter [--listen ADDR:PORT] [--textfile PATH]\n"
	    "                        [--web.config.file PATH] [OPTIONS]\n\n"
	    "Keep the rseq tracer attached and export its counters (aborts by command name,\n"
	    "function, module and cause; migrations; cpu_id updates; signals) in the\n"
	    "OpenMetrics or Prometheus text format. Runs until SIGTERM or SIGINT. Needs root,\n"
	    "or CAP_BPF and CAP_PERFMON, with CAP_SYS_ADMIN for the uprobes and CAP_SYS_PTRACE\n"
	    "and CAP_DAC_READ_SEARCH for other users' processes.\n\n"
	    "Output (at least one):\n"
	    "      --listen ADDR:PORT  serve /metrics over HTTP on ADDR:PORT (127.0.0.1:9810,\n"
	    "                          [::1]:9810, :9810 for every address; port 0: any)\n"
	    "      --textfile PATH     write the metrics to PATH every --interval, atomically,\n"
	    "                          for node_exporter's textfile collector\n"
	    "      --web.config.file PATH  TLS and basic authentication for --listen, in the\n"
	    "                          Prometheus exporter toolkit's format\n\n"
	    "Filters (applied in the kernel, as in trace):\n"
	    "  -p, --pid PID           trace process PID (repeatable)\n"
	    "      --comm NAME         trace threads whose command name is NAME\n"
	    "      --cgroup PATH       trace tasks in the cgroup v2 directory PATH or below it\n\n"
	    "Options:\n"
	    "      --interval S        read the maps, forget exited processes and write\n"
	    "                          --textfile every S seconds (default 15); a scrape\n"
	    "                          reads them too\n"
	    "      --max-series N      rseq_aborts_total series at most (default %d); the\n"
	    "                          aborts of further ones count in comm=\"(other)\". The\n"
	    "                          handler entries' series are bounded alike, apart\n"
	    "      --per-cpu           add the rseq_percpu_* counters, one series per CPU\n"
	    "      --cgroup-label      label the aborts and handler entries with the cgroup v2\n"
	    "                          path of their process, to tell containers apart\n"
	    "      --no-uprobes        no uprobes on the abort handlers: no\n"
	    "                          rseq_abort_handler_entries_total\n"
	    "  -h, --help              print this help\n\n"
	    "Once attached it prints one line on standard error saying where it serves.\n"
	    "Exit status: 0 after SIGTERM or SIGINT, 2 on error.\n",
	    DEFAULT_MAX_SERIES);
}

struct exporter_args {
	struct rd_tracer_opts o;
	pid_t pids[RD_MAX_FILTER];
	const char *listen;
	const char *textfile;
	const char *web_config;
	double interval;
	unsigned long long max_series;
	bool per_cpu;
	bool cgroup_label;
};

/* A user's last password that bcrypt accepted, as its SHA-256: bcrypt costs tens of
 * milliseconds by design, and a server scraping every few seconds sends the same one. */
struct auth_cache {
	unsigned char digest[32];
	bool valid;
};

/* --web.config.file: TLS's files read into memory, the users and their cache. */
struct web {
	struct rd_webconfig c;
	char *cert, *key, *ca; /* PEM */
	char priorities[128];
	struct auth_cache *cache; /* one per user */
	pthread_mutex_t cache_lock;
};

/* The running exporter. lock serializes the tracer and the metrics between the main loop
 * and the HTTP server's threads. */
struct exporter {
	struct web *web;
	struct rd_tracer *t;
	struct rd_metrics *m;
	pthread_mutex_t lock;
	pid_t *live; /* processes in the maps at the last refresh, sorted */
	size_t nlive;
	const char *textfile;
	char *tmpfile;
	bool wrote; /* textfile is ours to remove */
};

enum {
	O_LISTEN = 256,
	O_TEXTFILE,
	O_INTERVAL,
	O_MAX_SERIES,
	O_PER_CPU,
	O_NO_UPROBES,
	O_CGROUP_LABEL,
	O_WEB_CONFIG,
};

static int exporter_opt(struct exporter_args *a, int opt, const char *arg)
{
	char *end;

	switch (opt) {
	case 'p':
	case RD_FOPT_COMM:
	case RD_FOPT_CGROUP:
		return rd_filter_opt(&a->o, opt, arg) ? rd_error("%s", rd_errmsg()) : 0;
	case O_LISTEN:
		a->listen = arg;
		return 0;
	case O_TEXTFILE:
		if (!*arg)
			return rd_error("--textfile: empty path");
		a->textfile = arg;
		return 0;
	case O_INTERVAL:
		errno = 0;
		a->interval = strtod(arg, &end);
		if (errno || end == arg || *end || !(a->interval >= 0.01 && a->interval < 1e7))
			return rd_error("--interval: '%s' is not a number of seconds", arg);
		return 0;
	case O_MAX_SERIES:
		if (!rd_parse_u64(arg, &a->max_series) || !a->max_series ||
		    a->max_series > 10000000)
			return rd_error("--max-series: '%s' is not a count from 1 to 10000000",
					arg);
		return 0;
	case O_PER_CPU:
		a->per_cpu = true;
		return 0;
	case O_CGROUP_LABEL:
		a->cgroup_label = true;
		return 0;
	case O_WEB_CONFIG:
		a->web_config = arg;
		return 0;
	case O_NO_UPROBES:
		a->o.no_uprobes = true;
		return 0;
	}
	return EXIT_ERROR;
}

static int parse_opts(struct exporter_args *a, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"comm", required_argument, NULL, RD_FOPT_COMM},
	    {"cgroup", required_argument, NULL, RD_FOPT_CGROUP},
	    {"listen", required_argument, NULL, O_LISTEN},
	    {"textfile", required_argument, NULL, O_TEXTFILE},
	    {"interval", required_argument, NULL, O_INTERVAL},
	    {"max-series", required_argument, NULL, O_MAX_SERIES},
	    {"per-cpu", no_argument, NULL, O_PER_CPU},
	    {"cgroup-label", no_argument, NULL, O_CGROUP_LABEL},
	    {"web.config.file", required_argument, NULL, O_WEB_CONFIG},
	    {"no-uprobes", no_argument, NULL, O_NO_UPROBES},
	    {0},
	};
	static const struct rd_cmdline cl = {"p:", longopts, usage};
	int opt, ret;

	a->o.pids = a->pids;
	a->interval = 15;
	a->max_series = DEFAULT_MAX_SERIES;
	while ((opt = rd_getopt(argc, argv, &cl)) != RD_OPT_END) {
		if (opt < 0)
			return rd_opt_exit(opt) == EXIT_OK ? -1 : EXIT_ERROR;
		ret = exporter_opt(a, opt, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return rd_error("unexpected argument '%s'", argv[optind]);
	if (!a->listen && !a->textfile)
		return rd_error("say where the metrics go: --listen ADDR:PORT or --textfile PATH");
	if (a->web_config && !a->listen)
		return rd_error("--web.config.file configures --listen's server: give --listen");
	return 0;
}

/* ADDR:PORT into host and port ("[v6]:port"; an empty host is every address). */
static int split_listen(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(s, ':'), *h = s;
	size_t n;

	if (!colon || !colon[1] || strlen(colon + 1) >= plen)
		return -1;
	n = (size_t)(colon - s);
	if (n && s[0] == '[') {
		if (n < 2 || s[n - 1] != ']')
			return -1;
		h = s + 1;
		n -= 2;
	} else if (memchr(s, ':', n)) {
		return -1; /* an IPv6 address needs its brackets */
	}
	if (n >= hlen)
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	strcpy(port, colon + 1);
	return strspn(port, "0123456789") == strlen(port) ? 0 : -1;
}

static int bind_any(const char *port)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), zero = 0, one = 1;

	if (fd < 0)
		return -1;
	sa.sin6_port = htons((uint16_t)atoi(port));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* A listening socket for --listen; its address into where ("127.0.0.1:9810"). -1 when it
 * cannot be had (rd_errmsg() says why). Bound before the tracer is attached: a port in use
 * leaves nothing behind. */
static int open_listen(const char *spec, char *where, size_t wlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*ai = NULL;
	char host[256], port[16], addr[INET6_ADDRSTRLEN];
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, one = 1, r;

	if (split_listen(spec, host, sizeof(host), port, sizeof(port)) || atoi(port) > 65535) {
		rd_seterr("--listen: '%s' is not ADDR:PORT", spec);
		return -1;
	}
	if (!*host) {
		fd = bind_any(port);
	} else if ((r = getaddrinfo(host, port, &hints, &ai))) {
		rd_seterr("--listen %s: %s", spec, gai_strerror(r));
		return -1;
	} else {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(fd, ai->ai_addr, ai->ai_addrlen)) {
				r = errno;
				close(fd);
				errno = r;
				fd = -1;
			}
		}
		freeaddrinfo(ai);
	}
	if (fd < 0 || listen(fd, SOMAXCONN) || getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		rd_seterr("--listen %s: %s", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof(addr));
		snprintf(where, wlen, "[%s]:%u", addr, ntohs(s6->sin6_port));
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof(addr));
		snprintf(where, wlen, "%s:%u", addr, ntohs(s4->sin_port));
	}
	return fd;
}

/* The cgroup v2 path of process pid ("0::PATH" in /proc/PID/cgroup) into buf: the label
 * of --cgroup-label. 0 or -errno. */
static int cgroup_of(void *ctx, pid_t pid, char *buf, size_t len)
{
	char path[64], line[4096];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%s", line + 3);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* The processes s names but dead (sorted), sorted, without repeats; 0 or -ENOMEM. */
static int live_pids(const struct rd_summary *s, const pid_t *dead, size_t ndead, pid_t **res,
		     size_t *n)
{
	pid_t *v = malloc((s->nsections + s->nprocs + 1) * sizeof(*v));
	size_t k = 0, j = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->nsections; i++)
		v[k++] = (pid_t)s->sections[i].key.tgid;
	for (size_t i = 0; i < s->nprocs; i++)
		v[k++] = (pid_t)s->procs[i].pid;
	qsort(v, k, sizeof(*v), cmp_pid);
	for (size_t i = 0; i < k; i++)
		if ((!j || v[j - 1] != v[i]) &&
		    !(ndead && bsearch(&v[i], dead, ndead, sizeof(*dead), cmp_pid)))
			v[j++] = v[i];
	*res = v;
	*n = j;
	return 0;
}

/* Read the maps into the metrics. The processes that had exited before the read have their
 * last counts in it: after it, they leave the maps and the metrics' records. Call with the
 * lock held; 0 or -errno. */
static int refresh(struct exporter *e)
{
	struct rd_summary s;
	pid_t *dead = NULL;
	size_t ndead = 0;
	int err;

	if (e->nlive) {
		dead = malloc(e->nlive * sizeof(*dead));
		if (!dead)
			return -ENOMEM;
		for (size_t i = 0; i < e->nlive; i++)
			if (kill(e->live[i], 0) && errno == ESRCH)
				dead[ndead++] = e->live[i];
	}
	err = rd_tracer_summary(e->t, &s);
	if (err) {
		free(dead);
		return err;
	}
	rd_tracer_poll(e->t, 0, NULL, NULL); /* the section notices of the new ones */
	err = rd_metrics_update(e->m, &s);
	if (!err) {
		rd_tracer_forget(e->t, dead, ndead, &s);
		rd_metrics_forget(e->m, dead, ndead);
		free(e->live);
		e->live = NULL;
		err = live_pids(&s, dead, ndead, &e->live, &e->nlive);
	}
	rd_summary_free(&s);
	free(dead);
	return err;
}

/* The metrics into PATH.tmp, then renamed over PATH. Call with the lock held; 0 or -errno,
 * the file that failed in *what. */
static int write_textfile(struct exporter *e, const char **what)
{
	FILE *f = fopen(e->tmpfile, "we");
	int err = 0;

	*what = e->tmpfile;
	if (!f)
		return -errno;
	rd_metrics_write(e->m, RD_FMT_PROMETHEUS, f);
	if (ferror(f))
		err = EIO;
	if (fclose(f) && !err)
		err = errno;
	if (!err && chmod(e->tmpfile, 0644))
		err = errno;
	if (!err && rename(e->tmpfile, e->textfile)) {
		err = errno;
		*what = e->textfile;
	}
	if (err) {
		unlink(e->tmpfile);
		return -err;
	}
	e->wrote = true;
	return 0;
}

/* Whether PATH.tmp can be made, before anything is attached. */
static int can_write(const char *tmpfile)
{
	int fd = open(tmpfile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno == EEXIST ? 0 : -errno; /* a stale one is replaced */
	close(fd);
	unlink(tmpfile);
	return 0;
}

/* A response of len bytes of body (freed here), gzip-compressed when encoding says so. */
static enum MHD_Result reply_as(struct MHD_Connection *conn, unsigned int code, char *body,
				size_t len, const char *type, const char *encoding)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    len, body, body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (encoding)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
	/* The metrics depend on the client's Accept and Accept-Encoding, for caches. */
	if (code == MHD_HTTP_OK)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code, char *body, size_t len,
			     const char *type)
{
	return reply_as(conn, code, body, len, type, NULL);
}

static enum MHD_Result text_reply(struct MHD_Connection *conn, unsigned int code, const char *msg)
{
	char *body = strdup(msg);

	return reply(conn, code, body, body ? strlen(body) : 0, "text/plain; charset=utf-8");
}

/* body (len bytes) gzip-compressed into *out: 0, or -1 with nothing allocated. */
static int gzip(const char *body, size_t len, char **out, size_t *outlen)
{
	z_stream z = {0};
	size_t cap;
	char *buf;
	int ret;

	/* 15 + 16: the largest window, with the gzip header and trailer. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	cap = deflateBound(&z, len);
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)body;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)buf;
	z.avail_out = (uInt)cap;
	ret = deflate(&z, Z_FINISH);
	*outlen = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END || len > UINT32_MAX) {
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

static const char landing[] =
    "<!DOCTYPE html>\n"
    "<html>\n"
    "<head><meta charset=\"utf-8\"><title>rseqdbg exporter</title></head>\n"
    "<body>\n"
    "<h1>rseqdbg exporter</h1>\n"
    "<p>rseq abort counters for Prometheus, version " RSEQDBG_VERSION ".</p>\n"
    "<ul><li><a href=\"metrics\">Metrics</a></li></ul>\n"
    "</body>\n"
    "</html>\n";

/* The landing page at "/", as every Prometheus exporter has one. */
static enum MHD_Result landing_page(struct MHD_Connection *conn)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    sizeof(landing) - 1, (void *)landing, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* A PEM file into memory, NULL after reporting. */
static char *read_pem(const char *path)
{
	FILE *f = fopen(path, "re"), *m;
	char *text = NULL, buf[4096];
	size_t len = 0, n;
	int err = 0;

	if (!f) {
		rd_error("--web.config.file: %s: %s", path, strerror(errno));
		return NULL;
	}
	m = open_memstream(&text, &len);
	if (!m) {
		fclose(f);
		rd_error("out of memory");
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)))
		fwrite(buf, 1, n, m);
	if (ferror(f))
		err = EIO;
	fclose(f);
	if (fclose(m) && !err)
		err = ENOMEM;
	if (err) {
		free(text);
		rd_error("--web.config.file: %s: %s", path, strerror(err));
		return NULL;
	}
	return text;
}

static void web_free(struct web *w)
{
	if (!w)
		return;
	rd_webconfig_free(&w->c);
	free(w->cert);
	free(w->key);
	free(w->ca);
	free(w->cache);
	free(w);
}

/* --web.config.file read, and the files it names: NULL after reporting. */
static struct web *web_load(const char *path)
{
	struct web *w = calloc(1, sizeof(*w));
	char err[512];

	if (!w) {
		rd_error("out of memory");
		return NULL;
	}
	pthread_mutex_init(&w->cache_lock, NULL);
	if (rd_webconfig_load(path, &w->c, err, sizeof(err))) {
		rd_error("--web.config.file %s: %s", path, err);
		goto fail;
	}
	if (w->c.tls) {
		w->cert = read_pem(w->c.cert_file);
		w->key = w->cert ? read_pem(w->c.key_file) : NULL;
		if (!w->key)
			goto fail;
		if (w->c.client_ca_file && *w->c.client_ca_file &&
		    !(w->ca = read_pem(w->c.client_ca_file)))
			goto fail;
		rd_webconfig_priorities(&w->c, w->priorities, sizeof(w->priorities));
	}
	w->cache = calloc(w->c.nusers ? w->c.nusers : 1, sizeof(*w->cache));
	if (!w->cache) {
		rd_error("out of memory");
		goto fail;
	}
	return w;
fail:
	web_free(w);
	return NULL;
}

/* Whether the client's certificate satisfies client_auth_type. The handshake asked for one
 * (when there are authorities to name); what it must be is decided here. */
static bool client_cert_ok(const struct web *w, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	unsigned int n = 0, status = 1;
	gnutls_session_t s;

	if (w->c.client_auth <= RD_CLIENT_REQUEST)
		return true;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	s = (gnutls_session_t)ci->tls_session;
	if (!gnutls_certificate_get_peers(s, &n) || !n)
		return w->c.client_auth == RD_CLIENT_VERIFY_IF_GIVEN;
	if (w->c.client_auth == RD_CLIENT_REQUIRE_ANY)
		return true;
	return !gnutls_certificate_verify_peers2(s, &status) && !status;
}

/* Equal strings, in a time that does not tell how much of them matched. */
static bool same(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned char d = n != m;

	for (size_t i = 0; i < n && i < m; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

/* Whether password is user's, by libxcrypt's bcrypt against the file's hash. An unknown
 * user costs a bcrypt too, so that the time does not tell which users exist. */
static bool password_ok(struct web *w, const char *user, const char *password)
{
	const struct rd_webuser *u = rd_webconfig_user(&w->c, user);
	const char *hash = u ? u->hash : w->c.users[0].hash;
	unsigned char digest[32];
	struct auth_cache *c = u ? &w->cache[u - w->c.users] : NULL;
	struct crypt_data *cd;
	char *key = NULL;
	bool ok = false;

	if (asprintf(&key, "%s:%s", user, password) < 0)
		return false;
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, key, strlen(key), digest)) {
		free(key);
		return false;
	}
	free(key);
	if (c) {
		pthread_mutex_lock(&w->cache_lock);
		ok = c->valid && !memcmp(c->digest, digest, sizeof(digest));
		pthread_mutex_unlock(&w->cache_lock);
		if (ok)
			return true;
	}
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	ok = crypt_r(password, hash, cd) && same(cd->output, hash) && u;
	free(cd);
	if (ok) {
		pthread_mutex_lock(&w->cache_lock);
		memcpy(c->digest, digest, sizeof(digest));
		c->valid = true;
		pthread_mutex_unlock(&w->cache_lock);
	}
	return ok;
}

/* Whether the request may be answered: its client certificate, its credentials. NO after
 * queueing the refusal in *ret. */
static bool allowed(struct web *w, struct MHD_Connection *conn, enum MHD_Result *ret)
{
	struct MHD_Response *r;
	char *user, *password = NULL;
	bool ok;

	if (w->c.tls && !client_cert_ok(w, conn)) {
		*ret = text_reply(conn, MHD_HTTP_FORBIDDEN,
				  "rseqdbg exporter: a client certificate the server trusts is "
				  "required\n");
		return false;
	}
	if (!w->c.nusers)
		return true;
	user = MHD_basic_auth_get_username_password(conn, &password);
	ok = user && password && password_ok(w, user, password);
	MHD_free(user);
	MHD_free(password);
	if (ok)
		return true;
	r = MHD_create_response_from_buffer(sizeof("Unauthorized\n") - 1, (void *)"Unauthorized\n",
					    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		*ret = MHD_NO;
		return false;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	*ret = MHD_queue_basic_auth_fail_response(conn, "rseqdbg exporter", r);
	MHD_destroy_response(r);
	return false;
}

/* One request: GET /metrics reads the maps and answers in the format the client prefers by
 * its Accept header (OpenMetrics, as Prometheus asks, or the Prometheus text format),
 * gzip-compressed when its Accept-Encoding takes gzip. */
static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
			     const char *method, const char *version, const char *upload,
			     size_t *upload_size, void **state)
{
	struct exporter *e = cls;
	enum rd_metrics_format fmt;
	struct rd_proc_self self;
	char *body = NULL, *zbody;
	size_t len = 0, zlen;
	enum MHD_Result ret;
	FILE *f;
	int err;

	if (e->web && !allowed(e->web, conn, &ret))
		return ret;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text_reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
	if (!strcmp(url, "/"))
		return landing_page(conn);
	if (strcmp(url, "/metrics"))
		return text_reply(conn, MHD_HTTP_NOT_FOUND, "rseqdbg exporter: see /metrics\n");
	if (rd_negotiate_format(
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT), &fmt))
		return text_reply(conn, MHD_HTTP_NOT_ACCEPTABLE,
				  "rseqdbg exporter: application/openmetrics-text or text/plain\n");
	f = open_memstream(&body, &len);
	if (!f)
		return text_reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	pthread_mutex_lock(&e->lock);
	err = refresh(e);
	if (!err) {
		if (!rd_proc_self_read(&self))
			rd_metrics_set_self(e->m, &self);
		rd_metrics_write(e->m, fmt, f);
		rd_metrics_set_self(e->m, NULL);
	}
	pthread_mutex_unlock(&e->lock);
	if (fclose(f) || err) {
		free(body);
		return text_reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  err ? "reading the BPF maps failed\n" : "out of memory\n");
	}
	if (rd_negotiate_gzip(MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							  MHD_HTTP_HEADER_ACCEPT_ENCODING)) &&
	    !gzip(body, len, &zbody, &zlen)) {
		free(body);
		return reply_as(conn, MHD_HTTP_OK, zbody, zlen, rd_metrics_content_type(fmt),
				"gzip");
	}
	return reply(conn, MHD_HTTP_OK, body, len, rd_metrics_content_type(fmt));
}

/* Connections the file descriptor limit leaves room for, beside the tracer's own
 * descriptors (maps, programs, a uprobe link per handler): the soft limit is raised to the
 * hard one first. */
static unsigned int connection_limit(void)
{
	struct rlimit rl;
	rlim_t room;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 64;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	room = rl.rlim_cur == RLIM_INFINITY ? HTTP_CONNECTIONS : rl.rlim_cur / 2;
	return room < 16 ? 16 : room > HTTP_CONNECTIONS ? HTTP_CONNECTIONS : (unsigned int)room;
}

/* The HTTP server on listening socket fd (HTTPS with a tls_server_config), in threads of its
 * own, which take none of the signals that end the exporter. */
static struct MHD_Daemon *start_httpd(struct exporter *e, int fd)
{
	unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD;
	struct MHD_OptionItem opts[6] = {{MHD_OPTION_END, 0, NULL}};
	struct web *w = e->web;
	sigset_t block, old;
	struct MHD_Daemon *d;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	if (w && w->c.tls) {
		struct MHD_OptionItem tls[] = {
		    {MHD_OPTION_HTTPS_MEM_CERT, 0, w->cert},
		    {MHD_OPTION_HTTPS_MEM_KEY, 0, w->key},
		    {MHD_OPTION_HTTPS_PRIORITIES, 0, w->priorities},
		    {w->ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, w->ca},
		    {MHD_OPTION_END, 0, NULL},
		};

		memcpy(opts, tls, sizeof(tls));
		flags |= MHD_USE_TLS;
	}
	d = MHD_start_daemon(
	    flags, 0, NULL, NULL, serve, e, MHD_OPTION_ARRAY, opts, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)HTTP_THREADS, MHD_OPTION_CONNECTION_LIMIT,
	    connection_limit(), MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_SECONDS, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Until SIGTERM or SIGINT: symbolize new sections as the kernel reports them, and every
 * interval read the maps (forgetting exited processes) and write the textfile. */
static int run(struct exporter *e, double interval)
{
	uint64_t every = (uint64_t)(interval * 1000), next = mono_ms() + every;
	struct pollfd p = {.fd = rd_tracer_fd(e->t), .events = POLLIN};
	const char *what;
	int err;

	while (!rd_tracer_stop) {
		poll(&p, 1, 250);
		pthread_mutex_lock(&e->lock);
		rd_tracer_poll(e->t, 0, NULL, NULL);
		if (mono_ms() >= next) {
			err = refresh(e);
			if (err)
				rd_warn("reading the BPF maps failed: %s", strerror(-err));
			else if (e->textfile && (err = write_textfile(e, &what)))
				rd_warn("cannot write %s: %s", what, strerror(-err));
			next = mono_ms() + every;
		}
		pthread_mutex_unlock(&e->lock);
	}
	return EXIT_OK;
}

/* Everything after the options: a listening socket, the tracer, the first metrics. */
static int start(struct exporter_args *a, struct exporter *e, int *fd, char *where, size_t wlen)
{
	struct rd_metrics_opts mo = {.max_series = a->max_series,
				     .per_cpu = a->per_cpu,
				     .uprobes = !a->o.no_uprobes,
				     .cgroup_of = a->cgroup_label ? cgroup_of : NULL,
				     .version = RSEQDBG_VERSION};
	struct rd_spawn child = RD_SPAWN_INIT;
	static struct utsname u;
	struct rd_features f;
	const char *missing, *what;
	int ret;

	rd_features_probe(&f);
	missing = rd_tracer_unavailable(&f);
	if (missing)
		return rd_error("%s", missing);
	if (a->textfile) {
		if (asprintf(&e->tmpfile, "%s.tmp", a->textfile) < 0)
			return rd_error("out of memory");
		e->textfile = a->textfile;
		ret = can_write(e->tmpfile);
		if (ret)
			return rd_error("--textfile: cannot write %s: %s", e->tmpfile,
					strerror(-ret));
	}
	if (a->web_config && !(e->web = web_load(a->web_config)))
		return EXIT_ERROR;
	if (a->listen && (*fd = open_listen(a->listen, where, wlen)) < 0)
		return rd_error("%s", rd_errmsg());
	ret = rd_tracer_start(&a->o, &f, NULL, &child, &e->t);
	if (ret)
		return rd_error("%s", rd_errmsg());
	for (size_t i = 0; i < a->o.npids; i++)
		rd_tracer_learn_pid(e->t, a->pids[i]);
	uname(&u);
	mo.kernel = u.release;
	mo.mode = rd_tracer_mode(e->t);
	if (rd_metrics_new(&mo, &e->m) || refresh(e))
		return rd_error("reading the BPF maps failed");
	if (e->textfile && (ret = write_textfile(e, &what)))
		return rd_error("--textfile: cannot write %s: %s", what, strerror(-ret));
	return 0;
}

int cmd_exporter(int argc, char **argv)
{
	struct exporter_args a = {};
	struct exporter e = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct MHD_Daemon *httpd = NULL;
	char where[INET6_ADDRSTRLEN + 16] = "";
	int ret, fd = -1, code;

	ret = parse_opts(&a, argc, argv);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	code = start(&a, &e, &fd, where, sizeof(where));
	if (!code && fd >= 0) {
		httpd = start_httpd(&e, fd);
		if (!httpd)
			code = rd_error("--listen %s: the HTTP server did not start", a.listen);
		else
			fd = -1; /* the server's now */
	}
	if (!code) {
		/* Scripts and service managers wait for this line. */
		fprintf(stderr, "rseqdbg: exporter: ready (mode %s):%s%s%s%s%s\n",
			rd_mode_name(rd_tracer_mode(e.t)),
			!httpd			? ""
			: e.web && e.web->c.tls ? " https://"
						: " http://",
			httpd ? where : "", httpd ? "/metrics" : "", e.textfile ? " textfile " : "",
			e.textfile ? e.textfile : "");
		code = run(&e, a.interval);
	}
	if (httpd)
		MHD_stop_daemon(httpd);
	if (fd >= 0)
		close(fd);
	rd_tracer_free(e.t);
	rd_metrics_free(e.m);
	/* Counters nobody updates any more would read as a quiet machine. */
	if (e.wrote)
		unlink(e.textfile);
	free(e.tmpfile);
	free(e.live);
	web_free(e.web);
	return code;
}
