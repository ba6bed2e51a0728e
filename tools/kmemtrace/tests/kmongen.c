// SPDX-License-Identifier: GPL-2.0
/*
 * kmongen - a synthetic /dev/kmon log, as kmonlog writes it, for timing
 * kmonparse and for comparing two kmonparse builds on every kind of
 * record:
 *
 *   kmongen [-m] [-c CPUS] [-p PIDFIL] -n N FILE
 *
 * writes N rounds of four records, alternating CPUs 0 and 1, 1 us
 * apart: a wakeup, a switch, a kmalloc allocation and its free, the
 * PIDs and pointers varying as they would in a busy system.
 *
 * With -m (mixed), N rounds of one record each, drawn from every kind
 * kmonparse decodes (the four scheduler blobs in their 2-byte-PID and
 * 4-byte-PID forms, allocations and frees of the three allocators in
 * every context, test blobs) and 1 in 64 of a blob type it does not
 * know, on CPUs 0 to CPUS - 1 (default 300: the extended CPU field
 * too), their time stamps a little out of order across CPUs, from
 * about 10^18 ns (the slow path of Perfetto's microseconds) in one
 * round out of 4096. -p writes a pids.dat naming some of the PIDs, some
 * names long, with the characters kmonparse replaces. The same
 * arguments always give the same bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/kmon.h>

static unsigned char *le(unsigned char *p, unsigned long long v, int n)
{
	while (n--) {
		*p++ = v & 0xff;
		v >>= 8;
	}
	return p;
}

static void record(FILE *f, unsigned int cpu, unsigned long long ts,
		   const unsigned char *blob, size_t len)
{
	unsigned char hdr[KMON_HDR_SIZE + KMON_CPU_EXT_SIZE];
	size_t hl = KMON_HDR_SIZE;

	hdr[0] = cpu < KMON_CPU_EXT ? cpu : KMON_CPU_EXT;
	le(hdr + 1, ts, 8);
	le(hdr + 9, len, 2);
	if (cpu >= KMON_CPU_EXT) {
		le(hdr + KMON_HDR_SIZE, cpu, KMON_CPU_EXT_SIZE);
		hl += KMON_CPU_EXT_SIZE;
	}
	if (fwrite(hdr, 1, hl, f) != hl || fwrite(blob, 1, len, f) != len) {
		perror("kmongen: write");
		exit(1);
	}
}

/* The log of the default mode: the rounds a benchmark times. */
static void rounds(FILE *f, unsigned long long n)
{
	unsigned char b[KMON_ALLOC_SIZE], *p;
	unsigned long long i, ts = 1000000;

	for (i = 0; i < n; i++) {
		unsigned int cpu = i & 1, a = 100 + i % 500, z = 600 + i % 300;
		unsigned long long ptr = 0xffff888000000000ULL + (i % 4096) * 64;

		b[0] = KMON_DT_TSKWAKEUP;
		le(le(b + 1, a, 2), z, 2);
		record(f, cpu, ts++ * 1000, b, 5);
		b[0] = KMON_DT_TSKSWITCH;
		le(le(b + 1, a, 2), z, 2);
		record(f, cpu, ts++ * 1000, b, 5);

		memset(b, 0, sizeof(b));
		b[0] = KMON_DT_ALLOC;
		b[1] = 0;				/* kmalloc */
		p = le(b + 3, z, 4);
		p = le(p, 0xffffffff81234567ULL + i % 64, 8);
		p = le(p, ptr, 8);
		p = le(p, 64, 8);
		p = le(p, 64, 8);
		p = le(p, 0xcc0, 4);
		p = le(p, 0xffff, 2);			/* node -1 */
		le(p, 3 + i % 8, 8);
		record(f, cpu, ts++ * 1000, b, KMON_ALLOC_SIZE);
		b[0] = KMON_DT_FREE;
		le(b + 23, 3 + i % 8, 8);
		record(f, cpu, ts++ * 1000, b, KMON_FREE_SIZE);
	}
}

static uint64_t seed = 0x9e3779b97f4a7c15ULL;

/* xorshift64: the same sequence on every machine. */
static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/* The PIDs of the mixed log: 2-byte ones, a few above 65535, and 0. */
static uint32_t some_pid(void)
{
	uint64_t r = rnd();

	if (r % 16 == 0)
		return 0;
	if (r % 16 == 1)
		return 65536 + (r >> 8) % 4000000;
	return 1 + (r >> 8) % 3000;
}

