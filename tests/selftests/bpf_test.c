// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: delivery to BPF.
 *
 * BPF_PROG_TYPE_TRACEPOINT programs, loaded with the raw bpf() syscall
 * from hand-written instructions (no compiler, no libbpf), attached with
 * PERF_EVENT_IOC_SET_BPF to a perf event of a user event: they run once
 * per write and see the record as the format file lays it out. Events
 * registered with the BPF_ITER flag give the program a struct
 * user_bpf_context instead. Then bpftrace on tracepoint:user_events:NAME.
 *
 * The test program doubles as the writer run under bpftrace: with
 * UE_TEST_WRITER=1 in its environment it registers UE_W_DESC, waits for a
 * probe on the event, writes the payloads of UE_W_HEX (hex, separated by
 * commas) and exits, before the test harness starts.
 *
 * Every event created here is named "ue_b_*" and is deleted again by the
 * fixture teardown.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/uio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/bpf.h>

#include "ue_test.h"
#include "ue_writer.h"
#include "ue_bpf.h"

#define PREFIX "ue_b_"

#define MAX_LINES 32
#define RING_PAGES 8

/* --- BPF by hand --------------------------------------------------------- */

/* More than tests/selftests/ue_bpf.h has */
#define LDX(sz, d, s, o)	INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o)	INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i)		INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define XADD64(d, s, o)		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
#define LD_MAP_FD(d, fd)	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), \
				INSN(0, 0, 0, 0, 0)
#define JLE_IMM(d, i, o)	INSN(BPF_JMP | BPF_JLE | BPF_K, d, 0, o, i)
/*
 * r0 = the value of the map's slot 0 (the key at fp + key_off), or a jump
 * over skip instructions when there is none: 7 instructions
 */
#define MAP_SLOT0(map_fd, key_off, skip)				\
	ST(BPF_W, BPF_REG_10, key_off, 0),				\
	LD_MAP_FD(BPF_REG_1, map_fd),					\
	MOV64_REG(BPF_REG_2, BPF_REG_10),				\
	ADD64_IMM(BPF_REG_2, key_off),					\
	CALL(BPF_FUNC_map_lookup_elem),					\
	JEQ_IMM(BPF_REG_0, 0, skip)
/* value[0] += 1, value[1] = r7, value[2] = r8: 4 instructions */
#define COUNT_R7_R8()							\
	MOV64_IMM(BPF_REG_1, 1),					\
	XADD64(BPF_REG_0, BPF_REG_1, 0),				\
	STX(BPF_DW, BPF_REG_0, BPF_REG_7, 8),				\
	STX(BPF_DW, BPF_REG_0, BPF_REG_8, 16)

/* A one-entry array map of value_size bytes */
static int map_create(unsigned int value_size)
{
	return ue_bpf_map1(value_size);
}

static int map_read(int map_fd, void *value)
{
	return ue_bpf_map1_read(map_fd, value);
}

static char verifier_log[1 << 20];

static int prog_load(const struct bpf_insn *insns, unsigned int cnt)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	attr.insns = (__u64)(uintptr_t)insns;
	attr.insn_cnt = cnt;
	attr.license = (__u64)(uintptr_t)"GPL";
	attr.log_buf = (__u64)(uintptr_t)verifier_log;
	attr.log_size = sizeof(verifier_log);
	attr.log_level = 1;
	verifier_log[0] = '\0';

	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0)
		fprintf(stderr, "# BPF_PROG_LOAD: %s\n%s\n", strerror(errno),
			verifier_log);
	return fd;
}

#define ALU64_REG(op, d, s)	INSN(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define LSH64_IMM(d, i)		INSN(BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, i)

static int bpf_size(int bytes)
{
	return bytes == 1 ? BPF_B : bytes == 2 ? BPF_H :
	       bytes == 4 ? BPF_W : BPF_DW;
}

/*
 * Instructions at insn that load the size-byte field at ctx + off into
 * dst, zero-extended; returns how many. A tracepoint program may only load
 * from its context at offsets aligned to the load size
 * (tp_prog_is_valid_access()), but fields are packed after a header of
 * ue_hdr_size() bytes: a field at an offset its size does not divide is
 * loaded in aligned pieces (little endian), put together in dst with tmp.
 */
