/* Unit tests of src/output/pprof (Check): profiles built from hand-made
 * stacks, gunzipped with zlib and decoded with protobuf-c's generated
 * unpack function. Every profile is checked for the format's invariants
 * (string 0 is "", ids are non-zero and unique, every id and string index
 * referred to exists), then for its content: aggregation, labels, inline
 * chains as lines, Python frames, mappings and build ids, sample types.
 * Check's environment variables pick what runs: CK_RUN_CASE,
 * CK_VERBOSITY, CK_FORK=no. */
#include <check.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/output.h"
#include "capture.h"
#include "output/profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;

struct fake {
	struct ps_attr attr;
	struct ps_event event;
	struct ps_frame frames[8];
	struct ps_stack stack;
};

static const char *const LIBC = "/usr/lib/libc.so.6";
static const char *const KERNEL = "[kernel.kallsyms]";

static void fake_init(struct fake *f, const char *comm, uint32_t pid, uint32_t tid, uint64_t period,
                      uint64_t time)
{
	memset(f, 0, sizeof(*f));
	f->attr.type = PERF_TYPE_SOFTWARE;
	f->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	f->attr.name = "cpu-clock:ppp";
	f->attr.flags = PS_ATTR_FREQ;
	f->event.u.sample.sample_type = PERF_SAMPLE_TIME;
	f->event.u.sample.pid = pid;
	f->event.u.sample.tid = tid;
	f->event.u.sample.period = period;
	f->event.u.sample.time = time;
	f->stack.event = &f->event;
	f->event.attr = &f->attr;
	f->stack.comm = comm;
	f->stack.has_callchain = true;
	f->stack.frames = f->frames;
}

/* Append a frame, leaf first. */
static struct ps_frame *frame(struct fake *f, const char *sym, const char *dso, uint64_t addr)
{
	struct ps_frame *fr = &f->frames[f->stack.nr_frames++];

	fr->sym = sym;
	fr->dso = dso;
	fr->addr = addr;
	fr->kernel = dso == KERNEL;
	fr->python = sym && strncmp(sym, "py::", 4) == 0;
	return fr;
}

static struct ps_pprof *open_pprof(const struct ps_pprof_opts *opts)
{
	struct ps_pprof *pprof;

	ck_assert_int_eq(ps_pprof_open(opts, &pprof), 0);
	return pprof;
}

/* The profile written, gunzipped and decoded. */
static Profile *write_and_decode(struct ps_pprof *pprof, const struct ps_pprof_write_opts *info)
{
	struct ps_strbuf out = PS_STRBUF_INIT;
	z_stream stream = { 0 };
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	Profile *profile;

	ck_assert_ptr_nonnull(raw);
	int64_t written = ps_pprof_write(pprof, info, capture_write, &out);

	ck_assert_int_eq(written, (int64_t)out.len);
	ck_assert_uint_gt(out.len, 18);
	ck_assert_uint_eq((uint8_t)out.buf[0], 0x1f); /* gzip magic */
	ck_assert_uint_eq((uint8_t)out.buf[1], 0x8b);
	ck_assert_int_eq(inflateInit2(&stream, 15 + 16), Z_OK);
	stream.next_in = (Bytef *)out.buf;
	stream.avail_in = (uInt)out.len;
	stream.next_out = raw;
	stream.avail_out = (uInt)cap;
	ck_assert_int_eq(inflate(&stream, Z_FINISH), Z_STREAM_END);
	profile = perftools__profiles__profile__unpack(NULL, stream.total_out, raw);
	inflateEnd(&stream);
	free(raw);
	ps_strbuf_release(&out);
	ck_assert_ptr_nonnull(profile);
	return profile;
}

static void check_string(const Profile *p, int64_t index)
{
	ck_assert_int_ge(index, 0);
	ck_assert_uint_lt((size_t)index, p->n_string_table);
}

