/* Where a DSO's files are found, in perf's order: --symfs, the build-id
 * cache (~/.debug, or --buildid-dir), /usr/lib/debug (under --symfs here),
 * .gnu_debuglink; and the one warning for a file of another build-id. */
#include "helpers.h"
#include "symbols/symbols_priv.h"

#include <gelf.h>

#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

static char hex[41];

static void setup(void)
{
	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	for (size_t i = 0; i < fixture.build_id_size; i++)
		sprintf(hex + 2 * i, "%02x", fixture.build_id[i]);
}

/* A perf build-id cache: DIR/.build-id/xx/rest -> ../../PATH/BID/{elf,...} */
static void make_cache(const char *dir, const char *path, const char *file_name, const char *from)
{
	char target[1024], link[1024], command[3072];

	fmt(target, sizeof(target), "%s%s/%s/%s", dir, path, hex, file_name);
	copy_file(from, target);
	fmt(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	fmt(command, sizeof(command), "mkdir -p \"$(dirname '%s')\" && ln -sfn '../..%s/%s' '%s'",
	    link, path, hex, link);
	ck_assert_int_eq(system(command), 0);
}

static struct ps_symbols *open_symbols(const char *symfs, const char *buildid_dir,
                                       struct log_capture *log)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .symfs = symfs,
		                        .buildid_dir = buildid_dir,
		                        .log = capture_log,
		                        .log_ctx = log };
	struct ps_symbols *symbols;

	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	return symbols;
}

START_TEST(test_build_id_cache)
{
	struct log_capture log = { 0 };
	char cache[512], want[1024];
	struct ps_symbols *symbols;
	struct ps_dso *dso;

	make_dir(cache, sizeof(cache), "cache1");
	make_cache(cache, "/opt/gone/libfixture.so", "elf", fixture.so);
	symbols = open_symbols(NULL, cache, &log);
	dso = ps_symbols_dso(symbols, "/opt/gone/libfixture.so", fixture.build_id,
	                     fixture.build_id_size);
	fmt(want, sizeof(want), "%s/.build-id/%.2s/%s/elf", cache, hex, hex + 2);
	ck_assert_str_eq(ps_dso_file(dso), want);
	ck_assert_str_eq(ps_dso_symbol_file(dso), want);
	ck_assert_str_eq(resolve_plain(dso, fixture_symbol("after_gap", NULL)).sym, "after_gap");
	ck_assert_int_eq(log.warnings, 0);
	ps_symbols_free(symbols);
}
END_TEST

/* Under a symfs the build-id cache is SYMFS/.debug, whatever
 * --buildid-dir says (perf's symbol__config_symfs()), and comes first. */
START_TEST(test_cache_before_symfs)
{
	struct log_capture log = { 0 };
	char cache[512], root[512], in_root[1024], want[1024], elsewhere[512];
	struct ps_symbols *symbols;
	struct ps_dso *dso;

	make_dir(root, sizeof(root), "root2");
	make_dir(elsewhere, sizeof(elsewhere), "cache2");
	fmt(cache, sizeof(cache), "%s/.debug", root);
	make_cache(cache, "/lib/libfixture.so", "elf", fixture.so);
	make_cache(elsewhere, "/lib/libfixture.so", "elf", fixture.so);
	fmt(in_root, sizeof(in_root), "%s/lib/libfixture.so", root);
	copy_file(fixture.so, in_root);
	symbols = open_symbols(root, elsewhere, &log);
	dso = ps_symbols_dso(symbols, "/lib/libfixture.so", fixture.build_id,
	                     fixture.build_id_size);
	/* perf reads code from the build-id cache first, then --symfs */
	fmt(want, sizeof(want), "%s/.build-id/%.2s/%s/elf", cache, hex, hex + 2);
	ck_assert_str_eq(ps_dso_file(dso), want);
	ps_symbols_free(symbols);

	/* a symfs without .debug: the file under it */
	make_dir(root, sizeof(root), "root3");
	fmt(in_root, sizeof(in_root), "%s/lib/libfixture.so", root);
	copy_file(fixture.so, in_root);
	symbols = open_symbols(root, elsewhere, &log);
	dso = ps_symbols_dso(symbols, "/lib/libfixture.so", fixture.build_id,
	                     fixture.build_id_size);
	ck_assert_str_eq(ps_dso_file(dso), in_root);
	ck_assert_str_eq(ps_dso_symbol_file(dso), in_root);
	ck_assert_int_eq(log.warnings, 0);
	ps_symbols_free(symbols);
}
END_TEST

