// SPDX-License-Identifier: GPL-2.0-only
/*
 * core_crash: a process whose threads are in known rseq states when its core is written.
 * Four threads, each held on one CPU: "fault" waits inside its critical section (fault_op,
 * core_crash.S) and, in --mode fault, stores to address 0 there once the others are in
 * place; "wait" waits inside another section (wait_op) for ever; "sleep" and the main thread
 * sleep outside any section. Before the fault, or, in --mode stop, before it prints "ready"
 * and sleeps (for gcore), it writes to --out what it recorded: per thread its role, tid, CPU,
 * rseq area (checked against the kernel's registration: rseq(2) answers EBUSY for the area,
 * length and signature registered), the descriptor armed and the bounds of its section, and
 * the faulting instruction:
 *
 *   rseq_len=32 sig=0x53053053
 *   thread role=fault tid=N cpu=C area=0x.. cs=0x.. start=0x.. post=0x.. abort=0x.. insn=0x..
 *   thread role=wait tid=N cpu=C area=0x.. cs=0x.. start=0x.. post=0x.. abort=0x..
 *   thread role=sleep tid=N cpu=C area=0x.. cs=0x0
 *   thread role=main tid=N cpu=C area=0x.. cs=0x0
 *
 * Usage: core_crash --mode fault|stop --out FILE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rseq_workload.h"

_Static_assert(offsetof(struct rseq, rseq_cs) == WL_RSEQ_CS, "struct rseq rseq_cs");

void fault_op(struct rseq *rs, volatile int *go);
void wait_op(struct rseq *rs, volatile int *go);
extern char cc_fault_start[], cc_fault_post_commit[], cc_fault_abort[], cc_fault_insn[];
extern char cc_wait_start[], cc_wait_post_commit[], cc_wait_abort[];
extern char fault_cs_desc[], wait_cs_desc[];

enum { ROLE_FAULT, ROLE_WAIT, ROLE_SLEEP, ROLE_MAIN, NROLES };
static const char *const role_names[NROLES] = {"fault", "wait", "sleep", "main"};

struct cc_thread {
	int role;
	int cpu;
	pid_t tid;
	struct rseq *area;
	unsigned int len; /* the length the area is registered with */
	int ready;
};

static struct cc_thread threads[NROLES];
static volatile int go_fault[2], go_wait[2];
static int cpus[2];

static void fail(const char *what)
{
	fprintf(stderr, "core_crash: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Hold the thread on its CPU and find its rseq area as the kernel registered it. */
static void settle(struct cc_thread *t)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("sched_setaffinity");
	sched_yield();
	t->tid = (pid_t)syscall(SYS_gettid);
	t->area = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	/* The kernel refuses a second registration with EBUSY only for the same area, length
	 * and signature: the area computed is the one registered. */
	for (unsigned int len = 32; len <= 256 && !t->len; len += 4)
		if (syscall(SYS_rseq, t->area, len, 0, WL_RSEQ_SIG) < 0 && errno == EBUSY)
			t->len = len;
	if (!t->len) {
		fprintf(stderr, "core_crash: tid %d: no rseq area registered at %p\n", (int)t->tid,
			(void *)t->area);
		exit(2);
	}
}

static void *run(void *arg)
{
	struct cc_thread *t = arg;

	settle(t);
	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	if (t->role == ROLE_FAULT)
		fault_op(t->area, go_fault);
	else if (t->role == ROLE_WAIT)
		wait_op(t->area, go_wait);
	for (;;)
		pause();
	return NULL;
}

static void record(FILE *f, const struct cc_thread *t)
{
	fprintf(f, "thread role=%s tid=%d cpu=%d area=%p", role_names[t->role], (int)t->tid, t->cpu,
		(void *)t->area);
	if (t->role == ROLE_FAULT)
		fprintf(f, " cs=%p start=%p post=%p abort=%p insn=%p\n", (void *)fault_cs_desc,
			(void *)cc_fault_start, (void *)cc_fault_post_commit,
			(void *)cc_fault_abort, (void *)cc_fault_insn);
	else if (t->role == ROLE_WAIT)
		fprintf(f, " cs=%p start=%p post=%p abort=%p\n", (void *)wait_cs_desc,
			(void *)cc_wait_start, (void *)cc_wait_post_commit, (void *)cc_wait_abort);
	else
		fprintf(f, " cs=0x0\n");
}

/* Whether a thread has armed its section: its rseq_cs names the descriptor. */
static int armed(const struct cc_thread *t, const char *desc)
{
	return __atomic_load_n(&t->area->rseq_cs, __ATOMIC_ACQUIRE) == (uintptr_t)desc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"mode", required_argument, NULL, 'm'},
	    {"out", required_argument, NULL, 'o'},
	    {0},
	};
	const char *mode = NULL, *out = NULL;
	pthread_t tids[NROLES];
	cpu_set_t set;
	int opt, n = 0;
	FILE *f;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 'm')
			mode = optarg;
		else if (opt == 'o')
			out = optarg;
		else
			return 2;
	}
	if (!mode || !out || (strcmp(mode, "fault") && strcmp(mode, "stop"))) {
		fprintf(stderr, "usage: core_crash --mode fault|stop --out FILE\n");
		return 2;
	}
	if (!__rseq_size) {
		fprintf(stderr, "core_crash: glibc registered no rseq area\n");
		return 2;
	}
	prctl(PR_SET_DUMPABLE, 1);
	/* Two CPUs of those allowed (one when there is one): fault and wait on their own. */
	if (sched_getaffinity(0, sizeof(set), &set))
		fail("sched_getaffinity");
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	if (n == 1)
		cpus[1] = cpus[0];
	for (int r = 0; r < NROLES; r++) {
		threads[r].role = r;
		threads[r].cpu = r == ROLE_WAIT ? cpus[1] : cpus[0];
	}
	for (int r = 0; r < ROLE_MAIN; r++)
		if (pthread_create(&tids[r], NULL, run, &threads[r]))
			fail("pthread_create");
	settle(&threads[ROLE_MAIN]);
	for (int r = 0; r < ROLE_MAIN; r++)
		while (!__atomic_load_n(&threads[r].ready, __ATOMIC_ACQUIRE))
			usleep(1000);
	while (!armed(&threads[ROLE_FAULT], fault_cs_desc) ||
	       !armed(&threads[ROLE_WAIT], wait_cs_desc))
		usleep(1000);
	f = fopen(out, "w");
	if (!f)
		fail(out);
	fprintf(f, "rseq_len=%u sig=%#x\n", threads[ROLE_MAIN].len, WL_RSEQ_SIG);
	for (int r = 0; r < NROLES; r++)
		record(f, &threads[r]);
	if (fclose(f))
		fail(out);
	if (!strcmp(mode, "stop")) {
		printf("ready\n");
		fflush(stdout);
	} else {
		__atomic_store_n(&go_fault[0], 1, __ATOMIC_RELEASE);
	}
	for (;;)
		pause();
}
