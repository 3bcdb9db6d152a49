// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: regression tests for the races and lifetime
 * bugs of issue 11 ("no order of operations can crash the kernel").
 *
 *  put_racing_delete        the last put of an event races DIAG_IOCSDEL of
 *                           its name (as root, and as an unprivileged user
 *                           granted the data file with data_gid/data_mode)
 *  eprobe_pins_module       an eprobe on a user event keeps the module
 *  hist_synth_pin_module    hist triggers / synthetic events on a user
 *                           event's fields keep the module
 *  enable_racing_rmmod      toggling an event's enable while rmmod is
 *                           retried: every existing event pins the module
 *  create_racing_rmmod      create/enable/disable/delete of an event while
 *                           another thread unloads and reloads the module
 *  open_racing_rmmod        opening the module's files while it unloads
 *  opath_holds_removed_files  an O_PATH descriptor of a removed file keeps
 *                           the module
 *  prepare_unload_restores_files  the first step of unloading, undone
 *  delete_then_recreate     a name whose last reference is gone can be
 *                           created again at once, with other fields
 *  del_every_event_of_name  DIAG_IOCSDEL deletes every event of a name,
 *                           multi-format ones included (upstream 6.12)
 *
 * The contract tested (the lead's design for the fix): every existing user
 * event pins the module, so delete_module() is refused (EWOULDBLOCK with
 * O_NONBLOCK) while any event exists, persistent ones included, or while
 * anything (an eprobe, a trigger, a synthetic event) refers to one.
 *
 * A kernel oops, WARN or refcount_t report makes the guest runner fail the
 * run; the tests themselves check that each operation returned one of the
 * results it is allowed to.
 *
 * Needs UE_MODULE (the .ko, to load it again) and optionally
 * UE_MODULE_NAME, as the guest runner of `make check` sets them. Events are
 * named ue_rc_*. Every test leaves the module loaded with default
 * parameters.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <time.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "ue_test.h"

#define PREFIX		"ue_rc_"
/* An event kept after its last user goes, and one of many formats */
#define PERSIST_MULTI	(USER_EVENT_REG_PERSIST | USER_EVENT_REG_MULTI_FORMAT)
#define DYN_EVENTS	UE_TRACEFS "/dynamic_events"
#define RACE_MS		3000
#define TEST_UID	1000
#define TEST_GID	1000

/* ---------------------------------------------------------------------
 * Module load and unload (as the system calls, like unload_test.c)
 */

/* prepare_unload, delete_module(O_NONBLOCK): 0 or -errno */
static int do_rmmod(void)
{
	return ue_mod_unload();
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);

	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------------
 * Remote write ABI (struct user_write_reg, 28 bytes)
 */

static int wreg(int fd, const char *desc, void *addr, int bit, int flags)
{
	return ue_wreg(fd, desc, addr, 4, bit, flags, NULL);
}

/* Does dynamic_events have a line starting with @line_prefix? */
static bool dyn_has(const char *line_prefix)
{
	static char buf[1 << 16];
	size_t len = strlen(line_prefix);
	char *line;

	if (ue_read_file(DYN_EVENTS, buf, sizeof(buf)) < 0)
		return false;
	for (line = buf; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (!strncmp(line, line_prefix, len))
			return true;
	}

	return false;
}

/* Wait up to @ms for events/user_events/@name to come and go */
static bool wait_gone(const char *name, int ms)
{
	long end = now_ms() + ms;

	do {
		if (!ue_event_exists(name))
			return true;
		usleep(10000);
	} while (now_ms() < end);

	return false;
}

/* ---------------------------------------------------------------------
 * Fixture: the module loaded with default parameters, no ue_rc_* events
 */

FIXTURE(races) {
	struct stat tracefs_st;
	bool chmodded;
};

FIXTURE_SETUP(races)
{
	if (!ue_mod_loaded())
		ASSERT_EQ(0, ue_mod_insmod(""));
	ASSERT_TRUE(ue_mod_loaded());
	ASSERT_EQ(0, ue_delete_prefix(PREFIX));
	self->chmodded = false;
}

FIXTURE_TEARDOWN(races)
{
	if (self->chmodded)
		chmod(UE_TRACEFS, self->tracefs_st.st_mode & 07777);
	if (!ue_mod_loaded())
		EXPECT_EQ(0, ue_mod_insmod(""));
	if (ue_mod_loaded())
		EXPECT_EQ(0, ue_delete_prefix(PREFIX));
}

/* ---------------------------------------------------------------------
 * put_racing_delete
 *
 * Thread A: { open the data file, register with the 28-byte ABI,
 * DIAG_IOCSUNREG, close } in a loop; thread B: DIAG_IOCSDEL of the same
 * name in a loop. Register and unregister must succeed, DIAG_IOCSDEL gives
 * 0, EBUSY (A holds it) or ENOENT (not there), nothing else. The first
 * unexpected result is kept in bad_op/bad_err. The deletes must have met
 * the event (0 or EBUSY) at least once: deletes that only ever found
 * nothing did not race A's last put at all. A cycle of A during which B
 * finished a delete "overlapped": the two ran at the same time. Measured
 * on 2026-11-26 (tests/race/README, "Multi-threaded TCG"): 0.5-1.2 % of the
 * cycles under single-threaded TCG (the vCPUs take turns), 5.9-90 % with
 * the vCPUs in parallel on a host busy with other guests. With
 * UE_RACE_PARALLEL=1 (the runs that use multi-threaded TCG) at least 3 %
 * must have, so that a run whose threads did not really race cannot pass
 * as one that did.
 */

struct put_del {
	const char *desc;
	const char *name;
	long end_ms;
	int bad_op;		/* 0: none, 1 open, 2 reg, 3 unreg, 4 close, 5 del */
	int bad_err;
	long loops[2];		/* A's cycles, B's deletes (read by A) */
	long overlapped;	/* A's cycles during which B finished a delete */
	long del_res[3];	/* deletes that gave 0, EBUSY, ENOENT */
};

static void put_del_bad(struct put_del *pd, int op, int err)
{
	if (!__atomic_load_n(&pd->bad_op, __ATOMIC_SEQ_CST)) {
		pd->bad_err = err;
		__atomic_store_n(&pd->bad_op, op, __ATOMIC_SEQ_CST);
	}
}

static void *put_del_a(void *arg)
{
	struct put_del *pd = arg;
	static __u32 word;
	int fd, ret;

	while (now_ms() < pd->end_ms && !pd->bad_op) {
		long b0 = __atomic_load_n(&pd->loops[1], __ATOMIC_RELAXED);

		fd = ue_open_data();
		if (fd < 0) {
			put_del_bad(pd, 1, errno);
			break;
		}
		ret = wreg(fd, pd->desc, &word, 0, 0);
		if (ret)
			put_del_bad(pd, 2, ret);
		else
			ret = ue_wunreg(fd, &word, 0);
		if (!pd->bad_op && ret)
			put_del_bad(pd, 3, ret);
		if (close(fd))
			put_del_bad(pd, 4, -errno);
		if (__atomic_load_n(&pd->loops[1], __ATOMIC_RELAXED) != b0)
			pd->overlapped++;
		pd->loops[0]++;
	}

	return NULL;
}

static void *put_del_b(void *arg)
{
	struct put_del *pd = arg;
	int fd = ue_open_data(), ret;

	if (fd < 0) {
		put_del_bad(pd, 1, -errno);
		return NULL;
	}
	while (now_ms() < pd->end_ms && !pd->bad_op) {
		ret = ue_del_fd(fd, pd->name);
		if (!ret)
			pd->del_res[0]++;
		else if (ret == -EBUSY)
			pd->del_res[1]++;
		else if (ret == -ENOENT)
			pd->del_res[2]++;
		else
			put_del_bad(pd, 5, ret);
		__atomic_store_n(&pd->loops[1], pd->loops[1] + 1, __ATOMIC_RELAXED);
	}
	close(fd);

	return NULL;
}

/* The vCPUs run in parallel (multi-threaded TCG): the threads must race */
static bool parallel_vcpus(void)
{
	const char *p = getenv("UE_RACE_PARALLEL");

	return p && !strcmp(p, "1");
}

/*
 * Runs the race; returns 0, or op * 1000 + errno of the first bad result,
 * 8000 for too few loops, 8001 when no delete met the event, 8002 when
 * under 3 % of A's cycles overlapped a delete with UE_RACE_PARALLEL=1
 */
static int put_del_run(const char *name, const char *desc, int ms)
{
	struct put_del pd = { .desc = desc, .name = name };
	pthread_t a, b;

	pd.end_ms = now_ms() + ms;
	if (pthread_create(&a, NULL, put_del_a, &pd))
		return 9000;
	if (pthread_create(&b, NULL, put_del_b, &pd)) {
		pd.end_ms = 0;
		pthread_join(a, NULL);
		return 9000;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("# %s: %ld register/unregister/close, %ld deletes: ", name,
	       pd.loops[0], pd.loops[1]);
	printf("%ld deleted, %ld EBUSY, %ld ENOENT; ", pd.del_res[0],
	       pd.del_res[1], pd.del_res[2]);
	printf("%ld of the cycles overlapped a delete\n", pd.overlapped);
	if (pd.bad_op)
		return pd.bad_op * 1000 + (pd.bad_err < 0 ? -pd.bad_err :
					   pd.bad_err);
	if (pd.loops[0] < 10 || pd.loops[1] < 10)
		return 8000;
	if (!pd.del_res[0] && !pd.del_res[1])
		return 8001;
	if (parallel_vcpus() && pd.overlapped * 100 < pd.loops[0] * 3)
		return 8002;

	return 0;
}

/*
 * put_del_run() succeeded (res 0); then nothing holds name: it goes
 * (deferred), or a last delete removes it
 */
static void assert_put_del(struct __test_metadata *_metadata, int res,
			   const char *name)
{
	ASSERT_EQ(0, res) {
		TH_LOG("op %d, errno %d (1 open, 2 reg, 3 unreg, 4 close, 5 del,",
		       res / 1000, res % 1000);
		TH_LOG("6 access, 7 setuid, 8000 too few loops, 8001 no delete met the event,");
		TH_LOG("8002 the threads hardly overlapped, UE_RACE_PARALLEL=1)");
	}

	if (!wait_gone(name, UE_BOUND_MS(1000)))
		ASSERT_EQ(0, ue_del(name));
	ASSERT_TRUE(wait_gone(name, UE_BOUND_MS(1000)));
}

TEST_F_TIMEOUT(races, put_racing_delete, UE_TIMEOUT(60))
{
	int res = put_del_run(PREFIX "racer_a", PREFIX "racer_a u32 a",
			      RACE_MS);

	assert_put_del(_metadata, res, PREFIX "racer_a");
}

/* The same as an unprivileged user the data file is granted to */
TEST_F_TIMEOUT(races, put_racing_delete_unprivileged, UE_TIMEOUT(90))
{
	int status, pipefd[2], res = -1;
	pid_t pid;

	ASSERT_EQ(0, ue_mod_reload("data_gid=1000 data_mode=0660"));
	ASSERT_EQ(0, stat(UE_TRACEFS, &self->tracefs_st));
	ASSERT_EQ(0, chmod(UE_TRACEFS, (self->tracefs_st.st_mode & 07777) | 0011));
	self->chmodded = true;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		gid_t groups[1] = { TEST_GID };

		close(pipefd[0]);
		if (setgroups(1, groups) ||
		    setresgid(TEST_GID, TEST_GID, TEST_GID) ||
		    setresuid(TEST_UID, TEST_UID, TEST_UID))
			res = 7000 + errno;
		else if (access(UE_DATA_FILE, R_OK | W_OK))
			res = 6000 + errno;
		else
			res = put_del_run(PREFIX "racer_u", PREFIX "racer_u u32 a",
					  RACE_MS);
		if (write(pipefd[1], &res, sizeof(res)) != sizeof(res))
			_exit(2);
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ((ssize_t)sizeof(res), read(pipefd[0], &res, sizeof(res)));
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	assert_put_del(_metadata, res, PREFIX "racer_u");

	/* Back to the defaults */
	ASSERT_EQ(0, ue_mod_reload(""));
}

/* ---------------------------------------------------------------------
 * Things that refer to an event pin the module
 */

/* rmmod must be refused, and the module and its files stay */
#define ASSERT_RMMOD_REFUSED(what) do {					\
	ASSERT_EQ(-EWOULDBLOCK, do_rmmod()) {				\
		TH_LOG("rmmod was not refused while %s", what);		\
	}								\
	ASSERT_TRUE(ue_mod_loaded());					\
	ASSERT_EQ(0, access(UE_DATA_FILE, F_OK));			\
} while (0)

/* tracefs README documents the eprobe syntax ("e[:[...") */
static bool kernel_has_eprobes(void)
{
	static char buf[1 << 17];

	return ue_read_file(UE_TRACEFS "/README", buf, sizeof(buf)) >= 0 &&
	       strstr(buf, "e[:[");
}

TEST_F(races, eprobe_pins_module)
{
	static char buf[1 << 16];

	if (!ue_kernel_at_least(5, 15))
		SKIP(return, "kernel without eprobes (they came in Linux 5.15)");
	ASSERT_TRUE(kernel_has_eprobes());
	ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "u:" PREFIX "x u32 a\n", false));
	ASSERT_EQ(0, ue_write_file(DYN_EVENTS,
				   "e:" PREFIX "ep user_events/" PREFIX "x\n",
				   false));
	ASSERT_TRUE(dyn_has("e:eprobes/" PREFIX "ep "));

	/* The eprobe holds the event: the module must stay */
	ASSERT_RMMOD_REFUSED("an eprobe refers to a user event");
	ASSERT_LE(0, ue_read_file(DYN_EVENTS, buf, sizeof(buf)));
	ASSERT_NE(NULL, strstr(buf, "u:" PREFIX "x u32 a"));

	/* The event is busy while the eprobe exists */
	ASSERT_EQ(-EBUSY, ue_del(PREFIX "x"));

	/* Enabling and disabling the eprobe works, and still pins it */
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/events/eprobes/" PREFIX "ep/enable",
				   "1\n", false));
	ASSERT_RMMOD_REFUSED("an enabled eprobe refers to a user event");
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/events/eprobes/" PREFIX "ep/enable",
				   "0\n", false));
	ASSERT_RMMOD_REFUSED("a user event exists");

	/* Remove the eprobe, then the event: now it may go */
	ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "-:" PREFIX "ep\n", false));
	ASSERT_FALSE(dyn_has("e:eprobes/" PREFIX "ep "));
	ASSERT_RMMOD_REFUSED("a user event exists");
	ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "!u:" PREFIX "x\n", false));
	ASSERT_FALSE(ue_event_exists(PREFIX "x"));
	ASSERT_EQ(0, ue_delete_prefix(""));
	ASSERT_EQ(0, ue_mod_unload_retry());
	ASSERT_FALSE(ue_mod_loaded());
	ASSERT_LE(0, ue_read_file(DYN_EVENTS, buf, sizeof(buf)));
	ASSERT_EQ(NULL, strstr(buf, "u:"));
	ASSERT_EQ(0, ue_mod_insmod(""));
}

