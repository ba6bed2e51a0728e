# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
# scripts/test-tools.d/kmemtraced.sh - kmemtraced's CPU numbers, open-file
# limit, output directory, -d, signals, data races and errors, on fake
# kmemtrace directories of regular files (mkcapture's "debugfs" case):
# kmemtraced only polls and reads them, and regular files poll ready and
# read to their end. A cpu<n> file of a CPU this machine lacks cannot be
# pinned, so its reader reads it in the final drain only, as a relay
# file of an offline CPU. Sourced by scripts/test-tools ($out, $src,
# t_pass, t_fail, failed). KMT_KMEMTRACED=PATH tests another kmemtraced
# binary and KMT_KMEMTRACED_SRC=DIR another source (for the
# ThreadSanitizer build): the ones before a change, to see a test fail.

KT=${KMT_KMEMTRACED:-$out/kmemtraced}
kt_src=${KMT_KMEMTRACED_SRC:-$src}
kt=$out/kmemtraced-t
rm -rf "$kt"
mkdir -p "$kt"
# Events of mkcapture's files: allocations of 77 bytes, frees of 46, in
# pairs (123 bytes); 25 pairs (3075 bytes) in each of cpu0 and cpu1.
"$out/mkcapture" "$kt/base" debugfs

# kt_fake DIR: a fake kmemtrace directory with no cpu<n> files.
kt_fake() {
	mkdir -p "$1"
	cp "$kt/base/abi_version" "$kt/base/stats" "$kt/base/enable" "$1/"
}

# kt_fail NAME WHY: one failure, with what kmemtraced said.
kt_fail() {
	t_fail "kmemtraced: $1" "$2"
	failed=1
}

# kt_flat FILE: FILE on one line, cut to 400 bytes, for a failure message.
kt_flat() { head -c 400 "$1" 2>/dev/null | tr '\n' ' '; }

# kt_key KEY META: the value of KEY in META, "(none)" if it has none;
# never a failing status (set -e), for a failure message.
kt_key() {
	local v
	v=$(sed -n "s/^$1 //p" "$2" 2>/dev/null) || true
	echo "${v:-(none)}"
}

# --- CPU numbers: no table of 1024 ---------------------------------------
# Four files whose numbers are unique across them: the first 13 pairs of
# mkcapture's cpu0 as cpu0, the rest as cpu1, and cpu1's split the same
# way as cpu1500 and cpu8191 (NR_CPUS is up to 8192).
d=$kt/cpunum
kt_fake "$d/dfs"
head -c 1599 "$kt/base/cpu0" >"$d/dfs/cpu0"
tail -c +1600 "$kt/base/cpu0" >"$d/dfs/cpu1"
head -c 1599 "$kt/base/cpu1" >"$d/dfs/cpu1500"
tail -c +1600 "$kt/base/cpu1" >"$d/dfs/cpu8191"
rc=0
"$KT" -q -t 0.3 -d "$d/dfs" -o "$d/cap" >"$d/out" 2>&1 || rc=$?
crc=0
"$out/kmemtrace-check" "$d/cap" >"$d/check" 2>&1 || crc=$?
why=""
[ $rc -eq 0 ] || why+=" [exit $rc]"
grep -qx 'cpu_files cpu0 cpu1 cpu1500 cpu8191' "$d/cap/meta" 2>/dev/null ||
	why+=" [meta: cpu_files $(kt_key cpu_files "$d/cap/meta")]"
for c in cpu0 cpu1 cpu1500 cpu8191; do
	cmp -s "$d/dfs/$c" "$d/cap/$c" || why+=" [$c not copied whole]"
done
grep -qx 'total: 100 events, 6150 bytes' "$d/out" || why+=" [no total of 100 events]"
[ $crc -eq 0 ] || why+=" [kmemtrace-check exit $crc: $(kt_flat "$d/check")]"
if [ -z "$why" ]; then
	t_pass "kmemtraced: cpu0, cpu1, cpu1500 and cpu8191 all captured, listed in meta, counted; the capture checks clean"
else
	kt_fail "CPU numbers from 1024" "$why $(kt_flat "$d/out")"
fi

# --- 1100 CPU files and the open-file limit -------------------------------
d=$kt/many
kt_fake "$d/dfs"
cp "$kt/base/cpu0" "$d/dfs/cpu0"
for ((i = 1; i < 1099; i++)); do : >"$d/dfs/cpu$i"; done
cp "$kt/base/cpu1" "$d/dfs/cpu1099"
# 2 descriptors per file, and the 16 kmt_want_files() keeps.
kt_need=$((2 * 1100 + 16))
kt_hard=$(ulimit -Hn)
rc=0
(ulimit -Sn 1024 && exec "$KT" -q -t 0.3 -d "$d/dfs" -o "$d/cap") >"$d/out" 2>"$d/err" || rc=$?
if [ "$kt_hard" != unlimited ] && [ "$kt_hard" -lt "$kt_need" ]; then
	# This machine's hard limit is too low: then the refusal is the answer.
	if [ $rc -eq 2 ] && grep -q "hard limit is $kt_hard (ulimit -Hn)" "$d/err"; then
		t_pass "kmemtraced: 1100 CPU files under ulimit -n 1024 and a hard limit of $kt_hard: refused, naming the limit"
	else
		kt_fail "1100 CPU files, hard limit $kt_hard" "exit $rc: $(kt_flat "$d/err")"
	fi
