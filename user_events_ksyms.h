/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel internals that user_events.ko needs but that the kernel does not
 * export to modules. They are resolved once, at module load, by
 * user_events_ksyms_init(); nothing else in the module looks symbols up.
 *
 * The rest of the module reaches them only through the wrappers below,
 * each named after the kernel function or object it stands for, so this
 * file and user_events_ksyms.c are the only ones that see the symbol
 * table.
 */
#ifndef _USER_EVENTS_KSYMS_H
#define _USER_EVENTS_KSYMS_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/ring_buffer.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/trace_events.h>

#include "user_events_compat.h"

struct user_events_ksyms {
	struct dentry *(*tracefs_create_file)(const char *name, umode_t mode,
					      struct dentry *parent, void *data,
					      const struct file_operations *fops);
	void (*tracefs_remove)(struct dentry *dentry);
	void (*tracing_reset_all_online_cpus)(void);
	struct trace_event_file *(*__find_event_file)(struct trace_array *tr,
						      const char *system,
						      const char *event);
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
#ifndef UE_HAVE_EVENTFS
	/*
	 * Optional: the open count of an event file (6.6, backported to
	 * Debian's 5.10 and 6.1); see user_events_dirs.c
	 */
	void (*event_file_get)(struct trace_event_file *file);
	void (*event_file_put)(struct trace_event_file *file);
#endif
};

extern struct user_events_ksyms ue_ksyms;

int user_events_ksyms_init(void);

/*
 * Calls a function found through kallsyms, with up to five arguments; one
 * implementation per architecture: user_events_call_x86.S (IBT-proof
 * trampoline), user_events_call_arm64.c (plain indirect call).
 */
unsigned long user_events_call(const void *fn, unsigned long a0,
			       unsigned long a1, unsigned long a2,
			       unsigned long a3, unsigned long a4);

/* tracefs: no tracefs_* function is exported */

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
 * Whether ue_trace_event_discard() can be used, and so the one-copy write
 * path: it needs the tracing core's per-CPU staging record, which is not
 * located on kernels whose kallsyms lists no variables (the core's
 * one_copy parameter then reads N). Where it is false, every write takes
 * the staged path.
 */
static inline bool ue_have_trace_event_discard(void)
{
	return ue_ksyms.trace_buffered_event;
}

/*
 * Drops a record reserved with trace_event_buffer_reserve() instead of
 * committing it, the way the tracing core discards one: the record is
 * either this CPU's staging record (trace_event_buffer_lock_reserve() gave
 * it to a filtered or soft-disabled file) or an entry of a ring buffer,
 * which ring_buffer_discard_commit() removes or turns into padding that
 * readers skip, enabling preemption again as after a commit.
 *
 * Whether the staging record came with preemption disabled depends on the
 * kernel: since Linux 5.17 it does, to be enabled at its release; before
 * (5.10, 5.10-rt), the caller's own disabling covered it and the release
 * enables nothing, and a distribution may have backported either. So the
 * caller passes @pc, preempt_count() from before the reserve, and the
 * release enables preemption only if the reserve left it raised. (Without
 * CONFIG_PREEMPT_COUNT the count never moves, and an enable would be a
 * compiler barrier anyway.)
 */
static inline void ue_trace_event_discard(struct trace_event_buffer *fbuffer,
					  unsigned int pc)
{
	if (this_cpu_read(*ue_ksyms.trace_buffered_event) == fbuffer->event) {
		this_cpu_dec(*ue_ksyms.trace_buffered_event_cnt);
		if (preempt_count() > pc)
			preempt_enable_notrace();
		return;
	}

	ring_buffer_discard_commit(fbuffer->buffer, fbuffer->event);
}

/*
 * Empties the ring buffers of every tracing instance that the core marked
 * when it removed an event that had been enabled there (the marks set by
 * trace_remove_event_call(); the core's own dynamic-event deletion calls
 * this after each removal). event_mutex held, as by the core.
 */
static inline void ue_tracing_reset_marked(void)
{
	user_events_call(ue_ksyms.tracing_reset_all_online_cpus, 0, 0, 0, 0,
			 0);
}

#ifndef UE_HAVE_EVENTFS
/* Whether the kernel counts the opens of event files (user_events_dirs.c) */
static inline bool ue_have_event_file_refs(void)
{
	return ue_ksyms.event_file_get && ue_ksyms.event_file_put;
}

static inline void ue_event_file_get(struct trace_event_file *file)
{
	user_events_call(ue_ksyms.event_file_get, (unsigned long)file, 0, 0, 0,
			 0);
}

