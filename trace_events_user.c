// SPDX-License-Identifier: GPL-2.0
/*
 * user_events: trace events that user space registers and writes, for
 * kernels built without CONFIG_USER_EVENTS.
 *
 * A process opens tracefs/user_events_data, registers an event with a
 * descriptor ("name type field; type field") through DIAG_IOCSREG and
 * gets back a write index. Writing that index followed by the payload to
 * the same file emits one record to every probe attached to the event:
 * ftrace (in any instance), perf and BPF through perf. The event is a
 * normal trace event under events/user_events/, so filters, triggers and
 * histograms work on it like on any other event.
 *
 * Whether anything listens is published in a bit of the registering
 * process's memory (the remote write ABI, user_events_mm.c) or in a byte
 * of a page that processes map from tracefs/user_events_status (the status
 * page ABI, user_events_status.c).
 *
 * This file holds the event registry and lifetimes, the probes and
 * delivery, dynamic_events and the operations of the two tracefs files.
 * Descriptors are parsed in user_events_parse.c, the per-user bounds are
 * in user_events_quota.c, the purge event that tells the unload which
 * instances to empty in user_events_purge.c, and the module's load,
 * unload and files in user_events_main.c; the kernel internals that are
 * not exported are reached only through the wrappers of
 * user_events_ksyms.h.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/init.h>
#include <linux/instrumented.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/trace_events.h>
#include <linux/tracefs.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "include/uapi/linux/user_events.h"

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"
#include "user_events_ksyms_trace.h"
#include "user_events_ksyms_dyn.h"
#include "user_events_parse.h"

#define EVENT_HASH_BITS 12

static unsigned int max_events = 32768;
module_param(max_events, uint, 0444);
MODULE_PARM_DESC(max_events,
		 "Maximum number of user events that may exist at once (default 32768)");

/*
 * Probes currently attached, read under sched RCU by writers: the ftrace
 * event files (one per tracing instance that enabled the event). An array
 * is never changed while published: attaching or detaching publishes
 * another one. @capacity is the number of slots allocated.
 *
 * Upstream instead registers each file with tracepoint_probe_register()
 * and has every probe copy the payload from the writer's memory itself.
 * Here a write copies it once, into a per-CPU buffer, checks that copy
 * (user_event_validate()) and hands the same bytes to every file and to
 * perf: however many tracers listen, user memory is read once, and a
 * writer changing its buffer meanwhile cannot give them different
 * records, nor a record that differs from the one checked. Keeping the
 * array here also lets a detach allocate nothing (see
 * user_event_probe_file()). The price is a second copy, from the per-CPU
 * buffer into each ring buffer.
 */
struct user_event_probes {
	struct rcu_head rcu;		/* kfree_rcu() once replaced */
	/* Next on user->spare_probes, while never published */
	struct user_event_probes *next_spare;
	unsigned int capacity;
	unsigned int nr_files;
	struct trace_event_file *files[];
};

struct user_event {
	struct trace_event_call call;
	struct dyn_event devent;	/* listed in dynamic_events */
	struct trace_event_class class;
	struct tracepoint tracepoint;
	struct hlist_node node;
	struct list_head fields;
	char *name;
	char *args;		/* normalized field list */
	refcount_t refcnt;	/* users: see "Lifetime of an event" */
	unsigned int min_size;	/* payload bytes the fields need */
	unsigned int flags;	/* FLAG_BPF_ITER */
	int status_index;	/* 0: no byte in the status page */
	u8 status;		/* EVENT_STATUS_* of the attached probes */
	bool has_dyn;		/* has __data_loc/__rel_loc fields */
	bool persist;		/* stays when unused, until deleted */
	bool persist_cap;	/* made persistent with the capability */
	kuid_t owner;		/* its creator's uid, for isolation */
	struct user_event_payer payer;	/* charged for it: user_event_charge() */
	/* Usable by every user under isolation; event_mutex */
	bool shared;
	bool multi;		/* in user_events_multi, as name.id */
	char *call_name;	/* name in tracefs */
	struct user_event_type *type;	/* holds call.event.type */
	bool traced;		/* had an ftrace event file: event_mutex */
	struct user_event_probes __rcu *probes;
	/*
	 * Unpublished arrays kept for the coming detaches, a stack of
	 * nr_files - 1 of them (see user_event_probe_file()): event_mutex
	 */
	struct user_event_probes *spare_probes;
	/*
	 * The ftrace event file when it is the event's only consumer (one
	 * file attached, no perf), else NULL: the one-copy test of the write
	 * path, one load. Written with WRITE_ONCE under event_mutex by
	 * update_enable_bit_for(), read under sched RCU by writers. The
	 * file stays valid for them as the files in @probes do (see
	 * user_event_probe_file()).
	 */
	struct trace_event_file *direct_file;
	struct hlist_node multi_node;	/* user_event_multi_table */
	struct list_head reap_link;	/* user_event_reap_list */
	/*
	 * The memory's own count: the live event's reference, and one per
	 * tracefs directory of it still held after its removal (see
	 * user_events_dirs.c). The last put frees it and lets go of the
	 * module.
	 */
	refcount_t memref;
	bool deleted;		/* removed from the tracing core: event_mutex */
	struct rcu_head rcu;
};

/*
 * Events registered on one open user_events_data file. The array only
 * grows while the file is open; writers index it under sched RCU.
 */
struct user_event_refs {
	struct rcu_head rcu;
	unsigned int capacity;
	unsigned int count;
	struct user_event *events[];
};

struct user_event_file {
	struct user_event_refs __rcu *refs;
};

/* The index array of a file that registered nothing yet: never written */
static struct user_event_refs user_events_no_refs;

/*
 * Locking: the event tables, the status page bookkeeping and the event
 * calls are changed under the tracing core's event_mutex, which the
 * dynamic_events file also holds when it deletes our events.
 * user_event_mutex is taken outside it to serialize registrations (and
 * the per-file index arrays) without holding event_mutex while user
 * memory is touched.
 *
 * Lifetime of an event (struct user_event, with its trace_event_call):
 *
 *  - It is created by a registration or a "u:" command, under event_mutex,
 *    and from then on is in user_event_table (by name) and, if it is a
 *    multi-format event, in user_event_multi_table (by name and fields).
 *  - @refcnt counts its users: each open user_events_data file that has
 *    it in its index array, each remote write enabler, and a caller that
 *    is registering it. A reference is taken from a lookup only under
 *    event_mutex (user_event_get_locked()); user_event_get() only while
 *    the caller holds one already. The count may be 0 while the event
 *    exists: persistent events, and events the tracing core still uses.
 *  - The last put (refcount_dec_and_mutex_lock(), so always under
 *    event_mutex) deletes a non-persistent event at once, unless the
 *    tracing core uses it (a probe is attached, or call->refcnt is held,
 *    e.g. by an eprobe). Then it goes on user_event_reap_list, and the
 *    reap work deletes it once it is free; a registration, deletion or
 *    status read that meets it finishes the deletion first. So a name
 *    whose last user is gone can be registered again at once.
 *  - Deletion (destroy_user_event(), event_mutex held) happens only with
 *    no users, no probe and no call->refcnt: nobody outside event_mutex
 *    can reach the event then. It leaves both tables, then the memory is
 *    freed after an RCU grace period (the fork probe and writers look at
 *    events under RCU).
 *  - Every event holds a reference on the module, taken when it is
 *    created (try_module_get(): refused once rmmod started) and dropped
 *    when it is deleted. So rmmod is refused while any event exists,
 *    whoever holds it: delete the events first. Nothing the tracing core
 *    holds (enabled files, perf events, eprobes, hist variables,
 *    synthetic events) can outlive the module's text. The RCU callback
 *    that frees a deleted event's memory may still be pending when the
 *    module goes: module_exit() waits for it with rcu_barrier().
 */
static DEFINE_MUTEX(user_event_mutex);
static DEFINE_HASHTABLE(user_event_table, EVENT_HASH_BITS);
static DEFINE_HASHTABLE(user_event_multi_table, EVENT_HASH_BITS);
static unsigned int user_event_count;

/* Unused events the tracing core kept busy; deleted when it lets go */
static LIST_HEAD(user_event_reap_list);
static void user_event_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(user_event_reap_work, user_event_reap_fn);

static u64 user_event_multi_id;
static struct workqueue_struct *user_event_wq;

/* Per-cpu staging of a payload, copied once from user memory */
static void __percpu *write_buffer;

static bool one_copy = true;
module_param(one_copy, bool, 0444);
MODULE_PARM_DESC(one_copy,
		 "Copy a write straight into the ring buffer when one ftrace instance is the event's only consumer (default Y). Reads N where the tracing core's staging record (trace_buffered_event) cannot be located: kernels whose kallsyms lists no variables (CONFIG_KALLSYMS_ALL unset: Debian's arm64 6.1 and 5.10). Writes then take the staged path, one copy more; everything else is the same");

static int user_event_parse(char *desc, u16 reg_flags, bool persist,
			    struct user_event **out, bool *created);
static int destroy_user_event(struct user_event *user);

static u32 user_event_key(const char *name)
{
	return jhash(name, strlen(name), 0);
}

/* Multi-format events are told apart by their fields and flags too */
static u32 user_event_multi_key(const char *name, const char *args,
				unsigned int flags)
{
	return jhash(args, strlen(args), user_event_key(name) ^ flags);
}

/*
 * Tenant isolation: whether an event belongs to the user that created it.
 * "owner" (the default): an event made by a privileged task (CAP_PERFMON
 * or CAP_SYS_ADMIN in the initial user namespace: every "u:" of
 * dynamic_events, the way to share a name between users) is shared; a
 * caller without the capability may register (and so write to) only its
 * own events and shared ones, and delete only its own; another user's
 * event gives EACCES. A multi-format registration finds the shared event
 * of that format, else (a caller without the capability) its own, else
 * creates one; a privileged caller never joins a user's.
 * "shared": upstream's behaviour, anyone who can open user_events_data
 * uses and deletes any event. Ownership and privilege are the calling
 * task's (real uid, capabilities), not those of whoever opened the file.
 * Writable at run time by root; see Documentation/security.rst.
 */
static bool isolation_owner = true;

static int isolation_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "owner"))
		WRITE_ONCE(isolation_owner, true);
	else if (sysfs_streq(val, "shared"))
		WRITE_ONCE(isolation_owner, false);
	else
		return -EINVAL;
	return 0;
}

static int isolation_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  READ_ONCE(isolation_owner) ? "owner" : "shared");
}

static const struct kernel_param_ops isolation_ops = {
	.set = isolation_set,
	.get = isolation_get,
};
module_param_cb(isolation, &isolation_ops, NULL, 0644);
MODULE_PARM_DESC(isolation,
		 "owner: unprivileged users use only their own and shared (root-made) events (default); shared: anyone uses and deletes any event, as upstream");

