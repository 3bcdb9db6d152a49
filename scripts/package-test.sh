#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-package`: test user-events-dkms the way a user gets it.
#
#   1. build build/user-events-dkms_<VERSION>_all.deb (scripts/build-deb.sh,
#      lintian must report no error) and check the version numbers
#      (scripts/check-versions.sh);
#   2. install it on this host (apt-get install ./<deb>): its postinst has
#      DKMS build and install the module for the installed kernels;
#   3. for each target kernel (scripts/kernels.sh, KVERS="rel ..." to choose):
#      DKMS status, the module file in /lib/modules/<rel>/updates/dkms/,
#      modinfo (license GPL, description, version == VERSION, srcversion,
#      vermagic, a description for every parameter), then boot the kernel in
#      QEMU and run scripts/package-smoke.sh there (modprobe the DKMS-built
#      module, tracefs files, an event round trip, rmmod, clean kernel log);
#   4. check the installed header, docs and configuration files;
#   5. purge the package and check nothing of it is left (also done on exit
#      when a step fails half way);
#   6. the same .deb on Debian 11 and 13: installed in each release's build
#      chroot, DKMS-built there for one kernel of the release, smoke-tested
#      in a guest of that kernel, purged (scripts/matrix/package.sh);
#   7. the same .deb on Debian 12 arm64 6.12 and on Debian 11 arm64 5.10,
#      where Debian 11's DKMS 2.8.4 builds it and the load is refused (no
#      CONFIG_KALLSYMS_ALL) (scripts/arm64/package-test.sh; not run by
#      `make check`).
#
# Needs root (it installs a package). A user-events-dkms package or a
# `make dkms-install` of this version found at the start is removed first.
# DKMS creates its module signing key /var/lib/dkms/mok.key on first use and
# keeps it (it is DKMS's, not the package's).
#
# Prints TAP-style "ok"/"not ok" lines and "N passed, N failed" last; the
# exit status is non-zero iff something failed.
# Environment: KVERS, V=1 (show guest consoles), UE_GUEST_TIMEOUT (600),
# UE_BUILD_DIR, UE_PACKAGE_MATRIX=0 (leave out step 6), UE_PACKAGE_ARM64=0
# (leave out step 7, arm64).
# shellcheck disable=SC2317 # functions run through check, trap and eval
set -uo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

pkg=user-events-dkms
name=user-events
guest_timeout=${UE_GUEST_TIMEOUT:-600}
out=$UE_BUILD/package-test
UE_TAP=
finish() {
	ue_finish "package test"
	exit
}

