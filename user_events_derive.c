// SPDX-License-Identifier: GPL-2.0
/*
 * The tracing core's variables, found without kallsyms.
 *
 * On kernels built without CONFIG_KALLSYMS_ALL (Debian's arm64 6.1 and
 * 5.10), kallsyms lists functions only, so event_mutex,
 * dyn_event_ops_mutex, dyn_event_ops_list and dyn_event_list cannot be
 * looked up. They are derived here instead, each from at least two
 * independent sources that must agree, and checked against what lies at
 * the address; any disagreement or failed check leaves the variable
 * underived, and the module then refuses to load, naming the variable and
 * the check (user_events_ksyms.c). Nothing is guessed: there is no search
 * over candidates.
 *
 *  1. The code of small functions that kallsyms does list, read through
 *     the architecture's decoder (user_events_derive_arm64.c,
 *     user_events_derive_x86.c) with a data flow analysis of the
 *     registers: "the first argument of every call of mutex_lock() and
 *     mutex_unlock() in dyn_event_seq_stop()" is a value that the
 *     instructions before each call determine on every path to it, or the
 *     analysis fails. A variable is taken from at least two functions,
 *     which must give the same address.
 *  2. What lies at the address: a mutex whose wait list is a consistent
 *     ring and whose owner is empty or a kernel pointer; a list head whose
 *     ring is consistent and whose members are what the list holds.
 *  3. Where the kernel allows it, its own functions, run for the purpose:
 *     dyn_event_seq_start() returns holding event_mutex and the first
 *     entry of dyn_event_list; dyn_event_create() calls back with
 *     dyn_event_ops_mutex held; dyn_event_register() links a probe
 *     operations structure in front of dyn_event_ops_list's head.
 *
 * The same derivation runs on kernels whose kallsyms has the variables,
 * where user_events_ksyms.c compares its answer with kallsyms (and
 * tests/selftests/ksyms_test.c fails on a difference).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "user_events_derive.h"
#include "user_events_ksyms.h"

const char * const ue_derived_names[UE_DV_COUNT] = {
	[UE_DV_EVENT_MUTEX] = "event_mutex",
	[UE_DV_DYN_EVENT_OPS_MUTEX] = "dyn_event_ops_mutex",
	[UE_DV_DYN_EVENT_OPS_LIST] = "dyn_event_ops_list",
	[UE_DV_DYN_EVENT_LIST] = "dyn_event_list",
};

/* Longest rings walked: the operations, the dynamic events */
#define UE_OPS_MAX 64
#define UE_DYN_EVENTS_MAX 1048576

/* The kernel functions the derivation reads or calls */
static struct {
	unsigned long (*lookup)(const char *name);
	unsigned long size_offset;	/* kallsyms_lookup_size_offset */
	unsigned long text_address;	/* kernel_text_address */
	unsigned long mutex_lock;
	unsigned long mutex_lock_nested;	/* mutex_lock() with lockdep */
	unsigned long mutex_unlock;
	unsigned long seq_list_start;
	unsigned long seq_list_next;
} k;

static bool fn_bounds(unsigned long addr, unsigned long *size,
		      unsigned long *offset)
{
	return user_events_call((void *)k.size_offset, addr,
				(unsigned long)size, (unsigned long)offset,
				0, 0) != 0;
}

/* Reads the kernel's memory without faulting */
static bool read_kernel(void *dst, unsigned long src, size_t size)
{
	return src && !copy_from_kernel_nofault(dst, (const void *)src, size);
}

static unsigned long env_lookup(const char *name)
{
	return k.lookup(name);
}

static struct ue_code_env env = {
	.lookup = env_lookup,
	.bounds = fn_bounds,
	.read = read_kernel,
};

/* @addr is the first instruction of a function of the kernel or a module */
static bool is_function_entry(unsigned long addr)
{
	unsigned long size, offset;

	if (!addr || !user_events_call((void *)k.text_address, addr, 0, 0, 0, 0))
		return false;
	return fn_bounds(addr, &size, &offset) && offset == 0;
}

