/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report of debugfs kmemtrace/alloc_selftest's "run": one line per
 * allocation or free it made, for the kmemtrace kselftests to find in
 * what kmemtrace logged (Documentation/trace/kmemtrace.rst).
 */
#ifndef KMT_SELFTEST_ALLOC_REPORT_H
#define KMT_SELFTEST_ALLOC_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * "alloc TYPE FUNC PTR REQ SIZE GFP NODE CTX" or "free TYPE FUNC PTR CTX":
 * FUNC is the call site's function, "*" where it is not fixed.
 */
struct alloc_line {
	bool alloc;
	unsigned int type, gfp, ctx;
	char func[64];
	unsigned long long ptr, req, size;
	int node;
};

/* False if @line is not a whole line of either form. */
static inline bool parse_alloc_line(const char *line, struct alloc_line *l)
{
	char what[8];

	memset(l, 0, sizeof(*l));
	if (!strncmp(line, "alloc ", 6)) {
		l->alloc = true;
		return sscanf(line, "%7s %u %63s %llx %llu %llu %x %d %u", what, &l->type,
			      l->func, &l->ptr, &l->req, &l->size, &l->gfp, &l->node,
			      &l->ctx) == 9;
	}
	return sscanf(line, "%7s %u %63s %llx %u", what, &l->type, l->func, &l->ptr,
		      &l->ctx) == 5;
}

/* A line of a caches file (debugfs or a capture's): id, sizes, name. */
struct cache_line {
	unsigned long long id;
	unsigned int object_size, size;
	char name[64];
};

/* Every cache of the caches file @path; NULL if it cannot be read. */
static inline struct cache_line *load_caches(const char *path, size_t *n)
{
	struct cache_line *c = NULL, *nc, l;
	size_t cap = 0;
	char line[256];
	FILE *f = fopen(path, "r");

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' ||
		    sscanf(line, "%llu %u %u %63[^\n]", &l.id, &l.object_size, &l.size,
			   l.name) != 4)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			nc = realloc(c, cap * sizeof(*c));
			if (!nc)
				break;
			c = nc;
		}
		c[(*n)++] = l;
	}
	fclose(f);
	return c ? c : calloc(1, sizeof(*c));
}

/*
 * Whether @bytes_alloc, the size an event reports, is right for an
 * allocation whose ksize() the trigger reported as @usable: the same,
 * or, on a kernel whose slabs carry debugging metadata (KASAN, red
 * zones), the size of a cache whose object size is @usable. ksize()
 * then gives the object size, while the events, as ftrace's kmem
 * events, give the slab's size per object, metadata included.
 */
static inline bool slab_size_ok(const struct cache_line *c, size_t n,
				unsigned long long usable, unsigned long long bytes_alloc)
{
	size_t i;

	if (usable == bytes_alloc)
		return true;
	for (i = 0; i < n; i++)
		if (c[i].object_size == usable && c[i].size == bytes_alloc)
			return true;
	return false;
}

#endif /* KMT_SELFTEST_ALLOC_REPORT_H */
