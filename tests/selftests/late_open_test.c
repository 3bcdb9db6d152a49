// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: late opens of a removed event's files.
 *
 * An open() looks a file up first and runs its open later; nothing
 * between the two stops the event's directory from being removed. On
 * kernels without eventfs (5.10, 6.1) the late open then used the event's
 * trace_event_file after the removal freed it: an enable landing on the
 * next event, or a crash (Documentation/security.rst; tests/race/ghost_open.py
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
#define CHURN_INST UE_TRACEFS "/instances/ue_lo_churn"
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

#define MANY_INSTANCES 24

/* @n instances named ue_lo_i<k>: 0, or -errno of the first failure */
static int instances(int n, bool make)
{
	char path[128];
	int k, ret = 0;

	for (k = 0; k < n; k++) {
		snprintf(path, sizeof(path), UE_TRACEFS "/instances/ue_lo_i%d",
			 k);
		if ((make ? mkdir(path, 0755) : rmdir(path)) && !ret)
			ret = -errno;
	}
	return ret;
}


FIXTURE(late) {
	int unused;
};

FIXTURE_SETUP(late)
{
	ue_cleanup_events(PREFIX);
	rmdir(INSTANCE);
	rmdir(CHURN_INST);
}

FIXTURE_TEARDOWN(late)
{
	instances(MANY_INSTANCES, false);
	rmdir(INSTANCE);
	rmdir(CHURN_INST);
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
 * reference of the event file for it), written after B was created, or
 * reopened late through an O_PATH descriptor: every write must fail with
 * ENODEV, and B must get nothing. Two writes each: the first trigger's
 * refusal used to leave the removed file's trigger count raised, so that
 * the second (an enable_event trigger on B) attached without asking the
 * event, and B read "0*" for ever (red team red11).
 */
static int trigger_writes(struct __test_metadata *_metadata, int tfd, int i)
{
	static const char *const cmds[] = {
		"traceoff\n", "enable_event:" USER_EVENTS_SYSTEM ":" B "\n",
	};
	char buf[4096];
	int c, bad = 0;
	ssize_t n;

	for (c = 0; c < 2; c++) {
		n = write(tfd, cmds[c], strlen(cmds[c]));
		if (n >= 0 || errno != ENODEV) {
			TH_LOG("round %d, %s: write gave %zd (%s), not ENODEV",
			       i, cmds[c], n, n < 0 ? strerror(errno) : "ok");
			bad++;
		}
	}
	/* A trigger shows as "traceoff:unlimited" (the header names it too) */
	if (strstr(b_file("trigger", buf, sizeof(buf)), "traceoff:")) {
		TH_LOG("round %d: B got the trigger", i);
		bad++;
	}
	EXPECT_STREQ("0\n", b_file("enable", buf, sizeof(buf)));
	if (strcmp(buf, "0\n"))
		bad++;
	return bad;
}

TEST_F(late, trigger_written_after_delete)
{
	char path[512];
	int i, tfd, pathfd, bad = 0;

	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, create(DEL_DYN, A, NULL));
		ue_event_path(path, sizeof(path), A, "trigger");
		tfd = open(path, O_WRONLY | O_CLOEXEC);
		ASSERT_LE(0, tfd);
		pathfd = open(path, O_PATH | O_CLOEXEC);
		ASSERT_LE(0, pathfd);
		ASSERT_EQ(0, delete(DEL_DYN, A, NULL));
		ASSERT_EQ(0, create(DEL_DYN, B, NULL));

		bad += trigger_writes(_metadata, tfd, i);
		close(tfd);
		tfd = reopen(pathfd, O_WRONLY);
		if (tfd >= 0) {
			TH_LOG("round %d: A's trigger reopened late", i);
			bad += 1 + trigger_writes(_metadata, tfd, i);
			close(tfd);
		} else if (errno != ENODEV) {
			TH_LOG("round %d: late reopen: %s, not ENODEV", i,
			       strerror(errno));
			bad++;
		}
		close(pathfd);
		ASSERT_EQ(0, delete(DEL_DYN, B, NULL));
	}
	ASSERT_EQ(0, bad);
}

/*
 * An instance removed and made again while O_PATH descriptors hold A's
 * enable and trigger there (A stays): the late opens fail with ENODEV and
 * enable nothing in the new instance (a late trigger used to walk the
 * freed instance: red team red11).
 */
