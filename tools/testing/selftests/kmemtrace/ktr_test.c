// SPDX-License-Identifier: GPL-2.0
/*
 * KTR tests: the run-time mask file, the readers of debugfs
 * kmemtrace/ktr/ and the ktrdump decoder, driven by the known trace
 * points of kmemtrace/ktr/selftest (CONFIG_KTR_SELFTEST).
 *
 * Needs root. Skips, saying why, on a kernel without CONFIG_KMEMTRACE;
 * fails without CONFIG_KTR or CONFIG_KTR_SELFTEST, which the kselftests'
 * config asks for, unless /proc/config.gz says they are off (a skip).
 * ktrdump is the one built beside this test, never one from PATH.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/ktr.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "kmt_util.h"

#define KTR_DIR		KMT_DIR "/ktr"
#define NOBODY		65534
/* KTR_GEN | KTR_DEV | KTR_TEST: what "fire" uses, and nothing else traces. */
#define FIRED_CLASSES	"0x40000005"

/* What "fire" records, oldest first, with FIRED_CLASSES enabled. */
static const char *const fired[] = {
	"ktr selftest: start",
	"ktr selftest: int -42",
	"ktr selftest: hex beef unsigned 4000000000",
	"ktr selftest: str hello long -5 sym ktr_selftest_fire",
	"ktr selftest: widths [ab    ] [   42] [00000abc] [z] [0x0]",
	"ktr selftest: five 1 2 3 4 5",
	"ktr selftest: five longs 1 22 333 4444 5555555555",
	"ktr selftest: bad string (efault) null (null)",
	"ktr selftest: gen 7",			/* KTR_GEN */
	"ktr selftest: dev 8",			/* KTR_DEV */
	"ktr selftest: test or dev 9",		/* KTR_TEST | KTR_DEV */
	"ktr selftest: end",
};

/*
 * In a fixture's setup: kmemtrace, KTR and its self-test trigger are
 * there, or the test skips (no CONFIG_KMEMTRACE, or /proc/config.gz
 * says CONFIG_KTR or CONFIG_KTR_SELFTEST is off) or fails.
 */
#define KTR_NEED() do {								\
	KMT_NEED_KMEMTRACE();							\
	KMT_REQUIRE(KTR_DIR, "CONFIG_KTR");					\
	KMT_REQUIRE(KTR_DIR "/selftest", "CONFIG_KTR_SELFTEST");		\
} while (0)

/* Reads @path into a malloc'ed string; NULL on error. */
static char *read_str(const char *path)
{
	return kmt_read_file(path, NULL);
}

static uint64_t read_mask(void)
{
	char *s = read_str(KTR_DIR "/mask");
	uint64_t m = s ? strtoull(s, NULL, 0) : ~0ULL;

	free(s);
	return m;
}

/*
 * The Trace column of every line of a text view, oldest first, in a
 * malloc'ed *@out that points into @text (NULL for none). Checks the
 * header and the "C Idx Delta-T" columns of every line. Returns the
 * number of lines, or -1 if the layout is wrong.
 */
static int all_lines(char *text, char ***out)
{
	char **l = NULL, *save, *line;
	int cap = 0, n = 0, i;

	*out = NULL;
	line = strtok_r(text, "\n", &save);
	if (!line || strcmp(line, "C Idx Delta-T  Trace"))
		return -1;
	line = strtok_r(NULL, "\n", &save);
	if (!line || strcmp(line, "= === ======== ====="))
		return -1;
	while ((line = strtok_r(NULL, "\n", &save))) {
		unsigned int cpu, idx;
		char delta[16];
		int off = 0;

		if (sscanf(line, "%u %x %15s %n", &cpu, &idx, delta, &off) != 3 || !off)
			goto bad;
		if (n == cap) {
			char **o = realloc(l, (cap = cap ? 2 * cap : 256) * sizeof(*o));

			if (!o)
				goto bad;
			l = o;
		}
		l[n++] = line + off;
	}
	/* Newest first in the file: reverse. */
	for (i = 0; i < n / 2; i++) {
		char *t = l[i];

		l[i] = l[n - 1 - i];
		l[n - 1 - i] = t;
	}
	*out = l;
	return n;
bad:
	free(l);
	return -1;
}

/*
 * Splits a text view into its Trace column, oldest first, in @out: the
 * number of lines, or -1 if the layout is wrong or there are more than
 * @max.
 */
