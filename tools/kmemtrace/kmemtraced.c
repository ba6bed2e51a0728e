// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtraced - capture the kmemtrace relay files into a directory.
 *
 * One thread per CPU file, pinned to that CPU as the ABI asks (a reader
 * on another CPU could read an event its CPU is still writing), polls
 * and reads debugfs kmemtrace/cpu<n> into DIR/cpu<n>. On Ctrl-C, SIGTERM
 * or the end of -t SECONDS every file is drained, and DIR/meta records
 * what an analysis on another machine needs: ABI version, byte order,
 * word size, kernel release, CPUs, the kernel's loss counters at start
 * and end, and DIR/kallsyms to resolve call sites.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kmt_events.h"

#define MAX_CPUS	1024
#define READ_SIZE	(256 * 1024)

static const char *prog = "kmemtraced";
static sig_atomic_t stop;
/* Set once tracing is off (with -e), for the readers' final drain. */
static int drain;

struct reader {
	pthread_t thread;
	int cpu;
	int in, out;
	bool pinned;
	/* Written by the reader thread, read by the main one. */
	__u64 events, bytes;
	unsigned char carry[65536];	/* an event cut by a read */
	size_t ncarry;
	__u64 bad_at;		/* offset of a bad event size, + 1 */
	int err;
};

static struct reader readers[MAX_CPUS];
static int nreaders;

static void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: %s [-o DIR] [-t SECONDS] [-e] [-q] [-d DEBUGFS_DIR]\n"
		"Captures kmemtrace events from debugfs kmemtrace/cpu<n> into DIR\n"
		"(default kmemtrace.out): DIR/cpu<n>, DIR/meta, DIR/kallsyms.\n"
		"  -o, --output=DIR      where to write (created; must be empty)\n"
		"  -t, --time=SECONDS    stop after SECONDS (default: Ctrl-C)\n"
		"  -e, --enable          turn tracing on at the start and off before the\n"
		"                        final drain: a complete capture\n"
		"  -q, --quiet           no progress line\n"
		"  -d, --dir=PATH        the kmemtrace directory\n"
		"                        (default /sys/kernel/debug/kmemtrace)\n"
		"Exit status: 0 done, 1 done but events were lost, 2 error.\n",
		prog);
}

static char *read_text(const char *path)
{
	static char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

/* One "key value" line of kmemtrace/stats. */
static __u64 stat_value(const char *dir, const char *key)
{
	char path[PATH_MAX], *s, *p;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), "%s/stats", dir);
	s = read_text(path);
	if (!s)
		fatal("%s: %s", path, strerror(errno));
	for (p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtoull(p + kl + 1, NULL, 10);
	fatal("%s: no \"%s\" line", path, key);
	return 0;
}

static void write_all(int fd, const void *buf, size_t n, const char *what)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			fatal("writing %s: %s", what, strerror(errno));
		}
		p += w;
		n -= w;
	}
}

/* Counts the whole events in what was read; keeps a cut one for later. */
static void count_events(struct reader *r, const unsigned char *buf, size_t n)
{
	size_t off = 0;

	while (off < n) {
		size_t need;
		unsigned int size;

		if (r->ncarry) {
			size_t take;

			need = r->ncarry < 4 ? 4 : kmt_peek_size(r->carry, r->ncarry, false);
			if (r->ncarry >= 4 && need < KMT_HDR_SIZE)
				goto bad;
			take = need - r->ncarry;
			if (take > n - off)
				take = n - off;
			memcpy(r->carry + r->ncarry, buf + off, take);
			r->ncarry += take;
			off += take;
			if (r->ncarry >= 4 &&
			    r->ncarry == kmt_peek_size(r->carry, r->ncarry, false)) {
				r->events++;
				r->ncarry = 0;
			}
			continue;
		}
		size = kmt_peek_size(buf + off, n - off, false);
		if (n - off >= 4 && size < KMT_HDR_SIZE)
			goto bad;
		if (n - off < 4 || size > n - off) {
			r->ncarry = n - off;
			memcpy(r->carry, buf + off, r->ncarry);
			return;
		}
		r->events++;
		off += size;
	}
	return;
bad:
	/* The rest cannot be counted; kmemtrace-check will say why. */
	if (!r->bad_at)
		r->bad_at = r->bytes + off + 1;
	r->ncarry = 0;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(READ_SIZE);
	char what[32];
	bool draining = false;
	cpu_set_t set;

	snprintf(what, sizeof(what), "cpu%d", r->cpu);
	if (!buf)
		fatal("out of memory");
	/* On its CPU, where the writer cannot be half-way through an event. */
	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	r->pinned = !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (;;) {
		struct pollfd pfd = { .fd = r->in, .events = POLLIN };
		ssize_t n;

		if (!draining && __atomic_load_n(&drain, __ATOMIC_ACQUIRE))
			draining = true;
		if (!draining && poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(r->in, buf, READ_SIZE);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r->err = errno;
			break;
		}
		if (n == 0) {
			if (draining)
				break;
			continue;
		}
		write_all(r->out, buf, n, what);
		if (!r->bad_at)
			count_events(r, buf, n);
		__atomic_store_n(&r->bytes, r->bytes + n, __ATOMIC_RELAXED);
	}
	free(buf);
	return NULL;
}

