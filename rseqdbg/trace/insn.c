// SPDX-License-Identifier: GPL-2.0-only
/* The instruction an abort interrupted, decoded by libelfscan for the event lines. */
#include <errno.h>
#include <stdio.h>

#include "elfscan-decode.h"
#include "internal.h"

/* A decoder for the machine of es, kept until a file of another machine comes. */
static struct elfscan_decoder *decoder_for(struct rd_tracer *t, const struct elfscan *es)
{
	uint16_t machine = elfscan_machine(es);
	int elfclass = elfscan_class(es);

	if (t->dec && t->dec_machine == machine && t->dec_class == elfclass)
		return t->dec;
	rd_tracer_insn_free(t);
	if (elfscan_decoder_for(es, &t->dec))
		return NULL;
	t->dec_machine = machine;
	t->dec_class = elfclass;
	return t->dec;
}

const char *rd_tracer_insn(struct rd_tracer *t, const struct rd_secinfo *si, uint64_t start_ip,
			   uint64_t ip, char *buf, size_t len)
{
	struct elfscan_decoder *d;
	struct elfscan_insn insn;
	uint8_t code[16];
	uint64_t addr;
	size_t n = sizeof(code);

	snprintf(buf, len, "?");
	d = si && si->es ? decoder_for(t, si->es) : NULL;
	if (!d)
		return buf;
	addr = si->link_start + (ip - start_ip);
	/* Near the end of the file fewer bytes are readable. */
	while (n && elfscan_read(si->es, addr, code, n))
		n--;
	if (n && !elfscan_decode_one(d, code, n, addr, &insn))
		snprintf(buf, len, "%s", insn.text);
	return buf;
}

void rd_tracer_insn_free(struct rd_tracer *t)
{
	elfscan_decoder_free(t->dec);
	t->dec = NULL;
}
