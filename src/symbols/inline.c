/* perf's reading of addr2line's answers (util/srcline.c, the build without
 * libbfd): each record becomes a frame named by the record, "(inlined)"
 * unless the name equals the ELF symbol, all with the ELF symbol's offset;
 * and the "file:line" text perf prints for -F +srcline. */
#include "symbols/symbols_priv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf trims the function line addr2line prints (strim). */
static const char *trimmed(const char *name, char *buf, size_t size)
{
	size_t len;

	while (isspace((unsigned char)*name))
		name++;
	len = strlen(name);
	while (len > 0 && isspace((unsigned char)name[len - 1]))
		len--;
	if (name[len] == 0)
		return name;
	if (len >= size)
		len = size - 1;
	memcpy(buf, name, len);
	buf[len] = 0;
	return buf;
}

bool ps_inline_source(const struct ps_addr2line_record *record, char *path, size_t size,
                      unsigned *line)
{
	/* bfd's full path puts the unit's directory before a relative one */
	const char *dir = record->file && record->file[0] != '/' ? record->comp_dir : NULL;
	char printed[4096], *colon;

	if (record->line)
		snprintf(printed, sizeof(printed), "%s%s%s:%u", dir ? dir : "", dir ? "/" : "",
		         record->file ? record->file : "??", record->line);
	else
		snprintf(printed, sizeof(printed), "%s%s%s:?", dir ? dir : "", dir ? "/" : "",
		         record->file ? record->file : "??");
	/* filename_split(): "??:0" is no answer */
	if (strcmp(printed, "??:0") == 0)
		return false;
	colon = strchr(printed, ':');
	*line = 0;
	if (colon) {
		*colon = 0;
		*line = (unsigned)strtoul(colon + 1, NULL, 0);
	}
	snprintf(path, size, "%s", printed);
	return true;
}

/* addr2line prints "FILE:LINE" ("??" for no file, "?" for line 0); perf
 * splits that at the first ':' (filename_split), reads the line with
 * strtoul and keeps the basename (srcline_from_fileline) unless
 * --full-source-path. */
static char *srcline_text(const struct ps_addr2line_record *record, bool full_path,
                          struct ps_arena *arena)
{
	struct ps_addr2line_record plain = *record;
	char path[4096];
	const char *base;
	unsigned line = 0;
	size_t len;
	char *text;

	if (!full_path)
		plain.comp_dir = NULL;
	if (!ps_inline_source(&plain, path, sizeof(path), &line))
		snprintf(path, sizeof(path), "??");
	base = full_path ? NULL : strrchr(path, '/');
	base = base ? base + 1 : path;
	len = strlen(base) + 24;
	text = ps_arena_alloc(arena, len);
	if (text)
		snprintf(text, len, "%s:%u", base, line);
	return text;
}

size_t ps_inline_frames(const struct ps_addr2line_record *records, size_t nr, const char *base_name,
                        uint64_t offset, bool want_srcline, bool full_path, bool demangle,
                        struct ps_arena *arena, struct ps_frame_name *out, size_t max)
{
	size_t n = 0;

	if (!base_name)
		return 0;
	for (size_t i = 0; i < nr && n < max && n < PS_INLINE_MAX; i++) {
		char trim_buf[1024], *demangled;
		const char *name =
		        records[i].function && records[i].function[0] ? records[i].function : "??";
		struct ps_frame_name *frame = &out[n++];

		name = trimmed(name, trim_buf, sizeof(trim_buf));
		demangled = demangle ? ps_symbol_demangle(name) : NULL;
		if (demangled)
			name = demangled;
		frame->offset = offset;
		frame->size = 0;
		frame->srcline = want_srcline ? srcline_text(&records[i], full_path, arena) : NULL;
		/* new_inline_sym: the real symbol when the names match */
		if (strcmp(name, base_name) == 0) {
			frame->sym = base_name;
			frame->inlined = false;
		} else {
			frame->sym = ps_arena_strndup(arena, name, SIZE_MAX);
			frame->inlined = true;
			if (!frame->sym)
				frame->sym = "??";
		}
		free(demangled);
	}
	return n;
}

const char *ps_inline_plain_srcline(const struct ps_addr2line_record *records, size_t nr,
                                    bool full_path, struct ps_arena *arena)
{
	char *text;

	if (nr == 0)
		return NULL;
	text = srcline_text(&records[0], full_path, arena);
	/* map__fprintf_srcline prints nothing for SRCLINE_UNKNOWN */
	if (text && strcmp(text, "??:0") == 0)
		return NULL;
	return text;
}
