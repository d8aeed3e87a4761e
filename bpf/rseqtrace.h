/* SPDX-License-Identifier: GPL-2.0-only */
/* Types shared by the rseq tracer's BPF programs and user space (fixed-width only). */
#ifndef RSEQTRACE_H
#define RSEQTRACE_H

#define RT_COMM_LEN 16
/* log2 buckets of regs_ip - start_ip; the last one also holds "outside" */
#define RT_HIST_SLOTS 16
#define RT_MAX_STACK 32 /* user frames kept with an abort event (--stack) */
#define RT_MAX_FILTER 1024
#define RT_MAX_THREADS 65536 /* threads with per-thread state at once */
#define RT_CGROUP_DEPTH 16   /* --cgroup matches tasks this many levels below at most */

/* Why a section was aborted, in the order the tracer prefers when several apply. */
enum rt_cause {
	RT_CAUSE_PREEMPT = 0, /* the thread was switched out and back in */
	RT_CAUSE_SIGNAL = 1,  /* a signal was delivered to the thread */
	RT_CAUSE_MIGRATE = 2, /* the thread moved to another CPU */
	RT_CAUSE_UNKNOWN = 3, /* nothing recorded: most likely a membarrier RSEQ IPI */
	/* Nothing since the thread last returned to user space, but the kernel's event mask
	 * still held a preemption or migration from before the section was entered (it is only
	 * cleared by an abort check inside a section); another pass through the return-to-user
	 * work (task work, membarrier IPI) found it. */
	RT_CAUSE_DEFERRED = 4,
	RT_NCAUSES = 5,
};

/* Marks gathered for a thread (bit = 1 << enum rt_cause; the same bits as the kernel's
 * rseq_event_mask: 0 preempt, 1 signal, 2 migrate). */
#define RT_MARK_PREEMPT (1u << RT_CAUSE_PREEMPT)
#define RT_MARK_SIGNAL (1u << RT_CAUSE_SIGNAL)
#define RT_MARK_MIGRATE (1u << RT_CAUSE_MIGRATE)

/* Kernel features as the BPF side saw them through CO-RE (rt_info.features). */
#define RT_FEAT_EVENT_MASK (1u << 0) /* task_struct.rseq_event_mask (up to 6.18) */
#define RT_FEAT_NODE_MMCID (1u << 1) /* rseq_update carries node_id and mm_cid (6.3+) */
#define RT_FEAT_TASK_MMCID (1u << 2) /* task_struct.mm_cid */

/* rt_event.kmask on kernels without rseq_event_mask (6.19+): task_struct.rseq.event at the
 * abort. */
#define RT_KEV_SCHED_SWITCH (1u << 0) /* scheduled, or a membarrier RSEQ IPI */
#define RT_KEV_IDS_CHANGED (1u << 1)  /* cpu_id or mm_cid changes: migrated, or a new cid */
#define RT_KEV_USER_IRQ (1u << 2)     /* entered the kernel by an interrupt from user space */
#define RT_KEV_VALID (1u << 8)
/* The kernel has that event byte (each is read only where it exists). */
#define RT_KEV_SCHED_SWITCH_KNOWN (1u << 9)
#define RT_KEV_IDS_CHANGED_KNOWN (1u << 10)
#define RT_KEV_USER_IRQ_KNOWN (1u << 11)

enum rt_event_type {
	RT_EV_ABORT = 1,
	RT_EV_UPDATE = 2,  /* a0 cpu_id, a1 node_id, a2 mm_cid */
	RT_EV_MIGRATE = 3, /* a0 from cpu, a1 to cpu */
	RT_EV_SIGNAL = 4,  /* a0 signal number */
	RT_EV_SECTION = 5, /* first abort of a section in a process (notify ring) */
	/* The abort handler entered by a branch in user space, not after the kernel's abort:
	 * a0 abort_ip, a1 start_ip, a2 post_commit_offset (as for RT_EV_ABORT) */
	RT_EV_USER_ABORT = 6,
	/* a traced process executed a new program (notify ring: pid, held), whose abort
	 * handlers are to be probed */
	RT_EV_EXEC = 7,
	/* the dynamic loader of a traced process announced a change of its modules
	 * (_dl_debug_state; notify ring: pid, held) */
	RT_EV_LOADER = 8,
};

/* Kernel aborts a thread can have pending at once, each until its handler is entered (a
 * signal handler may abort sections of its own before the first handler runs). */
