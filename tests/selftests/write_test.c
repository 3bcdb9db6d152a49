// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: writing events with write() and writev(),
 * the trace lines they produce, the errors of bad writes, and the
 * events/user_events/NAME/format file.
 *
 * Every event created here is named "ue_w_*" and is deleted again by
 * the fixture teardown.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "ue_test.h"
#include "ue_rec.h"

#define PREFIX "ue_w_"

#define MAX_LINES 8

FIXTURE(write) {
	int fd;
	int fd2;
	char lines[MAX_LINES][UE_LINE_MAX];
};

FIXTURE_SETUP(write)
{
	self->fd2 = -1;
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_trace_clear());
}

FIXTURE_TEARDOWN(write)
{
	ue_fds_teardown(_metadata, self->fd, self->fd2, PREFIX);
}

/* struct rec, rec_init(), rec_put(): ue_rec.h */

#define REC_PUT(r, type, val) do {		\
	type __v = (val);			\
	rec_put((r), &__v, sizeof(__v));	\
} while (0)

TEST_F(write, write_one_line)
{
	const char *name = PREFIX "test";
	char msg[20] = "hello";
	struct rec r;
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "test u32 count;char[20] msg", name);

	rec_init(&r, w);
	REC_PUT(&r, __u32, 5);
	rec_put(&r, msg, sizeof(msg));
	ASSERT_EQ(28, r.len);

	ASSERT_EQ(28, write(self->fd, r.d, r.len));

	UE_ASSERT_TRACE_LINES(name, self->lines, "count=5 msg=hello");
}

TEST_F(write, writev_one_line)
{
	const char *name = PREFIX "vec";
	char msg[20] = "world";
	int count = 77;
	struct iovec io[3];
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "vec u32 count; char[20] msg", name);

	io[0] = (struct iovec){ &w, sizeof(w) };
	io[1] = (struct iovec){ &count, sizeof(count) };
	io[2] = (struct iovec){ msg, sizeof(msg) };

	ASSERT_EQ(28, writev(self->fd, io, 3));

	UE_ASSERT_TRACE_LINES(name, self->lines, "count=77 msg=world");
}

TEST_F(write, writev_split_fields)
{
	const char *name = PREFIX "split";
	struct iovec io[6];
	struct rec r;
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "split u32 a;u16 b;char[6] c", name);

	rec_init(&r, w);
	REC_PUT(&r, __u32, 123456);
	REC_PUT(&r, __u16, 4321);
	rec_put(&r, "split", 6);
	ASSERT_EQ(16, r.len);

	/* Index and fields cut across iovec boundaries */
	io[0] = (struct iovec){ r.d, 1 };
	io[1] = (struct iovec){ r.d + 1, 4 };
	io[2] = (struct iovec){ r.d + 5, 0 };
	io[3] = (struct iovec){ r.d + 5, 4 };
	io[4] = (struct iovec){ r.d + 9, 2 };
	io[5] = (struct iovec){ r.d + 11, 5 };

	ASSERT_EQ(16, writev(self->fd, io, 6));

	UE_ASSERT_TRACE_LINES(name, self->lines, "a=123456 b=4321 c=split");
}

/*
 * The same 100-byte record (index, 12 u64 fields) cut into segments of
 * every kind the copy handles: the index alone, split, or sharing its
 * segment with the payload; empty segments; one byte each; 8-byte
 * multiples with tails of 4, 2 and 1; segments of 63, 64 and 65 bytes and
 * longer (the inline copy takes up to 64, raw_copy_from_user() the rest).
 * Every shape records exactly the same fields. Then a bad pointer in a
 * short and in a long segment after good ones: EFAULT, nothing recorded.
 */
#define SEG_FIELDS 12
#define SEG_SHAPES 11
static const int seg_shapes[SEG_SHAPES][12] = {
	{ 100, -1 },
	{ 4, 96, -1 },
	{ 4, 8, 13, 4, 71, -1 },
	{ 2, 2, 0, 96, -1 },
	{ 3, 5, 0, 7, 1, 2, 4, 65, 13, -1 },
	{ 12, 88, -1 },
	{ 4, 64, 32, -1 },
	{ 4, 63, 33, -1 },
	{ 4, 9, 87, 0, -1 },
	{ 0, 4, 0, 0, 6, 90, -1 },
	{ -2 },		/* the index, then one byte per segment */
};

