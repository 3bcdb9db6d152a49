// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: unloading the module.
 *
 * rmmod is refused while a data or status file is open (or the status
 * page is mapped) or an event has a probe attached; otherwise it succeeds,
 * removes every event and leaves nothing in tracefs.
 *
 * The module parameter max_events (default 32768) limits the number of
 * events: one more new event fails with EMFILE.
 *
 * Access control: by default only root may open user_events_data and
 * user_events_status (mode 0600, group root). data_gid/data_mode and
 * status_gid/status_mode grant a group; an unprivileged process (set up
 * as setpriv --reuid --regid --groups would) is refused or let in
 * accordingly, and a mode beyond 0666 is refused at load.
 *
 * Needs UE_MODULE (path of the .ko, to load it again) and optionally
 * UE_MODULE_NAME (default user_events) in the environment, as the guest
 * runner of `make check` sets them. Every test leaves the module loaded.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "ue_test.h"

#define PREFIX "ue_u_"

/*
 * rmmod and insmod as the system calls they make (no shell, no exec: the
 * 100 cycles below stay fast on slow debug kernels). 0 or -errno; @out
 * says what happened.
 */
static int do_rmmod(char *out, size_t size)
{
	int err = -ue_mod_unload();

	if (err) {

		snprintf(out, size, "rmmod %s: %s%s", ue_mod_name(), strerror(err),
			 err == EWOULDBLOCK ? " (is in use)" : "");
		return -err;
	}
	snprintf(out, size, "rmmod %s: done", ue_mod_name());
	return 0;
}

/* insmod $UE_MODULE [params], described in out */
static int do_insmod_params(char *out, size_t size, const char *params)
{
	int ret = ue_mod_insmod(params);

	snprintf(out, size, "insmod %s %s: %s", getenv("UE_MODULE") ?: "(UE_MODULE unset)",
		 params, ret ? strerror(-ret) : "done");
	return ret;
}

static int do_insmod(char *out, size_t size)
{
	return do_insmod_params(out, size, "");
}

/* /sys/module/NAME/parameters/max_events, or -errno */
static long max_events_param(void)
{
	char path[256], buf[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/max_events",
		 ue_mod_name());
	len = ue_read_file(path, buf, sizeof(buf));
	if (len < 0)
		return len;

	return strtol(buf, NULL, 10);
}

#define DEFAULT_MAX_EVENTS 32768

FIXTURE(unload) {
	int fd;
	int perf_fd;
	void *page;
	char out[4096];
};

FIXTURE_SETUP(unload)
{
	self->fd = -1;
	self->perf_fd = -1;
	self->page = NULL;

	if (!ue_mod_loaded())
		ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
			TH_LOG("insmod: %s", self->out);
		}
	ASSERT_TRUE(ue_mod_loaded());
	ASSERT_EQ(0, access(UE_DATA_FILE, F_OK));
	/* Every event pins the module: start from none (other tests ran) */
	ASSERT_EQ(0, ue_delete_prefix(""));
}

FIXTURE_TEARDOWN(unload)
{
	ue_close_fd(self->perf_fd);
	if (self->page)
		munmap(self->page, UE_PAGE_SIZE);
	ue_close_fd(self->fd);

	/* Leave the module loaded, with default parameters, for what follows */
	if (ue_mod_loaded() && max_events_param() != DEFAULT_MAX_EVENTS) {
		ue_delete_prefix(PREFIX);
		do_rmmod(self->out, sizeof(self->out));
	}
	if (!ue_mod_loaded())
		EXPECT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
			TH_LOG("insmod: %s", self->out);
		}
	if (ue_mod_loaded())
		EXPECT_EQ(0, ue_delete_prefix(PREFIX));
}

/* rmmod, then insmod with @params ("": the defaults) */
static void reload(struct __test_metadata *_metadata,
		   FIXTURE_DATA(unload) *self, const char *params)
{
	ASSERT_EQ(0, do_rmmod(self->out, sizeof(self->out))) {
		TH_LOG("rmmod: %s", self->out);
	}
	ASSERT_EQ(0, do_insmod_params(self->out, sizeof(self->out), params)) {
		TH_LOG("insmod: %s", self->out);
	}
}

/*
 * Lets other users reach tracefs (*@root_st: its mode before), then loads
 * the module again with the data file granted to group 4242, events shared
 * between users (upstream's rule) and @param, a per-user bound
 */
static void reload_for_users(struct __test_metadata *_metadata,
			     FIXTURE_DATA(unload) *self, struct stat *root_st,
			     const char *param)
{
	char params[128];

	ASSERT_EQ(0, stat(UE_TRACEFS, root_st));
	ASSERT_EQ(0, chmod(UE_TRACEFS, (root_st->st_mode & 07777) | 0011));
	snprintf(params, sizeof(params),
		 "data_gid=4242 data_mode=0660 %s isolation=shared", param);
	reload(_metadata, self, params);
}

/* rmmod must fail with "is in use" and leave everything in place */
#define ASSERT_RMMOD_REFUSED() do {					\
	int __st = do_rmmod(self->out, sizeof(self->out));		\
	ASSERT_EQ(-EWOULDBLOCK, __st) {					\
		TH_LOG("%s", self->out);				\
	}								\
	ASSERT_TRUE(ue_mod_loaded());					\
	ASSERT_EQ(0, access(UE_DATA_FILE, F_OK));			\
	ASSERT_EQ(0, access(UE_STATUS_FILE, F_OK));			\
} while (0)

TEST_F(unload, busy_while_data_fd_open)
{
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_RMMOD_REFUSED();

	/* Still usable */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "datafd u32 a", NULL, NULL));
}

TEST_F(unload, busy_while_status_fd_open)
{
	self->fd = open(UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_RMMOD_REFUSED();
}

TEST_F(unload, busy_while_status_page_mapped)
{
	int fd = open(UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	self->page = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, self->page) {
		self->page = NULL;
	}

	/* The mapping keeps the file, and so the module, in use */
	ASSERT_RMMOD_REFUSED();
}

TEST_F(unload, busy_while_ftrace_enabled)
{
	ASSERT_EQ(0, ue_reg_closed(PREFIX "ftrace u32 a"));

	ASSERT_EQ(0, ue_enable(PREFIX "ftrace", true));
	ASSERT_RMMOD_REFUSED();
	ASSERT_TRUE(ue_event_exists(PREFIX "ftrace"));
	ASSERT_EQ(0, ue_enable(PREFIX "ftrace", false));
}

TEST_F(unload, busy_while_perf_open)
{
	ASSERT_EQ(0, ue_reg_closed(PREFIX "perf u32 a"));

	self->perf_fd = ue_perf_open(PREFIX "perf");
	ASSERT_LE(0, self->perf_fd);
	ASSERT_RMMOD_REFUSED();
	ASSERT_TRUE(ue_event_exists(PREFIX "perf"));
}

TEST_F(unload, rmmod_refused_while_events_exist)
{
	int n;

	/* Events that persist after close pin the module */
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "gone1 u32 a", NULL, NULL));
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "gone2", NULL, NULL));
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
				   "u:" PREFIX "gone3 u32 d", false));
	ue_drop_fd(&self->fd);
	ASSERT_TRUE(ue_event_exists(PREFIX "gone1"));

	/* Was enabled once, is not any more */
	ASSERT_EQ(0, ue_enable(PREFIX "gone1", true));
	ASSERT_EQ(0, ue_enable(PREFIX "gone1", false));

	/* Refused until the last of them is deleted */
	ASSERT_RMMOD_REFUSED();
	ASSERT_EQ(0, ue_del(PREFIX "gone1"));
	ASSERT_EQ(0, ue_del(PREFIX "gone2"));
	ASSERT_RMMOD_REFUSED();
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
				   "!u:" PREFIX "gone3", false));

	ASSERT_EQ(0, do_rmmod(self->out, sizeof(self->out))) {
		TH_LOG("rmmod: %s", self->out);
	}
	ASSERT_FALSE(ue_mod_loaded());
	ASSERT_NE(0, access(UE_DATA_FILE, F_OK));
	ASSERT_NE(0, access(UE_STATUS_FILE, F_OK));
	ASSERT_NE(0, access(UE_EVENTS_DIR, F_OK));
	ASSERT_FALSE(ue_event_exists(PREFIX "gone1"));

	/* Loaded again: none of the old events is back */
	ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
		TH_LOG("insmod: %s", self->out);
	}
	ASSERT_TRUE(ue_mod_loaded());
	ASSERT_FALSE(ue_event_exists(PREFIX "gone1"));
	ASSERT_FALSE(ue_event_exists(PREFIX "gone2"));
	n = ue_status_list(NULL, 0);
	ASSERT_EQ(0, n);

	/* And it works */
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "after u32 a", NULL, NULL));
	ASSERT_TRUE(ue_event_exists(PREFIX "after"));
}