else
	why=""
	[ $rc -eq 0 ] || why+=" [exit $rc]"
	[ "$(grep -c '^cpu[0-9]*: ' "$d/out")" -eq 1100 ] || why+=" [not 1100 cpu lines]"
	grep -qx 'cpus 1100' "$d/cap/meta" 2>/dev/null || why+=" [meta has not cpus 1100]"
	[ "$(grep '^cpu_files ' "$d/cap/meta" 2>/dev/null | wc -w)" -eq 1101 ] ||
		why+=" [meta's cpu_files lacks some]"
	cmp -s "$d/dfs/cpu1099" "$d/cap/cpu1099" || why+=" [cpu1099 not copied]"
	grep -qx 'total: 100 events, 6150 bytes' "$d/out" || why+=" [no total of 100 events]"
	if [ -z "$why" ]; then
		t_pass "kmemtraced: 1100 CPU files (cpu0 to cpu1099) under ulimit -n 1024: the soft limit raised, every file captured and listed"
	else
		kt_fail "1100 CPU files under ulimit -n 1024" "$why $(kt_flat "$d/err")"
	fi
fi
rc=0
(ulimit -n 300 && exec "$KT" -q -t 0.3 -d "$d/dfs" -o "$d/cap300") >"$d/out300" 2>&1 || rc=$?
if [ $rc -eq 2 ] &&
   grep -q "1100 cpu<n> files need $kt_need open files, 2 per file, but the open-file hard limit is 300 (ulimit -Hn)" "$d/out300" &&
   [ ! -e "$d/cap300" ]; then
	t_pass "kmemtraced: 1100 CPU files under a hard limit of 300: refused at the start, naming the limit and the $kt_need files needed, exit 2, no directory left"
else
	kt_fail "1100 CPU files, ulimit -Hn 300" "exit $rc: $(kt_flat "$d/out300")$([ -e "$d/cap300" ] && echo ' [left '"$d"'/cap300]')"
fi

# A CPU that comes online when the limit is reached: its file is not
# captured, it says which, the capture still ends with its meta, exit 2.
d=$kt/hotfd
kt_fake "$d/dfs"
cp "$kt/base/cpu0" "$kt/base/cpu1" "$d/dfs/"
(ulimit -n 40 && exec "$KT" -q -t 2.5 -d "$d/dfs" -o "$d/cap") >"$d/out" 2>"$d/err" &
kt_pid=$!
for _ in $(seq 50); do [ -e "$d/cap/meta" ] && break; sleep 0.1; done
for ((i = 2; i < 32; i++)); do cp "$kt/base/cpu1" "$d/dfs/cpu$i"; done
rc=0
wait $kt_pid || rc=$?
kt_listed=$(($(grep '^cpu_files ' "$d/cap/meta" 2>/dev/null | wc -w || true) - 1))
kt_missed=$(grep -c '^kmemtraced: cpu[0-9]*: not captured: Too many open files (the open-file limit, ulimit -n, is 40)$' "$d/err" || true)
# The same CPUs, in CPU order, in meta's missed_cpus.
kt_said=$(sed -n 's/^kmemtraced: \(cpu[0-9]*\): not captured: .*/\1/p' "$d/err" | tr '\n' ' ' || true)
kt_mcpus=$(kt_key missed_cpus "$d/cap/meta")
if [ $rc -eq 2 ] && grep -qx 'finished 1' "$d/cap/meta" && [ "$kt_missed" -gt 0 ] &&
   [ $((kt_listed + kt_missed)) -eq 32 ] && grep -q '^total: ' "$d/out" &&
   [ "$kt_mcpus " = "$kt_said" ]; then
	t_pass "kmemtraced: 30 CPU files appearing under ulimit -n 40: $kt_listed captured, the $kt_missed others named as not captured and in meta's missed_cpus, meta finished, exit 2"
else
	kt_fail "CPU files appearing past the open-file limit" "exit $rc, $kt_listed listed, $kt_missed named [$kt_said], missed_cpus [$kt_mcpus]: $(kt_flat "$d/err")"
fi

