/* `pystitch dump`: the raw bytes of a record, as perf 6.1's trace_event()
 * prints them before each record (util/debug.c trace_event_printer() fed by
 * util/print_binary.c binary__fprintf(), 16 bytes a line):
 *
 *   .
 *   . ... raw event: size 48 bytes
 *   .  0000:  03 00 00 00 00 00 30 00 85 26 00 00 85 26 00 00  ......0..&...&..
 *   .  0020:  00 00 00 00 00 00 00 00                          ........
 *   (an empty line)
 *
 * A short last line is padded to the full width, bytes and characters
 * alike; a character prints as itself when it is printable ASCII, else as
 * '.'. These lines are most of a dump's text, so they are formatted by
 * hand into the buffer rather than by printf.
 */
#include "output/dump_priv.h"

/* ".  0000: " + 16 x " xx" + "  " + 16 chars + "\n" */
#define LINE_BYTES (1 + 8 + 16 * 3 + 2 + 16 + 1)

static const char hexdigits[] = "0123456789abcdef";

void ps_dump_hex(struct ps_strbuf *out, const uint8_t *data, size_t len)
{
	size_t lines = (len + 15) / 16;
	char *p;

	ps_strbuf_addstr(out, ".\n. ... raw event: size ");
	ps_strbuf_add_uint(out, len, 0, false);
	ps_strbuf_addstr(out, " bytes\n");
	if (!ps_strbuf_reserve(out, lines * LINE_BYTES + 1))
		return;
	p = out->buf + out->len;
	for (size_t at = 0; at < len; at += 16) {
		size_t n = len - at < 16 ? len - at : 16;

		/* perf prints the offset with %04x; a record is at most
		 * 0xffff bytes long, so four digits always hold it */
		memcpy(p, ".  ", 3);
		p[3] = hexdigits[(at >> 12) & 0xf];
		p[4] = hexdigits[(at >> 8) & 0xf];
		p[5] = hexdigits[(at >> 4) & 0xf];
		p[6] = hexdigits[at & 0xf];
		p[7] = ':';
		p[8] = ' ';
		p += 9;
		for (size_t i = 0; i < 16; i++, p += 3) {
			p[0] = ' ';
			if (i < n) {
				p[1] = hexdigits[data[at + i] >> 4];
				p[2] = hexdigits[data[at + i] & 0xf];
			} else {
				p[1] = p[2] = ' ';
			}
		}
		*p++ = ' ';
		*p++ = ' ';
		for (size_t i = 0; i < 16; i++) {
			uint8_t c = data[at + i < len ? at + i : 0];

			*p++ = i >= n ? ' ' : (c >= 0x20 && c < 0x7f) ? (char)c : '.';
		}
		*p++ = '\n';
	}
	*p++ = '\n'; /* the empty line that ends the dump */
	*p = 0;
	out->len = (size_t)(p - out->buf);
}
