// SPDX-License-Identifier: GPL-2.0
/*
 * kmemtraced - capture the kmemtrace relay files into a directory.
 *
 * One thread per CPU file, pinned to that CPU as the ABI asks (a reader
 * on another CPU could read an event its CPU is still writing), polls
 * and reads debugfs kmemtrace/cpu<n> into DIR/cpu<n>; a CPU brought
 * online during the capture gets its reader within a second. On Ctrl-C,
 * SIGTERM, SIGHUP or the end of -t SECONDS every file is drained, and DIR/meta
 * records what an analysis on another machine needs: ABI version, byte
 * order, word size, kernel release, CPUs, the sequence numbers and the
 * kernel's loss counters at start, drain and end, DIR/kallsyms to
 * resolve call sites and DIR/caches to name the slab caches. A first meta
 * is written at the start, so that a capture cut short by SIGKILL can
 * still be read.
 *
 * No fixed table: the readers are a list that grows as cpu<n> files
 * appear, whatever their n (the kernel's NR_CPUS goes to 8192), each
 * with an affinity mask as large as its CPU number needs, and the
 * open-file limit is raised to the two descriptors per CPU file they
 * take, or the capture refused at the start with the limit named.
 *
 * main() runs the steps in order: parse_options(), find_kmemtrace_dir(),
 * prepare_output(), begin_capture(), open_readers(), start_readers(),
 * wait_for_stop(), drain_readers(), finish_capture() and summary().
 * Only the main thread takes the stop signals (kmt_cli.h): the first
 * ends wait_for_stop(), the second the process. The readers share with
 * it their counts (__atomic), the drain flag (release/acquire) and
 * nothing else until pthread_join().
 *
 * Its parts, each a header included once here: the capture's state,
 * the stats and enable files and the signals (kmemtraced.h); the readers
 * (kmemtraced_read.h). This file holds the files of DIR besides cpu<n>,
 * the command line and main()'s steps.
 */
#include "kmemtraced.h"
#include "kmemtraced_read.h"

/* ---- the files of DIR besides cpu<n> ----------------------------------- */

/*
 * Whether CPU file @r's events are not all in DIR: it could not be
 * opened or its reader started (r->missed), or, once the readers are
 * joined (@joined), a read failed (r->err).
 */
static bool reader_missed(const struct reader *r, bool joined)
{
	return r->missed || (joined && r->err);
}

/*
 * DIR/meta, "key value" lines. The first one, written at the start, says
 * finished 0 and has no drain or end numbers: a reader of a capture cut
 * short by SIGKILL treats it as one whose end is unknown. CPU files that
 * could not be opened are not in cpu_files (they are not in DIR); they,
 * and those whose read failed, are in missed_cpus, and make the capture
 * not complete.
 */
