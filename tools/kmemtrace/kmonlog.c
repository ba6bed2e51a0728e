// SPDX-License-Identifier: GPL-2.0
/*
 * kmonlog - capture /dev/kmon records to a file, and the names of the
 * tasks they mention to pids.dat, as the 2007 kmonlog did. See
 * Documentation/trace/kmon.rst and kmonlog(8).
 *
 *   kmonlog [-d DEVICE] [-b BUFSIZ] [-C CLASSES] [-o OUTFIL] [-t MSTEST]
 *           [-m BMAX] [-p PIDFIL] [--nice=NICE] [-h] [-V]
 *
 * It starts an instance, writes whole records to OUTFIL until MSTEST
 * milliseconds have passed, BMAX bytes were written, or SIGINT/SIGTERM;
 * then stops the instance, drains what it holds, writes PIDFIL and
 * reports what was lost. main() reads as the list of those steps.
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
#include "kmt_cli.h"
#include "kmt_meta.h"
#include "kmt_msg.h"
#include "kmt_nice.h"
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
 * @buf: READ_SIZE bytes, what one read() returns
 * @t0, @deadline: when the capture started and when -t ends it (ms)
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
	unsigned char *buf;
	uint64_t t0, deadline;
	unsigned long long written, records_read, past_records, past_bytes;
	bool limit_hit;
	struct kmon_stats st;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * All of @len bytes of @buf to @fd, or exit 2 naming @name. A write that
 * a stop signal interrupts is resumed: the first signal stops the
 * capture, it does not throw away what was read (the second one kills).
 */
static void write_all(int fd, const void *buf, size_t len, const char *name)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("%s: %s", name, n ? strerror(errno) : "nothing written");
		p += n;
		len -= n;
	}
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
		"               [-m BMAX] [-p PIDFIL] [--nice=NICE] [-h] [-V]\n", prog);
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

/* ---- The files: output, task list, device ---------------------------- */

/*
 * Until the capture starts, a failure removes the output file it
 * created and the task list's temporary file: a run that captured
 * nothing leaves nothing. (A second signal, which kills at once, leaves
 * the temporary file.)
 */
static const char *created_out, *pid_tmp;

static void remove_leftovers(void)
{
	if (created_out)
		unlink(created_out);
	if (pid_tmp)
		unlink(pid_tmp);
}

/*
 * Standard input, output and error open, on /dev/null if they were not:
 * else the device or the output would take their numbers, and the
 * messages of standard error would go into the log. Whether standard
 * output was closed: without -o, that is an error, before the capture.
 */
static bool keep_std_fds(void)
{
	bool stdout_closed = false;
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		stdout_closed |= fd == STDOUT_FILENO;
		if (open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			exit(KMT_EXIT_USAGE);
	}
	return stdout_closed;
}

static void cleanup_at_exit(void)
{
	static bool registered;

	if (!registered)
		atexit(remove_leftovers);
	registered = true;
}

/* The text of the symbolic link @path (@size bytes, as lstat() said: 0 for some). */
static char *read_link(const char *path, size_t size)
{
	size_t cap = size + 1 > 64 ? size + 1 : 64;
	char *t;
	ssize_t n;

	for (;;) {
		t = malloc(cap);
		if (!t)
			fatal("out of memory");
		n = readlink(path, t, cap);
		if (n < 0)
			fatal("%s: %s", path, strerror(errno));
		if ((size_t)n < cap)
			break;
		free(t);
		cap *= 2;
	}
	t[n] = '\0';
	return t;
}

/*
 * The file -o names, symbolic links followed as open() would follow
 * them, even to a file that does not exist (which realpath() cannot
 * name): that file is the one open_output() creates, and the one to
 * remove if the run is refused. Not a symbolic link: @path itself.
 */
static char *link_target(const char *path)
{
	char *p = strdup(path), *t, *n;
	struct stat st;
	int hops;

	if (!p)
		fatal("out of memory");
	for (hops = 0; !lstat(p, &st) && S_ISLNK(st.st_mode); hops++) {
		if (hops == 40)
			fatal("%s: %s", path, strerror(ELOOP));
		t = read_link(p, st.st_size);
		if (t[0] == '/' || !strchr(p, '/')) {
			n = t;
		} else {
			/* Relative to the link's directory. */
			int dir = strrchr(p, '/') - p + 1;

			if (asprintf(&n, "%.*s%s", dir, p, t) < 0)
				fatal("out of memory");
			free(t);
		}
		free(p);
		p = n;
	}
	return p;
}

