#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-debug`: a 6.12 debug kernel (KASAN, lockdep, kmemleak, UBSAN,
# debug objects/lists, atomic-sleep checks) built once from the installed
# linux-source-6.12 tarball and cached outside the repo, then the module's
# selftests, the stress run and the fuzz regressions under it in a QEMU
# guest, and a kmemleak scan after the module is unloaded. The kernel also
# has fault injection (failslab, fail_page_alloc, usercopy; per task).
# UE_DEBUG_FLAVOR=kcsan (`make check-kcsan`) builds and uses a KCSAN/lockdep
# kernel instead (release suffix -uekcsan, no kmemleak): a data race report
# whose stacks run through the module fails the run, the core kernel's own
# are listed in the results directory's kcsan-other.log.
#
#   scripts/debug-kernel.sh [all]     build if needed, then test (default)
#   scripts/debug-kernel.sh build     only build (and install into the cache)
#   scripts/debug-kernel.sh release   print the debug kernel's release
#   scripts/debug-kernel.sh kdir      print the build tree (for make -C ... M=)
#   scripts/debug-kernel.sh config    print the config fragment
#
# Cache: $(ue_cache_dir)/debug-kernel/<key>/ (key: tarball + config fragment)
#   src/              the kernel tree, built in place (the M= build tree)
#   mod/lib/modules/<rel>/  modules_install output (modules.dep, .builtin...)
#   build.log build.seconds config-check.log DONE
# The kernel starts from `make defconfig` + kvm_guest.config + the fragment
# below (not Debian's config) and builds under `nice -n 19`. Measured on the
# 2-core reference machine: see Documentation/security.rst.
#
# The guest is booted with scripts/guest/run.sh --kernel <the cache's
# bzImage> --modules <the cache's mod/>: nothing is installed on the host,
# so scripts/kernels.sh never picks the debug kernel for `make check`.
#
# Environment: STRESS_S (default 120), FUZZ_S (unused here: regressions only),
# UE_TIMEOUT_FACTOR (selftest timeouts multiplied, default 10),
# UE_TEST_TIMEOUT (seconds per selftest program, default 2400),
# UE_DEBUG_MM_BITS (enable bits of mm.fork_many_bits, default 4096),
# UE_DEBUG_RACES (ue_stress --races arguments, default "dup 2000 fork 50"),
# UE_DEBUG_JOBS (make -j, default nproc), UE_DEBUG_SKIP="selftests stress
# race failnth regress kmemleak" to skip parts, RACE_S/RACE_SEED/RACE_ARGS
# for the concurrency fuzzer (tests/race/), UE_FAILNTH_MAX (fault points per
# operation, default 200). The last line is "N passed, N failed".
set -euo pipefail

# --- inside the guest: kmemleak baseline, the command, unload, kmemleak scan
if [[ ${1:-} == guest ]]; then
	shift
	# shellcheck source=scripts/lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
	# Every step runs and reports, whatever the command's status
	set +e
	UE_TAP=debug
	kml=/sys/kernel/debug/kmemleak
	if [[ $(uname -r) == *-uekcsan ]]; then
		kml=	# the KCSAN kernel has no kmemleak
	elif [[ ! -w $kml ]]; then
		ue_notok "$kml is missing (kernel without kmemleak?)"
		exit 1
	fi
	# Whatever boot leaked is not ours: scan, then forget it
	[[ -z $kml ]] || { echo scan >"$kml"; echo clear >"$kml"; }
	"$@"
	st=$?
	# The command unloads the module; make sure it is gone
	ue_loaded && ue_unload 10
	ue_check "module unloaded before the kmemleak scan" eval '! ue_loaded'
	if [[ -n $kml ]]; then
		# Objects must be unreferenced for a while before they count: scan twice
		sleep 6
		echo scan >"$kml"
		sleep 2
		echo scan >"$kml"
		report=$(cat "$kml")
		ue_check "kmemleak: no leaks after module unload" test -z "$report"
		# shellcheck disable=SC2001 # a prefix on every line
		[[ -z $report ]] || sed 's/^/#   /' <<<"$report" | head -n 200
	fi
	((st == 0 && UE_FAIL == 0))
	exit
