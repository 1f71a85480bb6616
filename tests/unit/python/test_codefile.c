/* Unit tests of pystitch_perf's side file reader (src/python/codefile.c):
 * files made here record by record (the format of python/pystitch_perf.h),
 * read back and looked up by address, trampoline and name, through the
 * reuse of freed memory; then every kind of damage. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python/python_priv.h"

/* A side file being made. */
struct side {
	uint8_t data[1 << 16];
	size_t size;
};

static void put(struct side *s, const void *bytes, size_t n)
{
	ck_assert_uint_le(s->size + n, sizeof(s->data));
	memcpy(s->data + s->size, bytes, n);
	s->size += n;
}

static void put32(struct side *s, uint32_t v)
{
	put(s, &v, 4);
}

static void put64(struct side *s, uint64_t v)
{
	put(s, &v, 8);
}

static void header(struct side *s, uint32_t version)
{
	s->size = 0;
	put(s, "PYSTLINE", 8);
	put32(s, version);
	put32(s, 32);
	put32(s, 0x030c01f0);
	put32(s, 1234);
	put32(s, 1);
	put32(s, 0);
}

static void record_header(struct side *s, uint16_t type, uint32_t size, uint64_t time)
{
	uint16_t zero = 0;

	put(s, &type, 2);
	put(s, &zero, 2);
	put32(s, size);
	put64(s, time);
}

/* A code record with a 3.11+ table of one entry per two code units, each
 * a line further (first_line, first_line + 1, ...). */
static void code(struct side *s, uint64_t time, uint64_t object, uint64_t bytecode, uint32_t size,
                 int32_t first_line, const char *name, const char *file)
{
	uint8_t table[64];
	uint32_t entries = size / 4, table_size = 0;
	size_t name_size = strlen(name), file_size = strlen(file);
	size_t total = 56 + entries * 2 + name_size + file_size;
	size_t padded = (total + 7) & ~(size_t)7;

	for (uint32_t i = 0; i < entries; i++) {
		table[table_size++] = 0x80 | 13 << 3 | 1; /* no columns, 2 units */
		table[table_size++] = i ? 2 : 0; /* +1 line, except the first */
	}
	record_header(s, 1, (uint32_t)padded, time);
	put64(s, object);
	put64(s, bytecode);
	put32(s, size);
	put32(s, (uint32_t)first_line);
	put32(s, 3);
	put32(s, table_size);
	put32(s, (uint32_t)name_size);
	put32(s, (uint32_t)file_size);
	put(s, table, table_size);
	put(s, name, name_size);
	put(s, file, file_size);
	for (size_t i = total; i < padded; i++)
		put(s, "", 1);
}

static void trampoline(struct side *s, uint64_t time, uint64_t object, uint64_t address)
{
	record_header(s, 2, 32, time);
	put64(s, object);
	put64(s, address);
}

static void freed(struct side *s, uint64_t time, uint64_t object)
{
	record_header(s, 3, 24, time);
	put64(s, object);
}

static void copied(struct side *s, uint64_t time, uint64_t object, uint64_t bytecode)
{
	record_header(s, 4, 32, time);
	put64(s, object);
	put64(s, bytecode);
}

static struct ps_py_codes *parse(const struct side *s, int expected)
{
	struct ps_py_codes *codes = NULL;

	ck_assert_int_eq(ps_py_codes_parse("test.pylines", s->data, s->size, &codes), expected);
	ck_assert_ptr_nonnull(codes);
	return codes;
}

static int32_t line_at(const struct ps_py_code *c, uint64_t address)
{
	int32_t line = 0;

	ck_assert_int_eq(ps_py_line_at(c->format, c->table, c->table_size, c->first_line,
	                               address - c->bytecode, &line),
	                 1);
	return line;
}

