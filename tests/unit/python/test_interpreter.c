/* Unit tests of CPython detection, the offsets table and the stub scan
 * (src/python/detect.c, offsets.c, stubs.c). Detection runs on small ELF
 * fixtures built at run time with cc and binutils (CC overrides cc), and on
 * the interpreters installed under pyenv when there are any. The stub scan
 * runs on synthetic stack copies laid out as each version lays them out,
 * with noise around them. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/python.h"

/* ---- names and versions ---------------------------------------------- */

START_TEST(test_eval_names)
{
	static const struct {
		const char *name;
		enum ps_py_eval_kind kind;
	} names[] = {
		{ "_PyEval_EvalFrameDefault", PS_PY_EVAL_MAIN },
		{ "_PyEval_EvalFrameDefault.cold", PS_PY_EVAL_CLONE },
		{ "_PyEval_EvalFrameDefault.cold.2962", PS_PY_EVAL_CLONE },
		{ "_PyEval_EvalFrameDefault.part.0", PS_PY_EVAL_CLONE },
		{ "_PyEval_EvalFrameDefault.localalias", PS_PY_EVAL_CLONE },
		{ "_PyEval_EvalFrameDefault.constprop.0.isra.0", PS_PY_EVAL_CLONE },
		{ "_PyEval_EvalFrameDefault.lto_priv.0", PS_PY_EVAL_CLONE },
		{ "_PyEval_EvalFrameDefaultX", PS_PY_EVAL_NONE },
		{ "_PyEval_EvalFrameDefault.", PS_PY_EVAL_NONE },
		{ "_PyEval_EvalFrameDefault.part.", PS_PY_EVAL_NONE },
		{ "_PyEval_EvalFrameDefault.hot", PS_PY_EVAL_NONE },
		{ "PyEval_EvalFrameEx", PS_PY_EVAL_NONE },
		{ "_PyEval_EvalFrame", PS_PY_EVAL_NONE },
		{ NULL, PS_PY_EVAL_NONE },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(ps_py_eval_name_kind(names[i].name) == names[i].kind, "%s",
		              names[i].name ? names[i].name : "NULL");
}
END_TEST

START_TEST(test_parse_version)
{
	static const struct {
		const char *text;
		uint32_t hex;
	} versions[] = {
		{ "3.12.1", 0x030c01f0 },
		{ "3.8.18", 0x030812f0 },
		{ "3.13.0rc2", 0x030d00c2 },
		{ "3.14.0a7", 0x030e00a7 },
		{ "3.12.0b4", 0x030c00b4 },
		{ "3.11.2+", 0x030b02f0 },
		{ "3.10.0a1+", 0x030a00a1 },
		{ "2.7.18", 0x020712f0 },
		{ "3.12", 0 },
		{ "3.12.1.4", 0 },
		{ "4.0.0", 0 },
		{ "13.0.1", 0 },
		{ "3.123.1", 0 },
		{ "3.12.1rc", 0 },
		{ "3.12.1c1", 0 },
		{ "3.12.1 ", 0 },
		{ "", 0 },
		{ "3.2.0-1", 0 },
	};

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		ck_assert_msg(ps_py_parse_version(versions[i].text, strlen(versions[i].text)) ==
		                      versions[i].hex,
		              "%s", versions[i].text);
	ck_assert_uint_eq(ps_py_parse_version(NULL, 0), 0);
	/* the length bounds the text: "3.12.15" read as "3.12.1" */
	ck_assert_uint_eq(ps_py_parse_version("3.12.15", 6), 0x030c01f0);
}
END_TEST

/* ---- offsets --------------------------------------------------------- */

static bool fits(uint16_t offset, size_t field, size_t size)
{
	return offset == PS_PY_NO_OFFSET || offset + field <= size;
}

START_TEST(test_offsets_lookup)
{
	for (int minor = 8; minor <= 14; minor++) {
		const struct ps_py_offsets *row = ps_py_offsets_lookup(3, minor, 0);

		ck_assert_ptr_nonnull(row);
		ck_assert_int_eq(row->minor, minor);
		ck_assert_ptr_eq(ps_py_offsets_lookup(3, minor, -1), row);
		ck_assert_ptr_eq(ps_py_offsets_lookup(3, minor, 99), row);
	}
	ck_assert_ptr_null(ps_py_offsets_lookup(3, 7, 16));
	ck_assert_ptr_null(ps_py_offsets_lookup(3, 15, 0));
	ck_assert_ptr_null(ps_py_offsets_lookup(2, 7, 18));
	ck_assert_ptr_null(ps_py_offsets_lookup(4, 0, 0));
	ck_assert_ptr_null(ps_py_offsets_lookup(-1, -1, -1));
}
END_TEST

START_TEST(test_offsets_nearest_patch)
{
	static const struct ps_py_offsets rows[] = {
		{ .major = 3, .minor = 11, .micro = 2 },
		{ .major = 3, .minor = 11, .micro = 7 },
		{ .major = 3, .minor = 11, .micro = 13 },
		{ .major = 3, .minor = 12, .micro = 0 },
	};
	static const struct {
		int minor, micro;
		int expected; /* row, or -1 */
	} picks[] = {
		{ 11, 0, 0 },  { 11, 2, 0 },  { 11, 4, 0 },  { 11, 5, 1 },
		{ 11, 7, 1 },  { 11, 10, 2 }, { 11, 12, 2 }, { 11, 99, 2 },
		{ 11, -1, 2 }, { 12, 9, 3 },  { 10, 0, -1 }, { 13, 0, -1 },
	};

	for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
		const struct ps_py_offsets *row =
		        ps_py_offsets_nearest(rows, 4, 3, picks[i].minor, picks[i].micro);

		if (picks[i].expected < 0)
			ck_assert_ptr_null(row);
		else
			ck_assert_msg(row == &rows[picks[i].expected], "3.%d.%d", picks[i].minor,
			              picks[i].micro);
	}
	/* a tie (3.11.2 and 3.11.4 around 3.11.3) goes to the newer row */
	{
		static const struct ps_py_offsets tie[] = {
			{ .major = 3, .minor = 11, .micro = 2 },
			{ .major = 3, .minor = 11, .micro = 4 },
		};
		ck_assert_ptr_eq(ps_py_offsets_nearest(tie, 2, 3, 11, 3), &tie[1]);
	}
	ck_assert_ptr_null(ps_py_offsets_nearest(rows, 0, 3, 11, 2));
}
END_TEST

/* Every row is internally consistent: fields inside their structs, the
 * version-specific parts present exactly where they exist. */
