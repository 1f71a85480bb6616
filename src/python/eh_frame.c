/* A small DWARF CFA interpreter for the .eh_frame that CPython's perf_jit
 * writes into the jitdump for each trampoline (one CIE, one FDE): finds the
 * row that holds at a PC and turns it into a ps_unwind_rule. Bounded: every
 * read goes through a cursor over the blob, every instruction consumes
 * input, and anything it does not understand is rejected, never guessed.
 */
#include "python/python_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/cursor.h"

/* x86-64 DWARF register numbers */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define NR_REGS 17
#define MAX_REMEMBERED 8
/* offsets and advances beyond this are not a trampoline's */
#define MAX_VALUE ((int64_t)1 << 32)

/* pointer encodings (DW_EH_PE_*) */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_FORMAT_MASK 0x0f
#define PE_APPLICATION_MASK 0x70
#define PE_ALIGNED 0x50
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff

enum reg_kind { REG_SAME = 0, REG_UNDEFINED, REG_OFFSET };

struct reg_rule {
	enum reg_kind kind;
	int64_t offset; /* REG_OFFSET: saved at CFA + offset */
};

struct row {
	unsigned cfa_reg;
	int64_t cfa_offset;
	struct reg_rule regs[NR_REGS];
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_encoding;
	bool augmented; /* 'z': FDEs carry an augmentation length */
	struct ps_cursor insns;
};

struct interp {
	const struct cie *cie;
	struct row row;
	const struct row *initial; /* after the CIE's instructions; NULL while running them */
	struct row remembered[MAX_REMEMBERED];
	unsigned nr_remembered;
	uint64_t loc; /* code offset the row starts at */
	uint64_t target; /* pc - code start */
	bool reached; /* an advance went past target: row is final */
	char *errmsg;
	size_t errmsg_size;
};

static int fail(char *errmsg, size_t errmsg_size, int err, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int fail(char *errmsg, size_t errmsg_size, int err, const char *fmt, ...)
{
	if (errmsg && errmsg_size) {
		va_list ap;

		int n = snprintf(errmsg, errmsg_size, "eh_frame: ");
		va_start(ap, fmt);
		if (n > 0 && (size_t)n < errmsg_size)
			vsnprintf(errmsg + n, errmsg_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- bounded readers ----------------------------------------------------- */

static uint64_t read_uleb(struct ps_cursor *c)
{
	uint64_t value = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t byte = ps_cursor_u8(c);

		if (!ps_cursor_ok(c))
			return 0;
		value |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return value;
	}
	c->failed = true; /* more than 10 bytes */
	return 0;
}

static int64_t read_sleb(struct ps_cursor *c)
{
	uint64_t value = 0;
	unsigned shift = 0;

	while (shift < 64) {
		uint8_t byte = ps_cursor_u8(c);

		if (!ps_cursor_ok(c))
			return 0;
		value |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80)) {
			if (shift < 64 && (byte & 0x40))
				value |= ~(uint64_t)0 << shift;
			return (int64_t)value;
		}
	}
	c->failed = true;
	return 0;
}

/* A pointer in the given encoding; only its format matters here. Returns
 * false for encodings that cannot be read without the section's address
 * (indirect, aligned) or are unknown. */
static bool read_encoded(struct ps_cursor *c, uint8_t encoding, uint64_t *value)
{
	if (encoding == PE_OMIT || (encoding & PE_INDIRECT) ||
	    (encoding & PE_APPLICATION_MASK) == PE_ALIGNED)
		return false;
	switch (encoding & PE_FORMAT_MASK) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		*value = ps_cursor_u64(c);
		break;
	case PE_UDATA2:
		*value = ps_cursor_u16(c);
		break;
	case PE_SDATA2:
		*value = (uint64_t)(int64_t)(int16_t)ps_cursor_u16(c);
		break;
	case PE_UDATA4:
		*value = ps_cursor_u32(c);
		break;
	case PE_SDATA4:
		*value = (uint64_t)(int64_t)(int32_t)ps_cursor_u32(c);
		break;
	case PE_ULEB128:
		*value = read_uleb(c);
		break;
	case PE_SLEB128:
		*value = (uint64_t)read_sleb(c);
		break;
	default:
		return false;
	}
	return ps_cursor_ok(c);
}

