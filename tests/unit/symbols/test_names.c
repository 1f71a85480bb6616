/* Recorded symbol answers (names.c): what a separate debug file said about
 * the addresses resolved while a file observer watched, written as text
 * and read back in the file's place through a resolver, must give the
 * same frames; an address not recorded is named from the library's own
 * symbols with one warning; damaged tables are refused with the offset. */
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "symbols/symbols_priv.h"

static char root[512], binary[1024], debug[1024], names_file[1024];

static void setup(void)
{
	char hex[41];

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	for (size_t i = 0; i < fixture.build_id_size; i++)
		sprintf(hex + 2 * i, "%02x", fixture.build_id[i]);
	make_dir(root, sizeof(root), "names");
	fmt(binary, sizeof(binary), "%s/usr/lib/libfixture.so", root);
	copy_file(fixture.stripped, binary);
	fmt(debug, sizeof(debug), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	copy_file(fixture.debug, debug);
	fmt(names_file, sizeof(names_file), "%s/answers", root);
}

/* The observer: the kind the debug file was last told as (-1: never). */
static void observed(void *ctx, const char *path, const char *file, enum ps_file_kind kind)
{
	int *debug_kind = ctx;

	(void)file;
	if (debug_kind && strcmp(path, debug) == 0)
		*debug_kind = (int)kind;
}

/* An archive's view: the binary, and the answers where the debug file was. */
static const char *archived(void *ctx, const char *path)
{
	(void)ctx;
	if (strcmp(path, binary) == 0)
		return binary;
	if (strcmp(path, debug) == 0)
		return names_file;
	return NULL;
}

static struct ps_symbols *open_symbols(bool srcline, bool record, bool from_names,
                                       struct log_capture *log)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .symfs = root,
		                        .buildid_dir = "/nonexistent",
		                        .srcline = srcline,
		                        .log = capture_log,
		                        .log_ctx = log };
	struct ps_symbols *symbols;

	if (record) {
		opts.files.used = observed;
		opts.record_names = true;
	}
	if (from_names)
		opts.files.resolve = archived;
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	return symbols;
}

static struct ps_dso *fixture_dso(struct ps_symbols *symbols)
{
	return ps_symbols_dso(symbols, "/usr/lib/libfixture.so", fixture.build_id,
	                      fixture.build_id_size);
}

static void same_frames(const struct ps_frame_name *a, size_t na, const struct ps_frame_name *b,
                        size_t nb, uint64_t addr)
{
	ck_assert_msg(na == nb, "%#llx: %zu frames, then %zu", (unsigned long long)addr, na, nb);
	for (size_t i = 0; i < na; i++) {
		ck_assert_msg((a[i].sym == NULL) == (b[i].sym == NULL), "%#llx: frame %zu",
		              (unsigned long long)addr, i);
		if (a[i].sym)
			ck_assert_str_eq(a[i].sym, b[i].sym);
		ck_assert_uint_eq(a[i].offset, b[i].offset);
		ck_assert_int_eq(a[i].inlined, b[i].inlined);
		ck_assert_msg((a[i].srcline == NULL) == (b[i].srcline == NULL),
		              "%#llx: srcline %zu", (unsigned long long)addr, i);
		if (a[i].srcline)
			ck_assert_str_eq(a[i].srcline, b[i].srcline);
	}
}

/* Resolve every address of inl_outer and quirk_impl (with and without the
 * inline chain) on the debug file while recording, keep the table. */
static void record_table(uint64_t *start, uint64_t *size)
{
	struct log_capture log = { 0 };
	struct ps_symbols *symbols = open_symbols(false, true, false, &log);
	struct ps_dso *dso = fixture_dso(symbols);
	struct ps_strbuf text = PS_STRBUF_INIT;
	struct ps_frame_name f[16];

	*start = fixture_symbol("inl_outer", size);
	ck_assert_str_eq(ps_dso_symbol_file(dso), debug);
	for (uint64_t addr = *start; addr < *start + *size; addr++)
		ck_assert_uint_ge(ps_dso_resolve(dso, addr, true, f, 16), 1);
	ck_assert_uint_ge(ps_dso_resolve(dso, fixture_symbol("quirk_impl", NULL), false, f, 16), 1);
	ck_assert_int_eq(ps_symbols_recorded_names(symbols, debug, &text), 1);
	ck_assert_int_eq(ps_symbols_recorded_names(symbols, binary, &text), 0);
	write_file(names_file, text.buf);
	ps_strbuf_release(&text);
	ps_symbols_free(symbols);
}

