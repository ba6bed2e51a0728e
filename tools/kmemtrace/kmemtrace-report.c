// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtrace-report - what a kmemtraced capture says about the kernel's
 * allocations (Documentation/trace/kmemtrace.rst): memory allocated and
 * fragmentation per call site and in total, cross-CPU frees, errors
 * (mismatched frees, frees of unknown pointers, allocations of less than
 * asked) with both call sites, and what was still allocated at the end.
 *
 *   kmemtrace-report [OPTIONS] DIR
 *
 * The CPU files are merged by sequence number as they are read, a buffer
 * per file: memory grows with the call sites and the live allocations,
 * not with the events.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmt_events.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_FILES	4096
#define READ_CHUNK	(1024 * 1024)
#define EVENT_MAX	65535

static const char *prog = "kmemtrace-report";

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die(2, "out of memory");
	return p;
}

/* ---- The capture's meta file --------------------------------------- */

struct meta {
	int abi_version, word_size;
	bool swap, have_start;
	__u64 start_seq;
	char files[MAX_FILES][16];
	int nfiles;
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				die(2, "out of memory");
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static void read_meta(const char *dir, struct meta *m)
{
	const uint16_t one = 1;
	bool little_host = *(const uint8_t *)&one, have_endian = false;
	char path[PATH_MAX], *text, *line, *save;

	snprintf(path, sizeof(path), "%s/meta", dir);
	text = slurp(path, NULL);
	if (!text)
		die(2, "%s: %s (not a kmemtraced capture?)", path, strerror(errno));
	memset(m, 0, sizeof(*m));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64], val[4096];

		if (line[0] == '#' || sscanf(line, "%63s %4095[^\n]", key, val) != 2)
			continue;
		if (!strcmp(key, "abi_version")) {
			m->abi_version = atoi(val);
		} else if (!strcmp(key, "endianness")) {
			if (strcmp(val, "little") && strcmp(val, "big"))
				die(2, "%s: endianness \"%s\" is not little or big", path, val);
			m->swap = !strcmp(val, "little") != little_host;
			have_endian = true;
		} else if (!strcmp(key, "word_size")) {
			m->word_size = atoi(val);
		} else if (!strcmp(key, "start_seq")) {
			m->start_seq = strtoull(val, NULL, 10);
			m->have_start = true;
		} else if (!strcmp(key, "cpu_files")) {
			char *tok, *s2;

			for (tok = strtok_r(val, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
				if (m->nfiles == MAX_FILES)
					die(2, "%s: more than %d cpu files", path, MAX_FILES);
				if (strncmp(tok, "cpu", 3) || strlen(tok) >= sizeof(m->files[0]))
					die(2, "%s: \"%s\" is not a cpu<n> file name", path, tok);
				snprintf(m->files[m->nfiles++], sizeof(m->files[0]), "%s", tok);
			}
		}
	}
	free(text);
	if (!have_endian)
		die(2, "%s: no endianness line", path);
	if (m->abi_version < 1)
		die(2, "%s: no abi_version line", path);
	if (m->abi_version > KMEMTRACE_ABI_VERSION)
		fprintf(stderr, "%s: %s: ABI %d is newer than this tool's %d; %s\n", prog, path,
			m->abi_version, KMEMTRACE_ABI_VERSION, "unknown events are skipped");
	if (m->word_size && m->word_size != 64)
		die(2, "%s: word size %d: only 64-bit captures are understood", path,
		    m->word_size);
}

/* ---- Symbols ------------------------------------------------------- */

struct sym {
	__u64 addr;
	char *name;
};

static struct sym *syms;
static size_t nsyms;

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A kallsyms or System.map file: "ADDR TYPE NAME [module]" lines; text only. */
static bool load_symbols(const char *path)
{
	char *text = slurp(path, NULL), *line, *save;
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
		if (nsyms == cap) {
			cap = cap ? 2 * cap : 65536;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				die(2, "out of memory");
		}
		syms[nsyms].addr = addr;
		syms[nsyms].name = strdup(name);
		if (!syms[nsyms].name)
			die(2, "out of memory");
		nsyms++;
	}
	free(text);
	qsort(syms, nsyms, sizeof(*syms), cmp_sym);
	return true;
}

