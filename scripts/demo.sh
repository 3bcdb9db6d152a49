#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build user_events.ko for the newest 6.1 kernel (or KVER=rel),
# build samples/ (make -C samples OUT=build/samples) when it has a Makefile,
# boot that kernel in QEMU and run
# scripts/guest/demo.sh there: load the module, start samples/example
# (registers event "test" with field "u32 count" and writes it while
# enabled), enable the event, then show the trace and user_events_status.
# UE_SAMPLES_DIR names another samples directory.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ue_lock_build
"$UE_REPO/scripts/setup.sh"
rel=${KVER:-$(KVERS='' "$UE_REPO/scripts/kernels.sh" | grep -m1 '^6\.1\.' || true)}
[[ -n $rel ]] || ue_die "no 6.1 kernel found (run scripts/setup.sh)"
echo "== kernel $rel"

echo "== building the module"
bstatus=0
kos=$("$UE_REPO/scripts/build-module.sh" "$rel") || bstatus=$?
((bstatus == 0 || bstatus == 3)) || ue_die "the module did not build"
ko=$(grep -m1 '/user_events\.ko$' <<<"$kos" || head -n 1 <<<"$kos")
echo "   $ko"

samples=${UE_SAMPLES_DIR:-$UE_REPO/samples}
sample=
share=()
if [[ -f $samples/Makefile ]]; then
	echo "== building $samples"
	if ! make -C "$samples" "OUT=$UE_BUILD/samples"; then
		echo "   building $samples FAILED: going on without the sample"
	elif [[ -x $UE_BUILD/samples/example ]]; then
		sample=$UE_BUILD/samples/example
	elif [[ -x $samples/example ]]; then
		sample=$(cd "$samples" && pwd)/example
		share=(--share "${sample%/*}")
	else
		echo "   $samples built but has no example program: no events will be written"
	fi
else
	echo "== $samples/Makefile does not exist yet: skipping the sample (no events will be written)"
fi

echo "== booting $rel in QEMU (console: $UE_BUILD/$rel/demo/console.log)"
status=0
"$UE_REPO/scripts/guest/run.sh" -q -t 300 "${share[@]}" -o "$UE_BUILD/$rel/demo" "$rel" -- \
	"$UE_REPO/scripts/guest/demo.sh" "$ko" ${sample:+"$sample"} || status=$?
echo "== guest output"
cat "$UE_BUILD/$rel/demo/output.log" 2>/dev/null || echo "(none)"
if ((status == 2)); then
	echo "== the guest run FAILED:"
	sed 's/^/   /' "$UE_BUILD/$rel/demo/problems" 2>/dev/null || true
fi
exit "$status"
