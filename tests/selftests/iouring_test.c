// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: writing events through io_uring, with the
 * raw io_uring_setup/io_uring_enter/io_uring_register system calls (no
 * liburing). IORING_OP_WRITE and IORING_OP_WRITEV hand the write path user
 * iovecs; IORING_OP_WRITE_FIXED hands it a bvec over the registered
 * buffer's pages, which the generic copy takes. Each is tried inline and
 * forced to io-wq (IOSQE_ASYNC), and must give the exact trace line.
 *
 * Every event created here is named "ue_i_*" and is deleted again by the
 * fixture teardown.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/uio.h>
#include <linux/io_uring.h>

#include "ue_test.h"

#define PREFIX "ue_i_"

#define MAX_LINES 16
#define ENTRIES 8

struct ring {
	int fd;
	struct io_uring_params p;
	void *sq_ptr, *cq_ptr;
	size_t sq_len, cq_len;
	struct io_uring_sqe *sqes;
	size_t sqes_len;
	unsigned int *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
};

static int ring_init(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = syscall(__NR_io_uring_setup, ENTRIES, &r->p);
	if (r->fd < 0)
		return -errno;

	r->sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(unsigned int);
	r->cq_len = r->p.cq_off.cqes +
		    r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->sq_ptr = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->cq_ptr = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes_len = r->p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sq_ptr == MAP_FAILED || r->cq_ptr == MAP_FAILED ||
	    r->sqes == MAP_FAILED)
		return -errno;

	r->sq_head = r->sq_ptr + r->p.sq_off.head;
	r->sq_tail = r->sq_ptr + r->p.sq_off.tail;
	r->sq_mask = r->sq_ptr + r->p.sq_off.ring_mask;
	r->sq_array = r->sq_ptr + r->p.sq_off.array;
	r->cq_head = r->cq_ptr + r->p.cq_off.head;
	r->cq_tail = r->cq_ptr + r->p.cq_off.tail;
	r->cq_mask = r->cq_ptr + r->p.cq_off.ring_mask;
	r->cqes = r->cq_ptr + r->p.cq_off.cqes;
	return 0;
}

static void ring_exit(struct ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq_ptr && r->cq_ptr != MAP_FAILED)
		munmap(r->cq_ptr, r->cq_len);
	if (r->sq_ptr && r->sq_ptr != MAP_FAILED)
		munmap(r->sq_ptr, r->sq_len);
	if (r->fd > 0)
		close(r->fd);
	r->fd = -1;
}

/*
 * Submits one write of len bytes at addr (an iovec array of len entries
 * for WRITEV; buffer index buf for WRITE_FIXED) to fd and waits for it.
 * Returns the completion's result: bytes written or -errno.
 */
static int ring_write(struct ring *r, int op, int fd, const void *addr,
		      unsigned int len, int buf, unsigned char sqe_flags)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	unsigned int head;
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->addr = (__u64)(uintptr_t)addr;
	sqe->len = len;
	sqe->off = -1;		/* the file position, which this file ignores */
	sqe->flags = sqe_flags;
	sqe->buf_index = buf;
	sqe->user_data = 0x1234;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);

	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0)
		return -1000 - errno;

	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -2000;
	if (r->cqes[head & *r->cq_mask].user_data != 0x1234)
		return -3000;
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

FIXTURE(iouring) {
	int fd;
	struct ring ring;
	unsigned char *fixed;	/* two pages, registered as buffer 0 */
	char lines[MAX_LINES][UE_LINE_MAX];
};

