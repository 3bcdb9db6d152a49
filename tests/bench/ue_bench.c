// SPDX-License-Identifier: GPL-2.0
/*
 * ue_bench: micro-benchmarks for user_events.ko, run inside a QEMU guest
 * by tests/bench/guest.sh (see tests/bench/README.md).
 *
 *   ue_bench rows   [-n OPS] [-r REPS] [-w WARM] [-R]
 *                                                 write-path rows; -R:
 *                                                 remote-write ABI only,
 *                                                 no status page (the
 *                                                 kernel's in-tree
 *                                                 user_events)
 *   ue_bench reg    [-r REPS] [-w WARM] [-b BATCH] [-l L1,L2,...]
 *                   [-o O1,O2,...]                DIAG_IOCSREG cost when
 *                                                 L events exist (made by
 *                                                 other processes), and in
 *                                                 a process that made O
 *   ue_bench scale  [-d SECONDS] [-r REPS]        1 vs 2 writer threads
 *   ue_bench regtime [-N EVENTS] [-m MEMAT]       time to register EVENTS
 *                                                 events in one process,
 *                                                 memory per event
 *   ue_bench enablers [-N COUNT]                  memory and time per
 *                                                 remote-write enabler
 *   ue_bench toggles [-l N1,N2,...] [-r REPS]     root's enable of an
 *                                                 unrelated event while a
 *                                                 process with N bits
 *                                                 toggles its event
 *   ue_bench prof [COUNT [tree]]                  COUNT ops of each row
 *                                                 under function_graph
 *                                                 (see cmd_prof); tree:
 *                                                 print the call graphs
 *   ue_bench warmup SECONDS                       getppid() loop
 *
 * Timing: clock_gettime(CLOCK_MONOTONIC). Under QEMU's -icount shift=0
 * one guest nanosecond is one guest instruction, so the per-operation
 * figures are path lengths in instructions.
 *
 * Output lines are tab separated and parsed by tests/bench/report.py:
 *   ROW  key  min  r1,r2,...  note        per-op figure, min of the reps
 *   SCALE key threads ops_per_s runs vcsw wall-clock throughput, voluntary
 *                                         context switches per 1000 ops
 *   CHUNK key index count seconds         registration time per chunk
 *   MEM  key units field bytes_per_unit   memory per unit (/proc/meminfo;
 *                                         SlabObjects: live objects of
 *                                         /proc/slabinfo)
 *   SLAB key units cache bytes_per_unit   slab caches whose live objects
 *                                         grew most
 *   PROF row function calls ns ops        function_graph durations
 *   GRAPH row line                        function_graph call tree
 *   INFO text                             anything else
 * Errors go to stderr and make the exit status non-zero.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "uapi/linux/user_events.h"
#include "../selftests/ue_helpers.h"

#define TRACEFS "/sys/kernel/tracing"
#define DATA_FILE TRACEFS "/user_events_data"
#define STATUS_FILE TRACEFS "/user_events_status"

#define barrier() __asm__ __volatile__("" ::: "memory")

static long opt_ops = 100000;
static int opt_reps = 5;
static int opt_warm = 2;
static bool opt_remote_only;	/* -R: no status page ABI (in-tree user_events) */
static int failures;

/* "ue_bench: <what>: <message>" on stderr */
static void vsay(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "ue_bench: %s: ", what);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("error", fmt, ap);
	va_end(ap);
	failures++;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("fatal", fmt, ap);
	va_end(ap);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* 0 or -errno (tests/selftests/ue_helpers.h) */
static int write_file(const char *path, const char *text)
{
	return ue_write_str(path, text, 0);
}

static void must_write_file(const char *path, const char *text)
{
	int ret = write_file(path, text);

	if (ret)
		die("write '%s' to %s: %s", text, path, strerror(-ret));
}

static long event_id(const char *system, const char *name)
{
	char path[512], buf[64];

	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/id", system, name);
	if (ue_read_upto(path, buf, sizeof(buf)) <= 0)
		die("cannot read %s", path);
	return atol(buf);
}

static void event_enable(const char *system, const char *name, bool on)
{
	char path[512];

	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/enable", system,
		 name);
	must_write_file(path, on ? "1" : "0");
}

/* Records written to the ftrace buffers so far (entries + overwritten) */
static long long ftrace_records(void)
{
	char path[128], buf[1024], *p;
	long long total = 0;
	int cpu;

	for (cpu = 0; cpu < 256; cpu++) {
		snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%d/stats",
			 cpu);
		if (ue_read_upto(path, buf, sizeof(buf)) < 0)
			break;
		p = strstr(buf, "entries:");
		if (p)
			total += atoll(p + 8);
		p = strstr(buf, "overrun:");
		if (p)
			total += atoll(p + 8);
	}
	return total;
}

/* -- registration ------------------------------------------------------- */

static int open_data(void)
{
	int fd = open(DATA_FILE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open %s: %s", DATA_FILE, strerror(errno));
	return fd;
}

/*
 * Registration in both ABIs (tests/selftests/ue_helpers.h): the write index, or
 * -errno; the status page one sets *status_index
 */
static int reg_status(int fd, const char *desc, int *status_index)
{
	int w = -1, ret = ue_reg(fd, desc, status_index, &w);

	return ret ?: w;
}

static int reg_write(int fd, const char *desc, void *addr, int bit,
		     uint16_t flags)
{
	int w = -1, ret = ue_wreg(fd, desc, addr, 4, bit, flags, &w);

	return ret ?: w;
}

static int unreg_write(int fd, void *addr, int bit)
{
	return ue_wunreg(fd, addr, bit);
}

/* Deletes an unused event, waiting for a pending reap to finish */
static int delete_event(int fd, const char *name)
{
	int tries;

	for (tries = 0; tries < 2000; tries++) {
		if (ioctl(fd, DIAG_IOCSDEL, name) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(1000);
	}
	return -EBUSY;
}

/* "Active: N" of user_events_status: how many events exist */
static long active_events(void)
{
	static char *buf;
	static size_t size = 4 << 20;
	char *p;

	if (!buf)
		buf = malloc(size);
	if (ue_read_upto(STATUS_FILE, buf, size) < 0)
		die("read %s", STATUS_FILE);
	p = strstr(buf, "\nActive: ");
	if (!p)
		die("no Active: line in %s", STATUS_FILE);
	return atol(p + 9);
}

/* -- measurement -------------------------------------------------------- */

typedef long (*row_fn)(void *ctx, long n);	/* returns error count */

struct result {
	double min;
	double reps[64];
	int nreps;
	long errors;
};

static void print_row(const char *key, struct result *r, const char *fmt,
		      ...)
{
	char note[768] = "";
	double max = r->min;
	size_t l;
	va_list ap;
	int i;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(note, sizeof(note), fmt, ap);
		va_end(ap);
	}
	for (i = 0; i < r->nreps; i++)
		if (r->reps[i] > max)
			max = r->reps[i];
	l = strlen(note);
	if (r->min > 0 && (max - r->min) / r->min > 0.02)
		l += snprintf(note + l, sizeof(note) - l,
			      "%srepeats disagree: spread %.1f%%", l ? "; " : "",
			      100.0 * (max - r->min) / r->min);
	if (r->errors && l < sizeof(note))
		snprintf(note + l, sizeof(note) - l, "%s%ld unexpected results",
			 l ? "; " : "", r->errors);
	printf("ROW\t%s\t%.2f\t", key, r->min);
	for (i = 0; i < r->nreps; i++)
		printf("%s%.2f", i ? "," : "", r->reps[i]);
	printf("\t%s\n", note);
	fflush(stdout);
}

/* Runs @fn for opt_warm discarded and opt_reps measured repeats of @n ops */
static void measure(struct result *r, row_fn fn, void *ctx, long n,
		    void (*between)(void *ctx))
{
	int i;

	memset(r, 0, sizeof(*r));
	r->min = 1e300;
	for (i = 0; i < opt_warm + opt_reps; i++) {
		uint64_t t0, t1;
		long errs;

		if (between)
			between(ctx);
		t0 = now_ns();
		errs = fn(ctx, n);
		t1 = now_ns();
		if (i < opt_warm)
			continue;
		r->errors += errs;
		r->reps[r->nreps] = (double)(t1 - t0) / n;
		if (r->reps[r->nreps] < r->min)
			r->min = r->reps[r->nreps];
		r->nreps++;
	}
}

/* -- rows --------------------------------------------------------------- */

/*
 * The rows are tight loops, and what they cost is what is measured: the
 * macros below write the loops of one shape, each with its own call or
 * test inside, so that no row pays for a branch or a call of another.
 */

/* n times STMT, which needs no context */
#define ROW_PLAIN(name, stmt)						\
static long name(void *ctx, long n)					\
{									\
	long i;								\
									\
	(void)ctx;							\
	for (i = 0; i < n; i++)						\
		stmt;							\
	return 0;							\
}

ROW_PLAIN(row_loop, barrier())
ROW_PLAIN(row_getppid, getppid())

struct wctx {
	int fd;
	const void *buf;
	size_t len;
	ssize_t expect;		/* return value expected from each call */
	int expect_errno;
	struct iovec iov[8];
	int iovcnt;
	/* perf */
	struct perf_event_mmap_page *ring;
	/* disabled check */
	volatile uint8_t *status_byte;
	volatile uint32_t *word;
	uint32_t mask;
	long hits;
};

/* n calls of CALL, counting those that do not return w->expect */
#define ROW_CALLS(name, call)						\
static long name(void *ctx, long n)					\
{									\
	struct wctx *w = ctx;						\
	long i, errs = 0;						\
									\
	for (i = 0; i < n; i++)						\
		if ((call) != w->expect)				\
			errs++;						\
	return errs;							\
}

ROW_CALLS(row_write_calls, write(w->fd, w->buf, w->len))
ROW_CALLS(row_writev, writev(w->fd, w->iov, w->iovcnt))

/* write(), and when it must fail, the errno it must fail with */
static long row_write(void *ctx, long n)
{
	struct wctx *w = ctx;
	long errs = row_write_calls(ctx, n);

	if (w->expect < 0 && errno != w->expect_errno)
		errs = n;
	return errs;
}

/* n user-side checks of TEST, counting in w->hits those that are set */
#define ROW_CHECKS(name, test)						\
static long name(void *ctx, long n)					\
{									\
	struct wctx *w = ctx;						\
	long i;								\
									\
	for (i = 0; i < n; i++) {					\
		if (test)						\
			w->hits++;					\
		barrier();						\
	}								\
	return w->hits ? 1 : 0;						\
}

/* The status page byte, and the remote-write enable bit */
ROW_CHECKS(row_check_byte, *w->status_byte)
ROW_CHECKS(row_check_word, *w->word & w->mask)

__attribute__((noinline, used)) void bench_fn(void)
{
	__asm__ __volatile__("nop" ::: "memory");
}

ROW_PLAIN(row_uprobe, bench_fn())

/* File offset of a symbol of our own ELF file, from its symbol table */
static unsigned long elf_file_offset(const char *path, const char *sym,
				     unsigned long *vaddr_out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const uint8_t *map;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
	unsigned long vaddr = 0, off = 0;
	int i, j;

	if (fd < 0 || fstat(fd, &st))
		die("open %s: %s", path, strerror(errno));
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		die("mmap %s", path);
	eh = (const void *)map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		die("%s is not a 64-bit ELF file", path);
	sh = (const void *)(map + eh->e_shoff);
	for (i = 0; i < eh->e_shnum && !vaddr; i++) {
		const Elf64_Sym *syms;
		const char *strtab;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		syms = (const void *)(map + sh[i].sh_offset);
		strtab = (const char *)(map + sh[sh[i].sh_link].sh_offset);
		for (j = 0; j < (int)(sh[i].sh_size / sizeof(*syms)); j++) {
			if (!strcmp(strtab + syms[j].st_name, sym) &&
			    ELF64_ST_TYPE(syms[j].st_info) == STT_FUNC) {
				vaddr = syms[j].st_value;
				/* Section address / file offset adjustment */
				off = vaddr - sh[syms[j].st_shndx].sh_addr +
				      sh[syms[j].st_shndx].sh_offset;
				break;
			}
		}
	}
	if (!vaddr)
		die("symbol %s not found in %s (stripped?)", sym, path);
	/* Cross-check with the loadable segment that maps it */
	ph = (const void *)(map + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr < ph[i].p_vaddr + ph[i].p_filesz) {
			if (vaddr - ph[i].p_vaddr + ph[i].p_offset != off)
				die("section and segment offsets of %s disagree", sym);
		}
	}
	munmap((void *)map, st.st_size);
	*vaddr_out = vaddr;
	return off;
}

