// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtrace's cpu<n> files read in place (KMEMTRACE_IOC_SPAN,
 * Documentation/trace/kmemtrace.rst): a span holds whole events and the
 * very bytes read() returns when it reads from the same position, across
 * several wraps of the buffer; read() and spans take turns; a span given
 * back stale, past its end or elsewhere fails with EINVAL, a bad mapping
 * with EINVAL or EACCES; a buffer drained through spans alone is freed
 * once closed, as one drained by read().
 *
 * Needs root. Skips, saying why, on a kernel without CONFIG_KMEMTRACE;
 * fails without CONFIG_KMEMTRACE_ALLOC and its self-test trigger.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kmemtrace.h>

#include "../kselftest_harness.h"
#include "kmt_events.h"
#include "kmt_util.h"

#define TRIGGER		KMT_DIR "/alloc_selftest"
#define CPU0		KMT_DIR "/cpu0"

FIXTURE(span) {
	char enable[8];
	char mask[32];
	int fd;
	unsigned char *map;
	size_t size;
};

/* Gives back @done bytes at @sp->offset; the next span in *@sp, or -errno. */
static int span_next(int fd, struct kmemtrace_span *sp, uint64_t done)
{
	sp->done = done;
	return ioctl(fd, KMEMTRACE_IOC_SPAN, sp) ? -errno : 0;
}

/* The whole events in @len bytes at @p, or -1 if the last one is cut. */
static long whole_events(const unsigned char *p, size_t len)
{
	size_t off = 0;
	long n = 0;

	while (off < len) {
		unsigned int size = kmt_peek_size(p + off, len - off, false);

		if (len - off < 4 || size < KMT_HDR_SIZE || size > len - off)
			return -1;
		off += size;
		n++;
	}
	return n;
}

/* The bytes of the first events of @p that make at most @max. */
static size_t events_within(const unsigned char *p, size_t max)
{
	size_t off = 0;

	for (;;) {
		unsigned int size = kmt_peek_size(p + off, max - off, false);

		if (max - off < 4 || size < KMT_HDR_SIZE || size > max - off)
			return off;
		off += size;
	}
}

/* @n kmalloc()/kfree() pairs on this (CPU 0's) thread. */
static int alloc_storm(unsigned int n)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "storm %u", n);
	return kmt_write_str(TRIGGER, cmd);
}

FIXTURE_SETUP(span)
{
	struct kmemtrace_span sp = {};
	cpu_set_t cpus;

	self->fd = -1;
	self->map = MAP_FAILED;
	KMT_NEED_KMEMTRACE();
	KMT_REQUIRE(KMT_DIR "/enable", "CONFIG_KMEMTRACE_ALLOC");
	KMT_REQUIRE(TRIGGER, "CONFIG_KMEMTRACE_ALLOC_SELFTEST");
	/* Restored by the teardown. */
	ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/enable", self->enable, sizeof(self->enable)));
	ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/mask", self->mask, sizeof(self->mask)));
	/* On CPU 0, its buffer's own: the storms write there, spans see whole events. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", KMT_MASK_ALL));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	self->fd = open(CPU0, O_RDONLY);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", CPU0, strerror(errno));
	if (span_next(self->fd, &sp, 0) == -EOPNOTSUPP)
		SKIP(return, "this machine's data cache aliases: the files are read with read() only");
	ASSERT_EQ(0, span_next(self->fd, &sp, 0));
	self->size = sp.size;
	ASSERT_LT(0UL, self->size);
	ASSERT_EQ(0UL, self->size % getpagesize());
	self->map = mmap(NULL, self->size, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map) TH_LOG("mmap of %s: %s", CPU0, strerror(errno));
}

FIXTURE_TEARDOWN(span)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->size);
	if (self->fd >= 0)
		close(self->fd);
	kmt_write_str(KMT_DIR "/mask", self->mask);
	kmt_write_str(KMT_DIR "/enable", self->enable);
}

/*
 * Round after round of storms that wrap the buffer several times: each
 * span's first whole events are given back, and read() of the rest
 * returns the span's remaining bytes, byte for byte.
 */
TEST_F_TIMEOUT(span, equals_read, 300)
{
	/* A span is at most a sub-buffer, at most the buffer. */
	size_t total = 0, in_place = 0, by_read = 0, cap = self->size;
	unsigned char *got = malloc(cap), *want = malloc(cap);
	struct kmemtrace_span sp = {};
	long spans = 0;
	int round;

	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, want);
	for (round = 0; total < 3 * self->size; round++) {
		ASSERT_GT(1000, round) TH_LOG("%zu bytes in %d rounds", total, round);
		ASSERT_EQ(0, alloc_storm(4000));
		for (;;) {
			size_t first, rest;
			ssize_t n;

			ASSERT_EQ(0, span_next(self->fd, &sp, 0));
			ASSERT_EQ(self->size, sp.size);
			if (!sp.len)
				break;
			spans++;
			ASSERT_LT(sp.offset, self->size);
			ASSERT_GE(self->size, sp.offset + sp.len);
			ASSERT_LE(sp.len, cap);
			ASSERT_LT(0, whole_events(self->map + sp.offset, sp.len))
				TH_LOG("span %llu+%llu cuts an event",
				       (unsigned long long)sp.offset, (unsigned long long)sp.len);
			/* The first half in place, the rest through read(). */
			first = events_within(self->map + sp.offset, sp.len / 2);
			rest = sp.len - first;
			memcpy(want, self->map + sp.offset + first, rest);
			ASSERT_EQ(0, span_next(self->fd, &sp, first));
			in_place += first;
			n = read(self->fd, got, rest);
			ASSERT_EQ((ssize_t)rest, n)
				TH_LOG("read: %s", n < 0 ? strerror(errno) : "short");
			ASSERT_EQ(0, memcmp(want, got, rest));
			by_read += rest;
			total += first + rest;
		}
	}
	TH_LOG("%ld spans, %zu bytes in place and %zu by read(), %.1f buffers",
	       spans, in_place, by_read, (double)total / self->size);
	ASSERT_LT(0UL, in_place);
	free(got);
	free(want);
}

