/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmonparse.h - what kmonparse.c builds on: the output, buffered and
 * written whole or not at all, its number and JSON formatting; and
 * pids.dat, the task names kmonlog wrote, loaded and indexed by PID.
 */
#ifndef KMT_KMONPARSE_H
#define KMT_KMONPARSE_H

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/kmemtrace.h>

#include "kmon_log.h"
#include "kmt_cli.h"
#include "kmt_msg.h"

static const char *prog = "kmonparse";
static const char *path = "<stdin>";

static int out_drain(int status);

/*
 * The end, with the message: what was decoded before it is written
 * first, so that the output stops where the problem is.
 */
#define die_status(status, ...)	kmt_die(prog, out_drain(status), __VA_ARGS__)
/* A log or pids.dat that is not what its format says. */
#define corrupt(...)		die_status(KMT_EXIT_CORRUPT, __VA_ARGS__)
/* A file that cannot be opened or read, or no memory. */
#define fatal(...)		die_status(KMT_EXIT_USAGE, __VA_ARGS__)

/* ---- Output -------------------------------------------------------- */

/*
 * Everything decoded goes through obuf, written to standard output when
 * it is full, before a read that may block (a pipe) and at the end.
 * OUT_SLACK is more than the fixed fields of any record take; the names
 * of pids.dat, of any length, go through out_name().
 */
#define OUT_SIZE	(1 << 18)
#define OUT_SLACK	1024

static char obuf[OUT_SIZE];
static size_t olen;
static bool out_failed;

/* Writes @n bytes at @p to standard output: false (errno set) on error. */
static bool out_write(const char *p, size_t n)
{
	int fd = fileno(stdout);

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)	/* a stop signal: what was decoded is written */
				continue;
			return false;
		}
		p += w;
		n -= w;
	}
	return true;
}

/* Writes obuf out; a write error ends the run (exit 2). */
static void out_flush(void)
{
	if (olen && !out_write(obuf, olen)) {
		out_failed = true;
		olen = 0;
		kmt_die(prog, KMT_EXIT_USAGE, "<stdout>: %s", strerror(errno));
	}
	olen = 0;
}

/*
 * Before an exit with @status: obuf written. A write error is said too,
 * and makes the status 2: the output is not all that was decoded. errno
 * is kept for the message that follows.
 */
static int out_drain(int status)
{
	int err = errno;

	if (olen && !out_failed && !out_write(obuf, olen)) {
		out_failed = true;
		kmt_warn(prog, "<stdout>: %s", strerror(errno));
		status = KMT_EXIT_USAGE;
	}
	olen = 0;
	errno = err;
	return status;
}

/* Where the next @n bytes go; obuf is written out first if they do not fit. */
static inline char *out_room(size_t n)
{
	if (olen + n > OUT_SIZE)
		out_flush();
	return obuf + olen;
}

static inline void out_commit(char *p)
{
	olen = p - obuf;
}

/* The @n bytes at @s at @p, as long as they are: where the output goes on. */
static char *out_name(char *p, const char *s, size_t n)
{
	if (n <= OUT_SLACK) {
		out_commit(p);
		p = out_room(n + OUT_SLACK);
		memcpy(p, s, n);
		return p + n;
	}
	out_commit(p);
	out_flush();
	if (!out_write(s, n)) {
		out_failed = true;
		kmt_die(prog, KMT_EXIT_USAGE, "<stdout>: %s", strerror(errno));
	}
	return out_room(OUT_SLACK);
}

/* A string constant. */
#define PUT(p, s)	(memcpy((p), (s), sizeof(s) - 1), (p) += sizeof(s) - 1)

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* @v in decimal, as %llu and %u print it. */
static inline char *put_u64(char *p, uint64_t v)
{
	char tmp[20], *t = tmp + sizeof(tmp);
	size_t n;

	while (v >= 100) {
		t -= 2;
		memcpy(t, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		t -= 2;
		memcpy(t, digit_pairs + 2 * v, 2);
	} else {
		*--t = '0' + v;
	}
	n = tmp + sizeof(tmp) - t;
	memcpy(p, t, n);
	return p + n;
}

static inline char *put_s64(char *p, long long v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, -(unsigned long long)v);
	}
	return put_u64(p, v);
}

/* @v as %#llx prints it: "0x" and lower-case digits, but "0" for 0. */
static inline char *put_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	int n, i;

	if (!v) {
		*p++ = '0';
		return p;
	}
	n = (67 - __builtin_clzll(v)) / 4;
	*p++ = '0';
	*p++ = 'x';
	for (i = n - 1; i >= 0; i--, v >>= 4)
		p[i] = hex[v & 15];
	return p + n;
}

/*
 * @ns / 1000.0 as "%.3f" prints it (the Perfetto JSON's microseconds).
 * Below 8e15 ns (92 days) the double is within 0.0005 of the exact
 * quotient, which printf rounds back to it: the integer digits are
 * those. Above, the double itself is printed, rounded to thousandths
 * half to even as glibc does, from its exact binary value.
 */
static char *put_usec(char *p, uint64_t ns)
{
	uint64_t bits, m, n, rest, half;
	unsigned int f;
	double d;
	int e;

	if (__builtin_expect(ns < 8000000000000000ULL, 1)) {
		n = ns;
	} else {
		/*
		 * d = m * 2^e, m the 53 bits of the mantissa: d is from 8e12
		 * to 2^64 / 1000, below 2^55, so e is from -10 to 2. From 0,
		 * d is a whole number (of 64 bits at most); below, m * 1000
		 * fits in 64 bits, and is rounded to its whole part.
		 */
		d = ns / 1000.0;
		memcpy(&bits, &d, sizeof(bits));
		m = (bits & ((1ULL << 52) - 1)) | 1ULL << 52;
		e = (int)(bits >> 52 & 0x7ff) - 1075;
		if (e >= 0) {
			p = put_u64(p, m << e);
			PUT(p, ".000");
			return p;
		}
		n = m * 1000;
		rest = n & ((1ULL << -e) - 1);
		half = 1ULL << (-e - 1);
		n >>= -e;
		if (rest > half || (rest == half && (n & 1)))
			n++;
	}
	f = n % 1000;
	p = put_u64(p, n / 1000);
	*p++ = '.';
	memcpy(p, digit_pairs + 2 * (f / 10), 2);
	p[2] = '0' + f % 10;
	return p + 3;
}

