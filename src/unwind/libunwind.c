/* libunwind 1.6.2's unwind info for a frame, as Debian's perf gets it
 * (quirk mode): what each unw_step() finds for the frame before stepping.
 *
 *  - The register-state cache. perf creates one libunwind address space
 *    per process with UNW_CACHE_GLOBAL (unwind__prepare_access()), flushed
 *    only at exec (unwind__flush_access()). find_reg_state() looks every
 *    step up there by the frame's IP as libunwind holds it (the sample's
 *    IP, or a return address) before asking perf's find_proc_info(), and
 *    enters the state it built from what that found: 128 entries in a
 *    hash of 256 chains, replaced round robin (src/dwarf/Gparser.c:
 *    rs_lookup(), rs_new(), hash()). A hit reuses the state found then,
 *    even when the process's maps have changed since and find_proc_info()
 *    would answer otherwise now.
 *  - find_proc_info() (util/unwind-libunwind-local.c): no map or file, or
 *    no .eh_frame_hdr, is a hard failure. Otherwise the header's table is
 *    searched at the file's address relative to its lowest mapping in the
 *    process (read_unwind_spec_eh_frame()), through the process's memory
 *    as perf's access_mem() gives it: when that is not a mapping of the
 *    file at that base (symbolizers map parts of their own library below
 *    it), libunwind reads whatever is there (remote_lookup(),
 *    dwarf_extract_proc_info_from_fde(), parse_cie()): zeros from
 *    anonymous memory (an FDE of length 0: no info, the frame-chain
 *    guess), a failed read outside any mapping (the walk ends).
 *
 * The cache is kept by the session's unwinders; the unwinding workers look
 * every frame up afresh and log the lookups (ps_unwinder_steps()), which
 * the session checks against its cache and enters in it
 * (ps_unwinder_replay()), unwinding a sample again itself when its cache
 * would have answered otherwise. */
#include "unwind/unwind_priv.h"

#include <dwarf.h>
#include <gelf.h>
#include <string.h>

#define CIE_AUG_MAX 5

/* ---- the register-state cache ---------------------------------------- */

static unsigned rs_hash(uint64_t ip)
{
	return (unsigned)((ip * 0x9e3779b97f4a7c16ULL) >> (64 - (PS_UNWIND_RS_LOG + 1)));
}

void ps_unwind_rs_flush(struct ps_unwind_rscache *c)
{
	c->rr = 0;
	for (size_t i = 0; i < PS_UNWIND_RS_SIZE; i++) {
		c->chain[i] = -1;
		c->ip[i] = 0;
		c->valid[i] = false;
	}
	for (size_t i = 0; i < 2 * PS_UNWIND_RS_SIZE; i++)
		c->head[i] = -1;
}

static int rs_find(const struct ps_unwind_rscache *c, uint64_t ip)
{
	for (int i = c->head[rs_hash(ip)]; i >= 0 && i < PS_UNWIND_RS_SIZE; i = c->chain[i])
		if (c->valid[i] && c->ip[i] == ip)
			return i;
	return -1;
}

static void rs_insert(struct ps_unwind_rscache *c, uint64_t ip, int64_t shift)
{
	int slot = c->rr;

	c->rr = (uint16_t)((slot + 1) & (PS_UNWIND_RS_SIZE - 1));
	/* the entry replaced leaves its chain */
	if (c->ip[slot]) {
		for (int16_t *p = &c->head[rs_hash(c->ip[slot])]; *p >= 0 && *p < PS_UNWIND_RS_SIZE;
		     p = &c->chain[*p])
			if (*p == slot) {
				*p = c->chain[slot];
				break;
			}
	}
	unsigned h = rs_hash(ip);
	c->chain[slot] = c->head[h];
	c->head[h] = (int16_t)slot;
	c->ip[slot] = ip;
	c->shift[slot] = shift;
	c->valid[slot] = true;
}

/* ---- perf's memory, byte by byte as libunwind reads it --------------- */

struct lu_reader {
	struct ps_unwinder *u;
	bool failed; /* a read outside any mapping: libunwind's error */
};

static uint64_t lu_bytes(struct lu_reader *r, uint64_t addr, unsigned n)
{
	uint64_t v = 0;

	/* dwarf_readu8() reads the aligned word holding each byte */
	for (unsigned i = 0; i < n && !r->failed; i++) {
		uint64_t at = addr + i, word = 0;

		if (ps_unwind_access_mem(r->u, at & ~(uint64_t)7, &word) < 0)
			r->failed = true;
		else
			v |= ((word >> (8 * (at & 7))) & 0xff) << (8 * i);
	}
	return r->failed ? 0 : v;
}