/* Frees the file if it was removed and this was the last reference */
static inline void ue_event_file_put(struct trace_event_file *file)
{
	user_events_call(ue_ksyms.event_file_put, (unsigned long)file, 0, 0, 0,
			 0);
}
#endif

/*
 * The file of the event SYSTEM:EVENT in the instance @tr, or NULL: the
 * core's __find_event_file(), which unlike find_event_file() also finds
 * events made with TRACE_EVENT_FL_IGNORE_ENABLE. event_mutex held: the
 * instance's event list changes only under it, and a file found stays on
 * it until event_mutex is released.
 */
static inline struct trace_event_file *
ue_find_event_file(struct trace_array *tr, const char *system,
		   const char *event)
{
	lockdep_assert_held(ue_ksyms.event_mutex);

	return (struct trace_event_file *)
		user_events_call(ue_ksyms.__find_event_file, (unsigned long)tr,
				 (unsigned long)system, (unsigned long)event,
				 0, 0);
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

/*
 * The tracing core's event_mutex (kernel/trace/trace.h): it guards the
 * event calls, trace_add_event_call() and trace_remove_event_call() expect
 * it held, and the dynamic_events file holds it while it calls the
 * dyn_event_operations below (all but create).
 */

static inline void ue_event_mutex_lock(void)
{
	mutex_lock(ue_ksyms.event_mutex);
}

static inline void ue_event_mutex_unlock(void)
{
	mutex_unlock(ue_ksyms.event_mutex);
}

/* refcount_dec_and_mutex_lock() on event_mutex */
static inline bool ue_refcount_dec_and_event_mutex_lock(refcount_t *r)
{
	return refcount_dec_and_mutex_lock(r, ue_ksyms.event_mutex);
}

/* Macros, so that lockdep reports name the caller */
#define ue_lockdep_assert_event_mutex() \
	lockdep_assert_held(ue_ksyms.event_mutex)
#define ue_lockdep_event_mutex_held() \
	lockdep_is_held(ue_ksyms.event_mutex)

/*
 * dynamic_events (kernel/trace/trace_dynevent.h). The tracing core keeps
 * these types private, so the two below mirror its layout. Checked against
 * Debian's linux-source-6.1 (6.1.192, the 6.1.0-56 kernels) and
 * linux-source-6.12 (6.12.117+deb12): the same in both; Linux 5.10.0-46
 * (Debian 11) differs only in create()'s arguments (ue_dyn_create_fn in
 * user_events_compat.h). Any kernel added to the supported list needs the
 * same check.
 */
struct dyn_event;

struct dyn_event_operations {
	struct list_head list;
	ue_dyn_create_fn create;	/* (argc, argv) in 5.10 */
	int (*show)(struct seq_file *m, struct dyn_event *ev);
	bool (*is_busy)(struct dyn_event *ev);
	int (*free)(struct dyn_event *ev);
	bool (*match)(const char *system, const char *event,
		      int argc, const char **argv, struct dyn_event *ev);
};

struct dyn_event {
	struct list_head list;
	struct dyn_event_operations *ops;
};

/*
 * dyn_event_register(). The core has no unregister: the operations are
 * taken off its list by ue_dyn_event_unregister() before the module goes.
 */
static inline void ue_dyn_event_register(struct dyn_event_operations *ops)
{
	INIT_LIST_HEAD(&ops->list);
	mutex_lock(ue_ksyms.dyn_event_ops_mutex);
	list_add_tail(&ops->list, ue_ksyms.dyn_event_ops_list);
	mutex_unlock(ue_ksyms.dyn_event_ops_mutex);
}

static inline void ue_dyn_event_unregister(struct dyn_event_operations *ops)
{
	mutex_lock(ue_ksyms.dyn_event_ops_mutex);
	list_del_init(&ops->list);
	mutex_unlock(ue_ksyms.dyn_event_ops_mutex);
}

/* dyn_event_init() and dyn_event_add(): lists @ev in dynamic_events */
static inline void ue_dyn_event_add(struct dyn_event *ev,
				    struct dyn_event_operations *ops)
{
	ue_lockdep_assert_event_mutex();

	ev->ops = ops;
	list_add_tail(&ev->list, ue_ksyms.dyn_event_list);
}

/* dyn_event_remove() */
static inline void ue_dyn_event_remove(struct dyn_event *ev)
{
	ue_lockdep_assert_event_mutex();

	list_del_init(&ev->list);
}

#endif /* _USER_EVENTS_KSYMS_H */