/* ---- pids.dat ------------------------------------------------------ */

struct pidname {
	uint32_t pid;
	char *name;
};

static struct pidname *names;
static size_t nnames;

static int cmp_pidname(const void *a, const void *b)
{
	const struct pidname *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * The length of the valid UTF-8 sequence at @p (strict: no overlong
 * forms, surrogates or code points above U+10FFFF), 0 if there is none.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
		if (p[i] < lo || p[i] > hi)
			return 0;
	return n;
}

/*
 * "PID<TAB>COMMAND" lines, of any length; the name shown is the command
 * up to its first ';' (the arguments follow), with ',' and '=' made '_'
 * so that the text lines stay easy to split, '"' and '\\' too, and
 * control characters and bytes that are not UTF-8 made '?', so that it
 * is a JSON string as it is.
 */
static void load_pids(const char *file)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0, linecap = 0, n;
	FILE *f = fopen(file, "r");

	if (!f)
		fatal("%s: %s", file, strerror(errno));
	while (getline(&line, &linecap, f) >= 0) {
		char *tab = strchr(line, '\t'), *end, *p;
		unsigned long pid;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0])
			continue;
		pid = strtoul(line, &end, 10);
		if (!tab || end != tab || pid > UINT32_MAX)
			corrupt("%s: line %zu: not \"PID<tab>COMMAND\"", file, lineno);
		if (nnames == cap) {
			struct pidname *more;

			cap = cap ? 2 * cap : 256;
			more = realloc(names, cap * sizeof(*names));
			if (!more)
				fatal("out of memory");
			names = more;
		}
		tab[1 + strcspn(tab + 1, ";")] = '\0';
		for (p = tab + 1; *p; p += n) {
			n = utf8_len((unsigned char *)p);
			if (*p == ',' || *p == '=' || *p == '"' || *p == '\\')
				*p = '_';
			else if ((unsigned char)*p < 0x20 || *p == 0x7f || !n)
				*p = '?';
			if (!n)
				n = 1;
		}
		names[nnames].pid = pid;
		names[nnames].name = strdup(tab + 1);
		if (!names[nnames].name)
			fatal("out of memory");
		nnames++;
	}
	if (ferror(f))
		fatal("%s: %s", file, strerror(errno));
	free(line);
	fclose(f);
	if (nnames)	/* names is NULL for an empty file: no qsort(NULL, 0) */
		qsort(names, nnames, sizeof(*names), cmp_pidname);
}

/* The name pids.dat gives @pid (any of them if it gives several), or NULL. */
static const char *name_of(uint32_t pid)
{
	size_t lo = 0, hi = nnames;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (names[mid].pid == pid)
			return names[mid].name;
		if (names[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * What a record needs of a named PID, found by a hash of the PIDs of
 * pids.dat (twice as many slots as PIDs): the name and its length, and
 * how much of it a Perfetto label keeps.
 */
struct pidslot {
	const char *name;	/* NULL: a free slot */
	uint32_t pid;
	size_t len;		/* the name's bytes */
	size_t cut;		/* of those, the label's */
};

static struct pidslot *pidtab;
static size_t pidmask;

/* The label of a slice: "name (PID)" in at most LABEL_MAX - 1 bytes. */
#define LABEL_MAX	128

/* Every bit of @pid in the low ones, which the table's mask keeps. */
static uint32_t pid_hash(uint32_t pid)
{
	pid ^= pid >> 16;
	pid *= 0x45d9f3bU;
	pid ^= pid >> 16;
	return pid;
}

static void index_pids(void)
{
	size_t i, slots = 4;

	while (slots < 2 * nnames)
		slots *= 2;
	pidtab = calloc(slots, sizeof(*pidtab));
	if (!pidtab)
		fatal("out of memory");
	pidmask = slots - 1;
	for (i = 0; i < nnames; i++) {
		uint32_t pid = names[i].pid;
		const char *n = name_of(pid);	/* the one the lookup by halves finds */
		struct pidslot *s;
		char pidstr[16];
		size_t h, room, len = strlen(n);

		if (i && names[i - 1].pid == pid)
			continue;
		for (h = pid_hash(pid) & pidmask; pidtab[h].name; h = (h + 1) & pidmask)
			;
		s = &pidtab[h];
		s->name = n;
		s->pid = pid;
		s->len = len;
		/*
		 * The label's name is cut to leave room for " (PID)", at a
		 * UTF-8 character boundary: the JSON stays valid UTF-8.
		 */
		room = LABEL_MAX - snprintf(pidstr, sizeof(pidstr), "%u", pid) - 4;
		if (len > room) {
			len = room;
			while (len && ((unsigned char)n[len] & 0xc0) == 0x80)
				len--;
		}
		s->cut = len;
	}
}

static const struct pidslot *lookup(uint32_t pid)
{
	size_t h;

	if (!pidtab)
		return NULL;
	for (h = pid_hash(pid) & pidmask; pidtab[h].name; h = (h + 1) & pidmask)
		if (pidtab[h].pid == pid)
			return &pidtab[h];
	return NULL;
}

#endif /* KMT_KMONPARSE_H */
