/* libFuzzer target for tracing data: every input is a TRACING_DATA blob
 * (the tracefs event formats perf saves with a tracepoint capture), given to
 * the reader as the payload of a pipe-mode HEADER_TRACING_DATA record, the
 * way `perf record -o -` delivers it (src/reader/tracing.c and the checks
 * of tracing_check.c before libtraceevent sees a format). When the blob is
 * taken, a tracepoint sample of every event it defines is printed through
 * `pystitch script`'s output code (libtraceevent's print formats), its raw
 * payload made of the input's last bytes, once whole and once cut short.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz_tracing
 * Run:   fuzz/run.sh 60 fuzz_tracing
 */
#include "fuzz_common.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

#include "output/output.h"
#include "pystitch/pystitch.h"

#define MAX_EVENTS 16
#define MAX_RAW 256
#define SHORT_RAW 12

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* A pipe stream: the 16-byte header, then the record and its payload. */
static uint8_t *pipe_stream(const uint8_t *data, size_t size, size_t *len)
{
	size_t padded = (size + 7) & ~(size_t)7;
	uint8_t *s = calloc(1, 32 + padded);
	uint32_t record[4] = { PS_RECORD_HEADER_TRACING_DATA, 16 << 16, (uint32_t)size, 0 };

	if (!s)
		return NULL;
	memcpy(s, "PERFILE2", 8);
	put_u64(s + 8, 16);
	/* type, misc 0 and size 16 in the low and high halves of word 1 */
	memcpy(s + 16, record, sizeof(record));
	memcpy(s + 32, data, size);
	*len = 32 + padded;
	return s;
}

static void print_event(struct ps_script_format *fmt, struct tep_handle *tep,
                        const struct tep_event *event, const uint8_t *data, size_t size,
                        size_t raw_size)
{
	struct ps_attr attr = { .type = PERF_TYPE_TRACEPOINT, .name = "fuzz:fuzz" };
	struct ps_event record = { .type = PERF_RECORD_SAMPLE, .attr = &attr };
	struct ps_sample *sample = &record.u.sample;
	struct ps_stack stack = { .event = &record, .comm = "fuzz" };
	struct ps_strbuf out = PS_STRBUF_INIT;
	/* exactly raw_size bytes, so a read past them is caught */
	uint8_t *raw = malloc(raw_size);
	uint16_t type = (uint16_t)event->id;

	if (!raw)
		return;
	memset(raw, 0, raw_size);
	memcpy(raw, data + size - (size < raw_size ? size : raw_size),
	       size < raw_size ? size : raw_size);
	/* common_type, in the recording machine's order */
	if (tep_is_file_bigendian(tep) != tep_is_bigendian())
		type = (uint16_t)(type >> 8 | type << 8);
	memcpy(raw, &type, sizeof(type));
	sample->sample_type = PERF_SAMPLE_RAW;
	sample->pid = sample->tid = 1;
	sample->raw = raw;
	sample->raw_size = (uint32_t)raw_size;
	ps_script_print(&out, fmt, &stack);
	ps_strbuf_release(&out);
	free(raw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PS_OPTS(ps_reader_opts, opts, .order = PS_ORDER_TIME);
	struct ps_reader *reader = NULL;
	const struct ps_event *event;
	struct ps_script_format fmt;
	struct tep_handle *tep;
	char path[64], err[256];
	size_t len;
	uint8_t *stream = pipe_stream(data, size, &len);
	int fd;

	if (!stream)
		return 0;
	fd = fuzz_input_file(stream, len, path, sizeof(path));
	free(stream);
	if (fd < 0)
		return 0;
	if (ps_reader_open_fd(fd, "fuzz", &opts, &reader) == 0) {
		while (ps_reader_next(reader, &event) > 0)
			;
		tep = ps_reader_tep(reader);
		if (tep && size >= 2 &&
		    ps_script_format_init(&fmt, reader, NULL, false, false, err, sizeof(err)) == 0)
			for (int i = 0; i < tep_get_events_count(tep) && i < MAX_EVENTS; i++) {
				const struct tep_event *ev = tep_get_event(tep, i);
				print_event(&fmt, tep, ev, data, size, MAX_RAW);
				print_event(&fmt, tep, ev, data, size, SHORT_RAW);
			}
	}
	ps_reader_close(reader);
	close(fd);
	return 0;
}
