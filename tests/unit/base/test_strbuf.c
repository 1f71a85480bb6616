/* Unit tests of src/base/strbuf (Check): the number and padding
 * formatters must print exactly what printf prints for the same
 * conversion, since `pystitch script` output is compared byte for byte
 * with perf's printf-made text. Check's environment variables pick what
 * runs: CK_RUN_CASE, CK_VERBOSITY, CK_FORK=no. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

static const uint64_t values[] = {
	0,
	1,
	9,
	10,
	15,
	16,
	99,
	100,
	255,
	256,
	999,
	1000,
	4095,
	4096,
	65535,
	123456789,
	0x7fffffffULL,
	0x80000000ULL,
	0xffffffffULL,
	0x7fffffffffffffffULL,
	0x8000000000000000ULL,
	UINT64_MAX,
	0xffffffff81000000ULL,
	0x7f1234567890ULL,
};
static const int widths[] = { 0, 1, 2, 3, 5, 6, 9, 10, 12, 16, 17, 20, -1, -5, -16, -20 };

#define NR(a) (sizeof(a) / sizeof((a)[0]))

/* A value from the table, or a pseudo-random one of any magnitude. */
static uint64_t value_at(size_t i)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ULL + 1;

	if (i < NR(values))
		return values[i];
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x >> (i % 64);
}

/* The buffer holds want (and its length agrees); emptied for the next. */
static void expect(struct ps_strbuf *sb, const char *want, const char *what, uint64_t value,
                   int width)
{
	ck_assert_msg(strcmp(sb->buf, want) == 0 && sb->len == strlen(want),
	              "%s of %#" PRIx64 " width %d: got '%s', printf gives '%s'", what, value,
	              width, sb->buf, want);
	ps_strbuf_reset(sb);
}

START_TEST(test_hex_as_printf)
{
	struct ps_strbuf sb = PS_STRBUF_INIT;
	char want[64];

	for (size_t i = 0; i < 5000; i++) {
		uint64_t v = value_at(i);
		for (size_t w = 0; w < NR(widths); w++) {
			snprintf(want, sizeof(want), "%*" PRIx64, widths[w], v);
			ps_strbuf_add_hex(&sb, v, widths[w]);
			expect(&sb, want, "hex", v, widths[w]);
		}
	}
	ps_strbuf_release(&sb);
}
END_TEST

/* Both ways to the digits: ps_hex16() (SSE2 where the compiler has it)
 * and the word-wide one it falls back to, against printf's %016x and %08x. */
START_TEST(test_hex_digits_as_printf)
{
	char want[32], got[17];

	for (size_t i = 0; i < 5000; i++) {
		uint64_t v = value_at(i), word;
		size_t digits;

		snprintf(want, sizeof(want), "%016" PRIx64, v);
		digits = ps_hex16(got, v);
		got[16] = 0;
		ck_assert_msg(strcmp(got, want) == 0, "%#" PRIx64 ": got %s", v, got);
		snprintf(want, sizeof(want), "%" PRIx64, v);
		ck_assert_uint_eq(digits, strlen(want));
		snprintf(want, sizeof(want), "%08" PRIx32, (uint32_t)v);
		word = ps_hex8_word((uint32_t)v);
		memcpy(got, &word, 8);
		got[8] = 0;
		ck_assert_msg(strcmp(got, want) == 0, "%#" PRIx32 ": got %s", (uint32_t)v, got);
	}
}
END_TEST

START_TEST(test_unsigned_as_printf)
{
	struct ps_strbuf sb = PS_STRBUF_INIT;
	char want[64];

	for (size_t i = 0; i < 5000; i++) {
		uint64_t v = value_at(i);
		for (size_t w = 0; w < NR(widths); w++) {
			snprintf(want, sizeof(want), "%*" PRIu64, widths[w], v);
			ps_strbuf_add_uint(&sb, v, widths[w], false);
			expect(&sb, want, "unsigned", v, widths[w]);
			if (widths[w] < 0)
				continue;
			snprintf(want, sizeof(want), "%0*" PRIu64, widths[w], v);
			ps_strbuf_add_uint(&sb, v, widths[w], true);
			expect(&sb, want, "zero-padded unsigned", v, widths[w]);
		}
	}
	ps_strbuf_release(&sb);
}
END_TEST