/*
 * May the caller use @user (register it, and so write to it)? Under
 * isolation: its own events, shared ones (made by a privileged task or
 * through dynamic_events), or any with the capability. A uid 0 without
 * the capability (a container's root) is a tenant like any other uid.
 */
static bool user_event_may_use(struct user_event *user)
{
	return !READ_ONCE(isolation_owner) || user->shared ||
	       uid_eq(user->owner, current_uid()) || perfmon_capable();
}

/* May the caller delete @user? Its own, unless shared; or privileged */
static bool user_event_may_delete(struct user_event *user)
{
	return !READ_ONCE(isolation_owner) ||
	       (uid_eq(user->owner, current_uid()) && !user->shared) ||
	       perfmon_capable();
}

/*
 * May the caller attach perf (and so BPF) to @user? Under isolation: the
 * owner of an event that is not shared, or a privileged caller. Not a
 * tenant on a shared (root's) event: perf on it sets the enable bit of
 * every process that registered it, root's services included, which would
 * then build and write records for the tenant's counter.
 */
static bool user_event_may_perf(struct user_event *user)
{
	return !READ_ONCE(isolation_owner) ||
	       (uid_eq(user->owner, current_uid()) && !user->shared) ||
	       perfmon_capable();
}

/*
 * May a multi-format registration by the caller join @user? Under
 * isolation, a tenant finds its own events and shared ones; a privileged
 * caller, whose event is shared, finds shared ones only: never a tenant's,
 * whose owner would then receive root's records and decide their format.
 */
static bool user_event_may_join_multi(struct user_event *user)
{
	if (!READ_ONCE(isolation_owner) || user->shared)
		return true;

	return !perfmon_capable() && uid_eq(user->owner, current_uid());
}

u8 user_event_status(struct user_event *user)
{
	return READ_ONCE(user->status);
}

/* Another reference, for a caller that holds one already */
void user_event_get(struct user_event *user)
{
	refcount_inc(&user->refcnt);
}

/*
 * A reference from a lookup: event_mutex is held, and only a put under it
 * takes the count to 0, so a count of 0 cannot change under us.
 */
static void user_event_get_locked(struct user_event *user)
{
	ue_lockdep_assert_event_mutex();

	if (!refcount_inc_not_zero(&user->refcnt))
		refcount_set(&user->refcnt, 1);
	list_del_init(&user->reap_link);
}

/*
 * An unused event could not be deleted yet (the tracing core holds it):
 * retried by the reap work, and by every registration, deletion and read
 * of user_events_status. Nothing tells us when an eprobe or a hist
 * variable lets go of an event, so the work retries every second while
 * the list is not empty.
 */
static void user_event_reap_later(struct user_event *user)
{
	ue_lockdep_assert_event_mutex();

	if (list_empty(&user->reap_link))
		list_add_tail(&user->reap_link, &user_event_reap_list);
	queue_delayed_work(user_event_wq, &user_event_reap_work, HZ);
}

/* Deletes the unused events that the tracing core no longer holds */
static void user_event_reap_all(void)
{
	struct user_event *user, *next;

	ue_lockdep_assert_event_mutex();

	list_for_each_entry_safe(user, next, &user_event_reap_list, reap_link)
		if (!refcount_read(&user->refcnt) && !user->persist)
			destroy_user_event(user);
		else
			list_del_init(&user->reap_link);
}

static void user_event_reap_fn(struct work_struct *work)
{
	struct user_event *user;

	ue_event_mutex_lock();
	user_event_reap_all();
	/*
	 * Those still held by the tracing core without a probe (an eprobe, a
	 * hist variable): try again in a second. An attached probe tells us
	 * when it goes (update_enable_bit_for()).
	 */
	list_for_each_entry(user, &user_event_reap_list, reap_link)
		if (!READ_ONCE(user->status)) {
			queue_delayed_work(user_event_wq, &user_event_reap_work,
					   HZ);
			break;
		}
	ue_event_mutex_unlock();
}

/* The last user went away; event_mutex held */
static void user_event_unused(struct user_event *user)
{
	ue_lockdep_assert_event_mutex();

	if (user->persist)
		return;

	/* The tracing core still uses it: delete it when it lets go */
	if (destroy_user_event(user))
		user_event_reap_later(user);
}

/* Drops a reference; event_mutex held */
static void user_event_put_locked(struct user_event *user)
{
	ue_lockdep_assert_event_mutex();

	if (refcount_dec_and_test(&user->refcnt))
		user_event_unused(user);
}

/*
 * Drops a reference. The last one is dropped under event_mutex, so that no
 * lookup can take a new one while the event is being deleted. May sleep;
 * the caller must not hold event_mutex.
 *
 * Differs on purpose: the last put deletes the event itself instead of
 * queueing the deletion, so that the name is free when the put returns.
 */
void user_event_put(struct user_event *user)
{
	if (!ue_refcount_dec_and_event_mutex_lock(&user->refcnt))
		return;

	user_event_unused(user);
	ue_event_mutex_unlock();
}

/*
 * Upstream keeps its enablers and their per-address-space records here;
 * ours are in user_events_mm.c, where a fault on an enable bit is taken by
 * a task of that address space, never by a kernel worker that user space
 * could make wait.
 */

/*
 * Type ids and deleted events
 *
 * Every record in a ring buffer starts with its event's type id, and a
 * reader decodes it with whatever event holds that id when it reads. The
 * id of an event is therefore not held by its trace_event_call (whose
 * removal would free it, and 6.12 gives a freed id to the next event at
 * once) but by a struct user_event_type of its own, registered with
 * register_trace_event() and pointed to by call->event.type; call->event
 * has no functions, so trace_remove_event_call() leaves the id alone.
 *
 * When the event is deleted:
 *  - if it never had an ftrace event file attached (nobody enabled it in
 *    any instance), no ring buffer can hold a record of it: the id is
 *    freed at once (user_event_type_put());
 *  - else its records may still be in a buffer (or a snapshot): the type
 *    stays registered as a tombstone, and its records print as those of a
 *    deleted event, with no payload decoded. Nobody's records are erased.
 *    Tombstones are freed when the unload is prepared, after the ring
 *    buffers of every instance where one of our events was ever enabled
 *    are emptied (the purge event, below);
 *  - past MAX_TOMBSTONES, the event's id is freed at once instead, right
 *    after emptying the instances its own removal just marked, as the
 *    core does when root deletes a dynamic event. The core's marks are
 *    used only right after they are set: it drops every instance's mark
 *    when it refuses to remove a busy event (root's "!NAME" of an enabled
 *    synthetic event), so older marks cannot be trusted.
 *
 * @user is written under event_mutex, before the event's call is removed,
 * and read by readers under the core's trace_event_sem (read), which
 * trace_remove_event_call() takes for write: a reader that saw the event
 * is done with it before the removal returns, and the event is freed only
 * after that.
 */
#define MAX_TOMBSTONES 4096

struct user_event_type {
	struct trace_event_call call;	/* call.event holds the id */
	struct user_event *user;	/* NULL: deleted (a tombstone) */
	struct list_head link;		/* user_event_tombstones */
	char name[];
};

/* Under event_mutex */
static LIST_HEAD(user_event_tombstones);
static unsigned int user_event_nr_tombstones;

static struct list_head *user_event_get_fields(struct trace_event_call *call)
{
	struct user_event_type *type = container_of(call,
						    struct user_event_type,
						    call);
	struct user_event *user = READ_ONCE(type->user);

	return user ? &user->class.fields : NULL;
}

/*
 * The class of the calls that hold ids: 6.12's print_event_fields() finds
 * the fields of a record's event through the registered trace_event.
 */
static struct trace_event_class user_event_type_class = {
	.system		= USER_EVENTS_SYSTEM,
	.get_fields	= user_event_get_fields,
};

static void free_user_event(struct user_event *user)
{
	user_event_free_fields(&user->fields);
	kfree(user->call_name);
	kfree(user->call.print_fmt);
	kfree(user->class.fields_array);
	kfree(user->args);
	kfree(user->name);
	kfree(user);
}

/*
 * Parses a descriptor into a new, not yet registered event. @text is
 * modified.
 */
static int user_event_from_desc(char *text, struct user_event **out)
{
	struct user_event_desc desc;
	struct user_event *user;
	int ret;

	ret = user_event_parse_desc(text, &desc);
	if (ret)
		return ret;

	user = kzalloc(sizeof(*user), GFP_KERNEL_ACCOUNT);
	if (!user) {
		user_event_desc_free(&desc);
		return -ENOMEM;
	}

	user->name = desc.name;
	user->args = desc.args;
	INIT_LIST_HEAD(&user->fields);
	list_splice(&desc.fields, &user->fields);
	user->flags = desc.flags;
	user->min_size = desc.min_size;
	user->has_dyn = desc.has_dyn;

	*out = user;
	return 0;
}

static enum print_line_t user_event_print_trace(struct trace_iterator *iter,
						int flags,
						struct trace_event *event)
{
	struct user_event_type *type = container_of(event,
						    struct user_event_type,
						    call.event);
	struct user_event *user = READ_ONCE(type->user);
	struct trace_seq *s = &iter->seq;

	if (!user) {
		trace_seq_printf(s, "%s: (deleted event)\n", type->name);
		return trace_handle_return(s);
	}

	trace_seq_printf(s, "%s:", user->call_name);
	user_event_print_fields(s, &user->fields, iter->ent, iter->ent_size);
	trace_seq_putc(s, '\n');

	return trace_handle_return(s);
}

static struct trace_event_functions user_event_funcs = {
	.trace = user_event_print_trace,
};

/* Takes a type id for @user, named as its call; event_mutex held */
static int user_event_type_get(struct user_event *user)
{
	size_t len = strlen(user->call_name) + 1;
	struct user_event_type *type;

	ue_lockdep_assert_event_mutex();

	type = kzalloc(struct_size(type, name, len), GFP_KERNEL_ACCOUNT);
	if (!type)
		return -ENOMEM;

	memcpy(type->name, user->call_name, len);
	INIT_LIST_HEAD(&type->link);
	type->call.name = type->name;
	type->call.class = &user_event_type_class;
	type->call.event.funcs = &user_event_funcs;
	type->user = user;
	if (!register_trace_event(&type->call.event)) {
		kfree(type);
		return -ENODEV;
	}

	user->type = type;
	user->call.event.type = type->call.event.type;
	return 0;
}

static void user_event_type_free(struct user_event_type *type)
{
	unregister_trace_event(&type->call.event);
	kfree(type);
}

/*
 * Frees every tombstone when the unload is prepared, once the instances
 * where one of our events was enabled are empty (user_event_purge_remove(),
 * called first, under the same event_mutex)
 */
static void user_event_tombstones_free(void)
{
	struct user_event_type *type, *next;

	ue_lockdep_assert_event_mutex();

	list_for_each_entry_safe(type, next, &user_event_tombstones, link) {
		list_del(&type->link);
		user_event_type_free(type);
	}
	user_event_nr_tombstones = 0;
}

