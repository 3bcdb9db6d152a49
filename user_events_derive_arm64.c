// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 instruction decoder of user_events_derive.c: each A64
 * instruction (fixed width, 4 bytes) described by what it does to the flow
 * of control, to the general registers x0-x30 and to memory addresses.
 *
 * Understood exactly: ADRP and ADR, ADD/SUB (immediate) on 64-bit
 * registers, MOV (register), B, BL, B.cond, BC.cond, CBZ/CBNZ, TBZ/TBNZ, RET and
 * its authenticated forms, BLR and its authenticated forms, BRK, UDF, the
 * loads and stores with an immediate offset (single registers and pairs,
 * with their pre- and post-index write-back; STGP's offset counts 16-byte
 * granules), with a register offset, and
 * PC-relative literal loads. Any other branch through a register (BR,
 * ERET...) ends the analysis. The hint space (NOP, BTI, PACIASP...) makes
 * x17 and x30 unknown, the system instructions Xt and Xt+1, other data
 * processing instructions their destination (bits 0-4); the other loads,
 * stores and atomics, SVC/HVC/SMC and the reserved and unallocated
 * encodings make every register unknown. Register 31 (SP or XZR) is never
 * tracked. The decoder reads only the bytes it is given.
 */

#include <linux/bits.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/string.h>

#include "user_events_derive.h"

const u8 ue_arch_arg_regs[3] = { 0, 1, 2 };

/* x0-x18 (x16, x17: veneers; x18: platform) and x30, the link register */
const u32 ue_arch_call_clobbers = GENMASK(18, 0) | BIT(30);

int ue_arch_decoder_init(unsigned long (*lookup)(const char *name))
{
	return 0;
}

static void op(struct ue_insn *insn, enum ue_reg_op o, unsigned int dst,
	       unsigned int src, long imm)
{
	if (dst == 31 || insn->nr_ops == UE_INSN_MAX_OPS)
		return;
	/* src 31 is SP or XZR: never a tracked value */
	if ((o == UE_REG_COPY || o == UE_REG_ADD) && src == 31)
		o = UE_REG_CLOBBER;
	insn->ops[insn->nr_ops].op = o;
	insn->ops[insn->nr_ops].dst = dst;
	insn->ops[insn->nr_ops].src = src;
	insn->ops[insn->nr_ops].imm = imm;
	insn->nr_ops++;
}

static void mem(struct ue_insn *insn, unsigned int base, long disp)
{
	if (base == 31)		/* SP */
		return;
	insn->has_mem = true;
	insn->mem_base = base;
	insn->mem_disp = disp;
}

static long sext(u32 v, unsigned int bits)
{
	return sign_extend64(v, bits - 1);
}

/* Loads and stores (op0 = x1x0) */
static void decode_ldst(u32 i, unsigned long pc, struct ue_insn *insn)
{
	unsigned int rt = i & 31, rn = (i >> 5) & 31, rt2 = (i >> 10) & 31;
	bool simd = i & BIT(26);

	if ((i & 0x3b000000) == 0x39000000) {
		/* LDR/STR (unsigned immediate) */
		unsigned int size = i >> 30, opc = (i >> 22) & 3;
		unsigned int scale = size;

		if (simd && (opc & 2) && size == 0)
			scale = 4;
		mem(insn, rn, (long)((i >> 10) & 0xfff) << scale);
		if (!simd && opc)
			op(insn, UE_REG_CLOBBER, rt, 0, 0);
		return;
	}
	if ((i & 0x3b200000) == 0x38000000) {
		/* LDUR/STUR, pre- and post-index, unprivileged */
		unsigned int idx = (i >> 10) & 3, opc = (i >> 22) & 3;
		long simm = sext((i >> 12) & 0x1ff, 9);

		mem(insn, rn, idx == 1 ? 0 : simm);
		if (!simd && opc)
			op(insn, UE_REG_CLOBBER, rt, 0, 0);
		if (idx == 1 || idx == 3)
			op(insn, UE_REG_ADD, rn, rn, simm);
		return;
	}
	if ((i & 0x3b200c00) == 0x38200800) {
		/* LDR/STR (register offset) */
		if (!simd && ((i >> 22) & 3))
			op(insn, UE_REG_CLOBBER, rt, 0, 0);
		return;
	}
	if ((i & 0x3a000000) == 0x28000000) {
		/* LDP/STP/LDNP/STNP/LDPSW */
		unsigned int opc = i >> 30, mode = (i >> 23) & 3;
		unsigned int scale = simd ? 4 << opc : (opc == 2 ? 8 : 4);
		long off;

		/* STGP (opc 01, a store): offsets in granules of 16 bytes */
		if (!simd && opc == 1 && !(i & BIT(22)))
			scale = 16;
		off = sext((i >> 15) & 0x7f, 7) * scale;

		mem(insn, rn, mode == 1 ? 0 : off);
		if (!simd && (i & BIT(22))) {
			op(insn, UE_REG_CLOBBER, rt, 0, 0);
			op(insn, UE_REG_CLOBBER, rt2, 0, 0);
		}
		if (mode == 1 || mode == 3)
			op(insn, UE_REG_ADD, rn, rn, off);
		return;
	}
	if ((i & 0x3b000000) == 0x18000000) {
		/* LDR (literal) */
		insn->has_mem = true;
		insn->mem_abs = true;
		insn->mem_disp = pc + sext((i >> 5) & 0x7ffff, 19) * 4;
		if (!simd)
			op(insn, UE_REG_CLOBBER, rt, 0, 0);
		return;
	}
	/*
	 * Exclusives, atomics, structures, pointer-authenticated loads: some
	 * write registers no field names (CASP: Xs+1 and Xt+1; LD64B: eight),
	 * so all are unknown after them
	 */
	op(insn, UE_REG_CLOBBER_ALL, 0, 0, 0);
}