/*
 * -o: opened without truncating it, so that a run refused by
 * check_files() leaves it as it was; truncate_output() empties it when
 * the capture is about to start. A file that did not exist, even one a
 * dangling symbolic link names, is created with O_EXCL and removed if
 * the run ends before the capture: a refused run leaves nothing.
 */
static void open_output(struct kmonlog *k)
{
	struct stat st;
	char *file;
	bool created;

	k->out = STDOUT_FILENO;
	k->out_name = "standard output";
	if (!k->out_path)
		return;
	k->out_name = k->out_path;
	file = link_target(k->out_path);
	created = lstat(file, &st) && errno == ENOENT;
	k->out = open_retry(file, O_WRONLY | O_CREAT | O_CLOEXEC | (created ? O_EXCL : 0), 0666);
	if (k->out < 0)
		fatal("%s: %s", k->out_path, strerror(errno));
	if (created) {
		created_out = file;
		cleanup_at_exit();
	} else {
		free(file);
	}
}

/*
 * -o's file is emptied, as fopen("w") would have. Standard output is
 * left as the shell opened it: "kmonlog >>log" appends.
 */
static void truncate_output(struct kmonlog *k)
{
	struct stat st;

	if (k->out_path && !fstat(k->out, &st) && S_ISREG(st.st_mode) && st.st_size &&
	    ftruncate(k->out, 0))
		fatal("%s: %s", k->out_name, strerror(errno));
	/* From now on the output is the capture's, whatever happens. */
	created_out = NULL;
}

/*
 * -p names the file the task list goes to: through a symbolic link, the
 * file it points to (the temporary file and the rename are beside it,
 * not beside the link, which would be replaced by them).
 */
static void resolve_pidfile(struct kmonlog *k)
{
	struct stat st;

	k->pid_file = strdup(k->pid_path);
	if (!k->pid_file)
		fatal("out of memory");
	if (lstat(k->pid_path, &st) || !S_ISLNK(st.st_mode))
		return;
	free(k->pid_file);
	k->pid_file = realpath(k->pid_path, NULL);
	if (!k->pid_file)
		fatal("-p %s: a symbolic link to %s: %s", k->pid_path,
		      errno == ENOENT ? "a file that does not exist" : "nothing usable",
		      strerror(errno));
}

/* Whether @fd is a character device: /dev/null, a terminal. */
static bool is_chrdev(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode);
}

