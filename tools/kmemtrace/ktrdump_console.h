/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrdump_console.h - --console: the dump that ktr.dump_on_oops prints
 * on a panic or an oops, read back from a saved console log (a serial
 * capture, dmesg, journalctl -k, a netconsole or pstore file).
 *
 * The kernel prints, each line after its "ktr: " prefix:
 *
 *   tracing stopped on WHY; the last N entries of every CPU, newest first:
 *   C Idx Delta-T  Trace
 *   CPU IDX DELTA TEXT		(%u %3lx, then %8llx or -%7llx, then the text)
 *
 * where DELTA is the time since the line below. Whatever comes before
 * "ktr: " on a line (printk's time stamp and caller id, a syslog date,
 * host and tag, "<0>") is passed over, as is a CR before the line's end;
 * lines without the prefix (other CPUs' messages, interleaved) are
 * skipped. The last dump of the log is decoded (a log may hold several
 * boots); it ends at the first other "ktr: " line, at the next boot's
 * "Linux version" or at the end of the log. A line of the dump that is
 * not in its layout, and printk's "messages dropped" within the dump,
 * are counted and said, never passed over silently; NULs, a serial
 * line's noise, are dropped.
 *
 * The time of each entry is rebuilt from the sum of the Delta-Ts above
 * it, so that --cpu and --oldest-first print what they print from the
 * raw files: the Delta-T between the entries shown. Across a lost line
 * that sum is unknown, and Delta-T is printed as "?". The console has no
 * class, no file:line and no absolute time: -C, -l and -a are refused.
 *
 * Memory is one line of at most CON_LINE_MAX bytes (a longer one is not
 * the kernel's) and the entries of the dump being read: as much as the
 * dump's text, whatever the size of the log around it.
 */
#ifndef KMT_KTRDUMP_CONSOLE_H
#define KMT_KTRDUMP_CONSOLE_H

#include "ktrdump_raw.h"

/* The kernel's line: a prefix, the entry's fields, its text (ktr_dump()). */
#define CON_LINE_MAX	4096
#define CON_PREFIX	"ktr: "
#define CON_STOPPED	"tracing stopped on "
#define CON_STOPPED_N	"; the last "
#define CON_STOPPED_END	" entries of every CPU, newest first:"
#define CON_HEADER	"C Idx Delta-T  Trace"

/* One entry of the dump, as printed. */
struct con_ent {
	uint64_t t;		/* rebuilt: 0 for the newest, below it less */
	uint64_t delta;		/* as printed, to the line below */
	unsigned long seg;	/* lines lost above it: times compare within one */
	uint32_t cpu;
	uint64_t idx;
	char *text;
};

/* The dump being read: the last one of the log when it ends. */
struct con_dump {
	struct con_ent *ents;
	size_t n, cap;
	unsigned long long line;	/* of its "tracing stopped" line */
	unsigned long long bad_line;	/* the first line not in the layout */
	unsigned long long nbad;
	unsigned long long ndropped;	/* printk's "messages dropped" lines in it */
	unsigned long seg;		/* gaps so far: lines lost */
	unsigned long per_cpu;		/* N of its first line */
	char why[64];
	bool header, open;
};

static void con_reset(struct con_dump *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->ents[i].text);
	d->n = 0;
	d->nbad = 0;
	d->ndropped = 0;
	d->seg = 0;
	d->bad_line = 0;
	d->header = false;
	d->open = false;
}

/*
 * Where "ktr: " starts the kernel's message in @s, or NULL: at the
 * start, or after a prefix of the kernel's or a log's: one that ends in
 * ']' (printk's time and caller, dmesg -T), '>' (a level), ';'
 * (/dev/kmsg's record header), "kernel: " (syslog, journalctl) or " : "
 * (dmesg -x), a blank after it or not. A
 * "ktr: " within another message ("Comm: ktr: ...") is not the dump's.
 */
static const char *con_message(const char *s)
{
	const char *p, *e;

	for (p = s; (p = strstr(p, CON_PREFIX)); p++) {
		e = p;
		if (e > s && e[-1] == ' ' && e - 1 > s && (e[-2] == ']' || e[-2] == '>'))
			e--;
		if (e == s || e[-1] == ']' || e[-1] == '>' || e[-1] == ';' ||
		    (e - s >= 8 && !strncmp(e - 8, "kernel: ", 8)) ||
		    (e - s >= 3 && !strncmp(e - 3, " : ", 3)))
			return p + strlen(CON_PREFIX);
	}
	return NULL;
}

/* A hex number of 1 to 16 digits at *@s, past the blanks before it. */
static bool con_hex(const char **s, uint64_t *v)
{
	const char *p = *s;
	unsigned int n = 0;

	while (*p == ' ')
		p++;
	*v = 0;
	for (; isxdigit((unsigned char)*p); p++, n++) {
		if (n == 16)
			return false;
		*v = *v << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0' :
					  tolower((unsigned char)*p) - 'a' + 10);
	}
	*s = p;
	return n > 0;
}

