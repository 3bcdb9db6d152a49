// SPDX-License-Identifier: GPL-2.0
/*
 * Remote write enablers (DIAG_IOCSREG, Linux 6.4+): a bit in a registering
 * process's word follows its event's enabled state: the records of address
 * spaces, their enablers and bits (a fork child's copies: user_events_fork.c,
 * above this file). References, locks and why no kernel thread waits on a
 * fault that user space holds:
 * Documentation/lifetimes.rst, "Remote write enablers and address-space
 * records".
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "include/uapi/linux/user_events.h"

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"
#include "user_events_ksyms_mm.h"
#include "user_events_mm.h"

/* Fault-in attempts per enabler and state change (as upstream) */
#define MAX_FAULT_ATTEMPTS 10

unsigned int max_enablers = 65536;
module_param(max_enablers, uint, 0444);
MODULE_PARM_DESC(max_enablers,
		 "Maximum number of enable bits one address space (process) may register (default 65536)");

/* Tries of a contended update, a tick apart, before a task is asked */
#define UEMM_RETRIES 16
/* A task asked is interrupted if its work has not run this long after */
#define UEMM_NUDGE_DELAY (HZ / 10)
#define UEMM_SETTLE_MAX 32

static DEFINE_HASHTABLE(user_event_mms, 10);
static DEFINE_SPINLOCK(user_event_mms_lock);
/* Makes creating a record and publishing it atomic: one record per mm */
static DEFINE_MUTEX(user_event_mm_mutex);
static atomic_t user_event_nr_mms = ATOMIC_INIT(0);
struct workqueue_struct *user_event_mm_wq;
/* State changes so far: a fork child resyncs if one happened meanwhile */
atomic64_t user_event_changes = ATOMIC64_INIT(0);
/* Task works of ours queued or running: module exit waits for none */
static atomic_t user_event_tworks = ATOMIC_INIT(0);
/* Woken when a killed record's first teardown run ends */
static DECLARE_WAIT_QUEUE_HEAD(user_event_mm_settled);

static void user_event_mm_scan_work(struct work_struct *work);
static DECLARE_WORK(user_event_mm_scan, user_event_mm_scan_work);
static void user_event_twork_kick(struct user_event_mm *uemm);

void user_event_mm_get(struct user_event_mm *uemm)
{
	refcount_inc(&uemm->refcnt);
}

void user_event_mm_put(struct user_event_mm *uemm)
{
	if (refcount_dec_and_test(&uemm->refcnt))
		queue_work(user_event_mm_wq, &uemm->free_work);
}

/* A reference of a live record found under RCU */
static bool user_event_mm_tryget(struct user_event_mm *uemm)
{
	return !READ_ONCE(uemm->dead) && refcount_inc_not_zero(&uemm->refcnt);
}

/* The last thing a task work callback of ours does */
void user_event_twork_done(struct user_event_mm *uemm)
{
	if (uemm)
		user_event_mm_put(uemm);
	if (atomic_dec_and_test(&user_event_tworks))
		wake_up_var(&user_event_tworks);
}

/* Queues @twork on @task with a reference of @uemm (the caller holds one) */
bool user_event_twork_add(struct user_event_mm *uemm, struct task_struct *task,
			  struct callback_head *twork, int mode)
{
	user_event_mm_get(uemm);
	atomic_inc(&user_event_tworks);
	if (!task_work_add(task, twork, mode))
		return true;
	user_event_twork_done(uemm);
	return false;
}

/* Queues the record's late work, with a reference while it is pending */
static void user_event_mm_late(struct user_event_mm *uemm, unsigned long delay)
{
	user_event_mm_get(uemm);
	if (!queue_delayed_work(user_event_mm_wq, &uemm->late_work, delay))
		user_event_mm_put(uemm);	/* not the last: ours is held */
}

/*
 * The late work a tick from now, for a contended update's retry: a later
 * nudge timer is brought forward (the work's run re-arms the nudge)
 */
static void user_event_mm_late_soon(struct user_event_mm *uemm)
{
	user_event_mm_get(uemm);
	if (mod_delayed_work(user_event_mm_wq, &uemm->late_work, 1))
		user_event_mm_put(uemm);	/* it was pending: it has one */
}

/* Work for a task of the address space: a resync, or bits to fault in */
static bool user_event_mm_has_work(struct user_event_mm *uemm)
{
	if (test_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags))
		return true;
	/* A hint read without the lock: whoever adds a fault kicks again */
	return data_race(!list_empty(&uemm->faults));
}

