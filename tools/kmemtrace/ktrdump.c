// SPDX-License-Identifier: GPL-2.0
/*
 * ktrdump - decode KTR trace buffers, live or from a saved capture
 *
 * Reads the raw per-CPU files, the format table and the class names of
 * /sys/kernel/debug/kmemtrace/ktr (or of a copy of that directory made
 * on another machine, of either byte order), merges the CPUs by time
 * stamp and prints the entries as the kernel's own text view,
 * kmemtrace/ktr/trace, does: in the layout of BSD/OS tdump(8),
 * "C Idx Delta-T Trace". --follow reads the buffers again and again,
 * prints what is new, and says what was overwritten before it could be
 * read.
 *
 * Memory is the files' bytes and 40 bytes per entry, never a table of
 * the highest CPU number: the CPUs are a sorted array of the files
 * found, merged through a heap, and one file is open at a time.
 *
 * See Documentation/trace/ktr.rst and ktrdump(8).
 *
 * Its parts, each a header included once here: the options, output and
 * format table (ktrdump.h); an entry's text, the raw files, their merge
 * and the dump (ktrdump_raw.h); --follow (ktrdump_follow.h). This file
 * holds the command line and main().
 */

#include "ktrdump.h"
#include "ktrdump_raw.h"
#include "ktrdump_follow.h"
#include "ktrdump_console.h"

/* ---- Options -------------------------------------------------------- */

static int cmp_range(const void *a, const void *b)
{
	const struct cpu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* --cpu: ranges of any CPU number, sorted and merged; -c twice: both. */
static void parse_cpus(const char *s)
{
	const char *p = s;
	size_t i, k;

	opt.cpu_filter = true;
	if (!*s)
		goto bad;
	while (*p) {
		unsigned long long a, b;
		char *end;

		if (!isdigit((unsigned char)*p))
			goto bad;
		errno = 0;
		a = strtoull(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				goto bad;
			b = strtoull(end + 1, &end, 10);
		}
		if (errno || a > b || b > UINT32_MAX)
			goto bad;
		if (opt.ncpus == opt.cpus_cap) {
			opt.cpus_cap = opt.cpus_cap ? 2 * opt.cpus_cap : 8;
			opt.cpus = xrealloc(opt.cpus, opt.cpus_cap, sizeof(*opt.cpus));
		}
		opt.cpus[opt.ncpus++] = (struct cpu_range){ a, b };
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	qsort(opt.cpus, opt.ncpus, sizeof(*opt.cpus), cmp_range);
	for (i = 1, k = 0; i < opt.ncpus; i++) {
		if ((uint64_t)opt.cpus[i].lo <= (uint64_t)opt.cpus[k].hi + 1) {
			if (opt.cpus[i].hi > opt.cpus[k].hi)
				opt.cpus[k].hi = opt.cpus[i].hi;
		} else {
			opt.cpus[++k] = opt.cpus[i];
		}
	}
	opt.ncpus = k + 1;
	return;
bad:
	usage_fatal("--cpu: '%s' is not a CPU list such as 0,2-3 (CPUs 0 to %u)", s,
		    UINT32_MAX);
}

/*
 * The command line into opt; *@classes is --classes's argument, or NULL.
 * -1 to go on, else the exit status to end with (--help, --version,
 * bad usage; a bad argument exits).
 */
static int parse_options(int argc, char **argv, const char **classes)
{
	static const struct option longopts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "classes", required_argument, NULL, 'C' },
		{ "class", required_argument, NULL, 'C' },	/* the old name */
		{ "absolute", no_argument, NULL, 'a' },
		{ "relative", no_argument, NULL, 'r' },
		{ "lines", no_argument, NULL, 'l' },
		{ "oldest-first", no_argument, NULL, 'O' },
		{ "follow", no_argument, NULL, 'F' },
		{ "interval", required_argument, NULL, 'i' },
		{ "console", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	char formats[128], *end;
	unsigned long ms;
	int c;

	*classes = NULL;
	while ((c = getopt_long(argc, argv, "c:C:m:arlOoFfi:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			parse_cpus(optarg);
			break;
		/*
		 * -m, -o and -f: ktrdump's letters for --classes,
		 * --oldest-first and --follow until now; in the other tools a
		 * byte limit, an output file and a format, and here next.
		 */
		case 'm':
			kmt_old_letter(prog, 'm', "-C (classes)", "mean a byte limit");
			fallthrough;
		case 'C':
			*classes = optarg;
			break;
		case 'a':
			opt.absolute = true;
			break;
		case 'r':
			opt.absolute = false;
			break;
		case 'l':
			opt.lines = true;
			break;
		case 'o':
			kmt_old_letter(prog, 'o', "-O (oldest first)", "mean an output file");
			fallthrough;
		case 'O':
			opt.oldest_first = true;
			break;
		case 'f':
			kmt_old_letter(prog, 'f', "-F (follow)", "mean an output format");
			fallthrough;
		case 'F':
			opt.follow = true;
			break;
		case 'i':
			errno = 0;
			ms = strtoul(optarg, &end, 10);
			if (errno || *end || !isdigit((unsigned char)*optarg) || !ms ||
			    ms > 3600000)
				usage_fatal("--interval: '%s' is not from 1 to 3600000 ms", optarg);
			opt.interval_ms = ms;
			opt.interval_set = true;
			break;
		case 'K':
			opt.console = optarg;
			break;
		case 'h':
			show_help(stdout);
			flush_stdio();
			return KMT_EXIT_OK;
		case 'V':
			snprintf(formats, sizeof(formats),
				 "KTR raw format %d (cpu<N> files of either byte order), %s",
				 KTR_RAW_VERSION, "formats and classes files");
			kmt_print_version(prog, formats);
			flush_stdio();
			return KMT_EXIT_OK;
		default:
			show_help(stderr);
			return KMT_EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		usage_fatal("one directory at most, got '%s' and '%s'", argv[optind],
			    argv[optind + 1]);
	if (opt.interval_set && !opt.follow)
		usage_fatal("--interval: only with --follow");
	if (opt.console) {
		/* What a console's dump does not hold, or is not. */
		if (optind < argc)
			usage_fatal("--console: a log, not a directory too ('%s')", argv[optind]);
		if (opt.follow)
			usage_fatal("--console: a saved log cannot be followed");
		if (*classes)
			usage_fatal("--console: the dump has no classes: -C cannot select");
		if (opt.lines)
			usage_fatal("--console: the dump has no file:line for -l");
		if (opt.absolute)
			usage_fatal("--console: the dump has Delta-T only, no time for -a");
		return -1;
	}
	opt.dir = optind < argc ? argv[optind] : LIVE_DIR;
	if (*classes)
		parse_classes(*classes);
	return -1;
}

int main(int argc, char **argv)
{
	const char *classes;
	int ret;

	/* First: a closed pipe is then a write error, even for --help. */
	kmt_catch_stop_signals();
	ret = parse_options(argc, argv, &classes);
	if (ret >= 0)
		return ret;
	if (opt.console) {
		ret = console_dump(opt.console);
		free(opt.cpus);
		opt.cpus = NULL;
		return ret;
	}
	if (!opt.follow) {
		size_t size;
		char *data = read_formats(opt.dir, &size);

		load_formats(opt.dir, data, size);
	}
	ret = opt.follow ? follow(classes) : dump();
	free(opt.cpus);
	opt.cpus = NULL;
	return ret;
}