static void uprobe_setup(bool on, unsigned long *offset_out)
{
	char exe[512], cmd[700];
	unsigned long vaddr, off;
	ssize_t n;

	if (!on) {
		event_enable("uprobes", "bench_fn", false);
		must_write_file(TRACEFS "/uprobe_events", "-:uprobes/bench_fn");
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		die("readlink /proc/self/exe");
	exe[n] = '\0';
	off = elf_file_offset(exe, "bench_fn", &vaddr);
	if (vaddr != (unsigned long)(uintptr_t)bench_fn)
		die("bench_fn at %p but the ELF file says 0x%lx (PIE?)",
		    (void *)bench_fn, vaddr);
	snprintf(cmd, sizeof(cmd), "p:uprobes/bench_fn %s:0x%lx", exe, off);
	write_file(TRACEFS "/uprobe_events", "-:uprobes/bench_fn");
	{
		int fd = open(TRACEFS "/uprobe_events", O_WRONLY | O_APPEND);

		if (fd < 0 || write(fd, cmd, strlen(cmd)) < 0)
			die("%s > uprobe_events: %s", cmd, strerror(errno));
		close(fd);
	}
	event_enable("uprobes", "bench_fn", true);
	*offset_out = off;
}

/* perf: per-task counting of a tracepoint into an mmap ring buffer */
#define PERF_RING_PAGES 4096	/* 16 MiB: > 100k records of 80 bytes */

static int perf_attach(long id, struct perf_event_mmap_page **ring)
{
	struct perf_event_attr pe = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(pe),
		.config = id,
		.sample_period = 1,
		/* What `perf record -e` asks for on a tracepoint */
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW,
		.watermark = 1,
		.wakeup_watermark = (PERF_RING_PAGES - 16) * 4096,
	};
	int fd = syscall(__NR_perf_event_open, &pe, 0, -1, -1,
			 PERF_FLAG_FD_CLOEXEC);
	void *p;

	if (fd < 0)
		die("perf_event_open(tracepoint %ld): %s", id, strerror(errno));
	p = mmap(NULL, (PERF_RING_PAGES + 1) * 4096, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap perf ring: %s", strerror(errno));
	*ring = p;
	return fd;
}

static uint64_t perf_drain(struct perf_event_mmap_page *ring)
{
	uint64_t head = __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE);
	uint64_t used = head - ring->data_tail;

	__atomic_store_n(&ring->data_tail, head, __ATOMIC_RELEASE);
	return used;
}

static void between_perf(void *ctx)
{
	struct wctx *w = ctx;

	perf_drain(w->ring);
}

/*
 * measure() of the row fn on w, printed as key with what reached the
 * consumer: perf bytes per op when ring is given, else ftrace records
 */
static void measure_delivery(struct result *r, const char *key, row_fn fn,
			     struct wctx *w, struct perf_event_mmap_page *ring)
{
	long long rec0 = ftrace_records();

	if (ring)
		perf_drain(ring);
	measure(r, fn, w, opt_ops, ring ? between_perf : NULL);
	if (ring)
		print_row(key, r, "%.0f perf bytes/op in the last repeat",
			  (double)perf_drain(ring) / opt_ops);
	else
		print_row(key, r, "%.2f records/op",
			  (double)(ftrace_records() - rec0) /
			  (opt_ops * (opt_warm + opt_reps)));
}

struct event {
	const char *key;	/* row key part */
	const char *name;
	int fd;
	int index;
	bool remote;
	int status_index;
	uint32_t word;		/* remote-write enable word */
};

static uint8_t *status_page;

static void event_register(struct event *e, int fd, const char *desc,
			   bool remote)
{
	e->fd = fd;
	e->remote = remote;
	if (remote)
		e->index = reg_write(fd, desc, &e->word, 0, 0);
	else
		e->index = reg_status(fd, desc, &e->status_index);
	if (e->index < 0)
		die("register '%s': %s", desc, strerror(-e->index));
}

static void enabled_check(struct event *e, bool want)
{
	bool on = e->remote ? (e->word & 1) : status_page[e->status_index];

	if (on != want)
		fail("%s: enabled state in user memory is %d, expected %d",
		     e->name, on, want);
}

static volatile int sleeper_stop;

static void *sleeper_thread(void *arg)
{
	(void)arg;
	while (!sleeper_stop)
		usleep(200000);
	return NULL;
}

static void cmd_warmup(double secs)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);

	while (now_ns() < end)
		row_getppid(NULL, 10000);
}

/*
 * The payload of the 5-field events (the rows' bench_5f, prof's prof_5f)
 * after the index: a, b, c, d, the location of e (32 bytes, right after
 * it), then e
 */
static struct {
	uint64_t a;
	uint32_t b, c;
	char d[16];
	uint32_t e;
} __attribute__((packed)) fixed5 = { 1, 2, 3, "fixed-string", 32 << 16 };
static char str5[32] = "a rel_loc string of 32 bytes...";

/*
 * The segment shapes of LinuxTracepoints' EventHeader writes
 * (libtracepoint's tracepoint_write() and libeventheader-tracepoint's
 * eventheader_write(), TraceLoggingProvider.h): the write index; the 8-byte
 * EventHeader; the metadata extension (4-byte extension header, then the
 * event name and each field's name and encoding); then one segment per
 * field value, a variable array as its u16 count and its elements. The
 * event is registered as EventHeader registers them: the header's 6 fields
 * declared, the rest of the payload beyond them.
 */
#define EH_DESC "bench_eh u8 eventheader_flags; u8 version; u16 id; u16 tag; u8 opcode; u8 level"
static const uint8_t eh_header[8] = { 0x07, 0, 0, 0, 0, 0, 0, 4 };
/* "Small", one int32 field "x" */
static const uint8_t eh_meta_small[13] = { 9, 0, 1, 0,
	'S', 'm', 'a', 'l', 'l', 0, 'x', 0, 4 };