static int trace_lines(char *text, char **out, int max)
{
	char **l;
	int n;

	n = all_lines(text, &l);
	if (n > max)
		n = -1;
	if (n > 0)
		memcpy(out, l, n * sizeof(*l));
	free(l);
	return n;
}

/* The last text view read: the text and its Trace column, oldest first. */
struct view {
	char *text;
	char *lines[64];
	int n;
};

FIXTURE(ktr) {
	uint64_t saved_mask;	/* restored by the teardown */
	bool restore;		/* saved_mask was read */
	mode_t root_mode;	/* debugfs root's mode before the test */
	bool restore_root;	/* root_mode must be put back */
	struct view v;
};

FIXTURE_SETUP(ktr)
{
	self->restore_root = false;
	KTR_NEED();
	self->saved_mask = read_mask();
	self->restore = true;
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", FIRED_CLASSES));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/clear", "1"));
}

FIXTURE_TEARDOWN(ktr)
{
	char buf[32];

	free(self->v.text);
	if (self->restore_root)
		EXPECT_EQ(0, chmod(KMT_DEBUGFS, self->root_mode));
	if (self->restore) {
		snprintf(buf, sizeof(buf), "%#llx",
			 (unsigned long long)self->saved_mask);
		kmt_write_str(KTR_DIR "/mask", buf);
	}
}

/* Fires the known trace points and reads the text view back; -1 if not. */
static int fire_and_read(struct view *v)
{
	if (kmt_write_str(KTR_DIR "/selftest", "fire"))
		return -1;
	free(v->text);
	v->text = read_str(KTR_DIR "/trace");
	if (!v->text)
		return -1;
	v->n = trace_lines(v->text, v->lines, 64);
	return v->n;
}

/* Every class: the text view shows exactly the fired lines, in order. */
TEST_F(ktr, text_view_all_classes)
{
	int i;

	ASSERT_EQ((int)ARRAY_SIZE(fired), fire_and_read(&self->v));
	for (i = 0; i < self->v.n; i++)
		EXPECT_STREQ(fired[i], self->v.lines[i]);
}

/* Only KTR_TEST: the KTR_GEN and KTR_DEV lines go, the mixed one stays. */
TEST_F(ktr, text_view_one_class)
{
	int i, j = 0;

	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x40000000"));
	ASSERT_EQ(10, fire_and_read(&self->v));
	for (i = 0; i < (int)ARRAY_SIZE(fired); i++) {
		if (strstr(fired[i], ": gen ") || strstr(fired[i], ": dev "))
			continue;
		EXPECT_STREQ(fired[i], self->v.lines[j++]);
	}
}

/*
 * Delta-T is in ns, whatever the kernel stamps entries with: two entries
 * 100 ms apart show the time ktime_get_ns() measured around them, to
 * 0.5% and 20 us (a cycle counter read as ns would be off by its GHz,
 * a rate fitted over too short a time by a percent).
 */
TEST_F(ktr, delta_t_is_ns)
{
	unsigned long long took, delta;
	unsigned int cpu, idx;
	char *text, *save, *line;
	int n = 0;

	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x40000000"));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/selftest", "delay 100000"));
	text = read_str(KTR_DIR "/trace");
	ASSERT_NE(NULL, text);
	self->v.text = text;
	/* Newest first: what was measured, the end, the start. */
	line = strtok_r(text, "\n", &save);
	ASSERT_STREQ("C Idx Delta-T  Trace", line);
	line = strtok_r(NULL, "\n", &save);
	while ((line = strtok_r(NULL, "\n", &save))) {
		int off = 0, got;

		got = sscanf(line, "%u %x %llx %n", &cpu, &idx, &delta, &off);
		ASSERT_EQ(3, got) TH_LOG("%s", line);
		switch (n++) {
		case 0:
			got = sscanf(line + off, "ktr selftest: delay took %llu ns", &took);
			ASSERT_EQ(1, got) TH_LOG("%s", line);
			break;
		case 1:
			ASSERT_STREQ("ktr selftest: delay done", line + off);
			TH_LOG("100000 us: Delta-T %llu ns, ktime_get_ns() %llu ns",
			       delta, took);
			/* The trigger waits until ktime_get_ns() says 100 ms passed. */
			EXPECT_GE(took, 100000000ULL);
			EXPECT_LE(delta, took + took / 200 + 20000);
			EXPECT_GE(delta + took / 200 + 20000, took);
			break;
		case 2:
			ASSERT_STREQ("ktr selftest: delay 100000 us", line + off);
			break;
		}
	}
	ASSERT_EQ(3, n);
}

