// SPDX-License-Identifier: GPL-2.0
/*
 * Remote write enablers: the event state written into the registering
 * processes (the DIAG_IOCSREG ABI of Linux 6.4 and later).
 *
 * A process registers a word (4 or 8 bytes) and a bit in it. Whenever the
 * event's enabled state changes, the bit is set or cleared atomically in
 * that process's memory. Enablers belong to the address space (struct
 * user_event_mm), not to the file they were registered through.
 *
 * Objects and references:
 *  - struct user_event_mm (uemm): one per address space that has or had
 *    enablers. It holds mm_count of its mm (mmgrab), never mm_users, so it
 *    keeps the struct alive but not the memory. It holds a reference to
 *    this module (taken at creation, dropped as the very last thing its
 *    free_work does). Its refcnt counts: the table user_event_mms (one,
 *    until it is killed; a killed record stays listed, marked dead, until
 *    its teardown freed the enablers), each queued fork task work of a child (the
 *    parent's record), the queued refill, fault and nudge task works, the
 *    queued teardown, retry and nudge works, and short-lived users
 *    (registration, update).
 *  - struct user_event_enabler: on exactly one uemm's list; holds one
 *    reference of its event (user_event_get() while the registrant, or the
 *    parent's enabler being copied, holds one). It is freed, and that
 *    reference put, only after every lock is dropped: user_event_put() may
 *    take event_mutex.
 *
 * Locks, outermost first: event_mutex (the tracing core's; held by state
 * changes, which call user_event_enablers_update() with it: that only
 * queues the writing of the bits, done after event_mutex is released by
 * the task that changed the state, and which only tries the two below:
 * user_event_mm_update()), then user_event_update_mutex (a writer's
 * fallback when it has no memory), then uemm->lock, then the mm's
 * mmap_lock. uemm->lock covers an address
 * space's enabler list, hash, count and fault list, and every write of its
 * bits: an update, a registration (whose (address, bit) uniqueness check
 * and insertion are one critical section), an unregistration, the fault
 * work and a fork child's resync all read the event state and write the
 * bit under it, so the last writer always wrote the latest state. Nothing
 * faults user memory in with any of these locks held: bits are written
 * with FOLL_NOFAULT, and a page that is not there is faulted in with no
 * lock but the mm's own mmap_lock, by a task of that address space: the
 * registrant itself, a fork child before its first instruction, or, after
 * a state change, the task the fault task work is queued on (the caller
 * if it is one, else the mm's owner, when it returns to user space; if it
 * has not UEMM_NUDGE_DELAY later, interrupted as by a signal), at most
 * MAX_FAULT_ATTEMPTS per enabler and state change. No kernel thread
 * faults user memory in: a wait that user space can hold (FUSE,
 * userfaultfd, NFS, a page lock) holds only a task of the address space
 * whose word it is, which would wait the same on touching it, never a
 * thread that keeps the address space, its enablers, their events or the
 * module alive after that address space's tasks are gone.
 * user_event_mm_mutex makes creating a record and publishing it atomic (one
 * record per mm); the table is changed under user_event_mms_lock and read
 * under RCU.
 *
 * Lifetime of an address space:
 *  - fork: a probe on sched_process_fork (in the parent, preemption
 *    disabled, before the child runs) queues task work on the child with a
 *    reference of the parent's record. That work, before the child's first
 *    instruction in user space, copies the enablers that existed at fork
 *    (numbered by the parent's seq) under RCU with no lock, into a new
 *    record that is not published yet, as many as the child's quota
 *    allows (user_event_mm_fork_trim()); it then fixes the child's bits that
 *    disagree with their event (read from the child's own memory, written
 *    only where they differ), publishes the record and, if any state
 *    changed meanwhile, fixes them again under the record's lock. While
 *    forks are pending, the parent keeps the enablers they may copy on its
 *    list (unregistered ones marked), so the copy can drop RCU at any
 *    enabler it copies. No global lock, O(n) in the parent's enablers.
 *  - exit and exec: no mmu notifier (registering one takes every mapping's
 *    lock and fails on a signal). An address space is dead once mm_users
 *    is 0, or once no task uses it (its owner is NULL: someone else, a
 *    reader of /proc/PID/cmdline, holds mm_users, for as long as a
 *    FUSE server or a userfaultfd lets its copy to user space wait); every
 *    user here takes mmget_not_zero() first. The probes on
 *    sched_process_exit and sched_process_exec, which fire after the
 *    task's mmput(), and our own mmput()s that read mm_users 0 afterwards,
 *    queue one scan that kills the records of dead address spaces: it
 *    unpublishes them and queues their teardown, which frees the enablers
 *    once no fork is pending on them. The exit does not wait for that:
 *    as upstream's, an event that only the address space kept is
 *    deleted shortly after the parent's wait() may have returned (its
 *    files are guarded against a late open: user_events_dirs.c). A
 *    kernel without CONFIG_MEMCG has no owner: there, another holder of
 *    mm_users that puts the last one leaves the record until the next
 *    exit or exec in the system, or until module exit.
 *
 * What pins the module: each record (so rmmod is refused while any
 * address space has enablers). Task work of ours still runs module code
 * after dropping the last record reference (and so possibly the module's),
 * so every queued task work is counted in user_event_tworks, decremented
 * as the callback's last step; module exit waits for the count to drop to
 * zero, then for a tasks-RCU grace period (ue_synchronize_rcu_tasks()),
 * after which no task can be between that decrement and its return.
 * Work items are flushed by destroy_workqueue(), and the probes by
 * tracepoint_synchronize_unregister().
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "include/uapi/linux/user_events.h"

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"
#include "user_events_ksyms_mm.h"

/*
 * Fault-in attempts for one state change of one enabler (as upstream): a
 * word whose page fork() keeps sharing again may need more than one.
 */
#define MAX_FAULT_ATTEMPTS 10

static unsigned int max_enablers = 65536;
module_param(max_enablers, uint, 0444);
MODULE_PARM_DESC(max_enablers,
		 "Maximum number of enable bits one address space (process) may register (default 65536)");

/* Buckets of an address space's enablers, by (address, bit) */
#define ENABLER_HASH_BITS 6

/* Forks an address space can make before its spares are refilled */
#define FORK_SPARES 8

/* Enablers a fork child copies between two chances to reschedule */
#define FORK_COPY_BATCH 256

/* A fork of an address space with enablers, finished in task work */
struct user_event_fork {
	struct callback_head twork;
	struct user_event_mm *parent;	/* referenced */
	struct mm_struct *child;	/* grabbed */
	u64 seq;			/* the parent's sequence at fork */
};

struct user_event_mm {
	struct hlist_node node;		/* user_event_mms, RCU */
	struct mutex lock;		/* see the top of this file */
	struct list_head enablers;	/* RCU, changed under lock */
	/* The same enablers by (address, bit), under lock */
	DECLARE_HASHTABLE(enabler_hash, ENABLER_HASH_BITS);
	struct list_head faults;	/* enablers to fault in, under lock */
	struct mm_struct *mm;		/* grabbed while this exists */
	bool dead;			/* the address space went away */
	bool torn_down;			/* enablers freed, under lock */
	bool dying;			/* killed, first teardown run not ended */
	/* Whose process made it: a settle waits for its own tenant's only */
	struct user_event_payer payer;
	refcount_t refcnt;
	/*
	 * Enablers are numbered as they are added and unregistered, and
	 * forks as they happen, so that a child copies exactly those that
	 * existed at its fork. While forks are in flight, unregistered
	 * enablers (and those of an address space that went away) stay on
	 * the list, marked, until the children have copied theirs.
	 */
	atomic64_t seq;
	atomic_t forks_pending;
	/*
	 * Registrations (and fork merges) in flight: a writer that finds
	 * none and no enabler of its event leaves the record alone
	 * (user_event_mm_may_have())
	 */
	atomic_t adding;
	unsigned int nr_enablers;	/* registered, under lock */
	struct list_head update_link;	/* user_event_update_mutex */
	struct user_event_fork *spares[FORK_SPARES];
	struct callback_head refill_twork;
	unsigned long refill_queued;	/* bit 0: refill_twork is queued */
	struct callback_head fault_twork;
	unsigned long twork_flags;	/* UEMM_TWORK_*, atomic bit ops */
	/* The task fault_twork is queued on, referenced, and since when */
	struct task_struct *twork_task;
	unsigned long twork_since;	/* jiffies */
	spinlock_t twork_lock;		/* covers both */
	struct callback_head nudge_twork;
	/* Tries of a contended update (retry_work), and the nudge */
	struct delayed_work retry_work;
	unsigned int retries;		/* only retry_work's function */
	struct delayed_work nudge_work;
	struct work_struct teardown_work;
	struct work_struct free_work;
	struct rcu_head rcu;
};

/* user_event_mm.twork_flags */
enum {
	UEMM_TWORK_QUEUED,	/* fault_twork is queued */
	UEMM_TWORK_RESYNC,	/* an update could not write: rewrite all */
	UEMM_TWORK_NUDGE,	/* nudge_twork is queued */
};

/*
 * A contended update is tried again from a work item this many times, a
 * tick apart, before a task of the address space is asked; a task asked
 * is interrupted (TWA_SIGNAL) only if its work has not run this long after
 */
#define UEMM_RETRIES 16
#define UEMM_NUDGE_DELAY (HZ / 10)

