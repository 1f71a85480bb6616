/* Kernel symbols from a kallsyms file: perf's type filter, aliases, end
 * fix-ups around the modules, module tables, relocation, and damaged
 * lines skipped and counted. */
#include "helpers.h"
#include "symbols/symbols_priv.h"

#include <errno.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>

static const char kallsyms_text[] = "ffffffff81000000 T _stext\n"
                                    "ffffffff81000000 T _text\n"
                                    "ffffffff81000800 D data_obj\n"
                                    "ffffffff81001000 T func_a\n"
                                    "ffffffff81001000 t local_alias\n"
                                    "ffffffff81001040 T SyS_foo\n"
                                    "ffffffff81001040 T sys_foo\n"
                                    "ffffffff81001080 W weak_thing\n"
                                    "ffffffff81001080 T strong_thing\n"
                                    "ffffffff810010a0 T __entry_SYSCALL_64_trampoline\n"
                                    "ffffffff810010c0 r rodata_sym\n"
                                    "ffffffff810010c8 T $x_mapping\n"
                                    "ffffffff810010d0 T last_kernel\n"
                                    "garbage line\n"
                                    "ffffffff8100zz00 T bad_hex\n"
                                    "ffffffff81002000 T\n"
                                    "ffffffff81002000\n"
                                    "12345678901234567890 T too_many_digits\n"
                                    "\n"
                                    "ffffffffc0001000 t mod_func\t[mymod]\n"
                                    "ffffffffc0001100 t mod_other\t[mymod]\n"
                                    "ffffffffc0002000 t other_func\t[other_mod]\n";

static char path[1024];
static struct log_capture log_state;
static struct ps_symbols *symbols;

static void setup(void)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .kallsyms = path,
		                        .srcline = true,
		                        .log = capture_log,
		                        .log_ctx = &log_state };

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	fmt(path, sizeof(path), "%s/kallsyms", fixture.dir);
	write_file(path, kallsyms_text);
	memset(&log_state, 0, sizeof(log_state));
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
}

static void teardown(void)
{
	ps_symbols_free(symbols);
}

static void expect(const char *dso_name, uint64_t addr, const char *want, uint64_t offset)
{
	struct ps_dso *dso = ps_symbols_dso(symbols, dso_name, NULL, 0);
	struct ps_frame_name f = resolve_plain(dso, addr);

	if (!want) {
		ck_assert_msg(f.sym == NULL, "%llx: want [unknown], got %s",
		              (unsigned long long)addr, f.sym);
		return;
	}
	ck_assert_msg(f.sym && strcmp(f.sym, want) == 0, "%llx: want %s, got %s",
	              (unsigned long long)addr, want, f.sym ? f.sym : "[unknown]");
	ck_assert_uint_eq(f.offset, offset);
}

START_TEST(test_kernel_symbols)
{
	/* kallsyms has no sizes: perf ends each symbol at the next start, so
	 * of aliases only the last one has a size, and that one wins */
	expect("[kernel.kallsyms]", 0xffffffff81000010, "_text", 0x10);
	expect("[kernel.kallsyms]", 0xffffffff81000900, "data_obj", 0x100);
	expect("[kernel.kallsyms]", 0xffffffff81001019, "local_alias", 0x19);
	expect("[kernel.kallsyms]", 0xffffffff81001044, "sys_foo", 4);
	expect("[kernel.kallsyms]", 0xffffffff81001081, "strong_thing", 1);
	/* the entry trampoline symbol is dropped, rodata is not loaded */
	expect("[kernel.kallsyms]", 0xffffffff810010a8, NULL, 0);
	expect("[kernel.kallsyms]", 0xffffffff810010c4, NULL, 0);
	/* the last kernel symbol before the modules ends on the next page */
	expect("[kernel.kallsyms]", 0xffffffff81002fff, "last_kernel", 0x1f2f);
	expect("[kernel.kallsyms]", 0xffffffff81003000, NULL, 0);
	/* module symbols are not the kernel's */
	expect("[kernel.kallsyms]", 0xffffffffc0001010, NULL, 0);
}
END_TEST