static int ctx_load(struct bpf_insn *insn, int dst, int tmp, int ctx,
		    int off, int size)
{
	int n = 0, pos = 0;

	while (pos < size) {
		int chunk = 8;

		while (chunk > size - pos || (off + pos) % chunk)
			chunk /= 2;
		insn[n++] = LDX(bpf_size(chunk), pos ? tmp : dst, ctx, off + pos);
		if (pos) {
			insn[n++] = LSH64_IMM(tmp, 8 * pos);
			insn[n++] = ALU64_REG(BPF_OR, dst, tmp);
		}
		pos += chunk;
	}

	return n;
}

/*
 * value[0] += 1; value[1] = *(u64 *)(ctx + a); value[2] = *(u32 *)(ctx + b).
 * Returns 0 (no perf sample).
 */
static int prog_count_copy(int map_fd, int a, int b)
{
	struct bpf_insn insns[64];
	int n = 0;

	insns[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
	n += ctx_load(insns + n, BPF_REG_7, BPF_REG_9, BPF_REG_6, a, 8);
	n += ctx_load(insns + n, BPF_REG_8, BPF_REG_9, BPF_REG_6, b, 4);
	{
		struct bpf_insn rest[] = {
			MAP_SLOT0(map_fd, -4, 4),
			COUNT_R7_R8(),
			MOV64_IMM(BPF_REG_0, 0),
			EXIT(),
		};

		memcpy(insns + n, rest, sizeof(rest));
		n += sizeof(rest) / sizeof(rest[0]);
	}

	return prog_load(insns, n);
}

/*
 * Loads the u64 at every 8-byte offset from 8 (the first a tracepoint
 * program may load) up to end into the map value, value[0] getting ctx + 8.
 * A program that reads to the end of the event's fields.
 */
static int prog_dump(int map_fd, int end)
{
	static struct bpf_insn insns[1200];
	int n = 0, off;

	insns[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
	insns[n++] = ST(BPF_W, BPF_REG_10, -4, 0);
	insns[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1,
			  BPF_PSEUDO_MAP_FD, 0, map_fd);
	insns[n++] = INSN(0, 0, 0, 0, 0);
	insns[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
	insns[n++] = ADD64_IMM(BPF_REG_2, -4);
	insns[n++] = CALL(BPF_FUNC_map_lookup_elem);
	insns[n++] = JEQ_IMM(BPF_REG_0, 0, (end - 8) / 8 * 2);
	for (off = 8; off < end; off += 8) {
		insns[n++] = LDX(BPF_DW, BPF_REG_1, BPF_REG_6, off);
		insns[n++] = STX(BPF_DW, BPF_REG_0, BPF_REG_1, off - 8);
	}
	insns[n++] = MOV64_IMM(BPF_REG_0, 0);
	insns[n++] = EXIT();

	return prog_load(insns, n);
}

/*
 * bpf_get_stackid(ctx, stack_map, 0) and bpf_get_stack(ctx, fp - 64, 64,
 * 0): both take the registers from the first 8 bytes of the context.
 * Stores [0] hits, [1] the stack id, [2] what bpf_get_stack() returned,
 * [3] the first address it stored.
 */
static int prog_stack(int map_fd, int stack_fd)
{
	struct bpf_insn insns[] = {
		MOV64_REG(BPF_REG_6, BPF_REG_1),
		LD_MAP_FD(BPF_REG_2, stack_fd),
		MOV64_IMM(BPF_REG_3, 0),
		CALL(BPF_FUNC_get_stackid),
		MOV64_REG(BPF_REG_7, BPF_REG_0),
		MOV64_REG(BPF_REG_1, BPF_REG_6),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -64),
		MOV64_IMM(BPF_REG_3, 64),
		MOV64_IMM(BPF_REG_4, 0),
		CALL(BPF_FUNC_get_stack),
		MOV64_REG(BPF_REG_8, BPF_REG_0),
		MAP_SLOT0(map_fd, -68, 7),
		COUNT_R7_R8(),
		/* fp - 64 was written by bpf_get_stack() (or zeroed) */
		LDX(BPF_DW, BPF_REG_1, BPF_REG_10, -64),
		STX(BPF_DW, BPF_REG_0, BPF_REG_1, 24),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};

	return prog_load(insns, sizeof(insns) / sizeof(insns[0]));
}

static int stack_map_create(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_STACK_TRACE;
	attr.key_size = 4;
	attr.value_size = 8 * 127;
	attr.max_entries = 64;

	return sys_bpf(BPF_MAP_CREATE, &attr);
}

/* return verdict */
static int prog_return(int verdict)
{
	struct bpf_insn insns[] = {
		MOV64_IMM(BPF_REG_0, verdict),
		EXIT(),
	};

	return prog_load(insns, sizeof(insns) / sizeof(insns[0]));
}

/* return *(u32 *)(ctx + off) > limit */
static int prog_filter(int off, int limit)
{
	struct bpf_insn insns[16];
	int n = 0;

	n += ctx_load(insns + n, BPF_REG_2, BPF_REG_3, BPF_REG_1, off, 4);
	insns[n++] = MOV64_IMM(BPF_REG_0, 0);
	insns[n++] = JLE_IMM(BPF_REG_2, limit, 1);
	insns[n++] = MOV64_IMM(BPF_REG_0, 1);
	insns[n++] = EXIT();

	return prog_load(insns, n);
}


/* Attach prog_fd to a perf event of NAME; the perf fd or -errno */
static int attach(const char *name, int prog_fd, pid_t pid, int cpu)
{
	long id = ue_event_id(name);
	int fd, err;

	if (id < 0)
		return id;
	fd = ue_perf_open_id(id, PERF_SAMPLE_RAW, pid, cpu);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* Raw data of every PERF_RECORD_SAMPLE in the ring (sample_type RAW) */
static int ring_raw(void *ring, unsigned char raws[][256], int max)
{
	struct ue_ring r;
	unsigned char *body;
	__u32 raw_size;
	int n = 0;

	for (ue_ring_start(&r, ring); (body = ue_ring_next(&r)); n++) {
		if (r.hdr.type != PERF_RECORD_SAMPLE)
			return -1;
		memcpy(&raw_size, body, 4);
		if (n < max)
			memcpy(raws[n], body + 4, raw_size < 256 ? raw_size : 256);
	}

	ue_ring_done(&r);
	return n;
}

/* --- fixture ------------------------------------------------------------- */

/*
 * bookworm's bpftrace on Linux 5.10 cannot use the kernel's BTF: it asks for
 * BTF information (amd64), or falls back to kernel headers that the guest
 * does not have (arm64: "'linux/types.h' file not found").
 */
static bool bpftrace_lacks_types(void)
{
	static char err[16384];

	if (ue_read_file("bpftrace.err", err, sizeof(err)) <= 0)
		return false;
	return strstr(err, "install BTF information") ||
	       strstr(err, "'linux/types.h' file not found");
}

FIXTURE(bpf) {
	int fd;
	int map_fd;
	int prog_fd;
	int perf_fd;
	void *ring;
	volatile unsigned char *page;
	char lines[MAX_LINES][UE_LINE_MAX];
};

FIXTURE_SETUP(bpf)
{
	/*
	 * Before Linux 5.11, BPF maps are charged to RLIMIT_MEMLOCK (64 KiB
	 * by default there): a stack trace map does not fit.
	 */
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };

	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &unlimited));
	self->map_fd = self->prog_fd = self->perf_fd = -1;
	self->ring = NULL;
	UE_ASSERT_WRITER_SETUP(self->page, self->fd);
	ASSERT_EQ(0, ue_trace_clear());
}

