// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kmon read through mmap() (Documentation/trace/kmon.rst): the
 * records a mapping's reader consumes are those read() returns to
 * another instance, byte for byte, across many wraps of a small buffer;
 * bad offsets, sizes, protections and positions each get their errno or
 * are ignored; KMON_BUFFSIZE waits for every mapping (fork()'s copies
 * and split pieces included); a mapping ends a read() waiting for
 * records (EBUSY); a mapping outlives close(); mappings and resizes race
 * without harm.
 *
 * Needs root. Skips, saying why, on a kernel without CONFIG_KMEMTRACE;
 * fails without CONFIG_KMON and CONFIG_KMON_SELFTEST (kmt_util.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kmon.h>

#include "../kselftest_harness.h"
#include "kmon_log.h"
#include "kmt_util.h"
#include "kmon_trigger.h"

/* The mmap() offsets of <linux/kmon.h>, in bytes. */
#define CTRL_OFF(page)	((off_t)KMON_MMAP_CTRL_PGOFF * (page))
#define DATA_OFF(page)	((off_t)KMON_MMAP_DATA_PGOFF * (page))

#define KMON_NEED() do {							\
	KMT_NEED_KMEMTRACE();							\
	KMT_REQUIRE(KMON_DEV, "CONFIG_KMON");					\
	KMT_REQUIRE(KMON_TRIGGER, "CONFIG_KMON_SELFTEST");			\
} while (0)

/* The reader's side of <linux/kmon.h>'s memory ordering. */
static uint64_t head_acquire(struct kmon_mmap_page *c)
{
	return __atomic_load_n(&c->data_head, __ATOMIC_ACQUIRE);
}

static void tail_release(struct kmon_mmap_page *c, uint64_t tail)
{
	__atomic_store_n(&c->data_tail, tail, __ATOMIC_RELEASE);
}

/* Logs @cmd's records through the trigger: all of them, or -1. */
static int log_records(const char *cmd, unsigned int want)
{
	struct kmon_trigger_result r;

	if (kmon_trigger(cmd, &r) || r.error || r.logged != want)
		return -1;
	return 0;
}

/*
 * Consumes what the mapping holds into @out at *@n, record by record
 * from the double mapping @data of a @size-byte buffer: each record must
 * be whole and below the head. Returns the records consumed, or -1.
 */
static long consume(struct kmon_mmap_page *c, const unsigned char *data, size_t size,
		    unsigned char *out, size_t *n, size_t cap)
{
	uint64_t tail = c->data_tail, head = head_acquire(c);
	long nr = 0;

	while (tail != head) {
		const unsigned char *rec = data + tail % size;
		size_t len;

		if (head - tail < KMON_HDR_SIZE)
			return -1;
		len = kmon_hdr_len(rec) + kmon_blob_len(rec);
		if (len > head - tail || *n + len > cap)
			return -1;
		memcpy(out + *n, rec, len);
		*n += len;
		tail += len;
		nr++;
	}
	tail_release(c, tail);
	return nr;
}

FIXTURE(kmap) {
	int fd;
	long page;
	struct kmon_mmap_page *ctrl;
	unsigned char *data;
	size_t data_len;
};

FIXTURE_SETUP(kmap)
{
	uint64_t none = 0;

	self->fd = -1;
	self->ctrl = MAP_FAILED;
	self->data = MAP_FAILED;
	self->page = sysconf(_SC_PAGESIZE);
	KMON_NEED();
	self->fd = open(KMON_DEV, O_RDWR);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", KMON_DEV, strerror(errno));
	ASSERT_EQ(0, ioctl(self->fd, KMON_SET_CLASSES, &none));
}