static void write_meta(void)
{
	const uint16_t one = 1;
	struct utsname u;
	size_t i, ncpus = 0, nmissed;
	char *text = NULL;
	size_t len = 0;
	FILE *meta;
	int err;

	if (uname(&u))
		fatal("uname: %s", strerror(errno));
	meta = open_memstream(&text, &len);
	if (!meta)
		fatal("out of memory");
	for (i = 0; i < cap.nreaders; i++)
		ncpus += !cap.readers[i]->missed;
	fprintf(meta, "# kmemtrace capture, written by kmemtraced\n");
	fprintf(meta, "abi_version %d\n", cap.abi);
	fprintf(meta, "endianness %s\n", *(const uint8_t *)&one ? "little" : "big");
	fprintf(meta, "word_size %zu\n", sizeof(long) * 8);
	fprintf(meta, "kernel_release %s\n", u.release);
	fprintf(meta, "machine %s\n", u.machine);
	fprintf(meta, "cpus %zu\n", ncpus);
	fprintf(meta, "cpu_files");
	for (i = 0; i < cap.nreaders; i++)
		if (!cap.readers[i]->missed)
			fprintf(meta, " cpu%d", cap.readers[i]->cpu);
	fprintf(meta, "\n");
	/* A read error is known once the readers are joined: the last meta. */
	for (i = 0, nmissed = 0; i < cap.nreaders; i++) {
		if (!reader_missed(cap.readers[i], cap.finished))
			continue;
		fprintf(meta, "%s cpu%d", nmissed++ ? "" : "missed_cpus", cap.readers[i]->cpu);
	}
	if (nmissed)
		fprintf(meta, "\n");
	fprintf(meta, "start_seq %llu\n", cap.start.seq);
	fprintf(meta, "start_lost_events %llu\nstart_lost_bytes %llu\n", cap.start.lost,
		cap.start.lost_bytes);
	fprintf(meta, "finished %d\n", cap.finished);
	if (cap.finished) {
		fprintf(meta, "seconds %.3f\n", cap.seconds);
		/* Read when the final drain began: the end of what it covers. */
		fprintf(meta, "drain_seq %llu\n", cap.drain.seq);
		fprintf(meta, "end_seq %llu\n", cap.end.seq);
		fprintf(meta, "end_lost_events %llu\nend_lost_bytes %llu\n", cap.end.lost,
			cap.end.lost_bytes);
		/*
		 * Complete: tracing was off before and after, so every event
		 * numbered from start_seq to end_seq - 1 is in a file or was
		 * lost, and the kernel's count of the lost must match.
		 */
		fprintf(meta, "complete %d\n", cap.complete);
		/* Stopped: tracing was off when the final drain began. */
		fprintf(meta, "stopped %d\n", cap.stopped);
		fprintf(meta, "symbols %s\n", cap.symbols);
		/* Why it ended: a stop asked for, or one of the two below. */
		if (cap.cut_err)
			fprintf(meta, "end_reason write_error\ncut_file %s\ncut_at %llu\ncut_error %s\ncut_seq %llu\ncut_lost_events %llu\n",
				cap.cut_file, cap.cut_at, strerror(cap.cut_err), cap.cut.seq,
				cap.cut.lost);
		else if (cap.turned_off)
			fprintf(meta, "end_reason tracing_off\noff_seq %llu\n", cap.off_seq);
		else
			fprintf(meta, "end_reason stop\n");
	}
	if (fclose(meta))
		fatal("out of memory");
	err = store_tmp("meta", text, len);
	/* The last meta of a capture cut short by a full disk must land. */
	if (err && cap.finished && capture_is_cut())
		err = store_in_place("meta", text, len);
	free(text);
	/* While reading, a full disk ends the capture; the last meta follows. */
	if (err && !cap.finished && __atomic_load_n(&cap.reading, __ATOMIC_ACQUIRE))
		capture_cut(err, "meta", 0);
	else if (err)
		fatal("%s/meta: %s", cap.out, strerror(err));
}

/*
 * DIR/caches names the caches the events carry, by id: every cache in
 * the kernel's kmemtrace/caches from the start of the capture to its
 * end, read every second, so that a cache destroyed meanwhile (a
 * module's) is there too if it lived that long. Ids are never reused:
 * a line per id, the first one read. A merge may later raise a cache's
 * object size; the sizes are for people, kmemtrace-report reads names.
 */
static struct {
	char *text;		/* the header, then the lines kept */
	size_t len, cap;
	__u64 *ids;		/* sorted */
	size_t nids, ids_cap;
	bool warned, changed;
} caches;

static void *grow_buf(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = need * 2;
	p = realloc(p, *cap * size);
	if (!p)
		fatal("out of memory");
	return p;
}

/* Whether @id is new; if so, adds it to caches.ids. */
static bool new_cache_id(__u64 id)
{
	size_t lo = 0, hi = caches.nids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (caches.ids[mid] == id)
			return false;
		if (caches.ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	caches.ids = grow_buf(caches.ids, &caches.ids_cap, caches.nids + 1, sizeof(id));
	memmove(caches.ids + lo + 1, caches.ids + lo, (caches.nids - lo) * sizeof(id));
	caches.ids[lo] = id;
	caches.nids++;
	return true;
}

/* Reads kmemtrace/caches into caches.text; caches.changed if it grew. */
static void read_caches(void)
{
	char *path = join(cap.dir, "caches"), *text, *line, *save;

	text = kmt_slurp(path, NULL);
	if (!text) {
		/* A kernel without the file; or it went away: say so once. */
		if (caches.text && !caches.warned)
			fprintf(stderr, "%s: %s: %s; caches are named as last read\n", prog,
				path, strerror(errno));
		caches.warned = true;
		free(path);
		return;
	}
	free(path);
	if (!caches.text) {
		static const char header[] = "# id object_size size name\n";

		caches.text = grow_buf(NULL, &caches.cap, sizeof(header), 1);
		memcpy(caches.text, header, sizeof(header));
		caches.len = sizeof(header) - 1;
		caches.changed = true;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);
		char *end;
		__u64 id;

		if (line[0] == '#')
			continue;
		id = strtoull(line, &end, 10);
		if (end == line || *end != ' ' || !new_cache_id(id))
			continue;
		caches.text = grow_buf(caches.text, &caches.cap, caches.len + n + 2, 1);
		memcpy(caches.text + caches.len, line, n);
		caches.len += n;
		caches.text[caches.len++] = '\n';
		caches.text[caches.len] = '\0';
		caches.changed = true;
	}
	free(text);
}