TEST_F_TIMEOUT(late, instance_removed_and_made_again, UE_TIMEOUT(300))
{
	char path[512], tpath[512], buf[64];
	int i, pathfd, tpathfd, wfd, bad = 0;

	ASSERT_EQ(0, create(DEL_DYN, A, NULL));
	snprintf(path, sizeof(path), INSTANCE "/events/%s/%s/enable",
		 USER_EVENTS_SYSTEM, A);
	snprintf(tpath, sizeof(tpath), INSTANCE "/events/%s/%s/trigger",
		 USER_EVENTS_SYSTEM, A);
	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, mkdir(INSTANCE, 0755));
		pathfd = open(path, O_PATH | O_CLOEXEC);
		ASSERT_LE(0, pathfd);
		tpathfd = open(tpath, O_PATH | O_CLOEXEC);
		ASSERT_LE(0, tpathfd);
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
		wfd = reopen(tpathfd, O_WRONLY);
		if (wfd >= 0) {
			static const char cmd[] = "enable_event:"
				USER_EVENTS_SYSTEM ":" A "\n";

			if (write(wfd, cmd, sizeof(cmd) - 1) > 0)
				TH_LOG("round %d: trigger written", i);
			close(wfd);
			bad++;
		} else if (errno != ENODEV) {
			TH_LOG("round %d: trigger: %s, not ENODEV", i,
			       strerror(errno));
			bad++;
		}
		close(tpathfd);
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
 * The purge event's hist file in an instance, looked up (O_PATH) before
 * the instance's removal and opened after: ENODEV, as a core event's. The
 * module used to clear the i_private of every file of a removed purge
 * directory, and 6.1.y's hist open (tracing_open_file_tr()) dereferences
 * it: an oops (Safety IV, issue 28). Debian's 5.10 has no hist files.
 */
TEST_F_TIMEOUT(late, purge_hist_reopened_after_instance_removal,
	       UE_TIMEOUT(300))
{
	static const char path[] = INSTANCE
		"/events/user_events_unload/purge/hist";
	int i, pathfd, fd, bad = 0;

	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(0, mkdir(INSTANCE, 0755));
		if (i == 0 && access(path, F_OK)) {
			ASSERT_EQ(ENOENT, errno);
			ASSERT_FALSE(ue_kernel_at_least(6, 1));
			break;
		}
		pathfd = open(path, O_PATH | O_CLOEXEC);
		ASSERT_LE(0, pathfd);
		ASSERT_EQ(0, rmdir(INSTANCE));
		fd = reopen(pathfd, O_RDONLY);
		if (fd >= 0 || (errno != ENODEV && errno != ENOENT)) {
			TH_LOG("round %d: late open gave %d (%s)", i, fd,
			       fd < 0 ? strerror(errno) : "open");
			bad++;
		}
		ue_close_fd(fd);
		close(pathfd);
	}
	ASSERT_EQ(0, bad);
}

/* An O_PATH descriptor of A's enable file in instance @k, or the top's */
static int a_enable_path(int k)
{
	char path[512];

	if (k < 0)
		ue_event_path(path, sizeof(path), A, "enable");
	else
		snprintf(path, sizeof(path),
			 UE_TRACEFS "/instances/ue_lo_i%d/events/%s/%s/enable",
			 k, USER_EVENTS_SYSTEM, A);
	return open(path, O_PATH | O_CLOEXEC);
}

/* The late open of @pathfd: 0 if it failed with ENODEV */
static int late_enodev(struct __test_metadata *_metadata, int pathfd)
{
	int fd = reopen(pathfd, O_WRONLY);

	if (fd >= 0 || errno != ENODEV) {
		TH_LOG("late open: %d (%s)", fd, fd < 0 ? strerror(errno) :
		       "opened");
		ue_close_fd(fd);
		return 1;
	}
	return 0;
}

/*
 * A created, its enable file held (O_PATH) at the top level and in
 * instance @k, A deleted: how many of the two late opens did not fail
 * with ENODEV, or -1 if a step before failed
 */