/* perf's dso__type(): the ELF class of the first candidate that exists,
 * the build-id cache's, then the system path's, whatever its build-id;
 * "[vdso]" without a build-id is perf's own copy, which a symfs hides. */
START_TEST(test_elf64)
{
	struct log_capture log = { 0 };
	char cache[512], dir[512], text[1024], elf32[1024], command[2200];
	uint8_t other[20];
	struct ps_symbols *symbols;

	memcpy(other, fixture.build_id, sizeof(other));
	other[0] ^= 0xff;
	make_dir(dir, sizeof(dir), "elf64");
	fmt(text, sizeof(text), "%s/notes.txt", dir);
	write_file(text, "not an ELF file\n");
	/* EI_CLASS 1: libelf reads a 32-bit ELF */
	fmt(elf32, sizeof(elf32), "%s/elf32.so", dir);
	copy_file(fixture.so, elf32);
	fmt(command, sizeof(command),
	    "printf '\\001' | dd of='%s' bs=1 seek=4 conv=notrunc 2>/dev/null", elf32);
	ck_assert_int_eq(system(command), 0);
	fmt(command, sizeof(command), "%s/copy.so", dir);
	copy_file(fixture.so, command);

	symbols = open_symbols(NULL, "/nonexistent", &log);
	ck_assert(ps_dso_is_elf64(ps_symbols_dso(symbols, fixture.so, NULL, 0)));
	/* a file of another build-id still tells its class */
	ck_assert(ps_dso_is_elf64(ps_symbols_dso(symbols, fixture.so, other, sizeof(other))));
	ck_assert(!ps_dso_is_elf64(ps_symbols_dso(symbols, text, NULL, 0)));
	ck_assert(!ps_dso_is_elf64(ps_symbols_dso(symbols, elf32, NULL, 0)));
	ck_assert(!ps_dso_is_elf64(ps_symbols_dso(symbols, "/nonexistent/lib.so", NULL, 0)));
	ck_assert(!ps_dso_is_elf64(ps_symbols_dso(symbols, "[stack]", NULL, 0)));
	ck_assert(!ps_dso_is_elf64(
	        ps_symbols_dso(symbols, "[vdso]", fixture.build_id, fixture.build_id_size)));
	if (getauxval(AT_SYSINFO_EHDR))
		ck_assert(ps_dso_is_elf64(ps_symbols_dso(symbols, "[vdso]", NULL, 0)));
	ps_symbols_free(symbols);

	/* the cache entry decides when it is there, even when not ELF */
	make_dir(cache, sizeof(cache), "elf64-cache");
	make_cache(cache, fixture.so, "elf", text);
	symbols = open_symbols(NULL, cache, &log);
	ck_assert(!ps_dso_is_elf64(
	        ps_symbols_dso(symbols, fixture.so, fixture.build_id, fixture.build_id_size)));
	ck_assert(ps_dso_is_elf64(ps_symbols_dso(symbols, fixture.so, NULL, 0)));
	ps_symbols_free(symbols);

	/* under a symfs: paths are looked up there, perf's own vdso is not */
	symbols = open_symbols(dir, "/nonexistent", &log);
	ck_assert(!ps_dso_is_elf64(ps_symbols_dso(symbols, fixture.so, NULL, 0)));
	ck_assert(!ps_dso_is_elf64(ps_symbols_dso(symbols, "[vdso]", NULL, 0)));
	ck_assert(!ps_dso_is_elf64(ps_symbols_dso(symbols, "/notes.txt", NULL, 0)));
	ck_assert(ps_dso_is_elf64(ps_symbols_dso(symbols, "/copy.so", NULL, 0)));
	ps_symbols_free(symbols);
	ck_assert_int_eq(log.warnings, 0);
}
END_TEST