/* @addr as function+0xoff, or in hex if no symbol holds it. */
static const char *symbolize(__u64 addr, char *buf, size_t len)
{
	size_t lo = 0, hi = nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Past the last symbol by more than 1 MiB: not in the kernel's text. */
	if (!lo || addr - syms[lo - 1].addr > 1024 * 1024)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else
		snprintf(buf, len, "%s+0x%llx", syms[lo - 1].name,
			 (unsigned long long)(addr - syms[lo - 1].addr));
	return buf;
}

/* ---- Hash tables ---------------------------------------------------- */

static __u64 mix(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Per call site and type. */
struct site {
	__u64 call_site;
	int type;
	bool used;
	__u64 allocs, failed, frees, req, alloc, cross;
	__u64 live, live_bytes, oldest;	/* at the end */
};

static struct site *sites;
static size_t sites_cap, nsites;

static size_t site_get(__u64 call_site, int type);

/* The site's entry; the pointer lasts until the next call. */
static struct site *site_of(__u64 call_site, int type)
{
	size_t i = site_get(call_site, type);

	return &sites[i];
}

static void sites_grow(void)
{
	struct site *old = sites;
	size_t i, old_cap = sites_cap;

	sites_cap = sites_cap ? 2 * sites_cap : 1024;
	sites = xcalloc(sites_cap, sizeof(*sites));
	nsites = 0;
	for (i = 0; i < old_cap; i++)
		if (old[i].used)
			*site_of(old[i].call_site, old[i].type) = old[i];
	free(old);
}

static size_t site_get(__u64 call_site, int type)
{
	size_t i;

	if (2 * (nsites + 1) > sites_cap)
		sites_grow();
	i = mix(call_site ^ ((__u64)type << 62)) & (sites_cap - 1);
	for (;; i = (i + 1) & (sites_cap - 1)) {
		if (!sites[i].used) {
			sites[i].used = true;
			sites[i].call_site = call_site;
			sites[i].type = type;
			nsites++;
			return i;
		}
		if (sites[i].call_site == call_site && sites[i].type == type)
			return i;
	}
}

/*
 * Live allocations by pointer. Linear probing with deletion by backward
 * shift: the table holds live objects only. Sites are named by call
 * site and type rather than by index, which a growing site table moves.
 */
struct live {
	__u64 ptr, call_site, req, alloc, time;
	int type, cpu;
	bool used;
};

static struct live *lives;
static size_t lives_cap, nlives;

static size_t live_slot(__u64 ptr)
{
	size_t i;

	for (i = mix(ptr) & (lives_cap - 1); lives[i].used && lives[i].ptr != ptr;
	     i = (i + 1) & (lives_cap - 1))
		;
	return i;
}

static void lives_grow(void)
{
	struct live *old = lives;
	size_t i, old_cap = lives_cap;

	lives_cap = lives_cap ? 2 * lives_cap : 1 << 16;
	lives = xcalloc(lives_cap, sizeof(*lives));
	for (i = 0; i < old_cap; i++)
		if (old[i].used)
			lives[live_slot(old[i].ptr)] = old[i];
	free(old);
}

static struct live *live_find(__u64 ptr)
{
	struct live *l;

	if (!lives_cap)
		return NULL;
	l = &lives[live_slot(ptr)];
	return l->used ? l : NULL;
}

static struct live *live_add(__u64 ptr)
{
	struct live *l;

	if (2 * (nlives + 1) > lives_cap)
		lives_grow();
	l = &lives[live_slot(ptr)];
	if (!l->used) {
		nlives++;
		l->used = true;
		l->ptr = ptr;
	}
	return l;
}

static void live_del(struct live *l)
{
	size_t i = l - lives, j = i;

	l->used = false;
	nlives--;
	for (;;) {
		size_t home;

		j = (j + 1) & (lives_cap - 1);
		if (!lives[j].used)
			return;
		home = mix(lives[j].ptr) & (lives_cap - 1);
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? home <= i || home > j : home <= i && home > j) {
			lives[i] = lives[j];
			lives[j].used = false;
			i = j;
		}
	}
}

