// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko: the module's top, which calls every other unit and which
 * none calls (Documentation/development.rst, "Dependencies"): the ioctls
 * of user_events_data, which join the event core (trace_events_user.c)
 * to each ABI's state (the status page, user_events_status.c; the remote
 * write enablers, user_events_mm.c), and the module's own plumbing, which
 * upstream's built-in user_events has none of: load and unload, the two
 * tracefs files (user_events_data, user_events_status) with the mode and
 * group an administrator grants, and prepare_unload, which takes the
 * files away so that rmmod can run (see prepare_unload_set()).
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
#include <linux/uaccess.h>

#include "include/uapi/linux/user_events.h"

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"
#include "user_events_ksyms_trace.h"
#include "user_events_parse.h"

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

/* user_events_data's ioctls: both ABIs' registrations, deletion */

/*
 * DIAG_IOCSREG of the status page ABI: the descriptor in, the status byte
 * and the write index out. The event core registers the event on @info
 * and hands out its byte (user_events_reg_status()).
 */
static long user_status_ioctl_reg(struct user_event_file *info,
				  struct user_status_reg __user *ureg)
{
	struct user_status_reg reg;
	int status_index, write_index;
	char *desc;
	int ret;

	if (copy_from_user(&reg, ureg, sizeof(reg)))
		return -EFAULT;

	desc = strndup_user(u64_to_user_ptr(reg.name_args), MAX_EVENT_DESC);
	if (IS_ERR(desc))
		return PTR_ERR(desc);

	ret = user_events_reg_status(info, desc, &status_index, &write_index);
	kfree(desc);
	if (ret)
		return ret;

	if (put_user(status_index, &ureg->status_index) ||
	    put_user(write_index, &ureg->write_index))
		return -EFAULT;

	return 0;
}

static int user_write_reg_check(const struct user_write_reg *reg)
{
	if (reg->flags & ~(USER_EVENT_REG_MAX - 1))
		return -EINVAL;

	if (reg->enable_size != 4 &&
	    (reg->enable_size != 8 || BITS_PER_LONG < 64))
		return -EINVAL;

	if (reg->enable_addr % reg->enable_size)
		return -EINVAL;

	if (reg->enable_bit >= reg->enable_size * BITS_PER_BYTE)
		return -EINVAL;

	if (!access_ok(u64_to_user_ptr(reg->enable_addr), reg->enable_size))
		return -EFAULT;

	if ((reg->flags & USER_EVENT_REG_PERSIST) && !perfmon_capable())
		return -EPERM;

	return 0;
}

/*
 * Finds or creates the event @desc names (@desc is modified), adds it to
 * @info and makes @reg's enabler of it. Returns the write index, or an
 * error. The enabler is made with no global lock held (it faults the
 * word in).
 */
static int user_events_reg_enabler(struct user_event_file *info, char *desc,
				   const struct user_write_reg *reg)
{
	struct user_event *user;
	int index, ret;

	/*
	 * One (address, bit) per address space, whatever the event: a quick
	 * look first, so that a taken bit creates no event. The check that
	 * counts is made again atomically with the insertion.
	 */
	if (user_event_enabler_exists(reg->enable_addr, reg->enable_bit))
		return -EADDRINUSE;

	index = user_events_reg_event(info, desc, reg->flags, &user);
	if (index < 0)
		return index;

	ret = user_event_enabler_create(user, reg);
	user_event_put(user);
	return ret ? ret : index;
}

/*
 * Remote write ABI: the event's state is kept in a bit of a word in the
 * caller's memory, which user_events_mm.c sets and clears.
 */
static long user_events_reg_write(struct user_event_file *info,
				  struct user_write_reg __user *ureg,
				  u32 size)
{
	struct user_write_reg reg;
	char *desc;
	int index;
	long ret;

	ret = copy_struct_from_user(&reg, sizeof(reg), ureg, size);
	if (ret)
		return ret;

	ret = user_write_reg_check(&reg);
	if (ret)
		return ret;

	desc = strndup_user(u64_to_user_ptr(reg.name_args), MAX_EVENT_DESC);
	if (IS_ERR(desc))
		return PTR_ERR(desc);

	index = user_events_reg_enabler(info, desc, &reg);
	kfree(desc);
	if (index < 0)
		return index;

	/*
	 * A registration the caller is told failed must not stay: the bit
	 * would be written, and the (address, bit) refused, with no way for
	 * it to know. The write index stays, harmless, until the file closes.
	 */
	if (put_user((u32)index, &ureg->write_index)) {
		struct user_write_unreg unreg = {
			.size = sizeof(unreg),
			.disable_bit = reg.enable_bit,
			.disable_addr = reg.enable_addr,
		};

		user_event_enabler_remove(&unreg);
		return -EFAULT;
	}

	return 0;
}

/*
 * DIAG_IOCSREG. Differs on purpose: the registration's size selects the
 * ABI, the status page one of 5.18-6.3 (user_events_status.c) or the
 * remote write one of 6.4 and later.
 */
static long user_events_ioctl_reg_once(struct user_event_file *info,
				       unsigned long uarg)
{
	void __user *ureg = (void __user *)uarg;
	u32 size;

	if (get_user(size, (u32 __user *)ureg))
		return -EFAULT;

	if (size > PAGE_SIZE)
		return -E2BIG;

	if (size == USER_STATUS_REG_SIZE)
		return user_status_ioctl_reg(info, ureg);

	if (size >= USER_WRITE_REG_SIZE)
		return user_events_reg_write(info, ureg, size);

	return -EINVAL;
}

