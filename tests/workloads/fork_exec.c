// SPDX-License-Identifier: GPL-2.0-only
/*
 * fork_exec: forks a child that computes a checksum in a loop and exits with it; the parent
 * waits and checks the child's status, then optionally replaces itself with another program.
 * A stepper must report the fork and the exec and leave nothing of its own in the child.
 *
 *   fork_exec [--exec PROG ARGS...]
 *
 * Exit status: 0 when the child ended with the expected status (then PROG's own status with
 * --exec), 1 otherwise.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned int mix(unsigned int h, unsigned int i)
{
	return (h ^ i) * 16777619u;
}

static int child(void)
{
	unsigned int h = 2166136261u;

	for (unsigned int i = 0; i < 2000; i++)
		h = mix(h, i);
	return (int)(h & 0x7f);
}

int main(int argc, char **argv)
{
	int want = child(), status;
	pid_t c = fork();

	if (c < 0) {
		perror("fork");
		return 1;
	}
	if (c == 0)
		_exit(child());
	if (waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status) != want) {
		fprintf(stderr, "fork_exec: child %d ended with status %#x, expected exit %d\n", c,
			status, want);
		return 1;
	}
	if (argc > 2 && !strcmp(argv[1], "--exec")) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 1;
	}
	return 0;
}
