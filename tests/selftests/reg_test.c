// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: registration through DIAG_IOCSREG with the
 * status page ABI (struct user_status_reg, size 24) and deletion through
 * DIAG_IOCSDEL.
 *
 * Every event created here is named "ue_r_*" or "ue_fill_*" and is
 * deleted again by the fixture teardown.
 */
#include <sys/mman.h>

#include "ue_test.h"

#define PREFIX "ue_r_"

FIXTURE(reg) {
	int fd;
	int fd2;
};

FIXTURE_SETUP(reg)
{
	self->fd2 = -1;
	UE_ASSERT_OPEN_DATA(self->fd);
}

FIXTURE_TEARDOWN(reg)
{
	ue_fds_teardown(_metadata, self->fd, self->fd2, PREFIX);
	EXPECT_EQ(0, ue_delete_prefix("ue_fill_"));
}

/* desc registers on fd at status index s_want and write index w_want */
#define ASSERT_REG_AT(fd, desc, s_want, w_want) do {			\
	int __s = -1, __w = -1;						\
									\
	ASSERT_EQ(0, ue_reg((fd), (desc), &__s, &__w));		\
	ASSERT_EQ((s_want), __s);					\
	ASSERT_EQ((w_want), __w);					\
} while (0)

/* Raw DIAG_IOCSREG with an arbitrary size; returns 0 or -errno */
static int reg_size(int fd, __u32 size, const void *name_args)
{
	/* Big enough for every size tried, zero beyond struct user_reg */
	static char buf[8192] __attribute__((aligned(8)));
	struct user_reg *reg = (struct user_reg *)buf;

	memset(buf, 0, sizeof(buf));
	reg->size = size;
	reg->name_args = (__u64)(uintptr_t)name_args;

	if (ioctl(fd, DIAG_IOCSREG, buf) < 0)
		return -errno;

	return 0;
}

/* The status page ABI's registration struct is 24 bytes */
static_assert(sizeof(struct user_reg) == 24, "struct user_reg");
static_assert(sizeof(struct user_status_reg) == 24, "struct user_status_reg");
static_assert(sizeof(struct user_status_reg) == USER_STATUS_REG_SIZE,
	      "USER_STATUS_REG_SIZE");

TEST_F(reg, first_event_indexes)
{
	int sidx = -1, widx = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "first u32 a", &sidx, &widx));
	ASSERT_LE(1, sidx);
	ASSERT_GE(UE_STATUS_SLOTS, sidx);
	ASSERT_EQ(0, widx);
	ASSERT_TRUE(ue_event_exists(PREFIX "first"));
}

TEST_F(reg, write_index_per_fd)
{
	int sa = -1, wa = -1, sb = -1, wb = -1, sc = -1, wc = -1, s = -1, w = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "a u32 a", &sa, &wa));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "b u64 b", &sb, &wb));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "c", &sc, &wc));

	/* write_index counts up in order of first registration on the fd */
	ASSERT_EQ(0, wa);
	ASSERT_EQ(1, wb);
	ASSERT_EQ(2, wc);

	/* Every event has its own status byte, never byte 0 */
	ASSERT_LE(1, sa);
	ASSERT_LE(1, sb);
	ASSERT_LE(1, sc);
	ASSERT_GE(UE_STATUS_SLOTS, sa);
	ASSERT_GE(UE_STATUS_SLOTS, sb);
	ASSERT_GE(UE_STATUS_SLOTS, sc);
	ASSERT_NE(sa, sb);
	ASSERT_NE(sa, sc);
	ASSERT_NE(sb, sc);

	/* Same name and fields on the same fd: same indexes */
	ASSERT_REG_AT(self->fd, PREFIX "b u64 b", sb, 1);
	ASSERT_REG_AT(self->fd, PREFIX "a u32 a", sa, 0);
	ASSERT_REG_AT(self->fd, PREFIX "c", sc, 2);

	/* A new event after the repeats still gets the next index */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "d s8 d", &s, &w));
	ASSERT_EQ(3, w);

	/* Another fd: same status bytes, its own write indexes from 0 */
	UE_ASSERT_OPEN_DATA(self->fd2);
	ASSERT_REG_AT(self->fd2, PREFIX "c", sc, 0);
	ASSERT_REG_AT(self->fd2, PREFIX "a u32 a", sa, 1);
	ASSERT_REG_AT(self->fd2, PREFIX "c", sc, 0);

	/* The first fd is not affected by the second */
	ASSERT_REG_AT(self->fd, PREFIX "c", sc, 2);
}

