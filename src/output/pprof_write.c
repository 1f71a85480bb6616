/* Writing a pprof profile (`pystitch pprof`): the Profile message is built
 * from the tables src/output/pprof.c filled, in one arena, then packed by
 * protobuf-c straight into zlib's deflate, so the uncompressed message is
 * never held in memory. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/arena.h"
#include "base/opts.h"
#include "output/pprof_priv.h"
#include "output/profile.pb-c.h"
#include "output/sink.h"

/* protobuf-c hands the packed message over piece by piece; each piece
 * goes straight through deflate and on to the caller, so neither the
 * uncompressed nor the compressed profile is ever held in memory whole. */
struct gzip_sink {
	ProtobufCBuffer base; /* first: protobuf-c calls back with &base */
	z_stream stream;
	struct ps_sink *sink;
	uint64_t written; /* compressed bytes */
	bool failed;
};

static void gzip_run(struct gzip_sink *sink, int flush)
{
	z_stream *stream = &sink->stream;

	while (!sink->failed) {
		struct ps_strbuf *out = &sink->sink->text;
		size_t room;
		int ret;
		if (!ps_strbuf_reserve(out, 65536)) {
			sink->failed = true;
			return;
		}
		room = out->cap - out->len - 1;
		if (room > 1u << 30)
			room = 1u << 30;
		stream->next_out = (Bytef *)out->buf + out->len;
		stream->avail_out = (uInt)room;
		ret = deflate(stream, flush);
		out->len += room - stream->avail_out;
		out->buf[out->len] = 0;
		sink->written += room - stream->avail_out;
		if (ps_sink_maybe_drain(sink->sink)) {
			sink->failed = true;
			return;
		}
		if (ret == Z_STREAM_END)
			return;
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			sink->failed = true;
			return;
		}
		/* deflate stops early only when the output is full */
		if (flush == Z_NO_FLUSH && stream->avail_in == 0 && stream->avail_out != 0)
			return;
	}
}

static void gzip_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
	struct gzip_sink *sink = (struct gzip_sink *)buffer;

	while (len && !sink->failed) {
		uInt part = len > (1u << 30) ? 1u << 30 : (uInt)len;
		sink->stream.next_in = (Bytef *)data;
		sink->stream.avail_in = part;
		gzip_run(sink, Z_NO_FLUSH);
		data += part;
		len -= part;
	}
}

/* The two values of every sample: the number of samples, and the sum of
 * their periods in what the event counts. */
struct sample_types {
	int64_t samples, count, kind, unit;
};

static int sample_types(struct ps_pprof *pprof, struct sample_types *types)
{
	const char *kind = "events", *unit = "count";
	bool clock = pprof->event_type == PERF_TYPE_SOFTWARE &&
	             (pprof->event_config == PERF_COUNT_SW_CPU_CLOCK ||
	              pprof->event_config == PERF_COUNT_SW_TASK_CLOCK);

	if (pprof->have_event && !pprof->mixed_events) {
		if (clock) {
			kind = "cpu";
			unit = "nanoseconds";
		} else if (pprof->strings.entries[pprof->event_name].len) {
			kind = pprof->strings.entries[pprof->event_name].key;
		}
	}
	types->samples = ps_pprof_string(pprof, "samples");
	types->count = ps_pprof_string(pprof, "count");
	types->kind = ps_pprof_string(pprof, kind);
	types->unit = ps_pprof_string(pprof, unit);
	return types->samples < 0 || types->count < 0 || types->kind < 0 || types->unit < 0
	               ? -ENOMEM
	               : 0;
}

/* Lowercase hexadecimal, as pprof shows build ids. */
static int64_t build_id_string(struct ps_pprof *pprof, const struct ps_pprof_write_opts *info,
                               const char *filename)
{
	static const char digits[] = "0123456789abcdef";
	char hex[2 * sizeof(info->build_ids[0].id)];

	for (size_t i = 0; info && i < info->nr_build_ids; i++) {
		const struct ps_build_id *build_id = &info->build_ids[i];
		size_t size = build_id->size < sizeof(build_id->id) ? build_id->size
		                                                    : sizeof(build_id->id);
		if (!build_id->filename || strcmp(build_id->filename, filename) != 0)
			continue;
		for (size_t b = 0; b < size; b++) {
			hex[2 * b] = digits[build_id->id[b] >> 4];
			hex[2 * b + 1] = digits[build_id->id[b] & 15];
		}
		return ps_pprof_string_len(pprof, hex, 2 * size);
	}
	return 0;
}

