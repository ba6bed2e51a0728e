// SPDX-License-Identifier: GPL-2.0
/*
 * kmongen - a synthetic /dev/kmon log, as kmonlog writes it, for timing
 * kmonparse (scripts/bench-report):
 *
 *   kmongen -n N FILE
 *
 * writes N rounds of four records, alternating CPUs 0 and 1, 1 us
 * apart: a wakeup, a switch, a kmalloc allocation and its free, the
 * PIDs and pointers varying as they would in a busy system.
 */
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
	unsigned char hdr[KMON_HDR_SIZE];

	hdr[0] = cpu;
	le(hdr + 1, ts, 8);
	le(hdr + 9, len, 2);
	if (fwrite(hdr, 1, sizeof(hdr), f) != sizeof(hdr) ||
	    fwrite(blob, 1, len, f) != len) {
		perror("kmongen: write");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	unsigned char b[KMON_ALLOC_SIZE], *p;
	unsigned long long n = 0, i, ts = 1000000;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n')
			goto usage;
		n = strtoull(optarg, NULL, 0);
	}
	if (!n || optind != argc - 1)
		goto usage;
	f = fopen(argv[optind], "w");
	if (!f) {
		perror(argv[optind]);
		return 1;
	}
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
	if (fclose(f)) {
		perror("kmongen: close");
		return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: kmongen -n N FILE\n");
	return 2;
}
