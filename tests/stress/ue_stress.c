// SPDX-License-Identifier: GPL-2.0
/*
 * ue_stress: concurrent stress of user_events.ko (run as root in a guest
 * with the module loaded; tests/stress/guest.sh does that).
 *
 *   ue_stress [-s SEED] [-t SECONDS] [-p PROCS] [-T THREADS] [-v]
 *   ue_stress --races [dup [N]] [fork [N]]
 *
 * (--races: the two targeted races of the remote write ABI that the random
 * operations hit only now and then; see races_main() below.)
 *
 * Worker threads in the main process and in PROCS forked worker processes
 * (THREADS each) pick operations at random from a per-worker PRNG seeded
 * from SEED (printed; the same SEED replays the same operation streams,
 * the interleaving is the scheduler's):
 *   open/close user_events_data; register through the status page ABI
 *   (size 24) and the remote write ABI (size 28, 4/8-byte words, PERSIST,
 *   MULTI_FORMAT); DIAG_IOCSUNREG; DIAG_IOCSDEL; write/writev/pwrite with
 *   valid, short, oversized, bad-pointer and bad-index data and bad
 *   __data_loc/__rel_loc values; ftrace enable/disable of the event;
 *   perf_event_open/close on its id; fork (exit at once, exec /bin/true,
 *   exec ourselves with --exec-child, a few operations, or stay until the
 *   final checks); munmap/mprotect of pages holding enable words;
 *   dynamic_events "u:" create and "!u:" delete and O_TRUNC (skipped, and
 *   said so, when the kernel refuses u: commands); user_events_status
 *   reads; delete_module (must fail while in use); two threads racing to
 *   register the same (address, bit).
 * Every result is checked against the errnos that operation may give.
 *
 * Then everything stops and the invariants are checked:
 *   1. every live enabler whose page was left alone has its bit equal to
 *      "event enabled" (any probe attached);
 *   2. after a full enable/disable cycle of every event (pages restored),
 *      every live enabler's bit equals the final state;
 *   3. status page bytes equal the probes attached (ftrace 1, perf 2);
 *   4. writes succeed exactly when the event is enabled (EBADF otherwise);
 *   5. no (address, bit) got two enablers;
 *   6. after deleting everything, user_events_status shows "Active: 0".
 * Output: TAP-ish "ok - ..." / "not ok - ..." lines, ops per second, and a
 * last line "N passed, N failed". Exit status 0 iff nothing failed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
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
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "../selftests/ue_helpers.h"

#define TRACEFS UE_TRACEFS
#define MODNAME "user_events"

#define PAGE 4096
#define MAX_PAYLOAD 3968
#define DIAG_IOCSREG_STATUS _IOWR(DIAG_IOC_MAGIC, 0, struct user_status_reg *)
#define DIAG_IOCSREG_WRITE _IOWR(DIAG_IOC_MAGIC, 0, struct user_write_reg *)
#define DIAG_IOCSUNREG_W _IOW(DIAG_IOC_MAGIC, 2, struct user_write_unreg *)

/* ---------------------------------------------------------------- events */

enum dyn_kind { DYN_NONE, DYN_DATA_CHAR, DYN_REL_U8 };

struct variant {
	const char *flags;	/* ":BPF_ITER" or "" */
	const char *args;	/* normalized, as the module prints them */
	unsigned int min;	/* payload bytes the fields need */
	enum dyn_kind dyn;
};

struct ename {
	const char *name;
	bool multi;		/* registered with USER_EVENT_REG_MULTI_FORMAT */
	int nv;
	struct variant v[2];	/* v[1]: conflicting descriptor (or 2nd multi format) */
};

static const struct ename names[] = {
	{ "ues_a", false, 2, { { "", "u32 a", 4, DYN_NONE }, { "", "u64 a", 8, DYN_NONE } } },
	{ "ues_b", false, 1, { { "", "u64 x; char[8] s", 16, DYN_NONE } } },
	{ "ues_c", false, 1, { { "", "__data_loc char[] msg", 4, DYN_DATA_CHAR } } },
	{ "ues_d", false, 1, { { "", "", 0, DYN_NONE } } },
	{ "ues_e", false, 2, { { "", "u8 a; u16 b; s32 c", 7, DYN_NONE }, { "", "u8 a; u16 b; s64 c", 11, DYN_NONE } } },
	{ "ues_f", false, 2, { { ":BPF_ITER", "u32 a", 4, DYN_NONE }, { "", "u32 a", 4, DYN_NONE } } },
	{ "ues_g", false, 1, { { "", "struct foo s 16", 16, DYN_NONE } } },
	{ "ues_h", false, 1, { { "", "__rel_loc u8[] blob", 4, DYN_REL_U8 } } },
	{ "uesm_a", true, 2, { { "", "u32 a", 4, DYN_NONE }, { "", "u64 a", 8, DYN_NONE } } },
};
#define NNAMES ((int)(sizeof(names) / sizeof(names[0])))
#define SLOT_NAME 1	/* ues_b: one descriptor only (EADDRINUSE means the bit) */

/* ---------------------------------------------------------------- shared */

enum op {
	OP_OPEN, OP_CLOSE, OP_REG_STATUS, OP_REG_WRITE, OP_UNREG, OP_DEL,
	OP_WRITE, OP_FTRACE, OP_PERF_OPEN, OP_PERF_CLOSE, OP_FORK, OP_MUNMAP,
	OP_MPROTECT, OP_DYN, OP_DYN_TRUNC, OP_RMMOD, OP_STATUS, OP_RACE, NOPS
};
static const char *op_names[NOPS] = {
	"open", "close", "reg_status", "reg_write", "unreg", "delete",
	"write", "ftrace", "perf_open", "perf_close", "fork", "munmap",
	"mprotect", "dyn", "dyn_trunc", "rmmod", "status_read", "race_reg",
};
static const int op_weight[NOPS] = {
	[OP_OPEN] = 4, [OP_CLOSE] = 2, [OP_REG_STATUS] = 10, [OP_REG_WRITE] = 12,
	[OP_UNREG] = 5, [OP_DEL] = 4, [OP_WRITE] = 30, [OP_FTRACE] = 8,
	[OP_PERF_OPEN] = 3, [OP_PERF_CLOSE] = 3, [OP_FORK] = 2, [OP_MUNMAP] = 2,
	[OP_MPROTECT] = 2, [OP_DYN] = 3, [OP_DYN_TRUNC] = 1, [OP_RMMOD] = 1,
	[OP_STATUS] = 2, [OP_RACE] = 6,
};

enum phase { PH_RUN, PH_STOP, PH_PRE, PH_POST, PH_CLEANUP };

#define MAXEV 64
struct evstate {
	char call[96];		/* name in tracefs (name.id for multi) */
	char args[128];		/* from dynamic_events, "" if unknown */
	int status;		/* EVENT_STATUS_* bits from the status text */
	int sidx;		/* status index, 0 if none */
};

struct shared {
	volatile int phase;
	int dyn_ok;
	long ops[NOPS];
	long op_ns[NOPS];
	long fails;
	long printed;
	/* phase bookkeeping: processes (worker processes + keepers) */
	int nprocs;		/* worker processes + keepers to wait for */
	int keepers;
	int stop_done, pre_done, post_done;
	long pre_checked, pre_skipped, post_checked, post_skipped;
	long bit_mismatch, dup_enablers, slots_checked;
	long rmmod_refused;
	long forks, execs;
	int nev;
	struct evstate ev[MAXEV];
};
static struct shared *sh;

static bool verbose;
static unsigned long long g_seed;
static const char *self_exe = "/proc/self/exe";

static void addl(long *p, long v) { __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST); }
static void addi(int *p, int v) { __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST); }
static int phase(void) { return __atomic_load_n(&sh->phase, __ATOMIC_SEQ_CST); }

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Output with one write() per line, usable after fork in any thread */
static void out(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (buf[n - 1] != '\n')
		buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		return;
}

static void failf(const char *fmt, ...)
{
	char buf[900];
	va_list ap;

	addl(&sh->fails, 1);
	if (__atomic_add_fetch(&sh->printed, 1, __ATOMIC_SEQ_CST) > 60)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out("# FAIL [pid %d] %s", getpid(), buf);
}

/* ------------------------------------------------------------------ prng */

/* The generator: struct ue_rng, ue_rn() (tests/selftests/ue_helpers.h) */

/* ------------------------------------------------------------- helpers */

#define EXPECT(e, what, ...)						\
	do {								\
		static const int _ok[] = { __VA_ARGS__ };		\
		if (!ue_in_set((e), _ok, sizeof(_ok) / sizeof(_ok[0])))	\
			failf("%s: unexpected %s", (what), ue_errno_name(e)); \
	} while (0)

static void desc_of(char *buf, size_t size, int n, int v)
{
	const struct ename *e = &names[n];

	snprintf(buf, size, "%s%s%s%s", e->name, e->v[v].flags,
		 e->v[v].args[0] ? " " : "", e->v[v].args);
}

