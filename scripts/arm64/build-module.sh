#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/build-module.sh <arm64 release> [module source dir]
#
# scripts/build-module.sh for one of Debian's arm64 kernels (for example
# 6.12.117+deb13-arm64), cross-compiled against its extracted headers
# (scripts/arm64/kernel.sh) with the compiler its headers ask for: the
# host's aarch64-linux-gnu-gcc-N when the host has that version (Debian 12's
# gcc-12 for Debian 12's kernels), otherwise in a chroot of the release that
# has it (scripts/arm64/cross-chroot.sh: gcc-14 in Debian 13). Same output,
# log and exit status as scripts/build-module.sh.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# >= 1 && $# <= 2)) || ue_die "usage: $0 <arm64 kernel release> [module source dir]"
rel=$1
kdir=$("$UE_REPO/scripts/arm64/kernel.sh" "$rel")
gcc=$(cat "$kdir/gcc")
wrap=
if ! command -v "aarch64-linux-gnu-$gcc" >/dev/null; then
	case $gcc in
	gcc-10) suite=bullseye ;;
	gcc-12) suite=bookworm ;;
	gcc-14) suite=trixie ;;
	*) ue_die "$rel: its headers want $gcc; no Debian release known to ship it" ;;
	esac
	"$UE_REPO/scripts/arm64/cross-chroot.sh" "$suite" "$gcc" >/dev/null
	wrap="$UE_REPO/scripts/arm64/cross-chroot.sh $suite $gcc --"
fi
UE_KDIR=$kdir/build UE_KMAKE_WRAP=$wrap \
	UE_KMAKE_ARGS="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" \
	exec "$UE_REPO/scripts/build-module.sh" "$@"
