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

#define KMT_MAX_FILES	4096

struct kmt_meta {
	int abi_version;
	/* 64, or 32: the event fields are 64 bits wide on either. */
	int word_size;
	bool swap;		/* the capture is in the other byte order */
	bool complete, stopped;
	bool have_start, have_drain, have_end;
	__u64 start_seq, drain_seq, end_seq;
	__u64 start_lost, end_lost;
	char files[KMT_MAX_FILES][16];
	int nfiles;
};

/* The meta keys whose value is a decimal number, which the tools read. */
static inline bool kmt_meta_numeric(const char *key)
{
	static const char *const keys[] = {
		"abi_version", "word_size", "complete", "stopped", "start_seq", "drain_seq",
		"end_seq", "start_lost_events", "end_lost_events", NULL,
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

/* "cpu<n>", n in decimal without leading zeros, shorter than @size. */
static inline bool kmt_cpu_file_name(const char *name, size_t size)
{
	const char *n = name + 3;

	return !strncmp(name, "cpu", 3) && *n && !(n[0] == '0' && n[1]) &&
	       strspn(n, "0123456789") == strlen(n) && strlen(name) < size;
}

/*
 * Reads @dir/meta into @m. Returns NULL, or what is wrong with it in
 * @err (the caller exits with its own status). A newer ABI than the
 * tool's is not an error: unknown events and features are skipped by
 * their size, as the ABI says.
 */
static inline const char *kmt_read_meta(const char *dir, struct kmt_meta *m, char *err,
					size_t errlen)
{
	const uint16_t one = 1;
	bool little_host = *(const uint8_t *)&one, have_endian = false, have_files = false;
	char path[PATH_MAX], *text, *line, *save;

	snprintf(path, sizeof(path), "%s/meta", dir);
	memset(m, 0, sizeof(*m));
	text = kmt_slurp(path, NULL);
	if (!text) {
		snprintf(err, errlen, "%s: %s (not a kmemtraced capture?)", path, strerror(errno));
		return err;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64], *val;
		size_t klen = strcspn(line, " "), vlen;

		if (line[0] == '#' || !klen || klen >= sizeof(key) || !line[klen])
			continue;
		memcpy(key, line, klen);
		key[klen] = '\0';
		/* The value in place: cpu_files has a name per CPU, of any length. */
		val = line + klen + strspn(line + klen, " ");
		/* Trailing blanks, and a CR from a copy through another system. */
		for (vlen = strlen(val); vlen && isspace((unsigned char)val[vlen - 1]); vlen--)
			val[vlen - 1] = '\0';
		if (!*val)
			continue;
		if (kmt_meta_numeric(key)) {
			unsigned long long v;
			char *end;

			errno = 0;
			v = strtoull(val, &end, 10);
			if (!isdigit((unsigned char)*val) || *end || errno) {
				snprintf(err, errlen, "%s: %s \"%.64s\" is not a number", path, key,
					 val);
				goto bad;
			}
			if (!strcmp(key, "abi_version")) {
				m->abi_version = v > INT_MAX ? INT_MAX : v;
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
			} else {
				m->end_lost = v;
			}
		} else if (!strcmp(key, "endianness")) {
			if (strcmp(val, "little") && strcmp(val, "big")) {
				snprintf(err, errlen, "%s: endianness \"%.64s\" is not %s", path,
					 val, "little or big");
				goto bad;
			}
			m->swap = !strcmp(val, "little") != little_host;
			have_endian = true;
		} else if (!strcmp(key, "cpu_files")) {
			char *tok, *s2;
			int i;

			for (tok = strtok_r(val, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2)) {
				if (m->nfiles == KMT_MAX_FILES) {
					snprintf(err, errlen, "%s: more than %d cpu files", path,
						 KMT_MAX_FILES);
					goto bad;
				}
				if (!kmt_cpu_file_name(tok, sizeof(m->files[0]))) {
					snprintf(err, errlen, "%s: \"%.64s\" is %s", path, tok,
						 "not a cpu<n> file name");
					goto bad;
				}
				for (i = 0; i < m->nfiles && strcmp(m->files[i], tok); i++)
					;
				if (i < m->nfiles) {
					snprintf(err, errlen, "%s: %s twice in cpu_files", path,
						 tok);
					goto bad;
				}
				snprintf(m->files[m->nfiles++], sizeof(m->files[0]), "%s", tok);
			}
			have_files = true;
		}
	}
	if (!have_endian) {
		snprintf(err, errlen, "%s: no endianness line", path);
		goto bad;
	}
	if (!have_files || !m->nfiles) {
		snprintf(err, errlen, "%s: no cpu_files line", path);
		goto bad;
	}
	if (m->abi_version < 1) {
		snprintf(err, errlen, "%s: no abi_version line", path);
		goto bad;
	}
	if (m->word_size && m->word_size != 64 && m->word_size != 32) {
		snprintf(err, errlen, "%s: word size %d is not 32 or 64", path, m->word_size);
		goto bad;
	}
	free(text);
	return NULL;
bad:
	free(text);
	return err;
}

#endif /* KMT_META_H */