/* The index of the first line at or after @from that is @want, or -1. */
static int find_from(char **l, int n, int from, const char *want)
{
	for (; from < n; from++)
		if (!strcmp(l[from], want))
			return from;
	return -1;
}

/*
 * The process, scheduler and trap classes, fed from the kernel's trace
 * points, tell what a child did, in order and with its pids: forked,
 * woken, switched in, faulted on the page it wrote, woke its parent
 * (blocked reading a pipe by then) with a write, and exited with its
 * code.
 */
TEST_F(ktr, classes_proc_sched_trap)
{
	char want[128], **l;
	int pfd[2], st, n, i_fork, i_wnew, i_sw, i_fault, i_exit, i_wake;
	unsigned long addr;
	pid_t parent = getpid(), child;

	ASSERT_EQ(0, pipe(pfd));
	/* KTR_PROC | KTR_SCHED | KTR_TRAP */
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x80440"));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/clear", "1"));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
		p[123] = 1;
		addr = (unsigned long)p + 123;
		/* The parent blocks in read(): the write must wake it. */
		if (!kmt_wait_sleeping(parent))
			_exit(1);
		_exit(write(pfd[1], &addr, sizeof(addr)) == sizeof(addr) ? 7 : 1);
	}
	ASSERT_EQ((ssize_t)sizeof(addr), read(pfd[0], &addr, sizeof(addr)));
	ASSERT_EQ(child, waitpid(child, &st, 0));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0"));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(7, WEXITSTATUS(st));
	close(pfd[0]);
	close(pfd[1]);

	self->v.text = read_str(KTR_DIR "/trace");
	ASSERT_NE(NULL, self->v.text);
	n = all_lines(self->v.text, &l);
	ASSERT_LE(0, n);
	TH_LOG("%d entries; parent %d, child %d, wrote %#lx", n, parent, child, addr);

	snprintf(want, sizeof(want), "fork %d -> %d", parent, child);
	i_fork = find_from(l, n, 0, want);
	EXPECT_LE(0, i_fork) TH_LOG("no '%s'", want);
	snprintf(want, sizeof(want), "wakeup_new %d on cpu", child);
	for (i_wnew = i_fork; i_wnew >= 0 && i_wnew < n; i_wnew++)
		if (!strncmp(l[i_wnew], want, strlen(want)))
			break;
	EXPECT_LT(i_wnew, n) TH_LOG("no '%s' after the fork", want);
	snprintf(want, sizeof(want), "-> %d prev_state", child);
	for (i_sw = i_wnew; i_sw >= 0 && i_sw < n; i_sw++)
		if (!strncmp(l[i_sw], "switch ", 7) && strstr(l[i_sw], want))
			break;
	EXPECT_LT(i_sw, n) TH_LOG("no switch to the child after its wakeup");
#if defined(__x86_64__)
	/* A write (bit 1) from user mode (bit 2) to a page not present. */
	snprintf(want, sizeof(want), "user fault %#lx err 0x6 pid %d", addr, child);
	i_fault = find_from(l, n, i_sw < 0 ? 0 : i_sw, want);
	EXPECT_LE(0, i_fault) TH_LOG("no '%s' after the switch", want);
#else
	/* KTR_TRAP records x86's page fault trace points only. */
	i_fault = i_sw;
#endif
	snprintf(want, sizeof(want), "waking %d by %d", parent, child);
	i_wake = find_from(l, n, i_fault < 0 ? 0 : i_fault, want);
	EXPECT_LE(0, i_wake) TH_LOG("no '%s' after the fault", want);
	snprintf(want, sizeof(want), "exit %d code 0x700", child);
	i_exit = find_from(l, n, i_wake < 0 ? 0 : i_wake, want);
	EXPECT_LE(0, i_exit) TH_LOG("no '%s' after the wakeup", want);
	if (i_exit < 0 || i_wake < 0) {
		char *st = read_str(KTR_DIR "/stats");

		TH_LOG("stats: %s", st);
		free(st);
		for (i_exit = 0; i_exit < n; i_exit++)
			TH_LOG("%s", l[i_exit]);
	}
	free(l);
}

/* Sums the device interrupts of /proc/interrupts, the numbered lines. */
static unsigned long long device_irqs(void)
{
	char *s = kmt_read_file("/proc/interrupts", NULL), *save, *line;
	unsigned long long sum = 0;

	if (!s)
		return 0;
	strtok_r(s, "\n", &save);
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *p;
		unsigned long long v;

		if (strtoul(line, &p, 10), *p != ':')
			continue;
		p++;
		while (sscanf(p, " %llu", &v) == 1) {
			sum += v;
			while (*p == ' ')
				p++;
			while (*p >= '0' && *p <= '9')
				p++;
		}
	}
	free(s);
	return sum;
}