START_TEST(test_offsets_consistent)
{
	size_t nr;
	const struct ps_py_offsets *table = ps_py_offsets_table(&nr);

	ck_assert_uint_eq(nr, 7);
	for (size_t i = 0; i < nr; i++) {
		const struct ps_py_offsets *row = &table[i];
		int minor = row->minor;

		ck_assert_int_eq(row->major, 3);
		ck_assert_ptr_nonnull(row->source);
		if (i)
			ck_assert_int_gt(minor * 100 + row->micro,
			                 table[i - 1].minor * 100 + table[i - 1].micro);
		ck_assert(row->frame_is_object == (minor <= 10));
		ck_assert(fits(row->frame.code, 8, row->frame.size));
		ck_assert(fits(row->frame.previous, 8, row->frame.size));
		ck_assert(fits(row->frame.owner, 1, row->frame.size));
		ck_assert(fits(row->frame.instr, 8, row->frame.size));
		ck_assert(fits(row->frame.stacktop, 4, row->frame.size));
		ck_assert(fits(row->frame.stackpointer, 8, row->frame.size));
		ck_assert(fits(row->frame.return_offset, 2, row->frame.size));
		ck_assert(row->frame.code != row->frame.previous);
		ck_assert((row->frame.owner == PS_PY_NO_OFFSET) == (minor <= 10));
		ck_assert((row->frame.is_entry != PS_PY_NO_OFFSET) == (minor == 11));
		ck_assert((row->frame.stackpointer != PS_PY_NO_OFFSET) == (minor >= 14));
		ck_assert((row->frame.stacktop != PS_PY_NO_OFFSET) == (minor >= 11 && minor <= 13));
		ck_assert(row->code_tagged == (minor >= 14));
		/* the stub: 3.12+, owner 3 (CSTACK, then INTERPRETER in 3.14) */
		if (minor >= 12) {
			ck_assert_int_eq(row->stub_owner_min, 3);
			ck_assert_int_ge(row->stub_owner_max, row->stub_owner_min);
			ck_assert_uint_ge(row->stub_size, row->frame.size);
			ck_assert(row->frame.return_offset != PS_PY_NO_OFFSET);
			ck_assert(row->code.code_adaptive != PS_PY_NO_OFFSET);
		} else {
			ck_assert_int_eq(row->stub_owner_min, 0);
			ck_assert_uint_eq(row->stub_size, 0);
		}
		/* _PyCFrame: 3.11/3.12; the chain head: frame, cframe, current_frame */
		ck_assert((row->cframe.size != 0) == (minor == 11 || minor == 12));
		ck_assert(fits(row->cframe.current_frame, 8, row->cframe.size));
		ck_assert(fits(row->cframe.previous, 8, row->cframe.size));
		ck_assert((row->tstate.frame != PS_PY_NO_OFFSET) == (minor <= 10));
		ck_assert((row->tstate.cframe != PS_PY_NO_OFFSET) == (minor == 11 || minor == 12));
		ck_assert((row->tstate.current_frame != PS_PY_NO_OFFSET) == (minor >= 13));
		ck_assert((row->tstate.native_thread_id != PS_PY_NO_OFFSET) == (minor >= 11));
		ck_assert((row->tstate.datastack_chunk != PS_PY_NO_OFFSET) == (minor >= 11));
		ck_assert((row->code.qualname != PS_PY_NO_OFFSET) == (minor >= 11));
		ck_assert((row->gen_iframe != PS_PY_NO_OFFSET) == (minor >= 11));
		ck_assert(row->code.filename != row->code.name);
		ck_assert_uint_eq(row->unicode.ascii_data, minor >= 12 ? 40 : 48);
		ck_assert_uint_lt(row->unicode.state, row->unicode.ascii_data);
	}
}
END_TEST

/* A few values checked against the real headers (see offsets.c), so an
 * accidental edit of the table shows. */
START_TEST(test_offsets_known_values)
{
	const struct ps_py_offsets *v38 = ps_py_offsets_lookup(3, 8, -1);
	const struct ps_py_offsets *v310 = ps_py_offsets_lookup(3, 10, -1);
	const struct ps_py_offsets *v311 = ps_py_offsets_lookup(3, 11, -1);
	const struct ps_py_offsets *v312 = ps_py_offsets_lookup(3, 12, -1);
	const struct ps_py_offsets *v313 = ps_py_offsets_lookup(3, 13, -1);
	const struct ps_py_offsets *v314 = ps_py_offsets_lookup(3, 14, -1);

	ck_assert_uint_eq(v38->frame.previous, 24);
	ck_assert_uint_eq(v38->frame.code, 32);
	ck_assert_uint_eq(v38->tstate.frame, 24);
	ck_assert_uint_eq(v310->frame.instr, 96);
	ck_assert_uint_eq(v311->frame.code, 32);
	ck_assert_uint_eq(v311->frame.previous, 48);
	ck_assert_uint_eq(v311->frame.is_entry, 68);
	ck_assert_uint_eq(v311->frame.owner, 69);
	ck_assert_uint_eq(v311->cframe.current_frame, 8);
	ck_assert_uint_eq(v311->tstate.cframe, 56);
	ck_assert_uint_eq(v311->tstate.native_thread_id, 160);
	ck_assert_uint_eq(v311->code.firstlineno, 72);
	ck_assert_uint_eq(v312->frame.owner, 70);
	ck_assert_uint_eq(v312->cframe.current_frame, 0);
	ck_assert_uint_eq(v312->tstate.native_thread_id, 144);
	ck_assert_uint_eq(v312->code.code_adaptive, 192);
	ck_assert_uint_eq(v313->tstate.current_frame, 72);
	ck_assert_uint_eq(v313->frame.owner, 70);
	ck_assert_uint_eq(v314->frame.owner, 74);
	ck_assert_uint_eq(v314->frame.stackpointer, 64);
	ck_assert_uint_eq(v314->frame.size, 88);
	ck_assert_uint_eq(v314->stub_size, 96);
	ck_assert_uint_eq(v314->code.qualname, 128);
}
END_TEST

/* ---- detection fixtures ---------------------------------------------- */

static char fixture_dir[256];
static bool have_fixtures;
static char fixture_why[512];

#define EVAL_CLONES                                                                                \
	"static int eval_cold(int) __asm__(\"_PyEval_EvalFrameDefault.cold\");\n"                  \
	"__attribute__((used, noinline, cold)) static int eval_cold(int x)\n"                      \
	"{ return x * 7 + 3; }\n"                                                                  \
	"static int eval_part(int) __asm__(\"_PyEval_EvalFrameDefault.part.0\");\n"                \
	"__attribute__((used, noinline)) static int eval_part(int x)\n"                            \
	"{ return x * 5 + 1; }\n"

#define EVAL_FUNCTION                                                                              \
	"int _PyEval_EvalFrameDefault(void *t, void *f, int x)\n"                                  \
	"{ return t == f ? x + 1 : x - 1; }\n"