/* Looks for address spaces that went away, soon; any context */
void user_event_mm_kick_scan(void)
{
	if (atomic_read(&user_event_nr_mms))
		queue_work(user_event_mm_wq, &user_event_mm_scan);
}

/*
 * mmput() of a record's mm: the last put's teardown runs in a work item,
 * as exit_aio() there may wait for aio a FUSE server holds.
 */
static void user_event_mm_mmput(struct mm_struct *mm)
{
	mmput_async(mm);
	/* The record's mmgrab() keeps the struct readable */
	if (!atomic_read(&mm->mm_users))
		user_event_mm_kick_scan();
}

/* The live record of @mm with a reference taken, or NULL */
struct user_event_mm *user_event_mm_lookup_get(struct mm_struct *mm)
{
	struct user_event_mm *uemm;

	rcu_read_lock();
	hash_for_each_possible_rcu(user_event_mms, uemm, node,
				   (unsigned long)mm)
		if (uemm->mm == mm && user_event_mm_tryget(uemm))
			goto out;
	uemm = NULL;
out:
	rcu_read_unlock();
	return uemm;
}

/*
 * Unpublishes a record (once) and queues its teardown, which frees the
 * enablers and drops the table's reference. Any context but NMI.
 */
static void user_event_mm_kill(struct user_event_mm *uemm)
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

	if (killed && !queue_work(user_event_mm_wq, &uemm->teardown_work))
		user_event_mm_put(uemm);
}

/*
 * Kills the records of address spaces that no task uses any more, and
 * hands the work that a task left behind (exit, exec) to one that does.
 */
static void user_event_mm_scan_work(struct work_struct *work)
{
	struct user_event_mm *uemm;
	int bkt;

	rcu_read_lock();
	hash_for_each_rcu(user_event_mms, bkt, uemm, node) {
		if (!user_event_mm_tryget(uemm))
			continue;
		if (!atomic_read(&uemm->mm->mm_users) ||
		    ue_mm_has_no_task(uemm->mm))
			user_event_mm_kill(uemm);
		else if (user_event_mm_has_work(uemm))
			user_event_twork_kick(uemm);
		user_event_mm_put(uemm);
	}
	rcu_read_unlock();
}

/* A settle waits for its tenant's records; root's tenancy is root alone */
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
 * Waits up to a second for the teardowns of the caller's tenant's exited
 * address spaces (lifetimes.rst, "Bits"); whether there were any. No lock.
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

/* Frees an enabler on no list; no lock may be held (user_event_put()) */
static void user_event_enabler_free(struct user_event_enabler *enabler)
{
	user_event_uncharge(&enabler->payer, UE_QUOTA_ENABLERS, 1);
	user_event_put(enabler->event);
	kfree_rcu(enabler, rcu);
}

void user_event_enablers_free(struct list_head *gone)
{
	struct user_event_enabler *enabler, *next;

	list_for_each_entry_safe(enabler, next, gone, free_link)
		user_event_enabler_free(enabler);
}

/*
 * Moves to @gone the enablers no fork in flight may still copy: the
 * unregistered ones, or all of them once the address space went away.
 */
void user_event_mm_reap(struct user_event_mm *uemm, struct list_head *gone)
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

/*
 * Frees a dead record's enablers unless forks in flight may still copy
 * them (the last one queues this again); drops its queuer's reference.
 */
static void user_event_mm_teardown_work(struct work_struct *work)
{
	struct user_event_mm *uemm = container_of(work, struct user_event_mm,
						  teardown_work);
	LIST_HEAD(gone);

	mutex_lock(&uemm->lock);
	if (!uemm->torn_down && !atomic_read(&uemm->forks_pending)) {
		uemm->torn_down = true;
		user_event_mm_reap(uemm, &gone);
	}
	mutex_unlock(&uemm->lock);

	user_event_enablers_free(&gone);
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

	/* Dead, it stayed listed for user_event_mm_settle() */
	spin_lock(&user_event_mms_lock);
	if (!hlist_unhashed(&uemm->node))
		hash_del_rcu(&uemm->node);
	spin_unlock(&user_event_mms_lock);
	for (i = 0; i < FORK_SPARES; i++)
		kfree(uemm->spares[i]);
	mmdrop(uemm->mm);
	kfree_rcu(uemm, rcu);
	/* destroy_workqueue() at module exit waits for this to return */
	module_put(THIS_MODULE);
}

