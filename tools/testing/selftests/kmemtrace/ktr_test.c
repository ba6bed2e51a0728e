// SPDX-License-Identifier: GPL-2.0
/*
 * KTR tests: the run-time mask file, the readers of debugfs
 * kmemtrace/ktr/ and the ktrdump decoder, driven by the known trace
 * points of kmemtrace/ktr/selftest (CONFIG_KTR_SELFTEST).
 *
 * Needs root. Skips, saying why, on a kernel without CONFIG_KMEMTRACE,
 * CONFIG_KTR or CONFIG_KTR_SELFTEST.
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/ktr.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "kmt_util.h"

#define DEBUGFS		"/sys/kernel/debug"
#define KMT_DIR		DEBUGFS "/kmemtrace"
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

static const char *ktr_available(void)
{
	struct statfs sfs;
	struct stat st;

	if (geteuid() != 0)
		return "KTR's debugfs files are for root only: run as root";
	if (statfs(DEBUGFS, &sfs) || sfs.f_type != DEBUGFS_MAGIC) {
		if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL))
			return "debugfs is not mounted on " DEBUGFS " and cannot be";
	}
	if (stat(KMT_DIR, &st))
		return KMT_DIR " is absent: kernel built without CONFIG_KMEMTRACE";
	if (stat(KTR_DIR, &st))
		return "kmemtrace/ktr is absent: kernel built without CONFIG_KTR";
	if (stat(KTR_DIR "/selftest", &st))
		return "kmemtrace/ktr/selftest is absent: no CONFIG_KTR_SELFTEST";
	return NULL;
}

/* Writes @s to @path; returns 0 or the errno of the failure. */
static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), err = 0;
	ssize_t n;

	if (fd < 0)
		return errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		err = errno;
	else if ((size_t)n != strlen(s))
		err = EIO;
	close(fd);
	return err;
}

/* Reads @path into a malloc'ed string; NULL on error. */
static char *read_str(const char *path)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
	}
	close(fd);
	if (!buf || n < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static uint64_t read_mask(void)
{
	char *s = read_str(KTR_DIR "/mask");
	uint64_t m = s ? strtoull(s, NULL, 0) : ~0ULL;

	free(s);
	return m;
}

/*
 * Splits a text view into its Trace column, oldest first. Checks the
 * header and the "C Idx Delta-T" columns of every line. Returns the
 * number of lines, or -1 if the layout is wrong.
 */
static int trace_lines(char *text, char **out, int max)
{
	char *save, *line;
	int n = 0, i;

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
			return -1;
		if (n == max)
			return -1;
		out[n++] = line + off;
	}
	/* Newest first in the file: reverse. */
	for (i = 0; i < n / 2; i++) {
		char *t = out[i];

		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
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
	struct view v;
};

FIXTURE_SETUP(ktr)
{
	const char *why = ktr_available();

	if (why)
		SKIP(return, "%s", why);
	self->saved_mask = read_mask();
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", FIRED_CLASSES));
	ASSERT_EQ(0, write_str(KTR_DIR "/clear", "1"));
}

FIXTURE_TEARDOWN(ktr)
{
	char buf[32];

	free(self->v.text);
	if (!ktr_available()) {
		snprintf(buf, sizeof(buf), "%#llx",
			 (unsigned long long)self->saved_mask);
		write_str(KTR_DIR "/mask", buf);
	}
}

/* Fires the known trace points and reads the text view back; -1 if not. */
static int fire_and_read(struct view *v)
{
	if (write_str(KTR_DIR "/selftest", "fire"))
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

	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0x40000000"));
	ASSERT_EQ(10, fire_and_read(&self->v));
	for (i = 0; i < (int)ARRAY_SIZE(fired); i++) {
		if (strstr(fired[i], ": gen ") || strstr(fired[i], ": dev "))
			continue;
		EXPECT_STREQ(fired[i], self->v.lines[j++]);
	}
}

/* A cleared mask records nothing; clear empties the view. */
TEST_F(ktr, frozen_and_cleared)
{
	ASSERT_EQ(12, fire_and_read(&self->v));
	ASSERT_EQ(0, write_str(KTR_DIR "/clear", "1"));
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0"));
	ASSERT_EQ(0, fire_and_read(&self->v));
	/* Clearing does not stop tracing. */
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0x40000000"));
	ASSERT_EQ(10, fire_and_read(&self->v));
}

/* The mask reads back as written, in hex, 64 bits. */
TEST_F(ktr, mask_read_write)
{
	char *s;

	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0x40000004\n"));
	s = read_str(KTR_DIR "/mask");
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("0x0000000040000004\n", s);
	free(s);
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0"));
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

	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0x40000001"));
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
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0x40000100"));
	EXPECT_EQ(0x40000000ULL | (compiled ? 0x100 : 0), read_mask());
	/* The test kernel leaves KTR_SPL out, as ktr(4)'s default does. */
	EXPECT_EQ(0, compiled);
}

/* clear and dump_on_oops refuse what they do not understand. */
TEST_F(ktr, control_bad_writes)
{
	char *s;

	EXPECT_EQ(EINVAL, write_str(KTR_DIR "/clear", "2"));
	EXPECT_EQ(EINVAL, write_str(KTR_DIR "/clear", "yes"));
	EXPECT_EQ(0, write_str(KTR_DIR "/dump_on_oops", "5"));
	EXPECT_EQ(EINVAL, write_str(KTR_DIR "/dump_on_oops", "-1"));
	EXPECT_EQ(EINVAL, write_str(KTR_DIR "/dump_on_oops", "many"));
	EXPECT_EQ(EINVAL, write_str(KTR_DIR "/dump_on_oops", "99999999999"));
	s = read_str(KTR_DIR "/dump_on_oops");
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("5\n", s);
	free(s);
	EXPECT_EQ(0, write_str(KTR_DIR "/dump_on_oops", "0"));
	EXPECT_EQ(EINVAL, write_str(KTR_DIR "/selftest", "frobnicate"));
	EXPECT_EQ(EINVAL, write_str(KTR_DIR "/selftest", "bench 0 5"));
	EXPECT_EQ(EINVAL, write_str(KTR_DIR "/selftest", "bench 10 5 junk"));
}

/* The decoder: the ktrdump built beside this test, else one on PATH. */
static char ktrdump[PATH_MAX];

static const char *find_ktrdump(void)
{
	char self[PATH_MAX - 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(ktrdump, sizeof(ktrdump), "%s/ktrdump", self);
			if (!access(ktrdump, X_OK))
				return NULL;
		}
	}
	if (!system("command -v ktrdump >/dev/null")) {
		snprintf(ktrdump, sizeof(ktrdump), "ktrdump");
		return NULL;
	}
	return "ktrdump is neither beside this test nor on PATH: build tools/kmemtrace";
}

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
	pid_t follower;		/* a ktrdump -f the teardown must stop */
};