static int delete_held_a(struct __test_metadata *_metadata, int k)
{
	int top, inst, bad = -1;

	if (create(DEL_DYN, A, NULL))
		return -1;
	top = a_enable_path(-1);
	inst = a_enable_path(k);
	if (top >= 0 && inst >= 0 && !delete(DEL_DYN, A, NULL))
		bad = late_enodev(_metadata, top) +
		      late_enodev(_metadata, inst);
	ue_close_fd(top);
	ue_close_fd(inst);
	return bad;
}

/*
 * A deletion of an event with more instances than any removal before
 * (24, made after the module's last look): every directory of it is
 * kept while held (the top level's and an instance's, late opens give
 * ENODEV), and let go when closed: the module's reference count comes
 * back. Before, the kprobe's pool held 16 more than the last removal
 * met: the rest were freed while held (a WARN in event_file_put(), or
 * another event's file read), and the module was pinned for good (red
 * team of Safety IV).
 */
TEST_F_TIMEOUT(late, delete_with_many_new_instances, UE_TIMEOUT(300))
{
	long before = ue_mod_refcnt_settled(), now;
	int bad;

	ASSERT_LE(0, before);
	ASSERT_EQ(0, instances(MANY_INSTANCES, true));
	bad = delete_held_a(_metadata, 0);
	EXPECT_EQ(0, instances(MANY_INSTANCES, false));
	now = ue_mod_refcnt_wait(before, UE_BOUND_MS(2000));
	EXPECT_GE(before, now);
	ASSERT_EQ(0, bad);
}

/*
 * Instances removed back to back with 20 events of ours in each (more
 * than the pool had room for, refilled only later), one directory held:
 * the held one's late open gives ENODEV, and once everything is closed
 * and deleted the module's reference count is back. Before, the pool ran
 * dry: module references kept for good, and a WARN at the late open.
 */
TEST_F_TIMEOUT(late, back_to_back_instance_removals, UE_TIMEOUT(300))
{
	long before = ue_mod_refcnt_settled(), now;
	char cmd[64];
	int i, pathfd, bad;

	ASSERT_LE(0, before);
	for (i = 0; i < 20; i++) {
		snprintf(cmd, sizeof(cmd), "u:" PREFIX "bb%d u32 x\n", i);
		ASSERT_EQ(0, dyn_cmd(cmd));
	}
	ASSERT_EQ(0, create(DEL_DYN, A, NULL));
	ASSERT_EQ(0, instances(6, true));
	pathfd = a_enable_path(1);
	ASSERT_LE(0, pathfd);
	EXPECT_EQ(0, instances(6, false));
	bad = late_enodev(_metadata, pathfd);
	close(pathfd);
	for (i = 0; i < 20; i++) {
		snprintf(cmd, sizeof(cmd), "!u:" PREFIX "bb%d\n", i);
		EXPECT_EQ(0, dyn_cmd(cmd));
	}
	EXPECT_EQ(0, delete(DEL_DYN, A, NULL));
	now = ue_mod_refcnt_wait(before, UE_BOUND_MS(2000));
	EXPECT_GE(before, now);
	ASSERT_EQ(0, bad);
}

#define KPROBES_ENABLED "/sys/kernel/debug/kprobes/enabled"

/* Disarms and arms every kprobe until @end */
static void toggle_kprobes(time_t end)
{
	while (time(NULL) < end) {
		ue_write_file(KPROBES_ENABLED, "0", false);
		ue_write_file(KPROBES_ENABLED, "1", false);
	}
	_exit(0);
}

/*
 * Deletions while root disarms and arms kprobes over and over: each
 * deletion still keeps its held directories (a late open gives ENODEV),
 * since the module finds them itself. Before, a deletion the kprobe
 * missed in part freed a held file: a WARN at the late open (red team).
 */
