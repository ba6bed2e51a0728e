// SPDX-License-Identifier: GPL-2.0
/*
 * kmt_stress - bounded stress tests of kmemtrace's interfaces, run on the
 * test kernel and, longer, on the debug kernel (kernel/configs/
 * kmemtrace_debug.config: KASAN, lockdep, kmemleak), where whatever they
 * shake loose is reported. Each test runs for KMT_STRESS_SECONDS
 * (default 3, at most 60) and then checks that the counters balance:
 *
 *   kmon_churn           threads open, close, start, stop, resize, read
 *                        and poll /dev/kmon at random, on their own
 *                        instances and on one they share, while records
 *                        and allocations are logged; every call returns
 *                        success or an error its documentation allows,
 *                        and afterwards no instance, ring or start is
 *                        left over
 *   kmon_no_silent_loss  two started instances, one with a page-sized
 *                        buffer, take a stream of test records from
 *                        process context and hard interrupts: for each,
 *                        records read + counted lost = records logged
 *   kmonlog_counts       kmonlog with a small buffer, stopped by SIGINT,
 *                        by -t and by -m: the records in its log plus
 *                        the losses it reports (plus what -m cut) are
 *                        every record logged
 *   kmemtrace_toggle     class masks and the enable switch flipped, and
 *                        relay readers attaching and detaching, under an
 *                        allocation storm on both CPUs; then a capture,
 *                        which must miss exactly what the kernel counted
 *   tools_stop           kmemtraced stopped by SIGINT and by -m: the
 *                        capture is complete, missing only what the
 *                        kernel counted lost
 *   tools_bad_outputs    kmonlog and kmemtraced with files they cannot
 *                        write: exit 2 at once, naming the file
 *   hotplug_capture      the last CPU taken offline and back while kmemtraced
 *                        and a /dev/kmon instance capture a storm
 *   alloc_failures       the same interfaces with a share of this task's
 *                        slab and page allocations failing (failslab,
 *                        fail_page_alloc): only -ENOMEM and the usual
 *                        errors, and everything works again after
 *
 * Needs root, debugfs, CONFIG_KMON_SELFTEST and CONFIG_KMEMTRACE_ALLOC_
 * SELFTEST; alloc_failures needs CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_
 * ALLOC with their debugfs files (tools/testing/selftests/kmemtrace/
 * config). Skips, saying why, on a kernel without CONFIG_KMEMTRACE, or
 * one whose /proc/config.gz says an option the test needs is off; fails
 * when a file the config asks for is missing (kmt_util.h). The tools
 * are the ones built beside this test, never ones from PATH. The test
 * records are counted as 17-byte records: CPU numbers below 255.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kmon.h>
#include <linux/ktr.h>

#include "../kselftest_harness.h"
#include "kmon_log.h"
#include "kmt_util.h"
#include "kmon_trigger.h"

#define ALLOC_TRIGGER	KMT_DIR "/alloc_selftest"

static int seconds = 3;
static int stop_flag;

/* Set by the test's main thread, polled by its helper threads. */
static bool stopping(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_RELAXED);
}

static void set_stop(int v)
{
	__atomic_store_n(&stop_flag, v, __ATOMIC_RELAXED);
}

static bool time_up(uint64_t end)
{
	return stopping() || kmt_mono_ns() >= end;
}

static uint64_t deadline(void)
{
	return kmt_mono_ns() + seconds * 1000000000ULL;
}

