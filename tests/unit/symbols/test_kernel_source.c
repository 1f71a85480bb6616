/* The running kernel's symbols from perf record's copy of kallsyms
 * (kernel_source.c): used only when its first 64 KB are the live file's,
 * its kernel lines only (made into symbols where asked, kallsyms_index.c),
 * and all of the live file once a module is asked about. The live and copied files here differ past
 * their first 64 KB, so that each answer shows which file gave it. */
#include "helpers.h"
#include "symbols/dso_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILLERS 2500 /* about 87 KB of kernel lines before the named ones */

static char live[1024], copy[1024], cache_dir[1024], notes[1024], modules[1024], sys_module[1024];
static const uint8_t kernel_id[20] = { 0xab, 0xcd, 1, 2, 3 };
/* the running kernel: kallsyms live, build-id kernel_id, no modules */
static struct ps_kernel_live running = { live, notes, modules, sys_module };

/* /sys/kernel/notes of a kernel with build-id id: one GNU build-id note */
static void write_notes(const char *path, const uint8_t id[20])
{
	const uint32_t head[3] = { 4, 20, 3 };
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(head, sizeof(head), 1, f), 1);
	ck_assert_uint_eq(fwrite("GNU", 4, 1, f), 1);
	ck_assert_uint_eq(fwrite(id, 20, 1, f), 1);
	ck_assert_int_eq(fclose(f), 0);
}

/* A kallsyms text: the fillers, then two functions and a module's, all
 * named with prefix; head replaces the first line when not NULL. */
static void write_kallsyms(const char *path, const char *prefix, const char *head,
                           const char *damage)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", head ? head : "ffffffff81000000 T _text");
	for (int i = 1; i < FILLERS; i++)
		fprintf(f, "ffffffff81%06x t filler_%05d\n", i * 16, i);
	if (damage)
		fprintf(f, "%s\n", damage);
	fprintf(f, "ffffffff82000000 T %s_func\n", prefix);
	fprintf(f, "ffffffff82000100 T %s_other\n", prefix);
	fprintf(f, "ffffffffc0001000 t %s_mod\t[mymod]\n", prefix);
	ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
	char hex[41], name[128], dir[1024];

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	for (size_t i = 0; i < sizeof(kernel_id); i++)
		snprintf(hex + 2 * i, 3, "%02x", kernel_id[i]);
	make_dir(cache_dir, sizeof(cache_dir), "kallsyms-copy");
	fmt(live, sizeof(live), "%s/live", cache_dir);
	fmt(name, sizeof(name), "kallsyms-copy/[kernel.kallsyms]/%s", hex);
	make_dir(dir, sizeof(dir), name);
	fmt(copy, sizeof(copy), "%s/kallsyms", dir);
	write_kallsyms(live, "live", NULL, NULL);
	write_kallsyms(copy, "copy", NULL, NULL);
	fmt(notes, sizeof(notes), "%s/notes", cache_dir);
	write_notes(notes, kernel_id);
	fmt(modules, sizeof(modules), "%s/modules", cache_dir);
	write_file(modules, "");
	make_dir(sys_module, sizeof(sys_module), "kallsyms-copy/sys-module");
}

static const char *kernel_name(const struct ps_kernel_symbols *ks, uint64_t addr)
{
	uint64_t at;
	const struct ps_sym *sym = ps_kernel_symbols_find(ks, NULL, addr, &at);

	return sym ? sym->name : "[unknown]";
}

/* The index's answers are the table's: every address of a file with
 * runs of aliases (kept by perf's duplicate rules), the entry trampoline
 * alone and among aliases, '$' names and types the table skips, and the
 * last symbol's end. */
static const char index_text[] = "0000000000001000 A percpu_first\n"
                                 "ffffffff81000000 T srso_alias_untrain_ret\n"
                                 "ffffffff81000000 T _stext\n"
                                 "ffffffff81000000 T _text\n"
                                 "ffffffff81000040 t $x\n"
                                 "ffffffff81000080 T func_a\n"
                                 "ffffffff81000080 t local_alias\n"
                                 "ffffffff810000c0 W weak_one\n"
                                 "ffffffff810000c0 T strong_one\n"
                                 "ffffffff81000100 T SyS_foo\n"
                                 "ffffffff81000100 T sys_foo\n"
                                 "ffffffff81000140 T __entry_SYSCALL_64_trampoline\n"
                                 "ffffffff81000180 r rodata_sym\n"
                                 "ffffffff810001c0 T __entry_SYSCALL_64_trampoline\n"
                                 "ffffffff810001c0 T tramp_alias\n"
                                 "ffffffff81000200 D data_obj\n"
                                 "ffffffff81000240 b bss_obj\n"
                                 "\n"
                                 "ffffffff81000280 T last_one\n";

