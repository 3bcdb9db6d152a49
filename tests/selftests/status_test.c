// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: the status page (mmap of user_events_status),
 * its per-event status bytes, and the text read from user_events_status.
 *
 * The fixture deletes every user event at setup, so the status text
 * holds only what the test itself registers.
 */
#include <sys/mman.h>

#include "ue_test.h"

#define PREFIX "ue_s_"

FIXTURE(status) {
	int data_fd;
	int status_fd;
	int perf_fd[4];
	volatile unsigned char *page;
};

FIXTURE_SETUP(status)
{
	int i, left;

	for (i = 0; i < 4; i++)
		self->perf_fd[i] = -1;
	self->page = NULL;
	self->status_fd = -1;

	/* Start with no events at all */
	left = ue_delete_prefix("");
	ASSERT_EQ(0, left) {
		TH_LOG("%d events could not be deleted", left);
	}
	ASSERT_EQ(0, ue_status_list(NULL, 0));

	UE_ASSERT_OPEN_DATA(self->data_fd);
}

FIXTURE_TEARDOWN(status)
{
	int i;

	for (i = 0; i < 4; i++)
		ue_close_fd(self->perf_fd[i]);
	if (self->page)
		munmap((void *)self->page, UE_PAGE_SIZE);
	ue_close_fd(self->status_fd);
	ue_close_fd(self->data_fd);
	EXPECT_EQ(0, ue_delete_prefix(PREFIX));
}

/* Map the status page read-only; the fd is closed again right away */
static volatile unsigned char *map_status(void)
{
	void *page;
	int fd;

	fd = open(UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;

	page = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);

	return page == MAP_FAILED ? NULL : page;
}

TEST_F(status, files_exist_root_0600)
{
	struct stat st;

	ASSERT_EQ(0, stat(UE_DATA_FILE, &st));
	ASSERT_TRUE(S_ISREG(st.st_mode));
	ASSERT_EQ(0600U, st.st_mode & 07777);
	ASSERT_EQ(0U, st.st_uid);

	ASSERT_EQ(0, stat(UE_STATUS_FILE, &st));
	ASSERT_TRUE(S_ISREG(st.st_mode));
	ASSERT_EQ(0600U, st.st_mode & 07777);
	ASSERT_EQ(0U, st.st_uid);
}

TEST_F(status, mmap_rules)
{
	void *p;
	int fd;

	/* 4096 bytes, PROT_READ, MAP_SHARED, offset 0: from O_RDONLY and O_RDWR */
	fd = open(UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	p = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p, UE_PAGE_SIZE));
	close(fd);

	self->status_fd = open(UE_STATUS_FILE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->status_fd);
	fd = self->status_fd;

	p = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);

	/* Never writable: mprotect refuses */
	errno = 0;
	ASSERT_EQ(-1, mprotect(p, UE_PAGE_SIZE, PROT_READ | PROT_WRITE));
	ASSERT_EQ(EACCES, errno);
	ASSERT_EQ(0, munmap(p, UE_PAGE_SIZE));

	/* Length other than 4096 */
	errno = 0;
	p = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EINVAL, errno);

	/* Offset other than 0 */
	errno = 0;
	p = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, UE_PAGE_SIZE);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EINVAL, errno);

	/* Writable shared mapping on an O_RDWR fd */
	errno = 0;
	p = mmap(NULL, UE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EPERM, errno);

	errno = 0;
	p = mmap(NULL, UE_PAGE_SIZE, PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EPERM, errno);
}

/*
 * Maps the status page (self->page), registers desc: its status index, a
 * usable slot whose byte is 0
 */
static int map_and_reg(struct __test_metadata *_metadata,
		       struct _test_data_status *self, const char *desc)
{
	int s = -1;

	self->page = map_status();
	ASSERT_NE(NULL, self->page);
	ASSERT_EQ(0, ue_reg(self->data_fd, desc, &s, NULL));
	ASSERT_LE(1, s);
	ASSERT_GE(UE_STATUS_SLOTS, s);
	ASSERT_EQ(0, self->page[s]);
	return s;
}

TEST_F(status, new_event_byte_is_zero)
{
	map_and_reg(_metadata, self, PREFIX "zero u32 a");
}

TEST_F(status, ftrace_bit)
{
	const char *name = PREFIX "ftrace";
	/* The mapping stays valid after its fd is closed */
	int s = map_and_reg(_metadata, self, PREFIX "ftrace u32 a");

	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->page[s]);
	ASSERT_EQ(1, self->page[s]);

	/* Enabling again changes nothing */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(1, self->page[s]);

	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(0, self->page[s]);

	/* Again, after closing the data fd (the event persists) */
	ue_drop_fd(&self->data_fd);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(1, self->page[s]);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(0, self->page[s]);
}

TEST_F(status, two_mappings_agree)
{
	volatile unsigned char *other;
	int s = -1;

	self->page = map_status();
	ASSERT_NE(NULL, self->page);
	other = map_status();
	ASSERT_NE(NULL, other);

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "twomaps", &s, NULL));
	ASSERT_EQ(0, ue_enable(PREFIX "twomaps", true));
	EXPECT_EQ(1, self->page[s]);
	EXPECT_EQ(1, other[s]);
	ASSERT_EQ(0, ue_enable(PREFIX "twomaps", false));
	EXPECT_EQ(0, self->page[s]);
	EXPECT_EQ(0, other[s]);

	munmap((void *)other, UE_PAGE_SIZE);
}

