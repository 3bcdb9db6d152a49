/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the user_events.ko selftests: tracefs file
 * access, registration and deletion of events, status text parsing,
 * perf attach and trace buffer reading.
 *
 * Helpers that can fail return 0 (or a count / fd) on success and
 * -errno on failure, so tests can assert exact errnos with ASSERT_EQ.
 */
#ifndef UE_TEST_H
#define UE_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include "ue_helpers.h"

/*
 * kselftest_harness.h under -Wextra: its signal handler has an unused
 * parameter, and ASSERT_*() longjmp()s out of test functions that are
 * inlined into the setjmp() caller, for which -Wclobbered reports the
 * locals of every test although none is used after the jump.
 */
#pragma GCC diagnostic ignored "-Wclobbered"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/*
 * Slow kernels (KASAN, lockdep and kmemleak under TCG) run the same tests
 * with every timeout multiplied by UE_TIMEOUT_FACTOR, given when building
 * (make -C selftests UE_TIMEOUT_FACTOR=10, as scripts/debug-kernel.sh
 * does): TEST_F_TIMEOUT(f, t, UE_TIMEOUT(s)) for a test's own timeout,
 * the harness's default for the others.
 */
#ifndef UE_TIMEOUT_FACTOR
#define UE_TIMEOUT_FACTOR 1
#endif
#define UE_TIMEOUT(s)	((s) * UE_TIMEOUT_FACTOR)
/*
 * Latency bounds and waits for asynchronous work scale the same way: a
 * call that must finish within 1 s on a plain kernel gets
 * UE_BOUND_S(1.0) seconds, a wait of 1000 ms UE_BOUND_MS(1000).
 */
#define UE_BOUND_S(s)	((s) * UE_TIMEOUT_FACTOR)
#define UE_BOUND_MS(ms)	((ms) * UE_TIMEOUT_FACTOR)
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT UE_TIMEOUT(30)

/*
 * Tracing features of the running kernel, from tracefs itself (the guest
 * may boot a kernel whose /boot/config-* the host does not have): hist
 * triggers give every event a "hist" file; synthetic events have their
 * own control file.
 */
static inline bool ue_have_hist_triggers(void)
{
	return !access(UE_TRACEFS "/events/ftrace/print/hist", F_OK) ||
	       !access(UE_TRACEFS "/events/sched/sched_switch/hist", F_OK);
}

static inline bool ue_have_synth_events(void)
{
	return !access(UE_TRACEFS "/synthetic_events", F_OK);
}

/* Is the running kernel at least @major.@minor? */
static inline bool ue_kernel_at_least(int major, int minor)
{
	int ma = 0, mi = 0;
	FILE *f = fopen("/proc/sys/kernel/osrelease", "r");

	if (!f)
		return true;
	if (fscanf(f, "%d.%d", &ma, &mi) != 2)
		ma = mi = 0;
	fclose(f);
	return ma > major || (ma == major && mi >= minor);
}

/*
 * String filters on __rel_loc fields need FILTER_RDYN_STRING (the module
 * uses it from Linux 6.1; 5.10 refuses such filters with EINVAL, see
 * Documentation/compat.rst).
 */
static inline bool ue_have_rel_loc_filters(void)
{
	return ue_kernel_at_least(6, 1);
}

/* Skip a test that needs hist triggers, saying why */
#define UE_NEED_HIST_TRIGGERS() do {					\
	if (!ue_have_hist_triggers())					\
		SKIP(return, "kernel without CONFIG_HIST_TRIGGERS "	\
		     "(no hist file in tracefs)");			\
} while (0)

#define UE_PAGE_SIZE	4096
#define UE_STATUS_SLOTS	(UE_PAGE_SIZE - 1)

/* Longest event name allowed, and longest descriptor (without NUL) */
#define UE_NAME_MAX	255
#define UE_DESC_MAX	511