/* The format's invariants. */
static void check_invariants(const Profile *p)
{
	ck_assert_uint_ge(p->n_string_table, 1);
	ck_assert_str_eq(p->string_table[0], "");
	for (size_t i = 0; i < p->n_string_table; i++)
		for (size_t j = i + 1; j < p->n_string_table; j++)
			ck_assert_str_ne(p->string_table[i], p->string_table[j]);
	for (size_t i = 0; i < p->n_sample_type; i++) {
		check_string(p, p->sample_type[i]->type);
		check_string(p, p->sample_type[i]->unit);
	}
	/* ids are their position + 1, so they are unique, non-zero and
	 * easy to look up */
	for (size_t i = 0; i < p->n_mapping; i++) {
		bool used = false;
		ck_assert_uint_eq(p->mapping[i]->id, i + 1);
		check_string(p, p->mapping[i]->filename);
		check_string(p, p->mapping[i]->build_id);
		for (size_t l = 0; l < p->n_location; l++)
			used |= p->location[l]->mapping_id == i + 1;
		/* only the main binary, put first when no frame fell in it,
		 * has no addresses */
		if (used) {
			ck_assert_uint_lt(p->mapping[i]->memory_start, p->mapping[i]->memory_limit);
		} else {
			ck_assert_uint_eq(i, 0);
			ck_assert_uint_eq(p->mapping[i]->memory_start, 0);
			ck_assert_uint_eq(p->mapping[i]->memory_limit, 0);
		}
	}
	for (size_t i = 0; i < p->n_function; i++) {
		ck_assert_uint_eq(p->function[i]->id, i + 1);
		check_string(p, p->function[i]->name);
		check_string(p, p->function[i]->system_name);
		check_string(p, p->function[i]->filename);
	}
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		ck_assert_uint_eq(l->id, i + 1);
		ck_assert_uint_le(l->mapping_id, p->n_mapping);
		if (l->mapping_id) {
			ck_assert_uint_ge(l->address, p->mapping[l->mapping_id - 1]->memory_start);
			ck_assert_uint_lt(l->address, p->mapping[l->mapping_id - 1]->memory_limit);
		}
		for (size_t j = 0; j < l->n_line; j++) {
			ck_assert_uint_ge(l->line[j]->function_id, 1);
			ck_assert_uint_le(l->line[j]->function_id, p->n_function);
		}
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		ck_assert_uint_eq(s->n_value, p->n_sample_type);
		for (size_t j = 0; j < s->n_location_id; j++) {
			ck_assert_uint_ge(s->location_id[j], 1);
			ck_assert_uint_le(s->location_id[j], p->n_location);
		}
		for (size_t j = 0; j < s->n_label; j++) {
			check_string(p, s->label[j]->key);
			check_string(p, s->label[j]->str);
		}
	}
}

static const char *str(const Profile *p, int64_t index)
{
	check_string(p, index);
	return p->string_table[index];
}

static const Perftools__Profiles__Function *
line_function(const Profile *p, const Perftools__Profiles__Location *l, size_t line)
{
	ck_assert_uint_lt(line, l->n_line);
	return p->function[l->line[line]->function_id - 1];
}

static const Perftools__Profiles__Location *sample_location(const Profile *p, size_t sample,
                                                            size_t index)
{
	ck_assert_uint_lt(index, p->sample[sample]->n_location_id);
	return p->location[p->sample[sample]->location_id[index] - 1];
}

/* The label key's value in a sample: its string, or its number printed. */
static const char *label(const Profile *p, size_t sample, const char *key, char *buf, size_t size)
{
	const Perftools__Profiles__Sample *s = p->sample[sample];

	for (size_t i = 0; i < s->n_label; i++) {
		if (strcmp(str(p, s->label[i]->key), key) != 0)
			continue;
		if (s->label[i]->str)
			return str(p, s->label[i]->str);
		snprintf(buf, size, "%lld", (long long)s->label[i]->num);
		return buf;
	}
	return NULL;
}

