// SPDX-License-Identifier: GPL-2.0
/*
 * The x86-64 instruction decoder of user_events_derive.c. The kernel's own
 * decoder (insn_init(), insn_get_length(): arch/x86/lib/insn.c, found
 * through kallsyms) splits an instruction into its prefixes, opcode,
 * ModRM, SIB, displacement and immediate; this file says what the
 * instruction does to the flow of control and to the general registers.
 *
 * Understood exactly: MOV between registers, MOV of a sign-extended
 * immediate or of a 64-bit immediate to a register, LEA, PUSH and POP,
 * CALL and JMP (direct; indirect calls; an indirect JMP ends the analysis),
 * Jcc, LOOP, RET, INT3, UD2, the NOPs and ENDBR64, and the instructions that
 * write no register (TEST, CMP, stores). Other instructions make the
 * registers they write unknown (RDSSPD/RDSSPQ, which share the hint-NOP
 * opcode with ENDBR64, their r/m register), or all registers when not
 * listed; every VEX- or EVEX-encoded instruction makes all unknown.
 */

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <asm/insn.h>

#include "user_events_derive.h"
#include "user_events_ksyms.h"

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11 };

const u8 ue_arch_arg_regs[3] = { RDI, RSI, RDX };

const u32 ue_arch_call_clobbers = BIT(RAX) | BIT(RCX) | BIT(RDX) | BIT(RSI) |
	BIT(RDI) | BIT(R8) | BIT(R9) | BIT(R10) | BIT(R11);

static const void *insn_init_fn, *insn_get_length_fn;

int ue_arch_decoder_init(unsigned long (*lookup)(const char *name))
{
	insn_init_fn = (const void *)lookup("insn_init");
	insn_get_length_fn = (const void *)lookup("insn_get_length");
	return insn_init_fn && insn_get_length_fn ? 0 : -ENOENT;
}

static void op(struct ue_insn *u, enum ue_reg_op o, unsigned int dst,
	       unsigned int src, long imm)
{
	if (dst == RSP || u->nr_ops == UE_INSN_MAX_OPS)
		return;
	if ((o == UE_REG_COPY || o == UE_REG_ADD) && src == RSP)
		o = UE_REG_CLOBBER;
	u->ops[u->nr_ops].op = o;
	u->ops[u->nr_ops].dst = dst;
	u->ops[u->nr_ops].src = src;
	u->ops[u->nr_ops].imm = imm;
	u->nr_ops++;
}

static bool has_prefix(const struct insn *insn, u8 p)
{
	int i;

	for (i = 0; i < insn->prefixes.nbytes && i < 4; i++)
		if (insn->prefixes.bytes[i] == p)
			return true;
	return false;
}

/*
 * The memory operand of the ModRM byte: RIP-relative, absolute, or a base
 * register plus displacement; none with an index or a segment override.
 */
static void mem_operand(const struct insn *insn, unsigned long next,
			u8 rex, struct ue_insn *u)
{
	u8 modrm = insn->modrm.bytes[0], mod = modrm >> 6, rm = modrm & 7;
	long disp = (s32)insn->displacement.value;

	/* Segment overrides; 32-bit addresses (truncated) */
	if (has_prefix(insn, 0x64) || has_prefix(insn, 0x65) ||
	    has_prefix(insn, 0x67))
		return;
	if (mod == 0 && rm == 5) {
		u->has_mem = true;
		u->mem_abs = true;
		u->mem_disp = next + disp;
		return;
	}
	if (rm == 4) {
		u8 sib = insn->sib.bytes[0];
		unsigned int base = (sib & 7) | (rex & 1 ? 8 : 0);
		unsigned int index = ((sib >> 3) & 7) | (rex & 2 ? 8 : 0);

		if (index != 4)
			return;
		if (mod == 0 && (sib & 7) == 5) {
			u->has_mem = true;
			u->mem_abs = true;
			u->mem_disp = disp;
			return;
		}
		rm = base;
	} else {
		rm |= rex & 1 ? 8 : 0;
	}
	if (rm == RSP)
		return;
	u->has_mem = true;
	u->mem_base = rm;
	u->mem_disp = disp;
}

int ue_arch_decode(const u8 *code, unsigned int avail, unsigned long pc,
		   struct ue_insn *u)
{
	u8 buf[MAX_INSN_SIZE], op0, op1, modrm = 0, mod = 3, rex = 0;
	unsigned int reg = 0, rm = 0;
	unsigned long next;
	struct insn insn;
	long imm;
	bool w;