FIXTURE_TEARDOWN(bpf)
{
	if (self->ring)
		munmap(self->ring, (RING_PAGES + 1) * UE_PAGE_SIZE);
	ue_close_fd(self->perf_fd);
	ue_close_fd(self->prog_fd);
	ue_close_fd(self->map_fd);
	ue_unpin_cpu();
	ue_writer_teardown(_metadata, self->page, self->fd, PREFIX);
}

struct cnt_rec {
	int w;
	__u64 val;
	__u32 count;
} __attribute__((packed));

/*
 * The offsets of the u64 val and u32 count fields of NAME ("u64 val; u32
 * count"), as its format file says: right after the record header.
 */
static void val_count_offsets(struct __test_metadata *_metadata,
			      const char *name, int *val_off, int *count_off)
{
	const int hdr = ue_hdr_size();
	int size = -1;

	ASSERT_EQ(0, ue_format_field(name, "val", val_off, &size));
	ASSERT_EQ(hdr + 0, *val_off);
	ASSERT_EQ(8, size);
	ASSERT_EQ(0, ue_format_field(name, "count", count_off, &size));
	ASSERT_EQ(hdr + 8, *count_off);
	ASSERT_EQ(4, size);
}

/*
 * The fixture's map (__u64 value[3]) and a program that counts the hits
 * of name ("u64 val; u32 count") and copies both fields, attached
 */
