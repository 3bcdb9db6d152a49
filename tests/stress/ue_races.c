// SPDX-License-Identifier: GPL-2.0
/*
 * ue_races: targeted races of the remote write ABI that random stress only
 * hits now and then. Run as root with user_events.ko loaded (tests/stress/guest.sh
 * runs it after ue_stress).
 *
 *   ue_races [dup [ITERATIONS]] [fork [ITERATIONS]]    (default: both)
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
 * Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "../selftests/ue_helpers.h"

#define TRACEFS "/sys/kernel/tracing"

static int data_fd;
static struct ue_tally tally;

/* The remote write ABI (tests/selftests/ue_helpers.h); 0 or a positive errno */
static int reg(void *word, int bit, const char *desc)
{
	return -ue_wreg(data_fd, desc, word, 4, bit, 0, NULL);
}

static int unreg(void *word, int bit)
{
	return -ue_wunreg(data_fd, word, bit);
}

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ue_vtap(&tally, false, "races: ", ok, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ dup */

static pthread_barrier_t bar;
static atomic_int successes;
static uint32_t *dup_word;
static int dup_iters;

static void *dup_racer(void *arg)
{
	(void)arg;
	for (int i = 0; i < dup_iters; i++) {
		pthread_barrier_wait(&bar);
		if (!reg(dup_word, 3, "uer_dup u32 a"))
			atomic_fetch_add(&successes, 1);
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

static void test_dup(int iters)
{
	pthread_t t[2];
	int dups = 0, shown = 0;

	dup_iters = iters;
	dup_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_barrier_init(&bar, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, dup_racer, NULL);
	for (int i = 0; i < iters; i++) {
		int k = 0, s;

		atomic_store(&successes, 0);
		pthread_barrier_wait(&bar);	/* go */
		pthread_barrier_wait(&bar);	/* both registered */
		while (k < 5 && !unreg(dup_word, 3))
			k++;
		s = atomic_load(&successes);
		if (s > 1 || k != s) {
			dups++;
			if (shown++ < 3)
				printf("# dup iteration %d: %d registrations of one (address, bit) succeeded, %d unregistrations\n",
				       i, s, k);
		}
		pthread_barrier_wait(&bar);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	tap(!dups, "concurrent registrations of one (address, bit): at most one enabler (%d of %d iterations made two)",
	    dups, iters);
}

/* ----------------------------------------------------------------- fork */

static atomic_int stop;
static long event_id;

static void *toggler(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct perf_event_attr pe = {
			.type = PERF_TYPE_TRACEPOINT, .size = sizeof(pe), .config = event_id,
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
static void close_perf_fds(void)
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
static bool bit_clears(volatile uint32_t *word)
{
	for (int k = 0; k < 200; k++) {
		if (!(*word & 1))
			return true;
		usleep(10000);
	}
	return !(*word & 1);
}

static void test_fork(int iters)
{
	uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int stale = 0, pstale = 0, shown = 0, e, f;
	char buf[32] = "";

	e = reg(word, 0, "uer_fork u32 a");
	f = open(TRACEFS "/events/user_events/uer_fork/id", O_RDONLY | O_CLOEXEC);
	if (e || f < 0 || read(f, buf, sizeof(buf) - 1) <= 0) {
		tap(0, "fork: setup (registration: %s)", strerror(e));
		return;
	}
	close(f);
	event_id = atol(buf);
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
		atomic_store(&stop, 0);
		pthread_create(&t, NULL, toggler, NULL);
		usleep(rand() % 300);
		c = fork();
		if (c == 0) {
			close(p2c[1]);
			close(c2p[0]);
			close_perf_fds();
			if (write(c2p[1], &go, 1) != 1 ||
			    read(p2c[0], &go, 1) != 1)
				_exit(3);
			/* disabled now: the bit must read 0 (faults are retried) */
			_exit(bit_clears(word) ? 0 : 1);
		}
		close(p2c[0]);
		close(c2p[1]);
		atomic_store(&stop, 1);
		pthread_join(t, NULL);
		/* No perf event on it is left open anywhere now */
		if (read(c2p[0], &go, 1) != 1)
			printf("# fork iteration %d: the child did not get ready\n", i);
		close(c2p[0]);
		if (!bit_clears(word)) {
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
	unreg(word, 0);
	tap(!stale && !pstale,
	    "fork while the event changes state: bits follow the state (stale after 2 s: %d of %d children, %d parents)",
	    stale, iters, pstale);
}

int main(int argc, char **argv)
{
	int dup_n = 2000, fork_n = 300;
	bool do_dup = argc < 2, do_fork = argc < 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
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
	data_fd = open(TRACEFS "/user_events_data", O_RDWR | O_CLOEXEC);
	if (data_fd < 0) {
		printf("not ok - races: open user_events_data: %s\n0 passed, 1 failed\n", strerror(errno));
		return 1;
	}
	if (do_dup)
		test_dup(dup_n);
	if (do_fork)
		test_fork(fork_n);
	close(data_fd);
	return ue_tally_summary(&tally);
}