/* A cheap per-thread random number. */
static unsigned int rnd(unsigned int *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/*
 * Logs @n test records through the trigger ("task N", "irq N") and adds
 * to *@logged (if not NULL) how many the kernel says it logged: those
 * the rings refused are not. 0 or -errno.
 */
static int trigger_logged(const char *mode, unsigned int n, unsigned long long *logged)
{
	struct kmon_trigger_result r;
	char cmd[32];
	int ret;

	snprintf(cmd, sizeof(cmd), "%s %u", mode, n);
	ret = kmon_trigger(cmd, &r);
	if (ret)
		return ret;
	if (r.n != n)
		return -EIO;
	if (logged)
		*logged += r.logged;
	return 0;
}

static int trigger(const char *mode, unsigned int n)
{
	return trigger_logged(mode, n, NULL);
}

/*
 * Waits a little for the rings and instances to go: the rings are freed
 * by the last close, which a helper thread or child of the test may be
 * finishing, and the instances after an RCU grace period.
 */
static void settle(void)
{
	int i;

	for (i = 0; i < 100 &&
	     (kmt_kmon_state("rings") > 0 || kmt_kmon_state("instances") > 0); i++)
		usleep(20000);
}

/* ---- kmon_churn ----------------------------------------------------- */

#define CHURN_THREADS	4
/*
 * Operations each churn thread makes at least, past its deadline if it
 * must: on a loaded or emulated machine with many CPUs, the seconds may
 * not be enough. The test's claim is about what the operations return
 * (no unexpected error) and leave (a balanced state), not how many.
 */
#define CHURN_MIN_OPS	50ULL
#define CHURN_FDS	4

struct churn {
	pthread_t thread;
	unsigned int seed;
	int shared;
	unsigned long long ops, errors;
	char bad[160];
};

/* Whether @err is an error @op may return on a valid descriptor. */
static bool allowed(const char *op, int err)
{
	if (err == ENOMEM)
		return true;
	if (!strcmp(op, "start") || !strcmp(op, "stop"))
		return err == EALREADY;
	if (!strcmp(op, "buffsize"))
		return err == EBUSY || err == EINVAL;
	if (!strcmp(op, "read"))
		return err == EAGAIN || err == EINVAL;
	if (!strcmp(op, "classes"))
		return err == EINVAL;
	return false;
}

static void churn_check(struct churn *c, const char *op, long ret)
{
	c->ops++;
	if (ret >= 0 || allowed(op, errno))
		return;
	if (!c->errors++)
		snprintf(c->bad, sizeof(c->bad), "%s: %s", op, strerror(errno));
}

static const uint64_t churn_classes[] = { 0, 1ULL << KTR_BIT_KMALLOC, 1ULL << 63 };

static void churn_op(struct churn *c, int fd, char *buf)
{
	static const long sizes[] = { 4096, 65536, 1 << 20, 0, -1, 4095, LONG_MAX };
	struct kmon_stats st;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t classes;

	switch (rnd(&c->seed) % 8) {
	case 0:
		churn_check(c, "start", ioctl(fd, KMON_START));
		break;
	case 1:
		churn_check(c, "stop", ioctl(fd, KMON_STOP));
		break;
	case 2: {
		long size = sizes[rnd(&c->seed) % 7];

		churn_check(c, "buffsize", ioctl(fd, KMON_BUFFSIZE, &size));
		break;
	}
	case 3:
		/* No class, kmalloc, or a class kmon has no source for. */
		classes = churn_classes[rnd(&c->seed) % 3];
		churn_check(c, "classes", ioctl(fd, KMON_SET_CLASSES, &classes));
		break;
	case 4:
		churn_check(c, "stats", ioctl(fd, KMON_GET_STATS, &st));
		break;
	case 5:
		churn_check(c, "poll", poll(&p, 1, 0));
		break;
	default:
		churn_check(c, "read", read(fd, buf, rnd(&c->seed) % 65536));
		break;
	}
}

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	int fds[CHURN_FDS], i;
	uint64_t end = deadline();
	char *buf = malloc(65536);

	for (i = 0; i < CHURN_FDS; i++)
		fds[i] = -1;
	while (buf && (!time_up(end) || c->ops < CHURN_MIN_OPS)) {
		i = rnd(&c->seed) % (CHURN_FDS + 2);
		if (i >= CHURN_FDS) {
			/* The shared instance, raced with the other threads. */
			churn_op(c, c->shared, buf);
		} else if (fds[i] < 0) {
			fds[i] = open(KMON_DEV, O_RDONLY | O_NONBLOCK);
			churn_check(c, "open", fds[i]);
		} else if (rnd(&c->seed) % 16 == 0) {
			churn_check(c, "close", close(fds[i]));
			fds[i] = -1;
		} else {
			churn_op(c, fds[i], buf);
		}
	}
	for (i = 0; i < CHURN_FDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(buf);
	return NULL;
}

/* Records and allocations for the churn to carry, until told to stop. */
static void *source_thread(void *arg)
{
	unsigned long long *n = arg;

	while (!stopping()) {
		if (!trigger("task", 200))
			(*n)++;
		if (!kmt_write_str(ALLOC_TRIGGER, "storm 500"))
			(*n)++;
	}
	return NULL;
}

FIXTURE(stress) {
	char dir[32];
	char enable[8];
	char mask[32];
};

FIXTURE_SETUP(stress)
{
	set_stop(0);
	self->dir[0] = '\0';
	KMT_NEED_KMEMTRACE();
	KMT_REQUIRE(KMON_DEV, "CONFIG_KMON");
	KMT_REQUIRE(KMON_TRIGGER, "CONFIG_KMON_SELFTEST");
	KMT_REQUIRE(ALLOC_TRIGGER, "CONFIG_KMEMTRACE_ALLOC_SELFTEST");
	ASSERT_TRUE(!!kmt_read_text(KMT_DIR "/enable", self->enable, sizeof(self->enable)));
	ASSERT_TRUE(!!kmt_read_text(KMT_DIR "/mask", self->mask, sizeof(self->mask)));
	/* Every allocator, whatever a test that stopped half-way left. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", KMT_MASK_ALL));
	snprintf(self->dir, sizeof(self->dir), "/tmp/kmt_stress.XXXXXX");
	ASSERT_TRUE(!!mkdtemp(self->dir));
	/* Nothing of an earlier test is open. */
	settle();
	ASSERT_EQ(0, kmt_kmon_state("open"));
}

/*
 * The online file of the CPU a hotplug test takes offline: the teardown
 * brings it back should the test stop half-way.
 */
static char hotplug_online[64];

FIXTURE_TEARDOWN(stress)
{
	set_stop(1);
	/* alloc_failures' settings, should it have stopped half-way. */
	kmt_write_str("/sys/kernel/debug/failslab/probability", "0");
	kmt_write_str("/sys/kernel/debug/fail_page_alloc/probability", "0");
	if (hotplug_online[0] && !access(hotplug_online, W_OK))
		kmt_write_str(hotplug_online, "1");
	kmt_write_str(KMT_DIR "/mask", self->mask);
	kmt_write_str(KMT_DIR "/enable", self->enable);
	if (self->dir[0])
		kmt_run("rm -rf %s", self->dir);
}

/* After a test: no instance open, started or left unfreed, rings freed. */
static void expect_balanced(struct __test_metadata *_metadata)
{
	settle();
	EXPECT_EQ(0, kmt_kmon_state("open"));
	EXPECT_EQ(0, kmt_kmon_state("started"));
	EXPECT_EQ(0, kmt_kmon_state("rings"));
	EXPECT_EQ(0, kmt_kmon_state("instances"));
	EXPECT_EQ(kmt_kmon_state("rings_allocated"), kmt_kmon_state("rings_freed"));
}

TEST_F_TIMEOUT(stress, kmon_churn, 300)
{
	struct churn c[CHURN_THREADS] = {};
	unsigned long long ops = 0, sources = 0;
	pthread_t src;
	int shared, i;

	shared = open(KMON_DEV, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, shared);
	ASSERT_EQ(0, pthread_create(&src, NULL, source_thread, &sources));
	for (i = 0; i < CHURN_THREADS; i++) {
		c[i].seed = 0x9e3779b9u * (i + 1);
		c[i].shared = shared;
		ASSERT_EQ(0, pthread_create(&c[i].thread, NULL, churn_thread, &c[i]));
	}
	for (i = 0; i < CHURN_THREADS; i++) {
		pthread_join(c[i].thread, NULL);
		ops += c[i].ops;
		EXPECT_EQ(0ULL, c[i].errors)
			TH_LOG("thread %d: first unexpected error %s", i, c[i].bad);
	}
	set_stop(1);
	pthread_join(src, NULL);
	close(shared);
	TH_LOG("%llu /dev/kmon operations by %d threads in %d s, %llu trigger writes meanwhile",
	       ops, CHURN_THREADS, seconds, sources);
	EXPECT_LT(0ULL, sources);
	expect_balanced(_metadata);
}

/* ---- kmon_no_silent_loss --------------------------------------------- */

struct reader {
	pthread_t thread;
	int fd;
	unsigned long long records, other;
	bool bad;
};

/* Counts the test records in @len bytes of whole records. */
static void count_records(struct reader *r, const unsigned char *buf, size_t len)
{
	size_t off = 0;

	while (off + KMON_HDR_SIZE <= len) {
		size_t hl = kmon_hdr_len(buf + off), bl = kmon_blob_len(buf + off);

		if (!bl || off + hl + bl > len) {
			r->bad = true;
			return;
		}
		if (buf[off + hl] == KMON_DT_TEST && bl == 6)
			r->records++;
		else
			r->other++;
		off += hl + bl;
	}
	if (off != len)
		r->bad = true;
}

/* Reads until the instance is stopped and empty. */
static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(1 << 20);
	struct pollfd p = { .fd = r->fd, .events = POLLIN };
	struct kmon_stats st;
	ssize_t n;

	while (buf) {
		n = read(r->fd, buf, 1 << 20);
		if (n > 0) {
			count_records(r, buf, n);
			continue;
		}
		if (n < 0 && errno != EAGAIN) {
			r->bad = true;
			break;
		}
		if (ioctl(r->fd, KMON_GET_STATS, &st) || (!st.started && !st.buffered))
			break;
		poll(&p, 1, 10);
	}
	free(buf);
	return NULL;
}

