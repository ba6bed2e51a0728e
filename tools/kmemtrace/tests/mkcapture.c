// SPDX-License-Identifier: GPL-2.0
/*
 * mkcapture - write a synthetic kmemtrace capture, for the host tests of
 * kmemtraced and kmemtrace-check.
 *
 *   mkcapture DIR CASE
 *
 * writes DIR/meta, DIR/cpu0 and DIR/cpu1 (and, for "debugfs", a fake
 * kmemtrace debugfs directory for kmemtraced -d): 100 events numbered
 * 0-99, alternating between the CPUs, each allocation followed by its
 * free, with the flaw CASE names (see cases[] below).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kmt_put.h"

static bool debugfs;
static const char *flaw = "";

static void feature(FILE *f, unsigned int id, __u64 v, unsigned int len)
{
	put16(f, len + 3);
	put8(f, id);
	if (len == 8)
		put64(f, v);
	else if (len == 4)
		put32(f, v);
	else
		put8(f, v);
}

static void event(FILE *f, int id, __s32 seq, __u64 ptr, __u64 req, __u64 alloc)
{
	bool is_alloc = id == KMEMTRACE_EVENT_ALLOC;
	unsigned int size = is_alloc ? 77 : 46;

	if (!strcmp(flaw, "unknownfeat"))
		size += 5;
	/* A newer ABI's event: a header and 6 bytes the reader skips. */
	if (!strcmp(flaw, "unknownevent") && seq == 7) {
		put8(f, 5);
		put8(f, KMEMTRACE_TYPE_KMALLOC);
		put16(f, 30);
		put32(f, seq);
		put64(f, 0xffffffff81000000ULL + seq);
		put64(f, ptr);
		put(f, "\1\2\3\4\5\6", 6);
		return;
	}
	put8(f, id);
	put8(f, !strcmp(flaw, "unknowntype") && seq == 7 ? 9 : KMEMTRACE_TYPE_KMALLOC);
	put16(f, !strcmp(flaw, "badsize") && seq == 9 ? 12 : size);
	put32(f, seq);
	put64(f, 0xffffffff81000000ULL + seq);
	put64(f, ptr);
	if (is_alloc) {
		put64(f, req);
		put64(f, alloc);
		put32(f, 0xcc0);
		put32(f, -1);
	}
	feature(f, KMEMTRACE_FEAT_TIME, 1000 + seq, 8);
	feature(f, KMEMTRACE_FEAT_PID, 1, 4);
	if (is_alloc)
		feature(f, KMEMTRACE_FEAT_NODE, -1, 4);
	/* An id from a newer kernel, to be skipped by its size. */
	if (!strcmp(flaw, "unknownfeat")) {
		put16(f, 5);
		put8(f, 200);
		put16(f, 7);
	}
	feature(f, KMEMTRACE_FEAT_CONTEXT, 0, 1);
}

static const char * const cases[] = {
	"clean",	/* nothing wrong */
	"swapped",	/* clean, in the other byte order, and meta says so */
	"wrap",		/* clean, numbered across 2^31 */
	"lossy",	/* events 40-44 and 70 missing */
	"complete",	/* lossy and complete, the kernel counted the 6 */
	"miscount",	/* complete, but the kernel counted 5: corrupt */
	"tail",		/* stopped, and 10 more were numbered after the last */
	"trunc",	/* cpu1 cut in the middle of an event */
	"badsize",	/* event 9's size too small */
	"unknowntype",	/* event 7's type id from a newer ABI: skipped, clean */
	"unknownevent",	/* event 7's event id from a newer ABI: skipped, clean */
	"leftover",	/* 0-19 from before start_seq 20, with 5-9 missing: clean */
	"draintail",	/* drain_seq 90, 90-99 captured with 95-96 missing: clean */
	"headloss",	/* start_seq 0, 0-4 missing: lost before the first */
	"killed",	/* kmemtraced killed: meta has no end: clean */
	"zeroreq",	/* event 10 asks for 0 bytes */
	"lessalloc",	/* event 12 gets less than it asked for */
	"dupseq",	/* event 20 in both files */
	"backseq",	/* cpu0's numbers go back */
	"unknownfeat",	/* a feature id from a newer ABI: clean */
	"nometa",	/* no meta file */
	"abi0",		/* clean, but meta says abi_version 0 */
	"missedcpu",	/* cpu1 not captured (missed_cpus cpu1): its events lost */
	"dupkey",	/* meta says complete twice: corrupt */
	"lostback",	/* end_lost_events < start_lost_events: corrupt */
	"drainback",	/* drain_seq before start_seq: corrupt */
	"endback",	/* end_seq before start_seq: corrupt */
	"enddrain",	/* end_seq before drain_seq: corrupt */
	"debugfs",	/* a fake debugfs directory for kmemtraced -d */
	NULL
};

