/* How far into a tracepoint record libtraceevent reads to print it.
 *
 * Most of what libtraceevent 1.7.1 prints it checks against the record's
 * size (fields, subscripts, dynamic arrays), but __print_hex(),
 * __print_hex_str() and __print_array() read as many bytes or elements as
 * their count says, from where their field starts, and the count is the
 * record's own: "__print_hex(REC->insn, REC->len)", a kernel's, reads 4 GB
 * for a damaged len (fuzz_tracing: a stack overflow, the reads walking off
 * the copy on the stack). So before an event is printed its reach is
 * worked out here, evaluating those counts the way libtraceevent's
 * eval_num_arg() does for the shapes kernels write (numbers, fields,
 * dynamic arrays' lengths, arithmetic); the record is padded with zeros
 * that far, and not printed at all past what a record can hold or when a
 * count is of a shape not evaluated here. An event whose print format did
 * not parse is printed field by field, where a 2-byte dynamic array's
 * length is unchecked (walk_fields()).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

#include "output/script_priv.h"

/* the print arguments' trees are at most this deep (tracing_check.c
 * bounds nesting at 64 and operators at 256 per argument) */
#define MAX_DEPTH 400

struct reach {
	struct tep_event *event;
	const uint8_t *data;
	size_t size;
	size_t end; /* the furthest byte read so far */
	bool unknown; /* a count not worked out */
};

static bool read_number(struct reach *r, size_t offset, int size, unsigned long long *val)
{
	if (size <= 0 || size > 8 || offset > r->size || (size_t)size > r->size - offset)
		return false;
	*val = tep_read_number(r->event->tep, r->data + offset, size);
	return true;
}

/* A dynamic array's offset and length as libtraceevent's dynamic_offset()
 * gives them: both 0 when they leave the record, by its check in unsigned
 * int (false then), which a 2-byte field (whose length is the rest of the
 * record) passes with an offset past the record, its length wrapped
 * around. */
static bool dynamic_array(struct reach *r, const struct tep_format_field *field, unsigned *offset,
                          unsigned *len)
{
	unsigned long long val;
	unsigned o, l;

	*offset = *len = 0;
	if (field->offset < 0 || !read_number(r, (size_t)field->offset, field->size, &val))
		return false;
	o = (unsigned)(val & 0xffff);
	l = field->size == 2 ? (unsigned)r->size - o : (unsigned)((val >> 16) & 0xffff);
	if (o + l > (unsigned)r->size)
		return false;
	*offset = o;
	*len = l;
	if (field->flags & TEP_FIELD_IS_RELATIVE)
		*offset += (unsigned)(field->offset + field->size);
	return true;
}

/* The bytes of a dynamic array libtraceevent reads whole (a string, a
 * bitmask, a failed format's field): past the record (a wrapped length, a
 * relative offset), and with strict when libtraceevent's own check fails,
 * the record is not printed. */
static void add_array(struct reach *r, const struct tep_format_field *field, bool strict)
{
	unsigned offset, len;

	if (!field)
		return;
	if (!dynamic_array(r, field, &offset, &len) && strict)
		r->unknown = true;
	else if ((size_t)offset > r->size || (size_t)len > r->size - offset)
		r->unknown = true;
	else if ((size_t)offset + len > r->end)
		r->end = (size_t)offset + len;
}

static const struct tep_format_field *field_of(struct reach *r, struct tep_print_arg *arg)
{
	if (!arg->field.field)
		return tep_find_any_field(r->event, arg->field.name);
	return arg->field.field;
}

/* The value libtraceevent computes for a count, or false. */
static bool eval(struct reach *r, struct tep_print_arg *arg, unsigned depth,
                 unsigned long long *val)
{
	unsigned long long left = 0, right = 0;
	const struct tep_format_field *field;
	unsigned offset, len;

	if (!arg || depth > MAX_DEPTH)
		return false;
	switch (arg->type) {
	case TEP_PRINT_NULL:
		*val = 0;
		return true;
	case TEP_PRINT_ATOM:
		/* a number's suffix is ignored; a name is a symbol
		 * libtraceevent looks up, not evaluated here */
		if (arg->atom.atom[0] < '0' || arg->atom.atom[0] > '9')
			return false;
		*val = strtoull(arg->atom.atom, NULL, 0);
		return true;
	case TEP_PRINT_FIELD:
		field = field_of(r, arg);
		if (!field || field->offset < 0)
			return false;
		/* a field past the record reads as 0 */
		if (!read_number(r, (size_t)field->offset, field->size, val))
			*val = 0;
		return true;
	case TEP_PRINT_DYNAMIC_ARRAY_LEN:
		dynamic_array(r, arg->dynarray.field, &offset, &len);
		*val = len;
		return true;
	case TEP_PRINT_OP:
		break;
	default:
		return false;
	}
	if (strcmp(arg->op.op, "?") == 0) {
		struct tep_print_arg *sides = arg->op.right;

		return eval(r, arg->op.left, depth + 1, &left) && sides &&
		       sides->type == TEP_PRINT_OP &&
		       eval(r, left ? sides->op.left : sides->op.right, depth + 1, val);
	}
	if (!eval(r, arg->op.left, depth + 1, &left) || !eval(r, arg->op.right, depth + 1, &right))
		return false;
	const char *op = arg->op.op;
	if (!strcmp(op, "+"))
		*val = left + right;
	else if (!strcmp(op, "-"))
		*val = left - right;
	else if (!strcmp(op, "*"))
		*val = left * right;
	else if (!strcmp(op, "/") && right)
		*val = left / right;
	else if (!strcmp(op, "%") && right)
		*val = left % right;
	else if (!strcmp(op, "<<"))
		*val = left << (right & 63);
	else if (!strcmp(op, ">>"))
		*val = left >> (right & 63);
	else if (!strcmp(op, "&"))
		*val = left & right;
	else if (!strcmp(op, "|"))
		*val = left | right;
	else
		return false;
	/* ("<<" and ">>" of 64 or more are undefined in C; libtraceevent's
	 * result then is the machine's, which a count of that size cannot
	 * be bounded by anyway) */
	return strcmp(op, "<<") && strcmp(op, ">>") ? true : right < 64;
}

