#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-matrix`: the selftests on every Debian amd64 kernel that lacks
# CONFIG_USER_EVENTS besides `make check`'s two (scripts/matrix/targets):
# each kernel is built in its own release's debootstrap chroot with that
# release's compiler and headers (scripts/matrix/chroot.sh), and booted
# from its extracted image package (scripts/matrix/kernel.sh), then
# scripts/check.sh runs as for `make check` and prints the per-kernel
# counts. Needs root (debootstrap, chroot).
#
#   scripts/matrix.sh [--set ci|matrix|all] [release-or-package pattern...]
#
# --set ci runs the targets marked "ci" (what .ci/run runs); the default
# is all. Patterns (shell globs) select targets by release or package.
# The environment of scripts/check.sh applies (V=1, UE_TEST_TIMEOUT...).
# A test that skips (a feature the kernel was built without: hist triggers
# on Debian 11) is counted and listed as an expected skip, with its reason,
# neither passed nor failed, only where tests/selftests/expected-skips expects it
# on that kernel; any other skip is a failure, as in make check.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

set_=all
if [[ ${1:-} == --set ]]; then
	set_=${2:?}
	shift 2
fi
((EUID == 0)) || ue_die "needs root (debootstrap, chroot)"
"$UE_REPO/scripts/setup.sh"

want() { # want <release> <package>
	local p
	(($# && ${#pats[@]})) || return 0
	for p in "${pats[@]}"; do
		# shellcheck disable=SC2053 # globs on purpose
		[[ $1 == $p || $2 == $p ]] && return 0
	done
	return 1
}
pats=("$@")

list=$UE_BUILD/matrix-targets
: >"$list"
while read -r suite pkg tset _; do
	[[ -n $suite && $suite != \#* ]] || continue
	[[ $tset != cloud ]] || continue # no 9p: scripts/matrix/cloud.sh
	[[ $set_ == all || $tset == "$set_" ]] || continue
	mapfile -t k < <("$UE_REPO/scripts/matrix/kernel.sh" "$suite" "$pkg")
	((${#k[@]} == 3)) || ue_die "$suite $pkg: no kernel"
	want "${k[0]}" "$pkg" || continue
	printf '%s %s %s %s\n' "${k[0]}" "$suite" "${k[1]}" "${k[2]}" >>"$list"
done <"$UE_REPO/scripts/matrix/targets"
[[ -s $list ]] || ue_die "no target selected"
cat "$list"
# races_test with the vCPUs in parallel (check-mttcg) is `make check`'s,
# measured on Debian 12's 6.1 and 6.12 only (UE_CHECK_MTTCG=1 adds it)
UE_MATRIX_TARGETS=$list UE_HOST_CHECKS=0 UE_CHECK_MTTCG=${UE_CHECK_MTTCG:-0} \
	exec "$UE_REPO/scripts/check.sh"
