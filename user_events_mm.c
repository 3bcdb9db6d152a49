// SPDX-License-Identifier: GPL-2.0
/*
 * Remote write enablers: the event state written into the registering
 * processes (the DIAG_IOCSREG ABI of Linux 6.4 and later).
 *
 * A process registers a word (4 or 8 bytes) and a bit in it. Whenever the
 * event's enabled state changes, the bit is set or cleared atomically in
 * that process's memory. Enablers belong to the address space (struct
 * user_event_mm), not to the file they were registered through:
 *
 *  - fork: a probe on the sched_process_fork tracepoint, which runs in
 *    the parent before the child first runs, queues task work on the
 *    child. That work runs in the child before its first instruction in
 *    user space: it copies the parent's enablers for the child's address
 *    space and writes the child's bits that changed since its memory was
 *    copied. The probe itself allocates nothing (memory comes from spares
 *    set aside beforehand, refilled by task work of the parent), as
 *    PREEMPT_RT requires in its preemption-disabled context. Threads and
 *    CLONE_VM children share the address space and so its enablers.
 *  - exec and exit: an mmu notifier's release callback runs when an
 *    address space is torn down (the old one at exec, or at the last
 *    exit); its enablers are dropped then and never written again.
 *
 * Bits are written with FOLL_NOFAULT under event_mutex. A page that is not
 * present is faulted in from a work item and the write is retried there,
 * a bounded number of times; an address that was unmapped or made
 * read-only is given up on until the next state change.
 *
 * Locking: event_mutex (the tracing core's) serializes every state change
 * and protects the enabler lists. user_event_mm_mutex serializes creating
 * the record of an address space, so that there is one per mm. The
 * address space table is modified under user_event_mms_lock and read
 * under RCU.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "include/uapi/linux/user_events.h"

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"

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

/* A fork of an address space with enablers, finished in task work */
struct user_event_fork {
	struct callback_head twork;
	struct user_event_mm *parent;	/* referenced */
	struct mm_struct *child;	/* grabbed */
	u64 seq;			/* the parent's sequence at fork */
};

struct user_event_mm {
	struct hlist_node node;		/* user_event_mms, RCU */
	struct list_head enablers;	/* RCU, changed under event_mutex */
	/* The same enablers by (address, bit), under event_mutex */
	DECLARE_HASHTABLE(enabler_hash, ENABLER_HASH_BITS);
	struct mm_struct *mm;		/* grabbed while this exists */
	struct mmu_notifier mn;
	bool mn_registered;
	bool dead;			/* the address space went away */
	bool torn_down;			/* enablers freed, under event_mutex */
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
	unsigned int nr_enablers;	/* registered, under event_mutex */
	struct list_head update_link;	/* under event_mutex */
	struct user_event_fork *spares[FORK_SPARES];
	struct callback_head refill_twork;
	unsigned long refill_queued;	/* bit 0: refill_twork is queued */
	struct work_struct teardown_work;
	struct work_struct free_work;
	struct rcu_head rcu;
};

struct user_event_enabler {
	struct list_head link;
	struct hlist_node hnode;	/* user_event_mm.enabler_hash */
	struct list_head free_link;
	struct user_event *event;
	unsigned long uaddr;		/* as registered */
	unsigned long addr;		/* aligned to a long for bit ops */
	u8 ubit;			/* as registered */
	u8 bit;				/* in the long at addr */
	u8 size;
	u64 add_seq;			/* the address space's, when added */
	u64 del_seq;			/* when unregistered; 0: registered */
	struct rcu_head rcu;
};

struct user_event_fault {
	struct work_struct work;
	struct user_event_mm *uemm;
	unsigned long uaddr;
	u8 ubit;
	int attempt;
};

static DEFINE_HASHTABLE(user_event_mms, 10);
static DEFINE_SPINLOCK(user_event_mms_lock);
static DEFINE_MUTEX(user_event_mm_mutex);
static struct workqueue_struct *user_event_mm_wq;
static struct tracepoint *fork_tp;

