/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report_read.h - kmemtrace-report's inputs (report.h says how the
 * parts fit): the symbols (DIR/kallsyms or --kallsyms), the cache names
 * (DIR/caches), and the capture's events in sequence order through the
 * filters. The CPU files are read and merged by kmt_capture.h, the
 * events lost counted by kmt_loss.h, as kmemtrace-check does.
 */
#ifndef KMT_REPORT_READ_H
#define KMT_REPORT_READ_H

#include "report.h"

/* ---- Symbols ---------------------------------------------------------- */

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A kallsyms or System.map file: "ADDR TYPE NAME [module]" lines; text only. */
static bool load_symbols(struct report *rep, const char *path)
{
	char *text = kmt_slurp(path, NULL), *line, *save;
	size_t cap = 0;

	if (!text)
		return false;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (rep->nsyms == cap) {
			cap = cap ? 2 * cap : 65536;
			rep->syms = realloc(rep->syms, cap * sizeof(*rep->syms));
			if (!rep->syms)
				die(KMT_EXIT_USAGE, "out of memory");
		}
		rep->syms[rep->nsyms].addr = addr;
		rep->syms[rep->nsyms].name = strdup(name);
		if (!rep->syms[rep->nsyms].name)
			die(KMT_EXIT_USAGE, "out of memory");
		rep->nsyms++;
	}
	free(text);
	if (rep->nsyms)
		qsort(rep->syms, rep->nsyms, sizeof(*rep->syms), cmp_sym);
	return true;
}

/* @addr as function+0xoff, or in hex if no symbol holds it. */
static const char *symbolize(const struct report *rep, __u64 addr, char *buf, size_t len)
{
	size_t lo = 0, hi = rep->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rep->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Past the last symbol by more than 1 MiB: not in the kernel's text. */
	if (!lo || addr - rep->syms[lo - 1].addr > 1024 * 1024)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else
		snprintf(buf, len, "%s+0x%llx", rep->syms[lo - 1].name,
			 (unsigned long long)(addr - rep->syms[lo - 1].addr));
	return buf;
}

/* ---- The caches file (struct cache_name) ----------------------------- */

static int cmp_cache_name(const void *a, const void *b)
{
	const struct cache_name *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;	/* the first line wins */
}

/*
 * A name as kmemtrace/caches writes it, with seq_escape()'s \ooo for a
 * backslash or a newline: escapes of printable characters are decoded,
 * others kept, so that a name stays on one line of the report.
 */
static void unescape_name(char *s)
{
	char *o = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			int c = (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');

			if (c >= 0x20 && c < 0x7f) {
				*o++ = c;
				s += 4;
				continue;
			}
		}
		*o++ = *s++;
	}
	*o = 0;
}

static bool load_cache_names(struct report *rep, const char *path)
{
	char *text = kmt_slurp(path, NULL), *line, *save;
	size_t cap = 0;

	if (!text)
		return false;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long id;
		unsigned int osize, size;
		size_t len = strlen(line);
		int off = 0;

		while (len && isspace((unsigned char)line[len - 1]))
			line[--len] = 0;	/* a CR of a file copied through Windows */
		if (line[0] == '#' ||
		    sscanf(line, "%llu %u %u %n", &id, &osize, &size, &off) != 3 ||
		    !off || !line[off])
			continue;
		if (rep->ncache_names == cap) {
			cap = cap ? 2 * cap : 256;
			rep->cache_names = realloc(rep->cache_names,
						   cap * sizeof(*rep->cache_names));
			if (!rep->cache_names)
				die(KMT_EXIT_USAGE, "out of memory");
		}
		rep->cache_names[rep->ncache_names].id = id;
		rep->cache_names[rep->ncache_names].line = rep->ncache_names;
		rep->cache_names[rep->ncache_names].name = strdup(line + off);
		if (!rep->cache_names[rep->ncache_names].name)
			die(KMT_EXIT_USAGE, "out of memory");
		unescape_name(rep->cache_names[rep->ncache_names].name);
		rep->ncache_names++;
	}
	free(text);
	if (rep->ncache_names)
		qsort(rep->cache_names, rep->ncache_names, sizeof(*rep->cache_names),
		      cmp_cache_name);
	return true;
}

static const char *cache_name_of(const struct report *rep, __u64 id)
{
	size_t lo = 0, hi = rep->ncache_names;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rep->cache_names[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rep->ncache_names && rep->cache_names[lo].id == id ?
	       rep->cache_names[lo].name : NULL;
}

/* ---- Reading the CPU files, merged by sequence number --------------- */

/* Whether the filters (struct report_filter) leave @e of @cpu out. */
static inline bool filtered(struct report_filter *filt, const struct kmt_event *e, int cpu)
{
	if (e->has_time && !filt->have_base) {
		filt->base = e->time;
		filt->have_base = true;
	}
	/* Signed: CPUs' clocks may put an event a little before the first. */
	return (filt->type >= 0 && e->type_id != filt->type) ||
	       (filt->cpu >= 0 && cpu != filt->cpu) ||
	       (filt->windowed && (!e->has_time || (__s64)(e->time - filt->base) < 0 ||
				   e->time - filt->base < filt->from ||
				   e->time - filt->base >= filt->to));
}

static inline void to_rec(const struct kmt_event *e, int cpu, struct rec *r)
{
	r->call_site = e->call_site;
	r->ptr = e->ptr;
	r->bytes_req = e->bytes_req;
	r->bytes_alloc = e->bytes_alloc;
	r->time = e->time;
	r->cache = e->cache;
	r->cpu = cpu;
	r->event_id = e->event_id;
	r->type_id = e->type_id;
}

static __always_inline
unsigned int read_recs_order(struct report *rep, struct rec *r, unsigned int max, const bool swap)
{
	unsigned int n = 0;
	struct kmt_event e;

	while (n < max && kmt_capture_next(&rep->cap, &e, swap)) {
		if (e.unknown) {
			rep->rd.unknown_ids++;
		} else if (filtered(&rep->filt, &e, rep->cap.cur->cpu)) {
			rep->rd.filtered++;
		} else {
			to_rec(&e, rep->cap.cur->cpu, &r[n++]);
			if (e.has_time) {
				rep->rd.last_time = e.time;
				rep->rd.timed = true;
			}
		}
	}
	return n;
}

/*
 * Up to @max of the next events that pass the filters, in sequence
 * order, into @r; fewer only at the end of the capture or at an error.
 * The loop comes in two copies, one per byte order.
 */
static unsigned int read_recs(struct report *rep, struct rec *r, unsigned int max)
{
	return rep->cap.meta.swap ? read_recs_order(rep, r, max, true) :
				    read_recs_order(rep, r, max, false);
}

#endif /* KMT_REPORT_READ_H */
