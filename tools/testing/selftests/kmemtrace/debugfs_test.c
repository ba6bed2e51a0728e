// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtrace debugfs interface tests: the files a kernel built with
 * CONFIG_KMEMTRACE creates in /sys/kernel/debug/kmemtrace/, as described
 * in Documentation/ABI/testing/debugfs-kmemtrace.
 *
 * Needs root. Skips, saying why, on a kernel without CONFIG_KMEMTRACE;
 * fails when a file the kselftests' config asks for is missing (see
 * kmt_util.h).
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
#include "kmt_util.h"

#define ABI_VERSION	KMT_DIR "/abi_version"

/* An unprivileged identity for the permission tests. */
#define NOBODY		65534

/* The 2008 ABI was version 1; versions only ever go up from there. */
static_assert(KMEMTRACE_ABI_VERSION >= 1, "kmemtrace ABI versions start at 1");

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
	self->fd = -1;
	KMT_NEED_KMEMTRACE();
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
	struct stat root;

	self->restore = false;
	KMT_NEED_KMEMTRACE();
	ASSERT_EQ(0, stat(KMT_DEBUGFS, &root));
	self->root_mode = root.st_mode & 07777;
	ASSERT_EQ(0, chmod(KMT_DEBUGFS, 0755));
	self->restore = true;
}