/*
 * A started instance with a buffer of @size bytes and no class (the
 * trigger's records only); -1, saying which step failed, if not.
 */
static int start_instance(long size)
{
	uint64_t none = 0;
	const char *step = "open";
	int fd = open(KMON_DEV, O_RDONLY | O_NONBLOCK), err;

	if (fd < 0)
		goto fail;
	step = "KMON_SET_CLASSES";
	if (ioctl(fd, KMON_SET_CLASSES, &none))
		goto fail;
	step = "KMON_BUFFSIZE";
	if (ioctl(fd, KMON_BUFFSIZE, &size))
		goto fail;
	step = "KMON_START";
	if (ioctl(fd, KMON_START))
		goto fail;
	return fd;
fail:
	err = errno;
	ksft_print_msg("%s(%ld): %s: %s\n", __func__, size, step, strerror(err));
	if (fd >= 0)
		close(fd);
	return -1;
}

TEST_F_TIMEOUT(stress, kmon_no_silent_loss, 300)
{
	long sizes[2] = { 4096, 4 << 20 };
	struct reader r[2] = {};
	unsigned long long logged = 0, klogged = 0, writes = 0;
	uint64_t end;
	int i;

	for (i = 0; i < 2; i++) {
		r[i].fd = start_instance(sizes[i]);
		ASSERT_LE(0, r[i].fd);
		ASSERT_EQ(0, pthread_create(&r[i].thread, NULL, reader_thread, &r[i]));
	}
	end = deadline();
	while (!time_up(end)) {
		/* Bursts of process-context records, and a hard interrupt's. */
		ASSERT_EQ(0, trigger_logged("task", 2000, &klogged));
		ASSERT_EQ(0, trigger_logged("irq", 100, &klogged));
		logged += 2100;
		writes += 2;
	}
	for (i = 0; i < 2; i++) {
		struct kmon_stats st;

		ASSERT_EQ(0, ioctl(r[i].fd, KMON_STOP));
		pthread_join(r[i].thread, NULL);
		ASSERT_EQ(0, ioctl(r[i].fd, KMON_GET_STATS, &st));
		EXPECT_FALSE(r[i].bad) TH_LOG("instance %d: a malformed read", i);
		EXPECT_EQ(0ULL, r[i].other) TH_LOG("instance %d: records not asked for", i);
		/*
		 * Asked for = logged by the kernel + refused by the rings,
		 * and logged = read + lost in the instance's buffer: each
		 * count the kernel's own, each balance exact.
		 */
		EXPECT_EQ(logged, klogged + st.ring_overruns);
		EXPECT_EQ(klogged, r[i].records + st.overruns);
		EXPECT_EQ(logged, r[i].records + st.overruns + st.ring_overruns)
			TH_LOG("instance %d (%ld bytes): %llu logged, %llu read, %llu %s, %llu %s",
			       i, sizes[i], logged, r[i].records,
			       (unsigned long long)st.overruns, "lost in the buffer",
			       (unsigned long long)st.ring_overruns, "refused by the rings");
		TH_LOG("instance %d (%ld bytes): %llu records logged, %llu read, %llu %s, %llu %s",
		       i, sizes[i], logged, r[i].records, (unsigned long long)st.overruns,
		       "lost in the buffer", (unsigned long long)st.ring_overruns,
		       "refused by the rings");
		close(r[i].fd);
	}
	EXPECT_LT(0ULL, writes);
	expect_balanced(_metadata);
}

/* ---- kmonlog_counts --------------------------------------------------- */

/*
 * Counts the records of a kmon log, and its size in *@size; false if it
 * cannot be read or is malformed.
 */
