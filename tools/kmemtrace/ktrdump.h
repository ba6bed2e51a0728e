/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrdump.h - what the parts of ktrdump share: its options, the helpers
 * that exit with the tools' status on a failure, the output, and the
 * format table and class names of a KTR directory, each format parsed
 * by the kernel's rules (ktr_parse_conv()): what the kernel cannot print
 * is never printed differently here. The parts are included once each,
 * in order, by ktrdump.c: ktrdump_raw.h (an entry's text, the raw
 * files, their merge, the dump), ktrdump_follow.h (--follow).
 */
#ifndef KMT_KTRDUMP_H
#define KMT_KTRDUMP_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/compiler.h>
#include <linux/ktr.h>

#include "kmt_classes.h"
#include "kmt_cli.h"
#include "kmt_meta.h"	/* kmt_slurp(), and kmt_get16/32/64() through kmt_events.h */
#include "kmt_msg.h"

#define LIVE_DIR	"/sys/kernel/debug/kmemtrace/ktr"
#define MAX_ARGS	5
#define NR_CLASSES	64
/* Longest Trace text the kernel prints: KTR_LINE_MAX - 1 in ktr.c. */
#define TRACE_MAX	511
/* 32-bit argument words in an entry's first slot: KTR_HEAD_WORDS in ktr.c. */
#define HEAD_WORDS	4

/* One conversion of a format, parsed as ktr_parse_conv() does. */
enum kind { K_BAD, K_PERCENT, K_INT, K_UINT, K_STR, K_PTR };

struct conv {
	enum kind kind;
	unsigned int len;
	char lmod;
	char type;		/* d i c u x X o s p */
	bool alt, zero, left;	/* the flags '#', '0' and '-' */
	unsigned int width;
	char spec[16];
};

/* One trace point of the format table. */
struct fmt {
	bool present;
	uint64_t class;
	unsigned int nargs;
	unsigned int wide;
	unsigned int slots;	/* that an entry of this format takes: 1 or 2 */
	const char *bad;	/* why the kernel cannot print it, NULL if it can */
	bool has_str;		/* a %s or %p conversion, if printable */
	struct conv conv[MAX_ARGS];	/* its conversions, if printable */
	char *file;
	unsigned int line;
	char *text;
};

/*
 * One entry, checked: what the merge and --follow compare, and where its
 * record is in its CPU's file, whose arguments and strings are read from
 * there when it is printed. 32 bytes for a slot of 24 or more.
 */
struct entry {
	uint64_t ts;
	uint64_t pos;
	size_t off;		/* of the record in its CPU's data */
	uint32_t cpu;		/* its CPU's index in the array being merged */
	uint32_t fmt;
};

/* One CPU's raw file. */
struct cpu {
	uint32_t cpu;
	uint32_t nslots;
	bool swap;		/* of the other byte order */
	uint64_t dropped;
	unsigned char *data;
	size_t size;
	struct entry *ents;
	size_t n;
	size_t next;		/* merge cursor */
};

/* A range of CPU numbers of --cpu, both ends included. */
struct cpu_range {
	uint32_t lo, hi;
};

static const char *prog = "ktrdump";
static struct fmt *fmts;
static unsigned int nfmts;
static char *class_names[NR_CLASSES];

static struct {
	const char *dir;
	bool cpu_filter;
	struct cpu_range *cpus;	/* --cpu, sorted, merged */
	size_t ncpus, cpus_cap;
	uint64_t class_mask;
	bool absolute;
	bool lines;
	bool oldest_first;
	bool follow;
	bool interval_set;
	unsigned int interval_ms;
	const char *console;	/* --console's log, or NULL */
} opt = { .class_mask = ~0ULL, .interval_ms = 200 };

#define err_msg(...)	kmt_warn(prog, __VA_ARGS__)

/* An input that cannot be read, the output that cannot be written, no memory. */
#define io_fatal(...)	kmt_die(prog, KMT_EXIT_USAGE, __VA_ARGS__)

/* An input that is not what its format says. */
#define corrupt(...)	kmt_die(prog, KMT_EXIT_CORRUPT, __VA_ARGS__)

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		io_fatal("out of memory (%zu bytes)", n);
	return p;
}

