/* Unit tests of src/output/script's tracepoint fields (Check): payloads
 * printed through libtraceevent from an event format parsed here, whole,
 * cut short, with a string that runs to the payload's end, and for a format
 * whose fields lie past what a record can hold, and counts of bytes and
 * elements a record's own fields give, read from padding or not at all
 * past what a record can hold. The cut payloads are what
 * fuzz_tracing found read past (its reproducer is in
 * fuzz/corpus/fuzz_tracing/): each is given in an allocation of exactly
 * its size, so ASan catches any read past it. */
#include <check.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

#include "output/output.h"

/* event 7's header and common fields, as kernels write them */
#define PROBE_HEADER                                                                               \
	"name: probe\n"                                                                            \
	"ID: 7\n"                                                                                  \
	"format:\n"                                                                                \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                     \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                     \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"             \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                                 \
	"\n"

static const char format[] = PROBE_HEADER
        "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:int value;\toffset:24;\tsize:4;\tsigned:1;\n"
        "\tfield:__data_loc char[] name;\toffset:28;\tsize:4;\tsigned:0;\n"
        "\n"
        "print fmt: \"comm=%s value=%d name=%s\", REC->comm, REC->value, __get_str(name)\n";

static const char far_format[] =
        "name: far\n"
        "ID: 8\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\n"
        "\tfield:int value;\toffset:70000;\tsize:4;\tsigned:1;\n"
        "\n"
        "print fmt: \"value=%d\", REC->value\n";

/* Counts from the record (kernels print x86 instructions so). */
static const char counts_format[] =
        "name: counts\n"
        "ID: 9\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\n"
        "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:int value;\toffset:24;\tsize:4;\tsigned:1;\n"
        "\tfield:__data_loc char[] name;\toffset:28;\tsize:4;\tsigned:0;\n"
        "\n"
        "print fmt: \"hex=%s array=%s\", __print_hex(REC->comm, REC->value), "
        "__print_array(__get_dynamic_array(name), __get_dynamic_array_len(name) / 2, 2)\n";

/* A payload of event type (host order): comm "abc", value, name at 32. */
static void payload_of(uint8_t *p, uint16_t type, int32_t value, const char *name, size_t name_len)
{
	uint32_t loc = 32 | (uint32_t)name_len << 16;

	memset(p, 0, 32);
	memcpy(p, &type, 2);
	memcpy(p + 8, "abc", 3);
	memcpy(p + 24, &value, 4);
	memcpy(p + 28, &loc, 4);
	memcpy(p + 32, name, name_len);
}

static void payload(uint8_t *p, const char *name, size_t name_len)
{
	payload_of(p, 7, 42, name, name_len);
}

/* What script prints for the payload's first size bytes. */
static char *print(struct tep_handle *tep, const uint8_t *bytes, size_t size)
{
	struct ps_script_format fmt = { .tep = tep };
	struct ps_attr attr = { .type = PERF_TYPE_TRACEPOINT, .name = "probe" };
	struct ps_event event = { .type = PERF_RECORD_SAMPLE, .attr = &attr };
	struct ps_sample *sample = &event.u.sample;
	struct ps_stack stack = { .event = &event, .comm = "t" };
	struct ps_strbuf out = PS_STRBUF_INIT;
	uint8_t *raw = malloc(size);
	char *text;

	ck_assert_ptr_nonnull(raw);
	memcpy(raw, bytes, size);
	sample->sample_type = PERF_SAMPLE_RAW;
	sample->raw = raw;
	sample->raw_size = (uint32_t)size;
	fmt.fields[PS_OUTPUT_TRACE] = PS_FIELD_TRACE;
	ps_script_print(&out, &fmt, &stack);
	text = strdup(out.buf ? out.buf : "");
	ps_strbuf_release(&out);
	free(raw);
	return text;
}

/* A handle for records of this machine's order and long size. */
static struct tep_handle *tep_new(void)
{
	struct tep_handle *tep = tep_alloc();

	ck_assert_ptr_nonnull(tep);
	tep_set_file_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, 8);
	return tep;
}

static struct tep_handle *parse(const char *text)
{
	struct tep_handle *tep = tep_new();

	ck_assert_int_eq(tep_parse_event(tep, text, strlen(text), "test"), 0);
	return tep;
}

START_TEST(whole_payload)
{
	struct tep_handle *tep = parse(format);
	uint8_t p[40];
	char *text;

	payload(p, "hi", 3);
	text = print(tep, p, 35);
	ck_assert_str_eq(text, "comm=abc value=42 name=hi\n");
	free(text);
	tep_free(tep);
}
END_TEST

/* A payload shorter than the event's fields reads as zeros where it ends. */
START_TEST(cut_payload)
{
	struct tep_handle *tep = parse(format);
	uint8_t p[40];
	char *text;

	payload(p, "hi", 3);
	text = print(tep, p, 12); /* into comm */
	ck_assert_str_eq(text, "comm=abc value=0 name=\n");
	free(text);
	text = print(tep, p, 26); /* half of value */
	ck_assert_str_eq(text, tep_is_bigendian() ? "comm=abc value=0 name=\n"
	                                          : "comm=abc value=42 name=\n");
	free(text);
	text = print(tep, p, 2); /* the type alone */
	ck_assert_str_eq(text, "comm= value=0 name=\n");
	free(text);
	tep_free(tep);
}
END_TEST