static const int32_t eh_val_small = 42;
/* "Strarr", a string field "s" and an int32 array field "a" */
static const uint8_t eh_meta_sa[17] = { 13, 0, 1, 0,
	'S', 't', 'r', 'a', 'r', 'r', 0, 's', 0, 2, 'a', 0, 0x44 };
static const char eh_str[12] = "hello world";
static const uint16_t eh_count = 4;
static const int32_t eh_array[4] = { 1, 2, 3, 4 };

/* w->iov, and the same bytes in one buffer in @flat (index first) */
static void shape(struct wctx *w, char *flat, const int *index,
		  const struct iovec *segs, int nsegs)
{
	size_t off = 4;
	int i;

	w->iov[0] = (struct iovec){ (void *)index, 4 };
	memcpy(flat, index, 4);
	for (i = 0; i < nsegs; i++) {
		w->iov[i + 1] = segs[i];
		memcpy(flat + off, segs[i].iov_base, segs[i].iov_len);
		off += segs[i].iov_len;
	}
	w->iovcnt = nsegs + 1;
	w->buf = flat;
	w->len = off;
	w->expect = off;
}

/* records per op of the last measure() since @rec0 */
static double recs_per_op(long long rec0)
{
	return (double)(ftrace_records() - rec0) /
	       (opt_ops * (opt_warm + opt_reps));
}

/*
 * The 16-byte event written with 3, 4 and 6 segments (the same 20 bytes as
 * the write() and 2-segment rows), and EventHeader's shapes, each beside
 * the same writev() to /dev/null, write() of the same bytes in one buffer,
 * and a write of the payload to trace_marker
 */
static void rows_segments(int fd, int nullfd, struct event *e,
			  const char *payload)
{
	static const struct { const char *key; int n; size_t cut[6]; } splits[] = {
		{ "3", 2, { 8, 8 } },
		{ "4", 3, { 4, 4, 8 } },
		{ "6", 5, { 4, 4, 4, 2, 2 } },
	};
	const struct iovec eh_small[] = {
		{ (void *)eh_header, sizeof(eh_header) },
		{ (void *)eh_meta_small, sizeof(eh_meta_small) },
		{ (void *)&eh_val_small, sizeof(eh_val_small) },
	};
	const struct iovec eh_sa[] = {
		{ (void *)eh_header, sizeof(eh_header) },
		{ (void *)eh_meta_sa, sizeof(eh_meta_sa) },
		{ (void *)eh_str, sizeof(eh_str) },
		{ (void *)&eh_count, sizeof(eh_count) },
		{ (void *)eh_array, sizeof(eh_array) },
	};
	static const char *const eh_notes[] = {
		"EventHeader small event: index, header 8, metadata 13, int32 (4 segments, 25-byte payload)",
		"EventHeader string + array: index, header 8, metadata 17, string 12, count 2, int32[4] (6 segments, 55-byte payload)",
	};
	struct event eh = { .name = "bench_eh" };
	static char flat[128];
	struct result r;
	long long rec0;
	struct wctx w;
	char key[64];
	int mfd, i, k;

	mfd = open(TRACEFS "/trace_marker", O_WRONLY | O_CLOEXEC);
	if (mfd < 0)
		die("open trace_marker: %s", strerror(errno));

	event_enable("user_events", e->name, true);
	for (i = 0; i < 3; i++) {
		struct iovec segs[6];
		size_t off = 0;

		for (k = 0; k < splits[i].n; k++) {
			segs[k] = (struct iovec){ (void *)(payload + off),
						  splits[i].cut[k] };
			off += splits[i].cut[k];
		}
		memset(&w, 0, sizeof(w));
		shape(&w, flat, &e->index, segs, splits[i].n);
		w.fd = nullfd;
		measure(&r, row_writev, &w, opt_ops, NULL);
		snprintf(key, sizeof(key), "devnull_writev%s", splits[i].key);
		print_row(key, &r, "writev() of %d segments (20 bytes) to /dev/null",
			  w.iovcnt);
		w.fd = fd;
		rec0 = ftrace_records();
		measure(&r, row_writev, &w, opt_ops, NULL);
		snprintf(key, sizeof(key), "ue_s_writev%s_ft", splits[i].key);
		print_row(key, &r, "index + 16-byte payload in %d segments; %.2f records/op",
			  w.iovcnt, recs_per_op(rec0));
	}
	event_enable("user_events", e->name, false);

	event_register(&eh, fd, EH_DESC, false);
	event_enable("user_events", eh.name, true);
	for (i = 0; i < 2; i++) {
		const char *sk = i ? "eh_sa" : "eh_small";

		memset(&w, 0, sizeof(w));
		if (i)
			shape(&w, flat, &eh.index, eh_sa, 5);
		else
			shape(&w, flat, &eh.index, eh_small, 3);
		w.fd = nullfd;
		measure(&r, row_writev, &w, opt_ops, NULL);
		snprintf(key, sizeof(key), "devnull_%s_writev", sk);
		print_row(key, &r, "%s, to /dev/null", eh_notes[i]);
		measure(&r, row_write, &w, opt_ops, NULL);
		snprintf(key, sizeof(key), "devnull_%s_write", sk);
		print_row(key, &r, "write() of the same %zu bytes to /dev/null", w.len);
		w.fd = fd;
		rec0 = ftrace_records();
		measure(&r, row_writev, &w, opt_ops, NULL);
		snprintf(key, sizeof(key), "ue_%s_writev_ft", sk);
		print_row(key, &r, "%s; %.2f records/op", eh_notes[i],
			  recs_per_op(rec0));
		rec0 = ftrace_records();
		measure(&r, row_write, &w, opt_ops, NULL);
		snprintf(key, sizeof(key), "ue_%s_write_ft", sk);
		print_row(key, &r, "write() of the same %zu bytes; %.2f records/op",
			  w.len, recs_per_op(rec0));
		/* trace_marker: the payload, without the index */
		w.fd = mfd;
		w.buf = flat + 4;
		w.len -= 4;
		w.expect = w.len;
		rec0 = ftrace_records();
		measure(&r, row_write, &w, opt_ops, NULL);
		snprintf(key, sizeof(key), "marker_%s", sk);
		print_row(key, &r, "write() of the %zu-byte payload to trace_marker; %.2f records/op",
			  w.len, recs_per_op(rec0));
	}
	event_enable("user_events", eh.name, false);
	close(mfd);
}

