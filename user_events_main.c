// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko: the module's own plumbing around the event core
 * (trace_events_user.c). Upstream's user_events is built into the kernel
 * and has none of this: load and unload, the two tracefs files
 * (user_events_data, user_events_status) with the mode and group an
 * administrator grants, and prepare_unload, which takes the files away so
 * that rmmod can run (see prepare_unload_set()).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/tracefs.h>

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"

/*
 * Who may open the files: root only by default. An administrator can grant
 * a group, e.g. data_gid=<gid> data_mode=0660 status_gid=<gid>
 * status_mode=0640 (the tracefs mount must let that group in, too).
 */
static ushort data_mode = 0600;
module_param(data_mode, ushort, 0444);
MODULE_PARM_DESC(data_mode,
		 "Mode of user_events_data, at most 0666 (default 0600)");

static uint data_gid;
module_param(data_gid, uint, 0444);
MODULE_PARM_DESC(data_gid, "Group of user_events_data (default 0, root)");

static ushort status_mode = 0600;
module_param(status_mode, ushort, 0444);
MODULE_PARM_DESC(status_mode,
		 "Mode of user_events_status, at most 0666 (default 0600)");

static uint status_gid;
module_param(status_gid, uint, 0444);
MODULE_PARM_DESC(status_gid,
		 "Group of user_events_status (default 0, root)");

/*
 * The module's own tracefs files, under user_files_mutex: see
 * prepare_unload_set()
 */
static DEFINE_MUTEX(user_files_mutex);
static struct dentry *data_dentry;
static struct dentry *status_dentry;
static bool user_files_removed;
static bool user_files_pinned;
static bool user_events_loaded;

/*
 * Creates one of the module's tracefs files with the mode and group the
 * administrator chose. The group goes through notify_change(), as chgrp
 * would, so that tracefs keeps it.
 *
 * tracefs_create_file() gives NULL whatever went wrong: the name taken, or
 * no memory for the dentry or inode. The caller says which is the likely
 * one (@fail): at load, another user_events (the kernel's own, a copy of
 * this module under another name) has the names; when prepare_unload puts
 * back the files it removed a moment ago, the names were free.
 */
static struct dentry *user_events_create_file(const char *name, ushort mode,
					      uint gid,
					      const struct file_operations *fops,
					      int fail)
{
	struct iattr attr = {
		.ia_valid = ATTR_GID | ATTR_FORCE,
		.ia_gid = make_kgid(&init_user_ns, gid),
	};
	struct dentry *dentry;
	struct inode *inode;
	int ret;

	dentry = ue_tracefs_create_file(name, S_IFREG | mode, NULL, NULL,
					fops);
	if (IS_ERR_OR_NULL(dentry)) {
		pr_err("cannot create tracefs file %s (%s)\n", name,
		       fail == -EEXIST ? "does it exist already?" :
					 "out of memory?");
		return ERR_PTR(fail);
	}

	/* tracefs's root: the walk of removed directories starts there */
	user_events_dirs_root(dentry->d_parent);

	/* Even root's: a tracefs mount option must not hand it to others */
	inode = d_inode(dentry);
	inode_lock(inode);
	ret = ue_notify_change(dentry, &attr);
	inode_unlock(inode);
	if (ret) {
		pr_err("cannot set the group of %s: %d\n", name, ret);
		ue_tracefs_remove(dentry);
		return ERR_PTR(ret);
	}

	return dentry;
}

/*
 * A removed file whose dentry someone may still hold: an open file, an
 * O_PATH descriptor (which /proc/PID/fd/N can reopen), a bind mount, or an
 * open() between its lookup and its fops_get() (do_dentry_open() reads
 * i_fop, then pins fops->owner, with nothing in between that we could wait
 * for). While any exists, the files keep their module reference. On
 * user_files_gone, under user_files_mutex.
 */
struct user_gone_file {
	struct list_head link;
	struct dentry *dentry;
};

static LIST_HEAD(user_files_gone);

/*
 * Removes one of the module's files. The dentry is kept, with a reference
 * of ours, on user_files_gone, and @gone is consumed.
 */
static void user_events_file_remove(struct dentry **dentryp,
				    struct user_gone_file *gone)
{
	lockdep_assert_held(&user_files_mutex);

	gone->dentry = dget(*dentryp);
	ue_tracefs_remove(*dentryp);
	list_add_tail(&gone->link, &user_files_gone);
	*dentryp = NULL;
}

/*
 * Forgets the removed files nobody holds any more. Such a dentry is
 * unhashed (and its sequence count invalidated for lockless walks): no
 * lookup finds it again, so once its count is 1 (ours), nothing can reach
 * its inode's file operations any more. Returns true when none is left.
 */
