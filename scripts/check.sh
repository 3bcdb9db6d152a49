#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: build user_events.ko for each target kernel (W=1, no warnings
# allowed), build the selftests (ours, and upstream's four user_events
# selftest programs from the linux-source-6.12 package, unmodified, as
# upstream_*), boot each kernel in QEMU and run them all there against the
# module, then count the TAP results.
#
# Environment:
#   KVERS="rel ..."      kernels to test (default: scripts/kernels.sh)
#   V=1                  show the guest consoles live
#   UE_TEST_TIMEOUT      seconds per test program in the guest (300)
#   UE_GUEST_TIMEOUT     seconds per guest boot (900)
#   UE_EXPECT_TRACEFS    see scripts/guest/run-tests.sh
#   UE_MODULE_SRC        module source dir (default: the repo)
#   UE_SELFTESTS_SRC     selftests source dir (default: tests/selftests/)
#   UE_BUILD_DIR         where builds and results go (default: build/)
#   UE_CHECK_PACKAGE=0   leave out the Debian package test (needs root)
#   UE_CHECK_MTTCG=0     leave out races_test with the vCPUs in parallel
#                        (scripts/matrix.sh sets it unless told otherwise)
#   UE_HOST_CHECKS=0     leave out lint, host checks and the package test
#   UE_MATRIX_TARGETS    a file of "<release> <suite> <vmlinuz> <modules dir>"
#                        lines (written by scripts/matrix.sh): test exactly
#                        those kernels, each built in <suite>'s chroot and
#                        booted from its extracted package (KVERS is ignored)
#   UE_ARCH=arm64        `make check-arm64`: Debian's arm64 kernels
#                        (KVERS_ARM64, default scripts/arm64/kernels.sh),
#                        cross-built module and selftests, guests under
#                        qemu-system-aarch64 (run.sh --arch arm64); the host
#                        checks and the package test are the amd64 run's
#
# After each kernel's guest run, races_test runs again in a guest of its own
# with the two vCPUs in parallel (multi-threaded TCG, under the QEMU that
# scripts/guest/qemu-mttcg.sh provides: Debian 12's runs stale code there)
# and UE_RACE_PARALLEL=1: put_racing_delete's threads must then also have
# run at the same time, not in turns (tests/race/README, "Multi-threaded TCG");
# its results count as races_test_mttcg. x86_64 only. The guest side,
# scripts/guest/races-mttcg.sh, turns record-cmd off for it, so that enables
# do not patch __schedule() (the emulator's stale-code artefact; see there).
#
# Counting: an "ok" line is a pass unless it carries "# SKIP"; a skip is a
# failure unless tests/selftests/expected-skips expects that test to skip on that
# kernel for that reason (features a kernel was built without, such as hist
# triggers on Debian 11): then it is an expected skip, neither passed nor
# failed, and a listed test that runs there instead is a failure. An
# upstream test failing as tests/selftests/upstream-known-differences says is a
# known difference, neither passed nor failed. Both totals are printed
# before the last line. A "not ok" line is a failure; the guest runner
# reports its own checks (insmod, rmmod, clean kernel log, crashed or hung
# tests) the same way; a module build that fails (no guest run then) or
# prints warnings (the tests still run), a selftest build failure and a
# failed guest run (hang, panic, WARN, lockdep...) each add one failure.
# The last line printed is "N passed, N failed"; the exit status is non-zero
# iff something failed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

testsrc=${UE_SELFTESTS_SRC:-$UE_REPO/tests/selftests}
testout=$UE_BUILD/selftests
# Upstream selftests expected to fail, each at a given check (see the file)
UE_KNOWN_LIST=$testsrc/upstream-known-differences
# The tests that may skip, each on the kernels named there (see the file)
UE_SKIPS_LIST=$testsrc/expected-skips
arch=${UE_ARCH:-x86_64}
[[ $arch == x86_64 || $arch == arm64 ]] || ue_die "UE_ARCH: x86_64 or arm64, not $arch"
export UE_ARCH=$arch
[[ $arch != arm64 ]] || testout=$UE_BUILD/selftests-arm64

ue_start check
harness=$("$UE_REPO/scripts/setup.sh" --harness-dir)
upstream=$("$UE_REPO/scripts/setup.sh" --upstream-dir)
echo "kselftest harness: $harness"
echo "upstream selftests: $upstream"

# -- selftests (userspace, built once) ---------------------------------------
ue_section "selftests build"
rm -rf "$testout"
mkdir -p "$testout"
selftests_ok=1
mk=(make -C "$testsrc" "HARNESS_DIR=$harness" "UPSTREAM_DIR=$upstream" "OUT=$testout")
[[ $arch != arm64 ]] || mk+=(CC=aarch64-linux-gnu-gcc)
"${mk[@]}" || selftests_ok=0
mapfile -t progs < <(find "$testout" -maxdepth 1 -type f -perm -u+x -printf '%f\n' | LC_ALL=C sort)
echo "test programs: ${progs[*]}"
# races_test alone, for the guest whose vCPUs run in parallel
mttcg=0
if [[ $arch == x86_64 && ${UE_CHECK_MTTCG:-1} != 0 ]]; then
	mttcg=1
	mkdir -p "$testout/mttcg"
	printf '#!/bin/sh\nexec %q %q\n' "$UE_REPO/scripts/guest/races-mttcg.sh" \
		"$testout/races_test" >"$testout/mttcg/races_test_mttcg"
	chmod +x "$testout/mttcg/races_test_mttcg"
fi