((EUID == 0)) || ue_die "must run as root: it installs and purges $pkg"
"$UE_REPO/scripts/package-setup.sh" || ue_die "scripts/package-setup.sh failed"
version=$(cat "$UE_REPO/VERSION")
deb=$UE_BUILD/${pkg}_${version}_all.deb
mapfile -t kernels < <("$UE_REPO/scripts/kernels.sh")
((${#kernels[@]})) || ue_die "no kernels to test"
rm -rf "$out"
mkdir -p "$out"
echo "version $version, kernels: ${kernels[*]}"

installed() { # installed, or only its configuration files left
	local s
	s=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null) || return 1
	[[ -n $s && $s != not-installed ]]
}
# apt-get waits for the dpkg lock another apt process may hold (UE_APT).
purge() { "${UE_APT[@]}" purge -y "$pkg" </dev/null >"$out/dpkg-purge.log" 2>&1; }
cleanup() {
	if installed; then
		echo "# cleanup: purging $pkg"
		purge || cat "$out/dpkg-purge.log"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# -- 1. build -----------------------------------------------------------------
ue_section "build the package"
if "$UE_REPO/scripts/build-deb.sh" >"$out/build-deb.log" 2>&1; then
	ue_ok "make deb builds ${deb##*/} (lintian: $(sed -n 's/^lintian: //p' "$out/build-deb.log" | tail -n 1))"
else
	ue_notok "make deb (log: $out/build-deb.log)"
	tail -n 30 "$out/build-deb.log" | sed 's/^/# /'
	finish
fi
grep -E '^  lintian: [EW]: ' "$out/build-deb.log" | sed 's/^/#/' || true
ue_relay '' "$UE_REPO/scripts/check-versions.sh" "$deb"

# -- 2. install ---------------------------------------------------------------
ue_section "install"
if installed; then
	echo "# $pkg is installed: purging it first"
	purge || { cat "$out/dpkg-purge.log"; ue_die "cannot purge the installed $pkg"; }
fi
if [[ -n $(dkms status -m "$name" -v "$version" 2>/dev/null) ]]; then
	echo "# removing the make dkms-install of $name $version"
	"$UE_REPO/scripts/dkms-install.sh" --remove >>"$out/dkms-remove.log" 2>&1
fi
if [[ -n $(dkms status -m "$name" 2>/dev/null) ]]; then
	echo "# removing other DKMS registrations of $name:"
	dkms status -m "$name" | sed 's/^/#   /'
	while read -r mv; do
		dkms remove "$mv" --all >>"$out/dkms-remove.log" 2>&1
		dpkg-query -S "/usr/src/${mv/\//-}" >/dev/null 2>&1 || rm -rf "/usr/src/${mv/\//-}"
	done < <(dkms status -m "$name" | sed 's/[,:].*//' | sort -u)
fi
if DEBIAN_FRONTEND=noninteractive "${UE_APT[@]}" -o Dpkg::Options::=--force-confdef \
	-o Dpkg::Options::=--force-confold install -y --no-install-recommends "$deb" \
	</dev/null >"$out/dpkg-install.log" 2>&1; then
	ue_ok "apt-get install ${deb##*/}"
else
	ue_notok "apt-get install ${deb##*/} (log: $out/dpkg-install.log)"
	grep -v readelf "$out/dpkg-install.log" | tail -n 30 | sed 's/^/# /'
	for f in /var/lib/dkms/$name/$version/build/make.log; do
		[[ -f $f ]] && tail -n 30 "$f" | sed 's/^/# make.log: /'
	done
	finish
fi
grep -E '^(Building for|Building initial module|Done\.|Skipped\.|Module build)' \
	"$out/dpkg-install.log" | sed 's/^/# postinst: /'

# -- 3. per kernel ------------------------------------------------------------
ko_of() { # the installed module file of a kernel, compressed or not
	local f
	for f in /lib/modules/$1/updates/dkms/user_events.ko{,.xz,.zst,.gz}; do
		[[ -f $f ]] && { echo "$f"; return 0; }
	done
	return 1
}
params_described() { # every parameter has a non-empty description
	local ko=$1 p t line desc missing=()
	# parmtype lines are "name:type"; parm lines "name:description (type)",
	# or "name: (type)" for a parameter without MODULE_PARM_DESC.
	while IFS=: read -r p t; do
		line=$(modinfo -F parm "$ko" | grep -m1 "^$p:")
		desc=${line#"$p:"}
		desc=${desc%" ($t)"}
		[[ $desc == *[![:space:]]* ]] || missing+=("$p")
	done < <(modinfo -F parmtype "$ko")
	((${#missing[@]} == 0)) || { echo "# no description: ${missing[*]}"; return 1; }
}

for rel in "${kernels[@]}"; do
	ue_section "$rel"
	ue_check "$rel: dkms status says installed" \
		grep -q ': installed' <<<"$(dkms status -m "$name" -v "$version" -k "$rel" 2>/dev/null)"
	if ! ko=$(ko_of "$rel"); then
		ue_notok "$rel: module in /lib/modules/$rel/updates/dkms/"
		continue
	fi
	ue_ok "$rel: module in $ko"
	ue_check "$rel: modinfo license is GPL" test "$(modinfo -F license "$ko")" = GPL
	ue_check "$rel: modinfo has a description" test -n "$(modinfo -F description "$ko")"
	ue_check "$rel: modinfo has a srcversion" test -n "$(modinfo -F srcversion "$ko")"
	ue_check "$rel: vermagic names $rel" grep -q "^$rel " <<<"$(modinfo -F vermagic "$ko")"
	ue_check "$rel: every module parameter has a description ($(modinfo -F parmtype "$ko" | cut -d: -f1 | xargs))" \
		params_described "$ko"
	# shellcheck disable=SC2016 # sh expands them
	ue_relay "$rel: " sh -c '"$0" "$1" | grep -E "^(ok|not ok) .*MODULE_VERSION"' \
		"$UE_REPO/scripts/check-versions.sh" "$ko"
	signer=$(modinfo -F signer "$ko")
	echo "# $rel: signer: ${signer:-none (unsigned)}"
	ue_check "$rel: modules.dep lists the DKMS module" \
		grep -q "^updates/dkms/user_events.ko" "/lib/modules/$rel/modules.dep"

	resdir=$UE_BUILD/$rel/package-guest
	runopts=(-o "$resdir" -t "$guest_timeout")
	[[ ${V:-0} == 1 ]] || runopts+=(-q)
	gstatus=0
	"$UE_REPO/scripts/guest/run.sh" "${runopts[@]}" "$rel" -- \
		"$UE_REPO/scripts/package-smoke.sh" "$version" || gstatus=$?
	if [[ -f $resdir/output.log ]]; then
		ue_relay '' cat "$resdir/output.log"
	fi
	if ((gstatus == 2)); then
		ue_notok "$rel: guest run (see $resdir/problems)"
		sed 's/^/# /' "$resdir/problems" 2>/dev/null
	elif ! grep -q "^# smoke $rel: " "$resdir/output.log" 2>/dev/null; then
		ue_notok "$rel: guest smoke script ran to the end"
	fi
done

# -- 4. package contents ------------------------------------------------------
ue_section "installed files"
hdr=/usr/include/user-events/linux/user_events.h
ue_check "header $hdr" test -f "$hdr"
cat >"$out/hdr.c" <<'EOF_C'
#include <linux/user_events.h>
_Static_assert(sizeof(struct user_reg) == 24, "status page ABI struct user_reg");
int main(void) { return DIAG_IOCSREG == 0; }
EOF_C
ue_check "the header compiles with -I/usr/include/user-events" \
	cc -Wall -Werror -fsyntax-only -I/usr/include/user-events "$out/hdr.c"
if command -v pkg-config >/dev/null; then
	ue_check "pkg-config --cflags user-events" \
		test "$(pkg-config --cflags user-events | xargs)" = "-I/usr/include/user-events"
fi
ue_check "no /usr/include/linux/user_events.h from $pkg" \
	eval "! dpkg -L $pkg | grep -qx /usr/include/linux/user_events.h"
ue_check "DKMS source /usr/src/$name-$version/dkms.conf" test -f "/usr/src/$name-$version/dkms.conf"
ue_check "documentation /usr/share/doc/$pkg/user_events.rst.gz" test -s "/usr/share/doc/$pkg/user_events.rst.gz"
ue_check "README.Debian" test -s "/usr/share/doc/$pkg/README.Debian"
# Every sample program builds against the installed header alone.
shopt -s nullglob
for c in "/usr/share/doc/$pkg/examples/"*.c; do
	ue_check "sample ${c##*/} builds with -I/usr/include/user-events" \
		cc -Wall -O2 -I/usr/include/user-events -o "$out/$(basename "$c" .c)" "$c"
done
shopt -u nullglob
ue_check "example /usr/share/doc/$pkg/examples/modules-load.d/user_events.conf" \
	test -f "/usr/share/doc/$pkg/examples/modules-load.d/user_events.conf"
ue_check "no /etc/modules-load.d/user_events.conf (loading at boot is opt-in)" \
	test ! -e /etc/modules-load.d/user_events.conf
# Its one active line: modprobe -r runs user-events-clear --unload (38ef145)
ue_check "conffile /etc/modprobe.d/user_events.conf: no active line but the remove command" \
	eval "! grep -v -E '^[[:space:]]*(#|$)|^remove user_events /usr/sbin/user-events-clear --unload user_events$' /etc/modprobe.d/user_events.conf"

# -- 5. purge -----------------------------------------------------------------
ue_section "purge"
if purge; then ue_ok "apt-get purge $pkg"; else ue_notok "apt-get purge $pkg (log: $out/dpkg-purge.log)"; fi
ue_check "dkms knows no $name any more" test -z "$(dkms status -m "$name" 2>/dev/null)"
ue_check "/usr/src/$name-$version is gone" test ! -e "/usr/src/$name-$version"
left=$(find /lib/modules/ -path '*/updates/dkms/user_events.ko*' 2>/dev/null)
ue_check "no user_events module left under /lib/modules${left:+ ($left)}" test -z "$left"
ue_check "/etc/modprobe.d/user_events.conf is gone" test ! -e /etc/modprobe.d/user_events.conf
ue_check "$hdr is gone" test ! -e "$hdr"
for rel in "${kernels[@]}"; do
	ue_check "$rel: modules.dep no longer lists user_events" \
		eval "! grep -q user_events /lib/modules/$rel/modules.dep"
done

# -- 6. Debian 11 and 13 --------------------------------------------------------
# The same .deb in each other release's build chroot, for one kernel of each
# (the "ci" targets of scripts/matrix/targets): that release's apt, dkms and
# compiler; the DKMS-built module smoke-tested in a guest of that kernel
# (scripts/matrix/package.sh). UE_PACKAGE_MATRIX=0 leaves it out.
if [[ ${UE_PACKAGE_MATRIX:-1} != 0 ]]; then
	while read -r suite kpkg tset _; do
		[[ -n $suite && $suite != \#* && $tset == ci ]] || continue
		ue_section "$suite ($kpkg)"
		ue_relay '' "$UE_REPO/scripts/matrix/package.sh" "$deb" "$suite" "$kpkg"
	done <"$UE_REPO/scripts/matrix/targets"
fi

# -- 7. arm64 -------------------------------------------------------------------
# The same .deb on Debian 12's arm64 6.12 (scripts/arm64/package-test.sh:
# DKMS builds the module natively under qemu-user, a qemu-system-aarch64
# guest smoke-tests it). About 19 minutes, and the arm64 root the first
# time: `make check` (so CI) leaves it out with UE_PACKAGE_ARM64=0. Then
# Debian 11's arm64 5.10 on a Debian 11 arm64 root: its DKMS 2.8.4 ignores
# BUILD_EXCLUSIVE_CONFIG, so it builds the module, and the load must be
# refused with the reason (about 10 minutes, and 4 for the Debian 11
# arm64 root the first time).
if [[ ${UE_PACKAGE_ARM64:-1} != 0 ]]; then
	ue_section "arm64"
	ue_relay '' "$UE_REPO/scripts/arm64/package-test.sh"
	ue_section "arm64 Debian 11"
	if rel510=$("$UE_REPO/scripts/arm64/kernels.sh" --series 5.10 2>/dev/null); then
		ue_relay '' "$UE_REPO/scripts/arm64/package-test.sh" "$rel510"
	else
		ue_notok "arm64 package: no Debian 11 arm64 5.10 kernel served by the archive"
	fi
fi

finish
