#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/refusal-test.sh [arm64 release | 6.1 | 5.10]
#
# On a kernel whose kallsyms lists no variables (CONFIG_KALLSYMS_ALL unset),
# such as Debian's arm64 6.1 kernels (Debian 12) and 5.10 kernels (Debian
# 11), the module derives the tracing core's variables from what the
# kernel's functions pass to their callees (user_events_derive.c,
# Documentation/compat.rst). This test
# checks both outcomes there: it loads, on derived addresses, and it
# refuses cleanly when a check fails. Given a series (6.1, the default, or
# 5.10), it takes that series' newest generic arm64 release whose image the
# archive actually serves (scripts/arm64/kernels.sh --series). Debian 11's
# DKMS 2.8.4 builds the module for its 5.10 arm64 kernels (it ignores
# BUILD_EXCLUSIVE_CONFIG, which no longer excludes them anyway).
# Builds the module for it, boots it (run.sh --arch arm64) and checks, as
# TAP:
#  - insmod with ksyms_test=fail:dyn_event_ops_mutex (the derivation of
#    dyn_event_ops_mutex made to fail) fails with EOPNOTSUPP ("Operation not
#    supported"), the log names that variable and the failed check, and the
#    two that depend on it; no tracefs file was created, and the module is
#    not left loaded;
#  - a plain insmod then succeeds, the symbols parameter says all four
#    variables were derived and one_copy is N, an event made through
#    dynamic_events appears, and rmmod succeeds.
# Exit status 0 iff all passed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

rel=${1:-6.1}
if [[ $rel == 6.1 || $rel == 5.10 ]]; then
	rel=$("$UE_REPO/scripts/arm64/kernels.sh" --series "$rel")
fi
kdir=$("$UE_REPO/scripts/arm64/kernel.sh" "$rel")
if grep -qx 'CONFIG_KALLSYMS_ALL=y' "$kdir/config"; then
	echo "not ok - $rel: has CONFIG_KALLSYMS_ALL, this test needs a kernel without it"
	exit 1
fi
bstatus=0
ko=$("$UE_REPO/scripts/arm64/build-module.sh" "$rel") || bstatus=$?
if ((bstatus != 0)); then
	echo "not ok - $rel: module build (status $bstatus)"
	exit 1
fi
echo "ok - $rel: module builds (W=1 clean)"

out=$UE_BUILD/$rel/refusal
mkdir -p "$out"
gstatus=0
# shellcheck disable=SC2016 # expanded in the guest
"$UE_REPO/scripts/guest/run.sh" --arch arm64 -q -o "$out" -t 300 "$rel" -- sh -c '
	insmod "$1" ksyms_test=fail:dyn_event_ops_mutex 2>&1
	echo "insmod-status=$?"
	dmesg | grep "user_events: " | sed "s/^\[[ 0-9.]*\] //"
	ls /sys/kernel/tracing/user_events_data /sys/kernel/tracing/user_events_status 2>&1
	echo "loaded=$(grep -c "^user_events " /proc/modules)"
	insmod "$1" 2>&1
	echo "insmod2-status=$?"
	sed "s/^/symbols: /" /sys/module/user_events/parameters/symbols
	echo "one_copy=$(cat /sys/module/user_events/parameters/one_copy)"
	echo "u:ue_refusal_probe u32 a" >>/sys/kernel/tracing/dynamic_events
	ls -d /sys/kernel/tracing/events/user_events/ue_refusal_probe 2>&1
	echo "!u:ue_refusal_probe" >>/sys/kernel/tracing/dynamic_events
	echo 1 >/sys/module/user_events/parameters/prepare_unload
	rmmod user_events
	echo "rmmod-status=$?"
	true' sh "$ko" || gstatus=$?
log=$out/output.log
fail=0
t() { # t <description> <command...>
	local what=$1
	shift
	if "$@"; then echo "ok - $rel: $what"; else echo "not ok - $rel: $what"; fail=1; fi
}
t "guest ran cleanly" test "$gstatus" = 0
t "forced failure: insmod fails with EOPNOTSUPP" grep -q 'could not insert module.*Operation not supported' "$log"
t "forced failure: insmod exit status non-zero" grep -qx 'insmod-status=[1-9][0-9]*' "$log"
t "forced failure: log names dyn_event_ops_mutex and the check" \
	grep -qx 'user_events: cannot locate dyn_event_ops_mutex: failed check: forced to fail (ksyms_test)' "$log"
for s in dyn_event_ops_list dyn_event_list; do
	t "forced failure: log names $s, which depends on it" \
		grep -qx "user_events: cannot locate $s: failed check: needs dyn_event_ops.*" "$log"
done
t "forced failure: no tracefs files" grep -q "cannot access '/sys/kernel/tracing/user_events_data'" "$log"
t "forced failure: module not loaded" grep -qx 'loaded=0' "$log"
t "loads on derived addresses" grep -qx 'insmod2-status=0' "$log"
for s in event_mutex dyn_event_ops_mutex dyn_event_ops_list dyn_event_list; do
	t "symbols: $s derived" grep -q "^symbols: $s: derived (" "$log"
done
t "one_copy=N (staged path)" grep -qx 'one_copy=N' "$log"
t "an event made through dynamic_events" grep -qx '/sys/kernel/tracing/events/user_events/ue_refusal_probe' "$log"
t "rmmod succeeds" grep -qx 'rmmod-status=0' "$log"
exit "$fail"