/* "CPU IDX DELTA TEXT" into @e (its text not yet copied), or false. */
static bool con_parse_entry(const char *s, struct con_ent *e, const char **text)
{
	unsigned long long cpu;
	bool neg = false;
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	cpu = strtoull(s, &end, 10);
	if (errno || cpu > UINT32_MAX || *end != ' ')
		return false;
	s = end;
	if (!con_hex(&s, &e->idx) || *s != ' ')
		return false;
	while (*s == ' ')
		s++;
	if (*s == '-') {
		neg = true;
		s++;
	}
	if (!con_hex(&s, &e->delta))
		return false;
	/* The text after one blank; an empty text may have lost its blank. */
	if (*s && *s != ' ')
		return false;
	*text = *s ? s + 1 : s;
	e->cpu = cpu;
	if (neg)
		e->delta = -e->delta;
	return true;
}

/* "tracing stopped on WHY; the last N entries ...": a new dump. */
static bool con_parse_stopped(const char *s, struct con_dump *d)
{
	const char *why = s + strlen(CON_STOPPED), *n;
	unsigned long per_cpu;
	char *end;

	if (strncmp(s, CON_STOPPED, strlen(CON_STOPPED)))
		return false;
	n = strstr(why, CON_STOPPED_N);
	if (!n || !isdigit((unsigned char)n[strlen(CON_STOPPED_N)]))
		return false;
	errno = 0;
	per_cpu = strtoul(n + strlen(CON_STOPPED_N), &end, 10);
	if (errno || strcmp(end, CON_STOPPED_END))
		return false;
	con_reset(d);
	d->per_cpu = per_cpu;
	snprintf(d->why, sizeof(d->why), "%.*s", (int)(n - why), why);
	d->open = true;
	return true;
}

/*
 * A line of the dump lost (not in its layout, or too long): counted, and
 * the time between the entries either side of it is unknown.
 */
static void con_bad_line(struct con_dump *d, unsigned long long lineno)
{
	if (!d->open || !d->header)
		return;
	if (!d->nbad++)
		d->bad_line = lineno;
	d->seg++;
}

/* One line of the log, its end of line removed. */
static void con_line(struct con_dump *d, const char *s, unsigned long long lineno,
		     unsigned long long *ndumps)
{
	struct con_ent e;
	const char *text;

	/* The first line of a boot ends the dump of the boot before. */
	if (strstr(s, "Linux version ")) {
		d->open = false;
		return;
	}
	/* printk lost messages here, maybe lines of the dump. */
	if (d->open && d->header && strstr(s, " printk messages dropped **")) {
		d->ndropped++;
		d->seg++;
		return;
	}
	s = con_message(s);
	if (!s)
		return;
	if (con_parse_stopped(s, d)) {
		d->line = lineno;
		++*ndumps;
		return;
	}
	if (!d->open)
		return;
	if (!d->header) {
		/* The layout's header comes next, or this is not a dump. */
		if (!strcmp(s, CON_HEADER))
			d->header = true;
		else
			d->open = false;
		return;
	}
	if (!con_parse_entry(s, &e, &text)) {
		/* Another message of KTR's ends the dump; a cut entry does not. */
		if (!isdigit((unsigned char)*s)) {
			d->open = false;
			return;
		}
		con_bad_line(d, lineno);
		return;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->ents = xrealloc(d->ents, d->cap, sizeof(*d->ents));
	}
	e.seg = d->seg;
	e.text = strdup(text);
	if (!e.text)
		io_fatal("out of memory (a line of %zu bytes)", strlen(text));
	d->ents[d->n++] = e;
}

/*
 * The log at @path ("-": standard input), read a line at a time: the
 * last dump in it into @d. Returns the number of dumps found.
 */