FIXTURE_SETUP(iouring)
{
	struct iovec reg;
	int ret;

	self->ring.fd = -1;
	self->fixed = MAP_FAILED;
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_trace_clear());
	ret = ring_init(&self->ring);
	ASSERT_EQ(0, ret) {
		TH_LOG("io_uring: %s", strerror(-ret));
	}
	self->fixed = mmap(NULL, 2 * UE_PAGE_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->fixed);
	reg.iov_base = self->fixed;
	reg.iov_len = 2 * UE_PAGE_SIZE;
	ASSERT_EQ(0, syscall(__NR_io_uring_register, self->ring.fd,
			     IORING_REGISTER_BUFFERS, &reg, 1)) {
		TH_LOG("IORING_REGISTER_BUFFERS: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(iouring)
{
	ring_exit(&self->ring);
	if (self->fixed != MAP_FAILED)
		munmap(self->fixed, 2 * UE_PAGE_SIZE);
	ue_close_fd(self->fd);
	EXPECT_EQ(0, ue_delete_prefix(PREFIX));
}

struct rec {
	int w;
	__u32 a;
	__u64 b;
	char s[6];
} __attribute__((packed));

static const struct {
	int op;
	unsigned char flags;
	const char *what;
} modes[] = {
	{ IORING_OP_WRITE, 0, "WRITE" },
	{ IORING_OP_WRITE, IOSQE_ASYNC, "WRITE async" },
	{ IORING_OP_WRITEV, 0, "WRITEV" },
	{ IORING_OP_WRITEV, IOSQE_ASYNC, "WRITEV async" },
	{ IORING_OP_WRITE_FIXED, 0, "WRITE_FIXED" },
	{ IORING_OP_WRITE_FIXED, IOSQE_ASYNC, "WRITE_FIXED async" },
};

#define NMODES (int)(sizeof(modes) / sizeof(modes[0]))

/*
 * The record is submitted from a copy whose first bytes sit at the end of
 * the registered buffer's first page, so that WRITE_FIXED's bvec has two
 * segments; WRITEV splits it after the index.
 */
static int submit(FIXTURE_DATA(iouring) *self,
		  int m, const void *rec, unsigned int len)
{
	unsigned char *at = self->fixed + UE_PAGE_SIZE - 5;
	struct iovec io[2];

	memcpy(at, rec, len);
	switch (modes[m].op) {
	case IORING_OP_WRITE:
		return ring_write(&self->ring, modes[m].op, self->fd, at, len,
				  0, modes[m].flags);
	case IORING_OP_WRITEV:
		io[0].iov_base = at;
		io[0].iov_len = len < 4 ? len : 4;
		io[1].iov_base = at + io[0].iov_len;
		io[1].iov_len = len - io[0].iov_len;
		return ring_write(&self->ring, modes[m].op, self->fd, io, 2, 0,
				  modes[m].flags);
	default:
		return ring_write(&self->ring, modes[m].op, self->fd, at, len,
				  0, modes[m].flags);
	}
}

/* Each way of writing gives its exact record, in order */
TEST_F(iouring, write_writev_write_fixed)
{
	const char *name = PREFIX "rec";
	struct rec r;
	int m, res, w = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "rec u32 a; u64 b; char[6] s",
			    NULL, &w));
	ASSERT_EQ(0, ue_enable(name, true));

	for (m = 0; m < NMODES; m++) {
		memset(&r, 0, sizeof(r));
		r.w = w;
		r.a = 100 + m;
		r.b = 0x1122334455667700ULL + m;
		snprintf(r.s, sizeof(r.s), "m%d", m);
		res = submit(self, m, &r, sizeof(r));
		EXPECT_EQ((int)sizeof(r), res) {
			TH_LOG("%s: %d (%s)", modes[m].what, res,
			       res < 0 && res > -1000 ? strerror(-res) : "");
		}
	}

	ASSERT_EQ(NMODES, ue_trace_lines(name, self->lines, MAX_LINES));
	for (m = 0; m < NMODES; m++) {
		char want[128];

		snprintf(want, sizeof(want), "a=%d b=%llu s=m%d", 100 + m,
			 0x1122334455667700ULL + m, m);
		EXPECT_STREQ(want, self->lines[m]) {
			TH_LOG("%s", modes[m].what);
		}
	}
	ASSERT_EQ(0, ue_enable(name, false));
}

/*
 * The errors are those of write(): an unknown index ENOENT, a record
 * shorter than the fields EINVAL, less than an index EINVAL, more than
 * 3968 payload bytes E2BIG, nothing enabled EBADF; nothing is traced.
 */
TEST_F(iouring, errors_as_write)
{
	const char *name = PREFIX "err";
	static unsigned char big[4 + 3969];
	int m, w = -1, w2 = -1, bad = 77;
	struct rec r;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "err u32 a; u64 b; char[6] s",
			    NULL, &w));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "off u32 a", NULL, &w2));
	ASSERT_EQ(0, ue_enable(name, true));
	memset(&r, 0, sizeof(r));

	for (m = 0; m < NMODES; m++) {
		r.w = bad;
		EXPECT_EQ(-ENOENT, submit(self, m, &r, sizeof(r))) {
			TH_LOG("%s", modes[m].what);
		}
		r.w = w;
		EXPECT_EQ(-EINVAL, submit(self, m, &r, sizeof(r) - 1)) {
			TH_LOG("%s", modes[m].what);
		}
		EXPECT_EQ(-EINVAL, submit(self, m, &r, 3)) {
			TH_LOG("%s", modes[m].what);
		}
		r.w = w2;
		EXPECT_EQ(-EBADF, submit(self, m, &r, 8)) {
			TH_LOG("%s", modes[m].what);
		}
		memcpy(big, &w, 4);
		EXPECT_EQ(-E2BIG, submit(self, m, big, sizeof(big))) {
			TH_LOG("%s", modes[m].what);
		}
	}
	/* WRITE_FIXED of 3969 payload bytes, from the buffer's start */
	memcpy(self->fixed, &w, 4);
	EXPECT_EQ(-E2BIG, ring_write(&self->ring, IORING_OP_WRITE_FIXED,
				     self->fd, self->fixed, sizeof(big), 0, 0));
	EXPECT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));
	ASSERT_EQ(0, ue_enable(name, false));
}

TEST_HARNESS_MAIN