struct user_event_enabler {
	struct list_head link;
	struct hlist_node hnode;	/* user_event_mm.enabler_hash */
	struct list_head free_link;
	struct list_head fault_link;	/* user_event_mm.faults, or empty */
	struct user_event *event;
	struct user_event_payer payer;	/* charged for it (max_enablers_per_uid) */
	unsigned long uaddr;		/* as registered */
	unsigned long addr;		/* aligned to a long for bit ops */
	u8 ubit;			/* as registered */
	u8 bit;				/* in the long at addr */
	u8 size;
	u8 fault_attempts;		/* under lock */
	u64 add_seq;			/* the address space's, when added */
	u64 del_seq;			/* when unregistered; 0: registered */
	struct rcu_head rcu;
};

struct linux_binprm;

static DEFINE_HASHTABLE(user_event_mms, 10);
static DEFINE_SPINLOCK(user_event_mms_lock);
static DEFINE_MUTEX(user_event_mm_mutex);
/* update_link of every record: user_event_enablers_write_linked() */
static DEFINE_MUTEX(user_event_update_mutex);
static atomic_t user_event_nr_mms = ATOMIC_INIT(0);
static struct workqueue_struct *user_event_mm_wq;
static struct tracepoint *fork_tp, *exit_tp, *exec_tp;

/* State changes so far: a fork child resyncs if one happened meanwhile */
static atomic64_t user_event_changes = ATOMIC64_INIT(0);

/* Task works of ours queued or running (see the top of this file) */
static atomic_t user_event_tworks = ATOMIC_INIT(0);

static void user_event_twork_start(void)
{
	atomic_inc(&user_event_tworks);
}

/* The last thing a task work callback of ours does */
static void user_event_twork_end(void)
{
	if (atomic_dec_and_test(&user_event_tworks))
		wake_up_var(&user_event_tworks);
}

static void user_event_mm_scan_work(struct work_struct *work);
static DECLARE_WORK(user_event_mm_scan, user_event_mm_scan_work);
static void user_event_twork_kick(struct user_event_mm *uemm);
static struct task_struct *user_event_twork_task_take(struct user_event_mm *uemm);

/* Work for a task of the address space: a resync, or bits to fault in */
static bool user_event_mm_has_work(struct user_event_mm *uemm)
{
	if (test_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags))
		return true;
	/* A hint read without the lock: whoever adds a fault kicks again */
	return data_race(!list_empty(&uemm->faults));
}

/*
 * Woken when a killed record's first teardown run ends (uemm->dying):
 * what an exited process held, its events and its quota charges, goes
 * with the teardown, shortly after the exit (see user_event_mm_settle())
 */
static DECLARE_WAIT_QUEUE_HEAD(user_event_mm_settled);

/* Looks for address spaces that went away, soon; any context */
static void user_event_mm_kick_scan(void)
{
	if (atomic_read(&user_event_nr_mms))
		queue_work(user_event_mm_wq, &user_event_mm_scan);
}

/*
 * mmput() of an mm a record follows, noticing if it was the last user.
 * The last put's teardown (__mmput()) runs from a work item, not here:
 * callers hold event_mutex, and exit_aio() there waits for the address
 * space's aio in flight, which a FUSE server can hold for ever.
 */
static void user_event_mm_mmput(struct mm_struct *mm)
{
	mmput_async(mm);
	/* The record's mmgrab() keeps the struct readable */
	if (!atomic_read(&mm->mm_users))
		user_event_mm_kick_scan();
}

static void user_event_mm_get(struct user_event_mm *uemm)
{
	refcount_inc(&uemm->refcnt);
}

static void user_event_mm_put(struct user_event_mm *uemm)
{
	if (refcount_dec_and_test(&uemm->refcnt))
		queue_work(user_event_mm_wq, &uemm->free_work);
}

/*
 * The live record of @mm, under RCU. An mm has one record at most: a dead
 * record's mm has no user left, so no new record can be made for it.
 */
static struct user_event_mm *user_event_mm_find(struct mm_struct *mm)
{
	struct user_event_mm *uemm;

	hash_for_each_possible_rcu(user_event_mms, uemm, node,
				   (unsigned long)mm)
		if (uemm->mm == mm && !READ_ONCE(uemm->dead))
			return uemm;

	return NULL;
}

/* The live record of @mm with a reference taken, or NULL */
static struct user_event_mm *user_event_mm_lookup_get(struct mm_struct *mm)
{
	struct user_event_mm *uemm;

	rcu_read_lock();
	uemm = user_event_mm_find(mm);
	if (uemm && !refcount_inc_not_zero(&uemm->refcnt))
		uemm = NULL;
	rcu_read_unlock();
	return uemm;
}

/*
 * Unpublishes an address space; its enablers are freed by a work item.
 * Returns whether this call did it (only one does). Any context but NMI.
 * The record stays in the table, marked dead (lookups skip it), until its
 * teardown has freed the enablers.
 */
static bool user_event_mm_kill(struct user_event_mm *uemm)
{
	bool killed = false;

	spin_lock(&user_event_mms_lock);
	if (!uemm->dead) {
		WRITE_ONCE(uemm->dead, true);
		atomic_dec(&user_event_nr_mms);
		WRITE_ONCE(uemm->dying, true);
		killed = true;
	}
	spin_unlock(&user_event_mms_lock);

	/* The table's reference goes with the teardown (or now, if queued) */
	if (killed && !queue_work(user_event_mm_wq, &uemm->teardown_work))
		user_event_mm_put(uemm);
	return killed;
}

/*
 * Kills the records of address spaces whose last user is gone, and hands
 * the work a task left behind (it exited or exec'd with a resync or
 * faults still due) to a task that still uses the address space.
 */
static void user_event_mm_scan_work(struct work_struct *work)
{
	struct user_event_mm *uemm;
	int bkt;

	rcu_read_lock();
	hash_for_each_rcu(user_event_mms, bkt, uemm, node) {
		/* The reference keeps the mm grabbed while it is read */
		if (READ_ONCE(uemm->dead) ||
		    !refcount_inc_not_zero(&uemm->refcnt))
			continue;
		if (!atomic_read(&uemm->mm->mm_users) ||
		    ue_mm_has_no_task(uemm->mm))
			user_event_mm_kill(uemm);
		else if (user_event_mm_has_work(uemm))
			/* A task of it may have left with the work queued */
			user_event_twork_kick(uemm);
		user_event_mm_put(uemm);
	}
	rcu_read_unlock();
}

#define UEMM_SETTLE_MAX 32

/*
 * Whose records a settle of @me waits for: its tenant's. Root's tenancy
 * is root alone: the uids of a user namespace that root made (a
 * container's, each a host uid of its own) have root as their tenant,
 * but their exits must not delay root's errors either (red team of the
 * settle: 0.7-1.2 s on 6.1 and 6.12).
 */
static bool user_event_mm_same_tenant(const struct user_event_payer *maker,
				      const struct user_event_payer *me)
{
	if (!uid_eq(maker->tenant, me->tenant))
		return false;
	return !uid_eq(me->tenant, GLOBAL_ROOT_UID) ||
	       uid_eq(maker->uid, me->uid);
}

static bool user_event_mm_settled_all(struct user_event_mm **snap, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (READ_ONCE(snap[i]->dying))
			return false;
	return true;
}

/*
 * For a registration or deletion that failed on a name in use, a quota or
 * an event still held: an exit does not wait for its address space's
 * teardown, so a process that just exited may still hold them. Kills the
 * records of address spaces that went away (as the scan the exit queued
 * will) and waits, killably and up to a second, for the first teardown
 * run of those killed now that the caller's own tenant made (at most
 * UEMM_SETTLE_MAX): records killed later, other tenants' records (root
 * is a tenant of its own: user_event_mm_same_tenant()) and children of a
 * fork in flight do not
 * lengthen the wait. Red teams of 3ddb695 and 3772afa: a tenant that kept
 * the global count above 0 (a fork child held back), then one whose
 * records' first teardown runs were slow (2,048 events each to delete),
 * made every other user's failing registration or deletion wait about a
 * second, root's included. Returns whether there were any; the caller
 * tries once more anyway. The wait is the failing caller's, only on that
 * error path. No lock may be held.
 */
bool user_event_mm_settle(void)
{
	struct user_event_mm *snap[UEMM_SETTLE_MAX], *uemm;
	struct user_event_payer me;
	int n = 0, bkt, i;

	might_sleep();

	user_event_mm_scan_work(NULL);
	user_event_payer_current(&me);
	rcu_read_lock();
	hash_for_each_rcu(user_event_mms, bkt, uemm, node) {
		if (n == UEMM_SETTLE_MAX)
			break;
		if (READ_ONCE(uemm->dying) &&
		    user_event_mm_same_tenant(&uemm->payer, &me) &&
		    refcount_inc_not_zero(&uemm->refcnt))
			snap[n++] = uemm;
	}
	rcu_read_unlock();
	if (!n)
		return false;

	wait_event_killable_timeout(user_event_mm_settled,
				    user_event_mm_settled_all(snap, n), HZ);
	for (i = 0; i < n; i++)
		user_event_mm_put(snap[i]);
	return true;
}

/* Frees an enabler that is on no list; no lock may be held */
static void user_event_enabler_free(struct user_event_enabler *enabler)
{
	user_event_uncharge(&enabler->payer, UE_QUOTA_ENABLERS, 1);
	user_event_put(enabler->event);
	kfree_rcu(enabler, rcu);
}

