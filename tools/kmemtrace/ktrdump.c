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
 */
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
/* The CPUs whose entries are printed now: struct entry's cpu indexes them. */
static const struct cpu *cur_cpus;
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
	"copied) again at the next read; 10 such reads in a row end it.\n"
	"\n";

static void show_help(FILE *f)
{
	fprintf(f, "Usage: %s [OPTION]... [DIR]\n", prog);
	fputs(help_text, f);
	fprintf(f, KMT_EXIT_HELP,
		"--follow: slots overwritten\nbefore a read, entries dropped, "
		"or a CPU's file unreadable at the last read");
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

static const char *check_fmt(const struct fmt *f);
static void parse_convs(struct fmt *f);

/* Slots an entry of @f takes, as ktr_buf_write() packs its arguments. */
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

/* Appends printf output to a growing line. */
struct line {
	char *buf;
	size_t len, cap;
};

/* Room for @n more bytes and a NUL. */
static void lreserve(struct line *l, size_t n)
{
	if (l->cap - l->len > n)
		return;
	l->cap = (l->len + n + 1) * 2;
	l->buf = xrealloc(l->buf, l->cap, 1);
}

/* Appends the @n bytes at @s: the literal text of a format, without printf. */
static void lappend(struct line *l, const char *s, size_t n)
{
	lreserve(l, n);
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
}

static void __printf(2, 3) lprintf(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		/* No buffer yet: only the length (no NULL + 0, undefined). */
		n = vsnprintf(l->buf ? l->buf + l->len : NULL, l->cap - l->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			io_fatal("cannot format an entry: %s", strerror(errno));
		if ((size_t)n < l->cap - l->len)
			break;
		lreserve(l, n);
	}
	l->len += n;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void format_int(struct line *l, const struct conv *c, uint64_t v)
{
	bool sgn = c->kind == K_INT;
	uint64_t m = c->lmod == 'H' ? 0xff : c->lmod == 'h' ? 0xffff :
		     c->lmod ? ~0ULL : 0xffffffff;

	if (c->alt && (c->type == 'x' || c->type == 'X') && !(v & m)) {
		/* The kernel prints the 0x of %#x for 0 too; C does not. */
		const char *z = c->type == 'x' ? "0x0" : "0X0";

		if (c->zero && !c->left)
			lprintf(l, "%.2s%0*d", z, c->width > 3 ? (int)c->width - 2 : 1, 0);
		else
			lprintf(l, c->left ? "%-*s" : "%*s", (int)c->width, z);
		return;
	}
	switch (c->lmod) {
	case 'l':
	case 'z':
	case 'L':
		if (sgn)
			lprintf(l, c->spec, (long long)v);
		else
			lprintf(l, c->spec, (unsigned long long)v);
		break;
	default:
		if (sgn)
			lprintf(l, c->spec, (int)v);
		else
			lprintf(l, c->spec, (unsigned int)v);
		break;
	}
}

/* As ktr_format_entry(). */
static void format_entry(struct line *l, const struct entry *e)
{
	const struct fmt *f = &fmts[e->fmt];
	const struct cpu *cpu = &cur_cpus[e->cpu];
	const unsigned char *rec = cpu->data + e->off;
	const char *p, *pct;
	unsigned int n = 0;

	if (f->bad) {
		lprintf(l, "<bad format at %s:%u: %s>", f->file, f->line, f->bad);
		return;
	}
	for (p = f->text; *p; ) {
		const struct conv *c;
		uint64_t arg;

		if (*p != '%') {
			pct = strchrnul(p, '%');
			lappend(l, p, pct - p);
			p = pct;
			continue;
		}
		if (p[1] == '%') {	/* the only K_PERCENT: parse_conv() */
			lappend(l, "%", 1);
			p += 2;
			continue;
		}
		/* check_fmt() found exactly nargs conversions but %%. */
		c = &f->conv[n];
		arg = kmt_get64(rec + sizeof(struct ktr_raw_entry) + n * 8, cpu->swap);
		/* A string's offset in the record, checked by find_strings(). */
		if (c->kind == K_STR || c->kind == K_PTR)
			lprintf(l, c->spec, (const char *)rec + arg);
		else
			format_int(l, c, arg);
		n++;
		p += c->len;
	}
}

#pragma GCC diagnostic pop

/* ---- Raw files ------------------------------------------------------ */

/*
 * Checks that the entry's %s and %p arguments are offsets of a text, NUL
 * included, that the record of @size bytes at @rec holds after its
 * @fixed bytes of header and arguments; exits naming the file and offset
 * if one is bad.
 */
static void find_strings(const struct fmt *f, const unsigned char *rec, bool swap,
			 size_t fixed, size_t size, const char *path, size_t off)
{
	unsigned int n;

	for (n = 0; n < f->nargs; n++) {
		uint64_t so = kmt_get64(rec + sizeof(struct ktr_raw_entry) + n * 8, swap);

		if (f->conv[n].kind != K_STR && f->conv[n].kind != K_PTR)
			continue;
		if (so < fixed || so >= size || !memchr(rec + so, '\0', size - so))
			corrupt("%s: offset %zu: argument %u: bad string offset %llu",
				path, off, n, (unsigned long long)so);
	}
}

#define HDR_OFF(field)	offsetof(struct ktr_raw_header, field)
#define ENT_OFF(field)	offsetof(struct ktr_raw_entry, field)

/* Set by parse_cpu() when a --follow read is not of the format table. */
static bool cpu_not_of_table;

/*
 * Parses one CPU's raw file, in the byte order its magic says (a file
 * copied from a machine of the other order decodes all the same: every
 * field is an integer of a fixed size, the strings are bytes). Exits
 * naming the file and offset if it is bad. With @soft (--follow), a file
 * cut short or of another format table is not fatal: return false, for
 * a read again later.
 */
static bool parse_cpu(struct cpu *cpu, const char *path, bool soft)
{
	const unsigned char *d = cpu->data;
	uint32_t version, hsize, nslots;
	size_t off, cap;
	uint64_t magic;
	bool swap;

	/* --follow: a file being rewritten (cut short) is read again later. */
	if (soft && cpu->size < sizeof(struct ktr_raw_header))
		return false;
	if (cpu->size < sizeof(struct ktr_raw_header))
		corrupt("%s: offset 0: truncated header (%zu of %zu bytes)", path,
			cpu->size, sizeof(struct ktr_raw_header));
	magic = kmt_get64(d + HDR_OFF(magic), false);
	swap = magic == __builtin_bswap64(KTR_RAW_MAGIC);
	if (!swap && magic != KTR_RAW_MAGIC)
		corrupt("%s: offset 0: not a KTR raw file (magic %#llx)", path,
			(unsigned long long)magic);
	version = kmt_get32(d + HDR_OFF(version), swap);
	hsize = kmt_get32(d + HDR_OFF(header_size), swap);
	nslots = kmt_get32(d + HDR_OFF(nslots), swap);
	if (version != KTR_RAW_VERSION)
		corrupt("%s: offset %zu: version %u, this %s reads version %u", path,
			HDR_OFF(version), version, prog, KTR_RAW_VERSION);
	if (soft && hsize > cpu->size && hsize % 8 == 0)
		return false;
	if (hsize < sizeof(struct ktr_raw_header) || hsize > cpu->size || hsize % 8)
		corrupt("%s: offset %zu: bad header size %u", path, HDR_OFF(header_size), hsize);
	if (!nslots || (nslots & (nslots - 1)))
		corrupt("%s: offset %zu: slot count %u is not a power of 2", path,
			HDR_OFF(nslots), nslots);
	cpu->cpu = kmt_get32(d + HDR_OFF(cpu), swap);
	cpu->nslots = nslots;
	cpu->swap = swap;
	cpu->dropped = kmt_get64(d + HDR_OFF(dropped), swap);

	cap = (cpu->size - hsize) / sizeof(struct ktr_raw_entry) + 1;
	cpu->ents = xrealloc(NULL, cap, sizeof(*cpu->ents));
	cpu->n = 0;
	for (off = hsize; off < cpu->size; ) {
		struct entry *e = &cpu->ents[cpu->n];
		const unsigned char *rec = d + off;
		unsigned int nargs, size;
		const struct fmt *f;
		size_t fixed;

		if (soft && cpu->size - off < sizeof(struct ktr_raw_entry))
			return false;
		if (cpu->size - off < sizeof(struct ktr_raw_entry))
			corrupt("%s: offset %zu: truncated entry (%zu bytes left)",
				path, off, cpu->size - off);
		nargs = rec[ENT_OFF(nargs)];
		size = kmt_get16(rec + ENT_OFF(size), swap);
		e->fmt = kmt_get32(rec + ENT_OFF(fmt), swap);
		fixed = sizeof(struct ktr_raw_entry) + nargs * sizeof(uint64_t);
		if (nargs > MAX_ARGS)
			corrupt("%s: offset %zu: %u arguments, at most %d", path, off,
				nargs, MAX_ARGS);
		if (size < fixed || size % 8)
			corrupt("%s: offset %zu: bad entry size %u", path, off, size);
		if (soft && size > cpu->size - off)
			return false;
		if (size > cpu->size - off)
			corrupt("%s: offset %zu: truncated entry (%u bytes, %zu left)",
				path, off, size, cpu->size - off);
		/* --follow: cpu<N> copied over before the formats file, read again. */
		if (soft && (e->fmt >= nfmts || !fmts[e->fmt].present ||
			     fmts[e->fmt].nargs != nargs)) {
			cpu_not_of_table = true;
			return false;
		}
		if (e->fmt >= nfmts || !fmts[e->fmt].present)
			corrupt("%s: offset %zu: format %u is not in the format table (it has %u)",
				path, off, e->fmt, nfmts);
		f = &fmts[e->fmt];
		if (f->nargs != nargs)
			corrupt("%s: offset %zu: %u arguments, format %u has %u", path,
				off, nargs, e->fmt, f->nargs);
		e->ts = kmt_get64(rec + ENT_OFF(ts), swap);
		e->pos = kmt_get64(rec + ENT_OFF(pos), swap);
		e->off = off;
		e->cpu = 0;	/* its index, once the CPUs are sorted */
		/* Strings: where the format has %s or %p, if it is printable. */
		if (f->has_str)
			find_strings(f, rec, swap, fixed, size, path, off);
		if (cpu->n) {
			const struct entry *prev = &cpu->ents[cpu->n - 1];

			if (e->pos <= prev->pos)
				corrupt("%s: offset %zu: position %llu does not follow %llu",
					path, off, (unsigned long long)e->pos,
					(unsigned long long)prev->pos);
			/* A format table of another kernel, or a file cut and joined. */
			if (e->pos - prev->pos < fmts[prev->fmt].slots)
				corrupt("%s: offset %zu: position %llu is in the %u slots %s %llu",
					path, off, (unsigned long long)e->pos,
					fmts[prev->fmt].slots, "of the entry before, at",
					(unsigned long long)prev->pos);
		}
		cpu->n++;
		off += size;
	}
	return true;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct cpu *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* Whether --cpu asks for @cpu: a binary search of its ranges. */
static bool cpu_wanted(uint32_t cpu)
{
	size_t lo = 0, hi = opt.ncpus;

	if (!opt.cpu_filter)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (opt.cpus[mid].hi < cpu)
			lo = mid + 1;
		else if (opt.cpus[mid].lo > cpu)
			hi = mid;
		else
			return true;
	}
	return false;
}

/*
 * The CPU number of a cpu<N> file name as the kernel makes them: N in
 * decimal without a leading zero, 32 bits (struct ktr_raw_header's cpu).
 * Not "cpu01", which would be CPU 1 a second time.
 */
static bool cpu_file_name(const char *name, uint32_t *cpu)
{
	unsigned long long v;

	if (!kmt_cpu_name(name, UINT32_MAX, &v))
		return false;
	*cpu = v;
	return true;
}

/*
 * --follow: told of a cpu<N> file that is not there or cut short at this
 * read (@missing says which). In a dump both are fatal.
 */
static void follow_unreadable(uint32_t cpu, bool missing);

/*
 * Reads every cpu<N> file of the directory that --cpu wants, sorted by
 * CPU. One file open at a time, whatever the number of CPUs. With
 * --follow, a file that went away or is cut short (or is of a format
 * table not read yet) is left out of this read, and none at all is no
 * error: follow() decides when that has lasted too long.
 */
static struct cpu *load_cpus(const char *dir, size_t *ncpus)
{
	bool soft = opt.follow;
	struct cpu *cpus = NULL;
	size_t n = 0, cap = 0, j, k;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		io_fatal("%s: %s", dir, strerror(errno));
	for (errno = 0; (de = readdir(d)); errno = 0) {
		uint32_t c;
		char *path;

		if (!cpu_file_name(de->d_name, &c)) {
			const char *n = de->d_name + 3;

			if (!strncmp(de->d_name, "cpu", 3) && isdigit((unsigned char)*n) &&
			    strspn(n, "0123456789") == strlen(n))
				err_msg("%s/%s: ignored: not a cpu<N> name the kernel makes %s",
					dir, de->d_name, "(no leading 0, N < 2^32)");
			continue;
		}
		if (!cpu_wanted(c))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			cpus = xrealloc(cpus, cap, sizeof(*cpus));
		}
		memset(&cpus[n], 0, sizeof(cpus[n]));
		path = path_of(dir, de->d_name);
		cpus[n].data = (unsigned char *)read_input(path, &cpus[n].size, soft);
		if (!cpus[n].data || !parse_cpu(&cpus[n], path, soft)) {
			follow_unreadable(c, !cpus[n].data);
			free(cpus[n].data);
			free(cpus[n].ents);
			free(path);
			continue;
		}
		if (cpus[n].cpu != c)
			corrupt("%s: offset %zu: holds CPU %" PRIu32 ", not %" PRIu32 " as named",
				path, HDR_OFF(cpu), cpus[n].cpu, c);
		free(path);
		n++;
	}
	if (errno)
		io_fatal("%s: %s", dir, strerror(errno));
	closedir(d);
	if (!n && !soft)
		io_fatal("%s: no cpu<N> raw files%s", dir,
			 opt.cpu_filter ? " for the CPUs asked for" : "");
	if (n)
		qsort(cpus, n, sizeof(*cpus), cmp_cpu);
	for (j = 0; j < n; j++)
		for (k = 0; k < cpus[j].n; k++)
			cpus[j].ents[k].cpu = j;
	if (n > UINT32_MAX)
		io_fatal("%s: %zu cpu<N> files, more than %u", dir, n, UINT32_MAX);
	cur_cpus = cpus;
	*ncpus = n;
	return cpus;
}

static bool wanted(const struct entry *e)
{
	return fmts[e->fmt].class & opt.class_mask;
}

/*
 * The merge heap holds the CPUs that have entries left, keyed by the
 * time stamp of their next entry, then by CPU (the array is sorted by
 * CPU): the order of ktr_merge()'s scan, at log(CPUs) per entry. The key
 * is copied in, so that a comparison reads no CPU's entries.
 */
struct heap_ent {
	uint64_t ts;
	size_t cpu;		/* index in the array */
};

static bool heap_before(const struct heap_ent *a, const struct heap_ent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->cpu < b->cpu);
}

