/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmt_size.h - a size on the kmemtrace tools' command lines: N, Nk, NM
 * or NG bytes, a B after the unit allowed (kmonlog -b and -m,
 * kmemtraced -m).
 */
#ifndef KMT_SIZE_H
#define KMT_SIZE_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* @s into *@v: false unless a whole number of bytes above 0 that fits. */
static inline bool kmt_parse_size(const char *s, unsigned long long *v)
{
	unsigned long long n;
	int shift = 0;
	char *end;

	/* Digits first: strtoull() would skip blanks and take a sign. */
	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		shift = 10, end++;
	else if (*end == 'm' || *end == 'M')
		shift = 20, end++;
	else if (*end == 'g' || *end == 'G')
		shift = 30, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (errno || *end || !n || n > ULLONG_MAX >> shift)
		return false;
	*v = n << shift;
	return true;
}

#endif /* KMT_SIZE_H */
