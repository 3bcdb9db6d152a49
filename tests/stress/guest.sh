#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make stress` (run inside the QEMU guest by tests/stress/run.sh):
#
#   tests/stress/guest.sh <module.ko> <ue_stress binary> <seconds> <seed> [ue_stress args...]
#
# Loads the module, runs ue_stress for <seconds> with <seed> and then
# its targeted races, ue_stress --races (UE_RACES=0 skips them,
# UE_RACES_ARGS are their arguments), then the end-of-run checks of scripts/lib.sh
# (ue_kernel_checks: unload, nothing left in tracefs, clean kernel log).
# Prints "ok - ..." / "not ok - ..." lines; exit status non-zero iff one
# failed.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

ue_load "${1:?usage: $0 <module.ko> <ue_stress> <seconds> <seed> [ue_stress args...]}" || exit 1
ue_tool ue_stress "$2" -s "$4" -t "$3" "${@:5}" || ue_notok "ue_stress exited with status $?"
if [[ ${UE_RACES:-1} != 0 ]]; then
	read -r -a rargs <<<"${UE_RACES_ARGS:-}"
	ue_tool ue_races "$2" --races "${rargs[@]}"
	rst=$?
	((rst <= 1)) || ue_notok "ue_races exited with status $rst"
fi
ue_kernel_checks
