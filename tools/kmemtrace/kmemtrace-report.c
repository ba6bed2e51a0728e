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
#include <sys/ioctl.h>
#include <unistd.h>

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
	if (nsyms)
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

/* Per call site and type, in a dense array: an entry's index never changes. */
struct site {
	__u64 call_site;
	int type;
	__u64 allocs, failed, frees, req, alloc, cross;
	__u64 live, live_bytes, oldest;	/* at the end */
};

static struct site *sites;
static size_t nsites, sites_cap;

/* The index: open addressing from (call site, type) to 1 + the index. */
struct site_slot {
	__u64 call_site;
	unsigned int type;
	unsigned int index1;
};

static struct site_slot *site_tab;
static size_t site_tab_cap;

static struct site_slot *site_slot(__u64 call_site, unsigned int type)
{
	size_t i = mix(call_site ^ ((__u64)type << 62)) & (site_tab_cap - 1);

	while (site_tab[i].index1 &&
	       (site_tab[i].call_site != call_site || site_tab[i].type != type))
		i = (i + 1) & (site_tab_cap - 1);
	return &site_tab[i];
}

static unsigned int site_new(__u64 call_site, int type)
{
	struct site_slot *slot;

	if (2 * (nsites + 1) > site_tab_cap) {
		struct site_slot *old = site_tab;
		size_t i, old_cap = site_tab_cap;

		site_tab_cap = site_tab_cap ? 2 * site_tab_cap : 1024;
		site_tab = xcalloc(site_tab_cap, sizeof(*site_tab));
		for (i = 0; i < old_cap; i++)
			if (old[i].index1)
				*site_slot(old[i].call_site, old[i].type) = old[i];
		free(old);
	}
	slot = site_slot(call_site, type);
	if (slot->index1)
		return slot->index1 - 1;
	if (nsites == sites_cap) {
		sites_cap = sites_cap ? 2 * sites_cap : 1024;
		sites = realloc(sites, sites_cap * sizeof(*sites));
		if (!sites)
			die(2, "out of memory");
	}
	memset(&sites[nsites], 0, sizeof(sites[0]));
	sites[nsites].call_site = call_site;
	sites[nsites].type = type;
	slot->call_site = call_site;
	slot->type = type;
	slot->index1 = ++nsites;
	return nsites - 1;
}

/*
 * The index of a site, through a small direct-mapped cache in front of
 * the table: a capture has few call sites, each hit again and again.
 */
#define SITE_CACHE	4096	/* the hash below takes 12 bits */

static unsigned int site_cache[SITE_CACHE];

static unsigned int site_index(__u64 call_site, int type)
{
	unsigned int h = ((call_site + type) * 0x9e3779b97f4a7c15ULL) >> 52;
	unsigned int i = site_cache[h];

	if (i < nsites && sites[i].call_site == call_site && sites[i].type == type)
		return i;
	i = site_new(call_site, type);
	site_cache[h] = i;
	return i;
}

/*
 * Live allocations by pointer. Linear probing with deletion by backward
 * shift: the table holds live objects only.
 */
struct live {
	__u64 ptr, alloc, time;
	unsigned int site;	/* index in sites[] */
	int cpu;
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

