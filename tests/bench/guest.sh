#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make bench` (run inside a QEMU guest by tests/bench/run.sh
# through scripts/guest/run.sh):
#
#   guest.sh icount <module.ko> <ue_bench> [<ue_bench_kmod.ko>]
#                                            path lengths (-icount boot)
#   guest.sh scale  <module.ko> <ue_bench>   1 vs 2 writer threads (plain
#                                            multi-threaded TCG, -smp 2)
#   guest.sh tcg    <module.ko> <ue_bench>   registration time and memory
#                                            (plain TCG, -smp 2)
#   guest.sh toggles <module.ko> <ue_bench>  root's enable of an unrelated
#                                            event while a process with N
#                                            bits toggles its event
#   guest.sh forks  <module.ko> <ue_bench>   fork and fork+exit of a process
#                                            with 0, 1, 4096, 65536 enable
#                                            bits, worst user_events_status
#                                            read meanwhile (plain TCG)
#
# <module.ko> "-" measures the kernel's own (in-tree, CONFIG_USER_EVENTS=y)
# user_events instead: nothing is loaded, the write-path rows run with the
# remote-write ABI only (ue_bench rows -R), and the profile, the bench
# helper and the registration rows (which need the module) are skipped.
#
# Prints ue_bench's tab-separated lines (see tests/bench/ue_bench.c) on stdout;
# Exit status non-zero if a step failed.
#
# Environment (for quick runs): UE_BENCH_OPS (100000), UE_BENCH_REPS (5),
# UE_BENCH_WARM (2), UE_BENCH_LEVELS (1,1000,32000), UE_BENCH_OWN_LEVELS
# (1,1000,8000), UE_BENCH_EVENTS
# (32000), UE_BENCH_SCALE_SECS (1), UE_BENCH_SCALE_REPS (9), UE_BENCH_PROF
# (1: run the profile), UE_BENCH_REG (1: run the registration rows).
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

mode=${1:?usage: guest.sh icount|scale|tcg <module.ko> <ue_bench>}
ko=${2:?}
bin=${3:?}
kmod=${4:-}	# tests/bench/kmod/ue_bench_kmod.ko built for this kernel
t=/sys/kernel/tracing
ops=${UE_BENCH_OPS:-100000}
reps=${UE_BENCH_REPS:-5}
warm=${UE_BENCH_WARM:-2}
levels=${UE_BENCH_LEVELS:-1,1000,32000}
own_levels=${UE_BENCH_OWN_LEVELS:-1,1000,8000}
events=${UE_BENCH_EVENTS:-32000}
scale_secs=${UE_BENCH_SCALE_SECS:-1}
scale_reps=${UE_BENCH_SCALE_REPS:-9}
prof=${UE_BENCH_PROF:-1}
reg=${UE_BENCH_REG:-1}
# Functions profiled (those not traceable on a kernel are skipped). The
# first is the calibration stub.
prof_funcs="bpf_lsm_file_permission
	__x64_sys_getppid __x64_sys_write __x64_sys_writev
	ksys_write vfs_write vfs_writev do_writev import_iovec __import_iovec
	rw_verify_area security_file_permission apparmor_file_permission
	__fdget_pos fdget_pos new_sync_write do_iter_readv_writev do_iter_write
	write_null write_iter_null __fsnotify_parent fsnotify
	user_events_write user_events_write_iter user_event_emit_buf user_event_emit_iovecs
	user_event_record_direct user_event_stage_and_deliver
	user_event_ftrace user_event_perf user_event_validate
	iov_iter_advance
	_copy_from_iter copy_from_user_nofault __check_object_size
	__check_heap_object check_stack_object __virt_addr_valid
	perf_tp_event perf_swevent_event perf_event_output_forward
	perf_output_begin_forward perf_prepare_sample perf_output_sample
	perf_output_end perf_output_copy perf_swevent_hrtimer
	kfree __kmalloc"
# kernel/trace/ is built without ftrace hooks: trace_event_buffer_reserve,
# ring_buffer_lock_reserve, tracing_mark_write... cannot be timed this
# way (nor with kprobe events: they refuse notrace functions). Their share
# shows as the difference of the enclosing traceable functions.
rc=0
intree=0
rows_opts=()
if [[ $ko == - ]]; then
	intree=1 prof=0 reg=0 kmod=''
	rows_opts=(-R)
fi

info() { printf 'INFO\t%s\n' "$*"; }
step() {
	local start=$SECONDS st
	"$@"
	st=$?
	if ((st)); then
		printf 'INFO\tFAILED (status %d): %s\n' "$st" "$*"
		rc=1
	fi
	info "step took $((SECONDS - start)) s of guest time: ${*##*/}"
	return "$st"
}

load() {
	if ((intree)); then
		[[ -e $t/user_events_data ]] || { echo "no in-tree user_events in $(uname -r)" >&2; exit 1; }
		return 0
	fi
	insmod "$ko" || { echo "insmod $ko failed" >&2; dmesg | tail -n 20 >&2; exit 1; }
}
unload() { ((intree)) || ue_unload || rc=1; }

# Run from tmpfs: no 9p page faults while measuring, and a uprobe target
# whose path the guest owns.
cp "$bin" /tmp/ue_bench || exit 1
chmod 755 /tmp/ue_bench
b=/tmp/ue_bench

