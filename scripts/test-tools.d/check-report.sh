# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # out, src and failed: scripts/test-tools's
# SPDX-License-Identifier: GPL-2.0
# Tests of kmemtrace-check and kmemtrace-report together (sourced by
# scripts/test-tools: $out holds the tools, mkcapture and kmtgen): one
# reader and one loss calculation for both (tools/kmemtrace/kmt_capture.h,
# kmt_loss.h), memory bounded in the capture's size and in the number of
# CPU files, the open-file limit, honest machine formats, the command-line
# language (kmt_cli.h) and the stop signal.

cr=$out/check-report
rm -rf "$cr"
mkdir -p "$cr"

# peak_rss CMD...: CMD's peak resident set in KiB (its output dropped),
# from wait4() in a small C program: a shell or Python parent would
# count its own memory in the child's (fork() copies it, and exec()
# keeps the peak).
gcc -O2 -Wall -Wextra -o "$out/peak-rss" -x c - <<'C' >>"$out/build.log" 2>&1
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* peak-rss OUT CMD...: runs CMD, its output to OUT, prints "KIB STATUS". */
int main(int argc, char **argv)
{
	struct rusage ru;
	int status, fd;
	pid_t pid;

	if (argc < 3)
		return 2;
	pid = fork();
	if (!pid) {
		fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[2], argv + 2);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
		return 2;
	printf("%ld %d\n", ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	return 0;
}
C
# peak_rss OUT CMD...: prints "KIB STATUS", CMD's output in OUT.
peak_rss() {
	"$out/peak-rss" "$@"
}

# check_lost FILE: the events lost that kmemtrace-check's output FILE
# says ("seq A to B: N events lost in R ranges"; 0 without that line,
# which an empty window does not print).
check_lost() {
	local n
	n=$(sed -n 's/^seq -\{0,1\}[0-9]* to -\{0,1\}[0-9]*: \([0-9]*\) events lost in .*/\1/p' "$1")
	echo "${n:-0}"
}

# The same lost-event figure from both tools, on every mkcapture case and
# kmtgen capture; where the report has none (a corrupt event ends it),
# both call the capture corrupt (exit 3). Each check ends with its
# verdict, and exits with its status: CLEAN 0, LOSSY 1, CORRUPT 3. A
# report exits 0 only with nothing lost, 3 only where check says
# CORRUPT, else 1 when events were lost (errors too may make it 1).
bad=""
n=0
for c in clean swapped wrap unknownfeat lossy complete tail miscount trunc badsize unknowntype \
	 unknownevent leftover draintail headloss killed zeroreq lessalloc dupseq backseq \
	 missedcpu; do
	"$out/mkcapture" "$cr/$c" "$c"
done
"$out/kmtgen" -n 3000 -c 8 "$cr/storm8"
for scn in "$src"/tests/report/*.scn; do
	name=$(basename "$scn" .scn)
	"$out/kmtgen" "$cr/scn-$name" <"$scn"
done
# A CPU file missing: its events are lost in the window.
cp -r "$cr/scn-basic" "$cr/scn-nocpu1"
sed -i 's/^cpu_files .*/cpu_files cpu0/; s/^complete 1/complete 0/' "$cr/scn-nocpu1/meta"
for d in "$cr"/*/; do
	d=${d%/}
	c=${d##*/}
	crc=0
	rrc=0
	"$out/kmemtrace-check" "$d" >"$d.check" 2>&1 || crc=$?
	"$out/kmemtrace-report" --format=json "$d" >"$d.json" 2>"$d.json.err" || rrc=$?
	lc=$(check_lost "$d.check")
	lr=$(sed -n 's/^  "lost_events": \([0-9]*\),$/\1/p' "$d.json")
	n=$((n + 1))
	v=$(tail -n 1 "$d.check")
	case $v in
	CLEAN) want=0 ;;
	LOSSY:*) want=1 ;;
	CORRUPT:*) want=3 ;;
	*) want=none ;;
	esac
	[ "$want" = "$crc" ] || bad+=" [$c: check exit $crc, last line '$v']"
	if [ -n "$lr" ]; then
		case $rrc in
		0) [ "$lr" -eq 0 ] || bad+=" [$c: report exit 0 with $lr lost]" ;;
		1) [ "$lr" -gt 0 ] || grep '^  "errors": {' "$d.json" |
			sed 's/"free of unknown pointer": [0-9]*//' | grep -q ': [1-9]' ||
			bad+=" [$c: report exit 1, nothing lost, no error]" ;;
		3) [ "$crc" -eq 3 ] || bad+=" [$c: report exit 3, check exit $crc]" ;;
		*) bad+=" [$c: report exit $rrc]" ;;
		esac
	fi
	if [ -z "$lr" ]; then
		[ $crc -eq 3 ] && [ $rrc -eq 3 ] || bad+=" [$c: no report (exit $rrc), check exit $crc: want both 3]"
	elif [ "$lc" != "$lr" ]; then
		bad+=" [$c: check $lc lost, report $lr]"
	fi
done
if [ -z "$bad" ] && [ $n -ge 28 ]; then
	t_pass "kmemtrace-check and kmemtrace-report: the same events lost on the $n captures (mkcapture's cases, kmtgen's), or both exit 3 (corrupt); each check's verdict matches its exit status, and each report's"
