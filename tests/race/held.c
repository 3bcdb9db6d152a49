// SPDX-License-Identifier: GPL-2.0
/*
 * ue_race -M held: faults that user space holds for ever, on enable words
 * and on write payloads, by processes that are then killed; afterwards,
 * within seconds, every event can be deleted and the module unloaded.
 *
 * Victim processes (each in its own process group, with 1 to 3 threads)
 * register remote-write enablers of 3 names (ue_hf0..2) on words in:
 *  - anonymous pages registered with a userfaultfd (missing pages, and
 *    present ones write-protected with uffd-wp where the kernel has it),
 *    whose file descriptor they pass to a holder process that answers
 *    some faults late and holds the others for ever (it never closes the
 *    userfaultfd, and reads the fork events of children, whose copies it
 *    holds too);
 *  - a private mapping of a file on a FUSE mount whose server (a process
 *    of this program) stops reading requests: they stay queued for ever,
 *    and the page lock of a page being read stays taken (a server that
 *    read a request and never answered would make the reader unkillable,
 *    which is FUSE's doing, not the module's);
 *  - ordinary pages.
 * They drop those pages again (MADV_DONTNEED, POSIX_FADV_DONTNEED,
 * uffd-wp), write records whose payload is in such pages (held in
 * copy_from_user), fork (children that inherit the enablers), clone
 * processes that share the address space (the mm's owner moves),
 * start and end threads, mprotect and unmap words, and exit. A toggler
 * process enables and disables the events meanwhile, so that bits must be
 * written into pages that are not there.
 *
 * Each cycle (2 to 6 s) ends with the aftermath check: every victim is
 * killed (SIGKILL to its process group; the holder and the frozen FUSE
 * server go on holding) and must be reaped within 5 s; then, with
 * nothing but the administrator running, every event must be deleted and
 * the module unloaded (prepare_unload + rmmod) within 5 s; then the
 * module is loaded again for the next cycle. Blocked tasks and their
 * stacks are printed when one of these fails.
 *
 * -x parts to leave out: fuse, wp (uffd write-protect), clone (CLONE_VM
 * processes), fork.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/fuse.h>
#include <linux/userfaultfd.h>

#include "uapi/linux/user_events.h"
#include "aftermath.h"
#include "../selftests/ue_fuse.h"

#define HF_PFX		"ue_hf"
#define HF_NAMES	3
#define HF_DESC		" u32 a; u64 b"
#define HF_PAGES	16		/* userfaultfd region, FUSE file */
#define HF_MNT		"/tmp/ue_hf_fuse"
#define HF_FSIZE	(HF_PAGES * 4096)
#define HF_MAX_VICTIMS	16
#define HF_LIMIT_MS	5000		/* "within a few seconds" */
#define HF_WAIT_MS	30000		/* how long a failed check still waits */
#define HF_MSGS		16

enum hf_op {
	H_REG_UFFD, H_REG_FUSE, H_REG_PLAIN, H_UNREG, H_DROP_UFFD, H_DROP_FUSE,
	H_WP, H_WRITE_UFFD, H_WRITE_FUSE, H_WRITE, H_FORK, H_CLONE, H_THREAD,
	H_MPROTECT, H_MUNMAP, H_DEL, H_EXIT, H_ENABLE, H_DISABLE, H_VICTIM,
	H_KILL, H_FAULT_HELD, H_FAULT_ANSWERED, H_CHECK, H_NR,
};

static const char *const op_names[H_NR] = {
	"reg_uffd", "reg_fuse", "reg_plain", "unreg", "drop_uffd", "drop_fuse",
	"uffd_wp", "write_uffd", "write_fuse", "write", "fork", "clone_vm",
	"thread", "mprotect", "munmap", "del", "exit", "enable", "disable",
	"victim", "kill", "fault_held", "fault_answered", "check",
};

struct hf_shared {
	atomic_int stop;
	atomic_int pause_toggler, toggler_paused;
	atomic_int fuse_frozen;
	atomic_int resolve_pct;		/* of the faults the holder answers */
	atomic_int release;		/* holder: close every userfaultfd */
	atomic_int held_now;		/* faults held since the last release */
	atomic_int wp_ok;
	struct am_counter ops[H_NR];
	atomic_int nbad;
	char bad[HF_MSGS][240];
	atomic_long checks, check_fail, reap_fail, max_ms, sum_ms;
	atomic_long waiting_uffd, waiting_fuse, fuse_pending_max;
	atomic_long crashed;
};

static struct hf_shared *sh;
static const struct am_opts *opt;
static int hsock[2] = { -1, -1 };	/* victims -> holder: userfaultfds */
static bool fuse_ok;

