#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make race-selftests`: run tests/selftests/races_test alone in a guest per
# kernel, with the two vCPUs running in parallel (multi-threaded TCG) by
# default. `make check` runs the same program under single-threaded TCG,
# where the vCPUs take turns in long time slices: there, put_racing_delete
# did some 10,000 cycles without hitting a race window a few instructions
# long, which parallel vCPUs hit within seconds. With them, races_test gets
# UE_RACE_PARALLEL=1: put_racing_delete then also fails unless at least 3 %
# of its register/close cycles overlapped a delete (the threads really
# ran at the same time: 0.5-1.2 % under single-threaded TCG).
# `make check` runs it this way too (check-mttcg).
#
# Environment:
#   RACE_ACCEL=tcg      QEMU accelerator ("" for the guest runner's default)
#   RACE_TESTS="a b"    run only these tests of races_test (-t NAME each)
#   KVERS, V=1, UE_ROBUST_BUILD_DIR as for tests/stress/run.sh
#
# Counting as in `make check` (scripts/lib.sh). Last line: "N passed, N failed".
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ue_robust

accel=${RACE_ACCEL-tcg}
ue_start race-selftests
out=$UE_BUILD/race-selftests
tests=$out/run
rm -rf "$tests"
mkdir -p "$tests"
make -s -C "$UE_REPO/tests/selftests" HARNESS_DIR="$("$UE_REPO/scripts/setup.sh" --harness-dir)" \
	OUT="$out" "$out/races_test" || { ue_fail "races_test build failed"; ue_finish race-selftests; }
# Multi-threaded TCG (the guest runner then takes a QEMU that does not run
# stale code: scripts/guest/qemu-mttcg.sh): the threads must have raced
parallel=
[[ $accel != tcg* || $accel == *thread=single* ]] || parallel=UE_RACE_PARALLEL=1
{
	echo '#!/bin/sh'
	printf 'exec env %s %q' "${parallel:-UE_RACE_PARALLEL=0}" "$out/races_test"
	for t in ${RACE_TESTS:-}; do printf ' -t %q' "$t"; done
	echo
} >"$tests/races_test"
chmod +x "$tests/races_test"

one() { # one <rel> <ko>
	ue_section "$1: races_test (accel ${accel:-default})"
	ue_guest "$1" race-selftests -t 900 --smp 2 ${accel:+--accel "$accel"} -- \
		"$UE_REPO/scripts/guest/run-tests.sh" "$2" "$tests"
}
ue_each_kernel one
ue_finish race-selftests