static void cmd_rows(void)
{
	static const char payload[16] = "0123456789abcde";
	struct event es = { .key = "s", .name = "bench_s" };
	struct event er = { .key = "r", .name = "bench_r" };
	struct event e5 = { .name = "bench_5f" };
	struct event enp = { .name = "bench_np" };
	struct event *evs[] = { &es, &er };
	struct event *em = opt_remote_only ? &er : &es;
	struct result r, loop;
	struct wctx w;
	char buf[256];
	long long rec0;
	unsigned long off;
	int fd, nullfd, mfd, i, k;

	fd = open_data();
	if (!opt_remote_only) {
		status_page = mmap(NULL, 4096, PROT_READ, MAP_SHARED,
				   open(STATUS_FILE, O_RDONLY | O_CLOEXEC), 0);
		if (status_page == MAP_FAILED)
			die("mmap %s: %s", STATUS_FILE, strerror(errno));
		event_register(&es, fd, "bench_s char[16] payload", false);
	}
	event_register(&er, fd, "bench_r char[16] payload", true);
	event_register(&e5, fd,
		       "bench_5f u64 a; u32 b; u32 c; char[16] d; __rel_loc char[] e",
		       opt_remote_only);
	event_register(&enp, fd, "bench_np char[16] payload", opt_remote_only);
	must_write_file(TRACEFS "/tracing_on", "1");

	/* Cheap rows run 20x the ops so timer ticks do not show */
	measure(&loop, row_loop, NULL, opt_ops * 20, NULL);
	print_row("loop", &loop, "for (i = 0; i < n; i++) barrier(), %ld ops per repeat",
		  opt_ops * 20);

	measure(&r, row_getppid, NULL, opt_ops, NULL);
	print_row("getppid", &r, NULL);

	nullfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	memset(&w, 0, sizeof(w));
	w.fd = nullfd;
	w.buf = payload;
	w.len = 16;
	w.expect = 16;
	measure(&r, row_write, &w, opt_ops, NULL);
	print_row("devnull", &r, NULL);
	w.iov[0] = (struct iovec){ &es.index, 4 };
	w.iov[1] = (struct iovec){ (void *)payload, 16 };
	w.iovcnt = 2;
	w.expect = 20;
	measure(&r, row_writev, &w, opt_ops, NULL);
	print_row("devnull_writev", &r, "writev(4 bytes, 16 bytes): the syscall and VFS part of the user_events writev rows");
	w.expect = 16;

	mfd = open(TRACEFS "/trace_marker", O_WRONLY | O_CLOEXEC);
	if (mfd < 0)
		die("open trace_marker: %s", strerror(errno));
	w.fd = mfd;
	rec0 = ftrace_records();
	measure(&r, row_write, &w, opt_ops, NULL);
	print_row("marker", &r, "%.2f records/op",
		  (double)(ftrace_records() - rec0) / (opt_ops * (opt_warm + opt_reps)));
	close(mfd);

	uprobe_setup(true, &off);
	rec0 = ftrace_records();
	measure(&r, row_uprobe, NULL, opt_ops, NULL);
	print_row("uprobe", &r, "p:uprobes/bench_fn <exe>:0x%lx; %.2f records/op",
		  off, (double)(ftrace_records() - rec0) / (opt_ops * (opt_warm + opt_reps)));
	uprobe_setup(false, NULL);

	/* user_events, ftrace then perf */
	for (k = 0; k < 2; k++) {
		for (i = opt_remote_only; i < 2; i++) {
			struct event *e = evs[i];
			char key[64];
			static char wbuf[20];
			struct perf_event_mmap_page *ring = NULL;
			int pfd = -1;
			const char *probe = k ? "perf" : "ft";

			enabled_check(e, false);
			if (k == 0)
				event_enable("user_events", e->name, true);
			else
				pfd = perf_attach(event_id("user_events", e->name), &ring);
			enabled_check(e, true);

			memcpy(wbuf, &e->index, 4);
			memcpy(wbuf + 4, payload, 16);
			memset(&w, 0, sizeof(w));
			w.fd = fd;
			w.buf = wbuf;
			w.len = 20;
			w.expect = 20;
			w.ring = ring;
			w.iov[0] = (struct iovec){ &e->index, 4 };
			w.iov[1] = (struct iovec){ (void *)payload, 16 };
			w.iovcnt = 2;

			snprintf(key, sizeof(key), "ue_%s_write_%s", e->key, probe);
			measure_delivery(&r, key, row_write, &w, ring);
			snprintf(key, sizeof(key), "ue_%s_writev_%s", e->key, probe);
			measure_delivery(&r, key, row_writev, &w, ring);

			if (k == 0) {
				event_enable("user_events", e->name, false);
			} else {
				munmap(ring, (PERF_RING_PAGES + 1) * 4096);
				close(pfd);
			}
			enabled_check(e, false);
		}
	}

	/*
	 * The perf anchor: a kernel tracepoint (sys_enter of getppid) with
	 * the same per-task perf event attached, as `perf record -e` would.
	 * Its cost minus getppid()'s is what the core's own tracepoints pay
	 * for perf delivery; the user_events perf rows beside it.
	 */
	{
		struct perf_event_mmap_page *ring;
		int pfd;

		pfd = perf_attach(event_id("syscalls", "sys_enter_getppid"), &ring);
		memset(&w, 0, sizeof(w));
		w.ring = ring;
		perf_drain(ring);
		measure(&r, row_getppid, &w, opt_ops, between_perf);
		print_row("getppid_perf", &r,
			  "perf on syscalls:sys_enter_getppid (per task, mmap ring); %.0f perf bytes/op in the last repeat",
			  (double)perf_drain(ring) / opt_ops);
		munmap(ring, (PERF_RING_PAGES + 1) * 4096);
		close(pfd);
	}

	/* 5 fields, one of them a 32-byte __rel_loc string */
	{
		event_enable("user_events", e5.name, true);
		memset(&w, 0, sizeof(w));
		w.fd = fd;
		w.iov[0] = (struct iovec){ &e5.index, 4 };
		w.iov[1] = (struct iovec){ &fixed5, sizeof(fixed5) };
		w.iov[2] = (struct iovec){ str5, sizeof(str5) };
		w.iovcnt = 3;
		w.expect = 4 + sizeof(fixed5) + sizeof(str5);
		rec0 = ftrace_records();
		measure(&r, row_writev, &w, opt_ops, NULL);
		print_row("ue_5f_writev_ft", &r,
			  "writev(index, 36 bytes of fixed fields, 32-byte string); %.2f records/op",
			  (double)(ftrace_records() - rec0) / (opt_ops * (opt_warm + opt_reps)));
		event_enable("user_events", e5.name, false);
	}

	/* writev() per segment, and the shapes EventHeader writes */
	rows_segments(fd, nullfd, &es, payload);

	/* No probe attached: EBADF */
	{
		static char wbuf[20];

		memcpy(wbuf, &enp.index, 4);
		memcpy(wbuf + 4, payload, 16);
		memset(&w, 0, sizeof(w));
		w.fd = fd;
		w.buf = wbuf;
		w.len = 20;
		w.expect = -1;
		w.expect_errno = EBADF;
		measure(&r, row_write, &w, opt_ops, NULL);
		print_row("ue_noprobe_write", &r, "write() returns -1/EBADF");
	}

	/* The user-side check while disabled */
	if (!opt_remote_only) {
		memset(&w, 0, sizeof(w));
		w.status_byte = &status_page[enp.status_index];
		measure(&r, row_check_byte, &w, opt_ops * 20, NULL);
		print_row("check_byte", &r,
			  "if (status_page[i]) ...; barrier(), %ld ops per repeat",
			  opt_ops * 20);
	}
	memset(&w, 0, sizeof(w));
	w.word = &er.word;
	w.mask = 1;
	measure(&r, row_check_word, &w, opt_ops * 20, NULL);
	print_row("check_word", &r, "if (word & bit) ...; barrier(), %ld ops per repeat",
		  opt_ops * 20);

	/*
	 * The same writev from a process with a second (sleeping) thread: the
	 * file table is shared, so fdget() takes a reference and, on a file
	 * with FMODE_ATOMIC_POS, fdget_pos() the file's f_pos_lock mutex.
	 * Last: once a thread has existed, glibc's write()/writev() take the
	 * multi-threaded (cancellation point) path for good.
	 */
	{
		static char wbuf[20];
		pthread_t t;

		if (pthread_create(&t, NULL, sleeper_thread, NULL))
			die("pthread_create");
		event_enable("user_events", em->name, true);
		memcpy(wbuf, &em->index, 4);
		memcpy(wbuf + 4, payload, 16);
		memset(&w, 0, sizeof(w));
		w.fd = fd;
		w.iov[0] = (struct iovec){ &em->index, 4 };
		w.iov[1] = (struct iovec){ (void *)payload, 16 };
		w.iovcnt = 2;
		w.expect = 20;
		rec0 = ftrace_records();
		measure(&r, row_writev, &w, opt_ops, NULL);
		print_row(opt_remote_only ? "ue_r_writev_ft_mt" : "ue_s_writev_ft_mt", &r,
			  "2-thread process (the other thread sleeps; glibc cancellation-point wrapper included); %.2f records/op",
			  (double)(ftrace_records() - rec0) / (opt_ops * (opt_warm + opt_reps)));
		w.fd = nullfd;
		w.expect = 20;
		measure(&r, row_writev, &w, opt_ops, NULL);
		print_row("devnull_writev_mt", &r, "2-thread process");
		w.fd = nullfd;
		w.buf = wbuf + 4;
		w.len = 16;
		w.expect = 16;
		measure(&r, row_write, &w, opt_ops, NULL);
		print_row("devnull_mt", &r, "2-thread process");
		event_enable("user_events", em->name, false);
		sleeper_stop = 1;
		pthread_join(t, NULL);
	}

	snprintf(buf, sizeof(buf), "loop overhead %.2f", loop.min);
	printf("INFO\t%s\n", buf);
	close(nullfd);
	close(fd);
}

/* -- prof: function_graph capture of a few ops of each row -------------- */

/*
 * For each row, a child process does COUNT ops with set_ftrace_pid naming
 * it and tracing on; it synchronises with us through shared memory only,
 * so that its trace holds the ops and nothing else but its final
 * raise(SIGSTOP). The guest script puts ONE function in set_ftrace_filter
 * with the function_graph tracer: it shows up as leaf lines "f();" (or
 * "f() {" ... "} / * f * /" around a trace event record) with its
 * inclusive duration (guest ns = instructions under -icount, plus the
 * tracer's own entry/exit cost, calibrated separately). Prints
 *   PROF row function calls total_ns ops
 */
static const char *const prof_rows[] = {
	"getppid", "devnull", "devnull_writev", "marker", "write", "writev",
	"writev_perf", "writev_5f", "noprobe", NULL,
};

struct prof_acc {
	char name[128];
	long calls;
	double ns;
};

static void prof_parse(const char *row, long count, bool tree)
{
	static char buf[8 << 20];
	static struct prof_acc acc[64];
	char *line, *save;
	int n = 0, i;

	if (ue_read_upto(TRACEFS "/trace", buf, sizeof(buf)) < 0)
		die("read trace");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *bar, *us, *fn, *end, name[128];
		double v;

		if (line[0] == '#')
			continue;
		if (tree) {
			printf("GRAPH\t%s\t%s\n", row, line);
			continue;
		}
		/* Leaf "f();" or, with funcgraph-tail, a closing "} / * f * /" */
		bar = strrchr(line, '|');
		us = strstr(line, " us ");
		if (!bar || !us || us > bar)
			continue;
		fn = bar + 1;
		while (*fn == ' ')
			fn++;
		if (fn[0] == '}') {
			fn = strstr(fn, "/* ");
			if (!fn)
				continue;
			fn += 3;
		} else if (!strstr(fn, "();")) {
			continue;
		}
		/* The number just before " us" */
		for (end = us; end > line && (isdigit((unsigned char)end[-1]) || end[-1] == '.'); end--)
			;
		v = atof(end) * 1000.0;
		snprintf(name, sizeof(name), "%s", fn);
		name[strcspn(name, " (")] = '\0';
		for (i = 0; i < n; i++)
			if (!strcmp(acc[i].name, name))
				break;
		if (i == n) {
			if (n == 64)
				continue;
			snprintf(acc[n].name, sizeof(acc[n].name), "%s", name);
			acc[n].calls = 0;
			acc[n].ns = 0;
			n++;
		}
		acc[i].calls++;
		acc[i].ns += v;
	}
	if (tree)
		return;
	for (i = 0; i < n; i++)
		printf("PROF\t%s\t%s\t%ld\t%.0f\t%ld\n", row, acc[i].name,
		       acc[i].calls, acc[i].ns, count);
	if (!n)
		printf("PROF\t%s\t-\t0\t0\t%ld\n", row, count);
}