static __printf(1, 2) void bad(const char *fmt, ...)
{
	int i = atomic_fetch_add(&sh->nbad, 1);
	va_list ap;

	if (i >= HF_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(sh->bad[i], sizeof(sh->bad[i]), fmt, ap);
	va_end(ap);
}

/* The holder: keeps every userfaultfd, answers some faults late */

struct pending {
	int uffd;
	unsigned long addr;
	bool wp;
	long due;
};

static void holder_answer(struct pending *p)
{
	if (p->wp) {
		struct uffdio_writeprotect wp;

		memset(&wp, 0, sizeof(wp));
		wp.range.start = p->addr;
		wp.range.len = 4096;
		wp.mode = 0;		/* write-unprotect and wake */
		ioctl(p->uffd, UFFDIO_WRITEPROTECT, &wp);
	} else {
		struct uffdio_zeropage zp;

		memset(&zp, 0, sizeof(zp));
		zp.range.start = p->addr;
		zp.range.len = 4096;
		ioctl(p->uffd, UFFDIO_ZEROPAGE, &zp);
	}
	am_count(&sh->ops[H_FAULT_ANSWERED], 0);
}

static void holder_process(void)
{
	static struct pollfd pfd[4096];
	static struct pending pend[4096];
	unsigned long long s = opt->seed ^ 0x401DULL;
	struct rlimit rl = { 8192, 8192 };
	int n = 1, npend = 0, i, k;

	s |= 1;
	setrlimit(RLIMIT_NOFILE, &rl);
	pfd[0].fd = hsock[0];
	pfd[0].events = POLLIN;
	while (!atomic_load(&sh->stop)) {
		long now = ue_now_ms();

		if (atomic_load(&sh->release)) {
			for (i = 1; i < n; i++)
				close(pfd[i].fd);
			n = 1;
			npend = 0;
			atomic_store(&sh->held_now, 0);
			atomic_store(&sh->release, 0);
		}
		for (i = 0; i < npend; i++) {
			if (pend[i].due > now)
				continue;
			holder_answer(&pend[i]);
			pend[i--] = pend[--npend];
		}
		if (poll(pfd, n, 10) <= 0)
			continue;
		if (pfd[0].revents & POLLIN) {
			char cbuf[CMSG_SPACE(sizeof(int))], c;
			struct iovec iov = { &c, 1 };
			struct msghdr mh = {
				.msg_iov = &iov, .msg_iovlen = 1,
				.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
			};
			struct cmsghdr *cm = NULL;

			if (recvmsg(hsock[0], &mh, MSG_DONTWAIT) > 0)
				cm = CMSG_FIRSTHDR(&mh);
			if (cm && cm->cmsg_type == SCM_RIGHTS &&
			    n < (int)ARRAY_SIZE(pfd)) {
				memcpy(&pfd[n].fd, CMSG_DATA(cm), sizeof(int));
				pfd[n++].events = POLLIN;
			}
		}
		for (i = 1; i < n; i++) {
			struct uffd_msg m;

			if (!pfd[i].revents)
				continue;
			if (pfd[i].revents & (POLLERR | POLLHUP | POLLNVAL) &&
			    !(pfd[i].revents & POLLIN)) {
				/* Its address space is gone: kept all the same */
				pfd[i].events = 0;
				continue;
			}
			for (;;) {
				ssize_t r = read(pfd[i].fd, &m, sizeof(m));

				if (r != sizeof(m)) {
					if (r == 0 || (r < 0 && errno != EAGAIN))
						pfd[i].events = 0;
					break;
				}
				if (m.event == UFFD_EVENT_FORK) {
					if (n < (int)ARRAY_SIZE(pfd)) {
						pfd[n].fd = m.arg.fork.ufd;
						pfd[n++].events = POLLIN;
					} else {
						close(m.arg.fork.ufd);
					}
					continue;
				}
				if (m.event != UFFD_EVENT_PAGEFAULT)
					continue;
				if (ue_xs_rn(&s, 100) < atomic_load(&sh->resolve_pct) &&
				    npend < (int)ARRAY_SIZE(pend)) {
					k = npend++;
					pend[k].uffd = pfd[i].fd;
					pend[k].addr = m.arg.pagefault.address & ~4095UL;
					pend[k].wp = m.arg.pagefault.flags &
						     UFFD_PAGEFAULT_FLAG_WP;
					pend[k].due = now + ue_xs_rn(&s, 300);
				} else {
					/* Held for ever: never answered */
					atomic_fetch_add(&sh->held_now, 1);
					am_count(&sh->ops[H_FAULT_HELD], 0);
				}
			}
		}
	}
	_exit(0);
}

/* The FUSE server: stops reading requests while frozen */

/* The error by which a FUSE server says it has no such operation (ENOSYS) */
#define FUSE_NOT_IMPLEMENTED 38

static int fuse_file = -1;	/* HF_MNT/f, open in every victim */

static struct ue_fuse fuse = { .fd = -1, .fsize = HF_FSIZE, .valid = 100000 };

static void fuse_reply(u64 unique, int error, const void *data, size_t len)
{
	ue_fuse_reply(&fuse, unique, error, data, len);
}

static void fuse_server_process(void)
{
	static char rbuf[1 << 20], data[HF_FSIZE];
	struct fuse_in_header *ih = (void *)rbuf;
	void *in = rbuf + sizeof(*ih);
	ssize_t n;

	for (;;) {
		/* Frozen: nothing is read, so nothing is ever half answered */
		while (atomic_load(&sh->fuse_frozen) && !atomic_load(&sh->stop))
			usleep(5000);
		if (atomic_load(&sh->stop))
			break;
		n = read(fuse.fd, rbuf, sizeof(rbuf));
		if (n < 0) {
			if (errno == EINTR || errno == ENOENT || errno == EAGAIN) {
				usleep(1000);
				continue;
			}
			break;	/* unmounted */
		}
		if (ue_fuse_answer(&fuse, ih, in))
			continue;
		switch (ih->opcode) {
		case FUSE_READ: {
			struct fuse_read_in *ri = in;
			size_t len = ri->size;

			/* All it asks for: a short read would shrink the file */
			if (ri->offset >= HF_FSIZE)
				len = 0;
			else if (ri->offset + len > HF_FSIZE)
				len = HF_FSIZE - ri->offset;
			fuse_reply(ih->unique, 0, data + (len ? ri->offset : 0), len);
			break;
		}
		case FUSE_FLUSH:
			/*
			 * No flushes from now on: a close waits for its flush
			 * even when killed, and would wait for ever once frozen
			 */
			fuse_reply(ih->unique, -FUSE_NOT_IMPLEMENTED, NULL, 0);
			break;
		case FUSE_RELEASE:
			fuse_reply(ih->unique, 0, NULL, 0);
			break;
		default:
			fuse_reply(ih->unique, -FUSE_NOT_IMPLEMENTED, NULL, 0);
		}
	}
	_exit(0);
}

static pid_t fuse_start(void)
{
	char opts[128];
	pid_t pid;
	int fd;

	if (am_excluded(opt, "fuse"))
		return -1;
	mkdir(HF_MNT, 0755);
	fuse.fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse.fd < 0) {
		printf("# held: no /dev/fuse (%s): FUSE left out\n", strerror(errno));
		return -1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0",
		 fuse.fd);
	if (mount("ue_hf", HF_MNT, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		printf("# held: FUSE mount: %s: FUSE left out\n", strerror(errno));
		close(fuse.fd);
		return -1;
	}
	/* fusectl: the count of requests waiting, for the report */
	mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, NULL);
	pid = fork();
	if (!pid)
		fuse_server_process();
	close(fuse.fd);
	fuse.fd = -1;
	fuse_ok = pid > 0;
	/* One close while the server answers: it refuses FLUSH (see there) */
	fd = open(HF_MNT "/f", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	/* Victims inherit it: mapping it asks nothing of the server */
	fuse_file = open(HF_MNT "/f", O_RDONLY | O_CLOEXEC);
	fuse_ok = fuse_file >= 0;
	return pid;
}

/* Requests queued on every FUSE connection (fusectl's "waiting") */
static long fuse_waiting(void)
{
	DIR *d = opendir("/sys/fs/fuse/connections");
	struct dirent *e;
	char path[300], buf[32];
	long sum = 0;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%s/waiting",
			 e->d_name);
		if (ue_read_upto(path, buf, sizeof(buf)) > 0)
			sum += atol(buf);
	}
	if (d)
		closedir(d);
	return sum;
}

