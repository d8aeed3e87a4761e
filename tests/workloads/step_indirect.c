// SPDX-License-Identifier: GPL-2.0-only
/*
 * step_indirect: runs the critical section of step_indirect.S in the main thread; every
 * --every-th operation (ops 0, K, 2K, ...) leaves it through an indirect jump to a label no
 * table lists, the others commit. Counts every entry, commit, abort and indirect exit and
 * checks its own result: the per-CPU counters add up to the commits, the exits to the
 * operations that asked for one.
 *
 * --park: after each indirect exit, spin until the thread has been stopped at least once
 * (a ptrace stop is a voluntary context switch, seen in getrusage's ru_nvcsw), so that a
 * debugger's safety net finds the thread outside the section before it enters it again.
 * Without a tracer --park never returns: use it only under one.
 *
 * --noise-us N: a second thread signals itself every N microseconds (SIGUSR1, an empty
 * handler) until the operations are done: under a tracer each signal is a stop of a thread
 * other than the stepped one, an event the debugger handles while it waits.
 *
 * At the end the code of the section's function, as mapped, is compared with the same bytes of
 * the executable file: a debugger that left a breakpoint in it shows as text=differs.
 *
 * Usage: step_indirect [--iters N] [--every K] [--park] [--noise-us N] [--out FILE]
 * Exit status: 0 result=ok, 1 result=FAIL, 2 bad usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rseq_workload.h"

#define SI_MAX_CPUS 1024

_Static_assert(offsetof(struct rseq, cpu_id) == WL_RSEQ_CPU_ID, "struct rseq cpu_id");
_Static_assert(offsetof(struct rseq, rseq_cs) == WL_RSEQ_CS, "struct rseq rseq_cs");
_Static_assert(offsetof(struct wl_thread, cnt) == WL_T_CNT, "wl_thread cnt");
_Static_assert(sizeof(struct wl_pcpu) == 1 << WL_PCPU_SHIFT, "wl_pcpu size");

int si_indirect(struct wl_thread *t, uint64_t leave);
extern const unsigned char si_text_end[];

static struct wl_pcpu pcpu[SI_MAX_CPUS] __attribute__((aligned(64)));
static struct wl_thread thread;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "step_indirect: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
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

static long nvcsw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die("getrusage: %s", strerror(errno));
	return ru.ru_nvcsw;
}

struct text_check {
	uintptr_t start;
	size_t len;
	off_t off; /* file offset of start; -1 when not found */
};

static int find_offset(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_check *tc = arg;
	uintptr_t vaddr = tc->start - info->dlpi_addr;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr + tc->len <= ph->p_vaddr + ph->p_filesz)
			tc->off = (off_t)(ph->p_offset + (vaddr - ph->p_vaddr));
	}
	return 1; /* the first object is the executable */
}

/* Whether the section's code in memory equals the file's bytes. */
static bool text_same(void)
{
	struct text_check tc = {(uintptr_t)si_indirect, 0, -1};
	unsigned char buf[4096];
	int fd;
	ssize_t n;

	tc.len = (uintptr_t)si_text_end - tc.start;
	if (tc.len > sizeof(buf))
		die("si_indirect..si_text_end is %zu bytes, more than %zu", tc.len, sizeof(buf));
	dl_iterate_phdr(find_offset, &tc);
	if (tc.off < 0)
		die("si_indirect: no loadable segment of the executable holds it");
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		die("/proc/self/exe: %s", strerror(errno));
	n = pread(fd, buf, tc.len, tc.off);
	close(fd);
	if (n != (ssize_t)tc.len)
		die("/proc/self/exe: short read at offset %lld", (long long)tc.off);
	return memcmp(buf, (const void *)tc.start, tc.len) == 0;
}

static volatile int noise_done;
static uint64_t noise_us;

static void on_usr1(int sig)
{
	(void)sig;
}

/* The second thread of --noise-us: a signal to itself every noise_us until the end. */
static void *noise(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	(void)arg;
	while (!noise_done) {
		usleep((useconds_t)noise_us);
		syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
	}
	return NULL;
}

