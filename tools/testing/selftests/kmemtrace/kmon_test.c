// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kmon tests (Documentation/trace/kmon.rst): the ioctl state
 * machine and its bad inputs, read() and poll() semantics (a blocked
 * read() woken by a stop from another thread or ended by a signal),
 * overruns, two instances, the rings' lifetime, records logged from
 * process, softirq, hard interrupt and NMI context through debugfs
 * kmemtrace/kmon_selftest, and the scheduler events.
 *
 * Needs root. Skips, saying why, on a kernel without CONFIG_KMEMTRACE;
 * fails without CONFIG_KMON and CONFIG_KMON_SELFTEST, which the
 * kselftests' config asks for, unless /proc/config.gz says they are off
 * (a skip: kmt_util.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/kmon.h>
#include <linux/ktr.h>

#include "../kselftest_harness.h"
#include "kmon_log.h"
#include "alloc_report.h"
#include "ksyms.h"
#include "kmt_util.h"
#include "kmon_trigger.h"

/* The trigger's result line's fields (kmon_trigger.h). */
static int trigger(const char *cmd, unsigned int *logged, int *ctx, int *error)
{
	struct kmon_trigger_result r;
	int ret = kmon_trigger(cmd, &r);

	if (ret)
		return ret;
	*logged = r.logged;
	*ctx = r.context;
	*error = r.error;
	return 0;
}

/*
 * The sum of one counter ("records", "overruns", "corrupt") over the
 * "ring CPU CONTEXT records R overruns O corrupt C" lines of the state
 * file, or -1 if there is none.
 */
static long long ring_sum(const char *counter)
{
	char line[160], ctx[16];
	unsigned long long rec, over, bad;
	long long sum = -1;
	int cpu;
	FILE *f = fopen(KMT_KMON_STATE, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ring %d %15s records %llu overruns %llu corrupt %llu",
			   &cpu, ctx, &rec, &over, &bad) == 5)
			sum = (sum < 0 ? 0 : sum) +
			      (!strcmp(counter, "records") ? rec :
			       !strcmp(counter, "overruns") ? over : bad);
	fclose(f);
	return sum;
}

/*
 * In a setup or a test: the device and its self-test trigger are there,
 * or the test skips (no CONFIG_KMEMTRACE, not root, or /proc/config.gz
 * says the option is off) or fails.
 */
#define KMON_NEED() do {							\
	KMT_NEED_KMEMTRACE();							\
	KMT_REQUIRE(KMON_DEV, "CONFIG_KMON");					\
	KMT_REQUIRE(KMON_TRIGGER, "CONFIG_KMON_SELFTEST");			\
} while (0)

/* The value of a module parameter, without its newline. */
static int read_param(const char *path, char *buf, size_t len)
{
	if (!kmt_read_text(path, buf, len))
		return -errno;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Writes @s to @path opened with O_TRUNC (set_event_pid: the list emptied first). */
static int write_file(const char *path, const char *s)
{
	return kmt_write_flags(path, s, O_TRUNC);
}

/* Settings a test changed: the teardown puts them back, even after a failure. */
static struct {
	const char *path;
	char val[64];
} saved[8];
static unsigned int nr_saved;

/* Write @val to @path, its value saved first for restore_saved(). */
static int set_saved(const char *path, const char *val)
{
	if (nr_saved == ARRAY_SIZE(saved) ||
	    !kmt_read_text(path, saved[nr_saved].val, sizeof(saved[0].val)))
		return -1;
	saved[nr_saved++].path = path;
	return write_file(path, val);
}

#define TRACING		"/sys/kernel/tracing"
#define SCHED_EV	TRACING "/events/sched/"

/*
 * ping_pong()'s ftrace hist triggers, "!" and the trigger as it was set
 * (a removal matches the filter too): the teardown removes them.
 */
static struct {
	const char *file;
	char cmd[1 + 256];	/* "!" and ping_pong()'s trig[] */
} hist[2];

static void restore_saved(void)
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (hist[i].file) {
			write_file(hist[i].file, hist[i].cmd);
			hist[i].file = NULL;
		}
	while (nr_saved) {
		nr_saved--;
		write_file(saved[nr_saved].path, saved[nr_saved].val);
	}
}

/* Set the hist trigger @trig on @file, and have restore_saved() remove it. */
static int set_hist(int i, const char *file, const char *trig)
{
	snprintf(hist[i].cmd, sizeof(hist[i].cmd), "!%s", trig);
	hist[i].file = file;
	return write_file(file, trig);
}

FIXTURE(kmon) {
	int fd;
	unsigned char *buf;
};

FIXTURE_SETUP(kmon)
{
	uint64_t classes;

	self->fd = -1;
	self->buf = NULL;
	KMON_NEED();
	self->fd = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", KMON_DEV, strerror(errno));
	self->buf = malloc(64 << 20);
	ASSERT_TRUE(!!self->buf);
	/* A new instance asks for the scheduler; the tests say what they want. */
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_CLASSES, &classes));
	ASSERT_EQ(1ULL << KTR_BIT_SCHED, classes);
	classes = 0;
	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &classes));
}

FIXTURE_TEARDOWN(kmon)
{
	restore_saved();
	if (self->fd >= 0)
		close(self->fd);
	free(self->buf);
}

TEST_F(kmon, ioctl_state_machine)
{
	static const long bad_sizes[] = { 0, -1, LONG_MIN, LONG_MAX };
	struct kmon_stats st;
	unsigned int i;
	void *bad;
	uint64_t classes = 0;
	uint32_t version = 0;
	long size = 0;

	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_VERSION, &version));
	ASSERT_EQ((uint32_t)KMON_VERSION, version);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_BUFFSIZE, &size));
	ASSERT_EQ(1L << 20, size);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ(0U, st.started);
	ASSERT_EQ(1ULL << 20, st.buffsize);

	/* Stopped: the buffer size can change, within bounds. */
	size = 65536;
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
	size = 0;
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_BUFFSIZE, &size));
	ASSERT_EQ(65536, size);
	size = KMON_BUFFSIZE_MIN - 1;
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(EINVAL, errno);
	size = KMON_BUFFSIZE_MAX + 1;
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(EINVAL, errno);
	size = -4096;
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(EINVAL, errno);
	for (i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
		bool einval;

		size = bad_sizes[i];
		einval = ioctl(self->fd, KMON_BUFFSIZE, &size) == -1 && errno == EINVAL;
		EXPECT_TRUE(einval) TH_LOG("size %ld", bad_sizes[i]);
	}
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_BUFFSIZE, (void *)8));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_STATS, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_VERSION, NULL));
	ASSERT_EQ(EFAULT, errno);
	/* Unmapped, not only NULL. */
	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(bad != MAP_FAILED);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_STATS, bad));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_CLASSES, bad));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, bad));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_BUFFSIZE, bad));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_BUFFSIZE, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_SET_CLASSES, bad));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_CLASSES, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_VERSION, bad));
	ASSERT_EQ(EFAULT, errno);
	munmap(bad, 4096);
	/* Mapped but read-only: the kernel cannot write the answer there. */
	bad = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(bad != MAP_FAILED);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_STATS, bad));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_BUFFSIZE, bad));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_CLASSES, bad));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_VERSION, bad));
	ASSERT_EQ(EFAULT, errno);
	munmap(bad, 4096);
	/* The stats straddling a writable page and an unmapped one. */
	bad = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(bad != MAP_FAILED);
	ASSERT_EQ(0, munmap((char *)bad + 4096, 4096));
	ASSERT_EQ(-1, ioctl(self->fd, KMON_GET_STATS, (char *)bad + 4096 - 8));
	ASSERT_EQ(EFAULT, errno);
	munmap(bad, 4096);
	size = 0;
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_BUFFSIZE, &size));
	ASSERT_EQ(65536, size);

	/* Classes: only those the kernel has sources for. */
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_CLASSES, &classes));
	classes = 1ULL << 63;
	ASSERT_EQ(-1, ioctl(self->fd, KMON_SET_CLASSES, &classes));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, KMON_SET_CLASSES, NULL));
	ASSERT_EQ(EFAULT, errno);

	/* Unknown commands, and a known number with the wrong size. */
	ASSERT_EQ(-1, ioctl(self->fd, _IO(KMON_IOC_MAGIC, 0x0f)));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->fd, _IOW(KMON_IOC_MAGIC, 0x02, char), &size));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->fd, _IO('K', 0x00)));
	ASSERT_EQ(ENOTTY, errno);

	/* Started: no resizing; a second start and a second stop fail. */
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(-1, ioctl(self->fd, KMON_START));
	ASSERT_EQ(EALREADY, errno);
	size = 1 << 20;
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ(1U, st.started);
	ASSERT_EQ(65536ULL, st.buffsize);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(-1, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(EALREADY, errno);
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
}

