# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
# scripts/test-tools.d/ktrdump.sh - ktrdump on KTR captures made here
# byte by byte (krgen, below: Documentation/trace/ktr.rst's formats and
# cpu<N> raw files of struct ktr_raw_header and ktr_raw_entry): CPU
# numbers to 2^32 - 1 and 1100 files under ulimit -n 1024, the merge's
# order and its cost per entry from 2 to 1024 files, the other byte
# order, --follow's account of slots overwritten before a read (a
# directory whose cpu0 is replaced between two reads), the stop signals,
# the output's write errors, the exit statuses and the classes file.
# Sourced by scripts/test-tools ($out, $src, t_pass, t_fail, failed).
# KMT_KTRDUMP=PATH tests another ktrdump binary (the one before a
# change, to see a test fail).

KR=${KMT_KTRDUMP:-$out/ktrdump}
kr=$out/ktrdump-t
rm -rf "$kr"
mkdir -p "$kr"

cat >"$kr/krgen.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/*
 * krgen - KTR raw cpu<N> files, laid out field by field as
 * <linux/ktr.h> and Documentation/trace/ktr.rst say (not through the
 * header's structs, so that a change of the layout shows):
 *
 *   krgen DIR < SCRIPT
 *
 * SCRIPT, one directive a line:
 *   cpu N [nslots=S] [dropped=D] [hcpu=M] [swap]
 *	start DIR/cpuN: the header says CPU M (default N), S slots (1024),
 *	D entries dropped (0); swap: in the other byte order than this
 *	machine's
 *   e TS POS FMT [ARG]...
 *	an entry: time stamp, position, format id, its arguments, each a
 *	number or s:TEXT, a string after the arguments whose offset is the
 *	argument, as the kernel resolves %s and %p
 *   many NCPUS PER [first=F] [seed=R]
 *	NCPUS files cpuF, cpuF+1, ..., each of PER entries of format 0 (one
 *	argument: the entry's number, also its position), time stamps rising
 *	by 0, 1 or 2 from one entry to the next of a CPU (ties within and
 *	across CPUs); prints "TS CPU POS ARG" for each on standard output
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *buf;
static size_t len, cap;
static int swap;
static FILE *out;

/* @v as @n bytes, in this machine's byte order or, with swap, the other. */
static void put(uint64_t v, int n)
{
	static const uint16_t one = 1;
	int little = *(const uint8_t *)&one ^ swap, i;

	if (len + n > cap) {
		cap = (len + n) * 2;
		buf = realloc(buf, cap);
		if (!buf)
			exit(2);
	}
	for (i = 0; i < n; i++)
		buf[len + i] = v >> 8 * (little ? i : n - 1 - i);
	len += n;
}

static void flush(void)
{
	if (out && (fwrite(buf, 1, len, out) != len || fclose(out)))
		exit(2);
	out = NULL;
	len = 0;
}

static void start(const char *dir, unsigned long long cpu, unsigned long long hcpu,
		  unsigned long long nslots, unsigned long long dropped)
{
	char path[4200];

	flush();
	snprintf(path, sizeof(path), "%s/cpu%llu", dir, cpu);
	out = fopen(path, "wb");
	if (!out) {
		perror(path);
		exit(2);
	}
	/* magic "KTRRAW1", version, header_size, cpu, nslots, dropped */
	put(0x3157415252544bULL, 8);
	put(1, 4);
	put(32, 4);
	put(hcpu, 4);
	put(nslots, 4);
	put(dropped, 8);
}

/* ts, pos, fmt, size, nargs, pad, args[nargs], strings, to a multiple of 8 */
static void entry(unsigned long long ts, unsigned long long pos, unsigned int fmt, int nargs,
		  char **args)
{
	size_t size = 24 + 8 * nargs, soff[8] = { 0 };
	const char *s;
	int i;

	for (i = 0; i < nargs; i++) {
		if (!strncmp(args[i], "s:", 2)) {
			soff[i] = size;
			size += strlen(args[i] + 2) + 1;
		}
	}
	size = (size + 7) & ~(size_t)7;
	put(ts, 8);
	put(pos, 8);
	put(fmt, 4);
	put(size, 2);
	put(nargs, 1);
	put(0, 1);
	for (i = 0; i < nargs; i++)
		put(strncmp(args[i], "s:", 2) ? strtoull(args[i], NULL, 0) : soff[i], 8);
	for (i = 0; i < nargs; i++) {
		if (strncmp(args[i], "s:", 2))
			continue;
		for (s = args[i] + 2; *s; s++)
			put((unsigned char)*s, 1);
		put(0, 1);
	}
	while (len % 8)
		put(0, 1);
}

/* The value of key=VALUE among the @n words at @w, or @def. */
static unsigned long long kv(char **w, int n, const char *key, unsigned long long def)
{
	size_t k = strlen(key);
	int i;

	for (i = 0; i < n; i++)
		if (!strncmp(w[i], key, k) && w[i][k] == '=')
			return strtoull(w[i] + k + 1, NULL, 0);
	return def;
}

static void many(const char *dir, char **w, int n)
{
	unsigned long long ncpus = strtoull(w[1], NULL, 0), per = strtoull(w[2], NULL, 0);
	unsigned long long first = kv(w, n, "first", 0), c, k;
	uint64_t r = kv(w, n, "seed", 1) * 0x9e3779b97f4a7c15ULL | 1;
	char num[32], *a[1] = { num };

	swap = 0;
	for (c = first; c < first + ncpus; c++) {
		unsigned long long ts = 1000;

		start(dir, c, c, 1024, 0);
		for (k = 0; k < per; k++) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			ts += r % 3;
			snprintf(num, sizeof(num), "%llu", k);
			entry(ts, k, 0, 1, a);
			printf("%llu %llu %llu %llu\n", ts, c, k, k);
		}
		flush();
	}
}

int main(int argc, char **argv)
{
	char line[4096], *w[64], *t;
	int n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: krgen DIR < SCRIPT\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		n = 0;
		for (t = strtok(line, " \t\n"); t && n < 64; t = strtok(NULL, " \t\n"))
			w[n++] = t;
		if (!n || w[0][0] == '#')
			continue;
		if (!strcmp(w[0], "cpu") && n >= 2) {
			unsigned long long c = strtoull(w[1], NULL, 0);

			flush();
			swap = 0;
			for (i = 2; i < n; i++)
				swap |= !strcmp(w[i], "swap");
			start(argv[1], c, kv(w, n, "hcpu", c), kv(w, n, "nslots", 1024),
			      kv(w, n, "dropped", 0));
		} else if (!strcmp(w[0], "e") && n >= 4 && out) {
			entry(strtoull(w[1], NULL, 0), strtoull(w[2], NULL, 0),
			      strtoul(w[3], NULL, 0), n - 4, w + 4);
		} else if (!strcmp(w[0], "many") && n >= 3) {
			flush();
			many(argv[1], w, n);
		} else {
			fprintf(stderr, "krgen: bad line: %s\n", w[0]);
			return 2;
		}
	}
	flush();
	return fflush(stdout) ? 2 : 0;
}
EOF
gcc -O2 -Wall -Wextra -o "$kr/krgen" "$kr/krgen.c" 2>"$kr/krgen.log" ||
	{ cat "$kr/krgen.log" >&2; die "ktrdump.sh: krgen does not build"; }

# The format table of every capture here: 0 takes one slot, 1 and 2 two
# (five 32-bit words of arguments: more than the first slot's four).
# Class names for --classes (-C): gen (bit 0), dev (2), test (30).
kr_formats='0 0x1 1 0x1 kernel/x.c:10 "v %lu"
1 0x4 3 0x6 drivers/y.c:20 "wide %d %lx %s"
2 0x40000000 3 0x3 kernel/z.c:30 "s=%s p=%#lx d=%d"
3 0x4 1 0x1 drivers/y.c:40 "%s"
'
kr_classes='# bit name compiled enabled
0 gen 1 1
2 dev 1 1
30 test 1 1
'

