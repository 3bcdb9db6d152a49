// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: how the module found the tracing core's
 * variables (Documentation/compat.rst, "Kernels whose kallsyms lists no
 * variables").
 *
 * The module derives event_mutex, dyn_event_ops_mutex, dyn_event_ops_list
 * and dyn_event_list on every kernel (from what the kernel's functions
 * pass to mutex_lock(), seq_list_start() and the like), and
 * says in its read-only parameter "symbols" where each address comes from.
 * Where /proc/kallsyms lists a variable, the module uses kallsyms' address
 * and its derivation must have found the same one ("kallsyms, derivation
 * agrees"); elsewhere the derived address must be in use ("derived"). So a
 * derivation that would pick a wrong address fails here on every kernel,
 * not only on the kernels that need it. The module is then loaded with
 * ksyms_test=derived, which uses the derived addresses even where kallsyms
 * has them, and with one of them forced to fail (ksyms_test=fail:...),
 * which a kernel without the variables in kallsyms must refuse, and which
 * every kernel must refuse on derived addresses
 * (ksyms_test=derived,fail:...), leaving nothing behind. The
 * one-copy write path is on exactly where trace_buffered_event is in
 * kallsyms (one_copy). Any other ksyms_test value is refused (EINVAL,
 * and a line in the kernel log saying why).
 *
 * A module of the test tree (tests/kmod/ue_ksyms_decoy.c, built next to
 * the module in build/<release>/test-kmod) defines data symbols of the
 * same names and waits in its init, where kallsyms_lookup_name() finds
 * them when the core's table lacks the names (without
 * CONFIG_KALLSYMS_ALL): the module loaded meanwhile must use the core's
 * own variables, never the decoy's.
 *
 * Needs UE_MODULE (path of the .ko) in the environment, as the guest
 * runner of `make check` sets it. Every test leaves the module loaded with
 * its default parameters.
 */
#include <sys/wait.h>

#include "ue_test.h"

static const char * const vars[] = {
	"event_mutex", "dyn_event_ops_mutex", "dyn_event_ops_list",
	"dyn_event_list",
};

/* Does /proc/kallsyms list @name (a whole symbol, not a module's)? */
static bool in_kallsyms(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3)
			continue;
		if (!strcmp(sym, name) && !strchr(line, '[')) {
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

static int read_param(const char *param, char *buf, size_t size)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s",
		 ue_mod_name(), param);
	return ue_read_file(path, buf, size) < 0 ? -1 : 0;
}

/* The line of symbols about @var, or NULL */
static const char *report_line(const char *report, const char *var,
			       char *line, size_t size)
{
	size_t n = strlen(var);
	const char *p = report;

	while (p && *p) {
		if (!strncmp(p, var, n) && p[n] == ':') {
			const char *end = strchr(p, '\n');
			size_t len = end ? (size_t)(end - p) : strlen(p);

			if (len >= size)
				len = size - 1;
			memcpy(line, p, len);
			line[len] = '\0';
			return line;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static void reload(struct __test_metadata *_metadata, const char *params)
{
	ASSERT_EQ(0, ue_mod_reload(params)) TH_LOG("ue_mod_reload(\"%s\")", params);
}

/* The report lines of a load on the default parameters */
static void check_default_report(struct __test_metadata *_metadata)
{
	char report[4096], line[512], want[128];
	unsigned int i;

	ASSERT_EQ(0, read_param("symbols", report, sizeof(report)));
	TH_LOG("symbols:\n%s", report);
	for (i = 0; i < ARRAY_SIZE(vars); i++) {
		ASSERT_NE(NULL, report_line(report, vars[i], line, sizeof(line)))
			TH_LOG("no line about %s", vars[i]);
		if (in_kallsyms(vars[i]))
			snprintf(want, sizeof(want),
				 "%s: kallsyms, derivation agrees (", vars[i]);
		else
			snprintf(want, sizeof(want), "%s: derived (", vars[i]);
		EXPECT_EQ(0, strncmp(line, want, strlen(want)))
			TH_LOG("want '%s...', have '%s'", want, line);
	}
}

TEST(kallsyms_and_derivation_agree)
{
	reload(_metadata, "");
	check_default_report(_metadata);
}

TEST(one_copy_iff_staging_record_in_kallsyms)
{
	char val[16];
	bool have = in_kallsyms("trace_buffered_event") &&
		    in_kallsyms("trace_buffered_event_cnt");

	reload(_metadata, "");
	ASSERT_EQ(0, read_param("one_copy", val, sizeof(val)));
	EXPECT_EQ(have ? 'Y' : 'N', val[0])
		TH_LOG("one_copy=%c, trace_buffered_event %sin kallsyms", val[0],
		       have ? "" : "not ");
}

/* Loaded with ksyms_test=derived: every variable's line reads derived */
static void check_derived_report(struct __test_metadata *_metadata)
{
	char report[4096], line[512], want[128];
	unsigned int i;

	reload(_metadata, "ksyms_test=derived");
	ASSERT_EQ(0, read_param("symbols", report, sizeof(report)));
	for (i = 0; i < ARRAY_SIZE(vars); i++) {
		snprintf(want, sizeof(want), "%s: derived (", vars[i]);
		EXPECT_NE(NULL, report_line(report, vars[i], line, sizeof(line)));
		EXPECT_EQ(0, strncmp(line, want, strlen(want)))
			TH_LOG("want '%s...', have '%s'", want, line);
	}
}

TEST(derived_addresses_in_use)
{
	char val[16];

	check_derived_report(_metadata);
	ASSERT_EQ(0, read_param("one_copy", val, sizeof(val)));
	EXPECT_EQ('N', val[0]);
	/* The module works on them: an event made through dynamic_events */
	EXPECT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
				   "u:ue_ksyms_probe u32 a", false));
	EXPECT_TRUE(ue_event_exists("ue_ksyms_probe"));
	EXPECT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
				   "!u:ue_ksyms_probe", false));
	reload(_metadata, "");
}

