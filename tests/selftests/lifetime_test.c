// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: enablers of the remote write ABI (struct
 * user_write_reg, size 28) across the life of processes: fork() gives the
 * child its own copy of every enabler, threads and clone(CLONE_VM)
 * children share them, exec() drops them, exit() with live enablers is
 * clean, a fork storm while the event is toggled, and words whose page
 * is dropped (MADV_DONTNEED), unmapped, remapped or made read-only.
 *
 * The behaviour expected is that of upstream Linux 6.12 built with
 * CONFIG_USER_EVENTS=y. After fork() both copies of a word are
 * copy-on-write, so the kernel may update them asynchronously (through a
 * fault fixup): these tests poll words for up to a second.
 *
 * Every event created here is named "ue_l_*"; the fixture teardown
 * unregisters what is left, closes its files and checks they are gone.
 *
 * The program runs itself through /proc/self/exe as the exec() test's
 * helper when its first argument is EXEC_HELPER_ARG.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "ue_test.h"

#define PREFIX		"ue_l_"

#define FILL		0x5a
#define FILL32		0x5a5a5a5aU
#define FILL64		0x5a5a5a5a5a5a5a5aULL
/* What children write into their copy of a word: bits 0, 1, 6, 7 clear */
#define CHILD32		0x3c3c3c3cU

#define WAIT_MS		UE_BOUND_MS(1000)
#define MEM_PAGES	2

#define EXEC_HELPER_ARG	"--ue-exec-helper"
/* Where the exec() test puts its word, in the test and in the helper */
#define EXEC_ADDR	((void *)0x200000000000UL)

extern char **environ;

/* ---------------------------------------------------------------------
 * Helpers
 */

/* The word reads want within a second (WAIT_MS) */
#define ASSERT_WORD_SOON(addr, size, want) do {				\
	uint64_t __want = (want);					\
	if (ue_word_wait((addr), (size), __want, WAIT_MS) < 0)		\
		TH_LOG("word %p: %#llx, expected %#llx within %d ms",	\
		       (void *)(addr),					\
		       (unsigned long long)ue_word_read((addr), (size)),	\
		       (unsigned long long)__want, WAIT_MS);		\
	ASSERT_EQ(__want, ue_word_read((addr), (size)));			\
} while (0)

/* The word still reads want after a while (nothing touches it) */
#define ASSERT_WORD_STAYS(addr, size, want) do {			\
	ue_sleep_ms(200);							\
	ASSERT_EQ((uint64_t)(want), ue_word_read((addr), (size)));		\
} while (0)

/* Event @name enabled, then disabled: the word @w reads @on, then @off */
static void assert_toggles(struct __test_metadata *_metadata, const char *name,
			   void *w, uint64_t on, uint64_t off)
{
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(w, 4, on);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(w, 4, off);
}

static char *map_mem(size_t pages)
{
	return ue_map_filled(pages, FILL, PROT_READ | PROT_WRITE);
}

static bool event_wait(const char *name, bool exists, int ms)
{
	return ue_event_wait(name, exists, ms);
}

/* ---------------------------------------------------------------------
 * Peers: a forked (or exec'd) process that serves requests about its
 * copy of a word over a pair of pipes
 */
struct req {
	char cmd;
	uint64_t arg;
};

enum {
	CMD_READ = 'r',		/* reply: the word */
	CMD_WRITE = 'w',	/* store arg in the word; reply 0 */
	CMD_REG = 'g',		/* register the word; reply 0 or -errno */
	CMD_UNREG = 'u',	/* unregister the word; reply 0 or -errno */
	CMD_QUIT = 'q',		/* exit(0), no reply */
};

struct peer_word {
	char *addr;
	int size;
	int bit;
	const char *desc;
	int fd;			/* data fd, opened on first need if < 0 */
};

static bool read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += n;
	}

	return true;
}

static bool write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len;
}

/* The peer side: serve requests until CMD_QUIT or EOF */
static void __attribute__((noreturn)) peer_serve(int in, int out,
						 struct peer_word *pw)
{
	struct req rq;

	while (read_full(in, &rq, sizeof(rq))) {
		int64_t reply = 0;

		switch (rq.cmd) {
		case CMD_READ:
			reply = (int64_t)ue_word_read(pw->addr, pw->size);
			break;
		case CMD_WRITE:
			ue_word_write(pw->addr, pw->size, rq.arg);
			break;
		case CMD_REG:
			if (pw->fd < 0)
				pw->fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
			reply = pw->fd < 0 ? -errno :
				ue_wreg(pw->fd, pw->desc, pw->addr, pw->size,
					pw->bit, 0, NULL);
			break;
		case CMD_UNREG:
			if (pw->fd < 0)
				pw->fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
			reply = pw->fd < 0 ? -errno :
				ue_wunreg(pw->fd, pw->addr, pw->bit);
			break;
		case CMD_QUIT:
			_exit(0);
		default:
			_exit(3);
		}
		if (!write_full(out, &reply, sizeof(reply)))
			_exit(4);
	}
	_exit(0);
}

struct peer {
	pid_t pid;
	int to;		/* requests */
	int from;	/* replies */
};

/*
 * Fork a peer serving pw (its copy of the memory). With exec_desc, the
 * peer is the exec helper instead, which gets exec_desc, and pw (if not
 * NULL) is registered before the exec().
 */
static int peer_start(struct peer *p, struct peer_word *pw, const char *exec_desc)
{
	int req[2], rep[2];

	if (pipe2(req, O_CLOEXEC) || pipe2(rep, O_CLOEXEC))
		return -errno;

	fflush(stdout);
	fflush(stderr);
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (exec_desc) {
			/* An event only this image registers, on a CLOEXEC fd */
			if (pw) {
				int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);

				if (fd < 0 || ue_wreg(fd, pw->desc, pw->addr, pw->size,
						      pw->bit, 0, NULL))
					_exit(8);
			}
			if (dup2(req[0], 0) < 0 || dup2(rep[1], 1) < 0)
				_exit(5);
			execl("/proc/self/exe", "lifetime_test", EXEC_HELPER_ARG,
			      exec_desc, (char *)NULL);
			_exit(6);
		}
		peer_serve(req[0], rep[1], pw);
	}
	close(req[0]);
	close(rep[1]);
	p->to = req[1];
	p->from = rep[0];

	return 0;
}

/* Send a request; returns the reply (INT64_MIN if the peer is gone) */
static int64_t peer_call(struct peer *p, char cmd, uint64_t arg)
{
	struct req rq;
	int64_t reply;

	memset(&rq, 0, sizeof(rq));
	rq.cmd = cmd;
	rq.arg = arg;
	if (!write_full(p->to, &rq, sizeof(rq)))
		return INT64_MIN;
	if (cmd == CMD_QUIT)
		return 0;
	if (!read_full(p->from, &reply, sizeof(reply)))
		return INT64_MIN;

	return reply;
}

