/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events a kmemtraced capture lost: ONE calculation, which
 * kmemtrace-check and kmemtrace-report both use (through kmt_capture.h,
 * which feeds it), so that a capture gets the same figure from both.
 *
 * Every event the kernel numbers is in a CPU file or was counted lost
 * (Documentation/trace/kmemtrace.rst). The numbers are judged inside
 * the window the readers covered: from start_seq (read before the
 * readers started; without it, from the first event) to drain_seq (read
 * when the final drain began); a capture from before drain_seq existed
 * ends at end_seq when tracing was off for the drain (stopped) or the
 * capture is complete, else at its last event. A number missing inside
 * the window is an event lost. Outside it, events are counted and not
 * judged: those from before start_seq were left in the buffers by an
 * earlier reader or from boot (a number missing there may have been
 * read by that reader), and those from drain_seq on were numbered while
 * the readers drained with tracing still on.
 *
 * A complete capture (kmemtraced -e: tracing on at the start, off before
 * the drain) misses exactly the events the kernel counted lost between
 * start and end: anything else is a corrupt capture.
 *
 * The numbers come unwrapped (64 bits, see kmt_capture.h) and in
 * increasing order, a number given twice (a duplicate, which the reader
 * reports) next to itself.
 */
#ifndef KMT_LOSS_H
#define KMT_LOSS_H

#include <stdbool.h>
#include <stdio.h>

#include <linux/types.h>

#include "kmt_meta.h"

/* Where a range of lost numbers lies. */
enum kmt_loss_where {
	KMT_LOSS_INSIDE,	/* between two captured events */
	KMT_LOSS_HEAD,		/* from the window's start to the first captured */
	KMT_LOSS_TAIL,		/* to the window's end, after the last captured */
};

struct kmt_loss {
	/* The window, [lo, hi), in unwrapped numbers. */
	bool have_lo, have_hi;
	__s64 lo, hi;
	/* The highest number seen in the window; lo - 1 before the first. */
	__s64 prev;
	__u64 lost, ranges;
	/* Events outside the window. */
	__u64 before, after;
	/* Of those before it: distinct numbers, the first and the last. */
	__u64 before_distinct;
	__s64 first, last_before;
	bool any;
	/* A complete capture: what the kernel counted lost in the window. */
	bool judged;		/* complete, with start and end: compared */
	__u64 kernel_lost;
	bool finished;
	/* Called for each range of lost numbers, as found (may be NULL). */
	void (*range)(void *arg, __s64 from, __s64 to, enum kmt_loss_where where);
	void *arg;
};

/*
 * The window of the capture @m, whose numbers are unwrapped around @ref
 * (start_seq, or the first event's number when @have_ref without it).
 */
static inline void kmt_loss_init(struct kmt_loss *l, const struct kmt_meta *m, bool have_ref,
				 int32_t ref)
{
	void (*range)(void *, __s64, __s64, enum kmt_loss_where) = l->range;
	void *arg = l->arg;

	memset(l, 0, sizeof(*l));
	l->range = range;
	l->arg = arg;
	if (m->have_start) {
		l->lo = ref;
		l->have_lo = true;
		l->prev = l->lo - 1;
	}
	if (m->have_drain || (m->have_end && (m->stopped || m->complete))) {
		__u64 end = m->have_drain ? m->drain_seq : m->end_seq;

		if (m->have_start) {
			l->hi = l->lo + (__u32)((__u32)end - (__u32)m->start_seq);
			l->have_hi = true;
		} else if (have_ref) {
			l->hi = (__s64)ref + (int32_t)((uint32_t)end - (uint32_t)ref);
			l->have_hi = true;
		}
		/* Without an event nor start_seq, there is no window to judge. */
	}
	/*
	 * A CPU kmemtraced could not capture (missed_cpus) lost its events
	 * without the kernel counting them: not a miscount.
	 */
	if (m->complete && m->have_start && m->have_end && !m->nmissed) {
		l->judged = true;
		l->kernel_lost = m->end_lost - m->start_lost;
	}
}

static inline void kmt_loss_range(struct kmt_loss *l, __s64 from, __s64 to,
				  enum kmt_loss_where where)
{
	l->ranges++;
	l->lost += to - from + 1;
	if (l->range)
		l->range(l->arg, from, to, where);
}