static void heap_down(struct heap_ent *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct heap_ent t;

		if (l < n && heap_before(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && heap_before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * The k-way merge of ktr_merge(): the next entry is the earliest of the
 * CPUs' next entries, the lower CPU's on equal time stamps; each CPU
 * keeps its own order. Return: the entries --classes wants, in that order.
 */
static const struct entry **merge(struct cpu *cpus, size_t ncpus, size_t *count)
{
	size_t total = 0, n = 0, nh = 0, j;
	const struct entry **out;
	struct heap_ent *h;

	for (j = 0; j < ncpus; j++) {
		total += cpus[j].n;
		cpus[j].next = 0;
	}
	out = xrealloc(NULL, total, sizeof(*out));
	h = xrealloc(NULL, ncpus, sizeof(*h));
	for (j = 0; j < ncpus; j++)
		if (cpus[j].n)
			h[nh++] = (struct heap_ent){ cpus[j].ents[0].ts, j };
	for (j = nh / 2; j-- > 0; )
		heap_down(h, nh, j);
	while (nh) {
		struct cpu *c = &cpus[h[0].cpu];
		const struct entry *e = &c->ents[c->next++];

		if (wanted(e))
			out[n++] = e;
		if (c->next == c->n)
			h[0] = h[--nh];
		else
			h[0].ts = c->ents[c->next].ts;
		heap_down(h, nh, 0);
	}
	free(h);
	*count = n;
	return out;
}

/* One line of output: @older_ts is the time stamp of the entry below, if any. */
static void print_entry(struct line *l, const struct entry *e, const uint64_t *older_ts)
{
	const struct cpu *c = &cur_cpus[e->cpu];
	size_t start;

	l->len = 0;
	lprintf(l, "%" PRIu32 " %3" PRIx64 " ", c->cpu, e->pos & (c->nslots - 1));
	if (opt.absolute) {
		lprintf(l, "%llu.%09llu ", (unsigned long long)(e->ts / 1000000000),
			(unsigned long long)(e->ts % 1000000000));
	} else {
		int64_t d = older_ts ? (int64_t)(e->ts - *older_ts) : 0;

		/* Negated unsigned: -d of INT64_MIN would overflow. */
		lprintf(l, "%s%*llx ", d < 0 ? "-" : "", d < 0 ? 7 : 8,
			d < 0 ? -(unsigned long long)d : (unsigned long long)d);
	}
	if (opt.lines)
		lprintf(l, "%s:%u ", fmts[e->fmt].file, fmts[e->fmt].line);
	start = l->len;
	format_entry(l, e);
	/* The kernel's line ends at a NUL (%c of 0), and at its buffer's end. */
	l->len = start + strnlen(l->buf + start, l->len - start);
	if (l->len - start > TRACE_MAX)
		l->len = start + TRACE_MAX;
	lappend(l, "\n", 1);
	out_put(l->buf, l->len);
}

static void print_header(void)
{
	if (opt.absolute)
		out_str("C Idx Time            Trace\n= === =============== =====\n");
	else
		out_str("C Idx Delta-T  Trace\n= === ======== =====\n");
}

static void free_cpus(struct cpu *cpus, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		free(cpus[j].data);
		free(cpus[j].ents);
	}
	free(cpus);
}

/* What the buffers hold, once. */
static int dump(void)
{
	struct line l = { 0 };
	const struct entry **order;
	size_t ncpus, n, i, j, dropping = 0;
	struct cpu *cpus = load_cpus(opt.dir, &ncpus);
	uint64_t dropped = 0;

	order = merge(cpus, ncpus, &n);
	print_header();
	for (i = 0; i < n && !kmt_stop_requested; i++) {
		size_t k = opt.oldest_first ? i : n - 1 - i;

		/* Delta-T: since the entry merged before, below it newest first. */
		print_entry(&l, order[k], k ? &order[k - 1]->ts : NULL);
	}
	out_flush();
	/* As at the end of the input (kmonparse too): not a problem of the data. */
	if (i < n)
		err_msg("stopped by a signal: %zu of %zu entries printed", i, n);
	for (j = 0; j < ncpus; j++) {
		dropped += cpus[j].dropped;
		dropping += !!cpus[j].dropped;
	}
	/* Not an error of the dump: it shows all there is. Said, not hidden. */
	if (dropped)
		err_msg("note: the kernel dropped %llu entries since boot (%s), on %zu of %zu CPUs",
			(unsigned long long)dropped,
			"not recorded: no buffer yet, or too large for it", dropping, ncpus);
	free(order);
	free(l.buf);
	free_cpus(cpus, ncpus);
	return KMT_EXIT_OK;
}

/* ---- --follow ------------------------------------------------------- */

/*
 * Slots [from, to) of a CPU that no read has shown yet, below the newest
 * entry read: overwritten before the read, or still being written when
 * it copied the buffer. The next read tells which: a hole it does not
 * fill is reported as missed.
 */
struct hole {
	uint64_t from, to;
	bool old;		/* found by an earlier read than the last one */
};

/* What --follow knows of one CPU. */
struct follow_cpu {
	uint32_t cpu;
	bool have_pos, have_dropped;
	uint64_t next;		/* the position after the newest entry read */
	uint64_t dropped;	/* the raw header's count at the last read */
	uint64_t new_dropped;	/* the increase at the last read, to report */
	struct hole *holes;	/* sorted, all below next */
	size_t nholes, cap;
	/* The newest entry read: another at its position is of another boot. */
	bool have_last;
	uint64_t last_pos, last_ts;
	unsigned int last_fmt;
	/* Reads in a row that found the file missing or cut short. */
	unsigned int bad_reads;
	bool read_now, cut_short, not_of_table;
};

struct follow {
	struct follow_cpu *cpus;	/* sorted by CPU */
	size_t n, cap;
	uint64_t printed, missed, dropped;
	size_t unread;			/* CPUs not read at the last read */
	unsigned int empty_reads;	/* in a row, of a directory without cpu files */
	unsigned int formats_bad;	/* in a row, of a formats file cut short */
	unsigned int classes_due;	/* reads since --classes names are read again */
	char *formats;			/* the formats file the table is of */
	size_t formats_size;
};

/*
 * Reads in a row after which a cpu<N> file (or the formats file) that is
 * missing or cut short ends --follow: a capture being copied over the
 * directory is whole again long before.
 */
#define FOLLOW_BAD_READS	10

static struct follow *follow_state;

/* @cpu's state, made if new. */
static struct follow_cpu *follow_cpu(struct follow *fs, uint32_t cpu)
{
	size_t lo = 0, hi = fs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fs->cpus[mid].cpu < cpu)
			lo = mid + 1;
		else if (fs->cpus[mid].cpu > cpu)
			hi = mid;
		else
			return &fs->cpus[mid];
	}
	if (fs->n == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 64;
		fs->cpus = xrealloc(fs->cpus, fs->cap, sizeof(*fs->cpus));
	}
	memmove(&fs->cpus[lo + 1], &fs->cpus[lo], (fs->n - lo) * sizeof(*fs->cpus));
	fs->n++;
	memset(&fs->cpus[lo], 0, sizeof(fs->cpus[lo]));
	fs->cpus[lo].cpu = cpu;
	return &fs->cpus[lo];
}

