/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the kmemtrace kselftests share, each written once: the files
 * a test needs and what their absence means, the tools it runs, small
 * reads and writes of debugfs and sysfs files, a shell command, the
 * monotonic clock, and a field of debugfs kmemtrace/kmon
 * (Documentation/ABI/testing/debugfs-kmemtrace).
 *
 * What is missing, and when a test skips: the kselftests' config lists
 * what the kernel needs. A kernel built without CONFIG_KMEMTRACE (no
 * kmemtrace/ directory, and no sign of it in /proc/config.gz or
 * /proc/kallsyms) skips every test, saying so; on a kernel built with
 * it, a file the config asks for is there, or the test fails, unless
 * /proc/config.gz shows the kernel was built without the option that
 * makes it (a skip that names the option).
 *
 * The macros use kselftest_harness.h's, included before this file.
 */
#ifndef KMT_SELFTEST_UTIL_H
#define KMT_SELFTEST_UTIL_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/compiler.h>
#include <linux/magic.h>

/* tools/kmemtrace/kmt_cli.h: the tools' exit statuses, KMT_EXIT_*. */
#include "kmt_cli.h"

#define KMT_DEBUGFS	"/sys/kernel/debug"
#define KMT_DIR		KMT_DEBUGFS "/kmemtrace"
#define KMT_KMON_STATE	KMT_DIR "/kmon"
/* kmemtrace's mask of every allocator: kmalloc, kmem_cache, pages. */
#define KMT_MASK_ALL	"0x70000"

/*
 * Runs a shell command; returns its exit status (0 to 255), -1 if it
 * did not exit, or -E2BIG, without running anything, if the command
 * does not fit: a cut command (an `rm -rf` of a path's first half) must
 * not run, and no caller expects a negative status, so its check fails.
 */
static inline int __printf(1, 2) kmt_run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd)) {
		fprintf(stderr, "# kmt_run: command of %d bytes does not fit in %zu, not run: %.80s...\n",
			n, sizeof(cmd), cmd);
		return -E2BIG;
	}
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* CLOCK_MONOTONIC in nanoseconds: ktime_get()'s clock. */
static inline uint64_t kmt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Writes @s to @path, opened O_WRONLY | @flags, in one write(): 0 if the
 * file took all of it, -errno, or -EIO for a short write.
 */
static inline int kmt_write_flags(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | flags), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(s))
		ret = -EIO;
	close(fd);
	return ret;
}

static inline int kmt_write_str(const char *path, const char *s)
{
	return kmt_write_flags(path, s, 0);
}

/*
 * The whole of @path, in a malloc'ed buffer with a NUL after its @lenp
 * bytes (@lenp may be NULL); NULL, with errno set, if it cannot be read.
 */
static inline char *kmt_read_file(const char *path, size_t *lenp)
{
	size_t cap = 65536, len = 0;
	int fd = open(path, O_RDONLY), err;
	char *buf = NULL, *nb;
	ssize_t n;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	if (!buf)
		goto fail;
	while ((n = read(fd, buf + len, cap - len)) != 0) {
		if (n < 0)
			goto fail;
		len += n;
		if (len == cap) {
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb)
				goto fail;
			buf = nb;
		}
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
fail:
	err = errno;
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}

/*
 * The text of @path in @buf, at most @size - 1 bytes and a NUL, read in
 * one read() as debugfs and sysfs files give it; NULL (errno set) if it
 * cannot be read.
 */