fi

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Build products go to build/robust/ (own lock), apart from `make check`'s
ue_robust

mode=${1:-all}

# The sanitizer flavour: kasan (KASAN, lockdep, kmemleak, fault injection;
# the default) or kcsan (KCSAN and lockdep: KCSAN cannot be combined with
# KASAN). Each has its own cache and release name.
flavor=${UE_DEBUG_FLAVOR:-kasan}
case $flavor in
kasan) localversion=-uedebug ;;
kcsan) localversion=-uekcsan ;;
*) echo "UE_DEBUG_FLAVOR must be kasan or kcsan" >&2; exit 2 ;;
esac

# The fragment: scripts/debug-kernel.d/{base,<flavor>,trim}.config
# (exactly as it was inline before: it keys the cache; each file's first
# two lines are its header)
config_fragment() {
	echo "# --- identity"
	echo "CONFIG_LOCALVERSION=\"$localversion\""
	tail -q -n +3 "$UE_REPO"/scripts/debug-kernel.d/{base,"$flavor",trim}.config
}

# Options whose final value must be exactly what the fragment says.
required_options=(
	MODULES KALLSYMS_ALL KPROBES FTRACE DYNAMIC_FTRACE KPROBE_EVENTS UPROBES
	PERF_EVENTS BPF_SYSCALL BPF_EVENTS TRACEPOINTS PVH
	VIRTIO_PCI NET_9P_VIRTIO 9P_FS DEVTMPFS TMPFS DEBUG_FS
	PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_LIST DEBUG_INFO_BTF
)
if [[ $flavor == kcsan ]]; then
	required_options+=(KCSAN)
else
	required_options+=(KASAN DEBUG_KMEMLEAK DEBUG_OBJECTS UBSAN FAULT_INJECTION
		FAILSLAB FAIL_PAGE_ALLOC FAULT_INJECTION_USERCOPY FAULT_INJECTION_DEBUG_FS)
fi

tar=$(ue_source_tarball)
key=$( (ue_files_key "$tar"; config_fragment) | sha256sum | cut -c1-16)
base=$(ue_cache_dir)/debug-kernel
[[ $flavor == kasan ]] || base=$base-$flavor
cache=$base/$key
src=$cache/src

kernel_release() { cat "$src/include/config/kernel.release"; }

# What building a kernel needs beyond scripts/setup.sh's packages
BUILD_PACKAGES=(flex bison bc libelf-dev libssl-dev pahole cpio)

