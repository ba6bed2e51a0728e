/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report_output.h - kmemtrace-report's output (report.h says how the
 * parts fit): the rows in their order (--sort, --site), and the report
 * in each format: text, JSON, CSV (the call sites) and folded (for
 * flame graphs). The formats print what the analysis left in the
 * report and change nothing in it.
 */
#ifndef KMT_REPORT_OUTPUT_H
#define KMT_REPORT_OUTPUT_H

#include "report_analysis.h"

/* ---- The rows, in their order ----------------------------------------- */

static const char *const type_names[] = { "kmalloc", "kmem_cache", "pages" };

static const char *type_name(int t)
{
	if (t == TYPE_MIXED)
		return "mixed";
	return t >= 0 && t < NR_TYPES ? type_names[t] : "-";
}

static double pct(double part, __u64 whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* Bytes allocated beyond those requested: negative if a site got less. */
static long long frag(__u64 alloc, __u64 req)
{
	return (long long)(alloc - req);
}

static const char *const sort_names[] = { "bytes", "req", "hits", "frag", "cross", "live" };

static __u64 sort_value(enum sort_key key, const struct site *s)
{
	switch (key) {
	case SORT_REQ:
		return s->req;
	case SORT_HITS:
		return s->allocs + s->frees;
	case SORT_FRAG:
		/* Order by the signed value: offset so that less sorts lower. */
		return (__u64)frag(s->alloc, s->req) ^ (1ULL << 63);
	case SORT_CROSS:
		return s->cross;
	case SORT_LIVE:
		return s->live_bytes;
	default:
		return s->alloc;
	}
}

/* By the sort key @key points to (qsort_r()), then by call site and type. */
static int cmp_site(const void *a, const void *b, void *key)
{
	const struct site *x = *(const struct site * const *)a;
	const struct site *y = *(const struct site * const *)b;
	enum sort_key k = *(const enum sort_key *)key;
	__u64 vx = sort_value(k, x), vy = sort_value(k, y);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->call_site != y->call_site)
		return x->call_site < y->call_site ? -1 : 1;
	return x->type - y->type;
}

static int cmp_err(const void *a, const void *b)
{
	const struct err *x = *(const struct err * const *)a;
	const struct err *y = *(const struct err * const *)b;

	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->site1 != y->site1)
		return x->site1 < y->site1 ? -1 : 1;
	if (x->site2 != y->site2)
		return x->site2 < y->site2 ? -1 : 1;
	if (x->cache1 != y->cache1)
		return x->cache1 < y->cache1 ? -1 : 1;
	return x->cache2 < y->cache2 ? -1 : x->cache2 > y->cache2;
}

/* --site: the rows whose call site, as a symbol or in hex, contains it. */
static bool site_match(const struct report *rep, __u64 addr)
{
	char buf[320];

	if (!rep->site_filter)
		return true;
	if (strstr(symbolize(rep, addr, buf, sizeof(buf)), rep->site_filter))
		return true;
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
	return strstr(buf, rep->site_filter);
}

/* Caches by bytes allocated from them, then by type and size. */
static int cmp_cache(const void *a, const void *b)
{
	const struct cache *x = *(const struct cache * const *)a;
	const struct cache *y = *(const struct cache * const *)b;
	__u64 vx = x->allocs * x->size, vy = y->allocs * y->size;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->type != y->type)
		return x->type - y->type;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;	/* a total order */
}