/* Wait up to ms for the peer's word to read want; returns its value */
static uint64_t peer_wait_word(struct peer *p, uint64_t want, int ms)
{
	uint64_t val = 0;
	int waited;

	for (waited = 0; waited <= ms; waited += 5) {
		val = (uint64_t)peer_call(p, CMD_READ, 0);
		if (val == want)
			break;
		ue_sleep_ms(5);
	}

	return val;
}

/* Stop the peer; returns its wait status */
static int peer_stop(struct peer *p)
{
	int status = -1;

	if (p->pid <= 0)
		return -1;
	peer_call(p, CMD_QUIT, 0);
	close(p->to);
	close(p->from);
	if (waitpid(p->pid, &status, 0) != p->pid)
		status = -1;
	p->pid = 0;

	return status;
}

/* ---------------------------------------------------------------------
 * The exec() helper: the test image exec'd with EXEC_HELPER_ARG <desc>
 */
static int exec_helper(int argc, char **argv)
{
	struct peer_word pw = { .size = 4, .bit = 0, .fd = -1 };
	long page = sysconf(_SC_PAGESIZE);
	char *mem;

	if (argc < 3)
		return 2;
	pw.desc = argv[2];

	/* The same address as the word of the process before exec() */
	mem = mmap(EXEC_ADDR, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (mem != EXEC_ADDR)
		return 7;
	memset(mem, FILL, page);
	pw.addr = mem;

	peer_serve(0, 1, &pw);
}

/* ---------------------------------------------------------------------
 * Fixture
 */
#define MAX_PEERS	4

FIXTURE(life) {
	int fd;
	char *mem;
	size_t mem_len;
	struct ue_enablers regs;
	struct peer peers[MAX_PEERS];
};

FIXTURE_SETUP(life)
{
	self->regs.n = 0;
	memset(self->peers, 0, sizeof(self->peers));
	self->mem_len = MEM_PAGES * sysconf(_SC_PAGESIZE);
	self->mem = map_mem(MEM_PAGES);
	ASSERT_NE(NULL, self->mem);

	/*
	 * A test that fails an ASSERT exits without its teardown (with
	 * -O2 the harness's "child" variable does not survive longjmp()):
	 * remove what such a test may have left behind.
	 */
	ue_cleanup_events(PREFIX);

	UE_ASSERT_OPEN_DATA(self->fd);
}

FIXTURE_TEARDOWN(life)
{
	int i;

	for (i = 0; i < MAX_PEERS; i++) {
		if (self->peers[i].pid > 0) {
			kill(self->peers[i].pid, SIGKILL);
			waitpid(self->peers[i].pid, NULL, 0);
			close(self->peers[i].to);
			close(self->peers[i].from);
		}
	}
	ue_enablers_unreg_all(&self->regs);
	ue_close_fd(self->fd);
	if (self->mem)
		munmap(self->mem, self->mem_len);

	EXPECT_EQ(0, ue_cleanup_events(PREFIX));
}

static int reg(FIXTURE_DATA(life) *self, const char *desc, const void *addr,
	       int size, int bit)
{
	int ret = ue_wreg(self->fd, desc, addr, size, bit, 0, NULL);

	if (!ret)
		ue_enablers_add(&self->regs, addr, bit);

	return ret;
}

static int unreg(FIXTURE_DATA(life) *self, const void *addr, int bit)
{
	ue_enablers_forget(&self->regs, addr, bit);

	return ue_wunreg(self->fd, addr, bit);
}

/*
 * Close the data fd at the end of a test: with no registration left in
 * any process (children exited, exec'd or unregistered), the event must
 * go away by itself. An enabler leaked by fork/exec/exit would keep it.
 */
static bool close_and_gone(FIXTURE_DATA(life) *self, const char *name)
{
	ue_drop_fd(&self->fd);

	return event_wait(name, false, WAIT_MS);
}

/* ---------------------------------------------------------------------
 * fork()
 */

/*
 * self->mem's word (FILL32, the enable bit clear) registered as @desc, and
 * @child forked with it, whose copy of the word then reads CHILD32
 */
static struct peer *fork_word(struct __test_metadata *_metadata,
			      FIXTURE_DATA(life) *self, const char *desc)
{
	struct peer *child = &self->peers[0];
	struct peer_word pw = {
		.addr = self->mem, .size = 4, .bit = 0, .desc = desc, .fd = -1
	};

	ue_word_write(self->mem, 4, FILL32 & ~1U);
	ASSERT_EQ(0, reg(self, desc, self->mem, 4, 0));
	ASSERT_EQ(0, peer_start(child, &pw, NULL));
	ASSERT_EQ(0, peer_call(child, CMD_WRITE, CHILD32));
	return child;
}

/* The parent's word @w and @child's copy both come to show the bit @on */
static void assert_both(struct __test_metadata *_metadata, char *w,
			struct peer *child, bool on)
{
	uint32_t mine = on ? FILL32 | 1 : FILL32 & ~1U;
	uint32_t its = on ? CHILD32 | 1 : CHILD32;

	ASSERT_WORD_SOON(w, 4, mine);
	ASSERT_EQ(its, peer_wait_word(child, its, WAIT_MS));
}

/* fork_word(), then event @name enabled: both words show it */
static struct peer *fork_enabled(struct __test_metadata *_metadata,
				 FIXTURE_DATA(life) *self, const char *desc,
				 const char *name)
{
	struct peer *child = fork_word(_metadata, self, desc);

	ASSERT_EQ(0, ue_enable(name, true));
	assert_both(_metadata, self->mem, child, true);
	return child;
}

/*
 * The end of a fork test: @child unregisters and stops, the parent
 * unregisters too if it @still_registered, and then the event goes away
 */
static void fork_end(struct __test_metadata *_metadata,
		     FIXTURE_DATA(life) *self, struct peer *child,
		     const char *name, bool still_registered)
{
	ASSERT_EQ(0, peer_call(child, CMD_UNREG, 0));
	ASSERT_EQ(0, peer_stop(child));
	if (still_registered)
		ASSERT_EQ(0, unreg(self, self->mem, 0));
	ASSERT_TRUE(close_and_gone(self, name));
}

TEST_F(life, fork_child_has_own_copy)
{
	const char *desc = PREFIX "fork u32 a", *name = PREFIX "fork";
	char *w = self->mem;
	struct peer *child = fork_word(_metadata, self, desc);
	int perf_fd;

	/* The child's copy of the word is its own */
	ASSERT_EQ((int64_t)CHILD32, peer_call(child, CMD_READ, 0));
	ASSERT_EQ(FILL32 & ~1U, ue_word_read(w, 4));

	/* ... and it inherited the enabler */
	ASSERT_EQ(-EADDRINUSE, peer_call(child, CMD_REG, 0));

	/* Both copies follow the event, each keeping its other bits */
	ASSERT_EQ(0, ue_enable(name, true));
	assert_both(_metadata, w, child, true);
	ASSERT_EQ(0, ue_enable(name, false));
	assert_both(_metadata, w, child, false);

	/* perf too */
	perf_fd = ue_perf_open(name);
	ASSERT_LE(0, perf_fd);
	assert_both(_metadata, w, child, true);
	close(perf_fd);
	assert_both(_metadata, w, child, false);

	fork_end(_metadata, self, child, name, true);
}

TEST_F(life, fork_child_unreg_keeps_parent)
{
	const char *desc = PREFIX "cunreg u32 a", *name = PREFIX "cunreg";
	char *w = self->mem;
	struct peer *child = fork_enabled(_metadata, self, desc, name);

	/* The child unregisters: its bit is cleared, the parent's is not */
	ASSERT_EQ(0, peer_call(child, CMD_UNREG, 0));
	ASSERT_EQ(CHILD32, peer_wait_word(child, CHILD32, WAIT_MS));
	ASSERT_WORD_STAYS(w, 4, FILL32 | 1);
	ASSERT_EQ(-ENOENT, peer_call(child, CMD_UNREG, 0));

	/* The parent's enabler still works, the child's copy is left alone */
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(w, 4, FILL32 & ~1U);
	ASSERT_EQ(0, peer_call(child, CMD_WRITE, CHILD32 | 1));
	assert_toggles(_metadata, name, w, FILL32 | 1, FILL32 & ~1U);
	ue_sleep_ms(200);
	ASSERT_EQ((int64_t)(CHILD32 | 1), peer_call(child, CMD_READ, 0));

	/* The child may register the address and bit again */
	ASSERT_EQ(0, peer_call(child, CMD_REG, 0));
	ASSERT_EQ(CHILD32, peer_wait_word(child, CHILD32, WAIT_MS));
	fork_end(_metadata, self, child, name, true);
}

TEST_F(life, fork_parent_unreg_keeps_child)
{
	const char *desc = PREFIX "punreg u32 a", *name = PREFIX "punreg";
	struct peer *child = fork_enabled(_metadata, self, desc, name);
	char *w = self->mem;

	/* The parent unregisters: its bit is cleared, the child's is not */
	ASSERT_EQ(0, unreg(self, w, 0));
	ASSERT_WORD_SOON(w, 4, FILL32 & ~1U);
	ue_sleep_ms(200);
	ASSERT_EQ((int64_t)(CHILD32 | 1), peer_call(child, CMD_READ, 0));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->fd, w, 0));

	/* The child's enabler still works, the parent's word is left alone */
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(CHILD32, peer_wait_word(child, CHILD32, WAIT_MS));
	ue_word_write(w, 4, FILL32 | 1);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(CHILD32 | 1, peer_wait_word(child, CHILD32 | 1, WAIT_MS));
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(CHILD32, peer_wait_word(child, CHILD32, WAIT_MS));
	ASSERT_WORD_STAYS(w, 4, FILL32 | 1);
	ue_word_write(w, 4, FILL32 & ~1U);

	fork_end(_metadata, self, child, name, false);
}

