#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of the fault injection run (scripts/debug-kernel.sh, KASAN
# kernel): tests/faultinj/guest.sh <module.ko> <ue_failnth binary> [max faults]
# Loads the module, runs ue_failnth, then the end-of-run checks of
# scripts/lib.sh (unload, nothing left, clean kernel log).
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

UE_TAP=failnth
ue_load "$1" || exit 1
ue_tool ue_failnth "$2" "${3:-200}" || ue_notok "ue_failnth exited with status $?"
ue_kernel_checks