START_TEST(test_names_same_frames)
{
	uint64_t start, size;

	record_table(&start, &size);
	for (int srcline = 0; srcline < 2; srcline++) {
		struct log_capture log = { 0 }, log2 = { 0 };
		struct ps_symbols *direct = open_symbols(srcline, false, false, &log);
		struct ps_symbols *from_names = open_symbols(srcline, false, true, &log2);
		struct ps_dso *a = fixture_dso(direct), *b = fixture_dso(from_names);
		size_t chains = 0;

		/* the table stands in for the debug file */
		ck_assert_str_eq(ps_dso_symbol_file(b), binary);
		for (uint64_t addr = start; addr < start + size; addr++) {
			for (int chain = 0; chain < 2; chain++) {
				struct ps_frame_name fa[16], fb[16];
				size_t na = ps_dso_resolve(a, addr, chain, fa, 16);
				size_t nb = ps_dso_resolve(b, addr, chain, fb, 16);

				same_frames(fa, na, fb, nb, addr);
				chains += na > 1;
			}
		}
		ck_assert_uint_gt(chains, 0); /* inline chains came from the table */
		uint64_t quirk = fixture_symbol("quirk_impl", NULL);
		struct ps_frame_name fa[4], fb[4];
		size_t na = ps_dso_resolve(a, quirk, false, fa, 4);
		size_t nb = ps_dso_resolve(b, quirk, false, fb, 4);

		same_frames(fa, na, fb, nb, quirk);
		ck_assert_str_eq(fb[0].sym, "quirk_public_alias");
		ck_assert_int_eq(log2.warnings, 0);
		ps_symbols_free(direct);
		ps_symbols_free(from_names);
	}
}
END_TEST

/* A debug file with a .debug_frame may give the unwinder CFI: it is told
 * as code (ELF) and packed whole, not replaced by its answers. */
START_TEST(test_names_debug_frame_is_code)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .symfs = root,
		                        .buildid_dir = "/nonexistent",
		                        .record_names = true };
	struct ps_strbuf text = PS_STRBUF_INIT;
	struct ps_symbols *symbols;
	struct ps_frame_name f[4];
	char command[4096], frame[1024];
	int debug_kind = -1;

	fmt(frame, sizeof(frame), "%s/frame.bin", root);
	write_file(frame, "not really CFI, but a section with contents");
	fmt(command, sizeof(command), "objcopy --add-section .debug_frame='%s' '%s'", frame, debug);
	ck_assert_int_eq(system(command), 0);
	opts.files.used = observed;
	opts.files.used_ctx = &debug_kind;
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	ck_assert_uint_ge(
	        ps_dso_resolve(fixture_dso(symbols), fixture_symbol("inl_outer", NULL), true, f, 4),
	        1);
	ck_assert_str_eq(f[0].sym, "inl_outer");
	ck_assert_int_eq(debug_kind, PS_FILE_ELF);
	ck_assert_int_eq(ps_symbols_recorded_names(symbols, debug, &text), 0);
	ps_strbuf_release(&text);
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_names_unrecorded)
{
	struct log_capture log = { 0 };
	struct ps_symbols *symbols;
	struct ps_frame_name f[4];
	uint64_t start, size;

	record_table(&start, &size);
	symbols = open_symbols(false, false, true, &log);
	/* pick_local_g was never asked while recording */
	uint64_t addr = fixture_symbol("pick_local_g", NULL);

	ck_assert_uint_eq(ps_dso_resolve(fixture_dso(symbols), addr, true, f, 4), 1);
	ck_assert_str_eq(f[0].sym, "pick_local_g"); /* from .dynsym */
	ck_assert_uint_eq(ps_dso_resolve(fixture_dso(symbols), addr + 1, true, f, 4), 1);
	ck_assert_int_eq(log.warnings, 1);
	ck_assert_msg(strstr(log.last, "was not reached when the archive was made"), "%s",
	              log.last);
	ps_symbols_free(symbols);
}
END_TEST