#define TRIGGER(ev)	UE_EVENTS_DIR "/" ev "/trigger"
#define SYNTH_FILE	UE_TRACEFS "/synthetic_events"

/*
 * A hist trigger with a variable on a user event field, a synthetic event
 * fed from it by an onmatch() action of a second user event: all of them
 * keep the module until removed; then the events can go, and the module.
 */
TEST_F(races, hist_synth_pin_module)
{
	static char buf[1 << 16];

	UE_NEED_HIST_TRIGGERS();
	if (!ue_have_synth_events())
		SKIP(return, "kernel without CONFIG_SYNTH_EVENTS (no synthetic_events in tracefs)");

	ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "u:" PREFIX "hx u32 a\n", false));
	ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "u:" PREFIX "hy u32 a\n", false));

	/* A plain hist trigger */
	ASSERT_EQ(0, ue_write_file(TRIGGER(PREFIX "hx"), "hist:keys=a\n", false));
	ASSERT_RMMOD_REFUSED("a hist trigger is on a user event");
	ASSERT_EQ(0, ue_write_file(TRIGGER(PREFIX "hx"), "!hist:keys=a\n", false));
	ASSERT_RMMOD_REFUSED("user events exist");

	/* A variable on hx, a synthetic event fed by hy's onmatch() */
	ASSERT_EQ(0, ue_write_file(SYNTH_FILE, PREFIX "syn u32 v\n", false));
	ASSERT_EQ(0, ue_write_file(TRIGGER(PREFIX "hx"),
				   "hist:keys=a:va=a\n", false));
	ASSERT_EQ(0, ue_write_file(TRIGGER(PREFIX "hy"),
				   "hist:keys=a:vb=$va:onmatch(user_events." PREFIX
				   "hx).trace(" PREFIX "syn,$vb)\n", false)) {
		ue_read_file(UE_TRACEFS "/error_log", buf, sizeof(buf));
		TH_LOG("error_log: %s", buf);
	}
	ASSERT_RMMOD_REFUSED("a synthetic event is fed from user event fields");
	ASSERT_EQ(-EBUSY, ue_del(PREFIX "hx"));

	/* Take it apart in order */
	ASSERT_EQ(0, ue_write_file(TRIGGER(PREFIX "hy"),
				   "!hist:keys=a:vb=$va:onmatch(user_events." PREFIX
				   "hx).trace(" PREFIX "syn,$vb)\n", false));
	ASSERT_EQ(0, ue_write_file(TRIGGER(PREFIX "hx"),
				   "!hist:keys=a:va=a\n", false));
	ASSERT_EQ(0, ue_write_file(SYNTH_FILE, "!" PREFIX "syn\n", false));
	ASSERT_RMMOD_REFUSED("user events exist");
	ASSERT_EQ(0, ue_del(PREFIX "hx"));
	ASSERT_EQ(0, ue_del(PREFIX "hy"));
	ASSERT_EQ(0, ue_delete_prefix(""));
	ASSERT_EQ(0, ue_mod_unload_retry());
	ASSERT_LE(0, ue_read_file(DYN_EVENTS, buf, sizeof(buf)));
	ASSERT_EQ(NULL, strstr(buf, "u:"));
	ASSERT_EQ(0, ue_mod_insmod(""));
}

