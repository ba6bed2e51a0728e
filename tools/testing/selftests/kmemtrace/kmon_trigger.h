/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The /dev/kmon self-test trigger, debugfs kmemtrace/kmon_selftest
 * (CONFIG_KMON_SELFTEST), as kmon_test, kmon_mmap_test and kmt_stress
 * use it: a write of "MODE N" logs N KMON_DT_TEST records from MODE's
 * context ("task", "irq", ...), and a read then gives the result line
 * "MODE N logged L context C error E ns T" (Documentation/ABI/testing/
 * debugfs-kmon). And kmon_drain(), which reads a stopped instance to
 * its end.
 */
#ifndef KMON_TRIGGER_H
#define KMON_TRIGGER_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/kmon.h>

#include "kmt_util.h"

#define KMON_DEV	"/dev/kmon"
#define KMON_TRIGGER	KMT_DIR "/kmon_selftest"
/* A KMON_DT_TEST record of the trigger: header, type, context, sequence. */
#define TEST_REC	(KMON_HDR_SIZE + 6)

/* The trigger's result line, as its fields. */
struct kmon_trigger_result {
	char mode[16];
	unsigned int n;		/* records asked for */
	unsigned int logged;	/* logged: those the rings refused are not */
	int context;		/* the context they were logged from */
	int error;		/* the first error of a record, or 0 */
};

/*
 * Writes @cmd to the trigger and reads its result line into *@r:
 * 0, or -errno of the open, the write (all of @cmd, or -EIO) or the
 * read, or -EIO for a result line that is not one.
 */
static inline int kmon_trigger(const char *cmd, struct kmon_trigger_result *r)
{
	size_t len = strlen(cmd);
	char line[128];
	ssize_t n, got;
	int fd;

	fd = open(KMON_TRIGGER, O_RDWR);
	if (fd < 0)
		return -errno;
	n = write(fd, cmd, len);
	if (n != (ssize_t)len) {
		int e = n < 0 ? -errno : -EIO;

		close(fd);
		return e;
	}
	got = pread(fd, line, sizeof(line) - 1, 0);
	if (got < 0) {
		/* seq_read()'s buffer, which fault injection may refuse */
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	if (!got)
		return -EIO;
	line[got] = '\0';
	if (sscanf(line, "%15s %u logged %u context %d error %d", r->mode, &r->n,
		   &r->logged, &r->context, &r->error) != 5)
		return -EIO;
	return 0;
}

/*
 * Reads with read() until a stopped instance says 0: the instance must
 * have been stopped. Returns the bytes read into @buf, or -1.
 */
static inline ssize_t kmon_drain(int fd, unsigned char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while ((r = read(fd, buf + n, cap - n)) > 0)
		n += r;
	return r < 0 ? -1 : (ssize_t)n;
}

#endif /* KMON_TRIGGER_H */
