// SPDX-License-Identifier: GPL-2.0
/*
 * kmtgen - write a kmemtraced capture, exactly as the ABI lays it out,
 * from a scripted scenario, for the host tests of kmemtrace-report.
 *
 *   kmtgen [-1] [-s] [-w BITS] DIR < SCENARIO
 *   kmtgen [-1] [-s] [-w BITS] -n PAIRS DIR
 *
 * -1 writes ABI version 1, the 2008 layout without feature records (no
 * time stamps, no caches); -s writes the other byte order (and says so
 * in meta); -w 32 says the capture is a 32-bit machine's (the fields are
 * 64-bit all the same). -n writes PAIRS kmalloc()/kfree() pairs from 64
 * call sites on 2 CPUs instead, each object freed 1024 allocations
 * later, for benchmarks. SCENARIO has one
 * line per event, numbered from 0 in order, with a time stamp of 1000 ns
 * per number unless given:
 *
 *   CPU alloc TYPE SITE PTR REQ ALLOC [TIME] [c=CACHE]
 *   CPU free TYPE SITE PTR [TIME] [c=CACHE]
 *   sym ADDR NAME          a text symbol for DIR/kallsyms
 *   cache ID OBJECT_SIZE SIZE NAME
 *                          a line of DIR/caches
 *   # comment
 *
 * TYPE is kmalloc, cache or pages; SITE, PTR and ADDR are hexadecimal,
 * the rest decimal. The events of kmalloc and cache carry the cache
 * feature, the cache's ID or 0.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmt_put.h"

#define MAX_CPUS	64

static int type_of(const char *s)
{
	if (!strcmp(s, "kmalloc"))
		return KMEMTRACE_TYPE_KMALLOC;
	if (!strcmp(s, "cache"))
		return KMEMTRACE_TYPE_CACHE;
	if (!strcmp(s, "pages"))
		return KMEMTRACE_TYPE_PAGES;
	return -1;
}

static bool abi1;	/* -1: the 2008 layout, no feature records */

static void write_event(FILE *f, bool is_alloc, int ty, int seq, unsigned long long site,
			unsigned long long ptr, unsigned long long req, unsigned long long alloc,
			unsigned long long t, unsigned long long cache)
{
	bool slab = ty != KMEMTRACE_TYPE_PAGES;

	put8(f, is_alloc ? KMEMTRACE_EVENT_ALLOC : KMEMTRACE_EVENT_FREE);
	put8(f, ty);
	if (abi1)
		put16(f, is_alloc ? 48 : 24);
	else
		put16(f, (is_alloc ? 77 : 46) + (slab ? 11 : 0));
	put32(f, seq);
	put64(f, site);
	put64(f, ptr);
	if (is_alloc) {
		put64(f, req);
		put64(f, alloc);
		put32(f, 0xcc0);
		put32(f, -1);
	}
	if (abi1)
		return;
	put16(f, 11);
	put8(f, KMEMTRACE_FEAT_TIME);
	put64(f, t);
	put16(f, 7);
	put8(f, KMEMTRACE_FEAT_PID);
	put32(f, 1);
	if (is_alloc) {
		put16(f, 7);
		put8(f, KMEMTRACE_FEAT_NODE);
		put32(f, -1);
	}
	put16(f, 4);
	put8(f, KMEMTRACE_FEAT_CONTEXT);
	put8(f, 0);
	if (slab) {
		put16(f, 11);
		put8(f, KMEMTRACE_FEAT_CACHE);
		put64(f, cache);
	}
}

static FILE *caches;

static void cache_line(const char *dir, unsigned long long id, unsigned int osize,
		       unsigned int size, const char *name)
{
	char path[4096];

	if (!caches) {
		snprintf(path, sizeof(path), "%s/caches", dir);
		caches = fopen(path, "w");
		if (!caches) {
			perror(path);
			exit(1);
		}
		fprintf(caches, "# id object_size size name\n");
	}
	fprintf(caches, "%llu %u %u %s\n", id, osize, size, name);
}

static FILE *open_cpu(const char *dir, int c)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu%d", dir, c);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

/* -n: a storm of pairs, each object freed 1024 allocations later. */
#define STORM_ALLOC_SITE	0xffffffff81100000ULL
#define STORM_FREE_SITE		0xffffffff81200000ULL
#define STORM_PTR		0xffff888000000000ULL
#define STORM_CACHE		1000	/* + the object size: kmalloc-<size>'s id */

static int storm(const char *dir, FILE **cpu, long long pairs)
{
	char name[32];
	long long i;
	int seq = 0;

	for (i = 64; i <= 4096; i += 64) {
		snprintf(name, sizeof(name), "kmalloc-%lld", i);
		cache_line(dir, STORM_CACHE + i, i, i, name);
	}
	for (i = 0; i < pairs + 1024; i++) {
		if (i < pairs) {
			unsigned long long req = 16 + (i * 7919) % 4000;

			write_event(cpu[i & 1], true, KMEMTRACE_TYPE_KMALLOC, seq,
				    STORM_ALLOC_SITE + 16 * (i % 64),
				    STORM_PTR + 4096 * (i % 1048576), req, (req + 63) & ~63ULL,
				    1000ULL * seq, STORM_CACHE + ((req + 63) & ~63ULL));
			seq++;
		}
		if (i >= 1024) {
			long long j = i - 1024;
			unsigned long long req = 16 + (j * 7919) % 4000;

			write_event(cpu[(i >> 1) & 1], false, KMEMTRACE_TYPE_KMALLOC, seq,
				    STORM_FREE_SITE + 16 * (j % 64),
				    STORM_PTR + 4096 * (j % 1048576), 0, 0, 1000ULL * seq,
				    STORM_CACHE + ((req + 63) & ~63ULL));
			seq++;
		}
	}
	return seq;
}

