// SPDX-License-Identifier: GPL-2.0
/*
 * ktrdump - decode KTR trace buffers, live or from a saved capture
 *
 * Reads the raw per-CPU files, the format table and the class names of
 * /sys/kernel/debug/kmemtrace/ktr (or of a copy of that directory made
 * on another machine), merges the CPUs by time stamp and prints the
 * entries as the kernel's own text view, kmemtrace/ktr/trace, prints
 * them: the layout of BSD/OS tdump(8), "C Idx Delta-T Trace".
 *
 * See Documentation/trace/ktr.rst.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/compiler.h>
#include <linux/ktr.h>

#include "kmt_classes.h"
#include "kmt_msg.h"

#define KTRDUMP_VERSION	"1.0"
#define LIVE_DIR	"/sys/kernel/debug/kmemtrace/ktr"
#define MAX_ARGS	5
#define NR_CLASSES	64
#define MAX_CPUS	4096
/* Longest Trace text the kernel prints: KTR_LINE_MAX - 1 in ktr.c. */
#define TRACE_MAX	511

/* One trace point of the format table. */
struct fmt {
	bool present;
	uint64_t class;
	unsigned int nargs;
	unsigned int wide;
	char *file;
	unsigned int line;
	char *text;
};

/* One decoded entry; strings point into the CPU's file data. */
struct entry {
	uint64_t ts;
	uint64_t pos;
	unsigned int cpu;
	unsigned int fmt;
	uint64_t args[MAX_ARGS];
	const char *str[MAX_ARGS];
};

/* One CPU's raw file. */
struct cpu {
	unsigned int cpu;
	unsigned int nslots;
	uint64_t dropped;
	unsigned char *data;
	size_t size;
	struct entry *ents;
	size_t n;
	size_t next;		/* merge cursor */
};

static const char *prog = "ktrdump";
static struct fmt *fmts;
static unsigned int nfmts;
static char *class_names[NR_CLASSES];

static struct {
	const char *dir;
	bool cpu_set[MAX_CPUS];
	bool cpu_filter;
	uint64_t class_mask;
	bool absolute;
	bool lines;
	bool oldest_first;
	bool follow;
	unsigned int interval_ms;
} opt = { .class_mask = ~0ULL, .interval_ms = 200 };

/* Set by SIGINT and SIGTERM; --follow stops after one last read. */
static sig_atomic_t stop;

#define err_msg(...)	kmt_warn(prog, __VA_ARGS__)

#define fatal(...)	kmt_die(prog, 1, __VA_ARGS__)

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		fatal("out of memory (%zu bytes)", n);
	return p;
}

static const char help_text[] =
	"Decode KTR trace buffers: the live " LIVE_DIR "\n"
	"(the default) or DIR, a copy of it (formats, classes, cpu<N>) saved on\n"
	"any machine. Prints what " LIVE_DIR "/trace prints:\n"
	"all CPUs merged by time stamp, newest first, in the layout of tdump:\n"
	"C (CPU), Idx (slot, hex), Delta-T (ns since the entry below, hex), Trace.\n"
	"\n"
	"  -c, --cpu=LIST       only the CPUs in LIST (e.g. 0,2-3)\n"
	"  -m, --class=CLASSES  only entries in CLASSES: a mask (0x...) or names\n"
	"                       from the classes file, comma-separated (gen,dev)\n"
	"  -a, --absolute       time stamps in seconds instead of Delta-T\n"
	"  -r, --relative       Delta-T (the default)\n"
	"  -l, --lines          show the file:line of each trace point\n"
	"  -o, --oldest-first   oldest entry first\n"
	"  -f, --follow         keep reading the live buffers and print new\n"
	"                       entries, oldest first, until interrupted\n"
	"  -i, --interval=MS    how often --follow reads (default 200)\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 on bad usage or a bad or truncated input.\n";

static void show_help(FILE *f)
{
	fprintf(f, "Usage: %s [OPTION]... [DIR]\n", prog);
	fputs(help_text, f);
}