static struct ps_cursor sub_cursor(struct ps_cursor *c, size_t n)
{
	const uint8_t *at = ps_cursor_take(c, n);
	struct ps_cursor sub = ps_cursor_make(at, at ? n : 0, c->swap);

	sub.failed = at == NULL;
	return sub;
}

/* ---- entries --------------------------------------------------------------- */

/* One CIE or FDE at the cursor: its body (after the length) and where the
 * body starts in the blob. Returns 0, 1 at a terminator or the end, or
 * -EINVAL. */
static int next_entry(struct ps_cursor *c, struct ps_cursor *body, size_t *body_at, char *errmsg,
                      size_t errmsg_size)
{
	if (ps_cursor_left(c) == 0)
		return 1;
	size_t at = ps_cursor_pos(c);
	uint32_t length = ps_cursor_u32(c);
	if (!ps_cursor_ok(c))
		return fail(errmsg, errmsg_size, -EINVAL, "truncated entry length at %zu", at);
	if (length == 0)
		return 1;
	if (length == 0xffffffffu)
		return fail(errmsg, errmsg_size, -EINVAL, "64-bit DWARF entry at %zu", at);
	*body_at = ps_cursor_pos(c);
	*body = sub_cursor(c, length);
	if (!ps_cursor_ok(body))
		return fail(errmsg, errmsg_size, -EINVAL,
		            "entry at %zu claims %u bytes, %zu are left", at, length,
		            ps_cursor_left(c));
	return 0;
}

static int parse_cie(struct ps_cursor body, struct cie *cie, char *errmsg, size_t errmsg_size)
{
	memset(cie, 0, sizeof(*cie));
	if (ps_cursor_u32(&body) != 0)
		return fail(errmsg, errmsg_size, -EINVAL, "the FDE's CIE pointer is not at a CIE");
	uint8_t version = ps_cursor_u8(&body);
	if (ps_cursor_ok(&body) && version != 1 && version != 3)
		return fail(errmsg, errmsg_size, -EINVAL, "CIE version %u", version);
	const char *augmentation = ps_cursor_string(&body, ps_cursor_left(&body), false);
	cie->code_align = read_uleb(&body);
	cie->data_align = read_sleb(&body);
	uint64_t ra = version == 1 ? ps_cursor_u8(&body) : read_uleb(&body);
	if (!ps_cursor_ok(&body))
		return fail(errmsg, errmsg_size, -EINVAL, "truncated CIE");
	if (ra != REG_RA)
		return fail(errmsg, errmsg_size, -EINVAL,
		            "the return address is register %llu, not x86-64's %d",
		            (unsigned long long)ra, REG_RA);
	if (cie->code_align == 0 || cie->code_align > 64 || cie->data_align < -64 ||
	    cie->data_align > 64)
		return fail(errmsg, errmsg_size, -EINVAL, "alignment factors %llu and %lld",
		            (unsigned long long)cie->code_align, (long long)cie->data_align);

	cie->fde_encoding = PE_ABSPTR;
	if (augmentation[0] == 'z') {
		uint64_t length = read_uleb(&body);
		if (length > ps_cursor_left(&body))
			return fail(errmsg, errmsg_size, -EINVAL, "truncated CIE augmentation");
		struct ps_cursor data = sub_cursor(&body, (size_t)length);
		uint64_t ignored;

		cie->augmented = true;
		for (const char *a = augmentation + 1; *a; a++) {
			switch (*a) {
			case 'R':
				cie->fde_encoding = ps_cursor_u8(&data);
				break;
			case 'L':
				ps_cursor_u8(&data); /* the FDE's LSDA pointer is skipped */
				break;
			case 'P': {
				uint8_t encoding = ps_cursor_u8(&data);
				if (ps_cursor_ok(&data) && !read_encoded(&data, encoding, &ignored))
					return fail(errmsg, errmsg_size, -EINVAL,
					            "personality encoding %#x", encoding);
				break;
			}
			case 'S': /* a signal frame: the rule is the same */
				break;
			default:
				return fail(errmsg, errmsg_size, -EINVAL, "CIE augmentation \"%s\"",
				            augmentation);
			}
		}
		if (!ps_cursor_ok(&data))
			return fail(errmsg, errmsg_size, -EINVAL, "truncated CIE augmentation");
	} else if (augmentation[0]) {
		return fail(errmsg, errmsg_size, -EINVAL, "CIE augmentation \"%s\"", augmentation);
	}
	cie->insns = body;
	return 0;
}

