# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
# scripts/lib.sh - shared paths and helpers for the kmemtrace workbench.
# Sourced by the scripts in this directory; not run on its own.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KTREE=$TOP/kernel-tree
BUILD=${KMT_BUILD:-$TOP/build}
# Out-of-tree kernel builds: the test kernel and the same kernel with
# CONFIG_KMEMTRACE=n (the "feature off" half of every check).
KOBJ=$BUILD/kernel
KOBJ_OFF=$BUILD/kernel-off
KOBJ_DEBUG=$BUILD/kernel-debug
KOBJ_KCSAN=$BUILD/kernel-kcsan
KOBJ_RT=$BUILD/kernel-rt
KOBJ_DISTRO=$BUILD/kernel-distro
KOBJ_CPUS64=$BUILD/kernel-cpus64
KOBJ_ARM64=$BUILD/kernel-arm64
# Guest images and the static user space that goes into them.
IMAGES=$BUILD/images
# ccache lives outside the repository so a fresh clone still hits it.
export CCACHE_DIR=${KMT_CCACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/kmemtrace-ccache}
# Paths under the repository are hashed relative to it, so that another
# clone (CI's, a colleague's) hits the same cache.
export CCACHE_BASEDIR=$TOP
JOBS=${KMT_JOBS:-$(nproc)}
# speedscope, the flame graph and timeline viewer that scripts/render-profile
# runs in headless Chromium: from npm, at this version, into build/.
SPEEDSCOPE_VERSION=1.25.0
SPEEDSCOPE_DIR=$BUILD/speedscope
# Directories of the overlay: new files only, copied into kernel-tree/ at
# the same paths by scripts/prepare-tree.
OVERLAY_DIRS=(tools/kmemtrace tools/testing/selftests/kmemtrace Documentation/trace Documentation/ABI)

# shellcheck source=scripts/linux-source.pin
. "$TOP/scripts/linux-source.pin"

# kmt_lock: one workbench job at a time on build/ and kernel-tree/ (a
# prepare could otherwise remove the tree under a running build). Scripts
# called by a script that holds the lock inherit it.
kmt_lock() {
	[ -n "${KMT_LOCKED:-}" ] && return 0
	mkdir -p "$BUILD"
	exec 9>"$BUILD/.lock"
	if ! flock -n 9; then
		log "waiting for another workbench job (build/.lock)"
		flock 9
	fi
	export KMT_LOCKED=1
}

log() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The fuzz corpora, beside their harnesses in the repository only: test
# data of the workbench (scripts/test-tools), not part of the series.
FUZZ_CORPORA=tools/kmemtrace/tests/fuzz
# overlay_files: every overlay file, relative to $TOP, sorted; the fuzz
# corpora are not overlay files.
overlay_files() {
	local d
	for d in "${OVERLAY_DIRS[@]}"; do
		[ -d "$TOP/$d" ] && (cd "$TOP" && find "$d" -path "$FUZZ_CORPORA" -prune -o -type f \
			! -name "*~" ! -name ".*.sw?" ! -name "*.orig" ! -name "*.rej" -print)
	done | LC_ALL=C sort
}

# series_patches: the patch names quilt applies, in order: the lines of
# series that are not comments.
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$TOP/series" | awk '{print $1}'
}

# patch_files PATCH: the paths a patch touches (old or new side).
patch_files() {
	awk '/^(---|\+\+\+) / && $2 != "/dev/null" { p = $2; sub(/^[ab]\//, "", p); print p }' "$1" |
		LC_ALL=C sort -u
}

# pristine_list: print the path of a sorted list of the tarball's file
# names (top directory stripped), made once per tarball.
pristine_list() {
	local list=$BUILD/pristine-files.$LINUX_TARBALL_SHA256
	if [ ! -s "$list" ]; then
		mkdir -p "$BUILD"
		tar -tf "$LINUX_TARBALL" | sed 's|^[^/]*/||' | LC_ALL=C sort >"$list.tmp"
		mv "$list.tmp" "$list"
	fi
	echo "$list"
}

# tarball_top: the top directory of the kernel tarball's paths.
tarball_top() {
	(tar -tf "$LINUX_TARBALL" 2>/dev/null || true) | head -n 1 | cut -d/ -f1
}