# kr_cap DIR [SCRIPT]: a capture in $kr/DIR, cpu files from SCRIPT (stdin
# if not given).
kr_cap() {
	local d=$kr/$1
	rm -rf "$d"
	mkdir -p "$d"
	printf '%s' "$kr_formats" >"$d/formats"
	printf '%s' "$kr_classes" >"$d/classes"
	if [ $# -ge 2 ]; then
		printf '%s\n' "$2" | "$kr/krgen" "$d"
	else
		"$kr/krgen" "$d"
	fi
}

# kr_fail NAME WHY: one failure.
kr_fail() {
	t_fail "ktrdump: $1" "$2"
	failed=1
}

# kr_expect NAME STATUS REGEX ARGS...: ktrdump ARGS exits STATUS and its
# output (both streams, in $kr/NAME.out) matches REGEX. Returns 1, saying
# why, if not.
kr_expect() {
	local name=$1 want=$2 re=$3 rc=0
	shift 3
	"$KR" "$@" >"$kr/$name.out" 2>&1 || rc=$?
	if [ "$rc" -ne "$want" ]; then
		kr_fail "$name" "exit $rc (want $want): $(head -c 300 "$kr/$name.out" | tr '\n' ' ')"
		return 1
	fi
	if ! grep -Eq -- "$re" "$kr/$name.out"; then
		kr_fail "$name" "no /$re/ in: $(head -c 300 "$kr/$name.out" | tr '\n' ' ')"
		return 1
	fi
	return 0
}

# kr_why: the reasons a test fails, each said on its own ("" if none),
# collected by "CHECK || kr_why+='WHY; '"; kr_verdict NAME PASS-TEXT then
# passes or fails the test with them.
kr_why=""
kr_verdict() {
	if [ -z "$kr_why" ]; then
		t_pass "$2"
	else
		kr_fail "$1" "$kr_why"
	fi
	kr_why=""
}

# kr_sorted LIST: the lines ktrdump -O prints (no header) for krgen's
# "TS CPU POS ARG" list: entries by time stamp, then CPU, then position
# (a stable sort of the list, which is by CPU and position), Delta-T from
# the entry before, Idx the position modulo 1024 slots.
kr_sorted() {
	sort -s -k1,1n -k2,2n "$1" |
		awk 'BEGIN { p = -1 } { d = p < 0 ? 0 : $1 - p; p = $1
			printf "%u %3x %8x v %u\n", $2, $3 % 1024, d, $4 }'
}

# ---- CPU numbers, many files, the merge ---------------------------------

# CPUs 0, 8191 (NR_CPUS 8192), 100000 and 2^32 - 1 (the raw header's
# 32 bits): all decoded, --cpu selects among them; cpu01 (CPU 1 again)
# and cpu4294967296 are not cpu<N> names the kernel makes: said, skipped.
kr_cap bigcpu 'cpu 0
e 100 0 0 10
cpu 8191
e 110 0 0 11
cpu 100000
e 120 0 0 12
cpu 4294967295
e 130 0 0 13'
printf '%s\n' 'cpu 1' 'e 140 0 0 14' | "$kr/krgen" "$kr/bigcpu"
mv "$kr/bigcpu/cpu1" "$kr/bigcpu/cpu01"
printf '%s\n' 'cpu 1 hcpu=0' 'e 150 0 0 15' | "$kr/krgen" "$kr/bigcpu"
mv "$kr/bigcpu/cpu1" "$kr/bigcpu/cpu4294967296"
ok=1
want=$(printf '%s\n' 'C Idx Delta-T  Trace' '= === ======== =====' '0   0        0 v 10' \
	'8191   0        a v 11' '100000   0        a v 12' '4294967295   0        a v 13')
rc=0
got=$("$KR" -O "$kr/bigcpu" 2>"$kr/bigcpu.err") || rc=$?
if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
	kr_fail "CPUs 0, 8191, 100000, 4294967295" "exit $rc: $(printf '%s' "$got" | tr '\n' '|')"
	ok=0
fi
if ! grep -q 'cpu01: ignored: not a cpu<N> name' "$kr/bigcpu.err" ||
   ! grep -q 'cpu4294967296: ignored' "$kr/bigcpu.err"; then
	kr_fail "cpu01, cpu4294967296" "not said to be ignored: $(tr '\n' ' ' <"$kr/bigcpu.err")"
	ok=0
fi
rc=0
got=$("$KR" -O -c 8191,4294967295 "$kr/bigcpu" 2>/dev/null) || rc=$?
want=$(printf '%s\n' 'C Idx Delta-T  Trace' '= === ======== =====' '8191   0        0 v 11' \
	'4294967295   0       14 v 13')
if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
	kr_fail "-c 8191,4294967295" "exit $rc: $(printf '%s' "$got" | tr '\n' '|')"
	ok=0
fi
kr_expect cpu-too-big 2 "--cpu: '4294967296' is not a CPU list" -c 4294967296 "$kr/bigcpu" || ok=0
[ $ok -eq 0 ] ||
	t_pass "ktrdump: CPUs 0, 8191, 100000 and 4294967295 decoded and selected by -c (no table of CPUs); cpu01 and cpu4294967296 said to be ignored"

# 1100 CPU files, CPUs 7100 to 8199, under ulimit -n 1024: every entry,
# in the merge's order.
mkdir -p "$kr/c1100"
printf '%s' "$kr_formats" >"$kr/c1100/formats"
printf '%s\n' 'many 1100 3 first=7100 seed=3' | "$kr/krgen" "$kr/c1100" >"$kr/c1100.list"
kr_sorted "$kr/c1100.list" >"$kr/c1100.want"
rc=0
(ulimit -n 1024 && exec "$KR" -O "$kr/c1100") >"$kr/c1100.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || kr_why+="exit $rc (want 0): $(grep -m2 -v '^[0-9]' "$kr/c1100.out" | tr '\n' ' '); "
tail -n +3 "$kr/c1100.out" | cmp -s - "$kr/c1100.want" ||
	kr_why+="not the 3300 lines in the merge's order ($(($(wc -l <"$kr/c1100.out") - 2)) lines); "
kr_verdict "1100 CPU files under ulimit -n 1024" \
	"ktrdump: 1100 CPU files (CPUs 7100 to 8199) under ulimit -n 1024: all 3300 entries, merged by time stamp"

# Memory: 5000 CPU files of one entry each under ulimit -v 100000 (100
# MB): each file's buffer is the file's size, not 64 KiB (320 MB).
mkdir -p "$kr/m5k"
printf '%s' "$kr_formats" >"$kr/m5k/formats"
printf '%s\n' 'many 5000 1' | "$kr/krgen" "$kr/m5k" >/dev/null
rc=0
(ulimit -v 100000 && exec "$KR" "$kr/m5k") >"$kr/m5k.out" 2>"$kr/m5k.err" || rc=$?
[ $rc -eq 0 ] || kr_why+="exit $rc (want 0): $(head -c 200 "$kr/m5k.err"); "
[ "$(tail -n +3 "$kr/m5k.out" | wc -l)" -eq 5000 ] ||
	kr_why+="$(tail -n +3 "$kr/m5k.out" | wc -l) entries printed (want 5000); "
kr_verdict "5000 CPU files under ulimit -v 100000" \
	"ktrdump: 5000 CPU files of one entry under ulimit -v 100000 (100 MB): all 5000 entries"

# And 1000000 entries (two files of 16 MB) in the same 100 MB: 40 bytes
# per entry kept besides the files, not 120 (their arguments and strings
# are read from the file when printed).
mkdir -p "$kr/m1m"
printf '%s' "$kr_formats" >"$kr/m1m/formats"
printf '%s\n' 'many 2 500000' | "$kr/krgen" "$kr/m1m" >/dev/null
rc=0
(ulimit -v 100000 && exec "$KR" "$kr/m1m") >"$kr/m1m.out" 2>"$kr/m1m.err" || rc=$?
[ $rc -eq 0 ] || kr_why+="exit $rc (want 0): $(head -c 200 "$kr/m1m.err"); "
[ "$(tail -n +3 "$kr/m1m.out" | wc -l)" -eq 1000000 ] ||
	kr_why+="$(tail -n +3 "$kr/m1m.out" | wc -l) entries printed (want 1000000); "
rm -rf "$kr/m1m" "$kr/m1m.out"
kr_verdict "1000000 entries under ulimit -v 100000" \
	"ktrdump: 1000000 entries in two files under ulimit -v 100000 (100 MB): all printed"

# The merge's order (Documentation/trace/ktr.rst): by time stamp, the
# lower CPU first on a tie, each CPU in its own order - also where a
# CPU's time stamps go back (a nested writer takes its time stamp after
# the writer it interrupted, and its slot before): CPU 0 at 100 then 90,
# CPU 1 at 95 then 100 gives 1 (95), 0 (100, the lower CPU on the tie),
# 0 (90), 1 (100), as ktr_merge() does, not a sort. Newest first, the
# same lines in reverse.
mkdir -p "$kr/m64"
printf '%s' "$kr_formats" >"$kr/m64/formats"
printf '%s\n' 'many 64 200 seed=11' | "$kr/krgen" "$kr/m64" >"$kr/m64.list"
kr_sorted "$kr/m64.list" >"$kr/m64.want"
kr_cap back 'cpu 0
e 100 0 0 1
e 90 1 0 2
cpu 1
e 95 0 0 3
e 100 1 0 4'
rc=0
"$KR" -O "$kr/m64" >"$kr/m64.old" 2>&1 || rc=$?
[ $rc -eq 0 ] || kr_why+="-O: exit $rc; "
rc=0
"$KR" "$kr/m64" >"$kr/m64.new" 2>&1 || rc=$?
[ $rc -eq 0 ] || kr_why+="newest first: exit $rc; "
rc=0
got=$("$KR" -O "$kr/back" 2>&1) || rc=$?
[ $rc -eq 0 ] || kr_why+="time stamps back: exit $rc; "
want=$(printf '%s\n' 'C Idx Delta-T  Trace' '= === ======== =====' '1   0        0 v 3' \
	'0   0        5 v 1' '0   1 -      a v 2' '1   1        a v 4')
