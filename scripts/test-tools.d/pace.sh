# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
# scripts/test-tools.d/pace.sh - kmt_pace.h, the pause kmemtraced's and
# kmonlog's readers make after a small batch read in place:
# tools/kmemtrace/tests/kmt_pace_test.c, built with ASan and UBSan,
# checks the rule case by case. Sourced by scripts/test-tools ($out,
# $src, t_pass, t_fail, failed).

kp=$out/kmt_pace_test
kp_cases=14
if ! gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra -Werror \
	-o "$kp" "$src/tests/kmt_pace_test.c" >"$out/kmt_pace_test.build" 2>&1; then
	t_fail "kmt_pace.h: kmt_pace_test builds without warnings" "$(head -n 5 "$out/kmt_pace_test.build")"
	failed=1
elif "$kp" >"$out/kmt_pace_test.out" 2>&1 &&
	[ "$(grep -c '^ok - ' "$out/kmt_pace_test.out")" = "$kp_cases" ] &&
	! grep -q '^not ok' "$out/kmt_pace_test.out"; then
	t_pass "kmt_pace.h: the $kp_cases cases of kmt_pace_test (at fixed times: an eighth's fill time up to the maximum; none after an eighth or a long wait; the reader's own or a cut-short pause is not waiting; a smaller maximum for a smaller buffer)"
else
	t_fail "kmt_pace.h: the $kp_cases cases of kmt_pace_test" "$(grep -v '^ok - ' "$out/kmt_pace_test.out" | head -n 5 | tr '\n' ' ')"
	failed=1
fi