/* Payload for variant v of name n: kind 0 valid, 1 bad dyn location */
static size_t build_payload(char *buf, int n, int v, int kind, struct ue_rng *r)
{
	const struct variant *var = &names[n].v[v];
	size_t len = var->min + ue_rn(r, 4);
	uint32_t loc;

	memset(buf, 'x', len + 32);
	if (var->dyn == DYN_DATA_CHAR) {
		/* record offset: 8 (header) + 4 (the loc word) */
		unsigned int slen = 1 + ue_rn(r, 12);

		memset(buf + 4, 'm', slen - 1);
		buf[4 + slen - 1] = 0;
		loc = (slen << 16) | 12;
		if (kind == 1) {
			switch (ue_rn(r, 3)) {
			case 0: loc = (slen << 16) | 2; break;		/* inside header */
			case 1: loc = ((slen + 40) << 16) | 12; break;	/* too long */
			default: buf[4 + slen - 1] = 'z'; break;	/* no NUL */
			}
		}
		memcpy(buf, &loc, 4);
		len = 4 + slen;
	} else if (var->dyn == DYN_REL_U8) {
		unsigned int blen = ue_rn(r, 9);

		loc = blen << 16;		/* right after the loc word */
		if (kind == 1)
			loc = (blen + 50) << 16 | ue_rn(r, 3);
		memcpy(buf, &loc, 4);
		len = 4 + blen;
	}
	return len;
}

/* ---------------------------------------------------------- worker state */

#define NPAGES 4
#define MAXFD 6
#define MAXREG 64
#define MAXEN 96
#define MAXPERF 4
#define MAXKIDS 4
#define NSLOTS 8

enum pstate { P_RW, P_RO, P_UNMAPPED };

struct reg {
	int fd;			/* index into w->fds, -1: the process's shared fd */
	int n, v;
	bool multi;
	uint32_t widx, sidx;	/* sidx 0 for the remote write ABI */
};

struct enabler {
	uint64_t addr;
	uint8_t bit, size;
	int n, v;
	bool live, stale;
	int pbit;		/* bit number from the start of the pages */
};

struct worker {
	int id;
	struct ue_rng r;
	char *pages;
	int pst[NPAGES];
	unsigned char used[NPAGES * PAGE];	/* bitmap: physical bits in use */
	int fds[MAXFD];
	struct reg regs[MAXREG];
	int nregs;
	struct enabler en[MAXEN];
	int nen;
	int perf[MAXPERF];
	pid_t kids[MAXKIDS];
	long ops;
};

/* Per process */
static int proc_fd = -1;		/* a data fd all threads share */
static const volatile uint8_t *status_map;
struct slot { uint64_t addr; uint8_t bit; int count; };
static struct slot *slots;
static char *slot_page;

static bool bit_used(struct worker *w, int pbit)
{
	return w->used[pbit / 8] & (1 << (pbit % 8));
}
static void bit_set_used(struct worker *w, int pbit, bool on)
{
	if (on)
		w->used[pbit / 8] |= 1 << (pbit % 8);
	else
		w->used[pbit / 8] &= ~(1 << (pbit % 8));
}

static int data_fd(struct worker *w, int slot)
{
	return slot < 0 ? proc_fd : w->fds[slot];
}

/* Does this worker hold a reference on the single-format event n? */
static bool holds(struct worker *w, int n)
{
	for (int i = 0; i < w->nregs; i++)
		if (w->regs[i].n == n && !w->regs[i].multi)
			return true;
	for (int i = 0; i < w->nen; i++)
		if (w->en[i].live && w->en[i].n == n && !names[n].multi)
			return true;
	return false;
}

static bool holds_any(struct worker *w)
{
	for (int i = 0; i < w->nen; i++)
		if (w->en[i].live)
			return true;
	return w->nregs > 0;
}

static struct reg *find_reg(struct worker *w, int fd, int n, int v, bool multi)
{
	for (int i = 0; i < w->nregs; i++) {
		struct reg *g = &w->regs[i];

		if (g->fd == fd && g->n == n && g->multi == multi &&
		    (!multi || g->v == v))
			return g;
	}
	return NULL;
}

static void add_reg(struct worker *w, int fd, int n, int v, bool multi,
		    uint32_t widx, uint32_t sidx, const char *what)
{
	struct reg *g = find_reg(w, fd, n, v, multi);

	if (g) {
		/* The same event on the same file: the same index */
		if (g->widx != widx)
			failf("%s: write_index %u, was %u for the same event on this fd",
			      what, widx, g->widx);
		if (sidx && g->sidx && g->sidx != sidx)
			failf("%s: status_index %u, was %u for the same live event",
			      what, sidx, g->sidx);
		if (sidx)
			g->sidx = sidx;
		return;
	}
	if (w->nregs == MAXREG)
		return;
	w->regs[w->nregs++] = (struct reg){ fd, n, v, multi, widx, sidx };
}

static void drop_regs_of_fd(struct worker *w, int fd)
{
	int j = 0;

	for (int i = 0; i < w->nregs; i++)
		if (w->regs[i].fd != fd)
			w->regs[j++] = w->regs[i];
	w->nregs = j;
}

/* --------------------------------------------------------------- ops */

/* Registration in both ABIs (tests/selftests/ue_helpers.h); 0 or a positive errno */
static int reg_status(int fd, int n, int v, uint32_t *widx, uint32_t *sidx)
{
	char desc[256];
	int w = 0, st = 0, ret;

	desc_of(desc, sizeof(desc), n, v);
	ret = ue_reg(fd, desc, &st, &w);
	if (ret)
		return -ret;
	*widx = w;
	*sidx = st;
	return 0;
}

static int reg_write(int fd, int n, int v, uint64_t addr, int bit, int size,
		     uint16_t flags, uint32_t *widx)
{
	char desc[256];
	int w = 0, ret;

	desc_of(desc, sizeof(desc), n, v);
	ret = ue_wreg(fd, desc, (void *)(uintptr_t)addr, size, bit, flags, &w);
	if (ret)
		return -ret;
	*widx = w;
	return 0;
}

static int unreg(int fd, uint64_t addr, int bit)
{
	return -ue_wunreg(fd, (void *)(uintptr_t)addr, bit);
}

static int any_fd(struct worker *w)
{
	int c[MAXFD], k = 0;

	for (int i = 0; i < MAXFD; i++)
		if (w->fds[i] >= 0)
			c[k++] = i;
	if (!k || ue_one_in(&w->r, 3))
		return -1;
	return c[ue_rn(&w->r, k)];
}

static void op_open(struct worker *w)
{
	for (int i = 0; i < MAXFD; i++) {
		if (w->fds[i] >= 0)
			continue;
		w->fds[i] = open(UE_DATA_FILE, O_RDWR | (ue_one_in(&w->r, 2) ? O_CLOEXEC : 0));
		if (w->fds[i] < 0) {
			failf("open %s: %s", UE_DATA_FILE, ue_errno_name(errno));
			w->fds[i] = -1;
		}
		return;
	}
}

static void op_close(struct worker *w)
{
	int i = ue_rn(&w->r, MAXFD);

	if (w->fds[i] < 0)
		return;
	close(w->fds[i]);
	w->fds[i] = -1;
	drop_regs_of_fd(w, i);
}

static int pick_name(struct worker *w, bool multi_ok)
{
	for (;;) {
		int n = ue_rn(&w->r, NNAMES);

		if (multi_ok || !names[n].multi)
			return n;
	}
}

static int pick_variant(struct worker *w, int n)
{
	if (names[n].nv > 1 && (names[n].multi ? ue_one_in(&w->r, 2) : ue_one_in(&w->r, 10)))
		return 1;
	return 0;
}

static void op_reg_status(struct worker *w)
{
	int n = pick_name(w, true), v = pick_variant(w, n), slot = any_fd(w);
	uint32_t widx, sidx;
	char what[64];
	int e;

	if (names[n].multi)
		v = 0;	/* the status ABI has no flags: a single-format event */
	e = reg_status(data_fd(w, slot), n, v, &widx, &sidx);
	snprintf(what, sizeof(what), "status reg %s/%d", names[n].name, v);
	EXPECT(e, what, 0, EADDRINUSE, ENOSPC, EMFILE, ENOMEM);
	if (e)
		return;
	if (!sidx || sidx >= PAGE)
		failf("%s: status_index %u out of range", what, sidx);
	add_reg(w, slot, n, v, false, widx, sidx, what);
}

