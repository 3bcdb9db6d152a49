#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make race` (run inside the QEMU guest by tests/race/run.sh):
#
#   tests/race/guest.sh <module.ko> <ue_race binary> <seconds> <seed> [ue_race args...]
#
# Loads the module, runs ue_race for <seconds> with <seed> and the
# rmmod/insmod loop (-m <module.ko>), then checks the kernel log and taint
# (ue_kernel_checks of scripts/lib.sh; no unload: the loop leaves the
# module loaded or not). A kernel oops, WARN, refcount_t, lockdep or KASAN
# report is a failure here and, on the console, for the host runner.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

# FUSE for -M held (its FUSE part is left out without /dev/fuse)
modprobe fuse 2>/dev/null || true
ue_load "${1:?usage: $0 <module.ko> <ue_race> <seconds> <seed> [ue_race args...]}" || exit 1
ue_tool ue_race "$2" -s "$4" -t "$3" -m "$1" "${@:5}" || ue_notok "ue_race exited with status $?"
UE_NO_UNLOAD=1 ue_kernel_checks
