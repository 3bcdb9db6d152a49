// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: the one-copy write path. With one ftrace
 * event file as the only consumer, the payload is copied from the
 * writer's iovecs straight into the reserved record and checked there;
 * a record that fails the checks, or whose copy faults, is discarded.
 * These tests check that such a write fails with the errno of the staged
 * path and leaves nothing in the trace, with and without a filter (the
 * record is then the tracing core's per-CPU staging record), and that
 * soft disable, pid filtering and a writer rewriting its buffer while it
 * is copied behave.
 *
 * That these writes take the one-copy path is checked, not assumed
 * (one_copy_path_taken, racing_rewrite_never_records_bad_loc, and
 * perf_one_copy_path_taken for perf as the only consumer), with a
 * per-task kprobe counter on the module's user_event_deliver_staged(),
 * which every write of the staged path calls once its copy is made, and
 * the one-copy path never. (user_event_record_direct() is inlined, so it
 * cannot be probed; and kprobe events refuse the tracing core's own
 * functions, such as trace_event_buffer_reserve(), built without ftrace.)
 * Where the module runs without the one-copy path (one_copy=N: kernels
 * whose kallsyms lists no variables, Documentation/compat.rst), the same
 * tests require every write to be staged instead.
 *
 * Every event created here is named "ue_d_*" and is deleted again by
 * the fixture teardown.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>

#include "ue_test.h"

#define PREFIX "ue_d_"
#define MAX_LINES 16

/* u32 a at 0, __data_loc char[] s at 4, the string from 8 */
#define LOC_DESC "u32 a; __data_loc char[] s"

FIXTURE(direct) {
	int fd;
	char lines[MAX_LINES][UE_LINE_MAX];
	char trigger_path[512];
	bool pid_filter;
};

FIXTURE_SETUP(direct)
{
	self->trigger_path[0] = '\0';
	self->pid_filter = false;
	self->fd = ue_open_data();
	ASSERT_LE(0, self->fd) {
		TH_LOG("open %s: %s (is user_events.ko loaded?)",
		       UE_DATA_FILE, strerror(errno));
	}
	ASSERT_EQ(0, ue_trace_clear());
	ASSERT_LT(0, ue_hdr_size());
}

FIXTURE_TEARDOWN(direct)
{
	if (self->trigger_path[0])
		ue_write_file(self->trigger_path,
			      "!enable_event:user_events:" PREFIX "sd\n", false);
	if (self->pid_filter)
		ue_write_file(UE_TRACEFS "/set_event_pid", "\n", true);
	ue_close_fd(self->fd);
	/* releases_under_flag_churn, if it stopped midway */
	ue_write_file(UE_TRACEFS "/instances/ue_d_churn/events/user_events/"
		      PREFIX "churn/enable", "0\n", false);
	rmdir(UE_TRACEFS "/instances/ue_d_churn");
	EXPECT_EQ(0, ue_delete_prefix(PREFIX));
}

#define STAGED_FN "user_event_deliver_staged"

/* A counting kprobe on @func, for the calling thread only: fd, or -errno */
static int kprobe_counter_open(const char *func)
{
	return ue_kprobe_open(func, 0, -1, 0);
}

/*
 * Does the module use the one-copy path (parameter one_copy)? It does not
 * where the tracing core's staging record is not in kallsyms (Debian's
 * arm64 6.1 and 5.10: Documentation/compat.rst): every write is staged.
 */
static bool one_copy_on(void)
{
	char path[256], val[8] = "";

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/one_copy",
		 ue_mod_name());
	return ue_read_file(path, val, sizeof(val)) > 0 && val[0] == 'Y';
}

/* Its count so far, or -1 */
static long long kprobe_count(int fd)
{
	__u64 n;

	return read(fd, &n, sizeof(n)) == sizeof(n) ? (long long)n : -1;
}

static int ev_write(const char *name, const char *file, const char *str)
{
	char path[512];

	return ue_write_file(ue_event_path(path, sizeof(path), name, file),
			     str, false);
}

/*
 * A record of LOC_DESC in buf (index first): the string str of slen bytes
 * (the NUL only if counted in slen) and the location word loc. Returns
 * the length to write.
 */
