/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Class masks on the command line of the kmemtrace tools: a number
 * (0x80000) or class names separated by commas (sched,kmalloc).
 */
#ifndef KMT_CLASSES_H
#define KMT_CLASSES_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Whether @s is a number rather than a list of names. A sign too: "-1"
 * is a bad mask (kmt_parse_classes() says so), not a class named "-1".
 */
static inline int kmt_classes_numeric(const char *s)
{
	return isdigit((unsigned char)*s) || *s == '-' || *s == '+';
}

/*
 * kmt_parse_classes() - the mask @s gives
 * @names: the name of each of the 64 class bits, NULL for none
 * @mask: the result
 * @bad: on -ENOENT, the first unknown name (@badlen bytes)
 *
 * Return: 0; -EINVAL if a number is not a 64-bit mask (a negative one
 * neither); -ENOENT for an unknown name. A mask of 0 is the caller's to
 * judge.
 */
static inline int kmt_parse_classes(const char *s, const char *const names[64],
				    uint64_t *mask, char *bad, size_t badlen)
{
	char *copy, *tok, *save, *end;
	unsigned int bit;

	*mask = 0;
	if (kmt_classes_numeric(s)) {
		/* strtoull() would take "-1" for ~0: a mask has no sign. */
		if (*s == '-')
			return -EINVAL;
		errno = 0;
		*mask = strtoull(s, &end, 0);
		return errno || *end ? -EINVAL : 0;
	}
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (bit = 0; bit < 64; bit++)
			if (names[bit] && !strcmp(names[bit], tok))
				break;
		if (bit == 64) {
			snprintf(bad, badlen, "%s", tok);
			free(copy);
			return -ENOENT;
		}
		*mask |= 1ULL << bit;
	}
	free(copy);
	return 0;
}

#endif /* KMT_CLASSES_H */