/* The report's rows (rep->rows, err_rows, cache_rows), in their order. */
static void collect(struct report *rep)
{
	size_t i;

	rep->rows = xcalloc(rep->site_map.n + 1, sizeof(*rep->rows));
	for (i = 0; i < rep->site_map.n; i++)
		if (site_match(rep, rep->sites[i].call_site))
			rep->rows[rep->nrows++] = &rep->sites[i];
	qsort_r(rep->rows, rep->nrows, sizeof(*rep->rows), cmp_site, &rep->sort_key);
	rep->err_rows = xcalloc(rep->nerrs + 1, sizeof(*rep->err_rows));
	for (i = 0; i < rep->errs_cap; i++) {
		const struct err *e = &rep->errs[i];

		if (e->used && (site_match(rep, e->site1) ||
				(e->type2 >= 0 && site_match(rep, e->site2))))
			rep->err_rows[rep->nerr_rows++] = &rep->errs[i];
	}
	qsort(rep->err_rows, rep->nerr_rows, sizeof(*rep->err_rows), cmp_err);
	rep->cache_rows = xcalloc(rep->cache_map.n + 1, sizeof(*rep->cache_rows));
	for (i = 0; i < rep->cache_map.n; i++)
		rep->cache_rows[i] = &rep->caches[i];
	qsort(rep->cache_rows, rep->cache_map.n, sizeof(*rep->cache_rows), cmp_cache);
}

/* ---- Numbers and names, as the formats print them --------------------- */

/* @v bytes in 7 columns or fewer: 1023, 1.5K, 12.3M, 100G. */
static const char *human(__u64 v, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = v;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, len, "%llu", (unsigned long long)v);
		return buf;
	}
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, d < 10 ? "%.1f%c" : "%.0f%c", d, units[u]);
	return buf;
}

/* The name DIR/caches gives cache @id, or "cache #ID" if it has none. */
static const char *cache_label(const struct report *rep, __u64 id, char *buf, size_t len)
{
	const char *name = cache_name_of(rep, id);

	if (name)
		return name;
	snprintf(buf, len, "cache #%llu", (unsigned long long)id);
	return buf;
}

/*
 * A cache by its name in the capture's caches file, by its id if it is
 * not there, or a size class as the kernel names sizes:
 * kmalloc-8k, kmem_cache-192, pages-8k.
 */
static const char *cache_name(const struct report *rep, const struct cache *c, char *buf,
			      size_t len)
{
	static const char units[] = "kMGTPE";
	__u64 v = c->size;
	int u = -1;

	if (c->id)
		return cache_label(rep, c->id, buf, len);
	while (v >= 1024 && !(v % 1024) && u < 5) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%s-%llu", type_name(c->type), v);
	else
		snprintf(buf, len, "%s-%llu%c", type_name(c->type), v, units[u]);
	return buf;
}

/* ---- Text ------------------------------------------------------------ */

#define CACHE_NAME_MAX	32	/* text column; longer names are cut */

/* The non-empty buckets of a size histogram: " <16 3 <32 4". */
static void print_hist_text(const __u64 *hist)
{
	char b1[16];
	int b;

	for (b = 0; b < NR_BUCKETS; b++)
		if (hist[b])
			printf(" <%s %llu", b < 64 ? human(1ULL << b, b1, sizeof(b1)) : "16E",
			       hist[b]);
	printf("\n");
}

static void print_error_text(const struct report *rep, const struct err *e)
{
	char s1[320], s2[320], c1[320];

	switch (e->kind) {
	case ERR_MISMATCH:
		printf("%8llu x %s: %s %s freed as %s by %s\n", e->count,
		       err_names[e->kind], type_name(e->type1),
		       symbolize(rep, e->site1, s1, sizeof(s1)),
		       type_name(e->type2), symbolize(rep, e->site2, s2, sizeof(s2)));
		break;
	case ERR_DOUBLE:
		printf("%8llu x %s: %s freed by %s, again by %s %s\n", e->count,
		       err_names[e->kind], type_name(e->type1),
		       symbolize(rep, e->site1, s1, sizeof(s1)), type_name(e->type2),
		       symbolize(rep, e->site2, s2, sizeof(s2)));
		break;
	case ERR_UNKNOWN:
		printf("%8llu x %s: %s free by %s\n", e->count, err_names[e->kind],
		       type_name(e->type1), symbolize(rep, e->site1, s1, sizeof(s1)));
		break;
	case ERR_LESS:
		printf("%8llu x %s: %s by %s\n", e->count, err_names[e->kind],
		       type_name(e->type1), symbolize(rep, e->site1, s1, sizeof(s1)));
		break;
	case ERR_CACHE:
		printf("%8llu x %s: %s %s (%s) freed by %s %s", e->count,
		       err_names[e->kind], type_name(e->type1),
		       symbolize(rep, e->site1, s1, sizeof(s1)),
		       cache_label(rep, e->cache1, c1, sizeof(c1)),
		       type_name(e->type2), symbolize(rep, e->site2, s2, sizeof(s2)));
		printf(" (%s)\n", cache_label(rep, e->cache2, c1, sizeof(c1)));
		break;
	default:
		printf("%8llu x %s: %s by %s, again by %s %s\n", e->count,
		       err_names[e->kind], type_name(e->type1),
		       symbolize(rep, e->site1, s1, sizeof(s1)), type_name(e->type2),
		       symbolize(rep, e->site2, s2, sizeof(s2)));
		break;
	}
}

