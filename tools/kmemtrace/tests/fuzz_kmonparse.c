// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_kmonparse - a libFuzzer harness for kmonparse: its reader of
 * /dev/kmon logs (the record headers, the extended CPU field, every blob
 * type) in both output formats, text and Perfetto JSON, and its pids.dat
 * parser, on arbitrary bytes.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-I tools/include -isystem usr/include -o fuzz_kmonparse fuzz_kmonparse.c
 *   ./fuzz_kmonparse CORPUS_DIR		fuzz
 *   ./fuzz_kmonparse FILE...		replay
 *
 * Input: one flags byte (bit 0: --format=perfetto, else text; bits 1-2:
 * -s 1, -s 3 or -s 1000000000 for 1 to 3, the default scale of 1000 for
 * 0; bit 3: -p with the pids.dat text), two bytes of pids.dat length
 * (little endian), the pids.dat text, then the bytes of the log; an
 * input too short for its header has empty files, and runs too, so that
 * every input of a corpus ends with a status. Both are written to
 * memfds, and kmonparse's main() opens them by their /proc/self/fd
 * path, as it opens any file.
 *
 * kmonparse exits through kmt_die() at the first bad record or pids.dat
 * line (status 3), after writing what it decoded: here exit() jumps back
 * to the harness, which closes the files the tool left open, frees its
 * getline() buffer and resets every file-scope variable of the tool, so
 * nothing leaks from one input to the next.
 */
#include <getopt.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <linux/kmon.h>

/*
 * kmonparse's statuses (kmt_cli.h): 0 done, 3 a corrupt or truncated log
 * or pids.dat, which inputs reach; 2 (bad usage, a file that cannot be
 * read) the harness's arguments and memfds never give, and 1 kmonparse
 * never uses: either aborts the run, as a crash would.
 */
#define FUZZ_STATUS_MAX	3
#include "fuzz_tool.h"

/*
 * kmt_cli.h before kmonparse.c: its stop signals are libFuzzer's, not
 * taken over at every input.
 */
#include "../kmt_cli.h"
#define kmt_catch_stop_signals()	do { } while (0)

/* load_pids()'s line buffer, until the tool frees it. */
static char *fuzz_line;

static ssize_t fuzz_getline(char **line, size_t *cap, FILE *f)
{
	ssize_t n = getline(line, cap, f);

	fuzz_line = *line;
	return n;
}

static void fuzz_free(void *p)
{
	if (p == fuzz_line)
		fuzz_line = NULL;
	free(p);
}

#define exit(status)		fuzz_exit(status)
#define fopen(path, mode)	fuzz_fopen(path, mode)
#define fclose(f)		fuzz_fclose(f)
#define getline(line, cap, f)	fuzz_getline(line, cap, f)
#define free(p)			fuzz_free(p)
#define main			kmonparse_main
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"	/* as the tools' Makefile */
#include "../kmonparse.c"
#pragma GCC diagnostic pop
#undef main
#undef kmt_catch_stop_signals
#undef free
#undef getline
#undef fclose
#undef fopen
#undef exit

static int pids_fd = -1, log_fd = -1;
static char pids_path[64], log_path[64];
static __typeof__(opt) opt_init;

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	fuzz_init();
	pids_fd = memfd_create("pids.dat", 0);
	log_fd = memfd_create("kmon.log", 0);
	if (pids_fd < 0 || log_fd < 0)
		abort();
	snprintf(pids_path, sizeof(pids_path), "/proc/self/fd/%d", pids_fd);
	snprintf(log_path, sizeof(log_path), "/proc/self/fd/%d", log_fd);
	opt_init = opt;
	return 0;
}

/* @fd's contents become the @len bytes at @data. */
static void fill(int fd, const uint8_t *data, size_t len)
{
	if (ftruncate(fd, 0) || pwrite(fd, data, len, 0) != (ssize_t)len)
		abort();
}

/* Everything kmonparse leaves behind, as it was before its main(). */
static void reset(void)
{
	size_t i;

	fuzz_close_all();
	/* Still set only if load_pids() exited. */
	free(fuzz_line);
	fuzz_line = NULL;
	for (i = 0; i < nnames; i++)
		free(names[i].name);
	free(names);
	names = NULL;
	nnames = 0;
	free(pidtab);
	pidtab = NULL;
	pidmask = 0;
	free(tracks);
	tracks = NULL;
	ntracks = 0;
	olen = 0;		/* written before any exit; here for certain */
	out_failed = false;
	opt = opt_init;
	first_event = true;
	path = "<stdin>";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const scales[] = { NULL, "1", "3", "1000000000" };
	char *argv[9];
	size_t pidlen;
	int flags, argc = 0;

	/* An input of fewer than 3 bytes: its flags if any, nothing else. */
	flags = size ? data[0] : 0;
	pidlen = size >= 3 ? data[1] | data[2] << 8 : 0;
	data += size < 3 ? size : 3;
	size -= size < 3 ? size : 3;
	if (pidlen > size)
		pidlen = size;
	fill(pids_fd, data, pidlen);
	fill(log_fd, data + pidlen, size - pidlen);

	argv[argc++] = "kmonparse";
	if (flags & 1)
		argv[argc++] = "--format=perfetto";
	if (flags >> 1 & 3) {
		argv[argc++] = "-s";
		argv[argc++] = scales[flags >> 1 & 3];
	}
	if (flags & 8) {
		argv[argc++] = "-p";
		argv[argc++] = pids_path;
	}
	argv[argc++] = log_path;
	argv[argc] = NULL;

	optind = 0;	/* getopt_long() from the start */
	FUZZ_RUN(kmonparse_main(argc, argv));
	if (fuzz_status == KMT_EXIT_DATA || fuzz_status == KMT_EXIT_USAGE) {
		fprintf(stderr, "fuzz: exit status %d, which no input can give kmonparse\n",
			fuzz_status);
		abort();
	}
	fflush(stdout);
	reset();
	return 0;
}