static void attach_count_copy(struct __test_metadata *_metadata,
			      struct _test_data_bpf *self, const char *name)
{
	int val_off = -1, count_off = -1;

	val_count_offsets(_metadata, name, &val_off, &count_off);
	self->map_fd = map_create(3 * sizeof(__u64));
	ASSERT_LE(0, self->map_fd);
	self->prog_fd = prog_count_copy(self->map_fd, val_off, count_off);
	ASSERT_LE(0, self->prog_fd);
	self->perf_fd = attach(name, self->prog_fd, -1, 0);
	ASSERT_LE(0, self->perf_fd) {
		TH_LOG("attach: %s", strerror(-self->perf_fd));
	}
}

/* The map's value: the hit count, then the last val and count copied */
static void expect_counted(struct __test_metadata *_metadata, int map_fd,
			   __u64 hits, __u64 val, __u64 count)
{
	__u64 value[3];

	ASSERT_EQ(0, map_read(map_fd, value));
	EXPECT_EQ(hits, value[0]);
	EXPECT_EQ(val, value[1]);
	EXPECT_EQ(count, value[2]);
}

/*
 * Ten writes, some on each CPU: the program ran ten times and copied the
 * u64 at offset hdr and the u32 at offset hdr + 8 of the last record (8
 * and 16 with an 8-byte header; the program is built for the offsets of
 * the format file).
 */
TEST_F(bpf, counts_hits_and_copies_fields)
{
	const char *name = PREFIX "cnt";
	bool two_cpus = ue_cpu_online(1);
	__u64 value[3];
	struct cnt_rec r;
	int i, s = -1, w = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "cnt u64 val; u32 count", &s, &w));
	r.w = w;
	attach_count_copy(_metadata, self, name);
	ASSERT_EQ(EVENT_STATUS_PERF, self->page[s]);

	for (i = 1; i <= 10; i++) {
		if (two_cpus) {
			ASSERT_EQ(0, ue_pin_cpu(i % 2));
		}
		r.val = 0x1122334455667700ULL + i;
		r.count = i;
		ASSERT_EQ((ssize_t)sizeof(r), write(self->fd, &r, sizeof(r)));
	}

	expect_counted(_metadata, self->map_fd, 10ULL, 0x112233445566770aULL, 10ULL);

	/* Detached: nothing listens, writes are refused, no more hits */
	ue_drop_fd(&self->perf_fd);
	ASSERT_EQ(0, self->page[s]);
	ASSERT_EQ(-1, write(self->fd, &r, sizeof(r)));
	ASSERT_EQ(EBADF, errno);
	ASSERT_EQ(0, map_read(self->map_fd, value));
	EXPECT_EQ(10ULL, value[0]);
}

/* BPF and ftrace at once: both see every write */
TEST_F(bpf, with_ftrace_enabled)
{
	const char *name = PREFIX "both";
	struct cnt_rec r;
	int i, s = -1, w = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "both u64 val; u32 count", &s, &w));
	r.w = w;
	attach_count_copy(_metadata, self, name);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(EVENT_STATUS_PERF | EVENT_STATUS_FTRACE, self->page[s]);

	for (i = 1; i <= 3; i++) {
		r.val = i * 1000;
		r.count = i;
		ASSERT_EQ((ssize_t)sizeof(r), write(self->fd, &r, sizeof(r)));
	}

	expect_counted(_metadata, self->map_fd, 3ULL, 3000ULL, 3ULL);
	ASSERT_EQ(3, ue_trace_lines(name, self->lines, MAX_LINES));
	EXPECT_STREQ("val=1000 count=1", self->lines[0]);
	EXPECT_STREQ("val=3000 count=3", self->lines[2]);
	ASSERT_EQ(0, ue_enable(name, false));
}

/* The program's return value decides which records reach the perf ring */
TEST_F(bpf, return_value_filters_perf_samples)
{
	const char *name = PREFIX "flt";
	unsigned char raws[16][256];
	const int hdr = ue_hdr_size();
	__u32 rec[2];
	int i, n, off = -1, size = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "flt u32 count", NULL, (int *)&rec[0]));
	ASSERT_EQ(0, ue_format_field(name, "count", &off, &size));
	ASSERT_EQ(hdr + 0, off);
	ASSERT_EQ(4, size);
	self->prog_fd = prog_filter(off, 5);
	ASSERT_LE(0, self->prog_fd);
	self->perf_fd = attach(name, self->prog_fd, 0, -1);
	ASSERT_LE(0, self->perf_fd);
	self->ring = mmap(NULL, (RING_PAGES + 1) * UE_PAGE_SIZE,
			  PROT_READ | PROT_WRITE, MAP_SHARED, self->perf_fd, 0);
	ASSERT_NE(MAP_FAILED, self->ring);

	for (i = 1; i <= 10; i++) {
		rec[1] = i;
		ASSERT_EQ(8, write(self->fd, rec, sizeof(rec)));
	}

	n = ring_raw(self->ring, raws, 16);
	ASSERT_EQ(5, n);
	for (i = 0; i < 5; i++)
		EXPECT_EQ((__u32)i + 6, *(__u32 *)(raws[i] + hdr));
}

