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

#include <linux/bitops.h>
#include <linux/kernel.h>	/* DIV_ROUND_UP() of BITS_TO_LONGS() on 5.10 */
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

/* Bounds of the analysis: the functions it reads are a few dozen insns */
#define UE_FN_MAX_SIZE 4096
#define UE_FN_MAX_TARGETS 128
#define UE_FN_MAX_CALLS 32
#define UE_FN_MAX_ADDRS 64
#define UE_FN_MAX_PASSES 32
/* What the analysis of a function needs from the kernel */
struct ue_code_env {
	/* a function's address (kallsyms_lookup_name) */
	unsigned long (*lookup)(const char *name);
	/* the size of the symbol at @addr and the offset into it */
	bool (*bounds)(unsigned long addr, unsigned long *size,
		       unsigned long *offset);
	/* copies @size bytes of the kernel's text at @src, or fails */
	bool (*read)(void *dst, unsigned long src, size_t size);
	/* mutex_lock() and what it is with lockdep, mutex_lock_nested() */
	unsigned long mutex_lock;
	unsigned long mutex_lock_nested;
};

struct ue_regs {
	u32 known;
	unsigned long val[UE_NR_REGS];
};

struct ue_slot {
	unsigned long pc;
	bool visited;
	struct ue_regs regs;
};

struct ue_call {
	unsigned long callee;
	u8 known;			/* bit n: argument n known */
	unsigned long arg[3];
};

/* One function's code, analysed by ue_fn_analyse() */
struct ue_fn {
	const struct ue_code_env *env;
	const char *name;
	unsigned long start;
	unsigned long size;
	const char *error;		/* why the analysis failed */
	unsigned int nr_calls;
	struct ue_call calls[UE_FN_MAX_CALLS];
	unsigned int nr_addrs;
	unsigned long addrs[UE_FN_MAX_ADDRS];
	/* working state */
	unsigned int nr_slots;
	struct ue_slot slots[UE_FN_MAX_TARGETS];
	unsigned long boundary[BITS_TO_LONGS(UE_FN_MAX_SIZE)];
	/*
	 * The function's bytes, read once: every pass decodes the same code
	 * even if the kernel patches it meanwhile (static keys, kprobes), and
	 * nothing past its end is read
	 */
	u8 code[UE_FN_MAX_SIZE];
};

/*
 * Analyses the function @name (user_events_derive_code.c); on failure
 * fn->error says why. Then: the address passed as argument @arg to every
 * call of @callee and @callee2 (0 if there is none, or one of them passes
 * another value or one the code does not determine: *why says which), and
 * whether the function computes the address @addr anywhere.
 */
int ue_fn_analyse(struct ue_fn *fn, const struct ue_code_env *env,
		  const char *name);
unsigned long ue_fn_call_arg(const struct ue_fn *fn, unsigned long callee,
			     unsigned long callee2, unsigned int arg,
			     const char **why);
bool ue_fn_uses_addr(const struct ue_fn *fn, unsigned long addr);

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
/*
 * Decodes the instruction at @pc, whose bytes are @code[0..@avail): fails
 * if they are not a whole instruction.
 */
int ue_arch_decode(const u8 *code, unsigned int avail, unsigned long pc,
		   struct ue_insn *insn);

#endif /* _USER_EVENTS_DERIVE_H */
