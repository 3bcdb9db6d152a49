// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: the descriptor grammar beyond plain integers
 * and char[N] (__data_loc / __rel_loc dynamic arrays, struct fields,
 * u8[N], flags, separators, limits), the format files those produce,
 * validation of dynamic locations in written payloads, and
 * re-registration of an existing name.
 *
 * Every event created here is named "ue_g_*" and is disabled and deleted
 * again by the fixture teardown.
 */
#include <sys/uio.h>

#include "ue_test.h"
#include "ue_rec.h"

#define PREFIX "ue_g_"

#define MAX_LINES 16

FIXTURE(grammar) {
	int fd;
	int fd2;
	char lines[MAX_LINES][UE_LINE_MAX];
};

FIXTURE_SETUP(grammar)
{
	UE_ASSERT_HDR_SIZE();
	self->fd2 = -1;
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_trace_clear());
}

FIXTURE_TEARDOWN(grammar)
{
	ue_fds_teardown(_metadata, self->fd, self->fd2, PREFIX);
}

/*
 * Everything of events/user_events/NAME/format after the common fields,
 * once what comes before (name, ID, the kernel's common fields, the empty
 * line after them) has been checked; NULL if that part is not as expected.
 */
static const char *format_tail(const char *name)
{
	static char buf[65536], head[8192];
	char path[512];
	size_t len;

	if (ue_read_file(ue_event_path(path, sizeof(path), name, "format"),
			 buf, sizeof(buf)) < 0 ||
	    ue_format_want(head, sizeof(head), name, ue_event_id(name), ""))
		return NULL;

	len = strlen(head);
	if (strncmp(buf, head, len))
		return NULL;

	return buf + len;
}

/* Field line LINE, written for an 8-byte header, as the format shows it */
static const char *field_line(const char *line)
{
	static char buf[UE_LINE_MAX];

	if (ue_shift_offsets(buf, sizeof(buf), line, ue_hdr_size() - UE_HDR_BASE))
		return "(too long)";

	return buf;
}

/* struct rec, rec_init(), rec_put(): ue_rec.h */

static void rec_u32(struct rec *r, __u32 v)
{
	rec_put(r, &v, sizeof(v));
}

static void rec_u16(struct rec *r, __u16 v)
{
	rec_put(r, &v, sizeof(v));
}

/* write() of the record: the byte count, or -errno */
static int rec_write(int fd, const struct rec *r)
{
	ssize_t n = write(fd, r->d, r->len);

	return n < 0 ? -errno : (int)n;
}

/* Register desc on fd and enable NAME in ftrace; the write index or -errno */
/*
 * "<name> <type> f00;<type> f01;..." of exactly len characters: fields
 * are added while they fit, the last field name is padded with '_'.
 */
static char *desc_of_len(const char *name, const char *type, size_t len)
{
	char *desc = malloc(len + 300);
	size_t pos, step = strlen(type) + 5;
	unsigned int i;

	if (!desc)
		return NULL;

	pos = sprintf(desc, "%s %s f00", name, type);
	for (i = 1; pos + step + 1 <= len && i < 60; i++)
		pos += sprintf(desc + pos, ";%s f%02u", type, i);
	while (pos < len)
		desc[pos++] = '_';
	desc[pos] = '\0';

	return desc;
}

/* --- field grammar and format files ------------------------------------ */

TEST_F(grammar, data_loc_char_format)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "dloc __data_loc char[] s",
			    NULL, NULL));
	ASSERT_TRUE(ue_event_exists(PREFIX "dloc"));
	UE_ASSERT_FORMAT(PREFIX "dloc",
		"\tfield:__data_loc char[] s;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"s=%s\", __get_str(s)\n");
}

/*
 * The tracing core prints a "[" type with no fixed length as
 * "TYPE NAME[]", except for "__data_loc" types (f_show() in
 * kernel/trace/trace_events.c, same in 6.1 and 6.12): a "__rel_loc char[]"
 * field reads "__rel_loc char s[]", as with in-kernel user_events.
 */
TEST_F(grammar, rel_loc_char_format)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rloc __rel_loc char[] s",
			    NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "rloc",
		"\tfield:__rel_loc char s[];\toffset:8;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"s=%s\", __get_rel_str(s)\n");
}

TEST_F(grammar, rel_loc_u8_format)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rloc8 __rel_loc u8[] x",
			    NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "rloc8",
		"\tfield:__rel_loc u8 x[];\toffset:8;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"x=%s\", __print_hex(__get_rel_dynamic_array(x), "
		"REC->x >> 16)\n");
}

TEST_F(grammar, data_loc_u8_format)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "dloc8 __data_loc u8[] x",
			    NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "dloc8",
		"\tfield:__data_loc u8[] x;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"x=%s\", __print_hex(__get_dynamic_array(x), "
		"__get_dynamic_array_len(x))\n");
}