#define TRAMPOLINE                                                                                 \
	"__asm__(\".text\\n.globl _Py_trampoline_func_start\\n"                                    \
	"_Py_trampoline_func_start:\\n sub $8,%rsp\\n call *%rcx\\n"                               \
	" add $8,%rsp\\n ret\\n.globl _Py_trampoline_func_end\\n"                                  \
	"_Py_trampoline_func_end:\\n\");\n"

#define RUNTIME(version)                                                                           \
	"__attribute__((section(\".PyRuntime\"), used)) struct { char cookie[8];\n"                \
	" unsigned long long version, free_threaded; char rest[64]; } _PyRuntime =\n"              \
	" { { 'x','d','e','b','u','g','p','y' }, " version ", 0, { 1 } };\n"

static const struct fixture_source {
	const char *name; /* file name in the fixture directory */
	const char *flags; /* cc flags */
	const char *source; /* C text */
} sources[] = {
	{ "libpython3.12.so", "-shared -fPIC",
	  EVAL_FUNCTION EVAL_CLONES TRAMPOLINE
	  "const unsigned long Py_Version = 0x030c01f0;\n"
	  "struct { long refcount; void *type; } _Py_NoneStruct = { 1, 0 };\n" },
	{ "libpython3.13.so", "-shared -fPIC",
	  EVAL_FUNCTION TRAMPOLINE
	  "const unsigned long Py_Version = 0x030d00f0;\n" RUNTIME("0x030d00f0") },
	{ "libpython3.13-conflict.so", "-shared -fPIC",
	  EVAL_FUNCTION "const unsigned long Py_Version = 0x030d01f0;\n" RUNTIME("0x030d00f0") },
	{ "libpython3.13-debugonly.so", "-shared -fPIC", EVAL_FUNCTION RUNTIME("0x030d02f0") },
	/* PY_VERSION through Py_GetVersion, merged into the tail of a path */
	{ "libpython3.9.so", "-shared -fPIC",
	  EVAL_FUNCTION
	  "extern int PyOS_snprintf(char *, unsigned long, const char *, ...);\n"
	  "extern const char *Py_GetBuildInfo(void);\n"
	  "const char *install_prefix = \"/opt/python/3.9.18\";\n"
	  "const char *zlib_version = \"1.2.13\";\n"
	  "const char *decoy = \"3.2.0\";\n"
	  "static char version[250];\n"
	  "const char *Py_GetVersion(void)\n"
	  "{ PyOS_snprintf(version, sizeof(version), \"%.80s (%.80s) %.80s\", \"3.9.18\",\n"
	  "                Py_GetBuildInfo(), \"[GCC]\"); return version; }\n" },
	/* the same through mov $imm32 (a non-PIE executable, like Debian's) */
	{ "python3.10", "-static -no-pie -fno-pic",
	  EVAL_FUNCTION
	  "static char version[250];\n"
	  "__attribute__((noinline)) int PyOS_snprintf(char *b, unsigned long n,\n"
	  "                                            const char *f, ...)\n"
	  "{ b[0] = f[0]; return (int)n; }\n"
	  "__attribute__((noinline)) const char *Py_GetBuildInfo(void) { return \"main\"; }\n"
	  "const char *Py_GetVersion(void)\n"
	  "{ PyOS_snprintf(version, sizeof(version), \"%.80s (%.80s) %.80s\", \"3.10.4\",\n"
	  "                Py_GetBuildInfo(), \"[GCC]\"); return version; }\n"
	  "void _start(void) { for (;;) ; }\n" },
	/* no Py_Version, no Py_GetVersion: .rodata only */
	{ "libpython3.10.so", "-shared -fPIC",
	  EVAL_FUNCTION "const char *const versions[] = { \"3.10.4\", \"1.2.13\", \"3.2.0\" };\n" },
	/* an extension module: it refers to the eval loop, it does not define it */
	{ "ext.so", "-shared -fPIC",
	  "extern int _PyEval_EvalFrameDefault(void *, void *, int);\n"
	  "const unsigned long Py_Version = 0x030c01f0;\n"
	  "int call(void *t) { return _PyEval_EvalFrameDefault(t, t, 0); }\n" },
	/* the pystitch_perf module (3.8-3.11): not CPython, but it exports a
	 * trampoline template under CPython's names */
	{ "pystitch_perf.so", "-shared -fPIC",
	  "extern int _PyEval_EvalFrameDefault(void *, void *, int);\n" TRAMPOLINE },
};

static bool shell(const char *command)
{
	return system(command) == 0;
}

static void build_fixtures(void)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char command[4096], path[512];

	snprintf(fixture_dir, sizeof(fixture_dir), "/tmp/pystitch-python-XXXXXX");
	if (!mkdtemp(fixture_dir)) {
		snprintf(fixture_why, sizeof(fixture_why), "mkdtemp: %s", strerror(errno));
		fixture_dir[0] = '\0';
		return;
	}
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.c", fixture_dir, sources[i].name);
		f = fopen(path, "w");
		if (!f || fputs(sources[i].source, f) < 0 || fclose(f) != 0) {
			snprintf(fixture_why, sizeof(fixture_why), "cannot write %.400s", path);
			return;
		}
		snprintf(command, sizeof(command),
		         "%s -O2 -nostdlib -Wl,--build-id=none %s -o %s/%s %s 2>%s/cc.log", cc,
		         sources[i].flags, fixture_dir, sources[i].name, path, fixture_dir);
		if (!shell(command)) {
			snprintf(fixture_why, sizeof(fixture_why), "cannot build %s with %.200s",
			         sources[i].name, cc);
			return;
		}
	}
	/* a stripped copy (only .dynsym left), a truncated one, garbage */
	snprintf(command, sizeof(command),
	         "cd %s && objcopy --strip-all libpython3.12.so stripped-libpython3.12.so && "
	         "cp libpython3.9.so libfoo.so && cp libpython3.10.so libbar.so && "
	         "head -c 3000 libpython3.12.so > truncated.so && "
	         "printf 'not an ELF file at all' > text.so && : > empty.so",
	         fixture_dir);
	if (!shell(command)) {
		snprintf(fixture_why, sizeof(fixture_why), "objcopy or the shell failed");
		return;
	}
	have_fixtures = true;
}

static void remove_fixtures(void)
{
	char command[512];

	if (!fixture_dir[0])
		return;
	snprintf(command, sizeof(command), "rm -rf '%.256s'", fixture_dir);
	if (!shell(command))
		fprintf(stderr, "cannot remove %s\n", fixture_dir);
}

struct detected {
	struct ps_py_registry *registry;
	const struct ps_py_interp *interp;
	int rc;
};

