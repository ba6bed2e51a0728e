/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages of the kmemtrace tools: "PROG: message" on standard error,
 * and the error exit, with the status each tool documents.
 */
#ifndef KMT_MSG_H
#define KMT_MSG_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <linux/compiler.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* "@prog: " and the message on standard error, after standard output. */
static inline void __printf(2, 0) kmt_vwarn(const char *prog, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static inline void __printf(2, 3) kmt_warn(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kmt_vwarn(prog, fmt, ap);
	va_end(ap);
}

/* The message, then exit(@status). */
static inline void __noreturn __printf(3, 4)
kmt_die(const char *prog, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kmt_vwarn(prog, fmt, ap);
	va_end(ap);
	exit(status);
}

#endif /* KMT_MSG_H */
