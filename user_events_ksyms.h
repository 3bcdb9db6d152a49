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
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/trace_events.h>

struct user_events_ksyms {
	struct dentry *(*tracefs_create_file)(const char *name, umode_t mode,
					      struct dentry *parent, void *data,
					      const struct file_operations *fops);
	void (*tracefs_remove)(struct dentry *dentry);
	struct mutex *event_mutex;		/* the tracing core's */
	struct mutex *dyn_event_ops_mutex;	/* guards dyn_event_ops_list */
	struct list_head *dyn_event_ops_list;
	struct list_head *dyn_event_list;
};

extern struct user_events_ksyms ue_ksyms;

int user_events_ksyms_init(void);

/* Calls a function found through kallsyms; see user_events_call.S */
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
 * linux-source-6.12 (6.12.117+deb12): the same in both. Any kernel added
 * to the supported list needs the same check.
 */
struct dyn_event;

struct dyn_event_operations {
	struct list_head list;
	int (*create)(const char *raw_command);
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
