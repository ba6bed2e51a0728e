#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmon_compat.sh - kmon_test and kmt_stress's kmon_churn built as 32-bit
# programs (kmon_test_32, kmt_stress_32), so that every ioctl goes
# through the compat path: KMON_BUFFSIZE and
# KMON_GET_BUFFSIZE take a 4-byte long there, with their own numbers.
#
# Skips, saying why, when kmon_test_32 could not be built (no 32-bit
# compiler: gcc-12-multilib or the like on Debian), or when it does not start and the
# kernel is shown not to run 32-bit programs: /proc/config.gz without
# CONFIG_IA32_EMULATION, no /proc/sys/abi/vsyscall32 on x86-64 (it
# exists exactly when CONFIG_IA32_EMULATION does), ia32_emulation=off
# on the command line, or the kernel's "32-bit emulation disabled"
# notice. Any other failure to start is a failure of the test, and so
# is every failure of the programs themselves.
ksft_skip=4
dir=$(dirname "$0")
if [ ! -x "$dir/kmon_test_32" ]; then
	echo "SKIP: kmon_test_32 was not built: no 32-bit C compiler (gcc -m32)"
	exit $ksft_skip
fi

# Why the kernel does not run 32-bit programs; nothing if it does, or
# if nothing shows that it does not.
no_ia32() {
	if grep -qE '(^| )ia32_emulation=(0|n|N|no|off|false)( |$)' /proc/cmdline 2>/dev/null; then
		echo "ia32_emulation is off on the kernel command line"
	elif dmesg 2>/dev/null | grep -q '32-bit emulation disabled'; then
		echo "the kernel says: 32-bit emulation disabled (ia32_emulation=)"
	elif [ -r /proc/config.gz ] && cfg=$(gzip -dc /proc/config.gz 2>/dev/null) &&
	     [ -n "$cfg" ]; then
		if ! printf '%s\n' "$cfg" | grep -q '^CONFIG_IA32_EMULATION=y'; then
			echo "kernel built without CONFIG_IA32_EMULATION (/proc/config.gz)"
		elif printf '%s\n' "$cfg" | grep -q '^CONFIG_IA32_EMULATION_DEFAULT_DISABLED=y' &&
		     ! grep -qE '(^| )ia32_emulation=(1|y|Y|yes|on|true)( |$)' /proc/cmdline; then
			echo "CONFIG_IA32_EMULATION_DEFAULT_DISABLED, and no ia32_emulation=on"
		fi
	elif [ "$(uname -m)" = x86_64 ] && [ -d /proc/sys/abi ] &&
	     [ ! -e /proc/sys/abi/vsyscall32 ]; then
		echo "kernel built without CONFIG_IA32_EMULATION (no /proc/sys/abi/vsyscall32)"
	fi
}

# -l lists the tests and exits with ksft_skip: anything else means it
# did not start, or the harness is broken.
err=$("$dir/kmon_test_32" -l 2>&1 >/dev/null)
rc=$?
if [ $rc -ne $ksft_skip ]; then
	why=$(no_ia32)
	if [ -n "$why" ]; then
		echo "SKIP: the kernel cannot run 32-bit programs: $why"
		exit $ksft_skip
	fi
	echo "FAIL: kmon_test_32 -l: exit status $rc, not $ksft_skip, on a kernel that runs" \
	     "32-bit programs (nothing says otherwise): ${err:-no message}"
	exit 1
fi
rc=0
"$dir/kmon_test_32" || rc=1
# kmt_stress's churn of every ioctl by four threads and a shared
# descriptor, through the compat path (KMT_STRESS_SECONDS applies).
if [ ! -x "$dir/kmt_stress_32" ]; then
	echo "FAIL: kmt_stress_32 was not built beside kmon_test_32"
	exit 1
fi
"$dir/kmt_stress_32" -t kmon_churn || rc=1
exit $rc