/*
 * Lets go of the id of a deleted event whose call was just removed: at
 * once if it was never traced, else as a tombstone, else (too many) at
 * once after the core empties the instances that removal marked.
 * event_mutex held.
 */
static void user_event_type_put(struct user_event_type *type, bool traced)
{
	ue_lockdep_assert_event_mutex();

	if (traced && user_event_nr_tombstones < MAX_TOMBSTONES) {
		list_add_tail(&type->link, &user_event_tombstones);
		user_event_nr_tombstones++;
		return;
	}

	if (traced)
		ue_tracing_reset_marked();
	user_event_type_free(type);
}

/* Event creation and removal */

/* Told of each state change, under event_mutex: the enablers' update */
static void (*user_event_state_changed)(struct user_event *user);

static void user_event_free_rcu(struct rcu_head *rcu)
{
	free_user_event(container_of(rcu, struct user_event, rcu));
}

/*
 * Deletes an event nobody uses. Fails with -EBUSY while it has users, a
 * probe is attached or the tracing core holds call->refcnt.
 */
static int destroy_user_event(struct user_event *user)
{
	int ret;

	ue_lockdep_assert_event_mutex();

	if (refcount_read(&user->refcnt) || READ_ONCE(user->status) ||
	    ue_call_core_refs(&user->call))
		return -EBUSY;

	/* From now on readers print its records as a deleted event's */
	WRITE_ONCE(user->type->user, NULL);
	ret = user_event_call_set_visible(&user->call, false);
	if (ret) {
		WRITE_ONCE(user->type->user, user);
		return ret;
	}
	WRITE_ONCE(user->deleted, true);
	user_event_type_put(user->type, user->traced);

	ue_dyn_event_remove(&user->devent);
	list_del_init(&user->reap_link);
	hash_del(&user->node);
	if (user->multi)
		hash_del(&user->multi_node);
	user_event_count--;
	user_event_uncharge(&user->payer, UE_QUOTA_EVENTS, 1);

	if (user->status_index)
		user_status_free(user->status_index);

	/* trace_remove_event_call() freed the class fields */
	kfree(rcu_dereference_protected(user->probes, true));
	kfree(user->spare_probes);

	/*
	 * The directories nobody held let go of the event already
	 * (user_events_dirs_done()); a held one keeps its memory (and the
	 * module) until it is let go
	 */
	user_event_mem_put(user);
	return 0;
}

/* A status page byte for @user, unless it has one (user_events_status.c) */
static int user_event_assign_status(struct user_event *user)
{
	int index;

	ue_lockdep_assert_event_mutex();

	if (user->status_index)
		return 0;

	index = user_status_alloc(user, user->status);
	if (index < 0)
		return index;

	user->status_index = index;
	return 0;
}

/*
 * Finds the single-format event @name (multi-format ones are not named).
 * Differs on purpose: multi-format events are found by name, fields and
 * flags in a table of their own (find_user_event_multi()).
 */
static struct user_event *find_user_event(const char *name)
{
	struct user_event *user;
	u32 key = user_event_key(name);

	ue_lockdep_assert_event_mutex();

	hash_for_each_possible(user_event_table, user, node, key)
		if (!user->multi && !strcmp(user->name, name))
			return user;

	return NULL;
}

/*
 * Finds the multi-format event @name with exactly these fields, in O(1)
 * however many formats the name has.
 */
static struct user_event *find_user_event_multi(const char *name,
						const char *args,
						unsigned int flags)
{
	struct user_event *user, *own = NULL;
	u32 key = user_event_multi_key(name, args, flags);

	ue_lockdep_assert_event_mutex();

	/*
	 * Under isolation, each user has its own: others' are not found.
	 * A shared one wins over the caller's own: once root registered the
	 * format, every new registration joins root's event.
	 */
	hash_for_each_possible(user_event_multi_table, user, multi_node, key) {
		if (strcmp(user->name, name) || strcmp(user->args, args) ||
		    user->flags != flags || !user_event_may_join_multi(user))
			continue;
		if (user->shared)
			return user;
		own = user;
	}

	return own;
}

/*
 * Checks the payload @data of @len bytes, a copy in kernel memory that the
 * writer cannot change: every __data_loc/__rel_loc field must point inside
 * the payload, and a char array must end with a NUL within it.
 */
static int user_event_validate(struct user_event *user, const void *data,
			       size_t len)
{
	const size_t hdr = sizeof(struct trace_entry);
	struct user_event_field *field;
	u32 loc, off, size;
	const char *pos;

	list_for_each_entry(field, &user->fields, link) {
		if (field->kind != FIELD_DATA_LOC &&
		    field->kind != FIELD_REL_LOC)
			continue;

		memcpy(&loc, data + field->offset - hdr, sizeof(loc));
		off = user_field_loc(field, loc, &size);

		/* Offsets are in the record, which starts with the header */
		if (off < hdr || off + size > hdr + len)
			return -EFAULT;

		pos = data + off - hdr;
		if (field->is_char && (!size || pos[size - 1] != '\0'))
			return -EFAULT;
	}

	return 0;
}

/*
 * A staged payload, already checked, into one ftrace event file. Differs
 * on purpose: it gets the one copy every consumer shares (see struct
 * user_event_probes) instead of reading the writer's memory itself.
 */
static void user_event_ftrace(struct user_event *user,
			      struct trace_event_file *file,
			      const void *data, size_t len)
{
	struct trace_event_buffer fbuffer;
	struct trace_entry *entry;

	if (trace_trigger_soft_disabled(file))
		return;

	entry = trace_event_buffer_reserve(&fbuffer, file,
					   sizeof(*entry) + len);
	if (!entry)
		return;

	memcpy(entry + 1, data, len);
	trace_event_buffer_commit(&fbuffer);
}

#ifdef CONFIG_PERF_EVENTS
/*
 * Bytes of the perf buffer that BPF programs attached to @user may load
 * from, for a record of @size bytes. A tracepoint program may load from its
 * context at any offset below PERF_MAX_TRACE_SIZE that is below the end of
 * the event's last field (trace_event_get_offsets(), checked when the
 * program is attached). The fields are packed and a write carries at least
 * min_size payload bytes, so the record covers every field. An event
 * without fields has no last field: the core then computes the bound from
 * the memory that follows the empty list, so the whole buffer is prepared.
 */
static int user_event_bpf_ctx_size(struct user_event *user, int size)
{
	if (unlikely(list_empty(&user->class.fields)))
		return PERF_MAX_TRACE_SIZE;

	return size;
}

/*
 * The record for perf and BPF, laid out like every tracepoint's: BPF
 * programs of any event (BPF_ITER ones too) get it with a pointer to the
 * caller's registers in its first 8 bytes (perf_trace_run_bpf_submit()),
 * which bpf_get_stackid(), bpf_get_stack() and bpf_perf_event_output()
 * read, and the payload after it. Nothing they may load is left over from
 * an earlier record.
 *
 * user_event_perf_alloc() takes a perf buffer for a payload of @len bytes
 * (NULL when nothing listens on this CPU or perf is in use in this context
 * already); the payload goes to entry + 1, then user_event_perf_submit(),
 * or user_event_perf_drop() to give the buffer back unsubmitted.
 */
struct user_event_perf_rec {
	struct hlist_head *head;
	struct pt_regs *regs;
	int size;	/* what the record is submitted with */
	int alloc;	/* what BPF programs may load from */
	int context;
	bool bpf;
};

static __always_inline struct trace_entry *
user_event_perf_alloc(struct user_event *user, size_t len,
		      struct user_event_perf_rec *rec)
{
	rec->head = this_cpu_ptr(user->call.perf_events);
	rec->bpf = bpf_prog_array_valid(&user->call);
	if (!rec->head || (hlist_empty(rec->head) && !rec->bpf))
		return NULL;

	rec->size = ALIGN(sizeof(struct trace_entry) + len + sizeof(u32),
			  sizeof(u64)) - sizeof(u32);
	rec->alloc = rec->bpf ? user_event_bpf_ctx_size(user, rec->size) :
				rec->size;

	return perf_trace_buf_alloc(rec->alloc, &rec->regs, &rec->context);
}

static __always_inline void
user_event_perf_submit(struct user_event *user, struct trace_entry *entry,
		       size_t len, struct user_event_perf_rec *rec)
{
	perf_fetch_caller_regs(rec->regs);
	/* The header's padding and RT-only fields reach user space too */
	memset(entry, 0, sizeof(*entry));
	ue_tracing_generic_entry_update(entry, user->call.event.type);
	/* perf_trace_buf_alloc() zeroed only the last 8 bytes of alloc */
	if (rec->alloc > rec->size)
		memset((void *)(entry + 1) + len, 0,
		       rec->alloc - sizeof(*entry) - len);

	/*
	 * Programs attached after bpf was read do not run on this record:
	 * alloc was sized for those that were there.
	 */
	if (rec->bpf)
		perf_trace_run_bpf_submit(entry, rec->size, rec->context,
					  &user->call, 1, rec->regs, rec->head,
					  NULL);
	else
		perf_tp_event(user->call.event.type, 1, entry, rec->size,
			      rec->regs, rec->head, rec->context, NULL);
}

/*
 * Gives back a buffer of user_event_perf_alloc() unsubmitted: a submission
 * to no perf event and no task only releases the recursion context
 * (perf_swevent_put_recursion_context() itself is not exported).
 */
static noinline void user_event_perf_drop(struct user_event *user,
					  struct trace_entry *entry,
					  struct user_event_perf_rec *rec)
{
	HLIST_HEAD(none);

	perf_fetch_caller_regs(rec->regs);
	perf_tp_event(user->call.event.type, 0, entry, rec->size, rec->regs,
		      &none, rec->context, NULL);
}

/* A staged payload, already checked, to perf and BPF */
static void user_event_perf(struct user_event *user,
			    const void *data, size_t len)
{
	struct user_event_perf_rec rec;
	struct trace_entry *entry;

	entry = user_event_perf_alloc(user, len, &rec);
	if (!entry)
		return;

	memcpy(entry + 1, data, len);
	user_event_perf_submit(user, entry, len, &rec);
}
#else
static void user_event_perf(struct user_event *user,
			    const void *data, size_t len)
{
}
#endif

/* Probes and status */

/*
 * Recomputes the event's status from its attached probes and publishes
 * it. Called under event_mutex whenever a probe attaches or detaches.
 * Differs on purpose: the status comes from the module's own probes array
 * (see struct user_event_probes), and is also written to the event's
 * status page byte.
 */
