/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmemtraced_read.h - the readers: one thread per cpu<n> file, pinned to
 * its CPU, that copies the file into DIR/cpu<n>, counts the events in
 * what it copied and drains the file when asked; and the list of them,
 * grown as cpu<n> files appear, within the open-file limit.
 */
#ifndef KMT_KMEMTRACED_READ_H
#define KMT_KMEMTRACED_READ_H

#include "kmemtraced.h"

/* What a reader asks of read(): relay gives up to this across sub-buffers. */
#define READ_SIZE	(256 * 1024)
/*
 * A reader's stack: its frames are small (the read buffer is on the
 * heap), but vfprintf() and the C library's static TLS share it. 8192
 * readers at the default 8 MiB would reserve 64 GiB of address space.
 */
#define READER_STACK	(256 * 1024)
/*
 * CPU numbers from this one up get no affinity mask (128 KiB each): no
 * kernel has that many CPUs, so the reader runs unpinned, as for a CPU
 * that is offline.
 */
#define PIN_CPU_LIMIT	(1024 * 1024)
/*
 * The longest pause of a reader in place between two batches
 * (kmt_pace.h), for a buffer of READER_PACE_REF bytes or more; less in
 * proportion for a smaller one. A pause fills the default 4 MiB buffer
 * only at 400 MB/s, some 8 million events a second from one CPU,
 * several times what one CPU can make; the highest rate measured fills
 * it in 110 ms.
 */
#define READER_PACE_MAX_US	10000
#define READER_PACE_REF		(4 << 20)
/* Two descriptors per CPU file: the relay file and its copy. */
#define FDS_PER_CPU	2

/* Set by the first reader that could not set its nice value: one warning. */
static int nice_warned;

/*
 * A cpu<n> file read in place (KMEMTRACE_IOC_SPAN): the buffer mapped,
 * and the span of it read() would return next.
 */
struct in_place {
	const unsigned char *map;	/* NULL: read() */
	size_t size;
	struct kmemtrace_span sp;
};

/* Set by the first reader that could not map its buffer: one warning. */
static int map_warned;

/*
 * Maps @fd's buffer of CPU @cpu, unless --read or the kernel has no
 * spans (then read(), silently); a kernel with spans whose buffer
 * cannot be mapped is read() too, said once.
 */
