#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/package-test.sh [arm64 release]
#
# user-events-dkms on arm64, the way a user gets it: on a copy of the arm64
# guest root (scripts/arm64/root.sh), through qemu-user, install dkms, the
# kernel's headers (which bring its image) from Debian's archive, then the
# package (build/user-events-dkms_<VERSION>_all.deb, scripts/build-deb.sh):
# its postinst has DKMS build the module natively, with the headers' own
# gcc. Then boot that kernel with that root (run.sh --arch arm64,
# UE_ARM64_ROOT) and run scripts/package-smoke.sh there. Default release:
# the newest Debian 12 arm64 6.12 (its headers are in the root's apt
# sources). INITRD=No: the guest boots its own initramfs, and making one
# under qemu-user takes many minutes. Prints TAP lines; exit status 0 iff
# all passed. Needs root. About 19 minutes on a busy 2-core machine, most of
# it apt and the DKMS build under qemu-user.
#
# A Debian 11 release (5.10.0-N-arm64) is tested on a Debian 11 arm64 root
# (scripts/arm64/root.sh bullseye) with Debian 11's own dkms (2.8.4), which
# ignores BUILD_EXCLUSIVE_CONFIG: the package must install, DKMS build the
# module, and the module load and pass the smoke test although the kernel
# lacks CONFIG_KALLSYMS_ALL (it derives the tracing core's variables there:
# Documentation/compat.rst).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

((EUID == 0)) || ue_die "needs root (chroot)"
rel=${1:-$("$UE_REPO/scripts/arm64/kernels.sh" | grep -- '+deb12-arm64$' | head -n 1)}
version=$(cat "$UE_REPO/VERSION")
deb=$UE_BUILD/user-events-dkms_${version}_all.deb
"$UE_REPO/scripts/build-deb.sh" >&2
[[ -f $deb ]] || ue_die "no $deb"
suite=bookworm
[[ $rel != 5.10.* ]] || suite=bullseye
root=$("$UE_REPO/scripts/arm64/root.sh" "$suite")
"$UE_REPO/scripts/arm64/kernel.sh" "$rel" >/dev/null
pkgroot=$(ue_cache_dir)/arm64/pkgroot
[[ $suite == bookworm ]] || pkgroot+=-$suite
out=$UE_BUILD/$rel/package-test
mkdir -p "$out"
fail=0
t() { # t <description> <command...>
	local what=$1
	shift
	if "$@"; then echo "ok - arm64 package $rel: $what"; else
		echo "not ok - arm64 package $rel: $what"
		fail=1
	fi
}

rm -rf "$pkgroot"
cp -a "$root" "$pkgroot"
cp "$deb" "$pkgroot/tmp/"
# shellcheck disable=SC2016 # expanded by the inner shell
inchroot() {
	unshare -m sh -c 'd=$1; shift
		mount -t proc proc "$d/proc" && mount -t sysfs sysfs "$d/sys" &&
		mount --bind /dev "$d/dev" || exit 125
		exec chroot "$d" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive INITRD=No "$@"' sh "$pkgroot" "$@"
}
# shellcheck disable=SC2317 # run through t
logged() { # logged <log file> <command...>
	local log=$1
	shift
	"$@" >"$log" 2>&1
}
# Debian 11's headers do not bring the image, which holds the
# /lib/modules/<release>/build link; they ask for linux-kbuild-5.10 of their
# own version or newer: take their own version, which they were built with.
kpkgs="linux-headers-$rel"
if [[ $suite == bullseye ]]; then
	kver=$("$UE_REPO/scripts/arm64/apt.sh" apt-cache show --no-all-versions \
		"linux-headers-$rel:arm64" | sed -n 's/^Version: //p' | head -n 1)
	[[ -n $kver ]] || ue_die "no version for linux-headers-$rel"
	kpkgs+=" linux-image-$rel linux-kbuild-${rel%%.0-*}=$kver"
fi
t "apt-get install dkms $kpkgs (under qemu-user)" \
	logged "$out/apt.log" inchroot sh -c "apt-get -q update &&
		apt-get -q -y --no-install-recommends install dkms make $kpkgs"
t "dpkg -i $(basename "$deb") (DKMS builds the module)" \
	logged "$out/dpkg.log" inchroot dpkg -i "/tmp/$(basename "$deb")"
inchroot dkms status >"$out/dkms-status.log" 2>&1 || true
# DKMS 3 prints "user-events/<version>, ...", 2.8 "user-events, <version>, ..."
t "dkms status: installed for $rel" \
	grep -qF -e "user-events/$version, $rel, aarch64: installed" \
		-e "user-events, $version, $rel, aarch64: installed" "$out/dkms-status.log"
t "module file in /lib/modules/$rel/updates/dkms" \
	logged /dev/null compgen -G "$pkgroot/lib/modules/$rel/updates/dkms/user_events.ko*"
gstatus=0
UE_ARM64_ROOT=$pkgroot "$UE_REPO/scripts/guest/run.sh" --arch arm64 -q -o "$out/guest" \
	-t 600 "$rel" -- "$UE_REPO/scripts/package-smoke.sh" "$version" || gstatus=$?
cat "$out/guest/output.log" 2>/dev/null || true
t "guest smoke test" test "$gstatus" = 0
exit "$fail"
