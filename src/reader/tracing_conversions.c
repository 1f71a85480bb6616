/* The conversions of a print format's string ("%d", "%08lx", "%.*s"),
 * checked before libtraceevent prints with them.
 *
 * libtraceevent hands each conversion to printf() with the width and
 * precision the format says and grows its output buffer to whatever comes
 * out: "%99999999d" makes 100 MB of spaces for every sample, and a '*'
 * width takes the record's own bytes for the width, so a damaged record
 * asks for up to 2 GB (a negative one for more: the fuzzer's "%*d" never
 * ends). Kernel formats write widths of at most 16 and '*' in two shapes
 * only, "%.*s" (a string's length) and "%*pbl" (a bitmask's bits, which
 * libtraceevent prints itself): all of Linux 6.18's do. So a width or
 * precision above MAX_WIDTH, or a '*' anywhere else, refuses the format.
 */
#include "reader/tracing_check_priv.h"

#include <string.h>

/* far above a kernel's 16, far below an output that costs anything */
#define MAX_WIDTH 1024

/* The digits at *p (advanced past them) as a number, capped past MAX_WIDTH. */
static unsigned long read_number(const char **p, const char *end)
{
	unsigned long n = 0;

	while (*p < end && **p >= '0' && **p <= '9') {
		if (n <= MAX_WIDTH)
			n = n * 10 + (unsigned long)(**p - '0');
		(*p)++;
	}
	return n;
}

const char *ps_tracing_check_conversions(const char *s, size_t len, size_t *at)
{
	const char *end = s + len;

	for (const char *p = s; p < end; p++) {
		const char *start = p;
		bool star_width = false, star_precision = false;

		if (*p == '\\' && p + 1 < end) {
			p++; /* "\%" is no conversion either */
			continue;
		}
		if (*p != '%')
			continue;
		if (++p < end && *p == '%')
			continue;
		*at = (size_t)(start - s);
		while (p < end && strchr("-+ #0'", *p))
			p++;
		if (p < end && *p == '*') {
			star_width = true;
			p++;
		} else if (read_number(&p, end) > MAX_WIDTH) {
			return "a conversion wider than any kernel format writes";
		}
		if (p < end && *p == '.') {
			p++;
			if (p < end && *p == '*') {
				star_precision = true;
				p++;
			} else if (read_number(&p, end) > MAX_WIDTH) {
				return "a conversion's precision above any kernel format's";
			}
		}
		while (p < end && strchr("hlLqjzt", *p))
			p++;
		if (star_width && !(end - p >= 2 && p[0] == 'p' && p[1] == 'b'))
			return "a '*' width other than in %*pb";
		if (star_precision && !(p < end && *p == 's'))
			return "a '*' precision other than in %.*s";
		if (p == end)
			break;
	}
	return NULL;
}
