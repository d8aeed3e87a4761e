/* SPDX-License-Identifier: GPL-2.0-only */
/* What the running kernel offers the tracer, read from its BTF, and the mode that follows. */
#ifndef RSEQDBG_TRACE_FEATURES_H
#define RSEQDBG_TRACE_FEATURES_H

#include <stdbool.h>

/* What this kernel offers, read from its BTF. */
struct rd_features {
	bool btf;	   /* /sys/kernel/btf/vmlinux loads */
	char btf_err[128]; /* why not */
	bool tp_ip_fixup;  /* rseq:rseq_ip_fixup */
	bool tp_update;	   /* rseq:rseq_update */
	bool tp_migrate;   /* sched:sched_migrate_task */
	bool tp_switch;	   /* sched:sched_switch */
	bool tp_signal;	   /* signal:signal_deliver */
	bool tp_fork;	   /* sched:sched_process_fork */
	bool event_mask;   /* task_struct.rseq_event_mask (kernels up to 6.18) */
	bool rseq_ptr;	   /* task_struct.rseq is a pointer to the area (up to 6.18) */
	bool rseq_data;	   /* task_struct.rseq is a struct rseq_data (6.19+) */
	bool node_mmcid;   /* rseq_update carries node_id and mm_cid (6.3+) */
	bool find_vma;	   /* bpf_find_vma helper (5.17+) */
	bool ringbuf;	   /* BPF_MAP_TYPE_RINGBUF (5.8+) */
	bool preempt;	   /* kfuncs bpf_preempt_disable and _enable (6.10+) */
	bool uprobe_multi; /* BPF links of many uprobes on one file (6.6+) */
};

enum rd_trace_mode {
	RD_MODE_EVENT_MASK, /* causes exact: marks are cleared at every rseq_update */
	RD_MODE_NO_MASK,    /* 6.19 style: causes inferred from the last scheduler/signal event */
};

int rd_features_probe(struct rd_features *f);
/* NULL when the kernel can run the tracer, else what is missing (static string). */
const char *rd_features_missing(const struct rd_features *f);
enum rd_trace_mode rd_features_mode(const struct rd_features *f);
const char *rd_mode_name(enum rd_trace_mode m);
/* Print the features, whether the programs loaded (load_err NULL) and the mode in use
 * (plain or JSON). */
void rd_features_print(const struct rd_features *f, const char *load_err);

/* NULL when this process may load and attach the tracer, else the one-line requirement. */
const char *rd_tracer_privilege_missing(void);

#endif
