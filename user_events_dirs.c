// SPDX-License-Identifier: GPL-2.0
/*
 * A removed event's tracefs directory, still held, on kernels without
 * eventfs (5.10, 6.1).
 *
 * There an event's files in tracefs (enable, filter, trigger, hist,
 * format, ...) keep the event's trace_event_file, or its call, as the
 * inode's i_private, and the removal of the event does not clear it. An
 * open() that looked a file up before the removal runs the file's open
 * after it: 6.1's tracing_open_file_tr() reads file->tr before it takes
 * event_mutex and looks at EVENT_FILE_FL_FREED, in a trace_event_file
 * that the removal freed when nobody had it open; a trigger file opened
 * before the removal writes through it; a format file reads the call.
 * Upstream fixed it with eventfs (6.6). The core's own dynamic events
 * still have it on these kernels (Documentation/security.rst); for the
 * module's calls (user events and the purge event, user_events_purge.c)
 * the module keeps what such a late open reaches until nothing can reach
 * it:
 *
 *  - A kprobe on remove_event_file_dir(), the function that removes an
 *    event's directory in one instance (at the event's removal, and at an
 *    instance's), under event_mutex, sees each trace_event_file of ours
 *    before its directory goes and makes a "ghost" of it: a reference of
 *    the file (event_file_get(): the removal's put then does not free it,
 *    only marks it freed, and a late open fails with ENODEV, as on 6.12),
 *    a reference of the directory's inode (ihold(): atomic, where dget()
 *    takes d_lock), and a hold of what the call
 *    lives in: the user event's memory (user_event_mem_get(), which holds
 *    the module), or the module itself for the purge event, module data.
 *    No file's i_private is cleared but the trigger's (ghost_hide_trigger()
 *    says why): a NULL i_private is an oops in the open of 6.1.y's hist
 *    file (tracing_open_file_tr()).
 *  - After the removal, the directory's children are unhashed: nothing can
 *    look one up again, and each lives only while somebody holds it (a
 *    path walk in progress, an open file, an O_PATH descriptor) and holds
 *    the directory's dentry while it lives; that dentry dies at its last
 *    put and puts its inode. So once the inode's count is the ghost's
 *    alone, no late open can come any more, and the ghost lets go.
 *    user_events_dirs_done() does that right after a removal of ours for
 *    the directories nobody holds; a delayed work retries the others (and
 *    those of an instance's removal), 10 ms after each new ghost, then
 *    twice as long each time, up to a second.
 *
 * The kprobe handler runs with preemption disabled, in the remover's
 * context, which holds event_mutex (every caller of
 * remove_event_file_dir() does): it allocates nothing and takes no lock
 * of its own; the only lock it takes is the directory's d_lock, to hide
 * the trigger file, and on PREEMPT_RT, where that is a sleeping lock, only
 * with a trylock (a failed one keeps the file and the call for good).
 * Ghosts come from a pool filled ahead in process context, and the pool
 * and the ghost list are covered by event_mutex. The pool
 * holds enough for the worst removal that can come next: an instance's
 * (one file per call of ours) or one of ours (one file per instance, as
 * many as the largest removal seen so far, plus GHOST_SLACK new ones).
 *
 * Failing safe: when the kprobe does not run (kprobes disarmed through
 * debugfs) or the pool is empty, a late open would meet freed memory.
 * Before each removal of ours the module checks that its kprobes are
 * armed (ghost_canary()) and refuses the removal with EBUSY if not; after
 * it, a removal the kprobe did not see (or saw only in part, the pool
 * empty) keeps the call's memory and the module for good: the module then
 * stays loaded until reboot, and says so once. An instance's removal while
 * kprobes are disarmed is not seen at all (Documentation/security.rst).
 *
 * Who can hold a ghost, and so the module: whoever can reach an event's
 * directory in tracefs, root unless an administrator opened tracefs to
 * others. Unload: every ghost holds the module, so none is left at module
 * exit; the kprobes are unregistered and the work cancelled there.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/trace_events.h>
#include <linux/workqueue.h>

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"

#ifndef UE_HAVE_EVENTFS

struct user_event_ghost {
	struct list_head link;			/* ghost_pool or ghost_list */
	struct trace_event_file *file;		/* event_file_get() */
	struct inode *dir;			/* ihold() of the directory's */
	bool purge;				/* holds the module, not an event */
};

