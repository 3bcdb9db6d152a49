// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the aftermath modes of ue_race (relayout.c, held.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "uapi/linux/user_events.h"
#include "aftermath.h"

bool am_excluded(const struct am_opts *o, const char *part)
{
	size_t len = strlen(part);
	const char *p = o->exclude;

	while (p && *p) {
		if (!strncmp(p, part, len) && (p[len] == ',' || !p[len]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* 0 or -errno of the write */
int am_write_str(const char *path, const char *s)
{
	return ue_write_str(path, s, O_APPEND);
}

/*
 * Enables or disables one event of @dir (the top level or an instance):
 * through its NAME/enable file, or with -F through @dir/set_event, because
 * an open() of NAME/enable racing the event's removal uses freed memory on
 * kernels before 6.6 (tests/race/run.sh, tests/race/README).
 */
int am_event_enable(const struct am_opts *o, const char *dir, const char *sys,
		    const char *name, bool on)
{
	char path[320], cmd[160];

	if (o->no_event_files) {
		snprintf(path, sizeof(path), "%s/set_event", dir);
		snprintf(cmd, sizeof(cmd), "%s%s:%s\n", on ? "" : "!", sys, name);
		return am_write_str(path, cmd);
	}
	snprintf(path, sizeof(path), "%s/events/%s/%s/enable", dir, sys, name);
	return am_write_str(path, on ? "1" : "0");
}

/*
 * The unload as an administrator does it: prepare_unload removes the
 * files, then delete_module; if that is refused, the files come back.
 */
int am_mod_unload(void)
{
	int ret;

	am_write_str("/sys/module/" AM_MOD_NAME "/parameters/prepare_unload", "1");
	ret = syscall(SYS_delete_module, AM_MOD_NAME, O_NONBLOCK) ? -errno : 0;
	if (ret)
		am_write_str("/sys/module/" AM_MOD_NAME "/parameters/prepare_unload",
			     "0");
	return ret;
}

int am_mod_load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, "", 0))
		ret = -errno;
	close(fd);
	return ret;
}

/* After a run: rmmod (retried for 5 s), no files left, insmod; TAP lines */
void am_reload_after_run(const char *ko)
{
	int i, ret = -1;

	for (i = 0; i < 100; i++) {
		ret = am_mod_unload();
		if (!ret || ret == -ENOENT)
			break;
		usleep(50000);
	}
	am_tap(!ret || ret == -ENOENT, "rmmod after the run: %s",
	       ret ? strerror(-ret) : "done");
	am_tap(access(UE_DATA_FILE, F_OK) &&
	       access(UE_TRACEFS "/events/" USER_EVENTS_SYSTEM, F_OK),
	       "no user_events files left in tracefs");
	am_tap(!am_mod_load(ko), "insmod after the run");
}

/*
 * Deletes every event called <pfx>0 .. <pfx>(n-1), multi-format ones
 * included (DIAG_IOCSDEL deletes them all): how many names are left.
 */
int am_delete_names(const char *pfx, int n)
{
	char name[64], path[256];
	int i, fd, left = 0;
	DIR *d;
	struct dirent *e;

	fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return access(UE_TRACEFS "/events/" USER_EVENTS_SYSTEM, F_OK) ? 0 : n;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", pfx, i);
		ioctl(fd, DIAG_IOCSDEL, name);
		snprintf(path, sizeof(path),
			 UE_TRACEFS "/events/" USER_EVENTS_SYSTEM "/%s", name);
		if (!access(path, F_OK))
			left++;
	}
	close(fd);
	d = opendir(UE_TRACEFS "/events/" USER_EVENTS_MULTI_SYSTEM);
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, pfx, strlen(pfx)))
			left++;
	if (d)
		closedir(d);
	return left;
}

/* Counts @ret (0 or -errno) of one operation; returns @ret */
int am_count(struct am_counter *c, int ret)
{
	atomic_fetch_add(&c->n, 1);
	if (!ret)
		atomic_fetch_add(&c->ok, 1);
	else if (-ret > 0 && -ret < AM_ERRNO_MAX)
		atomic_fetch_add(&c->err[-ret], 1);
	return ret;
}

/* "# op  count (N ok, N EBUSY, ...)" per operation; the total */
long am_print_counts(const char *const *names, struct am_counter *c, int n)
{
	long total = 0;
	int i;

	for (i = 0; i < n; i++) {
		long cnt = atomic_load(&c[i].n);

		if (!cnt)
			continue;
		total += cnt;
		ue_print_op_counts(names[i], cnt, atomic_load(&c[i].ok),
				   c[i].err, AM_ERRNO_MAX);
	}
	return total;
}

static struct ue_tally tally;

void am_tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ue_vtap(&tally, false, "race: ", ok, fmt, ap);
	va_end(ap);
}

/* The last line, "N passed, N failed"; the exit status */
int am_tap_summary(void)
{
	return ue_tally_summary(&tally);
}

/* Every task in D state (or stopped), with where it waits */
void am_dump_blocked(void)
{
	char path[600], buf[4096], *p;
	struct dirent *e;
	DIR *d = opendir("/proc");
	int n;

	while (d && (e = readdir(d))) {
		DIR *td;
		struct dirent *t;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", e->d_name);
		td = opendir(path);
		while (td && (t = readdir(td))) {
			if (t->d_name[0] < '0' || t->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/stat",
				 e->d_name, t->d_name);
			if (ue_read_upto(path, buf, sizeof(buf)) <= 0)
				continue;
			p = strrchr(buf, ')');
			if (!p || (p[2] != 'D' && p[2] != 'T'))
				continue;
			printf("#   task %s/%s %.*s state %c\n", e->d_name,
			       t->d_name, (int)(p + 1 - buf), buf, p[2]);
			snprintf(path, sizeof(path), "/proc/%s/task/%s/stack",
				 e->d_name, t->d_name);
			n = ue_read_upto(path, buf, sizeof(buf));
			for (p = strtok(n > 0 ? buf : NULL, "\n"); p;
			     p = strtok(NULL, "\n"))
				printf("#     %s\n", p);
		}
		if (td)
			closedir(td);
	}
	if (d)
		closedir(d);
}
