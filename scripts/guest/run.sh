#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a Debian kernel in QEMU (TCG) with the host root shared read-only and
# run one command in it.
#
#   scripts/guest/run.sh [options] <release> [--] <command> [args...]
#   scripts/guest/run.sh [options] --kernel IMAGE --modules DIR [<release>] -- <command...>
#   scripts/guest/run.sh --shell <release>
#
# The kernel is /boot/vmlinuz-<release> with the modules of
# /lib/modules/<release>, or any other image and module tree (a kernel
# built elsewhere, the contents of extracted linux-image packages):
#   --kernel IMAGE  a bzImage or vmlinux ELF
#   --modules DIR   a directory holding lib/modules/<release> (or
#                   usr/lib/modules/<release>); the release may then be
#                   left out when IMAGE is named vmlinuz-<release> or DIR
#                   holds only one
#
# The command runs as root in a chroot of the host's root filesystem (read
# only, with tmpfs on /tmp /run /var/tmp /root, tracefs and debugfs mounted).
# Paths it uses must therefore exist on the host outside those directories
# (the repo's build/ is fine). It starts in the current directory when the
# guest can see it. The results directory is shared read-write and is /run/ue
# inside the guest; the command's output is saved there as output.log.
#
# Options:
#   -o DIR        results directory (default: build/<release>/guest); its
#                 console.log, output.log, cmd, result files are replaced
#   -t SECONDS    overall timeout (default: 900)
#   -q            do not echo the console to stdout (it is always in
#                 DIR/console.log)
#   --smp N       vCPUs (default 2)      -m SIZE   memory (default 1G)
#   --icount      deterministic instruction counting: -icount
#                 shift=0,sleep=off -smp 1 (for benchmarks)
#   --append STR  extra kernel command line
#   --accel STR   QEMU accelerator (default tcg,thread=single, or $UE_ACCEL).
#                 Multi-threaded TCG (plain "tcg") runs the vCPUs in
#                 parallel, but Debian 12's QEMU 7.2 then lets a vCPU run
#                 stale code after the kernel patches its text (static
#                 keys): 6.12 oopses with "Oops: int3" in __schedule within
#                 seconds of toggling sched_switch on and off, with no module
#                 loaded, and 6.1 hangs (tests/race/README, "Multi-threaded TCG").
#                 So with multi-threaded TCG and more than one vCPU the
#                 guest runs under bookworm-backports' QEMU 10.0, unpacked
#                 into the cache by scripts/guest/qemu-mttcg.sh (the
#                 system's QEMU is left alone), unless UE_QEMU names a
#                 qemu-system-x86_64 to use anyway (UE_QEMU=qemu-system-x86_64:
#                 the system's, to show the artefact)
#   --share DIR   also share DIR read-only at the same path (repeatable);
#                 the repository and the build dir (UE_BUILD_DIR) are shared
#                 this way when they live under /tmp, /root, /run... which
#                 the guest covers with its own file systems
#   --shell       interactive shell in the guest instead of a command
#   --arch arm64  boot one of Debian's arm64 kernels (<release> like
#                 6.12.117+deb13-arm64) under qemu-system-aarch64, from its
#                 extracted packages, with an arm64 root of its own instead of
#                 the host's: see scripts/guest/arm64.sh (default: x86_64)
#
# Exit status: 0 the guest ran the command to the end, it exited 0 and the
# console shows no kernel problem; 1 same but the command exited non-zero;
# 2 the guest run failed: timeout, hang, panic, no end marker, or an oops,
# WARNING, BUG, lockdep/hung-task/KASAN/UBSAN report on the console. Reasons
# are printed on stderr and saved in DIR/problems; DIR/result has
# guest=ok|fail, status=<command status>, seconds=<wall time>.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

usage() {
	sed -n '4,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
}

