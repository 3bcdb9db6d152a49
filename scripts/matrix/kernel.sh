#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/matrix/kernel.sh <suite> <metapackage or linux-image-<release>>
#
# Make a Debian kernel of <suite> bootable by the guest runner without
# installing it anywhere: resolve the package (a metapackage such as
# linux-image-rt-amd64 names the current release), install its headers into
# the suite's build chroot (scripts/matrix/chroot.sh), download the image
# package with the chroot's apt, extract it with `dpkg-deb -x` into
# $(ue_cache_dir)/kernels/<release>/root and run `depmod -b` there.
# Nothing is written to the host's /boot or /lib/modules.
#
# Prints three lines:
#   <release>
#   <vmlinuz path>          (for scripts/guest/run.sh --kernel)
#   <modules dir>           (lib/modules/<release>, for --modules)
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# == 2)) || ue_die "usage: $0 <suite> <linux-image package>"
suite=$1
pkg=$2
[[ $pkg == linux-image-* ]] || ue_die "not a linux-image package: $pkg"

root=$("$UE_REPO/scripts/matrix/chroot.sh" "$suite")
inch() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C "$@"
}

# A metapackage depends on exactly one linux-image-<release> package
# (the -unsigned variants are not what Debian installs); an image package
# depends on none. A name alone does not tell them apart:
# linux-image-6.12-rt-amd64 is a metapackage.
inch apt-cache show "$pkg" >/dev/null 2>&1 || ue_die "$suite: no package $pkg"
image=$(inch apt-cache depends --important "$pkg" 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' |
	grep -v -- '-unsigned$' | head -n 1 || true)
image=${image:-$pkg}
rel=${image#linux-image-}

"$UE_REPO/scripts/matrix/chroot.sh" "$suite" "linux-headers-$rel" >/dev/null
# Before Linux 6.x packaging (bullseye), the build link belongs to the image
# package, which the chroot does not install.
if [[ ! -L $root/lib/modules/$rel/build && ! -e $root/lib/modules/$rel/build && -f $root/usr/src/linux-headers-$rel/Makefile ]]; then
	mkdir -p "$root/lib/modules/$rel"
	ln -s "/usr/src/linux-headers-$rel" "$root/lib/modules/$rel/build"
fi

kdir=$(ue_cache_dir)/kernels/$rel
mkdir -p "$kdir"
exec {lockfd}>"$kdir/.lock"
flock "$lockfd"
if [[ ! -f $kdir/.ue-ready ]]; then
	rm -rf "$kdir/root" "$kdir/deb"
	mkdir -p "$kdir/deb" "$root/tmp/ue-download"
	ue_note "$suite: downloading and extracting $image"
	(cd "$root/tmp/ue-download" && rm -f ./*.deb &&
		chroot "$root" /bin/sh -c "cd /tmp/ue-download && apt-get download -qq '$image'") >&2 ||
		ue_die "$suite: apt-get download $image failed"
	mv "$root"/tmp/ue-download/*.deb "$kdir/deb/"
	dpkg-deb -x "$kdir"/deb/*.deb "$kdir/root"
	# Merged-/usr releases ship usr/lib/modules; the host's depmod and
	# modprobe look under <base>/lib/modules.
	if [[ ! -e $kdir/root/lib && -d $kdir/root/usr/lib/modules ]]; then
		ln -s usr/lib "$kdir/root/lib"
	fi
	[[ -f $kdir/root/boot/vmlinuz-$rel ]] || ue_die "$image has no boot/vmlinuz-$rel"
	depmod -b "$kdir/root" "$rel" || ue_die "depmod -b failed for $rel"
	rm -rf "$kdir/deb"
	touch "$kdir/.ue-ready"
fi
printf '%s\n%s\n%s\n' "$rel" "$kdir/root/boot/vmlinuz-$rel" "$kdir/root/lib/modules/$rel"