/* Where the bytes of a __print_hex() or __print_array() field start. */
static bool start_of(struct reach *r, struct tep_print_arg *field, size_t *start)
{
	const struct tep_format_field *f;
	unsigned offset, len;

	if (field->type == TEP_PRINT_DYNAMIC_ARRAY) {
		dynamic_array(r, field->dynarray.field, &offset, &len);
		*start = offset;
		return true;
	}
	if (field->type != TEP_PRINT_FIELD || !(f = field_of(r, field)) || f->offset < 0)
		return false;
	*start = (size_t)f->offset;
	return true;
}

/* count elements of el_size bytes from the field: libtraceevent's loops
 * run for the count's low 32 bits, unsigned, and read 1-byte elements for
 * a size other than 1, 2, 4 or 8 */
static void add_read(struct reach *r, struct tep_print_arg *field, struct tep_print_arg *count,
                     struct tep_print_arg *el_size, unsigned depth)
{
	unsigned long long n, el = 1;
	size_t start, elements;

	if (!field || !start_of(r, field, &start) || !eval(r, count, depth, &n) ||
	    (el_size && !eval(r, el_size, depth, &el))) {
		r->unknown = true;
		return;
	}
	elements = (unsigned)n;
	if ((int)el != 1 && (int)el != 2 && (int)el != 4 && (int)el != 8)
		el = 1;
	if (elements && start + elements * (size_t)(int)el > r->end)
		r->end = start + elements * (size_t)(int)el;
}

static void walk(struct reach *r, struct tep_print_arg *arg, unsigned depth)
{
	for (; arg && !r->unknown; arg = arg->next) {
		if (depth > MAX_DEPTH) {
			r->unknown = true;
			return;
		}
		switch (arg->type) {
		case TEP_PRINT_HEX:
		case TEP_PRINT_HEX_STR:
			add_read(r, arg->hex.field, arg->hex.size, NULL, depth + 1);
			break;
		case TEP_PRINT_INT_ARRAY:
			add_read(r, arg->int_array.field, arg->int_array.count,
			         arg->int_array.el_size, depth + 1);
			break;
		case TEP_PRINT_OP:
			walk(r, arg->op.left, depth + 1);
			walk(r, arg->op.right, depth + 1);
			break;
		case TEP_PRINT_TYPE:
			walk(r, arg->typecast.item, depth + 1);
			break;
		case TEP_PRINT_FUNC:
			walk(r, arg->func.args, depth + 1);
			break;
		case TEP_PRINT_STRING:
			add_array(r,
			          arg->string.field
			                  ? arg->string.field
			                  : tep_find_any_field(r->event, arg->string.string),
			          false);
			break;
		case TEP_PRINT_BITMASK:
			add_array(r,
			          arg->bitmask.field
			                  ? arg->bitmask.field
			                  : tep_find_any_field(r->event, arg->bitmask.bitmask),
			          false);
			break;
		case TEP_PRINT_DYNAMIC_ARRAY:
			add_array(r, arg->dynarray.field, false);
			break;
		default:
			break;
		}
	}
}

/* An event whose print format did not parse is printed field by field
 * (tep_print_fields()), a dynamic array's bytes from where its field says.
 * libtraceevent checks those against the record, except that a 2-byte
 * field's length is the rest of the record from its offset: an offset past
 * the record wraps that length around (4 GB read, fuzz_tracing: a stack
 * overflow); and a relative one (__rel_loc) moves after the check. Such a
 * record, damaged, is not printed. */
static void walk_fields(struct reach *r)
{
	for (const struct tep_format_field *f = r->event->format.fields; f && !r->unknown;
	     f = f->next)
		if (f->flags & TEP_FIELD_IS_DYNAMIC)
			add_array(r, f, true);
}

size_t ps_script_trace_reach(struct tep_event *event, const void *data, size_t size)
{
	struct reach r = { .event = event, .data = data, .size = size };

	/* the print arguments of a failed format are not used */
	if (event->flags & TEP_EVENT_FL_FAILED) {
		walk_fields(&r);
		return r.unknown ? SIZE_MAX : 0;
	}
	walk(&r, event->print_fmt.args, 0);
	return r.unknown ? SIZE_MAX : r.end;
}
