// SPDX-License-Identifier: GPL-2.0
/*
 * user_events: per-user bounds on the events a user has created and the
 * enable bits it has registered (max_events_per_uid, max_enablers_per_uid),
 * so that one member of a granted group cannot exhaust what the others
 * share. Upstream has no such bound. Charged by the event core
 * (trace_events_user.c) and the enablers (user_events_mm.c).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>

#include "user_events_internal.h"

/*
 * Bounds per user (real uid of the registering process), so that one
 * member of a granted group cannot take every event slot (nor, with the
 * default, more than half of the status bytes) or pin unbounded kernel
 * memory. Root is bounded only by max_events and max_enablers. 0: no
 * bound.
 */
static unsigned int max_events_per_uid = 2048;
module_param(max_events_per_uid, uint, 0444);
MODULE_PARM_DESC(max_events_per_uid,
		 "Maximum number of user events one user other than root may have created that exist at once, 0 for no limit (default 2048)");

static unsigned int max_enablers_per_uid = 262144;
module_param(max_enablers_per_uid, uint, 0444);
MODULE_PARM_DESC(max_enablers_per_uid,
		 "Maximum number of enable bits one user other than root may have registered, in all processes, 0 for no limit (default 262144)");

/*
 * Per-user accounting. A record exists while its user has anything
 * charged; records are looked up, created and freed under
 * user_event_quota_lock (a spinlock: enablers are charged and uncharged
 * from any process context, some holding event_mutex).
 */
struct user_event_quota {
	struct hlist_node node;
	kuid_t uid;
	unsigned int count[UE_QUOTA_KINDS];
};

static DEFINE_HASHTABLE(user_event_quotas, 6);
static DEFINE_SPINLOCK(user_event_quota_lock);

static unsigned int user_event_quota_limit(enum user_event_quota_kind kind)
{
	return kind == UE_QUOTA_EVENTS ? READ_ONCE(max_events_per_uid) :
					 READ_ONCE(max_enablers_per_uid);
}

static struct user_event_quota *user_event_quota_find(kuid_t uid)
{
	struct user_event_quota *q;

	lockdep_assert_held(&user_event_quota_lock);

	hash_for_each_possible(user_event_quotas, q, node, __kuid_val(uid))
		if (uid_eq(q->uid, uid))
			return q;

	return NULL;
}

/*
 * Charges @n objects of @kind to @uid. Fails with -EMFILE past the bound,
 * unless @force (copies made at fork are charged, never refused: the
 * process had them already, and fork is bounded by RLIMIT_NPROC).
 */
int user_event_charge(kuid_t uid, enum user_event_quota_kind kind,
		      unsigned int n, bool force)
{
	unsigned int limit = user_event_quota_limit(kind);
	struct user_event_quota *q, *new;
	int ret = 0;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return -ENOMEM;

	spin_lock(&user_event_quota_lock);
	q = user_event_quota_find(uid);
	if (!q) {
		q = new;
		new = NULL;
		q->uid = uid;
		hash_add(user_event_quotas, &q->node, __kuid_val(uid));
	}
	/* Root is bounded by the global limits only */
	if (!force && limit && (q->count[kind] >= limit ||
				n > limit - q->count[kind]) &&
	    !uid_eq(uid, GLOBAL_ROOT_UID))
		ret = -EMFILE;
	else
		q->count[kind] += n;
	spin_unlock(&user_event_quota_lock);

	kfree(new);
	return ret;
}

void user_event_uncharge(kuid_t uid, enum user_event_quota_kind kind,
			 unsigned int n)
{
	struct user_event_quota *q;
	int i;

	spin_lock(&user_event_quota_lock);
	q = user_event_quota_find(uid);
	if (WARN_ON_ONCE(!q || q->count[kind] < n)) {
		spin_unlock(&user_event_quota_lock);
		return;
	}
	q->count[kind] -= n;
	for (i = 0; i < UE_QUOTA_KINDS; i++)
		if (q->count[i])
			break;
	if (i == UE_QUOTA_KINDS)
		hash_del(&q->node);
	else
		q = NULL;
	spin_unlock(&user_event_quota_lock);

	kfree(q);
}
