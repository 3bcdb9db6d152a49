// SPDX-License-Identifier: GPL-2.0
/*
 * enable_churn: the churn behind 6.1's "page fault at 0x1d30 in
 * __ftrace_event_enable_disable() from event_enable_write()" (tr == NULL),
 * with one kind of event and nothing else (no triggers, no perf, no BPF).
 * Guest side, as root; see tests/race/enable_churn.sh for the wrapper and
 * tests/race/ghost_open.py for the race made deterministic.
 *
 *   enable_churn [-k KIND] [-t SECONDS] [-i 0|1] [-d 0|1] [-w WRITERS]
 *                [-e] [-s SEED]
 *
 * -k   the event churned, named "ecx": kprobe (kprobe_events), synth
 *      (synthetic_events), user (u: in dynamic_events, user_events.ko) or
 *      ucycle (user_events.ko through user_events_data, as a short-lived
 *      client does: open, register with the remote write ABI without
 *      PERSIST, close, which deletes the event). Default kprobe.
 * -d 1 one thread deletes (after writing 0 to its enable files) and
 *      creates the event in a loop (default);
 *      -d 0 creates it once and leaves it.
 * -i 1 two threads make and remove instances ec0 and ec1 (default).
 * -w N N threads open the event's enable files (top level, ec0, ec1),
 *      write 1 or 0 and close them (default 2; 0: none).
 * -e   the writers enable and disable ecx by name through set_event (top
 *      level, ec0, ec1: "kprobes:ecx", "!kprobes:ecx") instead of opening
 *      its enable files: what tests/race/run.sh makes ue_race do on 6.1 (-F).
 * One more thread opens, reads and closes /proc/self/stat (allocations
 * that take freed slots, as the fuzzer's other work does).
 * Prints the number of each operation and its successes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "../selftests/ue_helpers.h"

#define T UE_TRACEFS

static const char *kind = "kprobe", *sys = "kprobes", *ctl, *mk, *rm;
static int secs = 60, inst = 1, del = 1, writers = 2, set_event;
static unsigned long long seed;
static atomic_int stop;
static atomic_long n_del, ok_del, n_inst, ok_inst, n_en, ok_en, n_open;
static atomic_int del_err;	/* the last failed deletion's errno */

static void pause_us(unsigned long long *s, unsigned int max)
{
	if (max)
		usleep(ue_xs_next(s) % max);
}

/*
 * A short-lived client: register ecx (not persistent), unregister its
 * enable bit, close: the last user gone, the module deletes the event.
 */
static int ucycle(void)
{
	uint32_t word = 0;
	int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = ue_wreg(fd, "ecx u32 a", &word, 4, 0, 0, NULL);
	if (!r)
		r = ue_wunreg(fd, &word, 0);
	close(fd);
	return r;
}

/* An enabled event cannot be deleted: switch it off everywhere first */
static void disable_all(void)
{
	char path[128];
	int i;

	if (set_event) {
		char line[64];

		snprintf(line, sizeof(line), "!%s:ecx\n", sys);
		ue_write_str(T "/set_event", line, O_APPEND);
		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), T "/instances/ec%d/set_event", i);
			ue_write_str(path, line, O_APPEND);
		}
		return;
	}

	snprintf(path, sizeof(path), T "/events/%s/ecx/enable", sys);
	ue_write_str(path, "0", O_APPEND);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path),
			 T "/instances/ec%d/events/%s/ecx/enable", i, sys);
		ue_write_str(path, "0", O_APPEND);
	}
}

static void *deleter(void *arg)
{
	unsigned long long s = seed ^ 0x1111;

	(void)arg;
	while (!stop) {
		int r;

		if (!strcmp(kind, "ucycle")) {
			r = ucycle();
		} else {
			disable_all();
			r = ue_write_str(ctl, rm, O_APPEND);
			pause_us(&s, 40000);
			if (ue_write_str(ctl, mk, O_APPEND))
				r = -1;
		}
		atomic_fetch_add(&n_del, 1);
		if (!r)
			atomic_fetch_add(&ok_del, 1);
		else
			del_err = -r;
		pause_us(&s, 40000);
	}
	return NULL;
}

static void *instancer(void *arg)
{
	unsigned long long s = seed ^ (0x2222 + (long)arg);
	char path[64];

	snprintf(path, sizeof(path), T "/instances/ec%ld", (long)arg);
	while (!stop) {
		int r = mkdir(path, 0755);

		pause_us(&s, 20000);
		r |= rmdir(path);
		atomic_fetch_add(&n_inst, 1);
		if (!r)
			atomic_fetch_add(&ok_inst, 1);
	}
	return NULL;
}