/* Read a whole file into buf, NUL terminated. Returns its length or -errno. */
static inline ssize_t ue_read_file(const char *path, char *buf, size_t size)
{
	ssize_t len = ue_read_upto(path, buf, size);

	/* Buffer full: the caller would see a truncated file */
	if (len >= 0 && (size_t)len + 1 >= size)
		return -E2BIG;

	return len;
}

/*
 * A whole file read into a new buffer of size bytes (free() it), NUL
 * terminated, its length in *len; NULL on failure, with -errno in *len.
 */
static inline char *ue_read_new(const char *path, size_t size, ssize_t *len)
{
	char *buf = malloc(size);

	*len = -ENOMEM;
	if (buf)
		*len = ue_read_file(path, buf, size);
	if (*len < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Write str to a file (like echo without -n when str ends in \n). */
static inline int ue_write_file(const char *path, const char *str, bool trunc)
{
	size_t len = strlen(str);
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC | (trunc ? O_TRUNC : 0));
	if (fd < 0)
		return -errno;

	n = write(fd, str, len);
	err = errno;
	close(fd);

	if (n < 0)
		return -err;
	if ((size_t)n != len)
		return -EIO;

	return 0;
}

/* Path of events/user_events/NAME[/FILE] */
static inline const char *ue_event_path(char *buf, size_t size,
					const char *name, const char *file)
{
	if (file)
		snprintf(buf, size, "%s/%s/%s", UE_EVENTS_DIR, name, file);
	else
		snprintf(buf, size, "%s/%s", UE_EVENTS_DIR, name);

	return buf;
}

/* The module's name: UE_MODULE_NAME (set by the guest runner) or user_events */
static inline const char *ue_mod_name(void)
{
	const char *name = getenv("UE_MODULE_NAME");

	return name && *name ? name : "user_events";
}

/* Is the module loaded (its /sys/module directory has an initstate)? */
static inline bool ue_mod_loaded(void)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", ue_mod_name());

	return stat(path, &st) == 0;
}

/*
 * The module's files pin it until 1 is written to its prepare_unload
 * parameter, which removes them; 0 restores them. 0 or -errno.
 */
static inline int ue_mod_prepare_unload(bool on)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/prepare_unload",
		 ue_mod_name());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);

	return ret;
}

/*
 * Unloads the module as an administrator would (prepare_unload, then
 * delete_module(O_NONBLOCK)); if that is refused, the files are restored.
 * 0 or the -errno of delete_module.
 */
static inline int ue_mod_unload(void)
{
	int ret;

	ue_mod_prepare_unload(true);
	if (!syscall(SYS_delete_module, ue_mod_name(), O_NONBLOCK))
		return 0;
	ret = -errno;
	ue_mod_prepare_unload(false);

	return ret;
}

/* finit_module($UE_MODULE, params): 0 or -errno */
static inline int ue_mod_insmod(const char *params)
{
	const char *ko = getenv("UE_MODULE");
	int fd, err = 0;

	if (!ko || !*ko)
		return -ENOENT;

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, params, 0))
		err = errno;
	ue_close_fd(fd);

	return -err;
}

/* build/<release>/test-kmod/<name>.ko, beside $UE_MODULE's dir: 0 if readable */
static inline int ue_kmod_path(char *buf, size_t size, const char *name)
{
	const char *ko = getenv("UE_MODULE");
	const char *slash = ko ? strrchr(ko, '/') : NULL;

	if (!slash)
		return -1;
	snprintf(buf, size, "%.*s/../test-kmod/%s.ko", (int)(slash - ko), ko,
		 name);
	return access(buf, R_OK);
}