TEST_F(grammar, struct_format)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "st struct foo x 16", NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "st",
		"\tfield:struct foo x;\toffset:8;\tsize:16;\tsigned:0;\n"
		"\n"
		"print fmt: \"x=%s\", __print_hex(REC->x, 16)\n");
}

TEST_F(grammar, u8_array_format)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "u8a u8[4] arr", NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "u8a",
		"\tfield:u8 arr[4];\toffset:8;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"arr=%s\", __print_hex(REC->arr, 4)\n");
}

/* Offsets pack every kind of field in declaration order */
TEST_F(grammar, mixed_fields_format)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "mix u32 a;__data_loc char[] s; "
			    "__rel_loc char[] r;struct foo st 16; u8[4] arr; "
			    "__rel_loc u8[] b; u64 z", NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "mix",
		"\tfield:u32 a;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:__data_loc char[] s;\toffset:12;\tsize:4;\tsigned:0;\n"
		"\tfield:__rel_loc char r[];\toffset:16;\tsize:4;\tsigned:0;\n"
		"\tfield:struct foo st;\toffset:20;\tsize:16;\tsigned:0;\n"
		"\tfield:u8 arr[4];\toffset:36;\tsize:4;\tsigned:0;\n"
		"\tfield:__rel_loc u8 b[];\toffset:40;\tsize:4;\tsigned:0;\n"
		"\tfield:u64 z;\toffset:44;\tsize:8;\tsigned:0;\n"
		"\n"
		"print fmt: \"a=%u s=%s r=%s st=%s arr=%s b=%s z=%llu\", "
		"REC->a, __get_str(s), __get_rel_str(r), __print_hex(REC->st, 16), "
		"__print_hex(REC->arr, 4), __print_hex(__get_rel_dynamic_array(b), "
		"REC->b >> 16), REC->z\n");
}

/* The string fields of the mixed event, written and read back */
TEST_F(grammar, mixed_fields_strings_in_trace)
{
	const int hdr = ue_hdr_size();
	const char *name = PREFIX "mixw";
	struct rec r;
	int w;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "mixw u32 a;__data_loc char[] s; "
			      "__rel_loc char[] r; u16 m", name);

	/* payload: a 0..4, s 4..8, r 8..12, m 12..14, "dyn" 14, "rel" 18 */
	rec_init(&r, w);
	rec_u32(&r, 7);
	rec_u32(&r, DYN_LOC(hdr + 14, 4));	/* record offset of "dyn" */
	rec_u32(&r, DYN_LOC(18 - 12, 4));	/* from the end of r */
	rec_u16(&r, 65535);
	rec_put(&r, "dyn", 4);
	rec_put(&r, "rel", 4);
	ASSERT_EQ(4 + 22, r.len);
	ASSERT_EQ(4 + 22, rec_write(self->fd, &r));

	UE_ASSERT_TRACE_LINES(name, self->lines, "a=7 s=dyn r=rel m=65535");
}

/*
 * The trace line renders a field the way its print fmt says: the kernel
 * (trace_print_hex_seq(), concatenate=false) and libtraceevent both print
 * __print_hex() as bytes separated by spaces.
 */
TEST_F(grammar, hex_fields_trace_text_matches_print_fmt)
{
	const char *name = PREFIX "hex";
	struct rec r;
	static const unsigned char arr[4] = { 0xde, 0xad, 0xbe, 0xef };
	static const unsigned char st[4] = { 1, 2, 3, 4 };
	int w;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "hex u8[4] arr; struct foo st 4; "
			      "__rel_loc u8[] b; __data_loc u8[] d", name);

	/* payload: arr 0..4, st 4..8, b 8..12, d 12..16, b data 16, d 18 */
	rec_init(&r, w);
	rec_put(&r, arr, 4);
	rec_put(&r, st, 4);
	rec_u32(&r, DYN_LOC(16 - 12, 2));
	rec_u32(&r, DYN_LOC(ue_hdr_size() + 18, 1));
	rec_put(&r, "\x0a\x0b", 2);
	rec_put(&r, "\x0c", 1);
	ASSERT_EQ(4 + 19, rec_write(self->fd, &r));

	UE_ASSERT_TRACE_LINES(name, self->lines,
			      "arr=de ad be ef st=01 02 03 04 b=0a 0b d=0c");
}

TEST_F(grammar, bpf_iter_flag_accepted)
{
	int s1 = -1, w1 = -1, s2 = -2, w2 = -2;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "fl:BPF_ITER u32 a;__rel_loc char[] s",
			    &s1, &w1));
	ASSERT_TRUE(ue_event_exists(PREFIX "fl"));
	ASSERT_FALSE(ue_event_exists(PREFIX "fl:BPF_ITER"));
	UE_ASSERT_FORMAT(PREFIX "fl",
		"\tfield:u32 a;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:__rel_loc char s[];\toffset:12;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"a=%u s=%s\", REC->a, __get_rel_str(s)\n");

	/* The same again is the same event */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "fl:BPF_ITER u32 a; __rel_loc char[] s",
			    &s2, &w2));
	ASSERT_EQ(s1, s2);
	ASSERT_EQ(w1, w2);

	/* A flag and no fields */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "fl2:BPF_ITER", NULL, &w2));
	ASSERT_EQ(w1 + 1, w2);
	ASSERT_TRUE(ue_event_exists(PREFIX "fl2"));
}

