// SPDX-License-Identifier: GPL-2.0
/*
 * ue_race -M relayout: events deleted and created again with other
 * layouts while their records are in the ring buffers, and what readers
 * make of those records afterwards.
 *
 * Writers register 3 names (ue_rl0..2) with one of 9 layouts (other
 * field lists, sizes, __data_loc/__rel_loc strings and byte arrays,
 * char arrays, a struct), through both ABIs, single- and multi-format,
 * persistent or not, write records and let the events go by every path:
 * last put (unregister, close), DIAG_IOCSDEL, "!u:" in dynamic_events,
 * and (with -m) the unload of the module, which the coordinator does
 * between phases while the readers go on. An administrator process
 * enables and disables the events in the top-level buffer and in one
 * instance (created once: no instance churn), takes snapshots, switches
 * the "fields" trace option (6.12), and deletes an enabled synthetic event
 * (which the core refuses with EBUSY). Readers read trace_pipe, trace
 * (top level, the instance, whose records nobody consumes, and the
 * snapshot) and perf (perf_event_open on an event's id, per CPU, with a
 * mmap ring buffer).
 *
 * Every record carries its sequence number in a "seq" field; before
 * writing it, the writer stores (seq, name, layout) in a table shared by
 * every process. The text of a record and its bytes are functions of
 * those three. So:
 *  - a trace line that names one of these events must be either
 *    "NAME: (deleted event)" (or, with the fields option, "NAME:No fields
 *    found") or exactly the text of the record whose seq it shows, as its
 *    writer's layout prints it, under the name its writer wrote to;
 *    "Unknown type N" lines fail too (a type freed while its records were
 *    in a buffer);
 *  - a perf sample must carry the id the perf event was opened on and be,
 *    byte for byte, a record its writer wrote to that event with that
 *    event's layout.
 * A seq whose table slot was reused by a later record cannot be checked
 * (counted as stale, not a failure).
 *
 * -x parts to leave out: synth (the refused synthetic delete), snapshot,
 * fields, inst (the instance), perf, multi (multi-format registrations).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "uapi/linux/user_events.h"
#include "aftermath.h"

#define RL_PFX		"ue_rl"
#define RL_NAMES	3
#define RL_INST		UE_TRACEFS "/instances/ue_rl"
#define RL_TABLE	(1024UL * 1024)	/* entries, a power of 2 */
#define RL_SLOTS	4
#define RL_MSGS		16
#define RL_MAX_REC	512
#define RL_LINE		4096

/* Field kinds, as the descriptor writes them */
enum rl_kind {
	K_U8, K_U16, K_U32, K_U64, K_S64, K_CHAR, K_HEX, K_STRUCT,
	K_DLOC, K_RLOC, K_DLOC_HEX, K_RLOC_HEX,
};

struct rl_field {
	enum rl_kind kind;
	int size;		/* CHAR, HEX, STRUCT: the array size */
	const char *name;
};

struct rl_layout {
	struct rl_field f[5];
	int nf;
	char desc[160];		/* built from f[] */
	char names[80];		/* "lay0,seq0,tag0": how format shows it */
	int fixed;		/* bytes of the fixed part */
};

#define F(k, s, n) { K_##k, s, n }
#define LAYOUT(n, ...) { .f = { __VA_ARGS__ }, .nf = n }
static struct rl_layout layouts[] = {
	LAYOUT(3, F(U32, 4, "lay0"), F(U64, 8, "seq0"), F(U32, 4, "tag0")),
	LAYOUT(4, F(U64, 8, "seq1"), F(U16, 2, "lay1"), F(CHAR, 13, "txt1"),
	       F(U8, 1, "end1")),
	LAYOUT(3, F(DLOC, 4, "str2"), F(U64, 8, "seq2"), F(U32, 4, "lay2")),
	LAYOUT(4, F(U8, 1, "lay3"), F(RLOC, 4, "str3"), F(S64, 8, "seq3"),
	       F(U16, 2, "tag3")),
	LAYOUT(3, F(CHAR, 24, "txt4"), F(U64, 8, "seq4"),
	       F(DLOC_HEX, 4, "bin4")),
	LAYOUT(1, F(U64, 8, "seq5")),
	LAYOUT(4, F(STRUCT, 12, "st6"), F(U64, 8, "seq6"),
	       F(RLOC_HEX, 4, "bin6"), F(U32, 4, "lay6")),
	/* Layout 0's field names, other sizes and order */
	LAYOUT(3, F(U32, 4, "seq0"), F(U64, 8, "lay0"), F(U32, 4, "tag0")),
	LAYOUT(2, F(U64, 8, "seq8"), F(HEX, 6, "arr8")),
};

#define RL_LAYOUTS ((int)ARRAY_SIZE(layouts))

enum rl_op {
	O_REG28, O_REG24, O_WRITE, O_WRITEV, O_UNREG, O_CLOSE, O_DEL,
	O_DYN_CREATE, O_DYN_DELETE, O_ENABLE, O_DISABLE, O_INST_ENABLE,
	O_SYNTH_BUSY, O_SNAPSHOT, O_FIELDS, O_READ_PIPE, O_READ_TRACE,
	O_READ_INST, O_READ_SNAP, O_PERF, O_RELOAD, O_NR,
};

static const char *const op_names[O_NR] = {
	"reg28", "reg24", "write", "writev", "unreg", "close", "del",
	"dyn_create", "dyn_delete", "enable", "disable", "inst_enable",
	"synth_busy", "snapshot", "fields", "read_pipe", "read_trace",
	"read_inst", "read_snap", "perf", "reload",
};

enum rl_src { S_PIPE, S_TRACE, S_INST, S_SNAP, S_FINAL, S_NR };
static const char *const src_names[S_NR] = {
	"trace_pipe", "trace", "instance trace", "snapshot", "final read",
};

struct rl_shared {
	atomic_ulong seq;
	atomic_int stop;
	atomic_int drain;	/* writers and perf let go: an unload is next */
	atomic_int unloading;	/* an unload runs: trace readers close */
	atomic_int trace_open;	/* the trace reader has a trace file open */
	atomic_int nbad;
	char bad[RL_MSGS][320];
	struct am_counter ops[O_NR];
	atomic_long lines[S_NR];	/* lines naming our events */
	atomic_long exact, exact_fields, deleted, stale, badlines, unknown;
	atomic_long samples, samples_ok, samples_bad, perf_events, perf_lost;
	atomic_long perf_raced, samples_stale, reloads, reload_refused;
	atomic_long reads_cut;	/* trace reads closed early for an unload */
	atomic_long opbad;
	atomic_int nreload_log;
	double reload_log[64][2];	/* unloaded, loaded again (boot s) */
	atomic_ullong table[RL_TABLE];	/* seq << 8 | name << 4 | layout */
};

