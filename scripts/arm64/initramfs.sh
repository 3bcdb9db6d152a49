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

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/bin" "$work/root/modules" "$work/root/dev"
cp "$busybox" "$work/root/bin/busybox"
install -m 755 "$init" "$work/root/init"

n=$(ue_9p_modules "$work/root/modules" "$modbase" "$rel")
((n > 0)) || ue_die "modprobe found no 9p modules for $rel in $modbase"

tmp=$(mktemp "${out}.tmp.XXXXXX")
(cd "$work/root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) >"$tmp"
find "$kdir" -maxdepth 1 -name 'initramfs-*.cpio' -delete
mv -f "$tmp" "$out"
printf '%s\n' "$out"
