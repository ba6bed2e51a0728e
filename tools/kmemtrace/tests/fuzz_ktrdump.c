// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ktrdump - a libFuzzer harness for ktrdump: its readers of a KTR
 * capture directory (the formats table and its escapes, the classes
 * file, the raw cpu<N> files and the strings of their entries), the
 * checks and printing of the formats' conversions, the merge of the
 * CPUs, --follow's single read and its account of the slots it lacks,
 * --console's reader of a dump in a console log, and the -m and -c
 * arguments, on arbitrary bytes.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	-I tools/include -isystem usr/include -o fuzz_ktrdump fuzz_ktrdump.c
 *   ./fuzz_ktrdump CORPUS_DIR		fuzz
 *   ./fuzz_ktrdump FILE...		replay
 *
 * Input: one flags byte (bit 0: -a; bit 1: -l; bit 2: -O; bit 3: -F,
 * which reads once, as when a stop signal came at once; bit 4: two CPU
 * files; either may be of either byte order; bit 5: --console of cpu0's
 * bytes as a console log, without -a, -l, -F, -C and the directory),
 * two bytes of length (little endian) and the formats file, two bytes
 * of length and the classes file (none if 0), one byte of length and
 * the argument of -C (not given if 0), one byte of length and that of
 * -c (not given if 0), then the bytes of cpu0, or with bit 4 two bytes
 * of length, that many bytes of cpu0, the rest being cpu1. The files
 * are written to a directory of their own (under $TMPDIR, or /tmp),
 * which ktrdump's main() reads as it reads any capture.
 *
 * ktrdump exits at the first bad line or entry, through kmt_die() or
 * exit(): here exit() jumps back to the harness. What the tool then
 * still holds, the harness frees: it keeps the set of the tool's heap
 * blocks and open files and directories (the allocation functions,
 * fopen() and opendir() are wrapped by macros) and releases them all.
 * After a run that does not exit, it frees the tool's globals only and
 * forgets the rest, which LeakSanitizer then reports as leaked.
 */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/types.h>

#include <linux/ktr.h>

/*
 * 0 done; 1 the data has a problem (--follow: slots missed or entries
 * dropped); 2 bad usage or an I/O error; 3 corrupt input.
 */
#define FUZZ_STATUS_MAX	3
#include "fuzz_tool.h"

/*
 * The tool's heap blocks: a set of pointers, open addressing with
 * linear probing, in memory of the harness's own.
 */
static void **heap;
static size_t heap_cap = 1024, heap_n;

static size_t heap_slot(const void *p)
{
	return ((uintptr_t)p * 0x9e3779b97f4a7c15ULL >> 32) & (heap_cap - 1);
}

static void heap_add(void *p)
{
	size_t i;

	if (2 * (heap_n + 1) > heap_cap) {
		void **old = heap;
		size_t n = heap_cap;

		heap_cap *= 2;
		heap = calloc(heap_cap, sizeof(*heap));
		if (!heap)
			abort();
		heap_n = 0;
		for (i = 0; i < n; i++)
			if (old[i])
				heap_add(old[i]);
		free(old);
	}
	for (i = heap_slot(p); heap[i]; i = (i + 1) & (heap_cap - 1))
		;
	heap[i] = p;
	heap_n++;
}

static void heap_del(void *p)
{
	size_t i, j, k;

	for (i = heap_slot(p); heap[i] != p; i = (i + 1) & (heap_cap - 1))
		if (!heap[i])
			return;		/* not the tool's */
	/* Moves back what follows in the run, unless it sits at its slot. */
	for (j = i;;) {
		j = (j + 1) & (heap_cap - 1);
		if (!heap[j])
			break;
		k = heap_slot(heap[j]);
		if (i <= j ? i < k && k <= j : i < k || k <= j)
			continue;
		heap[i] = heap[j];
		i = j;
	}
	heap[i] = NULL;
	heap_n--;
}

static void *fuzz_tracked(void *p)
{
	if (p)
		heap_add(p);
	return p;
}

static __maybe_unused void *fuzz_malloc(size_t n)
{
	return fuzz_tracked(malloc(n));
}

static void *fuzz_calloc(size_t n, size_t size)
{
	return fuzz_tracked(calloc(n, size));
}

static void *fuzz_realloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (p && (q || !n))
		heap_del(p);
	return fuzz_tracked(q);
}

static void fuzz_free(void *p)
{
	if (p)
		heap_del(p);
	free(p);
}

static char *fuzz_strdup(const char *s)
{
	return fuzz_tracked(strdup(s));
}

static char *fuzz_strndup(const char *s, size_t n)
{
	return fuzz_tracked(strndup(s, n));
}