START_TEST(test_lookups)
{
	struct side s;
	const struct ps_py_code *found[4];
	struct ps_py_codes *codes;
	const struct ps_py_code *f, *g;

	header(&s, 1);
	code(&s, 100, 0xa000, 0x10000, 16, 10, "f", "/a.py");
	trampoline(&s, 101, 0xa000, 0x7000);
	code(&s, 110, 0xb000, 0x20000, 8, 20, "C.g", "/a.py");
	code(&s, 110, 0xb000, 0x20000, 8, 20, "C.g", "/a.py"); /* written twice */
	freed(&s, 200, 0xa000);
	/* f's memory reused by h after it was freed */
	code(&s, 300, 0xc000, 0x10000, 16, 40, "h", "/b.py");
	trampoline(&s, 301, 0xc000, 0x7000);
	freed(&s, 400, 0xdead); /* never seen */
	codes = parse(&s, 0);
	ck_assert_ptr_null(ps_py_codes_errmsg(codes));
	ck_assert_uint_eq(ps_py_codes_count(codes), 3);
	ck_assert_uint_eq(ps_py_codes_python(codes), 0x030c01f0);
	ck_assert(ps_py_codes_own_trampolines(codes));
	f = ps_py_codes_at(codes, 0);
	ck_assert_uint_eq(f->created, 100);
	ck_assert_uint_eq(f->freed, 200);
	ck_assert_uint_eq(f->trampoline, 0x7000);
	ck_assert_uint_eq(line_at(f, 0x10000), 10);
	ck_assert_uint_eq(line_at(f, 0x10006), 11);
	/* by address, at a time: f, then h */
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x10004, 150, 0, found, 4), 1);
	ck_assert_ptr_eq(found[0], f);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x10004, 350, 0, found, 4), 1);
	ck_assert_uint_eq(found[0]->first_line, 40);
	/* within the margin of the reuse: both */
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x10004, 250, 60, found, 4), 2);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x10004, 250, 60, found, 1), 2);
	/* before anything, past the end, between two */
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x10004, 50, 0, found, 4), 0);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x10010, 150, 0, found, 4), 0);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x18000, 150, 0, found, 4), 0);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x20006, 150, 0, found, 4), 1);
	g = found[0];
	ck_assert_uint_eq(g->freed, UINT64_MAX);
	/* by trampoline */
	ck_assert_ptr_eq(ps_py_codes_by_trampoline(codes, 0x7000, 150, 0), f);
	ck_assert_uint_eq(ps_py_codes_by_trampoline(codes, 0x7000, 350, 0)->first_line, 40);
	ck_assert_ptr_null(ps_py_codes_by_trampoline(codes, 0x7000, 250, 60));
	ck_assert_ptr_null(ps_py_codes_by_trampoline(codes, 0x7008, 150, 0));
	/* by name */
	ck_assert_uint_eq(ps_py_codes_by_name(codes, "C.g", 3, "/a.py", 5, 1000, 0, found, 4), 1);
	ck_assert_ptr_eq(found[0], g);
	ck_assert_uint_eq(ps_py_codes_by_name(codes, "f", 1, "/a.py", 5, 1000, 0, found, 4), 0);
	ck_assert_uint_eq(ps_py_codes_by_name(codes, "f", 1, "/b.py", 5, 150, 0, found, 4), 0);
	ps_py_codes_free(codes);
}
END_TEST

/* Free-threaded CPython 3.14+: copies of a code object's bytecode that
 * other threads run are found by their addresses, with the code object's
 * lines, name, trampoline and life; not by name or trampoline (where the
 * code object answers for them), and not counted as code objects. */
