/* perf's symbol table rules on the fixture: the choice among aliases,
 * zero-size ends, gaps, offsets in file-offset space, PLT entries. */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols_priv.h"

static struct ps_symbols *symbols;
static struct ps_dso *dso;

static void setup(void)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts), .buildid_dir = "/nonexistent" };

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	dso = ps_symbols_dso(symbols, fixture.so, fixture.build_id, fixture.build_id_size);
	ck_assert_ptr_nonnull(dso);
}

static void teardown(void)
{
	ps_symbols_free(symbols);
}

/* The symbol perf shows at start + delta of the named group. */
static void expect_at(const char *group, uint64_t delta, const char *want, uint64_t offset)
{
	uint64_t start = fixture_symbol(group, NULL);
	struct ps_frame_name f;

	ck_assert_msg(start != UINT64_MAX, "%s not in the fixture", group);
	f = resolve_plain(dso, start + delta);
	ck_assert_msg(f.sym && strcmp(f.sym, want) == 0, "%s+%llu: want %s, got %s", group,
	              (unsigned long long)delta, want, f.sym ? f.sym : "[unknown]");
	ck_assert_uint_eq(f.offset, offset);
	ck_assert(!f.inlined);
}

START_TEST(test_sized_beats_zero_size)
{
	expect_at("pick_size_zero", 0, "pick_size_sized", 0);
	expect_at("pick_size_zero", 4, "pick_size_sized", 4);
}
END_TEST

START_TEST(test_global_beats_weak)
{
	expect_at("pick_weak_w", 1, "pick_weak_g", 1);
}
END_TEST

START_TEST(test_global_beats_local)
{
	expect_at("pick_local_l", 2, "pick_local_g", 2);
}
END_TEST

START_TEST(test_fewer_underscores_beat_length)
{
	expect_at("__pick_under", 0, "pick_under", 0);
}
END_TEST

START_TEST(test_longer_name)
{
	expect_at("pick_len_a", 0, "pick_len_longer", 0);
}
END_TEST

START_TEST(test_zero_size_ends_at_next)
{
	uint64_t next = fixture_symbol("after_zero", NULL);
	uint64_t zero = fixture_symbol("zero_sized", NULL);

	expect_at("zero_sized", 0, "zero_sized", 0);
	expect_at("zero_sized", next - zero - 1, "zero_sized", next - zero - 1);
	expect_at("after_zero", 0, "after_zero", 0);
}
END_TEST

START_TEST(test_gap_is_unknown)
{
	uint64_t size, start = fixture_symbol("after_zero", &size);
	struct ps_frame_name f = resolve_plain(dso, start + size + 3);

	ck_assert_ptr_null(f.sym);
	ck_assert(!f.inlined);
}
END_TEST

START_TEST(test_plt_entry)
{
	uint64_t offset, size, entsize;
	struct ps_frame_name f;

	ck_assert(elf_section(fixture.so, ".plt", &offset, &size, &entsize));
	ck_assert_uint_gt(entsize, 0);
	/* perf 6.1: entries after the header entry, named after .rela.plt */
	f = resolve_plain(dso, offset + entsize + 2);
	ck_assert_str_eq(f.sym, "fixture_external@plt");
	ck_assert_uint_eq(f.offset, 2);
}
END_TEST

START_TEST(test_cache_gives_same_answer)
{
	uint64_t start = fixture_symbol("inl_outer", NULL);
	struct ps_frame_name a = resolve_plain(dso, start + 1);
	struct ps_frame_name b = resolve_plain(dso, start + 1);

	ck_assert_ptr_eq(a.sym, b.sym);
	ck_assert_uint_eq(a.offset, b.offset);
}
END_TEST

START_TEST(test_stripped_uses_dynsym)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts), .buildid_dir = "/nonexistent" };
	struct ps_symbols *s;
	struct ps_dso *d;
	uint64_t start = fixture_symbol("pick_weak_g", NULL);
	struct ps_frame_name f;

	ck_assert_int_eq(ps_symbols_new(&opts, &s), 0);
	d = ps_symbols_dso(s, fixture.stripped, NULL, 0);
	f = resolve_plain(d, start);
	/* .dynsym has no local symbols; the global still beats the weak */
	ck_assert_str_eq(f.sym, "pick_weak_g");
	ck_assert_str_eq(ps_dso_symbol_file(d), fixture.stripped);
	ps_symbols_free(s);
}
END_TEST

/* Resident kB of the mapping that starts at addr, from /proc/self/smaps. */
static long mapping_rss_kb(const void *addr)
{
	char line[512], want[32];
	bool in = false;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	ck_assert_ptr_nonnull(f);
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)addr);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in = strncmp(line, want, strlen(want)) == 0;
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* Released pages leave the mapping and come back, unchanged, when read
 * again; the names of a table loaded from the file stay valid. */
START_TEST(test_released_pages_read_again)
{
	struct ps_elf *elf;
	char err[256];
	unsigned char *copy;
	long before, after;

	ck_assert_int_eq(ps_elf_open(fixture.so, &elf, err, sizeof(err)), 0);
	ck_assert_msg(elf->image_mapped, "%s: image not taken for a mapping", fixture.so);
	copy = malloc(elf->image_size);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, elf->image, elf->image_size);
	before = mapping_rss_kb(elf->image);
	ps_elf_release_pages(elf);
	after = mapping_rss_kb(elf->image);
	ck_assert_msg(before > 0 && after >= 0 && after < before, "Rss %ld kB, then %ld kB", before,
	              after);
	ck_assert(memcmp(copy, elf->image, elf->image_size) == 0);
	free(copy);
	ps_elf_close(elf);

	/* the dso's files are released once its table is loaded (at the
	 * first lookup): its names are read from them again */
	expect_at("pick_weak_w", 1, "pick_weak_g", 1);
	expect_at("pick_local_l", 2, "pick_local_g", 2);
}
END_TEST

Suite *suite_symtab(void)
{
	Suite *s = suite_create("symtab");
	TCase *tc = tcase_create("choice");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sized_beats_zero_size);
	tcase_add_test(tc, test_global_beats_weak);
	tcase_add_test(tc, test_global_beats_local);
	tcase_add_test(tc, test_fewer_underscores_beat_length);
	tcase_add_test(tc, test_longer_name);
	tcase_add_test(tc, test_zero_size_ends_at_next);
	tcase_add_test(tc, test_gap_is_unknown);
	tcase_add_test(tc, test_plt_entry);
	tcase_add_test(tc, test_cache_gives_same_answer);
	tcase_add_test(tc, test_stripped_uses_dynsym);
	tcase_add_test(tc, test_released_pages_read_again);
	suite_add_tcase(s, tc);
	return s;
}
