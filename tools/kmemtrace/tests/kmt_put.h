/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing the fields of a synthetic kmemtrace capture, in the host's byte
 * order or, with kmt_swap set, the other one: for mkcapture and kmtgen.
 */
#ifndef KMT_PUT_H
#define KMT_PUT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../kmt_events.h"

static bool kmt_swap;

static inline void put(FILE *f, const void *p, size_t n)
{
	const unsigned char *b = p;
	unsigned char r[8];
	size_t i;

	if (kmt_swap && n > 1) {
		for (i = 0; i < n; i++)
			r[i] = b[n - 1 - i];
		b = r;
	}
	if (fwrite(b, 1, n, f) != n) {
		perror("write");
		exit(1);
	}
}

/* @n bytes at @p as they are. */
static inline void put_raw(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n) {
		perror("write");
		exit(1);
	}
}

static inline void put8(FILE *f, unsigned int v)
{
	unsigned char b = v;

	put(f, &b, 1);
}

static inline void put16(FILE *f, unsigned int v)
{
	__u16 x = v;

	put(f, &x, 2);
}

static inline void put32(FILE *f, __u32 v)
{
	put(f, &v, 4);
}

static inline void put64(FILE *f, __u64 v)
{
	put(f, &v, 8);
}
#endif /* KMT_PUT_H */