/* ---------------------------------------------------------------------
 * enable racing rmmod
 */

struct toggler {
	const char *name;
	long end_ms;
	long loops;
	int bad;	/* first enable/disable error while the module is loaded */
};

static void *toggle_fn(void *arg)
{
	struct toggler *t = arg;
	int ret;

	/* For RACE_MS, and at least 20 toggles (each patches static keys) */
	while (now_ms() < t->end_ms || (t->loops < 20 && t->end_ms &&
					now_ms() < t->end_ms + 10000)) {
		ret = ue_enable(t->name, t->loops & 1 ? false : true);
		if (ret) {
			if (!t->bad)
				t->bad = ret;
			break;
		}
		t->loops++;
	}
	ue_enable(t->name, false);

	return NULL;
}

/* An event exists (here: persistent, from dynamic_events): rmmod never succeeds */
TEST_F_TIMEOUT(races, enable_racing_rmmod, UE_TIMEOUT(60))
{
	struct toggler t = { .name = PREFIX "en" };
	long tries = 0, refused = 0;
	pthread_t th;
	int ret = 0;

	ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "u:" PREFIX "en u32 a\n", false));
	t.end_ms = now_ms() + RACE_MS;
	ASSERT_EQ(0, pthread_create(&th, NULL, toggle_fn, &t));
	while (now_ms() < t.end_ms || (t.loops < 20 && now_ms() < t.end_ms + 10000)) {
		ret = do_rmmod();
		tries++;
		if (ret != -EWOULDBLOCK)
			break;
		refused++;
	}
	t.end_ms = 0;
	pthread_join(th, NULL);
	printf("# %ld toggles, %ld rmmod tries\n", t.loops, tries);

	ASSERT_EQ(-EWOULDBLOCK, ret) {
		TH_LOG("rmmod gave %d after %ld refusals while " PREFIX "en existed",
		       ret, refused);
	}
	ASSERT_EQ(0, t.bad);
	ASSERT_LE(20, t.loops);
	ASSERT_TRUE(ue_mod_loaded());
	ASSERT_EQ(0, ue_del(PREFIX "en"));
}

