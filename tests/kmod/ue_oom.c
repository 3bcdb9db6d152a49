// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/selftests/mm_test.c only: makes allocations that the module
 * named by target (default user_events) makes fail on demand, on kernels
 * without failslab or function error injection. A kretprobe on each
 * allocator entry point that kmalloc() of a constant size and
 * kvmalloc_array() reach (whichever of the names below the running
 * kernel has): its entry handler picks a call whose return address lies
 * in the target module (sprint_symbol() names the module) and whose size
 * is one of sizes (any size if sizes is empty or holds 0), and, if func
 * names one, that lies in that function; its return handler gives the
 * caller NULL instead (the object is freed from a work item).
 *
 * kv selects the kvmalloc entry points (1) or the kmalloc ones (0); times
 * arms that many failures (written last: it arms); failed counts them,
 * seen counts the target's calls that passed the filters.
 * x86-64 only (the return address and arguments are read from pt_regs):
 * elsewhere the module builds but refuses to load.
 */
#include <linux/atomic.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

static char *target = "user_events";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "Module whose allocations fail");
static unsigned int sizes[8];
static int nr_sizes;
module_param_array(sizes, uint, &nr_sizes, 0644);
MODULE_PARM_DESC(sizes, "Sizes that fail (none or 0: any)");
static char func[KSYM_NAME_LEN];
module_param_string(func, func, sizeof(func), 0644);
MODULE_PARM_DESC(func, "Only calls from this function fail (empty: any)");
static bool kv;
module_param(kv, bool, 0644);
MODULE_PARM_DESC(kv, "Fail kvmalloc (1) or kmalloc (0)");
static atomic_t times = ATOMIC_INIT(0);
module_param_named(times, times.counter, int, 0644);
MODULE_PARM_DESC(times, "Failures still to make (arms)");
static atomic_t failed = ATOMIC_INIT(0);
module_param_named(failed, failed.counter, int, 0444);
MODULE_PARM_DESC(failed, "Read-only: failures made");
static atomic_t seen = ATOMIC_INIT(0);
module_param_named(seen, seen.counter, int, 0444);
MODULE_PARM_DESC(seen, "Read-only: target's calls that passed the filters");

struct oom_fn {
	const char *name;
	kretprobe_handler_t entry;	/* which argument is the size */
	bool kv;
};

static int oom_entry_k0(struct kretprobe_instance *ri, struct pt_regs *regs);
static int oom_entry_k2(struct kretprobe_instance *ri, struct pt_regs *regs);
static int oom_entry_v0(struct kretprobe_instance *ri, struct pt_regs *regs);

static const struct oom_fn oom_fns[] = {
	{ "kmalloc_trace", oom_entry_k2, false },		/* 6.1 */
	{ "__kmalloc_cache_noprof", oom_entry_k2, false },	/* 6.12 */
	{ "kmem_cache_alloc_trace", oom_entry_k2, false },	/* 5.10 */
	{ "__kmalloc", oom_entry_k0, false },
	{ "__kmalloc_noprof", oom_entry_k0, false },
	{ "kvmalloc_node", oom_entry_v0, true },		/* 5.10, 6.1 */
	{ "__kvmalloc_node_noprof", oom_entry_v0, true },	/* 6.12 */
};

static struct kretprobe oom_rps[ARRAY_SIZE(oom_fns)];
static bool oom_registered[ARRAY_SIZE(oom_fns)];
static char oom_needle[MODULE_NAME_LEN + 3];

#if defined(CONFIG_X86_64)
static unsigned long oom_arg(struct pt_regs *regs, unsigned int n)
{
	return n == 0 ? regs->di : n == 1 ? regs->si : regs->dx;
}

/* At the entry, the return address is at the top of the stack */
static unsigned long oom_caller(struct pt_regs *regs)
{
	return *(unsigned long *)regs->sp;
}