static void user_event_mm_get(struct user_event_mm *uemm)
{
	refcount_inc(&uemm->refcnt);
}

static void user_event_mm_put(struct user_event_mm *uemm)
{
	if (refcount_dec_and_test(&uemm->refcnt))
		queue_work(user_event_mm_wq, &uemm->free_work);
}

static struct user_event_mm *user_event_mm_find(struct mm_struct *mm)
{
	struct user_event_mm *uemm;

	hash_for_each_possible_rcu(user_event_mms, uemm, node,
				   (unsigned long)mm)
		if (uemm->mm == mm && !READ_ONCE(uemm->dead))
			return uemm;

	return NULL;
}

/* Unpublishes an address space; its enablers are freed by a work item */
static void user_event_mm_kill(struct user_event_mm *uemm)
{
	bool killed = false;

	spin_lock(&user_event_mms_lock);
	if (!uemm->dead) {
		WRITE_ONCE(uemm->dead, true);
		hash_del_rcu(&uemm->node);
		killed = true;
	}
	spin_unlock(&user_event_mms_lock);

	/* The table's reference goes with the teardown (or now, if queued) */
	if (killed && !queue_work(user_event_mm_wq, &uemm->teardown_work))
		user_event_mm_put(uemm);
}

static void user_event_enabler_free(struct user_event_enabler *enabler)
{
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

	lockdep_assert_held(ue_ksyms.event_mutex);

	list_for_each_entry_safe(enabler, next, &uemm->enablers, link) {
		if (!enabler->del_seq && !READ_ONCE(uemm->dead))
			continue;
		list_del_rcu(&enabler->link);
		hash_del(&enabler->hnode);
		list_add(&enabler->free_link, gone);
	}
}

static void user_event_enablers_free(struct list_head *gone)
{
	struct user_event_enabler *enabler, *next;

	list_for_each_entry_safe(enabler, next, gone, free_link)
		user_event_enabler_free(enabler);
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
	mutex_lock(ue_ksyms.event_mutex);
	if (!uemm->torn_down && !atomic_read(&uemm->forks_pending)) {
		uemm->torn_down = true;
		user_event_mm_reap(uemm, &gone);
	}
	mutex_unlock(ue_ksyms.event_mutex);

	user_event_enablers_free(&gone);
	user_event_mm_put(uemm);
}

static void user_event_mm_free_work(struct work_struct *work)
{
	struct user_event_mm *uemm = container_of(work, struct user_event_mm,
						  free_work);

	int i;

	if (uemm->mn_registered)
		mmu_notifier_unregister(&uemm->mn, uemm->mm);
	for (i = 0; i < FORK_SPARES; i++)
		kfree(uemm->spares[i]);
	mmdrop(uemm->mm);
	kfree_rcu(uemm, rcu);
	module_put(THIS_MODULE);
}

static void user_event_mm_release(struct mmu_notifier *mn,
				  struct mm_struct *mm)
{
	user_event_mm_kill(container_of(mn, struct user_event_mm, mn));
}

static const struct mmu_notifier_ops user_event_mm_ops = {
	.release = user_event_mm_release,
};

static struct user_event_mm *user_event_mm_alloc(struct mm_struct *mm)
{
	struct user_event_mm *uemm;

	uemm = kzalloc(sizeof(*uemm), GFP_KERNEL_ACCOUNT);
	if (!uemm)
		return NULL;

	/* Enablers are module state: keep the code around until freed */
	__module_get(THIS_MODULE);
	INIT_LIST_HEAD(&uemm->enablers);
	hash_init(uemm->enabler_hash);
	INIT_LIST_HEAD(&uemm->update_link);
	INIT_WORK(&uemm->teardown_work, user_event_mm_teardown_work);
	INIT_WORK(&uemm->free_work, user_event_mm_free_work);
	uemm->mn.ops = &user_event_mm_ops;
	refcount_set(&uemm->refcnt, 1);
	mmgrab(mm);
	uemm->mm = mm;
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

/*
 * The record of @mm, created if there is none yet, with a reference for
 * the caller. @mm must be held (mm_users) by the caller.
 */
static struct user_event_mm *user_event_mm_get_or_create(struct mm_struct *mm)
{
	struct user_event_mm *uemm;

