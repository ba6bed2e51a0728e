// SPDX-License-Identifier: GPL-2.0
/*
 * kmonparse - decode a /dev/kmon log (kmonlog's output) into text lines,
 * or into Chrome trace-event JSON that the Perfetto UI opens as a per-CPU
 * scheduling timeline. See Documentation/trace/kmon.rst.
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
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmon_log.h"
#include "kmt_msg.h"

#define KMONPARSE_VERSION	"1.0"

static const char *prog = "kmonparse";
static const char *path = "<stdin>";

#define fatal(...)	kmt_die(prog, 1, __VA_ARGS__)

/* ---- pids.dat ------------------------------------------------------ */

struct pidname {
	uint32_t pid;
	char *name;
};

static struct pidname *names;
static size_t nnames;

static int cmp_pidname(const void *a, const void *b)
{
	const struct pidname *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * The length of the valid UTF-8 sequence at @p (strict: no overlong
 * forms, surrogates or code points above U+10FFFF), 0 if there is none.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
		if (p[i] < lo || p[i] > hi)
			return 0;
	return n;
}

/*
 * "PID<TAB>COMMAND" lines, of any length; the name shown is the command
 * up to its first ';' (the arguments follow), with ',' and '=' made '_'
 * so that the text lines stay easy to split, '"' and '\\' too, and
 * control characters and bytes that are not UTF-8 made '?', so that it
 * is a JSON string as it is.
 */
static void load_pids(const char *file)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0, linecap = 0, n;
	FILE *f = fopen(file, "r");

	if (!f)
		fatal("%s: %s", file, strerror(errno));
	while (getline(&line, &linecap, f) >= 0) {
		char *tab = strchr(line, '\t'), *end, *p;
		unsigned long pid;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0])
			continue;
		pid = strtoul(line, &end, 10);
		if (!tab || end != tab || pid > UINT32_MAX)
			fatal("%s: line %zu: not \"PID<tab>COMMAND\"", file, lineno);
		if (nnames == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				fatal("out of memory");
		}
		tab[1 + strcspn(tab + 1, ";")] = '\0';
		for (p = tab + 1; *p; p += n) {
			n = utf8_len((unsigned char *)p);
			if (*p == ',' || *p == '=' || *p == '"' || *p == '\\')
				*p = '_';
			else if ((unsigned char)*p < 0x20 || *p == 0x7f || !n)
				*p = '?';
			if (!n)
				n = 1;
		}
		names[nnames].pid = pid;
		names[nnames].name = strdup(tab + 1);
		if (!names[nnames].name)
			fatal("out of memory");
		nnames++;
	}
	if (ferror(f))
		fatal("%s: %s", file, strerror(errno));
	free(line);
	fclose(f);
	if (nnames)	/* names is NULL for an empty file: no qsort(NULL, 0) */
		qsort(names, nnames, sizeof(*names), cmp_pidname);
}