# The reviewer's case: with -e, a CPU that comes online (its events
# numbered in stats) when its file no longer fits under ulimit -n 19
# (cpu0 takes 2 + 16): meta must not say complete 1, which would make
# kmemtrace-check call the capture corrupt, and must name cpu1.
d=$kt/hotmiss
kt_fake "$d/dfs"
sed -i 's/^events .*/events 0/' "$d/dfs/stats"
: >"$d/dfs/cpu0"
(ulimit -n 19 && exec "$KT" -q -e -t 2.5 -d "$d/dfs" -o "$d/cap") >"$d/out" 2>"$d/err" &
kt_pid=$!
for _ in $(seq 50); do [ -e "$d/cap/meta" ] && break; sleep 0.1; done
sleep 0.2
cp "$kt/base/stats" "$d/dfs/stats"
cp "$kt/base/cpu1" "$d/dfs/cpu1"
rc=0
wait $kt_pid || rc=$?
crc=0
"$out/kmemtrace-check" "$d/cap" >"$d/check" 2>&1 || crc=$?
why=""
[ $rc -eq 2 ] || why+=" [exit $rc]"
grep -qx 'kmemtraced: cpu1: not captured: Too many open files (the open-file limit, ulimit -n, is 19)' "$d/err" ||
	why+=" [cpu1 not said to be not captured]"
grep -qx 'finished 1' "$d/cap/meta" 2>/dev/null || why+=" [meta not finished]"
grep -qx 'complete 0' "$d/cap/meta" 2>/dev/null ||
	why+=" [meta: complete $(kt_key complete "$d/cap/meta")]"
grep -qx 'missed_cpus cpu1' "$d/cap/meta" 2>/dev/null ||
	why+=" [meta: missed_cpus $(kt_key missed_cpus "$d/cap/meta")]"
grep -qx 'cpu_files cpu0' "$d/cap/meta" 2>/dev/null ||
	why+=" [meta: cpu_files $(kt_key cpu_files "$d/cap/meta")]"
[ "$(cat "$d/dfs/enable")" = 0 ] || why+=" [tracing left on]"
[ $crc -ne 3 ] || why+=" [kmemtrace-check calls it corrupt: $(kt_flat "$d/check")]"
if [ -z "$why" ]; then
	t_pass "kmemtraced -e: cpu1 appearing past ulimit -n 19: said not captured, meta says complete 0 and missed_cpus cpu1, kmemtrace-check does not call it corrupt (exit $crc), exit 2"
else
	kt_fail "-e and a CPU file not captured" "$why $(kt_flat "$d/err")"
fi

# --- -o DIR: empty or new ------------------------------------------------
# A refusal at the start (a CPU file that cannot be opened) after other
# CPU files' copies were made: a new DIR is removed, an empty one left
# empty. The bad file must not come first in readdir's order (then
# nothing would be made before the refusal): find gives that order.
d=$kt/refuse
kt_fake "$d/dfs"
for ((i = 0; i <= 12; i++)); do cp "$kt/base/cpu0" "$d/dfs/cpu$i"; done
kt_first=$(find "$d/dfs" -mindepth 1 -name 'cpu*' -printf '%f' -quit)
kt_bad=cpu1
[ "$kt_first" != cpu1 ] || kt_bad=cpu2
rm "$d/dfs/$kt_bad"
ln -s /nonexistent "$d/dfs/$kt_bad"
why=""
[ "$(find "$d/dfs" -mindepth 1 -name 'cpu*' -printf '%f' -quit)" != "$kt_bad" ] || why+=" [setup: $kt_bad first in readdir order]"
rc=0
"$KT" -q -t 0.3 -d "$d/dfs" -o "$d/new" >"$d/new.out" 2>&1 || rc=$?
[ $rc -eq 2 ] || why+=" [new DIR: exit $rc]"
grep -qx "kmemtraced: $d/dfs/$kt_bad: No such file or directory" "$d/new.out" ||
	why+=" [new DIR: $(kt_flat "$d/new.out")]"
[ ! -e "$d/new" ] || why+=" [new DIR left: $(find "$d/new" -mindepth 1 -printf '%f ')]"
mkdir "$d/empty"
rc=0
"$KT" -q -t 0.3 -d "$d/dfs" -o "$d/empty" >"$d/empty.out" 2>&1 || rc=$?
[ $rc -eq 2 ] || why+=" [empty DIR: exit $rc]"
kt_files=$(find "$d/empty" -mindepth 1 -printf '%f ' 2>&1 || true)
[ -d "$d/empty" ] && [ -z "$kt_files" ] || why+=" [empty DIR not left empty: $kt_files]"
if [ -z "$why" ]; then
	t_pass "kmemtraced: $kt_bad -> /nonexistent among cpu0..cpu12: refused at the start, exit 2; a new -o DIR removed, an empty one left empty"
else
	kt_fail "refusal at the start leaves files" "$why"