TEST_F(reg, same_fields_other_spacing)
{
	int s1 = -1, w1 = -1, s2 = -1, w2 = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "sp u32 a;u64 b", &s1, &w1));
	/* Spaces after ';' are allowed and describe the same fields */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "sp u32 a; u64 b", &s2, &w2));
	ASSERT_EQ(s1, s2);
	ASSERT_EQ(w1, w2);
	ASSERT_EQ(0, w1);
}

TEST_F(reg, different_fields_eaddrinuse)
{
	int s = -1, w = -1, s2 = -1, w2 = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "x u32 a", &s, &w));

	ASSERT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "x u64 a", NULL, NULL));
	ASSERT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "x s32 a", NULL, NULL));
	ASSERT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "x u32 b", NULL, NULL));
	ASSERT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "x u32 a;u32 b", NULL, NULL));
	ASSERT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "x", NULL, NULL));

	/* Also from another fd */
	UE_ASSERT_OPEN_DATA(self->fd2);
	ASSERT_EQ(-EADDRINUSE, ue_reg(self->fd2, PREFIX "x u64 a", NULL, NULL));

	/* The failures handed out no write index on either fd */
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "x u32 a", &s2, &w2));
	ASSERT_EQ(s, s2);
	ASSERT_EQ(0, w2);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "y", NULL, &w2));
	ASSERT_EQ(1, w2);

	/* The event persists after every fd is closed: still in use */
	close(self->fd);
	close(self->fd2);
	self->fd = ue_open_data();
	self->fd2 = -1;
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "x u64 a", NULL, NULL));
	ue_drop_fd(&self->fd);

	/* After deletion the name can be used with other fields */
	ASSERT_EQ(0, ue_del(PREFIX "x"));
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "x u64 a", NULL, &w));
	ASSERT_EQ(0, w);
}

TEST_F(reg, bad_sizes)
{
	const char *desc = PREFIX "size u32 a";
	static const __u32 einval[] = { 0, 1, 4, 8, 16, 20, 23, 25, 26, 27 };
	unsigned int i;

	for (i = 0; i < sizeof(einval) / sizeof(einval[0]); i++) {
		EXPECT_EQ(-EINVAL, reg_size(self->fd, einval[i], desc)) {
			TH_LOG("size %u", einval[i]);
		}
	}

	ASSERT_EQ(-E2BIG, reg_size(self->fd, 4097, desc));
	ASSERT_EQ(-E2BIG, reg_size(self->fd, 8192, desc));
	ASSERT_EQ(-E2BIG, reg_size(self->fd, 0xffffffff, desc));

	/* None of them created the event */
	ASSERT_FALSE(ue_event_exists(PREFIX "size"));

	/* The right size works with the same buffer */
	ASSERT_EQ(0, reg_size(self->fd, 24, desc));
	ASSERT_TRUE(ue_event_exists(PREFIX "size"));
}

TEST_F(reg, bad_name_args_efault)
{
	long page = sysconf(_SC_PAGESIZE);
	const char *tail = PREFIX "fault";
	char *map;

	ASSERT_EQ(-EFAULT, ue_reg(self->fd, NULL, NULL, NULL));
	ASSERT_EQ(-EFAULT, ue_reg(self->fd, (const char *)1, NULL, NULL));

	/* An unmapped page */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + page, page));
	ASSERT_EQ(-EFAULT, ue_reg(self->fd, map + page, NULL, NULL));

	/* A string running into the unmapped page without a NUL */
	memcpy(map + page - strlen(tail), tail, strlen(tail));
	ASSERT_EQ(-EFAULT, ue_reg(self->fd, map + page - strlen(tail), NULL, NULL));
	ASSERT_FALSE(ue_event_exists(tail));

	/* A PROT_NONE page */
	ASSERT_EQ(0, mprotect(map, page, PROT_NONE));
	ASSERT_EQ(-EFAULT, ue_reg(self->fd, map, NULL, NULL));
	munmap(map, page);
}

