/* die_walk.c: the function DIEs of every unit, found over the DIE bytes,
 * are those libdw's walk finds, in its order, with the same enclosing
 * functions (the fixture and this test program, as the compiler wrote
 * them); what the walker does not read it leaves to libdw
 * (PS_DIE_WALK_UNSURE). */
#include "helpers.h"

#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols_priv.h"

#define MAX_FUNCS 20000

struct found {
	uint64_t offset;
	int tag;
	uint32_t enclosing;
};

struct list {
	struct found *items;
	size_t nr;
	size_t read; /* functions the walker read the attributes of */
	size_t in_types; /* functions whose parent is a class, structure or union */
};

/* What the walker read of a function is what addr2line.c reads of it
 * through libdw. */
static void check_read(Dwarf_Die *die, const struct ps_die_function *read)
{
	struct ps_die_function ref;
	uint64_t at = dwarf_dieoffset(die);

	ck_assert_msg(ps_addr2line_function_libdw(die, &ref) == 0, "DIE %#llx",
	              (unsigned long long)at);
	ck_assert_msg(read->name == ref.name, "DIE %#llx: name %s, libdw %s",
	              (unsigned long long)at, read->name ? read->name : "(none)",
	              ref.name ? ref.name : "(none)");
	ck_assert_int_eq(read->is_linkage, ref.is_linkage);
	ck_assert_int_eq(read->has_call_file, ref.has_call_file);
	if (ref.has_call_file)
		ck_assert_uint_eq(read->call_file, ref.call_file);
	ck_assert_uint_eq(read->call_line, ref.call_line);
	ck_assert_int_eq(read->ranges_attr, ref.ranges_attr);
	ck_assert_int_eq(read->has_pc, ref.has_pc);
	if (ref.has_pc) {
		ck_assert_uint_eq(read->low, ref.low);
		ck_assert_uint_eq(read->high, ref.high);
	}
}

/* Whether the DIE's parent is a type that can hold code (C++). */
static bool in_type(Dwarf_Die *die)
{
	Dwarf_Die cu, *scopes = NULL;
	bool found = false;
	int n;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	/* the scopes of the DIE's own offset, innermost first */
	n = dwarf_getscopes_die(die, &scopes);
	if (n >= 2) {
		int tag = dwarf_tag(&scopes[1]);

		found = tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
		        tag == DW_TAG_union_type;
	}
	free(scopes);
	return found;
}

static int record(void *ctx, Dwarf_Die *die, int tag, uint32_t enclosing, uint32_t *self,
                  const struct ps_die_function *read)
{
	struct list *l = ctx;

	if (read) {
		check_read(die, read);
		l->read++;
	}
	ck_assert_uint_lt(l->nr, MAX_FUNCS);
	*self = (uint32_t)l->nr;
	if (in_type(die))
		l->in_types++;
	l->items[l->nr++] = (struct found){ .offset = dwarf_dieoffset(die),
		                            .tag = tag,
		                            .enclosing = enclosing };
	return 0;
}

/* Both walks over every unit of path: the number of functions found, and
 * in *read, how many of them the walker read itself, in *in_types (when
 * given) how many lie in a class, structure or union. */
static size_t compare_walks_in(const char *path, size_t *read, size_t *in_types)
{
	struct list ours = { calloc(MAX_FUNCS, sizeof(struct found)), 0, 0, 0 };
	struct list libdw = { calloc(MAX_FUNCS, sizeof(struct found)), 0, 0, 0 };
	struct ps_die_strings strings;
	struct ps_cursor info, abbrevs;
	struct ps_elf *elf;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	char err[512];
	size_t units = 0, total = 0;
	Dwarf *dwarf;

	ck_assert(ours.items && libdw.items);
	ck_assert_msg(ps_elf_open(path, &elf, err, sizeof(err)) == 0, "%s", err);
	dwarf = ps_elf_dwarf(elf);
	ck_assert_msg(dwarf != NULL, "%s: no DWARF", path);
	ck_assert(ps_elf_section_contents(elf, ".debug_abbrev", &abbrevs));
	ck_assert(ps_elf_section_contents(elf, ".debug_info", &info));
	ps_die_strings_of(elf, dwarf, &strings);
	ck_assert_msg(strings.has_str, "%s: .debug_str not taken for the walker", path);
	while (dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
		int rc;

		cu = next;
		if (dwarf_tag(&cudie) != DW_TAG_compile_unit)
			continue;
		units++;
		ours.nr = libdw.nr = 0;
		strings.names_are_linkage = ps_addr2line_names_are_linkage(dwarf_srclang(&cudie));
		rc = ps_die_walk_functions(dwarf, &cudie, info, abbrevs, &strings, record, &ours);
		ck_assert_msg(rc == 0, "%s: unit at %#llx: the walker returned %d", path,
		              (unsigned long long)dwarf_dieoffset(&cudie), rc);
		ck_assert_int_eq(ps_die_walk_functions_libdw(&cudie, record, &libdw), 0);
		ck_assert_uint_eq(ours.nr, libdw.nr);
		for (size_t i = 0; i < ours.nr; i++) {
			ck_assert_uint_eq(ours.items[i].offset, libdw.items[i].offset);
			ck_assert_int_eq(ours.items[i].tag, libdw.items[i].tag);
			ck_assert_uint_eq(ours.items[i].enclosing, libdw.items[i].enclosing);
		}
		total += ours.nr;
	}
	ck_assert_uint_gt(units, 0);
	ck_assert_uint_eq(libdw.read, 0);
	ck_assert_uint_eq(ours.in_types, libdw.in_types);
	*read = ours.read;
	if (in_types)
		*in_types = ours.in_types;
	ps_elf_close(elf);
	free(ours.items);
	free(libdw.items);
	return total;
}