fi

d=$kt/outdir
mkdir -p "$d/full"
echo precious >"$d/full/cpu0"
rc=0
"$KT" -q -t 0.3 -d "$kt/base" -o "$d/full" >"$d/full.out" 2>&1 || rc=$?
why=""
[ $rc -eq 2 ] || why+=" [exit $rc]"
grep -qx "kmemtraced: $d/full is not empty (the output directory must be empty or new)" "$d/full.out" ||
	why+=" [message]"
echo precious | cmp -s - "$d/full/cpu0" || why+=" [cpu0 overwritten]"
kt_files=$(find "$d/full" -mindepth 1 -printf '%f ')
[ "$kt_files" = "cpu0 " ] || why+=" [wrote: $kt_files]"
mkdir -p "$d/empty"
rc=0
"$KT" -q -t 0.3 -d "$kt/base" -o "$d/empty" >"$d/empty.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || why+=" [empty directory: exit $rc: $(kt_flat "$d/empty.out")]"
grep -qx 'finished 1' "$d/empty/meta" 2>/dev/null || why+=" [empty directory: no finished meta]"
cmp -s "$kt/base/cpu1" "$d/empty/cpu1" || why+=" [empty directory: cpu1 not copied]"
rc=0
"$KT" -q -t 0.3 -d "$kt/base" -o "$d/new" >"$d/new.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || why+=" [new directory: exit $rc: $(kt_flat "$d/new.out")]"
grep -qx 'finished 1' "$d/new/meta" 2>/dev/null || why+=" [new directory: no finished meta]"
: >"$d/file"
rc=0
"$KT" -q -t 0.3 -d "$kt/base" -o "$d/file" >"$d/file.out" 2>&1 || rc=$?
[ $rc -eq 2 ] || why+=" [a regular file: exit $rc]"
grep -q "$d/file: Not a directory" "$d/file.out" || why+=" [a regular file: $(kt_flat "$d/file.out")]"
# The rule in the same words in --help, the man page and the refusal.
"$KT" --help | grep -q 'the output directory must be empty or new' || why+=" [--help]"
grep -q 'the output directory must be empty or new' "$src/man/kmemtraced.8" || why+=" [man page]"
if [ -z "$why" ]; then
	t_pass "kmemtraced -o: a directory holding a file refused (exit 2, nothing written); an empty one and a new one used; the same rule in --help, man page and message"
else
	kt_fail "-o DIR must be empty or new" "$why $(kt_flat "$d/full.out")"
fi

# --- -d: the kmemtrace directory, or the debugfs mount holding it --------
d=$kt/ddir
mkdir -p "$d/debug"
cp -r "$kt/base" "$d/debug/kmemtrace"
why=""
for kt_arg in "$d/debug" "$d/debug/kmemtrace"; do
	rc=0
	rm -rf "$d/cap"
	"$KT" -q -t 0.3 -d "$kt_arg" -o "$d/cap" >"$d/out" 2>&1 || rc=$?
	[ $rc -eq 0 ] || why+=" [-d $kt_arg: exit $rc]"
	grep -qx 'total: 100 events, 6150 bytes' "$d/out" || why+=" [-d $kt_arg: $(kt_flat "$d/out")]"
done
rc=0
"$KT" -q -t 0.3 -d "$d" -o "$d/cap2" >"$d/out2" 2>&1 || rc=$?
[ $rc -eq 2 ] || why+=" [-d with neither: exit $rc]"
grep -q "$d/abi_version: No such file or directory (-d names the kmemtrace directory or the debugfs mount point that holds it" "$d/out2" ||
	why+=" [-d with neither: $(kt_flat "$d/out2")]"
"$KT" --help | grep -q -- '-d, --dir=KMEMTRACE_DIR' || why+=" [--help does not say KMEMTRACE_DIR]"
grep -q 'KMEMTRACE_DIR' "$src/man/kmemtraced.8" || why+=" [man page does not say KMEMTRACE_DIR]"
if [ -z "$why" ]; then
	t_pass "kmemtraced -d: the kmemtrace directory and the debugfs mount point holding it both work; neither: exit 2, saying what -d names"
else
	kt_fail "-d KMEMTRACE_DIR or the debugfs mount point" "$why"
fi

# --- data races: ThreadSanitizer on a capture -----------------------------
d=$kt/tsan
mkdir -p "$d"
if ! gcc -O1 -g -fsanitize=thread -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE \
	-I"$KTREE/tools/include" -isystem "$KOBJ/usr/include" -o "$d/kmemtraced" \
	"$kt_src/kmemtraced.c" -pthread >"$d/build.log" 2>&1; then
	kt_fail "ThreadSanitizer build" "$(kt_flat "$d/build.log")"
