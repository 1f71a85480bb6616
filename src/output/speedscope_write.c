/* Writing a speedscope profile (`pystitch speedscope`): the JSON document
 * of speedscope's file format, built from the tables speedscope.c filled
 * and handed to the caller a block at a time, so the document is never
 * held in memory whole. Names come from the capture's files: everything
 * is escaped so that a hostile name cannot break the document. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/sink.h"
#include "output/speedscope_priv.h"

/* The length of the well-formed UTF-8 sequence at s (len bytes left), or
 * 0 when s[0] does not start one (RFC 3629's table of well-formed byte
 * sequences: no overlong forms, surrogates or code points past
 * U+10FFFF). ASCII is not asked here. */
static size_t utf8_length(const unsigned char *s, size_t len)
{
	unsigned char low = 0x80, high = 0xbf;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* the second byte's range narrows for the lead bytes next to the
	 * forbidden forms */
	if (s[0] == 0xe0)
		low = 0xa0; /* overlong */
	else if (s[0] == 0xed)
		high = 0x9f; /* surrogates */
	else if (s[0] == 0xf0)
		low = 0x90; /* overlong */
	else if (s[0] == 0xf4)
		high = 0x8f; /* past U+10FFFF */
	if (len < n || s[1] < low || s[1] > high)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void ps_speedscope_add_json_string(struct ps_strbuf *out, const char *text, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0;

	ps_strbuf_addch(out, '"');
	while (i < len) {
		size_t plain = i, n;
		/* a run that needs no escape goes in one piece */
		while (plain < len && s[plain] >= 0x20 && s[plain] < 0x7f && s[plain] != '"' &&
		       s[plain] != '\\')
			plain++;
		if (plain > i) {
			ps_strbuf_add(out, s + i, plain - i);
			i = plain;
			continue;
		}
		switch (s[i]) {
		case '"':
			ps_strbuf_add(out, "\\\"", 2);
			break;
		case '\\':
			ps_strbuf_add(out, "\\\\", 2);
			break;
		case '\n':
			ps_strbuf_add(out, "\\n", 2);
			break;
		case '\r':
			ps_strbuf_add(out, "\\r", 2);
			break;
		case '\t':
			ps_strbuf_add(out, "\\t", 2);
			break;
		case '\b':
			ps_strbuf_add(out, "\\b", 2);
			break;
		case '\f':
			ps_strbuf_add(out, "\\f", 2);
			break;
		default:
			if (s[i] < 0x80) {
				/* the other control characters, and DEL */
				char escape[6] = { '\\',           'u',           '0', '0',
					           hex[s[i] >> 4], hex[s[i] & 15] };
				ps_strbuf_add(out, escape, sizeof(escape));
				break;
			}
			n = utf8_length(s + i, len - i);
			if (!n) {
				ps_strbuf_add(out, "\\ufffd", 6);
				break;
			}
			/* U+2028 and U+2029 are valid JSON but end a line in
			 * JavaScript before ES2019 */
			if (n == 3 && s[i] == 0xe2 && s[i + 1] == 0x80 &&
			    (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
				ps_strbuf_add(out, s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", 6);
			else
				ps_strbuf_add(out, s + i, n);
			i += n;
			continue;
		}
		i++;
	}
	ps_strbuf_addch(out, '"');
}

static void add_cstring(struct ps_strbuf *out, const char *text)
{
	ps_speedscope_add_json_string(out, text, strlen(text));
}

/* Where the document goes, and how much of it has gone. */
struct writer {
	struct ps_sink sink;
	uint64_t written;
};

/* Hand a full block over. 0 or the first failure. */
static int maybe_drain(struct writer *w)
{
	size_t len = w->sink.text.len;

	if (len < PS_SINK_BLOCK && !ps_strbuf_failed(&w->sink.text))
		return w->sink.error;
	if (ps_sink_drain(&w->sink))
		return w->sink.error;
	w->written += len;
	return 0;
}

static int drain(struct writer *w)
{
	size_t len = w->sink.text.len;

	if (ps_sink_drain(&w->sink))
		return w->sink.error;
	w->written += len;
	return 0;
}

static int write_frames(struct ps_speedscope *speedscope, struct writer *w)
{
	struct ps_strbuf *out = &w->sink.text;
	int err = 0;

	ps_strbuf_addstr(out, "\"shared\":{\"frames\":[");
	for (size_t i = 0; i < speedscope->frames.nr && !err; i++) {
		const uint64_t *head = key_words(&speedscope->frames, i);
		const char *name = (const char *)&head[FRAME_HEAD];

		ps_strbuf_addstr(out, i ? ",\n{\"name\":" : "\n{\"name\":");
		ps_speedscope_add_json_string(out, name, head[1]);
		if (head[2] != FRAME_NO_FILE) {
			ps_strbuf_add(out, ",\"file\":", 8);
			ps_speedscope_add_json_string(out, name + head[1], head[2]);
		}
		if (head[0]) {
			ps_strbuf_add(out, ",\"line\":", 8);
			ps_strbuf_add_uint(out, head[0], 0, false);
		}
		ps_strbuf_addch(out, '}');
		err = maybe_drain(w);
	}
	ps_strbuf_addstr(out, "\n]},\n");
	return err;
}

static int compare_samples(const void *left, const void *right)
{
	const struct speedscope_sample *a = left, *b = right;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int write_profile(struct ps_speedscope *speedscope, size_t index, struct writer *w)
{
	struct speedscope_profile *profile = &speedscope->profiles[index];
	const struct intern_entry *name = &speedscope->profile_names.entries[index];
	struct ps_strbuf *out = &w->sink.text;
	int err = 0;

	/* perf delivers samples in time order; this is for captures read in
	 * file order, whose rounds may overlap */
	if (profile->unordered) {
		qsort(profile->samples, profile->nr, sizeof(*profile->samples), compare_samples);
		profile->unordered = false;
	}
	ps_strbuf_addstr(out, index ? ",\n{\"type\":\"sampled\",\"name\":"
	                            : "\n{\"type\":\"sampled\",\"name\":");
	ps_speedscope_add_json_string(out, name->key, name->len);
	ps_strbuf_addstr(out, speedscope->opts.period && speedscope->only_clock
	                              ? ",\"unit\":\"nanoseconds\""
	                              : ",\"unit\":\"none\"");
	ps_strbuf_addstr(out, ",\"startValue\":0,\"endValue\":");
	ps_strbuf_add_uint(out, profile->weight, 0, false);
	ps_strbuf_addstr(out, ",\n\"samples\":[");
	for (size_t i = 0; i < profile->nr && !err; i++) {
		const struct intern_entry *stack =
		        &speedscope->stacks.entries[profile->samples[i].stack];
		const uint32_t *frames = stack->key;
		size_t nr = stack->len / sizeof(*frames);

		ps_strbuf_addstr(out, i ? ",\n[" : "\n[");
		for (size_t f = 0; f < nr; f++) {
			if (f)
				ps_strbuf_addch(out, ',');
			ps_strbuf_add_uint(out, frames[f], 0, false);
		}
		ps_strbuf_addch(out, ']');
		err = maybe_drain(w);
	}
	ps_strbuf_addstr(out, "],\n\"weights\":[");
	for (size_t i = 0; i < profile->nr && !err; i++) {
		if (i)
			ps_strbuf_addstr(out, i % 32 ? "," : ",\n");
		ps_strbuf_add_uint(out, profile->samples[i].weight, 0, false);
		err = maybe_drain(w);
	}
	ps_strbuf_addstr(out, "]}");
	return err;
}

/* The profile speedscope opens on: the heaviest, the first of equals. */
static size_t heaviest_profile(const struct ps_speedscope *speedscope)
{
	size_t best = 0;

	for (size_t i = 1; i < speedscope->stats.profiles; i++)
		if (speedscope->profiles[i].weight > speedscope->profiles[best].weight)
			best = i;
	return best;
}

int64_t ps_speedscope_write(struct ps_speedscope *speedscope, ps_write_fn write, void *ctx)
{
	struct writer w = { 0 };
	struct ps_strbuf *out = &w.sink.text;
	int err;

	ps_sink_init(&w.sink, write, ctx);
	ps_strbuf_addstr(out,
	                 "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	                 "\"exporter\":\"pystitch " PS_VERSION_STRING "\",");
	if (speedscope->name) {
		ps_strbuf_addstr(out, "\"name\":");
		add_cstring(out, speedscope->name);
		ps_strbuf_addch(out, ',');
	}
	ps_strbuf_addstr(out, "\"activeProfileIndex\":");
	ps_strbuf_add_uint(out, heaviest_profile(speedscope), 0, false);
	ps_strbuf_addstr(out, ",\n");
	err = write_frames(speedscope, &w);
	ps_strbuf_addstr(out, "\"profiles\":[");
	for (size_t i = 0; i < speedscope->stats.profiles && !err; i++)
		err = write_profile(speedscope, i, &w);
	ps_strbuf_addstr(out, "\n]}\n");
	if (!err)
		err = drain(&w);
	ps_sink_release(&w.sink);
	return err ? err : (int64_t)w.written;
}
