#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make check` (run inside the QEMU guest by scripts/check.sh):
#
#   run-tests.sh <module.ko> <tests dir>
#
# Checks the kernel has no user_events of its own, loads the module, runs
# every executable file of <tests dir> in sorted order (each with a timeout,
# from a fresh directory under /tmp), unloads the module, checks it is gone,
# and checks the kernel log and taint flags. The tests' TAP output is passed
# through; this script's own checks are TAP lines too ("ok - runner: ...",
# "not ok - runner: ..."). Before each program's output comes a line
# "# ue-run: <name>" so the host can tell whose result lines are whose.
#
# Environment:
#   UE_TEST_TIMEOUT    seconds per test program (default 300)
#   UE_EXPECT_TRACEFS  files the module must create under /sys/kernel/tracing
#                      (default "user_events_data user_events_status"; set
#                      it empty to check nothing)
# Each test gets UE_MODULE (the .ko path) and UE_MODULE_NAME in its
# environment. Exit status 0 iff every check and test passed.
set -uo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../lib.sh"

timeout_s=${UE_TEST_TIMEOUT:-300}
expect=${UE_EXPECT_TRACEFS-user_events_data user_events_status}
tracing=$UE_TRACING
UE_TAP=runner

if (($# != 2)); then
	echo "usage: $0 <module.ko> <tests dir>" >&2
	exit 2
fi
ko=$1
testdir=$2
finish() {
	echo "# ue-run: end ($UE_FAIL runner/test failure(s) seen by the runner)"
	((UE_FAIL == 0))
	exit
}

echo "# ue-run: runner"
echo "# tests in $testdir, ${timeout_s}s per test"

modname=$(modinfo -F name "$ko" 2>/dev/null)
[[ -n $modname ]] || modname=$(basename "$ko" .ko | tr - _)
UE_MODULE_NAME=$modname
if [[ ! -e $tracing/README ]]; then
	ue_notok "tracefs is mounted at $tracing"
	echo "Bail out! no tracefs"
	finish
fi
if [[ -e $tracing/user_events_data || -e $tracing/user_events_status ]] || ue_loaded; then
	ue_notok "kernel has no user_events before the module is loaded"
	echo "Bail out! this kernel already has user_events"
	finish
fi
ue_ok "kernel has no user_events before the module is loaded"

if ! ue_load "$ko"; then
	echo "Bail out! the module did not load"
	finish
fi
for f in $expect; do
	ue_check "module created $tracing/$f" test -e "$tracing/$f"
done

tests=()
mapfile -t tests < <(find "$testdir" -maxdepth 1 -type f -perm -u+x -printf '%f\n' 2>/dev/null |
	LC_ALL=C sort)
((${#tests[@]})) || echo "# no test programs in $testdir"

export UE_MODULE=$ko UE_MODULE_NAME=$modname
for t in "${tests[@]}"; do
	echo "# ue-run: $t"
	if ! ue_loaded; then
		echo "# the module is not loaded (a previous test unloaded it): loading it again"
		insmod "$ko" || { ue_notok "$t: reload the module before the test"; continue; }
	fi
	work=$(mktemp -d "/tmp/ue-test.XXXXXX")
	out=$work.out
	start=$SECONDS
	(cd "$work" && exec timeout -k 10 "$timeout_s" "$testdir/$t") </dev/null 2>&1 | tee "$out"
	st=${PIPESTATUS[0]}
	# Keep the next line (ours) from being glued to an unterminated one.
	[[ -s $out && $(tail -c 1 "$out" | od -An -c | tr -d ' ') != '\n' ]] && echo
	results=$(grep -c -E '^(not )?ok\b' "$out")
	bad=$(grep -c -i -E '^not ok\b|^ok\b.*#[[:space:]]*skip' "$out")
	plan=$(grep -m1 -E '^1\.\.[0-9]+' "$out" | sed -E 's/^1\.\.([0-9]+).*/\1/')
	secs=$((SECONDS - start))
	if ((st == 124 || st == 137)); then
		ue_notok "$t: timed out after ${timeout_s}s"
	elif ((st > 128)); then
		ue_notok "$t: killed by signal $((st - 128)) (exit status $st)"
	elif ((results == 0)); then
		ue_notok "$t: printed no TAP result line (exit status $st)"
	elif ((st != 0 && bad == 0)); then
		ue_notok "$t: exit status $st without a failing result line"
	elif [[ -n $plan ]] && ((results < plan)); then
		ue_notok "$t: printed $results of the $plan results it planned (exit status $st)"
	fi
	echo "# $t: exit status $st after ${secs}s"
	rm -rf "$work" "$out"
done

echo "# ue-run: runner"
if ue_loaded; then
	# Every event pins the module: delete what the tests left (persistent
	# events of the status page ABI and dynamic_events), as an admin would.
	echo "# $(grep -c '^u:' "$tracing/dynamic_events") event(s) left by the tests"
fi
# Unload, nothing left in tracefs, clean kernel log, no new taint.
ue_kernel_checks
finish