else
	rc=0
	"$d/kmemtraced" -q -t 0.5 -d "$kt/base" -o "$d/cap" >"$d/out" 2>&1 || rc=$?
	if [ $rc -eq 0 ] && ! grep -q 'ThreadSanitizer' "$d/out" &&
	   grep -qx 'total: 100 events, 6150 bytes' "$d/out"; then
		t_pass "kmemtraced built with -fsanitize=thread: a capture with readers counting while the main thread sums, no data race reported"
	else
		kt_fail "ThreadSanitizer" "exit $rc: $(grep -m3 -A3 'WARNING' "$d/out" | tr '\n' ' ' | head -c 600)"
	fi
fi

# --- signals --------------------------------------------------------------
# A first SIGINT: the capture drains and ends as with -t, checkable.
d=$kt/sigint
kt_fake "$d/dfs"
cp "$kt/base/cpu0" "$kt/base/cpu1" "$d/dfs/"
"$KT" -q -d "$d/dfs" -o "$d/cap" >"$d/out" 2>&1 &
kt_pid=$!
for _ in $(seq 50); do [ -e "$d/cap/meta" ] && break; sleep 0.1; done
sleep 0.3
kill -INT $kt_pid
rc=0
wait $kt_pid || rc=$?
crc=0
"$out/kmemtrace-check" "$d/cap" >"$d/check" 2>&1 || crc=$?
if [ $rc -eq 0 ] && grep -qx 'finished 1' "$d/cap/meta" && [ $crc -eq 0 ] &&
   grep -qx 'total: 100 events, 6150 bytes' "$d/out"; then
	t_pass "kmemtraced: a first SIGINT drains and stops: exit 0, meta finished, the capture checks clean"
else
	kt_fail "first SIGINT" "exit $rc, check $crc: $(kt_flat "$d/out")"
fi
# A second one ends it at once: a cpu<n> FIFO that is held open but never
# written makes the drain wait for ever (relay's read() returns 0 when
# empty; a FIFO's blocks), so only the second signal can end it.
d=$kt/sigint2
kt_fake "$d/dfs"
cp "$kt/base/cpu0" "$d/dfs/"
mkfifo "$d/dfs/cpu7"
exec {kt_fifo}<>"$d/dfs/cpu7"
"$KT" -q -d "$d/dfs" -o "$d/cap" >"$d/out" 2>&1 {kt_fifo}>&- &
kt_pid=$!
for _ in $(seq 50); do [ -e "$d/cap/meta" ] && break; sleep 0.1; done
sleep 0.3
kill -INT $kt_pid
sleep 1
kt_draining=0
kill -0 $kt_pid 2>/dev/null && kt_draining=1
kill -INT $kt_pid 2>/dev/null
for _ in $(seq 30); do kill -0 $kt_pid 2>/dev/null || break; sleep 0.1; done
kt_alive=0
if kill -0 $kt_pid 2>/dev/null; then
	kt_alive=1
	kill -KILL $kt_pid
fi
rc=0
wait $kt_pid || rc=$?
exec {kt_fifo}>&-
if [ $kt_draining -eq 1 ] && [ $kt_alive -eq 0 ] && [ $rc -eq 130 ] &&
   grep -qx 'finished 0' "$d/cap/meta"; then
	t_pass "kmemtraced: a second SIGINT during a drain that cannot end ends it at once (killed by SIGINT); meta says finished 0"
else
	kt_fail "second SIGINT" "draining after the first: $kt_draining, alive 3 s after the second: $kt_alive, exit $rc"
fi

# A hangup (the terminal or ssh session gone) is a stop signal too: with
# -e, tracing is turned off and the capture ends whole, exit 0.
d=$kt/sighup
kt_fake "$d/dfs"
cp "$kt/base/cpu0" "$kt/base/cpu1" "$d/dfs/"
# SIGHUP back to its default for kmemtraced: under nohup (a CI runner's,
# say) it is ignored here, and kmemtraced keeps a hangup ignored at its
# start (tested below), so the hangup would never come.
env --default-signal=HUP "$KT" -q -e -d "$d/dfs" -o "$d/cap" >"$d/out" 2>&1 &
kt_pid=$!
for _ in $(seq 50); do [ -e "$d/cap/meta" ] && break; sleep 0.1; done
sleep 0.3
kill -HUP $kt_pid
# Bounded: a hangup that does not end the capture fails the test, not
# the whole run.
for _ in $(seq 100); do kill -0 $kt_pid 2>/dev/null || break; sleep 0.1; done
why=""
if kill -0 $kt_pid 2>/dev/null; then
	kill -KILL $kt_pid
	why+=" [still running 10 s after SIGHUP]"
