# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
# scripts/test-tools.d/kmonlog.sh - kmonlog's command line, files, limits
# and signals on the host, which has no /dev/kmon: a preloaded library
# (fakekmon.so, below) answers the device's ioctls, read() and ppoll()
# on a regular file of records given as -d, as Documentation/trace/kmon.rst
# says the device does. Sourced by scripts/test-tools ($out, $src, $KOBJ,
# t_pass, t_fail, failed). KMT_KMONLOG=PATH tests another kmonlog binary
# (the one before a change, to see a test fail).

KL=${KMT_KMONLOG:-$out/kmonlog}
kd=$out/kmonlog-t
kl_so=$kd/fakekmon.so
rm -rf "$kd"
mkdir -p "$kd"

cat >"$kd/fakekmon.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/*
 * fakekmon.so - /dev/kmon for kmonlog on a host that has none, through
 * LD_PRELOAD: the ioctls with KMON_IOC_MAGIC succeed as the device's
 * would (Documentation/trace/kmon.rst), and the file they were made on
 * (kmonlog -d FILE, a regular file of records) is the device's buffer:
 * read() returns whole records from it, as many as fit; with none left
 * it blocks until a signal while started and returns 0 once stopped;
 * ppoll() says POLLIN while records are left, POLLHUP once stopped, and
 * else waits for its timeout or a signal. Environment:
 *   FAKEKMON_ONE=1            one record per read()
 *   FAKEKMON_RAW=1            read() returns the file's bytes as they are
 *   FAKEKMON_OVERRUNS=N       KMON_GET_STATS's overruns; POLLERR from the
 *                             start until KMON_GET_STATS reads them, as the
 *                             device does; a reader that polls on without
 *                             reading them is stopped after 1000 POLLERRs
 *                             (exit 125, "fakekmon: busy loop")
 *   FAKEKMON_RING_OVERRUNS=N  its ring_overruns
 *   FAKEKMON_UNREAD=N         records received that read() never returns
 *   FAKEKMON_STARTED=FILE     created by KMON_START: the capture has begun
 *   FAKEKMON_CLASSES=FILE     KMON_SET_CLASSES writes the mask it got there
 *                             ("0x90000"): what -C asked for
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/kmon.h>

static int dev = -1, started, stats_read, pollerrs;
static unsigned long long nrec, nbytes;

static unsigned long long env(const char *name)
{
	const char *v = getenv(name);

	return v ? strtoull(v, NULL, 0) : 0;
}

static void *real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static int real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	static int (*f)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);

	if (!f)
		f = real("ppoll");
	return f(fds, n, t, m);
}

static int has_data(void)
{
	struct stat st;

	return !fstat(dev, &st) && lseek(dev, 0, SEEK_CUR) < st.st_size;
}

/* The bytes of the whole records from the file's offset that fit in @max. */
static size_t whole(size_t max, unsigned long long *recs)
{
	off_t pos = lseek(dev, 0, SEEK_CUR);
	unsigned char h[KMON_HDR_SIZE + KMON_CPU_EXT_SIZE];
	size_t len = 0, rl;

	*recs = 0;
	while (pread(dev, h, sizeof(h), pos + len) >= KMON_HDR_SIZE) {
		rl = (h[0] == KMON_CPU_EXT ? sizeof(h) : KMON_HDR_SIZE) + (h[9] | h[10] << 8);
		if (len + rl > max)
			break;
		len += rl;
		++*recs;
		if (env("FAKEKMON_ONE"))
			break;
	}
	return len;
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*f)(int, unsigned long, void *);
	struct kmon_stats *st;
	va_list ap;
	void *arg;
	long v;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) != KMON_IOC_MAGIC) {
		if (!f)
			f = real("ioctl");
		return f(fd, req, arg);
	}
	dev = fd;
	switch (req) {
	case KMON_BUFFSIZE:
		v = *(long *)arg;
		if (v < KMON_BUFFSIZE_MIN || v > KMON_BUFFSIZE_MAX)
			break;
		return 0;
	case KMON_SET_CLASSES:
		if (getenv("FAKEKMON_CLASSES")) {
			FILE *c = fopen(getenv("FAKEKMON_CLASSES"), "w");

			if (c) {
				fprintf(c, "%#llx\n", (unsigned long long)*(__u64 *)arg);
				fclose(c);
			}
		}
		return 0;
	case KMON_START:
	case KMON_STOP:
		if (started == (req == KMON_START)) {
			errno = EALREADY;
			return -1;
		}
		started = req == KMON_START;
		if (started && getenv("FAKEKMON_STARTED"))
			close(open(getenv("FAKEKMON_STARTED"), O_WRONLY | O_CREAT, 0644));
		return 0;
	case KMON_GET_STATS:
		st = arg;
		memset(st, 0, sizeof(*st));
		st->records = nrec + env("FAKEKMON_UNREAD");
		st->bytes = nbytes;
		st->overruns = env("FAKEKMON_OVERRUNS");
		st->ring_overruns = env("FAKEKMON_RING_OVERRUNS");
		st->started = started;
		stats_read = 1;
		return 0;
	default:
		errno = ENOTTY;
		return -1;
	}
	errno = EINVAL;
	return -1;
}

/* Nothing to read while started: the device blocks until a signal. */
static ssize_t block(void)
{
	sigset_t now;

	sigprocmask(SIG_SETMASK, NULL, &now);
	real_ppoll(NULL, 0, NULL, &now);
	errno = EINTR;
	return -1;
}

ssize_t read(int fd, void *buf, size_t count)
{
	static ssize_t (*f)(int, void *, size_t);
	unsigned long long recs = 0;
	ssize_t n;
	size_t len;

	if (!f)
		f = real("read");
	if (fd != dev || dev < 0)
		return f(fd, buf, count);
	len = env("FAKEKMON_RAW") ? count : whole(count, &recs);
	n = len ? f(fd, buf, len) : 0;
	if (n > 0) {
		nrec += recs;
		nbytes += n;
		return n;
	}
	return started ? block() : 0;
}

