#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make check`'s races_test with the vCPUs in parallel
# (scripts/check.sh, check-mttcg; run by scripts/guest/run-tests.sh as
# races_test_mttcg):
#
#   races-mttcg.sh <races_test>
#
# Runs races_test with UE_RACE_PARALLEL=1 while the tracing options
# record-cmd and record-tgid are off, and puts them back afterwards.
#
# Why: with record-cmd on (the default), every enable or disable of an
# event registers or unregisters the core's probe on sched_switch, and that
# patches the tracepoint's static key in __schedule() (text_poke_bp()). Under
# multi-threaded TCG a vCPU can run stale code across such a patch: Debian
# 12's QEMU 7.2 often (a false "Oops: int3" in __schedule, with no module
# loaded: tests/race/text_poke_probe.sh), bookworm-backports' QEMU 10.0
# rarely (CI, 2026-12-07: "Oops: int3" once on 6.12.118 in this step,
# after 10 clean boots on 2026-11-26; 8 of 8 clean here again the same
# day). races_test's enable toggles
# (enable_racing_rmmod) made most of those patches; with record-cmd off
# they patch nothing, and what the test races (our enable against rmmod)
# is the same. The module's kprobe on remove_event_file_dir()
# (user_events_dirs.c) is still armed and disarmed at each load and unload.
set -uo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../lib.sh"

(($# == 1)) || { echo "usage: $0 <races_test>" >&2; exit 2; }
optdir=$UE_TRACING/options
saved=()
for o in record-cmd record-tgid; do
	saved+=("$(cat "$optdir/$o")") || exit 1
	echo 0 >"$optdir/$o" || exit 1
done
UE_RACE_PARALLEL=1 "$1"
st=$?
echo "${saved[0]}" >"$optdir/record-cmd"
echo "${saved[1]}" >"$optdir/record-tgid"
exit "$st"
