#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/apt.sh <apt-get|apt-cache> [args...]
#
# Run apt-get or apt-cache against a private apt configuration that knows
# Debian 11, 12 and 13 (main, updates, security; backports for 12) for arm64
# and amd64.
# It lives in $(ue_cache_dir)/arm64/apt and never touches the host's apt
# state: it is only used to look up and `apt-get download` kernel packages,
# whose contents are then extracted (scripts/arm64/kernel.sh). The index is
# refreshed when it is older than a day.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

(($# >= 1)) || ue_die "usage: $0 <apt-get|apt-cache> [args...]"
tool=$1
shift
[[ $tool == apt-get || $tool == apt-cache ]] || ue_die "apt-get or apt-cache, not $tool"

mirror=${UE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
secmirror=${mirror%/debian}/debian-security
d=$(ue_cache_dir)/arm64/apt
mkdir -p "$d"/etc/apt.conf.d "$d"/etc/preferences.d "$d"/state/lists/partial \
	"$d"/cache/archives/partial
opts=(
	-o "Dir::Etc::SourceList=$d/etc/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::Etc::Parts=$d/etc/apt.conf.d" -o "Dir::Etc::Preferences=$d/etc/preferences"
	-o "Dir::Etc::PreferencesParts=$d/etc/preferences.d" -o "Dir::State=$d/state"
	-o Dir::State::status=/dev/null -o "Dir::Cache=$d/cache"
	-o APT::Sandbox::User=root -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64
)

exec {lockfd}>"$d/.lock"
flock "$lockfd"
stamp=$d/state/.updated
{
	for s in bullseye bullseye-updates bookworm bookworm-updates bookworm-backports \
		trixie trixie-updates; do
		echo "deb [arch=arm64,amd64] $mirror $s main"
	done
	for s in bullseye-security bookworm-security trixie-security; do
		echo "deb [arch=arm64,amd64] $secmirror $s main"
	done
} >"$d/etc/sources.list.new"
# A new list of suites needs a new index, whatever the stamp's age.
if ! cmp -s "$d/etc/sources.list.new" "$d/etc/sources.list" 2>/dev/null; then
	mv -f "$d/etc/sources.list.new" "$d/etc/sources.list"
	rm -f "$stamp"
fi
rm -f "$d/etc/sources.list.new"
if [[ ! -f $stamp ]] || [[ -n $(find "$stamp" -mmin +1440) ]]; then
	apt-get "${opts[@]}" -q update >&2 || ue_die "apt-get update (arm64 config) failed"
	touch "$stamp"
fi
exec "$tool" "${opts[@]}" "$@"