FIXTURE_TEARDOWN(kmap)
{
	if (self->data != MAP_FAILED)
		munmap(self->data, self->data_len);
	if (self->ctrl != MAP_FAILED)
		munmap(self->ctrl, self->page);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * Maps @self's control page and its buffer twice; the buffer is @size.
 * (FIXTURE_DATA(kmap) is struct _test_data_kmap.)
 */
static int map_both(struct _test_data_kmap *self, long size)
{
	self->ctrl = mmap(NULL, self->page, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
			  CTRL_OFF(self->page));
	if (self->ctrl == MAP_FAILED)
		return -1;
	self->data_len = 2 * size;
	self->data = mmap(NULL, self->data_len, PROT_READ, MAP_SHARED, self->fd,
			  DATA_OFF(self->page));
	return self->data == MAP_FAILED ? -1 : 0;
}

/*
 * Two instances receive every record: one read with read(), one through
 * a 16 KiB mapping consumed as the records come, so that the buffer
 * wraps about 40 times, records of several sizes running across its
 * end. The two must get the same bytes.
 */
TEST_F(kmap, equals_read)
{
	static const char *const cmds[] = { "task 300", "size 1000", "reserve 200", "size 7" };
	static const unsigned int counts[] = { 300, 1, 200, 1 };
	long small = 4 * 4096, big = 4 << 20;
	size_t got = 0, cap = big;
	unsigned char *a, *b;
	struct kmon_stats st;
	uint64_t none = 0;
	ssize_t nread;
	long nr = 0, want = 0;
	int fd2, i, k;

	small = (small + self->page - 1) / self->page * self->page;
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &small));
	ASSERT_EQ(0, map_both(self, small)) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ((uint64_t)small, self->ctrl->data_size);
	ASSERT_EQ(0ULL, self->ctrl->data_head);
	fd2 = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, ioctl(fd2, KMON_SET_CLASSES, &none));
	ASSERT_EQ(0, ioctl(fd2, KMON_BUFFSIZE, &big));
	a = malloc(big);
	b = malloc(big);
	ASSERT_TRUE(a && b);
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, ioctl(fd2, KMON_START));
	for (k = 0; k < 120; k++) {
		i = k % 4;
		ASSERT_EQ(0, log_records(cmds[i], counts[i])) TH_LOG("%s", cmds[i]);
		want += counts[i];
		/* Each batch is below the buffer's size: consume it as it comes. */
		for (int tries = 0; nr < want && tries < 5000; tries++) {
			struct pollfd p = { .fd = self->fd, .events = POLLIN };
			long r;

			ASSERT_LE(0, poll(&p, 1, 10));
			r = consume(self->ctrl, self->data, small, b, &got, cap);
			ASSERT_LE(0, r) TH_LOG("a bad record at %llu",
					       (unsigned long long)self->ctrl->data_tail);
			nr += r;
		}
		ASSERT_EQ(want, nr);
	}
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ(0, ioctl(fd2, KMON_STOP));
	ASSERT_EQ(0, consume(self->ctrl, self->data, small, b, &got, cap));
	nread = kmon_drain(fd2, a, big);
	ASSERT_EQ((ssize_t)got, nread);
	ASSERT_EQ(0, memcmp(a, b, got));
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ(0ULL, st.overruns);
	ASSERT_EQ(0ULL, st.ring_overruns);
	ASSERT_EQ((uint64_t)nr, st.records);
	ASSERT_EQ(0ULL, st.buffered);
	ASSERT_EQ(st.bytes, self->ctrl->data_head);
	ASSERT_EQ(st.bytes, self->ctrl->data_tail);
	/* It wrapped: the bytes went round the 16 KiB buffer many times. */
	ASSERT_LT((uint64_t)15 * small, st.bytes);
	/* The sequence numbers of the "task" batches run 0 to 299 in order. */
	for (size_t off = 0, seq = 0; off < got; off += kmon_hdr_len(b + off) +
							kmon_blob_len(b + off)) {
		const unsigned char *blob = b + off + kmon_hdr_len(b + off);

		ASSERT_EQ(KMON_DT_TEST, blob[0]);
		if (kmon_blob_len(b + off) != 6)
			continue;
		if (kmon_le(blob + KMON_TB_SEQ, 4) == 0)
			seq = 0;
		ASSERT_EQ(seq, kmon_le(blob + KMON_TB_SEQ, 4));
		seq++;
	}
	free(a);
	free(b);
	close(fd2);
}