else
	t_fail "kmemtrace-check and kmemtrace-report: one loss calculation" "$n captures:$bad"
	failed=1
fi

# Memory flat in the capture's size (check keeps nothing per event) and
# bounded in the number of files (the buffers share a budget): 72 MB in
# 2 files, and in 1024.
"$out/kmtgen" -n 500000 -c 2 "$cr/rss2"
"$out/kmtgen" -n 500000 -c 1024 "$cr/rss1024"
# Each run must also succeed (exit 0: the captures are complete and
# clean) and say it read all 1000000 events: a tool that fails early
# uses little memory too.
bad=""
rss=""
for d in rss2 rss1024; do
	for t in kmemtrace-check kmemtrace-report; do
		read -r kib st < <(peak_rss "$cr/$d-$t.out" "$out/$t" "$cr/$d")
		[ "${kib:-999999}" -lt 40960 ] || bad+=" [$t $d: $kib KiB]"
		[ "$st" = 0 ] || bad+=" [$t $d: exit $st: $(head -c 200 "$cr/$d-$t.out")]"
		grep -q "^1000000 events in ${d#rss} files[,;]" "$cr/$d-$t.out" ||
			bad+=" [$t $d: not 1000000 events read: $(head -c 200 "$cr/$d-$t.out")]"
		rss+=" $t/$d ${kib}K"
	done
done
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: exit 0, 1000000 events read, peak RSS under 40 MiB on a $(($(cat "$cr"/rss2/cpu* | wc -c) >> 20)) MiB capture in 2 and in 1024 files:$rss"
else
	t_fail "kmemtrace-check, kmemtrace-report: memory flat in the capture" "$bad"
	failed=1
fi
rm -rf "$cr/rss2" "$cr/rss1024"

# The open-file limit: 200 CPU files under a soft limit of 64 are read
# (the tools raise it to the hard limit); under a hard limit of 64 both
# say which limit, and exit 2.
"$out/kmtgen" -n 2000 -c 200 "$cr/files200"
bad=""
for t in kmemtrace-check kmemtrace-report; do
	rc=0
	(ulimit -Sn 64 && "$out/$t" "$cr/files200") >"$cr/soft-$t.out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || bad+=" [$t, soft limit 64: exit $rc: $(head -c 200 "$cr/soft-$t.out")]"
	rc=0
	(ulimit -n 64 && "$out/$t" "$cr/files200") >"$cr/hard-$t.out" 2>&1 || rc=$?
	[ $rc -eq 2 ] && grep -q '200 CPU files to read at once need 216 open files, but the hard limit of open files is 64 (ulimit -Hn)' "$cr/hard-$t.out" ||
		bad+=" [$t, hard limit 64: exit $rc: $(head -c 200 "$cr/hard-$t.out")]"
done
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: 200 CPU files under ulimit -Sn 64 read; under ulimit -Hn 64 exit 2 naming the limit"
else
	t_fail "kmemtrace-check, kmemtrace-report: open-file limit" "$bad"
	failed=1
fi

# No fixed table of files or CPU numbers: 5000 CPU files, the last one
# cpu8191 (NR_CPUS 8192), or as many as the hard limit of open files
# allows (the tools need 16 more than the files), with a margin: at
# least 1100, more than the usual soft limit of 1024. A hard limit too
# low for that gives a smaller run, which says so.
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1000000
nf=$((hard - 32))
[ $nf -le 5000 ] || nf=5000
small=""
if [ "$hard" -lt 1116 ]; then
	small=" (ONLY $nf: the hard limit of open files, $hard, is below 1116)"
fi
"$out/kmtgen" -n 6000 -c $nf "$cr/filesmany"
mv "$cr/filesmany/cpu$((nf - 1))" "$cr/filesmany/cpu8191"
sed -i "s/ cpu$((nf - 1))\$/ cpu8191/" "$cr/filesmany/meta"
bad=""
grep -q ' cpu8191$' "$cr/filesmany/meta" || bad+=" [meta: no cpu8191]"
for t in kmemtrace-check kmemtrace-report; do
	rc=0
	"$out/$t" "$cr/filesmany" >"$cr/filesmany-$t.out" 2>&1 || rc=$?
	[ $rc -eq 0 ] && grep -q "^12000 events in $nf files" "$cr/filesmany-$t.out" ||
		bad+=" [$t: exit $rc: $(head -c 200 "$cr/filesmany-$t.out")]"
done
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: $nf CPU files up to cpu8191, all read$small"
else
	t_fail "kmemtrace-check, kmemtrace-report: $nf CPU files" "$bad"
	failed=1
fi
rm -rf "$cr/filesmany" "$cr/files200"

# A CPU kmemtraced could not capture (missed_cpus in meta, cpu1 not in
# cpu_files, complete 0): its 50 events are lost, and both tools say
# which CPU; check says LOSSY, exit 1, never CORRUPT; the report the same
# figure, exit 1, and with a machine format, the CPU on stderr.
bad=""
d=$cr/missedcpu
rc=0
"$out/kmemtrace-check" "$d" >"$d.out2" 2>&1 || rc=$?
[ $rc -eq 1 ] || bad+=" [check: exit $rc]"
grep -qx 'cpu1 was not captured by kmemtraced: its events are among those lost' "$d.out2" ||
	bad+=" [check: no cpu1 line]"
