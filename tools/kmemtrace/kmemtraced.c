// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtraced - capture the kmemtrace relay files into a directory.
 *
 * One thread per CPU file, pinned to that CPU as the ABI asks (a reader
 * on another CPU could read an event its CPU is still writing), polls
 * and reads debugfs kmemtrace/cpu<n> into DIR/cpu<n>; a CPU brought
 * online during the capture gets its reader within a second. On Ctrl-C,
 * SIGTERM or the end of -t SECONDS every file is drained, and DIR/meta
 * records what an analysis on another machine needs: ABI version, byte
 * order, word size, kernel release, CPUs, the sequence numbers and the
 * kernel's loss counters at start, drain and end, DIR/kallsyms to
 * resolve call sites and DIR/caches to name the slab caches. A first meta
 * is written at the start, so that a capture cut short by SIGKILL can
 * still be read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ctype.h>
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
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kmt_events.h"
#include "kmt_meta.h"
#include "kmt_msg.h"
#include "kmt_nice.h"
#include "kmt_size.h"

#define MAX_CPUS	1024
#define READ_SIZE	(256 * 1024)

static const char *prog = "kmemtraced";
static sig_atomic_t stop;
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
/* The readers' nice value (kmt_nice.h), if they set one. */
static int reader_nice = KMT_NICE_DEFAULT;
static bool nice_given, nice_set;
static int nice_warned;

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
static bool opened[MAX_CPUS];

static void set_enable(const char *dir, const char *v);

static void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kmt_vwarn(prog, fmt, ap);
	va_end(ap);
	/* Do not leave the kernel tracing for a capture that is gone. */
	if (enabled_dir) {
		const char *dir = enabled_dir;

		enabled_dir = NULL;
		set_enable(dir, "0");
	}
	exit(2);
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: %s [-o DIR] [-t SECONDS] [-b SIZE] [-e] [-q] [-n NICE] [-d DEBUGFS_DIR]\n"
		"Captures kmemtrace events from debugfs kmemtrace/cpu<n> into DIR\n"
		"(default kmemtrace.out): DIR/cpu<n>, DIR/meta, DIR/kallsyms, DIR/caches.\n"
		"  -o, --output=DIR      where to write (created; must be empty)\n"
		"  -t, --time=SECONDS    stop after SECONDS (default: Ctrl-C)\n"
		"  -b, --bytes=SIZE      stop within 10 ms of SIZE bytes (N, Nk, NM, NG)\n"
		"                        captured, then read what the buffers still hold\n"
		"  -e, --enable          turn tracing on at the start and off before the\n"
		"                        final drain: a complete capture\n"
		"  -q, --quiet           no progress line\n"
		"  -n, --nice=NICE       the readers' nice value, -20 to 19 (default: -10\n"
		"                        if started at nice 0, so that they keep up with\n"
		"                        tasks that allocate without pause; else unchanged)\n"
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