/* @p grown to @n elements of @size bytes (an overflow is out of memory too). */
static void *xrealloc(void *p, size_t n, size_t size)
{
	size_t bytes = n * size;

	if (size && n > SIZE_MAX / size)
		io_fatal("out of memory (%zu elements of %zu bytes)", n, size);
	p = realloc(p, bytes ? bytes : 1);
	if (!p)
		io_fatal("out of memory (%zu elements of %zu bytes)", n, size);
	return p;
}

/* "@dir/@name", allocated. */
static char *path_of(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);

	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static const char help_text[] =
	"Decode KTR trace buffers: the live " LIVE_DIR "\n"
	"(the default) or DIR, a copy of it (formats, classes, cpu<N>) saved on\n"
	"any machine, of either byte order. Prints what its trace file prints:\n"
	"all CPUs merged by time stamp, newest first, in the layout of tdump:\n"
	"C (CPU), Idx (slot, hex), Delta-T (ns since the entry below, hex), Trace.\n"
	"\n"
	"  -c, --cpu=LIST         only the CPUs in LIST (e.g. 0,2-3, any CPU number)\n"
	"  -C, --classes=CLASSES  only entries in CLASSES: a mask (0x...) or names\n"
	"                         from DIR/classes, comma-separated (gen,dev);\n"
	"                         --class is the same\n"
	"  -a, --absolute         time stamps in seconds instead of Delta-T\n"
	"  -r, --relative         Delta-T (the default)\n"
	"  -l, --lines            show the file:line of each trace point\n"
	"  -O, --oldest-first     oldest entry first\n"
	"  -F, --follow           keep reading the buffers and print new entries,\n"
	"                         oldest first, until interrupted; report on\n"
	"                         standard error the slots overwritten before a\n"
	"                         read and the entries the kernel dropped meanwhile\n"
	"  -i, --interval=MS      how often --follow reads (1 to 3600000, default 200)\n"
	"      --console=LOG      decode instead the dump ktr.dump_on_oops printed on\n"
	"                         a panic or an oops, the last one in LOG, a saved\n"
	"                         console log or dmesg (- for standard input); with\n"
	"                         -c and -O (Delta-T then between the lines shown)\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and the formats read, and exit\n"
	"\n"
	"-o, -f and -m, the old letters of -O, -F and -C, still work in this\n"
	"release, with a warning: in the other kmemtrace tools they mean an output\n"
	"file, a format and a byte limit, and will in ktrdump too.\n"
	"\n"
	"A first Ctrl-C (SIGINT or SIGTERM) stops, as at the end of the input:\n"
	"--follow reads once more, prints and ends; a dump stops printing, says how\n"
	"far it got, and exits 0. A second one ends ktrdump at once.\n"
	"--follow reads a cpu<N> or formats file that is missing or cut short (being\n"
	"copied) again at the next read; 2 s of such reads (3 at least) end it.\n"
	"\n";

static void show_help(FILE *f)
{
	fprintf(f, "Usage: %s [OPTION]... [DIR]\n   or: %s [-c LIST] [-O] --console=LOG\n",
		prog, prog);
	fputs(help_text, f);
	fprintf(f, KMT_EXIT_HELP,
		"--follow: slots overwritten\nbefore a read, entries dropped, "
		"or a CPU's file unreadable at the last read;\n"
		"--console: no dump in the log, or lines of it not in its layout");
}

/* The message and the help on standard error, exit 2. */
static void __noreturn __printf(1, 2) usage_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kmt_vwarn(prog, fmt, ap);
	va_end(ap);
	show_help(stderr);
	exit(KMT_EXIT_USAGE);
}

/* --help and --version, written; exits 2 if they cannot be. */
static void flush_stdio(void)
{
	if (fflush(stdout) == EOF || ferror(stdout))
		io_fatal("writing the output: %s", strerror(errno ?: EIO));
}

/*
 * Standard output, buffered here rather than by stdio: write(2) is
 * retried when a signal interrupts it, so that a first Ctrl-C while the
 * output is blocked on a pipe stops the listing when the write is done,
 * not with a write error. Every other error exits 2 (a full disk, a
 * closed pipe: SIGPIPE is ignored).
 */
static struct {
	char buf[1 << 16];
	size_t len;
} obuf;

static void write_all(const char *s, size_t n)
{
	while (n) {
		ssize_t r = write(STDOUT_FILENO, s, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			obuf.len = 0;
			io_fatal("writing the output: %s",
				 r < 0 ? strerror(errno) : "nothing written");
		}
		s += r;
		n -= r;
	}
}

static void out_flush(void)
{
	size_t n = obuf.len;

	obuf.len = 0;
	write_all(obuf.buf, n);
}