static bool log_records(const char *path, struct reader *r, size_t *size)
{
	unsigned char *buf = (unsigned char *)kmt_read_file(path, size);

	memset(r, 0, sizeof(*r));
	if (!buf)
		return false;
	count_records(r, buf, *size);
	free(buf);
	return !r->bad;
}

/*
 * kmonlog's report on standard error: "kmonlog: W bytes in T s, N records
 * received; lost: B (buffer full), R (refused by the rings)" and, with
 * -m, "C records (...) past -m M not written". False without the first.
 */
static bool kmonlog_report(const char *errfile, unsigned long long *written,
			   unsigned long long *received, unsigned long long *lost,
			   unsigned long long *cut)
{
	char line[512], *p;
	unsigned long long b, rr, n;
	bool found = false;
	FILE *f = fopen(errfile, "r");

	*cut = 0;
	*written = ~0ULL;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long w;
		int end = 0;

		/* "%n" is reached only if all of "W bytes in " matched. */
		if (sscanf(line, "%*[^:]: %llu bytes in %n", &w, &end) == 1 && end)
			*written = w;
		p = strstr(line, " s, ");
		/* Into @n first: the CPU time line has " s, " too, then no count. */
		if (p && sscanf(p, " s, %llu records received; lost: %llu (buffer full), %llu",
				&n, &b, &rr) == 3) {
			*received = n;
			*lost = b + rr;
			found = true;
		}
		p = strchr(line, ':');
		if (p && strstr(line, " past -m "))
			sscanf(p + 1, " %llu records", cut);
	}
	fclose(f);
	return found;
}

/*
 * Runs kmonlog (kmalloc events and the trigger's test records) with
 * @args, and -m @max if not 0, while 100000 test records are logged,
 * stopping it with SIGINT if @sigint: everything the kernel delivered
 * is in the log or past -m, the log is as long as kmonlog says, and
 * with -m holds whole records up to the limit and no more, the loss it
 * reports is the kernel's, and no test record is unaccounted for.
 */
static void kmonlog_run(struct __test_metadata *_metadata, const char *dir, const char *how,
			const char *args, unsigned long long max, bool sigint)
{
	char bin[PATH_MAX], out[PATH_MAX], err[PATH_MAX], pids[PATH_MAX], m[32] = "";
	unsigned long long logged = 0, written, received, lost, cut;
	struct reader r;
	int status, i;
	size_t size;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/%s.log", dir, how);
	snprintf(err, sizeof(err), "%s/%s.err", dir, how);
	snprintf(pids, sizeof(pids), "%s/%s.pids", dir, how);
	KMT_TOOL(bin, "kmonlog");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char cmd[PATH_MAX * 5];

		if (max)
			snprintf(m, sizeof(m), "-m %llu", max);
		snprintf(cmd, sizeof(cmd), "exec %s --classes=kmalloc %s %s -o %s -p %s 2>%s", bin,
			 args, m, out, pids, err);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* Started: the trigger's records reach it. */
	for (i = 0; i < 500 && kmt_kmon_state("started") < 1; i++)
		usleep(10000);
	ASSERT_LT(0, kmt_kmon_state("started"));
	/* What the kernel logged; what the rings refused it counts lost. */
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, trigger_logged("task", 5000, &logged));
	/*
	 * A -t capture must still be running, or it missed some; a -m one
	 * stops by itself, after reading the records in the device.
	 */
	if (!max)
		ASSERT_LT(0, kmt_kmon_state("started"))
			TH_LOG("kmonlog %s stopped before the records were logged", how);
	if (sigint)
		ASSERT_EQ(0, kill(pid, SIGINT));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_TRUE(log_records(out, &r, &size)) TH_LOG("kmonlog %s: a malformed log", how);
	ASSERT_TRUE(kmonlog_report(err, &written, &received, &lost, &cut))
		TH_LOG("kmonlog %s: no report (exit %d)", how, WEXITSTATUS(status));
	TH_LOG("kmonlog %s: %llu test records logged; %llu of them and %llu others in the log, %s",
	       how, logged, r.records, r.other, "");
	TH_LOG("kmonlog %s: %llu past -m; kmonlog received %llu, reported %llu lost", how, cut,
	       received, lost);
	/* What kmonlog read is all written (or counted past -m). */
	EXPECT_EQ(received, r.records + r.other + cut);
	EXPECT_EQ(written, (unsigned long long)size) TH_LOG("kmonlog %s: the log's size", how);
	/* Its exit status says whether the kernel lost records. */
	EXPECT_EQ(lost ? KMT_EXIT_DATA : KMT_EXIT_OK, WEXITSTATUS(status));
	/* No test record is missing unless the loss counts cover it. */
	EXPECT_GE(logged, r.records);
	if (!max) {
		EXPECT_EQ(0ULL, cut) TH_LOG("kmonlog %s: records cut without -m", how);
		EXPECT_LE(logged, r.records + lost);
		if (!lost)
			EXPECT_EQ(logged, r.records);
	} else {
		/*
		 * The limit: at most @max bytes, and whole records up to it,
		 * the first one that did not fit and those after it cut.
		 */
		EXPECT_LT(0ULL, cut) TH_LOG("-m %llu cut nothing", max);
		EXPECT_GE(max, (unsigned long long)size)
			TH_LOG("-m %llu: a log of %zu bytes", max, size);
		EXPECT_LT(max, (unsigned long long)size + KMON_RECORD_MAX)
			TH_LOG("-m %llu: a log of %zu bytes stops short of the limit", max, size);
	}
}

TEST_F_TIMEOUT(stress, kmonlog_counts, 300)
{
	/* Stopped by a signal, by its duration and by its byte limit. */
	kmonlog_run(_metadata, self->dir, "sigint-4k", "-b 4k", 0, true);
	kmonlog_run(_metadata, self->dir, "sigint-8M", "-b 8M", 0, true);
	kmonlog_run(_metadata, self->dir, "duration", "-b 8M -t 10000", 0, false);
	kmonlog_run(_metadata, self->dir, "bytes", "-b 8M", 100000, false);
	expect_balanced(_metadata);
}

