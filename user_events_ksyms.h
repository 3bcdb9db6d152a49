/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel internals that user_events.ko needs but that the kernel does not
 * export to modules. They are resolved once, at module load, by
 * user_events_ksyms_init(); nothing else in the module looks symbols up.
 *
 * The rest of the module reaches them only through wrappers, each named
 * after the kernel function or object it stands for, one header per
 * kernel API, as LTTng's wrapper headers are: event_mutex below, tracefs
 * and trace events in user_events_ksyms_trace.h, user memory in
 * user_events_ksyms_mm.h, dynamic_events in user_events_ksyms_dyn.h. They
 * and user_events_ksyms.c are the only files that see the symbol table.
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

#endif /* _USER_EVENTS_KSYMS_H */