/* Records logged while stopped reach nobody; the buffer keeps its data. */
TEST_F(kmon, stopped_receives_nothing)
{
	unsigned int logged;
	struct kmon_stats st;
	uint64_t none = 0;
	int ctx, error, fd2;
	long size = 8192;

	struct pollfd p = { .fd = self->fd, .events = POLLIN };

	/* With no instance started, kmon_add_data() logs nothing. */
	ASSERT_EQ(0, trigger("task 10", &logged, &ctx, &error));
	ASSERT_EQ(0U, logged);
	ASSERT_EQ(-ENODEV, error);
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ(0ULL, st.records);
	ASSERT_EQ(0, read(self->fd, self->buf, 4096));
	ASSERT_EQ(0, read(self->fd, self->buf, 0));
	/* Stopped and drained: poll() says so, O_NONBLOCK reads give 0. */
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(POLLHUP, p.revents);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, read(self->fd, self->buf, 4096));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, 0));

	/* A second instance, started, gets records this one does not. */
	fd2 = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, ioctl(fd2, KMON_SET_CLASSES, &none));
	ASSERT_EQ(0, ioctl(fd2, KMON_START));
	ASSERT_EQ(0, trigger("task 4", &logged, &ctx, &error));
	ASSERT_EQ(4U, logged);
	ASSERT_EQ(0, ioctl(fd2, KMON_STOP));
	ASSERT_EQ(4 * TEST_REC, kmon_drain(fd2, self->buf, 64 << 20));
	close(fd2);
	ASSERT_EQ(0, read(self->fd, self->buf, 4096));

	/* Unread records make resizing fail: nothing is thrown away. */
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, trigger("task 3", &logged, &ctx, &error));
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(3 * TEST_REC, kmon_drain(self->fd, self->buf, 64 << 20));
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
}

