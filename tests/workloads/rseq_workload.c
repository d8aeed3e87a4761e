// SPDX-License-Identifier: GPL-2.0-only
/*
 * rseq_workload: runs the critical sections of rseq_workload.S in worker threads, counts every
 * entry, commit, abort and exit per section, and checks its own result: the per-CPU data the
 * sections committed must add up to the commits the sections counted.
 *
 * Usage: rseq_workload [--mode counter|tcmalloc|condexit|all] [--threads N] [--iters N]
 *                      [--seconds S] [--signal-us N] [--oversubscribe] [--affinity]
 *                      [--out FILE] [--wait]
 * --seconds S runs S seconds, or until SIGTERM, then checks and reports as usual.
 * Exit status: 0 result=ok, 1 result=FAIL, 2 bad usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "rseq_workload.h"

#define WL_MAX_CPUS 1024
#define WL_MAX_THREADS 4096
#define MOVER_PERIOD_US 500

_Static_assert(offsetof(struct rseq, cpu_id) == WL_RSEQ_CPU_ID, "struct rseq cpu_id");
_Static_assert(offsetof(struct rseq, rseq_cs) == WL_RSEQ_CS, "struct rseq rseq_cs");
_Static_assert(offsetof(struct wl_thread, rseq) == WL_T_RSEQ, "wl_thread rseq");
_Static_assert(offsetof(struct wl_thread, pcpu) == WL_T_PCPU, "wl_thread pcpu");
_Static_assert(offsetof(struct wl_thread, cnt) == WL_T_CNT, "wl_thread cnt");
_Static_assert(sizeof(struct wl_counts) == 32, "wl_counts");
_Static_assert(offsetof(struct wl_counts, aborts) == WL_CNT_ABORT, "wl_counts aborts");
_Static_assert(sizeof(struct wl_pcpu) == 1 << WL_PCPU_SHIFT, "wl_pcpu size");
_Static_assert(offsetof(struct wl_pcpu, cond) == WL_PCPU_COND, "wl_pcpu cond");
_Static_assert(offsetof(struct wl_pcpu, tc_count) == WL_PCPU_TC_COUNT, "wl_pcpu tc_count");
_Static_assert(offsetof(struct wl_pcpu, tc_slots) == WL_PCPU_TC_SLOTS, "wl_pcpu tc_slots");

static const char *const sect_names[WL_NSECT] = {"wl_counter_add", "wl_tcmalloc_push",
						 "wl_condexit"};

static struct {
	const char *mode;
	bool run[WL_NSECT];
	int threads;
	uint64_t iters;
	double seconds;
	long signal_us;
	bool oversubscribe;
	bool affinity;
	const char *out;
	bool wait;
} opt = {.mode = "counter", .run = {true}, .threads = 0, .iters = 10000};

static struct wl_pcpu pcpu[WL_MAX_CPUS] __attribute__((aligned(64)));
static struct wl_thread *threads;
static int nthreads;
static int cpus[WL_MAX_CPUS];
static int ncpus;

static pthread_barrier_t ready_barrier;
static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static bool go;
static volatile int stop;
static int workers_done;
static volatile sig_atomic_t term_seen;
static uint64_t affinity_changes;

static __thread uint64_t tls_signals;
static __thread struct rseq own_rseq __attribute__((aligned(32)));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rseq_workload: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rseq_workload [--mode counter|tcmalloc|condexit|all] [--threads N]\n"
		"                     [--iters N] [--seconds S] [--signal-us N] [--oversubscribe]\n"
		"                     [--affinity] [--out FILE] [--wait]\n");
}

static uint64_t parse_u64(const char *name, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		die("%s: '%s' is not a non-negative integer", name, s);
	return v;
}

static void on_timer(int sig)
{
	(void)sig;
	tls_signals++;
}

static void on_term(int sig)
{
	(void)sig;
	term_seen = 1;
}

/* The area glibc registered, else our own registration with the same signature. */
static void rseq_setup(struct wl_thread *t)
{
	if (__rseq_size > 0) {
		t->rseq = (char *)__builtin_thread_pointer() + __rseq_offset;
		return;
	}
	memset(&own_rseq, 0, sizeof(own_rseq));
	own_rseq.cpu_id = (uint32_t)-1;
	if (syscall(__NR_rseq, &own_rseq, 32, 0, WL_RSEQ_SIG))
		die("thread %d: rseq registration failed: %s", t->index, strerror(errno));
	t->rseq = &own_rseq;
	t->own_rseq = 1;
}