FIXTURE_TEARDOWN(unprivileged)
{
	if (self->restore)
		EXPECT_EQ(0, chmod(KMT_DEBUGFS, self->root_mode));
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

/*
 * Every file under kmemtrace/ (nftw() has no user data: globals), as
 * many as there are: two per CPU, for as many CPUs as the machine has.
 */
static struct kmt_file {
	char *path;
	mode_t mode;
} *kmt_files;
static int kmt_nfiles, kmt_cap;

static int kmt_add(const char *path, mode_t mode)
{
	if (kmt_nfiles == kmt_cap) {
		struct kmt_file *nf;

		kmt_cap = kmt_cap ? 2 * kmt_cap : 256;
		nf = realloc(kmt_files, kmt_cap * sizeof(*kmt_files));
		if (!nf)
			return -1;	/* stops nftw(), and fails the test */
		kmt_files = nf;
	}
	kmt_files[kmt_nfiles].path = strdup(path);
	if (!kmt_files[kmt_nfiles].path)
		return -1;
	kmt_files[kmt_nfiles++].mode = mode & 07777;
	return 0;
}

/* Forgets the files an earlier nftw() listed. */
static void kmt_clear_files(void)
{
	while (kmt_nfiles)
		free(kmt_files[--kmt_nfiles].path);
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

/*
 * The files Documentation/ABI/testing/debugfs-kmemtrace, debugfs-ktr,
 * debugfs-kmon and dev-kmon describe, and the options that make them: all of them in the
 * kselftests' config.
 */
static const struct {
	const char *path, *opts;
} documented[] = {
	{ KMT_DIR "/abi_version", "CONFIG_KMEMTRACE" },
	{ KMT_DIR "/cpu0", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/total_overruns", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/stats", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/caches", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/reader", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/enable", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/mask", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/subbufs", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/subbuf_size", "CONFIG_KMEMTRACE_ALLOC" },
	{ KMT_DIR "/alloc_selftest", "CONFIG_KMEMTRACE_ALLOC_SELFTEST" },
	{ KMT_DIR "/ktr/mask", "CONFIG_KTR" },
	{ KMT_DIR "/ktr/classes", "CONFIG_KTR" },
	{ KMT_DIR "/ktr/trace", "CONFIG_KTR" },
	{ KMT_DIR "/ktr/cpu0", "CONFIG_KTR" },
	{ KMT_DIR "/ktr/formats", "CONFIG_KTR" },
	{ KMT_DIR "/ktr/stats", "CONFIG_KTR" },
	{ KMT_DIR "/ktr/clear", "CONFIG_KTR" },
	{ KMT_DIR "/ktr/dump_on_oops", "CONFIG_KTR" },
	{ KMT_DIR "/ktr/selftest", "CONFIG_KTR_SELFTEST" },
	{ KMT_DIR "/kmon", "CONFIG_KMON" },
	{ KMT_DIR "/kmon_selftest", "CONFIG_KMON_SELFTEST" },
	{ "/dev/kmon", "CONFIG_KMON" },
};

/*
 * Every kmemtrace file and /dev/kmon: another user is kept out by the
 * mode (EACCES); root without CAP_SYSLOG cannot read one, and root
 * without CAP_SYS_ADMIN cannot write one or open /dev/kmon (EPERM),
 * while each capability alone still does what it allows; root with both
 * opens every one. (Lockdown is not checked here: it takes a boot with
 * lockdown=confidentiality, where every file must fail to open with
 * EPERM.)
 */
TEST_F(unprivileged, every_file_checked)
{
	int i, checked = 0, m;
	char was[8];
	struct stat st;

	m = kmt_missing(KMT_DIR "/enable", "CONFIG_KMEMTRACE_ALLOC");
	ASSERT_LE(0, m) TH_LOG("%s/enable is missing", KMT_DIR);
	if (!m) {
		/* An enable makes the relay files, cpu<n>, if there are none. */
		ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/enable", was, sizeof(was)));
		ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
		ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", was));
	}
	/* Every documented file is there, unless its option is off. */
	for (i = 0; i < (int)ARRAY_SIZE(documented); i++) {
		m = kmt_missing(documented[i].path, documented[i].opts);
		EXPECT_LE(0, m) TH_LOG("%s is missing (%s is in the selftests' config)",
				       documented[i].path, documented[i].opts);
		if (m > 0)
			TH_LOG("%s: kernel built without %s", documented[i].path,
			       documented[i].opts);
	}
	kmt_clear_files();
	ASSERT_EQ(0, nftw(KMT_DIR, kmt_add_file, 8, FTW_PHYS)) TH_LOG("nftw: %s", strerror(errno));
	if (!stat("/dev/kmon", &st))
		ASSERT_EQ(0, kmt_add("/dev/kmon", st.st_mode));
	ASSERT_LT(0, kmt_nfiles);
	for (i = 0; i < kmt_nfiles; i++) {
		const char *f = kmt_files[i].path;
		mode_t mode = kmt_files[i].mode;
		bool kmon = !strcmp(f, "/dev/kmon");
		int rd = mode & 0400, wr = mode & 0200;
		int flags = rd ? O_RDONLY : O_WRONLY;

		/* Root's alone by mode. */
		EXPECT_EQ(0U, mode & 0077) TH_LOG("%s: mode %04o", f, mode);
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
	if (!kmt_read_text(path, buf, size))
		buf[0] = '\0';
	return buf;
}

FIXTURE(bad_input) {
	char enable[32], mask[32], ktr_mask[32], dump[32];
	void *none;		/* a PROT_NONE page */
	void *low;		/* an address in page 0, never mapped */
};

FIXTURE_SETUP(bad_input)
{
	self->none = MAP_FAILED;
	self->low = (void *)16;
	KMT_NEED_KMEMTRACE();
	/* What the tests change; each test requires the files it uses. */
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
		EXPECT_EQ(0, kmt_write_str(KMT_DIR "/mask", self->mask));
	if (self->enable[0])
		EXPECT_EQ(0, kmt_write_str(KMT_DIR "/enable", self->enable));
	if (self->ktr_mask[0])
		EXPECT_EQ(0, kmt_write_str(KTR_DIR "/mask", self->ktr_mask));
	if (self->dump[0])
		EXPECT_EQ(0, kmt_write_str(KTR_DIR "/dump_on_oops", self->dump));
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

	KMT_REQUIRE(KMT_DIR "/enable", "CONFIG_KMEMTRACE_ALLOC");
	KMT_REQUIRE(KMT_DIR "/mask", "CONFIG_KMEMTRACE_ALLOC");
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x10000"));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/enable", bad[i]))
			TH_LOG("enable \"%s\"", bad[i]);
		EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/mask", bad[i]))
			TH_LOG("mask \"%s\"", bad[i]);
	}
	/* Beyond 64 bits: kstrtoull()'s ERANGE. */
	EXPECT_EQ(-ERANGE, kmt_write_str(KMT_DIR "/enable", "18446744073709551616"));
	EXPECT_EQ(-ERANGE, kmt_write_str(KMT_DIR "/mask", "0x10000000000000000"));
	/* At an offset, even a good value. */
	EXPECT_EQ(-EINVAL, write_after_read(KMT_DIR "/enable", "0"));
	EXPECT_EQ(-EINVAL, write_after_read(KMT_DIR "/mask", "0x20000"));
	EXPECT_EQ(-ESPIPE, write_at(KMT_DIR "/enable", "0", 1, 1));
	EXPECT_STREQ("1\n", read_s(KMT_DIR "/enable", buf, sizeof(buf)));
	EXPECT_STREQ("0x10000\n", read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	/* 23 bytes is whole and taken; 24 is not. */
	EXPECT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x00000000000000020000\n"));
	EXPECT_STREQ("0x20000\n", read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/mask", "0x000000000000000010000\n"));
	EXPECT_STREQ("0x20000\n", read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	EXPECT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0000000000000000000000\n"));
	EXPECT_STREQ("0\n", read_s(KMT_DIR "/enable", buf, sizeof(buf)));
}

/* Edge values of the ktr/ controls, and writes at an offset. */
TEST_F(bad_input, ktr_controls)
{
	char buf[64], was[64];

	KMT_REQUIRE(KTR_DIR "/mask", "CONFIG_KTR");
	KMT_REQUIRE(KTR_DIR "/dump_on_oops", "CONFIG_KTR");
	KMT_REQUIRE(KTR_DIR "/clear", "CONFIG_KTR");
	/* dump_on_oops: up to KTR_DUMP_MAX entries. */
	snprintf(buf, sizeof(buf), "%d\n", KTR_DUMP_MAX);
	EXPECT_EQ(0, kmt_write_str(KTR_DIR "/dump_on_oops", buf));
	EXPECT_STREQ(buf, read_s(KTR_DIR "/dump_on_oops", was, sizeof(was)));
	snprintf(buf, sizeof(buf), "%d", KTR_DUMP_MAX + 1);
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/dump_on_oops", buf));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/dump_on_oops", "4294967296"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/dump_on_oops", "0123456789abcdef"));
	EXPECT_EQ(-EINVAL, write_after_read(KTR_DIR "/dump_on_oops", "5"));
	EXPECT_EQ(0, kmt_write_str(KTR_DIR "/dump_on_oops", "0"));
	EXPECT_STREQ("0\n", read_s(KTR_DIR "/dump_on_oops", was, sizeof(was)));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/dump_on_oops", "-0"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/dump_on_oops", ""));

	/* mask: a write at an offset changes nothing. */
	ASSERT_NE(NULL, kmt_read_text(KTR_DIR "/mask", was, sizeof(was)));
	EXPECT_EQ(-EINVAL, write_after_read(KTR_DIR "/mask", "0x1"));
	EXPECT_STREQ(was, read_s(KTR_DIR "/mask", buf, sizeof(buf)));

	/* clear: "1" and nothing else. */
	EXPECT_EQ(0, kmt_write_str(KTR_DIR "/clear", "1\n"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/clear", "0"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/clear", "11"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/clear", "1 1"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/clear", "0x1"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KTR_DIR "/clear", "12345678"));
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
		"bench 10000000 2", "bench 100000 101",
		"bench 4294967297 1", "bench 1 4294967297", "bench 1", "bench 1 1 1",
		"bench -1 1", "bench", "bench  1 1", "bench 0x10 1", "fire now",
		"freeze 1", "", "Fire",
		"bench 1 1 01234567890123456789012345678901234567890123456789012345",
	};
	static const char *const trig[][2] = {
		{ KMT_DIR "/alloc_selftest", "CONFIG_KMEMTRACE_ALLOC_SELFTEST" },
		{ KMT_DIR "/kmon_selftest", "CONFIG_KMON_SELFTEST" },
		{ KTR_DIR "/selftest", "CONFIG_KTR_SELFTEST" },
	};
	char before[128], after[128];
	unsigned int i, off = 0;
	int m[3];

	/*
	 * Each trigger is there, or the test fails; one the kernel's
	 * configuration leaves out (as /proc/config.gz says) is not tested.
	 */
	for (i = 0; i < 3; i++) {
		m[i] = kmt_missing(trig[i][0], trig[i][1]);
		EXPECT_LE(0, m[i]) TH_LOG("%s is missing (%s is in the selftests' config)",
					  trig[i][0], trig[i][1]);
		if (m[i] > 0)
			TH_LOG("%s: kernel built without %s", trig[i][0], trig[i][1]);
		off += m[i] > 0;
	}
	if (off == 3)
		SKIP(return, "no self-test trigger: kernel built without %s, %s and %s",
		     trig[0][1], trig[1][1], trig[2][1]);
	if (!m[0]) {
		for (i = 0; i < ARRAY_SIZE(alloc_bad); i++) {
			int ret = kmt_write_str(KMT_DIR "/alloc_selftest", alloc_bad[i]);

			EXPECT_EQ(-EINVAL, ret) TH_LOG("alloc_selftest \"%s\"", alloc_bad[i]);
		}
		/* The limit itself is taken: checked by parsing, not run. */
	}
	if (!m[1]) {
		ASSERT_EQ(0, kmt_write_str(KMT_DIR "/kmon_selftest", "task 2"));
		read_s(KMT_DIR "/kmon_selftest", before, sizeof(before));
		for (i = 0; i < ARRAY_SIZE(kmon_bad); i++) {
			int ret = kmt_write_str(KMT_DIR "/kmon_selftest", kmon_bad[i]);

			EXPECT_EQ(-EINVAL, ret) TH_LOG("kmon_selftest \"%s\"", kmon_bad[i]);
		}
		/* A refused command changes nothing the trigger reports. */
		EXPECT_STREQ(before, read_s(KMT_DIR "/kmon_selftest", after, sizeof(after)));
		EXPECT_EQ(-EINVAL, write_after_read(KMT_DIR "/kmon_selftest", "task 1"));
	}
	if (!m[2]) {
		for (i = 0; i < ARRAY_SIZE(ktr_bad); i++) {
			int ret = kmt_write_str(KTR_DIR "/selftest", ktr_bad[i]);

			EXPECT_EQ(-EINVAL, ret) TH_LOG("ktr/selftest \"%s\"", ktr_bad[i]);
		}
		/* The rounds' limit is taken (and quick with one call). */
		EXPECT_EQ(0, kmt_write_str(KTR_DIR "/selftest", "bench 1 101"));
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

	KMT_REQUIRE(KMT_DIR "/enable", "CONFIG_KMEMTRACE_ALLOC");
	KMT_REQUIRE(KMT_DIR "/alloc_selftest", "CONFIG_KMEMTRACE_ALLOC_SELFTEST");
	KMT_REQUIRE(KTR_DIR "/mask", "CONFIG_KTR");
	good = malloc(1 << 20);
	ASSERT_NE(NULL, good);
	/* Events in the relay files, for the reads below to fault on. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/alloc_selftest", "storm 100"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	kmt_clear_files();
	ASSERT_EQ(0, nftw(KMT_DIR, kmt_add_file, 8, FTW_PHYS));
	ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/enable", before[0], sizeof(before[0])));
	ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/mask", before[1], sizeof(before[1])));
	ASSERT_NE(NULL, kmt_read_text(KTR_DIR "/mask", before[2], sizeof(before[2])));
	ASSERT_NE(NULL, kmt_read_text(KTR_DIR "/dump_on_oops", before[3], sizeof(before[3])));
	for (i = 0; i < kmt_nfiles; i++) {
		const char *f = kmt_files[i].path;
		mode_t mode = kmt_files[i].mode;

		if (mode & 0200) {
			EXPECT_EQ(-EFAULT, write_at(f, self->low, 2, -1))
				TH_LOG("%s from page 0", f);
			EXPECT_EQ(-EFAULT, write_at(f, self->none, 2, -1)) TH_LOG("%s unmapped", f);
		} else {
			EXPECT_EQ(-EINVAL, kmt_write_str(f, "1\n")) TH_LOG("%s is read-only", f);
		}
		if (!(mode & 0400))
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
		/* kmemtrace's relay files, not ktr/cpu<n>, which always hold entries. */
		if (n > 0 && !strncmp(f, KMT_DIR "/cpu", strlen(KMT_DIR "/cpu")))
			relay_faults++;
		checked++;
	}
	/* The storm's CPU had events in its file: the check is not blind. */
	EXPECT_LT(0, relay_faults);
	EXPECT_STREQ(before[0], read_s(KMT_DIR "/enable", buf, sizeof(buf)));
	EXPECT_STREQ(before[1], read_s(KMT_DIR "/mask", buf, sizeof(buf)));
	EXPECT_STREQ(before[2], read_s(KTR_DIR "/mask", buf, sizeof(buf)));
	EXPECT_STREQ(before[3], read_s(KTR_DIR "/dump_on_oops", buf, sizeof(buf)));
	TH_LOG("%d files checked", checked);
	free(good);
}