int main(int argc, char **argv)
{
	const char *dir;
	char path[4096];
	FILE *cpu[2], *meta;
	__s32 base = 0;
	int i, n = 100, lost = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: mkcapture DIR CASE\n");
		return 2;
	}
	dir = argv[1];
	flaw = argv[2];
	for (i = 0; cases[i] && strcmp(cases[i], flaw); i++)
		;
	if (!cases[i]) {
		fprintf(stderr, "mkcapture: unknown case %s\n", flaw);
		return 2;
	}
	kmt_swap = !strcmp(flaw, "swapped");
	debugfs = !strcmp(flaw, "debugfs");
	if (!strcmp(flaw, "wrap"))
		base = 0x7fffffff - 50;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/cpu%d", dir, i);
		cpu[i] = fopen(path, "wb");
		if (!cpu[i]) {
			perror(path);
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		__s32 seq = (__s32)((__u32)base + i);
		int c = (i / 2) % 2;
		__u64 ptr = 0xffff888000100000ULL + 64 * (i / 2);

		if ((!strcmp(flaw, "lossy") || !strcmp(flaw, "complete") ||
		     !strcmp(flaw, "miscount")) && ((i >= 40 && i < 45) || i == 70)) {
			lost++;
			continue;
		}
		if ((!strcmp(flaw, "leftover") && i >= 5 && i < 10) ||
		    (!strcmp(flaw, "draintail") && (i == 95 || i == 96)) ||
		    (!strcmp(flaw, "headloss") && i < 5))
			continue;
		if (!strcmp(flaw, "backseq") && i == 30)
			seq = 2;
		event(cpu[c], i % 2 ? KMEMTRACE_EVENT_FREE : KMEMTRACE_EVENT_ALLOC, seq, ptr,
		      !strcmp(flaw, "zeroreq") && i == 10 ? 0 : 100,
		      !strcmp(flaw, "lessalloc") && i == 12 ? 64 : 128);
		if (!strcmp(flaw, "dupseq") && i == 20)
			event(cpu[!c], KMEMTRACE_EVENT_ALLOC, seq, ptr, 100, 128);
	}
	if (!strcmp(flaw, "trunc"))
		put(cpu[1], "\0\0\x4d", 3);
	fclose(cpu[0]);
	fclose(cpu[1]);
	if (!strcmp(flaw, "nometa"))
		return 0;

	snprintf(path, sizeof(path), "%s/%s", dir, debugfs ? "abi_version" : "meta");
	meta = fopen(path, "w");
	if (!meta) {
		perror(path);
		return 1;
	}
	if (debugfs) {
		fprintf(meta, "%d\n", KMEMTRACE_ABI_VERSION);
		fclose(meta);
		snprintf(path, sizeof(path), "%s/stats", dir);
		meta = fopen(path, "w");
		if (!meta) {
			perror(path);
			return 1;
		}
		fprintf(meta, "events %d\nlost_events 0\nlost_bytes 0\n", n);
		fprintf(meta, "subbufs 4\nsubbuf_size 4096\n");
		fclose(meta);
		snprintf(path, sizeof(path), "%s/enable", dir);
		meta = fopen(path, "w");
		if (meta) {
			fprintf(meta, "0\n");
			fclose(meta);
		}
		return 0;
	}
	fprintf(meta, "# synthetic capture: %s\n", flaw);
	fprintf(meta, "abi_version %d\n", strcmp(flaw, "abi0") ? KMEMTRACE_ABI_VERSION : 0);
	{
		const __u16 one = 1;
		bool little = *(const unsigned char *)&one;

		fprintf(meta, "endianness %s\n", little != kmt_swap ? "little" : "big");
	}
	fprintf(meta, "word_size 64\nkernel_release synthetic\ncpus 2\ncpu_files cpu0%s\n",
		!strcmp(flaw, "missedcpu") ? "" : " cpu1");
	if (!strcmp(flaw, "missedcpu")) {
		fprintf(meta, "start_seq 0\nfinished 1\ndrain_seq %d\nend_seq %d\n", n, n);
		fprintf(meta, "missed_cpus cpu1\ncomplete 0\nstopped 1\n");
	} else if (!strcmp(flaw, "dupkey")) {
		fprintf(meta, "complete 0\ncomplete 1\n");
	} else if (!strcmp(flaw, "lostback")) {
		fprintf(meta, "start_seq 0\nend_seq %d\n", n);
		fprintf(meta, "start_lost_events 10\nend_lost_events 9\ncomplete 0\n");
	} else if (!strcmp(flaw, "drainback")) {
		/* 32-bit wrapping: 4294967290 is 6 before 0. */
		fprintf(meta, "start_seq 0\nfinished 1\ndrain_seq 4294967290\nend_seq %d\n", n);
		fprintf(meta, "complete 0\nstopped 1\n");
	} else if (!strcmp(flaw, "endback")) {
		fprintf(meta, "start_seq 50\nend_seq 40\ncomplete 0\nstopped 1\n");
	} else if (!strcmp(flaw, "enddrain")) {
		fprintf(meta, "start_seq 0\nfinished 1\ndrain_seq %d\nend_seq 90\n", n);
		fprintf(meta, "complete 0\nstopped 1\n");
	} else if (!strcmp(flaw, "complete") || !strcmp(flaw, "miscount")) {
		fprintf(meta, "start_seq 0\nend_seq %d\n", n);
		fprintf(meta, "start_lost_events 10\nend_lost_events %d\n",
			10 + lost - !strcmp(flaw, "miscount"));
		fprintf(meta, "complete 1\n");
	} else if (!strcmp(flaw, "leftover")) {
		fprintf(meta, "start_seq 20\nfinished 1\ndrain_seq %d\nend_seq %d\n", n, n);
		fprintf(meta, "complete 0\nstopped 1\n");
	} else if (!strcmp(flaw, "draintail")) {
		fprintf(meta, "start_seq 0\nfinished 1\ndrain_seq 90\nend_seq 120\n");
		fprintf(meta, "complete 0\nstopped 0\n");
	} else if (!strcmp(flaw, "headloss")) {
		fprintf(meta, "start_seq 0\nfinished 1\ndrain_seq %d\nend_seq %d\n", n, n);
		fprintf(meta, "complete 0\nstopped 1\n");
	} else if (!strcmp(flaw, "killed")) {
		fprintf(meta, "start_seq 0\nstart_lost_events 0\nfinished 0\n");
	} else if (!strcmp(flaw, "tail")) {
		fprintf(meta, "start_seq 0\nend_seq %d\ncomplete 0\nstopped 1\n", n + 10);
	} else {
		fprintf(meta, "complete 0\n");
	}
	fclose(meta);
	return 0;
}
