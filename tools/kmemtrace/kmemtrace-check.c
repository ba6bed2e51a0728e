// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtrace-check - validate a kmemtrace capture and count its losses.
 *
 * Reads a directory written by kmemtraced (meta and cpu<n>) as one
 * stream in sequence order (kmt_capture.h) and checks every event: ids,
 * sizes, feature records, bytes allocated >= requested > 0, sequence
 * numbers increasing in each CPU file (with wraparound) and unique
 * across them. The numbers missing inside the window the capture covers
 * are the events the kernel lost (kmt_loss.h, the calculation
 * kmemtrace-report uses too); they are listed as ranges, and for a
 * complete capture (kmemtraced -e) compared with what the kernel
 * counted. Events outside the window (left in the buffers from before,
 * or numbered while the readers drained) are counted, not judged.
 * Events with ids from a newer ABI are skipped by their size.
 *
 * Nothing is kept per event: memory is flat in the capture's size.
 *
 * Exit status (kmt_cli.h): 0 clean, 1 events lost, 2 bad usage or an
 * I/O error, 3 corrupt.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmt_capture.h"
#include "kmt_cli.h"
#include "kmt_events.h"
#include "kmt_meta.h"
#include "kmt_msg.h"

/* Errors and lost ranges printed, unless -v for the ranges. */
#define MAX_ERRORS	20
#define MAX_RANGES	20

static const char *prog = "kmemtrace-check";
static bool verbose;
static unsigned long nerrors;	/* the capture's: it is corrupt */

/*
 * What the events are, counted as kmemtrace-report counts them:
 * allocations that succeeded, failed ones (pointer 0), and frees but
 * those of NULL and ZERO_SIZE_PTR (which free nothing).
 */
struct totals {
	__u64 allocs, failed, frees, unknown;
	__u64 by_type[3];
};

static void __printf(1, 2) corrupt(const char *fmt, ...)
{
	va_list ap;

	if (nerrors++ >= MAX_ERRORS)
		return;
	va_start(ap, fmt);
	kmt_vwarn(prog, fmt, ap);
	va_end(ap);
}

/* The reader's errors: what makes the capture corrupt, or an I/O error. */
static void reader_error(void *arg, int status, const char *msg)
{
	if (status == KMT_EXIT_CORRUPT)
		corrupt("%s", msg);
	else
		kmt_warn(prog, "%s", msg);
}

/* A range of lost numbers, as the loss calculation finds it. */
static void print_range(void *arg, __s64 from, __s64 to, enum kmt_loss_where where)
{
	const struct kmt_loss *l = arg;

	if (!verbose && l->ranges > MAX_RANGES)
		return;
	/* With nothing captured, the whole window is lost: no "last captured". */
	printf("lost: seq %lld-%lld (%lld events%s)\n", (long long)from, (long long)to,
	       (long long)(to - from + 1),
	       where == KMT_LOSS_HEAD ? ", before the first captured" :
	       where == KMT_LOSS_TAIL && l->any ? ", after the last captured" :
	       where == KMT_LOSS_TAIL ? ", none captured" : "");
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: %s [-v] DIR\n"
		"Checks every event of the kmemtraced capture in DIR and counts the events\n"
		"lost; ends with CLEAN, LOSSY or CORRUPT, or PARTIAL (exit 1) when a stop\n"
		"signal ends it early: not all the capture was checked.\n"
		"  -v, --verbose   list every range of lost events, not only the first %d\n"
		"  -h, --help      print this help and exit\n"
		"  -V, --version   print the version and the ABI read, and exit\n"
		KMT_EXIT_HELP, prog, MAX_RANGES, "events lost");
}

/* The options; the capture directory's name. Exits on bad usage. */
static const char *parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	char abi[32];
	int c;

	while ((c = getopt_long(argc, argv, "vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			help(stdout);
			exit(KMT_EXIT_OK);
		case 'V':
			snprintf(abi, sizeof(abi), "kmemtrace ABI %d", KMEMTRACE_ABI_VERSION);
			kmt_print_version(prog, abi);
			exit(KMT_EXIT_OK);
		default:
			help(stderr);
			exit(KMT_EXIT_USAGE);
		}
	}
	if (optind + 1 != argc) {
		help(stderr);
		exit(KMT_EXIT_USAGE);
	}
	return argv[optind];
}

/* Every event: the checks the reader does not make, and the counts. */
static void check_events(struct kmt_capture *c, struct totals *t)
{
	struct kmt_event e;

	for (;;) {
		bool more = c->meta.swap ? kmt_capture_next(c, &e, true) :
					   kmt_capture_next(c, &e, false);

		if (!more)
			return;
		if (e.unknown) {
			t->unknown++;
			continue;
		}
		t->by_type[e.type_id]++;
		if (e.event_id != KMEMTRACE_EVENT_ALLOC) {
			if (e.ptr > 16)		/* not NULL nor ZERO_SIZE_PTR */
				t->frees++;
			continue;
		}
		if (e.ptr)
			t->allocs++;
		else
			t->failed++;
		if (e.bytes_req == 0)
			kmt_capture_bad_event(c, "seq %d: requested bytes is 0", e.seq);
		else if (e.bytes_alloc < e.bytes_req)
			kmt_capture_bad_event(c, "seq %d: allocated %llu < requested %llu", e.seq,
					      e.bytes_alloc, e.bytes_req);
	}
}