/*
 * BPF_ITER events give BPF programs the record, like every other event:
 * the fields are where the format file says (the seed's struct
 * user_bpf_context is not passed any more, see security.rst), from
 * write() and from a writev() that gave the index alone.
 */
TEST_F(bpf, bpf_iter_gets_the_record)
{
	const char *name = PREFIX "iter";
	struct iovec io[2];
	__u64 value[3];
	struct cnt_rec r;
	int w = -1;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "iter:BPF_ITER u64 val; u32 count",
			    NULL, &w));
	r.w = w;
	attach_count_copy(_metadata, self, name);
	ASSERT_EQ(0, ue_pin_cpu(0));

	r.val = 0x8877665544332211ULL;
	r.count = 7;
	ASSERT_EQ((ssize_t)sizeof(r), write(self->fd, &r, sizeof(r)));
	ASSERT_EQ(0, map_read(self->map_fd, value));
	EXPECT_EQ(1ULL, value[0]);
	EXPECT_EQ(0x8877665544332211ULL, value[1]) {
		TH_LOG("val %#llx", (unsigned long long)value[1]);
	}
	EXPECT_EQ(7ULL, value[2]);

	r.val = 0x0102030405060708ULL;
	r.count = 9;
	io[0].iov_base = &w;
	io[0].iov_len = sizeof(w);
	io[1].iov_base = &r.val;
	io[1].iov_len = 12;
	ASSERT_EQ(16, writev(self->fd, io, 2));
	expect_counted(_metadata, self->map_fd, 2ULL, 0x0102030405060708ULL, 9ULL);
}

/* A byte of the test pattern; no 8 of them in a row look like an address */
static unsigned char pattern(int i)
{
	return (unsigned char)(i * 7 + 3);
}

static bool kernel_address(__u64 v)
{
	return v >> 47 == 0x1ffff;
}

/*
 * PREFIX "dirty", a 3000-byte event seen by a program that returns 0
 * (*prog, *perf): each dirty_write() leaves 3000 bytes of 0xab in this
 * CPU's perf buffer.
 */
static void dirty_attach(struct __test_metadata *_metadata, int fd,
			 int *dirty, int *prog, int *perf)
{
	ASSERT_EQ(0, ue_reg(fd, PREFIX "dirty u8[1000] a; u8[1000] b; u8[1000] c", NULL, dirty));
	*prog = prog_return(0);
	ASSERT_LE(0, *prog);
	*perf = attach(PREFIX "dirty", *prog, -1, 0);
	ASSERT_LE(0, *perf);
}

/* Detaches and closes the fixture's program and map (a refused attach too) */
static void drop_attached(struct _test_data_bpf *self)
{
	ue_drop_fd(&self->perf_fd);
	ue_drop_fd(&self->prog_fd);
	ue_drop_fd(&self->map_fd);
}

static void dirty_write(struct __test_metadata *_metadata, int fd, int dirty)
{
	static unsigned char payload[3004];

	memcpy(payload, &dirty, 4);
	memset(payload + 4, 0xab, 3000);
	ASSERT_EQ(3004, write(fd, payload, 3004));
}

/*
 * A program that loads every u64 of its context up to the end of the
 * event's fields (the most the verifier lets it attach with; here 3968
 * bytes of fields, the largest payload) gets the header and the payload,
 * nothing else: with and without BPF_ITER, after a record of another
 * event filled the perf buffer on that CPU. The seed's 16-byte stack
 * context gave kernel addresses from ctx + 8 and oopsed near the end.
 */