/* Wait until this thread has been stopped (or blocked) once. */
static void park(void)
{
	long n0 = nvcsw();

	while (nvcsw() == n0)
		;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"iters", required_argument, NULL, 'i'},
	    {"every", required_argument, NULL, 'e'},
	    {"park", no_argument, NULL, 'p'},
	    {"out", required_argument, NULL, 'o'},
	    {"noise-us", required_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	uint64_t iters = 64, every = 4, ops, want_exits = 0, sum = 0, parks = 0;
	struct wl_counts *c = &thread.cnt[0];
	const char *outpath = NULL;
	bool do_park = false, same;
	char why[256] = "";
	FILE *out = stdout;
	pthread_t noiser;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			iters = parse_u64("--iters", optarg);
			break;
		case 'e':
			every = parse_u64("--every", optarg);
			if (!every)
				die("--every: must be at least 1");
			break;
		case 'p':
			do_park = true;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'n':
			noise_us = parse_u64("--noise-us", optarg);
			break;
		case 'h':
			printf(
			    "Usage: step_indirect [--iters N] [--every K] [--park] [--noise-us N] "
			    "[--out FILE]\n");
			return 0;
		default:
			fprintf(stderr, "Usage: step_indirect [--iters N] [--every K] [--park] "
					"[--noise-us N] [--out FILE]\n");
			return 2;
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	if (__rseq_size == 0)
		die("glibc did not register rseq (GLIBC_TUNABLES=glibc.pthread.rseq=0?)");
	if (outpath) {
		out = fopen(outpath, "w");
		if (!out)
			die("%s: cannot open for writing: %s", outpath, strerror(errno));
	}
	thread.rseq = (char *)__builtin_thread_pointer() + __rseq_offset;
	thread.pcpu = pcpu;
	if (noise_us) {
		signal(SIGUSR1, on_usr1);
		if (pthread_create(&noiser, NULL, noise, NULL))
			die("pthread_create failed");
	}

	for (ops = 0; ops < iters; ops++) {
		uint64_t leave = ops % every == 0;

		want_exits += leave;
		if (si_indirect(&thread, leave) != !leave)
			snprintf(why, sizeof(why), "operation %llu: si_indirect returned %s",
				 (unsigned long long)ops, leave ? "committed" : "left");
		if (leave && do_park) {
			park();
			parks++;
		}
	}
	if (noise_us) {
		noise_done = 1;
		pthread_join(noiser, NULL);
	}

	same = text_same();
	for (int i = 0; i < SI_MAX_CPUS; i++)
		sum += pcpu[i].counter;
	if (!why[0] && c->iterations != c->commits + c->aborts + c->exits)
		snprintf(why, sizeof(why),
			 "iterations %llu != commits %llu + aborts %llu + exits %llu",
			 (unsigned long long)c->iterations, (unsigned long long)c->commits,
			 (unsigned long long)c->aborts, (unsigned long long)c->exits);
	if (!why[0] && c->exits != want_exits)
		snprintf(why, sizeof(why), "%llu exits, expected %llu",
			 (unsigned long long)c->exits, (unsigned long long)want_exits);
	if (!why[0] && c->commits != iters - want_exits)
		snprintf(why, sizeof(why), "%llu commits, expected %llu",
			 (unsigned long long)c->commits, (unsigned long long)(iters - want_exits));
	if (!why[0] && sum != c->commits)
		snprintf(why, sizeof(why), "per-CPU counters sum to %llu, commits %llu",
			 (unsigned long long)sum, (unsigned long long)c->commits);
	if (!why[0] && !same)
		snprintf(why, sizeof(why), "the code of si_indirect differs from the file's");

	fprintf(out,
		"operations=%llu\niterations=%llu\ncommits=%llu\naborts=%llu\nexits=%llu\n"
		"parks=%llu\ntext=%s\n",
		(unsigned long long)iters, (unsigned long long)c->iterations,
		(unsigned long long)c->commits, (unsigned long long)c->aborts,
		(unsigned long long)c->exits, (unsigned long long)parks, same ? "same" : "differs");
	if (why[0])
		fprintf(out, "result=FAIL: %s\n", why);
	else
		fprintf(out, "result=ok\n");
	if (out != stdout && fclose(out))
		die("%s: write failed: %s", outpath, strerror(errno));
	return why[0] ? 1 : 0;
}