info "kernel $(uname -r), mode $mode, $(nproc) CPU(s), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
if ((intree)); then
	info "in-tree user_events of $(uname -r), no module"
else
	info "module $(modinfo -F version "$ko" 2>/dev/null) srcversion $(modinfo -F srcversion "$ko" 2>/dev/null)"
fi
echo 1 >"$t/tracing_on"
info "ftrace buffer_size_kb $(cat "$t/buffer_size_kb") per CPU, overwrite mode"

case $mode in
icount)
	load
	# Let the kernel's start-up work finish: idle guest time costs no host
	# time under -icount sleep=off; then half a guest second of busy loop.
	sleep 5
	step "$b" warmup 0.5
	step "$b" rows -n "$ops" -r "$reps" -w "$warm" "${rows_opts[@]}"

	# Where the instructions go: function_graph on one function at a time
	# (only that function is patched, so its duration is its inclusive
	# path length plus one entry/exit of the tracer, calibrated with the
	# empty LSM stub bpf_lsm_file_permission). See ue_bench.c cmd_prof.
	if ((prof)); then
		pstart=$SECONDS
		echo 0 >"$t/tracing_on"
		echo 1 >"$t/options/funcgraph-proc"
		echo 1 >"$t/options/funcgraph-tail"
		avail=$(cut -d' ' -f1 "$t/available_filter_functions" | sort -u)
		for f in $prof_funcs; do
			grep -qxF "$f" <<<"$avail" || { info "prof: $f not traceable here"; continue; }
			echo "$f" >"$t/set_ftrace_filter" || continue
			echo function_graph >"$t/current_tracer" || { rc=1; break; }
			"$b" prof 5 | sed "s/^PROF\t/PROF\t$f\t/" || rc=1
			echo nop >"$t/current_tracer"
		done
		# The call tree of one operation of each row, every traceable
		# function patched (kernel/trace/ itself is never traceable).
		echo >"$t/set_ftrace_filter"
		echo 0 >"$t/options/funcgraph-tail"
		echo '__x64_sys_write __x64_sys_writev __x64_sys_getppid' >"$t/set_graph_function" 2>/dev/null ||
			echo '__x64_sys_write __x64_sys_writev' >"$t/set_graph_function"
		echo function_graph >"$t/current_tracer" && "$b" prof 1 tree || rc=1
		echo nop >"$t/current_tracer"
		echo >"$t/set_graph_function"
		echo >"$t/trace"
		echo 1 >"$t/tracing_on"
		info "prof took $((SECONDS - pstart)) s of guest time"
	fi

	# The tracing core's calls, timed one by one (kernel/trace/ is not
	# traceable): tests/bench/kmod/ue_bench_kmod.c, on an enabled user event.
	if [[ -n $kmod && -f $kmod ]]; then
		if echo 'u:ue_kb char[16] x' >>"$t/dynamic_events" &&
			echo 1 >"$t/events/user_events/ue_kb/enable"; then
			dmesg -C
			insmod "$kmod" iters=3000 2>/dev/null # fails with EAGAIN on purpose
			dmesg | sed -n 's/^.*UEKB\t/KMOD\t/p'
			dmesg | grep -q 'UEKB.ev_reserve_commit' || { info "bench helper gave no figures"; rc=1; }
			echo 0 >"$t/events/user_events/ue_kb/enable"
		else
			info "bench helper: cannot make the ue_kb event"
			rc=1
		fi
	fi
	unload

	# Registration rows from a fresh module: no events exist.
	if ((reg)); then
		load
		step "$b" reg -r "$reps" -w 1 -l "$levels" -o "$own_levels"
		info "events after reg: $(grep '^Active' $t/user_events_status)"
	fi
	;;
scale)
	# Booted with multi-threaded TCG (--accel tcg): 2 vCPUs, 2 host threads
	load
	sleep 2
	# The host's /proc/<pid> of this guest's QEMU, for host CPU time per
	# run: / is the host root over 9p, whose /proc guest procfs covers; a
	# bind mount of / shows the share's own /proc, where self is QEMU
	hp=()
	if mkdir -p /tmp/hostroot && mount --bind / /tmp/hostroot 2>/dev/null; then
		qp=$(readlink /tmp/hostroot/proc/self) &&
			[[ -e /tmp/hostroot/proc/$qp/stat ]] && hp=(-H "/tmp/hostroot/proc/$qp")
	fi
	((${#hp[@]})) || info "scale: no host /proc: ratios of wall-clock rates only"
	step "$b" scale -d "$scale_secs" -r "$scale_reps" "${hp[@]}"
	;;
tcg)
	load
	# Enablers first: their slab objects must not be reused ones freed by
	# the regtime process (MemFree/Slab would not move).
	step "$b" enablers -N 10000
	step "$b" regtime -N "$events" -m $((events < 10000 ? events : 10000))
	info "events at the end: $(grep '^Active' $t/user_events_status)"
	;;
forks)
	load
	step "$b" forks -l "${UE_BENCH_FORK_LEVELS:-0,1,4096,65536}" -r 21
	unload
	;;
toggles)
	load
	step "$b" toggles -l "${UE_BENCH_TOGGLE_LEVELS:-1,65536,262144}" -r 21
	unload
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac

dmesg | grep -E 'user_events|BUG|WARNING' | tail -n 20 | sed 's/^/INFO\tdmesg: /'
exit "$rc"