/* ---- Errors ---------------------------------------------------------- */

enum err_kind {
	ERR_MISMATCH,	/* freed with another type's free function */
	ERR_UNKNOWN,	/* free of a pointer not allocated in the capture */
	ERR_LESS,	/* allocated less than requested */
	ERR_REALLOC,	/* allocated again while still allocated */
	NR_ERR
};

static const char *const err_names[NR_ERR] = {
	"mismatched free", "free of unknown pointer", "allocated < requested",
	"allocated twice",
};

struct err {
	int kind, type1, type2;
	__u64 site1, site2, count;
	bool used;
};

static struct err *errs;
static size_t errs_cap, nerrs;
static __u64 err_totals[NR_ERR];

static __u64 err_hash(const struct err *e)
{
	return mix(e->site1 ^ mix(e->site2 ^ ((__u64)e->kind << 16 |
					      (__u64)(e->type1 & 0xff) << 8 | (e->type2 & 0xff))));
}

static bool err_same(const struct err *a, const struct err *b)
{
	return a->kind == b->kind && a->type1 == b->type1 && a->type2 == b->type2 &&
	       a->site1 == b->site1 && a->site2 == b->site2;
}

/* The slot of @k: its entry, or the free slot where it goes. */
static struct err *err_slot(const struct err *k)
{
	size_t i;

	for (i = err_hash(k) & (errs_cap - 1); errs[i].used && !err_same(&errs[i], k);
	     i = (i + 1) & (errs_cap - 1))
		;
	return &errs[i];
}

static void note_err(int kind, int type1, __u64 site1, int type2, __u64 site2)
{
	struct err k = { .kind = kind, .type1 = type1, .type2 = type2,
			 .site1 = site1, .site2 = site2, .used = true };
	struct err *e;

	err_totals[kind]++;
	if (2 * (nerrs + 1) > errs_cap) {
		struct err *old = errs;
		size_t j, old_cap = errs_cap;

		errs_cap = errs_cap ? 2 * errs_cap : 256;
		errs = xcalloc(errs_cap, sizeof(*errs));
		for (j = 0; j < old_cap; j++)
			if (old[j].used)
				*err_slot(&old[j]) = old[j];
		free(old);
	}
	e = err_slot(&k);
	if (!e->used) {
		*e = k;
		nerrs++;
	}
	e->count++;
}

/* ---- Reading the CPU files, merged by sequence number --------------- */

struct input {
	FILE *f;
	char path[PATH_MAX];
	int cpu;
	unsigned char *buf;
	size_t len, off;
	unsigned long long file_off;	/* of buf[0] */
	bool have;
	struct kmt_event ev;
	__s64 seq;			/* unwrapped */
	bool first;
};

static struct input inputs[MAX_FILES];
static int ninputs;
static bool swap;
static bool have_ref;
static int32_t ref;

/* Reads the next event of @in into in->ev; in->have says if there was one. */
static void next_event(struct input *in)
{
	const char *err;
	unsigned int size;

	for (;;) {
		size_t avail = in->len - in->off;

		size = kmt_peek_size(in->buf + in->off, avail, swap);
		if (avail >= KMT_HDR_SIZE && size && size <= avail)
			break;
		if (avail >= EVENT_MAX || !in->f) {
			if (!avail) {
				in->have = false;
				return;
			}
			err = kmt_decode(in->buf + in->off, avail, swap, &in->ev);
			die(2, "%s: offset %llu: %s", in->path, in->file_off + in->off,
			    err ?: "truncated event");
		}
		memmove(in->buf, in->buf + in->off, avail);
		in->file_off += in->off;
		in->off = 0;
		in->len = avail + fread(in->buf + avail, 1, READ_CHUNK - avail, in->f);
		if (ferror(in->f))
			die(2, "%s: %s", in->path, strerror(errno));
		if (in->len == avail) {
			fclose(in->f);
			in->f = NULL;
		}
	}
	err = kmt_decode(in->buf + in->off, in->len - in->off, swap, &in->ev);
	if (err)
		die(2, "%s: offset %llu: %s", in->path, in->file_off + in->off, err);
	if (!have_ref) {
		ref = in->ev.seq;
		have_ref = true;
	}
	if (in->first) {
		in->seq = (__s64)ref + (int32_t)((uint32_t)in->ev.seq - (uint32_t)ref);
		in->first = false;
	} else {
		int32_t d = (int32_t)((uint32_t)in->ev.seq - (uint32_t)in->seq);

		if (d <= 0)
			die(2, "%s: offset %llu: seq %d does not follow %d",
			    in->path, in->file_off + in->off, in->ev.seq, (int32_t)in->seq);
		in->seq += d;
	}
	in->off += size;
	in->have = true;
}

