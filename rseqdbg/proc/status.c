// SPDX-License-Identifier: GPL-2.0-only
/* What /proc says of a process or a thread: its state, parent, tracer, pending signals. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proc/status.h"

int rd_proc_status(pid_t pid, pid_t tid, struct rd_proc_status *ps)
{
	char path[64], line[128];
	unsigned long long mask;
	FILE *f;
	int v;

	memset(ps, 0, sizeof(*ps));
	ps->state = '?';
	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "State: %c", &ps->state) == 1)
			continue;
		if (sscanf(line, "PPid: %d", &v) == 1)
			ps->ppid = v;
		else if (sscanf(line, "TracerPid: %d", &v) == 1)
			ps->tracer = v;
		else if (sscanf(line, "SigPnd: %llx", &mask) == 1)
			ps->sigpnd = mask;
		else if (!strncmp(line, "VmSize:", 7))
			ps->user_mm = true;
	}
	fclose(f);
	return 0;
}

/* The state letter of /proc/PID/task/TID/stat: it follows the command name (field 2), which
 * may hold spaces and parentheses, so it is found after the last ')'. */
static int task_state(pid_t pid, pid_t tid, char *state)
{
	char path[64], buf[512], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	*state = p && p[1] == ' ' && p[2] ? p[2] : '?';
	return 0;
}

int rd_proc_run_ns(pid_t pid, pid_t tid, uint64_t *ns, char *state)
{
	char path[64];
	unsigned long long v;
	int ok;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*ns = v;
	return task_state(pid, tid, state);
}

void rd_proc_name(pid_t pid, char *buf, size_t len)
{
	char path[64], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(buf, len, comm[0] ? "%d (%s)" : "%d", (int)pid, comm);
}
