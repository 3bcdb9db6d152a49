#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/race/text_poke_probe.sh [SECONDS]   (guest side, as root; no module)
#
# Does the QEMU running this guest let a vCPU run stale code after the
# kernel patches its text? Enables and disables sched_switch in a loop for
# SECONDS (default 60) while two pipelines of 1-byte dd keep both vCPUs
# switching tasks: each toggle patches the tracepoint's static key and
# static call (int3 breakpoints, then the new instruction, then a sync of
# every CPU), which __schedule runs through all the time. Under Debian 12's
# QEMU 7.2 with multi-threaded TCG, a vCPU executes the int3 after the
# kernel has taken it out again: "Oops: int3" in __schedule (6.12), or
# the guest hangs (6.1).
# Prints "toggles=N" every 50 toggles and at the end. From the host:
#   scripts/guest/run.sh --accel tcg REL -- tests/race/text_poke_probe.sh 60
# (takes bookworm-backports' QEMU: scripts/guest/qemu-mttcg.sh), or with
# UE_QEMU=qemu-system-x86_64 the system's. tests/race/README, "Multi-threaded TCG".
set -u
s=${1:-60}
t=/sys/kernel/tracing
en=$t/events/sched/sched_switch/enable
pids=()
for _ in 1 2; do
	(dd if=/dev/zero bs=1 2>/dev/null | dd of=/dev/null bs=1 2>/dev/null) &
	pids+=($!)
done
n=0 end=$((SECONDS + s))
while ((SECONDS < end)); do
	echo 1 >"$en"
	echo 0 >"$en"
	n=$((n + 1))
	((n % 50)) || echo "toggles=$n"
done
echo "toggles=$n"
# The subshells, then the dd processes they started
pkill -P "$(IFS=,; echo "${pids[*]}")" 2>/dev/null
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
echo "text_poke_probe: done"