static void open_inputs(const char *dir, const struct meta *m)
{
	int i;

	for (i = 0; i < m->nfiles; i++) {
		struct input *in = &inputs[ninputs++];

		snprintf(in->path, sizeof(in->path), "%s/%s", dir, m->files[i]);
		in->cpu = atoi(m->files[i] + 3);
		in->f = fopen(in->path, "rb");
		if (!in->f)
			die(2, "%s: %s", in->path, strerror(errno));
		in->buf = xcalloc(1, READ_CHUNK);
		in->first = true;
		next_event(in);
	}
}

/* The input whose event comes next, or NULL when all are read. */
static struct input *next_input(void)
{
	struct input *best = NULL;
	int i;

	for (i = 0; i < ninputs; i++)
		if (inputs[i].have && (!best || inputs[i].seq < best->seq))
			best = &inputs[i];
	return best;
}

/* ---- The analysis ---------------------------------------------------- */

struct totals {
	__u64 events, allocs, failed, frees, req, alloc, cross, unknown_ids;
	__u64 first_time, last_time;
	bool have_time;
} tot;

static bool is_null_free(__u64 ptr)
{
	return ptr <= 16;	/* NULL and ZERO_SIZE_PTR */
}

static void account(const struct kmt_event *e, int cpu)
{
	struct site *s;
	struct live *l;

	tot.events++;
	if (e->unknown) {
		tot.unknown_ids++;
		return;
	}
	if (e->has_time) {
		if (!tot.have_time)
			tot.first_time = e->time;
		tot.last_time = e->time;
		tot.have_time = true;
	}
	if (e->event_id == KMEMTRACE_EVENT_ALLOC) {
		s = site_of(e->call_site, e->type_id);
		if (!e->ptr) {
			s->failed++;
			tot.failed++;
			return;
		}
		s->allocs++;
		s->req += e->bytes_req;
		s->alloc += e->bytes_alloc;
		tot.allocs++;
		tot.req += e->bytes_req;
		tot.alloc += e->bytes_alloc;
		if (e->bytes_alloc < e->bytes_req)
			note_err(ERR_LESS, e->type_id, e->call_site, e->type_id, e->call_site);
		l = live_find(e->ptr);
		if (l)
			note_err(ERR_REALLOC, l->type, l->call_site, e->type_id, e->call_site);
		l = live_add(e->ptr);
		l->call_site = e->call_site;
		l->type = e->type_id;
		l->req = e->bytes_req;
		l->alloc = e->bytes_alloc;
		l->time = e->time;
		l->cpu = cpu;
		return;
	}
	if (is_null_free(e->ptr))
		return;
	s = site_of(e->call_site, e->type_id);
	s->frees++;
	tot.frees++;
	l = live_find(e->ptr);
	if (!l) {
		note_err(ERR_UNKNOWN, e->type_id, e->call_site, -1, 0);
		return;
	}
	if (l->type != e->type_id)
		note_err(ERR_MISMATCH, l->type, l->call_site, e->type_id, e->call_site);
	if (l->cpu != cpu) {
		site_of(l->call_site, l->type)->cross++;
		tot.cross++;
	}
	live_del(l);
}