fi
rc=0
wait $kt_pid || rc=$?
[ $rc -eq 0 ] || why+=" [exit $rc]"
[ "$(cat "$d/dfs/enable")" = 0 ] || why+=" [tracing left on]"
grep -qx 'finished 1' "$d/cap/meta" 2>/dev/null || why+=" [meta not finished]"
grep -qx 'complete 1' "$d/cap/meta" 2>/dev/null || why+=" [meta not complete]"
grep -qx 'total: 100 events, 6150 bytes' "$d/out" || why+=" [$(kt_flat "$d/out")]"
# Under nohup (SIGHUP ignored at the start) it stays ignored: a hangup
# neither stops nor kills the capture, which ends at -t.
rm -rf "$d/cap2"
(trap '' HUP && exec "$KT" -q -e -t 1.5 -d "$d/dfs" -o "$d/cap2") >"$d/out2" 2>&1 &
kt_pid=$!
for _ in $(seq 50); do [ -e "$d/cap2/meta" ] && break; sleep 0.1; done
sleep 0.2
kill -HUP $kt_pid
sleep 0.3
kill -0 $kt_pid 2>/dev/null || why+=" [nohup: gone after SIGHUP]"
grep -qx 'finished 0' "$d/cap2/meta" 2>/dev/null || why+=" [nohup: stopped by SIGHUP]"
rc=0
wait $kt_pid || rc=$?
[ $rc -eq 0 ] || why+=" [nohup: exit $rc]"
grep -qx 'finished 1' "$d/cap2/meta" 2>/dev/null || why+=" [nohup: meta not finished]"
grep -qx 'complete 1' "$d/cap2/meta" 2>/dev/null || why+=" [nohup: meta not complete]"
[ "$(cat "$d/dfs/enable")" = 0 ] || why+=" [nohup: tracing left on]"
"$KT" --help | grep -q 'SIGHUP' || why+=" [--help does not say SIGHUP]"
grep -q 'SIGHUP' "$src/man/kmemtraced.8" || why+=" [man page does not say SIGHUP]"
if [ -z "$why" ]; then
	t_pass "kmemtraced -e: SIGHUP drains and stops like SIGTERM, tracing turned off, meta complete, exit 0; under nohup a SIGHUP stays ignored"
else
	kt_fail "SIGHUP" "$why"
fi

# --- the command line -----------------------------------------------------
d=$kt/cli
mkdir -p "$d"
why=""
rc=0
"$KT" --help >"$d/help" 2>"$d/help.err" || rc=$?
[ $rc -eq 0 ] || why+=" [--help: exit $rc]"
[ ! -s "$d/help.err" ] || why+=" [--help: on stderr: $(kt_flat "$d/help.err")]"
grep -q '^usage: kmemtraced ' "$d/help" || why+=" [--help: no usage line on stdout]"
grep -q '^Exit status: 0 done, 1 the data has a problem (events were lost),$' "$d/help" ||
	why+=" [--help: no exit-status line 1]"
grep -q '^2 bad usage or an I/O error, 3 corrupt input.$' "$d/help" ||
	why+=" [--help: no exit-status line 2]"
for kt_v in --version -V; do
	rc=0
	"$KT" "$kt_v" >"$d/version" 2>&1 || rc=$?
	[ $rc -eq 0 ] || why+=" [$kt_v: exit $rc]"
	grep -q '^kmemtraced (kmemtrace tools) ' "$d/version" || why+=" [$kt_v: $(kt_flat "$d/version")]"
	grep -qx 'kmemtrace ABI [0-9]*' "$d/version" || why+=" [$kt_v: no ABI line]"
done
rc=0
"$KT" --bogus >"$d/bad.out" 2>"$d/bad.err" || rc=$?
[ $rc -eq 2 ] || why+=" [--bogus: exit $rc]"
[ ! -s "$d/bad.out" ] || why+=" [--bogus: on stdout: $(kt_flat "$d/bad.out")]"
grep -q '^usage: kmemtraced ' "$d/bad.err" || why+=" [--bogus: no help on stderr]"
if [ -z "$why" ]; then
	t_pass "kmemtraced: --help (stdout, exit 0, the common exit-status lines), --version and -V (exit 0, the ABI), an unknown option (help on stderr, exit 2)"
else
	kt_fail "command line" "$why"
fi