START_TEST(aggregates_and_labels)
{
	struct ps_pprof *pprof = open_pprof(NULL);
	struct fake f;
	char buf[32];
	Profile *p;

	ck_assert_ptr_nonnull(pprof);
	for (int i = 0; i < 3; i++) {
		fake_init(&f, "my app", 42, 43, 1000 + (uint64_t)i, 5000 + 100 * (uint64_t)i);
		frame(&f, "work", LIBC, 0x1234);
		frame(&f, "main", LIBC, 0x1000);
		ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	}
	/* another thread: another sample, the same locations */
	fake_init(&f, "my app", 42, 44, 7, 5500);
	frame(&f, "work", LIBC, 0x1234);
	frame(&f, "main", LIBC, 0x1000);
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	ck_assert_uint_eq(ps_pprof_stats(pprof)->nr_added, 4);
	ck_assert_uint_eq(ps_pprof_stats(pprof)->samples, 2);

	p = write_and_decode(
	        pprof, &(struct ps_pprof_write_opts){ .sz = sizeof(struct ps_pprof_write_opts),
	                                              .time_nanos = 123 });
	check_invariants(p);
	ck_assert_uint_eq(p->n_sample, 2);
	ck_assert_uint_eq(p->n_location, 2);
	ck_assert_uint_eq(p->n_function, 2);
	ck_assert_uint_eq(p->n_mapping, 1);
	ck_assert_int_eq(p->sample[0]->value[0], 3);
	ck_assert_int_eq(p->sample[0]->value[1], 1000 + 1001 + 1002);
	ck_assert_int_eq(p->sample[1]->value[0], 1);
	ck_assert_int_eq(p->sample[1]->value[1], 7);
	/* leaf first */
	ck_assert_str_eq(str(p, line_function(p, sample_location(p, 0, 0), 0)->name), "work");
	ck_assert_str_eq(str(p, line_function(p, sample_location(p, 0, 1), 0)->name), "main");
	ck_assert_uint_eq(sample_location(p, 0, 0)->address, 0x1234);
	ck_assert_str_eq(label(p, 0, "pid", buf, sizeof(buf)), "42");
	ck_assert_str_eq(label(p, 0, "tid", buf, sizeof(buf)), "43");
	ck_assert_str_eq(label(p, 1, "tid", buf, sizeof(buf)), "44");
	ck_assert_str_eq(label(p, 0, "comm", buf, sizeof(buf)), "my app");
	ck_assert_ptr_null(label(p, 0, "event", buf, sizeof(buf)));
	/* cpu-clock: nanoseconds of CPU; -F: the mean period */
	ck_assert_uint_eq(p->n_sample_type, 2);
	ck_assert_str_eq(str(p, p->sample_type[0]->type), "samples");
	ck_assert_str_eq(str(p, p->sample_type[0]->unit), "count");
	ck_assert_str_eq(str(p, p->sample_type[1]->type), "cpu");
	ck_assert_str_eq(str(p, p->sample_type[1]->unit), "nanoseconds");
	ck_assert_str_eq(str(p, p->period_type->type), "cpu");
	ck_assert_str_eq(str(p, p->default_sample_type), "cpu");
	ck_assert_int_eq(p->period, (1000 + 1001 + 1002 + 7) / 4);
	ck_assert_int_eq(p->time_nanos, 123);
	ck_assert_int_eq(p->duration_nanos, 500);
	/* the mapping covers the addresses seen, as file offsets */
	ck_assert_str_eq(str(p, p->mapping[0]->filename), LIBC);
	ck_assert_uint_eq(p->mapping[0]->memory_start, 0x1000);
	ck_assert_uint_eq(p->mapping[0]->memory_limit, 0x1235);
	ck_assert_uint_eq(p->mapping[0]->file_offset, 0x1000);
	ck_assert(p->mapping[0]->has_functions);
	ck_assert(!p->mapping[0]->has_inline_frames);
	perftools__profiles__profile__free_unpacked(p, NULL);
	ps_pprof_close(pprof);
}
END_TEST