tail -n +3 "$kr/m64.old" | cmp -s - "$kr/m64.want" ||
	kr_why+="-O: $(tail -n +3 "$kr/m64.old" | cmp - "$kr/m64.want" 2>&1 | head -1 || true); "
tail -n +3 "$kr/m64.new" | cmp -s - <(tac "$kr/m64.want") ||
	kr_why+="newest first: $(tail -n +3 "$kr/m64.new" | cmp - <(tac "$kr/m64.want") 2>&1 | head -1 || true); "
[ "$got" = "$want" ] || kr_why+="time stamps back: $(printf '%s' "$got" | tr '\n' '|'); "
kr_verdict "merge order" \
	"ktrdump: 64 CPUs of 200 entries with ties merged by time stamp, then CPU, then position, oldest and newest first; a CPU's time stamps that go back keep its order"

# The merge costs log(CPUs) per entry, not a scan of every CPU: the CPU
# time per entry with 1024 files is within 2.5 times that with 2 files,
# the same 300032 entries (the best of 3 runs each; a scan of 1024 CPUs
# per entry takes 4 to 5 times as long).
for n in 2 1024; do
	mkdir -p "$kr/s$n"
	printf '%s' "$kr_formats" >"$kr/s$n/formats"
done
printf '%s\n' 'many 2 150016' | "$kr/krgen" "$kr/s2" >/dev/null
printf '%s\n' 'many 1024 293' | "$kr/krgen" "$kr/s1024" >/dev/null
# kr_cpu_ms DIR: the least user + system milliseconds of 3 runs.
kr_cpu_ms() {
	local best="" t i
	for i in 1 2 3; do
		t=$( { TIMEFORMAT='%3U %3S'; time "$KR" "$1" >/dev/null 2>&1; } 2>&1) || true
		t=$(awk '{ printf "%d", ($1 + $2) * 1000 + 0.5 }' <<<"$t")
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then
			best=$t
		fi
	done
	echo "$best"
}
ms2=$(kr_cpu_ms "$kr/s2")
ms1024=$(kr_cpu_ms "$kr/s1024")
if [ "$ms1024" -le $((ms2 * 5 / 2 + 10)) ]; then
	t_pass "ktrdump: 300032 entries in 1024 CPU files take $ms1024 ms of CPU, in 2 files $ms2 ms (at most 2.5 times: a heap, not a scan of the CPUs)"
else
	kr_fail "merge cost" "300032 entries: 1024 files $ms1024 ms of CPU, 2 files $ms2 ms: more than 2.5 times"
fi

# ---- Byte order, input checks --------------------------------------------

# A capture of the other byte order (a big-endian machine's, here)
# decodes as this machine's own: the same lines, strings, positions and
# dropped count; one CPU of each order too.
# kr_order ORDER0 ORDER3: the script, "swap" for the other byte order.
kr_order() {
	printf '%s\n' "cpu 0 nslots=16 dropped=3 $1" 'e 100 0 0 5' \
		'e 110 1 1 -2 0xdeadbeefcafe s:hello' 'e 120 3 2 s:func+0x10/0x20 0x1000 4294967295' \
		"cpu 3 nslots=8 $2" 'e 105 9 3 s:three' 'e 130 10 0 18446744073709551615'
}
kr_order "" "" | kr_cap native
kr_order swap swap | kr_cap swapped
kr_order "" swap | kr_cap mixed
ok=1
if cmp -s "$kr/native/cpu0" "$kr/swapped/cpu0"; then
	kr_fail "other byte order" "krgen wrote the same cpu0 bytes for both orders"
	ok=0
fi
if cmp -s "$kr/native/cpu3" "$kr/mixed/cpu3"; then
	kr_fail "other byte order" "krgen wrote the same cpu3 bytes for both orders (mixed)"
	ok=0
fi
if ! cmp -s "$kr/native/cpu0" "$kr/mixed/cpu0"; then
	kr_fail "other byte order" "krgen wrote another cpu0 for the same (native) order in mixed"
	ok=0
fi
for o in "" -O -a "-l -O"; do
	# shellcheck disable=SC2086 # the options, split
	"$KR" $o "$kr/native" >"$kr/native.out" 2>&1 || true
	for c in swapped mixed; do
		rc=0
		# shellcheck disable=SC2086
		"$KR" $o "$kr/$c" >"$kr/$c.out" 2>&1 || rc=$?
		if [ $rc -ne 0 ]; then
			kr_fail "other byte order ($c, '$o')" "exit $rc: $(head -c 300 "$kr/$c.out" | tr '\n' ' ')"
			ok=0
		fi
		if ! diff <(sed "s|$kr/$c|DIR|" "$kr/$c.out") \
			<(sed "s|$kr/native|DIR|" "$kr/native.out") >/dev/null; then
			kr_fail "other byte order ($c, '$o')" "not the native output: $(head -c 300 "$kr/$c.out" | tr '\n' ' ')"
			ok=0
		fi
	done
done
if ! grep -q 'wide -2 deadbeefcafe hello' "$kr/native.out"; then
	kr_fail "native byte order" "no 'wide -2 deadbeefcafe hello': $(tr '\n' ' ' <"$kr/native.out")"
	ok=0
fi
if ! grep -q 'the kernel dropped 3 entries since boot' "$kr/native.out"; then
	kr_fail "native byte order" "no 'dropped 3 entries': $(tr '\n' ' ' <"$kr/native.out")"
	ok=0
fi
[ $ok -eq 0 ] ||
	t_pass "ktrdump: a capture of the other byte order, and one of both orders, print what this machine's own prints (-a, -O, -l too)"

# A dump says on standard error what the kernel could not record (the
# raw header's dropped count): exit 0, it shows all there is.
kr_expect dropped 0 '^ktrdump: note: the kernel dropped 3 entries since boot .*on 1 of 2 CPUs$' \
	"$kr/native" &&
	t_pass "ktrdump: the entries the kernel dropped since boot, said on standard error (exit 0)"

# An entry at a position inside the entry before it (of two slots): a
# format table of another kernel, or a cut file. Corrupt, exit 3.
kr_cap overlap 'cpu 0
e 100 0 1 1 2 s:x
e 110 1 0 7'
kr_expect overlap 3 'cpu0: offset 88: position 1 is in the 2 slots of the entry before, at 0$' \
	"$kr/overlap" &&
	t_pass "ktrdump: an entry inside the two slots of the one before: corrupt (exit 3), named by file and offset"

# ---- Command line, exit statuses, output errors ----------------------------

kr_cap one 'cpu 0
e 100 0 0 42'
ok=1
kr_expect help 0 '^Exit status: 0 done, 1 the data has a problem' --help || ok=0
kr_expect version 0 '^ktrdump \(kmemtrace tools\) [0-9.]+$' --version || ok=0
grep -q '^KTR raw format 1 ' "$kr/version.out" ||
	{ kr_fail "--version" "no 'KTR raw format 1': $(tr '\n' ' ' <"$kr/version.out")"; ok=0; }
kr_expect badopt 2 '^Usage: ktrdump' --bogus "$kr/one" || ok=0
kr_expect twodirs 2 "one directory at most" "$kr/one" "$kr/one" || ok=0
kr_expect badcpu 2 "--cpu: 'x' is not a CPU list" -c x "$kr/one" || ok=0
kr_expect emptycpu 2 "--cpu: '' is not a CPU list" -c '' "$kr/one" || ok=0
kr_expect badint 2 "--interval: '0' is not from 1 to 3600000" -F -i 0 "$kr/one" || ok=0
kr_expect intnf 2 "--interval: only with --follow" -i 50 "$kr/one" || ok=0
kr_expect nosuch 2 "no class 'nosuch' in " -C dev,nosuch "$kr/one" || ok=0
kr_expect negmask 2 "--classes: '-1' is not a 64-bit mask" -C -1 "$kr/one" || ok=0
kr_expect nodir 2 'nonexistent/formats: No such file' "$kr/nonexistent" || ok=0
kr_expect nocpus 2 'no cpu<N> raw files for the CPUs asked for' -c 5 "$kr/one" || ok=0
printf 'garbage' >"$kr/garbage"
cp -r "$kr/one" "$kr/bad"
cp "$kr/garbage" "$kr/bad/cpu0"
kr_expect corrupt 3 'bad/cpu0: offset 0: truncated header \(7 of 32 bytes\)' "$kr/bad" || ok=0
# An empty formats file (a failed copy) is said as such, not blamed on cpu0.
cp -r "$kr/one" "$kr/nofmt"
: >"$kr/nofmt/formats"
kr_expect nofmt 3 'nofmt/formats: the formats file is empty' "$kr/nofmt" || ok=0
kr_expect ok 0 '^0   0        0 v 42$' "$kr/one" || ok=0
[ $ok -eq 0 ] ||
	t_pass "ktrdump: --help and --version exit 0; bad options, -c, -i, -C, two directories, no directory or CPU file exit 2; a corrupt file, an empty formats file 3"

