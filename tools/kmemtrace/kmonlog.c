// SPDX-License-Identifier: GPL-2.0
/*
 * kmonlog - capture /dev/kmon records to a file, and the names of the
 * tasks they mention to pids.dat, as the 2007 kmonlog did. See
 * Documentation/trace/kmon.rst.
 *
 *   kmonlog [-d KDEV] [-b BUFSIZ] [-c CLASSES] [-o OUTFIL] [-t MSTEST]
 *           [-m BMAX] [-p PIDFIL] [-n NICE] [-h] [-V]
 *
 * It starts an instance, writes whole records to OUTFIL until MSTEST
 * milliseconds have passed, BMAX bytes were written, or SIGINT/SIGTERM;
 * then stops the instance, drains what it holds, writes PIDFIL and
 * reports what was lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/kmemtrace.h>
#include <linux/ktr.h>

#include "kmon_log.h"
#include "kmt_classes.h"
#include "kmt_meta.h"
#include "kmt_msg.h"
#include "kmt_nice.h"
#include "kmt_size.h"

#define KMONLOG_VERSION	"1.0"
#define READ_SIZE	(4 << 20)

static const char *prog = "kmonlog";
static sig_atomic_t stop;

/* Exit status 2: an error (1 is for records lost). */
#define fatal(...)	kmt_die(prog, 2, __VA_ARGS__)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* ---- Tasks seen, named as soon as they are seen --------------------- */

/* Open addressing by PID: a lookup per PID of every record read. */
struct task {
	uint32_t pid;
	bool used;
	char *name;
};

static struct task *tasks;
static size_t ntasks, tasks_cap;

#define PF_KTHREAD	0x00200000	/* <linux/sched.h> */

/* Whether @pid is a kernel thread: PF_KTHREAD in /proc/PID/stat's flags. */
static bool is_kthread(uint32_t pid)
{
	char file[64], *s, *p;
	unsigned long flags = 0;
	size_t len;

	snprintf(file, sizeof(file), "/proc/%u/stat", pid);
	s = kmt_slurp(file, &len);
	/* "pid (comm) state ppid pgrp session tty_nr tpgid flags ...". */
	p = s ? strrchr(s, ')') : NULL;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		flags = 0;
	free(s);
	return flags & PF_KTHREAD;
}

/*
 * The name pids.dat gives @pid: its command line with ';' for each NUL
 * ("/usr/sbin/gpm;-m;/dev/psaux;"), "[comm]" for a kernel thread,
 * "comm" for a user task with no command line (a zombie), "[IDLE]" for
 * 0, "[exited]" if it was gone before it could be looked at. PIDs are
 * those of the initial PID namespace, looked up in kmonlog's /proc.
 */
static char *task_name(uint32_t pid)
{
	char file[64], *s;
	size_t len, i;

	if (!pid)
		return strdup("[IDLE]");
	snprintf(file, sizeof(file), "/proc/%u/cmdline", pid);
	s = kmt_slurp(file, &len);
	if (s && len) {
		for (i = 0; i < len; i++)
			if (s[i] == '\0')
				s[i] = ';';
		return s;
	}
	free(s);
	snprintf(file, sizeof(file), "/proc/%u/comm", pid);
	s = kmt_slurp(file, &len);
	if (s && len) {
		char *n = malloc(len + 3);

		if (!n)
			fatal("out of memory");
		s[strcspn(s, "\n")] = '\0';
		snprintf(n, len + 3, is_kthread(pid) ? "[%s]" : "%s", s);
		free(s);
		return n;
	}
	free(s);
	return strdup("[exited]");
}

