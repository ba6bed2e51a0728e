/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmemtraced.h - what the parts of kmemtraced share: the capture, its
 * options and counts, the undo of a refused start, the stats and enable
 * files of debugfs kmemtrace, and the stop signals. Included once, with
 * kmemtraced_read.h (the readers), by kmemtraced.c.
 */
#ifndef KMT_KMEMTRACED_H
#define KMT_KMEMTRACED_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kmt_cli.h"
#include "kmt_events.h"
#include "kmt_meta.h"
#include "kmt_msg.h"
#include "kmt_nice.h"
#include "kmt_pace.h"
#include "kmt_size.h"

/* The one rule of -o, in the help, the man page and the refusals. */
#define OUT_RULE	"the output directory must be empty or new"

static const char *prog = "kmemtraced";

/* Set when the final drain begins; tracing is off by then with -e. */
static int drain;
/*
 * While tracing is still on, the drain reads at most this much per CPU,
 * a buffer's worth: what was there when it began. Otherwise a CPU that
 * allocates faster than its reader drains would never let it end.
 */
static __u64 drain_limit = ~0ULL;
/* The kmemtrace directory if -e turned tracing on, for fatal() to undo. */
static const char *enabled_dir;
/*
 * Its enable file, open, for a second stop signal to turn tracing off;
 * -1 when tracing is not ours to turn off. __atomic: lock-free, so safe in
 * a signal handler.
 */
static int enable_fd = -1;
/* The readers' nice value (kmt_nice.h), if they set one. */
static int reader_nice = KMT_NICE_DEFAULT;
static bool nice_given, nice_set;
/* --read: read() the cpu<n> files instead of reading them in place. */
static bool by_read;
/*
 * In place, the span a give-back returns is taken at once only from
 * this size up, half a sub-buffer: a smaller one is the tail of the
 * sub-buffer the kernel is writing, which poll() waits for, as for read().
 */
static __u64 span_now_min;

/*
 * A CPU file's reader. The thread writes events and bytes with
 * __atomic stores, which the main thread loads while it runs; the rest
 * the main thread reads only after pthread_join().
 */
struct reader {
	pthread_t thread;
	int cpu;
	int in, out;
	bool started;
	/* Not captured: why (an errno), for a CPU file that appeared late. */
	int missed;
	__u64 events, bytes;
	bool pinned;
	int err;		/* errno of a read that failed */
	__u64 bad_at;		/* offset of a bad event size, + 1 */
	/* The reader thread's: an event cut by a read, until its rest comes. */
	unsigned char *carry;
	size_t ncarry, carry_cap;
};

struct counts {
	__u64 seq, lost, lost_bytes;
};

struct options {
	const char *out;	/* -o */
	const char *dir;	/* -d, as given */
	double seconds;		/* -t, 0 for until a stop signal */
	unsigned long long byte_limit;	/* -m, 0 for none */
	bool enable, quiet;
};

/* The capture: what main()'s steps share. */
static struct capture {
	const char *dir;	/* the kmemtrace directory */
	const char *out;	/* DIR, as given */
	int outfd;		/* DIR, open */
	bool out_made;		/* by kmemtraced: removed if a refusal leaves it empty */
	/*
	 * Set once a reader started: the kernel's buffers are being
	 * consumed, so what is in DIR is kept from then on, whatever ends
	 * kmemtraced. __atomic: fatal() may run in a reader.
	 */
	bool reading;
	int abi;
	bool enable, was_on;
	struct timespec t0;
	double seconds;
	struct counts start, drain, end;
	bool finished, complete, stopped;
	const char *symbols;
	/* The readers, sorted by CPU number after each add_readers(). */
	struct reader **readers;
	size_t nreaders, readers_cap;
	size_t nopen;		/* those with their two files open */
	size_t nstarted;	/* those whose thread was started */
	/*
	 * Why the capture ended before it was asked to. Tracing that -e
	 * turned on was turned off by someone else, at off_seq. Or a
	 * write to DIR failed (a full disk): cut_err, first in cut_file
	 * after cut_at bytes; the readers stop at the first one, and what
	 * they did not write is lost. cut_err is set first (__atomic, one
	 * writer wins), the rest by that writer, read after the join.
	 */
	bool turned_off;
	__u64 off_seq;
	/* stats' disables once -e turned tracing on, if the kernel has it. */
	bool have_disables;
	__u64 disables;
	int cut_err;
	char cut_file[32];
	__u64 cut_at;
	/* The kernel's counts when the cut was seen: what it lost until then. */
	struct counts cut;
	/* Writing caches failed once every event was written: stale names. */
	int caches_err;
} cap = { .outfd = -1 };