TEST_F(write, writev_segment_shapes)
{
	const char *name = PREFIX "segs";
	char lines[SEG_SHAPES + 2][UE_LINE_MAX];
	long page = sysconf(_SC_PAGESIZE);
	struct iovec io[100];
	char want[512];
	unsigned char *map;
	size_t off, l = 0;
	struct rec r;
	int i, k, n, w = -1;
	__u64 v;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "segs u64 f0;u64 f1;u64 f2;u64 f3;u64 f4;"
			      "u64 f5;u64 f6;u64 f7;u64 f8;u64 f9;u64 f10;"
			      "u64 f11", name);

	rec_init(&r, w);
	for (i = 0; i < 8 * SEG_FIELDS; i++)
		r.d[r.len++] = (unsigned char)(i * 37 + 11);
	ASSERT_EQ(100, r.len);
	for (i = 0; i < SEG_FIELDS; i++) {
		memcpy(&v, r.d + 4 + 8 * i, sizeof(v));
		l += snprintf(want + l, sizeof(want) - l, "%sf%d=%llu",
			      i ? " " : "", i, (unsigned long long)v);
	}

	for (k = 0; k < SEG_SHAPES; k++) {
		off = 0;
		n = 0;
		if (seg_shapes[k][0] == -2) {
			io[n++] = (struct iovec){ r.d, 4 };
			for (off = 4; off < 100; off++)
				io[n++] = (struct iovec){ r.d + off, 1 };
		}
		for (i = 0; seg_shapes[k][0] != -2 && seg_shapes[k][i] >= 0; i++) {
			io[n++] = (struct iovec){ r.d + off, seg_shapes[k][i] };
			off += seg_shapes[k][i];
		}
		ASSERT_EQ(100, (int)off) TH_LOG("shape %d", k);
		ASSERT_EQ(100, writev(self->fd, io, n)) TH_LOG("shape %d", k);
	}

	ASSERT_EQ(SEG_SHAPES, ue_trace_lines(name, lines, SEG_SHAPES + 2));
	for (k = 0; k < SEG_SHAPES; k++)
		ASSERT_STREQ(want, lines[k]) TH_LOG("shape %d", k);

	/* Good segments first, then one in an unmapped page */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + page, page));
	io[0] = (struct iovec){ r.d, 4 };
	io[1] = (struct iovec){ r.d + 4, 8 };
	io[2] = (struct iovec){ r.d + 12, 13 };
	io[3] = (struct iovec){ map + page, 8 };
	io[4] = (struct iovec){ r.d + 33, 67 };
	errno = 0;
	ASSERT_EQ(-1, writev(self->fd, io, 5));
	ASSERT_EQ(EFAULT, errno);
	io[3] = (struct iovec){ r.d + 25, 8 };
	io[4] = (struct iovec){ map + page - 3, 67 };
	errno = 0;
	ASSERT_EQ(-1, writev(self->fd, io, 5));
	ASSERT_EQ(EFAULT, errno);
	munmap(map, page);

	ASSERT_EQ(SEG_SHAPES, ue_trace_lines(name, lines, SEG_SHAPES + 2));
}

/*
 * A payload in pages that are not present yet (fresh anonymous memory,
 * never touched): the copy with page faults disabled fails, the module
 * faults them in and copies again. Both write() and writev().
 */
TEST_F(write, payload_pages_not_present)
{
	const char *name = PREFIX "lazy";
	long page = sysconf(_SC_PAGESIZE);
	struct iovec io[2];
	unsigned char *map;
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "lazy u32 a;u32 b", name);

	map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);

	/* Index in a touched page, payload in one never touched (zeros) */
	memcpy(map + page - 4, &w, 4);
	ASSERT_EQ(12, write(self->fd, map + page - 4, 12));

	io[0] = (struct iovec){ &w, sizeof(w) };
	io[1] = (struct iovec){ map + 2 * page, 8 };
	ASSERT_EQ(12, writev(self->fd, io, 2));
	munmap(map, 3 * page);

	UE_ASSERT_TRACE_LINES(name, self->lines, "a=0 b=0", "a=0 b=0");
}

/* splice() into the data file is not supported (no splice_write) */
TEST_F(write, splice_refused)
{
	int pipefd[2], w = -1;
	struct rec r;

	w = ue_reg_enabled_ok(_metadata, self->fd, PREFIX "splice u32 a",
			      PREFIX "splice");

	rec_init(&r, w);
	REC_PUT(&r, __u32, 31337);
	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(r.len, write(pipefd[1], r.d, r.len));
	errno = 0;
	EXPECT_EQ(-1, splice(pipefd[0], NULL, self->fd, NULL, r.len, 0));
	EXPECT_EQ(EINVAL, errno);
	close(pipefd[0]);
	close(pipefd[1]);
	EXPECT_EQ(0, ue_trace_lines(PREFIX "splice", self->lines, MAX_LINES));
}

TEST_F(write, lines_in_order_per_event)
{
	struct rec r;
	int wa, wb, i;

	wa = ue_reg_enabled_ok(_metadata, self->fd, PREFIX "ord_a u32 n",
			       PREFIX "ord_a");
	wb = ue_reg_enabled_ok(_metadata, self->fd, PREFIX "ord_b s32 n",
			       PREFIX "ord_b");
	ASSERT_NE(wa, wb);

	for (i = 1; i <= 3; i++) {
		rec_init(&r, wa);
		REC_PUT(&r, __u32, i);
		ASSERT_EQ(8, write(self->fd, r.d, r.len));
		rec_init(&r, wb);
		REC_PUT(&r, __s32, -i);
		ASSERT_EQ(8, write(self->fd, r.d, r.len));
	}

	UE_ASSERT_TRACE_LINES(PREFIX "ord_a", self->lines, "n=1", "n=2", "n=3");

	UE_ASSERT_TRACE_LINES(PREFIX "ord_b", self->lines,
			      "n=-1", "n=-2", "n=-3");
}

