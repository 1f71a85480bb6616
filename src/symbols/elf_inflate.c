/* A copy of an ELF file's image with its compressed debug sections
 * inflated, for libdw to open the DWARF on (ps_elf_inflate()).
 *
 * dwarf_begin_elf() has libelf decompress every SHF_COMPRESSED debug
 * section it knows, through zlib; Debian's and Fedora's separate debug
 * files are all compressed, and libc's is 10 MB of them: about a quarter
 * of the CPU of naming a C capture. libdeflate inflates the same zlib
 * streams whole, into a buffer of the known size, in well under half the
 * time. The copy keeps every section at its index; only the inflated
 * ones move (to the end, with the section headers after them), lose
 * SHF_COMPRESSED and take the size and alignment of their Chdr, as
 * elf_compress(scn, 0, 0) makes them. libdw then finds nothing to
 * decompress and reads the same bytes.
 *
 * The location lists (.debug_loclists, .debug_loc) are inflated later,
 * when first asked for (ps_elf_inflate_later()): only the interpreter's
 * variables read them, and they are about a sixth of libc's debug bytes.
 * Their place in the copy is set aside (untouched, so it costs no memory
 * until then) and their section headers point at it from the start, since
 * libdw takes each section's data when the DWARF opens; their compressed
 * bytes are kept apart until then. They are inflated as libelf would:
 * one zlib stream or several one after the other, to exactly their size;
 * when they do not inflate so, they read as empty (all zeros: the end of
 * a list in either format), as a section libelf cannot decompress is
 * dropped by libdw.
 *
 * Sections compressed with zstd (ELFCOMPRESS_ZSTD, objcopy
 * --compress-debug-sections=zstd) are inflated here too, as binutils reads
 * them (ZSTD_decompress() of the whole section: one frame or several, to
 * exactly its size): libelf before 0.189 cannot, and would leave libdw no
 * DWARF where addr2line, perf script's, finds lines and inlined frames.
 *
 * ELF64 files in our byte order only, zlib or zstd, each section no
 * larger than its format can make of its compressed size; anything else,
 * any section that does not inflate to exactly its size, and whatever
 * libelf would read otherwise (a section beyond the file, one libelf
 * would not decompress, a name twice) is left to libelf (no copy: the
 * caller opens the DWARF on the file as before). */
#include "symbols/symbols_priv.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/cursor.h"

/* deflate's best ratio is 1032:1 (RFC 1951 stored-length limits) */
#define INFLATE_RATIO_MAX 1032
/* zstd's: a block of up to 128 KB repeating one byte takes 4 bytes (a
 * 3-byte block header and the byte) */
#define ZSTD_RATIO_MAX 32768
#define INFLATE_ALIGN 16

/* the gABI's ch_type for zstd (glibc's elf.h has it from 2.37 on) */
#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* The sections dwarf_begin_elf() decompresses when they are (libdw
 * 0.188's dwarf_scnnames; a later libdw's new ones it decompresses
 * itself): no others, so nothing is inflated that libdw would not have. */
