/* Draining a writer's text through the caller's write callback (sink.h):
 * the first failure, an allocation or the callback's own, sticks, so a
 * writer checks once at the end. */
#include <errno.h>

#include "output/sink.h"

int ps_sink_drain(struct ps_sink *sink)
{
	if (!sink->error && ps_strbuf_failed(&sink->text))
		sink->error = -ENOMEM;
	if (!sink->error && sink->text.len)
		sink->error = sink->write(sink->ctx, sink->text.buf, sink->text.len);
	if (sink->error)
		/* nothing more is kept once a write has failed */
		ps_strbuf_release(&sink->text);
	else
		ps_strbuf_reset(&sink->text);
	return sink->error;
}

void ps_sink_release(struct ps_sink *sink)
{
	ps_strbuf_release(&sink->text);
}