/* Victims */

struct victim {
	unsigned long long s;
	int fd;			/* user_events_data */
	int uffd;
	char *uffd_area;	/* HF_PAGES pages registered with uffd */
	char *fuse_area;	/* a private mapping of the FUSE file, or NULL */
	char *plain;		/* an ordinary page */
	bool wp;		/* uffd-wp registered */
	atomic_int nidx;
	atomic_int idx[64];	/* write indexes of this fd's registrations */
	atomic_int nthreads;
};

static struct victim *vic;

static void *pick_word(int where, int *size)
{
	char *base;

	*size = ue_xs_rn(&vic->s, 2) ? 4 : 8;
	if (where == 0)
		base = vic->uffd_area + 4096 * ue_xs_rn(&vic->s, HF_PAGES);
	else if (where == 1 && vic->fuse_area)
		base = vic->fuse_area + 4096 * ue_xs_rn(&vic->s, HF_PAGES);
	else
		base = vic->plain;
	return base + 8 * ue_xs_rn(&vic->s, 8);
}

static int v_reg(unsigned long long *s, int where)
{
	char desc[64];
	int size, bit, idx, ret;
	__u16 flags;
	void *addr;

	snprintf(desc, sizeof(desc), HF_PFX "%d" HF_DESC, ue_xs_rn(s, HF_NAMES));
	/* The seed's order of draws: the word, the bit, the flags */
	addr = pick_word(where, &size);
	bit = ue_xs_rn(s, size * 8);
	flags = ue_xs_rn(s, 4) ? 0 : USER_EVENT_REG_PERSIST;
	ret = ue_wreg(vic->fd, desc, addr, size, bit, flags, &idx);
	if (!ret) {
		int i = atomic_fetch_add(&vic->nidx, 1);

		if (i < 64)
			atomic_store(&vic->idx[i], idx);
	}
	return ret;
}

