/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text symbols of a kallsyms file (/proc/kallsyms, or the copy kmemtraced
 * saves with a capture), for the kmemtrace kselftests to name call sites.
 */
#ifndef KMT_SELFTEST_KSYMS_H
#define KMT_SELFTEST_KSYMS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sym {
	unsigned long long addr;
	char name[128];
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The text symbols of @path, sorted by address; NULL if unreadable. */
static struct sym *load_syms(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	struct sym *syms = NULL;
	char line[512];
	size_t cap = 0;

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char type, name[128];
		unsigned long long addr;

		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		if (*n == cap) {
			struct sym *ns;

			cap = cap ? cap * 2 : 65536;
			ns = realloc(syms, cap * sizeof(*syms));
			if (!ns) {
				/* Out of memory: as unreadable, not a partial table. */
				free(syms);
				fclose(f);
				*n = 0;
				return NULL;
			}
			syms = ns;
		}
		syms[*n].addr = addr;
		snprintf(syms[*n].name, sizeof(syms[*n].name), "%s", name);
		(*n)++;
	}
	fclose(f);
	if (syms)
		qsort(syms, *n, sizeof(*syms), cmp_sym);
	return syms;
}

/* The function holding @addr, without a .constprop/.isra suffix. */
static const char *resolve(const struct sym *syms, size_t n, unsigned long long addr,
			   char *buf, size_t len)
{
	size_t lo = 0, hi = n;
	char *dot;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (!n || syms[lo].addr > addr)
		return "?";
	snprintf(buf, len, "%s", syms[lo].name);
	dot = strchr(buf, '.');
	if (dot)
		*dot = '\0';
	return buf;
}

#endif /* KMT_SELFTEST_KSYMS_H */