static void detect(struct detected *d, const char *name)
{
	char path[1024];

	ck_assert_msg(have_fixtures, "no fixtures: %s", fixture_why);
	snprintf(path, sizeof(path), "%s/%s", fixture_dir, name);
	ck_assert_int_eq(ps_py_registry_new(&d->registry), 0);
	d->rc = ps_py_registry_detect(d->registry, path, &d->interp);
}

static void detected_free(struct detected *d)
{
	ps_py_registry_free(d->registry);
}

START_TEST(test_detect_312)
{
	struct detected d;
	const struct ps_py_interp *p;
	bool main_seen = false;

	detect(&d, "libpython3.12.so");
	ck_assert_int_eq(d.rc, 1);
	p = d.interp;
	ck_assert(p->is_python);
	ck_assert(!p->dynsym_only);
	ck_assert_int_eq(p->version_source, PS_PY_VERSION_SYMBOL);
	ck_assert_uint_eq(p->version_hex, 0x030c01f0);
	ck_assert_int_eq(p->major, 3);
	ck_assert_int_eq(p->minor, 12);
	ck_assert_int_eq(p->micro, 1);
	ck_assert(!p->has_debug_offsets);
	ck_assert(p->has_trampoline);
	ck_assert_uint_eq(p->trampoline_end - p->trampoline_start, 11);
	ck_assert_uint_ne(p->none_addr, 0);
	/* the function and its two clones, sorted */
	ck_assert_uint_eq(p->nr_eval_ranges, 3);
	for (size_t i = 0; i < p->nr_eval_ranges; i++) {
		const struct ps_py_range *range = &p->eval_ranges[i];

		ck_assert_uint_gt(range->end, range->start);
		if (i)
			ck_assert_uint_gt(range->start, p->eval_ranges[i - 1].start);
		main_seen |= range->kind == PS_PY_EVAL_MAIN;
		ck_assert_int_eq(ps_py_interp_eval_kind(p, range->offset), range->kind);
		ck_assert_int_eq(
		        ps_py_interp_eval_kind(p, range->offset + (range->end - range->start) - 1),
		        range->kind);
		ck_assert_int_eq(
		        ps_py_interp_eval_kind(p, range->offset + (range->end - range->start)),
		        i + 1 < p->nr_eval_ranges && p->eval_ranges[i + 1].start == range->end
		                ? p->eval_ranges[i + 1].kind
		                : PS_PY_EVAL_NONE);
	}
	ck_assert(main_seen);
	ck_assert_int_eq(ps_py_interp_eval_kind(p, 0), PS_PY_EVAL_NONE);
	ck_assert_int_eq(ps_py_interp_eval_kind(NULL, 0), PS_PY_EVAL_NONE);
	ck_assert_ptr_null(ps_py_registry_errmsg(d.registry));
	detected_free(&d);
}
END_TEST