TEST_F(bpf, reads_to_end_of_fields_get_the_payload)
{
	static const char *const flags[] = { ":BPF_ITER", "" };
	static unsigned char payload[4096], got[4096];
	const int hdr = ue_hdr_size();
	int f, i, w = -1, dirty = -1, perf2 = -1, prog2 = -1;
	char desc[160], name[64];
	/* The fields end 8-aligned, with the largest payload there is */
	const int end = 3976, n = end - hdr;

	ASSERT_EQ(0, end % 8);
	ASSERT_EQ(0, ue_pin_cpu(0));

	dirty_attach(_metadata, self->fd, &dirty, &prog2, &perf2);

	for (f = 0; f < 2; f++) {
		snprintf(name, sizeof(name), PREFIX "end%d", f);
		snprintf(desc, sizeof(desc),
			 "%s%s u8[1000] a; u8[1000] b; u8[1000] c; u8[%d] d",
			 name, flags[f], n - 3000);
		ASSERT_EQ(0, ue_reg(self->fd, desc, NULL, &w));
		self->map_fd = map_create(end - 8);
		ASSERT_LE(0, self->map_fd);
		self->prog_fd = prog_dump(self->map_fd, end);
		ASSERT_LE(0, self->prog_fd);
		self->perf_fd = attach(name, self->prog_fd, -1, 0);
		ASSERT_LE(0, self->perf_fd) {
			TH_LOG("attach %s: %s", name, strerror(-self->perf_fd));
		}

		dirty_write(_metadata, self->fd, dirty);

		memcpy(payload, &w, 4);
		for (i = 0; i < n; i++)
			payload[4 + i] = pattern(i);
		ASSERT_EQ(4 + n, write(self->fd, payload, 4 + n));

		ASSERT_EQ(0, map_read(self->map_fd, got));
		/* got[k] is record byte 8 + k; the payload starts at hdr */
		for (i = 0; i < n; i++)
			if (got[hdr - 8 + i] != pattern(i))
				break;
		EXPECT_EQ(n, i) {
			TH_LOG("%s: byte %d of the payload is %#x, not %#x",
			       name, i, got[hdr - 8 + i], pattern(i));
		}
		for (i = 0; i + 8 <= end - 8; i += 8) {
			__u64 v;

			memcpy(&v, got + i, 8);
			EXPECT_FALSE(kernel_address(v)) {
				TH_LOG("%s: ctx + %d holds %#llx", name, i + 8,
				       (unsigned long long)v);
			}
		}

		drop_attached(self);
	}
	close(perf2);
	close(prog2);
}

/*
 * An event without fields: a program either may not load from its
 * context (attach refused with EACCES), or gets zeroes, not what an
 * earlier record left in the perf buffer, up to the last offset the
 * verifier allows (PERF_MAX_TRACE_SIZE - 8).
 */
TEST_F(bpf, no_fields_reads_zeroes)
{
	int w = -1, dirty = -1, perf2 = -1, prog2 = -1;
	const char *name = PREFIX "nof";
	static const int offs[] = { 8, 16, 512, 3000, 8184 };
	unsigned int k;

	ASSERT_EQ(0, ue_pin_cpu(0));
	dirty_attach(_metadata, self->fd, &dirty, &prog2, &perf2);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "nof:BPF_ITER", NULL, &w));

	for (k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		__u64 value[3] = { 0, 1, 1 };

		self->map_fd = map_create(sizeof(value));
		ASSERT_LE(0, self->map_fd);
		self->prog_fd = prog_count_copy(self->map_fd, offs[k], 8);
		ASSERT_LE(0, self->prog_fd);
		self->perf_fd = attach(name, self->prog_fd, -1, 0);
		if (self->perf_fd == -EACCES) {
			TH_LOG("ctx + %d: attach refused", offs[k]);
		} else {
			ASSERT_LE(0, self->perf_fd) {
				TH_LOG("attach: %s", strerror(-self->perf_fd));
			}
			dirty_write(_metadata, self->fd, dirty);
			ASSERT_EQ(4, write(self->fd, &w, 4));
			ASSERT_EQ(0, map_read(self->map_fd, value));
			EXPECT_EQ(1ULL, value[0]);
			EXPECT_EQ(0ULL, value[1]) {
				TH_LOG("ctx + %d holds %#llx", offs[k],
				       (unsigned long long)value[1]);
			}
		}
		drop_attached(self);
	}
	close(perf2);
	close(prog2);
}

/*
 * bpf_get_stackid() and bpf_get_stack() on a BPF_ITER event read the
 * registers from the first 8 bytes of the context: they must be the
 * writer's kernel registers, whatever length the writer picks (the seed's
 * context had {data_type, data_len} there: 0x123 bytes made the pointer
 * 0x1230000008a).
 */
