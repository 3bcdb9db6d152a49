// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: ftrace features on user events.
 *
 * Event filters (integers, char[N], __rel_loc and __data_loc strings),
 * traceon/traceoff triggers, hist triggers, trace_pipe, tracing
 * instances, and trace-cmd record/report decoding every field type.
 *
 * The test program doubles as the writer run under trace-cmd: with
 * UE_TEST_WRITER=1 in its environment it registers UE_W_DESC, waits for a
 * probe on the event, writes the payloads of UE_W_HEX (hex, separated by
 * commas) and exits, before the test harness starts.
 *
 * Every event created here is named "ue_f_*"; the fixture teardown
 * removes the triggers and instances the tests made, turns tracing back
 * on and deletes the events.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "ue_test.h"
#include "ue_writer.h"

#define PREFIX "ue_f_"

#define MAX_LINES 32
#define MAX_CLEANUP 8

/* --- tracefs helpers ----------------------------------------------------- */

/* Write str to events/user_events/NAME/FILE (appending, not truncating) */
static int ev_write(const char *name, const char *file, const char *str)
{
	char path[512];

	return ue_write_file(ue_event_path(path, sizeof(path), name, file),
			     str, false);
}

static ssize_t ev_read(const char *name, const char *file, char *buf, size_t size)
{
	char path[512];

	return ue_read_file(ue_event_path(path, sizeof(path), name, file),
			    buf, size);
}

static bool tracing_on(void)
{
	char buf[16];

	return ue_read_file(UE_TRACEFS "/tracing_on", buf, sizeof(buf)) > 0 &&
	       buf[0] == '1';
}

/* Lines of a file that start with prefix, in order */
static int lines_with_prefix(char *buf, const char *prefix,
			     char lines[][UE_LINE_MAX], int max)
{
	char *line, *next;
	int n = 0;

	for (line = buf; *line; line = next) {
		next = ue_cut_line(line);
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		if (n < max)
			snprintf(lines[n], UE_LINE_MAX, "%s", line);
		n++;
	}

	return n;
}

/* --- fixture ------------------------------------------------------------- */

FIXTURE(ftrace) {
	int fd;
	volatile unsigned char *page;
	char lines[MAX_LINES][UE_LINE_MAX];
	/* Undo on teardown: write cleanup_str[i] to cleanup_path[i] */
	int ncleanup;
	char cleanup_path[MAX_CLEANUP][512];
	char cleanup_str[MAX_CLEANUP][128];
	char instance[256];
};

FIXTURE_SETUP(ftrace)
{
	self->ncleanup = 0;
	self->instance[0] = '\0';
	UE_ASSERT_WRITER_SETUP(self->page, self->fd);
	ASSERT_EQ(0, ue_trace_clear());
}

FIXTURE_TEARDOWN(ftrace)
{
	int i;

	for (i = self->ncleanup - 1; i >= 0; i--)
		ue_write_file(self->cleanup_path[i], self->cleanup_str[i], false);
	if (self->instance[0]) {
		char path[512];

		snprintf(path, sizeof(path), "%s/events/user_events/enable",
			 self->instance);
		ue_write_file(path, "0\n", false);
		EXPECT_EQ(0, rmdir(self->instance));
	}
	ue_write_file(UE_TRACEFS "/tracing_on", "1\n", false);
	ue_writer_teardown(_metadata, self->page, self->fd, PREFIX);
}

/* Remember to write str to events/user_events/NAME/FILE at teardown */
static void on_teardown(struct _test_data_ftrace *self, const char *name,
			const char *file, const char *str)
{
	if (self->ncleanup == MAX_CLEANUP)
		return;
	ue_event_path(self->cleanup_path[self->ncleanup], 512, name, file);
	snprintf(self->cleanup_str[self->ncleanup], 128, "%s", str);
	self->ncleanup++;
}

/* --- filters ------------------------------------------------------------- */

#define FLT_FIELDS "u32 count; char[16] msg; __rel_loc char[] rmsg; __data_loc char[] dmsg"

/*
 * Write one record of FLT_FIELDS: count 0..4, msg 4..20, rmsg 20..24,
 * dmsg 24..28, then the rmsg text, then the dmsg text.
 */
