/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report_analysis.h - kmemtrace-report's analysis (report.h says how the
 * parts fit): each event accounted to its call site and its cache, the
 * live objects followed by pointer, the errors (mismatched, double and
 * unknown frees, allocations of less than asked or twice, frees to
 * another cache) counted by kind and pair of call sites; the reader
 * thread that feeds it; what was live at the end, and the totals.
 */
#ifndef KMT_REPORT_ANALYSIS_H
#define KMT_REPORT_ANALYSIS_H

#include "report_read.h"

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

/* Bucket b holds the sizes in [2^(b-1), 2^b); bucket 0 holds 0. */
static int bucket(__u64 size)
{
	int b = size ? 64 - __builtin_clzll(size) : 0;

	return b;
}

/* Keys to dense indexes (struct key_map): for the call sites and the caches. */
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

/* ---- Call sites, caches ---------------------------------------------- */

/* The index of (@call_site, @type) in rep->sites[], a new one if need be. */
static unsigned int site_index(struct report *rep, __u64 call_site, int type)
{
	bool added;
	unsigned int i = key_index(&rep->site_map, call_site, type, &added);

	if (added) {
		grow((void **)&rep->sites, &rep->sites_cap, rep->site_map.n, sizeof(*rep->sites));
		grow((void **)&rep->site_hist, &rep->site_hist_cap, rep->site_map.n,
		     NR_BUCKETS * sizeof(*rep->site_hist));
		rep->sites[i].call_site = call_site;
		rep->sites[i].type = type;
	}
	return i;
}

/* The index in rep->caches[] of cache @id, or of the size class if @id is 0. */
static unsigned int cache_index(struct report *rep, __u64 id, __u64 size, int type)
{
	bool added;
	unsigned int i = id ? key_index(&rep->cache_map, id, CACHE_KEY, &added) :
				key_index(&rep->cache_map, size, type, &added);

	if (added) {
		grow((void **)&rep->caches, &rep->caches_cap, rep->cache_map.n,
		     sizeof(*rep->caches));
		rep->caches[i].id = id;
		rep->caches[i].size = size;
		rep->caches[i].type = type;
	}
	return i;
}

/* ---- Live allocations (struct live) ----------------------------------- */

static size_t live_home(const struct report *rep, __u64 ptr, bool page)
{
	return mix(ptr ^ page) & (rep->lives_cap - 1);
}

static size_t live_slot(const struct report *rep, __u64 ptr, bool page)
{
	size_t i;

	for (i = live_home(rep, ptr, page);
	     rep->lives[i].ptr && (rep->lives[i].ptr != ptr || rep->lives[i].page != page);
	     i = (i + 1) & (rep->lives_cap - 1))
		;
	return i;
}

static void lives_grow(struct report *rep)
{
	struct live *old = rep->lives;
	size_t i, old_cap = rep->lives_cap;

	/* Small to start with: a table that fits the cache is most of the speed. */
	rep->lives_cap = rep->lives_cap ? 2 * rep->lives_cap : 1024;
	rep->lives = xcalloc(rep->lives_cap, sizeof(*rep->lives));
	for (i = 0; i < old_cap; i++)
		if (old[i].ptr)
			rep->lives[live_slot(rep, old[i].ptr, old[i].page)] = old[i];
	free(old);
}

static struct live *live_find(struct report *rep, __u64 ptr, bool page)
{
	struct live *l;

	if (!rep->lives_cap)
		return NULL;
	l = &rep->lives[live_slot(rep, ptr, page)];
	return l->ptr ? l : NULL;
}

/* The entry of @ptr, *@old saying if it was live already. */
static struct live *live_add(struct report *rep, __u64 ptr, bool page, bool *old)
{
	struct live *l;

	if (2 * (rep->nlives + 1) > rep->lives_cap)
		lives_grow(rep);
	l = &rep->lives[live_slot(rep, ptr, page)];
	*old = l->ptr;
	if (!l->ptr) {
		rep->nlives++;
		l->ptr = ptr;
		l->page = page;
	}
	return l;
}

