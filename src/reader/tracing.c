/* TRACING_DATA: the tracefs event formats perf saves with a capture (a
 * file-mode feature section or the payload of a pipe-mode
 * HEADER_TRACING_DATA record), handed to libtraceevent as r->tep.
 */
/* cursor.h first: reader.h names struct ps_cursor without declaring it */
#include "base/cursor.h"
#include "base/message.h"
#include "reader/perf_format_priv.h"
#include "reader/reader_priv.h"
#include "reader/tracing_check_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

/* Layout (perf's util/trace-event-info.c writes it, trace-event-read.c
 * reads it): magic, version string, u8 file_bigendian, u8 long_size,
 * u32 page_size, "header_page" u64 size + text, "header_event" u64 size +
 * text, u32 nr + {u64 size, text} ftrace formats, u32 nr_systems +
 * {name, u32 nr + {u64 size, text}}, u32 size + kallsyms, u32 size +
 * printk formats, and from version 0.6 u64 size + saved_cmdlines. */
#define TRACING_MAGIC "\x17\x08\x44tracing"
#define TRACING_MAGIC_SIZE 10
/* perf reads these strings into a BUFSIZ buffer */
#define TRACING_MAX_STRING 8192
/* bounds on counts: tracefs has a few thousand events in ~100 systems */
#define TRACING_MAX_SYSTEMS 4096
#define TRACING_MAX_FORMATS 65536

struct tracing_blob {
	struct ps_reader *r;
	struct ps_cursor c;
	uint64_t offset; /* input offset of the blob */
	struct tep_handle *tep;
	size_t nr_formats;
};