/* Build "<name> u8 f0;u8 f1;..." of exactly len characters */
static char *desc_of_len(const char *name, size_t len)
{
	char *desc = malloc(len + 64);
	size_t pos, i;

	if (!desc)
		return NULL;

	pos = sprintf(desc, "%s u8 f0", name);
	for (i = 1; pos + 9 <= len; i++)
		pos += sprintf(desc + pos, ";u8 f%03zu", i);
	/* Pad the last field's name with '_' to the exact length */
	while (pos < len)
		desc[pos++] = '_';
	desc[pos] = '\0';

	return desc;
}

TEST_F(reg, bad_descriptors_einval)
{
	static const char *const bad[] = {
		"",				/* empty */
		":BPF_ITER",			/* empty name with a flag */
		" u32 a",			/* empty name with a field */
		PREFIX "bad1 u128 a",		/* unknown type */
		PREFIX "bad2 unsigned long a",	/* unknown type */
		PREFIX "bad3 u32",		/* missing field name */
		PREFIX "bad4 u32 a;u32",	/* missing second field name */
		PREFIX "bad5 u32 a;u32 a",	/* duplicate field name */
		PREFIX "bad6 char[0] a",	/* bad array size */
		PREFIX "bad7 char[abc] a",	/* bad array size */
		PREFIX "bad8 char[] a",		/* bad array size */
		PREFIX "bad9:NOPE u32 a",	/* unknown flag */
		PREFIX "bad10:BPF_ITER,NOPE",	/* unknown flag after a known one */
		"ue-r-bad11 u32 a",		/* bad name characters */
		"ue.r.bad12",
		"ue_r_bad13$",
		"ue_r_b\xc3\xa4" "d14",
	};
	char name[UE_NAME_MAX + 2];
	char *desc;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, ue_reg(self->fd, bad[i], NULL, NULL)) {
			TH_LOG("descriptor \"%s\"", bad[i]);
		}
	}
	for (i = 1; i <= 10; i++) {
		snprintf(name, sizeof(name), PREFIX "bad%u", i);
		EXPECT_FALSE(ue_event_exists(name)) {
			TH_LOG("%s was created", name);
		}
	}

	/* Name of 256 characters */
	memset(name, 'n', UE_NAME_MAX + 1);
	memcpy(name, PREFIX, strlen(PREFIX));
	name[UE_NAME_MAX + 1] = '\0';
	ASSERT_EQ(-EINVAL, ue_reg(self->fd, name, NULL, NULL));

	/* Descriptors of 512 and 600 characters (otherwise valid) */
	desc = desc_of_len(PREFIX "long512", UE_DESC_MAX + 1);
	ASSERT_NE(NULL, desc);
	ASSERT_EQ(UE_DESC_MAX + 1, (int)strlen(desc));
	EXPECT_EQ(-EINVAL, ue_reg(self->fd, desc, NULL, NULL));
	free(desc);
	EXPECT_FALSE(ue_event_exists(PREFIX "long512"));

	desc = desc_of_len(PREFIX "long600", 600);
	ASSERT_NE(NULL, desc);
	ASSERT_EQ(600, (int)strlen(desc));
	EXPECT_EQ(-EINVAL, ue_reg(self->fd, desc, NULL, NULL));
	free(desc);
	EXPECT_FALSE(ue_event_exists(PREFIX "long600"));

	/* Nothing got a write index: the next event gets 0 */
	int w = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "good", NULL, &w));
	ASSERT_EQ(0, w);
}