	memset(u, 0, sizeof(*u));
	u->kind = UE_INSN_NEXT;
	if (avail > sizeof(buf))
		avail = sizeof(buf);
	memcpy(buf, code, avail);
	memset(&insn, 0, sizeof(insn));
	user_events_call(insn_init_fn, (unsigned long)&insn,
			 (unsigned long)buf, avail, 1, 0);
	user_events_call(insn_get_length_fn, (unsigned long)&insn, 0, 0, 0, 0);
	if (!insn.length || insn.length > avail || !insn.immediate.got)
		return -EINVAL;
	u->len = insn.length;
	next = pc + insn.length;

	if (insn.rex_prefix.nbytes)
		rex = insn.rex_prefix.bytes[0];
	w = rex & 8;
	op0 = insn.opcode.bytes[0];
	op1 = insn.opcode.bytes[1];
	if (insn.modrm.nbytes) {
		modrm = insn.modrm.bytes[0];
		mod = modrm >> 6;
		reg = ((modrm >> 3) & 7) | (rex & 4 ? 8 : 0);
		rm = (modrm & 7) | (rex & 1 ? 8 : 0);
		if (mod != 3)
			mem_operand(&insn, next, rex, u);
	}
	imm = insn.immediate.value;	/* sign-extended by the decoder */
	if (w && insn.immediate.nbytes == 4 && imm < 0) {
		u->has_imm_addr = true;
		u->imm_addr = imm;
	}

	/*
	 * VEX and EVEX: their opcode bytes mean other instructions than the
	 * legacy ones (SHLX, SARX, SHRX: F7; MULX: F6, which writes two
	 * registers), and their register fields extend through the prefix,
	 * not REX. None branches; each may write any register.
	 */
	if (insn.vex_prefix.nbytes) {
		if (u->has_mem && !u->mem_abs)
			u->has_mem = false;	/* its base lacks VEX.B */
		op(u, UE_REG_CLOBBER_ALL, 0, 0, 0);
		return 0;
	}

	if (op0 == 0x0f) {
		if (op1 >= 0x80 && op1 <= 0x8f) {		/* Jcc rel32 */
			u->kind = UE_INSN_BRANCH;
			u->target = next + imm;
		} else if (op1 == 0x1e && has_prefix(&insn, 0xf3) &&
			   mod == 3 && ((modrm >> 3) & 7) == 1) {
			op(u, UE_REG_CLOBBER, rm, 0, 0);	/* RDSSPD/Q */
		} else if (op1 == 0x1f || op1 == 0x1e) {	/* NOP, ENDBR */
		} else if (op1 == 0x0b) {			/* UD2 */
			u->kind = UE_INSN_STOP;
		} else if ((op1 & 0xf0) == 0x40 || op1 == 0xb6 || op1 == 0xb7 ||
			   op1 == 0xbe || op1 == 0xbf || op1 == 0xaf) {
			op(u, UE_REG_CLOBBER, reg, 0, 0);	/* CMOV, MOVZX... */
		} else {
			op(u, UE_REG_CLOBBER_ALL, 0, 0, 0);
		}
		return 0;
	}

