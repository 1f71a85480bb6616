/* Unit tests of `pystitch dump` (src/output/dump*.c) and of the machine
 * model it asks (ps_model_*, src/session/model.c), on captures from the
 * reader's builder: the hex dump's layout, the frame of each record (first
 * line, timestamp columns, the newline that closes a record), the thread
 * and DSO lines of samples, --no-hex, and every error path of both public
 * APIs. What perf prints on real captures is checked by the end-to-end
 * tests (tests/e2e/dump_*.sh); this is what they cannot reach. Check's
 * environment variables pick what runs: CK_RUN_CASE, CK_VERBOSITY,
 * CK_FORK=no. */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../reader/builder.h"
#include "capture.h"
#include "output/dump_priv.h"

#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define FLAGS_ID_ALL ((1ull << 8) | (1ull << 9) | (1ull << 18))

static const uint64_t ids[] = { 5 };

static struct bld_attr test_attr(uint64_t flags)
{
	struct bld_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = 128,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000,
		.sample_type = ST,
		.flags = flags,
		.ids = ids,
		.nr_ids = 1,
	};
	return a;
}

/* COMM "app" for 10/10, an executable MMAP2 of /bin/app, then samples in
 * it, in no mapping, and of a hypervisor cpumode. */
static void records(struct bld_buf *b, const struct bld_attr *a)
{
	struct bld_sid sid = { .pid = 10, .tid = 10, .time = 100, .cpu = 1 };
	struct bld_sample s = bld_sample_empty();
	size_t pos;

	pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, 10);
	bld_u32(b, 10);
	bld_str(b, "app", 0);
	if (a->flags & (1ull << 18))
		bld_sample_id(b, a->sample_type, &sid);
	bld_rec_end(b, pos);
	pos = bld_rec_begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	bld_u32(b, 10);
	bld_u32(b, 10);
	bld_u64(b, 0x400000);
	bld_u64(b, 0x1000);
	bld_u64(b, 0);
	bld_zeros(b, 24); /* maj, min, ino, ino_generation */
	bld_u32(b, PROT_READ | PROT_EXEC);
	bld_u32(b, MAP_PRIVATE);
	bld_str(b, "/bin/app", 0);
	if (a->flags & (1ull << 18))
		bld_sample_id(b, a->sample_type, &sid);
	bld_rec_end(b, pos);
	s.pid = s.tid = 10;
	s.time = 200;
	s.cpu = 1;
	s.ip = 0x400010;
	bld_sample(b, a, PERF_RECORD_MISC_USER, &s);
	s.ip = 0x10;
	s.time = 300;
	bld_sample(b, a, PERF_RECORD_MISC_USER, &s);
	s.time = 400;
	bld_sample(b, a, PERF_RECORD_MISC_HYPERVISOR, &s);
	/* a thread seen first here */
	s.tid = 11;
	s.ip = 0x400020;
	s.time = 500;
	bld_sample(b, a, PERF_RECORD_MISC_USER, &s);
}

static char *file_capture(uint64_t flags)
{
	struct bld_attr a = test_attr(flags);
	struct bld_file f;
	struct bld_buf image;
	char *path;

	bld_file_init(&f, false);
	bld_file_add_attr(&f, &a);
	records(&f.data, &a);
	bld_buf_init(&image, false);
	bld_file_assemble(&f, &image, NULL);
	path = bld_write_temp(&image);
	bld_buf_free(&image);
	bld_file_free(&f);
	return path;
}

static char *pipe_capture(void)
{
	struct bld_attr a = test_attr(FLAGS_ID_ALL);
	struct bld_buf b;
	char *path;

	bld_buf_init(&b, false);
	bld_pipe_header(&b);
	bld_pipe_attr(&b, &a);
	records(&b, &a);
	path = bld_write_temp(&b);
	bld_buf_free(&b);
	return path;
}

/* The whole dump of path, through the public writer; with_model: with
 * the machine model. */