static void user_event_mm_fault_twork(struct callback_head *twork);
static void user_event_mm_nudge_twork(struct callback_head *twork);
static void user_event_mm_refill_twork(struct callback_head *twork);
static void user_event_mm_late_work(struct work_struct *work);

/* A record of @mm, made by a task of it; the caller's reference */
struct user_event_mm *user_event_mm_alloc(struct mm_struct *mm)
{
	struct user_event_mm *uemm;

	uemm = kzalloc(sizeof(*uemm), GFP_KERNEL_ACCOUNT);
	if (!uemm)
		return NULL;

	__module_get(THIS_MODULE);
	mutex_init(&uemm->lock);
	INIT_LIST_HEAD(&uemm->enablers);
	hash_init(uemm->enabler_hash);
	INIT_LIST_HEAD(&uemm->faults);
	init_task_work(&uemm->fault_twork, user_event_mm_fault_twork);
	init_task_work(&uemm->nudge_twork, user_event_mm_nudge_twork);
	init_task_work(&uemm->refill_twork, user_event_mm_refill_twork);
	INIT_DELAYED_WORK(&uemm->late_work, user_event_mm_late_work);
	INIT_WORK(&uemm->teardown_work, user_event_mm_teardown_work);
	INIT_WORK(&uemm->free_work, user_event_mm_free_work);
	refcount_set(&uemm->refcnt, 1);
	mmgrab(mm);
	uemm->mm = mm;
	user_event_payer_current(&uemm->payer);
	return uemm;
}

/*
 * Publishes @uemm with a reference for the table, or returns the record
 * already there, referenced for the caller.
 */
struct user_event_mm *user_event_mm_publish(struct user_event_mm *uemm)
{
	struct user_event_mm *old;

	mutex_lock(&user_event_mm_mutex);
	old = user_event_mm_lookup_get(uemm->mm);
	if (!old) {
		user_event_mm_get(uemm);
		atomic_inc(&user_event_nr_mms);
		spin_lock(&user_event_mms_lock);
		hash_add_rcu(user_event_mms, &uemm->node,
			     (unsigned long)uemm->mm);
		spin_unlock(&user_event_mms_lock);
	}
	mutex_unlock(&user_event_mm_mutex);
	/* Pairs with user_event_enablers_update(): a state change is seen */
	smp_mb();
	return old ?: uemm;
}

/* Sets memory aside for the forks to come; process context */
void user_event_mm_refill(struct user_event_mm *uemm)
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

/* The caller's record, created if need be, referenced; NULL if no memory */
static struct user_event_mm *user_event_mm_current(void)
{
	struct user_event_mm *uemm, *found;

	found = user_event_mm_lookup_get(current->mm);
	if (!found) {
		uemm = user_event_mm_alloc(current->mm);
		if (!uemm)
			return NULL;
		found = user_event_mm_publish(uemm);
		if (found != uemm)
			user_event_mm_put(uemm);
	}
	user_event_mm_refill(found);
	return found;
}

/*
 * Makes the anonymous private page of @addr writable (a copy-on-write
 * shared since fork()) by a fault that never waits, under the mmap lock.
 * Other memory gets its bit from the fault task work (lifetimes.rst,
 * "Bits").
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

/* Sets or clears the bit without waiting; -EFAULT if the page is not there */
int user_event_enabler_write(struct mm_struct *mm,
			     struct user_event_enabler *enabler, bool enabled)
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

/* user_event_enabler_write() under @uemm's lock, taking the mmap lock */
static int user_event_enabler_write_locked(struct user_event_mm *uemm,
					   struct user_event_enabler *enabler,
					   bool enabled)
{
	int ret;

	lockdep_assert_held(&uemm->lock);

	mmap_read_lock(uemm->mm);
	ret = user_event_enabler_write(uemm->mm, enabler, enabled);
	mmap_read_unlock(uemm->mm);
	return ret;
}

/* Words are aligned to their size: the low bits are free for the bit */
#define user_event_enabler_key(uaddr, ubit) ((uaddr) ^ (ubit))

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