TEST_F(write, other_fd_own_index)
{
	const char *name = PREFIX "fds";
	struct rec r;
	int w = -1, w2 = -1;

	/* fd: an unrelated event first, so the indexes differ */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "fds_pad", NULL, NULL));
	w = ue_reg_enabled(self->fd, PREFIX "fds u32 v", name);
	ASSERT_EQ(1, w);

	UE_ASSERT_OPEN_DATA(self->fd2);
	ASSERT_EQ(0, ue_reg(self->fd2, PREFIX "fds u32 v", NULL, &w2));
	ASSERT_EQ(0, w2);

	rec_init(&r, w);
	REC_PUT(&r, __u32, 1);
	ASSERT_EQ(8, write(self->fd, r.d, r.len));

	rec_init(&r, w2);
	REC_PUT(&r, __u32, 2);
	ASSERT_EQ(8, write(self->fd2, r.d, r.len));

	UE_ASSERT_TRACE_LINES(name, self->lines, "v=1", "v=2");
}

#define ALL_TYPES_DESC PREFIX "types u8 a;u16 b;u32 c;u64 d;s8 e;s16 f;" \
	"s32 g;s64 h;int i;unsigned int j;short k;unsigned short l;" \
	"char m;unsigned char n;char[4] o;unsigned char[4] p"

static void put_all_types(struct rec *r, __u8 a, __u16 b, __u32 c, __u64 d,
			  __s8 e, __s16 f, __s32 g, __s64 h, int i,
			  unsigned int j, short k, unsigned short l, char m,
			  unsigned char n, const char *o, const char *p)
{
	REC_PUT(r, __u8, a);
	REC_PUT(r, __u16, b);
	REC_PUT(r, __u32, c);
	REC_PUT(r, __u64, d);
	REC_PUT(r, __s8, e);
	REC_PUT(r, __s16, f);
	REC_PUT(r, __s32, g);
	REC_PUT(r, __s64, h);
	REC_PUT(r, int, i);
	REC_PUT(r, unsigned int, j);
	REC_PUT(r, short, k);
	REC_PUT(r, unsigned short, l);
	REC_PUT(r, char, m);
	REC_PUT(r, unsigned char, n);
	rec_put(r, o, 4);
	rec_put(r, p, 4);
}

TEST_F(write, all_types_extremes)
{
	const char *name = PREFIX "types";
	struct rec r;
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd, ALL_TYPES_DESC, name);

	/* Largest unsigned values, smallest signed values */
	rec_init(&r, w);
	put_all_types(&r, 255, 65535, 4294967295U, 18446744073709551615ULL,
		      -128, -32768, -2147483647 - 1, -9223372036854775807LL - 1,
		      -2147483647 - 1, 4294967295U, -32768, 65535, -128, 255,
		      "abcd", "wxyz");
	ASSERT_EQ(4 + 52, r.len);
	ASSERT_EQ(56, write(self->fd, r.d, r.len));

	/* Largest signed values, zero unsigned values */
	rec_init(&r, w);
	put_all_types(&r, 0, 0, 0, 0, 127, 32767, 2147483647,
		      9223372036854775807LL, 2147483647, 0, 32767, 0, 127, 0,
		      "ab\0d", "\0xyz");
	ASSERT_EQ(56, write(self->fd, r.d, r.len));

	ASSERT_EQ(2, ue_trace_lines(name, self->lines, MAX_LINES));
	ASSERT_STREQ("a=255 b=65535 c=4294967295 d=18446744073709551615 "
		     "e=-128 f=-32768 g=-2147483648 h=-9223372036854775808 "
		     "i=-2147483648 j=4294967295 k=-32768 l=65535 m=-128 "
		     "n=255 o=abcd p=wxyz", self->lines[0]);
	ASSERT_STREQ("a=0 b=0 c=0 d=0 e=127 f=32767 g=2147483647 "
		     "h=9223372036854775807 i=2147483647 j=0 k=32767 l=0 "
		     "m=127 n=0 o=ab p=", self->lines[1]);
}

TEST_F(write, all_types_small_values)
{
	const char *name = PREFIX "types";
	struct iovec io[2];
	struct rec r;
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd, ALL_TYPES_DESC, name);

	rec_init(&r, w);
	put_all_types(&r, 1, 2, 3, 4, -1, -2, -3, -4, -5, 6, -7, 8, 'A', 'B',
		      "hi\0\0", "x\0yz");

	/* Written with writev: index alone, then the payload */
	io[0] = (struct iovec){ r.d, 4 };
	io[1] = (struct iovec){ r.d + 4, r.len - 4 };
	ASSERT_EQ(56, writev(self->fd, io, 2));

	UE_ASSERT_TRACE_LINES(name, self->lines,
			      "a=1 b=2 c=3 d=4 e=-1 f=-2 g=-3 h=-4 i=-5 j=6 k=-7 "
			      "l=8 m=65 n=66 o=hi p=x");
}

