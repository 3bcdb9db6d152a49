#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# tests/stress/bpf_iter_writer.py <go file> <stop file> <cpu> (started twice by
# tests/stress/bpf_iter_soak.sh): register a BPF_ITER event and a plain one, say
# so in <go file>.ready<cpu>, wait for <go file>, then write both as fast
# as possible with payloads of 8 to 3968 bytes, by write() and writev(),
# until <stop file> exists; print the number of writes.
import ctypes, fcntl, os, struct, sys, time
go, stop, cpu = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.sched_setaffinity(0, {cpu % os.cpu_count()})
fd = os.open("/sys/kernel/tracing/user_events_data", os.O_RDWR)
idx = []
for desc in (b"ue_soak_it:BPF_ITER u32 a; u32 b", b"ue_soak_pl u32 a; u32 b"):
    name = ctypes.create_string_buffer(desc)
    reg = bytearray(struct.pack("=I4xQII", 24, ctypes.addressof(name), 0, 0))
    fcntl.ioctl(fd, 0xC0082A00, reg, True)   # DIAG_IOCSREG
    idx.append(struct.unpack("=I4xQII", reg)[3])
open(sys.argv[1] + ".ready%d" % cpu, "w").close()
while not os.path.exists(go):
    time.sleep(0.1)
n = 0
lens = [8, 9, 0x123, 1000, 3968, 64]
while not os.path.exists(stop):
    for w in idx:
        for ln in lens:
            p = struct.pack("=i", w) + bytes([n & 0xff]) * ln
            if n & 1:
                os.writev(fd, [p[:4], p[4:]])
            else:
                os.write(fd, p)
            n += 1
print(n)