/* Whole records only; too small a buffer, and no data, get errnos. */
TEST_F(kmon, read_semantics)
{
	unsigned int logged;
	void *bad;
	int ctx, error, fl;
	ssize_t n;

	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl | O_NONBLOCK));
	ASSERT_EQ(-1, read(self->fd, self->buf, 4096));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl));

	ASSERT_EQ(0, trigger("task 3", &logged, &ctx, &error));
	ASSERT_EQ(3U, logged);
	/* Blocking: returns once the next flush brings the records. */
	n = read(self->fd, self->buf, TEST_REC + 5);
	ASSERT_EQ(TEST_REC, n);
	ASSERT_EQ(KMON_DT_TEST, self->buf[KMON_HDR_SIZE]);
	ASSERT_EQ(0ULL, kmon_le(self->buf + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
	ASSERT_EQ(-1, read(self->fd, self->buf, TEST_REC - 1));
	ASSERT_EQ(EINVAL, errno);
	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(bad != MAP_FAILED);
	ASSERT_EQ(-1, read(self->fd, bad, 4096));
	ASSERT_EQ(EFAULT, errno);
	munmap(bad, 4096);
	/*
	 * Room for both records, the second straddling into an unmapped
	 * page: the copy fails part way, and the read consumes neither.
	 */
	bad = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(bad != MAP_FAILED);
	ASSERT_EQ(0, mprotect((char *)bad + 4096, 4096, PROT_NONE));
	ASSERT_EQ(-1, read(self->fd, (char *)bad + 4096 - TEST_REC - 1, 2 * TEST_REC));
	ASSERT_EQ(EFAULT, errno);
	munmap(bad, 8192);
	/* Nothing was consumed by the failed reads. */
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(2 * TEST_REC, kmon_drain(self->fd, self->buf, 64 << 20));
	ASSERT_EQ(1ULL, kmon_le(self->buf + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
	ASSERT_EQ(2ULL, kmon_le(self->buf + TEST_REC + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
}

/*
 * The header and blob as documented: CPU, ktime_get() time stamps in
 * CLOCK_MONOTONIC between the trigger's start and end, nondecreasing,
 * the blob size, and the trigger's blobs in order.
 */
TEST_F(kmon, record_format)
{
	uint64_t t0, t1, last = 0;
	unsigned int logged, i;
	int ctx, error;

	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	t0 = kmt_mono_ns();
	ASSERT_EQ(0, trigger("task 100", &logged, &ctx, &error));
	t1 = kmt_mono_ns();
	ASSERT_EQ(100U, logged);
	ASSERT_EQ(KMON_CTX_TASK, ctx);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(100 * TEST_REC, kmon_drain(self->fd, self->buf, 64 << 20));
	for (i = 0; i < 100; i++) {
		const unsigned char *r = self->buf + i * TEST_REC;
		uint64_t ts = kmon_le(r + KMON_HB_TS, 8);

		ASSERT_GT(sysconf(_SC_NPROCESSORS_CONF), r[0]);
		ASSERT_LE(t0, ts);
		ASSERT_GE(t1, ts);
		ASSERT_LE(last, ts);
		last = ts;
		ASSERT_EQ(6ULL, kmon_blob_len(r));
		ASSERT_EQ(KMON_DT_TEST, r[KMON_HDR_SIZE]);
		ASSERT_EQ(KMON_CTX_TASK, r[KMON_HDR_SIZE + KMON_TB_CTX]);
		ASSERT_EQ(i, kmon_le(r + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
	}

	/* kmon_add_data() rejects empty and oversize blobs. */
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, trigger("size 0", &logged, &ctx, &error));
	ASSERT_EQ(0U, logged);
	ASSERT_EQ(-EINVAL, error);
	ASSERT_EQ(0, trigger("size 1025", &logged, &ctx, &error));
	ASSERT_EQ(0U, logged);
	ASSERT_EQ(-EINVAL, error);
	ASSERT_EQ(0, trigger("size 1024", &logged, &ctx, &error));
	ASSERT_EQ(1U, logged);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(KMON_HDR_SIZE + 1024, kmon_drain(self->fd, self->buf, 64 << 20));
	ASSERT_EQ(1024ULL, kmon_blob_len(self->buf));
}

/* POLLIN with data; POLLERR from an overrun until KMON_GET_STATS. */
TEST_F(kmon, poll_and_overrun)
{
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	unsigned int logged;
	struct kmon_stats st;
	int ctx, error;
	long size = KMON_BUFFSIZE_MIN;

	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(0, trigger("task 1000", &logged, &ctx, &error));
	ASSERT_EQ(1000U, logged);
	ASSERT_EQ(1, poll(&p, 1, 5000));
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(POLLIN | POLLERR | POLLHUP, p.revents);

	/* 4096 bytes hold 240 records of 17 bytes; the others are counted. */
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ((__u64)(KMON_BUFFSIZE_MIN / TEST_REC), st.records);
	ASSERT_EQ((__u64)(1000 - KMON_BUFFSIZE_MIN / TEST_REC), st.overruns);
	ASSERT_EQ(st.records * TEST_REC, st.buffered);
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(POLLIN | POLLHUP, p.revents);
	ASSERT_EQ((ssize_t)st.buffered, kmon_drain(self->fd, self->buf, 64 << 20));
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(POLLHUP, p.revents);
}

#define RING_SIZE	"/sys/module/kmon/parameters/ring_size"
#define FLUSH_MS	"/sys/module/kmon/parameters/flush_ms"

/* kmon.ring_size and kmon.flush_ms refuse what they do not take, unchanged. */
TEST_F(kmon, parameters_bad_values)
{
	static const char *const ring_bad[] = {
		"4095", "6000", "33554432", "x", "-1", "\n", "0x", "65536junk",
	};
	static const char *const flush_bad[] = { "0", "1001", "-1", "x", "\n" };
	char before[32], after[32];
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(ring_bad); i++) {
		ASSERT_EQ(0, read_param(RING_SIZE, before, sizeof(before)));
		EXPECT_EQ(-EINVAL, write_file(RING_SIZE, ring_bad[i]))
			TH_LOG("\"%s\"", ring_bad[i]);
		ASSERT_EQ(0, read_param(RING_SIZE, after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
	for (i = 0; i < ARRAY_SIZE(flush_bad); i++) {
		ASSERT_EQ(0, read_param(FLUSH_MS, before, sizeof(before)));
		EXPECT_EQ(-EINVAL, write_file(FLUSH_MS, flush_bad[i]))
			TH_LOG("\"%s\"", flush_bad[i]);
		ASSERT_EQ(0, read_param(FLUSH_MS, after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
	/* Beyond 32 bits: out of range. */
	EXPECT_EQ(-ERANGE, write_file(FLUSH_MS, "99999999999"));
	EXPECT_EQ(-ERANGE, write_file(RING_SIZE, "99999999999"));
	ASSERT_EQ(0, read_param(FLUSH_MS, after, sizeof(after)));
	EXPECT_STREQ(before, after);
	/* The device still opens with the rings it had. */
	fd = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, fd);
	close(fd);
}

/*
 * Closes @fd and opens /dev/kmon again with rings of a page
 * (kmon.ring_size is read by the first open, so no other may hold the
 * device). Return: the new file descriptor, or -1.
 */
static int reopen_page_rings(int fd)
{
	char page[32];
	int ret;

	snprintf(page, sizeof(page), "%ld", sysconf(_SC_PAGESIZE));
	close(fd);
	if (set_saved(RING_SIZE, page))
		return -1;
	ret = open(KMON_DEV, O_RDONLY);
	restore_saved();
	return ret;
}

/*
 * The rings refuse what they cannot hold, and count it exactly: with
 * rings of a page (kmon.ring_size, taken by the first open), a burst of
 * 1000 records from a hard interrupt overflows its ring, which nothing
 * flushes until the interrupt returns. poll() says POLLERR from the
 * next flush until KMON_GET_STATS reports them.
 */
TEST_F(kmon, ring_overrun_counted)
{
	struct kmon_stats before, mid, after;
	struct pollfd p = { .events = POLLIN };
	uint64_t none = 0;
	unsigned int logged;
	int ctx, error;
	long size = 4 << 20;

	self->fd = reopen_page_rings(self->fd);
	ASSERT_LE(0, self->fd);
	p.fd = self->fd;
	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &none));
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &before));
	ASSERT_EQ(0ULL, before.ring_records);
	ASSERT_EQ(0ULL, before.ring_overruns);
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, trigger("irq 1000", &logged, &ctx, &error));
	ASSERT_EQ(KMON_CTX_HARDIRQ, ctx);
	/*
	 * A flush after the burst finds the ring's overruns: POLLERR, as for
	 * the buffer's (asked for nothing else, poll() waits for it).
	 */
	p.events = 0;
	ASSERT_EQ(1, poll(&p, 1, 2000));
	ASSERT_EQ(POLLERR, p.revents);
	p.events = POLLIN;
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &mid));
	ASSERT_EQ(1000 - logged, mid.ring_overruns);
	/* Reported: no POLLERR, through later flushes and the stop. */
	usleep(50000);
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(0, p.revents & POLLERR);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(0, p.revents & POLLERR);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &after));
	TH_LOG("1000 records in one interrupt: %u logged, %llu refused by the ring", logged,
	       (unsigned long long)after.ring_overruns);
	ASSERT_GT(1000U, logged);
	ASSERT_EQ(-ENOSPC, error);
	ASSERT_EQ(1000 - logged, after.ring_overruns);
	ASSERT_EQ(logged, after.ring_records);
	/* The state file's per-ring counters add up to the same. */
	ASSERT_EQ((long long)after.ring_overruns,
		  ring_sum("overruns") + kmt_kmon_state("unwatched"));
	ASSERT_EQ((long long)logged, ring_sum("records"));
	ASSERT_EQ(0LL, ring_sum("corrupt"));
	ASSERT_EQ(logged, after.records);
	ASSERT_EQ(0ULL, after.overruns);
	ASSERT_EQ((ssize_t)logged * TEST_REC, kmon_drain(self->fd, self->buf, 64 << 20));
}

/*
 * A ring past half full is flushed by its own CPU's irq_work, without
 * waiting for the writer to let the flush work run: with rings of a
 * page (240 records of 17 bytes), a burst of 100000 records from
 * process context, with no scheduling point in it on a kernel without
 * preemption, loses none. (An architecture that runs irq_work only
 * from the tick would overrun here; x86 raises a self-interrupt.)
 */
TEST_F(kmon, task_burst_flushed_by_kick)
{
	struct kmon_stats st;
	uint64_t none = 0;
	unsigned int logged, i;
	int ctx, error;
	long size = 4 << 20;

	self->fd = reopen_page_rings(self->fd);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &none));
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, trigger("task 100000", &logged, &ctx, &error));
	ASSERT_EQ(KMON_CTX_TASK, ctx);
	ASSERT_EQ(0, error);
	ASSERT_EQ(100000U, logged);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ(0ULL, st.ring_overruns);
	ASSERT_EQ(0ULL, st.overruns);
	ASSERT_EQ(100000ULL, st.records);
	ASSERT_EQ(100000 * TEST_REC, kmon_drain(self->fd, self->buf, 64 << 20));
	for (i = 0; i < 100000; i++)
		ASSERT_EQ(i, kmon_le(self->buf + i * TEST_REC + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
}

/* Runs this task on CPU 0 only: 0, or -1 (errno set). */
static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Read @len bytes of a started instance, waiting up to 5 s for each part. */
static ssize_t read_n(int fd, unsigned char *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t n = 0;

	while (n < len) {
		ssize_t r;

		if (poll(&p, 1, 5000) != 1)
			break;
		r = read(fd, buf + n, len - n);
		if (r <= 0)
			break;
		n += r;
	}
	return n;
}

/*
 * kmon_reserve() and kmon_commit() lay records out as kmon_add_data()
 * does, the ones that wrap around the ring's end too (written aside,
 * then copied in): on CPU 0, with rings of a page just allocated, ten
 * runs of 200 records of 17 bytes, each read before the next, put eight
 * records across the end, two of them with their header across it
 * (records 1686 and 1927). Blobs above KMON_RESERVE_MAX (64) bytes are
 * refused.
 */
TEST_F(kmon, reserve_wraps_the_ring)
{
	struct kmon_stats st;
	uint64_t none = 0;
	unsigned int logged, i, k;
	long long alloc0;
	int ctx, error;

	ASSERT_EQ(0, pin_cpu0()) TH_LOG("sched_setaffinity: %s", strerror(errno));
	alloc0 = kmt_kmon_state("rings_allocated");
	self->fd = reopen_page_rings(self->fd);
	ASSERT_LE(0, self->fd);
	/* Rings of a page, new: no other open held them. */
	ASSERT_EQ(alloc0 + 1, kmt_kmon_state("rings_allocated"));
	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &none));
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	for (k = 0; k < 10; k++) {
		ASSERT_EQ(0, trigger("reserve 200", &logged, &ctx, &error));
		ASSERT_EQ(200U, logged);
		ASSERT_EQ(KMON_CTX_TASK, ctx);
		ASSERT_EQ(0, error);
		ASSERT_EQ(200 * TEST_REC, read_n(self->fd, self->buf, 200 * TEST_REC));
		for (i = 0; i < 200; i++) {
			const unsigned char *r = self->buf + i * TEST_REC;

			ASSERT_EQ(6ULL, kmon_blob_len(r)) TH_LOG("run %u record %u", k, i);
			ASSERT_EQ(KMON_DT_TEST, r[KMON_HDR_SIZE]);
			ASSERT_EQ(KMON_CTX_TASK, r[KMON_HDR_SIZE + KMON_TB_CTX]);
			ASSERT_EQ(i, kmon_le(r + KMON_HDR_SIZE + KMON_TB_SEQ, 4))
				TH_LOG("run %u", k);
		}
	}

	ASSERT_EQ(0, trigger("rsize 0", &logged, &ctx, &error));
	ASSERT_EQ(0U, logged);
	ASSERT_EQ(-EINVAL, error);
	ASSERT_EQ(0, trigger("rsize 65", &logged, &ctx, &error));
	ASSERT_EQ(0U, logged);
	ASSERT_EQ(-EINVAL, error);
	ASSERT_EQ(0, trigger("rsize 64", &logged, &ctx, &error));
	ASSERT_EQ(1U, logged);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(KMON_HDR_SIZE + 64, kmon_drain(self->fd, self->buf, 64 << 20));
	ASSERT_EQ(64ULL, kmon_blob_len(self->buf));
	for (i = 6; i < 64; i++)
		ASSERT_EQ(0, self->buf[KMON_HDR_SIZE + i]);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ(2001ULL, st.records);
	ASSERT_EQ(0ULL, st.overruns);
	ASSERT_EQ(0ULL, st.ring_overruns);
	ASSERT_EQ(0LL, ring_sum("corrupt"));
}