TEST(forced_failure)
{
	char report[4096], line[512];
	bool need = !in_kallsyms("dyn_event_list");
	int ret;

	ue_delete_prefix("");
	ASSERT_EQ(0, ue_mod_unload_retry());
	ret = ue_mod_insmod("ksyms_test=fail:dyn_event_list");
	if (need) {
		/* Refused, and nothing left behind */
		EXPECT_EQ(-EOPNOTSUPP, ret);
		EXPECT_FALSE(ue_mod_loaded());
		EXPECT_NE(0, access(UE_TRACEFS "/user_events_data", F_OK));
	} else {
		/* Loaded on kallsyms' address, the failure reported */
		ASSERT_EQ(0, ret);
		ASSERT_EQ(0, read_param("symbols", report, sizeof(report)));
		ASSERT_NE(NULL, report_line(report, "dyn_event_list", line,
					    sizeof(line)));
		EXPECT_NE(NULL, strstr(line, "derivation FAILED (forced"))
			TH_LOG("%s", line);
		ASSERT_EQ(0, ue_mod_unload_retry());
	}
	ASSERT_EQ(0, ue_mod_insmod(""));
}

/*
 * On derived addresses (as without CONFIG_KALLSYMS_ALL) a failed check
 * refuses the load on every kernel, after the derivation ran the kernel's
 * functions (its probe on dyn_event_ops_list, event_mutex taken and
 * released): nothing may be left behind. A probe left on the list would be
 * called by the next write to dynamic_events, from a module no longer
 * loaded.
 */
FIXTURE(ksyms) {};
FIXTURE_SETUP(ksyms) {}
FIXTURE_TEARDOWN(ksyms)
{
	/* A decoy left in its init by a failed test: let it go */
	ue_write_file("/sys/module/ue_ksyms_decoy/parameters/release", "1",
		      false);
}

/*
 * Four loads that each run the whole derivation: on a loaded arm64 5.10
 * host this took longer than the harness' default 30 s
 */
TEST_F_TIMEOUT(ksyms, forced_failure_on_derived_refuses_cleanly, UE_TIMEOUT(180))
{
	static const char * const fails[] = {
		"dyn_event_list", "dyn_event_ops_list", "event_mutex",
		"dyn_event_ops_mutex",
	};
	char params[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fails); i++) {
		ue_delete_prefix("");
		ASSERT_EQ(0, ue_mod_unload_retry());
		snprintf(params, sizeof(params), "ksyms_test=derived,fail:%s",
			 fails[i]);
		EXPECT_EQ(-EOPNOTSUPP, ue_mod_insmod(params)) TH_LOG("%s", params);
		EXPECT_FALSE(ue_mod_loaded());
		EXPECT_NE(0, access(UE_TRACEFS "/user_events_data", F_OK));
		/* The kernel's dynamic events still work without the module */
		EXPECT_NE(0, ue_write_file(UE_TRACEFS "/dynamic_events",
					   "u:ue_ksyms_gone u32 a", false));
		ASSERT_EQ(0, ue_mod_insmod(""));
		EXPECT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
					   "u:ue_ksyms_back u32 a", false));
		EXPECT_TRUE(ue_event_exists("ue_ksyms_back"));
		EXPECT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
					   "!u:ue_ksyms_back", false));
	}
}