/*
 * Moves to @gone the enablers no fork in flight may still copy: the
 * unregistered ones, or all of them once the address space went away.
 */
static void user_event_mm_reap(struct user_event_mm *uemm,
			       struct list_head *gone)
{
	struct user_event_enabler *enabler, *next;

	lockdep_assert_held(&uemm->lock);

	list_for_each_entry_safe(enabler, next, &uemm->enablers, link) {
		if (!enabler->del_seq && !READ_ONCE(uemm->dead))
			continue;
		list_del_rcu(&enabler->link);
		hash_del(&enabler->hnode);
		list_del_init(&enabler->fault_link);
		list_add(&enabler->free_link, gone);
	}
}

static void user_event_enablers_free(struct list_head *gone)
{
	struct user_event_enabler *enabler, *next;

	list_for_each_entry_safe(enabler, next, gone, free_link)
		user_event_enabler_free(enabler);
}

/* Takes a dead record out of the table (once); any context but NMI */
static void user_event_mm_unhash(struct user_event_mm *uemm)
{
	spin_lock(&user_event_mms_lock);
	if (!hlist_unhashed(&uemm->node))
		hash_del_rcu(&uemm->node);
	spin_unlock(&user_event_mms_lock);
}

static void user_event_mm_teardown_work(struct work_struct *work)
{
	struct user_event_mm *uemm = container_of(work, struct user_event_mm,
						  teardown_work);
	LIST_HEAD(gone);

	/*
	 * Children still to copy from it keep the enablers; the last one
	 * queues this again. Every run drops the reference its queuer gave
	 * (the table's, or the last child's).
	 */
	bool reaped = false;

	mutex_lock(&uemm->lock);
	if (!uemm->torn_down && !atomic_read(&uemm->forks_pending)) {
		uemm->torn_down = true;
		user_event_mm_reap(uemm, &gone);
		reaped = true;
	}
	mutex_unlock(&uemm->lock);

	user_event_enablers_free(&gone);
	if (reaped)
		user_event_mm_unhash(uemm);
	/*
	 * The first run after the kill ends the count, reaped or not: with
	 * forks in flight the children hold the enablers (a settle does not
	 * wait for them: when they run is not the teardown's to say)
	 */
	if (READ_ONCE(uemm->dying)) {
		WRITE_ONCE(uemm->dying, false);
		wake_up_all(&user_event_mm_settled);
	}
	user_event_mm_put(uemm);
}

static void user_event_mm_free_work(struct work_struct *work)
{
	struct user_event_mm *uemm = container_of(work, struct user_event_mm,
						  free_work);
	int i;

	/* In the table still if no teardown ever freed its enablers */
	user_event_mm_unhash(uemm);
	for (i = 0; i < FORK_SPARES; i++)
		kfree(uemm->spares[i]);
	mmdrop(uemm->mm);
	kfree_rcu(uemm, rcu);
	/* destroy_workqueue() at module exit waits for this to return */
	module_put(THIS_MODULE);
}

static void user_event_mm_fault_twork(struct callback_head *twork);
static void user_event_mm_nudge_twork(struct callback_head *twork);
static void user_event_mm_nudge_work(struct work_struct *work);
static void user_event_mm_retry_work(struct work_struct *work);
static void user_event_mm_resync(struct user_event_mm *uemm);

static struct user_event_mm *user_event_mm_alloc(struct mm_struct *mm)
{
	struct user_event_mm *uemm;

	uemm = kzalloc(sizeof(*uemm), GFP_KERNEL_ACCOUNT);
	if (!uemm)
		return NULL;

	/* Enablers are module state: keep the code around until freed */
	__module_get(THIS_MODULE);
	mutex_init(&uemm->lock);
	INIT_LIST_HEAD(&uemm->enablers);
	hash_init(uemm->enabler_hash);
	INIT_LIST_HEAD(&uemm->faults);
	INIT_LIST_HEAD(&uemm->update_link);
	init_task_work(&uemm->fault_twork, user_event_mm_fault_twork);
	init_task_work(&uemm->nudge_twork, user_event_mm_nudge_twork);
	spin_lock_init(&uemm->twork_lock);
	INIT_DELAYED_WORK(&uemm->retry_work, user_event_mm_retry_work);
	INIT_DELAYED_WORK(&uemm->nudge_work, user_event_mm_nudge_work);
	INIT_WORK(&uemm->teardown_work, user_event_mm_teardown_work);
	INIT_WORK(&uemm->free_work, user_event_mm_free_work);
	refcount_set(&uemm->refcnt, 1);
	mmgrab(mm);
	uemm->mm = mm;
	/* Made in a task of @mm: the registrant, or a fork child */
	user_event_payer_current(&uemm->payer);
	return uemm;
}

/*
 * Publishes @uemm as the record of its mm, taking a reference for the
 * table; the caller's stays. Returns the record already there instead
 * (referenced for the caller) if there is one; user_event_mm_mutex held.
 */
static struct user_event_mm *user_event_mm_publish(struct user_event_mm *uemm)
{
	struct user_event_mm *old;

	lockdep_assert_held(&user_event_mm_mutex);

	old = user_event_mm_lookup_get(uemm->mm);
	if (old)
		return old;

	user_event_mm_get(uemm);
	atomic_inc(&user_event_nr_mms);
	spin_lock(&user_event_mms_lock);
	hash_add_rcu(user_event_mms, &uemm->node, (unsigned long)uemm->mm);
	spin_unlock(&user_event_mms_lock);
	/*
	 * Pairs with the barrier in user_event_enablers_update(): either an
	 * update sees this record, or the state it changed is seen here.
	 */
	smp_mb();
	return uemm;
}

/* Sets memory aside for the forks to come; process context */
static void user_event_mm_refill(struct user_event_mm *uemm)
{
	struct user_event_fork *fork;
	int i;

	for (i = 0; i < FORK_SPARES; i++) {
		if (READ_ONCE(uemm->spares[i]))
			continue;
		fork = kzalloc(sizeof(*fork), GFP_KERNEL_ACCOUNT);
		if (!fork)
			return;
		if (cmpxchg(&uemm->spares[i], NULL, fork))
			kfree(fork);
	}
}

/* Drops a record that was never published (or lost its publication) */
static void user_event_mm_discard(struct user_event_mm *uemm)
{
	user_event_mm_put(uemm);
}

/*
 * The record of the caller's address space, created if there is none
 * yet, with a reference for the caller.
 */
static struct user_event_mm *user_event_mm_current(void)
{
	struct user_event_mm *uemm, *found;
	struct mm_struct *mm = current->mm;

	found = user_event_mm_lookup_get(mm);
	if (found)
		goto out;

	uemm = user_event_mm_alloc(mm);
	if (!uemm)
		return NULL;

	mutex_lock(&user_event_mm_mutex);
	found = user_event_mm_publish(uemm);
	mutex_unlock(&user_event_mm_mutex);
	if (found != uemm)
		user_event_mm_discard(uemm);
out:
	user_event_mm_refill(found);
	return found;
}

/*
 * Sets or clears the enabler's bit without faulting. Returns -EFAULT when
 * the page is not there (or not writable) right now.
 */
/*
 * Makes the page of @addr writable without waiting for anything: after
 * fork() the word's page is shared copy-on-write (the parent's too), and
 * FOLL_NOFAULT cannot write it. Breaking that sharing needs neither user
 * space nor I/O, so it is done here, with the mmap lock held, as a fault
 * that gives up instead of waiting (FAULT_FLAG_RETRY_NOWAIT keeps the
 * lock): a userfaultfd or a page lock makes it fail at once, and the
 * fault task work then faults the page in with no lock held. Only anonymous
 * private memory (heap, stack, anonymous mmap): in a file mapping, even a
 * private one, a page that is not there is read from the file, and
 * RETRY_NOWAIT does not keep a file system (FUSE) from waiting for its
 * server there. Words in other memory get the bit from the fault task
 * work.
 * Without this, a bit written right after a fork would reach the word
 * only from the work item, after the system call that changed the state
 * returned.
 */
static bool user_event_make_writable(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma;
	vm_fault_t ret;

	mmap_assert_locked(mm);

	vma = ue_vma_lookup(mm, addr);
	if (!vma || !vma_is_anonymous(vma) || !(vma->vm_flags & VM_WRITE) ||
	    (vma->vm_flags & (VM_SHARED | VM_IO | VM_PFNMAP)))
		return false;

	ret = handle_mm_fault(vma, addr,
			      FAULT_FLAG_WRITE | FAULT_FLAG_REMOTE |
			      FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_RETRY_NOWAIT,
			      NULL);

	return !(ret & (VM_FAULT_ERROR | VM_FAULT_RETRY));
}

static int user_event_enabler_write(struct mm_struct *mm,
				    struct user_event_enabler *enabler,
				    bool enabled)
{
	struct page *page;
	unsigned long *word;
	void *kaddr;

	mmap_assert_locked(mm);

	if (ue_pin_user_page_nofault(mm, enabler->addr, &page) &&
	    (!user_event_make_writable(mm, enabler->addr) ||
	     ue_pin_user_page_nofault(mm, enabler->addr, &page)))
		return -EFAULT;

	kaddr = ue_kmap_local_page(page);
	word = kaddr + offset_in_page(enabler->addr);
	if (enabled)
		set_bit(enabler->bit, word);
	else
		clear_bit(enabler->bit, word);
	ue_kunmap_local(kaddr);

	ue_unpin_user_page_dirty(page);
	return 0;
}