TEST_F(life, fork_child_of_child)
{
	const char *desc = PREFIX "fork2 u32 a", *name = PREFIX "fork2";
	char *w = self->mem;
	int pipefd[2], status;
	uint32_t seen[2] = { 0, 0 };
	pid_t pid;

	ue_word_write(w, 4, FILL32 & ~1U);
	ASSERT_EQ(0, reg(self, desc, w, 4, 0));
	ASSERT_EQ(0, pipe(pipefd));

	/* The grandchild also inherits the enabler, through the child */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pid_t gc;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		gc = fork();
		if (gc == 0) {
			ue_word_write(w, 4, CHILD32);
			if (ue_enable(name, true))
				_exit(1);
			seen[0] = ue_word_wait(w, 4, CHILD32 | 1, WAIT_MS) < 0 ?
				  (uint32_t)ue_word_read(w, 4) : CHILD32 | 1;
			if (ue_enable(name, false))
				_exit(1);
			seen[1] = ue_word_wait(w, 4, CHILD32, WAIT_MS) < 0 ?
				  (uint32_t)ue_word_read(w, 4) : CHILD32;
			if (!write_full(pipefd[1], seen, sizeof(seen)))
				_exit(1);
			_exit(0);
		}
		if (gc < 0 || waitpid(gc, &status, 0) != gc)
			_exit(1);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	}
	close(pipefd[1]);
	ASSERT_TRUE(read_full(pipefd[0], seen, sizeof(seen)));
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(CHILD32 | 1, seen[0]);
	ASSERT_EQ(CHILD32, seen[1]);

	/* The parent's word followed too */
	ASSERT_WORD_SOON(w, 4, FILL32 & ~1U);
	assert_toggles(_metadata, name, w, FILL32 | 1, FILL32 & ~1U);
	ASSERT_EQ(0, unreg(self, w, 0));
	ASSERT_TRUE(close_and_gone(self, name));
}

/* ---------------------------------------------------------------------
 * Threads and clone(CLONE_VM)
 */

struct thread_arg {
	int fd;
	const char *desc;
	uint32_t *w;
	int dup_result;		/* registering (w, 0) again */
	int reg_result;		/* registering (w, bit) */
	int bit;
};

static void *thread_fn(void *p)
{
	struct thread_arg *a = p;

	a->dup_result = ue_wreg(a->fd, a->desc, a->w, 4, 0, 0, NULL);
	a->reg_result = ue_wreg(a->fd, a->desc, a->w, 4, a->bit, 0, NULL);

	return NULL;
}

static int clone_fn(void *p)
{
	struct thread_arg *a = p;

	a->dup_result = ue_wreg(a->fd, a->desc, a->w, 4, 0, 0, NULL);
	a->reg_result = ue_wreg(a->fd, a->desc, a->w, 4, a->bit, 0, NULL);

	return 0;
}

TEST_F(life, thread_shares_enablers)
{
	const char *desc = PREFIX "thread u32 a", *name = PREFIX "thread";
	uint32_t *w = (uint32_t *)self->mem;
	struct thread_arg a = { .fd = self->fd, .desc = desc, .w = w, .bit = 1 };
	pthread_t t;

	*w = FILL32 & ~3U;
	ASSERT_EQ(0, reg(self, desc, w, 4, 0));

	/* A thread sees the enabler; what it registers outlives it */
	ASSERT_EQ(0, pthread_create(&t, NULL, thread_fn, &a));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(-EADDRINUSE, a.dup_result);
	ASSERT_EQ(0, a.reg_result);
	ue_enablers_add(&self->regs, w, 1);

	assert_toggles(_metadata, name, w, FILL32 | 3, FILL32 & ~3U);

	/* One set of enablers: the thread's one is unregistered here */
	ASSERT_EQ(0, unreg(self, w, 1));
	ASSERT_EQ(-ENOENT, ue_wunreg(self->fd, w, 1));
	assert_toggles(_metadata, name, w, (FILL32 & ~3U) | 1, FILL32 & ~3U);
	ASSERT_EQ(0, unreg(self, w, 0));
	ASSERT_TRUE(close_and_gone(self, name));
}