/*
 * DIR/caches brought up to date. Failing while the readers run, it cuts
 * the capture short as a failed event write does; once they are joined
 * (@last), every event is written, and only the names of the caches made
 * since the last good write are missing: said, not a cut.
 */
static void write_caches(bool last)
{
	int err;

	/* Cut short: the last one written names what it can. */
	if (!caches.changed || capture_is_cut())
		return;
	err = store_tmp("caches", caches.text, caches.len);
	if (err && last)
		cap.caches_err = err;
	else if (err)
		capture_cut(err, "caches", 0);
	caches.changed = false;
}

/* kallsyms as an unprivileged reader, or with kptr_restrict=2, reads 0s. */
static bool kallsyms_usable(int fd)
{
	char line[512];
	FILE *f = fdopen(fd, "r");
	int lines = 0, nonzero = 0;

	if (!f) {
		close(fd);
		return false;
	}
	while (lines < 1000 && fgets(line, sizeof(line), f)) {
		lines++;
		if (strtoull(line, NULL, 16))
			nonzero++;
	}
	fclose(f);
	return nonzero > 0;
}

/*
 * /proc/kallsyms into DIR/kallsyms: "kallsyms" if it gives addresses,
 * else "none", with a warning that says why.
 */
static const char *copy_kallsyms(void)
{
	static const char from[] = "/proc/kallsyms";
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	if (in < 0) {
		fprintf(stderr, "%s: %s: %s; call sites cannot be resolved elsewhere\n",
			prog, from, strerror(errno));
		return "none";
	}
	out = openat(cap.outfd, "kallsyms", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		fatal("%s/kallsyms: %s", cap.out, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
		if (n > 0 && kmt_write_all(out, buf, n)) {
			/* A full disk: the events are whole, their names elsewhere. */
			fprintf(stderr, "%s: %s/kallsyms: %s; %s\n", prog, cap.out,
				strerror(errno), "call sites cannot be resolved elsewhere");
			close(in);
			close(out);
			unlinkat(cap.outfd, "kallsyms", 0);
			return "none";
		}
	}
	if (n < 0) {
		fprintf(stderr, "%s: reading %s: %s; call sites cannot be resolved elsewhere\n",
			prog, from, strerror(errno));
		close(in);
		close(out);
		return "none";
	}
	close(in);
	if (lseek(out, 0, SEEK_SET) < 0)
		fatal("%s/kallsyms: %s", cap.out, strerror(errno));
	if (!kallsyms_usable(out)) {
		fprintf(stderr, "%s: %s gives no addresses (%s); %s\n", prog, from,
			"not root, or kptr_restrict=2", "call sites cannot be resolved");
		return "none";
	}
	return "kallsyms";
}

/* ---- main()'s steps ---------------------------------------------------- */

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "time", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'm' },
		{ "enable", no_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "nice", required_argument, NULL, KMT_OPT_NICE },
		{ "read", no_argument, NULL, KMT_OPT_READ },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	char formats[64], *end;
	int c;

	*o = (struct options){ .out = "kmemtrace.out", .dir = "/sys/kernel/debug/kmemtrace" };
	while ((c = getopt_long(argc, argv, "o:t:m:b:eqn:d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 't':
			o->seconds = strtod(optarg, &end);
			/* Not "nan", which no time is ever past ("inf" is Ctrl-C's). */
			if (end == optarg || *end || isnan(o->seconds) || o->seconds <= 0)
				kmt_die(prog, KMT_EXIT_USAGE, "-t %s: not a number of seconds > 0",
					optarg);
			break;
		case 'b':
			/*
			 * kmemtraced's letter for --bytes until now; a buffer
			 * size in kmonlog, and here in the next release. Said
			 * once, the status unchanged.
			 */
			kmt_old_letter(prog, 'b', "-m (stop after SIZE bytes)",
				       "mean a buffer size");
			fallthrough;
		case 'm':
			if (!kmt_parse_size(optarg, &o->byte_limit))
				kmt_die(prog, KMT_EXIT_USAGE, "-m %s: not a size (N, Nk, NM, NG)",
					optarg);
			break;
		case 'e':
			o->enable = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'n':
			/* --nice's letter until now; a count in kmemtrace-report. */
			kmt_old_letter(prog, 'n', "--nice", "be a count");
			fallthrough;
		case KMT_OPT_NICE:
			if (!kmt_parse_nice(optarg, &reader_nice))
				kmt_die(prog, KMT_EXIT_USAGE,
					"--nice=%s: not a nice value from -20 to 19", optarg);
			nice_given = true;
			break;
		case KMT_OPT_READ:
			by_read = true;
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'h':
			show_help(stdout);
			exit(fflush(stdout) ? KMT_EXIT_USAGE : KMT_EXIT_OK);
		case 'V':
			snprintf(formats, sizeof(formats), "kmemtrace ABI %d",
				 KMEMTRACE_ABI_VERSION);
			kmt_print_version(prog, formats);
			exit(fflush(stdout) ? KMT_EXIT_USAGE : KMT_EXIT_OK);
		default:
			show_help(stderr);
			exit(KMT_EXIT_USAGE);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		show_help(stderr);
		exit(KMT_EXIT_USAGE);
	}
}

/*
 * -d names the kmemtrace directory; the debugfs mount point that holds
 * it as kmemtrace/ is taken too. Sets cap.dir and reads its ABI version.
 */
static void find_kmemtrace_dir(const char *given)
{
	char *path = join(given, "abi_version"), *sub, *s, *end;
	int err;
	long v;

	if (access(path, F_OK)) {
		err = errno;
		sub = join(given, "kmemtrace");
		free(path);
		path = join(sub, "abi_version");
		if (access(path, F_OK)) {
			free(path);
			free(sub);
			fatal("%s/abi_version: %s (-d names the kmemtrace directory or the debugfs mount point that holds it; is debugfs mounted, CONFIG_KMEMTRACE_ALLOC on, and are you root?)",
			      given, strerror(err));
		}
		given = sub;
	}
	cap.dir = given;
	s = kmt_slurp(path, NULL);
	if (!s)
		fatal("%s: %s (are you root?)", path, strerror(errno));
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || (*end && *end != '\n') || errno || v < 1 || v > INT_MAX)
		fatal("%s: \"%.20s\" is not an ABI version: not a kmemtrace directory", path, s);
	cap.abi = v;
	if (cap.abi != KMEMTRACE_ABI_VERSION)
		fprintf(stderr, "%s: the kernel speaks ABI %d, this tool %d; capturing anyway\n",
			prog, cap.abi, KMEMTRACE_ABI_VERSION);
	free(s);
	free(path);
}

