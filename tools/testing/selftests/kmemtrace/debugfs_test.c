// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtrace debugfs interface tests: the files a kernel built with
 * CONFIG_KMEMTRACE creates in /sys/kernel/debug/kmemtrace/, as described
 * in Documentation/ABI/testing/debugfs-kmemtrace.
 *
 * Needs root. Skips, saying why, on a kernel without CONFIG_KMEMTRACE.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <grp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/kmemtrace.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"

#define DEBUGFS		"/sys/kernel/debug"
#define KMT_DIR		DEBUGFS "/kmemtrace"
#define ABI_VERSION	KMT_DIR "/abi_version"

/* An unprivileged identity for the permission tests. */
#define NOBODY		65534

/* The 2008 ABI was version 1; versions only ever go up from there. */
static_assert(KMEMTRACE_ABI_VERSION >= 1, "kmemtrace ABI versions start at 1");

/*
 * kmt_available() - make sure debugfs is mounted and kmemtrace is there.
 * Returns NULL when the tests can run, or why they cannot.
 */
static const char *kmt_available(void)
{
	struct statfs sfs;
	struct stat st;

	if (geteuid() != 0)
		return "kmemtrace's debugfs files are for root only: run as root";
	if (statfs(DEBUGFS, &sfs) || sfs.f_type != DEBUGFS_MAGIC) {
		if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL))
			return "debugfs is not mounted on " DEBUGFS " and cannot be";
	}
	if (stat(KMT_DIR, &st) && errno == ENOENT)
		return KMT_DIR " is absent: kernel built without CONFIG_KMEMTRACE";
	return NULL;
}

/* read_all() - read fd to EOF in reads of @chunk bytes; returns the length. */
static ssize_t read_all(int fd, char *buf, size_t size, size_t chunk)
{
	size_t len = 0;
	ssize_t n;

	while (len < size) {
		n = read(fd, buf + len, chunk < size - len ? chunk : size - len);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		len += n;
	}
	return len;
}

FIXTURE(abi_version) {
	int fd;		/* abi_version, opened read-only */
	char expected[32];	/* what the file must contain */
};

FIXTURE_SETUP(abi_version)
{
	const char *why = kmt_available();

	self->fd = -1;
	if (why)
		SKIP(return, "%s", why);
	snprintf(self->expected, sizeof(self->expected), "%d\n",
		 KMEMTRACE_ABI_VERSION);
	self->fd = open(ABI_VERSION, O_RDONLY);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", ABI_VERSION, strerror(errno));
}

FIXTURE_TEARDOWN(abi_version)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* The seed ABI: a regular file, mode 0400, owned by root. */
TEST_F(abi_version, mode)
{
	struct stat st;

	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0400U, st.st_mode & 07777);
	EXPECT_EQ(0U, st.st_uid);
	EXPECT_EQ(0U, st.st_gid);
}

/* The text is the uapi header's version in decimal and a newline. */
TEST_F(abi_version, content)
{
	char buf[64];
	ssize_t len;

	len = read_all(self->fd, buf, sizeof(buf) - 1, sizeof(buf));
	ASSERT_EQ((ssize_t)strlen(self->expected), len);
	buf[len] = '\0';
	EXPECT_STREQ(self->expected, buf);
}

/* One byte at a time gives the same text, then EOF, and rereads work. */
TEST_F(abi_version, short_reads_and_eof)
{
	char buf[64];
	ssize_t len;

	len = read_all(self->fd, buf, sizeof(buf) - 1, 1);
	ASSERT_EQ((ssize_t)strlen(self->expected), len);
	buf[len] = '\0';
	EXPECT_STREQ(self->expected, buf);
	EXPECT_EQ(0, read(self->fd, buf, sizeof(buf)));

	ASSERT_EQ(0, lseek(self->fd, 0, SEEK_SET));
	len = read_all(self->fd, buf, sizeof(buf) - 1, sizeof(buf));
	ASSERT_EQ((ssize_t)strlen(self->expected), len);
	buf[len] = '\0';
	EXPECT_STREQ(self->expected, buf);

	EXPECT_EQ(0, pread(self->fd, buf, sizeof(buf), 4096));
}

