/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dynamic_events, reached through user_events_ksyms.h
 */
#ifndef _USER_EVENTS_KSYMS_DYN_H
#define _USER_EVENTS_KSYMS_DYN_H

#include <linux/list.h>
#include <linux/seq_file.h>

#include "user_events_ksyms.h"

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

#endif /* _USER_EVENTS_KSYMS_DYN_H */
