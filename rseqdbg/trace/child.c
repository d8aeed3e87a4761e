// SPDX-License-Identifier: GPL-2.0-only
/* The command trace and stat run, and the signals that end a trace. */
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tracer.h"

volatile int rd_tracer_stop;

int rd_wait_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_ERROR;
}

static void on_stop(int sig)
{
	rd_tracer_stop = sig;
}

static void on_child(int sig)
{
}

void rd_tracer_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop};

	/* No SA_RESTART: the signal ends the ring buffer's epoll_wait at once. SIGCHLD too, so
	 * the end of the command is seen without waiting for the poll timeout. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
}

/* The file execvp() would run for name, in buf; false when there is none. */
static bool command_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(name, '/'))
		return snprintf(buf, len, "%s", name) < (int)len;
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if (snprintf(buf, len, "%.*s/%s", (int)(end - p), end > p ? p : ".", name) <
			(int)len &&
		    !access(buf, X_OK))
			return true;
	}
	return false;
}

int rd_tracer_start(struct rd_tracer_opts *o, const struct rd_features *f, char **argv,
		    struct rd_spawn *child, struct rd_tracer **t)
{
	struct rd_early_loader *el = NULL;
	bool known = false;
	char path[4096];
	int ret, st;

	*t = NULL;
	if (argv) {
		ret = rd_spawn(argv, child);
		if (ret) {
			rd_seterr("cannot start %s: %s", argv[0], strerror(-ret));
			return ret;
		}
		o->follow_forks = true;
		known = command_path(argv[0], path, sizeof(path));
		if (known && !o->no_uprobes)
			el = rd_early_loader_start(path);
	}
	ret = rd_tracer_open(o, f, t);
	rd_tracer_early_loader_finish(ret ? NULL : *t, el);
	if (!ret && argv)
		ret = rd_tracer_add_pid(*t, child->pid);
	if (!ret)
		ret = rd_tracer_attach(*t);
	if (ret) {
		if (argv)
			rd_spawn_abort(child);
		return ret;
	}
	rd_tracer_signals();
	if (!argv) {
		/* The abort handlers of the modules they map get their uprobes now, not at the
		 * first kernel abort: a section may only ever branch to its handler. */
		for (size_t i = 0; i < o->npids; i++)
			rd_tracer_learn_pid(*t, o->pids[i]);
		for (size_t i = 0; i < o->ntids; i++)
			rd_tracer_learn_pid(*t, o->tids[i]);
		return 0;
	}
	/* Its abort handlers get their uprobes before its first instruction runs. So do those of
	 * every program it or its children execute, and of every library their loader maps:
	 * the BPF side stops each such process (SIGSTOP from its own context, at the exec and at
	 * the loader's _dl_debug_state) and the notify handler continues it once the new files
	 * are probed. Uprobes are per file, so probing the file is enough. Not ptrace: it would
	 * stop every clone and fork of the workload, and forbid a debugger under the command. */
	if (known)
		rd_tracer_learn_file(*t, path);
	ret = rd_spawn_release(child);
	if (ret) {
		waitpid(child->pid, &st, 0);
		rd_seterr("cannot run %s: %s", argv[0], strerror(-ret));
		return 1;
	}
	rd_tracer_learn_pid(*t, child->pid);
	return 0;
}
