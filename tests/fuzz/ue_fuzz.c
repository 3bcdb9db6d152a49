// SPDX-License-Identifier: GPL-2.0
/*
 * ue_fuzz: structure-aware fuzzer for user_events.ko (root, in a guest with
 * the module loaded; tests/fuzz/guest.sh runs it).
 *
 *   ue_fuzz [-s SEED] [-t SECONDS] [-n MAX_INPUTS] [-o DIR] [-L LOGFILE] [-v]
 *   ue_fuzz --replay FILE...
 *
 * Inputs are generated from a seeded PRNG (deterministic: the same seed
 * gives the same inputs) and mutated from the interfaces' grammars:
 *   reg_status  DIAG_IOCSREG, size 24: descriptor grammar mutations, bad
 *               name pointers, other size values
 *   reg_write   DIAG_IOCSREG, size >= 28: enable_size/bit/addr (aligned,
 *               misaligned, read-only, unmapped, kernel, NULL), flags,
 *               trailing bytes (zero or not), sizes past what is mapped
 *   unreg       DIAG_IOCSUNREG: sizes, reserved fields, addresses, bits
 *   del         DIAG_IOCSDEL: names, long strings, bad pointers
 *   write       write/writev: payload lengths around the limits, indexes,
 *               __data_loc/__rel_loc values, bad payload pointers
 *   dyn         dynamic_events: u: create, !u: / -: delete
 *   ioctl       other ioctl numbers on the data file
 *   mmap        user_events_status mmap lengths, offsets, protections
 * Every result must be success or an errno the interface documents
 * (EINVAL EFAULT E2BIG ENOENT EADDRINUSE EBUSY ENOSPC EMFILE EBADF EPERM
 * ESPIPE ENOMEM; ENOTTY for unknown ioctls, EACCES for protections the
 * status page refuses). On top of that a reference model of the descriptor
 * grammar and of the checks the spec lists predicts EINVAL versus success
 * and the exact write results; a disagreement is a failure too.
 *
 * Each failing input is printed, and with -o saved as DIR/<signature>.case
 * (one serialized input per line; a case may hold several lines, run in
 * order). --replay runs such files and fails if any line fails again.
 * With -L each input is written to LOGFILE (a ring of the last 32) before
 * it runs, so that the input that crashed a guest can be found.
 * Last line: "N passed, N failed" (inputs tried, inputs that failed).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "uapi/linux/user_events.h"
#include "../selftests/ue_helpers.h"

#define TRACEFS UE_TRACEFS

#define PAGE 4096
#define MAX_DESC 512		/* with the NUL */
#define MAX_NAME 255
#define MAX_FIELDS 64
#define MAX_ARRAY 1024
#define MAX_ARRAY_DIGITS 6	/* characters of an array count */
#define MAX_STRUCT 1024
#define MAX_PAYLOAD 3968

#define IOC_REG _IOWR(DIAG_IOC_MAGIC, 0, struct user_reg *)
#define IOC_DEL _IOW(DIAG_IOC_MAGIC, 1, char *)
#define IOC_UNREG _IOW(DIAG_IOC_MAGIC, 2, struct user_unreg *)

/* ------------------------------------------------------------------ input */

enum kind { K_REG_STATUS, K_REG_WRITE, K_UNREG, K_DEL, K_WRITE, K_DYN, K_IOCTL, K_MMAP, NKINDS };
static const char *kind_names[NKINDS] = {
	"reg_status", "reg_write", "unreg", "del", "write", "dyn", "ioctl", "mmap",
};

/* Where a pointer or an enable address points */
enum where { WH_OK, WH_NULL, WH_LOW, WH_KERNEL, WH_TOP, WH_UNMAPPED, WH_RO, WH_EDGE, NWHERE };
static const char *where_names[NWHERE] = {
	"ok", "null", "low", "kernel", "top", "unmapped", "ro", "edge",
};

struct input {
	enum kind kind;
	uint32_t size;		/* the struct's size field */
	uint32_t avail;		/* bytes readable from the struct's start */
	uint8_t bit, esize;
	uint16_t flags;
	enum where addr;	/* enable/disable address kind */
	uint32_t off;		/* offset of that address in its page */
	uint8_t res1;
	uint16_t res2;
	enum where ptr;		/* name_args / string pointer kind */
	int slen;
	char str[1200];		/* descriptor, name or command (NUL added) */
	int tlen;
	uint8_t tail[64];	/* bytes after the natural struct size */
	int32_t idx;		/* write: index; INT32_MIN: the registered one */
	bool enable;		/* write: ftrace-enable the event first */
	int plen;
	uint8_t payload[4200];
	int split;		/* write: 0 write(), n: writev split at n */
	enum where pay;		/* write: payload pointer */
	uint32_t cmd;		/* ioctl number */
	uint32_t mlen, moff;	/* mmap */
	int mprot, mflags, oflags, mprotect;
};

/* ------------------------------------------------------------------ utils */

/* The generator: struct ue_rng, ue_rn() (tests/selftests/ue_helpers.h) */

static const int documented[] = {
	0, EINVAL, EFAULT, E2BIG, ENOENT, EADDRINUSE, EBUSY, ENOSPC, EMFILE,
	EBADF, EPERM, ESPIPE, ENOMEM,
};

static bool is_documented(int e, enum kind k)
{
	for (size_t i = 0; i < sizeof(documented) / sizeof(documented[0]); i++)
		if (documented[i] == e)
			return true;
	if (k == K_IOCTL && e == ENOTTY)
		return true;
	if (k == K_MMAP && e == EACCES)
		return true;
	return false;
}

static void hex(char *out, const uint8_t *p, int n)
{
	static const char d[] = "0123456789abcdef";

	for (int i = 0; i < n; i++) {
		out[2 * i] = d[p[i] >> 4];
		out[2 * i + 1] = d[p[i] & 15];
	}
	out[2 * n] = 0;
}

static int unhex(uint8_t *out, const char *s, int max)
{
	int n = 0;

	while (s[0] && s[1] && n < max) {
		unsigned int v;

		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = v;
		s += 2;
	}
	return n;
}

/* One line: "kind key=value ..." */
static char *serialize(const struct input *in)
{
	static char buf[16384];
	char h[9000];
	int n;

	n = snprintf(buf, sizeof(buf), "%s", kind_names[in->kind]);
#define KV(fmt, ...) n += snprintf(buf + n, sizeof(buf) - n, " " fmt, __VA_ARGS__)
	switch (in->kind) {
	case K_REG_STATUS:
	case K_REG_WRITE:
	case K_UNREG:
		KV("size=%u avail=%u", in->size, in->avail);
		if (in->kind != K_REG_STATUS)
			KV("bit=%u addr=%s:%u", in->bit, where_names[in->addr], in->off);
		if (in->kind == K_REG_WRITE)
			KV("esize=%u flags=%u", in->esize, in->flags);
		if (in->kind == K_UNREG)
			KV("res1=%u res2=%u", in->res1, in->res2);
		hex(h, in->tail, in->tlen);
		KV("tail=%s", h);
		break;
	case K_WRITE:
		KV("idx=%d enable=%d split=%d pay=%s", in->idx, in->enable, in->split,
		   where_names[in->pay]);
		hex(h, in->payload, in->plen);
		KV("payload=%s", h);
		break;
	case K_IOCTL:
		KV("cmd=%u", in->cmd);
		break;
	case K_MMAP:
		KV("len=%u moff=%u prot=%d mflags=%d oflags=%d mprotect=%d", in->mlen, in->moff,
		   in->mprot, in->mflags, in->oflags, in->mprotect);
		break;
	default:
		break;
	}
	if (in->kind != K_IOCTL && in->kind != K_MMAP) {
		KV("ptr=%s", where_names[in->ptr]);
		hex(h, (const uint8_t *)in->str, in->slen);
		KV("str=%s", h);
	}
#undef KV
	return buf;
}

