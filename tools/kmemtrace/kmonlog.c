// SPDX-License-Identifier: GPL-2.0
/*
 * kmonlog - capture /dev/kmon records to a file, and the names of the
 * tasks they mention to pids.dat, as the 2007 kmonlog did. See
 * Documentation/trace/kmon.rst and kmonlog(8).
 *
 *   kmonlog [-d DEVICE] [-b BUFSIZ] [-C CLASSES] [-o OUTFIL] [-t MSTEST]
 *           [-m BMAX] [-p PIDFIL] [--nice=NICE] [-h] [-V]
 *
 * It starts an instance, writes whole records to OUTFIL until MSTEST
 * milliseconds have passed, BMAX bytes were written, or SIGINT/SIGTERM;
 * then stops the instance, drains what it holds, writes PIDFIL and
 * reports what was lost. main() reads as the list of those steps.
 *
 * Its part kmonlog.h, included once here, holds struct kmonlog, the
 * task names and the command line; this file the files, the capture and
 * main().
 */
#include "kmonlog.h"

/* ---- The files: output, task list, device ---------------------------- */

/*
 * Until the capture starts, a failure removes the output file it
 * created and the task list's temporary file: a run that captured
 * nothing leaves nothing. (A second signal, which kills at once, leaves
 * the temporary file.)
 */
static const char *created_out, *pid_tmp;

static void remove_leftovers(void)
{
	if (created_out)
		unlink(created_out);
	if (pid_tmp)
		unlink(pid_tmp);
}

/*
 * Standard input, output and error open, on /dev/null if they were not:
 * else the device or the output would take their numbers, and the
 * messages of standard error would go into the log. Whether standard
 * output was closed: without -o, that is an error, before the capture.
 */
static bool keep_std_fds(void)
{
	bool stdout_closed = false;
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		stdout_closed |= fd == STDOUT_FILENO;
		if (open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			exit(KMT_EXIT_USAGE);
	}
	return stdout_closed;
}

static void cleanup_at_exit(void)
{
	static bool registered;

	if (!registered)
		atexit(remove_leftovers);
	registered = true;
}

/* The text of the symbolic link @path (@size bytes, as lstat() said: 0 for some). */
static char *read_link(const char *path, size_t size)
{
	size_t cap = size + 1 > 64 ? size + 1 : 64;
	char *t;
	ssize_t n;

	for (;;) {
		t = malloc(cap);
		if (!t)
			fatal("out of memory");
		n = readlink(path, t, cap);
		if (n < 0)
			fatal("%s: %s", path, strerror(errno));
		if ((size_t)n < cap)
			break;
		free(t);
		cap *= 2;
	}
	t[n] = '\0';
	return t;
}

/*
 * The file -o names, symbolic links followed as open() would follow
 * them, even to a file that does not exist (which realpath() cannot
 * name): that file is the one open_output() creates, and the one to
 * remove if the run is refused. Not a symbolic link: @path itself.
 */
static char *link_target(const char *path)
{
	char *p = strdup(path), *t, *n;
	struct stat st;
	int hops;

	if (!p)
		fatal("out of memory");
	for (hops = 0; !lstat(p, &st) && S_ISLNK(st.st_mode); hops++) {
		if (hops == 40)
			fatal("%s: %s", path, strerror(ELOOP));
		t = read_link(p, st.st_size);
		if (t[0] == '/' || !strchr(p, '/')) {
			n = t;
		} else {
			/* Relative to the link's directory. */
			int dir = strrchr(p, '/') - p + 1;

			if (asprintf(&n, "%.*s%s", dir, p, t) < 0)
				fatal("out of memory");
			free(t);
		}
		free(p);
		p = n;
	}
	return p;
}

/*
 * -o: opened without truncating it, so that a run refused by
 * check_files() leaves it as it was; truncate_output() empties it when
 * the capture is about to start. A file that did not exist, even one a
 * dangling symbolic link names, is created with O_EXCL and removed if
 * the run ends before the capture: a refused run leaves nothing.
 */
