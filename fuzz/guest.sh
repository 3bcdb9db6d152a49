#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make fuzz` and fuzz/regress.sh (run in the QEMU guest):
#
#   fuzz/guest.sh fuzz <module.ko> <ue_fuzz> <seconds> <seed>
#   fuzz/guest.sh replay <module.ko> <ue_fuzz> <case files...>
#
# Loads the module, runs the fuzzer (failing inputs saved under
# /run/ue/cases, the last inputs in /run/ue/last-inputs.log, both in the
# results share) or replays the cases, unloads the module and checks that
# nothing is left in tracefs and the kernel log is clean. TAP-ish output.
set -uo pipefail

tracing=/sys/kernel/tracing
mode=${1:?mode} ko=${2:?module} bin=${3:?ue_fuzz}
shift 3

failures=0
ok() { echo "ok - guest: $*"; }
notok() {
	echo "not ok - guest: $*"
	failures=$((failures + 1))
}
kpat='(\bOops\b|BUG:|WARNING:|Kernel panic|Call Trace|kernel BUG at|'
kpat+='possible circular locking|inconsistent lock state|possible recursive locking|'
kpat+='suspicious RCU usage|bad unlock balance|held when returning to user|'
kpat+='blocked for more than|general protection fault|'
kpat+='KASAN:|UBSAN:|unable to handle (kernel|page fault)|soft lockup|hard LOCKUP|'
kpat+='detected stalls on CPU|stack-protector|refcount_t:|list_(add|del) corruption|'
kpat+='double fault|kernel stack overflow|kmemleak)'
modname=$(modinfo -F name "$ko" 2>/dev/null)
[[ -n $modname ]] || modname=user_events

echo "# kernel $(uname -r), $(nproc) CPUs, module $ko"
dmesg -C 2>/dev/null
if ! insmod "$ko"; then
	notok "insmod $ko"
	echo "0 passed, 1 failed"
	exit 1
fi
# The trace buffer fills with fuzzed records: keep it small
echo 256 >"$tracing/buffer_size_kb" 2>/dev/null

st=0
case $mode in
fuzz)
	secs=${1:?seconds} seed=${2:?seed}
	mkdir -p /run/ue/cases
	"$bin" -s "$seed" -t "$secs" -o /run/ue/cases -L /run/ue/last-inputs.log |
		sed -u '/^[0-9]* passed, [0-9]* failed$/s/^/# ue_fuzz: /'
	st=${PIPESTATUS[0]}
	;;
replay)
	"$bin" --replay "$@" | sed -u '/^[0-9]* passed, [0-9]* failed$/s/^/# ue_fuzz: /'
	st=${PIPESTATUS[0]}
	;;
*)
	notok "unknown mode $mode"
	;;
esac
echo 0 >"$tracing/events/enable" 2>/dev/null

unloaded=0
for _ in $(seq 1 40); do
	# Every event pins the module, and so do its files: delete, unload
	if "$(dirname "$0")/../scripts/user-events-clear" --unload "$modname" "$tracing" 2>/dev/null; then
		unloaded=1
		break
	fi
	sleep 0.5
done
if ((unloaded)); then ok "rmmod after the run"; else notok "rmmod after the run: $(rmmod "$modname" 2>&1)"; fi
left=$(ls -d "$tracing"/user_events_* "$tracing"/events/user_events* 2>/dev/null; grep -s '^u:' "$tracing/dynamic_events")
if [[ -z $left ]]; then ok "no user_events files left in tracefs"; else notok "left in tracefs: ${left//$'\n'/ }"; fi
mapfile -t klines < <(dmesg | grep -E "$kpat")
if ((${#klines[@]})); then
	notok "kernel log is clean"
	printf '#   %s\n' "${klines[@]:0:40}"
else
	ok "kernel log is clean"
fi
((failures == 0 && st == 0))