build() {
	mkdir -p "$cache"
	exec {blk}>"$base/.build-lock"
	flock "$blk"
	if [[ -f $cache/DONE ]]; then
		return 0
	fi
	local t0=$SECONDS jobs=${UE_DEBUG_JOBS:-$(nproc)}
	"$UE_REPO/scripts/setup.sh"
	ue_install_packages "${BUILD_PACKAGES[@]}" || ue_die "cannot install ${BUILD_PACKAGES[*]}"
	ue_note "building the debug kernel in $cache (log: $cache/build.log)"
	if [[ ! -f $src/Makefile ]]; then
		local tmp
		tmp=$(mktemp -d "$cache/extract.XXXXXX")
		nice -n 19 tar -xf "$tar" -C "$tmp"
		rm -rf "$src"
		mv "$tmp"/linux-source-6.12* "$src"
		rmdir "$tmp"
	fi
	config_fragment >"$cache/fragment.config"
	{
		set -e
		cd "$src"
		make -s defconfig
		scripts/kconfig/merge_config.sh -m .config kernel/configs/kvm_guest.config \
			"$cache/fragment.config"
		make -s olddefconfig
	} >"$cache/build.log" 2>&1 || ue_die "configuring failed (log: $cache/build.log)"
	# Every =y of the fragment and the required list must have survived.
	local bad=() o want
	: >"$cache/config-check.log"
	while IFS= read -r line; do
		[[ $line =~ ^CONFIG_([A-Z0-9_]+)=(.*)$ ]] || continue
		o=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
		grep -qxF "CONFIG_$o=$want" "$src/.config" ||
			echo "fragment: CONFIG_$o=$want not in final .config" >>"$cache/config-check.log"
	done < <(config_fragment)
	for o in "${required_options[@]}"; do
		grep -qx "CONFIG_$o=y" "$src/.config" || bad+=("$o")
	done
	((${#bad[@]} == 0)) || ue_die "required options not set after olddefconfig: ${bad[*]}"
	if [[ -s $cache/config-check.log ]]; then
		ue_note "fragment options that did not stick (informational):"
		sed 's/^/    /' "$cache/config-check.log" >&2
	fi
	nice -n 19 make -C "$src" -j"$jobs" bzImage modules >>"$cache/build.log" 2>&1 ||
		ue_die "kernel build failed (log: $cache/build.log)"
	# CPU time of the build (children of this shell): load-independent
	local cpu
	times >"$cache/times" # the builtin must run in this shell, not a subshell
	cpu=$(tail -n 1 "$cache/times" | awk '{
		split($1, u, "m"); split($2, s, "m")
		printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
	echo "$cpu" >"$cache/build.cpu-seconds"
	rm -rf "$cache/mod"
	nice -n 19 make -C "$src" -s INSTALL_MOD_PATH="$cache/mod" modules_install \
		>>"$cache/build.log" 2>&1 || ue_die "modules_install failed (log: $cache/build.log)"
	local rel
	rel=$(kernel_release)
	# No build/source links: scripts/kernels.sh must not see this kernel.
	rm -f "$cache/mod/lib/modules/$rel/build" "$cache/mod/lib/modules/$rel/source"
	echo $((SECONDS - t0)) >"$cache/build.seconds"
	touch "$cache/DONE"
	ue_note "debug kernel $rel built in $((SECONDS - t0))s wall, ${cpu}s CPU (user+sys, nice 19, -j$jobs)"
	# Older cache entries (other tarball or fragment) go.
	find "$base" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +
}

case $mode in
config) config_fragment; exit 0 ;;
build) build; exit 0 ;;
release) [[ -f $cache/DONE ]] || ue_die "not built"; kernel_release; exit 0 ;;
kdir) [[ -f $cache/DONE ]] || ue_die "not built"; printf '%s\n' "$src"; exit 0 ;;
all) ;;
*) ue_die "usage: $0 [all|build|release|kdir|config]" ;;
esac

# --- test phase --------------------------------------------------------
ue_lock_build
build
rel=$(kernel_release)
mods=$cache/mod/lib/modules/$rel
[[ -f $mods/modules.builtin && -f $mods/modules.dep ]] ||
	ue_die "$mods lacks modules.builtin/modules.dep (modules_install)"
ue_section "debug kernel $rel ($(cat "$cache/build.seconds")s wall, $(cat "$cache/build.cpu-seconds" 2>/dev/null || echo '?')s CPU to build)"

# KCSAN: only data races through the module count (scripts/lib.sh)
[[ $flavor == kcsan ]] && export UE_KCSAN_MODULE=user_events
guest() { # guest <label> <timeout> <command...>: one boot of the cached kernel
	local label=$1 tmo=$2
	shift 2
	ue_section "$rel: $label"
	ue_guest "$rel" "$label" -t "$tmo" --smp 2 -m 2G \
		--kernel "$src/arch/x86/boot/bzImage" --modules "$cache/mod" -- \
		env "UE_KCSAN_MODULE=${UE_KCSAN_MODULE:-}" "$UE_REPO/scripts/debug-kernel.sh" guest "$@"
}

