// SPDX-License-Identifier: GPL-2.0
/*
 * user_events descriptors: the grammar of "name[:FLAGS] type name; ..."
 * and what is derived from a field list (the normalized list that
 * registrations are compared by, the print fmt, the fields array of the
 * trace event class, the trace output). Pure string and list work: no
 * locks, no global state.
 */

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/trace_seq.h>

#include "include/uapi/linux/user_events.h"

#include "user_events_compat.h"
#include "user_events_parse.h"

#define MAX_NAME_LEN 255
#define MAX_FIELDS 64
#define MAX_FIELD_ARRAY_SIZE 1024
/* Characters of an array count between the brackets, as upstream allows */
#define MAX_FIELD_ARRAY_DIGITS 6
#define MAX_STRUCT_SIZE 1024

/* Descriptor grammar */

struct user_field_type {
	const char *name;
	int size;
	bool is_signed;
	const char *fmt;
};

static const struct user_field_type user_field_types[] = {
	{ "u8", 1, false, "%u" },
	{ "u16", 2, false, "%u" },
	{ "u32", 4, false, "%u" },
	{ "u64", 8, false, "%llu" },
	{ "s8", 1, true, "%hhd" },
	{ "s16", 2, true, "%hd" },
	{ "s32", 4, true, "%d" },
	{ "s64", 8, true, "%lld" },
	{ "int", 4, true, "%d" },
	{ "unsigned int", 4, false, "%u" },
	{ "short", 2, true, "%hd" },
	{ "unsigned short", 2, false, "%u" },
	{ "char", 1, true, "%hhd" },
	{ "unsigned char", 1, false, "%u" },
};

static const struct user_field_type *
user_field_type_find(const char *name, size_t len)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(user_field_types); i++)
		if (strlen(user_field_types[i].name) == len &&
		    !strncmp(user_field_types[i].name, name, len))
			return &user_field_types[i];

	return NULL;
}

/*
 * Names are ASCII [A-Za-z0-9_]: the kernel's ctype also counts Latin-1
 * letters and NBSP, which are not valid in tracefs names and printk text.
 */
static bool user_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static bool user_space_char(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\v' || c == '\f';
}

static char *user_skip_spaces(const char *s)
{
	while (user_space_char(*s))
		s++;
	return (char *)s;
}

/* Drops the white space around @s (ASCII only, as everywhere here) */
static char *user_strim(char *s)
{
	size_t len;

	s = user_skip_spaces(s);
	len = strlen(s);
	while (len && user_space_char(s[len - 1]))
		s[--len] = '\0';
	return s;
}

static bool user_name_valid(const char *name, size_t max)
{
	size_t len = strlen(name);
	size_t i;

	if (!len || len > max)
		return false;

	for (i = 0; i < len; i++)
		if (!user_name_char(name[i]))
			return false;

	return true;
}

/*
 * Names of the files the tracing core puts in a system directory
 * (events/user_events/enable, .../filter) and in events/ itself
 * (enable, header_page, header_event). An event of that name would hide
 * the system's switch or filter from the administrator (6.12), or lose
 * its own directory (6.1). Upstream accepts them; we refuse them for
 * every event, multi-format ones included, so that one rule holds
 * whatever directory the event lands in.
 */
static const char *const user_reserved_names[] = {
	"enable", "filter", "header_page", "header_event",
};

static bool user_name_reserved(const char *name)
{
	return match_string(user_reserved_names,
			    ARRAY_SIZE(user_reserved_names), name) >= 0;
}

static bool user_field_name_valid(const char *name)
{
	if (!user_name_valid(name, MAX_NAME_LEN) || isdigit(name[0]))
		return false;

	/* The common fields of every record own these names */
	return strncmp(name, "common_", 7) != 0;
}

static void user_field_free(struct user_event_field *field)
{
	kfree(field->type);
	kfree(field->name);
	kfree(field);
}

void user_event_free_fields(struct list_head *fields)
{
	struct user_event_field *field, *next;

	list_for_each_entry_safe(field, next, fields, link) {
		list_del(&field->link);
		user_field_free(field);
	}
}