void user_event_enabler_add(struct user_event_mm *uemm,
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
 * Faults the page in for write, with no lock of ours held: 0 when it is
 * there now, -EINTR for a fatal signal, else -EFAULT.
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
 * Has a task of the address space (the caller, else the owner) do its work
 * on its way to user space (lifetimes.rst, "Bits"). Any context but NMI and
 * hard interrupts; the caller holds a reference.
 */
static void user_event_twork_kick(struct user_event_mm *uemm)
{
	struct task_struct *task;

	if (cmpxchg(&uemm->twork_since, 0, jiffies | 1))
		return;

	if (current->mm == uemm->mm)
		task = get_task_struct(current);
	else
		task = ue_mm_owner_get(uemm->mm);
	if (task && user_event_twork_add(uemm, task, &uemm->fault_twork,
					 TWA_RESUME))
		user_event_mm_late(uemm, UEMM_NUDGE_DELAY);
	else
		WRITE_ONCE(uemm->twork_since, 0);
	if (task)
		put_task_struct(task);
}

/*
 * TWA_SIGNAL to the owner if the fault work is late (security.rst, open
 * issue 5). Returns the ticks until it is due, or 0.
 */
static unsigned long user_event_mm_nudge(struct user_event_mm *uemm)
{
	unsigned long since = READ_ONCE(uemm->twork_since);
	long left = (long)(since + UEMM_NUDGE_DELAY - jiffies);
	struct task_struct *task;

	if (!since)
		return 0;
	if (left > 0)
		return left;
	if (!user_event_mm_has_work(uemm) ||
	    test_and_set_bit(UEMM_TWORK_NUDGE, &uemm->twork_flags))
		return 0;
	task = ue_mm_owner_get(uemm->mm);
	if (!task || !user_event_twork_add(uemm, task, &uemm->nudge_twork,
					   TWA_SIGNAL))
		clear_bit(UEMM_TWORK_NUDGE, &uemm->twork_flags);
	if (task)
		put_task_struct(task);
	return 0;
}

/* Hands a bit that could not be written to a task of its address space */
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
 * Writes the bits of the faulting enablers in the page at @page_addr, now
 * faulted in (@ok) or not. Those written, out of attempts or not faulted
 * in leave the list.
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

/* Whether current, a task of @uemm's mm, may do its work */
static bool user_event_mm_may_work(struct user_event_mm *uemm)
{
	return current->mm == uemm->mm && !READ_ONCE(uemm->dead) &&
	       !fatal_signal_pending(current);
}

/*
 * The work of a task of the address space, no lock held: a due resync,
 * then, with @faults, the faults, one page at a time. Only the task work
 * faults (a registrant may be the userfaultfd handler a fault waits for).
 */
static void user_event_mm_do_work(struct user_event_mm *uemm, bool faults)
{
	struct user_event_enabler *enabler;
	unsigned long addr;
	bool ok;

	if (user_event_mm_may_work(uemm) &&
	    test_and_clear_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags)) {
		mutex_lock(&uemm->lock);
		user_event_mm_resync(uemm);
		mutex_unlock(&uemm->lock);
	}
	while (faults && user_event_mm_may_work(uemm)) {
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

/* The fault and nudge task works; a task that left its mm hands over */
static void user_event_mm_twork_run(struct user_event_mm *uemm)
{
	user_event_mm_do_work(uemm, true);
	if (current->mm != uemm->mm && user_event_mm_has_work(uemm))
		user_event_twork_kick(uemm);
	user_event_twork_done(uemm);
}

static void user_event_mm_fault_twork(struct callback_head *twork)
{
	struct user_event_mm *uemm = container_of(twork, struct user_event_mm,
						  fault_twork);

	WRITE_ONCE(uemm->twork_since, 0);
	user_event_mm_twork_run(uemm);
}

static void user_event_mm_nudge_twork(struct callback_head *twork)
{
	struct user_event_mm *uemm = container_of(twork, struct user_event_mm,
						  nudge_twork);

	clear_bit(UEMM_TWORK_NUDGE, &uemm->twork_flags);
	user_event_mm_twork_run(uemm);
}

/* Whether @uemm may hold an enabler of @user (lifetimes.rst, "Bits") */
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

/*
 * Writes @user's bits (all, if a resync is due) if it gets both locks at
 * once; false if not. @user is only compared: it may be gone.
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
	resync = test_and_clear_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags);
	list_for_each_entry(enabler, &uemm->enablers, link) {
		if (enabler->del_seq || (!resync && enabler->event != user))
			continue;
		if (user_event_enabler_write(uemm->mm, enabler,
					     user_event_status(enabler->event)))
			user_event_fault_add(uemm, enabler);
		if (++n % FORK_COPY_BATCH == 0)
			cond_resched();
	}
	mmap_read_unlock(uemm->mm);
	mutex_unlock(&uemm->lock);
	return true;
}

/*
 * A resync a contended update left due, tried a tick apart, then handed
 * to a task of the address space. Returns the ticks until the next, or 0.
 */
static unsigned long user_event_mm_retry(struct user_event_mm *uemm)
{
	unsigned long delay = 0;

	if (!test_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags) ||
	    READ_ONCE(uemm->dead) || !mmget_not_zero(uemm->mm)) {
		uemm->retries = 0;
		return 0;
	}
	if (user_event_mm_try_write(uemm, NULL)) {
		uemm->retries = 0;
	} else if (++uemm->retries < UEMM_RETRIES) {
		delay = 1;
	} else {
		uemm->retries = 0;
		user_event_twork_kick(uemm);
	}
	user_event_mm_mmput(uemm->mm);
	return delay;
}

/* The record's late work: retries and nudges; holds a reference */
static void user_event_mm_late_work(struct work_struct *work)
{
	struct user_event_mm *uemm = container_of(to_delayed_work(work),
						  struct user_event_mm,
						  late_work);
	unsigned long retry = user_event_mm_retry(uemm);
	unsigned long nudge = user_event_mm_nudge(uemm);
	unsigned long delay = retry ?: nudge;

	if (nudge && nudge < delay)
		delay = nudge;
	if (!delay ||
	    !queue_delayed_work(user_event_mm_wq, &uemm->late_work, delay))
		user_event_mm_put(uemm);
}

/*
 * One address space's part of a state change's writing: if a lock is
 * taken, all its bits are rewritten later (user_event_mm_retry()).
 */
static void user_event_mm_update_put(struct user_event_mm *uemm,
				     const struct user_event *user)
{
	if (!READ_ONCE(uemm->dead) && mmget_not_zero(uemm->mm)) {
		if (user_event_mm_may_have(uemm, user) &&
		    !user_event_mm_try_write(uemm, user)) {
			set_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags);
			user_event_mm_late_soon(uemm);
		}
		user_event_mm_mmput(uemm->mm);
	}
	user_event_mm_put(uemm);
}