START_TEST(test_detect_stripped)
{
	struct detected d;

	detect(&d, "stripped-libpython3.12.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert(d.interp->dynsym_only);
	ck_assert_uint_eq(d.interp->version_hex, 0x030c01f0);
	/* local clones leave with .symtab */
	ck_assert_uint_eq(d.interp->nr_eval_ranges, 1);
	ck_assert_int_eq(d.interp->eval_ranges[0].kind, PS_PY_EVAL_MAIN);
	detected_free(&d);
}
END_TEST

START_TEST(test_detect_debug_offsets)
{
	struct detected d;

	detect(&d, "libpython3.13.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert(d.interp->has_debug_offsets);
	ck_assert_uint_eq(d.interp->debug_offsets_version, 0x030d00f0);
	ck_assert(!d.interp->free_threaded);
	ck_assert(!d.interp->version_conflict);
	ck_assert_int_eq(d.interp->version_source, PS_PY_VERSION_SYMBOL);
	ck_assert_uint_ne(d.interp->runtime_addr, 0);
	detected_free(&d);

	detect(&d, "libpython3.13-conflict.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert(d.interp->version_conflict);
	ck_assert_uint_eq(d.interp->version_hex, 0x030d01f0); /* Py_Version wins */
	detected_free(&d);

	detect(&d, "libpython3.13-debugonly.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert_int_eq(d.interp->version_source, PS_PY_VERSION_DEBUG_OFFSETS);
	ck_assert_int_eq(d.interp->micro, 2);
	detected_free(&d);
}
END_TEST

START_TEST(test_detect_version_string)
{
	struct detected d;

	/* lea rel32(%rip) in a shared library, the string tail-merged */
	detect(&d, "libpython3.9.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert_int_eq(d.interp->version_source, PS_PY_VERSION_STRING);
	ck_assert_uint_eq(d.interp->version_hex, 0x030912f0);
	detected_free(&d);

	/* the file name does not matter there */
	detect(&d, "libfoo.so");
	ck_assert_uint_eq(d.interp->version_hex, 0x030912f0);
	detected_free(&d);

	/* mov $imm32 in a non-PIE executable */
	detect(&d, "python3.10");
	ck_assert_int_eq(d.rc, 1);
	ck_assert_int_eq(d.interp->version_source, PS_PY_VERSION_STRING);
	ck_assert_uint_eq(d.interp->version_hex, 0x030a04f0);
	detected_free(&d);
}
END_TEST

START_TEST(test_detect_rodata)
{
	struct detected d;

	/* the candidate whose X.Y the file name carries */
	detect(&d, "libpython3.10.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert_int_eq(d.interp->version_source, PS_PY_VERSION_RODATA);
	ck_assert_uint_eq(d.interp->version_hex, 0x030a04f0);
	detected_free(&d);

	/* no hint in the name and two 3.x candidates: unknown, still Python */
	detect(&d, "libbar.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert(d.interp->is_python);
	ck_assert_int_eq(d.interp->version_source, PS_PY_VERSION_UNKNOWN);
	ck_assert_uint_eq(d.interp->version_hex, 0);
	detected_free(&d);
}
END_TEST

START_TEST(test_detect_not_python)
{
	struct detected d;

	detect(&d, "ext.so");
	ck_assert_int_eq(d.rc, 0);
	ck_assert(!d.interp->is_python);
	ck_assert_uint_eq(d.interp->nr_eval_ranges, 0);
	ck_assert_uint_eq(d.interp->version_hex, 0);
	ck_assert(!d.interp->has_trampoline);
	detected_free(&d);

	/* the template is kept for a file that is not CPython */
	detect(&d, "pystitch_perf.so");
	ck_assert_int_eq(d.rc, 0);
	ck_assert(!d.interp->is_python);
	ck_assert(d.interp->has_trampoline);
	ck_assert_uint_gt(d.interp->trampoline_end, d.interp->trampoline_start);
	ck_assert_uint_eq(d.interp->version_hex, 0);
	detected_free(&d);
}
END_TEST

START_TEST(test_detect_errors)
{
	static const struct {
		const char *name;
		int rc;
		const char *says;
	} broken[] = {
		{ "truncated.so", -EINVAL, "past the end of the file" },
		{ "text.so", -ENOEXEC, "not an ELF file" },
		{ "empty.so", -ENOEXEC, "not an ELF file" },
		{ "missing.so", -ENOENT, "cannot open" },
		{ ".", -EINVAL, "not a regular file" },
	};

	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		struct detected d;
		const char *message;

		detect(&d, broken[i].name);
		ck_assert_int_eq(d.rc, broken[i].rc);
		ck_assert_ptr_null(d.interp);
		message = ps_py_registry_errmsg(d.registry);
		ck_assert_ptr_nonnull(message);
		ck_assert_msg(strstr(message, broken[i].name) && strstr(message, broken[i].says),
		              "%s", message);
		ck_assert(!strchr(message, '\n'));
		detected_free(&d);
	}
}
END_TEST

/* A fixture whose section headers are damaged in place: every sh_link
 * (offset 40 of an Elf64_Shdr) points nowhere. */
START_TEST(test_detect_damaged_symbols)
{
	char from[1024], to[1024];
	uint64_t shoff;
	uint16_t shnum;
	uint8_t *image;
	struct detected d;
	FILE *f;
	long size;

	ck_assert_msg(have_fixtures, "no fixtures: %s", fixture_why);
	snprintf(from, sizeof(from), "%s/libpython3.12.so", fixture_dir);
	snprintf(to, sizeof(to), "%s/damaged.so", fixture_dir);
	f = fopen(from, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	rewind(f);
	image = malloc((size_t)size);
	ck_assert_ptr_nonnull(image);
	ck_assert_uint_eq(fread(image, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	memcpy(&shoff, image + 40, 8);
	memcpy(&shnum, image + 60, 2);
	for (uint16_t i = 1; i < shnum; i++) {
		uint32_t nowhere = 0xffff;

		ck_assert_uint_le(shoff + 64u * i + 44, (uint64_t)size);
		memcpy(image + shoff + 64u * i + 40, &nowhere, 4);
	}
	f = fopen(to, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(image, 1, (size_t)size, f), (size_t)size);
	ck_assert_int_eq(fclose(f), 0);
	free(image);

	detect(&d, "damaged.so");
	ck_assert_int_eq(d.rc, -EINVAL);
	ck_assert_ptr_nonnull(strstr(ps_py_registry_errmsg(d.registry), "damaged.so"));
	detected_free(&d);
}
END_TEST

START_TEST(test_registry_cache)
{
	struct ps_py_registry *registry;
	const struct ps_py_interp *first, *again;
	char good[1024], bad[1024];

	ck_assert_msg(have_fixtures, "no fixtures: %s", fixture_why);
	snprintf(good, sizeof(good), "%s/libpython3.12.so", fixture_dir);
	snprintf(bad, sizeof(bad), "%s/text.so", fixture_dir);
	ck_assert_int_eq(ps_py_registry_new(&registry), 0);
	ck_assert_int_eq(ps_py_registry_detect(registry, good, &first), 1);
	ck_assert_int_eq(ps_py_registry_detect(registry, bad, &again), -ENOEXEC);
	ck_assert_ptr_nonnull(ps_py_registry_errmsg(registry));
	ck_assert_int_eq(ps_py_registry_detect(registry, good, &again), 1);
	ck_assert_ptr_eq(first, again);
	ck_assert_ptr_null(ps_py_registry_errmsg(registry));
	ck_assert_str_eq(first->path, good);
	/* the failure is remembered with its message */
	ck_assert_int_eq(ps_py_registry_detect(registry, bad, &again), -ENOEXEC);
	ck_assert_ptr_nonnull(strstr(ps_py_registry_errmsg(registry), "text.so"));
	ck_assert_int_eq(ps_py_registry_detect(registry, NULL, &again), -EINVAL);
	ck_assert_int_eq(ps_py_registry_detect(NULL, good, &again), -EINVAL);
	ps_py_registry_free(registry);
	ps_py_registry_free(NULL);
}
END_TEST

/* The interpreters installed on this machine, when there are any: the
 * version found must be the one in the install's name. */
START_TEST(test_detect_real_interpreters)
{
	const char *root = getenv("PYENV_ROOT");
	char versions[512], path[1024];
	struct ps_py_registry *registry;
	struct dirent *entry;
	size_t checked = 0;
	DIR *dir;

	if (root)
		snprintf(versions, sizeof(versions), "%s/versions", root);
	else
		snprintf(versions, sizeof(versions), "%s/.pyenv/versions",
		         getenv("HOME") ? getenv("HOME") : "/");
	dir = opendir(versions);
	if (!dir)
		return;
	ck_assert_int_eq(ps_py_registry_new(&registry), 0);
	while ((entry = readdir(dir))) {
		unsigned major, minor, micro;
		const struct ps_py_interp *p;
		int rc;

		if (sscanf(entry->d_name, "%u.%u.%u", &major, &minor, &micro) != 3 || major != 3 ||
		    minor < 8 || strchr(entry->d_name, 't'))
			continue;
		snprintf(path, sizeof(path), "%s/%s/lib/libpython%u.%u.so.1.0", versions,
		         entry->d_name, major, minor);
		if (access(path, R_OK) != 0)
			continue;
		rc = ps_py_registry_detect(registry, path, &p);
		ck_assert_msg(rc == 1, "%s: %d %s", path, rc, ps_py_registry_errmsg(registry));
		ck_assert_msg(p->major == (int)major && p->minor == (int)minor &&
		                      p->micro == (int)micro,
		              "%s: found %d.%d.%d", path, p->major, p->minor, p->micro);
		ck_assert_uint_ge(p->nr_eval_ranges, 1);
		ck_assert(p->has_trampoline == (minor >= 12));
		ck_assert(p->has_debug_offsets == (minor >= 13));
		ck_assert_ptr_nonnull(ps_py_offsets_lookup(3, (int)minor, (int)micro));
		checked++;
	}
	closedir(dir);
	ps_py_registry_free(registry);
	if (!checked)
		fprintf(stderr, "test_detect_real_interpreters: none found under %s\n", versions);
}
END_TEST

/* ---- stub scan ------------------------------------------------------- */

#define STACK_SIZE 8192
#define SP 0x7ffc12340000ull
#define HEAP(n) (0x55d0a0000000ull + (uint64_t)(n)*0x1f0)
#define TSTATE 0x55d09ff00000ull
#define CODE 0x7f3a11a0b2c0ull /* the 3.12 trampoline code object */
#define NONE_ADDR 0x7f3a12345670ull /* &_Py_NoneStruct in libpython */
#define TRAMPOLINE_INSTRUCTIONS 0x7f3a11f00a40ull

struct stack {
	uint8_t bytes[STACK_SIZE];
	uint64_t sp;
	const struct ps_py_offsets *off;
};

static void put64(struct stack *s, size_t at, uint64_t value)
{
	memcpy(s->bytes + at, &value, 8);
}

static void put32(struct stack *s, size_t at, uint32_t value)
{
	memcpy(s->bytes + at, &value, 4);
}

static void put16(struct stack *s, size_t at, uint16_t value)
{
	memcpy(s->bytes + at, &value, 2);
}

/* What C stacks hold: return addresses, saved stack pointers, spilled heap
 * pointers, small integers, zeros. Deterministic. */
static void stack_init(struct stack *s, int minor)
{
	uint64_t state = 0x9e3779b97f4a7c15ull;

	s->sp = SP;
	s->off = ps_py_offsets_lookup(3, minor, -1);
	ck_assert_ptr_nonnull(s->off);
	for (size_t at = 0; at < STACK_SIZE; at += 8) {
		uint64_t value;

		state = state * 6364136223846793005ull + 1442695040888963407ull;
		switch ((state >> 33) % 6) {
		case 0:
			value = 0;
			break;
		case 1:
			value = (state >> 40) % 1000;
			break;
		case 2:
			value = 0x7f3a11000000ull + ((state >> 20) % 0x400000); /* code */
			break;
		case 3:
			value = SP + ((state >> 24) % STACK_SIZE) / 8 * 8; /* saved stack */
			break;
		case 4:
			value = HEAP((state >> 30) % 4096);
			break;
		default:
			value = state;
			break;
		}
		put64(s, at, value);
	}
}

static void entry_frame(struct stack *s, size_t at, uint64_t code, uint64_t previous,
                        uint64_t instr)
{
	const struct ps_py_offsets *off = s->off;

	memset(s->bytes + at, 0xcc, off->stub_size); /* the unset fields hold garbage */
	put64(s, at + off->frame.code, code);
	put64(s, at + off->frame.previous, previous);
	put64(s, at + off->frame.instr, instr);
	put16(s, at + off->frame.return_offset, 0);
	s->bytes[at + off->frame.owner] = 3;
	if (off->frame.stacktop != PS_PY_NO_OFFSET)
		put32(s, at + off->frame.stacktop, 0);
	if (off->frame.stackpointer != PS_PY_NO_OFFSET) {
		put64(s, at + off->frame.stackpointer, s->sp + at + off->frame.size);
		s->bytes[at + off->frame.owner + 1] = 0; /* visited */
	}
}

static void entry_312(struct stack *s, size_t at, uint64_t previous)
{
	entry_frame(s, at, CODE, previous, CODE + s->off->code.code_adaptive);
}

static void entry_313(struct stack *s, size_t at, uint64_t previous)
{
	entry_frame(s, at, NONE_ADDR, previous, TRAMPOLINE_INSTRUCTIONS + 2);
}

static void entry_314(struct stack *s, size_t at, uint64_t previous)
{
	entry_frame(s, at, NONE_ADDR | 1, previous, TRAMPOLINE_INSTRUCTIONS + 2);
}

static void cframe(struct stack *s, size_t at, uint64_t current, uint64_t previous)
{
	const struct ps_py_offsets *off = s->off;

	memset(s->bytes + at, 0xcc, off->cframe.size);
	if (off->cframe.use_tracing != PS_PY_NO_OFFSET)
		s->bytes[at + off->cframe.use_tracing] = 0;
	put64(s, at + off->cframe.current_frame, current);
	put64(s, at + off->cframe.previous, previous);
}

struct expected_stub {
	size_t offset;
	enum ps_py_stub_kind kind;
	bool strong;
};

static void check_scan(struct stack *s, size_t size, uint64_t none_addr,
                       const struct expected_stub *expected, size_t nr_expected)
{
	struct ps_py_stub stubs[64];
	struct ps_py_stub_scan scan = { s->bytes, size, s->sp, s->off, none_addr, 0 };
	int nr = ps_py_scan_stubs(&scan, stubs, 64);

	ck_assert_int_ge(nr, 0);
	for (int i = 0; i < nr && i < 64; i++)
		if ((size_t)i >= nr_expected || stubs[i].offset != expected[i].offset)
			fprintf(stderr, "  3.%d stub %d at %zu kind %d strong %d\n", s->off->minor,
			        i, stubs[i].offset, stubs[i].kind, stubs[i].strong);
	ck_assert_int_eq(nr, (int)nr_expected);
	for (size_t i = 0; i < nr_expected; i++) {
		ck_assert_uint_eq(stubs[i].offset, expected[i].offset);
		ck_assert_uint_eq(stubs[i].addr, s->sp + expected[i].offset);
		ck_assert_int_eq(stubs[i].kind, expected[i].kind);
		ck_assert_int_eq(stubs[i].strong, expected[i].strong);
	}
}

#define ENTRY_AT(offset, strong)                                                                   \
	{                                                                                          \
		offset, PS_PY_STUB_ENTRY_FRAME, strong                                             \
	}
#define CFRAME_AT(offset, strong)                                                                  \
	{                                                                                          \
		offset, PS_PY_STUB_CFRAME, strong                                                  \
	}

START_TEST(test_stubs_312)
{
	struct stack s;

	stack_init(&s, 12);
	/* three activations, leaf first; the root one's previous is NULL; each
	 * cframe 96 bytes above its entry frame (one function, one layout) */
	entry_312(&s, 200, HEAP(1));
	cframe(&s, 296, HEAP(0), s.sp + 1296);
	entry_312(&s, 1200, HEAP(2));
	cframe(&s, 1296, HEAP(1), s.sp + 2896);
	entry_312(&s, 2800, 0);
	cframe(&s, 2896, HEAP(2), TSTATE + s.off->tstate.root_cframe);
	/* a look-alike cframe linking to a real one, at another distance */
	cframe(&s, 640, HEAP(8), s.sp + 1296);
	/* a look-alike with the wrong prev_instr */
	entry_frame(&s, 4000, CODE, HEAP(9), CODE + 8);
	/* INTERPRETER_EXIT running: prev_instr one code unit on */
	entry_frame(&s, 5000, CODE, HEAP(7), CODE + s.off->code.code_adaptive + 2);
	{
		const struct expected_stub expected[] = {
			ENTRY_AT(200, true),   CFRAME_AT(296, true), ENTRY_AT(1200, true),
			CFRAME_AT(1296, true), ENTRY_AT(2800, true), CFRAME_AT(2896, true),
			ENTRY_AT(5000, true),
		};
		check_scan(&s, STACK_SIZE, 0, expected, 7);
	}
	/* cut by the end of the copy: the stub at 5000 is not whole */
	{
		const struct expected_stub expected[] = {
			ENTRY_AT(200, true),   CFRAME_AT(296, true), ENTRY_AT(1200, true),
			CFRAME_AT(1296, true), ENTRY_AT(2800, true), CFRAME_AT(2896, true),
		};
		check_scan(&s, 5040, 0, expected, 6);
	}
}
END_TEST

/* One 3.12 activation: the entry frame alone marks it. Without entry
 * frames, cframes alone (even chained) are not reported. */
START_TEST(test_stubs_312_single)
{
	struct stack s;
	const struct expected_stub expected[] = { ENTRY_AT(200, true) };

	stack_init(&s, 12);
	entry_312(&s, 200, 0);
	cframe(&s, 296, HEAP(0), TSTATE + s.off->tstate.root_cframe);
	check_scan(&s, STACK_SIZE, 0, expected, 1);
	stack_init(&s, 12);
	cframe(&s, 296, HEAP(0), s.sp + 1296);
	cframe(&s, 1296, HEAP(1), TSTATE + s.off->tstate.root_cframe);
	check_scan(&s, STACK_SIZE, 0, NULL, 0);
}
END_TEST

START_TEST(test_stubs_311)
{
	struct stack s;

	stack_init(&s, 11);
	cframe(&s, 512, HEAP(0), s.sp + 1536);
	cframe(&s, 1536, HEAP(1), s.sp + 3072);
	cframe(&s, 3072, HEAP(2), TSTATE + s.off->tstate.root_cframe);
	{
		const struct expected_stub expected[] = {
			CFRAME_AT(512, true),
			CFRAME_AT(1536, true),
			CFRAME_AT(3072, true),
		};
		check_scan(&s, STACK_SIZE, 0, expected, 3);
	}
}
END_TEST

/* A spilled copy of a cframe's address that looks like a second link to
 * it. With two paths as long, the chain is sure only from where they join:
 * the leaf-most cframe is weak, the look-alike is left out. When the real
 * chain is longer (the usual case: the fake links into the middle), it is
 * sure all along. A separate shorter look-alike chain is left out. */
START_TEST(test_stubs_311_fan_in)
{
	struct stack s;

	stack_init(&s, 11);
	cframe(&s, 512, HEAP(0), s.sp + 1536);
	cframe(&s, 1536, HEAP(1), s.sp + 3072);
	cframe(&s, 3072, HEAP(2), TSTATE + s.off->tstate.root_cframe);
	cframe(&s, 1024, HEAP(7), s.sp + 1536);
	{
		const struct expected_stub expected[] = {
			CFRAME_AT(512, false),
			CFRAME_AT(1536, true),
			CFRAME_AT(3072, true),
		};
		check_scan(&s, STACK_SIZE, 0, expected, 3);
	}
	cframe(&s, 256, HEAP(3), s.sp + 512);
	cframe(&s, 4096, HEAP(4), s.sp + 4608);
	cframe(&s, 4608, HEAP(5), HEAP(6));
	{
		const struct expected_stub expected[] = {
			CFRAME_AT(256, true),
			CFRAME_AT(512, true),
			CFRAME_AT(1536, true),
			CFRAME_AT(3072, true),
		};
		check_scan(&s, STACK_SIZE, 0, expected, 4);
	}
}
END_TEST

/* One activation: nothing links the cframe to another. It ends at the
 * thread state's root cframe, and the thread state is on the stack (the
 * eval loop's callers spill it): kept, weak. A look-alike pair of pointers
 * whose "thread state" is nowhere is not. With the root known from an
 * earlier sample the cframe is strong. */
START_TEST(test_stubs_311_lone)
{
	struct stack s;
	struct ps_py_stub stubs[4];
	struct ps_py_stub_scan scan;
	const struct expected_stub weak[] = { CFRAME_AT(640, false) };

	stack_init(&s, 11);
	memset(s.bytes, 0, STACK_SIZE);
	cframe(&s, 640, HEAP(0), TSTATE + s.off->tstate.root_cframe);
	put64(&s, 1032, HEAP(5));
	put64(&s, 1040, HEAP(6));
	check_scan(&s, STACK_SIZE, 0, NULL, 0); /* the thread state is not on the stack */
	put64(&s, 2048, TSTATE);
	check_scan(&s, STACK_SIZE, 0, weak, 1);

	scan = (struct ps_py_stub_scan){ s.bytes, STACK_SIZE, s.sp,
		                         s.off,   0,          TSTATE + s.off->tstate.root_cframe };
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 4), 1);
	ck_assert_uint_eq(stubs[0].offset, 640);
	ck_assert(stubs[0].strong);
	scan.root_cframe = TSTATE + 8;
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 4), 0);
}
END_TEST

/* A known root also checks a chain's end: a chain that ends elsewhere is
 * not the thread's, unless the copy cut it (previous just above the copy). */
START_TEST(test_stubs_311_root)
{
	struct stack s;
	struct ps_py_stub stubs[4];
	struct ps_py_stub_scan scan;

	stack_init(&s, 11);
	cframe(&s, 512, HEAP(0), s.sp + 1536);
	cframe(&s, 1536, HEAP(1), TSTATE + s.off->tstate.root_cframe);
	scan = (struct ps_py_stub_scan){ s.bytes, STACK_SIZE, s.sp,
		                         s.off,   0,          TSTATE + s.off->tstate.root_cframe };
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 4), 2);
	ck_assert_uint_eq(stubs[1].previous, TSTATE + s.off->tstate.root_cframe);
	ck_assert(stubs[0].strong && stubs[1].strong);
	scan.root_cframe = TSTATE + 8;
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 4), 0);
	/* cut: the next cframe is above the copy */
	cframe(&s, 1536, HEAP(1), s.sp + STACK_SIZE + 512);
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 4), 2);
}
END_TEST