static void update_enable_bit_for(struct user_event *user, bool perf)
{
	struct user_event_probes *probes;
	u8 status = 0;

	ue_lockdep_assert_event_mutex();
	probes = rcu_dereference_protected(user->probes,
					   ue_lockdep_event_mutex_held());
	if (probes && probes->nr_files)
		status |= EVENT_STATUS_FTRACE;
	if (perf)
		status |= EVENT_STATUS_PERF;

	WRITE_ONCE(user->direct_file,
		   status == EVENT_STATUS_FTRACE && probes->nr_files == 1 &&
		   one_copy ? probes->files[0] : NULL);

	if (status == user->status)
		return;

	WRITE_ONCE(user->status, status);
	if (user->status_index)
		user_status_set(user->status_index, status);

	user_event_state_changed(user);

	/*
	 * The last probe went away from an event nobody uses: the tracing
	 * core is in the middle of detaching it, so delete it from a work
	 * item.
	 */
	if (!status && !user->persist && !refcount_read(&user->refcnt)) {
		if (list_empty(&user->reap_link))
			list_add_tail(&user->reap_link, &user_event_reap_list);
		mod_delayed_work(user_event_wq, &user_event_reap_work, 0);
	}
}

/* An empty array of @capacity slots (event_mutex, the attach) */
static struct user_event_probes *user_event_probes_alloc(unsigned int capacity)
{
	struct user_event_probes *probes;

	probes = kzalloc(struct_size(probes, files, capacity), GFP_KERNEL);
	if (probes)
		probes->capacity = capacity;
	return probes;
}

/*
 * For an attach to @n files: the array of n + 1 slots to publish and, if
 * n >= 1, the spare of n slots it pushes on user->spare_probes (the
 * invariant of user_event_probe_file()). NULL, with nothing allocated or
 * pushed, if memory is short. event_mutex held.
 */
static struct user_event_probes *
user_event_probes_grow(struct user_event *user, unsigned int n)
{
	struct user_event_probes *new, *spare = NULL;

	ue_lockdep_assert_event_mutex();

	new = user_event_probes_alloc(n + 1);
	if (n)
		spare = user_event_probes_alloc(n);
	if (!new || (n && !spare)) {
		kfree(new);
		kfree(spare);
		return NULL;
	}
	if (spare) {
		spare->next_spare = user->spare_probes;
		user->spare_probes = spare;
	}
	return new;
}

/*
 * For a detach from @n >= 2 files: the top spare, popped off
 * user->spare_probes, with room for n - 1 (the invariant of
 * user_event_probe_file()). Allocates nothing. event_mutex held.
 */
static struct user_event_probes *
user_event_probes_shrink(struct user_event *user, unsigned int n)
{
	struct user_event_probes *new = user->spare_probes;

	ue_lockdep_assert_event_mutex();

	/* Not reachable while the invariant holds */
	if (WARN_ON_ONCE(!new || new->capacity < n - 1))
		return NULL;
	user->spare_probes = new->next_spare;
	new->next_spare = NULL;
	return new;
}

/*
 * Fills the unpublished @new with the @n files of @old: all of them and
 * @file last for an attach (@add), all but @file for a detach
 */
static void user_event_probes_fill(struct user_event_probes *new,
				   const struct user_event_probes *old,
				   unsigned int n,
				   struct trace_event_file *file, bool add)
{
	unsigned int i;

	new->nr_files = 0;
	for (i = 0; i < n; i++)
		if (add || old->files[i] != file)
			new->files[new->nr_files++] = old->files[i];
	if (add)
		new->files[new->nr_files++] = file;
}

/*
 * Attaches or detaches an ftrace event file, under event_mutex (the core
 * calls class->reg under it), and never waits for a grace period there:
 * the replaced array is freed with kfree_rcu(), which needs no module
 * code, so nothing is left to wait for at module exit.
 *
 * A detach cannot fail (the core ignores its errors) and so allocates
 * nothing: each attach that makes n >= 2 files allocates, besides the
 * array it publishes, a spare array of n - 1 slots, pushed on
 * user->spare_probes; each detach from n >= 2 files pops the top one
 * (room for n - 1) and publishes it. Invariant: with n >= 1 files
 * attached, the stack holds n - 1 spares, the top one with room for
 * n - 1, the next for n - 2, and so on; with none (the only state
 * destroy_user_event() sees), both user->probes and the stack are empty.
 *
 * Writers read the array and its files with preemption disabled
 * (user_event_write_begin() to user_event_emit_end(),
 * user_events_write_other_iter()), the sched-RCU read side: since 4.20
 * RCU is consolidated (5.10, 6.1, 6.12, PREEMPT_RT too), so the normal
 * grace period of kfree_rcu() waits for those readers. A file stays
 * valid for a writer that still sees it after its detach: the tracing
 * core frees an instance's files only after its own
 * tracepoint_synchronize_unregister() (instance removal), and our
 * event's files when it removes the call, which destroy_user_event()
 * does only with no user left, while every writer holds a reference (its
 * descriptor's index array, put at release(), after the write returned).
 */
static int user_event_probe_file(struct user_event *user,
				 struct trace_event_file *file, bool add)
{
	struct user_event_probes *old, *new = NULL;
	unsigned int i, n;

	ue_lockdep_assert_event_mutex();

	old = rcu_dereference_protected(user->probes,
					ue_lockdep_event_mutex_held());
	n = old ? old->nr_files : 0;

	if (add) {
		int ret = user_event_purge_mark(file);

		if (ret)
			return ret;
		new = user_event_probes_grow(user, n);
		if (!new)
			return -ENOMEM;
	} else {
		for (i = 0; i < n && old->files[i] != file; i++)
			;
		if (i == n)
			return 0;
		if (n > 1) {
			new = user_event_probes_shrink(user, n);
			if (!new)
				return -ENOMEM;
		}
	}

	if (new)
		user_event_probes_fill(new, old, n, file, add);

	rcu_assign_pointer(user->probes, new);
	if (add)
		user->traced = true;
	update_enable_bit_for(user, user->status & EVENT_STATUS_PERF);

	/* Writers may still use the array being replaced */
	if (old)
		kfree_rcu(old, rcu);

	return 0;
}

static int user_event_reg(struct trace_event_call *call,
			  enum trace_reg type, void *data)
{
	struct user_event *user = call->data;
	struct trace_event_file *file = data;

	switch (type) {
	case TRACE_REG_REGISTER:
		/*
		 * A trigger written through a file of a removed directory
		 * (before eventfs: user_events_dirs.c) attaches nothing
		 */
		if (user->deleted || (file->flags & EVENT_FILE_FL_FREED))
			return -ENODEV;
		return user_event_probe_file(user, file, true);
	case TRACE_REG_UNREGISTER:
		return user_event_probe_file(user, file, false);
#ifdef CONFIG_PERF_EVENTS
	case TRACE_REG_PERF_REGISTER:
		update_enable_bit_for(user, true);
		return 0;
	case TRACE_REG_PERF_UNREGISTER:
		update_enable_bit_for(user, false);
		return 0;
	case TRACE_REG_PERF_OPEN:
	case TRACE_REG_PERF_CLOSE:
	case TRACE_REG_PERF_ADD:
	case TRACE_REG_PERF_DEL:
		return 0;
#endif
	}

	return 0;
}

#ifdef CONFIG_PERF_EVENTS
/*
 * Every perf_event_open() of the event, before the core's own checks,
 * with event_mutex held (perf_trace_init()): under isolation, perf on an
 * event registers it (every enable bit set, the event kept and busy), so
 * only whoever may delete it may attach to it (user_event_may_perf()). A
 * counter inherited at fork was allowed with its parent, as the core
 * decides: current is then the forking task, not the opener.
 */
static int user_event_perf_perm(struct trace_event_call *call,
				struct perf_event *p_event)
{
	struct user_event *user = call->data;

	if (p_event->parent)
		return 0;

	return user_event_may_perf(user) ? 0 : -EACCES;
}
#endif

/* The user event @call is, or NULL (any context; @call is alive) */
struct user_event *user_event_of_call(struct trace_event_call *call)
{
	if (!call || !call->class || call->class->reg != user_event_reg)
		return NULL;
	return container_of(call, struct user_event, call);
}

/* A reference of a user event's memory, for user_events_dirs.c */
void user_event_mem_get(struct user_event *user)
{
	refcount_inc(&user->memref);
}

/*
 * The last one frees the event, after a grace period (the fork probe may
 * still look at it under RCU), and drops the module reference the event
 * took at its registration: module_exit() waits for the callback with
 * rcu_barrier().
 */
void user_event_mem_put(struct user_event *user)
{
	if (!refcount_dec_and_test(&user->memref))
		return;
	call_rcu(&user->rcu, user_event_free_rcu);
	module_put(THIS_MODULE);
}

/* dynamic_events: "u:name fields" creates, "!u:name" deletes */

static struct user_event *user_event_from_dyn(struct dyn_event *ev)
{
	return container_of(ev, struct user_event, devent);
}

static int user_event_create(const char *raw_command)
{
	struct user_event_payer payer;
	struct user_event *user;
	bool created = false;
	char *desc;
	int ret;

	if (!str_has_prefix(raw_command, USER_EVENTS_PREFIX))
		return -ECANCELED;

	raw_command += strlen(USER_EVENTS_PREFIX);
	if (strlen(raw_command) >= MAX_EVENT_DESC)
		return -EINVAL;

	desc = kstrdup(raw_command, GFP_KERNEL_ACCOUNT);
	if (!desc)
		return -ENOMEM;

	mutex_lock(&user_event_mutex);
	ue_event_mutex_lock();
	ret = user_event_parse(desc, USER_EVENT_REG_PERSIST, true, &user, &created);
	/*
	 * Under isolation, root's "u:" of a user's event makes it root's and
	 * shared: a name another user took first is not lost for good.
	 */
	user_event_payer_current(&payer);
	if (!ret && READ_ONCE(isolation_owner) && !user->shared &&
	    perfmon_capable() &&
	    !user_event_charge(&payer, UE_QUOTA_EVENTS, 1, true)) {
		user_event_uncharge(&user->payer, UE_QUOTA_EVENTS, 1);
		user->payer = payer;
		user->owner = current_uid();
		user->shared = true;
	}
	if (!ret) {
		/* A status byte if one is free; only the status ABI needs it */
		user_event_assign_status(user);
		user_event_put_locked(user);
	}
	ue_event_mutex_unlock();
	mutex_unlock(&user_event_mutex);

	kfree(desc);
	return ret;
}

static int user_event_show(struct seq_file *m, struct dyn_event *ev)
{
	struct user_event *user = user_event_from_dyn(ev);

	seq_printf(m, "%s%s", USER_EVENTS_PREFIX, user->call_name);
	if (user->flags & FLAG_BPF_ITER)
		seq_puts(m, ":BPF_ITER");
	if (user->args[0])
		seq_printf(m, " %s", user->args);
	seq_putc(m, '\n');

	return 0;
}

static bool user_event_is_busy(struct dyn_event *ev)
{
	struct user_event *user = user_event_from_dyn(ev);

	return READ_ONCE(user->status) || ue_call_core_refs(&user->call) ||
	       refcount_read(&user->refcnt);
}

