// SPDX-License-Identifier: GPL-2.0
/*
 * The analysis of a kernel function's machine code for
 * user_events_derive.c: which values the instructions before each call
 * give its arguments, on every path to it, and which addresses the
 * function computes.
 *
 * It reads the function through the architecture's decoder
 * (user_events_derive_arm64.c, user_events_derive_x86.c) and reaches the
 * kernel only through struct ue_code_env, so that it also builds on the
 * host for tests/selftests/host/derive_test.c.
 */

#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/types.h>

#include "user_events_derive.h"

static void regs_meet(struct ue_regs *into, const struct ue_regs *from)
{
	unsigned int r;

	for (r = 0; r < UE_NR_REGS; r++)
		if ((into->known & BIT(r)) &&
		    (!(from->known & BIT(r)) || into->val[r] != from->val[r]))
			into->known &= ~BIT(r);
}

static bool regs_equal(const struct ue_regs *a, const struct ue_regs *b)
{
	unsigned int r;

	if (a->known != b->known)
		return false;
	for (r = 0; r < UE_NR_REGS; r++)
		if ((a->known & BIT(r)) && a->val[r] != b->val[r])
			return false;
	return true;
}

static struct ue_slot *fn_slot(struct ue_fn *fn, unsigned long pc)
{
	unsigned int i;

	for (i = 0; i < fn->nr_slots; i++)
		if (fn->slots[i].pc == pc)
			return &fn->slots[i];
	return NULL;
}

static bool in_fn(const struct ue_fn *fn, unsigned long pc)
{
	return pc >= fn->start && pc < fn->start + fn->size;
}

/* Decodes the instruction at @pc, from the copy of the function's code */
static int fn_decode(struct ue_fn *fn, unsigned long pc, struct ue_insn *insn)
{
	memset(insn, 0, sizeof(*insn));
	if (!in_fn(fn, pc))
		return -EINVAL;
	return ue_arch_decode(fn->code + (pc - fn->start),
			      fn->start + fn->size - pc, pc, insn);
}

static void fn_add_addr(struct ue_fn *fn, unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < fn->nr_addrs; i++)
		if (fn->addrs[i] == addr)
			return;
	if (fn->nr_addrs < UE_FN_MAX_ADDRS)
		fn->addrs[fn->nr_addrs++] = addr;
}

static void fn_add_call(struct ue_fn *fn, unsigned long callee,
			const struct ue_regs *regs)
{
	struct ue_call *c;
	unsigned int a;

	if (fn->nr_calls == UE_FN_MAX_CALLS) {
		fn->error = "too many calls";
		return;
	}
	c = &fn->calls[fn->nr_calls++];
	c->callee = callee;
	c->known = 0;
	for (a = 0; a < 3; a++) {
		if (regs->known & BIT(ue_arch_arg_regs[a])) {
			c->known |= BIT(a);
			c->arg[a] = regs->val[ue_arch_arg_regs[a]];
		}
	}
}

static void apply_ops(const struct ue_insn *insn, struct ue_regs *regs,
		      struct ue_fn *fn)
{
	unsigned int n;

	for (n = 0; n < insn->nr_ops; n++) {
		unsigned int d = insn->ops[n].dst, s = insn->ops[n].src;

		switch (insn->ops[n].op) {
		case UE_REG_SET:
			regs->val[d] = insn->ops[n].imm;
			regs->known |= BIT(d);
			break;
		case UE_REG_COPY:
		case UE_REG_ADD:
			if (!(regs->known & BIT(s))) {
				regs->known &= ~BIT(d);
				break;
			}
			regs->val[d] = regs->val[s] +
				(insn->ops[n].op == UE_REG_ADD ? insn->ops[n].imm : 0);
			regs->known |= BIT(d);
			break;
		case UE_REG_CLOBBER:
			regs->known &= ~BIT(d);
			break;
		case UE_REG_CLOBBER_ALL:
			regs->known = 0;
			break;
		}
		if (fn && (insn->ops[n].op == UE_REG_SET ||
			   insn->ops[n].op == UE_REG_ADD) &&
		    (regs->known & BIT(d)))
			fn_add_addr(fn, regs->val[d]);
	}
}