TEST_F(life, clone_vm_shares_enablers)
{
	const char *desc = PREFIX "clonevm u32 a", *name = PREFIX "clonevm";
	uint32_t *w = (uint32_t *)self->mem;
	struct thread_arg a = { .fd = self->fd, .desc = desc, .w = w, .bit = 2,
				.dup_result = 1, .reg_result = 1 };
	size_t stack_size = 256 * 1024;
	int status;
	char *stack;
	pid_t pid;

	*w = FILL32 & ~5U;
	ASSERT_EQ(0, reg(self, desc, w, 4, 0));

	stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	ASSERT_NE(MAP_FAILED, stack);
	pid = clone(clone_fn, stack + stack_size, CLONE_VM | SIGCHLD, &a);
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	munmap(stack, stack_size);

	/* The clone shared the enablers, and its own outlives it */
	ASSERT_EQ(-EADDRINUSE, a.dup_result);
	ASSERT_EQ(0, a.reg_result);
	ue_enablers_add(&self->regs, w, 2);
	assert_toggles(_metadata, name, w, FILL32 | 5, FILL32 & ~5U);

	ASSERT_EQ(0, unreg(self, w, 2));
	ASSERT_EQ(0, unreg(self, w, 0));
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_STAYS(w, 4, FILL32 & ~5U);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_TRUE(close_and_gone(self, name));
}

TEST_F(life, vfork_exec_keeps_enablers)
{
	const char *desc = PREFIX "vfork u32 a", *name = PREFIX "vfork";
	char *const argv[] = { "true", NULL };
	char *w = self->mem;
	int i, status;
	pid_t pid;

	ue_word_write(w, 4, FILL32 & ~1U);
	ASSERT_EQ(0, reg(self, desc, w, 4, 0));

	/* posix_spawn() shares the memory until the child's exec() */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, posix_spawn(&pid, "/bin/true", NULL, NULL, argv,
					 environ));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, status);
	}

	ASSERT_EQ(-EADDRINUSE, ue_wreg(self->fd, desc, w, 4, 0, 0, NULL));
	assert_toggles(_metadata, name, w, FILL32 | 1, FILL32 & ~1U);
	ASSERT_EQ(0, unreg(self, w, 0));
	ASSERT_TRUE(close_and_gone(self, name));
}

/* ---------------------------------------------------------------------
 * exec() and exit()
 */

TEST_F(life, exec_drops_enablers)
{
	const char *desc = PREFIX "exec u32 a", *name = PREFIX "exec";
	struct peer_word pre = { .size = 4, .bit = 0, .fd = -1,
				 .desc = PREFIX "exec_only u32 a" };
	long page = sysconf(_SC_PAGESIZE);
	struct peer *helper = &self->peers[0];
	char *w;

	w = mmap(EXEC_ADDR, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (w != EXEC_ADDR)
		SKIP(return, "cannot map a page at %p", EXEC_ADDR);
	memset(w, FILL, page);
	ue_word_write(w, 4, FILL32 & ~1U);
	ASSERT_EQ(0, reg(self, desc, w, 4, 0));

	/*
	 * A child inherits the enabler, registers another event of its own,
	 * then runs a new image
	 */
	pre.addr = w + 64;
	ASSERT_EQ(0, peer_start(helper, &pre, desc));
	ASSERT_EQ((int64_t)FILL32, peer_call(helper, CMD_READ, 0)) {
		TH_LOG("no answer from the exec'd helper");
	}

	/* The old image's enablers and fd are gone: so is its own event */
	ASSERT_TRUE(event_wait(PREFIX "exec_only", false, WAIT_MS));
	ASSERT_EQ(FILL32, ue_word_read(w + 64, 4));

	/* The new image's word at the same address is not touched */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(w, 4, FILL32 | 1);
	ue_sleep_ms(200);
	ASSERT_EQ((int64_t)FILL32, peer_call(helper, CMD_READ, 0));
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(w, 4, FILL32 & ~1U);

	/* It has no enablers: the address and bit are free there */
	ASSERT_EQ(-ENOENT, peer_call(helper, CMD_UNREG, 0));
	ASSERT_EQ(0, peer_call(helper, CMD_REG, 0));
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_EQ(FILL32 | 1, peer_wait_word(helper, FILL32 | 1, WAIT_MS));
	ASSERT_WORD_SOON(w, 4, FILL32 | 1);

	/* It exits with the enabler in place and the event enabled */
	ASSERT_EQ(0, peer_stop(helper));
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(w, 4, FILL32 & ~1U);
	assert_toggles(_metadata, name, w, FILL32 | 1, FILL32 & ~1U);
	ASSERT_EQ(0, unreg(self, w, 0));
	munmap(w, page);
	ASSERT_TRUE(close_and_gone(self, name));
}

TEST_F(life, exit_with_live_enablers)
{
	const char *desc = PREFIX "exit u32 a", *name = PREFIX "exit";
	char *w = self->mem, *cw = self->mem + 64;
	int pipefd[2], i, status;
	pid_t pid;

	ue_word_write(w, 4, FILL32 & ~1U);
	ASSERT_EQ(0, reg(self, desc, w, 4, 0));

	/* Children exit with enablers of their own, enabled or not */
	for (i = 0; i < 4; i++) {
		bool enabled = i & 1;
		char c = 0;

		ASSERT_EQ(0, pipe(pipefd));
		if (enabled)
			ASSERT_EQ(0, ue_enable(name, true));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			int fd = i & 2 ? ue_open_data() : self->fd;
			char *mine = map_mem(1);

			close(pipefd[0]);
			/* In memory shared with the parent (COW) and its own */
			if (fd < 0 || !mine ||
			    ue_wreg(fd, desc, cw, 4, 3, 0, NULL) ||
			    ue_wreg(fd, desc, mine + 8, 8, 63, 0, NULL))
				_exit(1);
			if (enabled &&
			    (ue_word_wait(cw, 4, FILL32 | 8, WAIT_MS) < 0 ||
			     ue_word_wait(mine + 8, 8, FILL64 | (1ULL << 63), WAIT_MS) < 0))
				_exit(2);
			c = 'x';
			if (!write_full(pipefd[1], &c, 1))
				_exit(1);
			_exit(0);
		}
		close(pipefd[1]);
		ASSERT_TRUE(read_full(pipefd[0], &c, 1));
		close(pipefd[0]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, status);

		if (enabled) {
			ASSERT_WORD_SOON(w, 4, FILL32 | 1);
			ASSERT_EQ(0, ue_enable(name, false));
		}
		ASSERT_WORD_SOON(w, 4, FILL32 & ~1U);
		assert_toggles(_metadata, name, w, FILL32 | 1, FILL32 & ~1U);
		/* The parent's copy of the child's word was never registered */
		ASSERT_EQ(FILL32, ue_word_read(cw, 4));
	}

	ASSERT_EQ(0, unreg(self, w, 0));
	ASSERT_TRUE(close_and_gone(self, name));
}