TEST_F(bpf, bpf_iter_get_stackid)
{
	const char *name = PREFIX "stk";
	static unsigned char payload[4 + 0x123];
	int stack_fd, w = -1;
	__u64 value[4];

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "stk:BPF_ITER u32 a", NULL, &w));
	stack_fd = stack_map_create();
	ASSERT_LE(0, stack_fd);
	self->map_fd = map_create(sizeof(value));
	ASSERT_LE(0, self->map_fd);
	self->prog_fd = prog_stack(self->map_fd, stack_fd);
	ASSERT_LE(0, self->prog_fd);
	self->perf_fd = attach(name, self->prog_fd, -1, 0);
	ASSERT_LE(0, self->perf_fd);
	ASSERT_EQ(0, ue_pin_cpu(0));

	memcpy(payload, &w, 4);
	ASSERT_EQ((ssize_t)sizeof(payload),
		  write(self->fd, payload, sizeof(payload)));
	ASSERT_EQ(8, write(self->fd, payload, 8));

	ASSERT_EQ(0, map_read(self->map_fd, value));
	EXPECT_EQ(2ULL, value[0]);
	EXPECT_LE(0, (__s64)value[1]) {
		TH_LOG("bpf_get_stackid: %lld", (long long)value[1]);
	}
	EXPECT_LT(0, (__s64)value[2]) {
		TH_LOG("bpf_get_stack: %lld", (long long)value[2]);
	}
	EXPECT_EQ(0, (__s64)value[2] % 8);
	EXPECT_TRUE(kernel_address(value[3])) {
		TH_LOG("first frame %#llx", (unsigned long long)value[3]);
	}
	close(stack_fd);
}

/* BPF_ITER: perf still gets the record, unless the program returns 0 */
TEST_F(bpf, bpf_iter_verdict_and_perf_record)
{
	const char *name = PREFIX "iterv";
	unsigned char raws[4][256];
	const int hdr = ue_hdr_size();
	int verdict, w = -1;
	__u32 rec[2];

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "iterv:BPF_ITER u32 count", NULL, &w));
	rec[0] = w;

	for (verdict = 0; verdict <= 1; verdict++) {
		self->prog_fd = prog_return(verdict);
		ASSERT_LE(0, self->prog_fd);
		self->perf_fd = attach(name, self->prog_fd, 0, -1);
		ASSERT_LE(0, self->perf_fd);
		self->ring = mmap(NULL, (RING_PAGES + 1) * UE_PAGE_SIZE,
				  PROT_READ | PROT_WRITE, MAP_SHARED,
				  self->perf_fd, 0);
		ASSERT_NE(MAP_FAILED, self->ring);

		rec[1] = 1000 + verdict;
		ASSERT_EQ(8, write(self->fd, rec, sizeof(rec)));
		ASSERT_EQ(verdict, ring_raw(self->ring, raws, 4));
		if (verdict) {
			EXPECT_EQ(1001U, *(__u32 *)(raws[0] + hdr));
		}

		munmap(self->ring, (RING_PAGES + 1) * UE_PAGE_SIZE);
		self->ring = NULL;
		ue_drop_fd(&self->perf_fd);
		ue_drop_fd(&self->prog_fd);
	}
}

