/* SPDX-License-Identifier: GPL-2.0-only */
/* A thread's registered rseq area, read through ptrace and /proc/PID/mem. */
#ifndef RSEQDBG_PROC_RSEQAREA_H
#define RSEQDBG_PROC_RSEQAREA_H

#include <stdint.h>
#include <sys/types.h>

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif

/* PTRACE_GET_RSEQ_CONFIGURATION's answer (Linux 5.13+). */
struct rd_rseq_config {
	uint64_t abi_ptr; /* 0: the thread has no rseq area registered */
	uint32_t abi_size;
	uint32_t signature;
	uint32_t flags;
	uint32_t pad;
};

/* struct rseq as the kernel updates it (fields past abi_size read as 0). */
struct rd_rseq_area {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t rseq_cs; /* descriptor of the armed critical section, 0 when none */
	uint32_t flags;
	uint32_t node_id;
	uint32_t mm_cid;
};

/* Seize and stop one thread of a process we do not trace yet; *sig is a signal that arrived
 * meanwhile, for rd_thread_release() to hand back. 0 or -errno (-ESRCH: it exited, or is a
 * main thread that exited before the others). */
int rd_thread_hold(pid_t tid, int *sig);
/* Detach from a thread held by rd_thread_hold(), leaving it running as before. */
void rd_thread_release(pid_t tid, int sig);

/* tid must be ptrace-stopped by us. Returns 0 or -errno (-EIO: kernel too old). */
int rd_rseq_config(pid_t tid, struct rd_rseq_config *cfg);
/* Read len bytes of the memory of the process of thread tid at addr (process_vm_readv, then
 * /proc/TID/mem); tid must not have exited: a main thread that exited before the others has
 * no memory left to read through (-ESRCH). 0 or -errno. */
int rd_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len);
/* The fields of struct rseq from its first len bytes (those past len read as 0). */
void rd_rseq_parse_area(const void *bytes, size_t len, struct rd_rseq_area *area);
/* The bytes of struct rseq read: cpu_id_start up to mm_cid. */
#define RD_RSEQ_AREA_BYTES 28
/* Read the rseq area that cfg describes, through thread tid. 0 or -errno. */
int rd_rseq_read_area(pid_t tid, const struct rd_rseq_config *cfg, struct rd_rseq_area *area);

#endif
