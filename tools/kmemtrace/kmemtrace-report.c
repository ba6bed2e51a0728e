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
 * The CPU files are merged by sequence number as they are read
 * (kmt_capture.h, kmemtrace-check's reader: a buffer per file from a
 * shared budget, a heap), by a reader thread that hands the events over
 * to the analysis in batches: memory grows with the call sites and the
 * live allocations, not with the events or the files. The events lost
 * are counted as kmemtrace-check counts them (kmt_loss.h).
 *
 * Exit status (kmt_cli.h): 0 done, 1 events lost or errors found (but
 * frees of unknown pointers), 2 bad usage or an I/O error, 3 corrupt.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kmt_capture.h"
#include "kmt_cli.h"
#include "kmt_events.h"
#include "kmt_meta.h"
#include "kmt_msg.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *prog = "kmemtrace-report";

#define die(status, ...)	kmt_die(prog, status, __VA_ARGS__)

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die(KMT_EXIT_USAGE, "out of memory");
	return p;
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
		if (nsyms == cap) {
			cap = cap ? 2 * cap : 65536;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				die(KMT_EXIT_USAGE, "out of memory");
		}
		syms[nsyms].addr = addr;
		syms[nsyms].name = strdup(name);
		if (!syms[nsyms].name)
			die(KMT_EXIT_USAGE, "out of memory");
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

/*
 * The capture's caches file, debugfs kmemtrace/caches as kmemtraced
 * saved it: "ID OBJECT_SIZE SIZE NAME" lines, the first for an id
 * naming it.
 */
struct cache_name {
	__u64 id;
	size_t line;
	char *name;
};

static struct cache_name *cache_names;
static size_t ncache_names;

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

static bool load_cache_names(const char *path)
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
		if (ncache_names == cap) {
			cap = cap ? 2 * cap : 256;
			cache_names = realloc(cache_names, cap * sizeof(*cache_names));
			if (!cache_names)
				die(KMT_EXIT_USAGE, "out of memory");
		}
		cache_names[ncache_names].id = id;
		cache_names[ncache_names].line = ncache_names;
		cache_names[ncache_names].name = strdup(line + off);
		if (!cache_names[ncache_names].name)
			die(KMT_EXIT_USAGE, "out of memory");
		unescape_name(cache_names[ncache_names].name);
		ncache_names++;
	}
	free(text);
	if (ncache_names)
		qsort(cache_names, ncache_names, sizeof(*cache_names), cmp_cache_name);
	return true;
}

