# SPDX-License-Identifier: GPL-2.0
#
# Other Debian kernels without CONFIG_USER_EVENTS (needs root: chroots):
#   make check-matrix        every target of scripts/matrix/targets: Debian 13
#                            and 11 generic, the rt flavours (Debian 11, 12
#                            6.1 and 6.12, 13), each built with its release's
#                            toolchain in a debootstrap chroot
#   make check-matrix-ci     the "ci" targets only (what .ci/run adds to
#                            make check): Debian 13 and Debian 11 generic
#   make check-cloud         the cloud flavours (no 9p: the tests travel in an
#                            initramfs, scripts/matrix/cloud.sh)
#   make matrix-kernels      fetch and extract the target kernels, set up the
#                            chroots (no build, no guest)

.PHONY: check-matrix check-matrix-ci check-cloud matrix-kernels

check-matrix:
	@scripts/matrix.sh --set all; st=$$?; scripts/matrix/cloud.sh || st=1; exit $$st

check-cloud:
	@scripts/matrix/cloud.sh

check-matrix-ci:
	@scripts/matrix.sh --set ci

matrix-kernels:
	@while read -r suite pkg _; do \
		case $$suite in ''|\#*) continue ;; esac; \
		scripts/matrix/kernel.sh $$suite $$pkg | head -n 1 || exit 1; \
	done < scripts/matrix/targets