static size_t compare_walks(const char *path, size_t *read)
{
	return compare_walks_in(path, read, NULL);
}

START_TEST(test_same_as_libdw)
{
	size_t read;

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	/* inlined functions nested in functions, a lambda-free C file: the
	 * walker reads them all (names in .debug_str, inline call sites,
	 * abstract origins) */
	ck_assert_uint_gt(compare_walks(fixture.so, &read), 5);
	ck_assert_uint_gt(read, 5);
	/* this program: many units, the Check library's headers' types */
	ck_assert_uint_gt(compare_walks("/proc/self/exe", &read), 50);
	ck_assert_uint_gt(read, 50);
	/* by hand, other files (libpython, C++ libraries, separate debug
	 * files): PS_DIE_WALK_FILES=PATH[:PATH...] */
	const char *more = getenv("PS_DIE_WALK_FILES");
	char *list = more ? strdup(more) : NULL, *save = NULL;

	for (char *path = list ? strtok_r(list, ":", &save) : NULL; path;
	     path = strtok_r(NULL, ":", &save)) {
		size_t n = compare_walks(path, &read);

		printf("die walk: %s: %zu functions, %zu read over the bytes\n", path, n, read);
	}
	free(list);
}
END_TEST

/* C++: member functions, local classes' functions and lambdas' operator()
 * lie inside classes in the DWARF (the walker steps over the members of
 * structures and unions in C units only), and the walker finds each as
 * libdw does. */
START_TEST(test_cxx_classes_walked)
{
	const char *cxx = getenv("CXX") ? getenv("CXX") : "c++";
	char so[600], command[2048];
	size_t read, in_types = 0;

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	snprintf(so, sizeof(so), "%s/libcxx_fixture.so", fixture.dir);
	snprintf(command, sizeof(command),
	         "%s -O1 -g -fPIC -shared -nostdlib -fno-exceptions -o %s %s/cxx_fixture.cpp", cxx,
	         so, PS_TEST_SRCDIR);
	ck_assert_msg(system(command) == 0, "%s failed", command);
	ck_assert_uint_gt(compare_walks_in(so, &read, &in_types), 5);
	/* counter::next, local::twice, the three lambdas (declarations and
	 * definitions) */
	ck_assert_uint_ge(in_types, 5);
	unlink(so);
}
END_TEST

/* An abbreviation table the walker cannot read: an unknown form, or cut
 * short. It says so, and libdw is asked instead. */
START_TEST(test_unknown_form_left_to_libdw)
{
	/* code 1: DW_TAG_compile_unit with children, DW_AT_name in a form
	 * DWARF does not have */
	static const uint8_t bad_form[] = { 1, DW_TAG_compile_unit, 1, DW_AT_name, 0x7f, 0, 0, 0 };
	static const uint8_t cut[] = { 1, DW_TAG_compile_unit };
	struct list l = { calloc(MAX_FUNCS, sizeof(struct found)), 0, 0, 0 };
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	struct ps_cursor info;
	struct ps_elf *elf;
	char err[512];
	Dwarf *dwarf;

	ck_assert(l.items);
	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	ck_assert_msg(ps_elf_open(fixture.so, &elf, err, sizeof(err)) == 0, "%s", err);
	dwarf = ps_elf_dwarf(elf);
	ck_assert(dwarf != NULL);
	ck_assert_int_eq(dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &cudie, &subdie),
	                 0);
	ck_assert(ps_elf_section_contents(elf, ".debug_info", &info));
	/* the bytes libdw reads: another copy is refused */
	ck_assert_int_eq(ps_die_walk_functions(
	                         dwarf, &cudie,
	                         ps_cursor_make(info.start + 1, ps_cursor_size(&info) - 1, false),
	                         info, NULL, record, &l),
	                 PS_DIE_WALK_UNSURE);
	ck_assert_int_eq(ps_die_walk_functions(dwarf, &cudie, info,
	                                       ps_cursor_make(bad_form, sizeof(bad_form), false),
	                                       NULL, record, &l),
	                 PS_DIE_WALK_UNSURE);
	ck_assert_int_eq(ps_die_walk_functions(dwarf, &cudie, info,
	                                       ps_cursor_make(cut, sizeof(cut), false), NULL,
	                                       record, &l),
	                 PS_DIE_WALK_UNSURE);
	ck_assert_uint_eq(l.nr, 0);
	ps_elf_close(elf);
	free(l.items);
}
END_TEST

Suite *suite_die_walk(void)
{
	Suite *s = suite_create("die_walk");
	TCase *tc = tcase_create("walk");

	tcase_add_test(tc, test_same_as_libdw);
	tcase_add_test(tc, test_cxx_classes_walked);
	tcase_add_test(tc, test_unknown_form_left_to_libdw);
	suite_add_tcase(s, tc);
	return s;
}
