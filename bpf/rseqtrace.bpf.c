// SPDX-License-Identifier: GPL-2.0-only
/*
 * rseq aborts, cpu_id updates and migrations, with the cause of each abort.
 *
 * Cause attribution (checked on 6.18): the kernel clears task_struct.rseq_event_mask before
 * rseq_ip_fixup fires, so the tracer keeps its own marks per thread: a switch-in marks
 * preemption (migration when sched_migrate_task moved the thread since it last ran),
 * signal_deliver marks a signal. Every pass through the kernel's notify-resume work ends
 * with rseq_update, so these fresh marks are cleared there. The kernel itself clears its
 * mask only when it checks a thread inside a section, so a preemption outside any section
 * stays pending and aborts the next section that meets a notify-resume pass: the tracer
 * keeps those as pending marks (and the kernel's mask read at switch-in) until an abort.
 * An abort with neither was caused by something that sets the mask itself: in practice a
 * membarrier RSEQ IPI.
 *
 * Since 6.19 the kernel keeps no event mask: task_struct.rseq is a struct rseq_data whose
 * event bytes (sched_switch, ids_changed, user_irq) only live between the entry into the
 * kernel and the return to user space, and rseq_update fires only when the ids change. The
 * marks are then replaced at every switch-in, and the event bytes are recorded with each
 * abort for what they tell.
 *
 * Counting: a tracing program is skipped by the kernel while the same program is already
 * running on that CPU (its recursion guard). Where tracepoint callbacks may be preempted
 * (kernels with preemptible tracepoints), a thread preempted inside rseq_ip_fixup makes
 * the kernel skip the program for the next abort on that CPU. A second, short program on
 * the same tracepoint counts the aborts the first one did not see.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "rseqtrace.h"

char LICENSE[] SEC("license") = "GPL";

#define RT_SIGSTOP 19

const volatile struct rt_config rt_cfg = {};

/* Set by user space when it stops holding processes (before it exits, or when the command is
 * over): no process is stopped once a program has read it. A program that may stop one counts
 * itself in rt_hold_inflight around the check, so that user space, which sets the flag before
 * it reads the count, waits only for those already past the check, then continues what they
 * stopped. (The locked add is a full barrier on x86; BPF before v3 has no fetching atomics.) */
volatile __u32 rt_unheld;
__u32 rt_hold_inflight;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* entries are created rarely; load stays quick */
	__uint(max_entries, RT_MAX_FILTER);
	__type(key, __u32);
	__type(value, __u8);
} filter_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* entries are created rarely; load stays quick */
	__uint(max_entries, RT_MAX_FILTER);
	__type(key, __u32);
	__type(value, __u8);
} filter_tids SEC(".maps");

struct rt_task {
	__u32 marks;   /* since the thread last returned to user space */
	__u32 pending; /* since its last abort */
	__u32 kmask;
	__u32 migrated; /* sched_migrate_task moved the thread since it last ran */
	/* The abort rseq_ip_fixup counted last, until rseq_ip_fixup_backup has seen it. */
	__u64 seen_regs_ip;
	__u64 seen_start_ip;
	/* abort_ip of the kernel's aborts whose handler the thread has not entered yet */
	__u64 fixups[RT_PENDING_FIXUPS];
	__u32 nfixups;
};

/* Per-thread state, keyed by thread id and removed when the thread exits. A hash map
 * rather than task storage: creating task storage allocates with kmalloc_nolock() on
 * 6.19+, which fails on CPUs without cmpxchg16b (QEMU's -cpu max,-cx16). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, RT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct rt_task);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* entries are created rarely; load stays quick */
	__uint(max_entries, 16384);
	__type(key, struct rt_section_key);
	__type(value, struct rt_section);
} sections SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* entries are created rarely; load stays quick */
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct rt_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set to the number of possible CPUs before load */
	__type(key, __u32);
	__type(value, struct rt_cpu);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rt_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024); /* --ringbuf-size */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} notify SEC(".maps");

static __always_inline struct rt_stats *get_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

/* The task's cgroup v2 is the filter's cgroup or one below it. */
static __always_inline bool in_cgroup(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);

	for (int i = 0; i < RT_CGROUP_DEPTH && cg; i++) {
		if (BPF_CORE_READ(cg, kn, id) == rt_cfg.cgroup_id)
			return true;
		/* self, the cgroup's own css, is its first member: its parent is the parent. */
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return false;
}