static int flt_write(int fd, int w, __u32 count, const char *msg,
		     const char *rmsg, const char *dmsg)
{
	unsigned char buf[256];
	size_t rl = strlen(rmsg) + 1, dl = strlen(dmsg) + 1;
	__u32 rloc = DYN_LOC(28 - 24, rl);
	__u32 dloc = DYN_LOC(ue_hdr_size() + 28 + rl, dl);
	ssize_t n;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &w, 4);
	memcpy(buf + 4, &count, 4);
	strncpy((char *)buf + 8, msg, 16);
	memcpy(buf + 24, &rloc, 4);
	memcpy(buf + 28, &dloc, 4);
	memcpy(buf + 32, rmsg, rl);
	memcpy(buf + 32 + rl, dmsg, dl);

	n = write(fd, buf, 32 + rl + dl);
	return n < 0 ? -errno : (int)n;
}

/* Register NAME with FLT_FIELDS; the write index or -errno */
static int flt_reg(int fd, const char *name)
{
	char desc[512];
	int w = -1, ret;

	snprintf(desc, sizeof(desc), "%s " FLT_FIELDS, name);
	ret = ue_reg(fd, desc, NULL, &w);
	return ret ? ret : w;
}

TEST_F(ftrace, filter_integer)
{
	const char *name = PREFIX "fint";
	char buf[256], want[64];
	int i, w;

	w = flt_reg(self->fd, name);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, ev_write(name, "filter", "count > 5\n"));
	ASSERT_LT(0, ev_read(name, "filter", buf, sizeof(buf)));
	ASSERT_STREQ("count > 5\n", buf);
	ASSERT_EQ(0, ue_enable(name, true));

	for (i = 1; i <= 10; i++) {
		char m[16];

		snprintf(m, sizeof(m), "m%d", i);
		ASSERT_LT(0, flt_write(self->fd, w, i, m, "r", "d"));
	}

	ASSERT_EQ(5, ue_trace_lines(name, self->lines, MAX_LINES));
	for (i = 0; i < 5; i++) {
		snprintf(want, sizeof(want), "count=%d msg=m%d rmsg=r dmsg=d",
			 i + 6, i + 6);
		EXPECT_STREQ(want, self->lines[i]);
	}

	/* Filter removed: everything again */
	ASSERT_EQ(0, ev_write(name, "filter", "0\n"));
	ASSERT_LT(0, flt_write(self->fd, w, 1, "x", "r", "d"));
	ASSERT_EQ(6, ue_trace_lines(name, self->lines, MAX_LINES));
	ASSERT_STREQ("count=1 msg=x rmsg=r dmsg=d", self->lines[5]);
}

/* "FIELD == \"hi\"" on each kind of string field */
static void string_filter(struct __test_metadata *_metadata,
			  struct _test_data_ftrace *self, const char *name,
			  const char *filter, int which)
{
	static const char *const vals[] = { "hi", "ho", "hi", "hit", "h", "" };
	const char *s[3];
	int i, w, n = 0;

	w = flt_reg(self->fd, name);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, ev_write(name, "filter", filter));
	ASSERT_EQ(0, ue_enable(name, true));

	for (i = 0; i < 6; i++) {
		s[0] = s[1] = s[2] = "hi";
		s[which] = vals[i];
		ASSERT_LT(0, flt_write(self->fd, w, i, s[0], s[1], s[2]));
	}

	/* Records 0 and 2 only */
	ASSERT_EQ(2, ue_trace_lines(name, self->lines, MAX_LINES));
	for (i = 0; i < 6; i += 2) {
		char want[64];

		if (strcmp(vals[i], "hi"))
			continue;
		snprintf(want, sizeof(want), "count=%d msg=hi rmsg=hi dmsg=hi", i);
		EXPECT_STREQ(want, self->lines[n]);
		n++;
	}
}

TEST_F(ftrace, filter_static_string)
{
	string_filter(_metadata, self, PREFIX "fstr", "msg == \"hi\"\n", 0);
}