TEST_F(unload, rmmod_after_busy_cases)
{
	/* Nothing open, nothing attached: the refusals left no reference */
	ASSERT_EQ(0, ue_delete_prefix(PREFIX));
	ASSERT_EQ(0, do_rmmod(self->out, sizeof(self->out))) {
		TH_LOG("rmmod: %s", self->out);
	}
	ASSERT_FALSE(ue_mod_loaded());
	ASSERT_NE(0, access(UE_DATA_FILE, F_OK));
	ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
		TH_LOG("insmod: %s", self->out);
	}
	ASSERT_TRUE(ue_mod_loaded());
}

TEST_F(unload, max_events_param)
{
	char name[64], desc[64];
	int i, w = -1;

	ASSERT_EQ(DEFAULT_MAX_EVENTS, max_events_param());

	/* Load it again allowing only 3 events */
	reload(_metadata, self, "max_events=3");
	ASSERT_EQ(3, max_events_param());

	UE_ASSERT_OPEN_DATA(self->fd);
	for (i = 1; i <= 3; i++) {
		snprintf(desc, sizeof(desc), PREFIX "max%d u32 a", i);
		ASSERT_EQ(0, ue_reg(self->fd, desc, NULL, &w));
		ASSERT_EQ(i - 1, w);
	}
	ASSERT_EQ(-EMFILE, ue_reg(self->fd, PREFIX "max4 u32 a", NULL, NULL));
	ASSERT_FALSE(ue_event_exists(PREFIX "max4"));

	/* Registering an existing event needs no new one */
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "max2 u32 a", NULL, &w));
	ASSERT_EQ(1, w);

	/* Deleting one makes room for another */
	ue_drop_fd(&self->fd);
	ASSERT_EQ(0, ue_del(PREFIX "max3"));
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "max4 u32 a", NULL, &w));
	ASSERT_EQ(0, w);
	ue_drop_fd(&self->fd);

	/* Back to the defaults */
	for (i = 1; i <= 4; i++) {
		snprintf(name, sizeof(name), PREFIX "max%d", i);
		if (i != 3)
			ASSERT_EQ(0, ue_del(name));
	}
	reload(_metadata, self, "");
	ASSERT_EQ(DEFAULT_MAX_EVENTS, max_events_param());
}

#define UE_TEST_UID 4243
#define UE_TEST_GID 4242

/*
 * In a child running as UE_TEST_UID with only the given group: open
 * @path with @flags and, for the data file, register an event. Returns 0
 * or -errno from the first step that failed.
 */
static int try_as_user(const char *path, int flags, gid_t group)
{
	int pipefd[2], res = -EIO, status;
	pid_t pid;

	if (pipe(pipefd))
		return -errno;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		gid_t groups[1] = { group };
		int fd;

		close(pipefd[0]);
		if (setgroups(group ? 1 : 0, groups) ||
		    setresgid(UE_TEST_GID + 100, UE_TEST_GID + 100,
			      UE_TEST_GID + 100) ||
		    setresuid(UE_TEST_UID, UE_TEST_UID, UE_TEST_UID)) {
			res = -1000 - errno;
		} else {
			fd = open(path, flags | O_CLOEXEC);
			if (fd < 0) {
				res = -errno;
			} else {
				res = 0;
				if (!strcmp(path, UE_DATA_FILE))
					res = ue_reg(fd, PREFIX "acl u32 a",
						     NULL, NULL);
				close(fd);
			}
		}
		if (write(pipefd[1], &res, sizeof(res)) != sizeof(res))
			_exit(2);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &res, sizeof(res)) != sizeof(res))
		res = -EIO;
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || status)
		res = -EIO;

	return res;
}

/*
 * In a child running as @uid (group UE_TEST_GID): registers the events
 * PREFIX "<tag><i> u32 a", i = 0 .. n-1, with the status page ABI (they
 * persist). Returns how many succeeded before the first failure, whose
 * -errno goes to *err (0 if none failed).
 */
static int reg_n_as_uid(uid_t uid, const char *tag, int n, int *err)
{
	int pipefd[2], res[2] = { -1, -EIO }, status;
	pid_t pid;

	if (pipe(pipefd))
		return -1;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		gid_t groups[1] = { UE_TEST_GID };
		char desc[128];
		int fd, i;

		close(pipefd[0]);
		if (setgroups(1, groups) ||
		    setresgid(UE_TEST_GID, UE_TEST_GID, UE_TEST_GID) ||
		    setresuid(uid, uid, uid)) {
			res[1] = -1000 - errno;
		} else {
			fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
			res[0] = 0;
			res[1] = fd < 0 ? -errno : 0;
			for (i = 0; i < n && fd >= 0 && !res[1]; i++) {
				snprintf(desc, sizeof(desc), PREFIX "%s%d u32 a",
					 tag, i);
				res[1] = ue_reg(fd, desc, NULL, NULL);
				if (!res[1])
					res[0]++;
			}
		}
		if (write(pipefd[1], res, sizeof(res)) != sizeof(res))
			_exit(2);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], res, sizeof(res)) != sizeof(res))
		res[1] = -EIO;
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || status)
		res[1] = -EIO;

	*err = res[1];
	return res[0];
}

/*
 * max_events_per_uid: one user at its bound gets EMFILE, another user
 * still registers, re-registering an existing event costs nothing, and
 * deleting one of the user's events makes room again.
 */
