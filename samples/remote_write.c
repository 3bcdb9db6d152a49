// SPDX-License-Identifier: GPL-2.0
/*
 * Remote write ABI example (the user_events ABI of Linux 6.4 and later).
 *
 * Registers the event "remote_write" with one u32 field and hands the
 * kernel the address of a 32-bit word of this process and a bit in it:
 * the kernel sets that bit while a tracer (ftrace, perf, ...) listens to
 * the event and clears it otherwise. There is nothing to map: the program
 * tests the bit, and writes the event with writev() (the write index
 * first, then the payload) only while it is set. Bit 31 is used here, so
 * the other bits of the word stay free for the program's own use.
 *
 * Without USER_EVENT_REG_PERSIST the event goes away by itself once this
 * program has unregistered, closed the data file (or exited) and no
 * tracer uses it.
 *
 *   ./remote_write 10 &
 *   echo 1 > /sys/kernel/tracing/events/user_events/remote_write/enable
 *   cat /sys/kernel/tracing/trace
 */
#define USER_EVENTS_REMOTE_WRITE_ABI
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/user_events.h>

#define TRACEFS "/sys/kernel/tracing/"
#define ENABLE_BIT 31

/* The kernel updates this word atomically: read it atomically too */
static __u32 enabled;

static int event_enabled(void)
{
	return __atomic_load_n(&enabled, __ATOMIC_RELAXED) & (1U << ENABLE_BIT);
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 3;
	unsigned int count = 0, written = 0;
	struct user_unreg unreg = { 0 };
	struct user_reg reg = { 0 };
	struct iovec io[2];
	int data_fd, i;

	data_fd = open(TRACEFS "user_events_data", O_RDWR);
	if (data_fd < 0) {
		perror("open user_events_data (is user_events.ko loaded?)");
		return 1;
	}

	reg.size = sizeof(reg);
	reg.enable_bit = ENABLE_BIT;
	reg.enable_size = sizeof(enabled);
	reg.enable_addr = (__u64)(uintptr_t)&enabled;
	reg.name_args = (__u64)(uintptr_t)"remote_write u32 count";
	if (ioctl(data_fd, DIAG_IOCSREG, &reg) < 0) {
		perror("DIAG_IOCSREG");
		return 1;
	}
	printf("registered: write_index %u, enabled now: %s\n",
	       reg.write_index, event_enabled() ? "yes" : "no");

	io[0].iov_base = &reg.write_index;
	io[0].iov_len = sizeof(reg.write_index);
	io[1].iov_base = &count;
	io[1].iov_len = sizeof(count);

	for (i = 0; i < seconds * 10; i++, count++) {
		if (event_enabled()) {
			/* EBADF: disabled since the check, the event is dropped */
			if (writev(data_fd, io, 2) >= 0)
				written++;
			else if (errno != EBADF)
				perror("writev");
		}
		usleep(100 * 1000);
	}
	printf("%u events written\n", written);

	/* The bit is cleared, and the kernel no longer touches the word */
	unreg.size = sizeof(unreg);
	unreg.disable_bit = ENABLE_BIT;
	unreg.disable_addr = (__u64)(uintptr_t)&enabled;
	if (ioctl(data_fd, DIAG_IOCSUNREG, &unreg) < 0)
		perror("DIAG_IOCSUNREG");

	close(data_fd);
	return 0;
}
