// SPDX-License-Identifier: GPL-2.0-only
/*
 * naive_step: what a plain debugger does. Run PROG to a breakpoint at FUNC, then
 * PTRACE_SINGLESTEP the thread that hit it MAX times and count how often it was at the
 * section's start, and how often it left the section for its abort handler or for its
 * post-commit address. Stepping into an armed rseq critical section aborts it on every step,
 * so post_commit_hits stays 0.
 *
 * Usage: naive_step --func OFF --start OFF --post OFF --abort OFF [--max N] -- PROG [ARGS]
 * Offsets are relative to the load base of PROG (as nm prints them for a PIE).
 * Prints: steps=N start_hits=N abort_hits=N post_commit_hits=N
 * Uses libc and ptrace only.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long exe_base(pid_t pid)
{
	char path[64], exe[PATH_MAX], line[PATH_MAX + 128];
	unsigned long lo = 0, off;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		unsigned long start;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		if (strcmp(p, exe) || sscanf(line, "%lx-%*x %*s %lx", &start, &off) != 2)
			continue;
		lo = start - off;
		break;
	}
	fclose(f);
	return lo;
}

static int usage(void)
{
	fprintf(stderr, "usage: naive_step --func OFF --start OFF --post OFF --abort OFF "
			"[--max N] -- PROG [ARGS...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long func = 0, start = 0, post = 0, abrt = 0, max = 2000, base, word, orig;
	unsigned long steps = 0, start_hits = 0, abort_hits = 0, post_hits = 0;
	struct user_regs_struct r;
	bool in = false;
	pid_t pid, tid;
	int i, st;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i += 2) {
		unsigned long *v = !strcmp(argv[i], "--func")	 ? &func
				   : !strcmp(argv[i], "--start") ? &start
				   : !strcmp(argv[i], "--post")	 ? &post
				   : !strcmp(argv[i], "--abort") ? &abrt
				   : !strcmp(argv[i], "--max")	 ? &max
								 : NULL;

		if (!v || i + 1 >= argc)
			return usage();
		*v = strtoul(argv[i + 1], NULL, 0);
	}
	if (i + 1 >= argc || !func || !post || !abrt)
		return usage();
	argv += i + 1;

	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		fprintf(stderr, "naive_step: %s did not start\n", argv[0]);
		return 2;
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL);
	base = exe_base(pid);
	func += base;
	start += base;
	post += base;
	abrt += base;
	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, func, 0);
	if (errno) {
		fprintf(stderr, "naive_step: cannot read %#lx: %s\n", func, strerror(errno));
		kill(pid, SIGKILL);
		return 2;
	}
	word = (orig & ~0xfful) | 0xcc;
	ptrace(PTRACE_POKETEXT, pid, func, word);
	ptrace(PTRACE_CONT, pid, 0, 0);
	/* Run every thread until one hits the breakpoint. */
	for (;;) {
		tid = waitpid(-1, &st, __WALL);
		if (tid < 0 || (tid == pid && (WIFEXITED(st) || WIFSIGNALED(st)))) {
			fprintf(stderr, "naive_step: %s ended before reaching %#lx\n", argv[0],
				func);
			return 2;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0) {
			ptrace(PTRACE_GETREGS, tid, 0, &r);
			if (r.rip - 1 == func)
				break;
		}
		ptrace(PTRACE_CONT, tid, 0,
		       (WSTOPSIG(st) == SIGTRAP || WSTOPSIG(st) == SIGSTOP) ? 0 : WSTOPSIG(st));
	}
	/* Only a stopped thread can be used to write: the one that hit the breakpoint. */
	ptrace(PTRACE_POKETEXT, tid, func, orig);
	r.rip = func;
	ptrace(PTRACE_SETREGS, tid, 0, &r);
	while (steps < max) {
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, 0) < 0 || waitpid(tid, &st, __WALL) != tid ||
		    !WIFSTOPPED(st))
			break;
		steps++;
		if (WSTOPSIG(st) != SIGTRAP) {
			fprintf(stderr, "naive_step: signal %d at step %lu\n", WSTOPSIG(st), steps);
			break;
		}
		ptrace(PTRACE_GETREGS, tid, 0, &r);
		start_hits += r.rip == start;
		/* The kernel moves the thread to abort_ip before the step executes the
		 * handler's first instruction: count leaving the section elsewhere than
		 * post-commit, and landing in the handler [abort, abort + 16). */
		if (in && (r.rip < start || r.rip >= post)) {
			post_hits += r.rip == post;
			abort_hits += r.rip >= abrt && r.rip < abrt + 16;
		}
		in = r.rip >= start && r.rip < post;
	}
	kill(pid, SIGKILL);
	while (waitpid(-1, &st, __WALL) > 0)
		;
	printf("steps=%lu start_hits=%lu abort_hits=%lu post_commit_hits=%lu\n", steps, start_hits,
	       abort_hits, post_hits);
	return 0;
}
