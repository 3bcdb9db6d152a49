/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differences between the kernels user_events.ko supports (Linux 6.1
 * to 6.12), kept in one place so the rest of the module reads like
 * upstream kernel code.
 */
#ifndef _USER_EVENTS_COMPAT_H
#define _USER_EVENTS_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>

/* vm_flags became read-only with accessors in Linux 6.3 */
static inline void ue_vma_clear_flags(struct vm_area_struct *vma,
				      unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

static inline void ue_vma_set_flags(struct vm_area_struct *vma,
				    unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* The vmas argument of pin_user_pages_remote() went away in Linux 6.5 */
static inline long ue_pin_user_page_remote(struct mm_struct *mm,
					   unsigned long addr,
					   unsigned int gup_flags,
					   struct page **page)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return pin_user_pages_remote(mm, addr, 1, gup_flags, page, NULL);
#else
	return pin_user_pages_remote(mm, addr, 1, gup_flags, page, NULL, NULL);
#endif
}

#endif /* _USER_EVENTS_COMPAT_H */