TEST_F(unload, max_events_per_uid_param)
{
	struct stat root_st;
	int err;

	reload_for_users(_metadata, self, &root_st, "max_events_per_uid=3");

	/* The first user fills its share */
	EXPECT_EQ(3, reg_n_as_uid(UE_TEST_UID, "qa", 5, &err));
	EXPECT_EQ(-EMFILE, err);
	EXPECT_TRUE(ue_event_exists(PREFIX "qa2"));
	EXPECT_FALSE(ue_event_exists(PREFIX "qa3"));

	/* Another user is not affected */
	EXPECT_EQ(3, reg_n_as_uid(UE_TEST_UID + 1, "qb", 3, &err));
	EXPECT_EQ(0, err);

	/* Existing events cost nothing more: qa0..qa2 again */
	EXPECT_EQ(3, reg_n_as_uid(UE_TEST_UID, "qa", 3, &err));
	EXPECT_EQ(0, err);
	/* Events the other user created do not count for this one */
	EXPECT_EQ(3, reg_n_as_uid(UE_TEST_UID, "qb", 3, &err));
	EXPECT_EQ(0, err);

	/* Deleting one makes room for exactly one */
	EXPECT_EQ(0, ue_del(PREFIX "qa1"));
	EXPECT_EQ(1, reg_n_as_uid(UE_TEST_UID, "qc", 2, &err));
	EXPECT_EQ(-EMFILE, err);

	/* Root is bounded by max_events only */
	UE_ASSERT_OPEN_DATA(self->fd);
	EXPECT_EQ(0, ue_reg(self->fd, PREFIX "qr0 u32 a", NULL, NULL));
	EXPECT_EQ(0, ue_reg(self->fd, PREFIX "qr1 u32 a", NULL, NULL));
	EXPECT_EQ(0, ue_reg(self->fd, PREFIX "qr2 u32 a", NULL, NULL));
	EXPECT_EQ(0, ue_reg(self->fd, PREFIX "qr3 u32 a", NULL, NULL));
	ue_drop_fd(&self->fd);

	/* Back to the defaults */
	EXPECT_EQ(0, ue_delete_prefix(PREFIX));
	reload(_metadata, self, "");
	ASSERT_EQ(0, chmod(UE_TRACEFS, root_st.st_mode & 07777));
}

/*
 * As @uid (group UE_TEST_GID), in a child: registers remote write bits
 * 0 .. n-1 of one word for PREFIX "qe u32 a" and writes, for each, 0 or
 * -errno to @res_fd; then, if @hold_fd >= 0, waits until @hold_fd's
 * other end, @hold_wr (closed here), is closed by the parent before
 * exiting (keeping its bits). Returns the child's pid.
 */
static pid_t bits_as_uid(uid_t uid, int n, int res_fd, int hold_fd,
			 int hold_wr)
{
	pid_t pid = fork();

	if (pid == 0) {
		static __u64 word;
		gid_t groups[1] = { UE_TEST_GID };
		struct user_write_reg reg;
		int fd = -1, i, r;
		char c;

		ue_close_fd(hold_wr);
		if (setgroups(1, groups) ||
		    setresgid(UE_TEST_GID, UE_TEST_GID, UE_TEST_GID) ||
		    setresuid(uid, uid, uid))
			_exit(3);
		fd = ue_open_data();
		for (i = 0; i < n; i++) {
			memset(&reg, 0, sizeof(reg));
			reg.size = sizeof(reg);
			reg.enable_bit = i;
			reg.enable_size = sizeof(word);
			reg.enable_addr = (__u64)(uintptr_t)&word;
			reg.name_args = (__u64)(uintptr_t)(PREFIX "qe u32 a");
			r = fd < 0 ? fd :
			    ioctl(fd, DIAG_IOCSREG, &reg) < 0 ? -errno : 0;
			if (write(res_fd, &r, sizeof(r)) != sizeof(r))
				_exit(2);
		}
		close(res_fd);
		if (hold_fd >= 0 && read(hold_fd, &c, 1) < 0)
			_exit(4);
		_exit(0);
	}

	return pid;
}

/* The n results of bits_as_uid(), as a string of '0' and 'E' (EMFILE) */
static void bits_results(int res_fd, int n, char *out)
{
	int i, r;

	for (i = 0; i < n; i++) {
		if (read(res_fd, &r, sizeof(r)) != sizeof(r))
			r = -EIO;
		out[i] = !r ? '0' : r == -EMFILE ? 'E' : '?';
	}
	out[n] = '\0';
}

/* Unloads (retrying while exited processes' bits go) and loads again */
static void reload_back_to_defaults(struct __test_metadata *_metadata,
				    FIXTURE_DATA(unload) *self,
				    struct stat *root_st)
{
	int i;

	for (i = 0; i < 50 && do_rmmod(self->out, sizeof(self->out)); i++) {
		ue_delete_prefix(PREFIX);
		usleep(100000);
	}
	ASSERT_FALSE(ue_mod_loaded()) {
		TH_LOG("rmmod: %s", self->out);
	}
	ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
		TH_LOG("insmod: %s", self->out);
	}
	ASSERT_EQ(0, chmod(UE_TRACEFS, root_st->st_mode & 07777));
}

/*
 * max_enablers_per_uid: the bound is over all the user's processes; at it
 * the next bit gets EMFILE, another user is not affected, and the bits of
 * a process that exits make room again.
 */
/*
 * A user's process takes its whole max_enablers_per_uid and exits; the
 * user's next process, started right after the wait(), takes the whole
 * quota again, every round. The exit does not wait for its teardown,
 * which uncharges the bits; a registration refused with EMFILE waits for
 * the teardowns under way and tries once more (user_event_mm_settle()).
 * Before: 11 of 200 rounds refused (6.1, red team of e034f56).
 */
TEST_F_TIMEOUT(unload, exited_process_quota_goes_to_its_successor,
	       UE_TIMEOUT(180))
{
	int res[2], status, i, refused = 0;
	struct stat root_st;
	char got[72];
	pid_t pid;

	reload_for_users(_metadata, self, &root_st, "max_enablers_per_uid=64");
	ASSERT_EQ(0, pipe(res));
	for (i = 0; i < 100; i++) {
		pid = bits_as_uid(UE_TEST_UID, 64, res[1], -1, -1);
		ASSERT_LT(0, pid);
		bits_results(res[0], 64, got);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(NULL, strchr(got, '?')) {
			TH_LOG("round %d: %s", i, got);
		}
		refused += strchr(got, 'E') != NULL;
	}
	close(res[0]);
	close(res[1]);
	EXPECT_EQ(0, refused) {
		TH_LOG("%d of 100 rounds refused a bit (EMFILE)", refused);
	}
	reload_back_to_defaults(_metadata, self, &root_st);
}

