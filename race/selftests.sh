#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make race-selftests`: run selftests/races_test alone in a guest per
# kernel, with the two vCPUs running in parallel (multi-threaded TCG) by
# default. `make check` runs the same program under single-threaded TCG,
# where the vCPUs take turns in long time slices: there, put_racing_delete
# did some 10,000 cycles without hitting a race window a few instructions
# long, which parallel vCPUs hit within seconds.
#
# Environment:
#   RACE_ACCEL=tcg      QEMU accelerator ("" for the guest runner's default)
#   RACE_TESTS="a b"    run only these tests of races_test (-t NAME each)
#   KVERS="rel ..."     kernels (default: scripts/kernels.sh)
#   UE_ROBUST_BUILD_DIR build dir (default build/robust)
#
# Counting as in `make check`: each "ok" line passes unless it is a SKIP,
# each "not ok" line fails, a failed guest run (oops, WARN, refcount_t...)
# adds one failure. Last line: "N passed, N failed".
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export UE_BUILD_DIR=${UE_ROBUST_BUILD_DIR:-$repo/build/robust}
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

accel=${RACE_ACCEL-tcg}
ue_lock_build
"$UE_REPO/scripts/setup.sh"
mapfile -t kernels < <("$UE_REPO/scripts/kernels.sh")
((${#kernels[@]})) || ue_die "no kernels"

out=$UE_BUILD/race-selftests
tests=$out/run
rm -rf "$tests"
mkdir -p "$tests"
if ! make -s -C "$UE_REPO/selftests" HARNESS_DIR="$("$UE_REPO/scripts/setup.sh" --harness-dir)" \
	OUT="$out" "$out/races_test"; then
	echo "races_test build FAILED"
	echo "0 passed, 1 failed"
	exit 1
fi
{
	echo '#!/bin/sh'
	printf 'exec %q' "$out/races_test"
	for t in ${RACE_TESTS:-}; do printf ' -t %q' "$t"; done
	echo
} >"$tests/races_test"
chmod +x "$tests/races_test"

total_pass=0 total_fail=0 summary=()
for rel in "${kernels[@]}"; do
	bstatus=0
	kos=$("$UE_REPO/scripts/build-module.sh" "$rel") || bstatus=$?
	if ((bstatus != 0 && bstatus != 3)); then
		summary+=("$rel: module build failed")
		total_fail=$((total_fail + 1))
		continue
	fi
	ko=$(grep -m1 '/user_events\.ko$' <<<"$kos" || head -n 1 <<<"$kos")
	res=$UE_BUILD/$rel/race-selftests
	opts=(-q -o "$res" -t 900 --smp 2 --append panic_on_warn=1)
	[[ -z $accel ]] || opts+=(--accel "$accel")
	echo "===== $rel: races_test (accel ${accel:-default})"
	gstatus=0
	"$UE_REPO/scripts/guest/run.sh" "${opts[@]}" "$rel" -- \
		"$UE_REPO/scripts/guest/run-tests.sh" "$ko" "$tests" || gstatus=$?
	[[ ! -f $res/output.log ]] || grep -E '^(not )?ok |^# .*(Expected|register|creates|toggles)|^#  *(RUN|OK|FAIL)' "$res/output.log" || true
	p=$(grep -c -E '^ok ' "$res/output.log" 2>/dev/null || true)
	s=$(grep -c -i -E '^ok .*# *skip' "$res/output.log" 2>/dev/null || true)
	f=$(grep -c -E '^not ok ' "$res/output.log" 2>/dev/null || true)
	p=$((${p:-0} - ${s:-0})) f=$((${f:-0} + ${s:-0}))
	if ((gstatus == 2)); then
		f=$((f + 1))
		echo "----- guest run FAILED:"
		grep -a -m1 -A 30 -E '\] (BUG|WARNING|Oops|general protection|refcount_t|KASAN)' \
			"$res/console.log" | sed 's/^/  | /' || tail -n 30 "$res/console.log" | sed 's/^/  | /'
	fi
	summary+=("$rel: $p passed, $f failed")
	total_pass=$((total_pass + p)) total_fail=$((total_fail + f))
done
echo
printf '%s\n' "${summary[@]}"
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