/* libunwind reads on while bytes say more follow; past a bound that no
 * real value needs, garbage is taken for a failed read */
#define LU_ULEB_MAX 64

static uint64_t lu_uleb(struct lu_reader *r, uint64_t *addr)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (unsigned n = 0;; n++) {
		if (n == LU_ULEB_MAX) {
			r->failed = true;
			return 0;
		}
		uint64_t b = lu_bytes(r, (*addr)++, 1);

		if (r->failed)
			return 0;
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

/* dwarf_read_encoded_pointer(); false for an encoding it refuses */
static bool lu_pointer(struct lu_reader *r, uint64_t *addr, uint8_t enc, uint64_t *out)
{
	uint64_t start = *addr, v;

	if (enc == DW_EH_PE_omit) {
		*out = 0;
		return true;
	}
	if (enc == DW_EH_PE_aligned) {
		*addr = (start + 7) & ~(uint64_t)7;
		*out = lu_bytes(r, *addr, 8);
		*addr += 8;
		return true;
	}
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		v = lu_bytes(r, *addr, 8);
		*addr += 8;
		break;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128: /* read as uleb128, as libunwind does */
		v = lu_uleb(r, addr);
		break;
	case DW_EH_PE_udata2:
		v = lu_bytes(r, *addr, 2);
		*addr += 2;
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)lu_bytes(r, *addr, 2);
		*addr += 2;
		break;
	case DW_EH_PE_udata4:
		v = lu_bytes(r, *addr, 4);
		*addr += 4;
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)lu_bytes(r, *addr, 4);
		*addr += 4;
		break;
	default:
		return false;
	}
	if (r->failed || v == 0) {
		*out = 0;
		return true;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += start;
		break;
	case DW_EH_PE_datarel: /* pi->gp, which perf leaves 0 */
		break;
	default: /* funcrel needs start_ip, 0 here; textrel is refused */
		if ((enc & 0x70) != DW_EH_PE_funcrel)
			return false;
		break;
	}
	if (enc & DW_EH_PE_indirect)
		v = lu_bytes(r, v, 8);
	*out = v;
	return true;
}

enum lu_found { LU_FAIL, LU_ENOINFO, LU_FOUND };

/* dwarf_extract_proc_info_from_fde() and parse_cie() at fde: the range
 * the FDE there says it covers, read through perf's memory. */
static enum lu_found lu_fde(struct lu_reader *r, uint64_t fde, uint64_t *start, uint64_t *end)
{
	uint64_t addr = fde, len, cie_field, cie, range;
	int64_t cie_offset;
	bool wide;

	len = lu_bytes(r, addr, 4);
	addr += 4;
	wide = len == 0xffffffffu;
	if (!wide && len == 0 && !r->failed)
		return LU_ENOINFO; /* "the end of the FDE-table" */
	if (wide) {
		addr += 8;
		cie_field = addr;
		cie_offset = (int64_t)lu_bytes(r, addr, 8);
		addr += 8;
	} else {
		cie_field = addr;
		cie_offset = (int32_t)lu_bytes(r, addr, 4);
		addr += 4;
	}
	if (r->failed)
		return LU_FAIL;
	if (cie_offset == 0) /* a CIE: pi stays empty, so no range */
		return LU_ENOINFO;
	cie = cie_field - (uint64_t)cie_offset;

	/* the CIE: its pointer encoding, which the 'R' augmentation gives */
	uint64_t c = cie, clen = lu_bytes(r, c, 4);
	uint8_t fde_enc = DW_EH_PE_udata8, version, aug[CIE_AUG_MAX] = { 0 };
	size_t naug = 0;