TEST_F(ftrace, filter_rel_loc_string)
{
	if (!ue_have_rel_loc_filters()) {
		/* Refused when written, never accepted and silently false */
		ASSERT_LE(0, flt_reg(self->fd, PREFIX "frel"));
		ASSERT_EQ(-EINVAL, ev_write(PREFIX "frel", "filter",
					    "rmsg == \"hi\"\n"));
		return;
	}
	string_filter(_metadata, self, PREFIX "frel", "rmsg == \"hi\"\n", 1);
}

TEST_F(ftrace, filter_data_loc_string)
{
	string_filter(_metadata, self, PREFIX "fdat", "dmsg == \"hi\"\n", 2);
}

TEST_F(ftrace, filter_glob_and_combined)
{
	const char *name = PREFIX "fglob";
	int w;

	w = flt_reg(self->fd, name);
	ASSERT_LE(0, w);
	if (!ue_have_rel_loc_filters()) {
		ASSERT_EQ(-EINVAL, ev_write(name, "filter",
					    "rmsg ~ \"h*\" && dmsg != \"no\" && count < 100\n"));
		return;
	}
	ASSERT_EQ(0, ev_write(name, "filter",
			      "rmsg ~ \"h*\" && dmsg != \"no\" && count < 100\n"));
	ASSERT_EQ(0, ue_enable(name, true));

	ASSERT_LT(0, flt_write(self->fd, w, 1, "", "hello", "yes"));	/* in */
	ASSERT_LT(0, flt_write(self->fd, w, 2, "", "xhello", "yes"));	/* rmsg */
	ASSERT_LT(0, flt_write(self->fd, w, 3, "", "h", "no"));	/* dmsg */
	ASSERT_LT(0, flt_write(self->fd, w, 100, "", "h", "yes"));	/* count */
	ASSERT_LT(0, flt_write(self->fd, w, 5, "", "hz", ""));	/* in */

	ASSERT_EQ(2, ue_trace_lines(name, self->lines, MAX_LINES));
	EXPECT_STREQ("count=1 msg= rmsg=hello dmsg=yes", self->lines[0]);
	EXPECT_STREQ("count=5 msg= rmsg=hz dmsg=", self->lines[1]);
}

/* One record of a "u32 count" event: its write index w, then v */
static void write_count(struct __test_metadata *_metadata, int fd, int w,
			__u32 v)
{
	__u32 rec[2] = { w, v };

	ASSERT_EQ(8, write(fd, rec, sizeof(rec)));
}

/* --- triggers ------------------------------------------------------------ */

TEST_F(ftrace, traceoff_and_traceon_triggers)
{
	const char *off = PREFIX "toff", *on = PREFIX "ton";
	int i, woff = -1, won = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "toff u32 count", NULL, &woff));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "ton u32 count", NULL, &won));
	ASSERT_EQ(0, ev_write(off, "trigger", "traceoff if count == 3\n"));
	on_teardown(self, off, "trigger", "!traceoff\n");
	ASSERT_EQ(0, ev_write(on, "trigger", "traceon\n"));
	on_teardown(self, on, "trigger", "!traceon\n");
	ASSERT_EQ(0, ue_enable(off, true));
	ASSERT_EQ(0, ue_enable(on, true));
	ASSERT_TRUE(tracing_on());

	/* The record that matches goes in, then tracing stops */
	for (i = 1; i <= 5; i++)
		write_count(_metadata, self->fd, woff, i);
	ASSERT_FALSE(tracing_on());
	ASSERT_EQ(3, ue_trace_lines(off, self->lines, MAX_LINES));
	EXPECT_STREQ("count=1", self->lines[0]);
	EXPECT_STREQ("count=2", self->lines[1]);
	EXPECT_STREQ("count=3", self->lines[2]);

	/* traceon (unconditional) turns tracing on before its record */
	write_count(_metadata, self->fd, won, 77);
	ASSERT_TRUE(tracing_on());
	ASSERT_EQ(1, ue_trace_lines(on, self->lines, MAX_LINES));
	EXPECT_STREQ("count=77", self->lines[0]);

	write_count(_metadata, self->fd, woff, 6);
	ASSERT_TRUE(tracing_on());
	ASSERT_EQ(4, ue_trace_lines(off, self->lines, MAX_LINES));
	EXPECT_STREQ("count=6", self->lines[3]);

	ASSERT_EQ(0, ev_write(off, "trigger", "!traceoff\n"));
	ASSERT_EQ(0, ev_write(on, "trigger", "!traceon\n"));
}

