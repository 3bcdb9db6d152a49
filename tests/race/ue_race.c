// SPDX-License-Identifier: GPL-2.0
/*
 * ue_race: concurrency fuzzer for user_events.ko (`make race`).
 *
 * Many threads in several processes run random operations on a SMALL
 * shared set of event names, so that they collide: registration through
 * both ABIs (24-byte status page, 28-byte remote write) with random flags
 * and formats, DIAG_IOCSUNREG, DIAG_IOCSDEL, close, dup, fork, exec, exit,
 * munmap/mprotect of the enable words, write/writev, enable/disable through
 * tracefs and tracefs instances (mkdir/rmdir), perf_event_open/close with
 * a BPF program attached, u: events, eprobes, hist triggers and synthetic
 * events on user events, and (with -m KO) rmmod/insmod in a loop.
 *
 *   ue_race [-s SEED] [-t SECONDS] [-p PROCS] [-T THREADS] [-n NAMES]
 *           [-m MODULE.ko [-R]] [-F] [-M relayout|held [-x PART,...]] [-v]
 *
 * -m runs an rmmod/insmod loop beside the workers and checks at the end
 * that the module unloads and loads again; -R keeps only that final check.
 *
 * -M selects an aftermath mode instead (relayout.c, held.c): events
 * deleted and created again with other layouts while readers decode
 * their records, or faults held for ever by processes that are then
 * killed; -x leaves parts of the mode out. See tests/race/README.
 *
 * -F opens no file of one event's tracefs directory while events and
 * instances come and go: enables go through set_event (top level and
 * instances) instead of events/user_events/NAME/enable, and there are no
 * hist triggers (NAME/trigger). tests/race/run.sh sets it on 6.1, whose tracing
 * core (no eventfs) frees an event's trace_event_file when the directory
 * is removed while an open() of one of its files is between its lookup
 * and tracing_open_file_tr() (enable), or while a trigger file is open:
 * the open or write then uses freed memory, whichever event (kprobe,
 * synthetic, user event) and whichever removal (event deletion, instance
 * rmdir). That is the core's bug, not the module's (tests/race/README,
 * Documentation/security.rst); everything else, instance churn included,
 * still runs.
 *
 * Each thread draws its operations from its own generator seeded from
 * SEED, process and thread number: a seed replays the same operation
 * sequences (the interleaving is up to the scheduler).
 *
 * What fails (a "not ok" line): a worker killed by a signal or hung, an
 * operation whose result the interface does not allow (DIAG_IOCSDEL other
 * than 0/EBUSY/ENOENT/EPERM/EBADF...), or, after the run, events left
 * that cannot be deleted or a module that cannot be unloaded. Kernel
 * reports (oops, WARN, refcount_t, lockdep, KASAN) are the guest runner's
 * to find (tests/race/guest.sh, tests/race/run.sh). Prints per-operation counts and
 * "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

#include "uapi/linux/user_events.h"
#include "aftermath.h"

#define TRACEFS		UE_TRACEFS
#define SYNTH_FILE	TRACEFS "/synthetic_events"
#define NAME_PFX	"ue_z"
#define MAX_NAMES	4
#define NFDS		8
#define NINST		2
#define ERRNO_MAX	140

/* Register ioctls with each struct's own size in the number (same value) */
#define IOC_WREG	_IOWR(DIAG_IOC_MAGIC, 0, struct user_write_reg *)
#define IOC_WUNREG	_IOW(DIAG_IOC_MAGIC, 2, struct user_write_unreg *)

enum op {
	OP_OPEN, OP_REG_WRITE, OP_REG_STATUS, OP_UNREG, OP_DEL, OP_CLOSE,
	OP_DUP, OP_FORK, OP_EXEC, OP_MUNMAP, OP_MPROTECT, OP_WRITE, OP_WRITEV,
	OP_ENABLE, OP_INST_ENABLE, OP_INST_MKDIR, OP_INST_RMDIR, OP_PERF,
	OP_PERF_CLOSE, OP_DYN_CREATE, OP_DYN_DELETE, OP_EPROBE, OP_EPROBE_DEL,
	OP_HIST, OP_HIST_DEL, OP_SYNTH, OP_SYNTH_DEL, OP_STATUS_READ,
	OP_STATUS_MMAP, OP_DYN_READ, OP_CYCLE, OP_RMMOD, OP_INSMOD, NR_OPS
};

static const char *const op_names[NR_OPS] = {
	"open", "reg28", "reg24", "unreg", "del", "close", "dup", "fork",
	"exec", "munmap", "mprotect", "write", "writev", "enable",
	"inst_enable", "inst_mkdir", "inst_rmdir", "perf_open", "perf_close",
	"dyn_create", "dyn_delete", "eprobe", "eprobe_del", "hist", "hist_del",
	"synth", "synth_del", "status_read", "status_mmap", "dyn_read",
	"cycle", "rmmod", "insmod",
};