static void out_put(const char *s, size_t n)
{
	if (n > sizeof(obuf.buf) - obuf.len) {
		out_flush();
		if (n > sizeof(obuf.buf)) {
			write_all(s, n);
			return;
		}
	}
	memcpy(obuf.buf + obuf.len, s, n);
	obuf.len += n;
}

static void out_str(const char *s)
{
	out_put(s, strlen(s));
}

/*
 * The whole of @path, NUL-terminated, by kmt_slurp(). Exits with 2 if it
 * cannot be read, unless @optional and it does not exist (NULL, errno
 * ENOENT). Also if standard output writes to it: `ktrdump DIR >>
 * DIR/cpu0` would decode its own output, `>` has emptied it already.
 */
static char *read_input(const char *path, size_t *size, bool optional)
{
	char *buf;

	if (kmt_same_fd_file(STDOUT_FILENO, path))
		io_fatal("%s: the standard output goes to this input file: write it elsewhere",
			 path);
	/* A first stop signal interrupts a blocking open() (a FIFO): read on. */
	do {
		buf = kmt_slurp(path, size);
	} while (!buf && errno == EINTR);
	if (!buf && !(optional && errno == ENOENT))
		io_fatal("%s: %s", path, strerror(errno));
	/*
	 * kmt_slurp() starts at 64 KiB (debugfs files have no size to ask
	 * for): cut to what was read, as every cpu file is kept to the end
	 * of the merge (5000 files of 104 bytes: not 320 MB).
	 */
	if (buf) {
		char *small = realloc(buf, *size + 1);

		if (small)
			buf = small;
	}
	return buf;
}

/* Undoes the kernel's escaping of a format: \\ \" \ooo. */
static char *unescape(const char *s, const char *end, bool *ok)
{
	char *out = xmalloc(end - s + 1), *o = out;

	*ok = true;
	while (s < end) {
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		if (s < end && (*s == '\\' || *s == '"')) {
			*o++ = *s++;
		} else if (end - s >= 3 && s[0] >= '0' && s[0] <= '3' &&
			   s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7') {
			*o++ = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
			s += 3;
		} else {
			*ok = false;
			break;
		}
	}
	*o = '\0';
	return out;
}

/* ---- Formats: the same rules as ktr_parse_conv() in the kernel ---- */

static unsigned int parse_conv(const char *fmt, struct conv *c)
{
	const char *p = fmt + 1;
	char flags[6], width[4];
	unsigned int nf = 0, nw = 0;

	memset(c, 0, sizeof(*c));
	c->kind = K_BAD;
	if (*p == '%') {
		c->kind = K_PERCENT;
		c->len = 2;
		return c->len;
	}
	while (*p && strchr("-+ #0", *p) && nf < 5) {
		c->alt |= *p == '#';
		c->zero |= *p == '0';
		c->left |= *p == '-';
		flags[nf++] = *p++;
	}
	flags[nf] = '\0';
	while (isdigit((unsigned char)*p) && nw < 3)
		width[nw++] = *p++;
	width[nw] = '\0';
	c->width = atoi(width);
	if (p[0] == 'h' && p[1] == 'h') {
		c->lmod = 'H';
		p += 2;
	} else if (p[0] == 'l' && p[1] == 'l') {
		c->lmod = 'L';
		p += 2;
	} else if (*p == 'h' || *p == 'l' || *p == 'z') {
		c->lmod = *p++;
	}
	switch (*p) {
	case 'd': case 'i': case 'c':
		c->kind = K_INT;
		break;
	case 'u': case 'x': case 'X': case 'o':
		c->kind = K_UINT;
		break;
	case 's':
		c->kind = K_STR;
		break;
	case 'p':
		c->kind = K_PTR;
		break;
	default:
		break;
	}
	c->type = *p;
	if (*p)
		p++;
	c->len = p - fmt;
	if (c->kind == K_BAD)
		return c->len;
	if ((c->kind == K_STR || c->kind == K_PTR || p[-1] == 'c') && c->lmod) {
		c->kind = K_BAD;
		return c->len;
	}
	if (c->kind == K_PTR) {
		if (isalnum((unsigned char)*p) && !strchr("xsS", *p)) {
			c->kind = K_BAD;
			return c->len;
		}
		if (isalnum((unsigned char)*p))
			c->len++;
	}
	if (c->kind == K_STR || c->kind == K_PTR)
		snprintf(c->spec, sizeof(c->spec), "%%%s%ss", flags, width);
	else	/* The kernel's long and size_t are 64-bit: long long here. */
		snprintf(c->spec, sizeof(c->spec), "%%%s%s%s%c", flags, width,
			 c->lmod == 'H' ? "hh" : c->lmod == 'h' ? "h" :
			 c->lmod ? "ll" : "", p[-1]);
	return c->len;
}