static const char *name_of(uint32_t pid)
{
	size_t lo = 0, hi = nnames;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (names[mid].pid == pid)
			return names[mid].name;
		if (names[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- Output -------------------------------------------------------- */

enum { FMT_TEXT, FMT_PERFETTO };

static struct {
	int format;
	uint64_t scale;
	bool names;
} opt = { FMT_TEXT, 1000, false };

static bool first_event = true;

/* A task's label on the timeline: "name (pid)" or "pid". */
static void task_label(char *buf, size_t len, uint32_t pid)
{
	const char *n = pid ? name_of(pid) : "[IDLE]";
	char pidstr[16];
	size_t room, nl;

	snprintf(pidstr, sizeof(pidstr), "%u", pid);
	if (!n) {
		snprintf(buf, len, "%s", pidstr);
		return;
	}
	/*
	 * The name, cut to leave room for " (PID)" and at a UTF-8
	 * character boundary: the JSON stays valid UTF-8.
	 */
	room = len - strlen(pidstr) - 4;
	nl = strlen(n);
	if (nl > room) {
		nl = room;
		while (nl && ((unsigned char)n[nl] & 0xc0) == 0x80)
			nl--;
	}
	snprintf(buf, len, "%.*s (%s)", (int)nl, n, pidstr);
}

/* Starts the next element of traceEvents; the caller prints it. */
static void json_next(void)
{
	printf("%s\n    ", first_event ? "" : ",");
	first_event = false;
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

static struct cpu_track *track(uint32_t cpu)
{
	if (cpu >= ntracks) {
		size_t n = cpu + 1 > 2 * ntracks ? cpu + 1 : 2 * ntracks;

		tracks = realloc(tracks, n * sizeof(*tracks));
		if (!tracks)
			fatal("out of memory");
		memset(tracks + ntracks, 0, (n - ntracks) * sizeof(*tracks));
		ntracks = n;
	}
	if (!tracks[cpu].seen) {
		tracks[cpu].seen = true;
		json_next();
		printf("{ \"ph\": \"M\", \"pid\": 1, \"tid\": %u, ", cpu);
		printf("\"name\": \"thread_name\", ");
		printf("\"args\": { \"name\": \"CPU %u\" } }", cpu);
	}
	return &tracks[cpu];
}

/* A slice for the task that ran on @cpu from t->since to @ts (ns). */
static void close_slice(uint32_t cpu, struct cpu_track *t, uint64_t ts)
{
	char label[128];

	if (!t->running)
		return;
	task_label(label, sizeof(label), t->pid);
	json_next();
	printf("{ \"ph\": \"X\", \"pid\": 1, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, ", cpu,
	       t->since / 1000.0, (ts > t->since ? ts - t->since : 0) / 1000.0);
	printf("\"name\": \"%s\", \"args\": { \"pid\": %u } }", label, t->pid);
	t->running = false;
}

/*
 * Time since the first record, in units of opt.scale: negative for a
 * record of another CPU logged before it but flushed after.
 */
static long long rebase(uint64_t ts, uint64_t t0)
{
	uint64_t d = (ts >= t0 ? ts - t0 : t0 - ts) / opt.scale;

	/* More than 63 bits (of nanoseconds, -s 1) saturate: no overflow. */
	if (d > LLONG_MAX)
		d = LLONG_MAX;
	return ts >= t0 ? (long long)d : -(long long)d;
}

static const char *const ctx_names[] = { "task", "softirq", "hardirq", "nmi" };

static void text_name(const char *field, uint32_t pid)
{
	const char *n;

	if (!opt.names)
		return;
	n = pid ? name_of(pid) : "[IDLE]";
	printf(",%s=%s", field, n ? n : "?");
}

static const char *const alloc_names[] = { "kmalloc", "kmem_cache", "pages" };

/* An allocation or a free that kmemtrace sent to kmon. */
static void emit_alloc(uint32_t cpu, uint64_t ts, uint64_t t0, const unsigned char *b,
		       size_t bl, uint64_t off)
{
	bool alloc = b[0] == KMON_DT_ALLOC;
	size_t want = alloc ? KMON_ALLOC_SIZE : KMON_FREE_SIZE;
	const char *who = b[1] < 3 ? alloc_names[b[1]] : NULL;
	uint32_t pid = kmon_le(b + 3, 4);
	unsigned int ctx = b[2];
	uint64_t cache;
	char label[128];

	if (bl != want)
		fatal("%s: byte %llu: %s blob of %zu bytes, not %zu", path,
		      (unsigned long long)off, alloc ? "ALC" : "FRE", bl, want);
	if (!who)
		fatal("%s: byte %llu: allocator %u is not kmalloc (0), kmem_cache (1) or pages (2)",
		      path, (unsigned long long)off, b[1]);
	cache = kmon_le(b + (alloc ? 45 : 23), 8);
	if (opt.format == FMT_TEXT) {
		printf("cpu=%u,ts=%lld,op=%s,alloc=%s,ctx=%s%s,pid=%u", cpu, rebase(ts, t0),
		       alloc ? "ALC" : "FRE", who,
		       ctx & 1 ? "hardirq" : ctx & 2 ? "softirq" : "task", ctx & 4 ? ",bulk" : "",
		       pid);
		if (pid)
			text_name("name", pid);
		printf(",site=%#llx,ptr=%#llx", (unsigned long long)kmon_le(b + 7, 8),
		       (unsigned long long)kmon_le(b + 15, 8));
		if (alloc)
			printf(",req=%llu,size=%llu,gfp=%#x,node=%d",
			       (unsigned long long)kmon_le(b + 23, 8),
			       (unsigned long long)kmon_le(b + 31, 8),
			       (unsigned int)kmon_le(b + 39, 4), (int16_t)kmon_le(b + 43, 2));
		if (b[1] != 2)
			printf(",cache=%llu", (unsigned long long)cache);
		putchar('\n');
		return;
	}
	track(cpu);
	task_label(label, sizeof(label), pid);
	json_next();
	printf("{ \"ph\": \"i\", \"s\": \"t\", \"pid\": 1, \"tid\": %u, \"ts\": %.3f, ", cpu,
	       ts / 1000.0);
	if (alloc)
		printf("\"name\": \"%s %llu\", ", who, (unsigned long long)kmon_le(b + 31, 8));
	else
		printf("\"name\": \"%s free\", ", who);
	printf("\"args\": { \"task\": \"%s\", \"site\": \"%#llx\", \"ptr\": \"%#llx\" } }",
	       pid ? label : "(interrupt)", (unsigned long long)kmon_le(b + 7, 8),
	       (unsigned long long)kmon_le(b + 15, 8));
}

/* One record; @b is its blob, @bl bytes. Returns false if unknown. */
static bool emit(uint32_t cpu, uint64_t ts, uint64_t t0, const unsigned char *b, size_t bl,
		 uint64_t off)
{
	static const char *const ops[] = { NULL, "QUE", "DEQ", "SWC", "WAK" };
	uint32_t a, z;
	char label[128];
	size_t want;
	int kind;

	if (b[0] == KMON_DT_TEST) {
		if (bl < 6)
			fatal("%s: byte %llu: test blob of %zu bytes, fewer than 6", path,
			      (unsigned long long)off, bl);
		if (opt.format == FMT_TEXT)
			printf("cpu=%u,ts=%lld,op=TST,ctx=%s,seq=%u\n", cpu, rebase(ts, t0),
			       b[1] < 4 ? ctx_names[b[1]] : "?", (unsigned int)kmon_le(b + 2, 4));
		return true;
	}
	if (b[0] == KMON_DT_ALLOC || b[0] == KMON_DT_FREE) {
		emit_alloc(cpu, ts, t0, b, bl, off);
		return true;
	}
	if (!kmon_sched_blob(b, bl, &kind, &a, &z, &want))
		return false;
	if (bl != want)
		fatal("%s: byte %llu: %s blob of %zu bytes, not %zu", path,
		      (unsigned long long)off, ops[kind], bl, want);

	if (opt.format == FMT_TEXT) {
		printf("cpu=%u,ts=%lld,op=%s", cpu, rebase(ts, t0), ops[kind]);
		switch (kind) {
		case KMON_DT_TSKQUEUE:
		case KMON_DT_TSKDEQUEUE:
			printf(",pid=%u", a);
			text_name("name", a);
			break;
		case KMON_DT_TSKSWITCH:
			printf(",prev=%u,next=%u", a, z);
			text_name("prev_name", a);
			text_name("next_name", z);
			break;
		default:
			printf(",from=%u,to=%u", a, z);
			if (opt.names && !a)
				printf(",from_name=[IRQ]");	/* 0: woken from an interrupt */
			else
				text_name("from_name", a);
			text_name("to_name", z);
			break;
		}
		putchar('\n');
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
	task_label(label, sizeof(label), kind == KMON_DT_TSKWAKEUP ? z : a);
	json_next();
	printf("{ \"ph\": \"i\", \"s\": \"t\", \"pid\": 1, \"tid\": %u, \"ts\": %.3f, ", cpu,
	       ts / 1000.0);
	if (kind == KMON_DT_TSKWAKEUP)
		printf("\"name\": \"wakeup %s\", \"args\": { \"pid\": %u, \"from\": %u } }",
		       label, z, a);
	else
		printf("\"name\": \"%s %s\", \"args\": { \"pid\": %u } }",
		       kind == KMON_DT_TSKQUEUE ? "enqueue" : "dequeue", label, a);
	return true;
}

static const char help_text[] =
	"Decode a /dev/kmon log, as kmonlog writes it, from LOG or standard input.\n"
	"\n"
	"  -s, --scale=NS       nanoseconds per time unit (default 1000: microseconds);\n"
	"                       time stamps are rebased to the first record\n"
	"  -p, --pids=PIDFIL    name tasks from PIDFIL (kmonlog's pids.dat)\n"
	"  -f, --format=FMT     text (default), or perfetto: Chrome trace-event JSON\n"
	"                       for the Perfetto UI, a track per CPU\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"Records of unknown blob types are skipped by their size and counted.\n"
	"Exit status: 0 on success, 1 on bad usage or a bad or truncated log.\n";

static void show_help(FILE *f)
{
	fprintf(f, "Usage: %s [-s SCALE] [-p PIDFIL] [-f text|perfetto] [LOG]\n", prog);
	fputs(help_text, f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scale", required_argument, NULL, 's' },
		{ "pids", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	unsigned char rec[KMON_RECORD_MAX];
	unsigned long long records = 0, unknown = 0;
	uint64_t off = 0, t0 = 0, last = 0;
	FILE *in = stdin;
	char *end;
	int c, i;

	while ((c = getopt_long(argc, argv, "s:p:f:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			errno = 0;
			opt.scale = strtoull(optarg, &end, 10);
			/* strtoull() takes "-1" as a huge number: not here. */
			if (errno || *end || !*optarg || !opt.scale || strchr(optarg, '-')) {
				fprintf(stderr, "%s: --scale: '%s' is not a number of ns above 0\n",
					prog, optarg);
				return 1;
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
				return 1;
			}
			break;
		case 'h':
			show_help(stdout);
			return 0;
		case 'V':
			printf("%s %s (kmon format %d)\n", prog, KMONPARSE_VERSION, KMON_VERSION);
			return 0;
		default:
			show_help(stderr);
			return 1;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "%s: one log at most\n", prog);
		show_help(stderr);
		return 1;
	}
	if (optind < argc) {
		path = argv[optind];
		in = fopen(path, "rb");
		if (!in)
			fatal("%s: %s", path, strerror(errno));
	}
	if (opt.format == FMT_PERFETTO)
		printf("{\n  \"displayTimeUnit\": \"ns\",\n  \"traceEvents\": [");

	for (;;) {
		size_t n = fread(rec, 1, KMON_HDR_SIZE, in), hl = KMON_HDR_SIZE, bl;
		uint32_t cpu;
		uint64_t ts;

		if (!n)
			break;
		if (n < KMON_HDR_SIZE)
			fatal("%s: byte %llu: truncated record header (%zu of %d bytes)", path,
			      (unsigned long long)off, n, KMON_HDR_SIZE);
		cpu = rec[0];
		ts = kmon_le(rec + 1, 8);
		bl = kmon_blob_len(rec);
		if (!bl || bl > KMON_BLOB_MAX)
			fatal("%s: byte %llu: blob size %zu, not 1 to %d: %s", path,
			      (unsigned long long)off, bl, KMON_BLOB_MAX,
			      "not a kmon log (kmon logs are little-endian), or a corrupt one");
		if (cpu == KMON_CPU_EXT) {
			if (fread(rec + hl, 1, KMON_CPU_EXT_SIZE, in) != KMON_CPU_EXT_SIZE)
				fatal("%s: byte %llu: truncated extended CPU field", path,
				      (unsigned long long)off);
			cpu = kmon_le(rec + hl, 4);
			hl += KMON_CPU_EXT_SIZE;
			/* The kernel extends only from 255; no kernel has a million CPUs. */
			if (cpu < KMON_CPU_EXT || cpu > KMONPARSE_CPU_MAX)
				fatal("%s: byte %llu: extended CPU %u, not %d to %d: a corrupt log",
				      path, (unsigned long long)off, cpu, KMON_CPU_EXT,
				      KMONPARSE_CPU_MAX);
		}
		if (fread(rec + hl, 1, bl, in) != bl) {
			size_t swapped = (bl >> 8) | (bl & 0xff) << 8;

			fatal("%s: byte %llu: truncated record (blob of %zu bytes)%s", path,
			      (unsigned long long)off, bl, swapped && swapped < bl ?
			      ": a big-endian log? kmon logs are little-endian" : "");
		}
		if (!records)
			t0 = ts;
		if (ts > last)
			last = ts;
		records++;
		if (!emit(cpu, ts, t0, rec + hl, bl, off))
			unknown++;
		off += hl + bl;
	}
	if (ferror(in))
		fatal("%s: %s", path, strerror(errno));

	if (opt.format == FMT_PERFETTO) {
		for (i = 0; i < (int)ntracks; i++)
			if (tracks[i].running)
				close_slice(i, &tracks[i], last);
		json_next();
		printf("{ \"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", ");
		printf("\"args\": { \"name\": \"kmon: CPUs\" } }");
		printf("\n  ]\n}\n");
	}
	if (fflush(stdout) || ferror(stdout))
		fatal("<stdout>: %s", strerror(errno ? errno : EIO));
	if (unknown)
		fprintf(stderr, "%s: %llu of %llu records of unknown blob types skipped\n", prog,
			unknown, records);
	return 0;
}
