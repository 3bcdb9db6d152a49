// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection through every path of user_events.ko (run by
 * `make check-debug` in the KASAN kernel, which has failslab,
 * fail_page_alloc and fail_usercopy).
 *
 * For each operation, and for n = 1, 2, ...: make the n-th allocation or
 * user copy of this thread fail (/proc/thread-self/fail-nth), but only in
 * calls made from the module's code (the stack trace filter is set to the
 * module's address range), run the operation, and check that it either
 * succeeded or failed with a clean errno that the operation allows. Then
 * check that it left nothing behind (events, enable bits, status), undo
 * it, and go on with n + 1, until the operation completes without
 * reaching the n-th fault point. The kernel log must stay clean (the
 * guest runner checks it) and kmemleak must find nothing after the module
 * is unloaded (debug-kernel.sh checks that).
 *
 *   ue_failnth [max faults per operation, default 200]
 *
 * Output: TAP, one line per operation, then "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>

#define USER_EVENTS_REMOTE_WRITE_ABI
#include "uapi/linux/user_events.h"
#include "../selftests/ue_helpers.h"

#define TRACEFS UE_TRACEFS
#define PREPARE "/sys/module/user_events/parameters/prepare_unload"
#define DEBUGFS "/sys/kernel/debug"

static struct ue_tally tally;
static int max_n = 200;
static long base_active;
static long base_refcnt;
static __u64 word;

static int write_str(const char *path, const char *s)
{
	return ue_write_str(path, s, 0);
}

/* "Active: N" of user_events_status, or -errno */
static long active_events(void)
{
	static char buf[1 << 20];
	char *p;

	if (ue_read_upto(UE_STATUS_FILE, buf, sizeof(buf)) < 0)
		return -errno;
	p = strstr(buf, "Active: ");
	return p ? strtol(p + 8, NULL, 10) : -EINVAL;
}

/* The module's reference count: each event, open file and mm record */
static long module_refcnt(void)
{
	char buf[32];

	if (ue_read_upto("/sys/module/user_events/refcnt", buf, sizeof(buf)) < 0)
		return -errno;
	return strtol(buf, NULL, 10);
}

/* What is left, for the log; then deletes it so that the next check is fair */
static void dump_state(void)
{
	static char buf[1 << 16];
	char *line, *save;

	if (ue_read_upto(UE_STATUS_FILE, buf, sizeof(buf)) >= 0)
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("#   status: %s\n", line);
	if (ue_read_upto(UE_DYN_FILE, buf, sizeof(buf)) >= 0)
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("#   dynamic_events: %s\n", line);
	sleep(2);	/* the reap work retries every second */
	printf("#   2 s later: %ld events\n", active_events());
	if (ue_read_upto(UE_DYN_FILE, buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char cmd[300];
		int ret;

		if (strncmp(line, "u:", 2))
			continue;
		snprintf(cmd, sizeof(cmd), "!u:%.*s", (int)strcspn(line + 2, " :"),
			 line + 2);
		ret = write_str(UE_DYN_FILE, cmd);
		printf("#   %s: %s\n", cmd, ret ? strerror(-ret) : "deleted");
	}
}

/* Arms the n-th fault point of this thread; 0 disarms */
static void fail_nth(int n)
{
	char s[16];

	snprintf(s, sizeof(s), "%d", n);
	if (write_str("/proc/thread-self/fail-nth", s)) {
		printf("Bail out! cannot write /proc/thread-self/fail-nth\n");
		exit(2);
	}
}

/* True when the armed fault was injected (fail-nth reads 0) */
static bool fault_fired(void)
{
	char s[16] = "";

	ue_read_upto("/proc/thread-self/fail-nth", s, sizeof(s));
	return atoi(s) == 0;
}

/*
 * Address range of the first kernel function whose name starts with
 * @prefix, from /proc/kallsyms (up to the next symbol). 0 if not found.
 */
static unsigned long ksym_range(const char *prefix, unsigned long *end)
{
	unsigned long addr, start = 0, best_next = ~0UL;
	char line[512], name[256], type;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) == 3 &&
		    !start && addr && !strncmp(name, prefix, strlen(prefix)))
			start = addr;
	rewind(f);
	while (start && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) == 3 &&
		    addr > start && addr < best_next)
			best_next = addr;
	fclose(f);
	*end = best_next;
	return start;
}

