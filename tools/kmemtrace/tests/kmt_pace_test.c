// SPDX-License-Identifier: GPL-2.0
/*
 * kmt_pace_test - kmt_pace.h's rule on the host, at fixed times
 * (kmt_pace_at()): the pause after a batch is the time the batch's rate
 * takes to fill an eighth of the buffer, at most the maximum; none after
 * a batch of an eighth or more, nor when the reader waited the maximum
 * or longer since its last pause ended; the maximum after a wake-up with
 * nothing; a pause a signal cut short does not count as waiting; the
 * maximum shrinks with a smaller buffer. Prints "ok"/"not ok" per case;
 * exits 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../kmt_pace.h"

#define MAX_US		10000
#define EIGHTH		(512 * 1024)
#define NOW		1000000000ULL

static int failed;

static void expect(const char *what, uint64_t got, uint64_t want)
{
	int ok = got == want;

	printf("%s - %s: %llu (want %llu)\n", ok ? "ok" : "not ok", what,
	       (unsigned long long)got, (unsigned long long)want);
	failed |= !ok;
}

/*
 * The pause after a batch of @took bytes that came @dt us after the one
 * before, @waited us after the last pause ended (negative: that pause
 * was to end later, cut short by a signal).
 */
static uint64_t pause_after(size_t took, uint64_t dt, long long waited)
{
	struct kmt_pace p = { .last_us = NOW - dt, .woke_us = NOW - waited };

	return kmt_pace_at(&p, NOW, took, EIGHTH, MAX_US);
}

int main(void)
{
	struct kmt_pace p = { .last_us = NOW - 1000, .woke_us = NOW - 500 };
	uint64_t us;

	/* 64 KiB in 1 ms: an eighth (512 KiB) in 8 ms. */
	expect("a small batch: the time its rate takes to fill an eighth",
	       pause_after(EIGHTH / 8, 1000, 500), 8000);
	expect("a smaller batch at that rate: the same",
	       pause_after(EIGHTH / 16, 500, 200), 8000);
	/* 4 KiB in 1 ms would take 128 ms. */
	expect("a slow rate: the maximum", pause_after(4096, 1000, 500), MAX_US);
	expect("a batch of an eighth: no pause", pause_after(EIGHTH, 1000, 500), 0);
	expect("a batch of more than an eighth: no pause", pause_after(2 * EIGHTH, 100, 50), 0);
	expect("waited the maximum for the batch: no pause", pause_after(4096, 20000, MAX_US), 0);
	/*
	 * The interval (12 ms, more than the maximum) holds the reader's
	 * own pause of 11 ms: it waited 1 ms for the kernel, so it pauses
	 * again. 256 KiB in 12 ms: an eighth in 24 ms, the maximum.
	 */
	expect("its own pause is not waiting: pauses again",
	       pause_after(EIGHTH / 2, 12000, 1000), MAX_US);
	/* The last pause was to end 5 ms from now. */
	expect("a pause cut short by a signal: not waiting",
	       pause_after(EIGHTH / 8, 1000, -5000), 8000);
	expect("nothing taken: the maximum", pause_after(0, 1000, 20000), MAX_US);

	/* The state it leaves: the next call measures from this one. */
	us = kmt_pace_at(&p, NOW, EIGHTH / 8, EIGHTH, MAX_US);
	expect("the batch's time is kept", p.last_us, NOW);
	expect("the pause's end is kept", p.woke_us, NOW + us);

	expect("the maximum for the reference buffer", kmt_pace_max(4 << 20, 4 << 20, MAX_US),
	       MAX_US);
	expect("the maximum for a larger buffer", kmt_pace_max(64 << 20, 4 << 20, MAX_US), MAX_US);
	expect("the maximum for a buffer of a sixteenth", kmt_pace_max(256 << 10, 4 << 20, MAX_US),
	       MAX_US / 16);
	return failed;
}
