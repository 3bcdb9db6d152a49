// SPDX-License-Identifier: GPL-2.0
/*
 * A deleted event's tracefs directory, still held, on kernels without
 * eventfs (5.10, 6.1).
 *
 * There an event's files in tracefs (enable, filter, trigger, format, ...)
 * keep the event's trace_event_file, or its call, as the inode's i_private,
 * and the removal of the event does not clear it. An open() that looked a
 * file up before the removal runs the file's open after it: 6.1's
 * tracing_open_file_tr() reads file->tr before it takes event_mutex and
 * looks at EVENT_FILE_FL_FREED, in a trace_event_file that the removal
 * freed when nobody had it open; a trigger file opened before the removal
 * writes through it; a format file reads the call. Upstream fixed it with
 * eventfs (6.6). The core's own dynamic events still have it on these
 * kernels (Documentation/security.rst); for user events, the module keeps
 * what such a late open reaches until nothing can reach it:
 *
 *  - A kprobe on remove_event_file_dir(), the function that removes an
 *    event's directory in one instance (at the event's removal, and at an
 *    instance's), under event_mutex, sees each trace_event_file of a user
 *    event before its directory goes and makes a "ghost" of it: a
 *    reference of the file (event_file_get(): the removal's put then does
 *    not free it, only marks it freed, and a late open or write fails with
 *    ENODEV, as on 6.12), a reference of the directory's dentry, and one
 *    of the event's memory (user_event_mem_get(): the call and its print
 *    format stay, and the event's reference of the module with them).
 *  - After the removal, the directory's children are unhashed: nothing can
 *    look one up again, and each lives only while somebody holds it (a
 *    path walk in progress, an open file, an O_PATH descriptor) and holds
 *    the directory while it lives. So once the directory's count is the
 *    ghost's alone, no late open can come any more, and the ghost lets go
 *    of the file, the dentry and the event's memory.
 *    user_events_dirs_release() does that right after the event's removal,
 *    under event_mutex, for the directories nobody holds (the usual case:
 *    an rmmod right after a deletion is not refused for it); a delayed
 *    work retries the others (and those of an instance's removal),
 *    10 ms after each new ghost, then twice as long each time, up to a
 *    second.
 *
 * Who can hold a ghost, and so the module: whoever can reach an event's
 * directory in tracefs, root unless an administrator opened tracefs to
 * others. The trigger file is the exception to "keep": it forgets the
 * event file at the removal (ghost_hide() says why), so its late
 * opens and writes fail with ENODEV at once. The event's reg function
 * refuses a deleted event, or a freed file, too.
 *
 * Locking: the ghost list is changed under ghost_lock (the kprobe runs
 * with preemption disabled, under the remover's event_mutex). A ghost on
 * the list belongs to the list; one taken off belongs to whoever took it,
 * who releases it with no spinlock held. Unload: every ghost holds an
 * event's memory, which holds the module, so none is left at module exit;
 * the kprobe is unregistered and the work cancelled there.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/trace_events.h>
#include <linux/workqueue.h>

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"

#ifndef UE_HAVE_EVENTFS

struct user_event_ghost {
	struct list_head link;			/* ghost_list */
	struct trace_event_file *file;		/* event_file_get() */
	struct dentry *dir;			/* dget() */
	/* and user_event_mem_get() of file->event_call */
};

static DEFINE_SPINLOCK(ghost_lock);
static LIST_HEAD(ghost_list);
static bool ghost_probe_registered;

#define GHOST_POLL_MIN	(HZ / 100 ?: 1)
#define GHOST_POLL_MAX	HZ
static unsigned long ghost_poll = GHOST_POLL_MIN;

static void user_events_dirs_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ghost_work, user_events_dirs_work_fn);

/*
 * ghost_hide(dir, "trigger"): the trigger file of a directory being
 * removed forgets its event file:
 * its open, read and write look at i_private under event_mutex and fail
 * with ENODEV when it is NULL. Keeping the file alive is not enough there:
 * a trigger refused by the event's reg leaves the file's trigger and
 * soft-mode counts raised, so the next one skips reg and attaches to the
 * removed file (a hist variable or an enable_event trigger that outlives
 * it; red team red11). The other files keep i_private: their opens go
 * through tracing_open_file_tr(), which dereferences it and then sees
 * EVENT_FILE_FL_FREED. ghost_hide(dir, NULL): every file forgets (the
 * purge event's directory, whose files, format and hist, are opened with
 * no reference of anything and read its call, module data, under
 * event_mutex, where NULL gives ENODEV; it is removed at module exit, so
 * no ghost could hold the module for it: red team red12). event_mutex
 * held (the remover's), as by the readers.
 */