/* Everything the message points to lives in one arena, freed after
 * packing. */
static void *alloc_array(struct ps_arena *arena, size_t nr, size_t size)
{
	if (nr && size > SIZE_MAX / nr)
		return NULL;
	return ps_arena_alloc(arena, nr * size);
}

/* The string of the executable most samples ran (the first of equals),
 * or 0 when no sample named one. */
static int64_t main_executable(const struct ps_pprof *pprof)
{
	int64_t best = 0;

	for (size_t i = 1; i < pprof->nr_executable_samples; i++)
		if (pprof->executable_samples[i] > pprof->executable_samples[best])
			best = (int64_t)i;
	return pprof->nr_executable_samples && pprof->executable_samples[best] ? best : 0;
}

static int build_mapping(struct ps_pprof *pprof, const struct ps_pprof_write_opts *info,
                         size_t index, uint64_t id, Perftools__Profiles__Mapping *mapping)
{
	const uint64_t *key = key_words(&pprof->mappings, index);
	const struct mapping_info *seen = &pprof->mapping_info[index];
	int64_t build_id = build_id_string(pprof, info, pprof->strings.entries[key[1]].key);

	if (build_id < 0)
		return -ENOMEM;
	perftools__profiles__mapping__init(mapping);
	mapping->id = id;
	/* addresses are file offsets for user code (see output.h), so the
	 * range seen maps onto the same offsets in the file */
	mapping->memory_start = seen->low;
	mapping->memory_limit = seen->high + 1;
	mapping->file_offset = key[0] ? 0 : seen->low;
	mapping->filename = (int64_t)key[1];
	mapping->build_id = build_id;
	mapping->has_functions = seen->has_functions;
	mapping->has_filenames = seen->has_filenames;
	mapping->has_line_numbers = seen->has_filenames;
	mapping->has_inline_frames = seen->has_inline_frames;
	return 0;
}

/* profile.proto: "The first mapping is the main binary" (pprof heads its
 * reports with its file and build id), so the executable most samples ran
 * comes first: its own mapping or, when no frame fell in it, one without
 * addresses. The others follow in the order they were met. A mapping's id
 * is its place + 1; *ids (in the arena) maps the tables' ids (index + 1,
 * which the locations' keys hold) to those. */
static int build_mappings(struct ps_pprof *pprof, const struct ps_pprof_write_opts *info,
                          struct ps_arena *arena, Perftools__Profiles__Profile *profile,
                          uint64_t **ids)
{
	size_t nr = pprof->mappings.nr, first = nr, next = 0;
	int64_t executable = main_executable(pprof);
	Perftools__Profiles__Mapping *mappings = alloc_array(arena, nr + 1, sizeof(*mappings));

	profile->mapping = alloc_array(arena, nr + 1, sizeof(*profile->mapping));
	*ids = alloc_array(arena, nr + 1, sizeof(**ids));
	if (!mappings || !profile->mapping || !*ids)
		return -ENOMEM;
	for (size_t i = 0; executable && i < nr && first == nr; i++) {
		const uint64_t *key = key_words(&pprof->mappings, i);
		if (!key[0] && key[1] == (uint64_t)executable)
			first = i;
	}
	if (first < nr) {
		if (build_mapping(pprof, info, first, 1, &mappings[first]))
			return -ENOMEM;
		(*ids)[first + 1] = 1;
		profile->mapping[next++] = &mappings[first];
	} else if (executable) {
		Perftools__Profiles__Mapping *mapping = &mappings[nr];
		int64_t build_id =
		        build_id_string(pprof, info, pprof->strings.entries[executable].key);
		if (build_id < 0)
			return -ENOMEM;
		perftools__profiles__mapping__init(mapping);
		mapping->id = 1;
		mapping->filename = executable;
		mapping->build_id = build_id;
		profile->mapping[next++] = mapping;
	}
	for (size_t i = 0; i < nr; i++) {
		if (i == first)
			continue;
		if (build_mapping(pprof, info, i, next + 1, &mappings[i]))
			return -ENOMEM;
		(*ids)[i + 1] = next + 1;
		profile->mapping[next++] = &mappings[i];
	}
	profile->n_mapping = next;
	return 0;
}