TEST_F(write, each_type_alone)
{
	static const struct {
		const char *type;
		int size;
		__s64 val;
		const char *text;
	} t[] = {
		{ "u8", 1, 200, "200" },
		{ "u16", 2, 60000, "60000" },
		{ "u32", 4, 3000000000LL, "3000000000" },
		{ "u64", 8, 5000000000LL, "5000000000" },
		{ "s8", 1, -100, "-100" },
		{ "s16", 2, -30000, "-30000" },
		{ "s32", 4, -2000000000LL, "-2000000000" },
		{ "s64", 8, -5000000000LL, "-5000000000" },
		{ "int", 4, -42, "-42" },
		{ "unsigned int", 4, 4000000000LL, "4000000000" },
		{ "short", 2, -1234, "-1234" },
		{ "unsigned short", 2, 65000, "65000" },
		{ "char", 1, -5, "-5" },
		{ "unsigned char", 1, 250, "250" },
	};
	char desc[128], name[64], want[64];
	unsigned int i;
	struct rec r;
	int w = -1;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(name, sizeof(name), PREFIX "one%u", i);
		snprintf(desc, sizeof(desc), "%s %s v", name, t[i].type);
		w = ue_reg_enabled(self->fd, desc, name);
		ASSERT_LE(0, w) {
			TH_LOG("%s: %d", desc, w);
		}

		/* Little endian: the low bytes of val are the value */
		rec_init(&r, w);
		rec_put(&r, &t[i].val, t[i].size);
		ASSERT_EQ(4 + t[i].size, write(self->fd, r.d, r.len));

		snprintf(want, sizeof(want), "v=%s", t[i].text);
		ASSERT_EQ(1, ue_trace_lines(name, self->lines, MAX_LINES)) {
			TH_LOG("%s", desc);
		}
		EXPECT_STREQ(want, self->lines[0]) {
			TH_LOG("%s", desc);
		}
	}
}

TEST_F(write, char_arrays_text)
{
	const char *name = PREFIX "text";
	struct rec r;
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "text char[8] a;unsigned char[6] b;"
			      "char[1] c;char[3] d", name);

	/* Stops at the first NUL, or after N bytes without one */
	rec_init(&r, w);
	rec_put(&r, "hi\0junk!", 8);
	rec_put(&r, "xyz\0zz", 6);
	rec_put(&r, "Q", 1);
	rec_put(&r, "end", 3);
	ASSERT_EQ(22, write(self->fd, r.d, r.len));

	rec_init(&r, w);
	rec_put(&r, "12345678", 8);
	rec_put(&r, "abcdef", 6);
	rec_put(&r, "\0", 1);
	rec_put(&r, "\0ab", 3);
	ASSERT_EQ(22, write(self->fd, r.d, r.len));

	UE_ASSERT_TRACE_LINES(name, self->lines,
			      "a=hi b=xyz c=Q d=end",
			      "a=12345678 b=abcdef c= d=");
}

TEST_F(write, extra_payload_accepted)
{
	const char *name = PREFIX "extra";
	struct rec r;
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd, PREFIX "extra u32 a", name);

	rec_init(&r, w);
	REC_PUT(&r, __u32, 7);
	REC_PUT(&r, __u64, 0x1122334455667788ULL);
	ASSERT_EQ(16, write(self->fd, r.d, r.len));

	/* The declared field comes first; what follows it is not specified */
	ASSERT_EQ(1, ue_trace_lines(name, self->lines, MAX_LINES));
	ASSERT_EQ(0, strncmp(self->lines[0], "a=7", 3)) {
		TH_LOG("line \"%s\"", self->lines[0]);
	}
	ASSERT_TRUE(self->lines[0][3] == '\0' || self->lines[0][3] == ' ') {
		TH_LOG("line \"%s\"", self->lines[0]);
	}
}

TEST_F(write, no_fields_event)
{
	const char *name = PREFIX "bare";
	int w = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd, PREFIX "bare", name);

	ASSERT_EQ(4, write(self->fd, &w, sizeof(w)));
	ASSERT_EQ(1, ue_trace_lines(name, self->lines, MAX_LINES));
}

