// SPDX-License-Identifier: GPL-2.0
/*
 * ue_races: targeted races of the remote write ABI that random stress only
 * hits now and then. Run as root with user_events.ko loaded (stress/guest.sh
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
 *       a while). After the toggling stops and the event is disabled, the
 *       child's inherited enable bit must read 0 (within 2 s).
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

#include "uapi/linux/user_events.h"

#define TRACEFS "/sys/kernel/tracing"
#define IOC_REG _IOWR(DIAG_IOC_MAGIC, 0, struct user_write_reg *)
#define IOC_UNREG _IOW(DIAG_IOC_MAGIC, 2, struct user_write_unreg *)

static int data_fd;
static int npass, nfail;

static int reg(void *word, int bit, const char *desc)
{
	struct user_write_reg r = {
		.size = sizeof(r), .enable_bit = bit, .enable_size = 4,
		.enable_addr = (uintptr_t)word, .name_args = (uintptr_t)desc,
	};

	return ioctl(data_fd, IOC_REG, &r) < 0 ? errno : 0;
}

static int unreg(void *word, int bit)
{
	struct user_write_unreg u = {
		.size = sizeof(u), .disable_bit = bit, .disable_addr = (uintptr_t)word,
	};

	return ioctl(data_fd, IOC_UNREG, &u) < 0 ? errno : 0;
}

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - races: ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (ok)
		npass++;
	else
		nfail++;
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

static void test_fork(int iters)
{
	uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int stale = 0, shown = 0, e, f;
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
		int p2c[2], st;
		pthread_t t;
		pid_t c;
		char go = 0;

		if (pipe(p2c))
			break;
		atomic_store(&stop, 0);
		pthread_create(&t, NULL, toggler, NULL);
		usleep(rand() % 300);
		c = fork();
		if (c == 0) {
			close(p2c[1]);
			if (read(p2c[0], &go, 1) != 1)
				_exit(3);
			/* disabled now: the bit must read 0 (faults are retried) */
			for (int k = 0; k < 40; k++) {
				if (!(*(volatile uint32_t *)word & 1))
					_exit(0);
				usleep(50000);
			}
			_exit(1);
		}
		close(p2c[0]);
		atomic_store(&stop, 1);
		pthread_join(t, NULL);
		usleep(20000);
		if (*(volatile uint32_t *)word & 1)
			printf("# fork iteration %d: the parent's own bit is set with the event disabled\n", i);
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
	tap(!stale, "fork while the event changes state: children's inherited bits follow the state (%d of %d children stale)",
	    stale, iters);
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
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