/* ---- the CFA program ------------------------------------------------------ */

static int bad(struct interp *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct interp *in, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fail(in->errmsg, in->errmsg_size, -EINVAL, "%s", msg);
}

/* factored offset * data alignment factor, bounded */
static int scale(struct interp *in, int64_t factored, int64_t *out)
{
	if (factored < -MAX_VALUE || factored > MAX_VALUE)
		return bad(in, "offset %lld out of range", (long long)factored);
	*out = factored * in->cie->data_align;
	return 0;
}

static int set_offset(struct interp *in, uint64_t reg, int64_t factored)
{
	int64_t offset = 0;
	int err = scale(in, factored, &offset);

	if (err)
		return err;
	if (reg >= NR_REGS)
		return bad(in, "register %llu saved: the rule cannot restore it",
		           (unsigned long long)reg);
	in->row.regs[reg] = (struct reg_rule){ .kind = REG_OFFSET, .offset = offset };
	return 0;
}

static int set_kind(struct interp *in, uint64_t reg, enum reg_kind kind)
{
	/* registers the rule does not carry (vector registers) are left alone */
	if (reg < NR_REGS)
		in->row.regs[reg] = (struct reg_rule){ .kind = kind };
	return 0;
}

static int restore(struct interp *in, uint64_t reg)
{
	if (!in->initial)
		return bad(in, "DW_CFA_restore in a CIE");
	if (reg < NR_REGS)
		in->row.regs[reg] = in->initial->regs[reg];
	return 0;
}

static int advance(struct interp *in, uint64_t delta)
{
	if (!in->initial)
		return bad(in, "DW_CFA_advance_loc in a CIE");
	if (delta > (uint64_t)MAX_VALUE)
		return bad(in, "advance of %llu", (unsigned long long)delta);
	uint64_t loc = in->loc + delta * in->cie->code_align;
	if (loc > in->target)
		in->reached = true;
	else
		in->loc = loc;
	return 0;
}

static int def_cfa(struct interp *in, uint64_t reg, int64_t offset)
{
	if (reg != REG_RSP && reg != REG_RBP)
		return bad(in, "CFA from register %llu, not rsp or rbp", (unsigned long long)reg);
	if (offset < -MAX_VALUE || offset > MAX_VALUE)
		return bad(in, "CFA offset %lld out of range", (long long)offset);
	in->row.cfa_reg = (unsigned)reg;
	in->row.cfa_offset = offset;
	return 0;
}