static int blob_fail(struct tracing_blob *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static int blob_fail(struct tracing_blob *b, const char *fmt, ...)
{
	char what[PS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	ps_vformat(what, sizeof(what), NULL, fmt, ap);
	va_end(ap);
	return ps_reader_fail_at(b->r, -EINVAL, b->offset + ps_cursor_pos(&b->c), 0,
	                         "tracing data: %s", what);
}

static int blob_truncated(struct tracing_blob *b, const char *what)
{
	return blob_fail(b, "truncated in %s (blob is %zu bytes)", what,
	                 (size_t)(b->c.end - b->c.start));
}

static int out_of_memory(struct tracing_blob *b)
{
	return ps_reader_fail(b->r, -ENOMEM, "tracing data: out of memory");
}

/* A size field followed by that many bytes. Sizes are u32 or u64 in the
 * blob; the check against what is left comes before any use. */
static const uint8_t *take_sized(struct tracing_blob *b, uint64_t size)
{
	if (size > ps_cursor_left(&b->c)) {
		b->c.failed = true;
		return NULL;
	}
	return ps_cursor_take(&b->c, (size_t)size);
}

/* perf keeps the saved_cmdlines only when atof(version) >= 0.6; compare
 * the decimal text the same way without depending on the locale. */
static bool version_has_cmdlines(const char *version)
{
	const char *p = version;
	bool nonzero_integer = false;

	while (*p == ' ')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		if (*p != '0')
			nonzero_integer = true;
	if (nonzero_integer)
		return true;
	return *p == '.' && p[1] >= '6' && p[1] <= '9';
}

/* Copy the blob's bytes into a NUL-terminated buffer the line parsers
 * may cut up (the input itself is const). */
static char *text_copy(const uint8_t *bytes, size_t size)
{
	char *text = malloc(size + 1);

	if (text) {
		memcpy(text, bytes, size);
		text[size] = 0;
	}
	return text;
}

/* Next '\n'-separated line of text, cut in place; NULL at the end (which
 * is also the first NUL, as for perf's strtok). */
static char *next_line(char **cursor)
{
	char *line = *cursor;
	char *newline;

	if (!line || !*line)
		return NULL;
	newline = strchr(line, '\n');
	if (newline) {
		*newline = 0;
		*cursor = newline + 1;
	} else {
		*cursor = NULL;
	}
	return line;
}

static int parse_format(struct tracing_blob *b, const char *system, const char *what)
{
	uint64_t size = ps_cursor_u64(&b->c);
	size_t at = ps_cursor_pos(&b->c);
	const uint8_t *text = take_sized(b, size);
	enum tep_errno ret;
	char msg[PS_MSG_MAX], reason[PS_MSG_MAX], *replaced = NULL;
	size_t replaced_size = 0;
	int err;

	if (!text)
		return blob_truncated(b, what);
	if (++b->nr_formats > TRACING_MAX_FORMATS)
		return blob_fail(b, "more than %u event formats", TRACING_MAX_FORMATS);
	/* errors point at the format's first byte */
	b->c.p = b->c.start + at;
	if (ps_tracing_check_format((const char *)text, (size_t)size, strcmp(system, "ftrace") == 0,
	                            reason, sizeof(reason)) != 0)
		return blob_fail(b, "event format %zu (system %s): %s", b->nr_formats, system,
		                 reason);
	err = ps_tracing_replace_sizeof((const char *)text, (size_t)size, tep_get_long_size(b->tep),
	                                &replaced, &replaced_size, reason, sizeof(reason));
	if (err == -ENOMEM)
		return out_of_memory(b);
	if (err)
		return blob_fail(b, "event format %zu (system %s): %s", b->nr_formats, system,
		                 reason);
	if (replaced)
		ret = tep_parse_event(b->tep, replaced, (unsigned long)replaced_size, system);
	else
		ret = tep_parse_event(b->tep, (const char *)text, (unsigned long)size, system);
	free(replaced);
	if (ret == 0) {
		b->c.p = text + size;
		return 0;
	}
	/* perf gives up on the whole capture here too */
	if (tep_strerror(b->tep, ret, msg, sizeof(msg)) < 0)
		snprintf(msg, sizeof(msg), "error %d", (int)ret);
	return blob_fail(b, "%s format %zu (system %s) rejected by libtraceevent: %s", what,
	                 b->nr_formats, system, msg);
}

static int parse_header_files(struct tracing_blob *b, int long_size)
{
	const uint8_t *tag = ps_cursor_take(&b->c, 12);
	uint64_t size;
	const uint8_t *text;
	char *copy;

	if (!tag)
		return blob_truncated(b, "header_page");
	if (memcmp(tag, "header_page", 12) != 0) {
		b->c.p = tag;
		return blob_fail(b, "no header_page");
	}
	size = ps_cursor_u64(&b->c);
	text = take_sized(b, size);
	if (!text)
		return blob_truncated(b, "header_page");
	/* libtraceevent wants a mutable buffer */
	copy = text_copy(text, (size_t)size);
	if (!copy)
		return out_of_memory(b);
	/* As perf: the width of the page header's commit field is the
	 * kernel's long size. A damaged header_page would leave it 0, so
	 * only a sane width replaces the one the blob declared. */
	/* (a damaged one is not parsed: libtraceevent would leak on it, and
	 * perf goes on without it too) */
	if (!ps_tracing_odd_field_line(copy, (size_t)size, false) &&
	    tep_parse_header_page(b->tep, copy, (unsigned long)size, long_size) == 0) {
		int commit_size = tep_get_header_page_size(b->tep);

		if (commit_size == 4 || commit_size == 8)
			tep_set_long_size(b->tep, commit_size);
	}
	free(copy);

	tag = ps_cursor_take(&b->c, 13);
	if (!tag)
		return blob_truncated(b, "header_event");
	if (memcmp(tag, "header_event", 13) != 0) {
		b->c.p = tag;
		return blob_fail(b, "no header_event");
	}
	/* perf does not use it either: record headers come from the
	 * perf sample, not from a ring-buffer page */
	size = ps_cursor_u64(&b->c);
	if (!take_sized(b, size))
		return blob_truncated(b, "header_event");
	return 0;
}

static int parse_formats(struct tracing_blob *b)
{
	uint32_t nr_ftrace = ps_cursor_u32(&b->c);
	uint32_t nr_systems;
	int err;

	if (!ps_cursor_ok(&b->c))
		return blob_truncated(b, "ftrace formats");
	if (nr_ftrace > TRACING_MAX_FORMATS)
		return blob_fail(b, "%u ftrace formats, more than %u", nr_ftrace,
		                 TRACING_MAX_FORMATS);
	for (uint32_t i = 0; i < nr_ftrace; i++) {
		err = parse_format(b, "ftrace", "ftrace");
		if (err)
			return err;
	}

	nr_systems = ps_cursor_u32(&b->c);
	if (!ps_cursor_ok(&b->c))
		return blob_truncated(b, "event systems");
	if (nr_systems > TRACING_MAX_SYSTEMS)
		return blob_fail(b, "%u event systems, more than %u", nr_systems,
		                 TRACING_MAX_SYSTEMS);
	for (uint32_t i = 0; i < nr_systems; i++) {
		const char *system = ps_cursor_string(&b->c, TRACING_MAX_STRING, false);
		uint32_t nr_events;

		if (!system)
			return blob_fail(b, "system name not terminated");
		nr_events = ps_cursor_u32(&b->c);
		if (!ps_cursor_ok(&b->c))
			return blob_truncated(b, "event formats");
		if (nr_events > TRACING_MAX_FORMATS)
			return blob_fail(b, "system %s has %u events, more than %u", system,
			                 nr_events, TRACING_MAX_FORMATS);
		for (uint32_t j = 0; j < nr_events; j++) {
			err = parse_format(b, system, "event");
			if (err)
				return err;
		}
	}
	return 0;
}

/* Lines "0xADDR : \"format\"": the format strings of trace_printk()
 * call sites, which bprint events refer to by address. */
static int parse_printk(struct tracing_blob *b)
{
	uint32_t size = ps_cursor_u32(&b->c);
	const uint8_t *bytes = take_sized(b, size);
	char *text, *cursor, *line;
	const char *skipped_why = NULL;
	unsigned long long skipped_addr = 0;
	size_t skipped = 0;

	if (!bytes)
		return blob_truncated(b, "printk formats");
	if (size == 0)
		return 0;
	text = text_copy(bytes, size);
	if (!text)
		return out_of_memory(b);
	cursor = text;
	while ((line = next_line(&cursor))) {
		char *colon = strchr(line, ':');
		unsigned long long addr;
		const char *format, *bare;

		if (!colon)
			continue;
		*colon = 0;
		addr = strtoull(line, NULL, 16);
		format = colon + 1;
		/* perf skips the one space after the colon */
		if (*format)
			format++;
		/* tep_register_print_string() strips a leading quote, then
		 * looks at the last three characters without checking the
		 * length; real formats are never that short */
		bare = format + (*format == '"');
		if (strlen(bare) < 3)
			continue;
		/* the record's own bytes go through these (bprint events),
		 * as through an event's print format: bounded alike */
		size_t at;
		const char *why = ps_tracing_check_conversions(format, strlen(format), &at);
		if (why) {
			if (!skipped++) {
				skipped_why = why;
				skipped_addr = addr;
			}
			continue;
		}
		if (tep_register_print_string(b->tep, format, addr) < 0) {
			free(text);
			return out_of_memory(b);
		}
	}
	if (skipped)
		ps_reader_log(
		        b->r, PS_LOG_WARN,
		        "offset 0x%" PRIx64 ": tracing data: %zu printk format%s left out, the "
		        "first (at %#llx) for %s; their trace_printk() events print raw",
		        b->offset, skipped, skipped == 1 ? "" : "s", skipped_addr, skipped_why);
	free(text);
	return 0;
}

/* Lines "PID COMM" from tracefs saved_cmdlines, names of tasks the
 * kernel saw (printed for pids in tracepoint fields). */
static int parse_saved_cmdlines(struct tracing_blob *b)
{
	uint64_t size = ps_cursor_u64(&b->c);
	const uint8_t *bytes = take_sized(b, size);
	char *text, *cursor, *line;

	if (!bytes)
		return blob_truncated(b, "saved_cmdlines");
	if (size == 0)
		return 0;
	text = text_copy(bytes, (size_t)size);
	if (!text)
		return out_of_memory(b);
	cursor = text;
	while ((line = next_line(&cursor))) {
		char comm[17]; /* the kernel's comm is at most 16 bytes */
		int pid;

		if (sscanf(line, "%d %16s", &pid, comm) == 2)
			tep_register_comm(b->tep, comm, pid);
	}
	free(text);
	return 0;
}

static int parse_blob(struct tracing_blob *b)
{
	const uint8_t *magic = ps_cursor_take(&b->c, TRACING_MAGIC_SIZE);
	const char *version;
	uint8_t file_bigendian, long_size;
	uint32_t page_size;
	uint32_t kallsyms_size;
	int host_bigendian = tep_is_bigendian();
	int err;

	if (!magic)
		return blob_truncated(b, "magic");
	if (memcmp(magic, TRACING_MAGIC, TRACING_MAGIC_SIZE) != 0) {
		b->c.p = magic;
		return blob_fail(b, "bad magic");
	}
	version = ps_cursor_string(&b->c, TRACING_MAX_STRING, false);
	if (!version)
		return blob_fail(b, "version string not terminated");
	file_bigendian = ps_cursor_u8(&b->c);
	long_size = ps_cursor_u8(&b->c);
	if (!ps_cursor_ok(&b->c))
		return blob_truncated(b, "the header");
	if (file_bigendian > 1)
		return blob_fail(b, "endianness byte %u is neither 0 nor 1", file_bigendian);
	if (long_size != 4 && long_size != 8)
		return blob_fail(b, "long size %u is neither 4 nor 8", long_size);
	/* The blob's numbers are in the byte order of the machine that
	 * recorded it, which this byte tells, as for libtraceevent. */
	b->c.swap = file_bigendian != host_bigendian;
	page_size = ps_cursor_u32(&b->c);
	if (!ps_cursor_ok(&b->c))
		return blob_truncated(b, "the header");
	/* libtraceevent keeps it in an int */
	if (page_size == 0 || (page_size & (page_size - 1)) || page_size > (1u << 30))
		return blob_fail(b, "page size %u is not a power of two up to 1 GiB", page_size);

	b->tep = tep_alloc();
	if (!b->tep)
		return out_of_memory(b);
	/* the settings perf makes; no plugins, as Debian's perf prints
	 * without them */
	tep_set_flag(b->tep, TEP_NSEC_OUTPUT);
	tep_set_file_bigendian(b->tep, file_bigendian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(b->tep, host_bigendian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(b->tep, long_size);
	tep_set_page_size(b->tep, (int)page_size);

	err = parse_header_files(b, long_size);
	if (!err)
		err = parse_formats(b);
	if (err)
		return err;

	/* perf 6.1 writes an empty kallsyms and resolves kernel addresses
	 * itself; older captures carry /proc/kallsyms, skipped alike */
	kallsyms_size = ps_cursor_u32(&b->c);
	if (!take_sized(b, kallsyms_size))
		return blob_truncated(b, "kallsyms");
	err = parse_printk(b);
	if (!err && version_has_cmdlines(version))
		err = parse_saved_cmdlines(b);
	/* bytes after this are padding (pipe mode pads to 8) */
	return err;
}

int ps_tracing_parse(struct ps_reader *r, const uint8_t *data, size_t size, uint64_t offset)
{
	static const uint8_t empty[1];
	struct tracing_blob b = {
		.r = r,
		.c = ps_cursor_make(data ? data : empty, data ? size : 0, false),
		.offset = offset,
	};
	int err;

	if (size > PS_MAX_TRACING_DATA)
		return ps_reader_fail_at(r, -EINVAL, offset, 0,
		                         "tracing data: %zu bytes, more than %u", size,
		                         PS_MAX_TRACING_DATA);
	err = parse_blob(&b);
	if (err) {
		if (b.tep)
			tep_free(b.tep);
		return err;
	}
	/* a second blob replaces the first, as it would in perf */
	ps_tracing_free(r);
	r->tep = b.tep;
	r->features.has_tracing_data = true;
	r->features.tracing_data_size = size;
	r->features.tracing_nr_events = (size_t)tep_get_events_count(b.tep);
	return 0;
}

void ps_tracing_name_events(struct ps_reader *r)
{
	char name[256];

	if (!r->tep)
		return;
	for (size_t i = 0; i < r->nr_attrs; i++) {
		struct ps_attr *attr = &r->attrs[i];
		struct tep_event *event;

		if (attr->type != PERF_TYPE_TRACEPOINT || r->attr_named[i] ||
		    attr->config > INT32_MAX)
			continue;
		event = tep_find_event(r->tep, (int)attr->config);
		if (!event || !event->system || !event->name)
			continue;
		snprintf(name, sizeof(name), "%s:%s", event->system, event->name);
		ps_attrs_name_unnamed(r, attr, name);
	}
}

void ps_tracing_free(struct ps_reader *r)
{
	if (r->tep)
		tep_free(r->tep);
	r->tep = NULL;
	r->features.tracing_nr_events = 0;
}

void *ps_reader_tep(const struct ps_reader *reader)
{
	return reader ? reader->tep : NULL;
}