static int loc_rec(unsigned char *buf, int w, __u32 a, __u32 loc,
		   const char *str, int slen)
{
	memcpy(buf, &w, 4);
	memcpy(buf + 4, &a, 4);
	memcpy(buf + 8, &loc, 4);
	memcpy(buf + 12, str, slen);
	return 12 + slen;
}

static __u32 good_loc(int slen)
{
	return DYN_LOC(ue_hdr_size() + 8, slen);
}

/* A good record: a, then the 5-character string s at good_loc(6), on fd */
static void write_good(struct __test_metadata *_metadata, int fd, int w,
		       __u32 a, const char *s)
{
	unsigned char buf[64];
	int len = loc_rec(buf, w, a, good_loc(6), s, 6);

	ASSERT_EQ(len, write(fd, buf, len));
}

/* Writes that fail the checks, with write() and writev() */
/*
 * writev() of the index (in the last 8 bytes before the PROT_NONE page at
 * map + page) and a payload segment that crosses into that page: the errno.
 */
static int writev_into_prot_none(int fd, int w, unsigned char *map, long page)
{
	struct iovec io[2] = {
		{ map + page - 8, 4 },
		{ map + page - 4, 8 },
	};

	memcpy(map + page - 8, &w, 4);
	errno = 0;
	return writev(fd, io, 2) == -1 ? errno : 0;
}

static void bad_writes(struct __test_metadata *_metadata, int fd, int w)
{
	int hdr = ue_hdr_size();
	unsigned char buf[64];
	struct iovec io[3];
	int len;

	/* Past the end of the payload */
	len = loc_rec(buf, w, 1, DYN_LOC(hdr + 8, 7), "hello", 6);
	errno = 0;
	ASSERT_EQ(-1, write(fd, buf, len));
	ASSERT_EQ(EFAULT, errno);
	io[0] = (struct iovec){ buf, 4 };
	io[1] = (struct iovec){ buf + 4, 8 };
	io[2] = (struct iovec){ buf + 12, len - 12 };
	errno = 0;
	ASSERT_EQ(-1, writev(fd, io, 3));
	ASSERT_EQ(EFAULT, errno);

	/* Before the payload (into the header) */
	len = loc_rec(buf, w, 1, DYN_LOC(hdr - 2, 6), "hello", 6);
	errno = 0;
	ASSERT_EQ(-1, write(fd, buf, len));
	ASSERT_EQ(EFAULT, errno);

	/* No NUL at the end of the string */
	len = loc_rec(buf, w, 1, good_loc(5), "hello", 5);
	errno = 0;
	ASSERT_EQ(-1, write(fd, buf, len));
	ASSERT_EQ(EFAULT, errno);

	/* Empty string: not even the NUL */
	len = loc_rec(buf, w, 1, good_loc(0), "", 0);
	errno = 0;
	ASSERT_EQ(-1, write(fd, buf, len));
	ASSERT_EQ(EFAULT, errno);
}

/*
 * The bad writes, then a record with a = 2 and one with a = 1 ("match"),
 * both good: under the filter "a == 1" only the last is recorded.
 */
static void filtered_writes(struct __test_metadata *_metadata, int fd, int w)
{
	bad_writes(_metadata, fd, w);
	write_good(_metadata, fd, w, 2, "other");
	write_good(_metadata, fd, w, 1, "match");
}

TEST_F(direct, bad_loc_nothing_recorded)
{
	const char *name = PREFIX "loc";
	int w;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "loc " LOC_DESC, name);

	bad_writes(_metadata, self->fd, w);
	ASSERT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));

	write_good(_metadata, self->fd, w, 3, "hello");
	UE_ASSERT_TRACE_LINES(name, self->lines, "a=3 s=hello");
}

/*
 * The one-copy path runs: with one ftrace event file as the only consumer,
 * neither bad_writes()' five refused writes nor a good one go through the
 * staged path, with and without a filter. The control: with a perf event
 * on it too (two consumers), each of them does. A regression of the
 * one-copy path to the staged path fails the first count.
 */
