// SPDX-License-Identifier: GPL-2.0-only
/*
 * dlopen_host: loads the sections of rseq_workload.S from a shared object only after it has
 * started (dlopen), then runs wl_counter_add from it. A stepper that started before the
 * dlopen must read the new module's tables to know the section.
 *
 *   dlopen_host --lib PATH [--iters N] [--out FILE]
 *
 * Prints (or writes to FILE) key=value lines: the section's own counts and result=ok when
 * the per-CPU counters add up to the commits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/sysinfo.h>

#include "rseq_workload.h"

#define MAX_CPUS 1024

static struct wl_pcpu pcpu[MAX_CPUS] __attribute__((aligned(64)));

/* Where stepping starts: before the shared object is loaded. */
__attribute__((noinline)) void host_start(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"lib", required_argument, NULL, 'l'},
	    {"iters", required_argument, NULL, 'n'},
	    {"out", required_argument, NULL, 'o'},
	    {0},
	};
	const char *lib = NULL, *out = NULL;
	unsigned long long iters = 1000, sum = 0;
	struct wl_thread t;
	void (*add)(struct wl_thread *);
	void *h;
	FILE *f = stdout;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			lib = optarg;
			break;
		case 'n':
			iters = strtoull(optarg, NULL, 0);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!lib) {
		fprintf(stderr, "dlopen_host: --lib PATH is required\n");
		return 2;
	}
	if (__rseq_size == 0 || get_nprocs_conf() > MAX_CPUS) {
		fprintf(stderr, "dlopen_host: glibc did not register rseq\n");
		return 2;
	}
	memset(&t, 0, sizeof(t));
	t.rseq = (char *)__builtin_thread_pointer() + __rseq_offset;
	t.pcpu = pcpu;
	host_start();
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen_host: %s\n", dlerror());
		return 2;
	}
	add = (void (*)(struct wl_thread *))dlsym(h, "wl_counter_add");
	if (!add) {
		fprintf(stderr, "dlopen_host: %s\n", dlerror());
		return 2;
	}
	for (unsigned long long i = 0; i < iters; i++)
		add(&t);
	for (int i = 0; i < MAX_CPUS; i++)
		sum += pcpu[i].counter;
	if (out && !(f = fopen(out, "w"))) {
		perror(out);
		return 2;
	}
	fprintf(f, "iterations=%llu\ncommits=%llu\naborts=%llu\nexits=%llu\nresult=%s\n",
		(unsigned long long)t.cnt[WL_SECT_COUNTER].iterations,
		(unsigned long long)t.cnt[WL_SECT_COUNTER].commits,
		(unsigned long long)t.cnt[WL_SECT_COUNTER].aborts,
		(unsigned long long)t.cnt[WL_SECT_COUNTER].exits,
		sum == iters && t.cnt[WL_SECT_COUNTER].commits == iters ? "ok" : "wrong");
	if (f != stdout)
		fclose(f);
	/* No dlclose: rseq_cs still points at the object's descriptor until the kernel next
	 * looks at it, and a descriptor that is unmapped by then gets the thread a SIGSEGV. */
	return 0;
}
