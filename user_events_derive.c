// SPDX-License-Identifier: GPL-2.0
/*
 * The tracing core's variables, found without kallsyms (Debian's arm64 6.1
 * and 5.10 lack CONFIG_KALLSYMS_ALL): event_mutex, dyn_event_ops_mutex,
 * dyn_event_ops_list and dyn_event_list, by watching what the kernel's
 * functions of the dynamic_events file, called by this module, pass to
 * mutex_lock() (mutex_lock_nested() with lockdep), mutex_unlock(),
 * seq_list_start() and seq_list_next(). A kprobe on each records the
 * argument of the calls made by this task while one of those functions
 * runs for it (the window), nothing else. Each variable comes from at
 * least two observations that must agree, plus checks of what lies at the
 * address and of what the functions do with it (Documentation/compat.rst
 * has the table). A window that sees no call (kprobes disabled) or more
 * than one value, a disagreement or a failed check leaves the variable
 * underived: the module then refuses to load, naming the variable and
 * the check (user_events_ksyms.c). Nothing is guessed or searched for.
 * The same derivation runs where kallsyms has the variables, and
 * user_events_ksyms.c compares.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "user_events_derive.h"
#include "user_events_ksyms.h"
#include "user_events_ksyms_dyn.h"

const char * const ue_derived_names[UE_DV_COUNT] = {
	[UE_DV_EVENT_MUTEX] = "event_mutex",
	[UE_DV_DYN_EVENT_OPS_MUTEX] = "dyn_event_ops_mutex",
	[UE_DV_DYN_EVENT_OPS_LIST] = "dyn_event_ops_list",
	[UE_DV_DYN_EVENT_LIST] = "dyn_event_list",
};

/* Longest rings walked: the operations, the dynamic events */
#define UE_OPS_MAX 64
#define UE_DYN_EVENTS_MAX 1048576

/* The kernel functions the derivation calls, found by ue_derive() */
static unsigned long (*lookup_fn)(const char *name);
static const char * const kfn_names[] = {
	UE_DYN_OPS_CREATE, "dyn_event_register", "dyn_event_seq_start",
	"dyn_event_seq_next", "dyn_event_seq_stop",
};

static unsigned long kfn[ARRAY_SIZE(kfn_names)];
enum { FN_CREATE, FN_REGISTER, FN_START, FN_NEXT, FN_STOP };

/* Reads the kernel's memory without faulting */
static bool read_kernel(void *dst, unsigned long src, size_t size)
{
	return src && !copy_from_kernel_nofault(dst, (const void *)src, size);
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

/* Observations: argument @arg of the calls of one function, in a window */
struct ue_obs {
	struct kprobe kp;
	unsigned int arg;
	unsigned int hits;
	bool many;			/* more than one value */
	unsigned long val;
};

enum { OBS_LOCK, OBS_UNLOCK, OBS_LIST_START, OBS_LIST_NEXT, OBS_COUNT };

static struct ue_obs obs[OBS_COUNT] = {
	[OBS_LOCK] = { .kp.symbol_name = IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC) ?
		       "mutex_lock_nested" : "mutex_lock" },
	[OBS_UNLOCK] = { .kp.symbol_name = "mutex_unlock" },
	[OBS_LIST_START] = { .kp.symbol_name = "seq_list_start" },
	[OBS_LIST_NEXT] = { .kp.symbol_name = "seq_list_next", .arg = 1 },
};

/* The task whose calls are recorded, while a window is open */
static struct task_struct *obs_task;

/*
 * Runs at every call of the four functions, in every task, while the
 * probes are registered: nothing but the test unless the call is the
 * window's. Calls from interrupts are not the window's.
 */
static int obs_hit(struct kprobe *kp, struct pt_regs *regs)
{
	struct ue_obs *o;
	unsigned long val;

	if (READ_ONCE(obs_task) != current || !in_task())
		return 0;
	o = container_of(kp, struct ue_obs, kp);
	val = regs_get_kernel_argument(regs, o->arg);
	if (o->hits && val != o->val)
		o->many = true;
	o->val = val;
	o->hits++;
	return 0;
}

/* Calls @fn with the window open, what earlier windows saw forgotten */
static unsigned long observe(unsigned long fn, unsigned long a0,
			     unsigned long a1, unsigned long a2)
{
	unsigned long ret;
	unsigned int i;

	for (i = 0; i < OBS_COUNT; i++) {
		obs[i].hits = 0;
		obs[i].many = false;
		obs[i].val = 0;
	}
	WRITE_ONCE(obs_task, current);
	barrier();		/* the handler runs in this task */
	ret = user_events_call((void *)fn, a0, a1, a2, 0, 0);
	barrier();
	WRITE_ONCE(obs_task, NULL);
	return ret;
}