START_TEST(frames_of_every_kind)
{
	static const uint8_t id[20] = { 0xab, 0x01, 0x23 };
	struct ps_build_id build_ids[] = {
		{ .size = 20, .filename = LIBC },
		{ .size = 3, .filename = KERNEL },
	};
	struct ps_pprof *pprof = open_pprof(NULL);
	const Perftools__Profiles__Location *l;
	const Perftools__Profiles__Function *fn;
	struct fake f;
	Profile *p;

	memcpy(build_ids[0].id, id, sizeof(id));
	memcpy(build_ids[1].id, id, 3);
	fake_init(&f, "python3", 7, 7, 1, 0);
	frame(&f, "copy_page", KERNEL, 0xffffffff81000010ull);
	frame(&f, NULL, LIBC, 0x77);
	frame(&f, "inner", LIBC, 0x500)->inlined = true;
	frame(&f, "middle", LIBC, 0x500)->inlined = true;
	frame(&f, "outer", LIBC, 0x500);
	frame(&f, "py::Shape.area:/src/app.py", "//anon", 0x7f00);
	frame(&f, "py::<module>:/src/a:b.py", "//anon", 0x7f20);
	f.frames[f.stack.nr_frames].sym = "[truncated]";
	f.frames[f.stack.nr_frames++].truncated = true;
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	p = write_and_decode(
	        pprof, &(struct ps_pprof_write_opts){ .sz = sizeof(struct ps_pprof_write_opts),
	                                              .nr_build_ids = 2,
	                                              .build_ids = build_ids });
	check_invariants(p);
	ck_assert_uint_eq(p->n_sample, 1);
	ck_assert_uint_eq(p->sample[0]->n_location_id, 6);

	l = sample_location(p, 0, 0);
	ck_assert_str_eq(str(p, p->mapping[l->mapping_id - 1]->filename), KERNEL);
	ck_assert_str_eq(str(p, p->mapping[l->mapping_id - 1]->build_id), "ab0123");
	ck_assert_uint_eq(p->mapping[l->mapping_id - 1]->file_offset, 0);
	ck_assert_uint_eq(l->address, 0xffffffff81000010ull);
	ck_assert_str_eq(str(p, line_function(p, l, 0)->filename), KERNEL);

	/* unknown symbol: a mapped address without lines */
	l = sample_location(p, 0, 1);
	ck_assert_uint_eq(l->n_line, 0);
	ck_assert_uint_eq(l->address, 0x77);
	ck_assert_str_eq(str(p, p->mapping[l->mapping_id - 1]->filename), LIBC);
	ck_assert_str_eq(str(p, p->mapping[l->mapping_id - 1]->build_id),
	                 "ab01230000000000000000000000000000000000");

	/* an inline chain: one location, innermost function first */
	l = sample_location(p, 0, 2);
	ck_assert_uint_eq(l->n_line, 3);
	ck_assert_uint_eq(l->address, 0x500);
	ck_assert_str_eq(str(p, line_function(p, l, 0)->name), "inner");
	ck_assert_str_eq(str(p, line_function(p, l, 1)->name), "middle");
	ck_assert_str_eq(str(p, line_function(p, l, 2)->name), "outer");
	ck_assert_str_eq(str(p, line_function(p, l, 2)->filename), LIBC);
	ck_assert(p->mapping[l->mapping_id - 1]->has_inline_frames);

	/* Python frames: qualname in its file, no mapping, no address */
	l = sample_location(p, 0, 3);
	fn = line_function(p, l, 0);
	ck_assert_uint_eq(l->mapping_id, 0);
	ck_assert_uint_eq(l->address, 0);
	ck_assert_str_eq(str(p, fn->name), "Shape.area");
	ck_assert_str_eq(str(p, fn->filename), "/src/app.py");
	ck_assert_str_eq(str(p, fn->system_name), "py::Shape.area:/src/app.py");
	fn = line_function(p, sample_location(p, 0, 4), 0);
	ck_assert_str_eq(str(p, fn->name), "<module>");
	ck_assert_str_eq(str(p, fn->filename), "/src/a:b.py");

	l = sample_location(p, 0, 5);
	ck_assert_uint_eq(l->mapping_id, 0);
	ck_assert_str_eq(str(p, line_function(p, l, 0)->name), "[truncated]");
	/* the Python frames' JIT object is not a mapping */
	ck_assert_uint_eq(p->n_mapping, 2);
	perftools__profiles__profile__free_unpacked(p, NULL);
	ps_pprof_close(pprof);
}
END_TEST

START_TEST(srclines)
{
	struct ps_pprof_opts opts = { .sz = sizeof(opts), .srcline = true };
	struct ps_pprof *pprof = open_pprof(&opts);
	const Perftools__Profiles__Location *l;
	struct fake f;
	Profile *p;

	fake_init(&f, "app", 1, 1, 1, 0);
	frame(&f, "work", LIBC, 0x10)->srcline = "work.c:12";
	frame(&f, "main", LIBC, 0x20)->srcline = "??:0";
	frame(&f, "start", LIBC, 0x30)->srcline = "libc.so.6[30]";
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	p = write_and_decode(pprof, NULL);
	check_invariants(p);
	l = sample_location(p, 0, 0);
	ck_assert_str_eq(str(p, line_function(p, l, 0)->filename), "work.c");
	ck_assert_int_eq(l->line[0]->line, 12);
	l = sample_location(p, 0, 1);
	ck_assert_str_eq(str(p, line_function(p, l, 0)->filename), LIBC);
	ck_assert_int_eq(l->line[0]->line, 0);
	l = sample_location(p, 0, 2);
	ck_assert_str_eq(str(p, line_function(p, l, 0)->filename), LIBC);
	ck_assert(p->mapping[0]->has_filenames);
	perftools__profiles__profile__free_unpacked(p, NULL);
	ps_pprof_close(pprof);
}
END_TEST

