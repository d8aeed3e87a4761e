// SPDX-License-Identifier: GPL-2.0-only
/* How the tool reports: errors and warnings on stderr, errors in JSON mode also where the
 * command writes its JSON, and the message a failed function leaves for the command to report. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bulk.h"
#include "common.h"
#include "symfmt.h"

/* One line on stderr, "rseqdbg: CMD: what msg", msg formatted into msg[len]. Escaped: a
 * name from a file must not break the line or reach the terminal raw. */
static void vsay(const char *what, char *msg, size_t len, const char *fmt, va_list ap)
{
	vsnprintf(msg, len, fmt, ap);
	rd_progress_clear();
	fprintf(stderr, "rseqdbg: %s%s%s%s\n", rd.cmd ? rd.cmd : "", rd.cmd ? ": " : "", what,
		rd_safe(msg));
}

int rd_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsay("", msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rd.json && rd.jw) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "kind", "error");
		jw_kstr(rd.jw, "error", msg);
		jw_obj_close(rd.jw);
		jw_end(rd.jw);
	}
	return EXIT_ERROR;
}

void rd_file_error(const char *path, const char *msg)
{
	char line[1024];
	bool json = rd.json;

	snprintf(line, sizeof(line), "%s: %s", path, msg);
	fflush(stdout);
	rd.json = false;
	rd_error("%s", line);
	rd.json = json;
	if (json) {
		jw_obj_open(rd.jw);
		jw_kstr(rd.jw, "kind", "error");
		jw_kstr(rd.jw, "path", path);
		jw_kstr(rd.jw, "error", line);
		jw_obj_close(rd.jw);
	}
}

static __thread char errmsg[512];

void rd_seterr(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
}

const char *rd_errmsg(void)
{
	return errmsg;
}

void rd_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsay("warning: ", msg, sizeof(msg), fmt, ap);
	va_end(ap);
}

int rd_json_writer_to(FILE *f)
{
	rd.json_out = f;
	return rd_json_writer();
}

int rd_json_writer(void)
{
	struct jw *w = jw_new(rd.json_out ? rd.json_out : stdout, rd.pretty);

	if (!w) {
		rd_seterr("out of memory");
		return -ENOMEM;
	}
	jw_free(rd.jw);
	rd.jw = w;
	return 0;
}

FILE *rd_output_open(const char *path)
{
	/* Close-on-exec: a command run under the tracer must not write into it. */
	FILE *f = fopen(path, "we");

	if (!f) {
		rd_seterr("cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	if (rd_json_writer_to(f)) {
		fclose(f);
		return NULL;
	}
	return f;
}

int rd_output_close(FILE *f, const char *path, FILE *back)
{
	bool failed = ferror(f);
	int err;

	errno = 0;
	rd_json_writer_to(back); /* the writer on f goes before f is closed */
	if (fclose(f) || failed) {
		err = errno ? errno : EIO;
		rd_seterr("writing %s failed: %s", path, strerror(err));
		return -err;
	}
	return 0;
}
