/* Where a writer's text goes: built in a strbuf and handed to the caller's
 * write callback (pystitch/output.h) in blocks, so that formatting stays
 * appends to memory and the callback is called once per block. Private to
 * src/output. */
#ifndef PS_OUTPUT_SINK_H
#define PS_OUTPUT_SINK_H

#include "base/strbuf.h"
#include "pystitch/output.h"

/* a block: large enough that a write per block costs nothing */
#define PS_SINK_BLOCK (1u << 16)

struct ps_sink {
	struct ps_strbuf text;
	ps_write_fn write;
	void *ctx;
	int error; /* the first failure: -ENOMEM or the callback's */
};

static inline void ps_sink_init(struct ps_sink *sink, ps_write_fn write, void *ctx)
{
	*sink = (struct ps_sink){ .text = PS_STRBUF_INIT, .write = write, .ctx = ctx };
}

/* Hand all the text over. 0 or the first failure (then the text is
 * dropped, and so is everything after it). */
int ps_sink_drain(struct ps_sink *sink);

/* Hand the text over once a block is full. 0 or the first failure. */
static inline int ps_sink_maybe_drain(struct ps_sink *sink)
{
	if (sink->text.len >= PS_SINK_BLOCK || ps_strbuf_failed(&sink->text))
		return ps_sink_drain(sink);
	return sink->error;
}

void ps_sink_release(struct ps_sink *sink);

#endif /* PS_OUTPUT_SINK_H */
