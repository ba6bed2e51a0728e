// SPDX-License-Identifier: GPL-2.0
/*
 * kmonparse - decode a /dev/kmon log (kmonlog's output) into text lines,
 * or into Chrome trace-event JSON that the Perfetto UI opens as a per-CPU
 * scheduling timeline. See Documentation/trace/kmon.rst and kmonparse(8),
 * which gives the grammar of both outputs.
 *
 *   kmonparse [-s SCALE] [-p PIDFIL] [--format=text|perfetto] [LOG]
 *
 * Text lines are those of the 2007 kmonparse:
 *   cpu=0,ts=14929534,op=DEQ,pid=25311
 *   cpu=0,ts=14929535,op=SWC,prev=25311,next=0
 *   cpu=0,ts=14953518,op=WAK,from=0,to=8
 *   cpu=0,ts=14953520,op=QUE,pid=8
 * with time stamps rebased to the first record and divided by SCALE
 * (nanoseconds per unit, 1000 by default: microseconds); a record of
 * another CPU logged before the first one has a negative time.
 *
 * The log is one stream in the order kmonlog wrote it: nothing is merged
 * or sorted. It is read in large blocks and every line is formatted by
 * hand into a large output buffer, written in blocks: a decoder that
 * called printf() per field ran at 1-2% of cat's speed.
 *
 * Exit status (kmt_cli.h): 0 the log decoded; 1 is never used, as a log
 * holds no count of the records lost (kmonlog reports those, and exits
 * 1); 2 bad usage, a file that cannot be read, output that cannot be
 * written (a full disk, a closed pipe), or no memory; 3 a corrupt or
 * truncated log or pids.dat. A first SIGINT or SIGTERM stops the
 * reading at the next record: what was decoded is written, as at the
 * end of the log (the JSON closed), with a note on standard error.
 *
 * Its part kmonparse.h, included once here, holds the output and the
 * task names of pids.dat; this file the records, the reading and the
 * command line.
 */
#include "kmonparse.h"

/* ---- Records ------------------------------------------------------- */

enum { FMT_TEXT, FMT_PERFETTO };

static struct {
	int format;
	uint64_t scale;
	bool names;
} opt = { FMT_TEXT, 1000, false };

static bool first_event = true;

/* A task's label on the timeline: "name (pid)" or "pid". */
static char *put_label(char *p, uint32_t pid)
{
	const struct pidslot *s;

	if (!pid) {
		PUT(p, "[IDLE] (0)");
		return p;
	}
	s = lookup(pid);
	if (s) {
		memcpy(p, s->name, s->cut);
		p += s->cut;
		PUT(p, " (");
		p = put_u64(p, pid);
		*p++ = ')';
		return p;
	}
	return put_u64(p, pid);
}

/* Starts the next element of traceEvents; the caller writes it. */
static inline char *json_next(char *p)
{
	if (!first_event)
		*p++ = ',';
	first_event = false;
	PUT(p, "\n    ");
	return p;
}

/* Per CPU: the task running since the last switch, for Perfetto. */
/* The highest CPU number believed: the per-CPU tables stay small. */
#define KMONPARSE_CPU_MAX	((1 << 20) - 1)

struct cpu_track {
	bool seen, running;
	uint32_t pid;
	uint64_t since;
};

static struct cpu_track *tracks;
static size_t ntracks;

/* @cpu's track, its thread_name written out at its first record. */
static struct cpu_track *track(uint32_t cpu)
{
	char *p;

	if (cpu >= ntracks) {
		size_t n = cpu + 1 > 2 * ntracks ? cpu + 1 : 2 * ntracks;
		struct cpu_track *more = realloc(tracks, n * sizeof(*tracks));

		if (!more)
			fatal("out of memory");
		tracks = more;
		memset(tracks + ntracks, 0, (n - ntracks) * sizeof(*tracks));
		ntracks = n;
	}
	if (!tracks[cpu].seen) {
		tracks[cpu].seen = true;
		p = json_next(out_room(OUT_SLACK));
		PUT(p, "{ \"ph\": \"M\", \"pid\": 1, \"tid\": ");
		p = put_u64(p, cpu);
		PUT(p, ", \"name\": \"thread_name\", \"args\": { \"name\": \"CPU ");
		p = put_u64(p, cpu);
		PUT(p, "\" } }");
		out_commit(p);
	}
	return &tracks[cpu];
}