/*
 * DIR: OUT_RULE. A new one is created; an existing one must hold nothing,
 * so that no file of another capture, or of anything else, is
 * overwritten or mixed with this one.
 */
static void prepare_output(const char *out)
{
	struct dirent *de;
	bool meta = false, other = false;
	DIR *d;

	cap.out = out;
	if (!mkdir(out, 0755))
		cap.out_made = true;
	else if (errno != EEXIST)
		fatal("%s: %s", out, strerror(errno));
	cap.outfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cap.outfd < 0)
		fatal("%s: %s (%s)", out, strerror(errno), OUT_RULE);
	d = fdopendir(dup(cap.outfd));
	if (!d)
		fatal("%s: %s", out, strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(de->d_name, "meta"))
			meta = true;
		else
			other = true;
	}
	if (errno)
		fatal("%s: %s", out, strerror(errno));
	closedir(d);
	if (meta)
		fatal("%s already holds a capture (%s)", out, OUT_RULE);
	if (other)
		fatal("%s is not empty (%s)", out, OUT_RULE);
}

/* The kernel's numbers at the start, and tracing turned on with -e. */
static void begin_capture(bool enable)
{
	int on;

	cap.enable = enable;
	read_counts(cap.dir, &cap.start);
	/* The first read of the caches is not an allocation in the capture. */
	read_caches();
	on = read_enable(cap.dir);
	if (on < 0 && enable)
		fatal("%s/enable: %s", cap.dir, strerror(errno));
	cap.was_on = on == 1;
	/* The kernel allocates the buffers, and makes the files, at an enable. */
	if (enable) {
		char *path = join(cap.dir, "enable"), head[4096];
		int fd = open(path, O_WRONLY | O_CLOEXEC);

		if (fd < 0)
			fatal("%s: %s", path, strerror(errno));
		__atomic_store_n(&enable_fd, fd, __ATOMIC_RELAXED);
		free(path);
		set_enable(cap.dir, "1");
		__atomic_store_n(&enabled_dir, cap.dir, __ATOMIC_RELEASE);
		/* From now on, any disable is someone else's. */
		stats_head(cap.dir, head, sizeof(head));
		cap.have_disables = head_value(head, "disables", &cap.disables);
	}
}

