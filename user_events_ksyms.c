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
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>

#include "user_events_compat.h"
#include "user_events_derive.h"
#include "user_events_ksyms.h"
#include "user_events_ksyms_trace.h"
#include "user_events_ksyms_dyn.h"

struct user_events_ksyms ue_ksyms;

static char *ksyms_test;
module_param(ksyms_test, charp, 0);
MODULE_PARM_DESC(ksyms_test,
		 "For tests only: 'derived' uses the derived addresses of the tracing core's variables even where kallsyms lists them (as without CONFIG_KALLSYMS_ALL); 'fail:<variable>' makes that variable's derivation fail; 'derived,fail:<variable>' both (the load is then refused on every kernel); 'disagree:<variable>' treats the derivation of a variable kallsyms lists as finding another address (the load is then refused). Any other value refuses the load");

/* What symbols shows: how each variable was found */
static char symbols_report[1536];

static int symbols_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", symbols_report);
}

static int symbols_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops symbols_ops = {
	.get = symbols_get,
	.set = symbols_set,
};
module_param_cb(symbols, &symbols_ops, NULL, 0444);
MODULE_PARM_DESC(symbols,
		 "Read-only: where each tracing core variable's address comes from (kallsyms, or derived from what the kernel's functions pass to their callees: Documentation/compat.rst), and whether the derivation agrees with kallsyms");

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

static unsigned long kln_addr;

static unsigned long lookup_fn(const char *name)
{
	return lookup(kln_addr, name);
}

#define KSYM(field) \
	{ #field, offsetof(struct user_events_ksyms, field) }

/* Functions: kallsyms lists them on every kernel */
static const struct {
	const char *name;
	size_t offset;
} required_syms[] = {
	KSYM(tracefs_create_file),
	KSYM(tracefs_remove),
	KSYM(tracing_reset_all_online_cpus),
	KSYM(__find_event_file),
#ifndef UE_HAVE_EXPORTED_ADD_EVENT_CALL
	KSYM(trace_add_event_call),
	KSYM(trace_remove_event_call),
#endif
#ifndef UE_HAVE_FOLL_NOFAULT
	KSYM(follow_page),
#endif
};

/*
 * Variables: kallsyms lists them only with CONFIG_KALLSYMS_ALL. These four
 * are derived on every kernel (user_events_derive.c), in the order of
 * enum ue_derived; where kallsyms has them, kallsyms' address is used and
 * the derivation must agree with it.
 */
static const size_t derived_offsets[UE_DV_COUNT] = {
	[UE_DV_EVENT_MUTEX] = offsetof(struct user_events_ksyms, event_mutex),
	[UE_DV_DYN_EVENT_OPS_MUTEX] =
		offsetof(struct user_events_ksyms, dyn_event_ops_mutex),
	[UE_DV_DYN_EVENT_OPS_LIST] =
		offsetof(struct user_events_ksyms, dyn_event_ops_list),
	[UE_DV_DYN_EVENT_LIST] = offsetof(struct user_events_ksyms, dyn_event_list),
};

static void set_field(size_t offset, unsigned long addr)
{
	memcpy((char *)&ue_ksyms + offset, &addr, sizeof(addr));
}

static __printf(1, 2) void report(const char *fmt, ...)
{
	size_t len = strlen(symbols_report);
	va_list args;

	if (len && len < sizeof(symbols_report) - 1)
		symbols_report[len++] = '\n';
	va_start(args, fmt);
	vsnprintf(symbols_report + len, sizeof(symbols_report) - len, fmt, args);
	va_end(args);
}

/* ksyms_test, parsed: see parse_ksyms_test() */
static bool test_derived;
static const char *test_fail, *test_disagree;

/* The variable named at @p, or NULL */
static const char *derived_name(const char *p)
{
	unsigned int v;

	for (v = 0; v < UE_DV_COUNT; v++)
		if (!strcmp(p, ue_derived_names[v]))
			return ue_derived_names[v];
	return NULL;
}

/*
 * ksyms_test takes exactly "derived", "fail:<variable>",
 * "derived,fail:<variable>" or "disagree:<variable>", <variable> one of
 * ue_derived_names[]: any other value refuses the load, so that a
 * mistyped test never passes for a test of something else.
 */
static int parse_ksyms_test(void)
{
	const char *p = ksyms_test;

	test_derived = false;
	test_fail = NULL;
	test_disagree = NULL;
	if (!p)
		return 0;
	if (!strcmp(p, "derived")) {
		test_derived = true;
		return 0;
	}
	if (str_has_prefix(p, "disagree:")) {
		test_disagree = derived_name(p + strlen("disagree:"));
		if (test_disagree)
			return 0;
	} else {
		if (str_has_prefix(p, "derived,")) {
			test_derived = true;
			p += strlen("derived,");
		}
		if (str_has_prefix(p, "fail:"))
			test_fail = derived_name(p + strlen("fail:"));
		if (test_fail)
			return 0;
	}
	pr_err("ksyms_test=%s: not one of derived, fail:<variable>, derived,fail:<variable>, disagree:<variable> (<variable>: event_mutex, dyn_event_ops_mutex, dyn_event_ops_list or dyn_event_list)\n",
	       ksyms_test);
	test_derived = false;
	test_fail = NULL;
	test_disagree = NULL;
	return -EINVAL;
}

/*
 * Where the core kernel keeps its variables. kallsyms_lookup_name() looks
 * a name up in the core kernel's table first, then in the modules', where a
 * module still in its init lists its data symbols even without
 * CONFIG_KALLSYMS_ALL: a module's own "event_mutex" would be found where
 * the core's table has none. So no address of a variable is used unless it
 * lies inside the core kernel's data, [_sdata, _edata) or
 * [__bss_start, __bss_stop) (the ranges is_kernel_core_data() tests), or,
 * where kallsyms does not list those, the kernel's data segment as the
 * kernel maps it: the vmalloc area (arm64) that holds init_uts_ns, an
 * exported variable of the core kernel that the module loader links.
 */
static struct {
	unsigned long start, end;
} core_data[2];

/* Is [addr, addr + size) inside the core kernel's data? */
static bool in_core_data(unsigned long addr, size_t size)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(core_data); i++)
		if (addr >= core_data[i].start && addr < core_data[i].end &&
		    size <= core_data[i].end - addr)
			return true;
	return false;
}

