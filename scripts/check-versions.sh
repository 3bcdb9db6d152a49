#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that every place carrying the version number agrees with VERSION,
# the single source of truth:
#   - VERSION itself (one line, a valid Debian native version),
#   - PACKAGE_VERSION in dkms.conf (a literal, as DKMS requires),
#   - the newest entry of debian/changelog,
#   - Kbuild passing VERSION to the module (-DUSER_EVENTS_VERSION),
#   - MODULE_VERSION of each module file given (modinfo -F version),
#   - the Version field of each .deb given (and its name).
#
#   scripts/check-versions.sh [user_events.ko[.xz] | *.deb ...]
#
# Prints one TAP-style "ok"/"not ok" line per check and "N passed, N failed"
# last; exits non-zero when anything disagrees. scripts/set-version.sh changes
# the version everywhere at once.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pass=0
fail=0
ok() { echo "ok - versions: $*"; pass=$((pass + 1)); }
notok() { echo "not ok - versions: $*"; fail=$((fail + 1)); }
same() { # same <description> <expected> <actual>
	if [[ $3 == "$2" ]]; then ok "$1 is $3"; else notok "$1 is '$3', VERSION is '$2'"; fi
}

version=
if [[ -f $repo/VERSION ]]; then
	mapfile -t lines <"$repo/VERSION"
	version=${lines[0]:-}
	if ((${#lines[@]} == 1)) && [[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]]; then
		ok "VERSION is $version"
	else
		notok "VERSION must be one line holding a version like 1.2.3 (no '-'), got: $(head -c 80 "$repo/VERSION" | tr '\n' '|')"
	fi
else
	notok "VERSION file missing"
fi

# dkms.conf: PACKAGE_VERSION="x.y.z" (quotes optional), a literal.
if [[ -f $repo/dkms.conf ]]; then
	dkms_version=$(sed -n -E 's/^[[:space:]]*PACKAGE_VERSION=["'\'']?([^"'\'' ]*)["'\'']?[[:space:]]*$/\1/p' "$repo/dkms.conf")
	if [[ $(grep -c '^[[:space:]]*PACKAGE_VERSION=' "$repo/dkms.conf") != 1 ]]; then
		notok "dkms.conf must set PACKAGE_VERSION exactly once"
	else
		same "dkms.conf PACKAGE_VERSION" "$version" "$dkms_version"
	fi
else
	notok "dkms.conf missing"
fi

if [[ -f $repo/debian/changelog ]]; then
	if command -v dpkg-parsechangelog >/dev/null; then
		cl_version=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version 2>/dev/null)
	else
		cl_version=$(sed -n -E '1s/^[^ ]+ \(([^)]*)\).*/\1/p' "$repo/debian/changelog")
	fi
	same "debian/changelog version" "$version" "$cl_version"
else
	notok "debian/changelog missing"
fi

if grep -q 'USER_EVENTS_VERSION=.*VERSION' "$repo/Kbuild" 2>/dev/null; then
	ok "Kbuild passes VERSION to the module as USER_EVENTS_VERSION"
else
	notok "Kbuild does not pass VERSION to the module (-DUSER_EVENTS_VERSION)"
fi

for f in "$@"; do
	case $f in
	*.deb)
		deb_version=$(dpkg-deb -f "$f" Version 2>/dev/null)
		same "Version of ${f##*/}" "$version" "$deb_version"
		[[ ${f##*/} == *_"$version"_*.deb ]] ||
			notok "file name ${f##*/} does not carry version $version"
		;;
	*)
		mod_version=$(modinfo -F version "$f" 2>/dev/null)
		same "MODULE_VERSION of $f" "$version" "$mod_version"
		;;
	esac
done

echo "$pass passed, $fail failed"
((fail == 0))