static void live_del(struct report *rep, struct live *l)
{
	size_t i = l - rep->lives, j = i;

	l->ptr = 0;
	rep->nlives--;
	for (;;) {
		size_t home;

		j = (j + 1) & (rep->lives_cap - 1);
		if (!rep->lives[j].ptr)
			return;
		home = live_home(rep, rep->lives[j].ptr, rep->lives[j].page);
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? home <= i || home > j : home <= i && home > j) {
			rep->lives[i] = rep->lives[j];
			rep->lives[j].ptr = 0;
			i = j;
		}
	}
}

/* ---- Freed slab pointers (struct freed) ------------------------------ */

static size_t freed_slot(const struct freed_table *t, __u64 ptr)
{
	size_t i;

	for (i = mix(ptr) & (t->cap - 1); t->slot[i].ptr && t->slot[i].ptr != ptr;
	     i = (i + 1) & (t->cap - 1))
		;
	return i;
}

/* @ptr's entry in @t, or NULL. */
static struct freed *freed_in(const struct freed_table *t, __u64 ptr)
{
	struct freed *fr;

	if (!t->cap)
		return NULL;
	fr = &t->slot[freed_slot(t, ptr)];
	return fr->ptr ? fr : NULL;
}

/* @ptr's last free, in either generation, or NULL; *@gen says which. */
static struct freed *freed_find(struct report *rep, __u64 ptr, int *gen)
{
	for (*gen = 0; *gen < 2; (*gen)++) {
		struct freed *fr = freed_in(&rep->freed[*gen], ptr);

		if (fr)
			return fr;
	}
	return NULL;
}

/* @fr out of @t, the table's probes kept whole. */
static void freed_del(struct freed_table *t, struct freed *fr)
{
	size_t i = fr - t->slot, j = i;

	fr->ptr = 0;
	t->n--;
	for (;;) {
		size_t home;

		j = (j + 1) & (t->cap - 1);
		if (!t->slot[j].ptr)
			return;
		home = mix(t->slot[j].ptr) & (t->cap - 1);
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? home <= i || home > j : home <= i && home > j) {
			t->slot[i] = t->slot[j];
			t->slot[j].ptr = 0;
			i = j;
		}
	}
}

/*
 * The pointers of @t not live again as objects: those whose double free
 * the report can no longer see when @t goes. Walks the smaller of @t
 * and the live table, so that a drop costs at most one look-up per slot
 * of the generation.
 */
static __u64 freed_not_live(struct report *rep, const struct freed_table *t)
{
	__u64 n = t->n;
	size_t i;

	if (rep->lives_cap < t->cap) {
		for (i = 0; i < rep->lives_cap; i++)
			if (rep->lives[i].ptr && !rep->lives[i].page &&
			    freed_in(t, rep->lives[i].ptr))
				n--;
		return n;
	}
	for (i = 0; i < t->cap; i++)
		if (t->slot[i].ptr && live_find(rep, t->slot[i].ptr, false))
			n--;
	return n;
}

/*
 * Room for one more in the current generation: twice the slots, or, at
 * FREED_MAX_SLOTS / 2, a new generation, the older one's pointers
 * counted as forgotten.
 */
static void freed_make_room(struct report *rep)
{
	struct freed_table *cur = &rep->freed[0], *older = &rep->freed[1];
	struct freed *old = cur->slot;
	size_t i, old_cap = cur->cap, max = FREED_MAX_SLOTS / 2;

	if (old_cap >= max) {
		rep->freed_forgotten += freed_not_live(rep, older);
		free(older->slot);
		*older = *cur;
		cur->slot = xcalloc(old_cap, sizeof(*cur->slot));
		cur->n = 0;
		return;
	}
	cur->cap = old_cap ? 2 * old_cap : (max < 1024 ? max : 1024);
	cur->slot = xcalloc(cur->cap, sizeof(*cur->slot));
	for (i = 0; i < old_cap; i++)
		if (old[i].ptr)
			cur->slot[freed_slot(cur, old[i].ptr)] = old[i];
	free(old);
}

/*
 * @ptr freed at site @si, in the current generation, out of the older;
 * @fr and @gen are what freed_find() said of it.
 */
