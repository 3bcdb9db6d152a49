#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing user_events.ko needs, and extract the
# kselftest harness headers from the newest linux-source-6.12 tarball into a
# cache outside the repo. Idempotent: when everything is there it only runs
# dpkg-query and a couple of stat calls.
#
#   scripts/setup.sh                install + extract, quietly
#   scripts/setup.sh --harness-dir  the same, then print the directory holding
#                                   kselftest_harness.h and kselftest.h
#   scripts/setup.sh --upstream-dir the same, then extract upstream's user_events
#                                   selftests (tools/testing/selftests/user_events,
#                                   the kselftest headers and the uapi header
#                                   include/uapi/linux/user_events.h) from that
#                                   tarball, keeping their paths, and print the
#                                   directory holding tools/ and include/
#   scripts/setup.sh --packages     print the package list
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PACKAGES=(
	qemu-system-x86 busybox-static debootstrap
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	linux-source-6.1 linux-source-6.12
	sparse trace-cmd bpftrace bpftool libbpf-dev clang llvm linux-perf
	kmod xz-utils zstd cpio gcc make libc6-dev python3 util-linux
)

missing_packages() {
	local -A have=()
	local p status
	# One dpkg-query for the whole list (unknown names just get no line).
	while read -r p status; do
		[[ $status == installed ]] && have[${p%%:*}]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' \
		"${PACKAGES[@]}" 2>/dev/null || true)
	for p in "${PACKAGES[@]}"; do
		[[ -n ${have[$p]:-} ]] || printf '%s\n' "$p"
	done
}

install_packages() {
	local missing
	mapfile -t missing < <(missing_packages)
	((${#missing[@]} == 0)) && return 0

	local sudo=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null ||
			ue_die "not root and no sudo; please install: ${missing[*]}"
		sudo=(sudo)
	fi
	ue_note "installing: ${missing[*]}"
	"${sudo[@]}" apt-get update -qq >&2 || ue_die "apt-get update failed"
	# Install the whole list so the kernel metapackages resolve to the newest
	# images and headers available.
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends \
		"${PACKAGES[@]}" >&2 ||
		ue_die "apt-get install failed"
	mapfile -t missing < <(missing_packages)
	((${#missing[@]} == 0)) || ue_die "still missing after install: ${missing[*]}"
}

# Newest linux-source-6.12 tarball under /usr/src.
source_tarball() {
	local t
	t=$(find /usr/src -maxdepth 1 -name 'linux-source-6.12*.tar.*' -printf '%f\n' |
		sort -V | tail -n 1)
	[[ -n $t ]] || ue_die "no /usr/src/linux-source-6.12*.tar.* (package linux-source-6.12)"
	printf '/usr/src/%s\n' "$t"
}

# Extract kselftest_harness.h and kselftest.h once per tarball version.
harness_dir() {
	local tarball key dir tmp f
	tarball=$(source_tarball)
	key=$(ue_files_key "$tarball")
	dir=$(ue_cache_dir)/kselftest-harness/$key
	if [[ ! -f $dir/kselftest_harness.h || ! -f $dir/kselftest.h ]]; then
		mkdir -p "${dir%/*}"
		tmp=$(mktemp -d "${dir}.tmp.XXXXXX")
		# Both members sit next to each other in the archive; stop at the
		# first occurrence of each instead of reading all 150 MB.
		tar -xaf "$tarball" -C "$tmp" --wildcards --occurrence=1 \
			--strip-components=4 \
			'*/tools/testing/selftests/kselftest_harness.h' \
			'*/tools/testing/selftests/kselftest.h' ||
			{ rm -rf "$tmp"; ue_die "cannot extract the harness from $tarball"; }
		for f in kselftest_harness.h kselftest.h; do
			[[ -f $tmp/$f ]] || { rm -rf "$tmp"; ue_die "$f not found in $tarball"; }
		done
		printf '%s\n' "$tarball" >"$tmp/SOURCE"
		rm -rf "$dir"
		mv "$tmp" "$dir"
	fi
	printf '%s\n' "$dir"
}

# Upstream's user_events selftests, unmodified, with the headers they
# include (by relative path "../kselftest_harness.h", so the tree layout is
# kept), and upstream's own uapi header to build them against. Extracted once
# per tarball version; never copied into the repository.
UPSTREAM_MEMBERS=(
	tools/testing/selftests/kselftest.h
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/user_events/abi_test.c
	tools/testing/selftests/user_events/dyn_test.c
	tools/testing/selftests/user_events/ftrace_test.c
	tools/testing/selftests/user_events/perf_test.c
	tools/testing/selftests/user_events/user_events_selftests.h
	include/uapi/linux/user_events.h
)
upstream_dir() {
	local tarball key dir tmp f stale=0
	tarball=$(source_tarball)
	key=$(ue_files_key "$tarball")
	dir=$(ue_cache_dir)/upstream-selftests/$key
	for f in "${UPSTREAM_MEMBERS[@]}"; do
		[[ -f $dir/$f ]] || stale=1
	done
	if ((stale)); then
		mkdir -p "${dir%/*}"
		tmp=$(mktemp -d "${dir}.tmp.XXXXXX")
		# The members are spread over the archive: this reads most of it
		# (about 15 s), once per tarball version.
		tar -xaf "$tarball" -C "$tmp" --wildcards --occurrence=1 \
			--strip-components=1 "${UPSTREAM_MEMBERS[@]/#/*/}" ||
			{ rm -rf "$tmp"; ue_die "cannot extract upstream's selftests from $tarball"; }
		for f in "${UPSTREAM_MEMBERS[@]}"; do
			[[ -f $tmp/$f ]] || { rm -rf "$tmp"; ue_die "$f not found in $tarball"; }
		done
		printf '%s\n' "$tarball" >"$tmp/SOURCE"
		rm -rf "$dir"
		mv "$tmp" "$dir"
	fi
	printf '%s\n' "$dir"
}

case ${1:-} in
--packages)
	printf '%s\n' "${PACKAGES[@]}"
	;;
--harness-dir)
	install_packages
	harness_dir
	;;
--upstream-dir)
	install_packages
	harness_dir >/dev/null
	upstream_dir
	;;
'')
	install_packages
	harness_dir >/dev/null
	;;
*)
	ue_die "usage: $0 [--harness-dir|--upstream-dir|--packages]"
	;;
esac