TEST_F(ftrace, hist_keys_count)
{
	const char *name = PREFIX "hist";
	static const __u32 counts[] = { 3, 1, 2, 3, 2, 3 };
	static char buf[65536];
	__u32 rec[2];
	int i, s = -1;

	UE_NEED_HIST_TRIGGERS();

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "hist u32 count", &s, (int *)&rec[0]));
	ASSERT_EQ(0, ev_write(name, "trigger", "hist:keys=count\n"));
	on_teardown(self, name, "trigger", "!hist:keys=count\n");

	/* A hist trigger alone attaches ftrace, without records in trace */
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->page[s]);
	for (i = 0; i < 6; i++) {
		rec[1] = counts[i];
		ASSERT_EQ(8, write(self->fd, rec, sizeof(rec)));
	}
	ASSERT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));

	ASSERT_LT(0, ev_read(name, "hist", buf, sizeof(buf)));
	ASSERT_NE(NULL, strstr(buf, "\nTotals:\n    Hits: 6\n    Entries: 3\n    Dropped: 0\n")) {
		TH_LOG("hist:\n%s", buf);
	}
	/* Sorted by hitcount */
	ASSERT_EQ(3, lines_with_prefix(buf, "{ ", self->lines, MAX_LINES));
	EXPECT_STREQ("{ count:          1 } hitcount:          1", self->lines[0]);
	EXPECT_STREQ("{ count:          2 } hitcount:          2", self->lines[1]);
	EXPECT_STREQ("{ count:          3 } hitcount:          3", self->lines[2]);

	ASSERT_EQ(0, ev_write(name, "trigger", "!hist:keys=count\n"));
	ASSERT_EQ(0, self->page[s]);
}

/* hist keys on a char[N] string and on a __rel_loc string */
TEST_F(ftrace, hist_string_keys)
{
	const char *name = PREFIX "hists";
	static char buf[65536];
	char want[3][UE_LINE_MAX];
	int i, w;

	UE_NEED_HIST_TRIGGERS();

	w = flt_reg(self->fd, name);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, ev_write(name, "trigger", "hist:keys=rmsg:vals=count\n"));
	on_teardown(self, name, "trigger", "!hist:keys=rmsg:vals=count\n");
	ASSERT_EQ(0, ev_write(name, "trigger", "hist:keys=msg\n"));
	on_teardown(self, name, "trigger", "!hist:keys=msg\n");

	ASSERT_LT(0, flt_write(self->fd, w, 10, "s1", "bb", "d"));
	ASSERT_LT(0, flt_write(self->fd, w, 20, "s2", "a", "d"));
	ASSERT_LT(0, flt_write(self->fd, w, 30, "s2", "bb", "d"));

	ASSERT_LT(0, ev_read(name, "hist", buf, sizeof(buf)));
	ASSERT_EQ(4, lines_with_prefix(buf, "{ ", self->lines, MAX_LINES)) {
		TH_LOG("hist:\n%s", buf);
	}
	/* hist triggers show in the order they were added (list_add_tail) */
	snprintf(want[0], UE_LINE_MAX, "{ rmsg: %-50s } hitcount:          1  count:         20", "a");
	snprintf(want[1], UE_LINE_MAX, "{ rmsg: %-50s } hitcount:          2  count:         40", "bb");
	for (i = 0; i < 2; i++)
		EXPECT_STREQ(want[i], self->lines[i]);
	snprintf(want[0], UE_LINE_MAX, "{ msg: %-50s } hitcount:          1", "s1");
	snprintf(want[1], UE_LINE_MAX, "{ msg: %-50s } hitcount:          2", "s2");
	for (i = 0; i < 2; i++)
		EXPECT_STREQ(want[i], self->lines[2 + i]);
}

/* --- trace_pipe ---------------------------------------------------------- */

