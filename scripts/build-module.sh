#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/build-module.sh [--chroot <suite>] <release> [module source dir]
#
# Build the module for one installed kernel, out of the source tree: the
# sources (Kbuild, VERSION, *.c, *.h, *.S, include/) are copied into
# build/<release>/module, which is then built from scratch with
#   make -C /lib/modules/<release>/build M=build/<release>/module W=1 modules
# (a fresh copy each time, so every file is compiled and every warning seen).
# The log is build/<release>/module-build.log. The test helper modules of
# tests/kmod (of the repository) are built the same way into
# build/<release>/test-kmod (log: test-kmod-build.log), where
# tests/selftests/ksyms_test.c finds them. Exit status: 0 built cleanly;
# 1 the build failed; 3 it built but printed warnings (they are shown).
# Whenever a module was built, the path of each .ko is printed on stdout.
#
# UE_MODULE_SRC (or the second argument) names another source directory,
# default: the repository root. UE_BUILD_DIR replaces build/.
# For kernels that are not installed (scripts/arm64/build-module.sh,
# scripts/debug-kernel.sh): UE_KDIR replaces /lib/modules/<release>/build,
# UE_KMAKE_ARGS adds make arguments (ARCH=, CROSS_COMPILE=) and
# UE_KMAKE_WRAP names a command that runs make (a chroot).
#
# --chroot <suite> builds inside that Debian release's build chroot
# (scripts/matrix/chroot.sh; root only), with its compiler and its
# /lib/modules/<release>/build (the linux-headers-<release> package, which
# scripts/matrix/kernel.sh installs there): the sources are copied into the
# chroot, built W=1 the same way, and the .ko files and the log are copied
# back to build/<release>/.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

suite=
if [[ ${1:-} == --chroot ]]; then
	suite=${2:?}
	shift 2
fi
(($# >= 1 && $# <= 2)) || ue_die "usage: $0 [--chroot <suite>] <kernel release> [module source dir]"
rel=$1
src=${2:-${UE_MODULE_SRC:-$UE_REPO}}
croot=
if [[ -n $suite ]]; then
	croot=$("$UE_REPO/scripts/matrix/chroot.sh" "$suite")
fi
kdir=${UE_KDIR:-/lib/modules/$rel/build}
if [[ -n $croot ]]; then
	# The build link is absolute: follow it inside the chroot.
	chroot "$croot" test -f "$kdir/Makefile" ||
		ue_die "no kernel headers for $rel in $croot$kdir (scripts/matrix/kernel.sh installs them)"
else
	[[ -f $kdir/Makefile ]] || ue_die "no kernel headers for $rel in $kdir"
fi
[[ -f $src/Kbuild ]] || ue_die "no Kbuild in $src"

dir=$UE_BUILD/$rel/module
log=$UE_BUILD/$rel/module-build.log
rm -rf "$dir"
mkdir -p "$dir"

shopt -s nullglob
files=("$src/Kbuild")
for f in "$src"/VERSION "$src"/*.c "$src"/*.h "$src"/*.S; do
	[[ -f $f ]] && files+=("$f")
done
cp -p "${files[@]}" "$dir/"
[[ -d $src/include ]] && cp -pR "$src/include" "$dir/include"

status=0
if [[ -n $croot ]]; then
	# The same tree inside the chroot, built by its own toolchain.
	cdir=/var/tmp/ue-build/$rel
	rm -rf "${croot:?}$cdir"
	mkdir -p "$croot$cdir"
	cp -pR "$dir/." "$croot$cdir/"
	chroot "$croot" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C \
		make -C "$kdir" M="$cdir" W=1 modules >"$log" 2>&1 || status=$?
	find "$croot$cdir" -maxdepth 1 -name '*.ko' -exec cp -p {} "$dir/" \;
	rm -rf "${croot:?}$cdir"
else
	read -r -a wrap <<<"${UE_KMAKE_WRAP:-}"
	read -r -a kargs <<<"${UE_KMAKE_ARGS:-}"
	"${wrap[@]}" make -C "$kdir" M="$dir" W=1 "${kargs[@]}" modules >"$log" 2>&1 || status=$?
fi

# Compiler and modpost warnings ("warning:", "WARNING: modpost: ...").
mapfile -t warnings < <(grep -i -E '(^|[^a-z])warning[:[]' "$log" || true)

if ((status != 0)); then
	ue_note "$rel: module build FAILED (log: $log)"
	sed 's/^/    /' "$log" | tail -n 60 >&2
	exit 1
fi
status=0
if ((${#warnings[@]})); then
	ue_note "$rel: module build printed ${#warnings[@]} warning(s) (log: $log):"
	# Show each warning with the compiler's context lines that follow it.
	grep -i -E -A4 '(^|[^a-z])warning[:[]' "$log" |
		grep -v -E '^(--|  [A-Z]+ +(\[M\] +)?/.*)$' | head -n 120 | sed 's/^/    /' >&2
	status=3
fi

# The test helper modules: a failed build fails, their paths not printed
kdir_t=$UE_BUILD/$rel/test-kmod
klog=$UE_BUILD/$rel/test-kmod-build.log
rm -rf "$kdir_t"
if [[ -f $UE_REPO/tests/kmod/Kbuild ]]; then
	mkdir -p "$kdir_t"
	cp -p "$UE_REPO"/tests/kmod/{Kbuild,*.c} "$kdir_t/"
	kst=0
	if [[ -n $croot ]]; then
		cdir=/var/tmp/ue-build/$rel-test-kmod
		rm -rf "${croot:?}$cdir"
		mkdir -p "$croot$cdir"
		cp -pR "$kdir_t/." "$croot$cdir/"
		chroot "$croot" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C \
			make -C "$kdir" M="$cdir" W=1 modules >"$klog" 2>&1 || kst=$?
		find "$croot$cdir" -maxdepth 1 -name '*.ko' -exec cp -p {} "$kdir_t/" \;
		rm -rf "${croot:?}$cdir"
	else
		"${wrap[@]}" make -C "$kdir" M="$kdir_t" W=1 "${kargs[@]}" modules >"$klog" 2>&1 || kst=$?
	fi
	if ((kst != 0)); then
		ue_note "$rel: test helper modules build FAILED (log: $klog)"
		tail -n 30 "$klog" | sed 's/^/    /' >&2
		exit 1
	fi
fi

mapfile -t kos < <(find "$dir" -maxdepth 1 -name '*.ko' | sort)
((${#kos[@]})) || ue_die "$rel: build succeeded but produced no .ko (log: $log)"
printf '%s\n' "${kos[@]}"
exit "$status"
