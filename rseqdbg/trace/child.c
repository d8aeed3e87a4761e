// SPDX-License-Identifier: GPL-2.0-only
/* The command trace and stat run, and the signals that end a trace. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tracer.h"

volatile int rd_tracer_stop;

int rd_child_spawn(char **argv, struct rd_child *c)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return err;
	}
	if (!pid) {
		char b;
		int e;

		close(go[1]);
		close(ex[0]);
		/* Wait until the tracer has our pid in its filter and is attached. */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = ex[0];
	return 0;
}

int rd_child_release(struct rd_child *c)
{
	char b = 1;
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, &b, 1) != 1)
		e = errno;
	close(c->go_fd);
	c->go_fd = -1;
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

void rd_child_abort(struct rd_child *c)
{
	int st;

	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
	if (c->pid > 0)
		waitpid(c->pid, &st, 0); /* it exits when the go pipe closes */
	c->pid = 0;
}

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
	struct sigaction sa = { .sa_handler = on_stop };

	/* No SA_RESTART: the signal ends the ring buffer's epoll_wait at once. SIGCHLD too, so
	 * the end of the command is seen without waiting for the poll timeout. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
}

int rd_tracer_start(struct rd_tracer_opts *o, const struct rd_features *f, char **argv,
		    struct rd_child *child, struct rd_tracer **t)
{
	int ret, st;

	*t = NULL;
	if (argv) {
		ret = rd_child_spawn(argv, child);
		if (ret) {
			rd_seterr("cannot start %s: %s", argv[0], strerror(-ret));
			return ret;
		}
		o->follow_forks = true;
	}
	ret = rd_tracer_open(o, f, t);
	if (!ret && argv)
		ret = rd_tracer_add_pid(*t, child->pid);
	if (!ret)
		ret = rd_tracer_attach(*t);
	if (ret) {
		if (argv)
			rd_child_abort(child);
		return ret;
	}
	rd_tracer_signals();
	if (!argv)
		return 0;
	ret = rd_child_release(child);
	if (ret) {
		waitpid(child->pid, &st, 0);
		rd_seterr("cannot run %s: %s", argv[0], strerror(-ret));
		return 1;
	}
	rd_tracer_learn_pid(*t, child->pid);
	return 0;
}
