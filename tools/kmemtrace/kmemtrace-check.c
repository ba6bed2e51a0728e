// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtrace-check - validate a kmemtrace capture and count its losses.
 *
 * Reads a directory written by kmemtraced (meta and cpu<n>) and checks
 * every event: ids, sizes, feature records, bytes allocated >= requested
 * > 0, sequence numbers increasing in each CPU file (with wraparound)
 * and unique across them. The sequence numbers missing from the union of
 * the files, inside the window the capture covers (from start_seq, read
 * before the readers started, to drain_seq, read when the final drain
 * began), are the events the kernel lost; they are reported as ranges,
 * and for a complete capture (kmemtraced -e) compared with what the
 * kernel counted. Events outside the window (left in the buffers from
 * before, or numbered while the readers drained) are counted, not
 * judged. Events with ids from a newer ABI are skipped by their size.
 *
 * Exit status: 0 clean, 1 lossy (events lost, none corrupt), 2 corrupt,
 * 3 the capture cannot be read or bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmt_events.h"
#include "kmt_meta.h"
#include "kmt_msg.h"

#define MAX_ERRORS	20

static const char *prog = "kmemtrace-check";
static bool verbose;
static unsigned long nerrors;

/* Every event's unwrapped sequence number and its file. */
struct seen {
	__s64 seq;
	int file;
};

static struct seen *seen;
static size_t nseen, seen_cap;

#define die(status, ...)	kmt_die(prog, status, __VA_ARGS__)

static void corrupt(const char *fmt, ...)
{
	va_list ap;

	if (nerrors++ >= MAX_ERRORS)
		return;
	va_start(ap, fmt);
	kmt_vwarn(prog, fmt, ap);
	va_end(ap);
}

static void read_meta(const char *dir, struct kmt_meta *m)
{
	char err[PATH_MAX + 256];

	if (kmt_read_meta(dir, m, err, sizeof(err)))
		die(3, "%s", err);
	if (m->abi_version > KMEMTRACE_ABI_VERSION)
		fprintf(stderr, "%s: capture ABI %d, tool ABI %d: unknown features skipped\n",
			prog, m->abi_version, KMEMTRACE_ABI_VERSION);
}

static void add_seen(__s64 seq, int file)
{
	if (nseen == seen_cap) {
		seen_cap = seen_cap ? seen_cap * 2 : 1 << 16;
		seen = realloc(seen, seen_cap * sizeof(*seen));
		if (!seen)
			die(3, "out of memory");
	}
	seen[nseen].seq = seq;
	seen[nseen].file = file;
	nseen++;
}