TEST_F(direct, one_copy_path_taken)
{
	const char *name = PREFIX "one";
	unsigned char buf[64];
	long long n0, per_pass = one_copy_on() ? 0 : 6;
	int w, len, cnt, perf, pass;

	TH_LOG("one_copy=%s: %lld of 6 writes staged per pass", per_pass ? "N" : "Y",
	       per_pass);
	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "one " LOC_DESC, name);
	cnt = kprobe_counter_open(STAGED_FN);
	ASSERT_LE(0, cnt) {
		TH_LOG("kprobe on " STAGED_FN ": %s", strerror(-cnt));
	}
	len = loc_rec(buf, w, 1, good_loc(6), "hello", 6);

	n0 = kprobe_count(cnt);
	ASSERT_LE(0, n0);
	for (pass = 0; pass < 2; pass++) {
		if (pass)
			ASSERT_EQ(0, ev_write(name, "filter", "a == 1\n"));
		bad_writes(_metadata, self->fd, w);
		ASSERT_EQ(len, write(self->fd, buf, len));
		ASSERT_EQ(n0 + per_pass * (pass + 1), kprobe_count(cnt)) {
			TH_LOG("%lld of 6 writes staged (filter %s), want %lld",
			       kprobe_count(cnt) - n0 - per_pass * pass,
			       pass ? "a == 1" : "none", per_pass);
		}
	}
	n0 += 2 * per_pass;
	ASSERT_EQ(0, ev_write(name, "filter", "0\n"));
	ASSERT_EQ(2, ue_trace_lines(name, self->lines, MAX_LINES));

	/* Control: a second consumer, the staged path; the probe counts */
	perf = ue_perf_open(name);
	ASSERT_LE(0, perf);
	bad_writes(_metadata, self->fd, w);
	ASSERT_EQ(len, write(self->fd, buf, len));
	ASSERT_EQ(n0 + 6, kprobe_count(cnt));
	ASSERT_EQ(3, ue_trace_lines(name, self->lines, MAX_LINES));
	close(perf);
	close(cnt);
}

/*
 * Perf as the only consumer: the payload is copied into the perf buffer
 * and checked there (user_event_perf_direct()), not staged: neither
 * bad_writes()' five refused writes nor a good one reach the staged path,
 * and perf counts the good one only. The control: with the event enabled
 * in ftrace too (two consumers), each of them is staged. This path needs
 * no help from kallsyms, so it runs whatever one_copy says.
 */
TEST_F(direct, perf_one_copy_path_taken)
{
	const char *name = PREFIX "perf";
	unsigned char buf[64];
	int w = -1, len, cnt, perf;
	long long n0;

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "perf " LOC_DESC, NULL, &w));
	cnt = kprobe_counter_open(STAGED_FN);
	ASSERT_LE(0, cnt) {
		TH_LOG("kprobe on " STAGED_FN ": %s", strerror(-cnt));
	}
	perf = ue_perf_open(name);
	ASSERT_LE(0, perf);
	len = loc_rec(buf, w, 1, good_loc(6), "hello", 6);

	n0 = kprobe_count(cnt);
	ASSERT_LE(0, n0);
	bad_writes(_metadata, self->fd, w);
	ASSERT_EQ(len, write(self->fd, buf, len));
	ASSERT_EQ(n0, kprobe_count(cnt)) {
		TH_LOG("%lld of 6 writes staged with perf alone, want 0",
		       kprobe_count(cnt) - n0);
	}
	ASSERT_EQ(1, kprobe_count(perf));

	/* Control: ftrace as well, the staged path; the probe counts */
	ASSERT_EQ(0, ue_enable(name, true));
	bad_writes(_metadata, self->fd, w);
	ASSERT_EQ(len, write(self->fd, buf, len));
	ASSERT_EQ(n0 + 6, kprobe_count(cnt));
	ASSERT_EQ(2, kprobe_count(perf));
	ASSERT_EQ(1, ue_trace_lines(name, self->lines, MAX_LINES));
	close(perf);
	close(cnt);
}

/*
 * With a filter, the record is the tracing core's per-CPU staging record:
 * a failed check must release it (a later write would find it taken, and
 * the filter would stop working), and a rejected record leaves nothing.
 */
TEST_F(direct, filter_rejects_and_bad_loc)
{
	const char *name = PREFIX "flt";
	int w, i;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "flt " LOC_DESC, name);
	ASSERT_EQ(0, ev_write(name, "filter", "a == 1\n"));

	for (i = 0; i < 3; i++)
		filtered_writes(_metadata, self->fd, w);

	ASSERT_EQ(3, ue_trace_lines(name, self->lines, MAX_LINES));
	for (i = 0; i < 3; i++)
		ASSERT_STREQ("a=1 s=match", self->lines[i]);

	ASSERT_EQ(0, ev_write(name, "filter", "0\n"));
}