/* ---- kmemtrace_toggle ------------------------------------------------- */

/* The storms the trigger took since start_storms(): the stress was real. */
static unsigned long long storm_runs;

static void *storm_thread(void *arg)
{
	long cpu = (long)arg;
	size_t size = CPU_ALLOC_SIZE(cpu + 1);
	cpu_set_t *set = CPU_ALLOC(cpu + 1);

	if (!set)
		return NULL;
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	while (!stopping()) {
		/*
		 * Again each time: taking the CPU offline widened this
		 * thread's affinity for good. (It fails while the CPU is
		 * offline: the storm then runs anywhere.)
		 */
		sched_setaffinity(0, size, set);
		if (!kmt_write_str(ALLOC_TRIGGER, "storm 2000"))
			__atomic_add_fetch(&storm_runs, 1, __ATOMIC_RELAXED);
	}
	CPU_FREE(set);
	return NULL;
}

/* Relay readers that attach, read a little, and detach. */
static void *relay_reader_thread(void *arg)
{
	unsigned long long *n = arg;
	unsigned int seed = 12345;
	char path[64], buf[8192];
	int fd;

	while (!stopping()) {
		snprintf(path, sizeof(path), KMT_DIR "/cpu%u", rnd(&seed) % 2);
		fd = open(path, O_RDONLY | O_NONBLOCK);
		if (fd < 0) {
			usleep(1000);
			continue;
		}
		read(fd, buf, rnd(&seed) % sizeof(buf));
		close(fd);
		(*n)++;
	}
	return NULL;
}

/* Starts CPU storms; returns how many threads it started. */
static int start_storms(pthread_t *t)
{
	char online[64];
	long cpus[2] = { 0, kmt_hotplug_cpu(online, sizeof(online)) };
	int n = 0, i;

	/* CPU 0 and the one the hotplug test takes offline (1 of 2, 63 of 64). */
	if (cpus[1] < 1)
		cpus[1] = 1;
	set_stop(0);
	__atomic_store_n(&storm_runs, 0, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		if (!pthread_create(&t[n], NULL, storm_thread, (void *)cpus[i]))
			n++;
	return n;
}

/*
 * Stops the @n storms of start_storms() (and any other helper thread
 * watching stopping()): the trigger took some, or there was no storm.
 */
static void stop_storms(struct __test_metadata *_metadata, pthread_t *t, int n)
{
	set_stop(1);
	while (n-- > 0)
		pthread_join(t[n], NULL);
	EXPECT_LT(0ULL, __atomic_load_n(&storm_runs, __ATOMIC_RELAXED))
		TH_LOG("the allocation storms never ran: %s refused them all", ALLOC_TRIGGER);
}

/* kmemtrace-check's verdict on a capture whose events were all accounted for. */
#define COMPLETE_RE "^capture complete: .*, \\([0-9]*\\) missing, kernel lost \\1$"

/*
 * kmemtraced's and kmemtrace-check's exit status for a capture under a
 * storm: done and whole, or done with events lost and counted (kmt_cli.h);
 * not a usage or I/O error, not a corrupt capture, not a crash.
 */
static bool clean_or_lossy(int rc)
{
	return rc == KMT_EXIT_OK || rc == KMT_EXIT_DATA;
}

/*
 * kmemtrace-check on the capture DIR/NAME: CLEAN with exit 0, or LOSSY
 * with exit 1 and missing exactly the events the kernel counted lost;
 * the verdict and the exit status agree. On a failure, what the check
 * and kmemtraced (DIR/NAME.out) said, and the capture's meta.
 */
static void expect_accounted(struct __test_metadata *_metadata, const char *dir,
			     const char *name)
{
	char chk[PATH_MAX], out[PATH_MAX], show[3 * PATH_MAX];
	int rc;

	KMT_TOOL(chk, "kmemtrace-check");
	snprintf(out, sizeof(out), "%s/%s.check", dir, name);
	snprintf(show, sizeof(show), "cat %s %s/%s.out %s/%s/meta >&2", out, dir, name, dir, name);
	rc = kmt_run("%s %s/%s > %s 2>&1", chk, dir, name, out);
	if (rc == KMT_EXIT_OK) {
		EXPECT_EQ(0, kmt_run("grep -qx CLEAN %s", out)) kmt_run("%s", show);
	} else if (rc == KMT_EXIT_DATA) {
		EXPECT_EQ(0, kmt_run("grep -q '^LOSSY: ' %s", out)) kmt_run("%s", show);
		EXPECT_EQ(0, kmt_run("grep -q '" COMPLETE_RE "' %s", out))
			kmt_run("%s", show);
	} else {
		EXPECT_TRUE(clean_or_lossy(rc)) {
			TH_LOG("kmemtrace-check %s/%s: exit %d", dir, name, rc);
			kmt_run("%s", show);
		}
	}
}

/* A capture of @secs s by kmemtraced, checked by expect_accounted(). */
static void checked_capture(struct __test_metadata *_metadata, const char *dir,
			    const char *name, const char *secs)
{
	char bin[PATH_MAX];
	int rc;

	KMT_TOOL(bin, "kmemtraced");
	rc = kmt_run("%s -e -q -t %s -o %s/%s > %s/%s.out 2>&1", bin, secs, dir, name, dir, name);
	EXPECT_TRUE(clean_or_lossy(rc)) TH_LOG("kmemtraced: exit %d", rc);
	expect_accounted(_metadata, dir, name);
}

TEST_F_TIMEOUT(stress, kmemtrace_toggle, 300)
{
	static const char *const masks[] = { "0x10000", "0x70000", "0x40000", "0x1", "zz", "" };
	unsigned long long toggles = 0, attaches = 0, refused = 0;
	pthread_t storms[2], reader;
	unsigned int seed = 777;
	int nstorms, ret;
	uint64_t end;

	nstorms = start_storms(storms);
	ASSERT_LT(0, nstorms);
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	ASSERT_EQ(0, pthread_create(&reader, NULL, relay_reader_thread, &attaches));
	end = deadline();
	while (!time_up(end)) {
		const char *m = masks[rnd(&seed) % 6];

		bool bad = !strcmp(m, "zz") || !strcmp(m, "0x1") || !m[0];

		ret = kmt_write_str(KMT_DIR "/mask", m);
		/* The bad masks are refused with EINVAL; the good ones taken. */
		if (ret)
			refused++;
		EXPECT_EQ(bad ? -EINVAL : 0, ret) TH_LOG("mask \"%s\"", m);
		ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", rnd(&seed) & 1 ? "1" : "0"));
		toggles++;
	}
	stop_storms(_metadata, storms, nstorms);
	pthread_join(reader, NULL);
	TH_LOG("%llu mask and enable writes (%llu bad masks refused), %llu relay attaches",
	       toggles, refused, attaches);
	EXPECT_LT(0ULL, refused);
	EXPECT_LT(0ULL, attaches);
	/* Each write of 0 waits for RCU: a second or so on a debug kernel. */
	EXPECT_LE(2ULL, toggles);

	/*
	 * Then a capture of a storm, which must account for every event.
	 * The readers above stopped mid-event (relay's files are byte
	 * streams, read from one position per CPU): the next reader would
	 * start there, until the next sub-buffer. Stopped, the buffers are
	 * read to their end first, as kmemtraced's users do.
	 */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	ASSERT_LE(0, kmt_drain_relay());
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x70000"));
	nstorms = start_storms(storms);
	ASSERT_LT(0, nstorms);
	checked_capture(_metadata, self->dir, "after", "2");
	stop_storms(_metadata, storms, nstorms);
}

/* ---- tools_stop ---------------------------------------------------------- */

/* "total: N events, B bytes" of kmemtraced's report @path; false if none. */
static bool kmemtraced_total(const char *path, unsigned long long *events,
			     unsigned long long *bytes)
{
	char line[256];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "total: %llu events, %llu bytes", events, bytes) == 2)
			found = true;
	fclose(f);
	return found;
}

