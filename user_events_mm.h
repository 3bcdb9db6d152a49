/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The address-space records and their enablers, which user_events_mm.c
 * keeps and user_events_fork.c, above it, copies at fork: each function
 * is described where it is defined. Documentation/lifetimes.rst, "Remote
 * write enablers and address-space records".
 */
#ifndef _USER_EVENTS_MM_H
#define _USER_EVENTS_MM_H

#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>

#include "user_events_internal.h"

#define ENABLER_HASH_BITS 6
/* Forks an address space can make before its spares are refilled */
#define FORK_SPARES 8
/* Enablers walked between two chances to reschedule */
#define FORK_COPY_BATCH 256

/* A fork of an address space with enablers, finished in the child's task work */
struct user_event_fork {
	struct callback_head twork;
	struct user_event_mm *parent;	/* referenced */
	u64 seq;			/* the parent's sequence at fork */
};

/* Documentation/lifetimes.rst: struct user_event_mm */
struct user_event_mm {
	struct hlist_node node;		/* user_event_mms, RCU */
	struct mutex lock;
	struct list_head enablers;	/* RCU, changed under lock */
	DECLARE_HASHTABLE(enabler_hash, ENABLER_HASH_BITS);	/* lock */
	struct list_head faults;	/* enablers to fault in, lock */
	struct mm_struct *mm;		/* grabbed */
	bool dead;			/* unpublished: the mm went away */
	bool torn_down;			/* enablers freed, lock */
	bool dying;			/* killed, first teardown not ended */
	struct user_event_payer payer;	/* its maker: user_event_mm_settle() */
	refcount_t refcnt;
	/* Numbers enablers added and unregistered, and forks */
	atomic64_t seq;
	atomic_t forks_pending;
	atomic_t adding;		/* user_event_mm_may_have() */
	unsigned int nr_enablers;	/* registered, lock */
	struct user_event_fork *spares[FORK_SPARES];
	struct callback_head refill_twork;
	struct callback_head fault_twork;
	struct callback_head nudge_twork;
	unsigned long twork_flags;	/* UEMM_TWORK_*, atomic bit ops */
	/* When fault_twork was queued (jiffies | 1), 0 when it is not */
	unsigned long twork_since;
	/* Retries of a contended update and the nudge of a task asked */
	struct delayed_work late_work;
	unsigned int retries;		/* only late_work's function */
	struct work_struct teardown_work;
	struct work_struct free_work;
	struct rcu_head rcu;
};

enum {
	UEMM_TWORK_RESYNC,	/* an update could not write: rewrite all */
	UEMM_TWORK_NUDGE,	/* nudge_twork is queued */
	UEMM_REFILL_QUEUED,	/* refill_twork is queued */
};

struct user_event_enabler {
	struct list_head link;		/* user_event_mm.enablers */
	struct hlist_node hnode;	/* user_event_mm.enabler_hash */
	struct list_head free_link;
	struct list_head fault_link;	/* user_event_mm.faults, or empty */
	struct user_event *event;	/* referenced */
	struct user_event_payer payer;	/* charged for it */
	unsigned long uaddr;		/* as registered */
	unsigned long addr;		/* aligned to a long for bit ops */
	u8 ubit;			/* as registered */
	u8 bit;				/* in the long at addr */
	u8 fault_attempts;		/* under lock */
	u64 add_seq;			/* the address space's, when added */
	u64 del_seq;			/* when unregistered; 0: registered */
	struct rcu_head rcu;
};

extern unsigned int max_enablers;
extern struct workqueue_struct *user_event_mm_wq;
extern atomic64_t user_event_changes;

void user_event_mm_get(struct user_event_mm *uemm);
void user_event_mm_put(struct user_event_mm *uemm);
struct user_event_mm *user_event_mm_lookup_get(struct mm_struct *mm);
struct user_event_mm *user_event_mm_alloc(struct mm_struct *mm);
struct user_event_mm *user_event_mm_publish(struct user_event_mm *uemm);
void user_event_mm_refill(struct user_event_mm *uemm);
void user_event_mm_reap(struct user_event_mm *uemm, struct list_head *gone);
void user_event_mm_resync(struct user_event_mm *uemm);
void user_event_mm_kick_scan(void);
bool user_event_twork_add(struct user_event_mm *uemm, struct task_struct *task,
			  struct callback_head *twork, int mode);
void user_event_twork_done(struct user_event_mm *uemm);
void user_event_enabler_add(struct user_event_mm *uemm,
			    struct user_event_enabler *enabler);
int user_event_enabler_write(struct mm_struct *mm,
			     struct user_event_enabler *enabler, bool enabled);
void user_event_enablers_free(struct list_head *gone);

#endif /* _USER_EVENTS_MM_H */
