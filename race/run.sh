#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make race`: the concurrency fuzzer. For every target kernel
# (scripts/kernels.sh, KVERS=...), build the module, boot the kernel in
# QEMU with -smp 2 and run race/ue_race under race/guest.sh for RACE_S
# seconds: many threads in several processes on 3 shared event names, with
# an rmmod/insmod loop beside them. Then count the ok / not ok lines.
#
# Environment:
#   RACE_S=20           seconds per kernel (short by default)
#   RACE_SEED=N         replay a seed (default: a fresh one, printed)
#   RACE_ARGS="..."     extra ue_race options (-p procs, -T threads, -n names)
#   RACE_ACCEL=tcg      QEMU accelerator for the guest (default: the guest
#                       runner's, single-threaded TCG). Multi-threaded TCG
#                       ("tcg") runs the two vCPUs truly in parallel, which
#                       hits short race windows far more often. On 6.12 it
#                       can end in a false "Oops: int3" in __schedule (QEMU
#                       7.2 runs stale code after static key patching; see
#                       scripts/guest/run.sh): not the module's.
#   KVERS="rel ..."     kernels (default: scripts/kernels.sh)
#   V=1                 show the guest consoles live
#   UE_ROBUST_BUILD_DIR build dir (default build/robust)
#
# Counting: each "ok" line passes, each "not ok" line fails; a module build
# that fails or warns, a guest run that fails (oops, WARN, refcount_t,
# lockdep, hung task, KASAN..., timeout) and a missing ue_race result each
# add one failure. Last line: "N passed, N failed"; exit status non-zero
# iff something failed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export UE_BUILD_DIR=${UE_ROBUST_BUILD_DIR:-$repo/build/robust}
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

secs=${RACE_S:-20}
[[ $secs =~ ^[0-9]+$ ]] || ue_die "RACE_S must be a number of seconds"
seed=${RACE_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
read -r -a extra <<<"${RACE_ARGS:-}"
t0=$SECONDS

ue_lock_build
"$UE_REPO/scripts/setup.sh"
mapfile -t kernels < <("$UE_REPO/scripts/kernels.sh")
((${#kernels[@]})) || ue_die "no kernels"

bindir=$UE_BUILD/bin
mkdir -p "$bindir"
total_pass=0 total_fail=0
summary=() failed=()

echo "===== race: seed $seed, ${secs}s per kernel, kernels: ${kernels[*]}"
if ! gcc -O2 -g -Wall -Wextra -Werror -pthread -I"$UE_REPO/include" \
	-o "$bindir/ue_race" "$UE_REPO/race/ue_race.c"; then
	echo "ue_race build FAILED"
	echo "0 passed, 1 failed"
	exit 1
fi

for rel in "${kernels[@]}"; do
	pass=0 fail=0 fails=()
	echo
	echo "===== $rel: module build"
	bstatus=0
	kos=$("$UE_REPO/scripts/build-module.sh" "$rel") || bstatus=$?
	if ((bstatus != 0 && bstatus != 3)); then
		summary+=("$rel: 0 passed, 1 failed")
		failed+=("$rel: module build failed")
		total_fail=$((total_fail + 1))
		continue
	fi
	if ((bstatus == 3)); then
		fail=$((fail + 1))
		fails+=("module build printed warnings")
	fi
	ko=$(grep -m1 '/user_events\.ko$' <<<"$kos" || head -n 1 <<<"$kos")

	echo "===== $rel: guest run (seed $seed, ${secs}s, -smp 2${RACE_ACCEL:+, accel $RACE_ACCEL})"
	res=$UE_BUILD/$rel/race
	opts=(-o "$res" -t $((secs * 2 + 300)) --smp 2 --append panic_on_warn=1)
	[[ -z ${RACE_ACCEL:-} ]] || opts+=(--accel "$RACE_ACCEL")
	[[ ${V:-0} == 1 ]] || opts+=(-q)
	gstatus=0
	"$UE_REPO/scripts/guest/run.sh" "${opts[@]}" "$rel" -- \
		"$UE_REPO/race/guest.sh" "$ko" "$bindir/ue_race" "$secs" "$seed" "${extra[@]}" ||
		gstatus=$?
	[[ ${V:-0} == 1 || ! -f $res/output.log ]] || cat "$res/output.log"
	if [[ -f $res/output.log ]]; then
		p=$(grep -c -E '^ok( |$)' "$res/output.log" || true)
		f=$(grep -c -E '^not ok( |$)' "$res/output.log" || true)
		pass=$((pass + p))
		fail=$((fail + f))
		while IFS= read -r l; do fails+=("$l"); done < <(grep -E '^not ok( |$)' "$res/output.log" || true)
		if ! grep -q '^# ue_race: [0-9]* passed' "$res/output.log"; then
			fail=$((fail + 1))
			fails+=("ue_race did not finish")
		fi
		ops=$(grep -m1 -o '[0-9]* operations in [0-9]*s' "$res/output.log" || true)
		[[ -z $ops ]] || summary+=("$rel: $ops")
	fi
	if ((gstatus == 2)); then
		fail=$((fail + 1))
		fails+=("guest run failed: $(grep -m1 -a -o -E '(BUG|WARNING|Oops|refcount_t|general protection|KASAN|UBSAN)[^[]*' \
			"$res/console.log" 2>/dev/null || head -n 1 "$res/problems" 2>/dev/null || echo unknown)")
		echo "----- guest run FAILED; problems:"
		sed 's/^/  /' "$res/problems" 2>/dev/null || true
		echo "----- console ($res/console.log):"
		first=$(grep -a -n -m1 -E '\] (BUG|WARNING|Oops|general protection|KASAN|UBSAN|refcount_t|possible|INFO)' \
			"$res/console.log" | cut -d: -f1 || true)
		if [[ -n $first ]]; then
			tail -n "+$first" "$res/console.log" | head -n 60 | sed 's/^/  | /'
		else
			tail -n 40 "$res/console.log" | sed 's/^/  | /'
		fi
	fi
	summary+=("$rel: $pass passed, $fail failed")
	for f in "${fails[@]}"; do failed+=("$rel: $f"); done
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
done

echo
echo "===== race summary (seed $seed; replay: RACE_SEED=$seed RACE_S=$secs make race)"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
	echo "failed:"
	printf '  %s\n' "${failed[@]}"
fi
echo "race took $((SECONDS - t0))s"
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