static char *dump_all(const char *path, bool with_model, bool no_hex)
{
	struct ps_reader_opts ropts = { .sz = sizeof(ropts), .order = PS_ORDER_TIME };
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_reader *reader;
	struct ps_model *model = NULL;
	struct ps_dump *dump;
	const struct ps_event *ev;
	int ret;

	ck_assert_int_eq(ps_reader_open(path, &ropts, &reader), 0);
	if (with_model)
		ck_assert_int_eq(ps_model_open(reader, NULL, &model), 0);
	ck_assert_int_eq(ps_dump_open(reader,
	                              &(struct ps_dump_opts){ .sz = sizeof(struct ps_dump_opts),
	                                                      .write = capture_write,
	                                                      .write_ctx = &out,
	                                                      .no_hex = no_hex,
	                                                      .model = model },
	                              &dump),
	                 0);
	while ((ret = ps_reader_next(reader, &ev)) > 0)
		ck_assert_int_eq(ps_dump_write(dump, ev), 0);
	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(ps_dump_finish(dump), 0);
	ps_dump_close(dump);
	ps_model_close(model);
	ps_reader_close(reader);
	ps_strbuf_addstr(&out, "");
	ck_assert(!ps_strbuf_failed(&out));
	return out.buf;
}

static void assert_has(const char *text, const char *want)
{
	ck_assert_msg(strstr(text, want), "no \"%s\" in:\n%s", want, text);
}

START_TEST(hex_layout)
{
	uint8_t bytes[33];
	struct ps_strbuf out = PS_STRBUF_INIT;

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(0x1d + i * 5);
	bytes[0] = 0x7f;
	bytes[1] = 0x80;
	bytes[2] = 0x20;
	bytes[3] = 0x7e;
	ps_dump_hex(&out, bytes, 17);
	ck_assert_str_eq(
	        out.buf,
	        ".\n"
	        ". ... raw event: size 17 bytes\n"
	        ".  0000:  7f 80 20 7e 31 36 3b 40 45 4a 4f 54 59 5e 63 68  .. ~16;@EJOTY^ch\n"
	        ".  0010:  6d                                               m               \n"
	        "\n");
	ps_strbuf_reset(&out);
	ps_dump_hex(&out, bytes, 16);
	ck_assert_str_eq(
	        out.buf,
	        ".\n"
	        ". ... raw event: size 16 bytes\n"
	        ".  0000:  7f 80 20 7e 31 36 3b 40 45 4a 4f 54 59 5e 63 68  .. ~16;@EJOTY^ch\n"
	        "\n");
	ps_strbuf_release(&out);
}
END_TEST