/* /dev/kmsg from its end: the records logged from now on */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Has a record whose text is exactly @want (or, with @prefix, begins with
 * it) been logged since kmsg_open()?
 */
static bool kmsg_has_line(int fd, const char *want, bool prefix)
{
	char rec[2048];
	ssize_t n;

	for (;;) {
		char *text, *end;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)	/* overwritten: go on */
			continue;
		if (n <= 0)
			return false;
		rec[n] = '\0';
		text = strchr(rec, ';');
		if (!text)
			continue;
		text++;
		end = strchr(text, '\n');
		if (end)
			*end = '\0';
		if (prefix ? !strncmp(text, want, strlen(want)) :
		    !strcmp(text, want))
			return true;
	}
}

static bool kmsg_has(int fd, const char *want)
{
	return kmsg_has_line(fd, want, false);
}

/*
 * ksyms_test takes exactly derived, fail:<variable>,
 * derived,fail:<variable> or disagree:<variable>: anything else refuses
 * the load with EINVAL and says so, before the module does anything
 */
TEST_F_TIMEOUT(ksyms, other_values_refused, UE_TIMEOUT(120))
{
	static const char * const bad[] = {
		"derivedX", "Derived", "derived,", "derived,derived",
		"fail:", "fail:bogus", "fail:event_mutex,dyn_event_list",
		"fail:event_mutex dyn_event_list", "fail:event_mutexX",
		"fail:dyn_event_list,derived", "derived,fail:bogus",
		"derived,fail:dyn_event_ops_list,event_mutex", "",
		"disagree:", "disagree:bogus", "derived,disagree:event_mutex",
		"disagree:event_mutex,fail:dyn_event_list",
	};
	char params[256], want[512];
	unsigned int i;
	int fd;

	ue_delete_prefix("");
	ASSERT_EQ(0, ue_mod_unload_retry());
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		fd = kmsg_open();
		ASSERT_LE(0, fd);
		snprintf(params, sizeof(params), "ksyms_test=\"%s\"", bad[i]);
		EXPECT_EQ(-EINVAL, ue_mod_insmod(params)) TH_LOG("%s", params);
		EXPECT_FALSE(ue_mod_loaded()) TH_LOG("%s", params);
		snprintf(want, sizeof(want),
			 "%s: ksyms_test=%s: not one of derived, fail:<variable>, derived,fail:<variable>, disagree:<variable> (<variable>: event_mutex, dyn_event_ops_mutex, dyn_event_ops_list or dyn_event_list)",
			 ue_mod_name(), bad[i]);
		EXPECT_TRUE(kmsg_has(fd, want)) TH_LOG("no log line '%s'", want);
		close(fd);
		if (ue_mod_loaded()) {
			ue_delete_prefix("");
			ASSERT_EQ(0, ue_mod_unload_retry());
		}
	}
	ASSERT_EQ(0, ue_mod_insmod(""));
}

/* Every documented value loads (or refuses) as before */
TEST_F_TIMEOUT(ksyms, documented_values_accepted, UE_TIMEOUT(180))
{
	unsigned int i;
	char params[128];
	int ret;

	ue_delete_prefix("");
	ASSERT_EQ(0, ue_mod_unload_retry());
	ASSERT_EQ(0, ue_mod_insmod("ksyms_test=derived"));
	ASSERT_EQ(0, ue_mod_unload_retry());
	for (i = 0; i < ARRAY_SIZE(vars); i++) {
		snprintf(params, sizeof(params), "ksyms_test=fail:%s", vars[i]);
		ret = ue_mod_insmod(params);
		EXPECT_EQ(in_kallsyms(vars[i]) ? 0 : -EOPNOTSUPP, ret)
			TH_LOG("%s", params);
		if (!ret)
			ASSERT_EQ(0, ue_mod_unload_retry());
	}
	ASSERT_EQ(0, ue_mod_insmod(""));
}

/*
 * A derivation that finds another address than kallsyms refuses the load
 * (ksyms_test=disagree:<variable> makes it so for a variable kallsyms
 * lists), naming the variable; where kallsyms does not list it, the
 * derived address is used and the module loads
 */