TEST_F(unload, max_enablers_per_uid_param)
{
	int res[2], hold[2], status, i;
	struct stat root_st;
	char got[8];
	pid_t holder, pid;

	reload_for_users(_metadata, self, &root_st, "max_enablers_per_uid=3");

	/* A process of the user takes 2 of its 3 and keeps them */
	ASSERT_EQ(0, pipe(res));
	ASSERT_EQ(0, pipe(hold));
	holder = bits_as_uid(UE_TEST_UID, 2, res[1], hold[0], hold[1]);
	ASSERT_LT(0, holder);
	bits_results(res[0], 2, got);
	EXPECT_STREQ("00", got);

	/* Another process of the same user gets the third only */
	pid = bits_as_uid(UE_TEST_UID, 3, res[1], -1, hold[1]);
	ASSERT_LT(0, pid);
	bits_results(res[0], 3, got);
	EXPECT_STREQ("0EE", got);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	/* Another user has its own 3 */
	pid = bits_as_uid(UE_TEST_UID + 1, 4, res[1], -1, hold[1]);
	ASSERT_LT(0, pid);
	bits_results(res[0], 4, got);
	EXPECT_STREQ("000E", got);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	/* The holder exits: its bits go (from a work item), room again */
	close(hold[1]);
	ASSERT_EQ(holder, waitpid(holder, &status, 0));
	for (i = 0; i < 50; i++) {
		pid = bits_as_uid(UE_TEST_UID, 3, res[1], -1, -1);
		ASSERT_LT(0, pid);
		bits_results(res[0], 3, got);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (!strcmp(got, "000"))
			break;
		usleep(100000);
	}
	EXPECT_STREQ("000", got);
	close(res[0]);
	close(res[1]);
	close(hold[0]);

	/* Back to the defaults (the bits went with their processes) */
	for (i = 0; i < 50 && do_rmmod(self->out, sizeof(self->out)); i++) {
		ue_delete_prefix(PREFIX);
		usleep(100000);
	}
	ASSERT_FALSE(ue_mod_loaded()) {
		TH_LOG("rmmod: %s", self->out);
	}
	ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
		TH_LOG("insmod: %s", self->out);
	}
	ASSERT_EQ(0, chmod(UE_TRACEFS, root_st.st_mode & 07777));
}

/* The three pipes of a child run as another user: 0 or -1 */
static int child_pipes(int res[2], int sync[2], int go[2])
{
	return pipe(res) || pipe(sync) || pipe(go) ? -1 : 0;
}

/*
 * The parent closes the child's ends: a child that fails then ends the
 * parent's reads
 */
static void child_pipes_parent_ends(int res[2], int sync[2], int go[2])
{
	close(res[1]);
	close(sync[1]);
	close(go[0]);
}

/*
 * As UE_TEST_UID: registers bits 0 .. 2 of an anonymous word for
 * PREFIX "qf u32 a", tells @sync_wr, waits on @go_rd for root to enable
 * the event, checks the word, then forks once; the fork child sends its
 * word as it found it (after inheriting, before touching anything) and
 * the result of unregistering each of the three bits, as a child of the
 * test: out[0] the parent's word, out[1] the child's, out[2..4] the
 * unregistrations (0 or -errno).
 */
static pid_t fork_bits_as_uid(int res_fd, int sync_wr, int go_rd)
{
	pid_t pid = fork();

	if (pid == 0) {
		gid_t groups[1] = { UE_TEST_GID };
		__u64 out[5] = { ~0ULL, ~0ULL, 1, 1, 1 };
		volatile __u64 *word;
		int fd, i, status;
		pid_t child;
		char c = 0;

		word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (word == MAP_FAILED || setgroups(1, groups) ||
		    setresgid(UE_TEST_GID, UE_TEST_GID, UE_TEST_GID) ||
		    setresuid(UE_TEST_UID, UE_TEST_UID, UE_TEST_UID))
			_exit(3);
		*word = 0;
		fd = ue_open_data();
		for (i = 0; i < 3; i++)
			if (fd < 0 || ue_wreg(fd, PREFIX "qf u32 a",
					      (void *)word, 8, i, 0, NULL))
				_exit(4);
		if (write(sync_wr, &c, 1) != 1 || read(go_rd, &c, 1) != 1)
			_exit(5);
		out[0] = *word;
		child = fork();
		if (child == 0) {
			out[1] = *word;
			for (i = 0; i < 3; i++)
				out[2 + i] = (__u64)ue_wunreg(fd, (void *)word,
							      i);
			if (write(res_fd, out, sizeof(out)) != sizeof(out))
				_exit(2);
			_exit(0);
		}
		if (child < 0 || waitpid(child, &status, 0) != child ||
		    status)
			_exit(6);
		_exit(0);
	}

	return pid;
}

/*
 * max_enablers_per_uid across fork (issue 30, item 2): a fork child's
 * copies of its parent's enablers are charged as registrations are and
 * stop at the quota: the child inherits the parent's oldest enablers up
 * to it, the others not (their bits are cleared in the child's word);
 * the fork itself succeeds. Before, the copies were charged but never
 * refused: 16 processes held four times the quota, and every state
 * change wrote them all under event_mutex.
 */
TEST_F(unload, fork_copies_stop_at_enablers_quota)
{
	int res[2], sync[2], go[2], status;
	struct stat root_st;
	__u64 out[5];
	pid_t pid;
	char c;

	reload_for_users(_metadata, self, &root_st, "max_enablers_per_uid=4");
	ASSERT_EQ(0, child_pipes(res, sync, go));

	/* 3 of the user's 4 in the parent: its fork child gets 1 */
	pid = fork_bits_as_uid(res[1], sync[1], go[0]);
	ASSERT_LT(0, pid);
	child_pipes_parent_ends(res, sync, go);
	ASSERT_EQ(1, read(sync[0], &c, 1));
	ASSERT_EQ(0, ue_enable(PREFIX "qf", true));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ((ssize_t)sizeof(out), read(res[0], out, sizeof(out)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);

	/* The enable set every bit of the parent before its write returned */
	EXPECT_EQ(7ULL, out[0]);
	/* The child inherited bit 0 only, and its other bits were cleared */
	EXPECT_EQ(1ULL, out[1]);
	EXPECT_EQ(0ULL, out[2]);
	EXPECT_EQ(-ENOENT, (int)out[3]);
	EXPECT_EQ(-ENOENT, (int)out[4]);

	EXPECT_EQ(0, ue_enable(PREFIX "qf", false));
	close(res[0]);
	close(sync[0]);
	close(go[1]);

	/* Back to the defaults (the bits went with their processes) */
	reload_back_to_defaults(_metadata, self, &root_st);
}

#define UE_NS_HOST_UID 300000
#define UE_NS_UIDS 4

/*
 * In a child: as UE_TEST_UID (group UE_TEST_GID), makes a user namespace
 * whose uids 0 .. UE_NS_UIDS - 1 map to host uids UE_NS_HOST_UID.. (the
 * map is written by the test, as root: a newuidmap of /etc/subuid), then,
 * as each of them in turn, registers two events PREFIX "qn<uid>_<i>"
 * with the status page ABI. Sends to @res_fd, per namespace uid, how many
 * succeeded and the first error (0 or -errno). A chrooted task cannot
 * make a user namespace (the guest runs the tests in a chroot): the child
 * first takes the root of pid 1, with a data descriptor opened before.
 */
static pid_t ns_regs_as_uid(int res_fd, int sync_wr, int go_rd)
{
	pid_t pid = fork();

	if (pid == 0) {
		gid_t groups[1] = { UE_TEST_GID };
		int k, i, status, res[2];
		char desc[64], c = 0;
		int fd = ue_open_data();
		pid_t child;

		if (fd < 0 || chroot("/proc/1/root") || chdir("/"))
			_exit(7);
		if (setgroups(1, groups) ||
		    setresgid(UE_TEST_GID, UE_TEST_GID, UE_TEST_GID) ||
		    setresuid(UE_TEST_UID, UE_TEST_UID, UE_TEST_UID) ||
		    unshare(CLONE_NEWUSER))
			_exit(3);
		if (write(sync_wr, &c, 1) != 1 || read(go_rd, &c, 1) != 1)
			_exit(5);
		for (k = 0; k < UE_NS_UIDS; k++) {
			child = fork();
			if (child == 0) {
				res[0] = 0;
				res[1] = setresuid(k, k, k) ? -1000 - errno : 0;
				for (i = 0; i < 2 && !res[1]; i++) {
					snprintf(desc, sizeof(desc),
						 PREFIX "qn%d_%d u32 a", k, i);
					res[1] = ue_reg(fd, desc, NULL, NULL);
					if (!res[1])
						res[0]++;
				}
				if (write(res_fd, res, sizeof(res)) !=
				    sizeof(res))
					_exit(2);
				_exit(0);
			}
			if (child < 0 || waitpid(child, &status, 0) != child ||
			    status)
				_exit(6);
		}
		_exit(0);
	}

	return pid;
}

/* Writes @map into /proc/@pid/@file; 0 or -errno */
static int write_id_map(pid_t pid, const char *file, const char *map)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	return ue_write_file(path, map, false);
}

