/* elf_inflate.c: the fixture with its debug sections compressed by
 * objcopy (zlib or zstd), inflated apart, holds the same DWARF bytes as
 * the fixture and names the same addresses; images it cannot inflate
 * exactly are left to libelf. */
#include "helpers.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols_priv.h"

/* The fixture with its debug sections compressed by objcopy with
 * method (zlib, zstd), read into memory. */
static uint8_t *fixture_compressed_with(const char *method, char *path, size_t path_size,
                                        size_t *size)
{
	char dir[512], command[2048];
	struct stat st;
	uint8_t *image;
	int fd;

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	make_dir(dir, sizeof(dir), "inflate");
	fmt(path, path_size, "%s/%s.so", dir, method);
	fmt(command, sizeof(command), "objcopy --compress-debug-sections=%s '%s' '%s'", method,
	    fixture.so, path);
	ck_assert_msg(system(command) == 0, "%s failed", command);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	image = malloc((size_t)st.st_size);
	ck_assert(image != NULL);
	ck_assert_int_eq(read(fd, image, (size_t)st.st_size), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return image;
}

static uint8_t *compressed_fixture(char *path, size_t path_size, size_t *size)
{
	return fixture_compressed_with("zlib", path, path_size, size);
}

/* got holds the same bytes as want. */
static void assert_same_data(const Elf_Data *got, const Elf_Data *want)
{
	ck_assert_uint_eq(got->d_size, want->d_size);
	ck_assert_int_eq(memcmp(got->d_buf, want->d_buf, want->d_size), 0);
}

/* The section's bytes, through libelf (decompressed if it still is;
 * *was_compressed says). */
static Elf_Data *section_data(Elf *elf, const char *name, bool *was_compressed)
{
	size_t names;
	Elf_Scn *scn = NULL;

	ck_assert_int_eq(elf_getshdrstrndx(elf, &names), 0);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		ck_assert(gelf_getshdr(scn, &shdr) != NULL);
		if (strcmp(elf_strptr(elf, names, shdr.sh_name), name) != 0)
			continue;
		*was_compressed = (shdr.sh_flags & SHF_COMPRESSED) != 0;
		if (*was_compressed)
			ck_assert_int_eq(elf_compress(scn, 0, 0), 1);
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* zlib (_i 0) and zstd (_i 1), as objcopy writes them */
static const char *const methods[] = { "zlib", "zstd" };

START_TEST(test_same_dwarf_bytes)
{
	static const char *const sections[] = { ".debug_info", ".debug_abbrev", ".debug_line",
		                                ".debug_str", ".debug_loclists" };
	char path[600];
	size_t size;
	uint8_t *image = fixture_compressed_with(methods[_i], path, sizeof(path), &size);
	struct ps_elf *plain;
	char err[512];
	struct ps_elf_inflated *copy;
	Elf *inflated;

	ck_assert_msg(ps_elf_open(fixture.so, &plain, err, sizeof(err)) == 0, "%s", err);
	ck_assert(ps_elf_inflate(image, size, &inflated, &copy));
	ck_assert(ps_elf_inflate_later(copy));
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		bool plain_compressed, inflated_compressed;
		Elf_Data *want = section_data(plain->elf, sections[i], &plain_compressed);
		Elf_Data *got = section_data(inflated, sections[i], &inflated_compressed);

		ck_assert_msg(want && got, "%s missing", sections[i]);
		ck_assert(!plain_compressed && !inflated_compressed);
		assert_same_data(got, want);
	}
	elf_end(inflated);
	ps_elf_inflated_free(copy);
	ps_elf_close(plain);
	free(image);
}
END_TEST

/* Every function address of the fixture named alike from the compressed
 * copy (which inflates it apart) and from the fixture. */
START_TEST(test_same_answers)
{
	char path[600];
	size_t size;
	uint8_t *image = fixture_compressed_with(methods[_i], path, sizeof(path), &size);
	struct ps_elf *plain, *z;
	struct ps_addr2line *a, *b;
	char err[512];
	static const char *const symbols[] = { "inl_outer", "quirk_impl" };

	ck_assert_msg(ps_elf_open(fixture.so, &plain, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(ps_elf_open(path, &z, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(ps_addr2line_open(plain, false, &a), 0);
	ck_assert_int_eq(ps_addr2line_open(z, false, &b), 0);
	ck_assert_msg(z->dwarf_copy != NULL, "the compressed copy was not inflated apart");
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		uint64_t len, at = fixture_symbol(symbols[i], &len) + ps_elf_text_offset(plain);

		for (uint64_t off = 0; off < len; off++) {
			struct ps_addr2line_record ra[16], rb[16];
			int na = ps_addr2line_query(a, at + off, ra, 16);
			int nb = ps_addr2line_query(b, at + off, rb, 16);

			ck_assert_int_eq(na, nb);
			ck_assert_int_gt(na, 0);
			for (int k = 0; k < na; k++) {
				ck_assert_str_eq(ra[k].function ? ra[k].function : "?",
				                 rb[k].function ? rb[k].function : "?");
				ck_assert_uint_eq(ra[k].line, rb[k].line);
			}
		}
	}
	ps_addr2line_close(a);
	ps_addr2line_close(b);
	ps_elf_close(plain);
	ps_elf_close(z);
	free(image);
}
END_TEST

/* The header of the image's section of that name. */
static Elf64_Shdr *named_shdr(uint8_t *image, const char *name)
{
	Elf64_Ehdr ehdr;
	Elf64_Shdr *shdrs;

	memcpy(&ehdr, image, sizeof(ehdr));
	shdrs = (Elf64_Shdr *)(void *)(image + ehdr.e_shoff);
	for (size_t i = 0; i < ehdr.e_shnum; i++)
		if (strcmp((const char *)image + shdrs[ehdr.e_shstrndx].sh_offset +
		                   shdrs[i].sh_name,
		           name) == 0)
			return &shdrs[i];
	ck_abort_msg("no section %s", name);
	return NULL;
}

static bool all_zero(const Elf_Data *data)
{
	for (size_t i = 0; i < data->d_size; i++)
		if (((const uint8_t *)data->d_buf)[i])
			return false;
	return true;
}

/* The location lists are inflated when asked for, not before; a damaged
 * stream of theirs fails then, and they read as empty, while the rest of
 * the DWARF is there. */
START_TEST(test_location_lists_later)
{
	char path[600];
	size_t size;
	uint8_t *image = compressed_fixture(path, sizeof(path), &size);
	Elf64_Shdr *loclists = named_shdr(image, ".debug_loclists");
	struct ps_elf_inflated *copy;
	bool compressed;
	Elf_Data *data;
	Elf *elf;

	ck_assert(loclists->sh_flags & SHF_COMPRESSED);
	ck_assert(ps_elf_inflate(image, size, &elf, &copy));
	data = section_data(elf, ".debug_loclists", &compressed);
	ck_assert(data && !compressed && data->d_size > 0);
	ck_assert_msg(all_zero(data),
	              "the location lists were inflated before they were asked for");
	ck_assert(ps_elf_inflate_later(copy));
	ck_assert(!all_zero(data));
	ck_assert(ps_elf_inflate_later(copy));
	elf_end(elf);
	ps_elf_inflated_free(copy);

	/* the last byte of the stream (its checksum's) damaged */
	image[loclists->sh_offset + loclists->sh_size - 1] ^= 0xff;
	ck_assert(ps_elf_inflate(image, size, &elf, &copy));
	ck_assert(!ps_elf_inflate_later(copy));
	ck_assert(!ps_elf_inflate_later(copy));
	data = section_data(elf, ".debug_loclists", &compressed);
	ck_assert(data && all_zero(data));
	data = section_data(elf, ".debug_info", &compressed);
	ck_assert(data && !compressed && !all_zero(data));
	elf_end(elf);
	ps_elf_inflated_free(copy);
	ck_assert(ps_elf_inflate_later(NULL));
	free(image);
}
END_TEST

/* n bytes as one zlib stream at out; its size. */
static size_t zlib_stream(const void *in, size_t n, uint8_t *out, size_t room)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
	size_t got;

	ck_assert_ptr_nonnull(c);
	got = libdeflate_zlib_compress(c, in, n, out, room);
	libdeflate_free_compressor(c);
	ck_assert_uint_gt(got, 0);
	return got;
}

/* Location lists written as two zlib streams one after the other, which
 * libelf reads as one section, inflate later to the same bytes. */
START_TEST(test_location_lists_in_two_streams)
{
	char path[600], err[512];
	size_t size, at, room, len;
	uint8_t *image = compressed_fixture(path, sizeof(path), &size);
	struct ps_elf *plain;
	struct ps_elf_inflated *copy;
	Elf64_Shdr *loclists;
	Elf64_Chdr chdr = { .ch_type = ELFCOMPRESS_ZLIB, .ch_addralign = 1 };
	Elf_Data *want, *got;
	bool compressed;
	Elf *elf;

	ck_assert_msg(ps_elf_open(fixture.so, &plain, err, sizeof(err)) == 0, "%s", err);
	want = section_data(plain->elf, ".debug_loclists", &compressed);
	ck_assert(want && want->d_size > 1);
	/* the new section after the image's end, 8-aligned */
	at = (size + 7) & ~(size_t)7;
	room = 2 * want->d_size + 1024;
	image = realloc(image, at + sizeof(chdr) + room);
	ck_assert_ptr_nonnull(image);
	chdr.ch_size = want->d_size;
	memcpy(image + at, &chdr, sizeof(chdr));
	len = zlib_stream(want->d_buf, want->d_size / 2, image + at + sizeof(chdr), room);
	len += zlib_stream((const uint8_t *)want->d_buf + want->d_size / 2,
	                   want->d_size - want->d_size / 2, image + at + sizeof(chdr) + len,
	                   room - len);
	loclists = named_shdr(image, ".debug_loclists");
	loclists->sh_offset = at;
	loclists->sh_size = sizeof(chdr) + len;
	ck_assert(ps_elf_inflate(image, at + sizeof(chdr) + len, &elf, &copy));
	ck_assert(ps_elf_inflate_later(copy));
	got = section_data(elf, ".debug_loclists", &compressed);
	ck_assert(got && !compressed);
	assert_same_data(got, want);
	elf_end(elf);
	ps_elf_inflated_free(copy);
	ps_elf_close(plain);
	free(image);
}
END_TEST

/* The nth compressed section's header in the image. */
static Elf64_Shdr *compressed_shdr(uint8_t *image, unsigned nth)
{
	Elf64_Ehdr ehdr;
	Elf64_Shdr *shdrs;

	memcpy(&ehdr, image, sizeof(ehdr));
	shdrs = (Elf64_Shdr *)(void *)(image + ehdr.e_shoff);
	for (size_t i = 0; i < ehdr.e_shnum; i++)
		if ((shdrs[i].sh_flags & SHF_COMPRESSED) && nth-- == 0)
			return &shdrs[i];
	ck_abort_msg("no compressed section");
	return NULL;
}

static Elf64_Chdr *first_chdr(uint8_t *image)
{
	return (Elf64_Chdr *)(void *)(image + compressed_shdr(image, 0)->sh_offset);
}

/* What libelf would read otherwise is left to libelf: a section beyond
 * the file's end, bytes after a stream, a name twice, an allocated
 * section, an alignment that is no power of two. */
START_TEST(test_declined_as_libelf)
{
	char path[600];
	size_t size;
	uint8_t *image = compressed_fixture(path, sizeof(path), &size);
	Elf64_Shdr *first = compressed_shdr(image, 0), *second = compressed_shdr(image, 1);
	Elf64_Shdr saved_first = *first, saved_second = *second;
	Elf64_Chdr *chdr = first_chdr(image), saved_chdr = *chdr;
	Elf64_Ehdr ehdr;
	Elf64_Shdr *last;
	struct ps_elf_inflated *copy;
	Elf *elf;

	ck_assert(ps_elf_inflate(image, size, &elf, &copy));
	elf_end(elf);
	ps_elf_inflated_free(copy);
	memcpy(&ehdr, image, sizeof(ehdr));
	last = (Elf64_Shdr *)(void *)(image + ehdr.e_shoff) + ehdr.e_shnum - 1;
	if (last->sh_type != SHT_NOBITS) {
		Elf64_Shdr saved_last = *last;

		last->sh_offset = size + 64;
		ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
		*last = saved_last;
	}
	/* the stream and the first bytes of what follows it */
	if (first->sh_offset + first->sh_size + 8 <= size) {
		first->sh_size += 8;
		ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
		*first = saved_first;
	}
	second->sh_name = first->sh_name;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	*second = saved_second;
	first->sh_flags |= SHF_ALLOC;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	*first = saved_first;
	chdr->ch_addralign = 3;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	*chdr = saved_chdr;
	ck_assert(ps_elf_inflate(image, size, &elf, &copy));
	elf_end(elf);
	ps_elf_inflated_free(copy);
	free(image);
}
END_TEST

START_TEST(test_declined)
{
	char path[600];
	size_t size;
	uint8_t *image = compressed_fixture(path, sizeof(path), &size);
	Elf64_Chdr *chdr = first_chdr(image), saved = *chdr;
	struct ps_elf_inflated *copy;
	Elf *elf;

	/* a size zlib cannot make of the stream: not allocated */
	chdr->ch_size = (uint64_t)1 << 50;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	/* one byte more than the stream inflates to */
	*chdr = saved;
	chdr->ch_size++;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	/* a compression neither zlib nor zstd */
	*chdr = saved;
	chdr->ch_type = 3;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	/* a zlib stream said to be zstd */
	*chdr = saved;
	chdr->ch_type = 2;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	/* a damaged stream */
	*chdr = saved;
	((uint8_t *)(chdr + 1))[2] ^= 0xff;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	/* cut short: the section headers are gone */
	ck_assert(!ps_elf_inflate(image, size / 2, &elf, &copy));
	/* nothing compressed: nothing to do */
	ck_assert(!ps_elf_inflate((const uint8_t *)"\177ELF", 4, &elf, &copy));
	ck_assert(elf == NULL && copy == NULL);
	free(image);
}
END_TEST

/* zstd sections that do not inflate to exactly their size are left to
 * libelf too, as is a size past zstd's best ratio (declined before any
 * allocation, which this test cannot tell from a failed inflation). */
START_TEST(test_declined_zstd)
{
	char path[600];
	size_t size;
	uint8_t *image = fixture_compressed_with("zstd", path, sizeof(path), &size);
	Elf64_Chdr *chdr = first_chdr(image), saved = *chdr;
	Elf64_Shdr *first = compressed_shdr(image, 0);
	struct ps_elf_inflated *copy;
	Elf *elf;

	ck_assert_uint_eq(chdr->ch_type, 2);
	ck_assert(ps_elf_inflate(image, size, &elf, &copy));
	elf_end(elf);
	ps_elf_inflated_free(copy);
	chdr->ch_size = (first->sh_size - sizeof(*chdr) + 1) * 32768;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	*chdr = saved;
	chdr->ch_size++;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	*chdr = saved;
	chdr->ch_size--;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	/* the zstd magic number damaged */
	*chdr = saved;
	((uint8_t *)(chdr + 1))[0] ^= 0xff;
	ck_assert(!ps_elf_inflate(image, size, &elf, &copy));
	free(image);
}
END_TEST

Suite *suite_inflate(void)
{
	Suite *s = suite_create("inflate");
	TCase *tc = tcase_create("inflate");

	tcase_add_loop_test(tc, test_same_dwarf_bytes, 0, 2);
	tcase_add_loop_test(tc, test_same_answers, 0, 2);
	tcase_add_test(tc, test_declined);
	tcase_add_test(tc, test_declined_zstd);
	tcase_add_test(tc, test_location_lists_later);
	tcase_add_test(tc, test_location_lists_in_two_streams);
	tcase_add_test(tc, test_declined_as_libelf);
	suite_add_tcase(s, tc);
	return s;
}