static void freed_put(struct report *rep, __u64 ptr, unsigned int si, struct freed *fr,
		      int gen)
{
	struct freed_table *cur = &rep->freed[0];

	if (fr && gen == 0) {
		fr->site = si;
		fr->at = rep->seen;
		return;
	}
	if (fr)
		freed_del(&rep->freed[1], fr);
	if (2 * (cur->n + 1) > cur->cap)
		freed_make_room(rep);
	fr = &cur->slot[freed_slot(cur, ptr)];
	fr->ptr = ptr;
	fr->site = si;
	fr->at = rep->seen;
	cur->n++;
}

/* ---- Errors ---------------------------------------------------------- */

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
static struct err *err_slot(const struct report *rep, const struct err *k)
{
	size_t i;

	for (i = err_hash(k) & (rep->errs_cap - 1);
	     rep->errs[i].used && !err_same(&rep->errs[i], k);
	     i = (i + 1) & (rep->errs_cap - 1))
		;
	return &rep->errs[i];
}

static void note_err_caches(struct report *rep, int kind, int type1, __u64 site1, int type2,
			    __u64 site2, __u64 cache1, __u64 cache2)
{
	struct err k = { .kind = kind, .type1 = type1, .type2 = type2,
			 .site1 = site1, .site2 = site2, .cache1 = cache1,
			 .cache2 = cache2, .used = true };
	struct err *e;

	rep->err_totals[kind]++;
	if (2 * (rep->nerrs + 1) > rep->errs_cap) {
		struct err *old = rep->errs;
		size_t j, old_cap = rep->errs_cap;

		rep->errs_cap = rep->errs_cap ? 2 * rep->errs_cap : 256;
		rep->errs = xcalloc(rep->errs_cap, sizeof(*rep->errs));
		for (j = 0; j < old_cap; j++)
			if (old[j].used)
				*err_slot(rep, &old[j]) = old[j];
		free(old);
	}
	e = err_slot(rep, &k);
	if (!e->used) {
		*e = k;
		rep->nerrs++;
	}
	e->count++;
}

static void note_err(struct report *rep, int kind, int type1, __u64 site1, int type2,
		     __u64 site2)
{
	note_err_caches(rep, kind, type1, site1, type2, site2, 0, 0);
}

/* ---- The analysis ---------------------------------------------------- */

static bool is_null_free(__u64 ptr)
{
	return ptr <= 16;	/* NULL and ZERO_SIZE_PTR */
}

/*
 * Whether a slab type's first event came after @at: a type added to the
 * mask since, whose allocations went unrecorded until then. SLUB merges
 * kmem_caches with kmalloc caches, so either type may have taken unseen
 * a pointer the other freed at @at.
 */
static bool slab_type_began_after(const struct report *rep, __u64 at)
{
	return rep->type_first[KMEMTRACE_TYPE_KMALLOC] > at ||
	       rep->type_first[KMEMTRACE_TYPE_CACHE] > at;
}