START_TEST(test_index_answers_as_table)
{
	struct ps_kernel_symbols *table, *lazy;
	struct ps_kernel_load_result result;
	struct ps_kallsyms_index *index;
	uint64_t start, end, lazy_start, lazy_end;
	char file[1024];

	fmt(file, sizeof(file), "%s/index", cache_dir);
	write_file(file, index_text);
	ck_assert_int_eq(ps_kallsyms_index_build(file, &index), 0);
	ps_kallsyms_index_free(index);
	ck_assert_int_eq(ps_kernel_symbols_read_kallsyms(file, NULL, &table, &result), 0);
	ck_assert_int_eq(ps_kernel_symbols_read_core(file, &lazy, &result), 0);
	for (uint64_t addr = 0xffffffff80fffff0; addr < 0xffffffff81002100; addr++) {
		uint64_t at_table, at_lazy;
		const struct ps_sym *a = ps_kernel_symbols_find(table, NULL, addr, &at_table);
		const struct ps_sym *b = ps_kernel_symbols_find(lazy, NULL, addr, &at_lazy);

		ck_assert_msg(!a == !b, "%llx: table %s, index %s", (unsigned long long)addr,
		              a ? a->name : "none", b ? b->name : "none");
		if (!a)
			continue;
		ck_assert_msg(strcmp(a->name, b->name) == 0 && a->start == b->start &&
		                      a->end == b->end && a->binding == b->binding,
		              "%llx: table %s [%llx, %llx), index %s [%llx, %llx)",
		              (unsigned long long)addr, a->name, (unsigned long long)a->start,
		              (unsigned long long)a->end, b->name, (unsigned long long)b->start,
		              (unsigned long long)b->end);
	}
	ck_assert(ps_kernel_symbols_extent(table, &start, &end));
	ck_assert(ps_kernel_symbols_extent(lazy, &lazy_start, &lazy_end));
	ck_assert_uint_eq(start, lazy_start);
	ck_assert_uint_eq(end, lazy_end);
	/* the relocation's symbol: the first kept one of that name */
	const char *names[] = {
		"_text",      "_stext",      "srso_alias_untrain_ret",        "local_alias",
		"func_a",     "tramp_alias", "__entry_SYSCALL_64_trampoline", "last_one",
		"rodata_sym", "no_such"
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int want = ps_kernel_symbols_reloc(table, names[i], 0xffffffff91000000);

		ck_assert_int_eq(ps_kernel_symbols_reloc(lazy, names[i], 0xffffffff91000000), want);
		ck_assert(ps_kernel_symbols_extent(table, &start, &end));
		ck_assert(ps_kernel_symbols_extent(lazy, &lazy_start, &lazy_end));
		ck_assert_msg(start == lazy_start, "after relocating by %s", names[i]);
	}
	ps_kernel_symbols_free(table);
	ps_kernel_symbols_free(lazy);
}
END_TEST

/* What the index leaves to the table: it must answer as the table would,
 * so a file it cannot read so is declined. */
START_TEST(test_index_declines)
{
	static const char *const texts[] = {
		"ffffffff81000100 T b\nffffffff81000000 T a\n", /* out of order */
		"ffffffff81000000 T a\nffffffff81000100 T no_newline", /* cut */
		"ffffffff81000000 T a[1]\n", /* the table's end rule looks at '[' */
		"ffffffff81000000 T a\nffffffff8100zz00 T bad_hex\n", /* damaged */
		"0000000000000000 T a\n", /* no address: kallsyms.c says why */
		"",
	};
	struct ps_kallsyms_index *index;
	char file[1024];

	fmt(file, sizeof(file), "%s/declined", cache_dir);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		write_file(file, texts[i]);
		ck_assert_msg(ps_kallsyms_index_build(file, &index) == -EILSEQ, "text %zu", i);
		ck_assert_ptr_null(index);
	}
	/* a NUL in a line */
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite("ffffffff81000000 T a\0b\n", 1, 24, f), 24);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(ps_kallsyms_index_build(file, &index), -EILSEQ);
}
END_TEST

