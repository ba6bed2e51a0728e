// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtraced - capture the kmemtrace relay files into a directory.
 *
 * One thread per CPU file, pinned to that CPU as the ABI asks (a reader
 * on another CPU could read an event its CPU is still writing), polls
 * and reads debugfs kmemtrace/cpu<n> into DIR/cpu<n>; a CPU brought
 * online during the capture gets its reader within a second. On Ctrl-C,
 * SIGTERM, SIGHUP or the end of -t SECONDS every file is drained, and DIR/meta
 * records what an analysis on another machine needs: ABI version, byte
 * order, word size, kernel release, CPUs, the sequence numbers and the
 * kernel's loss counters at start, drain and end, DIR/kallsyms to
 * resolve call sites and DIR/caches to name the slab caches. A first meta
 * is written at the start, so that a capture cut short by SIGKILL can
 * still be read.
 *
 * No fixed table: the readers are a list that grows as cpu<n> files
 * appear, whatever their n (the kernel's NR_CPUS goes to 8192), each
 * with an affinity mask as large as its CPU number needs, and the
 * open-file limit is raised to the two descriptors per CPU file they
 * take, or the capture refused at the start with the limit named.
 *
 * main() runs the steps in order: parse_options(), find_kmemtrace_dir(),
 * prepare_output(), begin_capture(), open_readers(), start_readers(),
 * wait_for_stop(), drain_readers(), finish_capture() and summary().
 * Only the main thread takes the stop signals (kmt_cli.h): the first
 * ends wait_for_stop(), the second the process. The readers share with
 * it their counts (__atomic), the drain flag (release/acquire) and
 * nothing else until pthread_join().
 */
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
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kmt_cli.h"
#include "kmt_events.h"
#include "kmt_meta.h"
#include "kmt_msg.h"
#include "kmt_nice.h"
#include "kmt_size.h"

/* What a reader asks of read(): relay gives up to this across sub-buffers. */
#define READ_SIZE	(256 * 1024)
/*
 * A reader's stack: its frames are small (the read buffer is on the
 * heap), but vfprintf() and the C library's static TLS share it. 8192
 * readers at the default 8 MiB would reserve 64 GiB of address space.
 */
#define READER_STACK	(256 * 1024)
/*
 * CPU numbers from this one up get no affinity mask (128 KiB each): no
 * kernel has that many CPUs, so the reader runs unpinned, as for a CPU
 * that is offline.
 */
#define PIN_CPU_LIMIT	(1024 * 1024)
/* Two descriptors per CPU file: the relay file and its copy. */
#define FDS_PER_CPU	2

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
static int nice_warned;

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
} cap = { .outfd = -1 };

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
		"                  [-d KMEMTRACE_DIR]\n"
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

static void set_enable(const char *dir, const char *v)
{
	char *path = join(dir, "enable");
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, v, 1) != 1 || close(fd))
		fatal("writing %s to %s: %s", v, path, strerror(errno));
	free(path);
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

/* ---- the readers ------------------------------------------------------- */

/*
 * The bytes the carried event still lacks (4 - ncarry while its size is
 * not there yet); 1 for one whose size is bad, which the next
 * count_events() reports.
 */
static size_t carry_missing(const struct reader *r)
{
	size_t size;

	if (r->ncarry < 4)
		return 4 - r->ncarry;
	size = kmt_peek_size(r->carry, r->ncarry, false);
	return size > r->ncarry ? size - r->ncarry : 1;
}

static void carry_append(struct reader *r, const unsigned char *p, size_t n)
{
	if (r->ncarry + n > r->carry_cap) {
		/* An event is at most 64 KiB (a 16-bit size): grow to what it needs. */
		size_t cap = r->ncarry + n < 256 ? 256 : r->ncarry + n;

		r->carry = realloc(r->carry, cap);
		if (!r->carry)
			fatal("out of memory");
		r->carry_cap = cap;
	}
	memcpy(r->carry + r->ncarry, p, n);
	r->ncarry += n;
}

/*
 * Counts the whole events in what was read, @n bytes after the r->bytes
 * read before; keeps a cut one in r->carry for the next read. Returns how
 * many events it completed.
 */
static __u64 count_events(struct reader *r, const unsigned char *buf, size_t n)
{
	__u64 events = 0;
	size_t off = 0;

	while (off < n) {
		unsigned int size;

		if (r->ncarry) {
			size_t take = carry_missing(r);

			if (r->ncarry >= 4 &&
			    kmt_peek_size(r->carry, r->ncarry, false) < KMT_HDR_SIZE) {
				/* The event began r->ncarry bytes before @buf + off. */
				r->bad_at = r->bytes + off - r->ncarry + 1;
				r->ncarry = 0;
				return events;
			}
			if (take > n - off)
				take = n - off;
			carry_append(r, buf + off, take);
			off += take;
			if (r->ncarry >= 4 &&
			    r->ncarry == kmt_peek_size(r->carry, r->ncarry, false)) {
				events++;
				r->ncarry = 0;
			}
			continue;
		}
		size = kmt_peek_size(buf + off, n - off, false);
		if (n - off >= 4 && size < KMT_HDR_SIZE) {
			/* The rest cannot be counted; kmemtrace-check will say why. */
			r->bad_at = r->bytes + off + 1;
			return events;
		}
		if (n - off < 4 || size > n - off) {
			carry_append(r, buf + off, n - off);
			return events;
		}
		events++;
		off += size;
	}
	return events;
}

