#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# user_events.ko selftests: a FUSE server that holds a read must not stall
# the tracing of anyone else. helpers/fuse_stall (from fuse_stall.c) is its
# own FUSE server; it registers an enable word in a private mapping of a
# FUSE file, drops the page, stops answering reads, has two threads of its
# own hold its mmap_lock behind that read, then enables the event from
# another process and, meanwhile, reads user_events_status and writes a u:
# command to dynamic_events. Each must finish within 1 s (before the fixes:
# all three waited for the server, for ever in general), times
# UE_TIMEOUT_FACTOR (make -C selftests writes the build's factor below).
# What makes it a test of that: the server held at least one read, all
# three calls returned 0, and once the server answers (by itself, 3 s
# after the read came) the enable bit is set.
: "${UE_TIMEOUT_FACTOR:=1}"
dir=$(dirname "$0")
bound=$(awk "BEGIN { print 1.0 * $UE_TIMEOUT_FACTOR }")
modprobe fuse 2>/dev/null
echo "1..9"
out=$(timeout $((60 * UE_TIMEOUT_FACTOR)) "$dir/helpers/fuse_stall" 2>&1)
st=$?
echo "$out" | sed 's/^/# /'
n=1
held=$(echo "$out" | sed -n 's/^held reads: \([0-9]*\)$/\1/p' | head -n 1)
if [ -n "$held" ] && [ "$held" -ge 1 ]; then
	echo "ok $n - fuse: the FUSE server held $held read(s)"
else
	echo "not ok $n - fuse: the FUSE server held no read (held reads: ${held:-none})"
fi
# The calls while the read is held, then their results once it is answered
for what in "enable" "status read" "u: command"; do
	n=$((n + 1))
	line=$(echo "$out" | grep -m1 "^$what ")
	t=$(echo "$line" | sed -n 's/.* took \([0-9.]*\) s.*/\1/p')
	if [ -n "$t" ] && awk "BEGIN { exit !($t < $bound) }"; then
		echo "ok $n - fuse: $what beside a held FUSE read: ${t} s (bound $bound s)"
	else
		echo "not ok $n - fuse: $what beside a held FUSE read: ${line:-no result} (bound $bound s)"
	fi
done
for what in "enable" "status read" "u: command"; do
	n=$((n + 1))
	line=$(echo "$out" | sed -n '/^after release:$/,$p' | grep -m1 "^$what ")
	case $line in
	*"(ret 0)") echo "ok $n - fuse: $what returned 0" ;;
	*) echo "not ok $n - fuse: $what: ${line:-no result after the release}" ;;
	esac
done
n=$((n + 1))
if echo "$out" | grep -qx "bit=1"; then
	echo "ok $n - fuse: the enable bit is set once the read is answered"
else
	echo "not ok $n - fuse: the enable bit once the read is answered: $(echo "$out" | grep '^bit=' || echo none)"
fi
n=$((n + 1))
if [ "$st" -eq 0 ]; then
	echo "ok $n - fuse: helper finished (exit status 0)"
else
	echo "not ok $n - fuse: helper exit status $st"
fi