#if defined(__x86_64__)
START_TEST(test_copy_of_this_boot)
{
	struct ps_kernel_symbols *ks, *whole;
	struct ps_kernel_load_result result;
	uint64_t start, end, whole_start, whole_end;

	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), 0);
	ck_assert(ps_kernel_symbols_core_only(ks));
	ck_assert_str_eq(kernel_name(ks, 0xffffffff82000010), "copy_func");
	ck_assert_str_eq(kernel_name(ks, 0xffffffff82000110), "copy_other");
	ck_assert_ptr_null(ps_kernel_symbols_module(ks, "[mymod]"));
	/* the kernel's map ends where the whole file ends it (a page past
	 * its last symbol, the modules following) */
	ck_assert_int_eq(ps_kernel_symbols_read_kallsyms(copy, NULL, &whole, &result), 0);
	ck_assert(!ps_kernel_symbols_core_only(whole));
	ck_assert_ptr_nonnull(ps_kernel_symbols_module(whole, "[mymod]"));
	ck_assert(ps_kernel_symbols_extent(ks, &start, &end));
	ck_assert(ps_kernel_symbols_extent(whole, &whole_start, &whole_end));
	ck_assert_uint_eq(start, whole_start);
	ck_assert_uint_eq(end, whole_end);
	ck_assert_uint_eq(end, 0xffffffff82002000);
	ps_kernel_symbols_free(whole);
	ps_kernel_symbols_free(ks);
}
END_TEST

START_TEST(test_copy_of_another_boot)
{
	struct ps_kernel_symbols *ks;
	struct ps_kernel_load_result result;
	char small_live[1024];

	/* another KASLR offset */
	write_kallsyms(copy, "copy", "ffffffff91000000 T _text", NULL);
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -ESTALE);
	ck_assert_ptr_null(ks);
	/* addresses restricted (kernel.kptr_restrict) where perf recorded */
	write_kallsyms(copy, "copy", "0000000000000000 T _text", NULL);
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -ESTALE);
	/* a live file shorter than the bytes compared: the copy must end
	 * where it ends */
	fmt(small_live, sizeof(small_live), "%s/small", cache_dir);
	write_file(small_live, "ffffffff81000000 T _text\n");
	write_file(copy, "ffffffff81000000 T _text\nffffffff81000010 T more\n");
	running.kallsyms = small_live;
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -ESTALE);
	write_file(copy, "ffffffff81000000 T _text\n");
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), 0);
	ps_kernel_symbols_free(ks);
	/* nothing but absolute addresses compared: no kernel address seen */
	write_file(small_live, "0000000000001000 A percpu_thing\n");
	write_file(copy, "0000000000001000 A percpu_thing\n");
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -ESTALE);
	running.kallsyms = live;
	/* no copy */
	fmt(small_live, sizeof(small_live), "%s/none", cache_dir);
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, small_live, &ks, &result), -ESTALE);
}
END_TEST

START_TEST(test_copy_damaged)
{
	struct ps_kernel_symbols *ks;
	struct ps_kernel_load_result result;

	/* past the bytes compared: read whole, the damaged line counted,
	 * and not used as the copy */
	write_kallsyms(copy, "copy", NULL, "ffffffff8100zz00 T bad_hex");
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -EILSEQ);
	ck_assert_ptr_null(ks);
}
END_TEST

/* The symbols module told --kallsyms LIVE, with the build-id cache and
 * the running kernel of this file, logging into log. */
static struct ps_symbols *running_symbols(struct log_capture *log)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .kallsyms = live,
		                        .buildid_dir = cache_dir,
		                        .log = capture_log,
		                        .log_ctx = log };
	struct ps_symbols *symbols;

	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	symbols->live_kernel = &running;
	return symbols;
}

/* A module's per-CPU variables: below the kernel (zero-based per-CPU
 * area) they cannot fall among its lines; inside the kernel image's range
 * (x86-64 from 6.15), hidden, or not known, the copy is not used. */