static int v_unreg(unsigned long long *s)
{
	void *addr;
	int size;

	addr = pick_word(ue_xs_rn(s, 3), &size);
	return ue_wunreg(vic->fd, addr, ue_xs_rn(s, size * 8));
}

static int v_drop(unsigned long long *s, bool fuse)
{
	char *page;

	if (fuse && !vic->fuse_area)
		return -ENOENT;
	page = (fuse ? vic->fuse_area : vic->uffd_area) +
	       4096 * ue_xs_rn(s, HF_PAGES);
	if (madvise(page, 4096, MADV_DONTNEED))
		return -errno;
	if (fuse)
		posix_fadvise(fuse_file, 0, 0, POSIX_FADV_DONTNEED);
	return 0;
}

/* uffd-wp: a present page that a write (the kernel's too) must wait for */
static int v_wp(unsigned long long *s)
{
	struct uffdio_writeprotect wp;
	char *page = vic->uffd_area + 4096 * ue_xs_rn(s, HF_PAGES);

	if (!vic->wp)
		return -EOPNOTSUPP;
	memset(&wp, 0, sizeof(wp));
	wp.range.start = (uintptr_t)page;
	wp.range.len = 4096;
	wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
	return ioctl(vic->uffd, UFFDIO_WRITEPROTECT, &wp) ? -errno : 0;
}

/* A record whose payload is in @where's pages (held where they are) */
static int v_write(unsigned long long *s, int where)
{
	int n = atomic_load(&vic->nidx), idx;
	char *payload, local[12] = { 0 };
	struct iovec iov[2];
	ssize_t ret;

	if (!n)
		return -ENOENT;
	idx = atomic_load(&vic->idx[ue_xs_rn(s, n < 64 ? n : 64)]);
	if (where == 0)
		payload = vic->uffd_area + 4096 * ue_xs_rn(s, HF_PAGES) + 16 * ue_xs_rn(s, 200);
	else if (where == 1 && vic->fuse_area)
		payload = vic->fuse_area + 4096 * ue_xs_rn(s, HF_PAGES) + 16 * ue_xs_rn(s, 200);
	else
		payload = local;
	iov[0].iov_base = &idx;
	iov[0].iov_len = sizeof(idx);
	iov[1].iov_base = payload;
	iov[1].iov_len = 12;
	ret = writev(vic->fd, iov, 2);
	return ret < 0 ? -errno : 0;
}

static void victim_ops(unsigned long long *s, int nops, bool clone_vm);

/* Reaps what is dead; a victim killed by anything but SIGKILL crashed */
static void reap(void)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
			atomic_fetch_add(&sh->crashed, 1);
			bad("process %d killed by signal %d", pid, WTERMSIG(st));
		} else if (WIFEXITED(st) && WEXITSTATUS(st)) {
			atomic_fetch_add(&sh->crashed, 1);
			bad("process %d exited with status %d", pid, WEXITSTATUS(st));
		}
	}
}

/*
 * A child that shares the address space but is no thread (it shares the
 * TLS of the thread that cloned it: no libc thread or process calls), to
 * which the mm's owner may move
 */
static int clone_child(void *arg)
{
	unsigned long long s = (uintptr_t)arg | 1;

	victim_ops(&s, ue_xs_rn(&s, 8), true);
	for (;;)
		pause();
	return 0;
}

static int v_clone(unsigned long long *s)
{
	size_t size = 64 * 1024;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	pid_t pid;

	if (stack == MAP_FAILED)
		return -errno;
	pid = clone(clone_child, stack + size, CLONE_VM | SIGCHLD,
		    (void *)(uintptr_t)ue_xs_next(s));
	return pid < 0 ? -errno : 0;
}

static int v_fork(unsigned long long *s)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		unsigned long long cs = ue_xs_next(s) | 1;

		victim_ops(&cs, ue_xs_rn(&cs, 8), false);
		if (ue_xs_rn(&cs, 2))
			_exit(0);
		for (;;)
			pause();
	}
	return 0;
}

static void *victim_thread(void *arg);

static int v_thread(unsigned long long *s)
{
	pthread_t t;

	if (atomic_load(&vic->nthreads) >= 6)
		return -EAGAIN;
	atomic_fetch_add(&vic->nthreads, 1);
	if (pthread_create(&t, NULL, victim_thread, (void *)(uintptr_t)ue_xs_next(s))) {
		atomic_fetch_sub(&vic->nthreads, 1);
		return -EAGAIN;
	}
	pthread_detach(t);
	return 0;
}

static int v_del(unsigned long long *s)
{
	char name[32];

	snprintf(name, sizeof(name), HF_PFX "%d", ue_xs_rn(s, HF_NAMES));
	return ioctl(vic->fd, DIAG_IOCSDEL, name) ? -errno : 0;
}