/*
 * Without memory for a writer: each record that may hold an enabler of
 * @user gets a resync, done by its late work a tick from now. Any context
 * but NMI and hard interrupts.
 */
static void user_event_enablers_resync_later(const struct user_event *user)
{
	struct user_event_mm *uemm;
	int bkt;

	rcu_read_lock();
	hash_for_each_rcu(user_event_mms, bkt, uemm, node) {
		if (!user_event_mm_tryget(uemm))
			continue;
		if (user_event_mm_may_have(uemm, user)) {
			set_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags);
			user_event_mm_late_soon(uemm);
		}
		user_event_mm_put(uemm);
	}
	rcu_read_unlock();
}

/* Writes @user's state into every address space, no lock of ours held */
static void user_event_enablers_write(const struct user_event *user)
{
	unsigned int cap = atomic_read(&user_event_nr_mms) + 8, n, i;
	struct user_event_mm **mms, *uemm;
	bool full;
	int bkt;

again:
	mms = kvmalloc_array(cap, sizeof(*mms), GFP_KERNEL | __GFP_NOWARN);
	if (!mms) {
		user_event_enablers_resync_later(user);
		return;
	}
	n = 0;
	full = false;
	rcu_read_lock();
	hash_for_each_rcu(user_event_mms, bkt, uemm, node) {
		if (READ_ONCE(uemm->dead))
			continue;
		full = n == cap;
		if (full)
			break;
		if (refcount_inc_not_zero(&uemm->refcnt))
			mms[n++] = uemm;
	}
	rcu_read_unlock();

	/* If records were published meanwhile: a bigger array */
	for (i = 0; i < n; i++) {
		if (full)
			user_event_mm_put(mms[i]);
		else
			user_event_mm_update_put(mms[i], user);
	}
	kvfree(mms);
	if (full) {
		cap *= 2;
		goto again;
	}
}

/* A state change's writing, after event_mutex: task work, or a work item */
struct user_event_flush {
	union {
		struct callback_head twork;
		struct work_struct work;
	};
	const struct user_event *user;	/* compared only: may be gone */
};

static void user_event_flush_work(struct work_struct *work)
{
	struct user_event_flush *flush = container_of(work,
						      struct user_event_flush,
						      work);

	user_event_enablers_write(flush->user);
	kfree(flush);
}