/*
 * Faults only in calls from the module: its text range as the stack
 * trace filter of every fault type, and no rate limit, no messages.
 * Except in the tracing core's event_define_fields(): it WARNs when it
 * cannot allocate a field of an event being added (a WARN_ON_ONCE of the
 * core, on every kind of event, that the module cannot avoid while it
 * gives the core its fields with their array lengths); the reject range
 * of the filter leaves it out.
 */
static int setup(void)
{
	static const char *const kinds[] = { "failslab", "fail_page_alloc",
					     "fail_usercopy" };
	char path[256], buf[256], val[64];
	unsigned long base = 0, size = 0, rej_start, rej_end = 0;
	unsigned int i;
	FILE *f;

	rej_start = ksym_range("event_define_fields", &rej_end);

	f = fopen("/proc/modules", "r");
	if (!f)
		return -errno;
	while (fgets(buf, sizeof(buf), f)) {
		char name[64], addr[32];

		if (sscanf(buf, "%63s %lu %*s %*s %*s %31s", name, &size,
			   addr) == 3 && !strcmp(name, "user_events")) {
			base = strtoul(addr, NULL, 16);
			break;
		}
	}
	fclose(f);
	if (!base)
		return -ENOENT;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const char *const set[][2] = {
			{ "verbose", "0" },
			{ "probability", "0" },
			{ "times", "-1" },
			{ "stacktrace-depth", "32" },
			{ "ignore-gfp-wait", "N" },
			{ "ignore-gfp-highmem", "N" },
			{ "min-order", "0" },
		};
		unsigned int j;

		for (j = 0; j < sizeof(set) / sizeof(set[0]); j++) {
			snprintf(path, sizeof(path), "%s/%s/%s", DEBUGFS,
				 kinds[i], set[j][0]);
			/* Not every kind has every file */
			write_str(path, set[j][1]);
		}
		snprintf(path, sizeof(path), "%s/%s/require-start", DEBUGFS,
			 kinds[i]);
		snprintf(val, sizeof(val), "%lu", base);
		if (write_str(path, val))
			return -errno;
		snprintf(path, sizeof(path), "%s/%s/require-end", DEBUGFS,
			 kinds[i]);
		snprintf(val, sizeof(val), "%lu", base + size);
		if (write_str(path, val))
			return -errno;
		if (rej_start) {
			snprintf(path, sizeof(path), "%s/%s/reject-start",
				 DEBUGFS, kinds[i]);
			snprintf(val, sizeof(val), "%lu", rej_start);
			if (write_str(path, val))
				return -errno;
			snprintf(path, sizeof(path), "%s/%s/reject-end",
				 DEBUGFS, kinds[i]);
			snprintf(val, sizeof(val), "%lu", rej_end);
			if (write_str(path, val))
				return -errno;
		}
	}
	printf("# module text %#lx-%#lx; event_define_fields %#lx-%#lx left out\n",
	       base, base + size, rej_start, rej_end);
	return 0;
}

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ue_vtap(&tally, true, "", ok, fmt, ap);
	va_end(ap);
}

/* Registration in both ABIs and unregistration of the enable word */
static int reg(int fd, const char *desc, __u16 flags, __u8 bit, int *idx)
{
	return ue_wreg(fd, desc, &word, sizeof(word), bit, flags, idx);
}

static int reg_status_abi(int fd, const char *desc)
{
	return ue_reg(fd, desc, NULL, NULL);
}

static int unreg(int fd, __u8 bit)
{
	return ue_wunreg(fd, &word, bit);
}

static int del(int fd, const char *name)
{
	return ioctl(fd, DIAG_IOCSDEL, name) < 0 ? -errno : 0;
}

static int enable(const char *name, bool on)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/enable",
		 name);
	return write_str(path, on ? "1" : "0");
}

static int perf_open(const char *name)
{
	char path[256], buf[32];
	int fd;

	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/id",
		 name);
	if (ue_read_upto(path, buf, sizeof(buf)) < 0)
		return -errno;
	fd = ue_perf_open_id(strtoull(buf, NULL, 10), PERF_SAMPLE_RAW, -1, 0);
	return fd < 0 ? -errno : fd;
}

static bool allowed(int ret, const int *ok)
{
	for (; *ok != -1; ok++)
		if (ret == -*ok)
			return true;
	return ret == 0;
}

static const int alloc_errnos[] = { ENOMEM, EFAULT, -1 };

