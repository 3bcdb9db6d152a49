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

/*
 * Calls a function found through kallsyms, with up to five arguments; one
 * implementation per architecture: user_events_call_x86.S (IBT-proof
 * trampoline), user_events_call_arm64.c (plain indirect call).
 */
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

#endif /* _USER_EVENTS_KSYMS_H */
