/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel types rseqtrace.bpf.c uses, and only those, written by hand so that the BPF
 * object does not depend on the kernel of the build machine. Every kernel struct carries
 * preserve_access_index: libbpf relocates each field access against the BTF of the kernel
 * the object is loaded on, so only the names and kinds below must exist there, not these
 * offsets. Layouts that changed between kernels are "flavours" (name___suffix), each
 * guarded by bpf_core_field_exists() or bpf_core_type_exists() before use.
 */
#ifndef RSEQTRACE_VMLINUX_H
#define RSEQTRACE_VMLINUX_H
/* Kernel names, as in bpftool's vmlinux.h: bpf_tracing.h then reads x86's pt_regs.ip. */
#define __VMLINUX_H__

typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef short __s16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef _Bool bool;
enum { false = 0, true = 1 };
typedef int pid_t;
typedef __u32 dev_t;

/* uapi/linux/bpf.h: the values are ABI. */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
	BPF_F_LOCK = 4,
};

enum {
	BPF_F_NO_PREALLOC = 1,
};

enum {
	BPF_F_SKIP_FIELD_MASK = 255,
	BPF_F_USER_STACK = 256,
};

/* uapi/linux/rseq.h: the thread's registered area (ABI). */
struct rseq {
	__u32 cpu_id_start;
	__u32 cpu_id;
	__u64 rseq_cs;
	__u32 flags;
	__u32 node_id;
	__u32 mm_cid;
} __attribute__((preserve_access_index));

/* Kernel types, read through CO-RE. */
struct thread_info {
	__u32 cpu;
} __attribute__((preserve_access_index));

struct kernfs_node {
	__u64 id;
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
	struct cgroup_subsys_state *parent;
} __attribute__((preserve_access_index));

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct css_set {
	struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

struct super_block {
	dev_t s_dev;
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_pgoff;
	struct file *vm_file;
} __attribute__((preserve_access_index));

/*
 * A uprobe program's context: the user registers at the probed instruction, laid out per
 * architecture. bpf_tracing.h's PT_REGS_IP() reads the member named here: x86's kernel
 * name (this header stands for the kernel's, see __VMLINUX_H__ above), arm64's user_pt_regs,
 * the head of its struct pt_regs.
 */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long ip;
} __attribute__((preserve_access_index));
#elif defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));

struct pt_regs {
	struct user_pt_regs user_regs;
} __attribute__((preserve_access_index));
#else
#error "bpf/vmlinux.h: define __TARGET_ARCH_x86 or __TARGET_ARCH_arm64"
#endif

struct task_struct {
	struct thread_info thread_info;
	pid_t pid;
	pid_t tgid;
	struct task_struct *group_leader;
	char comm[16];
	struct css_set *cgroups;
} __attribute__((preserve_access_index));

/*
 * task_struct's rseq fields up to 6.18: a pointer to the registered area, and the mask of
 * events (bit 0 preempt, 1 signal, 2 migrate) pending since the last abort check.
 */
struct task_struct___pre619 {
	struct rseq *rseq;
	u32 rseq_event_mask;
} __attribute__((preserve_access_index));

/*
 * Since 6.19 task_struct.rseq is a struct rseq_data. Its event bytes are set on the way
 * into the kernel and cleared on the way out to user space; the kernel's anonymous unions
 * around them are transparent to CO-RE, which matches members by name.
 */
struct rseq_event___v619 {
	u8 sched_switch; /* scheduled since user space was left (or a membarrier IPI) */
	u8 ids_changed;	 /* cpu_id or mm_cid to be rewritten: a migration or a new cid */
	u8 user_irq;	 /* the kernel was entered by an interrupt from user space */
	u8 has_rseq;
} __attribute__((preserve_access_index));

struct rseq_data___v619 {
	struct rseq *usrptr;
	u32 len;
	u32 sig;
	struct rseq_event___v619 event;
} __attribute__((preserve_access_index));

struct task_struct___v619 {
	struct rseq_data___v619 rseq;
} __attribute__((preserve_access_index));

/* Only its existence is read: node_id and mm_cid came with 6.3. */
struct trace_event_raw_rseq_update {
	u32 node_id;
} __attribute__((preserve_access_index));

/* Tracepoint arguments the programs receive but do not read. */
struct kernel_siginfo;
struct k_sigaction;

#endif