static inline char *kmt_read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY), err;
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	err = errno;
	close(fd);
	if (n < 0) {
		errno = err;
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * The CPU the hotplug tests take offline and back: the highest-numbered
 * one online (the last number of /sys/devices/system/cpu/online), CPU 1
 * on a two-CPU guest, CPU 63 on a 64-CPU one, with the path of its
 * "online" file in @online; never one an administrator took offline. 0
 * if CPU 0 is the only one, -1 if the list cannot be read or parsed.
 */
static inline int kmt_hotplug_cpu(char *online, size_t len)
{
	char buf[4096];
	size_t n;
	long cpu;

	online[0] = '\0';
	if (!kmt_read_text("/sys/devices/system/cpu/online", buf, sizeof(buf)) ||
	    strlen(buf) == sizeof(buf) - 1)
		return -1;
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	while (n && buf[n - 1] >= '0' && buf[n - 1] <= '9')
		n--;
	if (!buf[n])
		return -1;
	cpu = strtol(buf + n, NULL, 10);
	if (cpu < 0 || cpu > 65535)
		return -1;
	snprintf(online, len, "/sys/devices/system/cpu/cpu%ld/online", cpu);
	return cpu;
}

/*
 * Reads every kmemtrace cpu<n> file to its end, as a reader does before
 * handing the buffers on. Once tracing is off and every file has been
 * drained and closed, the kernel frees the buffers with their files: a
 * file that is not there (any more) has nothing to read. The files are
 * found by listing the directory, not by trying every CPU number that
 * may exist: on a debug kernel, 8192 failed lookups take seconds. The
 * bytes read, or -1 (errno set) if a file that is there cannot be read.
 */
static inline long long kmt_drain_relay(void)
{
	long long total = 0;
	size_t len, n = 0, cap = 0, k;
	int *cpus = NULL, *more, err;
	char path[64], *s, *end;
	struct dirent *d;
	DIR *dir;
	long v;

	dir = opendir(KMT_DIR);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "cpu", 3) || !isdigit((unsigned char)d->d_name[3]))
			continue;
		v = strtol(d->d_name + 3, &end, 10);
		if (*end || v < 0 || v > INT_MAX)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			more = realloc(cpus, cap * sizeof(*cpus));
			if (!more) {
				free(cpus);
				closedir(dir);
				errno = ENOMEM;
				return -1;
			}
			cpus = more;
		}
		cpus[n++] = v;
	}
	closedir(dir);
	for (k = 0; k < n; k++) {
		snprintf(path, sizeof(path), KMT_DIR "/cpu%d", cpus[k]);
		s = kmt_read_file(path, &len);
		if (!s) {
			if (errno == ENOENT)
				continue;
			err = errno;
			free(cpus);
			errno = err;
			return -1;
		}
		free(s);
		total += len;
	}
	free(cpus);
	return total;
}

/* A "key value" field of debugfs kmemtrace/kmon, -1 if absent. */
static inline long long kmt_kmon_state(const char *key)
{
	char line[160];
	long long v = -1;
	size_t klen = strlen(key);
	FILE *f = fopen(KMT_KMON_STATE, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = atoll(line + klen + 1);
	fclose(f);
	return v;
}

/*
 * Whether the running kernel was built with @opt ("CONFIG_KMON"), as
 * /proc/config.gz says: 1 (=y or =m), 0 only for an explicit
 * "# CONFIG_X is not set" line, -1 if the kernel does not say (no
 * CONFIG_IKCONFIG_PROC, or @opt not in it at all: an option config.gz
 * does not name, a misspelt one or one of another kernel, is not known
 * to be off).
 */
static inline int kmt_kconfig(const char *opt)
{
	size_t olen = strlen(opt);
	char line[512];
	int ret = -1, lines = 0;
	FILE *f;

	if (access("/proc/config.gz", R_OK))
		return -1;
	f = popen("gzip -dc /proc/config.gz 2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		lines++;
		if (!strncmp(line, opt, olen) && line[olen] == '=')
			ret = line[olen + 1] == 'y' || line[olen + 1] == 'm';
		else if (!strncmp(line, "# ", 2) && !strncmp(line + 2, opt, olen) &&
			 !strcmp(line + 2 + olen, " is not set\n"))
			ret = 0;
	}
	if (pclose(f) || !lines)
		return -1;
	return ret;
}

/*
 * Whether the kernel was built with CONFIG_KMEMTRACE: /proc/config.gz,
 * else /proc/kallsyms, where every such kernel has the function
 * kmemtrace_debugfs_dir() (kernel/kmemtrace/core.c) and a kernel
 * without it no kmemtrace symbol at all. 1, 0, or -1 if neither says.
 */
static inline int kmt_kmemtrace_built(void)
{
	int ret = kmt_kconfig("CONFIG_KMEMTRACE");
	char line[256];
	FILE *f;

	if (ret >= 0)
		return ret;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -1;
	ret = 0;
	while (!ret && fgets(line, sizeof(line), f))
		ret = !!strstr(line, " kmemtrace_debugfs_dir\n");
	fclose(f);
	return ret;
}

/*
 * Why a kmemtrace test cannot run here, or NULL: not root, debugfs
 * cannot be mounted, or a kernel without CONFIG_KMEMTRACE. A kernel
 * built with it but without kmemtrace/ gets NULL: the test then fails.
 */
static inline const char *kmt_skip_reason(void)
{
	struct statfs sfs;

	if (geteuid())
		return "kmemtrace's files are for root only: run as root";
	if ((statfs(KMT_DEBUGFS, &sfs) || sfs.f_type != DEBUGFS_MAGIC) &&
	    mount("debugfs", KMT_DEBUGFS, "debugfs", 0, NULL))
		return "debugfs is not mounted on " KMT_DEBUGFS " and cannot be (CONFIG_DEBUG_FS)";
	if (!access(KMT_DIR, F_OK) || kmt_kmemtrace_built() == 1)
		return NULL;
	return KMT_DIR " is absent: kernel built without CONFIG_KMEMTRACE";
}

/*
 * Whether @path, which the options @opts (space-separated) make, may be
 * missing: 0 if it is there, 1 if /proc/config.gz has a "# ... is not
 * set" line for one of @opts (a skip), -1 otherwise (a failure): an
 * option config.gz does not name at all is not taken as off.
 */
static inline int kmt_missing(const char *path, const char *opts)
{
	char opt[64];
	int n;

	if (!access(path, F_OK))
		return 0;
	while (sscanf(opts, " %63s%n", opt, &n) == 1) {
		if (!kmt_kconfig(opt))
			return 1;
		opts += n;
	}
	return -1;
}

/* In a fixture's setup or a test: skip, saying why, per kmt_skip_reason(). */
#define KMT_NEED_KMEMTRACE() do {						\
	const char *__why = kmt_skip_reason();					\
										\
	if (__why)								\
		SKIP(return, "%s", __why);					\
	ASSERT_EQ(0, access(KMT_DIR, F_OK))					\
		TH_LOG("%s: %s, on a kernel built with CONFIG_KMEMTRACE",	\
		       KMT_DIR, strerror(errno));				\
} while (0)

