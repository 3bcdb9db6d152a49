/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space helpers of every user_events.ko test program (selftests,
 * stress, fuzz, race, fault injection, bench), none of which needs the
 * test harness: tracefs paths, perf events on a tracepoint, registration
 * in both ABIs (the status page and the remote write one), the enable
 * word, CPU pinning, errno names and TAP lines. Failures return -errno
 * (or -1 with errno set, as the system call does, where stated).
 */
#ifndef UE_HELPERS_H
#define UE_HELPERS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "uapi/linux/user_events.h"
#include <time.h>

#define UE_TRACEFS	"/sys/kernel/tracing"
#define UE_DATA_FILE	UE_TRACEFS "/user_events_data"
#define UE_STATUS_FILE	UE_TRACEFS "/user_events_status"
#define UE_EVENTS_DIR	UE_TRACEFS "/events/" USER_EVENTS_SYSTEM
#define UE_TRACE_FILE	UE_TRACEFS "/trace"
#define UE_MULTI_DIR	UE_TRACEFS "/events/" USER_EVENTS_MULTI_SYSTEM

/* Size of the status page, and the number of usable status bytes */
/*
 * perf_event_open() of tracepoint id, one sample per hit, for pid on cpu
 * (0, -1: the calling thread on any CPU). Returns the fd, or -1 and errno.
 */