/* The affinity masks of a reader: its CPU alone, and the one it has. */
struct pin {
	cpu_set_t *want, *now;
	size_t ncpus;		/* bits of each */
	int cpu;
};

static void pin_alloc(struct pin *p, int cpu, size_t ncpus)
{
	CPU_FREE(p->want);
	CPU_FREE(p->now);
	p->cpu = cpu;
	p->ncpus = ncpus;
	p->want = CPU_ALLOC(ncpus);
	p->now = CPU_ALLOC(ncpus);
	if (!p->want || !p->now)
		fatal("out of memory");
	CPU_ZERO_S(CPU_ALLOC_SIZE(ncpus), p->want);
	CPU_SET_S(cpu, CPU_ALLOC_SIZE(ncpus), p->want);
}

/* Pins the calling thread to its CPU; false if it cannot be. */
static bool pin(const struct pin *p)
{
	if (!p->want)
		return false;
	return !pthread_setaffinity_np(pthread_self(), CPU_ALLOC_SIZE(p->ncpus), p->want);
}

/* Whether the calling thread may run on @p's CPU only, and runs there. */
static bool on_its_cpu(struct pin *p)
{
	int err;

	if (!p->want)
		return false;
	/* The kernel refuses a mask smaller than its CPU count: grow it. */
	while ((err = pthread_getaffinity_np(pthread_self(), CPU_ALLOC_SIZE(p->ncpus), p->now)) ==
	       EINVAL && p->ncpus < PIN_CPU_LIMIT)
		pin_alloc(p, p->cpu, 2 * p->ncpus);
	if (err)
		return false;
	return CPU_EQUAL_S(CPU_ALLOC_SIZE(p->ncpus), p->now, p->want) &&
	       sched_getcpu() == p->cpu;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(READ_SIZE);
	struct pin pn = {};
	bool draining = false;
	__u64 drain_from = 0;
	useconds_t unpinned_wait = 10000;
	char *what;

	if (asprintf(&what, "%s/cpu%d", cap.out, r->cpu) < 0 || !buf)
		fatal("out of memory");
	/* On its CPU, where the writer cannot be half-way through an event. */
	if (r->cpu < PIN_CPU_LIMIT)
		pin_alloc(&pn, r->cpu, r->cpu < 1024 ? 1024 : r->cpu + 1);
	r->pinned = pin(&pn);
	/* Linux: PRIO_PROCESS 0 is the calling thread. */
	if (nice_set && setpriority(PRIO_PROCESS, 0, reader_nice) && nice_given &&
	    !__atomic_exchange_n(&nice_warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "%s: readers at nice %d: %s; reading at the nice value inherited\n",
			prog, reader_nice, strerror(errno));
	for (;;) {
		struct pollfd pfd = { .fd = r->in, .events = POLLIN };
		size_t want = READ_SIZE;
		ssize_t n;

		if (!draining && __atomic_load_n(&drain, __ATOMIC_ACQUIRE)) {
			draining = true;
			drain_from = r->bytes;
		}
		if (draining && r->bytes - drain_from >= drain_limit) {
			/*
			 * Not half-way through an event: its rest is in the
			 * buffer (the kernel writes whole events), read just it.
			 */
			if (!r->ncarry || r->bad_at)
				break;
			want = carry_missing(r);
		} else if (draining && drain_limit - (r->bytes - drain_from) < want) {
			/*
			 * No read past the limit but the rest of an event it
			 * cuts, which the branch above reads next: at most a
			 * buffer's worth and 64 KiB.
			 */
			want = drain_limit - (r->bytes - drain_from);
		}
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
		if (!on_its_cpu(&pn)) {
			r->pinned = pin(&pn);
			/*
			 * Offline, with data left: look again in 10 ms, then
			 * less often, up to 160 ms, so that the readers of many
			 * offline CPUs (at nice -10) do not starve the rest.
			 */
			if (!r->pinned && !draining) {
				usleep(unpinned_wait);
				if (unpinned_wait < 160000)
					unpinned_wait *= 2;
				continue;
			}
		}
		unpinned_wait = 10000;
		n = read(r->in, buf, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r->err = errno;
			break;
		}
		if (n == 0) {
			if (draining)
				break;
			/* Ready but empty (not relay's way; a regular file's): do not spin. */
			usleep(10000);
			continue;
		}
		write_all(r->out, buf, n, what);
		if (!r->bad_at)
			__atomic_store_n(&r->events, r->events + count_events(r, buf, n),
					 __ATOMIC_RELAXED);
		__atomic_store_n(&r->bytes, r->bytes + n, __ATOMIC_RELAXED);
	}
	CPU_FREE(pn.want);
	CPU_FREE(pn.now);
	free(what);
	free(buf);
	return NULL;
}

/* The reader of CPU @cpu among the first @n (sorted) readers, or NULL. */
static struct reader *find_reader(int cpu, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cap.readers[mid]->cpu == cpu)
			return cap.readers[mid];
		if (cap.readers[mid]->cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_reader(const void *a, const void *b)
{
	int x = (*(struct reader *const *)a)->cpu, y = (*(struct reader *const *)b)->cpu;

	return x < y ? -1 : x > y;
}

/* Starts @r's thread; returns 0 or pthread_create()'s error. */
static int start_reader(struct reader *r, const pthread_attr_t *attr)
{
	sigset_t stops, old;
	int err;

	/* Stop signals go to the main thread, whose sleep they cut short. */
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stops, &old);
	/* Before the thread runs: from its first read, DIR is kept. */
	__atomic_store_n(&cap.reading, true, __ATOMIC_RELEASE);
	err = pthread_create(&r->thread, attr, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	r->started = !err;
	/* None running: a refusal at the start may still remove what it made. */
	if (err && !cap.nstarted)
		__atomic_store_n(&cap.reading, false, __ATOMIC_RELEASE);
	cap.nstarted += !err;
	return err;
}

static void reader_attr(pthread_attr_t *attr)
{
	long min = sysconf(_SC_THREAD_STACK_MIN);
	size_t size = READER_STACK;
	int err;

	if (min > 0 && (size_t)min > size)
		size = min;
	err = pthread_attr_init(attr);
	if (!err)
		err = pthread_attr_setstacksize(attr, size);
	if (err)
		fatal("thread attributes: %s", strerror(err));
}

/*
 * The cpu<n> files of @dir that have no reader yet: their CPU numbers,
 * in *@cpus (allocated), and how many. A name the kernel would not
 * make (cpu01, a number past INT_MAX) is not a CPU file.
 */
static size_t new_cpu_files(const char *dir, int **cpus)
{
	size_t nsorted = cap.nreaders, n = 0, ncap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	*cpus = NULL;
	if (!d)
		fatal("%s: %s", dir, strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		int cpu;

		if (!kmt_cpu_file_name(de->d_name, &cpu) || find_reader(cpu, nsorted))
			continue;
		if (n == ncap) {
			ncap = ncap ? 2 * ncap : 64;
			*cpus = realloc(*cpus, ncap * sizeof(**cpus));
			if (!*cpus)
				fatal("out of memory");
		}
		(*cpus)[n++] = cpu;
	}
	if (errno)
		fatal("%s: %s", dir, strerror(errno));
	closedir(d);
	return n;
}

static struct reader *new_reader(int cpu)
{
	struct reader *r = calloc(1, sizeof(*r));

	if (!r)
		fatal("out of memory");
	if (cap.nreaders == cap.readers_cap) {
		cap.readers_cap = cap.readers_cap ? 2 * cap.readers_cap : 64;
		cap.readers = realloc(cap.readers, cap.readers_cap * sizeof(*cap.readers));
		if (!cap.readers)
			fatal("out of memory");
	}
	r->cpu = cpu;
	r->in = -1;
	r->out = -1;
	cap.readers[cap.nreaders++] = r;
	return r;
}

/*
 * Opens cpu<n> of the kmemtrace directory and DIR/cpu<n> (never one that
 * is there already). Returns 0, or the errno of what failed, whose
 * directory is then in *@where.
 */
static int open_reader(struct reader *r, const char **where)
{
	char name[32], *path;
	int err;

	snprintf(name, sizeof(name), "cpu%d", r->cpu);
	path = join(cap.dir, name);
	*where = cap.dir;
	r->in = open(path, O_RDONLY | O_CLOEXEC);
	err = r->in < 0 ? errno : 0;
	free(path);
	if (err)
		return err;
	*where = cap.out;
	r->out = openat(cap.outfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (r->out < 0) {
		err = errno;
		close(r->in);
		r->in = -1;
		return err;
	}
	cap.nopen++;
	return 0;
}

/*
 * The CPU files at the start: all opened, or the capture refused. The
 * open-file limit is raised to two descriptors per file, and, as far as
 * the hard limit allows, per CPU the machine may bring online later.
 */
static void open_readers(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	const char *where;
	size_t i, n, need;
	rlim_t limit;
	int *cpus;

	n = new_cpu_files(cap.dir, &cpus);
	if (!n)
		fatal("%s: no cpu<n> files: %s", cap.dir, cap.enable ?
		      "tracing is on, but the kernel made no buffers" :
		      "tracing is off and has no buffers (never on since boot, or freed once drained; -e turns it on)");
	need = FDS_PER_CPU * n + 16;	/* as kmt_want_files() counts */
	limit = kmt_want_files(FDS_PER_CPU * n);
	if (limit)
		fatal("%zu cpu<n> files need %zu open files, %d per file, but the open-file hard limit is %llu (ulimit -Hn): raise it to %zu or more (as root: ulimit -Hn %zu)",
		      n, need, FDS_PER_CPU, (unsigned long long)limit, need, need);
	if (conf > 0 && (size_t)conf > n)
		kmt_want_files(FDS_PER_CPU * conf);
	for (i = 0; i < n; i++) {
		struct reader *r = new_reader(cpus[i]);
		int err = open_reader(r, &where);

		if (err)
			fatal("%s/cpu%d: %s%s", where, r->cpu, strerror(err), fd_hint(err));
	}
	free(cpus);
	qsort(cap.readers, cap.nreaders, sizeof(*cap.readers), cmp_reader);
}

/*
 * Whether one more CPU file fits under the open-file limit, with the 16
 * kmt_want_files() keeps for the rest (meta, caches, kallsyms, stats):
 * a capture that took those would end without its meta.
 */
static bool room_for_reader(void)
{
	return !kmt_want_files(FDS_PER_CPU * (cap.nopen + 1));
}

/*
 * A reader for each cpu<n> file that appeared since (relay makes a CPU's
 * file when it first comes online), started at once. One that cannot be
 * opened (or would take the descriptors the capture needs to end) is not
 * captured, said now, in meta's missed_cpus and in the summary, and the
 * exit status is 2: never a CPU lost without a word. Returns how many
 * files it found (started or missed): meta must be written again.
 */
static size_t add_readers(const pthread_attr_t *attr)
{
	size_t i, n, added = 0;
	const char *where;
	int *cpus;

	n = new_cpu_files(cap.dir, &cpus);
	for (i = 0; i < n; i++) {
		struct reader *r;
		int err;

		r = new_reader(cpus[i]);
		if (room_for_reader()) {
			err = open_reader(r, &where);
		} else {
			err = EMFILE;
			where = cap.dir;
		}
		if (err == ENOENT && where == cap.dir) {
			/* Gone again before it was opened: look again later. */
			cap.nreaders--;
			free(r);
			continue;
		}
		if (err) {
			fprintf(stderr, "%s: %s/cpu%d: %s%s; its events are not captured\n",
				prog, where, r->cpu, strerror(err), fd_hint(err));
		} else {
			err = start_reader(r, attr);
			if (err)
				fprintf(stderr, "%s: cannot start the reader of cpu%d: %s%s\n",
					prog, r->cpu, strerror(err),
					"; its events are not captured (threads: ulimit -u)");
		}
		if (err) {
			r->missed = err;
			if (r->in >= 0) {
				close(r->in);
				close(r->out);
				cap.nopen--;
			}
		}
		added++;
	}
	free(cpus);
	qsort(cap.readers, cap.nreaders, sizeof(*cap.readers), cmp_reader);
	return added;
}

/* ---- the files of DIR besides cpu<n> ----------------------------------- */

/* Writes DIR/@name through DIR/@name.tmp, renamed over it. */
static FILE *open_tmp(const char *name, char *tmp, size_t len)
{
	FILE *f;
	int fd;

	snprintf(tmp, len, "%s.tmp", name);
	fd = openat(cap.outfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f)
		fatal("%s/%s: %s", cap.out, tmp, strerror(errno));
	return f;
}

static void close_tmp(FILE *f, const char *name, const char *tmp)
{
	bool err = ferror(f);

	if (fclose(f) || err)
		fatal("%s/%s: %s", cap.out, tmp, strerror(errno ?: EIO));
	if (renameat(cap.outfd, tmp, cap.outfd, name))
		fatal("%s/%s: %s", cap.out, name, strerror(errno));
}

/*
 * Whether CPU file @r's events are not all in DIR: it could not be
 * opened or its reader started (r->missed), or, once the readers are
 * joined (@joined), a read failed (r->err).
 */
static bool reader_missed(const struct reader *r, bool joined)
{
	return r->missed || (joined && r->err);
}

/*
 * DIR/meta, "key value" lines. The first one, written at the start, says
 * finished 0 and has no drain or end numbers: a reader of a capture cut
 * short by SIGKILL treats it as one whose end is unknown. CPU files that
 * could not be opened are not in cpu_files (they are not in DIR); they,
 * and those whose read failed, are in missed_cpus, and make the capture
 * not complete.
 */
static void write_meta(void)
{
	const uint16_t one = 1;
	char tmp[32];
	struct utsname u;
	size_t i, ncpus = 0, nmissed;
	FILE *meta;

	if (uname(&u))
		fatal("uname: %s", strerror(errno));
	meta = open_tmp("meta", tmp, sizeof(tmp));
	for (i = 0; i < cap.nreaders; i++)
		ncpus += !cap.readers[i]->missed;
	fprintf(meta, "# kmemtrace capture, written by kmemtraced\n");
	fprintf(meta, "abi_version %d\n", cap.abi);
	fprintf(meta, "endianness %s\n", *(const uint8_t *)&one ? "little" : "big");
	fprintf(meta, "word_size %zu\n", sizeof(long) * 8);
	fprintf(meta, "kernel_release %s\n", u.release);
	fprintf(meta, "machine %s\n", u.machine);
	fprintf(meta, "cpus %zu\n", ncpus);
	fprintf(meta, "cpu_files");
	for (i = 0; i < cap.nreaders; i++)
		if (!cap.readers[i]->missed)
			fprintf(meta, " cpu%d", cap.readers[i]->cpu);
	fprintf(meta, "\n");
	/* A read error is known once the readers are joined: the last meta. */
	for (i = 0, nmissed = 0; i < cap.nreaders; i++) {
		if (!reader_missed(cap.readers[i], cap.finished))
			continue;
		fprintf(meta, "%s cpu%d", nmissed++ ? "" : "missed_cpus", cap.readers[i]->cpu);
	}
	if (nmissed)
		fprintf(meta, "\n");
	fprintf(meta, "start_seq %llu\n", cap.start.seq);
	fprintf(meta, "start_lost_events %llu\nstart_lost_bytes %llu\n", cap.start.lost,
		cap.start.lost_bytes);
	fprintf(meta, "finished %d\n", cap.finished);
	if (cap.finished) {
		fprintf(meta, "seconds %.3f\n", cap.seconds);
		/* Read when the final drain began: the end of what it covers. */
		fprintf(meta, "drain_seq %llu\n", cap.drain.seq);
		fprintf(meta, "end_seq %llu\n", cap.end.seq);
		fprintf(meta, "end_lost_events %llu\nend_lost_bytes %llu\n", cap.end.lost,
			cap.end.lost_bytes);
		/*
		 * Complete: tracing was off before and after, so every event
		 * numbered from start_seq to end_seq - 1 is in a file or was
		 * lost, and the kernel's count of the lost must match.
		 */
		fprintf(meta, "complete %d\n", cap.complete);
		/* Stopped: tracing was off when the final drain began. */
		fprintf(meta, "stopped %d\n", cap.stopped);
		fprintf(meta, "symbols %s\n", cap.symbols);
	}
	close_tmp(meta, "meta", tmp);
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
	__u64 *ids;		/* sorted */
	size_t nids, ids_cap;
	bool warned, changed;
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

/* Whether @id is new; if so, adds it to caches.ids. */
static bool new_cache_id(__u64 id)
{
	size_t lo = 0, hi = caches.nids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (caches.ids[mid] == id)
			return false;
		if (caches.ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	caches.ids = grow_buf(caches.ids, &caches.ids_cap, caches.nids + 1, sizeof(id));
	memmove(caches.ids + lo + 1, caches.ids + lo, (caches.nids - lo) * sizeof(id));
	caches.ids[lo] = id;
	caches.nids++;
	return true;
}

/* Reads kmemtrace/caches into caches.text; caches.changed if it grew. */
static void read_caches(void)
{
	char *path = join(cap.dir, "caches"), *text, *line, *save;

	text = kmt_slurp(path, NULL);
	if (!text) {
		/* A kernel without the file; or it went away: say so once. */
		if (caches.text && !caches.warned)
			fprintf(stderr, "%s: %s: %s; caches are named as last read\n", prog,
				path, strerror(errno));
		caches.warned = true;
		free(path);
		return;
	}
	free(path);
	if (!caches.text) {
		static const char header[] = "# id object_size size name\n";

		caches.text = grow_buf(NULL, &caches.cap, sizeof(header), 1);
		memcpy(caches.text, header, sizeof(header));
		caches.len = sizeof(header) - 1;
		caches.changed = true;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);
		char *end;
		__u64 id;

		if (line[0] == '#')
			continue;
		id = strtoull(line, &end, 10);
		if (end == line || *end != ' ' || !new_cache_id(id))
			continue;
		caches.text = grow_buf(caches.text, &caches.cap, caches.len + n + 2, 1);
		memcpy(caches.text + caches.len, line, n);
		caches.len += n;
		caches.text[caches.len++] = '\n';
		caches.text[caches.len] = '\0';
		caches.changed = true;
	}
	free(text);
}

static void write_caches(void)
{
	char tmp[32];
	FILE *f;

	if (!caches.changed)
		return;
	f = open_tmp("caches", tmp, sizeof(tmp));
	fputs(caches.text, f);
	close_tmp(f, "caches", tmp);
	caches.changed = false;
}

/* kallsyms as an unprivileged reader, or with kptr_restrict=2, reads 0s. */
static bool kallsyms_usable(int fd)
{
	char line[512];
	FILE *f = fdopen(fd, "r");
	int lines = 0, nonzero = 0;

	if (!f) {
		close(fd);
		return false;
	}
	while (lines < 1000 && fgets(line, sizeof(line), f)) {
		lines++;
		if (strtoull(line, NULL, 16))
			nonzero++;
	}
	fclose(f);
	return nonzero > 0;
}

/*
 * /proc/kallsyms into DIR/kallsyms: "kallsyms" if it gives addresses,
 * else "none", with a warning that says why.
 */
static const char *copy_kallsyms(void)
{
	static const char from[] = "/proc/kallsyms";
	char buf[65536], *to;
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	if (in < 0) {
		fprintf(stderr, "%s: %s: %s; call sites cannot be resolved elsewhere\n",
			prog, from, strerror(errno));
		return "none";
	}
	out = openat(cap.outfd, "kallsyms", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		fatal("%s/kallsyms: %s", cap.out, strerror(errno));
	to = join(cap.out, "kallsyms");
	while ((n = read(in, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			write_all(out, buf, n, to);
	free(to);
	if (n < 0) {
		fprintf(stderr, "%s: reading %s: %s; call sites cannot be resolved elsewhere\n",
			prog, from, strerror(errno));
		close(in);
		close(out);
		return "none";
	}
	close(in);
	if (lseek(out, 0, SEEK_SET) < 0)
		fatal("%s/kallsyms: %s", cap.out, strerror(errno));
	if (!kallsyms_usable(out)) {
		fprintf(stderr, "%s: %s gives no addresses (%s); %s\n", prog, from,
			"not root, or kptr_restrict=2", "call sites cannot be resolved");
		return "none";
	}
	return "kallsyms";
}

/* ---- main()'s steps ---------------------------------------------------- */

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "time", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'm' },
		{ "enable", no_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "nice", required_argument, NULL, KMT_OPT_NICE },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	char formats[64], *end;
	int c;

	*o = (struct options){ .out = "kmemtrace.out", .dir = "/sys/kernel/debug/kmemtrace" };
	while ((c = getopt_long(argc, argv, "o:t:m:b:eqn:d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 't':
			o->seconds = strtod(optarg, &end);
			/* Not "nan", which no time is ever past ("inf" is Ctrl-C's). */
			if (end == optarg || *end || isnan(o->seconds) || o->seconds <= 0)
				kmt_die(prog, KMT_EXIT_USAGE, "-t %s: not a number of seconds > 0",
					optarg);
			break;
		case 'b':
			/*
			 * kmemtraced's letter for --bytes until now; a buffer
			 * size in kmonlog, and here in the next release. Said
			 * once, the status unchanged.
			 */
			kmt_old_letter(prog, 'b', "-m (stop after SIZE bytes)",
				       "mean a buffer size");
			fallthrough;
		case 'm':
			if (!kmt_parse_size(optarg, &o->byte_limit))
				kmt_die(prog, KMT_EXIT_USAGE, "-m %s: not a size (N, Nk, NM, NG)",
					optarg);
			break;
		case 'e':
			o->enable = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'n':
			/* --nice's letter until now; a count in kmemtrace-report. */
			kmt_old_letter(prog, 'n', "--nice", "be a count");
			fallthrough;
		case KMT_OPT_NICE:
			if (!kmt_parse_nice(optarg, &reader_nice))
				kmt_die(prog, KMT_EXIT_USAGE,
					"--nice=%s: not a nice value from -20 to 19", optarg);
			nice_given = true;
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'h':
			show_help(stdout);
			exit(fflush(stdout) ? KMT_EXIT_USAGE : KMT_EXIT_OK);
		case 'V':
			snprintf(formats, sizeof(formats), "kmemtrace ABI %d",
				 KMEMTRACE_ABI_VERSION);
			kmt_print_version(prog, formats);
			exit(fflush(stdout) ? KMT_EXIT_USAGE : KMT_EXIT_OK);
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

/*
 * -d names the kmemtrace directory; the debugfs mount point that holds
 * it as kmemtrace/ is taken too. Sets cap.dir and reads its ABI version.
 */
static void find_kmemtrace_dir(const char *given)
{
	char *path = join(given, "abi_version"), *sub, *s, *end;
	int err;
	long v;

	if (access(path, F_OK)) {
		err = errno;
		sub = join(given, "kmemtrace");
		free(path);
		path = join(sub, "abi_version");
		if (access(path, F_OK)) {
			free(path);
			free(sub);
			fatal("%s/abi_version: %s (-d names the kmemtrace directory or the debugfs mount point that holds it; is debugfs mounted, CONFIG_KMEMTRACE_ALLOC on, and are you root?)",
			      given, strerror(err));
		}
		given = sub;
	}
	cap.dir = given;
	s = kmt_slurp(path, NULL);
	if (!s)
		fatal("%s: %s (are you root?)", path, strerror(errno));
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || (*end && *end != '\n') || errno || v < 1 || v > INT_MAX)
		fatal("%s: \"%.20s\" is not an ABI version: not a kmemtrace directory", path, s);
	cap.abi = v;
	if (cap.abi != KMEMTRACE_ABI_VERSION)
		fprintf(stderr, "%s: the kernel speaks ABI %d, this tool %d; capturing anyway\n",
			prog, cap.abi, KMEMTRACE_ABI_VERSION);
	free(s);
	free(path);
}

/*
 * DIR: OUT_RULE. A new one is created; an existing one must hold nothing,
 * so that no file of another capture, or of anything else, is
 * overwritten or mixed with this one.
 */
static void prepare_output(const char *out)
{
	struct dirent *de;
	bool meta = false, other = false;
	DIR *d;

	cap.out = out;
	if (!mkdir(out, 0755))
		cap.out_made = true;
	else if (errno != EEXIST)
		fatal("%s: %s", out, strerror(errno));
	cap.outfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cap.outfd < 0)
		fatal("%s: %s (%s)", out, strerror(errno), OUT_RULE);
	d = fdopendir(dup(cap.outfd));
	if (!d)
		fatal("%s: %s", out, strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(de->d_name, "meta"))
			meta = true;
		else
			other = true;
	}
	if (errno)
		fatal("%s: %s", out, strerror(errno));
	closedir(d);
	if (meta)
		fatal("%s already holds a capture (%s)", out, OUT_RULE);
	if (other)
		fatal("%s is not empty (%s)", out, OUT_RULE);
}

/* The kernel's numbers at the start, and tracing turned on with -e. */
static void begin_capture(bool enable)
{
	int on;

	cap.enable = enable;
	read_counts(cap.dir, &cap.start);
	/* The first read of the caches is not an allocation in the capture. */
	read_caches();
	on = read_enable(cap.dir);
	if (on < 0 && enable)
		fatal("%s/enable: %s", cap.dir, strerror(errno));
	cap.was_on = on == 1;
	/* The kernel allocates the buffers, and makes the files, at an enable. */
	if (enable) {
		char *path = join(cap.dir, "enable");
		int fd = open(path, O_WRONLY | O_CLOEXEC);

		if (fd < 0)
			fatal("%s: %s", path, strerror(errno));
		__atomic_store_n(&enable_fd, fd, __ATOMIC_RELAXED);
		free(path);
		set_enable(cap.dir, "1");
		__atomic_store_n(&enabled_dir, cap.dir, __ATOMIC_RELEASE);
	}
}

static void start_readers(const pthread_attr_t *attr)
{
	size_t i;

	write_caches();
	write_meta();
	clock_gettime(CLOCK_MONOTONIC, &cap.t0);
	for (i = 0; i < cap.nreaders; i++) {
		int err = start_reader(cap.readers[i], attr);

		if (err)
			fatal("cannot start the reader of cpu%d: %s (%zu running; ulimit -u)",
			      cap.readers[i]->cpu, strerror(err), i);
	}
}

static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * Until a stop signal, -t or -m: once a second, readers for new CPU files
 * and the caches; on a terminal, the progress line every 200 ms.
 */
static void wait_for_stop(const struct options *o, const pthread_attr_t *attr)
{
	bool progress = !o->quiet && isatty(STDERR_FILENO), stop = false;
	/* With -m, a limit reached is seen within 10 ms: a storm fills MBs in 200. */
	unsigned long ticks, tick_ms = o->byte_limit ? 10 : 200;
	size_t i;

	for (ticks = 1; !stop && !kmt_stop_requested; ticks++) {
		struct timespec ts = { 0, tick_ms * 1000 * 1000 };
		__u64 e = 0, b = 0;

		/* Cut short by a stop signal, which the main thread alone takes. */
		nanosleep(&ts, NULL);
		if (o->seconds && since(&cap.t0) >= o->seconds)
			stop = true;
		/* Once a second: a CPU that came online (relay made its file). */
		if (!(ticks % (1000 / tick_ms))) {
			if (add_readers(attr))
				write_meta();
			read_caches();
			write_caches();
		}
		for (i = 0; i < cap.nreaders; i++) {
			e += __atomic_load_n(&cap.readers[i]->events, __ATOMIC_RELAXED);
			b += __atomic_load_n(&cap.readers[i]->bytes, __ATOMIC_RELAXED);
		}
		if (o->byte_limit && b >= o->byte_limit)
			stop = true;
		if (!progress || ticks % (200 / tick_ms))
			continue;
		fprintf(stderr, "\r%s: %llu events, %llu KiB, %llu lost   ",
			prog, e, b >> 10, stat_value(cap.dir, "lost_events") - cap.start.lost);
	}
	if (progress)
		fputc('\n', stderr);
}

/*
 * What -e started stops before the drain, which then gets it all: once
 * enable is written, no event is being recorded any more. Otherwise the
 * drain takes what was numbered before it began.
 */
static void drain_readers(const pthread_attr_t *attr)
{
	size_t i;

	if (cap.enable) {
		set_enable(cap.dir, "0");
		__atomic_store_n(&enabled_dir, NULL, __ATOMIC_RELEASE);
		close(__atomic_exchange_n(&enable_fd, -1, __ATOMIC_RELAXED));
	}
	cap.stopped = read_enable(cap.dir) == 0;
	add_readers(attr);
	read_counts(cap.dir, &cap.drain);
	if (!cap.stopped)
		drain_limit = stat_value(cap.dir, "subbufs") * stat_value(cap.dir, "subbuf_size");
	__atomic_store_n(&drain, 1, __ATOMIC_RELEASE);
	for (i = 0; i < cap.nreaders; i++)
		if (cap.readers[i]->started)
			pthread_join(cap.readers[i]->thread, NULL);
	cap.seconds = since(&cap.t0);
	read_counts(cap.dir, &cap.end);
}

static void finish_capture(void)
{
	size_t i;

	read_caches();
	write_caches();
	cap.symbols = copy_kallsyms();
	cap.complete = cap.enable && !cap.was_on;
	/* A CPU file not captured, or cut short by a read error: events missing. */
	for (i = 0; i < cap.nreaders; i++)
		if (reader_missed(cap.readers[i], true))
			cap.complete = false;
	cap.finished = true;
	write_meta();
}

/*
 * A line per CPU file and the totals on standard output, what went wrong
 * on standard error. Returns the exit status: the highest that applies.
 */
static int summary(void)
{
	__u64 events = 0, bytes = 0;
	int status = KMT_EXIT_OK;
	size_t i;

	for (i = 0; i < cap.nreaders; i++) {
		struct reader *r = cap.readers[i];

		if (r->missed)
			continue;
		printf("cpu%d: %llu events, %llu bytes%s\n", r->cpu, r->events,
		       r->bytes, r->pinned ? "" : " (read from another CPU)");
		events += r->events;
		bytes += r->bytes;
	}
	printf("total: %llu events, %llu bytes\n", events, bytes);
	printf("lost while capturing: %llu events, %llu bytes; total_overruns %llu\n",
	       cap.end.lost - cap.start.lost, cap.end.lost_bytes - cap.start.lost_bytes,
	       cap.end.lost_bytes);
	if (cap.end.lost != cap.start.lost)
		status = KMT_EXIT_DATA;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: writing standard output: %s\n", prog,
			strerror(errno ?: EIO));
		status = KMT_EXIT_USAGE;
	}
	for (i = 0; i < cap.nreaders; i++) {
		struct reader *r = cap.readers[i];

		if (r->missed) {
			fprintf(stderr, "%s: cpu%d: not captured: %s%s\n", prog, r->cpu,
				strerror(r->missed), fd_hint(r->missed));
			status = status > KMT_EXIT_USAGE ? status : KMT_EXIT_USAGE;
			continue;
		}
		if (r->err) {
			fprintf(stderr, "%s: reading cpu%d: %s\n", prog, r->cpu, strerror(r->err));
			status = status > KMT_EXIT_USAGE ? status : KMT_EXIT_USAGE;
		}
		/* What the kernel gave is not what the ABI says: corrupt input. */
		if (r->bad_at) {
			fprintf(stderr, "%s: cpu%d: offset %llu: bad event size\n",
				prog, r->cpu, r->bad_at - 1);
			status = KMT_EXIT_CORRUPT;
		}
		if (r->ncarry) {
			fprintf(stderr, "%s: cpu%d: ends in %zu bytes of an unfinished event\n",
				prog, r->cpu, r->ncarry);
			status = KMT_EXIT_CORRUPT;
		}
		if (close(r->out)) {
			fprintf(stderr, "%s: %s/cpu%d: %s\n", prog, cap.out, r->cpu,
				strerror(errno));
			status = status > KMT_EXIT_USAGE ? status : KMT_EXIT_USAGE;
		}
	}
	return status;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	struct options o;

	parse_options(argc, argv, &o);
	nice_set = kmt_nice_wanted(nice_given);
	catch_signals();
	reader_attr(&attr);

	find_kmemtrace_dir(o.dir);
	prepare_output(o.out);
	begin_capture(o.enable);
	open_readers();
	start_readers(&attr);
	wait_for_stop(&o, &attr);
	drain_readers(&attr);
	finish_capture();
	return summary();
}
