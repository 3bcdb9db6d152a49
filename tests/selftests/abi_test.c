// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: the remote write ABI of Linux 6.4 and later
 * (struct user_write_reg, size 28, and struct user_write_unreg): the
 * checks DIAG_IOCSREG makes, the enable bit the kernel keeps in a word of
 * the registering process, DIAG_IOCSUNREG, event lifetime (auto delete,
 * USER_EVENT_REG_PERSIST, USER_EVENT_REG_MULTI_FORMAT), writes to such
 * events, and one event registered through both ABIs.
 *
 * The behaviour expected is that of upstream Linux 6.12 built with
 * CONFIG_USER_EVENTS=y. Every event created here is named "ue_a_*"; the
 * fixture teardown unregisters what a test left registered, closes its
 * files and checks that every such event is gone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "ue_test.h"

#define PREFIX		"ue_a_"

/* Fill byte of the memory holding enable words: bits 0, 2, 5, 7 clear */
#define FILL		0x5a
#define FILL32		0x5a5a5a5aU
#define FILL64		0x5a5a5a5a5a5a5a5aULL

/* How long asynchronous work (auto delete, fault fixups) may take */
#define WAIT_MS		UE_BOUND_MS(1000)

/* Pages of private anonymous memory each test gets for its words */
#define MEM_PAGES	2

/* ---------------------------------------------------------------------
 * Helpers
 */

/*
 * The word must read want right now: upstream updates present, writable
 * words synchronously (at registration, enable, disable, perf open/close
 * and unregistration). When it does not, say whether it got there later.
 */
#define ASSERT_WORD(addr, size, want) do {				\
	uint64_t __want = (want);					\
	uint64_t __got = ue_word_read((addr), (size));			\
	if (__got != __want) {						\
		int __late = ue_word_wait((addr), (size), __want, WAIT_MS); \
		TH_LOG("word %p: %#llx, expected %#llx (%s)",		\
		       (void *)(addr), (unsigned long long)__got,	\
		       (unsigned long long)__want,			\
		       __late >= 0 ? "reached later: not synchronous" : \
				     "not reached within WAIT_MS either"); \
	}								\
	ASSERT_EQ(__want, __got);					\
} while (0)

/* Bit 0 of the 4-byte word at addr follows ftrace's enable of name */
#define ASSERT_BIT0_FOLLOWS(name, addr) do {				\
	ASSERT_EQ(0, ue_enable((name), true));				\
	ASSERT_WORD((addr), 4, FILL32 | 1);				\
	ASSERT_EQ(0, ue_enable((name), false));				\
	ASSERT_WORD((addr), 4, FILL32 & ~1U);				\
} while (0)

/* Bytes in [mem, mem + len) that differ from FILL, outside [skip, +n) */
static int fill_damage(const char *mem, size_t len, const char *skip, size_t n)
{
	int bad = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (mem + i >= skip && mem + i < skip + n)
			continue;
		if ((unsigned char)mem[i] != FILL)
			bad++;
	}

	return bad;
}

static char *map_mem(size_t pages, int prot)
{
	return ue_map_filled(pages, FILL, prot);
}

/*
 * Directories events/user_events_multi/NAME.<hex id>: stores up to max
 * of their names in dirs (sorted) and returns how many there are.
 */
#define MULTI_NAME_MAX 300
static int multi_dirs(const char *name, char dirs[][MULTI_NAME_MAX], int max)
{
	size_t len = strlen(name);
	struct dirent *de;
	int n = 0, i, j;
	DIR *d;

	d = opendir(UE_MULTI_DIR);
	if (!d)
		return 0;

	while ((de = readdir(d))) {
		const char *id = de->d_name + len + 1;

		if (strncmp(de->d_name, name, len) || de->d_name[len] != '.')
			continue;
		if (!*id || strspn(id, "0123456789abcdefABCDEF") != strlen(id))
			continue;
		if (n < max)
			snprintf(dirs[n], MULTI_NAME_MAX, "%s", de->d_name);
		n++;
	}
	closedir(d);

	/* Sort what was stored, for stable comparisons */
	for (i = 0; i < n && i < max; i++)
		for (j = i + 1; j < n && j < max; j++)
			if (strcmp(dirs[i], dirs[j]) > 0) {
				char tmp[MULTI_NAME_MAX];

				memcpy(tmp, dirs[i], MULTI_NAME_MAX);
				memcpy(dirs[i], dirs[j], MULTI_NAME_MAX);
				memcpy(dirs[j], tmp, MULTI_NAME_MAX);
			}

	return n;
}

static bool multi_wait_count(const char *name, int count, int ms)
{
	char dirs[1][MULTI_NAME_MAX];
	int waited;

	for (waited = 0; waited <= ms; waited += 10) {
		if (multi_dirs(name, dirs, 0) == count)
			return true;
		ue_sleep_ms(10);
	}

	return false;
}

static int multi_enable(const char *dir, bool on)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s/enable", UE_MULTI_DIR, dir);

	return ue_write_file(path, on ? "1\n" : "0\n", false);
}

/* Does the format file of events/user_events_multi/DIR contain str? */
static bool multi_format_has(const char *dir, const char *str)
{
	char path[512], buf[8192];

	snprintf(path, sizeof(path), "%s/%s/format", UE_MULTI_DIR, dir);
	if (ue_read_file(path, buf, sizeof(buf)) < 0)
		return false;

	return strstr(buf, str) != NULL;
}

/* ---------------------------------------------------------------------
 * Test context shared by the fixtures: data fds, a perf fd, the status
 * page, memory for enable words, and the registrations still in place.
 */
struct ctx {
	int fd;
	int fd2;
	int perf_fd;
	int status_fd;
	void *status_page;
	char *mem;
	size_t mem_len;
	struct ue_enablers regs;
};

static void ctx_setup(struct __test_metadata *_metadata, struct ctx *c)
{
	c->fd2 = -1;
	c->perf_fd = -1;
	c->status_fd = -1;
	c->status_page = MAP_FAILED;
	c->regs.n = 0;
	c->mem_len = MEM_PAGES * sysconf(_SC_PAGESIZE);
	c->mem = map_mem(MEM_PAGES, PROT_READ | PROT_WRITE);

	/*
	 * A test that fails an ASSERT exits without its teardown (with
	 * -O2 the harness's "child" variable does not survive longjmp()):
	 * remove what such a test may have left behind.
	 */
	ue_cleanup_events(PREFIX);
	ASSERT_NE(NULL, c->mem);

	UE_ASSERT_OPEN_DATA(c->fd);
}

static void ctx_teardown(struct __test_metadata *_metadata, struct ctx *c)
{
	ue_close_fd(c->perf_fd);
	ue_enablers_unreg_all(&c->regs);
	ue_close_fd(c->fd);
	ue_close_fd(c->fd2);
	if (c->status_page != MAP_FAILED)
		munmap(c->status_page, UE_PAGE_SIZE);
	ue_close_fd(c->status_fd);
	if (c->mem)
		munmap(c->mem, c->mem_len);

	EXPECT_EQ(0, ue_cleanup_events(PREFIX));
}