/* The figures, after the lost ranges the reading printed. */
static void print_summary(const struct kmt_capture *c, const struct totals *t)
{
	const struct kmt_loss *l = &c->loss;
	__u64 missing = kmt_loss_missing_before(l);

	if (l->ranges > MAX_RANGES && !verbose)
		printf("lost: ... %llu more ranges (-v lists them)\n", l->ranges - MAX_RANGES);
	printf("%llu events in %d files, %llu bytes\n", c->events, c->nfiles, c->file_bytes);
	printf("%llu allocations, %llu failed, %llu frees; kmalloc %llu, kmem_cache %llu, %s %llu\n",
	       t->allocs, t->failed, t->frees, t->by_type[0], t->by_type[1], "pages",
	       t->by_type[2]);
	if (t->unknown)
		printf("%llu events with event or type ids of a newer ABI, skipped\n", t->unknown);
	if (l->before) {
		printf("%llu events from before the capture (seq < %lld), not checked for loss\n",
		       l->before, (long long)l->lo);
		if (missing)
			printf("%llu numbers missing from seq %lld on: %s (%s %llu since boot)\n",
			       missing, (long long)l->first, "lost or read by an earlier reader",
			       "the kernel counted", c->meta.start_lost);
	}
	if (l->after)
		printf("%llu events numbered after the drain began (seq >= %lld), %s\n",
		       l->after, (long long)l->hi, "not checked for loss");
	if (c->dropped)
		printf("%d %s not read past an error: %s\n", c->dropped,
		       c->dropped == 1 ? "file" : "files", "the numbers after it count as lost");
	kmt_loss_print_missed(l, &c->meta, stdout, "");
	if (c->meta.turned_off)
		printf("tracing was turned off at seq %llu, not by kmemtraced: %s\n",
		       c->meta.off_seq, "the capture ends there");
	if (c->meta.cut && c->meta.have_cut_lost)
		printf("cut short: writing %s failed after %llu bytes (%s), the next event seq %llu: %llu events lost after the cut\n",
		       c->meta.cut_file ?: "the capture", c->meta.cut_at,
		       c->meta.cut_error ?: "an error", c->meta.cut_seq,
		       kmt_loss_after_cut(l, &c->meta));
	else if (c->meta.cut)
		printf("cut short: writing %s failed after %llu bytes (%s): %llu events lost after the cut\n",
		       c->meta.cut_file ?: "the capture", c->meta.cut_at,
		       c->meta.cut_error ?: "an error", kmt_loss_after_cut(l, &c->meta));
	if (c->partial)
		printf("partial: stopped by a signal after %llu events (seq %lld); %s\n",
		       c->events, (long long)c->last_seq, "the rest is not checked");
	if (l->hi > l->lo)
		printf("seq %lld to %lld: %llu events lost in %llu ranges\n", (long long)l->lo,
		       (long long)l->hi - 1, l->lost, l->ranges);
	/*
	 * A complete capture holds every event numbered from start_seq to
	 * end_seq - 1 that the kernel did not count as lost: the missing
	 * numbers there must be exactly what it counted.
	 */
	if (l->judged && !nerrors) {
		printf("capture complete: seq %lld to %lld, %llu missing, kernel lost %llu\n",
		       (long long)l->lo, (long long)l->hi - 1, l->lost, l->kernel_lost);
		if (kmt_loss_miscounted(l))
			corrupt("the capture misses %llu events but the kernel lost %llu", l->lost,
				l->kernel_lost);
	}
}

/*
 * The last line, CLEAN, LOSSY, CORRUPT or PARTIAL, and the exit status.
 * A check stopped by a signal has not seen all the data: no CLEAN nor
 * LOSSY for it, and 1 (not all of it was checked); what it found
 * corrupt is corrupt all the same.
 */
static int verdict(const struct kmt_capture *c)
{
	const struct kmt_loss *l = &c->loss;

	if (nerrors) {
		if (nerrors > MAX_ERRORS)
			kmt_warn(prog, "... %lu more errors", nerrors - MAX_ERRORS);
		printf("CORRUPT: %lu errors\n", nerrors);
		return KMT_EXIT_CORRUPT;
	}
	if (c->partial) {
		printf("PARTIAL: %llu events checked, stopped by a signal: no verdict\n",
		       c->events);
		return KMT_EXIT_DATA;
	}
	if (l->lost && c->meta.cut) {
		printf("LOSSY: %llu events lost, %llu after the capture was cut short\n", l->lost,
		       kmt_loss_after_cut(l, &c->meta));
		return KMT_EXIT_DATA;
	}
	if (l->lost) {
		printf("LOSSY: %llu events lost\n", l->lost);
		return KMT_EXIT_DATA;
	}
	printf("CLEAN\n");
	return KMT_EXIT_OK;
}

/* The capture; at file level, so that a fuzz harness can close it. */
static struct kmt_capture c;

int main(int argc, char **argv)
{
	struct totals t = { 0 };
	const char *dir;
	int status;

	dir = parse_args(argc, argv);
	kmt_catch_stop_signals();
	c.on_error = reader_error;
	c.loss.range = print_range;
	c.loss.arg = &c.loss;
	status = kmt_capture_open(&c, dir);
	if (!status) {
		if (c.meta.abi_version > KMEMTRACE_ABI_VERSION)
			kmt_warn(prog, "capture ABI %d, tool ABI %d: unknown features skipped",
				 c.meta.abi_version, KMEMTRACE_ABI_VERSION);
		check_events(&c, &t);
		/* An I/O error ends the reading: no verdict on half a capture. */
		if (c.status != KMT_EXIT_USAGE) {
			print_summary(&c, &t);
			status = verdict(&c);
		} else {
			status = KMT_EXIT_USAGE;
		}
	}
	kmt_capture_close(&c);
	if (fflush(stdout) || ferror(stdout)) {
		kmt_warn(prog, "writing the results: %s", strerror(errno));
		return KMT_EXIT_USAGE;
	}
	return status;
}
