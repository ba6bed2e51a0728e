/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrdump_raw.h - an entry's text from its format and arguments; one
 * CPU's raw file checked and parsed, in either byte order; the CPU files
 * of a directory read one at a time; their entries merged by time stamp
 * through a heap; the dump of them all.
 */
#ifndef KMT_KTRDUMP_RAW_H
#define KMT_KTRDUMP_RAW_H

#include "ktrdump.h"

/* ---- An entry's text ------------------------------------------------- */

/* The CPUs whose entries are printed now: struct entry's cpu indexes them. */
static const struct cpu *cur_cpus;

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
 * Reads every cpu<N> file of the directory that --cpu wants, sorted by
 * CPU. One file open at a time, whatever the number of CPUs. With
 * --follow, a file that went away or is cut short (or is of a format
 * table not read yet) is left out of this read, @unreadable is told of
 * it (@missing says which), and none at all is no error: follow()
 * decides when that has lasted too long. In a dump (@unreadable NULL)
 * both are fatal.
 */
static struct cpu *load_cpus(const char *dir, size_t *ncpus,
			     void (*unreadable)(uint32_t cpu, bool missing))
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
			unreadable(c, !cpus[n].data);
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
	struct cpu *cpus = load_cpus(opt.dir, &ncpus, NULL);
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

#endif /* KMT_KTRDUMP_RAW_H */