static inline int ue_perf_open_id(long id, __u64 sample_type, pid_t pid, int cpu)
{
	struct perf_event_attr pe;

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_TRACEPOINT;
	pe.size = sizeof(pe);
	pe.config = id;
	pe.sample_period = 1;
	pe.sample_type = sample_type;
	pe.wakeup_events = 1;

	return syscall(__NR_perf_event_open, &pe, pid, cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

/*
 * Register a descriptor on fd with the status page ABI.
 * Returns 0 and fills the indexes (if not NULL), or -errno.
 * The indexes are returned as int so tests compare them without casts.
 */
static inline int ue_reg(int fd, const char *desc, int *status_index,
			 int *write_index)
{
	struct user_status_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.name_args = (__u64)(uintptr_t)desc;
	reg.status_index = 0xdeadbeef;
	reg.write_index = 0xdeadbeef;

	if (ioctl(fd, DIAG_IOCSREG, &reg) < 0)
		return -errno;

	/* Both are small numbers: a huge one shows up as negative */
	if (status_index)
		*status_index = (int)reg.status_index;
	if (write_index)
		*write_index = (int)reg.write_index;

	return 0;
}

/*
 * Reading a perf event's ring (its mmap): ue_ring_start(), then
 * ue_ring_next() copies each record into hdr and rec and returns its body
 * (what follows the header), until it returns NULL (no more, or a record
 * that does not fit); ue_ring_done() gives the space read back to the
 * kernel.
 */
struct ue_ring {
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	__u64 size, head, tail;
	struct perf_event_header hdr;
	unsigned char rec[8192];
};

static inline void ue_ring_start(struct ue_ring *r, void *ring)
{
	r->meta = ring;
	r->data = (unsigned char *)ring + r->meta->data_offset;
	r->size = r->meta->data_size;
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	r->tail = r->meta->data_tail;
}

static inline unsigned char *ue_ring_next(struct ue_ring *r)
{
	__u64 i;

	if (r->tail >= r->head)
		return NULL;
	for (i = 0; i < sizeof(r->hdr); i++)
		((unsigned char *)&r->hdr)[i] = r->data[(r->tail + i) % r->size];
	if (r->hdr.size < sizeof(r->hdr) || r->hdr.size > sizeof(r->rec))
		return NULL;
	for (i = 0; i < r->hdr.size; i++)
		r->rec[i] = r->data[(r->tail + i) % r->size];
	r->tail += r->hdr.size;
	return r->rec + sizeof(r->hdr);
}

static inline void ue_ring_done(struct ue_ring *r)
{
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

/*
 * The remote write ABI (struct user_write_reg): register desc with the
 * enable bit at (addr, size 4 or 8). Returns 0 or -errno; the write index
 * goes to *write_index when it is not NULL.
 */
static inline int ue_wreg(int fd, const char *desc, const void *addr, int size,
			  int bit, int flags, int *write_index)
{
	struct user_write_reg reg;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.enable_bit = bit;
	reg.enable_size = size;
	reg.flags = flags;
	reg.enable_addr = (__u64)(uintptr_t)addr;
	reg.name_args = (__u64)(uintptr_t)desc;
	reg.write_index = 0xdeadbeef;

	if (ioctl(fd, DIAG_IOCSREG, &reg) < 0)
		return -errno;

	if (write_index)
		*write_index = (int)reg.write_index;

	return 0;
}

/* Raw DIAG_IOCSUNREG of (addr, bit). Returns 0 or -errno. */
static inline int ue_wunreg(int fd, const void *addr, int bit)
{
	struct user_write_unreg unreg;

	memset(&unreg, 0, sizeof(unreg));
	unreg.size = sizeof(unreg);
	unreg.disable_bit = bit;
	unreg.disable_addr = (__u64)(uintptr_t)addr;

	if (ioctl(fd, DIAG_IOCSUNREG, &unreg) < 0)
		return -errno;

	return 0;
}

/*
 * Remote write registrations a test made, to be undone at its teardown
 * (an enabler belongs to the process, not to the data fd it came from)
 */
#define UE_MAX_ENABLERS 64

struct ue_enablers {
	int n;
	struct {
		const void *addr;
		int bit;
	} e[UE_MAX_ENABLERS];
};

static inline void ue_enablers_add(struct ue_enablers *l, const void *addr,
				   int bit)
{
	if (l->n < UE_MAX_ENABLERS) {
		l->e[l->n].addr = addr;
		l->e[l->n].bit = bit;
		l->n++;
	}
}

static inline void ue_enablers_forget(struct ue_enablers *l,
				      const void *addr, int bit)
{
	int i;

	for (i = 0; i < l->n; i++) {
		if (l->e[i].addr == addr && l->e[i].bit == bit) {
			l->e[i] = l->e[--l->n];
			i--;
		}
	}
}

/* Unregisters them all, on a data fd of its own */
static inline void ue_enablers_unreg_all(struct ue_enablers *l)
{
	int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	int i;

	for (i = 0; i < l->n && fd >= 0; i++)
		ue_wunreg(fd, l->e[i].addr, l->e[i].bit);
	if (fd >= 0)
		close(fd);
	l->n = 0;
}

/* An enable word of size 4 or 8, read and written atomically */
static inline uint64_t ue_word_read(const void *addr, int size)
{
	if (size == 8)
		return __atomic_load_n((const uint64_t *)addr, __ATOMIC_SEQ_CST);

	return __atomic_load_n((const uint32_t *)addr, __ATOMIC_SEQ_CST);
}

static inline void ue_word_write(void *addr, int size, uint64_t val)
{
	if (size == 8)
		__atomic_store_n((uint64_t *)addr, val, __ATOMIC_SEQ_CST);
	else
		__atomic_store_n((uint32_t *)addr, (uint32_t)val,
				 __ATOMIC_SEQ_CST);
}

/*
 * @pages private anonymous pages, every byte @fill, then protected @prot.
 * Returns NULL on failure.
 */
static inline char *ue_map_filled(size_t pages, int fill, int prot)
{
	size_t len = pages * sysconf(_SC_PAGESIZE);
	char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return NULL;
	memset(mem, fill, len);
	if (prot != (PROT_READ | PROT_WRITE) && mprotect(mem, len, prot)) {
		munmap(mem, len);
		return NULL;
	}
	return mem;
}

static inline void ue_sleep_ms(int ms)
{
	usleep(ms * 1000);
}

/* Wait up to ms for the word to read want; returns the ms waited or -1 */
static inline int ue_word_wait(const void *addr, int size, uint64_t want, int ms)
{
	int waited;

	for (waited = 0; waited <= ms; waited += 5) {
		if (ue_word_read(addr, size) == want)
			return waited;
		ue_sleep_ms(5);
	}

	return -1;
}

static inline int ue_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The calling thread may run on every CPU again (after ue_pin_cpu()) */
static inline void ue_unpin_cpu(void)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof(all), &all);
}

/* close() of an fd a fixture may not have opened (-1) */
static inline void ue_close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* close() of *fd, which is -1 afterwards (a fixture's teardown skips it) */
static inline void ue_drop_fd(int *fd)
{
	ue_close_fd(*fd);
	*fd = -1;
}

static inline bool ue_cpu_online(int cpu)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	return CPU_ISSET(cpu, &set);
}

/* An errno's name ("EBUSY"): "success" for 0, "errno N" for a nameless one */
static inline const char *ue_errno_name(int e)
{
	static __thread char b[32];
	const char *name;

	if (!e)
		return "success";
	name = strerrorname_np(e);
	if (name)
		return name;
	snprintf(b, sizeof(b), "errno %d", e);
	return b;
}

/*
 * "# op  count (N ok, N EBUSY, ...)": an operation's count, its successes
 * and its three most frequent errnos, from err[1..max-1] (counts by errno).
 */
static inline void ue_print_op_counts(const char *op, long n, long ok,
				      const atomic_long *err, int max)
{
	long top[3] = { 0 };
	int e, k, j, code[3] = { 0 };

	for (e = 1; e < max; e++) {
		long c = atomic_load(&err[e]);

		for (k = 0; k < 3 && c <= top[k]; k++)
			;
		if (k == 3)
			continue;
		for (j = 2; j > k; j--) {
			top[j] = top[j - 1];
			code[j] = code[j - 1];
		}
		top[k] = c;
		code[k] = e;
	}
	printf("# %-12s %8ld (%ld ok", op, n, ok);
	for (k = 0; k < 3 && top[k]; k++)
		printf(", %ld %s", top[k], ue_errno_name(code[k]));
	printf(")\n");
}

/* Ends the line at line (its '\n' becomes NUL): where the next one starts */
static inline char *ue_cut_line(char *line)
{
	char *next = strchr(line, '\n');

	if (!next)
		return line + strlen(line);
	*next = '\0';
	return next + 1;
}

/* 0 or -errno of one write of s to path, opened O_WRONLY | flags */
static inline int ue_write_str(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags), err;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	err = errno;
	close(fd);
	return n < 0 ? -err : 0;
}