static void hole_insert(struct follow_cpu *fc, size_t i, struct hole h)
{
	if (fc->nholes == fc->cap) {
		fc->cap = fc->cap ? 2 * fc->cap : 8;
		fc->holes = xrealloc(fc->holes, fc->cap, sizeof(*fc->holes));
	}
	memmove(&fc->holes[i + 1], &fc->holes[i], (fc->nholes - i) * sizeof(*fc->holes));
	fc->holes[i] = h;
	fc->nholes++;
}

/*
 * An entry at slots [from, to) that is below fc->next: printed already,
 * unless it lies in a hole, which it then fills (in part). Return:
 * whether it did, so that it is to be printed now.
 */
static bool hole_fill(struct follow_cpu *fc, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = fc->nholes;
	bool hit = false;

	/* The first hole that ends after @from. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fc->holes[mid].to <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo < fc->nholes && fc->holes[lo].from < to) {
		struct hole *h = &fc->holes[lo];

		hit = true;
		if (h->from < from && h->to > to) {
			struct hole rest = { to, h->to, h->old };

			h->to = from;
			hole_insert(fc, lo + 1, rest);
			break;
		}
		if (h->to > to) {
			h->from = to;	/* its start filled */
			break;
		}
		if (h->from < from) {
			h->to = from;	/* its end filled */
			lo++;
			continue;
		}
		memmove(h, h + 1, (fc->nholes - lo - 1) * sizeof(*h));
		fc->nholes--;
	}
	return hit;
}