/*
 * Subordinate uids do not multiply the quotas (issue 30, item 3): the
 * uids of a user namespace that a user made are that user's tenancy. With
 * max_events_per_uid=3, the four uids of a namespace owned by UE_TEST_UID
 * (each a host uid of its own) create 3 events in all, not 8; the owner
 * itself, outside, has no room left; another user is not affected.
 */
TEST_F(unload, userns_uids_share_the_owners_quota)
{
	int res[2], sync[2], go[2], status, k, got[2], total = 0, err;
	struct stat root_st;
	char map[64], c;
	pid_t pid;

	reload_for_users(_metadata, self, &root_st, "max_events_per_uid=3");
	/* Debian's switch for unprivileged user namespaces, if any */
	ue_write_file("/proc/sys/kernel/unprivileged_userns_clone", "1",
		      false);
	ASSERT_EQ(0, child_pipes(res, sync, go));

	pid = ns_regs_as_uid(res[1], sync[1], go[0]);
	ASSERT_LT(0, pid);
	child_pipes_parent_ends(res, sync, go);
	ASSERT_EQ(1, read(sync[0], &c, 1)) {
		waitpid(pid, &status, 0);
		TH_LOG("no user namespace (child status %d)", status);
	}
	snprintf(map, sizeof(map), "0 %d %d\n", UE_NS_HOST_UID, UE_NS_UIDS);
	ASSERT_EQ(0, write_id_map(pid, "uid_map", map));
	ASSERT_EQ(1, write(go[1], "g", 1));
	for (k = 0; k < UE_NS_UIDS; k++) {
		ASSERT_EQ((ssize_t)sizeof(got), read(res[0], got, sizeof(got)));
		TH_LOG("namespace uid %d (host %d): %d events, %d",
		       k, UE_NS_HOST_UID + k, got[0], got[1]);
		EXPECT_TRUE(!got[1] || got[1] == -EMFILE);
		total += got[0];
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(3, total);

	/* The owner, outside its namespace, shares the same quota */
	EXPECT_EQ(0, reg_n_as_uid(UE_TEST_UID, "qo", 1, &err));
	EXPECT_EQ(-EMFILE, err);
	/* Another user is not affected */
	EXPECT_EQ(3, reg_n_as_uid(UE_TEST_UID + 1, "qp", 3, &err));
	EXPECT_EQ(0, err);

	close(res[0]);
	close(sync[0]);
	close(go[1]);
	EXPECT_EQ(0, ue_delete_prefix(PREFIX));
	reload_back_to_defaults(_metadata, self, &root_st);
}

static void file_owner(const char *path, int *mode, int *gid)
{
	struct stat st;

	*mode = 07777;
	*gid = -1;
	if (!stat(path, &st)) {
		*mode = (int)(st.st_mode & 07777);
		*gid = (int)st.st_gid;
	}
}

TEST_F(unload, access_control)
{
	struct stat root_st;
	int mode, gid;

	/* Let others reach the files: the test is about their own modes */
	ASSERT_EQ(0, stat(UE_TRACEFS, &root_st));
	ASSERT_EQ(0, chmod(UE_TRACEFS, (root_st.st_mode & 07777) | 0011));

	/* Defaults: root only */
	file_owner(UE_DATA_FILE, &mode, &gid);
	EXPECT_EQ(0600, mode);
	EXPECT_EQ(0, gid);
	file_owner(UE_STATUS_FILE, &mode, &gid);
	EXPECT_EQ(0600, mode);
	EXPECT_EQ(0, gid);
	EXPECT_EQ(-EACCES, try_as_user(UE_DATA_FILE, O_RDWR, UE_TEST_GID));
	EXPECT_EQ(-EACCES, try_as_user(UE_STATUS_FILE, O_RDONLY, UE_TEST_GID));

	/* A group granted */
	reload(_metadata, self,
	       "data_gid=4242 data_mode=0660 status_gid=4242 status_mode=0440");
	file_owner(UE_DATA_FILE, &mode, &gid);
	EXPECT_EQ(0660, mode);
	EXPECT_EQ(UE_TEST_GID, gid);
	file_owner(UE_STATUS_FILE, &mode, &gid);
	EXPECT_EQ(0440, mode);
	EXPECT_EQ(UE_TEST_GID, gid);
	EXPECT_EQ(0, try_as_user(UE_DATA_FILE, O_RDWR, UE_TEST_GID));
	EXPECT_EQ(0, try_as_user(UE_STATUS_FILE, O_RDONLY, UE_TEST_GID));
	EXPECT_EQ(-EACCES, try_as_user(UE_STATUS_FILE, O_RDWR, UE_TEST_GID));
	/* Not in the group: still refused */
	EXPECT_EQ(-EACCES, try_as_user(UE_DATA_FILE, O_RDWR, 0));
	EXPECT_EQ(-EACCES, try_as_user(UE_STATUS_FILE, O_RDONLY, 0));
	EXPECT_TRUE(ue_event_exists(PREFIX "acl"));
	EXPECT_EQ(0, ue_del(PREFIX "acl"));

	/* A mode beyond rw for all is refused, and nothing is left */
	ASSERT_EQ(0, do_rmmod(self->out, sizeof(self->out))) {
		TH_LOG("rmmod: %s", self->out);
	}
	EXPECT_EQ(-EINVAL, do_insmod_params(self->out, sizeof(self->out),
					    "data_mode=04666"));
	EXPECT_FALSE(ue_mod_loaded());
	EXPECT_NE(0, access(UE_DATA_FILE, F_OK));

	/* Back to the defaults */
	ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
		TH_LOG("insmod: %s", self->out);
	}
	file_owner(UE_DATA_FILE, &mode, &gid);
	EXPECT_EQ(0600, mode);
	EXPECT_EQ(0, gid);
	ASSERT_EQ(0, chmod(UE_TRACEFS, root_st.st_mode & 07777));
}

/*
 * In a child process (its address space pins the module until it exits):
 * remote write registrations, one persistent, one not. Returns 0 or the
 * first -errno.
 */