/* Relative weights of the worker operations (rmmod/insmod: -m only) */
static int op_weight[NR_OPS] = {
	[OP_OPEN] = 8, [OP_REG_WRITE] = 14, [OP_REG_STATUS] = 6,
	[OP_UNREG] = 10, [OP_DEL] = 10, [OP_CLOSE] = 6, [OP_DUP] = 2,
	[OP_FORK] = 2, [OP_EXEC] = 1, [OP_MUNMAP] = 2, [OP_MPROTECT] = 2,
	[OP_WRITE] = 8, [OP_WRITEV] = 4, [OP_ENABLE] = 8, [OP_INST_ENABLE] = 3,
	[OP_INST_MKDIR] = 1, [OP_INST_RMDIR] = 1, [OP_PERF] = 4,
	[OP_PERF_CLOSE] = 4, [OP_DYN_CREATE] = 5, [OP_DYN_DELETE] = 4,
	[OP_EPROBE] = 2, [OP_EPROBE_DEL] = 2, [OP_HIST] = 2, [OP_HIST_DEL] = 2,
	[OP_SYNTH] = 1, [OP_SYNTH_DEL] = 1, [OP_STATUS_READ] = 2,
	[OP_STATUS_MMAP] = 1, [OP_DYN_READ] = 2, [OP_CYCLE] = 10,
};

/* Counters shared by all processes (MAP_SHARED) */
struct shared {
	atomic_long ops[NR_OPS];
	atomic_long ok[NR_OPS];
	atomic_long err[NR_OPS][ERRNO_MAX];	/* failures by errno */
	atomic_int bad;
	char bad_msg[8][200];
	atomic_int stop;
	atomic_int module_gone;	/* the modder unloaded it and has not loaded it yet */
	atomic_int quiet;	/* quiet phase: no data fds, no enablers */
};

static struct shared *sh;
static unsigned long long seed;
static int secs = 10, nprocs = 2, nthreads = 2, nnames = 3, verbose;
static const char *module_ko;
static bool no_modder;		/* -R: no rmmod/insmod loop (final check only) */
static bool no_event_files;	/* -F: no per-event tracefs file (6.1) */
static long end_ms;

/* Per process: fds, perf fds, the enable word page */
static atomic_int fds[NFDS];
static atomic_int perf_fds[NFDS];
static char *wpage;		/* fixed address, remapped after munmap */
static int bpf_prog = -1;

static void bad(const char *fmt, ...)
{
	int i = atomic_fetch_add(&sh->bad, 1);
	va_list ap;

	if (i >= 8)
		return;
	va_start(ap, fmt);
	vsnprintf(sh->bad_msg[i], sizeof(sh->bad_msg[i]), fmt, ap);
	va_end(ap);
}


static void name_of(char *buf, size_t size, int i)
{
	snprintf(buf, size, NAME_PFX "%d", i);
}

/*
 * The last name is "hot": registrations that stay (reg28, reg24) leave it
 * to short-lived ones (cycle) and deletes, and tracefs users (enable,
 * perf, eprobes, triggers) mostly do, so that its last put often meets a
 * DIAG_IOCSDEL; the other names stay busy.
 */
static __thread bool hot_lane;

enum heat { COLD, MOSTLY_COLD, HOT };

static int pick_name(unsigned long long *s, enum heat heat)
{
	int i = ue_xs_rn(s, nnames);

	if (nnames < 2)
		return i;
	if (heat == HOT && (hot_lane || ue_xs_rn(s, 2)))
		return nnames - 1;
	if (i == nnames - 1 && (heat == COLD || (heat == MOSTLY_COLD && ue_xs_rn(s, 8))))
		return ue_xs_rn(s, nnames - 1);
	return i;
}

static const char *const formats[] = { "u32 a", "u64 b", "u32 a;u32 c", "" };

static int pick_fd(unsigned long long *s)
{
	return atomic_load(&fds[ue_xs_rn(s, NFDS)]);
}

static void *word_addr(unsigned long long *s, int *size)
{
	*size = ue_xs_rn(s, 2) ? 4 : 8;
	return wpage + 8 * ue_xs_rn(s, 8);
}

static int do_reg_write(unsigned long long *s)
{
	static const __u16 flagset[] = {
		0, 0, USER_EVENT_REG_PERSIST, USER_EVENT_REG_MULTI_FORMAT,
		USER_EVENT_REG_PERSIST | USER_EVENT_REG_MULTI_FORMAT,
	};
	char desc[128], name[32];
	int size, bit;
	void *addr;
	__u16 flags;

	name_of(name, sizeof(name), pick_name(s, COLD));
	snprintf(desc, sizeof(desc), "%s %s", name, formats[ue_xs_rn(s, 4)]);
	/* The seed's order of draws: the word, the bit, the flags, the fd */
	addr = word_addr(s, &size);
	bit = ue_xs_rn(s, 4);
	flags = flagset[ue_xs_rn(s, 5)];
	return ue_wreg(pick_fd(s), desc, addr, size, bit, flags, NULL);
}

static int do_reg_status(unsigned long long *s)
{
	char desc[128], name[32];

	name_of(name, sizeof(name), pick_name(s, COLD));
	snprintf(desc, sizeof(desc), "%s %s", name, formats[ue_xs_rn(s, 4)]);
	return ue_reg(pick_fd(s), desc, NULL, NULL);
}