/*
 * Reports and forgets @fc's holes that a read after the one that found
 * them did not fill (all of them if @all: no read comes after), and the
 * entries the kernel dropped.
 */
static void follow_report(struct follow *fs, struct follow_cpu *fc, bool all)
{
	size_t i, k = 0;

	for (i = 0; i < fc->nholes; i++) {
		struct hole *h = &fc->holes[i];
		unsigned long long n = h->to - h->from;

		if (!h->old && !all) {
			h->old = true;
			fc->holes[k++] = *h;
			continue;
		}
		fs->missed += n;
		if (n == 1)
			err_msg("cpu%" PRIu32 ": missed 1 slot, position %llu: %s", fc->cpu,
				(unsigned long long)h->from,
				"overwritten or cleared before it was read");
		else
			err_msg("cpu%" PRIu32 ": missed %llu slots, positions %llu to %llu: %s",
				fc->cpu, n, (unsigned long long)h->from,
				(unsigned long long)h->to - 1,
				"overwritten or cleared before they were read");
	}
	fc->nholes = k;
	if (fc->new_dropped) {
		err_msg("cpu%" PRIu32 ": the kernel dropped %llu entries (not recorded)", fc->cpu,
			(unsigned long long)fc->new_dropped);
		fs->dropped += fc->new_dropped;
		fc->new_dropped = 0;
	}
}