TEST_F(write, errors)
{
	const char *name = PREFIX "err";
	long page = sysconf(_SC_PAGESIZE);
	struct iovec io[2];
	struct rec r;
	char *map;
	int w, bad;
	int woff = -1;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "err u32 a;char[4] b", name);
	rec_init(&r, w);
	REC_PUT(&r, __u32, 9);
	rec_put(&r, "abc", 4);
	ASSERT_EQ(12, r.len);

	/* Fewer than 4 bytes */
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, 3));
	ASSERT_EQ(EINVAL, errno);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, 1));
	ASSERT_EQ(EINVAL, errno);

	/* Negative index */
	bad = -1;
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, &bad, sizeof(bad)));
	ASSERT_EQ(EINVAL, errno);
	memcpy(r.d, &bad, 4);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, r.len));
	ASSERT_EQ(EINVAL, errno);

	/* Index never handed out on this fd */
	bad = 99;
	memcpy(r.d, &bad, 4);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, r.len));
	ASSERT_EQ(ENOENT, errno);
	bad = w + 1;
	memcpy(r.d, &bad, 4);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, r.len));
	ASSERT_EQ(ENOENT, errno);
	memcpy(r.d, &w, 4);

	/* ... nor on another fd that has no events */
	UE_ASSERT_OPEN_DATA(self->fd2);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd2, r.d, r.len));
	ASSERT_EQ(ENOENT, errno);

	/* Payload shorter than the fields */
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, 4));
	ASSERT_EQ(EINVAL, errno);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, 8));
	ASSERT_EQ(EINVAL, errno);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, r.len - 1));
	ASSERT_EQ(EINVAL, errno);

	/* Bad user memory */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + page, page));

	errno = 0;
	ASSERT_EQ(-1, write(self->fd, map + page, r.len));
	ASSERT_EQ(EFAULT, errno);

	io[0] = (struct iovec){ &w, sizeof(w) };
	io[1] = (struct iovec){ map + page, 8 };
	errno = 0;
	ASSERT_EQ(-1, writev(self->fd, io, 2));
	ASSERT_EQ(EFAULT, errno);

	/* Payload running into the unmapped page */
	memcpy(map + page - 8, r.d, 8);
	io[1] = (struct iovec){ map + page - 4, 8 };
	errno = 0;
	ASSERT_EQ(-1, writev(self->fd, io, 2));
	ASSERT_EQ(EFAULT, errno);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, map + page - 8, r.len));
	ASSERT_EQ(EFAULT, errno);
	munmap(map, page);

	/* The file is a stream */
	errno = 0;
	ASSERT_EQ(-1, pwrite(self->fd, r.d, r.len, 0));
	ASSERT_EQ(ESPIPE, errno);
	errno = 0;
	ASSERT_EQ(-1, pwrite(self->fd, r.d, r.len, 4));
	ASSERT_EQ(ESPIPE, errno);
	io[0] = (struct iovec){ r.d, r.len };
	errno = 0;
	ASSERT_EQ(-1, pwritev(self->fd, io, 1, 8));
	ASSERT_EQ(ESPIPE, errno);

	/* None of these put a record */
	ASSERT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));

	/* Registered but not enabled: EBADF, the write is dropped */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "off u32 a", NULL, &woff));
	rec_init(&r, woff);
	REC_PUT(&r, __u32, 1);
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, r.len));
	ASSERT_EQ(EBADF, errno);
	ASSERT_EQ(0, ue_trace_lines(PREFIX "off", self->lines, MAX_LINES));

	/* Enabled and disabled again: EBADF again */
	ASSERT_EQ(0, ue_enable(PREFIX "off", true));
	ASSERT_EQ(8, write(self->fd, r.d, r.len));
	ASSERT_EQ(0, ue_enable(PREFIX "off", false));
	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, r.len));
	ASSERT_EQ(EBADF, errno);
	UE_ASSERT_TRACE_LINES(PREFIX "off", self->lines, "a=1");

	/* The good record still works after all that */
	rec_init(&r, w);
	REC_PUT(&r, __u32, 9);
	rec_put(&r, "abc", 4);
	ASSERT_EQ(12, write(self->fd, r.d, r.len));
	UE_ASSERT_TRACE_LINES(name, self->lines, "a=9 b=abc");
}

TEST_F(write, perf_only_is_enabled)
{
	const char *name = PREFIX "perfonly";
	struct rec r;
	int w = -1, pfd;

	/* Not enabled in ftrace, but a perf event is open on it */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "perfonly u32 a", NULL, &w));
	rec_init(&r, w);
	REC_PUT(&r, __u32, 3);

	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, r.len));
	ASSERT_EQ(EBADF, errno);

	pfd = ue_perf_open(name);
	ASSERT_LE(0, pfd);
	EXPECT_EQ(8, write(self->fd, r.d, r.len));
	close(pfd);

	/* Only perf saw it: no ftrace line */
	ASSERT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));

	errno = 0;
	ASSERT_EQ(-1, write(self->fd, r.d, r.len));
	ASSERT_EQ(EBADF, errno);
}

/*
 * The common fields the format tests expect come from one of the kernel's
 * own events (ue_common_fields()): on every kernel they begin with the
 * four of struct trace_entry; a PREEMPT_RT kernel may add more after
 * common_pid. Another kernel event shows the same ones, and puts its first
 * field (sched_switch's prev_comm, a char array, so unaligned) right after
 * the header, at ue_hdr_size(): so does a user event.
 */