static int remote_regs_in_child(const char *persist_desc, const char *desc)
{
	static __u32 word;
	int status, ret = -EIO;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct user_write_reg reg;
		int fd = ue_open_data(), i;

		for (i = 0; i < 2 && fd >= 0; i++) {
			memset(&reg, 0, sizeof(reg));
			reg.size = sizeof(reg);
			reg.enable_bit = i;
			reg.enable_size = sizeof(word);
			reg.enable_addr = (__u64)(uintptr_t)&word;
			reg.name_args = (__u64)(uintptr_t)(i ? desc : persist_desc);
			reg.flags = i ? 0 : USER_EVENT_REG_PERSIST;
			if (ioctl(fd, DIAG_IOCSREG, &reg) < 0)
				_exit(10 + i);
		}
		_exit(fd < 0 ? 9 : 0);
	}
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		ret = WEXITSTATUS(status) ? -WEXITSTATUS(status) : 0;

	return ret;
}

/* The module's purge event (trace_events_user.c, user_event_purge_mark()) */
#define UE_PURGE_DIR UE_TRACEFS "/events/user_events_unload"

/* Nothing of the module left in tracefs: files, events, dynamic_events */
static bool tracefs_clean(char *out, size_t size)
{
	ssize_t len;

	if (!access(UE_DATA_FILE, F_OK) || !access(UE_STATUS_FILE, F_OK) ||
	    !access(UE_EVENTS_DIR, F_OK) ||
	    !access(UE_EVENTS_DIR "_multi", F_OK) ||
	    !access(UE_PURGE_DIR, F_OK)) {
		snprintf(out, size, "user_events files left");
		return false;
	}
	len = ue_read_file(UE_TRACEFS "/dynamic_events", out, size);
	if (len > 0 && strstr(out, "u:"))
		return false;

	return true;
}

/*
 * 100 load/use/unload cycles with events in every state: registered
 * through both ABIs, persistent, auto-deleted, made in dynamic_events,
 * deleted, enabled in ftrace and perf. rmmod is refused while a file is
 * open, ftrace has an event or perf has one open, and succeeds once
 * they are gone, leaving nothing behind.
 */
TEST_F_TIMEOUT(unload, load_use_unload_100_cycles, UE_TIMEOUT(600))
{
	int cycle, perf_fd, fd, i;

	for (cycle = 0; cycle < 100; cycle++) {
		if (!ue_mod_loaded())
			ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
				TH_LOG("cycle %d: insmod: %s", cycle, self->out);
			}

		fd = ue_open_data();
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ue_reg(fd, PREFIX "cy_s u32 a", NULL, NULL));
		ASSERT_EQ(0, ue_reg(fd, PREFIX "cy_del u32 a", NULL, NULL));
		ASSERT_EQ(0, remote_regs_in_child(PREFIX "cy_p u64 b",
						  PREFIX "cy_r u8 c"));
		ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
					   "u:" PREFIX "cy_d u32 d", false));
		ASSERT_EQ(0, ue_enable(PREFIX "cy_s", true));
		perf_fd = ue_perf_open(PREFIX "cy_d");
		ASSERT_LE(0, perf_fd);

		/* Busy: the open file */
		ASSERT_RMMOD_REFUSED();
		close(fd);
		ASSERT_EQ(0, ue_del(PREFIX "cy_del"));

		/* Busy: ftrace has cy_s, perf has cy_d */
		ASSERT_RMMOD_REFUSED();
		ASSERT_EQ(0, ue_enable(PREFIX "cy_s", false));
		ASSERT_RMMOD_REFUSED();
		close(perf_fd);

		/* Persistent events (cy_s, cy_p, cy_d) pin the module */
		ASSERT_RMMOD_REFUSED();
		ASSERT_EQ(0, ue_delete_prefix(PREFIX));

		/*
		 * The child's address space let go of the module from a
		 * work item after it exited: give that a moment.
		 */
		for (i = 0; i < 100; i++) {
			if (!do_rmmod(self->out, sizeof(self->out)))
				break;
			usleep(20000);
		}
		ASSERT_FALSE(ue_mod_loaded()) {
			TH_LOG("cycle %d: rmmod: %s", cycle, self->out);
		}
		ASSERT_TRUE(tracefs_clean(self->out, sizeof(self->out))) {
			TH_LOG("cycle %d: left: %s", cycle, self->out);
		}
	}

	ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
		TH_LOG("insmod: %s", self->out);
	}
}

/* Four enable bits in this address space, then one after unregistering one */
static void four_enablers(void *arg __attribute__((unused)), int *res)
{
	static __u64 words[4];
	struct user_write_reg reg;
	struct user_write_unreg unreg;
	int fd = ue_open_data(), i;

	for (i = 0; i < 4; i++) {
		memset(&reg, 0, sizeof(reg));
		reg.size = sizeof(reg);
		reg.enable_size = sizeof(words[i]);
		reg.enable_addr = (__u64)(uintptr_t)&words[i];
		reg.name_args = (__u64)(uintptr_t)PREFIX "men u32 a";
		if (ioctl(fd, DIAG_IOCSREG, &reg) < 0)
			break;
	}
	res[0] = i == 3 ? errno : -i;
	/* Room again after an unregistration */
	memset(&unreg, 0, sizeof(unreg));
	unreg.size = sizeof(unreg);
	unreg.disable_addr = (__u64)(uintptr_t)&words[0];
	res[1] = ioctl(fd, DIAG_IOCSUNREG, &unreg) ? -errno :
		 ioctl(fd, DIAG_IOCSREG, &reg) ? -errno : 0;
}

/*
 * max_enablers bounds the enable bits of one address space: one more is
 * EMFILE; unregistering one makes room; a fork child inherits within it.
 */
TEST_F(unload, max_enablers_param)
{
	int res[2] = { 1, 1 }, i;

	reload(_metadata, self, "max_enablers=3");

	/* In a child: its address space keeps the module until it exits */
	ue_child_results(_metadata, four_enablers, NULL, res, sizeof(res));
	EXPECT_EQ(EMFILE, res[0]);
	EXPECT_EQ(0, res[1]);

	/* Back to the defaults, once the child's address space let go */
	for (i = 0; i < 100; i++) {
		if (!do_rmmod(self->out, sizeof(self->out)))
			break;
		usleep(20000);
	}
	ASSERT_FALSE(ue_mod_loaded()) {
		TH_LOG("rmmod: %s", self->out);
	}
	ASSERT_EQ(0, do_insmod(self->out, sizeof(self->out))) {
		TH_LOG("insmod: %s", self->out);
	}
}

/* Does the file at @path hold @str? 1, 0 or -errno */
static int file_has(const char *path, const char *str)
{
	size_t size = 8 << 20;
	char *buf = malloc(size);
	ssize_t len;
	int ret;

	if (!buf)
		return -ENOMEM;
	len = ue_read_file(path, buf, size);
	ret = len < 0 ? (int)len : !!strstr(buf, str);
	free(buf);
	return ret;
}

/*
 * The purge event, which marks the instances the unload empties, can be
 * neither enabled nor filtered nor triggered, is in no list of events to
 * enable, and has no id (tracefs shows its format only).
 */