TEST_F_TIMEOUT(late, kprobes_toggled_during_deletions, UE_TIMEOUT(300))
{
	time_t end = time(NULL) + 3600;
	int i, n, status, bad = 0;
	pid_t pid;

	ASSERT_EQ(0, instances(4, true));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		toggle_kprobes(end);
	for (i = 0; i < ROUNDS; i++) {
		n = delete_held_a(_metadata, i % 4);
		EXPECT_LE(0, n);
		bad += n;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	EXPECT_EQ(0, ue_write_file(KPROBES_ENABLED, "1", false));
	EXPECT_EQ(0, instances(4, false));
	ASSERT_EQ(0, bad);
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
	int pathfd;

	before = ue_mod_refcnt_settled();
	ASSERT_LE(0, before);
	ASSERT_EQ(0, create(DEL_DYN, A, NULL));
	pathfd = open(ue_event_path(path, sizeof(path), A, "enable"),
		      O_PATH | O_CLOEXEC);
	ASSERT_LE(0, pathfd);
	ASSERT_EQ(0, delete(DEL_DYN, A, NULL));
	held = ue_mod_refcnt();
	/* Kept before eventfs (the event's memory holds the module) */
	EXPECT_EQ(before + !ue_kernel_at_least(6, 6), held);
	close(pathfd);
	now = ue_mod_refcnt_wait(before, UE_BOUND_MS(1000));
	TH_LOG("module references: %ld before, %ld held, %ld after", before,
	       held, now);
	ASSERT_GE(before, now);
}

/* Seconds of instance_churn_opens_every_file: $UE_CHURN_S, else 60 */
static int churn_seconds(void)
{
	const char *env = getenv("UE_CHURN_S");
	int s = env ? atoi(env) : 0;

	return s > 0 ? s : 60;
}

/* Makes and removes the instance until @end (the child of the churn) */
static void churn_instances(time_t end)
{
	while (time(NULL) < end) {
		mkdir(CHURN_INST, 0755);
		rmdir(CHURN_INST);
	}
	_exit(0);
}

/* An errno a late open or read of a removed file may give */
static bool churn_errno_ok(int err)
{
	return err == ENOENT || err == ENODEV;
}

/*
 * Opens @path (late, through an O_PATH descriptor, every other round)
 * and reads it; 0, or 1 for an error other than ENOENT or ENODEV
 */
static int churn_open(const char *path, bool late)
{
	bool wronly = strstr(path, "/inject") != NULL;
	int flags = wronly ? O_WRONLY : O_RDONLY;
	char buf[4096];
	int fd, pathfd;

	if (late) {
		pathfd = open(path, O_PATH | O_CLOEXEC);
		if (pathfd < 0)
			return !churn_errno_ok(errno);
		fd = reopen(pathfd, flags);
		close(pathfd);
	} else {
		fd = open(path, flags | O_CLOEXEC);
	}
	if (fd < 0)
		return !churn_errno_ok(errno);
	if (!wronly && read(fd, buf, sizeof(buf)) < 0 &&
	    !churn_errno_ok(errno)) {
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}

/*
 * Root's ordinary tracefs work racing the module's removed directories:
 * one process makes and removes an instance as fast as it can, another
 * opens (now, or late through an O_PATH descriptor), reads and closes
 * every file of a user event's directory and of the purge event's there,
 * as a monitoring script reading every instance's files would. Every open
 * and read works or fails with ENOENT or ENODEV, and the kernel neither
 * oopses nor WARNs (the runner checks the log). Before, the purge event's
 * hist file oopsed 6.1 within seconds (a NULL i_private, Safety IV).
 */
TEST_F_TIMEOUT(late, instance_churn_opens_every_file, UE_TIMEOUT(600))
{
	static const char *const dirs[] = {
		CHURN_INST "/events/" USER_EVENTS_SYSTEM "/" A,
		CHURN_INST "/events/user_events_unload/purge",
	};
	static const char *const files[] = {
		"enable", "filter", "trigger", "format", "id", "hist",
		"hist_debug", "inject",
	};
	time_t end = time(NULL) + churn_seconds();
	unsigned long opens = 0, bad = 0;
	unsigned int d, f;
	char path[512];
	int status;
	pid_t pid;

	ASSERT_EQ(0, create(DEL_DYN, A, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		churn_instances(end);
	while (time(NULL) < end) {
		for (d = 0; d < ARRAY_SIZE(dirs); d++) {
			for (f = 0; f < ARRAY_SIZE(files); f++) {
				snprintf(path, sizeof(path), "%s/%s", dirs[d],
					 files[f]);
				if (churn_open(path, opens & 1) && bad++ < 5)
					TH_LOG("%s: %s", path, strerror(errno));
				opens++;
			}
		}
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	rmdir(CHURN_INST);
	TH_LOG("%lu opens, %lu unexpected errors", opens, bad);
	EXPECT_EQ(0UL, bad);
	EXPECT_EQ(0, delete(DEL_DYN, A, NULL));
}

TEST_HARNESS_MAIN