START_TEST(test_copies)
{
	struct side s;
	const struct ps_py_code *found[4], *f, *copy;
	struct ps_py_codes *codes;

	header(&s, 1);
	code(&s, 100, 0xa000, 0x10000, 16, 10, "f", "/a.py");
	code(&s, 110, 0xb000, 0x20000, 8, 20, "g", "/a.py");
	/* written when f is freed: its trampoline, two copies, then the free */
	trampoline(&s, 200, 0xa000, 0x7000);
	copied(&s, 200, 0xa000, 0x50000);
	copied(&s, 200, 0xa000, 0x60000);
	copied(&s, 200, 0xa000, 0x60000); /* twice: once */
	freed(&s, 200, 0xa000);
	copied(&s, 210, 0xa000, 0x70000); /* after its free: not f's */
	copied(&s, 210, 0xdead, 0x80000); /* of nothing seen */
	/* written at exit for g, alive */
	copied(&s, 300, 0xb000, 0x90000);
	codes = parse(&s, 0);
	ck_assert_ptr_null(ps_py_codes_errmsg(codes));
	ck_assert_uint_eq(ps_py_codes_objects(codes), 2);
	ck_assert_uint_eq(ps_py_codes_count(codes), 5);
	f = ps_py_codes_at(codes, 0);
	ck_assert(!f->copy);
	/* in a copy, as in f: the same line at the same offset */
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x60006, 150, 0, found, 4), 1);
	copy = found[0];
	ck_assert(copy->copy);
	ck_assert_uint_eq(copy->bytecode, 0x60000);
	ck_assert_uint_eq(line_at(copy, 0x60006), line_at(f, 0x10006));
	ck_assert_uint_eq(copy->created, 100);
	ck_assert_uint_eq(copy->freed, 200);
	ck_assert_uint_eq(copy->trampoline, 0x7000);
	ck_assert(copy->name_size == 1 && memcmp(copy->name, "f", 1) == 0);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x50000, 150, 0, found, 4), 1);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x60006, 250, 0, found, 4), 0);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x70000, 150, 0, found, 4), 0);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x80000, 150, 0, found, 4), 0);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x90004, 1000, 0, found, 4), 1);
	ck_assert_uint_eq(found[0]->first_line, 20);
	/* the list of f's copies */
	ck_assert_uint_ne(f->next_copy, UINT32_MAX);
	copy = ps_py_codes_at(codes, f->next_copy);
	ck_assert(copy->copy);
	ck_assert_uint_ne(copy->next_copy, UINT32_MAX);
	ck_assert(ps_py_codes_at(codes, copy->next_copy)->copy);
	ck_assert_uint_eq(ps_py_codes_at(codes, copy->next_copy)->next_copy, UINT32_MAX);
	/* the code object answers by trampoline and by name */
	ck_assert_ptr_eq(ps_py_codes_by_trampoline(codes, 0x7000, 150, 0), f);
	ck_assert_uint_eq(ps_py_codes_by_name(codes, "f", 1, "/a.py", 5, 150, 0, found, 4), 1);
	ck_assert_ptr_eq(found[0], f);
	ps_py_codes_free(codes);

	/* a code object whose free went unseen (another took its address):
	 * its copies end with it */
	header(&s, 1);
	code(&s, 100, 0xa000, 0x10000, 16, 10, "f", "/a.py");
	copied(&s, 150, 0xa000, 0x50000);
	code(&s, 300, 0xa000, 0x30000, 16, 30, "g", "/a.py");
	copied(&s, 400, 0xa000, 0x50000); /* the same address, g's copy now */
	codes = parse(&s, 0);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x50004, 200, 0, found, 4), 1);
	ck_assert_uint_eq(found[0]->first_line, 10);
	ck_assert_uint_eq(found[0]->freed, 300);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x50004, 500, 0, found, 4), 1);
	ck_assert_uint_eq(found[0]->first_line, 30);
	ck_assert_uint_eq(found[0]->freed, UINT64_MAX);
	ps_py_codes_free(codes);

	/* a copy record cut short is damage */
	header(&s, 1);
	code(&s, 100, 0xa000, 0x10000, 16, 10, "f", "/a.py");
	record_header(&s, 4, 24, 200);
	put64(&s, 0xa000);
	codes = parse(&s, 0);
	ck_assert_ptr_nonnull(ps_py_codes_errmsg(codes));
	ck_assert_uint_eq(ps_py_codes_stats(codes)->damaged, 1);
	ps_py_codes_free(codes);
}
END_TEST