/* The device cannot be mapped here: kmonlog falls back to read(). */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*f)(void *, size_t, int, int, int, off_t);

	if (dev >= 0 && fd == dev) {
		errno = ENODEV;
		return MAP_FAILED;
	}
	if (!f)
		f = real("mmap");
	return f(addr, len, prot, flags, fd, off);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	if (dev < 0 || n != 1 || fds[0].fd != dev)
		return real_ppoll(fds, n, t, m);
	fds[0].revents = 0;
	if (env("FAKEKMON_OVERRUNS") && !stats_read) {
		fds[0].revents |= POLLERR;
		if (++pollerrs > 1000) {
			static const char msg[] = "fakekmon: busy loop: POLLERR 1000 times, no KMON_GET_STATS\n";

			ssize_t w = write(2, msg, sizeof(msg) - 1);

			_exit(125 + 0 * w);
		}
	}
	if (has_data())
		fds[0].revents |= POLLIN;
	if (!started)
		fds[0].revents |= POLLHUP;
	return fds[0].revents ? 1 : real_ppoll(NULL, 0, t, m);
}
EOF
if ! gcc -shared -fPIC -O2 -Wall -Wextra -isystem "$KOBJ/usr/include" -o "$kl_so" \
	"$kd/fakekmon.c" -ldl >"$kd/fakekmon.log" 2>&1; then
	t_fail "kmonlog: the fake device fakekmon.so builds" "$(head -c 300 "$kd/fakekmon.log")"
	failed=1
fi

# ---- Records, as the device returns them -------------------------------

kl_ts=1000
# kl_le VALUE BYTES: VALUE in BYTES little-endian bytes, as printf %b escapes.
kl_le() {
	local v=$1 n=$2 s=""
	while [ "$n" -gt 0 ]; do
		s+=$(printf '\\x%02x' $((v & 255)))
		v=$((v >> 8))
		n=$((n - 1))
	done
	printf '%s' "$s"
}
# kl_hdr BLOB_SIZE: a record header on CPU 0, 1 us after the last one.
kl_hdr() {
	kl_ts=$((kl_ts + 1000))
	printf '%b' "\\x00$(kl_le "$kl_ts" 8)$(kl_le "$1" 2)"
}
# kl_que PID: KMON_DT_TSKQUEUE32 of PID, 16 bytes.
kl_que() { kl_hdr 5; printf '%b' "\\x05$(kl_le "$1" 4)"; }
# kl_swc PREV NEXT: KMON_DT_TSKSWITCH32, 20 bytes.
kl_swc() { kl_hdr 9; printf '%b' "\\x07$(kl_le "$1" 4)$(kl_le "$2" 4)"; }
# kl_alloc PID CTX: KMON_DT_ALLOC (kmalloc) of PID in context CTX, 64 bytes.
kl_alloc() {
	kl_hdr 53
	printf '%b' "\\x09\\x00$(kl_le "$2" 1)$(kl_le "$1" 4)"
	head -c 46 /dev/zero
}
# kl_test SIZE: KMON_DT_TEST with a blob of SIZE bytes (6 or more), 11 + SIZE bytes.
kl_test() {
	kl_hdr "$1"
	printf '%b' "\\x7f\\x00$(kl_le "$kl_ts" 4)"
	head -c $(($1 - 6)) /dev/zero
}

# ---- Running it --------------------------------------------------------