TEST_F_TIMEOUT(ksyms, disagreement_refuses, UE_TIMEOUT(180))
{
	char params[128], want[256];
	unsigned int i;
	int ret, fd;

	ue_delete_prefix("");
	ASSERT_EQ(0, ue_mod_unload_retry());
	for (i = 0; i < ARRAY_SIZE(vars); i++) {
		fd = kmsg_open();
		ASSERT_LE(0, fd);
		snprintf(params, sizeof(params), "ksyms_test=disagree:%s",
			 vars[i]);
		ret = ue_mod_insmod(params);
		if (in_kallsyms(vars[i])) {
			EXPECT_EQ(-EOPNOTSUPP, ret) TH_LOG("%s", params);
			EXPECT_FALSE(ue_mod_loaded());
			EXPECT_NE(0, access(UE_TRACEFS "/user_events_data", F_OK));
			snprintf(want, sizeof(want),
				 "%s: %s: the derivation found another address than kallsyms (",
				 ue_mod_name(), vars[i]);
			EXPECT_TRUE(kmsg_has_line(fd, want, true))
				TH_LOG("no log line '%s...'", want);
		} else {
			EXPECT_EQ(0, ret) TH_LOG("%s", params);
		}
		close(fd);
		if (ue_mod_loaded()) {
			ue_delete_prefix("");
			ASSERT_EQ(0, ue_mod_unload_retry());
		}
	}
	ASSERT_EQ(0, ue_mod_insmod(""));
}

/*
 * The derivation observes what the kernel's functions pass to
 * mutex_lock(), mutex_unlock(), seq_list_start() and seq_list_next()
 * through kprobes of its own. Others' probes and tracers on the same
 * functions must not change what it sees; with kprobes disabled
 * (debugfs kprobes/enabled = 0: its kprobes register but never fire) it
 * sees nothing, and must say so.
 */
#define UE_KPROBES_ENABLED "/sys/kernel/debug/kprobes/enabled"

/* The functions it observes (mutex_lock() apart); its callers are notrace */
static const char * const observed_fns[] = {
	"mutex_unlock", "seq_list_start", "seq_list_next",
};

FIXTURE(observe) {};
FIXTURE_SETUP(observe)
{
	ue_delete_prefix("");
}

FIXTURE_TEARDOWN(observe)
{
	char cmd[64];
	unsigned int i;

	syscall(SYS_delete_module, "ue_kprobe_storm", O_NONBLOCK);
	ue_write_file(UE_KPROBES_ENABLED, "1", false);
	ue_write_file(UE_TRACEFS "/current_tracer", "nop", false);
	ue_write_file(UE_TRACEFS "/set_ftrace_filter", "", true);
	ue_write_file(UE_TRACEFS "/events/kprobes/enable", "0", false);
	for (i = 0; i < ARRAY_SIZE(observed_fns); i++) {
		snprintf(cmd, sizeof(cmd), "-:ue_kp_%u", i);
		ue_write_file(UE_TRACEFS "/kprobe_events", cmd, false);
	}
	ue_write_file(UE_TRACEFS "/kprobe_events", "-:ue_kp_lock", false);
	ue_write_file(UE_TRACEFS "/kprobe_events", "-:ue_kpr_lock", false);
	ue_mod_reload("");
}

/* The module loads, its report as on default parameters, and derived */
static void check_loads_and_derives(struct __test_metadata *_metadata)
{
	reload(_metadata, "");
	check_default_report(_metadata);
	check_derived_report(_metadata);
}

/* Kprobes and kretprobes of another user on the functions observed */
TEST_F_TIMEOUT(observe, others_kprobes_on_the_functions, UE_TIMEOUT(180))
{
	char cmd[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(observed_fns); i++) {
		snprintf(cmd, sizeof(cmd), "p:ue_kp_%u %s", i, observed_fns[i]);
		ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/kprobe_events", cmd, false))
			TH_LOG("%s", cmd);
	}
	/* mutex_lock_nested() where lockdep makes mutex_lock() a macro */
	if (ue_write_file(UE_TRACEFS "/kprobe_events", "p:ue_kp_lock mutex_lock",
			  false))
		ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/kprobe_events",
					   "p:ue_kp_lock mutex_lock_nested", false));
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/kprobe_events",
				   "r:ue_kpr_lock seq_list_start", false));
	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/events/kprobes/enable", "1",
				   false));
	check_loads_and_derives(_metadata);
}