/* The module's reference count, or -1 */
static inline long ue_mod_refcnt(void)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", ue_mod_name());
	if (ue_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/*
 * The reference count, once what earlier tests let go of is gone: a
 * removed directory's hold goes within a second of its last close
 */
static inline long ue_mod_refcnt_settled(void)
{
	ue_sleep_ms(1100);
	return ue_mod_refcnt();
}

/*
 * The reference count once it reads @want or less (what a test took must
 * be back; what earlier tests left may go meanwhile), or after @ms as it
 * is then
 */
static inline long ue_mod_refcnt_wait(long want, int ms)
{
	long now = ue_mod_refcnt();
	int i;

	for (i = 0; i < ms / 10 && now > want; i++) {
		ue_sleep_ms(10);
		now = ue_mod_refcnt();
	}
	return now;
}

/*
 * ue_mod_unload(), retried for up to 2 s (address spaces let go of their
 * events from a work item). 0 or -errno.
 */
static inline int ue_mod_unload_retry(void)
{
	int i, ret = -EIO;

	for (i = 0; i < 100; i++) {
		ret = ue_mod_unload();
		if (!ret || ret == -ENOENT)
			return ret;
		usleep(20000);
	}

	return ret;
}

/* Does events/user_events/NAME exist? */
/* Drops CAP_SYS_ADMIN and CAP_PERFMON from the effective set; 0 or -errno */
static inline int ue_drop_perfmon_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	data[CAP_TO_INDEX(CAP_PERFMON)].effective &= ~CAP_TO_MASK(CAP_PERFMON);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;

	return 0;
}

static inline int ue_delete_prefix(const char *prefix);

/* Reloads the module with @params, its events deleted first; 0 or -errno */
static inline int ue_mod_reload(const char *params)
{
	int ret;

	if (ue_mod_loaded()) {
		/* Every event pins the module: delete them all first */
		ue_delete_prefix("");
		ret = ue_mod_unload_retry();
		if (ret)
			return ret;
	}

	return ue_mod_insmod(params);
}

/* How many events/user_events_multi/@name.<hex id> exist */
static inline int ue_multi_count(const char *name)
{
	size_t len = strlen(name);
	struct dirent *de;
	DIR *d;
	int n = 0;

	d = opendir(UE_MULTI_DIR);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, name, len) && de->d_name[len] == '.')
			n++;
	closedir(d);

	return n;
}

static inline bool ue_event_exists(const char *name)
{
	char path[512];
	struct stat st;

	return stat(ue_event_path(path, sizeof(path), name, NULL), &st) == 0;
}

/* Wait up to ms for events/user_events/NAME to exist (or not) */
static inline bool ue_event_wait(const char *name, bool exists, int ms)
{
	int waited;

	for (waited = 0; waited <= ms; waited += 10) {
		if (ue_event_exists(name) == exists)
			return true;
		ue_sleep_ms(10);
	}

	return false;
}

/* echo 1/0 > events/user_events/NAME/enable */
static inline int ue_enable(const char *name, bool on)
{
	char path[512];

	return ue_write_file(ue_event_path(path, sizeof(path), name, "enable"),
			     on ? "1\n" : "0\n", false);
}

/* Contents of events/user_events/NAME/id as a number, or -errno. */
static inline long ue_event_id(const char *name)
{
	char path[512], buf[64];
	ssize_t len;

	len = ue_read_file(ue_event_path(path, sizeof(path), name, "id"),
			   buf, sizeof(buf));
	if (len < 0)
		return len;

	return strtol(buf, NULL, 10);
}

/*
 * Runs @churn (it creates and deletes one event and returns its id, or
 * -errno) until the tracing core hands out the same id 4 times in a row:
 * the lowest free one, which 6.12 always gives and 6.1 once its 16-bit
 * counter wrapped. Returns that id, the churn's -errno, or -EAGAIN if the
 * id never settled within 140,000 rounds; *@rounds gets how many ran.
 */
static inline long ue_churn_to_lowest_id(long (*churn)(void), int *rounds)
{
	long id = 0, prev = 0;
	int i, same = 0;

	for (i = 0; i < 140000 && same < 3; i++) {
		id = churn();
		if (id <= 0)
			break;
		same = id == prev ? same + 1 : 0;
		prev = id;
	}
	*rounds = i;
	if (id <= 0)
		return id ? id : -EINVAL;
	return same == 3 ? id : -EAGAIN;
}