[ "$(grep -c 'not captured by kmemtraced' "$d.out2")" -eq 1 ] || bad+=" [check: cpu1 not said once]"
grep -qx 'LOSSY: 50 events lost' "$d.out2" || bad+=" [check: not LOSSY: 50 events lost]"
rc=0
"$out/kmemtrace-report" "$d" >"$d.text" 2>&1 || rc=$?
[ $rc -eq 1 ] || bad+=" [report: exit $rc]"
grep -qx 'cpu1 was not captured by kmemtraced: its events are among those lost' "$d.text" ||
	bad+=" [report: no cpu1 line]"
grep -q '^50 events lost (missing sequence numbers' "$d.text" || bad+=" [report: not 50 lost]"
rc=0
"$out/kmemtrace-report" --format=json "$d" >"$d.json2" 2>"$d.json2.err" || rc=$?
[ $rc -eq 1 ] || bad+=" [report json: exit $rc]"
grep -qx '  "lost_events": 50,' "$d.json2" || bad+=" [report json: not 50 lost]"
grep -q 'missedcpu: cpu1 was not captured by kmemtraced' "$d.json2.err" ||
	bad+=" [report json: cpu1 not on stderr]"
# Many: the first 8 named, then counted.
cp -r "$d" "$cr/missed12"
sed -i 's/^missed_cpus .*/missed_cpus cpu1 cpu3 cpu2 cpu4 cpu5 cpu6 cpu7 cpu8 cpu9 cpu10 cpu11 cpu12 cpu1/' \
	"$cr/missed12/meta"
rc=0
"$out/kmemtrace-check" "$cr/missed12" >"$cr/missed12.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'was not captured by kmemtraced' "$cr/missed12.out")" -eq 8 ] &&
	grep -qx '\.\.\. 4 more CPUs not captured by kmemtraced' "$cr/missed12.out" ||
	bad+=" [12 CPUs missed: exit $rc: $({ grep 'captured' "$cr/missed12.out" || :; } | tr '\n' ' ')]"
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: missed_cpus cpu1: \"cpu1 was not captured by kmemtraced\", 50 lost, LOSSY, exit 1; 12 CPUs: 8 named, 4 counted"
else
	t_fail "kmemtrace-check, kmemtrace-report: missed_cpus" "$bad"
	failed=1
fi

# A meta that contradicts itself is corrupt (exit 3), in both tools: a
# key given twice, the lost count going back, the numbers read later
# before those read earlier (32-bit wrapping).
bad=""
for cw in 'dupkey:complete given twice' \
	  'lostback:end_lost_events 9 is less than start_lost_events 10' \
	  'drainback:drain_seq 4294967290 is before start_seq 0' \
	  'endback:end_seq 40 is before start_seq 50' \
	  'enddrain:end_seq 90 is before drain_seq 100'; do
	c=${cw%%:*}
	"$out/mkcapture" "$cr/$c" "$c"
	for t in kmemtrace-check kmemtrace-report; do
		rc=0
		"$out/$t" "$cr/$c" >"$cr/$c-$t.out" 2>&1 || rc=$?
		[ $rc -eq 3 ] && grep -qx "$t: $cr/$c/meta: ${cw#*:}" "$cr/$c-$t.out" ||
			bad+=" [$t $c: exit $rc: $(head -c 200 "$cr/$c-$t.out")]"
	done
done
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: meta with a key twice, end_lost_events < start_lost_events, drain_seq or end_seq before start_seq, end_seq before drain_seq: exit 3, said"
else
	t_fail "kmemtrace-check, kmemtrace-report: inconsistent meta" "$bad"
	failed=1
fi