static bool user_files_gone_prune(void)
{
	struct user_gone_file *gone, *next;
	unsigned int count;

	lockdep_assert_held(&user_files_mutex);

	list_for_each_entry_safe(gone, next, &user_files_gone, link) {
		/* Under d_lock: no lockless reference comes and goes */
		spin_lock(&gone->dentry->d_lock);
		count = d_count(gone->dentry);
		spin_unlock(&gone->dentry->d_lock);
		if (count > 1)
			continue;
		list_del(&gone->link);
		dput(gone->dentry);
		kfree(gone);
	}

	return list_empty(&user_files_gone);
}

static int user_events_files_remove(void)
{
	struct user_gone_file *gone[2];

	lockdep_assert_held(&user_files_mutex);

	gone[0] = kzalloc(sizeof(*gone[0]), GFP_KERNEL);
	gone[1] = kzalloc(sizeof(*gone[1]), GFP_KERNEL);
	if (!gone[0] || !gone[1]) {
		kfree(gone[0]);
		kfree(gone[1]);
		return -ENOMEM;
	}

	user_events_file_remove(&status_dentry, gone[0]);
	user_events_file_remove(&data_dentry, gone[1]);

	return 0;
}

/*
 * Creates both files or neither. If the second cannot be made, the first
 * is removed again, onto user_files_gone: an open may have reached it.
 * @fail: the error if tracefs refuses the first (user_events_create_file()).
 */
static int user_events_files_create(int fail)
{
	struct user_gone_file *gone;
	struct dentry *dentry;

	lockdep_assert_held(&user_files_mutex);

	gone = kzalloc(sizeof(*gone), GFP_KERNEL);
	if (!gone)
		return -ENOMEM;

	dentry = user_events_create_file("user_events_data", data_mode,
					 data_gid, &user_data_fops, fail);
	if (IS_ERR(dentry)) {
		kfree(gone);
		return PTR_ERR(dentry);
	}
	data_dentry = dentry;

	/* The data file's name was free: so is this one, in all likelihood */
	dentry = user_events_create_file("user_events_status", status_mode,
					 status_gid, &user_status_fops,
					 -ENOMEM);
	if (IS_ERR(dentry)) {
		user_events_file_remove(&data_dentry, gone);
		return PTR_ERR(dentry);
	}
	status_dentry = dentry;

	kfree(gone);
	return 0;
}

/*
 * prepare_unload: the first step of unloading.
 *
 * The VFS pins a module's file operations through fops->owner, and an open
 * of a file whose owner cannot be pinned any more WARNs in
 * do_dentry_open() (and reads the module's memory, freed if it is gone).
 * delete_module() marks the module going before its exit function runs:
 * files removed only in module_exit() let an open meet it. So the files
 * hold a reference on the module (user_files_pinned) while they exist and
 * while anything still holds a removed one's dentry, and rmmod is refused
 * until an administrator writes 1 here: that removes the files. Writing 1
 * again retries once the holders let go. Writing 0 creates the files again
 * (refused with EBUSY once rmmod began). scripts/user-events-clear
 * --unload does it all.
 *
 * user_files_mutex covers the files' dentries, user_files_gone,
 * user_files_removed and user_files_pinned. The reference is dropped
 * last, after the mutex: from then on rmmod may run module_exit(), and
 * only the sysfs teardown that follows it waits for this handler to
 * return.
 */
static int prepare_unload_set(const char *val, const struct kernel_param *kp)
{
	bool remove, put = false, extra = false;
	int ret;

	ret = kstrtobool(val, &remove);
	if (ret)
		return ret;

	/* On the insmod command line: the files do not exist yet */
	if (!READ_ONCE(user_events_loaded)) {
		pr_err_ratelimited("prepare_unload can only be written once the module is loaded\n");
		return -EINVAL;
	}

	mutex_lock(&user_files_mutex);
	if (remove) {
		/* The purge event first: refused while kprobes are disarmed */
		ret = user_events_core_prepare_unload(true);
		if (!ret && !user_files_removed) {
			ret = user_events_files_remove();
			if (!ret)
				user_files_removed = true;
		}
	} else if (!try_module_get(THIS_MODULE)) {
		/* Refused once rmmod has begun: the files stay away */
		ret = -EBUSY;
	} else {
		ret = user_events_core_prepare_unload(false);
		if (!ret && user_files_removed) {
			ret = user_events_files_create(-ENOMEM);
			if (!ret)
				user_files_removed = false;
		}
		/* The files' pin, unless they hold one already */
		if (user_files_pinned)
			extra = true;
		user_files_pinned = true;
	}
	if (user_files_gone_prune() && user_files_removed &&
	    user_files_pinned) {
		user_files_pinned = false;
		put = true;
	}
	mutex_unlock(&user_files_mutex);

	if (put)
		module_put(THIS_MODULE);
	if (extra)
		module_put(THIS_MODULE);

	return ret;
}

