/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a kmemtraced capture's meta file (Documentation/trace/kmemtrace.rst),
 * for kmemtrace-check and kmemtrace-report.
 */
#ifndef KMT_META_H
#define KMT_META_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmt_events.h"

/*
 * What meta says. The CPU files are a list of any length (a machine may
 * have 8192 CPUs, and a capture holds a file per CPU that recorded), in
 * meta's order; kmt_meta_free() frees it.
 */
struct kmt_meta {
	int abi_version;
	/* 64, or 32: the event fields are 64 bits wide on either. */
	int word_size;
	bool swap;		/* the capture is in the other byte order */
	bool complete, stopped;
	bool have_start, have_drain, have_end;
	__u64 start_seq, drain_seq, end_seq;
	__u64 start_lost, end_lost;
	bool have_start_lost, have_end_lost;
	char **files;		/* "cpu<n>", nfiles of them */
	int *cpus;		/* n of each */
	int nfiles;
	/*
	 * missed_cpus: the CPUs whose files kmemtraced could not capture
	 * (open or read failure), sorted, each once; their events are lost.
	 */
	int *missed;
	int nmissed;
	/*
	 * end_reason: tracing that kmemtraced -e turned on was turned off
	 * by someone else, at off_seq; or writing the capture failed
	 * (cut): first cut_file, after cut_at bytes, with cut_error, when
	 * the next event was cut_seq and the kernel had lost cut_lost.
	 */
	bool turned_off, cut, have_cut_lost;
	__u64 off_seq, cut_at, cut_seq, cut_lost;
	const char *cut_file, *cut_error;
	char *text;		/* meta's text, which files[] point into */
};

static inline void kmt_meta_free(struct kmt_meta *m)
{
	free(m->files);
	free(m->cpus);
	free(m->missed);
	free(m->text);
	memset(m, 0, sizeof(*m));
}

/* The meta keys whose value is a decimal number, which the tools read. */
static inline bool kmt_meta_numeric(const char *key)
{
	static const char *const keys[] = {
		"abi_version", "word_size", "complete", "stopped", "start_seq", "drain_seq",
		"end_seq", "start_lost_events", "end_lost_events", "off_seq", "cut_at",
		"cut_seq", "cut_lost_events", NULL,
	};
	const char *const *k;

	for (k = keys; *k; k++)
		if (!strcmp(key, *k))
			return true;
	return false;
}

/*
 * The whole of @path, NUL-terminated, its length in *@len (if @len); NULL
 * with errno set if it cannot be read.
 */