TEST_F(unload, purge_event_never_enabled)
{
	static const char *const absent[] = { "enable", "filter", "trigger",
					      "id", "inject" };
	char buf[4096];
	unsigned int i;
	ssize_t len;

	ASSERT_EQ(0, access(UE_PURGE_DIR "/purge/format", R_OK));
	for (i = 0; i < ARRAY_SIZE(absent); i++) {
		char path[256];

		snprintf(path, sizeof(path), UE_PURGE_DIR "/purge/%s",
			 absent[i]);
		errno = 0;
		EXPECT_EQ(-1, access(path, F_OK)) {
			TH_LOG("%s exists", path);
		}
		EXPECT_EQ(ENOENT, errno);
	}
	/* Nothing in its system can be enabled */
	EXPECT_EQ(-EINVAL, ue_write_file(UE_PURGE_DIR "/enable", "1\n", false));
	EXPECT_EQ(-EINVAL, ue_write_file(UE_TRACEFS "/set_event",
					 "user_events_unload:purge\n", false));
	len = ue_read_file(UE_PURGE_DIR "/enable", buf, sizeof(buf));
	ASSERT_LT(0, len);
	/* The state of a system none of whose events can be enabled */
	EXPECT_STREQ("?\n", buf);
	EXPECT_EQ(0, file_has(UE_TRACEFS "/available_events",
			      "user_events_unload"));
	EXPECT_EQ(0, file_has(UE_TRACEFS "/set_event", "user_events_unload"));
}

/* Reopens what an O_PATH descriptor holds: the late open */
static int reopen_path(int pathfd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", pathfd);
	return open(path, flags | O_CLOEXEC);
}

/*
 * The purge event's hist file (and format), held open and looked up
 * (O_PATH) across the unload. Before eventfs, a held directory of the
 * purge event keeps the module (it reads module data): rmmod is refused
 * until it is let go, a late open of hist gives ENODEV, and the unload
 * then proceeds. With eventfs the unload proceeds at once and the file
 * reads ENODEV. Before, the module cleared every i_private of the purge
 * directory at its removal, and 6.1.y's hist file dereferences it in its
 * open and release (tracing_open_file_tr()): an oops at the close and at
 * the late open (Safety IV, issue 28).
 */
TEST_F(unload, purge_files_held_across_unload)
{
	static const char *const files[] = { "hist", "format" };
	bool eventfs = ue_kernel_at_least(6, 6);
	char path[256], buf[4096];
	int fd, pathfd, late, ret;
	unsigned int i;
	ssize_t n;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), UE_PURGE_DIR "/purge/%s",
			 files[i]);
		/* Debian's 5.10 has no hist files */
		if (access(path, F_OK))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		pathfd = open(path, O_PATH | O_CLOEXEC);
		ASSERT_LE(0, pathfd);
		ASSERT_EQ(0, ue_delete_prefix(""));
		ret = ue_mod_unload_retry();
		if (eventfs) {
			EXPECT_EQ(0, ret);
			errno = 0;
			EXPECT_EQ(-1, read(fd, buf, sizeof(buf)));
			EXPECT_EQ(ENODEV, errno);
		} else {
			EXPECT_EQ(-EWOULDBLOCK, ret) {
				TH_LOG("%s held: the unload gave %d", path, ret);
			}
			n = read(fd, buf, sizeof(buf));
			EXPECT_TRUE(n >= 0 || errno == ENODEV);
		}
		close(fd);
		/* hist checks its event file at open, format at read */
		late = reopen_path(pathfd, O_RDONLY);
		if (!strcmp(files[i], "hist")) {
			EXPECT_EQ(-1, late);
			EXPECT_TRUE(errno == ENODEV || errno == ENOENT) {
				TH_LOG("late open of %s: %s", path,
				       strerror(errno));
			}
		} else if (late >= 0 && eventfs) {
			errno = 0;
			EXPECT_EQ(-1, read(late, buf, sizeof(buf)));
			EXPECT_EQ(ENODEV, errno);
		}
		ue_close_fd(late);
		close(pathfd);
		if (!eventfs)
			EXPECT_EQ(0, ue_mod_unload_retry());
		EXPECT_FALSE(ue_mod_loaded());
		ASSERT_EQ(0, ue_mod_insmod(""));
	}
}

#define KPROBES_ENABLED "/sys/kernel/debug/kprobes/enabled"
#define KP_INST UE_TRACEFS "/instances/" PREFIX "kp"

/*
 * With every kprobe disarmed (debug/kprobes/enabled, as some hardening
 * guides do), the kprobe that guards an instance's removal does not run:
 * a purge format file of an instance removed meanwhile, held by an O_PATH
 * descriptor, still keeps the module once the unload is prepared (the
 * module finds held directories itself when it removes a call of its
 * own), and the late read after the unload reads nothing freed. Deleting
 * events and preparing the unload work as usual. Before, that format
 * file read the unloaded module's purge call: an oops in f_show() (red
 * team of Safety IV, issue 28). With eventfs nothing needs the kprobe.
 */
TEST_F(unload, kprobes_disarmed_fail_safe)
{
	static const char fmt[] = KP_INST "/events/user_events_unload/purge/format";
	bool eventfs = ue_kernel_at_least(6, 6);
	char buf[4096];
	int pathfd, fd, ret;

	rmdir(KP_INST);
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
				   "u:" PREFIX "kpoff u32 x", false));
	ASSERT_EQ(0, mkdir(KP_INST, 0755));
	pathfd = open(fmt, O_PATH | O_CLOEXEC);
	ASSERT_LE(0, pathfd);
	ASSERT_EQ(0, ue_write_file(KPROBES_ENABLED, "0", false));
	EXPECT_EQ(0, rmdir(KP_INST));
	EXPECT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
				   "!u:" PREFIX "kpoff", false));
	ret = ue_mod_unload_retry();
	EXPECT_EQ(eventfs ? 0 : -EWOULDBLOCK, ret);
	EXPECT_EQ(0, ue_write_file(KPROBES_ENABLED, "1", false));
	fd = reopen_path(pathfd, O_RDONLY);
	if (fd >= 0) {
		/* Before eventfs: the purge call, kept with the module */
		if (read(fd, buf, sizeof(buf)) < 0)
			EXPECT_TRUE(errno == ENODEV);
		close(fd);
	}
	close(pathfd);
	if (!eventfs)
		EXPECT_EQ(0, ue_mod_unload_retry());
	EXPECT_FALSE(ue_mod_loaded());
	ASSERT_EQ(0, ue_mod_insmod(""));
}

/*
 * An instance made and removed right after the load: the module's
 * reference count is back within a second and the module unloads. Before,
 * the kprobe's pool was empty until the first event was made: the
 * instance's purge directory was kept for good, with a module reference
 * (red team of Safety IV).
 */
TEST_F(unload, instance_removed_after_load)
{
	long before, now;
	int i;

	ASSERT_EQ(0, ue_mod_reload(""));
	before = ue_mod_refcnt_settled();
	ASSERT_LE(0, before);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, mkdir(KP_INST, 0755));
		ASSERT_EQ(0, rmdir(KP_INST));
	}
	now = ue_mod_refcnt_wait(before, UE_BOUND_MS(2000));
	EXPECT_GE(before, now);
	EXPECT_EQ(0, ue_mod_unload_retry());
	ASSERT_EQ(0, ue_mod_insmod(""));
}

#define PU_INST UE_TRACEFS "/instances/" PREFIX "pu"
#define PU_KEEP UE_TRACEFS "/instances/" PREFIX "pukeep"
#define PU_SYNTH PREFIX "pusyn"

