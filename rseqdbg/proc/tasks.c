// SPDX-License-Identifier: GPL-2.0-only
/* The threads of a live process, as /proc/PID/task lists them. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "proc/status.h"
#include "proc/tasks.h"

int rd_proc_threads(pid_t pid, pid_t **tids, size_t *n)
{
	pid_t *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	char path[64];
	int ret = 0;
	DIR *d;

	*tids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long long tid;

		if (!rd_parse_u64(de->d_name, &tid) || tid == 0 || tid > INT32_MAX)
			continue;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			pid_t *nv = realloc(v, ncap * sizeof(*v));

			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		v[(*n)++] = (pid_t)tid;
	}
	closedir(d);
	if (ret) {
		free(v);
		*n = 0;
		return ret;
	}
	*tids = v;
	return 0;
}

static bool exited(pid_t pid, pid_t tid)
{
	struct rd_proc_status ps;

	return rd_proc_status(pid, tid, &ps) < 0 || ps.state == 'Z' || ps.state == 'X';
}

int rd_proc_live_thread(pid_t pid, pid_t *tid)
{
	pid_t *tids;
	size_t n;
	int ret;

	*tid = 0;
	if (!exited(pid, 0)) {
		*tid = pid;
		return 0;
	}
	ret = rd_proc_threads(pid, &tids, &n);
	if (ret < 0)
		return ret;
	ret = -ESRCH;
	for (size_t i = 0; i < n; i++) {
		if (tids[i] != pid && !exited(pid, tids[i])) {
			*tid = tids[i];
			ret = 0;
			break;
		}
	}
	free(tids);
	return ret;
}