/* The vmalloc area the kernel maps the segment of @anchor in, if any */
static bool data_segment(unsigned long anchor, unsigned long *start,
			 unsigned long *end)
{
	unsigned long find_vm_area = lookup_fn("find_vm_area");
	struct vm_struct *vm;

	if (!find_vm_area)
		return false;
	vm = (struct vm_struct *)user_events_call((void *)find_vm_area, anchor,
						  0, 0, 0, 0);
	/* The kernel's segments record their physical address, vmalloc() not */
	if (!vm || !vm->phys_addr || !vm->size)
		return false;
	*start = (unsigned long)vm->addr;
	*end = *start + vm->size;
	return true;
}

static int find_core_data(void)
{
	unsigned long anchor = (unsigned long)&init_uts_ns;
	const char *how;
	unsigned int i;

	memset(core_data, 0, sizeof(core_data));
	if (ue_kallsyms_lists_variables()) {
		/* The core's table is searched first and lists them */
		core_data[0].start = lookup_fn("_sdata");
		core_data[0].end = lookup_fn("_edata");
		core_data[1].start = lookup_fn("__bss_start");
		core_data[1].end = lookup_fn("__bss_stop");
		how = "_sdata, _edata, __bss_start, __bss_stop in kallsyms";
	} else {
		data_segment(anchor, &core_data[0].start, &core_data[0].end);
		how = "the vmalloc area of the kernel's data segment";
	}
	for (i = 0; i < ARRAY_SIZE(core_data); i++)
		if (core_data[i].start > core_data[i].end)
			core_data[i].end = 0;
	/* The core's init_uts_ns inside, this module's own data outside */
	if (!in_core_data(anchor, sizeof(init_uts_ns)) ||
	    in_core_data((unsigned long)&ue_ksyms, sizeof(ue_ksyms))) {
		pr_err("cannot bound the core kernel's data (from %s)\n", how);
		memset(core_data, 0, sizeof(core_data));
		return -ENOENT;
	}
	return 0;
}

