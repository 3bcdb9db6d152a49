#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# scripts/package-smoke.py <tracefs dir> (run by scripts/package-smoke.sh in
# a guest with the DKMS-built module loaded): register an event through the
# status page ABI (struct user_reg, size 24), enable it in ftrace, write one
# record, find it in the trace, delete the event; then user-events-clear
# right after the exit of a process that kept an event (below). Prints the
# trace line; fails with an exception.
import ctypes, fcntl, os, struct, subprocess, sys

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

# A process that registered through the remote write ABI (struct user_reg,
# size 28) 2,048 bits of an event exits with them registered: right after
# its parent's wait(), user-events-clear deletes the event (it waits for
# the exit's teardown, which a work item does after the exit) and exits 0.
# Five rounds.
words = (ctypes.c_uint32 * 64)()
for rnd in range(5):
    pid = os.fork()
    if pid == 0:
        try:
            desc = ctypes.create_string_buffer((name + "_exit u32 a").encode())
            fd = os.open(tracing + "/user_events_data", os.O_RDWR)
            for i in range(64 * 32):
                reg = bytearray(struct.pack(
                    "<IBBHQQI", 28, i % 32, 4, 0,
                    ctypes.addressof(words) + 4 * (i // 32),
                    ctypes.addressof(desc), 0))
                fcntl.ioctl(fd, DIAG_IOCSREG, reg)
        except OSError:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0, "round %d: the child's registration failed" % rnd
    clear = os.environ.get("UE_CLEAR", "/usr/sbin/user-events-clear")
    rc = subprocess.run([clear, tracing]).returncode
    assert rc == 0, "round %d: user-events-clear exited %d" % (rnd, rc)
    assert not os.path.exists("%s/events/user_events/%s_exit" %
                              (tracing, name)), "round %d: event left" % rnd
