# SPDX-License-Identifier: GPL-2.0
#
# Debian's arm64 kernels (needs root: debootstrap, chroot, binfmt_misc):
#   make check-arm64 [KVERS_ARM64="rel ..."] [V=1]
#                            make check for Debian 12's and Debian 13's newest
#                            arm64 6.12 kernels, Debian 12's 6.1 and Debian
#                            11's 5.10: module and selftests
#                            cross-built, guests under qemu-system-aarch64;
#                            and on Debian 12's arm64 6.1 and Debian 11's
#                            arm64 5.10 (no CONFIG_KALLSYMS_ALL): the module
#                            loads on the variables it derives, and refuses
#                            a failed check (scripts/arm64/refusal-test.sh).
#                            The full suite runs there too (the default
#                            list of scripts/arm64/kernels.sh)
#   make arm64-kernels       list the arm64 kernels check-arm64 uses
#   make arm64-shell [KVER=rel]
#                            interactive shell in an arm64 guest

.PHONY: check-arm64 arm64-kernels arm64-shell

check-arm64:
	@UE_ARCH=arm64 scripts/check.sh

arm64-kernels:
	@scripts/arm64/kernels.sh

arm64-shell:
	scripts/arm64/setup.sh
	scripts/guest/run.sh --arch arm64 --shell $(or $(KVER),$(firstword $(shell scripts/arm64/kernels.sh)))
