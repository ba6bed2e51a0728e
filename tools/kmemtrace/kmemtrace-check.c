// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtrace-check - validate a kmemtrace capture and count its losses.
 *
 * Reads a directory written by kmemtraced (meta and cpu<n>) and checks
 * every event: ids, sizes, feature records, bytes allocated >= requested
 * > 0, sequence numbers increasing in each CPU file (with wraparound)
 * and unique across them. The sequence numbers missing from the union of
 * the files are the events the kernel lost; they are reported as ranges,
 * and for a complete capture (kmemtraced -e) compared with what the
 * kernel counted.
 *
 * Exit status: 0 clean, 1 lossy (events lost, none corrupt), 2 corrupt,
 * 3 the capture cannot be read or bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmt_events.h"

#define MAX_CPUS	1024
#define MAX_ERRORS	20

static const char *prog = "kmemtrace-check";
static bool verbose;
static unsigned long nerrors;

struct meta {
	int abi_version;
	bool swap;
	int word_size;
	bool complete;
	bool stopped;
	__u64 start_seq, end_seq;
	__u64 start_lost, end_lost;
	char files[MAX_CPUS][16];
	int nfiles;
};

/* Every event's unwrapped sequence number and its file. */
struct seen {
	__s64 seq;
	int file;
};

static struct seen *seen;
static size_t nseen, seen_cap;

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void corrupt(const char *fmt, ...)
{
	va_list ap;

	if (nerrors++ >= MAX_ERRORS)
		return;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t r;

		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap + 1);
			if (!buf)
				die(3, "out of memory reading %s", path);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f))
		die(3, "%s: %s", path, strerror(errno));
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static void read_meta(const char *dir, struct meta *m)
{
	const uint16_t one = 1;
	bool little_host = *(const uint8_t *)&one;
	char path[PATH_MAX], *text, *line, *save;
	bool have_endian = false, have_files = false;
	size_t len;

	snprintf(path, sizeof(path), "%s/meta", dir);
	text = (char *)slurp(path, &len);
	if (!text)
		die(3, "%s: %s (not a kmemtraced capture?)", path, strerror(errno));
	memset(m, 0, sizeof(*m));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64], val[256];

		if (line[0] == '#' || sscanf(line, "%63s %255[^\n]", key, val) != 2)
			continue;
		if (!strcmp(key, "abi_version")) {
			m->abi_version = atoi(val);
		} else if (!strcmp(key, "endianness")) {
			if (strcmp(val, "little") && strcmp(val, "big"))
				die(3, "%s: endianness \"%s\" is not little or big",
				    path, val);
			m->swap = !strcmp(val, "little") != little_host;
			have_endian = true;
		} else if (!strcmp(key, "word_size")) {
			m->word_size = atoi(val);
		} else if (!strcmp(key, "complete")) {
			m->complete = atoi(val) == 1;
		} else if (!strcmp(key, "stopped")) {
			m->stopped = atoi(val) == 1;
		} else if (!strcmp(key, "start_seq")) {
			m->start_seq = strtoull(val, NULL, 10);
		} else if (!strcmp(key, "end_seq")) {
			m->end_seq = strtoull(val, NULL, 10);
		} else if (!strcmp(key, "start_lost_events")) {
			m->start_lost = strtoull(val, NULL, 10);
		} else if (!strcmp(key, "end_lost_events")) {
			m->end_lost = strtoull(val, NULL, 10);
		} else if (!strcmp(key, "cpu_files")) {
			char *f, *s2;

			for (f = strtok_r(val, " ", &s2); f && m->nfiles < MAX_CPUS;
			     f = strtok_r(NULL, " ", &s2)) {
				if (strncmp(f, "cpu", 3) || strlen(f) > 10 || strchr(f, '/'))
					die(3, "%s: bad file name \"%s\" in cpu_files", path, f);
				snprintf(m->files[m->nfiles++], sizeof(m->files[0]), "%s", f);
			}
			have_files = true;
		}
	}
	free(text);
	if (!have_endian)
		die(3, "%s: no endianness line", path);
	if (!have_files || !m->nfiles)
		die(3, "%s: no cpu_files line", path);
	if (m->abi_version < 1)
		die(3, "%s: no abi_version line", path);
	if (m->abi_version > KMEMTRACE_ABI_VERSION)
		fprintf(stderr, "%s: capture ABI %d, tool ABI %d: unknown features skipped\n",
			prog, m->abi_version, KMEMTRACE_ABI_VERSION);
	if (m->word_size && m->word_size != 64)
		die(3, "%s: word size %d: only 64-bit captures are understood", path,
		    m->word_size);
}

static void add_seen(__s64 seq, int file)
{
	if (nseen == seen_cap) {
		seen_cap = seen_cap ? seen_cap * 2 : 1 << 16;
		seen = realloc(seen, seen_cap * sizeof(*seen));
		if (!seen)
			die(3, "out of memory");
	}
	seen[nseen].seq = seq;
	seen[nseen].file = file;
	nseen++;
}

