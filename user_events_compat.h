/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differences between the kernels user_events.ko supports (Linux 5.10
 * and 6.1 to 6.12), kept in one place so the rest of the module reads like
 * upstream kernel code. Documentation/compat.rst describes what Linux 5.10
 * lacks and what the module does there instead.
 */
#ifndef _USER_EVENTS_COMPAT_H
#define _USER_EVENTS_COMPAT_H

#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/instrumented.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/trace_events.h>
#include <linux/uio.h>

/*
 * Kbuild defines the UE_HAVE_* feature macros below from the version of
 * the kernel the module is built against.
 */

/*
 * Does kallsyms list the core kernel's variables (CONFIG_KALLSYMS_ALL)?
 * Debian's amd64 kernels and its arm64 6.12: yes; its arm64 6.1 and 5.10:
 * no, kallsyms_lookup_name() then finds a variable's name only among the
 * modules' symbols (user_events_ksyms.c).
 */
static inline bool ue_kallsyms_lists_variables(void)
{
	return IS_ENABLED(CONFIG_KALLSYMS_ALL);
}

/* vm_flags became read-only with accessors in Linux 6.3 */
static inline void ue_vma_clear_flags(struct vm_area_struct *vma,
				      unsigned long flags)
{
#ifdef UE_HAVE_VM_FLAGS_API
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

static inline void ue_vma_set_flags(struct vm_area_struct *vma,
				    unsigned long flags)
{
#ifdef UE_HAVE_VM_FLAGS_API
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* Mount idmappings replaced user namespaces in notify_change() in 6.3 */
static inline int ue_notify_change(struct dentry *dentry, struct iattr *attr)
{
#if defined(UE_HAVE_MNT_IDMAP)
	return notify_change(&nop_mnt_idmap, dentry, attr, NULL);
#elif defined(UE_HAVE_NOTIFY_CHANGE_USERNS)
	return notify_change(&init_user_ns, dentry, attr, NULL);
#else
	return notify_change(dentry, attr, NULL);
#endif
}

/* The vmas argument of pin_user_pages_remote() went away in Linux 6.5 */
static inline long ue_pin_user_page_remote(struct mm_struct *mm,
					   unsigned long addr,
					   unsigned int gup_flags,
					   struct page **page)
{
#ifdef UE_HAVE_PIN_REMOTE_WITHOUT_VMAS
	return pin_user_pages_remote(mm, addr, 1, gup_flags, page, NULL);
#else
	return pin_user_pages_remote(mm, addr, 1, gup_flags, page, NULL, NULL);
#endif
}

/* The iovec array of an ITER_IOVEC iterator was renamed in Linux 6.4 */
static inline const struct iovec *ue_iter_iov(const struct iov_iter *i)
{
#ifdef UE_HAVE_ITER_IOV
	return iter_iov(i);
#else
	return i->iov;
#endif
}

/*
 * A grace period after which no task is still running code it entered
 * before (a task works's tail, say). Both kernels' rcupdate.h define
 * synchronize_rcu_tasks() as synchronize_rcu() when CONFIG_TASKS_RCU is
 * off, which is enough there: without preemption such code cannot be
 * switched out before it returns.
 */
static inline void ue_synchronize_rcu_tasks(void)
{
	synchronize_rcu_tasks();
}

/* Linux 5.11 dropped the preemption count argument */
static inline void ue_tracing_generic_entry_update(struct trace_entry *entry,
						   unsigned short type)
{
#ifdef UE_HAVE_ENTRY_UPDATE_NO_PC
	tracing_generic_entry_update(entry, type, 0);
#else
	tracing_generic_entry_update(entry, type, 0, 0);
#endif
}

/*
 * KASAN/KCSAN annotations of a raw copy from user space: Linux 5.10 has
 * one hook, called before the copy.
 */
static inline void ue_instrument_copy_from_user_before(const void *to,
						       const void __user *from,
						       unsigned long n)
{
#ifdef UE_HAVE_INSTRUMENT_COPY_BEFORE_AFTER
	instrument_copy_from_user_before(to, from, n);
#else
	instrument_copy_from_user(to, from, n);
#endif
}

static inline void ue_instrument_copy_from_user_after(const void *to,
						      const void __user *from,
						      unsigned long n,
						      unsigned long left)
{
#ifdef UE_HAVE_INSTRUMENT_COPY_BEFORE_AFTER
	instrument_copy_from_user_after(to, from, n, left);
#endif
}

/* Bytes of [uaddr, uaddr + size) that could not be faulted in */
static inline size_t ue_fault_in_readable(const char __user *uaddr,
					  size_t size)
{
#ifdef UE_HAVE_FAULT_IN_READABLE
	return fault_in_readable(uaddr, size);
#else
	/* Callers pass at most a write buffer's worth (a few pages) */
	if (size > INT_MAX)
		return size;
	return fault_in_pages_readable(uaddr, size) ? size : 0;
#endif
}

/*
 * Leaves an ITER_IOVEC iterator whose bytes were all consumed as
 * iov_iter_advance(i, iov_iter_count(i)) leaves it from 6.1 on (past the
 * last segment, offset 0, nothing left), without its call and its walk of
 * the segments; 5.10 gets iov_iter_advance() itself.
 */
static inline void ue_iov_iter_consume_all(struct iov_iter *i)
{
#if defined(UE_HAVE_ITER_IOV)
	i->__iov += i->nr_segs;
#elif defined(UE_HAVE_ITER_UBUF)
	i->iov += i->nr_segs;
#else
	iov_iter_advance(i, iov_iter_count(i));
	return;
#endif
	i->nr_segs = 0;
	i->iov_offset = 0;
	i->count = 0;
}

/* ITER_UBUF (Linux 6.0): write() of a single buffer; 5.10 uses an iovec */
static inline bool ue_iter_is_ubuf(const struct iov_iter *i)
{
#ifdef UE_HAVE_ITER_UBUF
	return iter_is_ubuf(i);
#else
	return false;
#endif
}

static inline void __user *ue_iter_ubuf(const struct iov_iter *i)
{
#ifdef UE_HAVE_ITER_UBUF
	return i->ubuf;
#else
	return NULL;
#endif
}

/*
 * The filter type of a __rel_loc char[] field. Linux 5.10 has no
 * FILTER_RDYN_STRING, and would turn FILTER_OTHER into FILTER_STATIC_STRING
 * (filter_assign_type() sees "char[]") and compare the field's 32-bit
 * offset/length word as a 4-byte string: accepted and never matching.
 * FILTER_TRACE_FN is neither a string type nor reassigned, so the core
 * refuses every string filter on the field when it is written (EINVAL,
 * "Field requires a digit" in tracing/error_log). See
 * Documentation/compat.rst.
 */
#ifdef UE_HAVE_FILTER_RDYN_STRING
#define UE_FILTER_REL_STRING FILTER_RDYN_STRING
#else
#define UE_FILTER_REL_STRING FILTER_TRACE_FN
#endif

/*
 * Fills one entry of a fields array. Linux 5.10 has no .len (array and
 * string sizes for the filter code); its members are const, hence the copy.
 */
static inline void ue_trace_event_field_init(struct trace_event_fields *dst,
					     const char *type,
					     const char *name, int size,
					     int is_signed, int filter_type,
					     int len)
{
	struct trace_event_fields f = {
		.type = type,
		.name = name,
		.size = size,
		.align = 1,
		.is_signed = is_signed,
		.filter_type = filter_type,
#ifdef UE_HAVE_FIELDS_LEN
		.len = len,
#endif
	};

	memcpy(dst, &f, sizeof(f));
}

/*
 * Dynamic events that the tracing core pins with call->refcnt (Linux
 * 5.15). Linux 5.10 has neither the flag nor the count: there the core
 * itself refuses trace_remove_event_call() (EBUSY) while a perf event or
 * an enabled or soft-enabled (trigger) event file uses the call, and the
 * module's own counts cover the rest (Documentation/compat.rst).
 */
#ifdef UE_HAVE_FL_DYNAMIC
#define UE_TRACE_EVENT_FL_DYNAMIC TRACE_EVENT_FL_DYNAMIC
#else
#define UE_TRACE_EVENT_FL_DYNAMIC 0
#endif

static inline bool ue_call_core_refs(struct trace_event_call *call)
{
#ifdef UE_HAVE_FL_DYNAMIC
	return atomic_read(&call->refcnt);
#else
	return false;
#endif
}

/*
 * kmap_local_page() appeared in Linux 5.11. The module is built for 64-bit
 * architectures only, which have no highmem: there every page is in the
 * direct map and page_address() is what kmap_local_page() returns.
 */
static inline void *ue_kmap_local_page(struct page *page)
{
#ifdef UE_HAVE_KMAP_LOCAL
	return kmap_local_page(page);
#else
	BUILD_BUG_ON(IS_ENABLED(CONFIG_HIGHMEM));
	return page_address(page);
#endif
}

static inline void ue_kunmap_local(void *addr)
{
#ifdef UE_HAVE_KMAP_LOCAL
	kunmap_local(addr);
#endif
}

/*
 * A task that uses @mm, referenced, or NULL: the owner that the memory
 * controller keeps for each mm (every Debian kernel has CONFIG_MEMCG).
 */
static inline struct task_struct *ue_mm_owner_get(struct mm_struct *mm)
{
#ifdef CONFIG_MEMCG
	struct task_struct *task;

	rcu_read_lock();
	task = rcu_dereference(mm->owner);
	if (task && READ_ONCE(task->mm) == mm)
		get_task_struct(task);
	else
		task = NULL;
	rcu_read_unlock();
	return task;
#else
	return NULL;
#endif
}

/*
 * Whether no task uses @mm any more, though something else (a reader of
 * /proc/PID/cmdline, through get_task_mm()) still holds an mm_users
 * reference: the exit or exec of its last task leaves mm->owner NULL
 * (mm_update_next_owner(), before the exit and exec tracepoints fire).
 * Without CONFIG_MEMCG there is no owner, and only mm_users tells.
 */
static inline bool ue_mm_has_no_task(struct mm_struct *mm)
{
#ifdef CONFIG_MEMCG
	return !rcu_access_pointer(mm->owner);
#else
	return false;
#endif
}

/* vma_lookup() appeared in Linux 5.14 */
static inline struct vm_area_struct *ue_vma_lookup(struct mm_struct *mm,
						   unsigned long addr)
{
#ifdef UE_HAVE_VMA_LOOKUP
	return vma_lookup(mm, addr);
#else
	struct vm_area_struct *vma = find_vma(mm, addr);

	return vma && addr >= vma->vm_start ? vma : NULL;
#endif
}

/*
 * The dynamic_events interface of kernel/trace/trace_dynevent.h, which is
 * private to the tracing core: the same layout in Linux 6.1 and 6.12; in
 * 5.10 create() takes the command split into words.
 */
struct dyn_event;

/*
 * The create callback is written once for both shapes:
 *
 *	static int cb(UE_DYN_CREATE_PARAMS)
 *	{
 *		return UE_DYN_CREATE_CALL(parser);
 *	}
 *
 * where parser(const char *raw_command) gets the command as one string.
 */
#ifdef UE_HAVE_DYN_CREATE_RAW
typedef int (*ue_dyn_create_fn)(const char *raw_command);
#define UE_DYN_CREATE_PARAMS const char *raw_command
#define UE_DYN_CREATE_CALL(fn) fn(raw_command)
/*
 * What takes dyn_event_ops_mutex around a create callback before any
 * operations of the module are on the list (user_events_derive.c):
 * dyn_event_create(raw_command, ops) calls @ops' create alone.
 */
#define UE_DYN_OPS_CREATE "dyn_event_create"
#define UE_DYN_OPS_CREATE_CALLS_OPS true

/* Its arguments for the command @argv[0] (argv ends with NULL) */
static inline void ue_dyn_ops_create_args(unsigned long a[2],
					  const char * const *argv, void *ops)
{
	a[0] = (unsigned long)argv[0];
	a[1] = (unsigned long)ops;
}
#else
/*
 * 5.10 has no dyn_event_create(): create_dyn_event(argc, argv) offers the
 * words to each listed provider's create, which refuses (-ECANCELED) a
 * command that does not begin with its own letter.
 */
#define UE_DYN_OPS_CREATE "create_dyn_event"
#define UE_DYN_OPS_CREATE_CALLS_OPS false

static inline void ue_dyn_ops_create_args(unsigned long a[2],
					  const char * const *argv, void *ops)
{
	a[0] = 1;
	a[1] = (unsigned long)argv;
}

typedef int (*ue_dyn_create_fn)(int argc, const char **argv);
#define UE_DYN_CREATE_PARAMS int argc, const char **argv
#define UE_DYN_CREATE_CALL(fn) ue_dyn_create_argv(argc, argv, fn)

/*
 * Linux 5.10 splits the command at white space and passes the words: join
 * them again with single spaces, the separator the parser expects.
 */
static inline int ue_dyn_create_argv(int argc, const char **argv,
				     int (*fn)(const char *raw_command))
{
	size_t len = 0;
	char *raw, *p;
	int i, ret;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	raw = kmalloc(len + 1, GFP_KERNEL_ACCOUNT);
	if (!raw)
		return -ENOMEM;
	p = raw;
	*p = '\0';
	for (i = 0; i < argc; i++)
		p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
	ret = fn(raw);
	kfree(raw);
	return ret;
}
#endif

#endif /* _USER_EVENTS_COMPAT_H */