struct creator {
	long end_ms;
	long loops, created;
	long refused[3];	/* creates refused with ENOENT, EINVAL, ENODEV */
	int bad_step;	/* 1 create, 2 enable, 3 disable, 4 delete */
	int bad_err;
};

static void *create_fn(void *arg)
{
	struct creator *c = arg;
	int ret;

	while (now_ms() < c->end_ms && !c->bad_step) {
		c->loops++;
		ret = ue_write_file(DYN_EVENTS, "u:" PREFIX "y u32 a\n", false);
		if (ret) {
			/* Only when the module is gone (no "u:" handler) */
			if (ret != -ENOENT && ret != -EINVAL && ret != -ENODEV) {
				c->bad_step = 1;
				c->bad_err = ret;
			}
			c->refused[ret == -ENOENT ? 0 : ret == -EINVAL ? 1 : 2]++;
			continue;
		}
		__atomic_add_fetch(&c->created, 1, __ATOMIC_SEQ_CST);
		/* It exists, so the module cannot go until it is deleted */
		ret = ue_enable(PREFIX "y", true);
		if (ret) {
			c->bad_step = 2;
			c->bad_err = ret;
			break;
		}
		ret = ue_enable(PREFIX "y", false);
		if (ret) {
			c->bad_step = 3;
			c->bad_err = ret;
			break;
		}
		ret = ue_write_file(DYN_EVENTS, "!u:" PREFIX "y\n", false);
		if (ret) {
			c->bad_step = 4;
			c->bad_err = ret;
			break;
		}
	}

	return NULL;
}