FIXTURE_SETUP(dec)
{
	const char *why = ktr_available();

	self->dir[0] = '\0';
	if (!why)
		why = find_ktrdump();
	if (why)
		SKIP(return, "%s", why);
	self->saved_mask = read_mask();
	snprintf(self->dir, sizeof(self->dir), "/tmp/ktr_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", FIRED_CLASSES));
	ASSERT_EQ(0, write_str(KTR_DIR "/clear", "1"));
	ASSERT_EQ(12, fire_and_read(&self->v));
	/* Stop, so that every reader sees the same entries. */
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0"));
	ASSERT_EQ(0, kmt_run("mkdir %s/cap && cd " KTR_DIR " && for f in formats classes cpu*;"
			     " do cat $f > %s/cap/$f || exit 1; done", self->dir, self->dir));
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
	write_str(KTR_DIR "/mask", buf);
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
	/* Oldest first, with file:line, only one class, by name. */
	EXPECT_EQ(0, kmt_run("%s -o -l -m test %s/cap | sed -n 3p | grep -q '%s'", ktrdump, d,
			     " 0 kernel/kmemtrace/ktr_selftest.c:[0-9]* ktr selftest: start$"));
	/* Header (2 lines), the dev and test-or-dev entries. */
	EXPECT_EQ(0, kmt_run("test $(%s -m dev %s/cap | wc -l) = 4", ktrdump, d));
	/* The same class as a mask (KTR_DEV is bit 2); an unknown name fails. */
	EXPECT_EQ(0, kmt_run("test $(%s -m 0x4 %s/cap | wc -l) = 4", ktrdump, d));
	EXPECT_EQ(1, kmt_run("%s -m dev,nosuch %s/cap > /dev/null 2> %s/err", ktrdump, d, d));
	EXPECT_EQ(0, kmt_run("grep -q \"no class 'nosuch' in \" %s/err", d));
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

	ASSERT_EQ(0, write_str(KTR_DIR "/mask", FIRED_CLASSES));
	snprintf(out_path, sizeof(out_path), "%s/out", d);
	snprintf(err_path, sizeof(err_path), "%s/err", d);
	self->follower = fork();
	ASSERT_LE(0, self->follower);
	if (!self->follower) {
		if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr))
			_exit(127);
		execlp(ktrdump, ktrdump, "-f", "-i", "20", (char *)NULL);
		_exit(127);
	}
	/* The 2 header lines and the 12 entries already there, then 12 more. */
	ASSERT_TRUE(wait_lines(d, "out", 2 + nf));
	ASSERT_EQ(0, write_str(KTR_DIR "/selftest", "fire"));
	ASSERT_TRUE(wait_lines(d, "out", 2 + 2 * nf));
	/* It reads once more on SIGTERM and says how much it printed. */
	ASSERT_EQ(0, kill(self->follower, SIGTERM));
	ASSERT_EQ(self->follower, waitpid(self->follower, &status, 0));
	self->follower = 0;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
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

