// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: the open that read the module's file
 * operations just before prepare_unload removed its files.
 *
 * do_dentry_open() loads inode->i_fop, then takes a reference on
 * i_fop->owner with try_module_get(). Nothing orders these two steps
 * against prepare_unload: an open that loaded the module's fops just
 * before the file was removed may call try_module_get() after
 * prepare_unload dropped the files' module reference and rmmod marked the
 * module going (do_dentry_open() WARNs) or freed it (the open reads freed
 * module memory). An interrupt or a preemption at that point is enough;
 * here a kprobe BPF program on try_module_get() holds the opening thread
 * for a few milliseconds in that window, as a long interrupt would. Such
 * an open holds the file's dentry, which keeps the module (first version
 * of prepare_unload, 38ef145: a WARN at the first unload).
 *
 *  open_in_window_racing_unload  the opener as root
 *  open_in_window_unprivileged   the opener as uid 1000, granted the data
 *                                file (data_gid=1000 data_mode=0660)
 *
 * Every open must give a file descriptor or ENOENT (removed), or for the
 * unprivileged opener EACCES while a new file's group is being set; a
 * WARN or oops makes the guest runner fail. The window must have been
 * reached: the BPF program itself counts the opens during which an
 * unload began while they were held in try_module_get() (the unloader's
 * generation counter, read from the opener's memory before and after the
 * delay, moved past an unload's start). At least one such open, and some
 * unloads.
 * Needs UE_MODULE, as the guest runner of `make check` sets it. Leaves the
 * module loaded with default parameters.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>
#include <linux/bpf.h>

#include "ue_test.h"
#include "ue_bpf.h"

#define RACE_MS		4000
#define RACE_MAX_MS	60000
#define MIN_TRIES	6
#define TEST_UID	1000
#define TEST_GID	1000
/* Kernel stack walks (bpf_get_stack) in the delay: milliseconds under TCG */
#define DELAY_LOOPS	1500

/* More than tests/selftests/ue_bpf.h has */
#define MOV32_REG(d, s)		INSN(BPF_ALU | BPF_MOV | BPF_X, d, s, 0, 0)
#define JNE_IMM(d, i, o)	INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JLE_REG(d, s, o)	INSN(BPF_JMP | BPF_JLE | BPF_X, d, s, o, 0)
#define RSH64_IMM(d, i)		INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o)		INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ST_W_IMM(d, o, i)	INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
/* lock *(u64 *)(d + o) += s (BPF_XADD before Linux 5.12) */
#define ADD_ATOMIC_DW(d, s, o)	INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
/* d = 64-bit v (src 0), or the map of fd v (src 1): two instructions */
#define LD_IMM64_LO(d, src, v)	INSN(BPF_LD | BPF_DW | BPF_IMM, d, src, 0, (__u32)(v))
#define LD_IMM64_HI(v)		INSN(0, 0, 0, 0, (__u64)(v) >> 32)
/* r<d> = *(u64 *)addr, a user address, through the stack: 7 instructions */
#define READ_USER_U64(d, addr)						\
	MOV64_REG(1, 10), ADD64_IMM(1, -8), MOV64_IMM(2, 8),		\
	LD_IMM64_LO(3, 0, (uintptr_t)(addr)),				\
	LD_IMM64_HI((uintptr_t)(addr)),					\
	CALL(BPF_FUNC_probe_read_user), LDX_DW(d, 10, -8)

static char verifier_log[1 << 16];

/* A one-slot BPF array of a u64 (the count of held opens): fd or -errno */
static int count_map_create(void)
{
	int fd = ue_bpf_map1(sizeof(__u64));

	return fd < 0 ? -errno : fd;
}

/* Its count, or -1 */
static long long count_map_read(int map)
{
	__u64 val = 0;

	if (ue_bpf_map1_read(map, &val))
		return -1;

	return val;
}

/*
 * A kprobe program that walks the kernel stack DELAY_LOOPS times when the
 * thread @tid hits it, and does nothing for everyone else. It reads the
 * unloader's generation counter at @gen (the opener's own memory) before
 * and after the delay, and counts in @map's slot the hits during which an
 * unload began: (gen + 1) / 2 unloads had begun at generation gen (odd
 * while one is under way). fd or -errno.
 */
static int delay_prog_load(pid_t tid, const long *gen, int map)
{
	const struct bpf_insn insns[] = {
		MOV64_REG(7, 1),			/* ctx */
		CALL(BPF_FUNC_get_current_pid_tgid),
		MOV32_REG(0, 0),			/* the thread id */
		JNE_IMM(0, tid, 37),			/* to the end */
		READ_USER_U64(8, gen),
		/* The delay */
		MOV64_IMM(6, DELAY_LOOPS),
		MOV64_REG(1, 7),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -512),
		MOV64_IMM(3, 512),
		MOV64_IMM(4, 0),
		CALL(BPF_FUNC_get_stack),
		ADD64_IMM(6, -1),
		JNE_IMM(6, 0, -8),
		READ_USER_U64(9, gen),
		/* An unload began meanwhile: count it */
		ADD64_IMM(8, 1),
		RSH64_IMM(8, 1),
		ADD64_IMM(9, 1),
		RSH64_IMM(9, 1),
		JLE_REG(9, 8, 9),			/* to the end */
		ST_W_IMM(10, -4, 0),
		MOV64_REG(2, 10),
		ADD64_IMM(2, -4),
		LD_IMM64_LO(1, BPF_PSEUDO_MAP_FD, map),
		LD_IMM64_HI(0),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(0, 0, 2),			/* to the end */
		MOV64_IMM(1, 1),
		ADD_ATOMIC_DW(0, 1, 0),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (__u64)(uintptr_t)insns;
	attr.insn_cnt = ARRAY_SIZE(insns);
	attr.license = (__u64)(uintptr_t)"GPL";

	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		fd = -errno;
		/* Again, for the verifier's log */
		attr.log_buf = (__u64)(uintptr_t)verifier_log;
		attr.log_size = sizeof(verifier_log);
		attr.log_level = 1;
		sys_bpf(BPF_PROG_LOAD, &attr);
		fprintf(stderr, "# BPF_PROG_LOAD: %s\n%.4000s\n", strerror(-fd),
			verifier_log);
	}

	return fd;
}