/* Called with event_mutex held */
static int user_event_free(struct dyn_event *ev)
{
	return destroy_user_event(user_event_from_dyn(ev));
}

/* Compares the words after "!u:name" with the event's fields, if given */
static bool user_event_match(const char *system, const char *event,
			     int argc, const char **argv,
			     struct dyn_event *ev)
{
	struct user_event *user = user_event_from_dyn(ev);

	if (strcmp(event, user->call_name))
		return false;

	if (system && strcmp(system, user->class.system))
		return false;

	return user_event_args_match(user->args, argc, argv);
}

/* dynamic_events' create callback, whichever shape the kernel has */
static int user_event_create_cb(UE_DYN_CREATE_PARAMS)
{
	return UE_DYN_CREATE_CALL(user_event_create);
}

static struct dyn_event_operations user_event_dops = {
	.create = user_event_create_cb,
	.show = user_event_show,
	.is_busy = user_event_is_busy,
	.free = user_event_free,
	.match = user_event_match,
};

static void user_event_dyn_register(void)
{
	ue_dyn_event_register(&user_event_dops);
}

/* The tracing core has no unregister: take our operations off its list */
static void user_event_dyn_unregister(void)
{
	ue_dyn_event_unregister(&user_event_dops);
}

/*
 * The name of @user's call: its name, or NAME.<id> for a multi-format
 * event, whose id is used up only once the name is accepted. event_mutex
 * held (user_event_multi_id).
 */
static int user_event_set_call_name(struct user_event *user)
{
	ue_lockdep_assert_event_mutex();

	if (user->multi)
		user->call_name = kasprintf(GFP_KERNEL_ACCOUNT, "%s.%llx",
					    user->name,
					    user_event_multi_id + 1);
	else
		user->call_name = kstrdup(user->name, GFP_KERNEL_ACCOUNT);
	if (!user->call_name)
		return -ENOMEM;
	/*
	 * Every event gets its directory, and tracefs takes no longer name:
	 * NAME.<id> of a multi-format event can be. Refused like an over-long
	 * name, before anything is charged or logged.
	 */
	if (strlen(user->call_name) > NAME_MAX)
		return -EINVAL;
	if (user->multi)
		user_event_multi_id++;
	return 0;
}

/*
 * Fills in @user's trace event call and class from its parsed fields: the
 * print fmt, the fields array, the system and the call's name. What it
 * allocates is freed with @user (free_user_event()). event_mutex held.
 */
static int user_event_init_call(struct user_event *user)
{
	int ret;

	ue_lockdep_assert_event_mutex();

	ret = user_event_build_print_fmt(&user->fields, &user->call.print_fmt);
	if (ret)
		return ret;

	ret = user_event_build_fields_array(&user->fields,
					    &user->class.fields_array);
	if (ret)
		return ret;

	INIT_LIST_HEAD(&user->class.fields);
	user->class.system = user->multi ? USER_EVENTS_MULTI_SYSTEM :
					   USER_EVENTS_SYSTEM;
	ret = user_event_set_call_name(user);
	if (ret)
		return ret;
	INIT_LIST_HEAD(&user->reap_link);
	user->class.reg = user_event_reg;

	user->tracepoint.name = user->call_name;
	user->call.tp = &user->tracepoint;
	user->call.class = &user->class;
	user->call.data = user;
	user->call.flags = TRACE_EVENT_FL_TRACEPOINT | UE_TRACE_EVENT_FL_DYNAMIC;
#ifdef CONFIG_PERF_EVENTS
	user->call.perf_perm = user_event_perf_perm;
#endif
	return 0;
}

/*
 * Registers @user's call with the tracing core: the purge event first,
 * then the type id, the call and its directories, and the listing in
 * dynamic_events. On failure the type id is put back; the purge event
 * stays (it holds the module by itself). event_mutex held.
 */
static int user_event_add_call(struct user_event *user)
{
	int ret;

	ue_lockdep_assert_event_mutex();

	/*
	 * The purge event exists whenever an event of ours does: one made
	 * after the unload was prepared (through dynamic_events) brings it
	 * back, so that its enable can mark its instance
	 */
	ret = user_event_purge_add();
	if (ret)
		return ret;

	ret = user_event_type_get(user);
	if (ret)
		return ret;

	/* A failed add makes no directory: no ghost can take a reference */
	refcount_set(&user->memref, 1);
	ret = user_event_call_set_visible(&user->call, true);
	if (ret) {
		user_event_type_put(user->type, false);
		return ret;
	}

	ue_dyn_event_add(&user->devent, &user_event_dops);
	return 0;
}

/* Makes a parsed event a live trace event; takes ownership of @user */
static int user_event_register(struct user_event *user)
{
	int ret;

	ue_lockdep_assert_event_mutex();

	if (user_event_count >= max_events) {
		ret = -EMFILE;
		goto free;
	}

	ret = user_event_init_call(user);
	if (ret)
		goto free;

	/* Everything that can fail below is undone by the labels at the end */
	user->owner = current_uid();
	user_event_payer_current(&user->payer);
	user->shared = perfmon_capable();
	ret = user_event_charge(&user->payer, UE_QUOTA_EVENTS, 1, false);
	if (ret)
		goto free;

	/* The event pins the module until it is deleted; none once rmmod began */
	if (!try_module_get(THIS_MODULE)) {
		ret = -ENODEV;
		goto uncharge;
	}

	ret = user_event_add_call(user);
	if (ret)
		goto put_module;

	/* The caller's reference */
	refcount_set(&user->refcnt, 1);
	hash_add(user_event_table, &user->node, user_event_key(user->name));
	if (user->multi)
		hash_add(user_event_multi_table, &user->multi_node,
			 user_event_multi_key(user->name, user->args,
					      user->flags));
	user_event_count++;
	return 0;

put_module:
	module_put(THIS_MODULE);
uncharge:
	user_event_uncharge(&user->payer, UE_QUOTA_EVENTS, 1);
free:
	free_user_event(user);
	return ret;
}

/*
 * Finds the event a descriptor names, creating it if needed. The same name
 * with a different field list is refused, unless multi-format events are
 * asked for: those are told apart by their fields. @persist keeps the
 * event when it becomes unused (status page ABI, PERSIST flag). Returns
 * with a reference on the event, for the caller to put.
 */
static int user_event_parse(char *desc, u16 reg_flags, bool persist,
			    struct user_event **out, bool *created)
{
	bool multi = reg_flags & USER_EVENT_REG_MULTI_FORMAT;
	struct user_event *user, *found;
	int ret;

	ue_lockdep_assert_event_mutex();

	ret = user_event_from_desc(desc, &user);
	if (ret)
		return ret;

	/* Finish deleting the unused events the tracing core let go of */
	user_event_reap_all();

	if (multi)
		found = find_user_event_multi(user->name, user->args,
					      user->flags);
	else
		found = find_user_event(user->name);

	/* An unused event that is not persistent was deleted just now */
	if (found && !found->persist && !refcount_read(&found->refcnt) &&
	    !destroy_user_event(found))
		found = NULL;

	if (found) {
		if (!user_event_may_use(found))
			ret = -EACCES;
		else
			ret = strcmp(found->args, user->args) ||
			      found->flags != user->flags ? -EADDRINUSE : 0;
		free_user_event(user);
		if (ret)
			return ret;
		user = found;
		user_event_get_locked(user);
	} else {
		user->multi = multi;
		ret = user_event_register(user);
		if (ret)
			return ret;
		*created = true;
	}

	/*
	 * Only who may delete an event changes how long it lives: a status
	 * page registration (persistent) of root's event by a tenant gets its
	 * status byte, and the event still goes with its last user.
	 */
	if ((persist || (reg_flags & USER_EVENT_REG_PERSIST)) &&
	    (!found || user_event_may_delete(user)))
		user->persist = true;
	if (reg_flags & USER_EVENT_REG_PERSIST)
		user->persist_cap = true;

	*out = user;
	return 0;
}

/*
 * Deletes every event called @name, multi-format ones included (as
 * upstream). Stops at the first that cannot be deleted, with its error;
 * those before it are gone.
 */
static int delete_user_event(const char *name)
{
	struct user_event *user;
	struct hlist_node *tmp;
	int ret = -ENOENT;

	ue_lockdep_assert_event_mutex();

	hash_for_each_possible_safe(user_event_table, user, tmp, node,
				    user_event_key(name)) {
		if (strcmp(user->name, name))
			continue;
		/* Made persistent with the capability: deleted only with it */
		if (user->persist_cap && !perfmon_capable())
			return -EPERM;
		/* Others' events of the name stay (multi-format ones) */
		if (!user_event_may_delete(user)) {
			if (ret == -ENOENT)
				ret = -EACCES;
			continue;
		}
		ret = destroy_user_event(user);
		if (ret)
			return ret;
	}

	return ret;
}

/* Write path */

/*
 * Differs on purpose: the index is looked up and the payload checked
 * before anything is copied, and the payload is copied once for every
 * consumer (below), not once per probe.
 *
 * The write path, for an event and a payload that passed
 * user_event_lookup_for_write():
 *
 *  - One copy (user_event_record_direct()): when the event's only consumer
 *    (user->direct_file, kept by update_enable_bit_for()) is one ftrace
 *    event file with none of the flags that need the checks
 *    of trace_trigger_soft_disabled() (triggers, soft disable, pid
 *    filtering), the record is reserved in that file's ring buffer (or in
 *    the core's per-CPU staging record, when the file has a filter) and the
 *    payload is copied from the writer's iovecs straight into it. The
 *    __data_loc/__rel_loc checks then run on that copy, which the writer
 *    cannot change any more; a record that fails them, or whose copy
 *    faulted, is discarded and never reaches a reader.
 *  - One copy for perf (user_event_perf_direct()): when perf events or BPF
 *    programs are the only consumers (user->status is EVENT_STATUS_PERF),
 *    the payload is copied from the iovecs into perf's buffer, checked
 *    there and submitted; one that fails is given back unsubmitted.
 *  - Staged (user_event_stage_and_deliver()): in every other case
 *    (several instances, ftrace and perf, the flags above, a reserve or a
 *    perf buffer that could not be had), the payload is copied once to
 *    this CPU's write buffer, checked there, and handed to every consumer
 *    from that copy.
 *
 * Both run with preemption disabled, which is the sched-RCU read side of
 * the index array and of user->probes (one section from the lookup to the
 * commit), and with page faults disabled while user memory is read. A
 * page of the payload that is not present makes the attempt return
 * -EAGAIN with nothing recorded; user_event_emit_end() then faults it in
 * with preemption enabled and tries once more.
 */