# A write error is an I/O error, exit 2, for the listing, --help and
# --version, and --follow stops at it.
ok=1
for args in "$kr/one" --help --version; do
	rc=0
	# shellcheck disable=SC2086
	"$KR" $args >/dev/full 2>"$kr/full.err" || rc=$?
	if [ $rc -ne 2 ] || ! grep -q 'writing the output: No space left on device' "$kr/full.err"; then
		kr_fail "$args > /dev/full" "exit $rc (want 2): $(tr '\n' ' ' <"$kr/full.err")"
		ok=0
	fi
done
rc=0
timeout -s KILL 10 "$KR" -F -i 20 "$kr/one" >/dev/full 2>"$kr/full.err" || rc=$?
if [ $rc -ne 2 ] || ! grep -q 'writing the output: No space left on device' "$kr/full.err"; then
	kr_fail "--follow > /dev/full" "exit $rc (want 2, 137: killed after 10 s): $(tr '\n' ' ' <"$kr/full.err")"
	ok=0
fi
[ $ok -eq 0 ] ||
	t_pass "ktrdump: a listing, --help, --version and --follow to /dev/full: exit 2, 'writing the output: No space left on device'"

# Standard output into an input file (appended, so not emptied first):
# refused, exit 2, the file unchanged; by device and inode, not by name.
cp "$kr/one/cpu0" "$kr/one.cpu0"
rc=0
(cd "$kr/one" && exec "$KR" . >>./cpu0 2>"$kr/self.err") || rc=$?
[ $rc -eq 2 ] || kr_why+="exit $rc (want 2); "
cmp -s "$kr/one/cpu0" "$kr/one.cpu0" || kr_why+="cpu0 changed; "
grep -q 'the standard output goes to this input file' "$kr/self.err" ||
	kr_why+="not said: $(tr '\n' ' ' <"$kr/self.err"); "
kr_verdict "output into an input" \
	"ktrdump: standard output appended to its own cpu0 (named ./cpu0): refused, exit 2, cpu0 unchanged"
cp "$kr/one.cpu0" "$kr/one/cpu0"

# --classes and the classes file: a missing file is said as such (a mask
# needs none); names of any length, whole; a line of any length (a
# comment whose 256th byte starts "2 gen" names no class).
ok=1
cp -r "$kr/one" "$kr/nocls"
rm "$kr/nocls/classes"
kr_expect nocls 2 'nocls/classes: No such file or directory \(--classes names are looked up there' \
	-m gen "$kr/nocls" || ok=0
kr_expect nocls-mask 0 '^0   0        0 v 42$' -C 0x1 "$kr/nocls" || ok=0
long=$(printf 'a%.0s' {1..70})
cp -r "$kr/one" "$kr/cls"
{
	printf '# %s\n' "$(printf 'x%.0s' {1..253})2 gen 1 1"
	printf '0 %s 1 1\n' "$long"
	printf '0 %s 1 1\n' "${long}b"
} >"$kr/cls/classes"
kr_expect longname 0 '^0   0        0 v 42$' -C "${long}b" "$kr/cls" || ok=0
kr_expect cutname 2 "no class '$long' in " -C "$long" "$kr/cls" || ok=0
kr_expect longline 2 "no class 'gen' in " -C gen "$kr/cls" || ok=0
[ $ok -eq 0 ] ||
	t_pass "ktrdump: --classes: a missing classes file named as such (exit 2), a mask without one; 70-byte names whole, a 264-byte comment line one line"

# ---- --follow ------------------------------------------------------------

# kr_wait FILE REGEX: up to 10 s for FILE to match REGEX.
kr_wait() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# kr_next DIR SCRIPT: DIR/cpu0 replaced at once (a rename) by SCRIPT's,
# as the kernel's buffer changes between two reads.
kr_next() {
	rm -rf "$kr/$1.next"
	mkdir -p "$kr/$1.next"
	printf '%s\n' "$2" | "$kr/krgen" "$kr/$1.next"
	mv "$kr/$1.next/cpu0" "$kr/$1/cpu0"
}

# kr_follow NAME MS FIRST SECOND WAIT: ktrdump -F -i MS on a capture of
# cpu0 from FIRST, then of SECOND once the output matches /v 0$/, then a
# SIGINT once it matches WAIT. Status in kr_rc, output in NAME.out and
# NAME.err.
kr_follow() {
	local name=$1 ms=$2 pid
	kr_cap "$name" "$3"
	kr_rc=0
	"$KR" -F -i "$ms" "$kr/$name" >"$kr/$name.out" 2>"$kr/$name.err" &
	pid=$!
	kr_wait "$kr/$name.out" ' v 0$' || true
	kr_next "$name" "$4"
	kr_wait "$kr/$name.out" "$5" || true
	kill -INT $pid 2>/dev/null || true
	wait $pid || kr_rc=$?
}

# kr_args NAME: the last field (the argument) of each line NAME.out
# lists, one line.
kr_args() {
	tail -n +3 "$kr/$1.out" | awk '{ print $NF }' | tr '\n' ' '
}

# An entry overwritten between two reads: one slot, position 3, between
# the 2 of the first read and the 4 of the second. Missed, said, exit 1.
kr_follow gap 20 $'cpu 0\ne 100 0 0 0\ne 110 1 0 1\ne 120 2 0 2' \
	$'cpu 0\ne 140 4 0 4\ne 150 5 0 5' ' v 5$'
[ $kr_rc -eq 1 ] || kr_why+="exit $kr_rc (want 1); "
grep -qx 'ktrdump: cpu0: missed 1 slot, position 3: overwritten or cleared before it was read' \
	"$kr/gap.err" || kr_why+="no 'missed 1 slot, position 3'; "
grep -q ': 5 entries printed, 1 slot missed' "$kr/gap.err" || kr_why+="no '5 entries printed, 1 slot missed'; "
[ "$(kr_args gap)" = "0 1 2 4 5 " ] || kr_why+="printed $(kr_args gap)(want 0 1 2 4 5); "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/gap.err")
kr_verdict "--follow, a one-slot gap" \
	"ktrdump --follow: one slot overwritten between two reads: 'cpu0: missed 1 slot, position 3', exit 1"

# Entries of two slots (positions 0 and 2) leave no gap: nothing missed.
kr_follow wide 20 $'cpu 0\ne 100 0 1 0 1 s:a\ne 110 2 2 s:b 2 3\ne 115 4 0 0' \
	$'cpu 0\ne 100 0 1 0 1 s:a\ne 110 2 2 s:b 2 3\ne 115 4 0 0\ne 140 5 0 9' ' v 9$'
[ $kr_rc -eq 0 ] || kr_why+="exit $kr_rc (want 0); "
grep -q ': 4 entries printed, 0 slots missed' "$kr/wide.err" || kr_why+="no '4 entries printed, 0 slots missed'; "
[ "$(grep -c . "$kr/wide.err")" -eq 1 ] || kr_why+="more than the account said; "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/wide.err")
kr_verdict "--follow, two-slot entries" \
	"ktrdump --follow: entries of two slots back to back: nothing missed, exit 0"

# A slot still being written when the buffer was read (position 1 of 0
# and 2, an interrupted writer's) is there at the next read: printed
# then, not lost, not missed. (A read each 2.5 s: the second read must
# come after cpu0 is replaced.)
kr_follow late 2500 $'cpu 0\ne 100 0 0 0\ne 120 2 0 2' \
	$'cpu 0\ne 100 0 0 0\ne 110 1 0 1\ne 120 2 0 2\ne 130 3 0 3' ' v 3$'
[ $kr_rc -eq 0 ] || kr_why+="exit $kr_rc (want 0); "
grep -q ': 4 entries printed, 0 slots missed' "$kr/late.err" || kr_why+="no '4 entries printed, 0 slots missed'; "
[ "$(kr_args late)" = "0 2 1 3 " ] || kr_why+="printed $(kr_args late)(want 0 2 1 3); "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/late.err")
kr_verdict "--follow, a slot filled at the next read" \
	"ktrdump --follow: an entry being written at one read and there at the next: printed then, nothing missed, exit 0"