static struct rl_shared *sh;
static const struct am_opts *opt;
static int hdr_size = 8;	/* the common fields, read from a format */
static bool have_fields_opt;

static void vbad(const char *fmt, va_list ap)
{
	int i = atomic_fetch_add(&sh->nbad, 1);

	if (i < RL_MSGS)
		vsnprintf(sh->bad[i], sizeof(sh->bad[i]), fmt, ap);
}

/* A wrong line or sample: counted by the caller */
static __printf(1, 2) void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vbad(fmt, ap);
	va_end(ap);
}

/* An operation with a result it does not allow, or a process that failed */
static __printf(1, 2) void bad_op(const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&sh->opbad, 1);
	va_start(ap, fmt);
	vbad(fmt, ap);
	va_end(ap);
}

/* Seconds since boot: what the trace's timestamps count, near enough */
static double boot_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double read_opened;	/* when the current trace read began */

static bool stopping(void)
{
	return atomic_load(&sh->stop);
}

/* Layouts: descriptors and names, from the field lists */
static void layouts_init(void)
{
	static const char *const types[] = {
		[K_U8] = "u8", [K_U16] = "u16", [K_U32] = "u32",
		[K_U64] = "u64", [K_S64] = "s64",
		[K_DLOC] = "__data_loc char[]", [K_RLOC] = "__rel_loc char[]",
		[K_DLOC_HEX] = "__data_loc u8[]",
		[K_RLOC_HEX] = "__rel_loc u8[]",
	};
	int l, i;

	for (l = 0; l < RL_LAYOUTS; l++) {
		struct rl_layout *L = &layouts[l];
		size_t d = 0, n = 0;

		L->fixed = 0;
		for (i = 0; i < L->nf; i++) {
			const struct rl_field *f = &L->f[i];
			const char *sep = i ? "; " : "";

			if (f->kind == K_CHAR)
				d += snprintf(L->desc + d, sizeof(L->desc) - d,
					      "%schar[%d] %s", sep, f->size, f->name);
			else if (f->kind == K_HEX)
				d += snprintf(L->desc + d, sizeof(L->desc) - d,
					      "%su8[%d] %s", sep, f->size, f->name);
			else if (f->kind == K_STRUCT)
				d += snprintf(L->desc + d, sizeof(L->desc) - d,
					      "%sstruct ue_rl_s %s %d", sep, f->name,
					      f->size);
			else
				d += snprintf(L->desc + d, sizeof(L->desc) - d,
					      "%s%s %s", sep, types[f->kind], f->name);
			n += snprintf(L->names + n, sizeof(L->names) - n, "%s%s",
				      i ? "," : "", f->name);
			L->fixed += f->size;
		}
	}
}

/* The values of a record: functions of (seq, name, layout, field) */
static u64 mix(u64 seq, int name, int lay, int fi)
{
	u64 x = seq * 0x9E3779B97F4A7C15ULL ^ (u64)(name + 1) << 56 ^
		     (u64)(lay + 1) << 48 ^ (u64)(fi + 1) << 40;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 29;
	x *= 0x94D049BB133111EBULL;
	return x ^ (x >> 32);
}

static bool is_seq(const struct rl_field *f)
{
	return !strncmp(f->name, "seq", 3);
}

/* An integer field's value (truncated to its size; U8 kept below 0x80) */
static u64 int_value(const struct rl_field *f, u64 seq, int name, int lay,
		     int fi)
{
	u64 v = is_seq(f) ? seq : mix(seq, name, lay, fi);

	if (f->kind == K_S64)
		return is_seq(f) ? (u64)-(long long)seq : v;
	if (f->kind == K_U8)
		return v & 0x7f;
	if (f->size < 8)
		v &= (1ULL << (f->size * 8)) - 1;
	return v;
}

/* Text of a string field, at most @max characters: "L2.123.abc..." */
static int str_value(char *out, int max, u64 seq, int name, int lay,
		     int fi)
{
	u64 h = mix(seq, name, lay, fi);
	int n = snprintf(out, max + 1, "L%d.%llu.", lay, seq), k;

	if (n > max)
		n = max;
	for (k = (int)(h % 19); k > 0 && n < max; k--, h /= 3)
		out[n++] = 'a' + (int)(h % 26);
	out[n] = '\0';
	return n;
}

/* Bytes of an array field, @len of them */
static int bytes_value(unsigned char *out, int len, u64 seq, int name,
		       int lay, int fi)
{
	u64 h = mix(seq, name, lay, fi);
	int i;

	if (len < 0)	/* dynamic: 0 to 20 bytes */
		len = (int)(h % 21);
	for (i = 0; i < len; i++) {
		out[i] = (unsigned char)(h >> ((i % 8) * 8)) ^ (unsigned char)i;
		if (i % 8 == 7)
			h = mix(h, name, lay, fi + i);
	}
	return len;
}

/*
 * The payload of record @seq (after the write index): fixed fields in
 * order, then the data of the dynamic ones. Its length.
 */
static int rl_payload(unsigned char *p, u64 seq, int name, int lay)
{
	const struct rl_layout *L = &layouts[lay];
	int i, off = 0, dyn = L->fixed, len;
	char s[64];

	for (i = 0; i < L->nf; i++) {
		const struct rl_field *f = &L->f[i];
		u64 v;
		u32 loc;

		switch (f->kind) {
		case K_U8: case K_U16: case K_U32: case K_U64: case K_S64:
			v = int_value(f, seq, name, lay, i);
			memcpy(p + off, &v, f->size);	/* little endian */
			break;
		case K_CHAR:
			memset(p + off, 0, f->size);
			len = str_value(s, f->size < 40 ? f->size : 40, seq,
					name, lay, i);
			memcpy(p + off, s, len);
			break;
		case K_HEX: case K_STRUCT:
			bytes_value(p + off, f->size, seq, name, lay, i);
			break;
		case K_DLOC: case K_RLOC:
			len = str_value(s, 40, seq, name, lay, i) + 1;
			memcpy(p + dyn, s, len);
			goto loc;
		case K_DLOC_HEX: case K_RLOC_HEX:
			len = bytes_value(p + dyn, -1, seq, name, lay, i);
loc:
			if (f->kind == K_DLOC || f->kind == K_DLOC_HEX)
				loc = (u32)len << 16 | (hdr_size + dyn);
			else
				loc = (u32)len << 16 | (dyn - off - 4);
			memcpy(p + off, &loc, 4);
			dyn += len;
			break;
		}
		off += f->size;
	}
	return dyn;
}

static int hex_text(char *out, const unsigned char *b, int len, char sep)
{
	int n = 0, i;

	for (i = 0; i < len; i++) {
		if (i)
			out[n++] = sep;
		n += sprintf(out + n, "%02x", b[i]);
	}
	out[n] = '\0';
	return n;
}

/*
 * The text the trace shows after "NAME:" for record @seq: as the module
 * prints it (@core false), or as 6.12's "fields" option makes the core
 * print it (print_event_fields()).
 */