static void user_event_flush_twork(struct callback_head *twork)
{
	user_event_flush_work(&container_of(twork, struct user_event_flush,
					    twork)->work);
	user_event_twork_done(NULL);
}

/* Under event_mutex, after a state change: queues the writing of the bits */
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
		user_event_enablers_resync_later(user);
		return;
	}
	flush->user = user;

	if (!(current->flags & PF_KTHREAD)) {
		init_task_work(&flush->twork, user_event_flush_twork);
		atomic_inc(&user_event_tworks);
		if (!task_work_add(current, &flush->twork, TWA_RESUME))
			return;
		user_event_twork_done(NULL);
	}
	INIT_WORK(&flush->work, user_event_flush_work);
	queue_work(user_event_mm_wq, &flush->work);
}

/*
 * Whether the caller has the (address, bit) already: a quick look before
 * an event is created; user_event_enabler_create() checks again.
 */
bool user_event_enabler_exists(unsigned long uaddr, u8 ubit)
{
	struct user_event_mm *uemm;
	bool found;

	uemm = user_event_mm_lookup_get(current->mm);
	if (!uemm)
		return false;

	mutex_lock(&uemm->lock);
	found = user_event_enabler_find(uemm, uaddr, ubit);
	mutex_unlock(&uemm->lock);

	user_event_mm_put(uemm);
	return found;
}

/* A new enabler of @user at the caller's word of @reg, on no list yet */
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
	enabler->addr = ALIGN_DOWN(enabler->uaddr, sizeof(long));
	offset = enabler->uaddr - enabler->addr;
#ifdef __BIG_ENDIAN
	offset = sizeof(long) - reg->enable_size - offset;
#endif
	enabler->bit = enabler->ubit + offset * BITS_PER_BYTE;
	enabler->event = user;
	user_event_payer_current(&enabler->payer);
	return enabler;
}

/*
 * One attempt at writing @enabler's bit and adding it to the caller's
 * @uemm: -EFAULT if the page must be faulted in first, -EADDRINUSE or
 * -EMFILE if it may not be added.
 */
static int user_event_enabler_insert(struct user_event_mm *uemm,
				     struct user_event_enabler *enabler)
{
	int ret;

	atomic_inc(&uemm->adding);
	/* Pairs with user_event_enablers_update(): lifetimes.rst, "Bits" */
	smp_mb__after_atomic();
	mutex_lock(&uemm->lock);
	if (user_event_enabler_find(uemm, enabler->uaddr, enabler->ubit)) {
		ret = -EADDRINUSE;
	} else if (uemm->nr_enablers >= max_enablers) {
		ret = -EMFILE;
	} else {
		ret = user_event_enabler_write_locked(uemm, enabler,
						      user_event_status(enabler->event));
		if (!ret) {
			/* Legal: the caller holds a reference */
			user_event_get(enabler->event);
			user_event_enabler_add(uemm, enabler);
		}
	}
	mutex_unlock(&uemm->lock);
	/* The enabler added is on the list before the count drops */
	smp_mb__before_atomic();
	atomic_dec(&uemm->adding);
	return ret;
}

/* Adds the caller's enabler of @user (referenced) and writes its bit */
int user_event_enabler_create(struct user_event *user,
			      const struct user_write_reg *reg)
{
	struct user_event_enabler *enabler;
	struct user_event_mm *uemm;
	int attempt, ret;

	might_sleep();

	enabler = user_event_enabler_alloc(user, reg);
	uemm = enabler ? user_event_mm_current() : NULL;
	if (!uemm) {
		kfree(enabler);
		return -ENOMEM;
	}

	ret = user_event_charge(&enabler->payer, UE_QUOTA_ENABLERS, 1, false);
	if (ret)
		goto out;
	for (attempt = 0; attempt < MAX_FAULT_ATTEMPTS; attempt++) {
		ret = user_event_enabler_insert(uemm, enabler);
		if (ret != -EFAULT)
			break;
		ret = user_event_fault_in(uemm->mm, enabler->uaddr);
		if (ret)
			break;
		ret = -EFAULT;
	}
	if (ret)
		user_event_uncharge(&enabler->payer, UE_QUOTA_ENABLERS, 1);
	/* A resync left due is done here, by a task of the address space */
	if (test_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags))
		user_event_mm_do_work(uemm, false);
