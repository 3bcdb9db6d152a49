// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: late opens of a removed event's files.
 *
 * An open() looks a file up first and runs its open later; nothing
 * between the two stops the event's directory from being removed. On
 * kernels without eventfs (5.10, 6.1) the late open then used the event's
 * trace_event_file after the removal freed it: an enable landing on the
 * next event, or a crash (Documentation/security.rst; race/ghost_open.py
 * measured it). An O_PATH descriptor holds the dentry without opening the
 * file, so reopening it through /proc/self/fd after the removal is the
 * late open, made deterministic. What it must give is what 6.12 gives:
 * ENODEV, with the next event untouched. The module keeps a removed
 * directory's event file until nobody holds the directory, and lets go of
 * it (and of the module) when the last holder goes.
 *
 * Every event created here is named "ue_lo_*" and is deleted again at the
 * end.
 */
#define _GNU_SOURCE
#include "ue_test.h"

#define PREFIX "ue_lo_"
#define A PREFIX "a"
#define B PREFIX "b"
#define INSTANCE UE_TRACEFS "/instances/ue_lo"
#define ROUNDS 20

/* How an event goes away in a round */
enum late_del { DEL_DYN, DEL_IOCTL };

static int dyn_cmd(const char *cmd)
{
	return ue_write_file(UE_TRACEFS "/dynamic_events", cmd, false);
}

/*
 * Creates @name (u32 x): through dynamic_events (DEL_DYN), or registered
 * on a data file of its own, kept in *@fd (DEL_IOCTL: deleted with
 * DIAG_IOCSDEL once that file is closed, as a member of the granted group
 * can). 0 or -errno.
 */
static int create(enum late_del how, const char *name, int *fd)
{
	char cmd[128];
	int ret;

	if (how == DEL_IOCTL) {
		snprintf(cmd, sizeof(cmd), "%s u32 x", name);
		*fd = ue_open_data();
		if (*fd < 0)
			return -errno;
		ret = ue_reg(*fd, cmd, NULL, NULL);
		if (ret) {
			close(*fd);
			*fd = -1;
		}
		return ret;
	}
	snprintf(cmd, sizeof(cmd), "u:%s u32 x\n", name);
	return dyn_cmd(cmd);
}

static int delete(enum late_del how, const char *name, int *fd)
{
	char cmd[128];

	if (how == DEL_IOCTL) {
		close(*fd);
		*fd = -1;
		return ue_del(name);
	}
	snprintf(cmd, sizeof(cmd), "!u:%s\n", name);
	return dyn_cmd(cmd);
}

static int reopen(int pathfd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", pathfd);
	return open(path, flags | O_CLOEXEC);
}

/* Contents of B's file @file, "" if unreadable */
static const char *b_file(const char *file, char *buf, size_t size)
{
	char path[512];

	if (ue_read_file(ue_event_path(path, sizeof(path), B, file), buf,
			 size) < 0)
		buf[0] = '\0';
	return buf;
}

