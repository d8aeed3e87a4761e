/* SPDX-License-Identifier: GPL-2.0-only */
/* The stepper's decoder, inside rseqdbg/arch/: libelfscan's, for the target's machine. */
#ifndef RSEQDBG_ARCH_DECODER_H
#define RSEQDBG_ARCH_DECODER_H

#include "elfscan-decode.h"

struct rd_decoder {
	struct elfscan_decoder *d;
};

#endif