static void set_enable(const char *dir, const char *v)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/enable", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, v, 1) != 1)
		fatal("writing %s to %s: %s", v, path, strerror(errno));
	close(fd);
}

static void on_signal(int sig)
{
	stop = 1;
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0) {
		fprintf(stderr, "%s: %s: %s; call sites cannot be resolved elsewhere\n",
			prog, from, strerror(errno));
		return;
	}
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		fatal("%s: %s", to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		write_all(out, buf, n, to);
	close(in);
	close(out);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "time", required_argument, NULL, 't' },
		{ "enable", no_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *out = "kmemtrace.out", *dir = "/sys/kernel/debug/kmemtrace";
	__u64 lost0, lostb0, ev0, lost1, lostb1, ev1, events = 0, bytes = 0;
	bool enable = false, quiet = false, progress, was_on, stopped;
	struct timespec t0, t1;
	double seconds = 0;
	char path[PATH_MAX], *s, *end;
	struct utsname u;
	FILE *meta;
	int c, i, abi, status = 0;

	while ((c = getopt_long(argc, argv, "o:t:eqd:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 't':
			seconds = strtod(optarg, &end);
			if (*end || seconds <= 0)
				fatal("-t %s: not a number of seconds > 0", optarg);
			break;
		case 'e':
			enable = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			help(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		help(stderr);
		return 2;
	}

	snprintf(path, sizeof(path), "%s/abi_version", dir);
	s = read_text(path);
	if (!s)
		fatal("%s: %s (is debugfs mounted, CONFIG_KMEMTRACE_ALLOC on, and are you root?)",
		      path, strerror(errno));
	abi = atoi(s);
	if (abi != KMEMTRACE_ABI_VERSION)
		fprintf(stderr, "%s: the kernel speaks ABI %d, this tool %d; capturing anyway\n",
			prog, abi, KMEMTRACE_ABI_VERSION);
	if (mkdir(out, 0755) && errno != EEXIST)
		fatal("%s: %s", out, strerror(errno));
	snprintf(path, sizeof(path), "%s/meta", out);
	if (!access(path, F_OK))
		fatal("%s already holds a capture", out);

	for (i = 0; i < MAX_CPUS; i++) {
		struct reader *r = &readers[nreaders];

		snprintf(path, sizeof(path), "%s/cpu%d", dir, i);
		r->in = open(path, O_RDONLY);
		if (r->in < 0) {
			if (errno == ENOENT)
				continue;
			fatal("%s: %s", path, strerror(errno));
		}
		snprintf(path, sizeof(path), "%s/cpu%d", out, i);
		r->out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (r->out < 0)
			fatal("%s: %s", path, strerror(errno));
		r->cpu = i;
		nreaders++;
	}
	if (!nreaders)
		fatal("%s: no cpu<n> files", dir);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ev0 = stat_value(dir, "events");
	lost0 = stat_value(dir, "lost_events");
	lostb0 = stat_value(dir, "lost_bytes");
	snprintf(path, sizeof(path), "%s/enable", dir);
	s = read_text(path);
	was_on = s && atoi(s) == 1;
	if (enable)
		set_enable(dir, "1");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nreaders; i++) {
		int err = pthread_create(&readers[i].thread, NULL, reader_main, &readers[i]);

		if (err)
			fatal("cannot start a reader: %s", strerror(err));
	}

	progress = !quiet && isatty(STDERR_FILENO);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		__u64 e = 0, b = 0;

		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (seconds && (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			stop = 1;
		if (!progress)
			continue;
		for (i = 0; i < nreaders; i++) {
			e += __atomic_load_n(&readers[i].events, __ATOMIC_RELAXED);
			b += __atomic_load_n(&readers[i].bytes, __ATOMIC_RELAXED);
		}
		fprintf(stderr, "\r%s: %llu events, %llu KiB, %llu lost   ",
			prog, e, b >> 10, stat_value(dir, "lost_events") - lost0);
	}
	if (progress)
		fputc('\n', stderr);
	/*
	 * What -e started stops before the drain, which then gets it all:
	 * once enable is written, no event is being recorded any more.
	 */
	if (enable)
		set_enable(dir, "0");
	snprintf(path, sizeof(path), "%s/enable", dir);
	s = read_text(path);
	stopped = s && atoi(s) == 0;
	__atomic_store_n(&drain, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nreaders; i++)
		pthread_join(readers[i].thread, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ev1 = stat_value(dir, "events");
	lost1 = stat_value(dir, "lost_events");
	lostb1 = stat_value(dir, "lost_bytes");

	snprintf(path, sizeof(path), "%s/kallsyms", out);
	copy_file("/proc/kallsyms", path);
	uname(&u);
	snprintf(path, sizeof(path), "%s/meta", out);
	meta = fopen(path, "w");
	if (!meta)
		fatal("%s: %s", path, strerror(errno));
	fprintf(meta, "# kmemtrace capture, written by kmemtraced\n");
	fprintf(meta, "abi_version %d\n", abi);
	{
		const uint16_t one = 1;

		fprintf(meta, "endianness %s\n", *(const uint8_t *)&one ? "little" : "big");
	}
	fprintf(meta, "word_size %zu\n", sizeof(long) * 8);
	fprintf(meta, "kernel_release %s\n", u.release);
	fprintf(meta, "machine %s\n", u.machine);
	fprintf(meta, "cpus %d\n", nreaders);
	fprintf(meta, "cpu_files");
	for (i = 0; i < nreaders; i++)
		fprintf(meta, " cpu%d", readers[i].cpu);
	fprintf(meta, "\n");
	fprintf(meta, "seconds %.3f\n",
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	fprintf(meta, "start_seq %llu\nend_seq %llu\n", ev0, ev1);
	fprintf(meta, "start_lost_events %llu\nend_lost_events %llu\n", lost0, lost1);
	fprintf(meta, "start_lost_bytes %llu\nend_lost_bytes %llu\n", lostb0, lostb1);
	/*
	 * Complete: tracing was off before and after, so every event
	 * numbered from start_seq to end_seq - 1 is in a file or was lost.
	 */
	fprintf(meta, "complete %d\n", enable && !was_on);
	/*
	 * Stopped: tracing was off when the final drain began, so events
	 * numbered after the last one captured, up to end_seq, were lost.
	 */
	fprintf(meta, "stopped %d\n", stopped);
	fprintf(meta, "symbols kallsyms\n");
	if (fclose(meta))
		fatal("%s: %s", path, strerror(errno));

	for (i = 0; i < nreaders; i++) {
		struct reader *r = &readers[i];

		printf("cpu%d: %llu events, %llu bytes%s\n", r->cpu, r->events,
		       r->bytes, r->pinned ? "" : " (read from another CPU)");
		if (r->err) {
			fprintf(stderr, "%s: reading cpu%d: %s\n", prog, r->cpu, strerror(r->err));
			status = 2;
		}
		if (r->bad_at) {
			fprintf(stderr, "%s: cpu%d: offset %llu: bad event size\n",
				prog, r->cpu, r->bad_at - 1);
			status = 2;
		}
		if (r->ncarry) {
			fprintf(stderr, "%s: cpu%d: ends in %zu bytes of an unfinished event\n",
				prog, r->cpu, r->ncarry);
			status = 2;
		}
		close(r->out);
		events += r->events;
		bytes += r->bytes;
	}
	printf("total: %llu events, %llu bytes\n", events, bytes);
	printf("lost while capturing: %llu events, %llu bytes; total_overruns %llu\n",
	       lost1 - lost0, lostb1 - lostb0, lostb1);
	if (!status && lost1 != lost0)
		status = 1;
	return status;
}