static bool conv_wide(const struct conv *c)
{
	return c->kind == K_STR || c->kind == K_PTR ||
	       c->lmod == 'l' || c->lmod == 'L' || c->lmod == 'z';
}

/*
 * Parses the next conversion of @p that takes an argument (any but %%)
 * into @c. Return: where the text after it starts, NULL if none is left.
 */
static const char *next_conv(const char *p, struct conv *c)
{
	while ((p = strchr(p, '%'))) {
		p += parse_conv(p, c);
		if (c->kind != K_PERCENT)
			return p;
	}
	return NULL;
}

/* As ktr_check_desc(): NULL if printable, else why not. */
static const char *check_fmt(const struct fmt *f)
{
	unsigned int n = 0;
	struct conv c;
	const char *p;

	for (p = f->text; (p = next_conv(p, &c)); n++) {
		if (c.kind == K_BAD)
			return "unsupported conversion";
		if (n >= f->nargs)
			return "more conversions than arguments";
		if (conv_wide(&c) != !!(f->wide & (1u << n)))
			return "argument size does not match the conversion";
	}
	if (n != f->nargs)
		return "fewer conversions than arguments";
	return NULL;
}

/* The conversions of a printable format, once, not per entry printed. */
static void parse_convs(struct fmt *f)
{
	unsigned int n = 0;
	const char *p;

	for (p = f->text; n < f->nargs && (p = next_conv(p, &f->conv[n])); n++)
		f->has_str |= f->conv[n].kind == K_STR || f->conv[n].kind == K_PTR;
}

/* ---- The format table and the class names ---------------------------- */

/* Slots an entry of @f takes, as CTRn() packs its arguments. */
static unsigned int fmt_slots(const struct fmt *f)
{
	unsigned int i, words = 0;

	for (i = 0; i < f->nargs; i++)
		words += f->wide & (1u << i) ? 2 : 1;
	return words <= HEAD_WORDS ? 1 : 2;
}

static void free_formats(void)
{
	unsigned int i;

	for (i = 0; i < nfmts; i++) {
		free(fmts[i].file);
		free(fmts[i].text);
	}
	free(fmts);
	fmts = NULL;
	nfmts = 0;
}

/* The formats file of @dir, read whole; exits 2 if it cannot be. */
static char *read_formats(const char *dir, size_t *size)
{
	char *path = path_of(dir, "formats"), *data;

	data = read_input(path, size, true);
	if (!data)
		io_fatal("%s: %s%s", path, strerror(errno), strcmp(dir, LIVE_DIR) ? "" :
			 " (is debugfs mounted, and the kernel built with CONFIG_KTR?)");
	free(path);
	return data;
}

/*
 * formats: "id class nargs wide file:line "format"" per line. @data, the
 * file's @size bytes, is freed (and the table before).
 */
