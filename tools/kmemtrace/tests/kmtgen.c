// SPDX-License-Identifier: GPL-2.0
/*
 * kmtgen - write a kmemtraced capture, exactly as the ABI lays it out,
 * from a scripted scenario, for the host tests of kmemtrace-report.
 *
 *   kmtgen [-1] [-s] [-w BITS] DIR < SCENARIO
 *   kmtgen [-1] [-s] [-w BITS] -n PAIRS [-c FILES] DIR
 *
 * -1 writes ABI version 1, the 2008 layout without feature records (no
 * time stamps, no caches); -s writes the other byte order (and says so
 * in meta); -w 32 says the capture is a 32-bit machine's (the fields are
 * 64-bit all the same). -n writes PAIRS kmalloc()/kfree() pairs from 64
 * call sites instead, each object freed 1024 allocations later, for
 * benchmarks: on FILES CPUs (-c, default 2, up to 8192), in runs of 1
 * to 32 events on one CPU picked at random (a fixed seed), as CPUs
 * record in bursts; a GiB takes a few seconds. SCENARIO has one
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmt_put.h"

#define MAX_CPUS	64	/* of a scenario */
#define MAX_STORM_CPUS	8192	/* of -n */

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

/* Fields into a buffer, in the capture's byte order. */
static unsigned char *b16(unsigned char *p, __u16 v)
{
	v = kmt_swap ? __builtin_bswap16(v) : v;
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

static unsigned char *b32(unsigned char *p, __u32 v)
{
	v = kmt_swap ? __builtin_bswap32(v) : v;
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

static unsigned char *b64(unsigned char *p, __u64 v)
{
	v = kmt_swap ? __builtin_bswap64(v) : v;
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

/* One event at @buf, as the ABI lays it out; its size. */
static unsigned int encode_event(unsigned char *buf, bool is_alloc, int ty, int seq,
				 unsigned long long site, unsigned long long ptr,
				 unsigned long long req, unsigned long long alloc,
				 unsigned long long t, unsigned long long cache)
{
	bool slab = ty != KMEMTRACE_TYPE_PAGES;
	unsigned char *p = buf;

	*p++ = is_alloc ? KMEMTRACE_EVENT_ALLOC : KMEMTRACE_EVENT_FREE;
	*p++ = ty;
	if (abi1)
		p = b16(p, is_alloc ? 48 : 24);
	else
		p = b16(p, (is_alloc ? 77 : 46) + (slab ? 11 : 0));
	p = b32(p, seq);
	p = b64(p, site);
	p = b64(p, ptr);
	if (is_alloc) {
		p = b64(p, req);
		p = b64(p, alloc);
		p = b32(p, 0xcc0);
		p = b32(p, -1);
	}
	if (abi1)
		return p - buf;
	p = b16(p, 11);
	*p++ = KMEMTRACE_FEAT_TIME;
	p = b64(p, t);
	p = b16(p, 7);
	*p++ = KMEMTRACE_FEAT_PID;
	p = b32(p, 1);
	if (is_alloc) {
		p = b16(p, 7);
		*p++ = KMEMTRACE_FEAT_NODE;
		p = b32(p, -1);
	}
	p = b16(p, 4);
	*p++ = KMEMTRACE_FEAT_CONTEXT;
	*p++ = 0;
	if (slab) {
		p = b16(p, 11);
		*p++ = KMEMTRACE_FEAT_CACHE;
		p = b64(p, cache);
	}
	return p - buf;
}

static void write_event(FILE *f, bool is_alloc, int ty, int seq, unsigned long long site,
			unsigned long long ptr, unsigned long long req, unsigned long long alloc,
			unsigned long long t, unsigned long long cache)
{
	unsigned char buf[128];

	put_raw(f, buf, encode_event(buf, is_alloc, ty, seq, site, ptr, req, alloc, t, cache));
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

static int ncpus_hint;

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
	/* Large buffers for a few files, small ones for many. */
	setvbuf(f, NULL, _IOFBF, ncpus_hint > 16 ? 32 << 10 : 1 << 20);
	return f;
}

/* -n: a storm of pairs, each object freed 1024 allocations later. */
#define STORM_ALLOC_SITE	0xffffffff81100000ULL
#define STORM_FREE_SITE		0xffffffff81200000ULL
#define STORM_PTR		0xffff888000000000ULL
#define STORM_CACHE		1000	/* + the object size: kmalloc-<size>'s id */

/* xorshift64*: the storm's CPUs, the same on every run. */
static __u64 storm_rand(void)
{
	static __u64 x = 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x * 0x2545f4914f6cdd1dULL;
}

/* The CPU of the next event: runs of 1 to 32 events on one CPU. */
static int storm_cpu(int ncpus)
{
	static int cpu, left;
	__u64 r;

	if (!left) {
		r = storm_rand();
		cpu = (r >> 8) % ncpus;
		left = 1 + (r & 31);
	}
	left--;
	return cpu;
}

static int storm(const char *dir, FILE **cpu, int ncpus, long long pairs)
{
	unsigned char buf[128];
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

			put_raw(cpu[storm_cpu(ncpus)], buf,
				encode_event(buf, true, KMEMTRACE_TYPE_KMALLOC, seq,
					     STORM_ALLOC_SITE + 16 * (i % 64),
					     STORM_PTR + 4096 * (i % 1048576), req,
					     (req + 63) & ~63ULL, 1000ULL * seq,
					     STORM_CACHE + ((req + 63) & ~63ULL)));
			seq++;
		}
		if (i >= 1024) {
			long long j = i - 1024;
			unsigned long long req = 16 + (j * 7919) % 4000;

			put_raw(cpu[storm_cpu(ncpus)], buf,
				encode_event(buf, false, KMEMTRACE_TYPE_KMALLOC, seq,
					     STORM_FREE_SITE + 16 * (j % 64),
					     STORM_PTR + 4096 * (j % 1048576), 0, 0, 1000ULL * seq,
					     STORM_CACHE + ((req + 63) & ~63ULL)));
			seq++;
		}
	}
	return seq;
}

int main(int argc, char **argv)
{
	static FILE *cpu[MAX_STORM_CPUS];
	FILE *meta, *syms = NULL;
	char line[512], path[4096];
	const char *dir;
	int seq = 0, ncpus = 0, lineno = 0, i, a;
	long long pairs = -1;
	int word_size = 64, storm_cpus = 2;

	while ((i = getopt(argc, argv, "1sw:n:c:")) != -1) {
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
		case 'c':
			storm_cpus = atoi(optarg);
			break;
		default:
			word_size = 0;	/* usage */
			break;
		}
	}
	a = optind;
	if (a + 1 != argc || (pairs != -1 && pairs < 1) || (word_size != 32 && word_size != 64) ||
	    storm_cpus < 1 || storm_cpus > MAX_STORM_CPUS) {
		fprintf(stderr, "usage: kmtgen [-1] [-s] [-w 32|64] DIR < SCENARIO | %s\n",
			"kmtgen [-1] [-s] [-w 32|64] -n PAIRS [-c FILES] DIR");
		return 2;
	}
	dir = argv[a];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	if (pairs > 0) {
		struct rlimit rl;

		/* A file per CPU, all open at once. */
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)storm_cpus + 16) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		ncpus_hint = storm_cpus;
		for (ncpus = 0; ncpus < storm_cpus; ncpus++)
			cpu[ncpus] = open_cpu(dir, ncpus);
		seq = storm(dir, cpu, ncpus, pairs);
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
