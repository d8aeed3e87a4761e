// SPDX-License-Identifier: GPL-2.0-only
/* What the running kernel offers the tracer, read from its BTF, and who may load it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "features.h"

#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39
#define CAP_SYS_ADMIN_BIT 21

static bool btf_has_type(const struct btf *btf, const char *name, int kind)
{
	return btf__find_by_name_kind(btf, name, kind) > 0;
}

/* The member of struct sname called member, NULL when either is absent. */
static const struct btf_member *btf_find_member(const struct btf *btf, const char *sname,
						const char *member)
{
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;

	if (id <= 0)
		return NULL;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (n && !strcmp(n, member))
			return m;
	}
	return NULL;
}

static bool btf_has_member(const struct btf *btf, const char *sname, const char *member)
{
	return btf_find_member(btf, sname, member) != NULL;
}

/* The kind of a struct member's type (typedefs and qualifiers skipped), 0 when absent. */
static int btf_member_kind(const struct btf *btf, const char *sname, const char *member)
{
	const struct btf_member *m = btf_find_member(btf, sname, member);
	const struct btf_type *mt = m ? btf__type_by_id(btf, m->type) : NULL;

	while (mt && (btf_is_typedef(mt) || btf_is_mod(mt)))
		mt = btf__type_by_id(btf, mt->type);
	return mt ? btf_kind(mt) : 0;
}

static bool btf_has_enumval(const struct btf *btf, const char *ename, const char *val)
{
	int id = btf__find_by_name_kind(btf, ename, BTF_KIND_ENUM);
	const struct btf_type *t;
	const struct btf_enum *e;

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++, e++) {
		const char *n = btf__name_by_offset(btf, e->name_off);

		if (n && !strcmp(n, val))
			return true;
	}
	return false;
}

