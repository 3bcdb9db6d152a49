// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko selftests: how the module found the tracing core's
 * variables (Documentation/compat.rst, "Kernels whose kallsyms lists no
 * variables").
 *
 * The module derives event_mutex, dyn_event_ops_mutex, dyn_event_ops_list
 * and dyn_event_list from the kernel's code and data on every kernel, and
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
 * kallsyms (one_copy).
 *
 * Needs UE_MODULE (path of the .ko) in the environment, as the guest
 * runner of `make check` sets it. Every test leaves the module loaded with
 * its default parameters.
 */
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

TEST(kallsyms_and_derivation_agree)
{
	char report[4096], line[512], want[128];
	unsigned int i;

	reload(_metadata, "");
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

TEST(derived_addresses_in_use)
{
	char report[4096], line[512], want[128], val[16];
	unsigned int i;

	reload(_metadata, "ksyms_test=derived");
	ASSERT_EQ(0, read_param("symbols", report, sizeof(report)));
	for (i = 0; i < ARRAY_SIZE(vars); i++) {
		snprintf(want, sizeof(want), "%s: derived (", vars[i]);
		EXPECT_NE(NULL, report_line(report, vars[i], line, sizeof(line)));
		EXPECT_EQ(0, strncmp(line, want, strlen(want)))
			TH_LOG("want '%s...', have '%s'", want, line);
	}
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
TEST(forced_failure_on_derived_refuses_cleanly)
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

TEST_HARNESS_MAIN