static void emit_text(const struct report *rep, long top)
{
	const struct kmt_capture *cap = &rep->cap;
	const struct totals *tot = &rep->tot;
	char sym[320], b1[16], b2[16], b3[16];
	size_t i, n = top < 0 || (size_t)top > rep->nrows ? rep->nrows : (size_t)top;
	int w = 9, t, b;
	bool any = false;

	printf("%llu events in %d files; %llu allocations, %llu failed, %llu frees\n",
	       cap->events, cap->nfiles, tot->allocs, tot->failed, tot->frees);
	if (cap->partial)
		printf("partial report: stopped by a signal after %llu events\n", cap->events);
	if (rep->rd.filtered)
		printf("%llu events left out by the filters\n", rep->rd.filtered);
	if (cap->loss.lost)
		printf("%llu events lost (missing sequence numbers, in %llu ranges): %s\n",
		       cap->loss.lost, cap->loss.ranges, "an error or leak may be one of them");
	kmt_loss_print_missed(&cap->loss, &cap->meta, stdout, "");
	if (cap->loss.before)
		printf("%llu events from before the capture, not checked for loss\n",
		       cap->loss.before);
	if (cap->loss.after)
		printf("%llu events numbered after the drain began, not checked for loss\n",
		       cap->loss.after);
	printf("requested %llu bytes, allocated %llu bytes, fragmentation %.1f%% (%lld bytes)\n",
	       tot->req, tot->alloc, pct(frag(tot->alloc, tot->req), tot->alloc),
	       frag(tot->alloc, tot->req));
	for (t = 0; t < NR_TYPES; t++)
		printf("  %-10s %9llu allocations %9llu frees, %s %llu, allocated %llu (%.1f%%)\n",
		       type_names[t], tot->type_allocs[t], tot->type_frees[t], "requested",
		       tot->type_req[t],
		       tot->type_alloc[t], pct(frag(tot->type_alloc[t], tot->type_req[t]),
					       tot->type_alloc[t]));
	printf("freed on another CPU: %llu of %llu frees (%.1f%%)\n", tot->cross, tot->frees,
	       pct(tot->cross, tot->frees));
	printf("still allocated at the end: %llu objects, %llu bytes\n", tot->live,
	       tot->live_bytes);
	if (rep->rd.unknown_ids)
		printf("%llu events of a newer ABI skipped\n", rep->rd.unknown_ids);
	printf("errors:");
	for (t = 0; t < NR_ERR; t++)
		printf(" %s %llu%s", err_names[t], rep->err_totals[t], t + 1 < NR_ERR ? "," : "\n");
	if (rep->freed_forgotten)
		printf("%llu freed pointers forgotten (the last %lu always remembered): %s\n",
		       rep->freed_forgotten, (unsigned long)(FREED_MAX_SLOTS / 4),
		       "a double free of one counts as a free of an unknown pointer");

	/* The call site column: as wide as its longest name, or the terminal allows. */
	for (i = 0; i < n; i++) {
		int l = strlen(symbolize(rep, rep->rows[i]->call_site, sym, sizeof(sym)));

		if (l > w)
			w = l;
	}
	if (rep->text_width && w > rep->text_width - 78)
		w = rep->text_width - 78 < 16 ? 16 : rep->text_width - 78;
	printf("\n%-*s %-10s %9s %9s %7s %7s %6s %7s %7s %7s\n", w, "call site", "type",
	       "allocs", "frees", "req", "alloc", "frag%", "x-cpu", "live", "live B");
	for (i = 0; i < n; i++) {
		const struct site *s = rep->rows[i];

		printf("%-*.*s %-10s %9llu %9llu %7s %7s %6.1f %7llu %7llu %7s\n", w, w,
		       symbolize(rep, s->call_site, sym, sizeof(sym)), type_name(s->type),
		       s->allocs, s->frees, human(s->req, b1, sizeof(b1)),
		       human(s->alloc, b2, sizeof(b2)),
		       pct(frag(s->alloc, s->req), s->alloc), s->cross, s->live,
		       human(s->live_bytes, b3, sizeof(b3)));
	}
	if (n < rep->nrows)
		printf("... %zu more call sites (--top)\n", rep->nrows - n);

	for (i = 0; i < rep->nrows && (top < 0 || i < (size_t)top); i++)
		any |= rep->rows[i]->live != 0;
	if (any) {
		printf("\nstill allocated at the end, by call site: objects, bytes, oldest (s)\n");
		for (i = 0, b = 0; i < rep->nrows && (top < 0 || b < top); i++) {
			const struct site *s = rep->rows[i];

			if (!s->live)
				continue;
			printf("  %-*s %-10s %9llu %9llu ", w,
			       symbolize(rep, s->call_site, sym, sizeof(sym)), type_name(s->type),
			       s->live, s->live_bytes);
			if (rep->rd.timed)
				printf("%10.6f\n", s->oldest / 1e9);
			else
				printf("%10s\n", "-");	/* no time stamps */
			b++;
		}
	}
	if (rep->nerr_rows) {
		printf("\n");
		for (i = 0; i < rep->nerr_rows && (top < 0 || i < (size_t)top); i++)
			print_error_text(rep, rep->err_rows[i]);
		if (top >= 0 && rep->nerr_rows > (size_t)top)
			printf("... %zu more (--top)\n", rep->nerr_rows - top);
	}
	if (rep->cache_map.n) {
		int w = 15;

		for (i = 0; i < rep->cache_map.n && (top < 0 || i < (size_t)top); i++) {
			int n = strlen(cache_name(rep, rep->cache_rows[i], sym, sizeof(sym)));

			if (n > w)
				w = n < CACHE_NAME_MAX ? n : CACHE_NAME_MAX;
		}
		printf("\n%-*s %9s %9s %7s %7s %6s %7s %7s\n", w, "cache", "allocs", "frees",
		       "req", "alloc", "frag%", "live", "live B");
		for (i = 0; i < rep->cache_map.n && (top < 0 || i < (size_t)top); i++) {
			const struct cache *c = rep->cache_rows[i];
			__u64 bytes = c->allocs * c->size;

			printf("%-*.*s %9llu %9llu %7s %7s %6.1f %7llu %7s\n", w, CACHE_NAME_MAX,
			       cache_name(rep, c, sym, sizeof(sym)), c->allocs, c->frees,
			       human(c->req, b1, sizeof(b1)), human(bytes, b2, sizeof(b2)),
			       pct(frag(bytes, c->req), bytes), c->live,
			       human(c->live_bytes, b3, sizeof(b3)));
		}
		if (top >= 0 && rep->cache_map.n > (size_t)top)
			printf("... %zu more (--top)\n", rep->cache_map.n - top);
	}
	printf("\nallocations by requested size (bytes):\n");
	for (t = 0; t < NR_TYPES; t++) {
		if (!tot->type_allocs[t])
			continue;
		printf("  %s:", type_names[t]);
		print_hist_text(tot->hist[t]);
	}
	if (!rep->show_sizes)
		return;
	printf("\nallocations by requested size (bytes) and call site:\n");
	for (i = 0; i < n; i++) {
		const struct site *s = rep->rows[i];

		if (!s->allocs)
			continue;
		printf("  %s %s:", symbolize(rep, s->call_site, sym, sizeof(sym)),
		       type_name(s->type));
		print_hist_text(&rep->site_hist[(s - rep->sites) * NR_BUCKETS]);
	}
}

