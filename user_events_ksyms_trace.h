/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracefs and the trace event core, reached through user_events_ksyms.h
 */
#ifndef _USER_EVENTS_KSYMS_TRACE_H
#define _USER_EVENTS_KSYMS_TRACE_H

#include <linux/ring_buffer.h>
#include <linux/trace_events.h>

#include "user_events_ksyms.h"

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

#endif /* _USER_EVENTS_KSYMS_TRACE_H */