static inline int ue_open_data(void)
{
	return open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
}

/*
 * Registers desc on fd and enables the event name in the top instance.
 * Returns the write index, or -errno.
 */
static inline int ue_reg_enabled(int fd, const char *desc, const char *name)
{
	int w = -1;
	int ret;

	ret = ue_reg(fd, desc, NULL, &w);
	if (ret)
		return ret;
	ret = ue_enable(name, true);
	if (ret)
		return ret;

	return w;
}

/*
 * Registers desc through a fresh data fd, closed again: nothing holds the
 * event afterwards. Returns 0 or -errno.
 */
static inline int ue_reg_closed(const char *desc)
{
	int fd = ue_open_data();
	int ret;

	if (fd < 0)
		return -errno;
	ret = ue_reg(fd, desc, NULL, NULL);
	close(fd);
	return ret;
}

/* ue_reg_enabled() that must succeed: the write index */
static inline int ue_reg_enabled_ok(struct __test_metadata *_metadata, int fd,
				    const char *desc, const char *name)
{
	int w = ue_reg_enabled(fd, desc, name);

	ASSERT_LE(0, w);
	return w;
}

/* DIAG_IOCSDEL on fd. Returns 0 or -errno. */
static inline int ue_del_fd(int fd, const char *name)
{
	if (ioctl(fd, DIAG_IOCSDEL, name) < 0)
		return -errno;

	return 0;
}

/* DIAG_IOCSDEL through a fresh data fd. Returns 0 or -errno. */
static inline int ue_del(const char *name)
{
	int fd = ue_open_data();
	int ret;

	if (fd < 0)
		return -errno;

	ret = ue_del_fd(fd, name);
	close(fd);

	return ret;
}

/* One event line of user_events_status */
struct ue_status_ent {
	int index;		/* -1 when the line has no "<index>:" */
	char name[UE_NAME_MAX + 1];
	char used[64];		/* what follows " # Used by", or "" */
	long owner;		/* " # Owner: <uid>"; -1 when absent (shared) */
};

#define UE_STATUS_BUF (1 << 20)

/*
 * Parse the event lines of user_events_status (up to the empty line).
 * Returns the number of entries stored (at most max), or -errno.
 * Entries beyond max are counted but not stored.
 */
static inline int ue_status_list(struct ue_status_ent *ents, int max)
{
	ssize_t len;
	char *buf = ue_read_new(UE_STATUS_FILE, UE_STATUS_BUF, &len);
	char *line, *next;
	int n = 0;

	if (!buf)
		return len;

	for (line = buf; *line && *line != '\n'; line = next) {
		struct ue_status_ent ent = { .index = -1, .owner = -1 };
		char *p = line, *used, *owner;
		size_t name_len;

		next = ue_cut_line(line);

		/* "<index>:" prefix, present for events with a status byte */
		while (isdigit((unsigned char)*p))
			p++;
		if (p != line && *p == ':') {
			ent.index = atoi(line);
			p++;
		} else {
			p = line;
		}

		/* A user's event ends in " # Owner: <uid>" */
		owner = strstr(p, " # Owner: ");
		if (owner) {
			ent.owner = strtol(owner + strlen(" # Owner: "), NULL, 10);
			*owner = '\0';
		}
		used = strstr(p, " # Used by");
		name_len = used ? (size_t)(used - p) : strlen(p);
		if (name_len > UE_NAME_MAX)
			name_len = UE_NAME_MAX;
		memcpy(ent.name, p, name_len);
		ent.name[name_len] = '\0';
		if (used)
			snprintf(ent.used, sizeof(ent.used), "%s",
				 used + strlen(" # Used by"));

		if (n < max)
			ents[n] = ent;
		n++;
	}

	free(buf);
	return n;
}

/*
 * Disable and delete every event whose name starts with prefix ("" for
 * all events). Data fds and perf events of the caller must be closed
 * first. Returns the number of events that could not be deleted, or
 * -errno if the status file could not be read.
 */