/* The log of -m: one record of a random kind per round. */
static void mixed(FILE *f, unsigned long long n, unsigned int cpus)
{
	unsigned char b[KMON_BLOB_MAX], *p;
	unsigned long long i, ts = 5000000000ULL;

	for (i = 0; i < n; i++) {
		unsigned int cpu = rnd() % cpus, kind = rnd() % 64;
		unsigned long long t = ts + rnd() % 20000;	/* out of order across CPUs */
		uint32_t a = some_pid(), z = some_pid();
		size_t len;

		ts += 1000;
		if (i % 4096 == 4095)
			t = 1000000000000000000ULL + rnd() % 1000000000000ULL;
		if (kind < 24) {			/* the scheduler blobs */
			int w = a > 0xffff || z > 0xffff ? 4 : 2;
			int k = 1 + kind % 4;

			b[0] = k + (w == 4 ? KMON_DT_TSKQUEUE32 - 1 : 0);
			p = le(b + 1, a, w);
			if (k >= KMON_DT_TSKSWITCH)
				p = le(p, z, w);
			len = p - b;
		} else if (kind < 60) {			/* allocations and frees */
			bool alloc = kind < 44;
			unsigned int type = rnd() % 3;

			memset(b, 0, KMON_ALLOC_SIZE);
			b[0] = alloc ? KMON_DT_ALLOC : KMON_DT_FREE;
			b[1] = type;
			b[2] = rnd() % 8;		/* hardirq, softirq, bulk bits */
			p = le(b + 3, b[2] & 3 ? rnd() % 2 * a : a, 4);
			p = le(p, rnd() % 8 ? 0xffffffff81000000ULL + rnd() % 0x1000000 : 0, 8);
			p = le(p, rnd() % 16 ? 0xffff888000000000ULL + (rnd() % 65536) * 64 : 0, 8);
			if (alloc) {
				p = le(p, rnd() % 70000, 8);
				p = le(p, rnd() % 70000, 8);
				p = le(p, rnd() % 4 ? 0xcc0 : (uint32_t)rnd(), 4);
				p = le(p, rnd() % 4 ? 0xffff : rnd() % 65536, 2);
			}
			p = le(p, type == 2 ? 0 : rnd() % 200, 8);
			len = p - b;
		} else if (kind < 63) {			/* test blobs, a few with filler */
			memset(b, 0, 64);
			b[0] = KMON_DT_TEST;
			b[1] = rnd() % 5;
			le(b + 2, (uint32_t)rnd(), 4);
			len = 6 + rnd() % 3 * 29;
		} else {				/* a type of a newer kernel */
			b[0] = 11 + rnd() % 100;
			len = 1 + rnd() % 40;
			memset(b + 1, 0x5a, len - 1);
		}
		record(f, cpu, t, b, len);
	}
}

/* pids.dat for -m: every PID from 1 to 3000 but one in 7, and a few above. */
static void pids(const char *file)
{
	FILE *f = fopen(file, "w");
	uint32_t pid;

	if (!f) {
		perror(file);
		exit(1);
	}
	fprintf(f, "0\t[IDLE]\n");
	for (pid = 1; pid <= 3000; pid++) {
		if (pid % 7 == 0)
			continue;
		switch (pid % 5) {
		case 0:
			fprintf(f, "%u\t[kworker/%u:1]\n", pid, pid % 8);
			break;
		case 1:
			fprintf(f, "%u\t/usr/bin/task-%u;--opt=a,b;\"q\"\n", pid, pid);
			break;
		case 2:
			fprintf(f, "%u\tna\xc3\xafve\x01\\%u\xff;x\n", pid, pid);
			break;
		case 3:
			fprintf(f, "%u\t/opt/%0*u\xc3\xa9\xc3\xa9;\n", pid, 100 + pid % 40, pid);
			break;
		default:
			fprintf(f, "%u\tsh\n", pid);
		}
	}
	for (pid = 65536; pid < 65536 + 4000000; pid += 40000)
		fprintf(f, "%u\tbig-%u\n", pid, pid);
	if (fclose(f)) {
		perror(file);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	unsigned long long n = 0;
	const char *pidfile = NULL;
	unsigned int cpus = 300;
	bool mix = false;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "n:mc:p:")) != -1) {
		switch (c) {
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			mix = true;
			break;
		case 'c':
			cpus = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			pidfile = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (!n || !cpus || cpus > 8192 || optind != argc - 1)
		goto usage;
	f = fopen(argv[optind], "w");
	if (!f) {
		perror(argv[optind]);
		return 1;
	}
	if (mix)
		mixed(f, n, cpus);
	else
		rounds(f, n);
	if (fclose(f)) {
		perror("kmongen: close");
		return 1;
	}
	if (pidfile)
		pids(pidfile);
	return 0;
usage:
	fprintf(stderr, "usage: kmongen [-m] [-c CPUS] [-p PIDFIL] -n N FILE\n");
	return 2;
}