static void start_readers(const pthread_attr_t *attr)
{
	size_t i;

	write_caches(false);
	write_meta();
	clock_gettime(CLOCK_MONOTONIC, &cap.t0);
	for (i = 0; i < cap.nreaders; i++) {
		int err = start_reader(cap.readers[i], attr);

		if (err)
			fatal("cannot start the reader of cpu%d: %s (%zu running; ulimit -u)",
			      cap.readers[i]->cpu, strerror(err), i);
	}
}

static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * Until a stop signal, -t or -m: once a second, readers for new CPU files
 * and the caches; on a terminal, the progress line every 200 ms.
 */
static void wait_for_stop(const struct options *o, const pthread_attr_t *attr)
{
	bool progress = !o->quiet && isatty(STDERR_FILENO), stop = false;
	/* With -m, a limit reached is seen within 10 ms: a storm fills MBs in 200. */
	unsigned long ticks, tick_ms = o->byte_limit ? 10 : 200;
	size_t i;

	for (ticks = 1; !stop && !kmt_stop_requested; ticks++) {
		struct timespec ts = { 0, tick_ms * 1000 * 1000 };
		__u64 e = 0, b = 0;

		/* Cut short by a stop signal, which the main thread alone takes. */
		nanosleep(&ts, NULL);
		if (o->seconds && since(&cap.t0) >= o->seconds)
			stop = true;
		if (capture_is_cut())
			stop = true;
		/* Tracing that -e turned on, turned off by someone else. */
		if (cap.enable && !(ticks % (200 / tick_ms)) && tracing_was_off(&cap.off_seq)) {
			cap.turned_off = true;
			stop = true;
			fprintf(stderr, "%s: tracing was turned off at seq %llu; the capture ends there\n",
				prog, cap.off_seq);
		}
		/* Once a second: a CPU that came online (relay made its file). */
		if (!(ticks % (1000 / tick_ms))) {
			if (add_readers(attr))
				write_meta();
			read_caches();
			write_caches(false);
		}
		for (i = 0; i < cap.nreaders; i++) {
			e += __atomic_load_n(&cap.readers[i]->events, __ATOMIC_RELAXED);
			b += __atomic_load_n(&cap.readers[i]->bytes, __ATOMIC_RELAXED);
		}
		if (o->byte_limit && b >= o->byte_limit)
			stop = true;
		if (!progress || ticks % (200 / tick_ms))
			continue;
		fprintf(stderr, "\r%s: %llu events, %llu KiB, %llu lost   ",
			prog, e, b >> 10, stat_value(cap.dir, "lost_events") - cap.start.lost);
	}
	if (progress)
		fputc('\n', stderr);
}

/*
 * What -e started stops before the drain, which then gets it all: once
 * enable is written, no event is being recorded any more. Otherwise the
 * drain takes what was numbered before it began.
 */
static void drain_readers(const pthread_attr_t *attr)
{
	size_t i;

	if (cap.enable) {
		set_enable(cap.dir, "0");
		__atomic_store_n(&enabled_dir, NULL, __ATOMIC_RELEASE);
		close(__atomic_exchange_n(&enable_fd, -1, __ATOMIC_RELAXED));
	}
	cap.stopped = read_enable(cap.dir) == 0;
	add_readers(attr);
	read_counts(cap.dir, &cap.drain);
	if (!cap.stopped)
		drain_limit = stat_value(cap.dir, "subbufs") * stat_value(cap.dir, "subbuf_size");
	__atomic_store_n(&drain, 1, __ATOMIC_RELEASE);
	for (i = 0; i < cap.nreaders; i++)
		if (cap.readers[i]->started)
			pthread_join(cap.readers[i]->thread, NULL);
	cap.seconds = since(&cap.t0);
	read_counts(cap.dir, &cap.end);
}