/* Variable @v is the one value that observation @i saw in a call of @fn */
static void from_obs(unsigned int v, unsigned int i, const char *fn)
{
	const struct ue_obs *o = &obs[i];
	const char *why = NULL;
	char check[80];

	if (dv->failed[v][0])
		return;
	snprintf(check, sizeof(check), "%s in %s", o->kp.symbol_name, fn);
	if (!o->hits)
		why = "no call seen (kprobes disabled?)";
	else if (o->many)
		why = "calls with more than one address";
	else if (!o->val)
		why = "a NULL argument";
	else if (dv->addr[v] && dv->addr[v] != o->val)
		why = "another address than the sources before";
	if (why) {
		fail(v, check, why);
		return;
	}
	dv->addr[v] = o->val;
	passed(v, check);
}

static int obs_register(void)
{
	unsigned int i, v;
	char check[64];
	int ret;

	for (i = 0; i < OBS_COUNT; i++) {
		obs[i].kp.pre_handler = obs_hit;
		ret = register_kprobe(&obs[i].kp);
		if (!ret)
			continue;
		snprintf(check, sizeof(check), "kprobe on %s (error %d)",
			 obs[i].kp.symbol_name, ret);
		while (i--)
			unregister_kprobe(&obs[i].kp);
		for (v = 0; v < UE_DV_COUNT; v++)
			fail(v, check, NULL);
		return ret;
	}
	return 0;
}

static void obs_unregister(void)
{
	struct kprobe *kps[OBS_COUNT];
	unsigned int i;

	for (i = 0; i < OBS_COUNT; i++)
		kps[i] = &obs[i].kp;
	unregister_kprobes(kps, OBS_COUNT);	/* one grace period */
}

/* The probe operations: refuse everything, never match */
static int probe_seen;