TEST_F(status, perf_bit)
{
	const char *name = PREFIX "perf";
	int s = map_and_reg(_metadata, self, PREFIX "perf u32 a");

	self->perf_fd[0] = ue_perf_open(name);
	ASSERT_LE(0, self->perf_fd[0]) {
		TH_LOG("perf_event_open: %s", strerror(-self->perf_fd[0]));
	}
	ASSERT_EQ(EVENT_STATUS_PERF, self->page[s]);
	ASSERT_EQ(2, self->page[s]);

	/* A second perf event keeps the bit; it clears after the last */
	self->perf_fd[1] = ue_perf_open(name);
	ASSERT_LE(0, self->perf_fd[1]);
	ASSERT_EQ(2, self->page[s]);

	ue_drop_fd(&self->perf_fd[0]);
	ASSERT_EQ(2, self->page[s]);

	ue_drop_fd(&self->perf_fd[1]);
	ASSERT_EQ(0, self->page[s]);
}

TEST_F(status, ftrace_and_perf_bits)
{
	const char *name = PREFIX "both";
	int s = map_and_reg(_metadata, self, PREFIX "both u64 a");

	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(1, self->page[s]);

	self->perf_fd[0] = ue_perf_open(name);
	ASSERT_LE(0, self->perf_fd[0]);
	ASSERT_EQ(EVENT_STATUS_FTRACE | EVENT_STATUS_PERF, self->page[s]);
	ASSERT_EQ(3, self->page[s]);

	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(2, self->page[s]);

	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(3, self->page[s]);

	ue_drop_fd(&self->perf_fd[0]);
	ASSERT_EQ(1, self->page[s]);

	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(0, self->page[s]);
}

TEST_F(status, bits_are_per_event)
{
	int sa = -1, sb = -1;

	self->page = map_status();
	ASSERT_NE(NULL, self->page);

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "one", &sa, NULL));
	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "two", &sb, NULL));

	ASSERT_EQ(0, ue_enable(PREFIX "one", true));
	self->perf_fd[0] = ue_perf_open(PREFIX "two");
	ASSERT_LE(0, self->perf_fd[0]);
	ASSERT_EQ(1, self->page[sa]);
	ASSERT_EQ(2, self->page[sb]);

	ASSERT_EQ(0, ue_enable(PREFIX "one", false));
	ASSERT_EQ(0, self->page[sa]);
	ASSERT_EQ(2, self->page[sb]);
	ue_drop_fd(&self->perf_fd[0]);
	ASSERT_EQ(0, self->page[sb]);
}

TEST_F(status, delete_busy_while_perf_open)
{
	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "delp u32 a", NULL, NULL));
	ue_drop_fd(&self->data_fd);

	self->perf_fd[0] = ue_perf_open(PREFIX "delp");
	ASSERT_LE(0, self->perf_fd[0]);
	ASSERT_EQ(-EBUSY, ue_del(PREFIX "delp"));
	ASSERT_TRUE(ue_event_exists(PREFIX "delp"));

	ue_drop_fd(&self->perf_fd[0]);
	ASSERT_EQ(0, ue_del(PREFIX "delp"));
	ASSERT_FALSE(ue_event_exists(PREFIX "delp"));
}

TEST_F(status, text_no_events)
{
	char buf[4096];

	ASSERT_LE(0, ue_read_file(UE_STATUS_FILE, buf, sizeof(buf)));
	ASSERT_STREQ("\nActive: 0\nBusy: 0\nMax: 4096\n", buf);
}

/* Append "<index>:<name><used>\n" lines sorted by index */
struct text_ev {
	const char *name;
	int index;
	const char *used;
};

static void expected_text(char *buf, size_t size, struct text_ev *ev, int n,
			  int busy)
{
	size_t pos = 0;
	int i, j;

	/* Sort by status index, ascending */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (ev[j].index < ev[i].index) {
				struct text_ev t = ev[i];

				ev[i] = ev[j];
				ev[j] = t;
			}

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		pos += snprintf(buf + pos, size - pos, "%d:%s%s\n",
				ev[i].index, ev[i].name, ev[i].used);
	snprintf(buf + pos, size - pos, "\nActive: %d\nBusy: %d\nMax: 4096\n",
		 n, busy);
}

/* user_events_status reads exactly the list of the n events, and counts */
static void assert_text(struct __test_metadata *_metadata,
			struct text_ev *ev, int n, int busy)
{
	char got[4096], want[4096];

	expected_text(want, sizeof(want), ev, n, busy);
	ASSERT_LE(0, ue_read_file(UE_STATUS_FILE, got, sizeof(got)));
	ASSERT_STREQ(want, got);
}