/* Every started instance receives every record. */
TEST_F(kmon, two_instances)
{
	uint64_t none = 0;
	unsigned int logged, i, k;
	int fd2, ctx, error;
	unsigned char *b2;

	fd2 = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, ioctl(fd2, KMON_SET_CLASSES, &none));
	b2 = malloc(1 << 20);
	ASSERT_TRUE(!!b2);
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, ioctl(fd2, KMON_START));
	ASSERT_EQ(0, trigger("task 500", &logged, &ctx, &error));
	ASSERT_EQ(500U, logged);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(0, ioctl(fd2, KMON_STOP));
	ASSERT_EQ(500 * TEST_REC, kmon_drain(self->fd, self->buf, 1 << 20));
	ASSERT_EQ(500 * TEST_REC, kmon_drain(fd2, b2, 1 << 20));
	for (k = 0; k < 2; k++) {
		const unsigned char *b = k ? b2 : self->buf;

		for (i = 0; i < 500; i++)
			ASSERT_EQ(i, kmon_le(b + i * TEST_REC + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
	}
	ASSERT_EQ(0, memcmp(self->buf, b2, 500 * TEST_REC));
	free(b2);
	close(fd2);
}

/*
 * Whether the kernel has the "nmi" trigger: it is built where the kernel
 * can send its own CPU an NMI (CONFIG_KMON_SELFTEST_NMI: x86 with a local
 * APIC), and elsewhere answers EOPNOTSUPP. The kernel's machine, as
 * uname() names it, not this program's: a 32-bit one runs on x86_64.
 */
static bool kernel_has_nmi_trigger(void)
{
	struct utsname u;

	if (uname(&u))
		return true;	/* the trigger's answer decides */
	return !strcmp(u.machine, "x86_64") ||
	       (u.machine[0] == 'i' && !strcmp(u.machine + 2, "86"));
}

/*
 * Records from a softirq, a hard interrupt, and an NMI where the trigger
 * can send one, each in the ring of its context.
 */
TEST_F(kmon, interrupt_contexts)
{
	static const struct { const char *cmd; unsigned int n; int ctx; } runs[] = {
		{ "softirq 50", 50, KMON_CTX_SOFTIRQ },
		{ "irq 50", 50, KMON_CTX_HARDIRQ },
		{ "nmi 20", 20, KMON_CTX_NMI },
	};
	unsigned int logged, i, r;
	int ctx, error, ret;

	for (r = 0; r < ARRAY_SIZE(runs); r++) {
		unsigned int n = runs[r].n;

		ASSERT_EQ(0, ioctl(self->fd, KMON_START));
		ret = trigger(runs[r].cmd, &logged, &ctx, &error);
		ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
		if (runs[r].ctx == KMON_CTX_NMI && !kernel_has_nmi_trigger()) {
			ASSERT_EQ(-EOPNOTSUPP, ret);
			SKIP(return, "no NMI trigger on this architecture: x86 only");
		}
		ASSERT_EQ(0, ret) TH_LOG("%s: %s", runs[r].cmd, strerror(-ret));
		ASSERT_EQ(n, logged);
		ASSERT_EQ(runs[r].ctx, ctx);
		ASSERT_EQ((ssize_t)n * TEST_REC, kmon_drain(self->fd, self->buf, 64 << 20));
		for (i = 0; i < n; i++) {
			const unsigned char *b = self->buf + i * TEST_REC + KMON_HDR_SIZE;

			ASSERT_EQ(runs[r].ctx, b[KMON_TB_CTX]);
			ASSERT_EQ(i, kmon_le(b + KMON_TB_SEQ, 4));
		}
	}
}

struct blocked_read {
	int fd;
	unsigned char buf[4096];
	ssize_t ret;
	int err;
	int done;
};

static void *blocked_reader(void *arg)
{
	struct blocked_read *b = arg;

	b->ret = read(b->fd, b->buf, sizeof(b->buf));
	b->err = errno;
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Up to @ms milliseconds, by the clock, for the reader to return; true if it did. */
static bool reader_returned(struct blocked_read *b, int ms)
{
	uint64_t end = kmt_mono_ns() + ms * 1000000ULL;

	while (!__atomic_load_n(&b->done, __ATOMIC_ACQUIRE) && kmt_mono_ns() < end)
		usleep(1000);
	return __atomic_load_n(&b->done, __ATOMIC_ACQUIRE);
}

/*
 * A read() blocked on a started, empty instance returns the record the
 * next periodic flush brings, with every CPU idle meanwhile.
 */
TEST_F(kmon, record_wakes_blocked_reader)
{
	struct blocked_read b = { .fd = self->fd };
	unsigned int logged;
	int ctx, error;
	pthread_t t;

	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_reader, &b));
	ASSERT_FALSE(reader_returned(&b, 300))
		TH_LOG("read() returned %zd with nothing logged", b.ret);
	ASSERT_EQ(0, trigger("task 1", &logged, &ctx, &error));
	ASSERT_EQ(1U, logged);
	ASSERT_TRUE(reader_returned(&b, 2000)) TH_LOG("no flush within 2 s woke the reader");
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(TEST_REC, b.ret) TH_LOG("read() %zd: %s", b.ret, strerror(b.err));
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
}