	switch (op0) {
	case 0x00 ... 0x3f:
		if ((op0 & 7) >= 6) {				/* legacy */
			op(u, UE_REG_CLOBBER_ALL, 0, 0, 0);
		} else if ((op0 & 0xf8) == 0x38) {		/* CMP */
		} else if ((op0 & 7) >= 4) {			/* op al/eax, imm */
			op(u, UE_REG_CLOBBER, RAX, 0, 0);
		} else if (op0 & 2) {				/* reg op= r/m */
			op(u, UE_REG_CLOBBER, reg, 0, 0);
		} else if (mod == 3) {				/* r/m op= reg */
			op(u, UE_REG_CLOBBER, rm, 0, 0);
		}
		break;
	case 0x50 ... 0x57:					/* PUSH */
		break;
	case 0x58 ... 0x5f:					/* POP */
		op(u, UE_REG_CLOBBER, (op0 & 7) | (rex & 1 ? 8 : 0), 0, 0);
		break;
	case 0x63: case 0x69: case 0x6b:			/* MOVSXD, IMUL */
		op(u, UE_REG_CLOBBER, reg, 0, 0);
		break;
	case 0x70 ... 0x7f: case 0xe0 ... 0xe3:			/* Jcc, LOOP */
		u->kind = UE_INSN_BRANCH;
		u->target = next + imm;
		if (op0 >= 0xe0 && op0 <= 0xe2)		/* RCX-- */
			op(u, UE_REG_CLOBBER, RCX, 0, 0);
		break;
	case 0x80 ... 0x83: case 0xc0: case 0xc1: case 0xd0 ... 0xd3:
		/* group 1 (CMP is /7), shifts */
		if (mod == 3 && !(op0 <= 0x83 && ((modrm >> 3) & 7) == 7))
			op(u, UE_REG_CLOBBER, rm, 0, 0);
		break;
	case 0x84: case 0x85:					/* TEST */
		break;
	case 0x86: case 0x87:					/* XCHG */
		op(u, UE_REG_CLOBBER, reg, 0, 0);
		if (mod == 3)
			op(u, UE_REG_CLOBBER, rm, 0, 0);
		break;
	case 0x88: case 0x89: case 0xc6: case 0xc7:		/* MOV to r/m */
		if (op0 == 0xc7 && ((modrm >> 3) & 7) == 7) {
			/* XBEGIN: an abort resumes at its target */
			u->kind = UE_INSN_UNKNOWN;
			break;
		}
		if (mod != 3)
			break;				/* a store */
		if (op0 == 0x89 && w)
			op(u, UE_REG_COPY, rm, reg, 0);
		else if (op0 == 0xc7 && w && !((modrm >> 3) & 7))
			op(u, UE_REG_SET, rm, 0, imm);
		else
			op(u, UE_REG_CLOBBER, rm, 0, 0);
		break;
	case 0x8a: case 0x8b:					/* MOV to reg */
		if (op0 == 0x8b && w && mod == 3)
			op(u, UE_REG_COPY, reg, rm, 0);
		else
			op(u, UE_REG_CLOBBER, reg, 0, 0);
		break;
	case 0x8d:						/* LEA */
		if (w && u->has_mem && u->mem_abs)
			op(u, UE_REG_SET, reg, 0, u->mem_disp);
		else if (w && u->has_mem)
			op(u, UE_REG_ADD, reg, u->mem_base, u->mem_disp);
		else
			op(u, UE_REG_CLOBBER, reg, 0, 0);
		break;
	case 0x90:						/* NOP */
		if (rex & 1)
			op(u, UE_REG_CLOBBER_ALL, 0, 0, 0);
		break;
	case 0x98: case 0x99:					/* CDQE, CQO */
		op(u, UE_REG_CLOBBER, op0 == 0x98 ? RAX : RDX, 0, 0);
		break;
	case 0xb0 ... 0xbf:					/* MOV imm */
		if (op0 >= 0xb8 && w)
			op(u, UE_REG_SET, (op0 & 7) | (rex & 1 ? 8 : 0), 0,
			   (long)((u64)insn.immediate2.value << 32 |
				  (u32)insn.immediate1.value));
		else
			op(u, UE_REG_CLOBBER, (op0 & 7) | (rex & 1 ? 8 : 0), 0, 0);
		break;
	case 0xc2: case 0xc3:					/* RET */
		u->kind = UE_INSN_RETURN;
		break;
	case 0xcc: case 0xf4:					/* INT3, HLT */
		u->kind = UE_INSN_STOP;
		break;
	case 0xe8:						/* CALL */
		u->kind = UE_INSN_CALL;
		u->target = next + imm;
		break;
	case 0xe9: case 0xeb:					/* JMP */
		u->kind = UE_INSN_JUMP;
		u->target = next + imm;
		break;
	case 0xf6: case 0xf7:					/* group 3 */
		if (((modrm >> 3) & 7) > 1)
			op(u, UE_REG_CLOBBER_ALL, 0, 0, 0);
		break;
	case 0xff:						/* group 5 */
		switch ((modrm >> 3) & 7) {
		case 0: case 1:					/* INC, DEC */
			if (mod == 3)
				op(u, UE_REG_CLOBBER, rm, 0, 0);
			break;
		case 2:						/* CALL * */
			u->kind = UE_INSN_ICALL;
			break;
		case 6:						/* PUSH */
			break;
		default:					/* JMP *, far */
			u->kind = UE_INSN_UNKNOWN;
			break;
		}
		break;
	default:
		op(u, UE_REG_CLOBBER_ALL, 0, 0, 0);
		break;
	}
	return 0;
}