START_TEST(test_debug_file_by_build_id)
{
	struct log_capture log = { 0 };
	char root[512], binary[1024], debug[1024];
	struct ps_symbols *symbols;
	struct ps_dso *dso;

	make_dir(root, sizeof(root), "root3");
	fmt(binary, sizeof(binary), "%s/usr/lib/libfixture.so", root);
	copy_file(fixture.stripped, binary);
	fmt(debug, sizeof(debug), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	copy_file(fixture.debug, debug);
	symbols = open_symbols(root, "/nonexistent", &log);
	dso = ps_symbols_dso(symbols, "/usr/lib/libfixture.so", fixture.build_id,
	                     fixture.build_id_size);
	/* code from the stripped binary, .symtab from the debug file */
	ck_assert_str_eq(ps_dso_file(dso), binary);
	ck_assert_str_eq(ps_dso_symbol_file(dso), debug);
	/* only the debug file has the local alias: the global still wins */
	ck_assert_str_eq(resolve_plain(dso, fixture_symbol("pick_local_l", NULL)).sym,
	                 "pick_local_g");
	ck_assert_str_eq(resolve_plain(dso, fixture_symbol("quirk_impl", NULL)).sym,
	                 "quirk_public_alias");
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_debuglink)
{
	struct log_capture log = { 0 };
	char root[512], binary[1024], debug[1024], command[4096];
	struct ps_symbols *symbols;
	struct ps_dso *dso;

	make_dir(root, sizeof(root), "root4");
	fmt(binary, sizeof(binary), "%s/usr/lib/libfixture.so", root);
	fmt(debug, sizeof(debug), "%s/usr/lib/.debug/libfixture.debug", root);
	copy_file(fixture.debug, debug);
	fmt(command, sizeof(command), "objcopy --add-gnu-debuglink='%s' '%s' '%s'", debug,
	    fixture.stripped, binary);
	ck_assert_int_eq(system(command), 0);
	symbols = open_symbols(root, "/nonexistent", &log);
	dso = ps_symbols_dso(symbols, "/usr/lib/libfixture.so", fixture.build_id,
	                     fixture.build_id_size);
	ck_assert_str_eq(ps_dso_symbol_file(dso), debug);
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_vdso_from_cache)
{
	struct log_capture log = { 0 };
	char cache[512], want[1024];
	struct ps_symbols *symbols;
	struct ps_dso *dso;
	struct ps_frame_name frames[4];

	make_dir(cache, sizeof(cache), "cache5");
	make_cache(cache, "/[vdso]", "vdso", fixture.so);
	symbols = open_symbols(NULL, cache, &log);
	dso = ps_symbols_dso(symbols, "[vdso]", fixture.build_id, fixture.build_id_size);
	fmt(want, sizeof(want), "%s/.build-id/%.2s/%s/vdso", cache, hex, hex + 2);
	ck_assert_str_eq(ps_dso_file(dso), want);
	/* perf runs no addr2line on "[...]" names: no inline frames */
	ck_assert_uint_eq(
	        ps_dso_resolve(dso, fixture_symbol("inl_outer", NULL) + 8, true, frames, 4), 1);
	ck_assert_str_eq(frames[0].sym, "inl_outer");
	ps_symbols_free(symbols);
}
END_TEST

/* pipe mode records no build-id for "[vdso]": perf uses its own vdso, and
 * so do we, from a private file removed by ps_symbols_free() */
START_TEST(test_vdso_without_build_id)
{
	struct log_capture log = { 0 };
	struct ps_symbols *symbols;
	struct ps_dso *dso, *recorded;
	char *file;
	struct stat st;

	if (!getauxval(AT_SYSINFO_EHDR))
		return; /* no vdso in this process */
	symbols = open_symbols(NULL, "/nonexistent", &log);
	dso = ps_symbols_dso(symbols, "[vdso]", NULL, 0);
	ck_assert_ptr_nonnull(ps_dso_file(dso));
	file = strdup(ps_dso_file(dso));
	ck_assert_ptr_nonnull(file);
	ck_assert_int_eq(stat(file, &st), 0);
	ck_assert_msg(S_ISREG(st.st_mode) && st.st_size > 0, "%s", file);
	ck_assert_ptr_nonnull(ps_dso_symbol_file(dso));
	ck_assert_str_eq(ps_dso_symbol_file(dso), file);
	/* one file per session */
	ck_assert_str_eq(ps_dso_file(ps_symbols_dso(symbols, "[vdso]", NULL, 0)), file);
	/* a recorded build-id missing from the cache: nothing, as perf */
	recorded = ps_symbols_dso(symbols, "[vdso]", fixture.build_id, fixture.build_id_size);
	ck_assert_ptr_null(ps_dso_file(recorded));
	ps_symbols_free(symbols);
	ck_assert_int_ne(stat(file, &st), 0);
	free(file);
}
END_TEST

START_TEST(test_build_id_mismatch_warns_once)
{
	struct log_capture log = { 0 };
	uint8_t other[20];
	char other_hex[41];
	struct ps_symbols *symbols;
	struct ps_dso *dso;

	memcpy(other, fixture.build_id, sizeof(other));
	other[0] ^= 0xff;
	for (size_t i = 0; i < fixture.build_id_size; i++)
		sprintf(other_hex + 2 * i, "%02x", other[i]);
	symbols = open_symbols(NULL, "/nonexistent", &log);
	dso = ps_symbols_dso(symbols, fixture.so, other, fixture.build_id_size);
	ck_assert_ptr_null(ps_dso_file(dso));
	ck_assert_ptr_null(resolve_plain(dso, fixture_symbol("after_gap", NULL)).sym);
	ck_assert_ptr_null(resolve_plain(dso, fixture_symbol("inl_outer", NULL)).sym);
	ck_assert_int_eq(log.warnings, 1);
	ck_assert_msg(strstr(log.all, hex) && strstr(log.all, other_hex), "log: %s", log.all);
	ck_assert_ptr_nonnull(strstr(ps_dso_errmsg(dso), "build-id mismatch"));
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_same_dso_handle)
{
	struct log_capture log = { 0 };
	struct ps_symbols *symbols = open_symbols(NULL, "/nonexistent", &log);
	struct ps_dso *a =
	        ps_symbols_dso(symbols, fixture.so, fixture.build_id, fixture.build_id_size);
	struct ps_dso *b =
	        ps_symbols_dso(symbols, fixture.so, fixture.build_id, fixture.build_id_size);
	struct ps_dso *c = ps_symbols_dso(symbols, fixture.so, NULL, 0);

	ck_assert_ptr_eq(a, b);
	ck_assert_ptr_ne(a, c);
	ck_assert_str_eq(ps_dso_name(a), fixture.so);
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_no_file)
{
	struct log_capture log = { 0 };
	struct ps_symbols *symbols = open_symbols(NULL, "/nonexistent", &log);
	struct ps_dso *dso = ps_symbols_dso(symbols, "/nonexistent/libnothing.so", NULL, 0);
	struct ps_dso *anon = ps_symbols_dso(symbols, "//anon", NULL, 0);

	ck_assert_ptr_null(ps_dso_file(dso));
	ck_assert_ptr_null(resolve_plain(dso, 0x1000).sym);
	ck_assert_ptr_nonnull(ps_dso_errmsg(dso));
	ck_assert_ptr_null(resolve_plain(anon, 0x1000).sym);
	ps_symbols_free(symbols);
}
END_TEST

/* Files from a resolver (an archive's contents): only the paths it knows
 * exist, whatever is on disk; the DSO's file is the resolver's copy, and
 * the observer hears of each file read and of each object without any. */
struct resolver {
	const char *path, *file;
	int used, missing;
	char used_path[512], used_file[512];
	enum ps_file_kind used_kind;
};

static const char *resolve(void *ctx, const char *path)
{
	const struct resolver *r = ctx;

	return strcmp(path, r->path) == 0 ? r->file : NULL;
}

static void note_used(void *ctx, const char *path, const char *file, enum ps_file_kind kind)
{
	struct resolver *r = ctx;

	if (!file) {
		r->missing++;
		return;
	}
	r->used++;
	fmt(r->used_path, sizeof(r->used_path), "%s", path);
	fmt(r->used_file, sizeof(r->used_file), "%s", file);
	r->used_kind = kind;
}

START_TEST(test_resolver)
{
	struct log_capture log = { 0 };
	struct resolver r = { .path = "/archived/libfixture.so", .file = fixture.so };
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .buildid_dir = "/nonexistent",
		                        .log = capture_log,
		                        .log_ctx = &log,
		                        .files = { .resolve = resolve,
		                                   .resolve_ctx = &r,
		                                   .used = note_used,
		                                   .used_ctx = &r } };
	struct ps_symbols *symbols;
	struct ps_dso *dso, *on_disk;

	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	dso = ps_symbols_dso(symbols, r.path, fixture.build_id, fixture.build_id_size);
	ck_assert_str_eq(ps_dso_file(dso), fixture.so);
	ck_assert_str_eq(resolve_plain(dso, fixture_symbol("after_gap", NULL)).sym, "after_gap");
	ck_assert_int_eq(r.used, 1);
	ck_assert_str_eq(r.used_path, r.path);
	ck_assert_str_eq(r.used_file, fixture.so);
	ck_assert_int_eq(r.used_kind, PS_FILE_ELF);
	/* on disk, but not known to the resolver: not there */
	on_disk = ps_symbols_dso(symbols, fixture.so, fixture.build_id, fixture.build_id_size);
	ck_assert_ptr_null(ps_dso_file(on_disk));
	ck_assert_ptr_null(resolve_plain(on_disk, fixture_symbol("after_gap", NULL)).sym);
	ck_assert_int_eq(r.used, 1);
	ck_assert_int_eq(r.missing, 1);
	ps_symbols_free(symbols);
}
END_TEST