/* The file has no write method: writing fails and changes nothing. */
TEST_F(abi_version, not_writable)
{
	char buf[64];
	ssize_t len;
	int wfd;

	wfd = open(ABI_VERSION, O_WRONLY);
	if (wfd >= 0) {
		/* root passes the permission check; the write itself fails */
		EXPECT_EQ(-1, write(wfd, "99\n", 3));
		EXPECT_EQ(EINVAL, errno);
		close(wfd);
	} else {
		EXPECT_EQ(EACCES, errno);
	}
	len = read_all(self->fd, buf, sizeof(buf) - 1, sizeof(buf));
	ASSERT_EQ((ssize_t)strlen(self->expected), len);
	buf[len] = '\0';
	EXPECT_STREQ(self->expected, buf);
}

/*
 * Mode 0400 keeps other users out. debugfs' root is 0700, which would
 * hide the file's own mode, so the fixture opens it up for the duration
 * of the test and its teardown restores it, whatever the test did.
 */
FIXTURE(unprivileged) {
	mode_t root_mode;	/* debugfs root's mode before the test */
	bool restore;		/* root_mode must be put back */
};

FIXTURE_SETUP(unprivileged)
{
	const char *why = kmt_available();
	struct stat root;

	self->restore = false;
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, stat(DEBUGFS, &root));
	self->root_mode = root.st_mode & 07777;
	ASSERT_EQ(0, chmod(DEBUGFS, 0755));
	self->restore = true;
}

FIXTURE_TEARDOWN(unprivileged)
{
	if (self->restore)
		EXPECT_EQ(0, chmod(DEBUGFS, self->root_mode));
}

TEST_F(unprivileged, open_denied)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		fd = open(ABI_VERSION, O_RDONLY);
		if (fd >= 0)
			_exit(3);
		_exit(errno == EACCES ? 0 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 2: cannot drop privileges, 3: opened, 4: wrong errno */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* Every file under kmemtrace/ (nftw() has no user data: globals). */
#define KMT_MAX_FILES	1024
static char kmt_files[KMT_MAX_FILES][128];
static mode_t kmt_modes[KMT_MAX_FILES];
static int kmt_nfiles;

static int kmt_add(const char *path, mode_t mode)
{
	if (kmt_nfiles == KMT_MAX_FILES)
		return -1;	/* stops nftw(), and fails the test */
	snprintf(kmt_files[kmt_nfiles], sizeof(kmt_files[0]), "%s", path);
	kmt_modes[kmt_nfiles++] = mode & 07777;
	return 0;
}

static int kmt_add_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return flag == FTW_F ? kmt_add(path, st->st_mode) : 0;
}

/* Drop capability @cap from this process's effective set. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[cap / 32].effective &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &hdr, data);
}

/*
 * In a child, as @uid without capability @cap (-1: none dropped), open
 * @path with @flags: the errno it fails with, 0 if it opened, or 100 +
 * the step that could not be set up.
 */
