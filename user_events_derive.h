/* SPDX-License-Identifier: GPL-2.0 */
/* The tracing core's variables, found by observation: user_events_derive.c */
#ifndef _USER_EVENTS_DERIVE_H
#define _USER_EVENTS_DERIVE_H

enum { UE_DV_EVENT_MUTEX, UE_DV_DYN_EVENT_OPS_MUTEX, UE_DV_DYN_EVENT_OPS_LIST,
	UE_DV_DYN_EVENT_LIST, UE_DV_COUNT };

struct ue_derived {
	unsigned long addr[UE_DV_COUNT];	/* 0 unless every check passed */
	char failed[UE_DV_COUNT][128];	/* the check that failed, and why */
	char how[UE_DV_COUNT][256];	/* the sources and checks passed */
};

extern const char * const ue_derived_names[UE_DV_COUNT];

/* At load, no lock held; @fail_sym (or NULL) fails a variable, for tests */
void ue_derive(unsigned long (*lookup)(const char *name), const char *fail_sym,
	       struct ue_derived *d);

#endif /* _USER_EVENTS_DERIVE_H */