static bool same_fds(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Refuses the run: nothing is truncated, nothing was started. */
#define refuse(...)	kmt_die(prog, KMT_EXIT_USAGE, __VA_ARGS__)

/*
 * The device, the output, the task list and standard error must be
 * different files, compared by device and inode, however they are
 * spelled (./x and x, ../dir/./x, a symbolic or a hard link, standard
 * output redirected by the shell): else the task list would replace the
 * capture at the end, the capture would overwrite the device, or the
 * messages would be mixed into the log or lost. Character devices other
 * than the kmon device, such as /dev/null, may be shared. The output
 * exists by now (open_output()); the task list may not, and then is no
 * other file.
 */
static void check_files(struct kmonlog *k)
{
	const char *out = k->out_path ? "-o" : "standard output";
	const char *pf = k->pid_file;
	struct stat st;

	if (kmt_same_fd_file(k->out, k->dev_path))
		refuse("%s and -d name the same file (%s): the log would overwrite the device",
		       out, k->dev_path);
	if (kmt_same_file(pf, k->dev_path))
		refuse("-p and -d name the same file (%s): the task list would replace the device",
		       k->dev_path);
	if (kmt_same_fd_file(STDERR_FILENO, k->dev_path))
		refuse("standard error is the device (%s)", k->dev_path);
	if (kmt_same_fd_file(k->out, pf) && !is_chrdev(k->out))
		refuse("%s and -p name the same file (%s%s%s): the task list would replace the log",
		       out, k->out_path ?: "", k->out_path ? ", " : "", k->pid_path);
	if (same_fds(k->out, STDERR_FILENO) && !is_chrdev(k->out))
		refuse("%s and standard error are the same file%s%s%s: %s", out,
		       k->out_path ? " (" : "", k->out_path ?: "", k->out_path ? ")" : "",
		       "the messages would be mixed into the log");
	if (kmt_same_fd_file(STDERR_FILENO, pf) && !is_chrdev(STDERR_FILENO))
		refuse("-p and standard error name the same file (%s): %s", k->pid_path,
		       "the messages would be lost with it");
	if (!stat(pf, &st) && S_ISDIR(st.st_mode))
		refuse("-p %s: is a directory", k->pid_path);
}

/*
 * The task list's file, opened now, not after a capture of hours that
 * would end without it. A regular file (or a new one) is written beside
 * its name and renamed over it at the end: a capture that fails keeps
 * the previous one. The new file gets the old one's mode, and its owner
 * when root runs kmonlog; hard links to the old one keep the old list.
 * A regular file the user may not write is refused: the rename would go
 * around its mode, and writing it in place would fail. Anything else
 * (/dev/null, a FIFO, a terminal) is written as it is: renaming over it
 * would replace it.
 */
static void open_pidfile(struct kmonlog *k)
{
	mode_t mask = umask(0);
	struct stat st;
	char *tmp;

	umask(mask);
	if (stat(k->pid_file, &st)) {
		st.st_mode = 0;
	} else if (!S_ISREG(st.st_mode)) {
		k->pid_fd = open_retry(k->pid_file, O_WRONLY | O_CLOEXEC, 0);
		if (k->pid_fd < 0)
			fatal("%s: %s", k->pid_path, strerror(errno));
		return;
	} else if (faccessat(AT_FDCWD, k->pid_file, W_OK, AT_EACCESS)) {
		/* The rename could replace it; writing it in place could not. */
		refuse("-p %s: not writable (%s)", k->pid_path, strerror(errno));
	}
	tmp = malloc(strlen(k->pid_file) + sizeof(".XXXXXX"));
	if (!tmp)
		fatal("out of memory");
	sprintf(tmp, "%s.XXXXXX", k->pid_file);
	k->pid_fd = mkostemp(tmp, O_CLOEXEC);
	if (k->pid_fd < 0)
		fatal("%s: %s", k->pid_path, strerror(errno));
	pid_tmp = tmp;
	cleanup_at_exit();
	/*
	 * mkstemp() makes it 0600: the old file's mode (and owner, which
	 * only root may give) on the new one, or what open(O_CREAT, 0666)
	 * would have given a new file. The owner first: chown() clears
	 * the set-user-ID and set-group-ID bits.
	 */
	if (st.st_mode && !geteuid() && fchown(k->pid_fd, st.st_uid, st.st_gid))
		fatal("%s: %s", pid_tmp, strerror(errno));
	if (fchmod(k->pid_fd, st.st_mode ? st.st_mode & 07777 : 0666 & ~mask))
		fatal("%s: %s", pid_tmp, strerror(errno));
}

static void open_device(struct kmonlog *k)
{
	k->dev = open(k->dev_path, O_RDONLY | O_CLOEXEC);
	if (k->dev < 0)
		fatal("%s: %s%s", k->dev_path, strerror(errno),
		      errno == EPERM || errno == EACCES ?
		      " (it needs CAP_SYS_ADMIN and CAP_SYSLOG)" : "");
}

/* The reader's priority, the buffer's size and the classes. */
static void setup_device(struct kmonlog *k)
{
	if (kmt_nice_wanted(k->nice_given) && setpriority(PRIO_PROCESS, 0, k->nice) &&
	    k->nice_given)
		fprintf(stderr, "%s: nice %d: %s; reading at the nice value inherited\n",
			prog, k->nice, strerror(errno));
	if (ioctl(k->dev, KMON_BUFFSIZE, &k->bufsize)) {
		if (errno == EINVAL)
			fatal("%s: buffer size %s: %s (the device takes %ld to %ld bytes)",
			      k->dev_path, k->bufsize_arg, strerror(errno), KMON_BUFFSIZE_MIN,
			      KMON_BUFFSIZE_MAX);
		fatal("%s: buffer size %s: %s", k->dev_path, k->bufsize_arg, strerror(errno));
	}
	if (k->classes && ioctl(k->dev, KMON_SET_CLASSES, &k->classes))
		fatal("%s: classes %#llx: %s%s", k->dev_path, (unsigned long long)k->classes,
		      strerror(errno),
		      errno == EINVAL ? " (not all are in this kernel: CONFIG_KMON_CLASSES)" : "");
}

/* ---- The capture ---------------------------------------------------- */

/* Once per overrun: a warning now; the totals come at the end. */
static void report_loss(struct kmonlog *k)
{
	struct kmon_stats st;

	if (ioctl(k->dev, KMON_GET_STATS, &st))
		fatal("%s: stats: %s", k->dev_path, strerror(errno));
	fprintf(stderr, "%s: records lost so far: %llu (buffer full), %llu (%s)\n", prog,
		(unsigned long long)st.overruns, (unsigned long long)st.ring_overruns,
		"refused by the rings");
}

/* Whether to stop taking new records: a stop signal, -t's time, -m's size. */
static bool capture_done(struct kmonlog *k)
{
	return kmt_stop_requested || k->limit_hit || (k->deadline && now_ms() >= k->deadline);
}

/* How long ppoll() may wait: until -t's deadline, at most MAX_WAIT_MS. */
static struct timespec *wait_time(struct kmonlog *k, struct timespec *ts)
{
	uint64_t now = now_ms(), left;

	if (!k->deadline)
		return NULL;
	left = k->deadline > now ? k->deadline - now : 0;
	if (left > MAX_WAIT_MS)
		left = MAX_WAIT_MS;
	ts->tv_sec = left / 1000;
	ts->tv_nsec = left % 1000 * 1000000;
	return ts;
}

/*
 * Waits until there are records to read: true; false when the capture
 * is to stop. The stop signals are blocked from the test of
 * kmt_stop_requested to ppoll(), which unblocks them as it waits: one
 * that comes in between ends the wait at once instead of being seen only
 * after it.
 */
static bool wait_for_records(struct kmonlog *k, const sigset_t *stopsigs)
{
	for (;;) {
		struct pollfd p = { .fd = k->dev, .events = POLLIN };
		sigset_t waitmask;
		struct timespec ts;
		int n;

		sigprocmask(SIG_BLOCK, stopsigs, &waitmask);
		if (capture_done(k)) {
			sigprocmask(SIG_SETMASK, &waitmask, NULL);
			return false;
		}
		n = ppoll(&p, 1, wait_time(k, &ts), &waitmask);
		sigprocmask(SIG_SETMASK, &waitmask, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("%s: poll: %s", k->dev_path, strerror(errno));
		}
		if (p.revents & POLLNVAL)
			fatal("%s: poll: not a pollable file", k->dev_path);
		/*
		 * Records lost: POLLERR stays until the counts are read,
		 * which they are here (the total comes at the end).
		 */
		if (p.revents & POLLERR)
			report_loss(k);
		if (p.revents & POLLIN)
			return true;
		/* Stopped under us (POLLHUP): what is left is drained. */
		if (p.revents & POLLHUP)
			return false;
	}
}

/*
 * One read() of the device, written out up to -m's limit: false when
 * it returned nothing (a stopped instance that is drained).
 */
static bool read_records(struct kmonlog *k)
{
	ssize_t n = read(k->dev, k->buf, READ_SIZE);
	size_t keep;

	if (n < 0) {
		if (errno == EINTR)
			return true;
		fatal("%s: read: %s", k->dev_path, strerror(errno));
	}
	if (!n)
		return false;
	keep = scan(k, k->buf, n);
	if (keep)
		write_all(k->out, k->buf, keep, k->out_name);
	k->written += keep;
	/* At the limit exactly: no record fits any more, stop now. */
	if (k->bmax && k->written >= k->bmax)
		k->limit_hit = true;
	return true;
}

/*
 * Starts the instance, reads until it is time to stop, stops it (what
 * is logged until then comes to the buffer) and reads until the device
 * returns 0: it holds nothing more.
 */
static void capture(struct kmonlog *k)
{
	sigset_t stopsigs;

	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	k->buf = malloc(READ_SIZE);
	if (!k->buf)
		fatal("out of memory");
	if (ioctl(k->dev, KMON_START))
		fatal("%s: start: %s", k->dev_path, strerror(errno));
	k->t0 = now_ms();
	if (k->ms)
		k->deadline = k->ms > UINT64_MAX - k->t0 ? UINT64_MAX : k->t0 + k->ms;
	while (wait_for_records(k, &stopsigs) && read_records(k))
		;
	/* EALREADY: already stopped (POLLHUP); the rest is read all the same. */
	if (ioctl(k->dev, KMON_STOP) && errno != EALREADY)
		fatal("%s: stop: %s", k->dev_path, strerror(errno));
	while (read_records(k))
		;
	if (ioctl(k->dev, KMON_GET_STATS, &k->st))
		fatal("%s: stats: %s", k->dev_path, strerror(errno));
	close(k->dev);
	/* Errors of a write-back (NFS, a quota) come at the close. */
	if (close(k->out))
		fatal("%s: %s", k->out_name, strerror(errno));
}

/*
 * pids.dat: "PID<tab>NAME" per task the log names, by PID; written in
 * one go, then renamed over PIDFIL (a regular file), after fsync(), so
 * that a crash leaves the old list or the new one.
 */
static void write_pids(struct kmonlog *k)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		fatal("out of memory");
	if (tasks)
		qsort(tasks, tasks_cap, sizeof(*tasks), cmp_task);
	for (i = 0; i < ntasks; i++)
		fprintf(f, "%u\t%s\n", tasks[i].pid, tasks[i].name);
	if (fclose(f))
		fatal("out of memory");
	write_all(k->pid_fd, text, len, k->pid_path);
	free(text);
	if (pid_tmp && fsync(k->pid_fd))
		fatal("%s: %s", k->pid_path, strerror(errno));
	if (close(k->pid_fd))
		fatal("%s: %s", k->pid_path, strerror(errno));
	if (pid_tmp) {
		if (rename(pid_tmp, k->pid_file))
			fatal("%s: %s", k->pid_path, strerror(errno));
		pid_tmp = NULL;
	}
}

