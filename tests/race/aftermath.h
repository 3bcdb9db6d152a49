/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The aftermath modes of ue_race (-M relayout, -M held): they check what
 * an operation leaves behind for later ones (a reader, a process exit, an
 * unload), not only that the operation itself went well. See
 * tests/race/README.
 */
#ifndef UE_RACE_AFTERMATH_H
#define UE_RACE_AFTERMATH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "../selftests/ue_helpers.h"

typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;

/* As the kernel's (GCC takes the attribute keyword without trailing __) */
#define __printf(a, b)	__attribute((format(printf, a, b)))
#define __maybe_unused	__attribute__((unused))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define AM_MOD_NAME	"user_events"

struct am_opts {
	unsigned long long seed;
	int secs;
	int nprocs;		/* writer (relayout) or victim (held) processes */
	int nthreads;		/* threads of each */
	int verbose;
	const char *module_ko;	/* -m: unloads and loads it again */
	const char *exclude;	/* -x: comma-separated parts to leave out */
	bool no_event_files;	/* -F: per-event enables through set_event */
};

/* Entry points: exit status of ue_race */
int am_relayout(const struct am_opts *o);
int am_held(const struct am_opts *o);

/* Counts of one operation, in memory shared by the processes */
#define AM_ERRNO_MAX	140
struct am_counter {
	atomic_long n, ok;
	atomic_long err[AM_ERRNO_MAX];
};

/* aftermath.c: helpers shared by the modes */
int am_count(struct am_counter *c, int ret);
long am_print_counts(const char *const *names, struct am_counter *c, int n);
bool am_excluded(const struct am_opts *o, const char *part);
int am_write_str(const char *path, const char *s);
int am_event_enable(const struct am_opts *o, const char *inst, const char *sys,
		    const char *name, bool on);
int am_mod_unload(void);
int am_mod_load(const char *ko);
void am_reload_after_run(const char *ko);
int am_delete_names(const char *pfx, int n);
__printf(2, 3) void am_tap(bool ok, const char *fmt, ...);
int am_tap_summary(void);
void am_dump_blocked(void);

#endif /* UE_RACE_AFTERMATH_H */