static struct follow_cpu *follow_cpu(struct follow *fs, uint32_t cpu);

/* That CPU is read again at the next read. */
static void follow_unreadable(uint32_t cpu, bool missing)
{
	struct follow_cpu *fc = follow_cpu(follow_state, cpu);

	fc->cut_short = !missing;
	fc->not_of_table = cpu_not_of_table;
	cpu_not_of_table = false;
}

/*
 * Ends --follow if a CPU read before has been missing or cut short for
 * FOLLOW_BAD_READS reads in a row; else counts this read's.
 */
static void follow_check_bad(struct follow *fs)
{
	size_t j;

	for (j = 0; j < fs->n; j++) {
		struct follow_cpu *fc = &fs->cpus[j];

		if (fc->read_now) {
			fc->bad_reads = 0;
			fc->read_now = false;
			continue;
		}
		if (++fc->bad_reads < FOLLOW_BAD_READS)
			continue;
		if (fc->not_of_table)
			corrupt("%s/cpu%" PRIu32 ": %s at %u reads in a row", opt.dir, fc->cpu,
				"entries of formats not in the formats file", FOLLOW_BAD_READS);
		if (fc->cut_short)
			corrupt("%s/cpu%" PRIu32 ": cut short (%s) at %u reads in a row",
				opt.dir, fc->cpu, "a truncated header or entry", FOLLOW_BAD_READS);
		io_fatal("%s/cpu%" PRIu32 ": %s at %u reads in a row", opt.dir, fc->cpu,
			 strerror(ENOENT), FOLLOW_BAD_READS);
	}
}