/*
 * The totals on standard error, and the exit status: 1 if the kernel
 * lost records, or if kmonlog read fewer than the device says it
 * received.
 */
static int report(struct kmonlog *k)
{
	const struct kmon_stats *st = &k->st;
	int status = KMT_EXIT_OK;

	fprintf(stderr, "%s: %llu bytes in %.3f s, %llu records received; ", prog, k->written,
		(now_ms() - k->t0) / 1000.0, (unsigned long long)st->records);
	fprintf(stderr, "lost: %llu (buffer full), %llu (refused by the rings)\n",
		(unsigned long long)st->overruns, (unsigned long long)st->ring_overruns);
	if (st->overruns || st->ring_overruns)
		status = KMT_EXIT_DATA;
	if (k->past_records)
		fprintf(stderr, "%s: %llu records (%llu bytes) past -m %llu not written\n",
			prog, k->past_records, k->past_bytes, k->bmax);
	if (st->records > k->records_read) {
		fprintf(stderr, "%s: %llu of the records received were not read: lost\n", prog,
			(unsigned long long)st->records - k->records_read);
		status = KMT_EXIT_DATA;
	}
	/* A report that could not be written is an I/O error. */
	if (fflush(stderr) || ferror(stderr))
		status = KMT_EXIT_USAGE;
	return status;
}

int main(int argc, char **argv)
{
	struct kmonlog k = {
		.dev_path = "/dev/kmon",
		.pid_path = "pids.dat",
		.bufsize = KMON_BUFFSIZE_DEFAULT,
		.bufsize_arg = "1M",
		.nice = KMT_NICE_DEFAULT,
	};
	bool stdout_closed = keep_std_fds();
	sigset_t stopsigs;

	parse_args(&k, argc, argv);
	if (stdout_closed && !k.out_path)
		fatal("standard output is closed: where should the log go? (-o OUTFIL)");
	/*
	 * From here a first SIGINT or SIGTERM stops the capture, even one
	 * that comes before it starts, and a second one ends kmonlog; even
	 * if they came blocked from the parent.
	 */
	kmt_catch_stop_signals();
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &stopsigs, NULL);

	open_output(&k);
	resolve_pidfile(&k);
	check_files(&k);
	open_device(&k);
	setup_device(&k);
	open_pidfile(&k);
	truncate_output(&k);
	capture(&k);
	write_pids(&k);
	return report(&k);
}
