/* Local variables of one function from its DWARF: where each named
 * variable lives at every address of the function (its location list,
 * the variable of the innermost lexical block winning), compiled once per
 * DSO, and its value in one frame of a sample from the registers the
 * unwinder recovered for that frame and the sample's stack copy. The
 * Python side reads the instruction pointer of CPython's eval loop so.
 */
#include "symbols/dso_priv.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

/* Lexical blocks nested deeper than this are not looked into. */
#define MAX_DEPTH 32
/* The DWARF stack of one evaluation. */
#define EVAL_STACK 16

/* Where one variable is over [low, high): ops, or nowhere that can be
 * computed (usable false: a location this file cannot evaluate, which
 * still hides the variable of an outer block). */
struct var_segment {
	uint64_t low, high;
	uint32_t first_op, nr_ops;
	bool usable;
};

/* A location list entry of a variable of the given block depth, before
 * the innermost ones are chosen. */
struct var_entry {
	uint64_t low, high;
	uint32_t first_op, nr_ops;
	unsigned depth;
	bool usable;
};

struct var_list {
	struct var_segment *segments;
	size_t nr;
	struct var_entry *entries; /* while building */
	size_t nr_entries, cap_entries;
};

struct ps_function_variables {
	struct ps_function_variables *next; /* the DSO's list */
	Dwarf_Off die; /* the subprogram's DIE */
	uint64_t text_offset; /* file-relative address + this = DWARF address */
	uint64_t *ranges; /* the function's code: low, high pairs, DWARF addresses */
	size_t nr_ranges;
	char *names[PS_VARIABLES_MAX];
	size_t nr_names;
	struct var_list vars[PS_VARIABLES_MAX];
	struct ps_var_op *ops;
	size_t nr_ops, cap_ops;
	uint32_t frame_base_first, frame_base_nr;
	bool frame_base_usable;
};

/* ---- building -------------------------------------------------------- */

static bool atom_supported(uint8_t atom)
{
	if ((atom >= DW_OP_lit0 && atom <= DW_OP_lit31) ||
	    (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) ||
	    (atom >= DW_OP_breg0 && atom <= DW_OP_breg31))
		return true;
	switch (atom) {
	case DW_OP_regx:
	case DW_OP_bregx:
	case DW_OP_fbreg:
	case DW_OP_call_frame_cfa:
	case DW_OP_const1u:
	case DW_OP_const1s:
	case DW_OP_const2u:
	case DW_OP_const2s:
	case DW_OP_const4u:
	case DW_OP_const4s:
	case DW_OP_const8u:
	case DW_OP_const8s:
	case DW_OP_constu:
	case DW_OP_consts:
	case DW_OP_dup:
	case DW_OP_drop:
	case DW_OP_over:
	case DW_OP_pick:
	case DW_OP_swap:
	case DW_OP_rot:
	case DW_OP_deref:
	case DW_OP_deref_size:
	case DW_OP_abs:
	case DW_OP_and:
	case DW_OP_minus:
	case DW_OP_mul:
	case DW_OP_neg:
	case DW_OP_not:
	case DW_OP_or:
	case DW_OP_plus:
	case DW_OP_plus_uconst:
	case DW_OP_shl:
	case DW_OP_shr:
	case DW_OP_shra:
	case DW_OP_xor:
	case DW_OP_stack_value:
	case DW_OP_nop:
		return true;
	default:
		/* entry values, pieces, implicit pointers, calls, branches */
		return false;
	}
}

/* Copy an expression; *usable false when it holds an operation the
 * evaluator does not do (it is then not copied). */
