/* The unwinder's Dwfl: creating and attaching it once per process, reporting
 * a mapping's ELF file the first time a frame needs it, and noticing when
 * the reported modules no longer agree with the caller's mappings.
 */
#include "unwind/unwind_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/message.h"

/* Bound on the modules one Dwfl accumulates; past it the Dwfl is rebuilt
 * with only what later samples need. */
#define PS_UNWIND_MAX_MODULES 4096

void ps_unwind_log(struct ps_unwinder *u, enum ps_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ps_vlog(u->log, u->log_ctx, level, NULL, fmt, ap);
	va_end(ap);
}

/* Dwfl_Callbacks.find_elf: never needed, dwfl_report_elf() opens the file. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                    char **file_name, Elf **elfp)
{
	return -1;
}

/* Whether the file at path may hold .debug_frame CFI: a .debug_frame
 * (or .zdebug_frame) section with contents, or a file whose sections
 * cannot be told. */
static bool may_have_debug_frame(const char *path)
{
	static const char *const names[] = { ".debug_frame", ".zdebug_frame" };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool found = true;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0)
		return true;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		found = false;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !found; i++) {
			GElf_Shdr shdr;

			found = ps_unwind_elf_section(elf, names[i], &shdr) &&
			        shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/* Dwfl_Callbacks.find_debuginfo: only the file the caller located (the
 * module's userdata), never a search (libdwfl's standard one may ask
 * debuginfod servers). libdwfl opens the returned name itself.
 *
 * The unwinder asks libdwfl for a module's DWARF only for .debug_frame
 * CFI (a PC .eh_frame does not cover: a sample just after clone3's
 * syscall, ld.so's _start). Where neither the separate file nor the
 * module's own has that section, the answer is "no CFI" either way, and
 * handing libdwfl the separate file would only make it decompress all its
 * debug sections (libc's: 10 MB, 0.1 s, in every process's Dwfl). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file,
                          GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct ps_unwind_debug_file *debug = *userdata;

	if (debug && (!file_name || strcmp(debug->path, file_name) != 0) &&
	    (may_have_debug_frame(debug->path) || !file_name || may_have_debug_frame(file_name))) {
		*debuginfo_file_name = strdup(debug->path);
		debug->unwinder->stats.debug_files++;
	}
	return -1;
}

static void modules_clear(struct ps_unwinder *u)
{
	for (size_t i = 0; i < u->nr_modules; i++) {
		free(u->modules[i].path);
		free(u->modules[i].debug);
	}
	u->nr_modules = 0;
	u->last_module = 0;
	u->modules_epoch++;
}

void ps_unwind_dwfl_destroy(struct ps_unwinder *u)
{
	if (u->dwfl)
		dwfl_end(u->dwfl);
	u->dwfl = NULL;
	ps_unwind_jitted_destroy(u);
	/* the rules are keyed by the Dwfl's modules */
	ps_unwind_rows_clear(u);
	modules_clear(u);
	u->stale = false;
}