TEST_F(ftrace, trace_pipe_one_record)
{
	const char *name = PREFIX "pipe";
	char buf[8192], want[300];
	struct pollfd pfd;
	size_t len = 0;
	ssize_t n;
	int w, fd;

	fd = open(UE_TRACEFS "/trace_pipe", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	while (read(fd, buf, sizeof(buf)) > 0)
		;

	w = flt_reg(self->fd, name);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_LT(0, flt_write(self->fd, w, 42, "pipe", "rp", "dp"));

	/* One line, then nothing more */
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (len == 0 || buf[len - 1] != '\n') {
		ASSERT_EQ(1, poll(&pfd, 1, 10000));
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		ASSERT_LT(0, n);
		len += n;
	}
	buf[len] = '\0';
	ASSERT_EQ(buf + len - 1, strchr(buf, '\n')) {
		TH_LOG("more than one line:\n%s", buf);
	}
	snprintf(want, sizeof(want), ": %s: count=42 msg=pipe rmsg=rp dmsg=dp\n", name);
	ASSERT_NE(NULL, strstr(buf, want)) {
		TH_LOG("trace_pipe gave:\n%s", buf);
	}
	ASSERT_EQ(-1, read(fd, buf, sizeof(buf)));
	ASSERT_EQ(EAGAIN, errno);
	close(fd);

	/* Consumed: not in trace anymore */
	ASSERT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));
}

/* --- instances ----------------------------------------------------------- */

static int instance_lines(const char *inst, const char *name,
			  char lines[][UE_LINE_MAX], int max)
{
	char path[512], needle[300];

	snprintf(path, sizeof(path), "%s/trace", inst);
	snprintf(needle, sizeof(needle), ": %s: ", name);
	return ue_file_lines(path, needle, lines, max);
}

static int instance_enable(const char *inst, const char *name, bool on)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/events/user_events/%s/enable", inst, name);
	return ue_write_file(path, on ? "1\n" : "0\n", false);
}

TEST_F(ftrace, instance_only)
{
	const char *name = PREFIX "inst";
	int w = -1, s = -1;
	char desc[512];

	snprintf(self->instance, sizeof(self->instance),
		 UE_TRACEFS "/instances/" PREFIX "t1_%d", getpid());
	snprintf(desc, sizeof(desc), "%s " FLT_FIELDS, name);
	ASSERT_EQ(0, ue_reg(self->fd, desc, &s, &w));

	/* An instance made after the event has it too */
	ASSERT_EQ(0, mkdir(self->instance, 0755));
	ASSERT_EQ(0, instance_enable(self->instance, name, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->page[s]);

	ASSERT_LT(0, flt_write(self->fd, w, 1, "inst", "r", "d"));
	ASSERT_EQ(1, instance_lines(self->instance, name, self->lines, MAX_LINES));
	EXPECT_STREQ("count=1 msg=inst rmsg=r dmsg=d", self->lines[0]);
	ASSERT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));

	/* Enabled in both: the record goes to both */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_LT(0, flt_write(self->fd, w, 2, "both", "r", "d"));
	ASSERT_EQ(2, instance_lines(self->instance, name, self->lines, MAX_LINES));
	EXPECT_STREQ("count=2 msg=both rmsg=r dmsg=d", self->lines[1]);
	ASSERT_EQ(1, ue_trace_lines(name, self->lines, MAX_LINES));
	EXPECT_STREQ("count=2 msg=both rmsg=r dmsg=d", self->lines[0]);

	/* Only the top level */
	ASSERT_EQ(0, instance_enable(self->instance, name, false));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->page[s]);
	ASSERT_LT(0, flt_write(self->fd, w, 3, "top", "r", "d"));
	ASSERT_EQ(2, instance_lines(self->instance, name, self->lines, MAX_LINES));
	ASSERT_EQ(2, ue_trace_lines(name, self->lines, MAX_LINES));

	/* Neither */
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(0, self->page[s]);
	ASSERT_EQ(-EBADF, flt_write(self->fd, w, 4, "none", "r", "d"));

	ASSERT_EQ(0, rmdir(self->instance));
	self->instance[0] = '\0';
}