static unsigned long user_event_enabler_key(unsigned long uaddr, u8 ubit)
{
	/* Words are aligned to their size: the low bits are free */
	return uaddr ^ ubit;
}

static struct user_event_enabler *
user_event_enabler_find(struct user_event_mm *uemm, unsigned long uaddr,
			u8 ubit)
{
	struct user_event_enabler *enabler;

	lockdep_assert_held(&uemm->lock);

	hash_for_each_possible(uemm->enabler_hash, enabler, hnode,
			       user_event_enabler_key(uaddr, ubit))
		if (enabler->uaddr == uaddr && enabler->ubit == ubit &&
		    !enabler->del_seq)
			return enabler;

	return NULL;
}

/* Puts @enabler on the lists of @uemm */
static void user_event_enabler_add(struct user_event_mm *uemm,
				   struct user_event_enabler *enabler)
{
	lockdep_assert_held(&uemm->lock);

	enabler->add_seq = atomic64_inc_return(&uemm->seq);
	enabler->del_seq = 0;
	INIT_LIST_HEAD(&enabler->fault_link);
	uemm->nr_enablers++;
	list_add_tail_rcu(&enabler->link, &uemm->enablers);
	hash_add(uemm->enabler_hash, &enabler->hnode,
		 user_event_enabler_key(enabler->uaddr, enabler->ubit));
}

/*
 * Faults the page in for write, with no lock of ours held. Returns 0 when
 * it is there now, -EINTR for a fatal signal, else -EFAULT.
 */
static int user_event_fault_in(struct mm_struct *mm, unsigned long uaddr)
{
	bool unlocked = false;
	int ret;

	mmap_read_lock(mm);
	ret = fixup_user_fault(mm, uaddr, FAULT_FLAG_WRITE | FAULT_FLAG_REMOTE,
			       &unlocked);
	mmap_read_unlock(mm);

	if (ret == -EINTR || ret == -ERESTARTSYS)
		return -EINTR;
	return ret ? -EFAULT : 0;
}

/*
 * Has a task of the address space do its work (faults, a resync): the
 * caller, when it is one, else the mm's owner, when it next returns to
 * user space (TWA_RESUME: no system call of its is cut short). A task
 * asleep would leave the bits stale for the address space's other
 * threads: if the work has not run UEMM_NUDGE_DELAY later, the task is
 * interrupted as by a signal after all (user_event_mm_nudge_work()).
 * Nothing happens if no task can take it now (none found, or it is
 * exiting): the work stays marked, and is done or handed over again by
 * the next update that gets the locks (it does a due resync itself), the
 * next registration or unregistration (they do it themselves), or the
 * next exit or exec of a task of the address space
 * (user_event_mm_scan_work()). Any context but NMI and hard interrupts;
 * no lock needed.
 */
static void user_event_twork_kick(struct user_event_mm *uemm)
{
	struct task_struct *task;

	if (test_and_set_bit(UEMM_TWORK_QUEUED, &uemm->twork_flags))
		return;

	if (current->mm == uemm->mm) {
		task = current;
		get_task_struct(task);
	} else {
		task = ue_mm_owner_get(uemm->mm);
	}

	user_event_mm_get(uemm);
	user_event_twork_start();
	/* The callback puts the task; until then the nudge may find it */
	spin_lock(&uemm->twork_lock);
	uemm->twork_task = task;
	uemm->twork_since = jiffies;
	spin_unlock(&uemm->twork_lock);
	if (!task || task_work_add(task, &uemm->fault_twork, TWA_RESUME)) {
		task = user_event_twork_task_take(uemm);
		if (task)
			put_task_struct(task);
		user_event_twork_end();
		clear_bit(UEMM_TWORK_QUEUED, &uemm->twork_flags);
		user_event_mm_put(uemm);	/* not the last: ours is held */
		return;
	}

	user_event_mm_get(uemm);
	if (!queue_delayed_work(user_event_mm_wq, &uemm->nudge_work,
				UEMM_NUDGE_DELAY))
		user_event_mm_put(uemm);	/* not the last: ours is held */
}

/* Takes the task the fault work is queued on (NULL if it ran), referenced */
static struct task_struct *user_event_twork_task_take(struct user_event_mm *uemm)
{
	struct task_struct *task;

	spin_lock(&uemm->twork_lock);
	task = uemm->twork_task;
	uemm->twork_task = NULL;
	spin_unlock(&uemm->twork_lock);
	return task;
}

/* Does nothing: its only job was to have the task run its task work */
static void user_event_mm_nudge_twork(struct callback_head *twork)
{
	struct user_event_mm *uemm = container_of(twork, struct user_event_mm,
						  nudge_twork);

	clear_bit(UEMM_TWORK_NUDGE, &uemm->twork_flags);
	user_event_mm_put(uemm);
	user_event_twork_end();
}

/*
 * The fault work queued UEMM_NUDGE_DELAY ago has not run: its task has
 * not returned to user space since (asleep in a system call, say), so it
 * is interrupted as by a signal, which runs it. The one case where a task
 * gets EINTR with no signal sent (Documentation/security.rst, open issue
 * 5): a word that needed a fault or an address space contended for
 * longer than the retries, with its task asleep.
 */
static void user_event_mm_nudge_work(struct work_struct *work)
{
	struct user_event_mm *uemm = container_of(to_delayed_work(work),
						  struct user_event_mm,
						  nudge_work);
	struct task_struct *task;
	long left;

	spin_lock(&uemm->twork_lock);
	task = uemm->twork_task;
	left = (long)(uemm->twork_since + UEMM_NUDGE_DELAY - jiffies);
	if (task)
		get_task_struct(task);
	spin_unlock(&uemm->twork_lock);

	/*
	 * This timer was set for an earlier work, one that ran: the work
	 * queued since gets its own delay (red team of the nudge: a task
	 * interrupted 0-20 ms after its work was queued, toggles 20-60 ms
	 * apart)
	 */
	if (task && left > 0) {
		put_task_struct(task);
		task = NULL;
		if (queue_delayed_work(user_event_mm_wq, &uemm->nudge_work,
				       left))
			return;		/* it has our reference */
	}
	if (task && !test_and_set_bit(UEMM_TWORK_NUDGE, &uemm->twork_flags)) {
		user_event_mm_get(uemm);
		user_event_twork_start();
		if (task_work_add(task, &uemm->nudge_twork, TWA_SIGNAL)) {
			user_event_twork_end();
			clear_bit(UEMM_TWORK_NUDGE, &uemm->twork_flags);
			user_event_mm_put(uemm);	/* ours is held */
		}
	}
	if (task)
		put_task_struct(task);
	user_event_mm_put(uemm);
}

/*
 * Hands a bit that could not be written to a task of its address space,
 * which faults the page in as if it had touched it itself.
 */
static void user_event_fault_add(struct user_event_mm *uemm,
				 struct user_event_enabler *enabler)
{
	lockdep_assert_held(&uemm->lock);

	/* A new state change: a new budget of attempts */
	enabler->fault_attempts = 0;
	if (list_empty(&enabler->fault_link))
		list_add_tail(&enabler->fault_link, &uemm->faults);

	user_event_twork_kick(uemm);
}

/*
 * Writes the bits of the faulting enablers whose word is in the page at
 * @page_addr, now that it was faulted in (@ok) or not. Those written, out
 * of attempts, or not faulted in leave the list.
 */
static void user_event_mm_fault_done(struct user_event_mm *uemm,
				     unsigned long page_addr, bool ok)
{
	struct user_event_enabler *enabler, *next;
	struct mm_struct *mm = uemm->mm;

	lockdep_assert_held(&uemm->lock);

	mmap_read_lock(mm);
	list_for_each_entry_safe(enabler, next, &uemm->faults, fault_link) {
		if ((enabler->addr & PAGE_MASK) != page_addr)
			continue;
		if (ok && user_event_enabler_write(mm, enabler,
						   user_event_status(enabler->event)) &&
		    ++enabler->fault_attempts < MAX_FAULT_ATTEMPTS)
			continue;
		list_del_init(&enabler->fault_link);
	}
	mmap_read_unlock(mm);
}

/*
 * The work of a task of the address space (see user_event_mm_fault_twork()):
 * a due resync, then, with @faults, the faults. current must be in @uemm's
 * mm or it does nothing; no lock held. A resync never waits for a fault
 * (bits that need one join the faults); faulting pages in may wait for
 * whatever holds them (FUSE, a userfaultfd), so only the task work does
 * it, not a registration (a userfaultfd handler thread that registers an
 * event must not wait for a fault only it can resolve).
 */
static void user_event_mm_do_work(struct user_event_mm *uemm, bool faults)
{
	struct user_event_enabler *enabler;
	unsigned long addr;
	bool ok;

	if (current->mm == uemm->mm && !READ_ONCE(uemm->dead) &&
	    !fatal_signal_pending(current) &&
	    test_and_clear_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags)) {
		mutex_lock(&uemm->lock);
		user_event_mm_resync(uemm);
		mutex_unlock(&uemm->lock);
	}
	while (faults && current->mm == uemm->mm && !READ_ONCE(uemm->dead) &&
	       !fatal_signal_pending(current)) {
		mutex_lock(&uemm->lock);
		enabler = list_first_entry_or_null(&uemm->faults,
						   struct user_event_enabler,
						   fault_link);
		addr = enabler ? enabler->addr : 0;
		mutex_unlock(&uemm->lock);
		if (!enabler)
			break;

		ok = !user_event_fault_in(uemm->mm, addr);

		mutex_lock(&uemm->lock);
		user_event_mm_fault_done(uemm, addr & PAGE_MASK, ok);
		mutex_unlock(&uemm->lock);
		cond_resched();
	}
}