/*
 * One operation under fault injection. @op returns 0 or -errno; @undo
 * (may be NULL) reverts a success; afterwards the number of events must
 * be @want_active. Returns with the TAP line printed.
 */
static void run(const char *what, int (*op)(void), void (*undo)(void),
		const int *ok, long want_active)
{
	int n, ret, bad = 0, fired = 0;
	long active;

	for (n = 1; n <= max_n; n++) {
		fail_nth(n);
		ret = op();
		if (!fault_fired()) {
			fail_nth(0);
			/* Past the last fault point: it must have worked */
			if (ret) {
				printf("# %s: %d without a fault\n", what, ret);
				bad++;
			}
			if (!ret && undo)
				undo();
			break;
		}
		fired++;
		if (!allowed(ret, ok)) {
			printf("# %s: fault %d gave %d (%s)\n", what, n, ret,
			       strerror(-ret));
			bad++;
		}
		if (!ret && undo)
			undo();
		active = active_events();
		if (active != want_active) {
			printf("# %s: fault %d (result %d) left %ld events (want %ld)\n",
			       what, n, ret, active, want_active);
			dump_state();
			bad++;
			break;
		}
		/*
		 * Each event pins the module: a leaked reference shows here
		 * (the record of this address space may come and go)
		 */
		if (module_refcnt() > base_refcnt + (want_active - base_active)) {
			printf("# %s: fault %d left module refcnt %ld (want %ld)\n",
			       what, n, module_refcnt(),
			       base_refcnt + (want_active - base_active));
			bad++;
			break;
		}
	}
	if (n > max_n) {
		printf("# %s: still reaching fault points after %d\n", what,
		       max_n);
		bad++;
	}
	tap(!bad, "%s: %d fault points, each a clean errno", what, fired);
}

static int data_fd = -1;