static int add_ops(struct ps_function_variables *v, const Dwarf_Op *expr, size_t len,
                   uint32_t *first, uint32_t *nr, bool *usable)
{
	*first = (uint32_t)v->nr_ops;
	*nr = 0;
	*usable = len > 0;
	for (size_t i = 0; i < len && *usable; i++)
		*usable = atom_supported(expr[i].atom);
	if (!*usable)
		return 0;
	if (v->nr_ops + len > UINT32_MAX ||
	    !ps_array_reserve((void **)&v->ops, &v->cap_ops, v->nr_ops + len, sizeof(*v->ops), 256))
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		v->ops[v->nr_ops++] = (struct ps_var_op){ .atom = expr[i].atom,
			                                  .number = expr[i].number,
			                                  .number2 = expr[i].number2 };
	*nr = (uint32_t)len;
	return 0;
}

/* The code ranges of a scope, as low, high pairs into *out. */
static int scope_ranges(Dwarf_Die *die, uint64_t **out, size_t *nr)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t offset = 0;
	size_t cap = 0;

	*out = NULL;
	*nr = 0;
	while ((offset = dwarf_ranges(die, offset, &base, &start, &end)) > 0) {
		if (start >= end)
			continue;
		if (!ps_array_reserve((void **)out, &cap, 2 * (*nr + 1), sizeof(**out), 8)) {
			free(*out);
			*out = NULL;
			return -ENOMEM;
		}
		(*out)[2 * *nr] = start;
		(*out)[2 * *nr + 1] = end;
		(*nr)++;
	}
	return 0;
}

static int add_entry(struct var_list *list, uint64_t low, uint64_t high, unsigned depth,
                     uint32_t first, uint32_t nr, bool usable)
{
	if (low >= high)
		return 0;
	if (!ps_array_reserve((void **)&list->entries, &list->cap_entries, list->nr_entries + 1,
	                      sizeof(*list->entries), 64))
		return -ENOMEM;
	list->entries[list->nr_entries++] = (struct var_entry){
		.low = low,
		.high = high,
		.depth = depth,
		.first_op = first,
		.nr_ops = nr,
		.usable = usable,
	};
	return 0;
}

/* A variable of a scope at depth whose code is ranges: its location list
 * entries, each cut to the scope (an expression that is not a list holds
 * over the whole scope). */