/* New instances a removal of ours may meet beyond the largest seen */
#define GHOST_SLACK	16

/* All under event_mutex, the kprobe handler's included */
static LIST_HEAD(ghost_pool);
static unsigned int ghost_pool_size;
static LIST_HEAD(ghost_list);
static unsigned int ghost_calls;	/* our calls the core has */
static unsigned int ghost_files_max = 1; /* files one removal of ours met */
static const struct trace_event_call *ghost_removing;
static unsigned int ghost_removing_files;
static unsigned long ghost_canary_hits;
static bool ghost_kept;			/* the handler kept a call for good */

static bool ghost_probe_registered;

#define GHOST_POLL_MIN	(HZ / 100 ?: 1)
#define GHOST_POLL_MAX	HZ
static unsigned long ghost_poll = GHOST_POLL_MIN;

static void user_events_dirs_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ghost_work, user_events_dirs_work_fn);

/* What a ghost of @call's file holds, besides the file and the dentry */
static void ghost_hold(struct trace_event_call *call, bool purge)
{
	if (purge)
		__module_get(THIS_MODULE);
	else
		user_event_mem_get(call);
}

static void ghost_unhold(struct trace_event_call *call, bool purge)
{
	if (purge)
		module_put(THIS_MODULE);
	else
		user_event_mem_put(call);
}

/*
 * The trigger file of a directory being removed forgets its event file:
 * its open, read and write look at i_private under event_mutex and fail
 * with ENODEV when it is NULL. Keeping the file alive is not enough there:
 * a trigger refused by the event's reg leaves the file's trigger and
 * soft-mode counts raised, so the next one skips reg and attaches to the
 * removed file (a hist variable or an enable_event trigger that outlives
 * it; red team red11). Every other file keeps i_private: their opens go
 * through tracing_open_file_tr() (enable, filter, hist, inject), which
 * dereferences it and then sees EVENT_FILE_FL_FREED, or read the call
 * (format), which the ghost keeps. event_mutex held (the remover's), as
 * by the trigger file's readers.
 */
/* Whether it did (PREEMPT_RT: the lock may be taken) */
static bool ghost_hide_trigger(struct dentry *dir)
{
	struct dentry *child;

	/*
	 * Preemption is disabled here: on PREEMPT_RT d_lock is a sleeping
	 * lock, which may only be tried
	 */
	if (IS_ENABLED(CONFIG_PREEMPT_RT)) {
		if (!spin_trylock(&dir->d_lock))
			return false;
	} else {
		spin_lock(&dir->d_lock);
	}
	list_for_each_entry(child, &dir->d_subdirs, d_child)
		if (d_really_is_positive(child) &&
		    !strcmp(child->d_name.name, "trigger"))
			d_inode(child)->i_private = NULL;
	spin_unlock(&dir->d_lock);
	return true;
}

/* remove_event_file_dir(file): under event_mutex, preemption disabled */
static int ghost_probe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct trace_event_file *file;
	struct trace_event_call *call;
	struct user_event_ghost *ghost;
	bool purge;

	file = (struct trace_event_file *)regs_get_kernel_argument(regs, 0);
	if (!file)
		return 0;
	call = file->event_call;
	purge = user_event_call_is_purge(call);
	if (!purge && !user_event_call_is_ours(call))
		return 0;
	if (call == ghost_removing)
		ghost_removing_files++;
	if (!file->dir)
		return 0;

	ghost = list_first_entry_or_null(&ghost_pool, struct user_event_ghost,
					 link);
	if (!ghost || (!purge && !ghost_hide_trigger(file->dir))) {
		/*
		 * The pool is too small, or (PREEMPT_RT) the trigger could
		 * not be hidden: keep the file and the call for good
		 */
		ue_event_file_get(file);
		ghost_hold(call, purge);
		WRITE_ONCE(ghost_kept, true);
		return 0;
	}
	list_move_tail(&ghost->link, &ghost_list);
	ghost_pool_size--;

	ue_event_file_get(file);
	ghost->file = file;
	ghost->dir = d_inode(file->dir);
	ihold(ghost->dir);
	ghost->purge = purge;
	ghost_hold(call, purge);

	/* An instance's removal calls nothing of ours: the work looks soon */
	WRITE_ONCE(ghost_poll, GHOST_POLL_MIN);
	schedule_delayed_work(&ghost_work, GHOST_POLL_MIN);
	return 0;
}