/*
 * kmemtraced -e under a storm, stopped by SIGINT after half the test's
 * time, and by -m 1M: either way it reads what the buffers hold before
 * it exits, so that kmemtrace-check finds the capture complete, missing
 * nothing but what the kernel counted lost. (-t is kmemtrace_toggle's.)
 */
TEST_F_TIMEOUT(stress, tools_stop, 300)
{
	unsigned long long events, bytes;
	char bin[PATH_MAX], o[PATH_MAX], l[PATH_MAX];
	pthread_t storms[2];
	int nstorms, status, i;
	pid_t pid;

	KMT_TOOL(bin, "kmemtraced");
	nstorms = start_storms(storms);
	ASSERT_LT(0, nstorms);
	snprintf(o, sizeof(o), "%s/sigint", self->dir);
	snprintf(l, sizeof(l), "%s/sigint.out", self->dir);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (!freopen(l, "w", stdout) || dup2(1, 2) < 0)
			_exit(127);
		execl(bin, bin, "-e", "-q", "-o", o, (char *)NULL);
		_exit(127);
	}
	usleep(seconds * 500000);
	ASSERT_EQ(0, kill(pid, SIGINT));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_TRUE(clean_or_lossy(WEXITSTATUS(status))) TH_LOG("SIGINT: exit %d", status);
	ASSERT_TRUE(kmemtraced_total(l, &events, &bytes)) kmt_run("cat %s >&2", l);
	EXPECT_LT(0ULL, events);
	TH_LOG("kmemtraced stopped by SIGINT: %llu events, %llu bytes", events, bytes);
	expect_accounted(_metadata, self->dir, "sigint");

	i = kmt_run("%s -e -q -m 1M -o %s/bytes > %s/bytes.out 2>&1", bin, self->dir, self->dir);
	EXPECT_TRUE(clean_or_lossy(i)) TH_LOG("-m 1M: exit %d", i);
	snprintf(l, sizeof(l), "%s/bytes.out", self->dir);
	ASSERT_TRUE(kmemtraced_total(l, &events, &bytes)) kmt_run("cat %s >&2", l);
	EXPECT_LE(1ULL << 20, bytes);
	TH_LOG("kmemtraced -m 1M: %llu events, %llu bytes", events, bytes);
	expect_accounted(_metadata, self->dir, "bytes");
	stop_storms(_metadata, storms, nstorms);
}

/*
 * kmonlog with an output or pids file it cannot write, kmemtraced with
 * a directory it cannot make: an I/O error (KMT_EXIT_USAGE, 2), naming
 * the file, before a capture of 100 s; the output on a full disk: the
 * same. The device is left closed.
 */