int ps_unwind_dwfl_create(struct ps_unwinder *u, uint32_t pid)
{
	if (!u->arch_elf) {
		/* dwfl_attach_state() takes the architecture from an Elf;
		 * a bare ELF header is enough, and it is ours to keep alive
		 * as long as the Dwfl. */
		Elf64_Ehdr ehdr = { 0 };

		memcpy(ehdr.e_ident, ELFMAG, SELFMAG);
		ehdr.e_ident[EI_CLASS] = ELFCLASS64;
		ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
		ehdr.e_ident[EI_VERSION] = EV_CURRENT;
		ehdr.e_type = ET_EXEC;
		ehdr.e_machine = EM_X86_64;
		ehdr.e_version = EV_CURRENT;
		ehdr.e_ehsize = sizeof(ehdr);
		_Static_assert(sizeof(ehdr) == sizeof(u->arch_image), "ELF header size");
		memcpy(u->arch_image, &ehdr, sizeof(ehdr));
		elf_version(EV_CURRENT);
		u->arch_elf = elf_memory((char *)u->arch_image, sizeof(u->arch_image));
		if (!u->arch_elf) {
			snprintf(u->errmsg, sizeof(u->errmsg), "elf_memory: %s", elf_errmsg(-1));
			return -ENOMEM;
		}
	}

	u->dwfl_callbacks = (Dwfl_Callbacks){
		.find_elf = find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	u->dwfl = dwfl_begin(&u->dwfl_callbacks);
	if (!u->dwfl) {
		snprintf(u->errmsg, sizeof(u->errmsg), "dwfl_begin: %s", dwfl_errmsg(-1));
		return -ENOMEM;
	}
	if (!dwfl_attach_state(u->dwfl, u->arch_elf, (pid_t)pid, &ps_unwind_thread_callbacks, u)) {
		snprintf(u->errmsg, sizeof(u->errmsg), "dwfl_attach_state: %s", dwfl_errmsg(-1));
		dwfl_end(u->dwfl);
		u->dwfl = NULL;
		return -ENOMEM;
	}
	u->stats.dwfl_builds++;
	u->generation++;
	return 0;
}

static bool module_contains(const struct ps_unwind_module *m, uint64_t addr)
{
	return addr >= m->low && addr < m->high;
}

static struct ps_unwind_module *module_find(struct ps_unwinder *u, uint64_t addr)
{
	if (u->last_module < u->nr_modules && module_contains(&u->modules[u->last_module], addr))
		return &u->modules[u->last_module];
	for (size_t i = 0; i < u->nr_modules; i++) {
		if (module_contains(&u->modules[i], addr)) {
			u->last_module = i;
			return &u->modules[i];
		}
	}
	return NULL;
}

/* Whether libdwfl's module for an address of m's range is m's own for
 * sure: no other module reported overlaps it (libdwfl looks addresses up
 * in its modules' ranges). Checked again after each report. */
static bool module_alone(struct ps_unwinder *u, struct ps_unwind_module *m)
{
	if (m->alone_epoch == u->modules_epoch)
		return m->alone;
	m->alone = true;
	for (size_t i = 0; i < u->nr_modules && m->alone; i++) {
		const struct ps_unwind_module *other = &u->modules[i];

		if (other != m && other->mod && other->mod != m->mod && other->low < m->high &&
		    m->low < other->high)
			m->alone = false;
	}
	m->alone_epoch = u->modules_epoch;
	return m->alone;
}

static bool module_is(const struct ps_unwind_module *m, uint64_t base, const char *path)
{
	return m->base == base && strcmp(m->path, path) == 0;
}

static struct ps_unwind_module *module_add(struct ps_unwinder *u, uint64_t base,
                                           const struct ps_unwind_map *map)
{
	if (!ps_array_reserve((void **)&u->modules, &u->cap_modules, u->nr_modules + 1,
	                      sizeof(*u->modules), 16))
		return NULL;
	struct ps_unwind_module *m = &u->modules[u->nr_modules];
	*m = (struct ps_unwind_module){ .base = base, .low = map->start, .high = map->end };
	m->path = strdup(map->path);
	if (map->debug_path) {
		size_t len = strlen(map->debug_path);

		m->debug = malloc(sizeof(*m->debug) + len + 1);
		if (m->debug) {
			m->debug->unwinder = u;
			memcpy(m->debug->path, map->debug_path, len + 1);
		}
	}
	if (!m->path || (map->debug_path && !m->debug)) {
		free(m->path);
		free(m->debug);
		return NULL;
	}
	u->last_module = u->nr_modules++;
	return m;
}

static const char *module_name(const struct ps_unwind_map *map)
{
	const char *name = map->name ? map->name : map->path;
	const char *slash = strrchr(name, '/');

	return slash && slash[1] ? slash + 1 : name;
}

/* The base of an ET_EXEC file's own mappings (start - pgoff), from its
 * first PT_LOAD: libdwfl places such a file at its own addresses
 * whatever base it is given. false for any other file. */
static bool exec_base(Dwfl_Module *mod, uint64_t *base)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr ehdr;
	size_t count = 0;

	if (!elf || !gelf_getehdr(elf, &ehdr) || ehdr.e_type != ET_EXEC ||
	    elf_getphdrnum(elf, &count) != 0)
		return false;
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;

		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_LOAD) {
			*base = (phdr.p_vaddr - phdr.p_offset) &
			        ~(uint64_t)(PS_UNWIND_PAGE_SIZE - 1);
			return true;
		}
	}
	return false;
}

/* The module reported for the ET_EXEC file at path, or NULL. */
static Dwfl_Module *exec_module(const struct ps_unwinder *u, const char *path)
{
	uint64_t own;

	for (size_t i = 0; i < u->nr_modules; i++)
		if (u->modules[i].mod && strcmp(u->modules[i].path, path) == 0 &&
		    exec_base(u->modules[i].mod, &own))
			return u->modules[i].mod;
	return NULL;
}

/* A mapping of an ET_EXEC file away from its own addresses (Node.js maps
 * part of its binary near its JIT code): no module of its own, which
 * libdwfl would place over the file's module (and, reported twice under
 * one name and range, drop that one); file_mod holds the file's CFI. */