static int add_variable(struct ps_function_variables *v, struct var_list *list, Dwarf_Die *die,
                        unsigned depth, const uint64_t *ranges, size_t nr_ranges)
{
	Dwarf_Attribute attr;
	Dwarf_Addr base, start, end;
	Dwarf_Op *expr;
	size_t len;
	ptrdiff_t offset = 0;
	int err;

	if (!dwarf_attr_integrate(die, DW_AT_location, &attr))
		return 0; /* optimised out everywhere */
	while ((offset = dwarf_getlocations(&attr, offset, &base, &start, &end, &expr, &len)) > 0) {
		uint32_t first, nr;
		bool usable;

		err = add_ops(v, expr, len, &first, &nr, &usable);
		if (err)
			return err;
		for (size_t r = 0; r < nr_ranges; r++) {
			uint64_t low = start > ranges[2 * r] ? start : ranges[2 * r];
			uint64_t high = end < ranges[2 * r + 1] ? end : ranges[2 * r + 1];

			err = add_entry(list, low, high, depth, first, nr, usable);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The variables of the scope die (at depth, over ranges) and of the
 * lexical blocks inside it. Inlined functions are not looked into: their
 * variables are theirs, not the function's. */
static int walk_scope(struct ps_function_variables *v, Dwarf_Die *scope, unsigned depth,
                      const uint64_t *ranges, size_t nr_ranges)
{
	Dwarf_Die child;
	int err = 0;

	if (dwarf_child(scope, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) {
			const char *name = dwarf_diename(&child);

			for (size_t i = 0; name && i < v->nr_names && !err; i++)
				if (strcmp(name, v->names[i]) == 0)
					err = add_variable(v, &v->vars[i], &child, depth, ranges,
					                   nr_ranges);
		} else if (tag == DW_TAG_lexical_block && depth + 1 < MAX_DEPTH) {
			uint64_t *inner;
			size_t nr_inner;

			err = scope_ranges(&child, &inner, &nr_inner);
			if (!err && nr_inner)
				err = walk_scope(v, &child, depth + 1, inner, nr_inner);
			free(inner);
		}
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

static int compare_entries(const void *pa, const void *pb)
{
	const struct var_entry *a = pa, *b = pb;

	if (a->low != b->low)
		return a->low < b->low ? -1 : 1;
	return (a->depth > b->depth) - (a->depth < b->depth);
}

static int compare_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

static int push_segment(struct var_list *list, size_t *cap, const struct var_entry *e, uint64_t low,
                        uint64_t high)
{
	struct var_segment *last = list->nr ? &list->segments[list->nr - 1] : NULL;

	if (last && last->high == low && last->first_op == e->first_op &&
	    last->nr_ops == e->nr_ops && last->usable == e->usable) {
		last->high = high;
		return 0;
	}
	if (!ps_array_reserve((void **)&list->segments, cap, list->nr + 1, sizeof(*list->segments),
	                      64))
		return -ENOMEM;
	list->segments[list->nr++] = (struct var_segment){
		.low = low,
		.high = high,
		.first_op = e->first_op,
		.nr_ops = e->nr_ops,
		.usable = e->usable,
	};
	return 0;
}

/* The entries of a variable made into sorted segments that do not
 * overlap: where entries overlap, the deepest block's wins (of one depth,
 * the first). */
static int flatten(struct var_list *list)
{
	size_t n = list->nr_entries, nr_points = 0, next = 0, nr_active = 0, cap = 0;
	uint64_t *points;
	size_t *active;
	int err = 0;

	if (!n)
		return 0;
	qsort(list->entries, n, sizeof(*list->entries), compare_entries);
	points = malloc(2 * n * sizeof(*points));
	active = malloc(n * sizeof(*active));
	if (!points || !active) {
		free(points);
		free(active);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		points[nr_points++] = list->entries[i].low;
		points[nr_points++] = list->entries[i].high;
	}
	qsort(points, nr_points, sizeof(*points), compare_u64);
	for (size_t p = 0; p + 1 < nr_points && !err; p++) {
		uint64_t low = points[p], high = points[p + 1];
		const struct var_entry *best = NULL;
		size_t kept = 0;

		if (low == high)
			continue;
		/* the entries that cover [low, high) are those begun by low
		 * and not ended by it */
		while (next < n && list->entries[next].low <= low)
			active[nr_active++] = next++;
		for (size_t a = 0; a < nr_active; a++) {
			const struct var_entry *e = &list->entries[active[a]];

			if (e->high <= low)
				continue;
			active[kept++] = active[a];
			if (!best || e->depth > best->depth)
				best = e;
		}
		nr_active = kept;
		if (best)
			err = push_segment(list, &cap, best, low, high);
	}
	free(points);
	free(active);
	free(list->entries);
	list->entries = NULL;
	list->nr_entries = list->cap_entries = 0;
	return err;
}

static void variables_free(struct ps_function_variables *v)
{
	for (size_t i = 0; i < PS_VARIABLES_MAX; i++) {
		free(v->vars[i].segments);
		free(v->vars[i].entries);
		free(v->names[i]);
	}
	free(v->ranges);
	free(v->ops);
	free(v);
}

void ps_variables_free_list(struct ps_function_variables *list)
{
	while (list) {
		struct ps_function_variables *next = list->next;

		variables_free(list);
		list = next;
	}
}

struct function_search {
	Dwarf_Addr address;
	Dwarf_Die found;
	bool ok;
};

static int match_function(Dwarf_Die *function, void *arg)
{
	struct function_search *search = arg;

	if (dwarf_haspc(function, search->address) != 1)
		return DWARF_CB_OK;
	search->found = *function;
	search->ok = true;
	return DWARF_CB_ABORT;
}

/* The function (a subprogram of its unit, not an inlined copy) whose code
 * holds the DWARF address. dwarf_getscopes() does not do: from inside an
 * inlined call it goes on with the inlined function's own scopes. */
static bool find_function(Dwarf *dwarf, uint64_t address, Dwarf_Die *out)
{
	struct function_search search = { .address = address };
	Dwarf_Die cu;

	if (!dwarf_addrdie(dwarf, address, &cu))
		return false;
	dwarf_getfuncs(&cu, match_function, &search, 0);
	if (search.ok)
		*out = search.found;
	return search.ok;
}

static int build(Dwarf_Die *function, uint64_t text_offset, const char *const *names, size_t nr,
                 struct ps_function_variables **out)
{
	struct ps_function_variables *v = calloc(1, sizeof(*v));
	Dwarf_Attribute attr;
	int err;

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->die = dwarf_dieoffset(function);
	v->text_offset = text_offset;
	v->nr_names = nr;
	err = scope_ranges(function, &v->ranges, &v->nr_ranges);
	for (size_t i = 0; i < nr && !err; i++)
		if (!(v->names[i] = strdup(names[i])))
			err = -ENOMEM;
	/* the frame base DW_OP_fbreg counts from: DW_OP_call_frame_cfa
	 * mostly; a location list of its own is not taken */
	if (!err && dwarf_attr_integrate(function, DW_AT_frame_base, &attr)) {
		Dwarf_Op *expr;
		size_t len;

		if (dwarf_getlocation(&attr, &expr, &len) == 0)
			err = add_ops(v, expr, len, &v->frame_base_first, &v->frame_base_nr,
			              &v->frame_base_usable);
	}
	if (!err)
		err = walk_scope(v, function, 0, v->ranges, v->nr_ranges);
	for (size_t i = 0; i < nr && !err; i++)
		err = flatten(&v->vars[i]);
	if (err) {
		variables_free(v);
		return err;
	}
	*out = v;
	return 0;
}

static bool same_names(const struct ps_function_variables *v, const char *const *names, size_t nr)
{
	if (v->nr_names != nr)
		return false;
	for (size_t i = 0; i < nr; i++)
		if (strcmp(v->names[i], names[i]) != 0)
			return false;
	return true;
}

bool ps_variables_cover(const struct ps_function_variables *v, uint64_t addr)
{
	uint64_t address = addr + v->text_offset;

	for (size_t r = 0; r < v->nr_ranges; r++)
		if (address >= v->ranges[2 * r] && address < v->ranges[2 * r + 1])
			return true;
	return false;
}

int ps_dso_variables(struct ps_dso *dso, uint64_t addr, const char *const *names, size_t nr,
                     const struct ps_function_variables **out)
{
	struct ps_function_variables *v;
	struct ps_elf *file;
	Dwarf_Die function;
	Dwarf *dwarf;
	int err;

	*out = NULL;
	if (nr == 0 || nr > PS_VARIABLES_MAX)
		return -EINVAL;
	ps_dso_locate(dso);
	for (v = dso->variables; v; v = v->next) {
		if (ps_variables_cover(v, addr) && same_names(v, names, nr)) {
			*out = v;
			return 0;
		}
	}
	if (dso->variables_failed)
		return -ENOENT;
	file = dso->a2l_file ? dso->a2l_file : dso->syms;
	dwarf = file ? ps_elf_dwarf_locations(file) : NULL;
	if (!dwarf || !find_function(dwarf, addr + dso->text_offset, &function))
		return -ENOENT;
	for (v = dso->variables; v; v = v->next) {
		if (v->die == dwarf_dieoffset(&function) && same_names(v, names, nr)) {
			*out = v;
			return 0;
		}
	}
	err = build(&function, dso->text_offset, names, nr, &v);
	if (err) {
		dso->variables_failed = err == -ENOMEM;
		return err;
	}
	v->next = dso->variables;
	dso->variables = v;
	*out = v;
	return 0;
}

/* ---- evaluating ------------------------------------------------------ */

static bool frame_reg(const struct ps_frame_state *frame, uint64_t regno, uint64_t *out)
{
	if (regno >= PS_FRAME_REGS || !(frame->present & (1u << regno)))
		return false;
	*out = frame->regs[regno];
	return true;
}

/* size bytes (1 to 8) of the stack copy at addr, little-endian. */
static bool frame_read(const struct ps_frame_state *frame, uint64_t addr, unsigned size,
                       uint64_t *out)
{
	uint64_t value = 0;

	if (size == 0 || size > 8 || addr < frame->stack_addr ||
	    addr - frame->stack_addr > frame->stack_size ||
	    frame->stack_size - (addr - frame->stack_addr) < size)
		return false;
	memcpy(&value, frame->stack + (addr - frame->stack_addr), size);
	*out = value;
	return true;
}

/* Evaluate a location expression: the variable's value (from a register,
 * DW_OP_stack_value, or the 8 bytes of the stack copy at the address it
 * computes). base: the function's frame base (NULL: the expression is the
 * frame base, whose value is the address itself). */
static bool eval_ops(const struct ps_var_op *ops, size_t n, const struct ps_var_op *base,
                     size_t nr_base, const struct ps_frame_state *frame, uint64_t *out)
{
	bool frame_base = base == NULL;
	uint64_t stack[EVAL_STACK], a, b;
	size_t sp = 0;
	bool value = false;

#define PUSH(x)                                                                                    \
	do {                                                                                       \
		uint64_t pushed_ = (x);                                                            \
		if (sp == EVAL_STACK)                                                              \
			return false;                                                              \
		stack[sp] = pushed_;                                                               \
		sp++;                                                                              \
	} while (0)
#define NEED(k)                                                                                    \
	do {                                                                                       \
		if (sp < (k))                                                                      \
			return false;                                                              \
	} while (0)

	for (size_t i = 0; i < n; i++) {
		uint8_t atom = ops[i].atom;
		uint64_t number = ops[i].number;

		if (value)
			return false; /* DW_OP_stack_value ends an expression */
		if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
			/* a register location is the whole expression */
			return n == 1 && frame_reg(frame, atom - DW_OP_reg0, out);
		}
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH((uint64_t)(atom - DW_OP_lit0));
			continue;
		}
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			if (!frame_reg(frame, atom - DW_OP_breg0, &a))
				return false;
			PUSH(a + number);
			continue;
		}
		switch (atom) {
		case DW_OP_regx:
			return n == 1 && frame_reg(frame, number, out);
		case DW_OP_bregx:
			if (!frame_reg(frame, number, &a))
				return false;
			PUSH(a + ops[i].number2);
			break;
		case DW_OP_fbreg:
			if (frame_base || !nr_base || !eval_ops(base, nr_base, NULL, 0, frame, &a))
				return false;
			PUSH(a + number);
			break;
		case DW_OP_call_frame_cfa:
			if (!frame->has_cfa)
				return false;
			PUSH(frame->cfa);
			break;
		case DW_OP_const1u:
		case DW_OP_const1s:
		case DW_OP_const2u:
		case DW_OP_const2s:
		case DW_OP_const4u:
		case DW_OP_const4s:
		case DW_OP_const8u:
		case DW_OP_const8s:
		case DW_OP_constu:
		case DW_OP_consts:
			PUSH(number); /* libdw keeps signed ones sign-extended */
			break;
		case DW_OP_dup:
			NEED(1);
			PUSH(stack[sp - 1]);
			break;
		case DW_OP_drop:
			NEED(1);
			sp--;
			break;
		case DW_OP_over:
			NEED(2);
			PUSH(stack[sp - 2]);
			break;
		case DW_OP_pick:
			NEED(number + 1);
			PUSH(stack[sp - 1 - number]);
			break;
		case DW_OP_swap:
			NEED(2);
			a = stack[sp - 1];
			stack[sp - 1] = stack[sp - 2];
			stack[sp - 2] = a;
			break;
		case DW_OP_rot:
			NEED(3);
			a = stack[sp - 1];
			stack[sp - 1] = stack[sp - 2];
			stack[sp - 2] = stack[sp - 3];
			stack[sp - 3] = a;
			break;
		case DW_OP_deref:
			NEED(1);
			if (!frame_read(frame, stack[sp - 1], 8, &stack[sp - 1]))
				return false;
			break;
		case DW_OP_deref_size:
			NEED(1);
			if (!frame_read(frame, stack[sp - 1], (unsigned)number, &stack[sp - 1]))
				return false;
			break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)stack[sp - 1] < 0)
				stack[sp - 1] = -stack[sp - 1];
			break;
		case DW_OP_neg:
			NEED(1);
			stack[sp - 1] = -stack[sp - 1];
			break;
		case DW_OP_not:
			NEED(1);
			stack[sp - 1] = ~stack[sp - 1];
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			stack[sp - 1] += number;
			break;
		case DW_OP_and:
		case DW_OP_minus:
		case DW_OP_mul:
		case DW_OP_or:
		case DW_OP_plus:
		case DW_OP_shl:
		case DW_OP_shr:
		case DW_OP_shra:
		case DW_OP_xor:
			NEED(2);
			b = stack[--sp];
			a = stack[sp - 1];
			switch (atom) {
			case DW_OP_and:
				a &= b;
				break;
			case DW_OP_minus:
				a -= b;
				break;
			case DW_OP_mul:
				a *= b;
				break;
			case DW_OP_or:
				a |= b;
				break;
			case DW_OP_plus:
				a += b;
				break;
			case DW_OP_shl:
				a = b >= 64 ? 0 : a << b;
				break;
			case DW_OP_shr:
				a = b >= 64 ? 0 : a >> b;
				break;
			case DW_OP_shra:
				/* arithmetic: the sign bit fills in */
				if (b >= 64)
					b = 63;
				a = a >> 63 ? ~(~a >> b) : a >> b;
				break;
			default:
				a ^= b;
				break;
			}
			stack[sp - 1] = a;
			break;
		case DW_OP_stack_value:
			value = true;
			break;
		case DW_OP_nop:
			break;
		default:
			return false;
		}
	}
#undef PUSH
#undef NEED
	if (!sp)
		return false;
	if (value || frame_base) {
		*out = stack[sp - 1];
		return true;
	}
	/* a memory location: the variable is the word there */
	return frame_read(frame, stack[sp - 1], 8, out);
}