static void ghost_hide(struct dentry *dir, const char *name)
{
	struct dentry *child;

	spin_lock(&dir->d_lock);
	list_for_each_entry(child, &dir->d_subdirs, d_child)
		if (d_really_is_positive(child) &&
		    (!name || !strcmp(child->d_name.name, name)))
			d_inode(child)->i_private = NULL;
	spin_unlock(&dir->d_lock);
}

/* remove_event_file_dir(file): under event_mutex, preemption disabled */
static int ghost_probe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct trace_event_file *file;
	struct user_event_ghost *ghost;

	file = (struct trace_event_file *)regs_get_kernel_argument(regs, 0);
	if (!file || !file->dir)
		return 0;
	if (user_event_call_is_purge(file->event_call)) {
		ghost_hide(file->dir, NULL);
		return 0;
	}
	if (!user_event_call_is_ours(file->event_call))
		return 0;

	/* First: it needs no memory */
	ghost_hide(file->dir, "trigger");

	/* Without it the late open is what it is on the core's own events */
	ghost = kmalloc(sizeof(*ghost), GFP_ATOMIC | __GFP_NOWARN);
	if (!ghost)
		return 0;

	ue_event_file_get(file);
	ghost->file = file;
	ghost->dir = dget(file->dir);
	user_event_mem_get(file->event_call);

	spin_lock(&ghost_lock);
	list_add_tail(&ghost->link, &ghost_list);
	spin_unlock(&ghost_lock);

	/* An instance's removal calls no release: the work looks soon */
	WRITE_ONCE(ghost_poll, GHOST_POLL_MIN);
	schedule_delayed_work(&ghost_work, GHOST_POLL_MIN);
	return 0;
}

static struct kprobe ghost_probe = {
	.symbol_name	= "remove_event_file_dir",
	.pre_handler	= ghost_probe_pre,
};

/* Only the ghost holds its directory: no child, no other holder */
static bool ghost_unreachable(struct user_event_ghost *ghost)
{
	return d_count(ghost->dir) == 1;
}

static void ghost_release(struct user_event_ghost *ghost)
{
	/* Read while the file is ours: the put below may free it */
	struct trace_event_call *call = ghost->file->event_call;

	ue_event_file_put(ghost->file);
	dput(ghost->dir);
	kfree(ghost);
	/* Last: it may drop the module reference of a deleted event */
	user_event_mem_put(call);
}

/*
 * Releases the ghosts nobody can reach any more; returns whether some are
 * left. No spinlock held.
 */
static bool ghosts_release_unreachable(void)
{
	struct user_event_ghost *ghost, *next;
	LIST_HEAD(done);
	bool left;

	spin_lock(&ghost_lock);
	list_for_each_entry_safe(ghost, next, &ghost_list, link)
		if (ghost_unreachable(ghost))
			list_move(&ghost->link, &done);
	left = !list_empty(&ghost_list);
	spin_unlock(&ghost_lock);

	list_for_each_entry_safe(ghost, next, &done, link)
		ghost_release(ghost);
	return left;
}

static void user_events_dirs_work_fn(struct work_struct *work)
{
	unsigned long next;

	if (!ghosts_release_unreachable())
		return;
	next = min(READ_ONCE(ghost_poll) * 2, (unsigned long)GHOST_POLL_MAX);
	WRITE_ONCE(ghost_poll, next);
	schedule_delayed_work(&ghost_work, next);
}

/*
 * After a removal of events (under event_mutex): lets go at once of what
 * nobody holds, and retries the rest from the work.
 */
void user_events_dirs_release(void)
{
	if (!ghost_probe_registered)
		return;
	if (ghosts_release_unreachable()) {
		WRITE_ONCE(ghost_poll, GHOST_POLL_MIN);
		mod_delayed_work(system_wq, &ghost_work, GHOST_POLL_MIN);
	}
}

int user_events_dirs_init(void)
{
	int ret;

	if (!ue_have_event_file_refs()) {
		pr_warn("no event_file_get() in this kernel: a late open of a deleted event's files is not guarded\n");
		return 0;
	}

	ret = register_kprobe(&ghost_probe);
	if (ret) {
		pr_warn("cannot probe remove_event_file_dir() (%d): a late open of a deleted event's files is not guarded\n",
			ret);
		return 0;
	}
	ghost_probe_registered = true;
	return 0;
}

void user_events_dirs_exit(void)
{
	if (!ghost_probe_registered)
		return;
	unregister_kprobe(&ghost_probe);
	cancel_delayed_work_sync(&ghost_work);
	/* Each held an event's memory, and so the module */
	WARN_ON(!list_empty(&ghost_list));
}

#else /* UE_HAVE_EVENTFS */

/* eventfs: a removed event's files fail their late opens themselves */
void user_events_dirs_release(void)
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