START_TEST(events)
{
	struct ps_pprof *pprof = open_pprof(NULL);
	struct fake f;
	char buf[32];
	Profile *p;

	/* one counting event: its name, counted, at its fixed period */
	fake_init(&f, "app", 1, 1, 100000, 0);
	f.attr = (struct ps_attr){ .type = PERF_TYPE_HARDWARE,
		                   .name = "cycles:P",
		                   .sample_period = 100000 };
	frame(&f, "work", LIBC, 0x10);
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	p = write_and_decode(pprof, NULL);
	check_invariants(p);
	ck_assert_str_eq(str(p, p->sample_type[1]->type), "cycles");
	ck_assert_str_eq(str(p, p->sample_type[1]->unit), "count");
	ck_assert_int_eq(p->period, 100000);
	ck_assert_int_eq(p->duration_nanos, 0);
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* a second event: samples carry its name in a label */
	f.attr.name = "instructions";
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	p = write_and_decode(pprof, NULL);
	check_invariants(p);
	ck_assert_uint_eq(p->n_sample, 2);
	ck_assert_str_eq(str(p, p->sample_type[1]->type), "events");
	ck_assert_str_eq(label(p, 0, "event", buf, sizeof(buf)), "cycles");
	ck_assert_str_eq(label(p, 1, "event", buf, sizeof(buf)), "instructions");
	perftools__profiles__profile__free_unpacked(p, NULL);
	ps_pprof_close(pprof);
}
END_TEST

START_TEST(empty_and_no_callchain)
{
	struct ps_pprof *pprof = open_pprof(NULL);
	struct fake f;
	Profile *p;

	p = write_and_decode(pprof, NULL);
	check_invariants(p);
	ck_assert_uint_eq(p->n_sample, 0);
	/* "", the label keys pid, tid, comm, the types samples, events, count */
	ck_assert_uint_eq(p->n_string_table, 7);
	ck_assert_str_eq(str(p, p->sample_type[1]->type), "events");
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* without a call chain only the sampled IP counts */
	fake_init(&f, NULL, 1, 1, 1, 0);
	f.stack.has_callchain = false;
	frame(&f, "work", LIBC, 0x10);
	frame(&f, "main", LIBC, 0x20);
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	f.stack.nr_frames = 0;
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	p = write_and_decode(pprof, NULL);
	check_invariants(p);
	ck_assert_uint_eq(p->n_sample, 2);
	ck_assert_uint_eq(p->sample[0]->n_location_id, 1);
	ck_assert_uint_eq(p->sample[1]->n_location_id, 0);
	perftools__profiles__profile__free_unpacked(p, NULL);
	ps_pprof_close(pprof);
}
END_TEST

/* profile.proto's first mapping is the main binary: the executable most
 * samples ran, with the build id of its file; the others in the order
 * they were met, ids following their places. */