/* Register with the remote write ABI and remember it for the teardown */
static int creg(struct ctx *c, int fd, const char *desc, const void *addr,
		int size, int bit, int flags, int *write_index)
{
	int ret = ue_wreg(fd, desc, addr, size, bit, flags, write_index);

	if (!ret)
		ue_enablers_add(&c->regs, addr, bit);

	return ret;
}

/* Unregister and forget the registration */
static int cunreg(struct ctx *c, int fd, const void *addr, int bit)
{
	int ret = ue_wunreg(fd, addr, bit);

	ue_enablers_forget(&c->regs, addr, bit);

	return ret;
}

/* The same for bit 0 of the u32 at c->mem, on c->fd */
static int creg_word(struct ctx *c, const char *desc, int flags)
{
	return creg(c, c->fd, desc, c->mem, 4, 0, flags, NULL);
}

static int cunreg_word(struct ctx *c)
{
	return cunreg(c, c->fd, c->mem, 0);
}

/* ---------------------------------------------------------------------
 * Perf ring buffer: raw data of the samples of a perf fd
 */
#define RING_PAGES 8

struct ring {
	struct perf_event_mmap_page *meta;
	char *data;
	size_t data_size;
	size_t len;
};

static int ring_map(struct ring *r, int perf_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	r->len = (1 + RING_PAGES) * page;
	p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, perf_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->meta = p;
	r->data = (char *)p + page;
	r->data_size = RING_PAGES * page;

	return 0;
}

static void ring_copy(struct ring *r, __u64 pos, void *dst, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		((char *)dst)[i] = r->data[(pos + i) % r->data_size];
}

/*
 * Copy the raw data (PERF_SAMPLE_RAW) of the next sample into buf.
 * Returns the raw size, 0 when there is no sample left.
 */
static int ring_next_raw(struct ring *r, void *buf, size_t size)
{
	__u64 head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = r->meta->data_tail;
	int ret = 0;

	while (tail < head) {
		struct perf_event_header hdr;
		__u32 raw_size;

		ring_copy(r, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr))
			break;
		if (hdr.type == PERF_RECORD_SAMPLE) {
			ring_copy(r, tail + sizeof(hdr), &raw_size,
				  sizeof(raw_size));
			ring_copy(r, tail + sizeof(hdr) + sizeof(raw_size), buf,
				  raw_size < size ? raw_size : size);
			tail += hdr.size;
			ret = raw_size;
			break;
		}
		tail += hdr.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);

	return ret;
}

/* =====================================================================
 * Fixture "abi": one test context, no variants
 */
FIXTURE(abi) {
	struct ctx c;
};

FIXTURE_SETUP(abi)
{
	ctx_setup(_metadata, &self->c);
}

FIXTURE_TEARDOWN(abi)
{
	ctx_teardown(_metadata, &self->c);
}

TEST_F(abi, struct_layout)
{
	ASSERT_EQ(28, (int)sizeof(struct user_write_reg));
	ASSERT_EQ(USER_WRITE_REG_SIZE, (int)sizeof(struct user_write_reg));
	ASSERT_EQ(4, (int)offsetof(struct user_write_reg, enable_bit));
	ASSERT_EQ(5, (int)offsetof(struct user_write_reg, enable_size));
	ASSERT_EQ(6, (int)offsetof(struct user_write_reg, flags));
	ASSERT_EQ(8, (int)offsetof(struct user_write_reg, enable_addr));
	ASSERT_EQ(16, (int)offsetof(struct user_write_reg, name_args));
	ASSERT_EQ(24, (int)offsetof(struct user_write_reg, write_index));
	ASSERT_EQ(16, (int)sizeof(struct user_write_unreg));
	ASSERT_EQ(4, (int)offsetof(struct user_write_unreg, disable_bit));
	ASSERT_EQ(8, (int)offsetof(struct user_write_unreg, disable_addr));
	ASSERT_EQ(24, USER_STATUS_REG_SIZE);
	ASSERT_EQ(1, USER_EVENT_REG_PERSIST);
	ASSERT_EQ(2, USER_EVENT_REG_MULTI_FORMAT);
	ASSERT_EQ(4, USER_EVENT_REG_MAX);
}

/* Raw registration from a buffer of any size, fields of the 28-byte layout */
static int reg_sized(int fd, void *buf, __u32 size, const char *desc,
		     const void *addr)
{
	struct user_write_reg *reg = buf;

	reg->size = size;
	reg->enable_bit = 0;
	reg->enable_size = 4;
	reg->flags = 0;
	reg->enable_addr = (__u64)(uintptr_t)addr;
	reg->name_args = (__u64)(uintptr_t)desc;
	reg->write_index = 0xdeadbeef;

	if (ioctl(fd, DIAG_IOCSREG, buf) < 0)
		return -errno;

	return 0;
}

/* reg_sized() of 28 bytes from buf (32 bytes of 0xee before), tracked */
static int reg28(struct ctx *c, unsigned char *buf, const char *desc,
		 uint32_t *w)
{
	int ret;

	memset(buf, 0xee, 32);
	ret = reg_sized(c->fd, buf, 28, desc, w);
	if (!ret)
		ue_enablers_add(&c->regs, w, 0);
	return ret;
}

TEST_F(abi, size28_write_index_at_24)
{
	unsigned char buf[32] __attribute__((aligned(8)));
	struct user_write_reg *reg = (struct user_write_reg *)buf;
	uint32_t *w = (uint32_t *)self->c.mem;
	__u32 idx;
	int i;

	ASSERT_EQ(0, reg28(&self->c, buf, PREFIX "idx_a u32 a", w));
	memcpy(&idx, buf + 24, sizeof(idx));
	ASSERT_EQ(0U, idx);
	/* Nothing written past the 28 bytes given */
	for (i = 28; i < 32; i++)
		ASSERT_EQ(0xee, buf[i]);

	/* The next event on the fd gets 1, the first one again 0 */
	ASSERT_EQ(0, reg28(&self->c, buf, PREFIX "idx_b u64 b", w + 1));
	ASSERT_EQ(1U, reg->write_index);
	for (i = 28; i < 32; i++)
		ASSERT_EQ(0xee, buf[i]);

	ASSERT_EQ(0, reg28(&self->c, buf, PREFIX "idx_a u32 a", w + 2));
	ASSERT_EQ(0U, reg->write_index);

	ASSERT_TRUE(ue_event_exists(PREFIX "idx_a"));
	ASSERT_TRUE(ue_event_exists(PREFIX "idx_b"));
}