START_TEST(test_module_symbols)
{
	/* perf gives modules kallsyms's symbols once it has loaded the
	 * kernel's map */
	expect("[kernel.kallsyms]", 0xffffffff81001019, "local_alias", 0x19);
	expect("[mymod]", 0xffffffffc0001010, "mod_func", 0x10);
	expect("[mymod]", 0xffffffffc0001f00, "mod_other", 0xe00);
	expect("[mymod]", 0xffffffffc0002000, NULL, 0);
	expect("[other_mod]", 0xffffffffc0002010, "other_func", 0x10);
	expect("/lib/modules/6.1.0/kernel/other-mod.ko", 0xffffffffc0002010, "other_func", 0x10);
}
END_TEST

/* The kernel map once loaded (map__fixup_start/end): from the first kernel
 * symbol to the end of the last (a page past it, the modules following),
 * relocated; nothing before the kernel DSO resolved an address, nor after
 * a module resolved one. A module looked up before the kernel's map was
 * loaded has no symbols until then, and after it all of kallsyms's but
 * the first of each run of its own (perf's maps__split_kallsyms() checks
 * whether a module is loaded only where the module changes, and leaves
 * out that symbol; perf script shows the same, see tests/e2e/
 * script_kernel.sh's text pokes). */
START_TEST(test_kernel_extent)
{
	uint64_t start = 0, end = 0;

	ck_assert(!ps_symbols_kernel_extent(symbols, &start, &end));
	expect("[mymod]", 0xffffffffc0001010, NULL, 0);
	expect("[mymod]", 0xffffffffc0001f00, NULL, 0);
	ck_assert(!ps_symbols_kernel_extent(symbols, &start, &end));
	expect("[kernel.kallsyms]", 0xffffffff81001019, "local_alias", 0x19);
	ck_assert(ps_symbols_kernel_extent(symbols, &start, &end));
	ck_assert_uint_eq(start, 0xffffffff81000000);
	ck_assert_uint_eq(end, 0xffffffff81003000);
	ck_assert_int_eq(ps_symbols_kernel_reloc(symbols, "_text", 0xffffffff91000000), 0);
	ck_assert(ps_symbols_kernel_extent(symbols, &start, &end));
	ck_assert_uint_eq(start, 0xffffffff91000000);
	ck_assert_uint_eq(end, 0xffffffff91003000);
	expect("[mymod]", 0xffffffffc0001010, NULL, 0);
	expect("[mymod]", 0xffffffffc0001f00, "mod_other", 0xe00);
	expect("[other_mod]", 0xffffffffc0002010, "other_func", 0x10);
}
END_TEST

START_TEST(test_damaged_lines_counted)
{
	expect("[kernel.kallsyms]", 0xffffffff81001000, "local_alias", 0);
	ck_assert_int_eq(log_state.warnings, 1);
	ck_assert_msg(strstr(log_state.all, "skipped 5 damaged lines"), "log: %s", log_state.all);
}
END_TEST

START_TEST(test_relocation)
{
	ck_assert_int_eq(ps_symbols_kernel_reloc(symbols, "_text", 0xffffffff91000000), 0);
	expect("[kernel.kallsyms]", 0xffffffff91001019, "local_alias", 0x19);
}
END_TEST

START_TEST(test_kernel_srcline)
{
	struct ps_dso *dso = ps_symbols_dso(symbols, "[kernel.kallsyms]", NULL, 0);

	ck_assert_str_eq(resolve_plain(dso, 0xffffffff81001019).srcline,
	                 "[kernel.kallsyms][ffffffff81001019]");
}
END_TEST

START_TEST(test_long_line_and_restricted)
{
	char long_path[1024], zero_path[1024];
	static char text[20000];
	struct log_capture log = { 0 };
	struct ps_symbols_opts opts = { .sz = sizeof(opts), .log = capture_log, .log_ctx = &log };
	struct ps_symbols *s;

	fmt(long_path, sizeof(long_path), "%s/kallsyms.long", fixture.dir);
	memset(text, 'a', sizeof(text) - 64);
	strcpy(text + sizeof(text) - 64, "\nffffffff81000000 T ok_symbol\n");
	write_file(long_path, text);
	opts.kallsyms = long_path;
	ck_assert_int_eq(ps_symbols_new(&opts, &s), 0);
	ck_assert_str_eq(
	        resolve_plain(ps_symbols_dso(s, "[kernel.kallsyms]", NULL, 0), 0xffffffff81000004)
	                .sym,
	        "ok_symbol");
	ps_symbols_free(s);

	fmt(zero_path, sizeof(zero_path), "%s/kallsyms.zero", fixture.dir);
	write_file(zero_path, "0000000000000000 T a\n0000000000000000 T b\n");
	opts.kallsyms = zero_path;
	memset(&log, 0, sizeof(log));
	ck_assert_int_eq(ps_symbols_new(&opts, &s), 0);
	ck_assert_ptr_null(resolve_plain(ps_symbols_dso(s, "[kernel.kallsyms]", NULL, 0), 0).sym);
	ck_assert_msg(strstr(log.all, "zero"), "log: %s", log.all);
	ps_symbols_free(s);
}
END_TEST