# The kernel's dropped count rising between two reads: said, exit 1.
kr_follow drop 20 $'cpu 0\ne 100 0 0 0' $'cpu 0 dropped=2\ne 100 0 0 0\ne 110 1 0 1' ' v 1$'
[ $kr_rc -eq 1 ] || kr_why+="exit $kr_rc (want 1); "
grep -qx 'ktrdump: cpu0: the kernel dropped 2 entries (not recorded)' "$kr/drop.err" ||
	kr_why+="no 'cpu0: the kernel dropped 2 entries'; "
grep -q ': 2 entries printed, 0 slots missed .*, 2 dropped by the kernel' "$kr/drop.err" ||
	kr_why+="no account of 2 dropped; "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/drop.err")
kr_verdict "--follow, dropped entries" \
	"ktrdump --follow: 2 entries dropped by the kernel between two reads: said, exit 1"

# Positions that go back (another boot's capture copied over the
# directory): its entries are new, printed, not taken for printed ones.
kr_follow reboot 20 $'cpu 0\ne 100 100 0 0\ne 110 101 0 1' $'cpu 0\ne 10 0 0 7\ne 20 1 0 8' ' v 8$'
[ $kr_rc -eq 0 ] || kr_why+="exit $kr_rc (want 0); "
[ "$(kr_args reboot)" = "0 1 7 8 " ] || kr_why+="printed $(kr_args reboot)(want 0 1 7 8); "
grep -qx 'ktrdump: cpu0: positions went back from 101 to 1: another boot? read anew' \
	"$kr/reboot.err" || kr_why+="no 'positions went back from 101 to 1'; "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/reboot.err")
kr_verdict "--follow, positions back" \
	"ktrdump --follow: positions that go back (another boot's capture): said, its entries printed"

# Another boot's capture moved over the directory that holds the
# position read last (101) with another entry: positions 0 to 104
# replacing 100 and 101. All 105 are new, printed, none skipped as
# "already printed", nothing missed.
kr_boot=$'cpu 0'
for ((i = 0; i <= 104; i++)); do
	kr_boot+=$'\n'"e $((1000 + i)) $i 0 $((1000 + i))"
done
kr_follow newboot 20 $'cpu 0\ne 100 100 0 0\ne 110 101 0 1' "$kr_boot" ' v 1104$'
want="0 1 $(seq -s ' ' 1000 1104) "
[ $kr_rc -eq 0 ] || kr_why+="exit $kr_rc (want 0); "
[ "$(kr_args newboot)" = "$want" ] ||
	kr_why+="printed $(kr_args newboot | wc -w) entries (want 107): $(kr_args newboot | head -c 80); "
grep -q ': 107 entries printed, 0 slots missed' "$kr/newboot.err" ||
	kr_why+="no '107 entries printed, 0 slots missed'; "
grep -qx 'ktrdump: cpu0: position 101 holds another entry than at the read before: another boot? read anew' \
	"$kr/newboot.err" || kr_why+="the new boot not said; "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/newboot.err")
kr_verdict "--follow, another boot at positions 0 to 104 over 100 to 101" \
	"ktrdump --follow: another boot's capture (0-104) over one at 100-101: all 105 entries printed, said, exit 0"

# Another boot's capture with its own format table, its cpu0 moved in
# before its formats (the worse order of a copy): its entries decoded
# with its own table (format 0 reworded, a format 4 the first lacks), not
# taken for corrupt.
kr_cap fmtboot $'cpu 0\ne 100 100 0 0'
rc=0
"$KR" -F -i 20 "$kr/fmtboot" >"$kr/fmtboot.out" 2>"$kr/fmtboot.err" &
pid=$!
kr_wait "$kr/fmtboot.out" ' v 0$' || true
rm -rf "$kr/fmtboot.next"
mkdir -p "$kr/fmtboot.next"
printf '%s\n' 'cpu 0' 'e 10 0 0 7' 'e 20 1 4 8' | "$kr/krgen" "$kr/fmtboot.next"
{
	printf '%s' "$kr_formats" | sed 's/"v %lu"/"v2 %lu"/'
	printf '%s\n' '4 0x1 1 0x1 kernel/n.c:50 "n4 %lu"'
} >"$kr/fmtboot.next/formats"
mv "$kr/fmtboot.next/cpu0" "$kr/fmtboot/cpu0"
sleep 0.05
mv "$kr/fmtboot.next/formats" "$kr/fmtboot/formats"
kr_wait "$kr/fmtboot.out" ' n4 8$' || true
kill -INT $pid 2>/dev/null || true
wait $pid || rc=$?
[ $rc -eq 0 ] || kr_why+="exit $rc (want 0); "
[ "$(tail -n +3 "$kr/fmtboot.out" | cut -c 16- | tr '\n' '|')" = "v 0|v2 7|n4 8|" ] ||
	kr_why+="printed $(tail -n +3 "$kr/fmtboot.out" | tr '\n' '|') (want v 0, v2 7, n4 8); "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/fmtboot.err")
kr_verdict "--follow, another boot's format table" \
	"ktrdump --follow: another boot's capture with its own formats file (copied after cpu0): decoded with it, exit 0"

# The same with --classes by name: the new boot's classes file says which
# bit "gen" is (bit 2, not 0): its entries are selected by it.
kr_cap clsboot $'cpu 0\ne 100 100 0 0'
rc=0
"$KR" -F -i 20 -C gen "$kr/clsboot" >"$kr/clsboot.out" 2>"$kr/clsboot.err" &
pid=$!
kr_wait "$kr/clsboot.out" ' v 0$' || true
rm -rf "$kr/clsboot.next"
mkdir -p "$kr/clsboot.next"
printf '%s\n' 'cpu 0' 'e 10 0 0 7' 'e 20 1 1 8' | "$kr/krgen" "$kr/clsboot.next"
printf '%s\n' '0 0x4 1 0x1 kernel/g.c:1 "g %lu"' '1 0x1 1 0x1 kernel/o.c:2 "o %lu"' \
	>"$kr/clsboot.next/formats"
printf '%s\n' '2 gen 1 1' '0 other 1 1' >"$kr/clsboot.next/classes"
mv "$kr/clsboot.next/classes" "$kr/clsboot/classes"
mv "$kr/clsboot.next/formats" "$kr/clsboot/formats"
mv "$kr/clsboot.next/cpu0" "$kr/clsboot/cpu0"
kr_wait "$kr/clsboot.out" ' (g 7|o 8)$' || true
sleep 0.2
kill -INT $pid 2>/dev/null || true
wait $pid || rc=$?
[ $rc -eq 0 ] || kr_why+="exit $rc (want 0); "
[ "$(tail -n +3 "$kr/clsboot.out" | cut -c 16- | tr '\n' '|')" = "v 0|g 7|" ] ||
	kr_why+="printed $(tail -n +3 "$kr/clsboot.out" | tr '\n' '|') (want v 0, g 7); "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/clsboot.err")
kr_verdict "--follow -C gen, another boot's classes" \
	"ktrdump --follow -C gen: another boot's classes file (gen another bit): its entries selected by it, exit 0"

# A directory being rewritten while --follow reads it every 20 ms: each
# cpu<N> file written over in place (cat >, empty or cut short at a
# read), then removed and copied again (missing at a read). Each such
# read is left out and done again: every entry once, nothing missed,
# exit 0. (Files bad for 2 s end --follow, whatever the interval: a
# writer descheduled for 20 ms on a loaded 2-CPU host is a blip.)
mkdir -p "$kr/rw.src"
printf '%s' "$kr_formats" >"$kr/rw.src/formats"
printf '%s\n' 'many 4 50' | "$kr/krgen" "$kr/rw.src" >/dev/null
cp -r "$kr/rw.src" "$kr/rw"
rc=0
"$KR" -F -i 20 "$kr/rw" >"$kr/rw.out" 2>"$kr/rw.err" &
pid=$!
for ((i = 0; i < 150; i++)); do
	for c in 0 1 2 3; do
		cat "$kr/rw.src/cpu$c" >"$kr/rw/cpu$c"
		rm "$kr/rw/cpu$c"
		cp "$kr/rw.src/cpu$c" "$kr/rw/cpu$c"
	done
done
sleep 0.1
kill -INT $pid 2>/dev/null || true
wait $pid || rc=$?
[ $rc -eq 0 ] || kr_why+="exit $rc (want 0); "
[ "$(tail -n +3 "$kr/rw.out" | wc -l)" -eq 200 ] ||
	kr_why+="$(tail -n +3 "$kr/rw.out" | wc -l) entries printed (want 200); "
grep -q ': 200 entries printed, 0 slots missed' "$kr/rw.err" ||
	kr_why+="no '200 entries printed, 0 slots missed'; "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/rw.err" | head -c 300)
kr_verdict "--follow, a directory being rewritten" \
	"ktrdump --follow: cpu files rewritten in place and removed and copied 150 times under reads every 20 ms: each entry once, exit 0"