/* One "key value" line of @s, the text of kmemtrace/stats at @path. */
static __u64 stat_in(const char *s, const char *path, const char *key)
{
	size_t kl = strlen(key);
	const char *p;

	for (p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtoull(p + kl + 1, NULL, 10);
	fatal("%s: no \"%s\" line", path, key);
	return 0;
}

/* Reads kmemtrace/stats; the text lasts until the next read_text(). */
static const char *read_stats(const char *dir, char *path, size_t len)
{
	const char *s;

	snprintf(path, len, "%s/stats", dir);
	s = read_text(path);
	if (!s)
		fatal("%s: %s", path, strerror(errno));
	return s;
}

static __u64 stat_value(const char *dir, const char *key)
{
	char path[PATH_MAX];
	const char *s = read_stats(dir, path, sizeof(path));

	return stat_in(s, path, key);
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

/* Whether the calling thread may run on @r's CPU only, and runs there. */
static bool on_its_cpu(const struct reader *r, const cpu_set_t *want)
{
	cpu_set_t now;

	if (pthread_getaffinity_np(pthread_self(), sizeof(now), &now))
		return false;
	return CPU_EQUAL(&now, want) && sched_getcpu() == r->cpu;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(READ_SIZE);
	char what[32];
	bool draining = false;
	__u64 drain_from = 0;
	cpu_set_t set;

	snprintf(what, sizeof(what), "cpu%d", r->cpu);
	if (!buf)
		fatal("out of memory");
	/* On its CPU, where the writer cannot be half-way through an event. */
	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	r->pinned = !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	/* Linux: PRIO_PROCESS 0 is the calling thread. */
	if (nice_set && setpriority(PRIO_PROCESS, 0, reader_nice) && nice_given &&
	    !__atomic_exchange_n(&nice_warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "%s: readers at nice %d: %s; reading at the nice value inherited\n",
			prog, reader_nice, strerror(errno));
	for (;;) {
		struct pollfd pfd = { .fd = r->in, .events = POLLIN };
		ssize_t n;

		if (!draining && __atomic_load_n(&drain, __ATOMIC_ACQUIRE)) {
			draining = true;
			drain_from = r->bytes;
		}
		if (draining && r->bytes - drain_from >= drain_limit)
			break;
		if (!draining && poll(&pfd, 1, 100) <= 0)
			continue;
		/*
		 * A CPU that went offline broke the pinning: the kernel let
		 * the thread run anywhere, and may have put it back on its
		 * CPU by chance, from where it can still be moved half-way
		 * through a read. Read only while pinned, so that no writer
		 * can be half-way through an event; while the CPU is offline
		 * nothing is written there, and the final drain (tracing
		 * stopped, with -e) reads whatever is left.
		 */
		if (!on_its_cpu(r, &set)) {
			r->pinned = !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
			if (!r->pinned && !draining) {
				usleep(10000);
				continue;
			}
		}
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

/*
 * Opens a reader for every cpu<n> file of @dir not yet opened, and starts
 * it if @start: at the beginning, and for CPUs that come online later
 * (relay creates their files then). Returns how many it added.
 */
static int add_readers(const char *dir, const char *out, bool start)
{
	char path[PATH_MAX];
	struct dirent *de;
	int added = 0;
	DIR *d = opendir(dir);

	if (!d)
		fatal("%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		struct reader *r = &readers[nreaders];
		char *end;
		long cpu;

		if (strncmp(de->d_name, "cpu", 3) || !isdigit((unsigned char)de->d_name[3]))
			continue;
		cpu = strtol(de->d_name + 3, &end, 10);
		if (*end || cpu < 0 || cpu >= MAX_CPUS || opened[cpu])
			continue;
		snprintf(path, sizeof(path), "%s/cpu%ld", dir, cpu);
		r->in = open(path, O_RDONLY);
		if (r->in < 0) {
			if (errno == ENOENT)
				continue;
			fatal("%s: %s", path, strerror(errno));
		}
		snprintf(path, sizeof(path), "%s/cpu%ld", out, cpu);
		r->out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (r->out < 0)
			fatal("%s: %s", path, strerror(errno));
		r->cpu = cpu;
		opened[cpu] = true;
		nreaders++;
		added++;
		if (start) {
			int err = pthread_create(&r->thread, NULL, reader_main, r);

			if (err)
				fatal("cannot start a reader: %s", strerror(err));
		}
	}
	closedir(d);
	return added;
}

static int cmp_reader(const void *a, const void *b)
{
	return ((const struct reader *)a)->cpu - ((const struct reader *)b)->cpu;
}

struct counts {
	__u64 seq, lost, lost_bytes;
};

/* One read of kmemtrace/stats, so that the three numbers agree. */
static void read_counts(const char *dir, struct counts *c)
{
	char path[PATH_MAX];
	const char *s = read_stats(dir, path, sizeof(path));

	c->seq = stat_in(s, path, "events");
	c->lost = stat_in(s, path, "lost_events");
	c->lost_bytes = stat_in(s, path, "lost_bytes");
}

struct capture {
	const char *out;
	int abi;
	double seconds;
	struct counts start, drain, end;
	bool finished, complete, stopped;
	const char *symbols;
};

/*
 * DIR/meta, "key value" lines. The first one, written at the start, says
 * finished 0 and has no drain or end numbers: a reader of a capture cut
 * short by SIGKILL treats it as one whose end is unknown.
 */
static void write_meta(const struct capture *c)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	const uint16_t one = 1;
	struct utsname u;
	FILE *meta;
	int i;

	uname(&u);
	snprintf(path, sizeof(path), "%s/meta", c->out);
	snprintf(tmp, sizeof(tmp), "%s/meta.tmp", c->out);
	meta = fopen(tmp, "w");
	if (!meta)
		fatal("%s: %s", tmp, strerror(errno));
	fprintf(meta, "# kmemtrace capture, written by kmemtraced\n");
	fprintf(meta, "abi_version %d\n", c->abi);
	fprintf(meta, "endianness %s\n", *(const uint8_t *)&one ? "little" : "big");
	fprintf(meta, "word_size %zu\n", sizeof(long) * 8);
	fprintf(meta, "kernel_release %s\n", u.release);
	fprintf(meta, "machine %s\n", u.machine);
	fprintf(meta, "cpus %d\n", nreaders);
	fprintf(meta, "cpu_files");
	for (i = 0; i < nreaders; i++)
		fprintf(meta, " cpu%d", readers[i].cpu);
	fprintf(meta, "\n");
	fprintf(meta, "start_seq %llu\n", c->start.seq);
	fprintf(meta, "start_lost_events %llu\nstart_lost_bytes %llu\n", c->start.lost,
		c->start.lost_bytes);
	fprintf(meta, "finished %d\n", c->finished);
	if (c->finished) {
		fprintf(meta, "seconds %.3f\n", c->seconds);
		/* Read when the final drain began: the end of what it covers. */
		fprintf(meta, "drain_seq %llu\n", c->drain.seq);
		fprintf(meta, "end_seq %llu\n", c->end.seq);
		fprintf(meta, "end_lost_events %llu\nend_lost_bytes %llu\n", c->end.lost,
			c->end.lost_bytes);
		/*
		 * Complete: tracing was off before and after, so every event
		 * numbered from start_seq to end_seq - 1 is in a file or was
		 * lost, and the kernel's count of the lost must match.
		 */
		fprintf(meta, "complete %d\n", c->complete);
		/* Stopped: tracing was off when the final drain began. */
		fprintf(meta, "stopped %d\n", c->stopped);
		fprintf(meta, "symbols %s\n", c->symbols);
	}
	if (fclose(meta))
		fatal("%s: %s", tmp, strerror(errno));
	if (rename(tmp, path))
		fatal("%s: %s", path, strerror(errno));
}

/* kallsyms as an unprivileged reader, or with kptr_restrict=2, reads 0s. */
static bool kallsyms_usable(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int lines = 0, nonzero = 0;

	if (!f)
		return false;
	while (lines < 1000 && fgets(line, sizeof(line), f)) {
		lines++;
		if (strtoull(line, NULL, 16))
			nonzero++;
	}
	fclose(f);
	return nonzero > 0;
}

/*
 * DIR/caches names the caches the events carry, by id: every cache in
 * the kernel's kmemtrace/caches from the start of the capture to its
 * end, read every second, so that a cache destroyed meanwhile (a
 * module's) is there too if it lived that long. Ids are never reused:
 * a line per id, the first one read. A merge may later raise a cache's
 * object size; the sizes are for people, kmemtrace-report reads names.
 */
static struct {
	char *text;		/* the header, then the lines kept */
	size_t len, cap;
	__u64 *ids;
	size_t nids, ids_cap;
	bool warned;
} caches;

static void *grow_buf(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = need * 2;
	p = realloc(p, *cap * size);
	if (!p)
		fatal("out of memory");
	return p;
}

static void poll_caches(const char *dir, const char *out)
{
	char path[PATH_MAX], tmp[PATH_MAX], *text, *line, *save;
	bool changed = !caches.text;
	FILE *f;

	snprintf(path, sizeof(path), "%s/caches", dir);
	text = kmt_slurp(path, NULL);
	if (!text) {
		/* A kernel without the file; or it went away: say so once. */
		if (caches.text && !caches.warned)
			fprintf(stderr, "%s: %s: %s; caches are named as last read\n", prog,
				path, strerror(errno));
		caches.warned = true;
		return;
	}
	if (!caches.text) {
		static const char header[] = "# id object_size size name\n";

		caches.text = grow_buf(NULL, &caches.cap, sizeof(header), 1);
		memcpy(caches.text, header, sizeof(header));
		caches.len = sizeof(header) - 1;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t i, n = strlen(line);
		char *end;
		__u64 id;

		if (line[0] == '#')
			continue;
		id = strtoull(line, &end, 10);
		if (end == line || *end != ' ')
			continue;
		for (i = 0; i < caches.nids && caches.ids[i] != id; i++)
			;
		if (i < caches.nids)
			continue;
		caches.ids = grow_buf(caches.ids, &caches.ids_cap, caches.nids + 1, sizeof(id));
		caches.ids[caches.nids++] = id;
		caches.text = grow_buf(caches.text, &caches.cap, caches.len + n + 2, 1);
		memcpy(caches.text + caches.len, line, n);
		caches.len += n;
		caches.text[caches.len++] = '\n';
		caches.text[caches.len] = '\0';
		changed = true;
	}
	free(text);
	if (!changed)
		return;
	snprintf(path, sizeof(path), "%s/caches", out);
	snprintf(tmp, sizeof(tmp), "%s/caches.tmp", out);
	f = fopen(tmp, "w");
	if (!f)
		fatal("%s: %s", tmp, strerror(errno));
	fputs(caches.text, f);
	if (fclose(f))
		fatal("%s: %s", tmp, strerror(errno));
	if (rename(tmp, path))
		fatal("%s: %s", path, strerror(errno));
}

static void on_signal(int sig)
{
	stop = 1;
}

static bool copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0) {
		fprintf(stderr, "%s: %s: %s; call sites cannot be resolved elsewhere\n",
			prog, from, strerror(errno));
		return false;
	}
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		fatal("%s: %s", to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		write_all(out, buf, n, to);
	close(in);
	close(out);
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "time", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "enable", no_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "nice", required_argument, NULL, 'n' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *out = "kmemtrace.out", *dir = "/sys/kernel/debug/kmemtrace";
	unsigned long long byte_limit = 0;
	__u64 events = 0, bytes = 0;
	bool enable = false, quiet = false, progress, was_on;
	struct capture cap = { 0 };
	struct timespec t0, t1;
	double seconds = 0;
	char path[PATH_MAX], *s, *end;
	unsigned long ticks, tick_ms;
	int c, i, abi, status = 0;

	while ((c = getopt_long(argc, argv, "o:t:b:eqn:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 't':
			seconds = strtod(optarg, &end);
			/* Not "nan", which no time is ever past ("inf" is Ctrl-C's). */
			if (*end || isnan(seconds) || seconds <= 0)
				fatal("-t %s: not a number of seconds > 0", optarg);
			break;
		case 'b':
			if (!kmt_parse_size(optarg, &byte_limit))
				fatal("-b %s: not a size (N, Nk, NM, NG)", optarg);
			break;
		case 'e':
			enable = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'n':
			if (!kmt_parse_nice(optarg, &reader_nice))
				fatal("-n %s: not a nice value from -20 to 19", optarg);
			nice_given = true;
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

	nice_set = kmt_nice_wanted(nice_given);

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

	cap.out = out;
	cap.abi = abi;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	read_counts(dir, &cap.start);
	poll_caches(dir, out);
	snprintf(path, sizeof(path), "%s/enable", dir);
	s = read_text(path);
	was_on = s && atoi(s) == 1;
	/* The kernel allocates the buffers, and makes the files, at the first enable. */
	if (enable) {
		set_enable(dir, "1");
		enabled_dir = dir;
	}
	add_readers(dir, out, false);
	if (!nreaders)
		fatal("%s: no cpu<n> files: tracing was never on since boot, %s", dir,
		      "so there are no buffers yet (-e turns it on)");
	qsort(readers, nreaders, sizeof(readers[0]), cmp_reader);
	write_meta(&cap);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nreaders; i++) {
		int err = pthread_create(&readers[i].thread, NULL, reader_main, &readers[i]);

		if (err)
			fatal("cannot start a reader: %s", strerror(err));
	}

	progress = !quiet && isatty(STDERR_FILENO);
	/* With -b, a limit reached is seen within 10 ms: a storm fills MBs in 200. */
	tick_ms = byte_limit ? 10 : 200;
	for (ticks = 1; !__atomic_load_n(&stop, __ATOMIC_RELAXED); ticks++) {
		struct timespec ts = { 0, tick_ms * 1000 * 1000 };
		__u64 e = 0, b = 0;

		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (seconds && (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			stop = 1;
		/* Once a second: a CPU that came online (relay made its file). */
		if (!(ticks % (1000 / tick_ms)) && add_readers(dir, out, true))
			write_meta(&cap);
		if (!(ticks % (1000 / tick_ms)))
			poll_caches(dir, out);
		for (i = 0; i < nreaders; i++) {
			e += __atomic_load_n(&readers[i].events, __ATOMIC_RELAXED);
			b += __atomic_load_n(&readers[i].bytes, __ATOMIC_RELAXED);
		}
		if (byte_limit && b >= byte_limit)
			stop = 1;
		if (!progress || ticks % (200 / tick_ms))
			continue;
		fprintf(stderr, "\r%s: %llu events, %llu KiB, %llu lost   ",
			prog, e, b >> 10, stat_value(dir, "lost_events") - cap.start.lost);
	}
	if (progress)
		fputc('\n', stderr);
	/*
	 * What -e started stops before the drain, which then gets it all:
	 * once enable is written, no event is being recorded any more.
	 * Otherwise the drain takes what was numbered before it began.
	 */
	if (enable) {
		set_enable(dir, "0");
		enabled_dir = NULL;
	}
	snprintf(path, sizeof(path), "%s/enable", dir);
	s = read_text(path);
	cap.stopped = s && atoi(s) == 0;
	add_readers(dir, out, true);
	read_counts(dir, &cap.drain);
	if (!cap.stopped)
		drain_limit = stat_value(dir, "subbufs") * stat_value(dir, "subbuf_size");
	__atomic_store_n(&drain, 1, __ATOMIC_RELEASE);
	for (i = 0; i < nreaders; i++)
		pthread_join(readers[i].thread, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	read_counts(dir, &cap.end);

	poll_caches(dir, out);
	snprintf(path, sizeof(path), "%s/kallsyms", out);
	if (!copy_file("/proc/kallsyms", path)) {
		cap.symbols = "none";
	} else if (!kallsyms_usable(path)) {
		fprintf(stderr, "%s: /proc/kallsyms gives no addresses (%s); %s\n", prog,
			"not root, or kptr_restrict=2", "call sites cannot be resolved");
		cap.symbols = "none";
	} else {
		cap.symbols = "kallsyms";
	}
	cap.seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	cap.complete = enable && !was_on;
	cap.finished = true;
	qsort(readers, nreaders, sizeof(readers[0]), cmp_reader);
	write_meta(&cap);

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
	       cap.end.lost - cap.start.lost, cap.end.lost_bytes - cap.start.lost_bytes,
	       cap.end.lost_bytes);
	if (!status && cap.end.lost != cap.start.lost)
		status = 1;
	return status;
}