static int cmp_seen(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct totals {
	__u64 events, allocs, frees, bytes;
	__u64 by_type[3];
};

/*
 * Checks one CPU file. @ref is the reference sequence number for
 * unwrapping: the first one of the first file with events.
 */
static void check_file(const char *dir, const struct meta *m, int fi, bool *have_ref,
		       int32_t *ref, struct totals *t)
{
	char path[PATH_MAX];
	unsigned char *buf;
	size_t len, off = 0;
	__s64 prev_u = 0;
	int32_t prev = 0;
	bool first = true;

	snprintf(path, sizeof(path), "%s/%s", dir, m->files[fi]);
	buf = slurp(path, &len);
	if (!buf)
		die(3, "%s: %s", path, strerror(errno));
	while (off < len) {
		struct kmt_event e;
		const char *why = kmt_decode(buf + off, len - off, m->swap, &e);
		__s64 u;

		if (why) {
			corrupt("%s: offset %zu: %s", path, off, why);
			break;
		}
		if (e.event_id == KMEMTRACE_EVENT_ALLOC) {
			if (e.bytes_req == 0)
				corrupt("%s: offset %zu: seq %d: requested bytes is 0", path, off,
					e.seq);
			else if (e.bytes_alloc < e.bytes_req)
				corrupt("%s: offset %zu: seq %d: allocated %llu < requested %llu",
					path, off, e.seq, e.bytes_alloc, e.bytes_req);
			t->allocs++;
		} else {
			t->frees++;
		}
		if (!*have_ref) {
			*ref = e.seq;
			*have_ref = true;
		}
		if (first) {
			u = (__s64)*ref + (int32_t)((uint32_t)e.seq - (uint32_t)*ref);
		} else {
			if (!kmt_seq_after(e.seq, prev))
				corrupt("%s: offset %zu: seq %d does not follow %d", path, off,
					e.seq, prev);
			u = prev_u + (int32_t)((uint32_t)e.seq - (uint32_t)prev);
		}
		add_seen(u, fi);
		first = false;
		prev = e.seq;
		prev_u = u;
		t->events++;
		t->by_type[e.type_id]++;
		off += e.size;
	}
	t->bytes += len;
	free(buf);
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: %s [-v] DIR\n"
		"Checks a kmemtraced capture in DIR and counts the events lost.\n"
		"  -v, --verbose   list every lost range, not only the first 20\n"
		"Exit status: 0 clean, 1 events lost, 2 corrupt, 3 unreadable or usage.\n",
		prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct totals t = { 0 };
	__u64 lost = 0, ranges = 0;
	bool have_ref = false;
	struct meta m;
	int32_t ref = 0;
	const char *dir;
	size_t i;
	int c, fi;

	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			help(stderr);
			return 3;
		}
	}
	if (optind + 1 != argc) {
		help(stderr);
		return 3;
	}
	dir = argv[optind];
	read_meta(dir, &m);
	for (fi = 0; fi < m.nfiles; fi++)
		check_file(dir, &m, fi, &have_ref, &ref, &t);

	qsort(seen, nseen, sizeof(*seen), cmp_seen);
	for (i = 1; i < nseen; i++) {
		__s64 a = seen[i - 1].seq, b = seen[i].seq;

		if (a == b) {
			corrupt("seq %lld is in both %s and %s", b,
				m.files[seen[i - 1].file], m.files[seen[i].file]);
		} else if (b > a + 1) {
			if (verbose || ranges < 20)
				printf("lost: seq %lld-%lld (%lld events)\n",
				       a + 1, b - 1, b - a - 1);
			ranges++;
			lost += b - a - 1;
		}
	}
	/*
	 * Tracing was off before the final drain: what was numbered after
	 * the last event captured, up to end_seq, was lost too.
	 */
	if (m.stopped && nseen) {
		__s64 last = seen[nseen - 1].seq;
		__u32 tail = (__u32)m.end_seq - (__u32)(last + 1);

		if (tail && tail < 0x80000000U) {
			if (verbose || ranges < 20)
				printf("lost: seq %lld-%lld (%u events, after the last captured)\n",
				       last + 1, last + tail, tail);
			ranges++;
			lost += tail;
		}
	}
	if (ranges > 20 && !verbose)
		printf("lost: ... %llu more ranges (-v lists them)\n", ranges - 20);

	printf("%llu events in %d files, %llu bytes\n", t.events, m.nfiles, t.bytes);
	printf("%llu allocations, %llu frees; kmalloc %llu, kmem_cache %llu, pages %llu\n",
	       t.allocs, t.frees, t.by_type[0], t.by_type[1], t.by_type[2]);
	if (nseen)
		printf("seq %lld to %lld: %llu events lost in %llu ranges\n",
		       seen[0].seq, seen[nseen - 1].seq, lost, ranges);

	/*
	 * A complete capture holds every event numbered from start_seq to
	 * end_seq - 1 that the kernel did not count as lost: the missing
	 * numbers there must be exactly what it counted.
	 */
	if (m.complete && !nerrors) {
		__u64 kernel = m.end_lost - m.start_lost, missing = 0, in = 0;
		/* Unwrapped like the events' numbers, around the first one. */
		__s64 lo = (__s64)ref + (int32_t)((uint32_t)m.start_seq - (uint32_t)ref);
		__s64 hi = lo + (__u32)((__u32)m.end_seq - (__u32)m.start_seq);

		for (i = 0; i < nseen; i++)
			if (seen[i].seq >= lo && seen[i].seq < hi)
				in++;
		if (hi >= lo)
			missing = (__u64)(hi - lo) - in;
		printf("capture complete: seq %lld to %lld, %llu missing, kernel lost %llu\n",
		       lo, hi - 1, missing, kernel);
		if (missing != kernel)
			corrupt("the capture misses %llu events but the kernel lost %llu",
				missing, kernel);
		lost = missing > lost ? missing : lost;
	}
	if (nerrors) {
		if (nerrors > MAX_ERRORS)
			fprintf(stderr, "%s: ... %lu more errors\n", prog, nerrors - MAX_ERRORS);
		printf("CORRUPT: %lu errors\n", nerrors);
		return 2;
	}
	if (lost) {
		printf("LOSSY: %llu events lost\n", lost);
		return 1;
	}
	printf("CLEAN\n");
	return 0;
}