/*
 * The interrupt class: softirqs run and end (there are always timers
 * and, with two CPUs, load balancing), and each device interrupt that
 * /proc/interrupts counted meanwhile is an "irq N handler" entry and an
 * "irq N done" one.
 */
TEST_F(ktr, class_intr)
{
	unsigned long long before, after;
	int n, i, softirq = 0, softirq_done = 0, irq = 0, irq_done = 0;
	int ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	char **l;

	before = device_irqs();
	/* KTR_INTR */
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x80"));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/clear", "1"));
	/* On a serial console, output is an interrupt. */
	kmt_write_str("/dev/console", "ktr_test: class_intr\n");
	/* Short enough not to wrap 1024 slots at HZ=1000. */
	usleep(300000);
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0"));
	after = device_irqs();
	self->v.text = read_str(KTR_DIR "/trace");
	ASSERT_NE(NULL, self->v.text);
	n = all_lines(self->v.text, &l);
	ASSERT_LE(0, n);
	for (i = 0; i < n; i++) {
		int num, len = 0;
		char name[64];

		if (sscanf(l[i], "softirq %63s%n", name, &len) == 1 && !l[i][len])
			softirq++;
		else if (sscanf(l[i], "softirq %63s done%n", name, &len) == 1 && !l[i][len])
			softirq_done++;
		else if (sscanf(l[i], "irq %d done, ret %*d%n", &num, &len) == 1 && !l[i][len])
			irq_done++;
		else if (sscanf(l[i], "irq %d %63s", &num, name) == 2)
			irq++;
		else
			TH_LOG("unexpected entry '%s'", l[i]);
	}
	TH_LOG("%d entries: %d softirqs, %d ended; %d irqs, %d ended; %llu device irqs counted",
	       n, softirq, softirq_done, irq, irq_done, after - before);
	EXPECT_LT(0, softirq);
	/*
	 * Each CPU may have one entry whose pair fell outside the window,
	 * at either end.
	 */
	EXPECT_LE(softirq - ncpus, softirq_done);
	EXPECT_GE(softirq + ncpus, softirq_done);
	if (after == before)
		TH_LOG("no device interrupt in 0.3 s: the irq entries are not checked");
	EXPECT_TRUE(after == before || irq > 0);
	EXPECT_LE(irq - ncpus, irq_done);
	EXPECT_GE(irq + ncpus, irq_done);
	free(l);
}

/*
 * The allocator classes: the allocation self-test's kmalloc(100) is an
 * entry with its size and its caller, by name; kmem_cache and page
 * entries come with it.
 */
TEST_F(ktr, classes_alloc)
{
	int n, i, kmalloc = 0, cache = 0, page = 0;
	char **l;

	KMT_REQUIRE(KMT_DIR "/alloc_selftest", "CONFIG_KMEMTRACE_ALLOC_SELFTEST");
	/* KTR_KMALLOC | KTR_KMEM_CACHE | KTR_PAGE */
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x70000"));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/clear", "1"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/alloc_selftest", "run"));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0"));
	self->v.text = read_str(KTR_DIR "/trace");
	ASSERT_NE(NULL, self->v.text);
	n = all_lines(self->v.text, &l);
	ASSERT_LE(0, n);
	for (i = 0; i < n; i++) {
		if (!strncmp(l[i], "kmalloc 100 at ", 15) &&
		    strstr(l[i], " by kmt_st_kmalloc+"))
			kmalloc++;
		if (!strncmp(l[i], "cache_alloc ", 12) && strstr(l[i], " by kmt_st_cache_alloc+"))
			cache++;
		if (!strncmp(l[i], "page_alloc pfn 0x", 17))
			page++;
	}
	TH_LOG("%d entries: %d kmalloc(100), %d kmem_cache_alloc(), %d pages", n,
	       kmalloc, cache, page);
	EXPECT_EQ(1, kmalloc);
	EXPECT_EQ(1, cache);
	EXPECT_LT(0, page);
	free(l);
}

/* A cleared mask records nothing; clear empties the view. */
TEST_F(ktr, frozen_and_cleared)
{
	ASSERT_EQ(12, fire_and_read(&self->v));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/clear", "1"));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0"));
	ASSERT_EQ(0, fire_and_read(&self->v));
	/* Clearing does not stop tracing. */
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x40000000"));
	ASSERT_EQ(10, fire_and_read(&self->v));
}