/* A corrupt or truncated capture: the file and offset named, exit 1. */
TEST_F(dec, decoder_bad_input)
{
	const char *d = self->dir;
	char *err;

	/* Cut 5 bytes off the end of every CPU file that holds entries. */
	ASSERT_EQ(0, kmt_run("cd %s/cap && for f in cpu*; do s=$(wc -c < $f);"
			     " [ $s -le 40 ] || { head -c $((s - 5)) $f > t && mv t $f; };"
			     " done", d));
	EXPECT_EQ(1, kmt_run("%s %s/cap > /dev/null 2> %s/err", ktrdump, d, d));
	err = read_in(d, "err");
	ASSERT_NE(NULL, err);
	EXPECT_NE(NULL, strstr(err, "/cap/cpu")) TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(err, ": offset ")) TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(err, "truncated")) TH_LOG("stderr: %s", err);
	free(err);
	/* Only a cpu0 of 7 bytes beside the format table. */
	ASSERT_EQ(0, kmt_run("rm -f %s/cap/cpu* && printf garbage > %s/cap/cpu0", d, d));
	EXPECT_EQ(1, kmt_run("%s %s/cap > /dev/null 2> %s/err", ktrdump, d, d));
	err = read_in(d, "err");
	ASSERT_NE(NULL, err);
	EXPECT_NE(NULL, strstr(err, "/cap/cpu0: offset 0: truncated header"))
		TH_LOG("stderr: %s", err);
	free(err);
	EXPECT_EQ(1, kmt_run("%s --no-such-option > /dev/null 2>&1", ktrdump));
	EXPECT_EQ(1, kmt_run("%s -c x > /dev/null 2>&1", ktrdump));
}

/* Every KTR file is root's, with no access at all for group or others. */
TEST_F(ktr, files_root_only)
{
	struct dirent *de;
	char path[PATH_MAX];
	struct stat st;
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
	/* mask classes trace formats stats clear dump_on_oops selftest cpu0 */
	EXPECT_LE(9, n);
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

/* ktr_freeze() stops the trace until the mask is written again. */
TEST_F(ktr, freeze_until_mask_written)
{
	EXPECT_EQ(0, stats_frozen());
	ASSERT_EQ(12, fire_and_read(&self->v));
	ASSERT_EQ(0, write_str(KTR_DIR "/selftest", "freeze"));
	EXPECT_EQ(0ULL, read_mask());
	EXPECT_EQ(1, stats_frozen());
	/* Nothing more records; the buffer keeps what led there. */
	ASSERT_EQ(13, fire_and_read(&self->v));
	EXPECT_STREQ("ktr selftest: freezing on request", self->v.lines[12]);
	/* The benchmark, which sets the mask itself, refuses to thaw it. */
	EXPECT_EQ(EBUSY, write_str(KTR_DIR "/selftest", "bench 10 1"));
	EXPECT_EQ(0ULL, read_mask());
	/* Writing the mask by hand starts the trace again. */
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", FIRED_CLASSES));
	EXPECT_EQ(0x40000005ULL, read_mask());
	EXPECT_EQ(0, stats_frozen());
	ASSERT_EQ(25, fire_and_read(&self->v));
}

/* Root only: an unprivileged process cannot open any KTR file. */
TEST_F(ktr, unprivileged_open_denied)
{
	static const char *const files[] = {
		KTR_DIR "/mask", KTR_DIR "/trace", KTR_DIR "/cpu0",
		KTR_DIR "/formats", KTR_DIR "/selftest",
	};
	unsigned int i;
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		for (i = 0; i < ARRAY_SIZE(files); i++) {
			int fd = open(files[i], O_RDONLY);

			if (fd >= 0 || errno != EACCES)
				_exit(1 + i);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