/*
 * Each of the @n descriptors @bad is refused with EINVAL, and creates no
 * event: the i-th is named @stem followed by i + 1
 */
static void expect_einval(struct __test_metadata *_metadata, int fd,
			  const char *const *bad, unsigned int n,
			  const char *stem)
{
	char name[64];
	unsigned int i;

	for (i = 0; i < n; i++) {
		EXPECT_EQ(-EINVAL, ue_reg(fd, bad[i], NULL, NULL)) {
			TH_LOG("descriptor \"%s\"", bad[i]);
		}
		snprintf(name, sizeof(name), "%s%u", stem, i + 1);
		EXPECT_FALSE(ue_event_exists(name)) {
			TH_LOG("%s was created", name);
		}
	}
}

TEST_F(grammar, unknown_flag_einval)
{
	static const char *const bad[] = {
		PREFIX "uf1:BOGUS u32 a",
		PREFIX "uf2:BPF_ITER,BOGUS u32 a",
		PREFIX "uf3:bpf_iter u32 a",
		PREFIX "uf4:BOGUS",
		PREFIX "uf5:BPF_ITERX __rel_loc char[] s",
	};

	expect_einval(_metadata, self->fd, bad, sizeof(bad) / sizeof(bad[0]),
		      PREFIX "uf");
}

TEST_F(grammar, separators)
{
	static const char *const descs[] = {
		PREFIX "sep1 u32 a;__rel_loc char[] b",
		PREFIX "sep2 u32 a; __rel_loc char[] b",
		PREFIX "sep3 u32 a;__rel_loc char[] b;",
		PREFIX "sep4 u32 a; __rel_loc char[] b; ",
		PREFIX "sep5   u32 a  ;  __rel_loc char[] b  ;",
	};
	const char *want =
		"\tfield:u32 a;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:__rel_loc char b[];\toffset:12;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"a=%u b=%s\", REC->a, __get_rel_str(b)\n";
	char name[64];
	unsigned int i;

	for (i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
		snprintf(name, sizeof(name), PREFIX "sep%u", i + 1);
		ASSERT_EQ(0, ue_reg(self->fd, descs[i], NULL, NULL)) {
			TH_LOG("descriptor \"%s\"", descs[i]);
		}
		UE_ASSERT_FORMAT(name, want);
	}
}

/*
 * Only ASCII white space separates: Latin-1 NBSP (0xa0), which the kernel's
 * isspace() counts, is part of the word it touches, and no name may hold it.
 */