	mutex_lock(&user_event_mm_mutex);

	rcu_read_lock();
	uemm = user_event_mm_find(mm);
	if (uemm && !refcount_inc_not_zero(&uemm->refcnt))
		uemm = NULL;
	rcu_read_unlock();
	if (uemm)
		goto out;

	uemm = user_event_mm_alloc(mm);
	if (!uemm)
		goto out;

	if (mmu_notifier_register(&uemm->mn, mm)) {
		mmdrop(uemm->mm);
		kfree(uemm);
		module_put(THIS_MODULE);
		uemm = NULL;
		goto out;
	}
	uemm->mn_registered = true;

	/* One reference for the table, one for the caller */
	refcount_set(&uemm->refcnt, 2);
	spin_lock(&user_event_mms_lock);
	hash_add_rcu(user_event_mms, &uemm->node, (unsigned long)mm);
	spin_unlock(&user_event_mms_lock);
out:
	mutex_unlock(&user_event_mm_mutex);
	if (uemm)
		user_event_mm_refill(uemm);
	return uemm;
}

/* The calling process's address space record, created on first use */
static struct user_event_mm *user_event_mm_current(void)
{
	return user_event_mm_get_or_create(current->mm);
}

/*
 * Sets or clears the enabler's bit without faulting. Returns -EFAULT when
 * the page is not there (or not writable) right now.
 */
static int user_event_enabler_write(struct mm_struct *mm,
				    struct user_event_enabler *enabler,
				    bool enabled)
{
	struct page *page;
	unsigned long *word;
	void *kaddr;

	mmap_assert_locked(mm);

	if (ue_pin_user_page_remote(mm, enabler->addr,
				    FOLL_WRITE | FOLL_NOFAULT, &page) != 1)
		return -EFAULT;

	kaddr = kmap_local_page(page);
	word = kaddr + offset_in_page(enabler->addr);
	if (enabled)
		set_bit(enabler->bit, word);
	else
		clear_bit(enabler->bit, word);
	kunmap_local(kaddr);

	unpin_user_pages_dirty_lock(&page, 1, true);
	return 0;
}

/* True when the enabler's bit already reads @enabled (no fault, no COW) */
static bool user_event_enabler_is(struct mm_struct *mm,
				  struct user_event_enabler *enabler,
				  bool enabled)
{
	struct page *page;
	void *kaddr;
	bool set;

	mmap_assert_locked(mm);

	if (ue_pin_user_page_remote(mm, enabler->addr, FOLL_NOFAULT,
				    &page) != 1)
		return false;

	kaddr = kmap_local_page(page);
	set = test_bit(enabler->bit, kaddr + offset_in_page(enabler->addr));
	kunmap_local(kaddr);

	unpin_user_page(page);
	return set == enabled;
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

	lockdep_assert_held(ue_ksyms.event_mutex);

	hash_for_each_possible(uemm->enabler_hash, enabler, hnode,
			       user_event_enabler_key(uaddr, ubit))
		if (enabler->uaddr == uaddr && enabler->ubit == ubit &&
		    !enabler->del_seq)
			return enabler;

	return NULL;
}

/* Puts @enabler on the lists of @uemm; event_mutex held */
static void user_event_enabler_add(struct user_event_mm *uemm,
				   struct user_event_enabler *enabler)
{
	enabler->add_seq = atomic64_inc_return(&uemm->seq);
	enabler->del_seq = 0;
	uemm->nr_enablers++;
	list_add_tail_rcu(&enabler->link, &uemm->enablers);
	hash_add(uemm->enabler_hash, &enabler->hnode,
		 user_event_enabler_key(enabler->uaddr, enabler->ubit));
}

/* Faults the page in for write; true when it is there now */
static bool user_event_fault_in(struct mm_struct *mm, unsigned long uaddr)
{
	bool unlocked = false;
	int ret;

	mmap_read_lock(mm);
	ret = fixup_user_fault(mm, uaddr, FAULT_FLAG_WRITE | FAULT_FLAG_REMOTE,
			       &unlocked);
	mmap_read_unlock(mm);

	return !ret;
}

static void user_event_fault_queue(struct user_event_mm *uemm,
				   struct user_event_enabler *enabler,
				   int attempt);

static void user_event_fault_work(struct work_struct *work)
{
	struct user_event_fault *fault = container_of(work,
						      struct user_event_fault,
						      work);
	struct user_event_mm *uemm = fault->uemm;
	struct user_event_enabler *enabler;
	struct mm_struct *mm = uemm->mm;
	int ret;

	if (READ_ONCE(uemm->dead) || !mmget_not_zero(mm))
		goto out;

	if (!user_event_fault_in(mm, fault->uaddr))
		goto out_mm;

	mutex_lock(ue_ksyms.event_mutex);
	enabler = user_event_enabler_find(uemm, fault->uaddr, fault->ubit);
	if (enabler && !READ_ONCE(uemm->dead)) {
		mmap_read_lock(mm);
		ret = user_event_enabler_write(mm, enabler,
					       user_event_status(enabler->event));
		mmap_read_unlock(mm);
		if (ret && fault->attempt + 1 < MAX_FAULT_ATTEMPTS)
			user_event_fault_queue(uemm, enabler,
					       fault->attempt + 1);
	}
	mutex_unlock(ue_ksyms.event_mutex);

out_mm:
	mmput(mm);
out:
	user_event_mm_put(uemm);
	kfree(fault);
}

static void user_event_fault_queue(struct user_event_mm *uemm,
				   struct user_event_enabler *enabler,
				   int attempt)
{
	struct user_event_fault *fault;

	fault = kzalloc(sizeof(*fault), GFP_KERNEL);
	if (!fault)
		return;

	INIT_WORK(&fault->work, user_event_fault_work);
	user_event_mm_get(uemm);
	fault->uemm = uemm;
	fault->uaddr = enabler->uaddr;
	fault->ubit = enabler->ubit;
	fault->attempt = attempt;
	queue_work(user_event_mm_wq, &fault->work);
}

/*
 * Writes the event's new state into every address space that registered
 * it. Called under event_mutex whenever a probe attaches or detaches.
 */
void user_event_enablers_update(struct user_event *user)
{
	struct user_event_enabler *enabler;
	struct user_event_mm *uemm, *next;
	bool enabled = user_event_status(user);
	LIST_HEAD(mms);
	int bkt;

	lockdep_assert_held(ue_ksyms.event_mutex);

	rcu_read_lock();
	hash_for_each_rcu(user_event_mms, bkt, uemm, node)
		if (refcount_inc_not_zero(&uemm->refcnt))
			list_add_tail(&uemm->update_link, &mms);
	rcu_read_unlock();

	list_for_each_entry_safe(uemm, next, &mms, update_link) {
		list_del_init(&uemm->update_link);

		if (!READ_ONCE(uemm->dead) && mmget_not_zero(uemm->mm)) {
			mmap_read_lock(uemm->mm);
			list_for_each_entry(enabler, &uemm->enablers, link)
				if (enabler->event == user && !enabler->del_seq &&
				    user_event_enabler_write(uemm->mm, enabler,
							     enabled))
					user_event_fault_queue(uemm, enabler, 0);
			mmap_read_unlock(uemm->mm);
			mmput(uemm->mm);
		}

		user_event_mm_put(uemm);
	}
}

bool user_event_enabler_exists(unsigned long uaddr, u8 ubit)
{
	struct user_event_mm *uemm;
	bool found = false;

	mutex_lock(ue_ksyms.event_mutex);
	rcu_read_lock();
	uemm = user_event_mm_find(current->mm);
	if (uemm)
		found = user_event_enabler_find(uemm, uaddr, ubit);
	rcu_read_unlock();
	mutex_unlock(ue_ksyms.event_mutex);

	return found;
}

/*
 * Adds an enabler for @user in the calling process and writes the current
 * state into it. The bit must be writable now (it is faulted in here, in
 * the caller's own context), otherwise the registration fails.
 */
int user_event_enabler_create(struct user_event *user,
			      const struct user_write_reg *reg)
{
	struct user_event_enabler *enabler;
	struct mm_struct *mm = current->mm;
	struct user_event_mm *uemm;
	unsigned long offset;
	int attempt, ret = -EFAULT;

	enabler = kzalloc(sizeof(*enabler), GFP_KERNEL_ACCOUNT);
	if (!enabler)
		return -ENOMEM;

	uemm = user_event_mm_current();
	if (!uemm) {
		kfree(enabler);
		return -ENOMEM;
	}

	enabler->uaddr = reg->enable_addr;
	enabler->ubit = reg->enable_bit;
	enabler->size = reg->enable_size;
	enabler->addr = ALIGN_DOWN(enabler->uaddr, sizeof(long));
	offset = enabler->uaddr - enabler->addr;
#ifdef __BIG_ENDIAN
	offset = sizeof(long) - enabler->size - offset;
#endif
	enabler->bit = enabler->ubit + offset * BITS_PER_BYTE;
	user_event_get(user);
	enabler->event = user;

	for (attempt = 0; attempt < MAX_FAULT_ATTEMPTS; attempt++) {
		mutex_lock(ue_ksyms.event_mutex);
		if (uemm->nr_enablers >= max_enablers) {
			mutex_unlock(ue_ksyms.event_mutex);
			ret = -EMFILE;
			break;
		}
		mmap_read_lock(mm);
		ret = user_event_enabler_write(mm, enabler,
					       user_event_status(user));
		mmap_read_unlock(mm);
		if (!ret)
			user_event_enabler_add(uemm, enabler);
		mutex_unlock(ue_ksyms.event_mutex);

		if (!ret || !user_event_fault_in(mm, enabler->uaddr))
			break;
	}

	if (ret) {
		user_event_put(user);
		kfree(enabler);
	}

	user_event_mm_put(uemm);
	return ret;
}

int user_event_enabler_remove(const struct user_write_unreg *unreg)
{
	struct user_event_enabler *enabler, word;
	struct mm_struct *mm = current->mm;
	struct user_event_mm *uemm;
	bool keep = false;
	int ret;

	rcu_read_lock();
	uemm = user_event_mm_find(mm);
	if (uemm && !refcount_inc_not_zero(&uemm->refcnt))
		uemm = NULL;
	rcu_read_unlock();
	if (!uemm)
		return -ENOENT;

	mutex_lock(ue_ksyms.event_mutex);
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
		keep = atomic_read(&uemm->forks_pending);
		if (!keep) {
			list_del_rcu(&enabler->link);
			hash_del(&enabler->hnode);
		}
		word = *enabler;
		mmap_read_lock(mm);
		ret = user_event_enabler_write(mm, enabler, false);
		mmap_read_unlock(mm);
	}
	mutex_unlock(ue_ksyms.event_mutex);

