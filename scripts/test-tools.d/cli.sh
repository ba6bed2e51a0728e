# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
# scripts/test-tools.d/cli.sh - one command-line language: across the six
# tools a short letter has one meaning. Every "-X, --long" pair of every
# tool's --help is collected; a letter that two tools give to different
# long options fails, unless the two are named as the same thing below.
# Also: each short letter a tool's --help lists is accepted by the tool.
# Sourced by scripts/test-tools ($out, t_pass, t_fail, failed).

cl=$out/cli
rm -rf "$cl"
mkdir -p "$cl"
# The same meaning under two long names: the seed's kmonlog spells its
# options its own way (a device where kmemtraced has a directory, a
# time in milliseconds where kmemtraced's is in seconds).
cli_same() {
	case "$1:$2" in
	time:time-ms|time-ms:time|dir:device|device:dir) return 0 ;;
	esac
	[ "$1" = "$2" ]
}

bad=""
: >"$cl/pairs"
for t in kmemtraced kmemtrace-check kmemtrace-report kmonlog kmonparse ktrdump; do
	if ! "$out/$t" --help >"$cl/$t.help" 2>"$cl/$t.err"; then
		bad+=" [$t --help: exit not 0]"
		continue
	fi
	{ grep -oE '^ +-[A-Za-z], --[a-z-]+' "$cl/$t.help" || :; } |
		sed -E "s/^ +-(.), --(.*)/\1 \2 $t/" >"$cl/$t.pairs"
	[ -s "$cl/$t.pairs" ] || bad+=" [$t --help: no -X, --long lines]"
	cat "$cl/$t.pairs" >>"$cl/pairs"
	dup=$(cut -d' ' -f1 "$cl/$t.pairs" | sort | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || bad+=" [$t: letters listed twice: $dup]"
done
# Every pair of tools that share a letter.
while read -r l1 o1 t1; do
	while read -r l2 o2 t2; do
		if [ "$l1" = "$l2" ] && [[ "$t1" < "$t2" ]] && ! cli_same "$o1" "$o2"; then
			bad+=" [-$l1: --$o1 in $t1, --$o2 in $t2]"
		fi
	done <"$cl/pairs"
done <"$cl/pairs"
if [ -z "$bad" ]; then
	t_pass "the tools' letters: $(cut -d' ' -f1 "$cl/pairs" | sort -u | wc -l) letters in $(wc -l <"$cl/pairs") options, one meaning each"
else
	t_fail "the tools' letters: one meaning each" "$bad"
	failed=1
fi

# Each listed letter is one getopt takes: "-X" alone is then a missing
# argument or a use, never "invalid option".
bad=""
while read -r l o t; do
	case "$l" in h|V) continue ;; esac
	# Options without an argument may start the tool: timeout stops it,
	# and what it writes lands in $cl.
	(cd "$cl" && timeout -k 1 2 "$out/$t" "-$l" </dev/null >/dev/null 2>"$cl/$t-$l.err") || true
	! grep -q 'invalid option' "$cl/$t-$l.err" || bad+=" [$t -$l (--$o): invalid option]"
done <"$cl/pairs"
if [ -z "$bad" ]; then
	t_pass "the tools' letters: each one --help lists is an option the tool takes"
else
	t_fail "the tools' letters: accepted" "$bad"
	failed=1
fi

# The letters given up: -n (--nice) in kmemtraced and kmonlog, -s
# (--sort) in kmemtrace-report. Each still works this release, as its
# long option, with one warning line that names it.
bad=""
for t in kmemtraced kmonlog; do
	w="$t: -n is now --nice; -n will be a count"
	rc=0
	"$out/$t" -n 19 -n 19 --help >"$cl/$t-n.out" 2>"$cl/$t-n.err" || rc=$?
	[ $rc -eq 0 ] || bad+=" [$t -n 19 --help: exit $rc]"
	[ "$(cat "$cl/$t-n.err")" = "$w" ] ||
		bad+=" [$t -n 19 -n 19: standard error '$(tr '\n' '|' <"$cl/$t-n.err")', want '$w' once]"
	rc=0
	"$out/$t" -n 20 >"$cl/$t-n20.out" 2>"$cl/$t-n20.err" || rc=$?
	[ $rc -eq 2 ] || bad+=" [$t -n 20: exit $rc, want 2]"
	[ "$(head -n 2 "$cl/$t-n20.err")" = "$w"$'\n'"$t: --nice=20: not a nice value from -20 to 19" ] ||
		bad+=" [$t -n 20: '$(head -n 2 "$cl/$t-n20.err" | tr '\n' '|')']"
	grep -q -- '^  -n, ' "$cl/$t.help" && bad+=" [$t --help still lists -n]"
done
w="kmemtrace-report: -s is now --sort; -s will be a time scale"
rc=0
"$out/kmemtrace-report" --sort=hits -f csv "$out/clean" >"$cl/sort-long.out" 2>"$cl/sort-long.err" || rc=$?
rc2=0
"$out/kmemtrace-report" -s hits -f csv -s hits "$out/clean" >"$cl/sort-s.out" 2>"$cl/sort-s.err" || rc2=$?
if [ $rc -ne 0 ] || [ $rc2 -ne 0 ]; then
	bad+=" [report --sort=hits: exit $rc, -s hits: exit $rc2]"
fi
if [ ! -s "$cl/sort-long.out" ] || ! cmp -s "$cl/sort-long.out" "$cl/sort-s.out"; then
	bad+=" [report -s hits: not the report of --sort=hits]"
fi
[ ! -s "$cl/sort-long.err" ] || bad+=" [report --sort=hits: standard error '$(head -c 200 "$cl/sort-long.err")']"
[ "$(cat "$cl/sort-s.err")" = "$w" ] ||
	bad+=" [report -s hits -s hits: standard error '$(tr '\n' '|' <"$cl/sort-s.err")', want '$w' once]"
rc=0
"$out/kmemtrace-report" -s size "$out/clean" >/dev/null 2>"$cl/sort-bad.err" || rc=$?
if [ $rc -ne 2 ] ||
	[ "$(head -n 2 "$cl/sort-bad.err")" != "$w"$'\n'"kmemtrace-report: --sort=size: not a sort key" ]; then
	bad+=" [report -s size: exit $rc, '$(head -n 2 "$cl/sort-bad.err" | tr '\n' '|')']"
fi
grep -q -- '^  -s, ' "$cl/kmemtrace-report.help" && bad+=" [kmemtrace-report --help still lists -s]"
if [ -z "$bad" ]; then
	t_pass "the letters given up: kmemtraced and kmonlog -n, kmemtrace-report -s still work as --nice and --sort, with one warning each"
else
	t_fail "the letters given up: -n and -s" "$bad"
	failed=1
fi