TEST_F(grammar, nbsp_is_not_white_space)
{
	static const char *const descs[] = {
		"\xa0" PREFIX "nb1 u32 a",
		PREFIX "nb2\xa0u32 a",
		PREFIX "nb3\xa0 u32 a",
		PREFIX "nb4 u32 a\xa0",
		PREFIX "nb5 u32\xa0" "a",
		PREFIX "nb6 u32 a;\xa0u32 b",
		PREFIX "nb7 u32 a\xa0;u32 b",
	};
	unsigned int i;

	for (i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
		ASSERT_EQ(-EINVAL, ue_reg(self->fd, descs[i], NULL, NULL)) {
			TH_LOG("descriptor %u", i + 1);
		}
	}
	ASSERT_FALSE(ue_event_exists(PREFIX "nb1"));
	ASSERT_FALSE(ue_event_exists(PREFIX "nb4"));
	/* The same with ASCII spaces is fine */
	ASSERT_EQ(0, ue_reg(self->fd, " " PREFIX "nb8 u32 a; u32 b ", NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "nb8",
		"\tfield:u32 a;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:u32 b;\toffset:12;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"a=%u b=%u\", REC->a, REC->b\n");
}

TEST_F(grammar, descriptor_length_limit)
{
	char *desc;

	/* 511 characters (512 with the NUL) is the longest descriptor */
	desc = desc_of_len(PREFIX "dl511", "__rel_loc char[]", UE_DESC_MAX);
	ASSERT_NE(NULL, desc);
	ASSERT_EQ(UE_DESC_MAX, (int)strlen(desc));
	EXPECT_EQ(0, ue_reg(self->fd, desc, NULL, NULL)) {
		TH_LOG("descriptor \"%s\"", desc);
	}
	free(desc);
	EXPECT_TRUE(ue_event_exists(PREFIX "dl511"));

	desc = desc_of_len(PREFIX "dl512", "__rel_loc char[]", UE_DESC_MAX + 1);
	ASSERT_NE(NULL, desc);
	ASSERT_EQ(UE_DESC_MAX + 1, (int)strlen(desc));
	EXPECT_EQ(-EINVAL, ue_reg(self->fd, desc, NULL, NULL));
	free(desc);
	EXPECT_FALSE(ue_event_exists(PREFIX "dl512"));

	desc = desc_of_len(PREFIX "dl4k", "u32", 4000);
	ASSERT_NE(NULL, desc);
	EXPECT_EQ(-EINVAL, ue_reg(self->fd, desc, NULL, NULL));
	free(desc);
	EXPECT_FALSE(ue_event_exists(PREFIX "dl4k"));
}

TEST_F(grammar, name_length_limit)
{
	char name[UE_NAME_MAX + 2];
	char desc[1024];

	/* Event name: 255 characters, then 256 */
	memset(name, 'n', UE_NAME_MAX);
	memcpy(name, PREFIX, strlen(PREFIX));
	name[UE_NAME_MAX] = '\0';
	snprintf(desc, sizeof(desc), "%s __rel_loc char[] s", name);
	ASSERT_EQ(0, ue_reg(self->fd, desc, NULL, NULL));
	ASSERT_TRUE(ue_event_exists(name));

	memset(name, 'm', UE_NAME_MAX + 1);
	memcpy(name, PREFIX, strlen(PREFIX));
	name[UE_NAME_MAX + 1] = '\0';
	snprintf(desc, sizeof(desc), "%s __rel_loc char[] s", name);
	ASSERT_EQ(-EINVAL, ue_reg(self->fd, desc, NULL, NULL));
	ASSERT_FALSE(ue_event_exists(name));

	/* Field name: 255 characters, then 256 */
	memset(name, 'f', UE_NAME_MAX);
	name[UE_NAME_MAX] = '\0';
	snprintf(desc, sizeof(desc), PREFIX "fn255 __data_loc char[] %s", name);
	ASSERT_EQ(0, ue_reg(self->fd, desc, NULL, NULL));
	ASSERT_TRUE(ue_event_exists(PREFIX "fn255"));

	memset(name, 'f', UE_NAME_MAX + 1);
	name[UE_NAME_MAX + 1] = '\0';
	snprintf(desc, sizeof(desc), PREFIX "fn256 __data_loc char[] %s", name);
	ASSERT_EQ(-EINVAL, ue_reg(self->fd, desc, NULL, NULL));
	ASSERT_FALSE(ue_event_exists(PREFIX "fn256"));
}

/*
 * Names of the files the tracing core puts in a system directory or in
 * events/ are refused through every way of creating an event (issue 23,
 * section 3): else "enable" hides events/user_events/enable on 6.12 and
 * loses its own directory on 6.1. Neighbouring names are accepted.
 */
TEST_F(grammar, reserved_names_refused)
{
	static const char *const names[] = {
		"enable", "filter", "header_page", "header_event",
	};
	static const char *const fine[] = {
		PREFIX "enable", "ue_g_filter_", PREFIX "header",
	};
	char desc[128], path[512], buf[64];
	unsigned int i;
	__u32 word = 0;
	struct stat st;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(desc, sizeof(desc), "%s u32 x", names[i]);
		EXPECT_EQ(-EINVAL, ue_reg(self->fd, desc, NULL, NULL));
		EXPECT_EQ(-EINVAL, ue_wreg(self->fd, desc, &word, 4, 0, 0,
					   NULL));
		EXPECT_EQ(-EINVAL, ue_wreg(self->fd, desc, &word, 4, 1,
					   USER_EVENT_REG_MULTI_FORMAT, NULL));
		snprintf(desc, sizeof(desc), "u:%s u32 x", names[i]);
		EXPECT_EQ(-EINVAL, ue_write_file(UE_TRACEFS "/dynamic_events",
						 desc, false));
		snprintf(path, sizeof(path), UE_TRACEFS "/events/user_events/%s",
			 names[i]);
		/* Whatever the core keeps there is not an event directory */
		EXPECT_FALSE(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
		EXPECT_EQ(0, word);
	}

	for (i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		snprintf(desc, sizeof(desc), "%s u32 x", fine[i]);
		EXPECT_EQ(0, ue_reg(self->fd, desc, NULL, NULL));
		EXPECT_TRUE(ue_event_exists(fine[i]));
	}

	/*
	 * The system directory exists now: its own switch is a file the
	 * administrator writes, and no event directory hides it
	 */
	EXPECT_EQ(0, ue_write_file(UE_TRACEFS "/events/user_events/enable",
				   "0", true));
	ASSERT_LT(0, ue_read_file(UE_TRACEFS "/events/user_events/enable",
				  buf, sizeof(buf)));
	EXPECT_EQ('0', buf[0]);
}

/* "<name> u8 f0;u8 f1;...;u8 f<n-1>" */
static void desc_fields(char *desc, const char *name, int n)
{
	int i, pos = sprintf(desc, "%s ", name);

	for (i = 0; i < n; i++)
		pos += sprintf(desc + pos, "%su8 f%d", i ? ";" : "", i);
}

TEST_F(grammar, field_count_limit)
{
	char desc[UE_DESC_MAX + 1];
	const char *got;
	int n = 0;

	desc_fields(desc, PREFIX "f64", 64);
	ASSERT_GT(UE_DESC_MAX, (int)strlen(desc));
	ASSERT_EQ(0, ue_reg(self->fd, desc, NULL, NULL));

	/* 64 field lines after the common fields, the last at header + 63 */
	got = format_tail(PREFIX "f64");
	ASSERT_NE(NULL, got);
	for (const char *p = got; (p = strstr(p, "\tfield:")); p++)
		n++;
	ASSERT_EQ(64, n);
	ASSERT_NE(NULL, strstr(got, field_line("\tfield:u8 f63;\toffset:71;\tsize:1;\tsigned:0;\n")));

	desc_fields(desc, PREFIX "f65", 65);
	ASSERT_GT(UE_DESC_MAX, (int)strlen(desc));
	ASSERT_EQ(-EINVAL, ue_reg(self->fd, desc, NULL, NULL));
	ASSERT_FALSE(ue_event_exists(PREFIX "f65"));
}

TEST_F(grammar, array_size_limits)
{
	static const char *const bad[] = {
		PREFIX "as1 char[1025] s",
		PREFIX "as2 char[0] s",
		PREFIX "as3 u8[1025] s",
		PREFIX "as4 u8[0] s",
		PREFIX "as5 unsigned char[1025] s",
		PREFIX "as6 char[-1] s",
		PREFIX "as7 struct foo s 0",
		PREFIX "as8 struct foo s",
	};
	const char *got;

	expect_einval(_metadata, self->fd, bad, sizeof(bad) / sizeof(bad[0]),
		      PREFIX "as");

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "ok1 char[1024] s", NULL, NULL));
	got = format_tail(PREFIX "ok1");
	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, strstr(got, field_line("\tfield:char s[1024];\toffset:8;\tsize:1024;\t")));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "ok2 u8[1024] s", NULL, NULL));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "ok3 char[1] s", NULL, NULL));
}

