# SPDX-License-Identifier: GPL-2.0
#
# user_events.ko: tracefs user_events for kernels built without
# CONFIG_USER_EVENTS.
#
#   make                      build user_events.ko for the running kernel
#   make KDIR=/lib/modules/<release>/build
#                             build it for another installed kernel
#   make check                build and run the selftests in QEMU guests
#   make demo                 boot a guest and show an event in the trace
#   make help                 every target, by tier
#
# The test and packaging targets live in mk/*.mk.

KDIR ?= /lib/modules/$(shell uname -r)/build
# Not VERSION: that name is the kernel Makefile's own (Kbuild reads it).
UE_VERSION := $(shell cat VERSION)
PWD := $(CURDIR)

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null || true
	rm -rf build

.PHONY: all modules clean help

# Keep in step with mk/*.mk (scripts/check-refs.py checks the names)
help:
	@echo 'Build'
	@echo '  make                   user_events.ko for the running kernel (KDIR=...)'
	@echo '  make clean             remove build products'
	@echo 'Tier 1, every change (minutes)'
	@echo '  make lint              checkpatch --strict, sparse and W=1'
	@echo '  make check-host        versions, docs, references; no guest'
	@echo '  make check KVERS=REL   the selftests in a guest of one kernel'
	@echo 'Tier 2, CI (.ci/run, about 30 minutes)'
	@echo '  make check             lint, host checks, selftests on 6.1 and 6.12, package'
	@echo '  make check-matrix-ci   the selftests on Debian 13 and Debian 11'
	@echo 'Tier 3, long (before a release, after risky changes)'
	@echo '  make check-matrix      every target kernel, rt flavours included'
	@echo '  make check-cloud       the cloud flavours (tests in an initramfs)'
	@echo '  make check-arm64       the selftests in arm64 guests'
	@echo '  make check-debug       KASAN/lockdep/kmemleak 6.12 kernel'
	@echo '  make check-kcsan       KCSAN/lockdep 6.12 kernel'
	@echo '  make check-package     the .deb built, installed, smoke-tested, purged'
	@echo '  make check-versions    VERSION, dkms.conf, changelog agree'
	@echo '  make race              concurrency fuzzer (RACE_S, RACE_MODE=relayout|held)'
	@echo '  make race-selftests    races_test with parallel vCPUs'
	@echo '  make stress            random concurrent operations, invariants'
	@echo '  make fuzz              interface fuzzer (FUZZ_S)'
	@echo '  make fuzz-regress      replay tests/fuzz/regressions/'
	@echo '  make bench             path lengths under -icount (tests/bench/README.md)'
	@echo '  make bench-report      redo the reports from saved logs'
	@echo 'Tools'
	@echo '  make setup             install packages, fetch the test harness'
	@echo '  make demo              show an event in a guest'"'"'s trace'
	@echo '  make guest-shell       shell in a guest (KVER=REL)'
	@echo '  make arm64-shell       shell in an arm64 guest (KVER=REL)'
	@echo '  make kernels           the kernels make check uses'
	@echo '  make matrix-kernels    fetch the matrix kernels and chroots'
	@echo '  make arm64-kernels     the arm64 kernels check-arm64 uses'
	@echo '  make debug-kernel      build the debug kernel only (cached)'
	@echo '  make docs              Documentation/*.rst checked, HTML in build/docs'
	@echo '  make deb               build the Debian package'
	@echo '  make package-setup     install the packaging tools'
	@echo '  make dkms-install      install through DKMS (LOAD_AT_BOOT=1)'
	@echo '  make dkms-remove       undo dkms-install'
	@echo '  make set-version       NEW_VERSION=x.y.z everywhere'

-include $(sort $(wildcard mk/*.mk))
