/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrdump_follow.h - --follow: the buffers read again and again, what is
 * new printed, what was overwritten before a read could see it counted,
 * and a capture of another boot copied over the directory told apart.
 */
#ifndef KMT_KTRDUMP_FOLLOW_H
#define KMT_KTRDUMP_FOLLOW_H

#include "ktrdump_raw.h"

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

/*
 * How long something --follow reads has been missing or cut short: since
 * the first of @reads reads in a row that found it so.
 */
struct follow_bad {
	unsigned int reads;
	struct timespec since;
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
	struct follow_bad bad;
	bool read_now, cut_short, not_of_table;
};

struct follow {
	struct follow_cpu *cpus;	/* sorted by CPU */
	size_t n, cap;
	uint64_t printed, missed, dropped;
	size_t unread;			/* CPUs not read at the last read */
	struct follow_bad empty;	/* a directory without cpu files */
	struct follow_bad formats_bad;	/* a formats file cut short */
	bool classes_due;		/* --classes names to read again */
	struct follow_bad classes_gone;	/* their classes file missing meanwhile */
	char *formats;			/* the formats file the table is of */
	size_t formats_size;
};

/*
 * A cpu<N> file (or the formats file) missing or cut short at every read
 * for FOLLOW_BAD_MS, and at FOLLOW_BAD_READS reads at least, ends
 * --follow: a capture being copied over the directory is whole again
 * long before, whatever the interval between reads. A time, not a number
 * of reads: at -i 2 ten reads are a writer descheduled for 20 ms.
 */
#define FOLLOW_BAD_MS		2000
#define FOLLOW_BAD_READS	3

/* Counts a read that found it bad; true once that has lasted too long. */
static bool follow_bad(struct follow_bad *b)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!b->reads++)
		b->since = now;
	return b->reads >= FOLLOW_BAD_READS &&
	       (now.tv_sec - b->since.tv_sec) * 1000 +
	       (now.tv_nsec - b->since.tv_nsec) / 1000000 >= FOLLOW_BAD_MS;
}

/* "for 2.0 s, 11 reads in a row": how long it has been bad. */
static const char *follow_bad_for(const struct follow_bad *b)
{
	static char buf[64];
	struct timespec now;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &now);
	s = (double)(now.tv_sec - b->since.tv_sec) + (now.tv_nsec - b->since.tv_nsec) / 1e9;
	snprintf(buf, sizeof(buf), "for %.1f s, %u reads in a row", s, b->reads);
	return buf;
}

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
 * too long (follow_bad()); else counts this read's.
 */
static void follow_check_bad(struct follow *fs)
{
	size_t j;

	for (j = 0; j < fs->n; j++) {
		struct follow_cpu *fc = &fs->cpus[j];

		if (fc->read_now) {
			fc->bad.reads = 0;
			fc->read_now = false;
			continue;
		}
		if (!follow_bad(&fc->bad))
			continue;
		if (fc->not_of_table)
			corrupt("%s/cpu%" PRIu32 ": %s %s", opt.dir, fc->cpu,
				"entries of formats not in the formats file",
				follow_bad_for(&fc->bad));
		if (fc->cut_short)
			corrupt("%s/cpu%" PRIu32 ": cut short (%s) %s", opt.dir, fc->cpu,
				"a truncated header or entry", follow_bad_for(&fc->bad));
		io_fatal("%s/cpu%" PRIu32 ": %s %s", opt.dir, fc->cpu, strerror(ENOENT),
			 follow_bad_for(&fc->bad));
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

/*
 * --follow: the format table (and the class names of --classes) read anew
 * when the formats file changed: another boot's capture copied over the
 * directory, whose entries are decoded with its own table. A formats
 * file cut short (being copied) keeps the table before, as long as
 * follow_bad() allows.
 */
static void follow_formats(struct follow *fs, const char *classes)
{
	char *path = path_of(opt.dir, "formats"), *data;
	size_t size;

	data = read_input(path, &size, true);
	free(path);
	if (data && fs->formats && size == fs->formats_size && !memcmp(data, fs->formats, size)) {
		free(data);
		fs->formats_bad.reads = 0;
	} else if (fs->formats && (!data || !size || data[size - 1] != '\n') &&
		   !follow_bad(&fs->formats_bad)) {
		/* Kept: the table before. At the first read there is none to keep. */
		free(data);
	} else {
		fs->formats_bad.reads = 0;
		if (!data)
			data = read_formats(opt.dir, &size);	/* says why, exits 2 */
		free(fs->formats);
		fs->formats = xmalloc(size + 1);
		memcpy(fs->formats, data, size);
		fs->formats_size = size;
		load_formats(opt.dir, data, size);
		if (classes && !kmt_classes_numeric(classes)) {
			fs->classes_due = true;
			fs->classes_gone.reads = 0;
		}
	}
	/*
	 * The names of --classes in the classes file of the new table, once it
	 * is there (a copy may not have made it yet): those of the table
	 * before until then, as long as follow_bad() allows.
	 */
	if (fs->classes_due) {
		path = path_of(opt.dir, "classes");
		if (!access(path, F_OK) || errno != ENOENT || follow_bad(&fs->classes_gone)) {
			parse_classes(classes);
			fs->classes_due = false;
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
		cpus = load_cpus(opt.dir, &ncpus, follow_unreadable);
		if (ncpus)
			fs.empty.reads = 0;
		else if (follow_bad(&fs.empty))
			io_fatal("%s: no cpu<N> raw files%s %s", opt.dir,
				 opt.cpu_filter ? " for the CPUs asked for" : "",
				 follow_bad_for(&fs.empty));

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
		if (fs.cpus[j].bad.reads) {
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

#endif /* KMT_KTRDUMP_FOLLOW_H */