static int open_as(const char *path, int flags, uid_t uid, int cap)
{
	int status, fd;
	pid_t pid = fork();

	if (pid < 0)
		return 101;
	if (!pid) {
		if (cap >= 0 && drop_cap(cap))
			_exit(102);
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(103);
		fd = open(path, flags);
		_exit(fd >= 0 ? 0 : errno);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 104;
	return WEXITSTATUS(status);
}

/* Writes @s to kmemtrace's enable switch; 0 or -errno. */
static int set_enable(const char *s)
{
	int fd = open(KMT_DIR "/enable", O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Every kmemtrace file and /dev/kmon: another user is kept out by the
 * mode (EACCES); root without CAP_SYSLOG cannot read one, and root
 * without CAP_SYS_ADMIN cannot write one or open /dev/kmon (EPERM),
 * while each capability alone still does what it allows; root with both
 * opens every one. (Lockdown is checked by scripts/check, which boots
 * with lockdown=confidentiality.)
 */
TEST_F(unprivileged, every_file_checked)
{
	int i, checked = 0, fd;
	char was[8] = "";
	struct stat st;

	fd = open(KMT_DIR "/enable", O_RDONLY);
	if (fd >= 0) {
		ASSERT_LT(0, read(fd, was, sizeof(was) - 1));
		close(fd);
		/* The first enable makes the relay files, cpu<n>. */
		ASSERT_EQ(0, set_enable("1"));
		ASSERT_EQ(0, set_enable(was));
	}
	kmt_nfiles = 0;
	ASSERT_EQ(0, nftw(KMT_DIR, kmt_add_file, 8, FTW_PHYS))
		TH_LOG("over %d files?", KMT_MAX_FILES);
	if (!stat("/dev/kmon", &st))
		ASSERT_EQ(0, kmt_add("/dev/kmon", st.st_mode));
	ASSERT_LT(0, kmt_nfiles);
	for (i = 0; i < kmt_nfiles; i++) {
		const char *f = kmt_files[i];
		bool kmon = !strcmp(f, "/dev/kmon");
		int rd = kmt_modes[i] & 0400, wr = kmt_modes[i] & 0200;
		int flags = rd ? O_RDONLY : O_WRONLY;

		/* Root's alone by mode. */
		EXPECT_EQ(0U, kmt_modes[i] & 0077) TH_LOG("%s: mode %04o", f, kmt_modes[i]);
		EXPECT_EQ(EACCES, open_as(f, flags, NOBODY, -1)) TH_LOG("%s as nobody", f);
		EXPECT_EQ(0, open_as(f, flags, 0, -1)) TH_LOG("%s as root", f);
		if (rd)
			EXPECT_EQ(EPERM, open_as(f, O_RDONLY, 0, CAP_SYSLOG))
				TH_LOG("%s read without CAP_SYSLOG", f);
		if (rd && !kmon)
			EXPECT_EQ(0, open_as(f, O_RDONLY, 0, CAP_SYS_ADMIN))
				TH_LOG("%s read without CAP_SYS_ADMIN", f);
		if (wr && !kmon) {
			EXPECT_EQ(EPERM, open_as(f, O_WRONLY, 0, CAP_SYS_ADMIN))
				TH_LOG("%s written without CAP_SYS_ADMIN", f);
			EXPECT_EQ(0, open_as(f, O_WRONLY, 0, CAP_SYSLOG))
				TH_LOG("%s written without CAP_SYSLOG", f);
		}
		if (rd && wr)
			EXPECT_EQ(EPERM, open_as(f, O_RDWR, 0, kmon ? CAP_SYSLOG : CAP_SYS_ADMIN))
				TH_LOG("%s opened O_RDWR without a capability", f);
		if (kmon)
			EXPECT_EQ(EPERM, open_as(f, O_RDONLY, 0, CAP_SYS_ADMIN))
				TH_LOG("%s without CAP_SYS_ADMIN", f);
		checked++;
	}
	TH_LOG("%d files checked", checked);
}

/* ---- Bad input ------------------------------------------------------- */

#define KTR_DIR		KMT_DIR "/ktr"
/* ktr.c, kmon_selftest.c, ktr_selftest.c, alloc_selftest.c */
#define KTR_DUMP_MAX	1048576
#define KMON_TEST_MAX	100000
#define KMON_TEST_IRQ_MAX	1000
#define KTR_BENCH_MAX_ROUNDS	101
#define KMT_ST_STORM_MAX	100000000

/*
 * Write @len bytes of @buf to @path at offset @off (-1: write()); 0 if
 * all were taken, -errno, or -EIO for a short write.
 */
static int write_at(const char *path, const void *buf, size_t len, off_t off)
{
	int fd = open(path, O_WRONLY), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = off < 0 ? write(fd, buf, len) : pwrite(fd, buf, len, off);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

static int write_s(const char *path, const char *s)
{
	return write_at(path, s, strlen(s), -1);
}

/*
 * Write @s to @path after reading a byte on the same descriptor, which
 * moves its offset; pwrite() cannot, debugfs files refuse it (ESPIPE).
 * 0 if @s was taken, -errno, or -EIO.
 */
static int write_after_read(const char *path, const char *s)
{
	int fd = open(path, O_RDWR), ret = 0;
	char c;

	if (fd < 0)
		return -errno;
	if (read(fd, &c, 1) != 1)
		ret = -EIO;
	else if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/* The text of @path, or "" if it cannot be read. */
static const char *read_s(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read_all(fd, buf, size - 1, size);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

FIXTURE(bad_input) {
	char enable[32], mask[32], ktr_mask[32], dump[32];
	void *none;		/* a PROT_NONE page */
	void *low;		/* an address in page 0, never mapped */
};

FIXTURE_SETUP(bad_input)
{
	const char *why = kmt_available();

	self->none = MAP_FAILED;
	self->low = (void *)16;
	if (why)
		SKIP(return, "%s", why);
	read_s(KMT_DIR "/enable", self->enable, sizeof(self->enable));
	read_s(KMT_DIR "/mask", self->mask, sizeof(self->mask));
	read_s(KTR_DIR "/mask", self->ktr_mask, sizeof(self->ktr_mask));
	read_s(KTR_DIR "/dump_on_oops", self->dump, sizeof(self->dump));
	self->none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->none != MAP_FAILED);
}

FIXTURE_TEARDOWN(bad_input)
{
	if (self->none == MAP_FAILED)
		return;
	munmap(self->none, 4096);
	/* Each put back as it was; a file the kernel lacks is left alone. */
	if (self->mask[0])
		EXPECT_EQ(0, write_s(KMT_DIR "/mask", self->mask));
	if (self->enable[0])
		EXPECT_EQ(0, write_s(KMT_DIR "/enable", self->enable));
	if (self->ktr_mask[0])
		EXPECT_EQ(0, write_s(KTR_DIR "/mask", self->ktr_mask));
	if (self->dump[0])
		EXPECT_EQ(0, write_s(KTR_DIR "/dump_on_oops", self->dump));
}

/*
 * enable and mask take a whole number: simple_attr_write() would read
 * the first 23 bytes of "0000000000000000000000001" as 0 and report all
 * 25 taken; a write at an offset would set the number again.
 */
TEST_F(bad_input, enable_and_mask_whole_numbers)
{
	static const char *const bad[] = {
		"0000000000000000000000001", "00000000000000000000000\n",
		"-1", "-0", "1 1", "0x", "\n", "1x", " ",
	};
	char buf[32];
	unsigned int i;

	if (!self->enable[0] || !self->mask[0])
		SKIP(return, "no kmemtrace/enable: kernel built without CONFIG_KMEMTRACE_ALLOC");
	ASSERT_EQ(0, write_s(KMT_DIR "/enable", "1"));
	ASSERT_EQ(0, write_s(KMT_DIR "/mask", "0x10000"));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, write_s(KMT_DIR "/enable", bad[i]))
			TH_LOG("enable \"%s\"", bad[i]);
		EXPECT_EQ(-EINVAL, write_s(KMT_DIR "/mask", bad[i])) TH_LOG("mask \"%s\"", bad[i]);
	}
	/* Beyond 64 bits: kstrtoull()'s ERANGE. */
	EXPECT_EQ(-ERANGE, write_s(KMT_DIR "/enable", "18446744073709551616"));
	EXPECT_EQ(-ERANGE, write_s(KMT_DIR "/mask", "0x10000000000000000"));
	/* At an offset, even a good value. */
	EXPECT_EQ(-EINVAL, write_after_read(KMT_DIR "/enable", "0"));
	EXPECT_EQ(-EINVAL, write_after_read(KMT_DIR "/mask", "0x20000"));
	EXPECT_EQ(-ESPIPE, write_at(KMT_DIR "/enable", "0", 1, 1));
	EXPECT_STREQ("1\n", read_s(KMT_DIR "/enable", buf, sizeof(buf)));
	EXPECT_STREQ("0x10000\n", read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	/* 23 bytes is whole and taken; 24 is not. */
	EXPECT_EQ(0, write_s(KMT_DIR "/mask", "0x00000000000000020000\n"));
	EXPECT_STREQ("0x20000\n", read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, write_s(KMT_DIR "/mask", "0x000000000000000010000\n"));
	EXPECT_STREQ("0x20000\n", read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	EXPECT_EQ(0, write_s(KMT_DIR "/enable", "0000000000000000000000\n"));
	EXPECT_STREQ("0\n", read_s(KMT_DIR "/enable", buf, sizeof(buf)));
}

/* Edge values of the ktr/ controls, and writes at an offset. */
TEST_F(bad_input, ktr_controls)
{
	char buf[64], was[64];

	if (!self->ktr_mask[0])
		SKIP(return, "no kmemtrace/ktr: kernel built without CONFIG_KTR");
	/* dump_on_oops: up to KTR_DUMP_MAX entries. */
	snprintf(buf, sizeof(buf), "%d\n", KTR_DUMP_MAX);
	EXPECT_EQ(0, write_s(KTR_DIR "/dump_on_oops", buf));
	EXPECT_STREQ(buf, read_s(KTR_DIR "/dump_on_oops", was, sizeof(was)));
	snprintf(buf, sizeof(buf), "%d", KTR_DUMP_MAX + 1);
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/dump_on_oops", buf));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/dump_on_oops", "4294967296"));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/dump_on_oops", "0123456789abcdef"));
	EXPECT_EQ(-EINVAL, write_after_read(KTR_DIR "/dump_on_oops", "5"));
	EXPECT_EQ(0, write_s(KTR_DIR "/dump_on_oops", "0"));
	EXPECT_STREQ("0\n", read_s(KTR_DIR "/dump_on_oops", was, sizeof(was)));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/dump_on_oops", "-0"));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/dump_on_oops", ""));

	/* mask: a write at an offset changes nothing. */
	read_s(KTR_DIR "/mask", was, sizeof(was));
	EXPECT_EQ(-EINVAL, write_after_read(KTR_DIR "/mask", "0x1"));
	EXPECT_STREQ(was, read_s(KTR_DIR "/mask", buf, sizeof(buf)));

	/* clear: "1" and nothing else. */
	EXPECT_EQ(0, write_s(KTR_DIR "/clear", "1\n"));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/clear", "0"));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/clear", "11"));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/clear", "1 1"));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/clear", "0x1"));
	EXPECT_EQ(-EINVAL, write_s(KTR_DIR "/clear", "12345678"));
	EXPECT_EQ(-EINVAL, write_at(KTR_DIR "/clear", "1", 1, 1));
}