static const struct {
	const char *text, *why;
} bad_tables[] = {
	{ "pystitch-names 2\ndso -\nend\n", "offset 0: not a pystitch symbol answers file" },
	{ "pystitch-names 1\ndso -\n", "offset 23: cut short: no 'end' line" },
	{ "pystitch-names 1\nend\n", "offset 17: expected 'dso'" },
	{ "pystitch-names 1\ndso -\nend\na 1 0 0 -\n", "offset 27: text after 'end'" },
	{ "pystitch-names 1\ndso -\na 10 2 0 =f\nr 3 =g -\nend\n",
	  "offset 44: fewer records than the address line says" },
	{ "pystitch-names 1\ndso -\na 10 1 0 =f\n", "offset 35: cut short in a record list" },
	{ "pystitch-names 1\ndso -\na 20 0 0 =f\na 10 0 0 =g\nend\n",
	  "offset 35: addresses not in ascending order" },
	{ "pystitch-names 1\ndso -\na 10 0 0 =f\na 10 0 0 =g\nend\n",
	  "offset 35: addresses not in ascending order" },
	{ "pystitch-names 1\ndso -\na 10 5000 0 =f\nend\n", "more records than an inline chain" },
	{ "pystitch-names 1\ndso -\na 0x10 0 0 =f\nend\n",
	  "offset 23: bad number in an address line" },
	{ "pystitch-names 1\ndso -\na 10 0 0 =f%2\nend\n", "offset 23: bad %-escape" },
	{ "pystitch-names 1\ndso -\na 10 0 0 f\nend\n", "must start with '='" },
	{ "pystitch-names 1\ndso -\na 10 1 0 =f\nr 99999999999 =g -\nend\n", "bad line number" },
	{ "pystitch-names 1\ndso -\nb\nend\n", "not a line of a symbol answers file" },
	{ "pystitch-names 1\ndso -\nend", "no newline at the end" },
	{ "pystitch-names 1\ndso =a b\nend\n", "offset 17: expected 'dso'" },
	{ "pystitch-names 1\ndso =a%zz\nend\n", "offset 17: bad %-escape" },
	{ "pystitch-names 1\ndso -\na 10 0 11 =f\nend\n",
	  "offset 23: a symbol that starts after the address" },
	{ "pystitch-names 1\ndso -\na 10 0 8 -\nend\n",
	  "offset 23: a symbol that starts after the address" },
	{ "pystitch-names 1\ndso -\na 10 0 0 =f\0g\nend\n",
	  "offset 23: no newline at the end, or a NUL" },
};

START_TEST(test_names_damaged)
{
	char err[512];
	struct ps_names *names = (struct ps_names *)1;

	write_file(names_file, bad_tables[_i].text);
	ck_assert_int_eq(ps_names_load("T", names_file, &names, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(names);
	ck_assert_msg(strncmp(err, "T: offset ", 10) == 0 && strstr(err, bad_tables[_i].why),
	              "table %d: got '%s', want '%s'", _i, err, bad_tables[_i].why);
}
END_TEST

START_TEST(test_names_long_line)
{
	size_t len = 70000;
	char *text = malloc(len + 64), err[512];
	struct ps_names *names;

	ck_assert_ptr_nonnull(text);
	strcpy(text, "pystitch-names 1\ndso =");
	memset(text + strlen(text), 'x', len);
	strcpy(text + 22 + len, "\nend\n");
	write_file(names_file, text);
	free(text);
	ck_assert_int_eq(ps_names_load("T", names_file, &names, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "offset 17: line longer than 64 KiB"), "%s", err);
}
END_TEST

START_TEST(test_names_good)
{
	char err[512];
	struct ps_names *names;
	const struct ps_names_entry *e;

	write_file(names_file, "pystitch-names 1\ndso =/usr/lib/x%20y.so\n"
	                       "a 10 2 8 =outer\nr 7 =inner =/src/a.c\nr 0 - -\n"
	                       "a ff 0 0 -\nend\n");
	ck_assert_int_eq(ps_names_load("T", names_file, &names, err, sizeof(err)), 0);
	ck_assert_uint_eq(ps_names_count(names), 2);
	e = ps_names_find(names, 0x10);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->sym, "outer");
	ck_assert_uint_eq(e->sym_start, 8);
	ck_assert_uint_eq(e->nr_records, 2);
	ck_assert_str_eq(e->records[0].function, "inner");
	ck_assert_str_eq(e->records[0].file, "/src/a.c");
	ck_assert_uint_eq(e->records[0].line, 7);
	ck_assert_ptr_null(e->records[1].function);
	e = ps_names_find(names, 0xff);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_null(e->sym);
	ck_assert_ptr_null(ps_names_find(names, 0x11));
	ps_names_free(names);
}
END_TEST

Suite *suite_names(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("names");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_names_same_frames);
	tcase_add_test(tc, test_names_unrecorded);
	tcase_add_test(tc, test_names_debug_frame_is_code);
	tcase_add_loop_test(tc, test_names_damaged, 0, sizeof(bad_tables) / sizeof(bad_tables[0]));
	tcase_add_test(tc, test_names_long_line);
	tcase_add_test(tc, test_names_good);
	suite_add_tcase(s, tc);
	return s;
}