#define RT_PENDING_FIXUPS 4

/* The cookie of an abort handler's uprobe: the section it serves, relative to abort_ip. */
#define RT_COOKIE(abort_minus_start, post_commit_offset)                                           \
	((__u64)(abort_minus_start) << 32 | (__u32)(post_commit_offset))

/* Options written into .rodata before load. */
struct rt_config {
	__u32 filter_pids; /* tgid must be in filter_pids */
	__u32 filter_tids; /* tid must be in filter_tids */
	__u32 filter_comm;
	__u32 filter_cgroup;
	__u64 cgroup_id;
	char comm[RT_COMM_LEN];
	__u32 follow_forks; /* children of a filtered process join the filter */
	__u32 emit;	    /* bit (1 << enum rt_event_type): events sent to the ring buffer */
	__u32 stack;	    /* attach the user stack to abort events */
	__u32 nr_cpus;
	__u32 no_event_mask; /* attribute as on kernels without rseq_event_mask (6.19 style) */
	__u32 uprobes;	     /* uprobes on the abort handlers: announce execs (notify ring) */
	/* stop a traced process (SIGSTOP) at each exec and loader announcement, until user
	 * space has probed its new modules and continues it (the command rseqdbg runs) */
	__u32 hold;
};

struct rt_section_key {
	__u32 tgid;
	__u32 pad;
	__u64 start_ip;
};

struct rt_section {
	__u64 aborts[RT_NCAUSES];
	__u64 hist[RT_HIST_SLOTS];
	__u64 post_commit_offset;
	__u64 abort_ip;
	__u64 last_regs_ip;
	/* entries into the abort handler (uprobe): after this thread's rseq_ip_fixup, and
	 * from a branch in user space */
	__u64 entries_kernel;
	__u64 entries_user;
	/* the file mapped at start_ip, read once when the section is first seen */
	__u64 dev; /* kernel encoding: major << 20 | minor */
	__u64 ino;
	__u64 file_off; /* file offset of start_ip */
	char comm[RT_COMM_LEN];
};

struct rt_proc {
	__u64 aborts;
	__u64 migrations;
	__u64 updates;
	__u64 signals;
	char comm[RT_COMM_LEN];
};

struct rt_cpu {
	__u64 aborts;
	__u64 migrations_in;
	__u64 updates;
};

/* Global counters, one copy per CPU (summed in user space). */
struct rt_stats {
	__u64 aborts;
	__u64 cause[RT_NCAUSES];
	__u64 migrations;
	__u64 updates;
	__u64 signals;
	__u64 ringbuf_drops; /* failed reservations in the event ring buffer */
	__u64 notify_drops;  /* failed reservations in the section notify ring buffer */
	__u64 map_full;	     /* aggregation entries that could not be created */
	__u64 vma_misses;    /* sections whose file could not be read in the kernel */
	/* aborts the kernel did not run rseq_ip_fixup for, counted by rseq_ip_fixup_backup:
	 * no event was sent for them */
	__u64 backup_aborts;
	__u64 storage_misses;  /* per-thread state that could not be created */
	__u64 handler_entries; /* every entry into an abort handler with a uprobe */
	__u64 user_aborts;     /* those that followed no rseq_ip_fixup of the thread */
	__u64 holds;	       /* processes stopped at an exec or a loader announcement */
	__u64 hold_misses;     /* exec or loader announcements that could not stop the process */
};

struct rt_event {
	__u64 ts;
	__u32 type;
	__u32 cpu;
	__u32 pid;
	__u32 tid;
	char comm[RT_COMM_LEN];
	__u64 a0, a1, a2, a3;
	__u32 cause;  /* enum rt_cause (aborts) */
	__u32 marks;  /* RT_MARK_* since the last return to user space, | pending ones << 8 */
	__u32 kmask;  /* task_struct.rseq_event_mask when the thread was last switched in, or
		       * RT_KEV_* since 6.19 */
	__u32 nstack; /* user frames in stack[] */
	__u64 stack[RT_MAX_STACK];
};

/* Sent on the notify ring when a (process, section) pair is first seen, so that user space
 * reads the process' mappings while it still runs; and at an exec or a loader announcement
 * (held: the process was sent SIGSTOP, to be continued once its modules are probed). */
struct rt_notify {
	__u32 type;
	__u32 pid;
	__u64 start_ip;
	__u64 dev;
	__u64 ino;
	__u64 file_off;
	__u32 held;
	__u32 pad;
};

#endif