static int where_of(const char *s)
{
	for (int i = 0; i < NWHERE; i++)
		if (!strcmp(s, where_names[i]))
			return i;
	return WH_OK;
}

static bool parse_line(const char *line, struct input *in)
{
	char copy[20000], *tok, *save;

	memset(in, 0, sizeof(*in));
	snprintf(copy, sizeof(copy), "%s", line);
	copy[strcspn(copy, "\r\n")] = 0;
	tok = strtok_r(copy, " ", &save);
	if (!tok || tok[0] == '#')
		return false;
	in->kind = NKINDS;
	for (int i = 0; i < NKINDS; i++)
		if (!strcmp(tok, kind_names[i]))
			in->kind = i;
	if (in->kind == NKINDS)
		return false;
	while ((tok = strtok_r(NULL, " ", &save))) {
		char *v = strchr(tok, '=');

		if (!v)
			continue;
		*v++ = 0;
		if (!strcmp(tok, "size")) in->size = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "avail")) in->avail = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "bit")) in->bit = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "esize")) in->esize = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "flags")) in->flags = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "res1")) in->res1 = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "res2")) in->res2 = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "addr")) {
			char *c = strchr(v, ':');

			if (c) {
				*c++ = 0;
				in->off = strtoul(c, NULL, 0);
			}
			in->addr = where_of(v);
		} else if (!strcmp(tok, "tail")) in->tlen = unhex(in->tail, v, sizeof(in->tail));
		else if (!strcmp(tok, "idx")) in->idx = strtol(v, NULL, 0);
		else if (!strcmp(tok, "enable")) in->enable = atoi(v);
		else if (!strcmp(tok, "split")) in->split = atoi(v);
		else if (!strcmp(tok, "pay")) in->pay = where_of(v);
		else if (!strcmp(tok, "payload")) in->plen = unhex(in->payload, v, sizeof(in->payload));
		else if (!strcmp(tok, "cmd")) in->cmd = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "len")) in->mlen = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "moff")) in->moff = strtoul(v, NULL, 0);
		else if (!strcmp(tok, "prot")) in->mprot = atoi(v);
		else if (!strcmp(tok, "mflags")) in->mflags = atoi(v);
		else if (!strcmp(tok, "oflags")) in->oflags = atoi(v);
		else if (!strcmp(tok, "mprotect")) in->mprotect = atoi(v);
		else if (!strcmp(tok, "ptr")) in->ptr = where_of(v);
		else if (!strcmp(tok, "str")) {
			in->slen = unhex((uint8_t *)in->str, v, sizeof(in->str) - 1);
			in->str[in->slen] = 0;
		}
	}
	return true;
}

/* ------------------------------------------------- reference model */

/*
 * The module's white space: ASCII only (not the kernel's isspace(), which
 * counts Latin-1 NBSP, 0xa0)
 */
static bool k_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Names per the spec: [A-Za-z0-9_], 1..max */
static bool spec_name_ok(const char *s, size_t len, size_t max)
{
	if (!len || len > max)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(isascii((unsigned char)s[i]) && (isalnum((unsigned char)s[i]) || s[i] == '_')))
			return false;
	return true;
}

struct model_field {
	int size;
	int dyn;	/* 0, 1 data_loc, 2 rel_loc */
	bool is_char;
	int offset;	/* in the payload */
};

struct model {
	bool valid;
	const char *why;
	int nfields;
	struct model_field f[MAX_FIELDS];
	unsigned int min;
	bool has_dyn;
};

static const struct { const char *name; int size; } mtypes[] = {
	{ "u8", 1 }, { "u16", 2 }, { "u32", 4 }, { "u64", 8 },
	{ "s8", 1 }, { "s16", 2 }, { "s32", 4 }, { "s64", 8 },
	{ "int", 4 }, { "unsigned int", 4 }, { "short", 2 }, { "unsigned short", 2 },
	{ "char", 1 }, { "unsigned char", 1 },
};

static int mtype(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(mtypes) / sizeof(mtypes[0]); i++)
		if (strlen(mtypes[i].name) == len && !strncmp(mtypes[i].name, s, len))
			return i;
	return -1;
}

/* strictly decimal digits (the module's kstrto* also take a '+') */
static bool dec(const char *s, long long *v)
{
	char *end;

	if (*s == '+')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !*end && !errno;
}

/*
 * kstrtouint(s, 0, ...): an optional '+', then "0x"/"0X" and hex digits
 * (when a hex digit follows the 'x'), "0" and octal digits, or decimal
 * digits; nothing else
 */
static bool base0(const char *s, long long *v)
{
	unsigned long long x = 0;
	int base = 10, d;

	if (*s == '+')
		s++;
	if (s[0] == '0') {
		if (tolower((unsigned char)s[1]) == 'x' && isxdigit((unsigned char)s[2])) {
			base = 16;
			s += 2;
		} else {
			base = 8;
		}
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		if (isdigit((unsigned char)*s))
			d = *s - '0';
		else if (isalpha((unsigned char)*s))
			d = tolower((unsigned char)*s) - 'a' + 10;
		else
			return false;
		if (d >= base)
			return false;
		x = x * base + d;
		if (x > 0xffffffffULL)
			return false;
	}
	*v = (long long)x;
	return true;
}

static bool model_field(struct model *m, char *text, char names_[][MAX_NAME + 2])
{
	char *w[6];
	int n = 0, first = 0, size, dyn = 0;
	bool is_char = false;
	char type[600];
	const char *fname;
	long long v;

	for (char *p = text;;) {
		while (*p && k_isspace(*p))
			p++;
		if (!*p)
			break;
		if (n == 5)
			return m->why = "more than 5 words in a field", false;
		w[n++] = p;
		while (*p && !k_isspace(*p))
			p++;
		if (*p)
			*p++ = 0;
	}
	if (n < 2)
		return m->why = "field with fewer than 2 words", false;
	if (!strcmp(w[0], "struct")) {
		if (n != 4 || !spec_name_ok(w[1], strlen(w[1]), MAX_NAME) || !dec(w[3], &v) ||
		    v < 1 || v > MAX_STRUCT)
			return m->why = "bad struct field", false;
		size = v;
		fname = w[2];
		goto add;
	}
	if (!strcmp(w[0], "__data_loc") || !strcmp(w[0], "__rel_loc")) {
		dyn = w[0][2] == 'd' ? 1 : 2;
		first = 1;
	}
	if (n - first == 3 && !strcmp(w[first], "unsigned")) {
		snprintf(type, sizeof(type), "unsigned %s", w[first + 1]);
		fname = w[first + 2];
	} else if (n - first == 2) {
		snprintf(type, sizeof(type), "%s", w[first]);
		fname = w[first + 1];
	} else {
		return m->why = "bad number of words", false;
	}
	{
		char *br = strchr(type, '[');
		size_t len = br ? (size_t)(br - type) : strlen(type);
		int t = mtype(type, len);

		if (t < 0)
			return m->why = "unknown type", false;
		if (dyn) {
			if (!br || strcmp(br, "[]") || mtypes[t].size != 1 || !strcmp(mtypes[t].name, "s8"))
				return m->why = "bad dynamic array", false;
			is_char = !strcmp(mtypes[t].name, "char");
			size = 4;
		} else if (br) {
			char *end = strchr(br, ']');

			if (!end || end[1] || mtypes[t].size != 1 || !strcmp(mtypes[t].name, "s8"))
				return m->why = "bad array type", false;
			*end = 0;
			/* at most 6 characters, kstrtouint(..., 0, ...) */
			if (strlen(br + 1) > MAX_ARRAY_DIGITS || !base0(br + 1, &v) ||
			    v < 1 || v > MAX_ARRAY)
				return m->why = "bad array size", false;
			size = v;
		} else {
			size = mtypes[t].size;
		}
	}
add:
	if (!spec_name_ok(fname, strlen(fname), MAX_NAME) || isdigit((unsigned char)fname[0]) ||
	    !strncmp(fname, "common_", 7))
		return m->why = "bad field name", false;
	for (int i = 0; i < m->nfields; i++)
		if (!strcmp(names_[i], fname))
			return m->why = "duplicate field name", false;
	if (m->min + size > MAX_PAYLOAD)
		return m->why = "fields larger than the payload limit", false;
	snprintf(names_[m->nfields], MAX_NAME + 2, "%s", fname);
	m->f[m->nfields] = (struct model_field){ size, dyn, is_char, (int)m->min };
	m->nfields++;
	m->min += size;
	if (dyn)
		m->has_dyn = true;
	return true;
}