START_TEST(test_stubs_313)
{
	struct stack s;

	stack_init(&s, 13);
	entry_313(&s, 304, HEAP(1));
	entry_313(&s, 1808, HEAP(2));
	entry_313(&s, 3456, 0);
	/* a look-alike that disagrees with the others */
	entry_frame(&s, 6000, NONE_ADDR + 0x1000, HEAP(3), TRAMPOLINE_INSTRUCTIONS + 0x800);
	{
		const struct expected_stub expected[] = {
			ENTRY_AT(304, true),
			ENTRY_AT(1808, true),
			ENTRY_AT(3456, true),
		};
		check_scan(&s, STACK_SIZE, 0, expected, 3);
		/* with the address of Py_None known: the same, look-alike out */
		check_scan(&s, STACK_SIZE, NONE_ADDR, expected, 3);
	}
}
END_TEST

START_TEST(test_stubs_313_single)
{
	struct stack s;
	const struct expected_stub weak[] = { ENTRY_AT(304, false) };
	const struct expected_stub strong[] = { ENTRY_AT(304, true) };

	stack_init(&s, 13);
	entry_313(&s, 304, 0);
	check_scan(&s, STACK_SIZE, 0, weak, 1);
	check_scan(&s, STACK_SIZE, NONE_ADDR, strong, 1);
	check_scan(&s, STACK_SIZE, NONE_ADDR + 16, NULL, 0);
	/* owner 4 (CSTACK in 3.14, THREAD_STATE in 3.15) counts; 5 does not */
	s.bytes[304 + s.off->frame.owner] = 4;
	check_scan(&s, STACK_SIZE, 0, weak, 1);
	s.bytes[304 + s.off->frame.owner] = 5;
	check_scan(&s, STACK_SIZE, 0, NULL, 0);
	s.bytes[304 + s.off->frame.owner] = 3;
	/* a return offset set: a real frame, not the stub */
	put16(&s, 304 + s.off->frame.return_offset, 6);
	check_scan(&s, STACK_SIZE, 0, NULL, 0);
}
END_TEST