/*
 * Finds the event of write index @idx on @file and checks that a payload
 * of @len bytes may be written to it now: returns 0 and the event in
 * @userp, or the errno of an index, a size or a state that is refused.
 * Copies nothing. Preemption is disabled by the caller: the sched-RCU read
 * side of the file's index array, which stays disabled for the write that
 * follows (one section for both). The event outlives that section: the
 * file holds a reference on every event it registered.
 *
 * A file that registered nothing has the empty array, and a slot below
 * the count is never NULL: set before the count that covers it, never
 * cleared (user_events_ref_add()).
 */
static __always_inline int
user_event_lookup_for_write(struct file *file, int idx, size_t len,
			    struct user_event **userp)
{
	struct user_event_file *info = file->private_data;
	struct user_event_refs *refs = rcu_dereference_sched(info->refs);
	struct user_event *user;

	/*
	 * Pairs with the release that publishes a new slot's count; a
	 * negative index fails the unsigned bound as well.
	 */
	if (unlikely((unsigned int)idx >= smp_load_acquire(&refs->count)))
		return idx < 0 ? -EINVAL : -ENOENT;

	user = refs->events[idx];

	if (unlikely(len < user->min_size))
		return -EINVAL;

	if (unlikely(len > MAX_PAYLOAD_SIZE))
		return -E2BIG;

	/* Nothing listens: tell the caller, as upstream does */
	if (unlikely(!READ_ONCE(user->status)))
		return -EBADF;

	*userp = user;
	return 0;
}

/*
 * Hands a payload staged in this CPU's write buffer (preemption disabled)
 * to every consumer attached, once it passed the checks.
 */
static noinline int user_event_deliver_staged(struct user_event *user,
					      const void *buf, size_t len)
{
	struct user_event_probes *probes;
	unsigned int i;
	int ret;

	ret = user->has_dyn ? user_event_validate(user, buf, len) : 0;
	if (unlikely(ret))
		return ret;

	probes = rcu_dereference_sched(user->probes);
	if (probes)
		for (i = 0; i < probes->nr_files; i++)
			user_event_ftrace(user, probes->files[i], buf,
					  len);

	if (READ_ONCE(user->status) & EVENT_STATUS_PERF)
		user_event_perf(user, buf, len);

	return 0;
}

/*
 * The payload of a write, passed without a struct on the stack: @len bytes
 * that start with the @first_len bytes at @first (write()'s buffer after the
 * index, or what the index left of its segment) and go on in the @nr_rest
 * iovecs at @rest. The iovecs are the kernel's copy (import_iovec()), whose
 * lengths add up to the byte count checked by the caller; the copies check
 * it again and every segment against access_ok().
 */

/*
 * Segments up to this size are copied by loads inside one user access
 * region: 8-byte ones, the last of which ends at the segment's end and
 * overlaps the one before (a segment of 4 to 7 bytes: two 4-byte loads, 2
 * or 3: two 2-byte loads); longer ones by raw_copy_from_user().
 * EventHeader's segments are a few bytes each (its header is 8, a field's
 * value 1 to 16), and for those the generic copy costs several times the
 * bytes: a call, and on CPUs without FSRM rep_movs_alternative(), which
 * copies what is left below 8 bytes one byte per iteration.
 */
#define UE_COPY_SMALL_MAX 64

/* One load of a @type from user memory to @dst, in a user access region */
#define ue_unsafe_copy(type, dst, src, label)				\
	do {								\
		type __ue_v;						\
									\
		unsafe_get_user(__ue_v, (const type __user *)(src), label); \
		memcpy((dst), &__ue_v, sizeof(__ue_v));			\
	} while (0)

/*
 * Copies @n bytes at @from to @buf: this CPU's write buffer or a record
 * reserved for the payload, both checked against @n by the caller, so
 * hardened usercopy's object check is left out: on this path it would cost
 * as much as the copy. Faults are taken only if the caller did not disable
 * them.
 */
static __always_inline int user_event_copy_seg(void *buf,
					       const void __user *from,
					       size_t n)
{
	const void __user *src = from;
	unsigned long left;
	void *dst = buf;

	if (likely(n <= UE_COPY_SMALL_MAX)) {
		size_t rem = n;

		ue_instrument_copy_from_user_before(buf, from, n);
		if (unlikely(!user_access_begin(from, n)))
			return -EFAULT;
		/*
		 * Pairs of loads of one size, the second ending at @n: it
		 * overlaps the first when @n is not twice the size, and no
		 * tail is left to copy by smaller loads.
		 */
		if (rem >= sizeof(u64)) {
			for (; rem > 2 * sizeof(u64); rem -= sizeof(u64)) {
				ue_unsafe_copy(u64, dst, src, fault);
				dst += sizeof(u64);
				src += sizeof(u64);
			}
			ue_unsafe_copy(u64, dst, src, fault);
			rem -= sizeof(u64);
			ue_unsafe_copy(u64, dst + rem, src + rem, fault);
		} else if (rem >= sizeof(u32)) {
			ue_unsafe_copy(u32, dst, src, fault);
			rem -= sizeof(u32);
			ue_unsafe_copy(u32, dst + rem, src + rem, fault);
		} else if (rem >= sizeof(u16)) {
			ue_unsafe_copy(u16, dst, src, fault);
			rem -= sizeof(u16);
			ue_unsafe_copy(u16, dst + rem, src + rem, fault);
		} else if (rem) {
			ue_unsafe_copy(u8, dst, src, fault);
		}
		user_access_end();
		ue_instrument_copy_from_user_after(buf, from, n, 0);
		return 0;
fault:
		user_access_end();
		return -EFAULT;
	}

	if (unlikely(!access_ok(from, n)))
		return -EFAULT;
	ue_instrument_copy_from_user_before(buf, from, n);
	left = raw_copy_from_user(buf, from, n);
	ue_instrument_copy_from_user_after(buf, from, n, left);

	return unlikely(left) ? -EFAULT : 0;
}

/*
 * The segments of a payload after its first, one after the other; each
 * costs its access_ok() and its copy, nothing else.
 */
static __always_inline int
user_event_copy_rest(void *buf, const struct iovec *rest, unsigned long nr_rest,
		     size_t len)
{
	const char __user *src;
	size_t n;

	for (;;) {
		if (unlikely(!nr_rest))
			return -EFAULT;
		src = rest->iov_base;
		n = min(rest->iov_len, len);
		rest++;
		nr_rest--;
		if (unlikely(user_event_copy_seg(buf, src, n)))
			return -EFAULT;
		len -= n;
		if (likely(!len))
			return 0;
		buf += n;
	}
}

/*
 * Copies the payload to @buf: its first segment, then the others. Returns
 * -EFAULT if the iovecs are shorter than @len or a page is not there;
 * @buf may then hold part of it. A payload in one segment (write()'s, and
 * writev()'s of index and payload) skips the loop; the others enter it with
 * the first one done (-icount: 2 to 19 instructions less per writev() than
 * one loop over all of them, tests/bench/README.md).
 */
static __always_inline int
user_event_copy_payload(void *buf, const char __user *first, size_t first_len,
			const struct iovec *rest, unsigned long nr_rest,
			size_t len)
{
	size_t n = min(first_len, len);

	if (unlikely(user_event_copy_seg(buf, first, n)))
		return -EFAULT;
	if (likely(n == len))
		return 0;

	return user_event_copy_rest(buf + n, rest, nr_rest, len - n);
}

/* Faults in the pages of the payload; 0 when all are in */
static int user_event_fault_in_payload(const char __user *first,
				       size_t first_len,
				       const struct iovec *rest,
				       unsigned long nr_rest, size_t len)
{
	size_t n = min(first_len, len);

	for (;;) {
		if (ue_fault_in_readable(first, n))
			return -EFAULT;
		len -= n;
		if (!len)
			return 0;
		if (!nr_rest)
			return -EFAULT;
		first = rest->iov_base;
		n = min(rest->iov_len, len);
		rest++;
		nr_rest--;
	}
}

/*
 * The copy of the one-copy paths, into a record the writer cannot reach:
 * the payload with page faults disabled, then the __data_loc/__rel_loc
 * checks on that copy. Returns -EAGAIN if a page was not present (short
 * iovecs were ruled out by the caller), the errno of the checks, or 0.
 */
static __always_inline int
user_event_copy_checked(struct user_event *user, void *dst,
			const char __user *first, size_t first_len,
			const struct iovec *rest, unsigned long nr_rest,
			size_t len)
{
	int ret;

	pagefault_disable();
	ret = user_event_copy_payload(dst, first, first_len, rest, nr_rest,
				      len);
	pagefault_enable();
	if (unlikely(ret))
		return -EAGAIN;

	return user->has_dyn ? user_event_validate(user, dst, len) : 0;
}

/*
 * The file flags under which trace_trigger_soft_disabled() has work to do:
 * such a file gets the staged path, which runs it before the record is
 * reserved, as the tracing core's own events do.
 */
#define UE_FILE_FLAGS_STAGED (EVENT_FILE_FL_TRIGGER_MODE |		\
			      EVENT_FILE_FL_SOFT_DISABLED |		\
			      EVENT_FILE_FL_PID_FILTER)

/*
 * The reservation of user_event_record_direct(), per CPU rather than on
 * the stack: a local struct costs the writer of every event, perf
 * included, a stack canary and its zeroing (CONFIG_INIT_STACK_ALL_ZERO).
 * Used from the reserve to the commit or discard, with preemption
 * disabled, by writes only, which run in task context: one writer per CPU
 * at a time.
 */
static DEFINE_PER_CPU(struct trace_event_buffer, direct_fbuffer);

/*
 * One copy: reserves the record for @file, copies the payload into it,
 * checks that copy and commits it (the commit runs the file's filter and
 * conditional triggers on it). Returns -EAGAIN if a page of the payload was
 * not present, -EFAULT if the copy failed the checks (the record is
 * discarded in both cases), -ENOSPC if nothing could be reserved (the
 * caller takes the staged path: the same checks and errors, and the same
 * outcome in the trace), else 0.
 */
static __always_inline int
user_event_record_direct(struct user_event *user, struct trace_event_file *file,
			 const char __user *first, size_t first_len,
			 const struct iovec *rest, unsigned long nr_rest,
			 size_t len)
{
	struct trace_event_buffer *fbuffer = this_cpu_ptr(&direct_fbuffer);
	/* For the discard: what the reserve did to it depends on the kernel */
	unsigned int pc = preempt_count();
	struct trace_entry *entry;
	int ret;

	entry = trace_event_buffer_reserve(fbuffer, file,
					   sizeof(*entry) + len);
	if (unlikely(!entry))
		return -ENOSPC;

	ret = user_event_copy_checked(user, entry + 1, first, first_len, rest,
				      nr_rest, len);
	if (unlikely(ret)) {
		ue_trace_event_discard(fbuffer, pc);
		return ret;
	}

	trace_event_buffer_commit(fbuffer);
	return 0;
}