TEST_F(abi, size_rules)
{
	static const __u32 einval[] = { 0, 1, 4, 8, 16, 20, 23, 25, 26, 27 };
	static unsigned char buf[8192] __attribute__((aligned(8)));
	const char *desc = PREFIX "size u32 a";
	char *w = self->c.mem;
	unsigned int i;
	__u32 idx;
	int sidx = -1, widx = -1;

	for (i = 0; i < sizeof(einval) / sizeof(einval[0]); i++) {
		memset(buf, 0, sizeof(buf));
		EXPECT_EQ(-EINVAL, reg_sized(self->c.fd, buf, einval[i], desc, w)) {
			TH_LOG("size %u", einval[i]);
		}
	}
	ASSERT_FALSE(ue_event_exists(PREFIX "size"));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, w, 0));

	/* Larger than a page */
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(-E2BIG, reg_sized(self->c.fd, buf, 4097, desc, w));
	ASSERT_EQ(-E2BIG, reg_sized(self->c.fd, buf, 8192, desc, w));
	ASSERT_EQ(-E2BIG, reg_sized(self->c.fd, buf, 0xffffffff, desc, w));

	/* Larger than 28 with a non-zero byte after the known fields */
	memset(buf, 0, sizeof(buf));
	buf[31] = 1;
	ASSERT_EQ(-E2BIG, reg_sized(self->c.fd, buf, 32, desc, w));
	memset(buf, 0, sizeof(buf));
	buf[28] = 0x80;
	ASSERT_EQ(-E2BIG, reg_sized(self->c.fd, buf, 29, desc, w));
	memset(buf, 0, sizeof(buf));
	buf[4095] = 1;
	ASSERT_EQ(-E2BIG, reg_sized(self->c.fd, buf, 4096, desc, w));
	ASSERT_FALSE(ue_event_exists(PREFIX "size"));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, w, 0));

	/* Larger with a zero tail works, write_index still at offset 24 */
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, reg_sized(self->c.fd, buf, 32, desc, w));
	memcpy(&idx, buf + 24, sizeof(idx));
	ASSERT_EQ(0U, idx);
	ASSERT_EQ(0, ue_wunreg(self->c.fd, w, 0));

	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, reg_sized(self->c.fd, buf, 4096, desc, w));
	memcpy(&idx, buf + 24, sizeof(idx));
	ASSERT_EQ(0U, idx);
	ASSERT_EQ(0, ue_wunreg(self->c.fd, w, 0));

	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, reg_sized(self->c.fd, buf, 28, desc, w));
	ASSERT_EQ(0, ue_wunreg(self->c.fd, w, 0));

	/* Size 24 is the status page ABI, on the same event */
	ASSERT_EQ(0, ue_reg(self->c.fd, desc, &sidx, &widx));
	ASSERT_LE(1, sidx);
	ASSERT_EQ(0, widx);
}

TEST_F(abi, enable_size_rules)
{
	static const int bad[] = { 0, 1, 2, 3, 5, 6, 7, 9, 16, 255 };
	const char *desc = PREFIX "esize u32 a";
	char *w = self->c.mem;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w, bad[i], 0, 0, NULL)) {
			TH_LOG("enable_size %d", bad[i]);
		}
	}
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, w, 0));

	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, w, 4, 0, 0, NULL));
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, w + 8, 8, 0, 0, NULL));
}

TEST_F(abi, alignment_rules)
{
	const char *desc = PREFIX "align u32 a";
	char *w = self->c.mem;	/* page aligned */
	int off;

	for (off = 1; off < 4; off++)
		EXPECT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w + off, 4, 0, 0, NULL)) {
			TH_LOG("4-byte word at offset %d", off);
		}
	for (off = 1; off < 8; off++)
		EXPECT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w + 16 + off, 8, 0, 0, NULL)) {
			TH_LOG("8-byte word at offset %d", off);
		}

	/* Natural alignment is enough: 4 mod 8 for a 4-byte word */
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, w + 4, 4, 0, 0, NULL));
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, w + 8, 8, 0, 0, NULL));
}

TEST_F(abi, bit_range_rules)
{
	const char *desc = PREFIX "bits u32 a";
	char *w = self->c.mem;

	ASSERT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w, 4, 32, 0, NULL));
	ASSERT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w, 4, 63, 0, NULL));
	ASSERT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w, 4, 255, 0, NULL));
	ASSERT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w + 8, 8, 64, 0, NULL));
	ASSERT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w + 8, 8, 128, 0, NULL));
	ASSERT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, w + 8, 8, 255, 0, NULL));
	ASSERT_FALSE(ue_event_exists(PREFIX "bits"));

	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, w, 4, 31, 0, NULL));
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, w + 8, 8, 63, 0, NULL));
}

TEST_F(abi, bad_addresses_efault)
{
	const char *desc = PREFIX "addr u32 a";
	long page = sysconf(_SC_PAGESIZE);
	char *ro, *none, *gone;

	/* Kernel addresses */
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, (void *)0xffff800000000000UL,
				   4, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, (void *)0xffff800000000000UL,
				   8, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, (void *)0xffffffffff600000UL,
				   8, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, (void *)0xfffffffffffffff8UL,
				   8, 0, 0, NULL));

	/* NULL and an unmapped page */
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, NULL, 4, 0, 0, NULL));
	gone = map_mem(1, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, gone);
	ASSERT_EQ(0, munmap(gone, page));
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, gone, 4, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, gone + 8, 8, 5, 0, NULL));

	/* Read-only and inaccessible pages */
	ro = map_mem(1, PROT_READ);
	ASSERT_NE(NULL, ro);
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, ro, 4, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, ro + 8, 8, 0, 0, NULL));
	ASSERT_EQ(0, fill_damage(ro, page, NULL, 0));

	none = map_mem(1, PROT_NONE);
	ASSERT_NE(NULL, none);
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, desc, none, 4, 0, 0, NULL));

	/* None of them left an enabler behind */
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, ro, 0));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, ro + 8, 0));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, none, 0));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, NULL, 0));

	/* The same registration on writable memory works */
	ASSERT_EQ(0, creg_word(&self->c, desc, 0));

	munmap(ro, page);
	munmap(none, page);
}

TEST_F(abi, unknown_flags_einval)
{
	static const int bad[] = { 1 << 2, 1 << 3, 1 << 15, 0xffff,
				   USER_EVENT_REG_MULTI_FORMAT | (1 << 2) };
	const char *desc = PREFIX "flags u32 a";
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, ue_wreg(self->c.fd, desc, self->c.mem, 4, 0,
					   bad[i], NULL)) {
			TH_LOG("flags %#x", bad[i]);
		}
	}
	ASSERT_FALSE(ue_event_exists(PREFIX "flags"));
	ASSERT_EQ(0, multi_dirs(PREFIX "flags", NULL, 0));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, self->c.mem, 0));
}

TEST_F(abi, bad_name_args_efault)
{
	long page = sysconf(_SC_PAGESIZE);
	char *gone = map_mem(1, PROT_READ | PROT_WRITE);

	ASSERT_NE(NULL, gone);
	ASSERT_EQ(0, munmap(gone, page));

	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, NULL, self->c.mem, 4, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, ue_wreg(self->c.fd, gone, self->c.mem, 4, 0, 0, NULL));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, self->c.mem, 0));
}

/* Without CAP_SYS_ADMIN and CAP_PERFMON: register with and without PERSIST */
static void persist_unprivileged(void *arg, int *res)
{
	struct ctx *c = arg;
	char *w = c->mem;
	int fd = c->fd;

	res[0] = ue_drop_perfmon_caps();
	res[1] = ue_wreg(fd, PREFIX "perm_p u32 a", w, 4, 0,
			 USER_EVENT_REG_PERSIST, NULL);
	res[2] = ue_wreg(fd, PREFIX "perm_pm u32 a", w, 4, 1,
			 USER_EVENT_REG_PERSIST | USER_EVENT_REG_MULTI_FORMAT,
			 NULL);
	/* Without the flag the same process may register */
	res[3] = ue_wreg(fd, PREFIX "perm_n u32 a", w, 4, 2, 0, NULL);
	res[4] = ue_wreg(fd, PREFIX "perm_m u32 a", w, 4, 3,
			 USER_EVENT_REG_MULTI_FORMAT, NULL);
	res[5] = ue_wunreg(fd, w, 2) ?: ue_wunreg(fd, w, 3);
}