/*
 * A name or a quota still held by a process that just exited (its
 * address space's teardown runs after the exit): once those teardowns are
 * done, the registration is tried once more (user_event_mm_settle())
 */
static long user_events_ioctl_reg(struct user_event_file *info,
				  unsigned long uarg)
{
	long ret = user_events_ioctl_reg_once(info, uarg);

	if (ret == -EADDRINUSE || ret == -EMFILE) {
		/*
		 * Even with no teardown left to wait for: one may have put
		 * the event while this attempt held it from its lookup
		 */
		user_event_mm_settle();
		ret = user_events_ioctl_reg_once(info, uarg);
	}

	return ret;
}

static long user_events_ioctl_del(unsigned long uarg)
{
	char *name;
	long ret;

	name = strndup_user((const char __user *)uarg, MAX_EVENT_DESC);
	if (IS_ERR(name))
		return PTR_ERR(name);

	ret = user_events_del_name(name);
	/* Still held by a process that just exited: as for registrations */
	if (ret == -EBUSY) {
		user_event_mm_settle();
		ret = user_events_del_name(name);
	}

	kfree(name);
	return ret;
}

static long user_events_ioctl_unreg(unsigned long uarg)
{
	struct user_write_unreg __user *ureg = (void __user *)uarg;
	struct user_write_unreg reg;
	u32 size;
	long ret;

	if (get_user(size, &ureg->size))
		return -EFAULT;

	if (size > PAGE_SIZE)
		return -E2BIG;

	if (size < sizeof(reg))
		return -EINVAL;

	ret = copy_struct_from_user(&reg, sizeof(reg), ureg, size);
	if (ret)
		return ret;

	if (reg.__reserved || reg.__reserved2)
		return -EINVAL;

	return user_event_enabler_remove(&reg);
}

static long user_events_ioctl(struct file *file, unsigned int cmd,
			      unsigned long uarg)
{
	struct user_event_file *info = file->private_data;

	switch (cmd) {
	case DIAG_IOCSREG:
		return user_events_ioctl_reg(info, uarg);
	case DIAG_IOCSDEL:
		return user_events_ioctl_del(uarg);
	case DIAG_IOCSUNREG:
		return user_events_ioctl_unreg(uarg);
	}

	return -ENOTTY;
}

static const struct file_operations user_data_fops = {
	.owner = THIS_MODULE,
	.open = user_events_open,
	.write = user_events_write,
	.write_iter = user_events_write_iter,
	.unlocked_ioctl = user_events_ioctl,
	.release = user_events_release,
};

/* The module's calls, as user_events_dirs.c guards their directories */
static bool user_events_dirs_is_event(struct trace_event_call *call)
{
	return user_event_of_call(call);
}

static void user_events_dirs_hold(struct trace_event_call *call)
{
	user_event_mem_get(user_event_of_call(call));
}

static void user_events_dirs_unhold(struct trace_event_call *call)
{
	user_event_mem_put(user_event_of_call(call));
}

static const struct user_events_dirs_ops user_events_dirs_ops = {
	.is_purge = user_event_call_is_purge,
	.is_event = user_events_dirs_is_event,
	.hold = user_events_dirs_hold,
	.unhold = user_events_dirs_unhold,
};

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

/*
 * The load's files: once they exist they pin the module until
 * prepare_unload removes them. 0 also when an open reached the data file
 * before the status file failed: the module must stay then, without files.
 */
static int __init user_events_files_start(void)
{
	int ret;

	mutex_lock(&user_files_mutex);
	ret = user_events_files_create(-EEXIST);
	if (ret && !user_files_gone_prune()) {
		pr_err("cannot create user_events_status (%d): loaded without files, write 0 to prepare_unload to retry\n",
		       ret);
		user_files_removed = true;
		ret = 0;
	}
	mutex_unlock(&user_files_mutex);
	if (ret)
		return ret;

	__module_get(THIS_MODULE);
	user_files_pinned = true;
	WRITE_ONCE(user_events_loaded, true);
	return 0;
}

static int __init user_events_init(void)
{
	int ret;

	ret = user_events_check_params();
	if (ret)
		return ret;

	ret = user_events_ksyms_init();
	if (ret)
		return ret;

	ret = user_events_dirs_init(&user_events_dirs_ops);
	if (ret)
		return ret;

	ret = user_events_core_init(user_event_enablers_update);
	if (ret)
		goto dirs_exit;

	ret = user_events_mm_init();
	if (ret)
		goto core_exit;

	ret = user_events_fork_init();
	if (ret)
		goto mm_exit;

	/* The purge event, before any event of ours can be enabled */
	ret = user_events_core_prepare_unload(false);
	if (ret)
		goto fork_exit;

	ret = user_events_files_start();
	if (ret)
		goto purge_remove;

	/* Last, and it cannot fail: see user_events_core_start() */
	user_events_core_start();
	return 0;

purge_remove:
	WARN_ON(user_events_core_prepare_unload(true));
fork_exit:
	user_events_fork_exit();
mm_exit:
	user_events_mm_exit();
core_exit:
	user_events_core_exit();
dirs_exit:
	user_events_dirs_exit();
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

	user_events_fork_exit();
	user_events_mm_exit();
	user_events_core_exit();
	user_events_dirs_exit();
}

module_init(user_events_init);
module_exit(user_events_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("user_events.ko developers");
MODULE_DESCRIPTION("tracefs user_events for kernels without CONFIG_USER_EVENTS");
MODULE_VERSION(USER_EVENTS_VERSION);
