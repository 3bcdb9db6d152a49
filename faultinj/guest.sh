#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of the fault injection run (scripts/debug-kernel.sh, KASAN
# kernel): faultinj/guest.sh <module.ko> <ue_failnth binary> [max faults]
# Loads the module, runs ue_failnth, deletes what is left, unloads.
set -uo pipefail
ko=$1 bin=$2 max=${3:-200}
tracing=/sys/kernel/tracing
modname=user_events

if ! insmod "$ko"; then
	echo "not ok - failnth: insmod"
	exit 1
fi
echo "ok - failnth: insmod"
"$bin" "$max" | sed -u '/^[0-9]* passed, [0-9]* failed$/s/^/# ue_failnth: /'
st=${PIPESTATUS[0]}
if "$(dirname "$0")/../scripts/user-events-clear" --unload "$modname" "$tracing"; then
	echo "ok - failnth: rmmod"
else
	echo "not ok - failnth: rmmod"
	st=1
fi
exit "$st"
