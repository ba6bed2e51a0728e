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
 * that many bytes of cpu0, the rest being cpu1, each read through
 * fmemopen() as the tool reads a file, and merged by sequence number.
 * The reader stops at the first event it cannot decode, as the tool
 * does (with an error); the report is made of what came before.
 */
#define main report_main
#include "../kmemtrace-report.c"
#undef main

#include <sys/mman.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* The reports go nowhere; their code runs all the same. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
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
		load_symbols(path);
		load_cache_names(path);
	}
	close(fd);
}

/* CPU file @cpu: @len bytes at @data (fmemopen() wants at least one). */
static void open_input(int cpu, const uint8_t *data, size_t len)
{
	static const uint8_t none;
	struct input *in = &inputs[ninputs++];

	snprintf(in->path, sizeof(in->path), "cpu%d", cpu);
	in->cpu = cpu;
	in->f = fmemopen((void *)(len ? data : &none), len ? len : 1, "rb");
	if (!in->f)
		abort();
	if (!len)
		fgetc(in->f);	/* at the end: an empty file */
	in->buf = xcalloc(1, READ_CHUNK);
	in->first = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t symlen, len0;
	int flags, i;
	bool other;

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

	swap = other;
	if (flags & 2 && size >= 2) {
		len0 = data[0] | data[1] << 8;
		data += 2;
		size -= 2;
		if (len0 > size)
			len0 = size;
		open_input(0, data, len0);
		open_input(1, data + len0, size - len0);
	} else {
		open_input(0, data, size);
	}
	prime_inputs();
	analyse();
	for (i = 0; i < ninputs; i++) {
		fclose(inputs[i].f);
		free(inputs[i].buf);
		memset(&inputs[i], 0, sizeof(inputs[i]));
	}
	leaks();
	collect();
	emit_text(20);
	emit_json(-1);
	emit_csv(-1);
	emit_folded(-1);
	fflush(stdout);
	report_reset();
	return 0;
}