# kmake ARGS: make in kernel-tree/ with ccache and the job count.
# KMAKE_CROSS: a cross-compiler's prefix, with ARCH= among ARGS.
kmake() {
	make -C "$KTREE" -j"$JOBS" CC="ccache ${KMAKE_CROSS:-}gcc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026' \
		KBUILD_BUILD_USER=builder KBUILD_BUILD_HOST=workbench "$@"
}

# A kernel log line that starts a splat: any of these fails a guest run.
SPLAT_RE='(BUG:|WARNING:|ODEBUG:|Oops|Kernel panic|KASAN:|KCSAN:|UBSAN:|general protection fault|possible (recursive|circular) locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|kmemleak: [0-9]+ new suspected|Unable to handle kernel|detected stalls? on CPU)'

# Test results, one line each, counted by scripts/check:
#   PASS: name | FAIL: name: why | SKIP: name: why
t_pass() { printf 'PASS: %s\n' "$1"; }
t_fail() { printf 'FAIL: %s: %s\n' "$1" "$2"; }
t_skip() { printf 'SKIP: %s: %s\n' "$1" "$2"; }

# checkpatch_verdict TREE PATCH: checkpatch.pl --strict of TREE on PATCH.
# ERRORs fail; a WARNING or CHECK passes only when the patch justifies it
# below its '---' line as 'checkpatch: TYPE: reason'. Prints why on
# failure and returns 1.
checkpatch_verdict() {
	local out notes errs unjust="" line type uncovered
	out=$(cd "$1" && { ./scripts/checkpatch.pl --strict --show-types --terse --no-summary "$2" 2>&1 || true; })
	# The notes below '---' and before the diff may justify kept warnings.
	notes=$(awk '/^---$/ { on = 1; next } on && /^(diff |--- |Index: )/ { exit } on' "$2")
	errs=$(printf '%s\n' "$out" | grep -E ': ERROR:' || true)
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		type=$(printf '%s\n' "$line" | sed -n 's/.*: \(WARNING\|CHECK\):\([A-Z_0-9]*\):.*/\2/p')
		[ -n "$type" ] || continue
		# A new file without a MAINTAINERS change: never justified by
		# words. It passes only when the KMEMTRACE entry of TREE
		# already covers every file the patch adds (a directory's F:
		# line that an earlier patch added), else the patch must add
		# the file's F: line.
		if [ "$type" = FILE_PATH_CHANGES ]; then
			uncovered=$(patch_added_files "$2" | while IFS= read -r f; do
				# shellcheck disable=SC2046 # one pattern per word
				entry_covers "$f" $(entry_patterns "$1/MAINTAINERS") || printf '%s ' "$f"
			done)
			[ -z "$uncovered" ] ||
				unjust+="$line (the patch must add the F: line of $uncovered)"$'\n'
			continue
		fi
		grep -q "^checkpatch: $type: ." <<<"$notes" || unjust+="$line"$'\n'
	done <<<"$(printf '%s\n' "$out" | grep -E ': (WARNING|CHECK):' || true)"
	if [ -n "$errs" ]; then
		printf 'errors: %s\n' "$(printf '%s' "$errs" | sed -n 1,3p | tr '\n' ' ')"
		return 1
	elif [ -n "$unjust" ]; then
		printf "unjustified (add 'checkpatch: TYPE: reason' below ---): %s\n" \
			"$(printf '%s' "$unjust" | sed -n 1,3p | tr '\n' ' ')"
		return 1
	fi
	return 0
}

# patch_added_files PATCH: the files PATCH creates.
patch_added_files() {
	awk '$1 == "---" { created = $2 == "/dev/null"; next }
	     $1 == "+++" && created { p = $2; sub(/^b\//, "", p); print p; created = 0 }' "$1"
}

# entry_patterns MAINTAINERS_FILE: the F: patterns of its KMEMTRACE entry.
entry_patterns() {
	sed -n '/^KMEMTRACE$/,/^$/s/^F:\t//p' "$1"
}

# entry_covers FILE PATTERN...: FILE is one of the patterns' (they are
# directories ending in / and files, no globs).
entry_covers() {
	local f=$1 pat
	shift
	for pat in "$@"; do
		case "$pat" in
		*/) [[ "$f" == "$pat"* ]] && return 0 ;;
		*) [ "$f" = "$pat" ] && return 0 ;;
		esac
	done
	return 1
}