static int v_op(unsigned long long *s, int op)
{
	char *page;

	/* where: 0 the userfaultfd pages, 1 the FUSE file, 2 ordinary pages */
	if (vic->fuse_area == NULL && (op == H_REG_FUSE || op == H_WRITE_FUSE))
		return -ENOENT;
	switch (op) {
	case H_REG_UFFD: case H_REG_FUSE: case H_REG_PLAIN:
		return v_reg(s, op - H_REG_UFFD);
	case H_WRITE_UFFD: case H_WRITE_FUSE: case H_WRITE:
		return v_write(s, op - H_WRITE_UFFD);
	case H_DROP_UFFD: case H_DROP_FUSE:
		return v_drop(s, op == H_DROP_FUSE);
	case H_UNREG:
		return v_unreg(s);
	case H_WP:
		return v_wp(s);
	case H_FORK: case H_CLONE:
		if (am_excluded(opt, op == H_FORK ? "fork" : "clone"))
			return -EPERM;
		return op == H_FORK ? v_fork(s) : v_clone(s);
	case H_THREAD:
		return v_thread(s);
	case H_MPROTECT:
		page = vic->uffd_area + 4096 * ue_xs_rn(s, HF_PAGES);
		if (mprotect(page, 4096, PROT_READ))
			return -errno;
		usleep(ue_xs_rn(s, 2000));
		return mprotect(page, 4096, PROT_READ | PROT_WRITE) ? -errno : 0;
	case H_MUNMAP:
		/* An ordinary page again, no longer under the userfaultfd */
		page = vic->uffd_area + 4096 * ue_xs_rn(s, HF_PAGES);
		return mmap(page, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		       MAP_FAILED ? -errno : 0;
	case H_DEL:
		return v_del(s);
	case H_EXIT:
		if (ue_xs_rn(s, 4))
			return 0;
		/* A thread leaves (the owner may be it), or all of them */
		if (ue_xs_rn(s, 2) && atomic_load(&vic->nthreads) > 1) {
			atomic_fetch_sub(&vic->nthreads, 1);
			pthread_exit(NULL);
		}
		_exit(0);
	}
	return -EINVAL;
}

static const int v_weight[H_NR] = {
	[H_REG_UFFD] = 14, [H_REG_FUSE] = 8, [H_REG_PLAIN] = 4, [H_UNREG] = 4,
	[H_DROP_UFFD] = 8, [H_DROP_FUSE] = 6, [H_WP] = 5, [H_WRITE_UFFD] = 8,
	[H_WRITE_FUSE] = 5, [H_WRITE] = 4, [H_FORK] = 2, [H_CLONE] = 1,
	[H_THREAD] = 2, [H_MPROTECT] = 2, [H_MUNMAP] = 1, [H_DEL] = 2,
	[H_EXIT] = 1,
};

static void victim_ops(unsigned long long *s, int nops, bool clone_vm)
{
	int total = 0, op, r, i;

	for (op = 0; op < H_NR; op++)
		total += v_weight[op];
	for (i = 0; i < nops; i++) {
		r = ue_xs_rn(s, total);
		for (op = 0; op < H_NR && r >= v_weight[op]; op++)
			r -= v_weight[op];
		if (op >= H_NR || (clone_vm && op >= H_FORK && op != H_DEL))
			continue;
		am_count(&sh->ops[op], v_op(s, op));
	}
}

static void *victim_thread(void *arg)
{
	unsigned long long s = (uintptr_t)arg | 1;

	for (;;) {
		victim_ops(&s, 1, false);
		usleep(ue_xs_rn(&s, 3000));
	}
	return NULL;
}

static int uffd_setup(unsigned long long *s)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zp;
	char cbuf[CMSG_SPACE(sizeof(int))], c = 'u';
	struct iovec iov = { &c, 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int i;

	vic->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (vic->uffd < 0)
		return -errno;
	if (!am_excluded(opt, "fork") && ue_xs_rn(s, 2))
		api.features |= UFFD_FEATURE_EVENT_FORK;
	if (!am_excluded(opt, "wp") && atomic_load(&sh->wp_ok) && ue_xs_rn(s, 2))
		api.features |= UFFD_FEATURE_PAGEFAULT_FLAG_WP;
	if (ioctl(vic->uffd, UFFDIO_API, &api))
		return -errno;
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)vic->uffd_area;
	reg.range.len = HF_PAGES * 4096UL;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP) {
		reg.mode |= UFFDIO_REGISTER_MODE_WP;
		vic->wp = !ioctl(vic->uffd, UFFDIO_REGISTER, &reg);
		if (!vic->wp)
			reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	}
	if (!vic->wp && ioctl(vic->uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	/* Some pages there, the others missing */
	for (i = 0; i < HF_PAGES; i++) {
		if (ue_xs_rn(s, 2))
			continue;
		memset(&zp, 0, sizeof(zp));
		zp.range.start = (uintptr_t)vic->uffd_area + 4096UL * i;
		zp.range.len = 4096;
		ioctl(vic->uffd, UFFDIO_ZEROPAGE, &zp);
	}
	/* The holder keeps it for ever */
	mh.msg_controllen = CMSG_SPACE(sizeof(int));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &vic->uffd, sizeof(int));
	return sendmsg(hsock[1], &mh, 0) < 0 ? -errno : 0;
}

