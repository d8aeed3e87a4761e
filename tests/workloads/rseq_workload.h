/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Layout shared by rseq_workload.c and the critical sections in rseq_workload.S.
 * The assembly reaches every field through these offsets; the C side asserts them.
 */
#ifndef RSEQ_WORKLOAD_H
#define RSEQ_WORKLOAD_H

/* The abort signature glibc registers on the architecture (arm64's is a brk instruction). */
#if defined(__aarch64__)
#define WL_RSEQ_SIG 0xd428bc00
#else
#define WL_RSEQ_SIG 0x53053053
#endif

/* struct rseq (kernel ABI) */
#define WL_RSEQ_CPU_ID 4
#define WL_RSEQ_CS 8

/* Sections, in report order. */
#define WL_SECT_COUNTER 0
#define WL_SECT_TCMALLOC 1
#define WL_SECT_CONDEXIT 2
#define WL_NSECT 3

/* Per-section counters of a thread, byte offsets inside one section's block. */
#define WL_CNT_ITER 0
#define WL_CNT_COMMIT 8
#define WL_CNT_ABORT 16
#define WL_CNT_EXIT 24

/* struct wl_thread: what the sections receive in %rdi (x0 on arm64). */
#define WL_T_RSEQ 0
#define WL_T_PCPU 8
#define WL_T_CNT 16
#define WL_CNT(sect, which) (WL_T_CNT + (sect)*32 + (which))

/* struct wl_pcpu: one 64-byte line per CPU. */
#define WL_PCPU_SHIFT 6
#define WL_PCPU_COUNTER 0
#define WL_PCPU_COND 8
#define WL_PCPU_TC_COUNT 16
#define WL_PCPU_TC_SLOTS 24
#define WL_TC_NSLOTS 4

/* wl_condexit leaves its section without committing when (op & WL_CONDEXIT_MASK) == 0. */
#define WL_CONDEXIT_MASK 7

#ifndef __ASSEMBLER__
#include <stdint.h>

struct wl_pcpu {
	uint64_t counter;
	uint64_t cond;
	uint64_t tc_count;
	uint64_t tc_slots[WL_TC_NSLOTS];
	uint64_t pad;
};

struct wl_counts {
	uint64_t iterations;
	uint64_t commits;
	uint64_t aborts;
	uint64_t exits;
};

struct wl_thread {
	void *rseq;
	struct wl_pcpu *pcpu;
	struct wl_counts cnt[WL_NSECT];
	/* Fields below are the C side's only. */
	int index;
	int tid;
	int own_rseq;
	uint64_t ops;
	uint64_t signals;
} __attribute__((aligned(64)));

/* Each call completes one operation: retries after aborts (and, for the counter, after
 * leaving through the exit point). wl_condexit returns 1 when it committed, 0 when it left. */
void wl_counter_add(struct wl_thread *t);
void wl_tcmalloc_push(struct wl_thread *t, uint64_t item);
int wl_condexit(struct wl_thread *t, uint64_t op);
#endif

#endif