	c += 4;
	if (clen == 0xffffffffu) {
		c += 8;
		if (lu_bytes(r, c, 8) != 0)
			return LU_FAIL;
		c += 8;
	} else {
		if (lu_bytes(r, c, 4) != 0)
			return LU_FAIL;
		c += 4;
	}
	version = (uint8_t)lu_bytes(r, c++, 1);
	if (r->failed || (version != 1 && (version < 3 || version > 4)))
		return LU_FAIL;
	for (;;) {
		uint8_t ch = (uint8_t)lu_bytes(r, c++, 1);

		if (r->failed)
			return LU_FAIL;
		if (!ch)
			break;
		if (naug < CIE_AUG_MAX - 1)
			aug[naug++] = ch;
	}
	lu_uleb(r, &c); /* code alignment */
	lu_uleb(r, &c); /* data alignment (sleb128: the same bytes) */
	if (version == 1)
		c++;
	else
		lu_uleb(r, &c);
	size_t i = 0;
	if (aug[0] == 'z') {
		lu_uleb(r, &c);
		i++;
	}
	for (; i < CIE_AUG_MAX && aug[i] && !r->failed; i++) {
		uint8_t enc;
		uint64_t ignored;

		switch (aug[i]) {
		case 'L':
			c++;
			break;
		case 'R':
			fde_enc = (uint8_t)lu_bytes(r, c++, 1);
			break;
		case 'P':
			enc = (uint8_t)lu_bytes(r, c++, 1);
			if (!lu_pointer(r, &c, enc, &ignored))
				return LU_FAIL;
			break;
		case 'S':
			break;
		default:
			if (aug[0] != 'z')
				return LU_FAIL;
			i = CIE_AUG_MAX; /* skip what is not understood */
			break;
		}
	}
	if (r->failed || !lu_pointer(r, &addr, fde_enc, start) ||
	    !lu_pointer(r, &addr, fde_enc & 0x0f, &range) || r->failed)
		return LU_FAIL;
	*end = *start + range;
	return LU_FOUND;
}

/* ---- find_proc_info() -------------------------------------------------- */

/* perf's elf_base_address(): the page of the first PT_LOAD's address. */
static bool first_load_page(Elf *elf, uint64_t *out)
{
	size_t count = 0;

	*out = 0;
	if (elf_getphdrnum(elf, &count) != 0)
		return false;
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;

		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_LOAD) {
			*out = phdr.p_vaddr & ~(uint64_t)(PS_UNWIND_PAGE_SIZE - 1);
			return true;
		}
	}
	return true;
}

/* A section of mod's file: its address and size, and its contents when
 * data is not NULL. */
static bool section(Dwfl_Module *mod, const char *name, uint64_t *addr, uint64_t *size,
                    Elf_Data **data)
{
	Dwarf_Addr bias;
	GElf_Shdr shdr;
	Elf_Scn *scn = ps_unwind_elf_section(dwfl_module_getelf(mod, &bias), name, &shdr);

	if (!scn)
		return false;
	*addr = shdr.sh_addr;
	*size = shdr.sh_size;
	return !data || (shdr.sh_type != SHT_NOBITS && (*data = elf_rawdata(scn, NULL)) != NULL);
}

/* Whether [start, start + size) reads, through perf's maps, as the file of
 * the frame's mapping placed at base. */
static bool reads_as_file(struct ps_unwinder *u, uint64_t start, uint64_t size, uint64_t base,
                          const char *path)
{
	uint64_t at = start, end = start + size;
	struct ps_unwind_map map;

	if (end < start)
		return false;
	while (at < end) {
		if (!u->callbacks.find_map(u->ctx, at, &map) || at < map.start || at >= map.end ||
		    !map.path || strcmp(map.path, path) != 0 || map.start - map.pgoff != base)
			return false;
		at = map.end;
	}
	return true;
}

/* The entry of a reported module. */
static struct ps_unwind_module *module_entry(struct ps_unwinder *u, const Dwfl_Module *mod)
{
	if (u->last_module < u->nr_modules && u->modules[u->last_module].mod == mod)
		return &u->modules[u->last_module];
	for (size_t i = 0; i < u->nr_modules; i++)
		if (u->modules[i].mod == mod)
			return &u->modules[i];
	return NULL;
}

/* The header's fields perf reads from the file (unwind_spec_ehframe(),
 * __dw_read_encoded_value(), on the first 20 bytes of the section): the
 * FDE count and where the table starts in the section. false where perf
 * fails. */
static bool header_fields(const Elf_Data *data, uint64_t *count, uint64_t *table_off)
{
	const unsigned char *h = data->d_buf;
	size_t off = 4;

	if (!h || data->d_size < 20)
		return false;
	for (int i = 0; i < 2; i++) {
		uint8_t enc = h[1 + i];
		uint64_t v = 0;
		size_t n;

		if (enc == DW_EH_PE_omit) {
			n = 0;
		} else if (enc == 0x00) { /* perf's DW_EH_PE_ptr */
			n = 8;
		} else {
			/* pcrel would add the address of perf's own copy */
			if ((enc & 0x70) != DW_EH_PE_absptr &&
			    (i == 1 || (enc & 0x70) != DW_EH_PE_pcrel))
				return false;
			if ((enc & 0x07) == 0)
				enc |= DW_EH_PE_udata4;
			switch (enc & 0x0f) {
			case DW_EH_PE_udata4:
			case DW_EH_PE_sdata4:
				n = 4;
				break;
			case DW_EH_PE_udata8:
			case DW_EH_PE_sdata8:
				n = 8;
				break;
			default:
				return false;
			}
		}
		if (off + n > 20)
			return false;
		for (size_t b = 0; b < n; b++)
			v |= (uint64_t)h[off + b] << (8 * b);
		if (n == 4 && (enc & 0x0f) == DW_EH_PE_sdata4)
			v = (uint64_t)(int64_t)(int32_t)v;
		if (i == 1)
			*count = v;
		off += n;
	}
	*table_off = off;
	return true;
}

