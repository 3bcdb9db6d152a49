/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding the tracing core's variables without kallsyms: see
 * user_events_derive.c and Documentation/compat.rst ("Kernels whose
 * kallsyms lists no variables").
 *
 * The generic part reads a kernel function's machine code through a
 * decoder of the architecture (user_events_derive_arm64.c,
 * user_events_derive_x86.c), which describes each instruction by what the
 * generic part needs: how long it is, where it branches or calls, which
 * registers it sets to a known value, copies, offsets or makes unknown, and
 * which address it reads or writes.
 */
#ifndef _USER_EVENTS_DERIVE_H
#define _USER_EVENTS_DERIVE_H

#include <linux/types.h>

/* What an instruction does to the flow of control */
enum ue_insn_kind {
	UE_INSN_NEXT,		/* goes on to the next one */
	UE_INSN_BRANCH,		/* conditional direct branch to @target */
	UE_INSN_JUMP,		/* unconditional direct jump to @target */
	UE_INSN_CALL,		/* direct call of @target */
	UE_INSN_ICALL,		/* indirect call */
	UE_INSN_RETURN,		/* return */
	UE_INSN_STOP,		/* trap, breakpoint: no path goes on */
	UE_INSN_UNKNOWN,	/* an indirect jump, or undecodable */
};

/* What an instruction does to a register, in the order given */
enum ue_reg_op {
	UE_REG_SET,		/* dst = imm */
	UE_REG_COPY,		/* dst = src */
	UE_REG_ADD,		/* dst = src + imm */
	UE_REG_CLOBBER,		/* dst unknown */
	UE_REG_CLOBBER_ALL,	/* every register unknown */
};

#define UE_NR_REGS 32
#define UE_INSN_MAX_OPS 4

struct ue_insn {
	unsigned int len;
	enum ue_insn_kind kind;
	unsigned long target;
	unsigned int nr_ops;
	struct {
		enum ue_reg_op op;
		u8 dst;
		u8 src;
		long imm;
	} ops[UE_INSN_MAX_OPS];
	/* A memory operand: [reg mem_base + mem_disp], or mem_disp alone */
	bool has_mem;
	bool mem_abs;
	u8 mem_base;
	long mem_disp;
	/* An immediate that may be an address (x86: imm32 of a 64-bit op) */
	bool has_imm_addr;
	unsigned long imm_addr;
};

/* The variables derived, in the order they are derived */
enum {
	UE_DV_EVENT_MUTEX,
	UE_DV_DYN_EVENT_OPS_MUTEX,
	UE_DV_DYN_EVENT_OPS_LIST,
	UE_DV_DYN_EVENT_LIST,
	UE_DV_COUNT
};

struct ue_derived {
	unsigned long addr[UE_DV_COUNT];	/* 0 unless every check passed */
	char failed[UE_DV_COUNT][128];	/* the check that failed, and why */
	char how[UE_DV_COUNT][200];	/* the sources and checks passed */
};

extern const char * const ue_derived_names[UE_DV_COUNT];

/*
 * Derives the variables, with @lookup for the functions it reads and
 * calls. @fail_sym (or NULL) names a variable whose derivation is made to
 * fail, for tests. Called once, at module load, with no lock held.
 */
void ue_derive(unsigned long (*lookup)(const char *name), const char *fail_sym,
	       struct ue_derived *d);

/* Per architecture */
extern const u8 ue_arch_arg_regs[3];	/* first three argument registers */
extern const u32 ue_arch_call_clobbers;	/* registers a call may change */
int ue_arch_decoder_init(unsigned long (*lookup)(const char *name));
int ue_arch_decode(unsigned long pc, struct ue_insn *insn);

#endif /* _USER_EVENTS_DERIVE_H */