out:
	user_event_mm_put(uemm);
	if (ret)
		kfree(enabler);
	return ret;
}

/*
 * Removes the caller's enabler and clears its bit unless registered again
 * meanwhile; as upstream, -EFAULT if the bit cannot be cleared. One that a
 * pending fork may copy stays listed, marked, until that fork is done.
 */
int user_event_enabler_remove(const struct user_write_unreg *unreg)
{
	struct user_event_enabler *enabler, word;
	struct user_event_mm *uemm;
	bool keep = false;
	int attempt, ret = 0;

	uemm = user_event_mm_lookup_get(current->mm);
	if (!uemm)
		return -ENOENT;

	mutex_lock(&uemm->lock);
	enabler = user_event_enabler_find(uemm, unreg->disable_addr,
					  unreg->disable_bit);
	if (enabler) {
		enabler->del_seq = atomic64_inc_return(&uemm->seq);
		uemm->nr_enablers--;
		list_del_init(&enabler->fault_link);
		keep = atomic_read(&uemm->forks_pending);
		if (!keep) {
			list_del_rcu(&enabler->link);
			hash_del(&enabler->hnode);
		}
		/* A copy: a kept enabler may be freed once the lock is dropped */
		word = *enabler;
		ret = user_event_enabler_write_locked(uemm, &word, false);
	}
	mutex_unlock(&uemm->lock);
	if (!enabler) {
		user_event_mm_put(uemm);
		return -ENOENT;
	}

	for (attempt = 1; ret == -EFAULT && attempt < MAX_FAULT_ATTEMPTS;
	     attempt++) {
		ret = user_event_fault_in(uemm->mm, word.uaddr);
		if (ret)
			break;
		mutex_lock(&uemm->lock);
		if (!user_event_enabler_find(uemm, word.uaddr, word.ubit))
			ret = user_event_enabler_write_locked(uemm, &word, false);
		mutex_unlock(&uemm->lock);
	}

	if (!keep)
		user_event_enabler_free(enabler);
	if (test_bit(UEMM_TWORK_RESYNC, &uemm->twork_flags))
		user_event_mm_do_work(uemm, false);
	user_event_mm_put(uemm);
	return ret;
}

/* Writes the bits that disagree with their events (read if in our mm) */
void user_event_mm_resync(struct user_event_mm *uemm)
{
	struct user_event_enabler *enabler;
	unsigned int n = 0;
	unsigned long word;
	bool enabled;

	lockdep_assert_held(&uemm->lock);

	list_for_each_entry(enabler, &uemm->enablers, link) {
		if (enabler->del_seq)
			continue;
		if (++n % FORK_COPY_BATCH == 0)
			cond_resched();
		enabled = user_event_status(enabler->event);
		if (current->mm == uemm->mm &&
		    !copy_from_user_nofault(&word, (void __user *)enabler->addr,
					    sizeof(word)) &&
		    test_bit(enabler->bit, &word) == enabled)
			continue;
		if (user_event_enabler_write_locked(uemm, enabler, enabled))
			user_event_fault_add(uemm, enabler);
	}
}

/* Task work of a forking parent: sets new spares aside */
static void user_event_mm_refill_twork(struct callback_head *twork)
{
	struct user_event_mm *uemm = container_of(twork, struct user_event_mm,
						  refill_twork);

	clear_bit(UEMM_REFILL_QUEUED, &uemm->twork_flags);
	user_event_mm_refill(uemm);
	user_event_twork_done(uemm);
}

int user_events_mm_init(void)
{
	user_event_mm_wq = alloc_workqueue("user_events_mm", WQ_UNBOUND, 0);
	return user_event_mm_wq ? 0 : -ENOMEM;
}

void user_events_mm_exit(void)
{
	struct user_event_mm *uemm;
	struct hlist_node *tmp;
	int bkt;

	/*
	 * Task works of ours that dropped their last reference may still
	 * run: wait until each has done its last step, then until none can
	 * be between that step and its return.
	 */
	wait_var_event(&user_event_tworks, !atomic_read(&user_event_tworks));
	ue_synchronize_rcu_tasks();

	/* Records are module references: on a failed init, none is left */
	flush_workqueue(user_event_mm_wq);
	hash_for_each_safe(user_event_mms, bkt, tmp, uemm, node)
		user_event_mm_kill(uemm);
	/* Drains the teardowns and the frees they queue */
	destroy_workqueue(user_event_mm_wq);
}
