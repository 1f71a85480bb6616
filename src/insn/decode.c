/* Decoding one x86 instruction the way perf's decoder does: prefixes
 * (perf keeps at most four different legacy ones), REX, VEX/EVEX, the
 * opcode through its escapes, ModRM, SIB, displacement and immediates,
 * with the opcode maps of tables.c. Only the length and the opcode are
 * kept.
 */
#include <string.h>

#include "insn/insn_priv.h"

/* perf's MAX_INSN_SIZE: longer instructions are invalid */
#define MAX_LENGTH 15

struct decoder {
	const uint8_t *code;
	size_t end, pos;
	bool x86_64;
	unsigned operand_bytes, address_bytes;
	uint8_t last_prefix; /* the last legacy prefix byte, 0 for none */
	bool vex, evex;
	uint8_t vex_map, vex_pp;
};

static bool next(struct decoder *d, size_t n, const uint8_t **bytes)
{
	if (d->pos + n > d->end)
		return false;
	*bytes = d->code + d->pos;
	d->pos += n;
	return true;
}

static bool peek(const struct decoder *d, size_t ahead, uint8_t *byte)
{
	if (d->pos + ahead + 1 > d->end)
		return false;
	*byte = d->code[d->pos + ahead];
	return true;
}

static bool is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x26:
	case 0x2e:
	case 0x36:
	case 0x3e:
	case 0x64:
	case 0x65:
	case 0x66:
	case 0x67:
	case 0xf0:
	case 0xf2:
	case 0xf3:
		return true;
	default:
		return false;
	}
}

/* The variant of the maps the last legacy prefix selects: 66, F3, F2. */
static unsigned prefix_variant(uint8_t prefix)
{
	switch (prefix) {
	case 0x66:
		return 1;
	case 0xf3:
		return 2;
	case 0xf2:
		return 3;
	default:
		return 0;
	}
}

/* perf skips the "emulate prefixes" of Xen and KVM (ud2, then "xen" or
 * "kvm") before an instruction. */
static void skip_emulate_prefix(struct decoder *d)
{
	static const uint8_t xen[] = { 0x0f, 0x0b, 0x78, 0x65, 0x6e };
	static const uint8_t kvm[] = { 0x0f, 0x0b, 0x6b, 0x76, 0x6d };

	if (d->end >= sizeof(xen) &&
	    (memcmp(d->code, xen, sizeof(xen)) == 0 || memcmp(d->code, kvm, sizeof(kvm)) == 0))
		d->pos = sizeof(xen);
}

static bool read_prefixes(struct decoder *d)
{
	uint8_t seen[4] = { 0 }, b, b2;
	size_t nr_seen = 0;

	skip_emulate_prefix(d);
	if (!peek(d, 0, &b))
		return false;
	while (is_legacy_prefix(b)) {
		bool again = memchr(seen, b, nr_seen) != NULL;

		/* a fifth different prefix is taken for the opcode */
		if (!again && nr_seen == 4)
			break;
		if (!again) {
			seen[nr_seen++] = b;
			if (b == 0x67)
				d->address_bytes ^= d->x86_64 ? 12 : 6;
			else if (b == 0x66)
				d->operand_bytes ^= 6;
		}
		d->pos++;
		d->last_prefix = b;
		if (!peek(d, 0, &b))
			return false;
	}
	if (d->x86_64) {
		if (!peek(d, 0, &b))
			return false;
		if ((b & 0xf0) == 0x40) {
			d->pos++;
			if (b & 0x08)
				d->operand_bytes = 8;
		}
	}
	if (!peek(d, 0, &b))
		return false;
	if (b != 0xc4 && b != 0xc5 && b != 0x62)
		return true;
	if (!peek(d, 1, &b2))
		return false;
	/* outside 64-bit mode these are LES, LDS and BOUND unless the next
	 * byte reads as a register ModRM */
	if (!d->x86_64 && (b2 >> 6) != 3)
		return true;
	d->vex = true;
	if (b == 0xc5) {
		d->vex_map = 1;
		d->vex_pp = b2 & 3;
		d->pos += 2;
		return true;
	}
	d->evex = b == 0x62;
	d->vex_map = d->evex ? (b2 & 0x07) : (b2 & 0x1f);
	if (!peek(d, 2, &b2) || (d->evex && !peek(d, 3, &b)))
		return false;
	d->vex_pp = b2 & 3;
	if (d->x86_64 && (b2 & 0x80))
		d->operand_bytes = 8;
	d->pos += d->evex ? 4 : 3;
	return true;
}

/* The entry of a group for ModRM.reg under a prefix variant. */
static char group_entry(unsigned map, bool vex, uint8_t opcode, unsigned variant, uint8_t modrm)
{
	for (const struct ps_insn_group *g = ps_insn_groups; g->entries; g++)
		if (g->map == map && g->vex == vex && g->opcode == opcode)
			return g->entries[variant * 8 + ((modrm >> 3) & 7)];
	return vex ? 'x' : 'm';
}

static bool has_modrm(char class)
{
	return strchr("mBZMEC*n", class) != NULL;
}