static void op_reg_write(struct worker *w)
{
	int n = pick_name(w, true), v = pick_variant(w, n), slot = any_fd(w);
	uint16_t flags = 0;
	uint32_t widx;
	int size, bit, pbit, page, e, dup = -1;
	uint64_t addr;
	char what[96];

	if (names[n].multi)
		flags |= USER_EVENT_REG_MULTI_FORMAT;
	/* Persistent multi-format events can only go through dynamic_events */
	if (ue_one_in(&w->r, 12) && (!names[n].multi || sh->dyn_ok))
		flags |= USER_EVENT_REG_PERSIST;

	if (w->nen && ue_one_in(&w->r, 12)) {
		/* The exact (address, bit) of a live enabler: EADDRINUSE */
		dup = ue_rn(&w->r, w->nen);
		if (!w->en[dup].live)
			return;
		addr = w->en[dup].addr;
		bit = w->en[dup].bit;
		size = w->en[dup].size;
		page = (addr - (uintptr_t)w->pages) / PAGE;
		pbit = w->en[dup].pbit;
	} else {
		int tries = 0;

		do {
			pbit = ue_rn(&w->r, NPAGES * PAGE * 8);
		} while (bit_used(w, pbit) && ++tries < 8);
		if (bit_used(w, pbit) || w->nen == MAXEN)
			return;
		page = pbit / (PAGE * 8);
		size = ue_one_in(&w->r, 2) ? 4 : 8;
		addr = (uintptr_t)w->pages + (pbit / 8) / size * size;
		bit = pbit - ((addr - (uintptr_t)w->pages) * 8);
	}
	e = reg_write(data_fd(w, slot), n, v, addr, bit, size, flags, &widx);
	snprintf(what, sizeof(what), "write reg %s/%d flags %u size %d bit %d page %s%s",
		 names[n].name, v, flags, size, bit,
		 w->pst[page] == P_RW ? "rw" : w->pst[page] == P_RO ? "ro" : "unmapped",
		 dup >= 0 ? " (address and bit in use)" : "");
	if (dup >= 0) {
		EXPECT(e, what, EADDRINUSE);
		return;
	}
	if (w->pst[page] == P_RW)
		EXPECT(e, what, 0, EADDRINUSE, EMFILE, ENOMEM);
	else
		EXPECT(e, what, EFAULT, EADDRINUSE, EMFILE, ENOMEM);
	if (e)
		return;
	add_reg(w, slot, n, v, names[n].multi, widx, 0, what);
	w->en[w->nen++] = (struct enabler){ addr, bit, size, n, v, true, false, pbit };
	bit_set_used(w, pbit, true);
}

static void op_unreg(struct worker *w)
{
	int slot = any_fd(w), i, e, page;
	char what[96];

	if (!w->nen || ue_one_in(&w->r, 10)) {
		/* Nothing there */
		uint64_t addr = (uintptr_t)w->pages + ue_rn(&w->r, NPAGES * PAGE / 8) * 8;
		int bit = ue_rn(&w->r, 64);

		for (i = 0; i < w->nen; i++)
			if (w->en[i].live && w->en[i].addr == addr && w->en[i].bit == bit)
				return;
		e = unreg(data_fd(w, slot), addr, bit);
		EXPECT(e, "unreg of an unknown address/bit", ENOENT);
		return;
	}
	if (ue_one_in(&w->r, 20)) {
		struct user_write_unreg u = { .size = sizeof(u), .__reserved = 1 };

		e = ioctl(data_fd(w, slot), DIAG_IOCSUNREG_W, &u) < 0 ? errno : 0;
		EXPECT(e, "unreg with reserved set", EINVAL);
		return;
	}
	i = ue_rn(&w->r, w->nen);
	if (!w->en[i].live)
		return;
	page = (w->en[i].addr - (uintptr_t)w->pages) / PAGE;
	e = unreg(data_fd(w, slot), w->en[i].addr, w->en[i].bit);
	snprintf(what, sizeof(what), "unreg of a live enabler (%s size %d bit %d page %s)",
		 names[w->en[i].n].name, w->en[i].size, w->en[i].bit,
		 w->pst[page] == P_RW ? "rw" : w->pst[page] == P_RO ? "ro" : "unmapped");
	/* As upstream: a word that cannot be cleared gives EFAULT, and goes */
	if (w->pst[page] == P_RW)
		EXPECT(e, what, 0);
	else
		EXPECT(e, what, EFAULT);
	if (e && e != EFAULT)
		return;
	w->en[i].live = false;
	bit_set_used(w, w->en[i].pbit, false);
	w->en[i] = w->en[--w->nen];
}

static void op_del(struct worker *w)
{
	int n = pick_name(w, true), e, fd = data_fd(w, any_fd(w));
	bool held = holds(w, n);
	char what[96];

	e = ioctl(fd, DIAG_IOCSDEL, names[n].name) < 0 ? errno : 0;
	snprintf(what, sizeof(what), "delete %s%s", names[n].name,
		 held ? " (held by this worker)" : "");
	if (held)
		EXPECT(e, what, EBUSY);
	else
		EXPECT(e, what, 0, EBUSY, ENOENT);
	if (ue_one_in(&w->r, 30)) {
		e = ioctl(fd, DIAG_IOCSDEL, (void *)8) < 0 ? errno : 0;
		EXPECT(e, "delete with a bad pointer", EFAULT);
	}
}

static void op_write(struct worker *w)
{
	char buf[MAX_PAYLOAD + 128];
	int k = ue_rn(&w->r, 12), e, fd;
	struct reg *g;
	size_t len;
	ssize_t ret;
	char what[128];

	if (!w->nregs) {
		/* No index handed out on this fd: ENOENT */
		int idx = ue_rn(&w->r, 4) + 1000;

		ret = write(proc_fd, &idx, sizeof(idx));
		EXPECT(ret < 0 ? errno : 0, "write with an index never handed out", ENOENT);
		return;
	}
	g = &w->regs[ue_rn(&w->r, w->nregs)];
	fd = data_fd(w, g->fd);
	memcpy(buf, &g->widx, 4);
	len = build_payload(buf + 4, g->n, g->v, k == 5, &w->r);
	snprintf(what, sizeof(what), "write kind %d to %s/%d%s (index %u, %zu bytes)",
		 k, names[g->n].name, g->v, g->multi ? " multi" : "", g->widx, len);
	switch (k) {
	case 0: case 1: case 2: case 3: case 4: /* valid */
		ret = write(fd, buf, 4 + len);
		e = ret < 0 ? errno : 0;
		EXPECT(e, what, 0, EBADF);
		if (!e && ret != (ssize_t)(4 + len))
			failf("%s: returned %zd", what, ret);
		break;
	case 5: /* bad dynamic location (valid for events without one) */
		ret = write(fd, buf, 4 + len);
		e = ret < 0 ? errno : 0;
		if (names[g->n].v[g->v].dyn != DYN_NONE)
			EXPECT(e, what, EFAULT, EBADF);
		else
			EXPECT(e, what, 0, EBADF);
		break;
	case 6: { /* writev, split at random points */
		struct iovec iov[3];
		size_t a = ue_rn(&w->r, 5 + len), b;

		b = a + ue_rn(&w->r, 4 + len - a + 1);
		iov[0] = (struct iovec){ buf, a };
		iov[1] = (struct iovec){ buf + a, b - a };
		iov[2] = (struct iovec){ buf + b, 4 + len - b };
		ret = writev(fd, iov, 3);
		e = ret < 0 ? errno : 0;
		EXPECT(e, what, 0, EBADF);
		break;
	}
	case 7: /* short payload */
		if (!names[g->n].v[g->v].min)
			return;
		ret = write(fd, buf, 4 + names[g->n].v[g->v].min - 1);
		EXPECT(ret < 0 ? errno : 0, what, EINVAL);
		break;
	case 8: /* too long */
		memset(buf + 4, 0, MAX_PAYLOAD + 1);
		ret = write(fd, buf, 4 + MAX_PAYLOAD + 1);
		EXPECT(ret < 0 ? errno : 0, what, E2BIG);
		break;
	case 9: { /* bad index */
		int idx = ue_one_in(&w->r, 2) ? -1 - (int)ue_rn(&w->r, 100) : 100000 + (int)ue_rn(&w->r, 100);

		memcpy(buf, &idx, 4);
		ret = write(fd, buf, 4 + len);
		if (idx < 0)
			EXPECT(ret < 0 ? errno : 0, "write with a negative index", EINVAL);
		else
			EXPECT(ret < 0 ? errno : 0, "write with an unknown index", ENOENT);
		break;
	}
	case 10: /* fewer than 4 bytes, or pwrite */
		if (ue_one_in(&w->r, 2)) {
			ret = write(fd, buf, ue_rn(&w->r, 4));
			EXPECT(ret < 0 ? errno : 0, "write of fewer than 4 bytes", EINVAL);
		} else {
			ret = pwrite(fd, buf, 4 + len, 1 + ue_rn(&w->r, 100));
			EXPECT(ret < 0 ? errno : 0, "pwrite", ESPIPE);
		}
		break;
	case 11: { /* payload from an unmapped page: EFAULT unless not enabled */
		struct iovec iov[2] = { { buf, 4 }, { (void *)8, len ? len : 1 } };

		ret = writev(fd, iov, 2);
		e = ret < 0 ? errno : 0;
		if (names[g->n].v[g->v].min)
			EXPECT(e, "write with a bad payload pointer", EFAULT, EBADF);
		else
			EXPECT(e, "write with a bad payload pointer", EFAULT, EBADF, 0);
		break;
	}
	}
}