/* The spec's grammar: "name[:FLAG[,FLAG]] [type name[;type name]...]" */
static struct model model_desc(const char *desc_in)
{
	static char names_[MAX_FIELDS + 1][MAX_NAME + 2];
	struct model m = { .valid = false };
	char buf[1300], *p, *name, *flags, *args, *field;

	if (strlen(desc_in) >= MAX_DESC) {
		m.why = "descriptor of 512 bytes or more";
		return m;
	}
	snprintf(buf, sizeof(buf), "%s", desc_in);
	p = buf;
	while (*p && k_isspace(*p))
		p++;
	name = p;
	while (*p && !k_isspace(*p))
		p++;
	if (*p)
		*p++ = 0;
	args = p;
	flags = strchr(name, ':');
	if (flags)
		*flags++ = 0;
	if (!spec_name_ok(name, strlen(name), MAX_NAME)) {
		m.why = "bad event name";
		return m;
	}
	if (flags) {
		char *f;

		while ((f = strsep(&flags, ",")))
			if (strcmp(f, "BPF_ITER")) {
				m.why = "unknown flag";
				return m;
			}
	}
	/* strim */
	while (*args && k_isspace(*args))
		args++;
	for (size_t l = strlen(args); l && k_isspace(args[l - 1]); l--)
		args[l - 1] = 0;
	while (args && *args) {
		field = strsep(&args, ";");
		if (m.nfields == MAX_FIELDS) {
			m.why = "more than 64 fields";
			return m;
		}
		if (!model_field(&m, field, names_))
			return m;
	}
	m.valid = true;
	m.why = "valid";
	return m;
}

/* ------------------------------------------------------------ generator */

static const char *gtypes[] = {
	"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "int", "unsigned int",
	"short", "unsigned short", "char", "unsigned char", "long", "bool", "u128",
	"unsigned", "signed int", "struct", "__data_loc", "__rel_loc", "U32", "u32 ",
};