static enum ps_unwind_lookup exec_elsewhere(struct ps_unwinder *u, uint64_t base,
                                            const struct ps_unwind_map *map, Dwfl_Module *file_mod)
{
	struct ps_unwind_module *m = module_add(u, base, map);

	if (!m) {
		snprintf(u->errmsg, sizeof(u->errmsg), "out of memory");
		return PS_UNWIND_MODULE_ERROR;
	}
	m->file_mod = file_mod;
	u->frame_file_mod = file_mod;
	return PS_UNWIND_MODULE_NONE;
}

/* Whether map, a mapping of m's file at another base than m's, is one of
 * the segments of m as libdwfl placed it: a PT_LOAD whose pages hold the
 * file offset of addr in the mapping puts it at addr in the module. Every
 * candidate is tried: a segment's memory size (lld pads RELRO's to its
 * page end) or first page can reach into the next one's. */
static bool another_segment(const struct ps_unwind_module *m, const struct ps_unwind_map *map,
                            uint64_t addr)
{
	Dwarf_Addr bias;
	Elf *elf = m->mod ? dwfl_module_getelf(m->mod, &bias) : NULL;
	size_t count = 0;

	if (!elf || strcmp(m->path, map->path) != 0 || elf_getphdrnum(elf, &count) != 0)
		return false;
	uint64_t offset = addr - map->start + map->pgoff;

	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD ||
		    offset < (phdr.p_offset & ~(uint64_t)(PS_UNWIND_PAGE_SIZE - 1)) ||
		    (offset >= phdr.p_offset && offset - phdr.p_offset >= phdr.p_memsz))
			continue;
		/* offsets and addresses wrap alike */
		if (bias + phdr.p_vaddr + (offset - phdr.p_offset) == addr)
			return true;
	}
	return false;
}

/* The base to give libdwfl for a mapping whose file's offset 0 lies at
 * base (start - pgoff). libdwfl puts there the address of the file's
 * first PT_LOAD rounded down to the segment's alignment (p_vaddr &
 * -p_align); perf's libunwind path that address rounded down to the page
 * (read_unwind_spec_eh_frame(), elf_base_address()). The two agree in
 * files laid out as loaders expect, not in those `perf inject --jit`
 * writes: their code, which alone is mapped, is at offset and address
 * 0x80, aligned to 8, and libdwfl would put it 0x80 low. The libunwind
 * style places each file as perf's libunwind path does. perf's libdw path
 * (unwind-libdw.c) gives libdwfl start - pgoff, but the mapping's start
 * to a file whose name begins with /tmp/jitted-: the libdw style follows
 * it, placing the jitted files of any other directory (the jitdump's)
 * 0x80 low. */
static uint64_t dwfl_base_of(const struct ps_unwinder *u, const struct ps_unwind_map *map,
                             uint64_t base)
{
	if (u->style_quirks)
		return base + (map->first_load_vaddr & (0 - map->first_load_align)) -
		       (map->first_load_vaddr & ~(uint64_t)(PS_UNWIND_PAGE_SIZE - 1));
	if (map->name && strncmp(map->name, "/tmp/jitted-", 12) == 0)
		return map->start;
	return base;
}

