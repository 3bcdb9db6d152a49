# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the scripts under scripts/ (sourced, not executed).
# shellcheck shell=bash

UE_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export UE_REPO
# Build products (module builds per kernel, selftests, guest results).
UE_BUILD=${UE_BUILD_DIR:-$UE_REPO/build}
mkdir -p "$UE_BUILD"
UE_BUILD=$(cd "$UE_BUILD" && pwd)
export UE_BUILD

ue_die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

ue_note() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

# Cache for things derived from installed packages (vmlinux ELF images,
# initramfs images, the kselftest harness headers). Lives outside the repo.
ue_cache_dir() {
	local d
	if [[ -n ${UE_CACHE_DIR:-} ]]; then
		d=$UE_CACHE_DIR
	elif [[ -w /var/cache ]] || [[ -w /var/cache/user-events ]]; then
		d=/var/cache/user-events
	else
		d=${XDG_CACHE_HOME:-$HOME/.cache}/user-events
	fi
	mkdir -p "$d" || ue_die "cannot create cache dir $d"
	printf '%s\n' "$d"
}

# A short key that changes whenever one of the given files changes.
ue_files_key() {
	local f
	for f in "$@"; do
		[[ -e $f ]] || ue_die "missing file: $f"
		stat -L -c '%n %s %Y' -- "$f"
	done | sha256sum | cut -c1-16
}

# Serialise builds and guest runs that use the same build directory (several
# people may run `make check` in one work tree). Held until the script exits.
ue_lock_build() {
	exec {UE_LOCK_FD}>"$UE_BUILD/.lock"
	if ! flock -n "$UE_LOCK_FD"; then
		ue_note "waiting for another check/demo using $UE_BUILD to finish..."
		flock "$UE_LOCK_FD"
	fi
}