/* Splits "a b  c" into at most @max words, in place */
static int split_words(char *s, char **words, int max)
{
	int n = 0;

	for (;;) {
		s = user_skip_spaces(s);
		if (!*s)
			return n;
		if (n == max)
			return -EINVAL;
		words[n++] = s;
		while (*s && !user_space_char(*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

/* "struct <tag> <name> <size>": opaque bytes, shown in hex */
static int user_field_parse_struct(struct user_event_field *field,
				   char **words, int nwords)
{
	int size;

	if (nwords != 4 || !user_name_valid(words[1], MAX_NAME_LEN) ||
	    kstrtoint(words[3], 10, &size) || size < 1 ||
	    size > MAX_STRUCT_SIZE)
		return -EINVAL;

	field->kind = FIELD_STRUCT;
	field->size = size;
	field->filter_type = FILTER_OTHER;
	field->fmt = "%s";
	field->type = kasprintf(GFP_KERNEL_ACCOUNT, "struct %s", words[1]);
	field->name = kstrdup(words[2], GFP_KERNEL_ACCOUNT);

	return field->type && field->name ? 0 : -ENOMEM;
}

/*
 * "__data_loc <type>[]" and "__rel_loc <type>[]": a u32 loc word in the
 * payload, for data of any length further on (see user_field_loc()).
 * Char elements make a NUL terminated string, u8 ones a byte array.
 */
static int user_field_parse_dyn(struct user_event_field *field,
				const char *loc,
				const struct user_field_type *base,
				const char *type, const char *bracket)
{
	if (!bracket || strcmp(bracket, "[]") || base->size != 1 ||
	    !strcmp(base->name, "s8"))
		return -EINVAL;

	field->kind = loc[2] == 'd' ? FIELD_DATA_LOC : FIELD_REL_LOC;
	field->is_char = !strcmp(base->name, "char");
	field->size = sizeof(u32);
	field->filter_type = FILTER_OTHER;
	if (field->is_char)
		field->filter_type = field->kind == FIELD_DATA_LOC ?
			FILTER_DYN_STRING : UE_FILTER_REL_STRING;
	field->fmt = "%s";
	field->type = kasprintf(GFP_KERNEL_ACCOUNT, "%s %s", loc, type);

	return field->type ? 0 : -ENOMEM;
}

/*
 * "<type>[<count>]": a fixed array of one-byte elements. Char elements
 * make a string (NUL terminated if shorter), u8 ones a byte array.
 */
static int user_field_parse_array(struct user_event_field *field,
				  const struct user_field_type *base,
				  const char *type, char *bracket)
{
	char *end = strchr(bracket, ']');
	unsigned int count;

	if (!end || end[1] || base->size != 1 || !strcmp(base->name, "s8"))
		return -EINVAL;

	/*
	 * The count in base 0, as upstream reads it: "20", "0x14" and "024"
	 * are all 20 (and "+20", as kstrtouint() allows); at most
	 * MAX_FIELD_ARRAY_DIGITS characters (upstream copies them to an
	 * 8-byte buffer with the ']'). The type keeps the text as written:
	 * "char[0x14]" and "char[20]" are different types when registrations
	 * of one name are compared, as upstream.
	 */
	if (end - bracket - 1 > MAX_FIELD_ARRAY_DIGITS)
		return -EINVAL;
	*end = '\0';
	if (kstrtouint(bracket + 1, 0, &count) || !count ||
	    count > MAX_FIELD_ARRAY_SIZE)
		return -EINVAL;
	*end = ']';

	field->is_char = !strcmp(base->name, "char") ||
			 !strcmp(base->name, "unsigned char");
	field->kind = field->is_char ? FIELD_STRING : FIELD_ARRAY;
	field->size = count;
	field->is_signed = base->is_signed;
	field->filter_type = field->is_char ? FILTER_STATIC_STRING :
					      FILTER_OTHER;
	field->fmt = "%s";
	field->type = kstrdup(type, GFP_KERNEL_ACCOUNT);

	return field->type ? 0 : -ENOMEM;
}

/* "<type>": one integer */
static int user_field_parse_integer(struct user_event_field *field,
				    const struct user_field_type *base,
				    const char *type)
{
	field->kind = FIELD_INTEGER;
	field->size = base->size;
	field->is_signed = base->is_signed;
	field->filter_type = FILTER_OTHER;
	field->fmt = base->fmt;
	field->type = kstrdup(type, GFP_KERNEL_ACCOUNT);

	return field->type ? 0 : -ENOMEM;
}

/*
 * "[__data_loc | __rel_loc] <type> <name>", where the type may be two
 * words ("unsigned int") and may end in an array suffix: sorted out here,
 * then parsed by the field kind's own function.
 */
static int user_field_parse_typed(struct user_event_field *field,
				  char **words, int nwords)
{
	const struct user_field_type *base;
	char *type, *bracket;
	unsigned int len;
	int first = 0;
	int ret;

	if (!strcmp(words[0], "__data_loc") || !strcmp(words[0], "__rel_loc"))
		first = 1;

	/* "unsigned int x", "unsigned char[8] x": two words of type */
	if (nwords - first == 3 && !strcmp(words[first], "unsigned")) {
		/* Rejoin the two words of the type with a single space */
		type = words[first] + strlen(words[first]);
		*type++ = ' ';
		memmove(type, words[first + 1], strlen(words[first + 1]) + 1);
		words[first + 1] = words[first + 2];
		nwords--;
	}
	if (nwords - first != 2)
		return -EINVAL;

	type = words[first];
	bracket = strchr(type, '[');
	len = bracket ? bracket - type : strlen(type);
	base = user_field_type_find(type, len);
	if (!base)
		return -EINVAL;

	if (first)
		ret = user_field_parse_dyn(field, words[0], base, type, bracket);
	else if (bracket)
		ret = user_field_parse_array(field, base, type, bracket);
	else
		ret = user_field_parse_integer(field, base, type);
	if (ret)
		return ret;

	field->name = kstrdup(words[first + 1], GFP_KERNEL_ACCOUNT);
	return field->name ? 0 : -ENOMEM;
}

/*
 * Appends a parsed field to @desc's fields, at the end of the payload they
 * make so far, once its name and size are checked against the others.
 */
static int user_field_add(struct user_event_desc *desc,
			  struct user_event_field *field)
{
	struct user_event_field *other;

	if (!user_field_name_valid(field->name))
		return -EINVAL;

	list_for_each_entry(other, &desc->fields, link)
		if (!strcmp(other->name, field->name))
			return -EINVAL;

	if (desc->min_size + field->size > MAX_PAYLOAD_SIZE)
		return -EINVAL;

	field->offset = sizeof(struct trace_entry) + desc->min_size;
	desc->min_size += field->size;
	if (field->kind == FIELD_DATA_LOC || field->kind == FIELD_REL_LOC)
		desc->has_dyn = true;
	list_add_tail(&field->link, &desc->fields);
	return 0;
}

/* Parses one "type name" (or "struct tag name size") entry into @desc */
static int user_event_parse_field(struct user_event_desc *desc, char *text)
{
	struct user_event_field *field;
	char *words[5];
	int nwords, ret;

	nwords = split_words(text, words, ARRAY_SIZE(words));
	if (nwords < 2)
		return -EINVAL;

	field = kzalloc(sizeof(*field), GFP_KERNEL_ACCOUNT);
	if (!field)
		return -ENOMEM;

	if (!strcmp(words[0], "struct"))
		ret = user_field_parse_struct(field, words, nwords);
	else
		ret = user_field_parse_typed(field, words, nwords);
	if (!ret)
		ret = user_field_add(desc, field);
	if (ret)
		user_field_free(field);

	return ret;
}

static int user_event_parse_flags(struct user_event_desc *desc, char *flags)
{
	char *flag;

	while ((flag = strsep(&flags, ",")) != NULL) {
		if (!strcmp(flag, "BPF_ITER"))
			desc->flags |= FLAG_BPF_ITER;
		else
			return -EINVAL;
	}

	return 0;
}

/*
 * Whether the words of a "!u:name type name; ..." command name exactly the
 * fields of normalized list @args, spacing aside.
 */
bool user_event_args_match(const char *args, int argc, const char **argv)
{
	const char *want = args;
	int i;

	/* No words: any fields match */
	if (!argc)
		return true;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];

		while (*arg) {
			want = user_skip_spaces(want);
			if (*want++ != *arg++)
				return false;
		}
	}

	return !*user_skip_spaces(want);
}

/* A bounded string builder for the generated texts */
struct user_text {
	char *buf;
	size_t size;
	size_t len;
};

static __printf(2, 3) void user_text_printf(struct user_text *t,
					     const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	if (t->len < t->size)
		t->len += vsnprintf(t->buf + t->len, t->size - t->len, fmt,
				    args);
	va_end(args);
}

static bool user_text_overflowed(struct user_text *t)
{
	return t->len >= t->size;
}

/* Builds the normalized field list used to compare registrations */
static int user_event_build_args(struct user_event_desc *desc)
{
	struct user_event_field *field;
	struct user_text t = { .size = MAX_EVENT_DESC * 2 };

	t.buf = kmalloc(t.size, GFP_KERNEL_ACCOUNT);
	if (!t.buf)
		return -ENOMEM;

	t.buf[0] = '\0';
	list_for_each_entry(field, &desc->fields, link) {
		user_text_printf(&t, "%s%s %s",
				 field->link.prev != &desc->fields ? "; " : "",
				 field->type, field->name);
		if (field->kind == FIELD_STRUCT)
			user_text_printf(&t, " %d", field->size);
	}

	if (user_text_overflowed(&t)) {
		kfree(t.buf);
		return -EINVAL;
	}
	desc->args = t.buf;
	return 0;
}

/* The print fmt argument that shows @field */
static void user_text_print_arg(struct user_text *t,
				const struct user_event_field *field)
{
	const char *name = field->name;

	switch (field->kind) {
	case FIELD_DATA_LOC:
		if (field->is_char)
			user_text_printf(t, ", __get_str(%s)", name);
		else
			user_text_printf(t, ", __print_hex(%s%s), %s%s))",
					 "__get_dynamic_array(", name,
					 "__get_dynamic_array_len(", name);
		break;
	case FIELD_REL_LOC:
		if (field->is_char)
			user_text_printf(t, ", __get_rel_str(%s)", name);
		else
			/*
			 * The length from the loc word itself: libtraceevent
			 * 1.7 (trace-cmd) crashes on
			 * __get_rel_dynamic_array_len()
			 */
			user_text_printf(t,
					 ", __print_hex(%s%s), REC->%s >> 16)",
					 "__get_rel_dynamic_array(", name,
					 name);
		break;
	case FIELD_ARRAY:
	case FIELD_STRUCT:
		user_text_printf(t, ", __print_hex(REC->%s, %d)",
				 name, field->size);
		break;
	default:
		user_text_printf(t, ", REC->%s", name);
		break;
	}
}

/* The print fmt of an event with these fields, in *@out */
int user_event_build_print_fmt(const struct list_head *fields, char **out)
{
	struct user_event_field *field;
	struct user_text t = { .size = 64 };

	list_for_each_entry(field, fields, link)
		t.size += 3 * strlen(field->name) + 96;

	t.buf = kmalloc(t.size, GFP_KERNEL_ACCOUNT);
	if (!t.buf)
		return -ENOMEM;

	user_text_printf(&t, "\"");
	list_for_each_entry(field, fields, link)
		user_text_printf(&t, "%s%s=%s",
				 field->link.prev != fields ? " " : "",
				 field->name, field->fmt);
	user_text_printf(&t, "\"");

	list_for_each_entry(field, fields, link)
		user_text_print_arg(&t, field);

	if (user_text_overflowed(&t)) {
		kfree(t.buf);
		return -EINVAL;
	}

	*out = t.buf;
	return 0;
}

/* Frees what user_event_parse_desc() allocated */
void user_event_desc_free(struct user_event_desc *desc)
{
	user_event_free_fields(&desc->fields);
	kfree(desc->args);
	kfree(desc->name);
}

/*
 * Parses a descriptor "name[:FLAG[,FLAG]] [type name[;type name]...]"
 * into @desc. @text is modified.
 */
int user_event_parse_desc(char *text, struct user_event_desc *desc)
{
	unsigned int nfields = 0;
	char *name, *flags, *args, *field;
	int ret;

	memset(desc, 0, sizeof(*desc));
	INIT_LIST_HEAD(&desc->fields);

	text = user_skip_spaces(text);
	name = text;
	args = text;
	while (*args && !user_space_char(*args))
		args++;
	if (*args)
		*args++ = '\0';

	flags = strchr(name, ':');
	if (flags)
		*flags++ = '\0';

	if (!user_name_valid(name, MAX_NAME_LEN) || user_name_reserved(name))
		return -EINVAL;

	desc->name = kstrdup(name, GFP_KERNEL_ACCOUNT);
	if (!desc->name)
		return -ENOMEM;

	if (flags) {
		ret = user_event_parse_flags(desc, flags);
		if (ret)
			goto fail;
	}

	args = user_strim(args);
	/* A trailing ';' ends the list without adding an empty field */
	while (args && *args) {
		field = strsep(&args, ";");
		if (++nfields > MAX_FIELDS) {
			ret = -EINVAL;
			goto fail;
		}
		ret = user_event_parse_field(desc, field);
		if (ret)
			goto fail;
	}

	ret = user_event_build_args(desc);
	if (ret)
		goto fail;

	return 0;

fail:
	user_event_desc_free(desc);
	return ret;
}

/* Trace output: "name: field=value ..." */

/* Bytes as "de ad be ef", like __print_hex() in the print fmt */
static void user_event_print_hex(struct trace_seq *s, const u8 *pos,
				 unsigned int len)
{
	unsigned int i, n;

	for (i = 0; i < len; i += n) {
		n = min(len - i, 64U);
		trace_seq_printf(s, "%s%*ph", i ? " " : "", n, pos + i);
	}
}

/*
 * An integer field of 1, 2, 4 or 8 bytes, zero-extended. Fields are packed
 * (a field's offset is the sum of the sizes before it), so the loads are
 * unaligned: memcpy() of a constant size, which is what get_unaligned()
 * does, without the header that moved in 6.12.
 */
static u64 user_field_unsigned(const void *pos, int size)
{
	u16 v16;
	u32 v32;
	u64 v64;

	switch (size) {
	case 1:
		return *(const u8 *)pos;
	case 2:
		memcpy(&v16, pos, sizeof(v16));
		return v16;
	case 4:
		memcpy(&v32, pos, sizeof(v32));
		return v32;
	default:
		memcpy(&v64, pos, sizeof(v64));
		return v64;
	}
}

static u32 user_field_u32(const void *pos)
{
	return user_field_unsigned(pos, sizeof(u32));
}

static s64 user_field_signed(const void *pos, int size)
{
	return sign_extend64(user_field_unsigned(pos, size), size * 8 - 1);
}

static void user_event_print_field(struct trace_seq *s,
				   struct user_event_field *field,
				   const void *entry, int entry_size)
{
	const void *pos = entry + field->offset;
	u32 loc_off, loc_size;

	trace_seq_printf(s, " %s=", field->name);

	if (field->offset + field->size > entry_size) {
		trace_seq_puts(s, "<truncated>");
		return;
	}

	switch (field->kind) {
	case FIELD_INTEGER:
		if (field->is_signed)
			trace_seq_printf(s, "%lld",
					 user_field_signed(pos, field->size));
		else
			trace_seq_printf(s, "%llu",
					 user_field_unsigned(pos, field->size));
		return;
	case FIELD_STRING:
		trace_seq_printf(s, "%.*s",
				 (int)strnlen(pos, field->size), (char *)pos);
		return;
	case FIELD_ARRAY:
	case FIELD_STRUCT:
		user_event_print_hex(s, pos, field->size);
		return;
	case FIELD_DATA_LOC:
	case FIELD_REL_LOC:
		loc_off = user_field_loc(field, user_field_u32(pos), &loc_size);
		if (loc_off + loc_size > entry_size) {
			trace_seq_puts(s, "<invalid>");
			return;
		}
		pos = entry + loc_off;
		if (field->is_char)
			trace_seq_printf(s, "%.*s",
					 (int)strnlen(pos, loc_size),
					 (char *)pos);
		else
			user_event_print_hex(s, pos, loc_size);
		return;
	}
}

/* The fields of a record of @entry_size bytes, as " name=value" each */
void user_event_print_fields(struct trace_seq *s,
			     const struct list_head *fields,
			     const void *entry, int entry_size)
{
	struct user_event_field *field;

	list_for_each_entry(field, fields, link)
		user_event_print_field(s, field, entry, entry_size);
	if (list_empty(fields))
		trace_seq_putc(s, ' ');
}

/*
 * Describes the fields to the tracing core, which defines them (packed, in
 * order, after the common fields) when the event is added.
 */
int user_event_build_fields_array(const struct list_head *fields,
				  struct trace_event_fields **out)
{
	struct trace_event_fields *array;
	struct user_event_field *field;
	int i = 0;

	list_for_each_entry(field, fields, link)
		i++;

	array = kcalloc(i + 1, sizeof(*array), GFP_KERNEL_ACCOUNT);
	if (!array)
		return -ENOMEM;

	i = 0;
	list_for_each_entry(field, fields, link)
		ue_trace_event_field_init(&array[i++], field->type, field->name,
					  field->size, field->is_signed,
					  field->filter_type,
					  field->kind == FIELD_STRING ||
					  field->kind == FIELD_ARRAY ?
					  field->size : 0);

	*out = array;
	return 0;
}