/* Removing an instance with the event enabled in it detaches it */
TEST_F(ftrace, instance_removed_while_enabled)
{
	const char *name = PREFIX "instrm";
	char inst[256];
	int w = -1, s = -1;
	char desc[512];

	snprintf(desc, sizeof(desc), "%s " FLT_FIELDS, name);
	ASSERT_EQ(0, ue_reg(self->fd, desc, &s, &w));
	snprintf(inst, sizeof(inst), UE_TRACEFS "/instances/" PREFIX "t2_%d", getpid());
	ASSERT_EQ(0, mkdir(inst, 0755));
	snprintf(self->instance, sizeof(self->instance), "%s", inst);
	ASSERT_EQ(0, instance_enable(inst, name, true));
	ASSERT_EQ(EVENT_STATUS_FTRACE, self->page[s]);
	ASSERT_LT(0, flt_write(self->fd, w, 1, "x", "r", "d"));

	ASSERT_EQ(0, rmdir(inst));
	self->instance[0] = '\0';
	ASSERT_EQ(0, self->page[s]);
	ASSERT_EQ(-EBADF, flt_write(self->fd, w, 2, "x", "r", "d"));

	/* Still usable at the top level, and deletable */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_LT(0, flt_write(self->fd, w, 3, "x", "r", "d"));
	ASSERT_EQ(1, ue_trace_lines(name, self->lines, MAX_LINES));
	EXPECT_STREQ("count=3 msg=x rmsg=r dmsg=d", self->lines[0]);
	ASSERT_EQ(0, ue_enable(name, false));
	ue_drop_fd(&self->fd);
	ASSERT_EQ(0, ue_del(name));
}

/* --- trace-cmd ----------------------------------------------------------- */

#define TC_DESC PREFIX "tc u8 a; s8 b; u16 c; s16 d; u32 e; s32 f; u64 g; s64 h; " \
	"int i; unsigned int j; short k; unsigned short l; char m; unsigned char n; " \
	"char[8] o; unsigned char[4] p; u8[4] q; struct foo r 4; " \
	"__data_loc char[] s; __rel_loc char[] t; __data_loc u8[] u"

/* The payload of TC_DESC: 76 bytes of fields, then the dynamic data */
static size_t tc_payload(unsigned char *p)
{
	const int hdr = ue_hdr_size();
	/* Negative 8/16-bit values: see trace_cmd_narrow_signed_fields */
	struct __attribute__((packed)) {
		__u8 a; __s8 b; __u16 c; __s16 d; __u32 e; __s32 f;
		__u64 g; __s64 h; __s32 i; __u32 j; __s16 k; __u16 l;
		__s8 m; __u8 n; char o[8]; unsigned char p[4];
		__u8 q[4], r[4];
		__u32 s, t, u;
		char s_data[3], t_data[3];
		__u8 u_data[2];
	} pl = {
		200, 100, 60000, 30000, 4000000000u, -2000000000,
		18000000000000000000ull, -9000000000000000000ll,
		-5, 4294967295u, 7, 65535, 8, 255, "octet", "pq",
		{ 1, 2, 3, 4 }, { 0x0a, 0x0b, 0x0c, 0x0d },
		/* s: record hdr + 76; t: 79 - 72 (t ends at 72); u: hdr + 82 */
		DYN_LOC(hdr + 76, 3), DYN_LOC(7, 3), DYN_LOC(hdr + 82, 2),
		"dl", "rl", { 0xaa, 0xbb },
	};

	_Static_assert(sizeof(pl) == 84, "the payload of TC_DESC");
	memcpy(p, &pl, sizeof(pl));
	return sizeof(pl);
}

/* A second TC_DESC payload: zeros and empty strings */
static size_t tc_payload_empty(unsigned char *p)
{
	const int hdr = ue_hdr_size();
	__u32 s = DYN_LOC(hdr + 76, 1), t = DYN_LOC(77 - 72, 1), u = DYN_LOC(hdr + 78, 0);

	memset(p, 0, 78);
	memcpy(p + 64, &s, 4);
	memcpy(p + 68, &t, 4);
	memcpy(p + 72, &u, 4);

	return 78;
}

#define TC_TEXT "a=200 b=100 c=60000 d=30000 e=4000000000 f=-2000000000 " \
	"g=18000000000000000000 h=-9000000000000000000 i=-5 j=4294967295 " \
	"k=7 l=65535 m=8 n=255 o=octet p=pq q=01 02 03 04 r=0a 0b 0c 0d " \
	"s=dl t=rl u=aa bb"