/* Drop CAP_SYS_ADMIN and CAP_PERFMON from the effective set */
TEST_F(abi, persist_needs_perfmon)
{
	int res[6] = { 1, 1, 1, 1, 1, 1 };

	ue_child_results(_metadata, persist_unprivileged, &self->c, res,
			 sizeof(res));

	ASSERT_EQ(0, res[0]);
	EXPECT_EQ(-EPERM, res[1]);
	EXPECT_EQ(-EPERM, res[2]);
	ASSERT_EQ(0, res[3]);
	ASSERT_EQ(0, res[4]);
	ASSERT_EQ(0, res[5]);
	ASSERT_FALSE(ue_event_exists(PREFIX "perm_p"));
	ASSERT_EQ(0, multi_dirs(PREFIX "perm_pm", NULL, 0));
}

/*
 * An event kept by USER_EVENT_REG_PERSIST (or made in dynamic_events) can
 * only be deleted by a caller with the capability; other events can be
 * deleted by anyone who may open the data file.
 */
static void delete_unprivileged(void *arg __attribute__((unused)), int *res)
{
	res[0] = ue_drop_perfmon_caps();
	res[1] = ue_del(PREFIX "pdel_p");
	res[2] = ue_del(PREFIX "pdel_d");
	/*
	 * A status page ABI event is not kept by the capability, but
	 * under isolation (the default) root's events are shared and
	 * only privileged callers delete them: a uid 0 without the
	 * capability is one more tenant (tenant_test.c)
	 */
	res[3] = ue_del(PREFIX "pdel_s");
}

TEST_F(abi, delete_persistent_needs_perfmon)
{
	int res[4] = { 1, 1, 1, 1 };
	int fd;

	/* Registered on a file of their own, closed: nothing holds them */
	fd = ue_open_data();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ue_wreg(fd, PREFIX "pdel_p u32 a", self->c.mem, 4, 0,
			     USER_EVENT_REG_PERSIST, NULL));
	ASSERT_EQ(0, ue_wunreg(fd, self->c.mem, 0));
	ASSERT_EQ(0, ue_reg(fd, PREFIX "pdel_s u32 a", NULL, NULL));
	close(fd);
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
				   "u:" PREFIX "pdel_d u32 a", false));

	ue_child_results(_metadata, delete_unprivileged, NULL, res, sizeof(res));

	ASSERT_EQ(0, res[0]);
	EXPECT_EQ(-EPERM, res[1]);
	EXPECT_EQ(-EPERM, res[2]);
	ASSERT_TRUE(ue_event_exists(PREFIX "pdel_p"));
	ASSERT_TRUE(ue_event_exists(PREFIX "pdel_d"));
	EXPECT_EQ(-EACCES, res[3]);
	ASSERT_TRUE(ue_event_exists(PREFIX "pdel_s"));
	ASSERT_EQ(0, ue_del(PREFIX "pdel_s"));

	/* With the capability they go */
	ASSERT_EQ(0, ue_del(PREFIX "pdel_p"));
	ASSERT_EQ(0, ue_del(PREFIX "pdel_d"));
	ASSERT_FALSE(ue_event_exists(PREFIX "pdel_p"));
	ASSERT_FALSE(ue_event_exists(PREFIX "pdel_d"));
}

TEST_F(abi, same_addr_and_bit_eaddrinuse)
{
	const char *e1 = PREFIX "dup1 u32 a", *e2 = PREFIX "dup2 u64 b";
	uint32_t *w = (uint32_t *)self->c.mem;
	uint32_t *w2 = w + 2;

	*w = FILL32 & ~3U;
	*w2 = FILL32 & ~1U;
	ASSERT_EQ(0, creg(&self->c, self->c.fd, e1, w, 4, 0, 0, NULL));

	/* Same address and bit: refused for any event, on any fd */
	ASSERT_EQ(-EADDRINUSE, ue_wreg(self->c.fd, e2, w, 4, 0, 0, NULL));
	ASSERT_EQ(-EADDRINUSE, ue_wreg(self->c.fd, e1, w, 4, 0, 0, NULL));
	UE_ASSERT_OPEN_DATA(self->c.fd2);
	ASSERT_EQ(-EADDRINUSE, ue_wreg(self->c.fd2, e2, w, 4, 0, 0, NULL));
	/* ... also when the size given differs */
	ASSERT_EQ(-EADDRINUSE, ue_wreg(self->c.fd, e2, w, 8, 0, 0, NULL));
	ASSERT_FALSE(ue_event_exists(PREFIX "dup2"));

	/* Another bit at the same address, the same event elsewhere: fine */
	ASSERT_EQ(0, creg(&self->c, self->c.fd, e2, w, 4, 1, 0, NULL));
	ASSERT_EQ(0, creg(&self->c, self->c.fd2, e1, w2, 4, 0, 0, NULL));

	/* Each bit follows its own event */
	ASSERT_EQ(0, ue_enable(PREFIX "dup1", true));
	ASSERT_WORD(w, 4, (FILL32 & ~3U) | 1);
	ASSERT_WORD(w2, 4, FILL32 | 1);
	ASSERT_EQ(0, ue_enable(PREFIX "dup2", true));
	ASSERT_WORD(w, 4, FILL32 | 3);
	ASSERT_EQ(0, ue_enable(PREFIX "dup1", false));
	ASSERT_WORD(w, 4, (FILL32 & ~3U) | 2);
	ASSERT_WORD(w2, 4, FILL32 & ~1U);
	ASSERT_EQ(0, ue_enable(PREFIX "dup2", false));
	ASSERT_WORD(w, 4, FILL32 & ~3U);

	/* Once unregistered, the address and bit can be used again */
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, w, 0));
	ASSERT_EQ(0, creg(&self->c, self->c.fd, e2, w, 4, 0, 0, NULL));
	ASSERT_EQ(0, ue_enable(PREFIX "dup2", true));
	ASSERT_WORD(w, 4, FILL32 | 3);
	ASSERT_EQ(0, ue_enable(PREFIX "dup2", false));
	ASSERT_WORD(w, 4, FILL32 & ~3U);
}