/*
 * Array counts are read in base 0, as upstream reads them: decimal, "0x"
 * hexadecimal, "0" octal, at most six characters, 1..1024; in a
 * registration and in dynamic_events alike. The type keeps the count as
 * written. Upstream's dyn_test basic_types registers "char[0x14] a".
 */
static const struct {
	const char *count;
	int size;	/* bytes of the field; 0: refused with EINVAL */
} array_counts[] = {
	{ "20", 20 },
	{ "0x14", 20 },
	{ "0X14", 20 },
	{ "024", 20 },
	{ "+20", 20 },		/* kstrtouint() takes a '+' */
	{ "0x0014", 20 },	/* six characters: the longest */
	{ "0x400", 1024 },
	{ "02000", 1024 },
	{ "0x", 0 },		/* no hex digit: octal "0" then 'x' */
	{ "08", 0 },		/* '8' is not octal */
	{ "019", 0 },
	{ "0xg", 0 },
	{ "-1", 0 },
	{ "0x401", 0 },		/* 1025 > 1024 */
	{ "02001", 0 },
	{ "0x0", 0 },
	{ "00", 0 },
	{ "0x00014", 0 },	/* seven characters */
	{ "0000020", 0 },
	{ "", 0 },
};

/*
 * The format file of NAME has field "a" of SIZE bytes right after the
 * record header. (6.12's tracing core prints it "char a[20]" from the
 * field's length, 6.1's "char a[0x14]" from the type.)
 */
static bool array_field_is(const char *name, int size)
{
	int off, got;

	return !ue_format_field(name, "a", &off, &got) &&
	       off == ue_hdr_size() && got == size;
}

/* "NAME char[COUNT] a" registered through a data fd: 0 or -errno */
static int array_by_ioctl(int fd, const char *name, const char *count)
{
	char desc[128];

	snprintf(desc, sizeof(desc), "%s char[%s] a", name, count);
	return ue_reg(fd, desc, NULL, NULL);
}

/* The same, made by a write to dynamic_events */
static int array_by_dynamic_events(int fd __attribute__((unused)),
				   const char *name, const char *count)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "u:%s char[%s] a\n", name, count);
	return ue_write_file(UE_TRACEFS "/dynamic_events", cmd, false);
}

/*
 * Every count of array_counts made by @make as event PREFIX @stem<i>: the
 * field of the size it should have, or refused with EINVAL and no event
 */
static void array_counts_made_by(struct __test_metadata *_metadata, int fd,
				 const char *stem,
				 int (*make)(int fd, const char *name,
					     const char *count))
{
	char name[64];
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(array_counts); i++) {
		snprintf(name, sizeof(name), PREFIX "%s%u", stem, i);
		ret = make(fd, name, array_counts[i].count);
		if (!array_counts[i].size) {
			EXPECT_EQ(-EINVAL, ret) {
				TH_LOG("%s char[%s] a", name,
				       array_counts[i].count);
			}
			EXPECT_FALSE(ue_event_exists(name));
			continue;
		}
		ASSERT_EQ(0, ret) {
			TH_LOG("%s char[%s] a", name, array_counts[i].count);
		}
		EXPECT_TRUE(array_field_is(name, array_counts[i].size)) {
			TH_LOG("%s: format has no char a[%s] of %d bytes",
			       name, array_counts[i].count,
			       array_counts[i].size);
		}
	}
}

