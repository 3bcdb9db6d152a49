// SPDX-License-Identifier: GPL-2.0
/*
 * Fork inheritance of remote write enablers: a fork child gets its own
 * copy of its parent's enablers, charged to its uid, with its bits right
 * before its first instruction in user space (Documentation/lifetimes.rst,
 * "Fork"). Also the probes on the scheduler's fork, exit and exec
 * tracepoints, which tell the records of user_events_mm.c what processes do.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>

#include "user_events_mm.h"

struct linux_binprm;

/*
 * Copies the enablers @parent had at fork @seq under RCU, dropped only at
 * one this fork copies, which stays listed while it is pending. How many.
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
		if (enabler->add_seq >= seq ||
		    (enabler->del_seq && enabler->del_seq <= seq))
			continue;
		if (n >= max_enablers) {
			pr_warn_ratelimited("max_enablers reached copying enablers at fork\n");
			break;
		}
		rcu_read_unlock();
		copy = kzalloc(sizeof(*copy), GFP_KERNEL_ACCOUNT);
		cond_resched();
		rcu_read_lock();
		if (!copy) {
			pr_warn_ratelimited("out of memory copying enablers at fork\n");
			break;
		}
		copy->uaddr = enabler->uaddr;
		copy->addr = enabler->addr;
		copy->ubit = enabler->ubit;
		copy->bit = enabler->bit;
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
 * Charges the @n copies to the child's @payer and drops those past its
 * quota, clearing their bits in the child where that needs no wait.
 * Returns how many the child keeps.
 */
static unsigned int user_event_mm_fork_charge(struct mm_struct *mm,
					      struct user_event_payer *payer,
					      struct list_head *copies,
					      unsigned int n)
{
	struct user_event_enabler *enabler, *next;
	unsigned int keep, i = 0;

	keep = user_event_charge_upto(payer, UE_QUOTA_ENABLERS, n);
	if (keep == n)
		return n;

	list_for_each_entry_safe(enabler, next, copies, free_link) {
		if (i++ < keep)
			continue;
		list_del(&enabler->free_link);
		mmap_read_lock(mm);
		user_event_enabler_write(mm, enabler, false);
		mmap_read_unlock(mm);
		user_event_put(enabler->event);
		kfree(enabler);
		if (i % FORK_COPY_BATCH == 0)
			cond_resched();
	}
	pr_warn_ratelimited("pid %d inherits %u of %u enablers: max_enablers_per_uid\n",
			    task_pid_nr(current), keep, n);
	return keep;
}

/* Gives the child's @mm its copies: lifetimes.rst, "Fork" */
static void user_event_mm_fork_copy(struct user_event_mm *parent,
				    struct mm_struct *mm, u64 seq)
{
	struct user_event_enabler *enabler, *next;
	struct user_event_mm *uemm, *found;
	struct user_event_payer payer;
	LIST_HEAD(copies);
	unsigned int n;
	u64 changes;

	user_event_payer_current(&payer);
	n = user_event_mm_fork_snapshot(parent, seq, &payer, &copies);
	if (!n || !user_event_mm_fork_charge(mm, &payer, &copies, n))
		return;

	uemm = user_event_mm_alloc(mm);
	if (!uemm) {
		pr_warn_ratelimited("out of memory copying enablers at fork\n");
		user_event_enablers_free(&copies);
		return;
	}

	changes = atomic64_read(&user_event_changes);
	smp_rmb();	/* the state read below is at least as new */

	mutex_lock(&uemm->lock);
	list_for_each_entry_safe(enabler, next, &copies, free_link) {
		list_del(&enabler->free_link);
		user_event_enabler_add(uemm, enabler);
	}
	user_event_mm_resync(uemm);
	mutex_unlock(&uemm->lock);

	found = user_event_mm_publish(uemm);
	if (found != uemm) {
		/* Only the child makes its record, and not before this runs */
		user_event_mm_put(found);
		mutex_lock(&uemm->lock);
		WRITE_ONCE(uemm->dead, true);
		user_event_mm_reap(uemm, &copies);
		mutex_unlock(&uemm->lock);
		user_event_enablers_free(&copies);
	} else if (atomic64_read(&user_event_changes) != changes) {
		mutex_lock(&uemm->lock);
		user_event_mm_resync(uemm);
		mutex_unlock(&uemm->lock);
	}
	user_event_mm_refill(uemm);
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

