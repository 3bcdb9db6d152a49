#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make race` (run inside the QEMU guest by race/run.sh):
#
#   race/guest.sh <module.ko> <ue_race binary> <seconds> <seed> [ue_race args...]
#
# Loads the module, runs ue_race for <seconds> with <seed> and the
# rmmod/insmod loop (-m <module.ko>), then checks the kernel log. Prints
# "ok - ..." / "not ok - ..." lines (ue_race's own included) and exits
# non-zero iff one failed. A kernel oops, WARN, refcount_t, lockdep or KASAN
# report is a failure here and, on the console, for the host runner.
set -uo pipefail

if (($# < 4)); then
	echo "usage: $0 <module.ko> <ue_race> <seconds> <seed> [args...]" >&2
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
kpat+='blocked for more than|general protection fault|still in use|'
kpat+='KASAN:|UBSAN:|unable to handle (kernel|page fault)|soft lockup|hard LOCKUP|'
kpat+='detected stalls on CPU|stack-protector|refcount_t:|list_(add|del) corruption|'
kpat+='double fault|kernel stack overflow|kmemleak|data-race)'

echo "# kernel $(uname -r), $(nproc) CPUs, module $ko"
dmesg -C 2>/dev/null
if ! insmod "$ko"; then
	notok "insmod $ko"
	echo "0 passed, 1 failed"
	exit 1
fi
ok "insmod"

"$bin" -s "$seed" -t "$secs" -m "$ko" "$@" 2>&1 |
	sed -u '/^[0-9]* passed, [0-9]* failed$/s/^/# ue_race: /'
st=${PIPESTATUS[0]}
((st == 0)) || notok "ue_race exited with status $st"

# KCSAN kernels (UE_KCSAN_MODULE=<module>): only data races with an access in
# the module's code count (see scripts/guest/run.sh); the core kernel's own
# are counted in a comment.
if [[ -n ${UE_KCSAN_MODULE:-} ]]; then
	rm -f /tmp/kcsan-other.log
	mapfile -t klines < <(dmesg | awk -v other=/tmp/kcsan-other.log \
		-f "$(dirname "$0")/../scripts/guest/kcsan-filter.awk" | grep -E "$kpat")
	tail -n 1 /tmp/kcsan-other.log 2>/dev/null
else
	mapfile -t klines < <(dmesg | grep -E "$kpat")
fi
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
