/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading kmemtrace events (Documentation/ABI/testing/debugfs-kmemtrace)
 * from a byte stream, in either byte order, for kmemtraced,
 * kmemtrace-check, kmemtrace-report and any other reader of a capture.
 */
#ifndef KMT_EVENTS_H
#define KMT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/compiler.h>	/* tools/include's: __always_inline */
#include <linux/kmemtrace.h>

#define KMT_HDR_SIZE	((unsigned int)sizeof(struct kmemtrace_event))
#define KMT_ALLOC_SIZE	((unsigned int)sizeof(struct kmemtrace_alloc))
#define KMT_FEAT_SIZE	((unsigned int)sizeof(struct kmemtrace_feature))

/* One event, decoded to host order. */
struct kmt_event {
	uint8_t event_id;
	uint8_t type_id;
	uint16_t size;
	int32_t seq;
	__u64 call_site;
	__u64 ptr;
	/* Allocations only. */
	__u64 bytes_req;
	__u64 bytes_alloc;
	uint32_t gfp_flags;
	int32_t target_cpu;
	/* Feature records; has_* says which were there. */
	bool has_time, has_pid, has_node, has_ctx, has_cache;
	__u64 time;
	int32_t pid;
	int32_t node;
	uint8_t ctx;
	__u64 cache;	/* the slab cache's id (kmemtrace/caches), 0 for none */
	unsigned int unknown_features;
	/*
	 * A newer kernel's event or type id: only the header is decoded
	 * (the type's fields too if the event id is known), the rest is
	 * skipped by the event size as the ABI says.
	 */
	bool unknown;
};

static inline uint16_t kmt_get16(const unsigned char *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t kmt_get32(const unsigned char *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static inline __u64 kmt_get64(const unsigned char *p, bool swap)
{
	__u64 v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

/* The size of the event at @p, or 0 if fewer than 4 bytes are there. */
static inline unsigned int kmt_peek_size(const unsigned char *p, size_t avail, bool swap)
{
	if (avail < 4)
		return 0;
	return kmt_get16(p + 2, swap);
}

/*
 * Decodes the event at @p, @avail bytes available. Returns NULL and
 * the event, or a static string saying what is wrong with it. Inlined
 * always: in a reader's loop, with @swap a constant, the event can live
 * in registers.
 */
static __always_inline
const char *kmt_decode(const unsigned char *p, size_t avail, bool swap, struct kmt_event *e)
{
	unsigned int off, min;

	/* Inlined, the compiler drops the stores that the decoding repeats. */
	*e = (struct kmt_event){ 0 };
	if (avail < KMT_HDR_SIZE)
		return "truncated event header";
	e->event_id = p[0];
	e->type_id = p[1];
	e->size = kmt_get16(p + 2, swap);
	e->seq = (int32_t)kmt_get32(p + 4, swap);
	e->call_site = kmt_get64(p + 8, swap);
	e->ptr = kmt_get64(p + 16, swap);
	e->unknown = e->event_id > KMEMTRACE_EVENT_FREE || e->type_id > KMEMTRACE_TYPE_PAGES;
	min = KMT_HDR_SIZE + (e->event_id == KMEMTRACE_EVENT_ALLOC ? KMT_ALLOC_SIZE : 0);
	if (e->size < min)
		return "event size smaller than its mandatory fields";
	if (e->size > avail)
		return "truncated event";
	if (e->event_id > KMEMTRACE_EVENT_FREE)
		return NULL;
	off = KMT_HDR_SIZE;
	if (e->event_id == KMEMTRACE_EVENT_ALLOC) {
		e->bytes_req = kmt_get64(p + off, swap);
		e->bytes_alloc = kmt_get64(p + off + 8, swap);
		e->gfp_flags = kmt_get32(p + off + 16, swap);
		e->target_cpu = (int32_t)kmt_get32(p + off + 20, swap);
		off += KMT_ALLOC_SIZE;
	}
	while (off < e->size) {
		unsigned int fsize, id, len;
		const unsigned char *d;

		if (e->size - off < KMT_FEAT_SIZE)
			return "feature record header cut by the event size";
		fsize = kmt_get16(p + off, swap);
		id = p[off + 2];
		if (fsize < KMT_FEAT_SIZE || fsize > e->size - off)
			return "feature record size out of the event";
		d = p + off + KMT_FEAT_SIZE;
		len = fsize - KMT_FEAT_SIZE;
		switch (id) {
		case KMEMTRACE_FEAT_TIME:
			if (len != 8)
				return "time feature of the wrong size";
			e->has_time = true;
			e->time = kmt_get64(d, swap);
			break;
		case KMEMTRACE_FEAT_PID:
			if (len != 4)
				return "pid feature of the wrong size";
			e->has_pid = true;
			e->pid = (int32_t)kmt_get32(d, swap);
			break;
		case KMEMTRACE_FEAT_NODE:
			if (len != 4)
				return "node feature of the wrong size";
			e->has_node = true;
			e->node = (int32_t)kmt_get32(d, swap);
			break;
		case KMEMTRACE_FEAT_CONTEXT:
			if (len != 1)
				return "context feature of the wrong size";
			e->has_ctx = true;
			e->ctx = d[0];
			break;
		case KMEMTRACE_FEAT_CACHE:
			if (len != 8)
				return "cache feature of the wrong size";
			e->has_cache = true;
			e->cache = kmt_get64(d, swap);
			break;
		default:
			/* A newer kernel's: skipped, as the ABI says. */
			e->unknown_features++;
			break;
		}
		off += fsize;
	}
	return NULL;
}

/* b comes after a in a wrapping 32-bit sequence. */
static inline bool kmt_seq_after(int32_t b, int32_t a)
{
	return (int32_t)((uint32_t)b - (uint32_t)a) > 0;
}

#endif /* KMT_EVENTS_H */