/* Structural checks, reading through copy_from_kernel_nofault() */

/*
 * A list ring from @head: each node's prev points back. @visit (if any)
 * is given each node but the head, in order; its message ends the walk.
 * At most @max nodes besides the head. Sleeps: the callers hold mutexes
 * at most.
 */
static const char *walk_ring(unsigned long head, unsigned int max,
			     const char *(*visit)(unsigned long node,
						  unsigned int index),
			     unsigned int *nr)
{
	struct list_head cur, n;
	unsigned long at = head, next;
	unsigned int count = 0;
	const char *why;

	if (!IS_ALIGNED(head, sizeof(long)) ||
	    !read_kernel(&cur, head, sizeof(cur)))
		return "list head not readable";
	for (;;) {
		next = (unsigned long)cur.next;
		if (!IS_ALIGNED(next, sizeof(long)) ||
		    !read_kernel(&n, next, sizeof(n)))
			return "list entry not readable";
		if ((unsigned long)n.prev != at)
			return "list entry does not point back";
		if (next == head)
			break;
		if (count == max)
			return "list too long";
		why = visit ? visit(next, count) : NULL;
		if (why)
			return why;
		count++;
		at = next;
		cur = n;
		if (!(count % 1024))
			cond_resched();
	}
	*nr = count;
	return NULL;
}

/* Is the mutex at @addr held by the current task? */
static bool mutex_held_by_current(unsigned long addr)
{
	struct mutex m;		/* a copy, never locked */

	if (!read_kernel(&m, addr, sizeof(m)))
		return false;
#ifdef CONFIG_PREEMPT_RT
	return mutex_is_locked(&m);
#else
	return (atomic_long_read(&m.owner) & ~0x07UL) == (unsigned long)current;
#endif
}

/* What lies at @addr is a mutex, of this name when lockdep knows it */
static const char *check_mutex(unsigned long addr, const char *name)
{
	struct mutex m;		/* a copy, never locked */
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	char lname[32];
#endif
	int tries;

	if (!IS_ALIGNED(addr, sizeof(long)))
		return "mutex: not aligned";
	for (tries = 0; tries < 10; tries++) {
		if (!read_kernel(&m, addr, sizeof(m)))
			return "mutex: not readable";
#ifndef CONFIG_PREEMPT_RT
		{
			unsigned long wl = addr + offsetof(struct mutex, wait_list);
			unsigned long owner = atomic_long_read(&m.owner) & ~0x07UL;
			unsigned int nr;

			if (owner && !virt_addr_valid((void *)owner))
				return "mutex: owner is not a kernel pointer";
			/* Waiters come and go under wait_lock: retry */
			if (walk_ring(wl, 1 << 16, NULL, &nr)) {
				cond_resched();
				continue;
			}
		}
#endif
#ifdef CONFIG_DEBUG_MUTEXES
		if (m.magic != (void *)addr)
			return "mutex: debug magic";
#endif
#ifdef CONFIG_DEBUG_LOCK_ALLOC
		if (strncpy_from_kernel_nofault(lname, m.dep_map.name,
						sizeof(lname)) <= 0 ||
		    strcmp(lname, name))
			return "mutex: lockdep name";
#endif
		return NULL;
	}
	return "mutex: wait list not a consistent ring";
}

/* Derivation state */

static struct ue_derived *dv;
static struct ue_fn *fnbuf;

static void fail(unsigned int v, const char *check, const char *why)
{
	if (dv->failed[v][0])
		return;
	snprintf(dv->failed[v], sizeof(dv->failed[v]), "%s%s%s", check,
		 why ? ": " : "", why ?: "");
	dv->addr[v] = 0;
}

static void passed(unsigned int v, const char *check)
{
	size_t len = strlen(dv->how[v]);

	snprintf(dv->how[v] + len, sizeof(dv->how[v]) - len, "%s%s",
		 len ? ", " : "", check);
}