/*
 * The duration of a slice from @from to @to (ns), where the next slice of
 * the CPU starts. Readers of the JSON add "ts" and "dur" as doubles of
 * microseconds, and a viewer (speedscope) nests the next slice in this
 * one where the sum reaches the next "ts", even exactly: a nanosecond
 * less, or a few where rounding needs them, so that it ends before.
 */
static uint64_t slice_ns(uint64_t from, uint64_t to)
{
	uint64_t d = to > from ? to - from : 0;

	while (d && (double)from / 1e3 + (double)d / 1e3 >= (double)to / 1e3)
		d--;
	return d;
}

/* A slice for the task that ran on @cpu from t->since to @ts (ns). */
static void close_slice(uint32_t cpu, struct cpu_track *t, uint64_t ts)
{
	char *p;

	if (!t->running)
		return;
	p = json_next(out_room(OUT_SLACK));
	PUT(p, "{ \"ph\": \"X\", \"pid\": 1, \"tid\": ");
	p = put_u64(p, cpu);
	PUT(p, ", \"ts\": ");
	p = put_usec(p, t->since);
	PUT(p, ", \"dur\": ");
	p = put_usec(p, slice_ns(t->since, ts));
	PUT(p, ", \"name\": \"");
	p = put_label(p, t->pid);
	PUT(p, "\", \"args\": { \"pid\": ");
	p = put_u64(p, t->pid);
	PUT(p, " } }");
	out_commit(p);
	t->running = false;
}

/* The start of an instant event of @cpu at @ts: its "name" comes next. */
static char *json_instant(char *p, uint32_t cpu, uint64_t ts)
{
	p = json_next(p);
	PUT(p, "{ \"ph\": \"i\", \"s\": \"t\", \"pid\": 1, \"tid\": ");
	p = put_u64(p, cpu);
	PUT(p, ", \"ts\": ");
	p = put_usec(p, ts);
	PUT(p, ", \"name\": \"");
	return p;
}

/*
 * Time since the first record, in units of opt.scale: negative for a
 * record of another CPU logged before it but flushed after.
 */
static inline long long rebase(uint64_t ts, uint64_t t0)
{
	uint64_t d = ts >= t0 ? ts - t0 : t0 - ts;

	if (opt.scale == 1000)		/* the default: a division the compiler makes cheap */
		d /= 1000;
	else
		d /= opt.scale;
	/* More than 63 bits (of nanoseconds, -s 1) saturate: no overflow. */
	if (d > LLONG_MAX)
		d = LLONG_MAX;
	return ts >= t0 ? (long long)d : -(long long)d;
}

/* "cpu=C,ts=T,op=" of a text line. */
static inline char *text_start(char *p, uint32_t cpu, long long ts)
{
	PUT(p, "cpu=");
	p = put_u64(p, cpu);
	PUT(p, ",ts=");
	p = put_s64(p, ts);
	PUT(p, ",op=");
	return p;
}

static const char *const ctx_names[] = { "task", "softirq", "hardirq", "nmi" };

/* ",@field=NAME" with -p: the name of @pid, [IDLE] for 0, ? if unnamed. */
static char *text_name(char *p, const char *field, size_t flen, uint32_t pid)
{
	const struct pidslot *s;

	if (!opt.names)
		return p;
	*p++ = ',';
	memcpy(p, field, flen);
	p += flen;
	*p++ = '=';
	if (!pid) {
		PUT(p, "[IDLE]");
		return p;
	}
	s = lookup(pid);
	if (!s) {
		*p++ = '?';
		return p;
	}
	return out_name(p, s->name, s->len);
}

#define TEXT_NAME(p, field, pid)	text_name(p, field, sizeof(field) - 1, pid)

static const char *const alloc_names[] = { "kmalloc", "kmem_cache", "pages" };

