// SPDX-License-Identifier: GPL-2.0
/*
 * The tracing core's variables, observed in the calls of the kernel's
 * dynamic_events functions: Documentation/compat.rst, "How the four are
 * derived".
 */

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "user_events_derive.h"
#include "user_events_ksyms.h"
#include "user_events_ksyms_dyn.h"

enum { EM = UE_DV_EVENT_MUTEX, OM = UE_DV_DYN_EVENT_OPS_MUTEX,
	OL = UE_DV_DYN_EVENT_OPS_LIST, DL = UE_DV_DYN_EVENT_LIST };

const char * const ue_derived_names[UE_DV_COUNT] = {
	[EM] = "event_mutex", [OM] = "dyn_event_ops_mutex",
	[OL] = "dyn_event_ops_list", [DL] = "dyn_event_list",
};

/* The functions called in windows, then the kernel's providers' create */
static const char * const kfn_names[] = {
	UE_DYN_OPS_CREATE, "dyn_event_register", "dyn_event_seq_start",
	"dyn_event_seq_next", "dyn_event_seq_stop",
	"trace_kprobe_create", "trace_uprobe_create", "eprobe_dyn_event_create",
	"create_synth_event", "trace_fprobe_create",
};

enum { FN_CREATE, FN_REGISTER, FN_START, FN_NEXT, FN_STOP, FN_PROVIDERS };
static unsigned long kfn[ARRAY_SIZE(kfn_names)];
static struct ue_derived *dv;

/* Check @fmt of @v passed, unless @why ("": no reason); first failure stays */
static __printf(3, 4) bool check(unsigned int v, const char *why,
				 const char *fmt, ...)
{
	char *buf = why ? dv->failed[v] : dv->how[v];
	size_t size = why ? sizeof(dv->failed[v]) : sizeof(dv->how[v]);
	size_t len = strlen(buf);
	va_list args;

	if (dv->failed[v][0])
		return false;
	len += scnprintf(buf + len, size - len, "%s", len ? ", " : "");
	va_start(args, fmt);
	len += vscnprintf(buf + len, size - len, fmt, args);
	va_end(args);
	if (why && *why)
		scnprintf(buf + len, size - len, ": %s", why);
	if (why)
		dv->addr[v] = 0;
	return !why;
}

#define fail(v, ...) check(v, "", __VA_ARGS__)

/* Is the variable @dep, which @v needs, established? */
static bool established(unsigned int v, unsigned int dep)
{
	return !dv->failed[dep][0] || fail(v, "needs %s", ue_derived_names[dep]);
}

static bool read_kernel(void *dst, unsigned long src, size_t size)
{
	return src && IS_ALIGNED(src, sizeof(long)) &&
	       !copy_from_kernel_nofault(dst, (const void *)src, size);
}

/* A ring of at most @max entries pointing back, each given to @visit */
static const char *walk_ring(unsigned long head, unsigned int max,
			     const char *(*visit)(unsigned long node))
{
	unsigned long at = head, next;
	unsigned int count = 0;
	struct list_head n;
	const char *why;

	if (!read_kernel(&n, head, sizeof(n)))
		return "list head not readable";
	for (;; at = next) {
		next = (unsigned long)n.next;
		if (!read_kernel(&n, next, sizeof(n)))
			return "list entry not readable";
		if ((unsigned long)n.prev != at)
			return "list entry does not point back";
		if (next == head)
			return NULL;
		why = count == max ? "list too long" : visit ? visit(next) : NULL;
		if (why)
			return why;
		if (!(++count % 1024))
			cond_resched();
	}
}

/* A mutex at @addr (lockdep: named as @v), if @held held by this task */
static const char *check_mutex(unsigned int v, unsigned long addr, bool held)
{
	unsigned long owner __maybe_unused;
	char lname[32] __maybe_unused;
	struct mutex m;		/* a copy, never locked */
	int tries;

	for (tries = 0; tries < 10; tries++, cond_resched()) {
		if (!read_kernel(&m, addr, sizeof(m)))
			return "not aligned or not readable";
#ifdef CONFIG_PREEMPT_RT
		if (held && !mutex_is_locked(&m))
			return "not held";
#else
		owner = atomic_long_read(&m.owner) & ~0x07UL;
		if (held && owner != (unsigned long)current)
			return "not held by this task";
		if (owner && !virt_addr_valid((void *)owner))
			return "owner is not a kernel pointer";
		/* Waiters come and go under wait_lock: retry */
		if (walk_ring(addr + offsetof(struct mutex, wait_list), 1 << 16,
			      NULL))
			continue;
#endif
#ifdef CONFIG_DEBUG_MUTEXES
		if (m.magic != (void *)addr)
			return "debug magic";
#endif
#ifdef CONFIG_DEBUG_LOCK_ALLOC
		if (strncpy_from_kernel_nofault(lname, m.dep_map.name,
						sizeof(lname)) <= 0 ||
		    strcmp(lname, ue_derived_names[v]))
			return "lockdep name";
#endif
		return NULL;
	}
	return "wait list not a consistent ring";
}