/* The mask reads back as written, in hex, 64 bits. */
TEST_F(ktr, mask_read_write)
{
	char *s;

	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x40000004\n"));
	s = read_str(KTR_DIR "/mask");
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("0x0000000040000004\n", s);
	free(s);
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0"));
	s = read_str(KTR_DIR "/mask");
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("0x0000000000000000\n", s);
	free(s);
}

/* Garbage, negative, overlong, out of range: EINVAL, mask unchanged. */
TEST_F(ktr, mask_bad_writes)
{
	static const char *const bad[] = {
		"garbage", "", "\n", "-1", "0x1ffffffffffffffff",
		"18446744073709551616", "0x10 0x20", "1e3",
		"0x0000000000000000000000000000000000000000000000000001",
	};
	unsigned int i;

	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x40000001"));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int fd = open(KTR_DIR "/mask", O_WRONLY);

		ASSERT_LE(0, fd);
		EXPECT_EQ(-1, write(fd, bad[i], strlen(bad[i]))) {
			TH_LOG("'%s' was accepted", bad[i]);
		}
		EXPECT_EQ(EINVAL, errno);
		close(fd);
		EXPECT_EQ(0x40000001ULL, read_mask());
	}
}

/* A class that is not compiled in cannot be enabled. */
TEST_F(ktr, mask_not_compiled)
{
	char *classes = read_str(KTR_DIR "/classes");
	int compiled = -1, enabled, n;
	char *p;

	ASSERT_NE(NULL, classes);
	p = strstr(classes, "\n8 spl ");
	ASSERT_NE(NULL, p);
	n = sscanf(p + 7, "%d %d", &compiled, &enabled);
	ASSERT_EQ(2, n);
	free(classes);
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0x40000100"));
	EXPECT_EQ(0x40000000ULL | (compiled ? 0x100 : 0), read_mask());
	/* The test kernel leaves KTR_SPL out, as ktr(4)'s default does. */
	EXPECT_EQ(0, compiled);
}

/* clear and dump_on_oops refuse what they do not understand. */
TEST_F(ktr, control_bad_writes)
{
	char *s;

	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/clear", "2"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/clear", "yes"));
	EXPECT_EQ(0, kmt_write_str(KTR_DIR "/dump_on_oops", "5"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/dump_on_oops", "-1"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/dump_on_oops", "many"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/dump_on_oops", "99999999999"));
	s = read_str(KTR_DIR "/dump_on_oops");
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("5\n", s);
	free(s);
	EXPECT_EQ(0, kmt_write_str(KTR_DIR "/dump_on_oops", "0"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/selftest", "frobnicate"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/selftest", "bench 0 5"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/selftest", "bench 10 5 junk"));
}

/* The decoder: the ktrdump built beside this test (none: a failure). */
static char ktrdump[PATH_MAX];

/* Reads @dir/@name into a new string. */
static char *read_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return read_str(path);
}

/* A directory of its own for a decoder test's files, removed after. */
FIXTURE(dec) {
	uint64_t saved_mask;	/* restored by the teardown */
	char dir[32];
	struct view v;
	pid_t follower;		/* a ktrdump --follow the teardown must stop */
};

FIXTURE_SETUP(dec)
{
	char cap[64];

	self->dir[0] = '\0';
	KTR_NEED();
	KMT_TOOL(ktrdump, "ktrdump");
	self->saved_mask = read_mask();
	snprintf(self->dir, sizeof(self->dir), "/tmp/ktr_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", FIRED_CLASSES));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/clear", "1"));
	ASSERT_EQ(12, fire_and_read(&self->v));
	/* Stop, so that every reader sees the same entries. */
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", "0"));
	snprintf(cap, sizeof(cap), "%s/cap", self->dir);
	ASSERT_EQ(0, mkdir(cap, 0700));
	/* A saved copy: each file copied, or the loop says which was not. */
	ASSERT_EQ(0, kmt_run("cd " KTR_DIR " && for f in formats classes cpu*; do cat $f > %s/$f ||"
			     " { echo \"# cannot copy $f\"; exit 1; }; done", cap));
}

FIXTURE_TEARDOWN(dec)
{
	char buf[32];

	free(self->v.text);
	if (self->follower > 0) {
		kill(self->follower, SIGKILL);
		waitpid(self->follower, NULL, 0);
	}
	if (!self->dir[0])
		return;
	kmt_run("rm -rf %s", self->dir);
	snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)self->saved_mask);
	kmt_write_str(KTR_DIR "/mask", buf);
}