TEST_F(abi, registration_reflects_state)
{
	const char *desc = PREFIX "state u32 a";
	const char *name = PREFIX "state";
	uint32_t *w = (uint32_t *)self->c.mem;
	uint64_t *w64 = (uint64_t *)(self->c.mem + 64);

	/* Disabled: a set bit is cleared at registration, others kept */
	w[0] = FILL32 | (1U << 5);
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, &w[0], 4, 5, 0, NULL));
	ASSERT_WORD(&w[0], 4, FILL32 & ~(1U << 5));

	/* Enabled: the bit is set at registration */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(&w[0], 4, FILL32 | (1U << 5));
	w[1] = FILL32 & ~(1U << 31);
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, &w[1], 4, 31, 0, NULL));
	ASSERT_WORD(&w[1], 4, FILL32 | (1U << 31));
	*w64 = FILL64 & ~(1ULL << 63);
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, w64, 8, 63, 0, NULL));
	ASSERT_WORD(w64, 8, FILL64 | (1ULL << 63));

	/* ... also through perf alone */
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(&w[1], 4, FILL32 & ~(1U << 31));
	self->c.perf_fd = ue_perf_open(name);
	ASSERT_LE(0, self->c.perf_fd);
	w[2] = FILL32 & ~1U;
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, &w[2], 4, 0, 0, NULL));
	ASSERT_WORD(&w[2], 4, FILL32 | 1);
	ue_drop_fd(&self->c.perf_fd);
	ASSERT_WORD(&w[2], 4, FILL32 & ~1U);
	ASSERT_WORD(w64, 8, FILL64 & ~(1ULL << 63));
}

TEST_F(abi, registration_on_untouched_page)
{
	const char *desc = PREFIX "fresh u32 a";
	long page = sysconf(_SC_PAGESIZE);
	char *fresh;

	/* Never touched: not even a zero page mapped yet */
	fresh = mmap(NULL, page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, fresh);
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, fresh, 4, 3, 0, NULL));
	ASSERT_WORD(fresh, 4, 0);
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, fresh, 3));
	ASSERT_EQ(0, munmap(fresh, page));

	/* Same with the event enabled: the bit is there on return */
	fresh = mmap(NULL, page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, fresh);
	ASSERT_EQ(0, ue_enable(PREFIX "fresh", true));
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, fresh + 8, 8, 40, 0, NULL));
	ASSERT_WORD(fresh + 8, 8, 1ULL << 40);
	ASSERT_EQ(0, ue_enable(PREFIX "fresh", false));
	ASSERT_WORD(fresh + 8, 8, 0);
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, fresh + 8, 40));
	ASSERT_EQ(0, munmap(fresh, page));
}

TEST_F(abi, unregister)
{
	const char *desc = PREFIX "unreg u32 a";
	const char *name = PREFIX "unreg";
	uint32_t *w = (uint32_t *)self->c.mem;
	struct user_write_unreg unreg;

	w[0] = FILL32 & ~(1U << 7);
	w[1] = FILL32 & ~1U;
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, &w[0], 4, 7, 0, NULL));
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, &w[1], 4, 0, 0, NULL));
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(&w[0], 4, FILL32 | (1U << 7));
	ASSERT_WORD(&w[1], 4, FILL32 | 1);

	/* Nothing registered there: ENOENT, and the words are untouched */
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, &w[0], 6));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, &w[0], 0));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, &w[2], 7));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, (char *)&w[0] + 1, 7));
	ASSERT_WORD(&w[0], 4, FILL32 | (1U << 7));

	/* Reserved fields must be zero */
	memset(&unreg, 0, sizeof(unreg));
	unreg.size = sizeof(unreg);
	unreg.disable_bit = 7;
	unreg.disable_addr = (__u64)(uintptr_t)&w[0];
	unreg.__reserved = 1;
	ASSERT_EQ(-1, ioctl(self->c.fd, DIAG_IOCSUNREG, &unreg));
	ASSERT_EQ(EINVAL, errno);
	unreg.__reserved = 0;
	unreg.__reserved2 = 0x100;
	ASSERT_EQ(-1, ioctl(self->c.fd, DIAG_IOCSUNREG, &unreg));
	ASSERT_EQ(EINVAL, errno);
	unreg.__reserved2 = 0;
	/* Too small */
	unreg.size = 12;
	ASSERT_EQ(-1, ioctl(self->c.fd, DIAG_IOCSUNREG, &unreg));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_WORD(&w[0], 4, FILL32 | (1U << 7));

	/* Unregistering clears the bit right away, the event still enabled */
	unreg.size = sizeof(unreg);
	ASSERT_EQ(0, ioctl(self->c.fd, DIAG_IOCSUNREG, &unreg));
	ue_enablers_forget(&self->c.regs, &w[0], 7);
	ASSERT_WORD(&w[0], 4, FILL32 & ~(1U << 7));
	ASSERT_WORD(&w[1], 4, FILL32 | 1);

	/* ... and the word is not touched any more */
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(&w[1], 4, FILL32 & ~1U);
	w[0] = FILL32 & ~(1U << 7);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(&w[0], 4, FILL32 & ~(1U << 7));
	w[0] = FILL32 | (1U << 7);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(&w[0], 4, FILL32 | (1U << 7));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, &w[0], 7));

	/* Enablers belong to the process: another data fd unregisters too */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(&w[1], 4, FILL32 | 1);
	UE_ASSERT_OPEN_DATA(self->c.fd2);
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd2, &w[1], 0));
	ASSERT_WORD(&w[1], 4, FILL32 & ~1U);
	ASSERT_EQ(-ENOENT, ue_wunreg(self->c.fd, &w[1], 0));
	ASSERT_EQ(0, ue_enable(name, false));
}

/* ---------------------------------------------------------------------
 * Event lifetime
 */

/* name still exists ms milliseconds from now: something holds it */
static void assert_stays(struct __test_metadata *_metadata, const char *name,
			 int ms)
{
	ue_sleep_ms(ms);
	ASSERT_TRUE(ue_event_exists(name));
}

/* Closing *fd, what held the last reference, deletes name */
static void assert_close_deletes(struct __test_metadata *_metadata, int *fd,
				 const char *name)
{
	ue_drop_fd(fd);
	ASSERT_TRUE(ue_event_wait(name, false, WAIT_MS));
}

TEST_F(abi, auto_delete_unreg_then_close)
{
	const char *name = PREFIX "auto1";

	ASSERT_EQ(0, creg_word(&self->c, PREFIX "auto1 u32 a", 0));
	ASSERT_TRUE(ue_event_exists(name));

	/* The data fd still holds a reference */
	ASSERT_EQ(0, cunreg_word(&self->c));
	assert_stays(_metadata, name, 200);

	assert_close_deletes(_metadata, &self->c.fd, name);
}

TEST_F(abi, auto_delete_close_then_unreg)
{
	const char *name = PREFIX "auto2";

	ASSERT_EQ(0, creg_word(&self->c, PREFIX "auto2 u32 a", 0));

	/* The enabler still holds a reference: the bit still follows */
	ue_drop_fd(&self->c.fd);
	assert_stays(_metadata, name, 200);
	ASSERT_BIT0_FOLLOWS(name, self->c.mem);

	UE_ASSERT_OPEN_DATA(self->c.fd);
	ASSERT_EQ(0, cunreg_word(&self->c));
	ASSERT_TRUE(ue_event_wait(name, false, WAIT_MS));
}

TEST_F(abi, auto_delete_waits_for_ftrace)
{
	const char *name = PREFIX "auto3";

	ASSERT_EQ(0, creg_word(&self->c, PREFIX "auto3 u32 a", 0));
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(0, cunreg_word(&self->c));
	ue_drop_fd(&self->c.fd);

	/* Still in use by ftrace */
	assert_stays(_metadata, name, 300);

	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_TRUE(ue_event_wait(name, false, WAIT_MS));
}

