/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF by hand, for the selftests that load a program without libbpf
 * (bpf_test.c, unload_window_test.c): instructions and the bpf() call.
 * Each test defines the few more instructions it needs from INSN().
 */
#ifndef UE_BPF_H
#define UE_BPF_H

#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })
#define MOV64_REG(d, s)		INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i)		INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i)		INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define CALL(f)			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define JEQ_IMM(d, i, o)	INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define EXIT()			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static inline int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* A one-entry array map of value_size bytes: fd, or -1 and errno */
static inline int ue_bpf_map1(unsigned int value_size)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = value_size;
	attr.max_entries = 1;

	return sys_bpf(BPF_MAP_CREATE, &attr);
}

/* Reads the one entry's value of such a map: 0, or -1 and errno */
static inline int ue_bpf_map1_read(int map_fd, void *value)
{
	union bpf_attr attr;
	__u32 key = 0;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (__u64)(uintptr_t)&key;
	attr.value = (__u64)(uintptr_t)value;

	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr);
}

#endif /* UE_BPF_H */