/* The next event's number, @seq, in increasing order. */
static inline void kmt_loss_add(struct kmt_loss *l, __s64 seq)
{
	if (!l->any) {
		l->any = true;
		l->first = seq;
		if (!l->have_lo) {
			l->lo = seq;
			l->have_lo = true;
			l->prev = seq - 1;
		}
	}
	if (seq < l->lo) {
		if (!l->before || seq != l->last_before)
			l->before_distinct++;
		l->before++;
		l->last_before = seq;
		return;
	}
	if (l->have_hi && seq >= l->hi) {
		l->after++;
		return;
	}
	if (seq > l->prev + 1)
		kmt_loss_range(l, l->prev + 1, seq - 1,
			       l->prev < l->lo ? KMT_LOSS_HEAD : KMT_LOSS_INSIDE);
	if (seq > l->prev)
		l->prev = seq;
}

/*
 * At the end of the events: the window's end is known, and the numbers
 * from the last event to it are lost. @partial: the reading stopped
 * early (a stop signal), so the window ends at the last event read.
 */
static inline void kmt_loss_finish(struct kmt_loss *l, bool partial)
{
	if (l->finished)
		return;
	l->finished = true;
	if (!l->have_lo) {
		/* No event, no start_seq: an empty window. */
		l->have_lo = true;
		l->lo = 0;
		l->prev = -1;
	}
	if (!l->have_hi || (partial && l->hi > l->prev + 1)) {
		l->hi = l->prev + 1 > l->lo ? l->prev + 1 : l->lo;
		l->have_hi = true;
	}
	if (l->hi > l->prev + 1)
		kmt_loss_range(l, l->prev + 1, l->hi - 1, KMT_LOSS_TAIL);
	if (partial)
		l->judged = false;
}

/* Numbers missing among those before the window (lost, or read before). */
static inline __u64 kmt_loss_missing_before(const struct kmt_loss *l)
{
	return l->before ? (__u64)(l->lo - l->first) - l->before_distinct : 0;
}

/*
 * Of the events lost in a capture cut short by a failed write (meta's
 * cut), those lost because of it: read from the buffers but never
 * written, left there when the readers stopped, or lost by the kernel
 * after the cut, its buffers full with no reader. Only what the kernel
 * had lost when the cut was seen is not the cut's (the whole window's
 * losses, from a meta without cut_lost_events). Call after the events.
 */
static inline __u64 kmt_loss_after_cut(const struct kmt_loss *l, const struct kmt_meta *m)
{
	__u64 kernel;

	if (!m->cut)
		return 0;
	if (m->have_start_lost && m->have_cut_lost && m->cut_lost >= m->start_lost)
		kernel = m->cut_lost - m->start_lost;
	else
		kernel = m->have_start_lost && m->have_end_lost ? m->end_lost - m->start_lost : 0;
	return l->lost > kernel ? l->lost - kernel : 0;
}

/* A complete capture whose missing numbers are not what the kernel counted. */
static inline bool kmt_loss_miscounted(const struct kmt_loss *l)
{
	return l->judged && l->lost != l->kernel_lost;
}

/* The CPUs not captured named one by one, then counted. */
#define KMT_MISSED_SHOWN	8

/*
 * The CPUs meta says kmemtraced could not capture (missed_cpus), to @f,
 * each line after @prefix: their events are missing numbers, counted
 * among those lost; with none missing, the CPUs recorded none in the
 * window. Call after the events (the loss is final).
 */
static inline void kmt_loss_print_missed(const struct kmt_loss *l, const struct kmt_meta *m,
					 FILE *f, const char *prefix)
{
	int i;

	for (i = 0; i < m->nmissed && i < KMT_MISSED_SHOWN; i++)
		fprintf(f, "%scpu%d was not captured by kmemtraced: %s\n", prefix, m->missed[i],
			l->lost ? "its events are among those lost" :
			"no number is missing, so it recorded no event in the window");
	if (m->nmissed > KMT_MISSED_SHOWN)
		fprintf(f, "%s... %d more CPUs not captured by kmemtraced\n", prefix,
			m->nmissed - KMT_MISSED_SHOWN);
}

#endif /* KMT_LOSS_H */
