// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of the code analysis that finds the tracing core's variables
 * (user_events_derive_code.c) with the arm64 decoder
 * (user_events_derive_arm64.c): functions made of hand-assembled A64
 * instructions in a fake kernel text, each built so that a sound analysis
 * must give one answer (most of them: refuse). No kernel, no guest.
 *
 *   make -C tests/selftests/host run
 *
 * Prints TAP; exit status 0 iff every case passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user_events_derive.h"

#define BASE 0x10000UL
#define A 0x5555000UL		/* a page-aligned "variable" */
#define B 0x7777000UL

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static u32 text[4096];
static unsigned int ntext;

struct sym {
	const char *name;
	unsigned long addr, size;
};

static struct sym syms[64];
static unsigned int nsyms;

/* The text may change once while being read: a live patch */
static unsigned int patch_idx, patch_after, nreads;
static u32 patch_insn;

static unsigned long pc_of(unsigned int idx)
{
	return BASE + 4UL * idx;
}

static unsigned long lookup(const char *name)
{
	unsigned int i;

	for (i = 0; i < nsyms; i++)
		if (!strcmp(syms[i].name, name))
			return syms[i].addr;
	return 0;
}

static bool bounds(unsigned long addr, unsigned long *size,
		   unsigned long *offset)
{
	unsigned int i;

	for (i = 0; i < nsyms; i++) {
		if (addr >= syms[i].addr && addr < syms[i].addr + syms[i].size) {
			*size = syms[i].size;
			*offset = addr - syms[i].addr;
			return true;
		}
	}
	return false;
}

static bool read_text(void *dst, unsigned long src, size_t size)
{
	if (src < BASE || src + size > BASE + sizeof(text))
		return false;
	if (patch_after && ++nreads > patch_after)
		text[patch_idx] = patch_insn;
	memcpy(dst, (char *)text + (src - BASE), size);
	return true;
}

static struct ue_code_env env = {
	.lookup = lookup,
	.bounds = bounds,
	.read = read_text,
};

/* A64 encodings */
static u32 adrp(unsigned int rd, unsigned int idx, unsigned long target)
{
	long imm = (long)(target >> 12) - (long)(pc_of(idx) >> 12);

	return 0x90000000 | (u32)(imm & 3) << 29 |
		(u32)((imm >> 2) & 0x7ffff) << 5 | rd;
}

static u32 add_imm(unsigned int rd, unsigned int rn, unsigned int imm)
{
	return 0x91000000 | imm << 10 | rn << 5 | rd;
}

static u32 bl(unsigned int idx, unsigned long target)
{
	return 0x94000000 | (u32)(((long)target - (long)pc_of(idx)) >> 2 & 0x3ffffff);
}

static u32 b(unsigned int idx, unsigned long target)
{
	return 0x14000000 | (u32)(((long)target - (long)pc_of(idx)) >> 2 & 0x3ffffff);
}

#define RET 0xd65f03c0U
#define NOP 0xd503201fU
#define MOV_X0_X17 0xaa1103e0U
#define CASP_X0_X1_X2_X3_X4 0x48207c82U	/* casp x0, x1, x2, x3, [x4] */
#define HVC_0 0xd4000002U
#define ERET 0xd69f03e0U
#define PACIA1716 0xd503219fU

/* BC.cond (FEAT_HBC) with the condition EQ, to @target */
static u32 bc_eq(unsigned int idx, unsigned long target)
{
	return 0x54000010 | (u32)(((long)target - (long)pc_of(idx)) >> 2 & 0x7ffff) << 5;
}

/* STGP Xt, Xt2, [Xn, #imm]! (pre-index, the offset in 16-byte granules) */
static u32 stgp_pre(unsigned int rt, unsigned int rt2, unsigned int rn,
		    int imm)
{
	return 0x69800000 | (u32)((imm / 16) & 0x7f) << 15 | rt2 << 10 |
		rn << 5 | rt;
}

/* Starts a function; returns the index of its first instruction */
static unsigned int fn_begin(const char *name)
{
	syms[nsyms].name = name;
	syms[nsyms].addr = pc_of(ntext);
	return ntext;
}

static void emit(u32 insn)
{
	text[ntext++] = insn;
}

static void fn_end(void)
{
	syms[nsyms].size = pc_of(ntext) - syms[nsyms].addr;
	nsyms++;
	ntext += 4;	/* a gap of padding between functions */
}

/* The same at the next index */
static void emit_adrp(unsigned int rd, unsigned long target)
{
	emit(adrp(rd, ntext, target));
}

static void emit_bl(unsigned long target)
{
	emit(bl(ntext, target));
}

static unsigned long mutex_lock, mutex_unlock;

static void stub(const char *name)
{
	fn_begin(name);
	emit(RET);
	fn_end();
}

static int failures, ntests;

static void check(bool ok, const char *what)
{
	ntests++;
	printf("%sok %d - %s\n", ok ? "" : "not ", ntests, what);
	if (!ok)
		failures++;
}

static struct ue_fn fn;

/* Argument @arg of the mutex_lock()/mutex_unlock() calls in @name */
static unsigned long arg_of(const char *name, unsigned int arg,
			    const char **why)
{
	*why = NULL;
	ue_fn_analyse(&fn, &env, name);
	return ue_fn_call_arg(&fn, mutex_lock, mutex_unlock, arg, why);
}