bool ps_elf_libdw_section(const char *name)
{
	static const char *const names[] = {
		".debug_info",        ".debug_types",    ".debug_abbrev",   ".debug_aranges",
		".debug_addr",        ".debug_line",     ".debug_line_str", ".debug_frame",
		".debug_loc",         ".debug_loclists", ".debug_pubnames", ".debug_str",
		".debug_str_offsets", ".debug_macinfo",  ".debug_macro",    ".debug_ranges",
		".debug_rnglists",
	};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static bool host_little_endian(void)
{
	const uint16_t one = 1;
	uint8_t first;

	memcpy(&first, &one, 1);
	return first == 1;
}

static size_t align_up(size_t n)
{
	return (n + INFLATE_ALIGN - 1) & ~(size_t)(INFLATE_ALIGN - 1);
}

struct inflated {
	size_t index; /* section */
	uint64_t in_offset, in_size; /* the zlib stream in the file (in streams, later) */
	Elf64_Chdr chdr;
	size_t out_offset; /* in the copy */
	bool later; /* a location list: inflated when asked for */
};

/* The sections inflated later: no file has more than these two names */
#define INFLATE_LATER_MAX 2

struct ps_elf_inflated {
	uint8_t *copy;
	/* the compressed bytes of the sections inflated later, one after the
	 * other (their in_offset is into these), until they are */
	uint8_t *streams;
	struct inflated later[INFLATE_LATER_MAX];
	size_t nr_later;
	bool later_done, later_ok;
};

bool ps_elf_inflated_later(const char *name)
{
	return strcmp(name, ".debug_loclists") == 0 || strcmp(name, ".debug_loc") == 0;
}

/* The section headers of an ELF64 image in our byte order, checked
 * against its size: their count, the index of the section names. */
static bool read_headers(const uint8_t *image, size_t size, Elf64_Ehdr *ehdr,
                         const Elf64_Shdr **shdrs, size_t *nr, size_t *names)
{
	Elf64_Shdr first;

	if (size < sizeof(*ehdr) || memcmp(image, ELFMAG, SELFMAG) != 0 ||
	    image[EI_CLASS] != ELFCLASS64 ||
	    image[EI_DATA] != (host_little_endian() ? ELFDATA2LSB : ELFDATA2MSB))
		return false;
	memcpy(ehdr, image, sizeof(*ehdr));
	if (ehdr->e_shentsize != sizeof(Elf64_Shdr) || ehdr->e_shoff == 0 ||
	    ehdr->e_shoff % 8 != 0 || ehdr->e_shoff > size ||
	    size - ehdr->e_shoff < sizeof(Elf64_Shdr))
		return false;
	memcpy(&first, image + ehdr->e_shoff, sizeof(first));
	*nr = ehdr->e_shnum ? ehdr->e_shnum : first.sh_size;
	*names = ehdr->e_shstrndx == SHN_XINDEX ? first.sh_link : ehdr->e_shstrndx;
	if (*nr == 0 || *nr > (size - ehdr->e_shoff) / sizeof(Elf64_Shdr) || *names >= *nr)
		return false;
	*shdrs = (const Elf64_Shdr *)(const void *)(image + ehdr->e_shoff);
	return true;
}

static const char *section_name(const uint8_t *image, size_t size, const Elf64_Shdr *names,
                                uint32_t offset)
{
	if (names->sh_type == SHT_NOBITS || names->sh_offset > size ||
	    names->sh_size > size - names->sh_offset || offset >= names->sh_size)
		return NULL;
	if (!memchr(image + names->sh_offset + offset, 0, names->sh_size - offset))
		return NULL;
	return (const char *)image + names->sh_offset + offset;
}

/* The compressed debug sections to inflate, into *out (malloc'd); false
 * when the image is one to leave to libelf. */
static bool plan(const uint8_t *image, size_t size, const Elf64_Shdr *shdrs, size_t nr,
                 size_t names, struct inflated **out, size_t *count, size_t *total)
{
	struct inflated *list = NULL;
	size_t n = 0, end = align_up(size);
	const char *seen[32];
	size_t nr_seen = 0;

	/* section 0 holds no data (and the counts of extended numbering) */
	for (size_t i = 1; i < nr; i++) {
		Elf64_Shdr sh;
		Elf64_Chdr chdr;
		const char *name;

		memcpy(&sh, &shdrs[i], sizeof(sh));
		/* a section past the file's end must stay unreadable, as libelf
		 * finds it in the file, not turn readable in the larger copy */
		if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
			goto decline;
		if (!(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
			continue;
		name = section_name(image, size, &shdrs[names], sh.sh_name);
		if (!ps_elf_libdw_section(name))
			continue;
		/* libdw reads the first section of a name only: a name twice
		 * is left to libelf (and no file inflates more than libdw's
		 * names) */
		for (size_t k = 0; k < nr_seen; k++)
			if (strcmp(seen[k], name) == 0)
				goto decline;
		if (nr_seen == sizeof(seen) / sizeof(seen[0]))
			goto decline;
		seen[nr_seen++] = name;
		/* what elf_compress(scn, 0, 0) refuses is left to it */
		if (sh.sh_type == SHT_NULL || (sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_size < sizeof(chdr))
			goto decline;
		memcpy(&chdr, image + sh.sh_offset, sizeof(chdr));
		if ((chdr.ch_type != ELFCOMPRESS_ZLIB && chdr.ch_type != ELFCOMPRESS_ZSTD) ||
		    (chdr.ch_addralign & (chdr.ch_addralign - 1)) != 0 ||
		    chdr.ch_size / (chdr.ch_type == ELFCOMPRESS_ZLIB ? INFLATE_RATIO_MAX
		                                                     : ZSTD_RATIO_MAX) >
		            sh.sh_size - sizeof(chdr) ||
		    chdr.ch_size > SIZE_MAX / 4 - end)
			goto decline;
		if (!list && !(list = calloc(nr, sizeof(*list))))
			goto decline;
		list[n++] = (struct inflated){ .index = i,
			                       .in_offset = sh.sh_offset + sizeof(chdr),
			                       .in_size = sh.sh_size - sizeof(chdr),
			                       .chdr = chdr,
			                       .out_offset = end,
			                       .later = ps_elf_inflated_later(name) };
		end = align_up(end + chdr.ch_size);
	}
	if (n == 0 || nr > (SIZE_MAX / 4 - end) / sizeof(Elf64_Shdr))
		goto decline;
	*out = list;
	*count = n;
	*total = end + nr * sizeof(Elf64_Shdr);
	return true;
decline:
	free(list);
	return false;
}

/* Copies what libelf and libdw read of the image: the ELF and program
 * headers and the sections not inflated. The compressed bytes are not
 * copied (their pages of a large allocation are then never touched). */
static void copy_live_bytes(uint8_t *copy, const uint8_t *image, size_t size,
                            const Elf64_Ehdr *ehdr, const Elf64_Shdr *shdrs, size_t nr,
                            const struct inflated *list, size_t count)
{
	size_t next = 0;

	memcpy(copy, image, sizeof(*ehdr));
	if (ehdr->e_phoff < size && ehdr->e_phentsize == sizeof(Elf64_Phdr) &&
	    ehdr->e_phnum <= (size - ehdr->e_phoff) / sizeof(Elf64_Phdr))
		memcpy(copy + ehdr->e_phoff, image + ehdr->e_phoff,
		       ehdr->e_phnum * sizeof(Elf64_Phdr));
	for (size_t i = 0; i < nr; i++) {
		Elf64_Shdr sh;

		if (next < count && list[next].index == i) {
			next++;
			continue;
		}
		memcpy(&sh, &shdrs[i], sizeof(sh));
		if (sh.sh_type != SHT_NOBITS && sh.sh_offset <= size &&
		    sh.sh_size <= size - sh.sh_offset)
			memcpy(copy + sh.sh_offset, image + sh.sh_offset, sh.sh_size);
	}
}

/* A zstd section as binutils' bfd reads it: every frame of it, to
 * exactly its size. */
static bool inflate_zstd(const uint8_t *from, uint8_t *copy, const struct inflated *s)
{
	size_t got = ZSTD_decompress(copy + s->out_offset, s->chdr.ch_size, from + s->in_offset,
	                             s->in_size);

	return !ZSTD_isError(got) && got == s->chdr.ch_size;
}

/* Inflates one section into its place in the copy: the whole zlib stream
 * and nothing after it, to exactly its size (a stream libelf reads
 * otherwise leaves the file to libelf). */
static bool inflate_one(struct libdeflate_decompressor *d, const uint8_t *from, uint8_t *copy,
                        const struct inflated *s)
{
	size_t used = 0, got = 0;

	if (s->chdr.ch_type == ELFCOMPRESS_ZSTD)
		return inflate_zstd(from, copy, s);
	return libdeflate_zlib_decompress_ex(d, from + s->in_offset, s->in_size,
	                                     copy + s->out_offset, s->chdr.ch_size, &used,
	                                     &got) == LIBDEFLATE_SUCCESS &&
	       used == s->in_size && got == s->chdr.ch_size;
}

/* The same for a section inflated later, as libelf's
 * __libelf_decompress() reads it: whole zlib streams one after the other
 * up to the end of the input, filling exactly its size (zstd: as up
 * front). */
static bool inflate_streams(struct libdeflate_decompressor *d, const uint8_t *from, uint8_t *copy,
                            const struct inflated *s)
{
	size_t in = 0, out = 0;

	if (s->chdr.ch_type == ELFCOMPRESS_ZSTD)
		return inflate_zstd(from, copy, s);
	while (in < s->in_size) {
		size_t used = 0, got = 0;

		if (libdeflate_zlib_decompress_ex(d, from + s->in_offset + in, s->in_size - in,
		                                  copy + s->out_offset + out, s->chdr.ch_size - out,
		                                  &used, &got) != LIBDEFLATE_SUCCESS ||
		    used == 0)
			return false;
		in += used;
		out += got;
	}
	return out == s->chdr.ch_size;
}

/* The sections inflated later, with their compressed bytes copied apart
 * (the file's image may be gone when they are inflated). */
static bool keep_streams(struct ps_elf_inflated *inflated, const uint8_t *image,
                         const struct inflated *list, size_t count)
{
	size_t total = 0;

	for (size_t i = 0; i < count; i++)
		if (list[i].later)
			total += list[i].in_size;
	if (total == 0)
		return true;
	inflated->streams = malloc(total);
	if (!inflated->streams)
		return false;
	total = 0;
	for (size_t i = 0; i < count; i++) {
		if (!list[i].later)
			continue;
		if (inflated->nr_later == INFLATE_LATER_MAX)
			return false;
		memcpy(inflated->streams + total, image + list[i].in_offset, list[i].in_size);
		inflated->later[inflated->nr_later] = list[i];
		inflated->later[inflated->nr_later++].in_offset = total;
		total += list[i].in_size;
	}
	return true;
}

bool ps_elf_inflate(const uint8_t *image, size_t size, Elf **out,
                    struct ps_elf_inflated **inflated_out)
{
	struct libdeflate_decompressor *d = NULL;
	const Elf64_Shdr *shdrs;
	struct inflated *list = NULL;
	struct ps_elf_inflated *inflated = NULL;
	size_t nr, names, count = 0, total = 0, table;
	Elf64_Ehdr ehdr;
	Elf64_Shdr *new_shdrs;
	uint8_t *copy = NULL;
	Elf *elf;

	*out = NULL;
	*inflated_out = NULL;
	if (!read_headers(image, size, &ehdr, &shdrs, &nr, &names) ||
	    !plan(image, size, shdrs, nr, names, &list, &count, &total))
		return false;
	/* zeroed where nothing is copied: calloc leaves a large block's pages
	 * untouched */
	copy = calloc(1, total);
	inflated = calloc(1, sizeof(*inflated));
	d = libdeflate_alloc_decompressor();
	if (!copy || !inflated || !d)
		goto fail;
	copy_live_bytes(copy, image, size, &ehdr, shdrs, nr, list, count);
	table = total - nr * sizeof(Elf64_Shdr);
	new_shdrs = (Elf64_Shdr *)(void *)(copy + table);
	memcpy(new_shdrs, shdrs, nr * sizeof(Elf64_Shdr));
	if (!keep_streams(inflated, image, list, count))
		goto fail;
	for (size_t i = 0; i < count; i++) {
		const struct inflated *s = &list[i];

		if (!s->later && !inflate_one(d, image, copy, s)) {
			goto fail;
		}
		new_shdrs[s->index].sh_offset = s->out_offset;
		new_shdrs[s->index].sh_size = s->chdr.ch_size;
		new_shdrs[s->index].sh_addralign = s->chdr.ch_addralign;
		new_shdrs[s->index].sh_flags &= ~(uint64_t)SHF_COMPRESSED;
	}
	ehdr.e_shoff = table;
	memcpy(copy, &ehdr, sizeof(ehdr));
	ps_elf_library_init();
	elf = elf_memory((char *)copy, total);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		goto fail;
	}
	libdeflate_free_decompressor(d);
	free(list);
	inflated->copy = copy;
	*out = elf;
	*inflated_out = inflated;
	return true;
fail:
	libdeflate_free_decompressor(d);
	free(list);
	if (inflated)
		free(inflated->streams);
	free(inflated);
	free(copy);
	return false;
}

bool ps_elf_inflate_later(struct ps_elf_inflated *inflated)
{
	struct libdeflate_decompressor *d;

	if (!inflated || inflated->later_done)
		return !inflated || inflated->later_ok;
	if (inflated->nr_later) {
		/* out of memory is not an answer to keep */
		d = libdeflate_alloc_decompressor();
		if (!d)
			return false;
		inflated->later_ok = true;
		for (size_t i = 0; i < inflated->nr_later; i++) {
			const struct inflated *s = &inflated->later[i];

			if (!inflate_streams(d, inflated->streams, inflated->copy, s)) {
				/* half an inflated section is not left for libdw */
				memset(inflated->copy + s->out_offset, 0, s->chdr.ch_size);
				inflated->later_ok = false;
			}
		}
		libdeflate_free_decompressor(d);
	} else {
		inflated->later_ok = true;
	}
	free(inflated->streams);
	inflated->streams = NULL;
	inflated->later_done = true;
	return inflated->later_ok;
}

void ps_elf_inflated_free(struct ps_elf_inflated *inflated)
{
	if (!inflated)
		return;
	free(inflated->streams);
	free(inflated->copy);
	free(inflated);
}