	/* Small to start with: a table that fits the cache is most of the speed. */
	lives_cap = lives_cap ? 2 * lives_cap : 1024;
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
		l->site = UINT_MAX;	/* new: not allocated before */
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

/* One CPU file, read 1 MiB at a time. */
struct input {
	FILE *f;
	char path[PATH_MAX];
	int cpu;
	unsigned char *buf;
	size_t len, off;		/* bytes in buf, and read of them */
	unsigned long long file_off;	/* of buf[0] */
	bool eof;			/* buf reaches the end of the file */
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

/* Moves the unread bytes to the start of the buffer, and fills it. */
static void refill(struct input *in)
{
	size_t avail = in->len - in->off;

	memmove(in->buf, in->buf + in->off, avail);
	in->file_off += in->off;
	in->off = 0;
	in->len = avail + fread(in->buf + avail, 1, READ_CHUNK - avail, in->f);
	if (ferror(in->f))
		die(2, "%s: %s", in->path, strerror(errno));
	in->eof = in->len == avail;
}

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
		if (avail >= EVENT_MAX || in->eof) {
			if (!avail) {
				in->have = false;
				return;
			}
			err = kmt_decode(in->buf + in->off, avail, swap, &in->ev);
			die(2, "%s: offset %llu: %s", in->path, in->file_off + in->off,
			    err ?: "truncated event");
		}
		refill(in);
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
		refill(in);
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

#define NR_TYPES	3
#define NR_BUCKETS	48	/* requested sizes by power of two, up to 128 TiB */

struct totals {
	__u64 events, allocs, failed, frees, req, alloc, cross, unknown_ids, filtered;
	__u64 first_time, last_time;
	bool have_time;
	/* Per type: allocations, frees, bytes requested and allocated. */
	__u64 type_allocs[NR_TYPES], type_frees[NR_TYPES];
	__u64 type_req[NR_TYPES], type_alloc[NR_TYPES];
	/* Allocations by requested size: bucket b holds [2^(b-1), 2^b). */
	__u64 hist[NR_TYPES][NR_BUCKETS];
} tot;

static int bucket(__u64 size)
{
	int b = size ? 64 - __builtin_clzll(size) : 0;

	return b < NR_BUCKETS ? b : NR_BUCKETS - 1;
}

static bool is_null_free(__u64 ptr)
{
	return ptr <= 16;	/* NULL and ZERO_SIZE_PTR */
}

static void account(const struct kmt_event *e, int cpu)
{
	struct site *s;
	struct live *l;
	unsigned int si;

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
		si = site_index(e->call_site, e->type_id);
		s = &sites[si];
		if (!e->ptr) {
			s->failed++;
			tot.failed++;
			return;
		}
		s->allocs++;
		s->req += e->bytes_req;
		s->alloc += e->bytes_alloc;
		tot.type_allocs[e->type_id]++;
		tot.type_req[e->type_id] += e->bytes_req;
		tot.type_alloc[e->type_id] += e->bytes_alloc;
		tot.hist[e->type_id][bucket(e->bytes_req)]++;
		tot.allocs++;
		tot.req += e->bytes_req;
		tot.alloc += e->bytes_alloc;
		if (e->bytes_alloc < e->bytes_req)
			note_err(ERR_LESS, e->type_id, e->call_site, e->type_id, e->call_site);
		l = live_add(e->ptr);
		if (l->site != UINT_MAX)
			note_err(ERR_REALLOC, sites[l->site].type, sites[l->site].call_site,
				 e->type_id, e->call_site);
		l->site = si;
		l->alloc = e->bytes_alloc;
		l->time = e->time;
		l->cpu = cpu;
		return;
	}
	if (is_null_free(e->ptr))
		return;
	si = site_index(e->call_site, e->type_id);	/* may move sites[] */
	s = &sites[si];
	s->frees++;
	tot.frees++;
	tot.type_frees[e->type_id]++;
	l = live_find(e->ptr);
	if (!l) {
		note_err(ERR_UNKNOWN, e->type_id, e->call_site, -1, 0);
		return;
	}
	if (sites[l->site].type != e->type_id)
		note_err(ERR_MISMATCH, sites[l->site].type, sites[l->site].call_site, e->type_id,
			 e->call_site);
	if (l->cpu != cpu) {
		sites[l->site].cross++;
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
		s = &sites[l->site];
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

/* --site: the rows whose call site, as a symbol or in hex, contains it. */
static const char *site_filter;

static bool site_match(__u64 addr)
{
	char buf[320];

	if (!site_filter)
		return true;
	if (strstr(symbolize(addr, buf, sizeof(buf)), site_filter))
		return true;
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
	return strstr(buf, site_filter);
}

/* The report's rows, in their order. */
static struct site **rows;
static size_t nrows;
static struct err **err_rows;
static size_t nerr_rows;

static void collect(void)
{
	size_t i;

	rows = xcalloc(nsites + 1, sizeof(*rows));
	for (i = 0; i < nsites; i++)
		if (site_match(sites[i].call_site))
			rows[nrows++] = &sites[i];
	qsort(rows, nrows, sizeof(*rows), cmp_site);
	err_rows = xcalloc(nerrs + 1, sizeof(*err_rows));
	for (i = 0; i < errs_cap; i++)
		if (errs[i].used && (site_match(errs[i].site1) ||
				     (errs[i].type2 >= 0 && site_match(errs[i].site2))))
			err_rows[nerr_rows++] = &errs[i];
	qsort(err_rows, nerr_rows, sizeof(*err_rows), cmp_err);
}

static __u64 live_bytes_total(void)
{
	__u64 b = 0;
	size_t i;

	for (i = 0; i < lives_cap; i++)
		if (lives[i].used)
			b += lives[i].alloc;
	return b;
}

/* ---- Text ------------------------------------------------------------ */

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

static int text_width;	/* of the terminal, 0 when not one */

static void print_error_text(const struct err *e)
{
	char s1[320], s2[320];

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

static void emit_text(long top)
{
	char sym[320], b1[16], b2[16], b3[16];
	size_t i, n = top < 0 || (size_t)top > nrows ? nrows : (size_t)top;
	int w = 9, t, b;
	bool any = false;

	printf("%llu events in %d files; %llu allocations (%llu failed), %llu frees\n",
	       tot.events, ninputs, tot.allocs + tot.failed, tot.failed, tot.frees);
	if (tot.filtered)
		printf("%llu events left out by the filters\n", tot.filtered);
	printf("requested %llu bytes, allocated %llu bytes, fragmentation %.1f%% (%lld bytes)\n",
	       tot.req, tot.alloc, pct(frag(tot.alloc, tot.req), tot.alloc),
	       frag(tot.alloc, tot.req));
	for (t = 0; t < NR_TYPES; t++)
		printf("  %-7s %9llu allocations %9llu frees, %s %llu, allocated %llu (%.1f%%)\n",
		       type_names[t], tot.type_allocs[t], tot.type_frees[t], "requested",
		       tot.type_req[t],
		       tot.type_alloc[t], pct(frag(tot.type_alloc[t], tot.type_req[t]),
					       tot.type_alloc[t]));
	printf("freed on another CPU: %llu of %llu frees (%.1f%%)\n", tot.cross, tot.frees,
	       pct(tot.cross, tot.frees));
	printf("still allocated at the end: %zu objects, %llu bytes\n", nlives,
	       live_bytes_total());
	if (tot.unknown_ids)
		printf("%llu events of a newer ABI skipped\n", tot.unknown_ids);
	printf("errors:");
	for (t = 0; t < NR_ERR; t++)
		printf(" %s %llu%s", err_names[t], err_totals[t], t + 1 < NR_ERR ? "," : "\n");

	/* The call site column: as wide as its longest name, or the terminal allows. */
	for (i = 0; i < n; i++) {
		int l = strlen(symbolize(rows[i]->call_site, sym, sizeof(sym)));

		if (l > w)
			w = l;
	}
	if (text_width && w > text_width - 75)
		w = text_width - 75 < 16 ? 16 : text_width - 75;
	printf("\n%-*s %-7s %9s %9s %7s %7s %6s %7s %7s %7s\n", w, "call site", "type",
	       "allocs", "frees", "req", "alloc", "frag%", "x-cpu", "live", "live B");
	for (i = 0; i < n; i++) {
		const struct site *s = rows[i];

		printf("%-*.*s %-7s %9llu %9llu %7s %7s %6.1f %7llu %7llu %7s\n", w, w,
		       symbolize(s->call_site, sym, sizeof(sym)), type_name(s->type), s->allocs,
		       s->frees, human(s->req, b1, sizeof(b1)), human(s->alloc, b2, sizeof(b2)),
		       pct(frag(s->alloc, s->req), s->alloc), s->cross, s->live,
		       human(s->live_bytes, b3, sizeof(b3)));
	}
	if (n < nrows)
		printf("... %zu more call sites (--top)\n", nrows - n);

	for (i = 0; i < nrows && (top < 0 || i < (size_t)top); i++)
		any |= rows[i]->live != 0;
	if (any) {
		printf("\nstill allocated at the end, by call site: objects, bytes, oldest (s)\n");
		for (i = 0, b = 0; i < nrows && (top < 0 || b < top); i++) {
			const struct site *s = rows[i];

			if (!s->live)
				continue;
			printf("  %-*s %-7s %9llu %9llu %10.6f\n", w,
			       symbolize(s->call_site, sym, sizeof(sym)), type_name(s->type),
			       s->live, s->live_bytes, s->oldest / 1e9);
			b++;
		}
	}
	if (nerr_rows) {
		printf("\n");
		for (i = 0; i < nerr_rows && (top < 0 || i < (size_t)top); i++)
			print_error_text(err_rows[i]);
		if (top >= 0 && nerr_rows > (size_t)top)
			printf("... %zu more (--top)\n", nerr_rows - top);
	}
	printf("\nallocations by requested size (bytes):\n");
	for (t = 0; t < NR_TYPES; t++) {
		if (!tot.type_allocs[t])
			continue;
		printf("  %s:", type_names[t]);
		for (b = 0; b < NR_BUCKETS; b++)
			if (tot.hist[t][b])
				printf(" <%s %llu", human(1ULL << b, b1, sizeof(b1)),
				       tot.hist[t][b]);
		printf("\n");
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

static void emit_json(long top)
{
	char sym[320];
	size_t i, n = top < 0 || (size_t)top > nrows ? nrows : (size_t)top;
	int t;

	printf("{\n  \"events\": %llu, \"files\": %d, \"filtered\": %llu, \"newer_abi\": %llu,\n",
	       tot.events, ninputs, tot.filtered, tot.unknown_ids);
	printf("  \"allocations\": %llu, \"failed\": %llu, \"frees\": %llu,\n", tot.allocs,
	       tot.failed, tot.frees);
	printf("  \"bytes_req\": %llu, \"bytes_alloc\": %llu, \"cross_cpu_frees\": %llu,\n",
	       tot.req, tot.alloc, tot.cross);
	printf("  \"live\": %zu, \"live_bytes\": %llu,\n  \"types\": {", nlives,
	       live_bytes_total());
	for (t = 0; t < NR_TYPES; t++) {
		printf("%s\n    \"%s\": { \"allocations\": %llu, \"frees\": %llu, ", t ? "," : "",
		       type_names[t], tot.type_allocs[t], tot.type_frees[t]);
		printf("\"bytes_req\": %llu, \"bytes_alloc\": %llu }", tot.type_req[t],
		       tot.type_alloc[t]);
	}
	printf("\n  },\n  \"errors\": {");
	for (t = 0; t < NR_ERR; t++)
		printf("%s \"%s\": %llu", t ? "," : "", err_names[t], err_totals[t]);
	printf(" },\n  \"sites\": [");
	for (i = 0; i < n; i++) {
		const struct site *s = rows[i];

		printf("%s\n    { \"call_site\": \"0x%llx\", \"symbol\": ", i ? "," : "",
		       (unsigned long long)s->call_site);
		json_str(symbolize(s->call_site, sym, sizeof(sym)));
		printf(", \"type\": \"%s\", \"allocations\": %llu, \"failed\": %llu,",
		       type_name(s->type), s->allocs, s->failed);
		printf(" \"frees\": %llu,", s->frees);
		printf(" \"bytes_req\": %llu, \"bytes_alloc\": %llu, \"cross_cpu_frees\": %llu,",
		       s->req, s->alloc, s->cross);
		printf(" \"live\": %llu, \"live_bytes\": %llu, \"oldest_live_ns\": %llu }", s->live,
		       s->live_bytes, s->oldest);
	}
	printf("\n  ],\n  \"error_sites\": [");
	for (i = 0; i < nerr_rows && (top < 0 || i < (size_t)top); i++) {
		const struct err *e = err_rows[i];

		printf("%s\n    { \"kind\": \"%s\", \"count\": %llu, \"type\": \"%s\", \"site\": ",
		       i ? "," : "", err_names[e->kind], e->count, type_name(e->type1));
		json_str(symbolize(e->site1, sym, sizeof(sym)));
		if (e->type2 >= 0 && e->kind != ERR_LESS) {
			printf(", \"other_type\": \"%s\", \"other_site\": ", type_name(e->type2));
			json_str(symbolize(e->site2, sym, sizeof(sym)));
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

static void emit_csv(long top)
{
	char sym[320];
	size_t i, n = top < 0 || (size_t)top > nrows ? nrows : (size_t)top;

	printf("call_site,symbol,type,allocations,failed,frees,bytes_req,bytes_alloc,");
	printf("cross_cpu_frees,live,live_bytes,oldest_live_ns\n");
	for (i = 0; i < n; i++) {
		const struct site *s = rows[i];

		printf("0x%llx,", (unsigned long long)s->call_site);
		csv_str(symbolize(s->call_site, sym, sizeof(sym)));
		printf(",%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", type_name(s->type),
		       s->allocs, s->failed, s->frees, s->req, s->alloc, s->cross, s->live,
		       s->live_bytes, s->oldest);
	}
}

/* For flame graph tools: "function;type bytes", the bytes allocated. */
static void emit_folded(long top)
{
	char sym[320], *plus;
	size_t i, n = top < 0 || (size_t)top > nrows ? nrows : (size_t)top;

	for (i = 0; i < n; i++) {
		const struct site *s = rows[i];

		if (!s->alloc)
			continue;
		symbolize(s->call_site, sym, sizeof(sym));
		plus = strchr(sym, '+');
		if (plus)
			*plus = '\0';
		printf("%s;%s %llu\n", sym, type_name(s->type), s->alloc);
	}
}

/* Frees the analysis' tables and starts it afresh (also for the fuzz harness). */
static void report_reset(void)
{
	size_t i;

	for (i = 0; i < nsyms; i++)
		free(syms[i].name);
	free(syms);
	free(sites);
	free(site_tab);
	free(lives);
	free(errs);
	free(rows);
	free(err_rows);
	syms = NULL;
	sites = NULL;
	site_tab = NULL;
	lives = NULL;
	errs = NULL;
	rows = NULL;
	err_rows = NULL;
	nsyms = 0;
	nsites = 0;
	sites_cap = 0;
	site_tab_cap = 0;
	lives_cap = 0;
	nlives = 0;
	errs_cap = 0;
	nerrs = 0;
	nrows = 0;
	nerr_rows = 0;
	memset(&tot, 0, sizeof(tot));
	memset(err_totals, 0, sizeof(err_totals));
	memset(site_cache, 0, sizeof(site_cache));
}

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] DIR\n"
		"Reports on a kmemtraced capture in DIR: memory and fragmentation per\n"
		"call site, cross-CPU frees, errors and what was still allocated at the end.\n"
		"  -f, --format=FMT     text (default), json, csv (the call sites), or folded\n"
		"                       (\"function;type bytes\" lines for flame graphs)\n"
		"  -s, --sort=KEY       order of the call sites: bytes (allocated, default),\n"
		"                       req, hits, frag, cross, live\n"
		"  -n, --top=N          at most N call sites and N errors (default 20, -1 all)\n"
		"  -t, --type=TYPE      only kmalloc, cache or pages events\n"
		"  -c, --cpu=N          only the events recorded on CPU N\n"
		"  -w, --window=A:B     only the events from A to B seconds after the first\n"
		"                       (either may be left out)\n"
		"  -S, --site=TEXT      only the call sites (and errors) whose symbol or\n"
		"                       address contains TEXT\n"
		"  -k, --kallsyms=FILE  symbols from FILE (kallsyms or System.map format)\n"
		"                       instead of DIR/kallsyms\n"
		"  -h, --help           print this text\n"
		"Exit status: 0 done, 1 usage, 2 the capture cannot be read.\n", prog);
}

static int bad_option(const char *opt, const char *arg, const char *what)
{
	fprintf(stderr, "%s: --%s=%s: %s\n", prog, opt, arg, what);
	print_help(stderr);
	return 1;
}

/* "A:B" in seconds, either side optional, into [*from, *to) in ns. */
static bool parse_window(const char *arg, __u64 *from, __u64 *to)
{
	const char *colon = strchr(arg, ':');
	char *end;
	double a = 0, b = -1;

	if (!colon)
		return false;
	if (colon != arg) {
		a = strtod(arg, &end);
		if (end != colon || a < 0)
			return false;
	}
	if (colon[1]) {
		b = strtod(colon + 1, &end);
		if (*end || b < a)
			return false;
	}
	*from = a * 1e9;
	*to = b < 0 ? ~0ULL : (__u64)(b * 1e9);
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "type", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, 'w' },
		{ "site", required_argument, NULL, 'S' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const formats[] = { "text", "json", "csv", "folded" };
	const char *dir, *symfile = NULL;
	int format = 0, only_type = -1, only_cpu = -1;
	__u64 from = 0, to = ~0ULL, base = 0;
	bool windowed = false, have_base = false;
	char path[PATH_MAX], *end;
	struct input *in;
	struct meta *m;
	long top = 20, v;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "f:s:n:t:c:w:S:k:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			for (i = 0; i < ARRAY_SIZE(formats); i++)
				if (!strcmp(optarg, formats[i]))
					break;
			if (i == ARRAY_SIZE(formats))
				return bad_option("format", optarg,
						  "not text, json, csv or folded");
			format = i;
			break;
		case 's':
			for (i = 0; i < ARRAY_SIZE(sort_names); i++)
				if (!strcmp(optarg, sort_names[i]))
					break;
			if (i == ARRAY_SIZE(sort_names))
				return bad_option("sort", optarg, "not a sort key");
			sort_key = i;
			break;
		case 'n':
			errno = 0;
			top = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || top < -1)
				return bad_option("top", optarg, "not a number >= -1");
			break;
		case 't':
			for (i = 0; i < NR_TYPES; i++)
				if (!strcmp(optarg, type_names[i]))
					break;
			if (i == NR_TYPES)
				return bad_option("type", optarg, "not kmalloc, cache or pages");
			only_type = i;
			break;
		case 'c':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || v < 0 || v > INT_MAX)
				return bad_option("cpu", optarg, "not a CPU number");
			only_cpu = v;
			break;
		case 'w':
			if (!parse_window(optarg, &from, &to))
				return bad_option("window", optarg, "not A:B seconds with A <= B");
			windowed = true;
			break;
		case 'S':
			site_filter = optarg;
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
		const struct kmt_event *e = &in->ev;

		if (e->has_time && !have_base) {
			base = e->time;
			have_base = true;
		}
		if ((only_type >= 0 && e->type_id != only_type) ||
		    (only_cpu >= 0 && in->cpu != only_cpu) ||
		    (windowed && (!e->has_time || e->time - base < from || e->time - base >= to))) {
			tot.events++;
			tot.filtered++;
		} else {
			account(e, in->cpu);
		}
		next_event(in);
	}
	leaks();
	collect();
	if (isatty(STDOUT_FILENO)) {
		struct winsize ws;

		if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
			text_width = ws.ws_col;
	}
	switch (format) {
	case 1:
		emit_json(top);
		break;
	case 2:
		emit_csv(top);
		break;
	case 3:
		emit_folded(top);
		break;
	default:
		emit_text(top);
		break;
	}
	if (fflush(stdout) || ferror(stdout))
		die(2, "writing the report: %s", strerror(errno));

	for (c = 0; c < ninputs; c++) {
		free(inputs[c].buf);
		fclose(inputs[c].f);
	}
	report_reset();
	free(m);
	return 0;
}
