#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/race/enable_churn.sh <enable_churn binary> [module.ko|-] [enable_churn args...]
#
# Guest side, as root: loads user_events.ko when given (the kinds user and
# ucycle need it), turns tests/race/ghost_detect.sh on, runs enable_churn
# (tests/race/enable_churn.c: the churn behind 6.1's "page fault at 0x1d30 in
# __ftrace_event_enable_disable()"), then prints the detector's count
# ("ghost opens seen: N") and CHURN_DONE. A panic ends the guest before.
# Host side: tests/race/enable_churn_runs.sh.
bin=${1:?usage: $0 <enable_churn> [module.ko|-] [args...]}
ko=${2:--}
shift 2
dir=$(dirname "$0")
if [[ $ko != - ]]; then
	insmod "$ko" || exit 1
fi
"$dir"/ghost_detect.sh on
"$bin" "$@"
"$dir"/ghost_detect.sh count
echo CHURN_DONE