/*
 * Evidence from code: argument @arg of the calls of @callee/@callee2 in
 * the function @name. The first source sets the candidate, every later one
 * must agree.
 */
static void from_code(unsigned int v, const char *name, unsigned long callee,
		      unsigned long callee2, unsigned int arg)
{
	const char *why = NULL;
	unsigned long val;
	char check[64];

	if (dv->failed[v][0])
		return;
	snprintf(check, sizeof(check), "code of %s", name);
	ue_fn_analyse(fnbuf, &env, name);
	val = ue_fn_call_arg(fnbuf, callee, callee2, arg, &why);
	if (!val) {
		fail(v, check, why);
		return;
	}
	if (dv->addr[v] && dv->addr[v] != val) {
		fail(v, check, "a different address than the functions before");
		return;
	}
	dv->addr[v] = val;
	passed(v, name);
}

/* The probe operations: registered for a moment, never matching */
static struct task_struct *probe_task;
static int probe_seen;

static int probe_create(UE_DYN_CREATE_PARAMS)
{
	/* Called by dyn_event_create() with dyn_event_ops_mutex held */
	if (current == probe_task)
		probe_seen = mutex_held_by_current(dv->addr[UE_DV_DYN_EVENT_OPS_MUTEX]) ?
			1 : -1;
	return -ECANCELED;
}

static int probe_show(struct seq_file *m, struct dyn_event *ev)
{
	return 0;
}

static bool probe_is_busy(struct dyn_event *ev)
{
	return true;
}

static int probe_free(struct dyn_event *ev)
{
	return -EBUSY;
}

static bool probe_match(const char *system, const char *event, int argc,
			const char **argv, struct dyn_event *ev)
{
	return false;
}

static struct dyn_event_operations probe_ops = {
	.create = probe_create,
	.show = probe_show,
	.is_busy = probe_is_busy,
	.free = probe_free,
	.match = probe_match,
};

static void derive_mutexes(void)
{
	const unsigned int em = UE_DV_EVENT_MUTEX, om = UE_DV_DYN_EVENT_OPS_MUTEX;
	unsigned long create;
	const char *why;

	from_code(em, "dyn_event_seq_stop", k.mutex_lock, k.mutex_unlock, 0);
	from_code(em, "dyn_event_seq_start", k.mutex_lock, k.mutex_unlock, 0);
	from_code(em, "trace_put_event_file", k.mutex_lock, k.mutex_unlock, 0);
	from_code(om, "dyn_event_register", k.mutex_lock, k.mutex_unlock, 0);
	from_code(om, "create_dyn_event", k.mutex_lock, k.mutex_unlock, 0);

	if (!dv->failed[om][0] && dv->addr[om] == dv->addr[em])
		fail(om, "distinct from event_mutex", NULL);
	if (!dv->failed[em][0]) {
		why = check_mutex(dv->addr[em], "event_mutex");
		if (why)
			fail(em, "structure", why);
		else
			passed(em, "a mutex");
	}
	if (!dv->failed[om][0]) {
		why = check_mutex(dv->addr[om], "dyn_event_ops_mutex");
		if (why)
			fail(om, "structure", why);
		else
			passed(om, "a mutex");
	}
	if (dv->failed[om][0])
		return;

	/* From 5.12 on: dyn_event_create() calls back with it held */
	create = k.lookup("dyn_event_create");
	if (!create)
		return;
	probe_task = current;
	probe_seen = 0;
	user_events_call((void *)create, (unsigned long)"ue_probe",
			 (unsigned long)&probe_ops, 0, 0, 0);
	probe_task = NULL;
	if (probe_seen != 1)
		fail(om, "held in dyn_event_create()",
		     probe_seen ? "not held by the caller" : "no call back");
	else
		passed(om, "held in dyn_event_create()");
}

/* Known dyn_event providers of the kernel, by their create function */
static const char * const provider_creates[] = {
	"trace_kprobe_create", "trace_uprobe_create", "eprobe_dyn_event_create",
	"create_synth_event", "trace_fprobe_create",
};

