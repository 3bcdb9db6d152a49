#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Delivery to perf: count a user event with `perf stat`, record it with
# `perf record` and decode the samples with `perf script`.
#
#   samples/perf.sh [seconds]
#
# Needs root, user_events.ko loaded and perf (linux-perf). The writer is
# the example program of this directory (event "test", field
# "u32 count"), built with `make -C samples` into build/samples/ unless
# UE_EXAMPLE names it. It writes the event every 100 ms while a tracer
# listens; an open perf event is a listener (status bit EVENT_STATUS_PERF).
#
# User events are tracepoints to perf: "user_events:<name>", system wide
# (-a) or for a task. Each sample's raw data is the record the format file
# events/user_events/<name>/format describes; perf script prints it with
# the event's print fmt:
#
#   example  1234 [000]   105.161238: user_events:test: count=1
set -eu

secs=${1:-3}
event="test"
here=$(cd "$(dirname "$0")" && pwd)
example=${UE_EXAMPLE:-$here/../build/samples/example}
out=${UE_OUT:-user_events.perf}

if [ ! -x "$example" ]; then
	make -s -C "$here" OUT="$(dirname "$example")"
fi
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
# shellcheck source=samples/writer.sh
. "$here/writer.sh"
ue_writer_start "$example" "$event"

echo "== perf stat -e user_events:$event -a sleep $secs"
perf stat -e user_events:$event -a sleep "$secs"

echo "== perf record -e user_events:$event -a sleep $secs; perf script"
perf record -q -e user_events:$event -a -o "$out" sleep "$secs"
perf script -i "$out"

ue_writer_stop