TEST_F(life, exit_deletes_event)
{
	const char *name = PREFIX "exitdel";
	int ready[2], go[2], status, round;
	pid_t pid;

	for (round = 0; round < 2; round++) {
		char c = 0;

		ASSERT_EQ(0, pipe(ready));
		ASSERT_EQ(0, pipe(go));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			int fd = ue_open_data();

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(ready[0]);
			close(go[1]);
			/* Neither unregistered nor closed before exit */
			if (fd < 0 || ue_wreg(fd, PREFIX "exitdel u32 a",
					      self->mem, 4, 0, 0, NULL))
				_exit(1);
			c = 'x';
			if (!write_full(ready[1], &c, 1))
				_exit(1);
			/* Until the parent has looked (and enabled in round 1) */
			if (read(go[0], &c, 1) != 0)
				_exit(1);
			if (round == 1 &&
			    ue_word_wait(self->mem, 4, FILL32 | 1, WAIT_MS) < 0)
				_exit(2);
			_exit(0);
		}
		close(ready[1]);
		close(go[0]);
		ASSERT_TRUE(read_full(ready[0], &c, 1));
		close(ready[0]);
		ASSERT_TRUE(ue_event_exists(name));
		if (round == 1)
			ASSERT_EQ(0, ue_enable(name, true));
		close(go[1]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, status);

		if (round == 1) {
			/* ftrace still holds it */
			ue_sleep_ms(300);
			ASSERT_TRUE(ue_event_exists(name));
			ASSERT_EQ(0, ue_enable(name, false));
		}
		ASSERT_TRUE(event_wait(name, false, WAIT_MS));
	}
}

#define KPROBES_ENABLED "/sys/kernel/debug/kprobes/enabled"

/*
 * With every kprobe disarmed (debug/kprobes/enabled): an exiting process's
 * events are found by the scan that every exit and exec runs (tracepoint
 * probes, not kprobes), and still go within the usual bound: no leak, no
 * crash. (The module's exit once had a kprobe of its own.)
 */
TEST_F(life, exit_with_kprobes_disarmed)
{
	const char *name = PREFIX "kpexit";
	int status, armed;
	bool gone;
	pid_t pid;

	ASSERT_EQ(0, ue_write_file(KPROBES_ENABLED, "0", false));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = ue_open_data();

		/* Neither unregistered nor closed before exit */
		if (fd < 0 || ue_wreg(fd, PREFIX "kpexit u32 a", self->mem, 4,
				      0, 0, NULL))
			_exit(1);
		_exit(0);
	}
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	/* Another exit: the scan runs */
	pid = fork();
	if (!pid)
		_exit(0);
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	gone = event_wait(name, false, WAIT_MS);
	armed = ue_write_file(KPROBES_ENABLED, "1", false);
	EXPECT_TRUE(gone);
	ASSERT_EQ(0, armed);
}

/* ---------------------------------------------------------------------
 * Fork storm
 */

/* Shared by the fork storm's parent, its toggler and its children */
struct storm {
	int stop;		/* the toggler ends */
	int pause;		/* the toggler stops toggling... */
	int paused;		/* ...and says so */
	int on1, on2;		/* the settled state of storm1 and storm2 */
};

