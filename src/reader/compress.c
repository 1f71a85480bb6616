/* PERF_RECORD_COMPRESSED: zstd frames whose output is a stream of records.
 * A record may straddle two COMPRESSED records, so undelivered bytes stay
 * in the buffer and the next chunk is appended after them.
 */
#include "reader/reader_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "reader/perf_format_priv.h"

#include "base/array.h"

int ps_decompress_feed(struct ps_reader *r, const uint8_t *data, size_t size, uint64_t offset)
{
	struct ps_decompressor *z = &r->zstd;
	ZSTD_inBuffer in = { data, size, 0 };

	if (!z->dctx) {
		z->dctx = ZSTD_createDCtx();
		if (!z->dctx)
			return ps_reader_fail(r, -ENOMEM, "out of memory for zstd");
	}
	/* keep the unconsumed tail at the front */
	if (z->head) {
		memmove(z->buf, z->buf + z->head, z->tail - z->head);
		z->tail -= z->head;
		z->head = 0;
	}
	z->offset = offset;
	while (in.pos < in.size) {
		if (z->cap - z->tail < 65536) {
			size_t cap = z->cap ? z->cap * 2 : (size_t)1 << 20;
			/* one record holds at most 64 KiB; the chunk bound keeps a
			 * hostile frame from asking for unbounded memory */
			if (cap > PS_MAX_DECOMPRESSED_CHUNK + 65536)
				return ps_reader_fail_at(r, -EINVAL, offset, PS_RECORD_COMPRESSED,
				                         "decompresses to more than %u bytes",
				                         PS_MAX_DECOMPRESSED_CHUNK);
			if (!ps_array_reserve((void **)&z->buf, &z->cap, cap, 1, cap))
				return ps_reader_fail(r, -ENOMEM, "out of memory for zstd");
		}
		ZSTD_outBuffer out = { z->buf, z->cap, z->tail };
		size_t ret = ZSTD_decompressStream(z->dctx, &out, &in);
		if (ZSTD_isError(ret)) {
			/* the stream state is undefined after an error */
			ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
			return ps_reader_fail_at(r, -EINVAL, offset, PS_RECORD_COMPRESSED,
			                         "zstd: %s", ZSTD_getErrorName(ret));
		}
		r->stats.nr_decompressed_bytes += out.pos - z->tail;
		z->tail = out.pos;
		if (ret == 0 && in.pos == in.size)
			break;
		if (out.pos < out.size && in.pos == in.size)
			break;
	}
	return 0;
}

void ps_decompressor_free(struct ps_decompressor *z)
{
	ZSTD_freeDCtx(z->dctx);
	free(z->buf);
	memset(z, 0, sizeof(*z));
}

void ps_decompress_free(struct ps_reader *r)
{
	ps_decompressor_free(&r->zstd);
}
