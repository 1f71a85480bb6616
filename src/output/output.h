/* Output module: turns decoded events and header facts into text.
 * Printers append to a ps_strbuf; they never write to a descriptor. */
#ifndef PS_OUTPUT_OUTPUT_H
#define PS_OUTPUT_OUTPUT_H

#include "base/strbuf.h"
#include "pystitch/pystitch.h"

/* `pystitch dump`: one record, in the spirit of `perf report -D`.
 * The first line is "0xOFFSET [0xSIZE]: PERF_RECORD_NAME<perf's fields>",
 * the same text perf prints after its timestamp; detail lines follow. */
void ps_dump_event(struct ps_strbuf *out, const struct ps_reader *reader,
		   const struct ps_event *event);
/* The per-type record counts that end a dump. */
void ps_dump_stats(struct ps_strbuf *out, const struct ps_reader *reader);

/* `pystitch info`: the header and features, like `perf report --header-only`. */
void ps_info_print(struct ps_strbuf *out, const struct ps_reader *reader);

#endif /* PS_OUTPUT_OUTPUT_H */