static int storm_get(int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void storm_set(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/*
 * A child of the storm (number k): its words once the parent has settled
 * the events at sh->on1, sh->on2 and set each one off and on again (so
 * that every enabler was written since). Its copies of the enablers must
 * be there and live: w1 bit 0 follows storm1, w1 bit 1 storm2, w2 bit 63
 * storm1; nothing else of the words changes. What it did before (k % 4):
 * 1 unregistered w1 bit 0 (frozen then), 2 registered cw bit 5 for
 * storm2, 3 wrote 0 to w1. Returns 0, or which check failed (its exit
 * status).
 */
static int storm_child_check(struct storm *sh, int k, char *w1, char *w2,
			     char *cw)
{
	__u64 want1, want2, wantc, mask1 = ~0ULL;
	int on1 = storm_get(&sh->on1), on2 = storm_get(&sh->on2);

	want1 = (k % 4 == 3 ? 0 : FILL32 & ~3U) | on1 | on2 << 1;
	want2 = (FILL64 & ~(1ULL << 63)) | (__u64)on1 << 63;
	wantc = k % 4 == 2 ? FILL32 | on2 << 5 : FILL32;
	if (k % 4 == 1) {
		/* Bit 0 kept what it had at the unregistration */
		mask1 = ~1ULL;
		want1 &= mask1;
	}
	if (ue_word_wait(w2, 8, want2, WAIT_MS) < 0) {
		fprintf(stderr, "# storm child %d: w2 %#llx, expected %#llx\n", k,
			(unsigned long long)ue_word_read(w2, 8),
			(unsigned long long)want2);
		return 11;
	}
	if (k % 4 == 1) {
		int waited;

		for (waited = 0; waited <= WAIT_MS; waited += 5) {
			if ((ue_word_read(w1, 4) & mask1) == want1)
				break;
			ue_sleep_ms(5);
		}
	} else {
		ue_word_wait(w1, 4, want1, WAIT_MS);
	}
	if ((ue_word_read(w1, 4) & mask1) != want1) {
		fprintf(stderr, "# storm child %d: w1 %#llx, expected %#llx (mask %#llx)\n",
			k, (unsigned long long)ue_word_read(w1, 4),
			(unsigned long long)want1, (unsigned long long)mask1);
		return 12;
	}
	if (ue_word_wait(cw, 4, wantc, WAIT_MS) < 0) {
		fprintf(stderr, "# storm child %d: cw %#llx, expected %#llx\n", k,
			(unsigned long long)ue_word_read(cw, 4),
			(unsigned long long)wantc);
		return 13;
	}

	return 0;
}

TEST_F_TIMEOUT(life, fork_storm, UE_TIMEOUT(240))
{
	const char *desc1 = PREFIX "storm1 u32 a", *name1 = PREFIX "storm1";
	const char *desc2 = PREFIX "storm2 u64 b", *name2 = PREFIX "storm2";
	char *w1 = self->mem, *w2 = self->mem + 8, *cw = self->mem + 64;
	struct storm *sh;
	pid_t toggler, pids[20];
	int i, j, status, forks = 0, go[2], ready[2];
	char c;

	ue_word_write(w1, 4, FILL32 & ~3U);
	ue_word_write(w2, 8, FILL64 & ~(1ULL << 63));
	ASSERT_EQ(0, reg(self, desc1, w1, 4, 0));
	ASSERT_EQ(0, reg(self, desc2, w1, 4, 1));
	ASSERT_EQ(0, reg(self, desc1, w2, 8, 63));

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));

	/* Toggle both events until told to stop, pausing when told to */
	toggler = fork();
	ASSERT_LE(0, toggler);
	if (toggler == 0) {
		bool on = true;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (!storm_get(&sh->stop)) {
			if (storm_get(&sh->pause)) {
				storm_set(&sh->paused, 1);
				while (storm_get(&sh->pause) && !storm_get(&sh->stop))
					usleep(1000);
				storm_set(&sh->paused, 0);
				continue;
			}
			if (ue_enable(name1, on) || ue_enable(name2, !on))
				_exit(1);
			on = !on;
		}
		_exit(ue_enable(name1, false) || ue_enable(name2, false));
	}

	/*
	 * 200 children in batches of 20, forked while the events toggle,
	 * doing different things; then the toggler pauses, the events are
	 * settled (each state of the two in turn) and every child checks
	 * its own words.
	 */
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, pipe(go));
		ASSERT_EQ(0, pipe(ready));
		for (j = 0; j < 20; j++) {
			int k = i * 20 + j, ret = 0;

			pids[j] = fork();
			ASSERT_LE(0, pids[j]);
			if (pids[j] == 0) {
				close(go[1]);
				close(ready[0]);
				switch (k % 4) {
				case 0:
					break;
				case 1:
					ret = ue_wunreg(self->fd, w1, 0);
					break;
				case 2:
					ret = ue_wreg(self->fd, desc2, cw, 4, 5, 0, NULL);
					break;
				case 3:
					ue_word_write(w1, 4, 0);
					usleep(1000);
					break;
				}
				if (ret) {
					fprintf(stderr, "# storm child %d: %s: %s\n", k,
						k % 4 == 1 ? "unregister" : "register",
						strerror(-ret));
					_exit(10);
				}
				/* Done; then wait until the events are settled */
				c = 'r';
				if (!write_full(ready[1], &c, 1) ||
				    read(go[0], &c, 1) != 0)
					_exit(9);
				_exit(storm_child_check(sh, k, w1, w2, cw));
			}
			forks++;
		}
		close(go[0]);
		close(ready[1]);
		for (j = 0; j < 20; j++)
			ASSERT_TRUE(read_full(ready[0], &c, 1));
		close(ready[0]);

		storm_set(&sh->pause, 1);
		while (!storm_get(&sh->paused))
			usleep(1000);
		storm_set(&sh->on1, i & 1);
		storm_set(&sh->on2, (i >> 1) & 1);
		/* Off and on again: every enabler is written after the forks */
		ASSERT_EQ(0, ue_enable(name1, !(i & 1)));
		ASSERT_EQ(0, ue_enable(name2, !((i >> 1) & 1)));
		ASSERT_EQ(0, ue_enable(name1, i & 1));
		ASSERT_EQ(0, ue_enable(name2, (i >> 1) & 1));
		close(go[1]);

		for (j = 0; j < 20; j++) {
			ASSERT_EQ(pids[j], waitpid(pids[j], &status, 0));
			ASSERT_EQ(0, status) {
				TH_LOG("storm child %d (batch %d, state %d %d): exit status %d",
				       i * 20 + j, i, i & 1, (i >> 1) & 1,
				       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			}
		}
		storm_set(&sh->pause, 0);
	}
	ASSERT_EQ(200, forks);

	storm_set(&sh->stop, 1);
	ASSERT_EQ(toggler, waitpid(toggler, &status, 0));
	ASSERT_EQ(0, status);
	munmap(sh, sizeof(*sh));

	/* Whatever happened, the parent's words end in the right state */
	ASSERT_EQ(0, ue_enable(name1, false));
	ASSERT_EQ(0, ue_enable(name2, false));
	ASSERT_WORD_SOON(w1, 4, FILL32 & ~3U);
	ASSERT_WORD_SOON(w2, 8, FILL64 & ~(1ULL << 63));
	ASSERT_EQ(0, ue_enable(name1, true));
	ASSERT_WORD_SOON(w1, 4, (FILL32 & ~3U) | 1);
	ASSERT_WORD_SOON(w2, 8, FILL64 | (1ULL << 63));
	ASSERT_EQ(0, ue_enable(name2, true));
	ASSERT_WORD_SOON(w1, 4, FILL32 | 3);
	ASSERT_EQ(0, ue_enable(name1, false));
	ASSERT_EQ(0, ue_enable(name2, false));
	ASSERT_WORD_SOON(w1, 4, FILL32 & ~3U);
	ASSERT_WORD_SOON(w2, 8, FILL64 & ~(1ULL << 63));
	ASSERT_EQ(FILL32, ue_word_read(cw, 4));

	ASSERT_EQ(0, unreg(self, w1, 0));
	ASSERT_EQ(0, unreg(self, w1, 1));
	ASSERT_EQ(0, unreg(self, w2, 63));
	ASSERT_TRUE(close_and_gone(self, name1));
	ASSERT_TRUE(event_wait(name2, false, WAIT_MS));
}

/* ---------------------------------------------------------------------
 * Pages dropped, unmapped, remapped, read-only
 */

TEST_F(life, dontneed_page_faults_back)
{
	const char *desc = PREFIX "dontneed u32 a", *name = PREFIX "dontneed";
	long page = sysconf(_SC_PAGESIZE);
	char *w = self->mem + 12, *w64 = self->mem + page + 16;

	ue_word_write(w, 4, FILL32 & ~8U);
	ue_word_write(w64, 8, FILL64 & ~(1ULL << 63));
	ASSERT_EQ(0, reg(self, desc, w, 4, 3));
	ASSERT_EQ(0, reg(self, desc, w64, 8, 63));

	/* Dropped private anonymous pages come back as zeros */
	ASSERT_EQ(0, madvise(self->mem, self->mem_len, MADV_DONTNEED));
	ASSERT_EQ(0U, ue_word_read(w, 4));
	ASSERT_EQ(0U, ue_word_read(w64, 8));
	ASSERT_EQ(0, madvise(self->mem, self->mem_len, MADV_DONTNEED));

	/* Enabling faults them in (asynchronously) and sets the bits */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(w, 4, 8);
	ASSERT_WORD_SOON(w64, 8, 1ULL << 63);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(w, 4, 0);
	ASSERT_WORD_SOON(w64, 8, 0);

	/* Dropped while enabled: set again by the next enable */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(w, 4, 8);
	ASSERT_EQ(0, madvise(self->mem, self->mem_len, MADV_DONTNEED));
	ASSERT_EQ(0U, ue_word_read(w, 4));
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_STAYS(w, 4, 0);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(w, 4, 8);
	ASSERT_WORD_SOON(w64, 8, 1ULL << 63);

	/* Dropped, then disabled: the bit cleared, other bits kept */
	ASSERT_EQ(0, madvise(self->mem, self->mem_len, MADV_DONTNEED));
	ue_word_write(w, 4, 0xffffffffU);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(w, 4, 0xffffffffU & ~8U);
	ASSERT_WORD_SOON(w64, 8, 0);

	ASSERT_EQ(0, unreg(self, w, 3));
	ASSERT_EQ(0, unreg(self, w64, 63));
	ASSERT_TRUE(close_and_gone(self, name));
}

