// SPDX-License-Identifier: GPL-2.0-only
/* The tracer's summary without a kernel: counts as the BPF maps would hold them, then the
 * totals, the order of the sections, the counts since the previous summary, and the exact
 * text and JSON printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common.h"
#include "trace/summary.h"
#include "unit.h"

struct rd_global rd; /* the tool's globals, defined by its main.c */

static void add_section(struct rd_summary *s, uint32_t pid, uint64_t start, const uint64_t *causes,
			const struct rd_secinfo *si)
{
	struct rt_section_key key = {.tgid = pid, .start_ip = start};
	struct rt_section v = {.post_commit_offset = 0x17, .abort_ip = start + 0x20};

	memcpy(v.aborts, causes, sizeof(v.aborts));
	snprintf(v.comm, sizeof(v.comm), "wl%u", pid);
	assert_int_equal(rd_summary_add_section(s, &key, &v, si), 0);
}

/* Two CPUs; sections of two processes, one of them with as many aborts as another. */
static void build(struct rd_summary *s, double seconds)
{
	static const uint64_t a[RT_NCAUSES] = {5, 1, 0, 0, 0};	/* 6 */
	static const uint64_t b[RT_NCAUSES] = {10, 0, 2, 1, 3}; /* 16 */
	static const uint64_t c[RT_NCAUSES] = {0, 0, 6, 0, 0};	/* 6 */

	assert_int_equal(rd_summary_init(s, 2, RD_MODE_EVENT_MASK, seconds), 0);
	s->percpu_stats[0] = (struct rt_stats){
	    .aborts = 20, .cause = {10, 1, 8, 1}, .migrations = 4, .updates = 100, .signals = 1};
	s->percpu_stats[1] = (struct rt_stats){.aborts = 8,
					       .cause = {5, 0, 0, 0, 3},
					       .migrations = 1,
					       .updates = 60,
					       .ringbuf_drops = 2};
	s->cpus[1] = (struct rt_cpu){.aborts = 8, .migrations_in = 1, .updates = 60};
	add_section(s, 200, 0x1000, a, NULL);
	add_section(s, 100, 0x2000, b, NULL);
	add_section(s, 100, 0x1800, c, NULL);
	assert_int_equal(
	    rd_summary_add_proc(s, 100, &(struct rt_proc){.aborts = 22, .comm = "wl100"}), 0);
	rd_summary_finish(s);
}

static void test_totals_and_order(void **state)
{
	struct rd_summary s;

	build(&s, 2.0);
	assert_int_equal(s.total.aborts, 28);
	assert_int_equal(s.total.cause[RT_CAUSE_PREEMPT], 15);
	assert_int_equal(s.total.cause[RT_CAUSE_DEFERRED], 3);
	assert_int_equal(s.total.migrations, 5);
	assert_int_equal(s.total.updates, 160);
	assert_int_equal(s.total.ringbuf_drops, 2);
	assert_int_equal(s.nsections, 3);
	/* most aborts first; a tie goes to the lower pid, then the lower address */
	assert_int_equal(s.sections[0].aborts, 16);
	assert_int_equal(s.sections[0].key.start_ip, 0x2000);
	assert_int_equal(s.sections[1].key.tgid, 100);
	assert_int_equal(s.sections[1].key.start_ip, 0x1800);
	assert_int_equal(s.sections[1].aborts, 6);
	assert_int_equal(s.sections[2].key.tgid, 200);
	assert_int_equal(s.sections[2].aborts, 6);
	assert_int_equal(s.nprocs, 1);
	rd_summary_free(&s);
}

static void test_since(void **state)
{
	static const uint64_t more[RT_NCAUSES] = {4, 0, 0, 0, 0};
	struct rd_summary prev, s;

	build(&prev, 1.0);
	build(&s, 3.5);
	s.sections[0].aborts += 9; /* 0x2000: 16 -> 25 */
	s.total.aborts += 13;
	add_section(&s, 300, 0x3000, more, NULL); /* new since prev */
	rd_summary_since(&s, &prev);
	assert_true(s.recent_seconds == 2.5);
	assert_int_equal(s.recent_aborts, 13);
	assert_int_equal(s.sections[0].recent, 9);
	assert_int_equal(s.sections[1].recent, 0);
	assert_int_equal(s.sections[3].recent, 4);
	rd_summary_free(&prev);
	rd_summary_free(&s);
}

