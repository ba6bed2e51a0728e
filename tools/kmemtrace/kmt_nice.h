/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The readers' nice value of kmemtraced and kmonlog (--nice=NICE). At the
 * priority of a task that logs without pause, a reader that shares its
 * CPU gets half of it and falls behind, and the kernel drops events;
 * ahead of it, the reader runs when there is something to read and the
 * task slows down instead (Documentation/trace/kmemtrace.rst, "Cost").
 * A nice value the caller chose is kept; 0 is nobody's choice.
 */
#ifndef KMT_NICE_H
#define KMT_NICE_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>

#define KMT_NICE_DEFAULT	(-10)

/*
 * getopt_long()'s value for --nice, which has no letter: -n is a count
 * (kmemtrace-report --top). -n still means --nice, with a warning, for
 * this release.
 */
#define KMT_OPT_NICE		256
/*
 * --read's, of kmemtraced and kmonlog: read() the kernel's buffers, as
 * before they could be read in place.
 */
#define KMT_OPT_READ		(KMT_OPT_NICE + 1)

/* --nice's argument into *@nice: false unless a whole number from -20 to 19. */
static inline bool kmt_parse_nice(const char *s, int *nice)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < -20 || v > 19)
		return false;
	*nice = v;
	return true;
}

/*
 * Whether the readers should set their nice value: when --nice gave it, or
 * when the process was started at 0, the default.
 */
static inline bool kmt_nice_wanted(bool given)
{
	errno = 0;
	return given || (getpriority(PRIO_PROCESS, 0) == 0 && !errno);
}

#endif /* KMT_NICE_H */