/* The immediate of a class, in bytes; -1 when there is none to be had. */
static int immediate_bytes(const struct decoder *d, char class)
{
	switch (class) {
	case 'b':
	case 'B':
	case 'C':
	case 'E':
		return 1;
	case 'w':
		return 2;
	case 'e':
		return 3;
	case 'z':
	case 'Z':
	case 'j':
		return d->operand_bytes == 2 ? 2 : 4;
	case 'v':
		return (int)d->operand_bytes;
	case 'p':
		return d->operand_bytes == 8 ? -1 : (int)d->operand_bytes + 2;
	case 'o':
		return (int)d->address_bytes;
	default:
		return 0;
	}
}

/* ModRM, SIB and displacement. */
static bool read_operand(struct decoder *d, uint8_t modrm)
{
	unsigned mod = modrm >> 6, rm = modrm & 7;
	const uint8_t *bytes;
	uint8_t sib = 0;

	if (d->address_bytes != 2 && mod != 3 && rm == 4) {
		if (!next(d, 1, &bytes))
			return false;
		sib = bytes[0];
	}
	if (mod == 3)
		return true;
	if (mod == 1)
		return next(d, 1, &bytes);
	if (d->address_bytes == 2) {
		if ((mod == 0 && rm == 6) || mod == 2)
			return next(d, 2, &bytes);
		return true;
	}
	if ((mod == 0 && rm == 5) || mod == 2 || (mod == 0 && (sib & 7) == 5))
		return next(d, 4, &bytes);
	return true;
}

/* perf's intel_pt_insn_decoder(): the branches among the opcodes. */
static bool is_branch(const uint8_t *opcode, bool has_modrm, uint8_t modrm)
{
	/* ret, iret, int, call far, loop, jcxz, call, jmp (near, far, short) */
	static const uint8_t others[] = { 0xc2, 0xc3, 0xca, 0xcb, 0xcf, 0xcc, 0xcd, 0xce, 0x9a,
		                          0xe0, 0xe1, 0xe2, 0xe3, 0xe8, 0xe9, 0xea, 0xeb };
	unsigned reg = (modrm >> 3) & 7;

	if (opcode[0] == 0x0f) {
		/* vmlaunch and vmresume; syscall, sysenter, sysret, sysexit;
		 * jcc */
		if (opcode[1] == 0x01)
			return has_modrm && (modrm == 0xc2 || modrm == 0xc3);
		return opcode[1] == 0x05 || opcode[1] == 0x34 || opcode[1] == 0x07 ||
		       opcode[1] == 0x35 || (opcode[1] >= 0x80 && opcode[1] <= 0x8f);
	}
	if (opcode[0] >= 0x70 && opcode[0] <= 0x7f) /* jcc */
		return true;
	if (opcode[0] == 0xff) /* indirect call and jmp, near and far */
		return reg >= 2 && reg <= 5;
	return memchr(others, opcode[0], sizeof(others)) != NULL;
}

bool ps_insn_decode(const uint8_t *code, size_t size, bool x86_64, struct ps_insn *out)
{
	struct decoder d = { .code = code,
		             .end = size < MAX_LENGTH ? size : MAX_LENGTH,
		             .x86_64 = x86_64,
		             .operand_bytes = 4,
		             .address_bytes = x86_64 ? 8 : 4 };
	/* the opcode bytes (0F and the next for the escapes), and the one
	 * the map entry is of */
	uint8_t opcode[2] = { 0, 0 }, last, modrm = 0;
	const uint8_t *bytes;
	unsigned map = 0, variant;
	char class;
	int immediate;

	memset(out, 0, sizeof(*out));
	if (!read_prefixes(&d) || !next(&d, 1, &bytes))
		return false;
	opcode[0] = last = bytes[0];
	if (d.vex) {
		const char *table =
		        d.vex_map < PS_INSN_VEX_MAPS ? ps_insn_vex_maps[d.vex_map][0] : NULL;

		/* a group's entry is the map's without pp */
		if (table && table[last] != '*')
			table = ps_insn_vex_maps[d.vex_map][d.vex_pp];
		class = table ? table[last] : 'x';
		if (class == 'x' || ((class == 'M' || class == 'E') && !d.evex))
			return false;
		map = d.vex_map;
		variant = d.vex_pp;
	} else {
		variant = prefix_variant(d.last_prefix);
		class = ps_insn_primary_map[last];
		while (class == '^') {
			/* 0F leads to map 1, 0F 38 to map 2, 0F 3A to map 3 */
			map = map == 0 ? 1 : last == 0x38 ? 2 : 3;
			if (!next(&d, 1, &bytes))
				return false;
			last = bytes[0];
			if (map == 1)
				opcode[1] = last;
			class = ps_insn_escape_maps[map - 1][variant][last];
		}
		if (class == 'x')
			return false;
	}
	if (has_modrm(class)) {
		if (!next(&d, 1, &bytes))
			return false;
		modrm = bytes[0];
		if (class == '*') {
			class = group_entry(map, d.vex, last, variant, modrm);
			if (class == 'x')
				return false;
		}
		if (!read_operand(&d, modrm))
			return false;
	}
	/* near jumps and calls take 64-bit operands in 64-bit mode */
	if (class == 'j' && d.x86_64)
		d.operand_bytes = 8;
	immediate = immediate_bytes(&d, class);
	if (immediate < 0 || !next(&d, (size_t)immediate, &bytes))
		return false;
	out->length = (uint8_t)d.pos;
	out->branch = !d.vex && is_branch(opcode, has_modrm(class), modrm);
	return true;
}