	if (!enabler) {
		user_event_mm_put(uemm);
		return -ENOENT;
	}

	/* No longer updated: clear the bit even if it must fault in */
	if (ret && user_event_fault_in(mm, word.uaddr)) {
		mmap_read_lock(mm);
		user_event_enabler_write(mm, &word, false);
		mmap_read_unlock(mm);
	}

	if (!keep)
		user_event_enabler_free(enabler);
	user_event_mm_put(uemm);
	return 0;
}

/*
 * Copies the enablers of @parent into the record of the child's address
 * space @mm (held), then writes every bit of the child that disagrees with
 * its event: a state change written to the parent after dup_mmap() copied
 * its memory is not in the child's copy of the words. Words that are
 * already right are only read, so their pages stay shared with the parent.
 */
static void user_event_mm_fork_copy(struct user_event_mm *parent,
				    struct mm_struct *mm, u64 seq)
{
	struct user_event_enabler *enabler, *copy;
	struct user_event_mm *uemm;
	bool enabled;

	uemm = user_event_mm_get_or_create(mm);
	if (!uemm) {
		pr_warn_ratelimited("out of memory copying enablers at fork\n");
		return;
	}

	mutex_lock(ue_ksyms.event_mutex);
	if (READ_ONCE(uemm->dead))
		goto out;