START_TEST(test_signed_as_printf)
{
	struct ps_strbuf sb = PS_STRBUF_INIT;
	char want[64];

	for (size_t i = 0; i < 5000; i++) {
		/* both signs, 64 and 32 bits (pids and cpus are printed as int) */
		int64_t v64 = (int64_t)(value_at(i) >> (i & 1));
		int64_t values64[] = { v64,          (int64_t)(0 - (uint64_t)v64),
			               (int32_t)v64, -(int64_t)(int32_t)(v64 >> 1),
			               INT64_MIN,    INT64_MAX,
			               INT32_MIN,    -1 };
		for (size_t k = 0; k < NR(values64); k++) {
			int64_t v = values64[k];
			for (size_t w = 0; w < NR(widths); w++) {
				snprintf(want, sizeof(want), "%*" PRId64, widths[w], v);
				ps_strbuf_add_int(&sb, v, widths[w], false);
				expect(&sb, want, "signed", (uint64_t)v, widths[w]);
				if (widths[w] < 0)
					continue;
				snprintf(want, sizeof(want), "%0*" PRId64, widths[w], v);
				ps_strbuf_add_int(&sb, v, widths[w], true);
				expect(&sb, want, "zero-padded signed", (uint64_t)v, widths[w]);
			}
		}
	}
	ps_strbuf_release(&sb);
}
END_TEST

START_TEST(test_padded_as_printf)
{
	static const char *const strings[] = {
		"", "a", "python3.11", "0123456789abcdef", "0123456789abcdefXYZ", "cpu-clock:ppp"
	};
	struct ps_strbuf sb = PS_STRBUF_INIT;
	char want[64];

	for (size_t i = 0; i < NR(strings); i++)
		for (size_t w = 0; w < NR(widths); w++) {
			snprintf(want, sizeof(want), "%*s", widths[w], strings[i]);
			ps_strbuf_add_padded(&sb, strings[i], strlen(strings[i]), widths[w]);
			expect(&sb, want, strings[i], 0, widths[w]);
		}
	ps_strbuf_release(&sb);
}
END_TEST

/* Appends accumulate and keep the buffer NUL-terminated across growth. */
START_TEST(test_appends_grow)
{
	struct ps_strbuf sb = PS_STRBUF_INIT;
	char want[64];
	size_t len = 0;

	for (int i = 0; i < 20000; i++) {
		ps_strbuf_addch(&sb, '\t');
		ps_strbuf_add_hex(&sb, (uint64_t)i * 4099, 16);
		ps_strbuf_addstr(&sb, " sym+0x");
		ps_strbuf_add_hex(&sb, (uint64_t)i, 0);
		ps_strbuf_add(&sb, " (dso)\n", 7);
		len += (size_t)snprintf(want, sizeof(want), "\t%16" PRIx64 " sym+0x%x (dso)\n",
		                        (uint64_t)i * 4099, i);
		ck_assert_uint_eq(sb.len, len);
		ck_assert_uint_eq(strlen(sb.buf), len);
		ck_assert_str_eq(sb.buf + len - strlen(want), want);
	}
	ck_assert(!ps_strbuf_failed(&sb));
	ps_strbuf_release(&sb);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("strbuf");
	TCase *tc = tcase_create("format");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, test_hex_as_printf);
	tcase_add_test(tc, test_hex_digits_as_printf);
	tcase_add_test(tc, test_unsigned_as_printf);
	tcase_add_test(tc, test_signed_as_printf);
	tcase_add_test(tc, test_padded_as_printf);
	tcase_add_test(tc, test_appends_grow);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
