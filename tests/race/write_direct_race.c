// SPDX-License-Identifier: GPL-2.0
/*
 * Red team of the one-copy write path (issue 15): two writers whose buffer
 * a third thread rewrites between valid and invalid __data_loc values,
 * enable/filter/trigger/set_event_pid toggling and instance mkdir/rmdir,
 * for N seconds; then every recorded line must carry the valid string.
 * Build: gcc -O2 -static -Iinclude -o X tests/race/write_direct_race.c -lpthread
 * Run in a guest with panic_on_warn=1, user_events.ko loaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "../selftests/ue_helpers.h"

#define T UE_TRACEFS
static volatile int stop;
static int fd, widx;
static unsigned char buf[64] __attribute__((aligned(8)));
static long nok, nfault, nother;

/* A tracefs write whose result does not matter here */
static void wr(const char *p, const char *s, int trunc)
{
	ue_write_str(p, s, trunc ? O_TRUNC : 0);
}

static void *writer(void *a)
{
	struct iovec io[3] = { { &widx, 4 }, { buf + 4, 8 }, { buf + 12, 20 } };
	while (!stop) {
		ssize_t n = (random() & 1) ? writev(fd, io, 3) : write(fd, buf, 32);
		if (n > 0) __atomic_add_fetch(&nok, 1, 0);
		else if (errno == EFAULT) __atomic_add_fetch(&nfault, 1, 0);
		else __atomic_add_fetch(&nother, 1, 0);
	}
	return a;
}

static void *flipper(void *a)
{
	unsigned int *loc = (unsigned int *)(buf + 8);
	unsigned int good = ((unsigned)6 << 16) | (8 + 8), bad = (4000u << 16) | 16;
	volatile int j;
	/* Spins between the states: TCG switches vCPUs and takes interrupts
	 * only between translation blocks, i.e. at branches */
	while (!stop) {
		*(volatile unsigned *)loc = bad; ((volatile unsigned char *)buf)[17] = 'X';
		for (j = 0; j < 50; j++) ;
		*(volatile unsigned *)loc = good; ((volatile unsigned char *)buf)[17] = 0;
		for (j = 0; j < 50; j++) ;
		*(volatile unsigned *)loc = (6u << 16) | 2; /* into the header */
		for (j = 0; j < 50; j++) ;
		*(volatile unsigned *)loc = good;
		for (j = 0; j < 50; j++) ;
	}
	return a;
}

static void *toggler(void *a)
{
	const char *e = T "/events/user_events/rt_ev/";
	char p[256];
	int i = 0;
	while (!stop) {
		snprintf(p, sizeof(p), "%senable", e); wr(p, (i & 1) ? "0" : "1", 0);
		snprintf(p, sizeof(p), "%sfilter", e); wr(p, (i & 2) ? "a == 1" : "0", 0);
		snprintf(p, sizeof(p), "%strigger", e);
		wr(p, (i & 4) ? "stacktrace if a == 2" : "!stacktrace if a == 2", 0);
		if (i % 8 == 0) wr(T "/set_event_pid", (i & 8) ? "1" : "", 1);
		i++;
	}
	return a;
}

static void *instances(void *a)
{
	while (!stop) {
		mkdir(T "/instances/rt", 0755);
		wr(T "/instances/rt/events/user_events/rt_ev/enable", "1", 0);
		usleep(1000);
		wr(T "/instances/rt/events/user_events/rt_ev/enable", "0", 0);
		rmdir(T "/instances/rt");
		mkdir(T "/instances/rt", 0755);
		wr(T "/instances/rt/events/user_events/rt_ev/enable", "1", 0);
		rmdir(T "/instances/rt"); /* busy while enabled? either way */
		wr(T "/instances/rt/events/user_events/rt_ev/enable", "0", 0);
		rmdir(T "/instances/rt");
	}
	return a;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 20;
	struct user_write_reg r = { .size = sizeof(r) };
	unsigned int en = 0;
	pthread_t t[6];
	int i;

	fd = open(T "/user_events_data", O_RDWR);
	r.name_args = (unsigned long)"rt_ev u32 a; __data_loc char[] s; char[20] pad";
	r.enable_bit = 0; r.enable_size = 4; r.enable_addr = (unsigned long)&en;
	if (fd < 0 || ioctl(fd, DIAG_IOCSREG, &r)) { perror("reg"); return 1; }
	widx = r.write_index;
	memcpy(buf, &widx, 4);
	*(unsigned *)(buf + 4) = 1;
	*(unsigned *)(buf + 8) = (6u << 16) | 16;
	memcpy(buf + 12, "valid", 6);
	pthread_create(&t[0], 0, writer, 0);
	pthread_create(&t[1], 0, writer, 0);
	pthread_create(&t[2], 0, flipper, 0);
	pthread_create(&t[3], 0, toggler, 0);
	pthread_create(&t[4], 0, instances, 0);
	sleep(secs);
	stop = 1;
	for (i = 0; i < 5; i++) pthread_join(t[i], 0);
	wr(T "/set_event_pid", "", 1);
	wr(T "/events/user_events/rt_ev/trigger", "!stacktrace if a == 2", 0);
	wr(T "/events/user_events/rt_ev/filter", "0", 0);
	wr(T "/events/user_events/rt_ev/enable", "0", 0);
	rmdir(T "/instances/rt");
	printf("writes ok %ld efault %ld other %ld\n", nok, nfault, nother);
	/* Every recorded rt_ev line must carry the valid string */
	{
		FILE *f = fopen(T "/trace", "r");
		char line[1024];
		long good = 0, badl = 0;
		while (f && fgets(line, sizeof(line), f)) {
			if (!strstr(line, "rt_ev:")) continue;
			if (strstr(line, "s=valid")) good++; else { badl++; if (badl < 5) fputs(line, stdout); }
		}
		printf("trace lines valid %ld invalid %ld\n", good, badl);
		return badl ? 1 : 0;
	}
}
