#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel releases to build and test for, one per line.
#
# Default: the newest installed 6.1 and the newest installed 6.12 release of
# the generic flavour (no -rt-/-cloud- variants) that have both
# /boot/vmlinuz-<rel> and /lib/modules/<rel>/build.
# With KVERS="rel1 rel2 ..." set, exactly those (any flavour, RT included),
# after checking each has an image and headers.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usable() {
	[[ -f /boot/vmlinuz-$1 && -f /lib/modules/$1/build/Makefile ]]
}

if [[ -n ${KVERS:-} ]]; then
	read -r -a want <<<"$KVERS"
	for rel in "${want[@]}"; do
		[[ -f /boot/vmlinuz-$rel ]] ||
			ue_die "KVERS: $rel has no /boot/vmlinuz-$rel (install linux-image-$rel)"
		[[ -f /lib/modules/$rel/build/Makefile ]] ||
			ue_die "KVERS: $rel has no /lib/modules/$rel/build (install linux-headers-$rel)"
		printf '%s\n' "$rel"
	done
	exit 0
fi

mapfile -t all < <(find /boot -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' |
	sed 's/^vmlinuz-//' | grep -Ev -- '-(rt|cloud)-' | sort -V)

for series in 6.1 6.12; do
	newest=
	for rel in "${all[@]}"; do
		[[ $rel == "$series".* ]] || continue
		usable "$rel" && newest=$rel
	done
	[[ -n $newest ]] ||
		ue_die "no installed $series kernel with image and headers (run scripts/setup.sh)"
	printf '%s\n' "$newest"
done