static int cmp_seen(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct totals {
	__u64 events, allocs, frees, bytes, unknown;
	__u64 by_type[3];
};

/*
 * Checks one CPU file. @ref is the reference sequence number for
 * unwrapping: the first one of the first file with events.
 */
static void check_file(const char *dir, const struct kmt_meta *m, int fi, bool *have_ref,
		       int32_t *ref, struct totals *t)
{
	char path[PATH_MAX];
	unsigned char *buf;
	size_t len, off = 0;
	__s64 prev_u = 0;
	int32_t prev = 0;
	bool first = true;

	snprintf(path, sizeof(path), "%s/%s", dir, m->files[fi]);
	buf = (unsigned char *)kmt_slurp(path, &len);
	if (!buf)
		die(3, "%s: %s", path, strerror(errno));
	while (off < len) {
		struct kmt_event e;
		const char *why = kmt_decode(buf + off, len - off, m->swap, &e);
		__s64 u;

		if (why) {
			corrupt("%s: offset %zu: %s", path, off, why);
			break;
		}
		if (e.unknown) {
			t->unknown++;
		} else if (e.event_id == KMEMTRACE_EVENT_ALLOC) {
			if (e.bytes_req == 0)
				corrupt("%s: offset %zu: seq %d: requested bytes is 0", path, off,
					e.seq);
			else if (e.bytes_alloc < e.bytes_req)
				corrupt("%s: offset %zu: seq %d: allocated %llu < requested %llu",
					path, off, e.seq, e.bytes_alloc, e.bytes_req);
			t->allocs++;
		} else {
			t->frees++;
		}
		if (!*have_ref) {
			*ref = e.seq;
			*have_ref = true;
		}
		if (first) {
			u = (__s64)*ref + (int32_t)((uint32_t)e.seq - (uint32_t)*ref);
		} else {
			if (!kmt_seq_after(e.seq, prev))
				corrupt("%s: offset %zu: seq %d does not follow %d", path, off,
					e.seq, prev);
			u = prev_u + (int32_t)((uint32_t)e.seq - (uint32_t)prev);
		}
		add_seen(u, fi);
		first = false;
		prev = e.seq;
		prev_u = u;
		t->events++;
		if (!e.unknown)
			t->by_type[e.type_id]++;
		off += e.size;
	}
	t->bytes += len;
	free(buf);
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: %s [-v] DIR\n"
		"Checks a kmemtraced capture in DIR and counts the events lost.\n"
		"  -v, --verbose   list every lost range, not only the first 20\n"
		"Exit status: 0 clean, 1 events lost, 2 corrupt, 3 unreadable or usage.\n",
		prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct totals t = { 0 };
	__u64 lost = 0, ranges = 0, before = 0, after = 0;
	__s64 lo, hi, prev;
	bool have_ref = false;
	static struct kmt_meta m;
	int32_t ref = 0;
	const char *dir;
	size_t i;
	int c, fi;

	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			help(stderr);
			return 3;
		}
	}
	if (optind + 1 != argc) {
		help(stderr);
		return 3;
	}
	dir = argv[optind];
	read_meta(dir, &m);
	/* Numbers are unwrapped around start_seq, or the first event's. */
	if (m.have_start) {
		ref = (int32_t)(uint32_t)m.start_seq;
		have_ref = true;
	}
	for (fi = 0; fi < m.nfiles; fi++)
		check_file(dir, &m, fi, &have_ref, &ref, &t);

	if (nseen)	/* seen is NULL without events: no qsort(NULL, 0) */
		qsort(seen, nseen, sizeof(*seen), cmp_seen);
	for (i = 1; i < nseen; i++)
		if (seen[i - 1].seq == seen[i].seq)
			corrupt("seq %lld is in both %s and %s", seen[i].seq,
				m.files[seen[i - 1].file], m.files[seen[i].file]);

	/*
	 * The window the readers covered, unwrapped like the events' numbers
	 * around the first one: from start_seq, without which from the first
	 * event, to drain_seq; a capture from before drain_seq existed ends
	 * at end_seq if tracing was off for the drain, else at its last event.
	 */
	if (m.have_start)
		lo = ref;
	else
		lo = nseen ? seen[0].seq : 0;
	if (m.have_drain || (m.have_end && (m.stopped || m.complete))) {
		__u64 end = m.have_drain ? m.drain_seq : m.end_seq;

		hi = m.have_start ? lo + (__u32)((__u32)end - (__u32)m.start_seq) :
			(__s64)ref + (int32_t)((uint32_t)end - (uint32_t)ref);
	} else {
		hi = nseen ? seen[nseen - 1].seq + 1 : lo;
	}
	prev = lo - 1;
	for (i = 0; i < nseen; i++) {
		__s64 b = seen[i].seq;

		if (b < lo) {
			before++;
			continue;
		}
		if (b >= hi) {
			after++;
			continue;
		}
		if (b > prev + 1) {
			if (verbose || ranges < 20)
				printf("lost: seq %lld-%lld (%lld events%s)\n", prev + 1, b - 1,
				       b - prev - 1,
				       prev < lo ? ", before the first captured" : "");
			ranges++;
			lost += b - prev - 1;
		}
		if (b > prev)
			prev = b;
	}
	if (hi > prev + 1) {
		if (verbose || ranges < 20)
			printf("lost: seq %lld-%lld (%lld events, after the last captured)\n",
			       prev + 1, hi - 1, hi - prev - 1);
		ranges++;
		lost += hi - prev - 1;
	}
	if (ranges > 20 && !verbose)
		printf("lost: ... %llu more ranges (-v lists them)\n", ranges - 20);

	printf("%llu events in %d files, %llu bytes\n", t.events, m.nfiles, t.bytes);
	printf("%llu allocations, %llu frees; kmalloc %llu, kmem_cache %llu, pages %llu\n",
	       t.allocs, t.frees, t.by_type[0], t.by_type[1], t.by_type[2]);
	if (t.unknown)
		printf("%llu events with event or type ids of a newer ABI, skipped\n", t.unknown);
	if (before) {
		/* Distinct numbers: a duplicate is already reported corrupt. */
		__u64 distinct = 1, missing;

		for (i = 1; i < nseen && seen[i].seq < lo; i++)
			distinct += seen[i].seq != seen[i - 1].seq;
		missing = (__u64)(lo - seen[0].seq) - distinct;
		printf("%llu events from before the capture (seq < %lld), not checked for loss\n",
		       before, lo);
		if (missing)
			printf("%llu numbers missing from seq %lld on: %s (%s %llu since boot)\n",
			       missing, seen[0].seq, "lost or read by an earlier reader",
			       "the kernel counted", m.start_lost);
	}
	if (after)
		printf("%llu events numbered after the drain began (seq >= %lld), %s\n",
		       after, hi, "not checked for loss");
	if (hi > lo)
		printf("seq %lld to %lld: %llu events lost in %llu ranges\n", lo, hi - 1, lost,
		       ranges);

	/*
	 * A complete capture holds every event numbered from start_seq to
	 * end_seq - 1 that the kernel did not count as lost: the missing
	 * numbers there must be exactly what it counted.
	 */
	if (m.complete && m.have_start && m.have_end && !nerrors) {
		__u64 kernel = m.end_lost - m.start_lost;

		printf("capture complete: seq %lld to %lld, %llu missing, kernel lost %llu\n",
		       lo, hi - 1, lost, kernel);
		if (lost != kernel)
			corrupt("the capture misses %llu events but the kernel lost %llu",
				lost, kernel);
	}
	if (nerrors) {
		if (nerrors > MAX_ERRORS)
			fprintf(stderr, "%s: ... %lu more errors\n", prog, nerrors - MAX_ERRORS);
		printf("CORRUPT: %lu errors\n", nerrors);
		return 2;
	}
	if (lost) {
		printf("LOSSY: %llu events lost\n", lost);
		return 1;
	}
	printf("CLEAN\n");
	return 0;
}
