/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOST_LINUX_BITS_H
#define _HOST_LINUX_BITS_H
#define BIT(n) (1UL << (n))
#define BITS_PER_LONG (8 * sizeof(long))
#define GENMASK(h, l) (((~0UL) << (l)) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#endif