TEST_F(abi, auto_delete_waits_for_perf)
{
	const char *name = PREFIX "auto4";

	ASSERT_EQ(0, creg_word(&self->c, PREFIX "auto4 u32 a", 0));
	self->c.perf_fd = ue_perf_open(name);
	ASSERT_LE(0, self->c.perf_fd);
	ASSERT_EQ(0, cunreg_word(&self->c));
	ue_drop_fd(&self->c.fd);

	assert_stays(_metadata, name, 300);

	assert_close_deletes(_metadata, &self->c.perf_fd, name);
}

TEST_F(abi, auto_delete_then_register_again)
{
	const char *name = PREFIX "again";

	ASSERT_EQ(0, creg_word(&self->c, PREFIX "again u32 a", 0));
	ASSERT_EQ(0, cunreg_word(&self->c));
	close(self->c.fd);
	UE_ASSERT_OPEN_DATA(self->c.fd);
	ASSERT_TRUE(ue_event_wait(name, false, WAIT_MS));

	/* Gone for good: the name takes other fields now */
	ASSERT_EQ(0, creg_word(&self->c, PREFIX "again u64 b", 0));
	ASSERT_TRUE(ue_event_exists(name));
	ASSERT_BIT0_FOLLOWS(name, self->c.mem);
}

TEST_F(abi, persist_stays_until_delete)
{
	const char *name = PREFIX "persist";

	ASSERT_EQ(0, creg_word(&self->c, PREFIX "persist u32 a",
			       USER_EVENT_REG_PERSIST));
	ASSERT_TRUE(ue_event_exists(name));

	/* In use: cannot be deleted */
	UE_ASSERT_OPEN_DATA(self->c.fd2);
	ASSERT_EQ(-EBUSY, ue_del_fd(self->c.fd2, name));

	ASSERT_EQ(0, cunreg_word(&self->c));
	ue_drop_fd(&self->c.fd);
	assert_stays(_metadata, name, 300);

	/* Still usable */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(0, ue_enable(name, false));
	assert_stays(_metadata, name, 200);

	ASSERT_EQ(0, ue_del_fd(self->c.fd2, name));
	ASSERT_FALSE(ue_event_exists(name));
	ASSERT_EQ(-ENOENT, ue_del_fd(self->c.fd2, name));
}

TEST_F(abi, multi_format)
{
	const char *name = PREFIX "mf";
	char dirs[4][MULTI_NAME_MAX], dir_a[MULTI_NAME_MAX], dir_b[MULTI_NAME_MAX];
	uint32_t *w = (uint32_t *)self->c.mem;
	int wa = -1, wb = -1, wa2 = -1;

	w[0] = w[1] = FILL32 & ~3U;

	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "mf u32 a", &w[0], 4, 0,
			  USER_EVENT_REG_MULTI_FORMAT, &wa));
	ASSERT_EQ(1, multi_dirs(name, dirs, 4));
	snprintf(dir_a, sizeof(dir_a), "%s", dirs[0]);
	/* Not in the single-format system */
	ASSERT_FALSE(ue_event_exists(name));
	ASSERT_TRUE(multi_format_has(dir_a, "field:u32 a;")) {
		TH_LOG("events/%s/%s/format", USER_EVENTS_MULTI_SYSTEM, dir_a);
	}

	/* Same name, other fields: a second event with its own id */
	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "mf u64 b", &w[0], 4, 1,
			  USER_EVENT_REG_MULTI_FORMAT, &wb));
	ASSERT_EQ(2, multi_dirs(name, dirs, 4));
	ASSERT_NE(wa, wb);
	snprintf(dir_b, sizeof(dir_b), "%s",
		 strcmp(dirs[0], dir_a) ? dirs[0] : dirs[1]);
	ASSERT_STRNE(dir_a, dir_b);
	ASSERT_TRUE(multi_format_has(dir_b, "field:u64 b;"));

	/* Same name and fields again, on another fd: the first event */
	UE_ASSERT_OPEN_DATA(self->c.fd2);
	ASSERT_EQ(0, creg(&self->c, self->c.fd2, PREFIX "mf u32 a", &w[1], 4, 0,
			  USER_EVENT_REG_MULTI_FORMAT, &wa2));
	ASSERT_EQ(0, wa2);
	ASSERT_EQ(2, multi_dirs(name, dirs, 4));

	/* Each directory enables the registrations of its own format */
	ASSERT_EQ(0, multi_enable(dir_a, true));
	ASSERT_WORD(&w[0], 4, (FILL32 & ~3U) | 1);
	ASSERT_WORD(&w[1], 4, (FILL32 & ~3U) | 1);
	ASSERT_EQ(0, multi_enable(dir_b, true));
	ASSERT_WORD(&w[0], 4, FILL32 | 3);
	ASSERT_EQ(0, multi_enable(dir_a, false));
	ASSERT_WORD(&w[0], 4, (FILL32 & ~3U) | 2);
	ASSERT_WORD(&w[1], 4, FILL32 & ~3U);
	ASSERT_EQ(0, multi_enable(dir_b, false));
	ASSERT_WORD(&w[0], 4, FILL32 & ~3U);

	/* Writes go to the format of the index */
	{
		struct { int idx; __u64 b; } __attribute__((packed)) rec = { wb, 42 };

		ASSERT_EQ(-1, write(self->c.fd, &rec, sizeof(rec)));
		ASSERT_EQ(EBADF, errno);
		ASSERT_EQ(0, multi_enable(dir_b, true));
		ASSERT_EQ((ssize_t)sizeof(rec), write(self->c.fd, &rec, sizeof(rec)));
		ASSERT_EQ(0, multi_enable(dir_b, false));
	}

	/* The "u64 b" event goes with its last registration (fd1) */
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, &w[0], 0));
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, &w[0], 1));
	ue_drop_fd(&self->c.fd);
	ASSERT_TRUE(multi_wait_count(name, 1, WAIT_MS));
	ASSERT_EQ(1, multi_dirs(name, dirs, 4));
	ASSERT_STREQ(dir_a, dirs[0]);

	/* The "u32 a" one with fd2's */
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd2, &w[1], 0));
	ue_drop_fd(&self->c.fd2);
	ASSERT_TRUE(multi_wait_count(name, 0, WAIT_MS));
}

