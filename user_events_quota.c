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
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "user_events_internal.h"

/*
 * Bounds per user (real uid of the registering process), so that one
 * member of a granted group cannot take every event slot (nor, with the
 * default, more than half of the status bytes) or pin unbounded kernel
 * memory. Root is bounded only by max_events and max_enablers. 0: no
 * bound.
 *
 * The same bounds hold per tenant: the user who owns the outermost user
 * namespace below the initial one that the task is in (see
 * user_event_tenant()). Each uid of a user namespace maps to a host uid of
 * its own (newuidmap, /etc/subuid), so without this a user with a range
 * of subordinate uids would have as many quotas as uids. A task of the
 * initial user namespace is its own tenant.
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
 * The tenant a task with credentials in @ns and real uid @uid is charged
 * to as well as @uid: the owner of the outermost user namespace below the
 * initial one (the user who made the chain of namespaces, as the kernel's
 * ucounts see it), or @uid itself in the initial namespace. An owner is a
 * kuid of the parent namespace's: of the initial one, for the namespace
 * whose parent is it. Namespaces are immutable once made (owner, parent),
 * and the caller's credentials hold @ns, so no lock is needed.
 */
kuid_t user_event_tenant(const struct user_namespace *ns, kuid_t uid)
{
	if (ns == &init_user_ns)
		return uid;
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns->owner;
}

/* The calling task's uid and tenant, to charge */
void user_event_payer_current(struct user_event_payer *payer)
{
	payer->uid = current_uid();
	payer->tenant = user_event_tenant(current_user_ns(), payer->uid);
}

/* How many of @n more objects of @kind record @q (NULL: new) may take */
static unsigned int user_event_quota_room(struct user_event_quota *q,
					  kuid_t uid,
					  enum user_event_quota_kind kind,
					  unsigned int n)
{
	unsigned int limit = user_event_quota_limit(kind);
	unsigned int used = q ? q->count[kind] : 0;

	/* Root is bounded by the global limits only */
	if (!limit || uid_eq(uid, GLOBAL_ROOT_UID))
		return n;
	return used >= limit ? 0 : min(n, limit - used);
}

/* The record of @uid, made from *@new if there is none; quota lock held */
static struct user_event_quota *
user_event_quota_get(kuid_t uid, struct user_event_quota **new)
{
	struct user_event_quota *q = user_event_quota_find(uid);

	lockdep_assert_held(&user_event_quota_lock);

	if (!q) {
		q = *new;
		*new = NULL;
		q->uid = uid;
		hash_add(user_event_quotas, &q->node, __kuid_val(uid));
	}
	return q;
}

/*
 * Charges up to @n objects of @kind to @payer: to its uid and, when the
 * tenant is another user, to the tenant too, both bounded. Returns how
 * many were charged: @n unless @partial (then fewer, down to 0, when a bound
 * is reached), else 0 with *@err set. @force charges all @n, never
 * refused.
 */
static unsigned int user_event_charge_n(const struct user_event_payer *payer,
					enum user_event_quota_kind kind,
					unsigned int n, bool force, bool partial,
					int *err)
{
	bool two = !uid_eq(payer->uid, payer->tenant);
	struct user_event_quota *q, *t = NULL, *new[2];
	unsigned int room;

	*err = 0;
	new[0] = kzalloc(sizeof(*new[0]), GFP_KERNEL_ACCOUNT);
	new[1] = two ? kzalloc(sizeof(*new[1]), GFP_KERNEL_ACCOUNT) : NULL;
	if (!new[0] || (two && !new[1])) {
		kfree(new[0]);
		kfree(new[1]);
		*err = -ENOMEM;
		return 0;
	}

	spin_lock(&user_event_quota_lock);
	q = user_event_quota_find(payer->uid);
	if (two)
		t = user_event_quota_find(payer->tenant);
	room = user_event_quota_room(q, payer->uid, kind, n);
	if (two)
		room = min(room, user_event_quota_room(t, payer->tenant, kind,
						       n));
	if (force)
		room = n;
	if (room < n && !partial) {
		*err = -EMFILE;
		room = 0;
	} else if (room) {
		q = user_event_quota_get(payer->uid, &new[0]);
		q->count[kind] += room;
		if (two) {
			t = user_event_quota_get(payer->tenant,
						 new[0] ? &new[0] : &new[1]);
			t->count[kind] += room;
		}
	}
	spin_unlock(&user_event_quota_lock);

	kfree(new[0]);
	kfree(new[1]);
	return room;
}

/*
 * Charges @n objects of @kind to @payer. Fails with -EMFILE past the
 * bound of its uid or of its tenant, unless @force (root's "u:" taking an
 * event over is charged, never refused).
 */
int user_event_charge(const struct user_event_payer *payer,
		      enum user_event_quota_kind kind, unsigned int n,
		      bool force)
{
	int err;

	user_event_charge_n(payer, kind, n, force, false, &err);
	return err;
}

/*
 * Charges as many of @n objects of @kind to @payer as its bounds allow,
 * and returns how many (the enablers a fork child copies: the copy stops
 * at the quota instead of going around it).
 */
unsigned int user_event_charge_upto(const struct user_event_payer *payer,
				    enum user_event_quota_kind kind,
				    unsigned int n)
{
	int err;

	return user_event_charge_n(payer, kind, n, false, true, &err);
}

/* Takes @n off the record of @uid, freeing it when nothing is left */
static struct user_event_quota *user_event_quota_sub(kuid_t uid,
						     enum user_event_quota_kind kind,
						     unsigned int n)
{
	struct user_event_quota *q;
	int i;

	lockdep_assert_held(&user_event_quota_lock);

	q = user_event_quota_find(uid);
	if (WARN_ON_ONCE(!q || q->count[kind] < n))
		return NULL;
	q->count[kind] -= n;
	for (i = 0; i < UE_QUOTA_KINDS; i++)
		if (q->count[i])
			return NULL;
	hash_del(&q->node);
	return q;
}

void user_event_uncharge(const struct user_event_payer *payer,
			 enum user_event_quota_kind kind, unsigned int n)
{
	struct user_event_quota *q, *t = NULL;

	if (!n)
		return;

	spin_lock(&user_event_quota_lock);
	q = user_event_quota_sub(payer->uid, kind, n);
	if (!uid_eq(payer->uid, payer->tenant))
		t = user_event_quota_sub(payer->tenant, kind, n);
	spin_unlock(&user_event_quota_lock);

	kfree(q);
	kfree(t);
}