static const struct kernel_param_ops prepare_unload_ops = {
	.set = prepare_unload_set,
	.get = param_get_bool,
};

module_param_cb(prepare_unload, &prepare_unload_ops, &user_files_removed,
		0644);
MODULE_PARM_DESC(prepare_unload,
		 "Write 1 to remove user_events_data and user_events_status so that the module can be unloaded, 0 to restore them");

static int __init user_events_check_params(void)
{
	if ((data_mode & ~0666) || (status_mode & ~0666)) {
		pr_err("data_mode and status_mode take permission bits up to 0666\n");
		return -EINVAL;
	}

	if (!gid_valid(make_kgid(&init_user_ns, data_gid)) ||
	    !gid_valid(make_kgid(&init_user_ns, status_gid))) {
		pr_err("data_gid or status_gid is not a valid group\n");
		return -EINVAL;
	}

	return 0;
}

static int __init user_events_init(void)
{
	int ret;

	ret = user_events_check_params();
	if (ret)
		return ret;

	ret = user_events_core_init();
	if (ret)
		return ret;

	ret = user_events_mm_init();
	if (ret)
		goto core_exit;

	ret = user_events_dirs_init();
	if (ret)
		goto mm_exit;

	/* The purge event, before any event of ours can be enabled */
	ret = user_events_core_prepare_unload(false);
	if (ret)
		goto dirs_exit;

	mutex_lock(&user_files_mutex);
	ret = user_events_files_create(-EEXIST);
	if (ret && !user_files_gone_prune()) {
		/*
		 * An open reached the data file before the status file
		 * failed: the module must stay, without its files
		 */
		pr_err("cannot create user_events_status (%d): loaded without files, write 0 to prepare_unload to retry\n",
		       ret);
		user_files_removed = true;
		ret = 0;
	}
	mutex_unlock(&user_files_mutex);
	if (ret)
		goto purge_remove;
	/* The files pin the module until prepare_unload removes them */
	__module_get(THIS_MODULE);
	user_files_pinned = true;
	WRITE_ONCE(user_events_loaded, true);

	/* Last, and it cannot fail: see user_events_core_start() */
	user_events_core_start();
	return 0;

purge_remove:
	WARN_ON(user_events_core_prepare_unload(true));
dirs_exit:
	user_events_dirs_exit();
mm_exit:
	user_events_mm_exit();
core_exit:
	user_events_core_exit();
	return ret;
}

/*
 * Runs only once the module's reference count is 0: prepare_unload removed
 * the files, no event exists (each pins the module), no file is open, no
 * address space has enablers. The RCU callbacks that freed the last events
 * may still be running: they drop the module reference as their last
 * step, and rcu_barrier() (user_events_core_exit()) waits for them.
 */
static void __exit user_events_exit(void)
{
	user_events_core_stop();
	/*
	 * Gone already (they pinned the module until prepare_unload), unless
	 * a forced rmmod (CONFIG_MODULE_FORCE_UNLOAD, Debian's) skipped that
	 * step: then they must not outlive the module's file operations.
	 */
	mutex_lock(&user_files_mutex);
	if (data_dentry || status_dentry || !list_empty(&user_files_gone)) {
		pr_warn("forced unload: removing user_events_data and user_events_status\n");
		if (data_dentry)
			ue_tracefs_remove(data_dentry);
		if (status_dentry)
			ue_tracefs_remove(status_dentry);
		data_dentry = NULL;
		status_dentry = NULL;
		if (!user_files_gone_prune()) {
			struct user_gone_file *gone, *next;

			pr_warn("forced unload: a removed user_events file is still held open\n");
			list_for_each_entry_safe(gone, next, &user_files_gone, link) {
				list_del(&gone->link);
				dput(gone->dentry);
				kfree(gone);
			}
		}
	}
	mutex_unlock(&user_files_mutex);

	user_events_dirs_exit();
	user_events_mm_exit();
	user_events_core_exit();
}

module_init(user_events_init);
module_exit(user_events_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("user_events.ko developers");
MODULE_DESCRIPTION("tracefs user_events for kernels without CONFIG_USER_EVENTS");
MODULE_VERSION(USER_EVENTS_VERSION);
