// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: an event's probes array (the ftrace event
 * files attached to it, trace_events_user.c, user_event_probe_file()).
 *
 * A detach waits for no RCU grace period under event_mutex: disabling
 * 1,000 enabled events through events/user_events/enable must not call
 * synchronize_rcu() 1,000 times (it did, once per event, each a grace
 * period under the lock every tracing operation needs). The calls are
 * counted by a perf kprobe counter on synchronize_rcu for this thread
 * only (the disable runs in the writer of the enable file), so nothing
 * else on the machine moves it; no clock is read.
 *
 * And attaching and detaching one event in several instances, in
 * changing orders, sends each record to exactly the instances enabled
 * (the arrays a detach publishes come from spares made at attach).
 *
 * Every event made here is named "ue_p_*"; instances are "ue_p_*" too.
 */
#define _GNU_SOURCE
#include <linux/membarrier.h>

#include "ue_test.h"

#define PREFIX "ue_p_"
#define NR_EVENTS 1000
/* synchronize_rcu() calls allowed for the whole disable, whatever N */
#define MAX_SYNC_CALLS 8
#define NR_INST 3

FIXTURE(probes) {
	int fd;
};

FIXTURE_SETUP(probes)
{
	self->fd = -1;
	ASSERT_EQ(0, ue_trace_clear());
}

static void inst_path(char *buf, size_t size, int inst);
static int inst_enable(int inst, const char *name, bool on);

FIXTURE_TEARDOWN(probes)
{
	char dir[256];
	int i;

	for (i = 0; i < NR_INST; i++) {
		inst_path(dir, sizeof(dir), i);
		inst_enable(i, PREFIX "multi", false);
		rmdir(dir);
	}
	if (self->fd >= 0)
		close(self->fd);
	ue_write_file(UE_EVENTS_DIR "/enable", "0\n", false);
	ue_delete_prefix(PREFIX);
}

static int dyn_cmd(const char *cmd)
{
	return ue_write_file(UE_TRACEFS "/dynamic_events", cmd, false);
}

static void delete_many(int n)
{
	char cmd[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "!u:" PREFIX "%d\n", i);
		dyn_cmd(cmd);
	}
}

static __u64 counter_read(struct __test_metadata *_metadata, int fd)
{
	__u64 count = 0;

	EXPECT_EQ((ssize_t)sizeof(count), read(fd, &count, sizeof(count)));
	return count;
}

