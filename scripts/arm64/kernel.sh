#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/kernel.sh <release>
#
# Print the directory holding Debian's arm64 kernel <release> (for example
# 6.12.117+deb13-arm64) unpacked from its packages: the image and modules
# (linux-image-<release>), the headers (linux-headers-<release> and its
# -common), and the amd64 build tools they need (linux-kbuild-*), all taken
# with `apt-get download` through scripts/arm64/apt.sh, extracted with
# dpkg-deb -x and indexed with depmod -b. Nothing is installed on the host
# and nothing points into its /boot or /lib/modules. Layout of the result:
#   DIR/boot/vmlinuz-<release>       the image QEMU boots
#   DIR/lib/modules/<release>/       its modules, with modules.dep
#   DIR/build                        the headers tree to build modules with
#   DIR/config                       the kernel's .config
#   DIR/gcc                          the gcc package the headers ask for
# Cached under $(ue_cache_dir)/arm64/kernels/<release>.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# == 1)) || ue_die "usage: $0 <arm64 kernel release>"
rel=$1
[[ $rel =~ ^[0-9][0-9a-z.+~-]*-arm64$ ]] || ue_die "not an arm64 kernel release: $rel"
apt=$UE_REPO/scripts/arm64/apt.sh
base=$(ue_cache_dir)/arm64/kernels
dir=$base/$rel
mkdir -p "$base"
exec {lockfd}>"$base/.$rel.lock"
flock "$lockfd"
if [[ -f $dir/.ue-ready ]]; then
	printf '%s\n' "$dir"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/debs"
# The headers package names the rest: its -common, linux-kbuild and gcc.
deps=$("$apt" apt-cache show --no-all-versions "linux-headers-$rel:arm64" |
	sed -n 's/^Depends: //p' | head -n 1) ||
	ue_die "no linux-headers-$rel for arm64 in Debian's archive"
[[ -n $deps ]] || ue_die "no linux-headers-$rel for arm64 in Debian's archive"
pkgs=("linux-image-$rel:arm64" "linux-headers-$rel:arm64")
gcc=
IFS=, read -r -a dlist <<<"$deps"
for dep in "${dlist[@]}"; do
	name=$(awk '{ print $1 }' <<<"$dep")
	case $name in
	linux-headers-*-common*) pkgs+=("$name") ;;
	linux-kbuild-*) pkgs+=("$name:amd64") ;;
	gcc-[0-9]*) gcc=$name ;;
	esac
done
[[ -n $gcc ]] || ue_die "linux-headers-$rel names no gcc: $deps"
(cd "$dir/debs" && "$apt" apt-get -q download "${pkgs[@]}" >&2) ||
	ue_die "apt-get download ${pkgs[*]} failed"
for deb in "$dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$dir/root"
done
rm -rf "$dir/debs"

r=$dir/root
# Debian 13 is merged-/usr: its packages ship usr/lib/modules.
mods=$r/lib/modules/$rel
[[ -d $mods ]] || mods=$r/usr/lib/modules/$rel
[[ -d $mods ]] || ue_die "linux-image-$rel has no modules directory"
image=$r/boot/vmlinuz-$rel
[[ -f $image ]] || ue_die "linux-image-$rel has no /boot/vmlinuz-$rel"
depmod -b "${mods%/lib/modules/*}" "$rel" || ue_die "depmod -b failed for $rel"
mkdir -p "$dir/boot" "$dir/lib/modules"
ln -s "../root/boot/vmlinuz-$rel" "$dir/boot/vmlinuz-$rel"
ln -s "../../${mods#"$dir"/}" "$dir/lib/modules/$rel"
ln -s "root/usr/src/linux-headers-$rel" "$dir/build"
[[ -f $dir/build/Makefile ]] || ue_die "linux-headers-$rel has no Makefile"
# Debian's headers Makefile includes its -common tree by absolute path: point
# it at the extracted copy, never at a tree the host may have installed.
sed -i "s|^include /usr/src/|include $r/usr/src/|" "$dir/build/Makefile"
grep -q "^include $r/usr/src/linux-headers-.*-common/Makefile" "$dir/build/Makefile" ||
	ue_die "unexpected headers Makefile in linux-headers-$rel"
cp "$r/boot/config-$rel" "$dir/config"
printf '%s\n' "$gcc" >"$dir/gcc"
touch "$dir/.ue-ready"
printf '%s\n' "$dir"