TEST_F(abi, multi_format_beside_single_format)
{
	const char *name = PREFIX "mix";
	char dirs[4][MULTI_NAME_MAX];
	uint32_t *w = (uint32_t *)self->c.mem;

	w[0] = FILL32 & ~7U;
	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "mix u32 a", w, 4, 0, 0, NULL));
	ASSERT_TRUE(ue_event_exists(name));
	ASSERT_EQ(0, multi_dirs(name, dirs, 4));

	/* A single-format name with other fields is taken ... */
	ASSERT_EQ(-EADDRINUSE, ue_wreg(self->c.fd, PREFIX "mix u64 b", w, 4, 1, 0, NULL));
	/* ... but multi-format events of the name are separate */
	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "mix u64 b", w, 4, 1,
			  USER_EVENT_REG_MULTI_FORMAT, NULL));
	ASSERT_EQ(1, multi_dirs(name, dirs, 4));
	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "mix u32 a", w, 4, 2,
			  USER_EVENT_REG_MULTI_FORMAT, NULL));
	ASSERT_EQ(2, multi_dirs(name, dirs, 4));

	/* Enabling the single-format event sets its bit only */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(w, 4, (FILL32 & ~7U) | 1);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(w, 4, FILL32 & ~7U);

	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, w, 0));
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, w, 1));
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, w, 2));
	assert_close_deletes(_metadata, &self->c.fd, name);
	ASSERT_TRUE(multi_wait_count(name, 0, WAIT_MS));
}

/* ---------------------------------------------------------------------
 * Writes
 */

TEST_F(abi, write_needs_enabled_event)
{
	const char *name = PREFIX "wr";
	struct { int idx; __u32 a; } __attribute__((packed)) rec;
	int idx = -1;

	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "wr u32 a", self->c.mem,
			  4, 0, 0, &idx));
	rec.idx = idx;
	rec.a = 7;

	ASSERT_EQ(-1, write(self->c.fd, &rec, sizeof(rec)));
	ASSERT_EQ(EBADF, errno);

	ASSERT_EQ(0, ue_trace_clear());
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ((ssize_t)sizeof(rec), write(self->c.fd, &rec, sizeof(rec)));
	ASSERT_EQ(0, ue_enable(name, false));

	ASSERT_EQ(-1, write(self->c.fd, &rec, sizeof(rec)));
	ASSERT_EQ(EBADF, errno);

	/* perf alone enables it too */
	self->c.perf_fd = ue_perf_open(name);
	ASSERT_LE(0, self->c.perf_fd);
	ASSERT_EQ((ssize_t)sizeof(rec), write(self->c.fd, &rec, sizeof(rec)));
	ue_drop_fd(&self->c.perf_fd);
	ASSERT_EQ(-1, write(self->c.fd, &rec, sizeof(rec)));
	ASSERT_EQ(EBADF, errno);

	/* Unregistering the enabler does not take the write index away */
	ASSERT_EQ(0, cunreg_word(&self->c));
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ((ssize_t)sizeof(rec), write(self->c.fd, &rec, sizeof(rec)));
	ASSERT_EQ(0, ue_enable(name, false));
}

TEST_F(abi, write_no_fields)
{
	const char *name = PREFIX "nofields";
	char lines[4][UE_LINE_MAX];
	unsigned char buf[8];
	int idx = -1;

	ASSERT_EQ(0, creg(&self->c, self->c.fd, name, self->c.mem, 4, 0, 0, &idx));
	memcpy(buf, &idx, sizeof(idx));
	buf[4] = 0xab;

	ASSERT_EQ(-1, write(self->c.fd, buf, 4));
	ASSERT_EQ(EBADF, errno);

	ASSERT_EQ(0, ue_trace_clear());
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(self->c.mem, 4, FILL32 | 1);
	ASSERT_EQ(4, write(self->c.fd, buf, 4));
	ASSERT_EQ(5, write(self->c.fd, buf, 5));
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(2, ue_trace_lines(name, lines, 4));
}

TEST_F(abi, write_eventheader_payload_kept)
{
	/* An EventHeader event: 8 bytes of declared header, then data */
	const char *name = PREFIX "eh_L4K1";
	const char *desc = PREFIX "eh_L4K1 u8 eventheader_flags; u8 version; "
			   "u16 id; u16 tag; u8 opcode; u8 level";
	const char *fields = "eventheader_flags=7 version=0 id=0 tag=0 "
			     "opcode=0 level=4";
	unsigned char payload[8 + 72], raw[512];
	const int hdr = ue_hdr_size();
	char lines[4][UE_LINE_MAX];
	struct iovec iov[2];
	struct ring r;
	long id = -1;
	int idx = -1, n;
	size_t i;

	ASSERT_LT(0, hdr);
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, self->c.mem, 4, 0, 0, &idx));
	id = ue_event_id(name);
	ASSERT_LE(0, id);

	/* flags 7, version 0, id 0, tag 0, opcode 0, level 4, then data */
	memset(payload, 0, sizeof(payload));
	payload[0] = 7;
	payload[7] = 4;
	for (i = 8; i < sizeof(payload); i++)
		payload[i] = (unsigned char)(i * 7 + 1);

	self->c.perf_fd = ue_perf_open(name);
	ASSERT_LE(0, self->c.perf_fd);
	ASSERT_EQ(0, ring_map(&r, self->c.perf_fd));
	ASSERT_EQ(0, ue_trace_clear());
	ASSERT_EQ(0, ue_enable(name, true));

	iov[0].iov_base = &idx;
	iov[0].iov_len = sizeof(idx);
	iov[1].iov_base = payload;
	iov[1].iov_len = sizeof(payload);
	ASSERT_EQ((ssize_t)(4 + sizeof(payload)), writev(self->c.fd, iov, 2));
	ASSERT_EQ(0, ue_enable(name, false));

	/* perf got the whole payload after the common header */
	n = ring_next_raw(&r, raw, sizeof(raw));
	ASSERT_LE((int)(hdr + sizeof(payload)), n);
	ASSERT_EQ((unsigned short)id, *(unsigned short *)raw);
	ASSERT_EQ(0, memcmp(raw + hdr, payload, sizeof(payload)));
	ASSERT_EQ(0, ring_next_raw(&r, raw, sizeof(raw)));
	munmap(r.meta, r.len);

	/* ftrace got one record, which starts with the declared fields */
	ASSERT_EQ(1, ue_trace_lines(name, lines, 4));
	ASSERT_EQ(0, strncmp(lines[0], fields, strlen(fields))) {
		TH_LOG("line \"%s\"", lines[0]);
	}
	ASSERT_TRUE(lines[0][strlen(fields)] == '\0' ||
		    lines[0][strlen(fields)] == ' ') {
		TH_LOG("line \"%s\"", lines[0]);
	}
}

/* ---------------------------------------------------------------------
 * One event registered through both ABIs
 */