/* A NUL in a line ends it where fgets() and strlen() would (the rest of
 * that line is lost), and a name is cut at perf's KSYM_NAME_LEN. */
START_TEST(test_nul_and_long_name)
{
	static const char head[] = "ffffffff81000000 T before\n"
	                           "ffffffff81001000 T cut_here\0rest of the line\n"
	                           "ffffffff81002000 T ";
	char file[1024], name[601];
	struct ps_symbols_opts opts = { .sz = sizeof(opts) };
	struct ps_symbols *s;
	struct ps_dso *dso;
	const char *got;
	FILE *f;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	fmt(file, sizeof(file), "%s/kallsyms.nul", fixture.dir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(head, 1, sizeof(head) - 1, f), sizeof(head) - 1);
	fprintf(f, "%s\nffffffff81003000 T after\n", name);
	ck_assert_int_eq(fclose(f), 0);
	opts.kallsyms = file;
	ck_assert_int_eq(ps_symbols_new(&opts, &s), 0);
	dso = ps_symbols_dso(s, "[kernel.kallsyms]", NULL, 0);
	ck_assert_str_eq(resolve_plain(dso, 0xffffffff81001010).sym, "cut_here");
	got = resolve_plain(dso, 0xffffffff81002010).sym;
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(strlen(got), 512);
	ck_assert_int_eq(strncmp(got, name, 512), 0);
	ck_assert_str_eq(resolve_plain(dso, 0xffffffff81003010).sym, "after");
	ps_symbols_free(s);
}
END_TEST

/* Kernel symbols from a resolver (an archive): the path as looked up is
 * reported, the resolver's file is read, and a path it does not know
 * fails even when it exists on disk. */
static const char *resolve_proc(void *ctx, const char *name)
{
	return strcmp(name, "/proc/kallsyms") == 0 ? ctx : NULL;
}

static void count_used(void *ctx, const char *name, const char *file, enum ps_file_kind kind)
{
	ck_assert_str_eq(name, "/proc/kallsyms");
	ck_assert_str_eq(file, path);
	ck_assert_int_eq(kind, PS_FILE_KALLSYMS);
	++*(int *)ctx;
}

START_TEST(test_kallsyms_resolver)
{
	int used = 0;
	struct ps_file_hooks files = {
		.resolve = resolve_proc, .resolve_ctx = path, .used = count_used, .used_ctx = &used
	};
	struct ps_kernel_symbols *ks;
	struct ps_kernel_load_result result;
	uint64_t at;

	ck_assert_int_eq(ps_kernel_symbols_read_kallsyms("/proc/kallsyms", &files, &ks, &result),
	                 0);
	ck_assert_int_eq(used, 1);
	ck_assert_str_eq(ps_kernel_symbols_find(ks, NULL, 0xffffffff81001044, &at)->name,
	                 "sys_foo");
	ps_kernel_symbols_free(ks);
	ck_assert_int_eq(ps_kernel_symbols_read_kallsyms(path, &files, &ks, &result), -ENOENT);
	ck_assert_ptr_null(ks);
	ck_assert_ptr_nonnull(strstr(result.err, path));
	ck_assert_int_eq(used, 1);
}
END_TEST

Suite *suite_kallsyms(void)
{
	Suite *s = suite_create("kallsyms");
	TCase *tc = tcase_create("kallsyms");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_kernel_symbols);
	tcase_add_test(tc, test_module_symbols);
	tcase_add_test(tc, test_kernel_extent);
	tcase_add_test(tc, test_damaged_lines_counted);
	tcase_add_test(tc, test_relocation);
	tcase_add_test(tc, test_kernel_srcline);
	tcase_add_test(tc, test_long_line_and_restricted);
	tcase_add_test(tc, test_nul_and_long_name);
	tcase_add_test(tc, test_kallsyms_resolver);
	suite_add_tcase(s, tc);
	return s;
}