TEST_F(grammar, array_count_base0_register)
{
	array_counts_made_by(_metadata, self->fd, "ab", array_by_ioctl);

	/* "unsigned char[0x14]" and u8[024] too */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "abu unsigned char[0x14] a",
			    NULL, NULL));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "ab8 u8[024] a", NULL, NULL));

	/* The count as written is part of the type, as upstream compares */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "abm char[0x14] a", NULL, NULL));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "abm char[0x14] a", NULL, NULL));
	ASSERT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "abm char[20] a",
				      NULL, NULL));
}

TEST_F(grammar, array_count_base0_dynamic_events)
{
	array_counts_made_by(_metadata, self->fd, "ad", array_by_dynamic_events);
}

/* --- payload validation of __data_loc / __rel_loc ------------------------ */

/* One write of "loc + data" to a single dynamic field; -errno or count */
static int write_loc(int fd, int w, __u32 loc, const void *data, size_t len)
{
	struct rec r;

	rec_init(&r, w);
	rec_u32(&r, loc);
	rec_put(&r, data, len);

	return rec_write(fd, &r);
}

/* A record of "u32 n; <a location> s; u16 m": 1, loc, 2, then "hi" */
static int write_n_s_m(int fd, int w, __u32 loc)
{
	struct rec r;

	rec_init(&r, w);
	rec_u32(&r, 1);
	rec_u32(&r, loc);
	rec_u16(&r, 2);
	rec_put(&r, "hi", 3);

	return rec_write(fd, &r);
}

/* A record of two locations, then "x" and "yz" (with their NULs) */
static int write_x_yz(int fd, int w, __u32 loc_a, __u32 loc_b)
{
	struct rec r;

	rec_init(&r, w);
	rec_u32(&r, loc_a);
	rec_u32(&r, loc_b);
	rec_put(&r, "x\0yz", 5);

	return rec_write(fd, &r);
}

/* Event @name (@desc: one dynamic string s) gets "hello" at @loc: "s=hello" */
static void hello_at(struct __test_metadata *_metadata,
		     FIXTURE_DATA(grammar) *self, const char *name,
		     const char *desc, __u32 loc)
{
	int w = ue_reg_enabled_ok(_metadata, self->fd, desc, name);

	ASSERT_EQ(14, write_loc(self->fd, w, loc, "hello", 6));
	UE_ASSERT_TRACE_LINES(name, self->lines, "s=hello");
}

/* The same with write_n_s_m(): "n=1 s=hi m=2" */
static void hi_between_at(struct __test_metadata *_metadata,
			  FIXTURE_DATA(grammar) *self, const char *name,
			  const char *desc, __u32 loc)
{
	int w = ue_reg_enabled_ok(_metadata, self->fd, desc, name);

	ASSERT_EQ(4 + 13, write_n_s_m(self->fd, w, loc));
	UE_ASSERT_TRACE_LINES(name, self->lines, "n=1 s=hi m=2");
}

/*
 * __data_loc: offset from the start of the record, which begins with the
 * common header (ue_hdr_size(): 8 bytes, 12 on 6.1 PREEMPT_RT)
 */
TEST_F(grammar, data_loc_offset_from_record_start)
{
	hello_at(_metadata, self, PREFIX "pdl", PREFIX "pdl __data_loc char[] s",
		 DYN_LOC(ue_hdr_size() + 4, 6));
}

TEST_F(grammar, data_loc_between_fields)
{
	/* n 0..4, s 4..8, m 8..10, "hi" at payload 10 = record hdr + 10 */
	hi_between_at(_metadata, self, PREFIX "pdl2",
		      PREFIX "pdl2 u32 n; __data_loc char[] s; u16 m",
		      DYN_LOC(ue_hdr_size() + 10, 3));
}

/* __rel_loc: offset from the end of the field itself */
TEST_F(grammar, rel_loc_offset_from_field_end)
{
	hello_at(_metadata, self, PREFIX "prl", PREFIX "prl __rel_loc char[] s",
		 DYN_LOC(0, 6));
}

TEST_F(grammar, rel_loc_between_fields)
{
	/* s ends at payload 8; "hi" at payload 10: 2 bytes after it */
	hi_between_at(_metadata, self, PREFIX "prl2",
		      PREFIX "prl2 u32 n; __rel_loc char[] s; u16 m",
		      DYN_LOC(2, 3));
}

/* "hello" written at each of the @n locations @bad: refused, EFAULT */
static void expect_efault(struct __test_metadata *_metadata, int fd, int w,
			  const __u32 *bad, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		EXPECT_EQ(-EFAULT, write_loc(fd, w, bad[i], "hello", 6)) {
			TH_LOG("location %#x", bad[i]);
		}
	}
}