TEST_F(abi, status_and_remote_write_on_one_event)
{
	const char *name = PREFIX "both";
	const char *desc = PREFIX "both u32 a";
	uint32_t *w = (uint32_t *)self->c.mem;
	volatile unsigned char *page;
	int sidx = -1, widx = -1, widx28 = -1;
	struct { int idx; __u32 a; } __attribute__((packed)) rec;

	self->c.status_fd = open(UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->c.status_fd);
	self->c.status_page = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED,
				   self->c.status_fd, 0);
	ASSERT_NE(MAP_FAILED, self->c.status_page);
	page = self->c.status_page;

	ASSERT_EQ(0, ue_reg(self->c.fd, desc, &sidx, &widx));
	ASSERT_LE(1, sidx);
	ASSERT_GE(UE_STATUS_SLOTS, sidx);
	w[0] = FILL32 & ~(1U << 31);
	ASSERT_EQ(0, creg(&self->c, self->c.fd, desc, w, 4, 31, 0, &widx28));
	/* One event, one write index on the fd */
	ASSERT_EQ(widx, widx28);
	ASSERT_EQ(0, page[sidx]);
	ASSERT_WORD(w, 4, FILL32 & ~(1U << 31));

	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, page[sidx]);
	ASSERT_WORD(w, 4, FILL32 | (1U << 31));

	self->c.perf_fd = ue_perf_open(name);
	ASSERT_LE(0, self->c.perf_fd);
	ASSERT_EQ(EVENT_STATUS_FTRACE | EVENT_STATUS_PERF, page[sidx]);
	ASSERT_WORD(w, 4, FILL32 | (1U << 31));

	rec.idx = widx;
	rec.a = 1;
	ASSERT_EQ((ssize_t)sizeof(rec), write(self->c.fd, &rec, sizeof(rec)));

	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(EVENT_STATUS_PERF, page[sidx]);
	ASSERT_WORD(w, 4, FILL32 | (1U << 31));
	ue_drop_fd(&self->c.perf_fd);
	ASSERT_EQ(0, page[sidx]);
	ASSERT_WORD(w, 4, FILL32 & ~(1U << 31));

	ASSERT_EQ(-1, write(self->c.fd, &rec, sizeof(rec)));
	ASSERT_EQ(EBADF, errno);

	/* Different fields under the same name are refused by both ABIs */
	ASSERT_EQ(-EADDRINUSE, ue_wreg(self->c.fd, PREFIX "both u64 a", &w[1], 4,
				       0, 0, NULL));
	ASSERT_EQ(-EADDRINUSE, ue_reg(self->c.fd, PREFIX "both u64 a", NULL, NULL));

	/* Remove: unregister, close, delete (status page events persist) */
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, w, 31));
	ue_drop_fd(&self->c.fd);
	ue_del(name);
	ASSERT_TRUE(ue_event_wait(name, false, WAIT_MS));
}

/* =====================================================================
 * Fixture "bits": the enable bit in words of each size and position
 */
FIXTURE(bits) {
	struct ctx c;
};

FIXTURE_VARIANT(bits) {
	int size;	/* enable_size */
	int bit;	/* enable_bit */
	int offset;	/* of the word in the test memory (2 pages) */
};

FIXTURE_VARIANT_ADD(bits, w32_bit0) { .size = 4, .bit = 0, .offset = 0 };
FIXTURE_VARIANT_ADD(bits, w32_bit31) { .size = 4, .bit = 31, .offset = 0 };
FIXTURE_VARIANT_ADD(bits, w32_at4mod8_bit0) { .size = 4, .bit = 0, .offset = 4 };
FIXTURE_VARIANT_ADD(bits, w32_at4mod8_bit31) { .size = 4, .bit = 31, .offset = 1804 };
FIXTURE_VARIANT_ADD(bits, w32_page_end_bit17) { .size = 4, .bit = 17, .offset = 4092 };
FIXTURE_VARIANT_ADD(bits, w64_bit0) { .size = 8, .bit = 0, .offset = 0 };
FIXTURE_VARIANT_ADD(bits, w64_bit63) { .size = 8, .bit = 63, .offset = 2048 };
FIXTURE_VARIANT_ADD(bits, w64_page_end_bit34) { .size = 8, .bit = 34, .offset = 4088 };
FIXTURE_VARIANT_ADD(bits, w64_page_start_bit32) { .size = 8, .bit = 32, .offset = 4096 };

FIXTURE_SETUP(bits)
{
	ctx_setup(_metadata, &self->c);
}

FIXTURE_TEARDOWN(bits)
{
	ctx_teardown(_metadata, &self->c);
}

/* Everything but the word must still be FILL */
#define ASSERT_REST_INTACT(c, word, size)				\
	ASSERT_EQ(0, fill_damage((c)->mem, (c)->mem_len, (word), (size)))

TEST_F(bits, follows_ftrace_perf_unreg)
{
	const int size = variant->size, bit = variant->bit;
	const uint64_t fill = size == 8 ? FILL64 : FILL32;
	const uint64_t mask = 1ULL << bit;
	const uint64_t off = fill & ~mask, on = fill | mask;
	const char *name = PREFIX "bits";
	char *word = self->c.mem + variant->offset;
	int perf_fd;

	ASSERT_EQ(0, variant->offset % size);
	ue_word_write(word, size, off);
	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "bits u32 a", word, size,
			  bit, 0, NULL));
	ASSERT_WORD(word, size, off);
	ASSERT_REST_INTACT(&self->c, word, size);

	/* ftrace */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(word, size, on);
	ASSERT_REST_INTACT(&self->c, word, size);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(word, size, off);
	ASSERT_REST_INTACT(&self->c, word, size);

	/* perf, alone and together with ftrace */
	perf_fd = ue_perf_open(name);
	ASSERT_LE(0, perf_fd);
	self->c.perf_fd = perf_fd;
	ASSERT_WORD(word, size, on);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(word, size, on);
	close(perf_fd);
	self->c.perf_fd = -1;
	ASSERT_WORD(word, size, on);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(word, size, off);
	ASSERT_REST_INTACT(&self->c, word, size);

	/* The other bits are the process's: the kernel keeps them */
	ue_word_write(word, size, ~mask);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(word, size, ~0ULL >> (64 - 8 * size));
	ue_word_write(word, size, mask);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(word, size, 0);
	ue_word_write(word, size, off);

	/* Unregistered while enabled: cleared at once, then left alone */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD(word, size, on);
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, word, bit));
	ASSERT_WORD(word, size, off);
	ASSERT_EQ(0, ue_enable(name, false));
	ue_word_write(word, size, on);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(word, size, on);
	ue_word_write(word, size, off);
	ASSERT_REST_INTACT(&self->c, word, size);
}

TEST_F(bits, set_at_registration)
{
	const int size = variant->size, bit = variant->bit;
	const uint64_t fill = size == 8 ? FILL64 : FILL32;
	const uint64_t mask = 1ULL << bit;
	const char *name = PREFIX "bitreg";
	char *word = self->c.mem + variant->offset;
	/* A word elsewhere on the page, to create the event with */
	char *other = self->c.mem + (variant->offset + 2048) % self->c.mem_len;

	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "bitreg u32 a", other, 4,
			  2, 0, NULL));
	ASSERT_EQ(0, ue_enable(name, true));
	ue_word_write(other, 4, FILL32);

	ue_word_write(word, size, fill & ~mask);
	ASSERT_EQ(0, creg(&self->c, self->c.fd, PREFIX "bitreg u32 a", word, size,
			  bit, 0, NULL));
	ASSERT_WORD(word, size, fill | mask);
	ASSERT_REST_INTACT(&self->c, word, size);

	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD(word, size, fill & ~mask);
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, word, bit));
	ASSERT_EQ(0, cunreg(&self->c, self->c.fd, other, 2));
	ue_word_write(other, 4, FILL32);
	ASSERT_REST_INTACT(&self->c, word, size);
}

static void final_cleanup(void)
{
	ue_cleanup_events(PREFIX);
}

int main(int argc, char **argv)
{
	/* After the last test, which may have failed without a teardown */
	atexit(final_cleanup);

	return test_harness_run(argc, argv);
}