#ifdef CONFIG_PERF_EVENTS
/*
 * One copy for perf: the event's only consumers are perf events or BPF
 * programs (user->status is EVENT_STATUS_PERF alone). The payload is
 * copied from the writer's iovecs into the perf buffer, checked there
 * (where the writer cannot change it any more) and submitted. Returns
 * -EAGAIN if a page of the payload was not present, the errno of the
 * checks if the copy failed them (nothing is submitted in both cases),
 * -ENOSPC if no buffer was taken (nothing listens on this CPU, or perf is
 * busy in this context: the caller takes the staged path, which checks the
 * payload all the same and returns the same errors), else 0.
 */
static DEFINE_PER_CPU(struct user_event_perf_rec, direct_perf_rec);

/*
 * Out of line: perf_fetch_caller_regs() gives its function a frame
 * pointer, which the ftrace paths of the writer would pay for too.
 */
static noinline void user_event_perf_submit_direct(struct user_event *user,
						   struct trace_entry *entry,
						   size_t len,
						   struct user_event_perf_rec *rec)
{
	user_event_perf_submit(user, entry, len, rec);
}

static __always_inline int
user_event_perf_direct(struct user_event *user, const char __user *first,
		       size_t first_len, const struct iovec *rest,
		       unsigned long nr_rest, size_t len)
{
	/*
	 * Per CPU rather than on the stack, as direct_fbuffer and for the
	 * same reason; used with preemption disabled by writes only.
	 */
	struct user_event_perf_rec *rec = this_cpu_ptr(&direct_perf_rec);
	struct trace_entry *entry;
	int ret;

	entry = user_event_perf_alloc(user, len, rec);
	if (unlikely(!entry))
		return -ENOSPC;

	ret = user_event_copy_checked(user, entry + 1, first, first_len, rest,
				      nr_rest, len);
	if (unlikely(ret)) {
		user_event_perf_drop(user, entry, rec);
		return ret;
	}

	user_event_perf_submit_direct(user, entry, len, rec);
	return 0;
}
#else
static __always_inline int
user_event_perf_direct(struct user_event *user, const char __user *first,
		       size_t first_len, const struct iovec *rest,
		       unsigned long nr_rest, size_t len)
{
	return -ENOSPC;
}
#endif

/*
 * Staged: copies the payload to this CPU's write buffer and delivers it
 * from there. Returns -EAGAIN if a page was not present.
 */
static __always_inline int
user_event_stage_and_deliver(struct user_event *user,
			     const char __user *first, size_t first_len,
			     const struct iovec *rest, unsigned long nr_rest,
			     size_t len)
{
	void *buf = this_cpu_ptr(write_buffer);
	int ret;

	/* len <= MAX_PAYLOAD_SIZE, the buffer's size */
	pagefault_disable();
	ret = user_event_copy_payload(buf, first, first_len, rest, nr_rest,
				      len);
	pagefault_enable();
	if (unlikely(ret))
		return -EAGAIN;

	return user_event_deliver_staged(user, buf, len);
}

/* One attempt at recording the payload, preemption disabled */
static __always_inline int
user_event_emit_once(struct user_event *user, const char __user *first,
		     size_t first_len, const struct iovec *rest,
		     unsigned long nr_rest, size_t len)
{
	struct trace_event_file *file;
	int ret;

	/* Under sched RCU: see struct user_event */
	file = READ_ONCE(user->direct_file);
	if (likely(file &&
		   !(READ_ONCE(file->flags) & UE_FILE_FLAGS_STAGED))) {
		ret = user_event_record_direct(user, file, first, first_len,
					       rest, nr_rest, len);
		if (likely(ret != -ENOSPC))
			return ret;
	} else if (READ_ONCE(user->status) == EVENT_STATUS_PERF) {
		ret = user_event_perf_direct(user, first, first_len, rest,
					     nr_rest, len);
		if (likely(ret != -ENOSPC))
			return ret;
	}

	return user_event_stage_and_deliver(user, first, first_len, rest,
					    nr_rest, len);
}

/*
 * The second attempt, after a page of the payload was not present: faults
 * it in with preemption enabled and tries once more; a payload that still
 * faults gives -EFAULT.
 */
static noinline int user_event_emit_retry(struct user_event *user,
					  const char __user *first,
					  size_t first_len,
					  const struct iovec *rest,
					  unsigned long nr_rest, size_t len)
{
	int ret;

	if (user_event_fault_in_payload(first, first_len, rest, nr_rest, len))
		return -EFAULT;

	preempt_disable();
	ret = user_event_emit_once(user, first, first_len, rest, nr_rest, len);
	preempt_enable();

	return ret == -EAGAIN ? -EFAULT : ret;
}

/*
 * Looks up the event of write index @idx on @file for a payload of @len
 * bytes (user_event_lookup_for_write()) and, when it may be written,
 * returns 0 with preemption disabled: the section the emit that follows
 * (user_event_emit_buf() or user_event_emit_iovecs()) runs in and ends.
 */
static __always_inline int user_event_write_begin(struct file *file, int idx,
						  size_t len,
						  struct user_event **userp)
{
	int ret;

	preempt_disable();
	ret = user_event_lookup_for_write(file, idx, len, userp);
	if (unlikely(ret))
		preempt_enable();

	return ret;
}

/*
 * Records the payload (see user_event_copy_payload()), @len bytes that the
 * segments hold (checked by the caller): one attempt in the section that
 * user_event_write_begin() started, which it ends, then the second attempt
 * if a page was not present.
 */
static __always_inline int
user_event_emit_end(struct user_event *user, const char __user *first,
		    size_t first_len, const struct iovec *rest,
		    unsigned long nr_rest, size_t len)
{
	int ret;

	ret = user_event_emit_once(user, first, first_len, rest, nr_rest, len);
	preempt_enable();
	if (unlikely(ret == -EAGAIN))
		ret = user_event_emit_retry(user, first, first_len, rest,
					    nr_rest, len);

	return ret;
}

/*
 * user_event_emit_end() out of line, for a payload in iovecs and for
 * write()'s in one buffer: the writers' paths up to the lookup (and a
 * write refused there, such as one to an event with nothing attached)
 * then save no registers for it.
 */
static noinline int user_event_emit_iovecs(struct user_event *user,
					   const char __user *first,
					   size_t first_len,
					   const struct iovec *rest,
					   unsigned long nr_rest, size_t len)
{
	return user_event_emit_end(user, first, first_len, rest, nr_rest,
				   len);
}

/* write()'s: the @count bytes at @ubuf, the index first; returns write()'s */
static noinline ssize_t user_event_emit_buf(struct user_event *user,
					    const char __user *ubuf,
					    size_t count)
{
	size_t len = count - sizeof(int);
	int ret;

	ret = user_event_emit_end(user, ubuf + sizeof(int), len, NULL, 0, len);

	return ret ? ret : count;
}

/* user_events_data file */

int user_events_open(struct inode *inode, struct file *file)
{
	struct user_event_file *info;

	info = kzalloc(sizeof(*info), GFP_KERNEL_ACCOUNT);
	if (!info)
		return -ENOMEM;

	/* Writers then need no test for a file without registrations */
	RCU_INIT_POINTER(info->refs, &user_events_no_refs);

	file->private_data = info;
	/*
	 * A stream: no file position, so threads writing through one file
	 * do not serialise on its position lock.
	 */
	return stream_open(inode, file);
}

/* write(): the index, then the payload, from one user buffer */
ssize_t user_events_write(struct file *file, const char __user *ubuf,
			  size_t count, loff_t *ppos)
{
	struct user_event *user;
	int idx, ret;

	if (unlikely(count < sizeof(idx)))
		return -EINVAL;

	if (unlikely(get_user(idx, (const int __user *)ubuf)))
		return -EFAULT;

	ret = user_event_write_begin(file, idx, count - sizeof(idx), &user);
	if (unlikely(ret))
		return ret;

	return user_event_emit_buf(user, ubuf, count);
}

/*
 * Writes from an iterator over anything but user iovecs: io_uring's
 * IORING_OP_WRITE comes as one user buffer (ITER_UBUF), written as write()
 * writes it; its registered buffers (IORING_OP_WRITE_FIXED) come as a bvec,
 * and a kernel caller would pass a kvec. Such memory is resident: it is
 * staged with the generic helper, with page faults disabled, in place of
 * the iovec walk.
 */
static noinline ssize_t user_events_write_other_iter(struct kiocb *kiocb,
						     struct iov_iter *from,
						     size_t total)
{
	struct user_event *user;
	size_t len, copied;
	ssize_t written;
	void *buf;
	int idx, ret;

	if (ue_iter_is_ubuf(from)) {
		written = user_events_write(kiocb->ki_filp,
					    ue_iter_ubuf(from) + from->iov_offset,
					    total, NULL);
		if (written > 0)
			iov_iter_advance(from, written);
		return written;
	}

	if (unlikely(copy_from_iter(&idx, sizeof(idx), from) != sizeof(idx)))
		return -EFAULT;

	len = total - sizeof(idx);
	preempt_disable();
	ret = user_event_lookup_for_write(kiocb->ki_filp, idx, len, &user);
	if (ret) {
		preempt_enable();
		return ret;
	}

	buf = this_cpu_ptr(write_buffer);
	/* len <= MAX_PAYLOAD_SIZE, the buffer's size */
	pagefault_disable();
	copied = copy_from_iter(buf, len, from);
	pagefault_enable();
	ret = copied == len ? user_event_deliver_staged(user, buf, len) :
			      -EFAULT;
	preempt_enable();

	return ret ? ret : total;
}

/*
 * writev() of user iovecs whose first segment does not hold the whole
 * index (a segment of fewer than 4 bytes, or an empty one, first): the
 * index is read through a copy of the iterator, which then says where the
 * payload starts.
 */
static noinline ssize_t user_events_write_split_index(struct kiocb *kiocb,
						      struct iov_iter *from,
						      size_t total)
{
	const char __user *first = NULL;
	const struct iovec *rest = NULL;
	unsigned long nr_rest = 0;
	struct iov_iter it = *from;
	struct user_event *user;
	size_t first_len = 0;
	size_t len = total - sizeof(int);
	int idx, ret;

	if (unlikely(copy_from_iter(&idx, sizeof(idx), &it) != sizeof(idx)))
		return -EFAULT;

	if (it.nr_segs) {
		rest = ue_iter_iov(&it);
		first = rest->iov_base + it.iov_offset;
		first_len = rest->iov_len - it.iov_offset;
		rest++;
		nr_rest = it.nr_segs - 1;
	}

	ret = user_event_write_begin(kiocb->ki_filp, idx, len, &user);
	if (ret)
		return ret;

	ret = user_event_emit_iovecs(user, first, first_len, rest, nr_rest,
				     len);
	if (ret)
		return ret;

	ue_iov_iter_consume_all(from);
	return total;
}

/*
 * writev() and io_uring: the index and the payload in user iovecs (the
 * index read in place when the first segment holds it, as write() reads
 * it, and the payload copied segment by segment from where it ends), or
 * any other iterator through user_events_write_other_iter().
 */
