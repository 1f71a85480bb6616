/* Inline frames and srclines as perf 6.1 prints them from addr2line's
 * answers: the chain innermost first with the ELF symbol's offset, the
 * "(inlined)" marks, the frame replaced when addr2line names the function
 * differently from perf's symbol, and "file:line" texts. */
#include "helpers.h"

#include <stdlib.h>

#include <regex.h>
#include <string.h>

static struct ps_symbols *open_symbols(bool srcline, bool no_inline)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .buildid_dir = "/nonexistent",
		                        .srcline = srcline,
		                        .no_inline = no_inline };
	struct ps_symbols *symbols;

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	return symbols;
}

static bool matches(const char *text, const char *pattern)
{
	regex_t re;
	bool ok;

	ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	ok = text && regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

START_TEST(test_inline_chain)
{
	struct ps_symbols *symbols = open_symbols(true, false);
	struct ps_dso *dso = ps_symbols_dso(symbols, fixture.so, NULL, 0);
	uint64_t size, start = fixture_symbol("inl_outer", &size);
	bool seen_chain = false;

	ck_assert_uint_gt(size, 0);
	for (uint64_t addr = start; addr < start + size; addr++) {
		struct ps_frame_name f[8];
		size_t n = ps_dso_resolve(dso, addr, true, f, 8);

		ck_assert_uint_ge(n, 1);
		/* every frame of the chain has the ELF symbol's offset */
		for (size_t i = 0; i < n; i++)
			ck_assert_uint_eq(f[i].offset, addr - start);
		/* the last one is the function itself, not inlined */
		ck_assert_str_eq(f[n - 1].sym, "inl_outer");
		ck_assert(!f[n - 1].inlined);
		if (n == 3) {
			ck_assert_str_eq(f[0].sym, "inl_leaf");
			ck_assert(f[0].inlined);
			ck_assert_str_eq(f[1].sym, "inl_mid");
			ck_assert(f[1].inlined);
			for (size_t i = 0; i < n; i++)
				ck_assert_msg(matches(f[i].srcline, "^fixture\\.c:[0-9]+$"),
				              "srcline %s", f[i].srcline ? f[i].srcline : "(null)");
			seen_chain = true;
		}
	}
	ck_assert_msg(seen_chain, "no address of inl_outer has the inl_leaf/inl_mid chain");
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_dwarf_name_replaces_frame)
{
	struct ps_symbols *symbols = open_symbols(false, false);
	struct ps_dso *dso = ps_symbols_dso(symbols, fixture.so, NULL, 0);
	uint64_t start = fixture_symbol("quirk_impl", NULL);
	struct ps_frame_name f[4];

	/* perf's symbol is the longer alias, addr2line says quirk_impl: the
	 * frame prints as "quirk_impl+0x2 (inlined)" and nothing else */
	ck_assert_str_eq(resolve_plain(dso, start + 2).sym, "quirk_public_alias");
	ck_assert_uint_eq(ps_dso_resolve(dso, start + 2, true, f, 4), 1);
	ck_assert_str_eq(f[0].sym, "quirk_impl");
	ck_assert(f[0].inlined);
	ck_assert_uint_eq(f[0].offset, 2);
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_elf_fallback_name_and_srcline)
{
	struct ps_symbols *symbols = open_symbols(true, false);
	struct ps_dso *dso = ps_symbols_dso(symbols, fixture.so, NULL, 0);
	uint64_t start = fixture_symbol("pick_weak_g", NULL);
	struct ps_frame_name f[4];

	/* no DWARF function here: addr2line takes the first ELF alias in
	 * table order (pick_weak_w), unknown file and line */
	ck_assert_uint_eq(ps_dso_resolve(dso, start + 1, true, f, 4), 1);
	ck_assert_str_eq(f[0].sym, "pick_weak_w");
	ck_assert(f[0].inlined);
	ck_assert_str_eq(f[0].srcline, "??:0");
	/* without a chain perf prints nothing for "??:0" */
	ck_assert_ptr_null(resolve_plain(dso, start + 1).srcline);
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_no_inline_option)
{
	struct ps_symbols *symbols = open_symbols(false, true);
	struct ps_dso *dso = ps_symbols_dso(symbols, fixture.so, NULL, 0);
	uint64_t size, start = fixture_symbol("inl_outer", &size);

	for (uint64_t addr = start; addr < start + size; addr++) {
		struct ps_frame_name f[8];

		ck_assert_uint_eq(ps_dso_resolve(dso, addr, true, f, 8), 1);
		ck_assert_str_eq(f[0].sym, "inl_outer");
	}
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_chain_cut_at_max)
{
	struct ps_symbols *symbols = open_symbols(false, false);
	struct ps_dso *dso = ps_symbols_dso(symbols, fixture.so, NULL, 0);
	uint64_t size, start = fixture_symbol("inl_outer", &size);

	for (uint64_t addr = start; addr < start + size; addr++) {
		struct ps_frame_name f[1];

		ck_assert_uint_eq(ps_dso_resolve(dso, addr, true, f, 1), 1);
		ck_assert_uint_eq(ps_dso_resolve(dso, addr, true, f, 0), 0);
	}
	ps_symbols_free(symbols);
}
END_TEST

Suite *suite_inline(void)
{
	Suite *s = suite_create("inline");
	TCase *tc = tcase_create("frames");

	tcase_add_test(tc, test_inline_chain);
	tcase_add_test(tc, test_dwarf_name_replaces_frame);
	tcase_add_test(tc, test_elf_fallback_name_and_srcline);
	tcase_add_test(tc, test_no_inline_option);
	tcase_add_test(tc, test_chain_cut_at_max);
	suite_add_tcase(s, tc);
	return s;
}