START_TEST(test_stubs_314)
{
	struct stack s;

	stack_init(&s, 14);
	entry_314(&s, 400, HEAP(1));
	entry_314(&s, 2000, HEAP(2));
	entry_314(&s, 4400, 0);
	/* stackpointer one slot on: a result pushed, INTERPRETER_EXIT next */
	put64(&s, 2000 + s.off->frame.stackpointer, s.sp + 2000 + s.off->frame.size + 8);
	/* look-alikes: stackpointer elsewhere; previous pointing into the stack */
	entry_314(&s, 6000, HEAP(3));
	put64(&s, 6000 + s.off->frame.stackpointer, s.sp + 6400);
	entry_314(&s, 7000, s.sp + 7200);
	{
		const struct expected_stub expected[] = {
			ENTRY_AT(400, true),
			ENTRY_AT(2000, true),
			ENTRY_AT(4400, true),
		};
		check_scan(&s, STACK_SIZE, 0, expected, 3);
		check_scan(&s, STACK_SIZE, NONE_ADDR, expected, 3);
		check_scan(&s, STACK_SIZE, NONE_ADDR + 8, NULL, 0);
	}
}
END_TEST

/* The copy starts at whatever SP was; stubs are 8-aligned in memory. */
START_TEST(test_stubs_unaligned_sp)
{
	struct stack s;
	const struct expected_stub expected[] = { ENTRY_AT(404, true) };

	stack_init(&s, 14);
	s.sp = SP + 4;
	entry_314(&s, 404, 0);
	check_scan(&s, STACK_SIZE, 0, expected, 1);
}
END_TEST

