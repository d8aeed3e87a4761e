/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What percpu_ops.h and arm64/percpu_ops.h share, being no code of either architecture: the
 * thread's rseq area as glibc registered it, and the descriptor and exit-point tables a
 * section's asm emits (PCPU_CS, PCPU_EXIT).
 */
#ifndef PERCPU_CS_H
#define PERCPU_CS_H

#include <stdint.h>
#include <sys/rseq.h>

/* The thread's struct rseq, registered by glibc. */
static inline struct rseq *pcpu_rseq(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

static inline int pcpu_cpu(void)
{
	return (int)__atomic_load_n(&pcpu_rseq()->cpu_id, __ATOMIC_RELAXED);
}

/* Descriptor label, start, post-commit and abort labels of one section. */
#define PCPU_CS(desc, start, post, abort)                                                          \
	".pushsection __rseq_cs, \"aw\"\n\t"                                                       \
	".balign 32\n\t" #desc ":\n\t"                                                             \
	".long 0, 0\n\t"                                                                           \
	".quad " #start "f, (" #post "f - " #start "f), " #abort "f\n\t"                           \
	".popsection\n\t"                                                                          \
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"                                             \
	".quad " #desc "b\n\t"                                                                     \
	".popsection\n\t"

#define PCPU_EXIT(start, exit)                                                                     \
	".pushsection __rseq_exit_point_array, \"aw\"\n\t"                                         \
	".quad " #start "f, " exit "\n\t"                                                          \
	".popsection\n\t"

#endif