/* A read() blocked on a started, empty instance returns 0 when another thread stops it. */
TEST_F(kmon, stop_wakes_blocked_reader)
{
	struct blocked_read b = { .fd = self->fd };
	pthread_t t;

	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_reader, &b));
	ASSERT_FALSE(reader_returned(&b, 300))
		TH_LOG("read() returned %zd with nothing logged", b.ret);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_TRUE(reader_returned(&b, 5000)) TH_LOG("KMON_STOP did not wake the reader");
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, b.ret) TH_LOG("read() %zd: %s", b.ret, strerror(b.err));
}

static void on_alarm(int sig)
{
}

/*
 * A signal whose handler has no SA_RESTART ends a blocked read() and a
 * blocked poll() with EINTR, and the instance goes on as before.
 */
TEST_F(kmon, signal_interrupts_blocked_read)
{
	struct itimerval it = { .it_value = { .tv_usec = 200000 } };
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct pollfd p = { .fd = self->fd, .events = POLLIN };
	unsigned int logged;
	int ctx, error;
	uint64_t t0;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, &old));
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));

	t0 = kmt_mono_ns();
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	ASSERT_EQ(-1, read(self->fd, self->buf, 4096));
	ASSERT_EQ(EINTR, errno);
	ASSERT_LE(150000000ULL, kmt_mono_ns() - t0);

	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	ASSERT_EQ(-1, poll(&p, 1, -1));
	ASSERT_EQ(EINTR, errno);

	ASSERT_EQ(0, trigger("task 2", &logged, &ctx, &error));
	ASSERT_EQ(2U, logged);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(2 * TEST_REC, kmon_drain(self->fd, self->buf, 64 << 20));
	ASSERT_EQ(1ULL, kmon_le(self->buf + TEST_REC + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
	ASSERT_EQ(0, sigaction(SIGALRM, &old, NULL));
}

/* Without CAP_SYS_ADMIN, even root cannot open the device. */
TEST(open_needs_cap_sys_admin)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	int status;
	pid_t pid;

	KMON_NEED();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (syscall(SYS_capget, &hdr, data))
			_exit(2);
		data[CAP_SYS_ADMIN / 32].effective &= ~(1U << (CAP_SYS_ADMIN % 32));
		if (syscall(SYS_capset, &hdr, data))
			_exit(3);
		_exit(open(KMON_DEV, O_RDONLY) < 0 && errno == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* Another uid: the mode, 0600 root's, says no first. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(open(KMON_DEV, O_RDONLY) < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/* The rings exist from the first open to the last close. */
TEST(ring_lifetime)
{
	long long alloc0, freed0;
	unsigned int logged;
	int a, b, ctx, error, i;

	KMON_NEED();
	ASSERT_EQ(0, kmt_kmon_state("rings")) TH_LOG("something else has /dev/kmon open");
	alloc0 = kmt_kmon_state("rings_allocated");
	freed0 = kmt_kmon_state("rings_freed");
	ASSERT_EQ(alloc0, freed0);
	a = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, a);
	ASSERT_EQ(1, kmt_kmon_state("rings"));
	ASSERT_EQ(alloc0 + 1, kmt_kmon_state("rings_allocated"));
	b = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, b);
	ASSERT_EQ(alloc0 + 1, kmt_kmon_state("rings_allocated"));
	ASSERT_EQ(2, kmt_kmon_state("open"));
	ASSERT_LE(2, kmt_kmon_state("instances"));
	close(a);
	ASSERT_EQ(1, kmt_kmon_state("rings"));
	ASSERT_EQ(freed0, kmt_kmon_state("rings_freed"));
	close(b);
	ASSERT_EQ(0, kmt_kmon_state("rings"));
	ASSERT_EQ(freed0 + 1, kmt_kmon_state("rings_freed"));
	ASSERT_EQ(0, kmt_kmon_state("open"));
	/* Instances are freed after an RCU grace period: none is left. */
	for (i = 0; i < 200 && kmt_kmon_state("instances"); i++)
		usleep(10000);
	ASSERT_EQ(0, kmt_kmon_state("instances"));
	/* With the device closed, kmon_add_data() says so. */
	ASSERT_EQ(0, trigger("task 1", &logged, &ctx, &error));
	ASSERT_EQ(0U, logged);
	ASSERT_EQ(-ENODEV, error);
}

/* ---- Scheduler events ---------------------------------------------- */

#define PINGS		1000

struct sched_counts {
	unsigned long long swc;		/* switches between the two PIDs */
	unsigned long long wak;		/* wakeups of one by the other */
	unsigned long long que, deq;	/* of either */
	unsigned long long narrow_big;	/* 2-byte PIDs equal to big & 0xffff */
	unsigned long long wide;	/* 4-byte-PID blobs naming a PID */
	unsigned long long other;	/* records of other types */
};

static bool is_pair(uint32_t a, uint32_t b, pid_t p, pid_t c)
{
	return ((pid_t)a == p && (pid_t)b == c) || ((pid_t)a == c && (pid_t)b == p);
}

/* Decode the records in @buf, counting those about @p and @c. */
static int count_sched(const unsigned char *buf, size_t len, pid_t p, pid_t c,
		       struct sched_counts *k)
{
	size_t off = 0;

	memset(k, 0, sizeof(*k));
	while (off < len) {
		const unsigned char *r = buf + off, *b;
		size_t hl, bl, want;
		uint32_t a, z;
		int kind;

		if (off + KMON_HDR_SIZE > len)
			return -1;
		hl = kmon_hdr_len(r);
		bl = kmon_blob_len(r);
		if (off + hl + bl > len || !bl)
			return -1;
		b = r + hl;
		off += hl + bl;
		if (!kmon_sched_blob(b, bl, &kind, &a, &z, &want)) {
			k->other++;
			continue;
		}
		if (bl != want)
			return -1;
		if (b[0] >= KMON_DT_TSKQUEUE32 && ((pid_t)a == c || (pid_t)z == c))
			k->wide++;
		if (b[0] < KMON_DT_TSKQUEUE32 && c > 0xffff &&
		    (a == ((uint32_t)c & 0xffff) || z == ((uint32_t)c & 0xffff)))
			k->narrow_big++;
		switch (kind) {
		case KMON_DT_TSKQUEUE:
			k->que += (pid_t)a == p || (pid_t)a == c;
			break;
		case KMON_DT_TSKDEQUEUE:
			k->deq += (pid_t)a == p || (pid_t)a == c;
			break;
		case KMON_DT_TSKSWITCH:
			k->swc += is_pair(a, z, p, c);
			break;
		case KMON_DT_TSKWAKEUP:
			k->wak += is_pair(a, z, p, c);
			break;
		}
	}
	return 0;
}

/* The "Hits:" total of an ftrace hist trigger, -1 if none. */
static long long hist_hits(const char *event)
{
	char path[128], line[256];
	long long hits = -1;
	FILE *f;

	snprintf(path, sizeof(path), TRACING "/events/sched/%s/hist", event);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, " Hits: %lld", &hits);
	fclose(f);
	return hits;
}

/* A hist trigger keyed by fields @a and @b, for the pairs (p, c) and (c, p). */
static void pair_trigger(char *buf, size_t len, const char *a, const char *b, pid_t p, pid_t c)
{
	snprintf(buf, len, "hist:keys=%s,%s if (%s==%d&&%s==%d)||(%s==%d&&%s==%d)",
		 a, b, a, p, b, c, a, c, b, p);
}

