// SPDX-License-Identifier: GPL-2.0-only
/* The filter options of the commands that keep the tracer attached (trace, exporter). */
#include <errno.h>
#include <string.h>

#include "common.h"
#include "tracer.h"

static int add_pid_filter(struct rd_tracer_opts *o, int opt, const char *s)
{
	bool pid = opt == 'p';
	size_t *n = pid ? &o->npids : &o->ntids;

	int err;

	if (*n >= RD_MAX_FILTER) {
		rd_seterr("at most %d --%s options", RD_MAX_FILTER, pid ? "pid" : "tid");
		return -E2BIG;
	}
	err = rd_parse_pid(pid ? "--pid" : "--tid", pid ? "process" : "thread", s,
			   pid ? &o->pids[*n] : &o->tids[*n]);
	if (err)
		return err;
	(*n)++;
	return 0;
}

int rd_filter_opt(struct rd_tracer_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case 'p':
	case 't':
		return add_pid_filter(o, opt, arg);
	case RD_FOPT_COMM:
		if (!*arg || strlen(arg) >= RT_COMM_LEN) {
			rd_seterr("--comm: '%s' is not a command name (1 to %d bytes)", arg,
				  RT_COMM_LEN - 1);
			return -EINVAL;
		}
		o->comm = arg;
		return 0;
	case RD_FOPT_CGROUP:
		o->cgroup = arg;
		return 0;
	}
	rd_seterr("option %d is not a filter", opt);
	return -EINVAL;
}

const char *rd_tracer_unavailable(const struct rd_features *f)
{
	const char *missing = rd_tracer_privilege_missing();

	return missing ? missing : rd_features_missing(f);
}
