// SPDX-License-Identifier: GPL-2.0
/*
 * alloc_bench - the cost of allocation-heavy system calls, relative to a
 * loop that does not enter the kernel, for comparing kernels booted one
 * after the other (under emulation only ratios within a boot mean
 * anything): pipe() and close() allocate and free a pipe, its inode, two
 * files and their dentry through kmalloc() and kmem_cache_alloc().
 *
 *   alloc_bench [N [ROUNDS [rounds]]]
 *
 * prints the median over ROUNDS of ns per pipe()+close()x2, of ns per
 * iteration of the reference loop, and of their ratio in each round (a
 * round's two loops run back to back, so the emulator's drift during the
 * run cancels out); with "rounds", each round's figures first, one line
 * each (to see their spread).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kmt_util.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pipes(long n)
{
	double t0 = kmt_mono_ns();
	int fd[2];
	long i;

	for (i = 0; i < n; i++) {
		if (pipe(fd)) {
			perror("pipe");
			exit(1);
		}
		close(fd[0]);
		close(fd[1]);
	}
	return (kmt_mono_ns() - t0) / n;
}

static double spin(long n)
{
	double t0 = kmt_mono_ns();
	unsigned long x = 1;
	long i;

	for (i = 0; i < n * 100; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		/* Keep the loop: the compiler cannot see what this does. */
		__asm__ __volatile__("" : "+r" (x));
	}
	return (kmt_mono_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7, r;
	int each = argc > 3 && !strcmp(argv[3], "rounds");
	double *p, *s, *q;

	if (n <= 0 || rounds <= 0 || rounds > 1000 || (argc > 3 && !each) || argc > 4) {
		fprintf(stderr, "usage: alloc_bench [N [ROUNDS [rounds]]]\n");
		return 2;
	}
	p = calloc(rounds, sizeof(*p));
	s = calloc(rounds, sizeof(*s));
	q = calloc(rounds, sizeof(*q));
	if (!p || !s || !q)
		return 1;
	for (r = 0; r < rounds; r++) {
		p[r] = pipes(n);
		s[r] = spin(n);
		q[r] = p[r] / s[r];
		if (each)
			printf("round %d pipe %.1f ns spin %.1f ns ratio %.4f\n", r, p[r], s[r],
			       q[r]);
	}
	qsort(p, rounds, sizeof(*p), cmp);
	qsort(s, rounds, sizeof(*s), cmp);
	qsort(q, rounds, sizeof(*q), cmp);
	printf("pipe %.1f ns spin %.1f ns ratio %.4f\n", p[rounds / 2], s[rounds / 2],
	       q[rounds / 2]);
	free(p);
	free(s);
	free(q);
	return 0;
}