/* Reads a whole file; NULL with errno set if it cannot. */
static unsigned char *read_file(const char *path, size_t *size)
{
	size_t cap = 65536, len = 0;
	unsigned char *buf;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	buf = xmalloc(cap + 1);
	for (;;) {
		size_t r = fread(buf + len, 1, cap - len, f);

		len += r;
		if (len < cap) {
			if (ferror(f)) {
				int e = errno;

				fclose(f);
				free(buf);
				errno = e;
				return NULL;
			}
			break;
		}
		cap *= 2;
		buf = realloc(buf, cap + 1);
		if (!buf)
			fatal("out of memory reading %s", path);
	}
	fclose(f);
	buf[len] = '\0';
	*size = len;
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

/* formats: "id class nargs wide file:line "format"" per line. */
static void load_formats(const char *dir)
{
	char path[4096], *data, *line, *next;
	size_t size;
	unsigned int lineno = 0;

	snprintf(path, sizeof(path), "%s/formats", dir);
	data = (char *)read_file(path, &size);
	if (!data)
		fatal("%s: %s", path, strerror(errno));
	for (line = data; line < data + size; line = next) {
		unsigned long long id, class;
		unsigned int nargs, wide, fline;
		char *nl = memchr(line, '\n', data + size - line);
		char *q, *colon, *sp;
		int off = 0;
		bool ok;

		lineno++;
		if (!nl)
			fatal("%s: line %u: truncated (no newline)", path, lineno);
		*nl = '\0';
		next = nl + 1;
		if (sscanf(line, "%llu %llx %u %x %n", &id, &class, &nargs, &wide, &off) != 4 ||
		    !off || nargs > MAX_ARGS)
			fatal("%s: line %u: not a format line: %s", path, lineno, line);
		/*
		 * The kernel numbers the lines from 0; a larger id would make
		 * the table larger than the file (a line of id 0xffffff: 805 MB).
		 */
		if (id >= lineno)
			fatal("%s: line %u: id %llu, above the line's %u (%s)", path, lineno, id,
			      lineno - 1, "ids count the lines from 0");
		sp = line + off;
		q = strchr(sp, ' ');
		colon = q ? memrchr(sp, ':', q - sp) : NULL;
		if (!q || !colon || q[1] != '"' || nl - q < 3 || nl[-1] != '"' ||
		    sscanf(colon + 1, "%u", &fline) != 1)
			fatal("%s: line %u: not a format line: %s", path, lineno, line);
		if (id >= nfmts) {
			unsigned int n = id + 1;

			fmts = realloc(fmts, n * sizeof(*fmts));
			if (!fmts)
				fatal("out of memory");
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
		if (!ok)
			fatal("%s: line %u: bad escape in the format", path, lineno);
	}
	free(data);
}

/* classes: "bit name compiled enabled" per line, '#' comments. */
static void load_classes(const char *dir)
{
	char path[4096], line[256], name[64];
	unsigned int bit;
	FILE *f;

	snprintf(path, sizeof(path), "%s/classes", dir);
	f = fopen(path, "r");
	if (!f)
		return;		/* names are optional; masks always work */
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '#' && sscanf(line, "%u %63s", &bit, name) == 2 &&
		    bit < NR_CLASSES) {
			free(class_names[bit]);	/* a bit named twice: the last name */
			class_names[bit] = strdup(name);
		}
	}
	fclose(f);
}

/* ---- Formats: the same rules as ktr_parse_conv() in the kernel ---- */

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

/* Appends printf output to a growing line. */
struct line {
	char *buf;
	size_t len, cap;
};

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
			fatal("cannot format an entry");
		if ((size_t)n < l->cap - l->len)
			break;
		l->cap = (l->cap + n + 1) * 2;
		l->buf = realloc(l->buf, l->cap);
		if (!l->buf)
			fatal("out of memory");
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
	const char *p, *why = check_fmt(f);
	unsigned int n = 0;
	struct conv c;

	if (why) {
		lprintf(l, "<bad format at %s:%u: %s>", f->file, f->line, why);
		return;
	}
	for (p = f->text; *p; p++) {
		if (*p != '%') {
			lprintf(l, "%c", *p);
			continue;
		}
		p += parse_conv(p, &c) - 1;
		if (c.kind == K_PERCENT)
			lprintf(l, "%%");
		else if (c.kind == K_STR || c.kind == K_PTR)
			lprintf(l, c.spec, e->str[n++]);
		else
			format_int(l, &c, e->args[n++]);
	}
}

#pragma GCC diagnostic pop

/* ---- Raw files ------------------------------------------------------ */

/*
 * Points the entry's %s and %p arguments at their text, which the record
 * of @size bytes at @rec holds after its @fixed bytes of header and
 * arguments; exits naming the file and offset if an offset is bad.
 */
static void find_strings(struct entry *e, const struct fmt *f,
			 const unsigned char *rec, size_t fixed, size_t size,
			 const char *path, size_t off)
{
	unsigned int n = 0;
	struct conv c;
	const char *p;

	for (p = f->text; (p = next_conv(p, &c)); n++) {
		uint64_t so = e->args[n];

		if (c.kind != K_STR && c.kind != K_PTR)
			continue;
		if (so < fixed || so >= size || !memchr(rec + so, '\0', size - so))
			fatal("%s: offset %zu: argument %u: bad string offset %llu",
			      path, off, n, (unsigned long long)so);
		e->str[n] = (const char *)rec + so;
	}
}

