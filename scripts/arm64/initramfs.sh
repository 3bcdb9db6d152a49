#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/initramfs.sh <arm64 release>
#
# scripts/guest/initramfs.sh for an arm64 guest: the same /init
# (scripts/guest/init), with the arm64 root's busybox-static
# (scripts/arm64/root.sh) and the virtio/9p modules of the extracted kernel
# (scripts/arm64/kernel.sh), in the order modprobe -d prints them. Prints
# the path of the cpio, cached next to the kernel.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# == 1)) || ue_die "usage: $0 <arm64 kernel release>"
rel=$1
kdir=$("$UE_REPO/scripts/arm64/kernel.sh" "$rel")
root=$("$UE_REPO/scripts/arm64/root.sh")
moddir=$(readlink -f "$kdir/lib/modules/$rel")
modbase=${moddir%/lib/modules/*}
busybox=$root/bin/busybox
[[ -x $busybox ]] || ue_die "no $busybox in the arm64 root"
init=$UE_REPO/scripts/guest/init

key=$( (ue_files_key "$busybox" "$moddir/modules.dep" "$0"; sha256sum <"$init") |
	sha256sum | cut -c1-16)
out=$kdir/initramfs-$key.cpio
if [[ -s $out ]]; then
	printf '%s\n' "$out"
	exit 0
fi

ue_initramfs "$out" "$busybox" "$modbase" "$rel"
printf '%s\n' "$out"