/* The function and function_graph tracers on the functions observed */
TEST_F_TIMEOUT(observe, tracers_on_the_functions, UE_TIMEOUT(240))
{
	static const char * const tracers[] = { "function", "function_graph" };
	char filter[1024];
	unsigned int i;

	ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/set_ftrace_filter", "", true));
	for (i = 0; i < ARRAY_SIZE(observed_fns); i++)
		ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/set_ftrace_filter",
					   observed_fns[i], false));
	if (ue_write_file(UE_TRACEFS "/set_ftrace_filter", "mutex_lock", false))
		ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/set_ftrace_filter",
					   "mutex_lock_nested", false));
	ASSERT_LT(0, ue_read_file(UE_TRACEFS "/set_ftrace_filter", filter,
				  sizeof(filter)));
	for (i = 0; i < ARRAY_SIZE(observed_fns); i++)
		EXPECT_NE(NULL, strstr(filter, observed_fns[i])) TH_LOG("%s", filter);
	for (i = 0; i < ARRAY_SIZE(tracers); i++) {
		ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/current_tracer",
					   tracers[i], false)) TH_LOG("%s", tracers[i]);
		check_loads_and_derives(_metadata);
		ASSERT_EQ(0, ue_write_file(UE_TRACEFS "/current_tracer", "nop",
					   false));
	}
}

/*
 * Kprobes disabled: no call is seen. Where kallsyms lists the variables
 * the module loads on its addresses, each derivation FAILED with the
 * reason; on derived addresses (and where kallsyms lacks them) the load
 * is refused, the kernel log naming the variable and the reason
 */
TEST_F_TIMEOUT(observe, kprobes_disabled, UE_TIMEOUT(180))
{
	char report[4096], line[512], want[256];
	unsigned int i;
	int ret, fd;

	ASSERT_EQ(0, ue_mod_unload_retry());
	ASSERT_EQ(0, ue_write_file(UE_KPROBES_ENABLED, "0", false));
	ret = ue_mod_insmod("");
	if (!in_kallsyms("dyn_event_list")) {
		EXPECT_EQ(-EOPNOTSUPP, ret);
	} else {
		ASSERT_EQ(0, ret);
		ASSERT_EQ(0, read_param("symbols", report, sizeof(report)));
		for (i = 0; i < ARRAY_SIZE(vars); i++) {
			ASSERT_NE(NULL, report_line(report, vars[i], line,
						    sizeof(line)));
			snprintf(want, sizeof(want),
				 "%s: kallsyms, derivation FAILED (", vars[i]);
			EXPECT_EQ(0, strncmp(line, want, strlen(want)))
				TH_LOG("want '%s...', have '%s'", want, line);
			EXPECT_NE(NULL, strstr(line, i == 2 ?
					       "needs dyn_event_ops_mutex" :
					       ": no call seen (kprobes disabled?)"))
				TH_LOG("%s", line);
		}
		ASSERT_EQ(0, ue_mod_unload_retry());
	}
	fd = kmsg_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EOPNOTSUPP, ue_mod_insmod("ksyms_test=derived"));
	EXPECT_FALSE(ue_mod_loaded());
	snprintf(want, sizeof(want),
		 "%s: cannot locate dyn_event_list: failed check: seq_list_start in dyn_event_seq_start: no call seen (kprobes disabled?)",
		 ue_mod_name());
	EXPECT_TRUE(kmsg_has(fd, want)) TH_LOG("no log line '%s'", want);
	close(fd);
	/* Enabled again, the derivation sees the calls again */
	ASSERT_EQ(0, ue_write_file(UE_KPROBES_ENABLED, "1", false));
	check_loads_and_derives(_metadata);
}

static int decoy_param(const char *param, char *buf, size_t size)
{
	char path[256];

	snprintf(path, sizeof(path),
		 "/sys/module/ue_ksyms_decoy/parameters/%s", param);
	return ue_read_file(path, buf, size) < 0 ? -1 : 0;
}

static bool decoy_state_is(const char *state)
{
	char buf[32];

	if (ue_read_file("/sys/module/ue_ksyms_decoy/initstate", buf,
			 sizeof(buf)) < 0)
		return false;
	return !strncmp(buf, state, strlen(state));
}

