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
	double start, delay, period, last;
	/* the file being read: its place in the run, and how far into it (per mille) */
	size_t i, total;
	const char *path;
	int permille;
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
	pg.period = PROGRESS_PERIOD;
	if (d && *d) {
		double v = strtod(d, &end);

		if (!*end && v >= 0)
			pg.delay = v;
		/* 0: every update drawn, so that a test sees each without waiting for it */
		if (!*end && v == 0)
			pg.period = 0;
	}
	pg.start = now();
	pg.last = pg.start - pg.period;
}

static int columns(void)
{
	struct winsize ws;

	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

static void draw(void)
{
	char head[96];
	const char *p;
	size_t room, len;
	double t = now();
	int n;

	if (t - pg.start < pg.delay || t - pg.last < pg.period)
		return;
	pg.last = t;
	fflush(stdout); /* what was printed comes before the line */
	if (!pg.total)
		n = snprintf(head, sizeof(head), "finding files: %zu found: ", pg.i);
	else if (pg.permille >= 0)
		n = snprintf(head, sizeof(head), "%s %zu/%zu files (%d%%): ", pg.verb, pg.i + 1,
			     pg.total, pg.permille / 10);
	else
		n = snprintf(head, sizeof(head), "%s %zu/%zu files: ", pg.verb, pg.i + 1, pg.total);
	/* One row of the terminal, or \r cannot take it back: the path's end, which names
	 * the file, is what is kept of a long one. */
	room = (size_t)columns() - 1;
	room = room > (size_t)n + 8 ? room - (size_t)n : 8;
	p = rd_safe(pg.path);
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

void rd_progress(size_t i, size_t total, const char *path)
{
	if (!pg.on)
		return;
	pg.i = i;
	pg.total = total;
	pg.path = path;
	pg.permille = -1;
	draw();
}

void rd_progress_within(void *ctx, uint64_t done, uint64_t total)
{
	if (!pg.on || !total || !pg.path)
		return;
	pg.permille = (int)(done * 1000 / total);
	draw();
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
