/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.h - kmemtrace-report's state: struct report, all a report holds
 * from its options to its rows, and the types of its tables.
 *
 * kmemtrace-report is one program built from one source file,
 * kmemtrace-report.c, which includes its parts in this order, each once:
 *
 *   report.h           the state (this file): the types and struct report,
 *                      and prog, die() and xcalloc() that every part uses
 *   report_read.h      the inputs: symbols, the caches file, the events
 *                      of the capture (kmt_capture.h) through the filters
 *   report_analysis.h  the accounting per call site, per cache, of the
 *                      live objects and of the errors; the reader thread
 *                      that feeds it; the totals
 *   report_output.h    the rows in their order, and the formats: text,
 *                      JSON, CSV and folded
 *
 * Each function takes the report it works on (struct report *rep): no
 * part keeps state of its own, and report_reset() frees one report and
 * makes it new, for the fuzz harnesses (tests/fuzz_report*.c) as well.
 */
#ifndef KMT_REPORT_H
#define KMT_REPORT_H

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

#include "kmt_capture.h"
#include "kmt_cli.h"
#include "kmt_events.h"
#include "kmt_meta.h"
#include "kmt_msg.h"

static const char *const prog = "kmemtrace-report";

#define die(status, ...)	kmt_die(prog, status, __VA_ARGS__)

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die(KMT_EXIT_USAGE, "out of memory");
	return p;
}

/* ---- Symbols and cache names (report_read.h) ------------------------- */

struct sym {
	__u64 addr;
	char *name;
};

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

/* ---- Events, as the reader hands them to the analysis ---------------- */

/* One event as the analysis needs it: what the reader hands over. */
struct rec {
	__u64 call_site, ptr, bytes_req, bytes_alloc, time, cache;
	int cpu;
	uint8_t event_id, type_id;
};

/* What the reader counted besides: the events not handed over. */
struct report_read {
	__u64 filtered, unknown_ids;
	__u64 last_time;	/* of the events handed over */
	bool timed;		/* any had a time stamp (not so in ABI 1) */
};

/* The filters: only events of this type, this CPU, this window of time. */
struct report_filter {
	int type, cpu;		/* -1: any */
	bool windowed, have_base;
	__u64 from, to, base;
};

/*
 * The capture, read and analysed: the reader (read_recs()) in a thread
 * of its own, handing over batches of events through a ring, so that
 * reading and decoding overlap the analysis; on one thread if a second
 * cannot be had.
 */
#define BATCH	8192	/* events, 448 KiB: few handovers, each of which may wake */
#define NBATCH	4	/* a thread, which is dear (most of all in a VM) */

struct batch {
	struct rec r[BATCH];
	unsigned int n;
};

/* ---- The analysis' tables (report_analysis.h) ------------------------ */

#define NR_TYPES	3
#define NR_BUCKETS	65	/* requested sizes by power of two: every __u64 */

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

/* Per call site and type. */
struct site {
	__u64 call_site;
	int type;
	__u64 allocs, failed, frees, req, alloc, cross;
	__u64 live, live_bytes, oldest;	/* at the end */
};

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

/*
 * The last free of each slab pointer freed, unless it was allocated
 * again as a page since (an entry of a pointer live again as an object
 * stays until that object's free replaces it): a free of a slab object
 * that is not live is a double free if the pointer is here, a
 * mismatched free if it is live as a page, and a free of an unknown
 * pointer otherwise. Two generations of open-addressing tables: the
 * current one grows to FREED_MAX_SLOTS / 2 slots, holding half as many
 * pointers; when it is full, the older generation is dropped, its
 * pointers not live again counted as forgotten (struct report's
 * freed_forgotten), and the current one becomes the older. So the last
 * FREED_MAX_SLOTS / 4 (16384) pointers freed, at least, are always
 * remembered, in 1 MiB at most: more would leave the tables out of the
 * caches, and the report at half its speed. The report says when it
 * forgot some, as a double free of one of those is called a free of an
 * unknown pointer.
 */
#ifndef FREED_MAX_SLOTS		/* a power of two; tests build with a small one */
#define FREED_MAX_SLOTS	(64UL << 10)
#endif

struct freed {
	__u64 ptr;		/* 0: an empty slot */
	__u64 at;		/* the free's place among the events (report.seen) */
	unsigned int site;	/* index in sites[] of the free */
};

struct freed_table {
	struct freed *slot;
	size_t cap, n;
};

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

struct totals {
	__u64 allocs, failed, frees, req, alloc, cross, live, live_bytes;
	/* Per type: allocations, frees, bytes requested and allocated. */
	__u64 type_allocs[NR_TYPES], type_frees[NR_TYPES];
	__u64 type_req[NR_TYPES], type_alloc[NR_TYPES];
	/* Allocations by requested size: bucket b holds [2^(b-1), 2^b). */
	__u64 hist[NR_TYPES][NR_BUCKETS];
};

/* ---- Output (report_output.h) ---------------------------------------- */

enum sort_key { SORT_ALLOC, SORT_REQ, SORT_HITS, SORT_FRAG, SORT_CROSS, SORT_LIVE };

/* ---- The report ------------------------------------------------------- */

/*
 * All one report holds. report_init() makes it new (no filter, sorted
 * by bytes allocated); report_reset() frees what it holds and makes it
 * new again. The tables grow with the call sites, caches, live objects
 * and errors of the capture, never with its events or files.
 */
struct report {
	/* The options (main()). */
	struct report_filter filt;
	enum sort_key sort_key;
	const char *site_filter;	/* --site: rows whose call site contains it */
	bool show_sizes;		/* --sizes */
	int text_width;			/* of the terminal, 0 when not one */

	/* The inputs (report_read.h). */
	struct sym *syms;
	size_t nsyms;
	struct cache_name *cache_names;
	size_t ncache_names;
	/*
	 * The capture, read as one stream in sequence order (kmt_capture.h),
	 * which stops at the first error: a corrupt event, a number that does
	 * not follow the one before it in its file or is in two files, or an
	 * I/O error (cap.error, cap.status). It counts the events lost too, as
	 * kmemtrace-check does (cap.loss).
	 */
	struct kmt_capture cap;
	struct report_read rd;

	/* The reader thread's handover (report_analysis.h: analyse()). */
	struct batch *ring;
	sem_t ring_free, ring_full;
	sigset_t stop_signals;		/* which the reader takes */

	/* The analysis (report_analysis.h). */
	struct key_map site_map;
	struct site *sites;
	size_t sites_cap;
	__u64 *site_hist;		/* allocations by requested size, NR_BUCKETS per site */
	size_t site_hist_cap;
	struct key_map cache_map;
	struct cache *caches;
	size_t caches_cap;
	struct live *lives;
	size_t lives_cap, nlives;
	struct freed_table freed[2];	/* the current generation, the older */
	/*
	 * The events accounted so far, and where each type's first one
	 * came among them (0: none yet): a type whose recording began
	 * after a pointer's free may have taken it unseen since.
	 */
	__u64 seen, type_first[KMEMTRACE_TYPE_PAGES + 1];
	__u64 freed_forgotten;		/* pointers forgotten: the tables were full */
	struct err *errs;
	size_t errs_cap, nerrs;
	__u64 err_totals[NR_ERR];
	struct totals tot;

	/* The report's rows, in their order (report_output.h: collect()). */
	struct site **rows;
	size_t nrows;
	struct err **err_rows;
	size_t nerr_rows;
	struct cache **cache_rows;
};

#endif /* KMT_REPORT_H */
