// SPDX-License-Identifier: GPL-2.0-only
/* libFuzzer target: any bytes through elfscan_open_mem(), then every query the scanner
 * offers, symbolization (symbol tables and the file's own DWARF) and the audit, so the
 * sanitizers see all the code that touches decoded values. */
#include <stddef.h>
#include <stdint.h>

#include "elfscan-audit.h"
#include "elfscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* DWARF in the bytes is read; no separate debug file is ever found. */
	struct elfscan_opts opts = {.sz = sizeof(opts), .debug_dirs = "/nonexistent"};
	const struct elfscan_cs *out[4];
	struct elfscan_audit *a = NULL;
	struct elfscan_loc loc;
	struct elfscan *es;
	uint64_t addr;
	uint8_t buf[16];

	if (elfscan_open_mem(data, size, &opts, &es))
		return 0;
	(void)elfscan_arch_name(es);
	(void)elfscan_build_id(es);
	(void)elfscan_is_pie(es);
	for (size_t i = 0; i < elfscan_nsegments(es); i++)
		(void)elfscan_offset_to_addr(es, elfscan_segment(es, i)->offset, &addr);
	for (size_t i = 0; i < elfscan_count(es); i++) {
		const struct elfscan_cs *cs = elfscan_get(es, i);

		(void)elfscan_lookup(es, cs->start_ip);
		(void)elfscan_symbolize(es, cs->start_ip, &loc);
		(void)elfscan_symbolize(es, cs->abort_ip, &loc);
		(void)elfscan_lookup_all(es, cs->post_commit_ip - 1, out, 4);
		(void)elfscan_read(es, cs->abort_ip, buf, sizeof(buf));
		for (size_t k = 0; k < cs->nsites; k++)
			(void)elfscan_read(es, cs->sites[k].addr, buf, 8);
		for (size_t k = 0; k < cs->nexits; k++)
			(void)elfscan_lookup(es, cs->exits[k].exit_ip);
	}
	for (size_t i = 0; i < elfscan_nexits(es); i++)
		(void)elfscan_exit_point(es, i);
	if (!elfscan_audit(es, NULL, &a)) {
		for (size_t i = 0; i < elfscan_audit_count(a); i++)
			(void)elfscan_finding_count(elfscan_audit_finding(a, i));
	}
	elfscan_audit_free(a);
	elfscan_close(es);
	return 0;
}
