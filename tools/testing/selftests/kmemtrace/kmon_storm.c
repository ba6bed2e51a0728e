// SPDX-License-Identifier: GPL-2.0
/*
 * kmon_storm - a context-switch storm for the kmon measurements of
 * scripts/check (Documentation/trace/kmon.rst): two threads on CPU 0
 * ping-pong a byte over two pipes N times. Threads, not processes: a
 * switch between processes changes the address space, which under QEMU
 * TCG flushes the emulated TLB and costs far more than any tracer.
 *
 *   kmon_storm N [wait]
 *
 * prints "pids MAIN PONG", the two threads' IDs, with "wait" then waits
 * for a line on standard input before it starts, and prints
 * "roundtrip_ns T", the mean time of one round trip (two context
 * switches, or more).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int p2c[2], c2p[2];
static pid_t pong_tid;

static void *pong(void *arg)
{
	char c;

	__atomic_store_n(&pong_tid, gettid(), __ATOMIC_RELEASE);
	while (read(p2c[0], &c, 1) == 1 && c)
		if (write(c2p[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	char c = 1, line[64];
	pthread_t thread;
	cpu_set_t set;
	long i, n;
	double t0;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "wait"))) {
		fprintf(stderr, "usage: kmon_storm N [wait]\n");
		return 2;
	}
	n = atol(argv[1]);
	if (n <= 0) {
		fprintf(stderr, "kmon_storm: N must be a positive number\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || pipe(p2c) || pipe(c2p)) {
		perror("kmon_storm");
		return 1;
	}
	if (pthread_create(&thread, NULL, pong, NULL)) {
		fprintf(stderr, "kmon_storm: cannot create a thread\n");
		return 1;
	}
	/* One round trip: the thread runs, and is then blocked in read(). */
	if (write(p2c[1], &c, 1) != 1 || read(c2p[0], &c, 1) != 1)
		return 1;
	printf("pids %d %d\n", gettid(), __atomic_load_n(&pong_tid, __ATOMIC_ACQUIRE));
	fflush(stdout);
	if (argc == 3 && !fgets(line, sizeof(line), stdin))
		return 1;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (write(p2c[1], &c, 1) != 1 || read(c2p[0], &c, 1) != 1) {
			perror("kmon_storm: pipe");
			return 1;
		}
	printf("roundtrip_ns %.1f\n", (now_ns() - t0) / n);
	c = 0;
	if (write(p2c[1], &c, 1) != 1 || pthread_join(thread, NULL))
		return 1;
	return 0;
}
