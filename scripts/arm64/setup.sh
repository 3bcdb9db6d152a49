#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host packages for the arm64 targets (idempotent; needs root to install):
# qemu-system-aarch64, the Debian 12 arm64 cross compiler and libc (the
# selftests, and the module for Debian 12's arm64 kernels), and
# qemu-user-static with binfmt-support (the second stage of the arm64
# guest root's debootstrap), curl (does the archive serve a kernel it lists:
# scripts/arm64/kernels.sh --series). All of them are Debian 12's own packages.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

pkgs=(qemu-system-arm ipxe-qemu gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	qemu-user-static binfmt-support debootstrap pahole zstd xz-utils cpio kmod curl)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
((${#missing[@]})) || exit 0
((EUID == 0)) || ue_die "missing packages (install as root): ${missing[*]}"
ue_note "installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600 install -y \
	--no-install-recommends "${missing[@]}" >&2 ||
	ue_die "apt-get install ${missing[*]} failed"
