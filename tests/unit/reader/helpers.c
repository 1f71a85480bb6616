/* Plumbing shared by the reader tests: captures in six variants, walking
 * events, checking error messages. */
#define _GNU_SOURCE
#include "helpers.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *variant_name(int variant)
{
	static const char *const names[NR_VARIANTS] = {
		"file LE",    "file BE",    "pipe-format file LE", "pipe-format file BE",
		"pipe fd LE", "pipe fd BE",
	};
	int index = variant & V_FD ? 4 + (variant & V_BE) : variant;
	return index >= 0 && index < NR_VARIANTS ? names[index] : "?";
}

static int variant_bits(int loop_index)
{
	/* loop index 0..5 -> bits: 4 and 5 are the pipe-fd variants */
	if (loop_index >= 4)
		return V_PIPE | V_FD | (loop_index & 1);
	return loop_index;
}

void cap_init(struct cap *c, int loop_index)
{
	memset(c, 0, sizeof(*c));
	c->variant = variant_bits(loop_index);
	c->be = c->variant & V_BE;
	c->pipe = c->variant & V_PIPE;
	c->fd = -1;
	bld_file_init(&c->file, c->be);
	bld_buf_init(&c->stream, c->be);
	bld_buf_init(&c->image, c->be);
	bld_header_string(cap_feature(c, PS_FEAT_HOSTNAME), "pystitch-test");
}

void cap_attr(struct cap *c, const struct bld_attr *attr)
{
	ck_assert_msg(!c->in_body, "cap_attr after cap_body");
	if (c->pipe) {
		bld_pipe_attr(&c->stream, attr);
		/* keep a copy for the tests' own use */
		if (c->file.nr_attrs < BLD_MAX_ATTRS)
			c->file.attrs[c->file.nr_attrs++] = *attr;
	} else {
		bld_file_add_attr(&c->file, attr);
	}
}

struct bld_buf *cap_feature(struct cap *c, unsigned bit)
{
	ck_assert_msg(!c->in_body, "cap_feature after cap_body");
	return bld_file_feature(&c->file, bit);
}

struct bld_buf *cap_body(struct cap *c)
{
	if (c->in_body)
		return c->pipe ? &c->stream : &c->file.data;
	c->in_body = true;
	if (c->pipe) {
		for (unsigned bit = 0; bit < BLD_NR_FEATURES; bit++)
			if (c->file.has_feature[bit])
				bld_pipe_feature(&c->stream, bit, &c->file.features[bit]);
		/* perf ends the features with an empty HEADER_LAST_FEATURE one */
		bld_pipe_feature(&c->stream, PS_FEAT_LAST, NULL);
		c->body_offset = c->stream.len;
		return &c->stream;
	}
	c->body_offset = bld_file_data_offset(&c->file);
	return &c->file.data;
}

uint64_t cap_offset(const struct cap *c, size_t pos)
{
	/* pipe mode: perf counts from the first byte after the pipe header */
	return c->pipe ? pos : bld_file_data_offset(&c->file) + pos;
}

void cap_assemble(struct cap *c)
{
	if (c->assembled)
		return;
	c->assembled = true;
	cap_body(c);
	bld_buf_free(&c->image);
	if (c->pipe) {
		bld_buf_init(&c->image, c->be);
		bld_pipe_header(&c->image);
		bld_bytes(&c->image, c->stream.data, c->stream.len);
	} else {
		bld_file_assemble(&c->file, &c->image, &c->layout);
	}
}

/* The log of every open: keeps what a failure says, passes the rest on. */
static void open_log(void *ctx, enum ps_log_level level, const char *msg)
{
	struct cap *c = ctx;

	if (level == PS_LOG_ERROR)
		snprintf(c->open_errmsg, sizeof(c->open_errmsg), "%s", msg);
	else if (c->caller_log)
		c->caller_log(c->caller_log_ctx, level, msg);
}

int cap_open_rc(struct cap *c, const struct ps_reader_opts *caller_opts)
{
	struct ps_reader_opts o = caller_opts ? *caller_opts : opts_default();
	const struct ps_reader_opts *opts = &o;
	int rc;

	c->caller_log = o.log;
	c->caller_log_ctx = o.log_ctx;
	c->open_errmsg[0] = '\0';
	o.log = open_log;
	o.log_ctx = c;
	cap_assemble(c);
	if (c->variant & V_FD) {
		snprintf(c->name, sizeof(c->name), "test-pipe-%d", (int)getpid());
		c->fd = bld_pipe(&c->image, &c->writer);
		rc = ps_reader_open_fd(c->fd, c->name, opts, &c->reader);
	} else {
		c->path = bld_write_temp(&c->image);
		snprintf(c->name, sizeof(c->name), "%s", c->path);
		rc = ps_reader_open(c->path, opts, &c->reader);
		unlink(c->path);
	}
	c->open_failed = rc < 0;
	ck_assert_msg((rc < 0) == (c->reader == NULL), "[%s] ps_reader_open returned %d and %s",
	              variant_name(c->variant), rc, c->reader ? "a handle" : "no handle");
	ck_assert_msg(rc >= 0 || c->open_errmsg[0], "[%s] a failed open said nothing",
	              variant_name(c->variant));
	return rc;
}

void cap_open(struct cap *c, const struct ps_reader_opts *opts)
{
	int rc = cap_open_rc(c, opts);
	ck_assert_msg(rc >= 0, "[%s] ps_reader_open failed: %d (%s)", variant_name(c->variant), rc,
	              c->open_errmsg);
	ck_assert_ptr_nonnull(c->reader);
}