/*
 * Thread A creates, enables, disables and deletes an event in a loop
 * while this thread retries rmmod and loads the module again whenever it
 * went. Once A's create succeeded, its event pins the module: the steps
 * that follow must succeed. A create fails cleanly while no module is
 * there. The module must have been unloaded at least once meanwhile
 * (else nothing raced an unload).
 */
TEST_F_TIMEOUT(races, create_racing_rmmod, UE_TIMEOUT(90))
{
	struct creator c = { 0 };
	long tries = 0, unloads = 0, hard_end;
	int ret, bad = 0, i;
	pthread_t th;

	c.end_ms = now_ms() + 2 * RACE_MS;
	/* No unload yet at the end: on, a second at a time, up to 10 s more */
	hard_end = c.end_ms + 10000;
	ASSERT_EQ(0, pthread_create(&th, NULL, create_fn, &c));
	while (!c.bad_step) {
		long made = __atomic_load_n(&c.created, __ATOMIC_SEQ_CST);
		long now = now_ms(), wait_end = now + 500;

		if (now >= c.end_ms) {
			if (unloads || now >= hard_end)
				break;
			__atomic_store_n(&c.end_ms, now + 1000, __ATOMIC_SEQ_CST);
		}

		/* Once A has made its event on this module, unload it */
		while (__atomic_load_n(&c.created, __ATOMIC_SEQ_CST) == made &&
		       now_ms() < wait_end)
			usleep(1000);
		/* A burst of tries: some meet the event, some fall between */
		for (i = 0; i < 50; i++) {
			ret = do_rmmod();
			tries++;
			if (!ret) {
				unloads++;
				ret = ue_mod_insmod("");
				if (ret && !bad)
					bad = ret;
				break;
			} else if (ret != -EWOULDBLOCK && !bad) {
				bad = ret;
			}
			usleep(1000);
		}
	}
	c.end_ms = 0;
	pthread_join(th, NULL);
	printf("# %ld creates tried, %ld made, refused: %ld ENOENT, %ld EINVAL, %ld ENODEV\n",
	       c.loops, c.created, c.refused[0], c.refused[1], c.refused[2]);
	printf("# %ld rmmod tries, %ld unloads\n", tries, unloads);

	ASSERT_EQ(0, bad);
	ASSERT_EQ(0, c.bad_step) {
		TH_LOG("step %d (1 create, 2 enable, 3 disable, 4 delete) gave %d",
		       c.bad_step, c.bad_err);
	}
	ASSERT_LT(0, c.created);
	ASSERT_LT(0, unloads) {
		TH_LOG("no rmmod succeeded in %ld tries while " PREFIX "y came and went",
		       tries);
	}
	if (!ue_mod_loaded())
		ASSERT_EQ(0, ue_mod_insmod(""));
	ASSERT_FALSE(ue_event_exists(PREFIX "y"));
}