static void in_place_start(struct in_place *ip, int fd, int cpu)
{
	void *map;

	ip->map = NULL;
	memset(&ip->sp, 0, sizeof(ip->sp));
	if (by_read || ioctl(fd, KMEMTRACE_IOC_SPAN, &ip->sp) || !ip->sp.size ||
	    ip->sp.size > SIZE_MAX)
		return;
	/*
	 * Populated now: relay maps a page at its first touch; this takes
	 * those faults here, once, not in the first lap's write()s.
	 */
	map = mmap(NULL, ip->sp.size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		if (!__atomic_exchange_n(&map_warned, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "%s: cpu%d: cannot map its buffer: %s; reading with read()\n",
				prog, cpu, strerror(errno));
		memset(&ip->sp, 0, sizeof(ip->sp));
		return;
	}
	ip->map = map;
	ip->size = ip->sp.size;
}

/*
 * The next bytes to copy, at most @want, in *@p: in place or read() into
 * @buf. In place, @fresh asks the kernel where they are now; else the
 * span in_place_done() was given serves, if it has bytes. Returns how
 * many, 0 for none yet, -1 (errno set) on an error.
 */
static ssize_t in_place_take(struct in_place *ip, int fd, unsigned char *buf, size_t want,
			     const unsigned char **p, bool fresh)
{
	if (!ip->map) {
		*p = buf;
		return read(fd, buf, want);
	}
	/* Nothing to give back (done 0): where the bytes are now, all of them. */
	ip->sp.done = 0;
	if ((fresh || !ip->sp.len) && ioctl(fd, KMEMTRACE_IOC_SPAN, &ip->sp))
		return -1;
	if (ip->sp.offset > ip->size || ip->sp.len > ip->size - ip->sp.offset) {
		errno = ERANGE;
		return -1;
	}
	*p = ip->map + ip->sp.offset;
	return ip->sp.len < want ? ip->sp.len : want;
}

/*
 * Gives back the first @n bytes of in_place_take()'s span, and learns
 * where the next ones are, in the same call. Returns how many bytes
 * that next span has (read(): 0), or -1 (errno set).
 */
static ssize_t in_place_done(struct in_place *ip, int fd, size_t n)
{
	if (!ip->map)
		return 0;
	ip->sp.done = n;
	if (ioctl(fd, KMEMTRACE_IOC_SPAN, &ip->sp))
		return -1;
	return ip->sp.len;
}

/* ---- the readers ------------------------------------------------------- */

/*
 * The bytes the carried event still lacks (4 - ncarry while its size is
 * not there yet); 1 for one whose size is bad, which the next
 * count_events() reports.
 */
static size_t carry_missing(const struct reader *r)
{
	size_t size;

	if (r->ncarry < 4)
		return 4 - r->ncarry;
	size = kmt_peek_size(r->carry, r->ncarry, false);
	return size > r->ncarry ? size - r->ncarry : 1;
}

static void carry_append(struct reader *r, const unsigned char *p, size_t n)
{
	if (r->ncarry + n > r->carry_cap) {
		/* An event is at most 64 KiB (a 16-bit size): grow to what it needs. */
		size_t cap = r->ncarry + n < 256 ? 256 : r->ncarry + n;

		r->carry = realloc(r->carry, cap);
		if (!r->carry)
			fatal("out of memory");
		r->carry_cap = cap;
	}
	memcpy(r->carry + r->ncarry, p, n);
	r->ncarry += n;
}

/*
 * Counts the whole events in what was read, @n bytes after the r->bytes
 * read before; keeps a cut one in r->carry for the next read. Returns how
 * many events it completed.
 */
static __u64 count_events(struct reader *r, const unsigned char *buf, size_t n)
{
	__u64 events = 0;
	size_t off = 0;

	while (off < n) {
		unsigned int size;

		if (r->ncarry) {
			size_t take = carry_missing(r);

			if (r->ncarry >= 4 &&
			    kmt_peek_size(r->carry, r->ncarry, false) < KMT_HDR_SIZE) {
				/* The event began r->ncarry bytes before @buf + off. */
				r->bad_at = r->bytes + off - r->ncarry + 1;
				r->ncarry = 0;
				return events;
			}
			if (take > n - off)
				take = n - off;
			carry_append(r, buf + off, take);
			off += take;
			if (r->ncarry >= 4 &&
			    r->ncarry == kmt_peek_size(r->carry, r->ncarry, false)) {
				events++;
				r->ncarry = 0;
			}
			continue;
		}
		size = kmt_peek_size(buf + off, n - off, false);
		if (n - off >= 4 && size < KMT_HDR_SIZE) {
			/* The rest cannot be counted; kmemtrace-check will say why. */
			r->bad_at = r->bytes + off + 1;
			return events;
		}
		if (n - off < 4 || size > n - off) {
			carry_append(r, buf + off, n - off);
			return events;
		}
		events++;
		off += size;
	}
	return events;
}

/* The affinity masks of a reader: its CPU alone, and the one it has. */
struct pin {
	cpu_set_t *want, *now;
	size_t ncpus;		/* bits of each */
	int cpu;
};

static void pin_alloc(struct pin *p, int cpu, size_t ncpus)
{
	CPU_FREE(p->want);
	CPU_FREE(p->now);
	p->cpu = cpu;
	p->ncpus = ncpus;
	p->want = CPU_ALLOC(ncpus);
	p->now = CPU_ALLOC(ncpus);
	if (!p->want || !p->now)
		fatal("out of memory");
	CPU_ZERO_S(CPU_ALLOC_SIZE(ncpus), p->want);
	CPU_SET_S(cpu, CPU_ALLOC_SIZE(ncpus), p->want);
}

/* Pins the calling thread to its CPU; false if it cannot be. */
static bool pin(const struct pin *p)
{
	if (!p->want)
		return false;
	return !pthread_setaffinity_np(pthread_self(), CPU_ALLOC_SIZE(p->ncpus), p->want);
}

/* Whether the calling thread may run on @p's CPU only, and runs there. */
static bool on_its_cpu(struct pin *p)
{
	int err;

	if (!p->want)
		return false;
	/* The kernel refuses a mask smaller than its CPU count: grow it. */
	while ((err = pthread_getaffinity_np(pthread_self(), CPU_ALLOC_SIZE(p->ncpus), p->now)) ==
	       EINVAL && p->ncpus < PIN_CPU_LIMIT)
		pin_alloc(p, p->cpu, 2 * p->ncpus);
	if (err)
		return false;
	return CPU_EQUAL_S(CPU_ALLOC_SIZE(p->ncpus), p->now, p->want) &&
	       sched_getcpu() == p->cpu;
}

/*
 * DIR/cpu<n> cut back to its last whole event, at the end of a capture
 * cut short: the half event a read left is not written in full, and
 * would read as a corrupt one. False (errno set) if it cannot be.
 */
static bool reader_trim(struct reader *r)
{
	__u64 whole = r->bytes - r->ncarry;

	if (ftruncate(r->out, whole))
		return false;
	r->ncarry = 0;
	__atomic_store_n(&r->bytes, whole, __ATOMIC_RELAXED);
	return true;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(READ_SIZE);
	struct in_place ip;
	struct kmt_pace pc;
	struct pin pn = {};
	bool draining = false;
	/*
	 * In place: bytes taken since poll(), at most take_max before the
	 * next, and what the last give-back left.
	 */
	size_t taken = 0, take_max;
	ssize_t next = 0;
	/* In place: the last take left part of its span (want, drain). */
	bool partial = false;
	uint64_t pace_max;
	__u64 drain_from = 0;
	useconds_t unpinned_wait = 10000;
	char *what;

	if (asprintf(&what, "%s/cpu%d", cap.out, r->cpu) < 0 || !buf)
		fatal("out of memory");
	/* On its CPU, where the writer cannot be half-way through an event. */
	if (r->cpu < PIN_CPU_LIMIT)
		pin_alloc(&pn, r->cpu, r->cpu < 1024 ? 1024 : r->cpu + 1);
	r->pinned = pin(&pn);
	/* Linux: PRIO_PROCESS 0 is the calling thread. */
	if (nice_set && setpriority(PRIO_PROCESS, 0, reader_nice) && nice_given &&
	    !__atomic_exchange_n(&nice_warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "%s: readers at nice %d: %s; reading at the nice value inherited\n",
			prog, reader_nice, strerror(errno));
	in_place_start(&ip, r->in, r->cpu);
	take_max = ip.map && ip.size / 8 > READ_SIZE ? ip.size / 8 : READ_SIZE;
	pace_max = kmt_pace_max(ip.size, READER_PACE_REF, READER_PACE_MAX_US);
	kmt_pace_start(&pc);
	for (;;) {
		struct pollfd pfd = { .fd = r->in, .events = POLLIN };
		const unsigned char *p;
		bool fresh;
		size_t want = READ_SIZE;
		ssize_t n;

		/* The capture was cut short, here or by another file's write. */
		if (capture_is_cut())
			break;
		if (!draining && __atomic_load_n(&drain, __ATOMIC_ACQUIRE)) {
			draining = true;
			drain_from = r->bytes;
		}
		if (draining && r->bytes - drain_from >= drain_limit) {
			/*
			 * Not half-way through an event: its rest is in the
			 * buffer (the kernel writes whole events), read just it.
			 */
			if (!r->ncarry || r->bad_at)
				break;
			want = carry_missing(r);
		} else if (draining && drain_limit - (r->bytes - drain_from) < want) {
			/*
			 * No read past the limit but the rest of an event it
			 * cuts, which the branch above reads next: at most a
			 * buffer's worth and 64 KiB.
			 */
			want = drain_limit - (r->bytes - drain_from);
		}
		/*
		 * As for read(): what the current sub-buffer gained since the
		 * last take waits until poll() says one is full, and is then
		 * taken with the rest, not a few events at a time. A span
		 * ends at its sub-buffer where read() goes on; the spans that
		 * follow are taken without a poll() each, up to an eighth of
		 * the buffer, if they are the rest of a span the last take
		 * left (READ_SIZE at a time) or of half a sub-buffer or more.
		 * A smaller one is what the kernel has written so far of the
		 * sub-buffer it is in (whose tail poll() waits for), or of a
		 * full one, which poll() reports at once; taken at once, it
		 * would be a few events at a time, among them the reader's
		 * own allocations. Before poll(), a pause (kmt_pace.h) lets
		 * a few sub-buffers fill: one wake-up takes them all.
		 */
		if (next > 0 && (partial || (__u64)next >= span_now_min) && taken < take_max) {
			fresh = false;
		} else {
			fresh = true;
			if (ip.map && taken && !draining)
				kmt_pause_us(kmt_pace_us(&pc, taken, ip.size / 8, pace_max));
			taken = 0;
			if (!draining && poll(&pfd, 1, 100) <= 0)
				continue;
		}
		/*
		 * A CPU that went offline broke the pinning: the kernel let
		 * the thread run anywhere, and may have put it back on its
		 * CPU by chance, from where it can still be moved half-way
		 * through a read. Read only while pinned, so that no writer
		 * can be half-way through an event; while the CPU is offline
		 * nothing is written there, and the final drain (tracing
		 * stopped, with -e) reads whatever is left.
		 */
		if (!on_its_cpu(&pn)) {
			r->pinned = pin(&pn);
			/*
			 * Offline, with data left: look again in 10 ms, then
			 * less often, up to 160 ms, so that the readers of many
			 * offline CPUs (at nice -10) do not starve the rest.
			 */
			if (!r->pinned && !draining) {
				usleep(unpinned_wait);
				if (unpinned_wait < 160000)
					unpinned_wait *= 2;
				continue;
			}
		}
		unpinned_wait = 10000;
		n = in_place_take(&ip, r->in, buf, want, &p, fresh);
		next = 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r->err = errno;
			break;
		}
		if (n == 0) {
			if (draining)
				break;
			/* Ready but empty (not relay's way; a regular file's): do not spin. */
			usleep(10000);
			continue;
		}
		if (kmt_write_all(r->out, p, n)) {
			int err = errno;
			char name[32];

			/* Not one byte of this read kept: its events are lost. */
			snprintf(name, sizeof(name), "cpu%d", r->cpu);
			capture_cut(err, name, r->bytes - r->ncarry);
			break;
		}
		if (!r->bad_at)
			__atomic_store_n(&r->events, r->events + count_events(r, p, n),
					 __ATOMIC_RELAXED);
		__atomic_store_n(&r->bytes, r->bytes + n, __ATOMIC_RELAXED);
		taken += n;
		partial = (size_t)n < ip.sp.len;
		next = in_place_done(&ip, r->in, n);
		if (next < 0) {
			r->err = errno;
			break;
		}
	}
	if (capture_is_cut() && !reader_trim(r))
		fprintf(stderr, "%s: %s: cannot cut it back to its last whole event: %s\n",
			prog, what, strerror(errno));
	if (ip.map)
		munmap((void *)ip.map, ip.size);
	CPU_FREE(pn.want);
	CPU_FREE(pn.now);
	free(what);
	free(buf);
	return NULL;
}

/* The reader of CPU @cpu among the first @n (sorted) readers, or NULL. */
static struct reader *find_reader(int cpu, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cap.readers[mid]->cpu == cpu)
			return cap.readers[mid];
		if (cap.readers[mid]->cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_reader(const void *a, const void *b)
{
	int x = (*(struct reader *const *)a)->cpu, y = (*(struct reader *const *)b)->cpu;

	return x < y ? -1 : x > y;
}

/* Starts @r's thread; returns 0 or pthread_create()'s error. */
static int start_reader(struct reader *r, const pthread_attr_t *attr)
{
	sigset_t stops, old;
	int err;

	/* Stop signals go to the main thread, whose sleep they cut short. */
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stops, &old);
	/* Before the thread runs: from its first read, DIR is kept. */
	__atomic_store_n(&cap.reading, true, __ATOMIC_RELEASE);
	err = pthread_create(&r->thread, attr, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	r->started = !err;
	/* None running: a refusal at the start may still remove what it made. */
	if (err && !cap.nstarted)
		__atomic_store_n(&cap.reading, false, __ATOMIC_RELEASE);
	cap.nstarted += !err;
	return err;
}

static void reader_attr(pthread_attr_t *attr)
{
	long min = sysconf(_SC_THREAD_STACK_MIN);
	size_t size = READER_STACK;
	int err;

	if (min > 0 && (size_t)min > size)
		size = min;
	err = pthread_attr_init(attr);
	if (!err)
		err = pthread_attr_setstacksize(attr, size);
	if (err)
		fatal("thread attributes: %s", strerror(err));
}

/*
 * The cpu<n> files of @dir that have no reader yet: their CPU numbers,
 * in *@cpus (allocated), and how many. A name the kernel would not
 * make (cpu01, a number past INT_MAX) is not a CPU file.
 */
static size_t new_cpu_files(const char *dir, int **cpus)
{
	size_t nsorted = cap.nreaders, n = 0, ncap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	*cpus = NULL;
	if (!d)
		fatal("%s: %s", dir, strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		int cpu;

		if (!kmt_cpu_file_name(de->d_name, &cpu) || find_reader(cpu, nsorted))
			continue;
		if (n == ncap) {
			ncap = ncap ? 2 * ncap : 64;
			*cpus = realloc(*cpus, ncap * sizeof(**cpus));
			if (!*cpus)
				fatal("out of memory");
		}
		(*cpus)[n++] = cpu;
	}
	if (errno)
		fatal("%s: %s", dir, strerror(errno));
	closedir(d);
	return n;
}

static struct reader *new_reader(int cpu)
{
	struct reader *r = calloc(1, sizeof(*r));

	if (!r)
		fatal("out of memory");
	if (cap.nreaders == cap.readers_cap) {
		cap.readers_cap = cap.readers_cap ? 2 * cap.readers_cap : 64;
		cap.readers = realloc(cap.readers, cap.readers_cap * sizeof(*cap.readers));
		if (!cap.readers)
			fatal("out of memory");
	}
	r->cpu = cpu;
	r->in = -1;
	r->out = -1;
	cap.readers[cap.nreaders++] = r;
	return r;
}

/*
 * Opens cpu<n> of the kmemtrace directory and DIR/cpu<n> (never one that
 * is there already). Returns 0, or the errno of what failed, whose
 * directory is then in *@where.
 */
static int open_reader(struct reader *r, const char **where)
{
	char name[32], *path;
	int err;

	snprintf(name, sizeof(name), "cpu%d", r->cpu);
	path = join(cap.dir, name);
	*where = cap.dir;
	r->in = open(path, O_RDONLY | O_CLOEXEC);
	err = r->in < 0 ? errno : 0;
	free(path);
	if (err)
		return err;
	*where = cap.out;
	r->out = openat(cap.outfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (r->out < 0) {
		err = errno;
		close(r->in);
		r->in = -1;
		return err;
	}
	cap.nopen++;
	return 0;
}

/*
 * Another reads cpu<@cpu> (-1: one of the cpu<n> files), and the kernel
 * admits one reader per file: this capture is refused. Tracing is left
 * as it is, even if -e turned it on: a capture that started at the same
 * moment and won the files may count on it.
 */
static void __noreturn refuse_busy(int cpu)
{
	char *who = current_reader(cap.dir, cpu), file[32] = "its cpu<n> files are";
	bool ours = __atomic_exchange_n(&enabled_dir, NULL, __ATOMIC_ACQ_REL) && !cap.was_on;

	if (cpu >= 0)
		snprintf(file, sizeof(file), "cpu%d is", cpu);
	if (ours)
		fatal("%s: %s being read by %s: one capture at a time; tracing, which -e turned on, is left on for it (echo 0 > %s/enable turns it off)",
		      cap.dir, file, who ?: "another process", cap.dir);
	fatal("%s: %s being read by %s: one capture at a time", cap.dir, file,
	      who ?: "another process");
}

/*
 * The CPU files at the start: all opened, or the capture refused. The
 * open-file limit is raised to two descriptors per file, and, as far as
 * the hard limit allows, per CPU the machine may bring online later.
 */
static void open_readers(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	const char *where;
	size_t i, n, need;
	rlim_t limit;
	int *cpus;

	n = new_cpu_files(cap.dir, &cpus);
	span_now_min = stat_value(cap.dir, "subbuf_size") / 2;
	if (!n)
		fatal("%s: no cpu<n> files: %s", cap.dir, cap.enable ?
		      "tracing is on, but the kernel made no buffers" :
		      "tracing is off and has no buffers (never on since boot, or freed once drained; -e turns it on)");
	need = FDS_PER_CPU * n + 16;	/* as kmt_want_files() counts */
	limit = kmt_want_files(FDS_PER_CPU * n);
	if (limit)
		fatal("%zu cpu<n> files need %zu open files, %d per file, but the open-file hard limit is %llu (ulimit -Hn): raise it to %zu or more (as root: ulimit -Hn %zu)",
		      n, need, FDS_PER_CPU, (unsigned long long)limit, need, need);
	if (conf > 0 && (size_t)conf > n)
		kmt_want_files(FDS_PER_CPU * conf);
	for (i = 0; i < n; i++) {
		struct reader *r = new_reader(cpus[i]);
		int err = open_reader(r, &where);

		if (err == EBUSY && where == cap.dir)
			refuse_busy(r->cpu);
		if (err)
			fatal("%s/cpu%d: %s%s", where, r->cpu, strerror(err), fd_hint(err));
	}
	free(cpus);
	qsort(cap.readers, cap.nreaders, sizeof(*cap.readers), cmp_reader);
}

/*
 * Whether one more CPU file fits under the open-file limit, with the 16
 * kmt_want_files() keeps for the rest (meta, caches, kallsyms, stats):
 * a capture that took those would end without its meta.
 */
static bool room_for_reader(void)
{
	return !kmt_want_files(FDS_PER_CPU * (cap.nopen + 1));
}

/*
 * A reader for each cpu<n> file that appeared since (relay makes a CPU's
 * file when it first comes online), started at once. One that cannot be
 * opened (or would take the descriptors the capture needs to end) is not
 * captured, said now, in meta's missed_cpus and in the summary, and the
 * exit status is 2: never a CPU lost without a word. Returns how many
 * files it found (started or missed): meta must be written again.
 */
static size_t add_readers(const pthread_attr_t *attr)
{
	size_t i, n, added = 0;
	const char *where;
	int *cpus;

	n = new_cpu_files(cap.dir, &cpus);
	for (i = 0; i < n; i++) {
		struct reader *r;
		int err;

		r = new_reader(cpus[i]);
		if (room_for_reader()) {
			err = open_reader(r, &where);
		} else {
			err = EMFILE;
			where = cap.dir;
		}
		if (err == ENOENT && where == cap.dir) {
			/* Gone again before it was opened: look again later. */
			cap.nreaders--;
			free(r);
			continue;
		}
		if (err == EBUSY && where == cap.dir) {
			char *who = current_reader(cap.dir, r->cpu);

			fprintf(stderr, "%s: %s/cpu%d is being read by %s; its events are not captured\n",
				prog, where, r->cpu, who ?: "another process");
			free(who);
		} else if (err) {
			fprintf(stderr, "%s: %s/cpu%d: %s%s; its events are not captured\n",
				prog, where, r->cpu, strerror(err), fd_hint(err));
		} else {
			err = start_reader(r, attr);
			if (err)
				fprintf(stderr, "%s: cannot start the reader of cpu%d: %s%s\n",
					prog, r->cpu, strerror(err),
					"; its events are not captured (threads: ulimit -u)");
		}
		if (err) {
			r->missed = err;
			if (r->in >= 0) {
				close(r->in);
				close(r->out);
				cap.nopen--;
			}
		}
		added++;
	}
	free(cpus);
	qsort(cap.readers, cap.nreaders, sizeof(*cap.readers), cmp_reader);
	return added;
}

#endif /* KMT_KMEMTRACED_READ_H */
