/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmonlog.h - what kmonlog.c builds on: one run's options, files and
 * counts (struct kmonlog), writes that finish or exit, the tasks the
 * records mention, named when first seen, before they can exit, and the
 * command line.
 */
#ifndef KMT_KMONLOG_H
#define KMT_KMONLOG_H

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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/kmemtrace.h>
#include <linux/ktr.h>

#include "kmon_log.h"
#include "kmt_classes.h"
#include "kmt_cli.h"
#include "kmt_meta.h"
#include "kmt_msg.h"
#include "kmt_nice.h"
#include "kmt_pace.h"
#include "kmt_size.h"

/* What one read() asks for: the device returns as many whole records as fit. */
#define READ_SIZE	(4 << 20)
/* The longest single wait of ppoll() for -t: the deadline is checked again after it. */
#define MAX_WAIT_MS	(24ULL * 3600 * 1000)

static const char *prog = "kmonlog";

/* Exit status 2: bad usage or an I/O error (1 is for records lost). */
#define fatal(...)	kmt_die(prog, KMT_EXIT_USAGE, __VA_ARGS__)

/**
 * struct kmonlog - one run: its options, its files and its counts
 * @dev_path: -d, the kmon device
 * @out_path: -o, or NULL for standard output
 * @pid_path: -p, as given (for messages)
 * @pid_file: the file @pid_path names, symbolic links resolved
 * @bufsize_arg: -b as given, for messages
 * @bufsize: -b, the buffer size asked of the device
 * @classes: -C, 0 to leave the device's own (sched)
 * @ms: -t, 0 for no time limit
 * @bmax: -m, 0 for no size limit
 * @nice: --nice, and whether it was given
 * @dev: the device's descriptor
 * @out: the output's descriptor (STDOUT_FILENO without -o)
 * @out_name: the output, for messages
 * @pid_fd: where the task list goes: a temporary file beside @pid_file,
 *	or @pid_file itself if that is not a regular file
 * @use_read: --read: read() even where the buffer can be mapped
 * @ctrl, @data: the device's control page and its buffer mapped twice
 *	in a row, or NULL to read()
 * @buf: READ_SIZE bytes, what one read() returns; with the mapping, the
 *	buffer's size, where take_mapped() moves a batch when behind
 * @t0, @deadline: when the capture started and when -t ends it (ms)
 * @pace: when the mapping was last read (pace())
 * @written: bytes written to the output
 * @records_read: records read from the device, written or past -m
 * @past_records, @past_bytes: read but not written, past -m's limit
 * @limit_hit: -m's limit is reached: no record is written after it
 * @st: the device's counters at the end
 */
struct kmonlog {
	const char *dev_path, *out_path, *pid_path, *bufsize_arg;
	char *pid_file;
	long bufsize;
	uint64_t classes;
	unsigned long long ms, bmax;
	int nice;
	bool nice_given;

	int dev, out, pid_fd;
	const char *out_name;
	bool use_read;
	struct kmon_mmap_page *ctrl;
	const unsigned char *data;
	unsigned char *buf;
	uint64_t t0, deadline;
	struct kmt_pace pace;
	unsigned long long written, records_read, past_records, past_bytes;
	bool limit_hit;
	/* A write of the log failed (cut_err): the rest is lost, not past -m. */
	int cut_err;
	unsigned long long batch_records;	/* of the last scan(), kept */
	struct kmon_stats st;
};

/* CLOCK_MONOTONIC in milliseconds. */
static uint64_t now_ms(void)
{
	return kmt_now_us() / 1000;
}

/* All of @len bytes of @buf to @fd (kmt_write_all()), or exit 2 naming @name. */
static void write_all(int fd, const void *buf, size_t len, const char *name)
{
	if (kmt_write_all(fd, buf, len))
		fatal("%s: %s", name, strerror(errno));
}

/*
 * The @len bytes of whole records scan() kept, written to the log. A
 * write that fails (a full disk) ends the capture, as -m's limit does:
 * the log is cut back to its last whole record, and the batch and every
 * record after it are counted lost.
 */
static void write_records(struct kmonlog *k, const void *buf, size_t len)
{
	struct stat st;

	if (!len || !kmt_write_all(k->out, buf, len)) {
		k->written += len;
		return;
	}
	k->cut_err = errno;
	fprintf(stderr, "%s: %s: %s; the capture ends here\n", prog, k->out_name,
		strerror(errno));
	/* A pipe fails when its reader is gone: nobody to read a part record. */
	if (!fstat(k->out, &st) && S_ISREG(st.st_mode) && ftruncate(k->out, k->written))
		fprintf(stderr, "%s: %s: cannot cut it back to its last whole record: %s\n",
			prog, k->out_name, strerror(errno));
	k->past_records += k->batch_records;
	k->past_bytes += len;
	k->limit_hit = true;
}

/*
 * open(), again if a stop signal interrupts it: a FIFO's open waits for
 * its other end, and a first signal is a request to stop the capture,
 * not an error (the second one kills).
 */
