#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/set-version.sh <new version> [changelog text]
#
# Change the version everywhere it is written: VERSION (the single source of
# truth, read by Kbuild for MODULE_VERSION), PACKAGE_VERSION in dkms.conf
# (DKMS needs a literal) and a new top entry in debian/changelog (text
# default: "New version <v>."). Then runs scripts/check-versions.sh.
# Environment: DEBFULLNAME/DEBEMAIL override the changelog signature (the
# default is the maintainer in debian/control).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
new=${1:-}
text=${2:-}
[[ -n $new ]] || { echo "usage: $0 <new version> [changelog text]" >&2; exit 2; }
[[ $new =~ ^[0-9][A-Za-z0-9.+~]*$ ]] ||
	{ echo "$0: '$new' is not a valid native version (digits first, no '-')" >&2; exit 2; }
old=$(cat "$repo/VERSION")
[[ -n $text ]] || text="New version $new."

if command -v dpkg >/dev/null && ! dpkg --compare-versions "$new" gt "$old"; then
	echo "$0: warning: $new is not greater than $old" >&2
fi

printf '%s\n' "$new" >"$repo/VERSION"
sed -i -E "s/^([[:space:]]*PACKAGE_VERSION=).*/\1\"$new\"/" "$repo/dkms.conf"

maint=$(sed -n 's/^Maintainer: //p' "$repo/debian/control")
if [[ -n ${DEBFULLNAME:-} && -n ${DEBEMAIL:-} ]]; then
	maint="$DEBFULLNAME <$DEBEMAIL>"
fi
dist=$(sed -n -E '1s/^[^ ]+ \([^)]*\) ([^;]+);.*/\1/p' "$repo/debian/changelog")
tmp=$(mktemp)
{
	printf 'user-events (%s) %s; urgency=medium\n\n' "$new" "${dist:-bookworm}"
	printf '%s\n' "$text" | fold -s -w 74 | sed -e 's/ *$//' -e '1s/^/  * /' -e '2,$s/^/    /'
	printf '\n -- %s  %s\n\n' "$maint" "$(date -R)"
	cat "$repo/debian/changelog"
} >"$tmp"
mv "$tmp" "$repo/debian/changelog"
chmod 0644 "$repo/debian/changelog"

echo "version $old -> $new (VERSION, dkms.conf, debian/changelog)"
"$repo/scripts/check-versions.sh"