static int probe_create(UE_DYN_CREATE_PARAMS)
{
	const struct ue_obs *o = &obs[OBS_LOCK];

	/* dyn_event_create() calls it holding the mutex it has just locked */
	if (current == READ_ONCE(obs_task))
		probe_seen = o->hits == 1 && mutex_held_by_current(o->val) ?
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

static void derive_ops_mutex(void)
{
	static const char * const argv[] = { "ue_probe", NULL };
	const unsigned int om = UE_DV_DYN_EVENT_OPS_MUTEX;
	unsigned long a[2];
	const char *why;

	probe_seen = 0;
	ue_dyn_ops_create_args(a, argv, &probe_ops);
	observe(kfn[FN_CREATE], a[0], a[1], 0);
	from_obs(om, OBS_LOCK, UE_DYN_OPS_CREATE);
	from_obs(om, OBS_UNLOCK, UE_DYN_OPS_CREATE);
	if (dv->failed[om][0])
		return;
	if (UE_DYN_OPS_CREATE_CALLS_OPS && probe_seen != 1) {
		fail(om, "held in the create callback",
		     probe_seen ? "not by this task" : "no call back");
		return;
	}
	if (UE_DYN_OPS_CREATE_CALLS_OPS)
		passed(om, "held in the create callback");
	why = check_mutex(dv->addr[om], "dyn_event_ops_mutex");
	if (why)
		fail(om, "structure", why);
	else
		passed(om, "a mutex");
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

/* The ring's entries are operations, one of them a kernel provider's */
static const char *check_ops_ring(void)
{
	struct dyn_event_operations ops;
	unsigned int i, j, known = 0;

	for (i = 0; i < nr_ops_nodes; i++) {
		if (!read_kernel(&ops, ops_nodes[i] -
				 offsetof(struct dyn_event_operations, list),
				 sizeof(ops)) || !ops.create || !ops.show ||
		    !ops.is_busy || !ops.free || !ops.match)
			return "an entry is not operations";
		for (j = 0; j < ARRAY_SIZE(provider_creates); j++)
			known += (unsigned long)ops.create ==
				 lookup_fn(provider_creates[j]);
	}
	return known ? NULL : "no known provider on it";
}

/*
 * dyn_event_register() links the probe last, under dyn_event_ops_mutex
 * (which it must lock): the entry after it is the head. The probe is taken
 * off again at once, under the mutex established before.
 */
static void derive_ops_list(void)
{
	const unsigned int om = UE_DV_DYN_EVENT_OPS_MUTEX;
	const unsigned int ol = UE_DV_DYN_EVENT_OPS_LIST;
	unsigned long head, probe = (unsigned long)&probe_ops.list;
	struct mutex *ops_mutex = (struct mutex *)dv->addr[om];
	const char *why;

	if (dv->failed[om][0]) {
		fail(ol, "needs dyn_event_ops_mutex", NULL);
		return;
	}
	if (observe(kfn[FN_REGISTER], (unsigned long)&probe_ops, 0, 0)) {
		fail(ol, "dyn_event_register()", "refused the probe");
		return;
	}
	from_obs(om, OBS_LOCK, "dyn_event_register");
	from_obs(om, OBS_UNLOCK, "dyn_event_register");
	mutex_lock(ops_mutex);
	head = (unsigned long)probe_ops.list.next;
	why = walk_ring(head, UE_OPS_MAX, keep_ops_node, &nr_ops_nodes);
	if (!why && (!nr_ops_nodes || ops_nodes[nr_ops_nodes - 1] != probe))
		why = "the probe is not its last entry";
	list_del_init(&probe_ops.list);
	mutex_unlock(ops_mutex);
	if (dv->failed[om][0])
		why = "needs dyn_event_ops_mutex";
	if (why) {
		fail(ol, "ring", why);
		return;
	}
	nr_ops_nodes--;			/* the probe is gone */
	dv->addr[ol] = head;
	passed(ol, "after the probe dyn_event_register() linked");
	why = check_ops_ring();
	if (why)
		fail(ol, "entries", why);
	else
		passed(ol, "a ring of the kernel's providers");
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

/*
 * dyn_event_seq_next() on a node of the module's: it steps to what the
 * node points to, and ends (NULL) where that is the list's head
 */
static void check_seq_next(unsigned long next)
{
	const unsigned int dl = UE_DV_DYN_EVENT_LIST;
	struct list_head node = { .next = &node };
	loff_t pos = 0;

	if (observe(next, 0, (unsigned long)&node, (unsigned long)&pos) !=
	    (unsigned long)&node)
		fail(dl, "dyn_event_seq_next()", "did not step to the next node");
	from_obs(dl, OBS_LIST_NEXT, "dyn_event_seq_next");
	if (dv->failed[dl][0])
		return;
	node.next = (struct list_head *)dv->addr[dl];
	if (observe(next, 0, (unsigned long)&node, (unsigned long)&pos))
		fail(dl, "dyn_event_seq_next()", "did not end at the head");
	else
		passed(dl, "dyn_event_seq_next() ends at it");
}

/* Under event_mutex: @first is the first entry of a ring of events */
static void check_event_ring(unsigned long first)
{
	const unsigned int dl = UE_DV_DYN_EVENT_LIST;
	unsigned long head = dv->addr[dl];
	struct list_head lh;
	const char *why;
	unsigned int nr;

	if (dv->failed[UE_DV_DYN_EVENT_OPS_LIST][0])
		fail(dl, "needs dyn_event_ops_list", NULL);
	if (dv->failed[UE_DV_EVENT_MUTEX][0])
		fail(dl, "needs event_mutex", NULL);
	if (dv->failed[dl][0])
		return;
	if (!read_kernel(&lh, head, sizeof(lh)))
		why = "list head not readable";
	else if (first ? first != (unsigned long)lh.next :
		 (unsigned long)lh.next != head)
		why = "not the first entry dyn_event_seq_start() gives";
	else
		why = walk_ring(head, UE_DYN_EVENTS_MAX, check_dyn_event, &nr);
	if (why)
		fail(dl, "ring", why);
	else
		passed(dl, "the first entry and the ring under event_mutex");
}

static void derive_event_mutex_and_list(void)
{
	const unsigned int em = UE_DV_EVENT_MUTEX, dl = UE_DV_DYN_EVENT_LIST;
	unsigned long first;
	const char *why;
	loff_t pos = 0;

	first = observe(kfn[FN_START], 0, (unsigned long)&pos, 0);
	from_obs(em, OBS_LOCK, "dyn_event_seq_start");
	from_obs(dl, OBS_LIST_START, "dyn_event_seq_start");
	if (!dv->failed[em][0] && !mutex_held_by_current(dv->addr[em]))
		fail(em, "held after dyn_event_seq_start()", NULL);
	else if (!dv->failed[em][0])
		passed(em, "held after it");
	check_seq_next(kfn[FN_NEXT]);
	check_event_ring(first);
	observe(kfn[FN_STOP], 0, 0, 0);
	from_obs(em, OBS_UNLOCK, "dyn_event_seq_stop");
	if (dv->failed[em][0])
		return;
	why = check_mutex(dv->addr[em], "event_mutex");
	if (why)
		fail(em, "structure", why);
	else
		passed(em, "a mutex");
}

void ue_derive(unsigned long (*lookup)(const char *name), const char *fail_sym,
	       struct ue_derived *d)
{
	const unsigned int em = UE_DV_EVENT_MUTEX, om = UE_DV_DYN_EVENT_OPS_MUTEX;
	unsigned int v, i;
	bool missing = false;

	memset(d, 0, sizeof(*d));
	dv = d;
	lookup_fn = lookup;
	for (v = 0; v < UE_DV_COUNT; v++)
		if (fail_sym && !strcmp(fail_sym, ue_derived_names[v]))
			fail(v, "forced to fail (ksyms_test)", NULL);
	for (i = 0; i < ARRAY_SIZE(kfn_names); i++) {
		kfn[i] = lookup(kfn_names[i]);
		missing |= !kfn[i];
		for (v = 0; v < UE_DV_COUNT && !kfn[i]; v++)
			fail(v, kfn_names[i], "not in kallsyms");
	}
	if (missing || obs_register())
		goto out;
	derive_ops_mutex();
	derive_ops_list();
	derive_event_mutex_and_list();
	obs_unregister();
	if (!dv->failed[om][0] && dv->addr[om] == dv->addr[em])
		fail(om, "distinct from event_mutex", NULL);
out:
	dv = NULL;
}