#undef strdup
#undef strndup
#define exit(status)		fuzz_exit(status)
#define malloc(n)		fuzz_malloc(n)
#define calloc(n, size)		fuzz_calloc(n, size)
#define realloc(p, n)		fuzz_realloc(p, n)
#define free(p)			fuzz_free(p)
#define strdup(s)		fuzz_strdup(s)
#define strndup(s, n)		fuzz_strndup(s, n)
#define fopen(path, mode)	fuzz_fopen(path, mode)
#define fclose(f)		fuzz_fclose(f)
#define opendir(path)		fuzz_opendir(path)
#define closedir(d)		fuzz_closedir(d)
#define main			ktrdump_main
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"	/* as the tools' Makefile */
#include "../ktrdump.c"
#pragma GCC diagnostic pop
#undef main
#undef closedir
#undef opendir
#undef fclose
#undef fopen
#undef strndup
#undef strdup
#undef free
#undef realloc
#undef calloc
#undef malloc
#undef exit

static __typeof__(opt) opt_init;

static const char *const file_names[] = { "formats", "classes", "cpu0", "cpu1" };

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	fuzz_init_dir("fuzz_ktrdump", file_names, ARRAY_SIZE(file_names));
	/* ktrdump writes its listing to descriptor 1 with write(2): nowhere too. */
	if (dup2(fileno(stdout), STDOUT_FILENO) < 0)
		abort();
	heap = calloc(heap_cap, sizeof(*heap));
	if (!heap)
		abort();
	opt_init = opt;
	return 0;
}

/* A NUL-terminated copy of @len bytes at @p, cut at the first NUL. */
static void arg(char *buf, const uint8_t *p, size_t len)
{
	memcpy(buf, p, len);
	buf[len] = '\0';
}

/*
 * Everything ktrdump leaves behind, as it was before its main(). If it
 * exited, every block it still holds is freed.
 */
static void reset(bool exited)
{
	unsigned int i;

	fuzz_close_all();
	if (exited) {
		for (i = 0; i < heap_cap; i++)
			free(heap[i]);
	} else {
		for (i = 0; i < nfmts; i++) {
			fuzz_free(fmts[i].file);
			fuzz_free(fmts[i].text);
		}
		fuzz_free(fmts);
		for (i = 0; i < NR_CLASSES; i++)
			fuzz_free(class_names[i]);
	}
	/* What is left leaked: LeakSanitizer is to find it unreferenced. */
	memset(heap, 0, heap_cap * sizeof(*heap));
	heap_n = 0;
	fmts = NULL;
	nfmts = 0;
	memset(class_names, 0, sizeof(class_names));
	opt = opt_init;
	kmt_stop_requested = 0;
	obuf.len = 0;	/* what an exit() left unwritten */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char classes[256], cpus[256], console[sizeof(fuzz_dir) + 16];
	struct sigaction intr, term, epipe;
	const uint8_t *p;
	char *argv[12];
	int flags, argc = 0;
	size_t len, len0;

	if (size < 1)
		return 0;
	flags = data[0];
	data++;
	size--;
	p = fuzz_take(&data, &size, 2, &len);
	fuzz_put_file("formats", p, len);
	p = fuzz_take(&data, &size, 2, &len);
	fuzz_put_file("classes", len ? p : NULL, len);
	argv[argc++] = "ktrdump";
	/* What --console refuses is not given with it. */
	if (flags & 32)
		flags &= ~(1 | 2 | 8);
	if (flags & 1)
		argv[argc++] = "-a";
	if (flags & 2)
		argv[argc++] = "-l";
	if (flags & 4)
		argv[argc++] = "-O";
	if (flags & 8)
		argv[argc++] = "-F";
	p = fuzz_take(&data, &size, 1, &len);
	if (len && !(flags & 32)) {
		arg(classes, p, len);
		argv[argc++] = "-C";
		argv[argc++] = classes;
	}
	p = fuzz_take(&data, &size, 1, &len);
	if (len) {
		arg(cpus, p, len);
		argv[argc++] = "-c";
		argv[argc++] = cpus;
	}
	if (flags & 32) {
		snprintf(console, sizeof(console), "--console=%s/cpu0", fuzz_dir);
		argv[argc++] = console;
	} else {
		argv[argc++] = fuzz_dir;
	}
	argv[argc] = NULL;
	if (flags & 16) {
		p = fuzz_take(&data, &size, 2, &len0);
		fuzz_put_file("cpu0", p, len0);
		fuzz_put_file("cpu1", data, size);
	} else {
		fuzz_put_file("cpu0", data, size);
		fuzz_put_file("cpu1", NULL, 0);
	}

	/*
	 * --follow: one read, then out, as if a signal had come. Not for a
	 * dump, which would stop before its first line.
	 */
	kmt_stop_requested = !!(flags & 8);
	sigaction(SIGINT, NULL, &intr);
	sigaction(SIGTERM, NULL, &term);
	sigaction(SIGPIPE, NULL, &epipe);
	optind = 0;	/* getopt_long() from the start */
	FUZZ_RUN(ktrdump_main(argc, argv));
	reset(fuzz_exited);
	sigaction(SIGINT, &intr, NULL);
	sigaction(SIGTERM, &term, NULL);
	sigaction(SIGPIPE, &epipe, NULL);
	fflush(stdout);
	return 0;
}
