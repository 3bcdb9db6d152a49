// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/selftests/ksyms_test.c only: a module whose data symbols have
 * the names of the tracing core's variables that user_events.ko resolves
 * (event_mutex, dyn_event_ops_mutex, dyn_event_ops_list, dyn_event_list,
 * trace_buffered_event, trace_buffered_event_cnt).
 *
 * kallsyms_lookup_name() looks a name up in the core kernel's table first,
 * then in the modules'; a module in its init lists all its symbols, data
 * included, even on kernels without CONFIG_KALLSYMS_ALL, whose core table
 * lists no variables. So its init waits (up to hold_ms, until 1 is written
 * to its release parameter) while the test loads user_events.ko, which
 * must resolve the core's own variables (or refuse to load), never these.
 * touched reads Y if any of them was used as the core's: a mutex held, a
 * list no longer empty.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>

/*
 * Static: a module's symbol table lists its local symbols too, and
 * kallsyms_lookup_name() does not look at the binding. Never locked or
 * linked by this module: they are decoys (see touched).
 */
static DEFINE_MUTEX(event_mutex);
static DEFINE_MUTEX(dyn_event_ops_mutex);
static LIST_HEAD(dyn_event_ops_list);
static LIST_HEAD(dyn_event_list);
static DEFINE_PER_CPU(void *, trace_buffered_event);
static DEFINE_PER_CPU(int, trace_buffered_event_cnt);

static unsigned int hold_ms;
module_param(hold_ms, uint, 0444);
MODULE_PARM_DESC(hold_ms, "How long init waits for release, in ms (default 0)");

static bool release;
module_param(release, bool, 0644);
MODULE_PARM_DESC(release, "Write 1 to end init's wait");

static int touched_get(char *buf, const struct kernel_param *kp)
{
	bool touched = mutex_is_locked(&event_mutex) ||
		       mutex_is_locked(&dyn_event_ops_mutex) ||
		       !list_empty(&dyn_event_ops_list) ||
		       !list_empty(&dyn_event_list);
	int cpu;

	for_each_possible_cpu(cpu)
		if (per_cpu(trace_buffered_event, cpu) ||
		    per_cpu(trace_buffered_event_cnt, cpu))
			touched = true;
	return sysfs_emit(buf, "%c\n", touched ? 'Y' : 'N');
}

static const struct kernel_param_ops touched_ops = {
	.get = touched_get,
};
module_param_cb(touched, &touched_ops, NULL, 0444);
MODULE_PARM_DESC(touched, "Y if a variable of this module was used as the core kernel's");

static int __init ue_ksyms_decoy_init(void)
{
	unsigned long end = jiffies + msecs_to_jiffies(hold_ms);

	while (!READ_ONCE(release) && time_before(jiffies, end))
		msleep(20);
	return 0;
}
module_init(ue_ksyms_decoy_init);

static void __exit ue_ksyms_decoy_exit(void)
{
}
module_exit(ue_ksyms_decoy_exit);

MODULE_DESCRIPTION("user_events.ko test helper: decoy symbols of the tracing core's names");
MODULE_LICENSE("GPL");