/* The search libunwind makes through memory that is not the file: the
 * header's table at segbase (remote_lookup()), then the FDE it picks. */
static enum lu_found lookup_in_memory(struct ps_unwinder *u, uint64_t lookup, uint64_t segbase,
                                      uint64_t table, uint64_t count)
{
	struct lu_reader r = { .u = u };
	int32_t rel = (int32_t)(uint32_t)(lookup - segbase);
	uint64_t lo = 0, hi = count, start, end;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		int32_t first = (int32_t)lu_bytes(&r, table + mid * 8, 4);

		if (r.failed)
			return LU_FAIL;
		if (rel < first)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (hi == 0)
		return LU_ENOINFO;
	lu_bytes(&r, table + (hi - 1) * 8, 4); /* read again, with the offset */
	int32_t fde_offset = (int32_t)lu_bytes(&r, table + (hi - 1) * 8 + 4, 4);
	if (hi < count)
		lu_bytes(&r, table + hi * 8, 4); /* the next entry's start */
	if (r.failed)
		return LU_FAIL;
	enum lu_found found = lu_fde(&r, segbase + (uint64_t)(int64_t)fde_offset, &start, &end);
	if (found != LU_FOUND)
		return found;
	/* an FDE read from other memory than the file: which rules it would
	 * give is not followed; the walk ends there */
	if (lookup < start || lookup >= end)
		return LU_ENOINFO;
	return LU_FAIL;
}

/* What find_proc_info() finds for the frame now: with the module address
 * of the row it gives in *row_pc. */
static enum lu_found fresh_lookup(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t lookup,
                                  uint64_t *row_pc)
{
	uint64_t base = u->frame_libunwind_base;

	if (!ps_unwind_has_eh_frame_hdr(u, mod))
		return LU_FAIL;
	*row_pc = lookup;
	/* the file's table, which its mappings hold (not so a jitted
	 * file's, beyond its code) */
	if (base == u->frame_base && !u->frame_partial)
		return ps_unwind_eh_covered(u, mod, lookup) ? LU_FOUND : LU_ENOINFO;

	/* libunwind looks the frame up in the file's own addresses relative
	 * to its lowest mapping; the module has them where its mapping is */
	*row_pc = lookup - base + u->frame_base;
	struct ps_unwind_module *m = module_entry(u, mod);
	if (m && !m->lu_layout) {
		Dwarf_Addr bias;
		Elf *elf = dwfl_module_getelf(mod, &bias);
		Elf_Data *hdr;

		m->lu_layout = -1;
		if (elf && first_load_page(elf, &m->lu_first_load) &&
		    section(mod, ".eh_frame_hdr", &m->lu_hdr_addr, &m->lu_hdr_size, &hdr) &&
		    section(mod, ".eh_frame", &m->lu_eh_addr, &m->lu_eh_size, NULL))
			m->lu_layout = header_fields(hdr, &m->lu_count, &m->lu_table_off) ? 1 : -2;
	}
	if (!m || m->lu_layout == -1)
		return ps_unwind_eh_covered(u, mod, *row_pc) ? LU_FOUND : LU_ENOINFO;
	if (m->lu_layout == -2)
		return LU_FAIL;
	uint64_t segbase = base - m->lu_first_load + m->lu_hdr_addr;

	/* the table and the FDEs read as the file: its own answer */
	if (reads_as_file(u, segbase, m->lu_hdr_size, base, m->path) &&
	    reads_as_file(u, base - m->lu_first_load + m->lu_eh_addr, m->lu_eh_size, base, m->path))
		return ps_unwind_eh_covered(u, mod, *row_pc) ? LU_FOUND : LU_ENOINFO;
	/* the memory does not hold the file there: saved and restored, the
	 * reads' marks are about the step, not the lookup */
	bool zero = u->step_read_zero, cut = u->step_read_cut, failed = u->step_read_failed;
	enum lu_found found =
	        lookup_in_memory(u, lookup, segbase, segbase + m->lu_table_off, m->lu_count);

	u->step_read_zero = zero;
	u->step_read_cut = cut;
	u->step_read_failed = failed;
	return found;
}

