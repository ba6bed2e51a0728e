/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a kmemtraced capture as ONE stream of events in sequence
 * order, for kmemtrace-check and kmemtrace-report: meta (kmt_meta.h),
 * then every cpu<n> file it names, each read through a buffer of its
 * own, merged by a binary heap on the events' sequence numbers, with
 * the events lost counted on the way (kmt_loss.h).
 *
 * Memory stays flat in the capture's size and bounded in the number of
 * files: the buffers share a budget (KMT_CAP_BUDGET), each between
 * KMT_CAP_CHUNK_MIN and KMT_CAP_CHUNK_MAX bytes, and a buffer grows for
 * an event larger than it (up to the ABI's 64 KiB) and shrinks back
 * after it. Every file is open at once: kmt_want_files() raises the
 * open-file limit, or the open fails with a message naming it.
 *
 * Sequence numbers are 32 bits and wrap; they are unwrapped to 64 bits
 * around a reference, start_seq or else the first event of the first
 * file (in meta's order) that has one: a file's first event within
 * 2^31 of it, each later one after the one before it in its file. So
 * the merged stream is in increasing order, and a number in two files
 * comes out twice in a row.
 *
 * What is wrong with the capture is reported through c->on_error (as
 * it is found: a bad event, a number that does not follow the one
 * before it in its file, a number in two files), counted in c->nerrors,
 * the first one kept in c->error with its exit status (KMT_EXIT_CORRUPT,
 * or KMT_EXIT_USAGE for an I/O error, which ends the reading). A file
 * with a bad event or number is read no further; the others are, unless
 * c->stop_on_error. Messages name the file and the byte offset.
 *
 *   kmt_capture_open(&c, dir);		meta, the files, their first events
 *   while (kmt_capture_next(&c, &e, swap))	each event, c.cur its file
 *	...;
 *   c.loss					the events lost (kmt_loss.h)
 *   kmt_capture_close(&c);
 *
 * A first stop signal (kmt_cli.h) ends the stream early: c.partial.
 */
#ifndef KMT_CAPTURE_H
#define KMT_CAPTURE_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmt_cli.h"
#include "kmt_events.h"
#include "kmt_loss.h"
#include "kmt_meta.h"

/* Bytes of read buffers for all the files together, and per file. */
#ifndef KMT_CAP_BUDGET
#define KMT_CAP_BUDGET		(16u << 20)
#endif
#define KMT_CAP_CHUNK_MIN	(4u << 10)
#define KMT_CAP_CHUNK_MAX	(1u << 20)

/* One CPU file. */
struct kmt_cap_file {
	int fd;
	int cpu;
	const char *name;		/* meta's "cpu<n>" */
	unsigned char *buf;
	size_t cap;			/* bytes allocated at buf */
	size_t len, off;		/* bytes in buf, and consumed of them */
	unsigned long long file_off;	/* of buf[0] in the file */
	bool eof;			/* buf holds the file's last bytes */
	bool started;			/* an event was found: the next follows it */
	/* The next event: whole at buf + off, ev_size bytes, number seq. */
	unsigned int ev_size;
	__s64 seq;
};

/* The heap of the files with an event to come: the smallest number on top. */
struct kmt_cap_node {
	__s64 seq;
	unsigned int file;
};

struct kmt_capture {
	struct kmt_meta meta;
	const char *dir;
	struct kmt_cap_file *files;
	int nfiles;
	struct kmt_cap_node *heap;
	unsigned int nheap;
	size_t chunk;			/* buffer size per file */
	bool have_ref;
	int32_t ref;			/* the unwrapping's reference */
	unsigned long long file_bytes;	/* read from all the files */
	/* The event handed out last; its file moves on at the next call. */
	struct kmt_cap_file *cur;
	bool advance, have_last;
	__s64 last_seq;
	__u64 events;
	bool partial;			/* stopped by a signal */
	int dropped;			/* files read no further after an error */
	struct kmt_loss loss;
	/* Errors: set on_error, arg and stop_on_error before the open. */
	void (*on_error)(void *arg, int status, const char *msg);
	void *arg;
	bool stop_on_error;
	bool stopped;			/* by an error */
	unsigned long nerrors;
	int status;			/* of the first error */
	char error[PATH_MAX + 256];	/* the first error */
};

static void __printf(3, 4) kmt_cap_error(struct kmt_capture *c, int status, const char *fmt, ...)
{
	char msg[sizeof(c->error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!c->nerrors++) {
		memcpy(c->error, msg, sizeof(msg));
		c->status = status;
	}
	if (status == KMT_EXIT_USAGE)
		c->status = status;	/* an I/O error: the reading ends */
	if (c->stop_on_error || status == KMT_EXIT_USAGE)
		c->stopped = true;
	if (c->on_error)
		c->on_error(c->arg, status, msg);
}

/*
 * @why, what is wrong with the event at @f's byte offset @off, said
 * with the file's path; for a file's first event that reads well in the
 * other byte order, with that hint.
 */
static void kmt_cap_bad(struct kmt_capture *c, struct kmt_cap_file *f, const char *why)
{
	unsigned long long off = f->file_off + f->off;
	const char *hint = "";
	struct kmt_event e;

	if (!off && !kmt_decode(f->buf, f->len, !c->meta.swap, &e))
		hint = " (it reads as the other byte order: is meta's endianness right?)";
	kmt_cap_error(c, KMT_EXIT_CORRUPT, "%s/%s: offset %llu: %s%s", c->dir, f->name, off, why,
		      hint);
}

/*
 * Reads into @f's buffer, after what is left of it, until it holds
 * @need bytes or the file ends. -1 on an I/O error, reported; 1 when a
 * stop signal interrupts a read that waits (a CPU file may be a pipe).
 */
static int kmt_cap_fill(struct kmt_capture *c, struct kmt_cap_file *f, size_t need)
{
	size_t avail = f->len - f->off, want;
	unsigned char *nbuf;
	ssize_t r;

	memmove(f->buf, f->buf + f->off, avail);
	f->file_off += f->off;
	f->off = 0;
	f->len = avail;
	/* Grown for a large event, or back to its size once it is read. */
	want = need > c->chunk ? need : c->chunk;
	if (want > f->cap || (f->cap > c->chunk && want == c->chunk && avail <= c->chunk)) {
		nbuf = realloc(f->buf, want);
		if (!nbuf) {
			kmt_cap_error(c, KMT_EXIT_USAGE, "%s/%s: out of memory", c->dir, f->name);
			return -1;
		}
		f->buf = nbuf;
		f->cap = want;
	}
	do {
		r = read(f->fd, f->buf + f->len, f->cap - f->len);
		if (r < 0) {
			if (errno == EINTR && kmt_stop_requested)
				return 1;
			if (errno == EINTR)
				continue;
			kmt_cap_error(c, KMT_EXIT_USAGE, "%s/%s: offset %llu: %s", c->dir, f->name,
				      f->file_off + f->len, strerror(errno));
			return -1;
		}
		f->eof = !r;
		f->len += r;
		c->file_bytes += r;
	} while (f->len < need && !f->eof);
	return 0;
}

/*
 * Finds @f's next event, whole in the buffer, and its number. 1 if
 * there is one, 0 at the end of the file, -1 on an error (reported).
 */
static __always_inline int kmt_cap_find(struct kmt_capture *c, struct kmt_cap_file *f,
					const bool swap)
{
	const unsigned char *p;
	unsigned int size = 0;
	size_t avail;
	int32_t seq;
	int r;

	for (;;) {
		avail = f->len - f->off;
		p = f->buf + f->off;
		if (avail >= KMT_HDR_SIZE) {
			size = kmt_get16(p + 2, swap);
			if (size < KMT_HDR_SIZE || size <= avail)
				break;
		}
		if (f->eof) {
			if (!avail)
				return 0;
			break;
		}
		r = kmt_cap_fill(c, f, avail >= KMT_HDR_SIZE ? size : KMT_HDR_SIZE);
		if (r)
			return r < 0 ? -1 : 0;	/* an error, or a stop signal */
	}
	if (avail < KMT_HDR_SIZE || size < KMT_HDR_SIZE || size > avail) {
		struct kmt_event e;

		kmt_cap_bad(c, f, kmt_decode(p, avail, swap, &e) ?: "truncated event");
		c->dropped++;
		return -1;
	}
	seq = (int32_t)kmt_get32(p + 4, swap);
	if (!f->started) {
		if (!c->have_ref) {
			c->ref = seq;
			c->have_ref = true;
		}
		f->seq = (__s64)c->ref + (int32_t)((uint32_t)seq - (uint32_t)c->ref);
		f->started = true;
	} else {
		int32_t d = (int32_t)((uint32_t)seq - (uint32_t)f->seq);
		char why[64];

		if (d <= 0) {
			snprintf(why, sizeof(why), "seq %d does not follow %d", seq,
				 (int32_t)f->seq);
			kmt_cap_bad(c, f, why);
			c->dropped++;
			return -1;
		}
		f->seq += d;
	}
	f->ev_size = size;
	return 1;
}

static inline bool kmt_cap_less(const struct kmt_cap_node *a, const struct kmt_cap_node *b)
{
	return a->seq < b->seq || (a->seq == b->seq && a->file < b->file);
}

/* Moves heap node @i down to its place. */
static inline void kmt_cap_sift(struct kmt_capture *c, unsigned int i)
{
	struct kmt_cap_node *h = c->heap, x = h[i];
	unsigned int n = c->nheap, k;

	for (;;) {
		k = 2 * i + 1;
		if (k >= n)
			break;
		if (k + 1 < n && kmt_cap_less(&h[k + 1], &h[k]))
			k++;
		if (!kmt_cap_less(&h[k], &x))
			break;
		h[i] = h[k];
		i = k;
	}
	h[i] = x;
}

/* The file on top is read no further. */
static inline void kmt_cap_pop(struct kmt_capture *c)
{
	c->heap[0] = c->heap[--c->nheap];
	if (c->nheap)
		kmt_cap_sift(c, 0);
}

static void kmt_capture_close(struct kmt_capture *c)
{
	int i;

	for (i = 0; i < c->nfiles; i++) {
		if (c->files[i].fd >= 0)
			close(c->files[i].fd);
		free(c->files[i].buf);
	}
	free(c->files);
	free(c->heap);
	kmt_meta_free(&c->meta);
	c->files = NULL;
	c->heap = NULL;
	c->nfiles = 0;
	c->nheap = 0;
}

/*
 * Reads @dir/meta, opens every CPU file it names and finds each one's
 * first event. 0 if the events can be read (kmt_capture_next()), else
 * the exit status of what went wrong, said in c->error: KMT_EXIT_USAGE
 * for a file that cannot be opened or read, or too low a limit of open
 * files; KMT_EXIT_CORRUPT for a bad meta, or a bad first event with
 * c->stop_on_error. kmt_capture_close() frees it all, whichever.
 */
static int kmt_capture_open(struct kmt_capture *c, const char *dir)
{
	char err[PATH_MAX + 256], path[PATH_MAX];
	bool corrupt;
	rlim_t limit;
	int i, r;

	c->dir = dir;
	if (kmt_read_meta(dir, &c->meta, err, sizeof(err), &corrupt)) {
		kmt_cap_error(c, corrupt ? KMT_EXIT_CORRUPT : KMT_EXIT_USAGE, "%s", err);
		return c->status;
	}
	limit = kmt_want_files(c->meta.nfiles);
	if (limit) {
		kmt_cap_error(c, KMT_EXIT_USAGE, "%s: %d CPU files to read at once need %d %s, %s %llu %s",
			      dir, c->meta.nfiles, c->meta.nfiles + 16, "open files",
			      "but the hard limit of open files is", (unsigned long long)limit,
			      "(ulimit -Hn): raise it");
		return c->status;
	}
	c->chunk = KMT_CAP_BUDGET / c->meta.nfiles;
	if (c->chunk < KMT_CAP_CHUNK_MIN)
		c->chunk = KMT_CAP_CHUNK_MIN;
	if (c->chunk > KMT_CAP_CHUNK_MAX)
		c->chunk = KMT_CAP_CHUNK_MAX;
	c->files = calloc(c->meta.nfiles, sizeof(*c->files));
	c->heap = calloc(c->meta.nfiles, sizeof(*c->heap));
	if (!c->files || !c->heap) {
		kmt_cap_error(c, KMT_EXIT_USAGE, "%s: out of memory", dir);
		return c->status;
	}
	for (i = 0; i < c->meta.nfiles; i++) {
		struct kmt_cap_file *f = &c->files[c->nfiles++];

		f->name = c->meta.files[i];
		f->cpu = c->meta.cpus[i];
		f->fd = -1;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, f->name) >= sizeof(path)) {
			kmt_cap_error(c, KMT_EXIT_USAGE, "%.200s.../%s: name too long", dir,
				      f->name);
			return c->status;
		}
		f->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (f->fd < 0) {
			kmt_cap_error(c, KMT_EXIT_USAGE, "%s: %s", path, strerror(errno));
			return c->status;
		}
		f->cap = c->chunk;
		f->buf = malloc(f->cap);
		if (!f->buf) {
			kmt_cap_error(c, KMT_EXIT_USAGE, "%s: out of memory", path);
			return c->status;
		}
	}
	/* In meta's order: the first file with an event sets the reference. */
	if (c->meta.have_start) {
		c->ref = (int32_t)(uint32_t)c->meta.start_seq;
		c->have_ref = true;
	}
	for (i = 0; i < c->nfiles && !c->stopped; i++) {
		r = kmt_cap_find(c, &c->files[i], c->meta.swap);
		if (r > 0) {
			c->heap[c->nheap].seq = c->files[i].seq;
			c->heap[c->nheap++].file = i;
		}
	}
	if (c->stopped)
		return c->status;
	for (i = c->nheap / 2; i-- > 0;)
		kmt_cap_sift(c, i);
	kmt_loss_init(&c->loss, &c->meta, c->have_ref, c->ref);
	return 0;
}

/* Reports @why, what is wrong with the event kmt_capture_next() gave last. */
static __maybe_unused void __printf(2, 3)
kmt_capture_bad_event(struct kmt_capture *c, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	kmt_cap_bad(c, c->cur, why);
}

/*
 * The next event in sequence order into @e, @swap being meta's byte
 * order (a constant where the caller has two copies of its loop), its
 * file in c->cur. False at the end: of the events, at an error that
 * stops the reading (c->stopped), or at a stop signal (c->partial);
 * c->loss is then complete.
 */
static __always_inline bool kmt_capture_next(struct kmt_capture *c, struct kmt_event *e,
					     const bool swap)
{
	struct kmt_cap_file *f;
	const char *why;
	int r;

	for (;;) {
		if (c->advance) {
			c->advance = false;
			f = c->cur;
			f->off += f->ev_size;
			r = kmt_cap_find(c, f, swap);
			if (r > 0) {
				/*
				 * In a run of one CPU's events the file stays on
				 * top: the sift ends at its first comparison.
				 */
				c->heap[0].seq = f->seq;
				if (c->nheap > 1)
					kmt_cap_sift(c, 0);
			} else {
				kmt_cap_pop(c);
			}
		}
		if (c->stopped || !c->nheap || kmt_stop_requested) {
			c->partial = !c->stopped && kmt_stop_requested;
			kmt_loss_finish(&c->loss, c->partial || c->stopped);
			return false;
		}
		f = &c->files[c->heap[0].file];
		why = kmt_decode(f->buf + f->off, f->ev_size, swap, e);
		if (why) {
			kmt_cap_bad(c, f, why);
			c->dropped++;
			kmt_cap_pop(c);
			continue;
		}
		if (c->have_last && f->seq == c->last_seq)
			kmt_cap_error(c, KMT_EXIT_CORRUPT, "%s: seq %lld is in both %s and %s",
				      c->dir, (long long)f->seq, c->cur->name, f->name);
		c->have_last = true;
		c->last_seq = f->seq;
		kmt_loss_add(&c->loss, f->seq);
		c->events++;
		c->cur = f;
		c->advance = true;
		if (c->stopped)
			continue;	/* a duplicate, and the tool stops at errors */
		return true;
	}
}

#endif /* KMT_CAPTURE_H */