/* An allocation or a free that kmemtrace sent to kmon. */
static void emit_alloc(uint32_t cpu, uint64_t ts, uint64_t t0, const unsigned char *b,
		       size_t bl, uint64_t off)
{
	bool alloc = b[0] == KMON_DT_ALLOC;
	size_t want = alloc ? KMON_ALLOC_SIZE : KMON_FREE_SIZE;
	const char *who = b[KMON_AB_TYPE] < 3 ? alloc_names[b[KMON_AB_TYPE]] : NULL;
	uint32_t pid = kmon_get32(b + KMON_AB_PID);
	unsigned int ctx = b[KMON_AB_CTX];
	char *p;

	if (bl != want)
		corrupt("%s: byte %llu: %s blob of %zu bytes, not %zu", path,
			(unsigned long long)off, alloc ? "ALC" : "FRE", bl, want);
	if (!who)
		corrupt("%s: byte %llu: allocator %u is not kmalloc (0), kmem_cache (1) or pages (2)",
			path, (unsigned long long)off, b[KMON_AB_TYPE]);
	if (opt.format == FMT_TEXT) {
		p = text_start(out_room(OUT_SLACK), cpu, rebase(ts, t0));
		if (alloc)
			PUT(p, "ALC,alloc=");
		else
			PUT(p, "FRE,alloc=");
		p = stpcpy(p, who);
		PUT(p, ",ctx=");
		p = stpcpy(p, ctx & KMEMTRACE_CTX_HARDIRQ ? "hardirq" :
			      ctx & KMEMTRACE_CTX_SOFTIRQ ? "softirq" : "task");
		if (ctx & KMEMTRACE_CTX_BULK)
			PUT(p, ",bulk");
		PUT(p, ",pid=");
		p = put_u64(p, pid);
		if (pid)
			p = TEXT_NAME(p, "name", pid);
		PUT(p, ",site=");
		p = put_hex(p, kmon_get64(b + KMON_AB_SITE));
		PUT(p, ",ptr=");
		p = put_hex(p, kmon_get64(b + KMON_AB_PTR));
		if (alloc) {
			PUT(p, ",req=");
			p = put_u64(p, kmon_get64(b + KMON_AB_REQ));
			PUT(p, ",size=");
			p = put_u64(p, kmon_get64(b + KMON_AB_ALLOCATED));
			PUT(p, ",gfp=");
			p = put_hex(p, kmon_get32(b + KMON_AB_GFP));
			PUT(p, ",node=");
			p = put_s64(p, (int16_t)kmon_get16(b + KMON_AB_NODE));
		}
		if (b[KMON_AB_TYPE] != KMEMTRACE_TYPE_PAGES) {
			PUT(p, ",cache=");
			p = put_u64(p, kmon_get64(b + (alloc ? KMON_AB_CACHE : KMON_FB_CACHE)));
		}
		*p++ = '\n';
		out_commit(p);
		return;
	}
	track(cpu);
	p = json_instant(out_room(OUT_SLACK), cpu, ts);
	p = stpcpy(p, who);
	if (alloc) {
		*p++ = ' ';
		p = put_u64(p, kmon_get64(b + KMON_AB_ALLOCATED));
	} else {
		PUT(p, " free");
	}
	PUT(p, "\", \"args\": { \"task\": \"");
	if (pid)
		p = put_label(p, pid);
	else
		PUT(p, "(interrupt)");
	PUT(p, "\", \"site\": \"");
	p = put_hex(p, kmon_get64(b + KMON_AB_SITE));
	PUT(p, "\", \"ptr\": \"");
	p = put_hex(p, kmon_get64(b + KMON_AB_PTR));
	PUT(p, "\" } }");
	out_commit(p);
}

