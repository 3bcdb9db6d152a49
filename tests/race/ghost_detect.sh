#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/race/ghost_detect.sh on|count: guest side, as root. A detector for the
# 6.1 race behind "page fault at 0x1d30 in __ftrace_event_enable_disable()"
# (see tests/race/ghost_open.py): "on" adds a kprobe event at the VFS's
# do_dentry_open() (kernel/trace itself cannot be kprobed) that records
# every open of an event's enable file (inode->i_fop == ftrace_enable_fops)
# whose trace_event_file (inode->i_private) has its reference count at 0
# or no trace_array: a file struct freed (or reused by another object)
# before tracing_open_file_tr() reads it. "count" prints "ghost opens
# seen: N" and removes the probe. A lower bound: an open that lands on a
# slot already taken by another event's file is not seen (it "succeeds" on
# the wrong event), nor a removal after do_dentry_open() began.
# Offsets are Debian 6.1's and 6.12's (pahole on the images' BTF):
# inode->i_fop 360 / 352, ->i_private 624 / 616; trace_event_file->tr 40,
# ->flags 72, ->ref 80.
t=/sys/kernel/tracing
case ${1:-} in
on)
	case $(uname -r) in
	6.1.*) ifop=360 ipriv=624 ;;
	6.12.*) ifop=352 ipriv=616 ;;
	*) echo "# ghost_detect: no offsets for $(uname -r)"; exit 0 ;;
	esac
	efops=0x$(awk '$3 == "ftrace_enable_fops" {print $1; exit}' /proc/kallsyms)
	p="+$ipriv(%si)"
	echo "p:ghostdet/open do_dentry_open fop=+$ifop(%si):x64 file=$p:x64 tr=+40($p):x64 ref=+80($p):s32 flags=+72($p):x64" >>$t/kprobe_events &&
		echo "fop == $efops && (ref == 0 || tr == 0)" >$t/events/ghostdet/open/filter &&
		echo 1 >$t/events/ghostdet/open/enable ||
		echo "# ghost_detect: could not set the detector up"
	;;
count)
	[[ -d $t/events/ghostdet ]] || exit 0
	echo 0 >$t/events/ghostdet/open/enable
	echo "ghost opens seen: $(grep -c ' open: (' $t/trace)"
	grep -m3 ' open: (' $t/trace | sed 's/^/#   /'
	echo '-:ghostdet/open' >>$t/kprobe_events
	;;
*) echo "usage: $0 on|count" >&2; exit 2 ;;
esac