/* The self-test triggers refuse anything but their commands, in range. */
TEST_F(bad_input, selftest_triggers)
{
	static const char *const alloc_bad[] = {
		"storm 0", "storm 100000001", "storm -1", "storm 1 bogus", "storm",
		"storm ", "storm x", "storm 18446744073709551617", "bogus", "run run",
		"", "run\nrun", "storm 1 cache page", "0123456789012345678901234567890123",
	};
	static const char *const kmon_bad[] = {
		"task 0", "task 100001", "reserve 100001", "irq 1001", "softirq 1001",
		"nmi 1001", "task 4294967297", "task -1", "task 1 junk", "task", "task ",
		"bogus 1", "taskx 1", "task 0x10", "size 1026", "rsize 1026", " 1", "",
		"task 4294967296", "0123456789012345678901234567890123",
	};
	static const char *const ktr_bad[] = {
		"bench 0 1", "bench 1 0", "bench 10000001 1", "bench 1 102",
		"bench 4294967297 1", "bench 1 4294967297", "bench 1", "bench 1 1 1",
		"bench -1 1", "bench", "bench  1 1", "bench 0x10 1", "fire now",
		"freeze 1", "", "Fire",
		"bench 1 1 01234567890123456789012345678901234567890123456789012345",
	};
	char before[128], after[128];
	unsigned int i;

	if (!access(KMT_DIR "/alloc_selftest", F_OK)) {
		for (i = 0; i < ARRAY_SIZE(alloc_bad); i++) {
			int ret = write_s(KMT_DIR "/alloc_selftest", alloc_bad[i]);

			EXPECT_EQ(-EINVAL, ret) TH_LOG("alloc_selftest \"%s\"", alloc_bad[i]);
		}
		/* The limit itself is taken: checked by parsing, not run. */
	}
	if (!access(KMT_DIR "/kmon_selftest", F_OK)) {
		ASSERT_EQ(0, write_s(KMT_DIR "/kmon_selftest", "task 2"));
		read_s(KMT_DIR "/kmon_selftest", before, sizeof(before));
		for (i = 0; i < ARRAY_SIZE(kmon_bad); i++) {
			int ret = write_s(KMT_DIR "/kmon_selftest", kmon_bad[i]);

			EXPECT_EQ(-EINVAL, ret) TH_LOG("kmon_selftest \"%s\"", kmon_bad[i]);
		}
		/* A refused command changes nothing the trigger reports. */
		EXPECT_STREQ(before, read_s(KMT_DIR "/kmon_selftest", after, sizeof(after)));
		EXPECT_EQ(-EINVAL, write_after_read(KMT_DIR "/kmon_selftest", "task 1"));
	}
	if (!access(KTR_DIR "/selftest", F_OK)) {
		for (i = 0; i < ARRAY_SIZE(ktr_bad); i++) {
			int ret = write_s(KTR_DIR "/selftest", ktr_bad[i]);

			EXPECT_EQ(-EINVAL, ret) TH_LOG("ktr/selftest \"%s\"", ktr_bad[i]);
		}
		/* The rounds' limit is taken (and quick with one call). */
		EXPECT_EQ(0, write_s(KTR_DIR "/selftest", "bench 1 101"));
		read_s(KTR_DIR "/selftest", after, sizeof(after));
		EXPECT_NE(NULL, strstr(after, "# 1 calls, 101 rounds")) TH_LOG("%s", after);
		EXPECT_EQ(-EINVAL, write_after_read(KTR_DIR "/selftest", "fire"));
	}
}