static struct kprobe ghost_probe = {
	.symbol_name	= "remove_event_file_dir",
	.pre_handler	= ghost_probe_pre,
};

/*
 * Whether kprobes run: a kprobe on this function counts its calls. Root
 * can disarm every kprobe at once (debug/kprobes/enabled), which leaves
 * them registered and silent.
 */
static noinline void ghost_canary(void)
{
	barrier();
}

static int ghost_canary_pre(struct kprobe *kp, struct pt_regs *regs)
{
	WRITE_ONCE(ghost_canary_hits, ghost_canary_hits + 1);
	return 0;
}

static struct kprobe ghost_canary_probe = {
	.pre_handler	= ghost_canary_pre,
};

/* event_mutex held */
static bool ghost_probes_armed(void)
{
	unsigned long before = READ_ONCE(ghost_canary_hits);

	ghost_canary();
	return READ_ONCE(ghost_canary_hits) != before;
}

/*
 * Nothing can reach the directory any more: its dentry is gone (a
 * removed dentry dies at its last put, and each child, each open file,
 * each O_PATH descriptor or cwd under it held it), and with it the
 * dentry's reference of the inode: only the ghost's is left.
 */
static bool ghost_unreachable(struct user_event_ghost *ghost)
{
	return atomic_read(&ghost->dir->i_count) == 1;
}

/* Enough free ghosts for the next removal. event_mutex held. */
static unsigned int ghost_pool_target(void)
{
	return max(ghost_calls + 1, ghost_files_max + GHOST_SLACK);
}

static int ghost_pool_fill(void)
{
	struct user_event_ghost *ghost;

	ue_lockdep_assert_event_mutex();

	while (ghost_pool_size < ghost_pool_target()) {
		ghost = kzalloc(sizeof(*ghost), GFP_KERNEL);
		if (!ghost)
			return -ENOMEM;
		list_add(&ghost->link, &ghost_pool);
		ghost_pool_size++;
	}
	return 0;
}

/* Lets go of a ghost's holds; its struct goes back to the pool */
static void ghost_release(struct user_event_ghost *ghost)
{
	/* Read while the file is ours: the put below may free it */
	struct trace_event_call *call = ghost->file->event_call;
	bool purge = ghost->purge;

	ue_lockdep_assert_event_mutex();

	ue_event_file_put(ghost->file);
	iput(ghost->dir);
	if (ghost_pool_size < ghost_pool_target()) {
		list_move(&ghost->link, &ghost_pool);
		ghost_pool_size++;
	} else {
		list_del(&ghost->link);
		kfree(ghost);
	}
	/* Last: it may drop the module reference the work runs on */
	ghost_unhold(call, purge);
}

/* Releases the ghosts nobody can reach; whether some are left */
static bool ghosts_release_unreachable(void)
{
	struct user_event_ghost *ghost, *next;

	ue_lockdep_assert_event_mutex();

	list_for_each_entry_safe(ghost, next, &ghost_list, link)
		if (ghost_unreachable(ghost))
			ghost_release(ghost);
	return !list_empty(&ghost_list);
}

static void user_events_dirs_work_fn(struct work_struct *work)
{
	unsigned long next;
	bool left;

	ue_event_mutex_lock();
	left = ghosts_release_unreachable();
	ue_event_mutex_unlock();
	if (!left)
		return;
	next = min(READ_ONCE(ghost_poll) * 2, (unsigned long)GHOST_POLL_MAX);
	WRITE_ONCE(ghost_poll, next);
	schedule_delayed_work(&ghost_work, next);
}

