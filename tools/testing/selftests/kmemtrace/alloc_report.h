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

#endif /* KMT_SELFTEST_ALLOC_REPORT_H */
