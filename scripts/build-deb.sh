#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: build build/user-events-dkms_<VERSION>_all.deb with debhelper
# and dh-dkms, then check it with lintian (fails on lintian errors; the
# report is build/deb/lintian.log).
#
# The package is built from a copy of the files it needs, staged in
# build/deb/user-events-<VERSION>/, so dpkg-buildpackage writes nothing into
# the work tree. Staged are the working tree's files (tracked or untracked,
# not ignored): the module sources (scripts/dkms-source.sh), debian/,
# Documentation/, samples/, packaging/ and README.md.
#
# Environment: UE_BUILD_DIR replaces build/; LINTIAN=0 skips lintian.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$UE_REPO/scripts/package-setup.sh"
if ! out=$("$UE_REPO/scripts/check-versions.sh"); then
	printf '%s\n' "$out" | grep -v '^ok' >&2
	ue_die "version numbers disagree: run scripts/set-version.sh $(cat "$UE_REPO/VERSION")"
fi

version=$(cat "$UE_REPO/VERSION")
debdir=$UE_BUILD/deb
stage=$debdir/user-events-$version
deb=user-events-dkms_${version}_all.deb
rm -rf "$debdir"
mkdir -p "$stage"

# Module sources, exactly what DKMS will get.
"$UE_REPO/scripts/dkms-source.sh" "$stage"
install -D -m 0755 "$UE_REPO/scripts/dkms-source.sh" "$stage/scripts/dkms-source.sh"

# Everything else the package is made of.
paths=(debian Documentation samples packaging README.md scripts/user-events-clear)
if git -C "$UE_REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(cd "$UE_REPO" &&
		git ls-files -co --exclude-standard -- "${paths[@]}" | sort -u)
else
	mapfile -t files < <(cd "$UE_REPO" &&
		find "${paths[@]}" -type f 2>/dev/null | sort)
fi
for f in "${files[@]}"; do
	[[ -f $UE_REPO/$f ]] || continue # deleted but still tracked
	mode=0644
	[[ -x $UE_REPO/$f ]] && mode=0755
	install -D -p -m "$mode" "$UE_REPO/$f" "$stage/$f"
done
[[ -x $stage/debian/rules ]] || ue_die "debian/rules missing or not executable"

echo "building $deb in $stage"
log=$debdir/build.log
if ! (cd "$stage" && dpkg-buildpackage -b --no-sign) >"$log" 2>&1; then
	tail -n 40 "$log" | sed 's/^/    /' >&2
	ue_die "dpkg-buildpackage failed (log: $log)"
fi
[[ -f $debdir/$deb ]] || ue_die "dpkg-buildpackage did not produce $deb (log: $log)"
cp -f "$debdir/$deb" "$UE_BUILD/$deb"
echo "built $UE_BUILD/$deb"
dpkg-deb --info "$UE_BUILD/$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Installed-Size\):/  &/p'

if [[ ${LINTIAN:-1} != 0 ]]; then
	status=0
	lintian --fail-on error --display-info "$UE_BUILD/$deb" >"$debdir/lintian.log" 2>&1 || status=$?
	errors=$(grep -c '^E: ' "$debdir/lintian.log" || true)
	warnings=$(grep -c '^W: ' "$debdir/lintian.log" || true)
	infos=$(grep -c '^I: ' "$debdir/lintian.log" || true)
	sed 's/^/  lintian: /' "$debdir/lintian.log"
	echo "lintian: $errors error(s), $warnings warning(s), $infos info(s) (log: $debdir/lintian.log)"
	((status == 0)) || ue_die "lintian found errors in $deb"
fi