int rd_features_probe(struct rd_features *f)
{
	struct btf *btf;
	long err;

	memset(f, 0, sizeof(*f));
	btf = btf__load_vmlinux_btf();
	err = libbpf_get_error(btf);
	if (err) {
		snprintf(f->btf_err, sizeof(f->btf_err), "%s",
			 access("/sys/kernel/btf/vmlinux", R_OK)
			     ? "/sys/kernel/btf/vmlinux is absent (kernel built without "
			       "CONFIG_DEBUG_INFO_BTF)"
			     : strerror((int)-err));
		return 0;
	}
	f->btf = true;
	f->tp_ip_fixup = btf_has_type(btf, "btf_trace_rseq_ip_fixup", BTF_KIND_TYPEDEF);
	f->tp_update = btf_has_type(btf, "btf_trace_rseq_update", BTF_KIND_TYPEDEF);
	f->tp_migrate = btf_has_type(btf, "btf_trace_sched_migrate_task", BTF_KIND_TYPEDEF);
	f->tp_switch = btf_has_type(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	f->tp_signal = btf_has_type(btf, "btf_trace_signal_deliver", BTF_KIND_TYPEDEF);
	f->tp_fork = btf_has_type(btf, "btf_trace_sched_process_fork", BTF_KIND_TYPEDEF);
	f->event_mask = btf_has_member(btf, "task_struct", "rseq_event_mask");
	f->rseq_ptr = btf_member_kind(btf, "task_struct", "rseq") == BTF_KIND_PTR;
	f->rseq_data = btf_member_kind(btf, "task_struct", "rseq") == BTF_KIND_STRUCT &&
		       btf_has_member(btf, "rseq_data", "usrptr");
	f->node_mmcid = btf_has_member(btf, "trace_event_raw_rseq_update", "node_id");
	f->find_vma = btf_has_enumval(btf, "bpf_func_id", "BPF_FUNC_find_vma");
	f->ringbuf = btf_has_enumval(btf, "bpf_map_type", "BPF_MAP_TYPE_RINGBUF");
	f->preempt = btf_has_type(btf, "bpf_preempt_disable", BTF_KIND_FUNC) &&
		     btf_has_type(btf, "bpf_preempt_enable", BTF_KIND_FUNC);
	f->uprobe_multi = btf_has_enumval(btf, "bpf_attach_type", "BPF_TRACE_UPROBE_MULTI");
	btf__free(btf);
	return 0;
}

const char *rd_features_missing(const struct rd_features *f)
{
	if (!f->btf)
		return "this kernel has no BTF (/sys/kernel/btf/vmlinux), which the tracer's "
		       "tp_btf programs and CO-RE need: build it with CONFIG_DEBUG_INFO_BTF=y";
	if (!f->tp_ip_fixup || !f->tp_update)
		return "this kernel has no rseq tracepoints (rseq:rseq_ip_fixup, rseq:rseq_update; "
		       "Linux 4.18+ with CONFIG_RSEQ)";
	if (!f->ringbuf)
		return "this kernel has no BPF ring buffer (Linux 5.8+)";
	if (!f->find_vma)
		return "this kernel has no bpf_find_vma helper (Linux 5.17+)";
	if (!f->tp_switch || !f->tp_migrate)
		return "this kernel lacks sched:sched_switch or sched:sched_migrate_task";
	if (!f->rseq_ptr && !f->rseq_data)
		return "this kernel's task_struct has neither rseq layout the tracer reads (a "
		       "struct rseq pointer up to 6.18, a struct rseq_data since 6.19)";
	return NULL;
}

enum rd_trace_mode rd_features_mode(const struct rd_features *f)
{
	return f->event_mask ? RD_MODE_EVENT_MASK : RD_MODE_NO_MASK;
}

const char *rd_mode_name(enum rd_trace_mode m)
{
	return m == RD_MODE_EVENT_MASK ? "event-mask" : "no-event-mask";
}

static const char *mode_desc(enum rd_trace_mode m)
{
	return m == RD_MODE_EVENT_MASK
		   ? "causes from scheduler and signal events, cleared at every rseq_update; "
		     "an abort with none recorded is a membarrier RSEQ IPI or similar"
		   : "no rseq_event_mask (6.19+ rseq): causes from the latest scheduler or "
		     "signal event before the abort; a membarrier RSEQ IPI counts as the "
		     "preemption before it";
}

void rd_features_print(const struct rd_features *f, const char *load_err)
{
	const char *missing = rd_features_missing(f);
	static const struct {
		const char *name;
		size_t off;
		const char *what;
	} items[] = {
	    {"btf", offsetof(struct rd_features, btf), "kernel BTF (/sys/kernel/btf/vmlinux)"},
	    {"rseq_ip_fixup", offsetof(struct rd_features, tp_ip_fixup),
	     "tracepoint rseq:rseq_ip_fixup (aborts)"},
	    {"rseq_update", offsetof(struct rd_features, tp_update),
	     "tracepoint rseq:rseq_update (cpu_id updates)"},
	    {"sched_migrate_task", offsetof(struct rd_features, tp_migrate),
	     "tracepoint sched:sched_migrate_task (migrations)"},
	    {"sched_switch", offsetof(struct rd_features, tp_switch),
	     "tracepoint sched:sched_switch (preemption causes)"},
	    {"signal_deliver", offsetof(struct rd_features, tp_signal),
	     "tracepoint signal:signal_deliver (signal causes)"},
	    {"sched_process_fork", offsetof(struct rd_features, tp_fork),
	     "tracepoint sched:sched_process_fork (following children)"},
	    {"rseq_event_mask", offsetof(struct rd_features, event_mask),
	     "task_struct.rseq_event_mask (exact causes; up to 6.18)"},
	    {"rseq_pointer", offsetof(struct rd_features, rseq_ptr),
	     "task_struct.rseq: pointer to the area (up to 6.18)"},
	    {"rseq_data", offsetof(struct rd_features, rseq_data),
	     "task_struct.rseq: struct rseq_data with event bytes (6.19+)"},
	    {"node_id_mm_cid", offsetof(struct rd_features, node_mmcid),
	     "rseq_update node_id and mm_cid (6.3+)"},
	    {"ringbuf", offsetof(struct rd_features, ringbuf), "BPF ring buffer (5.8+)"},
	    {"find_vma", offsetof(struct rd_features, find_vma),
	     "bpf_find_vma (5.17+): section files resolved in the kernel"},
	    {"preempt_kfuncs", offsetof(struct rd_features, preempt),
	     "bpf_preempt_disable (6.10+): handler uprobes run unpreempted"},
	    {"uprobe_multi", offsetof(struct rd_features, uprobe_multi),
	     "multi-uprobe links (6.6+): one link, and one detach, per probed file"},
	};
	enum rd_trace_mode m = rd_features_mode(f);

	if (rd.json) {
		jw_obj_open(rd.jw);
		jw_key(rd.jw, "features");
		jw_obj_open(rd.jw);
		for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
			jw_kbool(rd.jw, items[i].name,
				 *(const bool *)((const char *)f + items[i].off));
		jw_obj_close(rd.jw);
		if (!missing)
			missing = load_err;
		jw_kbool(rd.jw, "loaded", !load_err);
		jw_kbool(rd.jw, "supported", !missing);
		jw_kstr(rd.jw, "missing", missing);
		jw_kstr(rd.jw, "mode", missing ? NULL : rd_mode_name(m));
		jw_kstr(rd.jw, "mode_description", missing ? NULL : mode_desc(m));
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
		return;
	}
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		printf("%-4s %-20s %s\n",
		       *(const bool *)((const char *)f + items[i].off) ? "yes" : "no",
		       items[i].name, items[i].what);
	if (!f->btf)
		printf("BTF: %s\n", f->btf_err);
	if (!missing)
		missing = load_err;
	printf("%-4s %-20s %s\n", load_err ? "no" : "yes", "programs_load",
	       "the tracer's BPF programs load and pass the verifier");
	if (missing)
		printf("mode: none: %s\n", missing);
	else
		printf("mode: %s: %s\n", rd_mode_name(m), mode_desc(m));
}

const char *rd_tracer_privilege_missing(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "CapEff: %llx", &eff) == 1)
				break;
		fclose(f);
	}
	if ((eff & (1ULL << CAP_BPF_BIT)) && (eff & (1ULL << CAP_PERFMON_BIT)))
		return NULL;
	if (eff & (1ULL << CAP_SYS_ADMIN_BIT))
		return NULL;
	return "loading BPF tracing programs needs root, or CAP_BPF and CAP_PERFMON";
}

/* --- lifecycle ------------------------------------------------------------ */
