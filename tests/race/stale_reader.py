#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tests/race/stale_reader.py [FILE] [B] [ROUNDS]: does a trace reader that is
open across the deletion of a dynamic event print a record of the deleted
event decoded by the event that took its type id? The core alone, no
module (guest side, as root).

Each round: kprobe event A (p:ue_sa do_sys_openat2 dfd=%di:s32) is
enabled, 40 opens of /dev/null are traced, A is disabled; FILE is opened
and read 64 bytes at a time until two complete lines of A were read; the
file stays open. A is deleted ("-:ue_sa" in kprobe_events: A was enabled,
so the core resets the buffers, tracing_reset_all_online_cpus()). Event B
is created: B=kprobe (p:ue_sb do_sys_openat2 fl=%di:x32, A's layout) or
B=synth (synthetic "ue_ss u64 lo; u64 hi"); 6.12 gives it the lowest free
id, which is A's. The reader then reads on to the end of the file. Every
line it read after the deletion is printed, with A's and B's ids.

FILE: trace (default), snapshot (a snapshot is taken after A's records;
the reset covers the snapshot buffer too) or trace_pipe (consuming,
O_NONBLOCK). Output: "stale_reader: ..." lines, then STALE_DONE.
"""
import os
import sys

from ue_tracefs import T, get, put

FILE = sys.argv[1] if len(sys.argv) > 1 else 'trace'
B = sys.argv[2] if len(sys.argv) > 2 else 'kprobe'
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 3


def say(*a):
    print('stale_reader: %s %s:' % (FILE, B), *a)
    sys.stdout.flush()


if B == 'kprobe':
    B_CTL, B_MK, B_RM = (T + '/kprobe_events',
                         'p:ue_sb do_sys_openat2 fl=%di:x32\n', '-:ue_sb\n')
    B_ID = T + '/events/kprobes/ue_sb/id'
else:
    B_CTL, B_MK, B_RM = (T + '/synthetic_events',
                         'ue_ss u64 lo; u64 hi\n', '!ue_ss\n')
    B_ID = T + '/events/synthetic/ue_ss/id'

put(T + '/current_tracer', 'nop')
stale_rounds = 0
for r in range(ROUNDS):
    os.close(os.open(T + '/trace', os.O_WRONLY | os.O_TRUNC))
    put(T + '/kprobe_events', 'p:ue_sa do_sys_openat2 dfd=%di:s32\n')
    a_id = get(T + '/events/kprobes/ue_sa/id')
    put(T + '/events/kprobes/ue_sa/enable', '1')
    for _ in range(40):
        os.close(os.open('/dev/null', os.O_RDONLY))
    put(T + '/events/kprobes/ue_sa/enable', '0')
    if FILE == 'snapshot':
        put(T + '/snapshot', '1')
        path = T + '/snapshot'
    else:
        path = T + '/' + FILE
    flags = os.O_RDONLY | (os.O_NONBLOCK if FILE == 'trace_pipe' else 0)
    fd = os.open(path, flags)
    text = ''
    while sum(1 for ln in text.split('\n')[:-1] if 'ue_sa:' in ln) < 2:
        chunk = os.read(fd, 64).decode(errors='replace')
        if not chunk:
            break
        text += chunk
    before = [ln for ln in text.split('\n')[:-1] if not ln.startswith('#')]
    partial = text.split('\n')[-1]
    put(T + '/kprobe_events', '-:ue_sa\n')
    put(B_CTL, B_MK)
    b_id = get(B_ID)
    after = partial
    while True:
        try:
            chunk = os.read(fd, 4096).decode(errors='replace')
        except BlockingIOError:
            break
        if not chunk:
            break
        after += chunk
    os.close(fd)
    lines = [ln for ln in after.split('\n') if ln and not ln.startswith('#')]
    say('round %d: A ue_sa id %s, B id %s%s; %d lines read before the deletion, last: %s'
        % (r, a_id, b_id, ' (A\'s)' if a_id == b_id else '', len(before),
           before[-1].strip() if before else '-'))
    say('round %d: %d lines after the deletion (the first a partial line read before, completed)'
        % (r, len(lines)))
    for ln in lines[:6]:
        say('round %d:   | %s' % (r, ln.strip()))
    if any('ue_sb' in ln or 'ue_ss' in ln or 'Unknown type' in ln for ln in lines):
        stale_rounds += 1
    put(B_CTL, B_RM)
    if FILE == 'snapshot':
        put(T + '/snapshot', '0')
say('%d of %d rounds printed a line of B or "Unknown type" after the deletion'
    % (stale_rounds, ROUNDS))
print('STALE_DONE')