/* arg_of(), its answer and its reason printed as a TAP comment */
static unsigned long arg_report(const char *name, unsigned int arg)
{
	const char *why;
	unsigned long v = arg_of(name, arg, &why);

	printf("# %s: %#lx (%s)\n", name, v, why ?: "");
	return v;
}

/*
 * Functions that load A into @reg, then run @insn (and @then, if not 0),
 * after which the analysis must not know @arg of the mutex_lock() call
 */
static const struct clobber {
	const char *name, *what;
	unsigned int reg, arg;
	u32 insn, then;
} clobbers[] = {
	/* CASP writes x0 and x1 (Xs, Xs+1): x1 is no longer A */
	{ "casp", "CASP makes Xs+1 unknown", 1, 1, CASP_X0_X1_X2_X3_X4, 0 },
	/* HVC returns values in x0-x3 (SMCCC): x1 is no longer A */
	{ "hvc", "HVC makes the argument registers unknown", 1, 1, HVC_0, 0 },
	/* PACIA1716 signs x17: x17 is no longer A */
	{ "pacia1716", "PACIA1716 makes x17 unknown", 17, 0, PACIA1716,
	  MOV_X0_X17 },
	/* ERET does not go on to the next instruction */
	{ "eret", "ERET is not decoded as going on", 1, 1, ERET, 0 },
};

int main(void)
{
	const struct clobber *c;
	const char *why;
	unsigned long v;
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	stub("mutex_lock");
	stub("mutex_unlock");
	mutex_lock = lookup("mutex_lock");
	mutex_unlock = lookup("mutex_unlock");
	env.mutex_lock = mutex_lock;

	/* A control: lock and unlock of A + 0x10 */
	fn_begin("good");
	emit_adrp(0, A);
	emit(add_imm(0, 0, 0x10));
	emit_bl(mutex_lock);
	emit_adrp(0, A);
	emit(add_imm(0, 0, 0x10));
	emit_bl(mutex_unlock);
	emit(RET);
	fn_end();

	/* One call passes 0, the other B: they disagree */
	fn_begin("zero_then_b");
	emit_adrp(0, 0);
	emit_bl(mutex_lock);
	emit_adrp(0, B);
	emit_bl(mutex_unlock);
	emit(RET);
	fn_end();

	for (c = clobbers; c < clobbers + ARRAY_SIZE(clobbers); c++) {
		fn_begin(c->name);
		emit_adrp(c->reg, A);
		emit(c->insn);
		if (c->then)
			emit(c->then);
		emit_bl(mutex_lock);
		emit(RET);
		fn_end();
	}

	/*
	 * BC.cond branches: the call on its taken path passes B, the one
	 * after it A; they disagree
	 */
	i = fn_begin("bc_cond");
	emit_adrp(0, A);
	emit(bc_eq(i + 1, pc_of(i + 4)));
	emit_bl(mutex_lock);
	emit(RET);
	emit_adrp(0, B);
	emit_bl(mutex_lock);
	emit(RET);
	fn_end();

	/* STGP's pre-index write-back adds 16 bytes per granule: x0 = A + 32 */
	fn_begin("stgp");
	emit_adrp(0, A);
	emit(stgp_pre(1, 2, 0, 32));
	emit_bl(mutex_lock);
	emit(RET);
	fn_end();

	/* A function of 10 bytes: its last instruction is not whole */
	fn_begin("ragged");
	emit_adrp(0, A);
	emit_bl(mutex_lock);
	emit(RET);
	syms[nsyms].size = 10;
	nsyms++;
	ntext += 4;

	check(arg_of("good", 0, &why) == A + 0x10,
	      "control: the address both calls pass");

	check(!arg_report("zero_then_b", 0), "calls passing 0 and B disagree: refused");
	for (c = clobbers; c < clobbers + ARRAY_SIZE(clobbers); c++)
		check(!arg_report(c->name, c->arg), c->what);
	check(!arg_report("bc_cond", 0),
	      "BC.cond is a branch: the calls of both paths seen, they disagree");
	check(arg_report("stgp", 0) == A + 32,
	      "STGP write-back scaled by 16");
	check(!arg_report("ragged", 0) && fn.error,
	      "a function whose end cuts an instruction: refused");

	/*
	 * The text changes while it is analysed (a static key, a kprobe):
	 * the NOP becomes a branch to an instruction no branch targeted when
	 * the function was first read. The analysis must use one version of
	 * the code throughout (here the first), and never crash.
	 */
	i = fn_begin("patched");
	emit(NOP);
	emit_adrp(0, A);
	emit_bl(mutex_lock);
	emit(RET);
	fn_end();
	patch_idx = i;
	patch_insn = b(i, pc_of(i + 3));
	patch_after = 4;	/* after the first read of the whole function */
	nreads = 0;
	v = arg_report("patched", 0);
	check(v == A || (!v && fn.error), "text patched during the analysis: one version or a refusal");
	patch_after = 0;

	printf("1..%d\n# %d passed, %d failed\n", ntests, ntests - failures,
	       failures);
	return failures ? 1 : 0;
}
