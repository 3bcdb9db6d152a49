/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface between the event core (trace_events_user.c), the remote
 * write enablers that live in the registering processes' address spaces
 * (user_events_mm.c), the status page ABI (user_events_status.c), the
 * per-user bounds (user_events_quota.c), the removed event directories
 * still held (user_events_dirs.c), the purge event that tells the unload
 * which instances to empty (user_events_purge.c) and the module's load,
 * unload and files (user_events_main.c).
 */
#ifndef _USER_EVENTS_INTERNAL_H
#define _USER_EVENTS_INTERNAL_H

#include <linux/fs.h>
#include <linux/types.h>
#include <linux/uidgid.h>

struct dentry;
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

/* Provided by trace_events_user.c */
extern const struct file_operations user_data_fops;
extern const struct file_operations user_status_fops;
int user_events_core_init(void);
void user_events_core_start(void);
void user_events_core_stop(void);
int user_events_core_prepare_unload(bool unload);
void user_events_core_exit(void);
u8 user_event_status(struct user_event *user);
void user_event_get(struct user_event *user);
void user_event_put(struct user_event *user);

bool user_event_call_is_ours(const struct trace_event_call *call);
bool user_event_call_is_purge(const struct trace_event_call *call);
void user_event_mem_get(struct trace_event_call *call);
void user_event_mem_put(struct trace_event_call *call);
int user_event_call_set_visible(struct trace_event_call *call, bool visible);
int user_events_reg_status(struct user_event_file *info, char *desc,
			   int *status_index, int *write_index);

/* Provided by user_events_status.c */
int user_status_alloc(struct user_event *user, u8 status);
void user_status_set(int index, u8 status);
void user_status_free(int index);
struct user_event *user_status_next(int *index);
int user_status_mmap(struct file *file, struct vm_area_struct *vma);
long user_status_ioctl_reg(struct user_event_file *info,
			   struct user_status_reg __user *ureg);
int user_status_init(void);
void user_status_exit(void);

/* Provided by user_events_purge.c */
int user_event_purge_mark(struct trace_event_file *file);
int user_event_purge_add(void);
int user_event_purge_remove(void);

/* Provided by user_events_dirs.c */
int user_events_dirs_prepare(struct trace_event_call *call, bool visible);
void user_events_dirs_root(struct dentry *root);
void user_events_dirs_done(struct trace_event_call *call, bool visible,
			   int ret);
int user_events_dirs_init(void);
void user_events_dirs_exit(void);

/* Provided by user_events_mm.c */
int user_event_enabler_create(struct user_event *user,
			      const struct user_write_reg *reg);
bool user_event_enabler_exists(unsigned long addr, u8 bit);
int user_event_enabler_remove(const struct user_write_unreg *unreg);
void user_event_enablers_update(struct user_event *user);
bool user_event_mm_settle(void);
int user_events_mm_init(void);
void user_events_mm_exit(void);

#endif /* _USER_EVENTS_INTERNAL_H */
