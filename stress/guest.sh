#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make stress` (run inside the QEMU guest by stress/run.sh):
#
#   stress/guest.sh <module.ko> <ue_stress binary> <seconds> <seed> [ue_stress args...]
#
# Loads the module, runs ue_stress for <seconds> with <seed> and then
# ue_races (found next to ue_stress; UE_RACES=0 skips it), then checks
# that the module unloads (retrying for a few seconds: address spaces that
# had enablers are released from a work item) and that no user_events file
# is left in tracefs, and that the kernel log is clean. Prints TAP-ish
# "ok - ..." / "not ok - ..." lines (ue_stress's own included) and exits
# non-zero iff one failed.
set -uo pipefail

tracing=/sys/kernel/tracing
if (($# < 4)); then
	echo "usage: $0 <module.ko> <ue_stress> <seconds> <seed> [args...]" >&2
	exit 2
fi
ko=$1 bin=$2 secs=$3 seed=$4
shift 4

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
loaded() { grep -q "^$modname " /proc/modules; }
leftovers() {
	local f
	for f in "$tracing/user_events_data" "$tracing/user_events_status" \
		"$tracing/events/user_events" "$tracing/events/user_events_multi"; do
		[[ -e $f ]] && echo "$f"
	done
	grep -s '^u:' "$tracing/dynamic_events"
}

echo "# kernel $(uname -r), $(nproc) CPUs, module $ko"
dmesg -C 2>/dev/null
if ! insmod "$ko"; then
	notok "insmod $ko"
	dmesg | tail -n 20 | sed 's/^/#   /'
	echo "0 passed, 1 failed"
	exit 1
fi
ok "insmod"

# ue_stress prints its own ok/not ok lines and "N passed, N failed"
"$bin" -s "$seed" -t "$secs" "$@" 2>&1 | sed -u '/^[0-9]* passed, [0-9]* failed$/s/^/# ue_stress: /'
st=${PIPESTATUS[0]}
((st == 0)) || notok "ue_stress exited with status $st"

# Targeted races (ue_races next to ue_stress), unless UE_RACES=0
races=$(dirname "$bin")/ue_races
if [[ ${UE_RACES:-1} != 0 && -x $races ]]; then
	read -r -a rargs <<<"${UE_RACES_ARGS:-}"
	"$races" "${rargs[@]}" 2>&1 | sed -u '/^[0-9]* passed, [0-9]* failed$/s/^/# ue_races: /'
	rst=${PIPESTATUS[0]}
	((rst == 0 || rst == 1)) || notok "ue_races exited with status $rst"
fi

# Module references of released address spaces drop from a work item.
unloaded=0
for _ in $(seq 1 40); do
	# Every event pins the module: delete them all first
	"$(dirname "$0")/../scripts/user-events-clear" "$tracing" 2>/dev/null
	if rmmod "$modname" 2>/dev/null; then
		unloaded=1
		break
	fi
	sleep 0.5
done
if ((unloaded)); then
	ok "rmmod after the run"
else
	notok "rmmod after the run: $(rmmod "$modname" 2>&1)"
	sed 's/^/#   /' "$tracing/user_events_status" 2>/dev/null | tail -n 20
fi
left=$(leftovers)
if [[ -z $left ]]; then
	ok "no user_events files left in tracefs"
else
	notok "user_events files left in tracefs: ${left//$'\n'/ }"
fi

mapfile -t klines < <(dmesg | grep -E "$kpat")
if ((${#klines[@]})); then
	notok "kernel log is clean"
	printf '#   %s\n' "${klines[@]:0:40}"
else
	ok "kernel log is clean"
fi
tainted=$(cat /proc/sys/kernel/tainted)
if ((tainted & ~(4096 | 8192))); then
	notok "kernel taint beyond O/E: $tainted"
else
	ok "kernel not tainted beyond O/E ($tainted)"
fi
echo "# guest: $failures failure(s)"
((failures == 0 && st == 0))
