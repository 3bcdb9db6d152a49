/* SPDX-License-Identifier: GPL-2.0 */
/*
 * user_events.ko selftests: the writer mode shared by the tests that run
 * themselves under trace-cmd, perf or bpftrace. With UE_TEST_WRITER=1 in
 * its environment the test program registers UE_W_DESC, waits for a probe
 * on the event, writes the payloads of UE_W_HEX (hex, separated by commas)
 * and exits before the test harness starts. Also the helpers that start
 * such a writer and show its output.
 */
#ifndef UE_WRITER_H
#define UE_WRITER_H

#include <sys/mman.h>
#include <sys/wait.h>

#include "ue_test.h"

static inline volatile unsigned char *map_status(void)
{
	void *p;
	int fd = open(UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	p = mmap(NULL, UE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The setup of the fixtures of the programs run under the tools: the
 * status page mapped into page, the data file opened into fd, the
 * record header size known
 */
#define UE_ASSERT_WRITER_SETUP(page, fd) do {				\
	(page) = map_status();						\
	ASSERT_NE(NULL, (page));					\
	UE_ASSERT_OPEN_DATA(fd);					\
	UE_ASSERT_HDR_SIZE();						\
} while (0)

/* ... and their teardown's end: the events of prefix are deleted */
static inline void ue_writer_teardown(struct __test_metadata *_metadata,
				      volatile unsigned char *page, int fd,
				      const char *prefix)
{
	if (page)
		munmap((void *)page, UE_PAGE_SIZE);
	ue_close_fd(fd);
	EXPECT_EQ(0, ue_delete_prefix(prefix));
}

static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Writer mode: register, wait for a probe, write each payload */
static inline int writer_run(void)
{
	const char *desc = getenv("UE_W_DESC");
	const char *hex = getenv("UE_W_HEX");
	volatile unsigned char *page;
	unsigned char buf[4096];
	int fd, s = -1, w = -1, i, ret;
	size_t len;

	if (!desc || !hex)
		return 2;

	fd = ue_open_data();
	page = map_status();
	if (fd < 0 || !page) {
		perror("writer: open user_events");
		return 2;
	}
	ret = ue_reg(fd, desc, &s, &w);
	if (ret) {
		fprintf(stderr, "writer: register \"%s\": %s\n", desc, strerror(-ret));
		return 2;
	}
	/* Nothing to write: only register */
	if (!*hex)
		return 0;

	/* The tool enables the event before it starts us; wait up to 60s */
	for (i = 0; i < 6000 && !page[s]; i++)
		usleep(10000);
	if (!page[s]) {
		fprintf(stderr, "writer: nothing enabled the event\n");
		return 3;
	}

	while (*hex) {
		memcpy(buf, &w, sizeof(w));
		len = sizeof(w);
		while (*hex && *hex != ',' && len < sizeof(buf)) {
			buf[len++] = hexval(hex[0]) << 4 | hexval(hex[1]);
			hex += 2;
		}
		if (*hex == ',')
			hex++;
		if (write(fd, buf, len) != (ssize_t)len) {
			fprintf(stderr, "writer: write: %s\n", strerror(errno));
			return 4;
		}
	}

	close(fd);
	return 0;
}

static void __attribute__((constructor)) writer_mode(void)
{
	if (getenv("UE_TEST_WRITER"))
		_exit(writer_run());
}

/* Append the hex of len bytes to a UE_W_HEX list */
static inline void hex_append(char *out, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t pos = strlen(out);

	if (pos)
		out[pos++] = ',';
	for (size_t i = 0; i < len; i++)
		pos += sprintf(out + pos, "%02x", b[i]);
}

/* out = the hex of len bytes at p */
static inline void hex_of(char *out, const void *p, size_t len)
{
	out[0] = '\0';
	hex_append(out, p, len);
}

/*
 * Run argv with extra environment (NULL terminated "K=V" list), stdout
 * and stderr into files out_path and err_path. Returns the wait status.
 */
static inline int run_cmd(char *const argv[], char *const env[],
		   const char *out_path, const char *err_path)
{
	int status = -1;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		for (; env && *env; env++)
			putenv(*env);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;

	return status;
}

/* Print a file to the test log (for failures) */
static inline void log_file(const char *path)
{
	static char buf[16384];

	if (ue_read_file(path, buf, sizeof(buf)) >= 0 || buf[0])
		fprintf(stderr, "# ---- %s:\n%s\n# ----\n", path, buf);
}

/* The tool gave exactly one line; else what it recorded and reported */
#define UE_ASSERT_ONE_LINE(n) do {					\
	ASSERT_EQ(1, (n)) {						\
		log_file("record.err");					\
		log_file("report.out");					\
	}								\
} while (0)

/* Did the writer run under a tool complain (on the tool's stderr)? */
static inline bool writer_failed(const char *err_path)
{
	static char buf[16384];

	return ue_read_file(err_path, buf, sizeof(buf)) >= 0 &&
	       strstr(buf, "writer: ");
}

static inline const char *self_exe(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n < 0)
		return NULL;
	path[n] = '\0';
	return path;
}

/*
 * Run a recording tool around this program in writer mode (registers desc,
 * writes the payloads of hex): rec_argv, which records into the file
 * data, then rep_argv, its report. The report's lines holding needle go
 * to lines[] as ue_file_lines() gives them; data is removed. Returns their number, -1 (and
 * the tools' output in the test log) if a command failed.
 */
static inline int ue_record_report(struct __test_metadata *_metadata,
				   char *const rec_argv[], char *const rep_argv[],
				   const char *data, const char *desc,
				   const char *hex, const char *needle,
				   char lines[][UE_LINE_MAX], int max)
{
	static char env_desc[600], env_hex[8300];
	char *env[] = { "UE_TEST_WRITER=1", env_desc, env_hex, NULL };
	char old[300];
	int status, n;

	snprintf(env_desc, sizeof(env_desc), "UE_W_DESC=%s", desc);
	snprintf(env_hex, sizeof(env_hex), "UE_W_HEX=%s", hex);

	status = run_cmd(rec_argv, env, "record.out", "record.err");
	if (status != 0 || writer_failed("record.err")) {
		log_file("record.out");
		log_file("record.err");
		TH_LOG("%s %s: wait status %#x", rec_argv[0], rec_argv[1], status);
		return -1;
	}

	status = run_cmd(rep_argv, NULL, "report.out", "report.err");
	n = ue_file_lines("report.out", needle, lines, max);
	unlink(data);
	snprintf(old, sizeof(old), "%s.old", data);
	unlink(old);
	if (status != 0) {
		log_file("report.out");
		log_file("report.err");
		TH_LOG("%s %s: wait status %#x%s", rep_argv[0], rep_argv[1], status,
		       WIFSIGNALED(status) ? " (killed by a signal)" : "");
		return -1;
	}

	return n;
}

#endif /* UE_WRITER_H */