/* Report the ELF file of map to the Dwfl. */
static enum ps_unwind_lookup module_report(struct ps_unwinder *u, uint64_t addr, uint64_t base,
                                           uint64_t dwfl_base, const struct ps_unwind_map *map,
                                           Dwfl_Module **out)
{
	if (u->nr_modules >= PS_UNWIND_MAX_MODULES)
		return PS_UNWIND_MODULE_STALE;
	/* The same file at the same base whose module does not cover addr:
	 * the file does not match what was mapped; reporting it again would
	 * not help. */
	for (size_t i = 0; i < u->nr_modules; i++)
		if (module_is(&u->modules[i], base, map->path)) {
			u->frame_file_mod =
			        u->modules[i].mod ? u->modules[i].mod : u->modules[i].file_mod;
			return PS_UNWIND_MODULE_NONE;
		}
	Dwfl_Module *file_mod = exec_module(u, map->path);
	if (file_mod)
		return exec_elsewhere(u, base, map, file_mod);

	struct ps_unwind_module *m = module_add(u, base, map);
	if (!m) {
		snprintf(u->errmsg, sizeof(u->errmsg), "out of memory");
		return PS_UNWIND_MODULE_ERROR;
	}

	u->modules_epoch++;
	dwfl_report_begin_add(u->dwfl);
	Dwfl_Module *mod =
	        dwfl_report_elf(u->dwfl, module_name(map), map->path, -1, dwfl_base, false);
	int err = mod ? 0 : dwfl_errno();
	dwfl_report_end(u->dwfl, NULL, NULL);
	if (!mod) {
		u->stats.module_failures++;
		ps_unwind_log(u, PS_LOG_DEBUG, "unwind: cannot use %s at %#llx: %s", map->path,
		              (unsigned long long)dwfl_base, dwfl_errmsg(err));
		/* remember the failure for the mapping's range, not the file's */
		return PS_UNWIND_MODULE_NONE;
	}

	void **userdata;
	Dwarf_Addr low, high;
	uint64_t own;
	dwfl_module_info(mod, &userdata, &low, &high, NULL, NULL, NULL, NULL);
	*userdata = m->debug;
	m->mod = mod;
	m->low = low;
	m->high = high;
	u->stats.modules++;

	/* an ET_EXEC file first met away from its own addresses: its module
	 * stands for its own mappings, the mapping gets an entry of its own */
	if (exec_base(mod, &own) && own != base) {
		m->base = own;
		return exec_elsewhere(u, base, map, mod);
	}
	if (!module_contains(m, addr)) {
		u->frame_file_mod = mod;
		return PS_UNWIND_MODULE_NONE;
	}
	/* a module reported earlier over the same range answers instead */
	if (dwfl_addrmodule(u->dwfl, addr) != mod)
		return PS_UNWIND_MODULE_STALE;
	*out = mod;
	return PS_UNWIND_MODULE_OK;
}

/* ---- answers kept for the addresses they hold for ------------------- *
 *
 * A stack's frames are mostly in a few mappings, and for every address of
 * a mapping without a file, or of the part of a mapping one module of
 * the Dwfl covers alone, ps_unwind_module_ensure() answers the same while
 * the mappings and the modules stay as they are: that answer is kept,
 * with what it sets (the frame's bases, last_module), and given again
 * without asking find_map. Answers that depend on the address itself
 * (another segment's base, overlapping modules) are not kept. */

/* Whether answers can be kept; forgets those the mappings or the
 * modules changed under. */
static bool hits_usable(struct ps_unwinder *u)
{
	uint64_t maps;

	if (!u->callbacks.maps_generation)
		return false;
	maps = u->callbacks.maps_generation(u->ctx);
	if (maps != u->hits_maps || u->hits_epoch != u->modules_epoch ||
	    u->hits_modules != u->nr_modules) {
		u->nr_hits = u->next_hit = 0;
		u->hits_maps = maps;
		u->hits_epoch = u->modules_epoch;
		u->hits_modules = u->nr_modules;
	}
	return true;
}

static void hit_add(struct ps_unwinder *u, const struct ps_unwind_hit *hit)
{
	u->hits[u->next_hit] = *hit;
	u->next_hit = (u->next_hit + 1) % PS_UNWIND_HITS;
	if (u->nr_hits < PS_UNWIND_HITS)
		u->nr_hits++;
}

static const struct ps_unwind_hit *hit_find(const struct ps_unwinder *u, uint64_t addr)
{
	for (unsigned i = 0; i < u->nr_hits; i++)
		if (addr >= u->hits[i].low && addr < u->hits[i].high)
			return &u->hits[i];
	return NULL;
}

static enum ps_unwind_lookup hit_apply(struct ps_unwinder *u, const struct ps_unwind_hit *hit,
                                       Dwfl_Module **out)
{
	if (!hit->mod)
		return PS_UNWIND_MODULE_NONE;
	u->frame_base = hit->base;
	u->frame_partial = hit->partial;
	u->frame_libunwind_base = hit->libunwind_base;
	u->last_module = hit->module; /* as module_find() leaves it */
	*out = hit->mod;
	return PS_UNWIND_MODULE_OK;
}

/* Keep the answer OK with module index for the part of the mapping
 * [start, end) it covers, if no other module's range meets that part
 * (module_find() then finds it there whatever last_module is). */
static void hit_add_module(struct ps_unwinder *u, size_t index, uint64_t start, uint64_t end)
{
	const struct ps_unwind_module *m = &u->modules[index];
	uint64_t low = start > m->low ? start : m->low, high = end < m->high ? end : m->high;

	if (low >= high)
		return;
	for (size_t i = 0; i < u->nr_modules; i++)
		if (i != index && u->modules[i].low < high && low < u->modules[i].high)
			return;
	hit_add(u, &(struct ps_unwind_hit){ .low = low,
	                                    .high = high,
	                                    .base = u->frame_base,
	                                    .partial = u->frame_partial,
	                                    .libunwind_base = u->frame_libunwind_base,
	                                    .mod = m->mod,
	                                    .module = index });
}