/* Does /proc/kallsyms list @name as a symbol of the decoy? */
static bool decoy_lists(const char *name)
{
	char line[512], sym[256], mod[64], type;
	unsigned long long addr;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s %63s", &addr, &type, sym,
			   mod) != 4)
			continue;
		if (!strcmp(sym, name) && !strcmp(mod, "[ue_ksyms_decoy]")) {
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

/*
 * The decoy's same-named variables, listed by kallsyms while it is in its
 * init, are never taken for the core's: the module loads on the core's
 * own (agreeing with the derivation, or derived), and an event made
 * through dynamic_events lands on the core's lists, not the decoy's
 */
TEST_F_TIMEOUT(ksyms, same_named_module_symbols_not_used, UE_TIMEOUT(240))
{
	char ko[512], val[16], report[4096];
	int status, i, fd;
	pid_t pid;

	if (ue_kmod_path(ko, sizeof(ko), "ue_ksyms_decoy"))
		SKIP(return, "no %s (scripts/build-module.sh builds it)", ko);
	ue_delete_prefix("");
	ASSERT_EQ(0, ue_mod_unload_retry());

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fd = open(ko, O_RDONLY | O_CLOEXEC);
		_exit(fd >= 0 && !syscall(SYS_finit_module, fd,
					  "hold_ms=200000", 0) ? 0 : 1);
	}
	for (i = 0; i < 1000 && !decoy_state_is("coming"); i++)
		usleep(10000);
	ASSERT_TRUE(decoy_state_is("coming"));
	EXPECT_TRUE(decoy_lists("event_mutex"));
	EXPECT_TRUE(decoy_lists("dyn_event_list"));

	EXPECT_EQ(0, ue_mod_insmod(""));
	EXPECT_TRUE(decoy_state_is("coming"))
		TH_LOG("the decoy left its init before the load ended");
	if (ue_mod_loaded()) {
		check_default_report(_metadata);
		ASSERT_EQ(0, read_param("symbols", report, sizeof(report)));
		EXPECT_EQ(NULL, strstr(report, "DISAGREES")) TH_LOG("%s", report);
		EXPECT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
					   "u:ue_ksyms_decoy_probe u32 a", false));
		EXPECT_TRUE(ue_event_exists("ue_ksyms_decoy_probe"));
		ASSERT_EQ(0, decoy_param("touched", val, sizeof(val)));
		EXPECT_EQ('N', val[0]);
		EXPECT_EQ(0, ue_write_file(UE_TRACEFS "/dynamic_events",
					   "!u:ue_ksyms_decoy_probe", false));
	}

	/* The same on derived addresses */
	ue_delete_prefix("");
	ASSERT_EQ(0, ue_mod_unload_retry());
	EXPECT_EQ(0, ue_mod_insmod("ksyms_test=derived"));
	EXPECT_TRUE(decoy_state_is("coming"));
	ASSERT_EQ(0, decoy_param("touched", val, sizeof(val)));
	EXPECT_EQ('N', val[0]);

	ue_write_file("/sys/module/ue_ksyms_decoy/parameters/release", "1",
		      false);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, syscall(SYS_delete_module, "ue_ksyms_decoy", O_NONBLOCK));
	ASSERT_EQ(0, ue_mod_reload(""));
}

static int storm_param(const char *param)
{
	char path[128], val[32];

	snprintf(path, sizeof(path),
		 "/sys/module/ue_kprobe_storm/parameters/%s", param);
	return ue_read_file(path, val, sizeof(val)) < 0 ? -1 : atoi(val);
}

/*
 * A kprobe at every instruction of the functions the derivation calls and
 * observes (tests/kmod/ue_kprobe_storm.c), the attack that the decoding
 * derivation had to survive: the observation still agrees with kallsyms,
 * and derives alone
 */
TEST_F_TIMEOUT(observe, kprobe_at_every_instruction, UE_TIMEOUT(300))
{
	char ko[512];
	int fd;

	if (ue_kmod_path(ko, sizeof(ko), "ue_kprobe_storm"))
		SKIP(return, "no %s (scripts/build-module.sh builds it)", ko);
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, syscall(SYS_finit_module, fd, "", 0)) TH_LOG("%m");
	close(fd);
	TH_LOG("%d kprobes placed", storm_param("probes"));
	EXPECT_LT(40, storm_param("probes"));
	check_loads_and_derives(_metadata);
	EXPECT_LT(0, storm_param("hits"));
	EXPECT_EQ(0, syscall(SYS_delete_module, "ue_kprobe_storm", O_NONBLOCK));
}

TEST_HARNESS_MAIN