/*
 * Reads path into buf (NUL-terminated, at most size - 1 bytes): the
 * length read, or -errno.
 */
static inline ssize_t ue_read_upto(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (!n)
			break;
		len += n;
	}
	buf[len] = 0;
	close(fd);
	return len;
}

/*
 * A thread (ue_status_reader() given to pthread_create()) that reads
 * user_events_status, which takes event_mutex, every pause_us until stop,
 * and keeps the longest read in worst_s
 */
struct ue_status_reader {
	volatile int stop;
	int pause_us;
	double worst_s;
};

static inline void *ue_status_reader(void *arg)
{
	static char buf[1 << 16];
	struct ue_status_reader *r = arg;
	struct timespec a, b;
	double dt;

	while (!r->stop) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		ue_read_upto(UE_STATUS_FILE, buf, sizeof(buf));
		clock_gettime(CLOCK_MONOTONIC, &b);
		dt = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		if (dt > r->worst_s)
			r->worst_s = dt;
		usleep(r->pause_us);
	}
	return NULL;
}

/* The random operation drivers' generator (splitmix64): a seed replays */
struct ue_rng {
	uint64_t s;
};

static inline uint64_t ue_rnext(struct ue_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline unsigned int ue_rn(struct ue_rng *r, unsigned int n)
{
	return n ? ue_rnext(r) % n : 0;
}

static inline bool ue_one_in(struct ue_rng *r, unsigned int n)
{
	return ue_rn(r, n) == 0;
}

/* Is e one of the n results in set? */
static inline bool ue_in_set(int e, const int *set, int n)
{
	for (int i = 0; i < n; i++)
		if (set[i] == e)
			return true;
	return false;
}

/*
 * TAP output of the test programs that do not use the kselftest harness:
 * one line "ok - <prefix><text>" or "not ok - ..." ("ok N - ..." when
 * numbered), counted in *t; the summary line "N passed, N failed" is the
 * last, and gives the exit status.
 */
struct ue_tally {
	int pass, fail;
};

static inline void ue_vtap(struct ue_tally *t, bool numbered,
			   const char *prefix, bool ok, const char *fmt,
			   va_list ap)
{
	if (numbered)
		printf("%s %d - %s", ok ? "ok" : "not ok",
		       t->pass + t->fail + 1, prefix);
	else
		printf("%s - %s", ok ? "ok" : "not ok", prefix);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		t->pass++;
	else
		t->fail++;
}

static inline int ue_tally_summary(const struct ue_tally *t)
{
	printf("%d passed, %d failed\n", t->pass, t->fail);
	return t->fail ? 1 : 0;
}

/*
 * ---- The robustness tools' helpers (tests/race, tests/stress, tests/fuzz,
 * tests/faultinj): kept in one block, added to, not mixed with the above.
 */

#define UE_DYN_FILE	UE_TRACEFS "/dynamic_events"

/* CLOCK_MONOTONIC in milliseconds */
static inline long ue_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/*
 * xorshift64*, the generator of ue_race and enable_churn (a per-thread
 * state, nonzero): their seeds replay the same streams as before.
 */
static inline unsigned long long ue_xs_next(unsigned long long *s)
{
	unsigned long long x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* 0 .. n - 1 (0 for n <= 0) */
static inline int ue_xs_rn(unsigned long long *s, int n)
{
	return n > 0 ? (int)(ue_xs_next(s) % (unsigned int)n) : 0;
}

#endif /* UE_HELPERS_H */