outdir='' timeout=900 quiet=0 smp=2 mem=1G icount=0 append='' shell=0 extra_shares=()
image='' modroot=''
# The guest's architecture: only x86_64 so far (the case $arch below).
arch=${UE_ARCH:-x86_64}
accel=${UE_ACCEL:-tcg,thread=single}
# The guest sees the host root, except where it mounts its own file systems.
hidden() { [[ $1/ =~ ^/(tmp|run|var/tmp|root|dev|proc|sys)/ ]]; }
shares=()
hidden "$UE_REPO" && shares+=("$UE_REPO")
[[ $UE_BUILD == "$UE_REPO"/* ]] || ! hidden "$UE_BUILD" || shares+=("$UE_BUILD")
while (($#)); do
	case $1 in
	-o) outdir=${2:?}; shift 2 ;;
	-t) timeout=${2:?}; shift 2 ;;
	-q) quiet=1; shift ;;
	--smp) smp=${2:?}; shift 2 ;;
	-m) mem=${2:?}; shift 2 ;;
	--icount) icount=1; shift ;;
	--append) append=${2:?}; shift 2 ;;
	--accel) accel=${2:?}; shift 2 ;;
	--shell) shell=1; shift ;;
	--arch) arch=${2:?}; shift 2 ;;
	--share) extra_shares+=("$(cd "${2:?}" && pwd)"); shift 2 ;;
	--kernel) image=$(realpath -e "${2:?}"); shift 2 ;;
	--modules) modroot=$(cd "${2:?}" && pwd); shift 2 ;;
	-h | --help) usage ;;
	--) break ;;
	-*) ue_note "unknown option $1"; usage ;;
	*) break ;;
	esac
done
rel=
if [[ ${1:-} != -- ]]; then
	(($# >= 1)) || usage
	rel=$1
	shift
fi
[[ ${1:-} == -- ]] && shift
# The module tree: <modroot>/lib/modules/<rel> (merged-/usr: usr/lib/...).
if [[ -n $modroot && ! -d $modroot/lib/modules && -d $modroot/usr/lib/modules ]]; then
	modroot=$modroot/usr
fi
# No release given: the image's name (vmlinuz-<rel>), or the only one there.
[[ -n $rel || ${image##*/} != vmlinuz-* ]] || rel=${image##*/vmlinuz-}
if [[ -z $rel ]]; then
	[[ -n $modroot ]] || usage
	mapfile -t rels < <(find "$modroot/lib/modules" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
	((${#rels[@]} == 1)) || ue_die "name the release: $modroot/lib/modules holds ${rels[*]:-none}"
	rel=${rels[0]}
fi
image=${image:-/boot/vmlinuz-$rel}
if ((shell)); then
	(($# == 0)) || ue_die "--shell takes no command"
else
	(($# >= 1)) || ue_die "no command given"
fi
[[ $timeout =~ ^[0-9]+$ ]] || ue_die "bad timeout: $timeout"

# What differs between architectures: the QEMU binary and machine, the
# serial console, how the kernel image is given to QEMU, the root the guest
# sees (the host's, or arm64's own), its initramfs.
case $arch in
x86_64)
	qemu_bin=${UE_QEMU:-qemu-system-x86_64}
	# Multi-threaded TCG: a QEMU that does not run stale code (see --accel)
	if [[ -z ${UE_QEMU:-} && $accel == tcg* && $accel != *thread=single* ]] &&
		((!icount && smp > 1)); then
		qemu_bin=$("$UE_REPO/scripts/guest/qemu-mttcg.sh") ||
			ue_die "no QEMU safe with multi-threaded TCG (scripts/guest/qemu-mttcg.sh)"
	fi
	qemu_machine=(-cpu max)
	console=ttyS0,115200
	hostroot=/
	# The ELF inside the bzImage boots through its PVH entry, much faster.
	boot_image=$("$UE_REPO/scripts/guest/vmlinux.sh" "$image")
	initrd=$("$UE_REPO/scripts/guest/initramfs.sh" "$rel" ${modroot:+"$modroot"})
	;;
arm64)
	# Debian's arm64 kernels from their extracted packages, with an arm64
	# root of its own (sets vmlinux, initrd, hostroot, console)
	# shellcheck source=scripts/guest/arm64.sh
	. "$UE_REPO/scripts/guest/arm64.sh"
	qemu_bin=qemu-system-aarch64
	qemu_machine=(-M virt -cpu max,pauth-impdef=on)
	boot_image=$vmlinux
	;;
*) ue_die "unsupported guest architecture: $arch (x86_64 or arm64)" ;;
esac
command -v "$qemu_bin" >/dev/null || ue_die "$qemu_bin missing (run scripts/setup.sh)"

outdir=${outdir:-$UE_BUILD/$rel/guest}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
[[ $outdir != *[[:space:],]* ]] || ue_die "results dir must not contain spaces or commas: $outdir"
rm -f "$outdir"/{console.log,console.scanned,kcsan-other.log,output.log,cmd,result,problems}

token=$(tr -dc 'a-f0-9' </proc/sys/kernel/random/uuid | head -c 16)

if ((!shell)); then
	{
		printf '#!/bin/bash\n'
		printf '# generated by scripts/guest/run.sh\n'
		printf 'cd -- %q 2>/dev/null || cd /\n' "$PWD"
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$outdir/cmd"
	chmod 755 "$outdir/cmd"
	guestcmd=/run/ue/cmd
else
	guestcmd=shell
fi

# shellcheck disable=SC2054 # commas belong to the option values
cmdline=(
	"console=$console" printk.time=1
	# A loaded host can starve TCG long enough for the boot-time check of
	# the IO-APIC timer to fail ("IO-APIC + timer doesn't work!"): panic
	no_timer_check
	panic_on_warn=1 oops=panic panic=-1
	hung_task_panic=1 sysctl.kernel.hung_task_timeout_secs=60
	# A hang report shows every CPU's stack: the task holding the lock
	# the blocked ones wait for is often running
	sysctl.kernel.hung_task_all_cpu_backtrace=1
	rdinit=/init "uecmd=$guestcmd" "uetoken=$token"
)
# KCSAN reports end in check_panic_on_warn(): on a KCSAN kernel, where the
# core's own data races are only listed (UE_KCSAN_MODULE), a WARN must not
# panic; the console scan still fails the run on every other report.
[[ -z ${UE_KCSAN_MODULE:-} ]] || cmdline=("${cmdline[@]/#panic_on_warn=1/panic_on_warn=0}")
shares+=("${extra_shares[@]}")
for d in "${shares[@]}"; do
	[[ $d != *[[:space:],]* ]] || ue_die "shared directory must not contain spaces or commas: $d"
done
sharelist=$(IFS=,; printf '%s' "${shares[*]}")
cmdline+=("ueshares=$sharelist")
# A kernel booted from its package (--modules): the guest mounts its
# modules at /lib/modules/<release>, so that modprobe works there (fuse on
# Debian 11, say). The host root must show them (not under /tmp...).
if [[ -n $modroot && $arch == x86_64 && -d $modroot/lib/modules/$rel ]]; then
	uemodules=$(cd "$modroot/lib/modules/$rel" && pwd -P)
	hidden "$uemodules" || cmdline+=("uemodules=$uemodules")
fi
# An arm64 kernel's modules, from its extracted package (scripts/guest/arm64.sh)
[[ $arch != arm64 || -z $ue_arm64_mods ]] || cmdline+=("uemodules=$ue_arm64_mods")
if [[ -n $append ]]; then
	read -r -a extra <<<"$append"
	cmdline+=("${extra[@]}")
fi

# shellcheck disable=SC2054
qemu=(
	"$qemu_bin" -accel "$accel" "${qemu_machine[@]}" -m "$mem" -nographic -no-reboot
	-kernel "$boot_image" -initrd "$initrd" -append "${cmdline[*]}"
	-nic none
	-virtfs "local,path=$hostroot,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$outdir,mount_tag=ueresults,security_model=none,multidevs=remap"
)
for i in "${!shares[@]}"; do
	qemu+=(-virtfs "local,path=${shares[$i]},mount_tag=ues$i,security_model=none,readonly=on,multidevs=remap")
done
if ((icount)); then
	# shellcheck disable=SC2054
	qemu+=(-icount shift=0,sleep=off -smp 1)
else
	qemu+=(-smp "$smp")
fi

if ((shell)); then
	exec "${qemu[@]}"
fi

log=$outdir/console.log
# Drop carriage returns and the firmware's terminal control sequences (they
# would switch off line wrapping in the terminal showing this).
clean='s/\r//g; s/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g'
start=$(date +%s.%N)
set +e
if ((quiet)); then
	timeout -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | sed -u "$clean" >"$log"
	qstatus=${PIPESTATUS[0]}
else
	timeout -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | sed -u "$clean" | tee "$log"
	qstatus=${PIPESTATUS[0]}
	echo
fi
set -e
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')

problems=()
if ((qstatus == 124 || qstatus == 137)); then
	problems+=("timeout: no power-off within ${timeout}s")
elif ((qstatus != 0)); then
	problems+=("qemu exited with status $qstatus")
fi

marker=$(grep -a -o "UE-GUEST-END token=$token status=[0-9]*" "$log" | tail -n 1 || true)
status=
if [[ -z $marker ]]; then
	problems+=("no end marker: the guest did not finish the command (hang, timeout or panic)")
else
	status=${marker##*status=}
fi

# Kernel messages carry a [seconds.micro] timestamp (printk.time=1); the
# command's own output does not, so it cannot trip UE_KPAT (scripts/lib.sh).
# KCSAN kernels (UE_KCSAN_MODULE=<module>): a data race report counts only
# when one of the racing accesses is in the module's code; the core
# kernel's own are listed in DIR/kcsan-other.log.
ue_kcsan_filter "$outdir/kcsan-other.log" <"$log" >"$outdir/console.scanned"
mapfile -t klines < <(grep -a -E "\[ *[0-9]+\.[0-9]+\] .*$UE_KPAT" "$outdir/console.scanned" |
	grep -a -v -E "\] (Kernel )?[Cc]ommand line: " | head -n 20 || true)
if ((${#klines[@]})); then
	problems+=("kernel reported a problem on the console:")
	problems+=("${klines[@]/#/    }")
fi

guest=ok
((${#problems[@]} == 0)) || guest=fail
{
	printf 'guest=%s\n' "$guest"
	printf 'status=%s\n' "${status:-none}"
	printf 'seconds=%s\n' "$secs"
	printf 'release=%s\n' "$rel"
} >"$outdir/result"

if [[ $guest == fail ]]; then
	printf '%s\n' "${problems[@]}" >"$outdir/problems"
	ue_note "$rel: GUEST RUN FAILED after ${secs}s (console: $log)"
	printf '    %s\n' "${problems[@]}" >&2
	exit 2
fi
ue_note "$rel: guest finished in ${secs}s, command exit status $status"
[[ $status == 0 ]] || exit 1
exit 0
