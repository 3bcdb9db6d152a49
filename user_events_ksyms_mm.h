/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User memory: a page pinned without faulting, reached through
 * user_events_ksyms.h
 */
#ifndef _USER_EVENTS_KSYMS_MM_H
#define _USER_EVENTS_KSYMS_MM_H

#include <linux/mm.h>

#include "user_events_ksyms.h"

/*
 * Takes a reference of the page of @addr in @mm for a write by the kernel,
 * without faulting: 0, or -EFAULT when the page is not there or not
 * writable right now (not present, copy-on-write shared, read-only, I/O or
 * PFN mapping). Called with the mmap lock held. Linux 5.10 has no
 * FOLL_NOFAULT: there the page is looked up with follow_page(), which
 * walks the page tables and never faults, with the checks GUP would apply
 * to the vma. Release the page with ue_unpin_user_page_dirty().
 */
static inline int ue_pin_user_page_nofault(struct mm_struct *mm,
					   unsigned long addr,
					   struct page **page)
{
#ifdef UE_HAVE_FOLL_NOFAULT
	return ue_pin_user_page_remote(mm, addr, FOLL_WRITE | FOLL_NOFAULT,
				       page) == 1 ? 0 : -EFAULT;
#else
	struct vm_area_struct *vma;
	struct page *p;

	mmap_assert_locked(mm);

	vma = ue_vma_lookup(mm, addr);
	if (!vma || !(vma->vm_flags & VM_WRITE) ||
	    (vma->vm_flags & (VM_IO | VM_PFNMAP)))
		return -EFAULT;

	p = (struct page *)user_events_call(ue_ksyms.follow_page,
					    (unsigned long)vma, addr,
					    FOLL_WRITE | FOLL_GET, 0, 0);
	if (IS_ERR_OR_NULL(p))
		return -EFAULT;

	*page = p;
	return 0;
#endif
}

/* Marks the page dirty and drops what ue_pin_user_page_nofault() took */
static inline void ue_unpin_user_page_dirty(struct page *page)
{
#ifdef UE_HAVE_FOLL_NOFAULT
	unpin_user_pages_dirty_lock(&page, 1, true);
#else
	set_page_dirty_lock(page);
	put_page(page);
#endif
}

#endif /* _USER_EVENTS_KSYMS_MM_H */
