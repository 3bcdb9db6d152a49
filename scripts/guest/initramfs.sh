#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/guest/initramfs.sh <release> [module root]
#
# Print the path of a small initramfs (uncompressed newc cpio) for booting
# <release> in QEMU: busybox-static, scripts/guest/init as /init, and the
# virtio/9p modules in the order modprobe's --show-depends prints them
# (decompressed, since busybox insmod wants plain .ko files). Cached outside
# the repo; rebuilt when the init script, busybox or the kernel's modules
# change. The modules come from /lib/modules/<release>, or from
# <module root>/lib/modules/<release> (an extracted package, a kernel's
# modules_install; depmod runs first when it has no modules.dep).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# == 1 || $# == 2)) || ue_die "usage: $0 <kernel release> [module root]"
rel=$1
root=${2:-/}
moddir=${root%/}/lib/modules/$rel
[[ -d $moddir ]] || ue_die "no $moddir"
# Packages ship no modules.dep: make it (the root must be writable then).
[[ -f $moddir/modules.dep ]] || depmod -b "$root" "$rel" ||
	ue_die "no $moddir/modules.dep and depmod -b $root $rel failed"
busybox=/bin/busybox
[[ -x $busybox ]] || ue_die "no $busybox (package busybox-static)"
init=$UE_REPO/scripts/guest/init

key=$( (ue_files_key "$busybox" "$moddir/modules.dep" "$moddir/modules.builtin" \
	"$0"; sha256sum <"$init") | sha256sum | cut -c1-16)
[[ $root == / ]] || rel_dir=$(realpath "$root" | sha256sum | cut -c1-12)-
out=$(ue_cache_dir)/initramfs/${rel_dir:-}$rel/initramfs-$key.cpio
if [[ -s $out ]]; then
	printf '%s\n' "$out"
	exit 0
fi
mkdir -p "${out%/*}"

ue_initramfs "$out" "$busybox" "$root" "$rel"
printf '%s\n' "$out"