TEST_F(write, common_fields_and_header_size)
{
	static const char base[] =
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";
	const char *sched = UE_TRACEFS "/events/sched/sched_switch/format";
	const char *common = ue_common_fields();
	static char buf[16384], want[4096];
	const char *line;
	int hdr, off = -1, size = -1;

	ASSERT_NE(NULL, common) {
		TH_LOG("common fields of %s: %s", UE_COMMON_EVENT, strerror(errno));
	}
	ASSERT_EQ(0, strncmp(base, common, strlen(base))) {
		TH_LOG("common fields:\n%s", common);
	}
	for (line = common + strlen(base); *line; line = strchr(line, '\n') + 1) {
		ASSERT_EQ(0, ue_field_line(line, &off, &size));
		EXPECT_LE(UE_HDR_BASE, off) {
			TH_LOG("extra common field inside the 8 bytes: %s", line);
		}
	}
	hdr = ue_hdr_size();
	ASSERT_LE(UE_HDR_BASE, hdr);
	TH_LOG("record header: %d bytes", hdr);

	ASSERT_LT(0, ue_read_file(sched, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "\nformat:\n%s\n\tfield:char prev_comm[16];", common);
	ASSERT_NE(NULL, strstr(buf, want)) {
		TH_LOG("%s:\n%s", sched, buf);
	}
	ASSERT_EQ(0, ue_format_file_field(sched, "prev_comm", &off, &size));
	ASSERT_EQ(hdr, off);
	ASSERT_EQ(16, size);

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "hdr u8 a; u32 b", NULL, NULL));
	ASSERT_EQ(0, ue_format_field(PREFIX "hdr", "a", &off, &size));
	ASSERT_EQ(hdr, off);
	ASSERT_EQ(1, size);
	ASSERT_EQ(0, ue_format_field(PREFIX "hdr", "b", &off, &size));
	ASSERT_EQ(hdr + 1, off);
	ASSERT_EQ(4, size);
}

TEST_F(write, format_example)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "fmt u32 count;char[20] msg", NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "fmt",
		"\tfield:u32 count;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:char msg[20];\toffset:12;\tsize:20;\tsigned:1;\n"
		"\n"
		"print fmt: \"count=%u msg=%s\", REC->count, REC->msg\n");
}

TEST_F(write, format_all_types)
{
	ASSERT_EQ(0, ue_reg(self->fd, ALL_TYPES_DESC, NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "types",
		"\tfield:u8 a;\toffset:8;\tsize:1;\tsigned:0;\n"
		"\tfield:u16 b;\toffset:9;\tsize:2;\tsigned:0;\n"
		"\tfield:u32 c;\toffset:11;\tsize:4;\tsigned:0;\n"
		"\tfield:u64 d;\toffset:15;\tsize:8;\tsigned:0;\n"
		"\tfield:s8 e;\toffset:23;\tsize:1;\tsigned:1;\n"
		"\tfield:s16 f;\toffset:24;\tsize:2;\tsigned:1;\n"
		"\tfield:s32 g;\toffset:26;\tsize:4;\tsigned:1;\n"
		"\tfield:s64 h;\toffset:30;\tsize:8;\tsigned:1;\n"
		"\tfield:int i;\toffset:38;\tsize:4;\tsigned:1;\n"
		"\tfield:unsigned int j;\toffset:42;\tsize:4;\tsigned:0;\n"
		"\tfield:short k;\toffset:46;\tsize:2;\tsigned:1;\n"
		"\tfield:unsigned short l;\toffset:48;\tsize:2;\tsigned:0;\n"
		"\tfield:char m;\toffset:50;\tsize:1;\tsigned:1;\n"
		"\tfield:unsigned char n;\toffset:51;\tsize:1;\tsigned:0;\n"
		"\tfield:char o[4];\toffset:52;\tsize:4;\tsigned:1;\n"
		"\tfield:unsigned char p[4];\toffset:56;\tsize:4;\tsigned:0;\n"
		"\n"
		"print fmt: \"a=%u b=%u c=%u d=%llu e=%hhd f=%hd g=%d h=%lld "
		"i=%d j=%u k=%hd l=%u m=%hhd n=%u o=%s p=%s\", REC->a, REC->b, "
		"REC->c, REC->d, REC->e, REC->f, REC->g, REC->h, REC->i, "
		"REC->j, REC->k, REC->l, REC->m, REC->n, REC->o, REC->p\n");
}

TEST_F(write, format_spaces_after_semicolon)
{
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "fmtsp s64 x; unsigned char[3] y;  short z",
			    NULL, NULL));
	UE_ASSERT_FORMAT(PREFIX "fmtsp",
		"\tfield:s64 x;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield:unsigned char y[3];\toffset:16;\tsize:3;\tsigned:0;\n"
		"\tfield:short z;\toffset:19;\tsize:2;\tsigned:1;\n"
		"\n"
		"print fmt: \"x=%lld y=%s z=%hd\", REC->x, REC->y, REC->z\n");
}