/* The size of each variable of enum ue_derived */
static const size_t derived_sizes[UE_DV_COUNT] = {
	[UE_DV_EVENT_MUTEX] = sizeof(struct mutex),
	[UE_DV_DYN_EVENT_OPS_MUTEX] = sizeof(struct mutex),
	[UE_DV_DYN_EVENT_OPS_LIST] = sizeof(struct list_head),
	[UE_DV_DYN_EVENT_LIST] = sizeof(struct list_head),
};

/*
 * Variable @v of enum ue_derived where kallsyms gives @ks, in the core
 * kernel's data: set from @ks, unless the derivation @d found another
 * address (-EOPNOTSUPP, the load refused)
 */
static int resolve_derived_kallsyms(const struct ue_derived *d,
				    unsigned int v, unsigned long ks)
{
	const char *name = ue_derived_names[v];

	/* ksyms_test=disagree: as if the derivation differed */
	if (d->addr[v] == ks && name != test_disagree) {
		set_field(derived_offsets[v], ks);
		report("%s: kallsyms, derivation agrees (%s)",
		       name, d->how[v]);
		return 0;
	}
	if (d->addr[v] || name == test_disagree) {
		pr_err("%s: the derivation found another address than kallsyms (%s): not loading\n",
		       name, d->how[v]);
		report("%s: kallsyms, derivation DISAGREES (%s)",
		       name, d->how[v]);
		return -EOPNOTSUPP;
	}
	set_field(derived_offsets[v], ks);
	pr_warn("%s: derivation failed (%s); using kallsyms' address\n",
		name, d->failed[v]);
	report("%s: kallsyms, derivation FAILED (%s)",
	       name, d->failed[v]);
	return 0;
}

/*
 * Variable @v of enum ue_derived where kallsyms gives no usable address:
 * set from the derivation @d, or -EOPNOTSUPP (the load refused) if it
 * found none, or one outside the core kernel's data
 */
static int resolve_derived_only(const struct ue_derived *d, unsigned int v)
{
	const char *name = ue_derived_names[v];

	if (d->addr[v] && !in_core_data(d->addr[v], derived_sizes[v])) {
		pr_err("%s: the derived address is outside the core kernel's data: not loading\n",
		       name);
		report("%s: not found (derived address outside the core kernel's data)",
		       name);
		return -EOPNOTSUPP;
	}
	if (d->addr[v]) {
		set_field(derived_offsets[v], d->addr[v]);
		report("%s: derived (%s)", name, d->how[v]);
		return 0;
	}
	pr_err("cannot locate %s: failed check: %s\n", name, d->failed[v]);
	report("%s: not found (%s)", name, d->failed[v]);
	return -EOPNOTSUPP;
}

/*
 * The four variables of enum ue_derived. Where kallsyms lists them (unless
 * ksyms_test=derived), its addresses are used and the derivation is
 * checked against them: a different address refuses the load, naming the
 * variable; a derivation that failed is reported (symbols, the kernel log)
 * and kallsyms' address used. Elsewhere the derived addresses are used,
 * and a variable that could not be derived refuses the load. An address
 * outside the core kernel's data is never used: from kallsyms it is a
 * module's symbol of the same name, and ignored; derived, it refuses the
 * load.
 */
static int resolve_derived(bool use_kallsyms)
{
	struct ue_derived *d;
	unsigned long ks;
	unsigned int v;
	int ret = 0, err;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	ue_derive(lookup_fn, test_fail, d);

	for (v = 0; v < UE_DV_COUNT; v++) {
		const char *name = ue_derived_names[v];

		ks = use_kallsyms ? lookup(kln_addr, name) : 0;
		if (ks && !in_core_data(ks, derived_sizes[v])) {
			pr_warn("%s: kallsyms gives an address outside the core kernel's data (a module's symbol): not used\n",
				name);
			ks = 0;
		}
		err = ks ? resolve_derived_kallsyms(d, v, ks) :
			   resolve_derived_only(d, v);
		if (err)
			ret = err;
	}
	kfree(d);
	return ret;
}

