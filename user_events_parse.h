/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The descriptor language of user events (user_events_parse.c): what a
 * registration or a "u:" command names, parsed into a field list, and the
 * texts and tables the tracing core is given for it.
 */
#ifndef _USER_EVENTS_PARSE_H
#define _USER_EVENTS_PARSE_H

#include <linux/list.h>
#include <linux/trace_events.h>
#include <linux/types.h>

/* Longest descriptor a registration or command may pass, NUL included */
#define MAX_EVENT_DESC 512

/* Largest payload a write may carry: a record must fit a ring buffer page */
#define MAX_PAYLOAD_SIZE 3968

enum user_field_kind {
	FIELD_INTEGER,		/* u8 ... s64, int, short, char */
	FIELD_STRING,		/* char[N], unsigned char[N] */
	FIELD_ARRAY,		/* u8[N] */
	FIELD_DATA_LOC,		/* __data_loc <type>[] */
	FIELD_REL_LOC,		/* __rel_loc <type>[] */
	FIELD_STRUCT,		/* struct <tag> name <size> */
};

struct user_event_field {
	struct list_head link;
	enum user_field_kind kind;
	bool is_signed;
	bool is_char;		/* element type is char: NUL terminated */
	int offset;		/* in the record, after struct trace_entry */
	int size;
	int filter_type;
	const char *fmt;	/* printf conversion for print fmt */
	char *type;
	char *name;
};

/*
 * A descriptor once parsed (user_event_parse_desc()): what an event is
 * made of, before it becomes one.
 */
struct user_event_desc {
	char *name;
	char *args;		/* normalized field list */
	struct list_head fields;	/* struct user_event_field, in order */
	unsigned int flags;	/* FLAG_BPF_ITER */
	unsigned int min_size;	/* payload bytes the fields need */
	bool has_dyn;		/* has __data_loc/__rel_loc fields */
};

/*
 * Where the data of a __data_loc or __rel_loc field lies, from its loc
 * word: the length in the high 16 bits, the offset in the low 16. A
 * __data_loc offset counts from the start of the record (struct
 * trace_entry included), a __rel_loc one from the end of the loc word.
 * Returns the offset from the start of the record; *@size gets the length.
 */
static inline u32 user_field_loc(const struct user_event_field *field,
				 u32 loc, u32 *size)
{
	u32 off = loc & 0xffff;

	*size = loc >> 16;
	if (field->kind == FIELD_REL_LOC)
		off += field->offset + sizeof(u32);

	return off;
}

int user_event_parse_desc(char *text, struct user_event_desc *desc);
void user_event_desc_free(struct user_event_desc *desc);
void user_event_free_fields(struct list_head *fields);
bool user_event_args_match(const char *args, int argc, const char **argv);
int user_event_build_print_fmt(const struct list_head *fields, char **out);
int user_event_build_fields_array(const struct list_head *fields,
				  struct trace_event_fields **out);
void user_event_print_fields(struct trace_seq *s,
			     const struct list_head *fields,
			     const void *entry, int entry_size);

#endif /* _USER_EVENTS_PARSE_H */
