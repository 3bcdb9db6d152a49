// SPDX-License-Identifier: GPL-2.0
/*
 * user_events_call() for arm64: a plain indirect call (see
 * user_events_ksyms.h for what it is for).
 *
 * x86 needs a trampoline because IBT seals the ENDBR of functions whose
 * address the kernel never takes. arm64 has no such sealing, and what
 * could refuse an indirect call here does not apply to the functions
 * called through this: the unexported ones of user_events_ksyms.h
 * (tracefs, trace event files, follow_page...) and those the derivation
 * calls (user_events_derive.c: kallsyms' lookups, kernel_text_address(),
 * dyn_event_*()), all defined without "static":
 *  - BTI (CONFIG_ARM64_BTI_KERNEL) only lets a BLR land on a "BTI c" or
 *    "PACIASP". The compiler puts one at the entry of every function that
 *    is visible outside its file, which all of these are. Debian's kernels
 *    are built with GCC, for which Kconfig does not offer kernel BTI at
 *    all.
 *  - kCFI (CONFIG_CFI_CLANG) checks a hash of the caller's function type
 *    against the callee's; the call below uses one type for functions of
 *    different types, so a kCFI kernel would trap. Refused at build time.
 *  - Pointer authentication (CONFIG_ARM64_PTR_AUTH_KERNEL) signs return
 *    addresses only, inside each function: nothing to do for the caller.
 * The AAPCS64 passes the first eight arguments in x0-x7, so a callee that
 * takes fewer ignores the extra ones, and the caller of a void function
 * ignores x0.
 */

#include <linux/build_bug.h>
#include <linux/kconfig.h>

#include "user_events_ksyms.h"

typedef unsigned long (*ue_call_fn)(unsigned long, unsigned long,
				    unsigned long, unsigned long,
				    unsigned long);

unsigned long user_events_call(const void *fn, unsigned long a0,
			       unsigned long a1, unsigned long a2,
			       unsigned long a3, unsigned long a4)
{
	BUILD_BUG_ON_MSG(IS_ENABLED(CONFIG_CFI_CLANG),
			 "kCFI would trap this call: not supported");

	if (!fn)
		return 0;
	return ((ue_call_fn)fn)(a0, a1, a2, a3, a4);
}