static int step(struct interp *in, struct ps_cursor *c)
{
	uint8_t op = ps_cursor_u8(c);
	uint8_t low = op & 0x3f;
	uint64_t reg;
	int64_t offset = 0;

	switch (op & 0xc0) {
	case 0x40: /* DW_CFA_advance_loc */
		return advance(in, low);
	case 0x80: /* DW_CFA_offset */
		return set_offset(in, low, (int64_t)read_uleb(c));
	case 0xc0: /* DW_CFA_restore */
		return restore(in, low);
	}
	switch (op) {
	case 0x00: /* DW_CFA_nop */
		return 0;
	case 0x02: /* DW_CFA_advance_loc1 */
		return advance(in, ps_cursor_u8(c));
	case 0x03: /* DW_CFA_advance_loc2 */
		return advance(in, ps_cursor_u16(c));
	case 0x04: /* DW_CFA_advance_loc4 */
		return advance(in, ps_cursor_u32(c));
	case 0x05: /* DW_CFA_offset_extended */
		reg = read_uleb(c);
		return set_offset(in, reg, (int64_t)read_uleb(c));
	case 0x06: /* DW_CFA_restore_extended */
		return restore(in, read_uleb(c));
	case 0x07: /* DW_CFA_undefined */
		return set_kind(in, read_uleb(c), REG_UNDEFINED);
	case 0x08: /* DW_CFA_same_value */
		return set_kind(in, read_uleb(c), REG_SAME);
	case 0x0a: /* DW_CFA_remember_state */
		if (in->nr_remembered == MAX_REMEMBERED)
			return bad(in, "more than %d remembered states", MAX_REMEMBERED);
		in->remembered[in->nr_remembered++] = in->row;
		return 0;
	case 0x0b: /* DW_CFA_restore_state: the CFA rule is part of the state */
		if (in->nr_remembered == 0)
			return bad(in, "DW_CFA_restore_state without a remembered state");
		in->row = in->remembered[--in->nr_remembered];
		return 0;
	case 0x0c: /* DW_CFA_def_cfa */
		reg = read_uleb(c);
		offset = (int64_t)read_uleb(c);
		return def_cfa(in, reg, offset);
	case 0x0d: /* DW_CFA_def_cfa_register */
		return def_cfa(in, read_uleb(c), in->row.cfa_offset);
	case 0x0e: /* DW_CFA_def_cfa_offset */
		return def_cfa(in, in->row.cfa_reg, (int64_t)read_uleb(c));
	case 0x11: /* DW_CFA_offset_extended_sf */
		reg = read_uleb(c);
		return set_offset(in, reg, read_sleb(c));
	case 0x12: /* DW_CFA_def_cfa_sf */
		reg = read_uleb(c);
		if (scale(in, read_sleb(c), &offset))
			return -EINVAL;
		return def_cfa(in, reg, offset);
	case 0x13: /* DW_CFA_def_cfa_offset_sf */
		if (scale(in, read_sleb(c), &offset))
			return -EINVAL;
		return def_cfa(in, in->row.cfa_reg, offset);
	case 0x2e: /* DW_CFA_GNU_args_size: about outgoing arguments only */
		read_uleb(c);
		return 0;
	case 0x2f: /* DW_CFA_GNU_negative_offset_extended */
		reg = read_uleb(c);
		return set_offset(in, reg, -(int64_t)read_uleb(c));
	default:
		/* set_loc, register, expressions, val_offset, vendor ops */
		return bad(in, "CFA instruction %#04x not understood", op);
	}
}

/* Run instructions until the end of the cursor or an advance past target. */
static int run(struct interp *in, struct ps_cursor c)
{
	while (!in->reached && ps_cursor_left(&c) > 0) {
		size_t at = ps_cursor_pos(&c);
		int err = step(in, &c);

		if (err)
			return err;
		if (!ps_cursor_ok(&c))
			return bad(in, "truncated CFA instruction at %zu", at);
	}
	return 0;
}

static int to_rule(struct interp *in, struct ps_unwind_rule *out)
{
	const struct row *row = &in->row;

	if (row->regs[REG_RA].kind != REG_OFFSET)
		return bad(in, "the return address is %s",
		           row->regs[REG_RA].kind == REG_UNDEFINED ? "undefined (outermost frame)"
		                                                   : "not saved");
	for (unsigned reg = 0; reg < REG_RA; reg++) {
		if (reg == REG_RBP)
			continue;
		if (row->regs[reg].kind == REG_OFFSET)
			return bad(in, "register %u saved: the rule cannot restore it", reg);
	}
	if (row->regs[REG_RBP].kind == REG_UNDEFINED)
		return bad(in, "rbp is undefined");
	if (row->cfa_reg != REG_RSP && row->cfa_reg != REG_RBP)
		return bad(in, "no CFA rule");
	*out = (struct ps_unwind_rule){
		.cfa_base = row->cfa_reg == REG_RSP ? PS_UNWIND_CFA_SP : PS_UNWIND_CFA_RBP,
		.cfa_offset = row->cfa_offset,
		.ra_offset = row->regs[REG_RA].offset,
		.rbp_saved = row->regs[REG_RBP].kind == REG_OFFSET,
		.rbp_offset = row->regs[REG_RBP].kind == REG_OFFSET ? row->regs[REG_RBP].offset : 0,
	};
	return 0;
}