static unsigned long ops_nodes[UE_OPS_MAX];
static unsigned int nr_ops_nodes;

static const char *keep_ops_node(unsigned long node, unsigned int index)
{
	ops_nodes[index] = node;
	return NULL;
}

/* The operations on the ring are the kernel's providers */
static const char *check_ops_ring(void)
{
	struct dyn_event_operations ops;
	unsigned int i, j, known = 0;
	unsigned long fns[5];

	for (i = 0; i < nr_ops_nodes; i++) {
		if (!read_kernel(&ops, ops_nodes[i] -
				 offsetof(struct dyn_event_operations, list),
				 sizeof(ops)))
			return "operations not readable";
		fns[0] = (unsigned long)ops.create;
		fns[1] = (unsigned long)ops.show;
		fns[2] = (unsigned long)ops.is_busy;
		fns[3] = (unsigned long)ops.free;
		fns[4] = (unsigned long)ops.match;
		for (j = 0; j < ARRAY_SIZE(fns); j++)
			if (!is_function_entry(fns[j]))
				return "an entry's callbacks are not functions";
		for (j = 0; j < ARRAY_SIZE(provider_creates); j++)
			if (fns[0] == k.lookup(provider_creates[j]))
				known++;
	}
	return known ? NULL : "no known provider on it";
}

static void derive_ops_list(void)
{
	const unsigned int ol = UE_DV_DYN_EVENT_OPS_LIST;
	struct mutex *ops_mutex;	/* dyn_event_ops_mutex, established */
	unsigned long reg, head, probe = (unsigned long)&probe_ops.list;
	const char *why;

	if (dv->failed[UE_DV_DYN_EVENT_OPS_MUTEX][0]) {
		fail(ol, "needs dyn_event_ops_mutex", NULL);
		return;
	}
	if (dv->failed[ol][0])
		return;
	ops_mutex = (struct mutex *)dv->addr[UE_DV_DYN_EVENT_OPS_MUTEX];

	/* The kernel's dyn_event_register() links the probe before the head */
	reg = k.lookup("dyn_event_register");
	if (!reg || user_events_call((void *)reg, (unsigned long)&probe_ops,
				     0, 0, 0, 0)) {
		fail(ol, "dyn_event_register()", "refused the probe");
		return;
	}
	mutex_lock(ops_mutex);
	head = (unsigned long)probe_ops.list.next;
	why = walk_ring(head, UE_OPS_MAX, keep_ops_node, &nr_ops_nodes);
	if (!why && (!nr_ops_nodes || ops_nodes[nr_ops_nodes - 1] != probe))
		why = "the probe is not its last entry";
	list_del_init(&probe_ops.list);
	mutex_unlock(ops_mutex);
	if (why) {
		fail(ol, "ring", why);
		return;
	}
	nr_ops_nodes--;			/* the probe is gone */
	dv->addr[ol] = head;
	passed(ol, "dyn_event_register() of a probe");

	/* The code of both functions that use it must compute it */
	ue_fn_analyse(fnbuf, &env, "dyn_event_register");
	if (!ue_fn_uses_addr(fnbuf, head)) {
		fail(ol, "code of dyn_event_register", fnbuf->error ?: "address not used");
		return;
	}
	passed(ol, "dyn_event_register");
	ue_fn_analyse(fnbuf, &env, "create_dyn_event");
	if (!ue_fn_uses_addr(fnbuf, head)) {
		fail(ol, "code of create_dyn_event", fnbuf->error ?: "address not used");
		return;
	}
	passed(ol, "create_dyn_event");

	why = check_ops_ring();
	if (why) {
		fail(ol, "entries", why);
		return;
	}
	passed(ol, "the kernel's providers on it");
}

