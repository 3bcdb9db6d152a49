#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tests/race/ghost_open.py KIND [ROUNDS] [WHERE] [FILE]: the 6.1 race behind the
"page fault at 0x1d30 in __ftrace_event_enable_disable()" panic, made
deterministic (guest side, as root).

An open() of an event's "enable" file looks the dentry up first and runs
tracing_open_file_tr() later; nothing between the two stops the event's
directory from being removed. On 6.1 (no eventfs) the removal frees the
trace_event_file at once when no open file holds it, and nothing clears
the inode's i_private, so the late open reads the freed (maybe reused)
struct. An O_PATH descriptor holds the dentry without opening the file:
reopening it through /proc/self/fd after the removal is the late open.

Each round: create event A, O_PATH its enable file, delete A, create
event B (its trace_event_file may take A's freed slot), reopen A's enable
for writing, write 1, and look whether B got enabled.

KIND: kprobe | synth | user (u: events of user_events.ko through
dynamic_events; the module must be loaded) | user-unpriv (A is registered
through user_events_data by uid/gid 1000 with the remote write ABI, not
persistent, and deleted by that process's exit, its last user: load the
module with data_gid=1000 data_mode=0660 and give tracefs's root a search
bit). WHERE: top (default; removal = event deletion), inst (the file of an instance; removal = rmdir of the
instance, A stays) or inst2 (as inst, then the instance is made again
instead of creating B: its files may take the freed slots).
FILE: enable (default) or trigger: A's trigger file is opened for
writing before the removal (a real open: on 6.1 it takes no reference on
the trace_event_file at all), and "traceoff" is written to it after B was
created; then B's trigger file is read.
Output: one line per outcome class, "ghost_open: KIND WHERE FILE: N of
ROUNDS rounds: what happened", then GHOST_DONE.
"""
import os
import sys
import time

from ue_tracefs import T, errname, put

KIND = sys.argv[1] if len(sys.argv) > 1 else 'kprobe'
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
WHERE = sys.argv[3] if len(sys.argv) > 3 else 'top'
FILE = sys.argv[4] if len(sys.argv) > 4 else 'enable'


DEFS = {
    'kprobe': ('kprobes', T + '/kprobe_events',
               lambda n: 'p:%s do_sys_openat2 dfd=%%di:s32\n' % n,
               lambda n: '-:%s\n' % n),
    'synth': ('synthetic', T + '/synthetic_events',
              lambda n: '%s u32 a\n' % n, lambda n: '!%s\n' % n),
    'user': ('user_events', T + '/dynamic_events',
             lambda n: 'u:%s u32 a\n' % n, lambda n: '!u:%s\n' % n),
}
DEFS['user-unpriv'] = DEFS['user']
SYS, CTL, MK, RM = DEFS[KIND]
DIAG_IOCSREG = 0xc0082a00	# _IOWR('*', 0, struct user_reg *)


def unpriv_event(n):
    """Fork a uid/gid 1000 process that registers n (remote write ABI, not
    persistent) and exits when told: returns the pipe that tells it."""
    import struct
    import fcntl
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    if os.fork() == 0:
        try:
            os.setgroups([])
            os.setgid(1000)
            os.setuid(1000)
            fd = os.open(T + '/user_events_data', os.O_RDWR)
            import ctypes
            name = ctypes.create_string_buffer(('%s u32 a' % n).encode())
            word = ctypes.c_uint32(0)
            # struct user_write_reg (remote write ABI, no PERSIST flag)
            reg = bytearray(struct.pack('=IBBHQQI', 28, 0, 4, 0,
                                        ctypes.addressof(word),
                                        ctypes.addressof(name), 0))
            fcntl.ioctl(fd, DIAG_IOCSREG, reg)
            os.write(ready_w, b'1')
            os.read(go_r, 1)
        except Exception as e:
            sys.stderr.write('unpriv child: %s\n' % e)
            os.write(ready_w, b'0')
        os._exit(0)
    if os.read(ready_r, 1) != b'1':
        sys.exit('ghost_open: uid 1000 could not register %s' % n)
    for f in (ready_r, ready_w, go_r):
        os.close(f)
    return go_w


def create(n):
    put(CTL, MK(n))


def delete(n):
    try:
        put(CTL, RM(n))
    except OSError:
        pass


def enable_path(n, inst=None, f='enable'):
    base = T + ('/instances/%s' % inst if inst else '')
    return '%s/events/%s/%s/%s' % (base, SYS, n, f)


def state(n):
    with open(enable_path(n)) as f:
        return f.read().strip()


counts = {}


def count(what):
    counts[what] = counts.get(what, 0) + 1


def attempt(op, ok, refused):
    """op(): counted as ok, or as refused with the errno; its result or None."""
    try:
        ret = op()
    except OSError as e:
        count('%s (%s)' % (refused, errname(e)))
        return None
    count(ok)
    return ret


def late_trigger_write(o, b):
    """Write through A's trigger file, opened before A was removed."""
    attempt(lambda: os.write(o, b'traceoff'),
            'traceoff written through A\'s removed trigger file',
            'write refused')
    if WHERE == 'inst2':
        return
    with open(enable_path(b, None, 'trigger')) as f:
        if any(line.startswith('traceoff') for line in f):
            count('event B got the trigger')
            put(enable_path(b, None, 'trigger'), '!traceoff')


def late_open(o, b):
    """Open A's enable file through the O_PATH descriptor o, write 1."""
    w = attempt(lambda: os.open('/proc/self/fd/%d' % o, os.O_WRONLY),
                'late open of a removed enable file succeeded',
                'late open refused')
    if w is None:
        return
    attempt(lambda: os.write(w, b'1'), 'write 1 accepted', 'write 1 refused')
    if WHERE == 'inst2':
        with open(T + '/instances/%s/set_event' % inst) as f:
            on = f.read().split()
        if on:
            count('the new instance got an event enabled through A\'s removed file')
            print('ghost_open: enabled %s' % ' '.join(on))
    elif state(b).startswith('1'):
        count('event B enabled through A\'s removed file')
        put(enable_path(b), '0')
    os.close(w)


inst = 'ghost0' if WHERE.startswith('inst') else None
for r in range(ROUNDS):
    a, b = 'ga%d' % r, 'gb%d' % r
    if inst:
        os.mkdir(T + '/instances/' + inst)
    if KIND == 'user-unpriv':
        go = unpriv_event(a)
    else:
        create(a)
    if FILE == 'trigger':
        o = os.open(enable_path(a, inst, 'trigger'), os.O_WRONLY | os.O_APPEND)
    else:
        o = os.open(enable_path(a, inst), os.O_PATH)
    if KIND == 'user-unpriv' and not inst:
        os.write(go, b'1')	# its exit is the last close: A is deleted
        os.close(go)
        os.wait()
    elif inst:
        os.rmdir(T + '/instances/' + inst)
    else:
        delete(a)
    for _ in range(1000):	# the last close may delete A from a work item
        if not os.path.exists(enable_path(a, inst)):
            break
        time.sleep(0.01)
    else:
        count('A still there after 10 s')
        sys.stdout.flush()
    if WHERE == 'inst2':
        os.mkdir(T + '/instances/' + inst)
    else:
        create(b)
    if FILE == 'trigger':
        late_trigger_write(o, b)
    else:
        late_open(o, b)
    os.close(o)
    if WHERE == 'inst2':
        os.rmdir(T + '/instances/' + inst)
    else:
        delete(b)
    if KIND == 'user-unpriv' and inst:
        os.write(go, b'1')
        os.close(go)
        os.wait()
    elif inst:
        delete(a)
    sys.stdout.flush()

for k in sorted(counts):
    print('ghost_open: %s %s %s: %d of %d rounds: %s' % (KIND, WHERE, FILE, counts[k], ROUNDS, k))
print('GHOST_DONE')
