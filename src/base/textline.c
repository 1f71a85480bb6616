/* The field codec of line-based text formats (see textline.h). */
#include "base/textline.h"

#include <errno.h>
#include <string.h>

static int plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("/._+,:@~[]-", c) != NULL);
}

void ps_textline_add_string(struct ps_strbuf *out, const char *s)
{
	static const char digits[] = "0123456789ABCDEF";

	if (!s) {
		ps_strbuf_addch(out, '-');
		return;
	}
	ps_strbuf_addch(out, '=');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (plain_byte(*p)) {
			ps_strbuf_addch(out, (char)*p);
		} else {
			char esc[3] = { '%', digits[*p >> 4], digits[*p & 15] };
			ps_strbuf_add(out, esc, sizeof(esc));
		}
	}
}

int ps_textline_decode_string(char *field, const char **out, const char **why)
{
	size_t len = strlen(field), n = 0;
	char *s = field + 1;

	*out = NULL;
	if (strcmp(field, "-") == 0)
		return 0;
	if (field[0] != '=') {
		*why = "a string must start with '=' or be '-'";
		return -EINVAL;
	}
	/* decoding only shortens, so it writes behind what it reads */
	for (size_t i = 1; i < len; i++) {
		unsigned char c = (unsigned char)field[i];

		if (c == '%') {
			int hi = i + 2 < len ? ps_textline_hex_value(field[i + 1]) : -1;
			int lo = hi >= 0 ? ps_textline_hex_value(field[i + 2]) : -1;

			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				*why = "bad %-escape in a string";
				return -EINVAL;
			}
			s[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (plain_byte(c)) {
			s[n++] = (char)c;
		} else {
			*why = "a byte not escaped in a string";
			return -EINVAL;
		}
	}
	s[n] = 0;
	*out = s;
	return 0;
}

int ps_textline_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 20)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

int ps_textline_parse_x64(const char *s, uint64_t *out)
{
	size_t len = strlen(s);
	uint64_t v = 0;

	if (!len || len > 16 || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (; *s; s++) {
		int d = ps_textline_hex_value(*s);

		if (d < 0 || (*s >= 'A' && *s <= 'F'))
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

size_t ps_textline_split(char *line, char **fields, size_t max)
{
	size_t n = 0;

	for (char *p = line;;) {
		char *space = strchr(p, ' ');

		if (n == max)
			return max + 1;
		fields[n++] = p;
		if (!space)
			return n;
		*space = 0;
		p = space + 1;
	}
}
