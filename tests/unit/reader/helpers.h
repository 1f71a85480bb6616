/* Shared plumbing of the reader tests: a capture under construction in one
 * of six variants (byte order x file / pipe format in a file / pipe fd),
 * opening it with the reader, walking its events and checking error
 * messages. */
#ifndef PS_TEST_HELPERS_H
#define PS_TEST_HELPERS_H

#include <check.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "builder.h"
#include "pystitch/pystitch.h"

/* Variant bits. */
#define V_BE 1 /* big-endian image */
#define V_PIPE 2 /* pipe format (in a regular file unless V_FD) */
#define V_FD 4 /* pipe format read from a real pipe via ps_reader_open_fd */
#define NR_VARIANTS 6 /* 0..5: LE/BE x file, pipe-in-file, pipe fd */

struct cap {
	int variant;
	bool be, pipe;
	struct bld_file file; /* file mode */
	struct bld_buf stream; /* pipe mode: everything after the pipe header */
	bool in_body;
	uint64_t body_offset; /* reader offset of the first body record */
	struct bld_buf image;
	struct bld_layout layout;
	char *path; /* temporary file, unlinked once opened */
	char name[64]; /* what the reader was told the input is called */
	int fd;
	pid_t writer;
	struct ps_reader *reader;
	bool open_failed;
	/* what a failed open told the log (PS_LOG_ERROR), and the log of the
	 * options the test gave, which hears everything else */
	char open_errmsg[512];
	ps_log_fn caller_log;
	void *caller_log_ctx;
	bool assembled;
};

const char *variant_name(int variant);

/* Start a capture. File-mode captures get a HOSTNAME feature, as perf
 * always writes one (perf ignores the feature bitmap without it); pipe
 * captures get the same as a HEADER_FEATURE record. */
void cap_init(struct cap *c, int variant);
/* Register an attr: an attrs-section entry (file) or HEADER_ATTR (pipe).
 * Must come before cap_body(). */
void cap_attr(struct cap *c, const struct bld_attr *attr);
/* A feature section to fill (file) or a scratch buffer that cap_body() /
 * cap_open() emits as HEADER_FEATURE (pipe). */
struct bld_buf *cap_feature(struct cap *c, unsigned bit);
/* The buffer records are appended to; attrs and features are fixed from
 * here on. */
struct bld_buf *cap_body(struct cap *c);
/* The offset the reader reports for a record at position pos of the body
 * buffer. */
uint64_t cap_offset(const struct cap *c, size_t pos);
/* Build c->image (tests may then patch or truncate it). */
void cap_assemble(struct cap *c);
/* Assemble (unless done) and open. Returns ps_reader_open's result: c->reader
 * is the handle, or NULL after a failure, whose message is in c->open_errmsg. */
int cap_open_rc(struct cap *c, const struct ps_reader_opts *opts);
/* Same, asserting success. */
void cap_open(struct cap *c, const struct ps_reader_opts *opts);
void cap_close(struct cap *c);

/* The next event of the body (preamble HEADER_ATTR / HEADER_FEATURE
 * records of pipe captures are skipped); fails the test unless there is
 * one. */
const struct ps_event *cap_next(struct cap *c);
/* Assert that the reader has nothing more. */
void cap_expect_end(struct cap *c);
/* Read until the end or an error; returns the last ps_reader_next value
 * and counts delivered body events. */
int cap_drain(struct cap *c, size_t *nr_events);

struct ps_reader_opts opts_default(void);
struct ps_reader_opts opts_time(void);
struct ps_reader_opts opts_force(void);

/* Where an error message may say the damage is: [lo, hi). A message can
 * name the record's offset or the offset of the bad field inside it. */
struct off_range {
	uint64_t lo, hi;
};
#define AT(x) ((struct off_range){ (x), (uint64_t)(x) + 1 })
#define WITHIN(lo, size) ((struct off_range){ (lo), (uint64_t)(lo) + (size) })
/* RANGES(AT(a), WITHIN(b, n), ...) expands to an array and its length. */
#define RANGES(...)                                                                                \
	(const struct off_range[]){ __VA_ARGS__ },                                                 \
	        sizeof((const struct off_range[]){ __VA_ARGS__ }) / sizeof(struct off_range)
#define NO_TYPE (-1)

/* Assert that msg is one line, names the input, contains "offset 0x<hex>"
 * with a value in one of the ranges, names the record type (when type is
 * not NO_TYPE: ps_record_type_name(type), with or without its
 * "PERF_RECORD_" prefix, case-sensitive) and contains one of the
 * '|'-separated phrases (when not NULL, case-insensitive). */
void check_msg(const char *msg, const char *input, const struct off_range *ranges, size_t nr_ranges,
               int type, const char *phrases);
/* The same for the reader of a capture. */
void cap_check_error(struct cap *c, const struct off_range *ranges, size_t nr_ranges, int type,
                     const char *phrases);

/* Convenience attr: sample_id_all, the given sample_type, size 128. */
struct bld_attr attr_basic(uint64_t sample_type);

/* Suites. */
Suite *suite_records(void);
Suite *suite_samples(void);
Suite *suite_format(void);
Suite *suite_event_names(void);
Suite *suite_order(void);
Suite *suite_compressed(void);
Suite *suite_errors(void);
Suite *suite_tracing_check(void);
Suite *suite_tracing_sizeof(void);

#endif /* PS_TEST_HELPERS_H */
