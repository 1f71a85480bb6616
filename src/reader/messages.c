/* How the reader says what went wrong, in one line naming the input, the
 * offset and the record type; and the scratch buffers decoding reuses from
 * record to record. Every part of the reader uses these; they use none.
 */
#include "reader/reader_priv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/message.h"

/* ---- errors and logging ------------------------------------------ */

static void vformat_error(struct ps_reader *r, const char *prefix, const char *fmt, va_list ap)
{
	char start[PS_MSG_MAX];

	snprintf(start, sizeof(start), "%s: %s", ps_reader_input_name(r), prefix);
	ps_vformat(r->errmsg, sizeof(r->errmsg), start, fmt, ap);
	/* one line, whatever the input held, and no terminal control
	 * sequences from names a hostile file carries */
	for (char *p = r->errmsg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = *p == '\n' || *p == '\r' || *p == '\t' ? ' ' : '?';
}

int ps_reader_fail(struct ps_reader *r, int err, const char *fmt, ...)
{
	va_list ap;
	if (r->failed)
		return err;
	va_start(ap, fmt);
	vformat_error(r, "", fmt, ap);
	va_end(ap);
	r->failed = true;
	return err;
}

int ps_reader_fail_at(struct ps_reader *r, int err, uint64_t offset, uint32_t type, const char *fmt,
                      ...)
{
	char prefix[96];
	const char *name = type ? ps_record_type_name(type) : NULL;
	va_list ap;

	if (r->failed)
		return err;
	if (type && name)
		snprintf(prefix, sizeof(prefix), "offset 0x%" PRIx64 ": %s: ", offset, name);
	else if (type)
		snprintf(prefix, sizeof(prefix), "offset 0x%" PRIx64 ": record type %u: ", offset,
		         type);
	else
		snprintf(prefix, sizeof(prefix), "offset 0x%" PRIx64 ": ", offset);
	va_start(ap, fmt);
	vformat_error(r, prefix, fmt, ap);
	va_end(ap);
	r->failed = true;
	return err;
}

void ps_reader_warn_failure(struct ps_reader *r, const char *consequence)
{
	const char *name = ps_reader_input_name(r);
	size_t plen = strlen(name);
	const char *what = r->errmsg;

	/* the message starts with the path, which the log says itself */
	if (strncmp(what, name, plen) == 0 && strncmp(what + plen, ": ", 2) == 0)
		what += plen + 2;
	ps_reader_log(r, PS_LOG_WARN, "%s; %s", what, consequence);
	r->failed = false;
	r->errmsg[0] = '\0';
}

void ps_reader_log(struct ps_reader *r, enum ps_log_level level, const char *fmt, ...)
{
	char prefix[PS_MSG_MAX];
	va_list ap;

	if (!r->opts.log)
		return;
	snprintf(prefix, sizeof(prefix), "%s: ", ps_reader_input_name(r));
	va_start(ap, fmt);
	ps_vlog(r->opts.log, r->opts.log_ctx, level, prefix, fmt, ap);
	va_end(ap);
}

void *ps_scratch_get(struct ps_scratch *s, size_t bytes)
{
	if (!ps_array_reserve(&s->data, &s->cap, bytes, 1, 256))
		return NULL;
	return s->data;
}

void ps_scratch_free(struct ps_scratch *s)
{
	free(s->data);
	s->data = NULL;
	s->cap = 0;
}