/*
 * open racing rmmod
 *
 * The module's files pin it until prepare_unload removes them, so no open
 * can meet a module that rmmod has marked going (do_dentry_open() WARNs
 * when fops_get() fails). Before: a WARN within seconds. A plain
 * delete_module() without prepare_unload is refused.
 */
struct opener {
	long end_ms;
	long opened, absent;
	int bad_err;
};

static void *open_fn(void *arg)
{
	static const char * const files[] = {
		UE_TRACEFS "/user_events_data", UE_TRACEFS "/user_events_status",
	};
	struct opener *o = arg;
	int fd, i = 0;

	while (now_ms() < __atomic_load_n(&o->end_ms, __ATOMIC_SEQ_CST)) {
		fd = open(files[i++ & 1], O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			o->opened++;
			close(fd);
		} else if (errno == ENOENT) {
			o->absent++;
		} else if (!o->bad_err) {
			o->bad_err = errno;
		}
	}

	return NULL;
}

/*
 * The files removed, delete_module() until it goes (an open in flight
 * holds a removed file for a moment); if it never does, the files come
 * back. 0 or the last -errno.
 */
static int unload_while_opened(void)
{
	int i, ret = -EIO;

	for (i = 0; i < 50; i++) {
		/* Again: forgets the removed files nobody holds any more */
		ue_mod_prepare_unload(true);
		ret = syscall(SYS_delete_module, ue_mod_name(), O_NONBLOCK) ?
		      -errno : 0;
		if (ret != -EWOULDBLOCK)
			return ret;
		usleep(2000);
	}
	ue_mod_prepare_unload(false);

	return ret;
}

TEST_F_TIMEOUT(races, open_racing_rmmod, 120)
{
	struct opener o[2] = { 0 };
	long tries = 0, unloads = 0, plain_refused = 0;
	int ret, bad = 0, i;
	pthread_t th[2];

	for (i = 0; i < 2; i++) {
		o[i].end_ms = now_ms() + 3 * RACE_MS;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, open_fn, &o[i]));
	}
	while (now_ms() < o[0].end_ms && !bad) {
		/* The files exist: let the openers in */
		usleep(10000);
		/* delete_module() without the first step: always refused */
		for (i = 0; i < 20 && !bad; i++) {
			ret = syscall(SYS_delete_module, ue_mod_name(),
				      O_NONBLOCK) ? -errno : 0;
			if (ret == -EWOULDBLOCK)
				plain_refused++;
			else
				bad = ret ? ret : -EEXIST;
		}
		ret = unload_while_opened();
		tries++;
		if (!ret) {
			unloads++;
			bad = ue_mod_insmod("");
		} else if (ret != -EWOULDBLOCK && !bad) {
			bad = ret;
		}
	}
	for (i = 0; i < 2; i++) {
		__atomic_store_n(&o[i].end_ms, 0, __ATOMIC_SEQ_CST);
		pthread_join(th[i], NULL);
	}
	printf("# %ld unload tries, %ld unloads, %ld plain rmmod refused; opens: %ld+%ld, absent %ld+%ld\n",
	       tries, unloads, plain_refused, o[0].opened, o[1].opened,
	       o[0].absent, o[1].absent);

	ASSERT_EQ(0, bad);
	ASSERT_EQ(0, o[0].bad_err);
	ASSERT_EQ(0, o[1].bad_err);
	ASSERT_LT(0, unloads);
	ASSERT_LT(0, o[0].opened);
	ASSERT_LT(0, o[1].opened);
	ASSERT_EQ(20 * tries, plain_refused);
	if (!ue_mod_loaded())
		ASSERT_EQ(0, ue_mod_insmod(""));
	ASSERT_EQ(0, access(UE_TRACEFS "/user_events_data", F_OK));
}

