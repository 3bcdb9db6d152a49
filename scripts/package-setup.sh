#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what packaging user_events.ko needs: DKMS, debhelper with the
# dh-dkms addon, lintian, docutils (for `make docs`), plus the tools those
# steps call. Idempotent: when everything is installed it only runs one
# dpkg-query.
#
#   scripts/package-setup.sh             install what is missing, quietly
#   scripts/package-setup.sh --packages  print the package list
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PACKAGES=(
	dkms dh-dkms debhelper dpkg-dev fakeroot lintian
	python3-docutils kmod openssl gcc make
)

missing_packages() {
	local -A have=()
	local p status
	while read -r p status; do
		[[ $status == installed ]] && have[${p%%:*}]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' \
		"${PACKAGES[@]}" 2>/dev/null || true)
	for p in "${PACKAGES[@]}"; do
		[[ -n ${have[$p]:-} ]] || printf '%s\n' "$p"
	done
}

case ${1:-} in
--packages)
	printf '%s\n' "${PACKAGES[@]}"
	exit 0
	;;
'') ;;
*) ue_die "usage: $0 [--packages]" ;;
esac

mapfile -t missing < <(missing_packages)
((${#missing[@]} == 0)) && exit 0

sudo=()
if ((EUID != 0)); then
	command -v sudo >/dev/null ||
		ue_die "not root and no sudo; please install: ${missing[*]}"
	sudo=(sudo)
fi
ue_note "installing: ${missing[*]}"
"${sudo[@]}" apt-get update -qq >&2 || ue_die "apt-get update failed"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
	ue_die "apt-get install failed"
mapfile -t missing < <(missing_packages)
((${#missing[@]} == 0)) || ue_die "still missing after install: ${missing[*]}"