bool ps_variables_eval(const struct ps_var_op *ops, size_t n, const struct ps_var_op *frame_base,
                       size_t nr_frame_base, const struct ps_frame_state *frame, uint64_t *value)
{
	static const struct ps_var_op none;

	/* a non-NULL base: this is a variable's expression, not the base's */
	return eval_ops(ops, n, frame_base ? frame_base : &none, frame_base ? nr_frame_base : 0,
	                frame, value);
}

int ps_variables_value(const struct ps_function_variables *v, size_t index, uint64_t addr,
                       const struct ps_frame_state *frame, uint64_t *value)
{
	const struct var_list *list;
	uint64_t address = addr + v->text_offset;
	size_t low = 0, high;

	if (index >= v->nr_names)
		return -EINVAL;
	list = &v->vars[index];
	high = list->nr;
	while (low < high) {
		size_t mid = low + (high - low) / 2;
		const struct var_segment *s = &list->segments[mid];

		if (address < s->low) {
			high = mid;
		} else if (address >= s->high) {
			low = mid + 1;
		} else {
			if (!s->usable)
				return 0;
			return ps_variables_eval(
			               v->ops + s->first_op, s->nr_ops,
			               v->frame_base_usable ? v->ops + v->frame_base_first : NULL,
			               v->frame_base_usable ? v->frame_base_nr : 0, frame, value)
			               ? 1
			               : 0;
		}
	}
	return 0;
}