# But a file that stays cut short (or missing) ends --follow after 2 s
# of reads that found it so: exit 3 (2), said, the other CPUs' entries
# printed. Not before: at -i 20, ten reads are 200 ms.
kr_cap short $'cpu 0\ne 100 0 0 0\ncpu 1\ne 110 0 0 1'
rc=0
"$KR" -F -i 20 "$kr/short" >"$kr/short.out" 2>"$kr/short.err" &
pid=$!
kr_wait "$kr/short.out" ' v 1$' || true
head -c 7 "$kr/short/cpu1" >"$kr/short/cpu1.cut"
mv "$kr/short/cpu1.cut" "$kr/short/cpu1"
for ((i = 0; i < 200; i++)); do
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
kill -KILL $pid 2>/dev/null || true
wait $pid || rc=$?
[ $rc -eq 3 ] || kr_why+="exit $rc (want 3; 137: still running after 10 s); "
grep -qxE "ktrdump: $kr/short/cpu1: cut short \(a truncated header or entry\) for (2|3)\.[0-9] s, [0-9]+ reads in a row" \
	"$kr/short.err" || kr_why+="no 'cpu1: cut short ... for 2.x s, N reads in a row'; "
[ "$(kr_args short)" = "0 1 " ] || kr_why+="printed $(kr_args short)(want 0 1); "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/short.err")
kr_verdict "--follow, a file that stays cut short" \
	"ktrdump --follow: a cpu file cut short for 2 s of reads every 20 ms: said, exit 3"
kr_cap gone $'cpu 0\ne 100 0 0 0'
rc=0
"$KR" -F -i 20 "$kr/gone" >"$kr/gone.out" 2>"$kr/gone.err" &
pid=$!
kr_wait "$kr/gone.out" ' v 0$' || true
rm "$kr/gone/cpu0"
for ((i = 0; i < 200; i++)); do
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
kill -KILL $pid 2>/dev/null || true
wait $pid || rc=$?
[ $rc -eq 2 ] || kr_why+="exit $rc (want 2; 137: still running after 10 s); "
grep -qxE "ktrdump: $kr/gone: no cpu<N> raw files for (2|3)\.[0-9] s, [0-9]+ reads in a row" "$kr/gone.err" ||
	kr_why+="no 'no cpu<N> raw files for 2.x s, N reads in a row'; "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/gone.err")
kr_verdict "--follow, files that stay missing" \
	"ktrdump --follow: no cpu file for 2 s of reads every 20 ms: said, exit 2"

# A first SIGINT ends --follow cleanly: one last read (the entry added
# just before it is printed, with a read each hour), the output whole,
# the account, exit 0.
kr_cap stop $'cpu 0\ne 100 0 0 0'
rc=0
"$KR" -F -i 3600000 "$kr/stop" >"$kr/stop.out" 2>"$kr/stop.err" &
pid=$!
kr_wait "$kr/stop.out" ' v 0$' || true
kr_next stop $'cpu 0\ne 100 0 0 0\ne 110 1 0 1'
kill -INT $pid 2>/dev/null || true
wait $pid || rc=$?
[ $rc -eq 0 ] || kr_why+="exit $rc (want 0); "
[ "$(kr_args stop)" = "0 1 " ] || kr_why+="printed $(kr_args stop)(want 0 1); "
grep -q ': 2 entries printed, 0 slots missed' "$kr/stop.err" || kr_why+="no '2 entries printed, 0 slots missed'; "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/stop.err")
kr_verdict "--follow, first SIGINT" \
	"ktrdump --follow: a first SIGINT: one last read printed, the account said, exit 0"

# A second one ends it at once: here while a read blocks (cpu0 a FIFO
# that no one writes), which the first one does not end.
kr_cap stop2 $'cpu 0\ne 100 0 0 0'
rc=0
"$KR" -F -i 20 "$kr/stop2" >"$kr/stop2.out" 2>"$kr/stop2.err" &
pid=$!
kr_wait "$kr/stop2.out" ' v 0$' || true
mkfifo "$kr/stop2/fifo"
mv "$kr/stop2/fifo" "$kr/stop2/cpu0"
sleep 0.3
kill -INT $pid 2>/dev/null || true
sleep 0.3
alive=0
kill -0 $pid 2>/dev/null && alive=1
kill -INT $pid 2>/dev/null || true
for ((i = 0; i < 100; i++)); do
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
kill -KILL $pid 2>/dev/null || true
wait $pid || rc=$?
[ $alive -eq 1 ] || kr_why+="ended by the first SIGINT (status $rc); "
[ $rc -eq 130 ] || kr_why+="status $rc (want 130; 137: still running after both); "
kr_verdict "--follow, second SIGINT" \
	"ktrdump --follow: blocked in a read, a first SIGINT waits for it, a second one kills at once (status 130)"

# A dump stopped by a SIGINT while its output is blocked (a pipe no one
# reads yet): the lines it wrote are whole, it says how many, exit 0 (as
# at the end of the input: the first signal is how one ends it).
mkdir -p "$kr/big"
printf '%s' "$kr_formats" >"$kr/big/formats"
printf '%s\n' 'many 2 50000' | "$kr/krgen" "$kr/big" >/dev/null
mkfifo "$kr/pipe"
exec {kr_fd}<>"$kr/pipe"
rc=0
"$KR" "$kr/big" >"$kr/pipe" 2>"$kr/pipe.err" &
pid=$!
sleep 1
kill -INT $pid 2>/dev/null || true
cat <&"$kr_fd" >"$kr/pipe.out" &
catpid=$!
for ((i = 0; i < 200; i++)); do
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
kill -KILL $pid 2>/dev/null || true
wait $pid || rc=$?
sleep 0.2
kill $catpid 2>/dev/null || true
wait $catpid 2>/dev/null || true
exec {kr_fd}<&-
n=$(sed -n 's/^ktrdump: stopped by a signal: \([0-9]*\) of 100000 entries printed$/\1/p' "$kr/pipe.err")
[ $rc -eq 0 ] || kr_why+="exit $rc (want 0); "
if [ -z "$n" ]; then
	kr_why+="no 'stopped by a signal: N of 100000 entries printed'; "
else
	[ "$n" -lt 100000 ] || kr_why+="all $n entries printed: not stopped; "
	[ "$(wc -l <"$kr/pipe.out")" -eq $((n + 2)) ] ||
		kr_why+="$(wc -l <"$kr/pipe.out") lines written, said $n + 2; "
fi
[ "$(tail -c 1 "$kr/pipe.out" | od -An -c | tr -d ' ')" = '\n' ] || kr_why+="the last line cut; "
[ -z "$kr_why" ] || kr_why+=$(tr '\n' ' ' <"$kr/pipe.err")
kr_verdict "dump stopped by SIGINT" \
	"ktrdump: a dump stopped by SIGINT while its output blocks: $n whole lines of 100000, said, exit 0"

# ---- The letters: one language with the other tools ------------------------

# -O (--oldest-first), -F (--follow) and -C (--classes, and --class, its
# old long name): -o, -f and -m mean an output file, a format and a byte
# limit in the other tools. The old -o, -f and -m still work in this
# release, each saying once on standard error which letter it now is,
# and change nothing else: the same output and exit status as the new
# letter. A capture of three entries: gen's "v 1", dev's "d", gen's "v 3".
kr_cap letters $'cpu 0\ne 100 0 0 1\ne 120 1 3 s:d\ne 130 2 0 3'
kr_warn_o='ktrdump: -o is now -O (oldest first); -o will mean an output file'
kr_warn_f='ktrdump: -f is now -F (follow); -f will mean an output format'
kr_warn_m='ktrdump: -m is now -C (classes); -m will mean a byte limit'
# kr_letters NAME STATUS ARGS STDERR [DIR]: ktrdump ARGS (split on spaces)
# DIR ($kr/letters) exits STATUS, prints the arguments ARGS of the
# entries (kr_args) and, on standard error, exactly STDERR.
kr_letters() {
	local name=$1 want=$2 args=$3 err=$4 dir=${5:-$kr/letters} rc=0
	# shellcheck disable=SC2086 # the options, split on purpose
	"$KR" $args "$dir" >"$kr/$name.out" 2>"$kr/$name.err" || rc=$?
	[ "$rc" -eq "$want" ] || kr_why+="$name: exit $rc (want $want); "
	[ "$want" -ne 0 ] || [ "$(kr_args "$name")" = "${6-} " ] ||
		kr_why+="$name: printed '$(kr_args "$name")' (want '${6-} '); "
	[ "$(cat "$kr/$name.err")" = "$err" ] ||
		kr_why+="$name: standard error '$(tr '\n' '|' <"$kr/$name.err")' (want '${err//$'\n'/|}'); "
}
kr_letters all 0 "" "" "" "3 d 1"
kr_letters O 0 "-O" "" "" "1 d 3"
kr_letters oldest 0 "--oldest-first" "" "" "1 d 3"
kr_letters C 0 "-C gen" "" "" "3 1"
kr_letters classes 0 "--classes=dev" "" "" "d"
kr_letters class 0 "--class=gen" "" "" "3 1"
kr_letters OC 0 "-O -l -C dev" "" "" "d"
grep -q ' drivers/y.c:40 d$' "$kr/OC.out" || kr_why+="OC: no file:line with -l; "
kr_verdict "letters: -O -C --classes --class" \
	"ktrdump: -O and --oldest-first oldest first, -C, --classes and --class select classes by name, together with -l: exit 0, no warning"