static void rl_text(char *out, u64 seq, int name, int lay, bool core)
{
	const struct rl_layout *L = &layouts[lay];
	unsigned char rec[RL_MAX_REC];
	int i, n = 0, off = 0;

	rl_payload(rec, seq, name, lay);
	for (i = 0; i < L->nf; i++) {
		const struct rl_field *f = &L->f[i];
		const unsigned char *pos = rec + off;
		u32 loc, lo, ll;
		u64 v = 0;

		n += sprintf(out + n, " %s=", f->name);
		off += f->size;
		switch (f->kind) {
		case K_U8: case K_U16: case K_U32: case K_U64: case K_S64:
			memcpy(&v, pos, f->size);
			if (!core) {
				n += sprintf(out + n, f->kind == K_S64 ? "%lld" :
					     "%llu", v);
			} else if (f->size == 1) {
				if (v >= 0x20 && v < 0x7f)
					n += sprintf(out + n, "'%c'", (int)v);
				n += sprintf(out + n, "(%d)", (int)v);
			} else if (f->size == 2) {
				n += sprintf(out + n, "0x%x (%d)", (unsigned int)v,
					     (int)v);
			} else if (f->size == 4) {
				n += sprintf(out + n, "0x%x (%d)", (u32)v,
					     (int32_t)v);
			} else {
				n += sprintf(out + n, "0x%llx (%lld)",
					     v, (long long)v);
			}
			break;
		case K_CHAR:
			n += sprintf(out + n, "%.*s", f->size, (const char *)pos);
			break;
		case K_HEX: case K_STRUCT:
			if (core)
				n += sprintf(out + n, "<INVALID-SIZE>");
			else
				n += hex_text(out + n, pos, f->size, ' ');
			break;
		case K_DLOC: case K_RLOC: case K_DLOC_HEX: case K_RLOC_HEX:
			memcpy(&loc, pos, 4);
			lo = loc & 0xffff;
			ll = loc >> 16;
			if (f->kind == K_DLOC || f->kind == K_DLOC_HEX)
				lo -= hdr_size;
			else
				lo += off;
			if (f->kind == K_DLOC || f->kind == K_RLOC)
				n += sprintf(out + n, "%.*s", (int)ll,
					     (const char *)rec + lo);
			else
				n += hex_text(out + n, rec + lo, ll,
					      core ? ',' : ' ');
			break;
		}
	}
	out[n] = '\0';
}

/* The table: what was written as @seq */
static void table_put(u64 seq, int name, int lay)
{
	atomic_store_explicit(&sh->table[seq & (RL_TABLE - 1)],
			      seq << 8 | name << 4 | lay, memory_order_release);
}

/* 1: found (name, layout); 0: slot reused since; -1: never written */
static int table_get(u64 seq, int *name, int *lay)
{
	unsigned long long e;

	if (!seq || seq > atomic_load(&sh->seq))
		return -1;
	e = atomic_load_explicit(&sh->table[seq & (RL_TABLE - 1)],
				 memory_order_acquire);
	if (e >> 8 != seq)
		return 0;
	*name = (e >> 4) & 0xf;
	*lay = e & 0xf;
	return 1;
}

/* "0x7b (123)", "-123", "123": the seq a line shows */
static bool parse_seq(const char *p, u64 *seq)
{
	const char *q;
	char *end;
	long long v;

	if (!strncmp(p, "0x", 2)) {
		q = strchr(p, '(');
		if (!q)
			return false;
		p = q + 1;
	}
	errno = 0;
	v = strtoll(p, &end, 10);
	if (errno || end == p)
		return false;
	*seq = v < 0 ? (u64)-v : (u64)v;
	return true;
}

/*
 * Checks one line of trace output that may name our events. Returns
 * false for a bad one (already reported).
 */
static bool check_line(const char *line, enum rl_src src)
{
	char want[RL_LINE], *colon;
	const char *ev = strstr(line, ": " RL_PFX), *rest, *p;
	int name, lay, got, r;
	u64 seq;

	if (!ev) {
		if (strstr(line, RL_PFX) || strstr(line, "Unknown type")) {
			atomic_fetch_add(&sh->badlines, 1);
			if (strstr(line, "Unknown type"))
				atomic_fetch_add(&sh->unknown, 1);
			bad("%s (opened %.3f, now %.3f): line of a freed or garbled event: %.160s",
			    src_names[src], read_opened, boot_s(), line);
			return false;
		}
		return true;
	}
	atomic_fetch_add(&sh->lines[src], 1);
	ev += 2;
	colon = strchr(ev, ':');
	if (!colon || !isdigit((unsigned char)ev[strlen(RL_PFX)]))
		goto garbled;
	got = ev[strlen(RL_PFX)] - '0';
	p = ev + strlen(RL_PFX) + 1;
	if (p != colon && *p != '.')
		goto garbled;
	rest = colon + 1;
	if (!strcmp(rest, " (deleted event)") || !strcmp(rest, "No fields found")) {
		atomic_fetch_add(&sh->deleted, 1);
		return true;
	}
	p = strstr(rest, " seq");
	if (!p)
		goto garbled;
	p = strchr(p, '=');
	if (!p || !parse_seq(p + 1, &seq))
		goto garbled;
	r = table_get(seq, &name, &lay);
	if (r == 0) {
		atomic_fetch_add(&sh->stale, 1);
		return true;
	}
	if (r < 0 || name != got || lay >= RL_LAYOUTS)
		goto mismatch;
	rl_text(want, seq, name, lay, false);
	if (!strcmp(rest, want)) {
		atomic_fetch_add(&sh->exact, 1);
		return true;
	}
	if (have_fields_opt) {
		rl_text(want, seq, name, lay, true);
		if (!strcmp(rest, want)) {
			atomic_fetch_add(&sh->exact_fields, 1);
			return true;
		}
	}
mismatch:
	atomic_fetch_add(&sh->badlines, 1);
	if (r > 0 && lay < RL_LAYOUTS) {
		rl_text(want, seq, name, lay, false);
		bad("%s: %.140s | want %s%d:%.100s (layout %d)", src_names[src], ev,
		    RL_PFX, name, want, lay);
	} else {
		bad("%s: seq %llu was never written: %.200s",
		    src_names[src], seq, ev);
	}
	return false;
garbled:
	atomic_fetch_add(&sh->badlines, 1);
	bad("%s: garbled line: %.200s", src_names[src], ev);
	return false;
}

/* Line splitter for a stream of trace text */
struct lines {
	char buf[RL_LINE * 2];
	size_t len;
};

static void lines_feed(struct lines *l, const char *data, size_t n,
		       enum rl_src src)
{
	size_t i;