/*
 * Before the core adds (@visible) or removes one of our calls, under
 * event_mutex: fills the pool, and refuses a removal while kprobes are
 * disarmed (EBUSY), since no ghost could then keep what a late open of
 * the removed directory reaches.
 */
int user_events_dirs_prepare(const struct trace_event_call *call,
			     bool visible)
{
	int ret;

	ue_lockdep_assert_event_mutex();

	if (!ghost_probe_registered)
		return 0;
	ret = ghost_pool_fill();
	if (ret || visible)
		return ret;
	if (!ghost_probes_armed()) {
		pr_warn_ratelimited("kprobes are disarmed (debug/kprobes/enabled): events are not removed until they are armed again\n");
		return -EBUSY;
	}
	ghost_removing = call;
	ghost_removing_files = 0;
	return 0;
}

/*
 * After the core added or removed @call (@ret its result), under
 * event_mutex. A removal the kprobe did not see in full keeps the call's
 * memory and the module for good: what a late open of its directories
 * reaches stays valid.
 */
void user_events_dirs_done(struct trace_event_call *call, bool visible,
			   int ret)
{
	bool purge = user_event_call_is_purge(call);

	ue_lockdep_assert_event_mutex();

	if (!ghost_probe_registered || ret)
		goto out;
	if (visible) {
		ghost_calls++;
		goto out;
	}
	ghost_calls--;
	ghost_files_max = max(ghost_files_max, ghost_removing_files);
	if (!ghost_removing_files || !ghost_probes_armed()) {
		ghost_hold(call, purge);
		pr_err_once("a removal of an event's directories was not seen by the kprobe (kprobes disarmed): its memory and the module are kept until reboot\n");
	}
	if (READ_ONCE(ghost_kept)) {
		WRITE_ONCE(ghost_kept, false);
		pr_err_once("a removed event directory could not be guarded (ghost pool empty, or a contended lock on PREEMPT_RT): its memory and the module are kept until reboot\n");
	}
	if (ghosts_release_unreachable()) {
		WRITE_ONCE(ghost_poll, GHOST_POLL_MIN);
		mod_delayed_work(system_wq, &ghost_work, GHOST_POLL_MIN);
	}
out:
	ghost_removing = NULL;
}

int user_events_dirs_init(void)
{
	int ret;

	if (!ue_have_event_file_refs()) {
		pr_warn("no event_file_get() in this kernel: a late open of a deleted event's files is not guarded\n");
		return 0;
	}

	ghost_canary_probe.addr = (kprobe_opcode_t *)ghost_canary;
	ret = register_kprobe(&ghost_canary_probe);
	if (ret) {
		pr_warn("cannot probe the module's own ghost_canary() (%d): a late open of a deleted event's files is not guarded\n",
			ret);
		return 0;
	}
	ret = register_kprobe(&ghost_probe);
	if (ret) {
		unregister_kprobe(&ghost_canary_probe);
		pr_warn("cannot probe remove_event_file_dir() (%d): a late open of a deleted event's files is not guarded\n",
			ret);
		return 0;
	}
	ghost_probe_registered = true;
	return 0;
}

void user_events_dirs_exit(void)
{
	struct user_event_ghost *ghost, *next;

	if (!ghost_probe_registered)
		return;
	ghost_probe_registered = false;
	unregister_kprobe(&ghost_probe);
	unregister_kprobe(&ghost_canary_probe);
	cancel_delayed_work_sync(&ghost_work);
	/* Each held the module */
	WARN_ON(!list_empty(&ghost_list));
	list_for_each_entry_safe(ghost, next, &ghost_pool, link)
		kfree(ghost);
	ghost_pool_size = 0;
}

#else /* UE_HAVE_EVENTFS */

/* eventfs: a removed event's files fail their late opens themselves */
int user_events_dirs_prepare(const struct trace_event_call *call,
			     bool visible)
{
	return 0;
}

void user_events_dirs_done(struct trace_event_call *call, bool visible,
			   int ret)
{
}

int user_events_dirs_init(void)
{
	return 0;
}

void user_events_dirs_exit(void)
{
}

#endif /* UE_HAVE_EVENTFS */