START_TEST(test_damage)
{
	struct side s, cut;
	struct ps_py_codes *codes;
	const struct ps_py_code *found[2];

	size_t first_end;

	header(&s, 1);
	code(&s, 100, 0xa000, 0x10000, 16, 10, "f", "/a.py");
	first_end = s.size;
	code(&s, 110, 0xb000, 0x20000, 8, 20, "g", "/a.py");
	/* cut anywhere: what came before is kept, the rest said damaged */
	for (size_t size = 0; size <= s.size; size++) {
		int rc;

		memcpy(&cut, &s, sizeof(s));
		cut.size = size;
		codes = NULL;
		rc = ps_py_codes_parse("test.pylines", cut.data, cut.size, &codes);
		ck_assert_ptr_nonnull(codes);
		if (size < 32) {
			ck_assert_int_eq(rc, -EINVAL);
			ck_assert_ptr_nonnull(strstr(ps_py_codes_errmsg(codes), "test.pylines"));
		} else {
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(ps_py_codes_count(codes), size < first_end ? 0
			                                            : size < s.size  ? 1
			                                                             : 2);
			ck_assert(!ps_py_codes_errmsg(codes) ==
			          (size == 32 || size == first_end || size == s.size));
		}
		ps_py_codes_free(codes);
	}
	/* a record whose size is not a multiple of 8, an unknown type, a
	 * code record too short for its table, a bad range */
	header(&s, 1);
	record_header(&s, 9, 24, 5);
	put64(&s, 0);
	code(&s, 100, 0xa000, 0x10000, 16, 10, "f", "/a.py");
	memcpy(&cut, &s, sizeof(s));
	record_header(&s, 1, 60, 5);
	put(&s, "0123456789012345678901234567890123456789012345", 44);
	codes = parse(&s, 0);
	ck_assert_uint_eq(ps_py_codes_count(codes), 1);
	ck_assert_uint_eq(ps_py_codes_stats(codes)->unknown, 1);
	ck_assert_uint_eq(ps_py_codes_stats(codes)->damaged, 1);
	ck_assert_ptr_nonnull(strstr(ps_py_codes_errmsg(codes), "offset 0x80"));
	ps_py_codes_free(codes);
	code(&cut, 120, 0xb000, 0x20000, 7, 20, "g", "/a.py"); /* odd size */
	code(&cut, 130, 0, 0x30000, 8, 20, "h", "/a.py"); /* no object */
	codes = parse(&cut, 0);
	ck_assert_uint_eq(ps_py_codes_count(codes), 1);
	ck_assert_uint_eq(ps_py_codes_find(codes, 0x20002, 200, 0, found, 2), 0);
	ps_py_codes_free(codes);
	/* another version, another magic */
	header(&s, 2);
	codes = parse(&s, -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(ps_py_codes_errmsg(codes), "version 2"));
	ps_py_codes_free(codes);
	header(&s, 1);
	s.data[0] = 'X';
	ps_py_codes_free(parse(&s, -EINVAL));
}
END_TEST

START_TEST(test_files)
{
	char path[] = "/tmp/ps-codefile-XXXXXX";
	struct ps_py_codes *codes = NULL;
	struct side s;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	header(&s, 1);
	code(&s, 100, 0xa000, 0x10000, 16, 10, "f", "/a.py");
	ck_assert_int_eq(write(fd, s.data, s.size), (ssize_t)s.size);
	close(fd);
	ck_assert_int_eq(ps_py_codes_read("perf-1.pylines", path, 0, &codes), 0);
	ck_assert_uint_eq(ps_py_codes_count(codes), 1);
	ck_assert_str_eq(ps_py_codes_path(codes), "perf-1.pylines");
	ps_py_codes_free(codes);
	/* over the cap */
	ck_assert_int_eq(ps_py_codes_read("perf-1.pylines", path, 64, &codes), -EFBIG);
	ck_assert_ptr_nonnull(strstr(ps_py_codes_errmsg(codes), "perf-1.pylines"));
	ps_py_codes_free(codes);
	unlink(path);
	ck_assert_int_eq(ps_py_codes_read("perf-1.pylines", path, 0, &codes), -ENOENT);
	ps_py_codes_free(codes);
	ck_assert_int_eq(ps_py_codes_read("perf-1.pylines", "/tmp", 0, &codes), -EINVAL);
	ps_py_codes_free(codes);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("codefile");
	TCase *tc = tcase_create("codefile");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, test_lookups);
	tcase_add_test(tc, test_copies);
	tcase_add_test(tc, test_damage);
	tcase_add_test(tc, test_files);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
