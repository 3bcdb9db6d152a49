#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make demo` (run inside the QEMU guest by scripts/demo.sh):
#   demo.sh <module.ko> [sample program]
# Loads the module, starts the sample (which registers the event "test"
# with a u32 count field and writes it whenever the event is enabled),
# enables user_events/test after half a second, waits for the sample, then
# prints the trace and user_events_status. Says what happens at each step
# and keeps going when something is missing.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../lib.sh"

t=/sys/kernel/tracing
ko=${1:?usage: demo.sh <module.ko> [sample]}
sample=${2:-}
rc=0

step() { printf '\n--- %s\n' "$*"; }

step "insmod $ko"
if ! insmod "$ko"; then
	echo "insmod failed; kernel log:"
	dmesg | tail -n 20
	exit 1
fi
grep "^user_events " /proc/modules || true
ls -l "$t"/user_events_* 2>/dev/null || echo "(no $t/user_events_* files!)"

echo 0 >"$t/tracing_on"
echo >"$t/trace"
echo 1 >"$t/tracing_on"

pid=
if [[ -n $sample && -x $sample ]]; then
	step "starting $sample in the background"
	"$sample" &
	pid=$!
	sleep 0.5
else
	step "no sample program: nothing registers or writes the event"
fi

step "enabling user_events/test"
if [[ -e $t/events/user_events/test/enable ]]; then
	echo "format:"
	sed 's/^/    /' "$t/events/user_events/test/format"
	if echo 1 >"$t/events/user_events/test/enable"; then
		echo "enabled"
	else
		echo "could not enable it"
		rc=1
	fi
else
	echo "$t/events/user_events/test does not exist (not registered?)"
	ls "$t/events/user_events" 2>/dev/null || echo "(no $t/events/user_events directory)"
	rc=1
fi

if [[ -n $pid ]]; then
	step "waiting for the sample to finish"
	wait "$pid"
	st=$?
	echo "sample exit status $st"
	((st == 0)) || rc=1
fi

step "user_events_status"
cat "$t/user_events_status" 2>/dev/null || echo "(cannot read $t/user_events_status)"

step "disabling the event"
if [[ -e $t/events/user_events/test/enable ]]; then
	echo 0 >"$t/events/user_events/test/enable"
	echo disabled
fi

step "trace"
cat "$t/trace"
n=$(grep -c -E ' test: ' "$t/trace")
echo "($n test event(s) in the trace)"

step "rmmod user_events"
# Events pin the module: ue_unload deletes them first (user-events-clear)
ue_unload && echo unloaded || rc=1
exit "$rc"