	while (n) {
		size_t take = sizeof(l->buf) - 1 - l->len;
		char *nl, *start;

		if (take > n)
			take = n;
		memcpy(l->buf + l->len, data, take);
		l->len += take;
		data += take;
		n -= take;
		l->buf[l->len] = '\0';
		start = l->buf;
		while ((nl = memchr(start, '\n', l->buf + l->len - start))) {
			*nl = '\0';
			if (*start != '#')
				check_line(start, src);
			start = nl + 1;
		}
		i = l->buf + l->len - start;
		if (i == sizeof(l->buf) - 1) {	/* a line too long */
			atomic_fetch_add(&sh->badlines, 1);
			bad("%s: line longer than %zu bytes: %.100s",
			    src_names[src], i, l->buf);
			i = 0;
		}
		memmove(l->buf, start, i);
		l->len = i;
	}
}

/* Reads a trace file to its end, fast or in small slow pieces */
static int read_trace(const char *path, enum rl_src src, unsigned long long *s)
{
	static struct lines l;
	char buf[8192];
	/* Slow: small reads spread over up to a second (tracing goes on) */
	long slow_end = ue_xs_rn(s, 4) ? 0 : ue_now_ms() + ue_xs_rn(s, 1000);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	read_opened = boot_s();
	if (fd < 0)
		return -errno;
	l.len = 0;
	while ((n = read(fd, buf, slow_end ? 512 : sizeof(buf))) > 0) {
		lines_feed(&l, buf, n, src);
		if (slow_end && ue_now_ms() < slow_end)
			usleep(ue_xs_rn(s, 20000));
		else
			slow_end = 0;
		if (stopping() && src != S_FINAL)
			break;
		if (src != S_FINAL && atomic_load(&sh->unloading)) {
			atomic_fetch_add(&sh->reads_cut, 1);
			break;
		}
	}
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * The one window the trace, instance and snapshot readers stay out of: an
 * open trace file across an unload of the module. A trace file's iterator
 * keeps the record it will print next (a copy, in the ring buffer
 * iterator) from one read() to the next; the unload resets the buffers
 * its deleted events wrote to and then frees their type ids, and the reset
 * does not reach that copy. After the reload, the next read prints it
 * through whatever event took its id: another event's fields on 6.12
 * (lowest free id), "Unknown type N" on 6.1. The core does the same with
 * its own dynamic events: a kprobe event deleted under an open trace or
 * snapshot reader, its id taken by a new kprobe or synthetic event, and
 * the reader prints the deleted event's record as the new one's
 * (tests/race/stale_reader.py, tests/race/README: measured on 6.12.117 and 6.1.0-56).
 * trace_pipe keeps only text it formatted before (measured the same way:
 * nothing printed after the deletion), and perf lets go before unloads
 * (drain), so they stay as they are. Deletions without an unload need
 * nothing: the module keeps deleted events' ids until the unload, and
 * their records print as "(deleted event)", which the check accepts.
 *
 * So the coordinator raises "unloading" and waits for the reader to close
 * its file (it looks between read() calls) before prepare_unload and
 * rmmod, and the reader opens no trace file until the unload returned
 * (loaded again or not: a file opened after the reset holds nothing of
 * the freed ids). Both flags are sequentially consistent: either the
 * reader sees "unloading" after raising "trace_open", or the coordinator
 * sees "trace_open".
 */
static bool trace_open_begin(void)
{
	atomic_store(&sh->trace_open, 1);
	if (!atomic_load(&sh->unloading))
		return true;
	atomic_store(&sh->trace_open, 0);
	return false;
}

static void trace_open_end(void)
{
	atomic_store(&sh->trace_open, 0);
}

static int unload_readers_closed(void)
{
	long deadline = ue_now_ms() + 10000;
	int ret;

	atomic_store(&sh->unloading, 1);
	while (atomic_load(&sh->trace_open) && ue_now_ms() < deadline)
		usleep(1000);
	if (atomic_load(&sh->trace_open))
		bad_op("the trace reader kept its file open 10 s into an unload");
	ret = am_mod_unload();
	atomic_store(&sh->unloading, 0);
	return ret;
}

/* Writer threads */

struct slot {
	int fd;			/* -1: free */
	int idx;		/* write index */
	int name, lay;
	bool word;		/* 28-byte registration on this slot's word */
};

struct writer {
	pthread_t t;
	unsigned long long s;
	int id;
	u32 *words;	/* RL_SLOTS enable words of its own */
	struct slot slot[RL_SLOTS];
};

static int reg28(struct writer *w, int k, int name, int lay, __u16 flags)
{
	char desc[256];
	int idx = -1, ret;

	snprintf(desc, sizeof(desc), RL_PFX "%d %s", name, layouts[lay].desc);
	ret = ue_wreg(w->slot[k].fd, desc, &w->words[k], 4, 0, flags, &idx);
	return ret ?: idx;
}

static int reg24(struct writer *w, int k, int name, int lay)
{
	char desc[256];
	int idx = -1, ret;

	snprintf(desc, sizeof(desc), RL_PFX "%d %s", name, layouts[lay].desc);
	ret = ue_reg(w->slot[k].fd, desc, NULL, &idx);
	return ret ?: idx;
}

static int unreg(struct writer *w, int k)
{
	w->slot[k].word = false;
	return ue_wunreg(w->slot[k].fd, &w->words[k], 0);
}

static void slot_close(struct writer *w, int k)
{
	if (w->slot[k].fd < 0)
		return;
	if (w->slot[k].word)
		am_count(&sh->ops[O_UNREG], unreg(w, k));
	am_count(&sh->ops[O_CLOSE], close(w->slot[k].fd) ? -errno : 0);
	w->slot[k].fd = -1;
}

static int delete_name(int name)
{
	char n[32];
	int fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	snprintf(n, sizeof(n), RL_PFX "%d", name);
	ret = ioctl(fd, DIAG_IOCSDEL, n) ? -errno : 0;
	close(fd);
	if (ret && ret != -EBUSY && ret != -ENOENT)
		bad_op("DIAG_IOCSDEL %s: %s", n, strerror(-ret));
	return ret;
}

static void do_register(struct writer *w, int k)
{
	int name = ue_xs_rn(&w->s, RL_NAMES), lay = ue_xs_rn(&w->s, RL_LAYOUTS), idx;
	bool abi28 = ue_xs_rn(&w->s, 4) != 0;
	__u16 flags = 0;

	slot_close(w, k);
	w->slot[k].fd = open(UE_DATA_FILE, O_RDWR | O_CLOEXEC);
	if (w->slot[k].fd < 0) {
		am_count(&sh->ops[O_REG28], -errno);
		return;
	}
	if (abi28) {
		if (!ue_xs_rn(&w->s, 4))
			flags |= USER_EVENT_REG_PERSIST;
		if (!am_excluded(opt, "multi") && !ue_xs_rn(&w->s, 3))
			flags |= USER_EVENT_REG_MULTI_FORMAT;
		idx = am_count(&sh->ops[O_REG28], reg28(w, k, name, lay, flags));
	} else {
		idx = am_count(&sh->ops[O_REG24], reg24(w, k, name, lay));
	}
	if (idx < 0) {
		/* Another layout holds the name: clear the way now and then */
		if (idx == -EADDRINUSE && !ue_xs_rn(&w->s, 2))
			am_count(&sh->ops[O_DEL], delete_name(name));
		close(w->slot[k].fd);
		w->slot[k].fd = -1;
		return;
	}
	w->slot[k].idx = idx;
	w->slot[k].name = name;
	w->slot[k].lay = lay;
	w->slot[k].word = abi28;
}

static void do_writes(struct writer *w, int k, bool vec)
{
	unsigned char rec[4 + RL_MAX_REC];
	struct slot *sl = &w->slot[k];
	int i, n = 1 + ue_xs_rn(&w->s, 16), len, cut;
	struct iovec iov[3];
	ssize_t ret;

	for (i = 0; i < n && !stopping(); i++) {
		u64 seq = atomic_fetch_add(&sh->seq, 1) + 1;

		table_put(seq, sl->name, sl->lay);
		memcpy(rec, &sl->idx, 4);
		len = 4 + rl_payload(rec + 4, seq, sl->name, sl->lay);
		if (!vec) {
			ret = write(sl->fd, rec, len);
		} else {
			cut = 4 + ue_xs_rn(&w->s, len - 3);
			iov[0].iov_base = rec;
			iov[0].iov_len = 4;
			iov[1].iov_base = rec + 4;
			iov[1].iov_len = cut - 4;
			iov[2].iov_base = rec + cut;
			iov[2].iov_len = len - cut;
			ret = writev(sl->fd, iov, 3);
		}
		am_count(&sh->ops[vec ? O_WRITEV : O_WRITE], ret < 0 ? -errno : 0);
		/*
		 * A live registration and a whole valid record: written, or
		 * EBADF when nothing listens (as upstream)
		 */
		if (ret != len && !(ret < 0 && errno == EBADF)) {
			bad_op("write of %d bytes to %s%d (layout %d): %zd (%s)",
			       len, RL_PFX, sl->name, sl->lay, ret,
			    ret < 0 ? strerror(errno) : "short");
		}
	}
}

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	char line[256];
	int k, r;

	for (k = 0; k < RL_SLOTS; k++)
		w->slot[k].fd = -1;
	while (!stopping() && !atomic_load(&sh->drain)) {
		k = ue_xs_rn(&w->s, RL_SLOTS);
		r = ue_xs_rn(&w->s, 100);
		if (w->slot[k].fd < 0 || r < 12) {
			do_register(w, k);
		} else if (r < 70) {
			do_writes(w, k, r >= 55);
			/* Short-lived events: gone right after their records */
			if (!ue_xs_rn(&w->s, 3))
				slot_close(w, k);
		} else if (r < 78) {
			if (w->slot[k].word)
				am_count(&sh->ops[O_UNREG], unreg(w, k));
		} else if (r < 88) {
			slot_close(w, k);
		} else if (r < 94) {
			am_count(&sh->ops[O_DEL], delete_name(ue_xs_rn(&w->s, RL_NAMES)));
		} else if (r < 97) {
			int lay = ue_xs_rn(&w->s, RL_LAYOUTS);

			snprintf(line, sizeof(line), "u:" RL_PFX "%d %s\n",
				 ue_xs_rn(&w->s, RL_NAMES), layouts[lay].desc);
			am_count(&sh->ops[O_DYN_CREATE], am_write_str(UE_DYN_FILE, line));
		} else {
			snprintf(line, sizeof(line), "!u:" RL_PFX "%d\n",
				 ue_xs_rn(&w->s, RL_NAMES));
			am_count(&sh->ops[O_DYN_DELETE], am_write_str(UE_DYN_FILE, line));
		}
	}
	for (k = 0; k < RL_SLOTS; k++)
		slot_close(w, k);
	return NULL;
}

