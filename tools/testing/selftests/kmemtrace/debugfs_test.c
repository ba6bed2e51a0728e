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

TEST_HARNESS_MAIN