/* ps_unwind_module_ensure() for an address no kept answer holds for */
static enum ps_unwind_lookup module_lookup(struct ps_unwinder *u, uint64_t addr, bool keep,
                                           Dwfl_Module **out)
{
	struct ps_unwind_map map = { 0 };
	bool moved = false;

	if (!u->callbacks.find_map(u->ctx, addr, &map) || addr < map.start || addr >= map.end)
		return PS_UNWIND_MODULE_UNMAPPED;
	if (!map.path) {
		if (keep)
			hit_add(u, &(struct ps_unwind_hit){ .low = map.start, .high = map.end });
		return PS_UNWIND_MODULE_NONE;
	}

	uint64_t base = map.file_base ? map.file_base : map.start - map.pgoff;
	uint64_t dwfl_base = dwfl_base_of(u, &map, base);

	u->frame_base = base;
	u->frame_libunwind_base = map.libunwind_base ? map.libunwind_base : base;
	u->frame_partial = ps_unwind_map_partial(&map);
	if (ps_unwind_jitted_inside(u, &map)) {
		u->frame_file_mod =
		        ps_unwind_jitted_module(u, dwfl_base, module_name(&map), map.path);
		return PS_UNWIND_MODULE_NONE;
	}
	struct ps_unwind_module *m = module_find(u, addr);
	if (m && !module_is(m, base, map.path) && another_segment(m, &map, addr)) {
		/* start - pgoff is not the file's base in a segment whose
		 * address and offset differ by more than the first's (a
		 * writable segment): the module stands for that mapping too */
		base = m->base;
		u->frame_base = base;
		u->frame_libunwind_base = map.libunwind_base ? map.libunwind_base : base;
		moved = true;
	}
	if (m) {
		if (!module_is(m, base, map.path))
			return PS_UNWIND_MODULE_STALE;
		if (!m->mod) {
			u->frame_file_mod = m->file_mod;
			return PS_UNWIND_MODULE_NONE;
		}
		bool alone = module_alone(u, m);

		if (!alone && dwfl_addrmodule(u->dwfl, addr) != m->mod)
			return PS_UNWIND_MODULE_STALE;
		*out = m->mod;
		if (keep && alone && !moved)
			hit_add_module(u, (size_t)(m - u->modules), map.start, map.end);
		return PS_UNWIND_MODULE_OK;
	}
	return module_report(u, addr, base, dwfl_base, &map, out);
}

enum ps_unwind_lookup ps_unwind_module_ensure(struct ps_unwinder *u, uint64_t addr,
                                              Dwfl_Module **out)
{
	bool keep = hits_usable(u);

	u->frame_file_mod = NULL;
	if (keep) {
		const struct ps_unwind_hit *hit = hit_find(u, addr);

		if (hit)
			return hit_apply(u, hit, out);
	}
	return module_lookup(u, addr, keep, out);
}

void ps_unwinder_map_changed(struct ps_unwinder *u, const struct ps_unwind_map *map)
{
	if (!u || !map)
		return;
	uint64_t base = map->file_base ? map->file_base : map->start - map->pgoff;
	for (size_t i = 0; i < u->nr_modules; i++) {
		const struct ps_unwind_module *m = &u->modules[i];

		if (map->end <= m->low || m->high <= map->start)
			continue;
		/* a jitted file in a binary's text has no module there */
		if (ps_unwind_jitted_inside(u, map))
			return;
		/* the module's own segments (RELRO mprotect) and the anonymous
		 * .bss after them change nothing */
		if (map->path
		            ? !module_is(m, base, map->path) && !another_segment(m, map, map->start)
		            : map->exec) {
			u->stale = true;
			return;
		}
	}
}

void ps_unwinder_reset(struct ps_unwinder *u)
{
	if (!u)
		return;
	ps_unwind_dwfl_destroy(u);
	ps_unwind_rs_flush(&u->rs);
}

void ps_unwinder_forget_modules(struct ps_unwinder *u)
{
	if (u)
		ps_unwind_dwfl_destroy(u);
}

Elf_Scn *ps_unwind_elf_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *sname;

		if (gelf_getshdr(scn, shdr) && (sname = elf_strptr(elf, shstrndx, shdr->sh_name)) &&
		    strcmp(sname, name) == 0)
			return scn;
	}
	return NULL;
}
