// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/selftests/ksyms_test.c only: a kprobe at every instruction of
 * the functions that user_events.ko calls or observes to derive the
 * tracing core's variables (user_events_derive.c), while it stays loaded.
 * kprobes refuse an address that is not an instruction boundary, so one is
 * tried at every byte offset of each function (its size from
 * sprint_symbol()) and the ones that register are kept. Each handler only
 * counts. probes reads how many were placed, hits how often they ran.
 */
#include <linux/atomic.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

static const char * const storm_fns[] = {
	"dyn_event_seq_start", "dyn_event_seq_next", "dyn_event_seq_stop",
	"dyn_event_register", "dyn_event_create", "create_dyn_event",
	"mutex_lock", "mutex_unlock", "seq_list_start", "seq_list_next",
};

#define STORM_MAX 4096
static struct kprobe *kps[STORM_MAX];
static unsigned int probes;
module_param(probes, uint, 0444);
MODULE_PARM_DESC(probes, "Read-only: kprobes placed");
static atomic_t hits = ATOMIC_INIT(0);
module_param_named(hits, hits.counter, int, 0444);
MODULE_PARM_DESC(hits, "Read-only: how often they ran");

static int storm_hit(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&hits);
	return 0;
}

/* The size of the function @name, from "name+0x0/0x<size>" */
static unsigned long fn_size(const char *name)
{
	struct kprobe kp = { .symbol_name = name };
	char buf[KSYM_SYMBOL_LEN];
	unsigned long size = 0;
	char *slash;

	if (register_kprobe(&kp))
		return 0;
	sprint_symbol(buf, (unsigned long)kp.addr);
	unregister_kprobe(&kp);
	slash = strrchr(buf, '/');
	if (!slash || kstrtoul(slash + 1, 16, &size))
		return 0;
	return size;
}

static void storm_fn(const char *name)
{
	unsigned long off, size = fn_size(name);
	struct kprobe *kp;

	for (off = 0; off < size && probes < STORM_MAX; off++) {
		kp = kzalloc(sizeof(*kp), GFP_KERNEL);
		if (!kp)
			return;
		kp->symbol_name = name;
		kp->offset = off;
		kp->pre_handler = storm_hit;
		if (register_kprobe(kp)) {
			kfree(kp);
			continue;
		}
		kps[probes++] = kp;
	}
}

static int __init storm_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(storm_fns); i++)
		storm_fn(storm_fns[i]);
	return probes ? 0 : -ENOENT;
}

static void __exit storm_exit(void)
{
	unsigned int i;

	unregister_kprobes(kps, probes);
	for (i = 0; i < probes; i++)
		kfree(kps[i]);
}

module_init(storm_init);
module_exit(storm_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("user_events tests: a kprobe at every instruction of the functions the derivation uses");