static int do_unreg(unsigned long long *s)
{
	void *addr;
	int size, bit;

	addr = word_addr(s, &size);
	bit = ue_xs_rn(s, 4);
	return ue_wunreg(pick_fd(s), addr, bit);
}

/*
 * What short-lived clients do: open, register (28-byte ABI, not
 * persistent), unregister, close; the last put of the event then races
 * the DIAG_IOCSDELs and u: creates of the other threads.
 */
static int do_cycle(unsigned long long *s)
{
	char desc[64], name[32];
	struct user_write_reg r;
	struct user_write_unreg u;
	int fd, ret = 0, bit = ue_xs_rn(s, 4);
	void *word = wpage + 64 + 8 * ue_xs_rn(s, 8);

	fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	name_of(name, sizeof(name), pick_name(s, HOT));
	snprintf(desc, sizeof(desc), "%s %s", name, formats[0]);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.enable_addr = (uintptr_t)word;
	r.enable_size = 4;
	r.enable_bit = bit;
	r.name_args = (uintptr_t)desc;
	if (ioctl(fd, IOC_WREG, &r) < 0) {
		ret = -errno;
	} else {
		memset(&u, 0, sizeof(u));
		u.size = sizeof(u);
		u.disable_addr = (uintptr_t)word;
		u.disable_bit = bit;
		if (ioctl(fd, IOC_WUNREG, &u) < 0)
			ret = -errno;
	}
	close(fd);
	return ret;
}

static int do_del(unsigned long long *s)
{
	int fd = pick_fd(s), ret = 0, i;
	char name[32];

	/* Half of the time through a fresh fd: most slots are often empty */
	bool own = fd < 0 || ue_xs_rn(s, 2);

	if (own)
		fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	name_of(name, sizeof(name), pick_name(s, HOT));
	/* The hot lane deletes in bursts: a last put's window is short */
	for (i = hot_lane ? 32 : 1; i > 0; i--) {
		ret = ioctl(fd, DIAG_IOCSDEL, name) < 0 ? -errno : 0;
		if (ret != -ENOENT && ret != -EBUSY)
			break;
	}
	if (own && fd >= 0)
		close(fd);
	/* The operation allows these (EBADF/ENOTTY: not a data fd now) */
	if (ret && ret != -EBUSY && ret != -ENOENT && ret != -EPERM &&
	    ret != -EBADF && ret != -ENOTTY && ret != -EINVAL)
		bad("DIAG_IOCSDEL %s: %s", name, strerror(-ret));
	return ret;
}

/* fd into a random slot of tab, closing the one it replaces; 0 */
static int slot_put(unsigned long long *s, atomic_int *tab, int fd)
{
	int old = atomic_exchange(&tab[ue_xs_rn(s, NFDS)], fd);

	if (old >= 0)
		close(old);
	return 0;
}

/* Closes the fd of a random slot of tab: 0, -errno, or -EBADF if empty */
static int slot_close(unsigned long long *s, atomic_int *tab)
{
	int old = atomic_exchange(&tab[ue_xs_rn(s, NFDS)], -1);

	return old >= 0 ? (close(old) ? -errno : 0) : -EBADF;
}

static int do_open(unsigned long long *s)
{
	int fd = open(UE_DATA_FILE, O_RDWR | (ue_xs_rn(s, 2) ? O_CLOEXEC : 0));

	if (fd < 0)
		return -errno;
	return slot_put(s, fds, fd);
}

static int do_close(unsigned long long *s)
{
	return slot_close(s, fds);
}

static int do_dup(unsigned long long *s)
{
	int fd = dup(pick_fd(s));

	if (fd < 0)
		return -errno;
	return slot_put(s, fds, fd);
}

static int do_write(unsigned long long *s, bool vec)
{
	/* A write index, then 0 to 16 bytes of payload */
	unsigned char rec[4 + 16];
	unsigned long long v[2] = { ue_xs_next(s), ue_xs_next(s) };
	struct iovec iov[2];
	int fd = pick_fd(s), idx = ue_xs_rn(s, 6);
	ssize_t n;

	memcpy(rec, &idx, 4);
	memcpy(rec + 4, v, 16);
	if (!vec) {
		n = write(fd, rec, 4 + 4 * ue_xs_rn(s, 5));
	} else {
		iov[0].iov_base = rec;
		iov[0].iov_len = 4;
		iov[1].iov_base = rec + 4;
		iov[1].iov_len = 4 * ue_xs_rn(s, 5);
		n = writev(fd, iov, 2);
	}
	return n < 0 ? -errno : 0;
}