/* ---- JSON, CSV, folded ----------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* A size histogram: [[upper bound (exclusive), count], ...], non-empty buckets only. */
static void json_hist(const __u64 *hist)
{
	bool first = true;
	int b;

	printf("[");
	for (b = 0; b < NR_BUCKETS; b++) {
		if (!hist[b])
			continue;
		if (b < 64)
			printf("%s[%llu, %llu]", first ? "" : ", ", 1ULL << b, hist[b]);
		else	/* 2^64, more than most JSON readers take */
			printf("%s[null, %llu]", first ? "" : ", ", hist[b]);
		first = false;
	}
	printf("]");
}

static void emit_json(const struct report *rep, long top)
{
	const struct kmt_capture *cap = &rep->cap;
	const struct totals *tot = &rep->tot;
	char sym[320];
	size_t i, n = top < 0 || (size_t)top > rep->nrows ? rep->nrows : (size_t)top;
	int t;

	printf("{\n  \"events\": %llu, \"files\": %d, \"filtered\": %llu, \"newer_abi\": %llu,\n",
	       cap->events, cap->nfiles, rep->rd.filtered, rep->rd.unknown_ids);
	printf("  \"partial\": %s,\n", cap->partial ? "true" : "false");
	printf("  \"lost_events\": %llu,\n", cap->loss.lost);
	printf("  \"lost_ranges\": %llu, \"before_capture\": %llu, \"after_drain\": %llu,\n",
	       cap->loss.ranges, cap->loss.before, cap->loss.after);
	/* Whether --top cut the lists below, and how long they are whole. */
	if (top < 0)
		printf("  \"top\": null, ");
	else
		printf("  \"top\": %ld, ", top);
	printf("\"cut\": %s,\n",
	       top >= 0 && ((size_t)top < rep->nrows || (size_t)top < rep->cache_map.n ||
			    (size_t)top < rep->nerr_rows) ? "true" : "false");
	printf("  \"rows\": { \"sites\": %zu, \"caches\": %zu, \"error_sites\": %zu },\n",
	       rep->nrows, rep->cache_map.n, rep->nerr_rows);
	printf("  \"allocations\": %llu, \"failed\": %llu, \"frees\": %llu,\n", tot->allocs,
	       tot->failed, tot->frees);
	printf("  \"bytes_req\": %llu, \"bytes_alloc\": %llu, \"cross_cpu_frees\": %llu,\n",
	       tot->req, tot->alloc, tot->cross);
	printf("  \"live\": %llu, \"live_bytes\": %llu,\n  \"types\": {", tot->live,
	       tot->live_bytes);
	for (t = 0; t < NR_TYPES; t++) {
		printf("%s\n    \"%s\": { \"allocations\": %llu, \"frees\": %llu, ", t ? "," : "",
		       type_names[t], tot->type_allocs[t], tot->type_frees[t]);
		printf("\"bytes_req\": %llu, \"bytes_alloc\": %llu,\n      \"sizes\": ",
		       tot->type_req[t], tot->type_alloc[t]);
		json_hist(tot->hist[t]);
		printf(" }");
	}
	printf("\n  },\n  \"errors\": {");
	for (t = 0; t < NR_ERR; t++)
		printf("%s \"%s\": %llu", t ? "," : "", err_names[t], rep->err_totals[t]);
	printf(" },\n  \"freed_forgotten\": %llu,\n  \"sites\": [", rep->freed_forgotten);
	for (i = 0; i < n; i++) {
		const struct site *s = rep->rows[i];

		printf("%s\n    { \"call_site\": \"0x%llx\", \"symbol\": ", i ? "," : "",
		       (unsigned long long)s->call_site);
		json_str(symbolize(rep, s->call_site, sym, sizeof(sym)));
		printf(", \"type\": \"%s\", \"allocations\": %llu, \"failed\": %llu,",
		       type_name(s->type), s->allocs, s->failed);
		printf(" \"frees\": %llu,", s->frees);
		printf(" \"bytes_req\": %llu, \"bytes_alloc\": %llu, \"cross_cpu_frees\": %llu,",
		       s->req, s->alloc, s->cross);
		printf(" \"live\": %llu, \"live_bytes\": %llu, \"oldest_live_ns\": ", s->live,
		       s->live_bytes);
		if (rep->rd.timed)
			printf("%llu,", s->oldest);
		else
			printf("null,");	/* no time stamps */
		printf("\n      \"sizes\": ");
		json_hist(&rep->site_hist[(s - rep->sites) * NR_BUCKETS]);
		printf(" }");
	}
	printf("\n  ],\n  \"caches\": [");
	for (i = 0; i < rep->cache_map.n && (top < 0 || i < (size_t)top); i++) {
		const struct cache *c = rep->cache_rows[i];

		printf("%s\n    { \"name\": ", i ? "," : "");
		json_str(cache_name(rep, c, sym, sizeof(sym)));
		if (c->id)
			printf(", \"id\": %llu", (unsigned long long)c->id);
		printf(", \"type\": \"%s\", \"size\": %llu,", type_name(c->type), c->size);
		printf(" \"allocations\": %llu, \"frees\": %llu, \"bytes_req\": %llu,", c->allocs,
		       c->frees, c->req);
		printf(" \"bytes_alloc\": %llu, \"live\": %llu, \"live_bytes\": %llu }",
		       c->allocs * c->size, c->live, c->live_bytes);
	}
	printf("\n  ],\n  \"error_sites\": [");
	for (i = 0; i < rep->nerr_rows && (top < 0 || i < (size_t)top); i++) {
		const struct err *e = rep->err_rows[i];

		printf("%s\n    { \"kind\": \"%s\", \"count\": %llu, \"type\": \"%s\", \"site\": ",
		       i ? "," : "", err_names[e->kind], e->count, type_name(e->type1));
		json_str(symbolize(rep, e->site1, sym, sizeof(sym)));
		if (e->type2 >= 0 && e->kind != ERR_LESS) {
			printf(", \"other_type\": \"%s\", \"other_site\": ", type_name(e->type2));
			json_str(symbolize(rep, e->site2, sym, sizeof(sym)));
		}
		if (e->kind == ERR_CACHE) {
			printf(", \"cache\": ");
			json_str(cache_label(rep, e->cache1, sym, sizeof(sym)));
			printf(", \"other_cache\": ");
			json_str(cache_label(rep, e->cache2, sym, sizeof(sym)));
		}
		printf(" }");
	}
	printf("\n  ]\n}\n");
}