/* A name is one field of one line: no tab, newline or other control. */
static char *task_name_clean(uint32_t pid)
{
	char *s = task_name(pid), *c;

	for (c = s; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return s;
}

static struct task *task_slot(struct task *t, size_t cap, uint32_t pid)
{
	size_t i = (pid * 2654435761u) & (cap - 1);

	while (t[i].used && t[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &t[i];
}

static void see(uint32_t pid)
{
	struct task *t;

	if (2 * (ntasks + 1) > tasks_cap) {
		size_t i, cap = tasks_cap ? 2 * tasks_cap : 1024;
		struct task *n = calloc(cap, sizeof(*n));

		if (!n)
			fatal("out of memory");
		for (i = 0; i < tasks_cap; i++)
			if (tasks[i].used)
				*task_slot(n, cap, tasks[i].pid) = tasks[i];
		free(tasks);
		tasks = n;
		tasks_cap = cap;
	}
	t = task_slot(tasks, tasks_cap, pid);
	if (t->used)
		return;
	t->used = true;
	t->pid = pid;
	t->name = task_name_clean(pid);
	if (!t->name)
		fatal("out of memory");
	ntasks++;
}

/* Unused slots last, the others by PID. */
static int cmp_task(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	if (x->used != y->used)
		return x->used ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Records read but not written, past -m's limit, once it is reached. */
static unsigned long long past_records, past_bytes;
static bool limit_hit;

/*
 * The whole records in @buf (@len bytes, as read() returned them): the
 * number of bytes of those that fit in @room, noting their PIDs; the
 * others are counted as past the limit.
 */
static size_t scan(const unsigned char *buf, size_t len, uint64_t room)
{
	size_t off = 0, end;

	while (off + KMON_HDR_SIZE <= len) {
		size_t hl = kmon_hdr_len(buf + off), bl = kmon_blob_len(buf + off), want;
		uint32_t a, z;
		int kind;

		if (off + hl + bl > len)
			fatal("the device returned a partial record at byte %zu of a read", off);
		if (off + hl + bl > room) {
			limit_hit = true;
			for (end = off; end < len; past_records++)
				end += kmon_hdr_len(buf + end) + kmon_blob_len(buf + end);
			past_bytes += len - off;
			break;
		}
		if (kmon_sched_blob(buf + off + hl, bl, &kind, &a, &z, &want) && bl == want) {
			see(a);
			if (kind >= KMON_DT_TSKSWITCH)
				see(z);
		} else if (kmon_alloc_blob(buf + off + hl, bl, &a, &want) && bl == want) {
			unsigned int ctx = buf[off + hl + 2];

			/* PID 0 is the idle task only in process context. */
			if (a || !(ctx & (KMEMTRACE_CTX_HARDIRQ | KMEMTRACE_CTX_SOFTIRQ)))
				see(a);
		}
		off += hl + bl;
	}
	return off;
}

static unsigned long long parse_size(const char *opt, const char *s)
{
	unsigned long long v;

	if (!kmt_parse_size(s, &v)) {
		fprintf(stderr, "%s: %s: '%s' is not a size (N, Nk, NM, NG)\n", prog, opt, s);
		exit(2);
	}
	return v;
}

static unsigned long long parse_ms(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || !*s || !v || strchr(s, '-')) {
		fprintf(stderr, "%s: -t: '%s' is not a number of milliseconds above 0\n",
			prog, s);
		exit(2);
	}
	return v;
}

/* The classes kmon has sources for, by their names in debugfs ktr/classes. */
static const char *const class_names[64] = {
	[KTR_BIT_SCHED] = "sched",
	[KTR_BIT_KMALLOC] = "kmalloc",
	[KTR_BIT_KMEM_CACHE] = "kmem_cache",
	[KTR_BIT_PAGE] = "page",
};

/* -c: a mask (0x80000) or names, comma-separated (sched,kmalloc). */
static uint64_t parse_classes(const char *s)
{
	uint64_t mask;
	char bad[64];

	if (kmt_parse_classes(s, class_names, &mask, bad, sizeof(bad)) || !mask) {
		fprintf(stderr, "%s: -c: '%s' is not a class mask or a list of %s\n", prog, s,
			"sched, kmalloc, kmem_cache, page");
		exit(2);
	}
	return mask;
}

static const char help_text[] =
	"Capture /dev/kmon records.\n"
	"\n"
	"  -d KDEV   the kmon device (default /dev/kmon)\n"
	"  -b BUFSIZ the device's buffer size, e.g. 4M (default 1MB)\n"
	"  -c CLASSES the events to log: a mask or names, comma-separated, of\n"
	"            sched, kmalloc, kmem_cache, page (default sched)\n"
	"  -o OUTFIL the output file (default standard output)\n"
	"  -t MSTEST stop after MSTEST milliseconds (default unlimited)\n"
	"  -m BMAX   stop after BMAX bytes of records (default unlimited)\n"
	"  -p PIDFIL write the tasks the records name to PIDFIL (default pids.dat)\n"
	"  -n NICE   read at nice NICE, -20 to 19 (default: -10 if started at\n"
	"            nice 0, so that it keeps up with tasks that log without\n"
	"            pause; else unchanged)\n"
	"  -h        show this help and exit\n"
	"  -V        show the version and exit\n"
	"\n"
	"SIGINT or SIGTERM stops the capture; the records still in the device\n"
	"are read first (a second signal ends kmonlog at once). Exit status: 0,\n"
	"1 if records were lost (the counts are on standard error), 2 on an\n"
	"error or a bad option.\n";

/*
 * PIDFIL is written beside its name and renamed over it at the end: a
 * capture that fails keeps the previous one. (A second signal, which
 * kills at once, leaves the temporary file.)
 */
static char *pid_tmp;

static void remove_pid_tmp(void)
{
	if (pid_tmp)
		unlink(pid_tmp);
}

static FILE *open_pid_tmp(const char *path)
{
	mode_t mask = umask(0);
	FILE *f;
	int fd;

	umask(mask);
	pid_tmp = malloc(strlen(path) + sizeof(".XXXXXX"));
	if (!pid_tmp)
		fatal("out of memory");
	sprintf(pid_tmp, "%s.XXXXXX", path);
	fd = mkstemp(pid_tmp);
	if (fd < 0) {
		free(pid_tmp);
		pid_tmp = NULL;
		fatal("%s: %s", path, strerror(errno));
	}
	atexit(remove_pid_tmp);
	/* mkstemp() makes it 0600: as fopen() would have. */
	if (fchmod(fd, 0666 & ~mask))
		fatal("%s: %s", pid_tmp, strerror(errno));
	f = fdopen(fd, "w");
	if (!f)
		fatal("%s: %s", pid_tmp, strerror(errno));
	return f;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s [-d KDEV] [-b BUFSIZ] [-c CLASSES] [-o OUTFIL] [-t MSTEST]", prog);
	fputs(" [-m BMAX] [-p PIDFIL] [-n NICE] [-h] [-V]\n", f);
	fputs(help_text, f);
}

/* Once per overrun: a warning now; the totals come at the end. */
static void report_loss(int fd, const char *dev)
{
	struct kmon_stats st;

	if (ioctl(fd, KMON_GET_STATS, &st))
		fatal("%s: stats: %s", dev, strerror(errno));
	fprintf(stderr, "%s: records lost so far: %llu (buffer full), %llu (%s)\n", prog,
		(unsigned long long)st.overruns, (unsigned long long)st.ring_overruns,
		"refused by the rings");
}

static void on_signal(int sig)
{
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/kmon", *out_path = NULL, *pid_path = "pids.dat";
	unsigned long long ms = 0, bmax = 0, written = 0, size;
	uint64_t classes = 0;
	long bufsize = KMON_BUFFSIZE_DEFAULT;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t stopsigs, waitmask;
	struct kmon_stats st;
	unsigned char *buf;
	uint64_t deadline = 0, t0;
	bool draining = false;
	FILE *out = stdout, *pf;
	size_t i;
	int nice = KMT_NICE_DEFAULT, fd, c;
	bool nice_given = false;

	while ((c = getopt(argc, argv, "d:b:c:o:t:m:p:n:hV")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'b':
			size = parse_size("-b", optarg);
			/* The kernel says what it takes; a long must hold it. */
			bufsize = size > LONG_MAX ? LONG_MAX : size;
			break;
		case 'c':
			classes = parse_classes(optarg);
			break;
		case 'o':
			out_path = optarg;
			break;
		case 't':
			ms = parse_ms(optarg);
			break;
		case 'm':
			bmax = parse_size("-m", optarg);
			break;
		case 'p':
			pid_path = optarg;
			break;
		case 'n':
			if (!kmt_parse_nice(optarg, &nice)) {
				fprintf(stderr, "%s: -n %s: not a nice value from -20 to 19\n",
					prog, optarg);
				exit(2);
			}
			nice_given = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s %s (kmon format %d)\n", prog, KMONLOG_VERSION, KMON_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		usage(stderr);
		return 2;
	}

	if (out_path && !strcmp(out_path, pid_path)) {
		fprintf(stderr, "%s: -o and -p name the same file, %s\n", prog, out_path);
		return 2;
	}
	fd = open(dev, O_RDONLY);
	if (fd < 0)
		fatal("%s: %s", dev, strerror(errno));
	if (kmt_nice_wanted(nice_given) && setpriority(PRIO_PROCESS, 0, nice) && nice_given)
		fprintf(stderr, "%s: nice %d: %s; reading at the nice value inherited\n",
			prog, nice, strerror(errno));
	if (ioctl(fd, KMON_BUFFSIZE, &bufsize))
		fatal("%s: buffer size %ld: %s (from %ld to %ld bytes)", dev, bufsize,
		      strerror(errno), KMON_BUFFSIZE_MIN, KMON_BUFFSIZE_MAX);
	if (classes && ioctl(fd, KMON_SET_CLASSES, &classes))
		fatal("%s: classes %#llx: %s%s", dev, (unsigned long long)classes, strerror(errno),
		      errno == EINVAL ? " (not all are in this kernel: CONFIG_KMON_CLASSES)" : "");
	if (out_path) {
		out = fopen(out_path, "wb");
		if (!out)
			fatal("%s: %s", out_path, strerror(errno));
	}
	/* Now, not after a capture of hours that would end without it. */
	pf = open_pid_tmp(pid_path);
	buf = malloc(READ_SIZE);
	if (!buf)
		fatal("out of memory");
	/*
	 * The first SIGINT or SIGTERM asks for a stop, a second one kills
	 * (a capture stuck writing to a stopped pipe can still be ended).
	 * They are blocked from the stop check to ppoll(), which takes them
	 * as it waits: one that comes in between ends the wait at once.
	 */
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigprocmask(SIG_SETMASK, NULL, &waitmask);
	sa.sa_flags = SA_RESTART | SA_RESETHAND;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed pipe is a write error, reported, not a silent death. */
	signal(SIGPIPE, SIG_IGN);

	if (ioctl(fd, KMON_START))
		fatal("%s: start: %s", dev, strerror(errno));
	t0 = now_ms();
	if (ms)
		deadline = t0 + ms;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		size_t keep;

		bool done;

		if (!draining)
			sigprocmask(SIG_BLOCK, &stopsigs, NULL);
		done = __atomic_load_n(&stop, __ATOMIC_RELAXED) ||
		       (deadline && now_ms() >= deadline) || limit_hit;

		if (!draining && done) {
			/* Stop: what is logged until now comes to the buffer. */
			if (ioctl(fd, KMON_STOP))
				fatal("%s: stop: %s", dev, strerror(errno));
			draining = true;
		}
		if (!draining) {
			struct timespec wait, *timeout = NULL;

			if (deadline) {
				uint64_t now = now_ms(), left = deadline > now ? deadline - now : 0;

				wait.tv_sec = left / 1000;
				wait.tv_nsec = left % 1000 * 1000000;
				timeout = &wait;
			}
			n = ppoll(&p, 1, timeout, &waitmask);
			sigprocmask(SIG_SETMASK, &waitmask, NULL);
			if (n < 0) {
				if (errno != EINTR)
					fatal("%s: poll: %s", dev, strerror(errno));
				continue;
			}
			/*
			 * Records lost: POLLERR stays until the counts are read,
			 * which they are here (the total comes at the end).
			 */
			if (p.revents & POLLERR)
				report_loss(fd, dev);
			if (!(p.revents & POLLIN))
				continue;
		}
		n = read(fd, buf, READ_SIZE);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("%s: read: %s", dev, strerror(errno));
		}
		if (!n)
			break;		/* stopped and drained */
		keep = scan(buf, n, bmax ? bmax - written : (uint64_t)n);
		if (keep && fwrite(buf, 1, keep, out) != keep)
			fatal("%s: %s", out_path ? out_path : "<stdout>", strerror(errno));
		written += keep;
	}
	if (fflush(out) || (out != stdout && fclose(out)))
		fatal("%s: %s", out_path ? out_path : "<stdout>", strerror(errno));
	if (ioctl(fd, KMON_GET_STATS, &st))
		fatal("%s: stats: %s", dev, strerror(errno));
	close(fd);

	if (tasks)
		qsort(tasks, tasks_cap, sizeof(*tasks), cmp_task);
	for (i = 0; i < ntasks; i++)
		fprintf(pf, "%u\t%s\n", tasks[i].pid, tasks[i].name);
	if (fclose(pf) || rename(pid_tmp, pid_path))
		fatal("%s: %s", pid_path, strerror(errno));
	free(pid_tmp);
	pid_tmp = NULL;

	fprintf(stderr, "%s: %llu bytes in %.3f s, %llu records received; ", prog, written,
		(now_ms() - t0) / 1000.0, (unsigned long long)st.records);
	fprintf(stderr, "lost: %llu (buffer full), %llu (refused by the rings)\n",
		(unsigned long long)st.overruns, (unsigned long long)st.ring_overruns);
	if (past_records)
		fprintf(stderr, "%s: %llu records (%llu bytes) past -m %llu not written\n",
			prog, past_records, past_bytes, bmax);
	return st.overruns || st.ring_overruns ? 1 : 0;
}