static void victim_process(unsigned long long seed)
{
	struct victim v;
	int i, n;

	setpgid(0, 0);
	memset(&v, 0, sizeof(v));
	vic = &v;
	v.s = seed | 1;
	v.fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	v.uffd_area = mmap(NULL, HF_PAGES * 4096UL, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	v.plain = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v.fd < 0 || v.uffd_area == MAP_FAILED || v.plain == MAP_FAILED)
		_exit(3);
	if (uffd_setup(&v.s))
		_exit(4);
	if (fuse_ok && ue_xs_rn(&v.s, 4)) {
		v.fuse_area = mmap(NULL, HF_FSIZE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, fuse_file, 0);
		if (v.fuse_area == MAP_FAILED)
			_exit(5);
		/* Some pages read, some copied on write, the others not */
		for (i = 0; i < HF_PAGES; i++) {
			if (atomic_load(&sh->fuse_frozen))
				break;
			if (!ue_xs_rn(&v.s, 3))
				__atomic_load_n(v.fuse_area + 4096 * i, __ATOMIC_RELAXED);
			else if (!ue_xs_rn(&v.s, 3))
				v.fuse_area[4096 * i] = 1;
		}
	}
	n = 1 + ue_xs_rn(&v.s, 3);
	atomic_store(&v.nthreads, n);
	for (i = 1; i < n; i++) {
		pthread_t t;

		pthread_create(&t, NULL, victim_thread,
			       (void *)(uintptr_t)ue_xs_next(&v.s));
		pthread_detach(t);
	}
	victim_thread((void *)(uintptr_t)ue_xs_next(&v.s));
}

/* The toggler: state changes, so that bits must be written */
static void toggler_process(void)
{
	unsigned long long s = opt->seed ^ 0x7066ULL;
	char path[256];
	int ret, on;

	s |= 1;
	while (!atomic_load(&sh->stop)) {
		if (atomic_load(&sh->pause_toggler)) {
			atomic_store(&sh->toggler_paused, 1);
			usleep(2000);
			continue;
		}
		atomic_store(&sh->toggler_paused, 0);
		on = ue_xs_rn(&s, 2);
		if (ue_xs_rn(&s, 5)) {
			snprintf(path, sizeof(path), HF_PFX "%d",
				 ue_xs_rn(&s, HF_NAMES));
			ret = am_event_enable(opt, UE_TRACEFS,
					      USER_EVENTS_SYSTEM, path, on);
		} else {
			ret = am_write_str(UE_TRACEFS "/events/"
					   USER_EVENTS_SYSTEM "/enable",
					   on ? "1" : "0");
		}
		am_count(&sh->ops[on ? H_ENABLE : H_DISABLE], ret);
		usleep(ue_xs_rn(&s, 5000));
	}
	_exit(0);
}

/* The aftermath check */

struct vslot {
	pid_t pid;		/* also the process group */
	long kill_at;
};

/* Every process group of victims of a cycle */
#define HF_MAX_GROUPS 1024
struct vgroups {
	pid_t pgid[HF_MAX_GROUPS];
	int n;
};

/* Where the victims' tasks wait: userfaultfd, FUSE (for the report) */
static void count_waiting(struct vslot *v, int n)
{
	char path[300], buf[128];
	int i;

	for (i = 0; i < n; i++) {
		DIR *d;
		struct dirent *e;

		if (v[i].pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", v[i].pid);
		d = opendir(path);
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan",
				 v[i].pid, e->d_name);
			if (ue_read_upto(path, buf, sizeof(buf)) <= 0)
				continue;
			if (strstr(buf, "userfault"))
				atomic_fetch_add(&sh->waiting_uffd, 1);
			else if (strstr(buf, "fuse") || strstr(buf, "folio") ||
				 strstr(buf, "page") ||
				 strstr(buf, "request_wait_answer"))
				atomic_fetch_add(&sh->waiting_fuse, 1);
		}
		if (d)
			closedir(d);
	}
}

/*
 * Kills every process group of this cycle's victims (what they forked or
 * cloned is in it) and reaps them all (this is a subreaper): false when
 * one is left after @limit_ms
 */
static bool kill_all(struct vgroups *g, long limit_ms)
{
	long end = ue_now_ms() + limit_ms;
	bool left;
	int i;

	do {
		left = false;
		for (i = 0; i < g->n; i++) {
			if (!g->pgid[i])
				continue;
			if (kill(-g->pgid[i], SIGKILL) && errno == ESRCH)
				g->pgid[i] = 0;
			else
				left = true;
		}
		reap();
		if (left)
			usleep(10000);
	} while (left && ue_now_ms() < end);
	return !left;
}