struct prof_shared {
	volatile int ready, go;
};

static const char prof_desc[] = "prof_ev char[16] payload";
static const char prof_desc5[] =
	"prof_5f u64 a; u32 b; u32 c; char[16] d; __rel_loc char[] e";

/*
 * The child's own files (count 1, like the timed rows' single-threaded
 * process: no f_pos_lock in fdget_pos), registered again on its own file.
 */
static void prof_child(const char *row, long count, struct prof_shared *sh)
{
	static const char payload[16] = "0123456789abcde";
	struct event e = { .name = "prof_ev" }, e5 = { .name = "prof_5f" };
	struct iovec iov[2], iov5[3];
	int fd, nullfd, mfd;
	char wbuf[20];
	long i;

	fd = open_data();
	event_register(&e, fd, prof_desc, false);
	event_register(&e5, fd, prof_desc5, false);
	memcpy(wbuf, &e.index, 4);
	memcpy(wbuf + 4, payload, 16);
	iov[0] = (struct iovec){ &e.index, 4 };
	iov[1] = (struct iovec){ (void *)payload, 16 };
	iov5[0] = (struct iovec){ &e5.index, 4 };
	iov5[1] = (struct iovec){ &fixed5, sizeof(fixed5) };
	iov5[2] = (struct iovec){ str5, sizeof(str5) };
	nullfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	mfd = open(TRACEFS "/trace_marker", O_WRONLY | O_CLOEXEC);
	if (nullfd < 0 || mfd < 0)
		_exit(3);
	/* Warm the paths up (untraced: tracing is off until we are ready) */
	write(nullfd, payload, 16);
	writev(nullfd, iov, 2);
	sh->ready = 1;
	while (!sh->go)
		barrier();
	for (i = 0; i < count; i++) {
		if (!strcmp(row, "getppid"))
			getppid();
		else if (!strcmp(row, "devnull"))
			write(nullfd, payload, 16);
		else if (!strcmp(row, "devnull_writev"))
			writev(nullfd, iov, 2);
		else if (!strcmp(row, "marker"))
			write(mfd, payload, 16);
		else if (!strcmp(row, "write") || !strcmp(row, "noprobe"))
			write(fd, wbuf, 20);
		else if (!strcmp(row, "writev_5f"))
			writev(fd, iov5, 3);
		else
			writev(fd, iov, 2);
	}
	raise(SIGSTOP);
	_exit(0);
}

static void cmd_prof(long count, bool tree)
{
	struct event e = { .name = "prof_ev" }, e5 = { .name = "prof_5f" };
	struct prof_shared *sh;
	char pid[32];
	int fd, r;

	/* Status page ABI registrations persist: the events stay for the children */
	fd = open_data();
	event_register(&e, fd, prof_desc, false);
	event_register(&e5, fd, prof_desc5, false);
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("prof setup");
	must_write_file(TRACEFS "/tracing_on", "0");

	for (r = 0; prof_rows[r]; r++) {
		const char *row = prof_rows[r];
		struct perf_event_mmap_page *ring = NULL;
		bool ft = !strcmp(row, "write") || !strcmp(row, "writev");
		int pfd = -1, st;
		pid_t child;

		if (ft)
			event_enable("user_events", e.name, true);
		if (!strcmp(row, "writev_5f"))
			event_enable("user_events", e5.name, true);
		sh->ready = sh->go = 0;
		child = fork();
		if (child < 0)
			die("fork");
		if (!child)
			prof_child(row, count, sh);
		while (!sh->ready) {
			if (waitpid(child, &st, WNOHANG) == child)
				die("prof child died");
			usleep(1000);
		}
		if (!strcmp(row, "writev_perf")) {
			struct perf_event_attr pe = {
				.type = PERF_TYPE_TRACEPOINT,
				.size = sizeof(pe),
				.config = event_id("user_events", e.name),
				.sample_period = 1,
				.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
					       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
					       PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW,
				.watermark = 1,
				.wakeup_watermark = 8 * 4096,
			};

			pfd = syscall(__NR_perf_event_open, &pe, child, -1, -1,
				      PERF_FLAG_FD_CLOEXEC);
			if (pfd < 0)
				die("perf_event_open: %s", strerror(errno));
			ring = mmap(NULL, 17 * 4096, PROT_READ | PROT_WRITE,
				    MAP_SHARED, pfd, 0);
			if (ring == MAP_FAILED)
				die("perf mmap");
		}
		snprintf(pid, sizeof(pid), "%d", child);
		must_write_file(TRACEFS "/set_ftrace_pid", pid);
		{
			int t = open(TRACEFS "/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

			if (t < 0)
				die("clear trace");
			close(t);
		}
		must_write_file(TRACEFS "/tracing_on", "1");
		sh->go = 1;
		if (waitpid(child, &st, WUNTRACED) != child)
			die("waitpid");
		must_write_file(TRACEFS "/tracing_on", "0");
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		prof_parse(row, count, tree);
		if (ring) {
			munmap(ring, 17 * 4096);
			close(pfd);
		}
		if (ft)
			event_enable("user_events", e.name, false);
		if (!strcmp(row, "writev_5f"))
			event_enable("user_events", e5.name, false);
	}
	must_write_file(TRACEFS "/set_ftrace_pid", "");
	close(fd);
}

/* -- reg: DIAG_IOCSREG cost when L events exist -------------------------- */

static unsigned int name_seq;

/* Creates persistent events until @target exist, from child processes */
static void fill_to(long target)
{
	long have = active_events();

	while (have < target) {
		long n = target - have;
		pid_t pid;
		int st;

		if (n > 1000)
			n = 1000;
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			static uint32_t words[1000 / 32 + 1];
			char desc[64];
			int fd = open_data();
			long i;

			for (i = 0; i < n; i++) {
				int ret;

				snprintf(desc, sizeof(desc), "fill_%ld u32 x",
					 have + i);
				ret = reg_write(fd, desc, &words[i / 32], i % 32,
						USER_EVENT_REG_PERSIST);
				if (ret < 0)
					die("register %s: %s", desc, strerror(-ret));
			}
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			die("filler child failed");
		have += n;
	}
	have = active_events();
	if (have != target)
		die("%ld events exist, wanted %ld", have, target);
}

static long opt_batch = 100;

static void reg_batch(long level, bool remote, struct result *r)
{
	static uint32_t words[1024];
	char (*names)[64] = calloc(opt_batch, 64);
	char desc[96];
	int i, rep, fd, dfd = open_data();

	memset(r, 0, sizeof(*r));
	r->min = 1e300;
	for (rep = 0; rep < opt_warm + opt_reps; rep++) {
		uint64_t t0, t1;

		/* Idle (free under -icount sleep=off): deferred frees of the
		 * previous batch run now, not during this one */
		usleep(100000);
		fd = open_data();
		for (i = 0; i < opt_batch; i++)
			snprintf(names[i], 64, "reg_%u", name_seq++);
		t0 = now_ns();
		for (i = 0; i < opt_batch; i++) {
			int ret;

			snprintf(desc, sizeof(desc), "%s u32 x", names[i]);
			ret = remote ? reg_write(fd, desc, &words[i], 0, 0) :
				       reg_status(fd, desc, NULL);
			if (ret < 0)
				die("register %s at level %ld: %s", desc, level,
				    strerror(-ret));
		}
		t1 = now_ns();
		if (rep >= opt_warm) {
			r->reps[r->nreps] = (double)(t1 - t0) / opt_batch;
			if (r->reps[r->nreps] < r->min)
				r->min = r->reps[r->nreps];
			r->nreps++;
		}
		/* Back to @level events for the next repeat */
		if (remote)
			for (i = 0; i < opt_batch; i++)
				if (unreg_write(fd, &words[i], 0))
					die("unregister: %s", strerror(errno));
		close(fd);
		for (i = 0; i < opt_batch; i++) {
			int ret = delete_event(dfd, names[i]);

			if (ret)
				die("delete %s: %s", names[i], strerror(-ret));
		}
		if (active_events() != level)
			die("after deleting the batch %ld events exist, not %ld",
			    active_events(), level);
	}
	close(dfd);
	free(names);
}

/*
 * One process, one file, remote-write ABI: the registering process holds
 * all the earlier registrations (its enablers, its file's references).
 * The count cannot go back without closing the file, so the repeats at a
 * level are consecutive sub-batches of @opt_batch / @opt_reps registrations
 * (L+1 ... L+batch).
 */
static void reg_one_process(const char *levels)
{
	char *copy = strdup(levels), *tok, *save = NULL;
	pid_t pid = fork();
	int st;

	if (pid < 0)
		die("fork");
	if (!pid) {
		static uint32_t words[65536 / 32];
		char desc[64], key[64];
		int fd = open_data();
		long have = 0;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			long level = atol(tok), i;
			struct result r;
			uint64_t t0, t1;

			if (level + opt_batch >= 65536)
				die("level %ld too high", level);
			for (; have < level; have++) {
				snprintf(desc, sizeof(desc), "own_%ld u32 x", have);
				if (reg_write(fd, desc, &words[have / 32], have % 32, 0) < 0)
					die("register %s: %s", desc, strerror(errno));
			}
			/* opt_reps sub-batches; the count grows by only
			 * opt_batch over them (~1% of the cost at 8000) */
			memset(&r, 0, sizeof(r));
			r.min = 1e300;
			for (int rep = 0; rep < opt_reps; rep++) {
				long sub = opt_batch / opt_reps;

				usleep(20000);
				t0 = now_ns();
				for (i = 0; i < sub; i++, have++) {
					snprintf(desc, sizeof(desc), "own_%ld u32 x", have);
					if (reg_write(fd, desc, &words[have / 32], have % 32, 0) < 0)
						die("register %s: %s", desc, strerror(errno));
				}
				t1 = now_ns();
				r.reps[r.nreps] = (double)(t1 - t0) / sub;
				if (r.reps[r.nreps] < r.min)
					r.min = r.reps[r.nreps];
				r.nreps++;
			}
			snprintf(key, sizeof(key), "reg_own_%ld", level);
			print_row(key, &r,
				  "per registration, registrations %ld-%ld of one process on one file, in %d batches of %ld",
				  level + 1, level + opt_batch / opt_reps * opt_reps, opt_reps,
				  opt_batch / opt_reps);
		}
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("one-process registration child failed");
	/* Its events are not persistent: wait until they are reaped */
	while (active_events() != 0)
		usleep(100000);
	free(copy);
}

static void cmd_reg(const char *levels, const char *own_levels)
{
	char *copy = strdup(levels), *tok, *save = NULL;
	struct result r;
	char key[64];

	if (active_events() != 0)
		fail("%ld events exist before the registration rows", active_events());
	if (*own_levels)
		reg_one_process(own_levels);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long level = atol(tok);
		uint64_t t0 = now_ns();

		fill_to(level);
		printf("INFO\tfilled to %ld events in %.3f s guest time\n", level,
		       (now_ns() - t0) / 1e9);
		reg_batch(level, false, &r);
		snprintf(key, sizeof(key), "reg_s_%ld", level);
		print_row(key, &r, "per registration, batches of %ld new events", opt_batch);
		reg_batch(level, true, &r);
		snprintf(key, sizeof(key), "reg_r_%ld", level);
		print_row(key, &r, "per registration, batches of %ld new events", opt_batch);
	}
	free(copy);
}

