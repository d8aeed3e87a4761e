// SPDX-License-Identifier: GPL-2.0-only
/* The command a tracer runs, held before exec until the tracer is ready. */
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/spawn.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int rd_spawn(char **argv, struct rd_spawn *c)
{
	int go[2], ex[2], err;

	c->pid = 0;
	c->go_fd = c->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	c->pid = fork();
	if (c->pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		c->pid = 0;
		return err;
	}
	if (c->pid == 0) {
		char b;
		int e;

		close(go[1]);
		close(ex[0]);
		/* Until the tracer is ready; end of file: it died, run nothing. */
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
	c->go_fd = go[1];
	c->err_fd = ex[0];
	return 0;
}

int rd_spawn_go(struct rd_spawn *c)
{
	char b = 1;
	int ret = 0;

	if (write(c->go_fd, &b, 1) != 1)
		ret = -errno;
	close_fd(&c->go_fd);
	return ret;
}

int rd_spawn_result(struct rd_spawn *c)
{
	int e = 0;
	ssize_t n;

	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close_fd(&c->err_fd);
	return n == sizeof(e) ? -e : 0;
}

int rd_spawn_release(struct rd_spawn *c)
{
	/* A child that cannot be told has exited: the result says how far it got. */
	rd_spawn_go(c);
	return rd_spawn_result(c);
}

void rd_spawn_abort(struct rd_spawn *c)
{
	int st;

	close_fd(&c->go_fd);
	close_fd(&c->err_fd);
	if (c->pid > 0)
		waitpid(c->pid, &st, 0); /* it exits when the go pipe closes */
	c->pid = 0;
}
