#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make fuzz`: for every target kernel (scripts/kernels.sh, KVERS=...),
# build the module and run tests/fuzz/ue_fuzz in a QEMU guest for FUZZ_S seconds.
# Inputs that fail are printed and copied into tests/fuzz/regressions/ (one
# .case file per kind of failure; tests/fuzz/regress.sh replays them). When the
# guest itself dies (oops, panic...), the last inputs it ran are kept as
# tests/fuzz/regressions/crash-<kernel>-<seed>.case.
#
# Environment:
#   FUZZ_S=60           seconds of fuzzing per kernel
#   FUZZ_SEED=N         replay a seed (default: fresh, printed)
#   FUZZ_SAVE=0         do not copy failing inputs into tests/fuzz/regressions/
#   KVERS, V=1, UE_ROBUST_BUILD_DIR as for tests/stress/run.sh
# Counting as for tests/stress/run.sh (scripts/lib.sh). Last line:
# "N passed, N failed".
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ue_start_run FUZZ 60 fuzz
ue_build_tool ue_fuzz tests/fuzz/ue_fuzz.c || ue_finish fuzz
regs=$UE_REPO/tests/fuzz/regressions

one() { # one <rel> <ko>
	local c dst
	ue_section "$1: guest run (seed $UE_SEED, ${UE_SECS}s)"
	rm -rf "$UE_BUILD/$1/fuzz/cases" "$UE_BUILD/$1/fuzz/last-inputs.log"
	ue_guest "$1" fuzz -t $((UE_SECS * 2 + 600)) --smp 2 -- \
		"$UE_REPO/tests/fuzz/guest.sh" fuzz "$2" "$UE_BUILD/bin/ue_fuzz" "$UE_SECS" "$UE_SEED"
	ue_expect '^# ue_fuzz: [0-9]* passed' "$1: ue_fuzz did not finish"
	UE_SUMMARY+=("$1: $(grep -m1 -o 'inputs tried: [0-9]*' "$UE_RES/output.log" || echo 'no count')")
	[[ ${FUZZ_SAVE:-1} == 1 ]] || return 0
	for c in "$UE_RES"/cases/*.case; do
		[[ -f $c && ! -e $regs/${c##*/} ]] || continue
		cp "$c" "$regs/"
		echo "new regression case: tests/fuzz/regressions/${c##*/}"
	done
	if ((UE_GSTATUS == 2)) && [[ -s $UE_RES/last-inputs.log ]]; then
		dst=$regs/crash-$1-$UE_SEED.case
		# The slots of the ring in the order they ran
		{
			echo "# last inputs before the guest failed ($1, seed $UE_SEED)"
			tr -d '\0' <"$UE_RES/last-inputs.log" | awk '
				/^# n=/ { n = substr($0, 6) + 0; next }
				NF { line[n] = $0; if (n > max) max = n; if (!seen || n < min) min = n; seen = 1 }
				END { for (i = min; i <= max; i++) if (i in line) print line[i] }'
		} >"$dst"
		echo "crash case (last inputs): tests/fuzz/regressions/${dst##*/}"
	fi
}
ue_each_kernel one
ue_finish fuzz "replay: FUZZ_SEED=$UE_SEED FUZZ_S=$UE_SECS make fuzz"
