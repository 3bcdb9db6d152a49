#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# scripts/package-smoke.py <tracefs dir> (run by scripts/package-smoke.sh in
# a guest with the DKMS-built module loaded): register an event through the
# status page ABI (struct user_reg, size 24), enable it in ftrace, write one
# record, find it in the trace, delete the event. Prints the trace line;
# fails with an exception.
import ctypes, fcntl, os, struct, sys

tracing = sys.argv[1]
name = "ue_pkg_smoke"
DIAG_IOCSREG = 0xC0082A00    # _IOWR('*', 0, struct user_reg *)
DIAG_IOCSDEL = 0x40082A01    # _IOW('*', 1, char *)

desc = ctypes.create_string_buffer((name + " u32 count; char[8] msg").encode())
fd = os.open(tracing + "/user_events_data", os.O_RDWR)
reg = bytearray(struct.pack("<I4xQII", 24, ctypes.addressof(desc), 0, 0))
fcntl.ioctl(fd, DIAG_IOCSREG, reg)
status_index, write_index = struct.unpack_from("<II", reg, 16)
assert status_index > 0, status_index
enable = "%s/events/user_events/%s/enable" % (tracing, name)
with open(enable, "w") as f:
    f.write("1")
os.write(fd, struct.pack("<iI8s", write_index, 42, b"smoke"))
with open(enable, "w") as f:
    f.write("0")
os.close(fd)
with open(tracing + "/trace") as f:
    lines = [l for l in f if (name + ":") in l]
print(lines[-1].strip() if lines else "no record")
assert lines and "count=42" in lines[-1] and "msg=smoke" in lines[-1]
fd = os.open(tracing + "/user_events_data", os.O_RDWR)
# A bytes argument is passed as a pointer to a copy of it: the char *.
fcntl.ioctl(fd, DIAG_IOCSDEL, name.encode() + b"\0")
os.close(fd)
assert not os.path.exists("%s/events/user_events/%s" % (tracing, name))