/* Masks the writers of two_writers alternate between, two each. */
static const char *const race_masks[] = { "0x10000", "0x70000", "0x20000", "0x50000" };
/* KTR masks: none, and one class each (KTR_GEN, KTR_DEV: compiled in). */
static const char *const race_ktr[] = { "0", "0x1", "0x4" };

/* A write of a two_writers writer: taken, or the writer says which failed. */
static void race_write(int who, int round, const char *path, const char *s)
{
	int ret = kmt_write_str(path, s);

	if (ret) {
		fprintf(stderr, "# writer %d, round %d: %s \"%s\": %s\n", who, round, path, s,
			strerror(-ret));
		_exit(1);
	}
}

/*
 * A writer of two_writers (@who 0 or 1): @n rounds of enable, a mask of
 * its pair and a KTR mask of its own or none, then a last round that
 * writes enable 0, its second mask and its KTR mask. Exits 0, or 1 when
 * a write failed (saying which on standard error).
 */
static void race_writer(int who, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		race_write(who, i, KMT_DIR "/enable", (i + who) & 1 ? "1" : "0");
		race_write(who, i, KMT_DIR "/mask", race_masks[2 * who + (i & 1)]);
		race_write(who, i, KTR_DIR "/mask", race_ktr[i & 1 ? 0 : 1 + who]);
	}
	race_write(who, n, KMT_DIR "/enable", "0");
	race_write(who, n, KMT_DIR "/mask", race_masks[2 * who + 1]);
	race_write(who, n, KTR_DIR "/mask", race_ktr[1 + who]);
	_exit(0);
}

