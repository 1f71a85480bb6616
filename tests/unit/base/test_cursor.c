/* Unit tests of src/base/cursor.h (Check): the peek readers, which read at
 * an offset from the cursor's start without moving it, refuse every read
 * that would pass the end, offsets that would wrap included. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"

static const uint8_t bytes[12] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
	                           0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c };

START_TEST(test_peek_inside)
{
	struct ps_cursor c = ps_cursor_make(bytes, sizeof(bytes), false);
	uint32_t v32 = 0;
	uint64_t v64 = 0;

	ck_assert_uint_eq(ps_cursor_size(&c), sizeof(bytes));
	ck_assert_ptr_eq(ps_cursor_peek(&c, 0, sizeof(bytes)), bytes);
	ck_assert_ptr_eq(ps_cursor_peek(&c, 12, 0), bytes + 12);
	ck_assert(ps_cursor_peek_u32(&c, 8, &v32));
	ck_assert_mem_eq(&v32, bytes + 8, 4);
	ck_assert(ps_cursor_peek_u64(&c, 4, &v64));
	ck_assert_mem_eq(&v64, bytes + 4, 8);
	/* the cursor has not moved: peeks are relative to its start */
	ck_assert_uint_eq(ps_cursor_pos(&c), 0);
	ps_cursor_skip(&c, 6);
	ck_assert(ps_cursor_peek_u32(&c, 0, &v32));
	ck_assert_mem_eq(&v32, bytes, 4);
	ck_assert_uint_eq(ps_cursor_pos(&c), 6);
}
END_TEST

START_TEST(test_peek_swapped)
{
	struct ps_cursor c = ps_cursor_make(bytes, sizeof(bytes), true);
	uint32_t v32 = 0, want32;
	uint64_t v64 = 0, want64;

	memcpy(&want32, bytes, 4);
	memcpy(&want64, bytes + 4, 8);
	ck_assert(ps_cursor_peek_u32(&c, 0, &v32));
	ck_assert_uint_eq(v32, __builtin_bswap32(want32));
	ck_assert(ps_cursor_peek_u64(&c, 4, &v64));
	ck_assert_uint_eq(v64, __builtin_bswap64(want64));
}
END_TEST

START_TEST(test_peek_past_end)
{
	struct ps_cursor c = ps_cursor_make(bytes, sizeof(bytes), false);
	struct ps_cursor sub = { 0 };
	uint32_t v32 = 0xdeadbeef;
	uint64_t v64 = 0xdeadbeef;

	ck_assert_ptr_null(ps_cursor_peek(&c, 0, sizeof(bytes) + 1));
	ck_assert_ptr_null(ps_cursor_peek(&c, 13, 0));
	ck_assert_ptr_null(ps_cursor_peek(&c, 9, 4));
	/* offset + n would wrap to a small number */
	ck_assert_ptr_null(ps_cursor_peek(&c, 4, SIZE_MAX));
	ck_assert_ptr_null(ps_cursor_peek(&c, SIZE_MAX, 8));
	ck_assert(!ps_cursor_peek_u32(&c, 9, &v32));
	ck_assert(!ps_cursor_peek_u32(&c, SIZE_MAX - 1, &v32));
	ck_assert(!ps_cursor_peek_u64(&c, 5, &v64));
	ck_assert(!ps_cursor_peek_u64(&c, SIZE_MAX - 3, &v64));
	/* a refused read leaves the value alone and the cursor usable */
	ck_assert_uint_eq(v32, 0xdeadbeef);
	ck_assert_uint_eq(v64, 0xdeadbeef);
	ck_assert(ps_cursor_ok(&c));
	ck_assert_uint_eq(ps_cursor_u32(&c), 0x04030201u);
	ck_assert(!ps_cursor_peek_cursor(&c, 8, 5, &sub));
	ck_assert_ptr_null(sub.start);
}
END_TEST

START_TEST(test_peek_cursor)
{
	struct ps_cursor c = ps_cursor_make(bytes, sizeof(bytes), true);
	struct ps_cursor sub;

	ck_assert(ps_cursor_peek_cursor(&c, 8, 4, &sub));
	ck_assert(sub.swap);
	ck_assert_uint_eq(ps_cursor_left(&sub), 4);
	ck_assert_uint_eq(ps_cursor_u8(&sub), 0x09);
	/* the sub-cursor ends where it was cut, not where its parent does */
	ck_assert(ps_cursor_skip(&sub, 3));
	ck_assert(!ps_cursor_skip(&sub, 1));
	ck_assert(!ps_cursor_ok(&sub));
	ck_assert(ps_cursor_ok(&c));
}
END_TEST

START_TEST(test_peek_empty)
{
	struct ps_cursor c = ps_cursor_make(NULL, 0, false);
	uint32_t v32;

	ck_assert_uint_eq(ps_cursor_size(&c), 0);
	ck_assert_ptr_null(ps_cursor_peek(&c, 1, 0));
	ck_assert(!ps_cursor_peek_u32(&c, 0, &v32));
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("cursor");
	TCase *tc = tcase_create("peek");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, test_peek_inside);
	tcase_add_test(tc, test_peek_swapped);
	tcase_add_test(tc, test_peek_past_end);
	tcase_add_test(tc, test_peek_cursor);
	tcase_add_test(tc, test_peek_empty);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
