// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtrace-report - what a kmemtraced capture says about the kernel's
 * allocations (Documentation/trace/kmemtrace.rst): memory allocated and
 * fragmentation per call site and in total, cross-CPU frees, errors
 * (mismatched frees, frees of unknown pointers, allocations of less than
 * asked) with both call sites, and what was still allocated at the end.
 *
 *   kmemtrace-report [OPTIONS] DIR
 *
 * The CPU files are merged by sequence number as they are read
 * (kmt_capture.h, kmemtrace-check's reader: a buffer per file from a
 * shared budget, a heap), by a reader thread that hands the events over
 * to the analysis in batches: memory grows with the call sites and the
 * live allocations, not with the events or the files. The events lost
 * are counted as kmemtrace-check counts them (kmt_loss.h).
 *
 * Its parts, each a header included once here (report.h says more):
 * the state, struct report (report.h); the inputs (report_read.h); the
 * analysis (report_analysis.h); the output formats (report_output.h).
 * This file holds the options, the exit status and main().
 *
 * Exit status (kmt_cli.h): 0 done, 1 events lost or errors found (but
 * frees of unknown pointers), 2 bad usage or an I/O error, 3 corrupt.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kmt_capture.h"
#include "kmt_cli.h"
#include "kmt_events.h"
#include "kmt_meta.h"
#include "kmt_msg.h"

#include "report.h"
#include "report_read.h"
#include "report_analysis.h"
#include "report_output.h"

/* A new report: no filters, the call sites by bytes allocated. */
static void report_init(struct report *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->filt.type = -1;
	rep->filt.cpu = -1;
	rep->sort_key = SORT_ALLOC;
}

/*
 * Frees what @rep holds, closes its capture and makes it new, options
 * and all (the fuzz harnesses make a report after another in one
 * process). Safe to call twice.
 */
static void report_reset(struct report *rep)
{
	size_t i;

	for (i = 0; i < rep->nsyms; i++)
		free(rep->syms[i].name);
	free(rep->syms);
	for (i = 0; i < rep->ncache_names; i++)
		free(rep->cache_names[i].name);
	free(rep->cache_names);
	key_map_free(&rep->site_map);
	key_map_free(&rep->cache_map);
	free(rep->sites);
	free(rep->site_hist);
	free(rep->caches);
	free(rep->lives);
	free(rep->freed[0].slot);
	free(rep->freed[1].slot);
	free(rep->errs);
	free(rep->rows);
	free(rep->err_rows);
	free(rep->cache_rows);
	free(rep->ring);
	kmt_capture_close(&rep->cap);
	report_init(rep);
}

/*
 * The exit status of a report made: 3 if the capture misses other
 * events than the kernel counted lost (kmemtrace-check calls it
 * corrupt), 1 if events were lost, a stop signal ended the reading
 * early (not all the capture was read), or the analysis found errors other
 * than frees of unknown pointers (which every capture of a running
 * system has: memory allocated before it), else 0.
 */
static int report_status(const struct report *rep)
{
	int k;

	if (kmt_loss_miscounted(&rep->cap.loss)) {
		kmt_warn(prog, "%s: the capture misses %llu events but the kernel lost %llu: %s",
			 rep->cap.dir, rep->cap.loss.lost, rep->cap.loss.kernel_lost,
			 "a corrupt capture");
		return KMT_EXIT_CORRUPT;
	}
	if (rep->cap.loss.lost || rep->cap.partial)
		return KMT_EXIT_DATA;
	for (k = 0; k < NR_ERR; k++)
		if (k != ERR_UNKNOWN && rep->err_totals[k])
			return KMT_EXIT_DATA;
	return KMT_EXIT_OK;
}

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] DIR\n"
		"Reports on a kmemtraced capture in DIR: memory and fragmentation per\n"
		"call site and per cache, cross-CPU frees, errors and what was still\n"
		"allocated at the end.\n"
		"A stop signal ends the reading early: the report says partial, exit 1.\n"
		"  -f, --format=FMT     text (default), json, csv (the call sites), or folded\n"
		"                       (\"function;type bytes\" lines for flame graphs)\n"
		"      --sort=KEY       order of the call sites: bytes (allocated, default),\n"
		"                       req, hits, frag, cross, live\n"
		"  -n, --top=N          at most N call sites, N caches and N errors (-1: all);\n"
		"                       the default: 20 in text, all in json, csv and folded\n"
		"  -T, --type=TYPE      only kmalloc, kmem_cache or pages events\n"
		"  -c, --cpu=N          only the events recorded on CPU N\n"
		"  -w, --window=A:B     only the events from A to B seconds after the first\n"
		"                       (either may be left out)\n"
		"  -S, --site=TEXT      only the call sites (and errors) whose symbol or\n"
		"                       address contains TEXT\n"
		"  -z, --sizes          the text report also shows each call site's\n"
		"                       allocations by requested size (JSON always has them)\n"
		"  -k, --kallsyms=FILE  symbols from FILE (kallsyms or System.map format)\n"
		"                       instead of DIR/kallsyms\n"
		"  -h, --help           print this help and exit\n"
		"  -V, --version        print the version and the ABI read, and exit\n"
		"-t, the old letter of -T, still works in this release, with a warning:\n"
		"in kmemtraced and kmonlog it means a time, and will here too. -s, the\n"
		"old letter of --sort, also still works with a warning; in kmonparse it\n"
		"is a time scale.\n"
		KMT_EXIT_HELP "(errors: those listed, but frees of unknown pointers)\n", prog,
		"events lost, or errors found");
}