/* A perf kprobe on @func running @prog: fd or -errno */
static int kprobe_attach(const char *func, int prog)
{
	int fd = ue_kprobe_open(func, -1, 0, 1);

	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		int err = -errno;

		close(fd);
		return err;
	}

	return fd;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);

	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

struct opener {
	pid_t tid;
	uid_t uid;
	int go;			/* 1: start, 2: stop */
	/*
	 * Odd while an unload is under way: incremented before
	 * prepare_unload and once the module or its files are back
	 */
	long gen;
	long opened, absent, slow;
	int bad_err;
};

static void *open_fn(void *arg)
{
	struct opener *o = arg;
	long t;
	int fd;

	/* Only this thread drops its privileges (raw syscalls: per thread) */
	if (o->uid && (syscall(SYS_setresgid, TEST_GID, TEST_GID, TEST_GID) ||
		       syscall(SYS_setresuid, o->uid, o->uid, o->uid))) {
		o->bad_err = errno;
		__atomic_store_n(&o->tid, -1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	__atomic_store_n(&o->tid, gettid(), __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&o->go, __ATOMIC_SEQ_CST))
		usleep(1000);

	while (__atomic_load_n(&o->go, __ATOMIC_SEQ_CST) == 1) {
		t = now_ms();
		fd = open(UE_TRACEFS "/user_events_data", O_RDWR | O_CLOEXEC);
		if (now_ms() - t >= 2)
			o->slow++;
		if (fd >= 0) {
			o->opened++;
			close(fd);
		} else if (errno == ENOENT ||
			   (errno == EACCES && o->uid)) {
			/*
			 * EACCES: a file just made (insmod, prepare_unload
			 * 0) is root's until its group is set, right after
			 */
			o->absent++;
		} else if (!o->bad_err) {
			o->bad_err = errno;
		}
	}

	return NULL;
}

/*
 * The opener loops on open(user_events_data), held in try_module_get()
 * for a few milliseconds each time; meanwhile this thread unloads the
 * module (prepare_unload, delete_module) and loads it again, or restores
 * the files when the unload is refused.
 */
static void open_in_window(struct __test_metadata *_metadata, uid_t uid,
			   const char *params)
{
	struct opener o = { .uid = uid };
	long end, last, tries = 0, unloads = 0;
	int prog, kp, ret, bad = 0, map;
	long long held;
	pthread_t th;

	ASSERT_EQ(0, ue_mod_reload(params));
	if (uid)
		ASSERT_EQ(0, chmod(UE_TRACEFS, 0755));

	ASSERT_EQ(0, pthread_create(&th, NULL, open_fn, &o));
	while (!__atomic_load_n(&o.tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	ASSERT_LT(0, o.tid) {
		TH_LOG("setresuid: %s", strerror(o.bad_err));
	}

	map = count_map_create();
	ASSERT_LE(0, map);
	prog = delay_prog_load(o.tid, &o.gen, map);
	ASSERT_LE(0, prog);
	kp = kprobe_attach("try_module_get", prog);
	ASSERT_LE(0, kp) {
		TH_LOG("kprobe on try_module_get: %s", strerror(-kp));
	}

	__atomic_store_n(&o.go, 1, __ATOMIC_SEQ_CST);
	end = now_ms() + RACE_MS;
	last = now_ms() + RACE_MAX_MS;
	/*
	 * At least RACE_MS and MIN_TRIES; then on until the window was
	 * reached and an unload ran, for at most RACE_MAX_MS: most unloads
	 * are refused (the opener holds the module), and a slow guest saw
	 * none in RACE_MS once
	 */
	while (!bad && now_ms() < last &&
	       (now_ms() < end || tries < MIN_TRIES || !unloads ||
		count_map_read(map) <= 0)) {
		usleep(500);
		__atomic_add_fetch(&o.gen, 1, __ATOMIC_SEQ_CST);
		ret = ue_mod_prepare_unload(true);
		if (ret) {
			bad = ret;
			break;
		}
		tries++;
		if (!syscall(SYS_delete_module, ue_mod_name(), O_NONBLOCK)) {
			unloads++;
			bad = ue_mod_insmod(params);
		} else if (errno == EWOULDBLOCK) {
			bad = ue_mod_prepare_unload(false);
		} else {
			bad = -errno;
		}
		__atomic_add_fetch(&o.gen, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&o.go, 2, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	close(kp);
	close(prog);
	held = count_map_read(map);
	close(map);

	printf("# %ld unload tries, %ld unloads; opens %ld, absent %ld, ",
	       tries, unloads, o.opened, o.absent);
	printf("held in try_module_get %ld, %lld of them while an unload began\n",
	       o.slow, held);
	ASSERT_EQ(0, bad);
	ASSERT_EQ(0, o.bad_err) {
		TH_LOG("open: %s", strerror(o.bad_err));
	}
	/*
	 * The window was reached: opens were held, an unload began while
	 * one was held in try_module_get(), and some unloads ran
	 */
	ASSERT_LT(0, o.slow);
	ASSERT_LT(0, held) {
		TH_LOG("no unload began while an open was held in try_module_get()");
	}
	ASSERT_LT(0, unloads);
}

FIXTURE(window) {
	mode_t tracefs_mode;
};

FIXTURE_SETUP(window)
{
	struct stat st;

	if (!ue_mod_loaded())
		ASSERT_EQ(0, ue_mod_insmod(""));
	ASSERT_EQ(0, stat(UE_TRACEFS, &st));
	self->tracefs_mode = st.st_mode & 07777;
}

FIXTURE_TEARDOWN(window)
{
	chmod(UE_TRACEFS, self->tracefs_mode);
	EXPECT_EQ(0, ue_mod_reload(""));
}

TEST_F_TIMEOUT(window, open_in_window_racing_unload, 120)
{
	open_in_window(_metadata, 0, "");
}

TEST_F_TIMEOUT(window, open_in_window_unprivileged, 120)
{
	open_in_window(_metadata, TEST_UID,
		       "data_gid=1000 data_mode=0660 status_gid=1000 status_mode=0640");
}

TEST_HARNESS_MAIN