/* A span starts where read() stopped, even inside an event. */
TEST_F(span, follows_read)
{
	struct kmemtrace_span a = {}, b = {};
	unsigned char buf[7];

	ASSERT_EQ(0, alloc_storm(200));
	ASSERT_EQ(0, span_next(self->fd, &a, 0));
	ASSERT_LT(sizeof(buf), a.len);
	ASSERT_EQ((ssize_t)sizeof(buf), read(self->fd, buf, sizeof(buf)));
	ASSERT_EQ(0, memcmp(self->map + a.offset, buf, sizeof(buf)));
	ASSERT_EQ(0, span_next(self->fd, &b, 0));
	ASSERT_EQ(a.offset + sizeof(buf), b.offset);
	ASSERT_LE(a.len - sizeof(buf), b.len);
	/* The span read() moved past is stale. */
	a.done = 1;
	ASSERT_EQ(-EINVAL, span_next(self->fd, &a, 1));
	ASSERT_EQ(0, span_next(self->fd, &b, b.len));
}

TEST_F(span, bad_arguments)
{
	struct kmemtrace_span sp = {}, bad;
	unsigned long long subbuf;
	unsigned char c;
	char *s;
	int fd;

	s = kmt_read_file(KMT_DIR "/subbuf_size", NULL);
	ASSERT_NE(NULL, s);
	subbuf = strtoull(s, NULL, 0);
	free(s);
	ASSERT_LT(0ULL, subbuf);
	ASSERT_EQ(0ULL, self->size % subbuf);
	ASSERT_EQ(0, alloc_storm(200));
	ASSERT_EQ(0, span_next(self->fd, &sp, 0));
	ASSERT_LT(1ULL, sp.len);
	bad = sp;
	bad.offset++;
	ASSERT_EQ(-EINVAL, span_next(self->fd, &bad, 1));
	/*
	 * Past its sub-buffer's end, never there however many events came
	 * since: from a position off the sub-buffer's start, so that the
	 * count is within the ioctl's own bounds and relay refuses it.
	 */
	ASSERT_EQ(1, read(self->fd, &c, 1));
	ASSERT_EQ(0, span_next(self->fd, &sp, 0));
	ASSERT_NE(0ULL, sp.offset % subbuf);
	bad = sp;
	ASSERT_EQ(-EINVAL, span_next(self->fd, &bad, subbuf - sp.offset % subbuf + 1));
	bad = sp;
	bad.offset = self->size;
	ASSERT_EQ(-EINVAL, span_next(self->fd, &bad, 1));
	bad = sp;
	ASSERT_EQ(-EINVAL, span_next(self->fd, &bad, UINT64_MAX));
	ASSERT_EQ(-1, ioctl(self->fd, KMEMTRACE_IOC_SPAN, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, _IOWR(KMEMTRACE_IOC_MAGIC, 0x1f, struct kmemtrace_span),
			    &bad));
	ASSERT_EQ(ENOTTY, errno);
	/* Nothing was given back: the same span is still there, and more. */
	bad = sp;
	ASSERT_EQ(0, span_next(self->fd, &bad, 0));
	ASSERT_EQ(sp.offset, bad.offset);
	ASSERT_LE(sp.len, bad.len);
	/* Only cpu<n> files. */
	fd = open(KMT_DIR "/stats", O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(-ENOTTY, span_next(fd, &bad, 0));
	close(fd);
	/* The whole buffer, read-only. */
	ASSERT_EQ(MAP_FAILED, mmap(NULL, self->size - getpagesize(), PROT_READ, MAP_SHARED,
				   self->fd, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, self->size + getpagesize(), PROT_READ, MAP_SHARED,
				   self->fd, 0));
	ASSERT_EQ(EINVAL, errno);
	/* Its last page would be past the buffer's end. */
	ASSERT_EQ(MAP_FAILED, mmap(NULL, self->size, PROT_READ, MAP_SHARED, self->fd,
				   getpagesize()));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, self->size, PROT_READ | PROT_WRITE, MAP_SHARED,
				   self->fd, 0));
	ASSERT_EQ(EACCES, errno);
	/* Read-only whatever the file's mode: a private copy is refused too. */
	ASSERT_EQ(MAP_FAILED, mmap(NULL, self->size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
				   self->fd, 0));
	ASSERT_EQ(EPERM, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, self->size, PROT_READ | PROT_EXEC, MAP_SHARED,
				   self->fd, 0));
	ASSERT_EQ(EPERM, errno);
	/*
	 * Only a reader gives back; root's writable file maps read-only all
	 * the same. The file has one open at a time: this one's is closed.
	 */
	ASSERT_EQ(0, munmap(self->map, self->size));
	self->map = MAP_FAILED;
	close(self->fd);
	self->fd = -1;
	fd = open(CPU0, O_WRONLY);
	ASSERT_LE(0, fd) TH_LOG("%s for writing: %s", CPU0, strerror(errno));
	ASSERT_EQ(-EBADF, span_next(fd, &bad, 0));
	close(fd);
	fd = open(CPU0, O_RDWR);
	ASSERT_LE(0, fd) TH_LOG("%s for reading and writing: %s", CPU0, strerror(errno));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, self->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	ASSERT_EQ(EPERM, errno);
	close(fd);
}

