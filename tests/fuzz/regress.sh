#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay the fuzz regression cases (tests/fuzz/regressions/*.case) on every
# target kernel: build the module, boot the kernel in QEMU, run
# `ue_fuzz --replay` on all cases, unload the module, check the kernel log.
# Each case file passes if every input in it gives a documented result the
# model predicts; a guest run that fails (oops, WARN, KASAN...) is one more
# failure.
#
#   tests/fuzz/regress.sh [case files...]     (default: tests/fuzz/regressions/*.case)
#
# Environment: KVERS, V=1, UE_ROBUST_BUILD_DIR as for tests/stress/run.sh.
# Last line: "N passed, N failed"; exit status non-zero iff something failed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ue_robust

(($#)) || set -- "$UE_REPO"/tests/fuzz/regressions/*.case
cases=()
for c; do
	[[ ! -f $c ]] || cases+=("$(realpath "$c")")
done
ue_start "fuzz regressions (${#cases[@]} case files)"
ue_build_tool ue_fuzz tests/fuzz/ue_fuzz.c || ue_finish fuzz-regress

one() { # one <rel> <ko>
	ue_section "$1: replaying"
	ue_guest "$1" regress -t 900 --smp 2 -- \
		"$UE_REPO/tests/fuzz/guest.sh" replay "$2" "$UE_BUILD/bin/ue_fuzz" "${cases[@]}"
}
((${#cases[@]} == 0)) || ue_each_kernel one
ue_finish fuzz-regress