static void open_output(struct kmonlog *k)
{
	struct stat st;
	char *file;
	bool created;

	k->out = STDOUT_FILENO;
	k->out_name = "standard output";
	if (!k->out_path)
		return;
	k->out_name = k->out_path;
	file = link_target(k->out_path);
	created = lstat(file, &st) && errno == ENOENT;
	k->out = open_retry(file, O_WRONLY | O_CREAT | O_CLOEXEC | (created ? O_EXCL : 0), 0666);
	if (k->out < 0)
		fatal("%s: %s", k->out_path, strerror(errno));
	if (created) {
		created_out = file;
		cleanup_at_exit();
	} else {
		free(file);
	}
}

/*
 * -o's file is emptied, as fopen("w") would have. Standard output is
 * left as the shell opened it: "kmonlog >>log" appends.
 */
static void truncate_output(struct kmonlog *k)
{
	struct stat st;

	if (k->out_path && !fstat(k->out, &st) && S_ISREG(st.st_mode) && st.st_size &&
	    ftruncate(k->out, 0))
		fatal("%s: %s", k->out_name, strerror(errno));
	/* From now on the output is the capture's, whatever happens. */
	created_out = NULL;
}

/*
 * -p names the file the task list goes to: through a symbolic link, the
 * file it points to (the temporary file and the rename are beside it,
 * not beside the link, which would be replaced by them).
 */
static void resolve_pidfile(struct kmonlog *k)
{
	struct stat st;

	k->pid_file = strdup(k->pid_path);
	if (!k->pid_file)
		fatal("out of memory");
	if (lstat(k->pid_path, &st) || !S_ISLNK(st.st_mode))
		return;
	free(k->pid_file);
	k->pid_file = realpath(k->pid_path, NULL);
	if (!k->pid_file)
		fatal("-p %s: a symbolic link to %s: %s", k->pid_path,
		      errno == ENOENT ? "a file that does not exist" : "nothing usable",
		      strerror(errno));
}

/* Whether @fd is a character device: /dev/null, a terminal. */
static bool is_chrdev(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode);
}