/*
 * Every file: a write from page 0 or another unmapped page fails with EFAULT
 * and changes nothing; a read into one fails with EFAULT and consumes
 * nothing (a read of 0 there is the end of the file: a good read that
 * follows gets nothing either). Relay's cpu<n> files hold events for
 * the reads, and a read-only file refuses a write with EINVAL.
 */
TEST_F(bad_input, unmapped_buffers)
{
	int i, j, fd, err[2], checked = 0, relay_faults = 0;
	char before[4][32], buf[64];
	ssize_t n, bad[2];
	char *good;

	good = malloc(1 << 20);
	ASSERT_NE(NULL, good);
	if (self->enable[0]) {
		ASSERT_EQ(0, write_s(KMT_DIR "/enable", "1"));
		if (!access(KMT_DIR "/alloc_selftest", F_OK))
			ASSERT_EQ(0, write_s(KMT_DIR "/alloc_selftest", "storm 100"));
		ASSERT_EQ(0, write_s(KMT_DIR "/enable", "0"));
	}
	kmt_nfiles = 0;
	ASSERT_EQ(0, nftw(KMT_DIR, kmt_add_file, 8, FTW_PHYS));
	read_s(KMT_DIR "/enable", before[0], sizeof(before[0]));
	read_s(KMT_DIR "/mask", before[1], sizeof(before[1]));
	read_s(KTR_DIR "/mask", before[2], sizeof(before[2]));
	read_s(KTR_DIR "/dump_on_oops", before[3], sizeof(before[3]));
	for (i = 0; i < kmt_nfiles; i++) {
		const char *f = kmt_files[i];

		if (kmt_modes[i] & 0200) {
			EXPECT_EQ(-EFAULT, write_at(f, self->low, 2, -1))
				TH_LOG("%s from page 0", f);
			EXPECT_EQ(-EFAULT, write_at(f, self->none, 2, -1)) TH_LOG("%s unmapped", f);
		} else {
			EXPECT_EQ(-EINVAL, write_s(f, "1\n")) TH_LOG("%s is read-only", f);
		}
		if (!(kmt_modes[i] & 0400))
			continue;
		fd = open(f, O_RDONLY);
		ASSERT_LE(0, fd) TH_LOG("%s: %s", f, strerror(errno));
		bad[0] = read(fd, self->none, 4096);
		err[0] = errno;
		bad[1] = read(fd, self->low, 4096);
		err[1] = errno;
		n = read(fd, good, 1 << 20);
		close(fd);
		/* What the bad reads found is still there, not consumed. */
		EXPECT_LE(0, n) TH_LOG("%s: %s", f, strerror(errno));
		for (j = 0; j < 2; j++) {
			if (n > 0) {
				EXPECT_EQ(-1, bad[j]) TH_LOG("%s: read %d gave %zd", f, j, bad[j]);
				EXPECT_EQ(EFAULT, err[j]) TH_LOG("%s: read %d", f, j);
			} else {
				EXPECT_EQ(0, bad[j]) TH_LOG("%s: read %d of an empty file", f, j);
			}
		}
		if (n > 0 && !strncmp(strrchr(f, '/'), "/cpu", 4))
			relay_faults++;
		checked++;
	}
	/* The storm's CPU had events in its file: the check is not blind. */
	if (self->enable[0])
		EXPECT_LT(0, relay_faults);
	EXPECT_STREQ(before[0], read_s(KMT_DIR "/enable", buf, sizeof(buf)));
	EXPECT_STREQ(before[1], read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	EXPECT_STREQ(before[2], read_s(KTR_DIR "/mask", buf, sizeof(buf)));
	EXPECT_STREQ(before[3], read_s(KTR_DIR "/dump_on_oops", buf, sizeof(buf)));
	TH_LOG("%d files checked", checked);
	free(good);
}

/* Masks the writers of two_writers alternate between. */
static const char *const race_masks[] = { "0x10000", "0x70000", "0x20000", "0x50000" };

/*
 * A writer of two_writers: @n rounds of enable and a mask of its pair
 * (@who 0 or 1); exits 0, or 1 + the round whose write failed.
 */
static void race_writer(int who, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (write_s(KMT_DIR "/enable", (i + who) & 1 ? "1" : "0") ||
		    write_s(KMT_DIR "/mask", race_masks[2 * who + (i & 1)]) ||
		    write_s(KTR_DIR "/mask", i & 1 ? "0" : "0x1"))
			_exit(1 + i);
	}
	_exit(0);
}