/* Parses one CPU's raw file; exits naming the file and offset if bad. */
static void parse_cpu(struct cpu *cpu, const char *path)
{
	struct ktr_raw_header h;
	size_t off, cap;

	if (cpu->size < sizeof(h))
		fatal("%s: offset 0: truncated header (%zu of %zu bytes)", path,
		      cpu->size, sizeof(h));
	memcpy(&h, cpu->data, sizeof(h));
	if (h.magic == __builtin_bswap64(KTR_RAW_MAGIC))
		fatal("%s: offset 0: written on a machine of the other byte order",
		      path);
	if (h.magic != KTR_RAW_MAGIC)
		fatal("%s: offset 0: not a KTR raw file (magic %#llx)",
		      path, (unsigned long long)h.magic);
	if (h.version != KTR_RAW_VERSION)
		fatal("%s: offset 8: version %u, this %s reads version %u", path,
		      h.version, prog, KTR_RAW_VERSION);
	if (h.header_size < sizeof(h) || h.header_size > cpu->size || h.header_size % 8)
		fatal("%s: offset 12: bad header size %u", path, h.header_size);
	if (!h.nslots || (h.nslots & (h.nslots - 1)))
		fatal("%s: offset 20: slot count %u is not a power of 2", path, h.nslots);
	cpu->cpu = h.cpu;
	cpu->nslots = h.nslots;
	cpu->dropped = h.dropped;

	cap = (cpu->size - h.header_size) / sizeof(struct ktr_raw_entry) + 1;
	cpu->ents = xmalloc(cap * sizeof(*cpu->ents));
	cpu->n = 0;
	for (off = h.header_size; off < cpu->size; ) {
		struct ktr_raw_entry r;
		struct entry *e = &cpu->ents[cpu->n];
		const unsigned char *rec = cpu->data + off;
		const struct fmt *f;
		size_t fixed;
		unsigned int i;

		if (cpu->size - off < sizeof(r))
			fatal("%s: offset %zu: truncated entry (%zu bytes left)",
			      path, off, cpu->size - off);
		memcpy(&r, rec, sizeof(r));
		fixed = sizeof(r) + r.nargs * sizeof(uint64_t);
		if (r.nargs > MAX_ARGS)
			fatal("%s: offset %zu: %u arguments, at most %d", path, off,
			      r.nargs, MAX_ARGS);
		if (r.size < fixed || r.size % 8)
			fatal("%s: offset %zu: bad entry size %u", path, off, r.size);
		if (r.size > cpu->size - off)
			fatal("%s: offset %zu: truncated entry (%u bytes, %zu left)",
			      path, off, r.size, cpu->size - off);
		if (r.fmt >= nfmts || !fmts[r.fmt].present)
			fatal("%s: offset %zu: format %u is not in the format table",
			      path, off, r.fmt);
		f = &fmts[r.fmt];
		if (f->nargs != r.nargs)
			fatal("%s: offset %zu: %u arguments, format %u has %u", path,
			      off, r.nargs, r.fmt, f->nargs);
		e->ts = r.ts;
		e->pos = r.pos;
		e->cpu = h.cpu;
		e->fmt = r.fmt;
		for (i = 0; i < r.nargs; i++) {
			memcpy(&e->args[i], rec + sizeof(r) + i * 8, 8);
			e->str[i] = NULL;
		}
		/* Strings: where the format has %s or %p, if it is printable. */
		if (!check_fmt(f))
			find_strings(e, f, rec, fixed, r.size, path, off);
		if (cpu->n && e->pos <= cpu->ents[cpu->n - 1].pos)
			fatal("%s: offset %zu: position %llu does not follow %llu",
			      path, off, (unsigned long long)e->pos,
			      (unsigned long long)cpu->ents[cpu->n - 1].pos);
		cpu->n++;
		off += r.size;
	}
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct cpu *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* Reads every cpu<N> file of the directory, sorted by CPU. */
static struct cpu *load_cpus(const char *dir, unsigned int *ncpus, bool quiet_missing)
{
	struct cpu *cpus = NULL;
	unsigned int n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		fatal("%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		char path[4096], *end;
		unsigned long c;

		if (strncmp(de->d_name, "cpu", 3) || !isdigit((unsigned char)de->d_name[3]))
			continue;
		c = strtoul(de->d_name + 3, &end, 10);
		if (*end || c >= MAX_CPUS)
			continue;
		if (opt.cpu_filter && !opt.cpu_set[c])
			continue;
		cpus = realloc(cpus, (n + 1) * sizeof(*cpus));
		if (!cpus)
			fatal("out of memory");
		memset(&cpus[n], 0, sizeof(cpus[n]));
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		cpus[n].data = read_file(path, &cpus[n].size);
		if (!cpus[n].data)
			fatal("%s: %s", path, strerror(errno));
		parse_cpu(&cpus[n], path);
		if (cpus[n].cpu != c)
			fatal("%s: offset 16: holds CPU %u", path, cpus[n].cpu);
		n++;
	}
	closedir(d);
	if (!n && !quiet_missing)
		fatal("%s: no cpu<N> raw files%s", dir,
		      opt.cpu_filter ? " for the CPUs asked for" : "");
	qsort(cpus, n, sizeof(*cpus), cmp_cpu);
	*ncpus = n;
	return cpus;
}

static bool wanted(const struct entry *e)
{
	return fmts[e->fmt].class & opt.class_mask;
}

/* The k-way merge of ktr_merge(): earliest first, lower CPU on ties. */
static const struct entry **merge(struct cpu *cpus, unsigned int ncpus, size_t *count)
{
	size_t total = 0, n = 0;
	const struct entry **out;
	unsigned int j;

	for (j = 0; j < ncpus; j++) {
		total += cpus[j].n;
		cpus[j].next = 0;
	}
	out = xmalloc(total * sizeof(*out));
	for (;;) {
		int best = -1;

		for (j = 0; j < ncpus; j++) {
			if (cpus[j].next >= cpus[j].n)
				continue;
			if (best < 0 || cpus[j].ents[cpus[j].next].ts <
					cpus[best].ents[cpus[best].next].ts)
				best = j;
		}
		if (best < 0)
			break;
		out[n] = &cpus[best].ents[cpus[best].next++];
		if (wanted(out[n]))
			n++;
	}
	*count = n;
	return out;
}

static unsigned int nslots_of(const struct cpu *cpus, unsigned int ncpus, unsigned int cpu)
{
	unsigned int j;

	for (j = 0; j < ncpus; j++)
		if (cpus[j].cpu == cpu)
			return cpus[j].nslots;
	return 1;
}

static void print_entry(struct line *l, const struct entry *e, const struct entry *older,
			unsigned int nslots)
{
	size_t start;

	l->len = 0;
	lprintf(l, "%u %3llx ", e->cpu, (unsigned long long)(e->pos & (nslots - 1)));
	if (opt.absolute) {
		lprintf(l, "%llu.%09llu ", (unsigned long long)(e->ts / 1000000000),
			(unsigned long long)(e->ts % 1000000000));
	} else {
		int64_t d = older ? (int64_t)(e->ts - older->ts) : 0;

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
	lprintf(l, "\n");
	fputs(l->buf, stdout);
}

static void print_header(void)
{
	if (opt.absolute)
		printf("C Idx Time            Trace\n= === =============== =====\n");
	else
		printf("C Idx Delta-T  Trace\n= === ======== =====\n");
}

static void free_cpus(struct cpu *cpus, unsigned int n)
{
	unsigned int j;

	for (j = 0; j < n; j++) {
		free(cpus[j].data);
		free(cpus[j].ents);
	}
	free(cpus);
}

static int dump(void)
{
	struct line l = { 0 };
	const struct entry **order;
	unsigned int ncpus;
	struct cpu *cpus = load_cpus(opt.dir, &ncpus, false);
	size_t n, i;

	order = merge(cpus, ncpus, &n);
	print_header();
	for (i = 0; i < n; i++) {
		size_t k = opt.oldest_first ? i : n - 1 - i;
		const struct entry *older = NULL;

		if (opt.oldest_first)
			older = i ? order[i - 1] : NULL;
		else
			older = k ? order[k - 1] : NULL;
		print_entry(&l, order[k], older, nslots_of(cpus, ncpus, order[k]->cpu));
	}
	if (fflush(stdout) == EOF)
		fatal("writing the output: %s", strerror(errno));
	free(order);
	free(l.buf);
	free_cpus(cpus, ncpus);
	return 0;
}

static void on_signal(int sig)
{
	stop = 1;
}

/* --follow: print what is new since the last read, oldest first. */
static int follow(void)
{
	uint64_t seen[MAX_CPUS] = { 0 }, printed = 0, missed = 0;
	bool have[MAX_CPUS] = { false };
	const struct entry *last = NULL;
	struct entry last_copy;
	struct line l = { 0 };

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	print_header();
	for (;;) {
		bool last_read = stop;
		unsigned int ncpus, j;
		struct cpu *cpus = load_cpus(opt.dir, &ncpus, false);
		const struct entry **order;
		size_t n, i;

		/* Keep only what was not printed; count what was overwritten. */
		for (j = 0; j < ncpus; j++) {
			struct cpu *c = &cpus[j];
			size_t k = 0, s;

			for (s = 0; s < c->n; s++) {
				if (have[c->cpu] && c->ents[s].pos < seen[c->cpu])
					continue;
				c->ents[k++] = c->ents[s];
			}
			if (have[c->cpu] && k && c->ents[0].pos > seen[c->cpu] + 1)
				missed += 1;
			c->n = k;
		}
		order = merge(cpus, ncpus, &n);
		for (i = 0; i < n; i++) {
			print_entry(&l, order[i], last, nslots_of(cpus, ncpus, order[i]->cpu));
			last_copy = *order[i];
			last = &last_copy;
			printed++;
		}
		for (j = 0; j < ncpus; j++) {
			if (cpus[j].n) {
				seen[cpus[j].cpu] = cpus[j].ents[cpus[j].n - 1].pos + 1;
				have[cpus[j].cpu] = true;
			}
		}
		fflush(stdout);
		free(order);
		/* Strings of the last entry live in the CPU's data. */
		if (last)
			memset(last_copy.str, 0, sizeof(last_copy.str));
		free_cpus(cpus, ncpus);
		if (last_read)
			break;
		/* A signal cuts the sleep short; the loop then reads once more. */
		if (!stop)
			usleep(opt.interval_ms * 1000);
	}
	fprintf(stderr, "%s: %llu entries printed, %llu reads missed overwritten entries\n",
		prog, (unsigned long long)printed, (unsigned long long)missed);
	free(l.buf);
	return 0;
}

static void parse_cpus(const char *s)
{
	const char *p = s;

	opt.cpu_filter = true;
	while (*p) {
		char *end;
		unsigned long a, b;

		if (!isdigit((unsigned char)*p))
			goto bad;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				goto bad;
			b = strtoul(end + 1, &end, 10);
		}
		if (a > b || b >= MAX_CPUS)
			goto bad;
		for (; a <= b; a++)
			opt.cpu_set[a] = true;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	return;
bad:
	err_msg("--cpu: '%s' is not a CPU list such as 0,2-3", s);
	exit(1);
}

static void parse_classes(const char *s)
{
	char bad[64];
	int ret;

	/* A mask needs no classes file; names are looked up in it. */
	if (!kmt_classes_numeric(s))
		load_classes(opt.dir);
	ret = kmt_parse_classes(s, (const char *const *)class_names, &opt.class_mask,
				bad, sizeof(bad));
	if (ret == -EINVAL)
		err_msg("--class: '%s' is not a 64-bit mask", s);
	else if (ret == -ENOENT)
		err_msg("--class: no class '%s' in %s/classes", bad, opt.dir);
	else if (ret)
		err_msg("--class: %s", strerror(-ret));
	else if (!opt.class_mask && !kmt_classes_numeric(s))
		err_msg("--class: '%s' names no class", s);
	else
		return;
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "class", required_argument, NULL, 'm' },
		{ "absolute", no_argument, NULL, 'a' },
		{ "relative", no_argument, NULL, 'r' },
		{ "lines", no_argument, NULL, 'l' },
		{ "oldest-first", no_argument, NULL, 'o' },
		{ "follow", no_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	const char *classes = NULL;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "c:m:arlofi:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			parse_cpus(optarg);
			break;
		case 'm':
			classes = optarg;
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
			opt.oldest_first = true;
			break;
		case 'f':
			opt.follow = true;
			break;
		case 'i':
			errno = 0;
			opt.interval_ms = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || !opt.interval_ms ||
			    opt.interval_ms > 3600000) {
				err_msg("--interval: '%s' is not from 1 to 3600000 ms",
					optarg);
				return 1;
			}
			break;
		case 'h':
			show_help(stdout);
			return 0;
		case 'V':
			printf("%s %s (KTR raw format %d)\n", prog, KTRDUMP_VERSION,
			       KTR_RAW_VERSION);
			return 0;
		default:
			show_help(stderr);
			return 1;
		}
	}
	if (argc - optind > 1) {
		err_msg("one directory at most, got '%s' and '%s'", argv[optind],
			argv[optind + 1]);
		show_help(stderr);
		return 1;
	}
	opt.dir = optind < argc ? argv[optind] : LIVE_DIR;
	if (classes)
		parse_classes(classes);
	load_formats(opt.dir);
	return opt.follow ? follow() : dump();
}
