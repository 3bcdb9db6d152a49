// SPDX-License-Identifier: GPL-2.0
/*
 * Helper of fuse_stall_test.sh. A state change must not wait for a FUSE
 * server with event_mutex held: an enable word in a private mapping of a
 * FUSE file whose page is gone is faulted in by a task of the registrant
 * (task work on the mm's owner, here the main thread), not by the update
 * (an earlier user_event_make_writable() faulted it in place, and
 * FAULT_FLAG_RETRY_NOWAIT does not keep FUSE from waiting for its server).
 *
 * This program is its own FUSE daemon (a forked process). It registers an
 * enabler on a private mapping of a FUSE file, drops the page, stops
 * answering reads, enables the event from another process and measures
 * how long that, `cat user_events_status` and a u: command to
 * dynamic_events (from threads of its own) take. The main thread is the
 * one that waits for the held read: the daemon answers it HOLD_S seconds
 * after it came, and the main thread then reads its bit, which must be set.
 * Run as root (./fuse_stall), or with -u to set up the FUSE mount in a new
 * user namespace as an unprivileged user (the tracefs writes are then done
 * by a root helper: see fuse_stall.sh).
 */
#define _GNU_SOURCE
#define USER_EVENTS_REMOTE_WRITE_ABI
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../include/uapi/linux/user_events.h"

#define TR "/sys/kernel/tracing"
#define MNT "/tmp/uefuse"
#define FSIZE 4096

static int fuse_fd;
/* Shared with the daemon, a separate process forked before registering */
struct timed {
	const char *what;
	double start, end;
	int ret;
};

struct shared {
	atomic_int go;
	atomic_int held_total;	/* reads held so far, never reset */
	double first_held;
	struct timed en;	/* written by the enabling process */
	atomic_int stall;
	atomic_int release;
	atomic_int nstalled;
	uint64_t stalled_unique[64];
};
static struct shared *sh;
static char rbuf[1 << 20];
#define stall (sh->stall)
#define nstalled (sh->nstalled)
#define stalled_unique (sh->stalled_unique)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void reply(uint64_t unique, int error, const void *data, size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 8192];
	struct fuse_out_header *oh = (void *)buf;

	oh->len = sizeof(*oh) + len;
	oh->error = error;
	oh->unique = unique;
	if (len)
		memcpy(buf + sizeof(*oh), data, len);
	if (write(fuse_fd, buf, oh->len) < 0 && errno != ENOENT)
		perror("fuse reply");
}

static void fill_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	a->blksize = 4096;
	if (ino == 1) {
		a->mode = S_IFDIR | 0755;
	} else {
		a->mode = S_IFREG | 0644;
		a->size = FSIZE;
		a->blocks = FSIZE / 512;
	}
}

static void reply_read(uint64_t unique)
{
	static char page[FSIZE];

	reply(unique, 0, page, sizeof(page));
}