	/* Those the parent had at fork, even if it dropped them since */
	list_for_each_entry(enabler, &parent->enablers, link) {
		if (enabler->add_seq > seq ||
		    (enabler->del_seq && enabler->del_seq < seq))
			continue;
		/* The child registered this word itself already */
		if (user_event_enabler_find(uemm, enabler->uaddr,
					    enabler->ubit))
			continue;
		if (uemm->nr_enablers >= max_enablers) {
			pr_warn_ratelimited("max_enablers reached copying enablers at fork\n");
			break;
		}
		copy = kmemdup(enabler, sizeof(*enabler), GFP_KERNEL_ACCOUNT);
		if (!copy)
			break;
		user_event_get(copy->event);
		user_event_enabler_add(uemm, copy);
	}

	mmap_read_lock(mm);
	list_for_each_entry(enabler, &uemm->enablers, link) {
		if (enabler->del_seq)
			continue;
		enabled = user_event_status(enabler->event);
		if (user_event_enabler_is(mm, enabler, enabled))
			continue;
		if (user_event_enabler_write(mm, enabler, enabled))
			user_event_fault_queue(uemm, enabler, 0);
	}
	mmap_read_unlock(mm);
out:
	mutex_unlock(ue_ksyms.event_mutex);
	user_event_mm_put(uemm);
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