static inline int ue_delete_prefix(const char *prefix)
{
	int max = 8192, n, i, ret, failed = 0;
	struct ue_status_ent *ents = calloc(max, sizeof(*ents));

	if (!ents)
		return -ENOMEM;

	n = ue_status_list(ents, max);
	if (n < 0) {
		free(ents);
		return n;
	}
	if (n > max)
		n = max;

	for (i = 0; i < n; i++) {
		if (strncmp(ents[i].name, prefix, strlen(prefix)))
			continue;
		ue_enable(ents[i].name, false);
		/* ENOENT: it went away by itself meanwhile (auto delete) */
		ret = ue_del(ents[i].name);
		/* Multi-format events are listed as name.id, deleted by name */
		if (ret == -ENOENT && strrchr(ents[i].name, '.')) {
			*strrchr(ents[i].name, '.') = '\0';
			ret = ue_del(ents[i].name);
		}
		if (ret && ret != -ENOENT)
			failed++;
	}

	free(ents);
	return failed;
}

/*
 * Open a perf event on user_events/NAME for the calling thread, which
 * registers a perf probe on it. Returns the perf fd or -errno.
 */
static inline int ue_perf_open(const char *name)
{
	long id = ue_event_id(name);
	int fd;

	if (id < 0)
		return id;

	fd = ue_perf_open_id(id, PERF_SAMPLE_RAW, 0, -1);
	if (fd < 0)
		return -errno;

	return fd;
}

/*
 * perf_event_open() of a kprobe on func for pid on cpu: a counter when
 * period is 0, else a sample each period hits. fd, or -errno.
 */