/* ---- the FDE ------------------------------------------------------------ */

int ps_eh_frame_rule(const uint8_t *eh_frame, size_t size, uint64_t code_start, uint64_t pc,
                     struct ps_unwind_rule *out, char *errmsg, size_t errmsg_size)
{
	const bool swap = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__; /* x86-64 data */
	struct ps_cursor all, body, fde_body = { 0 };
	size_t body_at = 0, fde_at = 0, nr_fdes = 0;
	uint32_t cie_pointer = 0;
	int rc;

	if (!eh_frame || !out)
		return fail(errmsg, errmsg_size, -EINVAL, "invalid arguments");
	all = ps_cursor_make(eh_frame, size, swap);
	while ((rc = next_entry(&all, &body, &body_at, errmsg, errmsg_size)) == 0) {
		uint32_t id = ps_cursor_u32(&body);

		if (!ps_cursor_ok(&body))
			return fail(errmsg, errmsg_size, -EINVAL, "truncated entry at %zu",
			            body_at);
		if (id == 0)
			continue; /* a CIE: parsed when its FDE is */
		if (nr_fdes++) {
			return fail(errmsg, errmsg_size, -EINVAL,
			            "more than one FDE: their locations are ambiguous");
		}
		fde_body = body;
		fde_at = body_at;
		cie_pointer = id;
	}
	if (rc < 0)
		return rc;
	if (nr_fdes == 0)
		return fail(errmsg, errmsg_size, -EINVAL, "no FDE");

	/* the CIE pointer counts back from its own field (the FDE body's
	 * start) to the CIE's length field */
	struct ps_cursor at_cie = ps_cursor_make(eh_frame, size, swap);
	if (cie_pointer > fde_at || !ps_cursor_skip(&at_cie, fde_at - cie_pointer))
		return fail(errmsg, errmsg_size, -EINVAL, "CIE pointer %u leaves the blob",
		            cie_pointer);
	size_t cie_body_at;
	struct ps_cursor cie_body;
	if (next_entry(&at_cie, &cie_body, &cie_body_at, errmsg, errmsg_size) != 0)
		return fail(errmsg, errmsg_size, -EINVAL, "CIE pointer %u is not at an entry",
		            cie_pointer);
	struct cie cie;
	rc = parse_cie(cie_body, &cie, errmsg, errmsg_size);
	if (rc)
		return rc;

	uint64_t begin, range;
	if (!read_encoded(&fde_body, cie.fde_encoding, &begin) ||
	    !read_encoded(&fde_body, cie.fde_encoding & PE_FORMAT_MASK, &range))
		return fail(errmsg, errmsg_size, -EINVAL, "FDE location in encoding %#x",
		            cie.fde_encoding);
	if (cie.augmented) {
		uint64_t length = read_uleb(&fde_body);
		if (!ps_cursor_ok(&fde_body) || length > ps_cursor_left(&fde_body))
			return fail(errmsg, errmsg_size, -EINVAL, "truncated FDE augmentation");
		ps_cursor_skip(&fde_body, (size_t)length);
	}
	if (pc < code_start || pc - code_start >= range)
		return fail(errmsg, errmsg_size, -ERANGE,
		            "pc %#llx outside the FDE's [%#llx, %#llx)", (unsigned long long)pc,
		            (unsigned long long)code_start,
		            (unsigned long long)(code_start + range));

	struct interp in = {
		.cie = &cie,
		.target = pc - code_start,
		.errmsg = errmsg,
		.errmsg_size = errmsg_size,
	};
	/* no CFA rule until the CIE sets one */
	in.row.cfa_reg = NR_REGS;
	rc = run(&in, cie.insns);
	if (rc)
		return rc;
	struct row initial = in.row;
	in.initial = &initial;
	in.nr_remembered = 0;
	rc = run(&in, fde_body);
	if (rc)
		return rc;
	return to_rule(&in, out);
}