/* The entry of @c at position @pos, or NULL: a binary search. */
static const struct entry *entry_at(const struct cpu *c, uint64_t pos)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->ents[mid].pos < pos)
			lo = mid + 1;
		else if (c->ents[mid].pos > pos)
			hi = mid;
		else
			return &c->ents[mid];
	}
	return NULL;
}

/*
 * Whether @c is of another boot than the reads before: the newest entry
 * read before stays, the same, until newer ones overwrite it, oldest
 * first. So another entry at its position, entries older than it but not
 * it, or a newest entry below it, are another capture's (one copied over
 * the directory), whose entries are new. Says which.
 */
static bool follow_new_boot(const struct follow_cpu *fc, const struct cpu *c)
{
	const struct entry *e, *last;

	if (!fc->have_last || !c->n)
		return false;
	last = &c->ents[c->n - 1];
	if (last->pos < fc->last_pos) {
		err_msg("cpu%" PRIu32 ": positions went back from %llu to %llu: %s", c->cpu,
			(unsigned long long)fc->last_pos, (unsigned long long)last->pos,
			"another boot? read anew");
		return true;
	}
	e = entry_at(c, fc->last_pos);
	if (e && e->ts == fc->last_ts && e->fmt == fc->last_fmt)
		return false;
	if (!e && c->ents[0].pos > fc->last_pos)
		return false;	/* overwritten since, as the buffer wraps */
	err_msg("cpu%" PRIu32 ": position %llu holds %s: %s", c->cpu,
		(unsigned long long)fc->last_pos,
		e ? "another entry than at the read before" : "no entry, but older ones do",
		"another boot? read anew");
	return true;
}

