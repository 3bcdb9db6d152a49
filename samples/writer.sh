# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced by the sample scripts (perf.sh, trace-cmd.sh, bpf/bpf.sh): the
# writer a tracer listens to, samples/example, started in the background.

# ue_writer_start <example> <event>: starts "<example> 600" ($writer, killed
# on exit) and waits until it has registered <event>: the tracers attach to
# an existing tracepoint only.
ue_writer_start() {
	[ -e /sys/kernel/tracing/user_events_data ] ||
		{ echo "no /sys/kernel/tracing/user_events_data: load user_events.ko" >&2; exit 1; }
	"$1" 600 >/dev/null &
	writer=$!
	trap 'kill $writer 2>/dev/null || true' EXIT
	i=0
	until [ -d "/sys/kernel/tracing/events/user_events/$2" ]; do
		i=$((i + 1))
		[ $i -lt 50 ] || { echo "the writer did not register $2" >&2; exit 1; }
		sleep 0.1
	done
}

# ue_writer_stop: stops the writer
ue_writer_stop() {
	kill "$writer" 2>/dev/null || true
	wait "$writer" 2>/dev/null || true
	trap - EXIT
}