kr_letters o 0 "-o" "$kr_warn_o" "" "1 d 3"
cmp -s <(tail -n +3 "$kr/o.out") <(tail -n +3 "$kr/O.out") || kr_why+="-o: not the lines of -O; "
kr_letters m 0 "-m gen" "$kr_warn_m" "" "3 1"
cmp -s "$kr/m.out" "$kr/C.out" || kr_why+="-m gen: not the output of -C gen; "
kr_letters om2 0 "-o -m gen -o -m gen" "$kr_warn_o"$'\n'"$kr_warn_m" "" "1 3"
# A bad class: the warning, then the error and the usage of -C, exit 2.
rc=0
"$KR" -m nosuch "$kr/letters" >"$kr/m-bad.out" 2>"$kr/m-bad.err" || rc=$?
[ $rc -eq 2 ] || kr_why+="m-bad: exit $rc (want 2); "
[ "$(head -n 3 "$kr/m-bad.err")" = "$kr_warn_m"$'\n'"ktrdump: --classes: no class 'nosuch' in $kr/letters/classes"$'\n'"Usage: ktrdump [OPTION]... [DIR]" ] ||
	kr_why+="m-bad: standard error '$(head -n 3 "$kr/m-bad.err" | tr '\n' '|')'; "
kr_letters o-corrupt 3 "-o" "$kr_warn_o"$'\n'"ktrdump: $kr/bad/cpu0: offset 0: truncated header (7 of 32 bytes)" \
	"$kr/bad"
kr_verdict "letters: old -o, -m" \
	"ktrdump: the old -o and -m still work as -O and -C (the same output, exit 0, 2 or 3 as theirs), each with one warning naming the new letter, once even when given twice"

# -F and the old -f: --follow, until a SIGINT once the newest entry is
# printed; the account (3 entries, nothing missed), exit 0; -f with its
# warning before it, -F without.
for l in F f; do
	rc=0
	"$KR" -$l -i 20 "$kr/letters" >"$kr/follow-$l.out" 2>"$kr/follow-$l.err" &
	pid=$!
	kr_wait "$kr/follow-$l.out" ' v 3$' || kr_why+="-$l: 'v 3' not printed in 10 s; "
	kill -INT $pid 2>/dev/null || true
	wait $pid || rc=$?
	[ $rc -eq 0 ] || kr_why+="-$l: exit $rc (want 0); "
	[ "$(kr_args "follow-$l")" = "1 d 3 " ] || kr_why+="-$l: printed '$(kr_args "follow-$l")'; "
	want='ktrdump: 3 entries printed, 0 slots missed (overwritten before a read), 0 dropped by the kernel'
	[ $l = F ] || want=$kr_warn_f$'\n'$want
	[ "$(cat "$kr/follow-$l.err")" = "$want" ] ||
		kr_why+="-$l: standard error '$(tr '\n' '|' <"$kr/follow-$l.err")' (want '$want'); "
done
kr_verdict "letters: -F, old -f" \
	"ktrdump: -F follows (3 entries, the account, exit 0 at SIGINT, no warning); the old -f the same, with one warning naming -F"

# ---- --console: the dump on oops, from a saved console log ---------------

# The kernel's lines (ktr_dump(): "%u %3lx %8llx %s", Delta-T to the line
# below), 3 entries of 2 CPUs at most each; the times rebuilt from them
# are 0, -0x10, -0x30, -0x60, -0x65 (a negative Delta-T on the 4th line:
# -0x5 ... written "-      5", then the oldest 0).
kc_dump='ktr: tracing stopped on oops; the last 3 entries of every CPU, newest first:
ktr: C Idx Delta-T  Trace
ktr: 1  77       10 switch 98 -> 0 prev_state 0x1
ktr: 0 157       20 ktr selftest: crashing on request
ktr: 1  76       30 softirq RCU done
ktr: 0 156 -      5 kmalloc 4242 at ff11 by f+0x98/0x110
ktr: 0 155        0 '
kc_head='C Idx Delta-T  Trace
= === ======== ====='
kc_all="$kc_head
1  77       10 switch 98 -> 0 prev_state 0x1
0 157       20 ktr selftest: crashing on request
1  76       30 softirq RCU done
0 156 -      5 kmalloc 4242 at ff11 by f+0x98/0x110
0 155        0 "
# kc_try NAME STATUS WANT-OUT WANT-ERR-REGEX ARGS...: ktrdump ARGS exits
# STATUS, prints exactly WANT-OUT and, on standard error, matches the
# regex (or, if empty, prints nothing there).
kc_try() {
	local name=$1 want=$2 out=$3 re=$4 rc=0
	shift 4
	"$KR" "$@" >"$kr/$name.out" 2>"$kr/$name.err" </dev/null || rc=$?
	[ "$rc" -eq "$want" ] || kr_why+="$name: exit $rc (want $want); "
	[ "$(cat "$kr/$name.out")" = "$out" ] ||
		kr_why+="$name: printed '$(head -c 400 "$kr/$name.out" | tr '\n' '|')'; "
	if [ -z "$re" ]; then
		[ ! -s "$kr/$name.err" ] || kr_why+="$name: standard error '$(tr '\n' '|' <"$kr/$name.err")'; "
	elif ! grep -Eq -- "$re" "$kr/$name.err"; then
		kr_why+="$name: no /$re/ in standard error '$(tr '\n' '|' <"$kr/$name.err")'; "
	fi
}
kc_note="^ktrdump: $kr/[a-z]*\\.log: line [0-9]+: tracing stopped on oops: 5 entries of 2 CPUs \\(at most 3 each\\)\$"

# The dump as printed, and behind each prefix a console log puts before
# the kernel's text: printk's time stamp, with its caller id, dmesg -r's
# level, a syslog line, dmesg -T; CRLF line ends; another CPU's messages
# between the dump's lines; and the dump of an earlier boot before it
# (the last one is decoded).
printf '%s\n' "$kc_dump" >"$kr/plain.log"
kc_try plain 0 "$kc_all" "$kc_note" --console "$kr/plain.log"
for p in '[   12.345678] ' '[   12.345678][    T1] ' '<0>' \
	'Nov 27 12:00:00 ktrhost kernel: ' '[Fri Nov 27 12:00:00 2026] ' \
	'<0>[   12.345678][  C1] '; do
	printf '%s\n' "$kc_dump" | sed "s/^/$p/" >"$kr/prefix.log"
	kc_try "prefix" 0 "$kc_all" "$kc_note" --console "$kr/prefix.log"
	[ -z "$kr_why" ] || { kr_why+="prefix '$p'; "; break; }
done
printf '%s\n' "$kc_dump" | sed 's/$/\r/' >"$kr/crlf.log"
kc_try crlf 0 "$kc_all" "$kc_note" --console "$kr/crlf.log"
{
	echo 'ktr: tracing stopped on panic; the last 1 entries of every CPU, newest first:'
	echo 'ktr: C Idx Delta-T  Trace'
	echo 'ktr: 0   1        0 an earlier boot'
	echo '[    0.000000] Linux version 6.12'
	printf '%s\n' "$kc_dump" | sed '3a\
[   12.3] BUG: kernel NULL pointer dereference\
[   12.3] CPU: 1 UID: 0 PID: 97 Comm: sh ktr: not the dump
5a\
[   12.3] ------------[ cut here ]------------'
	echo 'ktr: the next message ends the dump'
	echo 'ktr: 0   9        0 not in the dump'
} >"$kr/two.log"
kc_try two 0 "$kc_all" "${kc_note%\$}, the last of the log's dumps\$" --console "$kr/two.log"
# The next boot, which did not crash: its first line ends the dump, and
# KTR's message at boot (a digit after "ktr: ") is not a garbled entry.
{
	printf '%s\n' "$kc_dump"
	echo '[    0.000000] Linux version 6.12.57 (gcc) #1 SMP PREEMPT_DYNAMIC'
	echo '[    0.512345] ktr: 262144 bytes (8192 entries) per CPU, 21 trace points, mask 0xfffffffffff0fcbf, time stamps from the cycle counter'
} >"$kr/reboot.log"
kc_try reboot 0 "$kc_all" "$kc_note" --console "$kr/reboot.log"
"$KR" --console - <"$kr/two.log" >"$kr/stdin.out" 2>"$kr/stdin.err" || kr_why+="stdin: failed; "
[ "$(cat "$kr/stdin.out")" = "$kc_all" ] || kr_why+="stdin: printed '$(tr '\n' '|' <"$kr/stdin.out")'; "
grep -q '^ktrdump: standard input: line 5: tracing stopped on oops' "$kr/stdin.err" ||
	kr_why+="stdin: standard error '$(tr '\n' '|' <"$kr/stdin.err")'; "