static int do_enable(unsigned long long *s, bool inst)
{
	char path[256], name[32], line[64];
	int in = 0;
	bool all = false, on;

	/* The generator is drawn in the same order with and without -F */
	name_of(name, sizeof(name), pick_name(s, MOSTLY_COLD));
	if (inst)
		in = ue_xs_rn(s, NINST);
	else
		all = !ue_xs_rn(s, 4);
	on = ue_xs_rn(s, 2);
	if (all)	/* the system's enable file: safe on every kernel */
		return ue_write_str(TRACEFS "/events/user_events/enable",
				 on ? "1\n" : "0\n", 0);
	if (no_event_files) {
		/* By name under event_mutex, never through a dentry (-F) */
		if (inst)
			snprintf(path, sizeof(path),
				 TRACEFS "/instances/ue_race%d/set_event", in);
		else
			snprintf(path, sizeof(path), TRACEFS "/set_event");
		snprintf(line, sizeof(line), "%suser_events:%s\n",
			 on ? "" : "!", name);
		return ue_write_str(path, line, O_APPEND);
	}
	if (inst)
		snprintf(path, sizeof(path),
			 TRACEFS "/instances/ue_race%d/events/user_events/%s/enable",
			 in, name);
	else
		snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/enable",
			 name);
	return ue_write_str(path, on ? "1\n" : "0\n", 0);
}

static int do_inst(unsigned long long *s, bool rm)
{
	char path[128];

	snprintf(path, sizeof(path), TRACEFS "/instances/ue_race%d", ue_xs_rn(s, NINST));
	if (rm)
		return rmdir(path) ? -errno : 0;
	return mkdir(path, 0755) ? -errno : 0;
}

static int bpf_load(void)
{
	/* r0 = 0; exit */
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t)"GPL";
	return syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

static int do_perf(unsigned long long *s)
{
	char path[256], name[32], buf[32];
	struct perf_event_attr pe;
	int fd, idf;
	ssize_t n;

	name_of(name, sizeof(name), pick_name(s, MOSTLY_COLD));
	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/id", name);
	idf = open(path, O_RDONLY | O_CLOEXEC);
	if (idf < 0)
		return -errno;
	n = read(idf, buf, sizeof(buf) - 1);
	close(idf);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_TRACEPOINT;
	pe.size = sizeof(pe);
	pe.config = strtoull(buf, NULL, 10);
	pe.sample_period = 1;
	pe.sample_type = PERF_SAMPLE_RAW;
	fd = syscall(__NR_perf_event_open, &pe, 0, -1, -1,
		     ue_xs_rn(s, 2) ? PERF_FLAG_FD_CLOEXEC : 0);
	if (fd < 0)
		return -errno;
	if (bpf_prog >= 0 && ue_xs_rn(s, 2))
		ioctl(fd, PERF_EVENT_IOC_SET_BPF, bpf_prog);
	return slot_put(s, perf_fds, fd);
}

static int do_perf_close(unsigned long long *s)
{
	return slot_close(s, perf_fds);
}

static int do_dyn(unsigned long long *s, bool del)
{
	char line[128], name[32];

	name_of(name, sizeof(name), pick_name(s, MOSTLY_COLD));
	if (del)
		snprintf(line, sizeof(line), "!u:%s\n", name);
	else
		snprintf(line, sizeof(line), "u:%s %s\n", name, formats[ue_xs_rn(s, 4)]);
	return ue_write_str(UE_DYN_FILE, line, O_APPEND);
}

static int do_eprobe(unsigned long long *s, bool del)
{
	char line[128], name[32];
	int i = pick_name(s, MOSTLY_COLD);

	name_of(name, sizeof(name), i);
	if (del)
		snprintf(line, sizeof(line), "-:ue_race_ep%d\n", i);
	else
		snprintf(line, sizeof(line), "e:ue_race_ep%d user_events/%s\n",
			 i, name);
	return ue_write_str(UE_DYN_FILE, line, O_APPEND);
}

static int do_hist(unsigned long long *s, bool del)
{
	static const char *const trig[] = {
		"hist:keys=common_pid", "hist:keys=a:va=a",
		"hist:keys=common_pid:onmatch(user_events." NAME_PFX "0).trace(ue_race_syn,$va)",
	};
	char path[256], line[160], name[32];
	int t = ue_xs_rn(s, 3);

	name_of(name, sizeof(name), pick_name(s, MOSTLY_COLD));
	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/trigger", name);
	snprintf(line, sizeof(line), "%s%s\n", del ? "!" : "", trig[t]);
	return ue_write_str(path, line, O_APPEND);
}

static int do_synth(unsigned long long *s __maybe_unused, bool del)
{
	return ue_write_str(SYNTH_FILE, del ? "!ue_race_syn\n" :
			    "ue_race_syn u32 v\n", O_APPEND);
}