TEST_F(grammar, data_loc_bad_locations_efault)
{
	const int hdr = ue_hdr_size();
	const char *name = PREFIX "pdlb";
	int w;

	/*
	 * The record is hdr + 4 + 6 bytes: "hello\0" at hdr + 4..hdr + 10
	 * (12..18 with an 8-byte header)
	 */
	const __u32 bad[] = {
		DYN_LOC(hdr + 4, 7),
		DYN_LOC(hdr + 5, 6),
		DYN_LOC(hdr + 10, 1),
		DYN_LOC(0xffff, 6),
		DYN_LOC(hdr + 4, 0xffff),
		/* Not NUL terminated within its 5 bytes (the NUL after is outside) */
		DYN_LOC(hdr + 4, 5),
		/* Zero-size string */
		DYN_LOC(hdr + 4, 0),
	};

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "pdlb __data_loc char[] s", name);

	expect_efault(_metadata, self->fd, w, bad, ARRAY_SIZE(bad));

	/* A NUL inside the bounds and one at the end: fine, text stops at the first */
	EXPECT_EQ(4 + 4 + 7, write_loc(self->fd, w, DYN_LOC(hdr + 4, 7), "hel\0lo", 7));
	/* The good one */
	EXPECT_EQ(14, write_loc(self->fd, w, DYN_LOC(hdr + 4, 6), "hello", 6));

	ASSERT_EQ(2, ue_trace_lines(name, self->lines, MAX_LINES));
	EXPECT_STREQ("s=hel", self->lines[0]);
	EXPECT_STREQ("s=hello", self->lines[1]);
}

TEST_F(grammar, rel_loc_bad_locations_efault)
{
	const int hdr = ue_hdr_size();
	const char *name = PREFIX "prlb";
	int w;

	/* "hello\0" is 0..6 bytes after the field */
	const __u32 bad[] = {
		DYN_LOC(0, 7),
		DYN_LOC(1, 6),
		DYN_LOC(6, 1),
		DYN_LOC(0xffff, 1),
		/* A __data_loc style offset (hdr + 4): that far after the field */
		DYN_LOC(hdr + 4, 6),
		/* Not NUL terminated within bounds, zero size */
		DYN_LOC(0, 5),
		DYN_LOC(0, 0),
		DYN_LOC(6, 0),
	};

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "prlb __rel_loc char[] s", name);

	expect_efault(_metadata, self->fd, w, bad, ARRAY_SIZE(bad));

	EXPECT_EQ(14, write_loc(self->fd, w, DYN_LOC(0, 6), "hello", 6));
	/* The last 3 bytes "lo\0" */
	EXPECT_EQ(14, write_loc(self->fd, w, DYN_LOC(3, 3), "hello", 6));

	ASSERT_EQ(2, ue_trace_lines(name, self->lines, MAX_LINES));
	EXPECT_STREQ("s=hello", self->lines[0]);
	EXPECT_STREQ("s=lo", self->lines[1]);
}

/* u8[] dynamic arrays need no NUL and may be empty, but stay in bounds */
TEST_F(grammar, u8_dynamic_array_bounds)
{
	const char *name = PREFIX "pu8";
	int w;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "pu8 __rel_loc u8[] x", name);

	EXPECT_EQ(4 + 4 + 3, write_loc(self->fd, w, DYN_LOC(0, 3), "\x01\x02\x03", 3));
	EXPECT_EQ(4 + 4 + 3, write_loc(self->fd, w, DYN_LOC(0, 0), "\x01\x02\x03", 3));
	EXPECT_EQ(-EFAULT, write_loc(self->fd, w, DYN_LOC(0, 4), "\x01\x02\x03", 3));
	EXPECT_EQ(-EFAULT, write_loc(self->fd, w, DYN_LOC(1, 3), "\x01\x02\x03", 3));

	ASSERT_EQ(2, ue_trace_lines(name, self->lines, MAX_LINES));
}

/* One bad location rejects the whole record */
TEST_F(grammar, two_dynamic_fields_one_bad)
{
	const int hdr = ue_hdr_size();
	const char *name = PREFIX "p2";
	int w;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "p2 __data_loc char[] a; __rel_loc char[] b",
			      name);

	/* a 0..4, b 4..8, "x" at payload 8 (record hdr + 8), "yz" at payload 10 */
	ASSERT_EQ(4 + 13, write_x_yz(self->fd, w, DYN_LOC(hdr + 8, 2), DYN_LOC(2, 3)));
	/* b one byte too long */
	ASSERT_EQ(-EFAULT, write_x_yz(self->fd, w, DYN_LOC(hdr + 8, 2), DYN_LOC(2, 4)));
	/* a not terminated */
	ASSERT_EQ(-EFAULT, write_x_yz(self->fd, w, DYN_LOC(hdr + 8, 1), DYN_LOC(2, 3)));

	UE_ASSERT_TRACE_LINES(name, self->lines, "a=x b=yz");
}

