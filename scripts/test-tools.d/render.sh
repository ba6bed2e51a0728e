# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
# scripts/test-tools.d/render.sh - the pictures of make demo: a flame graph
# of kmemtrace-report --format=folded and a timeline of kmonparse
# --format=perfetto, drawn by scripts/render-profile (speedscope in
# headless Chromium, from scripts/install-deps --demo), are not blank; a
# profile with nothing to draw is called blank. Sourced by
# scripts/test-tools ($out, $src, $KTREE, $KOBJ, t_pass, t_fail, failed).

rd=$out/render
rm -rf "$rd"
mkdir -p "$rd"
render=$(dirname "${BASH_SOURCE[0]}")/../render-profile

# A capture of kmtgen's scenario, reported as folded stacks.
"$out/kmtgen" "$rd/cap" <"$src/tests/report/caches.scn"
gcc -Wall -Wextra -Werror -O2 -I"$KTREE/tools/include" -isystem "$KOBJ/usr/include" \
	-o "$rd/kmongen" "$src/tests/kmongen.c"
"$rd/kmongen" -n 2000 "$rd/rounds.log"
rc=0
"$out/kmemtrace-report" --format=folded "$rd/cap" >"$rd/alloc.folded" 2>"$rd/report.err" || rc=$?
rc2=0
"$out/kmonparse" --format=perfetto "$rd/rounds.log" >"$rd/kmon.json" 2>"$rd/kmonparse.err" || rc2=$?
if [ $rc -le 1 ] && [ $rc2 -eq 0 ] &&
	"$render" --title "folded" "$rd/alloc.folded" "$rd/alloc.png" >"$rd/alloc.out" 2>&1 &&
	"$render" --title "perfetto" "$rd/kmon.json" "$rd/kmon.png" >"$rd/kmon.out" 2>&1; then
	t_pass "render-profile: a flame graph of kmemtrace-report -f folded and a timeline of kmonparse -f perfetto, drawn ($(cut -d: -f2 "$rd/alloc.out"); $(cut -d: -f2 "$rd/kmon.out"))"
else
	t_fail "render-profile: the demo's pictures" "report exit $rc, kmonparse exit $rc2: $(cat "$rd"/*.out 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
	failed=1
fi
# The check itself: a profile whose only stack weighs nothing draws no
# bar, and must be refused as blank.
printf 'nothing 0\n' >"$rd/empty.folded"
rc=0
"$render" "$rd/empty.folded" "$rd/empty.png" >"$rd/empty.out" 2>&1 || rc=$?
if [ $rc -eq 1 ] && grep -q 'is blank' "$rd/empty.out"; then
	t_pass "render-profile: a profile with nothing to draw is refused as blank"
else
	t_fail "render-profile: blank picture" "exit $rc: $(tr '\n' ' ' <"$rd/empty.out" | cut -c1-300)"
	failed=1
fi