/* -- memory ------------------------------------------------------------- */

#define MAX_SLABS 512

struct snapshot {
	long long mem[16];	/* bytes, see mem_fields */
	int nslabs;
	struct {
		char name[64];
		long long bytes;
	} slab[MAX_SLABS];
};

static const char *const mem_fields[] = {
	"MemFree", "MemAvailable", "Slab", "SReclaimable", "SUnreclaim",
	"Percpu", "KernelStack", "PageTables", "VmallocUsed", NULL,
};

static void snapshot(struct snapshot *s)
{
	static char buf[1 << 20];
	char *line, *save;
	int i;

	sync();
	/* Let RCU-deferred frees and reaps run, drop clean caches */
	usleep(200000);
	write_file("/proc/sys/vm/drop_caches", "3");
	usleep(200000);
	write_file("/proc/sys/vm/drop_caches", "3");

	memset(s, 0, sizeof(*s));
	if (ue_read_upto("/proc/meminfo", buf, sizeof(buf)) < 0)
		die("read /proc/meminfo");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (i = 0; mem_fields[i]; i++) {
			size_t l = strlen(mem_fields[i]);

			if (!strncmp(line, mem_fields[i], l) && line[l] == ':')
				s->mem[i] = atoll(line + l + 1) * 1024;
		}
	if (ue_read_upto("/proc/slabinfo", buf, sizeof(buf)) <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line && s->nslabs < MAX_SLABS;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		long long active, num, objsize;

		if (sscanf(line, "%63s %lld %lld %lld", name, &active, &num,
			   &objsize) != 4)
			continue;
		snprintf(s->slab[s->nslabs].name, 64, "%s", name);
		/* Live objects: freed ones left in partial slabs do not count */
		s->slab[s->nslabs].bytes = active * objsize;
		(void)num;
		s->nslabs++;
	}
}

static void print_mem(const char *key, long units, struct snapshot *a,
		      struct snapshot *b)
{
	struct { const char *name; double per; } top[MAX_SLABS];
	int i, j, n = 0;

