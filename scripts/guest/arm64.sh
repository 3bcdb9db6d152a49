# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by scripts/guest/run.sh for `--arch arm64`: what differs when the
# guest is one of Debian's arm64 kernels under qemu-system-aarch64 (TCG,
# -M virt -cpu max). Everything else (the command file, the results share,
# the console scan, the result file, the exit status) is run.sh's own.
#
# The kernel comes from its packages, extracted (scripts/arm64/kernel.sh);
# the guest's root is not the host's (amd64) but a Debian 12 arm64 root of
# its own (scripts/arm64/root.sh), shared read-only over 9p like the host
# root is on amd64. The repository and the build directory are shared at
# their own paths on top of it, so commands name host paths as on amd64.
#
# In: rel, accel, shares. Out: qemu_sys (QEMU binary and machine options),
# vmlinux, initrd, hostroot (the directory shared as the guest's root),
# console (the kernel's console device).
# shellcheck disable=SC2034,SC2154 # run.sh's variables

command -v qemu-system-aarch64 >/dev/null ||
	ue_die "qemu-system-aarch64 missing (run scripts/setup.sh)"
[[ $rel == *-arm64 ]] || ue_die "--arch arm64 wants an arm64 kernel release, not $rel"
ue_arm64_kdir=$("$UE_REPO/scripts/arm64/kernel.sh" "$rel")
vmlinux=$ue_arm64_kdir/boot/vmlinuz-$rel
initrd=$("$UE_REPO/scripts/arm64/initramfs.sh" "$rel")
# UE_ARM64_ROOT: another arm64 root (scripts/arm64/package-test.sh)
hostroot=${UE_ARM64_ROOT:-$("$UE_REPO/scripts/arm64/root.sh")}
console=ttyAMA0
# pauth-impdef: QEMU's own pointer-authentication hash, much faster under
# TCG than the architected QARMA one.
# shellcheck disable=SC2054 # commas belong to the option value
qemu_sys=(qemu-system-aarch64 -M virt -accel "$accel" -cpu max,pauth-impdef=on)
# The kernel's own modules (fuse, for the FUSE selftest), shared and
# mounted at /lib/modules/<release> in the guest (uemodules, run.sh),
# unless the root has them (the package test's, with the kernel installed)
ue_arm64_mods=
if [[ ! -d $hostroot/lib/modules/$rel ]]; then
	ue_arm64_mods=$(cd "$ue_arm64_kdir/lib/modules/$rel" && pwd -P)
	mkdir -p "$hostroot/lib/modules"
fi
for d in "$UE_REPO" "$UE_BUILD" ${ue_arm64_mods:+"$ue_arm64_mods"}; do
	[[ $d == "$UE_REPO"/* ]] && continue
	[[ " ${shares[*]} " == *" $d "* ]] || shares+=("$d")
done
# The guest cannot create mount points in its read-only root: make them.
for d in "${shares[@]}" "${extra_shares[@]}"; do
	mkdir -p "$hostroot$d" || ue_die "cannot create mount point $hostroot$d"
done
# The kernel's config where the tests look for it (/boot/config-<release>),
# as on a machine where it is installed.
mkdir -p "$hostroot/boot"
cmp -s "$ue_arm64_kdir/config" "$hostroot/boot/config-$rel" ||
	cp "$ue_arm64_kdir/config" "$hostroot/boot/config-$rel"