void cap_close(struct cap *c)
{
	if (c->reader)
		ps_reader_close(c->reader);
	c->reader = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	bld_pipe_reap(c->writer);
	c->writer = 0;
	free(c->path);
	c->path = NULL;
	bld_file_free(&c->file);
	bld_buf_free(&c->stream);
	bld_buf_free(&c->image);
}

static bool is_preamble(const struct cap *c, const struct ps_event *e)
{
	return c->pipe && e->offset < c->body_offset && !e->from_compressed &&
	       (e->type == PS_RECORD_HEADER_ATTR || e->type == PS_RECORD_HEADER_FEATURE);
}

const struct ps_event *cap_next(struct cap *c)
{
	const struct ps_event *e = NULL;
	int rc;

	for (;;) {
		rc = ps_reader_next(c->reader, &e);
		ck_assert_msg(rc == 1, "[%s] ps_reader_next returned %d, expected an event (%s)",
		              variant_name(c->variant), rc, ps_reader_errmsg(c->reader));
		ck_assert_ptr_nonnull(e);
		if (!is_preamble(c, e))
			return e;
	}
}

void cap_expect_end(struct cap *c)
{
	const struct ps_event *e = NULL;
	int rc;

	while ((rc = ps_reader_next(c->reader, &e)) == 1 && is_preamble(c, e))
		;
	ck_assert_msg(rc == 0, "[%s] expected the end, ps_reader_next returned %d%s%s%s",
	              variant_name(c->variant), rc, rc == 1 && e ? " with an event of type " : "",
	              rc == 1 && e
	                      ? (ps_record_type_name(e->type) ? ps_record_type_name(e->type) : "?")
	                      : "",
	              rc < 0 ? ps_reader_errmsg(c->reader) : "");
}

int cap_drain(struct cap *c, size_t *nr_events)
{
	const struct ps_event *e;
	size_t n = 0;
	int rc;

	while ((rc = ps_reader_next(c->reader, &e)) == 1)
		if (!is_preamble(c, e))
			n++;
	if (nr_events)
		*nr_events = n;
	return rc;
}

struct ps_reader_opts opts_default(void)
{
	struct ps_reader_opts o;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.order = PS_ORDER_FILE;
	return o;
}

struct ps_reader_opts opts_time(void)
{
	struct ps_reader_opts o = opts_default();
	o.order = PS_ORDER_TIME;
	return o;
}

struct ps_reader_opts opts_force(void)
{
	struct ps_reader_opts o = opts_default();
	o.force = true;
	return o;
}

static bool has_offset(const char *msg, const struct off_range *range)
{
	const char *p = msg;
	while ((p = strstr(p, "offset 0x")) != NULL) {
		char *end;
		unsigned long long v;
		p += strlen("offset 0x");
		v = strtoull(p, &end, 16);
		if (end != p && v >= range->lo && v < range->hi)
			return true;
	}
	return false;
}

static bool has_phrase(const char *msg, const char *phrases)
{
	char buf[256];
	char *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", phrases);
	for (tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save))
		if (strcasestr(msg, tok))
			return true;
	return false;
}

void check_msg(const char *msg, const char *input, const struct off_range *ranges, size_t nr_ranges,
               int type, const char *phrases)
{
	bool found = nr_ranges == 0;
	char want[256] = "";
	size_t used = 0;

	ck_assert_msg(msg != NULL && *msg, "error message is empty");
	ck_assert_msg(strchr(msg, '\n') == NULL || strchr(msg, '\n')[1] == '\0',
	              "error message is not one line: \"%s\"", msg);
	if (input)
		ck_assert_msg(strstr(msg, input) != NULL,
		              "error message \"%s\" does not name \"%s\"", msg, input);
	for (size_t i = 0; i < nr_ranges; i++) {
		if (has_offset(msg, &ranges[i]))
			found = true;
		if (used < sizeof(want)) {
			if (ranges[i].hi == ranges[i].lo + 1)
				used += (size_t)snprintf(want + used, sizeof(want) - used,
				                         "%s0x%" PRIx64, i ? " or " : "",
				                         ranges[i].lo);
			else
				used += (size_t)snprintf(want + used, sizeof(want) - used,
				                         "%s0x%" PRIx64 "..0x%" PRIx64,
				                         i ? " or " : "", ranges[i].lo,
				                         ranges[i].hi - 1);
		}
	}
	ck_assert_msg(found, "error message \"%s\" lacks \"offset %s\"", msg, want);
	if (type != NO_TYPE) {
		const char *name = ps_record_type_name((uint32_t)type);
		const char *suffix = name;
		ck_assert_msg(name != NULL, "no name for record type %d", type);
		if (strncmp(name, "PERF_RECORD_", 12) == 0)
			suffix = name + 12;
		ck_assert_msg(strstr(msg, name) != NULL || strstr(msg, suffix) != NULL,
		              "error message \"%s\" does not name the record type %s", msg, name);
	}
	if (phrases)
		ck_assert_msg(has_phrase(msg, phrases), "error message \"%s\" says none of \"%s\"",
		              msg, phrases);
}

void cap_check_error(struct cap *c, const struct off_range *ranges, size_t nr_ranges, int type,
                     const char *phrases)
{
	if (c->open_failed) {
		ck_assert_ptr_null(c->reader);
		check_msg(c->open_errmsg, c->name, ranges, nr_ranges, type, phrases);
		return;
	}
	ck_assert_ptr_nonnull(c->reader);
	check_msg(ps_reader_errmsg(c->reader), c->name, ranges, nr_ranges, type, phrases);
}

struct bld_attr attr_basic(uint64_t sample_type)
{
	struct bld_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = 128;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 4000;
	a.sample_type = sample_type;
	a.flags = PS_ATTR_SAMPLE_ID_ALL | 1 /* disabled */;
	return a;
}