/*
 * A payload whose end is not readable: part of it is copied into the
 * record before the fault. EFAULT, and neither the partial record nor
 * anything else reaches the trace; with and without a filter.
 */
TEST_F(direct, payload_faults_midway)
{
	const char *name = PREFIX "fault";
	long page = sysconf(_SC_PAGESIZE);
	unsigned char good[64];
	struct iovec io[3];
	unsigned char *map;
	int w, len, pass;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "fault " LOC_DESC, name);

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_NONE));

	for (pass = 0; pass < 2; pass++) {
		if (pass)
			ASSERT_EQ(0, ev_write(name, "filter", "a < 100\n"));

		/* write(): 12 bytes readable, the string's last 4 are not */
		len = loc_rec(map + page - 12, w, 1, good_loc(8), "", 0);
		errno = 0;
		ASSERT_EQ(-1, write(self->fd, map + page - 12, len + 8));
		ASSERT_EQ(EFAULT, errno);

		/* writev(): the second segment crosses into PROT_NONE */
		ASSERT_EQ(EFAULT, writev_into_prot_none(self->fd, w, map, page));

		/* writev(): a later segment wholly unreadable */
		len = loc_rec(good, w, 1, good_loc(6), "hello", 6);
		io[0] = (struct iovec){ good, 12 };
		io[1] = (struct iovec){ map + page, 6 };
		errno = 0;
		ASSERT_EQ(-1, writev(self->fd, io, 2));
		ASSERT_EQ(EFAULT, errno);
	}

	ASSERT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));
	ASSERT_EQ(len, write(self->fd, good, len));
	UE_ASSERT_TRACE_LINES(name, self->lines, "a=1 s=hello");

	ASSERT_EQ(0, ev_write(name, "filter", "0\n"));
	munmap(map, 2 * page);
}

/*
 * Soft disable (an enable_event trigger on another event attaches the
 * file in soft mode): writes succeed and record nothing, bad ones still
 * fail with EFAULT; once the trigger fires, writes record again.
 */
TEST_F(direct, soft_disabled_then_enabled_by_trigger)
{
	const char *sd = PREFIX "sd", *src = PREFIX "src";
	int w = -1, ws;
	__u32 one = 1;
	struct iovec io[2];

	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "sd " LOC_DESC, NULL, &w));
	ASSERT_LE(0, w);
	ws = ue_reg_enabled_ok(_metadata, self->fd, PREFIX "src u32 a", src);

	ue_event_path(self->trigger_path, sizeof(self->trigger_path), src,
		      "trigger");
	ASSERT_EQ(0, ue_write_file(self->trigger_path,
				   "enable_event:user_events:" PREFIX "sd\n",
				   false));

	write_good(_metadata, self->fd, w, 5, "quiet");
	bad_writes(_metadata, self->fd, w);
	ASSERT_EQ(0, ue_trace_lines(sd, self->lines, MAX_LINES));

	/* The trigger fires and enables ue_d_sd for real */
	io[0] = (struct iovec){ &ws, 4 };
	io[1] = (struct iovec){ &one, 4 };
	ASSERT_EQ(8, writev(self->fd, io, 2));

	write_good(_metadata, self->fd, w, 6, "heard");
	UE_ASSERT_TRACE_LINES(sd, self->lines, "a=6 s=heard");
}

/* set_event_pid: only the listed pids record */
TEST_F(direct, pid_filter)
{
	const char *name = PREFIX "pid";
	char pid[32];
	int w;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "pid " LOC_DESC, name);

	self->pid_filter = true;
	/* pid 1 (init) only: our writes are not recorded */
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/set_event_pid", "1\n", true));
	write_good(_metadata, self->fd, w, 7, "other");
	bad_writes(_metadata, self->fd, w);
	ASSERT_EQ(0, ue_trace_lines(name, self->lines, MAX_LINES));

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/set_event_pid", pid, true));
	write_good(_metadata, self->fd, w, 8, "mine!");
	UE_ASSERT_TRACE_LINES(name, self->lines, "a=8 s=mine!");
}