/* Observations: what this task passes to four functions in a window */
enum { OBS_LOCK, OBS_UNLOCK, OBS_LIST_START, OBS_LIST_NEXT, OBS_COUNT };
static struct kprobe obs_kp[OBS_COUNT] = {
	[OBS_LOCK].symbol_name = IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC) ?
		"mutex_lock_nested" : "mutex_lock",
	[OBS_UNLOCK].symbol_name = "mutex_unlock",
	[OBS_LIST_START].symbol_name = "seq_list_start",
	[OBS_LIST_NEXT].symbol_name = "seq_list_next",	/* 2nd argument */
};

static struct kprobe *obs_kps[OBS_COUNT];
static struct { unsigned long val; unsigned int hits; bool many; }
	seen[OBS_COUNT];		/* many: more than one value */
static struct task_struct *obs_task;	/* whose calls count, in a window */

/* Every call of the four, in every task: only the window's count */
static int obs_hit(struct kprobe *kp, struct pt_regs *regs)
{
	unsigned int i = kp - obs_kp;
	unsigned long val = regs_get_kernel_argument(regs, i == OBS_LIST_NEXT);

	if (READ_ONCE(obs_task) != current || !in_task())
		return 0;
	seen[i].many |= seen[i].hits && val != seen[i].val;
	seen[i].val = val;
	seen[i].hits++;
	return 0;
}

/* Calls function @f in a window, what earlier windows saw forgotten */
static unsigned long observe(unsigned int f, unsigned long a0,
			     unsigned long a1, unsigned long a2)
{
	unsigned long ret;

	memset(seen, 0, sizeof(seen));
	WRITE_ONCE(obs_task, current);
	barrier();		/* the handler runs in this task */
	ret = user_events_call((void *)kfn[f], a0, a1, a2, 0, 0);
	barrier();
	WRITE_ONCE(obs_task, NULL);
	return ret;
}

/* Variable @v is the one value that observation @i saw in a window of @f */
static void from_obs(unsigned int v, unsigned int i, unsigned int f)
{
	const char *why = !seen[i].hits ? "no call seen (kprobes disabled?)" :
		seen[i].many ? "calls with more than one address" :
		!seen[i].val ? "a NULL argument" :
		dv->addr[v] && dv->addr[v] != seen[i].val ?
		"another address than the sources before" : NULL;

	if (check(v, why, "%s in %s", obs_kp[i].symbol_name, kfn_names[f]))
		dv->addr[v] = seen[i].val;
}

/* The probe operations: refuse everything, match nothing */
static const char *probe_why;	/* of the create callback's check */

static int probe_create(UE_DYN_CREATE_PARAMS)
{
	/* dyn_event_create() calls it holding the mutex it has just locked */
	if (current == READ_ONCE(obs_task))
		probe_why = seen[OBS_LOCK].hits != 1 ? "not one lock" :
			    check_mutex(OM, seen[OBS_LOCK].val, true);
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
	.create = probe_create, .show = probe_show, .is_busy = probe_is_busy,
	.free = probe_free, .match = probe_match,
};

/* The entries of dyn_event_ops_list, and how many are the kernel's */
static unsigned long ops_nodes[64];	/* the longest list walked */
static unsigned int nr_ops_nodes, nr_known;

static const char *visit_ops(unsigned long node)
{
	struct dyn_event_operations ops;
	unsigned int i;

	if (!read_kernel(&ops, node - offsetof(struct dyn_event_operations,
					       list), sizeof(ops)) ||
	    !ops.create || !ops.show || !ops.is_busy || !ops.free || !ops.match)
		return "an entry is not operations";
	for (i = FN_PROVIDERS; i < ARRAY_SIZE(kfn); i++)
		nr_known += (unsigned long)ops.create == kfn[i];
	ops_nodes[nr_ops_nodes++] = node;
	return NULL;
}

/*
 * dyn_event_ops_list: dyn_event_register() links the probe last, so the
 * entry after it is the head; it is taken off again at once, whatever the
 * checks of its window, under the dyn_event_ops_mutex established before.
 */