static int build_locations(struct ps_pprof *pprof, struct ps_arena *arena,
                           Perftools__Profiles__Profile *profile, const uint64_t *mapping_ids)
{
	size_t nr = pprof->locations.nr, nr_lines = 0, next_line = 0;
	Perftools__Profiles__Location *locations = alloc_array(arena, nr, sizeof(*locations));
	Perftools__Profiles__Line *lines, **line_pointers;

	for (size_t i = 0; i < nr; i++)
		nr_lines += key_words(&pprof->locations, i)[2];
	lines = alloc_array(arena, nr_lines, sizeof(*lines));
	line_pointers = alloc_array(arena, nr_lines, sizeof(*line_pointers));
	profile->location = alloc_array(arena, nr, sizeof(*profile->location));
	if (!locations || !lines || !line_pointers || !profile->location)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const uint64_t *key = key_words(&pprof->locations, i);
		Perftools__Profiles__Location *location = &locations[i];
		perftools__profiles__location__init(location);
		location->id = i + 1;
		location->mapping_id = key[0] ? mapping_ids[key[0]] : 0;
		location->address = key[1];
		location->n_line = key[2];
		location->line = &line_pointers[next_line];
		for (size_t l = 0; l < key[2]; l++, next_line++) {
			Perftools__Profiles__Line *line = &lines[next_line];
			perftools__profiles__line__init(line);
			line->function_id = key[LOCATION_HEAD + 2 * l];
			line->line = (int64_t)key[LOCATION_HEAD + 2 * l + 1];
			line_pointers[next_line] = line;
		}
		profile->location[i] = location;
	}
	profile->n_location = nr;
	return 0;
}

static int build_functions(struct ps_pprof *pprof, struct ps_arena *arena,
                           Perftools__Profiles__Profile *profile)
{
	size_t nr = pprof->functions.nr;
	Perftools__Profiles__Function *functions = alloc_array(arena, nr, sizeof(*functions));

	profile->function = alloc_array(arena, nr, sizeof(*profile->function));
	if (!functions || !profile->function)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const uint64_t *key = key_words(&pprof->functions, i);
		perftools__profiles__function__init(&functions[i]);
		functions[i].id = i + 1;
		functions[i].name = (int64_t)key[0];
		functions[i].system_name = (int64_t)key[1];
		functions[i].filename = (int64_t)key[2];
		profile->function[i] = &functions[i];
	}
	profile->n_function = nr;
	return 0;
}

/* Labels of a sample: pid and tid as numbers, comm as a string, and the
 * event's name when the capture sampled several events. */
struct label_keys {
	int64_t pid, tid, comm, event;
};

static int build_samples(struct ps_pprof *pprof, const struct label_keys *keys,
                         struct ps_arena *arena, Perftools__Profiles__Profile *profile)
{
	size_t nr = pprof->samples.nr, per_sample = pprof->mixed_events ? 4 : 3;
	Perftools__Profiles__Sample *samples = alloc_array(arena, nr, sizeof(*samples));
	Perftools__Profiles__Label *labels = alloc_array(arena, nr * per_sample, sizeof(*labels));
	Perftools__Profiles__Label **label_pointers =
	        alloc_array(arena, nr * per_sample, sizeof(*label_pointers));
	int64_t *values = alloc_array(arena, nr * 2, sizeof(*values));

	profile->sample = alloc_array(arena, nr, sizeof(*profile->sample));
	if (!samples || !labels || !label_pointers || !values || !profile->sample)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const uint64_t *key = key_words(&pprof->samples, i);
		Perftools__Profiles__Sample *sample = &samples[i];
		Perftools__Profiles__Label *label = &labels[i * per_sample];
		perftools__profiles__sample__init(sample);
		/* the ids follow the key's head in place, already u64s */
		sample->n_location_id = key[4];
		sample->location_id = (uint64_t *)&key[SAMPLE_HEAD];
		values[2 * i] = (int64_t)pprof->values[i].count;
		values[2 * i + 1] = (int64_t)pprof->values[i].period;
		sample->n_value = 2;
		sample->value = &values[2 * i];
		for (size_t l = 0; l < per_sample; l++) {
			perftools__profiles__label__init(&label[l]);
			label_pointers[i * per_sample + l] = &label[l];
		}
		label[0].key = keys->pid;
		label[0].num = (int64_t)key[1];
		label[1].key = keys->tid;
		label[1].num = (int64_t)key[2];
		label[2].key = keys->comm;
		label[2].str = (int64_t)key[0];
		if (per_sample > 3) {
			label[3].key = keys->event;
			label[3].str = (int64_t)key[3];
		}
		sample->n_label = per_sample;
		sample->label = &label_pointers[i * per_sample];
		profile->sample[i] = sample;
	}
	profile->n_sample = nr;
	return 0;
}