# The module, built against the debug tree (W=1, warnings count)
ue_section "$rel: module build"
UE_KDIR=$src ue_module "$rel" || ue_finish check-debug || exit
ko=$UE_KO
ue_build_tool ue_stress tests/stress/ue_stress.c || true
ue_build_tool ue_fuzz tests/fuzz/ue_fuzz.c || true
bindir=$UE_BUILD/bin
skip=" ${UE_DEBUG_SKIP:-} "

if [[ $skip != *" selftests "* ]]; then
	tests=$UE_BUILD/selftests
	rm -rf "$tests"
	mkdir -p "$tests"
	# Every harness timeout x UE_TIMEOUT_FACTOR: KASAN, lockdep and
	# kmemleak under TCG run the same tests several times slower
	if make -C "$UE_REPO/tests/selftests" "HARNESS_DIR=$("$UE_REPO/scripts/setup.sh" --harness-dir)" \
		"OUT=$tests" "UE_TIMEOUT_FACTOR=${UE_TIMEOUT_FACTOR:-10}" \
		>"$UE_BUILD/selftests-build.log" 2>&1; then
		# mm.fork_many_bits with 4096 bits, not 65536: the scale is
		# the release kernels' to prove (and bench's to measure);
		# 65536 registrations and their forks take most of an hour here
		guest selftests 7200 env "UE_TEST_TIMEOUT=${UE_TEST_TIMEOUT:-2400}" \
			"UE_MM_BITS=${UE_DEBUG_MM_BITS:-4096}" \
			"$UE_REPO/scripts/guest/run-tests.sh" "$ko" "$tests"
	else
		tail -n 20 "$UE_BUILD/selftests-build.log"
		ue_fail "selftests build failed"
	fi
fi
if [[ $skip != *" stress "* ]]; then
	secs=${STRESS_S:-120}
	seed=$(ue_seed "${STRESS_SEED:-}")
	echo "(stress seed $seed, ${secs}s)"
	# ue_stress --races forks a process of 3000 mappings, about 1 s a fork here:
	# 50 fork iterations instead of 300 (UE_DEBUG_RACES to change)
	guest stress $((secs * 3 + 2400)) env "UE_RACES_ARGS=${UE_DEBUG_RACES:-dup 2000 fork 50}" \
		"$UE_REPO/tests/stress/guest.sh" "$ko" "$bindir/ue_stress" "$secs" "$seed"
fi
# The concurrency fuzzer (tests/race/): RACE_S (default 120), RACE_SEED,
# RACE_ARGS (e.g. -R: no rmmod/insmod loop)
if [[ $skip != *" race "* ]] && ue_build_tool ue_race tests/race/ue_race.c \
	"$UE_REPO/tests/race/aftermath.c" "$UE_REPO/tests/race/relayout.c" "$UE_REPO/tests/race/held.c"; then
	rsecs=${RACE_S:-120}
	rseed=$(ue_seed "${RACE_SEED:-}")
	read -r -a rargs <<<"${RACE_ARGS:-}"
	echo "(race seed $rseed, ${rsecs}s${RACE_ARGS:+, $RACE_ARGS})"
	guest race $((rsecs * 3 + 1800)) \
		"$UE_REPO/tests/race/guest.sh" "$ko" "$bindir/ue_race" "$rsecs" "$rseed" "${rargs[@]}"
fi
if [[ $flavor == kasan && $skip != *" failnth "* ]] &&
	ue_build_tool ue_failnth tests/faultinj/ue_failnth.c; then
	guest failnth 3600 "$UE_REPO/tests/faultinj/guest.sh" "$ko" "$bindir/ue_failnth" "${UE_FAILNTH_MAX:-200}"
fi
if [[ $skip != *" regress "* ]]; then
	guest regress 3600 "$UE_REPO/tests/fuzz/guest.sh" replay "$ko" "$bindir/ue_fuzz" \
		"$UE_REPO"/tests/fuzz/regressions/*.case
fi
ue_finish check-debug "$rel; kernel build $(cat "$cache/build.seconds")s wall"