static bool same_fds(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Refuses the run: nothing is truncated, nothing was started. */
#define refuse(...)	kmt_die(prog, KMT_EXIT_USAGE, __VA_ARGS__)

/*
 * The device, the output, the task list and standard error must be
 * different files, compared by device and inode, however they are
 * spelled (./x and x, ../dir/./x, a symbolic or a hard link, standard
 * output redirected by the shell): else the task list would replace the
 * capture at the end, the capture would overwrite the device, or the
 * messages would be mixed into the log or lost. Character devices other
 * than the kmon device, such as /dev/null, may be shared. The output
 * exists by now (open_output()); the task list may not, and then is no
 * other file.
 */
static void check_files(struct kmonlog *k)
{
	const char *out = k->out_path ? "-o" : "standard output";
	const char *pf = k->pid_file;
	struct stat st;

	if (kmt_same_fd_file(k->out, k->dev_path))
		refuse("%s and -d name the same file (%s): the log would overwrite the device",
		       out, k->dev_path);
	if (kmt_same_file(pf, k->dev_path))
		refuse("-p and -d name the same file (%s): the task list would replace the device",
		       k->dev_path);
	if (kmt_same_fd_file(STDERR_FILENO, k->dev_path))
		refuse("standard error is the device (%s)", k->dev_path);
	if (kmt_same_fd_file(k->out, pf) && !is_chrdev(k->out))
		refuse("%s and -p name the same file (%s%s%s): the task list would replace the log",
		       out, k->out_path ?: "", k->out_path ? ", " : "", k->pid_path);
	if (same_fds(k->out, STDERR_FILENO) && !is_chrdev(k->out))
		refuse("%s and standard error are the same file%s%s%s: %s", out,
		       k->out_path ? " (" : "", k->out_path ?: "", k->out_path ? ")" : "",
		       "the messages would be mixed into the log");
	if (kmt_same_fd_file(STDERR_FILENO, pf) && !is_chrdev(STDERR_FILENO))
		refuse("-p and standard error name the same file (%s): %s", k->pid_path,
		       "the messages would be lost with it");
	if (!stat(pf, &st) && S_ISDIR(st.st_mode))
		refuse("-p %s: is a directory", k->pid_path);
}

/*
 * The task list's file, opened now, not after a capture of hours that
 * would end without it. A regular file (or a new one) is written beside
 * its name and renamed over it at the end: a capture that fails keeps
 * the previous one. The new file gets the old one's mode, and its owner
 * when root runs kmonlog; hard links to the old one keep the old list.
 * A regular file the user may not write is refused: the rename would go
 * around its mode, and writing it in place would fail. Anything else
 * (/dev/null, a FIFO, a terminal) is written as it is: renaming over it
 * would replace it.
 */
static void open_pidfile(struct kmonlog *k)
{
	mode_t mask = umask(0);
	struct stat st;
	char *tmp;

	umask(mask);
	if (stat(k->pid_file, &st)) {
		st.st_mode = 0;
	} else if (!S_ISREG(st.st_mode)) {
		k->pid_fd = open_retry(k->pid_file, O_WRONLY | O_CLOEXEC, 0);
		if (k->pid_fd < 0)
			fatal("%s: %s", k->pid_path, strerror(errno));
		return;
	} else if (faccessat(AT_FDCWD, k->pid_file, W_OK, AT_EACCESS)) {
		/* The rename could replace it; writing it in place could not. */
		refuse("-p %s: not writable (%s)", k->pid_path, strerror(errno));
	}
	tmp = malloc(strlen(k->pid_file) + sizeof(".XXXXXX"));
	if (!tmp)
		fatal("out of memory");
	sprintf(tmp, "%s.XXXXXX", k->pid_file);
	k->pid_fd = mkostemp(tmp, O_CLOEXEC);
	if (k->pid_fd < 0)
		fatal("%s: %s", k->pid_path, strerror(errno));
	pid_tmp = tmp;
	cleanup_at_exit();
	/*
	 * mkstemp() makes it 0600: the old file's mode (and owner, which
	 * only root may give) on the new one, or what open(O_CREAT, 0666)
	 * would have given a new file. The owner first: chown() clears
	 * the set-user-ID and set-group-ID bits.
	 */
	if (st.st_mode && !geteuid() && fchown(k->pid_fd, st.st_uid, st.st_gid))
		fatal("%s: %s", pid_tmp, strerror(errno));
	if (fchmod(k->pid_fd, st.st_mode ? st.st_mode & 07777 : 0666 & ~mask))
		fatal("%s: %s", pid_tmp, strerror(errno));
}

static void open_device(struct kmonlog *k)
{
	/*
	 * Writable, for the control page's data_tail (map_device()); a
	 * device the user may only read is read with read().
	 */
	k->dev = -1;
	if (!k->use_read)
		k->dev = open(k->dev_path, O_RDWR | O_CLOEXEC);
	if (k->dev < 0 && (k->use_read || errno == EACCES || errno == EROFS)) {
		k->use_read = true;
		k->dev = open(k->dev_path, O_RDONLY | O_CLOEXEC);
	}
	if (k->dev < 0)
		fatal("%s: %s%s", k->dev_path, strerror(errno),
		      errno == EPERM || errno == EACCES ?
		      " (it needs CAP_SYS_ADMIN and CAP_SYSLOG)" : "");
}

/* The reader's priority, the buffer's size and the classes. */
static void setup_device(struct kmonlog *k)
{
	if (kmt_nice_wanted(k->nice_given) && setpriority(PRIO_PROCESS, 0, k->nice) &&
	    k->nice_given)
		fprintf(stderr, "%s: nice %d: %s; reading at the nice value inherited\n",
			prog, k->nice, strerror(errno));
	if (ioctl(k->dev, KMON_BUFFSIZE, &k->bufsize)) {
		if (errno == EINVAL)
			fatal("%s: buffer size %s: %s (the device takes %ld to %ld bytes)",
			      k->dev_path, k->bufsize_arg, strerror(errno), KMON_BUFFSIZE_MIN,
			      KMON_BUFFSIZE_MAX);
		fatal("%s: buffer size %s: %s", k->dev_path, k->bufsize_arg, strerror(errno));
	}
	if (k->classes && ioctl(k->dev, KMON_SET_CLASSES, &k->classes))
		fatal("%s: classes %#llx: %s%s", k->dev_path, (unsigned long long)k->classes,
		      strerror(errno),
		      errno == EINVAL ? " (not all are in this kernel: CONFIG_KMON_CLASSES)" : "");
}

/*
 * The device's control page, and its buffer mapped twice in a row so
 * that every record is contiguous (Documentation/trace/kmon.rst,
 * "Reading in place"): the records are then scanned and written out
 * where the kernel put them, not copied out first. read() instead with
 * --read, for a buffer that is not a whole number of pages (or that the
 * double mapping cannot take: EINVAL, or ENOMEM where the address space
 * or the mapping limit has no room), and on a kernel whose /dev/kmon
 * cannot be mapped (ENODEV: a 32-bit kernel, or one from before).
 */
static void map_device(struct kmonlog *k)
{
	long page = sysconf(_SC_PAGESIZE);
	void *c, *d;

	/* The report's CPU line says which. */
	if (k->use_read || k->bufsize % page)
		return;
	c = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, k->dev,
		 (off_t)KMON_MMAP_CTRL_PGOFF * page);
	if (c == MAP_FAILED) {
		if (errno == ENODEV)
			return;
		fatal("%s: mmap of the control page: %s", k->dev_path, strerror(errno));
	}
	d = mmap(NULL, 2 * k->bufsize, PROT_READ, MAP_SHARED, k->dev,
		 (off_t)KMON_MMAP_DATA_PGOFF * page);
	if (d == MAP_FAILED) {
		/* A size the double mapping cannot take here (SHMLBA, room): read(). */
		if (errno == EINVAL || errno == ENOMEM) {
			munmap(c, page);
			return;
		}
		fatal("%s: mmap of the buffer: %s", k->dev_path, strerror(errno));
	}
	k->ctrl = c;
	k->data = d;
}