/* An entry of dyn_event_list has operations of dyn_event_ops_list */
static const char *check_dyn_event(unsigned long node, unsigned int index)
{
	struct dyn_event ev;
	unsigned int i;

	if (!read_kernel(&ev, node - offsetof(struct dyn_event, list),
			 sizeof(ev)))
		return "entry not readable";
	for (i = 0; i < nr_ops_nodes; i++)
		if ((unsigned long)&ev.ops->list == ops_nodes[i])
			return NULL;
	return "an entry's operations are not on dyn_event_ops_list";
}

static void derive_event_list(void)
{
	const unsigned int em = UE_DV_EVENT_MUTEX, dl = UE_DV_DYN_EVENT_LIST;
	unsigned long start, stop, first, head;
	struct list_head lh;
	unsigned int nr;
	const char *why;
	loff_t pos = 0;

	from_code(dl, "dyn_event_seq_start", k.seq_list_start, 0, 0);
	from_code(dl, "dyn_event_seq_next", k.seq_list_next, 0, 1);
	if (dv->failed[UE_DV_DYN_EVENT_OPS_LIST][0])
		fail(dl, "needs dyn_event_ops_list", NULL);
	if (dv->failed[em][0]) {
		fail(dl, "needs event_mutex", NULL);
		return;
	}
	head = dv->addr[dl];

	/* dyn_event_seq_start() returns holding event_mutex */
	start = k.lookup("dyn_event_seq_start");
	stop = k.lookup("dyn_event_seq_stop");
	first = user_events_call((void *)start, 0, (unsigned long)&pos, 0, 0, 0);
	if (!mutex_held_by_current(dv->addr[em])) {
		fail(em, "held after dyn_event_seq_start()", NULL);
		fail(dl, "needs event_mutex", NULL);
	} else {
		passed(em, "held after dyn_event_seq_start()");
	}
	/* ...and gives the first entry, or NULL if there is none */
	if (!dv->failed[dl][0]) {
		if (!read_kernel(&lh, head, sizeof(lh)))
			why = "list head not readable";
		else if (first ? first != (unsigned long)lh.next :
			 (unsigned long)lh.next != head)
			why = "not the first entry dyn_event_seq_start() gives";
		else
			why = walk_ring(head, UE_DYN_EVENTS_MAX, check_dyn_event,
					&nr);
		if (why)
			fail(dl, "ring", why);
		else
			passed(dl, "the first entry and the ring under event_mutex");
	}
	user_events_call((void *)stop, 0, 0, 0, 0, 0);
}

void ue_derive(unsigned long (*lookup)(const char *name), const char *fail_sym,
	       struct ue_derived *d)
{
	unsigned int v;

	memset(d, 0, sizeof(*d));
	dv = d;
	k.lookup = lookup;
	k.size_offset = lookup("kallsyms_lookup_size_offset");
	k.text_address = lookup("kernel_text_address");
	k.mutex_lock = lookup("mutex_lock");
	k.mutex_lock_nested = lookup("mutex_lock_nested");
	k.mutex_unlock = lookup("mutex_unlock");
	k.seq_list_start = lookup("seq_list_start");
	k.seq_list_next = lookup("seq_list_next");
	env.mutex_lock = k.mutex_lock;
	env.mutex_lock_nested = k.mutex_lock_nested;

	for (v = 0; v < UE_DV_COUNT; v++)
		if (fail_sym && !strcmp(fail_sym, ue_derived_names[v]))
			fail(v, "forced to fail (ksyms_test)", NULL);

	fnbuf = kmalloc(sizeof(*fnbuf), GFP_KERNEL);
	if (!fnbuf || !k.size_offset || !k.text_address || !k.mutex_lock ||
	    !k.mutex_unlock || !k.seq_list_start || !k.seq_list_next ||
	    ue_arch_decoder_init(lookup)) {
		for (v = 0; v < UE_DV_COUNT; v++)
			fail(v, "setup", fnbuf ? "a kernel function it reads is missing" :
			     "out of memory");
		goto out;
	}

	derive_mutexes();
	derive_ops_list();
	derive_event_list();
out:
	kfree(fnbuf);
	fnbuf = NULL;
	dv = NULL;
}
