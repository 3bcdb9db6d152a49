#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/race/core_churn.sh [seconds]: the tracing core alone (no user_events.ko), in a
# guest: a kprobe event created and deleted, instances made and removed, hist
# triggers and enables written to the event's files, all at once. On
# 6.1.0-56 it crashed the kernel in 5 s (list corruption in tracing_log_err()
# from event_hist_trigger_parse()): the 6.1 crashes ue_race finds in the same
# files are of this kind. Run: scripts/guest/run.sh --smp 2 <rel> -- tests/race/core_churn.sh 180
# What it is (6.1's core frees an event's trace_event_file under a racing
# open of its enable file or a write to its open trigger file), measured
# with tests/race/enable_churn_runs.sh and tests/race/ghost_open.py: tests/race/README.
t=/sys/kernel/tracing
end=$((SECONDS + ${1:-120}))
loop_events() { while ((SECONDS < end)); do
	echo 'p:kpx do_sys_openat2 dfd=%di:s32' >> $t/kprobe_events 2>/dev/null
	sleep 0.0$((RANDOM % 5))
	echo '-:kpx' >> $t/kprobe_events 2>/dev/null
done; }
loop_inst() { while ((SECONDS < end)); do
	mkdir $t/instances/kpi$1 2>/dev/null; sleep 0.0$((RANDOM % 3)); rmdir $t/instances/kpi$1 2>/dev/null
done; }
loop_trig() { while ((SECONDS < end)); do
	for d in $t/events/kprobes/kpx $t/instances/kpi*/events/kprobes/kpx; do
		echo 'hist:keys=dfd' 2>/dev/null > $d/trigger
		echo 1 2>/dev/null > $d/enable
		echo '!hist:keys=dfd' 2>/dev/null > $d/trigger
		echo 0 2>/dev/null > $d/enable
	done
done; }
loop_open() { while ((SECONDS < end)); do cat /proc/self/stat > /dev/null; done; }
loop_events & loop_events & loop_inst 1 & loop_inst 2 & loop_trig & loop_trig & loop_open &
wait
echo CHURN_DONE
dmesg | grep -E 'BUG|Oops|WARNING' | head