/* What was still allocated at the end, onto its site. */
static void leaks(void)
{
	size_t i;

	for (i = 0; i < lives_cap; i++) {
		struct live *l = &lives[i];
		struct site *s;
		__u64 age;

		if (!l->used)
			continue;
		s = site_of(l->call_site, l->type);
		s->live++;
		s->live_bytes += l->alloc;
		age = tot.last_time > l->time ? tot.last_time - l->time : 0;
		if (age > s->oldest)
			s->oldest = age;
	}
}

/* ---- Output --------------------------------------------------------- */

static const char *const type_names[] = { "kmalloc", "cache", "pages" };

static const char *type_name(int t)
{
	return t >= 0 && t < 3 ? type_names[t] : "-";
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

enum sort_key { SORT_ALLOC, SORT_REQ, SORT_HITS, SORT_FRAG, SORT_CROSS, SORT_LIVE };

static const char *const sort_names[] = { "bytes", "req", "hits", "frag", "cross", "live" };
static enum sort_key sort_key = SORT_ALLOC;

static __u64 sort_value(const struct site *s)
{
	switch (sort_key) {
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

static int cmp_site(const void *a, const void *b)
{
	const struct site *x = *(const struct site * const *)a;
	const struct site *y = *(const struct site * const *)b;
	__u64 vx = sort_value(x), vy = sort_value(y);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->call_site != y->call_site)
		return x->call_site < y->call_site ? -1 : 1;
	return x->type - y->type;
}

static void print_sites(long top)
{
	struct site **v = xcalloc(nsites ? nsites : 1, sizeof(*v));
	size_t i, n = 0;
	char sym[320];

	for (i = 0; i < sites_cap; i++)
		if (sites[i].used)
			v[n++] = &sites[i];
	qsort(v, n, sizeof(*v), cmp_site);
	printf("%-44s %-7s %9s %9s %12s %12s %6s %7s %7s %11s\n", "call site", "type",
	       "allocs", "frees", "requested", "allocated", "frag%", "x-cpu", "live",
	       "live bytes");
	for (i = 0; i < n && (top < 0 || (long)i < top); i++) {
		const struct site *s = v[i];

		printf("%-44s %-7s %9llu %9llu %12llu %12llu %6.1f %7llu %7llu %11llu\n",
		       symbolize(s->call_site, sym, sizeof(sym)), type_name(s->type),
		       s->allocs, s->frees, s->req, s->alloc, pct(frag(s->alloc, s->req), s->alloc),
		       s->cross, s->live, s->live_bytes);
	}
	if ((long)n > top && top >= 0)
		printf("... %zu more call sites (--top)\n", n - top);
	free(v);
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
	return x->site2 < y->site2 ? -1 : x->site2 > y->site2;
}

static void print_errors(long top)
{
	struct err **v = xcalloc(nerrs ? nerrs : 1, sizeof(*v));
	size_t i, n = 0;
	char s1[320], s2[320];

	for (i = 0; i < errs_cap; i++)
		if (errs[i].used)
			v[n++] = &errs[i];
	qsort(v, n, sizeof(*v), cmp_err);
	for (i = 0; i < n; i++) {
		const struct err *e = v[i];

		if (top >= 0 && (long)i >= top)
			break;
		switch (e->kind) {
		case ERR_MISMATCH:
			printf("%8llu x %s: %s %s freed as %s by %s\n", e->count,
			       err_names[e->kind], type_name(e->type1),
			       symbolize(e->site1, s1, sizeof(s1)),
			       type_name(e->type2), symbolize(e->site2, s2, sizeof(s2)));
			break;
		case ERR_UNKNOWN:
			printf("%8llu x %s: %s free by %s\n", e->count, err_names[e->kind],
			       type_name(e->type1), symbolize(e->site1, s1, sizeof(s1)));
			break;
		case ERR_LESS:
			printf("%8llu x %s: %s by %s\n", e->count, err_names[e->kind],
			       type_name(e->type1), symbolize(e->site1, s1, sizeof(s1)));
			break;
		default:
			printf("%8llu x %s: %s by %s, again by %s %s\n", e->count,
			       err_names[e->kind], type_name(e->type1),
			       symbolize(e->site1, s1, sizeof(s1)), type_name(e->type2),
			       symbolize(e->site2, s2, sizeof(s2)));
			break;
		}
	}
	free(v);
}

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] DIR\n"
		"Reports on a kmemtraced capture in DIR: memory and fragmentation per\n"
		"call site, cross-CPU frees, errors and what was still allocated at the end.\n"
		"  -s, --sort=KEY       order of the call sites: bytes (allocated, default),\n"
		"                       req, hits, frag, cross, live\n"
		"  -n, --top=N          at most N call sites and N errors (default 20, -1 all)\n"
		"  -k, --kallsyms=FILE  symbols from FILE (kallsyms or System.map format)\n"
		"                       instead of DIR/kallsyms\n"
		"  -h, --help           print this text\n"
		"Exit status: 0 done, 1 usage, 2 the capture cannot be read.\n", prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dir, *symfile = NULL;
	char path[PATH_MAX], *end;
	struct input *in;
	struct meta *m;
	long top = 20;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "s:n:k:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			for (i = 0; i < ARRAY_SIZE(sort_names); i++)
				if (!strcmp(optarg, sort_names[i]))
					break;
			if (i == ARRAY_SIZE(sort_names)) {
				fprintf(stderr, "%s: --sort=%s: not a sort key\n", prog, optarg);
				print_help(stderr);
				return 1;
			}
			sort_key = i;
			break;
		case 'n':
			errno = 0;
			top = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || top < -1) {
				fprintf(stderr, "%s: --top=%s: not a number >= -1\n", prog, optarg);
				return 1;
			}
			break;
		case 'k':
			symfile = optarg;
			break;
		case 'h':
			print_help(stdout);
			return 0;
		default:
			print_help(stderr);
			return 1;
		}
	}
	if (optind + 1 != argc) {
		print_help(stderr);
		return 1;
	}
	dir = argv[optind];
	m = xcalloc(1, sizeof(*m));
	read_meta(dir, m);
	swap = m->swap;
	if (m->have_start) {
		ref = (int32_t)(uint32_t)m->start_seq;
		have_ref = true;
	}
	if (symfile) {
		if (!load_symbols(symfile))
			die(2, "%s: %s", symfile, strerror(errno));
	} else {
		snprintf(path, sizeof(path), "%s/kallsyms", dir);
		load_symbols(path);
	}
	open_inputs(dir, m);
	while ((in = next_input())) {
		account(&in->ev, in->cpu);
		next_event(in);
	}
	leaks();

	printf("%llu events in %d files; %llu allocations (%llu failed), %llu frees\n",
	       tot.events, ninputs, tot.allocs + tot.failed, tot.failed, tot.frees);
	printf("requested %llu bytes, allocated %llu bytes, fragmentation %.1f%% (%lld bytes)\n",
	       tot.req, tot.alloc, pct(frag(tot.alloc, tot.req), tot.alloc),
	       frag(tot.alloc, tot.req));
	printf("freed on another CPU: %llu of %llu frees (%.1f%%)\n", tot.cross, tot.frees,
	       pct(tot.cross, tot.frees));
	{
		__u64 live_bytes = 0;

		for (i = 0; i < lives_cap; i++)
			if (lives[i].used)
				live_bytes += lives[i].alloc;
		printf("still allocated at the end: %zu objects, %llu bytes\n", nlives,
		       live_bytes);
	}
	if (tot.unknown_ids)
		printf("%llu events of a newer ABI skipped\n", tot.unknown_ids);
	printf("errors:");
	for (c = 0; c < NR_ERR; c++)
		printf(" %s %llu%s", err_names[c], err_totals[c], c + 1 < NR_ERR ? "," : "\n");
	printf("\n");
	print_sites(top);
	if (nerrs) {
		printf("\n");
		print_errors(top);
	}

	for (c = 0; c < ninputs; c++)
		free(inputs[c].buf);
	for (i = 0; i < nsyms; i++)
		free(syms[i].name);
	free(syms);
	free(sites);
	free(lives);
	free(errs);
	free(m);
	return 0;
}
