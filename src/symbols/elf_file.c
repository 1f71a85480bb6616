/* One ELF file: headers read through libelf and checked against the
 * file's size, section contents and the bytes at an address read through
 * bounds-checked cursors, the GNU build-id note, .gnu_debuglink, and lazily
 * its DWARF. The library's one ELF reader: the Python side reads CPython's
 * version and trampoline template through the same handle (symbols.h). */
#include "symbols/symbols_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/message.h"

#define NT_GNU_BUILD_ID_TYPE 3

static bool host_is_little_endian(void)
{
	const uint16_t one = 1;
	uint8_t first;

	memcpy(&first, &one, 1);
	return first == 1;
}

static bool range_in_file(const struct ps_elf *elf, uint64_t offset, uint64_t size)
{
	return offset <= elf->image_size && size <= elf->image_size - offset;
}

/* A NUL-terminated string at offset of a section, or NULL. */
static const char *section_string(const struct ps_elf *elf, size_t index, uint64_t offset)
{
	const struct ps_elf_section *sec;
	const char *base;

	if (index >= elf->nr_sections)
		return NULL;
	sec = &elf->sections[index];
	if (!sec->in_file || offset >= sec->size)
		return NULL;
	base = (const char *)elf->image + sec->offset;
	if (!memchr(base + offset, 0, sec->size - offset))
		return NULL;
	return base + offset;
}

static int read_sections(struct ps_elf *elf, char *err, size_t errsz)
{
	size_t count = 0, names_index = 0;
	uint32_t *name_offsets;
	GElf_Ehdr ehdr;

	if (!gelf_getehdr(elf->elf, &ehdr))
		return ps_fail(err, errsz, -EINVAL, "%s: cannot read the ELF header", elf->path);
	/* libelf may quietly see no sections when their headers are cut off */
	if (ehdr.e_shoff != 0 && (ehdr.e_shoff > elf->image_size ||
	                          (uint64_t)(ehdr.e_shnum ? ehdr.e_shnum : 1) * ehdr.e_shentsize >
	                                  elf->image_size - ehdr.e_shoff))
		return ps_fail(err, errsz, -EINVAL,
		               "%s: section headers extend past the end of the file (truncated?)",
		               elf->path);
	if (elf_getshdrnum(elf->elf, &count) != 0)
		return ps_fail(err, errsz, -EINVAL, "%s: cannot read the section count", elf->path);
	if (count == 0)
		return 0;
	if (ehdr.e_shoff > elf->image_size ||
	    (uint64_t)count * ehdr.e_shentsize > elf->image_size - ehdr.e_shoff)
		return ps_fail(err, errsz, -EINVAL,
		               "%s: section headers extend past the end of the file (truncated?)",
		               elf->path);
	if (elf_getshdrstrndx(elf->elf, &names_index) != 0)
		names_index = SIZE_MAX;
	elf->sections = calloc(count, sizeof(*elf->sections));
	name_offsets = calloc(count, sizeof(*name_offsets));
	if (!elf->sections || !name_offsets) {
		free(name_offsets);
		return -ENOMEM;
	}
	elf->nr_sections = count;
	for (size_t i = 0; i < count; i++) {
		struct ps_elf_section *sec = &elf->sections[i];
		GElf_Shdr shdr;
		Elf_Scn *scn = elf_getscn(elf->elf, i);

		sec->name = "";
		if (!scn || !gelf_getshdr(scn, &shdr)) {
			free(name_offsets);
			return ps_fail(err, errsz, -EINVAL, "%s: cannot read section header %zu",
			               elf->path, i);
		}
		name_offsets[i] = shdr.sh_name;
		sec->type = shdr.sh_type;
		sec->link = shdr.sh_link;
		sec->info = shdr.sh_info;
		sec->flags = shdr.sh_flags;
		sec->addr = shdr.sh_addr;
		sec->offset = shdr.sh_offset;
		sec->size = shdr.sh_size;
		sec->entsize = shdr.sh_entsize;
		sec->in_file = shdr.sh_type != SHT_NOBITS && shdr.sh_type != SHT_NULL &&
		               range_in_file(elf, shdr.sh_offset, shdr.sh_size);
	}
	for (size_t i = 0; i < count; i++) {
		const char *name = section_string(elf, names_index, name_offsets[i]);

		elf->sections[i].name = name ? name : "";
	}
	free(name_offsets);
	return 0;
}