/*
 * Task work of a task of the address space (see user_event_twork_kick()):
 * faults in the pages of its enablers that could not be written, one
 * page at a time, with no lock of ours held, and writes their bits after
 * each. No kernel thread ever waits for such a fault: a file system or a
 * userfaultfd that holds it holds the address space's own task, the one
 * that would wait on touching the word itself, and nobody else. A task
 * that is being killed, exiting (its task work runs after exit_mm()) or
 * has another address space (exec) lets the faults go.
 */
static void user_event_mm_fault_twork(struct callback_head *twork)
{
	struct user_event_mm *uemm = container_of(twork, struct user_event_mm,
						  fault_twork);

	struct task_struct *task = user_event_twork_task_take(uemm);

	/* Queued on this task: ours is not the last reference */
	if (task)
		put_task_struct(task);
	clear_bit(UEMM_TWORK_QUEUED, &uemm->twork_flags);
	user_event_mm_do_work(uemm, true);

	/*
	 * A task that left the address space (exit, exec) hands what is
	 * left to the mm's owner, if another task still uses it. One that
	 * still uses it but is dying must not queue itself again (its task
	 * work would run for ever): its exit hands over instead, through
	 * user_event_mm_scan_work().
	 */
	if (current->mm != uemm->mm && user_event_mm_has_work(uemm))
		user_event_twork_kick(uemm);

	user_event_mm_put(uemm);
	user_event_twork_end();
}

/*
 * From a registration or unregistration, a task of the address space with
 * no lock held: the due resync now. Faults stay with the task work already
 * queued for them; not queued on the caller either, which may be the
 * userfaultfd handler the fault waits for.
 */
static void user_event_mm_work_here(struct user_event_mm *uemm)
{
	if (test_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags))
		user_event_mm_do_work(uemm, false);
}

/*
 * Whether @uemm may hold an enabler of @user: a look without its lock, so
 * that a writer never takes the lock of an address space that did not
 * register the event. Writers walk every record; two at once met at the
 * lock of an address space with many enablers of other events, and the
 * one that found it taken handed that address space's whole rewrite to
 * its own task: one tenant toggling its own events from two processes
 * kept another's process rewriting its bits at 75-100 % of a CPU,
 * interrupted its epoll_wait() with EINTR, and made root's enable of that
 * process's event return before its bits were set; and a tenant's writer
 * slowed on purpose (SCHED_IDLE beside its own CPU hogs) held the other's
 * lock as long as it liked (issue 30, red teams). A registration in flight
 * counts as "may": it reads the event's state after announcing itself
 * (full barriers on both sides, with the state change's in
 * user_event_enablers_update()), so either it reads the new state or this
 * sees it; one that is done has its enabler on the list (release, then
 * acquire). A resync due is left to the address space's task, kicked
 * when it became due (or to the exit and exec probes' scan).
 */
static bool user_event_mm_may_have(struct user_event_mm *uemm,
				   const struct user_event *user)
{
	struct user_event_enabler *enabler;
	bool found = false;

	if (atomic_read_acquire(&uemm->adding))
		return true;

	rcu_read_lock();
	list_for_each_entry_rcu(enabler, &uemm->enablers, link) {
		if (enabler->event == user) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/* Around a registration's or a fork merge's reading of event states */
static void user_event_mm_adding_begin(struct user_event_mm *uemm)
{
	atomic_inc(&uemm->adding);
	smp_mb__after_atomic();	/* pairs with user_event_enablers_update() */
}

static void user_event_mm_adding_end(struct user_event_mm *uemm)
{
	/* The enablers added are on the list before the count drops */
	smp_mb__before_atomic();
	atomic_dec(&uemm->adding);
}

/*
 * Writes the state of @user's event into the bits of one address space
 * (every event's, if a resync is due), if it gets the locks at once;
 * returns false if not. Never under event_mutex (see
 * user_event_enablers_update()), but in the context of whoever changed
 * the state (root's write to "enable", a perf open or close), or of the
 * retry work, which must never wait for something the address space's
 * owner controls: its mmap_lock can be held for ever by a thread of its
 * own (a /proc/self/mem read of a page whose FUSE server never answers,
 * with a writer queued behind it), and its record's lock by a thread of
 * its own waiting for that mmap_lock. Each bit is written with its
 * event's state as read under the record's lock, not the state of the
 * change that asked for this: writers of one address space are ordered
 * by that lock, and each change is followed by a writer that reads the
 * state after it, so the last write is always of the latest state.
 * @user is only compared, never dereferenced: it may be gone.
 */
static bool user_event_mm_try_write(struct user_event_mm *uemm,
				    const struct user_event *user)
{
	struct user_event_enabler *enabler;
	unsigned int n = 0;
	bool resync;

	if (!mutex_trylock(&uemm->lock))
		return false;
	if (!mmap_read_trylock(uemm->mm)) {
		mutex_unlock(&uemm->lock);
		return false;
	}
	/* A resync that an earlier update deferred is done here if still due */
	resync = test_and_clear_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags);
	list_for_each_entry(enabler, &uemm->enablers, link) {
		if (enabler->del_seq || (!resync && enabler->event != user))
			continue;
		if (user_event_enabler_write(uemm->mm, enabler,
					     user_event_status(enabler->event)))
			user_event_fault_add(uemm, enabler);
		/* No spinlock held: the mmap read lock and a mutex */
		if (++n % FORK_COPY_BATCH == 0)
			cond_resched();
	}
	mmap_read_unlock(uemm->mm);
	mutex_unlock(&uemm->lock);
	return true;
}

/*
 * A state change's writing of one address space's bits. If either lock
 * is taken, all its bits are rewritten later from the events' state: by
 * the retry work, which only tries the locks too (a thread of the address
 * space that holds one for ever stalls nobody but itself), then by a task
 * of the address space (user_event_twork_kick()).
 */
static void user_event_mm_update(struct user_event_mm *uemm,
				 const struct user_event *user)
{
	if (!user_event_mm_may_have(uemm, user) ||
	    user_event_mm_try_write(uemm, user))
		return;

	set_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags);
	user_event_mm_get(uemm);
	if (!queue_delayed_work(user_event_mm_wq, &uemm->retry_work, 1))
		user_event_mm_put(uemm);	/* not the last: ours is held */
}

/*
 * The resync a contended update left due, tried UEMM_RETRIES times a
 * tick apart, then handed to a task of the address space. Each queued
 * run holds a reference of the record.
 */
static void user_event_mm_retry_work(struct work_struct *work)
{
	struct user_event_mm *uemm = container_of(to_delayed_work(work),
						  struct user_event_mm,
						  retry_work);
	bool again = false;

	if (!READ_ONCE(uemm->dead) && mmget_not_zero(uemm->mm)) {
		if (test_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags) &&
		    !user_event_mm_try_write(uemm, NULL)) {
			again = ++uemm->retries < UEMM_RETRIES;
			if (!again)
				user_event_twork_kick(uemm);
		}
		if (!again)
			uemm->retries = 0;
		user_event_mm_mmput(uemm->mm);
	}
	if (!again || !queue_delayed_work(user_event_mm_wq, &uemm->retry_work,
					  1))
		user_event_mm_put(uemm);
}

/* One address space's part of user_event_enablers_write() */
static void user_event_mm_update_put(struct user_event_mm *uemm,
				     const struct user_event *user)
{
	if (!READ_ONCE(uemm->dead) && mmget_not_zero(uemm->mm)) {
		user_event_mm_update(uemm, user);
		user_event_mm_mmput(uemm->mm);
	}
	user_event_mm_put(uemm);
}

/*
 * Without memory for an array: one writer at a time, through the
 * records' update_link (user_event_update_mutex).
 */
static void user_event_enablers_write_linked(const struct user_event *user)
{
	struct user_event_mm *uemm, *next;
	LIST_HEAD(mms);
	int bkt;

	mutex_lock(&user_event_update_mutex);
	rcu_read_lock();
	hash_for_each_rcu(user_event_mms, bkt, uemm, node)
		if (refcount_inc_not_zero(&uemm->refcnt))
			list_add_tail(&uemm->update_link, &mms);
	rcu_read_unlock();

	list_for_each_entry_safe(uemm, next, &mms, update_link) {
		list_del_init(&uemm->update_link);
		user_event_mm_update_put(uemm, user);
	}
	mutex_unlock(&user_event_update_mutex);
}

/*
 * Writes @user's state into every address space that registered it.
 * Writers of several state changes run at once, with no lock in common:
 * each takes its own array of referenced records from the table (under
 * RCU), then writes them one by one with no lock of ours but the records'
 * (tried), and only those of records that may hold an enabler of @user
 * (user_event_mm_may_have()).
 */