/* Creates and deletes "churn" (DIAG_IOCSREG, last put); its id, or -errno */
static long churn_once(void)
{
	static __u32 word;
	long id;
	int fd;

	fd = ue_open_data();
	if (fd < 0)
		return -errno;
	id = ue_wreg(fd, PREFIX "churn u32 x;u32 y", &word, 4, 1, 0, NULL);
	if (!id)
		id = ue_event_id(PREFIX "churn");
	if (ue_wunreg(fd, &word, 1) && id > 0)
		id = -EIO;
	close(fd);
	return id;
}

/*
 * A deleted event's id is never handed to the next event while its
 * records may be in the buffer (issue 23, section 2): those records print
 * as a deleted event's, never decoded with another event's fields, and
 * nobody else's records are erased. The tracing core hands out the lowest
 * free id: 6.12 always, 6.1 once its 16-bit counter wrapped. So events are
 * first created and deleted until the same id comes back (on 6.1, until
 * the counter wrapped); the event deleted next then has the lowest free
 * id, which the next event would take. Created and deleted through
 * DIAG_IOCSREG and the last put: a "!u:" would also have the core empty
 * the buffers it marked (as it does after deleting any dynamic event),
 * hiding what is checked here.
 */
TEST_F_TIMEOUT(write, deleted_event_id_not_reused, UE_TIMEOUT(600))
{
	const char *gone = PREFIX "gone", *keep = PREFIX "keep";
	long gone_id, id;
	int i, w = -1;
	__u32 word = 0;
	struct rec r;

	id = ue_churn_to_lowest_id(churn_once, &i);
	TH_LOG("%d events created and deleted, then id %ld each time", i, id);
	ASSERT_LT(0, id);

	UE_ASSERT_OPEN_DATA(self->fd2);
	ASSERT_EQ(0, ue_wreg(self->fd2, PREFIX "gone u32 a;u32 b", &word, 4,
			     0, 0, &w));
	ASSERT_EQ(0, ue_enable(gone, true));
	gone_id = ue_event_id(gone);
	ASSERT_EQ(id, gone_id);
	for (i = 0; i < 3; i++) {
		rec_init(&r, w);
		REC_PUT(&r, __u32, 0xfff0 + i);
		REC_PUT(&r, __u32, 0x7fffff00);
		ASSERT_EQ(r.len, write(self->fd2, r.d, r.len));
	}
	w = ue_reg_enabled_ok(_metadata, self->fd, PREFIX "keep u32 k", keep);
	rec_init(&r, w);
	REC_PUT(&r, __u32, 42);
	ASSERT_EQ(r.len, write(self->fd, r.d, r.len));

	/* Disabled, unregistered, closed: the last put deletes it */
	ASSERT_EQ(0, ue_enable(gone, false));
	ASSERT_EQ(0, ue_wunreg(self->fd2, &word, 0));
	ue_drop_fd(&self->fd2);
	ASSERT_FALSE(ue_event_exists(gone));

	/* The lowest free id is the deleted event's: it is not handed out */
	for (i = 0; i < 3; i++) {
		id = churn_once();
		ASSERT_LT(0, id);
		ASSERT_NE(gone_id, id);
	}

	/* Its records say so; the other event's record is still there */
	ASSERT_EQ(3, ue_file_lines(UE_TRACE_FILE, ": " PREFIX "gone: ",
				   self->lines, MAX_LINES));
	for (i = 0; i < 3; i++)
		EXPECT_STREQ("(deleted event)", self->lines[i]);
	ASSERT_EQ(1, ue_trace_lines(keep, self->lines, MAX_LINES));
	EXPECT_STREQ("k=42", self->lines[0]);
}

/*
 * A deleted event whose records are in an instance's buffer keeps its id
 * (a tombstone) until that buffer is emptied, even when the tracing core
 * forgot that the buffer needs it: the core marks the instances where a
 * removed event was enabled (tr->clear_trace), but any removal it refuses
 * with EBUSY (here an administrator deleting an enabled synthetic event)
 * clears the marks of every instance. Then more than 1024 tombstones are
 * made; their ids go, after the reset of the marked buffers only. Found by
 * `make race` in its relayout mode (an "Unknown type" line in an
 * instance's trace after a reload; on 6.12 the next event takes the id
 * and prints the old record with its own fields).
 */
#define MK_INST UE_TRACEFS "/instances/" PREFIX "mk"
#define MK_TOMBSTONES 1100
/* Events kept alive at most, to fill the free ids below the deleted one */
#define HOLD_EVENTS 4096

/* The lines of the instance that are not "OLD: (deleted event)" */
static int mk_check(const char *old, char lines[][UE_LINE_MAX])
{
	char want[64];
	int i, n, bad = 0;

	snprintf(want, sizeof(want), "%s: (deleted event)", old);
	n = ue_file_lines(MK_INST "/trace", ": ", lines, MAX_LINES);
	for (i = 0; i < n && i < MAX_LINES; i++) {
		if (strcmp(lines[i], want)) {
			bad++;
			fprintf(stderr, "#   instance: %s\n", lines[i]);
		}
	}
	return n < 0 ? n : bad;
}