/*
 * Tracing off, every other CPU drained by read() and CPU 0 through
 * spans alone: once closed, the buffers go (cpu<n> with them), as after
 * a drain by read(). Without the span's drain, CPU 0 would keep them.
 */
TEST_F_TIMEOUT(span, drain_in_place_frees, 60)
{
	struct kmemtrace_span sp = {};
	static unsigned char buf[65536];
	struct dirent *d;
	int i, fd;
	DIR *dir;

	ASSERT_EQ(0, alloc_storm(500));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	dir = opendir(KMT_DIR);
	ASSERT_NE(NULL, dir);
	while ((d = readdir(dir))) {
		char path[300];

		if (strncmp(d->d_name, "cpu", 3) || !strcmp(d->d_name, "cpu0"))
			continue;
		snprintf(path, sizeof(path), KMT_DIR "/%s", d->d_name);
		fd = open(path, O_RDONLY);
		ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	closedir(dir);
	ASSERT_EQ(0, span_next(self->fd, &sp, 0));
	ASSERT_LT(0ULL, sp.len);
	while (sp.len)
		ASSERT_EQ(0, span_next(self->fd, &sp, sp.len));
	munmap(self->map, self->size);
	self->map = MAP_FAILED;
	close(self->fd);
	self->fd = -1;
	for (i = 0; i < 500 && !access(CPU0, F_OK); i++)
		usleep(10000);
	ASSERT_NE(0, access(CPU0, F_OK)) TH_LOG("%s still there 5 s after its drain", CPU0);
}

TEST_HARNESS_MAIN
