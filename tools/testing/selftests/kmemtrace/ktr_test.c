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
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

#define DEBUGFS		"/sys/kernel/debug"
#define KMT_DIR		DEBUGFS "/kmemtrace"
#define KTR_DIR		KMT_DIR "/ktr"
#define NOBODY		65534
#define ALL_CLASSES	"0xffffffffffffffff"

/* What "fire" records, oldest first, with every class enabled. */
static const char *const fired[] = {
	"ktr selftest: start",
	"ktr selftest: int -42",
	"ktr selftest: hex beef unsigned 4000000000",
	"ktr selftest: str hello long -5 sym ktr_selftest_fire",
	"ktr selftest: widths [ab    ] [   42] [00000abc] [z]",
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
		return KTR_DIR " is absent: kernel built without CONFIG_KTR "
		       "(CONFIG_KMEMTRACE is set)";
	if (stat(KTR_DIR "/selftest", &st))
		return KTR_DIR "/selftest is absent: kernel built without "
		       "CONFIG_KTR_SELFTEST (CONFIG_KMEMTRACE is set)";
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

FIXTURE(ktr) {
	uint64_t saved_mask;	/* restored by the teardown */
	char *text;		/* the last text view read */
	char *lines[64];
	int n;
};

FIXTURE_SETUP(ktr)
{
	const char *why = ktr_available();

	if (why)
		SKIP(return, "%s", why);
	self->saved_mask = read_mask();
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", ALL_CLASSES));
	ASSERT_EQ(0, write_str(KTR_DIR "/clear", "1"));
}

FIXTURE_TEARDOWN(ktr)
{
	char buf[32];

	free(self->text);
	if (!ktr_available()) {
		snprintf(buf, sizeof(buf), "%#llx",
			 (unsigned long long)self->saved_mask);
		write_str(KTR_DIR "/mask", buf);
	}
}

/* Fires the known trace points and reads the text view back. */
static int fire_and_read(struct __test_metadata *_metadata,
			 FIXTURE_DATA(ktr) *self)
{
	EXPECT_EQ(0, write_str(KTR_DIR "/selftest", "fire"));
	free(self->text);
	self->text = read_str(KTR_DIR "/trace");
	if (!self->text)
		return -1;
	self->n = trace_lines(self->text, self->lines, 64);
	return self->n;
}

/* Every class: the text view shows exactly the fired lines, in order. */
TEST_F(ktr, text_view_all_classes)
{
	int i;

	ASSERT_EQ((int)(sizeof(fired) / sizeof(fired[0])), fire_and_read(_metadata, self));
	for (i = 0; i < self->n; i++)
		EXPECT_STREQ(fired[i], self->lines[i]);
}

/* Only KTR_TEST: the KTR_GEN and KTR_DEV lines go, the mixed one stays. */
TEST_F(ktr, text_view_one_class)
{
	int i, j = 0;

	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0x40000000"));
	ASSERT_EQ(10, fire_and_read(_metadata, self));
	for (i = 0; i < (int)(sizeof(fired) / sizeof(fired[0])); i++) {
		if (strstr(fired[i], ": gen ") || strstr(fired[i], ": dev "))
			continue;
		EXPECT_STREQ(fired[i], self->lines[j++]);
	}
}

/* A cleared mask records nothing; clear empties the view. */
TEST_F(ktr, frozen_and_cleared)
{
	ASSERT_EQ(12, fire_and_read(_metadata, self));
	ASSERT_EQ(0, write_str(KTR_DIR "/clear", "1"));
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0"));
	ASSERT_EQ(0, fire_and_read(_metadata, self));
	/* Clearing does not stop tracing. */
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0x40000000"));
	ASSERT_EQ(10, fire_and_read(_metadata, self));
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
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
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
	int compiled = -1, enabled;
	char *p;

	ASSERT_NE(NULL, classes);
	p = strstr(classes, "\n8 spl ");
	ASSERT_NE(NULL, p);
	ASSERT_EQ(2, sscanf(p + 7, "%d %d", &compiled, &enabled));
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

/* Runs a shell command; returns its exit status, or -1. */
static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ktrdump prints what the kernel prints, live and from a saved copy. */
TEST_F(ktr, decoder_matches_text_view)
{
	char *a, *b;

	if (run("command -v ktrdump >/dev/null"))
		SKIP(return, "ktrdump (tools/kmemtrace) is not installed");
	ASSERT_EQ(12, fire_and_read(_metadata, self));
	/* Freeze, so that both readers see the same entries. */
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0"));
	ASSERT_EQ(0, run("cat " KTR_DIR "/trace > /tmp/ktr.kernel"));
	ASSERT_EQ(0, run("ktrdump > /tmp/ktr.live"));
	ASSERT_EQ(0, run("rm -rf /tmp/ktr.cap && mkdir /tmp/ktr.cap && "
			 "cd " KTR_DIR " && for f in formats classes cpu*; do cat $f > /tmp/ktr.cap/$f; done"));
	ASSERT_EQ(0, run("ktrdump /tmp/ktr.cap > /tmp/ktr.saved"));
	a = read_str("/tmp/ktr.kernel");
	ASSERT_NE(NULL, a);
	b = read_str("/tmp/ktr.live");
	ASSERT_NE(NULL, b);
	EXPECT_STREQ(a, b);
	free(b);
	b = read_str("/tmp/ktr.saved");
	ASSERT_NE(NULL, b);
	EXPECT_STREQ(a, b);
	free(b);
	free(a);
	/* Oldest first, with file:line, only CPU filters and class names. */
	EXPECT_EQ(0, run("ktrdump -o -l -m test /tmp/ktr.cap | sed -n 3p | "
			 "grep -qx '. *[0-9a-f]* *0 kernel/kmemtrace/ktr_selftest.c:[0-9]* ktr selftest: start'"));
	EXPECT_EQ(0, run("test $(ktrdump -m dev /tmp/ktr.cap | wc -l) = 4"));
}

/* A corrupt or truncated capture: the file and offset named, exit 1. */
TEST_F(ktr, decoder_bad_input)
{
	char *err;

	if (run("command -v ktrdump >/dev/null"))
		SKIP(return, "ktrdump (tools/kmemtrace) is not installed");
	ASSERT_EQ(12, fire_and_read(_metadata, self));
	ASSERT_EQ(0, write_str(KTR_DIR "/mask", "0"));
	ASSERT_EQ(0, run("rm -rf /tmp/ktr.bad && mkdir /tmp/ktr.bad && "
			 "(cd " KTR_DIR " && for f in formats classes cpu*; do cat $f > /tmp/ktr.bad/$f; done) && "
			 "for f in /tmp/ktr.bad/cpu*; do s=$(wc -c < $f); "
			 "if [ $s -gt 40 ]; then head -c $((s - 5)) $f > $f.t && mv $f.t $f; fi; done"));
	EXPECT_EQ(1, run("ktrdump /tmp/ktr.bad > /dev/null 2> /tmp/ktr.err"));
	err = read_str("/tmp/ktr.err");
	ASSERT_NE(NULL, err);
	EXPECT_NE(NULL, strstr(err, "/tmp/ktr.bad/cpu")) TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(err, ": offset ")) TH_LOG("stderr: %s", err);
	EXPECT_NE(NULL, strstr(err, "truncated")) TH_LOG("stderr: %s", err);
	free(err);
	/* Only a cpu0 of 7 bytes beside the format table. */
	ASSERT_EQ(0, run("rm -f /tmp/ktr.bad/cpu* && printf 'garbage' > /tmp/ktr.bad/cpu0"));
	EXPECT_EQ(1, run("ktrdump /tmp/ktr.bad > /dev/null 2> /tmp/ktr.err"));
	err = read_str("/tmp/ktr.err");
	ASSERT_NE(NULL, err);
	EXPECT_NE(NULL, strstr(err, "/tmp/ktr.bad/cpu0: offset 0: truncated header"))
		TH_LOG("stderr: %s", err);
	free(err);
	EXPECT_EQ(1, run("ktrdump --no-such-option > /dev/null 2>&1"));
	EXPECT_EQ(1, run("ktrdump -c x > /dev/null 2>&1"));
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
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
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
