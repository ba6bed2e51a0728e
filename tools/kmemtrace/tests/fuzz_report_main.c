// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_report_main - a libFuzzer harness for kmemtrace-report's main()
 * (report_run(), all of main() but the making and freeing of the
 * report, which the harness does): its options, the capture directory
 * it reads (meta and the CPU files meta names, kallsyms, caches) and
 * every report format, on arbitrary bytes. fuzz_report.c drives the
 * reader and the analysis directly.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -pthread \
 *	-I tools/include -isystem usr/include -o fuzz_report_main fuzz_report_main.c
 *   ./fuzz_report_main CORPUS_DIR	fuzz
 *   ./fuzz_report_main FILE...		replay
 *
 * Input: one flags byte (bits 0-1: --format text, json, csv or folded;
 * bit 2: --sizes; bit 3: two CPU files; bit 4: --top=-1; bit 5:
 * --sort=live; bit 6: --cpu=1; bit 7: --window=0:0.5), one byte of
 * length and the argument of --site (not given if 0; a length of 128 or
 * more is that less 128 bytes of an argument of --top instead, which
 * may be a bad one: usage, exit 2), then three times
 * two bytes of length (little endian) and the text of meta, kallsyms
 * and caches (a length of 0: no such file), then the bytes of cpu0, or
 * with bit 3 two bytes of length, that many bytes of cpu0, the rest
 * being cpu1. The files are written to a directory of their own (under
 * $TMPDIR, or /tmp), which the tool's main() reads as it reads any
 * capture.
 *
 * kmemtrace-report exits through die() when meta or a CPU file cannot
 * be read or is corrupt (on its main thread, once the reader thread is
 * joined): here exit() jumps back to the harness, which closes the CPU
 * files and frees their buffers and what the analysis holds, and puts
 * the options back (report_reset(), which closes the capture and makes
 * the report new).
 */
#include <getopt.h>
#include <limits.h>

/* 0 done, 1 events lost or errors found, 2 usage or I/O, 3 corrupt. */
#define FUZZ_STATUS_MAX	3
#include "fuzz_tool.h"

#define exit(status)		fuzz_exit(status)
#define fopen(path, mode)	fuzz_fopen(path, mode)
#define fclose(f)		fuzz_fclose(f)
#define main			report_main
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"	/* as the tools' Makefile */
#include "../kmemtrace-report.c"
#pragma GCC diagnostic pop
#undef main
#undef fclose
#undef fopen
#undef exit

static const char *const file_names[] = { "meta", "kallsyms", "caches", "cpu0", "cpu1" };

/* The report main() would make, the harness's here: reachable after an exit(). */
static struct report rep;

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	fuzz_init_dir("fuzz_report_main", file_names, ARRAY_SIZE(file_names));
	report_init(&rep);
	return 0;
}

/* What kmemtrace-report leaves behind, as it was before its main(). */
static void reset(void)
{
	fuzz_close_all();
	/* Whether report_run() returned or exited: the report new again. */
	report_reset(&rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = { "text", "json", "csv", "folded" };
	static char format[16], site[256], top[160];
	const uint8_t *p;
	size_t len, len0;
	char *argv[16];
	int flags, argc = 0;
	bool is_top;

	if (size < 2)
		return 0;
	flags = data[0];
	len = data[1];
	data += 2;
	size -= 2;
	is_top = len >= 128;
	if (is_top)
		len -= 128;
	if (len > size)
		len = size;
	memcpy(is_top ? top : site, data, len);
	(is_top ? top : site)[len] = '\0';
	data += len;
	size -= len;
	argv[argc++] = "kmemtrace-report";
	snprintf(format, sizeof(format), "--format=%s", formats[flags & 3]);
	argv[argc++] = format;
	if (flags & 4)
		argv[argc++] = "--sizes";
	if (flags & 16)
		argv[argc++] = "--top=-1";
	if (flags & 32)
		argv[argc++] = "--sort=live";
	if (flags & 64)
		argv[argc++] = "--cpu=1";
	if (flags & 128)
		argv[argc++] = "--window=0:0.5";
	if (len) {
		argv[argc++] = is_top ? "--top" : "--site";
		argv[argc++] = is_top ? top : site;
	}
	argv[argc++] = fuzz_dir;
	argv[argc] = NULL;

	p = fuzz_take(&data, &size, 2, &len);
	fuzz_put_file("meta", len ? p : NULL, len);
	p = fuzz_take(&data, &size, 2, &len);
	fuzz_put_file("kallsyms", len ? p : NULL, len);
	p = fuzz_take(&data, &size, 2, &len);
	fuzz_put_file("caches", len ? p : NULL, len);
	if (flags & 8) {
		p = fuzz_take(&data, &size, 2, &len0);
		fuzz_put_file("cpu0", p, len0);
		fuzz_put_file("cpu1", data, size);
	} else {
		fuzz_put_file("cpu0", data, size);
		fuzz_put_file("cpu1", NULL, 0);
	}

	optind = 0;	/* getopt_long() from the start */
	FUZZ_RUN(report_run(&rep, argc, argv));
	fflush(stdout);
	reset();
	return 0;
}