	mutex_lock(&parent->lock);
	/*
	 * A fork that started since may be copying: leave the enablers to
	 * the last fork. Orders this read after the unregistrations seen
	 * under the lock.
	 */
	smp_mb();
	if (!parent->torn_down && !atomic_read(&parent->forks_pending))
		user_event_mm_reap(parent, &gone);
	mutex_unlock(&parent->lock);

	user_event_enablers_free(&gone);
}

/* Task work of the child, before it first runs in user space */
static void user_event_fork_twork(struct callback_head *twork)
{
	struct user_event_fork *fork = container_of(twork,
						    struct user_event_fork,
						    twork);
	struct user_event_mm *parent = fork->parent;

	/* A child killed before it ran (past exit_mm()) has nothing to copy to */
	if (current->mm)
		user_event_mm_fork_copy(parent, current->mm, fork->seq);
	kfree(fork);

	user_event_mm_fork_done(parent);
	user_event_mm_refill(parent);
	user_event_twork_done(parent);
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

/*
 * sched_process_fork, in the parent (current), preemption disabled,
 * before the child runs: the child's task work copies the enablers.
 */
static void user_event_fork_probe(void *data, struct task_struct *parent,
				  struct task_struct *child)
{
	struct user_event_fork *fork;
	struct user_event_mm *uemm;

	if (!parent->mm || !child->mm || parent->mm == child->mm ||
	    parent != current)
		return;

	uemm = user_event_mm_lookup_get(parent->mm);
	if (!uemm)
		return;
	if (list_empty(&uemm->enablers))
		goto put;

	fork = user_event_mm_take_spare(uemm);
	if (!fork) {
		pr_warn_ratelimited("too many forks at once: pid %d does not inherit enablers\n",
				    child->pid);
		goto put;
	}

	fork->parent = uemm;
	/* Pending first: an unregistration numbered after us keeps its enabler */
	atomic_inc(&uemm->forks_pending);
	fork->seq = atomic64_inc_return(&uemm->seq);
	init_task_work(&fork->twork, user_event_fork_twork);
	if (!user_event_twork_add(uemm, child, &fork->twork, TWA_RESUME)) {
		/* Only an exiting task refuses task work */
		atomic_dec(&uemm->forks_pending);
		user_event_mm_put_spare(uemm, fork);
		goto put;
	}

	if (!test_and_set_bit(UEMM_REFILL_QUEUED, &uemm->twork_flags) &&
	    !user_event_twork_add(uemm, current, &uemm->refill_twork,
				  TWA_RESUME))
		clear_bit(UEMM_REFILL_QUEUED, &uemm->twork_flags);
put:
	user_event_mm_put(uemm);
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

/* Registered in this order, unregistered in the reverse */
static const struct {
	const char *name;
	void *probe;
} user_event_tps[] = {
	{ "sched_process_exit", user_event_exit_probe },
	{ "sched_process_exec", user_event_exec_probe },
	{ "sched_process_fork", user_event_fork_probe },
};

static struct tracepoint *user_event_tp[ARRAY_SIZE(user_event_tps)];

static void user_event_find_tps(struct tracepoint *tp, void *priv)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(user_event_tps); i++)
		if (!strcmp(tp->name, user_event_tps[i].name))
			user_event_tp[i] = tp;
}

static void user_event_unregister_tps(int n)
{
	while (n--)
		tracepoint_probe_unregister(user_event_tp[n],
					    user_event_tps[n].probe, NULL);
	tracepoint_synchronize_unregister();
}

/* Arms the probes, after user_events_mm_init() */
int user_events_fork_init(void)
{
	int i, ret;

	for_each_kernel_tracepoint(user_event_find_tps, NULL);
	for (i = 0; i < ARRAY_SIZE(user_event_tps); i++) {
		if (!user_event_tp[i]) {
			pr_err("tracepoint %s not found\n",
			       user_event_tps[i].name);
			return -ENOENT;
		}
	}

	for (i = 0; i < ARRAY_SIZE(user_event_tps); i++) {
		ret = tracepoint_probe_register(user_event_tp[i],
						user_event_tps[i].probe, NULL);
		if (ret) {
			user_event_unregister_tps(i);
			return ret;
		}
	}
	return 0;
}

/* Before user_events_mm_exit(), which waits for the task works they queue */
void user_events_fork_exit(void)
{
	user_event_unregister_tps(ARRAY_SIZE(user_event_tps));
}
