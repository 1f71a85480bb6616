/* Reading one feature section (features.c, features_machine.c): failing
 * at the cursor's offset with the feature's name, and perf's header
 * strings and string lists, bounded by what the section can hold.
 */
/* cursor.h first: reader_priv.h names struct ps_cursor without declaring it */
#include "base/cursor.h"
#include "base/message.h"
#include "reader/feature_section_priv.h"
#include "reader/perf_format_priv.h"
#include "reader/reader_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fail at the cursor's position. The cursor does not advance on a failed
 * read, so the offset points at the field that did not fit. */
int ps_section_fail(struct ps_feature_section *s, const char *fmt, ...)
{
	char what[PS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	ps_vformat(what, sizeof(what), NULL, fmt, ap);
	va_end(ap);
	return ps_reader_fail_at(s->r, -EINVAL, s->offset + ps_cursor_pos(&s->c), 0,
	                         "feature %s: %s", s->name, what);
}

int ps_section_truncated(struct ps_feature_section *s)
{
	return ps_section_fail(s, "truncated (section is %zu bytes)",
	                       (size_t)(s->c.end - s->c.start));
}

int ps_section_out_of_memory(struct ps_feature_section *s)
{
	return ps_reader_fail(s->r, -ENOMEM, "feature %s: out of memory", s->name);
}

/* struct perf_header_string: u32 len, then len bytes padded with NULs
 * (perf pads to 64). The text is what precedes the first NUL; a string
 * that fills its field without one is kept whole rather than rejected,
 * since perf would use it too. */
int ps_section_count_fits(struct ps_feature_section *s, uint64_t count, size_t min_size,
                          const char *what)
{
	size_t left = ps_cursor_left(&s->c);

	if (count > left / min_size)
		return ps_section_fail(s, "%llu %s do not fit in %zu bytes",
		                       (unsigned long long)count, what, left);
	return 0;
}

void *ps_section_array(struct ps_feature_section *s, uint64_t count, size_t min_size,
                       size_t elem_size, const char *what, int *err)
{
	void *mem;

	*err = ps_section_count_fits(s, count, min_size, what);
	if (*err)
		return NULL;
	/* count <= the section's size, so the product cannot overflow */
	mem = ps_arena_alloc(&s->r->arena, (count ? (size_t)count : 1) * elem_size);
	if (!mem)
		*err = ps_section_out_of_memory(s);
	return mem;
}

int ps_section_string(struct ps_feature_section *s, const char **out)
{
	const uint8_t *start = s->c.p;
	uint32_t len = ps_cursor_u32(&s->c);
	const uint8_t *bytes = ps_cursor_take(&s->c, len);
	char *copy;

	if (!bytes) {
		s->c.p = start; /* report the string's length field */
		return ps_section_truncated(s);
	}
	copy = ps_arena_strndup(&s->r->arena, (const char *)bytes, len);
	if (!copy)
		return ps_section_out_of_memory(s);
	*out = copy;
	return 0;
}

/* u32 nr, then nr strings. Only the first PS_MAX_STRING_LIST are kept;
 * the rest are still read so that whatever follows stays in step. */
int ps_section_string_list(struct ps_feature_section *s, struct ps_string_list *out)
{
	uint32_t nr = ps_cursor_u32(&s->c);
	size_t keep;
	const char **items;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* every string takes at least its u32 length */
	if (nr > ps_cursor_left(&s->c) / 4)
		return ps_section_fail(s, "%u strings do not fit in %zu bytes", nr,
		                       ps_cursor_left(&s->c));
	keep = nr < PS_MAX_STRING_LIST ? nr : PS_MAX_STRING_LIST;
	items = ps_arena_alloc(&s->r->arena, keep * sizeof(*items));
	if (!items)
		return ps_section_out_of_memory(s);
	for (uint32_t i = 0; i < nr; i++) {
		const char *str = NULL;
		int err = ps_section_string(s, &str);

		if (err)
			return err;
		if (i < keep)
			items[i] = str;
	}
	if (keep < nr)
		ps_reader_log(s->r, PS_LOG_WARN, "feature %s: %u strings, kept the first %zu",
		              s->name, nr, keep);
	out->nr = keep;
	out->items = items;
	return 0;
}
