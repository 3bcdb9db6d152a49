/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOST_LINUX_BITOPS_H
#define _HOST_LINUX_BITOPS_H
#include <linux/bits.h>
#include <linux/types.h>
#define BITS_TO_LONGS(n) (((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
static inline void __set_bit(unsigned long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] |= 1UL << (nr % BITS_PER_LONG);
}

static inline bool test_bit(unsigned long nr, const unsigned long *addr)
{
	return addr[nr / BITS_PER_LONG] & (1UL << (nr % BITS_PER_LONG));
}

static inline s64 sign_extend64(u64 value, int index)
{
	int shift = 63 - index;

	return (s64)(value << shift) >> shift;
}
#endif
