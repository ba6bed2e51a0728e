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
 * kmemtrace-check exits through kmt_die() when meta is bad or a CPU file
 * cannot be read: here exit() jumps back to the harness, which closes
 * any file the tool left open and frees the one block the tool then
 * holds, its table of sequence numbers (kmt_slurp() and kmt_read_meta()
 * free their buffers before they return an error).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/compiler.h>
#include <linux/kmemtrace.h>

static jmp_buf fuzz_env;

/* The tool's exit(): back to LLVMFuzzerTestOneInput(). */
static void __noreturn fuzz_exit(int status)
{
	longjmp(fuzz_env, status ? status : 1);
}

/* The files the tool has open. */
#define FUZZ_MAX_FILES	4
static FILE *fuzz_files[FUZZ_MAX_FILES];

static FILE *fuzz_fopen(const char *path, const char *mode)
{
	FILE *f = fopen(path, mode);
	int i;

	if (!f)
		return NULL;
	for (i = 0; i < FUZZ_MAX_FILES; i++) {
		if (!fuzz_files[i]) {
			fuzz_files[i] = f;
			return f;
		}
	}
	abort();
}

static int fuzz_fclose(FILE *f)
{
	int i;

	for (i = 0; i < FUZZ_MAX_FILES; i++)
		if (fuzz_files[i] == f)
			fuzz_files[i] = NULL;
	return fclose(f);
}

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

static char dir[4096];

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static const char *const file_names[] = { "meta", "cpu0", "cpu1" };

static void remove_dir(void)
{
	char path[4200];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(file_names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, file_names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	const char *tmp = getenv("TMPDIR");

	/* The report goes nowhere; its code runs all the same. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	snprintf(dir, sizeof(dir), "%s/fuzz_check.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
	return 0;
}

/* DIR/@name holds the @len bytes at @data; @data NULL: no such file. */
static void put_file(const char *name, const uint8_t *data, size_t len)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!data) {
		if (unlink(path) && errno != ENOENT)
			abort();
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd))
		abort();
}

/* Everything kmemtrace-check leaves behind, as it was before its main(). */
static void reset(void)
{
	int i;

	for (i = 0; i < FUZZ_MAX_FILES; i++) {
		if (fuzz_files[i]) {
			fclose(fuzz_files[i]);
			fuzz_files[i] = NULL;
		}
	}
	free(seen);
	seen = NULL;
	nseen = 0;
	seen_cap = 0;
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
	put_file("meta", data, metalen);
	data += metalen;
	size -= metalen;
	if (flags & 2 && size >= 2) {
		len0 = data[0] | data[1] << 8;
		data += 2;
		size -= 2;
		if (len0 > size)
			len0 = size;
		put_file("cpu0", data, len0);
		put_file("cpu1", data + len0, size - len0);
	} else {
		put_file("cpu0", data, size);
		put_file("cpu1", NULL, 0);
	}

	argv[argc++] = "kmemtrace-check";
	if (flags & 1)
		argv[argc++] = "-v";
	argv[argc++] = dir;
	argv[argc] = NULL;
	optind = 0;	/* getopt_long() from the start */
	if (!setjmp(fuzz_env))
		check_main(argc, argv);
	fflush(stdout);
	reset();
	return 0;
}
