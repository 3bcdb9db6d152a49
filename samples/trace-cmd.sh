#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Delivery to trace-cmd: record a user event with `trace-cmd record` and
# decode it with `trace-cmd report`.
#
#   samples/trace-cmd.sh [seconds]
#
# Needs root, user_events.ko loaded and trace-cmd. The writer is the
# example program of this directory (event "test", field "u32 count"),
# built with `make -C samples` into build/samples/ unless UE_EXAMPLE
# names it. It writes the event every 100 ms while a tracer listens.
#
# trace-cmd only enables events that exist: the writer is started first
# (registering creates events/user_events/test), then trace-cmd enables
# user_events:test, the writer sees its status byte turn non-zero and
# writes, and the records land in user_events.dat:
#
#   example-161   [001]    24.417902: test:                 count=2
#   example-161   [001]    24.559570: test:                 count=3
set -eu

secs=${1:-3}
event="test"
here=$(cd "$(dirname "$0")" && pwd)
example=${UE_EXAMPLE:-$here/../build/samples/example}
out=${UE_OUT:-user_events.dat}

if [ ! -x "$example" ]; then
	make -s -C "$here" OUT="$(dirname "$example")"
fi
command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed" >&2; exit 1; }
# The writer runs until the recording is done
# shellcheck source=samples/writer.sh
. "$here/writer.sh"
ue_writer_start "$example" "$event"

trace-cmd record -q -e user_events:$event -o "$out" sleep "$secs"
ue_writer_stop

trace-cmd report -i "$out"

# The event stays (status page ABI) until deleted, once unused:
#   echo '!u:test' >> /sys/kernel/tracing/dynamic_events