/*
 * Another thread rewrites the location word and the string between a
 * valid and an invalid form while the payload is written: the checks run
 * on the copy in the record, so each write either fails with EFAULT or
 * records a valid one; no invalid location reaches the ring buffer. The
 * window must have been reached: some writes must have been refused (up
 * to RACE_ROUNDS rounds of at most 3 s until one is), and none of them may
 * have taken the staged path (which checks a copy of its own, not the
 * record).
 */
#define RACE_ROUNDS	5

struct flipper {
	unsigned char *buf;
	__u32 good, bad;
	volatile int stop;
};

static void *flip(void *arg)
{
	struct flipper *f = arg;
	__u32 *loc = (__u32 *)(f->buf + 8);

	volatile unsigned char *s = f->buf + 12;
	volatile int j;

	/*
	 * Spins between the states: under TCG, vCPUs switch and interrupts
	 * come only between translation blocks, that is at branches.
	 */
	while (!f->stop) {
		__atomic_store_n(loc, f->bad, __ATOMIC_RELAXED);
		for (j = 0; j < 20; j++)
			;
		__atomic_store_n(loc, f->good, __ATOMIC_RELAXED);
		s[5] = 'X';
		for (j = 0; j < 20; j++)
			;
		s[5] = '\0';
		for (j = 0; j < 20; j++)
			;
	}
	return NULL;
}

TEST_F(direct, racing_rewrite_never_records_bad_loc)
{
	const char *name = PREFIX "race";
	static char lines[4096][UE_LINE_MAX];
	unsigned char buf[64] __attribute__((aligned(8)));
	struct flipper f = { .buf = buf };
	long ok = 0, efault = 0, i, round;
	long long n0, staged;
	bool one_copy = one_copy_on();
	time_t end;
	pthread_t t;
	int w, len, n, cnt;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "race " LOC_DESC, name);
	f.good = good_loc(6);
	f.bad = DYN_LOC(ue_hdr_size() + 8, 4000);
	len = loc_rec(buf, w, 9, f.good, "valid", 6);
	cnt = kprobe_counter_open(STAGED_FN);
	ASSERT_LE(0, cnt) {
		TH_LOG("kprobe on " STAGED_FN ": %s", strerror(-cnt));
	}

	ASSERT_EQ(0, pthread_create(&t, NULL, flip, &f));
	for (round = 0; round < RACE_ROUNDS && !efault; round++) {
		ASSERT_EQ(0, ue_trace_clear());
		ok = 0;
		n0 = kprobe_count(cnt);
		/*
		 * Until both outcomes were seen (on one CPU, the threads take
		 * turns by time slices) and 1000 records, at most 4000
		 * records (the ring buffer keeps them all) and at most 3 s.
		 */
		end = time(NULL) + 3;
		for (i = 0; (ok < 1000 || !efault) && ok < 4000 &&
		     time(NULL) < end; i++) {
			ssize_t n = write(self->fd, buf, len);

			if (n == len) {
				ok++;
			} else {
				ASSERT_EQ(-1, n);
				ASSERT_EQ(EFAULT, errno);
				efault++;
			}
		}
		staged = kprobe_count(cnt) - n0;
		TH_LOG("round %ld: %ld recorded, %ld refused, %lld staged",
		       round + 1, ok, efault, staged);

		n = ue_trace_lines(name, lines, 4096);
		ASSERT_EQ(ok, n);
		for (i = 0; i < n && i < 4096; i++)
			ASSERT_STREQ("a=9 s=valid", lines[i]);
		/* Every write staged where the one-copy path is off */
		ASSERT_EQ(one_copy ? 0 : ok + efault, staged);
	}
	f.stop = 1;
	pthread_join(t, NULL);
	close(cnt);
	ASSERT_LT(0, efault) {
		TH_LOG("no write was refused in %d rounds: the rewrite never hit a copy",
		       RACE_ROUNDS);
	}
}

/*
 * Every way the one-copy path releases a reservation, while another
 * thread changes what the reservation is: the filter (the core's per-CPU
 * staging record or a ring buffer entry), tracing_on (writes refused by
 * the ring buffer), the enable (the staged path) and a conditional
 * trigger (the staged path, or the core's temp buffer when tracing is
 * off) and the event enabled in a second instance too (the staged
 * path). Each write is a bad location (released after the checks), a
 * payload that faults midway (released after the copy, retried, EFAULT)
 * or one in a page that is not mapped yet (released, faulted in, then
 * recorded). A release that leaves preemption unbalanced shows as
 * "scheduling while atomic" at the writer's next sleep; afterwards the
 * filter must still record exactly the matching records.
 */
