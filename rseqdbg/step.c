// SPDX-License-Identifier: GPL-2.0-only
#include "common.h"

int cmd_step(int argc, char **argv)
{
	return rd_error("not built yet");
}