/*
 * Creates and deletes (DIAG_IOCSDEL) one event that nobody enables; its
 * id, or -errno. Through the status page ABI: an enable bit would make
 * this address space pin the module until it exits.
 */
static long pu_churn_once(void)
{
	long id;
	int fd;

	fd = ue_open_data();
	if (fd < 0)
		return -errno;
	id = ue_reg(fd, PREFIX "puchurn u64 v", NULL, NULL);
	if (!id)
		id = ue_event_id(PREFIX "puchurn");
	close(fd);
	if (ue_del(PREFIX "puchurn") && id > 0)
		id = -EBUSY;
	return id;
}

#define PU_UPROBES UE_TRACEFS "/uprobe_events"
#define PU_UPROBE PREFIX "puup"

/*
 * Makes the tracing core refuse to remove an enabled event of its own
 * (probe_remove_event_call()'s busy path, which drops every instance's
 * mark), as an administrator would: "!NAME" of an enabled synthetic event,
 * or where the kernel has none (Debian 11's 5.10), "-:NAME" of an enabled
 * uprobe event (never hit: an offset in this program). 0 or -errno.
 */
static int pu_refused_removal(void)
{
	const char *enable, *del, *file;
	char exe[256], cmd[512];
	ssize_t len;
	int ret;

	if (ue_have_synth_events()) {
		file = UE_TRACEFS "/synthetic_events";
		snprintf(cmd, sizeof(cmd), PU_SYNTH " u32 x\n");
		enable = UE_TRACEFS "/events/synthetic/" PU_SYNTH "/enable";
		del = "!" PU_SYNTH "\n";
	} else {
		len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (len < 0)
			return -errno;
		exe[len] = '\0';
		file = PU_UPROBES;
		snprintf(cmd, sizeof(cmd), "p:uprobes/" PU_UPROBE " %s:0x100\n",
			 exe);
		enable = UE_TRACEFS "/events/uprobes/" PU_UPROBE "/enable";
		del = "-:uprobes/" PU_UPROBE "\n";
	}

	ret = ue_write_file(file, cmd, false);
	if (ret)
		return ret;
	ret = ue_write_file(enable, "1", false);
	if (!ret) {
		/* Refused: EBUSY. Done anyway: not what is tested */
		ret = ue_write_file(file, del, false);
		ret = ret == -EBUSY ? 0 : ret ? ret : -EEXIST;
		ue_write_file(enable, "0", false);
	}
	if (ue_write_file(file, del, false) && !ret)
		ret = -EIO;
	return ret;
}

/*
 * The records of a deleted event go at the unload from the instances where
 * it was enabled, even after the tracing core forgot those instances: the
 * core drops every instance's "clear on removal" mark when it refuses to
 * remove a busy event (an administrator deleting an enabled synthetic
 * event, or uprobe event where there are no synthetic ones). An event
 * created after the reload takes the deleted one's type id; before, it
 * printed the old records with its own fields (found by make race
 * RACE_MODE=relayout). An instance where no event of ours was ever
 * enabled keeps its records.
 */
TEST_F_TIMEOUT(unload, deleted_records_purged_at_unload, UE_TIMEOUT(600))
{
	static char lines[16][UE_LINE_MAX];
	long old_id, new_id, id;
	int i, n, w = -1, fd;
	unsigned char rec[12];
	__u64 v;

	if (!ue_have_synth_events() && access(PU_UPROBES, F_OK))
		SKIP(return,
		     "kernel without synthetic or uprobe events: no removal the core refuses");
	rmdir(PU_INST);
	rmdir(PU_KEEP);
	ue_write_file(UE_TRACEFS "/synthetic_events", "!" PU_SYNTH "\n",
		      false);
	ue_write_file(PU_UPROBES, "-:uprobes/" PU_UPROBE "\n", false);

	/* No tombstone of earlier tests: ours is the only id freed below */
	ASSERT_EQ(0, ue_mod_reload(""));
	/* Until the core hands out the lowest free id (6.1: once wrapped) */
	id = ue_churn_to_lowest_id(pu_churn_once, &i);
	TH_LOG("%d events created and deleted, then id %ld each time", i, id);
	ASSERT_LT(0, id);

	ASSERT_EQ(0, mkdir(PU_INST, 0755));
	ASSERT_EQ(0, mkdir(PU_KEEP, 0755));
	ASSERT_EQ(0, ue_write_file(PU_KEEP "/trace_marker", "keep me\n",
				   false));

	/* Records of the old event in the instance only */
	UE_ASSERT_OPEN_DATA(self->fd);
	ASSERT_EQ(0, ue_reg(self->fd, PREFIX "puold u64 v", NULL, &w));
	old_id = ue_event_id(PREFIX "puold");
	ASSERT_EQ(id, old_id);
	ASSERT_EQ(0, ue_write_file(PU_INST "/events/user_events/" PREFIX
				   "puold/enable", "1", false));
	for (i = 0; i < 3; i++) {
		v = 0x4141414141414141ULL + i;
		memcpy(rec, &w, sizeof(w));
		memcpy(rec + sizeof(w), &v, sizeof(v));
		ASSERT_EQ((ssize_t)sizeof(rec),
			  write(self->fd, rec, sizeof(rec)));
	}
	ASSERT_EQ(3, ue_file_lines(PU_INST "/trace", ": " PREFIX "puold: ",
				   lines, 16));
	ASSERT_EQ(0, ue_write_file(PU_INST "/events/user_events/" PREFIX
				   "puold/enable", "0", false));
	/* Deleted: its id stays, a tombstone */
	ue_drop_fd(&self->fd);
	ASSERT_EQ(0, ue_del(PREFIX "puold"));
	ASSERT_FALSE(ue_event_exists(PREFIX "puold"));

	/* An administrator tries to delete an enabled event: refused */
	ASSERT_EQ(0, pu_refused_removal());
	/* The records are still there, as a deleted event's */
	ASSERT_EQ(3, ue_file_lines(PU_INST "/trace", ": ", lines, 16));
	for (i = 0; i < 3; i++)
		EXPECT_STREQ(PREFIX "puold: (deleted event)", lines[i]);

	/* Unload, load: the next event takes the freed id */
	ASSERT_EQ(0, ue_mod_reload(""));
	fd = ue_open_data();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ue_reg(fd, PREFIX "punew u64 v", NULL, NULL));
	new_id = ue_event_id(PREFIX "punew");
	EXPECT_EQ(old_id, new_id);

	/* Exactly: nothing in the instance, the other one untouched */
	n = ue_file_lines(PU_INST "/trace", ": ", lines, 16);
	for (i = 0; i < n && i < 16; i++)
		TH_LOG("left in the instance: %s", lines[i]);
	EXPECT_EQ(0, n);
	ASSERT_EQ(1, ue_file_lines(PU_KEEP "/trace", ": ", lines, 16));
	EXPECT_STREQ("tracing_mark_write: keep me", lines[0]);

	close(fd);
	EXPECT_EQ(0, ue_del(PREFIX "punew"));
	EXPECT_EQ(0, rmdir(PU_INST));
	EXPECT_EQ(0, rmdir(PU_KEEP));
}

TEST_HARNESS_MAIN
