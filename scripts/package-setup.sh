#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what packaging user_events.ko needs: DKMS, debhelper with the
# dh-dkms addon, lintian, docutils (for `make docs`), plus the tools those
# steps call. Idempotent: when everything is installed it only runs one
# dpkg-query.
#
#   scripts/package-setup.sh             install what is missing, quietly
#   scripts/package-setup.sh --packages  print the package list
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PACKAGES=(
	dkms dh-dkms debhelper dpkg-dev fakeroot lintian
	python3-docutils kmod openssl gcc make
)

if [[ ${1:-} == --packages ]]; then
	printf '%s\n' "${PACKAGES[@]}"
	exit 0
fi
(($# == 0)) || ue_die "usage: $0 [--packages]"
ue_install_packages "${PACKAGES[@]}" || ue_die "cannot install the packaging tools"
