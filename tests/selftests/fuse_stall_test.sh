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
# after the read came) the enable bit is set. Then fuse_stall -k: the
# mm's owner, handed a resync the update had to defer, is killed before
# doing it; the process sharing its address space must still get its bit.
# Then fuse_stall -a: a process with an aio read of its FUSE file in
# flight is killed while root's enable updates its bits; the enable must
# not wait in exit_aio() for the held read (under event_mutex). Then
# fuse_stall -s: the resync is queued on a stopped owner; a registration
# by another process of the address space must bring its bits up to date.
# Then fuse_stall -x: another address space's dead record, whose teardown
# waits for event_mutex (held by root's uprobe attach behind a held FUSE
# read), must not delay an exit: a child with 4 data files and enablers
# exits, its parent's wait() returns within 0.5 s (times the factor).
# Then fuse_stall -l: an update deferred by a contended mmap_lock is retried
# a tick later, not when the nudge's timer already pending for a fault of
# another bit expires (100 ms): in 5 rounds that can tell (the lock held
# by a FUSE read, answered at once), the deferred bit must come within
# 90 ms of the first enable, which before the fix (1756bbb) it never did.
: "${UE_TIMEOUT_FACTOR:=1}"
export UE_TIMEOUT_FACTOR
dir=$(dirname "$0")
bound=$(awk "BEGIN { print 1.0 * $UE_TIMEOUT_FACTOR }")
modprobe fuse 2>/dev/null
n=0

# tap <status> <message if 0> <message otherwise>
tap() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - fuse: $2"
	else
		echo "not ok $n - fuse: $3"
	fi
}

# run_helper [args]: sets out, st and held
run_helper() {
	out=$(timeout $((180 * UE_TIMEOUT_FACTOR)) "$dir/helpers/fuse_stall" "$@" 2>&1)
	st=$?
	echo "$out" | sed 's/^/# /'
	held=$(echo "$out" | sed -n 's/^held reads: \([0-9]*\)$/\1/p' | head -n 1)
}

# took <line>: true if it says "took T s" with T under the bound
took() {
	t=$(echo "$1" | sed -n 's/.* took \([0-9.]*\) s.*/\1/p')
	[ -n "$t" ] && awk "BEGIN { exit !($t < $bound) }"
}

echo "1..19"
run_helper
[ -n "$held" ] && [ "$held" -ge 1 ]
tap $? "the FUSE server held $held read(s)" \
	"the FUSE server held no read (held reads: ${held:-none})"
# The calls while the read is held, then their results once it is answered
for what in "enable" "status read" "u: command"; do
	line=$(echo "$out" | grep -m1 "^$what ")
	took "$line"
	tap $? "$what beside a held FUSE read: ${t} s (bound $bound s)" \
		"$what beside a held FUSE read: ${line:-no result} (bound $bound s)"
done
for what in "enable" "status read" "u: command"; do
	line=$(echo "$out" | sed -n '/^after release:$/,$p' | grep -m1 "^$what ")
	case $line in *"(ret 0)") r=0 ;; *) r=1 ;; esac
	tap $r "$what returned 0" "$what: ${line:-no result after the release}"
done
echo "$out" | grep -qx "bit=1"
tap $? "the enable bit is set once the read is answered" \
	"the enable bit once the read is answered: $(echo "$out" | grep '^bit=' || echo none)"
tap "$st" "helper finished (exit status 0)" "helper exit status $st"

run_helper -k
line=$(echo "$out" | grep -m1 "^enable ")
[ -n "$held" ] && [ "$held" -ge 1 ] && took "$line" && echo "$line" | grep -q "(ret 0)$"
tap $? "owner dies: enable beside $held held read(s) returned 0 in ${t} s" \
	"owner dies: held reads ${held:-none}, ${line:-no enable} (bound $bound s)"
echo "$out" | grep -qx "sibling bit=1"
tap $? "owner dies: the other process of its address space gets the bit" \
	"owner dies: $(echo "$out" | grep '^sibling' || echo 'no sibling result')"
tap "$st" "owner dies: helper finished (exit status 0)" \
	"owner dies: helper exit status $st"

run_helper -a
line=$(echo "$out" | grep -m1 "^window reached: ")
att=$(echo "$out" | grep "^attempt " | tail -n 1)
case $att in *"in exit_aio: kworker"*) r=0 ;; *) r=1 ;; esac
tap $r "last put: the address space's teardown waited in a work item (${att#*in exit_aio: })" \
	"last put: ${att:-no attempt reached the window}"
tap "$st" "last put: ${line:-no result}" \
	"last put: ${line:-no result} (helper exit status $st)"

run_helper -s
line=$(echo "$out" | grep -m1 "^owner state ")
case $line in "owner state T "*"(ret 0): bit=1") r=0 ;; *) r=1 ;; esac
tap $r "stopped owner: the other process's registration wrote the bit" \
	"stopped owner: ${line:-no result}"
tap "$st" "stopped owner: helper finished (exit status 0)" \
	"stopped owner: helper exit status $st"

run_helper -x
line=$(echo "$out" | grep -m1 "^exit with ")
case $(echo "$out" | grep -m1 "^uprobe enable blocked: ") in
*yes) r=0 ;; *) r=1 ;; esac
echo "$out" | grep -qx "uexstall before the exit: present, after: present" || r=1
tap $r "exit elsewhere: a teardown stalled on event_mutex around the exit" \
	"exit elsewhere: no stalled teardown to test with"
tap "$st" "exit elsewhere: ${line:-no result}" \
	"exit elsewhere: ${line:-no result} (helper exit status $st)"

run_helper -l
line=$(echo "$out" | grep -m1 "^late_soon: ")
tap "$st" "contended retry before the nudge: ${line#late_soon: }" \
	"contended retry before the nudge: ${line:-no result} (helper exit status $st)"