/*
 * Every event deleted and the module unloaded: ms it took, or -1 when it
 * did not happen within HF_WAIT_MS
 */
static long unload_all(void)
{
	long t0 = ue_now_ms();
	int left = 1, ret = -1;

	while (ue_now_ms() - t0 < HF_WAIT_MS) {
		am_write_str(UE_TRACEFS "/events/" USER_EVENTS_SYSTEM "/enable", "0");
		left = am_delete_names(HF_PFX, HF_NAMES);
		if (!left) {
			ret = am_mod_unload();
			if (!ret)
				return ue_now_ms() - t0;
		}
		usleep(20000);
	}
	printf("#   after %d ms: %d event name(s) left, rmmod: %s\n", HF_WAIT_MS,
	       left, left ? "not tried" : strerror(-ret));
	return -1;
}

static void check(struct vslot *v, int n, struct vgroups *g, int cycle)
{
	long ms;
	char buf[4096];

	/* Nothing but the administrator from now on */
	atomic_store(&sh->pause_toggler, 1);
	while (!atomic_load(&sh->toggler_paused) && !atomic_load(&sh->stop))
		usleep(1000);
	count_waiting(v, n);
	if (fuse_ok) {
		long w = fuse_waiting();

		if (w > atomic_load(&sh->fuse_pending_max))
			atomic_store(&sh->fuse_pending_max, w);
	}
	if (!kill_all(g, HF_LIMIT_MS)) {
		atomic_fetch_add(&sh->reap_fail, 1);
		bad("cycle %d: victims not reaped %d ms after SIGKILL", cycle,
		    HF_LIMIT_MS);
		printf("# held: cycle %d: victims left after SIGKILL:\n", cycle);
		am_dump_blocked();
		kill_all(g, HF_WAIT_MS);
	}
	ms = unload_all();
	am_count(&sh->ops[H_CHECK], ms >= 0 && ms <= HF_LIMIT_MS ? 0 : -EBUSY);
	atomic_fetch_add(&sh->checks, 1);
	if (ms < 0 || ms > HF_LIMIT_MS) {
		atomic_fetch_add(&sh->check_fail, 1);
		bad("cycle %d: events deleted and module unloaded %s%ld ms after the victims died",
		    cycle, ms < 0 ? "not within " : "in ", ms < 0 ? HF_WAIT_MS : ms);
		printf("# held: cycle %d: unload took %ld ms; user_events_status:\n",
		       cycle, ms);
		if (ue_read_upto(UE_TRACEFS "/user_events_status", buf, sizeof(buf)) > 0)
			printf("%s", buf);
		am_dump_blocked();
	}
	if (ms >= 0) {
		atomic_fetch_add(&sh->sum_ms, ms);
		if (ms > atomic_load(&sh->max_ms))
			atomic_store(&sh->max_ms, ms);
	}
	if (opt->verbose)
		printf("# held: cycle %d: unloaded %ld ms after the victims died\n",
		       cycle, ms);
	/* For the next cycle: the module, no held fault, the server going */
	if (ms >= 0 && am_mod_load(opt->module_ko))
		bad("cycle %d: insmod: %s", cycle, strerror(errno));
	atomic_store(&sh->release, 1);
	atomic_store(&sh->fuse_frozen, 0);
	while (atomic_load(&sh->release) && !atomic_load(&sh->stop))
		usleep(1000);
	atomic_store(&sh->pause_toggler, 0);
}

/* Can this kernel write-protect anonymous pages with a userfaultfd? */
static bool probe_wp(void)
{
	struct uffdio_api api = {
		.api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP,
	};
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = !ioctl(fd, UFFDIO_API, &api);
	close(fd);
	return ok;
}