static void log_step(struct ps_unwinder *u, uint64_t key, int64_t shift)
{
	if (u->nr_steps < u->cap_steps)
		u->steps[u->nr_steps++] = (struct ps_unwind_step){ .key = key, .shift = shift };
	else
		u->steps_lost = true;
}

/* rs_new() for the sample's walk: the cache as it was before is kept for
 * a retried walk */
static void enter(struct ps_unwinder *u, uint64_t key, int64_t shift)
{
	if (!u->rs_saved) {
		memcpy(&u->rs_before, &u->rs, sizeof(u->rs));
		u->rs_saved = true;
	}
	rs_insert(&u->rs, key, shift);
}

bool ps_unwind_foreign_enoinfo(struct ps_unwinder *u, uint64_t lookup)
{
	Dwfl_Module *mod = u->frame_file_mod;
	Dwarf_Addr bias;
	Elf *elf;
	uint64_t first_load;

	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)) || !first_load_page(elf, &first_load))
		return false;
	/* perf's find_proc_info() fails without a usable header */
	if (!ps_unwind_has_eh_frame_hdr(u, mod))
		return false;
	/* libunwind searches the header's table for the address relative
	 * to the file's lowest mapping (read_unwind_spec_eh_frame()), in the
	 * file's own addresses; the module has them moved by bias */
	uint64_t link = lookup - u->frame_libunwind_base + first_load;

	return !ps_unwind_eh_covered(u, mod, link + bias);
}

enum ps_unwind_info ps_unwind_libunwind_info(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t key,
                                             uint64_t lookup, uint64_t *row_pc)
{
	enum lu_found found;
	int64_t shift;

	if (u->rs_on) {
		int slot = rs_find(&u->rs, key);

		if (slot >= 0) {
			*row_pc = lookup - (uint64_t)u->rs.shift[slot];
			return PS_UNWIND_INFO_FOUND;
		}
	}
	found = fresh_lookup(u, mod, lookup, row_pc);
	shift = found == LU_FOUND  ? (int64_t)(lookup - *row_pc)
	        : found == LU_FAIL ? PS_UNWIND_STEP_FAIL
	                           : PS_UNWIND_STEP_ENOINFO;
	if (found == LU_FOUND && u->rs_on)
		enter(u, key, shift);
	log_step(u, key, shift);
	return found == LU_FOUND  ? PS_UNWIND_INFO_FOUND
	       : found == LU_FAIL ? PS_UNWIND_INFO_FAIL
	                          : PS_UNWIND_INFO_ENOINFO;
}

bool ps_unwind_libunwind_other_row(struct ps_unwinder *u, uint64_t key)
{
	if (u->rs_on) {
		int slot = rs_find(&u->rs, key);

		if (slot >= 0 && u->rs.shift[slot] != 0)
			return true;
		if (slot < 0)
			enter(u, key, 0);
	}
	log_step(u, key, 0);
	return false;
}

void ps_unwind_lookups_begin(struct ps_unwinder *u, bool retry)
{
	if (retry && u->rs_saved)
		memcpy(&u->rs, &u->rs_before, sizeof(u->rs));
	u->rs_saved = false;
	u->nr_steps = 0;
	u->steps_lost = false;
}

bool ps_unwinder_replay(struct ps_unwinder *u, const struct ps_unwind_step *steps, size_t n)
{
	struct ps_unwind_rscache saved;

	if (!u || !u->rs_kept)
		return true;
	memcpy(&saved, &u->rs, sizeof(saved));
	for (size_t i = 0; i < n; i++) {
		int slot = rs_find(&u->rs, steps[i].key);

		if (slot >= 0) {
			/* the session's libunwind would have reused this */
			if (steps[i].shift != u->rs.shift[slot]) {
				memcpy(&u->rs, &saved, sizeof(saved));
				return false;
			}
			continue;
		}
		if (steps[i].shift != PS_UNWIND_STEP_FAIL &&
		    steps[i].shift != PS_UNWIND_STEP_ENOINFO)
			rs_insert(&u->rs, steps[i].key, steps[i].shift);
	}
	return true;
}

const struct ps_unwind_step *ps_unwinder_steps(const struct ps_unwinder *u, size_t *n)
{
	if (!u || u->steps_lost) {
		*n = SIZE_MAX;
		return NULL;
	}
	*n = u->nr_steps;
	return u->steps;
}
