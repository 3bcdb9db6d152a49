/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel internals that user_events.ko needs but that the kernel does not
 * export to modules. They are resolved once, at module load, by
 * user_events_ksyms_init(); nothing else in the module looks symbols up.
 */
#ifndef _USER_EVENTS_KSYMS_H
#define _USER_EVENTS_KSYMS_H

#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/ring_buffer.h>
#include <linux/trace_events.h>

#include "user_events_compat.h"

struct user_events_ksyms {
	struct dentry *(*tracefs_create_file)(const char *name, umode_t mode,
					      struct dentry *parent, void *data,
					      const struct file_operations *fops);
	void (*tracefs_remove)(struct dentry *dentry);
	struct mutex *event_mutex;		/* the tracing core's */
	struct mutex *dyn_event_ops_mutex;	/* guards dyn_event_ops_list */
	struct list_head *dyn_event_ops_list;
	struct list_head *dyn_event_list;
	/* The tracing core's per-CPU staging record for filtered events */
	struct ring_buffer_event * __percpu *trace_buffered_event;
	int __percpu *trace_buffered_event_cnt;
#ifndef UE_HAVE_EXPORTED_ADD_EVENT_CALL
	/* Exported from Linux 5.15 on (5.10 has them, unexported) */
	int (*trace_add_event_call)(struct trace_event_call *call);
	int (*trace_remove_event_call)(struct trace_event_call *call);
#endif
#ifndef UE_HAVE_FOLL_NOFAULT
	/* Linux 5.10 has no FOLL_NOFAULT: see ue_pin_user_page_nofault() */
	struct page *(*follow_page)(struct vm_area_struct *vma,
				    unsigned long address,
				    unsigned int foll_flags);
#endif
};

extern struct user_events_ksyms ue_ksyms;

int user_events_ksyms_init(void);

/* Calls a function found through kallsyms; see user_events_call.S */
unsigned long user_events_call(const void *fn, unsigned long a0,
			       unsigned long a1, unsigned long a2,
			       unsigned long a3, unsigned long a4);

static inline struct dentry *
ue_tracefs_create_file(const char *name, umode_t mode, struct dentry *parent,
		       void *data, const struct file_operations *fops)
{
	return (struct dentry *)user_events_call(ue_ksyms.tracefs_create_file,
						 (unsigned long)name, mode,
						 (unsigned long)parent,
						 (unsigned long)data,
						 (unsigned long)fops);
}

static inline void ue_tracefs_remove(struct dentry *dentry)
{
	user_events_call(ue_ksyms.tracefs_remove, (unsigned long)dentry,
			 0, 0, 0, 0);
}

/*
 * Drops a record reserved with trace_event_buffer_reserve() instead of
 * committing it, the way the tracing core discards one: the record is
 * either this CPU's staging record (trace_event_buffer_lock_reserve() gave
 * it to a filtered or soft-disabled file, with preemption disabled) or an
 * entry of a ring buffer, which ring_buffer_discard_commit() removes or
 * turns into padding that readers skip. Either way, preemption is enabled
 * again as after a commit.
 */
static inline void ue_trace_event_discard(struct trace_event_buffer *fbuffer)
{
	if (this_cpu_read(*ue_ksyms.trace_buffered_event) == fbuffer->event) {
		this_cpu_dec(*ue_ksyms.trace_buffered_event_cnt);
		preempt_enable_notrace();
		return;
	}

	ring_buffer_discard_commit(fbuffer->buffer, fbuffer->event);
}

/* Both expect event_mutex held, in Linux 5.10 as in 6.12 */
static inline int ue_trace_add_event_call(struct trace_event_call *call)
{
#ifdef UE_HAVE_EXPORTED_ADD_EVENT_CALL
	return trace_add_event_call(call);
#else
	return (int)user_events_call(ue_ksyms.trace_add_event_call,
				     (unsigned long)call, 0, 0, 0, 0);
#endif
}

static inline int ue_trace_remove_event_call(struct trace_event_call *call)
{
#ifdef UE_HAVE_EXPORTED_ADD_EVENT_CALL
	return trace_remove_event_call(call);
#else
	return (int)user_events_call(ue_ksyms.trace_remove_event_call,
				     (unsigned long)call, 0, 0, 0, 0);
#endif
}

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

#endif /* _USER_EVENTS_KSYMS_H */
