// SPDX-License-Identifier: GPL-2.0-only
/*
 * linked_host: runs wl_counter_add of librseq_workload.so, a library it links: the dynamic
 * loader maps it before main, so its names exist in the process only once the loader ran.
 *
 *   linked_host [--iters N] [--out FILE]
 *
 * Prints (or writes to FILE) key=value lines: the section's own counts and result=ok when
 * the per-CPU counters add up to the commits. With --iters 0 it prints "ready" once the
 * library ran, then calls wl_counter_add until killed (a program to attach to).
 */
#define _GNU_SOURCE
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

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"iters", required_argument, NULL, 'n'},
	    {"out", required_argument, NULL, 'o'},
	    {0},
	};
	unsigned long long iters = 1000, sum = 0;
	const char *out = NULL;
	struct wl_thread t;
	FILE *f = stdout;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
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
	if (__rseq_size == 0 || get_nprocs_conf() > MAX_CPUS) {
		fprintf(stderr, "linked_host: glibc did not register rseq\n");
		return 2;
	}
	memset(&t, 0, sizeof(t));
	t.rseq = (char *)__builtin_thread_pointer() + __rseq_offset;
	t.pcpu = pcpu;
	if (!iters) {
		wl_counter_add(&t);
		printf("ready\n");
		fflush(stdout);
		for (;;)
			wl_counter_add(&t);
	}
	for (unsigned long long i = 0; i < iters; i++)
		wl_counter_add(&t);
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
	return 0;
}