/* The module's reference count, or -1 */
static long mod_refcnt(void)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", ue_mod_name());
	if (ue_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

FIXTURE(late) {
	int unused;
};

FIXTURE_SETUP(late)
{
	ue_cleanup_events(PREFIX);
	rmdir(INSTANCE);
}

FIXTURE_TEARDOWN(late)
{
	rmdir(INSTANCE);
	ue_cleanup_events(PREFIX);
}

/*
 * One round: A's enable held by O_PATH, A deleted, B created (it may take
 * A's freed file), A's enable reopened for writing and "1" written.
 * Returns 0 if the reopen failed with ENODEV and B stayed disabled.
 */
static int enable_round(struct __test_metadata *_metadata, enum late_del how)
{
	char path[512], buf[64];
	int pathfd, wfd, afd = -1, bfd = -1, err = 0;

	EXPECT_EQ(0, create(how, A, &afd));
	pathfd = open(ue_event_path(path, sizeof(path), A, "enable"),
		      O_PATH | O_CLOEXEC);
	EXPECT_LE(0, pathfd);
	if (pathfd < 0)
		return -1;
	EXPECT_EQ(0, delete(how, A, &afd));
	EXPECT_EQ(0, create(how, B, &bfd));

	wfd = reopen(pathfd, O_WRONLY);
	if (wfd >= 0) {
		TH_LOG("A's enable reopened after A's deletion");
		if (write(wfd, "1\n", 2) == 2)
			TH_LOG("and written: B's enable reads %s",
			       b_file("enable", buf, sizeof(buf)));
		close(wfd);
		err = -1;
	} else if (errno != ENODEV) {
		TH_LOG("reopen: %s, not ENODEV", strerror(errno));
		err = -1;
	}
	EXPECT_STREQ("0\n", b_file("enable", buf, sizeof(buf)));
	if (strcmp(buf, "0\n"))
		err = -1;

	close(pathfd);
	ue_enable(B, false);
	EXPECT_EQ(0, delete(how, B, &bfd));
	return err;
}

/* As root through dynamic_events, and through DIAG_IOCSDEL */
TEST_F(late, enable_reopened_after_delete)
{
	static const char *const names[] = { "!u:", "DIAG_IOCSDEL" };
	int how, i, bad;

	for (how = DEL_DYN; how <= DEL_IOCTL; how++) {
		bad = 0;
		for (i = 0; i < ROUNDS; i++)
			bad += enable_round(_metadata, how) != 0;
		TH_LOG("%s: %d of %d late opens did not fail with ENODEV",
		       names[how], bad, ROUNDS);
		EXPECT_EQ(0, bad);
	}
}

/*
 * A trigger file opened before the deletion (a real open: 6.1 takes no
 * reference of the event file for it), written after B was created: the
 * write must fail, and B must not get the trigger. The event refuses the
 * registration with ENODEV; 5.10's trigger parser reports any refused
 * registration as ENOENT ("no function enabled"), 6.1's passes it on.
 */
TEST_F(late, trigger_written_after_delete)
{
	int want = ue_kernel_at_least(6, 1) ? ENODEV : ENOENT;
	char path[512], buf[4096];
	int i, tfd, bad = 0;
	ssize_t n;

	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, create(DEL_DYN, A, NULL));
		tfd = open(ue_event_path(path, sizeof(path), A, "trigger"),
			   O_WRONLY | O_CLOEXEC);
		ASSERT_LE(0, tfd);
		ASSERT_EQ(0, delete(DEL_DYN, A, NULL));
		ASSERT_EQ(0, create(DEL_DYN, B, NULL));

		n = write(tfd, "traceoff\n", 9);
		if (n >= 0 || errno != want) {
			TH_LOG("round %d: write gave %zd (%s), not %s", i, n,
			       n < 0 ? strerror(errno) : "no error",
			       strerror(want));
			bad++;
		}
		close(tfd);
		b_file("trigger", buf, sizeof(buf));
		/* A trigger shows as "traceoff:unlimited" (the header names it too) */
		if (strstr(buf, "traceoff:")) {
			TH_LOG("round %d: B got the trigger", i);
			bad++;
			ue_write_file(ue_event_path(path, sizeof(path), B,
						    "trigger"),
				      "!traceoff\n", false);
		}
		ASSERT_EQ(0, delete(DEL_DYN, B, NULL));
	}
	ASSERT_EQ(0, bad);
}

/*
 * An instance removed and made again while an O_PATH descriptor holds
 * A's enable there (A stays): the late open fails with ENODEV and enables
 * nothing in the new instance.
 */
TEST_F(late, instance_removed_and_made_again)
{
	char path[512], buf[64];
	int i, pathfd, wfd, bad = 0;

	ASSERT_EQ(0, create(DEL_DYN, A, NULL));
	snprintf(path, sizeof(path), INSTANCE "/events/%s/%s/enable",
		 USER_EVENTS_SYSTEM, A);
	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, mkdir(INSTANCE, 0755));
		pathfd = open(path, O_PATH | O_CLOEXEC);
		ASSERT_LE(0, pathfd);
		ASSERT_EQ(0, rmdir(INSTANCE));
		ASSERT_EQ(0, mkdir(INSTANCE, 0755));

		wfd = reopen(pathfd, O_WRONLY);
		if (wfd >= 0) {
			if (write(wfd, "1\n", 2) == 2)
				TH_LOG("round %d: written", i);
			close(wfd);
			bad++;
		} else if (errno != ENODEV) {
			TH_LOG("round %d: %s, not ENODEV", i, strerror(errno));
			bad++;
		}
		close(pathfd);
		ASSERT_LT(0, ue_read_file(path, buf, sizeof(buf)));
		if (strcmp(buf, "0\n")) {
			TH_LOG("round %d: the new instance's enable reads %s",
			       i, buf);
			bad++;
		}
		ASSERT_EQ(0, rmdir(INSTANCE));
	}
	ASSERT_EQ(0, bad);
	ASSERT_EQ(0, delete(DEL_DYN, A, NULL));
}

/*
 * What a held directory keeps goes when its holder does: the module's
 * reference count is back where it was within a second of the last
 * close, and the module then unloads (the runner checks that at the end).
 */
TEST_F(late, held_directory_let_go_at_close)
{
	char path[512];
	long before, held = -1, now = -1;
	int i, pathfd;

	before = mod_refcnt();
	ASSERT_LE(0, before);
	ASSERT_EQ(0, create(DEL_DYN, A, NULL));
	pathfd = open(ue_event_path(path, sizeof(path), A, "enable"),
		      O_PATH | O_CLOEXEC);
	ASSERT_LE(0, pathfd);
	ASSERT_EQ(0, delete(DEL_DYN, A, NULL));
	held = mod_refcnt();
	/* Kept before eventfs (the event's memory holds the module) */
	EXPECT_EQ(before + !ue_kernel_at_least(6, 6), held);
	close(pathfd);
	for (i = 0; i < UE_BOUND_MS(1000) / 10; i++) {
		now = mod_refcnt();
		if (now == before)
			break;
		ue_sleep_ms(10);
	}
	TH_LOG("module references: %ld before, %ld held, %ld after", before,
	       held, now);
	ASSERT_EQ(before, now);
}

TEST_HARNESS_MAIN