# Paths past PATH_MAX are refused by name, not cut: DIR/meta too long,
# and a DIR whose meta fits but DIR/cpu1234567 does not (exit 2).
bad=""
long=$cr/long
# (Components of 200 bytes, under NAME_MAX; DIR is 4085 bytes, DIR/meta
# 4090, DIR/cpu1234567 4096, which is made from inside DIR.)
while [ $((${#long} + 202)) -lt 4085 ]; do long+=/$(printf '%0200d' 0); done
long+=/$(printf '%0*d' $((4085 - ${#long} - 1)) 0)
mkdir -p "$long"
"$out/mkcapture" "$long" clean
(cd "$long" && mv cpu1 cpu1234567)
sed -i 's/^cpu_files .*/cpu_files cpu0 cpu1234567/' "$long/meta"
for t in kmemtrace-check kmemtrace-report; do
	rc=0
	"$out/$t" "$long" >"$cr/long-$t.out" 2>&1 || rc=$?
	[ $rc -eq 2 ] && grep -q '\.\.\./cpu1234567: name too long$' "$cr/long-$t.out" ||
		bad+=" [$t, cpu file: exit $rc: $(tail -c 200 "$cr/long-$t.out")]"
	rc=0
	"$out/$t" "$long/$(printf '%020d' 0)" >"$cr/long2-$t.out" 2>&1 || rc=$?
	[ $rc -eq 2 ] && grep -q '\.\.\.: name too long$' "$cr/long2-$t.out" ||
		bad+=" [$t, meta: exit $rc: $(tail -c 200 "$cr/long2-$t.out")]"
done
rm -rf "$cr/long"
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: DIR/meta or DIR/cpu<n> longer than PATH_MAX: \"name too long\", exit 2"
else
	t_fail "kmemtrace-check, kmemtrace-report: paths too long" "$bad"
	failed=1
fi

# An event of the ABI's largest size (65535 bytes, a newer ABI's, skipped
# by its size) in one of 1024 files, whose buffers are 16 KiB each.
python3 - "$cr/bigevent" <<'PY'
import os, struct, sys
d = sys.argv[1]
os.makedirs(d)
little = sys.byteorder == 'little'
e = '<' if little else '>'
big = struct.pack(e + 'BBHiQQ', 5, 0, 65535, 0, 0xffffffff81000000, 0) + b'\0' * (65535 - 24)
alloc = struct.pack(e + 'BBHiQQQQIi', 0, 0, 48, 1, 0xffffffff81000010, 0xffff888000001000, 64, 64, 0xcc0, -1)
for i in range(1024):
    with open('%s/cpu%d' % (d, i), 'wb') as f:
        f.write(big if i == 0 else alloc if i == 1 else b'')
with open(d + '/meta', 'w') as f:
    f.write('abi_version 1\nendianness %s\nword_size 64\n' % ('little' if little else 'big'))
    f.write('cpu_files %s\n' % ' '.join('cpu%d' % i for i in range(1024)))
    f.write('start_seq 0\nfinished 1\ndrain_seq 2\nend_seq 2\ncomplete 0\nstopped 1\n')
PY
rc=0
"$out/kmemtrace-check" "$cr/bigevent" >"$cr/bigevent.out" 2>&1 || rc=$?
if [ $rc -eq 0 ] && grep -qx '1 events with event or type ids of a newer ABI, skipped' "$cr/bigevent.out" &&
   grep -qx '2 events in 1024 files, 65583 bytes' "$cr/bigevent.out"; then
	t_pass "kmemtrace-check: a 65535-byte event among 1024 files (16 KiB buffers) read whole"
else
	t_fail "kmemtrace-check: 65535-byte event" "exit $rc: $(tr '\n' ' ' <"$cr/bigevent.out")"
	failed=1
fi

# Machine formats complete by default, --top only when asked, and JSON
# says when it was cut: 30 call sites.
awk 'BEGIN { for (i = 0; i < 30; i++) {
		p = sprintf("0xffff888000%06x", i * 4096)
		printf "0 alloc kmalloc 0xffffffff811%05x %s 64 64\n", i * 16, p
		printf "0 free kmalloc 0xffffffff81200000 %s\n", p
	} }' | "$out/kmtgen" "$cr/sites30"
bad=""
r=$out/kmemtrace-report
[ "$("$r" --format=csv "$cr/sites30" | wc -l)" -eq 32 ] || bad+=" [csv: not 31 sites and a header]"
[ "$("$r" --format=folded "$cr/sites30" | wc -l)" -eq 30 ] || bad+=" [folded: not 30 lines]"
[ "$("$r" --format=json "$cr/sites30" | grep -c '"call_site"')" -eq 31 ] || bad+=" [json: not 31 sites]"
"$r" --format=json "$cr/sites30" >"$cr/sites30.json"
grep -qx '  "top": null, "cut": false,' "$cr/sites30.json" || bad+=" [json: says it was cut]"
"$r" --format=json --top=5 "$cr/sites30" >"$cr/sites30-top5.json"
[ "$(grep -c '"call_site"' "$cr/sites30-top5.json")" -eq 5 ] || bad+=" [json --top=5: not 5 sites]"
grep -qx '  "top": 5, "cut": true,' "$cr/sites30-top5.json" || bad+=" [json --top=5: not said cut]"
grep -qx '  "rows": { "sites": 31, "caches": 1, "error_sites": 0 },' "$cr/sites30-top5.json" ||
	bad+=" [json --top=5: not the whole rows: $(grep rows "$cr/sites30-top5.json" || :)]"
[ "$("$r" --format=csv --top=5 "$cr/sites30" | wc -l)" -eq 6 ] || bad+=" [csv --top=5: not 5 sites]"
"$r" "$cr/sites30" >"$cr/sites30.text"
grep -qx '\.\.\. 11 more call sites (--top)' "$cr/sites30.text" || bad+=" [text: not its default 20]"
if [ -z "$bad" ]; then
	t_pass "kmemtrace-report: csv, json and folded hold all 31 call sites; --top=5 cuts them, and JSON says so (top, cut, rows); text shows 20"
else
	t_fail "kmemtrace-report: complete machine formats" "$bad"
	failed=1
fi

# The same word means the same number in every format: allocations,
# failed and frees in text and JSON; the type is kmem_cache everywhere.
d=$cr/scn-basic
"$r" "$d" >"$d.text" 2>&1 || :
"$r" --format=json "$d" >"$d.json" 2>&1 || :
"$r" --format=csv "$d" >"$d.csv" 2>&1 || :
"$r" --format=folded "$d" >"$d.folded" 2>&1 || :
bad=""
ja=$(sed -n 's/^  "allocations": \([0-9]*\), "failed": \([0-9]*\), "frees": \([0-9]*\),$/\1 \2 \3/p' "$d.json")
ta=$(sed -n 's/^16 events in 2 files; \([0-9]*\) allocations, \([0-9]*\) failed, \([0-9]*\) frees$/\1 \2 \3/p' "$d.text")
[ -n "$ja" ] && [ "$ja" = "$ta" ] || bad+=" [allocations, failed, frees: text '$ta', json '$ja']"
grep -q '^  kmem_cache  ' "$d.text" || bad+=" [text: no kmem_cache line]"
! grep -qE '^  cache[ :]|^[^ ]+ +cache +[0-9]| cache (free|freed|by) ' "$d.text" || bad+=" [text: type cache]"
! grep -q '"type": "cache"\|"cache": {' "$d.json" || bad+=" [json: type cache]"
! grep -q ',cache,' "$d.csv" || bad+=" [csv: type cache]"
! grep -q ';cache ' "$d.folded" || bad+=" [folded: type cache]"
"$r" --help >"$cr/report.help" 2>&1 || :
grep -q 'only kmalloc, kmem_cache or pages events' "$cr/report.help" || bad+=" [--help: not kmem_cache]"
if [ -z "$bad" ]; then
	t_pass "kmemtrace-report: \"$ta\" (allocations, failed, frees) in text and JSON alike; kmem_cache in text, csv, json, folded and --help"
else
	t_fail "kmemtrace-report: one meaning per word" "$bad"
	failed=1
fi

# The command-line language: --version and --help exit 0 on standard
# output, bad usage exits 2 with the help on standard error.
bad=""
for t in kmemtrace-check kmemtrace-report; do
	rc=0
	"$out/$t" --version >"$cr/$t.version" 2>&1 || rc=$?
	[ $rc -eq 0 ] && grep -qx "$t (kmemtrace tools) [0-9.]*" "$cr/$t.version" &&
		grep -qx 'kmemtrace ABI 2' "$cr/$t.version" || bad+=" [$t --version: exit $rc]"
	rc=0
	"$out/$t" --help >"$cr/$t.help" 2>/dev/null || rc=$?
	[ $rc -eq 0 ] && grep -q "^usage: $t" "$cr/$t.help" &&
		grep -q '^Exit status: 0 done, 1 the data has a problem' "$cr/$t.help" || bad+=" [$t --help: exit $rc]"
	rc=0
	"$out/$t" --bogus "$cr/clean" >/dev/null 2>"$cr/$t.usage" || rc=$?
	[ $rc -eq 2 ] && grep -q "^usage: $t" "$cr/$t.usage" || bad+=" [$t --bogus: exit $rc]"
done
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: --version (kmemtrace ABI 2) and --help exit 0; a bad option exits 2 with the usage"
else
	t_fail "kmemtrace-check, kmemtrace-report: command line" "$bad"
	failed=1
fi

# A meta of the wrong byte order: the error says what to look at.
cp -r "$cr/swapped" "$cr/wrongendian"
if grep -q '^endianness little' "$cr/wrongendian/meta"; then
	sed -i 's/^endianness little/endianness big/' "$cr/wrongendian/meta"
else
	sed -i 's/^endianness big/endianness little/' "$cr/wrongendian/meta"
fi
bad=""
for t in kmemtrace-check kmemtrace-report; do
	rc=0
	"$out/$t" "$cr/wrongendian" >"$cr/wrongendian-$t.out" 2>&1 || rc=$?
	[ $rc -eq 3 ] && grep -q "cpu0: offset 0: .*(it reads as the other byte order: is meta's endianness right?)" \
		"$cr/wrongendian-$t.out" || bad+=" [$t: exit $rc: $(head -c 200 "$cr/wrongendian-$t.out")]"
done
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: a meta of the wrong byte order: exit 3, the error says so"
else
	t_fail "kmemtrace-check, kmemtrace-report: wrong-endian meta" "$bad"
	failed=1
fi

# A first stop signal ends the reading and the tool reports what it read,
# saying so: cpu1 is a pipe whose writer stays open, the tool waits in it.
bad=""
for t in kmemtrace-check kmemtrace-report; do
	d=$cr/fifo-$t
	rm -rf "$d"
	"$out/mkcapture" "$d" clean
	mv "$d/cpu1" "$d.cpu1"
	mkfifo "$d/cpu1"
	exec 3<>"$d/cpu1"
	cat "$d.cpu1" >&3
	rc=0
	"$out/$t" "$d" >"$d.out" 2>&1 &
	pid=$!
	sleep 1
	kill -INT $pid 2>/dev/null || :
	# A tool that goes on waiting (or ignores the signal, as a background
	# job may) is ended after 5 s, and fails.
	for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	kill -KILL $pid 2>/dev/null || :
	wait $pid || rc=$?
	exec 3>&-
	# Not all the data was checked: exit 1, and no verdict of check's
	# (CLEAN nor LOSSY) but PARTIAL. The bytes are those read (cpu1 is
	# a pipe, of size 0), all of them.
	case $t in
	kmemtrace-check)
		want='^partial: stopped by a signal after 100 events \(seq 99\); the rest is not checked$'
		grep -qx 'PARTIAL: 100 events checked, stopped by a signal: no verdict' "$d.out" ||
			bad+=" [$t: no PARTIAL line]"
		! grep -qE '^(CLEAN|LOSSY)' "$d.out" || bad+=" [$t: a verdict: $(grep -E '^(CLEAN|LOSSY)' "$d.out")]"
		grep -qx '100 events in 2 files, 6150 bytes' "$d.out" || bad+=" [$t: not the 6150 bytes read]"
		;;
	*) want='^partial report: stopped by a signal after 100 events$' ;;
	esac
	[ $rc -eq 1 ] || bad+=" [$t: exit $rc, want 1]"
	grep -qE "$want" "$d.out" && grep -q '^100 events in 2 files' "$d.out" ||
		bad+=" [$t: exit $rc: $(head -c 200 "$d.out" | tr '\n' ' ')]"
done
if [ -z "$bad" ]; then
	t_pass "kmemtrace-check, kmemtrace-report: a first SIGINT while waiting in a CPU file: what was read is reported, said partial (check: PARTIAL, no verdict), exit 1"
else
	t_fail "kmemtrace-check, kmemtrace-report: stop signal" "$bad"
	failed=1
fi

# The letters: -T TYPE (--type) filters by type, as -t did: -t is a time
# in kmemtraced and kmonlog. The old -t still works in this release,
# saying once on standard error that it is now -T, and changes nothing
# else: the same report and exit status. KMT_REPORT=PATH tests another
# kmemtrace-report binary (the one before a change, to see this fail).
rl=${KMT_REPORT:-$out/kmemtrace-report}
d=$cr/scn-basic
rl_warn='kmemtrace-report: -t is now -T (type); -t will mean a time'
bad=""
# rl_run NAME ARGS...: the report of ARGS on $d in $cr/letters-NAME.out,
# standard error in .err, the exit status in .rc.
rl_run() {
	local name=$1 rc=0
	shift
	"$rl" "$@" "$d" >"$cr/letters-$name.out" 2>"$cr/letters-$name.err" || rc=$?
	echo $rc >"$cr/letters-$name.rc"
}
rl_run long --format=csv --type=kmem_cache
rl_run all --format=csv
for args in "T -T kmem_cache" "Tcache -T cache" "t -t kmem_cache" "tt -t kmem_cache -t kmem_cache"; do
	# shellcheck disable=SC2086 # the options, split on purpose
	rl_run $args --format=csv
done
rl_run ttype --format=csv -t pages
rl_run Ttype --format=csv -T pages
cmp -s "$cr/letters-long.out" "$cr/letters-all.out" && bad+=" [--type=kmem_cache: the whole report]"
grep -q ',kmem_cache,' "$cr/letters-long.out" || bad+=" [--type=kmem_cache: no kmem_cache row]"
! grep -q ',kmalloc,\|,pages,' "$cr/letters-long.out" || bad+=" [--type=kmem_cache: other types]"
for n in T Tcache t tt; do
	cmp -s "$cr/letters-$n.out" "$cr/letters-long.out" ||
		bad+=" [$n: not the report of --type=kmem_cache: $(head -c 200 "$cr/letters-$n.out" | tr '\n' ' ')]"
	[ "$(cat "$cr/letters-$n.rc")" = "$(cat "$cr/letters-long.rc")" ] ||
		bad+=" [$n: exit $(cat "$cr/letters-$n.rc") (want $(cat "$cr/letters-long.rc"))]"
done
cmp -s "$cr/letters-ttype.out" "$cr/letters-Ttype.out" || bad+=" [-t pages: not the report of -T pages]"
[ "$(cat "$cr/letters-ttype.rc")" = "$(cat "$cr/letters-Ttype.rc")" ] ||
	bad+=" [-t pages: exit $(cat "$cr/letters-ttype.rc") (-T pages: $(cat "$cr/letters-Ttype.rc"))]"
for n in long all T Tcache Ttype; do
	[ ! -s "$cr/letters-$n.err" ] || bad+=" [$n: standard error '$(tr '\n' ' ' <"$cr/letters-$n.err")']"
done
for n in t tt ttype; do
	[ "$(cat "$cr/letters-$n.err")" = "$rl_warn" ] ||
		bad+=" [$n: standard error '$(tr '\n' '|' <"$cr/letters-$n.err")' (want '$rl_warn')]"
done
# A bad type: the warning, then the error of --type and the usage, exit 2.
rl_run tbad -t slab
[ "$(cat "$cr/letters-tbad.rc")" = 2 ] || bad+=" [-t slab: exit $(cat "$cr/letters-tbad.rc") (want 2)]"
[ "$(head -n 3 "$cr/letters-tbad.err")" = "$rl_warn"$'\n'"kmemtrace-report: --type=slab: not kmalloc, kmem_cache or pages"$'\n'"usage: kmemtrace-report [OPTIONS] DIR" ] ||
	bad+=" [-t slab: standard error '$(head -n 3 "$cr/letters-tbad.err" | tr '\n' '|')']"
"$rl" --help >"$cr/letters-help" 2>&1 || :
grep -q '^  -T, --type=TYPE ' "$cr/letters-help" || bad+=" [--help: no -T, --type]"
if [ -z "$bad" ]; then
	t_pass "kmemtrace-report: -T TYPE and --type filter by type (no warning); the old -t still works as -T (the same report and exit status; -t slab exit 2), with one warning naming -T, once even when given twice"
else
	t_fail "kmemtrace-report: -T and the old -t" "$bad"
	failed=1
fi

# Double frees with many pointers freed in between: 16000 distinct
# objects allocated and freed, then the first 20 freed again, and a
# pointer never allocated freed: 20 double frees (exit 1) and a free of
# an unknown pointer. A table of the last free per slot (65536 of them,
# until now) had forgotten 4 of the 20: it called them frees of unknown
# pointers.
awk 'BEGIN {
	print "sym 0xffffffff81100000 many_alloc"
	print "sym 0xffffffff81400000 many_free"
	print "sym 0xffffffff81500000 again_free"
	for (i = 0; i < 16000; i++) {
		p = sprintf("0xffff8880%08x", 64 * i)
		print "0 alloc kmalloc 0xffffffff81100010 " p " 64 64"
		print "0 free kmalloc 0xffffffff81400010 " p
	}
	for (i = 0; i < 20; i++)
		print "0 free kmalloc 0xffffffff81500010 " sprintf("0xffff8880%08x", 64 * i)
	print "0 free kmalloc 0xffffffff81500010 0xffff8880ffffffc0"
}' >"$cr/manyfree.scn"
"$out/kmtgen" "$cr/manyfree" <"$cr/manyfree.scn"
bad=""
rc=0
"$out/kmemtrace-report" -f json "$cr/manyfree" >"$cr/manyfree.json" 2>"$cr/manyfree.err" || rc=$?
[ $rc -eq 1 ] || bad+=" [exit $rc, want 1]"
grep -q '"double free": 20, "free of unknown pointer": 1,' "$cr/manyfree.json" ||
	bad+=" [errors: $(grep '"errors"' "$cr/manyfree.json" || :)]"
grep -q '"freed_forgotten": 0,' "$cr/manyfree.json" || bad+=" [freed_forgotten not 0]"
# The same capture through a report that remembers the last 512 freed pointers
# at least (two generations of 1024 slots): 31 new generations, 15360
# pointers forgotten, the first 20 among them, and the report says so.
gcc -O2 -Wall -Wextra -pthread -D_GNU_SOURCE -DFREED_MAX_SLOTS=2048 -I"$KTREE/tools/include" \
	-isystem "$KOBJ/usr/include" -o "$cr/report-small" "$src/kmemtrace-report.c" >>"$out/build.log" 2>&1 ||
	bad+=" [no report with FREED_MAX_SLOTS=2048]"
rc=0
"$cr/report-small" "$cr/manyfree" >"$cr/manyfree-small.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || bad+=" [small table: exit $rc, want 0: only frees of unknown pointers]"
grep -q '^15360 freed pointers forgotten (the last 512 always remembered): a double free of one counts as a free of an unknown pointer$' \
	"$cr/manyfree-small.txt" || bad+=" [small table: '$(grep 'forgotten' "$cr/manyfree-small.txt" || :)']"
grep -q 'double free 0, free of unknown pointer 21,' "$cr/manyfree-small.txt" ||
	bad+=" [small table: '$(grep '^errors:' "$cr/manyfree-small.txt" || :)']"
if [ -z "$bad" ]; then
	t_pass "kmemtrace-report: 20 double frees after 16000 other pointers were freed are double frees (exit 1); past its table's limit the report says how many freed pointers it forgot"
else
	t_fail "kmemtrace-report: double frees far apart" "$bad"
	failed=1
fi

# --cpu and --type leave allocations out: a pointer freed on CPU 0,
# allocated again on CPU 1 and freed on CPU 0 is no double free, with
# --cpu=0 as without it. (The report called it one, exit 1.)
cat >"$cr/cpufilter.scn" <<'SCN'
sym 0xffffffff81100000 a_alloc
sym 0xffffffff81400000 a_free
0 alloc kmalloc 0xffffffff81100010 0xffff888000001000 64 64
0 free kmalloc 0xffffffff81400010 0xffff888000001000
1 alloc kmalloc 0xffffffff81100010 0xffff888000001000 64 64
0 free kmalloc 0xffffffff81400010 0xffff888000001000
SCN
"$out/kmtgen" "$cr/cpufilter" <"$cr/cpufilter.scn"
bad=""
for f in "" --cpu=0 --type=kmalloc; do
	rc=0
	"$out/kmemtrace-report" -f json $f "$cr/cpufilter" >"$cr/cpufilter$f.json" 2>&1 || rc=$?
	[ $rc -eq 0 ] || bad+=" [${f:-no filter}: exit $rc, want 0]"
	grep -q '"double free": 0,' "$cr/cpufilter$f.json" ||
		bad+=" [${f:-no filter}: $(grep '"errors"' "$cr/cpufilter$f.json" || :)]"
done
grep -q '"free of unknown pointer": 1,' "$cr/cpufilter--cpu=0.json" ||
	bad+=" [--cpu=0: the free of the allocation left out is not a free of an unknown pointer]"
if [ -z "$bad" ]; then
	t_pass "kmemtrace-report: with --cpu or --type, a free after an allocation they left out is no double free (exit 0)"
else
	t_fail "kmemtrace-report: double frees under --cpu and --type" "$bad"
	failed=1
fi

# A slab type added to the mask mid-capture: its allocations before its
# first event went unrecorded, and SLUB merges kmem_caches with kmalloc
# caches, so a pointer kfree()d before and kmem_cache_free()d after may
# have been taken in between: no double free (a free of an unknown
# pointer). One freed twice once both types are recorded is one.
cat >"$cr/widen.scn" <<'SCN'
sym 0xffffffff81100000 a_alloc
sym 0xffffffff81400000 a_free
0 alloc kmalloc 0xffffffff81100010 0xffff888000001000 64 64
0 free kmalloc 0xffffffff81400010 0xffff888000001000
0 alloc cache 0xffffffff81100020 0xffff888000002000 64 64
0 free cache 0xffffffff81400020 0xffff888000001000
0 free cache 0xffffffff81400020 0xffff888000002000
0 free cache 0xffffffff81400030 0xffff888000002000
SCN
"$out/kmtgen" "$cr/widen" <"$cr/widen.scn"
rc=0
"$out/kmemtrace-report" -f json "$cr/widen" >"$cr/widen.json" 2>&1 || rc=$?
if [ $rc -eq 1 ] && grep -q '"double free": 1, "free of unknown pointer": 1,' "$cr/widen.json"; then
	t_pass "kmemtrace-report: a free of a pointer freed before its slab type's first event is no double free; one after both types began is (exit 1)"
else
	t_fail "kmemtrace-report: double frees around a widened mask" "exit $rc: $(grep '"errors"' "$cr/widen.json" || head -c 300 "$cr/widen.json")"
	failed=1
fi

# report_errors NAME PATTERN PASS FAIL: the capture kmtgen makes of
# $cr/NAME.scn, reported as JSON, must make kmemtrace-report exit 1 (it
# found an error) and print PATTERN among its counts.
report_errors() {
	local name=$1 want=$2 rc=0
	"$out/kmtgen" "$cr/$name" <"$cr/$name.scn"
	"$out/kmemtrace-report" -f json "$cr/$name" >"$cr/$name.json" 2>&1 || rc=$?
	if [ $rc -eq 1 ] && grep -qF -- "$want" "$cr/$name.json"; then
		t_pass "$3"
	else
		t_fail "$4" "exit $rc: $(grep '"errors"' "$cr/$name.json" || head -c 300 "$cr/$name.json")"
		failed=1
	fi
}

# An allocation of the pointer as a page clears its last free as a slab
# object: a kfree() of it then is a mismatched free (a page freed as a
# slab object), not a double free.
cat >"$cr/slabpage-freed.scn" <<'SCN'
sym 0xffffffff81100000 o_alloc
sym 0xffffffff81300000 p_alloc
sym 0xffffffff81400000 o_free
0 alloc kmalloc 0xffffffff81100010 0xffff888000004000 64 64
0 free kmalloc 0xffffffff81400010 0xffff888000004000
0 alloc pages 0xffffffff81300010 0xffff888000004000 4096 4096
0 free kmalloc 0xffffffff81400010 0xffff888000004000
SCN
report_errors slabpage-freed '"mismatched free": 1, "double free": 0,' \
	"kmemtrace-report: a slab pointer freed, allocated again as a page and kfree()d is a mismatched free, not a double free" \
	"kmemtrace-report: a freed slab pointer allocated as a page"

# A large kmalloc() freed twice: kfree() records a kmalloc free, then
# the pages' free; the second kfree() is a double free, however the
# pages' free came in between.
cat >"$cr/largetwice.scn" <<'SCN'
sym 0xffffffff81300000 kmalloc_large_node
sym 0xffffffff81400000 l_alloc
sym 0xffffffff81700000 free_large_kmalloc
sym 0xffffffff81800000 l_free
1 alloc pages 0xffffffff81300010 0xffff888004000000 32768 32768
1 alloc kmalloc 0xffffffff81400010 0xffff888004000000 16385 32768
1 free kmalloc 0xffffffff81800020 0xffff888004000000
1 free pages 0xffffffff81700010 0xffff888004000000
0 free kmalloc 0xffffffff81800020 0xffff888004000000
0 free pages 0xffffffff81700010 0xffff888004000000
SCN
report_errors largetwice '"double free": 1,' \
	"kmemtrace-report: a large kmalloc() freed twice, its pages freed in between, is a double free (exit 1)" \
	"kmemtrace-report: a large kmalloc() freed twice"

# Pointers freed and allocated again are not forgotten when their
# generation goes: 600 objects freed and allocated again (live at the
# end), then 425 others freed, through the table of 1024 slots: the
# first generation is dropped, and it held only live pointers.
awk 'BEGIN {
	for (i = 0; i < 600; i++) {
		p = sprintf("0xffff8880%08x", 64 * i)
		print "0 alloc kmalloc 0xffffffff81100010 " p " 64 64"
		print "0 free kmalloc 0xffffffff81400010 " p
	}
	for (i = 0; i < 600; i++)
		print "0 alloc kmalloc 0xffffffff81100010 " sprintf("0xffff8880%08x", 64 * i) " 64 64"
	for (i = 0; i < 425; i++) {
		p = sprintf("0xffff8881%08x", 64 * i)
		print "0 alloc kmalloc 0xffffffff81100010 " p " 64 64"
		print "0 free kmalloc 0xffffffff81400010 " p
	}
}' | "$out/kmtgen" "$cr/reused"
rc=0
"$cr/report-small" -f json "$cr/reused" >"$cr/reused.json" 2>&1 || rc=$?
if [ $rc -eq 0 ] && grep -q '"freed_forgotten": 0,' "$cr/reused.json"; then
	t_pass "kmemtrace-report: freed pointers allocated again are not counted as forgotten when their generation is dropped"
else
	t_fail "kmemtrace-report: freed pointers allocated again" \
		"exit $rc: $(grep -E '"freed_forgotten"|"errors"' "$cr/reused.json" | tr '\n' ' ' || :)"
	failed=1
fi
