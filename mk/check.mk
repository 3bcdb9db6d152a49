# SPDX-License-Identifier: GPL-2.0
#
# Test targets (included by the top-level Makefile):
#   make check [KVERS="rel ..."] [V=1]  build + selftests in QEMU guests
#   make demo                         show an event in a 6.1 guest's trace
#   make check-host                   versions, docs, README references (no guest)
#   make setup                        install packages, fetch the harness
#   make kernels                      list the kernels `make check` uses
#   make lint                         checkpatch --strict and sparse (C=2)
#   make guest-shell [KVER=rel]       interactive shell in a guest

.PHONY: check check-host demo setup kernels guest-shell

check:
	@scripts/check.sh

check-host:
	@scripts/check-host.sh

demo:
	@scripts/demo.sh

setup:
	scripts/setup.sh

kernels:
	@scripts/kernels.sh

guest-shell:
	scripts/setup.sh
	scripts/guest/run.sh --shell $(or $(KVER),$(firstword $(shell scripts/kernels.sh)))

lint:
	@scripts/lint.sh