static inline char *kmt_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL, *nbuf;
	size_t cap = 0, n = 0, r;
	int err;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nbuf;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r);
	if (ferror(f)) {
		err = errno ?: EIO;
		free(buf);
		fclose(f);
		errno = err;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/*
 * "cpu<n>" as the kernel names a CPU's file: n in decimal without a
 * leading zero (not "cpu01", CPU 1 a second time), at most @max; n in
 * *@n, or false.
 */
static inline bool kmt_cpu_name(const char *name, unsigned long long max,
				unsigned long long *n)
{
	const char *d = name + 3;
	unsigned long long v;
	char *end;

	if (strncmp(name, "cpu", 3) || !isdigit((unsigned char)*d) || (d[0] == '0' && d[1]))
		return false;
	errno = 0;
	v = strtoull(d, &end, 10);
	if (*end || errno || v > max)
		return false;
	*n = v;
	return true;
}

/* A kmemtrace cpu<n> file name, n at most INT_MAX, in *@cpu; or false. */
static inline bool kmt_cpu_file_name(const char *name, int *cpu)
{
	unsigned long long v;

	if (!kmt_cpu_name(name, INT_MAX, &v))
		return false;
	*cpu = v;
	return true;
}

static inline int kmt_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* Adds @name to m->files, growing the list as it must. */
static inline bool kmt_meta_add_file(struct kmt_meta *m, char *name, int cpu, int *cap)
{
	if (m->nfiles == *cap) {
		int ncap = *cap ? 2 * *cap : 64;
		char **nf = realloc(m->files, ncap * sizeof(*nf));
		int *nc;

		if (!nf)
			return false;
		m->files = nf;
		nc = realloc(m->cpus, ncap * sizeof(*nc));
		if (!nc)
			return false;
		m->cpus = nc;
		*cap = ncap;
	}
	m->files[m->nfiles] = name;
	m->cpus[m->nfiles++] = cpu;
	return true;
}

/* The name of a CPU file named twice in m->files, or NULL. */
static inline const char *kmt_meta_twice(struct kmt_meta *m)
{
	int *sorted = malloc((m->nfiles + 1) * sizeof(*sorted)), i, twice = -1;
	static char name[32];

	if (!sorted)
		return "(out of memory)";
	memcpy(sorted, m->cpus, m->nfiles * sizeof(*sorted));
	qsort(sorted, m->nfiles, sizeof(*sorted), kmt_cmp_int);
	for (i = 1; i < m->nfiles && twice < 0; i++)
		if (sorted[i] == sorted[i - 1])
			twice = sorted[i];
	free(sorted);
	if (twice < 0)
		return NULL;
	snprintf(name, sizeof(name), "cpu%d", twice);
	return name;
}

static inline int kmt_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The first key (in sort order) of the @n keys at @keys given twice, or
 * NULL: each key is said once by kmemtraced, and a meta that says one
 * twice (an edit, two metas joined) cannot be trusted to mean either.
 * Sorted, not compared pairwise: a meta may hold many keys.
 */
static inline const char *kmt_meta_key_twice(char **keys, size_t n)
{
	size_t i;

	if (n < 2)
		return NULL;	/* and keys may be NULL */
	qsort(keys, n, sizeof(*keys), kmt_cmp_str);
	for (i = 1; i < n; i++)
		if (!strcmp(keys[i], keys[i - 1]))
			return keys[i];
	return NULL;
}

/* Adds cpu<@cpu> to m->missed, growing it as it must. */
static inline bool kmt_meta_add_missed(struct kmt_meta *m, int cpu, int *cap)
{
	if (m->nmissed == *cap) {
		int ncap = *cap ? 2 * *cap : 16;
		int *nm = realloc(m->missed, ncap * sizeof(*nm));

		if (!nm)
			return false;
		m->missed = nm;
		*cap = ncap;
	}
	m->missed[m->nmissed++] = cpu;
	return true;
}

/* m->missed sorted, each CPU once (meta may name one twice: harmless). */
static inline void kmt_meta_sort_missed(struct kmt_meta *m)
{
	int i, n = 0;

	if (!m->nmissed)
		return;
	qsort(m->missed, m->nmissed, sizeof(*m->missed), kmt_cmp_int);
	for (i = 0; i < m->nmissed; i++)
		if (!n || m->missed[i] != m->missed[n - 1])
			m->missed[n++] = m->missed[i];
	m->nmissed = n;
}

/* Sequence numbers are 32 bits and wrap: is @b before @a? */
static inline bool kmt_seq_before(__u64 b, __u64 a)
{
	return (int32_t)((uint32_t)b - (uint32_t)a) < 0;
}

/*
 * Reads @dir/meta into @m. Returns NULL, or what is wrong with it in
 * @err, and in *@corrupt whether meta is there but wrong (a corrupt
 * capture) rather than missing or unreadable (an I/O error): the caller
 * exits with its own status. A newer ABI than the tool's is not an
 * error: unknown events and features are skipped by their size, as the
 * ABI says. On success kmt_meta_free() frees what @m holds; on an error
 * it holds nothing.
 */
static inline const char *kmt_read_meta(const char *dir, struct kmt_meta *m, char *err,
					size_t errlen, bool *corrupt)
{
	const uint16_t one = 1;
	bool little_host = *(const uint8_t *)&one, have_endian = false, have_files = false;
	bool have_abi = false;
	char path[PATH_MAX], *line, *save, **keys = NULL, **nkeys;
	size_t nkeys_used = 0, keys_cap = 0;
	const char *twice;
	int cap = 0, missed_cap = 0;

	memset(m, 0, sizeof(*m));
	*corrupt = false;
	if ((size_t)snprintf(path, sizeof(path), "%s/meta", dir) >= sizeof(path)) {
		snprintf(err, errlen, "%.200s...: name too long", dir);
		return err;
	}
	m->text = kmt_slurp(path, NULL);
	if (!m->text) {
		snprintf(err, errlen, "%s: %s (not a kmemtraced capture?)", path, strerror(errno));
		return err;
	}
	*corrupt = true;
	for (line = strtok_r(m->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64], *val;
		size_t klen = strcspn(line, " \r"), vlen;

		if (line[0] == '#' || !klen)
			continue;
		if (klen >= sizeof(key)) {
			snprintf(err, errlen,
				 "%s: \"%.64s...\" is not a meta line (key value)", path, line);
			goto bad;
		}
		memcpy(key, line, klen);
		key[klen] = '\0';
		/* The value in place: cpu_files has a name per CPU, of any length. */
		val = line + klen + strspn(line + klen, " ");
		/*
		 * The key in place too, for the check of keys given twice; a
		 * value that starts right after it (none, or a CR) becomes "".
		 */
		line[klen] = '\0';
		if (nkeys_used == keys_cap) {
			keys_cap = keys_cap ? 2 * keys_cap : 64;
			nkeys = realloc(keys, keys_cap * sizeof(*keys));
			if (!nkeys) {
				*corrupt = false;
				snprintf(err, errlen, "%s: out of memory", path);
				goto bad;
			}
			keys = nkeys;
		}
		keys[nkeys_used++] = line;
		/* Trailing blanks, and a CR from a copy through another system. */
		for (vlen = strlen(val); vlen && isspace((unsigned char)val[vlen - 1]); vlen--)
			val[vlen - 1] = '\0';
		if (!strcmp(key, "cpu_files")) {
			char *tok, *s2;
			int cpu;

			for (tok = strtok_r(val, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
				if (!kmt_cpu_file_name(tok, &cpu)) {
					snprintf(err, errlen, "%s: cpu_files: \"%.64s\" is %s",
						 path, tok,
						 "not a cpu<n> file name (n from 0 to INT_MAX)");
					goto bad;
				}
				if (!kmt_meta_add_file(m, tok, cpu, &cap)) {
					*corrupt = false;
					snprintf(err, errlen, "%s: out of memory", path);
					goto bad;
				}
			}
			have_files = true;
			continue;
		}
		if (!strcmp(key, "missed_cpus")) {
			char *tok, *s2;
			int cpu;

			for (tok = strtok_r(val, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
				if (!kmt_cpu_file_name(tok, &cpu)) {
					snprintf(err, errlen, "%s: missed_cpus: \"%.64s\" is %s",
						 path, tok, "not a cpu<n> name (n from 0 to INT_MAX)");
					goto bad;
				}
				if (!kmt_meta_add_missed(m, cpu, &missed_cap)) {
					*corrupt = false;
					snprintf(err, errlen, "%s: out of memory", path);
					goto bad;
				}
			}
			continue;
		}
		if (!*val)
			continue;	/* a key of a later kmemtraced, or none the tools read */
		if (kmt_meta_numeric(key)) {
			unsigned long long v;
			char *end;

			errno = 0;
			v = strtoull(val, &end, 10);
			if (!isdigit((unsigned char)*val) || *end || errno) {
				snprintf(err, errlen, "%s: %s \"%.64s\" is not a %s", path,
					 key, val, "decimal number");
				goto bad;
			}
			if (!strcmp(key, "abi_version")) {
				m->abi_version = v > INT_MAX ? INT_MAX : v;
				have_abi = true;
			} else if (!strcmp(key, "word_size")) {
				m->word_size = v > INT_MAX ? INT_MAX : v;
			} else if (!strcmp(key, "complete")) {
				m->complete = v == 1;
			} else if (!strcmp(key, "stopped")) {
				m->stopped = v == 1;
			} else if (!strcmp(key, "start_seq")) {
				m->start_seq = v;
				m->have_start = true;
			} else if (!strcmp(key, "drain_seq")) {
				m->drain_seq = v;
				m->have_drain = true;
			} else if (!strcmp(key, "end_seq")) {
				m->end_seq = v;
				m->have_end = true;
			} else if (!strcmp(key, "start_lost_events")) {
				m->start_lost = v;
				m->have_start_lost = true;
			} else if (!strcmp(key, "off_seq")) {
				m->off_seq = v;
			} else if (!strcmp(key, "cut_at")) {
				m->cut_at = v;
			} else if (!strcmp(key, "cut_seq")) {
				m->cut_seq = v;
			} else if (!strcmp(key, "cut_lost_events")) {
				m->cut_lost = v;
				m->have_cut_lost = true;
			} else {
				m->end_lost = v;
				m->have_end_lost = true;
			}
		} else if (!strcmp(key, "end_reason")) {
			/* "stop", or one a later kmemtraced gives: nothing to say. */
			m->turned_off = !strcmp(val, "tracing_off");
			m->cut = !strcmp(val, "write_error");
		} else if (!strcmp(key, "cut_file")) {
			m->cut_file = val;
		} else if (!strcmp(key, "cut_error")) {
			m->cut_error = val;
		} else if (!strcmp(key, "endianness")) {
			if (strcmp(val, "little") && strcmp(val, "big")) {
				snprintf(err, errlen, "%s: endianness \"%.64s\" is not %s", path,
					 val, "little or big");
				goto bad;
			}
			m->swap = !strcmp(val, "little") != little_host;
			have_endian = true;
		}
	}
	twice = kmt_meta_key_twice(keys, nkeys_used);
	if (twice) {
		snprintf(err, errlen, "%s: %.64s given twice", path, twice);
		goto bad;
	}
	if (!have_abi) {
		snprintf(err, errlen, "%s: no abi_version line", path);
		goto bad;
	}
	if (m->abi_version < 1) {
		snprintf(err, errlen, "%s: abi_version %d is not a kmemtrace ABI (%s)", path,
			 m->abi_version, "versions start at 1");
		goto bad;
	}
	if (!have_endian) {
		snprintf(err, errlen, "%s: no endianness line", path);
		goto bad;
	}
	if (!have_files) {
		snprintf(err, errlen, "%s: no cpu_files line", path);
		goto bad;
	}
	if (!m->nfiles) {
		snprintf(err, errlen, "%s: cpu_files names no file", path);
		goto bad;
	}
	twice = kmt_meta_twice(m);
	if (twice) {
		snprintf(err, errlen, "%s: %s twice in cpu_files", path, twice);
		goto bad;
	}
	if (m->word_size && m->word_size != 64 && m->word_size != 32) {
		snprintf(err, errlen, "%s: word_size %d is not 32 or 64", path, m->word_size);
		goto bad;
	}
	/* The numbers kmemtraced read in turn come in that order. */
	if (m->have_start_lost && m->have_end_lost && m->end_lost < m->start_lost) {
		snprintf(err, errlen, "%s: end_lost_events %llu is less than start_lost_events %llu",
			 path, (unsigned long long)m->end_lost, (unsigned long long)m->start_lost);
		goto bad;
	}
	if (m->have_start && m->have_drain && kmt_seq_before(m->drain_seq, m->start_seq)) {
		snprintf(err, errlen, "%s: drain_seq %llu is before start_seq %llu", path,
			 (unsigned long long)m->drain_seq, (unsigned long long)m->start_seq);
		goto bad;
	}
	if (m->have_start && m->have_end && kmt_seq_before(m->end_seq, m->start_seq)) {
		snprintf(err, errlen, "%s: end_seq %llu is before start_seq %llu", path,
			 (unsigned long long)m->end_seq, (unsigned long long)m->start_seq);
		goto bad;
	}
	if (m->have_drain && m->have_end && kmt_seq_before(m->end_seq, m->drain_seq)) {
		snprintf(err, errlen, "%s: end_seq %llu is before drain_seq %llu", path,
			 (unsigned long long)m->end_seq, (unsigned long long)m->drain_seq);
		goto bad;
	}
	kmt_meta_sort_missed(m);
	free(keys);
	return NULL;
bad:
	free(keys);
	kmt_meta_free(m);
	return err;
}

#endif /* KMT_META_H */
