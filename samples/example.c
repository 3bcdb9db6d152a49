// SPDX-License-Identifier: GPL-2.0
/*
 * Status page ABI example: the flow of the original user_events design.
 *
 * Maps the status page, registers the event "test" with one u32 field,
 * then for a few seconds checks the event's status byte and, when a
 * tracer listens, writes the event with writev(): the write index first,
 * then the payload.
 *
 *   echo 1 > /sys/kernel/tracing/events/user_events/test/enable
 *   cat /sys/kernel/tracing/trace
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/user_events.h>

#define TRACEFS "/sys/kernel/tracing/"

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 3;
	struct user_reg reg = { 0 };
	unsigned int count = 0;
	struct iovec io[2];
	char *status_page;
	int page_fd, data_fd, i;

	page_fd = open(TRACEFS "user_events_status", O_RDONLY);
	if (page_fd < 0) {
		perror("open user_events_status (is user_events.ko loaded?)");
		return 1;
	}

	status_page = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
			   page_fd, 0);
	close(page_fd);
	if (status_page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	data_fd = open(TRACEFS "user_events_data", O_RDWR);
	if (data_fd < 0) {
		perror("open user_events_data");
		return 1;
	}

	reg.size = sizeof(reg);
	reg.name_args = (__u64)(unsigned long)"test u32 count";
	if (ioctl(data_fd, DIAG_IOCSREG, &reg) < 0) {
		perror("DIAG_IOCSREG");
		return 1;
	}
	printf("registered test: status_index=%u write_index=%u\n",
	       reg.status_index, reg.write_index);

	io[0].iov_base = &reg.write_index;
	io[0].iov_len = sizeof(reg.write_index);
	io[1].iov_base = &count;
	io[1].iov_len = sizeof(count);

	for (i = 0; i < seconds * 10; i++) {
		/* The cheap check: one byte load and a branch */
		if (status_page[reg.status_index]) {
			count++;
			if (writev(data_fd, io, 2) < 0 && errno != EBADF)
				perror("writev");
		}
		usleep(100000);
	}

	printf("wrote %u events\n", count);
	close(data_fd);
	return 0;
}