/*
 * An O_PATH descriptor of a removed file keeps the module: it can reopen
 * the file through /proc/self/fd. Before: the unload went ahead and that
 * reopen made the VFS read file operations from the freed module (oops).
 * Now the unload is refused until every such descriptor is closed; while
 * the module stays, the reopen works (the file, removed, still does).
 */
TEST_F(races, opath_holds_removed_files)
{
	static const char * const files[] = {
		UE_TRACEFS "/user_events_data", UE_TRACEFS "/user_events_status",
	};
	int opath[2], fd, i;
	char path[64];

	for (i = 0; i < 2; i++) {
		opath[i] = open(files[i], O_PATH | O_CLOEXEC);
		ASSERT_LE(0, opath[i]);
	}
	ASSERT_EQ(0, ue_mod_prepare_unload(true));
	ASSERT_EQ(-1, access(files[0], F_OK));
	ASSERT_EQ(-EWOULDBLOCK, syscall(SYS_delete_module, ue_mod_name(),
					O_NONBLOCK) ? -errno : 0);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", opath[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd) {
			TH_LOG("reopen of %s: %s", files[i], strerror(errno));
		}
		/* An open file pins the module as ever */
		ASSERT_EQ(0, ue_mod_prepare_unload(true));
		ASSERT_EQ(-EWOULDBLOCK, syscall(SYS_delete_module,
						ue_mod_name(), O_NONBLOCK) ?
					-errno : 0);
		close(fd);
	}
	/* One descriptor left is enough to keep it */
	close(opath[0]);
	ASSERT_EQ(0, ue_mod_prepare_unload(true));
	ASSERT_EQ(-EWOULDBLOCK, syscall(SYS_delete_module, ue_mod_name(),
					O_NONBLOCK) ? -errno : 0);
	close(opath[1]);
	/* prepare_unload again forgets the files nobody holds */
	ASSERT_EQ(0, ue_mod_prepare_unload(true));
	ASSERT_EQ(0, syscall(SYS_delete_module, ue_mod_name(), O_NONBLOCK) ?
		     -errno : 0);
	ASSERT_FALSE(ue_mod_loaded());
	ASSERT_EQ(0, ue_mod_insmod(""));
}

/* prepare_unload 0 brings the files back, with their mode and group */
TEST_F(races, prepare_unload_restores_files)
{
	struct stat before, after;
	int fd;

	ASSERT_EQ(0, stat(UE_TRACEFS "/user_events_data", &before));
	fd = open(UE_TRACEFS "/user_events_data", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ue_mod_prepare_unload(true));
	ASSERT_EQ(-1, access(UE_TRACEFS "/user_events_data", F_OK));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_EQ(-1, access(UE_TRACEFS "/user_events_status", F_OK));
	/* An open file still pins the module, and still works */
	ASSERT_EQ(-EWOULDBLOCK, syscall(SYS_delete_module, ue_mod_name(),
					O_NONBLOCK) ? -errno : 0);
	ASSERT_EQ(0, ue_reg(fd, PREFIX "opn u32 a", NULL, NULL));
	close(fd);
	ASSERT_EQ(0, ue_mod_prepare_unload(false));
	ASSERT_EQ(0, stat(UE_TRACEFS "/user_events_data", &after));
	ASSERT_EQ(before.st_mode, after.st_mode);
	ASSERT_EQ(before.st_gid, after.st_gid);
	ASSERT_EQ(0, access(UE_TRACEFS "/user_events_status", F_OK));
	/* Twice is the same as once, both ways */
	ASSERT_EQ(0, ue_mod_prepare_unload(false));
	ASSERT_EQ(0, ue_mod_prepare_unload(true));
	ASSERT_EQ(0, ue_mod_prepare_unload(true));
	ASSERT_EQ(0, ue_mod_prepare_unload(false));
	ASSERT_EQ(0, access(UE_TRACEFS "/user_events_data", F_OK));
	ue_del(PREFIX "opn");
	ASSERT_FALSE(ue_event_exists(PREFIX "opn"));
}