/*
 * A child that answers each byte from @in with one on @out, with PID
 * @tid if not 0 (clone3()'s set_tid, root only).
 */
static pid_t ponger(int in, int out, pid_t tid)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	pid_t pid;
	char c;

	if (tid) {
		args.set_tid = (uintptr_t)&tid;
		args.set_tid_size = 1;
		pid = syscall(SYS_clone3, &args, sizeof(args));
	} else {
		pid = fork();
	}

	if (pid)
		return pid;
	while (read(in, &c, 1) == 1 && c)
		if (write(out, &c, 1) != 1)
			break;
	_exit(0);
}

/*
 * A ping-pong over two pipes, both tasks on CPU 0, logged by kmon at
 * its default classes while ftrace's hist triggers count sched_switch
 * and sched_waking between the same two tasks: the counts must agree,
 * with nothing lost.
 */
static void ping_pong(struct __test_metadata *_metadata, int fd, unsigned char *buf,
		      bool crosscheck, pid_t tid, pid_t *child, struct sched_counts *k)
{
	char trig[256], c = 1;
	int p2c[2], c2p[2], i, status;
	long long hits_swc = -1, hits_wak = -1;
	struct kmon_stats st;
	ssize_t n;
	pid_t me = getpid();

	ASSERT_EQ(0, pin_cpu0()) TH_LOG("sched_setaffinity: %s", strerror(errno));
	ASSERT_EQ(0, pipe(p2c));
	ASSERT_EQ(0, pipe(c2p));
	*child = ponger(p2c[0], c2p[1], tid);
	ASSERT_LT(0, *child);
	/*
	 * One round trip first, then wait until the child is blocked in
	 * read(): ftrace counts from before kmon's start to after its stop,
	 * and with the child asleep at both ends no switch between the two
	 * can fall outside kmon's window (the stop itself sleeps, in
	 * synchronize_rcu(), but then the child cannot run).
	 */
	ASSERT_EQ(1, write(p2c[1], &c, 1));
	ASSERT_EQ(1, read(c2p[0], &c, 1));
	ASSERT_TRUE(kmt_wait_sleeping(*child));
	if (crosscheck) {
		if (access(TRACING "/events", F_OK))
			mount("nodev", TRACING, "tracefs", 0, NULL);
		/* Hist triggers see only events the ring buffer takes, of any task. */
		ASSERT_EQ(0, set_saved(TRACING "/tracing_on", "1"));
		ASSERT_EQ(0, set_saved(TRACING "/set_event_pid", ""));
		ASSERT_EQ(0, set_saved(TRACING "/set_event_notrace_pid", ""));
		pair_trigger(trig, sizeof(trig), "prev_pid", "next_pid", me, *child);
		ASSERT_EQ(0, set_hist(0, SCHED_EV "sched_switch/trigger", trig));
		pair_trigger(trig, sizeof(trig), "common_pid", "pid", me, *child);
		ASSERT_EQ(0, set_hist(1, SCHED_EV "sched_waking/trigger", trig));
	}
	ASSERT_EQ(0, ioctl(fd, KMON_START));
	for (i = 0; i < PINGS; i++) {
		ASSERT_EQ(1, write(p2c[1], &c, 1));
		ASSERT_EQ(1, read(c2p[0], &c, 1));
	}
	ASSERT_TRUE(kmt_wait_sleeping(*child));
	ASSERT_EQ(0, ioctl(fd, KMON_STOP));
	if (crosscheck) {
		hits_swc = hist_hits("sched_switch");
		hits_wak = hist_hits("sched_waking");
		restore_saved();
	}
	c = 0;
	ASSERT_EQ(1, write(p2c[1], &c, 1));
	ASSERT_EQ(*child, waitpid(*child, &status, 0));
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);

	ASSERT_EQ(0, ioctl(fd, KMON_GET_STATS, &st));
	ASSERT_EQ(0ULL, st.overruns);
	ASSERT_EQ(0ULL, st.ring_overruns);
	n = kmon_drain(fd, buf, 64 << 20);
	ASSERT_LT(0, n);
	ASSERT_EQ((ssize_t)st.bytes, n);
	ASSERT_EQ(0, count_sched(buf, n, me, *child, k));
	TH_LOG("%d round trips between %d and %d: kmon %llu switches, %llu wakeups;",
	       PINGS, me, *child, k->swc, k->wak);
	TH_LOG("ftrace %lld switches, %lld wakeups", hits_swc, hits_wak);
	if (crosscheck) {
		ASSERT_LT(0, hits_swc);
		ASSERT_EQ((unsigned long long)hits_swc, k->swc);
		ASSERT_EQ((unsigned long long)hits_wak, k->wak);
	}
	/* Each round trip blocks each task once, at least. */
	ASSERT_LE(1ULL * PINGS, k->swc);
	ASSERT_LE(1ULL * PINGS, k->que);
	ASSERT_LE(1ULL * PINGS, k->deq);
}

TEST_F(kmon, sched_events_match_ftrace)
{
	struct sched_counts k;
	uint64_t classes = 1ULL << KTR_BIT_SCHED;
	int p2c[2], c2p[2], i, status;
	pid_t child;
	char c = 1;

	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &classes));
	if (access(TRACING "/events", F_OK))
		mount("nodev", TRACING, "tracefs", 0, NULL);
	KMT_REQUIRE(TRACING "/events/sched/sched_switch/trigger", "CONFIG_FTRACE");
	KMT_REQUIRE(TRACING "/events/sched/sched_switch/hist", "CONFIG_HIST_TRIGGERS");
	ping_pong(_metadata, self->fd, self->buf, true, 0, &child, &k);
	ASSERT_EQ(0ULL, k.wide);

	/* With no class, the same storm logs nothing. */
	classes = 0;
	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &classes));
	ASSERT_EQ(0, pipe(p2c));
	ASSERT_EQ(0, pipe(c2p));
	child = ponger(p2c[0], c2p[1], 0);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	for (i = 0; i < PINGS; i++) {
		ASSERT_EQ(1, write(p2c[1], &c, 1));
		ASSERT_EQ(1, read(c2p[0], &c, 1));
	}
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	c = 0;
	ASSERT_EQ(1, write(p2c[1], &c, 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	close(p2c[0]);
	close(p2c[1]);
	close(c2p[0]);
	close(c2p[1]);
	ASSERT_EQ(0, kmon_drain(self->fd, self->buf, 64 << 20));
}

/*
 * A PID above 65535 is logged in the 4-byte-PID blobs, never truncated:
 * the child's PID is one above 65535 whose low 16 bits no task has, so
 * that a 2-byte PID equal to them can only be the child's, truncated.
 */
TEST_F(kmon, sched_big_pid)
{
	uint64_t sched = 1ULL << KTR_BIT_SCHED;
	struct sched_counts k;
	char path[64], low[64];
	pid_t child, tid;

	ASSERT_EQ(0, set_saved("/proc/sys/kernel/pid_max", "100000"));
	for (tid = 70001; tid < 100000; tid++) {
		snprintf(path, sizeof(path), "/proc/%d", tid);
		snprintf(low, sizeof(low), "/proc/%d", tid & 0xffff);
		if (access(path, F_OK) && access(low, F_OK))
			break;
	}
	ASSERT_GT(100000, tid) TH_LOG("no PID from 70001 free, with its low 16 bits free");
	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &sched));
	ping_pong(_metadata, self->fd, self->buf, false, tid, &child, &k);
	restore_saved();
	ASSERT_EQ(tid, child);
	ASSERT_LE(1ULL * PINGS, k.wide);
	/* No 2-byte PID holds its low bits (unless a task took them since). */
	ASSERT_TRUE(!access(low, F_OK) || !k.narrow_big)
		TH_LOG("%llu 2-byte PIDs %d: the child's, truncated", k.narrow_big, tid & 0xffff);
}

