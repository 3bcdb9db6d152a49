#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/guest/vmlinux.sh <release | image path>
# scripts/guest/vmlinux.sh <release> <image path>
#
# Print the path of the uncompressed vmlinux ELF inside /boot/vmlinuz-<release>
# or the given bzImage (extracted once, cached outside the repo; an image
# that is an ELF already is printed as it is). QEMU boots that ELF through
# its PVH entry point, much faster than booting the bzImage.
#
# The bzImage payload is xz (6.1) or zstd (6.12) compressed; we look for each
# compressor's magic, decompress from there and keep the first result that is
# an ELF image.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# == 1 || $# == 2)) || ue_die "usage: $0 <kernel release | image path> | <release> <image path>"
image=${2:-$1}
[[ $image == */* ]] || image=/boot/vmlinuz-$1
[[ -f $image ]] || ue_die "no $image"

is_elf() {
	[[ $(head -c 4 -- "$1" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]]
}
if is_elf "$image"; then
	printf '%s\n' "$image"
	exit 0
fi

# One cache entry per image path (its extractions replace each other).
key=$(ue_files_key "$image")
out=$(ue_cache_dir)/vmlinux/$(realpath "$image" | sha256sum | cut -c1-12)-${image##*/}/vmlinux-$key
if [[ -s $out ]]; then
	printf '%s\n' "$out"
	exit 0
fi
mkdir -p "${out%/*}"

tmp=$(mktemp "${out}.tmp.XXXXXX")
trap 'rm -f "$tmp"' EXIT

# name:grep -P pattern of the magic:decompressor
formats=(
	'xz:\xfd\x37\x7a\x58\x5a\x00:xz -dc'
	'zstd:\x28\xb5\x2f\xfd:zstd -dcq'
	'gzip:\x1f\x8b\x08:gzip -dc'
	'lzma:\x5d\x00\x00\x00:xz -dc --format=lzma'
)
found=
for fmt in "${formats[@]}"; do
	IFS=: read -r name magic cmd <<<"$fmt"
	read -r -a dec <<<"$cmd"
	while read -r off; do
		# Trailing data after the payload makes the decompressor complain;
		# what it wrote before that is all we need, so judge the output.
		tail -c "+$((off + 1))" -- "$image" | "${dec[@]}" >"$tmp" 2>/dev/null || true
		if [[ -s $tmp ]] && is_elf "$tmp"; then
			found=$name
			break 2
		fi
	done < <(LC_ALL=C grep -obUaP -- "$magic" "$image" | cut -d: -f1 | head -n 20)
done
[[ -n $found ]] || ue_die "no compressed vmlinux ELF found in $image"

# Drop stale extractions of older builds of the same release.
find "${out%/*}" -maxdepth 1 -name 'vmlinux-*' ! -name '*.tmp.*' -delete
mv -f "$tmp" "$out"
trap - EXIT
printf '%s\n' "$out"