static void user_event_enablers_write(const struct user_event *user)
{
	unsigned int cap = atomic_read(&user_event_nr_mms) + 8, n, i;
	struct user_event_mm **mms, *uemm;
	bool full;
	int bkt;

again:
	mms = kvmalloc_array(cap, sizeof(*mms), GFP_KERNEL | __GFP_NOWARN);
	if (!mms) {
		user_event_enablers_write_linked(user);
		return;
	}
	n = 0;
	full = false;
	rcu_read_lock();
	hash_for_each_rcu(user_event_mms, bkt, uemm, node) {
		if (READ_ONCE(uemm->dead))
			continue;
		if (n == cap) {
			full = true;
			break;
		}
		if (refcount_inc_not_zero(&uemm->refcnt))
			mms[n++] = uemm;
	}
	rcu_read_unlock();

	if (full) {
		/* Records were published meanwhile: a bigger array */
		for (i = 0; i < n; i++)
			user_event_mm_put(mms[i]);
		kvfree(mms);
		cap *= 2;
		goto again;
	}

	for (i = 0; i < n; i++)
		user_event_mm_update_put(mms[i], user);
	kvfree(mms);
}

/*
 * The writing of one state change's bits, after event_mutex is released:
 * task work of the task that changed the state (it runs before that task
 * returns to user space: the bits are set when its write to "enable" or
 * its perf_event_open() returns), or a work item for a kernel thread or
 * an exiting task that takes no more task work.
 */
struct user_event_flush {
	union {
		struct callback_head twork;
		struct work_struct work;
	};
	const struct user_event *user;	/* compared only: may be gone */
};

/* Writes the bits a flush was queued for, and frees it */
static void user_event_flush_run(struct user_event_flush *flush)
{
	user_event_enablers_write(flush->user);
	kfree(flush);
}

static void user_event_flush_twork(struct callback_head *twork)
{
	user_event_flush_run(container_of(twork, struct user_event_flush,
					  twork));
	user_event_twork_end();
}

static void user_event_flush_work(struct work_struct *work)
{
	user_event_flush_run(container_of(work, struct user_event_flush,
					  work));
}

/*
 * Called under event_mutex whenever a probe attaches or detaches, after
 * the event's new state was published. The bits are written after
 * event_mutex is released (user_event_flush): holding it for a time that
 * grows with the enablers one tenant registered would stall every
 * tracing operation of root's (issue 30: 1,048,576 bits held it for 3.75
 * to 4.5 s). Here only a count and a queued struct: O(1) in the number of
 * enablers. If the struct cannot be allocated, the bits are written here,
 * as before.
 */
void user_event_enablers_update(struct user_event *user)
{
	struct user_event_flush *flush;

	ue_lockdep_assert_event_mutex();

	/* Full barrier: pairs with the one in user_event_mm_publish() */
	atomic64_inc_return(&user_event_changes);
	if (!atomic_read(&user_event_nr_mms))
		return;

	flush = kmalloc(sizeof(*flush), GFP_KERNEL | __GFP_NOWARN);
	if (!flush) {
		user_event_enablers_write(user);
		return;
	}
	flush->user = user;

	if (!(current->flags & PF_KTHREAD)) {
		init_task_work(&flush->twork, user_event_flush_twork);
		user_event_twork_start();
		if (!task_work_add(current, &flush->twork, TWA_RESUME))
			return;
		user_event_twork_end();
	}
	INIT_WORK(&flush->work, user_event_flush_work);
	queue_work(user_event_mm_wq, &flush->work);
}

/*
 * A quick look, before an event is created for it, whether the calling
 * process has the (address, bit) already. user_event_enabler_create()
 * checks again, atomically with the insertion.
 */
bool user_event_enabler_exists(unsigned long uaddr, u8 ubit)
{
	struct user_event_mm *uemm;
	bool found = false;

	uemm = user_event_mm_lookup_get(current->mm);
	if (!uemm)
		return false;

	mutex_lock(&uemm->lock);
	found = user_event_enabler_find(uemm, uaddr, ubit);
	mutex_unlock(&uemm->lock);

	user_event_mm_put(uemm);
	return found;
}

/*
 * A new enabler of @user at the caller's (address, bit) of @reg, to be
 * charged to the caller; on no list yet. NULL without memory.
 */
static struct user_event_enabler *
user_event_enabler_alloc(struct user_event *user,
			 const struct user_write_reg *reg)
{
	struct user_event_enabler *enabler;
	unsigned long offset;

	enabler = kzalloc(sizeof(*enabler), GFP_KERNEL_ACCOUNT);
	if (!enabler)
		return NULL;

	enabler->uaddr = reg->enable_addr;
	enabler->ubit = reg->enable_bit;
	enabler->size = reg->enable_size;
	enabler->addr = ALIGN_DOWN(enabler->uaddr, sizeof(long));
	offset = enabler->uaddr - enabler->addr;
#ifdef __BIG_ENDIAN
	offset = sizeof(long) - enabler->size - offset;
#endif
	enabler->bit = enabler->ubit + offset * BITS_PER_BYTE;
	enabler->event = user;
	user_event_payer_current(&enabler->payer);
	return enabler;
}

/*
 * One attempt at writing @enabler's bit and adding it to @uemm, the
 * caller's record, under its lock: -EFAULT if the word's page must be
 * faulted in first, -EADDRINUSE or -EMFILE if it may not be added.
 */
static int user_event_enabler_insert(struct user_event_mm *uemm,
				     struct user_event_enabler *enabler)
{
	struct user_event *user = enabler->event;
	struct mm_struct *mm = uemm->mm;
	int ret;

	user_event_mm_adding_begin(uemm);
	mutex_lock(&uemm->lock);
	/* One (address, bit) per address space, whatever the event */
	if (user_event_enabler_find(uemm, enabler->uaddr, enabler->ubit)) {
		ret = -EADDRINUSE;
	} else if (uemm->nr_enablers >= max_enablers) {
		ret = -EMFILE;
	} else {
		mmap_read_lock(mm);
		ret = user_event_enabler_write(mm, enabler,
					       user_event_status(user));
		mmap_read_unlock(mm);
		if (!ret) {
			/* Legal: the caller holds a reference */
			user_event_get(user);
			user_event_enabler_add(uemm, enabler);
		}
	}
	mutex_unlock(&uemm->lock);
	user_event_mm_adding_end(uemm);
	return ret;
}

/*
 * Adds an enabler for @user in the calling process and writes the current
 * state into it. The bit must be writable now (it is faulted in here, in
 * the caller's own context, with no lock of ours held), otherwise the
 * registration fails. The caller holds a reference of @user and no lock.
 */
int user_event_enabler_create(struct user_event *user,
			      const struct user_write_reg *reg)
{
	struct user_event_enabler *enabler;
	struct user_event_mm *uemm;
	int attempt, ret;

	might_sleep();

	enabler = user_event_enabler_alloc(user, reg);
	if (!enabler)
		return -ENOMEM;

	uemm = user_event_mm_current();
	if (!uemm) {
		kfree(enabler);
		return -ENOMEM;
	}

	ret = user_event_charge(&enabler->payer, UE_QUOTA_ENABLERS, 1, false);
	if (ret) {
		kfree(enabler);
		user_event_mm_put(uemm);
		return ret;
	}

	for (attempt = 0; attempt < MAX_FAULT_ATTEMPTS; attempt++) {
		ret = user_event_enabler_insert(uemm, enabler);
		if (ret != -EFAULT)
			break;
		ret = user_event_fault_in(uemm->mm, enabler->uaddr);
		if (ret)
			break;
		ret = -EFAULT;
	}

	if (ret) {
		user_event_uncharge(&enabler->payer, UE_QUOTA_ENABLERS, 1);
		kfree(enabler);
	}

	/*
	 * A resync left due is done here, by a task of the address space,
	 * even when the work is queued on another (a stopped owner)
	 */
	user_event_mm_work_here(uemm);
	user_event_mm_put(uemm);
	return ret;
}

/*
 * Takes the caller's enabler of (address, bit) off @uemm's lists (or
 * marks it, if a fork in flight may still copy it: *@keep) and clears its
 * bit, under the record's lock. Returns the enabler, a copy of it in
 * @word and the clear's result in *@ret; NULL if there is none.
 */
static struct user_event_enabler *
user_event_enabler_unlink(struct user_event_mm *uemm,
			  const struct user_write_unreg *unreg,
			  struct user_event_enabler *word, bool *keep,
			  int *ret)
{
	struct user_event_enabler *enabler;

	mutex_lock(&uemm->lock);
	enabler = user_event_enabler_find(uemm, unreg->disable_addr,
					  unreg->disable_bit);
	if (enabler) {
		/*
		 * A child forked before now, that has not copied its
		 * enablers yet, must still find this one: then it stays,
		 * marked, until the last such child is done.
		 */
		enabler->del_seq = atomic64_inc_return(&uemm->seq);
		uemm->nr_enablers--;
		list_del_init(&enabler->fault_link);
		*keep = atomic_read(&uemm->forks_pending);
		if (!*keep) {
			list_del_rcu(&enabler->link);
			hash_del(&enabler->hnode);
		}
		*word = *enabler;
		mmap_read_lock(uemm->mm);
		*ret = user_event_enabler_write(uemm->mm, word, false);
		mmap_read_unlock(uemm->mm);
	}
	mutex_unlock(&uemm->lock);
	return enabler;
}

/*
 * Clears the bit of an unregistered enabler (@word, a copy) whose page
 * was not there, faulting it in; unless it was registered again
 * meanwhile: the bit is then the new one's. Returns 0 or -EFAULT.
 */
static int user_event_enabler_clear_late(struct user_event_mm *uemm,
					 struct user_event_enabler *word)
{
	int attempt, ret = -EFAULT;