static int bad_option(const char *opt, const char *arg, const char *what)
{
	fprintf(stderr, "%s: --%s=%s: %s\n", prog, opt, arg, what);
	print_help(stderr);
	return KMT_EXIT_USAGE;
}

/* "A:B" in seconds, either side optional, into [*from, *to) in ns. */
static bool parse_window(const char *arg, __u64 *from, __u64 *to)
{
	const char *colon = strchr(arg, ':');
	char *end;
	double a = 0, b = -1;

	if (!colon)
		return false;
	if (colon != arg) {
		a = strtod(arg, &end);
		if (end != colon || a < 0)
			return false;
	}
	if (colon[1]) {
		b = strtod(colon + 1, &end);
		if (*end || b < a)
			return false;
	}
	/* Finite, and within what 64 bits of nanoseconds hold: 584 years. */
	if (!isfinite(a) || !isfinite(b) || a > 1.8e10 || b > 1.8e10)
		return false;
	*from = a * 1e9;
	*to = b < 0 ? ~0ULL : (__u64)(b * 1e9);
	return true;
}

/* getopt_long()'s value for --sort, which has no letter: -s is a time scale. */
#define OPT_SORT	256

enum report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV, FORMAT_FOLDED };

static const char *const format_names[] = { "text", "json", "csv", "folded" };

/* What the options say besides what goes into struct report. */
struct report_args {
	const char *dir;		/* the capture */
	const char *symfile;		/* --kallsyms, or NULL: DIR/kallsyms */
	enum report_format format;
	long top;			/* at most this many rows of each kind, -1: all */
};

/*
 * The command line into @rep (filters, order, --site, --sizes) and
 * @args: -1 to go on, else the exit status to end with (--help,
 * --version, bad usage).
 */
static int parse_options(struct report *rep, struct report_args *args, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "top", required_argument, NULL, 'n' },
		{ "type", required_argument, NULL, 'T' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, 'w' },
		{ "site", required_argument, NULL, 'S' },
		{ "sizes", no_argument, NULL, 'z' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char *end, abi[32];
	size_t i;
	long v;
	int c;

	args->format = FORMAT_TEXT;
	args->symfile = NULL;
	args->top = -2;		/* the format's default */
	while ((c = getopt_long(argc, argv, "f:s:n:T:t:c:w:S:zk:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			for (i = 0; i < ARRAY_SIZE(format_names); i++)
				if (!strcmp(optarg, format_names[i]))
					break;
			if (i == ARRAY_SIZE(format_names))
				return bad_option("format", optarg,
						  "not text, json, csv or folded");
			args->format = i;
			break;
		case 's':
			/* --sort's letter until now; a time scale in kmonparse. */
			kmt_old_letter(prog, 's', "--sort", "be a time scale");
			fallthrough;
		case OPT_SORT:
			for (i = 0; i < ARRAY_SIZE(sort_names); i++)
				if (!strcmp(optarg, sort_names[i]))
					break;
			if (i == ARRAY_SIZE(sort_names))
				return bad_option("sort", optarg, "not a sort key");
			rep->sort_key = i;
			break;
		case 'n':
			errno = 0;
			args->top = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || args->top < -1)
				return bad_option("top", optarg, "not a number >= -1");
			break;
		case 't':
			/*
			 * The report's letter for --type until now; a time in
			 * kmemtraced and kmonlog, and here in the next release.
			 * Said once, the status unchanged.
			 */
			kmt_old_letter(prog, 't', "-T (type)", "mean a time");
			fallthrough;
		case 'T':
			for (i = 0; i < NR_TYPES; i++)
				if (!strcmp(optarg, type_names[i]))
					break;
			/* "cache", the name of earlier versions, too. */
			if (!strcmp(optarg, "cache"))
				i = KMEMTRACE_TYPE_CACHE;
			if (i == NR_TYPES)
				return bad_option("type", optarg,
						  "not kmalloc, kmem_cache or pages");
			rep->filt.type = i;
			break;
		case 'c':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || v < 0 || v > INT_MAX)
				return bad_option("cpu", optarg, "not a CPU number");
			rep->filt.cpu = v;
			break;
		case 'w':
			if (!parse_window(optarg, &rep->filt.from, &rep->filt.to))
				return bad_option("window", optarg, "not A:B seconds with A <= B");
			rep->filt.windowed = true;
			break;
		case 'S':
			rep->site_filter = optarg;
			break;
		case 'z':
			rep->show_sizes = true;
			break;
		case 'k':
			args->symfile = optarg;
			break;
		case 'h':
			print_help(stdout);
			return KMT_EXIT_OK;
		case 'V':
			snprintf(abi, sizeof(abi), "kmemtrace ABI %d", KMEMTRACE_ABI_VERSION);
			kmt_print_version(prog, abi);
			return KMT_EXIT_OK;
		default:
			print_help(stderr);
			return KMT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		print_help(stderr);
		return KMT_EXIT_USAGE;
	}
	args->dir = argv[optind];
	if (args->top == -2)
		args->top = args->format != FORMAT_TEXT ? -1 : 20;
	return -1;
}