/* ---- The capture ---------------------------------------------------- */

/* Once per overrun: a warning now; the totals come at the end. */
static void report_loss(struct kmonlog *k)
{
	struct kmon_stats st;

	if (ioctl(k->dev, KMON_GET_STATS, &st))
		fatal("%s: stats: %s", k->dev_path, strerror(errno));
	fprintf(stderr, "%s: records lost so far: %llu (buffer full), %llu (%s)\n", prog,
		(unsigned long long)st.overruns, (unsigned long long)st.ring_overruns,
		"refused by the rings");
}

/* Whether to stop taking new records: a stop signal, -t's time, -m's size. */
static bool capture_done(struct kmonlog *k)
{
	return kmt_stop_requested || k->limit_hit || (k->deadline && now_ms() >= k->deadline);
}

/* How long ppoll() may wait: until -t's deadline, at most MAX_WAIT_MS. */
static struct timespec *wait_time(struct kmonlog *k, struct timespec *ts)
{
	uint64_t now = now_ms(), left;

	if (!k->deadline)
		return NULL;
	left = k->deadline > now ? k->deadline - now : 0;
	if (left > MAX_WAIT_MS)
		left = MAX_WAIT_MS;
	ts->tv_sec = left / 1000;
	ts->tv_nsec = left % 1000 * 1000000;
	return ts;
}