/* One event onto its call site, its cache, the live objects and the errors. */
static void account(struct report *rep, const struct rec *e)
{
	struct site *s, *sites;
	struct freed *fr;
	struct cache *c;
	int gen = 0;
	bool page = e->type_id == KMEMTRACE_TYPE_PAGES;
	struct live *l;
	unsigned int si;
	bool old;

	rep->seen++;
	if (e->type_id <= KMEMTRACE_TYPE_PAGES && !rep->type_first[e->type_id])
		rep->type_first[e->type_id] = rep->seen;
	if (e->event_id != KMEMTRACE_EVENT_ALLOC && is_null_free(e->ptr))
		return;
	si = site_index(rep, e->call_site, e->type_id);
	sites = rep->sites;	/* which only site_index() moves */
	s = &sites[si];
	if (e->event_id == KMEMTRACE_EVENT_ALLOC) {
		if (!e->ptr) {
			s->failed++;
			return;
		}
		s->allocs++;
		s->req += e->bytes_req;
		s->alloc += e->bytes_alloc;
		rep->site_hist[si * NR_BUCKETS + bucket(e->bytes_req)]++;
		if (e->bytes_alloc < e->bytes_req)
			note_err(rep, ERR_LESS, e->type_id, e->call_site, e->type_id, e->call_site);
		/*
		 * Allocated again as an object, a last free of the pointer
		 * may stay in the freed set: it is judged only while the
		 * pointer is not live, and the object's free replaces it
		 * (a generation dropped does not count it as forgotten while
		 * it is live). As a page, the object's last free goes: a
		 * kfree() of the page is a mismatched free, not a double free.
		 */
		if (page) {
			fr = freed_find(rep, e->ptr, &gen);
			if (fr)
				freed_del(&rep->freed[gen], fr);
		}
		l = live_add(rep, e->ptr, page, &old);
		if (old)
			note_err(rep, ERR_REALLOC, sites[l->site].type, sites[l->site].call_site,
				 e->type_id, e->call_site);
		l->site = si;
		l->cache = cache_index(rep, e->cache, e->bytes_alloc, e->type_id);
		c = &rep->caches[l->cache];
		if (c->type != e->type_id)
			c->type = TYPE_MIXED;
		l->time = e->time;
		l->cpu = e->cpu;
		c->allocs++;
		c->req += e->bytes_req;
		return;
	}
	s->frees++;
	fr = freed_find(rep, e->ptr, &gen);
	l = live_find(rep, e->ptr, page);
	/*
	 * Freed before and not allocated since: a double free. But pages
	 * are freed in parts and taken without an event, --cpu and --type
	 * leave allocations out that may have taken the pointer in
	 * between, and so does a slab type recorded only since.
	 */
	if (!l && fr && !page && rep->filt.cpu < 0 && rep->filt.type < 0 &&
	    !slab_type_began_after(rep, fr->at)) {
		note_err(rep, ERR_DOUBLE, sites[fr->site].type, sites[fr->site].call_site,
			 e->type_id, e->call_site);
	} else if (!l) {
		/*
		 * Live as the other kind: a page freed as a slab object, or
		 * the reverse, a mismatched free. That allocation stays live:
		 * the kernel also records its own free (kfree() of a page
		 * records a kmalloc free, then the page's).
		 */
		l = live_find(rep, e->ptr, !page);
		if (l)
			note_err(rep, ERR_MISMATCH, sites[l->site].type, sites[l->site].call_site,
				 e->type_id, e->call_site);
		else
			note_err(rep, ERR_UNKNOWN, e->type_id, e->call_site, -1, 0);
	} else {
		struct site *as = &sites[l->site];	/* the allocation's */

		c = &rep->caches[l->cache];
		/*
		 * kfree() of a kmem_cache_alloc() object is allowed since
		 * Linux 6.4 (kfree_rcu() does it): when the free names the
		 * object's own cache, as this kernel's kfree() does, it is
		 * not an error. Without caches (ABI 1) it cannot be told.
		 */
		if (as->type != e->type_id &&
		    !(as->type == KMEMTRACE_TYPE_CACHE && e->type_id == KMEMTRACE_TYPE_KMALLOC &&
		      e->cache && e->cache == c->id))
			note_err(rep, ERR_MISMATCH, as->type, as->call_site, e->type_id,
				 e->call_site);
		else if (e->cache && c->id && e->cache != c->id)
			note_err_caches(rep, ERR_CACHE, as->type, as->call_site, e->type_id,
					e->call_site, c->id, e->cache);
		if (l->cpu != e->cpu)
			as->cross++;
		c->frees++;
		live_del(rep, l);
	}
	if (!page)
		freed_put(rep, e->ptr, si, fr, gen);
}

/* ---- The reader thread, and the analysis fed by it (struct batch) ----- */

/* sem_wait(), again if a signal interrupts it. */
static void ring_wait(sem_t *sem)
{
	while (sem_wait(sem) && errno == EINTR)
		;
}

/* The reader thread: batches of events into the ring, until the capture's end. */
static void *reader(void *arg)
{
	struct report *rep = arg;
	unsigned int w = 0, n;
	struct batch *b;

	pthread_sigmask(SIG_UNBLOCK, &rep->stop_signals, NULL);

	do {
		b = &rep->ring[w];
		ring_wait(&rep->ring_free);
		n = read_recs(rep, b->r, BATCH);
		b->n = n;
		sem_post(&rep->ring_full);	/* b is the analysis' from here */
		w = (w + 1) % NBATCH;
	} while (n == BATCH);
	return NULL;
}

