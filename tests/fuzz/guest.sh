#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make fuzz` and tests/fuzz/regress.sh (run in the QEMU guest):
#
#   tests/fuzz/guest.sh fuzz <module.ko> <ue_fuzz> <seconds> <seed>
#   tests/fuzz/guest.sh replay <module.ko> <ue_fuzz> <case files...>
#
# Loads the module, runs the fuzzer (failing inputs saved under
# /run/ue/cases, the last inputs in /run/ue/last-inputs.log, both in the
# results share) or replays the cases, then the end-of-run checks of
# scripts/lib.sh (unload, nothing left in tracefs, clean kernel log).
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

mode=${1:?mode} ko=${2:?module} bin=${3:?ue_fuzz}
shift 3
ue_load "$ko" || exit 1
# The trace buffer fills with fuzzed records: keep it small
echo 256 >"$UE_TRACING/buffer_size_kb" 2>/dev/null
case $mode in
fuzz)
	mkdir -p /run/ue/cases
	ue_tool ue_fuzz "$bin" -s "${2:?seed}" -t "${1:?seconds}" -o /run/ue/cases -L /run/ue/last-inputs.log
	;;
replay) ue_tool ue_fuzz "$bin" --replay "$@" ;;
*) false ;;
esac || ue_notok "ue_fuzz ($mode) exited with status $?"
echo 0 >"$UE_TRACING/events/enable" 2>/dev/null
ue_kernel_checks
