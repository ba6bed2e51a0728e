/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading /dev/kmon records (Documentation/trace/kmon.rst): shared by
 * kmonlog, kmonparse and the kmon kselftest. Every field is
 * little-endian whatever the machine.
 */
#ifndef KMON_LOG_H
#define KMON_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/kmon.h>

/*
 * The byte offsets of the fields, as Documentation/trace/kmon.rst and
 * <linux/kmon.h> lay them out: named once here for every reader.
 *
 * The record header (KMON_HDR_SIZE bytes; KMON_CPU_EXT_SIZE more, the
 * CPU, at KMON_HDR_SIZE when KMON_HB_CPU holds KMON_CPU_EXT):
 */
#define KMON_HB_CPU		0	/* 1 byte */
#define KMON_HB_TS		1	/* 8: CLOCK_MONOTONIC ns */
#define KMON_HB_LEN		9	/* 2: the blob's size */

/*
 * A KMON_DT_ALLOC blob (KMON_ALLOC_SIZE bytes) and a KMON_DT_FREE one
 * (KMON_FREE_SIZE), from the type byte at 0; "KMON_AB_ALLOCATED" is the
 * field the uapi comment calls "bytes allocated" (KMON_ALLOC_SIZE is the
 * blob's size).
 */
#define KMON_AB_TYPE		1	/* 1: enum kmemtrace_type_id, the allocator */
#define KMON_AB_CTX		2	/* 1: KMEMTRACE_CTX_* bits */
#define KMON_AB_PID		3	/* 4 */
#define KMON_AB_SITE		7	/* 8: the call site */
#define KMON_AB_PTR		15	/* 8: 0 for a failure */
#define KMON_AB_REQ		23	/* 8: bytes requested (allocation only) */
#define KMON_AB_ALLOCATED	31	/* 8: bytes allocated (allocation only) */
#define KMON_AB_GFP		39	/* 4: gfp flags (allocation only) */
#define KMON_AB_NODE		43	/* 2, signed: NUMA node, -1 any (allocation only) */
#define KMON_AB_CACHE		45	/* 8: the cache's kmemtrace id, of an allocation */
#define KMON_FB_CACHE		23	/* 8: the same, of a free */

/*
 * A scheduler blob (KMON_DT_TSKQUEUE to KMON_DT_TSKWAKEUP32): its PIDs,
 * of 2 or 4 bytes each (kmon_sched_blob() says which), from
 * KMON_SB_PID: the task, or the previous and the next, or the waker and
 * the woken.
 */
#define KMON_SB_PID		1

/* A KMON_DT_TEST blob: at least KMON_TB_SIZE_MIN bytes, then filler. */
#define KMON_TB_CTX		1	/* 1: KMON_CTX_* */
#define KMON_TB_SEQ		2	/* 4: the sequence number */
#define KMON_TB_SIZE_MIN	6

/* The little-endian unsigned integer of @n bytes at @p. */
static inline uint64_t kmon_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/*
 * The little-endian integers of 2, 4 and 8 bytes at @p, unaligned: one
 * load each where the compiler can (the decoders' hot paths).
 */
/* The log is little-endian; so is the host, or its fields are swapped. */
#define KMON_HOST_LE	(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

static inline uint16_t kmon_get16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return KMON_HOST_LE ? v : __builtin_bswap16(v);
}

static inline uint32_t kmon_get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return KMON_HOST_LE ? v : __builtin_bswap32(v);
}

static inline uint64_t kmon_get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return KMON_HOST_LE ? v : __builtin_bswap64(v);
}

/* The header's size, from its first byte: with the extended CPU or not. */
static inline size_t kmon_hdr_len(const unsigned char *rec)
{
	return KMON_HDR_SIZE + (rec[0] == KMON_CPU_EXT ? KMON_CPU_EXT_SIZE : 0);
}

/* The blob's size, from the header's first KMON_HDR_SIZE bytes. */
static inline size_t kmon_blob_len(const unsigned char *rec)
{
	return kmon_get16(rec + KMON_HB_LEN);
}

