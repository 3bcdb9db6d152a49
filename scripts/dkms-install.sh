#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install user_events.ko from this source tree with DKMS, or remove it again.
#
#   scripts/dkms-install.sh              `make dkms-install`
#   scripts/dkms-install.sh --remove     `make dkms-remove`
#
# Install: copies the module sources (scripts/dkms-source.sh) to
# /usr/src/user-events-<VERSION>, then runs dkms add, and dkms build and
# dkms install for every installed kernel that has headers
# (/lib/modules/<release>/build), or for KVERS="rel ..." when set. A previous
# DKMS registration of the same version is removed first. Also installs the
# commented-out example /etc/modprobe.d/user_events.conf (if absent) and,
# with LOAD_AT_BOOT=1, /etc/modules-load.d/user_events.conf so systemd loads
# the module at boot.
#
# Remove: dkms remove --all for this version, deletes
# /usr/src/user-events-<VERSION>, and the two /etc files above when they are
# unchanged copies of ours.
#
# Refuses to touch a version that the user-events-dkms Debian package owns.
# Needs root.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

name=user-events
version=$(cat "$UE_REPO/VERSION")
srcdir=/usr/src/$name-$version
modprobe_conf=/etc/modprobe.d/user_events.conf
modules_load_conf=/etc/modules-load.d/user_events.conf

mode=install
case ${1:-} in
'') ;;
--remove) mode=remove ;;
*) ue_die "usage: $0 [--remove]" ;;
esac

((EUID == 0)) || ue_die "must run as root (try: sudo make dkms-$mode)"
command -v dkms >/dev/null || ue_die "dkms is not installed (run scripts/package-setup.sh)"

if dpkg-query -S "$srcdir" >/dev/null 2>&1; then
	ue_die "$srcdir belongs to the Debian package $(dpkg-query -S "$srcdir" | cut -d: -f1); use apt/dpkg to change it"
fi

registered() {
	[[ -n $(dkms status -m "$name" -v "$version" 2>/dev/null) ]]
}

# Remove an /etc file only when it is an unchanged copy of ours.
remove_if_ours() {
	local installed=$1 ours=$2
	if [[ -f $installed ]] && cmp -s "$installed" "$ours"; then
		rm -f "$installed"
		echo "removed $installed"
	elif [[ -e $installed ]]; then
		ue_note "keeping $installed (changed locally)"
	fi
}

if [[ $mode == remove ]]; then
	if registered; then
		dkms remove -m "$name" -v "$version" --all
	else
		echo "$name/$version is not registered with DKMS"
	fi
	rm -rf "$srcdir"
	remove_if_ours "$modprobe_conf" "$UE_REPO/packaging/modprobe.d/user_events.conf"
	remove_if_ours "$modules_load_conf" "$UE_REPO/packaging/modules-load.d/user_events.conf"
	exit 0
fi

"$UE_REPO/scripts/check-versions.sh" >/dev/null ||
	ue_die "version numbers disagree (run scripts/check-versions.sh)"

if [[ -n ${KVERS:-} ]]; then
	read -r -a kernels <<<"$KVERS"
else
	kernels=()
	for d in /lib/modules/*/; do
		rel=${d%/}
		rel=${rel##*/}
		[[ -f /lib/modules/$rel/build/Makefile ]] && kernels+=("$rel")
	done
fi
((${#kernels[@]})) || ue_die "no installed kernel has headers (install linux-headers-<release>)"

if registered; then
	echo "removing the previous DKMS registration of $name/$version"
	dkms remove -m "$name" -v "$version" --all
fi
rm -rf "$srcdir"
"$UE_REPO/scripts/dkms-source.sh" "$srcdir"
dkms add -m "$name" -v "$version"

failed=()
for rel in "${kernels[@]}"; do
	echo "=== $rel"
	status=0
	dkms build -m "$name" -v "$version" -k "$rel" || status=$?
	if ((status == 77)); then
		echo "$rel: skipped (BUILD_EXCLUSIVE_* in dkms.conf)"
		continue
	elif ((status != 0)); then
		failed+=("$rel (build, see /var/lib/dkms/$name/$version/build/make.log)")
		continue
	fi
	dkms install -m "$name" -v "$version" -k "$rel" || failed+=("$rel (install)")
done

if [[ -d $UE_REPO/packaging/modprobe.d && ! -e $modprobe_conf ]]; then
	install -D -m 0644 "$UE_REPO/packaging/modprobe.d/user_events.conf" "$modprobe_conf"
	echo "installed $modprobe_conf (examples, all commented out)"
fi
if [[ ${LOAD_AT_BOOT:-0} == 1 ]]; then
	install -D -m 0644 "$UE_REPO/packaging/modules-load.d/user_events.conf" "$modules_load_conf"
	echo "installed $modules_load_conf: user_events loads at boot"
fi

dkms status -m "$name" -v "$version"
((${#failed[@]} == 0)) || ue_die "failed for: ${failed[*]}"