/* One record; @b is its blob, @bl bytes. Returns false if unknown. */
static bool emit(uint32_t cpu, uint64_t ts, uint64_t t0, const unsigned char *b, size_t bl,
		 uint64_t off)
{
	static const char *const ops[] = { NULL, "QUE", "DEQ", "SWC", "WAK" };
	uint32_t a, z;
	size_t want;
	int kind;
	char *p;

	if (b[0] == KMON_DT_TEST) {
		if (bl < KMON_TB_SIZE_MIN)
			corrupt("%s: byte %llu: test blob of %zu bytes, fewer than %d", path,
				(unsigned long long)off, bl, KMON_TB_SIZE_MIN);
		if (opt.format == FMT_TEXT) {
			p = text_start(out_room(OUT_SLACK), cpu, rebase(ts, t0));
			PUT(p, "TST,ctx=");
			if (b[KMON_TB_CTX] < 4)
				p = stpcpy(p, ctx_names[b[KMON_TB_CTX]]);
			else
				*p++ = '?';
			PUT(p, ",seq=");
			p = put_u64(p, kmon_get32(b + KMON_TB_SEQ));
			*p++ = '\n';
			out_commit(p);
		}
		return true;
	}
	if (b[0] == KMON_DT_ALLOC || b[0] == KMON_DT_FREE) {
		emit_alloc(cpu, ts, t0, b, bl, off);
		return true;
	}
	if (!kmon_sched_blob(b, bl, &kind, &a, &z, &want))
		return false;
	if (bl != want)
		corrupt("%s: byte %llu: %s blob of %zu bytes, not %zu", path,
			(unsigned long long)off, ops[kind], bl, want);

	if (opt.format == FMT_TEXT) {
		p = text_start(out_room(OUT_SLACK), cpu, rebase(ts, t0));
		memcpy(p, ops[kind], 3);
		p += 3;
		switch (kind) {
		case KMON_DT_TSKQUEUE:
		case KMON_DT_TSKDEQUEUE:
			PUT(p, ",pid=");
			p = put_u64(p, a);
			p = TEXT_NAME(p, "name", a);
			break;
		case KMON_DT_TSKSWITCH:
			PUT(p, ",prev=");
			p = put_u64(p, a);
			PUT(p, ",next=");
			p = put_u64(p, z);
			p = TEXT_NAME(p, "prev_name", a);
			p = TEXT_NAME(p, "next_name", z);
			break;
		default:
			PUT(p, ",from=");
			p = put_u64(p, a);
			PUT(p, ",to=");
			p = put_u64(p, z);
			if (opt.names && !a)
				PUT(p, ",from_name=[IRQ]");	/* 0: woken from an interrupt */
			else
				p = TEXT_NAME(p, "from_name", a);
			p = TEXT_NAME(p, "to_name", z);
			break;
		}
		*p++ = '\n';
		out_commit(p);
		return true;
	}

	/* Perfetto: slices per CPU from switches, instants for the rest. */
	if (kind == KMON_DT_TSKSWITCH) {
		struct cpu_track *t = track(cpu);

		close_slice(cpu, t, ts);
		t->running = true;
		t->pid = z;
		t->since = ts;
		return true;
	}
	track(cpu);
	p = json_instant(out_room(OUT_SLACK), cpu, ts);
	if (kind == KMON_DT_TSKWAKEUP) {
		PUT(p, "wakeup ");
		p = put_label(p, z);
		PUT(p, "\", \"args\": { \"pid\": ");
		p = put_u64(p, z);
		PUT(p, ", \"from\": ");
		p = put_u64(p, a);
	} else {
		if (kind == KMON_DT_TSKQUEUE)
			PUT(p, "enqueue ");
		else
			PUT(p, "dequeue ");
		p = put_label(p, a);
		PUT(p, "\", \"args\": { \"pid\": ");
		p = put_u64(p, a);
	}
	PUT(p, " } }");
	out_commit(p);
	return true;
}

/* ---- Reading ------------------------------------------------------- */

/*
 * The log is read IN_SIZE bytes at a time into ibuf, the records decoded
 * where they lie; the unfinished record at the end of a block moves to
 * the start before the next read.
 */
#define IN_SIZE		(1 << 20)

static unsigned char ibuf[IN_SIZE + KMON_RECORD_MAX];

struct reader {
	int fd;
	bool may_block;		/* a pipe or a terminal: write what we have first */
	bool eof;
	size_t pos, len;	/* the bytes of ibuf not decoded yet */
	uint64_t base;		/* the log's offset of ibuf[0] */
};

/*
 * At least @want bytes from ibuf[r->pos], unless the log ends first (or
 * a stop was asked for): what there is.
 */
static size_t read_more(struct reader *r, size_t want)
{
	while (r->len - r->pos < want && !r->eof && !kmt_stop_requested) {
		ssize_t n;

		if (r->pos) {
			memmove(ibuf, ibuf + r->pos, r->len - r->pos);
			r->base += r->pos;
			r->len -= r->pos;
			r->pos = 0;
		}
		if (r->may_block)
			out_flush();
		n = read(r->fd, ibuf + r->len, sizeof(ibuf) - r->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("%s: %s", path, strerror(errno));
		}
		if (!n)
			r->eof = true;
		r->len += n;
	}
	return r->len - r->pos;
}