/* Reads user_events_status, or dynamic_events (dyn) */
static int do_read(unsigned long long *s __maybe_unused, bool dyn)
{
	char buf[4096];
	int fd = open(dyn ? UE_DYN_FILE : UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return 0;
}

static int do_status_mmap(unsigned long long *s __maybe_unused)
{
	int fd = open(UE_STATUS_FILE, O_RDWR | O_CLOEXEC);
	char *p;

	if (fd < 0)
		return -errno;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	__atomic_load_n(&p[1], __ATOMIC_RELAXED);
	munmap(p, 4096);
	return 0;
}

static int do_munmap(unsigned long long *s)
{
	if (ue_xs_rn(s, 2)) {
		munmap(wpage, 4096);
		usleep(ue_xs_rn(s, 200));
	}
	return mmap(wpage, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ?
	       -errno : 0;
}

static int do_mprotect(unsigned long long *s)
{
	return mprotect(wpage, 4096, ue_xs_rn(s, 2) ? PROT_READ :
			PROT_READ | PROT_WRITE) ? -errno : 0;
}

static int run_op(unsigned long long *s, int op, bool in_child);
static int clear_all(void);

/* A child: a few operations of its own (on inherited fds), then exit */
static int do_fork(unsigned long long *s, bool exec)
{
	pid_t pid = fork();
	int st, i;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		unsigned long long cs = ue_xs_next(s) | 1;

		if (exec)
			execl("/bin/true", "true", (char *)NULL);
		for (i = ue_xs_rn(&cs, 6); i > 0; i--)
			run_op(&cs, ue_xs_rn(&cs, OP_FORK), true);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
		bad("fork child killed by signal %d", WTERMSIG(st));
	return 0;
}

/*
 * The unload as an administrator makes it: prepare_unload removes the
 * files (they pin the module until then), then delete_module; if that is
 * refused, the files come back. 0 or -errno of delete_module.
 */
static int do_rmmod(unsigned long long *s)
{
	char name[32], line[128];
	int i, ret;

	/*
	 * In quiet phases, now and then disable every event first, so that
	 * the unload races the workers' enables (a module with enabled
	 * events must stay)
	 */
	if (atomic_load(&sh->quiet) && !ue_xs_rn(s, 4)) {
		ue_write_str(TRACEFS "/events/user_events/enable", "0\n", 0);
		for (i = 0; i < NINST; i++) {
			snprintf(line, sizeof(line),
				 TRACEFS "/instances/ue_race%d/events/user_events/enable", i);
			ue_write_str(line, "0\n", 0);
		}
	}
	/* Now and then, in quiet phases, clear everything first */
	if (atomic_load(&sh->quiet) && !ue_xs_rn(s, 3))
		clear_all();
	/* Delete what it can first: every event pins the module */
	if (ue_xs_rn(s, 2))
		for (i = 0; i < nnames; i++) {
			name_of(name, sizeof(name), i);
			snprintf(line, sizeof(line), "!u:%s\n", name);
			ue_write_str(UE_DYN_FILE, line, O_APPEND);
		}
	ret = am_mod_unload();
	if (ret && ret != -EWOULDBLOCK && ret != -ENOENT && ret != -EBUSY)
		bad("delete_module: %s", strerror(-ret));
	if (!ret)
		atomic_store(&sh->module_gone, 1);
	return ret;
}

static int do_insmod(unsigned long long *s __maybe_unused)
{
	int ret = am_mod_load(module_ko);

	if (ret && ret != -EEXIST)
		bad("finit_module: %s", strerror(-ret));
	if (!ret)
		atomic_store(&sh->module_gone, 0);
	return ret;
}

/*
 * What each operation runs: one(s), or two(s, alt) for the operations
 * that come in pairs (the second of a pair passes alt = true); fork and
 * exec do nothing in a forked child (parent_only).
 */
static const struct op_def {
	int (*one)(unsigned long long *s);
	int (*two)(unsigned long long *s, bool alt);
	bool alt, parent_only;
} op_defs[NR_OPS] = {
	[OP_OPEN] = { do_open }, [OP_REG_WRITE] = { do_reg_write },
	[OP_REG_STATUS] = { do_reg_status }, [OP_UNREG] = { do_unreg },
	[OP_DEL] = { do_del }, [OP_CLOSE] = { do_close }, [OP_DUP] = { do_dup },
	[OP_FORK] = { .two = do_fork, .parent_only = true },
	[OP_EXEC] = { .two = do_fork, .alt = true, .parent_only = true },
	[OP_MUNMAP] = { do_munmap }, [OP_MPROTECT] = { do_mprotect },
	[OP_WRITE] = { .two = do_write }, [OP_WRITEV] = { .two = do_write, .alt = true },
	[OP_ENABLE] = { .two = do_enable },
	[OP_INST_ENABLE] = { .two = do_enable, .alt = true },
	[OP_INST_MKDIR] = { .two = do_inst },
	[OP_INST_RMDIR] = { .two = do_inst, .alt = true },
	[OP_PERF] = { do_perf }, [OP_PERF_CLOSE] = { do_perf_close },
	[OP_DYN_CREATE] = { .two = do_dyn }, [OP_DYN_DELETE] = { .two = do_dyn, .alt = true },
	[OP_EPROBE] = { .two = do_eprobe },
	[OP_EPROBE_DEL] = { .two = do_eprobe, .alt = true },
	[OP_HIST] = { .two = do_hist }, [OP_HIST_DEL] = { .two = do_hist, .alt = true },
	[OP_SYNTH] = { .two = do_synth }, [OP_SYNTH_DEL] = { .two = do_synth, .alt = true },
	[OP_STATUS_READ] = { .two = do_read },
	[OP_STATUS_MMAP] = { do_status_mmap },
	[OP_DYN_READ] = { .two = do_read, .alt = true },
	[OP_CYCLE] = { do_cycle }, [OP_RMMOD] = { do_rmmod }, [OP_INSMOD] = { do_insmod },
};

static int run_op(unsigned long long *s, int op, bool in_child)
{
	const struct op_def *d = &op_defs[op];
	int ret;

	if (in_child && d->parent_only)
		ret = 0;
	else if (d->one)
		ret = d->one(s);
	else
		ret = d->two(s, d->alt);
	atomic_fetch_add(&sh->ops[op], 1);
	if (!ret)
		atomic_fetch_add(&sh->ok[op], 1);
	else if (-ret > 0 && -ret < ERRNO_MAX)
		atomic_fetch_add(&sh->err[op][-ret], 1);
	return ret;
}

/*
 * In a quiet phase (with -m, about a third of the time) the workers hold
 * no data file, perf event or enabler, which pin the module today: they
 * only work through tracefs and dynamic_events, so that rmmod can succeed
 * while events, eprobes, triggers and enables come and go.
 */
static bool quiet_op(int op)
{
	switch (op) {
	case OP_ENABLE: case OP_INST_ENABLE: case OP_INST_MKDIR:
	case OP_INST_RMDIR: case OP_DYN_CREATE: case OP_DYN_DELETE:
	case OP_EPROBE: case OP_EPROBE_DEL: case OP_HIST: case OP_HIST_DEL:
	case OP_SYNTH: case OP_SYNTH_DEL: case OP_DYN_READ:
		return true;
	}
	return false;
}

/* Drop this process's data fds (their enablers first) and perf events */
static void go_quiet(void)
{
	struct user_write_unreg u;
	int i, w, b, fd;

	for (i = 0; i < NFDS; i++) {
		fd = atomic_exchange(&fds[i], -1);
		if (fd < 0)
			continue;
		for (w = 0; w < 8; w++)
			for (b = 0; b < 4; b++) {
				memset(&u, 0, sizeof(u));
				u.size = sizeof(u);
				u.disable_addr = (uintptr_t)(wpage + 8 * w);
				u.disable_bit = b;
				ioctl(fd, IOC_WUNREG, &u);
			}
		close(fd);
	}
	for (i = 0; i < NFDS; i++) {
		fd = atomic_exchange(&perf_fds[i], -1);
		if (fd >= 0)
			close(fd);
	}
}

/* Cheap operations on data files: the fast lane collides most often */
static bool fast_op(int op)
{
	switch (op) {
	case OP_OPEN: case OP_REG_WRITE: case OP_REG_STATUS: case OP_UNREG:
	case OP_DEL: case OP_CLOSE: case OP_DUP: case OP_WRITE: case OP_WRITEV:
	case OP_CYCLE: case OP_DYN_CREATE: case OP_DYN_DELETE:
		return true;
	}
	return false;
}

/* What short-lived clients and cleaners do on the hot name */
static bool hot_op(int op)
{
	return op == OP_CYCLE || op == OP_DEL;
}

enum lane { LANE_ALL, LANE_FAST, LANE_HOT, LANE_QUIET, NR_LANES };

static int lane_weight[NR_LANES];

static bool in_lane(int op, enum lane lane)
{
	return lane == LANE_ALL || (lane == LANE_FAST && fast_op(op)) ||
	       (lane == LANE_HOT && hot_op(op)) ||
	       (lane == LANE_QUIET && quiet_op(op));
}

static int pick_op(unsigned long long *s, enum lane lane)
{
	int r = ue_xs_rn(s, lane_weight[lane]), op;

	for (op = 0; op < NR_OPS; op++) {
		if (!in_lane(op, lane))
			continue;
		r -= op_weight[op];
		if (r < 0)
			return op;
	}
	return OP_DYN_READ;
}

struct thr {
	pthread_t t;
	unsigned long long s;
	int id;
};

static void *worker(void *arg)
{
	struct thr *t = arg;

	bool was_quiet = atomic_load(&sh->quiet);

	hot_lane = t->id % 100 == 0;
	while (ue_now_ms() < end_ms && !atomic_load(&sh->stop)) {
		bool quiet = atomic_load(&sh->quiet);
		int op;

		/*
		 * With the rmmod loop, a process that may have registered
		 * enablers ends when a quiet phase begins: its address
		 * space pins the module until it exits. main() forks a new
		 * one (RESPAWN), so that the unload can happen.
		 */
		if (quiet && !was_quiet && module_ko && !no_modder)
			return NULL;
		was_quiet = quiet;
		if (quiet)
			go_quiet();
		/*
		 * Thread 0 of each process cycles and deletes (the hot lane),
		 * thread 2 runs cheap data-file operations, the others all.
		 * Few threads find more: the two vCPUs must run a hot pair
		 * at the same time (-p 2 -T 2 found the put/delete race in
		 * 3 s where -p 3 -T 3 ran 30 s without)
		 */
		op = pick_op(&t->s, quiet ? LANE_QUIET :
			     t->id % 100 == 0 ? LANE_HOT :
			     t->id % 100 == 2 ? LANE_FAST : LANE_ALL);

		if (verbose > 1)
			fprintf(stderr, "%d %s\n", t->id, op_names[op]);
		run_op(&t->s, op, false);
	}
	return NULL;
}

/* A worker's exit status when it should be forked again */
#define RESPAWN	42

static void worker_process(int p, int gen)
{
	struct thr thr[64];
	int i;

	for (i = 0; i < NFDS; i++) {
		atomic_store(&fds[i], -1);
		atomic_store(&perf_fds[i], -1);
	}
	wpage = mmap((void *)(0x300000000000UL + p * 0x10000UL), 4096,
		     PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (wpage == MAP_FAILED)
		_exit(3);
	bpf_prog = bpf_load();
	for (i = 0; i < nthreads; i++) {
		thr[i].id = p * 100 + i;
		thr[i].s = (seed ^ (0x9E3779B97F4A7C15ULL * (thr[i].id + 1)) ^
			    (0xC2B2AE3D27D4EB4FULL * gen)) | 1;
		pthread_create(&thr[i].t, NULL, worker, &thr[i]);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(thr[i].t, NULL);
	_exit(ue_now_ms() < end_ms && !atomic_load(&sh->stop) ? RESPAWN : 0);
}

/* rmmod/insmod loop (-m): unloads when it can, loads again after a while */
static void modder_process(void)
{
	unsigned long long s = seed ^ 0xA5A5A5A5ULL;
	long phase_end = ue_now_ms() + 1000;

	s |= 1;
	while (ue_now_ms() < end_ms && !atomic_load(&sh->stop)) {
		if (ue_now_ms() >= phase_end) {
			int q = !atomic_load(&sh->quiet);

			atomic_store(&sh->quiet, q);
			phase_end = ue_now_ms() + (q ? 1000 : 2000) + ue_xs_rn(&s, 1000);
		}
		if (run_op(&s, OP_RMMOD, false) == 0) {
			usleep(ue_xs_rn(&s, 20000));
			run_op(&s, OP_INSMOD, false);
		}
		usleep(ue_xs_rn(&s, 5000));
	}
	if (atomic_load(&sh->module_gone))
		run_op(&s, OP_INSMOD, false);
	_exit(0);
}

/* "# op  count (N ok, N EBUSY, ...)": the three most frequent errnos */
static void print_counts(int op, long n)
{
	ue_print_op_counts(op_names[op], n, atomic_load(&sh->ok[op]),
			   sh->err[op], ERRNO_MAX);
}

static void print_usage(void)
{
	fprintf(stderr,
		"ue_race [-s SEED] [-t SECONDS] [-p PROCS] [-T THREADS] [-n NAMES (1-4)] [-m MODULE.ko [-R]] [-F] [-M relayout|held [-x PART,...]] [-v]\n");
	exit(2);
}

/*
 * Undo what keeps events alive: disable them (instances removed), remove
 * eprobes, hist triggers and the synthetic event, then delete the events
 * that are not in use. Returns how many were busy.
 */
static int clear_all(void)
{
	char name[32], line[64], path[128];
	int i, fd, busy = 0;

	ue_write_str(TRACEFS "/events/user_events/enable", "0\n", 0);
	for (i = 0; i < NINST; i++) {
		snprintf(path, sizeof(path), TRACEFS "/instances/ue_race%d", i);
		rmdir(path);
	}
	for (i = 0; i < MAX_NAMES; i++) {
		snprintf(line, sizeof(line), "-:ue_race_ep%d\n", i);
		ue_write_str(UE_DYN_FILE, line, O_APPEND);
	}
	for (i = 0; !no_event_files && i < nnames; i++) {
		name_of(name, sizeof(name), i);
		snprintf(path, sizeof(path),
			 TRACEFS "/events/user_events/%s/trigger", name);
		ue_write_str(path, "!hist:keys=common_pid:onmatch(user_events." NAME_PFX
			  "0).trace(ue_race_syn,$va)\n", O_APPEND);
	}
	for (i = 0; !no_event_files && i < nnames; i++) {
		name_of(name, sizeof(name), i);
		snprintf(path, sizeof(path),
			 TRACEFS "/events/user_events/%s/trigger", name);
		ue_write_str(path, "!hist:keys=common_pid\n", O_APPEND);
		ue_write_str(path, "!hist:keys=a:va=a\n", O_APPEND);
	}
	do_synth(NULL, true);
	fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	for (i = 0; fd >= 0 && i < nnames; i++) {
		name_of(name, sizeof(name), i);
		if (ioctl(fd, DIAG_IOCSDEL, name) && errno == EBUSY)
			busy++;
	}
	if (fd >= 0)
		close(fd);
	return busy;
}

/* After the run: undo what the workers left, then check the module can go */
static void cleanup_and_check(void)
{
	int j, left = clear_all();

	/* Address spaces let go from work items: retry for a while */
	for (j = 0; j < 100 && left; j++) {
		usleep(50000);
		left = clear_all();
	}
	am_tap(!left, "every event deleted after the run (%d busy)", left);

	if (module_ko)
		am_reload_after_run(module_ko);
}

int main(int argc, char **argv)
{
	int c, i, st, nchildren = 0, alive, respawns = 0;
	pid_t pids[65];
	long deadline;
	const char *env = getenv("RACE_SEED"), *mode = NULL, *exclude = NULL;
	static const char int_opts[] = "tpTn";
	int *const int_opt[] = { &secs, &nprocs, &nthreads, &nnames };

	seed = env ? strtoull(env, NULL, 0) : 0;
	while ((c = getopt(argc, argv, "s:t:p:T:n:m:RFM:x:v")) != -1) {
		switch (c) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't': case 'p': case 'T': case 'n':
			*int_opt[strchr(int_opts, c) - int_opts] = atoi(optarg);
			break;
		case 'm':
			module_ko = optarg;
			break;
		case 'R':
			no_modder = true;
			break;
		case 'M':
			mode = optarg;
			break;
		case 'x':
			exclude = optarg;
			break;
		case 'F':
			no_event_files = true;
			op_weight[OP_HIST] = op_weight[OP_HIST_DEL] = 0;
			break;
		case 'v':
			verbose++;
			break;
		default:
			print_usage();
		}
	}
	if (nprocs < 1 || nprocs > 64 || nthreads < 1 || nthreads > 64 ||
	    nnames < 1 || nnames > MAX_NAMES || secs < 1)
		print_usage();
	if (!seed) {
		seed = (unsigned long long)time(NULL) * 2654435761ULL ^ getpid();
		seed &= (1ULL << 48) - 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mode) {
		struct am_opts o = {
			.seed = seed, .secs = secs, .nprocs = nprocs,
			.nthreads = nthreads, .verbose = verbose,
			.module_ko = module_ko, .exclude = exclude,
			.no_event_files = no_event_files,
		};

		printf("# ue_race: seed %llu (replay: RACE_SEED=%llu), %ds, ",
		       seed, seed, secs);
		printf("mode %s%s%s, %d procs x %d threads%s\n", mode,
		       exclude ? " without " : "", exclude ?: "", nprocs, nthreads,
		       no_event_files ? ", no per-event tracefs files (-F)" : "");
		if (!strcmp(mode, "relayout"))
			return am_relayout(&o);
		if (!strcmp(mode, "held"))
			return am_held(&o);
		print_usage();
	}
	printf("# ue_race: seed %llu (replay: RACE_SEED=%llu), %ds, ",
	       seed, seed, secs);
	printf("%d procs x %d threads, %d names%s%s\n", nprocs, nthreads, nnames,
	       module_ko && !no_modder ? ", rmmod/insmod loop" : "",
	       no_event_files ? ", no per-event tracefs files (-F)" : "");

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	for (i = 0; i < NR_OPS; i++) {
		int l;

		for (l = LANE_ALL; l < NR_LANES; l++)
			if (in_lane(i, l))
				lane_weight[l] += op_weight[i];
	}
	end_ms = ue_now_ms() + secs * 1000L;

	for (i = 0; i < nprocs + (module_ko && !no_modder ? 1 : 0); i++) {
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0) {
			if (i == nprocs)
				modder_process();
			worker_process(i, 0);
		}
		pids[nchildren++] = pid;
	}

	/*
	 * Workers stop at end_ms; a worker still there 60 s later is hung. A
	 * worker that ended for the unload (RESPAWN) is replaced at once.
	 */
	deadline = end_ms + 60000;
	alive = nchildren;
	while (alive && ue_now_ms() < deadline) {
		for (i = 0; i < nchildren; i++) {
			pid_t r;

			if (!pids[i])
				continue;
			r = waitpid(pids[i], &st, WNOHANG);
			if (r == 0)
				continue;
			if (r == pids[i] && i < nprocs && WIFEXITED(st) &&
			    WEXITSTATUS(st) == RESPAWN) {
				pid_t pid = ue_now_ms() < end_ms ? fork() : -1;

				if (pid == 0)
					worker_process(i, respawns + 1);
				if (pid > 0) {
					pids[i] = pid;
					respawns++;
					continue;
				}
				st = 0;
			}
			if (r < 0)
				am_tap(false, "process %d: waitpid: %s", i, strerror(errno));
			else if (WIFSIGNALED(st))
				am_tap(false, "process %d killed by signal %d", i, WTERMSIG(st));
			else if (WEXITSTATUS(st))
				am_tap(false, "process %d exited with status %d", i, WEXITSTATUS(st));
			pids[i] = 0;
			alive--;
		}
		usleep(20000);
	}
	for (i = 0; i < nchildren; i++) {
		if (!pids[i])
			continue;
		am_tap(false, "process %d still running 60 s after the end", i);
		kill(pids[i], SIGKILL);
		waitpid(pids[i], &st, 0);
	}
	printf("# %d worker processes forked again for the unload\n", respawns);
	am_tap(nchildren == nprocs + (module_ko && !no_modder ? 1 : 0),
	    "%d processes ran to the end",
	    nchildren);

	{
		long total = 0;

		for (i = 0; i < NR_OPS; i++) {
			long n = atomic_load(&sh->ops[i]);

			total += n;
			if (n)
				print_counts(i, n);
		}
		printf("# ue_race: %ld operations in %ds, seed %llu\n", total, secs, seed);
	}
	for (i = 0; i < atomic_load(&sh->bad) && i < 8; i++)
		printf("#   %s\n", sh->bad_msg[i]);
	am_tap(!atomic_load(&sh->bad), "every result one the operation allows (%d not)",
	    atomic_load(&sh->bad));

	cleanup_and_check();
	return am_tap_summary();
}