static void rseq_teardown(struct wl_thread *t)
{
	if (t->own_rseq && syscall(__NR_rseq, &own_rseq, 32, 1 /* UNREGISTER */, WL_RSEQ_SIG))
		die("thread %d: rseq unregistration failed: %s", t->index, strerror(errno));
}

static timer_t timer_start(struct wl_thread *t)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM};
	struct itimerspec its = {0};
	timer_t timer;

	sev._sigev_un._tid = t->tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer))
		die("thread %d: timer_create: %s", t->index, strerror(errno));
	its.it_interval.tv_sec = opt.signal_us / 1000000;
	its.it_interval.tv_nsec = (opt.signal_us % 1000000) * 1000;
	its.it_value = its.it_interval;
	if (timer_settime(timer, 0, &its, NULL))
		die("thread %d: timer_settime: %s", t->index, strerror(errno));
	return timer;
}

static void *worker(void *arg)
{
	struct wl_thread *t = arg;
	timer_t timer = 0;
	uint64_t op;

	t->tid = (int)syscall(SYS_gettid);
	rseq_setup(t);
	pthread_barrier_wait(&ready_barrier);
	pthread_mutex_lock(&go_lock);
	while (!go)
		pthread_cond_wait(&go_cond, &go_lock);
	pthread_mutex_unlock(&go_lock);

	if (opt.signal_us > 0)
		timer = timer_start(t);
	for (op = 0; opt.seconds > 0 ? !stop : op < opt.iters; op++) {
		if (opt.run[WL_SECT_COUNTER])
			wl_counter_add(t);
		if (opt.run[WL_SECT_TCMALLOC])
			wl_tcmalloc_push(t, (uint64_t)t->index << 40 | op);
		if (opt.run[WL_SECT_CONDEXIT])
			wl_condexit(t, op);
	}
	t->ops = op;
	if (opt.signal_us > 0)
		timer_delete(timer);
	t->signals = tls_signals;
	rseq_teardown(t);
	__atomic_add_fetch(&workers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Moves every worker to the next CPU of the allowed set each round. The first round only pins
 * the workers; later rounds always name a CPU other than the one the worker is pinned to, so
 * each counted change is a real migration (with one CPU the mask is still set and counted).
 */
static void *mover(void *arg)
{
	struct timespec period = {0, MOVER_PERIOD_US * 1000L};
	cpu_set_t set;

	(void)arg;
	for (uint64_t round = 0;; round++) {
		for (int i = 0; i < nthreads; i++) {
			if (__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE) == nthreads || stop)
				return NULL;
			CPU_ZERO(&set);
			CPU_SET(cpus[(round + i) % ncpus], &set);
			if (sched_setaffinity(threads[i].tid, sizeof(set), &set) == 0 &&
			    (round > 0 || ncpus == 1))
				affinity_changes++;
		}
		nanosleep(&period, NULL);
	}
}

static void wait_for_start(void)
{
	struct sigaction sa = {.sa_handler = on_term};
	char buf[256];
	ssize_t n;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL); /* no SA_RESTART: read() returns EINTR */
	fprintf(stderr, "ready pid=%d\n", (int)getpid());
	fflush(stderr);
	while (!term_seen) {
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
}

static void parse_mode(const char *s)
{
	memset(opt.run, 0, sizeof(opt.run));
	if (!strcmp(s, "counter"))
		opt.run[WL_SECT_COUNTER] = true;
	else if (!strcmp(s, "tcmalloc"))
		opt.run[WL_SECT_TCMALLOC] = true;
	else if (!strcmp(s, "condexit"))
		opt.run[WL_SECT_CONDEXIT] = true;
	else if (!strcmp(s, "all"))
		opt.run[0] = opt.run[1] = opt.run[2] = true;
	else
		die("--mode: '%s' is not one of counter, tcmalloc, condexit, all", s);
	opt.mode = s;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"mode", required_argument, NULL, 'm'},
	    {"threads", required_argument, NULL, 't'},
	    {"iters", required_argument, NULL, 'i'},
	    {"seconds", required_argument, NULL, 's'},
	    {"signal-us", required_argument, NULL, 'S'},
	    {"oversubscribe", no_argument, NULL, 'O'},
	    {"affinity", no_argument, NULL, 'a'},
	    {"out", required_argument, NULL, 'o'},
	    {"wait", no_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			parse_mode(optarg);
			break;
		case 't':
			opt.threads = (int)parse_u64("--threads", optarg);
			if (opt.threads < 1 || opt.threads > WL_MAX_THREADS)
				die("--threads: %s is outside 1..%d", optarg, WL_MAX_THREADS);
			break;
		case 'i':
			opt.iters = parse_u64("--iters", optarg);
			break;
		case 's':
			errno = 0;
			opt.seconds = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(opt.seconds > 0))
				die("--seconds: '%s' is not a positive number", optarg);
			break;
		case 'S':
			opt.signal_us = (long)parse_u64("--signal-us", optarg);
			if (opt.signal_us < 1 || opt.signal_us > 60000000)
				die("--signal-us: %s is outside 1..60000000", optarg);
			break;
		case 'O':
			opt.oversubscribe = true;
			break;
		case 'a':
			opt.affinity = true;
			break;
		case 'o':
			opt.out = optarg;
			break;
		case 'w':
			opt.wait = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
}