/* Several --symfs trees, one per container: a DSO is read from the first
 * whose copy has its recorded build-id (no warning for the trees of other
 * containers), or, none recorded, from the first that holds it. */
START_TEST(test_symfs_trees)
{
	struct log_capture log = { 0 };
	char first[512], second[512], path[1024];
	const char *trees[1];
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .log = capture_log,
		                        .log_ctx = &log,
		                        .symfs_dirs = trees,
		                        .nr_symfs_dirs = 1 };
	uint8_t other[20];
	struct ps_symbols *symbols;
	struct ps_dso *dso;

	make_dir(first, sizeof(first), "tree1");
	make_dir(second, sizeof(second), "tree2");
	/* another ELF file at the same path in the first tree */
	fmt(path, sizeof(path), "%s/usr/lib/libt.so", first);
	copy_file("/proc/self/exe", path);
	fmt(path, sizeof(path), "%s/usr/lib/libt.so", second);
	copy_file(fixture.so, path);
	opts.symfs = first;
	trees[0] = second;
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	dso = ps_symbols_dso(symbols, "/usr/lib/libt.so", fixture.build_id, fixture.build_id_size);
	ck_assert_str_eq(ps_dso_file(dso), path);
	ck_assert_str_eq(resolve_plain(dso, fixture_symbol("after_gap", NULL)).sym, "after_gap");
	ck_assert_int_eq(log.warnings, 0);
	/* none recorded: the first tree's */
	dso = ps_symbols_dso(symbols, "/usr/lib/libt.so", NULL, 0);
	fmt(path, sizeof(path), "%s/usr/lib/libt.so", first);
	ck_assert_str_eq(ps_dso_file(dso), path);
	/* in no tree: the first tree's file, refused once */
	memcpy(other, fixture.build_id, sizeof(other));
	other[0] ^= 0xff;
	dso = ps_symbols_dso(symbols, "/usr/lib/libt.so", other, fixture.build_id_size);
	ck_assert_ptr_null(ps_dso_file(dso));
	ck_assert_int_eq(log.warnings, 1);
	ck_assert_ptr_nonnull(strstr(log.all, "build-id mismatch"));
	ps_symbols_free(symbols);
}
END_TEST

