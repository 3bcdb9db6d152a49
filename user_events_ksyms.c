// SPDX-License-Identifier: GPL-2.0
/*
 * Resolution of the kernel internals listed in user_events_ksyms.h.
 *
 * kallsyms_lookup_name() itself is not exported since Linux 5.7. Its
 * address is taken from a kprobe registered on it (and immediately
 * unregistered), then every other symbol is looked up through it. On
 * kernels built with indirect branch tracking the probe sits after the
 * function's ENDBR instruction, which the kernel may have sealed; the
 * entry is the address before it. Every function found here is called
 * through user_events_call(), which on x86 does not depend on ENDBR.
 * arm64 kprobes sit at the function entry itself: nothing to adjust.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/string.h>

#include "user_events_ksyms.h"

struct user_events_ksyms ue_ksyms;

/* Symbols whose presence means the kernel has its own user_events */
static const char * const builtin_user_events_syms[] = {
	"user_event_parse_cmd",
	"user_events_write_core",
};

#define ENDBR64_INSN 0xfa1e0ff3U
#define ENDBR64_POISON 0x001f0f66U
#define ENDBR64_INSN_SIZE 4

/* An ENDBR64 instruction, or what the kernel writes over a sealed one */
static bool is_function_entry_marker(unsigned long addr)
{
	u32 insn;

	if (copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)))
		return false;

	return insn == ENDBR64_INSN || insn == ENDBR64_POISON;
}

static unsigned long find_kallsyms_lookup_name(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long addr;
	int ret;

	ret = register_kprobe(&kp);
	if (ret < 0) {
		pr_err("cannot locate kallsyms_lookup_name (kprobe: %d)\n", ret);
		return 0;
	}
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);

	/* Kprobes skip the ENDBR (sealed or not) at a function's entry */
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT) &&
	    is_function_entry_marker(addr - ENDBR64_INSN_SIZE))
		addr -= ENDBR64_INSN_SIZE;

	return addr;
}

static unsigned long lookup(unsigned long kallsyms_lookup_name,
			    const char *name)
{
	return user_events_call((void *)kallsyms_lookup_name,
				(unsigned long)name, 0, 0, 0, 0);
}

#define KSYM(field, data) \
	{ #field, offsetof(struct user_events_ksyms, field), data }

static const struct {
	const char *name;
	size_t offset;
	bool data;	/* a variable: in kallsyms only with KALLSYMS_ALL */
} required_syms[] = {
	KSYM(tracefs_create_file, false),
	KSYM(tracefs_remove, false),
	KSYM(tracing_reset_all_online_cpus, false),
	KSYM(event_mutex, true),
	KSYM(dyn_event_ops_mutex, true),
	KSYM(dyn_event_ops_list, true),
	KSYM(dyn_event_list, true),
	KSYM(trace_buffered_event, true),
	KSYM(trace_buffered_event_cnt, true),
#ifndef UE_HAVE_EXPORTED_ADD_EVENT_CALL
	KSYM(trace_add_event_call, false),
	KSYM(trace_remove_event_call, false),
#endif
#ifndef UE_HAVE_FOLL_NOFAULT
	KSYM(follow_page, false),
#endif
};

int user_events_ksyms_init(void)
{
	unsigned long kln, addr;
	bool missing_data = false;
	int i, ret = 0;

	kln = find_kallsyms_lookup_name();
	if (!kln)
		return -ENOENT;

	for (i = 0; i < ARRAY_SIZE(builtin_user_events_syms); i++) {
		if (lookup(kln, builtin_user_events_syms[i])) {
			pr_err("this kernel already provides user_events (CONFIG_USER_EVENTS); not loading\n");
			return -EEXIST;
		}
	}

	/* Report every missing symbol, not just the first one */
	for (i = 0; i < ARRAY_SIZE(required_syms); i++) {
		addr = lookup(kln, required_syms[i].name);
		if (!addr) {
			pr_err("required kernel symbol %s not found\n",
			       required_syms[i].name);
			ret = -ENOENT;
			if (required_syms[i].data)
				missing_data = true;
			continue;
		}
		memcpy((char *)&ue_ksyms + required_syms[i].offset, &addr,
		       sizeof(addr));
	}

	/*
	 * Without CONFIG_KALLSYMS_ALL, kallsyms holds functions only: the
	 * tracing core's variables cannot be found (Debian's arm64 6.1 kernels
	 * are built so). Say so, and refuse with an errno that insmod prints
	 * as "Operation not supported" rather than "No such file".
	 */
	if (missing_data && !IS_ENABLED(CONFIG_KALLSYMS_ALL)) {
		pr_err("this kernel is built without CONFIG_KALLSYMS_ALL: the tracing core's variables above cannot be located; not supported\n");
		ret = -EOPNOTSUPP;
	}

	if (ret)
		memset(&ue_ksyms, 0, sizeof(ue_ksyms));

	return ret;
}
