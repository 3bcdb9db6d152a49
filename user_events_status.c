// SPDX-License-Identifier: GPL-2.0
/*
 * user_events.ko: the status page ABI of Linux 5.18 to 6.3, which upstream
 * replaced in 6.4 with the remote write enable bits. An event registered
 * through it (DIAG_IOCSREG with the 24-byte struct user_status_reg) gets
 * one byte of a page that processes map read-only from
 * user_events_status; the byte holds the event's EVENT_STATUS_* bits.
 *
 * The event core (trace_events_user.c) owns the events and decides when a
 * byte is handed out, written and taken back, all under event_mutex; this
 * file owns the page, which byte belongs to which event, and the mapping.
 * It calls nothing else of the module (Documentation/development.rst).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/compiler.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "user_events_compat.h"
#include "user_events_internal.h"
#include "user_events_ksyms.h"

/* Bytes handed out, and to which event; under event_mutex */
static DECLARE_BITMAP(status_map, MAX_STATUS_EVENTS);
static struct user_event *status_events[MAX_STATUS_EVENTS];
static u8 *status_page;

/*
 * Hands out a free byte to @user and sets it to @status. Returns its index
 * (never 0), or -ENOSPC when the page is full. event_mutex held.
 */
int user_status_alloc(struct user_event *user, u8 status)
{
	int index;

	ue_lockdep_assert_event_mutex();

	index = find_first_zero_bit(status_map, MAX_STATUS_EVENTS);
	if (index >= MAX_STATUS_EVENTS)
		return -ENOSPC;

	set_bit(index, status_map);
	status_events[index] = user;
	WRITE_ONCE(status_page[index], status);

	return index;
}

/* Publishes @status in byte @index; event_mutex held */
void user_status_set(int index, u8 status)
{
	WRITE_ONCE(status_page[index], status);
}

/* Takes back byte @index from an event being deleted; event_mutex held */
void user_status_free(int index)
{
	WRITE_ONCE(status_page[index], 0);
	status_events[index] = NULL;
	clear_bit(index, status_map);
}

/*
 * The event of the first byte handed out at or after *@index, which is
 * set to that byte, or NULL when there is none. event_mutex held.
 */
struct user_event *user_status_next(int *index)
{
	int i = find_next_bit(status_map, MAX_STATUS_EVENTS, *index);

	if (i >= MAX_STATUS_EVENTS)
		return NULL;

	*index = i;
	return status_events[i];
}

/* mmap() of user_events_status: the page, read-only */
int user_status_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;

	if (vma->vm_flags & VM_WRITE)
		return -EPERM;

	/* Read-only for good: mprotect() may not add write access later */
	ue_vma_clear_flags(vma, VM_MAYWRITE | VM_MAYEXEC);
	ue_vma_set_flags(vma, VM_DONTEXPAND | VM_DONTDUMP);

	return remap_pfn_range(vma, vma->vm_start,
			       page_to_pfn(virt_to_page(status_page)),
			       PAGE_SIZE, vm_get_page_prot(VM_READ));
}

/* The page, at load; byte 0 is never handed out */
int __init user_status_init(void)
{
	status_page = (u8 *)get_zeroed_page(GFP_KERNEL);
	if (!status_page)
		return -ENOMEM;
	SetPageReserved(virt_to_page(status_page));

	set_bit(0, status_map);
	return 0;
}

/* At unload, or when the load fails after user_status_init() */
void user_status_exit(void)
{
	ClearPageReserved(virt_to_page(status_page));
	free_page((unsigned long)status_page);
}