/* What decode() went through, for the messages at the end. */
struct totals {
	unsigned long long records, unknown;
	uint64_t last;		/* the latest time stamp */
	bool stopped;		/* by a signal, at the byte after the last record */
	uint64_t stop_off;
};

/*
 * Every record of the log, checked and written in the chosen format,
 * until its end or a stop signal; exits at the first bad one (after
 * writing those before it).
 */
static void decode(struct reader *r, struct totals *tot)
{
	uint64_t t0 = 0;

	for (;;) {
		size_t n = read_more(r, KMON_HDR_SIZE), hl = KMON_HDR_SIZE, bl;
		const unsigned char *rec = ibuf + r->pos;
		uint64_t off = r->base + r->pos, ts;
		uint32_t cpu;

		if (!n && r->eof)
			return;		/* the end of the log */
		if (kmt_stop_requested) {
			tot->stopped = true;
			tot->stop_off = off;
			return;
		}
		if (n < KMON_HDR_SIZE)
			corrupt("%s: byte %llu: truncated record header (%zu of %d bytes)", path,
				(unsigned long long)off, n, KMON_HDR_SIZE);
		cpu = rec[KMON_HB_CPU];
		ts = kmon_get64(rec + KMON_HB_TS);
		bl = kmon_blob_len(rec);
		if (!bl || bl > KMON_BLOB_MAX)
			corrupt("%s: byte %llu: blob size %zu, not 1 to %d: %s", path,
				(unsigned long long)off, bl, KMON_BLOB_MAX,
				"not a kmon log (kmon logs are little-endian), or a corrupt one");
		if (cpu == KMON_CPU_EXT) {
			if (read_more(r, KMON_HDR_SIZE + KMON_CPU_EXT_SIZE) <
			    KMON_HDR_SIZE + KMON_CPU_EXT_SIZE) {
				if (kmt_stop_requested)
					continue;
				corrupt("%s: byte %llu: truncated extended CPU field", path,
					(unsigned long long)off);
			}
			rec = ibuf + r->pos;	/* read_more() may have moved it */
			cpu = kmon_get32(rec + KMON_HDR_SIZE);
			hl += KMON_CPU_EXT_SIZE;
			/* The kernel extends only from 255; no kernel has a million CPUs. */
			if (cpu < KMON_CPU_EXT || cpu > KMONPARSE_CPU_MAX)
				corrupt("%s: byte %llu: extended CPU %u, not %d to %d: a corrupt log",
					path, (unsigned long long)off, cpu, KMON_CPU_EXT,
					KMONPARSE_CPU_MAX);
		}
		if (read_more(r, hl + bl) < hl + bl) {
			size_t swapped = (bl >> 8) | (bl & 0xff) << 8;

			if (kmt_stop_requested)
				continue;
			corrupt("%s: byte %llu: truncated record (blob of %zu bytes)%s", path,
				(unsigned long long)off, bl, swapped && swapped < bl ?
				": a big-endian log? kmon logs are little-endian" : "");
		}
		rec = ibuf + r->pos;
		if (!tot->records)
			t0 = ts;
		if (ts > tot->last)
			tot->last = ts;
		tot->records++;
		if (!emit(cpu, ts, t0, rec + hl, bl, off))
			tot->unknown++;
		r->pos += hl + bl;
	}
}

/* Whether @a and @b are the same regular file (so not two /dev/null). */
static bool same_regular_file(int a, int b)
{
	struct stat sa, sb;

	if (fstat(a, &sa) || fstat(b, &sb) || !S_ISREG(sa.st_mode))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* ---- Command line -------------------------------------------------- */

static const char help_text[] =
	"Decode a /dev/kmon log, as kmonlog writes it, from LOG or standard input,\n"
	"in the order it holds the records.\n"
	"\n"
	"  -s, --scale=NS       nanoseconds per time unit of the text lines (default\n"
	"                       1000: microseconds); time stamps are rebased to the\n"
	"                       first record\n"
	"  -p, --pids=PIDFIL    name tasks from PIDFIL (kmonlog's pids.dat)\n"
	"  -f, --format=FMT     text (default), or perfetto: Chrome trace-event JSON\n"
	"                       for the Perfetto UI, a track per CPU\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and the log format read, and exit\n"
	"\n"
	"Records of unknown blob types are skipped by their size and counted on\n"
	"standard error. A first SIGINT or SIGTERM stops the reading: what was\n"
	"decoded is written, as at the end of the log; a second ends at once.\n"
	KMT_EXIT_HELP
	"A truncated or corrupt log or pids.dat is named with its byte or line.\n";

static void show_help(FILE *f)
{
	fprintf(f, "Usage: %s [-s SCALE] [-p PIDFIL] [-f text|perfetto] [LOG]\n", prog);
	fprintf(f, help_text, "unused: kmonlog counts losses");
}

/* Standard output, where --help and --version went, written: or exit 2. */
static int stdout_done(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: <stdout>: %s\n", prog, strerror(errno ? errno : EIO));
		return KMT_EXIT_USAGE;
	}
	return KMT_EXIT_OK;
}

