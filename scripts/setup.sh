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
#   scripts/setup.sh --mttcg-qemu   the same, then unpack bookworm-backports'
#                                   QEMU into the cache (the guests whose vCPUs
#                                   run in parallel need it; scripts/guest/run.sh
#                                   fetches it on first use anyway) and print
#                                   its qemu-system-x86_64: see
#                                   scripts/guest/qemu-mttcg.sh
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

# Extract members of the newest linux-source-6.12 tarball once per tarball
# version into $(ue_cache_dir)/<name>/<key>; print that directory.
extract() { # extract <name> <tar --strip-components> <member...>
	local name=$1 strip=$2 tarball key dir tmp f i stale=0
	shift 2
	tarball=$(ue_source_tarball)
	key=$(ue_files_key "$tarball")
	dir=$(ue_cache_dir)/$name/$key
	for f in "$@"; do
		for ((i = 1; i < strip; i++)); do f=${f#*/}; done
		[[ -f $dir/$f ]] || stale=1
	done
	if ((stale)); then
		mkdir -p "${dir%/*}"
		tmp=$(mktemp -d "${dir}.tmp.XXXXXX")
		tar -xaf "$tarball" -C "$tmp" --wildcards --occurrence=1 \
			--strip-components="$strip" "${@/#/*/}" ||
			{ rm -rf "$tmp"; ue_die "cannot extract $name from $tarball"; }
		printf '%s\n' "$tarball" >"$tmp/SOURCE"
		rm -rf "$dir"
		mv "$tmp" "$dir"
	fi
	printf '%s\n' "$dir"
}

# kselftest_harness.h and kselftest.h (next to each other in the archive:
# --occurrence stops reading there instead of reading all 150 MB).
harness_dir() {
	extract kselftest-harness 4 tools/testing/selftests/kselftest_harness.h \
		tools/testing/selftests/kselftest.h
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
# The members are spread over the archive: this reads most of it (about
# 15 s), once per tarball version.
upstream_dir() { extract upstream-selftests 1 "${UPSTREAM_MEMBERS[@]}"; }

[[ ${1:-} == --packages ]] && { printf '%s\n' "${PACKAGES[@]}"; exit 0; }
ue_install_packages --all "${PACKAGES[@]}" || ue_die "cannot install the packages"
case ${1:-} in
--harness-dir) harness_dir ;;
--upstream-dir) harness_dir >/dev/null && upstream_dir ;;
--mttcg-qemu) harness_dir >/dev/null && "$UE_REPO/scripts/guest/qemu-mttcg.sh" ;;
'') harness_dir >/dev/null ;;
*) ue_die "usage: $0 [--harness-dir|--upstream-dir|--mttcg-qemu|--packages]" ;;
esac
