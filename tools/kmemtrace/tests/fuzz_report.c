// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_report - a libFuzzer harness for kmemtrace-report's capture
 * reader: the event decoder of kmt_events.h, the analysis, the symbol
 * file parser and every output format, on arbitrary bytes.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -o fuzz_report fuzz_report.c
 *   ./fuzz_report CORPUS_DIR		fuzz
 *   ./fuzz_report FILE...		replay
 *
 * Input: one flags byte (bit 0: the other byte order), two bytes of
 * symbol text length (little endian), the symbol text (kallsyms format),
 * then the bytes of a CPU file. The reader stops at the first event it
 * cannot decode, as the tool stops there with an error.
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
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t symlen, off = 0;
	bool other;

	if (size < 3)
		return 0;
	other = data[0] & 1;
	symlen = data[1] | data[2] << 8;
	data += 3;
	size -= 3;
	if (symlen > size)
		symlen = size;
	symbols(data, symlen);
	data += symlen;
	size -= symlen;

	while (off < size) {
		struct kmt_event e;
		unsigned int n = kmt_peek_size(data + off, size - off, other);

		if (kmt_decode(data + off, size - off, other, &e) || !n)
			break;
		account(&e, e.seq & 1);
		off += n;
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
