// SPDX-License-Identifier: GPL-2.0
/* ue_race -M held: not written yet */
#include <stdio.h>

#include "aftermath.h"

int am_held(const struct am_opts *o)
{
	(void)o;
	am_tap(false, "held: not implemented yet");
	return am_tap_summary();
}