static void read_counts(const char *dir, struct counts *c);

/*
 * Writing DIR/@file failed with @err after @at bytes: the capture ends
 * there, said once. The first cut is the one meta records, with the
 * kernel's counts then: events it lost after them are the cut's too.
 */
static void capture_cut(int err, const char *file, __u64 at)
{
	int none = 0;

	if (!__atomic_compare_exchange_n(&cap.cut_err, &none, err, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	snprintf(cap.cut_file, sizeof(cap.cut_file), "%s", file);
	cap.cut_at = at;
	read_counts(cap.dir, &cap.cut);
	fprintf(stderr, "%s: writing %s/%s: %s; the capture ends here\n", prog, cap.out, file,
		strerror(err));
}

static bool capture_is_cut(void)
{
	return __atomic_load_n(&cap.cut_err, __ATOMIC_ACQUIRE);
}

/*
 * DIR/@name made @len bytes of @text, through DIR/@name.tmp renamed over
 * it. Returns 0, or the errno of what failed, with the old file kept.
 */
static int store_tmp(const char *name, const char *text, size_t len)
{
	char tmp[32];
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(cap.outfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	if (kmt_write_all(fd, text, len))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	if (!err && renameat(cap.outfd, tmp, cap.outfd, name))
		err = errno;
	if (err)
		unlinkat(cap.outfd, tmp, 0);
	return err;
}

/*
 * DIR/@name rewritten in place, in the blocks it has: where a full disk
 * has no room for a second copy, a file no longer than the first fits.
 */
static int store_in_place(const char *name, const char *text, size_t len)
{
	int fd = openat(cap.outfd, name, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (kmt_write_all(fd, text, len) || ftruncate(fd, len))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	return err;
}

static void set_enable(const char *dir, const char *v);

/*
 * A refusal before any reader started: nothing was read from the kernel,
 * so the files of DIR are the empty cpu<n> copies and the first meta and
 * caches. They are removed, and DIR too if kmemtraced made it: a
 * directory that was empty is left empty, a new one is gone. DIR was
 * empty or new, so every name removed is one this capture made.
 */
static void undo_output(void)
{
	static const char *const others[] = { "meta", "meta.tmp", "caches", "caches.tmp" };
	char name[32];
	size_t i;

	if (cap.outfd < 0 || __atomic_load_n(&cap.reading, __ATOMIC_ACQUIRE))
		return;
	for (i = 0; i < cap.nreaders; i++) {
		if (cap.readers[i]->out < 0)
			continue;
		snprintf(name, sizeof(name), "cpu%d", cap.readers[i]->cpu);
		unlinkat(cap.outfd, name, 0);
	}
	for (i = 0; i < ARRAY_SIZE(others); i++)
		unlinkat(cap.outfd, others[i], 0);
	if (cap.out_made)
		rmdir(cap.out);
}

static void __noreturn __printf(1, 2) fatal(const char *fmt, ...)
{
	const char *dir;
	va_list ap;

	va_start(ap, fmt);
	kmt_vwarn(prog, fmt, ap);
	va_end(ap);
	/* Do not leave the kernel tracing for a capture that is gone. */
	dir = __atomic_exchange_n(&enabled_dir, NULL, __ATOMIC_ACQ_REL);
	if (dir)
		set_enable(dir, "0");
	/* Refused at the start: no empty files, nor a directory, left behind. */
	undo_output();
	exit(KMT_EXIT_USAGE);
}

static void show_help(FILE *f)
{
	fprintf(f,
		"usage: %s [-o DIR] [-t SECONDS] [-m SIZE] [-e] [-q] [--nice=NICE]\n"
		"                  [--read] [-d KMEMTRACE_DIR]\n"
		"Captures kmemtrace events from debugfs kmemtrace/cpu<n> into DIR:\n"
		"DIR/cpu<n>, DIR/meta, DIR/kallsyms, DIR/caches.\n"
		"  -o, --output=DIR      where to write (default kmemtrace.out):\n"
		"                        " OUT_RULE "\n"
		"                        (a new one is created)\n"
		"  -t, --time=SECONDS    stop after SECONDS (default: Ctrl-C)\n"
		"  -m, --bytes=SIZE      stop within 10 ms of SIZE bytes (N, Nk, NM, NG)\n"
		"                        captured, then read what the buffers still hold\n"
		"  -e, --enable          turn tracing on at the start and off before the\n"
		"                        final drain: a complete capture\n"
		"  -q, --quiet           no progress line\n"
		"      --nice=NICE       the readers' nice value, -20 to 19 (default: -10\n"
		"                        if started at nice 0, so that they keep up with\n"
		"                        tasks that allocate without pause; else unchanged)\n"
		"      --read            copy the events out with read(), not from the\n"
		"                        buffers mapped in place (always where the\n"
		"                        kernel cannot map them)\n"
		"  -d, --dir=KMEMTRACE_DIR\n"
		"                        the kmemtrace directory (default\n"
		"                        /sys/kernel/debug/kmemtrace), or the debugfs mount\n"
		"                        point that holds it as kmemtrace/\n"
		"  -h, --help            show this help and exit\n"
		"  -V, --version         show the version and exit\n"
		"-b, the old letter of -m, still works in this release, with a warning:\n"
		"in kmonlog it means a buffer size, and will here too. -n, the old\n"
		"letter of --nice, also still works with a warning; in kmemtrace-report\n"
		"it is a number of rows.\n"
		"A first Ctrl-C, SIGTERM or SIGHUP stops the capture and drains the buffers;\n"
		"a second one ends kmemtraced at once (meta then says finished 0).\n"
		KMT_EXIT_HELP, prog, "events were lost");
}

/* @dir/@name, allocated; the paths of the messages and of kmt_slurp(). */
static char *join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		fatal("out of memory");
	return p;
}

/* " (the open-file limit, ulimit -n, is N)" after a message of EMFILE. */
static const char *fd_hint(int err)
{
	static char hint[96];
	struct rlimit rl;

	if (err != EMFILE || getrlimit(RLIMIT_NOFILE, &rl))
		return "";
	snprintf(hint, sizeof(hint), " (the open-file limit, ulimit -n, is %llu)",
		 (unsigned long long)rl.rlim_cur);
	return hint;
}

/* One "key value" line of @s, the text of kmemtrace/stats at @path. */
static __u64 stat_in(const char *s, const char *path, const char *key)
{
	size_t kl = strlen(key);
	const char *p;

	for (p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtoull(p + kl + 1, NULL, 10);
	fatal("%s: no \"%s\" line", path, key);
}

/* kmemtrace/stats, read whole (a line per possible CPU: 300 KiB for 8192). */
static char *read_stats(const char *dir, char **path)
{
	char *s;

	*path = join(dir, "stats");
	s = kmt_slurp(*path, NULL);
	if (!s)
		fatal("%s: %s", *path, strerror(errno));
	return s;
}

static __u64 stat_value(const char *dir, const char *key)
{
	char *path, *s = read_stats(dir, &path);
	__u64 v = stat_in(s, path, key);

	free(s);
	free(path);
	return v;
}

/* One read of kmemtrace/stats, so that the three numbers agree. */
static void read_counts(const char *dir, struct counts *c)
{
	char *path, *s = read_stats(dir, &path);

	c->seq = stat_in(s, path, "events");
	c->lost = stat_in(s, path, "lost_events");
	c->lost_bytes = stat_in(s, path, "lost_bytes");
	free(s);
	free(path);
}

/* kmemtrace/enable: 0 or 1, or -1 (errno set) if it cannot be read. */
static int read_enable(const char *dir)
{
	char *path = join(dir, "enable"), *s = kmt_slurp(path, NULL);
	int v = -1;

	if (s && (s[0] == '0' || s[0] == '1') && (!s[1] || s[1] == '\n'))
		v = s[0] - '0';
	else if (s)
		errno = EINVAL;
	free(s);
	free(path);
	return v;
}

/*
 * The head of kmemtrace/stats into @buf, where the lines before the
 * per-CPU ones are: one read, so that its values agree.
 */
static void stats_head(const char *dir, char *buf, size_t size)
{
	char *path = join(dir, "stats");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (n < 0)
		fatal("%s: %s", path, strerror(errno));
	close(fd);
	free(path);
	buf[n] = '\0';
}

/* @key's value in @head (stats_head()): false if the kernel has none. */
static bool head_value(const char *head, const char *key, __u64 *v)
{
	size_t kl = strlen(key);
	const char *p;

	for (p = head; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			*v = strtoull(p + kl + 1, NULL, 10);
			return true;
		}
	}
	return false;
}

/*
 * Whether tracing that -e turned on was turned off since by someone
 * else, and at which sequence number the events stopped (*@seq): from
 * stats' disables and disabled_seq, which an off and on again between
 * two polls changes too; on a kernel without them, from enable and
 * events.
 */
static bool tracing_was_off(__u64 *seq)
{
	char head[4096];
	__u64 n;

	if (cap.have_disables) {
		stats_head(cap.dir, head, sizeof(head));
		return head_value(head, "disables", &n) && n != cap.disables &&
		       head_value(head, "disabled_seq", seq);
	}
	if (read_enable(cap.dir))
		return false;
	*seq = stat_value(cap.dir, "events");
	return true;
}

static void set_enable(const char *dir, const char *v)
{
	char *path = join(dir, "enable");
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, v, 1) != 1 || close(fd))
		fatal("writing %s to %s: %s", v, path, strerror(errno));
	free(path);
}

/*
 * Who reads cpu<@cpu> of @dir now (any CPU's file if @cpu is -1), from
 * its reader file ("CPU PID COMM" per file open), as "pid PID (COMM)";
 * NULL if none, or for a kernel without the file.
 */
static char *current_reader(const char *dir, int cpu)
{
	char *path = join(dir, "reader"), *s = kmt_slurp(path, NULL), *who = NULL;
	char *line, *next;
	int c, pid, at;

	free(path);
	for (line = s; line && *line && !who; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		at = 0;
		if (sscanf(line, "%d %d %n", &c, &pid, &at) == 2 && at &&
		    (cpu < 0 || c == cpu) &&
		    asprintf(&who, "pid %d (%s)", pid, line + at) < 0)
			fatal("out of memory");
	}
	free(s);
	return who;
}

/*
 * Second stop signal: tracing that -e turned on is turned off (write()
 * is async-signal-safe) before kmt_on_stop_signal() ends the process.
 */
static void on_stop_signal(int sig)
{
	int fd = __atomic_load_n(&enable_fd, __ATOMIC_RELAXED);

	if (kmt_stop_requested && fd >= 0)
		(void)!write(fd, "0", 1);
	kmt_on_stop_signal(sig);
}

/*
 * SIGINT, SIGTERM and SIGHUP stop the capture (kmt_cli.h): a hangup of
 * the terminal or ssh session must not kill a capture with tracing left
 * on under -e. A SIGHUP ignored at the start (nohup) stays ignored.
 */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal }, hup;

	kmt_catch_stop_signals();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!sigaction(SIGHUP, NULL, &hup) && hup.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	/* Past RLIMIT_FSIZE a write fails with EFBIG, reported, not a silent death. */
	signal(SIGXFSZ, SIG_IGN);
}

#endif /* KMT_KMEMTRACED_H */
