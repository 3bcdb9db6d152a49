/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A FUSE server of one file, "f" (node 2) in the root, and a second one
 * (node 3) where asked, for the test programs that hold a page fault on a
 * file (tests/selftests/fuse_stall.c, tests/race/held.c): the replies and the requests
 * every such server answers the same way (INIT, LOOKUP, GETATTR, OPEN,
 * INTERRUPT, FORGET). Each program reads the requests itself and answers
 * READ, FLUSH and the rest as its test needs.
 */
#ifndef UE_FUSE_H
#define UE_FUSE_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/fuse.h>

struct ue_fuse {
	int fd;			/* /dev/fuse */
	uint64_t fsize;		/* the size of "f" */
	uint64_t valid;		/* seconds the entry and attributes are valid */
	uint32_t init_flags;	/* of the INIT flags the kernel offers */
	bool direct_io;		/* an O_DIRECT open gets FOPEN_DIRECT_IO */
	const char *second;	/* a second file like "f" (node 3), or NULL */
};

static inline void ue_fuse_reply(const struct ue_fuse *f, uint64_t unique,
				 int error, const void *data, size_t len)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh) + len, .error = error, .unique = unique,
	};
	struct iovec iov[2] = { { &oh, sizeof(oh) }, { (void *)data, len } };

	if (writev(f->fd, iov, len ? 2 : 1) < 0 && errno != ENOENT)
		perror("fuse reply");
}

static inline void ue_fuse_attr(const struct ue_fuse *f, struct fuse_attr *a,
				uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	a->blksize = 4096;
	if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
	} else {
		a->mode = S_IFREG | 0644;
		a->size = f->fsize;
		a->blocks = f->fsize / 512;
	}
}

/*
 * Answers INIT, LOOKUP, GETATTR and OPEN, takes INTERRUPT and the FORGETs
 * (no answer); false for any other request
 */
static inline bool ue_fuse_answer(const struct ue_fuse *f,
				  const struct fuse_in_header *ih,
				  const void *in)
{
	switch (ih->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *ii = in;
		struct fuse_init_out io;

		memset(&io, 0, sizeof(io));
		io.major = FUSE_KERNEL_VERSION;
		io.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
			   ii->minor : FUSE_KERNEL_MINOR_VERSION;
		io.max_readahead = ii->max_readahead;
		io.flags = ii->flags & f->init_flags;
		io.max_background = 16;
		io.congestion_threshold = 12;
		io.max_write = 4096;
		ue_fuse_reply(f, ih->unique, 0, &io, sizeof(io));
		return true;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out eo;

		memset(&eo, 0, sizeof(eo));
		if (!strcmp(in, "f"))
			eo.nodeid = 2;
		else if (f->second && !strcmp(in, f->second))
			eo.nodeid = 3;
		else {
			ue_fuse_reply(f, ih->unique, -ENOENT, NULL, 0);
			return true;
		}
		eo.entry_valid = f->valid;
		eo.attr_valid = f->valid;
		ue_fuse_attr(f, &eo.attr, eo.nodeid);
		ue_fuse_reply(f, ih->unique, 0, &eo, sizeof(eo));
		return true;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out ao;

		memset(&ao, 0, sizeof(ao));
		ao.attr_valid = f->valid;
		ue_fuse_attr(f, &ao.attr, ih->nodeid);
		ue_fuse_reply(f, ih->unique, 0, &ao, sizeof(ao));
		return true;
	}
	case FUSE_OPEN: {
		const struct fuse_open_in *oi = in;
		struct fuse_open_out oo;

		memset(&oo, 0, sizeof(oo));
		if (f->direct_io && (oi->flags & O_DIRECT))
			oo.open_flags = FOPEN_DIRECT_IO;
		ue_fuse_reply(f, ih->unique, 0, &oo, sizeof(oo));
		return true;
	}
	case FUSE_INTERRUPT:
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
		return true;
	}
	return false;
}

#endif /* UE_FUSE_H */
