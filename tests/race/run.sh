#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make race`: the concurrency fuzzer. For every target kernel
# (scripts/kernels.sh, KVERS=...), build the module, boot the kernel in
# QEMU with -smp 2 and run tests/race/ue_race under tests/race/guest.sh for RACE_S
# seconds: many threads in several processes on 3 shared event names, with
# an rmmod/insmod loop beside them. Then count the ok / not ok lines.
#
# Environment:
#   RACE_S=20           seconds per kernel (short by default)
#   RACE_SEED=N         replay a seed (default: a fresh one, printed)
#   RACE_ARGS="..."     extra ue_race options (-p procs, -T threads, -n names)
#   RACE_MODE=relayout|held
#                       an aftermath mode instead of the operation mix (see
#                       tests/race/README): relayout checks what readers of
#                       trace, trace_pipe and perf make of the records of
#                       events deleted and created again with other
#                       layouts; held kills processes whose faults are held
#                       for ever and checks that everything can be deleted
#                       and unloaded within seconds
#   RACE_EXCLUDE=a,b    parts of the mode to leave out (ue_race -x)
#   RACE_ACCEL=tcg      QEMU accelerator for the guest (default: the guest
#                       runner's, single-threaded TCG). Multi-threaded TCG
#                       ("tcg") runs the two vCPUs truly in parallel, which
#                       hits short race windows far more often. The guest
#                       runner then takes bookworm-backports' QEMU 10.0:
#                       under Debian 12's 7.2 a vCPU runs stale code after
#                       static key patching (6.12: false "Oops: int3" in
#                       __schedule; 6.1: hangs; tests/race/README,
#                       "Multi-threaded TCG").
#   RACE_EVENT_FILES=1  on kernels before 6.6 (6.1), do not add ue_race -F
#                       (see below): the core's own use-after-free of
#                       event files then comes back (a 300 s run of seed
#                       271515854016110 on 6.1.0-56 died 97 s in)
#   KVERS, V=1, UE_ROBUST_BUILD_DIR as for tests/stress/run.sh
#
# Counting as for tests/stress/run.sh (scripts/lib.sh); a missing ue_race result
# adds one failure. Last line: "N passed, N failed".
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ue_start_run RACE 20 race
ue_build_tool ue_race tests/race/ue_race.c "$UE_REPO/tests/race/aftermath.c" \
	"$UE_REPO/tests/race/relayout.c" "$UE_REPO/tests/race/held.c" || ue_finish race
mode=()
[[ -z ${RACE_MODE:-} ]] || mode=(-M "$RACE_MODE" ${RACE_EXCLUDE:+-x "$RACE_EXCLUDE"})

# Kernels before 6.6 (Debian's 6.1; 5.10 not measured) get ue_race -F: no
# open() of a file in one event's tracefs directory (NAME/enable,
# NAME/trigger) while events and instances come and go; enables go through
# set_event instead, and there are no hist triggers. Reason: the tracing core of those kernels
# (no eventfs) frees an event's trace_event_file when its directory is
# removed (an event deleted, whichever kind, or an instance removed), even
# while an open() of its enable file is between the lookup and
# tracing_open_file_tr(), or while its trigger file is open; that open or
# write then uses freed memory ("page fault at 0x1d30 in
# __ftrace_event_enable_disable()", WARNs in trace_array_put() and
# event_file_put(), a NULL dereference in event_hist_trigger_parse()).
# It happens with kprobe and synthetic events and no module loaded
# (tests/race/enable_churn_runs.sh); upstream fixed it only for eventfs
# (b63db58e2fa5, 6.9; 6.6.y), and Debian's 6.1 does not have it. See
# tests/race/README and Documentation/security.rst. Everything else still runs.
# RACE_EVENT_FILES=1 keeps the per-event files there (to see the core's bug).
no_event_files() { # no_event_files <release>: true before 6.6
	local maj min
	[[ ${RACE_EVENT_FILES:-0} != 1 ]] || return 1
	IFS=. read -r maj min _ <<<"${1%%-*}"
	((maj < 6 || (maj == 6 && min < 6)))
}

one() { # one <rel> <ko>
	local extra=()
	! no_event_files "$1" || extra=(-F)
	ue_section "$1: guest run (seed $UE_SEED, ${UE_SECS}s, -smp 2${RACE_ACCEL:+, accel $RACE_ACCEL}${RACE_MODE:+, mode $RACE_MODE}${RACE_EXCLUDE:+ without $RACE_EXCLUDE}${extra:+, ${extra[*]}})"
	ue_guest "$1" race -t $((UE_SECS * 2 + 300)) --smp 2 ${RACE_ACCEL:+--accel "$RACE_ACCEL"} -- \
		"$UE_REPO/tests/race/guest.sh" "$2" "$UE_BUILD/bin/ue_race" "$UE_SECS" "$UE_SEED" \
		"${extra[@]}" "${mode[@]}" "${UE_ARGS[@]}"
	ue_expect '^# ue_race: [0-9]* passed' "$1: ue_race did not finish"
	UE_SUMMARY+=("$1: $(grep -m1 -o '[0-9]* operations in [0-9]*s' "$UE_RES/output.log" || echo 'no count')")
}
ue_each_kernel one
ue_finish race "replay: RACE_SEED=$UE_SEED RACE_S=$UE_SECS${RACE_MODE:+ RACE_MODE=$RACE_MODE}${RACE_EXCLUDE:+ RACE_EXCLUDE=$RACE_EXCLUDE} make race"