/* A single mapping of the buffer shows what the double one's first half does. */
TEST_F(kmap, single_mapping)
{
	long size = 2 * self->page;
	unsigned char *one;

	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(0, map_both(self, size));
	one = mmap(NULL, size, PROT_READ, MAP_SHARED, self->fd, DATA_OFF(self->page));
	ASSERT_NE(MAP_FAILED, one) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, log_records("task 100", 100));
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ((uint64_t)100 * TEST_REC, head_acquire(self->ctrl));
	ASSERT_EQ(0, memcmp(one, self->data, size));
	ASSERT_EQ(0, memcmp(one, self->data + size, size));
	ASSERT_EQ(99ULL, kmon_le(one + 99 * TEST_REC + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
	ASSERT_EQ(0, munmap(one, size));
}

/* Offsets, lengths, sharing and protections the device refuses. */
TEST_F(kmap, bad_arguments)
{
	long size = 4 * self->page, odd = 4096 + 17, got;
	const long p = self->page;
	struct {
		const char *what;
		size_t len;
		int prot, flags;
		off_t off;
		int err;
	} bad[] = {
		{ "page 2", p, PROT_READ, MAP_SHARED, 2 * p, EINVAL },
		{ "page 3", 4 * p, PROT_READ, MAP_SHARED, 3 * p, EINVAL },
		{ "256 MiB in", p, PROT_READ, MAP_SHARED, 0x10000000, EINVAL },
		{ "control page, two pages", 2 * p, PROT_READ, MAP_SHARED, CTRL_OFF(p), EINVAL },
		{ "data, a page short", 4 * p - p, PROT_READ, MAP_SHARED, DATA_OFF(p), EINVAL },
		{ "data, a page over", 4 * p + p, PROT_READ, MAP_SHARED, DATA_OFF(p), EINVAL },
		{ "data, three times", 12 * p, PROT_READ, MAP_SHARED, DATA_OFF(p), EINVAL },
		{ "control page, private", p, PROT_READ, MAP_PRIVATE, CTRL_OFF(p), EINVAL },
		{ "data, private", 4 * p, PROT_READ, MAP_PRIVATE, DATA_OFF(p), EINVAL },
		{ "data, writable", 4 * p, PROT_READ | PROT_WRITE, MAP_SHARED, DATA_OFF(p), EPERM },
		{ "data, executable", 4 * p, PROT_READ | PROT_EXEC, MAP_SHARED, DATA_OFF(p),
		  EPERM },
		{ "control page, executable", p, PROT_READ | PROT_EXEC, MAP_SHARED, CTRL_OFF(p),
		  EPERM },
	};
	unsigned char *m;
	int ro;
	size_t i;

	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		m = mmap(NULL, bad[i].len, bad[i].prot, bad[i].flags, self->fd, bad[i].off);
		EXPECT_EQ(MAP_FAILED, m) TH_LOG("%s: mapped", bad[i].what);
		EXPECT_EQ(bad[i].err, errno) TH_LOG("%s: %s", bad[i].what, strerror(errno));
		if (m != MAP_FAILED)
			munmap(m, bad[i].len);
	}
	/* Read-only data cannot be made writable or executable later. */
	m = mmap(NULL, size, PROT_READ, MAP_SHARED, self->fd, DATA_OFF(self->page));
	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ(-1, mprotect(m, size, PROT_READ | PROT_WRITE));
	ASSERT_EQ(EACCES, errno);
	ASSERT_EQ(-1, mprotect(m, size, PROT_READ | PROT_EXEC));
	ASSERT_EQ(EACCES, errno);
	ASSERT_EQ(0, munmap(m, size));
	/* The control page is writable only through a file open for writing. */
	ro = open(KMON_DEV, O_RDONLY);
	ASSERT_LE(0, ro);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, p, PROT_READ | PROT_WRITE, MAP_SHARED, ro,
				   CTRL_OFF(self->page)));
	ASSERT_EQ(EACCES, errno);
	m = mmap(NULL, p, PROT_READ, MAP_SHARED, ro, CTRL_OFF(self->page));
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ((uint64_t)KMON_BUFFSIZE_DEFAULT, ((struct kmon_mmap_page *)m)->data_size);
	ASSERT_EQ(0, munmap(m, p));
	close(ro);
	/* A buffer whose size is not a multiple of the page size: no data mapping. */
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &odd));
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_BUFFSIZE, &got));
	ASSERT_EQ(odd, got);
	for (i = 1; i <= 2; i++) {
		size_t len = i * ((odd + p - 1) / p * p);

		ASSERT_EQ(MAP_FAILED, mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd,
					   DATA_OFF(self->page)));
		ASSERT_EQ(EINVAL, errno);
	}
	m = mmap(NULL, p, PROT_READ, MAP_SHARED, self->fd, CTRL_OFF(self->page));
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ((uint64_t)odd, ((struct kmon_mmap_page *)m)->data_size);
	ASSERT_EQ(0, munmap(m, p));
}

