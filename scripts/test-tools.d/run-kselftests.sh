# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
# scripts/test-tools.d/run-kselftests.sh - scripts/run-kselftests exits
# with what the TAP says: runners that print a passing run, a failed
# case, a failed program, a crash before a program's result, an unmet
# plan, a skip and a failing runner, each under busybox sh (the guest's)
# and the host's sh; a program of two TAP streams adds their plans; TODO
# and SKIP directives; programs without cases of their own.
# Sourced by scripts/test-tools ($out, t_pass, t_fail, failed).

rk=$out/run-kselftests
rm -rf "$rk"
mkdir -p "$rk"
runner=$(dirname "${BASH_SOURCE[0]}")/../run-kselftests

# rk_tree NAME RC: a kselftest tree whose run_kselftest.sh prints
# $rk/NAME.tap and exits RC.
rk_tree() {
	mkdir -p "$rk/$1"
	printf '#!/bin/sh\ncat "%s"\nexit %s\n' "$rk/$1.tap" "$2" >"$rk/$1/run_kselftest.sh"
	chmod +x "$rk/$1/run_kselftest.sh"
}

cat >"$rk/good.tap" <<'EOF'
TAP version 13
1..2
# timeout set to 300
# selftests: kmemtrace: a_test
# TAP version 13
# 1..3
# #  RUN           a.one ...
# #            OK  a.one
# ok 1 a.one
# ok 2 a.two
# ok 3 a.three # SKIP no /dev/kmon here
# # Totals: pass:2 fail:0 xfail:0 xpass:0 skip:1 error:0
ok 1 selftests: kmemtrace: a_test
# selftests: kmemtrace: b.sh
# TAP version 13
# 1..1
# ok 1 b works
# TAP version 13
# 1..1
# ok 1 b works again
ok 2 selftests: kmemtrace: b.sh
EOF
sed 's/^# ok 2 a.two/# not ok 2 a.two/' "$rk/good.tap" >"$rk/case.tap"
sed 's/^ok 2 selftests: kmemtrace: b.sh/not ok 2 selftests: kmemtrace: b.sh # exit=1/' \
	"$rk/good.tap" >"$rk/program.tap"
# b.sh crashed: its cases, but no result of its own, and the plan unmet.
sed '/^ok 2 selftests/d' "$rk/good.tap" >"$rk/crash.tap"
# a_test ran 2 of its 3 cases and said ok.
sed '/^# ok 2 a.two/d' "$rk/good.tap" >"$rk/plan.tap"
: >"$rk/empty.tap"
# A TODO failure is no failure; a skip is one only after " # ".
sed -e 's/^# ok 2 a.two/# not ok 2 a.two # TODO not yet/' \
    -e 's/^# ok 1 a.one/# not ok 1 a.one_#skip_list/' "$rk/good.tap" >"$rk/directive.tap"
# Programs without cases: a plain script that passed, one that failed,
# and a whole program skipped.
cat >"$rk/plain.tap" <<'EOF'
TAP version 13
1..3
# selftests: kmemtrace: c.sh
# c says hello
ok 1 selftests: kmemtrace: c.sh
# selftests: kmemtrace: d.sh
# TAP version 13
# 1..0 # SKIP no d here
ok 2 selftests: kmemtrace: d.sh # SKIP
# selftests: kmemtrace: e.sh
not ok 3 selftests: kmemtrace: e.sh # exit=1
EOF
sed -e '$d' -e 's/^1\.\.3$/1..2/' "$rk/plain.tap" >"$rk/skips.tap"

rk_tree good 0
rk_tree case 0
rk_tree program 0
rk_tree crash 0
rk_tree plan 0
rk_tree empty 0
rk_tree status 3
rk_tree directive 0
rk_tree plain 0
rk_tree skips 0
cp "$rk/good.tap" "$rk/status.tap"

shells="sh"
command -v busybox >/dev/null && busybox sh -c : 2>/dev/null && shells="sh busybox"
for sh in $shells; do
	[ "$sh" = busybox ] && run=(busybox sh "$runner") || run=(sh "$runner")
	why=""
	for t in good case program crash plan empty status directive plain skips; do
		rc=0
		"${run[@]}" "$rk/$t" >"$rk/$t.$sh.out" 2>&1 || rc=$?
		last=$(grep '^run-kselftests: [0-9]' "$rk/$t.$sh.out" || true)
		case $t in
		good) want_rc=0 want="2 programs, 5 cases: 4 passed, 0 failed, 1 skipped"
		      why_re='' ;;
		case) want_rc=1 want="2 programs, 5 cases: 3 passed, 1 failed, 1 skipped"
		      why_re='FAIL: case a.two$' ;;
		program) want_rc=1 want="2 programs, 5 cases: 4 passed, 0 failed, 1 skipped"
		      why_re='FAIL: selftests: kmemtrace: b.sh # exit=1$' ;;
		crash) want_rc=1 want="1 programs, 5 cases: 4 passed, 0 failed, 1 skipped"
		      why_re='FAIL: a program after selftests: kmemtrace: a_test gave no result' ;;
		plan) want_rc=1 want="2 programs, 4 cases: 3 passed, 0 failed, 1 skipped"
		      why_re='FAIL: selftests: kmemtrace: a_test: 2 cases for its plan of 3$' ;;
		empty) want_rc=1 want="0 programs, 0 cases: 0 passed, 0 failed, 0 skipped"
		      why_re='FAIL: no TAP results$' ;;
		status) want_rc=1 want="2 programs, 5 cases: 4 passed, 0 failed, 1 skipped"
		      why_re='FAIL: run_kselftest.sh exited 3$' ;;
		directive) want_rc=1 want="2 programs, 5 cases: 3 passed, 1 failed, 1 skipped"
		      why_re='FAIL: case a.one_#skip_list$' ;;
		plain) want_rc=1 want="3 programs, 3 cases: 1 passed, 1 failed, 1 skipped"
		      why_re='FAIL: case selftests: kmemtrace: e.sh # exit=1$' ;;
		skips) want_rc=0 want="2 programs, 2 cases: 1 passed, 0 failed, 1 skipped"
		      why_re='' ;;
		esac
		[ "$rc" -eq "$want_rc" ] || why+=" $t: exit $rc, not $want_rc;"
		[ "$last" = "run-kselftests: $want" ] || why+=" $t: '$last';"
		if [ -n "$why_re" ]; then
			grep -Eq "^run-kselftests: $why_re" "$rk/$t.$sh.out" || why+=" $t: no line matching '$why_re';"
		else
			! grep -q 'FAIL:' "$rk/$t.$sh.out" || why+=" $t: a FAIL line;"
		fi
		# The TAP is passed through as it came.
		grep -qxF "$(sed -n 2p "$rk/$t.tap")" "$rk/$t.$sh.out" 2>/dev/null ||
			[ "$t" = empty ] || why+=" $t: the TAP was not printed;"
	done
	rc=0
	"${run[@]}" "$rk/nowhere" >"$rk/nowhere.out" 2>&1 || rc=$?
	[ $rc -eq 2 ] && grep -q "no $rk/nowhere/run_kselftest.sh" "$rk/nowhere.out" ||
		why+=" no tree: exit $rc;"
	if [ -z "$why" ]; then
		t_pass "run-kselftests ($sh): exit 0 only for a passing run; a failed case, a failed program, a crash, an unmet plan, no TAP, a failing runner each exit 1 and are named; TODO and SKIP directives, programs without cases counted"
	else
		t_fail "run-kselftests ($sh)" "$why"
		failed=1
	fi
done
