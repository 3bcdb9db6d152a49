#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make check` (run inside the QEMU guest by scripts/check.sh):
#
#   run-tests.sh <module.ko> <tests dir>
#
# Checks the kernel has no user_events of its own, loads the module, runs
# every executable file of <tests dir> in sorted order (each with a timeout,
# from a fresh directory under /tmp), unloads the module, checks it is gone,
# and checks the kernel log and taint flags. The tests' TAP output is passed
# through; this script's own checks are TAP lines too ("ok - runner: ...",
# "not ok - runner: ..."). Before each program's output comes a line
# "# ue-run: <name>" so the host can tell whose result lines are whose.
#
# Environment:
#   UE_TEST_TIMEOUT    seconds per test program (default 300)
#   UE_EXPECT_TRACEFS  files the module must create under /sys/kernel/tracing
#                      (default "user_events_data user_events_status"; set
#                      it empty to check nothing)
# Each test gets UE_MODULE (the .ko path) and UE_MODULE_NAME in its
# environment. Exit status 0 iff every check and test passed.
set -uo pipefail

tracing=/sys/kernel/tracing
timeout_s=${UE_TEST_TIMEOUT:-300}
expect=${UE_EXPECT_TRACEFS-user_events_data user_events_status}

if (($# != 2)); then
	echo "usage: $0 <module.ko> <tests dir>" >&2
	exit 2
fi
ko=$1
testdir=$2

failures=0
ok() { echo "ok - runner: $*"; }
notok() {
	echo "not ok - runner: $*"
	failures=$((failures + 1))
}
check() { # check <description> <command...>
	local what=$1
	shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}
finish() {
	echo "# ue-run: end ($failures runner/test failure(s) seen by the runner)"
	((failures == 0))
	exit
}

# The same kernel-log patterns the host looks for on the console.
kpat='(\bOops\b|BUG:|WARNING:|Kernel panic|Call Trace|kernel BUG at|'
kpat+='possible circular locking|inconsistent lock state|possible recursive locking|'
kpat+='suspicious RCU usage|bad unlock balance|held when returning to user|'
kpat+='blocked for more than|general protection fault|'
kpat+='KASAN:|UBSAN:|unable to handle (kernel|page fault)|soft lockup|hard LOCKUP|'
kpat+='detected stalls on CPU|stack-protector|refcount_t:|list_(add|del) corruption|'
kpat+='double fault|kernel stack overflow)'

echo "# ue-run: runner"
echo "# kernel $(uname -r), module $ko, tests in $testdir, ${timeout_s}s per test"

modname=$(modinfo -F name "$ko" 2>/dev/null)
[[ -n $modname ]] || modname=$(basename "$ko" .ko | tr - _)

loaded() { grep -q "^$modname " /proc/modules; }
have_tracing() { [[ -e $tracing/README ]]; }
no_user_events() {
	[[ ! -e $tracing/user_events_data && ! -e $tracing/user_events_status ]] && ! loaded
}
# Taint bits other than O (out-of-tree, 4096) and E (unsigned, 8192).
bad_taint() { echo $(($(cat /proc/sys/kernel/tainted) & ~(4096 | 8192))); }

if ! have_tracing; then
	notok "tracefs is mounted at $tracing"
	echo "Bail out! no tracefs"
	finish
fi
if ! no_user_events; then
	notok "kernel has no user_events before the module is loaded"
	echo "Bail out! this kernel already has user_events"
	finish
fi
ok "kernel has no user_events before the module is loaded"

taint0=$(bad_taint)
dmesg -C 2>/dev/null || true

load() {
	local out
	if ! out=$(insmod "$ko" 2>&1); then
		echo "# $out"
		return 1
	fi
	loaded
}
if ! load; then
	notok "insmod $ko"
	echo "# dmesg:"
	dmesg 2>/dev/null | tail -n 30 | sed 's/^/#   /'
	echo "Bail out! the module did not load"
	finish
fi
ok "insmod $(basename "$ko")"
for f in $expect; do
	check "module created $tracing/$f" test -e "$tracing/$f"
done

tests=()
mapfile -t tests < <(find "$testdir" -maxdepth 1 -type f -perm -u+x -printf '%f\n' 2>/dev/null |
	LC_ALL=C sort)
((${#tests[@]})) || echo "# no test programs in $testdir"

export UE_MODULE=$ko UE_MODULE_NAME=$modname
for t in "${tests[@]}"; do
	echo "# ue-run: $t"
	if ! loaded; then
		echo "# the module is not loaded (a previous test unloaded it): loading it again"
		load || { notok "$t: reload the module before the test"; continue; }
	fi
	work=$(mktemp -d "/tmp/ue-test.XXXXXX")
	out=$work.out
	start=$SECONDS
	(cd "$work" && exec timeout -k 10 "$timeout_s" "$testdir/$t") </dev/null 2>&1 | tee "$out"
	st=${PIPESTATUS[0]}
	# Keep the next line (ours) from being glued to an unterminated one.
	[[ -s $out && $(tail -c 1 "$out" | od -An -c | tr -d ' ') != '\n' ]] && echo
	results=$(grep -c -E '^(not )?ok\b' "$out")
	bad=$(grep -c -i -E '^not ok\b|^ok\b.*#[[:space:]]*skip' "$out")
	plan=$(grep -m1 -E '^1\.\.[0-9]+' "$out" | sed -E 's/^1\.\.([0-9]+).*/\1/')
	secs=$((SECONDS - start))
	if ((st == 124 || st == 137)); then
		notok "$t: timed out after ${timeout_s}s"
	elif ((st > 128)); then
		notok "$t: killed by signal $((st - 128)) (exit status $st)"
	elif ((results == 0)); then
		notok "$t: printed no TAP result line (exit status $st)"
	elif ((st != 0 && bad == 0)); then
		notok "$t: exit status $st without a failing result line"
	elif [[ -n $plan ]] && ((results < plan)); then
		notok "$t: printed $results of the $plan results it planned (exit status $st)"
	fi
	echo "# $t: exit status $st after ${secs}s"
	rm -rf "$work" "$out"
done

echo "# ue-run: runner"
if loaded; then
	# Every event pins the module: delete what the tests left (persistent
	# events of the status page ABI and dynamic_events), as an admin would.
	left=$(grep -c '^u:' "$tracing/dynamic_events")
	echo "# $left event(s) left by the tests, deleted with user-events-clear"
	# user-events-clear --unload: prepare_unload (the files pin the
	# module), then rmmod
	rmout=$("$(dirname "$0")/../user-events-clear" --unload "$modname" 2>&1)
	st=$?
	[[ -n $rmout ]] && echo "# $rmout"
	check "user-events-clear --unload $modname" test "$st" -eq 0
else
	notok "module still loaded before rmmod (a test unloaded it and it was not reloaded)"
fi
# shellcheck disable=SC2317 # called through check
gone() { ! loaded && [[ ! -e $tracing/user_events_data ]]; }
check "module unloaded and its tracefs files removed" gone

klines=()
mapfile -t klines < <(dmesg 2>/dev/null | grep -E "$kpat")
if ((${#klines[@]})); then
	notok "kernel log is clean"
	printf '#   %s\n' "${klines[@]:0:40}"
else
	ok "kernel log is clean"
fi
taint1=$(bad_taint)
if ((taint1 & ~taint0)); then
	notok "kernel taint: new flags $((taint1 & ~taint0)) (tainted=$(cat /proc/sys/kernel/tainted))"
else
	ok "kernel not tainted beyond O/E (tainted=$(cat /proc/sys/kernel/tainted))"
fi
finish