static void derive_ops(void)
{
	static const char * const argv[] = { "ue_probe", NULL };
	unsigned long a[2], head, probe = (unsigned long)&probe_ops.list;
	const char *why;

	probe_why = "no call back";
	ue_dyn_ops_create_args(a, argv, &probe_ops);
	observe(FN_CREATE, a[0], a[1], 0);
	from_obs(OM, OBS_LOCK, FN_CREATE);
	from_obs(OM, OBS_UNLOCK, FN_CREATE);
	if (UE_DYN_OPS_CREATE_CALLS_OPS)
		check(OM, probe_why, "held in the create callback");
	check(OM, check_mutex(OM, dv->addr[OM], false), "a mutex");
	if (!established(OL, OM))
		return;
	if (observe(FN_REGISTER, (unsigned long)&probe_ops, 0, 0)) {
		fail(OL, "dyn_event_register() refused the probe");
		return;
	}
	mutex_lock((struct mutex *)dv->addr[OM]);
	head = (unsigned long)probe_ops.list.next;
	why = walk_ring(head, ARRAY_SIZE(ops_nodes), visit_ops);
	if (!why && (!nr_ops_nodes || ops_nodes[--nr_ops_nodes] != probe))
		why = "the probe is not its last entry";
	list_del_init(&probe_ops.list);
	mutex_unlock((struct mutex *)dv->addr[OM]);
	from_obs(OM, OBS_LOCK, FN_REGISTER);
	from_obs(OM, OBS_UNLOCK, FN_REGISTER);
	if (established(OL, OM) &&
	    check(OL, why, "after the probe dyn_event_register() linked"))
		dv->addr[OL] = head;
	check(OL, nr_known ? NULL : "no known provider on it",
	      "a ring of the kernel's providers");
}

/* An entry of dyn_event_list has operations on dyn_event_ops_list */
static const char *visit_event(unsigned long node)
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

/* dyn_event_seq_next() of our node steps on, and ends (NULL) at the head */
static void derive_event_mutex_and_list(void)
{
	struct list_head node = { .next = &node }, lh;
	unsigned long first, n = (unsigned long)&node;
	const char *why;
	loff_t pos = 0;

	first = observe(FN_START, 0, (unsigned long)&pos, 0);
	from_obs(EM, OBS_LOCK, FN_START);
	from_obs(DL, OBS_LIST_START, FN_START);
	check(EM, check_mutex(EM, dv->addr[EM], true),
	      "held after dyn_event_seq_start()");
	if (observe(FN_NEXT, 0, n, (unsigned long)&pos) != n)
		fail(DL, "dyn_event_seq_next(): did not step to the next node");
	from_obs(DL, OBS_LIST_NEXT, FN_NEXT);
	node.next = (struct list_head *)dv->addr[DL];
	if (!dv->failed[DL][0])
		check(DL, observe(FN_NEXT, 0, n, (unsigned long)&pos) ?
		      "it did not" : NULL, "dyn_event_seq_next() ends at it");
	/* Under event_mutex: a ring of events, and its first entry */
	if (established(DL, OL) && established(DL, EM)) {
		why = walk_ring(dv->addr[DL], 1 << 20, visit_event);
		if (!why && (!read_kernel(&lh, dv->addr[DL], sizeof(lh)) ||
			     (unsigned long)lh.next != (first ?: dv->addr[DL])))
			why = "not the first entry dyn_event_seq_start() gives";
		check(DL, why, "the first entry and the ring under event_mutex");
	}
	observe(FN_STOP, 0, 0, 0);
	from_obs(EM, OBS_UNLOCK, FN_STOP);
}

void ue_derive(unsigned long (*lookup)(const char *name), const char *fail_sym,
	       struct ue_derived *d)
{
	char why[64] = "";
	unsigned int v, i;
	int ret;

	memset(d, 0, sizeof(*d));
	dv = d;
	for (v = 0; v < UE_DV_COUNT; v++)
		if (fail_sym && !strcmp(fail_sym, ue_derived_names[v]))
			fail(v, "forced to fail (ksyms_test)");
	for (i = 0; i < ARRAY_SIZE(kfn_names); i++) {
		kfn[i] = lookup(kfn_names[i]);
		if (!kfn[i] && i < FN_PROVIDERS && !why[0])
			snprintf(why, sizeof(why), "%s: not in kallsyms",
				 kfn_names[i]);
	}
	for (i = 0; i < OBS_COUNT && !why[0]; i++) {
		obs_kp[i].pre_handler = obs_hit;
		obs_kps[i] = &obs_kp[i];
		ret = register_kprobe(obs_kps[i]);
		if (ret) {
			snprintf(why, sizeof(why), "kprobe on %s (error %d)",
				 obs_kp[i].symbol_name, ret);
			unregister_kprobes(obs_kps, i);
		}
	}
	for (v = 0; v < UE_DV_COUNT && why[0]; v++)
		fail(v, "%s", why);
	if (!why[0]) {
		derive_ops();
		derive_event_mutex_and_list();
		unregister_kprobes(obs_kps, OBS_COUNT);	/* one grace period */
		if (dv->addr[OM] && dv->addr[OM] == dv->addr[EM])
			fail(OM, "distinct from event_mutex");
	}
	dv = NULL;
}
