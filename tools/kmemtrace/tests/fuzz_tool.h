/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_tool.h - what the libFuzzer harnesses that run a kmemtrace tool's
 * main() share (tests/fuzz_<tool>.c).
 *
 * The tools exit at the first bad input, through exit(): a harness
 * defines exit() as fuzz_exit(), which jumps back to FUZZ_RUN() with the
 * status (FUZZ_RUN() sets fuzz_status). Every status is counted, and one
 * the tool does not document (above FUZZ_STATUS_MAX, which the harness
 * defines) aborts the run, as a crash would: a replay of the corpus
 * then also proves each input ends in a documented way. The counts are
 * printed when the harness ends.
 *
 * The files and directories the tool opens are tracked through
 * fuzz_fopen() and fuzz_opendir() (a harness defines fopen() and
 * opendir() as them), so that what an exit() left open is closed by
 * fuzz_close_all(). Inputs that are directories are written under
 * $TMPDIR (or /tmp) by fuzz_put_file(), the input cut into its files by
 * fuzz_take().
 */
#ifndef FUZZ_TOOL_H
#define FUZZ_TOOL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/compiler.h>

#ifndef FUZZ_STATUS_MAX
#error "define FUZZ_STATUS_MAX, the largest exit status the tool documents"
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static jmp_buf fuzz_env;
static int fuzz_status;
static bool fuzz_exited, fuzz_in_run;
static unsigned long fuzz_statuses[FUZZ_STATUS_MAX + 1];

/*
 * The tool's exit(): back to FUZZ_RUN(), with @status. Outside one, the
 * jump would land in a frame that has returned: abort instead.
 */
static void __noreturn fuzz_exit(int status)
{
	if (!fuzz_in_run) {
		fprintf(stderr, "fuzz: exit(%d) outside FUZZ_RUN()\n", status);
		abort();
	}
	fuzz_in_run = false;
	fuzz_status = status;
	longjmp(fuzz_env, 1);
}

/* Counts @status, or aborts if the tool does not document it. */
static void fuzz_count_status(int status)
{
	if (status < 0 || status > FUZZ_STATUS_MAX) {
		fprintf(stderr, "fuzz: exit status %d, %s (0 to %d)\n", status,
			"which the tool does not document", FUZZ_STATUS_MAX);
		abort();
	}
	fuzz_statuses[status]++;
}

/*
 * Runs @call, the tool's main(): fuzz_status is then what it returned or
 * gave exit(), and fuzz_exited says which.
 */
#define FUZZ_RUN(call)					\
	do {						\
		if (!setjmp(fuzz_env)) {		\
			fuzz_in_run = true;		\
			fuzz_status = (call);		\
			fuzz_in_run = false;		\
			fuzz_exited = false;		\
		} else {				\
			fuzz_exited = true;		\
		}					\
		fuzz_count_status(fuzz_status);		\
	} while (0)

/* "fuzz: exit statuses: 0:N 1:M ...", for the replay's log. */
static void fuzz_print_statuses(void)
{
	int i;

	fprintf(stderr, "fuzz: exit statuses:");
	for (i = 0; i <= FUZZ_STATUS_MAX; i++)
		fprintf(stderr, " %d:%lu", i, fuzz_statuses[i]);
	fprintf(stderr, "\n");
}

/* The files and directories the tool has open. */
#define FUZZ_MAX_OPEN	8
static FILE *fuzz_files[FUZZ_MAX_OPEN];
static DIR *fuzz_dirs[FUZZ_MAX_OPEN];

static void fuzz_track(void **set, void *p)
{
	int i;

	for (i = 0; i < FUZZ_MAX_OPEN; i++) {
		if (!set[i]) {
			set[i] = p;
			return;
		}
	}
	abort();
}

static void fuzz_untrack(void **set, void *p)
{
	int i;

	for (i = 0; i < FUZZ_MAX_OPEN; i++)
		if (set[i] == p)
			set[i] = NULL;
}

static __maybe_unused FILE *fuzz_fopen(const char *path, const char *mode)
{
	FILE *f = fopen(path, mode);

	if (f)
		fuzz_track((void **)fuzz_files, f);
	return f;
}

static __maybe_unused int fuzz_fclose(FILE *f)
{
	fuzz_untrack((void **)fuzz_files, f);
	return fclose(f);
}

static __maybe_unused DIR *fuzz_opendir(const char *path)
{
	DIR *d = opendir(path);

	if (d)
		fuzz_track((void **)fuzz_dirs, d);
	return d;
}

static __maybe_unused int fuzz_closedir(DIR *d)
{
	fuzz_untrack((void **)fuzz_dirs, d);
	return closedir(d);
}

/* Closes what the tool left open. */
static void fuzz_close_all(void)
{
	int i;

	for (i = 0; i < FUZZ_MAX_OPEN; i++) {
		if (fuzz_files[i])
			fclose(fuzz_files[i]);
		if (fuzz_dirs[i])
			closedir(fuzz_dirs[i]);
		fuzz_files[i] = NULL;
		fuzz_dirs[i] = NULL;
	}
}

/* The input directory, and the names of the files written there. */
static char fuzz_dir[4096];
static const char *const *fuzz_dir_files;
static size_t fuzz_dir_nfiles;

static void fuzz_remove_dir(void)
{
	char path[4200];
	size_t i;

	for (i = 0; i < fuzz_dir_nfiles; i++) {
		snprintf(path, sizeof(path), "%s/%s", fuzz_dir, fuzz_dir_files[i]);
		unlink(path);
	}
	rmdir(fuzz_dir);
}

/*
 * Sends the tool's standard output nowhere (its code runs all the same),
 * and has the exit statuses printed at the end. From
 * LLVMFuzzerInitialize().
 */
static void fuzz_init(void)
{
	if (!freopen("/dev/null", "w", stdout))
		abort();
	atexit(fuzz_print_statuses);
}

/*
 * fuzz_init(), and makes the input directory, $TMPDIR/@name.XXXXXX, for
 * the files @files (@n of them), removed when the harness ends.
 */
static __maybe_unused void fuzz_init_dir(const char *name, const char *const *files, size_t n)
{
	const char *tmp = getenv("TMPDIR");

	fuzz_init();
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(fuzz_dir))
		abort();
	fuzz_dir_files = files;
	fuzz_dir_nfiles = n;
	atexit(fuzz_remove_dir);
}

/* fuzz_dir/@name holds the @len bytes at @data; @data NULL: no such file. */
static __maybe_unused void fuzz_put_file(const char *name, const uint8_t *data, size_t len)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir, name);
	if (!data) {
		if (unlink(path) && errno != ENOENT)
			abort();
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd))
		abort();
}

/*
 * Of the input at *@data (*@size bytes), the next @width-byte (1 or 2,
 * little endian) length and that many bytes, at most; both move on.
 */
static __maybe_unused const uint8_t *fuzz_take(const uint8_t **data, size_t *size, int width,
					       size_t *len)
{
	const uint8_t *p;

	if (*size < (size_t)width) {
		*data += *size;
		*size = 0;
		*len = 0;
		return *data;
	}
	*len = width == 2 ? (*data)[0] | (*data)[1] << 8 : (*data)[0];
	*data += width;
	*size -= width;
	if (*len > *size)
		*len = *size;
	p = *data;
	*data += *len;
	*size -= *len;
	return p;
}

#endif /* FUZZ_TOOL_H */