/* Where a mapping places the file: start - pgoff, except in a segment
 * whose address and offset differ otherwise than the first's (lld's
 * executable segment a page beyond its offset; a writable segment sharing
 * its first page with a read-only one) */
START_TEST(test_map_base)
{
	/* lld: R at 0/0, R E at 0x145b0/0x155b0, RW at 0x54c80/0x56c80 */
	struct ps_elf_segment lld[] = {
		{ .type = PT_PHDR, .flags = PF_R, .vaddr = 0x40, .offset = 0x40 },
		{ .type = PT_LOAD, .flags = PF_R, .vaddr = 0, .offset = 0, .filesz = 0x145ac },
		{ .type = PT_LOAD,
		  .flags = PF_R | PF_X,
		  .vaddr = 0x155b0,
		  .offset = 0x145b0,
		  .filesz = 0x406d0 },
		{ .type = PT_LOAD,
		  .flags = PF_R | PF_W,
		  .vaddr = 0x56c80,
		  .offset = 0x54c80,
		  .filesz = 0x2af8 },
	};
	/* GNU ld: R E at 0x1000/0x1000, R at 0x2000/0x2000, RW at 0x2dd0/0x3dd0 */
	struct ps_elf_segment bfd[] = {
		{ .type = PT_LOAD, .flags = PF_R, .vaddr = 0, .offset = 0, .filesz = 0x670 },
		{ .type = PT_LOAD,
		  .flags = PF_R | PF_X,
		  .vaddr = 0x1000,
		  .offset = 0x1000,
		  .filesz = 0x2e5 },
		{ .type = PT_LOAD,
		  .flags = PF_R,
		  .vaddr = 0x2000,
		  .offset = 0x2000,
		  .filesz = 0xd0 },
		{ .type = PT_LOAD,
		  .flags = PF_R | PF_W,
		  .vaddr = 0x3dd0,
		  .offset = 0x2dd0,
		  .filesz = 0x250 },
	};
	struct ps_elf elf = { .segments = lld, .nr_segments = 4 };
	const uint64_t base = 0x55cf4abd2000;

	ck_assert_uint_eq(ps_elf_map_base(&elf, base, 0, false), base);
	ck_assert_uint_eq(ps_elf_map_base(&elf, base + 0x15000, 0x14000, true), base);
	ck_assert_uint_eq(ps_elf_map_base(&elf, base + 0x56000, 0x54000, false), base);
	/* an mprotect()ed part of the writable segment */
	ck_assert_uint_eq(ps_elf_map_base(&elf, base + 0x57000, 0x55000, false), base);
	/* no segment holds the offset: start - pgoff */
	ck_assert_uint_eq(ps_elf_map_base(&elf, base + 0x90000, 0x80000, false), base + 0x10000);

	elf = (struct ps_elf){ .segments = bfd, .nr_segments = 4 };
	ck_assert_uint_eq(ps_elf_map_base(&elf, base + 0x1000, 0x1000, true), base);
	/* the executable segment's mapping, not the read-only one in the
	 * page after */
	ck_assert_uint_eq(ps_elf_map_base(&elf, base + 0x2000, 0x2000, false), base);
}
END_TEST