/* The options; the log's name, or NULL for standard input. Exits on bad usage. */
static const char *parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scale", required_argument, NULL, 's' },
		{ "pids", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	char formats[32];
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "s:p:f:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			errno = 0;
			opt.scale = strtoull(optarg, &end, 10);
			/* Digits only: strtoull() takes " 5", "+5" and "-1" (a huge number). */
			if (errno || *end || !*optarg || !opt.scale ||
			    strspn(optarg, "0123456789") != strlen(optarg)) {
				fprintf(stderr, "%s: --scale: '%s' is not a number of ns above 0\n",
					prog, optarg);
				exit(KMT_EXIT_USAGE);
			}
			break;
		case 'p':
			load_pids(optarg);
			opt.names = true;
			break;
		case 'f':
			if (!strcmp(optarg, "text")) {
				opt.format = FMT_TEXT;
			} else if (!strcmp(optarg, "perfetto")) {
				opt.format = FMT_PERFETTO;
			} else {
				fprintf(stderr, "%s: --format: '%s' is not text or perfetto\n",
					prog, optarg);
				exit(KMT_EXIT_USAGE);
			}
			break;
		case 'h':
			show_help(stdout);
			exit(stdout_done());
		case 'V':
			snprintf(formats, sizeof(formats), "kmon format %d", KMON_VERSION);
			kmt_print_version(prog, formats);
			exit(stdout_done());
		default:
			show_help(stderr);
			exit(KMT_EXIT_USAGE);
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "%s: one log at most\n", prog);
		show_help(stderr);
		exit(KMT_EXIT_USAGE);
	}
	return optind < argc ? argv[optind] : NULL;
}

int main(int argc, char **argv)
{
	struct totals tot = { 0 };
	struct reader r = { 0 };
	const char *log = parse_args(argc, argv);
	FILE *in = stdin;
	struct stat st;
	size_t i;
	char *p;

	if (opt.names)
		index_pids();
	if (log) {
		path = log;
		in = fopen(path, "rb");
		if (!in)
			fatal("%s: %s", path, strerror(errno));
	}
	r.fd = fileno(in);
	r.may_block = fstat(r.fd, &st) || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
	/* Decoded text appended to the log it is read from would never end. */
	if (same_regular_file(r.fd, fileno(stdout)))
		fatal("%s: standard output is the log itself", path);
	kmt_catch_stop_signals();

	if (opt.format == FMT_PERFETTO) {
		p = out_room(OUT_SLACK);
		PUT(p, "{\n  \"displayTimeUnit\": \"ns\",\n  \"traceEvents\": [");
		out_commit(p);
	}
	decode(&r, &tot);

	if (opt.format == FMT_PERFETTO) {
		for (i = 0; i < ntracks; i++)
			if (tracks[i].running)
				close_slice(i, &tracks[i], tot.last);
		p = json_next(out_room(OUT_SLACK));
		PUT(p, "{ \"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", ");
		PUT(p, "\"args\": { \"name\": \"kmon: CPUs\" } }");
		PUT(p, "\n  ]\n}\n");
		out_commit(p);
	}
	out_flush();
	if (tot.unknown)
		fprintf(stderr, "%s: %llu of %llu records of unknown blob types skipped\n", prog,
			tot.unknown, tot.records);
	if (tot.stopped)
		fprintf(stderr, "%s: stopped by a signal at byte %llu of %s, after %llu records\n",
			prog, (unsigned long long)tot.stop_off, path, tot.records);
	if (log)
		fclose(in);
	return KMT_EXIT_OK;
}