/* A field that may hold a comma or a quote, as RFC 4180 quotes it. */
static void csv_str(const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void emit_csv(const struct report *rep, long top)
{
	char sym[320];
	size_t i, n = top < 0 || (size_t)top > rep->nrows ? rep->nrows : (size_t)top;

	printf("call_site,symbol,type,allocations,failed,frees,bytes_req,bytes_alloc,");
	printf("cross_cpu_frees,live,live_bytes,oldest_live_ns\n");
	for (i = 0; i < n; i++) {
		const struct site *s = rep->rows[i];

		printf("0x%llx,", (unsigned long long)s->call_site);
		csv_str(symbolize(rep, s->call_site, sym, sizeof(sym)));
		printf(",%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,", type_name(s->type),
		       s->allocs, s->failed, s->frees, s->req, s->alloc, s->cross, s->live,
		       s->live_bytes);
		if (rep->rd.timed)
			printf("%llu", s->oldest);
		printf("\n");
	}
}

/* For flame graph tools: "function;type bytes", the bytes allocated. */
static void emit_folded(const struct report *rep, long top)
{
	char sym[320], *plus;
	size_t i, n = top < 0 || (size_t)top > rep->nrows ? rep->nrows : (size_t)top;

	for (i = 0; i < n; i++) {
		const struct site *s = rep->rows[i];

		if (!s->alloc)
			continue;
		symbolize(rep, s->call_site, sym, sizeof(sym));
		plus = strchr(sym, '+');
		if (plus)
			*plus = '\0';
		printf("%s;%s %llu\n", sym, type_name(s->type), s->alloc);
	}
}

#endif /* KMT_REPORT_OUTPUT_H */
