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

#include <linux/kmon.h>

/* The little-endian unsigned integer of @n bytes at @p. */
static inline uint64_t kmon_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* The header's size, from its first byte: with the extended CPU or not. */
static inline size_t kmon_hdr_len(const unsigned char *rec)
{
	return KMON_HDR_SIZE + (rec[0] == KMON_CPU_EXT ? KMON_CPU_EXT_SIZE : 0);
}

/* The blob's size, from the header's first KMON_HDR_SIZE bytes. */
static inline size_t kmon_blob_len(const unsigned char *rec)
{
	return kmon_le(rec + 9, 2);
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
	*a = len >= 1 + (size_t)w ? kmon_le(blob + 1, w) : 0;
	*b = n == 2 && len >= *want ? kmon_le(blob + 1 + w, w) : 0;
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
	*pid = len >= 7 ? kmon_le(blob + 3, 4) : 0;
	return true;
}

#endif /* KMON_LOG_H */
