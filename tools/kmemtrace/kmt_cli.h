/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command-line language every kmemtrace tool speaks: one exit-status
 * scheme, --version, the stop signals, the open-file limit and the test
 * of whether two paths name the same file.
 *
 * Exit status, in every tool:
 *   0  done, and the data is whole (a capture without loss, a log read);
 *   1  done, but the data has a problem: events or records were lost,
 *      or (kmemtrace-report) the capture shows allocation errors;
 *   2  bad usage, or an I/O error: a file that cannot be opened, read
 *      or written, a device that refuses;
 *   3  corrupt input: a capture, log or dump that is not what its
 *      format says.
 *
 * Signals: a first SIGINT or SIGTERM asks the tool to stop (a capture
 * drains what the kernel has buffered, a decoder stops reading), and the
 * tool ends as it would at the end of its input; a second one ends it at
 * once, killed by that signal.
 */
#ifndef KMT_CLI_H
#define KMT_CLI_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define KMT_EXIT_OK		0
#define KMT_EXIT_DATA		1
#define KMT_EXIT_USAGE		2	/* and I/O errors */
#define KMT_EXIT_CORRUPT	3

/* The tools' version, printed by --version with the formats they read. */
#define KMT_VERSION		"1.1"

/* The exit-status lines of every --help, the same words everywhere. */
#define KMT_EXIT_HELP								\
	"Exit status: 0 done, 1 the data has a problem (%s),\n"			\
	"2 bad usage or an I/O error, 3 corrupt input.\n"

static inline void kmt_print_version(const char *prog, const char *formats)
{
	printf("%s (kmemtrace tools) %s\n%s\n", prog, KMT_VERSION, formats);
}

/*
 * A letter this release renamed was used: "PROG: -OLD is now NOW; -OLD
 * will WILL" on standard error, once per letter however often it is
 * given, and nothing else changes (the caller goes on as NOW).
 */
static inline void kmt_old_letter(const char *prog, char old, const char *now,
				  const char *will)
{
	static unsigned long long warned;	/* a bit per letter, 'A' to 'z' */
	unsigned long long bit = 1ULL << (old - 'A');

	if (warned & bit)
		return;
	warned |= bit;
	fprintf(stderr, "%s: -%c is now %s; -%c will %s\n", prog, old, now, old, will);
}

/* Set by the first stop signal; the tool's loops test it. */
static volatile sig_atomic_t kmt_stop_requested;

static inline void kmt_on_stop_signal(int sig)
{
	if (kmt_stop_requested) {
		/* The second: at once, by the signal's default action. */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	kmt_stop_requested = 1;
}

/*
 * SIGINT and SIGTERM: the first one sets kmt_stop_requested, the second
 * ends the process. Without SA_RESTART, so that a blocking read() or
 * poll() returns EINTR and the loop sees the request. Unblocked, in case
 * the parent started the tool with them blocked: a tool that cannot be
 * stopped but by SIGKILL loses its drain. SIGPIPE is ignored: a closed
 * pipe is a write error, reported, not a silent death.
 */
static inline void kmt_catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = kmt_on_stop_signal };
	sigset_t stop;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &stop, NULL);
}

/*
 * Makes room for @want more open files than the three standard ones and
 * a few the C library may need: raises RLIMIT_NOFILE's soft limit as far
 * as the hard limit allows. Returns 0, or the limit that is too low
 * (the caller says which and exits with KMT_EXIT_USAGE).
 */
static inline rlim_t kmt_want_files(unsigned long want)
{
	unsigned long need = want + 16;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;	/* the open()s will say */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		rlim_t soft = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ?
			      need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = soft;
		if (rl.rlim_cur < need)
			return rl.rlim_max == RLIM_INFINITY ? rl.rlim_cur : rl.rlim_max;
	}
	return 0;
}

/*
 * Whether @a and @b name the same existing file, however they are
 * spelled (relative, absolute, through a link): compared by device and
 * inode, never by name. False when either does not exist.
 */
static inline bool kmt_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The same for an open descriptor and a path. */
static inline bool kmt_same_fd_file(int fd, const char *path)
{
	struct stat sa, sb;

	if (fstat(fd, &sa) || stat(path, &sb))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * All of @len bytes at @buf to @fd, or -1 with errno (EIO for a write()
 * that took nothing). A write() a signal interrupts is resumed: the
 * first stop signal ends a capture, it does not throw away what was
 * read (the second one kills).
 */
static inline int kmt_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

#endif /* KMT_CLI_H */
