// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_check - a libFuzzer harness for kmemtrace-check: its reader of a
 * capture's meta file (kmt_meta.h), of the CPU files and their events
 * (kmt_events.h) in either byte order, and its checks and accounting
 * of sequence numbers, on arbitrary bytes.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-I tools/include -isystem usr/include -o fuzz_check fuzz_check.c
 *   ./fuzz_check CORPUS_DIR		fuzz
 *   ./fuzz_check FILE...		replay
 *
 * Input: one flags byte (bit 0: -v; bit 1: two CPU files), two bytes of
 * meta length (little endian), the meta text, then the bytes of cpu0,
 * or with bit 1 two bytes of length (little endian), that many bytes of
 * cpu0, the rest being cpu1. The files are written to a directory of
 * their own (under $TMPDIR, or /tmp), which kmemtrace-check's main()
 * reads as it reads any capture: the CPU files it reads are those that
 * meta's cpu_files names, which may be missing.
 *
 * kmemtrace-check returns from its main() whatever the capture holds
 * (its reader, kmt_capture.h, reports errors, it does not exit): the
 * harness still closes what an exit() would have left open, the
 * capture's files and buffers (kmt_capture_close(), which may run
 * twice) and any FILE.
 */
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/types.h>

#include <linux/kmemtrace.h>

/* 0 clean, 1 events lost, 2 bad usage or an I/O error, 3 corrupt. */
#define FUZZ_STATUS_MAX	3
#include "fuzz_tool.h"

#define exit(status)		fuzz_exit(status)
#define fopen(path, mode)	fuzz_fopen(path, mode)
#define fclose(f)		fuzz_fclose(f)
#define main			check_main
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"	/* as the tools' Makefile */
#include "../kmemtrace-check.c"
#pragma GCC diagnostic pop
#undef main
#undef fclose
#undef fopen
#undef exit

static const char *const file_names[] = { "meta", "cpu0", "cpu1" };

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	fuzz_init_dir("fuzz_check", file_names, ARRAY_SIZE(file_names));
	return 0;
}

/* Everything kmemtrace-check leaves behind, as it was before its main(). */
static void reset(void)
{
	fuzz_close_all();
	kmt_capture_close(&c);
	memset(&c, 0, sizeof(c));
	nerrors = 0;
	verbose = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[4];
	size_t metalen, len0;
	int flags, argc = 0;

	if (size < 3)
		return 0;
	flags = data[0];
	metalen = data[1] | data[2] << 8;
	data += 3;
	size -= 3;
	if (metalen > size)
		metalen = size;
	fuzz_put_file("meta", data, metalen);
	data += metalen;
	size -= metalen;
	if (flags & 2 && size >= 2) {
		len0 = data[0] | data[1] << 8;
		data += 2;
		size -= 2;
		if (len0 > size)
			len0 = size;
		fuzz_put_file("cpu0", data, len0);
		fuzz_put_file("cpu1", data + len0, size - len0);
	} else {
		fuzz_put_file("cpu0", data, size);
		fuzz_put_file("cpu1", NULL, 0);
	}

	argv[argc++] = "kmemtrace-check";
	if (flags & 1)
		argv[argc++] = "-v";
	argv[argc++] = fuzz_dir;
	argv[argc] = NULL;
	optind = 0;	/* getopt_long() from the start */
	FUZZ_RUN(check_main(argc, argv));
	fflush(stdout);
	reset();
	return 0;
}