static const char *cache_name_of(__u64 id)
{
	size_t lo = 0, hi = ncache_names;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cache_names[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ncache_names && cache_names[lo].id == id ? cache_names[lo].name : NULL;
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

#define NR_TYPES	3
#define NR_BUCKETS	65	/* requested sizes by power of two: every __u64 */

/* Bucket b holds the sizes in [2^(b-1), 2^b); bucket 0 holds 0. */
static int bucket(__u64 size)
{
	int b = size ? 64 - __builtin_clzll(size) : 0;

	return b;
}

/*
 * Keys to dense indexes: open addressing from (a 64-bit key, a type) to
 * 1 + the index in an array whose entries never move, with a small
 * direct-mapped cache in front, as a capture has few keys, each hit
 * again and again. For the call sites and the caches.
 */
#define KEY_CACHE	4096	/* the hash in key_index() takes 12 bits */

struct key_slot {
	__u64 key;
	unsigned int type;
	unsigned int index1;
};

struct key_map {
	struct key_slot *tab;
	size_t cap, n;
	struct key_slot cache[KEY_CACHE];
};

static struct key_slot *key_slot(struct key_map *m, __u64 key, unsigned int type)
{
	size_t i = mix(key ^ ((__u64)type << 62)) & (m->cap - 1);

	while (m->tab[i].index1 && (m->tab[i].key != key || m->tab[i].type != type))
		i = (i + 1) & (m->cap - 1);
	return &m->tab[i];
}

/* The index of (@key, @type), and *@added if it is a new one (index m->n - 1). */
static unsigned int key_lookup(struct key_map *m, __u64 key, unsigned int type, bool *added)
{
	struct key_slot *slot;

	if (2 * (m->n + 1) > m->cap) {
		struct key_slot *old = m->tab;
		size_t i, old_cap = m->cap;

		m->cap = m->cap ? 2 * m->cap : 1024;
		m->tab = xcalloc(m->cap, sizeof(*m->tab));
		for (i = 0; i < old_cap; i++)
			if (old[i].index1)
				*key_slot(m, old[i].key, old[i].type) = old[i];
		free(old);
	}
	slot = key_slot(m, key, type);
	*added = !slot->index1;
	if (!slot->index1) {
		slot->key = key;
		slot->type = type;
		slot->index1 = ++m->n;
	}
	return slot->index1 - 1;
}

static inline unsigned int key_index(struct key_map *m, __u64 key, unsigned int type,
				     bool *added)
{
	struct key_slot *c = &m->cache[((key + type) * 0x9e3779b97f4a7c15ULL) >> 52];

	*added = false;
	if (c->index1 && c->key == key && c->type == type)
		return c->index1 - 1;
	c->key = key;
	c->type = type;
	c->index1 = key_lookup(m, key, type, added) + 1;
	return c->index1 - 1;
}

static void key_map_free(struct key_map *m)
{
	free(m->tab);
	memset(m, 0, sizeof(*m));
}

/* Grows @*arr of @size-byte entries to hold @n, zeroing the new ones. */
static void grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t old = *cap;
	void *p;

	if (n <= *cap)
		return;
	while (*cap < n)
		*cap = *cap ? 2 * *cap : 1024;
	p = realloc(*arr, *cap * size);
	if (!p)
		die(KMT_EXIT_USAGE, "out of memory");
	memset((char *)p + old * size, 0, (*cap - old) * size);
	*arr = p;
}

/* Per call site and type. */
struct site {
	__u64 call_site;
	int type;
	__u64 allocs, failed, frees, req, alloc, cross;
	__u64 live, live_bytes, oldest;	/* at the end */
};

static struct key_map site_map;
static struct site *sites;
static size_t sites_cap;
/* Allocations by requested size, NR_BUCKETS per site. */
static __u64 *site_hist;
static size_t site_hist_cap;

static unsigned int site_index(__u64 call_site, int type)
{
	bool added;
	unsigned int i = key_index(&site_map, call_site, type, &added);

	if (added) {
		grow((void **)&sites, &sites_cap, site_map.n, sizeof(*sites));
		grow((void **)&site_hist, &site_hist_cap, site_map.n,
		     NR_BUCKETS * sizeof(*site_hist));
		sites[i].call_site = call_site;
		sites[i].type = type;
	}
	return i;
}

/*
 * Per cache: the slab cache the events carry (feature 5), named by the
 * capture's caches file. Events without one (pages, a kmalloc() too
 * large for the caches, a capture of ABI 1) go by their type and
 * allocated size: kmalloc-<size>, kmem_cache-<size>, pages-<size>.
 */
#define CACHE_KEY	NR_TYPES	/* the key_map type of a real cache */
#define TYPE_MIXED	NR_TYPES	/* a cache with kmalloc and kmem_cache events */

struct cache {
	__u64 id;	/* the cache's id, 0 for a size class */
	__u64 size;	/* bytes allocated per object */
	int type;	/* of its allocations, MIXED if of two types */
	__u64 allocs, frees, req, live, live_bytes;
};

static struct key_map cache_map;
static struct cache *caches;
static size_t caches_cap;

static unsigned int cache_index(__u64 id, __u64 size, int type)
{
	bool added;
	unsigned int i = id ? key_index(&cache_map, id, CACHE_KEY, &added) :
				key_index(&cache_map, size, type, &added);

	if (added) {
		grow((void **)&caches, &caches_cap, cache_map.n, sizeof(*caches));
		caches[i].id = id;
		caches[i].size = size;
		caches[i].type = type;
	}
	return i;
}

/*
 * Live allocations by pointer, pages apart from slab objects: a new
 * slab's page and its first object have the same address (so have a
 * large kmalloc() and its pages), and both are live at once. Linear
 * probing with deletion by backward shift: the table holds live objects
 * only, 32 bytes each. A pointer of 0 marks a free slot: failed
 * allocations are not live.
 */
struct live {
	__u64 ptr, time;
	unsigned int site;	/* index in sites[] */
	unsigned int cache;	/* index in caches[]: its size is the bytes allocated */
	int cpu;
	bool page;		/* a page allocation, not a slab object */
};

static struct live *lives;
static size_t lives_cap, nlives;

static size_t live_home(__u64 ptr, bool page)
{
	return mix(ptr ^ page) & (lives_cap - 1);
}

static size_t live_slot(__u64 ptr, bool page)
{
	size_t i;

	for (i = live_home(ptr, page);
	     lives[i].ptr && (lives[i].ptr != ptr || lives[i].page != page);
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
		if (old[i].ptr)
			lives[live_slot(old[i].ptr, old[i].page)] = old[i];
	free(old);
}

static struct live *live_find(__u64 ptr, bool page)
{
	struct live *l;

	if (!lives_cap)
		return NULL;
	l = &lives[live_slot(ptr, page)];
	return l->ptr ? l : NULL;
}

/* The entry of @ptr, *@old saying if it was live already. */
static struct live *live_add(__u64 ptr, bool page, bool *old)
{
	struct live *l;

	if (2 * (nlives + 1) > lives_cap)
		lives_grow();
	l = &lives[live_slot(ptr, page)];
	*old = l->ptr;
	if (!l->ptr) {
		nlives++;
		l->ptr = ptr;
		l->page = page;
	}
	return l;
}

static void live_del(struct live *l)
{
	size_t i = l - lives, j = i;

	l->ptr = 0;
	nlives--;
	for (;;) {
		size_t home;

		j = (j + 1) & (lives_cap - 1);
		if (!lives[j].ptr)
			return;
		home = live_home(lives[j].ptr, lives[j].page);
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? home <= i || home > j : home <= i && home > j) {
			lives[i] = lives[j];
			lives[j].ptr = 0;
			i = j;
		}
	}
}

/*
 * The last free of each pointer, as far as a fixed table remembers it:
 * direct-mapped by pointer, a later free overwriting an earlier one in
 * the same slot, and an allocation of the pointer, page or object,
 * clearing its slot. A free of a slab object that is not live is a
 * double free if its slot holds it (it was freed and not allocated
 * again since), a mismatched free if it is live as a page, and a free
 * of an unknown pointer otherwise.
 */
#define FREED_SLOTS	65536

struct freed {
	__u64 ptr;
	unsigned int site;
};

static struct freed *freed;

/* ---- Errors ---------------------------------------------------------- */

enum err_kind {
	ERR_MISMATCH,	/* freed with another type's free function */
	ERR_DOUBLE,	/* freed again, not allocated since */
	ERR_UNKNOWN,	/* free of a pointer not allocated in the capture */
	ERR_LESS,	/* allocated less than requested */
	ERR_REALLOC,	/* allocated again while still allocated */
	ERR_CACHE,	/* freed to another cache than its allocation's */
	NR_ERR
};

static const char *const err_names[NR_ERR] = {
	"mismatched free", "double free", "free of unknown pointer", "allocated < requested",
	"allocated twice", "freed to another cache",
};

struct err {
	int kind, type1, type2;
	__u64 site1, site2, count;
	__u64 cache1, cache2;	/* ERR_CACHE: the allocation's cache, the free's */
	bool used;
};

static struct err *errs;
static size_t errs_cap, nerrs;
static __u64 err_totals[NR_ERR];

static __u64 err_hash(const struct err *e)
{
	return mix(e->site1 ^ mix(e->site2 ^ mix(e->cache1 ^ mix(e->cache2)) ^
				  ((__u64)e->kind << 16 | (__u64)(e->type1 & 0xff) << 8 |
				   (e->type2 & 0xff))));
}

static bool err_same(const struct err *a, const struct err *b)
{
	return a->kind == b->kind && a->type1 == b->type1 && a->type2 == b->type2 &&
	       a->site1 == b->site1 && a->site2 == b->site2 && a->cache1 == b->cache1 &&
	       a->cache2 == b->cache2;
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

static void note_err_caches(int kind, int type1, __u64 site1, int type2, __u64 site2,
			    __u64 cache1, __u64 cache2)
{
	struct err k = { .kind = kind, .type1 = type1, .type2 = type2,
			 .site1 = site1, .site2 = site2, .cache1 = cache1,
			 .cache2 = cache2, .used = true };
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

static void note_err(int kind, int type1, __u64 site1, int type2, __u64 site2)
{
	note_err_caches(kind, type1, site1, type2, site2, 0, 0);
}

/* ---- Reading the CPU files, merged by sequence number --------------- */

/* One event as the analysis needs it: what the reader hands over. */
struct rec {
	__u64 call_site, ptr, bytes_req, bytes_alloc, time, cache;
	int cpu;
	uint8_t event_id, type_id;
};

/*
 * The capture, read as one stream in sequence order (kmt_capture.h),
 * which stops at the first error: a corrupt event, a number that does
 * not follow the one before it in its file or is in two files, or an
 * I/O error (cap.error, cap.status). It counts the events lost too, as
 * kmemtrace-check does (cap.loss).
 */
static struct kmt_capture cap;

/* What the reader counted besides: the events not handed over. */
static struct {
	__u64 filtered, unknown_ids;
	__u64 last_time;	/* of the events handed over */
	bool timed;		/* any had a time stamp (not so in ABI 1) */
} rd;

/* The filters: only events of this type, this CPU, this window of time. */
static struct {
	int type, cpu;
	bool windowed, have_base;
	__u64 from, to, base;
} filt = { .type = -1, .cpu = -1 };

static inline bool filtered(const struct kmt_event *e, int cpu)
{
	if (e->has_time && !filt.have_base) {
		filt.base = e->time;
		filt.have_base = true;
	}
	/* Signed: CPUs' clocks may put an event a little before the first. */
	return (filt.type >= 0 && e->type_id != filt.type) || (filt.cpu >= 0 && cpu != filt.cpu) ||
	       (filt.windowed && (!e->has_time || (__s64)(e->time - filt.base) < 0 ||
				  e->time - filt.base < filt.from ||
				  e->time - filt.base >= filt.to));
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
unsigned int read_recs_order(struct rec *r, unsigned int max, const bool swap)
{
	unsigned int n = 0;
	struct kmt_event e;

	while (n < max && kmt_capture_next(&cap, &e, swap)) {
		if (e.unknown) {
			rd.unknown_ids++;
		} else if (filtered(&e, cap.cur->cpu)) {
			rd.filtered++;
		} else {
			to_rec(&e, cap.cur->cpu, &r[n++]);
			if (e.has_time) {
				rd.last_time = e.time;
				rd.timed = true;
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
static unsigned int read_recs(struct rec *r, unsigned int max)
{
	return cap.meta.swap ? read_recs_order(r, max, true) : read_recs_order(r, max, false);
}

/* ---- The analysis ---------------------------------------------------- */

static bool is_null_free(__u64 ptr)
{
	return ptr <= 16;	/* NULL and ZERO_SIZE_PTR */
}

static void account(const struct rec *e)
{
	struct freed *fr;
	struct site *s;
	bool page = e->type_id == KMEMTRACE_TYPE_PAGES;
	struct live *l;
	unsigned int si;
	bool old;

	if (e->event_id != KMEMTRACE_EVENT_ALLOC && is_null_free(e->ptr))
		return;
	si = site_index(e->call_site, e->type_id);
	s = &sites[si];
	if (e->event_id == KMEMTRACE_EVENT_ALLOC) {
		if (!e->ptr) {
			s->failed++;
			return;
		}
		s->allocs++;
		s->req += e->bytes_req;
		s->alloc += e->bytes_alloc;
		site_hist[si * NR_BUCKETS + bucket(e->bytes_req)]++;
		if (e->bytes_alloc < e->bytes_req)
			note_err(ERR_LESS, e->type_id, e->call_site, e->type_id, e->call_site);
		/* Allocated again: a later free of it is no double free. */
		if (freed && freed[mix(e->ptr) & (FREED_SLOTS - 1)].ptr == e->ptr)
			freed[mix(e->ptr) & (FREED_SLOTS - 1)].ptr = 0;
		l = live_add(e->ptr, page, &old);
		if (old)
			note_err(ERR_REALLOC, sites[l->site].type, sites[l->site].call_site,
				 e->type_id, e->call_site);
		l->site = si;
		l->cache = cache_index(e->cache, e->bytes_alloc, e->type_id);
		if (caches[l->cache].type != e->type_id)
			caches[l->cache].type = TYPE_MIXED;
		l->time = e->time;
		l->cpu = e->cpu;
		caches[l->cache].allocs++;
		caches[l->cache].req += e->bytes_req;
		return;
	}
	s->frees++;
	/* Pages are freed in parts and taken without an event: no double frees. */
	fr = NULL;
	if (e->type_id != KMEMTRACE_TYPE_PAGES) {
		if (!freed)
			freed = xcalloc(FREED_SLOTS, sizeof(*freed));
		fr = &freed[mix(e->ptr) & (FREED_SLOTS - 1)];
	}
	l = live_find(e->ptr, page);
	if (!l && fr && fr->ptr == e->ptr) {
		note_err(ERR_DOUBLE, sites[fr->site].type, sites[fr->site].call_site,
			 e->type_id, e->call_site);
	} else if (!l) {
		/*
		 * Live as the other kind: a page freed as a slab object, or
		 * the reverse, a mismatched free. That allocation stays live:
		 * the kernel also records its own free (kfree() of a page
		 * records a kmalloc free, then the page's).
		 */
		l = live_find(e->ptr, !page);
		if (l)
			note_err(ERR_MISMATCH, sites[l->site].type, sites[l->site].call_site,
				 e->type_id, e->call_site);
		else
			note_err(ERR_UNKNOWN, e->type_id, e->call_site, -1, 0);
	} else {
		/*
		 * kfree() of a kmem_cache_alloc() object is allowed since
		 * Linux 6.4 (kfree_rcu() does it): when the free names the
		 * object's own cache, as this kernel's kfree() does, it is
		 * not an error. Without caches (ABI 1) it cannot be told.
		 */
		if (sites[l->site].type != e->type_id &&
		    !(sites[l->site].type == KMEMTRACE_TYPE_CACHE &&
		      e->type_id == KMEMTRACE_TYPE_KMALLOC && e->cache &&
		      e->cache == caches[l->cache].id))
			note_err(ERR_MISMATCH, sites[l->site].type, sites[l->site].call_site,
				 e->type_id, e->call_site);
		else if (e->cache && caches[l->cache].id && e->cache != caches[l->cache].id)
			note_err_caches(ERR_CACHE, sites[l->site].type, sites[l->site].call_site,
					e->type_id, e->call_site, caches[l->cache].id, e->cache);
		if (l->cpu != e->cpu)
			sites[l->site].cross++;
		caches[l->cache].frees++;
		live_del(l);
	}
	if (fr) {
		fr->ptr = e->ptr;
		fr->site = si;
	}
}

/*
 * The capture, read and analysed: the reader (read_recs()) in a thread
 * of its own, handing over batches of events through a ring, so that
 * reading and decoding overlap the analysis; on one thread if a second
 * cannot be had.
 */
#define BATCH	8192	/* events, 448 KiB: few handovers, each of which may wake */
#define NBATCH	4	/* a thread, which is dear (most of all in a VM) */

static struct batch {
	struct rec r[BATCH];
	unsigned int n;
} *ring;
static sem_t ring_free, ring_full;

/* sem_wait(), again if a signal interrupts it. */
static void ring_wait(sem_t *sem)
{
	while (sem_wait(sem) && errno == EINTR)
		;
}

/* The stop signals, which the reader takes (see analyse()). */
static sigset_t stop_signals;

static void *reader(void *arg)
{
	unsigned int w = 0, n;
	struct batch *b;

	pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);

	do {
		b = &ring[w];
		ring_wait(&ring_free);
		n = read_recs(b->r, BATCH);
		b->n = n;
		sem_post(&ring_full);	/* b is the analysis' from here */
		w = (w + 1) % NBATCH;
	} while (n == BATCH);
	return NULL;
}

static bool analyse(void)
{
	bool have_free = false, have_full = false, threaded = false;
	unsigned int i, r = 0, n;
	pthread_t thread;
	struct batch *b;

	ring = xcalloc(NBATCH, sizeof(*ring));
	have_free = !sem_init(&ring_free, 0, NBATCH);
	have_full = have_free && !sem_init(&ring_full, 0, 0);
	/*
	 * The stop signals go to the reader, whose read() they must
	 * interrupt (a CPU file may be a pipe that waits): not here. They
	 * are blocked before the thread is made, which inherits the mask
	 * and unblocks them, so that one sent in between waits for it
	 * rather than landing here, where no read() would see it.
	 */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	if (have_full)
		pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	threaded = have_full && !pthread_create(&thread, NULL, reader, NULL);
	if (have_full && !threaded)
		pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
	if (threaded) {
		do {
			b = &ring[r];
			ring_wait(&ring_full);
			n = b->n;
			for (i = 0; i < n; i++)
				account(&b->r[i]);
			sem_post(&ring_free);
			r = (r + 1) % NBATCH;
		} while (n == BATCH);
		pthread_join(thread, NULL);
		pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
	} else {
		do {
			n = read_recs(ring->r, BATCH);
			for (i = 0; i < n; i++)
				account(&ring->r[i]);
		} while (n == BATCH);
	}
	if (have_full)
		sem_destroy(&ring_full);
	if (have_free)
		sem_destroy(&ring_free);
	free(ring);
	ring = NULL;
	return !cap.nerrors;
}

/* ---- Totals ------------------------------------------------------------ */

struct totals {
	__u64 allocs, failed, frees, req, alloc, cross, live, live_bytes;
	/* Per type: allocations, frees, bytes requested and allocated. */
	__u64 type_allocs[NR_TYPES], type_frees[NR_TYPES];
	__u64 type_req[NR_TYPES], type_alloc[NR_TYPES];
	/* Allocations by requested size: bucket b holds [2^(b-1), 2^b). */
	__u64 hist[NR_TYPES][NR_BUCKETS];
} tot;

/* What was still allocated at the end onto its site and cache, then the totals. */
static void leaks(void)
{
	size_t i;
	int b;

	for (i = 0; i < lives_cap; i++) {
		struct live *l = &lives[i];
		struct site *s;
		__u64 age;

		if (!l->ptr)
			continue;
		s = &sites[l->site];
		s->live++;
		s->live_bytes += caches[l->cache].size;
		caches[l->cache].live++;
		caches[l->cache].live_bytes += caches[l->cache].size;
		age = rd.last_time > l->time ? rd.last_time - l->time : 0;
		if (age > s->oldest)
			s->oldest = age;
	}
	for (i = 0; i < site_map.n; i++) {
		const struct site *s = &sites[i];
		int t = s->type;

		tot.allocs += s->allocs;
		tot.failed += s->failed;
		tot.frees += s->frees;
		tot.req += s->req;
		tot.alloc += s->alloc;
		tot.cross += s->cross;
		tot.live += s->live;
		tot.live_bytes += s->live_bytes;
		if (t >= NR_TYPES)
			continue;
		tot.type_allocs[t] += s->allocs;
		tot.type_frees[t] += s->frees;
		tot.type_req[t] += s->req;
		tot.type_alloc[t] += s->alloc;
		for (b = 0; b < NR_BUCKETS; b++)
			tot.hist[t][b] += site_hist[i * NR_BUCKETS + b];
	}
}

/* ---- Output --------------------------------------------------------- */

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
	if (x->site2 != y->site2)
		return x->site2 < y->site2 ? -1 : 1;
	if (x->cache1 != y->cache1)
		return x->cache1 < y->cache1 ? -1 : 1;
	return x->cache2 < y->cache2 ? -1 : x->cache2 > y->cache2;
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
static struct cache **cache_rows;

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

static void collect(void)
{
	size_t i;

	rows = xcalloc(site_map.n + 1, sizeof(*rows));
	for (i = 0; i < site_map.n; i++)
		if (site_match(sites[i].call_site))
			rows[nrows++] = &sites[i];
	qsort(rows, nrows, sizeof(*rows), cmp_site);
	err_rows = xcalloc(nerrs + 1, sizeof(*err_rows));
	for (i = 0; i < errs_cap; i++)
		if (errs[i].used && (site_match(errs[i].site1) ||
				     (errs[i].type2 >= 0 && site_match(errs[i].site2))))
			err_rows[nerr_rows++] = &errs[i];
	qsort(err_rows, nerr_rows, sizeof(*err_rows), cmp_err);
	cache_rows = xcalloc(cache_map.n + 1, sizeof(*cache_rows));
	for (i = 0; i < cache_map.n; i++)
		cache_rows[i] = &caches[i];
	qsort(cache_rows, cache_map.n, sizeof(*cache_rows), cmp_cache);
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
#define CACHE_NAME_MAX	32	/* text column; longer names are cut */
static bool show_sizes;		/* --sizes */

/* The name DIR/caches gives cache @id, or "cache #ID" if it has none. */
static const char *cache_label(__u64 id, char *buf, size_t len)
{
	const char *name = cache_name_of(id);

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
static const char *cache_name(const struct cache *c, char *buf, size_t len)
{
	static const char units[] = "kMGTPE";
	__u64 v = c->size;
	int u = -1;

	if (c->id)
		return cache_label(c->id, buf, len);
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

static void print_error_text(const struct err *e)
{
	char s1[320], s2[320], c1[320];

	switch (e->kind) {
	case ERR_MISMATCH:
		printf("%8llu x %s: %s %s freed as %s by %s\n", e->count,
		       err_names[e->kind], type_name(e->type1),
		       symbolize(e->site1, s1, sizeof(s1)),
		       type_name(e->type2), symbolize(e->site2, s2, sizeof(s2)));
		break;
	case ERR_DOUBLE:
		printf("%8llu x %s: %s freed by %s, again by %s %s\n", e->count,
		       err_names[e->kind], type_name(e->type1),
		       symbolize(e->site1, s1, sizeof(s1)), type_name(e->type2),
		       symbolize(e->site2, s2, sizeof(s2)));
		break;
	case ERR_UNKNOWN:
		printf("%8llu x %s: %s free by %s\n", e->count, err_names[e->kind],
		       type_name(e->type1), symbolize(e->site1, s1, sizeof(s1)));
		break;
	case ERR_LESS:
		printf("%8llu x %s: %s by %s\n", e->count, err_names[e->kind],
		       type_name(e->type1), symbolize(e->site1, s1, sizeof(s1)));
		break;
	case ERR_CACHE:
		printf("%8llu x %s: %s %s (%s) freed by %s %s", e->count,
		       err_names[e->kind], type_name(e->type1),
		       symbolize(e->site1, s1, sizeof(s1)), cache_label(e->cache1, c1, sizeof(c1)),
		       type_name(e->type2), symbolize(e->site2, s2, sizeof(s2)));
		printf(" (%s)\n", cache_label(e->cache2, c1, sizeof(c1)));
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

	printf("%llu events in %d files; %llu allocations, %llu failed, %llu frees\n",
	       cap.events, cap.nfiles, tot.allocs, tot.failed, tot.frees);
	if (cap.partial)
		printf("partial report: stopped by a signal after %llu events\n", cap.events);
	if (rd.filtered)
		printf("%llu events left out by the filters\n", rd.filtered);
	if (cap.loss.lost)
		printf("%llu events lost (missing sequence numbers, in %llu ranges): %s\n",
		       cap.loss.lost, cap.loss.ranges, "an error or leak may be one of them");
	kmt_loss_print_missed(&cap.loss, &cap.meta, stdout, "");
	if (cap.loss.before)
		printf("%llu events from before the capture, not checked for loss\n",
		       cap.loss.before);
	if (cap.loss.after)
		printf("%llu events numbered after the drain began, not checked for loss\n",
		       cap.loss.after);
	printf("requested %llu bytes, allocated %llu bytes, fragmentation %.1f%% (%lld bytes)\n",
	       tot.req, tot.alloc, pct(frag(tot.alloc, tot.req), tot.alloc),
	       frag(tot.alloc, tot.req));
	for (t = 0; t < NR_TYPES; t++)
		printf("  %-10s %9llu allocations %9llu frees, %s %llu, allocated %llu (%.1f%%)\n",
		       type_names[t], tot.type_allocs[t], tot.type_frees[t], "requested",
		       tot.type_req[t],
		       tot.type_alloc[t], pct(frag(tot.type_alloc[t], tot.type_req[t]),
					       tot.type_alloc[t]));
	printf("freed on another CPU: %llu of %llu frees (%.1f%%)\n", tot.cross, tot.frees,
	       pct(tot.cross, tot.frees));
	printf("still allocated at the end: %llu objects, %llu bytes\n", tot.live,
	       tot.live_bytes);
	if (rd.unknown_ids)
		printf("%llu events of a newer ABI skipped\n", rd.unknown_ids);
	printf("errors:");
	for (t = 0; t < NR_ERR; t++)
		printf(" %s %llu%s", err_names[t], err_totals[t], t + 1 < NR_ERR ? "," : "\n");

	/* The call site column: as wide as its longest name, or the terminal allows. */
	for (i = 0; i < n; i++) {
		int l = strlen(symbolize(rows[i]->call_site, sym, sizeof(sym)));

		if (l > w)
			w = l;
	}
	if (text_width && w > text_width - 78)
		w = text_width - 78 < 16 ? 16 : text_width - 78;
	printf("\n%-*s %-10s %9s %9s %7s %7s %6s %7s %7s %7s\n", w, "call site", "type",
	       "allocs", "frees", "req", "alloc", "frag%", "x-cpu", "live", "live B");
	for (i = 0; i < n; i++) {
		const struct site *s = rows[i];

		printf("%-*.*s %-10s %9llu %9llu %7s %7s %6.1f %7llu %7llu %7s\n", w, w,
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
			printf("  %-*s %-10s %9llu %9llu ", w,
			       symbolize(s->call_site, sym, sizeof(sym)), type_name(s->type),
			       s->live, s->live_bytes);
			if (rd.timed)
				printf("%10.6f\n", s->oldest / 1e9);
			else
				printf("%10s\n", "-");	/* no time stamps */
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
	if (cache_map.n) {
		int w = 15;

		for (i = 0; i < cache_map.n && (top < 0 || i < (size_t)top); i++) {
			int n = strlen(cache_name(cache_rows[i], sym, sizeof(sym)));

			if (n > w)
				w = n < CACHE_NAME_MAX ? n : CACHE_NAME_MAX;
		}
		printf("\n%-*s %9s %9s %7s %7s %6s %7s %7s\n", w, "cache", "allocs", "frees",
		       "req", "alloc", "frag%", "live", "live B");
		for (i = 0; i < cache_map.n && (top < 0 || i < (size_t)top); i++) {
			const struct cache *c = cache_rows[i];
			__u64 bytes = c->allocs * c->size;

			printf("%-*.*s %9llu %9llu %7s %7s %6.1f %7llu %7s\n", w, CACHE_NAME_MAX,
			       cache_name(c, sym, sizeof(sym)), c->allocs, c->frees,
			       human(c->req, b1, sizeof(b1)), human(bytes, b2, sizeof(b2)),
			       pct(frag(bytes, c->req), bytes), c->live,
			       human(c->live_bytes, b3, sizeof(b3)));
		}
		if (top >= 0 && cache_map.n > (size_t)top)
			printf("... %zu more (--top)\n", cache_map.n - top);
	}
	printf("\nallocations by requested size (bytes):\n");
	for (t = 0; t < NR_TYPES; t++) {
		if (!tot.type_allocs[t])
			continue;
		printf("  %s:", type_names[t]);
		print_hist_text(tot.hist[t]);
	}
	if (!show_sizes)
		return;
	printf("\nallocations by requested size (bytes) and call site:\n");
	for (i = 0; i < n; i++) {
		const struct site *s = rows[i];

		if (!s->allocs)
			continue;
		printf("  %s %s:", symbolize(s->call_site, sym, sizeof(sym)), type_name(s->type));
		print_hist_text(&site_hist[(s - sites) * NR_BUCKETS]);
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

static void emit_json(long top)
{
	char sym[320];
	size_t i, n = top < 0 || (size_t)top > nrows ? nrows : (size_t)top;
	int t;

	printf("{\n  \"events\": %llu, \"files\": %d, \"filtered\": %llu, \"newer_abi\": %llu,\n",
	       cap.events, cap.nfiles, rd.filtered, rd.unknown_ids);
	printf("  \"partial\": %s,\n", cap.partial ? "true" : "false");
	printf("  \"lost_events\": %llu,\n", cap.loss.lost);
	printf("  \"lost_ranges\": %llu, \"before_capture\": %llu, \"after_drain\": %llu,\n",
	       cap.loss.ranges, cap.loss.before, cap.loss.after);
	/* Whether --top cut the lists below, and how long they are whole. */
	if (top < 0)
		printf("  \"top\": null, ");
	else
		printf("  \"top\": %ld, ", top);
	printf("\"cut\": %s,\n", top >= 0 && ((size_t)top < nrows || (size_t)top < cache_map.n ||
					     (size_t)top < nerr_rows) ? "true" : "false");
	printf("  \"rows\": { \"sites\": %zu, \"caches\": %zu, \"error_sites\": %zu },\n", nrows,
	       cache_map.n, nerr_rows);
	printf("  \"allocations\": %llu, \"failed\": %llu, \"frees\": %llu,\n", tot.allocs,
	       tot.failed, tot.frees);
	printf("  \"bytes_req\": %llu, \"bytes_alloc\": %llu, \"cross_cpu_frees\": %llu,\n",
	       tot.req, tot.alloc, tot.cross);
	printf("  \"live\": %llu, \"live_bytes\": %llu,\n  \"types\": {", tot.live,
	       tot.live_bytes);
	for (t = 0; t < NR_TYPES; t++) {
		printf("%s\n    \"%s\": { \"allocations\": %llu, \"frees\": %llu, ", t ? "," : "",
		       type_names[t], tot.type_allocs[t], tot.type_frees[t]);
		printf("\"bytes_req\": %llu, \"bytes_alloc\": %llu,\n      \"sizes\": ",
		       tot.type_req[t], tot.type_alloc[t]);
		json_hist(tot.hist[t]);
		printf(" }");
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
		printf(" \"live\": %llu, \"live_bytes\": %llu, \"oldest_live_ns\": ", s->live,
		       s->live_bytes);
		if (rd.timed)
			printf("%llu,", s->oldest);
		else
			printf("null,");	/* no time stamps */
		printf("\n      \"sizes\": ");
		json_hist(&site_hist[(s - sites) * NR_BUCKETS]);
		printf(" }");
	}
	printf("\n  ],\n  \"caches\": [");
	for (i = 0; i < cache_map.n && (top < 0 || i < (size_t)top); i++) {
		const struct cache *c = cache_rows[i];

		printf("%s\n    { \"name\": ", i ? "," : "");
		json_str(cache_name(c, sym, sizeof(sym)));
		if (c->id)
			printf(", \"id\": %llu", (unsigned long long)c->id);
		printf(", \"type\": \"%s\", \"size\": %llu,", type_name(c->type), c->size);
		printf(" \"allocations\": %llu, \"frees\": %llu, \"bytes_req\": %llu,", c->allocs,
		       c->frees, c->req);
		printf(" \"bytes_alloc\": %llu, \"live\": %llu, \"live_bytes\": %llu }",
		       c->allocs * c->size, c->live, c->live_bytes);
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
		if (e->kind == ERR_CACHE) {
			printf(", \"cache\": ");
			json_str(cache_label(e->cache1, sym, sizeof(sym)));
			printf(", \"other_cache\": ");
			json_str(cache_label(e->cache2, sym, sizeof(sym)));
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
		printf(",%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,", type_name(s->type),
		       s->allocs, s->failed, s->frees, s->req, s->alloc, s->cross, s->live,
		       s->live_bytes);
		if (rd.timed)
			printf("%llu", s->oldest);
		printf("\n");
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

/*
 * The exit status of a report made: 3 if the capture misses other
 * events than the kernel counted lost (kmemtrace-check calls it
 * corrupt), 1 if events were lost, a stop signal ended the reading
 * early (not all the capture was read), or the analysis found errors other
 * than frees of unknown pointers (which every capture of a running
 * system has: memory allocated before it), else 0.
 */
static int report_status(void)
{
	int k;

	if (kmt_loss_miscounted(&cap.loss)) {
		kmt_warn(prog, "%s: the capture misses %llu events but the kernel lost %llu: %s",
			 cap.dir, cap.loss.lost, cap.loss.kernel_lost, "a corrupt capture");
		return KMT_EXIT_CORRUPT;
	}
	if (cap.loss.lost || cap.partial)
		return KMT_EXIT_DATA;
	for (k = 0; k < NR_ERR; k++)
		if (k != ERR_UNKNOWN && err_totals[k])
			return KMT_EXIT_DATA;
	return KMT_EXIT_OK;
}

/* Frees the analysis' tables and starts it afresh (also for the fuzz harness). */
static void report_reset(void)
{
	size_t i;

	for (i = 0; i < nsyms; i++)
		free(syms[i].name);
	free(syms);
	for (i = 0; i < ncache_names; i++)
		free(cache_names[i].name);
	free(cache_names);
	cache_names = NULL;
	ncache_names = 0;
	key_map_free(&site_map);
	key_map_free(&cache_map);
	free(sites);
	free(site_hist);
	free(caches);
	free(lives);
	free(freed);
	free(errs);
	free(rows);
	free(err_rows);
	free(cache_rows);
	syms = NULL;
	sites = NULL;
	site_hist = NULL;
	caches = NULL;
	lives = NULL;
	freed = NULL;
	errs = NULL;
	rows = NULL;
	err_rows = NULL;
	cache_rows = NULL;
	nsyms = 0;
	sites_cap = 0;
	site_hist_cap = 0;
	caches_cap = 0;
	lives_cap = 0;
	nlives = 0;
	errs_cap = 0;
	nerrs = 0;
	nrows = 0;
	nerr_rows = 0;
	memset(&tot, 0, sizeof(tot));
	memset(&rd, 0, sizeof(rd));
	memset(err_totals, 0, sizeof(err_totals));
	kmt_capture_close(&cap);
	memset(&cap, 0, sizeof(cap));
	filt.have_base = false;
}

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] DIR\n"
		"Reports on a kmemtraced capture in DIR: memory and fragmentation per\n"
		"call site and per cache, cross-CPU frees, errors and what was still\n"
		"allocated at the end.\n"
		"A stop signal ends the reading early: the report says partial, exit 1.\n"
		"  -f, --format=FMT     text (default), json, csv (the call sites), or folded\n"
		"                       (\"function;type bytes\" lines for flame graphs)\n"
		"  -s, --sort=KEY       order of the call sites: bytes (allocated, default),\n"
		"                       req, hits, frag, cross, live\n"
		"  -n, --top=N          at most N call sites, N caches and N errors (-1: all);\n"
		"                       the default: 20 in text, all in json, csv and folded\n"
		"  -t, --type=TYPE      only kmalloc, kmem_cache or pages events\n"
		"  -c, --cpu=N          only the events recorded on CPU N\n"
		"  -w, --window=A:B     only the events from A to B seconds after the first\n"
		"                       (either may be left out)\n"
		"  -S, --site=TEXT      only the call sites (and errors) whose symbol or\n"
		"                       address contains TEXT\n"
		"  -z, --sizes          the text report also shows each call site's\n"
		"                       allocations by requested size (JSON always has them)\n"
		"  -k, --kallsyms=FILE  symbols from FILE (kallsyms or System.map format)\n"
		"                       instead of DIR/kallsyms\n"
		"  -h, --help           print this help and exit\n"
		"  -V, --version        print the version and the ABI read, and exit\n"
		KMT_EXIT_HELP "(errors: those listed, but frees of unknown pointers)\n", prog,
		"events lost, or errors found");
}

static int bad_option(const char *opt, const char *arg, const char *what)
{
	fprintf(stderr, "%s: --%s=%s: %s\n", prog, opt, arg, what);
	print_help(stderr);
	return KMT_EXIT_USAGE;
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
	/* Finite, and within what 64 bits of nanoseconds hold: 584 years. */
	if (!isfinite(a) || !isfinite(b) || a > 1.8e10 || b > 1.8e10)
		return false;
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
		{ "sizes", no_argument, NULL, 'z' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const formats[] = { "text", "json", "csv", "folded" };
	const char *dir, *symfile = NULL;
	int format = 0;
	char path[PATH_MAX], *end, abi[32];
	long top = -2, v;	/* -2: the format's default */
	size_t i;
	int c, status;

	while ((c = getopt_long(argc, argv, "f:s:n:t:c:w:S:zk:hV", longopts, NULL)) != -1) {
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
			/* "cache", the name of earlier versions, too. */
			if (!strcmp(optarg, "cache"))
				i = KMEMTRACE_TYPE_CACHE;
			if (i == NR_TYPES)
				return bad_option("type", optarg, "not kmalloc, kmem_cache or pages");
			filt.type = i;
			break;
		case 'c':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || v < 0 || v > INT_MAX)
				return bad_option("cpu", optarg, "not a CPU number");
			filt.cpu = v;
			break;
		case 'w':
			if (!parse_window(optarg, &filt.from, &filt.to))
				return bad_option("window", optarg, "not A:B seconds with A <= B");
			filt.windowed = true;
			break;
		case 'S':
			site_filter = optarg;
			break;
		case 'z':
			show_sizes = true;
			break;
		case 'k':
			symfile = optarg;
			break;
		case 'h':
			print_help(stdout);
			return KMT_EXIT_OK;
		case 'V':
			snprintf(abi, sizeof(abi), "kmemtrace ABI %d", KMEMTRACE_ABI_VERSION);
			kmt_print_version(prog, abi);
			return KMT_EXIT_OK;
		default:
			print_help(stderr);
			return KMT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		print_help(stderr);
		return KMT_EXIT_USAGE;
	}
	dir = argv[optind];
	if (top == -2)
		top = format ? -1 : 20;
	kmt_catch_stop_signals();
	/* The first error ends the reading: the report would be of half the events. */
	cap.stop_on_error = true;
	status = kmt_capture_open(&cap, dir);
	if (status)
		die(status, "%s", cap.error);
	if (cap.meta.abi_version > KMEMTRACE_ABI_VERSION)
		kmt_warn(prog, "%s/meta: ABI %d is newer than this tool's %d; %s", dir,
			 cap.meta.abi_version, KMEMTRACE_ABI_VERSION, "unknown events are skipped");
	if (symfile) {
		if (!load_symbols(symfile))
			die(KMT_EXIT_USAGE, "%s: %s", symfile, strerror(errno));
	} else {
		snprintf(path, sizeof(path), "%s/kallsyms", dir);
		load_symbols(path);
	}
	snprintf(path, sizeof(path), "%s/caches", dir);
	load_cache_names(path);
	if (!analyse())
		die(cap.status, "%s", cap.error);
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
	/* The text says it with the losses; the machine formats on stderr. */
	if (format) {
		snprintf(path, sizeof(path), "%s: %.200s: ", prog, dir);
		kmt_loss_print_missed(&cap.loss, &cap.meta, stderr, path);
	}
	if (fflush(stdout) || ferror(stdout))
		die(KMT_EXIT_USAGE, "writing the report: %s", strerror(errno));
	status = report_status();
	report_reset();
	return status;
}