TEST_F(reg, longest_name_and_descriptor)
{
	char name[UE_NAME_MAX + 1];
	char *desc;
	int w = -1;

	/* Name of exactly 255 characters */
	memset(name, 'n', UE_NAME_MAX);
	memcpy(name, PREFIX, strlen(PREFIX));
	name[UE_NAME_MAX] = '\0';
	ASSERT_EQ(0, ue_reg(self->fd, name, NULL, &w));
	ASSERT_EQ(0, w);
	ASSERT_TRUE(ue_event_exists(name));

	/* Descriptor of exactly 511 characters */
	desc = desc_of_len(PREFIX "long511", UE_DESC_MAX);
	ASSERT_NE(NULL, desc);
	ASSERT_EQ(UE_DESC_MAX, (int)strlen(desc));
	EXPECT_EQ(0, ue_reg(self->fd, desc, NULL, &w));
	free(desc);
	EXPECT_EQ(1, w);
	EXPECT_TRUE(ue_event_exists(PREFIX "long511"));
}

TEST_F(reg, all_types_accepted)
{
	static const char *const types[] = {
		"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
		"int", "unsigned int", "short", "unsigned short",
		"char", "unsigned char", "char[1]", "char[20]",
		"unsigned char[1]", "unsigned char[16]",
	};
	char desc[128], name[64];
	unsigned int i;
	int w = -1;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		snprintf(name, sizeof(name), PREFIX "type%u", i);
		snprintf(desc, sizeof(desc), "%s %s f", name, types[i]);
		EXPECT_EQ(0, ue_reg(self->fd, desc, NULL, &w)) {
			TH_LOG("descriptor \"%s\"", desc);
		}
		EXPECT_EQ((int)i, w);
		EXPECT_TRUE(ue_event_exists(name)) {
			TH_LOG("no directory for \"%s\"", desc);
		}
	}

	/* All of them in one event */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "alltypes u8 a;u16 b;u32 c;u64 d;"
			    "s8 e;s16 f;s32 g;s64 h;int i;unsigned int j;short k;"
			    "unsigned short l;char m;unsigned char n;char[4] o;"
			    "unsigned char[4] p", NULL, NULL));
	ASSERT_TRUE(ue_event_exists(PREFIX "alltypes"));

	/* An event without fields, and the BPF_ITER flag */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "nofields", NULL, NULL));
	ASSERT_TRUE(ue_event_exists(PREFIX "nofields"));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "flag:BPF_ITER u32 a", NULL, NULL));
	ASSERT_TRUE(ue_event_exists(PREFIX "flag"));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "flag2:BPF_ITER", NULL, NULL));
	ASSERT_TRUE(ue_event_exists(PREFIX "flag2"));
}

TEST_F(reg, delete_unknown_enoent)
{
	ASSERT_EQ(-ENOENT, ue_del_fd(self->fd, PREFIX "never_registered"));
	ASSERT_EQ(-EFAULT, ue_del_fd(self->fd, NULL));
}

TEST_F(reg, delete_busy_while_open)
{
	int s = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "del u32 a", &s, NULL));

	/* Registered on an open fd: busy, from that fd and from another */
	ASSERT_EQ(-EBUSY, ue_del_fd(self->fd, PREFIX "del"));
	ASSERT_EQ(-EBUSY, ue_del(PREFIX "del"));
	ASSERT_TRUE(ue_event_exists(PREFIX "del"));

	/* Closed: the event persists until deleted */
	ue_drop_fd(&self->fd);
	ASSERT_TRUE(ue_event_exists(PREFIX "del"));

	ASSERT_EQ(0, ue_del(PREFIX "del"));
	ASSERT_FALSE(ue_event_exists(PREFIX "del"));
	ASSERT_EQ(-ENOENT, ue_del(PREFIX "del"));
}

TEST_F(reg, delete_busy_while_second_fd_open)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "del2 u32 a", NULL, NULL));
	UE_ASSERT_OPEN_DATA(self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "del2 u32 a", NULL, NULL));

	ue_drop_fd(&self->fd);
	ASSERT_EQ(-EBUSY, ue_del(PREFIX "del2"));

	ue_drop_fd(&self->fd2);
	ASSERT_EQ(0, ue_del(PREFIX "del2"));
	ASSERT_FALSE(ue_event_exists(PREFIX "del2"));
}