/* A PID of a scheduler blob, of @w bytes: 2 or 4. */
static inline uint32_t kmon_pid(const unsigned char *p, int w)
{
	return w == 2 ? kmon_get16(p) : kmon_get32(p);
}

/*
 * A scheduler blob: its kind (KMON_DT_TSKQUEUE to KMON_DT_TSKWAKEUP, the
 * 4-byte-PID types folded onto them), its PIDs (@b is 0 for QUE and
 * DEQ) and the size it must have. False if @blob is of another type.
 */
static inline bool kmon_sched_blob(const unsigned char *blob, size_t len, int *kind,
				   uint32_t *a, uint32_t *b, size_t *want)
{
	int w, n;

	if (!len || blob[0] < KMON_DT_TSKQUEUE || blob[0] > KMON_DT_TSKWAKEUP32)
		return false;
	*kind = (blob[0] - 1) % 4 + 1;
	w = blob[0] >= KMON_DT_TSKQUEUE32 ? 4 : 2;
	n = *kind >= KMON_DT_TSKSWITCH ? 2 : 1;
	*want = 1 + (size_t)w * n;
	*a = len >= KMON_SB_PID + (size_t)w ? kmon_pid(blob + KMON_SB_PID, w) : 0;
	*b = n == 2 && len >= *want ? kmon_pid(blob + KMON_SB_PID + w, w) : 0;
	return true;
}

/*
 * An allocation blob (KMON_DT_ALLOC, KMON_DT_FREE): its PID and the size
 * it must have. False if @blob is of another type.
 */
static inline bool kmon_alloc_blob(const unsigned char *blob, size_t len, uint32_t *pid,
				   size_t *want)
{
	if (!len || (blob[0] != KMON_DT_ALLOC && blob[0] != KMON_DT_FREE))
		return false;
	*want = blob[0] == KMON_DT_ALLOC ? KMON_ALLOC_SIZE : KMON_FREE_SIZE;
	*pid = len >= KMON_AB_PID + 4 ? kmon_get32(blob + KMON_AB_PID) : 0;
	return true;
}

/* The fields of an allocation or a free blob. */
struct kmon_alloc_fields {
	uint8_t kind;		/* KMON_DT_ALLOC or KMON_DT_FREE */
	uint8_t type;		/* enum kmemtrace_type_id */
	uint8_t ctx;		/* KMEMTRACE_CTX_* bits */
	uint32_t pid;
	uint64_t site, ptr;
	uint64_t req, allocated;	/* 0 for a free */
	uint32_t gfp;			/* 0 for a free */
	int16_t node;			/* 0 for a free */
	uint64_t cache;
};

/*
 * Decodes @blob, which kmon_alloc_blob() found to be an allocation or a
 * free of the size it must have, into @f.
 */
static inline void kmon_alloc_decode(const unsigned char *blob, struct kmon_alloc_fields *f)
{
	bool alloc = blob[0] == KMON_DT_ALLOC;

	f->kind = blob[0];
	f->type = blob[KMON_AB_TYPE];
	f->ctx = blob[KMON_AB_CTX];
	f->pid = kmon_get32(blob + KMON_AB_PID);
	f->site = kmon_get64(blob + KMON_AB_SITE);
	f->ptr = kmon_get64(blob + KMON_AB_PTR);
	f->req = alloc ? kmon_get64(blob + KMON_AB_REQ) : 0;
	f->allocated = alloc ? kmon_get64(blob + KMON_AB_ALLOCATED) : 0;
	f->gfp = alloc ? kmon_get32(blob + KMON_AB_GFP) : 0;
	f->node = alloc ? (int16_t)kmon_get16(blob + KMON_AB_NODE) : 0;
	f->cache = kmon_get64(blob + (alloc ? KMON_AB_CACHE : KMON_FB_CACHE));
}

#endif /* KMON_LOG_H */