int main(int argc, char **argv)
{
	FILE *cpu[MAX_CPUS] = { NULL }, *meta, *syms = NULL;
	char line[512], path[4096];
	const char *dir;
	int seq = 0, ncpus = 0, lineno = 0, i, a;
	long long pairs = -1;
	int word_size = 64;

	while ((i = getopt(argc, argv, "1sw:n:")) != -1) {
		switch (i) {
		case '1':
			abi1 = true;
			break;
		case 's':
			kmt_swap = true;
			break;
		case 'w':
			word_size = atoi(optarg);
			break;
		case 'n':
			pairs = atoll(optarg);
			break;
		default:
			word_size = 0;	/* usage */
			break;
		}
	}
	a = optind;
	if (a + 1 != argc || (pairs != -1 && pairs < 1) || (word_size != 32 && word_size != 64)) {
		fprintf(stderr, "usage: kmtgen [-1] [-s] [-w 32|64] DIR < SCENARIO | %s\n",
			"kmtgen [-1] [-s] [-w 32|64] -n PAIRS DIR");
		return 2;
	}
	dir = argv[a];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	if (pairs > 0) {
		cpu[0] = open_cpu(dir, 0);
		cpu[1] = open_cpu(dir, 1);
		ncpus = 2;
		seq = storm(dir, cpu, pairs);
	}
	while (pairs < 0 && fgets(line, sizeof(line), stdin)) {
		char op[16], type[16], name[256], *cp;
		unsigned long long site, ptr, req, alloc, t, cache = 0;
		unsigned int osize, size;
		int c, n, ty;
		bool is_alloc;

		lineno++;
		if (line[0] == '#' || line[strspn(line, " \t")] == '\n')
			continue;
		if (sscanf(line, "sym %llx %255s", &site, name) == 2) {
			if (!syms) {
				snprintf(path, sizeof(path), "%s/kallsyms", dir);
				syms = fopen(path, "w");
				if (!syms) {
					perror(path);
					return 1;
				}
			}
			fprintf(syms, "%0*llx T %s\n", word_size / 4, site, name);
			continue;
		}
		if (sscanf(line, "cache %llu %u %u %255[^\n]", &site, &osize, &size, name) == 4) {
			cache_line(dir, site, osize, size, name);
			continue;
		}
		cp = strstr(line, " c=");
		if (cp) {
			cache = strtoull(cp + 3, NULL, 10);
			*cp = '\0';
		}
		n = sscanf(line, "%d %15s %15s %llx %llx %llu %llu %llu", &c, op, type, &site, &ptr,
			   &req, &alloc, &t);
		is_alloc = !strcmp(op, "alloc");
		ty = type_of(type);
		if (n < 5 || c < 0 || c >= MAX_CPUS || ty < 0 ||
		    (!is_alloc && strcmp(op, "free")) || (is_alloc && n < 7) ||
		    (!is_alloc && n > 6)) {
			fprintf(stderr, "kmtgen: line %d: not an event: %s", lineno, line);
			return 2;
		}
		if (!is_alloc && n == 6)
			t = req;
		else if (n < (is_alloc ? 8 : 6))
			t = 1000ULL * seq;
		while (ncpus <= c) {
			cpu[ncpus] = open_cpu(dir, ncpus);
			ncpus++;
		}
		write_event(cpu[c], is_alloc, ty, seq, site, ptr, req, alloc, t, cache);
		seq++;
	}
	for (i = 0; i < ncpus; i++) {
		if (fclose(cpu[i])) {
			perror("kmtgen: close");
			return 1;
		}
	}
	if (syms)
		fclose(syms);
	if (caches && fclose(caches)) {
		perror("kmtgen: caches");
		return 1;
	}

	snprintf(path, sizeof(path), "%s/meta", dir);
	meta = fopen(path, "w");
	if (!meta) {
		perror(path);
		return 1;
	}
	{
		const __u16 one = 1;
		bool little = *(const unsigned char *)&one;

		fprintf(meta, "# synthetic capture written by kmtgen\n");
		fprintf(meta, "abi_version %d\nendianness %s\n", abi1 ? 1 : KMEMTRACE_ABI_VERSION,
			little != kmt_swap ? "little" : "big");
	}
	fprintf(meta, "word_size %d\nkernel_release synthetic\ncpus %d\ncpu_files", word_size,
		ncpus);
	for (i = 0; i < ncpus; i++)
		fprintf(meta, " cpu%d", i);
	fprintf(meta, "\nstart_seq 0\nstart_lost_events 0\nfinished 1\n");
	fprintf(meta, "drain_seq %d\nend_seq %d\nend_lost_events 0\ncomplete 1\nstopped 1\n", seq,
		seq);
	fprintf(meta, "symbols %s\n", syms ? "kallsyms" : "none");
	fclose(meta);
	return 0;
}