static void *writer(void *arg)
{
	unsigned long long s = seed ^ (0x3333 + (long)arg);
	char path[128];

	while (!stop) {
		int w = ue_xs_next(&s) % 3, fd;

		if (set_event) {
			char line[64];
			int r;

			if (w == 2)
				snprintf(path, sizeof(path), T "/set_event");
			else
				snprintf(path, sizeof(path),
					 T "/instances/ec%d/set_event", w);
			snprintf(line, sizeof(line), "%s%s:ecx\n",
				 ue_xs_next(&s) & 1 ? "" : "!", sys);
			atomic_fetch_add(&n_en, 1);
			r = ue_write_str(path, line, O_APPEND);
			if (r != -ENOENT)
				atomic_fetch_add(&n_open, 1);
			if (!r)
				atomic_fetch_add(&ok_en, 1);
			continue;
		}
		if (w == 2)
			snprintf(path, sizeof(path), T "/events/%s/ecx/enable", sys);
		else
			snprintf(path, sizeof(path),
				 T "/instances/ec%d/events/%s/ecx/enable", w, sys);
		atomic_fetch_add(&n_en, 1);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			continue;
		atomic_fetch_add(&n_open, 1);
		if (write(fd, ue_xs_next(&s) & 1 ? "1" : "0", 1) == 1)
			atomic_fetch_add(&ok_en, 1);
		close(fd);
	}
	return NULL;
}

static void *noise(void *arg)
{
	char buf[512];

	(void)arg;
	while (!stop) {
		int fd = open("/proc/self/stat", O_RDONLY);

		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				break;
			close(fd);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[16];
	int c, n = 0;
	long i;

	seed = time(NULL);
	while ((c = getopt(argc, argv, "k:t:i:d:w:es:")) != -1) {
		switch (c) {
		case 'k': kind = optarg; break;
		case 't': secs = atoi(optarg); break;
		case 'i': inst = atoi(optarg); break;
		case 'd': del = atoi(optarg); break;
		case 'w': writers = atoi(optarg); break;
		case 'e': set_event = 1; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!seed)
		seed = 1;
	if (writers > 8)
		writers = 8;
	if (!strcmp(kind, "kprobe")) {
		ctl = T "/kprobe_events";
		mk = "p:ecx do_sys_openat2 dfd=%di:s32\n";
		rm = "-:ecx\n";
	} else if (!strcmp(kind, "synth")) {
		sys = "synthetic";
		ctl = T "/synthetic_events";
		mk = "ecx u32 a\n";
		rm = "!ecx\n";
	} else if (!strcmp(kind, "user") || !strcmp(kind, "ucycle")) {
		sys = "user_events";
		ctl = T "/dynamic_events";
		mk = "u:ecx u32 a\n";
		rm = "!u:ecx\n";
	} else {
		fprintf(stderr, "unknown kind %s\n", kind);
		return 2;
	}
	printf("# enable_churn: kind %s, %ds, seed %llu, instances %d, deletion %d, writers %d%s\n",
	       kind, secs, seed, inst, del, writers,
	       set_event ? " (through set_event)" : "");
	fflush(stdout);
	/* ucycle: a persistent ecx would never go; the cycles make it */
	if (strcmp(kind, "ucycle") && ue_write_str(ctl, mk, O_APPEND))
		perror("create ecx");
	if (del)
		pthread_create(&th[n++], NULL, deleter, NULL);
	for (i = 0; inst && i < 2; i++)
		pthread_create(&th[n++], NULL, instancer, (void *)i);
	for (i = 0; i < writers; i++)
		pthread_create(&th[n++], NULL, writer, (void *)i);
	pthread_create(&th[n++], NULL, noise, NULL);
	sleep(secs);
	stop = 1;
	while (n--)
		pthread_join(th[n], NULL);
	ue_write_str(ctl, rm, O_APPEND);
	rmdir(T "/instances/ec0");
	rmdir(T "/instances/ec1");
	if (del_err)
		printf("# last failed deletion cycle: %s\n", strerror(del_err));
	printf("enable_churn: deletions %ld (%ld ok), instance cycles %ld (%ld ok), enable opens %ld of %ld tried, writes ok %ld\n",
	       (long)n_del, (long)ok_del, (long)n_inst, (long)ok_inst,
	       (long)n_open, (long)n_en, (long)ok_en);
	return 0;
}