TEST_F_TIMEOUT(write, tombstones_outlive_forgotten_marks, UE_TIMEOUT(900))
{
	static __u32 hold[HOLD_EVENTS / 32];
	const char *old = PREFIX "mkold";
	char path[256];
	long old_id, id = 0, prev = 0;
	int i, same = 0, wrapped = 0, fd, w = -1, held;
	__u32 word = 0;
	struct rec r;

	if (!ue_have_synth_events())
		SKIP(return, "kernel without CONFIG_SYNTH_EVENTS: no synthetic event to keep busy");
	rmdir(MK_INST);
	ASSERT_EQ(0, mkdir(MK_INST, 0755));

	/* Records in the instance only, bytes chosen by the writer */
	UE_ASSERT_OPEN_DATA(self->fd2);
	ASSERT_EQ(0, ue_wreg(self->fd2, PREFIX "mkold u64 v", &word, 4, 0, 0,
			     &w));
	old_id = ue_event_id(old);
	ASSERT_LT(0, old_id);
	snprintf(path, sizeof(path), MK_INST "/events/user_events/%s/enable", old);
	ASSERT_EQ(0, ue_write_file(path, "1", false));
	for (i = 0; i < 3; i++) {
		rec_init(&r, w);
		REC_PUT(&r, __u64, 0x4141414141414141ULL);
		ASSERT_EQ(r.len, write(self->fd2, r.d, r.len));
	}
	ASSERT_EQ(0, ue_write_file(path, "0", false));
	ASSERT_EQ(0, ue_wunreg(self->fd2, &word, 0));
	ue_drop_fd(&self->fd2);
	ASSERT_FALSE(ue_event_exists(old));

	/* An administrator tries to delete an enabled synthetic event */
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/synthetic_events",
				   PREFIX "mksyn u32 x\n", false));
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/events/synthetic/" PREFIX
				   "mksyn/enable", "1", false));
	EXPECT_EQ(-EBUSY, ue_write_file(UE_TRACEFS "/synthetic_events",
					"!" PREFIX "mksyn\n", false));
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/events/synthetic/" PREFIX
				   "mksyn/enable", "0", false));
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/synthetic_events",
				   "!" PREFIX "mksyn\n", false));

	/* More tombstones than are kept: events traced in the top level only */
	for (i = 0; i < MK_TOMBSTONES; i++) {
		fd = ue_open_data();
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ue_wreg(fd, PREFIX "mkt u32 x;u32 y", &word, 4, 1,
				     0, NULL));
		/* Live on the old id (6.12 hands out the lowest free one)? */
		if (ue_event_id(PREFIX "mkt") == old_id)
			EXPECT_EQ(0, mk_check(old, self->lines));
		ASSERT_EQ(0, ue_enable(PREFIX "mkt", true));
		ASSERT_EQ(0, ue_enable(PREFIX "mkt", false));
		ASSERT_EQ(0, ue_wunreg(fd, &word, 1));
		close(fd);
	}

	/* As in deleted_event_id_not_reused: until ids are reused */
	for (i = 0; i < 140000 && same < 3 && !(wrapped && id > old_id); i++) {
		fd = ue_open_data();
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ue_wreg(fd, PREFIX "churn u32 x;u32 y", &word, 4,
				     1, 0, NULL));
		id = ue_event_id(PREFIX "churn");
		ASSERT_LT(0, id);
		same = id == prev ? same + 1 : 0;
		wrapped |= prev && id < prev;
		prev = id;
		ASSERT_EQ(0, ue_wunreg(fd, &word, 1));
		close(fd);
	}
	TH_LOG("%d events created, last id %ld, deleted id %ld", i, id, old_id);
	fd = ue_open_data();
	ASSERT_LE(0, fd);
	/* Kept alive: one that takes the old id decodes the old records */
	for (held = 0; held < HOLD_EVENTS && id <= old_id; held++) {
		char desc[64], name[32];

		snprintf(name, sizeof(name), PREFIX "mkhold%d", held);
		snprintf(desc, sizeof(desc), "%s u32 lo;u32 hi", name);
		ASSERT_EQ(0, ue_wreg(fd, desc, &hold[held / 32], 4, held % 32,
				     0, NULL));
		id = ue_event_id(name);
		if (id == old_id)
			TH_LOG("%s took the deleted event's id %ld", name, id);
	}
	TH_LOG("%d events kept, last id %ld", held, id);

	/*
	 * The instance shows the old records as a deleted event's, or
	 * nothing (emptied): never as another event's, never "Unknown type"
	 */
	EXPECT_EQ(0, mk_check(old, self->lines));
	while (held--)
		ASSERT_EQ(0, ue_wunreg(fd, &hold[held / 32], held % 32));
	close(fd);
	ASSERT_EQ(0, rmdir(MK_INST));
}

TEST_HARNESS_MAIN
