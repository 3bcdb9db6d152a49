#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/arm64/refusal-test.sh [arm64 release | 6.1 | 5.10]
#
# The module must refuse to load, saying what is missing, on a kernel whose
# kallsyms lists no variables (CONFIG_KALLSYMS_ALL unset), such as Debian's
# arm64 6.1 kernels (Debian 12) and 5.10 kernels (Debian 11). Given a series
# (6.1, the default, or 5.10), the test takes that series' newest generic
# arm64 release whose image the archive actually serves
# (scripts/arm64/kernels.sh --series). Debian 11's DKMS 2.8.4
# ignores BUILD_EXCLUSIVE_CONFIG and builds the module for its 5.10 arm64
# kernels: this refusal is what a user of them meets (dkms.conf).
# Builds the module for it, boots it (run.sh --arch arm64) and checks, as
# TAP: insmod fails with EOPNOTSUPP ("Operation not supported"), the log
# names each missing variable and CONFIG_KALLSYMS_ALL, no tracefs file was
# created, and the module is not left loaded. Exit status 0 iff all passed.
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
	insmod "$1" 2>&1
	echo "insmod-status=$?"
	dmesg | grep "user_events: " | sed "s/^\[[ 0-9.]*\] //"
	ls /sys/kernel/tracing/user_events_data /sys/kernel/tracing/user_events_status 2>&1
	grep -c "^user_events " /proc/modules
	true' sh "$ko" || gstatus=$?
log=$out/output.log
fail=0
t() { # t <description> <command...>
	local what=$1
	shift
	if "$@"; then echo "ok - $rel: $what"; else echo "not ok - $rel: $what"; fail=1; fi
}
t "guest ran cleanly" test "$gstatus" = 0
t "insmod fails with EOPNOTSUPP" grep -q 'could not insert module.*Operation not supported' "$log"
t "insmod exit status non-zero" grep -qx 'insmod-status=[1-9][0-9]*' "$log"
for s in event_mutex dyn_event_ops_mutex dyn_event_ops_list dyn_event_list; do
	t "log names $s" grep -qx "user_events: required kernel symbol $s not found" "$log"
done
t "log names CONFIG_KALLSYMS_ALL" grep -q '^user_events: this kernel is built without CONFIG_KALLSYMS_ALL' "$log"
t "no tracefs files" grep -q "cannot access '/sys/kernel/tracing/user_events_data'" "$log"
t "module not loaded" grep -qx 0 "$log"
exit "$fail"