TEST_F_TIMEOUT(stress, tools_bad_outputs, 120)
{
	char bin[PATH_MAX], d[PATH_MAX];
	uint64_t t0 = kmt_mono_ns();
	int rc, i, status;
	pid_t pid;

	KMT_TOOL(bin, "kmonlog");
	rc = kmt_run("%s -t 100000 -o /nonexistent/log 2>%s/o.err", bin, self->dir);
	EXPECT_EQ(KMT_EXIT_USAGE, rc);
	EXPECT_EQ(0, kmt_run("grep -q '/nonexistent/log: No such file' %s/o.err", self->dir));
	rc = kmt_run("%s -t 100000 -o %s/p.log -p /nonexistent/pids 2>%s/p.err", bin, self->dir,
		     self->dir);
	EXPECT_EQ(KMT_EXIT_USAGE, rc);
	EXPECT_EQ(0, kmt_run("grep -q '/nonexistent/pids: No such file' %s/p.err", self->dir));
	/* Refused at the start, not after the 100 s. */
	EXPECT_GT(60ULL * 1000000000, kmt_mono_ns() - t0);
	/* The trigger's records reach the log: its writes fail. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char cmd[PATH_MAX * 2];

		snprintf(cmd, sizeof(cmd), "exec %s -t 5000 -o /dev/full 2>%s/full.err", bin,
			 self->dir);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 500 && kmt_kmon_state("started") < 1; i++)
		usleep(10000);
	ASSERT_LT(0, kmt_kmon_state("started"));
	ASSERT_EQ(0, trigger("task", 5000));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(KMT_EXIT_USAGE, WEXITSTATUS(status));
	EXPECT_EQ(0, kmt_run("grep -q '/dev/full: No space left' %s/full.err", self->dir))
		kmt_run("cat %s/full.err >&2", self->dir);

	KMT_TOOL(d, "kmemtraced");
	rc = kmt_run("%s -e -q -t 100 -o /proc/kmt 2>%s/d.err >&2", d, self->dir);
	EXPECT_EQ(KMT_EXIT_USAGE, rc);
	EXPECT_EQ(0, kmt_run("grep -q '/proc/kmt: ' %s/d.err", self->dir));
	/* kmemtraced -e turned nothing on that it left on. */
	ASSERT_TRUE(!!kmt_read_text(KMT_DIR "/enable", d, sizeof(d)));
	EXPECT_STREQ(self->enable, d);
	expect_balanced(_metadata);
}

/* ---- hotplug_capture ---------------------------------------------------- */

TEST_F_TIMEOUT(stress, hotplug_capture, 300)
{
	unsigned long long cycles = 0;
	struct reader r = {};
	pthread_t storms[2];
	int nstorms, status, i;
	uint64_t end;
	char online[64];
	int cpu = kmt_hotplug_cpu(online, sizeof(online));

	ASSERT_LE(0, cpu) TH_LOG("/sys/devices/system/cpu/online: unreadable");
	if (!cpu)
		SKIP(return, "one CPU: none but CPU 0 to take offline");
	KMT_REQUIRE(online, "CONFIG_HOTPLUG_CPU");
	snprintf(hotplug_online, sizeof(hotplug_online), "%s", online);
	r.fd = start_instance(4 << 20);
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, reader_thread, &r));
	nstorms = start_storms(storms);
	ASSERT_LT(0, nstorms);
	end = deadline();
	while (!time_up(end)) {
		ASSERT_EQ(0, kmt_write_str(online, "0"));
		ASSERT_EQ(0, trigger("task", 500));
		usleep(100000);
		ASSERT_EQ(0, kmt_write_str(online, "1"));
		ASSERT_EQ(0, trigger("task", 500));
		usleep(100000);
		cycles++;
	}
	/* A kmemtrace capture across more of the same. */
	{
		char bin[PATH_MAX];
		pid_t pid;

		KMT_TOOL(bin, "kmemtraced");
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			char o[PATH_MAX], l[PATH_MAX];

			snprintf(o, sizeof(o), "%s/hp", self->dir);
			snprintf(l, sizeof(l), "%s/hp.out", self->dir);
			if (!freopen(l, "w", stdout) || dup2(1, 2) < 0)
				_exit(127);
			execl(bin, bin, "-e", "-q", "-t", "3", "-o", o, (char *)NULL);
			_exit(127);
		}
		for (i = 0; i < 6; i++) {
			usleep(200000);
			ASSERT_EQ(0, kmt_write_str(online, i & 1 ? "1" : "0"));
		}
		ASSERT_EQ(0, kmt_write_str(online, "1"));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_TRUE(clean_or_lossy(WEXITSTATUS(status)))
			TH_LOG("kmemtraced: exit %d", WEXITSTATUS(status));
	}
	stop_storms(_metadata, storms, nstorms);
	ASSERT_EQ(0, ioctl(r.fd, KMON_STOP));
	pthread_join(r.thread, NULL);
	{
		struct kmon_stats st;

		ASSERT_EQ(0, ioctl(r.fd, KMON_GET_STATS, &st));
		EXPECT_FALSE(r.bad);
		/* Every test record logged is read or counted lost. */
		EXPECT_EQ(cycles * 1000, r.records + st.overruns + st.ring_overruns)
			TH_LOG("%llu read, %llu + %llu lost", r.records,
			       (unsigned long long)st.overruns,
			       (unsigned long long)st.ring_overruns);
		close(r.fd);
		expect_accounted(_metadata, self->dir, "hp");
	}
	TH_LOG("%llu offline/online cycles of CPU %d under a storm and a kmon capture",
	       cycles, cpu);
	EXPECT_LT(0ULL, cycles);
	expect_balanced(_metadata);
}

/* ---- alloc_failures ----------------------------------------------------- */

#define FAILSLAB	"/sys/kernel/debug/failslab"
#define FAILPAGE	"/sys/kernel/debug/fail_page_alloc"

/*
 * Sets the failslab attribute of every kmalloc cache; 0 if all took it,
 * -1 without /sys/kernel/slab's failslab files (CONFIG_SLUB_DEBUG=n).
 */
static int slab_failslab(const char *v)
{
	char path[PATH_MAX];
	struct dirent *d;
	int ret = -1;
	DIR *dir = opendir("/sys/kernel/slab");

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, "kmalloc-", 8)) {
			snprintf(path, sizeof(path), "/sys/kernel/slab/%s/failslab", d->d_name);
			if (kmt_write_str(path, v)) {
				ret = -1;
				break;
			}
			ret = 0;
		}
	closedir(dir);
	return ret;
}