/* A string without its NUL ends with the payload. */
START_TEST(unterminated_string)
{
	struct tep_handle *tep = parse(format);
	uint8_t p[40];
	char *text;

	payload(p, "hihi", 4);
	text = print(tep, p, 36);
	ck_assert_str_eq(text, "comm=abc value=42 name=hihi\n");
	free(text);
	tep_free(tep);
}
END_TEST

/* Fields no perf record can reach: the trace fields are not printed. */
START_TEST(fields_out_of_reach)
{
	struct tep_handle *tep = parse(far_format);
	uint8_t p[8] = { 8, 0 };
	char *text;

	if (tep_is_bigendian())
		p[0] = 0, p[1] = 8;
	text = print(tep, p, sizeof(p));
	ck_assert_str_eq(text, "\n");
	free(text);
	tep_free(tep);
}
END_TEST

/* libtraceevent reads __print_hex()'s and __print_array()'s counts of
 * bytes and elements unchecked: from zeros past the payload, not past
 * its copy, and not at all past what a record can hold. */
START_TEST(counts_from_the_record)
{
	struct tep_handle *tep = parse(counts_format);
	uint8_t p[40];
	char *text, want[4096];

	payload_of(p, 9, 3, "hi", 2);
	text = print(tep, p, 34);
	ck_assert_str_eq(text, tep_is_bigendian() ? "hex=61 62 63 array=26729\n"
	                                          : "hex=61 62 63 array=26984\n");
	free(text);
	payload_of(p, 9, 1000, "hi", 2);
	text = print(tep, p, 34);
	/* the payload from comm on, then zeros */
	strcpy(want, "hex=");
	for (int i = 0; i < 1000; i++)
		sprintf(want + strlen(want), i ? " %02x" : "%02x", 8 + i < 34 ? p[8 + i] : 0);
	strcat(want, tep_is_bigendian() ? " array=26729\n" : " array=26984\n");
	/* (compared short of Check's message limit on a difference) */
	ck_assert_uint_eq(strlen(text), strlen(want));
	for (size_t i = 0; i < strlen(want); i += 64)
		ck_assert_msg(!strncmp(text + i, want + i, 64), "at %zu: %.64s", i, text + i);
	free(text);
	payload_of(p, 9, 0x7fffffff, "hi", 2);
	text = print(tep, p, 34);
	ck_assert_str_eq(text, "\n");
	free(text);
	tep_free(tep);
}
END_TEST

/* A print format libtraceevent cannot parse: the fields are printed one
 * by one. A 2-byte __data_loc field's array is the rest of the record from
 * its offset; past the record, libtraceevent would read 4 GB (fuzz_tracing:
 * a stack overflow), so the record is not printed. */
static const char failed_format[] =
        PROBE_HEADER "\tfield:__data_loc unsigned int[] lengths;\toffset:8;\tsize:2;\tsigned:0;\n"
                     "\n"
                     "print fmt: \"%s\", NO_SUCH_MACRO(lengths)\n";

/* What script prints for a 16-byte record of event 7 whose 2-byte
 * location at offset 8 is loc (the rest of p as given). */
static char *print_at(struct tep_handle *tep, uint8_t p[16], uint16_t loc)
{
	uint16_t type = 7;

	memcpy(p, &type, 2);
	memcpy(p + 8, &loc, 2);
	return print(tep, p, 16);
}

START_TEST(failed_format_dynamic_array)
{
	struct tep_handle *tep = tep_new();
	uint8_t p[16] = { 0 };
	char *text;

	(void)tep_parse_event(tep, failed_format, strlen(failed_format), "test");
	p[12] = 0xab;
	text = print_at(tep, p, 12);
	ck_assert_msg(strstr(text, "lengths=ARRAY[ab, 00, 00, 00]") != NULL, "printed: %s", text);
	free(text);
	text = print_at(tep, p, 0x4000);
	ck_assert_str_eq(text, "\n");
	free(text);
	tep_free(tep);
}
END_TEST

/* The same 2-byte field in a print format that parses: its string and
 * its array's count (the rest of the record) wrap around the same way. */
static const char two_byte_format[] =
        PROBE_HEADER "\tfield:__data_loc char[] name;\toffset:8;\tsize:2;\tsigned:0;\n"
                     "\n"
                     "print fmt: \"name=%s bytes=%s\", __get_str(name), "
                     "__print_array(__get_dynamic_array(name), __get_dynamic_array_len(name), 1)\n";

START_TEST(two_byte_dynamic_array)
{
	struct tep_handle *tep = parse(two_byte_format);
	uint8_t p[16] = { [12] = 'h', [13] = 'i' };
	char *text;

	text = print_at(tep, p, 12);
	ck_assert_str_eq(text, "name=hi bytes=104 105 0 0\n");
	free(text);
	text = print_at(tep, p, 0x4000);
	ck_assert_str_eq(text, "\n");
	free(text);
	tep_free(tep);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("script_trace");
	TCase *tc = tcase_create("script_trace");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, whole_payload);
	tcase_add_test(tc, cut_payload);
	tcase_add_test(tc, unterminated_string);
	tcase_add_test(tc, fields_out_of_reach);
	tcase_add_test(tc, counts_from_the_record);
	tcase_add_test(tc, failed_format_dynamic_array);
	tcase_add_test(tc, two_byte_dynamic_array);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
