/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * percpu_ops.h for aarch64: the operations of ../percpu_ops.h, with the same descriptors,
 * tables, __rseq_failure handlers and stale-cpu stubs, written the way librseq's arm64 code
 * is: adrp/add/str of the descriptor's address arms rseq_cs, the CPU check loads cpu_id and
 * compares, and the abort signature (0xd428bc00, the one glibc registers) is the instruction
 * word before each handler, a brk that never runs. x15 is the scratch register, as in
 * librseq.
 */
#ifndef PERCPU_OPS_H
#define PERCPU_OPS_H

#include "percpu_cs.h"

#define PCPU_SIG 0xd428bc00

#define PCPU_ARM(desc)                                                                             \
	"adrp x15, " #desc "b\n\t"                                                                 \
	"add x15, x15, :lo12:" #desc "b\n\t"                                                       \
	"str x15, %[rseq_cs]\n\t"

/* The section's first check: the thread still runs on the CPU it was given. */
#define PCPU_CHECK_CPU(stale)                                                                      \
	"ldr w15, %[cpu_id]\n\t"                                                                   \
	"cmp w15, %w[cpu]\n\t"                                                                     \
	"b.ne " #stale "f\n\t"

/* The abort handler behind its signature, and the stub that counts a stale cpu_id. */
#define PCPU_FAILURE(abort, stale, label)                                                          \
	".pushsection __rseq_failure, \"ax\"\n\t"                                                  \
	".inst 0xd428bc00\n\t" #abort ":\n\t"                                                      \
	"b %l[" label "]\n\t" #stale ":\n\t"                                                       \
	"ldr x15, [%[user_branches]]\n\t"                                                          \
	"add x15, x15, #1\n\t"                                                                     \
	"str x15, [%[user_branches]]\n\t"                                                          \
	"b " #abort "b\n\t"                                                                        \
	".popsection\n\t"

/* *v += count on cpu. 0 when committed, -1 when aborted (by the kernel or by a stale cpu). */
static inline __attribute__((always_inline)) int pcpu_addv(intptr_t *v, intptr_t count, int cpu,
							   uint64_t *user_branches)
{
	struct rseq *rs = pcpu_rseq();

	__asm__ goto(PCPU_CS(3, 1, 2, 4)
			 PCPU_ARM(3) "1:\n\t" PCPU_CHECK_CPU(5) "ldr x15, %[v]\n\t"
								"add x15, x15, %[count]\n\t"
								"str x15, %[v]\n\t"
								"2:\n\t" PCPU_FAILURE(4, 5, "abort")
		     : /* asm goto outputs are not used: memory only */
		     : [cpu] "r"(cpu), [cpu_id] "Qo"(rs->cpu_id), [rseq_cs] "Qo"(rs->rseq_cs),
		       [v] "Qo"(*v), [count] "r"(count), [user_branches] "r"(user_branches)
		     : "memory", "cc", "x15"
		     : abort);
	return 0;
abort:
	return -1;
}

/* Push node on the per-CPU list *head of cpu (node->next = *head; *head = node), if *head is
 * still expect. 0 when pushed, 1 when *head changed (an exit point), -1 when aborted. */
struct pcpu_node {
	struct pcpu_node *next;
};

static inline __attribute__((always_inline)) int pcpu_cmpeqv_storev(struct pcpu_node **head,
								    struct pcpu_node *expect,
								    struct pcpu_node *node, int cpu,
								    uint64_t *user_branches)
{
	struct rseq *rs = pcpu_rseq();

	node->next = expect;
	__asm__ goto(PCPU_CS(3, 1, 2, 4) PCPU_EXIT(1, "%l[ne]")
			 PCPU_ARM(3) "1:\n\t" PCPU_CHECK_CPU(5) "ldr x15, %[head]\n\t"
								"cmp x15, %[expect]\n\t"
								"b.ne %l[ne]\n\t"
								"str %[node], %[head]\n\t"
								"2:\n\t" PCPU_FAILURE(4, 5, "abort")
		     :
		     : [cpu] "r"(cpu), [cpu_id] "Qo"(rs->cpu_id), [rseq_cs] "Qo"(rs->rseq_cs),
		       [head] "Qo"(*head), [expect] "r"(expect), [node] "r"(node),
		       [user_branches] "r"(user_branches)
		     : "memory", "cc", "x15"
		     : abort, ne);
	return 0;
abort:
	return -1;
ne:
	return 1;
}

/* Take the per-CPU lock *lock of cpu: if it is 0, turn a delay loop of delay iterations inside
 * the section, then store 1, the commit. 0 when taken, 1 when the lock is held (an exit
 * point), -1 when aborted. The caller releases it with a store-release of 0, from any CPU. */
static inline __attribute__((always_inline)) int pcpu_lock_delay(intptr_t *lock, uint64_t delay,
								 int cpu, uint64_t *user_branches)
{
	struct rseq *rs = pcpu_rseq();

	__asm__ goto(PCPU_CS(3, 1, 2, 4) PCPU_EXIT(1, "%l[busy]")
			 PCPU_ARM(3) "1:\n\t" PCPU_CHECK_CPU(5) "ldr x15, %[lock]\n\t"
								"cbnz x15, %l[busy]\n\t"
								"mov x15, %[delay]\n\t"
								"cbz x15, 7f\n\t"
								"6:\n\t"
								"subs x15, x15, #1\n\t"
								"b.ne 6b\n\t"
								"7:\n\t"
								"mov x15, #1\n\t"
								"str x15, %[lock]\n\t"
								"2:\n\t" PCPU_FAILURE(4, 5, "abort")
		     :
		     : [cpu] "r"(cpu), [cpu_id] "Qo"(rs->cpu_id), [rseq_cs] "Qo"(rs->rseq_cs),
		       [lock] "Qo"(*lock), [delay] "r"(delay), [user_branches] "r"(user_branches)
		     : "memory", "cc", "x15"
		     : abort, busy);
	return 0;
abort:
	return -1;
busy:
	return 1;
}

#endif