/*
 * Keeps of @c's entries those not printed yet, and notes the holes and
 * the kernel's drops this read shows.
 */
static void follow_read(struct follow *fs, struct cpu *c)
{
	struct follow_cpu *fc = follow_cpu(fs, c->cpu);
	size_t i, k = 0;

	fc->read_now = true;

	if (fc->have_dropped && c->dropped > fc->dropped)
		fc->new_dropped += c->dropped - fc->dropped;
	fc->dropped = c->dropped;	/* lower: a counter restarted (a reboot) */
	fc->have_dropped = true;
	if (follow_new_boot(fc, c)) {
		follow_report(fs, fc, true);
		fc->have_pos = false;
	}
	if (c->n) {
		const struct entry *last = &c->ents[c->n - 1];

		fc->have_last = true;
		fc->last_pos = last->pos;
		fc->last_ts = last->ts;
		fc->last_fmt = last->fmt;
	}
	for (i = 0; i < c->n; i++) {
		const struct entry *e = &c->ents[i];
		uint64_t end = e->pos + fmts[e->fmt].slots;

		if (fc->have_pos && e->pos < fc->next) {
			if (!hole_fill(fc, e->pos, end))
				continue;	/* printed by an earlier read */
		} else {
			if (!fc->have_pos) {
				fc->next = e->pos;
				fc->have_pos = true;
			}
			if (e->pos > fc->next)
				hole_insert(fc, fc->nholes,
					    (struct hole){ fc->next, e->pos, false });
			fc->next = end;
		}
		c->ents[k++] = *e;
	}
	c->n = k;
}

