#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/cross-chroot.sh <suite> <gcc package> [-- command...]
#
# A Debian <suite> amd64 chroot holding that release's arm64 cross compiler
# (<gcc package>-aarch64-linux-gnu, e.g. gcc-14 on Debian 13), for building
# the module against arm64 kernel headers whose compiler the host does not
# have. Never installs another release's compiler on the host. Created with
# `debootstrap --variant=buildd` on first use, cached in
# $(ue_cache_dir)/arm64/cross-<suite>.
#
# Without a command: print the chroot's path. With one: run it inside the
# chroot, in a private mount namespace where the cache directory and the
# build directory (UE_BUILD) are bind-mounted at their own paths, with
# CROSS_COMPILE=aarch64-linux-gnu- and CC naming the versioned compiler.
# Run as root.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# >= 2)) || ue_die "usage: $0 <suite> <gcc package> [-- command...]"
suite=$1 gcc=$2
shift 2
[[ $suite =~ ^[a-z]+$ ]] || ue_die "bad suite: $suite"
[[ $gcc =~ ^gcc-[0-9]+$ ]] || ue_die "bad gcc package: $gcc"
((EUID == 0)) || ue_die "needs root (debootstrap, chroot)"
mirror=${UE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
secmirror=${mirror%/debian}/debian-security
cache=$(ue_cache_dir)
base=$cache/arm64
dir=$base/cross-$suite
mkdir -p "$base"

(
	flock 9
	if [[ ! -f $dir/.ue-ready ]]; then
		rm -rf "$dir"
		log=$base/cross-$suite-debootstrap.log
		ue_note "$suite: debootstrap --variant=buildd into $dir (a minute or two)"
		debootstrap --variant=buildd --arch=amd64 --include=kmod,bc,bison,flex,libelf-dev,libssl-dev \
			"$suite" "$dir" "$mirror" >"$log" 2>&1 ||
			ue_die "debootstrap $suite failed (log: $log)"
		{
			echo "deb $mirror $suite main"
			echo "deb $mirror $suite-updates main"
			echo "deb $secmirror $suite-security main"
		} >"$dir/etc/apt/sources.list"
		touch "$dir/.ue-ready"
	fi
	# pahole: the headers' Makefile makes the module's BTF with it
	if [[ ! -x $dir/usr/bin/aarch64-linux-gnu-$gcc || ! -x $dir/usr/bin/pahole ]]; then
		ue_note "$suite: installing $gcc-aarch64-linux-gnu and dwarves in $dir"
		# shellcheck disable=SC2016 # expanded by the inner shell
		unshare -m sh -c 'mount -t proc proc "$1/proc" &&
			chroot "$1" apt-get -q update &&
			DEBIAN_FRONTEND=noninteractive chroot "$1" apt-get -q -y \
				--no-install-recommends install "$2-aarch64-linux-gnu" dwarves' \
			sh "$dir" "$gcc" >"$base/cross-$suite-apt.log" 2>&1 ||
			ue_die "installing $gcc-aarch64-linux-gnu failed (log: $base/cross-$suite-apt.log)"
	fi
) 9>"$base/.cross-$suite.lock"

if (($# == 0)); then
	printf '%s\n' "$dir"
	exit 0
fi
[[ $1 == -- ]] && shift
(($#)) || ue_die "no command"
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare -m sh -c '
	d=$1 cache=$2 build=$3 pwd=$4 gcc=$5
	shift 5
	for b in "$cache" "$build"; do
		mkdir -p "$d$b" && mount --bind "$b" "$d$b" || exit 125
	done
	mount -t proc proc "$d/proc" || exit 125
	exec chroot "$d" /usr/bin/env CROSS_COMPILE=aarch64-linux-gnu- \
		CC="aarch64-linux-gnu-$gcc" HOSTCC=gcc \
		sh -c "cd \"\$0\" 2>/dev/null || cd /; exec \"\$@\"" "$pwd" "$@"
' sh "$dir" "$cache" "$UE_BUILD" "$PWD" "$gcc" "$@"