TEST_F_TIMEOUT(probes, disable_many_waits_no_grace_period, UE_TIMEOUT(600))
{
	char cmd[128], name[64];
	__u64 before, after;
	int fd, i, ret;

	ue_write_file(UE_EVENTS_DIR "/enable", "0\n", false);
	delete_many(NR_EVENTS);
	for (i = 0; i < NR_EVENTS; i++) {
		snprintf(cmd, sizeof(cmd), "u:" PREFIX "%d u32 a\n", i);
		ASSERT_EQ(0, dyn_cmd(cmd));
		snprintf(name, sizeof(name), PREFIX "%d", i);
		ASSERT_EQ(0, ue_enable(name, true));
	}

	fd = ue_kprobe_open("synchronize_rcu", 0, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("kprobe on synchronize_rcu: %s", strerror(-fd));

	/* The counter sees this thread's calls: membarrier() makes one */
	before = counter_read(_metadata, fd);
	ret = syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	after = counter_read(_metadata, fd);
	if (!ret && sysconf(_SC_NPROCESSORS_ONLN) > 1)
		ASSERT_LE(before + 1, after);

	before = counter_read(_metadata, fd);
	ret = ue_write_file(UE_EVENTS_DIR "/enable", "0\n", false);
	after = counter_read(_metadata, fd);
	close(fd);
	ASSERT_EQ(0, ret);
	TH_LOG("disabling %d events: %llu synchronize_rcu() calls",
	       NR_EVENTS, (unsigned long long)(after - before));

	/* Each was detached */
	for (i = 0; i < NR_EVENTS; i += NR_EVENTS / 10) {
		char path[512], buf[16];

		snprintf(name, sizeof(name), PREFIX "%d", i);
		ASSERT_LT(0, ue_read_file(ue_event_path(path, sizeof(path),
							name, "enable"),
					  buf, sizeof(buf)));
		ASSERT_EQ('0', buf[0]);
	}

	EXPECT_GE((__u64)MAX_SYNC_CALLS, after - before);

	delete_many(NR_EVENTS);
	EXPECT_FALSE(ue_event_exists(PREFIX "0"));
}

/* --- one event in several instances -------------------------------------- */

static void inst_path(char *buf, size_t size, int inst)
{
	if (inst < 0)
		snprintf(buf, size, UE_TRACEFS);
	else
		snprintf(buf, size, UE_TRACEFS "/instances/" PREFIX "i%d_%d",
			 inst, getpid());
}

/* inst -1 is the top level */
static int inst_enable(int inst, const char *name, bool on)
{
	char dir[256], path[512];

	inst_path(dir, sizeof(dir), inst);
	snprintf(path, sizeof(path), "%s/events/user_events/%s/enable", dir,
		 name);
	return ue_write_file(path, on ? "1\n" : "0\n", false);
}

static int inst_count(int inst, const char *name)
{
	char dir[256], path[512], needle[128];
	static char lines[64][UE_LINE_MAX];

	inst_path(dir, sizeof(dir), inst);
	snprintf(path, sizeof(path), "%s/trace", dir);
	snprintf(needle, sizeof(needle), ": %s: ", name);
	return ue_file_lines(path, needle, lines, 64);
}

/*
 * Sets the event's enable in the top level (bit 0) and in each instance
 * (bit i + 1) to @mask, writes one record, and checks that every enabled
 * place got it (@count records so far per place) and no other.
 */
static void step(struct __test_metadata *_metadata, int fd, int w,
		 const char *name, unsigned int mask, int count[])
{
	struct {
		int idx;
		__u32 a;
	} __attribute__((packed)) rec = { w, mask };
	int i;

	for (i = -1; i < NR_INST; i++)
		ASSERT_EQ(0, inst_enable(i, name, mask & (1u << (i + 1))));

	ASSERT_EQ((ssize_t)sizeof(rec), write(fd, &rec, sizeof(rec)));
	for (i = -1; i < NR_INST; i++) {
		if (mask & (1u << (i + 1)))
			count[i + 1]++;
		ASSERT_EQ(count[i + 1], inst_count(i, name))
			TH_LOG("mask %#x, place %d", mask, i);
	}
}

TEST_F(probes, attach_detach_across_instances)
{
	const char *name = PREFIX "multi";
	/* Top level, then instances 0..2, in orders that pop and push spares */
	static const unsigned int masks[] = {
		0x1, 0x3, 0x7, 0xf, 0xd, 0x9, 0x8, 0xe, 0xf, 0x6, 0x4, 0x5,
		0xf, 0x1, 0xa, 0x2, 0xf,
	};
	int count[NR_INST + 1] = { 0 };
	char dir[256];
	int w = -1;
	unsigned int k;
	int i;

	for (i = 0; i < NR_INST; i++) {
		inst_path(dir, sizeof(dir), i);
		rmdir(dir);
		ASSERT_EQ(0, mkdir(dir, 0755));
	}
	self->fd = ue_open_data();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "multi u32 a", NULL, &w));

	for (k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		step(_metadata, self->fd, w, name, masks[k], count);
		if (_metadata->exit_code)
			break;
	}

	for (i = -1; i < NR_INST; i++)
		inst_enable(i, name, false);
	for (i = 0; i < NR_INST; i++) {
		inst_path(dir, sizeof(dir), i);
		EXPECT_EQ(0, rmdir(dir));
	}
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, ue_del(name));
}

TEST_HARNESS_MAIN
