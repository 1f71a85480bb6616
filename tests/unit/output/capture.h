/* What the output unit tests share: a write callback (pystitch/output.h)
 * that keeps everything written in a strbuf, and one that fails. */
#ifndef PS_TESTS_UNIT_OUTPUT_CAPTURE_H
#define PS_TESTS_UNIT_OUTPUT_CAPTURE_H

#include <errno.h>

#include "base/strbuf.h"
#include "pystitch/output.h"

/* ctx is a struct ps_strbuf *; -ENOMEM when it could not grow. */
static inline int capture_write(void *ctx, const void *data, size_t size)
{
	struct ps_strbuf *all = ctx;

	ps_strbuf_add(all, data, size);
	return ps_strbuf_failed(all) ? -ENOMEM : 0;
}

static inline int capture_fails(void *ctx, const void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return -EIO;
}

#endif /* PS_TESTS_UNIT_OUTPUT_CAPTURE_H */