TEST_F_TIMEOUT(bpf, bpftrace_tracepoint_args, UE_TIMEOUT(290))
{
	static char hex[4096], env_desc[600], env_hex[4200], cmd[4200];
	char *env[] = { "UE_TEST_WRITER=1", env_desc, env_hex, NULL };
	const char *prog =
		"tracepoint:user_events:" PREFIX "bt { "
		"@[args->count] = count(); "
		"printf(\"count=%u msg=%s\\n\", args->count, args->msg); }";
	char *argv[] = { "bpftrace", "-e", (char *)prog, "-c", cmd, NULL };
	static const __u32 counts[] = { 1, 2, 2, 3, 3, 3 };
	static const char *const msgs[] = { "one", "two", "two", "three", "three", "three" };
	struct { __u32 count; char msg[16]; } p;
	const char *exe = self_exe();
	int i, n, maps = 0, status;

	ASSERT_NE(NULL, exe);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "bt u32 count; char[16] msg", NULL, NULL));

	hex[0] = '\0';
	for (i = 0; i < 6; i++) {
		memset(&p, 0, sizeof(p));
		p.count = counts[i];
		strcpy(p.msg, msgs[i]);
		hex_append(hex, &p, sizeof(p));
	}
	snprintf(env_desc, sizeof(env_desc), "UE_W_DESC=%s", PREFIX "bt u32 count; char[16] msg");
	snprintf(env_hex, sizeof(env_hex), "UE_W_HEX=%s", hex);
	snprintf(cmd, sizeof(cmd), "%s", exe);

	status = run_cmd(argv, env, "bpftrace.out", "bpftrace.err");
	if (status != 0 && bpftrace_lacks_types())
		SKIP(return, "bpftrace cannot resolve this kernel's types (no BTF it can use, no kernel headers)");
	n = 0;
	{
		static char buf[65536];
		char *line, *next;

		ASSERT_LE(0, ue_read_file("bpftrace.out", buf, sizeof(buf)));
		for (line = buf; *line; line = next) {
			next = ue_cut_line(line);
			if (!strncmp(line, "count=", 6) && n < MAX_LINES)
				snprintf(self->lines[n++], UE_LINE_MAX, "%s", line);
			if (!strncmp(line, "@[", 2)) {
				maps++;
				EXPECT_TRUE(!strcmp(line, "@[1]: 1") ||
					    !strcmp(line, "@[2]: 2") ||
					    !strcmp(line, "@[3]: 3")) {
					TH_LOG("unexpected map line \"%s\"", line);
				}
			}
		}
	}
	if (status != 0 || n != 6 || maps != 3) {
		log_file("bpftrace.out");
		log_file("bpftrace.err");
	}
	ASSERT_EQ(0, status);
	ASSERT_EQ(6, n);
	for (i = 0; i < 6; i++) {
		char want[64];

		snprintf(want, sizeof(want), "count=%u msg=%s", counts[i], msgs[i]);
		EXPECT_STREQ(want, self->lines[i]);
	}
	ASSERT_EQ(3, maps);
}

/*
 * Stock bpftrace, kernel stacks of every user event, while a writer uses a
 * BPF_ITER event: bpf_get_stackid() on every hit. It ran into the seed's
 * 16-byte context and oopsed on the writer's length as a pointer.
 */
TEST_F_TIMEOUT(bpf, bpftrace_kstack_bpf_iter, UE_TIMEOUT(290))
{
	static char hex[8192], env_desc[600], env_hex[8300], cmd[4200];
	char *env[] = { "UE_TEST_WRITER=1", env_desc, env_hex, NULL };
	char *argv[] = { "bpftrace", "-e",
			 "tracepoint:user_events:* { @[kstack] = count(); }",
			 "-c", cmd, NULL };
	static const int lens[] = { 4, 0x123, 8, 1000, 4, 0x123 };
	static unsigned char p[1000];
	const char *desc = PREFIX "bks:BPF_ITER u32 a";
	static char buf[65536];
	const char *exe = self_exe();
	int i, status, total = 0, stacks = 0;
	char *line, *next;

	ASSERT_NE(NULL, exe);
	ASSERT_EQ(0, ue_reg(self->fd, desc, NULL, NULL));

	hex[0] = '\0';
	for (i = 0; i < 6; i++) {
		memset(p, i + 1, sizeof(p));
		hex_append(hex, p, lens[i]);
	}
	snprintf(env_desc, sizeof(env_desc), "UE_W_DESC=%s", desc);
	snprintf(env_hex, sizeof(env_hex), "UE_W_HEX=%s", hex);
	snprintf(cmd, sizeof(cmd), "%s", exe);

	status = run_cmd(argv, env, "bpftrace.out", "bpftrace.err");
	if (status != 0 && bpftrace_lacks_types())
		SKIP(return, "bpftrace cannot resolve this kernel's types (no BTF it can use, no kernel headers)");
	ASSERT_LE(0, ue_read_file("bpftrace.out", buf, sizeof(buf)));
	for (line = buf; *line; line = next) {
		next = ue_cut_line(line);
		if (!strncmp(line, "@[", 2))
			stacks++;
		if (!strncmp(line, "]: ", 3))
			total += atoi(line + 3);
	}
	if (status != 0 || !stacks || total != 6 || writer_failed("bpftrace.err")) {
		log_file("bpftrace.out");
		log_file("bpftrace.err");
	}
	ASSERT_EQ(0, status);
	EXPECT_FALSE(writer_failed("bpftrace.err"));
	EXPECT_LE(1, stacks);
	EXPECT_EQ(6, total);
}

TEST_HARNESS_MAIN
