/* SPDX-License-Identifier: GPL-2.0 */
/*
 * unsigned long user_events_call(const void *fn, unsigned long a0, ..., a4)
 *
 * Calls a kernel function that was found through kallsyms. On kernels
 * built with indirect branch tracking (IBT), functions whose address is
 * never taken have their ENDBR sealed at boot, so an indirect call to
 * them would fault. This enters @fn with a return instead: a real call
 * pushes the return address, @fn is pushed above it and "returned to".
 * Returns are not tracked by IBT, and @fn returns here normally.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/nospec-branch.h>
#include <asm/unwind_hints.h>

	.text
SYM_FUNC_START(user_events_call)
	push	%rbp
	mov	%rsp, %rbp
	mov	%rdi, %rax
	mov	%rsi, %rdi
	mov	%rdx, %rsi
	mov	%rcx, %rdx
	mov	%r8, %rcx
	mov	%r9, %r8
	/* No function: return 0 (this is also how objtool sees .Lout) */
	test	%rax, %rax
	jz	.Lout
	ANNOTATE_INTRA_FUNCTION_CALL
	call	.Lenter
.Lout:
	pop	%rbp
	RET
.Lenter:
	push	%rax
	/* The stack now looks like @fn's caller frame */
	UNWIND_HINT_FUNC
	ANNOTATE_UNRET_SAFE
	ret
	int3
SYM_FUNC_END(user_events_call)