TEST_F(reg, delete_busy_while_ftrace_enabled)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "delf u32 a", NULL, NULL));
	ue_drop_fd(&self->fd);

	ASSERT_EQ(0, ue_enable(PREFIX "delf", true));
	ASSERT_EQ(-EBUSY, ue_del(PREFIX "delf"));
	ASSERT_TRUE(ue_event_exists(PREFIX "delf"));

	ASSERT_EQ(0, ue_enable(PREFIX "delf", false));
	ASSERT_EQ(0, ue_del(PREFIX "delf"));
	ASSERT_FALSE(ue_event_exists(PREFIX "delf"));
}

TEST_F(reg, delete_then_register_again)
{
	int w = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "again u32 a", NULL, NULL));
	ue_drop_fd(&self->fd);
	ASSERT_EQ(0, ue_del(PREFIX "again"));
	ASSERT_FALSE(ue_event_exists(PREFIX "again"));

	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "again u64 b", NULL, &w));
	ASSERT_EQ(0, w);
	ASSERT_TRUE(ue_event_exists(PREFIX "again"));
}

/* Fill every status byte; registration of one more new event fails */
TEST_F_TIMEOUT(reg, fill_status_page, UE_TIMEOUT(240))
{
	int max = 8192, n, i, existing = 0, count = 0;
	struct ue_status_ent *ents = calloc(max, sizeof(*ents));
	unsigned char *seen = calloc(UE_PAGE_SIZE, 1);
	char desc[64];
	int s = -1, w = -1;
	int ret;

	ASSERT_NE(NULL, ents);
	ASSERT_NE(NULL, seen);

	n = ue_status_list(ents, max);
	ASSERT_LE(0, n);
	ASSERT_GE(max, n);
	for (i = 0; i < n; i++) {
		if (ents[i].index < 0)
			continue;
		existing++;
		ASSERT_GE(UE_STATUS_SLOTS, ents[i].index);
		seen[ents[i].index] = 1;
	}
	TH_LOG("%d events already had a status byte", existing);

	for (i = 0; i < UE_PAGE_SIZE + 16; i++) {
		snprintf(desc, sizeof(desc), "ue_fill_%d u32 a", i);
		ret = ue_reg(self->fd, desc, &s, &w);
		if (ret)
			break;
		count++;
		ASSERT_EQ(i, w);
		ASSERT_LE(1, s);
		ASSERT_GE(UE_STATUS_SLOTS, s);
		ASSERT_EQ(0, seen[s]) {
			TH_LOG("status index %u handed out twice", s);
		}
		seen[s] = 1;
	}

	ASSERT_EQ(-ENOSPC, ret);
	ASSERT_EQ(UE_STATUS_SLOTS - existing, count);

	/* The failed event does not exist */
	snprintf(desc, sizeof(desc), "ue_fill_%d", count);
	ASSERT_FALSE(ue_event_exists(desc));

	/* Existing events can still be registered (on another fd too) */
	ASSERT_EQ(0, ue_reg(self->fd, "ue_fill_0 u32 a", NULL, &w));
	ASSERT_EQ(0, w);
	UE_ASSERT_OPEN_DATA(self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd2, "ue_fill_1 u32 a", NULL, &w));
	ASSERT_EQ(0, w);
	ASSERT_EQ(-ENOSPC, ue_reg(self->fd2, "ue_fill_new u32 a", NULL, NULL));

	/* The status text lists them all */
	n = ue_status_list(ents, max);
	ASSERT_EQ(existing + count, n);

	/* Close and delete every one of them */
	close(self->fd);
	close(self->fd2);
	self->fd = self->fd2 = -1;
	for (i = 0; i < count; i++) {
		snprintf(desc, sizeof(desc), "ue_fill_%d", i);
		ret = ue_del(desc);
		ASSERT_EQ(0, ret) {
			TH_LOG("delete %s", desc);
		}
	}

	/* The status bytes are free again */
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, "ue_fill_new u32 a", &s, &w));
	ASSERT_EQ(0, w);
	ASSERT_LE(1, s);

	free(ents);
	free(seen);
}

TEST_HARNESS_MAIN
