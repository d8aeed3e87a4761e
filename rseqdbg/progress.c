// SPDX-License-Identifier: GPL-2.0-only
/* The progress line of a command over many files: on a terminal only, rewritten in place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "bulk.h"
#include "common.h"
#include "symfmt.h"

#define PROGRESS_DELAY 0.5  /* seconds before the first line: a short run shows none */
#define PROGRESS_PERIOD 0.1 /* at most ten lines a second */

static struct {
	bool on;    /* stderr is a terminal, no JSON, no --no-progress */
	bool shown; /* a line is on the terminal now */
	bool stdout_tty;
	const char *verb;
	double start, delay, last;
} pg;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rd_progress_begin(const struct rd_bulk *b, const char *verb)
{
	const char *d = getenv("RSEQDBG_PROGRESS_DELAY");
	char *end;

	pg.on = !b->o.no_progress && !rd.json && isatty(STDERR_FILENO);
	pg.shown = false;
	pg.stdout_tty = isatty(STDOUT_FILENO);
	pg.verb = verb;
	pg.delay = PROGRESS_DELAY;
	if (d && *d) {
		double v = strtod(d, &end);

		if (!*end && v >= 0)
			pg.delay = v;
	}
	pg.start = now();
	pg.last = pg.start - PROGRESS_PERIOD;
}

static int columns(void)
{
	struct winsize ws;

	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

void rd_progress(size_t i, size_t total, const char *path)
{
	char head[96];
	const char *p;
	size_t room, len;
	double t;
	int n;

	if (!pg.on)
		return;
	t = now();
	if (t - pg.start < pg.delay || t - pg.last < PROGRESS_PERIOD)
		return;
	pg.last = t;
	fflush(stdout); /* what was printed comes before the line */
	if (total)
		n = snprintf(head, sizeof(head), "%s %zu/%zu files: ", pg.verb, i + 1, total);
	else
		n = snprintf(head, sizeof(head), "finding files: %zu found: ", i);
	/* One row of the terminal, or \r cannot take it back: the path's end, which names
	 * the file, is what is kept of a long one. */
	room = (size_t)columns() - 1 - (size_t)n;
	p = rd_safe(path);
	len = strlen(p);
	if (len > room) {
		p += len - room + 3;
		while ((*p & 0xc0) == 0x80) /* not in the middle of a UTF-8 sequence */
			p++;
		fprintf(stderr, "\r%s...%s\033[K", head, p);
	} else {
		fprintf(stderr, "\r%s%s\033[K", head, p);
	}
	fflush(stderr);
	pg.shown = true;
}

void rd_progress_clear(void)
{
	if (!pg.shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	pg.shown = false;
}

void rd_progress_output(void)
{
	if (pg.stdout_tty)
		rd_progress_clear();
}

void rd_progress_end(void)
{
	rd_progress_clear();
	pg.on = false;
}