/* ktrdump prints what the kernel prints, live and from a saved copy. */
TEST_F(dec, decoder_matches_text_view)
{
	const char *d = self->dir;
	char *a, *b;

	ASSERT_EQ(0, kmt_run("cat " KTR_DIR "/trace > %s/kernel", d));
	ASSERT_EQ(0, kmt_run("%s > %s/live", ktrdump, d));
	ASSERT_EQ(0, kmt_run("%s %s/cap > %s/saved", ktrdump, d, d));
	a = read_in(d, "kernel");
	ASSERT_NE(NULL, a);
	b = read_in(d, "live");
	ASSERT_NE(NULL, b);
	EXPECT_STREQ(a, b);
	free(b);
	b = read_in(d, "saved");
	ASSERT_NE(NULL, b);
	EXPECT_STREQ(a, b);
	free(b);
	free(a);
	/*
	 * Oldest first, with file:line, only one class, by name; each run's
	 * exit status checked on its own, not lost in a pipeline.
	 */
	EXPECT_EQ(KMT_EXIT_OK, kmt_run("%s --oldest-first -l --classes=test %s/cap > %s/test",
				       ktrdump, d, d));
	EXPECT_EQ(0, kmt_run("sed -n 3p %s/test | grep -q '%s'", d,
			     " 0 kernel/kmemtrace/ktr_selftest.c:[0-9]* ktr selftest: start$"))
		kmt_run("cat %s/test >&2", d);
	/* Header (2 lines), the dev and test-or-dev entries. */
	EXPECT_EQ(KMT_EXIT_OK, kmt_run("%s --classes=dev %s/cap > %s/dev", ktrdump, d, d));
	EXPECT_EQ(0, kmt_run("test $(wc -l < %s/dev) = 4", d)) kmt_run("cat %s/dev >&2", d);
	/* The same class as a mask (KTR_DEV is bit 2). */
	EXPECT_EQ(KMT_EXIT_OK, kmt_run("%s --classes=0x4 %s/cap > %s/dev4", ktrdump, d, d));
	EXPECT_EQ(0, kmt_run("cmp -s %s/dev %s/dev4", d, d));
	/* An unknown name is bad usage. */
	EXPECT_EQ(KMT_EXIT_USAGE, kmt_run("%s --classes=dev,nosuch %s/cap > /dev/null 2> %s/err",
					  ktrdump, d, d));
	EXPECT_EQ(0, kmt_run("grep -q \"no class 'nosuch' in \" %s/err", d))
		kmt_run("cat %s/err >&2", d);
}

/* Wait up to 10 s for a file in @dir to hold at least @lines lines. */
static bool wait_lines(const char *dir, const char *name, int lines)
{
	int tries, n = 0;

	for (tries = 0; tries < 100; tries++) {
		char *s = read_in(dir, name), *p;

		n = 0;
		for (p = s; p && *p; p++)
			n += *p == '\n';
		free(s);
		if (n >= lines)
			return true;
		usleep(100000);
	}
	return false;
}

/* --follow prints what is there, then new entries as they come. */
TEST_F(dec, decoder_follow)
{
	const int nf = ARRAY_SIZE(fired);
	const char *d = self->dir;
	char out_path[64], err_path[64];
	char *out, *err, *lines[64];
	int i, n, status;

	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", FIRED_CLASSES));
	snprintf(out_path, sizeof(out_path), "%s/out", d);
	snprintf(err_path, sizeof(err_path), "%s/err", d);
	self->follower = fork();
	ASSERT_LE(0, self->follower);
	if (!self->follower) {
		if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr))
			_exit(127);
		execlp(ktrdump, ktrdump, "--follow", "--interval=20", (char *)NULL);
		_exit(127);
	}
	/* The 2 header lines and the 12 entries already there, then 12 more. */
	ASSERT_TRUE(wait_lines(d, "out", 2 + nf));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/selftest", "fire"));
	ASSERT_TRUE(wait_lines(d, "out", 2 + 2 * nf));
	/* It reads once more on SIGTERM and says how much it printed. */
	ASSERT_EQ(0, kill(self->follower, SIGTERM));
	ASSERT_EQ(self->follower, waitpid(self->follower, &status, 0));
	self->follower = 0;
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("ktrdump --follow: status %#x", status);
	/* The first stop signal ends it as the end of its input would. */
	EXPECT_EQ(KMT_EXIT_OK, WEXITSTATUS(status));
	err = read_in(d, "err");
	ASSERT_NE(NULL, err);
	EXPECT_NE(NULL, strstr(err, ": 24 entries printed")) TH_LOG("stderr: %s", err);
	free(err);
	out = read_in(d, "out");
	ASSERT_NE(NULL, out);
	/* Oldest first, so newest first once trace_lines() reverses them. */
	n = trace_lines(out, lines, 64);
	ASSERT_EQ(2 * nf, n);
	for (i = 0; i < n; i++)
		EXPECT_STREQ(fired[nf - 1 - i % nf], lines[i]);
	free(out);
}

