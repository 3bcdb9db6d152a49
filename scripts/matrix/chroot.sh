#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/matrix/chroot.sh <suite> [package...]
#
# Print the path of a Debian <suite> (bullseye, bookworm, trixie) amd64
# build chroot, created with `debootstrap --variant=buildd` on first use and
# cached outside the repository, next to the other caches:
# $(ue_cache_dir)/chroot/<suite>. It holds that release's own gcc, make and
# libc headers; the packages named (kernel headers, usually) are installed
# into it with its own apt. Nothing of another release is ever installed on
# the host.
#
# The chroot's apt sources: <suite>, <suite>-updates and <suite>-security
# from the same archive as the host's (UE_DEBIAN_MIRROR overrides it).
# Run as root (debootstrap and chroot need it).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# >= 1)) || ue_die "usage: $0 <suite> [package...]"
suite=$1
shift
[[ $suite =~ ^[a-z]+$ ]] || ue_die "bad suite name: $suite"
((EUID == 0)) || ue_die "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || ue_die "debootstrap missing (run scripts/setup.sh)"

mirror=${UE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
secmirror=${mirror%/debian}/debian-security
base=$(ue_cache_dir)/chroot
dir=$base/$suite
mkdir -p "$base"

# One setup at a time per chroot (several matrix runs may start together).
exec {lockfd}>"$base/.$suite.lock"
flock "$lockfd"

if [[ ! -f $dir/.ue-ready ]]; then
	rm -rf "$dir"
	ue_note "$suite: debootstrap --variant=buildd into $dir (about a minute)"
	debootstrap --variant=buildd --arch=amd64 --include=kmod,ca-certificates \
		"$suite" "$dir" "$mirror" >"$base/$suite-debootstrap.log" 2>&1 ||
		ue_die "debootstrap $suite failed (log: $base/$suite-debootstrap.log)"
	{
		echo "deb $mirror $suite main"
		echo "deb $mirror $suite-updates main"
		echo "deb $secmirror $suite-security main"
	} >"$dir/etc/apt/sources.list"
	touch "$dir/.ue-ready"
	touch "$dir/.ue-update-needed"
fi

in_chroot() { ue_in_chroot "$dir" "$@"; }

# The archive's lists: debootstrap fetched only <suite> itself.
if [[ -f $dir/.ue-update-needed ]]; then
	in_chroot apt-get update -qq >&2 || ue_die "$suite: apt-get update failed"
	rm -f "$dir/.ue-update-needed"
fi

missing=()
for p in "$@"; do
	in_chroot dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
		grep -qx installed || missing+=("$p")
done
if ((${#missing[@]})); then
	if ! in_chroot apt-cache show "${missing[@]}" >/dev/null 2>&1; then
		in_chroot apt-get update -qq >&2 || ue_die "$suite: apt-get update failed"
	fi
	ue_note "$suite: installing ${missing[*]}"
	in_chroot apt-get install -y -qq -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=600 --no-install-recommends \
		"${missing[@]}" >&2 || ue_die "$suite: apt-get install ${missing[*]} failed"
fi
printf '%s\n' "$dir"
