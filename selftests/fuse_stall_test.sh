#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# user_events.ko selftests: a FUSE server that holds a read must not stall
# the tracing of anyone else. helpers/fuse_stall (from fuse_stall.c) is its
# own FUSE server; it registers an enable word in a private mapping of a
# FUSE file, drops the page, stops answering reads, then enables the event
# from another process and, meanwhile, reads user_events_status and writes
# a u: command to dynamic_events. Each must finish within 1 s (before the
# fix: all three waited for the server, 5 s here, for ever in general) and
# succeed. The read must really have been held (else nothing was tested),
# and once the server answers it, the registrant's bit must be set.
dir=$(dirname "$0")
modprobe fuse 2>/dev/null
echo "1..6"
out=$(timeout 60 "$dir/helpers/fuse_stall" 2>&1)
st=$?
echo "$out" | sed 's/^/# /'
n=0
for what in "enable" "status read" "u: command"; do
	n=$((n + 1))
	line=$(echo "$out" | grep -m1 "^$what ")
	t=$(echo "$line" | sed -n 's/.* took \([0-9.]*\) s (ret 0)$/\1/p')
	if [ -n "$t" ] && awk "BEGIN { exit !($t < 1.0 * ${UE_TIMEOUT_FACTOR:-1}) }"; then
		echo "ok $n - fuse: $what beside a held FUSE read: ${t} s"
	else
		echo "not ok $n - fuse: $what beside a held FUSE read: ${line:-no result}"
	fi
done
held=$(echo "$out" | sed -n 's/^held reads: \([0-9]*\)$/\1/p' | head -n 1)
if [ "${held:-0}" -ge 1 ]; then
	echo "ok 4 - fuse: the server held $held read(s)"
else
	echo "not ok 4 - fuse: no read was held (held reads: ${held:-none}): nothing tested"
fi
if echo "$out" | grep -qx "bit=1"; then
	echo "ok 5 - fuse: the bit is set once the read is answered"
else
	echo "not ok 5 - fuse: bit after the read was answered: $(echo "$out" | grep '^bit=' || echo none)"
fi
if [ "$st" -eq 0 ]; then
	echo "ok 6 - fuse: helper finished (exit status 0)"
else
	echo "not ok 6 - fuse: helper exit status $st"
fi