ssize_t user_events_write_iter(struct kiocb *kiocb, struct iov_iter *from)
{
	size_t total = iov_iter_count(from);
	const char __user *first;
	const struct iovec *rest;
	struct user_event *user;
	unsigned long nr_rest;
	size_t first_len, len;
	int idx, ret;

	if (unlikely(total < sizeof(idx)))
		return -EINVAL;

	if (unlikely(!iter_is_iovec(from)))
		return user_events_write_other_iter(kiocb, from, total);

	rest = ue_iter_iov(from);
	first = rest->iov_base + from->iov_offset;
	first_len = rest->iov_len - from->iov_offset;
	if (unlikely(first_len < sizeof(idx)))
		return user_events_write_split_index(kiocb, from, total);

	if (unlikely(get_user(idx, (const int __user *)first)))
		return -EFAULT;

	len = total - sizeof(idx);
	ret = user_event_write_begin(kiocb->ki_filp, idx, len, &user);
	if (unlikely(ret))
		return ret;

	/* The payload starts after the index, often in the next segment */
	first += sizeof(idx);
	first_len -= sizeof(idx);
	rest++;
	nr_rest = from->nr_segs - 1;
	if (!first_len && nr_rest) {
		first = rest->iov_base;
		first_len = rest->iov_len;
		rest++;
		nr_rest--;
	}

	ret = user_event_emit_iovecs(user, first, first_len, rest, nr_rest,
				     len);
	if (ret)
		return ret;

	ue_iov_iter_consume_all(from);
	return total;
}

static int user_events_ref_add(struct user_event_file *info,
			       struct user_event *user, bool created)
{
	struct user_event_refs *refs, *new;
	unsigned int i, count, capacity;

	lockdep_assert_held(&user_event_mutex);

	refs = rcu_dereference_protected(info->refs,
					 lockdep_is_held(&user_event_mutex));
	count = refs->count;

	/* A new event is in no file yet: no need to look */
	for (i = 0; i < count && !created; i++)
		if (refs->events[i] == user)
			return i;

	if (count == refs->capacity) {
		capacity = max(8U, count * 2);
		new = kzalloc(struct_size(new, events, capacity),
			      GFP_KERNEL_ACCOUNT);
		if (!new)
			return -ENOMEM;
		new->capacity = capacity;
		new->count = count;
		for (i = 0; i < count; i++)
			new->events[i] = refs->events[i];
		rcu_assign_pointer(info->refs, new);
		if (refs != &user_events_no_refs)
			kfree_rcu(refs, rcu);
		refs = new;
	}

	refcount_inc(&user->refcnt);
	refs->events[count] = user;
	/* Publish the slot before the count that makes it reachable */
	smp_store_release(&refs->count, count + 1);

	return count;
}

/*
 * The status page ABI's registration, for user_status_ioctl_reg(): finds
 * or creates the event @desc names (@desc is modified), with a status
 * byte, and adds it to @info. Returns the byte and the write index.
 */
int user_events_reg_status(struct user_event_file *info, char *desc,
			   int *status_index, int *write_index)
{
	struct user_event *user = NULL;
	bool created = false;
	int index, ret;

	mutex_lock(&user_event_mutex);

	ue_event_mutex_lock();
	ret = user_event_parse(desc, 0, true, &user, &created);
	if (!ret) {
		ret = user_event_assign_status(user);
		/* A full status page creates nothing */
		if (ret && created) {
			if (refcount_dec_and_test(&user->refcnt))
				destroy_user_event(user);
			user = NULL;
		}
	}
	ue_event_mutex_unlock();
	if (ret)
		goto put;

	index = user_events_ref_add(info, user, created);
	if (index < 0) {
		ret = index;
		/*
		 * A failed registration creates nothing. No other one can have
		 * found the event meanwhile: they are serialised by
		 * user_event_mutex, which we hold.
		 */
		if (created) {
			ue_event_mutex_lock();
			user->persist = false;
			ue_event_mutex_unlock();
		}
		goto put;
	}

	*status_index = user->status_index;
	*write_index = index;
put:
	if (user)
		user_event_put(user);
	mutex_unlock(&user_event_mutex);

	return ret;
}

/*
 * The remote write ABI's registration, for user_events_main.c: finds or
 * creates the event @desc names (@desc is modified) and adds it to @info.
 * Returns the write index and, in @userp, a reference of the event for
 * the caller to put, or an error. Takes user_event_mutex, and event_mutex inside it.
 */
int user_events_reg_event(struct user_event_file *info, char *desc,
			  u16 flags, struct user_event **userp)
{
	struct user_event *user;
	bool created = false;
	int index;

	mutex_lock(&user_event_mutex);
	ue_event_mutex_lock();
	index = user_event_parse(desc, flags, false, &user, &created);
	ue_event_mutex_unlock();
	if (!index) {
		/* Held until the file is closed, even if the rest fails */
		index = user_events_ref_add(info, user, created);
		if (index >= 0)
			*userp = user;
		else
			user_event_put(user);
	}
	mutex_unlock(&user_event_mutex);

	return index;
}

/* DIAG_IOCSDEL and "!u:" for @name: -EBUSY while it is used */
long user_events_del_name(const char *name)
{
	long ret;

	ue_event_mutex_lock();
	user_event_reap_all();
	ret = delete_user_event(name);
	ue_event_mutex_unlock();

	return ret;
}

int user_events_release(struct inode *inode, struct file *file)
{
	struct user_event_file *info = file->private_data;
	struct user_event_refs *refs;
	unsigned int i;

	/* Nobody else uses the file any more */
	refs = rcu_dereference_protected(info->refs, true);
	for (i = 0; i < refs->count; i++)
		user_event_put(refs->events[i]);
	if (refs != &user_events_no_refs)
		kfree(refs);

	kfree(info);
	return 0;
}

/* user_events_status file */

/*
 * " # Used by ..." and, under isolation, " # Owner: uid" for an event that
 * is not shared; a newline
 */
static void user_status_show_probes(struct seq_file *m,
				    struct user_event *user, u8 status)
{
	if (status) {
		seq_puts(m, " # Used by");
		if (status & EVENT_STATUS_FTRACE)
			seq_puts(m, " ftrace");
		if (status & EVENT_STATUS_PERF)
			seq_puts(m, " perf");
		if (status & EVENT_STATUS_OTHER)
			seq_puts(m, " other");
	}
	if (READ_ONCE(isolation_owner) && !user->shared)
		seq_printf(m, " # Owner: %u",
			   from_kuid_munged(seq_user_ns(m), user->owner));
	seq_putc(m, '\n');
}

static int user_status_show(struct seq_file *m, void *unused)
{
	struct user_event *user;
	unsigned int busy = 0;
	int i, bkt;
	u8 status;

	ue_event_mutex_lock();
	user_event_reap_all();

	for (i = 1; (user = user_status_next(&i)); i++) {
		status = READ_ONCE(user->status);
		seq_printf(m, "%d:%s", i, user->call_name);
		user_status_show_probes(m, user, status);
	}

	hash_for_each(user_event_table, bkt, user, node) {
		status = READ_ONCE(user->status);
		if (status)
			busy++;
		if (user->status_index)
			continue;
		seq_puts(m, user->call_name);
		user_status_show_probes(m, user, status);
	}

	seq_printf(m, "\nActive: %u\nBusy: %u\nMax: %lu\n",
		   user_event_count, busy, MAX_STATUS_EVENTS);

	ue_event_mutex_unlock();
	return 0;
}

static int user_status_open(struct inode *inode, struct file *file)
{
	return single_open(file, user_status_show, NULL);
}

const struct file_operations user_status_fops = {
	.owner = THIS_MODULE,
	.open = user_status_open,
	.mmap = user_status_mmap,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* Setup and teardown, called by user_events_main.c */

/* Everything but the files and "u:", which come later */
int __init user_events_core_init(void (*state_changed)(struct user_event *))
{
	int ret;

	user_event_state_changed = state_changed;
	if (one_copy && !ue_have_trace_event_discard()) {
		pr_info("trace_buffered_event not in kallsyms: writes take the staged path (one_copy=N)\n");
		one_copy = false;
	}

	ret = user_status_init();
	if (ret)
		return ret;

	write_buffer = __alloc_percpu(MAX_PAYLOAD_SIZE, sizeof(u64));
	if (!write_buffer) {
		ret = -ENOMEM;
		goto free_page;
	}

	user_event_wq = alloc_workqueue("user_events", WQ_UNBOUND, 0);
	if (!user_event_wq) {
		ret = -ENOMEM;
		goto free_buffer;
	}

	return 0;

free_buffer:
	free_percpu(write_buffer);
free_page:
	user_status_exit();
	return ret;
}

/*
 * Last step of the load: from here on "u:" commands can create events,
 * which pin the module, so nothing after this may fail.
 */
void __init user_events_core_start(void)
{
	user_event_dyn_register();
}

/*
 * prepare_unload written 1 (@unload) or 0. 1: once no event exists, the
 * purge event goes and the instances it marked are emptied, then the ids
 * of deleted events (tombstones) are freed, so that rmmod can proceed;
 * while events exist, nothing (they hold the module anyway: a later write
 * of 1 finishes). 0: the purge event comes back. -EBUSY while kprobes
 * are disarmed (user_events_dirs.c).
 */
int user_events_core_prepare_unload(bool unload)
{
	int ret = 0;

	ue_event_mutex_lock();
	if (!unload) {
		ret = user_event_purge_add();
	} else if (!user_event_count) {
		ret = user_event_purge_remove();
		if (!ret)
			user_event_tombstones_free();
	}
	ue_event_mutex_unlock();
	return ret;
}

/* First step of the unload: no event exists any more (each pins us) */
void user_events_core_stop(void)
{
	/* No "u:" command can reach us after this */
	user_event_dyn_unregister();
	/*
	 * A "!u:" command that deleted the last event dropped the last module
	 * reference in destroy_user_event(), under event_mutex, which the
	 * tracing core releases only after our callback returned to it. The
	 * purge event and the tombstones went when the unload was prepared:
	 * the purge event holds the module.
	 */
	ue_event_mutex_lock();
	WARN_ON(user_event_nr_tombstones);
	ue_event_mutex_unlock();
}

/* Undoes user_events_core_init(), at unload before user_events_dirs_exit() */
void user_events_core_exit(void)
{
	/* Still there if the load failed after user_events_core_init() */
	ue_event_mutex_lock();
	WARN_ON(user_event_purge_remove());
	ue_event_mutex_unlock();

	/* A reap queued before the last event was deleted finds nothing */
	cancel_delayed_work_sync(&user_event_reap_work);
	destroy_workqueue(user_event_wq);
	WARN_ON(user_event_count);

	/* Wait for RCU callbacks freeing arrays and events */
	rcu_barrier();

	free_percpu(write_buffer);
	user_status_exit();
}