static void gen_name(struct ue_rng *r, char *out, int max)
{
	static const char *pool[] = { "fz_a", "fz_b", "fz_c", "fz_d", "fz_e", "fz_f" };
	static const char cs[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
	int len;

	switch (ue_rn(r, 8)) {
	case 0: case 1: case 2: case 3: case 4:
		snprintf(out, max, "%s", pool[ue_rn(r, 6)]);
		return;
	case 5:
		len = ue_one_in(r, 2) ? 250 + ue_rn(r, 10) : 1 + ue_rn(r, 12);
		break;
	case 6:
		len = ue_rn(r, 3);
		break;
	default:
		len = 1 + ue_rn(r, 20);
		break;
	}
	if (len >= max)
		len = max - 1;
	for (int i = 0; i < len; i++)
		out[i] = cs[ue_rn(r, sizeof(cs) - 1)];
	out[len] = 0;
	if (len && ue_one_in(r, 6))
		out[ue_rn(r, len)] = "-.:/ \xe9\x7f\xa0!#"[ue_rn(r, 11)];
}

static int gen_field(struct ue_rng *r, char *out, int max, int i)
{
	char fname[300], type[64];
	int k = ue_rn(r, 16);

	if (ue_one_in(r, 10))
		gen_name(r, fname, sizeof(fname));
	else if (ue_one_in(r, 20))
		snprintf(fname, sizeof(fname), "%s", ue_one_in(r, 2) ? "common_pid" : "9x");
	else
		snprintf(fname, sizeof(fname), "f%d", ue_one_in(r, 12) ? 0 : i);
	snprintf(type, sizeof(type), "%s", gtypes[ue_rn(r, ue_one_in(r, 5) ? sizeof(gtypes) / sizeof(gtypes[0]) : 14)]);
	switch (k) {
	case 0: case 1: { /* array */
		static const char *const counts[] = {
			"1", "8", "1024", "1025", "0", "-1", "", "abc", "+4", "0x10",
			"4294967297", "16", "0x14", "024", "0x", "08", "0x401", "0x400",
			"02000", "0x0014", "0x00014", "0X1f", "0xg", "00",
		};

		return snprintf(out, max, "%s[%s] %s", type,
				counts[ue_rn(r, sizeof(counts) / sizeof(counts[0]))], fname);
	}
	case 2: /* dynamic */
		return snprintf(out, max, "%s %s[] %s", ue_one_in(r, 2) ? "__data_loc" : "__rel_loc",
				ue_one_in(r, 3) ? type : ue_one_in(r, 2) ? "char" : "u8", fname);
	case 3: { /* struct */
		static const char *sizes[] = { "1", "16", "1024", "1025", "0", "-3", "x", "+8" };

		return snprintf(out, max, "struct %s %s %s", ue_one_in(r, 6) ? "9bad" : "tag", fname,
				sizes[ue_rn(r, 8)]);
	}
	case 4: /* words missing or extra */
		return ue_one_in(r, 2) ? snprintf(out, max, "%s", type) :
				      snprintf(out, max, "%s %s extra words here", type, fname);
	default:
		return snprintf(out, max, "%s %s", type, fname);
	}
}

/* Build a descriptor, then maybe mutate its bytes */
static int gen_desc(struct ue_rng *r, char *out, int max)
{
	char name[300];
	int n, nf;

	gen_name(r, name, sizeof(name));
	n = snprintf(out, max, "%s", name);
	if (ue_one_in(r, 6)) {
		static const char *fl[] = { ":BPF_ITER", ":", ":BPF_ITER,BPF_ITER", ":bpf_iter", ":FOO", ":BPF_ITER,", "::" };

		n += snprintf(out + n, max - n, "%s", fl[ue_rn(r, 7)]);
	}
	nf = ue_one_in(r, 8) ? 0 : ue_one_in(r, 10) ? 60 + ue_rn(r, 8) : 1 + ue_rn(r, 4);
	for (int i = 0; i < nf && n < max - 1; i++) {
		const char *sep = i ? (ue_one_in(r, 4) ? ";" : "; ") : " ";

		n += snprintf(out + n, max - n, "%s", sep);
		if (n >= max - 1)
			break;
		n += gen_field(r, out + n, max - n, i);
	}
	if (n >= max)
		n = max - 1;
	if (ue_one_in(r, 8) && n < max - 2)
		out[n++] = ue_one_in(r, 2) ? ';' : ' ';
	out[n] = 0;
	/* byte-level mutations */
	int muts = ue_one_in(r, 3) ? 1 + ue_rn(r, 3) : 0;

	for (int i = 0; i < muts && n > 0; i++) {
		int at = ue_rn(r, n);

		switch (ue_rn(r, 5)) {
		case 0: /* truncate */
			n = at;
			break;
		case 1: /* replace */
			out[at] = ue_one_in(r, 2) ? " \t;:[]_,\n#"[ue_rn(r, 10)] : (char)(1 + ue_rn(r, 255));
			break;
		case 2: /* insert */
			if (n < max - 2) {
				memmove(out + at + 1, out + at, n - at);
				out[at] = " ;\t\xa0"[ue_rn(r, 4)];
				n++;
			}
			break;
		case 3: /* duplicate a chunk */
			{
				int len = 1 + ue_rn(r, 40);

				if (at + len > n)
					len = n - at;
				if (n + len < max - 1) {
					memmove(out + at + len, out + at, n - at);
					n += len;
				}
			}
			break;
		default: /* pad to the length limits */
			{
				int target = 505 + ue_rn(r, 12);

				while (n < target && n < max - 1)
					out[n++] = ' ';
				if (n < max - 1)
					out[n++] = 'x';
			}
			break;
		}
		out[n] = 0;
	}
	return n;
}

/* Known-good descriptors with dynamic fields, for write fuzzing */
static const char *wdescs[] = {
	"fzw_a u32 a",
	"fzw_b __data_loc char[] s; u32 n",
	"fzw_c __rel_loc u8[] blob",
	"fzw_d u64 x; char[16] t; __data_loc u8[] d; __rel_loc char[] rs",
	"fzw_e",
	"fzw_f:BPF_ITER u8 a; struct s st 24",
	"fzw_g unsigned char[8] s; __data_loc unsigned char[] d",
};
#define NWDESCS ((int)(sizeof(wdescs) / sizeof(wdescs[0])))

static void gen_payload(struct ue_rng *r, struct input *in)
{
	struct model m = model_desc(in->str);
	int len;

	switch (ue_rn(r, 8)) {
	case 0: len = ue_rn(r, 4); break;
	case 1: len = MAX_PAYLOAD - 2 + ue_rn(r, 4); break;
	case 2: len = m.min ? m.min - 1 : 0; break;
	case 3: len = ue_rn(r, 4100); break;
	default: len = m.min + ue_rn(r, 64); break;
	}
	if (len > (int)sizeof(in->payload))
		len = sizeof(in->payload);
	in->plen = len;
	for (int i = 0; i < len; i++)
		in->payload[i] = ue_rnext(r);
	/* Plausible and implausible __data_loc/__rel_loc words */
	for (int i = 0; m.valid && i < m.nfields; i++) {
		struct model_field *f = &m.f[i];
		uint32_t loc, off, size;

		if (!f->dyn || f->offset + 4 > len)
			continue;
		size = ue_rn(r, 3) ? ue_rn(r, 20) : ue_rnext(r) & 0xffff;
		if (f->dyn == 1)
			off = ue_rn(r, 3) ? 8 + m.min + ue_rn(r, 8) : ue_rnext(r) & 0xffff;
		else
			off = ue_rn(r, 3) ? m.min - f->offset - 4 + ue_rn(r, 8) : ue_rnext(r) & 0xffff;
		loc = size << 16 | (off & 0xffff);
		memcpy(in->payload + f->offset, &loc, 4);
		/* NUL-terminate char data sometimes */
		if (f->is_char && ue_rn(r, 3)) {
			long at = (f->dyn == 1 ? (long)off - 8 : (long)off + f->offset + 4) + (long)size - 1;

			if (size && at >= 0 && at < len)
				in->payload[at] = 0;
		}
	}
}

static void gen_input(struct ue_rng *r, struct input *in)
{
	static const uint32_t sizes[] = { 0, 1, 16, 23, 24, 25, 27, 28, 29, 32, 64, 4096, 4097, 0xffffffff };
	int k = ue_rn(r, 100);

	memset(in, 0, sizeof(*in));
	in->kind = k < 30 ? K_REG_STATUS : k < 52 ? K_REG_WRITE : k < 60 ? K_UNREG : k < 64 ? K_DEL :
		   k < 86 ? K_WRITE : k < 95 ? K_DYN : k < 97 ? K_IOCTL : K_MMAP;
	in->ptr = ue_one_in(r, 15) ? ue_rn(r, NWHERE) : WH_OK;
	switch (in->kind) {
	case K_REG_STATUS:
		in->size = ue_one_in(r, 8) ? sizes[ue_rn(r, 14)] : 24;
		in->slen = gen_desc(r, in->str, MAX_DESC + 40);
		break;
	case K_REG_WRITE:
		in->size = ue_one_in(r, 6) ? sizes[ue_rn(r, 14)] : 28;
		in->esize = ue_one_in(r, 8) ? ue_rn(r, 17) : ue_one_in(r, 2) ? 4 : 8;
		in->bit = ue_one_in(r, 8) ? ue_rn(r, 256) : ue_rn(r, in->esize == 4 ? 32 : 64);
		in->flags = ue_one_in(r, 6) ? ue_rnext(r) : ue_rn(r, 4);
		in->addr = ue_one_in(r, 4) ? ue_rn(r, NWHERE) : WH_OK;
		in->off = ue_one_in(r, 6) ? ue_rn(r, PAGE) : ue_rn(r, PAGE / 8) * 8;
		in->slen = ue_one_in(r, 2) ? snprintf(in->str, sizeof(in->str), "%s", wdescs[ue_rn(r, NWDESCS)])
					: gen_desc(r, in->str, MAX_DESC + 40);
		break;
	case K_UNREG:
		in->size = ue_one_in(r, 6) ? sizes[ue_rn(r, 14)] : 16;
		in->bit = ue_rn(r, ue_one_in(r, 8) ? 256 : 64);
		in->addr = ue_one_in(r, 4) ? ue_rn(r, NWHERE) : WH_OK;
		in->off = ue_rn(r, PAGE / 8) * 8;
		in->res1 = ue_one_in(r, 10) ? ue_rnext(r) : 0;
		in->res2 = ue_one_in(r, 10) ? ue_rnext(r) : 0;
		break;
	case K_DEL:
		if (ue_one_in(r, 4))
			in->slen = snprintf(in->str, sizeof(in->str), "%.*s", 5, wdescs[ue_rn(r, NWDESCS)]);
		else if (ue_one_in(r, 10))
			in->slen = gen_desc(r, in->str, MAX_DESC + 40);
		else {
			gen_name(r, in->str, 300);
			in->slen = strlen(in->str);
		}
		break;
	case K_WRITE:
		in->slen = snprintf(in->str, sizeof(in->str), "%s",
				    ue_one_in(r, 5) ? "fz_a u32 a" : wdescs[ue_rn(r, NWDESCS)]);
		in->idx = ue_one_in(r, 8) ? (int32_t)ue_rnext(r) : INT32_MIN;
		in->enable = !ue_one_in(r, 6);
		in->split = ue_one_in(r, 3) ? 1 + ue_rn(r, 40) : 0;
		in->pay = ue_one_in(r, 12) ? ue_rn(r, NWHERE) : WH_OK;
		gen_payload(r, in);
		break;
	case K_DYN: {
		static const char *pfx[] = { "u:", "u:", "u:", "!u:", "-:", "!u:user_events/", "u:user_events/" };
		int p = ue_rn(r, 7), n = snprintf(in->str, sizeof(in->str), "%s", pfx[p]);

		if (p >= 3 && p <= 5 && ue_one_in(r, 2)) {
			char nm[300];

			gen_name(r, nm, sizeof(nm));
			n += snprintf(in->str + n, sizeof(in->str) - n, "%s", nm);
		} else {
			n += gen_desc(r, in->str + n, sizeof(in->str) - n - 1);
		}
		in->slen = n;
		in->ptr = WH_OK;
		break;
	}
	case K_IOCTL: {
		static const uint32_t cmds[] = {
			_IOWR(DIAG_IOC_MAGIC, 3, char *), _IOWR(DIAG_IOC_MAGIC, 0, int),
			_IO(DIAG_IOC_MAGIC, 0), _IOW('x', 1, int), 0, 0xffffffff,
		};

		in->cmd = ue_one_in(r, 2) ? cmds[ue_rn(r, 6)] : (uint32_t)ue_rnext(r);
		if (in->cmd == IOC_REG || in->cmd == IOC_DEL || in->cmd == IOC_UNREG)
			in->cmd ^= 0x100;
		break;
	}
	case K_MMAP: {
		static const uint32_t lens[] = { 4096, 4096, 8192, 1, 0, 4095 };

		in->mlen = lens[ue_rn(r, 6)];
		in->moff = ue_one_in(r, 4) ? PAGE * (1 + ue_rn(r, 3)) : 0;
		in->mprot = ue_rn(r, 8);
		in->mflags = ue_one_in(r, 3) ? MAP_PRIVATE : MAP_SHARED;
		in->oflags = ue_one_in(r, 2) ? O_RDWR : O_RDONLY;
		in->mprotect = ue_one_in(r, 2) ? (int)ue_rn(r, 8) : -1;
		break;
	}
	default:
		break;
	}
	if (in->kind == K_REG_STATUS || in->kind == K_REG_WRITE || in->kind == K_UNREG) {
		uint32_t natural = in->kind == K_REG_STATUS ? 24 : in->kind == K_REG_WRITE ? 28 : 16;

		if (in->size > natural && in->size <= natural + 64 && ue_rn(r, 2)) {
			in->tlen = in->size - natural;
			for (int i = 0; i < in->tlen; i++)
				in->tail[i] = ue_one_in(r, 3) ? ue_rnext(r) : 0;
		}
		in->avail = ue_one_in(r, 10) ? natural + in->tlen - 1 - ue_rn(r, 4) : natural + in->tlen;
		if (in->size == 4096 && ue_rn(r, 2))
			in->avail = 4096;
	}
}

/* ------------------------------------------------------------ execution */

static char *mem;		/* [rw page][ro page][unmapped page] */
static char *bigbuf;		/* 2 pages + an unmapped guard for structs */
static int data_fd = -1;

struct enab { uint64_t addr; uint8_t bit; bool live; };
#define MAXENAB 512
static struct enab enabs[MAXENAB];
static int nenabs;
static char enabled_names[64][300];
static int nenabled;

static uint64_t where_addr(enum where w, uint32_t off)
{
	switch (w) {
	case WH_OK: return (uintptr_t)mem + (off % PAGE);
	case WH_NULL: return off % 16;
	case WH_LOW: return 4096 + off;
	case WH_KERNEL: return 0xffff888000000000ULL + off;
	case WH_TOP: return 0xfffffffffffff000ULL + (off % PAGE);
	case WH_UNMAPPED: return (uintptr_t)mem + 2 * PAGE + (off % PAGE);
	case WH_RO: return (uintptr_t)mem + PAGE + (off % PAGE);
	case WH_EDGE: return 0x00007ffffffff000ULL + (off % PAGE);
	default: return 0;
	}
}

/* A string pointer: the string in place, or a bad pointer */
static const char *place_str(const struct input *in)
{
	static char *strpage;
	size_t len = in->slen;

	if (!strpage) {
		strpage = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(strpage + 2 * PAGE, PAGE);
	}
	switch (in->ptr) {
	case WH_OK: case WH_RO:
		return in->str;
	case WH_EDGE: /* unterminated, right before an unmapped page */
		if (len > 2 * PAGE)
			len = 2 * PAGE;
		memcpy(strpage + 2 * PAGE - len, in->str, len);
		return strpage + 2 * PAGE - len;
	default:
		return (const char *)(uintptr_t)where_addr(in->ptr, 0);
	}
}

static bool ptr_bad(const struct input *in)
{
	return in->ptr != WH_OK && in->ptr != WH_RO;
}

/* Struct bytes at the end of readable memory: avail bytes readable */
static void *place_struct(const struct input *in, const void *natural, uint32_t nsize)
{
	uint32_t avail = in->avail > 2 * PAGE ? 2 * PAGE : in->avail;
	char *p;

	if (avail < 4)
		avail = 4;
	p = bigbuf + 2 * PAGE - avail;
	memset(p, 0, avail);
	memcpy(p, natural, nsize < avail ? nsize : avail);
	if (in->tlen && nsize < avail)
		memcpy(p + nsize, in->tail, in->tlen < (int)(avail - nsize) ? in->tlen : (int)(avail - nsize));
	return p;
}

static bool tail_nonzero(const struct input *in, uint32_t natural)
{
	/* the bytes the kernel checks: natural..size, all readable */
	for (uint32_t i = natural; i < in->size && i < in->avail; i++) {
		uint32_t t = i - natural;

		if (t < (uint32_t)in->tlen && in->tail[t])
			return true;
	}
	return false;
}

static bool enab_live(uint64_t addr, uint8_t bit)
{
	for (int i = 0; i < nenabs; i++)
		if (enabs[i].live && enabs[i].addr == addr && enabs[i].bit == bit)
			return true;
	return false;
}

/* Result checking ------------------------------------------------------ */

struct verdict {
	bool fail;
	char why[300];
};

static void verdict_set(struct verdict *v, const char *fmt, ...)
{
	va_list ap;

	if (v->fail)
		return;
	v->fail = true;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

#define ALLOW(v, e, ...)							\
	do {									\
		static const int _s[] = { __VA_ARGS__ };			\
		if (!ue_in_set((e), _s, sizeof(_s) / sizeof(_s[0])))		\
			verdict_set((v), "%s, expected one of: %s", ue_errno_name(e), #__VA_ARGS__); \
	} while (0)

static int enable_event(const char *name)
{
	char path[700];
	int fd, e = 0;

	for (int i = 0; i < nenabled; i++)
		if (!strcmp(enabled_names[i], name))
			return 0;
	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/enable", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) < 0)
		e = -errno;
	close(fd);
	if (!e && nenabled < 64)
		snprintf(enabled_names[nenabled++], 300, "%s", name);
	return e;
}

static int reg_status_plain(const char *desc, uint32_t *widx)
{
	int w = 0, ret = ue_reg(data_fd, desc, NULL, &w);

	if (ret)
		return -ret;
	*widx = w;
	return 0;
}

/*
 * What DIAG_IOCSREG's result e must be whatever the ABI: a documented
 * errno; EFAULT when the size cannot be read, E2BIG above a page. True
 * when that decides it.
 */
static bool reg_size_decided(const struct input *in, struct verdict *v, int e)
{
	if (!is_documented(e, in->kind))
		verdict_set(v, "undocumented errno %s", ue_errno_name(e));
	if (in->avail < 4) {
		ALLOW(v, e, EFAULT);
		return true;
	}
	if (in->size > PAGE) {
		ALLOW(v, e, E2BIG);
		return true;
	}
	return false;
}

static void run_reg_status(const struct input *in, struct verdict *v)
{
	struct user_status_reg reg = { .size = in->size };
	struct model m = model_desc(in->str);
	void *p;
	int e;

	reg.name_args = (uintptr_t)place_str(in);
	p = place_struct(in, &reg, sizeof(reg));
	e = ioctl(data_fd, IOC_REG, p) < 0 ? errno : 0;
	if (reg_size_decided(in, v, e))
		return;
	if (in->size != 24)
		return; /* < 24 and 25..27: EINVAL; >= 28: the other ABI (checked there) */
	if (in->avail < 24) {
		ALLOW(v, e, EFAULT);
		return;
	}
	if (in->ptr == WH_EDGE) {
		ALLOW(v, e, EFAULT, EINVAL, 0, EADDRINUSE, ENOSPC, EMFILE);
		return;
	}
	if (ptr_bad(in)) {
		ALLOW(v, e, EFAULT);
		return;
	}
	if (m.valid) {
		ALLOW(v, e, 0, EADDRINUSE, ENOSPC, EMFILE, ENOMEM);
		if (e == EINVAL)
			verdict_set(v, "EINVAL for a descriptor the spec allows");
	} else {
		if (e == 0 || e == EADDRINUSE)
			verdict_set(v, "%s for a descriptor the spec rejects (%s)", ue_errno_name(e), m.why);
		ALLOW(v, e, EINVAL, ENOMEM);
	}
	if (!e) {
		uint32_t s = ((struct user_status_reg *)p)->status_index;

		if (!s || s >= PAGE)
			verdict_set(v, "status_index %u out of range", s);
	}
}

static void run_reg_write(const struct input *in, struct verdict *v)
{
	struct user_write_reg reg = {
		.size = in->size, .enable_bit = in->bit, .enable_size = in->esize,
		.flags = in->flags,
	};
	struct model m = model_desc(in->str);
	uint64_t addr = where_addr(in->addr, in->off);
	int reasons[10], nr = 0, e;
	bool struct_ok;
	void *p;

	reg.enable_addr = addr;
	reg.name_args = (uintptr_t)place_str(in);
	p = place_struct(in, &reg, sizeof(reg));
	e = ioctl(data_fd, IOC_REG, p) < 0 ? errno : 0;
	if (reg_size_decided(in, v, e))
		return;
	if (in->size < 28) {
		if (in->size != 24)
			ALLOW(v, e, EINVAL);
		return;
	}
	if (in->avail < in->size) {
		ALLOW(v, e, EFAULT, E2BIG);
		goto track;
	}
	if (tail_nonzero(in, 28)) {
		ALLOW(v, e, E2BIG);
		goto track;
	}
	/* Every reason that applies: the result must be one of them */
	struct_ok = true;
	if (in->flags & ~3u || (in->esize != 4 && in->esize != 8) || addr % in->esize ||
	    in->bit >= in->esize * 8) {
		reasons[nr++] = EINVAL;
		struct_ok = false;
	}
	if (struct_ok && (in->addr == WH_KERNEL || in->addr == WH_TOP))
		reasons[nr++] = EFAULT;
	if (struct_ok && enab_live(addr, in->bit))
		reasons[nr++] = EADDRINUSE;
	if (ptr_bad(in))
		reasons[nr++] = EFAULT;
	if (in->ptr == WH_EDGE)
		reasons[nr++] = EINVAL;
	if (!m.valid)
		reasons[nr++] = EINVAL;
	if (in->addr == WH_NULL || in->addr == WH_LOW || in->addr == WH_UNMAPPED ||
	    in->addr == WH_RO || in->addr == WH_EDGE)
		reasons[nr++] = EFAULT;
	/* The name may be taken by other fields (or the table full) */
	if (nr && struct_ok && !ptr_bad(in) && in->ptr != WH_EDGE && m.valid) {
		reasons[nr++] = EADDRINUSE;
		reasons[nr++] = EMFILE;
	}
	if (nr) {
		if (!ue_in_set(e, reasons, nr) && e != ENOMEM)
			verdict_set(v, "%s, but the input calls for %s%s%s", ue_errno_name(e), ue_errno_name(reasons[0]),
				    nr > 1 ? " or " : "", nr > 1 ? ue_errno_name(reasons[1]) : "");
	} else {
		/* valid: only the state can refuse it */
		ALLOW(v, e, 0, EADDRINUSE, EMFILE, ENOMEM, ENOSPC);
	}
track:
	if (!e) {
		if (nenabs < MAXENAB)
			enabs[nenabs++] = (struct enab){ addr, in->bit, true };
		/* Keep the enabler count bounded */
		if (nenabs == MAXENAB) {
			struct user_write_unreg u = { .size = sizeof(u) };

			for (int i = 0; i < nenabs; i++) {
				u.disable_addr = enabs[i].addr;
				u.disable_bit = enabs[i].bit;
				ioctl(data_fd, IOC_UNREG, &u);
			}
			nenabs = 0;
		}
	}
}

static void run_unreg(const struct input *in, struct verdict *v)
{
	struct user_write_unreg u = {
		.size = in->size, .disable_bit = in->bit, .__reserved = in->res1,
		.__reserved2 = in->res2,
	};
	uint64_t addr = where_addr(in->addr, in->off);
	bool live;
	void *p;
	int e;

	/* Half of the time, aim at a live enabler */
	if (in->addr == WH_OK && nenabs && (in->off / 8) % 2) {
		struct enab *x = &enabs[(in->off / 16) % nenabs];

		addr = x->addr;
		u.disable_bit = x->bit;
	}
	u.disable_addr = addr;
	live = enab_live(addr, u.disable_bit);
	p = place_struct(in, &u, sizeof(u));
	e = ioctl(data_fd, IOC_UNREG, p) < 0 ? errno : 0;
	if (!is_documented(e, in->kind))
		verdict_set(v, "undocumented errno %s", ue_errno_name(e));
	if (in->avail < 4)
		ALLOW(v, e, EFAULT);
	else if (in->size > PAGE)
		ALLOW(v, e, E2BIG);
	else if (in->size < 16)
		ALLOW(v, e, EINVAL);
	else if (in->avail < in->size)
		ALLOW(v, e, EFAULT, E2BIG);
	else if (tail_nonzero(in, 16))
		ALLOW(v, e, E2BIG);
	else if (in->res1 || in->res2)
		ALLOW(v, e, EINVAL);
	else if (live)
		ALLOW(v, e, 0);
	else
		ALLOW(v, e, ENOENT);
	if (!e)
		for (int i = 0; i < nenabs; i++)
			if (enabs[i].live && enabs[i].addr == addr && enabs[i].bit == u.disable_bit) {
				enabs[i] = enabs[--nenabs];
				break;
			}
}

static void run_del(const struct input *in, struct verdict *v)
{
	int e = ioctl(data_fd, IOC_DEL, place_str(in)) < 0 ? errno : 0;

	if (!is_documented(e, in->kind))
		verdict_set(v, "undocumented errno %s", ue_errno_name(e));
	if (ptr_bad(in))
		ALLOW(v, e, EFAULT);
	else if (in->ptr == WH_EDGE)
		ALLOW(v, e, EFAULT, EINVAL, ENOENT, EBUSY, 0);
	else if (in->slen >= MAX_DESC)
		ALLOW(v, e, EINVAL);
	else
		ALLOW(v, e, 0, ENOENT, EBUSY);
}

/*
 * Expected result of a write of in->payload to the event described by m,
 * in the order the spec gives the checks.
 */
static int model_write(const struct model *m, const struct input *in, bool enabled,
		       bool index_faults, bool payload_faults)
{
	size_t len = in->plen;

	if (index_faults)
		return EFAULT;
	if (in->idx != INT32_MIN && in->idx < 0)
		return EINVAL;
	if (in->idx != INT32_MIN)
		return ENOENT;	/* only huge raw indexes are modelled */
	if (len < m->min)
		return EINVAL;
	if (len > MAX_PAYLOAD)
		return E2BIG;
	if (!enabled)
		return EBADF;
	if (payload_faults)
		return EFAULT;
	/* __data_loc / __rel_loc within the record, char data NUL-terminated */
	for (int i = 0; i < m->nfields; i++) {
		const struct model_field *f = &m->f[i];
		uint32_t loc, off, size;

		if (!f->dyn)
			continue;
		memcpy(&loc, in->payload + f->offset, 4);
		off = loc & 0xffff;
		size = loc >> 16;
		if (f->dyn == 2)
			off += 8 + f->offset + 4;
		if (off < 8 || off + size > 8 + len)
			return EFAULT;
		if (f->is_char && (!size || in->payload[off - 8 + size - 1] != 0))
			return EFAULT;
	}
	return 0;
}

static void run_write(const struct input *in, struct verdict *v)
{
	struct model m = model_desc(in->str);
	bool enabled = false, bad = in->pay != WH_OK && in->pay != WH_RO;
	bool index_faults, payload_faults;
	int total = 4 + in->plen, s, e, x, idx;
	static uint8_t buf[8400];
	uint32_t widx = 0;
	char name[300];
	ssize_t ret;

	e = reg_status_plain(in->str, &widx);
	if (e) /* EADDRINUSE: another descriptor owns the name now */
		return;
	sscanf(in->str, "%299[^ :]", name);
	if (in->enable)
		enabled = enable_event(name) == 0;
	else
		for (int i = 0; i < nenabled; i++)
			if (!strcmp(enabled_names[i], name))
				enabled = true;
	idx = in->idx == INT32_MIN ? (int)widx : in->idx;
	memcpy(buf, &idx, 4);
	memcpy(buf + 4, in->payload, in->plen);
	s = in->split > total ? total : in->split;
	if (in->split) {
		struct iovec iov[2] = { { buf, s }, { buf + s, total - s } };

		if (bad)
			iov[1].iov_base = (void *)(uintptr_t)where_addr(in->pay, 0);
		ret = writev(data_fd, iov, 2);
		index_faults = bad && s < 4;
		payload_faults = bad && s >= 4 && s < total;
	} else {
		ret = write(data_fd, bad ? (void *)(uintptr_t)where_addr(in->pay, 0) : buf, total);
		index_faults = bad;
		payload_faults = false;
	}
	e = ret < 0 ? errno : 0;
	if (!is_documented(e, in->kind))
		verdict_set(v, "undocumented errno %s", ue_errno_name(e));
	if (!e && ret != total)
		verdict_set(v, "write returned %zd for %d bytes", ret, total);
	if (!m.valid)
		return;
	if (in->idx != INT32_MIN && in->idx >= 0 && in->idx < 100000)
		return; /* maybe an index of another event on this fd: not modelled */
	x = model_write(&m, in, enabled, index_faults, payload_faults);
	/* iovecs with kernel addresses are refused before the file sees them */
	if (bad && (in->pay == WH_KERNEL || in->pay == WH_TOP))
		x = EFAULT;
	/* an iovec reaching past the end of user space: the same */
	if (bad && in->pay == WH_EDGE && e == EFAULT)
		x = EFAULT;
	if (e != x)
		verdict_set(v, "%s, the model says %s (min %u, %d bytes, enabled %d)", ue_errno_name(e),
			    ue_errno_name(x), m.min, in->plen, enabled);
}

/*
 * Before Linux 5.12 the tracing core splits a dynamic_events command into
 * words (argv_split(), the kernel's isspace(): ASCII white space and Latin-1
 * NBSP, 0xa0) before the module sees it, and the module joins the words
 * with single spaces again (Documentation/compat.rst). From 5.12 on the
 * module gets the raw string and only ASCII white space separates.
 */
static bool core_splits_dyn_words(void)
{
	static int splits = -1;
	struct utsname u;
	int major = 0, minor = 0;

	if (splits < 0) {
		splits = 0;
		if (!uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2)
			splits = major < 5 || (major == 5 && minor < 12);
	}
	return splits;
}

/* What the module's parser gets from the command s: see above */
static void dyn_command_seen(const char *s, char *out, size_t max)
{
	size_t n = 0;

	if (!core_splits_dyn_words()) {
		snprintf(out, max, "%s", s);
		return;
	}
	while (*s) {
		while (*s && (k_isspace(*s) || (unsigned char)*s == 0xa0))
			s++;
		if (!*s)
			break;
		if (n && n + 1 < max)
			out[n++] = ' ';
		while (*s && !(k_isspace(*s) || (unsigned char)*s == 0xa0)) {
			if (n + 1 < max)
				out[n++] = *s;
			s++;
		}
	}
	out[n] = 0;
}

static void run_dyn(const struct input *in, struct verdict *v)
{
	int fd = open(UE_DYN_FILE, O_WRONLY | O_APPEND | O_CLOEXEC), e;
	char seen[sizeof(in->str)];

	if (fd < 0) {
		verdict_set(v, "open %s: %s", UE_DYN_FILE, ue_errno_name(errno));
		return;
	}
	e = write(fd, in->str, in->slen) < 0 ? errno : 0;
	close(fd);
	if (!is_documented(e, in->kind))
		verdict_set(v, "undocumented errno %s", ue_errno_name(e));
	/* Lines are split at \n and cut at '#' by the tracing core */
	if (!strncmp(in->str, "u:", 2) && !strpbrk(in->str, "\n#") && (int)strlen(in->str) == in->slen &&
	    strncmp(in->str, "u:user_events/", 14)) {
		struct model m;

		dyn_command_seen(in->str, seen, sizeof(seen));
		m = model_desc(seen + 2);
		if (strlen(seen + 2) >= MAX_DESC)
			ALLOW(v, e, EINVAL);
		else if (m.valid) {
			ALLOW(v, e, 0, EADDRINUSE, EMFILE, ENOMEM);
		} else {
			if (!e || e == EADDRINUSE)
				verdict_set(v, "%s for a descriptor the spec rejects (%s)", ue_errno_name(e), m.why);
		}
	}
}

static void run_ioctl(const struct input *in, struct verdict *v)
{
	int e = ioctl(data_fd, in->cmd, mem) < 0 ? errno : 0;

	ALLOW(v, e, ENOTTY);
}

static void run_mmap(const struct input *in, struct verdict *v)
{
	int fd = open(UE_STATUS_FILE, in->oflags | O_CLOEXEC), e;
	void *p;

	if (fd < 0) {
		verdict_set(v, "open %s: %s", UE_STATUS_FILE, ue_errno_name(errno));
		return;
	}
	p = mmap(NULL, in->mlen, in->mprot, in->mflags, fd, in->moff);
	e = p == MAP_FAILED ? errno : 0;
	close(fd);
	if (!is_documented(e, in->kind))
		verdict_set(v, "undocumented errno %s", ue_errno_name(e));
	{
		/* Every check that applies; the VFS and the module each do some */
		int reasons[4], nr = 0;

		/* the length is rounded up to a page */
		if (!in->mlen || in->mlen > PAGE || in->moff)
			reasons[nr++] = EINVAL;
		if ((in->mprot & PROT_WRITE) && in->mflags == MAP_SHARED && in->oflags == O_RDONLY)
			reasons[nr++] = EACCES;
		if (in->mprot & PROT_WRITE)
			reasons[nr++] = EPERM;
		if (nr && !ue_in_set(e, reasons, nr))
			verdict_set(v, "%s, but the input calls for %s", ue_errno_name(e), ue_errno_name(reasons[0]));
		if (!nr && e)
			verdict_set(v, "%s for a valid mapping", ue_errno_name(e));
	}
	if (!e) {
		int prot = in->mprot;

		if (in->mprotect >= 0) {
			int x = mprotect(p, PAGE, in->mprotect) ? errno : 0;

			if (in->mprotect & PROT_WRITE)
				ALLOW(v, x, EACCES);
			else if (in->mprotect & PROT_EXEC)
				ALLOW(v, x, EACCES, 0);	/* VM_MAYEXEC is cleared */
			else
				ALLOW(v, x, 0);
			if (!x)
				prot = in->mprotect;
		}
		if (prot & PROT_READ) {
			volatile uint8_t b = ((volatile uint8_t *)p)[0];

			if (b)
				verdict_set(v, "status byte 0 is %#x", b);
		}
		munmap(p, PAGE);
	}
}

static void run_input(const struct input *in, struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	switch (in->kind) {
	case K_REG_STATUS: run_reg_status(in, v); break;
	case K_REG_WRITE: run_reg_write(in, v); break;
	case K_UNREG: run_unreg(in, v); break;
	case K_DEL: run_del(in, v); break;
	case K_WRITE: run_write(in, v); break;
	case K_DYN: run_dyn(in, v); break;
	case K_IOCTL: run_ioctl(in, v); break;
	case K_MMAP: run_mmap(in, v); break;
	default: break;
	}
}

/* Fresh state: enablers and events go, a new data fd */
static void reset_state(void)
{
	struct user_write_unreg u = { .size = sizeof(u) };
	char buf[1 << 16], *line, *save;
	int fd;

	for (int i = 0; i < nenabs; i++) {
		u.disable_addr = enabs[i].addr;
		u.disable_bit = enabs[i].bit;
		ioctl(data_fd, IOC_UNREG, &u);
	}
	nenabs = 0;
	for (int i = 0; i < nenabled; i++) {
		char path[700];

		snprintf(path, sizeof(path), TRACEFS "/events/user_events/%.299s/enable", enabled_names[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "0", 1) < 0)
				perror("disable");
			close(fd);
		}
	}
	nenabled = 0;
	if (data_fd >= 0)
		close(data_fd);
	data_fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	/* Delete what the status text lists */
	fd = open(UE_STATUS_FILE, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		close(fd);
		buf[n > 0 ? n : 0] = 0;
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *name = strchr(line, ':') ? strchr(line, ':') + 1 : line, *sp;

			if (!strncmp(line, "Active:", 7))
				break;
			if ((sp = strchr(name, ' ')))
				*sp = 0;
			if (strchr(name, '.')) {
				char cmd[400];

				snprintf(cmd, sizeof(cmd), "!u:%s", name);
				fd = open(UE_DYN_FILE, O_WRONLY | O_APPEND | O_CLOEXEC);
				if (fd >= 0) {
					/* unused ones may be reaped meanwhile */
					if (write(fd, cmd, strlen(cmd)) < 0 && errno != EBUSY &&
					    errno != ENOENT)
						perror(cmd);
					close(fd);
				}
			} else {
				ioctl(data_fd, IOC_DEL, name);
			}
		}
	}
}

static void setup_memory(void)
{
	mem = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(mem + PAGE, PAGE, PROT_READ);
	munmap(mem + 2 * PAGE, PAGE);
	bigbuf = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(bigbuf + 2 * PAGE, PAGE);
}

/* Read the trace and formats now and then: the output code sees the data */
static void read_outputs(void)
{
	static char buf[1 << 16];
	int fd = open(TRACEFS "/trace", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	for (int i = 0; i < NWDESCS; i++) {
		char path[300], name[64];

		sscanf(wdescs[i], "%63[^ :]", name);
		snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/format", name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
	}
}

/* ------------------------------------------------------------------ main */

static int log_fd = -1;
static long log_slot;

static void log_input(const char *line)
{
	char buf[16400];
	int n;

	if (log_fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "# n=%ld\n%s\n", log_slot, line);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	/* ring of 32 lines of up to 16 KiB */
	if (pwrite(log_fd, buf, n, (log_slot++ % 32) * 16400) < 0)
		log_fd = -1;
	else if (n < 16400 && pwrite(log_fd, "", 1, (log_slot - 1) % 32 * 16400 + n) < 0)
		log_fd = -1;
}

static unsigned long sig_hash(const struct input *in, const struct verdict *v)
{
	unsigned long h = 5381 + in->kind;
	const char *p = v->why;

	/* the reason without numbers: one case per kind of failure */
	for (; *p; p++)
		if (!isdigit((unsigned char)*p))
			h = h * 33 + *p;
	return h;
}

static int replay(int argc, char **argv)
{
	int pass = 0, fail = 0;

	setup_memory();
	for (int a = 0; a < argc; a++) {
		FILE *f = fopen(argv[a], "r");
		char *line = NULL;
		size_t cap = 0;
		int lines = 0, bad = 0;

		if (!f) {
			printf("not ok - %s: %s\n", argv[a], strerror(errno));
			fail++;
			continue;
		}
		reset_state();
		while (getline(&line, &cap, f) > 0) {
			struct input in;
			struct verdict v;

			if (!parse_line(line, &in))
				continue;
			lines++;
			run_input(&in, &v);
			if (v.fail) {
				bad++;
				printf("# %s line %d: %s\n#   %s\n", argv[a], lines, v.why, line);
			}
		}
		free(line);
		fclose(f);
		if (bad || !lines) {
			printf("not ok - %s (%d of %d inputs failed)\n", argv[a], bad, lines);
			fail++;
		} else {
			printf("ok - %s (%d inputs)\n", argv[a], lines);
			pass++;
		}
	}
	reset_state();
	printf("%d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long long seed = ((unsigned long long)time(NULL) << 16) ^ getpid();
	long max = -1, tried = 0, failed = 0, per_kind[NKINDS] = { 0 }, fail_kind[NKINDS] = { 0 };
	long err_hist[NKINDS][8] = { { 0 } };
	const char *outdir = NULL, *logfile = NULL;
	int secs = 30, opt, nsig = 0;
	unsigned long sigs[256];
	bool verbose = false;
	struct ue_rng r;
	double t0;

	if (argc >= 2 && !strcmp(argv[1], "--replay"))
		return replay(argc - 2, argv + 2);
	if (argc == 4 && !strcmp(argv[1], "--selftest")) {
		/* generation and serialization only, no kernel needed */
		struct ue_rng g = { strtoull(argv[2], NULL, 0) };
		long n = atol(argv[3]), bad = 0;

		for (long i = 0; i < n; i++) {
			struct input a, b;
			char first[16384];

			gen_input(&g, &a);
			snprintf(first, sizeof(first), "%s", serialize(&a));
			if (!parse_line(first, &b) || strcmp(first, serialize(&b))) {
				printf("roundtrip mismatch at %ld:\n%s\n%s\n", i, first, serialize(&b));
				bad++;
			}
			(void)model_desc(a.str);
		}
		printf("%ld inputs, %ld roundtrip mismatches\n", n, bad);
		return bad != 0;
	}
	while ((opt = getopt(argc, argv, "s:t:n:o:L:v")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': secs = atoi(optarg); break;
		case 'n': max = atol(optarg); break;
		case 'o': outdir = optarg; break;
		case 'L': logfile = optarg; break;
		case 'v': verbose = true; break;
		default:
			fprintf(stderr, "usage: %s [-s seed] [-t secs] [-n inputs] [-o dir] [-L log] | --replay files\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (logfile)
		log_fd = open(logfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	printf("# ue_fuzz: seed=%llu, %ds (replay the stream: -s %llu)\n", seed, secs, seed);
	setup_memory();
	r.s = seed;
	reset_state();
	if (data_fd < 0) {
		printf("not ok - open %s: %s\n0 passed, 1 failed\n", UE_DATA_FILE, strerror(errno));
		return 1;
	}
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	}
	for (;;) {
		struct input in;
		struct verdict v;
		struct timespec ts;
		char *line;

		if (max >= 0 && tried >= max)
			break;
		if (!(tried % 64)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (ts.tv_sec + ts.tv_nsec / 1e9 - t0 >= secs)
				break;
		}
		if (tried && !(tried % 2000))
			reset_state();
		if (tried && !(tried % 500))
			read_outputs();
		gen_input(&r, &in);
		line = serialize(&in);
		log_input(line);
		run_input(&in, &v);
		tried++;
		per_kind[in.kind]++;
		if (verbose)
			printf("# %ld %s -> %s\n", tried, line, v.fail ? v.why : "ok");
		if (!v.fail)
			continue;
		failed++;
		fail_kind[in.kind]++;
		unsigned long h = sig_hash(&in, &v);
		bool seen = false;

		for (int i = 0; i < nsig; i++)
			seen |= sigs[i] == h;
		if (seen)
			continue;
		if (nsig < 256)
			sigs[nsig++] = h;
		printf("not ok - input %ld (%s): %s\n#   %s\n", tried, kind_names[in.kind], v.why, line);
		if (outdir) {
			char path[600];
			FILE *f;

			snprintf(path, sizeof(path), "%s/%s-%016lx.case", outdir, kind_names[in.kind], h);
			f = fopen(path, "w");
			if (f) {
				fprintf(f, "# ue_fuzz seed %llu input %ld: %s\n%s\n", seed, tried, v.why, line);
				fclose(f);
			}
		}
	}
	(void)err_hist;
	reset_state();
	printf("# inputs tried: %ld (", tried);
	for (int k = 0; k < NKINDS; k++)
		printf("%s%s=%ld", k ? " " : "", kind_names[k], per_kind[k]);
	printf(")\n# failing inputs: %ld, distinct failures: %d\n", failed, nsig);
	printf("%s - %ld inputs, every result documented and as the model predicts\n",
	       failed ? "not ok" : "ok", tried);
	printf("%ld passed, %ld failed\n", tried - failed, failed);
	return failed ? 1 : 0;
}