	for (attempt = 1; ret == -EFAULT && attempt < MAX_FAULT_ATTEMPTS;
	     attempt++) {
		ret = user_event_fault_in(uemm->mm, word->uaddr);
		if (ret)
			break;
		mutex_lock(&uemm->lock);
		if (user_event_enabler_find(uemm, word->uaddr, word->ubit)) {
			ret = 0;
		} else {
			mmap_read_lock(uemm->mm);
			ret = user_event_enabler_write(uemm->mm, word, false);
			mmap_read_unlock(uemm->mm);
		}
		mutex_unlock(&uemm->lock);
	}
	return ret;
}

/*
 * Removes the caller's enabler of (address, bit) and clears the bit. As
 * upstream, the enabler is gone even when the bit cannot be cleared (its
 * page was unmapped or made read-only): then the result is -EFAULT.
 */
int user_event_enabler_remove(const struct user_write_unreg *unreg)
{
	struct user_event_enabler *enabler, word;
	struct user_event_mm *uemm;
	bool keep = false;
	int ret = 0;

	uemm = user_event_mm_lookup_get(current->mm);
	if (!uemm)
		return -ENOENT;

	enabler = user_event_enabler_unlink(uemm, unreg, &word, &keep, &ret);
	if (!enabler) {
		user_event_mm_put(uemm);
		return -ENOENT;
	}

	/* No longer updated: clear the bit even if it must fault in */
	if (ret == -EFAULT)
		ret = user_event_enabler_clear_late(uemm, &word);

	if (!keep)
		user_event_enabler_free(enabler);
	user_event_mm_work_here(uemm);
	user_event_mm_put(uemm);
	return ret;
}

/*
 * True when the enabler's bit already reads @enabled in the caller's own
 * memory: read without a fault, a pin or a copy on write.
 */
static bool user_event_enabler_reads(struct user_event_mm *uemm,
				     struct user_event_enabler *enabler,
				     bool enabled)
{
	unsigned long word;

	if (current->mm != uemm->mm ||
	    copy_from_user_nofault(&word, (void __user *)enabler->addr,
				   sizeof(word)))
		return false;

	return test_bit(enabler->bit, &word) == enabled;
}

/*
 * Makes every bit of a fork child agree with its event: a state change
 * written to the parent after dup_mmap() copied its memory is not in the
 * child's copy. Words that are right already are only read, in the
 * child's own context; the others are written (or handed to the fault
 * work). Under the record's lock, which orders it with updates.
 */
static void user_event_mm_resync(struct user_event_mm *uemm)
{
	struct user_event_enabler *enabler;
	unsigned int n = 0;
	bool enabled;

	lockdep_assert_held(&uemm->lock);

	list_for_each_entry(enabler, &uemm->enablers, link) {
		if (enabler->del_seq)
			continue;
		if (++n % FORK_COPY_BATCH == 0)
			cond_resched();
		enabled = user_event_status(enabler->event);
		if (user_event_enabler_reads(uemm, enabler, enabled))
			continue;
		mmap_read_lock(uemm->mm);
		if (user_event_enabler_write(uemm->mm, enabler, enabled))
			user_event_fault_add(uemm, enabler);
		mmap_read_unlock(uemm->mm);
	}
}

/* Did the parent have @enabler when the child was forked at @seq? */
static bool user_event_enabler_at_fork(struct user_event_enabler *enabler,
				       u64 seq)
{
	return enabler->add_seq < seq &&
	       (!enabler->del_seq || enabler->del_seq > seq);
}

/*
 * Copies into @copies the enablers @parent had at the fork numbered @seq,
 * with no lock: under RCU, dropped only at an enabler this fork copies,
 * which stays on the parent's list while the fork is pending (so its next
 * pointer is valid when RCU is taken again). Returns how many.
 */
static unsigned int
user_event_mm_fork_snapshot(struct user_event_mm *parent, u64 seq,
			    const struct user_event_payer *payer,
			    struct list_head *copies)
{
	struct user_event_enabler *enabler, *copy;
	unsigned int n = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(enabler, &parent->enablers, link) {
		if (!user_event_enabler_at_fork(enabler, seq))
			continue;
		if (n >= max_enablers) {
			pr_warn_ratelimited("max_enablers reached copying enablers at fork\n");
			break;
		}
		copy = kmalloc(sizeof(*copy), GFP_NOWAIT | __GFP_NOWARN |
			       __GFP_ACCOUNT);
		if (!copy || (n % FORK_COPY_BATCH == 0 && need_resched())) {
			rcu_read_unlock();
			if (!copy)
				copy = kmalloc(sizeof(*copy),
					       GFP_KERNEL_ACCOUNT);
			cond_resched();
			rcu_read_lock();
			if (!copy) {
				pr_warn_ratelimited("out of memory copying enablers at fork\n");
				break;
			}
		}
		memset(copy, 0, sizeof(*copy));
		copy->uaddr = enabler->uaddr;
		copy->addr = enabler->addr;
		copy->ubit = enabler->ubit;
		copy->bit = enabler->bit;
		copy->size = enabler->size;
		copy->payer = *payer;
		/* Legal: the parent's enabler holds one, and stays */
		user_event_get(enabler->event);
		copy->event = enabler->event;
		list_add_tail(&copy->free_link, copies);
		n++;
	}
	rcu_read_unlock();

	return n;
}

/*
 * Drops the copies past the first @keep of @copies (the parent's oldest
 * enablers are kept): the child's uid or tenant is at its
 * max_enablers_per_uid. Their bits are cleared in the child's memory
 * (current's; best effort: a page that is not there, or still shared
 * with the parent and not anonymous, keeps the bit fork copied), so that
 * the child does not see an event enabled that no longer tells it when
 * it is disabled. The fork itself never fails for this.
 */
static void user_event_mm_fork_trim(struct mm_struct *mm,
				    struct list_head *copies, unsigned int keep)
{
	struct user_event_enabler *enabler, *next;
	unsigned int n = 0, dropped = 0;

	list_for_each_entry_safe(enabler, next, copies, free_link) {
		if (n++ < keep)
			continue;
		list_del(&enabler->free_link);
		mmap_read_lock(mm);
		user_event_enabler_write(mm, enabler, false);
		mmap_read_unlock(mm);
		user_event_put(enabler->event);
		kfree(enabler);
		if (++dropped % FORK_COPY_BATCH == 0)
			cond_resched();
	}
	pr_warn_ratelimited("pid %d inherits %u of %u enablers: max_enablers_per_uid\n",
			    task_pid_nr(current), keep, n);
}

/*
 * Charges the @n copies on @copies to the child's @payer, as registrations
 * are: a copy past the quota is refused (the child does not inherit it),
 * else every process of a user could hold max_enablers copies and fork
 * would multiply the quota. Returns how many the child keeps.
 */
static unsigned int user_event_mm_fork_charge(struct mm_struct *mm,
					      struct user_event_payer *payer,
					      struct list_head *copies,
					      unsigned int n)
{
	unsigned int charged;

	charged = user_event_charge_upto(payer, UE_QUOTA_ENABLERS, n);
	if (charged < n)
		user_event_mm_fork_trim(mm, copies, charged);
	return charged;
}

/*
 * The child registered enablers of its own before its fork copy was
 * published (only possible for a task work that ran late): @found is its
 * record (referenced; put here). Moves the copies of @uemm (not
 * published, discarded here) into it, keeping the child's own where both
 * have an (address, bit), and up to max_enablers; the rest go to @gone.
 */
static void user_event_mm_fork_merge(struct user_event_mm *uemm,
				     struct user_event_mm *found,
				     struct list_head *gone)
{
	struct user_event_enabler *enabler, *next;
	LIST_HEAD(copies);

	mutex_lock(&uemm->lock);
	WRITE_ONCE(uemm->dead, true);
	user_event_mm_reap(uemm, &copies);
	mutex_unlock(&uemm->lock);
	user_event_mm_discard(uemm);

	user_event_mm_adding_begin(found);
	mutex_lock(&found->lock);
	list_for_each_entry_safe(enabler, next, &copies, free_link) {
		if (user_event_enabler_find(found, enabler->uaddr,
					    enabler->ubit) ||
		    found->nr_enablers >= max_enablers)
			continue;
		list_del(&enabler->free_link);
		user_event_enabler_add(found, enabler);
	}
	user_event_mm_resync(found);
	mutex_unlock(&found->lock);
	user_event_mm_adding_end(found);
	list_splice(&copies, gone);
	user_event_mm_put(found);
}

/*
 * Gives the child's address space @mm (held, the caller's) the enablers
 * of @parent at the fork numbered @seq, as many as the child's quota
 * (max_enablers_per_uid of its uid and tenant) allows. No global lock: the
 * copy is made into a record nobody sees yet, whose bits are fixed, then
 * published; a state change since the first fix makes a second one, under
 * the record's lock (see user_event_mm_publish()).
 */
static void user_event_mm_fork_copy(struct user_event_mm *parent,
				    struct mm_struct *mm, u64 seq)
{
	struct user_event_enabler *enabler, *next;
	struct user_event_mm *uemm, *found;
	struct user_event_payer payer;
	LIST_HEAD(copies);
	unsigned int n;
	LIST_HEAD(gone);
	u64 changes;

	user_event_payer_current(&payer);
	n = user_event_mm_fork_snapshot(parent, seq, &payer, &copies);
	if (!n || !user_event_mm_fork_charge(mm, &payer, &copies, n))
		return;

