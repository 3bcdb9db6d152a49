#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the arm64 kernel releases `make check-arm64` builds and tests for,
# one per line. Default: the newest 6.12 release of Debian 12
# (bookworm-security) and of Debian 13 in Debian's archive, generic flavour
# (found through scripts/arm64/apt.sh; nothing is installed on the host).
# With KVERS_ARM64="rel1 rel2 ..." set, exactly those.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

if [[ -n ${KVERS_ARM64:-} ]]; then
	read -r -a want <<<"$KVERS_ARM64"
	printf '%s\n' "${want[@]}"
	exit 0
fi
mapfile -t all < <("$UE_REPO/scripts/arm64/apt.sh" apt-cache search --names-only \
	'^linux-image-6\.12\.[0-9]+\+deb1[23]-arm64$' | awk '{ print $1 }' |
	sed 's/^linux-image-//' | sort -V)
for deb in deb12 deb13; do
	newest=
	for rel in "${all[@]}"; do
		[[ $rel == *+"$deb"-arm64 ]] && newest=$rel
	done
	[[ -n $newest ]] || ue_die "no 6.12 $deb arm64 kernel in Debian's archive"
	printf '%s\n' "$newest"
done