START_TEST(file_dump)
{
	char *path = file_capture(FLAGS_ID_ALL);
	char *text = dump_all(path, true, false);
	char *plain = dump_all(path, false, false);
	char *no_hex = dump_all(path, true, true);
	char first[64];

	static const char start[] = "# To display the perf.data header info, please use "
	                            "--header/--header-only options.\n#\n\n0x";

	ck_assert(!strncmp(text, start, strlen(start)));
	snprintf(first, sizeof(first), "@%s [0x", path);
	assert_has(text, first);
	/* the CPU and the time, from the trailer; the record line stays open
	 * for MMAP2's fields */
	assert_has(text, "1 100 0x");
	assert_has(text, "]: PERF_RECORD_COMM: app:10/10\n");
	assert_has(text, "1 200 0x");
	assert_has(text, "addr: 0\n ... thread: app:10\n ...... dso: /bin/app\n");
	assert_has(text, "addr: 0\n ... thread: app:10\n ...... dso: <not found>\n");
	assert_has(text, "addr: 0\n ... thread: app:10\n ...... dso: [hypervisor]\n");
	assert_has(text, "addr: 0\n ... thread: :11:11\n ...... dso: /bin/app\n");
	assert_has(text, ". ... raw event: size ");
	assert_has(text, "\nAggregated stats:\n");
	assert_has(text, " stats:\n          SAMPLE events:          4\n");
	/* without a model: no thread and DSO lines, the rest the same */
	ck_assert_ptr_null(strstr(plain, " ... thread: "));
	ck_assert_ptr_null(strstr(plain, " ...... dso: "));
	/* without hex dumps: none of their lines */
	ck_assert_ptr_null(strstr(no_hex, "\n.\n"));
	ck_assert_ptr_null(strstr(no_hex, "raw event"));
	assert_has(no_hex, "]: event: 3\n1 100 0x");
	assert_has(no_hex, "addr: 0\n ... thread: app:10\n ...... dso: /bin/app\n");
	free(no_hex);
	free(plain);
	free(text);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(unordered_file)
{
	char *path = file_capture((1ull << 8) | (1ull << 9));
	char *text = dump_all(path, true, true);

	static const char start[] = "WARNING: No sample_id_all support, falling back to "
	                            "unordered processing\n# To display";

	ck_assert(!strncmp(text, start, strlen(start)));
	assert_has(text, "\n-1 -1 0x");
	assert_has(text, "\n1 200 0x");
	free(text);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(pipe_dump)
{
	char *path = pipe_capture();
	char *text = dump_all(path, true, true);

	/* perf dumps the ATTR before it knows its event */
	assert_has(text, "#\n\n0@pipe [0x");
	assert_has(text, "]: event: 64\n-1 -1 0 [0x");
	assert_has(text, "]: PERF_RECORD_ATTR\n0x");
	assert_has(text, "@pipe [0x");
	assert_has(text, "1 100 0x");
	free(text);
	unlink(path);
	free(path);
}
END_TEST

static int logged;
static void count_log(void *ctx, enum ps_log_level level, const char *msg)
{
	(void)ctx;
	(void)msg;
	if (level == PS_LOG_ERROR)
		logged++;
}

START_TEST(errors)
{
	char *path = file_capture(FLAGS_ID_ALL);
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_reader *reader;
	struct ps_model *model = (struct ps_model *)1;
	struct ps_dump *dump = (struct ps_dump *)1;
	struct ps_sample_location loc;
	const struct ps_event *ev;
	/* a larger options struct asking for an option this build lacks */
	union {
		struct ps_model_opts opts;
		unsigned char bytes[sizeof(struct ps_model_opts) + 8];
	} big;

	memset(&big, 0, sizeof(big));
	big.opts.sz = sizeof(big);
	big.opts.log = count_log;
	big.bytes[sizeof(struct ps_model_opts)] = 1;
	ck_assert_int_eq(ps_reader_open(path, NULL, &reader), 0);
	/* the model: no reader, a bad options struct */
	ck_assert_int_eq(ps_model_open(NULL, NULL, &model), -EINVAL);
	ck_assert_ptr_null(model);
	model = (struct ps_model *)1;
	logged = 0;
	ck_assert_int_eq(ps_model_open(reader, &big.opts, &model), -EINVAL);
	ck_assert_ptr_null(model);
	ck_assert_int_eq(logged, 1);
	ps_model_close(NULL);
	/* the dump: no write callback, no opts, sz 0 */
	ck_assert_int_eq(ps_dump_open(reader,
	                              &(struct ps_dump_opts){ .sz = sizeof(struct ps_dump_opts) },
	                              &dump),
	                 -EINVAL);
	ck_assert_ptr_null(dump);
	ck_assert_int_eq(ps_dump_open(reader, NULL, &dump), -EINVAL);
	ck_assert_int_eq(
	        ps_dump_open(reader, &(struct ps_dump_opts){ .write = capture_write }, &dump),
	        -EINVAL);
	ps_dump_close(NULL);
	/* locating a record that is not a sample */
	ck_assert_int_eq(ps_model_open(reader, NULL, &model), 0);
	ck_assert_int_eq(ps_reader_next(reader, &ev), 1);
	ck_assert_int_eq(ev->type, PERF_RECORD_COMM);
	ck_assert_int_eq(ps_model_locate(model, ev, &loc), -EINVAL);
	ck_assert_int_eq(ps_model_apply(model, ev), 0);
	/* a write callback that fails stops the dump with its error */
	ck_assert_int_eq(ps_dump_open(reader,
	                              &(struct ps_dump_opts){ .sz = sizeof(struct ps_dump_opts),
	                                                      .write = capture_fails,
	                                                      .model = model },
	                              &dump),
	                 0);
	ck_assert_int_eq(ps_dump_write(dump, ev), 0); /* buffered */
	ck_assert_int_eq(ps_dump_finish(dump), -EIO);
	ck_assert_int_eq(ps_dump_flush(dump), -EIO);
	ps_dump_close(dump);
	ps_model_close(model);
	ps_reader_close(reader);
	ps_strbuf_release(&out);
	unlink(path);
	free(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dump");
	TCase *tc = tcase_create("dump");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, hex_layout);
	tcase_add_test(tc, file_dump);
	tcase_add_test(tc, unordered_file);
	tcase_add_test(tc, pipe_dump);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