	mutex_lock(ue_ksyms.event_mutex);
	/* A fork that started since needs none of them: it came later */
	if (!parent->torn_down)
		user_event_mm_reap(parent, &gone);
	mutex_unlock(ue_ksyms.event_mutex);

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
		mmput(mm);
	}
	mmdrop(mm);

	user_event_mm_fork_done(parent);
	user_event_mm_refill(parent);
	user_event_mm_put(parent);
	kfree(fork);
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
	if (task_work_add(child, &fork->twork, TWA_RESUME)) {
		/* Only an exiting task refuses task work */
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
		if (task_work_add(current, &uemm->refill_twork, TWA_RESUME)) {
			clear_bit(0, &uemm->refill_queued);
			user_event_mm_put(uemm);
		}
	}
}

static void user_event_find_fork_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		fork_tp = tp;
}

int user_events_mm_init(void)
{
	int ret;

	for_each_kernel_tracepoint(user_event_find_fork_tp, NULL);
	if (!fork_tp) {
		pr_err("tracepoint sched_process_fork not found\n");
		return -ENOENT;
	}

	user_event_mm_wq = alloc_workqueue("user_events_mm", WQ_UNBOUND, 0);
	if (!user_event_mm_wq)
		return -ENOMEM;

	ret = tracepoint_probe_register(fork_tp, user_event_fork_probe, NULL);
	if (ret)
		destroy_workqueue(user_event_mm_wq);

	return ret;
}

void user_events_mm_exit(void)
{
	struct user_event_mm *uemm;
	struct hlist_node *tmp;
	int bkt;

	tracepoint_probe_unregister(fork_tp, user_event_fork_probe, NULL);
	tracepoint_synchronize_unregister();

	/* Let pending registrations and faults finish, then drop the rest */
	flush_workqueue(user_event_mm_wq);
	hash_for_each_safe(user_event_mms, bkt, tmp, uemm, node)
		user_event_mm_kill(uemm);
	flush_workqueue(user_event_mm_wq);
	/* Teardowns queued frees */
	flush_workqueue(user_event_mm_wq);

	destroy_workqueue(user_event_mm_wq);
	mmu_notifier_synchronize();
}
