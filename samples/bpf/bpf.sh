#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Delivery to BPF: the same user event seen by bpftrace (user_events.bt)
# and by a program loaded with the raw bpf() syscall (count.c).
#
#   samples/bpf/bpf.sh [seconds]
#
# Needs root, user_events.ko loaded, bpftrace for the first part. The
# writer is samples/example (event "test", field "u32 count"), built with
# `make -C samples` into build/samples/ unless UE_EXAMPLE names it.
set -eu

secs=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
example=${UE_EXAMPLE:-$here/../../build/samples/example}
count=${UE_COUNT:-$here/../../build/samples/bpf/count}

[ -x "$example" ] || make -s -C "$here/.." OUT="$(dirname "$example")"
[ -x "$count" ] || make -s -C "$here" OUT="$(dirname "$count")"
# shellcheck source=samples/writer.sh
. "$here/../writer.sh"
ue_writer_start "$example" test

if command -v bpftrace >/dev/null; then
	echo "== bpftrace $here/user_events.bt"
	bpftrace "$here/user_events.bt"
else
	echo "== bpftrace is not installed: skipping user_events.bt"
fi

echo "== $count test count $secs"
"$count" test count "$secs"