/*
 * First pass: every instruction decodes, every branch inside the function
 * lands on an instruction boundary, and every branch out of it is a tail
 * call of a function's entry.
 */
static int fn_scan(struct ue_fn *fn)
{
	unsigned long pc, size, offset;
	struct ue_insn insn;
	unsigned int i;

	memset(fn->boundary, 0, sizeof(fn->boundary));
	fn->nr_slots = 0;
	for (pc = fn->start; pc < fn->start + fn->size; pc += insn.len) {
		if (fn_decode(fn, pc, &insn) || !insn.len ||
		    insn.len > fn->start + fn->size - pc) {
			fn->error = "undecodable instruction";
			return -EINVAL;
		}
		__set_bit(pc - fn->start, fn->boundary);
		if (insn.kind == UE_INSN_UNKNOWN) {
			fn->error = "indirect jump";
			return -EINVAL;
		}
		if (insn.kind != UE_INSN_BRANCH && insn.kind != UE_INSN_JUMP)
			continue;
		if (!in_fn(fn, insn.target)) {
			if (insn.kind == UE_INSN_BRANCH ||
			    !fn->env->bounds(insn.target, &size, &offset) || offset) {
				fn->error = "branch out of the function";
				return -EINVAL;
			}
			continue;	/* a tail call */
		}
		if (fn_slot(fn, insn.target))
			continue;
		if (fn->nr_slots == UE_FN_MAX_TARGETS) {
			fn->error = "too many branches";
			return -EINVAL;
		}
		fn->slots[fn->nr_slots].pc = insn.target;
		fn->slots[fn->nr_slots].visited = false;
		fn->nr_slots++;
	}
	for (i = 0; i < fn->nr_slots; i++) {
		if (!test_bit(fn->slots[i].pc - fn->start, fn->boundary)) {
			fn->error = "branch into an instruction";
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The addresses @insn reads, writes or loads (with the registers known in
 * @cur before it), and the call or tail call it makes
 */
static void fn_note_refs(struct ue_fn *fn, const struct ue_insn *insn,
			 const struct ue_regs *cur)
{
	if (insn->has_mem) {
		if (insn->mem_abs)
			fn_add_addr(fn, insn->mem_disp);
		else if (cur->known & BIT(insn->mem_base))
			fn_add_addr(fn, cur->val[insn->mem_base] +
				    insn->mem_disp);
	}
	if (insn->has_imm_addr)
		fn_add_addr(fn, insn->imm_addr);
	if (insn->kind == UE_INSN_CALL ||
	    (insn->kind == UE_INSN_JUMP && !in_fn(fn, insn->target)))
		fn_add_call(fn, insn->target, cur);
}

/*
 * Carries the state @cur of a branch to its target @target, inside the
 * function: 1 if the target's state changed, 0 if not, -EINVAL (with
 * fn->error) if fn_scan() did not record the target
 */
static int fn_join(struct ue_fn *fn, unsigned long target,
		   const struct ue_regs *cur)
{
	struct ue_slot *s = fn_slot(fn, target);
	bool changed = false;
	struct ue_regs old;

	if (!s) {	/* fn_scan() found every target */
		fn->error = "branch target not scanned";
		return -EINVAL;
	}
	old = s->regs;
	if (s->visited) {
		regs_meet(&s->regs, cur);
	} else {
		s->regs = *cur;
		s->visited = true;
		changed = true;
	}
	if (!regs_equal(&old, &s->regs))
		changed = true;
	return changed;
}

/* One pass over the function; true if a join point's state changed */
static bool fn_pass(struct ue_fn *fn)
{
	struct ue_regs cur = { 0 };
	bool reachable = true, changed = false;
	struct ue_insn insn;
	struct ue_slot *s;
	unsigned long pc;
	int joined;

	fn->nr_calls = 0;
	fn->nr_addrs = 0;
	for (pc = fn->start; pc < fn->start + fn->size; pc += insn.len) {
		s = fn_slot(fn, pc);
		if (s && s->visited) {
			if (reachable)
				regs_meet(&cur, &s->regs);
			else
				cur = s->regs;
			reachable = true;
		}
		if (fn_decode(fn, pc, &insn)) {
			/* fn_scan() decoded the same bytes before */
			fn->error = "undecodable instruction";
			return false;
		}
		if (!reachable)
			continue;

		fn_note_refs(fn, &insn, &cur);
		apply_ops(&insn, &cur, fn);
		if (insn.kind == UE_INSN_CALL || insn.kind == UE_INSN_ICALL)
			cur.known &= ~ue_arch_call_clobbers;

		if ((insn.kind == UE_INSN_BRANCH || insn.kind == UE_INSN_JUMP) &&
		    in_fn(fn, insn.target)) {
			joined = fn_join(fn, insn.target, &cur);
			if (joined < 0)
				return false;
			if (joined)
				changed = true;
		}
		if (insn.kind == UE_INSN_JUMP || insn.kind == UE_INSN_RETURN ||
		    insn.kind == UE_INSN_STOP)
			reachable = false;
	}
	return changed;
}

int ue_fn_analyse(struct ue_fn *fn, const struct ue_code_env *env,
		  const char *name)
{
	unsigned long offset;
	unsigned int pass;

	memset(fn, 0, offsetof(struct ue_fn, nr_slots));
	fn->env = env;
	fn->name = name;
	fn->start = env->lookup(name);
	if (!fn->start) {
		fn->error = "not in kallsyms";
		return -ENOENT;
	}
	if (!env->bounds(fn->start, &fn->size, &offset) || offset ||
	    !fn->size || fn->size > UE_FN_MAX_SIZE) {
		fn->error = "no bounds";
		return -EINVAL;
	}
	if (!env->read(fn->code, fn->start, fn->size)) {
		fn->error = "code not readable";
		return -EFAULT;
	}
	if (fn_scan(fn))
		return -EINVAL;
	for (pass = 0; pass < UE_FN_MAX_PASSES; pass++)
		if (!fn_pass(fn))
			break;
	if (pass == UE_FN_MAX_PASSES) {
		fn->error = "no fixed point";
		return -EINVAL;
	}
	return fn->error ? -EINVAL : 0;
}

static bool callee_is(const struct ue_fn *fn, unsigned long target,
		      unsigned long callee)
{
	if (target == callee)
		return true;
	/* With CONFIG_DEBUG_LOCK_ALLOC, mutex_lock() is mutex_lock_nested() */
	return callee == fn->env->mutex_lock && fn->env->mutex_lock_nested &&
	       target == fn->env->mutex_lock_nested;
}

/*
 * The address passed as argument @arg to every call of @callee (and of
 * @callee2, if not 0) in @fn: 0 if there is no such call, or if one of them
 * passes something else or a value the code does not determine.
 */
unsigned long ue_fn_call_arg(const struct ue_fn *fn, unsigned long callee,
			     unsigned long callee2, unsigned int arg,
			     const char **why)
{
	unsigned long val = 0;
	bool found = false;
	unsigned int i;

	if (fn->error) {
		*why = fn->error;
		return 0;
	}
	for (i = 0; i < fn->nr_calls; i++) {
		const struct ue_call *c = &fn->calls[i];

		if (!callee_is(fn, c->callee, callee) &&
		    (!callee2 || !callee_is(fn, c->callee, callee2)))
			continue;
		if (!(c->known & BIT(arg))) {
			*why = "argument not determined by the code";
			return 0;
		}
		if (found && c->arg[arg] != val) {
			*why = "calls disagree";
			return 0;
		}
		val = c->arg[arg];
		found = true;
	}
	if (!found)
		*why = "no such call";
	else if (!val)
		*why = "the argument is 0";
	return val;
}

bool ue_fn_uses_addr(const struct ue_fn *fn, unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < fn->nr_addrs; i++)
		if (fn->addrs[i] == addr)
			return true;
	return false;
}