/*
 * Waits until there are records to read: true; false when the capture
 * is to stop. The stop signals are blocked from the test of
 * kmt_stop_requested to ppoll(), which unblocks them as it waits: one
 * that comes in between ends the wait at once instead of being seen only
 * after it.
 */
static bool wait_for_records(struct kmonlog *k, const sigset_t *stopsigs)
{
	for (;;) {
		struct pollfd p = { .fd = k->dev, .events = POLLIN };
		sigset_t waitmask;
		struct timespec ts;
		int n;

		sigprocmask(SIG_BLOCK, stopsigs, &waitmask);
		if (capture_done(k)) {
			sigprocmask(SIG_SETMASK, &waitmask, NULL);
			return false;
		}
		n = ppoll(&p, 1, wait_time(k, &ts), &waitmask);
		sigprocmask(SIG_SETMASK, &waitmask, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("%s: poll: %s", k->dev_path, strerror(errno));
		}
		if (p.revents & POLLNVAL)
			fatal("%s: poll: not a pollable file", k->dev_path);
		/*
		 * Records lost: POLLERR stays until the counts are read,
		 * which they are here (the total comes at the end).
		 */
		if (p.revents & POLLERR)
			report_loss(k);
		if (p.revents & POLLIN)
			return true;
		/* Stopped under us (POLLHUP): what is left is drained. */
		if (p.revents & POLLHUP)
			return false;
	}
}

/*
 * One read() of the device, written out up to -m's limit: false when
 * it returned nothing (a stopped instance that is drained).
 */
static bool read_records(struct kmonlog *k)
{
	ssize_t n = read(k->dev, k->buf, READ_SIZE);
	size_t keep;

	if (n < 0) {
		if (errno == EINTR)
			return true;
		fatal("%s: read: %s", k->dev_path, strerror(errno));
	}
	if (!n)
		return false;
	keep = scan(k, k->buf, n);
	write_records(k, k->buf, keep);
	/* At the limit exactly: no record fits any more, stop now. */
	if (k->bmax && k->written >= k->bmax)
		k->limit_hit = true;
	return true;
}

/*
 * What the mapping holds, scanned and written out in place up to -m's
 * limit, then the space given back to the device (data_tail) at once,
 * whole records: the bytes taken, 0 when it held nothing.
 *
 * A reader that is behind (a quarter of the buffer or more waiting)
 * first moves the batch to its own memory and gives all the space back
 * at once: while it writes, the device has the whole buffer for what
 * comes, as it had after a read(). The copy is not there to save CPU
 * (Documentation/project/costs.md measures it); what it buys is the
 * space, at once.
 */
static size_t take_mapped(struct kmonlog *k)
{
	uint64_t tail = k->ctrl->data_tail;
	/* Acquire: the records below the head are there (kmon.rst). */
	uint64_t head = __atomic_load_n(&k->ctrl->data_head, __ATOMIC_ACQUIRE);
	const unsigned char *p = k->data + tail % k->bufsize;
	uint64_t waiting = head - tail;
	size_t len, keep;

	if (!waiting)
		return 0;
	/* Before it becomes a size_t, which a 32-bit reader's may not hold. */
	if (waiting > (uint64_t)k->bufsize)
		kmt_die(prog, KMT_EXIT_CORRUPT, "%s: %llu bytes buffered in a buffer of %ld",
			k->dev_path, (unsigned long long)waiting, k->bufsize);
	len = waiting;
	if (len >= (size_t)k->bufsize / 4) {
		memcpy(k->buf, p, len);
		/* Release: done with these bytes before the device reuses them. */
		__atomic_store_n(&k->ctrl->data_tail, head, __ATOMIC_RELEASE);
		p = k->buf;
	}
	keep = scan(k, p, len);
	write_records(k, p, keep);
	/* What is past -m's limit, not written, is given back too. */
	__atomic_store_n(&k->ctrl->data_tail, head, __ATOMIC_RELEASE);
	if (k->bmax && k->written >= k->bmax)
		k->limit_hit = true;
	return len;
}