#define CHURN_INST UE_TRACEFS "/instances/ue_d_churn"

struct churner {
	const char *name;
	char inst_enable[512];
	int stop;
	long rounds;
};

static void *churn(void *arg)
{
	struct churner *c = arg;
	static const char * const filters[] = { "a == 1\n", "0\n" };
	struct timespec ts = { 0, 200000 };
	long i;

	for (i = 0; !__atomic_load_n(&c->stop, __ATOMIC_RELAXED); i++) {
		ev_write(c->name, "filter", filters[i & 1]);
		if (i % 3 == 0)
			ue_write_file(UE_TRACEFS "/tracing_on",
				      i & 2 ? "1\n" : "0\n", false);
		if (i % 5 == 0)
			ev_write(c->name, "trigger", i & 8 ?
				 "!traceoff if a == 7\n" :
				 "traceoff if a == 7\n");
		/* A second instance: two consumers, the staged path */
		if (i % 7 == 0)
			ue_write_file(c->inst_enable, i & 16 ? "0\n" : "1\n",
				      false);
		nanosleep(&ts, NULL);
	}
	c->rounds = i;
	return NULL;
}

TEST_F(direct, releases_under_flag_churn)
{
	const char *name = PREFIX "churn";
	long page = sysconf(_SC_PAGESIZE);
	struct churner c = { .name = name };
	struct timespec ts = { 0, 50000 };
	unsigned char buf[64], *map, *lazy;
	long writes = 0, i;
	pthread_t t;
	int w, len, mfd;
	time_t end;

	w = ue_reg_enabled_ok(_metadata, self->fd,
			      PREFIX "churn " LOC_DESC, name);
	if (mkdir(CHURN_INST, 0755) && errno != EEXIST)
		ASSERT_EQ(0, -errno);
	snprintf(c.inst_enable, sizeof(c.inst_enable),
		 CHURN_INST "/events/user_events/%s/enable", name);

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_NONE));
	/* Shared memfd pages keep their data when unmapped by DONTNEED */
	mfd = memfd_create("ue_churn", MFD_CLOEXEC);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, page));
	lazy = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, lazy);

	ASSERT_EQ(0, pthread_create(&t, NULL, churn, &c));
	end = time(NULL) + 4;
	for (i = 0; time(NULL) < end; i++) {
		/* Bad location: released after the checks */
		len = loc_rec(buf, w, 1, DYN_LOC(ue_hdr_size() + 8, 7),
			      "hello", 6);
		errno = 0;
		ASSERT_EQ(-1, write(self->fd, buf, len));
		ASSERT_EQ(EFAULT, errno);

		/* Faults midway: released after the copy, twice */
		ASSERT_EQ(EFAULT, writev_into_prot_none(self->fd, w, map, page));

		/* Not mapped yet: released, faulted in, recorded */
		len = loc_rec(lazy, w, 1 + (i & 1), good_loc(6), "lazy!", 6);
		ASSERT_EQ(0, madvise(lazy, page, MADV_DONTNEED));
		ASSERT_EQ(len, write(self->fd, lazy, len));

		write_good(_metadata, self->fd, w, 7, "seven");
		writes += 4;
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	TH_LOG("%ld writes, %ld changes", writes, c.rounds);

	ev_write(name, "trigger", "!traceoff if a == 7\n");
	ASSERT_EQ(0, ue_write_file(c.inst_enable, "0\n", false));
	ASSERT_EQ(0, rmdir(CHURN_INST));
	ASSERT_EQ(0, ue_trace_clear());
	ASSERT_EQ(0, ev_write(name, "filter", "a == 1\n"));
	for (i = 0; i < 3; i++) {
		filtered_writes(_metadata, self->fd, w);
		nanosleep(&ts, NULL);
	}
	ASSERT_EQ(3, ue_trace_lines(name, self->lines, MAX_LINES));
	for (i = 0; i < 3; i++)
		ASSERT_STREQ("a=1 s=match", self->lines[i]);
	ASSERT_EQ(0, ev_write(name, "filter", "0\n"));
	munmap(lazy, page);
	close(mfd);
	munmap(map, 2 * page);
}

TEST_HARNESS_MAIN
