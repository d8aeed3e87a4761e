// SPDX-License-Identifier: GPL-2.0-only
/* The stepper's decoder, the same for every architecture: libelfscan's for RD_ARCH_EM. */
#include <errno.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "arch/decoder.h"

int rd_decoder_open(struct rd_decoder **res)
{
	struct rd_decoder *d = calloc(1, sizeof(*d));
	int ret;

	*res = NULL;
	if (!d)
		return -ENOMEM;
	ret = elfscan_decoder_new(RD_ARCH_EM, 64, false, &d->d);
	if (ret < 0) {
		free(d);
		return ret;
	}
	*res = d;
	return 0;
}

void rd_decoder_close(struct rd_decoder *d)
{
	if (!d)
		return;
	elfscan_decoder_free(d->d);
	free(d);
}
