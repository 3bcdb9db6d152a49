// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko: the purge event, which tells the unload which tracing
 * instances to empty. Upstream's user_events is built in and never
 * unloads, so it has nothing of the kind; the event core
 * (trace_events_user.c) marks an instance here when one of its events is
 * attached there, and the unload's preparation (prepare_unload, through
 * user_events_core_prepare_unload()) removes the purge event and empties
 * the marked instances.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/trace_events.h>

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"
#include "user_events_ksyms_trace.h"

/*
 * The purge event: which instances the unload must empty
 *
 * At the unload, the instances that may hold records of ours are those where
 * one of our events was ever enabled, and no instance of the core says so
 * reliably (its marks, tr->clear_trace, are dropped at every refused
 * removal). So the module keeps its own marks, with the core's mechanism:
 * user_event_purge_call is an event of ours that lives as long as the
 * module (added at load, removed when the unload is prepared, and added
 * again if prepare_unload is written 0), so every instance has a file
 * of it, made and freed by the core with the instance. When one of our
 * events is attached to an instance's file (user_event_reg()), the purge
 * event's file in that instance gets EVENT_FILE_FL_WAS_ENABLED, which the
 * core never clears. At the unload, removing the purge event makes the
 * core mark exactly those instances (probe_remove_event_call() sets clear_trace
 * wherever the removed event's file has WAS_ENABLED), and
 * ue_tracing_reset_marked() empties them right after, under the same
 * event_mutex, so no refused removal can come between.
 *
 * The purge event can never be enabled: its removal is never refused as
 * busy. TRACE_EVENT_FL_IGNORE_ENABLE keeps it out of the enable, filter
 * and trigger files, set_event, available_events and the system-wide
 * enable switches, and its reg() refuses ftrace and perf attachment
 * alike. It has no type id, so no record can be of it. What shows in
 * tracefs is events/user_events_unload/purge/ in every instance, with a
 * format file (and hist, where the kernel has it).
 *
 * Who can set a mark: whoever can enable one of our events in an instance
 * (root, or whom root gave the instance's files); a member of the granted
 * group cannot. A mark costs nothing until the unload, which empties the
 * instance once. An event that was never enabled marks nothing.
 *
 * Lifetimes: user_event_purge_call is module data; added and removed under
 * event_mutex (user_event_purge_added says which), before the first event
 * can exist and once no event exists. While added, it holds a reference of
 * the module (so rmmod is refused until the unload is prepared), and a
 * removed directory of it that someone still holds keeps the module too
 * (a ghost, user_events_dirs.c), since its format file reads the call.
 * Its files belong to the core, and are found and marked under event_mutex
 * only.
 */
#define USER_EVENTS_PURGE_SYSTEM "user_events_unload"
#define USER_EVENTS_PURGE_NAME "purge"

static int user_event_purge_reg(struct trace_event_call *call,
				enum trace_reg type, void *data)
{
	switch (type) {
	case TRACE_REG_REGISTER:
#ifdef CONFIG_PERF_EVENTS
	case TRACE_REG_PERF_REGISTER:
#endif
		return -EPERM;
	default:
		return 0;
	}
}

static struct trace_event_fields user_event_purge_fields[] = { {} };

static struct trace_event_class user_event_purge_class = {
	.system		= USER_EVENTS_PURGE_SYSTEM,
	.reg		= user_event_purge_reg,
	.fields_array	= user_event_purge_fields,
	.fields		= LIST_HEAD_INIT(user_event_purge_class.fields),
};

static struct trace_event_call user_event_purge_call = {
	.class		= &user_event_purge_class,
	.name		= USER_EVENTS_PURGE_NAME,
	.print_fmt	= "\"\"",
	.flags		= TRACE_EVENT_FL_IGNORE_ENABLE |
			  UE_TRACE_EVENT_FL_DYNAMIC,
};

/* The purge event's call: its directory's files forget it at removal */
bool user_event_call_is_purge(struct trace_event_call *call)
{
	return call == &user_event_purge_call;
}

/* Under event_mutex: added; a purge file of it marked in some instance */
static bool user_event_purge_added;
static bool user_event_purge_marked;

/*
 * Marks the instance of @file, which one of our events is being attached
 * to, for emptying at module exit. event_mutex held (the core's attach).
 * Fails only if the instance has no purge file of ours, which cannot
 * happen unless root made another event of the same system and name:
 * then the attach is refused, since the unload could not empty it.
 */
int user_event_purge_mark(struct trace_event_file *file)
{
	struct trace_event_file *purge;

	ue_lockdep_assert_event_mutex();

	/*
	 * The core sets WAS_ENABLED on @file after its first attach
	 * succeeded, which marked this instance already.
	 */
	if (test_bit(EVENT_FILE_FL_WAS_ENABLED_BIT, &file->flags))
		return 0;

	purge = ue_find_event_file(file->tr, USER_EVENTS_PURGE_SYSTEM,
				   USER_EVENTS_PURGE_NAME);
	if (!purge || purge->event_call != &user_event_purge_call) {
		pr_warn_ratelimited("no %s/%s event of ours in this instance: enable refused\n",
				    USER_EVENTS_PURGE_SYSTEM,
				    USER_EVENTS_PURGE_NAME);
		return -EBUSY;
	}

	set_bit(EVENT_FILE_FL_WAS_ENABLED_BIT, &purge->flags);
	user_event_purge_marked = true;
	return 0;
}

/*
 * Adds the purge event (see user_event_purge_mark()), at load, when
 * prepare_unload is written 0 again, and when an event of ours is made
 * after the unload was prepared; it holds the module while it exists.
 * event_mutex held.
 */
int user_event_purge_add(void)
{
	int ret;

	ue_lockdep_assert_event_mutex();

	if (user_event_purge_added)
		return 0;
	ret = user_event_call_set_visible(&user_event_purge_call, true);
	if (ret) {
		pr_err("cannot add the %s/%s event (%d)\n",
		       USER_EVENTS_PURGE_SYSTEM, USER_EVENTS_PURGE_NAME, ret);
		return ret;
	}
	__module_get(THIS_MODULE);
	user_event_purge_added = true;
	return 0;
}

/*
 * Removes the purge event once no event of ours exists (the unload's
 * preparation, prepare_unload), and empties the instances where one of
 * ours was enabled: the removal makes the core mark every instance whose
 * purge file has WAS_ENABLED, and the reset right after, under the same
 * event_mutex, empties them before any refused removal could drop the
 * marks. (It also empties any instance the core marked before and did not
 * reset: a removal of ours only marks instances whose purge file is
 * marked already.) The removal is never refused as busy: the event is
 * never enabled, in ftrace or perf (user_event_purge_reg()). It is
 * refused (EBUSY) while kprobes are disarmed, since its directories,
 * which read module data, could then outlive the module
 * (user_events_dirs.c); a held directory of it keeps the module.
 * event_mutex held.
 */
int user_event_purge_remove(void)
{
	int ret;

	ue_lockdep_assert_event_mutex();

	if (!user_event_purge_added)
		return 0;

	ret = user_event_call_set_visible(&user_event_purge_call, false);
	if (ret)
		return ret;
	user_event_purge_added = false;
	if (user_event_purge_marked)
		ue_tracing_reset_marked();
	user_event_purge_marked = false;
	module_put(THIS_MODULE);
	return 0;
}
