/* Damaged ELF files: a clear message naming the file, never a crash
 * (the tests run under AddressSanitizer in CI). */
#include "helpers.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct ps_symbols *open_root(const char *root, struct log_capture *log)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .symfs = root,
		                        .buildid_dir = "/nonexistent",
		                        .srcline = true,
		                        .log = capture_log,
		                        .log_ctx = log };
	struct ps_symbols *symbols;

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	return symbols;
}

/* Resolve every address of the fixture's code, with and without inline
 * frames: whatever the answers, nothing may crash. */
static void resolve_all(struct ps_dso *dso)
{
	uint64_t size, start = fixture_symbol("pick_size_zero", NULL);
	uint64_t end = fixture_symbol("quirk_impl", &size) + size;

	for (uint64_t addr = start - 0x40; addr < end + 0x40; addr++) {
		struct ps_frame_name f[16];

		ps_dso_resolve(dso, addr, true, f, 16);
		ps_dso_resolve(dso, addr, false, f, 16);
	}
}

START_TEST(test_truncated)
{
	struct log_capture log = { 0 };
	char root[512], path[1024];
	struct ps_symbols *symbols;
	struct ps_dso *dso;
	struct stat st;

	make_dir(root, sizeof(root), "trunc");
	fmt(path, sizeof(path), "%s/lib/libtrunc.so", root);
	copy_file(fixture.so, path);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
	symbols = open_root(root, &log);
	dso = ps_symbols_dso(symbols, "/lib/libtrunc.so", NULL, 0);
	resolve_all(dso);
	ck_assert_ptr_null(resolve_plain(dso, fixture_symbol("after_gap", NULL)).sym);
	ck_assert_msg(strstr(ps_dso_errmsg(dso), path) && strstr(ps_dso_errmsg(dso), "truncated"),
	              "message: %s", ps_dso_errmsg(dso));
	ck_assert_msg(strstr(log.all, path), "log: %s", log.all);
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_not_elf)
{
	struct log_capture log = { 0 };
	char root[512], path[1024];
	struct ps_symbols *symbols;
	struct ps_dso *dso;

	make_dir(root, sizeof(root), "notelf/lib");
	fmt(path, sizeof(path), "%s/libtext.so", root);
	write_file(path, "this is not an ELF file\n");
	make_dir(root, sizeof(root), "notelf");
	symbols = open_root(root, &log);
	dso = ps_symbols_dso(symbols, "/lib/libtext.so", NULL, 0);
	ck_assert_ptr_null(resolve_plain(dso, 0x10).sym);
	ck_assert_msg(strstr(ps_dso_errmsg(dso), "not an ELF file"), "message: %s",
	              ps_dso_errmsg(dso));
	ps_symbols_free(symbols);
}
END_TEST

/* Every byte of the headers and many bytes elsewhere, overwritten one run
 * at a time. */
START_TEST(test_corrupted_bytes)
{
	char root[512], path[1024];
	struct stat st;
	unsigned seed = 12345;

	make_dir(root, sizeof(root), "corrupt");
	fmt(path, sizeof(path), "%s/lib/libcorrupt.so", root);
	ck_assert_int_eq(stat(fixture.so, &st), 0);
	for (int round = 0; round < 60; round++) {
		struct log_capture log = { 0 };
		struct ps_symbols *symbols;
		int fd;

		copy_file(fixture.so, path);
		fd = open(path, O_WRONLY);
		ck_assert_int_ge(fd, 0);
		for (int i = 0; i < 16; i++) {
			uint8_t byte;
			off_t at;

			seed = seed * 1103515245 + 12345;
			at = round < 20 ? (off_t)(seed % 64) : (off_t)(seed % (unsigned)st.st_size);
			seed = seed * 1103515245 + 12345;
			byte = (uint8_t)(seed >> 16);
			ck_assert_int_eq(pwrite(fd, &byte, 1, at), 1);
		}
		close(fd);
		symbols = open_root(root, &log);
		resolve_all(ps_symbols_dso(symbols, "/lib/libcorrupt.so", NULL, 0));
		ps_symbols_free(symbols);
	}
}
END_TEST

/* The bytes at an address, as the Python side reads them: a range the
 * section or a PT_LOAD segment holds is given, anything else refused. */
START_TEST(test_vaddr_cursor)
{
	const struct ps_elf_section *text;
	struct ps_cursor c, in_section;
	struct ps_elf *elf;
	char err[512];
	int index;

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	ck_assert_int_eq(ps_elf_open(fixture.so, &elf, err, sizeof(err)), 0);
	index = ps_elf_section_by_name(elf, ".text");
	ck_assert_int_gt(index, 0);
	text = ps_elf_section(elf, (size_t)index);
	ck_assert_ptr_nonnull(text);
	ck_assert(ps_elf_section_cursor(elf, (size_t)index, &in_section));
	/* through the section: the cursor starts at the address and ends with
	 * the section */
	ck_assert(ps_elf_vaddr_cursor(elf, (size_t)index, text->addr + 4, 4, &c));
	ck_assert_ptr_eq(c.start, in_section.start + 4);
	ck_assert_uint_eq(ps_cursor_size(&c), text->size - 4);
	/* without a section: through the PT_LOAD segment, the same bytes */
	ck_assert(ps_elf_vaddr_cursor(elf, SIZE_MAX, text->addr + 4, 4, &c));
	ck_assert_ptr_eq(c.start, in_section.start + 4);
	ck_assert_uint_ge(ps_cursor_size(&c), text->size - 4);
	/* ranges nothing holds, and ranges whose end wraps */
	ck_assert(!ps_elf_vaddr_cursor(elf, SIZE_MAX, UINT64_MAX - 3, 8, &c));
	ck_assert(!ps_elf_vaddr_cursor(elf, (size_t)index, text->addr, UINT64_MAX, &c));
	ck_assert(!ps_elf_vaddr_cursor(elf, SIZE_MAX, text->addr, UINT64_MAX - text->addr, &c));
	ck_assert_ptr_null(ps_elf_section(elf, ps_elf_nr_sections(elf)));
	ps_elf_close(elf);
}
END_TEST

/* The DSO's handle is the one ELF file opened for it, every time. */
START_TEST(test_dso_elf)
{
	struct log_capture log = { 0 };
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .buildid_dir = "/nonexistent",
		                        .log = capture_log,
		                        .log_ctx = &log };
	struct ps_symbols *symbols;
	const struct ps_elf *elf;
	struct ps_dso *dso;

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	dso = ps_symbols_dso(symbols, fixture.so, NULL, 0);
	elf = ps_dso_elf(dso);
	ck_assert_ptr_nonnull(elf);
	ck_assert_ptr_eq(ps_dso_elf(dso), elf);
	ck_assert_str_eq(ps_elf_file(elf), ps_dso_file(dso));
	ck_assert_str_eq(ps_elf_path(elf), fixture.so);
	ck_assert_ptr_null(ps_dso_elf(ps_symbols_dso(symbols, "/nonexistent/lib.so", NULL, 0)));
	ps_symbols_free(symbols);
}
END_TEST

Suite *suite_damage(void)
{
	Suite *s = suite_create("damage");
	TCase *tc = tcase_create("elf");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_not_elf);
	tcase_add_test(tc, test_corrupted_bytes);
	tcase_add_test(tc, test_vaddr_cursor);
	tcase_add_test(tc, test_dso_elf);
	suite_add_tcase(s, tc);
	return s;
}
