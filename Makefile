# SPDX-License-Identifier: GPL-2.0
# kmemtrace workbench. The two commands of README.md:
#   make demo    build everything, boot the guest, show what kmemtrace captures
#   make check   every check and test; ends with 'N passed, N failed'

SCRIPTS := scripts

.PHONY: all demo check check-kcsan check-configs check-docs bisect bench deps prepare kernel kernel-off user kunit export clean distclean help

all: help

help:
	@echo 'make demo      install deps, prepare, build, boot the guest and show a capture'
	@echo 'make check     all checks and tests (static, sparse, KUnit, kselftests, runner)'
	@echo 'make check-kcsan  the KCSAN kernel and the kselftests on it (not in make check: ~10 min cold)'
	@echo 'make check-configs  the series on other configurations: PREEMPT_RT with lockdep, x86_64_defconfig, 64 CPUs, arm64 (not in make check)'
	@echo 'make check-docs   Sphinx of every page the series touches (ABI too), rendered to PNG'
	@echo 'make bisect    build every commit of the series, feature off and on, and check each (~30 min)'
	@echo 'make bench     the cost table: allocation path, KTR trace points, scheduler'
	@echo 'make deps      install the Debian packages (as root)'
	@echo 'make prepare   unpack the kernel into kernel-tree/ and apply the series'
	@echo 'make kernel    build the test kernel (build/kernel); kernel-off: CONFIG_KMEMTRACE=n'
	@echo 'make user      build the static selftests, tools and the initramfs'
	@echo 'make kunit     run the KUnit suites with kunit.py (UML) from kernel/kmemtrace/.kunitconfig'
	@echo 'make export    write a git-am series to build/export/'
	@echo 'make clean     remove build/ (keeps kernel-tree/ and ccache)'
	@echo 'make distclean also remove kernel-tree/'

demo:
	@$(SCRIPTS)/demo

check:
	@$(SCRIPTS)/check

check-kcsan:
	@$(SCRIPTS)/check-kcsan

check-configs: prepare
	@$(SCRIPTS)/install-deps --configs
	@$(SCRIPTS)/check-configs

check-docs: prepare
	@$(SCRIPTS)/install-deps --docs
	@$(SCRIPTS)/check-docs --full --png

bisect: prepare
	@$(SCRIPTS)/bisect-series

bench: user kernel-off
	@$(SCRIPTS)/bench

deps:
	@$(SCRIPTS)/install-deps

prepare: deps
	@$(SCRIPTS)/prepare-tree

kernel: prepare
	@$(SCRIPTS)/build-kernel

kernel-off: prepare
	@$(SCRIPTS)/build-kernel --off

user: kernel
	@$(SCRIPTS)/build-user

kunit: prepare
	cd kernel-tree && PYTHONDONTWRITEBYTECODE=1 python3 -B tools/testing/kunit/kunit.py run \
		--kunitconfig=kernel/kmemtrace --build_dir=../build/kunit-uml \
		--jobs=$$(nproc) --make_options CC="ccache gcc"

export: prepare
	@$(SCRIPTS)/export-series build/export

clean:
	rm -rf build

distclean: clean
	rm -rf kernel-tree