static int open_retry(const char *path, int flags, mode_t mode)
{
	int fd;

	do
		fd = open(path, flags, mode);
	while (fd < 0 && errno == EINTR);
	return fd;
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

/*
 * The PIDs seen last, by their low bits (stored + 1: 0 is empty): a
 * storm's records name the same few tasks, and a hit costs no lookup.
 */
#define SEEN_RECENT	64
static uint32_t seen_recent[SEEN_RECENT];

static void see(uint32_t pid)
{
	uint32_t *recent = &seen_recent[pid % SEEN_RECENT];
	struct task *t;

	if (*recent == pid + 1)
		return;
	*recent = pid + 1;

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

/* The PIDs a record names, for pids.dat. */
static void see_record(const unsigned char *blob, size_t bl)
{
	uint32_t a, z;
	size_t want;
	int kind;

	if (kmon_sched_blob(blob, bl, &kind, &a, &z, &want) && bl == want) {
		see(a);
		if (kind >= KMON_DT_TSKSWITCH)
			see(z);
	} else if (kmon_alloc_blob(blob, bl, &a, &want) && bl == want) {
		/* PID 0 is the idle task only in process context. */
		if (a || !(blob[2] & (KMEMTRACE_CTX_HARDIRQ | KMEMTRACE_CTX_SOFTIRQ)))
			see(a);
	}
}

/*
 * The records in @buf (@len bytes, as read() returned them): the number
 * of bytes of those that go to the output, whole records in the order
 * read up to the first that would take it past -m's limit, noting their
 * PIDs. That one and every record after it, in this read or a later
 * one, are counted as past the limit: the log has no hole. The device
 * returns whole records only; anything else is corrupt input (exit 3).
 */
static size_t scan(struct kmonlog *k, const unsigned char *buf, size_t len)
{
	size_t off = 0, keep = 0;

	k->batch_records = 0;
	while (off < len) {
		size_t hl, bl;

		if (len - off < KMON_HDR_SIZE + (buf[off] == KMON_CPU_EXT ? KMON_CPU_EXT_SIZE : 0))
			kmt_die(prog, KMT_EXIT_CORRUPT,
				"%s: a partial record header at byte %zu of a read of %zu bytes",
				k->dev_path, off, len);
		hl = kmon_hdr_len(buf + off);
		bl = kmon_blob_len(buf + off);
		if (!bl || bl > KMON_BLOB_MAX)
			kmt_die(prog, KMT_EXIT_CORRUPT,
				"%s: a blob of %zu bytes, not 1 to %d, at byte %zu of a read",
				k->dev_path, bl, KMON_BLOB_MAX, off);
		if (hl + bl > len - off)
			kmt_die(prog, KMT_EXIT_CORRUPT,
				"%s: a partial record at byte %zu of a read of %zu bytes",
				k->dev_path, off, len);
		k->records_read++;
		if (!k->limit_hit && k->bmax && k->written + off + hl + bl > k->bmax)
			k->limit_hit = true;
		if (k->limit_hit) {
			k->past_records++;
			k->past_bytes += hl + bl;
		} else {
			see_record(buf + off + hl, bl);
			keep = off + hl + bl;
			k->batch_records++;
		}
		off += hl + bl;
	}
	return keep;
}

/* ---- The command line ----------------------------------------------- */

/* Whether @s, which kmt_parse_size() refused, is a well-formed size of 0 ("0", "00k"). */
static bool size_is_zero(const char *s)
{
	const char *unit = s + strspn(s, "0");
	char one[8];
	unsigned long long v;

	if (unit == s || strlen(unit) > 2)
		return false;
	snprintf(one, sizeof(one), "1%s", unit);
	return kmt_parse_size(one, &v);
}

static unsigned long long parse_size(const char *opt, const char *s)
{
	unsigned long long v;

	if (!kmt_parse_size(s, &v)) {
		fprintf(stderr, "%s: %s: '%s' %s\n", prog, opt, s,
			size_is_zero(s) ? "must be above 0" : "is not a size (N, Nk, NM, NG)");
		exit(KMT_EXIT_USAGE);
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
		exit(KMT_EXIT_USAGE);
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

/* -C: a mask (0x80000) or names, comma-separated (sched,kmalloc). */
static uint64_t parse_classes(const char *s)
{
	uint64_t mask;
	char bad[64];

	if (kmt_parse_classes(s, class_names, &mask, bad, sizeof(bad))) {
		fprintf(stderr, "%s: -C: '%s' is not a class mask or a list of %s\n", prog, s,
			"sched, kmalloc, kmem_cache, page");
		exit(KMT_EXIT_USAGE);
	}
	if (!mask) {
		fprintf(stderr, "%s: -C: '%s' names no class: it would log nothing\n", prog, s);
		exit(KMT_EXIT_USAGE);
	}
	return mask;
}

static const char help_text[] =
	"Capture /dev/kmon records to OUTFIL, and the tasks they name to PIDFIL.\n"
	"\n"
	"  -d, --device=DEVICE       the kmon device file (default /dev/kmon)\n"
	"  -b, --buffer-size=BUFSIZ  the device's buffer, N, Nk, NM or NG bytes\n"
	"                            (default 1M)\n"
	"  -C, --classes=CLASSES     the events to log: a mask or names, comma-\n"
	"                            separated, of sched, kmalloc, kmem_cache, page\n"
	"                            (default: the device's, sched)\n"
	"  -o, --output=OUTFIL       the log (default standard output)\n"
	"  -t, --time-ms=MSTEST      stop after MSTEST milliseconds (default: none)\n"
	"  -m, --bytes=BMAX          stop at BMAX bytes: the log holds the records up\n"
	"                            to the first that would pass BMAX, whole ones\n"
	"                            only; those read after are counted, not written\n"
	"  -p, --pids=PIDFIL         the tasks the log names (default pids.dat),\n"
	"                            replaced at the end, kept if the capture fails\n"
	"      --nice=NICE           read at nice NICE, -20 to 19 (default: -10 if\n"
	"                            started at nice 0, so that it keeps up with\n"
	"                            tasks that log without pause; else unchanged)\n"
	"      --read                read() the records, even where the device's\n"
	"                            buffer can be mapped and read in place\n"
	"  -h, --help                show this help and exit\n"
	"  -V, --version             show the version and exit\n"
	"\n"
	"-c, the old letter of -C, still works in this release, with a warning:\n"
	"in ktrdump and kmemtrace-report it names CPUs, and will here too.\n"
	"-n, the old letter of --nice, also still works with a warning; in\n"
	"kmemtrace-report it is a number of rows.\n"
	"\n"
	"DEVICE, OUTFIL, PIDFIL and standard error must be different files\n"
	"(character devices such as /dev/null excepted, DEVICE not).\n"
	"A first SIGINT or SIGTERM stops the capture and reads the records still\n"
	"in the device; a second one ends kmonlog at once. The totals and any\n"
	"loss are printed on standard error.\n";

static void show_help(FILE *f)
{
	fprintf(f, "Usage: %s [-d DEVICE] [-b BUFSIZ] [-C CLASSES] [-o OUTFIL] [-t MSTEST]\n"
		"               [-m BMAX] [-p PIDFIL] [--nice=NICE] [--read] [-h] [-V]\n", prog);
	fputs(help_text, f);
	fprintf(f, KMT_EXIT_HELP, "records were lost");
}

static void parse_args(struct kmonlog *k, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "classes", required_argument, NULL, 'C' },
		{ "output", required_argument, NULL, 'o' },
		{ "time-ms", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'm' },
		{ "pids", required_argument, NULL, 'p' },
		{ "nice", required_argument, NULL, KMT_OPT_NICE },
		{ "read", no_argument, NULL, KMT_OPT_READ },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long long size;
	int c;

	/* getopt's messages begin with argv[0]: "kmonlog: ", as kmonlog's own. */
	argv[0] = (char *)prog;
	while ((c = getopt_long(argc, argv, "d:b:C:c:o:t:m:p:n:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			k->dev_path = optarg;
			break;
		case 'b':
			size = parse_size("-b", optarg);
			/* The kernel says what it takes; a long must hold it. */
			k->bufsize = size > LONG_MAX ? LONG_MAX : size;
			k->bufsize_arg = optarg;
			break;
		case 'c':
			/*
			 * kmonlog's letter for --classes until now; a CPU
			 * list in ktrdump and kmemtrace-report, and here in
			 * the next release. Said once, the status unchanged.
			 */
			kmt_old_letter(prog, 'c', "-C (classes)", "name CPUs");
			fallthrough;
		case 'C':
			k->classes = parse_classes(optarg);
			break;
		case 'o':
			k->out_path = optarg;
			break;
		case 't':
			k->ms = parse_ms(optarg);
			break;
		case 'm':
			k->bmax = parse_size("-m", optarg);
			break;
		case 'p':
			k->pid_path = optarg;
			break;
		case 'n':
			/* --nice's letter until now; a count in kmemtrace-report. */
			kmt_old_letter(prog, 'n', "--nice", "be a count");
			fallthrough;
		case KMT_OPT_NICE:
			if (!kmt_parse_nice(optarg, &k->nice)) {
				fprintf(stderr, "%s: --nice=%s: not a nice value from -20 to 19\n",
					prog, optarg);
				exit(KMT_EXIT_USAGE);
			}
			k->nice_given = true;
			break;
		case KMT_OPT_READ:
			k->use_read = true;
			break;
		case 'h':
			show_help(stdout);
			exit(fflush(stdout) ? KMT_EXIT_USAGE : KMT_EXIT_OK);
		case 'V': {
			char formats[32];

			snprintf(formats, sizeof(formats), "kmon format %d", KMON_VERSION);
			kmt_print_version(prog, formats);
			exit(fflush(stdout) ? KMT_EXIT_USAGE : KMT_EXIT_OK);
		}
		default:
			show_help(stderr);
			exit(KMT_EXIT_USAGE);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		show_help(stderr);
		exit(KMT_EXIT_USAGE);
	}
}

#endif /* KMT_KMONLOG_H */
