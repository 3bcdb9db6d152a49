#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: set up as `make check` does, build user_events.ko for each
# target kernel and tests/bench/ue_bench.c, then per kernel boot
#   - a QEMU guest with -icount (1 guest ns = 1 instruction, -smp 1):
#     path lengths of the write path, profile, registration rows;
#   - a plain multi-threaded TCG guest with -smp 2 (--accel tcg): 1 vs 2
#     writer threads;
#   - a plain TCG guest with -smp 2 (run.sh's default accelerator): time to
#     register 32000 events, kernel memory per event/enabler;
# and turn the guest logs into tests/bench/results/<kernel>.md, chart.png,
# summary.json and the results block of tests/bench/README.md.
#
# Environment:
#   KVERS="rel ..."        kernels (default: scripts/kernels.sh)
#   UE_BENCH_MODES         "icount scale tcg" (default) or some of them
#   UE_BENCH_OPS, UE_BENCH_REPS, UE_BENCH_WARM, UE_BENCH_LEVELS, UE_BENCH_OWN_LEVELS,
#   UE_BENCH_EVENTS, UE_BENCH_SCALE_SECS, UE_BENCH_SCALE_REPS, UE_BENCH_PROF,
#   UE_BENCH_REG
#                          passed to the guest (see tests/bench/guest.sh); runs
#                          with non-default values do not write
#                          tests/bench/results/ unless UE_BENCH_RESULTS is set
#   UE_BENCH_RESULTS       results directory (default tests/bench/results)
#   UE_BUILD_DIR           build directory; bench uses <it>/bench
#                          (default build/bench), so that it does not
#                          share module builds with `make check`
#   V=1                    show the guest consoles
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
ue_set_build "$UE_BUILD/bench"
repo=$UE_REPO

modes=${UE_BENCH_MODES:-icount scale tcg}
custom=0
genv=(env)
for v in UE_BENCH_OPS UE_BENCH_REPS UE_BENCH_WARM UE_BENCH_LEVELS UE_BENCH_OWN_LEVELS UE_BENCH_EVENTS \
	UE_BENCH_SCALE_SECS UE_BENCH_SCALE_REPS UE_BENCH_PROF UE_BENCH_REG; do
	if [[ -n ${!v+set} ]]; then
		genv+=("$v=${!v}")
		custom=1
	fi
done
[[ $modes == "icount scale tcg" ]] || custom=1
results=${UE_BENCH_RESULTS:-}
if [[ -z $results ]]; then
	if ((custom)); then
		results=$UE_BUILD/results
		ue_note "non-default settings: results go to $results, not tests/bench/results"
	else
		results=$repo/tests/bench/results
	fi
fi

ue_start bench
py=/usr/bin/python3
"$py" -c 'import matplotlib' 2>/dev/null || ue_install_packages python3-matplotlib ||
	ue_die "cannot install python3-matplotlib (for tests/bench/results/chart.png)"
echo "build dir: $UE_BUILD; results: $results"

ue_section "ue_bench build"
ue_build_tool ue_bench tests/bench/ue_bench.c -static || ue_finish bench
bin=$UE_BUILD/bin/ue_bench

declare -A ko=()
for rel in "${UE_KERNELS[@]}"; do
	ue_section "$rel: module build"
	ue_module "$rel" || continue
	ko[$rel]=$UE_KO
	# The bench helper (tracing core calls timed in the -icount guest)
	kmod=$UE_BUILD/$rel/kmod
	if ! { rm -rf "$kmod" && mkdir -p "$kmod" && cp "$UE_REPO"/tests/bench/kmod/{Kbuild,*.c} "$kmod"/ &&
		make -s -C "/lib/modules/$rel/build" M="$kmod" modules >"$kmod/build.log" 2>&1; }; then
		cat "$kmod/build.log" 2>/dev/null
		ue_fail "$rel: bench helper build failed"
	fi
done