/*
 * A corrupt or truncated capture: the file and offset named, exit
 * KMT_EXIT_CORRUPT; bad options: KMT_EXIT_USAGE (kmt_cli.h's scheme).
 */
TEST_F(dec, decoder_bad_input)
{
	const char *d = self->dir;
	char *err;

	/*
	 * Cut 5 bytes off the end of every CPU file that holds entries
	 * (more than a header: 40 bytes); at least one does, the fired
	 * ones. Exit 3 if one could not be cut, 4 if none was.
	 */
	ASSERT_EQ(0, kmt_run("cd %s/cap && n=0 && for f in cpu*; do s=$(wc -c < $f);"
			     " [ $s -le 40 ] && continue; n=$((n + 1));"
			     " head -c $((s - 5)) $f > t && mv t $f || exit 3; done; [ $n -gt 0 ] || exit 4",
			     d));
	EXPECT_EQ(KMT_EXIT_CORRUPT, kmt_run("%s %s/cap > /dev/null 2> %s/err", ktrdump, d, d));
	err = read_in(d, "err");
	ASSERT_NE(NULL, err);
	EXPECT_NE(NULL, strstr(err, "/cap/cpu")) TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(err, ": offset ")) TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(err, "truncated")) TH_LOG("stderr: %s", err);
	free(err);
	/* Only a cpu0 of 7 bytes beside the format table. */
	ASSERT_EQ(0, kmt_run("rm -f %s/cap/cpu*", d));
	ASSERT_EQ(0, kmt_run("printf garbage > %s/cap/cpu0", d));
	EXPECT_EQ(KMT_EXIT_CORRUPT, kmt_run("%s %s/cap > /dev/null 2> %s/err", ktrdump, d, d));
	err = read_in(d, "err");
	ASSERT_NE(NULL, err);
	EXPECT_NE(NULL, strstr(err, "/cap/cpu0: offset 0: truncated header"))
		TH_LOG("stderr: %s", err);
	free(err);
	EXPECT_EQ(KMT_EXIT_USAGE, kmt_run("%s --no-such-option > /dev/null 2>&1", ktrdump));
	EXPECT_EQ(KMT_EXIT_USAGE, kmt_run("%s -c x > /dev/null 2>&1", ktrdump));
}

/* Every KTR file is root's, with no access at all for group or others. */
TEST_F(ktr, files_root_only)
{
	/* The documented files (debugfs-ktr), each there. */
	static const char *const named[] = {
		"mask", "classes", "trace", "formats", "stats", "clear", "dump_on_oops",
		"selftest", "cpu0",
	};
	struct dirent *de;
	char path[PATH_MAX];
	struct stat st;
	unsigned int i;
	int n = 0;
	DIR *d = opendir(KTR_DIR);

	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), KTR_DIR "/%s", de->d_name);
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_EQ(0U, st.st_uid) TH_LOG("%s", path);
		EXPECT_EQ(0U, st.st_mode & 077) TH_LOG("%s: mode %o", path, st.st_mode & 07777);
		n++;
	}
	closedir(d);
	for (i = 0; i < ARRAY_SIZE(named); i++) {
		snprintf(path, sizeof(path), KTR_DIR "/%s", named[i]);
		EXPECT_EQ(0, access(path, F_OK)) TH_LOG("%s: %s", path, strerror(errno));
	}
	EXPECT_LE((int)ARRAY_SIZE(named), n);
}

/* The first line of stats: 1 or 0 for "frozen 1" or "frozen 0", else -1. */
static int stats_frozen(void)
{
	char *s = read_str(KTR_DIR "/stats");
	int ret = -1;

	if (s && !strncmp(s, "frozen ", 7) && (s[7] == '0' || s[7] == '1') && s[8] == '\n')
		ret = s[7] - '0';
	free(s);
	return ret;
}

