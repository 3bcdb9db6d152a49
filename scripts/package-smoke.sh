#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of scripts/package-test.sh: run inside a QEMU guest (see
# scripts/guest/run.sh) after the user-events-dkms package was installed on
# the host, whose root the guest sees read-only.
#
#   package-smoke.sh <expected version>
#
# Loads the DKMS-built user_events module of the running kernel with
# modprobe (from /lib/modules/<release>/updates/dkms/), checks its version,
# srcversion and a parameter, that the tracefs files appear, registers an
# event through the status page ABI and writes a record to the trace, then
# unloads it and checks the kernel log. Prints TAP-style "ok"/"not ok"
# lines; exit status 0 iff all passed.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

expected=${1:?usage: $0 <expected version>}
rel=$(uname -r)
tracing=$UE_TRACING
UE_TAP="smoke $rel"

echo "# kernel $rel, expecting user_events $expected from DKMS"
dmesg -C 2>/dev/null || true
taint_before=$(cat /proc/sys/kernel/tainted)

path=$(modinfo -n user_events 2>/dev/null)
if [[ $path == /lib/modules/$rel/updates/dkms/user_events.ko* ]]; then
	ue_ok "modprobe resolves user_events to $path"
else
	ue_notok "modprobe resolves user_events to the DKMS module (got '${path:-nothing}')"
fi
ue_check "modinfo version of the module modprobe finds is $expected" \
	test "$(modinfo -F version user_events 2>/dev/null)" = "$expected"
ue_check "user_events is not loaded yet" eval '! ue_loaded'
ue_check "no user_events_data before loading" test ! -e $tracing/user_events_data

if ! modprobe user_events max_events=100; then
	ue_notok "modprobe user_events max_events=100"
	dmesg | tail -n 20 | sed 's/^/# dmesg: /'
	echo "# smoke $rel: $UE_FAIL failure(s)"
	exit 1
fi
ue_ok "modprobe user_events max_events=100"
ue_check "module is loaded" ue_loaded
ue_check "/sys/module/user_events/version is $expected" \
	test "$(cat /sys/module/user_events/version 2>/dev/null)" = "$expected"
ue_check "srcversion of the loaded module matches modinfo" \
	test "$(cat /sys/module/user_events/srcversion 2>/dev/null)" = \
	"$(modinfo -F srcversion user_events)"
ue_check "parameter max_events is 100" \
	test "$(cat /sys/module/user_events/parameters/max_events 2>/dev/null)" = 100
ue_check "$tracing/user_events_data exists" test -e $tracing/user_events_data
ue_check "$tracing/user_events_status exists" test -e $tracing/user_events_status

# Register an event through the status page ABI (struct user_reg, size 24),
# enable it in ftrace, write one record and find it in the trace.
if command -v python3 >/dev/null; then
	echo >$tracing/trace
	if out=$(python3 "$UE_REPO/scripts/package-smoke.py" "$tracing" 2>&1); then
		ue_ok "register, enable, write, trace, delete an event; clear after an exit (${out##*: })"
	else
		ue_notok "register, enable, write, trace, delete an event; clear after an exit"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
else
	echo "# no python3: event round trip skipped"
fi

ue_check "rmmod user_events is refused before prepare_unload" eval '! rmmod user_events 2>/dev/null'
ue_check "modprobe -r user_events (user-events-clear --unload)" modprobe -r user_events
ue_check "module is unloaded" eval '! ue_loaded'
ue_check "user_events_data is gone after rmmod" test ! -e $tracing/user_events_data

# What loading an out-of-tree module signed with a key the kernel does not
# know looks like: taint O (4096) and E (8192), "module verification failed".
taint=$(cat /proc/sys/kernel/tainted)
echo "# taint before $taint_before, after $taint; kernel log of the load:"
dmesg | grep -E 'user_events|verification|taint' | sed 's/^/#   /'
ue_check "no taint other than O and E" test $(((taint & ~taint_before) & ~(4096 | 8192))) = 0
if dmesg | grep -E -q "$UE_KPAT"; then
	ue_notok "kernel log is clean"
	dmesg | grep -E "$UE_KPAT" | head -n 10 | sed 's/^/# /'
else
	ue_ok "kernel log is clean"
fi

echo "# smoke $rel: $UE_FAIL failure(s)"
((UE_FAIL == 0))
