/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differences between the kernels user_events.ko supports (Linux 6.1
 * to 6.12), kept in one place so the rest of the module reads like
 * upstream kernel code.
 */
#ifndef _USER_EVENTS_COMPAT_H
#define _USER_EVENTS_COMPAT_H

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/uio.h>

/*
 * Kbuild defines the UE_HAVE_* feature macros below from the version of
 * the kernel the module is built against.
 */

/* vm_flags became read-only with accessors in Linux 6.3 */
static inline void ue_vma_clear_flags(struct vm_area_struct *vma,
				      unsigned long flags)
{
#ifdef UE_HAVE_VM_FLAGS_API
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

static inline void ue_vma_set_flags(struct vm_area_struct *vma,
				    unsigned long flags)
{
#ifdef UE_HAVE_VM_FLAGS_API
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* Mount idmappings replaced user namespaces in notify_change() in 6.3 */
static inline int ue_notify_change(struct dentry *dentry, struct iattr *attr)
{
#ifdef UE_HAVE_MNT_IDMAP
	return notify_change(&nop_mnt_idmap, dentry, attr, NULL);
#else
	return notify_change(&init_user_ns, dentry, attr, NULL);
#endif
}

/* The vmas argument of pin_user_pages_remote() went away in Linux 6.5 */
static inline long ue_pin_user_page_remote(struct mm_struct *mm,
					   unsigned long addr,
					   unsigned int gup_flags,
					   struct page **page)
{
#ifdef UE_HAVE_PIN_REMOTE_WITHOUT_VMAS
	return pin_user_pages_remote(mm, addr, 1, gup_flags, page, NULL);
#else
	return pin_user_pages_remote(mm, addr, 1, gup_flags, page, NULL, NULL);
#endif
}

/* The iovec array of an ITER_IOVEC iterator was renamed in Linux 6.4 */
static inline const struct iovec *ue_iter_iov(const struct iov_iter *i)
{
#ifdef UE_HAVE_ITER_IOV
	return iter_iov(i);
#else
	return i->iov;
#endif
}

/*
 * A grace period after which no task is still running code it entered
 * before (a task works's tail, say). Both kernels' rcupdate.h define
 * synchronize_rcu_tasks() as synchronize_rcu() when CONFIG_TASKS_RCU is
 * off, which is enough there: without preemption such code cannot be
 * switched out before it returns.
 */
static inline void ue_synchronize_rcu_tasks(void)
{
	synchronize_rcu_tasks();
}

#endif /* _USER_EVENTS_COMPAT_H */
