/* addr2line's answers when memory runs out part way through reading a
 * unit: the query fails with -ENOMEM, and the unit is not left half read:
 * later queries answer exactly as if memory had never run out. */
#include "helpers.h"

#include <errno.h>
#include <string.h>

#include "symbols/symbols_priv.h"

struct answer {
	int n;
	char text[1024];
};

/* The records of a query as one line of text, to compare. */
static struct answer ask(struct ps_addr2line *a2l, uint64_t addr)
{
	struct ps_addr2line_record records[16];
	struct answer a = { 0 };
	size_t used = 0;

	a.n = ps_addr2line_query(a2l, addr, records, 16);
	for (int i = 0; i < a.n; i++) {
		int w = snprintf(a.text + used, sizeof(a.text) - used, "%s %s:%u;",
		                 records[i].function ? records[i].function : "??",
		                 records[i].file ? records[i].file : "??", records[i].line);

		ck_assert(w > 0 && (size_t)w < sizeof(a.text) - used);
		used += (size_t)w;
	}
	return a;
}

static struct ps_elf *open_fixture(void)
{
	struct ps_elf *elf;
	char err[512];

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	ck_assert_msg(ps_elf_open(fixture.so, &elf, err, sizeof(err)) == 0, "%s", err);
	return elf;
}

START_TEST(test_out_of_memory_retried)
{
	struct ps_elf *elf = open_fixture();
	uint64_t size, leaf = fixture_symbol("inl_outer", &size);
	uint64_t other = fixture_symbol("quirk_impl", NULL);
	uint64_t text_offset = ps_elf_text_offset(elf);
	struct answer want_leaf, want_other;
	struct ps_addr2line *a2l;
	bool refused = false;
	unsigned nth;

	ck_assert_uint_ne(leaf, UINT64_MAX);
	ck_assert_uint_ne(other, UINT64_MAX);
	leaf += text_offset + size / 2;
	other += text_offset;
	ck_assert_int_eq(ps_addr2line_open(elf, true, &a2l), 0);
	want_leaf = ask(a2l, leaf);
	want_other = ask(a2l, other);
	ps_addr2line_close(a2l);
	ck_assert_int_gt(want_leaf.n, 0);
	ck_assert_int_gt(want_other.n, 0);

	/* memory refused at each point in turn, until none is reached */
	for (nth = 1; nth < 1000; nth++) {
		struct answer first, again, next;

		ck_assert_int_eq(ps_addr2line_open(elf, true, &a2l), 0);
		ps_addr2line_refuse_memory(a2l, nth);
		first = ask(a2l, leaf);
		if (first.n >= 0) {
			ck_assert_str_eq(first.text, want_leaf.text);
			ps_addr2line_close(a2l);
			break;
		}
		refused = true;
		ck_assert_int_eq(first.n, -ENOMEM);
		again = ask(a2l, leaf);
		ck_assert_int_eq(again.n, want_leaf.n);
		ck_assert_str_eq(again.text, want_leaf.text);
		next = ask(a2l, other);
		ck_assert_int_eq(next.n, want_other.n);
		ck_assert_str_eq(next.text, want_other.text);
		ps_addr2line_close(a2l);
	}
	ck_assert(refused);
	ck_assert_uint_lt(nth, 1000);
	ps_elf_close(elf);
}
END_TEST

Suite *suite_addr2line(void)
{
	Suite *s = suite_create("addr2line");
	TCase *tc = tcase_create("memory");

	tcase_add_test(tc, test_out_of_memory_retried);
	suite_add_tcase(s, tc);
	return s;
}