/*
 * stats' second line, "clock C readings N fixed F": the clock that
 * stamps new entries; with the cycle counter, 1 to 11 readings of both
 * clocks a second apart from late_initcall on, and the rate fixed once
 * two rates agreed or 10 s passed, so certainly 15 s after boot. With
 * local_clock() stamps from boot nothing is read; from a suspend or an
 * unstable TSC on, "local" with the readings taken before.
 */
TEST_F(ktr, stats_clock)
{
	char *s = read_str(KTR_DIR "/stats"), *line, clk[16];
	unsigned int readings, fixed;
	double up;
	FILE *f;
	int got;

	ASSERT_NE(NULL, s);
	line = strchr(s, '\n');
	ASSERT_NE(NULL, line);
	got = sscanf(line + 1, "clock %15s readings %u fixed %u\n", clk, &readings, &fixed);
	ASSERT_EQ(3, got) TH_LOG("%s", s);
	f = fopen("/proc/uptime", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%lf", &up));
	fclose(f);
	TH_LOG("uptime %.2f s: %.*s", up, (int)strcspn(line + 1, "\n"), line + 1);
	EXPECT_LE(fixed, 1U);
	EXPECT_GE(11U, readings);
	/* Fixed from three readings on; none without the counter. */
	if (fixed)
		EXPECT_LE(3U, readings);
	if (strcmp(clk, "local")) {
		EXPECT_STREQ("cycles", clk);
		EXPECT_LE(1U, readings);
		if (up >= 15)
			EXPECT_EQ(1U, fixed);
	}
	free(s);
}

/* ktr_freeze() stops the trace until the mask is written again. */
TEST_F(ktr, freeze_until_mask_written)
{
	EXPECT_EQ(0, stats_frozen());
	ASSERT_EQ(12, fire_and_read(&self->v));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/selftest", "freeze"));
	EXPECT_EQ(0ULL, read_mask());
	EXPECT_EQ(1, stats_frozen());
	/* Nothing more records; the buffer keeps what led there. */
	ASSERT_EQ(13, fire_and_read(&self->v));
	EXPECT_STREQ("ktr selftest: freezing on request", self->v.lines[12]);
	/* The benchmark, which sets the mask itself, refuses to thaw it. */
	EXPECT_EQ(-EBUSY, kmt_write_str(KTR_DIR "/selftest", "bench 10 1"));
	EXPECT_EQ(0ULL, read_mask());
	/* Writing the mask by hand starts the trace again. */
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", FIRED_CLASSES));
	EXPECT_EQ(0x40000005ULL, read_mask());
	EXPECT_EQ(0, stats_frozen());
	ASSERT_EQ(25, fire_and_read(&self->v));
}

/*
 * Root only: an unprivileged process cannot open any KTR file. debugfs'
 * root is 0700, which would deny `nobody' before any KTR file's own mode
 * is looked at: it is opened up for the test (the teardown restores it),
 * and the child must be able to reach each file (stat) before its open is
 * refused, so a world-readable or world-writable file fails the test.
 */
TEST_F(ktr, unprivileged_open_denied)
{
	static const char *const files[] = {
		KTR_DIR "/mask", KTR_DIR "/trace", KTR_DIR "/cpu0",
		KTR_DIR "/formats", KTR_DIR "/selftest", KTR_DIR "/clear",
		KTR_DIR "/stats", KTR_DIR "/classes", KTR_DIR "/dump_on_oops",
	};
	struct stat root, st;
	unsigned int i;
	int status;
	pid_t pid;

	ASSERT_EQ(0, stat(KMT_DEBUGFS, &root));
	self->root_mode = root.st_mode & 07777;
	ASSERT_EQ(0, chmod(KMT_DEBUGFS, 0755));
	self->restore_root = true;
	/* No permission bit for others, whatever open() says below. */
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		ASSERT_EQ(0, stat(files[i], &st)) TH_LOG("%s: %s", files[i], strerror(errno));
		EXPECT_EQ(0U, st.st_mode & 0007)
			TH_LOG("%s: mode %#o", files[i], st.st_mode & 07777);
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		for (i = 0; i < ARRAY_SIZE(files); i++) {
			int fd;

			/* The directories let nobody through: the file itself refuses. */
			if (stat(files[i], &st))
				_exit(50 + i);
			fd = open(files[i], O_RDONLY);
			if (fd >= 0 || errno != EACCES)
				_exit(1 + i);
			fd = open(files[i], O_WRONLY);
			if (fd >= 0 || errno != EACCES)
				_exit(20 + i);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 100: cannot drop privileges, 50+i: files[i] unreachable, 1+i/20+i: opened */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