/*
 * A data_tail outside the tail and the head is ignored; one inside a
 * record is the reader's to keep, and read() then fails with EIO rather
 * than walk past the head. read() fails with EBUSY while anything is
 * mapped, and goes on from the tail the mapping's reader left.
 */
TEST_F(kmap, bad_tail)
{
	const long p = self->page;
	struct kmon_stats st;
	unsigned char buf[64];

	ASSERT_EQ(0, map_both(self, KMON_BUFFSIZE_DEFAULT));
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, log_records("task 10", 10));
	ASSERT_EQ(0, ioctl(self->fd, KMON_STOP));
	ASSERT_EQ((uint64_t)10 * TEST_REC, head_acquire(self->ctrl));
	/* Past the head, then from far behind: neither moves the tail. */
	tail_release(self->ctrl, 10 * TEST_REC + 1);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ((uint64_t)10 * TEST_REC, st.buffered);
	tail_release(self->ctrl, 2 * TEST_REC);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ((uint64_t)8 * TEST_REC, st.buffered);
	tail_release(self->ctrl, TEST_REC);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ((uint64_t)8 * TEST_REC, st.buffered);
	tail_release(self->ctrl, (uint64_t)-1);
	ASSERT_EQ(0, ioctl(self->fd, KMON_GET_STATS, &st));
	ASSERT_EQ((uint64_t)8 * TEST_REC, st.buffered);
	/* One reader at a time: not read() while the data is mapped. */
	ASSERT_EQ(-1, read(self->fd, buf, sizeof(buf)));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, munmap(self->data, self->data_len));
	self->data = MAP_FAILED;
	/* Nor while the control page is. */
	ASSERT_EQ(-1, read(self->fd, buf, sizeof(buf)));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, munmap(self->ctrl, p));
	self->ctrl = MAP_FAILED;
	/* read() goes on from the tail the mapping's reader left. */
	ASSERT_EQ(TEST_REC, read(self->fd, buf, TEST_REC));
	ASSERT_EQ(2ULL, kmon_le(buf + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
	/* And a mapping made after it finds data_tail where read() left it. */
	self->ctrl = mmap(NULL, p, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, CTRL_OFF(p));
	ASSERT_NE(MAP_FAILED, self->ctrl);
	ASSERT_EQ((uint64_t)3 * TEST_REC, self->ctrl->data_tail);
	/* Five bytes before the head: inside the last record. */
	tail_release(self->ctrl, 10 * TEST_REC - 5);
	ASSERT_EQ(0, munmap(self->ctrl, p));
	self->ctrl = MAP_FAILED;
	ASSERT_EQ(-1, read(self->fd, buf, 4));
	ASSERT_EQ(EIO, errno);
	/* All of it fits: returned as it is, the reader's own doing. */
	ASSERT_EQ(5, read(self->fd, buf, sizeof(buf)));
	ASSERT_EQ(0, read(self->fd, buf, sizeof(buf)));
}

/*
 * KMON_BUFFSIZE fails with EBUSY while any mapping is left: the control
 * page's, the data's, a piece of a split one, a child's copy.
 */
TEST_F(kmap, resize_waits_for_mappings)
{
	long size = 8 * self->page, other = 4 * self->page;
	const long p = self->page;
	int status;
	pid_t pid;

	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(0, map_both(self, size));
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &other));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, munmap(self->ctrl, p));
	self->ctrl = MAP_FAILED;
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &other));
	ASSERT_EQ(EBUSY, errno);
	/* Split in three; unmapped a piece at a time. */
	ASSERT_EQ(0, munmap(self->data + 3 * p, 2 * p));
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &other));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, munmap(self->data, 3 * p));
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &other));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, munmap(self->data + 5 * p, 2 * size - 5 * p));
	self->data = MAP_FAILED;
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &other));
	/* A child's copy of the mapping counts until the child is gone. */
	ASSERT_EQ(0, map_both(self, other));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Its copy outlives the parent's until it is told to go. */
		pause();
		_exit(0);
	}
	ASSERT_EQ(0, munmap(self->ctrl, p));
	self->ctrl = MAP_FAILED;
	ASSERT_EQ(0, munmap(self->data, self->data_len));
	self->data = MAP_FAILED;
	ASSERT_EQ(-1, ioctl(self->fd, KMON_BUFFSIZE, &size));
	ASSERT_EQ(EBUSY, errno);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, ioctl(self->fd, KMON_BUFFSIZE, &size));
}