/* Whether @s is one of the @n strings of @set. */
static bool one_of(const char *s, char (*set)[32], int n)
{
	while (n--)
		if (!strcmp(s, set[n]))
			return true;
	return false;
}

/*
 * Two processes write enable, mask and ktr/mask at once while a third
 * reads them: every write is taken, every read shows a value one of
 * them wrote, and once both are done each file shows one of the two
 * last values written to it, by the writers, not by the test: enable
 * 0 (both ended with it), the mask and the KTR mask of the writer whose
 * last write came last. Each KTR mask write patches static keys and
 * (un)registers probes, which takes seconds under KASAN and lockdep in
 * an emulated guest: more time than the harness's default 30 s.
 */
TEST_F_TIMEOUT(bad_input, two_writers, 180)
{
	int status[2], i, reads = 0, done = 0;
	char buf[32], masks[4][32], ktr[3][32];
	pid_t w[2];

	KMT_REQUIRE(KMT_DIR "/enable", "CONFIG_KMEMTRACE_ALLOC");
	KMT_REQUIRE(KMT_DIR "/mask", "CONFIG_KMEMTRACE_ALLOC");
	KMT_REQUIRE(KTR_DIR "/mask", "CONFIG_KTR");
	/* What each mask reads back as, with the classes compiled in. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", race_masks[i]));
		ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/mask", masks[i], sizeof(masks[i])));
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", race_ktr[i]));
		ASSERT_NE(NULL, kmt_read_text(KTR_DIR "/mask", ktr[i], sizeof(ktr[i])));
	}
	/*
	 * Neither value the race ends on is there before it: the masks read
	 * back differently (no class compiled out merges them), or the check
	 * after the race would pass on the value written here.
	 */
	ASSERT_STRNE(masks[0], masks[1]);
	ASSERT_STRNE(masks[0], masks[3]);
	ASSERT_STRNE(ktr[0], ktr[1]);
	ASSERT_STRNE(ktr[0], ktr[2]);
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", race_masks[0]));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	ASSERT_EQ(0, kmt_write_str(KTR_DIR "/mask", race_ktr[0]));
	for (i = 0; i < 2; i++) {
		w[i] = fork();
		ASSERT_LE(0, w[i]);
		if (!w[i])
			race_writer(i, 200);
	}
	while (done < 2) {
		read_s(KMT_DIR "/mask", buf, sizeof(buf));
		EXPECT_TRUE(one_of(buf, masks, 4)) TH_LOG("mask %s", buf);
		read_s(KMT_DIR "/enable", buf, sizeof(buf));
		EXPECT_TRUE(!strcmp(buf, "0\n") || !strcmp(buf, "1\n")) TH_LOG("enable %s", buf);
		read_s(KTR_DIR "/mask", buf, sizeof(buf));
		EXPECT_TRUE(one_of(buf, ktr, 3)) TH_LOG("ktr/mask %s", buf);
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
	/* Settled: each file shows a last write of one of the writers. */
	EXPECT_STREQ("0\n", read_s(KMT_DIR "/enable", buf, sizeof(buf)));
	read_s(KMT_DIR "/mask", buf, sizeof(buf));
	EXPECT_TRUE(!strcmp(buf, masks[1]) || !strcmp(buf, masks[3]))
		TH_LOG("mask %s after the race, not %s or %s", buf, race_masks[1], race_masks[3]);
	read_s(KTR_DIR "/mask", buf, sizeof(buf));
	EXPECT_TRUE(!strcmp(buf, ktr[1]) || !strcmp(buf, ktr[2]))
		TH_LOG("ktr/mask %s after the race, not %s or %s", buf, race_ktr[1], race_ktr[2]);
	TH_LOG("2 writers x 201 rounds of 3 writes, %d reads meanwhile", reads);
}

/* ---- The relay buffers' lifetime ------------------------------------- */

FIXTURE(buffers) {
	char enable[32], mask[32], subbufs[32], subbuf_size[32];
};

/*
 * A line of stats before its per-CPU ones, "@key N": N, or -1 if it
 * cannot be read or comes after a "cpu<n>" line.
 */
static long long stat_ll(const char *key)
{
	char *s = kmt_read_file(KMT_DIR "/stats", NULL), *p, *cpu;
	size_t kl = strlen(key);
	long long v = -1;

	if (!s)
		return -1;
	cpu = strstr(s, "\ncpu");
	for (p = s; p && (!cpu || p < cpu); p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			v = strtoll(p + kl + 1, NULL, 10);
			break;
		}
	}
	free(s);
	return v;
}