START_TEST(test_module_per_cpu)
{
	struct ps_kernel_symbols *ks;
	struct ps_kernel_load_result result;
	char dir[1024], section[1200];

	write_file(modules, "kvm 1388544 1 kvm_intel, Live 0x0000000000000000\n");
	/* no sections to look at (no sysfs): not known */
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -EXDEV);
	ck_assert_ptr_null(ks);
	make_dir(dir, sizeof(dir), "kallsyms-copy/sys-module/kvm/sections");
	/* no per-CPU variables */
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), 0);
	ps_kernel_symbols_free(ks);
	fmt(section, sizeof(section), "%s/.data..percpu", dir);
	write_file(section, "0x000000000002c000\n");
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), 0);
	ps_kernel_symbols_free(ks);
	write_file(section, "0xffffffff83a10000\n");
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -EXDEV);
	write_file(section, "0x0000000000000000\n");
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -EXDEV);
	/* no module support at all */
	running.modules = "/nonexistent/pystitch/modules";
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), 0);
	ps_kernel_symbols_free(ks);
	running.modules = modules;
}
END_TEST

/* Another kernel given as --kallsyms /proc/kallsyms: not the running
 * one, so its copy is not used (perf reads the file as told). */
START_TEST(test_other_kernel_told)
{
	static const uint8_t other[20] = { 0x12, 0x34 };
	struct log_capture log = { 0 };
	struct ps_symbols *symbols;
	struct ps_dso *kernel;

	write_notes(notes, other);
	symbols = running_symbols(&log);
	kernel = ps_symbols_dso(symbols, "[kernel.kallsyms]", kernel_id, sizeof(kernel_id));
	ck_assert_str_eq(resolve_plain(kernel, 0xffffffff82000010).sym, "live_func");
	ck_assert_msg(!strstr(log.all, "perf record's copy"), "log: %s", log.all);
	ps_symbols_free(symbols);
}
END_TEST

/* Through the symbols module: the kernel's answers from the copy, a
 * module's from the live file, which then answers the kernel's new
 * addresses too; answers given stay. */
START_TEST(test_modules_from_live)
{
	struct log_capture log = { 0 };
	struct ps_symbols *symbols = running_symbols(&log);
	struct ps_dso *kernel, *module;

	kernel = ps_symbols_dso(symbols, "[kernel.kallsyms]", kernel_id, sizeof(kernel_id));
	module = ps_symbols_dso(symbols, "[mymod]", NULL, 0);
	ck_assert_str_eq(resolve_plain(kernel, 0xffffffff82000010).sym, "copy_func");
	ck_assert_msg(strstr(log.all, "perf record's copy"), "log: %s", log.all);
	ck_assert_str_eq(resolve_plain(module, 0xffffffffc0001010).sym, "live_mod");
	ck_assert_str_eq(resolve_plain(kernel, 0xffffffff82000010).sym, "copy_func");
	ck_assert_str_eq(resolve_plain(kernel, 0xffffffff82000110).sym, "live_other");
	ps_symbols_free(symbols);
}
END_TEST
#else
START_TEST(test_copy_not_used)
{
	struct ps_kernel_symbols *ks;
	struct ps_kernel_load_result result;

	/* modules may lie below the kernel: its table would differ */
	ck_assert_int_eq(ps_kernel_symbols_from_copy(&running, copy, &ks, &result), -ENOTSUP);
	ck_assert_ptr_null(ks);
}
END_TEST
#endif

Suite *suite_kernel_source(void)
{
	Suite *s = suite_create("kernel_source");
	TCase *tc = tcase_create("kernel_source");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_index_answers_as_table);
	tcase_add_test(tc, test_index_declines);
#if defined(__x86_64__)
	tcase_add_test(tc, test_copy_of_this_boot);
	tcase_add_test(tc, test_copy_of_another_boot);
	tcase_add_test(tc, test_copy_damaged);
	tcase_add_test(tc, test_modules_from_live);
	tcase_add_test(tc, test_module_per_cpu);
	tcase_add_test(tc, test_other_kernel_told);
#else
	tcase_add_test(tc, test_copy_not_used);
#endif
	suite_add_tcase(s, tc);
	return s;
}