static inline int ue_kprobe_open(const char *func, pid_t pid, int cpu,
				 __u64 period)
{
	struct perf_event_attr attr;
	char buf[32];
	int fd;

	if (ue_read_file("/sys/bus/event_source/devices/kprobe/type", buf,
			 sizeof(buf)) < 0)
		return -ENOENT;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = strtoul(buf, NULL, 10);
	attr.config1 = (__u64)(uintptr_t)func;
	attr.sample_period = period;
	attr.wakeup_events = period ? 1 : 0;
	fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* echo 1 > tracing_on; echo > trace */
static inline int ue_trace_clear(void)
{
	int ret = ue_write_file(UE_TRACEFS "/tracing_on", "1\n", false);

	if (ret)
		return ret;

	return ue_write_file(UE_TRACE_FILE, "\n", true);
}

#define UE_LINE_MAX 1024
#define UE_TRACE_BUF (4 << 20)

/*
 * The text after needle (and the blanks after it) of each line of a file
 * that has it, "#" comment lines left out, into lines[] (at most max of
 * them). Returns the number of such lines or -errno.
 */
static inline int ue_file_lines(const char *path, const char *needle,
				char lines[][UE_LINE_MAX], int max)
{
	ssize_t len;
	char *buf = ue_read_new(path, UE_TRACE_BUF, &len);
	char *line, *next, *text;
	int n = 0;

	if (!buf)
		return len;

	for (line = buf; *line; line = next) {
		next = ue_cut_line(line);

		text = strstr(line, needle);
		if (line[0] == '#' || !text)
			continue;
		text += strlen(needle);
		while (*text == ' ' || *text == '\t')
			text++;

		if (n < max)
			snprintf(lines[n], UE_LINE_MAX, "%s", text);
		n++;
	}

	free(buf);
	return n;
}

/*
 * Collect the trace lines of event NAME: for each line of the trace
 * file "<task>-<pid> [cpu] <flags> <ts>: NAME: <text>", stores <text>
 * (without the newline) in lines[i]. Returns the number of such lines
 * (lines beyond max are counted but not stored), or -errno.
 */
static inline int ue_trace_lines(const char *name, char lines[][UE_LINE_MAX],
				 int max)
{
	char needle[UE_NAME_MAX + 8];

	snprintf(needle, sizeof(needle), ": %s: ", name);
	return ue_file_lines(UE_TRACE_FILE, needle, lines, max);
}

/* --- the record's common header ------------------------------------------
 *
 * Every trace record starts with the kernel's struct trace_entry, which the
 * format files list as the "common_" fields before an empty line. It is 8
 * bytes on most kernels but not on all: Debian's 6.1 PREEMPT_RT kernel adds
 * common_preempt_lazy_count, making it 12. The user fields start right after
 * it, and __data_loc locations count from the start of the record, so both
 * depend on its size. The tests learn it at run time from the format of one
 * of the kernel's own events (the tracing core prints the same common fields
 * for every event: f_show() in kernel/trace/trace_events.c).
 *
 * Expected format lines and record offsets in the tests are written for the
 * 8-byte header (UE_HDR_BASE) and shifted by ue_hdr_size() - UE_HDR_BASE.
 */
#define UE_COMMON_EVENT	UE_TRACEFS "/events/ftrace/print/format"
#define UE_HDR_BASE	8

/* Offset and size of a "\tfield:...;\toffset:N;\tsize:N;..." line */
static inline int ue_field_line(const char *line, int *off, int *size)
{
	const char *p = strstr(line, ";\toffset:");

	if (strncmp(line, "\tfield:", 7) || !p ||
	    sscanf(p, ";\toffset:%d;\tsize:%d;", off, size) != 2)
		return -EINVAL;

	return 0;
}

/*
 * The common field lines of every format file ("\tfield:...\n" each, up
 * to but not including the empty line after them), as the kernel shows
 * them for UE_COMMON_EVENT; NULL with errno set on failure. Each line must
 * declare a "common_" field.
 */
static inline const char *ue_common_fields(void)
{
	static char common[4096];
	static char buf[16384];
	char *start, *end, *line;
	ssize_t len;

	if (common[0])
		return common;

	len = ue_read_file(UE_COMMON_EVENT, buf, sizeof(buf));
	if (len < 0) {
		errno = -len;
		return NULL;
	}

	start = strstr(buf, "\nformat:\n");
	if (!start)
		goto bad;
	start += strlen("\nformat:\n");
	end = strstr(start, "\n\n");
	if (!end || end == start || (size_t)(end + 1 - start) >= sizeof(common))
		goto bad;
	end[1] = '\0';

	for (line = start; *line; line = strchr(line, '\n') + 1) {
		const char *semi = strchr(line, ';');
		const char *name;
		int off, size;

		if (ue_field_line(line, &off, &size) || !semi)
			goto bad;
		/* "\tfield:TYPE common_NAME;" (or "common_NAME[N];") */
		for (name = semi; name > line && name[-1] != ' '; name--)
			;
		if (strncmp(name, "common_", 7))
			goto bad;
	}

	memcpy(common, start, end + 2 - start);
	return common;
bad:
	errno = EPROTO;
	return NULL;
}

/*
 * Size of the record's common header (sizeof(struct trace_entry)): the
 * end of its last common field, rounded up to the alignment of the
 * struct (its largest scalar member). Returns it, or -errno.
 */
static inline int ue_hdr_size(void)
{
	static int hdr;
	const char *common, *line;
	int end = 0, align = 1;

	if (hdr > 0)
		return hdr;

	common = ue_common_fields();
	if (!common)
		return -errno;

	for (line = common; *line; line = strchr(line, '\n') + 1) {
		int off, size;

		if (ue_field_line(line, &off, &size) || off < 0 || size <= 0)
			return -EPROTO;
		if (off + size > end)
			end = off + size;
		/* A scalar is aligned to its size (x86-64, arm64...) */
		if ((size == 2 || size == 4 || size == 8) && size > align)
			align = size;
	}
	if (end < UE_HDR_BASE)
		return -EPROTO;

	hdr = (end + align - 1) / align * align;
	return hdr;
}

/*
 * Copy text to out, adding delta to N in every "\toffset:N;". Returns 0,
 * or -E2BIG when out is too small.
 */
static inline int ue_shift_offsets(char *out, size_t size, const char *text,
				   int delta)
{
	static const char key[] = "\toffset:";
	size_t pos = 0;

	while (*text) {
		const char *p = strstr(text, key);
		size_t n = p ? (size_t)(p - text) + strlen(key) : strlen(text);
		char *num_end;
		long v;

		if (pos + n >= size)
			return -E2BIG;
		memcpy(out + pos, text, n);
		pos += n;
		text += n;
		if (!p)
			break;

		v = strtol(text, &num_end, 10);
		if (num_end == text)
			continue;
		n = snprintf(out + pos, size - pos, "%ld", v + delta);
		if (n >= size - pos)
			return -E2BIG;
		pos += n;
		text = num_end;
	}
	out[pos] = '\0';

	return 0;
}

/*
 * The whole events/user_events/NAME/format text the kernel should show:
 * "name:", "ID:", "format:", the common fields of ue_common_fields(), an
 * empty line, then tail (the event's field lines, an empty line and the
 * print fmt line) whose offsets are written for an 8-byte header and get
 * shifted to the real one. Returns 0 or -errno.
 */
static inline int ue_format_want(char *out, size_t size, const char *name,
				 long id, const char *tail)
{
	const char *common = ue_common_fields();
	int hdr = ue_hdr_size();
	int n;

	if (!common)
		return -errno;
	if (hdr < 0)
		return hdr;

	n = snprintf(out, size, "name: %s\nID: %ld\nformat:\n%s\n",
		     name, id, common);
	if (n < 0 || (size_t)n >= size)
		return -E2BIG;

	return ue_shift_offsets(out + n, size - n, tail, hdr - UE_HDR_BASE);
}

/*
 * The whole format file: the head as ue_format_want() makes it, then want,
 * the field lines (with offsets for an 8-byte record header, shifted to
 * the real one) and print fmt.
 */
#define UE_ASSERT_FORMAT(name, want) do {				\
	static char __want[65536], __got[65536];			\
	char __path[512];						\
	long __id = ue_event_id(name);					\
									\
	ASSERT_LT(0, __id) {						\
		TH_LOG("no event %s", name);				\
	}								\
	ASSERT_EQ(0, ue_format_want(__want, sizeof(__want), name,	\
				    __id, want));			\
	ASSERT_LT(0, ue_read_file(ue_event_path(__path, sizeof(__path),	\
						name, "format"),	\
				  __got, sizeof(__got)));		\
	ASSERT_STREQ(__want, __got);					\
} while (0)