runopts=(-m 2G)
[[ ${V:-0} == 1 ]] || runopts+=(-q)
guest() { # guest <rel> <mode>: boot, run tests/bench/guest.sh
	local rel=$1 mode=$2 st=0
	local opts=("${runopts[@]}" -o "$UE_BUILD/$rel/$mode")
	case $mode in
	icount) opts+=(--icount -t 3600) ;;
	# Writers on 2 vCPUs need one host thread per vCPU. run.sh defaults
	# to single-threaded TCG (multi-threaded TCG of QEMU 7.2 can run stale
	# code after kernel text patching); the scale boot patches no text
	# while it measures.
	scale) opts+=(--smp 2 --accel tcg -t 1800) ;;
	*) opts+=(--smp 2 -t 1800) ;;
	esac
	"$UE_REPO/scripts/guest/run.sh" "${opts[@]}" "$rel" -- "${genv[@]}" \
		"$UE_REPO/tests/bench/guest.sh" "$mode" "${ko[$rel]}" "$bin" \
		"$UE_BUILD/$rel/kmod/ue_bench_kmod.ko" || st=$?
	return "$st"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
host_load_start=$(load)

# Path lengths do not depend on the host's load: boot the -icount guests
# of all kernels at once (one host thread each).
if [[ " $modes " == *" icount "* ]]; then
	ue_section "icount guests (${!ko[*]})"
	declare -A pids=()
	for rel in "${!ko[@]}"; do
		guest "$rel" icount >"$UE_BUILD/$rel.icount.run.log" 2>&1 &
		pids[$rel]=$!
	done
	for rel in "${!pids[@]}"; do
		if ! wait "${pids[$rel]}"; then
			ue_fail "$rel: icount guest run failed (see $UE_BUILD/$rel.icount.run.log)"
		fi
		sed 's/^/  /' "$UE_BUILD/$rel.icount.run.log"
		grep -h -v -E '^(PROF|GRAPH)' "$UE_BUILD/$rel/icount/output.log" 2>/dev/null || true
	done
fi

# Wall-clock rows: one guest at a time.
for mode in scale tcg; do
	[[ " $modes " == *" $mode "* ]] || continue
	for rel in "${UE_KERNELS[@]}"; do
		[[ -n ${ko[$rel]:-} ]] || continue
		ue_section "$rel: plain TCG guest (-smp 2), $mode"
		echo "host load average before: $(load)"
		guest "$rel" "$mode" || ue_fail "$rel: $mode guest run failed"
		cat "$UE_BUILD/$rel/$mode/output.log" 2>/dev/null || true
	done
done
host_load_end=$(load)

ue_section "report"
mkdir -p "$results"
specs=()
for rel in "${UE_KERNELS[@]}"; do
	[[ -n ${ko[$rel]:-} ]] || continue
	logs=()
	for mode in icount scale tcg; do
		log=$UE_BUILD/$rel/$mode/output.log
		if [[ " $modes " == *" $mode "* && -f $log ]]; then
			cp "$log" "$results/$rel.$mode.log"
			logs+=("$results/$rel.$mode.log")
		else
			logs+=("")
		fi
	done
	if [[ -n ${logs[0]} && ${UE_BENCH_REG:-1} != 0 ]] && ! grep -q '^ROW	reg_r_' "${logs[0]}"; then
		ue_fail "$rel: the icount run did not finish its rows"
	fi
	specs+=("$rel=$(IFS=,; echo "${logs[*]}")")
done

rev=$(git -C "$UE_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$UE_REPO" status --porcelain -- '*.c' '*.h' '*.S' Kbuild include 2>/dev/null |
	grep -v '^??' | grep -c . || true)
((dirty == 0)) || rev+=" + uncommitted changes to $dirty module file(s)"
qv=$(qemu-system-x86_64 --version | head -n 1 | sed 's/^QEMU emulator version //')
meta="Measured $(date -u '+%Y-%m-%d %H:%M UTC') by \`make bench\` on module commit $rev"
meta+=" (module version $(cat "$UE_REPO/VERSION")); QEMU $qv, TCG;"
meta+=" host load average $host_load_start at the start, $host_load_end at the end."
readme=()
[[ $results == "$repo/tests/bench/results" ]] && readme=(--readme "$repo/tests/bench/README.md")
"$py" "$UE_REPO/tests/bench/report.py" --out "$results" "${readme[@]}" --meta "$meta" "${specs[@]}" ||
	ue_fail "report.py failed"
echo "results: $results"

ue_finish bench
