#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak (run as root in a guest with user_events.ko loaded):
#
#   tests/stress/bpf_iter_soak.sh [SECONDS]
#
# The stock one-liner `bpftrace -e 'tracepoint:user_events:* { @[kstack] =
# count(); }'` runs SECONDS (default 60) while two writers, one per CPU,
# write a BPF_ITER event and a plain one as fast as they can, with payload
# lengths from 8 to 3968 bytes, by write() and writev(). The seed's BPF_ITER
# context oopsed at the first write. Prints the number of writes and what
# bpftrace counted; exit status 0 iff bpftrace exited cleanly and counted
# every write.
set -uo pipefail
secs=${1:-60}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT


python3 "$(dirname "$0")/bpf_iter_writer.py" "$dir/go" "$dir/stop" 0 > "$dir/w0" &
w0=$!
python3 "$(dirname "$0")/bpf_iter_writer.py" "$dir/go" "$dir/stop" 1 > "$dir/w1" &
w1=$!
while [[ ! -e $dir/go.ready0 || ! -e $dir/go.ready1 ]]; do
	if ! kill -0 $w0 $w1 2>/dev/null; then
		echo "a writer failed"
		exit 1
	fi
	sleep 0.1
done

# bpftrace attaches to the events that exist when it starts
timeout --foreground -s INT "$((secs + 30))" \
	bpftrace -e 'tracepoint:user_events:* { @[kstack] = count(); }' \
	> "$dir/bt.out" 2> "$dir/bt.err" &
bt=$!
for ((i = 0; i < 300; i++)); do
	grep -q '^Attaching' "$dir/bt.out" && break
	sleep 0.1
done
sleep 2
touch "$dir/go"
sleep "$secs"
touch "$dir/stop"
wait $w0 $w1
sleep 1
kill -INT $bt
wait $bt
rc=$?
writes=$(( $(tail -1 "$dir/w0") + $(tail -1 "$dir/w1") ))
seen=$(awk '/^\]: /{s += $2} END {print s + 0}' "$dir/bt.out")
echo "$secs s: writes: $writes, bpftrace counted: $seen, bpftrace exit status: $rc"
cat "$dir/bt.err"
[[ $rc == 0 && $writes -gt 0 && $seen == "$writes" ]]