/*
 * Offset and size of field FIELD (its name, without any "[N]") in the
 * format file at PATH. Returns 0 or -ENOENT.
 */
static inline int ue_format_file_field(const char *path, const char *field,
				       int *off, int *size)
{
	static char buf[65536];
	char *line, *next;

	if (ue_read_file(path, buf, sizeof(buf)) < 0)
		return -ENOENT;

	for (line = buf; *line; line = next) {
		char *end, *fname, *br;
		int o, s;

		next = ue_cut_line(line);

		if (ue_field_line(line, &o, &s))
			continue;
		end = strstr(line, ";\toffset:");
		*end = '\0';
		fname = strrchr(line, ' ');
		if (!fname)
			continue;
		fname++;
		br = strchr(fname, '[');
		if (br)
			*br = '\0';
		if (strcmp(fname, field))
			continue;
		*off = o;
		*size = s;
		return 0;
	}

	return -ENOENT;
}

/* The same in events/user_events/EVENT/format */
static inline int ue_format_field(const char *event, const char *field,
				  int *off, int *size)
{
	char path[512];

	return ue_format_file_field(ue_event_path(path, sizeof(path), event,
						  "format"),
				    field, off, size);
}

/*
 * Disable and DIAG_IOCSDEL every event of both systems whose name starts
 * with prefix, then wait up to 2 s for all of them to be gone (auto-deleted
 * events go away asynchronously). Returns how many are left.
 */
