#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmon_compat.sh - kmon_test built as a 32-bit program (kmon_test_32), so
# that every ioctl goes through the compat path: KMON_BUFFSIZE and
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
exec "$dir/kmon_test_32"
