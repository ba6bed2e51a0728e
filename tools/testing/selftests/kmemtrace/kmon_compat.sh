#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmon_compat.sh - kmon_test and kmt_stress's kmon_churn built as 32-bit
# programs (kmon_test_32, kmt_stress_32), so that every ioctl goes
# through the compat path: KMON_BUFFSIZE and
# KMON_GET_BUFFSIZE take a 4-byte long there, with their own numbers.
# Skips, saying why, when kmon_test_32 could not be built (no 32-bit
# compiler, gcc-multilib on Debian) or the kernel cannot run it (no
# CONFIG_IA32_EMULATION).
ksft_skip=4
dir=$(dirname "$0")
if [ ! -x "$dir/kmon_test_32" ]; then
	echo "SKIP: kmon_test_32 was not built: no 32-bit C compiler (gcc -m32)"
	exit $ksft_skip
fi
# -l lists the tests and exits with ksft_skip: anything else is an exec failure.
"$dir/kmon_test_32" -l >/dev/null 2>&1
if [ $? -ne $ksft_skip ]; then
	echo "SKIP: the kernel cannot run 32-bit programs (CONFIG_IA32_EMULATION)"
	exit $ksft_skip
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