START_TEST(main_binary_first)
{
	static const char *const PYTHON = "/usr/bin/python3.12", *const LOOP = "/bin/loop";
	struct ps_build_id build_ids[] = {
		{ .size = 2, .id = { 0xbe, 0xef }, .filename = PYTHON }
	};
	struct ps_pprof_write_opts info = { .sz = sizeof(info),
		                            .nr_build_ids = 1,
		                            .build_ids = build_ids };
	struct ps_pprof *pprof = open_pprof(NULL);
	const Perftools__Profiles__Location *l;
	struct fake f;
	Profile *p;

	/* loop: one sample; python3.12: two, none in its own file */
	fake_init(&f, "loop", 2, 2, 1, 0);
	f.stack.executable = LOOP;
	frame(&f, "copy_page", KERNEL, 0xffffffff81000010ull);
	frame(&f, "spin", LOOP, 0x1100);
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	for (int i = 0; i < 2; i++) {
		fake_init(&f, "python3", 1, 1, 1, 0);
		f.stack.executable = PYTHON;
		frame(&f, "sin", LIBC, 0x200);
		frame(&f, "py::f:/a.py", "//anon", 0x7f00);
		ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	}
	p = write_and_decode(pprof, &info);
	check_invariants(p);
	ck_assert_uint_eq(p->n_mapping, 4);
	ck_assert_str_eq(str(p, p->mapping[0]->filename), PYTHON);
	ck_assert_str_eq(str(p, p->mapping[0]->build_id), "beef");
	ck_assert_str_eq(str(p, p->mapping[1]->filename), KERNEL);
	ck_assert_str_eq(str(p, p->mapping[2]->filename), LOOP);
	ck_assert_str_eq(str(p, p->mapping[3]->filename), LIBC);
	/* the locations follow their mappings' new ids */
	l = sample_location(p, 0, 1);
	ck_assert_str_eq(str(p, p->mapping[l->mapping_id - 1]->filename), LOOP);
	ck_assert_uint_eq(l->address, 0x1100);
	l = sample_location(p, 1, 0);
	ck_assert_str_eq(str(p, p->mapping[l->mapping_id - 1]->filename), LIBC);
	perftools__profiles__profile__free_unpacked(p, NULL);

	/* two more samples of loop: now the main binary, its own mapping
	 * first, with its range */
	for (int i = 0; i < 2; i++) {
		fake_init(&f, "loop", 2, 2, 1, 0);
		f.stack.executable = LOOP;
		frame(&f, "spin", LOOP, 0x1180);
		ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	}
	p = write_and_decode(pprof, &info);
	check_invariants(p);
	ck_assert_uint_eq(p->n_mapping, 3);
	ck_assert_str_eq(str(p, p->mapping[0]->filename), LOOP);
	ck_assert_str_eq(str(p, p->mapping[0]->build_id), "");
	ck_assert_uint_eq(p->mapping[0]->memory_start, 0x1100);
	ck_assert_uint_eq(p->mapping[0]->memory_limit, 0x1181);
	ck_assert_str_eq(str(p, p->mapping[1]->filename), KERNEL);
	ck_assert_str_eq(str(p, p->mapping[2]->filename), LIBC);
	perftools__profiles__profile__free_unpacked(p, NULL);
	ps_pprof_close(pprof);

	/* no sample names its program: the mappings as they were met */
	pprof = open_pprof(NULL);
	fake_init(&f, "app", 1, 1, 1, 0);
	frame(&f, "copy_page", KERNEL, 0xffffffff81000010ull);
	frame(&f, "main", LIBC, 0x10);
	ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
	p = write_and_decode(pprof, NULL);
	check_invariants(p);
	ck_assert_uint_eq(p->n_mapping, 2);
	ck_assert_str_eq(str(p, p->mapping[0]->filename), KERNEL);
	perftools__profiles__profile__free_unpacked(p, NULL);
	ps_pprof_close(pprof);
}
END_TEST

/* Far more stacks than the tables' first sizes: every one kept apart. */
START_TEST(many_stacks)
{
	struct ps_pprof *pprof = open_pprof(NULL);
	char names[3000][16];
	struct fake f;
	Profile *p;

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 3000; i++) {
			snprintf(names[i], sizeof(names[i]), "fn%d", i);
			fake_init(&f, "app", 1, (uint32_t)(i % 7), 2, 0);
			frame(&f, names[i], LIBC, 0x1000 + (uint64_t)i);
			frame(&f, "main", LIBC, 0x10);
			ck_assert_int_eq(ps_pprof_add(pprof, &f.stack), 0);
		}
	}
	ck_assert_uint_eq(ps_pprof_stats(pprof)->samples, 3000);
	ck_assert_uint_eq(ps_pprof_stats(pprof)->locations, 3001);
	p = write_and_decode(pprof, NULL);
	check_invariants(p);
	ck_assert_uint_eq(p->n_sample, 3000);
	for (size_t i = 0; i < p->n_sample; i++) {
		ck_assert_int_eq(p->sample[i]->value[0], 2);
		ck_assert_int_eq(p->sample[i]->value[1], 4);
	}
	ck_assert_str_eq(str(p, line_function(p, sample_location(p, 2999, 0), 0)->name), "fn2999");
	perftools__profiles__profile__free_unpacked(p, NULL);
	ps_pprof_close(pprof);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("pprof");
	TCase *tc = tcase_create("pprof");
	SRunner *runner;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, aggregates_and_labels);
	tcase_add_test(tc, frames_of_every_kind);
	tcase_add_test(tc, srclines);
	tcase_add_test(tc, events);
	tcase_add_test(tc, empty_and_no_callchain);
	tcase_add_test(tc, main_binary_first);
	tcase_add_test(tc, many_stacks);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