/* stats' buffer_bytes, -1 if it cannot be read. */
static long long buffer_bytes(void)
{
	return stat_ll("buffer_bytes");
}

/*
 * Waits up to 5 s for buffer_bytes to be @want: the buffers are freed by
 * a work item after the last cpu<n> file is closed. The value seen last.
 */
static long long wait_buffer_bytes(long long want)
{
	long long v = -1;
	int i;

	for (i = 0; i < 500; i++) {
		v = buffer_bytes();
		if (v == want)
			break;
		usleep(10000);
	}
	return v;
}

FIXTURE_SETUP(buffers)
{
	KMT_NEED_KMEMTRACE();
	KMT_REQUIRE(KMT_DIR "/subbufs", "CONFIG_KMEMTRACE_ALLOC");
	KMT_REQUIRE(KMT_DIR "/alloc_selftest", "CONFIG_KMEMTRACE_ALLOC_SELFTEST");
	ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/enable", self->enable, sizeof(self->enable)));
	ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/mask", self->mask, sizeof(self->mask)));
	ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/subbufs", self->subbufs, sizeof(self->subbufs)));
	ASSERT_NE(NULL, kmt_read_text(KMT_DIR "/subbuf_size", self->subbuf_size,
				      sizeof(self->subbuf_size)));
	/* Off and drained: no buffers, whatever earlier tests left. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	ASSERT_LE(0, kmt_drain_relay());
	ASSERT_EQ(0, wait_buffer_bytes(0));
}

FIXTURE_TEARDOWN(buffers)
{
	if (!self->subbuf_size[0])
		return;
	EXPECT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	EXPECT_LE(0, kmt_drain_relay());
	EXPECT_EQ(0, wait_buffer_bytes(0));
	EXPECT_EQ(0, kmt_write_str(KMT_DIR "/subbufs", self->subbufs));
	EXPECT_EQ(0, kmt_write_str(KMT_DIR "/subbuf_size", self->subbuf_size));
	EXPECT_EQ(0, kmt_write_str(KMT_DIR "/mask", self->mask));
	EXPECT_EQ(0, kmt_write_str(KMT_DIR "/enable", self->enable));
}

/*
 * Turning tracing off and draining the cpu<n> files frees the buffers
 * and their files; a buffer not yet read keeps its events; the sizes
 * can be set while there are no buffers, and the next enable allocates
 * buffers of those sizes.
 */
TEST_F(buffers, freed_when_drained_and_resized)
{
	char buf[32];
	int fd;

	ASSERT_EQ(-1, access(KMT_DIR "/cpu0", F_OK)) TH_LOG("cpu0 with no buffers");
	ASSERT_EQ(ENOENT, errno);

	/* Sizes: bounds, then 8 x 8192 bytes. */
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/subbufs", "1"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/subbufs", "65537"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/subbuf_size", "100"));
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/subbuf_size", "16777217"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/subbufs", "8"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/subbuf_size", "8192"));
	/* 65536 x 8192 is 512 MiB per CPU, over 256. */
	EXPECT_EQ(-EINVAL, kmt_write_str(KMT_DIR "/subbufs", "65536"));
	EXPECT_STREQ("8\n", read_s(KMT_DIR "/subbufs", buf, sizeof(buf)));
	EXPECT_STREQ("8192\n", read_s(KMT_DIR "/subbuf_size", buf, sizeof(buf)));
	EXPECT_EQ(0, buffer_bytes());

	/* On: buffers of the sizes set, which cannot change under them. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x10000"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	EXPECT_EQ(8 * 8192, buffer_bytes());
	ASSERT_EQ(0, access(KMT_DIR "/cpu0", F_OK)) TH_LOG("no cpu0 after enable");
	EXPECT_EQ(-EBUSY, kmt_write_str(KMT_DIR "/subbufs", "16"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/alloc_selftest", "storm 100"));

	/*
	 * Read to the end while tracing is on, then off and closed: a read
	 * that began before the disable does not make the buffers drained
	 * (events may have come in between), so they stay.
	 */
	ASSERT_LE(0, kmt_drain_relay());
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/alloc_selftest", "storm 100"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	fd = open(KMT_DIR "/cpu0", O_RDONLY);	/* a last close, for the check */
	ASSERT_LE(0, fd);
	close(fd);
	usleep(200000);
	EXPECT_EQ(8 * 8192, buffer_bytes()) TH_LOG("freed: drained before the disable counted");
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));

	/* Off, and a file opened and closed unread: the events stay. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	fd = open(KMT_DIR "/cpu0", O_RDONLY);
	ASSERT_LE(0, fd);
	close(fd);
	usleep(200000);
	EXPECT_EQ(8 * 8192, buffer_bytes()) TH_LOG("freed before it was read");
	EXPECT_EQ(-EBUSY, kmt_write_str(KMT_DIR "/subbuf_size", "4096"));

	/* Drained and closed: the storm's events were there, then freed. */
	EXPECT_LE(100 * 2 * (long long)sizeof(struct kmemtrace_event), kmt_drain_relay());
	EXPECT_EQ(0, wait_buffer_bytes(0));
	EXPECT_EQ(-1, access(KMT_DIR "/cpu0", F_OK)) TH_LOG("cpu0 left after the free");

	/* The next enable: buffers again, at a new size. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/subbufs", "4"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	EXPECT_EQ(4 * 8192, buffer_bytes());
	EXPECT_EQ(0, access(KMT_DIR "/cpu0", F_OK));
}

/* A child's open of cpu<@cpu>: 0 opened, 1 EBUSY, 2 another error. */
static int child_open(int cpu)
{
	char path[64];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), KMT_DIR "/cpu%d", cpu);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(path, O_RDONLY);

		_exit(fd >= 0 ? 0 : errno == EBUSY ? 1 : 2);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Each cpu<n> file has one reader, an open file: while this process
 * holds cpu0 open, another open of cpu0 fails with EBUSY and changes
 * nothing, this process's own included; another CPU's file is free;
 * reader names the opener of each; a dup() of the file is the same
 * reader, and once its last descriptor is closed, cpu0 may be opened.
 */