/*
 * Two processes write enable, mask and ktr/mask at once while a third
 * reads them: every write is taken, every read shows a value one of
 * them wrote, and the last writes are what stays.
 */
TEST_F(bad_input, two_writers)
{
	int status[2], i, reads = 0, done = 0;
	char buf[32], masks[4][32];
	pid_t w[2];

	if (!self->enable[0] || !self->ktr_mask[0])
		SKIP(return, "needs CONFIG_KMEMTRACE_ALLOC and CONFIG_KTR");
	/* What each mask reads back as, with the classes compiled in. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, write_s(KMT_DIR "/mask", race_masks[i]));
		read_s(KMT_DIR "/mask", masks[i], sizeof(masks[i]));
	}
	for (i = 0; i < 2; i++) {
		w[i] = fork();
		ASSERT_LE(0, w[i]);
		if (!w[i])
			race_writer(i, 200);
	}
	while (done < 2) {
		const char *m = read_s(KMT_DIR "/mask", buf, sizeof(buf));

		EXPECT_TRUE(!strcmp(m, masks[0]) || !strcmp(m, masks[1]) ||
			    !strcmp(m, masks[2]) || !strcmp(m, masks[3])) TH_LOG("mask %s", m);
		read_s(KMT_DIR "/enable", buf, sizeof(buf));
		EXPECT_TRUE(!strcmp(buf, "0\n") || !strcmp(buf, "1\n")) TH_LOG("enable %s", buf);
		reads++;
		for (i = 0; i < 2; i++) {
			if (w[i] > 0 && waitpid(w[i], &status[i], WNOHANG) == w[i]) {
				w[i] = -1;
				done++;
			}
		}
	}
	for (i = 0; i < 2; i++) {
		bool ok = WIFEXITED(status[i]) && !WEXITSTATUS(status[i]);

		EXPECT_TRUE(ok) TH_LOG("writer %d: status %#x", i, status[i]);
	}
	/* Settled: the last write of each file is what it shows. */
	ASSERT_EQ(0, write_s(KMT_DIR "/mask", race_masks[2]));
	ASSERT_EQ(0, write_s(KMT_DIR "/enable", "0"));
	EXPECT_STREQ(masks[2], read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", read_s(KMT_DIR "/enable", buf, sizeof(buf)));
	TH_LOG("2 writers x 200 rounds of 3 writes, %d reads meanwhile", reads);
}

TEST_HARNESS_MAIN
