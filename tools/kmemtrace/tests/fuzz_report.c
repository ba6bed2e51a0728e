// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_report - a libFuzzer harness for kmemtrace-report's capture
 * reader: the reader thread and its event decoder (kmt_events.h), the
 * analysis, the symbol and caches file parsers and every output format,
 * on arbitrary bytes.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -pthread \
 *	-I tools/include -isystem usr/include -o fuzz_report fuzz_report.c
 *   ./fuzz_report CORPUS_DIR		fuzz
 *   ./fuzz_report FILE...		replay
 *
 * Input: one flags byte (bit 0: the other byte order; bit 1: two CPU
 * files), two bytes of symbol text length (little endian), the symbol
 * text (kallsyms format, read as a caches file too), then the bytes of
 * a CPU file, or with bit 1 two bytes of length (little endian) and
 * that many bytes of cpu0, the rest being cpu1. The CPU files are
 * written to a directory of their own (under $TMPDIR, or /tmp) with a
 * meta that names them, and read by the capture reader the tool uses
 * (kmt_capture.h), merged by sequence number. The reader stops at the
 * first error, as the tool does; the report is made of what came before.
 */
#include <sys/mman.h>

/* The statuses of main(), which this harness does not run. */
#define FUZZ_STATUS_MAX	3
#include "fuzz_tool.h"

#define main report_main
#include "../kmemtrace-report.c"
#undef main

static const char *const file_names[] = { "meta", "cpu0", "cpu1" };

/* The report each input makes, new again after it (report_reset()). */
static struct report rep;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* The reports go nowhere; their code runs all the same. */
	fuzz_init_dir("fuzz_report", file_names, ARRAY_SIZE(file_names));
	report_init(&rep);
	return 0;
}

/* The symbol text through a file, as the tool reads it. */
static void symbols(const uint8_t *text, size_t len)
{
	char path[64];
	int fd = memfd_create("kallsyms", 0);

	if (fd < 0)
		return;
	if (write(fd, text, len) == (ssize_t)len) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		load_symbols(&rep, path);
		load_cache_names(&rep, path);
	}
	close(fd);
}

/* The capture's meta: the byte order, and the CPU files. */
static void put_meta(bool other, bool two)
{
	const uint16_t one = 1;
	bool little = *(const uint8_t *)&one != other;
	char text[128];
	int n;

	n = snprintf(text, sizeof(text), "abi_version %d\nendianness %s\ncpu_files cpu0%s\n",
		     KMEMTRACE_ABI_VERSION, little ? "little" : "big", two ? " cpu1" : "");
	fuzz_put_file("meta", (const uint8_t *)text, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t symlen, len0;
	bool other, two;
	int flags;

	if (size < 3)
		return 0;
	flags = data[0];
	other = flags & 1;
	symlen = data[1] | data[2] << 8;
	data += 3;
	size -= 3;
	if (symlen > size)
		symlen = size;
	symbols(data, symlen);
	data += symlen;
	size -= symlen;

	two = flags & 2 && size >= 2;
	put_meta(other, two);
	if (two) {
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
	rep.cap.stop_on_error = true;
	if (!kmt_capture_open(&rep.cap, fuzz_dir))
		analyse(&rep);
	leaks(&rep);
	collect(&rep);
	emit_text(&rep, 20);
	emit_json(&rep, -1);
	emit_csv(&rep, -1);
	emit_folded(&rep, -1);
	emit_json(&rep, 2);
	fflush(stdout);
	report_status(&rep);
	report_reset(&rep);
	return 0;
}
