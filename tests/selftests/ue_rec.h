/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A record being built for write(): the write index, then the packed
 * payload (grammar_test.c, write_test.c).
 */
#ifndef UE_REC_H
#define UE_REC_H

#include <string.h>

struct rec {
	unsigned char d[4096];
	int len;
};

static inline void rec_init(struct rec *r, int write_index)
{
	memset(r->d, 0, sizeof(r->d));
	memcpy(r->d, &write_index, sizeof(write_index));
	r->len = sizeof(write_index);
}

static inline void rec_put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->d + r->len, p, n);
	r->len += n;
}

#endif /* UE_REC_H */
