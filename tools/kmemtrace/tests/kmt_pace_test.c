// SPDX-License-Identifier: GPL-2.0
/*
 * kmt_pace_test - kmt_pace.h's rule on the host: the pause after a batch
 * is the time the batch's rate takes to fill an eighth of the buffer, at
 * most the maximum; none after a batch of an eighth or more, nor when the
 * reader waited the maximum or longer since its last pause ended; the
 * maximum after a wake-up with nothing; a pause a signal cut short does
 * not count as waiting. The batch's times are set a known distance in
 * the past; the clock moves a little between that and the call, which
 * the tolerance covers. Prints "ok"/"not ok" per case; exits 1 if any
 * failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../kmt_pace.h"

#define MAX_US		10000
#define EIGHTH		(512 * 1024)
#define SLACK_US	2000	/* the clock between the setup and the call */

static int failed;

/*
 * The pause after a batch of @took bytes that came @dt us after the one
 * before, @waited us after the last pause ended (negative: that pause
 * ends in the future, cut short by a signal).
 */
static uint64_t pause_after(size_t took, uint64_t dt, long long waited)
{
	struct kmt_pace p;
	uint64_t now = kmt_now_us();

	p.last_us = now - dt;
	p.woke_us = now - waited;
	return kmt_pace_us(&p, took, EIGHTH, MAX_US);
}

static void expect(const char *what, uint64_t got, uint64_t lo, uint64_t hi)
{
	int ok = got >= lo && got <= hi;

	printf("%s - %s: %llu us (want %llu to %llu)\n", ok ? "ok" : "not ok", what,
	       (unsigned long long)got, (unsigned long long)lo, (unsigned long long)hi);
	failed |= !ok;
}

int main(void)
{
	struct kmt_pace p;
	uint64_t us, t0;

	/* An eighth in 8 ms at this rate: 64 KiB came in 1 ms. */
	expect("a small batch: the time its rate takes to fill an eighth",
	       pause_after(EIGHTH / 8, 1000, 500), 8000, 8000 + 8 * SLACK_US);
	/* 4 KiB in 1 ms would take 128 ms: the maximum. */
	expect("a slow rate: at most the maximum", pause_after(4096, 1000, 500), MAX_US, MAX_US);
	expect("a batch of an eighth: no pause", pause_after(EIGHTH, 1000, 500), 0, 0);
	expect("a batch of more than an eighth: no pause", pause_after(2 * EIGHTH, 100, 50), 0, 0);
	expect("waited the maximum for the batch: no pause",
	       pause_after(4096, 20000, MAX_US), 0, 0);
	/*
	 * The interval includes the reader's own pause of 9 ms: it waited 1
	 * ms for the kernel, so it pauses again. 64 KiB in 10 ms: an eighth
	 * in 80 ms, the maximum.
	 */
	expect("its own pause is not waiting: pauses again",
	       pause_after(EIGHTH / 8, 10000, 1000), MAX_US, MAX_US);
	/* The last pause was cut short 5 ms before its end. */
	expect("a pause cut short by a signal: not waiting",
	       pause_after(EIGHTH / 8, 1000, -5000), 8000, 8000 + 8 * SLACK_US);
	expect("nothing taken: the maximum", pause_after(0, 1000, 20000), MAX_US, MAX_US);

	/* The state it leaves: the next call measures from this one. */
	kmt_pace_start(&p);
	t0 = kmt_now_us();
	us = kmt_pace_us(&p, EIGHTH / 8, EIGHTH, MAX_US);
	expect("started just now, 64 KiB: an interval of about 0, no pause", us, 0, 8 * SLACK_US);
	expect("the pause's end is kept", p.woke_us - p.last_us, us, us);
	expect("the batch's time is kept", p.last_us - t0, 0, SLACK_US);
	return failed;
}
