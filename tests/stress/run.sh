#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make stress`: for every target kernel (scripts/kernels.sh, KVERS=...),
# build the module, boot the kernel in QEMU with -smp 2 and run
# tests/stress/ue_stress under tests/stress/guest.sh for STRESS_S seconds, then its
# targeted races (ue_stress --races), then count the ok / not ok lines.
#
# Environment:
#   STRESS_S=120        seconds of random operations per kernel
#   STRESS_SEED=N       replay a seed (default: a fresh one, printed)
#   STRESS_ARGS="..."   extra ue_stress options (-p procs, -T threads, -v)
#   KVERS="rel ..."     kernels (default: scripts/kernels.sh)
#   V=1                 show the guest consoles live
#   UE_ROBUST_BUILD_DIR build dir (default build/robust: separate from
#                       `make check`'s build/, so both can run at once)
#
# Counting (scripts/lib.sh, as for every driver): each "ok" line passes
# (a SKIP fails), each "not ok" line fails; a module build that fails or
# warns, a failed guest run (oops, WARN, lockdep, hung task, KASAN...,
# timeout) and a missing ue_stress result each add one failure. Last line:
# "N passed, N failed"; exit status non-zero iff something failed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ue_start_run STRESS 120 stress
ue_build_tool ue_stress tests/stress/ue_stress.c || ue_finish stress

one() { # one <rel> <ko>
	ue_section "$1: guest run (seed $UE_SEED, ${UE_SECS}s, -smp 2)"
	ue_guest "$1" stress -t $((UE_SECS * 2 + 600)) --smp 2 -- \
		"$UE_REPO/tests/stress/guest.sh" "$2" "$UE_BUILD/bin/ue_stress" "$UE_SECS" "$UE_SEED" "${UE_ARGS[@]}"
	ue_expect '^# ue_stress: [0-9]* passed' "$1: ue_stress did not finish"
	UE_SUMMARY+=("$1: $(grep -m1 -o '[0-9]* ops/s sustained' "$UE_RES/output.log" || echo 'no rate')")
}
ue_each_kernel one
ue_finish stress "replay: STRESS_SEED=$UE_SEED STRESS_S=$UE_SECS make stress"