static inline int ue_cleanup_events(const char *prefix)
{
	static const char *const sys_dirs[] = { UE_EVENTS_DIR, UE_MULTI_DIR };
	int left = 0, waited, ret;
	unsigned int s;

	for (waited = 0; waited <= 2000; waited += 20) {
		left = 0;
		for (s = 0; s < ARRAY_SIZE(sys_dirs); s++) {
			struct dirent *de;
			DIR *d = opendir(sys_dirs[s]);

			if (!d)
				continue;
			while ((de = readdir(d))) {
				char path[512], name[300];

				if (strncmp(de->d_name, prefix, strlen(prefix)))
					continue;
				left++;
				snprintf(path, sizeof(path), "%s/%s/enable",
					 sys_dirs[s], de->d_name);
				ue_write_file(path, "0\n", false);
				/* DIAG_IOCSDEL takes the name without ".<id>" */
				snprintf(name, sizeof(name), "%s", de->d_name);
				name[strcspn(name, ".")] = '\0';
				ret = ue_del(name);
				if (waited + 20 > 2000)
					ksft_print_msg("cleanup: %s/%s left, DIAG_IOCSDEL: %s\n",
						       sys_dirs[s], de->d_name,
						       strerror(-ret));
			}
			closedir(d);
		}
		if (!left)
			break;
		ue_sleep_ms(20);
	}

	return left;
}

/*
 * Runs fn(arg, res) in a forked child, which sends the @size bytes of the
 * array @res back to the parent and exits 0; the parent gets them in @res.
 */
static inline void ue_child_results(struct __test_metadata *_metadata,
				    void (*fn)(void *arg, int *res), void *arg,
				    int *res, size_t size)
{
	int pipefd[2], status = -1;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pipefd[0]);
		fn(arg, res);
		if (write(pipefd[1], res, size) != (ssize_t)size)
			_exit(2);
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ((ssize_t)size, read(pipefd[0], res, size));
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
}

/*
 * The trace holds exactly the lines of event name given after lines (the
 * char[][UE_LINE_MAX] array to collect them in), in that order
 */
#define UE_ASSERT_TRACE_LINES(name, lines, ...) do {			\
	const char *const __want[] = { __VA_ARGS__ };			\
	const int __n = sizeof(__want) / sizeof(__want[0]);		\
	int __i;							\
									\
	ASSERT_EQ(__n, ue_trace_lines((name), (lines),			\
				      (int)(sizeof(lines) / sizeof((lines)[0])))); \
	for (__i = 0; __i < __n; __i++)					\
		ASSERT_STREQ(__want[__i], (lines)[__i]);		\
} while (0)

/*
 * Fixture teardown of the two data fds (-1: not open) a fixture may hold,
 * then every event whose name starts with prefix deleted (events persist
 * after close: the next test starts clean)
 */
static inline void ue_fds_teardown(struct __test_metadata *_metadata, int fd,
				   int fd2, const char *prefix)
{
	ue_close_fd(fd);
	ue_close_fd(fd2);
	EXPECT_EQ(0, ue_delete_prefix(prefix));
}

/* Fixture setup: open the data file into fd, or fail saying why */
#define UE_ASSERT_OPEN_DATA(fd) do {					\
	(fd) = ue_open_data();						\
	ASSERT_LE(0, (fd)) {						\
		TH_LOG("open %s: %s (is user_events.ko loaded?)",	\
		       UE_DATA_FILE, strerror(errno));			\
	}								\
} while (0)

/* Fixture setup: the record header size must be known */
#define UE_ASSERT_HDR_SIZE() do {					\
	ASSERT_LT(0, ue_hdr_size()) {					\
		TH_LOG("record header size from %s: %s",		\
		       UE_COMMON_EVENT, strerror(errno));		\
	}								\
} while (0)

#endif /* UE_TEST_H */