TEST_F(life, munmap_then_toggle)
{
	const char *desc = PREFIX "munmap u32 a", *name = PREFIX "munmap";
	long page = sysconf(_SC_PAGESIZE);
	char *p, *q;
	int ret;

	p = map_mem(1);
	ASSERT_NE(NULL, p);
	ue_word_write(p, 4, FILL32 & ~1U);
	ASSERT_EQ(0, reg(self, desc, p, 4, 0));
	ASSERT_EQ(0, reg(self, desc, self->mem, 4, 0));
	ASSERT_EQ(0, munmap(p, page));

	/* Nothing to write to: no crash, the other word still follows */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(self->mem, 4, FILL32 | 1);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(0, ue_enable(name, true));
	ue_sleep_ms(200);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(self->mem, 4, FILL32 & ~1U);
	ue_sleep_ms(200);

	/* Unregistering may report the fault, but removes the enabler */
	ret = unreg(self, p, 0);
	if (ret)
		TH_LOG("DIAG_IOCSUNREG of an unmapped word: %s", strerror(-ret));
	ASSERT_TRUE(ret == 0 || ret == -EFAULT);
	ASSERT_EQ(-ENOENT, ue_wunreg(self->fd, p, 0));

	/* New memory at the address is not touched */
	q = mmap(p, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q == p) {
		memset(q, FILL, page);
		ASSERT_EQ(0, ue_enable(name, true));
		ASSERT_WORD_SOON(self->mem, 4, FILL32 | 1);
		ASSERT_WORD_STAYS(q, 4, FILL32);
		ASSERT_EQ(0, ue_enable(name, false));
		munmap(q, page);
	} else if (q != MAP_FAILED) {
		munmap(q, page);
	}
	ASSERT_EQ(0, unreg(self, self->mem, 0));
	ASSERT_TRUE(close_and_gone(self, name));
}

TEST_F(life, remapped_address_followed)
{
	const char *desc = PREFIX "remap u32 a", *name = PREFIX "remap";
	long page = sysconf(_SC_PAGESIZE);
	char *p, *q;

	p = map_mem(1);
	ASSERT_NE(NULL, p);
	ue_word_write(p + 4, 4, FILL32 & ~2U);
	ASSERT_EQ(0, reg(self, desc, p + 4, 4, 1));
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(p + 4, 4, FILL32 | 2);
	ASSERT_EQ(0, ue_enable(name, false));

	/* Other memory at the same address: the enabler is the address's */
	ASSERT_EQ(0, munmap(p, page));
	q = mmap(p, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != p) {
		if (q != MAP_FAILED)
			munmap(q, page);
		SKIP(return, "could not map the same address again");
	}
	ASSERT_EQ(0U, ue_word_read(q + 4, 4));
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(q + 4, 4, 2);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(q + 4, 4, 0);
	ASSERT_EQ(0, unreg(self, q + 4, 1));
	munmap(q, page);
	ASSERT_TRUE(close_and_gone(self, name));
}

TEST_F(life, readonly_then_enable)
{
	const char *desc = PREFIX "ro u32 a", *name = PREFIX "ro";
	long page = sysconf(_SC_PAGESIZE);
	char *p;

	p = map_mem(1);
	ASSERT_NE(NULL, p);
	ue_word_write(p, 4, FILL32 & ~1U);
	ASSERT_EQ(0, reg(self, desc, p, 4, 0));
	ASSERT_EQ(0, mprotect(p, page, PROT_READ));

	/* Cannot be written: no crash, the word is unchanged */
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_STAYS(p, 4, FILL32 & ~1U);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_STAYS(p, 4, FILL32 & ~1U);
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_STAYS(p, 4, FILL32 & ~1U);

	/* Writable again: the next change gets through */
	ASSERT_EQ(0, mprotect(p, page, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_EQ(0, ue_enable(name, true));
	ASSERT_WORD_SOON(p, 4, FILL32 | 1);
	ASSERT_EQ(0, ue_enable(name, false));
	ASSERT_WORD_SOON(p, 4, FILL32 & ~1U);

	ASSERT_EQ(0, unreg(self, p, 0));
	munmap(p, page);
	ASSERT_TRUE(close_and_gone(self, name));
}

/*
 * An event that only an exiting process kept goes soon after its exit,
 * and the files of that event, opened right after the parent's wait()
 * returns (as an administrator's script would), are safe to use while it
 * goes. The exit does not wait for the deletion (upstream's does not
 * either; the module's exit kprobe that did is gone, House II): the open
 * racing the deletion is what the guard in user_events_dirs.c is for (on
 * 5.10 and 6.1 it once read freed memory: upstream_abi_test met it with
 * allocator poisoning, a GPF in tracing_open_file_tr()). The shapes:
 *  - EXIT_OPEN: the process exits with its data file open;
 *  - EXIT_CLOSED: it closed the file after registering (as upstream's
 *    abi_test does), so only its enable bit keeps the event;
 *  - EXIT_CLONE: as EXIT_CLOSED, and a clone(CLONE_VM) child of it that
 *    shares the address space exits first (upstream's user.clones);
 *  - EXIT_BUSY: as EXIT_CLOSED, with 2,000 mappings to tear down and two
 *    busy processes on its CPU, so that the exit's last mmput() is
 *    switched out in the middle.
 */
enum exit_shape { EXIT_OPEN, EXIT_CLOSED, EXIT_CLONE, EXIT_BUSY };

#define EXIT_BUSY_MAPS 2000

static int exit_busy_maps(void);

static int exit_clone_child(void *arg __attribute__((unused)))
{
	return 0;
}

/* In the child: register, shape the exit, exit; 0 if all went well */
static int exit_child(enum exit_shape shape)
{
	static uint32_t word;
	static char stack[16384] __attribute__((aligned(16)));
	int fd = ue_open_data(), status;
	pid_t pid;

	if (fd < 0 || ue_wreg(fd, PREFIX "exitdel u32 a", &word, 4, 0, 0,
			      NULL))
		return 1;
	if (shape == EXIT_OPEN)
		return 0;
	close(fd);
	if (shape == EXIT_CLONE) {
		pid = clone(exit_clone_child, stack + sizeof(stack),
			    CLONE_VM | SIGCHLD, NULL);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
			return 1;
	}
	if (shape == EXIT_BUSY)
		return exit_busy_maps();
	return 0;
}

/* Mappings that do not merge (every other one read-only), each touched */
static int exit_busy_maps(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int i;

	for (i = 0; i < EXIT_BUSY_MAPS; i++) {
		char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		p[0] = 1;
		p[page] = 1;
		if ((i & 1) && mprotect(p, 2 * page, PROT_READ))
			return 1;
	}
	return 0;
}

/* Two processes that spin on CPU 0, where the caller now runs too */
static int exit_busy_start(pid_t hogs[2])
{
	cpu_set_t one;
	int i;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -1;
	for (i = 0; i < 2; i++) {
		hogs[i] = fork();
		if (hogs[i] < 0)
			return -1;
		if (!hogs[i])
			for (;;)
				;
	}
	return 0;
}

static void exit_busy_stop(pid_t hogs[2])
{
	cpu_set_t all;
	int i;

	for (i = 0; i < 2; i++) {
		if (hogs[i] <= 0)
			continue;
		kill(hogs[i], SIGKILL);
		waitpid(hogs[i], NULL, 0);
	}
	CPU_ZERO(&all);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof(all), &all);
}

/* The busy shape's rounds are slow */
static int exit_rounds(enum exit_shape shape)
{
	return shape == EXIT_BUSY ? 25 : 40;
}

/*
 * Right after wait(): opens and reads every file of the event that may be
 * going (any errno but a crash is fine; the guest fails on an oops or a
 * WARN)
 */
static void exit_late_opens(void)
{
	static const char *const files[] = { "format", "id", "enable",
					     "filter", "trigger", "hist" };
	char path[256], buf[512];
	unsigned int i;
	int fd;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		fd = open(ue_event_path(path, sizeof(path), PREFIX "exitdel",
					files[i]), O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
}

/*
 * Rounds of which the event was still there after wait(), or -1 if one
 * was still there WAIT_MS later, or a round failed
 */
static int exit_rounds_left(struct __test_metadata *_metadata,
			    enum exit_shape shape)
{
	int i, status, left = 0;
	pid_t hogs[2] = { 0, 0 };

	if (shape == EXIT_BUSY && exit_busy_start(hogs)) {
		exit_busy_stop(hogs);
		EXPECT_TRUE(0);
		return -1;
	}
	for (i = 0; i < exit_rounds(shape) && left >= 0; i++) {
		pid_t pid = fork();

		EXPECT_LE(0, pid);
		if (pid < 0)
			break;
		if (!pid)
			_exit(exit_child(shape));
		EXPECT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, status);
		exit_late_opens();
		if (ue_event_exists(PREFIX "exitdel"))
			left++;
		/* Gone within the bound, before the next round */
		if (!event_wait(PREFIX "exitdel", false, WAIT_MS))
			left = -1;
	}
	exit_busy_stop(hogs);
	return left;
}

TEST_F_TIMEOUT(life, exit_deletes_event_late_opens_safe, UE_TIMEOUT(240))
{
	static const char *const names[] = { "file open", "file closed",
					     "clone(CLONE_VM) first",
					     "2,000 mappings, CPU busy" };
	int shape, left, fails = 0;

	for (shape = EXIT_OPEN; shape <= EXIT_BUSY; shape++) {
		time_t t0 = time(NULL);

		left = exit_rounds_left(_metadata, shape);
		TH_LOG("%s: %d of %d rounds found the event after wait() (%ld s)",
		       names[shape], left, exit_rounds(shape),
		       (long)(time(NULL) - t0));
		fails += left < 0;
	}
	ASSERT_EQ(0, fails);
}

/*
 * A child registers @desc (remote write ABI; @flags) and exits with it
 * registered, its data file open. 0 if it did, else -1.
 */
static int exit_holding(const char *desc, int flags)
{
	static uint32_t word;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int fd = ue_open_data();

		_exit(fd < 0 || ue_wreg(fd, desc, &word, 4, 0, flags, NULL));
	}
	if (waitpid(pid, &status, 0) != pid || status)
		return -1;
	return 0;
}