/*
 * @path, which the kselftests' config asks for through @opts: there,
 * or a failure; a skip, naming the option, only when the kernel's own
 * configuration shows it was built without it.
 */
#define KMT_REQUIRE(path, opts) do {						\
	int __m = kmt_missing(path, opts);					\
										\
	if (__m > 0)								\
		SKIP(return, "%s is absent: kernel built without %s (/proc/config.gz)", \
		     path, opts);						\
	ASSERT_EQ(0, __m)							\
		TH_LOG("%s is missing: the kmemtrace selftests need %s (%s)",	\
		       path, opts, "tools/testing/selftests/kmemtrace/config");	\
} while (0)

/*
 * The path of the tool @name built beside this test (the kselftest
 * Makefile builds every tool a test runs, and installs it there): 0,
 * or -errno if it is not there to run. Never one found on PATH: that
 * may be another version.
 */
static inline int kmt_tool_path(const char *name, char *buf, size_t len)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	buf[0] = '\0';
	if (n <= 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s", self, name) >= len)
		return -ENAMETOOLONG;
	return access(buf, X_OK) ? -errno : 0;
}

/*
 * Waits until @pid sleeps (state S in /proc/PID/stat), blocked in read()
 * say, so that writing to it is a wakeup. False after 5 s.
 */
static inline bool kmt_wait_sleeping(pid_t pid)
{
	char path[64], buf[256], *p;
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 5000; i++, usleep(1000)) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return false;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return false;
		buf[n] = 0;
		/* The state follows the command name's closing parenthesis. */
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'S')
			return true;
	}
	return false;
}

/* Fills the array @buf with the path of tool @name, or fails the test. */
#define KMT_TOOL(buf, name) do {						\
	int __e = kmt_tool_path(name, buf, sizeof(buf));			\
										\
	ASSERT_EQ(0, __e)							\
		TH_LOG("%s: %s: the kselftest Makefile builds %s %s", buf,	\
		       strerror(-__e), name, "beside the tests");		\
} while (0)

#endif /* KMT_SELFTEST_UTIL_H */
