// SPDX-License-Identifier: GPL-2.0
/*
 * kmon_storm - a context-switch storm to measure kmon's scheduler events
 * against ftrace's (Documentation/trace/kmon.rst, "Cost"): two threads
 * on CPU 0 ping-pong a byte over two pipes. Threads, not processes: a
 * switch between processes changes the address space, which costs more
 * than any tracer (under QEMU TCG, a flush of the emulated TLB).
 *
 *   kmon_storm N [wait]
 *	prints "pids MAIN PONG", the two threads' IDs, with "wait" then
 *	waits for a line on standard input, runs N round trips and prints
 *	"roundtrip_ns T", the mean time of one.
 *
 *   kmon_storm bench N ROUNDS
 *	the cost of the tracers on the storm, measured in this one process
 *	so that only the tracer differs between the runs it compares: each
 *	round times N round trips three times, with nothing on, with a
 *	/dev/kmon instance started for KTR_SCHED and a reader thread
 *	draining it, and with ftrace's sched_switch and sched_wakeup
 *	events on, in an order that rotates from round to round. It
 *	prints a line per round and then the medians, and fails if kmon
 *	lost a record or did not log the storm's switches.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/kmon.h>

#include "kmon_log.h"
#include "kmt_util.h"

static int p2c[2], c2p[2];
static pid_t main_tid, pong_tid;
static cpu_set_t all_cpus;

static void *pong(void *arg)
{
	char c;

	__atomic_store_n(&pong_tid, gettid(), __ATOMIC_RELEASE);
	while (read(p2c[0], &c, 1) == 1 && c)
		if (write(c2p[1], &c, 1) != 1)
			break;
	return NULL;
}

/* The mean time of @n round trips, in ns; exits on a pipe error. */
static double roundtrips(long n)
{
	double t0 = kmt_mono_ns();
	char c = 1;
	long i;

	for (i = 0; i < n; i++)
		if (write(p2c[1], &c, 1) != 1 || read(c2p[0], &c, 1) != 1) {
			perror("kmon_storm: pipe");
			exit(1);
		}
	return (kmt_mono_ns() - t0) / n;
}