/*
 * A service restarts with a new field at once: the old process exits
 * holding the only enable bit of its event, its successor registers the
 * name with other fields right after wait(). The exit does not wait for
 * its address space's teardown; the registration that finds the name
 * still held waits for the teardowns under way and tries again
 * (user_event_mm_settle()). Before that: EADDRINUSE in 38 to 64 of 100
 * rounds on 6.1 and 6.12 (red team of e034f56).
 */
TEST_F_TIMEOUT(life, restart_with_new_fields_after_exit, UE_TIMEOUT(120))
{
	const char *name = PREFIX "restart";
	int i, fd, ret, refused = 0;
	char desc[128];
	long t0;

	for (i = 0; i < 100; i++) {
		snprintf(desc, sizeof(desc), "%s u32 a", name);
		ASSERT_EQ(0, exit_holding(desc, 0));
		snprintf(desc, sizeof(desc), "%s u32 a; u32 b%d", name, i);
		fd = ue_open_data();
		ASSERT_LE(0, fd);
		t0 = ue_now_ms();
		ret = ue_wreg(fd, desc, self->mem, 4, 0, 0, NULL);
		if (ret)
			TH_LOG("round %d: %s after %ld ms", i, strerror(-ret),
			       ue_now_ms() - t0);
		refused += ret != 0;
		if (!ret)
			EXPECT_EQ(0, ue_wunreg(fd, self->mem, 0));
		close(fd);
		/* Unregistered and closed: gone before the next child */
		ASSERT_TRUE(event_wait(name, false, WAIT_MS));
	}
	/*
	 * One round in 600 was refused on a loaded host even so, 2 ms in,
	 * with no teardown left to wait for (an event the tracing core
	 * still held for a moment?): two are allowed
	 */
	EXPECT_GE(2, refused) {
		TH_LOG("%d of 100 registrations with new fields refused", refused);
	}
}

/*
 * DIAG_IOCSDEL of a persistent event right after the exit of the process
 * that registered it: the exit's teardown still holds the event for a
 * moment; the deletion waits for it and tries again. Before: EBUSY in 21
 * of 100 rounds on 6.1 (red team of e034f56).
 */
TEST_F_TIMEOUT(life, delete_right_after_exit, UE_TIMEOUT(120))
{
	const char *name = PREFIX "delexit";
	int i, t, busy = 0, ret;
	char desc[128];

	snprintf(desc, sizeof(desc), "%s u32 a", name);
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, exit_holding(desc, USER_EVENT_REG_PERSIST));
		ret = ue_del(name);
		busy += ret == -EBUSY;
		/* Counted; then let go of, before the next round */
		for (t = 0; ret == -EBUSY && t < WAIT_MS; t++) {
			usleep(1000);
			ret = ue_del(name);
		}
		ASSERT_EQ(0, ret) {
			TH_LOG("round %d: DIAG_IOCSDEL: %s", i, strerror(-ret));
		}
		ASSERT_FALSE(ue_event_exists(name));
	}
	/* As for restart_with_new_fields_after_exit: two are allowed */
	EXPECT_GE(2, busy) {
		TH_LOG("%d of 100 deletions right after the exit: EBUSY", busy);
	}
}

static void final_cleanup(void)
{
	ue_cleanup_events(PREFIX);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], EXEC_HELPER_ARG))
		return exec_helper(argc, argv);

	/* After the last test, which may have failed without a teardown */
	atexit(final_cleanup);

	return test_harness_run(argc, argv);
}