static unsigned long long con_read(const char *path, struct con_dump *d)
{
	unsigned long long lineno = 0, ndumps = 0;
	static char buf[CON_LINE_MAX];
	bool stdin_ = !strcmp(path, "-");
	FILE *f;

	if (!stdin_ && kmt_same_fd_file(STDOUT_FILENO, path))
		io_fatal("%s: the standard output goes to this input file: write it elsewhere",
			 path);
	do {
		f = stdin_ ? stdin : fopen(path, "r");
	} while (!f && errno == EINTR);
	if (!f)
		io_fatal("%s: %s", path, strerror(errno));
	for (;;) {
		bool too_long = false;
		size_t len = 0;
		int c;

		/*
		 * A byte at a time: a NUL (a serial line's noise) is dropped,
		 * not taken for the line's end, and what is beyond the kernel's
		 * longest line is counted, not kept.
		 */
		for (;;) {
			errno = 0;
			c = getc_unlocked(f);
			if (c == EOF && ferror(f) && errno == EINTR) {
				/* A first stop signal interrupts a read from a pipe: read on. */
				clearerr(f);
				continue;
			}
			if (c == EOF || c == '\n')
				break;
			if (!c)
				continue;
			if (len < sizeof(buf) - 1)
				buf[len++] = c;
			else
				too_long = true;
		}
		if (c == EOF && (ferror(f) || (!len && !too_long)))
			break;
		lineno++;
		if (too_long) {
			con_bad_line(d, lineno);
		} else {
			while (len && buf[len - 1] == '\r')
				len--;
			buf[len] = '\0';
			con_line(d, buf, lineno, &ndumps);
		}
		if (c == EOF)
			break;
	}
	if (ferror(f))
		io_fatal("%s: %s", path, strerror(errno ?: EIO));
	if (!stdin_)
		fclose(f);
	return ndumps;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * --console: the last dump of the log, decoded as the raw files are:
 * newest first (or oldest with -O), the CPUs of --cpu, Delta-T between
 * the lines printed. 1 if the log has no dump or lines of it are not in
 * its layout.
 */
static int console_dump(const char *path)
{
	struct con_dump d = { 0 };
	struct line l = { 0 };
	unsigned long long ndumps = con_read(path, &d);
	const char *name = strcmp(path, "-") ? path : "standard input";
	size_t i, j, n = 0, ncpus = 0, over = 0;
	const struct con_ent **show;
	int ret = KMT_EXIT_OK;
	uint32_t *cpus;

	if (!ndumps) {
		err_msg("%s: no KTR dump (\"%s%s...\"): boot with ktr.dump_on_oops=N", name,
			CON_PREFIX, CON_STOPPED);
		return KMT_EXIT_DATA;
	}
	/*
	 * The times: the newest 0, each line Delta-T after the one below, in
	 * each run of lines without a gap (a lost line's Delta-T is lost).
	 */
	for (i = 1; i < d.n; i++)
		d.ents[i].t = d.ents[i].seg != d.ents[i - 1].seg ? 0 :
			      d.ents[i - 1].t - d.ents[i - 1].delta;
	/* CPUs and entries per CPU: at most N each, or two dumps are mixed. */
	cpus = xmalloc(d.n * sizeof(*cpus));
	for (i = 0; i < d.n; i++)
		cpus[i] = d.ents[i].cpu;
	qsort(cpus, d.n, sizeof(*cpus), cmp_u32);
	for (i = 0; i < d.n; i = j) {
		for (j = i; j < d.n && cpus[j] == cpus[i]; j++)
			;
		ncpus++;
		over += j - i > d.per_cpu;
	}
	free(cpus);
	err_msg("%s: line %llu: tracing stopped on %s: %zu entries of %zu CPUs (at most %lu each)%s",
		name, d.line, d.why, d.n, ncpus, d.per_cpu,
		ndumps > 1 ? ", the last of the log's dumps" : "");
	/* The entries shown, newest first: each one's Delta-T is to the next. */
	show = xmalloc(d.n * sizeof(*show));
	for (i = 0; i < d.n; i++)
		if (cpu_wanted(d.ents[i].cpu))
			show[n++] = &d.ents[i];
	print_header();
	for (i = 0; i < n && !kmt_stop_requested; i++) {
		size_t k = opt.oldest_first ? n - 1 - i : i;
		const struct con_ent *e = show[k];
		int64_t dt = k + 1 < n ? (int64_t)(e->t - show[k + 1]->t) : 0;

		l.len = 0;
		lprintf(&l, "%" PRIu32 " %3" PRIx64 " ", e->cpu, e->idx);
		if (k + 1 < n && show[k + 1]->seg != e->seg)
			lprintf(&l, "%8s ", "?");
		else
			lprintf(&l, "%s%*llx ", dt < 0 ? "-" : "", dt < 0 ? 7 : 8,
				dt < 0 ? -(unsigned long long)dt : (unsigned long long)dt);
		lprintf(&l, "%s\n", e->text);
		out_put(l.buf, l.len);
	}
	out_flush();
	if (i < n)
		err_msg("stopped by a signal: %zu of %zu entries printed", i, n);
	if (d.nbad) {
		err_msg("%s: %llu lines of the dump not in its layout, not decoded (line %llu first); Delta-T across them is ?",
			name, d.nbad, d.bad_line);
		ret = KMT_EXIT_DATA;
	}
	if (d.ndropped) {
		err_msg("%s: printk dropped messages %llu times within the dump; Delta-T across them is ?",
			name, d.ndropped);
		ret = KMT_EXIT_DATA;
	}
	if (over) {
		err_msg("%s: %zu CPUs have more than %lu entries: not one dump", name, over,
			d.per_cpu);
		ret = KMT_EXIT_DATA;
	}
	free(show);
	con_reset(&d);
	free(d.ents);
	free(l.buf);
	return ret;
}

#endif /* KMT_KTRDUMP_CONSOLE_H */