/* ---------------------------------------------------------------------
 * delete then re-create (the pattern of upstream's dyn_test after abi_test)
 */
TEST_F_TIMEOUT(races, delete_then_recreate, UE_TIMEOUT(120))
{
	static __u32 word;
	int i, fd;

	for (i = 0; i < 100; i++) {
		fd = ue_open_data();
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, wreg(fd, PREFIX "rc u64 a", &word, 0, 0));
		ASSERT_EQ(0, ue_wunreg(fd, &word, 0));
		close(fd);

		/* Its last reference is gone: the name is free or reusable */
		ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "u:" PREFIX "rc u64 a\n",
					   false)) {
			TH_LOG("iteration %d: create u64 a", i);
		}
		ASSERT_EQ(0, ue_del(PREFIX "rc")) {
			TH_LOG("iteration %d: DIAG_IOCSDEL", i);
		}
		/* Deleted: the name is free at once, for other fields too */
		ASSERT_FALSE(ue_event_exists(PREFIX "rc"));
		ASSERT_FALSE(dyn_has("u:" PREFIX "rc "));
		ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "u:" PREFIX "rc u32 b\n",
					   false)) {
			TH_LOG("iteration %d: create u32 b after the delete", i);
		}
		ASSERT_TRUE(dyn_has("u:" PREFIX "rc u32 b"));
		ASSERT_EQ(0, ue_write_file(DYN_EVENTS, "!u:" PREFIX "rc u32 b\n",
					   false));
		ASSERT_FALSE(dyn_has("u:" PREFIX "rc "));
	}
	ASSERT_FALSE(ue_event_exists(PREFIX "rc"));
	ASSERT_EQ(-ENOENT, ue_del(PREFIX "rc"));
}

/* ---------------------------------------------------------------------
 * DIAG_IOCSDEL "name" deletes every event of that name (upstream 6.12):
 * each unused one goes; one in use stops it with EBUSY; none is ENOENT.
 */
TEST_F(races, del_every_event_of_name)
{
	static __u32 word;
	int fd;

	fd = ue_open_data();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, wreg(fd, PREFIX "mf u32 a", &word, 0, PERSIST_MULTI));
	ASSERT_EQ(0, wreg(fd, PREFIX "mf u64 b", &word, 1, PERSIST_MULTI));
	ASSERT_EQ(0, wreg(fd, PREFIX "mf u32 a", &word, 2,
			  USER_EVENT_REG_PERSIST));
	ASSERT_EQ(2, ue_multi_count(PREFIX "mf"));
	ASSERT_TRUE(ue_event_exists(PREFIX "mf"));

	/* In use (registered on fd): EBUSY, and the busy one stays */
	ASSERT_EQ(-EBUSY, ue_del(PREFIX "mf"));
	ASSERT_LT(0, ue_multi_count(PREFIX "mf") + ue_event_exists(PREFIX "mf"));

	/* Unused and persistent: one DIAG_IOCSDEL deletes all of them */
	ASSERT_EQ(0, ue_wunreg(fd, &word, 0));
	ASSERT_EQ(0, ue_wunreg(fd, &word, 1));
	ASSERT_EQ(0, ue_wunreg(fd, &word, 2));
	close(fd);
	ASSERT_EQ(0, ue_del(PREFIX "mf"));
	ASSERT_EQ(0, ue_multi_count(PREFIX "mf"));
	ASSERT_FALSE(ue_event_exists(PREFIX "mf"));
	ASSERT_EQ(-ENOENT, ue_del(PREFIX "mf"));

	/* Multi-format only */
	fd = ue_open_data();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, wreg(fd, PREFIX "mo u32 a", &word, 0, PERSIST_MULTI));
	ASSERT_EQ(0, wreg(fd, PREFIX "mo u8 c", &word, 1, PERSIST_MULTI));
	ASSERT_EQ(0, ue_wunreg(fd, &word, 0));
	ASSERT_EQ(0, ue_wunreg(fd, &word, 1));
	close(fd);
	ASSERT_EQ(2, ue_multi_count(PREFIX "mo"));
	ASSERT_EQ(0, ue_del(PREFIX "mo"));
	ASSERT_EQ(0, ue_multi_count(PREFIX "mo"));
	ASSERT_EQ(-ENOENT, ue_del(PREFIX "mo"));
}

TEST_HARNESS_MAIN