/* The first PT_LOAD's address and alignment, by which libdwfl and perf
 * place a file. */
START_TEST(test_first_load)
{
	/* perf inject --jit's files: code at offset and address 0x80 */
	struct ps_elf_segment jitted[] = {
		{ .type = PT_LOAD,
		  .flags = PF_R | PF_X,
		  .vaddr = 0x80,
		  .offset = 0x80,
		  .filesz = 0x248,
		  .align = 8 },
	};
	/* a PT_PHDR first, which does not count */
	struct ps_elf_segment usual[] = {
		{ .type = PT_PHDR, .vaddr = 0x40, .offset = 0x40, .align = 8 },
		{ .type = PT_LOAD, .vaddr = 0x400000, .offset = 0, .align = 0x200000 },
		{ .type = PT_LOAD, .vaddr = 0x601000, .offset = 0x1000, .align = 0x200000 },
	};
	struct ps_elf elf = { .segments = jitted, .nr_segments = 1 };
	uint64_t vaddr = 1, align = 1;

	ps_elf_first_load(&elf, &vaddr, &align);
	ck_assert_uint_eq(vaddr, 0x80);
	ck_assert_uint_eq(align, 8);
	elf = (struct ps_elf){ .segments = usual, .nr_segments = 3 };
	ps_elf_first_load(&elf, &vaddr, &align);
	ck_assert_uint_eq(vaddr, 0x400000);
	ck_assert_uint_eq(align, 0x200000);
	/* none */
	elf = (struct ps_elf){ .segments = usual, .nr_segments = 1 };
	ps_elf_first_load(&elf, &vaddr, &align);
	ck_assert_uint_eq(vaddr, 0);
	ck_assert_uint_eq(align, 0);
}
END_TEST

Suite *suite_lookup(void)
{
	Suite *s = suite_create("lookup");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_build_id_cache);
	tcase_add_test(tc, test_cache_before_symfs);
	tcase_add_test(tc, test_elf64);
	tcase_add_test(tc, test_debug_file_by_build_id);
	tcase_add_test(tc, test_debuglink);
	tcase_add_test(tc, test_vdso_from_cache);
	tcase_add_test(tc, test_vdso_without_build_id);
	tcase_add_test(tc, test_build_id_mismatch_warns_once);
	tcase_add_test(tc, test_same_dso_handle);
	tcase_add_test(tc, test_no_file);
	tcase_add_test(tc, test_resolver);
	tcase_add_test(tc, test_symfs_trees);
	tcase_add_test(tc, test_map_base);
	tcase_add_test(tc, test_first_load);
	suite_add_tcase(s, tc);
	return s;
}