static int build_profile(struct ps_pprof *pprof, const struct ps_pprof_write_opts *info,
                         struct ps_arena *arena, Perftools__Profiles__Profile *profile,
                         Perftools__Profiles__ValueType types[3])
{
	struct sample_types names;
	uint64_t *mapping_ids = NULL;
	struct label_keys keys = {
		.pid = ps_pprof_string(pprof, "pid"),
		.tid = ps_pprof_string(pprof, "tid"),
		.comm = ps_pprof_string(pprof, "comm"),
		.event = pprof->mixed_events ? ps_pprof_string(pprof, "event") : 0,
	};
	int err;

	if (keys.pid < 0 || keys.tid < 0 || keys.comm < 0 || keys.event < 0)
		return -ENOMEM;
	err = sample_types(pprof, &names);
	if (!err)
		err = build_mappings(pprof, info, arena, profile, &mapping_ids);
	if (!err)
		err = build_locations(pprof, arena, profile, mapping_ids);
	if (!err)
		err = build_functions(pprof, arena, profile);
	if (!err)
		err = build_samples(pprof, &keys, arena, profile);
	if (err)
		return err;
	for (size_t i = 0; i < 3; i++)
		perftools__profiles__value_type__init(&types[i]);
	types[0].type = names.samples;
	types[0].unit = names.count;
	types[1].type = types[2].type = names.kind;
	types[1].unit = types[2].unit = names.unit;
	profile->sample_type = alloc_array(arena, 2, sizeof(*profile->sample_type));
	if (!profile->sample_type)
		return -ENOMEM;
	profile->sample_type[0] = &types[0];
	profile->sample_type[1] = &types[1];
	profile->n_sample_type = 2;
	profile->period_type = &types[2];
	profile->default_sample_type = names.kind;
	if (pprof->event_period && !pprof->event_freq && !pprof->mixed_events)
		profile->period = (int64_t)pprof->event_period;
	else if (pprof->stats.nr_added)
		profile->period = (int64_t)(pprof->stats.period / pprof->stats.nr_added);
	profile->time_nanos = info ? info->time_nanos : 0;
	if (pprof->have_time)
		profile->duration_nanos = (int64_t)(pprof->last_time - pprof->first_time);

	/* last, once every string is interned */
	profile->string_table = alloc_array(arena, pprof->strings.nr, sizeof(char *));
	if (!profile->string_table)
		return -ENOMEM;
	for (size_t i = 0; i < pprof->strings.nr; i++)
		profile->string_table[i] = (char *)pprof->strings.entries[i].key;
	profile->n_string_table = pprof->strings.nr;
	return 0;
}

int64_t ps_pprof_write(struct ps_pprof *pprof, const struct ps_pprof_write_opts *opts,
                       ps_write_fn write, void *ctx)
{
	Perftools__Profiles__Profile profile = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType types[3];
	struct ps_pprof_write_opts info;
	struct ps_sink out;
	struct gzip_sink sink = { .base = { .append = gzip_append }, .sink = &out };
	struct ps_arena arena = { 0 };
	int err;

	if (ps_opts_copy(&info, sizeof(info), opts))
		return -EINVAL;
	ps_sink_init(&out, write, ctx);
	err = build_profile(pprof, &info, &arena, &profile, types);
	if (err)
		goto out;
	/* windowBits 15 + 16: a gzip stream, not a bare zlib one */
	if (deflateInit2(&sink.stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
	                 Z_DEFAULT_STRATEGY) != Z_OK) {
		err = -ENOMEM;
		goto out;
	}
	protobuf_c_message_pack_to_buffer(&profile.base, &sink.base);
	sink.stream.next_in = NULL;
	sink.stream.avail_in = 0;
	gzip_run(&sink, Z_FINISH);
	deflateEnd(&sink.stream);
	err = ps_sink_drain(&out);
	if (!err && sink.failed)
		err = -ENOMEM;
out:
	ps_sink_release(&out);
	ps_arena_free(&arena);
	return err ? err : (int64_t)sink.written;
}
