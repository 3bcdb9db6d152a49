#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/matrix/package.sh <deb> <suite> <linux-image package>
#
# The Debian package on another Debian release, without touching the host:
# install <deb> with apt in <suite>'s build chroot (scripts/matrix/chroot.sh;
# its apt pulls in that release's dkms), where the kernel's headers are
# (scripts/matrix/kernel.sh), so that the package's postinst has that
# release's DKMS build the module for that kernel with that release's
# compiler. Then check DKMS's status and the built module (modinfo), boot
# the kernel (scripts/guest/run.sh --kernel --modules) and run
# scripts/package-smoke.sh there inside the chroot, whose modprobe,
# /etc/modprobe.d and user-events-clear are the package's, and purge the
# package in the chroot.
#
# Prints "ok"/"not ok" lines (scripts/package-test.sh counts them); the exit
# status is non-zero iff one failed. Needs root. Environment: V=1,
# UE_GUEST_TIMEOUT (600), UE_BUILD_DIR.
set -uo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# == 3)) || ue_die "usage: $0 <deb> <suite> <linux-image package>"
deb=$1 suite=$2 pkg=$3
[[ -f $deb ]] || ue_die "no $deb"
((EUID == 0)) || ue_die "needs root (chroot)"
name=user-events
dpkgname=user-events-dkms
version=$(dpkg-deb -f "$deb" Version)
fail=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
check() { # check <description> <command...>
	local what=$1
	shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}

mapfile -t k < <("$UE_REPO/scripts/matrix/kernel.sh" "$suite" "$pkg")
((${#k[@]} == 3)) || ue_die "$suite $pkg: no kernel"
rel=${k[0]} vmlinuz=${k[1]} moddir=${k[2]}
# python3: package-smoke.sh's event round trip (register, write, trace).
root=$("$UE_REPO/scripts/matrix/chroot.sh" "$suite" "linux-headers-$rel" python3)
out=$UE_BUILD/package-test/$suite-$rel
rm -rf "$out"
mkdir -p "$out"
echo "# $suite: kernel $rel, package $version"

in_chroot() { ue_in_chroot "$root" "$@"; }
# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
installed() {
	local s
	s=$(in_chroot dpkg-query -W -f='${db:Status-Status}' "$dpkgname" 2>/dev/null) || return 1
	[[ -n $s && $s != not-installed ]]
}
purge() {
	in_chroot apt-get purge -y -qq -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=600 "$dpkgname" >"$out/purge.log" 2>&1
}
cleanup() {
	if installed; then
		echo "# cleanup: purging $dpkgname in the $suite chroot"
		purge || tail -n 20 "$out/purge.log" | sed 's/^/# /'
	fi
	rm -f "$root/tmp/${deb##*/}"
}
trap cleanup EXIT

# One package test at a time per chroot (installs are not reentrant).
exec {lockfd}>"$(ue_cache_dir)/chroot/.$suite.package.lock"
flock "$lockfd"

installed && { purge || ue_die "$suite: cannot purge the installed $dpkgname"; }
cp "$deb" "$root/tmp/"
if in_chroot apt-get install -y -qq -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=600 --no-install-recommends \
	"/tmp/${deb##*/}" </dev/null >"$out/install.log" 2>&1; then
	# shellcheck disable=SC2016 # dpkg-query's format
	ok "$suite: apt-get install ${deb##*/} (dkms $(in_chroot dpkg-query -W -f='${Version}' dkms))"
else
	notok "$suite: apt-get install ${deb##*/} (log: $out/install.log)"
	tail -n 30 "$out/install.log" | sed 's/^/# /'
	exit 1
fi
# The postinst builds for the kernels whose headers are there; building for
# $rel explicitly covers a DKMS that only looks at the running kernel.
if ! grep -q ': installed' <<<"$(in_chroot dkms status -m "$name" -v "$version" -k "$rel" 2>/dev/null)"; then
	echo "# $suite: the postinst did not build for $rel: dkms install -k $rel"
	in_chroot dkms install -m "$name" -v "$version" -k "$rel" >>"$out/install.log" 2>&1
fi
check "$suite: $rel: dkms status says installed" \
	grep -q ': installed' <<<"$(in_chroot dkms status -m "$name" -v "$version" -k "$rel" 2>/dev/null)"
ko=
for f in "$root"/lib/modules/"$rel"/updates/dkms/user_events.ko{,.xz,.zst,.gz}; do
	[[ -f $f ]] && ko=$f && break
done
if [[ -z $ko ]]; then
	notok "$suite: $rel: module in /lib/modules/$rel/updates/dkms/ of the chroot"
	f=$root/var/lib/dkms/$name/$version/build/make.log
	[[ -f $f ]] && tail -n 30 "$f" | sed 's/^/# make.log: /'
	exit 1
fi
ok "$suite: $rel: DKMS built ${ko#"$root"}"
check "$suite: $rel: vermagic names $rel" grep -q "^$rel " <<<"$(modinfo -F vermagic "$ko")"
check "$suite: $rel: modinfo version is $version" test "$(modinfo -F version "$ko")" = "$version"
case $ko in
*.xz) cat_ko=(xz -dc) ;;
*.zst) cat_ko=(zstd -dcq) ;;
*.gz) cat_ko=(gzip -dc) ;;
*) cat_ko=(cat) ;;
esac
cc_line=$("${cat_ko[@]}" "$ko" | grep -a -o -m1 'GCC: ([^)]*) [0-9.]*' | head -n 1)
echo "# $suite: $rel: built by ${cc_line:-an unknown compiler}"

