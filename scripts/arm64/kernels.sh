#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the arm64 kernel releases `make check-arm64` builds and tests for,
# one per line. Default: the newest 6.12 release of Debian 12
# (bookworm-security) and of Debian 13 in Debian's archive, then the newest
# served Debian 12 6.1 and Debian 11 5.10 (kernels without
# CONFIG_KALLSYMS_ALL, where the module derives the tracing core's
# variables), generic flavour (found through scripts/arm64/apt.sh; nothing
# is installed on the host).
# With KVERS_ARM64="rel1 rel2 ..." set, exactly those.
#
# scripts/arm64/kernels.sh --series <6.1 | 5.10>
#   prints the newest generic arm64 release of that series (Debian 12's 6.1,
#   Debian 11's 5.10, both without CONFIG_KALLSYMS_ALL) whose image the
#   archive actually serves: a mirror may list security updates whose files
#   it does not carry (bullseye-security's 5.10.0-39...46-arm64 here).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

apt=$UE_REPO/scripts/arm64/apt.sh
if [[ ${1:-} == --series ]]; then
	series=${2:-}
	[[ $series == 6.1 || $series == 5.10 ]] || ue_die "usage: $0 --series <6.1 | 5.10>"
	mapfile -t cands < <("$apt" apt-cache search --names-only \
		"^linux-image-${series//./\\.}\\.0-[0-9]+-arm64\$" | awk '{ print $1 }' |
		sed 's/^linux-image-//' | sort -V -r)
	for c in "${cands[@]}"; do
		url=$("$apt" apt-get download --print-uris "linux-image-$c:arm64" 2>/dev/null |
			sed -n "s/^'\([^']*\)' .*/\1/p" | head -n 1)
		if [[ -n $url ]] && curl -sfI -o /dev/null "$url"; then
			printf '%s\n' "$c"
			exit 0
		fi
		echo "# $c: the archive lists it but does not serve ${url:-its image}" >&2
	done
	ue_die "no $series arm64 kernel served by Debian's archive"
fi
(($# == 0)) || ue_die "usage: $0 [--series <6.1 | 5.10>]"

if [[ -n ${KVERS_ARM64:-} ]]; then
	read -r -a want <<<"$KVERS_ARM64"
	printf '%s\n' "${want[@]}"
	exit 0
fi
mapfile -t all < <("$apt" apt-cache search --names-only \
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
"$0" --series 6.1
"$0" --series 5.10