one() { # one <rel> <ko>
	local rel=$1 t log
	((selftests_ok)) || ue_fail "$rel: selftests build failed"
	ue_section "$rel: guest run"
	# Allocator poisoning: a use after free that does not oops still shows.
	# On every kernel: the one 5.10 showed (tracing_open_file_tr() reading
	# a freed trace_event_file, upstream_abi_test user.flags, once) is the
	# late open that user_events_dirs.c now guards (late_open_test).
	local poison="slub_debug=FZP init_on_free=1"
	ue_guest "$rel" check -t "${UE_GUEST_TIMEOUT:-900}" \
		${poison:+--append "$poison"} -- env "UE_TEST_TIMEOUT=${UE_TEST_TIMEOUT:-300}" \
		${UE_EXPECT_TRACEFS+"UE_EXPECT_TRACEFS=$UE_EXPECT_TRACEFS"} \
		"$UE_REPO/scripts/guest/run-tests.sh" "$2" "$testout"
	log=$UE_RES/output.log
	# Every test program must have run, and the runner must have ended.
	if [[ -f $log ]] && ((UE_GSTATUS != 2)); then
		for t in "${progs[@]}"; do
			grep -qxF "# ue-run: $t" "$log" || ue_fail "$rel: $t: did not run"
		done
		ue_expect '^# ue-run: end' "$rel: guest runner did not finish"
	fi
	UE_SUMMARY+=("$rel: upstream's selftests: $(awk '$2 ~ /^upstream_/ { n[$1]++; t++ }
		END { printf "%d passed, %d failed, %d known difference(s), of %d", n["P"], n["F"], n["K"], t }' \
		"$UE_RES/counted" 2>/dev/null)")
	((mttcg)) || return 0
	ue_section "$rel: races_test, vCPUs in parallel (multi-threaded TCG)"
	ue_guest "$rel" check-mttcg -t "${UE_GUEST_TIMEOUT:-900}" --smp 2 --accel tcg \
		${poison:+--append "$poison"} -- env "UE_TEST_TIMEOUT=${UE_TEST_TIMEOUT:-300}" \
		"$UE_REPO/scripts/guest/run-tests.sh" "$2" "$testout/mttcg"
	if [[ -f $UE_RES/output.log ]] && ((UE_GSTATUS != 2)); then
		grep -qxF "# ue-run: races_test_mttcg" "$UE_RES/output.log" ||
			ue_fail "$rel: races_test_mttcg: did not run"
		ue_expect '^# ue-run: end' "$rel: guest runner did not finish (races_test_mttcg)"
	fi
}
ue_each_kernel one

# -- host checks: style and static analysis, versions, docs (no guest) -----
# The TAP lines of a host check script, counted, and one summary line.
host_checks() { # host_checks <label> <prefix> <command...>
	local p0=$UE_PASS f0=$UE_FAIL
	ue_section "$1"
	UE_TAP=$2 ue_relay '' "${@:3}"
	UE_SUMMARY+=("$2: $((UE_PASS - p0)) passed, $((UE_FAIL - f0)) failed")
}

[[ ${UE_HOST_CHECKS:-1} != 0 ]] || UE_CHECK_PACKAGE=0
host_kos=()
for rel in "${UE_KERNELS[@]}"; do
	if [[ -f $UE_BUILD/$rel/module/user_events.ko ]]; then
		host_kos+=("$UE_BUILD/$rel/module/user_events.ko")
	fi
done
if [[ $arch == arm64 ]]; then
	UE_CHECK_PACKAGE=0 UE_HOST_CHECKS=0
	# Debian's arm64 6.1 and 5.10: no CONFIG_KALLSYMS_ALL, so the module
	# derives the tracing core's variables. It must load on them, and refuse
	# cleanly when a check of the derivation fails (forced). Debian 11's
	# DKMS 2.8.4 builds the module for 5.10: this is what its users meet.
	host_checks "arm64 6.1: loads on derived addresses, refuses a failed check" refusal \
		"$UE_REPO/scripts/arm64/refusal-test.sh" 6.1
	host_checks "arm64 5.10 (Debian 11, DKMS 2.8 builds it): loads on derived addresses, refuses a failed check" \
		refusal-5.10 "$UE_REPO/scripts/arm64/refusal-test.sh" 5.10
fi
if [[ ${UE_HOST_CHECKS:-1} != 0 ]]; then
	host_checks "lint (checkpatch, sparse)" lint "$UE_REPO/scripts/lint.sh"
	host_checks "host checks (versions, docs)" host \
		"$UE_REPO/scripts/check-host.sh" "${host_kos[@]}"
fi
# The Debian package as users get it: build, install (DKMS builds the
# module for each kernel), smoke test the installed module in a guest of
# each kernel, purge. It installs a package, so it needs root.
if [[ ${UE_CHECK_PACKAGE:-1} == 1 ]]; then
	if ((EUID == 0)); then
		host_checks "package (deb, DKMS, smoke test)" package \
			env UE_PACKAGE_ARM64=0 "$UE_REPO/scripts/package-test.sh"
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		host_checks "package (deb, DKMS, smoke test)" package \
			sudo -n env "KVERS=${KVERS:-}" "UE_BUILD_DIR=$UE_BUILD" UE_PACKAGE_ARM64=0 \
			"$UE_REPO/scripts/package-test.sh"
	else
		host_checks "package (deb, DKMS, smoke test)" package \
			sh -c 'echo "not ok - needs root or passwordless sudo (UE_CHECK_PACKAGE=0 skips it)"; exit 1'
	fi
fi

ue_finish check