int ue_arch_decode(const u8 *code, unsigned int avail, unsigned long pc,
		   struct ue_insn *insn)
{
	unsigned int rd, rn;
	u32 i;

	memset(insn, 0, sizeof(*insn));
	insn->len = 4;
	insn->kind = UE_INSN_NEXT;
	if (avail < 4 || (pc & 3))
		return -EINVAL;
	/* A64 instructions are little-endian whatever the data's order */
	i = code[0] | code[1] << 8 | code[2] << 16 | (u32)code[3] << 24;
	rd = i & 31;
	rn = (i >> 5) & 31;

	if ((i & 0x9f000000) == 0x90000000) {		/* ADRP */
		long imm = sext(((i >> 5) & 0x7ffff) << 2 | ((i >> 29) & 3), 21);

		op(insn, UE_REG_SET, rd, 0, (long)(pc & ~0xfffUL) + imm * 4096);
	} else if ((i & 0x9f000000) == 0x10000000) {	/* ADR */
		long imm = sext(((i >> 5) & 0x7ffff) << 2 | ((i >> 29) & 3), 21);

		op(insn, UE_REG_SET, rd, 0, (long)pc + imm);
	} else if ((i & 0xbf800000) == 0x91000000) {	/* ADD/SUB imm, 64-bit */
		long imm = (i >> 10) & 0xfff;

		if (i & BIT(22))
			imm <<= 12;
		if (i & BIT(30))
			imm = -imm;
		op(insn, UE_REG_ADD, rd, rn, imm);
	} else if ((i & 0xffe0ffe0) == 0xaa0003e0) {	/* MOV Xd, Xm */
		op(insn, UE_REG_COPY, rd, (i >> 16) & 31, 0);
	} else if ((i & 0x7c000000) == 0x14000000) {	/* B, BL */
		insn->kind = (i & BIT(31)) ? UE_INSN_CALL : UE_INSN_JUMP;
		insn->target = pc + sext(i & 0x3ffffff, 26) * 4;
	} else if ((i & 0xff000000) == 0x54000000 ||	/* B.cond, BC.cond */
		   (i & 0x7e000000) == 0x34000000) {	/* CBZ, CBNZ */
		insn->kind = UE_INSN_BRANCH;
		insn->target = pc + sext((i >> 5) & 0x7ffff, 19) * 4;
	} else if ((i & 0x7e000000) == 0x36000000) {	/* TBZ, TBNZ */
		insn->kind = UE_INSN_BRANCH;
		insn->target = pc + sext((i >> 5) & 0x3fff, 14) * 4;
	} else if ((i & 0xfffffc1f) == 0xd65f0000 ||	/* RET */
		   i == 0xd65f0bff || i == 0xd65f0fff) {	/* RETAA, RETAB */
		insn->kind = UE_INSN_RETURN;
	} else if ((i & 0xfffffc1f) == 0xd63f0000 ||	/* BLR */
		   (i & 0xfefff800) == 0xd63f0800) {	/* BLRAA... */
		insn->kind = UE_INSN_ICALL;
	} else if ((i & 0xfe000000) == 0xd6000000) {
		/* BR, BRAA..., ERET, DRPS: control goes elsewhere */
		insn->kind = UE_INSN_UNKNOWN;
	} else if ((i & 0xffe0001f) == 0xd4200000 ||	/* BRK */
		   (i & 0xffff0000) == 0) {		/* UDF */
		insn->kind = UE_INSN_STOP;
	} else if ((i & 0xff000000) == 0xd4000000) {
		/* SVC, HVC, SMC...: the other side may set x0-x17 */
		op(insn, UE_REG_CLOBBER_ALL, 0, 0, 0);
	} else if ((i & 0xfffff01f) == 0xd503201f) {
		/*
		 * Hints: NOP, BTI and the pointer authentication of x30
		 * (PACIASP, AUTIASP, XPACLRI) and x17 (PACIA1716...)
		 */
		op(insn, UE_REG_CLOBBER, 17, 0, 0);
		op(insn, UE_REG_CLOBBER, 30, 0, 0);
	} else if ((i & 0xff000000) == 0xd5000000) {
		/* System: MRS, SYSL write Xt; MRRS Xt and Xt+1 */
		op(insn, UE_REG_CLOBBER, rd, 0, 0);
		if (rd < 30)
			op(insn, UE_REG_CLOBBER, rd + 1, 0, 0);
	} else if ((i & 0x0a000000) == 0x08000000) {
		decode_ldst(i, pc, insn);
	} else if ((i & 0x1c000000) == 0x00000000 ||
		   (i & 0x1e000000) == 0x06000000) {
		/* Reserved, SME and unallocated encodings */
		op(insn, UE_REG_CLOBBER_ALL, 0, 0, 0);
	} else {
		/* Data processing (and SVE): at most Xd */
		op(insn, UE_REG_CLOBBER, rd, 0, 0);
	}

	return 0;
}
