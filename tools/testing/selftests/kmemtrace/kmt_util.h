/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the kmemtrace kselftests share: a shell command, and a field of
 * debugfs kmemtrace/kmon (Documentation/ABI/testing/debugfs-kmemtrace).
 */
#ifndef KMT_SELFTEST_UTIL_H
#define KMT_SELFTEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <linux/compiler.h>

#define KMT_KMON_STATE	"/sys/kernel/debug/kmemtrace/kmon"

/* Runs a shell command; returns its exit status, or -1. */
static inline int __printf(1, 2) kmt_run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A "key value" field of debugfs kmemtrace/kmon, -1 if absent. */
static inline long long kmt_kmon_state(const char *key)
{
	char line[160];
	long long v = -1;
	size_t klen = strlen(key);
	FILE *f = fopen(KMT_KMON_STATE, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = atoll(line + klen + 1);
	fclose(f);
	return v;
}

#endif /* KMT_SELFTEST_UTIL_H */
