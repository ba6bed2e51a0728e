/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmt_pace.h - how long a reader of a kernel buffer read in place pauses
 * after a batch, shared by kmemtraced and kmonlog: fewer, larger batches
 * cost fewer wake-ups per event. At a steady rate a pause leaves seven
 * eighths of the buffer free; a burst that multiplies the rate by eight
 * or more within one pause can fill it, which @max bounds: the caller
 * picks it from the time its buffer lasts at the highest rate it knows.
 *
 * After a batch of @took bytes, taken some time after the one before, a
 * reader pauses for as long as that rate takes to fill another eighth
 * of the buffer, at most @max us. It does not pause
 *  - after a batch of an eighth or more: it is behind, or the rate is
 *    high for the buffer;
 *  - when it waited @max us or more for this batch since its last pause
 *    ended: the kernel's own wake-ups (relay's at each sub-buffer,
 *    kmon's at each flush) are seldom enough, and a pause would be one
 *    wake-up more per batch.
 * After a wake-up with nothing to take it pauses @max us.
 *
 *   struct kmt_pace p;
 *   kmt_pace_start(&p);
 *   max = kmt_pace_max(buffer_size, reference_size, reference_max);
 *   us = kmt_pace_us(&p, took, buffer_size / 8, max);	then sleep us
 */
#ifndef KMT_PACE_H
#define KMT_PACE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* When the last batch was taken, and when the pause after it ended. */
struct kmt_pace {
	uint64_t last_us, woke_us;
};

/* CLOCK_MONOTONIC in microseconds. */
static inline uint64_t kmt_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static inline void kmt_pace_start(struct kmt_pace *p)
{
	p->last_us = kmt_now_us();
	p->woke_us = p->last_us;
}

/*
 * The longest pause for a buffer of @size bytes: @max for one of @ref
 * bytes or more, less in proportion for a smaller one, which the same
 * rate fills sooner.
 */
static inline uint64_t kmt_pace_max(size_t size, size_t ref, uint64_t max)
{
	return size >= ref ? max : (uint64_t)((double)max * size / ref);
}

/* kmt_pace_us() at @now (kmt_now_us()). */
static inline uint64_t kmt_pace_at(struct kmt_pace *p, uint64_t now, size_t took, size_t eighth,
				   uint64_t max)
{
	uint64_t dt = now - p->last_us, us;
	/* A signal that cut the last pause short: it waited for nothing. */
	uint64_t waited = now > p->woke_us ? now - p->woke_us : 0;
	double fill;

	p->last_us = now;
	if (!took) {
		us = max;
	} else if (took >= eighth || waited >= max) {
		us = 0;
	} else {
		/* The time this rate (@took in @dt) takes to fill an eighth. */
		fill = (double)eighth * dt / took;
		us = fill < max ? (uint64_t)fill : max;
	}
	p->woke_us = now + us;
	return us;
}

/* The pause after a batch of @took bytes, in us: 0 for none. */
static inline uint64_t kmt_pace_us(struct kmt_pace *p, size_t took, size_t eighth, uint64_t max)
{
	return kmt_pace_at(p, kmt_now_us(), took, eighth, max);
}

/* Sleeps @us microseconds; a signal ends the sleep early (EINTR). */
static inline void kmt_pause_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	if (us)
		nanosleep(&ts, NULL);
}

#endif /* KMT_PACE_H */