/*
 * A per-CPU variable of @size bytes at @addr (as kallsyms gives it) lies in
 * the core kernel's static per-CPU area, not in a module's
 */
static bool in_core_percpu(unsigned long addr, size_t size)
{
	unsigned long fn = lookup_fn("is_kernel_percpu_address");
	unsigned long at = (unsigned long)per_cpu_ptr((void __percpu *)addr, 0);

	return fn && user_events_call((void *)fn, at, 0, 0, 0, 0) &&
	       user_events_call((void *)fn, at + size - 1, 0, 0, 0, 0);
}

/*
 * The tracing core's per-CPU staging record, which only the one-copy write
 * path's discard needs (ue_trace_event_discard()). Without it, writes take
 * the staged path (the core's one_copy reads N). An address outside the
 * core kernel's per-CPU data (a module's symbol of the same name) is not
 * used.
 */
static void resolve_staging_record(bool use_kallsyms)
{
	unsigned long ev = 0, cnt = 0;

	if (use_kallsyms) {
		ev = lookup(kln_addr, "trace_buffered_event");
		cnt = lookup(kln_addr, "trace_buffered_event_cnt");
	}
	if (ev && cnt &&
	    (!in_core_percpu(ev, sizeof(struct ring_buffer_event *)) ||
	     !in_core_percpu(cnt, sizeof(int)))) {
		pr_warn("trace_buffered_event: kallsyms gives an address outside the core kernel's per-CPU data (a module's symbol): not used\n");
		ev = 0;
	}
	if (!ev || !cnt) {
		ev = 0;
		cnt = 0;
	}
	ue_ksyms.trace_buffered_event = (struct ring_buffer_event * __percpu *)ev;
	ue_ksyms.trace_buffered_event_cnt = (int __percpu *)cnt;
	report("trace_buffered_event, trace_buffered_event_cnt: %s",
	       ev ? "kallsyms" : "not used, one-copy write path off");
}

int user_events_ksyms_init(void)
{
	bool use_kallsyms;
	unsigned long addr;
	int i, ret;

	ret = parse_ksyms_test();
	if (ret)
		return ret;
	use_kallsyms = !test_derived;

	kln_addr = find_kallsyms_lookup_name();
	if (!kln_addr)
		return -ENOENT;

	for (i = 0; i < ARRAY_SIZE(builtin_user_events_syms); i++) {
		if (lookup(kln_addr, builtin_user_events_syms[i])) {
			pr_err("this kernel already provides user_events (CONFIG_USER_EVENTS); not loading\n");
			return -EEXIST;
		}
	}

	/* Report every missing symbol, not just the first one */
	for (i = 0; i < ARRAY_SIZE(required_syms); i++) {
		addr = lookup(kln_addr, required_syms[i].name);
		if (!addr) {
			pr_err("required kernel symbol %s not found\n",
			       required_syms[i].name);
			ret = -ENOENT;
			continue;
		}
		set_field(required_syms[i].offset, addr);
	}

#ifndef UE_HAVE_EVENTFS
	/* Optional: without them, user_events_dirs.c guards nothing */
	ue_ksyms.event_file_get = (void *)lookup(kln_addr, "event_file_get");
	ue_ksyms.event_file_put = (void *)lookup(kln_addr, "event_file_put");
#endif

	symbols_report[0] = '\0';
	if (!ret)
		ret = find_core_data();
	if (!ret)
		ret = resolve_derived(use_kallsyms);
	if (!ret)
		resolve_staging_record(use_kallsyms);

	if (ret)
		memset(&ue_ksyms, 0, sizeof(ue_ksyms));

	return ret;
}