# kl_case NAME: a new directory $kc for a case, and a fresh verdict.
kl_case() {
	kc=$kd/$1
	mkdir -p "$kc"
	kl_bad=""
}
# kl DIR ARGS...: kmonlog ARGS in DIR on the fake device DIR/dev, killed
# after ${kl_limit:-20} s (status 137); the caller redirects.
kl() {
	local d=$1
	shift
	(cd "$d" && exec timeout -s KILL "${kl_limit:-20}" env LD_PRELOAD="$kl_so" "$KL" -d dev "$@")
}
# kl_run ARGS...: kl in $kc, standard output to $kc/stdout, standard
# error to $kc/err; the status in kl_rc.
kl_run() {
	kl_rc=0
	kl "$kc" "$@" >"$kc/stdout" 2>"$kc/err" </dev/null || kl_rc=$?
}
# kl_bg ARGS...: kmonlog ARGS in $kc in the background, its PID in
# kl_pid (no timeout: kl_wait kills it); FAKEKMON_STARTED=$kc/started.
kl_bg() {
	(cd "$kc" && FAKEKMON_STARTED=started exec env LD_PRELOAD="$kl_so" "$KL" -d dev "$@" \
		>"$kc/stdout" 2>"$kc/err" </dev/null) &
	kl_pid=$!
}
# kl_started: true once the background kmonlog started its capture (5 s at most).
kl_started() {
	local n=50
	while [ ! -e "$kc/started" ] && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	[ -e "$kc/started" ]
}
# kl_alive: whether the background kmonlog still runs.
kl_alive() { kill -0 "$kl_pid" 2>/dev/null; }
# kl_wait SECONDS: waits for the background kmonlog, killing it after
# SECONDS; its status in kl_rc (137 if killed).
kl_wait() {
	local n=$(($1 * 10))
	while kl_alive && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	if kl_alive; then
		kill -KILL "$kl_pid"
	fi
	kl_rc=0
	wait "$kl_pid" || kl_rc=$?
}
# kl_want STATUS [REGEX]: kmonlog exited STATUS and said REGEX on standard error.
kl_want() {
	[ "$kl_rc" -eq "$1" ] || kl_bad+=" [exit $kl_rc, want $1]"
	if [ $# -gt 1 ] && ! grep -Eq -- "$2" "$kc/err"; then
		kl_bad+=" [standard error lacks /$2/]"
	fi
}
# kl_same A B: files A and B (in $kc) have the same bytes.
kl_same() { cmp -s "$kc/$1" "$kc/$2" || kl_bad+=" [$1 is not $2]"; }
# kl_verdict WHAT: PASS, or FAIL with what went wrong and the start of standard error.
kl_verdict() {
	if [ -z "$kl_bad" ]; then
		t_pass "kmonlog: $1"
	else
		t_fail "kmonlog: $1" "$kl_bad; stderr: $(head -c 300 "$kc/err" 2>/dev/null | tr '\n' ' ')"
		failed=1
	fi
}
# kl_snap FILE: the files of $kc but kmonlog's standard output and error,
# their kinds, inodes, sizes and checksums.
kl_snap() {
	(cd "$kc" && find . -mindepth 1 ! -name stdout ! -name err -printf '%p %y %i %s\n' &&
		find . -mindepth 1 -type f ! -name stdout ! -name err -exec cksum {} +) |
		LC_ALL=C sort >"$kd/$1"
}
# kl_unchanged: no file of $kc was added, removed, truncated, replaced or
# changed since kl_snap before.
kl_unchanged() {
	kl_snap after
	cmp -s "$kd/before" "$kd/after" ||
		kl_bad+=" [files changed: $(diff "$kd/before" "$kd/after" | grep '^[<>]' | tr '\n' ' ' || true)]"
}
# kl_size FILE: the bytes of $kc/FILE, -1 if there is none.
kl_size() {
	if [ -f "$kc/$1" ]; then
		wc -c <"$kc/$1"
	else
		echo -1
	fi
}
# kl_std NAME: $kc/NAME holds "0<tab>[IDLE]" and "1<tab>..." , the list of kl_dev2.
kl_dev2() { { kl_que 0; kl_que 1; } >"$kc/dev"; }

# ---- The command line --------------------------------------------------

kl_case cli
rc=0
"$KL" --help >"$kc/help" 2>"$kc/err" || rc=$?
[ "$rc" -eq 0 ] || kl_bad+=" [--help: exit $rc]"
[ ! -s "$kc/err" ] || kl_bad+=" [--help wrote to standard error]"
grep -q '^Usage: kmonlog \[-d DEVICE\]' "$kc/help" || kl_bad+=" [--help: no usage line]"
for o in -d,--device=DEVICE -b,--buffer-size=BUFSIZ -C,--classes=CLASSES -o,--output=OUTFIL \
	-t,--time-ms=MSTEST -m,--bytes=BMAX -p,--pids=PIDFIL -h,--help \
	-V,--version; do
	grep -qF -- "  ${o%%,*}, ${o#*,} " "$kc/help" || kl_bad+=" [--help lacks '${o%%,*}, ${o#*,}']"
done
grep -qF -- '      --nice=NICE           read at nice NICE' "$kc/help" ||
	kl_bad+=" [--help lacks '--nice=NICE', without a letter]"
grep -qF -- '--device=DEVICE       the kmon device file' "$kc/help" ||
	kl_bad+=" [-d does not say it wants the device file]"
grep -qF 'Exit status: 0 done, 1 the data has a problem (records were lost),' "$kc/help" ||
	kl_bad+=" [--help lacks kmt_cli.h's exit status lines]"
rc=0
"$KL" -h >"$kc/h" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || kl_bad+=" [-h: exit $rc]"
cmp -s "$kc/h" "$kc/help" || kl_bad+=" [-h is not --help]"
kl_ver=$(sed -n 's/^#define KMT_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$src/kmt_cli.h" || true)
kl_fmt=$(sed -n 's/^#define KMON_VERSION[[:space:]]*\([0-9][0-9]*\).*/\1/p' \
	"$KOBJ/usr/include/linux/kmon.h" || true)
printf 'kmonlog (kmemtrace tools) %s\nkmon format %s\n' "$kl_ver" "$kl_fmt" >"$kc/version.want"
[ -n "$kl_ver" ] || kl_bad+=" [no KMT_VERSION found in kmt_cli.h]"
[ -n "$kl_fmt" ] || kl_bad+=" [no KMON_VERSION found in kmon.h]"
for v in --version -V; do
	rc=0
	"$KL" "$v" >"$kc/version" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || kl_bad+=" [$v: exit $rc]"
	cmp -s "$kc/version" "$kc/version.want" ||
		kl_bad+=" [$v: '$(tr '\n' '|' <"$kc/version")', want '$(tr '\n' '|' <"$kc/version.want")']"
done
# Bad usage: the message, then the whole help on standard error, exit 2.
for a in "--bogus|unrecognized option '--bogus'" "-z|invalid option -- 'z'" \
	"-o|option requires an argument -- 'o'" "--output|option '--output' requires an argument" \
	"--help=x|option '--help' doesn't allow an argument" "x|unexpected argument 'x'"; do
	rc=0
	"$KL" "${a%%|*}" >"$kc/bad.out" 2>"$kc/bad.err" || rc=$?
	[ "$rc" -eq 2 ] || kl_bad+=" [${a%%|*}: exit $rc, want 2]"
	[ ! -s "$kc/bad.out" ] || kl_bad+=" [${a%%|*}: wrote to standard output]"
	grep -qF -- "kmonlog: ${a#*|}" "$kc/bad.err" || kl_bad+=" [${a%%|*}: no 'kmonlog: ${a#*|}']"
	grep -q '^Usage: kmonlog' "$kc/bad.err" || kl_bad+=" [${a%%|*}: the help lacks its usage line]"
	grep -qF -- '--device=DEVICE' "$kc/bad.err" || kl_bad+=" [${a%%|*}: the help lacks -d]"
	grep -qF 'Exit status: 0 done' "$kc/bad.err" ||
		kl_bad+=" [${a%%|*}: the help lacks the exit statuses]"
done
kl_verdict "--help and -h (to standard output, exit 0, every option long and short, -d naming the device file, kmt_cli.h's exit statuses), --version and -V (kmt_print_version, the kmon format), bad options and arguments: the help on standard error, exit 2"

kl_case zero
for a in "-m|0|'0' must be above 0" "-m|00k|'00k' must be above 0" \
	"-b|0M|'0M' must be above 0" "-m|0x|'0x' is not a size (N, Nk, NM, NG)" \
	"-C|0|'0' names no class: it would log nothing" "-C|0x0|'0x0' names no class" \
	"-C|bogus|'bogus' is not a class mask or a list of sched"; do
	IFS='|' read -r o v m <<<"$a"
	rc=0
	"$KL" "$o" "$v" >"$kc/bad.out" 2>"$kc/bad.err" || rc=$?
	[ "$rc" -eq 2 ] || kl_bad+=" [$o $v: exit $rc, want 2]"
	grep -qF -- "kmonlog: $o: $m" "$kc/bad.err" ||
		kl_bad+=" [$o $v: says '$(head -n 1 "$kc/bad.err")', want '$o: $m']"
done
kl_verdict "-m 0, -b 0M: 'must be above 0'; -C 0: 'names no class' (not 'not a size', 'not a class mask'); exit 2"

# -C (--classes), the letter of classes in ktrdump too, and -c, its old
# letter (a CPU list in ktrdump and kmemtrace-report), kept for this
# release: both ask the device for the classes named (sched and kmalloc:
# KTR_BIT_SCHED 19 and KTR_BIT_KMALLOC 16 of <linux/ktr.h>, 0x90000) and
# capture; -c says once, on standard error, that it is now -C, and
# changes nothing else; -C says nothing.
kl_classes() { # NAME ARGS...: a capture with ARGS, the mask the device got in $kc/NAME.mask
	local name=$1 mask
	shift
	kl_dev2
	rm -f "$kc/$name.mask" "$kc/log"
	FAKEKMON_CLASSES=$kc/$name.mask kl_run "$@" -o log -t 200
	cp "$kc/err" "$kc/$name.err"
	kl_want 0
	kl_same dev log
	mask=$(cat "$kc/$name.mask" 2>/dev/null || echo none)
	[ "$mask" = 0x90000 ] || kl_bad+=" [$name: the device got classes '$mask', want 0x90000]"
}
kl_case classes-new
kl_classes C -C sched,kmalloc
kl_classes long --classes=0x90000
grep -q 'is now' "$kc/C.err" "$kc/long.err" && kl_bad+=" [-C or --classes warned]"
kl_verdict "-C sched,kmalloc and --classes=0x90000: the device asked for sched and kmalloc (0x90000), records captured, exit 0, no warning"

kl_case classes-old
kl_classes c -c sched,kmalloc
kl_classes cc -c page -c sched,kmalloc
for f in c cc; do
	n=$(grep -c . "$kc/$f.err" || true)
	[ "$n" -eq 3 ] ||
		kl_bad+=" [$f: $n lines on standard error, want the warning, the totals and the CPU time]"
	# The fake device cannot be mapped (ENODEV): read() instead, and said.
	grep -qE '^kmonlog: CPU time [0-9.]+ s, [0-9.]+ us per record, read\(\)$' "$kc/$f.err" ||
		kl_bad+=" [$f: no CPU time line naming read()]"
	n=$(grep -cxF 'kmonlog: -c is now -C (classes); -c will name CPUs' "$kc/$f.err" || true)
	[ "$n" -eq 1 ] ||
		kl_bad+=" [$f: $n warnings naming -C, want 1: $(head -n 2 "$kc/$f.err" | tr '\n' '|')]"
done
kl_verdict "-c, the old letter of -C: still asks the device for its classes and captures, exit 0, with one warning (also when given twice): '-c is now -C (classes); -c will name CPUs'"

kl_case long
kl_dev2
kl_run --device=dev --buffer-size=4k --classes=sched,kmalloc --output=log --time-ms=200 \
	--bytes=1M --pids=p.dat --nice=0
kl_want 0
kl_same dev log
[ "$(head -n 1 "$kc/p.dat" 2>/dev/null)" = "$(printf '0\t[IDLE]')" ] || kl_bad+=" [no p.dat]"
kl_verdict "every option has its long form: --device --buffer-size --classes --output --time-ms --bytes --pids --nice capture the fake device's records"

# ---- The files: never the same one twice -------------------------------

# kl_refused NAME REGEX [SETUP] -- ARGS...: in a new case whose directory
# holds dev, log and pids.dat, SETUP (a shell snippet run there) then
# kmonlog ARGS: exit 2 saying REGEX, and no file was added, removed,
# truncated or replaced.
kl_refused() {
	local name=$1 re=$2 setup=""
	shift 2
	if [ "$1" != -- ]; then
		setup=$1
		shift
	fi
	shift
	kl_case "same-$name"
	kl_dev2
	echo "old log" >"$kc/log"
	echo "old pids" >"$kc/pids.dat"
	if [ -n "$setup" ]; then
		(cd "$kc" && eval "$setup")
	fi
	kl_snap before
	kl_run -t 200 "$@"
	kl_want 2 "$re"
	kl_unchanged
	kl_verdict "refused, exit 2, nothing touched: ${setup:+$setup; }kmonlog $*"
}
kl_refused dotslash '-o and -p name the same file \(\./pids\.dat, pids\.dat\)' -- -o ./pids.dat -p pids.dat
kl_refused dotdot '-o and -p name the same file' -- -o ../same-dotdot/./log -p log --nice=0
kl_refused subdotdot '-o and -p name the same file' 'mkdir sub' -- -o sub/../log -p ./log
kl_refused new '-o and -p name the same file' -- -o new -p new
kl_refused symlink-p '-o and -p name the same file' 'ln -s log link' -- -o log -p link
kl_refused symlink-o '-o and -p name the same file' 'ln -s pids.dat link' -- -o link
kl_refused hardlink '-o and -p name the same file' 'ln log hard' -- -o log -p hard
kl_refused absolute '-o and -p name the same file' -- -o "$kd/same-absolute/log" -p log
kl_refused out-dev '-o and -d name the same file \(dev\)' -- -o ./dev
kl_refused pids-dev '-p and -d name the same file \(dev\)' -- -o log -p "$kd/same-pids-dev/dev"
kl_refused pids-dir '-p sub: is a directory' 'mkdir sub' -- -o log -p sub
kl_refused pids-dangling '-p link: a symbolic link to a file that does not exist' \
	'ln -s nowhere/p link' -- -o log -p link

# -o through a dangling symbolic link: the file it names is created, and
# removed when the run is refused or fails before the capture.
kl_case out-dangling
kl_dev2
mkdir "$kc/d"
ln -s newtarget "$kc/link"
ln -s ../t2 "$kc/d/l"
kl_run -t 200 -o link -p newtarget
kl_want 2 '^kmonlog: -o and -p name the same file \(link, newtarget\)'
[ ! -e "$kc/newtarget" ] || kl_bad+=" [refused: newtarget left behind]"
kl_run -o link -b 1k
kl_want 2 'buffer size 1k: Invalid argument'
[ ! -e "$kc/newtarget" ] || kl_bad+=" [device error: newtarget left behind]"
kl_run -o d/l -b 1k
kl_want 2 'buffer size 1k: Invalid argument'
[ ! -e "$kc/t2" ] || kl_bad+=" [device error: t2 (-o d/l, a link to ../t2) left behind]"
[ -L "$kc/link" ] || kl_bad+=" [link removed or replaced]"
[ -L "$kc/d/l" ] || kl_bad+=" [d/l removed or replaced]"
kl_run -t 200 -o d/l
kl_want 0
kl_same dev t2
[ -L "$kc/d/l" ] || kl_bad+=" [d/l replaced by the log]"
kl_verdict "-o LINK, a dangling symbolic link: a refusal (-p its target) or a device error (-b 1k) leaves no target file; a capture writes the target, relative to the link's directory"

# Standard output and standard error, as the shell opened them (>> so
# that the shell does not truncate them itself).
kl_case same-stdout-pids
kl_dev2
echo "old pids" >"$kc/pids.dat"
kl_snap before
kl_rc=0
kl "$kc" -t 200 >>"$kc/pids.dat" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 2 'standard output and -p name the same file \(pids\.dat\)'
kl_unchanged
kl_verdict "refused, exit 2, nothing touched: kmonlog >>pids.dat (the capture on standard output, the task list over it)"

kl_case same-stdout-dev
kl_dev2
kl_snap before
kl_rc=0
kl "$kc" -m 1k >>"$kc/dev" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 2 'standard output and -d name the same file \(dev\)'
kl_unchanged
kl_verdict "refused, exit 2, nothing touched: kmonlog -d dev >>dev"

# The message itself goes where standard error goes: the file grows by
# that one line, nothing else.
# kl_grown FILE OLD REGEX: FILE is OLD (bytes) and then one line matching REGEX.
kl_grown() {
	local f=$kc/$1 n
	n=$(printf '%s' "$2" | wc -c)
	printf '%s' "$2" >"$kd/old"
	head -c "$n" "$f" | cmp -s - "$kd/old" || kl_bad+=" [$1 no longer begins as it did]"
	tail -c +$((n + 1)) "$f" >"$kd/grown"
	[ "$(wc -l <"$kd/grown")" -eq 1 ] ||
		kl_bad+=" [$1 got $(wc -l <"$kd/grown") lines, not one: $(head -c 200 "$kd/grown" | tr -c '[:print:]' '.' || true)]"
	grep -Eq -- "$3" "$kd/grown" || kl_bad+=" [$1 did not get the message /$3/]"
}
kl_case same-stderr-log
kl_dev2
printf 'old log\n' >"$kc/log"
kl_rc=0
kl "$kc" -t 200 -o log 2>>"$kc/log" >"$kc/stdout" </dev/null || kl_rc=$?
kl_want 2
kl_grown log 'old log
' '^kmonlog: -o and standard error are the same file \(log\)'
[ ! -e "$kc/pids.dat" ] || kl_bad+=" [pids.dat written]"
kl_verdict "refused, exit 2: kmonlog -o log 2>>log (the messages would be mixed into the log)"

kl_case same-stdout-stderr
kl_dev2
printf 'old log\n' >"$kc/log"
kl_rc=0
kl "$kc" -t 200 >>"$kc/log" 2>&1 </dev/null || kl_rc=$?
kl_want 2
kl_grown log 'old log
' '^kmonlog: standard output and standard error are the same file: '
kl_verdict "refused, exit 2: kmonlog >>log 2>&1"

kl_case same-stderr-pids
kl_dev2
printf 'old pids\n' >"$kc/pids.dat"
kl_rc=0
kl "$kc" -t 200 -o log 2>>"$kc/pids.dat" >"$kc/stdout" </dev/null || kl_rc=$?
kl_want 2
kl_grown pids.dat 'old pids
' '^kmonlog: -p and standard error name the same file \(pids\.dat\)'
[ ! -s "$kc/log" ] || kl_bad+=" [log written]"
kl_verdict "refused, exit 2: kmonlog -o log 2>>pids.dat (the messages would be lost with it)"

# Character devices other than the kmon device may be shared.
kl_case same-null
kl_dev2
kl_rc=0
kl "$kc" -t 200 -o /dev/null 2>/dev/null >"$kc/stdout" </dev/null || kl_rc=$?
kl_want 0
[ "$(head -n 1 "$kc/pids.dat" 2>/dev/null)" = "$(printf '0\t[IDLE]')" ] || kl_bad+=" [no pids.dat]"
kl_verdict "a character device may be shared: kmonlog -o /dev/null 2>/dev/null captures, exit 0"

# -o's file is emptied; standard output is as the shell opened it.
kl_case outputs
kl_dev2
printf 'old log\n' >"$kc/log"
printf 'old log\n' >"$kc/app"
kl_run -t 200 -o log
kl_want 0
kl_same dev log
kl_rc=0
kl "$kc" -t 200 -p p2.dat >>"$kc/app" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 0
{ printf 'old log\n'; cat "$kc/dev"; } >"$kc/app.want"
kl_same app app.want
kl_verdict "-o LOG replaces LOG's content; kmonlog >>LOG appends to it"

# ---- The task list (pids.dat) ------------------------------------------

kl_case pids
sleep 30 &
kl_sleep=$!
kl_gone=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -e "/proc/$kl_gone" ]; do
	kl_gone=$((kl_gone - 1))
done
# The sleep's command line, once it has exec'd.
n=50
while [ "$(tr '\0' ';' <"/proc/$kl_sleep/cmdline" 2>/dev/null)" != "sleep;30;" ] && [ $n -gt 0 ]; do
	sleep 0.1
	n=$((n - 1))
done
{
	kl_que "$kl_gone"
	kl_swc "$kl_sleep" 0
	kl_que "$kl_sleep"
	kl_alloc "$kl_sleep" 0
	kl_alloc 0 1
	kl_test 20
} >"$kc/dev"
kl_run -t 200 -o log
kill "$kl_sleep" 2>/dev/null || true
wait "$kl_sleep" 2>/dev/null || true
printf '0\t[IDLE]\n%s\tsleep;30;\n%s\t[exited]\n' "$kl_sleep" "$kl_gone" | sort -n >"$kc/pids.want"
kl_want 0
kl_same dev log
kl_same pids.dat pids.want
# Only the PIDs of the log: a PID 0 of an allocation in a hard interrupt is no task.
{ kl_alloc 0 1; kl_alloc 0 2; kl_test 20; } >"$kc/dev"
kl_run -t 200 -o log -p irq.dat
kl_want 0
[ -f "$kc/irq.dat" ] || kl_bad+=" [no irq.dat]"
[ ! -s "$kc/irq.dat" ] || kl_bad+=" [irq.dat is not an empty list]"
kl_verdict "pids.dat: one line per PID of the log, by PID, 'PID<tab>NAME': [IDLE] for 0, the command line with ';' for a task, [exited] for one gone; a PID 0 in interrupt context is no task"

kl_case pids-symlink
kl_dev2
mkdir "$kc/real"
echo "old pids" >"$kc/real/p.dat"
ln -s real/p.dat "$kc/link"
kl_run -t 200 -o log -p link
kl_want 0
[ -L "$kc/link" ] || kl_bad+=" [the link was replaced]"
[ "$(head -n 1 "$kc/real/p.dat")" = "$(printf '0\t[IDLE]')" ] || kl_bad+=" [real/p.dat not written]"
[ -z "$(find "$kc" -name '*.??????')" ] || kl_bad+=" [temporary files left]"
kl_verdict "-p LINK, a symbolic link: the file it points to gets the list, the link stays"

kl_case pids-fifo
kl_dev2
mkfifo "$kc/fifo"
timeout 20 cat "$kc/fifo" >"$kc/got" &
kl_cat=$!
kl_run -t 200 -o log -p fifo
kl_want 0
if [ -p "$kc/fifo" ]; then
	wait "$kl_cat" || kl_bad+=" [the FIFO's reader failed]"
	printf '0\t[IDLE]\n1\t%s\n' "$(tr '\0' ';' </proc/1/cmdline)" >"$kc/want"
	kl_same got want
else
	kl_bad+=" [the FIFO was replaced]"
	kill "$kl_cat" 2>/dev/null || true
	wait "$kl_cat" 2>/dev/null || true
fi
kl_verdict "-p FIFO: the list is written into the FIFO, which stays a FIFO (not renamed over)"

# A first SIGINT while it waits for the FIFO's reader is a stop, not an error.
kl_case pids-fifo-wait
kl_dev2
mkfifo "$kc/fifo"
kl_bg -o log -p fifo
sleep 0.5
kill -INT "$kl_pid" 2>/dev/null || true
sleep 0.5
kl_alive || kl_bad+=" [SIGINT ended it while it waited for the FIFO's reader]"
timeout 20 cat "$kc/fifo" >"$kc/got" || kl_bad+=" [the FIFO's reader failed]"
kl_wait 5
kl_want 0
kl_same dev log
[ "$(head -n 1 "$kc/got")" = "$(printf '0\t[IDLE]')" ] || kl_bad+=" [the FIFO got no list]"
kl_verdict "-p FIFO: a SIGINT while it waits for the reader stops the capture as soon as it begins, exit 0"

kl_case pids-chrdev
kl_dev2
if mknod "$kc/null" c 1 3 2>"$kc/mknod.err"; then
	kl_run -t 200 -o log -p null
	kl_want 0
	[ -c "$kc/null" ] || kl_bad+=" [the device node was replaced]"
	kl_same dev log
	kl_verdict "-p /dev/null (a node of it): written to, not renamed over"
else
	t_skip "kmonlog: -p a character device" "mknod: $(head -c 200 "$kc/mknod.err") (needs root)"
fi

# pids.dat is a new file: the old one's mode and owner, hard links keep the old list.
kl_case pids-mode
kl_dev2
echo "old pids" >"$kc/pids.dat"
chmod 604 "$kc/pids.dat"
ln "$kc/pids.dat" "$kc/hard"
kl_owner=$(stat -c %u:%g "$kc/pids.dat")
if [ "$(id -u)" -eq 0 ]; then
	chown 12345:23456 "$kc/pids.dat"
	kl_owner=12345:23456
fi
kl_run -t 200 -o log
kl_want 0
[ "$(stat -c %a "$kc/pids.dat")" = 604 ] ||
	kl_bad+=" [mode $(stat -c %a "$kc/pids.dat"), want the old file's 604]"
[ "$(stat -c %u:%g "$kc/pids.dat")" = "$kl_owner" ] ||
	kl_bad+=" [owner $(stat -c %u:%g "$kc/pids.dat"), want the old file's $kl_owner]"
[ "$(head -n 1 "$kc/pids.dat")" = "$(printf '0\t[IDLE]')" ] || kl_bad+=" [pids.dat not written]"
[ "$(cat "$kc/hard")" = "old pids" ] || kl_bad+=" [the hard link does not keep the old list]"
kl_verdict "pids.dat replaced by a new file with the old one's mode (604) and owner (when root); a hard link to the old one keeps the old list"

# A pids.dat the user may not write: refused before the capture, not replaced.
kl_case pids-readonly
kl_dev2
echo "old pids" >"$kc/pids.dat"
chmod 444 "$kc/pids.dat"
chmod 777 "$kc"
kl_as=()
if [ "$(id -u)" -eq 0 ]; then
	# Root may write any file: run it as nobody, who may write the directory.
	kl_as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
kl_snap before
kl_rc=0
(cd "$kc" && FAKEKMON_STARTED=started exec timeout -s KILL 20 "${kl_as[@]}" \
	env LD_PRELOAD="$kl_so" "$KL" -d dev -t 200 -o log) >"$kc/stdout" 2>"$kc/err" </dev/null ||
	kl_rc=$?
kl_want 2 '^kmonlog: -p pids\.dat: not writable \(Permission denied\)$'
[ ! -e "$kc/started" ] || kl_bad+=" [the capture started]"
kl_unchanged
kl_verdict "a read-only pids.dat (444, run as ${kl_as[*]:-the user}): refused, exit 2, before the capture; nothing touched"

kl_case pids-kept
kl_dev2
echo "old pids" >"$kc/pids.dat"
kl_snap before
kl_run -t 200 -o /dev/full
kl_want 2 '^kmonlog: /dev/full: No space left on device; the capture ends here$'
grep -Eq '^kmonlog: cut short after 0 bytes \(No space left on device\): [1-9][0-9]* records \([0-9]+ bytes\) not written: lost$' "$kc/err" ||
	kl_bad+=" [the records not written are not counted lost]"
[ "$(cat "$kc/pids.dat")" != "old pids" ] || kl_bad+=" [pids.dat not written for the log]"
! ls "$kc"/pids.dat.* >/dev/null 2>&1 || kl_bad+=" [a temporary file left]"
kl_verdict "a log that cannot be written (-o /dev/full): the capture ends there, exit 2, the records not written counted lost; pids.dat written, no temporary file left"

# ---- -m: the size limit ------------------------------------------------

# A limit the first record that does not fit sets: nothing after it is
# written, though a smaller record read later would fit.
kl_case m-hole
{ kl_test 100; kl_test 100; kl_que 5; } >"$kc/dev"
head -c 111 "$kc/dev" >"$kc/want"
kl_rc=0
FAKEKMON_ONE=1 kl "$kc" -m 150 -o log >"$kc/stdout" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 0 '^kmonlog: 2 records \(127 bytes\) past -m 150 not written$'
kl_same log want
kl_verdict "-m 150 with records of 111, 111 and 16 bytes read one by one: the log is the first record; the other two are counted past -m, no hole in the log"

# At the limit exactly, it stops: it does not wait for a record that cannot fit.
kl_case m-exact
{ kl_test 100; kl_test 100; kl_test 100; } >"$kc/dev"
kl_rc=0
kl_limit=5 kl "$kc" -m 333 -o log >"$kc/stdout" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 0
kl_same log dev
grep -q 'past -m' "$kc/err" && kl_bad+=" [records said past -m]"
kl_verdict "-m 333 with 333 bytes of records: it stops at once, the log has them all (it did not wait for more)"

# 300 records of 17 to 1035 bytes; the limit holds, whole records in order.
kl_case m-size
kl_sizes=()
for i in $(seq 0 299); do
	kl_sizes+=($((6 + i * 37 % 1019)))
done
for s in "${kl_sizes[@]}"; do
	kl_test "$s"
done >"$kc/dev"
kl_keep=0
kl_k=0
for s in "${kl_sizes[@]}"; do
	[ $((kl_keep + 11 + s)) -le 100000 ] || break
	kl_keep=$((kl_keep + 11 + s))
	kl_k=$((kl_k + 1))
done
kl_total=$(wc -c <"$kc/dev")
head -c "$kl_keep" "$kc/dev" >"$kc/want"
for how in "all in one read:" "one record per read:1"; do
	kl_rc=0
	FAKEKMON_ONE=${how#*:} kl "$kc" -m 100000 -o log >"$kc/stdout" 2>"$kc/err" </dev/null ||
		kl_rc=$?
	kl_want 0 "^kmonlog: $((300 - kl_k)) records \($((kl_total - kl_keep)) bytes\) past -m 100000 not written$"
	kl_want 0 "^kmonlog: $kl_keep bytes in [0-9.]+ s, 300 records received; "
	[ "$(kl_size log)" -le 100000 ] || kl_bad+=" [${how%:*} the log has $(kl_size log) bytes]"
	cmp -s "$kc/log" "$kc/want" || kl_bad+=" [${how%:*} the log is not the first $kl_k records]"
done
kl_verdict "-m 100000 on 300 records of 17 to 1035 bytes, read at once and one by one: the log is the first $kl_k records, $kl_keep bytes (at most 100000), the rest counted past -m"

# ---- Signals and time --------------------------------------------------

# kl_stop_case NAME SIGNAL: a first SIGNAL drains and stops, as -t would.
kl_stop_case() {
	kl_case "stop-$1"
	kl_dev2
	kl_bg -o log
	kl_started || kl_bad+=" [the capture did not start]"
	sleep 0.3
	kl_alive || kl_bad+=" [it ended before the signal]"
	kill "-$2" "$kl_pid" 2>/dev/null || true
	kl_wait 5
	kl_want 0 '^kmonlog: 32 bytes in [0-9]+\.[0-9]{3} s, 2 records received; lost: 0 \(buffer full\), 0 \(refused by the rings\)$'
	kl_same dev log
	[ "$(head -n 1 "$kc/pids.dat" 2>/dev/null)" = "$(printf '0\t[IDLE]')" ] ||
		kl_bad+=" [no pids.dat]"
	kl_verdict "a first SIG$2 stops the capture: the records read, pids.dat and the summary written, exit 0"
}
kl_stop_case int INT
kl_stop_case term TERM

# SIGINT blocked by the parent (a supervisor's mask): still a stop.
kl_case stop-blocked
kl_dev2
(cd "$kc" && FAKEKMON_STARTED=started exec perl -MPOSIX -e \
	'sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGINT, SIGTERM)) or die; exec @ARGV or die' \
	env LD_PRELOAD="$kl_so" "$KL" -d dev -o log >"$kc/stdout" 2>"$kc/err" </dev/null) &
kl_pid=$!
kl_started || kl_bad+=" [the capture did not start]"
sleep 0.3
kill -INT "$kl_pid" 2>/dev/null || true
kl_wait 5
kl_want 0
kl_same dev log
kl_verdict "SIGINT stops the capture even when the parent left SIGINT and SIGTERM blocked"

# A second signal ends it at once, even stuck writing to a pipe nobody reads.
kl_case stop-second
for i in $(seq 300); do
	kl_test 1000
done >"$kc/dev"
mkfifo "$kc/fifo"
exec 7<>"$kc/fifo"
kl_bg -o fifo
kl_started || kl_bad+=" [the capture did not start]"
sleep 0.5
kill -INT "$kl_pid" 2>/dev/null || true
sleep 1
kl_alive || kl_bad+=" [the first SIGINT ended it, stuck writing]"
kill -INT "$kl_pid" 2>/dev/null || true
kl_wait 3
exec 7<&-
[ "$kl_rc" -eq 130 ] || kl_bad+=" [exit $kl_rc, want 130: killed by the second SIGINT]"
kl_verdict "stuck writing to a full pipe, a first SIGINT waits for the write, a second one kills kmonlog at once (status 130)"

kl_case time-huge
kl_dev2
kl_bg -o log -t 18446744073709551615
kl_started || kl_bad+=" [the capture did not start]"
sleep 1
kl_alive || kl_bad+=" [-t 18446744073709551615 ended it within a second]"
kill -INT "$kl_pid" 2>/dev/null || true
kl_wait 5
kl_want 0
kl_same dev log
kl_verdict "-t 18446744073709551615 ms does not wrap around to an immediate stop; SIGINT ends it"

kl_case time
kl_dev2
kl_rc=0
kl_limit=5 kl "$kc" -t 300 -o log >"$kc/stdout" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 0 '^kmonlog: 32 bytes in 0\.[3-9][0-9]{2} s, '
kl_same dev log
kl_verdict "-t 300 ends the capture after 300 ms, exit 0"

# ---- What the device returns, what it lost ------------------------------

kl_case partial
{ kl_que 1; printf 'abcde'; } >"$kc/dev"
kl_rc=0
FAKEKMON_RAW=1 kl "$kc" -t 200 -o log >"$kc/stdout" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 3 '^kmonlog: dev: a partial record header at byte 16 of a read of 21 bytes$'
kl_verdict "a read that ends in a partial record header: named, exit 3 (corrupt input), not dropped"

kl_case blob0
{ kl_que 1; kl_hdr 0; } >"$kc/dev"
kl_rc=0
FAKEKMON_RAW=1 kl "$kc" -t 200 -o log >"$kc/stdout" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 3 '^kmonlog: dev: a blob of 0 bytes, not 1 to 1024, at byte 16 of a read$'
kl_verdict "a record with a blob of 0 bytes: named, exit 3"

kl_case unread
kl_dev2
kl_rc=0
FAKEKMON_UNREAD=2 kl "$kc" -t 200 -o log >"$kc/stdout" 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 1 '^kmonlog: 2 of the records received were not read: lost$'
kl_verdict "records the device received that kmonlog never read: counted lost, exit 1"

kl_case overruns
kl_dev2
kl_rc=0
FAKEKMON_OVERRUNS=3 FAKEKMON_RING_OVERRUNS=4 kl "$kc" -t 200 -o log >"$kc/stdout" \
	2>"$kc/err" </dev/null || kl_rc=$?
kl_want 1 '^kmonlog: records lost so far: 3 \(buffer full\), 4 \(refused by the rings\)$'
kl_want 1 ' 2 records received; lost: 3 \(buffer full\), 4 \(refused by the rings\)$'
kl_same dev log
# With standard error closed, no message goes into the log.
kl_rc=0
FAKEKMON_OVERRUNS=3 kl "$kc" -t 200 -o log2 >"$kc/stdout" 2>&- </dev/null || kl_rc=$?
kl_want 1
kl_same dev log2
kl_verdict "POLLERR: the loss so far, then the totals, exit 1; with standard error closed, the log is still only records"

kl_case bufsize
kl_dev2
kl_run -b 16777216G -o log
kl_want 2 '^kmonlog: dev: buffer size 16777216G: Invalid argument \(the device takes 4096 to 268435456 bytes\)$'
[ ! -e "$kc/log" ] || kl_bad+=" [log created]"
kl_run -b 1k -o log
kl_want 2 'buffer size 1k: Invalid argument'
kl_verdict "-b outside the device's range: the size as given, the range, exit 2, no output file left"

kl_case stdout-closed
kl_dev2
kl_rc=0
kl "$kc" -t 200 >&- 2>"$kc/err" </dev/null || kl_rc=$?
kl_want 2 '^kmonlog: standard output is closed'
[ ! -e "$kc/pids.dat" ] || kl_bad+=" [pids.dat written]"
kl_verdict "no -o and standard output closed: exit 2 before the capture"

# ---- The man page says what it prints ----------------------------------

kl_case man
kl_man=$src/man/kmonlog.8
groff -man -Tascii -P-cbou "$kl_man" 2>"$kc/err" >"$kc/man.txt" || kl_bad+=" [groff failed]"
for s in OUTPUT "EXIT STATUS" EXAMPLES SIGNALS "SEE ALSO"; do
	grep -q "^$s\$" "$kc/man.txt" || kl_bad+=" [no $s section]"
done
for p in "records received; lost:" "records lost so far:" "past -m" "were not read: lost" \
	"name the same file" "partial record" "standard output is closed" "PID<tab>NAME" \
	"[IDLE]" "[exited]" "kmonparse(8)" "kmon.rst" "--time-ms" "--bytes" "must be above 0" \
	"names no class" "not writable" "old content" "-c is now -C (classes)" "--classes="; do
	grep -qF -- "$p" "$kc/man.txt" || kl_bad+=" [the page lacks '$p']"
done
kl_verdict "kmonlog.8: OUTPUT, EXIT STATUS, EXAMPLES, SIGNALS; every message kmonlog prints and pids.dat's format"