	for (i = 0; mem_fields[i]; i++) {
		double d = (double)(b->mem[i] - a->mem[i]) / units;

		/* Free and available memory shrink: report what was used */
		if (i < 2)
			d = -d;
		printf("MEM\t%s\t%ld\t%s\t%.1f\n", key, units, mem_fields[i], d);
	}
	{
		double live = 0;

		for (i = 0; i < b->nslabs; i++) {
			long long before = 0;

			for (j = 0; j < a->nslabs; j++)
				if (!strcmp(a->slab[j].name, b->slab[i].name))
					before = a->slab[j].bytes;
			live += b->slab[i].bytes - before;
		}
		if (b->nslabs)
			printf("MEM\t%s\t%ld\tSlabObjects\t%.1f\n", key, units,
			       live / units);
	}
	for (i = 0; i < b->nslabs; i++) {
		long long before = 0;

		for (j = 0; j < a->nslabs; j++)
			if (!strcmp(a->slab[j].name, b->slab[i].name))
				before = a->slab[j].bytes;
		if (b->slab[i].bytes - before > units * 4) {
			top[n].name = b->slab[i].name;
			top[n].per = (double)(b->slab[i].bytes - before) / units;
			n++;
		}
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (top[j].per > top[i].per) {
				__typeof__(top[0]) t = top[i];

				top[i] = top[j];
				top[j] = t;
			}
	for (i = 0; i < n && i < 12; i++)
		printf("SLAB\t%s\t%ld\t%s\t%.1f\n", key, units, top[i].name,
		       top[i].per);
	fflush(stdout);
}

/*
 * One process registers @total new events on one file (remote-write ABI,
 * persistent), timed per chunk of 1000. Memory is snapshotted before, at
 * @memat (the process holding them) and after the process exited.
 */
static void cmd_regtime(long total, long memat)
{
	static struct snapshot s0, s1, s2;
	uint32_t *words = calloc(total / 32 + 1, 4);
	int p2c[2], c2p[2];
	long base = active_events();
	pid_t pid;
	char c;
	int st;

	if (pipe(p2c) || pipe(c2p))
		die("pipe");
	pid = fork();
	if (!pid) {
		char desc[64];
		uint64_t t0 = now_ns(), tstart = t0;
		int fd = open_data();
		long i;

		memset(words, 0, (total / 32 + 1) * 4);
		if (write(c2p[1], "r", 1) != 1 || read(p2c[0], &c, 1) != 1)
			_exit(3);
		t0 = tstart = now_ns();
		for (i = 0; i < total; i++) {
			int ret;

			snprintf(desc, sizeof(desc), "rt_%ld u32 x", i);
			ret = reg_write(fd, desc, &words[i / 32], i % 32,
					USER_EVENT_REG_PERSIST);
			if (ret < 0)
				die("register %s: %s", desc, strerror(-ret));
			if ((i + 1) % 1000 == 0 || i + 1 == total) {
				uint64_t t1 = now_ns();

				printf("CHUNK\tregtime\t%ld\t%ld\t%.6f\n", i / 1000,
				       i % 1000 + 1, (t1 - t0) / 1e9);
				fflush(stdout);
				if (i + 1 == memat) {
					if (write(c2p[1], "m", 1) != 1 ||
					    read(p2c[0], &c, 1) != 1)
						_exit(3);
				}
				t0 = now_ns();
			}
		}
		printf("INFO\tregistered %ld events in one process in %.3f s (chunks exclude the memory snapshot)\n",
		       total, (now_ns() - tstart) / 1e9);
		fflush(stdout);
		_exit(0);
	}
	if (read(c2p[0], &c, 1) != 1)
		die("child");
	snapshot(&s0);
	if (write(p2c[1], "g", 1) != 1 || read(c2p[0], &c, 1) != 1)
		die("child");
	snapshot(&s1);
	if (write(p2c[1], "g", 1) != 1)
		die("child");
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("regtime child failed");
	snapshot(&s2);
	print_mem("event_held", memat, &s0, &s1);
	print_mem("event", total, &s0, &s2);
	if (active_events() != base + total)
		fail("%ld events exist after regtime, expected %ld",
		     active_events(), base + total);
	free(words);
}

/* @count remote-write enablers of one event, each on its own word */
static void cmd_enablers(long count)
{
	static struct snapshot s0, s1;
	uint32_t *words = calloc(count + 1, 4);
	int fd = open_data();
	uint64_t t0;
	long i;
	int ret;

	ret = reg_write(fd, "en_ev u32 x", &words[count], 0, 0);
	if (ret < 0)
		die("register en_ev: %s", strerror(-ret));
	snapshot(&s0);
	t0 = now_ns();
	for (i = 0; i < count; i++) {
		ret = reg_write(fd, "en_ev u32 x", &words[i], 0, 0);
		if (ret < 0)
			die("enabler %ld: %s", i, strerror(-ret));
		if ((i + 1) % 1000 == 0) {
			uint64_t t1 = now_ns();

			printf("CHUNK\tenablers\t%ld\t1000\t%.6f\n", i / 1000,
			       (t1 - t0) / 1e9);
			t0 = t1;
		}
	}
	fflush(stdout);
	snapshot(&s1);
	print_mem("enabler", count, &s0, &s1);
	close(fd);
	free(words);
}

/*
 * -- forks: fork() of a process with N enable bits -----------------------
 *
 * "FORK <bits> <fork ms> <fork+exit ms> <worst status ms>": the median
 * time fork() takes in the parent, the median time from fork() to the
 * parent's waitpid() of a child that exits at once (its task work copies
 * the enablers before that), and the worst time a reader of
 * user_events_status (which takes event_mutex) waited meanwhile
 * (ue_status_reader()).
 */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void cmd_forks(const char *levels, int reps)
{
	char *list = strdup(levels), *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long bits = atol(tok), i;
		/* Enablers belong to the address space: one process per level */
		pid_t level = fork();
		int st;

		if (level < 0)
			die("fork");
		if (level) {
			waitpid(level, &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				fail("forks level %ld: status %#x", bits, st);
			/* Let the enablers and the event go */
			usleep(200000);
			continue;
		}
		uint32_t *words = calloc(bits / 32 + 1, 4);
		double fork_ms[64], total_ms[64];
		struct ue_status_reader sr = { .pause_us = 1000 };
		pthread_t reader;
		int fd = open_data(), r, ret;

		for (i = 0; i < bits; i++) {
			ret = reg_write(fd, "fork_ev u32 x", &words[i / 32],
					i % 32, 0);
			if (ret < 0)
				die("enabler %ld: %s", i, strerror(-ret));
		}
		if (pthread_create(&reader, NULL, ue_status_reader, &sr))
			die("pthread_create");
		for (r = 0; r < reps && r < 64; r++) {
			uint64_t t0 = now_ns(), t1;
			pid_t pid = fork();

			if (pid < 0)
				die("fork");
			if (!pid)
				_exit(0);
			t1 = now_ns();
			waitpid(pid, NULL, 0);
			fork_ms[r] = (t1 - t0) / 1e6;
			total_ms[r] = (now_ns() - t0) / 1e6;
			usleep(20000);
		}
		sr.stop = 1;
		pthread_join(reader, NULL);
		qsort(fork_ms, r, sizeof(double), cmp_double);
		qsort(total_ms, r, sizeof(double), cmp_double);
		printf("FORK\t%ld\t%.3f\t%.3f\t%.3f\n", bits, fork_ms[r / 2],
		       total_ms[r / 2], sr.worst_s * 1e3);
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	free(list);
}

/*
 * -- toggles: root's tracing while a tenant toggles an event with N bits --
 *
 * "TOGGLE <bits> <enable ms> <worst enable ms> <worst status ms> <toggles>":
 * a holder process registers up to 65536 (max_enablers) bits of one event
 * and forks children that inherit them until N bits exist, then toggles
 * its event with perf_event_open() and close() in a loop; meanwhile root
 * enables and disables an unrelated core event (syscalls sys_enter_getppid)
 * 21 times (the median and worst enable+disable), and a reader of
 * user_events_status (event_mutex) keeps its worst read. Both wait for
 * event_mutex, which each toggle took: flat in N when no bit is written
 * under it (issue 30, item 2).
 */
#define TOGGLE_PER_PROC 65536

static void toggle_holder(long bits, int ready_fd, int stop_fd)
{
	long mine = bits < TOGGLE_PER_PROC ? bits : TOGGLE_PER_PROC, i, held;
	uint32_t *words = calloc(mine / 32 + 1, 4);
	int fd = open_data(), ret, nkids = 0;
	pid_t kids[64];
	long toggles = 0;
	char c;

	for (i = 0; i < mine; i++) {
		ret = reg_write(fd, "tog_ev u32 x", &words[i / 32], i % 32, 0);
		if (ret < 0)
			die("enabler %ld: %s", i, strerror(-ret));
	}
	/* Children inherit the bits and wait for the end */
	for (held = mine; held < bits && nkids < 64; held += mine) {
		kids[nkids] = fork();
		if (kids[nkids] < 0)
			die("fork");
		if (!kids[nkids]) {
			if (read(stop_fd, &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		nkids++;
	}
	if (write(ready_fd, "r", 1) != 1)
		_exit(3);
	fcntl(stop_fd, F_SETFL, O_NONBLOCK);
	while (read(stop_fd, &c, 1) < 0 && errno == EAGAIN) {
		int pfd = syscall(SYS_perf_event_open, &(struct perf_event_attr){
					.type = PERF_TYPE_TRACEPOINT,
					.size = sizeof(struct perf_event_attr),
					.config = event_id("user_events", "tog_ev"),
					.sample_type = PERF_SAMPLE_RAW,
					.sample_period = 1,
				  }, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

		if (pfd < 0)
			die("perf_event_open tog_ev: %s", strerror(errno));
		close(pfd);
		toggles++;
	}
	if (write(ready_fd, &toggles, sizeof(toggles)) != sizeof(toggles))
		_exit(3);
	for (i = 0; i < nkids; i++)
		waitpid(kids[i], NULL, 0);
	_exit(0);
}

static void cmd_toggles(const char *levels, int reps)
{
	char *list = strdup(levels), *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct ue_status_reader sr = { .pause_us = 1000 };
		long bits = atol(tok), toggles = 0;
		int ready[2], stop[2], r, st;
		double en_ms[64];
		pthread_t reader;
		pid_t holder;
		char c;

		if (pipe(ready) || pipe(stop))
			die("pipe");
		holder = fork();
		if (holder < 0)
			die("fork");
		if (!holder) {
			close(ready[0]);
			close(stop[1]);
			toggle_holder(bits, ready[1], stop[0]);
		}
		close(ready[1]);
		close(stop[0]);
		if (read(ready[0], &c, 1) != 1)
			die("toggles holder %ld", bits);
		if (pthread_create(&reader, NULL, ue_status_reader, &sr))
			die("pthread_create");
		for (r = 0; r < reps && r < 64; r++) {
			uint64_t t0 = now_ns();

			event_enable("syscalls", "sys_enter_getppid", true);
			event_enable("syscalls", "sys_enter_getppid", false);
			en_ms[r] = (now_ns() - t0) / 1e6;
			usleep(20000);
		}
		sr.stop = 1;
		pthread_join(reader, NULL);
		close(stop[1]);
		if (read(ready[0], &toggles, sizeof(toggles)) !=
		    sizeof(toggles))
			fail("toggles level %ld: no count", bits);
		waitpid(holder, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail("toggles level %ld: status %#x", bits, st);
		close(ready[0]);
		qsort(en_ms, r, sizeof(double), cmp_double);
		printf("TOGGLE\t%ld\t%.3f\t%.3f\t%.3f\t%ld\n", bits, en_ms[r / 2],
		       en_ms[r - 1], sr.worst_s * 1e3, toggles);
		fflush(stdout);
		/* Let the enablers and the event go */
		usleep(500000);
	}
	free(list);
}

/* -- scale: writer threads on separate CPUs ------------------------------ */

struct thr {
	pthread_t t;
	int cpu;
	int kind;		/* 0 user_events writev, 1 trace_marker, 2 getppid,
				 * 3 user_events writev, each thread its own file */
	int fd;
	struct iovec iov[2];
	const void *buf;
	long ops;
	long errors;
	long vcsw;		/* voluntary context switches while writing */
};

static long thread_vcsw(void)
{
	char buf[4096], *p;

	if (ue_read_upto("/proc/thread-self/status", buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "\nvoluntary_ctxt_switches:");
	return p ? atol(p + 26) : 0;
}

#define SCALE_MAX_REPS 32

/*
 * -H DIR: the host's /proc/<pid> of the QEMU process running this guest
 * (guest.sh finds it through the host root, shared over 9p: the host's
 * /proc/self is QEMU's). Its utime + stime, in seconds, read with O_DIRECT
 * (the share is mounted cache=loose, and a proc file's size is 0).
 */
static const char *host_proc;

static double host_cpu(void)
{
	static char *buf;
	char path[512], *p;
	unsigned long ut, st;
	ssize_t n;
	int fd, i;

	if (!host_proc)
		return -1;
	if (!buf && posix_memalign((void **)&buf, 4096, 4096))
		return -1;
	snprintf(path, sizeof(path), "%s/stat", host_proc);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return -1;
	n = read(fd, buf, 4095);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* after "pid (comm)": state is field 3, utime 14, stime 15 */
	for (i = 2; p && i < 14; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static double scale_cpu;	/* host CPU seconds of the last scale_run() */

static volatile int scale_go, scale_stop;

static void *scale_thread(void *arg)
{
	struct thr *t = arg;
	cpu_set_t set;
	long ops = 0, errs = 0;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		die("pin to CPU %d", t->cpu);
	while (!scale_go)
		barrier();
	t->vcsw = thread_vcsw();
	while (!scale_stop) {
		int i;

		for (i = 0; i < 64; i++) {
			switch (t->kind) {
			case 0:
			case 3:
				if (writev(t->fd, t->iov, 2) != 20)
					errs++;
				break;
			case 1:
				if (write(t->fd, t->buf, 16) != 16)
					errs++;
				break;
			default:
				getppid();
			}
		}
		ops += 64;
	}
	t->vcsw = thread_vcsw() - t->vcsw;
	t->ops = ops;
	t->errors = errs;
	return NULL;
}

static long scale_vcsw, scale_ops;

static double scale_run(int kind, int fd, int index, int nthreads, double secs)
{
	static const char payload[16] = "0123456789abcde";
	static int idx;
	struct thr th[2];
	uint64_t t0, t1;
	long ops = 0;
	int i;

	static int own_idx[2];
	int own_fd[2] = { -1, -1 };

	idx = index;
	scale_go = scale_stop = 0;
	for (i = 0; i < nthreads; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].cpu = i;
		th[i].kind = kind;
		th[i].fd = fd;
		th[i].buf = payload;
		th[i].iov[0] = (struct iovec){ &idx, 4 };
		th[i].iov[1] = (struct iovec){ (void *)payload, 16 };
		if (kind == 3) {
			own_fd[i] = open_data();
			own_idx[i] = reg_status(own_fd[i], "bench_mt char[16] payload", NULL);
			if (own_idx[i] < 0)
				die("register bench_mt: %s", strerror(-own_idx[i]));
			th[i].fd = own_fd[i];
			th[i].iov[0] = (struct iovec){ &own_idx[i], 4 };
		}
		pthread_create(&th[i].t, NULL, scale_thread, &th[i]);
	}
	usleep(100000);
	scale_cpu = host_cpu();
	t0 = now_ns();
	scale_go = 1;
	usleep((useconds_t)(secs * 1e6));
	scale_stop = 1;
	t1 = now_ns();
	scale_cpu = scale_cpu < 0 ? -1 : host_cpu() - scale_cpu;
	for (i = 0; i < nthreads; i++) {
		pthread_join(th[i].t, NULL);
		ops += th[i].ops;
		scale_ops += th[i].ops;
		scale_vcsw += th[i].vcsw;
		if (th[i].errors)
			fail("scale: %ld failed writes", th[i].errors);
		if (own_fd[i] >= 0)
			close(own_fd[i]);
	}
	return ops / ((t1 - t0) / 1e9);
}

static double median(double *v, int n)
{
	double s[SCALE_MAX_REPS];

	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * Wall-clock rates on a host that other guests load: every repeat runs
 * every kind, 1 and 2 writers back to back (the order alternates between
 * repeats, so that a drift of the host's load does not favour one), and
 * the ratio 2/1 is taken within each such pair. Printed: the median rate
 * of each (kind, writers) with all repeats, then per kind the median,
 * lowest and highest paired ratio, all of them, and the median of the
 * ratio divided by the getppid() ratio of the same repeat (what the host
 * gave the two vCPUs at that moment).
 */
static void cmd_scale(double secs, int reps)
{
	static const char *const names[] = { "ue_writev_ft", "marker", "getppid",
					     "ue_writev_ft_ownfd" };
	static const int order[] = { 2, 0, 3, 1 };
	static double rate[4][3][SCALE_MAX_REPS], cs[4][3], eff[4][3][SCALE_MAX_REPS];
	bool have_cpu = true;
	struct event e = { .name = "bench_mt" };
	int fd = open_data(), mfd, kind, rep, k, j;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		die("scale needs 2 CPUs");
	if (reps < 1 || reps > SCALE_MAX_REPS)
		die("scale: 1 to %d repeats", SCALE_MAX_REPS);
	event_register(&e, fd, "bench_mt char[16] payload", false);
	event_enable("user_events", e.name, true);
	must_write_file(TRACEFS "/tracing_on", "1");
	mfd = open(TRACEFS "/trace_marker", O_WRONLY | O_CLOEXEC);
	for (rep = 0; rep < reps; rep++) {
		for (k = 0; k < 4; k++) {
			kind = order[k];
			for (j = 0; j < 2; j++) {
				int n = rep & 1 ? 2 - j : 1 + j;

				scale_vcsw = scale_ops = 0;
				rate[kind][n][rep] = scale_run(kind, kind == 1 ? mfd : fd,
							       e.index, n, secs);
				/* ops per host CPU second of the whole QEMU process */
				if (scale_cpu > 0)
					eff[kind][n][rep] = rate[kind][n][rep] * secs / scale_cpu;
				else
					have_cpu = false;
				cs[kind][n] += scale_ops ?
					1000.0 * scale_vcsw / scale_ops / reps : 0;
			}
		}
	}
	for (kind = 0; kind < 4; kind++) {
		double r[SCALE_MAX_REPS], norm[SCALE_MAX_REPS], lo = 1e9, hi = 0;
		char list[2][512] = { "", "" }, rl[512] = "";
		int n;

		for (rep = 0; rep < reps; rep++) {
			r[rep] = rate[kind][2][rep] / rate[kind][1][rep];
			norm[rep] = r[rep] / (rate[2][2][rep] / rate[2][1][rep]);
			lo = r[rep] < lo ? r[rep] : lo;
			hi = r[rep] > hi ? r[rep] : hi;
			snprintf(rl + strlen(rl), sizeof(rl) - strlen(rl), "%s%.3f",
				 rep ? "," : "", r[rep]);
			for (n = 1; n <= 2; n++)
				snprintf(list[n - 1] + strlen(list[n - 1]),
					 sizeof(list[0]) - strlen(list[n - 1]),
					 "%s%.0f", rep ? "," : "", rate[kind][n][rep]);
		}
		/* Voluntary context switches per 1000 ops: writers that sleep
		 * (on a contended mutex) instead of running */
		for (n = 1; n <= 2; n++)
			printf("SCALE\t%s\t%d\t%.0f\t%s\t%.2f\n", names[kind], n,
			       median(rate[kind][n], reps), list[n - 1], cs[kind][n]);
		printf("SCALER\t%s\t%.3f\t%.3f\t%.3f\t%s\t%.3f\n", names[kind],
		       median(r, reps), lo, hi, rl, median(norm, reps));
		/*
		 * The ratio if the host gave each busy vCPU a core: 2 x (ops
		 * per host CPU second with 2 writers) / (the same with 1)
		 */
		if (have_cpu) {
			lo = 1e9;
			hi = 0;
			rl[0] = 0;
			for (rep = 0; rep < reps; rep++) {
				r[rep] = 2 * eff[kind][2][rep] / eff[kind][1][rep];
				lo = r[rep] < lo ? r[rep] : lo;
				hi = r[rep] > hi ? r[rep] : hi;
				snprintf(rl + strlen(rl), sizeof(rl) - strlen(rl),
					 "%s%.3f", rep ? "," : "", r[rep]);
			}
			printf("SCALEC\t%s\t%.3f\t%.3f\t%.3f\t%s\n", names[kind],
			       median(r, reps), lo, hi, rl);
		}
		fflush(stdout);
	}
	/*
	 * The event stays enabled: disabling it patches kernel text, and
	 * under QEMU 7.2's multi-threaded TCG (this boot) a vCPU can then run
	 * stale code (seen: CPU 1 spinning in __schedule at a patched site,
	 * CPU 0 in text_poke_bp()'s IPI, soft lockup). The guest exits next.
	 */
	close(mfd);
	close(fd);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	const char *levels = "1,1000,32000", *own_levels = "1,1000,8000";
	double secs = 2;
	long total = 32000, memat = 10000;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "prof")) {
		cmd_prof(argc > 2 ? atol(argv[2]) : 5,
			 argc > 3 && !strcmp(argv[3], "tree"));
		return failures ? 1 : 0;
	}
	if (!strcmp(cmd, "warmup")) {
		cmd_warmup(argc > 2 ? atof(argv[2]) : 1);
		return 0;
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "n:r:w:b:l:o:d:N:m:H:R")) != -1) {
		switch (opt) {
		case 'n': opt_ops = atol(optarg); break;
		case 'r': opt_reps = atoi(optarg); break;
		case 'w': opt_warm = atoi(optarg); break;
		case 'b': opt_batch = atol(optarg); break;
		case 'l': levels = optarg; break;
		case 'o': own_levels = optarg; break;
		case 'd': secs = atof(optarg); break;
		case 'N': total = atol(optarg); break;
		case 'm': memat = atol(optarg); break;
		case 'H': host_proc = optarg; break;
		case 'R': opt_remote_only = true; break;
		default: die("bad option");
		}
	}
	if (opt_reps < 1 || opt_reps > 60 || opt_warm < 0 || opt_ops < 1)
		die("bad -r/-w/-n");

	if (!strcmp(cmd, "rows"))
		cmd_rows();
	else if (!strcmp(cmd, "reg"))
		cmd_reg(levels, own_levels);
	else if (!strcmp(cmd, "scale"))
		cmd_scale(secs, opt_reps);
	else if (!strcmp(cmd, "regtime"))
		cmd_regtime(total, memat);
	else if (!strcmp(cmd, "enablers"))
		cmd_enablers(total);
	else if (!strcmp(cmd, "forks"))
		cmd_forks(levels, opt_reps);
	else if (!strcmp(cmd, "toggles"))
		cmd_toggles(levels, opt_reps);
	else
		die("usage: ue_bench rows|reg|scale|regtime|enablers|forks|toggles|prof|warmup [options]");
	return failures ? 1 : 0;
}