/* writev() pieces are validated as one record */
TEST_F(grammar, rel_loc_writev)
{
	const char *name = PREFIX "pv";
	__u32 loc = DYN_LOC(0, 6);
	struct iovec io[4];
	int w;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "pv __rel_loc char[] s", name);

	io[0].iov_base = &w;
	io[0].iov_len = sizeof(w);
	io[1].iov_base = &loc;
	io[1].iov_len = sizeof(loc);
	io[2].iov_base = "hel";
	io[2].iov_len = 3;
	io[3].iov_base = "lo";
	io[3].iov_len = 3;
	ASSERT_EQ(14, writev(self->fd, io, 4));

	loc = DYN_LOC(0, 7);
	ASSERT_EQ(-1, writev(self->fd, io, 4));
	ASSERT_EQ(EFAULT, errno);

	UE_ASSERT_TRACE_LINES(name, self->lines, "s=hello");
}

/* --- re-registration ---------------------------------------------------- */

TEST_F(grammar, same_fields_other_spacing_same_index)
{
	static const char *const same[] = {
		PREFIX "rr u32 a;__rel_loc char[] s;struct foo f 8;u8[2] b",
		PREFIX "rr   u32  a ;   __rel_loc   char[]   s;struct   foo  f   8 ;u8[2]  b;",
		PREFIX "rr\tu32\ta;\t__rel_loc\tchar[]\ts; struct foo f 8; u8[2] b",
		"  " PREFIX "rr u32 a; __rel_loc char[] s; struct foo f 8; u8[2] b  ",
	};
	int s0 = -1, w0 = -1, s, w;
	unsigned int i;

	ASSERT_EQ(0, ue_reg(self->fd, same[0], &s0, &w0));
	ASSERT_LT(0, s0);
	ASSERT_EQ(0, w0);

	for (i = 1; i < sizeof(same) / sizeof(same[0]); i++) {
		s = w = -1;
		EXPECT_EQ(0, ue_reg(self->fd, same[i], &s, &w)) {
			TH_LOG("descriptor \"%s\"", same[i]);
		}
		EXPECT_EQ(s0, s);
		EXPECT_EQ(w0, w);
	}

	/* Another fd: same status index, its own first write index */
	UE_ASSERT_OPEN_DATA(self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "x1 u8 a", NULL, &w));
	ASSERT_EQ(0, w);
	s = w = -1;
	ASSERT_EQ(0, ue_reg(self->fd2, same[1], &s, &w));
	ASSERT_EQ(s0, s);
	ASSERT_EQ(1, w);
}

/* Two-word types with more than one space inside are the same type */
TEST_F(grammar, same_fields_spacing_inside_unsigned_types)
{
	int s0 = -1, w0 = -1, s = -2, w = -2;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rru unsigned int a; unsigned char[4] b",
			    &s0, &w0));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rru unsigned  int a;unsigned\t char[4] b",
			    &s, &w));
	ASSERT_EQ(s0, s);
	ASSERT_EQ(w0, w);
}

TEST_F(grammar, different_fields_eaddrinuse)
{
	static const char *const other[] = {
		PREFIX "rd u32 a; __data_loc char[] s",		/* data vs rel */
		PREFIX "rd u32 a; __rel_loc u8[] s",		/* element type */
		PREFIX "rd u32 a",				/* fewer fields */
		PREFIX "rd u32 a; __rel_loc char[] s; u8 c",	/* more fields */
		PREFIX "rd u32 b; __rel_loc char[] s",		/* field name */
		PREFIX "rd __rel_loc char[] s; u32 a",		/* order */
		PREFIX "rd u64 a; __rel_loc char[] s",		/* type */
		PREFIX "rd s32 a; __rel_loc char[] s",		/* signedness */
		PREFIX "rd",					/* no fields */
		PREFIX "rd u32 a; char[8] s",			/* static string */
	};
	int s0 = -1, w0 = -1, s = -2, w = -2;
	unsigned int i;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rd u32 a; __rel_loc char[] s", &s0, &w0));
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		EXPECT_EQ(-EADDRINUSE, ue_reg(self->fd, other[i], NULL, NULL)) {
			TH_LOG("descriptor \"%s\"", other[i]);
		}
	}

	/* struct tag and size are part of the field */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rs struct foo f 8", NULL, NULL));
	EXPECT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "rs struct foo f 16", NULL, NULL));
	EXPECT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "rs struct bar f 8", NULL, NULL));
	EXPECT_EQ(-EADDRINUSE, ue_reg(self->fd, PREFIX "rs u8[8] f", NULL, NULL));

	/* Nothing changed: the original still registers to the same indexes */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rd u32 a;__rel_loc char[] s", &s, &w));
	ASSERT_EQ(s0, s);
	ASSERT_EQ(w0, w);
	UE_ASSERT_FORMAT(PREFIX "rd",
		"\tfield:u32 a;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:__rel_loc char s[];\toffset:12;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"a=%u s=%s\", REC->a, __get_rel_str(s)\n");
}

TEST_HARNESS_MAIN