static int op_open(void)
{
	int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int op_reg_status(void)
{
	return reg_status_abi(data_fd, "fi_status u32 a; char[8] s");
}

static void undo_reg_status(void)
{
	/* The index stays with data_fd: reopen it to drop it */
	close(data_fd);
	data_fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	del(data_fd, "fi_status");
}

/*
 * Unregisters under injection; a failed unregistration (it could not even
 * read its argument) leaves the bit registered, rightly: it is then undone
 * with no fault armed, and the error returned.
 */
static int unreg_or_undo(int fd, __u8 bit)
{
	int ret = unreg(fd, bit);

	if (ret) {
		fail_nth(0);
		unreg(fd, bit);
	}
	return ret;
}

/* Each remote write registration in a fresh file, closed afterwards */
static int op_reg_write(void)
{
	int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = reg(fd, "fi_write u32 a; __data_loc char[] s", 0, 1, NULL);
	if (!ret)
		ret = unreg_or_undo(fd, 1);
	close(fd);
	return ret;
}

static int op_reg_multi(void)
{
	int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = reg(fd, "fi_multi u64 a", USER_EVENT_REG_MULTI_FORMAT, 2, NULL);
	if (!ret)
		ret = unreg_or_undo(fd, 2);
	close(fd);
	return ret;
}

static int op_dyn(void)
{
	int ret = write_str(UE_DYN_FILE, "u:fi_dyn u32 a; u64 b");

	if (!ret)
		ret = write_str(UE_DYN_FILE, "!u:fi_dyn");
	return ret;
}

static int enabled_idx;

static int op_write(void)
{
	struct {
		__u32 idx;
		__u32 a;
		__u32 loc;
		char s[8];
	} rec = { enabled_idx, 7, DYN_LOC(8, 3), "hi" };
	struct iovec iov[2] = {
		{ &rec, 4 },
		{ &rec.a, sizeof(rec) - 4 },
	};

	if (writev(data_fd, iov, 2) < 0)
		return -errno;
	return 0;
}

static int op_enable(void)
{
	int ret = enable("fi_live", true);

	if (!ret)
		ret = enable("fi_live", false);
	return ret;
}

static int op_perf(void)
{
	int fd = perf_open("fi_live");

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int op_status_read(void)
{
	return active_events() < 0 ? -EIO : 0;
}

/*
 * prepare_unload 1 then 0: the files removed and made again. data_fd stays
 * open, so the module stays pinned by the removed data file throughout.
 * A failed re-creation is retried once the fault has fired (a fired
 * fault does not fire again): the files must be back either way, which
 * run() checks by reading user_events_status.
 */
static int op_prepare_unload(void)
{
	int ret = write_str(PREPARE, "1");

	if (ret)
		return ret;
	ret = write_str(PREPARE, "0");
	if (ret) {
		int again = write_str(PREPARE, "0");

		return again ? again : ret;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int ret, fd;
	long base;

	if (argc > 1)
		max_n = atoi(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = setup();
	if (ret) {
		printf("Bail out! fault injection setup: %s\n", strerror(-ret));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	data_fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	if (data_fd < 0) {
		printf("Bail out! open %s: %s\n", UE_DATA_FILE, strerror(errno));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	/* This address space's record of enablers: made now, kept */
	ret = reg(data_fd, "fi_setup u32 a", 0, 5, NULL);
	if (!ret)
		unreg(data_fd, 5);
	close(data_fd);
	data_fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	base = active_events();
	base_active = base;
	/* Reaped mm records of earlier processes drop from a work item */
	sleep(1);
	base_refcnt = module_refcnt();
	printf("# %ld events exist before the run, module refcnt %ld\n", base,
	       base_refcnt);

	run("open user_events_data", op_open, NULL, alloc_errnos, base);
	run("DIAG_IOCSREG, status page ABI, new event", op_reg_status,
	    undo_reg_status, alloc_errnos, base);
	run("DIAG_IOCSREG + DIAG_IOCSUNREG, remote write, new event",
	    op_reg_write, NULL, alloc_errnos, base);
	run("DIAG_IOCSREG + DIAG_IOCSUNREG, multi-format", op_reg_multi,
	    NULL, alloc_errnos, base);
	run("u: and !u: in dynamic_events", op_dyn, NULL, alloc_errnos, base);
	run("read user_events_status", op_status_read, NULL, alloc_errnos,
	    base);
	run("prepare_unload 1, then 0", op_prepare_unload, NULL,
	    alloc_errnos, base);

	/* DIAG_IOCSUNREG alone: the enabler set up outside injection */
	fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	ret = reg(fd, "fi_unreg u32 a", 0, 3, NULL);
	{
		int n, bad = ret != 0, fired = 0;

		for (n = 1; !bad && n <= max_n; n++) {
			fail_nth(n);
			ret = unreg(fd, 3);
			if (!fault_fired()) {
				fail_nth(0);
				bad = ret != 0;
				break;
			}
			fired++;
			if (!ret)
				ret = reg(fd, "fi_unreg u32 a", 0, 3, NULL);
			else if (ret != -ENOMEM && ret != -EFAULT)
				bad = 1;
		}
		tap(!bad, "DIAG_IOCSUNREG: %d fault points, each a clean errno",
		    fired);
	}
	close(fd);

	/* DIAG_IOCSDEL alone */
	{
		int n, bad = 0, fired = 0;

		for (n = 1; !bad && n <= max_n; n++) {
			if (write_str(UE_DYN_FILE, "u:fi_del u32 a") && n == 1)
				bad = 1;
			fail_nth(n);
			ret = del(data_fd, "fi_del");
			if (!fault_fired()) {
				fail_nth(0);
				bad = ret != 0;
				break;
			}
			fired++;
			if (ret && ret != -ENOMEM && ret != -EFAULT)
				bad = 1;
		}
		write_str(UE_DYN_FILE, "!u:fi_del");
		tap(!bad && active_events() == base,
		    "DIAG_IOCSDEL: %d fault points, each a clean errno", fired);
	}

	/* Writes, enabling and perf on a live event */
	ret = reg(data_fd, "fi_live u32 a; __data_loc char[] s", 0, 4,
		  &enabled_idx);
	if (ret) {
		tap(false, "register fi_live: %s", strerror(-ret));
	} else {
		run("enable and disable in ftrace", op_enable, NULL,
		    alloc_errnos, base + 1);
		run("perf_event_open and close", op_perf, NULL,
		    (const int[]){ ENOMEM, EFAULT, ENOENT, EINVAL, -1 },
		    base + 1);
		enable("fi_live", true);
		run("writev of a record, ftrace on", op_write, NULL,
		    alloc_errnos, base + 1);
		enable("fi_live", false);
		unreg(data_fd, 4);
	}

	close(data_fd);
	tap(active_events() == base, "nothing left: %ld events (want %ld)",
	    active_events(), base);
	return ue_tally_summary(&tally);
}
