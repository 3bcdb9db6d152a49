// SPDX-License-Identifier: GPL-2.0
/*
 * Bench helper, loaded only in the -icount guest of `make bench` (never
 * installed): path lengths of the tracing core's calls that the write path
 * of user_events.ko and trace_marker's write are made of. kernel/trace/ is
 * built without ftrace hooks, so function_graph cannot time them; here each
 * call is bracketed by two RDTSC, which under QEMU's -icount shift=0 read
 * the guest's instruction count. The figure of a call is the minimum over
 * the iterations of (after - before), minus the same for an empty bracket:
 * its path length, warm.
 *
 * Parameters: system and event of an ftrace event file that is enabled, in
 * the top-level instance, with no filter or trigger (the guest script
 * enables a user event for it). Every measurement is printed as
 *   UEKB<TAB>name<TAB>instructions<TAB>description
 * and the load fails with -EAGAIN on purpose: nothing stays loaded.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/mman.h>
#include <linux/mm.h>
#include <linux/ring_buffer.h>
#include <linux/trace_events.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <asm/msr.h>

static char *system = "user_events";
module_param(system, charp, 0400);
static char *event = "ue_kb";
module_param(event, charp, 0400);
static int iters = 2000;
module_param(iters, int, 0400);

#define PAYLOAD 16

static u64 empty_cost;

static __always_inline u64 stamp(void)
{
	return rdtsc_ordered();
}

static void report(const char *name, u64 min, const char *desc)
{
	pr_info("UEKB\t%s\t%llu\t%s\n", name, min - empty_cost, desc);
}

/* 6.1 passes the event to the commit, 6.12 does not: bench-only */
static int rb_commit(struct trace_buffer *buffer,
		     struct ring_buffer_event *event)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return ring_buffer_unlock_commit(buffer);
#else
	return ring_buffer_unlock_commit(buffer, event);
#endif
}

static int measure(struct trace_event_file *file, const char __user *ubuf)
{
	u64 t0, t1, t2, t3, m_empty = U64_MAX, m_rc = U64_MAX, m_r = U64_MAX,
	    m_c = U64_MAX, m_rb = U64_MAX, m_rbr = U64_MAX, m_rbc = U64_MAX,
	    m_nof = U64_MAX, m_raw = U64_MAX, m_sd = U64_MAX;
	struct trace_event_buffer fbuffer;
	struct trace_buffer *buffer = NULL;
	struct ring_buffer_event *rbe;
	struct trace_entry *entry;
	char kbuf[PAYLOAD];
	int i;
	bool sd;

	for (i = 0; i < iters; i++) {
		preempt_disable();
		t0 = stamp();
		t1 = stamp();
		m_empty = min(m_empty, t1 - t0);

		/* The event API, as user_event_record_direct() uses it */
		t0 = stamp();
		entry = trace_event_buffer_reserve(&fbuffer, file,
						   sizeof(*entry) + PAYLOAD);
		t1 = stamp();
		if (!entry) {
			preempt_enable();
			pr_err("UEKB reserve failed: event not enabled?\n");
			return -EINVAL;
		}
		memset(entry + 1, 'x', PAYLOAD);
		t2 = stamp();
		trace_event_buffer_commit(&fbuffer);
		t3 = stamp();
		m_r = min(m_r, t1 - t0);
		m_c = min(m_c, t3 - t2);
		buffer = fbuffer.buffer;

		t0 = stamp();
		entry = trace_event_buffer_reserve(&fbuffer, file,
						   sizeof(*entry) + PAYLOAD);
		if (entry)
			trace_event_buffer_commit(&fbuffer);
		t1 = stamp();
		m_rc = min(m_rc, t1 - t0);

		/* The bare ring buffer, as trace_marker's write uses it */
		t0 = stamp();
		rbe = ring_buffer_lock_reserve(buffer, 34 + 8);
		t1 = stamp();
		if (rbe) {
			t2 = stamp();
			rb_commit(buffer, rbe);
			t3 = stamp();
			m_rbr = min(m_rbr, t1 - t0);
			m_rbc = min(m_rbc, t3 - t2);
		}
		t0 = stamp();
		rbe = ring_buffer_lock_reserve(buffer, 34 + 8);
		if (rbe)
			rb_commit(buffer, rbe);
		t1 = stamp();
		m_rb = min(m_rb, t1 - t0);

		/* Copies of a 16-byte payload */
		t0 = stamp();
		if (copy_from_user_nofault(kbuf, ubuf, PAYLOAD))
			pr_err_once("UEKB copy_from_user_nofault failed\n");
		t1 = stamp();
		m_nof = min(m_nof, t1 - t0);
		pagefault_disable();
		t0 = stamp();
		if (__copy_from_user_inatomic(kbuf, ubuf, PAYLOAD))
			pr_err_once("UEKB raw copy failed\n");
		t1 = stamp();
		pagefault_enable();
		m_raw = min(m_raw, t1 - t0);

		/* Inline checks of the event path */
		t0 = stamp();
		sd = trace_trigger_soft_disabled(file);
		t1 = stamp();
		m_sd = min(m_sd, t1 - t0);
		barrier_data(&sd);
		preempt_enable();
		if (!(i & 63))
			cond_resched();
	}

	empty_cost = m_empty;
	pr_info("UEKB\tempty\t%llu\tRDTSC bracket with nothing inside (subtracted from the rest)\n",
		m_empty);
	report("ev_reserve", m_r, "trace_event_buffer_reserve() of a 24-byte record");
	report("ev_commit", m_c, "trace_event_buffer_commit()");
	report("ev_reserve_commit", m_rc, "both, one bracket");
	report("rb_reserve", m_rbr, "ring_buffer_lock_reserve() of 42 bytes (trace_marker's size)");
	report("rb_commit", m_rbc, "ring_buffer_unlock_commit()");
	report("rb_reserve_commit", m_rb, "both, one bracket");
	report("copy_nofault", m_nof, "copy_from_user_nofault() of 16 bytes (trace_marker's copy)");
	report("copy_raw", m_raw, "__copy_from_user_inatomic() of 16 bytes (no object size check)");
	report("soft_disabled", m_sd, "trace_trigger_soft_disabled() (inline)");
	return 0;
}

static int __init ue_bench_kmod_init(void)
{
	struct trace_event_file *file;
	unsigned long addr;
	int ret;

	file = trace_get_event_file(NULL, system, event);
	if (IS_ERR(file)) {
		pr_err("UEKB no event file %s/%s: %ld\n", system, event,
		       PTR_ERR(file));
		return PTR_ERR(file);
	}

	/* A user page of insmod's, faulted in */
	addr = vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(addr)) {
		ret = (int)addr;
	} else {
		ret = clear_user((void __user *)addr, PAGE_SIZE) ? -EFAULT :
			measure(file, (const char __user *)addr);
		vm_munmap(addr, PAGE_SIZE);
	}

	trace_put_event_file(file);
	return ret ? ret : -EAGAIN;
}
module_init(ue_bench_kmod_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("user_events.ko bench helper: path lengths of tracing core calls");