int am_held(const struct am_opts *o)
{
	unsigned long long s = o->seed ^ 0x4E1DULL;
	struct vslot v[HF_MAX_VICTIMS];
	static struct vgroups groups;
	static const int pct[] = { 0, 10, 30, 60 };
	pid_t holder, toggler, server;
	int nv = o->nprocs < HF_MAX_VICTIMS ? o->nprocs : HF_MAX_VICTIMS;
	int i, cycle = 0, ret;
	long end;

	opt = o;
	s |= 1;
	if (!o->module_ko) {
		am_tap(false, "held: needs -m MODULE.ko");
		return am_tap_summary();
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, hsock))
		return 2;
	atomic_store(&sh->wp_ok, !am_excluded(o, "wp") && probe_wp());
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	holder = fork();
	if (!holder)
		holder_process();
	server = fuse_start();
	toggler = fork();
	if (!toggler)
		toggler_process();
	printf("# held: %d victims at a time, parts: userfaultfd%s%s%s%s\n", nv,
	       atomic_load(&sh->wp_ok) ? " uffd-wp" : "", fuse_ok ? " fuse" : "",
	       am_excluded(o, "fork") ? "" : " fork",
	       am_excluded(o, "clone") ? "" : " clone_vm");

	memset(v, 0, sizeof(v));
	end = ue_now_ms() + o->secs * 1000L;
	while (ue_now_ms() < end) {
		long cycle_end = ue_now_ms() + 2000 + ue_xs_rn(&s, 4000);
		long thaw_end = ue_now_ms() + 200 + ue_xs_rn(&s, 500);
		bool freeze = ue_xs_rn(&s, 10) < 7;

		if (cycle_end > end)
			cycle_end = end;
		cycle++;
		atomic_store(&sh->resolve_pct, pct[ue_xs_rn(&s, 4)]);
		while (ue_now_ms() < cycle_end) {
			long now = ue_now_ms();

			if (freeze && now >= thaw_end)
				atomic_store(&sh->fuse_frozen, 1);
			for (i = 0; i < nv; i++) {
				if (v[i].pid > 0 && now >= v[i].kill_at) {
					kill(-v[i].pid, SIGKILL);
					am_count(&sh->ops[H_KILL], 0);
					v[i].kill_at = now + 100000;
				}
				if (v[i].pid > 0 && kill(v[i].pid, 0) && errno == ESRCH) {
					/* Reaped: its forks and clones go with it */
					kill(-v[i].pid, SIGKILL);
					v[i].pid = 0;
				}
				if (v[i].pid || groups.n == HF_MAX_GROUPS)
					continue;
				v[i].kill_at = now + 50 + ue_xs_rn(&s, 1500);
				v[i].pid = fork();
				if (!v[i].pid)
					victim_process(ue_xs_next(&s));
				am_count(&sh->ops[H_VICTIM], v[i].pid < 0 ? -errno : 0);
				if (v[i].pid < 0) {
					v[i].pid = 0;
					continue;
				}
				setpgid(v[i].pid, v[i].pid);
				groups.pgid[groups.n++] = v[i].pid;
			}
			/* Reap what died on its own (forks, clones) */
			reap();
			usleep(5000);
		}
		check(v, nv, &groups, cycle);
		memset(v, 0, sizeof(v));
		groups.n = 0;
	}
	atomic_store(&sh->stop, 1);
	atomic_store(&sh->fuse_frozen, 0);
	waitpid(toggler, NULL, 0);
	waitpid(holder, NULL, 0);
	if (server > 0) {
		umount2(HF_MNT, MNT_DETACH);
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
		rmdir(HF_MNT);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;

	printf("# ue_race: %ld operations in %ds, seed %llu\n",
	       am_print_counts(op_names, sh->ops, H_NR), o->secs, o->seed);
	printf("# held: %ld checks, unload %ld ms at most, %ld ms on average",
	       atomic_load(&sh->checks), atomic_load(&sh->max_ms),
	       atomic_load(&sh->checks) ?
	       atomic_load(&sh->sum_ms) / atomic_load(&sh->checks) : 0);
	printf(" after the victims died\n");
	printf("# held: at the checks, %ld victim tasks were waiting in a userfaultfd,",
	       atomic_load(&sh->waiting_uffd));
	printf(" %ld in FUSE or a page lock; at most %ld FUSE requests queued\n",
	       atomic_load(&sh->waiting_fuse), atomic_load(&sh->fuse_pending_max));
	for (i = 0; i < atomic_load(&sh->nbad) && i < HF_MSGS; i++)
		printf("#   %s\n", sh->bad[i]);
	am_tap(!atomic_load(&sh->crashed),
	       "held: no victim crashed or failed its setup (%ld did)",
	       atomic_load(&sh->crashed));
	am_tap(!atomic_load(&sh->reap_fail),
	       "held: every killed victim was reaped within %d ms (%ld cycles failed)",
	       HF_LIMIT_MS, atomic_load(&sh->reap_fail));
	am_tap(atomic_load(&sh->checks) && !atomic_load(&sh->check_fail),
	       "held: after each of %ld cycles, every event deleted and the module unloaded within %d ms (%ld not)",
	       atomic_load(&sh->checks), HF_LIMIT_MS, atomic_load(&sh->check_fail));
	am_tap(atomic_load(&sh->ops[H_FAULT_HELD].n) > 0 &&
	       atomic_load(&sh->waiting_uffd) > 0 &&
	       (!fuse_ok || atomic_load(&sh->waiting_fuse) > 0),
	       "held: faults were held for ever at the checks (%ld userfaultfd faults held; tasks waiting: %ld in one, %ld in FUSE)",
	       atomic_load(&sh->ops[H_FAULT_HELD].n), atomic_load(&sh->waiting_uffd),
	       atomic_load(&sh->waiting_fuse));
	/* The module is loaded again after the last check */
	ret = am_mod_unload();
	am_tap(!ret, "rmmod after the run: %s", ret ? strerror(-ret) : "done");
	am_tap(access(UE_DATA_FILE, F_OK) &&
	       access(UE_TRACEFS "/events/" USER_EVENTS_SYSTEM, F_OK),
	       "no user_events files left in tracefs");
	am_tap(!am_mod_load(o->module_ko), "insmod after the run");
	return am_tap_summary();
}
