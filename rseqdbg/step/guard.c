// SPDX-License-Identifier: GPL-2.0-only
/*
 * A tracer killed with SIGKILL cannot restore the bytes its breakpoints replaced: the kernel
 * detaches the program, which then runs into them (SIGTRAP) or resumes one byte into an
 * instruction. So the tracer is a child that notices its parent's death (PR_SET_PDEATHSIG)
 * and takes it as an interrupt; the parent, the process the user sees, only waits.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "step/guard.h"

#define GUARD_DEATHSIG SIGHUP

static const int relayed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static volatile pid_t tracer;

static void relay(int sig)
{
	int saved = errno;

	if (tracer > 0)
		kill(tracer, sig);
	errno = saved;
}

/* Exit as the tracer did: its status, or death by its signal (without a second core). */
static int exit_like(int status)
{
	struct rlimit none = {0, 0};
	sigset_t set;
	int sig;

	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (!WIFSIGNALED(status))
		return EXIT_ERROR;
	sig = WTERMSIG(status);
	fflush(NULL);
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return EXIT_ERROR;
}

int rd_guard_fork(void (*on_quit)(int))
{
	struct sigaction sa = {0};
	pid_t parent = getpid(), pid;
	sigset_t set, old;
	int status;

	/* Blocked until each side has its handlers: a signal in between waits, not lost. */
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++)
		sigaddset(&set, relayed[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rd_warn("fork: %s (the tracer runs unguarded: killing it with SIGKILL leaves "
			"breakpoints in the program)",
			strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	if (pid == 0) {
		sa.sa_handler = on_quit; /* no SA_RESTART: waits return */
		for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++)
			sigaction(relayed[i], &sa, NULL);
		if (prctl(PR_SET_PDEATHSIG, GUARD_DEATHSIG) < 0)
			rd_warn("PR_SET_PDEATHSIG: %s (killing rseqdbg with SIGKILL will leave "
				"breakpoints in the program)",
				strerror(errno));
		/* A parent dead before the prctl sends nothing: nothing is traced yet, just go. */
		else if (getppid() != parent)
			_exit(EXIT_ERROR);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	tracer = pid;
	sa.sa_handler = relay;
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++)
		sigaction(relayed[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = W_EXITCODE(EXIT_ERROR, 0);
			break;
		}
	}
	tracer = 0;
	return exit_like(status);
}