static void oom_set_null(struct pt_regs *regs)
{
	regs->ax = 0;
}
#else
#define OOM_UNSUPPORTED
static unsigned long oom_arg(struct pt_regs *regs, unsigned int n)
{
	return 0;
}

static unsigned long oom_caller(struct pt_regs *regs)
{
	return 0;
}

static void oom_set_null(struct pt_regs *regs)
{
}
#endif

static bool oom_size_fails(unsigned long size)
{
	int i, n = READ_ONCE(nr_sizes);

	for (i = 0; i < n && i < ARRAY_SIZE(sizes); i++)
		if (!READ_ONCE(sizes[i]) || READ_ONCE(sizes[i]) == size)
			return true;
	return !n;
}

/* Whether "name+0x.../0x... [module]" is in func (if one is set) */
static bool oom_func_matches(const char *sym)
{
	size_t len = strnlen(func, sizeof(func));

	return !len || (!strncmp(sym, func, len) && sym[len] == '+');
}

/* 0 (the return handler runs) for a call that is to fail */
static int oom_check(struct pt_regs *regs, bool is_kv, unsigned int size_arg)
{
	char buf[KSYM_SYMBOL_LEN];

	if (is_kv != READ_ONCE(kv) || atomic_read(&times) <= 0 ||
	    !oom_size_fails(oom_arg(regs, size_arg)))
		return 1;
	sprint_symbol(buf, oom_caller(regs));
	if (!strstr(buf, oom_needle) || !oom_func_matches(buf))
		return 1;
	atomic_inc(&seen);
	return atomic_dec_if_positive(&times) < 0;
}

/* kmalloc entry points: size first, or third after cache and flags */
static int oom_entry_k0(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return oom_check(regs, false, 0);
}

static int oom_entry_k2(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return oom_check(regs, false, 2);
}

/* kvmalloc entry points: size first */
static int oom_entry_v0(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return oom_check(regs, true, 0);
}

/* Objects taken from their callers, freed from a work item */
static LLIST_HEAD(oom_taken);

static void oom_free_work(struct work_struct *work)
{
	struct llist_node *node, *next;

	llist_for_each_safe(node, next, llist_del_all(&oom_taken))
		kvfree(node);
}

static DECLARE_WORK(oom_free, oom_free_work);

/*
 * The object becomes ours and the caller gets NULL. Not freed here: the
 * handler runs with preemption disabled, where kfree() may sleep on
 * PREEMPT_RT and vfree() may anywhere.
 */
static int oom_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	void *obj = (void *)regs_return_value(regs);

	if (ZERO_OR_NULL_PTR(obj)) {
		atomic_inc(&times);	/* not a failure of ours */
		return 0;
	}
	llist_add(obj, &oom_taken);
	schedule_work(&oom_free);
	oom_set_null(regs);
	atomic_inc(&failed);
	return 0;
}

static void oom_unregister(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(oom_rps); i++)
		if (oom_registered[i])
			unregister_kretprobe(&oom_rps[i]);
}

static int __init oom_init(void)
{
	bool have[2] = { false, false };
	unsigned int i;

#ifdef OOM_UNSUPPORTED
	return -EOPNOTSUPP;
#endif
	snprintf(oom_needle, sizeof(oom_needle), "[%s]", target);
	for (i = 0; i < ARRAY_SIZE(oom_fns); i++) {
		oom_rps[i].kp.symbol_name = oom_fns[i].name;
		oom_rps[i].entry_handler = oom_fns[i].entry;
		oom_rps[i].handler = oom_return;
		oom_rps[i].maxactive = 64;
		if (register_kretprobe(&oom_rps[i]))
			continue;
		oom_registered[i] = true;
		have[oom_fns[i].kv] = true;
	}
	if (have[0] && have[1])
		return 0;
	oom_unregister();
	return -ENOENT;
}

static void __exit oom_exit(void)
{
	oom_unregister();
	flush_work(&oom_free);
}

module_init(oom_init);
module_exit(oom_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("user_events tests: make a module's kmalloc or kvmalloc fail on demand");