TEST_F(status, text_exact)
{
	int sa = -1, sb = -1, sc = -1, sd = -1;

	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "ta u32 a", &sa, NULL));
	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "tb", &sb, NULL));
	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "tc char[8] c", &sc, NULL));
	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "td s64 d", &sd, NULL));

	/* Nothing attached */
	assert_text(_metadata, (struct text_ev[]){
		{ PREFIX "ta", sa, "" }, { PREFIX "tb", sb, "" },
		{ PREFIX "tc", sc, "" }, { PREFIX "td", sd, "" } }, 4, 0);

	/* tb: ftrace; tc: perf; td: ftrace and perf */
	ASSERT_EQ(0, ue_enable(PREFIX "tb", true));
	self->perf_fd[0] = ue_perf_open(PREFIX "tc");
	ASSERT_LE(0, self->perf_fd[0]);
	ASSERT_EQ(0, ue_enable(PREFIX "td", true));
	self->perf_fd[1] = ue_perf_open(PREFIX "td");
	ASSERT_LE(0, self->perf_fd[1]);

	assert_text(_metadata, (struct text_ev[]){
		{ PREFIX "ta", sa, "" }, { PREFIX "tb", sb, " # Used by ftrace" },
		{ PREFIX "tc", sc, " # Used by perf" },
		{ PREFIX "td", sd, " # Used by ftrace perf" } }, 4, 3);

	/* Detach everything again */
	ASSERT_EQ(0, ue_enable(PREFIX "tb", false));
	ASSERT_EQ(0, ue_enable(PREFIX "td", false));
	close(self->perf_fd[0]);
	close(self->perf_fd[1]);
	self->perf_fd[0] = self->perf_fd[1] = -1;

	assert_text(_metadata, (struct text_ev[]){
		{ PREFIX "ta", sa, "" }, { PREFIX "tb", sb, "" },
		{ PREFIX "tc", sc, "" }, { PREFIX "td", sd, "" } }, 4, 0);

	/* Closed and deleted events leave the list */
	ue_drop_fd(&self->data_fd);
	ASSERT_EQ(0, ue_del(PREFIX "tb"));
	ASSERT_EQ(0, ue_del(PREFIX "td"));
	assert_text(_metadata, (struct text_ev[]){
		{ PREFIX "ta", sa, "" }, { PREFIX "tc", sc, "" } }, 2, 0);
}

TEST_F(status, text_one_enabled)
{
	char got[4096], want[256];
	int s = -1;

	/* The example of the design: one event used by ftrace */
	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "test", &s, NULL));
	ASSERT_EQ(0, ue_enable(PREFIX "test", true));

	snprintf(want, sizeof(want),
		 "%d:" PREFIX "test # Used by ftrace\n\nActive: 1\nBusy: 1\nMax: 4096\n", s);
	ASSERT_LE(0, ue_read_file(UE_STATUS_FILE, got, sizeof(got)));
	ASSERT_STREQ(want, got);

	ASSERT_EQ(0, ue_enable(PREFIX "test", false));
	snprintf(want, sizeof(want),
		 "%d:" PREFIX "test\n\nActive: 1\nBusy: 0\nMax: 4096\n", s);
	ASSERT_LE(0, ue_read_file(UE_STATUS_FILE, got, sizeof(got)));
	ASSERT_STREQ(want, got);
}

/* Register desc with the remote write ABI (struct user_write_reg) */
static int reg_remote(int fd, const char *desc, __u32 *enable_word)
{
	return ue_wreg(fd, desc, enable_word, sizeof(*enable_word), 0, 0, NULL);
}

TEST_F(status, text_event_without_status_byte)
{
	static __u32 enable_word;
	struct user_write_unreg unreg;
	char got[4096], want[512];
	int s = -1;

	memset(&unreg, 0, sizeof(unreg));

	/* An event of the status page ABI, and one of the remote write ABI */
	ASSERT_EQ(0, ue_reg(self->data_fd, PREFIX "paged u32 a", &s, NULL));
	ASSERT_EQ(0, reg_remote(self->data_fd, PREFIX "remote u32 a", &enable_word));
	ASSERT_TRUE(ue_event_exists(PREFIX "remote"));

	/* The one without a status byte comes after, without an index */
	snprintf(want, sizeof(want),
		 "%d:" PREFIX "paged\n" PREFIX "remote\n"
		 "\nActive: 2\nBusy: 0\nMax: 4096\n", s);
	ASSERT_LE(0, ue_read_file(UE_STATUS_FILE, got, sizeof(got)));
	ASSERT_STREQ(want, got);

	/*
	 * Unregister the enable bit and close the fd: the remote write
	 * event then goes away by itself (maybe a little later); give it
	 * time so the teardown does not race with it.
	 */
	unreg.size = sizeof(unreg);
	unreg.disable_bit = 0;
	unreg.disable_addr = (__u64)(uintptr_t)&enable_word;
	ASSERT_EQ(0, ioctl(self->data_fd, DIAG_IOCSUNREG, &unreg));
	ue_drop_fd(&self->data_fd);
	for (int i = 0; i < 50 && ue_event_exists(PREFIX "remote"); i++)
		usleep(100 * 1000);
}

TEST_HARNESS_MAIN