/* Waits --interval, or less if a stop signal comes (then or before). */
static void follow_sleep(void)
{
	struct timespec ts = {
		.tv_sec = opt.interval_ms / 1000,
		.tv_nsec = (opt.interval_ms % 1000) * 1000000L,
	};
	sigset_t stops, old;

	/* Blocked from the test to the wait, so that none comes in between. */
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigprocmask(SIG_BLOCK, &stops, &old);
	if (!kmt_stop_requested)
		ppoll(NULL, 0, &ts, &old);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void parse_classes(const char *s);

/*
 * --follow: the format table (and the class names of --classes) read anew
 * when the formats file changed: another boot's capture copied over the
 * directory, whose entries are decoded with its own table. A formats
 * file cut short (being copied) keeps the table before, for
 * FOLLOW_BAD_READS reads at most.
 */
static void follow_formats(struct follow *fs, const char *classes)
{
	char *path = path_of(opt.dir, "formats"), *data;
	size_t size;

	data = read_input(path, &size, true);
	free(path);
	if (data && fs->formats && size == fs->formats_size && !memcmp(data, fs->formats, size)) {
		free(data);
		fs->formats_bad = 0;
	} else if (fs->formats && (!data || !size || data[size - 1] != '\n') &&
		   ++fs->formats_bad < FOLLOW_BAD_READS) {
		/* Kept: the table before. At the first read there is none to keep. */
		free(data);
	} else {
		fs->formats_bad = 0;
		if (!data)
			data = read_formats(opt.dir, &size);	/* says why, exits 2 */
		free(fs->formats);
		fs->formats = xmalloc(size + 1);
		memcpy(fs->formats, data, size);
		fs->formats_size = size;
		load_formats(opt.dir, data, size);
		if (classes && !kmt_classes_numeric(classes))
			fs->classes_due = 1;
	}
	/*
	 * The names of --classes in the classes file of the new table, once it
	 * is there (a copy may not have made it yet): those of the table
	 * before until then, FOLLOW_BAD_READS reads at most.
	 */
	if (fs->classes_due) {
		path = path_of(opt.dir, "classes");
		if (!access(path, F_OK) || errno != ENOENT ||
		    ++fs->classes_due > FOLLOW_BAD_READS) {
			parse_classes(classes);
			fs->classes_due = 0;
		}
		free(path);
	}
}

/* --follow: print what is new since the last read, oldest first. */
static int follow(const char *classes)
{
	struct follow fs = { 0 };
	struct line l = { 0 };
	uint64_t last_ts = 0;
	bool have_last = false;
	size_t j;

	follow_state = &fs;
	print_header();
	for (;;) {
		bool last_read = kmt_stop_requested;
		const struct entry **order;
		size_t ncpus, n, i;
		struct cpu *cpus;

		follow_formats(&fs, classes);
		cpus = load_cpus(opt.dir, &ncpus);
		fs.empty_reads = ncpus ? 0 : fs.empty_reads + 1;
		if (fs.empty_reads >= FOLLOW_BAD_READS)
			io_fatal("%s: no cpu<N> raw files%s at %u reads in a row", opt.dir,
				 opt.cpu_filter ? " for the CPUs asked for" : "", FOLLOW_BAD_READS);

		for (j = 0; j < ncpus; j++)
			follow_read(&fs, &cpus[j]);
		order = merge(cpus, ncpus, &n);
		for (i = 0; i < n; i++) {
			print_entry(&l, order[i], have_last ? &last_ts : NULL);
			last_ts = order[i]->ts;
			have_last = true;
		}
		fs.printed += n;
		out_flush();
		/* After the entries, what this read shows was lost before them. */
		for (j = 0; j < ncpus; j++)
			follow_report(&fs, follow_cpu(&fs, cpus[j].cpu), false);
		follow_check_bad(&fs);
		free(order);
		free_cpus(cpus, ncpus);
		if (last_read)
			break;
		follow_sleep();
	}
	for (j = 0; j < fs.n; j++) {
		follow_report(&fs, &fs.cpus[j], true);
		/* Its newest entries, if any, were not read: said, counted. */
		if (fs.cpus[j].bad_reads) {
			err_msg("cpu%" PRIu32 ": %s at the last read: %s", fs.cpus[j].cpu,
				fs.cpus[j].cut_short ? "cut short" : "missing",
				"entries written since the read before not printed");
			fs.unread++;
		}
		free(fs.cpus[j].holes);
	}
	free(fs.cpus);
	free(fs.formats);
	free(l.buf);
	err_msg("%llu entries printed, %llu slot%s missed (%s), %llu dropped by the kernel",
		(unsigned long long)fs.printed, (unsigned long long)fs.missed,
		fs.missed == 1 ? "" : "s", "overwritten before a read",
		(unsigned long long)fs.dropped);
	return fs.missed || fs.dropped || fs.unread ? KMT_EXIT_DATA : KMT_EXIT_OK;
}

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
