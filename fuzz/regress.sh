#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay the fuzz regression cases (fuzz/regressions/*.case) on every
# target kernel: build the module, boot the kernel in QEMU, run
# `ue_fuzz --replay` on all cases, unload the module, check the kernel log.
# Each case file passes if every input in it gives a documented result the
# model predicts; a guest run that fails (oops, WARN, KASAN...) is one more
# failure.
#
#   fuzz/regress.sh [case files...]     (default: fuzz/regressions/*.case)
#
# Environment: KVERS, V=1, UE_ROBUST_BUILD_DIR as for stress/run.sh;
# UE_KO=path and UE_KVER=release to use a prebuilt module on one kernel
# (scripts/debug-kernel.sh does).
# Last line: "N passed, N failed"; exit status non-zero iff something failed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export UE_BUILD_DIR=${UE_ROBUST_BUILD_DIR:-$repo/build/robust}
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

cases=("$@")
if ((${#cases[@]} == 0)); then
	shopt -s nullglob
	cases=("$UE_REPO"/fuzz/regressions/*.case)
	shopt -u nullglob
fi
for i in "${!cases[@]}"; do
	cases[i]=$(cd "$(dirname "${cases[i]}")" && pwd)/$(basename "${cases[i]}")
done
echo "===== fuzz regressions: ${#cases[@]} case file(s)"
if ((${#cases[@]} == 0)); then
	echo "0 passed, 0 failed"
	exit 0
fi

ue_lock_build
bindir=$UE_BUILD/bin
mkdir -p "$bindir"
gcc -O2 -g -Wall -Wextra -Werror -I"$UE_REPO/include" -o "$bindir/ue_fuzz" "$UE_REPO/fuzz/ue_fuzz.c" || {
	echo "ue_fuzz build FAILED"
	echo "0 passed, 1 failed"
	exit 1
}
if [[ -n ${UE_KO:-} ]]; then
	kernels=("${UE_KVER:?UE_KVER must name the kernel of UE_KO}")
else
	"$UE_REPO/scripts/setup.sh"
	mapfile -t kernels < <("$UE_REPO/scripts/kernels.sh")
fi

total_pass=0 total_fail=0 failed=()
for rel in "${kernels[@]}"; do
	pass=0 fail=0
	if [[ -n ${UE_KO:-} ]]; then
		ko=$UE_KO
	else
		bstatus=0
		kos=$("$UE_REPO/scripts/build-module.sh" "$rel") || bstatus=$?
		if ((bstatus != 0 && bstatus != 3)); then
			failed+=("$rel: module build failed")
			total_fail=$((total_fail + 1))
			continue
		fi
		ko=$(grep -m1 '/user_events\.ko$' <<<"$kos" || head -n 1 <<<"$kos")
	fi
	echo "===== $rel: replaying"
	res=$UE_BUILD/$rel/regress
	opts=(-o "$res" -t 900 --smp 2)
	[[ ${V:-0} == 1 ]] || opts+=(-q)
	gstatus=0
	"$UE_REPO/scripts/guest/run.sh" "${opts[@]}" "$rel" -- \
		"$UE_REPO/fuzz/guest.sh" replay "$ko" "$bindir/ue_fuzz" "${cases[@]}" || gstatus=$?
	[[ ${V:-0} == 1 || ! -f $res/output.log ]] || cat "$res/output.log"
	if [[ -f $res/output.log ]]; then
		pass=$(grep -c -E '^ok( |$)' "$res/output.log" || true)
		fail=$(grep -c -E '^not ok( |$)' "$res/output.log" || true)
		while IFS= read -r l; do failed+=("$rel: $l"); done < <(grep -E '^not ok( |$)' "$res/output.log" || true)
	fi
	if ((gstatus == 2)); then
		fail=$((fail + 1))
		failed+=("$rel: guest run failed: $(head -n 2 "$res/problems" 2>/dev/null | tail -n 1)")
		sed 's/^/  /' "$res/problems" 2>/dev/null || true
	fi
	echo "$rel: $pass passed, $fail failed"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
done
if ((${#failed[@]})); then
	echo "failed:"
	printf '  %s\n' "${failed[@]}"
fi
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