/* One batch of records, through the mapping or read(): false if none. */
static bool take_records(struct kmonlog *k)
{
	return k->ctrl ? take_mapped(k) != 0 : read_records(k);
}

/*
 * The longest pause of a reader of the mapping between two batches
 * (kmt_pace.h), for a buffer of PACE_REF bytes or more; less in
 * proportion for a smaller one. A 1 MiB buffer fills in some 13 ms at
 * the highest rate measured, an eighth of it in less than 2.
 */
#define PACE_MAX_US	2000
#define PACE_REF	(1024 * 1024)

/*
 * A reader of the mapping need not answer every wake-up: after a small
 * batch (@took bytes) it pauses as kmt_pace.h says, so that fewer, larger
 * batches cost fewer wake-ups per record. A stop signal ends the pause.
 */
static void pace(struct kmonlog *k, size_t took)
{
	kmt_pause_us(kmt_pace_us(&k->pace, took, (size_t)k->bufsize / 8,
				 kmt_pace_max(k->bufsize, PACE_REF, PACE_MAX_US)));
}

/*
 * Starts the instance, reads until it is time to stop, stops it (what
 * is logged until then comes to the buffer) and reads until the device
 * returns 0: it holds nothing more.
 */
static void capture(struct kmonlog *k)
{
	sigset_t stopsigs;

	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	/* read()'s buffer, or the mapping's reader's when it is behind. */
	k->buf = malloc(k->ctrl ? (size_t)k->bufsize : READ_SIZE);
	if (!k->buf)
		fatal("out of memory");
	if (ioctl(k->dev, KMON_START))
		fatal("%s: start: %s", k->dev_path, strerror(errno));
	k->t0 = now_ms();
	if (k->ms)
		k->deadline = k->ms > UINT64_MAX - k->t0 ? UINT64_MAX : k->t0 + k->ms;
	/*
	 * read() returns 0 once a stopped instance is drained, which ends
	 * the loop; a mapping has no such end, POLLHUP ends the wait.
	 */
	kmt_pace_start(&k->pace);
	while (wait_for_records(k, &stopsigs)) {
		if (k->ctrl)
			pace(k, take_mapped(k));
		else if (!read_records(k))
			break;
	}
	/* EALREADY: already stopped (POLLHUP); the rest is read all the same. */
	if (ioctl(k->dev, KMON_STOP) && errno != EALREADY)
		fatal("%s: stop: %s", k->dev_path, strerror(errno));
	while (take_records(k))
		;
	if (ioctl(k->dev, KMON_GET_STATS, &k->st))
		fatal("%s: stats: %s", k->dev_path, strerror(errno));
	close(k->dev);
	/* Errors of a write-back (NFS, a quota) come at the close. */
	if (close(k->out))
		fatal("%s: %s", k->out_name, strerror(errno));
}

/*
 * pids.dat: "PID<tab>NAME" per task the log names, by PID; written in
 * one go, then renamed over PIDFIL (a regular file), after fsync(), so
 * that a crash leaves the old list or the new one.
 */
static void write_pids(struct kmonlog *k)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		fatal("out of memory");
	if (tasks)
		qsort(tasks, tasks_cap, sizeof(*tasks), cmp_task);
	for (i = 0; i < ntasks; i++)
		fprintf(f, "%u\t%s\n", tasks[i].pid, tasks[i].name);
	if (fclose(f))
		fatal("out of memory");
	write_all(k->pid_fd, text, len, k->pid_path);
	free(text);
	if (pid_tmp && fsync(k->pid_fd))
		fatal("%s: %s", k->pid_path, strerror(errno));
	if (close(k->pid_fd))
		fatal("%s: %s", k->pid_path, strerror(errno));
	if (pid_tmp) {
		if (rename(pid_tmp, k->pid_file))
			fatal("%s: %s", k->pid_path, strerror(errno));
		pid_tmp = NULL;
	}
}

