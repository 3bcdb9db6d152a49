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
 * it, in a "ghost" per removed directory: a reference of the directory's
 * trace_event_file (event_file_get(): the removal's put then does not
 * free it, only marks it freed, and a late open fails with ENODEV, as on
 * 6.12), one of the directory's inode (ihold()), and a hold of what the
 * call lives in: the user event's memory (dirs_ops->hold(), which
 * holds the module), or the module itself for the purge event, module
 * data. No file's i_private is cleared but the trigger's
 * (ghost_hide_trigger() says why): a NULL i_private is an oops in the
 * open and release of 6.1.y's hist file (tracing_open_file_tr()).
 *
 * Ghosts are made two ways:
 *
 *  - When the module removes a call of its own (an event's deletion, the
 *    purge event's removal at prepare_unload), ghosts_prepare()
 *    walks tracefs first, in process context under event_mutex: the
 *    top-level events/ and every instance's, removed instances that
 *    someone still holds included (a removed dentry stays on its
 *    parent's list while it is held), and makes a ghost of each directory
 *    whose format file names the call. This needs no kprobe: it holds
 *    with kprobes disarmed (debug/kprobes/enabled), or toggled meanwhile.
 *  - When root removes an instance, the core removes our directories
 *    there without calling us: a kprobe on remove_event_file_dir(), under
 *    the remover's event_mutex, makes a ghost of each. Its handler runs
 *    with preemption disabled: the ghost comes from a pool filled ahead in
 *    process context (kzalloc(GFP_ATOMIC) if it is empty, except on
 *    PREEMPT_RT), and the only lock it takes is the directory's d_lock
 *    (on PREEMPT_RT, where that lock sleeps, only tried). What it cannot
 *    guard is kept for good (ghost_keep()), and the module with it. An
 *    instance removed while kprobes are disarmed is not seen: its files of
 *    our events are then the core's own case, but its directories are
 *    found by the walk when the call is removed, so the call stays valid.
 *
 * After the removal, the directory's children are unhashed: nothing can
 * look one up again, and each lives only while somebody holds it (a path
 * walk in progress, an open file, an O_PATH descriptor) and holds the
 * directory's dentry while it lives; that dentry dies at its last put and
 * puts its inode. So once the inode's count is the ghost's alone, no late
 * open can come any more, and the ghost lets go: right after a removal of
 * ours for the directories nobody holds, else from a delayed work, 10 ms
 * after each new ghost, then twice as long each time, up to a second.
 *
 * Who can hold a ghost, and so the module: whoever can reach an event's
 * directory in tracefs, root unless an administrator opened tracefs to
 * others. Locking: the pool, the ghost lists and the counters are covered
 * by event_mutex, which every caller of remove_event_file_dir() holds.
 * Unload: every ghost holds the module, so none is left at module exit;
 * the kprobe is unregistered and the work cancelled there.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
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
#include "user_events_ksyms_trace.h"

/* What the module's calls are; set at init (user_events_main.c) */
static const struct user_events_dirs_ops *dirs_ops;

/*
 * The credentials events are added and removed with: the loader's (root),
 * made once at load time so that removing an event allocates nothing.
 */
static const struct cred *dirs_cred;

#ifndef UE_HAVE_EVENTFS

struct user_event_ghost {
	struct list_head link;			/* ghost_pool, pending, list */
	struct trace_event_call *call;		/* held: ghost_hold() */
	struct trace_event_file *file;		/* event_file_get(), or NULL */
	struct inode *dir;			/* ihold() */
	struct dentry *dentry;			/* dget(), until the removal */
	bool purge;				/* holds the module, not an event */
};

/* New calls an instance's removal may meet before the pool is refilled */
#define GHOST_SLACK	16

/* All under event_mutex, the kprobe handler's included */
static LIST_HEAD(ghost_pool);
static unsigned int ghost_pool_size;
static LIST_HEAD(ghost_list);
static LIST_HEAD(ghost_pending);	/* the removal of ours in progress */
static unsigned int ghost_calls;	/* our calls the core has */
static struct trace_event_call *ghost_removing;
static unsigned int ghost_kept;		/* kept for good, not logged yet */
static struct dentry *ghost_root;	/* tracefs's root: dget() */

static bool ghost_enabled;		/* the kernel has event file refs */
static bool ghost_probe_registered;

#define GHOST_POLL_MIN	(HZ / 100 ?: 1)
#define GHOST_POLL_MAX	HZ
static unsigned long ghost_poll = GHOST_POLL_MIN;

static void user_events_dirs_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ghost_work, user_events_dirs_work_fn);

/* What a ghost of @call's directory holds, besides the file and inode */
static void ghost_hold(struct trace_event_call *call, bool purge)
{
	if (purge)
		__module_get(THIS_MODULE);
	else
		dirs_ops->hold(call);
}

static void ghost_unhold(struct trace_event_call *call, bool purge)
{
	if (purge)
		module_put(THIS_MODULE);
	else
		dirs_ops->unhold(call);
}

/*
 * The trigger file of a removed directory forgets its event file: its
 * open, read and write look at i_private under event_mutex and fail with
 * ENODEV when it is NULL. Keeping the file alive is not enough there: a
 * trigger refused by the event's reg leaves the file's trigger and
 * soft-mode counts raised, so the next one skips reg and attaches to the
 * removed file (a hist variable or an enable_event trigger that outlives
 * it; red team red11). Every other file keeps i_private: their opens go
 * through tracing_open_file_tr() (enable, filter, hist, inject), which
 * dereferences it and then sees EVENT_FILE_FL_FREED, or read the call
 * (format), which the ghost keeps. event_mutex held, as by the trigger
 * file's readers. @atomic: in the kprobe handler, where on PREEMPT_RT
 * d_lock, a sleeping lock, may only be tried; whether it was hidden.
 */
static bool ghost_hide_trigger(struct dentry *dir, bool atomic)
{
	struct dentry *child;

	if (atomic && IS_ENABLED(CONFIG_PREEMPT_RT)) {
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

/* Whether a ghost of @dir is on @head */
static bool ghost_on(struct list_head *head, const struct inode *dir)
{
	struct user_event_ghost *ghost;

	list_for_each_entry(ghost, head, link)
		if (ghost->dir == dir)
			return true;
	return false;
}

/*
 * What nothing could guard (the pool empty, or d_lock contended on
 * PREEMPT_RT) is kept for good: the file, the directory's inode and the
 * call, so that a late open still meets valid memory; the module stays
 * loaded until reboot, and the work says so.
 */
static void ghost_keep(struct trace_event_file *file,
		       struct trace_event_call *call, bool purge)
{
	ue_event_file_get(file);
	ihold(d_inode(file->dir));
	ghost_hold(call, purge);
	ghost_kept++;
}

/*
 * remove_event_file_dir(file): under event_mutex, preemption disabled.
 * Makes a ghost of each directory of ours an instance's removal takes
 * (and of any our own removal's walk did not find: a backup).
 */
static int ghost_probe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct trace_event_file *file;
	struct trace_event_call *call;
	struct user_event_ghost *ghost;
	struct inode *dir;
	bool purge;

	file = (struct trace_event_file *)regs_get_kernel_argument(regs, 0);
	if (!file || !file->dir)
		return 0;
	call = file->event_call;
	purge = dirs_ops->is_purge(call);
	if (!purge && !dirs_ops->is_event(call))
		return 0;
	dir = d_inode(file->dir);
	if (call == ghost_removing && ghost_on(&ghost_pending, dir))
		return 0;

	ghost = list_first_entry_or_null(&ghost_pool, struct user_event_ghost,
					 link);
	if (ghost) {
		list_del(&ghost->link);
		ghost_pool_size--;
	} else if (!IS_ENABLED(CONFIG_PREEMPT_RT)) {
		ghost = kzalloc(sizeof(*ghost), GFP_ATOMIC | __GFP_NOWARN);
	}
	if (ghost && !purge && !ghost_hide_trigger(file->dir, true)) {
		/* Back to the pool: no kfree() here on PREEMPT_RT */
		list_add(&ghost->link, &ghost_pool);
		ghost_pool_size++;
		ghost = NULL;
	}
	if (!ghost) {
		ghost_keep(file, call, purge);
	} else {
		ue_event_file_get(file);
		ghost->file = file;
		ghost->dir = dir;
		ihold(dir);
		ghost->call = call;
		ghost->purge = purge;
		ghost_hold(call, purge);
		list_add_tail(&ghost->link, &ghost_list);
	}

	/* Nothing of ours runs after an instance's removal: the work will */
	WRITE_ONCE(ghost_poll, GHOST_POLL_MIN);
	schedule_delayed_work(&ghost_work, 0);
	return 0;
}

static struct kprobe ghost_probe = {
	.symbol_name	= "remove_event_file_dir",
	.pre_handler	= ghost_probe_pre,
};

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

/* Enough free ghosts for two instance removals. event_mutex held. */
static void ghost_pool_fill(void)
{
	struct user_event_ghost *ghost;

	ue_lockdep_assert_event_mutex();

	while (ghost_pool_size < 2 * (ghost_calls + 1) + GHOST_SLACK) {
		ghost = kzalloc(sizeof(*ghost), GFP_KERNEL | __GFP_NOWARN);
		if (!ghost)
			return;
		list_add(&ghost->link, &ghost_pool);
		ghost_pool_size++;
	}
}

/* Lets go of a ghost's holds and frees it. event_mutex held. */
static void ghost_release(struct user_event_ghost *ghost)
{
	struct trace_event_call *call = ghost->call;
	bool purge = ghost->purge;

	ue_lockdep_assert_event_mutex();

	list_del(&ghost->link);
	if (ghost->file)
		ue_event_file_put(ghost->file);
	dput(ghost->dentry);
	iput(ghost->dir);
	kfree(ghost);
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
	unsigned int kept;
	bool left;

	ue_event_mutex_lock();
	ghost_pool_fill();
	kept = ghost_kept;
	ghost_kept = 0;
	left = ghosts_release_unreachable();
	ue_event_mutex_unlock();
	if (kept)
		pr_err_ratelimited("%u removed event directories could not be guarded (no memory, or d_lock contended on PREEMPT_RT): their files and events, and the module, are kept until reboot\n",
				   kept);
	if (!left)
		return;
	next = min(READ_ONCE(ghost_poll) * 2, (unsigned long)GHOST_POLL_MAX);
	WRITE_ONCE(ghost_poll, next);
	schedule_delayed_work(&ghost_work, next);
}

/*
 * The walk of tracefs for the directories of a call of ours, before we
 * remove it: in the top-level events/ and in every instance's, removed
 * ones still held included (a removed dentry stays on its parent's list
 * while it is held). Process context, event_mutex held: no instance or
 * event directory comes or goes meanwhile.
 */

/*
 * @parent's children named @name (every one if NULL), positive and
 * alive, hashed or not, each dget(); *@out is a kmalloc()ed array of
 * them (NULL if none); how many, or -ENOMEM
 */
static int ghost_children(struct dentry *parent, const char *name,
			  struct dentry ***out)
{
	struct dentry *child, **arr;
	int n = 0, max = 0;

	*out = NULL;
	spin_lock(&parent->d_lock);
	list_for_each_entry(child, &parent->d_subdirs, d_child)
		max++;
	spin_unlock(&parent->d_lock);
	if (!max)
		return 0;
	arr = kmalloc_array(max, sizeof(*arr), GFP_KERNEL);
	if (!arr)
		return -ENOMEM;

	spin_lock(&parent->d_lock);
	list_for_each_entry(child, &parent->d_subdirs, d_child) {
		if (n == max)
			break;
		spin_lock_nested(&child->d_lock, DENTRY_D_LOCK_NESTED);
		if (child->d_lockref.count >= 0 &&
		    d_really_is_positive(child) &&
		    (!name || !strcmp(child->d_name.name, name)))
			arr[n++] = dget_dlock(child);
		spin_unlock(&child->d_lock);
	}
	spin_unlock(&parent->d_lock);
	*out = arr;
	return n;
}

static void ghost_children_put(struct dentry **arr, int n)
{
	while (n > 0)
		dput(arr[--n]);
	kfree(arr);
}

/* The i_private of @dir's child @name, or NULL */
static void *ghost_child_private(struct dentry *dir, const char *name)
{
	struct dentry *child;
	void *data = NULL;

	spin_lock(&dir->d_lock);
	list_for_each_entry(child, &dir->d_subdirs, d_child)
		if (d_really_is_positive(child) &&
		    !strcmp(child->d_name.name, name)) {
			data = d_inode(child)->i_private;
			break;
		}
	spin_unlock(&dir->d_lock);
	return data;
}

/*
 * The event file of a live directory of ours: the i_private of any of
 * its files that hold one (hist only, for the purge event; none on 5.10)
 */
static struct trace_event_file *ghost_dir_file(struct dentry *dir,
					       struct trace_event_call *call)
{
	static const char *const names[] = { "enable", "hist", "filter" };
	struct trace_event_file *file;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		file = ghost_child_private(dir, names[i]);
		if (file && file->event_call == call)
			return file;
	}
	return NULL;
}

/* Makes a pending ghost of @dir if it is @arg's and none is there yet */
static int ghost_dir(struct dentry *dir, void *arg)
{
	struct trace_event_call *call = arg;
	struct user_event_ghost *ghost;
	struct inode *inode = d_inode(dir);

	/* Its format file names its call */
	if (ghost_child_private(dir, "format") != call ||
	    ghost_on(&ghost_list, inode) || ghost_on(&ghost_pending, inode))
		return 0;
	ghost = kzalloc(sizeof(*ghost), GFP_KERNEL);
	if (!ghost)
		return -ENOMEM;
	/*
	 * A removed directory nobody made a ghost of (an instance removed
	 * while kprobes were disarmed): its file may be freed already, and
	 * only the call is kept
	 */
	if (!d_unhashed(dir))
		ghost->file = ghost_dir_file(dir, call);
	if (ghost->file)
		ue_event_file_get(ghost->file);
	ghost->dir = inode;
	ihold(inode);
	ghost->dentry = dget(dir);
	ghost->call = call;
	ghost->purge = dirs_ops->is_purge(call);
	ghost_hold(call, ghost->purge);
	list_add_tail(&ghost->link, &ghost_pending);
	return 0;
}

/* Each of @parent's children named @name, given to @fn with @arg */
static int ghost_each(struct dentry *parent, const char *name,
		      int (*fn)(struct dentry *, void *), void *arg)
{
	struct dentry **arr;
	int i, n, ret = 0;

	n = ghost_children(parent, name, &arr);
	if (n < 0)
		return n;
	for (i = 0; i < n && !ret; i++)
		ret = fn(arr[i], arg);
	ghost_children_put(arr, n);
	return ret;
}

static int ghost_walk_system(struct dentry *sys, void *arg)
{
	struct trace_event_call *call = arg;

	return ghost_each(sys, trace_event_name(call), ghost_dir, arg);
}

static int ghost_walk_events(struct dentry *events, void *arg)
{
	struct trace_event_call *call = arg;

	return ghost_each(events, call->class->system, ghost_walk_system,
			  arg);
}

/* An instance's directory, or the root */
static int ghost_walk_array(struct dentry *tr, void *arg)
{
	return ghost_each(tr, "events", ghost_walk_events, arg);
}

static int ghost_walk_instances(struct dentry *instances, void *arg)
{
	return ghost_each(instances, NULL, ghost_walk_array, arg);
}

static int ghost_walk(struct trace_event_call *call)
{
	int ret;

	ret = ghost_walk_array(ghost_root, call);
	if (!ret)
		ret = ghost_each(ghost_root, "instances", ghost_walk_instances,
				 call);
	return ret;
}

/* After our removal (@removed) or its refusal: the pending ghosts */
static void ghost_pending_end(bool removed)
{
	struct user_event_ghost *ghost, *next;

	list_for_each_entry_safe(ghost, next, &ghost_pending, link) {
		if (!removed) {
			/* Their directories live on: nothing to keep */
			ghost_release(ghost);
			continue;
		}
		/* A held child of it is still listed: forget the trigger */
		ghost_hide_trigger(ghost->dentry, false);
		dput(ghost->dentry);
		ghost->dentry = NULL;
		list_move_tail(&ghost->link, &ghost_list);
	}
}

/*
 * Before one of our calls is added (@visible) or removed, under
 * event_mutex: fills the pool, and for a removal makes a ghost of each of
 * the call's directories, in process context (so a removal of ours is
 * guarded whether kprobes run or not). -ENOMEM refuses the removal.
 */
static int ghosts_prepare(struct trace_event_call *call, bool visible)
{
	int ret;

	ue_lockdep_assert_event_mutex();

	if (!ghost_enabled)
		return 0;
	ghost_pool_fill();
	if (visible || !ghost_root)
		return 0;
	ret = ghost_walk(call);
	if (ret) {
		ghost_pending_end(false);
		return ret;
	}
	ghost_removing = call;
	return 0;
}

/*
 * After @call was added or removed (@ret the result), under
 * event_mutex: the ghosts of a removal take over, and those nobody holds
 * let go at once.
 */
static void ghosts_done(struct trace_event_call *call, bool visible, int ret)
{
	ue_lockdep_assert_event_mutex();

	if (!ghost_enabled)
		return;
	if (!ret)
		ghost_calls += visible ? 1 : -1;
	if (visible)
		return;
	ghost_pending_end(!ret);
	ghost_removing = NULL;
	if (ghosts_release_unreachable()) {
		WRITE_ONCE(ghost_poll, GHOST_POLL_MIN);
		mod_delayed_work(system_wq, &ghost_work, GHOST_POLL_MIN);
	}
}

/* tracefs's root, where the module's files are: the walk starts there */
void user_events_dirs_root(struct dentry *root)
{
	ue_event_mutex_lock();
	if (!ghost_root)
		ghost_root = dget(root);
	ue_event_mutex_unlock();
}

static int ghosts_init(void)
{
	int ret;

	if (!ue_have_event_file_refs()) {
		pr_warn("no event_file_get() in this kernel: a late open of a deleted event's files is not guarded\n");
		return 0;
	}

	/* The walk of our own removals needs no kprobe */
	ret = register_kprobe(&ghost_probe);
	if (ret)
		pr_warn("cannot probe remove_event_file_dir() (%d): a late open of a removed instance's event files is not guarded\n",
			ret);
	ue_event_mutex_lock();
	ghost_probe_registered = !ret;
	ghost_enabled = true;
	ghost_pool_fill();
	ue_event_mutex_unlock();
	return 0;
}

static void ghosts_exit(void)
{
	struct user_event_ghost *ghost, *next;

	if (!ghost_enabled)
		return;
	if (ghost_probe_registered)
		unregister_kprobe(&ghost_probe);
	cancel_delayed_work_sync(&ghost_work);
	ue_event_mutex_lock();
	ghost_probe_registered = false;
	ghost_enabled = false;
	/* Each held the module */
	WARN_ON(!list_empty(&ghost_list) || !list_empty(&ghost_pending));
	list_for_each_entry_safe(ghost, next, &ghost_pool, link)
		kfree(ghost);
	ghost_pool_size = 0;
	dput(ghost_root);
	ghost_root = NULL;
	ue_event_mutex_unlock();
}

#else /* UE_HAVE_EVENTFS */

/* eventfs: a removed event's files fail their late opens themselves */
static int ghosts_prepare(struct trace_event_call *call, bool visible)
{
	return 0;
}

void user_events_dirs_root(struct dentry *root)
{
}

static void ghosts_done(struct trace_event_call *call, bool visible, int ret)
{
}

static int ghosts_init(void)
{
	return 0;
}

static void ghosts_exit(void)
{
}

#endif /* UE_HAVE_EVENTFS */

/*
 * Adds (@visible) or removes one of the module's calls, with its
 * directories' guards; event_mutex held. -ENOMEM refuses a removal whose
 * guards cannot be made.
 */
int user_event_call_set_visible(struct trace_event_call *call, bool visible)
{
	const struct cred *old_cred;
	int ret;

	ue_lockdep_assert_event_mutex();

	ret = ghosts_prepare(call, visible);
	if (ret)
		return ret;

	/*
	 * The event's tracefs directory is created on behalf of whoever may
	 * open user_events_data; create it as root like every other event.
	 */
	old_cred = override_creds(dirs_cred);

	if (visible)
		ret = ue_trace_add_event_call(call);
	else
		ret = ue_trace_remove_event_call(call);

	revert_creds(old_cred);

	ghosts_done(call, visible, ret);
	return ret;
}

int user_events_dirs_init(const struct user_events_dirs_ops *ops)
{
	struct cred *cred;
	int ret;

	cred = prepare_creds();
	if (!cred)
		return -ENOMEM;
	cred->fsuid = GLOBAL_ROOT_UID;
	cred->fsgid = GLOBAL_ROOT_GID;
	dirs_cred = cred;
	dirs_ops = ops;

	ret = ghosts_init();
	if (ret)
		put_cred(dirs_cred);
	return ret;
}

/* After the last call of ours went (user_events_core_exit()) */
void user_events_dirs_exit(void)
{
	ghosts_exit();
	put_cred(dirs_cred);
}
