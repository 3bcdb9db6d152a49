/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * user_events: user space registered trace events, for kernels built
 * without CONFIG_USER_EVENTS (provided by the user_events.ko module).
 *
 * Two binary interfaces share the same files and ioctl numbers and are
 * told apart by the size field that starts every registration:
 *
 *  - the status page ABI (struct user_status_reg, size 24): the kernel
 *    keeps one byte per event in a page that user space maps from
 *    user_events_status;
 *
 *  - the remote write ABI of Linux 6.4 and later (struct user_write_reg,
 *    packed, size 28): the kernel sets or clears one bit in a word of the
 *    registering process whenever the event is enabled or disabled.
 *
 * "struct user_reg" names the status page layout by default, so code
 * written for the original header compiles unchanged. Define
 * USER_EVENTS_REMOTE_WRITE_ABI before including this header to make
 * "struct user_reg" and "struct user_unreg" name the remote write layouts
 * instead, as in the header of Linux 6.4 and later.
 */
#ifndef _UAPI_LINUX_USER_EVENTS_H
#define _UAPI_LINUX_USER_EVENTS_H

#include <linux/types.h>
#include <linux/ioctl.h>

#ifdef __KERNEL__
#include <linux/uio.h>
#else
#include <sys/uio.h>
#endif

#define USER_EVENTS_SYSTEM "user_events"
#define USER_EVENTS_MULTI_SYSTEM "user_events_multi"
#define USER_EVENTS_PREFIX "u:"

/* Status page ABI: bits 0-6 are for known probe types, bit 7 for others */
#define EVENT_BIT_FTRACE 0
#define EVENT_BIT_PERF 1
#define EVENT_BIT_OTHER 7

#define EVENT_STATUS_FTRACE (1 << EVENT_BIT_FTRACE)
#define EVENT_STATUS_PERF (1 << EVENT_BIT_PERF)
#define EVENT_STATUS_OTHER (1 << EVENT_BIT_OTHER)

/* Create dynamic location entry within a 32-bit value */
#define DYN_LOC(offset, size) ((size) << 16 | (offset))

/*
 * Accepted for compatibility and part of the event's identity. BPF programs
 * of such events get the record like on every other event: the seed's
 * iterator context (struct user_bpf_context below) could not be made safe
 * for tracepoint programs and is no longer passed. No effect on ftrace/perf.
 */
#define FLAG_BPF_ITER (1 << 0)

/* Size of struct user_status_reg, selects the status page ABI */
#define USER_STATUS_REG_SIZE 24

/* Smallest size of struct user_write_reg, selects the remote write ABI */
#define USER_WRITE_REG_SIZE 28

/*
 * Status page ABI registration, passed to DIAG_IOCSREG. Callers set size
 * to sizeof(struct user_status_reg) and name_args before the call.
 */
struct user_status_reg {
	/* Input: Size of the user_reg structure being used (24) */
	__u32 size;

	/* Input: Pointer to string with event name, description and flags */
	__u64 name_args;

	/* Output: Byte index of the event within the status page */
	__u32 status_index;

	/* Output: Index of the event to use when writing data */
	__u32 write_index;
};

/* Remote write ABI registration flags */
enum user_reg_flag {
	/* Event will not delete upon last reference closing */
	USER_EVENT_REG_PERSIST = 1U << 0,

	/* Event will be allowed to have multiple formats */
	USER_EVENT_REG_MULTI_FORMAT = 1U << 1,

	/* This value or above is currently non-ABI */
	USER_EVENT_REG_MAX = 1U << 2,
};

/*
 * Remote write ABI registration, passed to DIAG_IOCSREG. The kernel keeps
 * bit enable_bit of the enable_size bytes at enable_addr set while the
 * event is enabled, and clear otherwise.
 */
struct user_write_reg {
	/* Input: Size of the user_reg structure being used (28 or more) */
	__u32 size;

	/* Input: Bit in enable address to use */
	__u8 enable_bit;

	/* Input: Enable size in bytes at address (4 or 8) */
	__u8 enable_size;

	/* Input: Flags to use, if any (enum user_reg_flag) */
	__u16 flags;

	/* Input: Address to update when enabled */
	__u64 enable_addr;

	/* Input: Pointer to string with event name, description and flags */
	__u64 name_args;

	/* Output: Index of the event to use when writing data */
	__u32 write_index;
} __attribute__((__packed__));

/* Remote write ABI unregistration, passed to DIAG_IOCSUNREG */
struct user_write_unreg {
	/* Input: Size of the user_unreg structure being used (16) */
	__u32 size;

	/* Input: Bit to unregister */
	__u8 disable_bit;

	/* Input: Reserved, set to 0 */
	__u8 __reserved;

	/* Input: Reserved, set to 0 */
	__u16 __reserved2;

	/* Input: Address to unregister */
	__u64 disable_addr;
} __attribute__((__packed__));

#ifdef USER_EVENTS_REMOTE_WRITE_ABI
#define user_reg user_write_reg
#define user_unreg user_write_unreg
#else
#define user_reg user_status_reg
#endif

#define DIAG_IOC_MAGIC '*'

/* Request to register a user_event */
#define DIAG_IOCSREG _IOWR(DIAG_IOC_MAGIC, 0, struct user_reg *)

/* Request to delete a user_event */
#define DIAG_IOCSDEL _IOW(DIAG_IOC_MAGIC, 1, char *)

/* Request to unregister a user_event (remote write ABI) */
#define DIAG_IOCSUNREG _IOW(DIAG_IOC_MAGIC, 2, struct user_unreg *)

/*
 * The seed's BPF context, kept so that code using these names compiles;
 * the module does not pass it to programs (see FLAG_BPF_ITER).
 */

/* Data type that was passed to the BPF program */
enum {
	/* Data resides in kernel space */
	USER_BPF_DATA_KERNEL,

	/* Data resides in user space */
	USER_BPF_DATA_USER,

	/* Data is a pointer to a user_bpf_iter structure */
	USER_BPF_DATA_ITER,
};

/*
 * Describes an iovec iterator that BPF programs can use to access data for
 * a given user_event write() / writev() call.
 */
struct user_bpf_iter {
	/* Offset of the data within the first iovec */
	__u32 iov_offset;

	/* Number of iovec structures */
	__u32 nr_segs;

	/* Pointer to iovec structures */
	const struct iovec *iov;
};

/* Context that BPF programs receive when attached to a user_event */
struct user_bpf_context {
	/* Data type being passed (see union below) */
	__u32 data_type;

	/* Length of the data */
	__u32 data_len;

	/* Pointer to data, varies by data type */
	union {
		/* Kernel data (data_type == USER_BPF_DATA_KERNEL) */
		void *kdata;

		/* User data (data_type == USER_BPF_DATA_USER) */
		void *udata;

		/* Direct iovec (data_type == USER_BPF_DATA_ITER) */
		struct user_bpf_iter *iter;
	};
};

#endif /* _UAPI_LINUX_USER_EVENTS_H */