/* The reader's CPU time, in all and per record read: what it costs to keep up. */
static void report_cpu(struct kmonlog *k)
{
	struct rusage ru;
	double s;

	if (getrusage(RUSAGE_SELF, &ru))
		return;
	s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	fprintf(stderr, "%s: CPU time %.3f s, %.3f us per record, %s\n", prog, s,
		k->records_read ? s * 1e6 / k->records_read : 0.0,
		k->ctrl ? "read in place (mmap)" : "read()");
}

/*
 * The totals on standard error, and the exit status: 1 if the kernel
 * lost records, or if kmonlog read fewer than the device says it
 * received.
 */
static int report(struct kmonlog *k)
{
	const struct kmon_stats *st = &k->st;
	int status = KMT_EXIT_OK;

	fprintf(stderr, "%s: %llu bytes in %.3f s, %llu records received; ", prog, k->written,
		(now_ms() - k->t0) / 1000.0, (unsigned long long)st->records);
	fprintf(stderr, "lost: %llu (buffer full), %llu (refused by the rings)\n",
		(unsigned long long)st->overruns, (unsigned long long)st->ring_overruns);
	if (st->overruns || st->ring_overruns)
		status = KMT_EXIT_DATA;
	if (k->cut_err) {
		fprintf(stderr, "%s: cut short after %llu bytes (%s): ", prog, k->written,
			strerror(k->cut_err));
		fprintf(stderr, "%llu records (%llu bytes) not written: lost\n", k->past_records,
			k->past_bytes);
		status = KMT_EXIT_USAGE;
	} else if (k->past_records) {
		fprintf(stderr, "%s: %llu records (%llu bytes) past -m %llu not written\n",
			prog, k->past_records, k->past_bytes, k->bmax);
	}
	report_cpu(k);
	if (st->records > k->records_read) {
		fprintf(stderr, "%s: %llu of the records received were not read: lost\n", prog,
			(unsigned long long)st->records - k->records_read);
		if (status < KMT_EXIT_DATA)
			status = KMT_EXIT_DATA;
	}
	/* A report that could not be written is an I/O error. */
	if (fflush(stderr) || ferror(stderr))
		status = KMT_EXIT_USAGE;
	return status;
}

int main(int argc, char **argv)
{
	struct kmonlog k = {
		.dev_path = "/dev/kmon",
		.pid_path = "pids.dat",
		.bufsize = KMON_BUFFSIZE_DEFAULT,
		.bufsize_arg = "1M",
		.nice = KMT_NICE_DEFAULT,
	};
	bool stdout_closed = keep_std_fds();
	sigset_t stopsigs;
	int status;

	parse_args(&k, argc, argv);
	if (stdout_closed && !k.out_path)
		fatal("standard output is closed: where should the log go? (-o OUTFIL)");
	/*
	 * From here a first SIGINT or SIGTERM stops the capture, even one
	 * that comes before it starts, and a second one ends kmonlog; even
	 * if they came blocked from the parent.
	 */
	kmt_catch_stop_signals();
	/* Past RLIMIT_FSIZE a write fails with EFBIG: the capture is cut, not killed. */
	signal(SIGXFSZ, SIG_IGN);
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &stopsigs, NULL);

	open_output(&k);
	resolve_pidfile(&k);
	check_files(&k);
	open_device(&k);
	setup_device(&k);
	map_device(&k);
	open_pidfile(&k);
	truncate_output(&k);
	capture(&k);
	/* The counts first: a full disk may refuse the names too. */
	status = report(&k);
	write_pids(&k);
	return status;
}