/* Writes @val to @dir/@name: 0, or -1 saying which write failed. */
static int fault_set(const char *dir, const char *name, const char *val)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ret = kmt_write_str(path, val);
	if (ret)
		ksft_print_msg("%s \"%s\": %s\n", path, val, strerror(-ret));
	return ret ? -1 : 0;
}

/*
 * The fault injection of @dir (failslab, fail_page_alloc) for this task
 * at @prob percent; with @cache_filter, slab caches marked by
 * slab_failslab() only. 0, or -1 saying which write failed.
 */
static int fault_setup(const char *dir, const char *prob, bool cache_filter)
{
	char path[128];
	/*
	 * Sleeping allocations fail too. Page allocations of order 1 and
	 * up only (fail_page_alloc's default), and with @cache_filter slab
	 * allocations from the caches marked by slab_failslab() only: not
	 * kmemleak's own caches, of order 0, whose failure it reports with
	 * printk() under an object's raw spinlock, which lockdep rightly
	 * objects to when the console wakes a task.
	 */
	static const char *const keys[][2] = {
		{ "interval", "1" }, { "times", "-1" }, { "space", "0" }, { "verbose", "0" },
		{ "task-filter", "Y" }, { "ignore-gfp-wait", "N" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (fault_set(dir, keys[i][0], keys[i][1]))
			return -1;
	/* failslab's own filter: there when asked for, else off if there. */
	snprintf(path, sizeof(path), "%s/cache-filter", dir);
	if ((cache_filter || !access(path, F_OK)) &&
	    fault_set(dir, "cache-filter", cache_filter ? "Y" : "N"))
		return -1;
	return fault_set(dir, "probability", prob);
}

TEST_F_TIMEOUT(stress, alloc_failures, 300)
{
	unsigned long long ops = 0, enomem = 0;
	unsigned int seed = 4242;
	uint64_t end;
	char buf[4096];
	int fd, st, i;
	bool filter;

	KMT_REQUIRE(FAILSLAB "/probability", "CONFIG_FAILSLAB CONFIG_FAULT_INJECTION_DEBUG_FS");
	KMT_REQUIRE(FAILPAGE "/probability",
		    "CONFIG_FAIL_PAGE_ALLOC CONFIG_FAULT_INJECTION_DEBUG_FS");
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	/*
	 * Only the kmalloc caches where a kernel has the files to say so
	 * (CONFIG_SLUB_DEBUG); a kernel without them has no kmemleak.
	 */
	filter = !slab_failslab("1");
	ASSERT_TRUE(filter || access("/sys/kernel/debug/kmemleak", F_OK));
	ASSERT_EQ(0, fault_setup(FAILSLAB, "20", filter));
	ASSERT_EQ(0, fault_setup(FAILPAGE, "20", false));
	ASSERT_EQ(0, kmt_write_str("/proc/self/make-it-fail", "1"));
	end = deadline();
	while (!time_up(end)) {
		long size = rnd(&seed) & 1 ? 1 << 20 : 4 << 20;
		int ret;

		fd = open(KMON_DEV, O_RDONLY | O_NONBLOCK);
		ops++;
		if (fd < 0) {
			st = errno;
			EXPECT_EQ(ENOMEM, st) TH_LOG("open: %s", strerror(st));
			enomem += st == ENOMEM;
		} else {
			if (ioctl(fd, KMON_BUFFSIZE, &size)) {
				EXPECT_EQ(ENOMEM, errno) TH_LOG("buffsize: %s", strerror(errno));
				enomem += errno == ENOMEM;
			}
			ret = ioctl(fd, KMON_START);
			EXPECT_TRUE(!ret || errno == ENOMEM) TH_LOG("start: %s", strerror(errno));
			/* The trigger's own allocations may fail too. */
			ret = trigger("task", 100);
			EXPECT_TRUE(!ret || ret == -ENOMEM) TH_LOG("trigger: %s", strerror(-ret));
			ret = read(fd, buf, sizeof(buf));
			EXPECT_TRUE(ret >= 0 || errno == EAGAIN)
				TH_LOG("read: %s", strerror(errno));
			close(fd);
			ops += 4;
		}
		/*
		 * The enable switch under failing allocations (its buffers
		 * were made by an earlier enable and are kept).
		 */
		ret = kmt_write_str(KMT_DIR "/enable", rnd(&seed) & 1 ? "1" : "0");
		EXPECT_TRUE(!ret || ret == -ENOMEM) TH_LOG("enable: %s", strerror(-ret));
		enomem += ret == -ENOMEM;
		ret = kmt_write_str(ALLOC_TRIGGER, "storm 100");
		EXPECT_TRUE(!ret || ret == -ENOMEM) TH_LOG("storm: %s", strerror(-ret));
		ops += 2;
	}
	/* The write itself allocates, and may fail: again until it works. */
	for (i = 0; i < 10000 && kmt_write_str("/proc/self/make-it-fail", "0"); i++)
		;
	ASSERT_GT(10000, i);
	kmt_write_str(FAILSLAB "/probability", "0");
	kmt_write_str(FAILPAGE "/probability", "0");
	if (filter)
		slab_failslab("0");
	TH_LOG("%llu operations with 20%% of allocations failing, %llu -ENOMEM", ops, enomem);
	EXPECT_LT(0ULL, enomem);

	/* Everything works again, exactly. */
	fd = start_instance(1 << 20);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, trigger("task", 100));
	ASSERT_EQ(0, ioctl(fd, KMON_STOP));
	EXPECT_EQ(100 * TEST_REC, read(fd, buf, sizeof(buf)));
	close(fd);
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x70000"));
	checked_capture(_metadata, self->dir, "after", "1");
	expect_balanced(_metadata);
}

int main(int argc, char **argv)
{
	const char *s = getenv("KMT_STRESS_SECONDS");

	if (s && atoi(s) > 0 && atoi(s) <= 60)
		seconds = atoi(s);
	return test_harness_run(argc, argv);
}