static void *daemon_thread(void *arg __attribute__((unused)))
{
	for (;;) {
		ssize_t n = read(fuse_fd, rbuf, sizeof(rbuf));
		struct fuse_in_header *ih = (void *)rbuf;
		void *in = rbuf + sizeof(*ih);

		if (n < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return NULL;	/* unmounted */
		}
		switch (ih->opcode) {
		case FUSE_INIT: {
			struct fuse_init_in *ii = in;
			struct fuse_init_out io;

			memset(&io, 0, sizeof(io));
			io.major = FUSE_KERNEL_VERSION;
			io.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
				   ii->minor : FUSE_KERNEL_MINOR_VERSION;
			io.max_readahead = ii->max_readahead;
			io.flags = 0;	/* no FUSE_ASYNC_READ */
			io.max_background = 16;
			io.congestion_threshold = 12;
			io.max_write = 4096;
			reply(ih->unique, 0, &io, sizeof(io));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out eo;

			if (strcmp(in, "f")) {
				reply(ih->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&eo, 0, sizeof(eo));
			eo.nodeid = 2;
			eo.entry_valid = 1000;
			eo.attr_valid = 1000;
			fill_attr(&eo.attr, 2);
			reply(ih->unique, 0, &eo, sizeof(eo));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out ao;

			memset(&ao, 0, sizeof(ao));
			ao.attr_valid = 1000;
			fill_attr(&ao.attr, ih->nodeid);
			reply(ih->unique, 0, &ao, sizeof(ao));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out oo;

			memset(&oo, 0, sizeof(oo));
			reply(ih->unique, 0, &oo, sizeof(oo));
			break;
		}
		case FUSE_READ:
			if (atomic_load(&stall)) {
				int i = atomic_fetch_add(&nstalled, 1);

				if (i < 64)
					stalled_unique[i] = ih->unique;
				if (!atomic_fetch_add(&sh->held_total, 1))
					sh->first_held = now();
				fprintf(stderr, "daemon: holding READ %d\n", i);
				break;
			}
			reply_read(ih->unique);
			break;
		case FUSE_INTERRUPT:
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
			break;
		case FUSE_FLUSH:
		case FUSE_RELEASE:
			reply(ih->unique, 0, NULL, 0);
			break;
		default:
			reply(ih->unique, -ENOSYS, NULL, 0);
		}
	}
}

/* Seconds a read is held before the daemon answers it by itself */
#define HOLD_S 3

/* In the daemon: answers the held reads once told to, or HOLD_S after */
static void *releaser_thread(void *arg __attribute__((unused)))
{
	int i, n;

	for (;;) {
		while (!atomic_load(&sh->release) &&
		       !(atomic_load(&nstalled) &&
			 now() - sh->first_held >= HOLD_S))
			usleep(10000);
		atomic_store(&stall, 0);
		n = atomic_load(&nstalled);
		for (i = 0; i < n && i < 64; i++)
			reply_read(stalled_unique[i]);
		atomic_store(&nstalled, 0);
		atomic_store(&sh->release, 0);
	}
	return NULL;
}

/* In the registrant: no mmap, no fork, no thread creation from here on */
static void release_reads(void)
{
	atomic_store(&sh->release, 1);
	while (atomic_load(&sh->release))
		usleep(10000);
}

#define go (sh->go)

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, s, strlen(s)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* Another process, as an administrator's enable would come from */
static void enable_proc(struct timed *t)
{
	while (atomic_load(&go) < 1)
		usleep(1000);

	t->start = now();
	t->ret = write_file(TR "/events/user_events/redfuse/enable", "1");
	t->end = now();
	_exit(0);
}

static void *status_thread(void *arg)
{
	struct timed *t = arg;
	char buf[4096];
	int fd;

	while (atomic_load(&go) < 2)
		usleep(1000);

	t->start = now();
	fd = open(TR "/user_events_status", O_RDONLY);
	t->ret = fd < 0 ? -errno : 0;
	if (fd >= 0) {
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	t->end = now();
	return NULL;
}

static void *dyn_thread(void *arg)
{
	struct timed *t = arg;

	while (atomic_load(&go) < 2)
		usleep(1000);

	t->start = now();
	t->ret = write_file(TR "/dynamic_events", "u:redfuse_other u32 b\n");
	t->end = now();
	return NULL;
}

/*
 * The registrant's own threads hold its mmap_lock for the whole stall: one
 * reads its FUSE page through /proc/self/mem (a remote access that cannot
 * drop the lock, so it keeps it while the server holds the read), another
 * then queues for the lock in mmap(). An update that waited for that lock
 * under event_mutex would stop all tracing control until the server
 * answered (red team of issue 23).
 */
static volatile uint32_t *page;
static atomic_int mm_go;

static void *mem_reader_thread(void *arg __attribute__((unused)))
{
	uint32_t v;
	int fd = open("/proc/self/mem", O_RDONLY);

	while (!atomic_load(&mm_go))
		usleep(1000);
	if (fd >= 0 && pread(fd, &v, sizeof(v), (off_t)(uintptr_t)page) < 0)
		perror("pread /proc/self/mem");
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *mapper_thread(void *arg __attribute__((unused)))
{
	void *m;

	while (!atomic_load(&sh->held_total))
		usleep(1000);
	usleep(100000);
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	return NULL;
}

static void show(struct timed *t, double deadline)
{
	if (!t->end)
		printf("%-16s still blocked after %.2f s\n", t->what,
		       deadline - t->start);
	else
		printf("%-16s took %.3f s (ret %d)\n", t->what,
		       t->end - t->start, t->ret);
}

int main(int argc, char **argv)
{
	struct timed st = { .what = "status read" }, dy = { .what = "u: command" };
	struct timed *en;
	pid_t enabler = -1;
	pthread_t t2, t3, t4, t5;
	struct user_reg reg;
	struct user_unreg unreg;
	unsigned char vec;
	char opts[128];
	volatile uint32_t *p;
	int dfd, fd, userns = argc > 1 && !strcmp(argv[1], "-u");
	double t0;

	setvbuf(stdout, NULL, _IONBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	en = &sh->en;
	en->what = "enable";
	dfd = open(TR "/user_events_data", O_RDWR);
	if (dfd < 0) {
		perror("user_events_data");
		return 1;
	}
	if (userns && unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		perror("unshare");
		return 1;
	}
	if (userns) {
		char map[64];

		snprintf(map, sizeof(map), "0 %d 1", getuid());
		write_file("/proc/self/setgroups", "deny");
		write_file("/proc/self/uid_map", map);
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
		/* a private tmpfs to mount on */
		if (mount("t", "/tmp", "tmpfs", 0, NULL)) {
			perror("tmpfs");
			return 1;
		}
	}
	mkdir(MNT, 0755);
	fuse_fd = open("/dev/fuse", O_RDWR);
	if (fuse_fd < 0) {
		perror("/dev/fuse");
		return 1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%d,group_id=%d",
		 fuse_fd, userns ? 0 : getuid(), userns ? 0 : getgid());
	if (mount("uefuse", MNT, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		perror("mount fuse");
		return 1;
	}
	if (!fork()) {
		pthread_t rt;

		pthread_create(&rt, NULL, releaser_thread, NULL);
		daemon_thread(NULL);
		_exit(0);
	}
	if (!userns) {
		/* Every thread and process before the page is held */
		enabler = fork();
		if (!enabler)
			enable_proc(en);
		pthread_create(&t2, NULL, status_thread, &st);
		pthread_create(&t3, NULL, dyn_thread, &dy);
		pthread_create(&t4, NULL, mem_reader_thread, NULL);
		pthread_create(&t5, NULL, mapper_thread, NULL);
	}

	fd = open(MNT "/f", O_RDONLY);
	if (fd < 0) {
		perror("open fuse file");
		return 1;
	}
	p = mmap(NULL, FSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	(void)p[0];
	p[0] = 0;	/* copy on write: an anonymous page */
	page = p;

	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.enable_bit = 0;
	reg.enable_size = 4;
	reg.enable_addr = (uintptr_t)p;
	reg.name_args = (uintptr_t)"redfuse u32 a";
	if (ioctl(dfd, DIAG_IOCSREG, &reg)) {
		perror("DIAG_IOCSREG");
		return 1;
	}
	printf("registered, bit=%u\n", p[0] & 1);

	/* Drop both the private copy and the page cache page */
	madvise((void *)p, FSIZE, MADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	mincore((void *)p, FSIZE, &vec);
	printf("page cache resident after drop: %d\n", vec & 1);
	atomic_store(&stall, 1);

	if (userns) {
		/* A root helper enables the event and measures: wait for it */
		printf("READY\n");
		sleep(atoi(argc > 2 ? argv[2] : "20"));
		printf("held reads: %d\n", atomic_load(&sh->held_total));
		release_reads();
		sleep(1);
		printf("bit after release=%u\n", p[0] & 1);
		return 0;
	}

	/* The read held with the mmap_lock, a writer queued behind it */
	atomic_store(&mm_go, 1);
	t0 = now();
	while (!atomic_load(&sh->held_total) && now() - t0 < 5)
		usleep(10000);
	usleep(300000);

	atomic_store(&go, 1);
	usleep(500000);
	atomic_store(&go, 2);
	t0 = now();
	while (now() - t0 < 5 && !(st.end && dy.end && en->end))
		usleep(10000);
	printf("held reads: %d\n", atomic_load(&sh->held_total));
	show(en, now());
	show(&st, now());
	show(&dy, now());
	release_reads();
	waitpid(enabler, NULL, 0);
	pthread_join(t2, NULL);
	pthread_join(t3, NULL);
	pthread_join(t4, NULL);
	pthread_join(t5, NULL);
	printf("after release:\n");
	show(en, now());
	show(&st, now());
	show(&dy, now());
	printf("bit=%u\n", p[0] & 1);

	write_file(TR "/events/user_events/redfuse/enable", "0");
	memset(&unreg, 0, sizeof(unreg));
	unreg.size = sizeof(unreg);
	unreg.disable_addr = (uintptr_t)p;
	ioctl(dfd, DIAG_IOCSUNREG, &unreg);
	write_file(TR "/dynamic_events", "!u:redfuse_other\n");
	munmap((void *)p, FSIZE);
	close(fd);
	umount2(MNT, MNT_DETACH);
	return st.end - st.start > 1 || dy.end - dy.start > 1 ||
	       en->end - en->start > 1 ? 2 : 0;
}