/* The whole capture read and accounted: false at an error (rep->cap.error). */
static bool analyse(struct report *rep)
{
	bool have_free = false, have_full = false, threaded = false;
	unsigned int i, r = 0, n;
	pthread_t thread;
	struct batch *b;

	rep->ring = xcalloc(NBATCH, sizeof(*rep->ring));
	have_free = !sem_init(&rep->ring_free, 0, NBATCH);
	have_full = have_free && !sem_init(&rep->ring_full, 0, 0);
	/*
	 * The stop signals go to the reader, whose read() they must
	 * interrupt (a CPU file may be a pipe that waits): not here. They
	 * are blocked before the thread is made, which inherits the mask
	 * and unblocks them, so that one sent in between waits for it
	 * rather than landing here, where no read() would see it.
	 */
	sigemptyset(&rep->stop_signals);
	sigaddset(&rep->stop_signals, SIGINT);
	sigaddset(&rep->stop_signals, SIGTERM);
	if (have_full)
		pthread_sigmask(SIG_BLOCK, &rep->stop_signals, NULL);
	threaded = have_full && !pthread_create(&thread, NULL, reader, rep);
	if (have_full && !threaded)
		pthread_sigmask(SIG_UNBLOCK, &rep->stop_signals, NULL);
	if (threaded) {
		do {
			b = &rep->ring[r];
			ring_wait(&rep->ring_full);
			n = b->n;
			for (i = 0; i < n; i++)
				account(rep, &b->r[i]);
			sem_post(&rep->ring_free);
			r = (r + 1) % NBATCH;
		} while (n == BATCH);
		pthread_join(thread, NULL);
		pthread_sigmask(SIG_UNBLOCK, &rep->stop_signals, NULL);
	} else {
		do {
			n = read_recs(rep, rep->ring->r, BATCH);
			for (i = 0; i < n; i++)
				account(rep, &rep->ring->r[i]);
		} while (n == BATCH);
	}
	if (have_full)
		sem_destroy(&rep->ring_full);
	if (have_free)
		sem_destroy(&rep->ring_free);
	free(rep->ring);
	rep->ring = NULL;
	return !rep->cap.nerrors;
}

/* ---- Totals ------------------------------------------------------------ */

/* What was still allocated at the end onto its site and cache, then the totals. */
static void leaks(struct report *rep)
{
	size_t i;
	int b;

	for (i = 0; i < rep->lives_cap; i++) {
		struct live *l = &rep->lives[i];
		struct site *s;
		__u64 age;

		if (!l->ptr)
			continue;
		s = &rep->sites[l->site];
		s->live++;
		s->live_bytes += rep->caches[l->cache].size;
		rep->caches[l->cache].live++;
		rep->caches[l->cache].live_bytes += rep->caches[l->cache].size;
		age = rep->rd.last_time > l->time ? rep->rd.last_time - l->time : 0;
		if (age > s->oldest)
			s->oldest = age;
	}
	for (i = 0; i < rep->site_map.n; i++) {
		const struct site *s = &rep->sites[i];
		int t = s->type;

		rep->tot.allocs += s->allocs;
		rep->tot.failed += s->failed;
		rep->tot.frees += s->frees;
		rep->tot.req += s->req;
		rep->tot.alloc += s->alloc;
		rep->tot.cross += s->cross;
		rep->tot.live += s->live;
		rep->tot.live_bytes += s->live_bytes;
		if (t >= NR_TYPES)
			continue;
		rep->tot.type_allocs[t] += s->allocs;
		rep->tot.type_frees[t] += s->frees;
		rep->tot.type_req[t] += s->req;
		rep->tot.type_alloc[t] += s->alloc;
		for (b = 0; b < NR_BUCKETS; b++)
			rep->tot.hist[t][b] += rep->site_hist[i * NR_BUCKETS + b];
	}
}

#endif /* KMT_REPORT_ANALYSIS_H */
