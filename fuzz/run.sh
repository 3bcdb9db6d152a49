#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make fuzz`: for every target kernel (scripts/kernels.sh, KVERS=...),
# build the module and run fuzz/ue_fuzz in a QEMU guest for FUZZ_S seconds.
# Inputs that fail are printed and copied into fuzz/regressions/ (one
# .case file per kind of failure; fuzz/regress.sh replays them). When the
# guest itself dies (oops, panic...), the last inputs it ran are kept as
# fuzz/regressions/crash-<kernel>-<seed>.case.
#
# Environment:
#   FUZZ_S=60           seconds of fuzzing per kernel
#   FUZZ_SEED=N         replay a seed (default: fresh, printed)
#   FUZZ_SAVE=0         do not copy failing inputs into fuzz/regressions/
#   KVERS, V=1, UE_ROBUST_BUILD_DIR as for stress/run.sh
# Last line: "N passed, N failed" (ok/not ok lines; a failed guest run
# counts one failure).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export UE_BUILD_DIR=${UE_ROBUST_BUILD_DIR:-$repo/build/robust}
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

secs=${FUZZ_S:-60}
[[ $secs =~ ^[0-9]+$ ]] || ue_die "FUZZ_S must be a number of seconds"
seed=${FUZZ_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
t0=$SECONDS

ue_lock_build
"$UE_REPO/scripts/setup.sh"
mapfile -t kernels < <("$UE_REPO/scripts/kernels.sh")
bindir=$UE_BUILD/bin
mkdir -p "$bindir"
total_pass=0 total_fail=0 summary=() failed=()

echo "===== fuzz: seed $seed, ${secs}s per kernel, kernels: ${kernels[*]}"
if ! gcc -O2 -g -Wall -Wextra -Werror -I"$UE_REPO/include" \
	-o "$bindir/ue_fuzz" "$UE_REPO/fuzz/ue_fuzz.c"; then
	echo "ue_fuzz build FAILED"
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
		failed+=("$rel: module build failed")
		total_fail=$((total_fail + 1))
		continue
	fi
	((bstatus == 3)) && fail=$((fail + 1)) && fails+=("module build printed warnings")
	ko=$(grep -m1 '/user_events\.ko$' <<<"$kos" || head -n 1 <<<"$kos")

	echo "===== $rel: guest run (seed $seed, ${secs}s)"
	res=$UE_BUILD/$rel/fuzz
	rm -rf "$res/cases" "$res/last-inputs.log"
	opts=(-o "$res" -t $((secs * 2 + 600)) --smp 2)
	[[ ${V:-0} == 1 ]] || opts+=(-q)
	gstatus=0
	"$UE_REPO/scripts/guest/run.sh" "${opts[@]}" "$rel" -- \
		"$UE_REPO/fuzz/guest.sh" fuzz "$ko" "$bindir/ue_fuzz" "$secs" "$seed" || gstatus=$?
	[[ ${V:-0} == 1 || ! -f $res/output.log ]] || cat "$res/output.log"
	if [[ -f $res/output.log ]]; then
		pass=$((pass + $(grep -c -E '^ok( |$)' "$res/output.log" || true)))
		fail=$((fail + $(grep -c -E '^not ok( |$)' "$res/output.log" || true)))
		while IFS= read -r l; do fails+=("$l"); done < <(grep -E '^not ok( |$)' "$res/output.log" || true)
		tried=$(sed -n 's/^# inputs tried: \([0-9]*\).*/\1/p' "$res/output.log" | head -n 1)
		summary+=("$rel: ${tried:-0} inputs tried")
		grep -q '^# ue_fuzz: [0-9]* passed' "$res/output.log" ||
			{ fail=$((fail + 1)); fails+=("ue_fuzz did not finish"); }
	fi
	if [[ ${FUZZ_SAVE:-1} == 1 ]]; then
		for c in "$res"/cases/*.case; do
			[[ -f $c ]] || continue
			dst=$UE_REPO/fuzz/regressions/${c##*/}
			[[ -e $dst ]] || { cp "$c" "$dst"; echo "new regression case: fuzz/regressions/${c##*/}"; }
		done
	fi
	if ((gstatus == 2)); then
		fail=$((fail + 1))
		fails+=("guest run failed: $(grep -m1 '^    \[' "$res/problems" 2>/dev/null || head -n 1 "$res/problems" 2>/dev/null)")
		echo "----- guest run FAILED; problems:"
		sed 's/^/  /' "$res/problems" 2>/dev/null || true
		first=$(grep -n -a -m1 -E '\] (BUG|WARNING|Oops|general protection|KASAN|UBSAN|possible|INFO)' \
			"$res/console.log" | cut -d: -f1 || true)
		echo "----- console ($res/console.log):"
		if [[ -n $first ]]; then
			tail -n "+$first" "$res/console.log" | head -n 100 | sed 's/^/  | /'
		else
			tail -n 60 "$res/console.log" | sed 's/^/  | /'
		fi
		if [[ -s $res/last-inputs.log && ${FUZZ_SAVE:-1} == 1 ]]; then
			dst=$UE_REPO/fuzz/regressions/crash-$rel-$seed.case
			# slots of the ring in the order they ran
			tr -d '\0' <"$res/last-inputs.log" | awk '
				/^# n=/ { n = substr($0, 6) + 0; next }
				NF { line[n] = $0; if (n > max) max = n; if (!seen || n < min) min = n; seen = 1 }
				END { for (i = min; i <= max; i++) if (i in line) print line[i] }' >"$dst.tmp"
			{ echo "# last inputs before the guest failed ($rel, seed $seed)"; cat "$dst.tmp"; } >"$dst"
			rm -f "$dst.tmp"
			echo "crash case (last inputs): fuzz/regressions/${dst##*/}"
		fi
	fi
	summary+=("$rel: $pass passed, $fail failed")
	for f in "${fails[@]}"; do failed+=("$rel: $f"); done
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
done

echo
echo "===== fuzz summary (seed $seed; replay: FUZZ_SEED=$seed FUZZ_S=$secs make fuzz)"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
	echo "failed:"
	printf '  %s\n' "${failed[@]}"
fi
echo "fuzz took $((SECONDS - t0))s"
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