/*
 * An instance started when none was receives nothing logged before its
 * start: not what was logged, and never flushed, before the last started
 * instance was closed. With flushes 1 s apart, the record logged just
 * before the close is still in its ring at the next start. Time stamps
 * are CLOCK_MONOTONIC's, here as in the kernel.
 */
TEST_F(kmon, start_receives_nothing_older)
{
	unsigned int logged;
	int fd, ctx, error;
	uint64_t t0;
	size_t off = 0;
	ssize_t n;

	ASSERT_EQ(0, set_saved(FLUSH_MS, "1000"));

	fd = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, KMON_START));
	/* The start's own flush is behind it: the next is 1 s away. */
	ASSERT_EQ(0, trigger("task 3", &logged, &ctx, &error));
	ASSERT_EQ(3U, logged);
	close(fd);

	t0 = kmt_mono_ns();
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, trigger("task 1", &logged, &ctx, &error));
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	restore_saved();
	n = kmon_drain(self->fd, self->buf, 64 << 20);
	while (off < (size_t)n) {
		ASSERT_LE(t0, kmon_le(self->buf + off + KMON_HB_TS, 8))
			TH_LOG("a record logged before the start, at offset %zu", off);
		off += kmon_hdr_len(self->buf + off) + kmon_blob_len(self->buf + off);
	}
	ASSERT_EQ(TEST_REC, n);
}

/* Spin for @ns nanoseconds. */
static void spin_ns(uint64_t ns)
{
	uint64_t end = kmt_mono_ns() + ns;

	while (kmt_mono_ns() < end)
		;
}

/*
 * A child pinned to CPU 0 that runs for @ms, sleeping @sleep_us every
 * 2 ms if not 0; it exits 0, or 1 if it could not be pinned.
 */
static pid_t churner(int ms, int sleep_us)
{
	uint64_t end;
	pid_t pid = fork();

	if (pid)
		return pid;
	if (pin_cpu0())
		_exit(1);
	end = kmt_mono_ns() + ms * 1000000ULL;
	while (kmt_mono_ns() < end) {
		spin_ns(2000000);
		if (sleep_us)
			usleep(sleep_us);
	}
	_exit(0);
}

/* A QUE or DEQ record of one task. */
struct qd_rec {
	uint64_t ts;
	uint32_t pid;
	int kind;
};

static int qd_cmp(const void *a, const void *b)
{
	const struct qd_rec *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return 0;
}

/*
 * A task is enqueued when it becomes runnable and dequeued when it stops
 * being runnable: per task and in time order, QUE and DEQ alternate,
 * whatever the scheduler does meanwhile. A task that sleeps while it is
 * behind its fair share stays queued as "delayed" (DELAY_DEQUEUE): its
 * later removal, a migration while it sleeps, or a change of its class
 * must not log a second DEQ, nor a QUE. Here a task sleeps every 2 ms
 * on a CPU shared with a spinner, while it is moved between the CPUs and
 * between SCHED_FIFO and SCHED_OTHER.
 */
TEST_F(kmon, queue_dequeue_alternate)
{
	uint64_t sched = 1ULL << KTR_BIT_SCHED, end;
	struct sched_param fifo = { .sched_priority = 1 }, other = { 0 };
	size_t nr = 0, max = 1 << 20, off = 0, i, bad = 0, deq = 0;
	struct qd_rec *q;
	cpu_set_t set;
	pid_t sleeper, spinner;
	int status, moves = 0, moved = 0, reclassed = 0, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ssize_t n;

	q = calloc(max, sizeof(*q));
	ASSERT_TRUE(!!q);
	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &sched));
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	spinner = churner(1500, 0);
	sleeper = churner(1500, 300);
	ASSERT_LT(0, spinner);
	ASSERT_LT(0, sleeper);
	for (end = kmt_mono_ns() + 1200000000ULL; kmt_mono_ns() < end; moves++) {
		usleep(1000);
		CPU_ZERO(&set);
		CPU_SET(ncpu > 1 && moves % 2 ? 1 : 0, &set);
		/* Counted: a move or change that failed is not one made. */
		moved += !sched_setaffinity(sleeper, sizeof(set), &set);
		if (moves % 3 == 0)
			reclassed += !sched_setscheduler(sleeper,
							 moves % 2 ? SCHED_OTHER : SCHED_FIFO,
							 moves % 2 ? &other : &fifo);
	}
	ASSERT_EQ(sleeper, waitpid(sleeper, &status, 0));
	EXPECT_EQ(0, status) TH_LOG("sleeper: status %#x", status);
	ASSERT_EQ(spinner, waitpid(spinner, &status, 0));
	EXPECT_EQ(0, status) TH_LOG("spinner: status %#x", status);
	/* The task was moved and changed class, many times. */
	EXPECT_LT(moves / 2, moved) TH_LOG("%d of %d moves made", moved, moves);
	EXPECT_LT(moves / 6, reclassed) TH_LOG("%d of %d class changes made", reclassed,
					       (moves + 2) / 3);
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	n = kmon_drain(self->fd, self->buf, 64 << 20);
	ASSERT_LT(0, n);

	while (off < (size_t)n) {
		const unsigned char *r = self->buf + off, *b = r + kmon_hdr_len(r);
		size_t bl = kmon_blob_len(r), want;
		uint32_t a, z;
		int kind;

		off = b - self->buf + bl;
		if (!kmon_sched_blob(b, bl, &kind, &a, &z, &want) ||
		    (kind != KMON_DT_TSKQUEUE && kind != KMON_DT_TSKDEQUEUE) ||
		    ((pid_t)a != sleeper && (pid_t)a != spinner))
			continue;
		ASSERT_GT(max, nr);
		q[nr].ts = kmon_le(r + KMON_HB_TS, 8);
		q[nr].pid = a;
		q[nr++].kind = kind;
	}
	qsort(q, nr, sizeof(*q), qd_cmp);
	for (i = 0; i < nr; i++) {
		deq += q[i].kind == KMON_DT_TSKDEQUEUE && q[i].pid == (uint32_t)sleeper;
		if (i && q[i].pid == q[i - 1].pid && q[i].kind == q[i - 1].kind && bad++ < 5)
			TH_LOG("pid %u: two %s in a row, at %llu and %llu ns", q[i].pid,
			       q[i].kind == KMON_DT_TSKQUEUE ? "QUE" : "DEQ",
			       (unsigned long long)q[i - 1].ts, (unsigned long long)q[i].ts);
	}
	TH_LOG("%zu QUE/DEQ records of the two tasks, %zu sleeps, %d moves", nr, deq, moves);
	free(q);
	/* It slept every 2 ms of its 1.5 s, at least a hundred times. */
	ASSERT_LE(100U, deq);
	ASSERT_EQ(0U, bad);
}

#define ALLOC_TRIGGER	"/sys/kernel/debug/kmemtrace/alloc_selftest"
#define ALLOC_CLASSES	((1ULL << KTR_BIT_KMALLOC) | (1ULL << KTR_BIT_KMEM_CACHE) | \
			 (1ULL << KTR_BIT_PAGE))

/* kmemtrace's <linux/kmemtrace.h> values the blobs carry. */
enum { TYPE_KMALLOC, TYPE_CACHE, TYPE_PAGES };
#define CTX_HARDIRQ	0x01
#define CTX_SOFTIRQ	0x02

