// SPDX-License-Identifier: GPL-2.0
/*
 * Delivery to BPF without a compiler or libbpf: a BPF_PROG_TYPE_TRACEPOINT
 * program written as raw instructions, loaded with the bpf() syscall and
 * attached to a user event through perf (PERF_EVENT_IOC_SET_BPF), the way
 * bpftrace and BCC attach to any tracepoint.
 *
 *   count <event> <field> [seconds]      e.g. count test count 5
 *
 * The program runs on every write of user_events:<event>, on any CPU, and
 * adds to an array map: the number of writes, the sum of <field> and its
 * last value. Its context is the record as events/user_events/<event>/format
 * lays it out (the common fields, 8 bytes or 12 on Debian's 6.1 PREEMPT_RT
 * kernel, then the fields packed in order), so the field's offset and size
 * are taken from that file. Fields are
 * packed, hence maybe unaligned: the program copies the field with
 * bpf_probe_read_kernel() instead of loading it from the context.
 *
 * Run it while a writer writes the event, e.g. samples/example:
 *   ./example 10 & ./count test count 5
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

#define EVENTS "/sys/kernel/tracing/events/user_events/"

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* "\tfield:<type> <name>[...];\toffset:<n>;\tsize:<n>;..." */
static int field_location(const char *event, const char *name, int *off, int *size)
{
	static char buf[65536];
	char path[512], *line;

	snprintf(path, sizeof(path), EVENTS "%s/format", event);
	if (read_file(path, buf, sizeof(buf)))
		return -1;

	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *end = strstr(line, ";\toffset:"), *fname;

		if (!strstr(line, "field:") || !end)
			continue;
		*end = '\0';
		fname = strrchr(line, ' ');
		if (!fname || strcmp(fname + 1, name))
			continue;
		if (sscanf(end + 1, "\toffset:%d;\tsize:%d;", off, size) == 2)
			return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *event, *field;
	int seconds, off, size, id, i;
	int map_fd, prog_fd, perf_fd;
	union bpf_attr attr;
	struct perf_event_attr pe;
	char path[512], buf[64];
	static char log[65536];
	__u64 value[3];
	__u32 key = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s <event> <field> [seconds]\n", argv[0]);
		return 2;
	}
	event = argv[1];
	field = argv[2];
	seconds = argc > 3 ? atoi(argv[3]) : 5;

	snprintf(path, sizeof(path), EVENTS "%s/id", event);
	if (read_file(path, buf, sizeof(buf))) {
		fprintf(stderr, "no user event %s (is it registered?)\n", event);
		return 1;
	}
	id = atoi(buf);
	if (field_location(event, field, &off, &size) ||
	    (size != 1 && size != 2 && size != 4 && size != 8)) {
		fprintf(stderr, "%s has no integer field %s\n", event, field);
		return 1;
	}

	/* map[0] = { writes, sum of the field, last value } */
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = sizeof(key);
	attr.value_size = sizeof(value);
	attr.max_entries = 1;
	map_fd = sys_bpf(BPF_MAP_CREATE, &attr);
	if (map_fd < 0) {
		perror("BPF_MAP_CREATE");
		return 1;
	}

	{
		int bpf_size = size == 1 ? BPF_B : size == 2 ? BPF_H :
			       size == 4 ? BPF_W : BPF_DW;
		struct bpf_insn prog[] = {
			/* r6 = ctx: the record */
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
			/* bpf_probe_read_kernel(fp - 8, size, ctx + off) */
			INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, -8),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, size),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_6, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, off),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_read_kernel),
			/* r7 = the field */
			INSN(BPF_LDX | BPF_MEM | bpf_size, BPF_REG_7, BPF_REG_10, -8, 0),
			/* r0 = map_lookup_elem(map, &(u32){0}) */
			INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -16, 0),
			INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
			INSN(0, 0, 0, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -16),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
			INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 4, 0),
			/* writes += 1; sum += field; last = field */
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
			INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
			INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_7, 8, BPF_ADD),
			INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_7, 16, 0),
			/* 0: no perf sample, only the map */
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};

		memset(&attr, 0, sizeof(attr));
		attr.prog_type = BPF_PROG_TYPE_TRACEPOINT;
		attr.insns = (__u64)(uintptr_t)prog;
		attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
		attr.license = (__u64)(uintptr_t)"GPL";
		attr.log_buf = (__u64)(uintptr_t)log;
		attr.log_size = sizeof(log);
		attr.log_level = 1;
		prog_fd = sys_bpf(BPF_PROG_LOAD, &attr);
		if (prog_fd < 0) {
			fprintf(stderr, "BPF_PROG_LOAD: %s\n%s", strerror(errno), log);
			return 1;
		}
	}

	/*
	 * One perf event is enough: a tracepoint's BPF programs run for
	 * every hit, on every CPU, whatever CPU the perf event is bound to.
	 */
	pe = (struct perf_event_attr){
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(pe),
		.config = id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
	};
	perf_fd = syscall(__NR_perf_event_open, &pe, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (perf_fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd) ||
	    ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0)) {
		perror("PERF_EVENT_IOC_SET_BPF");
		return 1;
	}

	for (i = 1; i <= seconds; i++) {
		sleep(1);
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = map_fd;
		attr.key = (__u64)(uintptr_t)&key;
		attr.value = (__u64)(uintptr_t)value;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr)) {
			perror("BPF_MAP_LOOKUP_ELEM");
			return 1;
		}
		printf("%ds: %s writes=%llu sum(%s)=%llu last=%llu\n", i, event,
		       (unsigned long long)value[0], field,
		       (unsigned long long)value[1], (unsigned long long)value[2]);
		fflush(stdout);
	}

	/* Closing the perf event detaches the program */
	close(perf_fd);
	close(prog_fd);
	close(map_fd);
	return 0;
}
