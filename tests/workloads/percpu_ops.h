/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * percpu_ops.h: per-CPU operations on restartable sequences, x86_64, written the way rseq
 * libraries write them: each operation is a static inline function whose asm goto defines its
 * descriptor in __rseq_cs (listed in __rseq_cs_ptr_array, its exits in
 * __rseq_exit_point_array), arms rseq_cs, checks the CPU it was given against the thread's
 * cpu_id at the top of the section, and has its abort handler, behind the signature, in a
 * section of its own: __rseq_failure. Inlined into their callers, the sections are the
 * callers' code, named by DWARF's inline chain.
 *
 * A stale cpu_id ends the section early, in user space: the branch reaches the abort handler
 * through a stub in __rseq_failure that counts it (*user_branches) before it jumps there. The
 * kernel cannot abort code outside the section, so the program knows exactly how many of
 * its handler entries were its own branches and how many were the kernel's aborts.
 */
#ifndef PERCPU_OPS_H
#define PERCPU_OPS_H

#include "percpu_cs.h"

#define PCPU_SIG 0x53053053

#define PCPU_ARM(desc)                                                                             \
	"leaq " #desc "b(%%rip), %%rax\n\t"                                                        \
	"movq %%rax, %[rseq_cs]\n\t"

/* The abort handler behind its signature (ud1), and the stub that counts a stale cpu_id. */
#define PCPU_FAILURE(abort, stale, label)                                                          \
	".pushsection __rseq_failure, \"ax\"\n\t"                                                  \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                                               \
	".long 0x53053053\n\t" #abort ":\n\t"                                                      \
	"jmp %l[" label "]\n\t" #stale ":\n\t"                                                     \
	"incq (%[user_branches])\n\t"                                                              \
	"jmp " #abort "b\n\t"                                                                      \
	".popsection\n\t"

/* *v += count on cpu. 0 when committed, -1 when aborted (by the kernel or by a stale cpu). */
static inline __attribute__((always_inline)) int pcpu_addv(intptr_t *v, intptr_t count, int cpu,
							   uint64_t *user_branches)
{
	struct rseq *rs = pcpu_rseq();

	__asm__ goto(PCPU_CS(3, 1, 2, 4) PCPU_ARM(3) "1:\n\t"
						     "cmpl %[cpu], %[cpu_id]\n\t"
						     "jnz 5f\n\t"
						     "movq %[v], %%rax\n\t"
						     "addq %[count], %%rax\n\t"
						     "movq %%rax, %[v]\n\t"
						     "2:\n\t" PCPU_FAILURE(4, 5, "abort")
		     : /* asm goto outputs are not used: memory only */
		     : [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		       [v] "m"(*v), [count] "r"(count), [user_branches] "r"(user_branches)
		     : "memory", "cc", "rax"
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
			 PCPU_ARM(3) "1:\n\t"
				     "cmpl %[cpu], %[cpu_id]\n\t"
				     "jnz 5f\n\t"
				     "cmpq %[head], %[expect]\n\t"
				     "jnz %l[ne]\n\t"
				     "movq %[node], %[head]\n\t"
				     "2:\n\t" PCPU_FAILURE(4, 5, "abort")
		     :
		     : [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		       [head] "m"(*head), [expect] "r"(expect), [node] "r"(node),
		       [user_branches] "r"(user_branches)
		     : "memory", "cc", "rax"
		     : abort, ne);
	return 0;
abort:
	return -1;
ne:
	return 1;
}

/* Take the per-CPU lock *lock of cpu: if it is 0, turn a delay loop of delay iterations inside
 * the section (a section as slow as the caller asks), then store 1, the commit. 0 when taken,
 * 1 when the lock is held (an exit point), -1 when aborted. The caller releases it with a
 * store-release of 0, from any CPU. */
static inline __attribute__((always_inline)) int pcpu_lock_delay(intptr_t *lock, uint64_t delay,
								 int cpu, uint64_t *user_branches)
{
	struct rseq *rs = pcpu_rseq();

	__asm__ goto(PCPU_CS(3, 1, 2, 4) PCPU_EXIT(1, "%l[busy]")
			 PCPU_ARM(3) "1:\n\t"
				     "cmpl %[cpu], %[cpu_id]\n\t"
				     "jnz 5f\n\t"
				     "cmpq $0, %[lock]\n\t"
				     "jnz %l[busy]\n\t"
				     "movq %[delay], %%rax\n\t"
				     "testq %%rax, %%rax\n\t"
				     "jz 7f\n\t"
				     "6:\n\t"
				     "subq $1, %%rax\n\t"
				     "jnz 6b\n\t"
				     "7:\n\t"
				     "movq $1, %[lock]\n\t"
				     "2:\n\t" PCPU_FAILURE(4, 5, "abort")
		     :
		     : [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
		       [lock] "m"(*lock), [delay] "r"(delay), [user_branches] "r"(user_branches)
		     : "memory", "cc", "rax"
		     : abort, busy);
	return 0;
abort:
	return -1;
busy:
	return 1;
}

#endif