/* An allocation blob of a log, decoded. */
struct alloc_rec {
	int kind, type, ctx;
	uint32_t pid;
	unsigned long long site, ptr, req, size, cache;
	unsigned int gfp;
	int node;
};

/*
 * The KMON_DT_ALLOC and KMON_DT_FREE records of @buf; counts the others.
 * SIZE_MAX if a record is cut by the end of @buf, empty, or an allocation
 * blob of the wrong size, or there are more than @max.
 */
static size_t alloc_records(const unsigned char *buf, size_t len, struct alloc_rec *out,
			    size_t max, size_t *others)
{
	size_t off = 0, n = 0;

	*others = 0;
	while (off < len) {
		const unsigned char *b;
		size_t bl, hl;
		struct alloc_rec *r = out + n;
		struct kmon_alloc_fields f;

		if (len - off < KMON_HDR_SIZE)
			return SIZE_MAX;
		hl = kmon_hdr_len(buf + off);
		bl = kmon_blob_len(buf + off);
		if (!bl || len - off < hl + bl)
			return SIZE_MAX;
		b = buf + off + hl;
		off += hl + bl;
		if (b[0] != KMON_DT_ALLOC && b[0] != KMON_DT_FREE) {
			(*others)++;
			continue;
		}
		if (n == max ||
		    bl != (b[0] == KMON_DT_ALLOC ? KMON_ALLOC_SIZE : KMON_FREE_SIZE))
			return SIZE_MAX;
		kmon_alloc_decode(b, &f);
		r->kind = f.kind;
		r->type = f.type;
		r->ctx = f.ctx;
		r->pid = f.pid;
		r->site = f.site;
		r->ptr = f.ptr;
		r->req = f.req;
		r->size = f.allocated;
		r->gfp = f.gfp;
		r->node = f.node;
		r->cache = f.cache;
		n++;
	}
	return n;
}

/*
 * Run kmemtrace's trigger with @classes; its report (malloc'ed, for the
 * caller to free) and the records.
 */
static char *alloc_run(struct __test_metadata *_metadata, int fd, unsigned char *buf,
		       uint64_t classes, ssize_t *len)
{
	long size = 32L << 20;
	char *report;

	ASSERT_EQ(0, ioctl(fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(0, ioctl(fd, KMON_SET_CLASSES, &classes))
		TH_LOG("KMON_SET_CLASSES %#llx: %s", (unsigned long long)classes,
		       strerror(errno));
	ASSERT_EQ(0, ioctl(fd, KMON_START));
	ASSERT_EQ(0, write_file(ALLOC_TRIGGER, "run"));
	ASSERT_EQ(0, ioctl(fd, KMON_STOP));
	*len = kmon_drain(fd, buf, 64 << 20);
	ASSERT_LT(0, *len);
	report = kmt_read_file(ALLOC_TRIGGER, NULL);
	ASSERT_TRUE(report && *report) TH_LOG("%s: %s", ALLOC_TRIGGER,
					      report ? "empty" : strerror(errno));
	return report;
}

/*
 * Allocations routed to kmon (KMON_DT_ALLOC, KMON_DT_FREE): every event
 * kmemtrace's trigger announces is there, in order, with its allocator,
 * pointer, sizes, gfp flags, node, context, PID and call site; the
 * classes select the allocators.
 */
TEST_F(kmon, alloc_events)
{
	static struct alloc_rec recs[200000];
	struct cache_line *caches;
	struct sym *syms;
	char buf[128];
	size_t nsyms, nrec, others, next = 0, matched = 0, ncaches, i;
	char *report, *line, *save;
	ssize_t len;

	KMT_REQUIRE(ALLOC_TRIGGER, "CONFIG_KMEMTRACE_ALLOC_SELFTEST");
	syms = load_syms("/proc/kallsyms", &nsyms);
	ASSERT_TRUE(!!syms);
	ASSERT_LT((size_t)1000, nsyms);
	caches = load_caches("/sys/kernel/debug/kmemtrace/caches", &ncaches);
	ASSERT_TRUE(!!caches);
	ASSERT_LT((size_t)10, ncaches);

	report = alloc_run(_metadata, self->fd, self->buf, ALLOC_CLASSES, &len);
	nrec = alloc_records(self->buf, len, recs, ARRAY_SIZE(recs), &others);
	ASSERT_NE(SIZE_MAX, nrec) TH_LOG("a malformed allocation blob");
	ASSERT_EQ(0U, others) TH_LOG("records of classes not asked for");

	for (line = strtok_r(report, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct alloc_line l;
		uint32_t pid;
		bool in_irq;
		int kind;

		ASSERT_TRUE(parse_alloc_line(line, &l)) TH_LOG("line: %s", line);
		kind = l.alloc ? KMON_DT_ALLOC : KMON_DT_FREE;
		in_irq = l.ctx & (CTX_HARDIRQ | CTX_SOFTIRQ);
		pid = in_irq ? 0 : getpid();
		for (i = next; i < nrec; i++)
			if (recs[i].kind == kind && recs[i].type == (int)l.type &&
			    recs[i].ptr == l.ptr && recs[i].pid == pid &&
			    (!in_irq ||
			     !strcmp(l.func, resolve(syms, nsyms, recs[i].site, buf, sizeof(buf)))))
				break;
		ASSERT_LT(i, nrec) TH_LOG("no record for \"%s\"", line);
		next = i + 1;
		matched++;
		EXPECT_EQ(l.ctx, (unsigned int)recs[i].ctx) TH_LOG("context of \"%s\"", line);
		if (strcmp(l.func, "*"))
			EXPECT_STREQ(l.func, resolve(syms, nsyms, recs[i].site, buf, sizeof(buf)))
				TH_LOG("call site of \"%s\"", line);
		/* A cache id for kmem_cache events, none for pages. */
		if (l.type != TYPE_KMALLOC)
			EXPECT_EQ(l.type == TYPE_PAGES, recs[i].cache == 0)
				TH_LOG("cache of \"%s\"", line);
		if (kind == KMON_DT_ALLOC) {
			EXPECT_EQ(l.req, recs[i].req) TH_LOG("\"%s\"", line);
			EXPECT_TRUE(slab_size_ok(caches, ncaches, l.size, recs[i].size))
				TH_LOG("\"%s\": %llu bytes allocated", line,
				       (unsigned long long)recs[i].size);
			EXPECT_EQ(l.gfp, recs[i].gfp) TH_LOG("\"%s\"", line);
			EXPECT_EQ(l.node, recs[i].node) TH_LOG("\"%s\"", line);
		}
	}
	ASSERT_LT((size_t)10, matched);
	TH_LOG("%zu announced events found among %zu allocation records", matched, nrec);

	/* KTR_KMALLOC alone: kmalloc events, and none of the others. */
	free(report);
	report = alloc_run(_metadata, self->fd, self->buf, 1ULL << KTR_BIT_KMALLOC, &len);
	nrec = alloc_records(self->buf, len, recs, ARRAY_SIZE(recs), &others);
	ASSERT_NE(SIZE_MAX, nrec);
	ASSERT_EQ(0U, others);
	ASSERT_LT((size_t)0, nrec);
	for (i = 0; i < nrec; i++) {
		/* In braces: TH_LOG() follows ASSERT_*(), outside it. */
		int type = recs[i].type;

		ASSERT_EQ(TYPE_KMALLOC, type) TH_LOG("record %zu", i);
	}
	free(report);
	free(syms);
	free(caches);
}

TEST_HARNESS_MAIN