/* The open instances, as debugfs kmemtrace/kmon counts them. */
static int kmon_open_count(void)
{
	char text[4096], *p;

	if (!kmt_read_text(KMT_KMON_STATE, text, sizeof(text)))
		return -1;
	p = strstr(text, "\nopen ");
	return p ? atoi(p + 6) : -1;
}

/* A read() of an empty started instance, on its own thread. */
struct blocked_read {
	int fd;
	pid_t tid;
	ssize_t ret;
	int err;
};

static void *read_blocked(void *arg)
{
	struct blocked_read *b = arg;
	unsigned char buf[256];

	__atomic_store_n(&b->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	b->ret = read(b->fd, buf, sizeof(buf));
	b->err = errno;
	return NULL;
}

/*
 * A read() waiting for records when the instance gets mapped fails with
 * EBUSY then, not at the next record: none comes here (no class on).
 */
TEST_F(kmap, mapping_ends_a_waiting_read)
{
	struct blocked_read b = { .fd = self->fd };
	struct timespec until;
	pthread_t t;
	int err;

	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, pthread_create(&t, NULL, read_blocked, &b));
	while (!__atomic_load_n(&b.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* Until the reader sleeps in the device (kmt_util.h), at most 5 s. */
	ASSERT_TRUE(kmt_wait_sleeping(b.tid));
	self->ctrl = mmap(NULL, self->page, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
			  CTRL_OFF(self->page));
	ASSERT_NE(MAP_FAILED, self->ctrl) TH_LOG("mmap: %s", strerror(errno));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	err = pthread_timedjoin_np(t, NULL, &until);
	if (err) {
		/* A record ends the read, so that the thread can be joined. */
		log_records("task 1", 1);
		pthread_join(t, NULL);
	}
	ASSERT_EQ(0, err) TH_LOG("read() still waiting 3 s after the mapping");
	ASSERT_EQ(-1, b.ret);
	ASSERT_EQ(EBUSY, b.err);
}

/*
 * The mappings keep the instance after close(): it stays started, its
 * records still come, and it goes once both are unmapped.
 */
TEST_F(kmap, mapping_outlives_close)
{
	int before = kmon_open_count(), tries;
	uint64_t want = 50 * TEST_REC;

	ASSERT_LE(1, before);
	ASSERT_EQ(0, map_both(self, KMON_BUFFSIZE_DEFAULT));
	ASSERT_EQ(0, ioctl(self->fd, KMON_START));
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	ASSERT_EQ(before, kmon_open_count());
	ASSERT_EQ(0, log_records("task 50", 50));
	/* The flush comes within kmon.flush_ms (1 s at most). */
	for (tries = 0; head_acquire(self->ctrl) < want && tries < 300; tries++)
		usleep(10000);
	ASSERT_EQ(want, head_acquire(self->ctrl));
	ASSERT_EQ(49ULL, kmon_le(self->data + 49 * TEST_REC + KMON_HDR_SIZE + KMON_TB_SEQ, 4));
	ASSERT_EQ(0, munmap(self->data, self->data_len));
	self->data = MAP_FAILED;
	ASSERT_EQ(before, kmon_open_count());
	/* The last mapping's end releases the file. */
	ASSERT_EQ(0, munmap(self->ctrl, self->page));
	self->ctrl = MAP_FAILED;
	ASSERT_EQ(before - 1, kmon_open_count());
}

struct race {
	int fd;
	long page;
	bool stop;		/* __atomic: set by the test, read by mapper() */
	unsigned long maps, map_busy, resizes, busy, bad;
};

/*
 * Maps the control page, then the data at the size it says (which
 * cannot change while the control page is mapped), and unmaps both.
 * An mmap() that meets a KMON_BUFFSIZE under way fails with EBUSY.
 */
static void *mapper(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		struct kmon_mmap_page *c;
		long size;
		void *d;

		/* EBUSY: a KMON_BUFFSIZE is under way, as documented. */
		c = mmap(NULL, r->page, PROT_READ, MAP_SHARED, r->fd, CTRL_OFF(r->page));
		if (c == MAP_FAILED) {
			if (errno == EBUSY)
				r->map_busy++;
			else
				r->bad++;
			continue;
		}
		size = c->data_size;
		do
			d = mmap(NULL, 2 * size, PROT_READ, MAP_SHARED, r->fd, DATA_OFF(r->page));
		while (d == MAP_FAILED && errno == EBUSY);
		if (d == MAP_FAILED || ioctl(r->fd, KMON_GET_BUFFSIZE, &size) ||
		    (uint64_t)size != c->data_size)
			r->bad++;
		else
			r->maps++;
		if (d != MAP_FAILED)
			munmap(d, 2 * size);
		munmap(c, r->page);
		/* A window for the resizes. */
		usleep(100);
	}
	return NULL;
}

/* Resizes for 2 s while mapper() maps: each succeeds or gets EBUSY. */
TEST_F(kmap, resize_races_mappings)
{
	struct race r = { .fd = self->fd, .page = self->page };
	time_t end = time(NULL) + 2;
	pthread_t t;
	int i;

	ASSERT_EQ(0, pthread_create(&t, NULL, mapper, &r));
	for (i = 0; time(NULL) <= end; i++) {
		long size = (1 + i % 4) * self->page;

		if (!ioctl(self->fd, KMON_BUFFSIZE, &size))
			r.resizes++;
		else if (errno == EBUSY)
			r.busy++;
		else
			r.bad++;
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(t, NULL));
	TH_LOG("%lu mappings (%lu refused), %lu resizes (%lu refused)", r.maps, r.map_busy,
	       r.resizes, r.busy);
	ASSERT_EQ(0UL, r.bad);
	ASSERT_LT(0UL, r.maps);
	ASSERT_LT(0UL, r.resizes);
}

TEST_HARNESS_MAIN