/* A writer process: exits when a drain begins (its enablers pin the module) */
static void writer_process(int p, int gen)
{
	struct writer w[16];
	u32 *words;
	int i, n = opt->nthreads < 16 ? opt->nthreads : 16;

	words = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (words == MAP_FAILED)
		_exit(3);
	for (i = 0; i < n; i++) {
		w[i].id = p * 100 + i;
		w[i].s = (opt->seed ^ (0x9E3779B97F4A7C15ULL * (w[i].id + 1)) ^
			  (0xC2B2AE3D27D4EB4FULL * (gen + 1))) | 1;
		w[i].words = words + i * RL_SLOTS;
		pthread_create(&w[i].t, NULL, writer_thread, &w[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	_exit(0);
}

/* Administrator: enables, disables, snapshots, options, synthetic event */

static void set_enable(const char *sys_dir, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/enable", sys_dir);
	am_write_str(path, val);
}

static void admin_process(void)
{
	unsigned long long s = opt->seed ^ 0xADADADADULL;
	bool inst = !am_excluded(opt, "inst");
	bool synth = !am_excluded(opt, "synth") &&
		     !access(UE_TRACEFS "/synthetic_events", F_OK);
	bool snap = !am_excluded(opt, "snapshot") &&
		    !access(UE_TRACEFS "/snapshot", F_OK);
	long next_synth = 0, next_snap = 0, next_fields = 0;
	char path[256];
	int r, ret;

	s |= 1;
	while (!stopping()) {
		long now = ue_now_ms();

		r = ue_xs_rn(&s, 100);
		if (atomic_load(&sh->drain)) {
			usleep(2000);
		} else if (r < 45) {
			/* Enabled: records go in (the system's new events too) */
			ret = am_write_str(UE_TRACEFS "/events/" USER_EVENTS_SYSTEM
					   "/enable", "1");
			am_count(&sh->ops[O_ENABLE], ret);
			if (!am_excluded(opt, "multi"))
				set_enable(UE_TRACEFS "/events/"
					   USER_EVENTS_MULTI_SYSTEM, "1");
			usleep(ue_xs_rn(&s, 3000));
		} else if (r < 55 && inst) {
			ret = am_write_str(RL_INST "/events/" USER_EVENTS_SYSTEM
					   "/enable", "1");
			am_count(&sh->ops[O_INST_ENABLE], ret);
			if (!am_excluded(opt, "multi"))
				set_enable(RL_INST "/events/" USER_EVENTS_MULTI_SYSTEM,
					   "1");
			usleep(ue_xs_rn(&s, 3000));
		} else if (r < 65) {
			snprintf(path, sizeof(path), RL_PFX "%d", ue_xs_rn(&s, RL_NAMES));
			am_count(&sh->ops[O_ENABLE],
				 am_event_enable(opt, UE_TRACEFS, USER_EVENTS_SYSTEM,
						 path, ue_xs_rn(&s, 2)));
		} else {
			/* Disabled: unused events can go */
			ret = am_write_str(UE_TRACEFS "/events/" USER_EVENTS_SYSTEM
					   "/enable", "0");
			am_count(&sh->ops[O_DISABLE], ret);
			set_enable(UE_TRACEFS "/events/" USER_EVENTS_MULTI_SYSTEM, "0");
			if (inst) {
				set_enable(RL_INST "/events/" USER_EVENTS_SYSTEM, "0");
				set_enable(RL_INST "/events/" USER_EVENTS_MULTI_SYSTEM,
					   "0");
			}
			usleep(ue_xs_rn(&s, 4000));
		}
		if (synth && now >= next_synth) {
			/*
			 * The core refuses to delete an enabled synthetic
			 * event (EBUSY), as an administrator may try to
			 */
			am_write_str(UE_TRACEFS "/synthetic_events",
				     "ue_rl_syn u32 x\n");
			set_enable(UE_TRACEFS "/events/synthetic/ue_rl_syn", "1");
			ret = am_write_str(UE_TRACEFS "/synthetic_events",
					   "!ue_rl_syn\n");
			am_count(&sh->ops[O_SYNTH_BUSY], ret);
			set_enable(UE_TRACEFS "/events/synthetic/ue_rl_syn", "0");
			am_write_str(UE_TRACEFS "/synthetic_events", "!ue_rl_syn\n");
			next_synth = now + 200 + ue_xs_rn(&s, 2000);
		}
		if (snap && now >= next_snap) {
			am_count(&sh->ops[O_SNAPSHOT],
				 am_write_str(UE_TRACEFS "/snapshot",
					      ue_xs_rn(&s, 8) ? "1" : "0"));
			next_snap = now + 100 + ue_xs_rn(&s, 1000);
		}
		if (have_fields_opt && now >= next_fields) {
			am_count(&sh->ops[O_FIELDS],
				 am_write_str(UE_TRACEFS "/options/fields",
					      ue_xs_rn(&s, 3) ? "0" : "1"));
			next_fields = now + 50 + ue_xs_rn(&s, 500);
		}
	}
	_exit(0);
}

/* Readers */

static void pipe_reader_process(void)
{
	static struct lines l;
	char buf[16384];
	int fd = open(UE_TRACEFS "/trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		bad_op("trace_pipe: %s", strerror(errno));
		_exit(1);
	}
	while (!stopping()) {
		n = read(fd, buf, sizeof(buf));
		am_count(&sh->ops[O_READ_PIPE], n < 0 && errno != EAGAIN ? -errno : 0);
		if (n > 0)
			lines_feed(&l, buf, n, S_PIPE);
		else
			usleep(5000);
	}
	close(fd);
	_exit(0);
}

static void trace_reader_process(void)
{
	unsigned long long s = opt->seed ^ 0x7777ULL;
	bool inst = !am_excluded(opt, "inst");
	bool snap = !am_excluded(opt, "snapshot") &&
		    !access(UE_TRACEFS "/snapshot", F_OK);
	int r;

	s |= 1;
	while (!stopping()) {
		if (!trace_open_begin()) {	/* an unload: see there */
			usleep(5000);
			continue;
		}
		r = ue_xs_rn(&s, 10);
		if (r < 3)
			am_count(&sh->ops[O_READ_TRACE],
				 read_trace(UE_TRACEFS "/trace", S_TRACE, &s));
		else if (r < 8 && inst)
			am_count(&sh->ops[O_READ_INST],
				 read_trace(RL_INST "/trace", S_INST, &s));
		else if (snap)
			am_count(&sh->ops[O_READ_SNAP],
				 read_trace(UE_TRACEFS "/snapshot", S_SNAP, &s));
		trace_open_end();
		usleep(20000 + ue_xs_rn(&s, 200000));
	}
	_exit(0);
}

/* Perf: the layout of the event an id belongs to, from its format */
static int format_layout(const char *dir, long id)
{
	char path[600], buf[8192], names[160], *p, *semi, *sp;
	size_t n = 0;
	int l;
	long fid;

	snprintf(path, sizeof(path), "%s/format", dir);
	if (ue_read_upto(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nID: ");
	if (!p || sscanf(p + 5, "%ld", &fid) != 1 || fid != id)
		return -1;
	names[0] = '\0';
	for (p = buf; (p = strstr(p, "field:")); p = semi + 1) {
		semi = strchr(p, ';');
		if (!semi)
			return -1;
		*semi = '\0';
		sp = strrchr(p, ' ');
		sp = sp ? sp + 1 : p + 6;
		if (strchr(sp, '['))
			*strchr(sp, '[') = '\0';
		if (!strncmp(sp, "common_", 7))
			continue;
		n += snprintf(names + n, sizeof(names) - n, "%s%s", n ? "," : "", sp);
		if (n >= sizeof(names))
			return -1;
	}
	for (l = 0; l < RL_LAYOUTS; l++)
		if (!strcmp(names, layouts[l].names))
			return l;
	return -2;
}

/* The offset of the seq field in a payload of layout @lay */
static int seq_offset(int lay, int *size, bool *neg)
{
	int i, off = 0;

	for (i = 0; i < layouts[lay].nf; i++) {
		const struct rl_field *f = &layouts[lay].f[i];

		if (is_seq(f)) {
			*size = f->size;
			*neg = f->kind == K_S64;
			return off;
		}
		off += f->size;
	}
	return -1;
}

#define PERF_PAGES 8

static void perf_check_ring(void *base, long id, int name, int lay)
{
	struct perf_event_mmap_page *mp = base;
	unsigned char *data = (unsigned char *)base + 4096, rec[RL_MAX_REC];
	u64 head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	u64 tail = mp->data_tail, size = PERF_PAGES * 4096UL;
	unsigned char ev[RL_MAX_REC + 64];
	int soff, ssize = 0, want, r = 0, wn = 0, wl = 0;
	bool neg = false;

	soff = seq_offset(lay, &ssize, &neg);
	while (tail < head) {
		struct perf_event_header h;
		u32 raw;
		u64 seq = 0;
		size_t i;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || h.size > sizeof(ev))
			break;
		for (i = 0; i < h.size; i++)
			ev[i] = data[(tail + i) % size];
		tail += h.size;
		if (h.type == PERF_RECORD_LOST) {
			atomic_fetch_add(&sh->perf_lost, 1);
			continue;
		}
		if (h.type != PERF_RECORD_SAMPLE)
			continue;
		atomic_fetch_add(&sh->samples, 1);
		memcpy(&raw, ev + sizeof(h), 4);
		if (raw < (u32)hdr_size + 2 || raw + 4 + sizeof(h) > h.size) {
			bad("perf %s%d: sample of %u bytes", RL_PFX, name, raw);
			atomic_fetch_add(&sh->samples_bad, 1);
			continue;
		}
		{
			const unsigned char *e = ev + sizeof(h) + 4;
			u16 type;

			memcpy(&type, e, 2);
			if (type != id) {
				bad("perf %s%d (id %ld): a sample of type %u",
				    RL_PFX, name, id, type);
				atomic_fetch_add(&sh->samples_bad, 1);
				continue;
			}
			if (soff < 0 || hdr_size + soff + ssize > (int)raw)
				goto wrong;
			memcpy(&seq, e + hdr_size + soff, ssize);
			if (neg)
				seq = (u64)-(long long)seq;
			r = table_get(seq, &wn, &wl);
			if (r == 0) {
				atomic_fetch_add(&sh->samples_stale, 1);
				continue;
			}
			if (r < 0 || wn != name || wl != lay)
				goto wrong;
			want = rl_payload(rec, seq, name, lay);
			if (hdr_size + want > (int)raw ||
			    memcmp(e + hdr_size, rec, want))
				goto wrong;
			atomic_fetch_add(&sh->samples_ok, 1);
			continue;
wrong:
			atomic_fetch_add(&sh->samples_bad, 1);
			bad("perf %s%d (id %ld, layout %d): seq %llu (of %s%d, layout %d) differs",
			    RL_PFX, name, id, lay, seq, RL_PFX, r > 0 ? wn : -1,
			    r > 0 ? wl : -1);
		}
	}
}

/* One perf session: an event of ours, one perf event per CPU, a while */
static int perf_session(unsigned long long *s)
{
	char dir[512], path[600], buf[64];
	int fds[8], ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, n = 0, lay, name;
	void *rings[8];
	long id;

	if (ncpu > 8)
		ncpu = 8;
	name = ue_xs_rn(s, RL_NAMES);
	snprintf(dir, sizeof(dir), UE_TRACEFS "/events/" USER_EVENTS_SYSTEM
		 "/" RL_PFX "%d", name);
	if (!am_excluded(opt, "multi") && ue_xs_rn(s, 2)) {
		/* A multi-format event of that name, if there is one */
		DIR *d = opendir(UE_TRACEFS "/events/" USER_EVENTS_MULTI_SYSTEM);
		struct dirent *e;
		char pfx[32];

		snprintf(pfx, sizeof(pfx), RL_PFX "%d.", name);
		while (d && (e = readdir(d)))
			if (!strncmp(e->d_name, pfx, strlen(pfx)) && ue_xs_rn(s, 2)) {
				snprintf(dir, sizeof(dir), UE_TRACEFS "/events/"
					 USER_EVENTS_MULTI_SYSTEM "/%s", e->d_name);
				break;
			}
		if (d)
			closedir(d);
	}
	snprintf(path, sizeof(path), "%s/id", dir);
	if (ue_read_upto(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	id = atol(buf);
	for (i = 0; i < ncpu; i++) {
		fds[n] = ue_perf_open_id(id, PERF_SAMPLE_RAW, -1, i);
		if (fds[n] < 0)
			continue;
		rings[n] = mmap(NULL, (PERF_PAGES + 1) * 4096UL,
				PROT_READ | PROT_WRITE, MAP_SHARED, fds[n], 0);
		if (rings[n] == MAP_FAILED) {
			close(fds[n]);
			continue;
		}
		n++;
	}
	if (!n)
		return -errno;
	/* Opened on an id: which event holds it now (perf pins that one) */
	lay = format_layout(dir, id);
	if (lay == -2)
		bad_op("perf: %s has a layout of no writer", dir);
	if (lay < 0)
		atomic_fetch_add(&sh->perf_raced, 1);
	else
		atomic_fetch_add(&sh->perf_events, 1);
	usleep(10000 + ue_xs_rn(s, 100000));
	for (i = 0; i < n; i++) {
		ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);
		if (lay >= 0)
			perf_check_ring(rings[i], id, name, lay);
		munmap(rings[i], (PERF_PAGES + 1) * 4096UL);
		close(fds[i]);
	}
	return 0;
}

static void perf_reader_process(void)
{
	unsigned long long s = opt->seed ^ 0x9E9EULL;

	s |= 1;
	while (!stopping()) {
		if (atomic_load(&sh->drain)) {
			usleep(5000);
			continue;
		}
		am_count(&sh->ops[O_PERF], perf_session(&s));
		usleep(ue_xs_rn(&s, 50000));
	}
	_exit(0);
}

/* Coordinator */

static void read_common_header(void)
{
	char buf[4096], *p;

	am_write_str(UE_DYN_FILE, "u:" RL_PFX "_probe u32 x\n");
	if (ue_read_upto(UE_TRACEFS "/events/" USER_EVENTS_SYSTEM "/" RL_PFX
			"_probe/format", buf, sizeof(buf)) > 0) {
		p = strstr(buf, "field:u32 x;");
		p = p ? strstr(p, "offset:") : NULL;
		if (p)
			hdr_size = atoi(p + 7);
	}
	am_write_str(UE_DYN_FILE, "!u:" RL_PFX "_probe\n");
}

static pid_t spawn(void (*fn)(void))
{
	pid_t pid = fork();

	if (!pid)
		fn();
	return pid;
}

/*
 * Between phases (-m): the writers exit (their address spaces pin the
 * module), the events are deleted and the module unloaded and loaded
 * again while the readers and the administrator go on.
 */
static void disable_all(void)
{
	set_enable(UE_TRACEFS "/events/" USER_EVENTS_SYSTEM, "0");
	set_enable(UE_TRACEFS "/events/" USER_EVENTS_MULTI_SYSTEM, "0");
	set_enable(RL_INST "/events/" USER_EVENTS_SYSTEM, "0");
	set_enable(RL_INST "/events/" USER_EVENTS_MULTI_SYSTEM, "0");
}

static void reload(pid_t *writers, unsigned long long *s, int gen)
{
	long deadline;
	int i, st, left, ret = -EBUSY;

	atomic_store(&sh->drain, 1);
	for (i = 0; i < opt->nprocs; i++)
		if (writers[i] > 0)
			waitpid(writers[i], &st, 0);
	deadline = ue_now_ms() + 5000;
	do {
		disable_all();
		left = am_delete_names(RL_PFX, RL_NAMES);
		if (!left)
			ret = unload_readers_closed();
		if (!left && !ret)
			break;
		usleep(50000);
	} while (ue_now_ms() < deadline);
	am_count(&sh->ops[O_RELOAD], ret);
	if (!ret) {
		int k = atomic_fetch_add(&sh->nreload_log, 1);

		if (k < 64)
			sh->reload_log[k][0] = boot_s();
		atomic_fetch_add(&sh->reloads, 1);
		usleep(ue_xs_rn(s, 300000));
		ret = am_mod_load(opt->module_ko);
		if (ret && ret != -EEXIST)
			bad_op("insmod: %s", strerror(-ret));
		if (k < 64)
			sh->reload_log[k][1] = boot_s();
	} else {
		atomic_fetch_add(&sh->reload_refused, 1);
	}
	atomic_store(&sh->drain, 0);
	for (i = 0; i < opt->nprocs; i++) {
		writers[i] = fork();
		if (!writers[i])
			writer_process(i, gen);
	}
}

int am_relayout(const struct am_opts *o)
{
	pid_t writers[64], others[4];
	unsigned long long s = o->seed ^ 0xC0C0ULL;
	long end, next_reload;
	int i, st, nothers = 0, gen = 0, left;
	bool perf = !am_excluded(o, "perf");

	opt = o;
	s |= 1;
	layouts_init();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	read_common_header();
	have_fields_opt = !am_excluded(o, "fields") &&
			  !access(UE_TRACEFS "/options/fields", F_OK);
	if (!am_excluded(o, "inst"))
		mkdir(RL_INST, 0755);
	printf("# relayout: %d layouts on %d names, common header %d bytes, parts:%s%s%s%s%s%s\n",
	       RL_LAYOUTS, RL_NAMES, hdr_size,
	       am_excluded(o, "inst") ? "" : " instance",
	       am_excluded(o, "synth") ? "" : " synth_busy",
	       am_excluded(o, "snapshot") ? "" : " snapshot",
	       have_fields_opt ? " fields" : "", perf ? " perf" : "",
	       am_excluded(o, "multi") ? "" : " multi");
	if (o->verbose)
		for (i = 0; i < RL_LAYOUTS; i++)
			printf("#   layout %d: %s\n", i, layouts[i].desc);

	end = ue_now_ms() + o->secs * 1000L;
	next_reload = ue_now_ms() + 5000 + ue_xs_rn(&s, 10000);
	for (i = 0; i < o->nprocs; i++) {
		writers[i] = fork();
		if (!writers[i])
			writer_process(i, 0);
	}
	others[nothers++] = spawn(admin_process);
	others[nothers++] = spawn(pipe_reader_process);
	others[nothers++] = spawn(trace_reader_process);
	if (perf)
		others[nothers++] = spawn(perf_reader_process);

	while (ue_now_ms() < end) {
		usleep(100000);
		if (o->module_ko && ue_now_ms() >= next_reload &&
		    ue_now_ms() + 3000 < end) {
			reload(writers, &s, ++gen);
			next_reload = ue_now_ms() + 5000 + ue_xs_rn(&s, 10000);
		}
	}
	atomic_store(&sh->stop, 1);
	for (i = 0; i < o->nprocs; i++) {
		if (waitpid(writers[i], &st, 0) != writers[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad_op("writer %d ended with status 0x%x", i, st);
	}
	for (i = 0; i < nothers; i++) {
		if (waitpid(others[i], &st, 0) != others[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad_op("reader/admin %d ended with status 0x%x", i, st);
	}

	/* Afterwards: whatever the buffers still hold */
	disable_all();
	read_trace(UE_TRACEFS "/trace", S_FINAL, &s);
	if (!am_excluded(o, "inst"))
		read_trace(RL_INST "/trace", S_FINAL, &s);
	if (!access(UE_TRACEFS "/snapshot", F_OK))
		read_trace(UE_TRACEFS "/snapshot", S_FINAL, &s);

	printf("# ue_race: %ld operations in %ds, seed %llu\n",
	       am_print_counts(op_names, sh->ops, O_NR), o->secs, o->seed);
	printf("# relayout: %lu records written; lines naming them:", atomic_load(&sh->seq));
	for (i = 0; i < S_NR; i++)
		printf(" %s %ld%s", src_names[i], atomic_load(&sh->lines[i]),
		       i + 1 < S_NR ? "," : "\n");
	printf("# relayout: %ld exact (%ld with the fields option), %ld deleted-event,",
	       atomic_load(&sh->exact) + atomic_load(&sh->exact_fields),
	       atomic_load(&sh->exact_fields), atomic_load(&sh->deleted));
	printf(" %ld stale seq, %ld bad (%ld Unknown type)\n",
	       atomic_load(&sh->stale), atomic_load(&sh->badlines),
	       atomic_load(&sh->unknown));
	printf("# relayout: perf: %ld events checked (%ld raced a deletion), %ld samples,",
	       atomic_load(&sh->perf_events), atomic_load(&sh->perf_raced),
	       atomic_load(&sh->samples));
	printf(" %ld exact, %ld stale seq, %ld bad, %ld lost records\n",
	       atomic_load(&sh->samples_ok),
	       atomic_load(&sh->samples_stale), atomic_load(&sh->samples_bad),
	       atomic_load(&sh->perf_lost));
	printf("# relayout: %ld unloads and loads between phases (%ld refused), %ld trace reads closed for an unload\n",
	       atomic_load(&sh->reloads), atomic_load(&sh->reload_refused),
	       atomic_load(&sh->reads_cut));
	for (i = 0; i < atomic_load(&sh->nbad) && i < RL_MSGS; i++)
		printf("#   %s\n", sh->bad[i]);
	if (atomic_load(&sh->badlines))
		for (i = 0; i < atomic_load(&sh->nreload_log) && i < 64; i++)
			printf("#   unloaded at %.3f, loaded at %.3f\n",
			       sh->reload_log[i][0], sh->reload_log[i][1]);

	am_tap(!atomic_load(&sh->badlines),
	       "relayout: every trace line of the fuzzer's events is its writer's record or a deleted event's (%ld bad)",
	       atomic_load(&sh->badlines));
	am_tap(!perf || (!atomic_load(&sh->samples_bad) && atomic_load(&sh->samples_ok)),
	       "relayout: every perf sample is its writer's record, on its event (%ld bad of %ld)",
	       atomic_load(&sh->samples_bad), atomic_load(&sh->samples));
	am_tap(atomic_load(&sh->exact) + atomic_load(&sh->exact_fields) > 0 &&
	       atomic_load(&sh->deleted) > 0,
	       "relayout: records were read both from live and from deleted events");
	am_tap(!atomic_load(&sh->opbad),
	       "relayout: every write, deletion and process had a result it allows (%ld not)",
	       atomic_load(&sh->opbad));

	/* Cleanup: every event can go, and the module */
	left = am_delete_names(RL_PFX, RL_NAMES);
	for (i = 0; i < 100 && left; i++) {
		usleep(50000);
		left = am_delete_names(RL_PFX, RL_NAMES);
	}
	am_tap(!left, "every event deleted after the run (%d left)", left);
	if (!am_excluded(o, "inst"))
		rmdir(RL_INST);
	if (have_fields_opt)
		am_write_str(UE_TRACEFS "/options/fields", "0");
	am_write_str(UE_TRACEFS "/snapshot", "0");
	if (o->module_ko)
		am_reload_after_run(o->module_ko);
	return am_tap_summary();
}