static void load_formats(const char *dir, char *data, size_t size)
{
	char *path = path_of(dir, "formats"), *line, *next;
	unsigned int lineno = 0, cap = 0, i;

	free_formats();
	if (!size)
		corrupt("%s: the formats file is empty (%s)", path,
			"the usual result of a failed copy: copy the directory again");
	for (line = data; line < data + size; line = next) {
		unsigned long long id, class;
		unsigned int nargs, wide, fline;
		char *nl = memchr(line, '\n', data + size - line);
		char *q, *colon, *sp;
		int off = 0;
		bool ok;

		lineno++;
		if (!nl)
			corrupt("%s: line %u: truncated (no newline)", path, lineno);
		*nl = '\0';
		next = nl + 1;
		if (sscanf(line, "%llu %llx %u %x %n", &id, &class, &nargs, &wide, &off) != 4 ||
		    !off || nargs > MAX_ARGS)
			corrupt("%s: line %u: not a format line: %s", path, lineno, line);
		/*
		 * The kernel numbers the lines from 0; a larger id would make
		 * the table larger than the file (a line of id 0xffffff: 805 MB).
		 */
		if (id >= lineno)
			corrupt("%s: line %u: id %llu, above the line's %u (%s)", path, lineno, id,
				lineno - 1, "ids count the lines from 0");
		sp = line + off;
		q = strchr(sp, ' ');
		colon = q ? memrchr(sp, ':', q - sp) : NULL;
		if (!q || !colon || q[1] != '"' || nl - q < 3 || nl[-1] != '"' ||
		    sscanf(colon + 1, "%u", &fline) != 1)
			corrupt("%s: line %u: not a format line: %s", path, lineno, line);
		if (id >= nfmts) {
			unsigned int n = id + 1;

			if (n > cap) {
				cap = n > 2 * cap ? n : 2 * cap;
				fmts = xrealloc(fmts, cap, sizeof(*fmts));
			}
			memset(fmts + nfmts, 0, (n - nfmts) * sizeof(*fmts));
			nfmts = n;
		}
		/* An id listed twice: the last line, as ever, without a leak. */
		free(fmts[id].file);
		free(fmts[id].text);
		fmts[id].present = true;
		fmts[id].class = class;
		fmts[id].nargs = nargs;
		fmts[id].wide = wide;
		fmts[id].line = fline;
		fmts[id].file = strndup(sp, colon - sp);
		fmts[id].text = unescape(q + 2, nl - 1, &ok);
		if (!fmts[id].file)
			io_fatal("out of memory");
		if (!ok)
			corrupt("%s: line %u: bad escape in the format", path, lineno);
	}
	/* Once per format, not per entry: whether it prints, and its size. */
	for (i = 0; i < nfmts; i++) {
		if (!fmts[i].present)
			continue;
		fmts[i].bad = check_fmt(&fmts[i]);
		fmts[i].slots = fmt_slots(&fmts[i]);
		if (!fmts[i].bad)
			parse_convs(&fmts[i]);
	}
	free(data);
	free(path);
}

/*
 * classes: "bit name compiled enabled" per line, '#' comments. Only for
 * names on the command line, so the file must be there: a missing one
 * is said as such, not as an unknown name.
 */
static void load_classes(const char *dir)
{
	char *path = path_of(dir, "classes"), *data, *line, *next;
	unsigned int i;
	size_t size;

	data = read_input(path, &size, true);
	if (!data)
		io_fatal("%s: %s (--classes names are looked up there; a mask such as 0x4 %s)",
			 path, strerror(errno), "needs no classes file");
	/* Read again (--follow, another boot): no name of the file before. */
	for (i = 0; i < NR_CLASSES; i++) {
		free(class_names[i]);
		class_names[i] = NULL;
	}
	for (line = data; line < data + size; line = next) {
		char *nl = memchr(line, '\n', data + size - line), *end, *name;
		unsigned long bit;
		size_t len;

		next = nl ? nl + 1 : data + size;
		if (nl)
			*nl = '\0';
		if (!isdigit((unsigned char)*line))
			continue;	/* a comment, a blank line */
		errno = 0;
		bit = strtoul(line, &end, 10);
		if (errno || bit >= NR_CLASSES || (*end != ' ' && *end != '\t'))
			continue;
		/* A name of any length, whole: no cut name that matches another. */
		name = end + strspn(end, " \t");
		len = strcspn(name, " \t\r");
		if (!len)
			continue;
		free(class_names[bit]);	/* a bit named twice: the last name */
		class_names[bit] = strndup(name, len);
		if (!class_names[bit])
			io_fatal("out of memory");
	}
	free(data);
	free(path);
}

static void parse_classes(const char *s)
{
	size_t badlen = strlen(s) + 1;
	char *bad = xmalloc(badlen);	/* the unknown name, whole */
	int ret;

	/* A mask needs no classes file; names are looked up in it. */
	if (!kmt_classes_numeric(s))
		load_classes(opt.dir);
	ret = kmt_parse_classes(s, (const char *const *)class_names, &opt.class_mask,
				bad, badlen);
	if (ret == -EINVAL)
		usage_fatal("--classes: '%s' is not a 64-bit mask", s);
	else if (ret == -ENOENT)
		usage_fatal("--classes: no class '%s' in %s/classes", bad, opt.dir);
	else if (ret)
		io_fatal("--classes: %s", strerror(-ret));
	else if (!opt.class_mask && !kmt_classes_numeric(s))
		usage_fatal("--classes: '%s' names no class", s);
	free(bad);
}

#endif /* KMT_KTRDUMP_H */