static void collect_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE && c < WL_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpus++] = c;
	if (ncpus == 0)
		die("no CPU in the affinity mask below %d", WL_MAX_CPUS);
}

static int report(FILE *f)
{
	struct wl_counts tot = {0}, sect[WL_NSECT] = {0};
	uint64_t sum_counter = 0, sum_cond = 0, sum_tc = 0, ops = 0, signals = 0, exp_exits = 0;
	char why[512] = "";
	int seen = 0;

	for (int i = 0; i < nthreads; i++) {
		struct wl_thread *t = &threads[i];

		for (int s = 0; s < WL_NSECT; s++) {
			sect[s].iterations += t->cnt[s].iterations;
			sect[s].commits += t->cnt[s].commits;
			sect[s].aborts += t->cnt[s].aborts;
			sect[s].exits += t->cnt[s].exits;
		}
		ops += t->ops;
		/* ops 0, 8, 16, ... leave wl_condexit through its exit */
		exp_exits += (t->ops + WL_CONDEXIT_MASK) / (WL_CONDEXIT_MASK + 1);
		signals += t->signals;
	}
	for (int c = 0; c < WL_MAX_CPUS; c++) {
		sum_counter += pcpu[c].counter;
		sum_cond += pcpu[c].cond;
		sum_tc += pcpu[c].tc_count;
		seen += pcpu[c].counter || pcpu[c].cond || pcpu[c].tc_count;
	}

#define FAILF(...)                                                                                 \
	do {                                                                                       \
		if (!why[0])                                                                       \
			snprintf(why, sizeof(why), __VA_ARGS__);                                   \
	} while (0)
	if (opt.seconds == 0 && ops != (uint64_t)nthreads * opt.iters)
		FAILF("%llu operations done, expected %llu", (unsigned long long)ops,
		      (unsigned long long)nthreads * opt.iters);
	for (int s = 0; s < WL_NSECT; s++) {
		struct wl_counts *c = &sect[s];

		if (c->iterations != c->commits + c->aborts + c->exits)
			FAILF("%s: iterations %llu != commits %llu + aborts %llu + exits %llu",
			      sect_names[s], (unsigned long long)c->iterations,
			      (unsigned long long)c->commits, (unsigned long long)c->aborts,
			      (unsigned long long)c->exits);
		if (!opt.run[s] && c->iterations)
			FAILF("%s ran %llu times but mode is %s", sect_names[s],
			      (unsigned long long)c->iterations, opt.mode);
	}
	if (opt.run[WL_SECT_COUNTER] && sect[WL_SECT_COUNTER].commits != ops)
		FAILF("wl_counter_add: %llu commits for %llu operations",
		      (unsigned long long)sect[WL_SECT_COUNTER].commits, (unsigned long long)ops);
	if (sum_counter != sect[WL_SECT_COUNTER].commits)
		FAILF("wl_counter_add: per-CPU counters sum to %llu, commits %llu",
		      (unsigned long long)sum_counter,
		      (unsigned long long)sect[WL_SECT_COUNTER].commits);
	if (opt.run[WL_SECT_TCMALLOC] && sect[WL_SECT_TCMALLOC].commits != ops)
		FAILF("wl_tcmalloc_push: %llu commits for %llu operations",
		      (unsigned long long)sect[WL_SECT_TCMALLOC].commits, (unsigned long long)ops);
	if (sum_tc != sect[WL_SECT_TCMALLOC].commits)
		FAILF("wl_tcmalloc_push: per-CPU push counts sum to %llu, commits %llu",
		      (unsigned long long)sum_tc,
		      (unsigned long long)sect[WL_SECT_TCMALLOC].commits);
	for (int c = 0; c < WL_MAX_CPUS; c++) {
		uint64_t n = pcpu[c].tc_count, item;

		if (!n)
			continue;
		item = pcpu[c].tc_slots[(n - 1) % WL_TC_NSLOTS];
		if ((item >> 40) >= (uint64_t)nthreads ||
		    (item & ((1ULL << 40) - 1)) >= threads[item >> 40].ops)
			FAILF("wl_tcmalloc_push: CPU %d: last pushed item 0x%llx was never pushed",
			      c, (unsigned long long)item);
	}
	if (opt.run[WL_SECT_CONDEXIT]) {
		if (sect[WL_SECT_CONDEXIT].exits != exp_exits)
			FAILF("wl_condexit: %llu exits, expected %llu",
			      (unsigned long long)sect[WL_SECT_CONDEXIT].exits,
			      (unsigned long long)exp_exits);
		if (sect[WL_SECT_CONDEXIT].commits != ops - exp_exits)
			FAILF("wl_condexit: %llu commits, expected %llu",
			      (unsigned long long)sect[WL_SECT_CONDEXIT].commits,
			      (unsigned long long)(ops - exp_exits));
	}
	if (sum_cond != sect[WL_SECT_CONDEXIT].commits)
		FAILF("wl_condexit: per-CPU counters sum to %llu, commits %llu",
		      (unsigned long long)sum_cond,
		      (unsigned long long)sect[WL_SECT_CONDEXIT].commits);
#undef FAILF

	for (int s = 0; s < WL_NSECT; s++) {
		tot.iterations += sect[s].iterations;
		tot.commits += sect[s].commits;
		tot.aborts += sect[s].aborts;
		tot.exits += sect[s].exits;
	}
	fprintf(f, "mode=%s\nthreads=%d\niterations=%llu\ncommits=%llu\naborts=%llu\nexits=%llu\n",
		opt.mode, nthreads, (unsigned long long)tot.iterations,
		(unsigned long long)tot.commits, (unsigned long long)tot.aborts,
		(unsigned long long)tot.exits);
	for (int s = 0; s < WL_NSECT; s++) {
		if (!opt.run[s])
			continue;
		fprintf(f, "section.%s.iterations=%llu\n", sect_names[s],
			(unsigned long long)sect[s].iterations);
		fprintf(f, "section.%s.commits=%llu\n", sect_names[s],
			(unsigned long long)sect[s].commits);
		fprintf(f, "section.%s.aborts=%llu\n", sect_names[s],
			(unsigned long long)sect[s].aborts);
		fprintf(f, "section.%s.exits=%llu\n", sect_names[s],
			(unsigned long long)sect[s].exits);
	}
	fprintf(f, "signals=%llu\naffinity_changes=%llu\ncpus_seen=%d\n",
		(unsigned long long)signals, (unsigned long long)affinity_changes, seen);
	if (why[0])
		fprintf(f, "result=FAIL: %s\n", why);
	else
		fprintf(f, "result=ok\n");
	return why[0] ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_timer, .sa_flags = SA_RESTART};
	pthread_t *tids, mover_tid;
	FILE *out = stdout;
	int err, rc;

	parse_args(argc, argv);
	collect_cpus();
	if (get_nprocs_conf() > WL_MAX_CPUS)
		die("%d possible CPUs, at most %d supported", get_nprocs_conf(), WL_MAX_CPUS);
	nthreads = opt.threads ? opt.threads : opt.oversubscribe ? 4 * get_nprocs() : 1;
	if (nthreads > WL_MAX_THREADS)
		nthreads = WL_MAX_THREADS;
	if (opt.out) {
		out = fopen(opt.out, "w");
		if (!out)
			die("%s: cannot open for writing: %s", opt.out, strerror(errno));
	}

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL))
		die("sigaction SIGALRM: %s", strerror(errno));

	threads = aligned_alloc(64, sizeof(*threads) * nthreads);
	tids = calloc(nthreads, sizeof(*tids));
	if (!threads || !tids)
		die("out of memory for %d threads", nthreads);
	memset(threads, 0, sizeof(*threads) * nthreads);
	pthread_barrier_init(&ready_barrier, NULL, nthreads + 1);
	for (int i = 0; i < nthreads; i++) {
		threads[i].index = i;
		threads[i].pcpu = pcpu;
		err = pthread_create(&tids[i], NULL, worker, &threads[i]);
		if (err)
			die("pthread_create: %s", strerror(err));
	}
	pthread_barrier_wait(&ready_barrier);

	if (opt.wait)
		wait_for_start();

	pthread_mutex_lock(&go_lock);
	go = true;
	pthread_cond_broadcast(&go_cond);
	pthread_mutex_unlock(&go_lock);
	if (opt.affinity) {
		err = pthread_create(&mover_tid, NULL, mover, NULL);
		if (err)
			die("pthread_create: %s", strerror(err));
	}
	if (opt.seconds > 0) {
		/* S seconds, or less when SIGTERM asks for the end (any thread may take it, so
		 * the sleep is cut in slices that look at the flag) */
		struct sigaction sa = {.sa_handler = on_term};
		struct timespec end, now;

		term_seen = 0; /* a SIGTERM that ended --wait started the run */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += (time_t)opt.seconds;
		end.tv_nsec += (long)((opt.seconds - (time_t)opt.seconds) * 1e9);
		if (end.tv_nsec >= 1000000000) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000;
		}
		while (!term_seen) {
			struct timespec slice = {0, 20 * 1000 * 1000};

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > end.tv_sec ||
			    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
				break;
			nanosleep(&slice, NULL);
		}
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	if (opt.affinity)
		pthread_join(mover_tid, NULL);

	rc = report(out);
	if (out != stdout && fclose(out))
		die("%s: write failed: %s", opt.out, strerror(errno));
	free(tids);
	free(threads);
	return rc;
}