static void die(const char *what)
{
	fprintf(stderr, "kmon_storm: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void write_file(const char *path, const char *val)
{
	int ret = kmt_write_str(path, val);

	if (ret) {
		errno = -ret;
		die(path);
	}
}

#define SCHED_EVENTS	"/sys/kernel/tracing/events/sched/"

static bool ftrace_on;

/* ftrace's sched_switch and sched_wakeup events, on ("1") or off ("0"). */
static void ftrace_events(const char *val)
{
	ftrace_on = true;	/* until both are known to be off */
	write_file(SCHED_EVENTS "sched_switch/enable", val);
	write_file(SCHED_EVENTS "sched_wakeup/enable", val);
	ftrace_on = *val != '0';
}

/* An exit on an error does not leave the events on for the next test. */
static void event_off(const char *path)
{
	if (kmt_write_str(path, "0"))
		fprintf(stderr, "kmon_storm: could not turn %s off\n", path);
}

static void ftrace_off_at_exit(void)
{
	if (!ftrace_on)
		return;
	event_off(SCHED_EVENTS "sched_switch/enable");
	event_off(SCHED_EVENTS "sched_wakeup/enable");
}

/* What the reader thread counted in one kmon run. */
struct kmon_count {
	int fd;
	unsigned long records, bytes, swc;	/* swc: away from the two threads */
};

/* Drain the instance until it is stopped and empty, counting records. */
static void *kmon_reader(void *arg)
{
	struct kmon_count *k = arg;
	static unsigned char buf[1 << 20];
	ssize_t len;

	/* Where the scheduler puts it, as kmonlog would be. */
	if (sched_setaffinity(0, sizeof(all_cpus), &all_cpus))
		die("sched_setaffinity");
	while ((len = read(k->fd, buf, sizeof(buf))) > 0) {
		ssize_t off = 0;

		while (off < len) {
			unsigned char *rec = buf + off;
			size_t hdr = kmon_hdr_len(rec), blob = kmon_blob_len(rec);
			uint32_t a, b;
			size_t want;
			int kind;

			/*
			 * Switches away from the two threads: each blocks
			 * once per round trip, whatever runs next (another
			 * task, a worker, may come in between).
			 */
			if (kmon_sched_blob(rec + hdr, blob, &kind, &a, &b, &want) &&
			    kind == KMON_DT_TSKSWITCH &&
			    (a == (uint32_t)main_tid || a == (uint32_t)pong_tid))
				k->swc++;
			k->records++;
			off += hdr + blob;
		}
		k->bytes += len;
	}
	if (len < 0)
		die("read /dev/kmon");
	return NULL;
}

/* One timed kmon run; returns the round trip time, counts in @k. */
static double kmon_run(int fd, long n, struct kmon_count *k)
{
	struct kmon_stats st;
	pthread_t reader;
	double t;

	memset(k, 0, sizeof(*k));
	k->fd = fd;
	if (ioctl(fd, KMON_START))
		die("KMON_START");
	if (pthread_create(&reader, NULL, kmon_reader, k))
		die("pthread_create");
	t = roundtrips(n);
	if (ioctl(fd, KMON_STOP))
		die("KMON_STOP");
	if (pthread_join(reader, NULL))
		die("pthread_join");
	if (ioctl(fd, KMON_GET_STATS, &st))
		die("KMON_GET_STATS");
	if (st.overruns || st.ring_overruns) {
		fprintf(stderr, "kmon_storm: kmon lost %llu records (buffer), %llu (rings)\n",
			(unsigned long long)st.overruns, (unsigned long long)st.ring_overruns);
		exit(1);
	}
	return t;
}

/* Two switches or more per round trip away from the two threads, or fail. */
static bool kmon_short(const struct kmon_count *k, long n)
{
	if (k->swc >= 2 * (unsigned long)n)
		return false;
	fprintf(stderr, "kmon_storm: kmon logged %lu switches for %ld round trips\n", k->swc, n);
	return true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { OFF, KMON, FTRACE, NCONF };
#define SETTLE_US	200000
static const char * const conf_name[NCONF] = { "off", "kmon", "ftrace" };

static int bench(long n, int rounds)
{
	double *t[NCONF], *added[2], *ratio, swc_per_rt = 0;
	unsigned long records = 0;
	struct kmon_count k;
	double m;
	int fd, r, i, c;

	fd = open("/dev/kmon", O_RDONLY);
	if (fd < 0)
		die("/dev/kmon");
	for (c = 0; c < NCONF; c++)
		t[c] = calloc(rounds, sizeof(double));
	added[0] = calloc(rounds, sizeof(double));
	added[1] = calloc(rounds, sizeof(double));
	ratio = calloc(rounds, sizeof(double));
	if (!t[OFF] || !t[KMON] || !t[FTRACE] || !added[0] || !added[1] || !ratio)
		die("calloc");
	write_file("/sys/kernel/tracing/tracing_on", "1");
	atexit(ftrace_off_at_exit);
	ftrace_events("0");
	roundtrips(n);		/* warm up */
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NCONF; i++) {
			c = (r + i) % NCONF;
			/*
			 * Turning a tracer off leaves work behind (RCU
			 * callbacks, workers): let it finish before the
			 * next timed run, whichever that is.
			 */
			usleep(SETTLE_US);
			if (c == OFF) {
				t[OFF][r] = roundtrips(n);
			} else if (c == KMON) {
				t[KMON][r] = kmon_run(fd, n, &k);
				if (kmon_short(&k, n))
					return 1;
				swc_per_rt += (double)k.swc / n / rounds;
				records += k.records;
			} else {
				ftrace_events("1");
				t[FTRACE][r] = roundtrips(n);
				ftrace_events("0");
			}
		}
		added[0][r] = t[KMON][r] - t[OFF][r];
		added[1][r] = t[FTRACE][r] - t[OFF][r];
		ratio[r] = added[0][r] / added[1][r];
		printf("round %d off %.1f kmon %.1f ftrace %.1f ratio %.3f\n",
		       r, t[OFF][r], t[KMON][r], t[FTRACE][r], ratio[r]);
		fflush(stdout);
	}
	for (c = 0; c < NCONF; c++) {
		m = median(t[c], rounds);
		printf("%s_roundtrip_ns median %.1f min %.1f max %.1f\n",
		       conf_name[c], m, t[c][0], t[c][rounds - 1]);
	}
	printf("switches_per_roundtrip %.2f\n", swc_per_rt);
	printf("kmon_records_per_roundtrip %.2f\n", (double)records / n / rounds);
	printf("kmon_added_ns_per_switch %.1f\n", median(added[0], rounds) / swc_per_rt);
	printf("ftrace_added_ns_per_switch %.1f\n", median(added[1], rounds) / swc_per_rt);
	m = median(ratio, rounds);
	printf("ratio_median %.3f min %.3f max %.3f\n", m, ratio[0], ratio[rounds - 1]);
	return 0;
}

int main(int argc, char **argv)
{
	bool do_bench = argc == 4 && !strcmp(argv[1], "bench");
	char c = 1, line[64];
	pthread_t thread;
	cpu_set_t set;
	int rounds = 0;
	long n;

	if (!do_bench && (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "wait")))) {
		fprintf(stderr, "usage: kmon_storm N [wait] | kmon_storm bench N ROUNDS\n");
		return 2;
	}
	n = atol(argv[do_bench ? 2 : 1]);
	if (do_bench)
		rounds = atoi(argv[3]);
	if (n <= 0 || (do_bench && rounds <= 0)) {
		fprintf(stderr, "kmon_storm: N and ROUNDS must be positive numbers\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_getaffinity(0, sizeof(all_cpus), &all_cpus) ||
	    sched_setaffinity(0, sizeof(set), &set) || pipe(p2c) || pipe(c2p))
		die("setup");
	main_tid = gettid();
	if (pthread_create(&thread, NULL, pong, NULL)) {
		fprintf(stderr, "kmon_storm: cannot create a thread\n");
		return 1;
	}
	/* One round trip: the thread runs, and is then blocked in read(). */
	roundtrips(1);
	if (do_bench) {
		if (bench(n, rounds))
			return 1;
	} else {
		printf("pids %d %d\n", main_tid, __atomic_load_n(&pong_tid, __ATOMIC_ACQUIRE));
		fflush(stdout);
		if (argc == 3 && !fgets(line, sizeof(line), stdin))
			return 1;
		printf("roundtrip_ns %.1f\n", roundtrips(n));
	}
	c = 0;
	if (write(p2c[1], &c, 1) != 1 || pthread_join(thread, NULL))
		return 1;
	return 0;
}
