/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the module's units provide one another, in the order they depend
 * on each other: each calls only units listed before it (the drawing is
 * in Documentation/development.rst; `make lint` checks it). The
 * per-user bounds (user_events_quota.c), the status page
 * (user_events_status.c), the adding and removing of calls with their
 * removed directories' guards (user_events_dirs.c), the purge event
 * (user_events_purge.c), the event core (trace_events_user.c), the remote
 * write enablers in the registering processes' address spaces
 * (user_events_mm.c), their inheritance at fork (user_events_fork.c); the
 * load, unload, files and ioctls (user_events_main.c) call them all.
 */
#ifndef _USER_EVENTS_INTERNAL_H
#define _USER_EVENTS_INTERNAL_H

#include <linux/fs.h>
#include <linux/types.h>
#include <linux/uidgid.h>

struct dentry;
struct inode;
struct iov_iter;
struct kiocb;
struct trace_event_call;
struct trace_event_file;
struct user_event;
struct user_event_file;
struct user_status_reg;
struct user_write_reg;
struct user_write_unreg;
struct vm_area_struct;

/* One page of status bytes; byte 0 is never handed out */
#define MAX_STATUS_EVENTS PAGE_SIZE

/* What is bounded per user; see user_event_charge() */
enum user_event_quota_kind {
	UE_QUOTA_EVENTS,
	UE_QUOTA_ENABLERS,
	UE_QUOTA_KINDS,
};

/*
 * Who pays for an event or an enabler: the real uid of the task that made
 * it, and its tenant (the owner of its outermost user namespace below the
 * initial one; the uid itself in the initial namespace). Both are bounded.
 */
struct user_event_payer {
	kuid_t uid;
	kuid_t tenant;
};

/* Provided by user_events_quota.c */
struct user_namespace;
kuid_t user_event_tenant(const struct user_namespace *ns, kuid_t uid);
void user_event_payer_current(struct user_event_payer *payer);
int user_event_charge(const struct user_event_payer *payer,
		      enum user_event_quota_kind kind, unsigned int n,
		      bool force);
unsigned int user_event_charge_upto(const struct user_event_payer *payer,
				    enum user_event_quota_kind kind,
				    unsigned int n);
void user_event_uncharge(const struct user_event_payer *payer,
			 enum user_event_quota_kind kind, unsigned int n);

/* Provided by user_events_status.c: the status page's bytes */
int user_status_alloc(struct user_event *user, u8 status);
void user_status_set(int index, u8 status);
void user_status_free(int index);
struct user_event *user_status_next(int *index);
int user_status_mmap(struct file *file, struct vm_area_struct *vma);
int user_status_init(void);
void user_status_exit(void);

/*
 * Provided by user_events_dirs.c: adding and removing the module's calls,
 * with the guards of their removed directories. What it needs to know of
 * the calls comes in at init, from user_events_main.c.
 */
struct user_events_dirs_ops {
	/* The purge event's call: module data */
	bool (*is_purge)(struct trace_event_call *call);
	/* A user event's call (any context; @call is alive) */
	bool (*is_event)(struct trace_event_call *call);
	/* A reference of a user event's memory, and its put */
	void (*hold)(struct trace_event_call *call);
	void (*unhold)(struct trace_event_call *call);
};

int user_event_call_set_visible(struct trace_event_call *call, bool visible);
void user_events_dirs_root(struct dentry *root);
int user_events_dirs_init(const struct user_events_dirs_ops *ops);
void user_events_dirs_exit(void);

/* Provided by user_events_purge.c */
bool user_event_call_is_purge(struct trace_event_call *call);
int user_event_purge_mark(struct trace_event_file *file);
int user_event_purge_add(void);
int user_event_purge_remove(void);

/* Provided by trace_events_user.c, the event core */
extern const struct file_operations user_status_fops;
int user_events_core_init(void (*state_changed)(struct user_event *user));
void user_events_core_start(void);
void user_events_core_stop(void);
int user_events_core_prepare_unload(bool unload);
void user_events_core_exit(void);
u8 user_event_status(struct user_event *user);
void user_event_get(struct user_event *user);
void user_event_put(struct user_event *user);
struct user_event *user_event_of_call(struct trace_event_call *call);
void user_event_mem_get(struct user_event *user);
void user_event_mem_put(struct user_event *user);
int user_events_open(struct inode *inode, struct file *file);
ssize_t user_events_write(struct file *file, const char __user *ubuf,
			  size_t count, loff_t *ppos);
ssize_t user_events_write_iter(struct kiocb *kiocb, struct iov_iter *from);
int user_events_release(struct inode *inode, struct file *file);
int user_events_reg_status(struct user_event_file *info, char *desc,
			   int *status_index, int *write_index);
int user_events_reg_event(struct user_event_file *info, char *desc,
			  u16 flags, struct user_event **userp);
long user_events_del_name(const char *name);

/* Provided by user_events_mm.c: the remote write ABI's enablers */
int user_event_enabler_create(struct user_event *user,
			      const struct user_write_reg *reg);
bool user_event_enabler_exists(unsigned long addr, u8 bit);
int user_event_enabler_remove(const struct user_write_unreg *unreg);
void user_event_enablers_update(struct user_event *user);
bool user_event_mm_settle(void);
int user_events_mm_init(void);
void user_events_mm_exit(void);

/* Provided by user_events_fork.c: fork, exit and exec of processes */
int user_events_fork_init(void);
void user_events_fork_exit(void);

#endif /* _USER_EVENTS_INTERNAL_H */