static __always_inline bool match_task(struct task_struct *t)
{
	__u32 tgid = t->tgid, tid = t->pid;

	if (rt_cfg.filter_pids && !bpf_map_lookup_elem(&filter_pids, &tgid))
		return false;
	if (rt_cfg.filter_tids && !bpf_map_lookup_elem(&filter_tids, &tid))
		return false;
	if (rt_cfg.filter_comm) {
		char comm[RT_COMM_LEN];

		__builtin_memcpy(comm, t->comm, sizeof(comm));
		for (int i = 0; i < RT_COMM_LEN; i++) {
			if (comm[i] != rt_cfg.comm[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	if (rt_cfg.filter_cgroup && !in_cgroup(t))
		return false;
	return true;
}

/* The thread's registered rseq area, NULL when it has none, on either task_struct layout. */
static __always_inline struct rseq *task_rseq(struct task_struct *t)
{
	if (bpf_core_type_exists(struct rseq_data___v619))
		return BPF_CORE_READ((struct task_struct___v619 *)t, rseq.usrptr);
	return BPF_CORE_READ((struct task_struct___pre619 *)t, rseq);
}

static __always_inline bool has_event_mask(struct task_struct *t)
{
	return bpf_core_field_exists(((struct task_struct___pre619 *)t)->rseq_event_mask);
}

/* Kernels up to 6.18 keep rseq_event_mask and fire rseq_update on every return to user
 * space after an event; later ones do neither. */
static __always_inline bool event_mask_era(struct task_struct *t)
{
	return !rt_cfg.no_event_mask && has_event_mask(t);
}

/* What the kernel recorded about this entry into it (6.19+), as RT_KEV_* bits. Each event
 * byte is read only where this kernel's struct rseq_event has it (they came and may go one
 * by one), so a kernel without one still loads; RT_KEV_*_KNOWN says which were read. */
static __always_inline __u32 kernel_events(struct task_struct *t)
{
	struct task_struct___v619 *n = (void *)t;
	__u32 k;

	if (!bpf_core_type_exists(struct rseq_data___v619))
		return 0;
	k = RT_KEV_VALID;
	if (bpf_core_field_exists(n->rseq.event.sched_switch))
		k |= RT_KEV_SCHED_SWITCH_KNOWN |
		     (BPF_CORE_READ(n, rseq.event.sched_switch) ? RT_KEV_SCHED_SWITCH : 0);
	if (bpf_core_field_exists(n->rseq.event.ids_changed))
		k |= RT_KEV_IDS_CHANGED_KNOWN |
		     (BPF_CORE_READ(n, rseq.event.ids_changed) ? RT_KEV_IDS_CHANGED : 0);
	if (bpf_core_field_exists(n->rseq.event.user_irq))
		k |= RT_KEV_USER_IRQ_KNOWN |
		     (BPF_CORE_READ(n, rseq.event.user_irq) ? RT_KEV_USER_IRQ : 0);
	return k;
}

static __always_inline struct rt_task *task_state(struct task_struct *t, bool create)
{
	struct rt_task *ts, init = {};
	__u32 tid = t->pid;
	struct rt_stats *s;

	ts = bpf_map_lookup_elem(&tasks, &tid);
	if (ts || !create)
		return ts;
	bpf_map_update_elem(&tasks, &tid, &init, BPF_NOEXIST);
	ts = bpf_map_lookup_elem(&tasks, &tid);
	if (!ts && (s = get_stats()))
		s->storage_misses++;
	return ts;
}

static __always_inline struct rt_proc *get_proc(struct task_struct *t)
{
	__u32 tgid = t->tgid;
	struct rt_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct rt_proc init = {};
	struct rt_stats *s;

	if (p)
		return p;
	__builtin_memcpy(init.comm, t->group_leader->comm, sizeof(init.comm));
	if (bpf_map_update_elem(&procs, &tgid, &init, BPF_NOEXIST) && (s = get_stats()))
		s->map_full++;
	return bpf_map_lookup_elem(&procs, &tgid);
}

static __always_inline struct rt_cpu *get_cpu(__u32 cpu)
{
	return bpf_map_lookup_elem(&cpus, &cpu);
}

static __always_inline struct rt_event *event_reserve(struct task_struct *t, __u32 type)
{
	struct rt_event *e;
	struct rt_stats *s;

	if (!(rt_cfg.emit & (1u << type)))
		return NULL;
	if (type == RT_EV_ABORT && rt_cfg.stack)
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	else
		e = bpf_ringbuf_reserve(&events, offsetof(struct rt_event, stack), 0);
	if (!e) {
		s = get_stats();
		if (s)
			s->ringbuf_drops++;
		return NULL;
	}
	e->ts = bpf_ktime_get_ns();
	e->type = type;
	e->cpu = bpf_get_smp_processor_id();
	e->pid = t->tgid;
	e->tid = t->pid;
	__builtin_memcpy(e->comm, t->comm, sizeof(e->comm));
	e->a0 = e->a1 = e->a2 = e->a3 = 0;
	e->cause = e->marks = e->kmask = e->nstack = 0;
	return e;
}

struct vma_ctx {
	__u64 addr;
	__u64 dev, ino, off;
	int found;
};

static long vma_cb(struct task_struct *t, struct vm_area_struct *vma, void *data)
{
	struct vma_ctx *c = data;
	struct file *f = vma->vm_file;
	struct inode *ino;

	if (!f)
		return 0;
	ino = BPF_CORE_READ(f, f_inode);
	c->ino = BPF_CORE_READ(ino, i_ino);
	c->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	c->off = (vma->vm_pgoff << 12) + (c->addr - vma->vm_start);
	c->found = 1;
	return 0;
}

/* A new section entry: remember which file holds it and tell user space. */
static __always_inline void section_first_seen(struct task_struct *t, struct rt_section *sec,
					       __u64 start_ip)
{
	struct vma_ctx c = {.addr = start_ip};
	struct rt_notify *n;
	struct rt_stats *s = get_stats();

	bpf_find_vma(t, start_ip, vma_cb, &c, 0);
	if (c.found) {
		sec->dev = c.dev;
		sec->ino = c.ino;
		sec->file_off = c.off;
	} else if (s) {
		s->vma_misses++;
	}
	n = bpf_ringbuf_reserve(&notify, sizeof(*n), 0);
	if (!n) {
		if (s)
			s->notify_drops++;
		return;
	}
	n->type = RT_EV_SECTION;
	n->pid = t->tgid;
	n->start_ip = start_ip;
	n->dev = sec->dev;
	n->ino = sec->ino;
	n->file_off = sec->file_off;
	n->held = 0;
	n->pad = 0;
	bpf_ringbuf_submit(n, 0);
}

/* The section's entry in the map, created (and announced) on first sight. */
static __always_inline struct rt_section *section_get(struct task_struct *t, __u64 start_ip,
						      __u64 post_commit_offset, __u64 abort_ip)
{
	struct rt_section_key key = {.tgid = t->tgid, .start_ip = start_ip};
	struct rt_section *sec = bpf_map_lookup_elem(&sections, &key);
	struct rt_section init = {
	    .post_commit_offset = post_commit_offset,
	    .abort_ip = abort_ip,
	};

	if (sec)
		return sec;
	__builtin_memcpy(init.comm, t->group_leader->comm, sizeof(init.comm));
	if (bpf_map_update_elem(&sections, &key, &init, BPF_NOEXIST))
		return bpf_map_lookup_elem(&sections, &key);
	sec = bpf_map_lookup_elem(&sections, &key);
	if (sec)
		section_first_seen(t, sec, start_ip);
	return sec;
}

static __always_inline __u32 hist_slot(__u64 off, __u64 len)
{
	__u32 slot = 0;

	if (off >= len)
		return RT_HIST_SLOTS - 1;
	while (off && slot < RT_HIST_SLOTS - 2) {
		off >>= 1;
		slot++;
	}
	return slot;
}

/* Count one abort and send its event; full is false for the backup program (counted apart).
 * ts may be NULL: the cause is then unknown. */
static __always_inline void account_abort(void *ctx, struct task_struct *t, struct rt_task *ts,
					  __u64 regs_ip, __u64 start_ip, __u64 post_commit_offset,
					  __u64 abort_ip, bool full)
{
	__u32 cpu = bpf_get_smp_processor_id(), cause, marks = 0, pending = 0, kmask = 0;
	struct rt_section *sec;
	struct rt_stats *s;
	struct rt_proc *p;
	struct rt_cpu *c;
	struct rt_event *e;

	if (ts) {
		marks = ts->marks;
		pending = ts->pending | (ts->kmask & 7);
		kmask = ts->kmask;
		ts->marks = ts->pending = ts->kmask = 0;
	}
	if (marks & RT_MARK_SIGNAL)
		cause = RT_CAUSE_SIGNAL;
	else if (marks & RT_MARK_MIGRATE)
		cause = RT_CAUSE_MIGRATE;
	else if (marks & RT_MARK_PREEMPT)
		cause = RT_CAUSE_PREEMPT;
	else if (pending)
		cause = RT_CAUSE_DEFERRED;
	else
		cause = RT_CAUSE_UNKNOWN;
	if (!has_event_mask(t))
		kmask = kernel_events(t);

	if (ts)
		ts->fixups[ts->nfixups++ % RT_PENDING_FIXUPS] = abort_ip;
	sec = section_get(t, start_ip, post_commit_offset, abort_ip);
	if (sec) {
		if (cause < RT_NCAUSES)
			__sync_fetch_and_add(&sec->aborts[cause], 1);
		__sync_fetch_and_add(&sec->hist[hist_slot(regs_ip - start_ip, post_commit_offset)],
				     1);
		sec->last_regs_ip = regs_ip;
	}
	s = get_stats();
	if (s) {
		s->aborts++;
		if (cause < RT_NCAUSES)
			s->cause[cause]++;
		if (!sec)
			s->map_full++;
		if (!full)
			s->backup_aborts++;
	}
	p = get_proc(t);
	if (p)
		__sync_fetch_and_add(&p->aborts, 1);
	c = get_cpu(cpu);
	if (c)
		__sync_fetch_and_add(&c->aborts, 1);

	e = event_reserve(t, RT_EV_ABORT);
	if (!e)
		return;
	e->a0 = regs_ip;
	e->a1 = start_ip;
	e->a2 = post_commit_offset;
	e->a3 = abort_ip;
	e->cause = cause;
	e->marks = marks | pending << 8;
	e->kmask = kmask;
	if (rt_cfg.stack) {
		long n = bpf_get_stack(ctx, e->stack, sizeof(e->stack), BPF_F_USER_STACK);

		e->nstack = n > 0 ? n / sizeof(__u64) : 0;
	}
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/rseq_ip_fixup")
int BPF_PROG(rseq_ip_fixup, unsigned long regs_ip, unsigned long start_ip,
	     unsigned long post_commit_offset, unsigned long abort_ip)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct rt_task *ts;

	if (!match_task(t))
		return 0;
	/* Without the thread's storage the backup program cannot know this abort was counted:
	 * leave it to that one. */
	ts = task_state(t, true);
	if (!ts)
		return 0;
	ts->seen_regs_ip = regs_ip;
	ts->seen_start_ip = start_ip;
	account_abort(ctx, t, ts, regs_ip, start_ip, post_commit_offset, abort_ip, true);
	return 0;
}

/* Runs after rseq_ip_fixup on the same tracepoint (attached second): counts the abort, and
 * sends its event, when the kernel skipped that program for it. */
SEC("tp_btf/rseq_ip_fixup")
int BPF_PROG(rseq_ip_fixup_backup, unsigned long regs_ip, unsigned long start_ip,
	     unsigned long post_commit_offset, unsigned long abort_ip)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct rt_task *ts = task_state(t, false);

	if (ts && ts->seen_regs_ip == regs_ip && ts->seen_start_ip == start_ip) {
		ts->seen_regs_ip = ts->seen_start_ip = 0;
		return 0;
	}
	if (!match_task(t))
		return 0;
	ts = task_state(t, true);
	account_abort(ctx, t, ts, regs_ip, start_ip, post_commit_offset, abort_ip, false);
	return 0;
}

/* Whether the thread has a kernel abort to abort_ip pending, which this entry then ends. */
static __always_inline bool take_fixup(struct rt_task *ts, __u64 abort_ip)
{
	for (int i = 0; i < RT_PENDING_FIXUPS; i++) {
		if (ts->fixups[i] == abort_ip) {
			ts->fixups[i] = 0;
			return true;
		}
	}
	return false;
}

/* An entry into an abort handler (a uprobe at abort_ip, its section in the cookie): after
 * this thread's rseq_ip_fixup to that handler it is the kernel's abort; any other entry came
 * from a branch in user space (a library that found cpu_id stale), which the kernel never
 * sees. */
static __always_inline void handler_entry(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 abort_ip = PT_REGS_IP(ctx), cookie = bpf_get_attach_cookie(ctx);
	__u64 start_ip = abort_ip - (cookie >> 32), pco = (__u32)cookie;
	struct rt_section *sec;
	struct rt_stats *s;
	struct rt_task *ts;
	struct rt_event *e;
	bool kernel;

	if (!match_task(t))
		return;
	ts = task_state(t, false);
	kernel = ts && take_fixup(ts, abort_ip);
	sec = section_get(t, start_ip, pco, abort_ip);
	if (sec)
		__sync_fetch_and_add(kernel ? &sec->entries_kernel : &sec->entries_user, 1);
	s = get_stats();
	if (s) {
		s->handler_entries++;
		if (!kernel)
			s->user_aborts++;
		if (!sec)
			s->map_full++;
	}
	if (kernel)
		return;
	e = event_reserve(t, RT_EV_USER_ABORT);
	if (!e)
		return;
	e->a0 = abort_ip;
	e->a1 = start_ip;
	e->a2 = pco;
	e->a3 = abort_ip;
	bpf_ringbuf_submit(e, 0);
}

/* Since 6.13 a uprobe program's frame is a per-CPU stack of its own, while uprobes run it
 * preemptible (only migration disabled): a thread preempted inside it and another one
 * entering it on that CPU share the frame, and the first goes on with the second's locals,
 * its task among them (a handler entry of another process, past the -p filter). So this
 * object is built twice: with RT_NOPREEMPT the handler runs unpreempted through the kfuncs
 * of 6.10+ (the tracer loads that build where they exist); without, it runs as is, and the
 * object names no kfunc, which libbpf would look up in the modules' BTF on older kernels
 * (needing CAP_SYS_ADMIN). */
#ifdef RT_NOPREEMPT
extern void bpf_preempt_disable(void) __ksym;
extern void bpf_preempt_enable(void) __ksym;
#endif

SEC("uprobe")
int abort_handler(struct pt_regs *ctx)
{
#ifdef RT_NOPREEMPT
	bpf_preempt_disable();
#endif
	handler_entry(ctx);
#ifdef RT_NOPREEMPT
	bpf_preempt_enable();
#endif
	return 0;
}

SEC("tp_btf/rseq_update")
int BPF_PROG(rseq_update, struct task_struct *t)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct rt_stats *s;
	struct rt_task *ts;
	struct rt_proc *p;
	struct rt_cpu *c;
	struct rt_event *e;

	if (!match_task(t))
		return 0;
	/* The end of a notify-resume pass: marks older than this did not abort anything. */
	if (event_mask_era(t)) {
		ts = task_state(t, false);
		if (ts)
			ts->marks = 0;
	}
	s = get_stats();
	if (s)
		s->updates++;
	p = get_proc(t);
	if (p)
		__sync_fetch_and_add(&p->updates, 1);
	c = get_cpu(cpu);
	if (c)
		__sync_fetch_and_add(&c->updates, 1);

	e = event_reserve(t, RT_EV_UPDATE);
	if (!e)
		return 0;
	e->a0 = cpu;
	if (bpf_core_field_exists(struct trace_event_raw_rseq_update, node_id)) {
		struct rseq *r = task_rseq(t);
		__u32 ids[2] = {};

		/* The kernel has just written them into the thread's rseq area. */
		bpf_probe_read_user(ids, sizeof(ids), &r->node_id);
		e->a1 = ids[0];
		e->a2 = ids[1];
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct rt_task *ts;
	__u32 m;

	if (!task_rseq(next) || !match_task(next))
		return 0;
	ts = task_state(next, true);
	if (!ts)
		return 0;
	m = ts->migrated ? RT_MARK_MIGRATE | RT_MARK_PREEMPT : RT_MARK_PREEMPT;
	/* Without the kernel's mask (6.19 style) there is no rseq_update after every return to
	 * user space to end the marks: the latest switch-in replaces them. */
	if (event_mask_era(next))
		ts->marks |= m;
	else
		ts->marks = m;
	ts->pending |= m;
	ts->migrated = 0;
	if (has_event_mask(next))
		ts->kmask = BPF_CORE_READ((struct task_struct___pre619 *)next, rseq_event_mask);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(sched_migrate_task, struct task_struct *t, int dest_cpu)
{
	__u32 from = BPF_CORE_READ(t, thread_info.cpu);
	struct rt_stats *s;
	struct rt_task *ts;
	struct rt_proc *p;
	struct rt_cpu *c;
	struct rt_event *e;

	if (!task_rseq(t) || !match_task(t))
		return 0;
	ts = task_state(t, true);
	if (ts)
		ts->migrated = 1;
	s = get_stats();
	if (s)
		s->migrations++;
	p = get_proc(t);
	if (p)
		__sync_fetch_and_add(&p->migrations, 1);
	c = get_cpu(dest_cpu);
	if (c)
		__sync_fetch_and_add(&c->migrations_in, 1);
	e = event_reserve(t, RT_EV_MIGRATE);
	if (!e)
		return 0;
	e->a0 = from;
	e->a1 = dest_cpu;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/signal_deliver")
int BPF_PROG(signal_deliver, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct rt_stats *s;
	struct rt_task *ts;
	struct rt_proc *p;
	struct rt_event *e;

	if (!task_rseq(t) || !match_task(t))
		return 0;
	ts = task_state(t, true);
	if (ts) {
		ts->marks |= RT_MARK_SIGNAL;
		ts->pending |= RT_MARK_SIGNAL;
	}
	s = get_stats();
	if (s)
		s->signals++;
	p = get_proc(t);
	if (p)
		__sync_fetch_and_add(&p->signals, 1);
	e = event_reserve(t, RT_EV_SIGNAL);
	if (!e)
		return 0;
	e->a0 = sig;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit)
{
	__u32 tid = bpf_get_current_task_btf()->pid;

	bpf_map_delete_elem(&tasks, &tid);
	return 0;
}

/* Tell user space that process t has new modules to probe (type RT_EV_EXEC or RT_EV_LOADER)
 * and, with rt_cfg.hold, stop it until user space has probed them and sends SIGCONT. The
 * signal is sent from the process' own context before it returns to user space, so it stops
 * before its next instruction; it is sent only once the notice is reserved (a process is
 * never stopped that user space would not know to continue), and before the notice is
 * submitted (user space never continues it before it is stopped). */
static __always_inline void announce_modules(struct task_struct *t, __u32 type)
{
	struct rt_stats *s = get_stats();
	struct rt_notify *n;

	n = bpf_ringbuf_reserve(&notify, sizeof(*n), 0);
	if (!n) {
		if (s) {
			s->notify_drops++;
			if (rt_cfg.hold)
				s->hold_misses++;
		}
		return;
	}
	__builtin_memset(n, 0, sizeof(*n));
	n->type = type;
	n->pid = t->tgid;
	if (!rt_cfg.hold) {
		bpf_ringbuf_submit(n, 0);
		return;
	}
	__sync_fetch_and_add(&rt_hold_inflight, 1);
	if (!rt_unheld) {
		n->held = !bpf_send_signal(RT_SIGSTOP);
		if (s)
			__sync_fetch_and_add(n->held ? &s->holds : &s->hold_misses, 1);
	}
	bpf_ringbuf_submit(n, 0);
	__sync_fetch_and_add(&rt_hold_inflight, -1);
}

/* A process counted before it called execve (the command of `stat`, counted from its fork)
 * is named after what it runs now; its new program's handlers are to be probed. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *t)
{
	__u32 tgid = t->tgid;
	struct rt_proc *p = bpf_map_lookup_elem(&procs, &tgid);

	if (p)
		__builtin_memcpy(p->comm, t->comm, sizeof(p->comm));
	if (rt_cfg.uprobes && match_task(t))
		announce_modules(t, RT_EV_EXEC);
	return 0;
}

/* The dynamic loader's _dl_debug_state(), which it calls before and after it maps the
 * libraries of a new program or of dlopen(), before any of their code runs: the new
 * libraries' handlers are to be probed (attached only with rt_cfg.hold). Before, its
 * r_debug.r_state is RT_ADD (or RT_DELETE before an unmapping): nothing new is mapped yet, and
 * the process is not held. The cookie is the distance from the probe to r_state, 0 when not
 * known (every call is then announced); a namespace of dlmopen() has an r_debug of its own,
 * and the default one, still RT_CONSISTENT, announces its calls too. */
SEC("uprobe")
int loader_state(struct pt_regs *ctx)
{
	struct task_struct *t;
	__s32 state = 0;
	__u64 off;

#ifdef RT_NOPREEMPT
	bpf_preempt_disable();
#endif
	off = bpf_get_attach_cookie(ctx);
	if (off)
		bpf_probe_read_user(&state, sizeof(state), (void *)(PT_REGS_IP(ctx) + off));
	t = bpf_get_current_task_btf();
	if (!state && match_task(t))
		announce_modules(t, RT_EV_LOADER);
#ifdef RT_NOPREEMPT
	bpf_preempt_enable();
#endif
	return 0;
}

/* `-- CMD`: the command's children are traced too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (!rt_cfg.follow_forks || ptgid == ctgid || !bpf_map_lookup_elem(&filter_pids, &ptgid))
		return 0;
	bpf_map_update_elem(&filter_pids, &ctgid, &one, BPF_ANY);
	return 0;
}