#define TC_TEXT_EMPTY "a=0 b=0 c=0 d=0 e=0 f=0 g=0 h=0 i=0 j=0 k=0 l=0 m=0 n=0 " \
	"o= p= q=00 00 00 00 r=00 00 00 00 s= t= u="

/*
 * trace-cmd record around a writer, then trace-cmd report: one line per
 * record, "NAME:" and the fields as the print fmt renders them. Returns
 * the number of lines, their texts in lines[]; -1 if a command failed.
 */
static int trace_cmd(struct __test_metadata *_metadata, const char *desc,
		     const char *name, const char *hex,
		     char lines[][UE_LINE_MAX], int max)
{
	static char event[300], needle[300];
	char *exe = (char *)self_exe();
	char *rec_argv[] = { "trace-cmd", "record", "-q", "-e", event,
			     "-o", "tc.dat", "--", exe, NULL };
	char *rep_argv[] = { "trace-cmd", "report", "-i", "tc.dat", NULL };

	snprintf(event, sizeof(event), "user_events:%s", name);
	snprintf(needle, sizeof(needle), " %s:", name);
	return ue_record_report(_metadata, rec_argv, rep_argv, "tc.dat", desc,
				hex, needle, lines, max);
}

/* Every fixed-size type and the dynamic strings and __data_loc u8[] */
TEST_F_TIMEOUT(ftrace, trace_cmd_record_report, UE_TIMEOUT(280))
{
	static char hex[4096];
	unsigned char p[256];
	int n;

	ASSERT_EQ(0, ue_reg(self->fd, TC_DESC, NULL, NULL));

	hex_of(hex, p, tc_payload(p));
	hex_append(hex, p, tc_payload_empty(p));

	n = trace_cmd(_metadata, TC_DESC, PREFIX "tc", hex, self->lines, MAX_LINES);
	ASSERT_EQ(2, n) {
		log_file("record.err");
		log_file("report.out");
	}
	EXPECT_STREQ(TC_TEXT, self->lines[0]);
	EXPECT_STREQ(TC_TEXT_EMPTY, self->lines[1]);
}

/* Negative values of the 8 and 16-bit signed types */
TEST_F_TIMEOUT(ftrace, trace_cmd_narrow_signed_fields, UE_TIMEOUT(280))
{
	const char *desc = PREFIX "tcs s8 b; s16 d; short k; char m; s32 f";
	static char hex[256];
	unsigned char p[16];
	__s8 b = -100, m = -8;
	__s16 d = -30000, k = -7;
	__s32 f = -2000000000;
	int lines;

	ASSERT_EQ(0, ue_reg(self->fd, desc, NULL, NULL));

	memcpy(p, &b, 1);
	memcpy(p + 1, &d, 2);
	memcpy(p + 3, &k, 2);
	memcpy(p + 5, &m, 1);
	memcpy(p + 6, &f, 4);
	hex_of(hex, p, 10);

	lines = trace_cmd(_metadata, desc, PREFIX "tcs", hex, self->lines, MAX_LINES);
	UE_ASSERT_ONE_LINE(lines);
	EXPECT_STREQ("b=-100 d=-30000 k=-7 m=-8 f=-2000000000", self->lines[0]);
}

/* __rel_loc u8[]: bytes from the end of the field */
TEST_F_TIMEOUT(ftrace, trace_cmd_rel_loc_u8_array, UE_TIMEOUT(280))
{
	const char *desc = PREFIX "tcv u32 n; __rel_loc u8[] v";
	static char hex[256];
	unsigned char p[16];
	__u32 n = 1, v = DYN_LOC(0, 2);
	int lines;

	ASSERT_EQ(0, ue_reg(self->fd, desc, NULL, NULL));

	memcpy(p, &n, 4);
	memcpy(p + 4, &v, 4);
	memcpy(p + 8, "\xcc\xdd", 2);
	hex_of(hex, p, 10);

	lines = trace_cmd(_metadata, desc, PREFIX "tcv", hex, self->lines, MAX_LINES);
	UE_ASSERT_ONE_LINE(lines);
	EXPECT_STREQ("n=1 v=cc dd", self->lines[0]);
}

TEST_HARNESS_MAIN
