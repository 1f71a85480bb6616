/* Unit tests of CPython detection (src/python/detect.c). Detection runs on
 * small ELF fixtures built at run time with cc and binutils (CC overrides
 * cc), and on the interpreters installed under pyenv when there are any. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/python_priv.h"

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
	  EVAL_FUNCTION EVAL_CLONES TRAMPOLINE "const unsigned long Py_Version = 0x030c01f0;\n" },
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
	ck_assert(p->has_trampoline);
	ck_assert_uint_eq(p->trampoline_end - p->trampoline_start, 11);
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
	detected_free(&d);
}
END_TEST

START_TEST(test_detect_debug_offsets)
{
	struct detected d;

	detect(&d, "libpython3.13.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert_int_eq(d.interp->version_source, PS_PY_VERSION_SYMBOL);
	ck_assert_uint_eq(d.interp->version_hex, 0x030d00f0);
	detected_free(&d);

	detect(&d, "libpython3.13-conflict.so");
	ck_assert_int_eq(d.rc, 1);
	ck_assert_int_eq(d.interp->version_source, PS_PY_VERSION_SYMBOL);
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
		ck_assert(p->has_trampoline == (minor >= 12));
		if (minor >= 11)
			ck_assert_int_eq(p->version_source, PS_PY_VERSION_SYMBOL);
		checked++;
	}
	closedir(dir);
	ps_py_registry_free(registry);
	if (!checked)
		fprintf(stderr, "test_detect_real_interpreters: none found under %s\n", versions);
}
END_TEST

/* ---- main -------------------------------------------------------------- */

static Suite *interpreter_suite(void)
{
	Suite *suite = suite_create("interpreter");
	TCase *names = tcase_create("names");
	TCase *detection = tcase_create("detect");

	tcase_add_test(names, test_eval_names);
	tcase_add_test(names, test_parse_version);
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
	suite_add_tcase(suite, names);
	suite_add_tcase(suite, detection);
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