# The smoke test runs in the guest inside the chroot itself (read-only over
# 9p, with its own proc, sys, dev, tracefs and tmpfs mounts): the module
# modprobe finds is the one DKMS installed there, and `modprobe -r` uses the
# package's /etc/modprobe.d file and user-events-clear, run by that
# release's bash and kmod.
# The repository is bound at /ue-repo inside the chroot (package-smoke.sh
# needs scripts/lib.sh and package-smoke.py next to it).
mkdir -p "$root/ue-repo"
cat >"$out/smoke-in-chroot.sh" <<EOF_SH
#!/bin/sh
r=$root
mount -t proc proc \$r/proc && mount -t sysfs sysfs \$r/sys &&
	mount -t devtmpfs devtmpfs \$r/dev && mount -t tracefs tracefs \$r/sys/kernel/tracing &&
	mount -t tmpfs tmpfs \$r/tmp && mount -t tmpfs tmpfs \$r/run &&
	mount --bind $UE_REPO \$r/ue-repo || exit 1
exec chroot \$r /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C \
	UE_BUILD_DIR=/tmp/ue-build /bin/bash /ue-repo/scripts/package-smoke.sh $version
EOF_SH
chmod 755 "$out/smoke-in-chroot.sh"
resdir=$out/guest
runopts=(-o "$resdir" -t "${UE_GUEST_TIMEOUT:-600}" --kernel "$vmlinuz"
	--modules "${moddir%/lib/modules/"$rel"}")
[[ ${V:-0} == 1 ]] || runopts+=(-q)
gstatus=0
"$UE_REPO/scripts/guest/run.sh" "${runopts[@]}" "$rel" -- "$out/smoke-in-chroot.sh" || gstatus=$?
if [[ -f $resdir/output.log ]]; then
	while IFS= read -r line; do
		echo "$line"
		[[ $line == 'not ok'* ]] && fail=$((fail + 1))
	done < <(grep -a -E '^(ok|not ok|#)' "$resdir/output.log")
fi
if ((gstatus == 2)); then
	notok "$suite: $rel: guest run (see $resdir/problems)"
	sed 's/^/# /' "$resdir/problems" 2>/dev/null
elif ! grep -q "^# smoke $rel: " "$resdir/output.log" 2>/dev/null; then
	notok "$suite: $rel: guest smoke script ran to the end"
fi

if purge; then
	ok "$suite: apt-get purge $dpkgname"
else
	notok "$suite: apt-get purge $dpkgname (log: $out/purge.log)"
fi
check "$suite: dkms knows no $name any more" \
	test -z "$(in_chroot dkms status -m "$name" 2>/dev/null)"
left=$(find "$root/lib/modules/" -path '*/updates/dkms/user_events.ko*' 2>/dev/null)
check "$suite: no user_events module left${left:+ ($left)}" test -z "$left"
((fail == 0))