TEST_F(buffers, one_reader)
{
	char buf[64], comm[32], want[64];
	int fd, fd2, last = sysconf(_SC_NPROCESSORS_ONLN) - 1;

	ASSERT_NE(NULL, kmt_read_text("/proc/self/comm", comm, sizeof(comm)));
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(want, sizeof(want), "0 %d %s\n", getpid(), comm);
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	EXPECT_STREQ("", read_s(KMT_DIR "/reader", buf, sizeof(buf)));
	EXPECT_EQ(0, child_open(0)) TH_LOG("no reader, yet the open was refused");

	fd = open(KMT_DIR "/cpu0", O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_STREQ(want, read_s(KMT_DIR "/reader", buf, sizeof(buf)));
	EXPECT_EQ(1, child_open(0)) TH_LOG("a second reader of cpu0 was not refused");
	fd2 = open(KMT_DIR "/cpu0", O_RDONLY);
	EXPECT_EQ(-1, fd2) TH_LOG("this process's second open of cpu0 was admitted");
	EXPECT_EQ(EBUSY, errno);
	if (fd2 >= 0)
		close(fd2);
	/* Open for writing, it cannot consume: not a reader, not refused. */
	fd2 = open(KMT_DIR "/cpu0", O_WRONLY);
	EXPECT_LE(0, fd2) TH_LOG("cpu0 for writing: %s", strerror(errno));
	if (fd2 >= 0)
		close(fd2);
	EXPECT_STREQ(want, read_s(KMT_DIR "/reader", buf, sizeof(buf)));
	if (last > 0)
		EXPECT_EQ(0, child_open(last))
			TH_LOG("cpu%d refused while only cpu0 is open", last);
	EXPECT_STREQ("1\n", read_s(KMT_DIR "/enable", buf, sizeof(buf)));

	/* The open file is the reader, in whichever descriptor. */
	fd2 = dup(fd);
	ASSERT_LE(0, fd2);
	close(fd);
	EXPECT_EQ(1, child_open(0)) TH_LOG("refused no more while cpu0 is still open");
	EXPECT_STREQ(want, read_s(KMT_DIR "/reader", buf, sizeof(buf)));
	close(fd2);

	EXPECT_STREQ("", read_s(KMT_DIR "/reader", buf, sizeof(buf)));
	EXPECT_EQ(0, child_open(0)) TH_LOG("still refused once its file is closed");
}

/*
 * stats' disables counts the times tracing went from on to off, and
 * disabled_seq is the next sequence number at the latest: an off and on
 * again is seen after the fact, with where the events stopped.
 */
TEST_F(buffers, disables)
{
	long long d0, seq;

	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/mask", "0x10000"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	d0 = stat_ll("disables");
	ASSERT_LE(0, d0) TH_LOG("stats has no disables line before its per-CPU lines");
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/alloc_selftest", "storm 100"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	seq = stat_ll("events");
	EXPECT_EQ(d0 + 1, stat_ll("disables"));
	EXPECT_EQ(seq, stat_ll("disabled_seq")) TH_LOG("not where the events stopped");
	/* On again, and events: the latest disable is still the one said. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "1"));
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/alloc_selftest", "storm 100"));
	EXPECT_LT(seq, stat_ll("events")) TH_LOG("the storm recorded nothing");
	EXPECT_EQ(d0 + 1, stat_ll("disables")) TH_LOG("an enable counted as a disable");
	EXPECT_EQ(seq, stat_ll("disabled_seq"));
	/* Each turn from on to off counts; a 0 while off is not one. */
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	seq = stat_ll("events");
	ASSERT_EQ(0, kmt_write_str(KMT_DIR "/enable", "0"));
	EXPECT_EQ(d0 + 2, stat_ll("disables"));
	EXPECT_EQ(seq, stat_ll("disabled_seq"));
	EXPECT_LE(0, kmt_drain_relay());
}

TEST_HARNESS_MAIN