/* One section, symbolized, with a histogram; a drop to report. */
static void build_one(struct rd_summary *s)
{
	static const uint64_t a[RT_NCAUSES] = {3, 1, 0, 0, 0};
	static const struct rd_secinfo si = {
	    .module = "/usr/lib/libwl.so",
	    .loc = {.func = "wl_inc", .func_off = 0, .file = "src/wl.S", .line = 42},
	};

	assert_int_equal(rd_summary_init(s, 1, RD_MODE_NO_MASK, 2.0), 0);
	s->percpu_stats[0] =
	    (struct rt_stats){.aborts = 4, .cause = {3, 1}, .updates = 8, .ringbuf_drops = 1};
	s->cpus[0] = (struct rt_cpu){.aborts = 4, .updates = 8};
	add_section(s, 7, 0x401000, a, &si);
	s->sections[0].v.hist[0] = 1; /* at the start */
	s->sections[0].v.hist[3] = 2; /* +4..7 */
	s->sections[0].v.hist[RT_HIST_SLOTS - 1] = 1;
	rd_summary_finish(s);
}

static char *print_to_string(const struct rd_summary *s, int top, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jw *w;

	assert_non_null(f);
	if (json) {
		w = jw_new(f, false);
		jw_obj_open(w);
		rd_summary_json(s, w, top);
		jw_obj_close(w);
		jw_end(w);
		jw_free(w);
	} else {
		rd_summary_print(s, top, f);
	}
	fclose(f);
	return buf;
}

static void test_text(void **state)
{
	static const char want[] =
	    "2.000 s, mode no-event-mask\n"
	    "aborts                   4         2.0/s\n"
	    "  preemption                                    3   75.0%\n"
	    "  signal                                        1   25.0%\n"
	    "  migration                                     0    0.0%\n"
	    "  unknown (likely membarrier RSEQ IPI)          0    0.0%\n"
	    "  deferred (preempted before the section)       0    0.0%\n"
	    "migrations               0         0.0/s\n"
	    "cpu_id updates           8         4.0/s\n"
	    "signals                  0         0.0/s\n"
	    "abort rate          0.5000 aborts per cpu_id update\n"
	    "\n"
	    "PID          ABORTS    PREEMPT     SIGNAL    MIGRATE   DEFERRED    UNKNOWN  SECTION\n"
	    "7                 4          3          1          0          0          0  "
	    "wl_inc (wl.S:42)\n"
	    "         wl7, 2.0 aborts/s, section 0x401000+23 abort 0x401020 in /usr/lib/libwl.so\n"
	    "           +0                      1 |####################                    |\n"
	    "           +4..7                   2 |########################################|\n"
	    "           outside                 1 |####################                    |\n"
	    "\n"
	    "CPU      ABORTS  MIGRATIONS-IN CPU_ID-UPDATES\n"
	    "0             4              0              8\n"
	    "\n"
	    "ring buffer: 1 events dropped (failed reservations); the counts above are kept in "
	    "the kernel and are complete\n";
	struct rd_summary s;
	char *got;

	build_one(&s);
	got = print_to_string(&s, 0, false);
	assert_string_equal(got, want);
	free(got);
	rd_summary_free(&s);
}