static int read_segments(struct ps_elf *elf)
{
	size_t count = 0;

	if (elf_getphdrnum(elf->elf, &count) != 0 || count == 0)
		return 0;
	elf->segments = calloc(count, sizeof(*elf->segments));
	if (!elf->segments)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf->elf, i, &phdr))
			break;
		elf->segments[elf->nr_segments++] = (struct ps_elf_segment){
			.type = phdr.p_type,
			.flags = phdr.p_flags,
			.vaddr = phdr.p_vaddr,
			.offset = phdr.p_offset,
			.filesz = phdr.p_filesz,
			.memsz = phdr.p_memsz,
			.align = phdr.p_align,
		};
	}
	return 0;
}

/* The GNU build-id note of the first of perf's note sections that exists
 * (elf_read_build_id: .note.gnu.build-id, .notes, .note). */
static void read_build_id(struct ps_elf *elf)
{
	static const char *const names[] = { ".note.gnu.build-id", ".notes", ".note" };
	struct ps_cursor c;
	int index = -1;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && index < 0; i++)
		index = ps_elf_section_by_name(elf, names[i]);
	if (index < 0 || !ps_elf_section_cursor(elf, (size_t)index, &c))
		return;
	while (ps_cursor_left(&c) >= 12) {
		uint32_t namesz = ps_cursor_u32(&c);
		uint32_t descsz = ps_cursor_u32(&c);
		uint32_t type = ps_cursor_u32(&c);
		size_t name_padded = ((size_t)namesz + 3) & ~(size_t)3;
		size_t desc_padded = ((size_t)descsz + 3) & ~(size_t)3;
		const uint8_t *name = ps_cursor_take(&c, name_padded);
		const uint8_t *desc = ps_cursor_take(&c, desc_padded);

		if (!name || !desc)
			return;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 && memcmp(name, "GNU", 4) == 0) {
			size_t n = descsz < PS_BUILD_ID_MAX ? descsz : PS_BUILD_ID_MAX;

			memcpy(elf->build_id, desc, n);
			elf->build_id_size = n;
			return;
		}
	}
}

static int find_symbol_table(const struct ps_elf *elf, const char *name, uint32_t type)
{
	int index = ps_elf_section_by_name(elf, name);

	if (index < 0 || elf->sections[index].type != type)
		return -1;
	return index;
}

/* Whether the image is libelf's mapping of the file, not a copy it read
 * into memory (it does when mapping fails): only a file's pages can be
 * handed back and read again. /proc/self/map_files has an entry for a
 * range mapped from a file only; anything else (no /proc, a range that is
 * not one whole mapping) keeps the pages. */
static bool image_is_file_mapping(const struct ps_elf *elf)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)elf->image, end;
	char path[64];
	struct stat st;

	if (page <= 0 || start % (uintptr_t)page != 0 || elf->image_size == 0 ||
	    elf->image_size > UINTPTR_MAX - start - (uintptr_t)page)
		return false;
	end = start + ((elf->image_size + (uintptr_t)page - 1) & ~((uintptr_t)page - 1));
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)start,
	         (unsigned long)end);
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

void ps_elf_release_pages(const struct ps_elf *elf)
{
	long page = sysconf(_SC_PAGESIZE);

	/* The mapping is read-only: its pages are the file's, read again
	 * from the page cache when touched next. */
	if (elf && elf->image_mapped && page > 0)
		(void)madvise((void *)(uintptr_t)elf->image,
		              (elf->image_size + (size_t)page - 1) & ~((size_t)page - 1),
		              MADV_DONTNEED);
}

static void library_init(void)
{
	elf_version(EV_CURRENT);
}

void ps_elf_library_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, library_init);
}

bool ps_elf_file_id_of(int fd, struct ps_elf_file_id *out)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	*out = (struct ps_elf_file_id){
		.dev = st.st_dev,
		.ino = st.st_ino,
		.size = (uint64_t)st.st_size,
		.mtime_sec = st.st_mtim.tv_sec,
		.mtime_nsec = st.st_mtim.tv_nsec,
	};
	return true;
}