kr_verdict "console: the dump behind any prefix" \
	"ktrdump --console: the dump behind printk time stamps, caller ids, levels, syslog and dmesg -T prefixes, CRLF, interleaved messages; the last of two dumps, ended by the next boot, from a file or standard input"

# -O: oldest first, Delta-T to the line above; -c: the CPUs asked for,
# Delta-T between the lines shown (0 156 is 5 ns after 0 155; 0 157
# 0x50 ns after 0 156, by the sums of the lines between).
kc_try O 0 "$kc_head
0 155        0 
0 156 -      5 kmalloc 4242 at ff11 by f+0x98/0x110
1  76       30 softirq RCU done
0 157       20 ktr selftest: crashing on request
1  77       10 switch 98 -> 0 prev_state 0x1" "$kc_note" -O --console "$kr/plain.log"
kc_try c0 0 "$kc_head
0 157       50 ktr selftest: crashing on request
0 156 -      5 kmalloc 4242 at ff11 by f+0x98/0x110
0 155        0 " "$kc_note" --cpu=0 --console "$kr/plain.log"
kc_try c1O 0 "$kc_head
1  76        0 softirq RCU done
1  77       30 switch 98 -> 0 prev_state 0x1" "$kc_note" -c 1 -O --console="$kr/plain.log"
kc_try c2 0 "$kc_head" "$kc_note" -c 2 --console "$kr/plain.log"
kr_verdict "console: -O and -c" \
	"ktrdump --console: -O oldest first and -c a CPU, Delta-T between the lines shown (rebuilt from the sums of the lines between)"

# CPU numbers up to 2^32 - 1; a log with no dump; a dump's line garbled
# (a digit after "ktr: " that is no entry) or cut, counted; more entries
# of a CPU than the dump says: two dumps mixed; what --console refuses.
{
	echo 'ktr: tracing stopped on panic; the last 2 entries of every CPU, newest first:'
	echo 'ktr: C Idx Delta-T  Trace'
	echo 'ktr: 4294967295 3ff        1 max'
	echo 'ktr: 8191 fffffffffffffff        2 idx'
	echo 'ktr: 0   1        0 zero'
} >"$kr/big.log"
kc_try bigc 0 "$kc_head
4294967295 3ff        3 max
0   1        0 zero" "tracing stopped on panic: 3 entries of 3 CPUs \\(at most 2 each\\)\$" \
	-c 0,4294967295 --console "$kr/big.log"
kc_try bigi 0 "$kc_head
8191 fffffffffffffff        0 idx" "tracing stopped on panic" -c 8191 --console "$kr/big.log"
printf '[ 1.0] ktr: something else\nhello\n' >"$kr/none.log"
kc_try none 1 "" "^ktrdump: $kr/none.log: no KTR dump \\(\"ktr: tracing stopped on \\.\\.\\.\"\\): boot with ktr.dump_on_oops=N\$" \
	--console "$kr/none.log"
printf '%s\n' "$kc_dump" | sed -e '4s/ 157 / 1x57 /' >"$kr/garbled.log"
kc_try garbled 1 "$kc_head
1  77        ? switch 98 -> 0 prev_state 0x1
1  76       30 softirq RCU done
0 156 -      5 kmalloc 4242 at ff11 by f+0x98/0x110
0 155        0 " "^ktrdump: $kr/garbled.log: 1 lines of the dump not in its layout, not decoded \\(line 4 first\\); Delta-T across them is \\?\$" \
	--console "$kr/garbled.log"
# Oldest first, CPU 0 alone: 0 156's Delta-T to 0 155 is known, 0 157's
# (lost) is not printed, 1 77's to 1 76 crosses the lost line: ?.
kc_try garbledO 1 "$kc_head
1  76        0 softirq RCU done
1  77        ? switch 98 -> 0 prev_state 0x1" "not in its layout" -O -c 1 --console "$kr/garbled.log"
# printk lost messages within the dump: the same, said so.
printf '%s\n' "$kc_dump" | sed '5a\
[   12.3] ** 3 printk messages dropped **' >"$kr/dropped.log"
kc_try dropped 1 "$kc_head
1  77       10 switch 98 -> 0 prev_state 0x1
0 157       20 ktr selftest: crashing on request
1  76        ? softirq RCU done
0 156 -      5 kmalloc 4242 at ff11 by f+0x98/0x110
0 155        0 " "^ktrdump: $kr/dropped.log: printk dropped messages 1 times within the dump; Delta-T across them is \\?\$" \
	--console "$kr/dropped.log"
# NULs (a serial line's noise) within and between lines are dropped,
# and take no line with them; /dev/kmsg's "6,123,456,-;" prefix.
printf '%s\n' "$kc_dump" | sed -e '1s/^/noise\x00x\n/' -e '4s/^ktr: 0 1/ktr: 0 \x001/' >"$kr/nul.log"
kc_try nul 0 "$kc_all" "$kc_note" --console "$kr/nul.log"
printf '%s\n' "$kc_dump" | sed 's/^/6,123,456,-;/' >"$kr/kmsg.log"
kc_try kmsg 0 "$kc_all" "$kc_note" --console "$kr/kmsg.log"
printf '%s\n' "$kc_dump" | sed 's/^/kern  :emerg : /' >"$kr/dmesgx.log"
kc_try dmesgx 0 "$kc_all" "$kc_note" --console "$kr/dmesgx.log"
printf '%s\n' "$kc_dump" | sed "4a\\
ktr: 0 156 $(printf '%05000d' 0)" >"$kr/long.log"
kc_try long 1 "$kc_head
1  77       10 switch 98 -> 0 prev_state 0x1
0 157        ? ktr selftest: crashing on request
1  76       30 softirq RCU done
0 156 -      5 kmalloc 4242 at ff11 by f+0x98/0x110
0 155        0 " "1 lines of the dump not in its layout, not decoded \\(line 5 first\\); Delta-T across them is \\?\$" \
	--console "$kr/long.log"
printf '%s\n' "$kc_dump" | sed 's/last 3 entries/last 2 entries/' >"$kr/mixed.log"
kc_try mixed 1 "$kc_all" "^ktrdump: $kr/mixed.log: 1 CPUs have more than 2 entries: not one dump\$" \
	--console "$kr/mixed.log"
for a in "-C gen|-C cannot select" "-l|no file:line for -l" "-a|no time for -a" \
	"-F|cannot be followed" "$kr/one|not a directory too"; do
	# shellcheck disable=SC2086 # the option, split on purpose
	kc_try refuse 2 "" "^ktrdump: --console: .*${a#*|}" ${a%%|*} --console "$kr/plain.log"
done
kr_verdict "console: bad input, refused options" \
	"ktrdump --console: CPUs to 2^32 - 1 and Idx of 16 digits; no dump, a garbled or too long line of the dump or printk's dropped messages in it (Delta-T across them ?), a CPU with more entries than the dump's N: said, exit 1; NULs dropped; /dev/kmsg and dmesg -x prefixes; -C -l -a -F and DIR refused, exit 2"

# A log of gigabytes: read a line at a time, in bounded memory. 1 GiB of
# other messages (lines of 100 bytes and one of 64 MiB) before the dump,
# through a pipe, under a 64 MiB address-space limit.
kc_big() {
	yes '[  123.456789] usb 1-1: new high-speed USB device number 2 using ehci-pci ..........' |
		head -c $((1 << 30))
	head -c $((64 << 20)) /dev/zero | tr '\0' 'k'
	echo
	printf '%s\n' "$kc_dump"
}
rc=0
kc_big | (ulimit -v 65536 && exec "$KR" --console -) >"$kr/gig.out" 2>"$kr/gig.err" || rc=$?
[ $rc -eq 0 ] || kr_why+="exit $rc: $(head -c 300 "$kr/gig.err"); "
[ "$(cat "$kr/gig.out")" = "$kc_all" ] || kr_why+="printed '$(head -c 300 "$kr/gig.out" | tr '\n' '|')'; "
kc_l="[  123.456789] usb 1-1: new high-speed USB device number 2 using ehci-pci .........."
kc_l=$(((1 << 30) / (${#kc_l} + 1) + 2))
grep -q "^ktrdump: standard input: line $kc_l: tracing stopped on oops" "$kr/gig.err" ||
	kr_why+="standard error '$(tr '\n' '|' <"$kr/gig.err")'; "
kr_verdict "console: a log of 1 GiB" \
	"ktrdump --console: the dump after 1 GiB of other lines (one of 64 MiB), through a pipe, under ulimit -v 65536"