static void test_json(void **state)
{
	static const char want[] =
	    "{\"mode\":\"no-event-mask\",\"seconds\":2,\"counted_from\":\"start\",\"aborts\":4,"
	    "\"aborts_per_second\":2,"
	    "\"causes\":{\"preemption\":3,\"signal\":1,\"migration\":0,\"unknown\":0,"
	    "\"deferred\":0},\"migrations\":0,\"cpu_id_updates\":8,\"signals\":0,"
	    "\"aborts_per_cpu_id_update\":0.5,\"ringbuf_drops\":1,\"notify_drops\":0,"
	    "\"map_full\":0,\"backup_aborts\":0,\"thread_state_misses\":0,"
	    "\"fixup_program_skipped\":0,\"backup_program_skipped\":0,"
	    "\"event_programs_skipped\":0,\"handler_entries\":null,\"user_aborts\":null,"
	    "\"uprobes\":null,\"sections\":[{\"pid\":7,\"comm\":\"wl7\","
	    "\"start_ip\":4198400,\"post_commit_offset\":23,\"post_commit_ip\":4198423,"
	    "\"abort_ip\":4198432,"
	    "\"start\":{\"addr\":4198400,\"module\":\"/usr/lib/libwl.so\","
	    "\"function\":\"wl_inc\",\"offset\":0,\"section\":null,\"file\":\"src/wl.S\","
	    "\"line\":42,\"inlined\":[]},"
	    "\"post_commit\":{\"addr\":4198423,\"module\":\"/usr/lib/libwl.so\","
	    "\"function\":null,\"offset\":null,\"section\":null,\"file\":null,\"line\":null,"
	    "\"inlined\":[]},"
	    "\"abort\":{\"addr\":4198432,\"module\":\"/usr/lib/libwl.so\","
	    "\"function\":null,\"offset\":null,\"section\":null,\"file\":null,\"line\":null,"
	    "\"inlined\":[]},"
	    "\"abort_handler\":null,\"aborts\":4,"
	    "\"handler_entries\":null,\"user_aborts\":null,\"handler_entries_missing\":null,"
	    "\"aborts_per_second\":2,\"causes\":{"
	    "\"preemption\":3,\"signal\":1,\"migration\":0,\"unknown\":0,\"deferred\":0},"
	    "\"histogram\":[{\"from\":0,\"to\":0,\"count\":1},{\"from\":4,\"to\":7,\"count\":2},"
	    "{\"outside\":true,\"count\":1}]}],\"processes\":[],\"cpus\":[{\"cpu\":0,"
	    "\"aborts\":4,\"migrations_in\":0,\"cpu_id_updates\":8}]}\n";
	struct rd_summary s;
	char *got;

	build_one(&s);
	got = print_to_string(&s, 0, true);
	assert_string_equal(got, want);
	free(got);
	rd_summary_free(&s);
}

/* Counted from an attach, with a section whose handler entries fall short of its kernel
 * aborts: both said, never printed as plain fact. */
static void test_attached_and_short(void **state)
{
	struct rd_summary s;
	char *got;

	build_one(&s);
	s.attached = true;
	s.uprobes = true;
	s.sections[0].v.entries_kernel = 1; /* of 4 aborts */
	s.sections[0].v.entries_user = 5;
	got = print_to_string(&s, 0, false);
	assert_non_null(strstr(got, "counted from the start of tracing: what the processes did "
				    "before is not counted, and a kernel abort"));
	assert_non_null(strstr(got, "not every entry seen: 3 of its aborts have no handler entry"));
	free(got);
	got = print_to_string(&s, 0, true);
	assert_non_null(strstr(got, "\"counted_from\":\"attach\""));
	assert_non_null(strstr(got, "\"handler_entries\":6,\"user_aborts\":5,"
				    "\"handler_entries_missing\":3"));
	free(got);
	s.sections[0].v.entries_kernel = 4;
	got = print_to_string(&s, 0, true);
	assert_non_null(strstr(got, "\"handler_entries_missing\":0"));
	free(got);
	rd_summary_free(&s);
}

static void test_top(void **state)
{
	struct rd_summary s;
	char *got;

	build(&s, 1.0);
	got = print_to_string(&s, 1, false);
	assert_non_null(strstr(got, "section 0x2000+23"));
	assert_null(strstr(got, "section 0x1800"));
	free(got);
	got = print_to_string(&s, 2, true);
	assert_non_null(strstr(got, "\"start_ip\":6144"));
	assert_null(strstr(got, "\"start_ip\":4096"));
	free(got);
	rd_summary_free(&s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_totals_and_order),
	    cmocka_unit_test(test_since),
	    cmocka_unit_test(test_text),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_top),
	    cmocka_unit_test(test_attached_and_short),
	};

	return UNIT_MAIN(tests);
}