# --- errors that must not be silent or mislead -----------------------------
# The final drain with tracing still on reads at most a buffer's worth
# (stats: 4 x 4096), but never stops half-way through an event: the rest
# is in the buffer. One 300 KiB file of a CPU this machine lacks, read
# in the drain only: the first read of 256 KiB ends inside an event.
d=$kt/drainlimit
kt_fake "$d/dfs"
echo 1 >"$d/dfs/enable"
for ((i = 0; i < 100; i++)); do cat "$kt/base/cpu0"; done >"$d/big"
cp "$d/big" "$d/dfs/cpu1000"
rc=0
"$KT" -q -t 0.3 -d "$d/dfs" -o "$d/cap" >"$d/out" 2>&1 || rc=$?
kt_ev=$(sed -n 's/^cpu1000: \([0-9]*\) events, \([0-9]*\) bytes.*/\1/p' "$d/out")
kt_by=$(stat -c %s "$d/cap/cpu1000" 2>/dev/null || echo 0)
# Whole events: pairs of 123 bytes, and an allocation of 77 if odd.
kt_pairs=$((${kt_ev:-0} / 2))
# The limit is 16384 bytes: past it, no more than the rest of one event
# (at most 65535 bytes), and less than the whole file.
if [ $rc -eq 0 ] && [ -n "$kt_ev" ] && [ "$kt_by" -gt 16384 ] &&
   [ "$kt_by" -lt "$(stat -c %s "$d/big")" ] && [ "$kt_by" -le $((16384 + 65535)) ] &&
   [ "$kt_by" -eq $((kt_pairs * 123 + kt_ev % 2 * 77)) ] &&
   cmp -s -n "$kt_by" "$d/big" "$d/cap/cpu1000" && ! grep -q unfinished "$d/out"; then
	t_pass "kmemtraced: a drain with tracing on stops at its limit of 16384 bytes on an event boundary, within an event of it ($kt_ev whole events, $kt_by bytes), exit 0"
else
	kt_fail "drain limit inside an event" "exit $rc, $kt_ev events in $kt_by bytes: $(kt_flat "$d/out")"
fi

# Past RLIMIT_FSIZE: a write error named, exit 2 (not killed by SIGXFSZ).
d=$kt/fsize
kt_fake "$d/dfs"
cp "$kt/drainlimit/big" "$d/dfs/cpu0"
rc=0
(ulimit -f 64 && exec "$KT" -q -t 0.3 -d "$d/dfs" -o "$d/cap") >"$d/out" 2>&1 || rc=$?
if [ $rc -eq 2 ] && grep -q "^kmemtraced: writing $d/cap/cpu0: File too large; the capture ends here$" "$d/out" &&
   grep -qx 'end_reason write_error' "$d/cap/meta" && grep -qx 'cut_file cpu0' "$d/cap/meta" &&
   grep -qx "cut_at $(stat -c %s "$d/cap/cpu0")" "$d/cap/meta" &&
   grep -qx 'cut_error File too large' "$d/cap/meta" && grep -qx 'finished 1' "$d/cap/meta" &&
   grep -qx 'cut_seq 100' "$d/cap/meta" && grep -qx 'cut_lost_events 0' "$d/cap/meta" &&
   grep -q '^cut short: writing cpu0 failed after [0-9]* bytes (File too large); what came after is lost$' "$d/out"; then
	t_pass "kmemtraced: a CPU file past ulimit -f: 'writing DIR/cpu0: File too large', the capture ends there, meta says where and why, exit 2"
else
	kt_fail "write past ulimit -f" "exit $rc: $(kt_flat "$d/out")"
fi

# Another reader of a CPU file (the kernel's reader file, a line per
# file open): refused before anything is made, naming the opener of the
# first file listed; tracing (enable 0 here) left alone, -e or not.
d=$kt/busy
kt_fake "$d/dfs"
cp "$kt/base/cpu0" "$kt/base/cpu1" "$d/dfs/"
printf '0 4242 other tool\n1 4243 kmemtraced\n' >"$d/dfs/reader"
kt_why=""
for kt_e in "" -e; do
	rc=0
	"$KT" -q $kt_e -t 0.3 -d "$d/dfs" -o "$d/cap" >"$d/out" 2>&1 || rc=$?
	[ $rc -eq 2 ] || kt_why+="${kt_e:-no -e}: exit $rc; "
	grep -qx "kmemtraced: $d/dfs: its cpu<n> files are being read by pid 4242 (other tool): one capture at a time" "$d/out" ||
		kt_why+="${kt_e:-no -e}: said $(kt_flat "$d/out"); "
	[ ! -e "$d/cap" ] || kt_why+="${kt_e:-no -e}: made $d/cap; "
	grep -qx 0 "$d/dfs/enable" || kt_why+="${kt_e:-no -e}: enable now $(cat "$d/dfs/enable"); "
	rm -rf "$d/cap"
done
# Empty: nobody reads; the capture runs.
: >"$d/dfs/reader"
rc=0
"$KT" -q -t 0.3 -d "$d/dfs" -o "$d/cap" >"$d/out" 2>&1 || rc=$?
[ $rc -eq 0 ] || kt_why+="empty reader file: exit $rc: $(kt_flat "$d/out"); "
if [ -z "$kt_why" ]; then
	t_pass "kmemtraced: a CPU file another process reads: refused before anything is made, naming its pid and name, tracing untouched, exit 2; an empty reader file admits it"
