/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What one machine's decoder provides (decode-ARCH.c), chosen by the machine table (arch.c):
 * decode.c never names an architecture. */
#ifndef ELFSCAN_DECODE_BACKEND_H
#define ELFSCAN_DECODE_BACKEND_H

#include <capstone.h>

#include "elfscan-decode.h"

struct elfscan_decoder {
	csh h;
	cs_insn *ci;
	const struct es_isa *isa;
	unsigned int min_insn;
	bool runs;  /* the backend fills flow, run, writes and the operands */
	void *priv; /* the backend's, free()d with the decoder */
};

/* capstone's settings for files of a machine, class and byte order. */
struct es_isa_mode {
	cs_arch arch;
	cs_mode mode;
	unsigned int min_insn;
	bool runs;
};

struct es_isa {
	void (*mode)(uint16_t machine, int elfclass, bool big_endian, struct es_isa_mode *m);
	/* After capstone is open: the backend's own tables (d->priv). NULL: none. */
	int (*init)(struct elfscan_decoder *d);
	/* Fill insn from d->ci: flags and target, and with d->runs everything else.
	 * insn arrives with size, text and no register anywhere. */
	void (*classify)(struct elfscan_decoder *d, const cs_insn *ci, struct elfscan_insn *insn);
};

/* The backends. */
extern const struct es_isa es_isa_x86, es_isa_arm64, es_isa_arm, es_isa_ppc, es_isa_s390;

/* decode.c: what every backend asks capstone. */
bool es_cs_group(const cs_insn *ci, uint8_t group);
/* Whether the instruction writes reg1 or reg2, explicitly or implicitly. */
bool es_cs_writes(struct elfscan_decoder *d, const cs_insn *ci, unsigned int reg1,
		  unsigned int reg2);
bool es_starts(const char *s, const char *prefix);
/* Whether s starts with one of the n prefixes. */
bool es_starts_any(const char *s, const char *const *prefixes, size_t n);

#define ES_NELEM(a) (sizeof(a) / sizeof((a)[0]))

#endif