START_TEST(test_stubs_misc)
{
	struct stack s;
	struct ps_py_stub stubs[2];
	struct ps_py_stub_scan scan;

	/* before 3.11 the C stack holds no interpreter frames */
	stack_init(&s, 10);
	scan = (struct ps_py_stub_scan){ s.bytes, STACK_SIZE, s.sp, s.off, 0, 0 };
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 2), 0);

	/* more stubs than room: all counted, max written */
	stack_init(&s, 14);
	entry_314(&s, 400, HEAP(1));
	entry_314(&s, 2000, HEAP(2));
	entry_314(&s, 4400, 0);
	scan = (struct ps_py_stub_scan){ s.bytes, STACK_SIZE, s.sp, s.off, 0, 0 };
	memset(stubs, 0, sizeof(stubs));
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 2), 3);
	ck_assert_uint_eq(stubs[1].offset, 2000);
	ck_assert_int_eq(ps_py_scan_stubs(&scan, NULL, 0), 3);
	ck_assert_uint_eq(stubs[0].code, NONE_ADDR); /* untagged */
	ck_assert_uint_eq(stubs[0].previous, HEAP(1));

	/* small and empty copies */
	scan.size = 40;
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 2), 0);
	scan.size = 0;
	scan.stack = NULL;
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 2), 0);

	/* bad arguments */
	scan.size = 16;
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 2), -EINVAL);
	scan.stack = s.bytes;
	scan.offsets = NULL;
	ck_assert_int_eq(ps_py_scan_stubs(&scan, stubs, 2), -EINVAL);
	scan.offsets = s.off;
	ck_assert_int_eq(ps_py_scan_stubs(&scan, NULL, 2), -EINVAL);
	ck_assert_int_eq(ps_py_scan_stubs(NULL, stubs, 2), -EINVAL);
}
END_TEST

/* ---- main -------------------------------------------------------------- */

static Suite *interpreter_suite(void)
{
	Suite *suite = suite_create("interpreter");
	TCase *names = tcase_create("names");
	TCase *offsets = tcase_create("offsets");
	TCase *detection = tcase_create("detect");
	TCase *stubs = tcase_create("stubs");

	tcase_add_test(names, test_eval_names);
	tcase_add_test(names, test_parse_version);
	tcase_add_test(offsets, test_offsets_lookup);
	tcase_add_test(offsets, test_offsets_nearest_patch);
	tcase_add_test(offsets, test_offsets_consistent);
	tcase_add_test(offsets, test_offsets_known_values);
	tcase_set_timeout(detection, 60);
	tcase_add_test(detection, test_detect_312);
	tcase_add_test(detection, test_detect_stripped);
	tcase_add_test(detection, test_detect_debug_offsets);
	tcase_add_test(detection, test_detect_version_string);
	tcase_add_test(detection, test_detect_rodata);
	tcase_add_test(detection, test_detect_not_python);
	tcase_add_test(detection, test_detect_errors);
	tcase_add_test(detection, test_detect_damaged_symbols);
	tcase_add_test(detection, test_registry_cache);
	tcase_add_test(detection, test_detect_real_interpreters);
	tcase_add_test(stubs, test_stubs_312);
	tcase_add_test(stubs, test_stubs_312_single);
	tcase_add_test(stubs, test_stubs_311);
	tcase_add_test(stubs, test_stubs_311_fan_in);
	tcase_add_test(stubs, test_stubs_311_lone);
	tcase_add_test(stubs, test_stubs_311_root);
	tcase_add_test(stubs, test_stubs_313);
	tcase_add_test(stubs, test_stubs_313_single);
	tcase_add_test(stubs, test_stubs_314);
	tcase_add_test(stubs, test_stubs_unaligned_sp);
	tcase_add_test(stubs, test_stubs_misc);
	suite_add_tcase(suite, names);
	suite_add_tcase(suite, offsets);
	suite_add_tcase(suite, detection);
	suite_add_tcase(suite, stubs);
	return suite;
}

int main(void)
{
	SRunner *runner;
	int failed;

	build_fixtures();
	if (!have_fixtures)
		fprintf(stderr, "interpreter tests: cannot build the fixtures: %s\n", fixture_why);
	runner = srunner_create(interpreter_suite());
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	remove_fixtures();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
