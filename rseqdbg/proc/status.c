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