/* The capture opened, its symbols and cache names read; dies if it cannot be. */
static void open_inputs(struct report *rep, const struct report_args *args)
{
	char path[PATH_MAX];
	int status;

	/* The first error ends the reading: the report would be of half the events. */
	rep->cap.stop_on_error = true;
	status = kmt_capture_open(&rep->cap, args->dir);
	if (status)
		die(status, "%s", rep->cap.error);
	if (rep->cap.meta.abi_version > KMEMTRACE_ABI_VERSION)
		kmt_warn(prog, "%s/meta: ABI %d is newer than this tool's %d; %s", args->dir,
			 rep->cap.meta.abi_version, KMEMTRACE_ABI_VERSION,
			 "unknown events are skipped");
	if (args->symfile) {
		if (!load_symbols(rep, args->symfile))
			die(KMT_EXIT_USAGE, "%s: %s", args->symfile, strerror(errno));
	} else {
		snprintf(path, sizeof(path), "%s/kallsyms", args->dir);
		load_symbols(rep, path);
	}
	snprintf(path, sizeof(path), "%s/caches", args->dir);
	load_cache_names(rep, path);
}

/* The report in the format asked for, to stdout; dies if it cannot be written. */
static void emit(struct report *rep, const struct report_args *args)
{
	char prefix[PATH_MAX];

	if (isatty(STDOUT_FILENO)) {
		struct winsize ws;

		if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
			rep->text_width = ws.ws_col;
	}
	switch (args->format) {
	case FORMAT_JSON:
		emit_json(rep, args->top);
		break;
	case FORMAT_CSV:
		emit_csv(rep, args->top);
		break;
	case FORMAT_FOLDED:
		emit_folded(rep, args->top);
		break;
	default:
		emit_text(rep, args->top);
		break;
	}
	/* The text says it with the losses; the machine formats on stderr. */
	if (args->format != FORMAT_TEXT) {
		snprintf(prefix, sizeof(prefix), "%s: %.200s: ", prog, args->dir);
		kmt_loss_print_missed(&rep->cap.loss, &rep->cap.meta, stderr, prefix);
	}
	if (fflush(stdout) || ferror(stdout))
		die(KMT_EXIT_USAGE, "writing the report: %s", strerror(errno));
}

/*
 * All of main() but the report's making and freeing (which the fuzz
 * harness does itself): the options, the capture read and analysed, the
 * report written; the exit status.
 */
static int report_run(struct report *rep, int argc, char **argv)
{
	struct report_args args;
	int status;

	status = parse_options(rep, &args, argc, argv);
	if (status >= 0)
		return status;
	kmt_catch_stop_signals();
	open_inputs(rep, &args);
	if (!analyse(rep))
		die(rep->cap.status, "%s", rep->cap.error);
	leaks(rep);
	collect(rep);
	emit(rep, &args);
	return report_status(rep);
}

int main(int argc, char **argv)
{
	struct report *rep = xcalloc(1, sizeof(*rep));
	int status;

	report_init(rep);
	status = report_run(rep, argc, argv);
	report_reset(rep);
	free(rep);
	return status;
}