bool ps_elf_file_id_equal(const struct ps_elf_file_id *a, const struct ps_elf_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

int ps_elf_open(const char *path, struct ps_elf **out, char *err, size_t errsz)
{
	return ps_elf_open_file(path, path, out, err, errsz);
}

int ps_elf_open_file(const char *path, const char *file, struct ps_elf **out, char *err,
                     size_t errsz)
{
	struct ps_elf *elf;
	size_t raw_size = 0;
	const char *raw;
	int rc;

	*out = NULL;
	ps_elf_library_init();
	elf = calloc(1, sizeof(*elf));
	if (!elf)
		return -ENOMEM;
	elf->fd = -1;
	elf->symtab_index = elf->dynsym_index = -1;
	elf->path = strdup(path);
	elf->file = strdup(file);
	if (!elf->path || !elf->file) {
		rc = -ENOMEM;
		goto out_fail;
	}
	elf->fd = open(file, O_RDONLY | O_CLOEXEC);
	if (elf->fd < 0) {
		rc = ps_fail(err, errsz, -errno, "%s: %s", path, strerror(errno));
		goto out_fail;
	}
	if (!ps_elf_file_id_of(elf->fd, &elf->id)) {
		rc = ps_fail(err, errsz, -EINVAL, "%s: not a regular file", path);
		goto out_fail;
	}
	elf->elf = elf_begin(elf->fd, ELF_C_READ_MMAP, NULL);
	if (!elf->elf || elf_kind(elf->elf) != ELF_K_ELF) {
		rc = ps_fail(err, errsz, -ENOEXEC, "%s: not an ELF file", path);
		goto out_fail;
	}
	/* Everything is mapped (or read) now: give the descriptor back, a
	 * system-wide capture can have many hundreds of DSOs open. */
	if (elf_cntl(elf->elf, ELF_C_FDREAD) == 0 && elf_cntl(elf->elf, ELF_C_FDDONE) == 0) {
		close(elf->fd);
		elf->fd = -1;
	}
	raw = elf_rawfile(elf->elf, &raw_size);
	if (!raw || raw_size < EI_NIDENT) {
		rc = ps_fail(err, errsz, -EINVAL, "%s: cannot read the file", path);
		goto out_fail;
	}
	elf->image = (const uint8_t *)raw;
	elf->image_size = raw_size;
	elf->image_mapped = image_is_file_mapping(elf);
	elf->is64 = gelf_getclass(elf->elf) == ELFCLASS64;
	elf->swap = (raw[EI_DATA] == ELFDATA2LSB) != host_is_little_endian();
	if (raw[EI_DATA] != ELFDATA2LSB && raw[EI_DATA] != ELFDATA2MSB) {
		rc = ps_fail(err, errsz, -EINVAL, "%s: unknown ELF byte order", path);
		goto out_fail;
	}
	rc = read_sections(elf, err, errsz);
	if (rc < 0)
		goto out_fail;
	rc = read_segments(elf);
	if (rc < 0)
		goto out_fail;
	{
		GElf_Ehdr ehdr;

		gelf_getehdr(elf->elf, &ehdr);
		elf->type = ehdr.e_type;
		elf->machine = ehdr.e_machine;
	}
	read_build_id(elf);
	elf->symtab_index = find_symbol_table(elf, ".symtab", SHT_SYMTAB);
	elf->dynsym_index = find_symbol_table(elf, ".dynsym", SHT_DYNSYM);
	*out = elf;
	return 0;

out_fail:
	ps_elf_close(elf);
	return rc;
}

void ps_elf_close(struct ps_elf *elf)
{
	if (!elf)
		return;
	if (elf->dwarf)
		dwarf_end(elf->dwarf);
	if (elf->dwarf_elf)
		elf_end(elf->dwarf_elf);
	ps_elf_inflated_free(elf->dwarf_copy);
	if (elf->elf)
		elf_end(elf->elf);
	if (elf->fd >= 0)
		close(elf->fd);
	free(elf->sections);
	free(elf->segments);
	free(elf->path);
	free(elf->file);
	free(elf);
}

int ps_elf_section_by_name(const struct ps_elf *elf, const char *name)
{
	for (size_t i = 1; i < elf->nr_sections; i++)
		if (strcmp(elf->sections[i].name, name) == 0)
			return (int)i;
	return -1;
}

bool ps_elf_section_cursor(const struct ps_elf *elf, size_t index, struct ps_cursor *out)
{
	const struct ps_elf_section *sec;

	if (index >= elf->nr_sections)
		return false;
	sec = &elf->sections[index];
	if (!sec->in_file)
		return false;
	*out = ps_cursor_make(elf->image + sec->offset, sec->size, elf->swap);
	return true;
}

/* The handle DWARF is read through: the helper's, whose debug sections
 * it decompressed (ahead.c), once taken; else one on a copy with them
 * inflated (elf_inflate.c); else the file's own. */
static Elf *dwarf_handle(struct ps_elf *elf)
{
	if (elf->ahead) {
		elf->dwarf_elf = ps_ahead_take_elf(elf->ahead, &elf->dwarf_copy);
		elf->ahead = NULL;
		elf->inflate_tried = elf->dwarf_elf != NULL;
	}
	/* compressed debug sections inflated apart, faster than libelf */
	if (!elf->inflate_tried) {
		elf->inflate_tried = true;
		ps_elf_inflate(elf->image, elf->image_size, &elf->dwarf_elf, &elf->dwarf_copy);
	}
	return elf->dwarf_elf ? elf->dwarf_elf : elf->elf;
}

bool ps_elf_section_contents(struct ps_elf *elf, const char *name, struct ps_cursor *out)
{
	int index = ps_elf_section_by_name(elf, name);
	Elf_Scn *scn;
	GElf_Shdr shdr;
	Elf_Data *data;

	if (index < 0 || !elf->sections[index].in_file)
		return false;
	scn = elf_getscn(dwarf_handle(elf), (size_t)index);
	if (ps_elf_inflated_later(name) && !ps_elf_inflate_later(elf->dwarf_copy))
		return false;
	if (!scn || !gelf_getshdr(scn, &shdr))
		return false;
	/* libdw may have decompressed it already (the flag is gone then) */
	if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return false;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return false;
	*out = ps_cursor_make(data->d_buf, data->d_size, elf->swap);
	return true;
}

Dwarf *ps_elf_dwarf(struct ps_elf *elf)
{
	if (!elf->dwarf_tried) {
		elf->dwarf_tried = true;
		elf->dwarf = dwarf_begin_elf(dwarf_handle(elf), DWARF_C_READ, NULL);
	}
	return elf->dwarf;
}

Dwarf *ps_elf_dwarf_locations(struct ps_elf *elf)
{
	Dwarf *dwarf = ps_elf_dwarf(elf);

	/* lists that do not inflate read as empty */
	if (dwarf)
		ps_elf_inflate_later(elf->dwarf_copy);
	return dwarf;
}

bool ps_elf_debuglink(const struct ps_elf *elf, char *buf, size_t size)
{
	int index = ps_elf_section_by_name(elf, ".gnu_debuglink");
	struct ps_cursor c;
	const char *name;

	if (index < 0 || size == 0 || !ps_elf_section_cursor(elf, (size_t)index, &c))
		return false;
	name = ps_cursor_string(&c, ps_cursor_left(&c), false);
	if (!name || !*name || strlen(name) >= size)
		return false;
	memcpy(buf, name, strlen(name) + 1);
	return true;
}

bool ps_elf_symtab_open(const struct ps_elf *elf, int index, struct ps_elf_symtab *out)
{
	const struct ps_elf_section *sec;
	struct ps_cursor strings;

	memset(out, 0, sizeof(*out));
	if (index < 0 || (size_t)index >= elf->nr_sections)
		return false;
	sec = &elf->sections[index];
	if (!ps_elf_section_cursor(elf, (size_t)index, &out->syms))
		return false;
	if (!ps_elf_section_cursor(elf, sec->link, &strings))
		return false;
	out->elf = elf;
	out->strings = (const char *)strings.p;
	out->strings_size = ps_cursor_left(&strings);
	out->stride = elf->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	out->count = sec->size / (sec->entsize ? sec->entsize : out->stride);
	return true;
}

bool ps_elf_symtab_get(const struct ps_elf_symtab *tab, size_t i, struct ps_elf_sym *out)
{
	struct ps_cursor c = tab->syms;
	uint32_t name_offset;
	uint8_t info, other;

	if (i >= tab->count || i > SIZE_MAX / tab->stride || !ps_cursor_skip(&c, i * tab->stride))
		return false;
	name_offset = ps_cursor_u32(&c);
	if (tab->elf->is64) {
		info = ps_cursor_u8(&c);
		other = ps_cursor_u8(&c);
		out->shndx = ps_cursor_u16(&c);
		out->value = ps_cursor_u64(&c);
		out->size = ps_cursor_u64(&c);
	} else {
		out->value = ps_cursor_u32(&c);
		out->size = ps_cursor_u32(&c);
		info = ps_cursor_u8(&c);
		other = ps_cursor_u8(&c);
		out->shndx = ps_cursor_u16(&c);
	}
	if (!ps_cursor_ok(&c) || name_offset >= tab->strings_size ||
	    !memchr(tab->strings + name_offset, 0, tab->strings_size - name_offset))
		return false;
	out->name = tab->strings + name_offset;
	out->binding = GELF_ST_BIND(info);
	out->type = GELF_ST_TYPE(info);
	out->visibility = GELF_ST_VISIBILITY(other);
	return true;
}

/* ---- the interface other modules read files through (symbols.h) ---- */

const char *ps_elf_path(const struct ps_elf *elf)
{
	return elf->path;
}

const char *ps_elf_file(const struct ps_elf *elf)
{
	return elf->file;
}

uint16_t ps_elf_machine(const struct ps_elf *elf)
{
	return elf->machine;
}

bool ps_elf_is64(const struct ps_elf *elf)
{
	return elf->is64;
}

size_t ps_elf_nr_sections(const struct ps_elf *elf)
{
	return elf->nr_sections;
}

const struct ps_elf_section *ps_elf_section(const struct ps_elf *elf, size_t index)
{
	return index < elf->nr_sections ? &elf->sections[index] : NULL;
}

int ps_elf_symbol_table(const struct ps_elf *elf, bool dynamic)
{
	return dynamic ? elf->dynsym_index : elf->symtab_index;
}

/* A cursor over the bytes at base + delta, as many as the headers say are
 * there (avail) and the file holds; false when fewer than size are. */
static bool file_cursor(const struct ps_elf *elf, uint64_t base, uint64_t delta, uint64_t avail,
                        uint64_t size, struct ps_cursor *out)
{
	struct ps_cursor image = ps_cursor_make(elf->image, elf->image_size, elf->swap);
	uint64_t offset, left;

	if (base > elf->image_size || delta > elf->image_size - base)
		return false;
	offset = base + delta;
	left = elf->image_size - offset;
	if (avail > left)
		avail = left;
	if (size > avail)
		return false;
	return ps_cursor_peek_cursor(&image, (size_t)offset, (size_t)avail, out);
}

uint64_t ps_elf_map_base(const struct ps_elf *elf, uint64_t start, uint64_t pgoff, bool exec)
{
	const struct ps_elf_segment *first = NULL, *held = NULL;
	uint64_t held_distance = 0;

	for (size_t i = 0; i < elf->nr_segments; i++) {
		const struct ps_elf_segment *seg = &elf->segments[i];

		if (seg->type != PT_LOAD)
			continue;
		if (!first)
			first = seg;
		/* the loader maps a segment from its offset's page (up to 64
		 * KiB pages); a part mprotect()ed apart starts inside it */
		uint64_t distance;
		if (seg->offset >= pgoff && seg->offset - pgoff < 0x10000)
			distance = seg->offset - pgoff;
		else if (pgoff > seg->offset && pgoff - seg->offset < seg->filesz)
			distance = 0;
		else
			continue;
		/* segments can share a page: the one of the mapping's kind,
		 * then the nearest */
		bool kind = ((seg->flags & PF_X) != 0) == exec;
		bool held_kind = held && ((held->flags & PF_X) != 0) == exec;
		if (!held || (kind && !held_kind) ||
		    (kind == held_kind && distance < held_distance)) {
			held = seg;
			held_distance = distance;
		}
	}
	if (!held || held == first)
		return start - pgoff;
	return start - pgoff - ((held->vaddr - held->offset) - (first->vaddr - first->offset));
}

void ps_elf_first_load(const struct ps_elf *elf, uint64_t *vaddr, uint64_t *align)
{
	*vaddr = *align = 0;
	for (size_t i = 0; i < elf->nr_segments; i++) {
		if (elf->segments[i].type == PT_LOAD) {
			*vaddr = elf->segments[i].vaddr;
			*align = elf->segments[i].align;
			return;
		}
	}
}

bool ps_elf_vaddr_cursor(const struct ps_elf *elf, size_t section, uint64_t vaddr, uint64_t size,
                         struct ps_cursor *out)
{
	if (section < elf->nr_sections) {
		const struct ps_elf_section *sec = &elf->sections[section];

		/* the section decides when it holds the range, in the file or
		 * not: its bytes are the symbol's */
		if (sec->type != SHT_NOBITS && vaddr >= sec->addr &&
		    vaddr - sec->addr <= sec->size && size <= sec->size - (vaddr - sec->addr))
			return file_cursor(elf, sec->offset, vaddr - sec->addr,
			                   sec->size - (vaddr - sec->addr), size, out);
	}
	for (size_t i = 0; i < elf->nr_segments; i++) {
		const struct ps_elf_segment *seg = &elf->segments[i];

		if (seg->type != PT_LOAD)
			continue;
		if (vaddr >= seg->vaddr && vaddr - seg->vaddr <= seg->filesz &&
		    size <= seg->filesz - (vaddr - seg->vaddr))
			return file_cursor(elf, seg->offset, vaddr - seg->vaddr,
			                   seg->filesz - (vaddr - seg->vaddr), size, out);
	}
	return false;
}