/* An event's tracefs directory (system/name), chosen among live ones */
static bool pick_event_dir(struct worker *w, char *dir, size_t size)
{
	int n = pick_name(w, true);

	if (!names[n].multi) {
		snprintf(dir, size, TRACEFS "/events/" USER_EVENTS_SYSTEM "/%s", names[n].name);
		return true;
	}
	DIR *d = opendir(TRACEFS "/events/" USER_EVENTS_MULTI_SYSTEM);
	struct dirent *de;
	char cand[8][64];
	int k = 0;

	if (!d)
		return false;
	while ((de = readdir(d)) && k < 8)
		if (!strncmp(de->d_name, names[n].name, strlen(names[n].name)) &&
		    de->d_name[strlen(names[n].name)] == '.')
			snprintf(cand[k++], sizeof(cand[0]), "%.63s", de->d_name);
	closedir(d);
	if (!k)
		return false;
	snprintf(dir, size, TRACEFS "/events/" USER_EVENTS_MULTI_SYSTEM "/%s", cand[ue_rn(&w->r, k)]);
	return true;
}

static void op_ftrace(struct worker *w)
{
	char dir[256], path[300];
	int e;

	if (!pick_event_dir(w, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/enable", dir);
	e = -ue_write_str(path, ue_one_in(&w->r, 2) ? "1" : "0", 0);
	EXPECT(e, "ftrace enable/disable", 0, ENOENT, ENODEV);
}

static void op_perf_open(struct worker *w)
{
	char dir[256], path[300], buf[32];
	int i, fd, e;
	long id;

	for (i = 0; i < MAXPERF && w->perf[i] >= 0; i++)
		;
	if (i == MAXPERF || !pick_event_dir(w, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/id", dir);
	if (ue_read_upto(path, buf, sizeof(buf)) <= 0)
		return;
	id = strtol(buf, NULL, 10);
	fd = ue_perf_open_id(id, PERF_SAMPLE_RAW, 0, -1);
	e = fd < 0 ? errno : 0;
	EXPECT(e, "perf_event_open on a user event", 0, ENOENT, ENODEV);
	if (fd >= 0)
		w->perf[i] = fd;
}

static void op_perf_close(struct worker *w)
{
	int i = ue_rn(&w->r, MAXPERF);

	if (w->perf[i] >= 0) {
		close(w->perf[i]);
		w->perf[i] = -1;
	}
}

static void set_stale(struct worker *w, int page)
{
	for (int i = 0; i < w->nen; i++)
		if ((w->en[i].addr - (uintptr_t)w->pages) / PAGE == (uint64_t)page)
			w->en[i].stale = true;
}

static void op_munmap(struct worker *w)
{
	int p = ue_rn(&w->r, NPAGES);
	char *a = w->pages + p * PAGE;

	if (w->pst[p] != P_UNMAPPED) {
		if (munmap(a, PAGE))
			failf("munmap: %s", ue_errno_name(errno));
		w->pst[p] = P_UNMAPPED;
		set_stale(w, p);
	} else {
		if (mmap(a, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0) == MAP_FAILED)
			failf("mmap: %s", ue_errno_name(errno));
		w->pst[p] = P_RW;
	}
}

static void op_mprotect(struct worker *w)
{
	int p = ue_rn(&w->r, NPAGES);
	char *a = w->pages + p * PAGE;

	if (w->pst[p] == P_RW) {
		mprotect(a, PAGE, PROT_READ);
		w->pst[p] = P_RO;
		set_stale(w, p);
	} else if (w->pst[p] == P_RO) {
		mprotect(a, PAGE, PROT_READ | PROT_WRITE);
		w->pst[p] = P_RW;
	}
}

static void op_dyn(struct worker *w)
{
	int n = pick_name(w, false), v = pick_variant(w, n), e;
	char cmd[300], desc[256];
	bool held = holds(w, n);

	if (!sh->dyn_ok)
		return;
	if (ue_one_in(&w->r, 2)) {
		desc_of(desc, sizeof(desc), n, v);
		snprintf(cmd, sizeof(cmd), "u:%s", desc);
		e = -ue_write_str(UE_DYN_FILE, cmd, O_APPEND);
		EXPECT(e, "dynamic_events u: create", 0, EADDRINUSE, EMFILE, ENOMEM);
	} else {
		snprintf(cmd, sizeof(cmd), "!u:%s", names[n].name);
		e = -ue_write_str(UE_DYN_FILE, cmd, O_APPEND);
		if (held)
			EXPECT(e, "dynamic_events !u: delete of a held event", EBUSY);
		else
			EXPECT(e, "dynamic_events !u: delete", 0, EBUSY, ENOENT);
	}
}

static void op_dyn_trunc(struct worker *w)
{
	int fd, e;

	if (!sh->dyn_ok)
		return;
	fd = open(UE_DYN_FILE, O_WRONLY | O_TRUNC | O_CLOEXEC);
	e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (holds_any(w) && proc_fd >= 0)
		EXPECT(e, "O_TRUNC of dynamic_events with events in use", EBUSY);
	else
		EXPECT(e, "O_TRUNC of dynamic_events", 0, EBUSY);
}

static void op_rmmod(struct worker *w __attribute__((unused)))
{
	int e = syscall(__NR_delete_module, MODNAME, O_NONBLOCK) < 0 ? errno : 0;

	EXPECT(e, "delete_module while in use", EAGAIN, EBUSY);
	if (e)
		addl(&sh->rmmod_refused, 1);
}

static void op_status(struct worker *w)
{
	static __thread char buf[65536];
	ssize_t n = ue_read_upto(UE_STATUS_FILE, buf, sizeof(buf));

	if (n < 0) {
		failf("read %s: %s", UE_STATUS_FILE, ue_errno_name(-n));
		return;
	}
	if (!strstr(buf, "\nActive: ") || !strstr(buf, "\nMax: "))
		failf("status text lacks Active:/Max: lines");
	/* Status bytes only ever hold the known bits */
	for (int i = 0; i < w->nregs; i++) {
		uint32_t s = w->regs[i].sidx;

		if (s && s < PAGE && (status_map[s] & ~(EVENT_STATUS_FTRACE | EVENT_STATUS_PERF |
							 EVENT_STATUS_OTHER)))
			failf("status byte %u = %#x", s, status_map[s]);
	}
}

static void op_race(struct worker *w)
{
	struct slot *s = &slots[ue_rn(&w->r, NSLOTS)];
	uint32_t widx;
	int e;

	if (ue_one_in(&w->r, 2)) {
		e = reg_write(proc_fd, SLOT_NAME, 0, s->addr, s->bit, 4, 0, &widx);
		EXPECT(e, "racing registration of one (address, bit)", 0, EADDRINUSE, EMFILE, ENOMEM);
		if (!e)
			addi(&s->count, 1);
	} else {
		e = unreg(proc_fd, s->addr, s->bit);
		EXPECT(e, "racing unregistration of one (address, bit)", 0, ENOENT);
		if (!e)
			addi(&s->count, -1);
	}
}

/* ------------------------------------------------------------- children */

static void reap_kids(struct worker *w, bool block)
{
	for (int i = 0; i < MAXKIDS; i++) {
		int st;
		pid_t p;

		if (!w->kids[i])
			continue;
		p = waitpid(w->kids[i], &st, block ? 0 : WNOHANG);
		if (p == 0)
			continue;
		if (p < 0) {
			w->kids[i] = 0;
			continue;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failf("child %d: %s %d", p, WIFEXITED(st) ? "exit status" : "signal",
			      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		w->kids[i] = 0;
	}
}

static void keeper_main(struct worker *w);
static void worker_restore(struct worker *w);

/* In a forked child: a few operations on what it inherited, then leave */
static void child_main(struct worker *w)
{
	char fdbuf[16], seedbuf[32];
	int what = ue_rn(&w->r, 4), fd = -1;

	for (int i = 0; i < MAXFD; i++)
		if (w->fds[i] >= 0 && fcntl(w->fds[i], F_GETFD) == 0)
			fd = w->fds[i];
	switch (what) {
	case 0:
		_exit(0);
	case 1:
		addl(&sh->execs, 1);
		execl("/bin/true", "true", (char *)NULL);
		_exit(91);
	case 2:
		if (fd < 0)
			fd = proc_fd;
		snprintf(fdbuf, sizeof(fdbuf), "%d", fd);
		snprintf(seedbuf, sizeof(seedbuf), "%llu", (unsigned long long)ue_rnext(&w->r));
		addl(&sh->execs, 1);
		/* proc_fd is O_CLOEXEC: give the child one that survives */
		if (fd == proc_fd)
			fd = dup(proc_fd), snprintf(fdbuf, sizeof(fdbuf), "%d", fd);
		execl(self_exe, "ue_stress", "--exec-child", fdbuf, seedbuf, (char *)NULL);
		_exit(92);
	default: {
		int k = 1 + ue_rn(&w->r, 5);

		for (int i = 0; i < k; i++) {
			switch (ue_rn(&w->r, 4)) {
			case 0: op_write(w); break;
			case 1: op_reg_write(w); break;
			case 2:
				/* Inherited enablers were copied for this address space */
				if (w->nen) {
					struct enabler *en = &w->en[ue_rn(&w->r, w->nen)];
					int e = unreg(proc_fd, en->addr, en->bit);

					/*
					 * ENOENT only if the copy failed for lack of
					 * memory; EFAULT if its page is gone or read-only
					 */
					EXPECT(e, "child: unreg of an inherited enabler", 0, ENOENT,
					       EFAULT);
					if (!e || e == EFAULT)
						en->live = false;
				}
				break;
			default: op_munmap(w); break;
			}
		}
		_exit(0);
	}
	}
}

static void op_fork(struct worker *w)
{
	int i;
	pid_t p;
	bool keep;

	reap_kids(w, false);
	for (i = 0; i < MAXKIDS && w->kids[i]; i++)
		;
	if (i == MAXKIDS)
		return;
	keep = ue_one_in(&w->r, 8) && __atomic_load_n(&sh->keepers, __ATOMIC_SEQ_CST) < 6;
	if (keep) {
		addi(&sh->keepers, 1);
		addi(&sh->nprocs, 1);
	}
	p = fork();
	if (p < 0) {
		failf("fork: %s", ue_errno_name(errno));
		if (keep) {
			addi(&sh->keepers, -1);
			addi(&sh->nprocs, -1);
		}
		return;
	}
	if (p == 0) {
		w->r.s ^= 0x5bd1e995;
		if (keep)
			keeper_main(w);
		child_main(w);
	}
	addl(&sh->forks, 1);
	if (!keep)
		w->kids[i] = p;
	/* keepers are waited for by the process controller at the end */
}

/* What each operation runs, in the order of enum op */
static void (*const op_fn[NOPS])(struct worker *w) = {
	op_open, op_close, op_reg_status, op_reg_write, op_unreg, op_del,
	op_write, op_ftrace, op_perf_open, op_perf_close, op_fork, op_munmap,
	op_mprotect, op_dyn, op_dyn_trunc, op_rmmod, op_status, op_race,
};

static int run_op(struct worker *w, enum op op)
{
	if (op < NOPS)
		op_fn[op](w);
	return 0;
}

static enum op pick_op(struct worker *w)
{
	static int total;
	int x;

	if (!total)
		for (int i = 0; i < NOPS; i++)
			total += op_weight[i];
	x = ue_rn(&w->r, total);
	for (int i = 0; i < NOPS; i++) {
		if (x < op_weight[i])
			return i;
		x -= op_weight[i];
	}
	return OP_WRITE;
}

static void worker_init(struct worker *w, int id)
{
	memset(w, 0, sizeof(*w));
	w->id = id;
	w->r.s = g_seed * 1000003ULL + id * 7919ULL + 1;
	ue_rnext(&w->r);
	for (int i = 0; i < MAXFD; i++)
		w->fds[i] = -1;
	for (int i = 0; i < MAXPERF; i++)
		w->perf[i] = -1;
	w->pages = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->pages == MAP_FAILED) {
		out("mmap failed");
		exit(2);
	}
	/* Leave some pages unfaulted so that the fault path gets used */
	for (int p = 0; p < NPAGES; p += 2)
		w->pages[p * PAGE] = 0;
}

/* Pages back to read-write (fresh zero pages where unmapped), perf closed */
static void worker_restore(struct worker *w)
{
	for (int p = 0; p < NPAGES; p++) {
		char *a = w->pages + p * PAGE;

		if (w->pst[p] == P_RO)
			mprotect(a, PAGE, PROT_READ | PROT_WRITE);
		else if (w->pst[p] == P_UNMAPPED)
			mmap(a, PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		w->pst[p] = P_RW;
	}
	for (int i = 0; i < MAXPERF; i++)
		if (w->perf[i] >= 0) {
			close(w->perf[i]);
			w->perf[i] = -1;
		}
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;

	while (phase() == PH_RUN) {
		enum op op = pick_op(w);
		double t = now();

		run_op(w, op);
		addl(&sh->op_ns[op], (long)((now() - t) * 1e9));
		addl(&sh->ops[op], 1);
		w->ops++;
	}
	worker_restore(w);
	reap_kids(w, true);
	return NULL;
}

/* -------------------------------------------------------------- checks */

static struct evstate *ev_for(int n, int v)
{
	const struct ename *e = &names[n];

	for (int i = 0; i < sh->nev; i++) {
		struct evstate *s = &sh->ev[i];

		if (!e->multi) {
			if (!strcmp(s->call, e->name))
				return s;
			continue;
		}
		if (!strncmp(s->call, e->name, strlen(e->name)) &&
		    s->call[strlen(e->name)] == '.' && !strcmp(s->args, e->v[v].args))
			return s;
	}
	return NULL;
}

/*
 * Every live enabler's bit equals "event enabled". Polls for up to 10 s
 * (bits behind a page fault are written from a work item).
 */
static void check_enablers(struct worker **ws, int nw, bool post, const char *who)
{
	long checked = 0, skipped = 0, bad = 0;
	double deadline = now() + 10;

	for (;;) {
		checked = skipped = bad = 0;
		for (int k = 0; k < nw; k++) {
			struct worker *w = ws[k];

			for (int i = 0; i < w->nen; i++) {
				struct enabler *en = &w->en[i];
				struct evstate *s;
				uint64_t word;
				bool bitv;

				if (!en->live)
					continue;
				if (!post && en->stale) {
					skipped++;
					continue;
				}
				s = ev_for(en->n, en->v);
				if (!s) {
					if (post || names[en->n].multi == false || sh->dyn_ok) {
						if (now() >= deadline)
							failf("%s: enabler for %s/%d: no such event in the status text",
							      who, names[en->n].name, en->v);
						bad++;
					} else {
						skipped++;
					}
					continue;
				}
				word = en->size == 4 ? *(volatile uint32_t *)(uintptr_t)en->addr :
						       *(volatile uint64_t *)(uintptr_t)en->addr;
				bitv = (word >> en->bit) & 1;
				checked++;
				if (bitv != (s->status != 0)) {
					bad++;
					if (now() >= deadline)
						failf("%s: %s check: enabler %s (%s) size %d bit %d is %d, event status %#x%s",
						      who, post ? "post-cycle" : "pre-cycle",
						      s->call, names[en->n].v[en->v].args, en->size, en->bit,
						      bitv, s->status, en->stale ? " (page was remapped)" : "");
				}
			}
		}
		if (!bad || now() >= deadline)
			break;
		usleep(50000);
	}
	if (post) {
		addl(&sh->post_checked, checked);
		addl(&sh->post_skipped, skipped);
	} else {
		addl(&sh->pre_checked, checked);
		addl(&sh->pre_skipped, skipped);
	}
	addl(&sh->bit_mismatch, bad);
}

/* The slots' enablers: unregister until ENOENT; more than one is a bug */
static void check_slots(void)
{
	for (int i = 0; i < NSLOTS; i++) {
		int k = 0;

		while (k < 5 && !unreg(proc_fd, slots[i].addr, slots[i].bit))
			k++;
		addl(&sh->slots_checked, 1);
		if (k > 1 || k != slots[i].count) {
			addl(&sh->dup_enablers, 1);
			failf("(address, bit) slot %d: %d enablers removed at the end, %d registrations outstanding",
			      i, k, slots[i].count);
		}
		slots[i].count = 0;
	}
}

static void wait_phase(int ph)
{
	while (phase() < ph)
		usleep(20000);
}

static void wait_count(int *cnt, int *target_p)
{
	double deadline = now() + 120;

	while (__atomic_load_n(cnt, __ATOMIC_SEQ_CST) < __atomic_load_n(target_p, __ATOMIC_SEQ_CST)) {
		if (now() > deadline) {
			failf("timed out waiting for %d processes (%d done)",
			      *target_p, *cnt);
			return;
		}
		usleep(20000);
	}
}

/*
 * Invariant 1 (before the cycle) or 2 (post: after it): the main
 * process's enablers and then every worker process's, which the phase
 * starts. True when no bit differed and nothing failed since f0.
 */
static bool enablers_match(struct worker **ws, int nw, bool post, long f0)
{
	__atomic_store_n(&sh->phase, post ? PH_POST : PH_PRE, __ATOMIC_SEQ_CST);
	check_enablers(ws, nw, post, "main process");
	wait_count(post ? &sh->post_done : &sh->pre_done, &sh->nprocs);
	return sh->bit_mismatch == 0 && sh->fails == f0;
}

static void cleanup_worker(struct worker *w, bool all)
{
	for (int i = 0; i < w->nen; i++)
		if (w->en[i].live && (all || ue_one_in(&w->r, 2))) {
			int e = unreg(proc_fd, w->en[i].addr, w->en[i].bit);

			EXPECT(e, "cleanup: unreg of a live enabler", 0);
			w->en[i].live = false;
		}
	for (int i = 0; i < MAXFD; i++)
		if (w->fds[i] >= 0) {
			close(w->fds[i]);
			w->fds[i] = -1;
		}
	w->nregs = 0;
}

/* A forked child that stays until the checks, with inherited enablers */
static void keeper_main(struct worker *w)
{
	struct worker *ws[1] = { w };

	/*
	 * Only this worker's enablers are known; others were inherited too.
	 * Inherited data and perf fds go: they would keep events busy.
	 */
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (int i = 0; i < MAXFD; i++)
		w->fds[i] = -1;
	for (int i = 0; i < MAXPERF; i++)
		w->perf[i] = -1;
	w->nregs = 0;
	wait_phase(PH_STOP);
	worker_restore(w);
	addi(&sh->stop_done, 1);
	wait_phase(PH_PRE);
	check_enablers(ws, 1, false, "keeper");
	addi(&sh->pre_done, 1);
	wait_phase(PH_POST);
	check_enablers(ws, 1, true, "keeper");
	addi(&sh->post_done, 1);
	wait_phase(PH_CLEANUP);
	_exit(0);
}

/* A worker process (or the main process's workers): threads, then checks */
static void run_workers(int first_id, int nthreads, bool is_main, int *nw_out,
			struct worker ***ws_out, pthread_t **tids_out)
{
	struct worker **ws = calloc(nthreads, sizeof(*ws));
	pthread_t *tids = calloc(nthreads, sizeof(*tids));

	for (int i = 0; i < nthreads; i++) {
		ws[i] = calloc(1, sizeof(struct worker));
		worker_init(ws[i], first_id + i);
		if (pthread_create(&tids[i], NULL, worker_thread, ws[i])) {
			out("pthread_create failed");
			exit(2);
		}
	}
	(void)is_main;
	*nw_out = nthreads;
	*ws_out = ws;
	*tids_out = tids;
}

static void proc_setup(void)
{
	int fd;

	proc_fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	if (proc_fd < 0) {
		out("open %s: %s", UE_DATA_FILE, strerror(errno));
		exit(2);
	}
	fd = open(UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		out("open %s: %s", UE_STATUS_FILE, strerror(errno));
		exit(2);
	}
	status_map = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (status_map == MAP_FAILED) {
		out("mmap status page: %s", strerror(errno));
		exit(2);
	}
	slot_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	slots = calloc(NSLOTS, sizeof(*slots));
	for (int i = 0; i < NSLOTS; i++) {
		slots[i].addr = (uintptr_t)slot_page + 64 * i;
		slots[i].bit = i;
	}
}

static void worker_process(int first_id, int nthreads)
{
	struct worker **ws;
	pthread_t *tids;
	int nw;

	proc_setup();
	run_workers(first_id, nthreads, false, &nw, &ws, &tids);
	for (int i = 0; i < nw; i++)
		pthread_join(tids[i], NULL);
	check_slots();
	addi(&sh->stop_done, 1);
	wait_phase(PH_PRE);
	check_enablers(ws, nw, false, "worker process");
	addi(&sh->pre_done, 1);
	wait_phase(PH_POST);
	check_enablers(ws, nw, true, "worker process");
	addi(&sh->post_done, 1);
	wait_phase(PH_CLEANUP);
	for (int i = 0; i < nw; i++)
		cleanup_worker(ws[i], false);
	_exit(0);
}

/* ------------------------------------------------------ main: settling */

/* Parse the status text (and dynamic_events for multi-format args) */
static int snapshot_events(void)
{
	static char buf[1 << 17], dyn[1 << 17];
	char *line, *save;
	ssize_t n;
	int k = 0;

	n = ue_read_upto(UE_STATUS_FILE, buf, sizeof(buf));
	if (n < 0)
		return -1;
	dyn[0] = 0;
	if (sh->dyn_ok && ue_read_upto(UE_DYN_FILE, dyn, sizeof(dyn)) < 0)
		dyn[0] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct evstate *s;
		char *name = line, *hash, *colon;

		if (!strncmp(line, "Active:", 7))
			break;
		if (k == MAXEV)
			break;
		s = &sh->ev[k];
		memset(s, 0, sizeof(*s));
		/* A user's event ends in " # Owner: <uid>" */
		hash = strstr(line, " # Owner: ");
		if (hash)
			*hash = 0;
		hash = strstr(line, " # Used by");
		if (hash) {
			*hash = 0;
			if (strstr(hash + 1, " ftrace"))
				s->status |= EVENT_STATUS_FTRACE;
			if (strstr(hash + 1, " perf"))
				s->status |= EVENT_STATUS_PERF;
			if (strstr(hash + 1, " other"))
				s->status |= EVENT_STATUS_OTHER;
		}
		colon = strchr(line, ':');
		if (colon && colon > line && strspn(line, "0123456789") == (size_t)(colon - line)) {
			s->sidx = atoi(line);
			name = colon + 1;
		}
		snprintf(s->call, sizeof(s->call), "%s", name);
		/* "u:name args" lines of dynamic_events */
		char pat[128], *p;

		snprintf(pat, sizeof(pat), "u:%s", s->call);
		for (p = dyn; (p = strstr(p, pat)); p++) {
			char *end = p + strlen(pat), *eol;

			if (p != dyn && p[-1] != '\n')
				continue;
			if (*end != ' ' && *end != '\n')
				continue;
			eol = strchr(end, '\n');
			if (*end == ' ')
				end++;
			snprintf(s->args, sizeof(s->args), "%.*s",
				 (int)((eol ? eol : end + strlen(end)) - end), end);
			break;
		}
		k++;
	}
	__atomic_store_n(&sh->nev, k, __ATOMIC_SEQ_CST);
	return k;
}

static void event_dir(const char *call, char *dir, size_t size)
{
	snprintf(dir, size, TRACEFS "/events/%s/%.95s",
		 strchr(call, '.') ? USER_EVENTS_MULTI_SYSTEM : USER_EVENTS_SYSTEM, call);
}

static int set_ftrace(const char *call, bool on)
{
	char dir[256], path[300];

	event_dir(call, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/enable", dir);
	return ue_write_str(path, on ? "1" : "0", 0);
}

static int final_perf[MAXEV];

/*
 * Every event: enabled, then disabled (so every enabler is written again,
 * now that the pages are back), then a final state: nothing, ftrace, perf
 * or both, chosen from the seed.
 */
static void cycle_events(struct ue_rng *r, int *want)
{
	char names_[MAXEV][96];
	int k = sh->nev;

	for (int i = 0; i < k; i++)
		snprintf(names_[i], sizeof(names_[i]), "%s", sh->ev[i].call);
	for (int i = 0; i < k; i++) {
		int e = set_ftrace(names_[i], true);

		/* An unused event may be reaped (from a work item) meanwhile */
		if (e && e != -ENOENT && e != -ENODEV)
			failf("settle: enable %s: %s", names_[i], ue_errno_name(-e));
	}
	for (int i = 0; i < k; i++) {
		int e = set_ftrace(names_[i], false);

		if (e && e != -ENOENT && e != -ENODEV)
			failf("settle: disable %s: %s", names_[i], ue_errno_name(-e));
	}
	for (int i = 0; i < k; i++) {
		char dir[256], path[300], buf[32];

		want[i] = ue_rn(r, 4);
		final_perf[i] = -1;
		if (want[i] & 1)
			set_ftrace(names_[i], true);
		if (want[i] & 2) {
			event_dir(names_[i], dir, sizeof(dir));
			snprintf(path, sizeof(path), "%s/id", dir);
			if (ue_read_upto(path, buf, sizeof(buf)) > 0)
				final_perf[i] = ue_perf_open_id(strtol(buf, NULL, 10),
								PERF_SAMPLE_RAW, 0, -1);
			if (final_perf[i] < 0)
				failf("settle: perf_event_open on %s: %s", names_[i], ue_errno_name(errno));
		}
	}
}

static void tap(struct ue_tally *t, bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ue_vtap(t, false, "", ok, fmt, ap);
	va_end(ap);
}

/* Status bytes and writes for every single-format event now alive */
static void check_status_and_writes(struct ue_tally *t, int *want)
{
	long bytes_ok = 0, bytes_bad = 0, writes_ok = 0, writes_bad = 0;
	int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	struct ue_rng r = { g_seed ^ 0xabcdef };

	for (int i = 0; i < sh->nev; i++) {
		struct evstate *s = &sh->ev[i];
		int n, v, e = -1, exp = 0;
		uint32_t widx = 0, sidx = 0;

		if (strchr(s->call, '.'))
			continue;
		for (n = 0; n < NNAMES && strcmp(names[n].name, s->call); n++)
			;
		if (n == NNAMES)
			continue;
		for (v = 0; v < names[n].nv; v++)
			if ((e = reg_status(fd, n, v, &widx, &sidx)) != EADDRINUSE)
				break;
		if (e) {
			failf("settle: status registration of %s: %s", s->call, ue_errno_name(e));
			bytes_bad++;
			continue;
		}
		if (want[i] & 1)
			exp |= EVENT_STATUS_FTRACE;
		if (want[i] & 2)
			exp |= EVENT_STATUS_PERF;
		if (status_map[sidx] != exp || s->status != exp) {
			bytes_bad++;
			failf("settle: %s status byte %#x, status text %#x, expected %#x",
			      s->call, status_map[sidx], s->status, exp);
		} else {
			bytes_ok++;
		}
		char buf[128];
		size_t len;
		ssize_t ret;

		memcpy(buf, &widx, 4);
		len = build_payload(buf + 4, n, v, 0, &r);
		ret = write(fd, buf, 4 + len);
		e = ret < 0 ? errno : 0;
		if ((exp && (e || ret != (ssize_t)(4 + len))) || (!exp && e != EBADF)) {
			writes_bad++;
			failf("settle: write to %s (status %#x): %s", s->call, exp, ue_errno_name(e));
		} else {
			writes_ok++;
		}
	}
	close(fd);
	tap(t, !bytes_bad, "status page bytes match the attached probes (%ld events, %ld wrong)",
	    bytes_ok + bytes_bad, bytes_bad);
	tap(t, !writes_bad, "writes succeed iff the event is enabled (%ld writes, %ld wrong)",
	    writes_ok + writes_bad, writes_bad);
}

static int active_count(char *buf, size_t size)
{
	char *p;

	if (ue_read_upto(UE_STATUS_FILE, buf, size) < 0)
		return -1;
	p = strstr(buf, "\nActive: ");
	if (!p && !strncmp(buf, "Active: ", 8))
		p = buf - 1;
	return p ? atoi(p + 9) : -1;
}

/* Delete everything: ftrace off, perf closed, DIAG_IOCSDEL, !u: */
static bool delete_all(char *text, size_t size)
{
	double deadline = now() + 20;
	int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	int active = -1;

	for (int i = 0; i < MAXEV; i++)
		if (final_perf[i] >= 0) {
			close(final_perf[i]);
			final_perf[i] = -1;
		}
	do {
		snapshot_events();
		for (int i = 0; i < sh->nev; i++) {
			struct evstate *s = &sh->ev[i];
			char cmd[128];

			set_ftrace(s->call, false);
			if (strchr(s->call, '.')) {
				snprintf(cmd, sizeof(cmd), "!u:%s", s->call);
				ue_write_str(UE_DYN_FILE, cmd, O_APPEND);
			} else {
				ioctl(fd, DIAG_IOCSDEL, s->call);
			}
		}
		active = active_count(text, size);
		if (!active)
			break;
		usleep(100000);
	} while (now() < deadline);
	close(fd);
	return active == 0;
}

/* --------------------------------------------------------------- exec child */

static int exec_child(int fd, unsigned long long seed)
{
	struct ue_rng r = { seed };
	char *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t widx = 0;
	int n = 0, bit = ue_rn(&r, 32), e;
	char desc[64], buf[64];

	ue_rnext(&r);
	desc_of(desc, sizeof(desc), n, 0);
	e = reg_write(fd, n, 0, (uintptr_t)page + 8 * ue_rn(&r, 16), bit, 4, 0, &widx);
	if (e && e != EADDRINUSE) {
		fprintf(stderr, "exec child: registration of %s: %s\n", desc, strerror(e));
		return 1;
	}
	if (!e) {
		memcpy(buf, &widx, 4);
		memset(buf + 4, 0, 8);
		if (write(fd, buf, 12) < 0 && errno != EBADF) {
			fprintf(stderr, "exec child: write: %s\n", strerror(errno));
			return 1;
		}
	}
	/* Exit with the enabler live half of the time */
	return 0;
}

/* --------------------------------------------------------------------- main */

static int probe_dyn(void)
{
	int e = -ue_write_str(UE_DYN_FILE, "u:ues_dynprobe u32 a", O_APPEND);

	if (e == EINVAL || e == ENOENT) {
		out("# dynamic_events: 'u:' commands not supported (%s): skipping the dyn and dyn_trunc operations",
		    ue_errno_name(e));
		return 0;
	}
	if (e) {
		out("# dynamic_events: 'u:ues_dynprobe u32 a' failed with %s: skipping dyn operations",
		    ue_errno_name(e));
		return 0;
	}
	e = -ue_write_str(UE_DYN_FILE, "!u:ues_dynprobe", O_APPEND);
	if (e)
		failf("dynamic_events: !u:ues_dynprobe: %s", ue_errno_name(e));
	out("# dynamic_events: 'u:' commands supported");
	return 1;
}

/*
 * ------------------------------------------------------------ --races
 * The targeted races of the remote write ABI that random stress (op_race,
 * fork) hits only now and then; ue_stress --races [dup [N]] [fork [N]]
 * (default both, 2000 and 300 iterations):
 *
 * dup:  two threads, released together by a barrier, register the same
 *       (enable_addr, enable_bit) in one address space. At most one may
 *       succeed (the other gets EADDRINUSE); afterwards exactly one
 *       DIAG_IOCSUNREG may succeed.
 * fork: a thread opens and closes perf events on an event (toggling its
 *       state) while the main thread forks; the parent has an enabler and
 *       some 3000 mappings (so that fork's copy of the address space takes
 *       a while). The child closes the perf events it inherited (they
 *       would keep the event enabled). Once the toggling has stopped and
 *       the event is disabled, the parent's bit and the child's inherited
 *       bit must each read 0 within 2 s.
 * Prints "ok - races: ..." / "not ok - races: ..." lines and its own
 * "N passed, N failed".
 */
static int rc_fd;
static struct ue_tally rc_tally;

/* The remote write ABI, 4-byte word; 0 or a positive errno */
static int rc_reg(void *word, int bit, const char *desc)
{
	return -ue_wreg(rc_fd, desc, word, 4, bit, 0, NULL);
}

static void rc_tap(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ue_vtap(&rc_tally, false, "races: ", ok, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ dup */

static pthread_barrier_t rc_bar;
static atomic_int rc_successes;
static uint32_t *rc_dup_word;
static int rc_dup_iters;

static void *rc_dup_racer(void *arg)
{
	(void)arg;
	for (int i = 0; i < rc_dup_iters; i++) {
		pthread_barrier_wait(&rc_bar);
		if (!rc_reg(rc_dup_word, 3, "uer_dup u32 a"))
			atomic_fetch_add(&rc_successes, 1);
		pthread_barrier_wait(&rc_bar);
		pthread_barrier_wait(&rc_bar);
	}
	return NULL;
}

static void rc_test_dup(int iters)
{
	pthread_t t[2];
	int dups = 0, shown = 0;

	rc_dup_iters = iters;
	rc_dup_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_barrier_init(&rc_bar, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, rc_dup_racer, NULL);
	for (int i = 0; i < iters; i++) {
		int k = 0, s;

		atomic_store(&rc_successes, 0);
		pthread_barrier_wait(&rc_bar);	/* go */
		pthread_barrier_wait(&rc_bar);	/* both registered */
		while (k < 5 && !ue_wunreg(rc_fd, rc_dup_word, 3))
			k++;
		s = atomic_load(&rc_successes);
		if (s > 1 || k != s) {
			dups++;
			if (shown++ < 3)
				printf("# dup iteration %d: %d registrations of one (address, bit) succeeded, %d unregistrations\n",
				       i, s, k);
		}
		pthread_barrier_wait(&rc_bar);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	rc_tap(!dups, "concurrent registrations of one (address, bit): at most one enabler (%d of %d iterations made two)",
	    dups, iters);
}

/* ----------------------------------------------------------------- fork */

static atomic_int rc_stop;
static long rc_event_id;

static void *rc_toggler(void *arg)
{
	(void)arg;
	while (!atomic_load(&rc_stop)) {
		struct perf_event_attr pe = {
			.type = PERF_TYPE_TRACEPOINT, .size = sizeof(pe), .config = rc_event_id,
		};
		int p = syscall(__NR_perf_event_open, &pe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

		if (p >= 0)
			close(p);
	}
	return NULL;
}

/*
 * A child inherits the descriptors of the perf events open at fork(), and
 * an event stays enabled while any process holds one: the child closes
 * those before the bits are checked.
 */
static void rc_close_perf_fds(void)
{
	char path[64], target[64];
	ssize_t n;

	for (int fd = 3; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, "anon_inode:[perf_event]"))
			close(fd);
	}
}

/* Waits up to 2 s for the bit to read 0; true if it does */
static bool rc_bit_clears(volatile uint32_t *word)
{
	for (int k = 0; k < 200; k++) {
		if (!(*word & 1))
			return true;
		usleep(10000);
	}
	return !(*word & 1);
}

static void rc_test_fork(int iters)
{
	uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int stale = 0, pstale = 0, shown = 0, e, f;
	char buf[32] = "";

	e = rc_reg(word, 0, "uer_fork u32 a");
	f = open(UE_EVENTS_DIR "/uer_fork/id", O_RDONLY | O_CLOEXEC);
	if (e || f < 0 || read(f, buf, sizeof(buf) - 1) <= 0) {
		rc_tap(0, "fork: setup (registration: %s)", strerror(e));
		return;
	}
	close(f);
	rc_event_id = atol(buf);
	/* Many mappings: fork's copy of the address space takes longer */
	for (int i = 0; i < 3000; i++)
		mmap(NULL, 4096, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < iters; i++) {
		int p2c[2], c2p[2], st;
		pthread_t t;
		pid_t c;
		char go = 0;

		if (pipe(p2c))
			break;
		if (pipe(c2p)) {
			close(p2c[0]);
			close(p2c[1]);
			break;
		}
		atomic_store(&rc_stop, 0);
		pthread_create(&t, NULL, rc_toggler, NULL);
		usleep(rand() % 300);
		c = fork();
		if (c == 0) {
			close(p2c[1]);
			close(c2p[0]);
			rc_close_perf_fds();
			if (write(c2p[1], &go, 1) != 1 ||
			    read(p2c[0], &go, 1) != 1)
				_exit(3);
			/* disabled now: the bit must read 0 (faults are retried) */
			_exit(rc_bit_clears(word) ? 0 : 1);
		}
		close(p2c[0]);
		close(c2p[1]);
		atomic_store(&rc_stop, 1);
		pthread_join(t, NULL);
		/* No perf event on it is left open anywhere now */
		if (read(c2p[0], &go, 1) != 1)
			printf("# fork iteration %d: the child did not get ready\n", i);
		close(c2p[0]);
		if (!rc_bit_clears(word)) {
			pstale++;
			if (shown++ < 3)
				printf("# fork iteration %d: the parent's bit stayed 1 with the event disabled\n",
				       i);
		}
		if (write(p2c[1], &go, 1) != 1)
			break;
		close(p2c[1]);
		waitpid(c, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			stale++;
			if (shown++ < 3)
				printf("# fork iteration %d: the child's inherited bit stayed 1 with the event disabled\n",
				       i);
		}
	}
	ue_wunreg(rc_fd, word, 0);
	rc_tap(!stale && !pstale,
	    "fork while the event changes state: bits follow the state (stale after 2 s: %d of %d children, %d parents)",
	    stale, iters, pstale);
}

static int races_main(int argc, char **argv)
{
	int dup_n = 2000, fork_n = 300;
	bool do_dup = argc < 2, do_fork = argc < 2;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "dup")) {
			do_dup = true;
			if (i + 1 < argc && atoi(argv[i + 1]) > 0)
				dup_n = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "fork")) {
			do_fork = true;
			if (i + 1 < argc && atoi(argv[i + 1]) > 0)
				fork_n = atoi(argv[++i]);
		}
	}
	rc_fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	if (rc_fd < 0) {
		printf("not ok - races: open user_events_data: %s\n0 passed, 1 failed\n", strerror(errno));
		return 1;
	}
	if (do_dup)
		rc_test_dup(dup_n);
	if (do_fork)
		rc_test_fork(fork_n);
	close(rc_fd);
	return ue_tally_summary(&rc_tally);
}

int main(int argc, char **argv)
{
	int duration = 30, nprocs = 2, nthreads = 2, opt;
	struct ue_tally t = { 0, 0 };
	struct worker **ws;
	pthread_t *tids;
	int nw, want[MAXEV];
	pid_t *pids;
	double t0, t_run;
	long total = 0;
	static char text[1 << 17];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "--races"))
		return races_main(argc - 1, argv + 1);
	if (argc == 4 && !strcmp(argv[1], "--exec-child"))
		return exec_child(atoi(argv[2]), strtoull(argv[3], NULL, 10));

	g_seed = ((unsigned long long)time(NULL) << 16) ^ getpid();
	while ((opt = getopt(argc, argv, "s:t:p:T:v")) != -1) {
		switch (opt) {
		case 's': g_seed = strtoull(optarg, NULL, 0); break;
		case 't': duration = atoi(optarg); break;
		case 'p': nprocs = atoi(optarg); break;
		case 'T': nthreads = atoi(optarg); break;
		case 'v': verbose = true; break;
		default:
			fprintf(stderr, "usage: %s [-s seed] [-t seconds] [-p procs] [-T threads] [-v]\n"
				"       %s --races [dup [N]] [fork [N]]\n", argv[0], argv[0]);
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	memset(sh, 0, sizeof(*sh));
	for (int i = 0; i < MAXEV; i++)
		final_perf[i] = -1;

	out("# ue_stress: seed=%llu duration=%ds processes=%d threads=%d (replay: -s %llu)",
	    g_seed, duration, nprocs + 1, nthreads, g_seed);
	if (access(UE_DATA_FILE, F_OK)) {
		out("not ok - %s exists", UE_DATA_FILE);
		out("0 passed, 1 failed");
		return 1;
	}
	sh->dyn_ok = probe_dyn();

	/* The worker processes start from a single-threaded parent */
	pids = calloc(nprocs, sizeof(*pids));
	sh->nprocs = nprocs;
	for (int p = 0; p < nprocs; p++) {
		pids[p] = fork();
		if (pids[p] < 0) {
			out("fork: %s", strerror(errno));
			return 2;
		}
		if (!pids[p])
			worker_process(100 * (p + 1), nthreads);
	}
	proc_setup();
	t0 = now();
	run_workers(0, nthreads, true, &nw, &ws, &tids);
	while (now() - t0 < duration) {
		sleep(1);
		if (verbose) {
			long s = 0;

			for (int i = 0; i < NOPS; i++)
				s += sh->ops[i];
			out("# %.0fs: %ld ops, %ld failures", now() - t0, s, sh->fails);
		}
	}
	__atomic_store_n(&sh->phase, PH_STOP, __ATOMIC_SEQ_CST);
	t_run = now() - t0;
	for (int i = 0; i < nw; i++)
		pthread_join(tids[i], NULL);
	check_slots();
	wait_count(&sh->stop_done, &sh->nprocs);
	for (int i = 0; i < NOPS; i++)
		total += sh->ops[i];
	out("# %ld operations in %.1fs: %.0f ops/s sustained (%ld forks, %ld execs)",
	    total, t_run, total / t_run, sh->forks, sh->execs);
	{
		char line[1024];
		int len = 0;

		for (int i = 0; i < NOPS; i++)
			len += snprintf(line + len, sizeof(line) - len, " %s=%ld", op_names[i], sh->ops[i]);
		out("# ops:%s", line);
		len = 0;
		for (int i = 0; i < NOPS; i++)
			len += snprintf(line + len, sizeof(line) - len, " %s=%ld", op_names[i],
					sh->ops[i] ? sh->op_ns[i] / sh->ops[i] / 1000 : 0);
		out("# mean us per op:%s", line);
	}
	tap(&t, sh->fails == 0, "every operation gave an allowed result (%ld operations, %ld unexpected)",
	    total, sh->fails);
	tap(&t, sh->rmmod_refused == sh->ops[OP_RMMOD],
	    "delete_module refused while in use (%ld of %ld attempts)", sh->rmmod_refused,
	    sh->ops[OP_RMMOD]);
	tap(&t, sh->dup_enablers == 0,
	    "no (address, bit) got two enablers (%ld slot checks)", sh->slots_checked);

	/* 1: enablers of untouched pages match the current state */
	long f0 = sh->fails;

	sh->bit_mismatch = 0;
	snapshot_events();
	tap(&t, enablers_match(ws, nw, false, f0),
	    "enabler bits equal the event state before the cycle (%ld checked, %ld skipped: page remapped)",
	    sh->pre_checked, sh->pre_skipped);

	/* 2: after a full cycle, every enabler */
	struct ue_rng r = { g_seed ^ 0x1234567 };

	f0 = sh->fails;
	sh->bit_mismatch = 0;
	snapshot_events();
	cycle_events(&r, want);
	int wantn[MAXEV], nev0 = sh->nev;
	char calls[MAXEV][96];

	for (int i = 0; i < nev0; i++)
		snprintf(calls[i], sizeof(calls[i]), "%s", sh->ev[i].call);
	snapshot_events();
	/* Map the final choices onto the new snapshot (same names) */
	for (int i = 0; i < sh->nev; i++) {
		wantn[i] = 0;
		for (int j = 0; j < nev0; j++)
			if (!strcmp(calls[j], sh->ev[i].call))
				wantn[i] = want[j];
	}
	tap(&t, enablers_match(ws, nw, true, f0),
	    "enabler bits equal the event state after an enable/disable cycle (%ld checked, %ld skipped)",
	    sh->post_checked, sh->post_skipped);

	/* 3, 4 */
	f0 = sh->fails;
	check_status_and_writes(&t, wantn);

	/* Cleanup: everybody closes and leaves */
	__atomic_store_n(&sh->phase, PH_CLEANUP, __ATOMIC_SEQ_CST);
	for (int i = 0; i < nw; i++)
		cleanup_worker(ws[i], true);
	for (int p = 0; p < nprocs; p++) {
		int st;

		if (waitpid(pids[p], &st, 0) == pids[p] && (!WIFEXITED(st) || WEXITSTATUS(st)))
			failf("worker process %d ended with status %#x", pids[p], st);
	}
	/* keepers */
	while (waitpid(-1, NULL, 0) > 0)
		;
	close(proc_fd);
	proc_fd = -1;
	munmap((void *)status_map, PAGE);
	for (int i = 0; i < nw; i++)
		for (int j = 0; j < ws[i]->nen; j++)
			ws[i]->en[j].live = false;

	bool clean = delete_all(text, sizeof(text));

	tap(&t, clean, "no events left after deleting everything (user_events_status: Active: 0)");
	if (!clean)
		out("# user_events_status:\n%s", text);
	tap(&t, sh->fails == f0, "no unexpected result during the checks and cleanup");

	out("# seed %llu: %ld operations, %.0f ops/s, %ld unexpected results", g_seed, total,
	    total / t_run, sh->fails);
	return ue_tally_summary(&t);
}