else
	kt_fail "another reader" "$kt_why"
fi

# Standard output that cannot be written: the summary is lost, exit 2.
d=$kt/stdout
rc=0
"$KT" -q -t 0.3 -d "$kt/base" -o "$d" >/dev/full 2>"$d.err" || rc=$?
if [ $rc -eq 2 ] && grep -q 'writing standard output: No space left on device' "$d.err"; then
	t_pass "kmemtraced: a summary that cannot be written (stdout /dev/full): said, exit 2"
else
	kt_fail "stdout /dev/full" "exit $rc: $(kt_flat "$d.err")"
fi

# -e and still no cpu<n> files: the message does not say to use -e.
d=$kt/nofiles
kt_fake "$d/dfs"
rc=0
"$KT" -q -e -t 0.3 -d "$d/dfs" -o "$d/cap" >"$d/out" 2>&1 || rc=$?
if [ $rc -eq 2 ] && grep -q 'no cpu<n> files: tracing is on, but the kernel made no buffers' "$d/out" &&
   ! grep -q -- '-e turns it on' "$d/out" && [ "$(cat "$d/dfs/enable")" = 0 ]; then
	t_pass "kmemtraced -e with no cpu<n> files: says tracing is on but made no buffers, turns tracing off again, exit 2"
else
	kt_fail "-e and no cpu<n> files" "exit $rc, enable $(cat "$d/dfs/enable"): $(kt_flat "$d/out")"
fi

# --- The letters: one language with the other tools -----------------------
# -m SIZE (--bytes) stops after SIZE bytes: -m is the byte limit in
# kmonlog too. The old -b still works in this release, saying once on
# standard error that it is now -m, and changes nothing else: the same
# capture and exit status. A cpu0 of 307500 bytes (100 copies of
# mkcapture's), read whole at once; -m 1k stops within 10 ms, long
# before -t 30. Standard error apart from the summary (-q: nothing else).
d=$kt/letters
kt_fake "$d/dfs"
cp "$kt/drainlimit/big" "$d/dfs/cpu0"
kt_warn_b='kmemtraced: -b is now -m (stop after SIZE bytes); -b will mean a buffer size'
# kt_letter NAME STDERR ARGS...: kmemtraced -q -t 30 ARGS into $d/NAME
# stops after 1 KiB: exit 0, cpu0 copied whole, meta's seconds under 10,
# standard error exactly STDERR. Reasons in kt_why.
kt_letter() {
	local name=$1 err=$2 rc=0 s
	shift 2
	"$KT" -q -t 30 "$@" -d "$d/dfs" -o "$d/$name" >"$d/$name.out" 2>"$d/$name.err" || rc=$?
	[ $rc -eq 0 ] || kt_why+=" [$name: exit $rc (want 0)]"
	cmp -s "$d/dfs/cpu0" "$d/$name/cpu0" || kt_why+=" [$name: cpu0 not copied whole]"
	s=$(kt_key seconds "$d/$name/meta")
	awk -v s="$s" 'BEGIN { exit !(s + 0 < 10 && s != "(none)") }' ||
		kt_why+=" [$name: seconds $s in meta: not stopped by the byte limit]"
	[ "$(cat "$d/$name.err")" = "$err" ] ||
		kt_why+=" [$name: standard error '$(kt_flat "$d/$name.err")' (want '$err')]"
}
kt_why=""
kt_letter m "" -m 1k
kt_letter bytes "" --bytes=1k
if [ -z "$kt_why" ]; then
	t_pass "kmemtraced: -m 1k and --bytes=1k stop after 1 KiB (long before -t 30), cpu0 whole, exit 0, no warning"
else
	kt_fail "-m, --bytes" "$kt_why"
fi
kt_why=""
kt_letter b "$kt_warn_b" -b 1k
kt_letter bb "$kt_warn_b" -b 1k -b 2k
cmp -s "$d/m.out" "$d/b.out" || kt_why+=" [-b: summary not the one of -m: $(kt_flat "$d/b.out")]"
# A bad size: the warning, then the error of -m, exit 2.
rc=0
"$KT" -b 0 >"$d/b0.out" 2>"$d/b0.err" || rc=$?
[ $rc -eq 2 ] || kt_why+=" [-b 0: exit $rc (want 2)]"
[ "$(head -n 2 "$d/b0.err")" = "$kt_warn_b"$'\n''kmemtraced: -m 0: not a size (N, Nk, NM, NG)' ] ||
	kt_why+=" [-b 0: standard error '$(kt_flat "$d/b0.err")']"
if [ -z "$kt_why" ]; then
	t_pass "kmemtraced: the old -b still works as -m (the same capture, exit 0; -b 0 exit 2 as -m 0), with one warning naming -m, once even when given twice"
else
	kt_fail "the old -b" "$kt_why"
fi