	uemm = user_event_mm_alloc(mm);
	if (!uemm) {
		pr_warn_ratelimited("out of memory copying enablers at fork\n");
		list_splice(&copies, &gone);
		goto free;
	}

	changes = atomic64_read(&user_event_changes);
	smp_rmb();	/* the state below is at least as new */

	mutex_lock(&uemm->lock);
	list_for_each_entry_safe(enabler, next, &copies, free_link) {
		list_del(&enabler->free_link);
		user_event_enabler_add(uemm, enabler);
	}
	user_event_mm_resync(uemm);
	mutex_unlock(&uemm->lock);

	mutex_lock(&user_event_mm_mutex);
	found = user_event_mm_publish(uemm);
	mutex_unlock(&user_event_mm_mutex);

	if (found != uemm) {
		user_event_mm_fork_merge(uemm, found, &gone);
		goto free;
	}

	if (atomic64_read(&user_event_changes) != changes) {
		mutex_lock(&uemm->lock);
		user_event_mm_resync(uemm);
		mutex_unlock(&uemm->lock);
	}
	user_event_mm_refill(uemm);
	user_event_mm_put(uemm);
free:
	user_event_enablers_free(&gone);
}

/* The last fork in flight lets go of what only it could still copy */
static void user_event_mm_fork_done(struct user_event_mm *parent)
{
	LIST_HEAD(gone);

	if (!atomic_dec_and_test(&parent->forks_pending))
		return;

	if (READ_ONCE(parent->dead)) {
		user_event_mm_get(parent);
		if (!queue_work(user_event_mm_wq, &parent->teardown_work))
			user_event_mm_put(parent);
		return;
	}

	mutex_lock(&parent->lock);
	/*
	 * A fork that started since then may be copying, and dropping RCU
	 * at the enablers it copies: leave them all to the last fork. The
	 * barrier orders this read after the unregistrations seen under the
	 * lock (whose del_seq are then older than any such fork's seq).
	 */
	smp_mb();
	if (!parent->torn_down && !atomic_read(&parent->forks_pending))
		user_event_mm_reap(parent, &gone);
	mutex_unlock(&parent->lock);

	user_event_enablers_free(&gone);
}

/* Task work of the child, before it first runs in user space */
static void user_event_fork_work(struct callback_head *twork)
{
	struct user_event_fork *fork = container_of(twork,
						    struct user_event_fork,
						    twork);
	struct user_event_mm *parent = fork->parent;
	struct mm_struct *mm = fork->child;

	/* A child killed before it ran has nothing to copy to */
	if (mmget_not_zero(mm)) {
		user_event_mm_fork_copy(parent, mm, fork->seq);
		user_event_mm_mmput(mm);
	}
	mmdrop(mm);

	user_event_mm_fork_done(parent);
	user_event_mm_refill(parent);
	user_event_mm_put(parent);
	kfree(fork);
	user_event_twork_end();
}

static struct user_event_fork *user_event_mm_take_spare(struct user_event_mm *uemm)
{
	struct user_event_fork *fork;
	int i;

	for (i = 0; i < FORK_SPARES; i++) {
		fork = xchg(&uemm->spares[i], NULL);
		if (fork)
			return fork;
	}

	/* Spinning locks allow an allocation here, except on PREEMPT_RT */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		return NULL;

	return kzalloc(sizeof(*fork), GFP_NOWAIT | __GFP_ACCOUNT);
}

static void user_event_mm_put_spare(struct user_event_mm *uemm,
				    struct user_event_fork *fork)
{
	int i;

	for (i = 0; i < FORK_SPARES; i++)
		if (!cmpxchg(&uemm->spares[i], NULL, fork))
			return;

	/* Refilled meanwhile: any context may free through RCU */
	kfree_rcu(fork, twork);
}

/* Task work of a forking parent: sets new spares aside */
static void user_event_mm_refill_work(struct callback_head *twork)
{
	struct user_event_mm *uemm = container_of(twork, struct user_event_mm,
						  refill_twork);

	clear_bit(0, &uemm->refill_queued);
	user_event_mm_refill(uemm);
	user_event_mm_put(uemm);
	user_event_twork_end();
}

/*
 * fork(): runs in the parent (current), with preemption disabled, before
 * the child runs. The child's memory is a copy of the parent's, so its
 * words hold the state of the moment; the child's task work copies the
 * enablers before it runs, so that they are kept up to date from then on
 * and the child's own forks inherit them.
 */
static void user_event_fork_probe(void *data, struct task_struct *parent,
				  struct task_struct *child)
{
	struct user_event_fork *fork;
	struct user_event_mm *uemm;

	if (!parent->mm || !child->mm || parent->mm == child->mm ||
	    parent != current)
		return;

	rcu_read_lock();
	uemm = user_event_mm_find(parent->mm);
	if (uemm && (list_empty(&uemm->enablers) ||
		     !refcount_inc_not_zero(&uemm->refcnt)))
		uemm = NULL;
	rcu_read_unlock();
	if (!uemm)
		return;

	fork = user_event_mm_take_spare(uemm);
	if (!fork) {
		pr_warn_ratelimited("too many forks at once: pid %d does not inherit enablers\n",
				    child->pid);
		user_event_mm_put(uemm);
		return;
	}

	fork->parent = uemm;
	fork->child = child->mm;
	mmgrab(child->mm);
	/* Pending first: an unregistration numbered after us keeps its enabler */
	atomic_inc(&uemm->forks_pending);
	fork->seq = atomic64_inc_return(&uemm->seq);
	init_task_work(&fork->twork, user_event_fork_work);
	user_event_twork_start();
	if (task_work_add(child, &fork->twork, TWA_RESUME)) {
		/* Only an exiting task refuses task work */
		user_event_twork_end();
		atomic_dec(&uemm->forks_pending);
		mmdrop(child->mm);	/* not the last: the child holds it */
		user_event_mm_put_spare(uemm, fork);
		user_event_mm_put(uemm);
		return;
	}

	/* The parent refills its spares on its way back to user space */
	if (!test_and_set_bit(0, &uemm->refill_queued)) {
		user_event_mm_get(uemm);
		init_task_work(&uemm->refill_twork, user_event_mm_refill_work);
		user_event_twork_start();
		if (task_work_add(current, &uemm->refill_twork, TWA_RESUME)) {
			user_event_twork_end();
			clear_bit(0, &uemm->refill_queued);
			user_event_mm_put(uemm);
		}
	}
}

/* sched_process_exit: after exit_mm()'s mmput() of the task's mm */
static void user_event_exit_probe(void *data, struct task_struct *task)
{
	user_event_mm_kick_scan();
}

/* sched_process_exec: after exec_mmap()'s mmput() of the old mm */
static void user_event_exec_probe(void *data, struct task_struct *task,
				  pid_t old_pid, struct linux_binprm *bprm)
{
	user_event_mm_kick_scan();
}

static void user_event_find_tps(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		fork_tp = tp;
	else if (!strcmp(tp->name, "sched_process_exit"))
		exit_tp = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		exec_tp = tp;
}

int user_events_mm_init(void)
{
	int ret;

	for_each_kernel_tracepoint(user_event_find_tps, NULL);
	if (!fork_tp || !exit_tp || !exec_tp) {
		pr_err("tracepoint sched_process_fork, _exit or _exec not found\n");
		return -ENOENT;
	}

	user_event_mm_wq = alloc_workqueue("user_events_mm", WQ_UNBOUND, 0);
	if (!user_event_mm_wq)
		return -ENOMEM;

	ret = tracepoint_probe_register(exit_tp, user_event_exit_probe, NULL);
	if (ret)
		goto destroy_mm_wq;
	ret = tracepoint_probe_register(exec_tp, user_event_exec_probe, NULL);
	if (ret)
		goto unregister_exit;
	ret = tracepoint_probe_register(fork_tp, user_event_fork_probe, NULL);
	if (ret)
		goto unregister_exec;

	return 0;

unregister_exec:
	tracepoint_probe_unregister(exec_tp, user_event_exec_probe, NULL);
unregister_exit:
	tracepoint_probe_unregister(exit_tp, user_event_exit_probe, NULL);
	tracepoint_synchronize_unregister();
destroy_mm_wq:
	destroy_workqueue(user_event_mm_wq);
	return ret;
}

void user_events_mm_exit(void)
{
	struct user_event_mm *uemm;
	struct hlist_node *tmp;
	int bkt;

	tracepoint_probe_unregister(fork_tp, user_event_fork_probe, NULL);
	tracepoint_probe_unregister(exec_tp, user_event_exec_probe, NULL);
	tracepoint_probe_unregister(exit_tp, user_event_exit_probe, NULL);
	tracepoint_synchronize_unregister();

	/*
	 * Task works of ours that dropped their last reference may still
	 * run: wait until each has done its last step, then until none can
	 * be between that step and its return (see the top of this file).
	 */
	wait_var_event(&user_event_tworks, !atomic_read(&user_event_tworks));
	ue_synchronize_rcu_tasks();

	/* Records are module references: on a failed init, none is left */
	flush_workqueue(user_event_mm_wq);
	hash_for_each_safe(user_event_mms, bkt, tmp, uemm, node)
		user_event_mm_kill(uemm);
	/* Teardowns queue frees */
	flush_workqueue(user_event_mm_wq);
	flush_workqueue(user_event_mm_wq);

	destroy_workqueue(user_event_mm_wq);
}