static void finish_capture(void)
{
	size_t i;

	read_caches();
	write_caches(true);
	cap.symbols = copy_kallsyms();
	cap.complete = cap.enable && !cap.was_on && !capture_is_cut();
	/* A CPU file not captured, or cut short by a read error: events missing. */
	for (i = 0; i < cap.nreaders; i++)
		if (reader_missed(cap.readers[i], true))
			cap.complete = false;
	cap.finished = true;
	write_meta();
}

/*
 * A line per CPU file and the totals on standard output, what went wrong
 * on standard error. Returns the exit status: the highest that applies.
 */
static int summary(void)
{
	__u64 events = 0, bytes = 0;
	int status = KMT_EXIT_OK;
	size_t i;

	for (i = 0; i < cap.nreaders; i++) {
		struct reader *r = cap.readers[i];

		if (r->missed)
			continue;
		printf("cpu%d: %llu events, %llu bytes%s\n", r->cpu, r->events,
		       r->bytes, r->pinned ? "" : " (read from another CPU)");
		events += r->events;
		bytes += r->bytes;
	}
	printf("total: %llu events, %llu bytes\n", events, bytes);
	printf("lost while capturing: %llu events, %llu bytes; total_overruns %llu\n",
	       cap.end.lost - cap.start.lost, cap.end.lost_bytes - cap.start.lost_bytes,
	       cap.end.lost_bytes);
	if (cap.end.lost != cap.start.lost)
		status = KMT_EXIT_DATA;
	/* Not the capture asked for: said where and why it ended. */
	if (cap.turned_off) {
		printf("tracing was turned off at seq %llu; the capture ends there\n", cap.off_seq);
		status = KMT_EXIT_DATA;
	}
	if (cap.cut_err) {
		printf("cut short: writing %s failed after %llu bytes (%s); what came after is lost\n",
		       cap.cut_file, cap.cut_at, strerror(cap.cut_err));
		status = KMT_EXIT_USAGE;
	}
	if (cap.caches_err) {
		fprintf(stderr, "%s: writing %s/caches at the end: %s; the events are all written, but caches made since its last write have no name\n",
			prog, cap.out, strerror(cap.caches_err));
		status = status > KMT_EXIT_USAGE ? status : KMT_EXIT_USAGE;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: writing standard output: %s\n", prog,
			strerror(errno ?: EIO));
		status = KMT_EXIT_USAGE;
	}
	for (i = 0; i < cap.nreaders; i++) {
		struct reader *r = cap.readers[i];

		if (r->missed) {
			fprintf(stderr, "%s: cpu%d: not captured: %s%s\n", prog, r->cpu,
				strerror(r->missed), fd_hint(r->missed));
			status = status > KMT_EXIT_USAGE ? status : KMT_EXIT_USAGE;
			continue;
		}
		if (r->err) {
			fprintf(stderr, "%s: reading cpu%d: %s\n", prog, r->cpu, strerror(r->err));
			status = status > KMT_EXIT_USAGE ? status : KMT_EXIT_USAGE;
		}
		/* What the kernel gave is not what the ABI says: corrupt input. */
		if (r->bad_at) {
			fprintf(stderr, "%s: cpu%d: offset %llu: bad event size\n",
				prog, r->cpu, r->bad_at - 1);
			status = KMT_EXIT_CORRUPT;
		}
		if (r->ncarry) {
			fprintf(stderr, "%s: cpu%d: ends in %zu bytes of an unfinished event\n",
				prog, r->cpu, r->ncarry);
			status = KMT_EXIT_CORRUPT;
		}
		if (close(r->out)) {
			fprintf(stderr, "%s: %s/cpu%d: %s\n", prog, cap.out, r->cpu,
				strerror(errno));
			status = status > KMT_EXIT_USAGE ? status : KMT_EXIT_USAGE;
		}
	}
	return status;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	struct options o;

	parse_options(argc, argv, &o);
	nice_set = kmt_nice_wanted(nice_given);
	catch_signals();
	reader_attr(&attr);

	find_kmemtrace_dir(o.dir);
	/* Before anything is made or written: the kernel would refuse it. */
	if (current_reader(cap.dir, -1))
		refuse_busy(-1);
	prepare_output(o.out);
	begin_capture(o.enable);
	open_readers();
	start_readers(&attr);
	wait_for_stop(&o, &attr);
	drain_readers(&attr);
	finish_capture();
	return summary();
}
