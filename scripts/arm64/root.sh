#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/root.sh [bookworm | bullseye]
#
# Print the path of a small Debian arm64 root file system for the arm64
# test guest (scripts/guest/run-arm64.sh), created on first use with
# `debootstrap --arch=arm64` and cached outside the repository. Its second
# stage runs on the host through qemu-user-static and binfmt_misc
# (qemu-aarch64 is enabled with update-binfmts when it is not).
# - bookworm (default), in $(ue_cache_dir)/arm64/root: what the selftests
#   and the guest runner need: bash, kmod, busybox-static (for the
#   initramfs), fuse3, and Debian's arm64 perf, trace-cmd and bpftrace;
# - bullseye, in $(ue_cache_dir)/arm64/root-bullseye: Debian 11 with only
#   what the guest runner needs, for the package test on Debian 11's arm64
#   kernels (scripts/arm64/package-test.sh).
# Run as root.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

suite=${1:-bookworm}
((EUID == 0)) || ue_die "needs root (debootstrap, chroot)"
mirror=${UE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
secmirror=${mirror%/debian}/debian-security
base=$(ue_cache_dir)/arm64
# Bump when the package list changes: the root is then rebuilt.
case $suite in
bookworm)
	dir=$base/root
	pkgs=bash,kmod,procps,busybox-static,fuse3,linux-perf,trace-cmd,bpftrace,iproute2,util-linux
	;;
bullseye)
	dir=$base/root-bullseye
	pkgs=bash,kmod,procps,busybox-static,iproute2,util-linux
	# Debian 11 as of its last point release (11.11), without
	# bullseye-security: Debian's archive lists its arm64 updates, but
	# serves none of their files (404, checked on 2026-11-24: linux,
	# perl, python3.9, systemd), so apt could install nothing that needs
	# one. Its amd64 files are still served.
	secmirror=
	;;
*) ue_die "usage: $0 [bookworm | bullseye]" ;;
esac
stamp="$pkgs"
[[ -n $secmirror ]] || stamp+=" (no $suite-security)"
mkdir -p "$base"
exec {lockfd}>"$base/.${dir##*/}.lock"
flock "$lockfd"
if [[ -f $dir/.ue-ready ]] && [[ $(cat "$dir/.ue-ready") == "$stamp" ]]; then
	printf '%s\n' "$dir"
	exit 0
fi

command -v debootstrap >/dev/null || ue_die "debootstrap missing (run scripts/setup.sh)"
[[ -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P || -x /usr/bin/qemu-aarch64-static ]] ||
	ue_die "qemu-user-static missing (run scripts/setup.sh)"
if [[ ! -e /proc/sys/fs/binfmt_misc/register ]]; then
	mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
		ue_die "binfmt_misc is not available: cannot run arm64 programs for debootstrap"
fi
[[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || update-binfmts --enable qemu-aarch64 ||
	ue_die "cannot enable the qemu-aarch64 binfmt handler"

rm -rf "$dir"
log=$dir-debootstrap.log
ue_note "debootstrap --arch=arm64 $suite into $dir (several minutes under qemu-user)"
debootstrap --arch=arm64 --variant=minbase --include="$pkgs" \
	"$suite" "$dir" "$mirror" >"$log" 2>&1 ||
	ue_die "debootstrap failed (log: $log)"
{
	echo "deb $mirror $suite main"
	echo "deb $mirror $suite-updates main"
	[[ -z $secmirror ]] || echo "deb $secmirror $suite-security main"
} >"$dir/etc/apt/sources.list"
# The guest mounts its own tmpfs, proc, sys, tracefs... on these.
mkdir -p "$dir"/{tmp,run,var/tmp,root,proc,sys,dev} "$dir/sys/kernel/tracing"
rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*_Packages
printf '%s\n' "$stamp" >"$dir/.ue-ready"
printf '%s\n' "$dir"
