/* Unit tests of the local variables of a function (src/symbols/variables.c):
 * variables_fixture.c is built (-O0 -g) and run, and prints where its
 * probe()'s variables are, seen from inside it; what the DWARF of the same
 * file says of them must agree, read from a frame made up for the test. And
 * the evaluator of location expressions, operation by operation. */
#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "symbols/symbols_priv.h"

/* what the fixture printed */
struct probe_facts {
	char path[512];
	uint64_t inner_pc, outer_pc;
	long inner_offset, outer_offset, arg_offset;
	long inner_value, outer_value, arg_value, pinned_value;
	bool ok;
};

static struct probe_facts facts;

static void build_probe(void)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char command[2048], out[600];
	FILE *f;

	if (facts.ok)
		return;
	ck_assert(fixture.ok);
	fmt(facts.path, sizeof(facts.path), "%s/variables", fixture.dir);
	fmt(out, sizeof(out), "%s/variables.out", fixture.dir);
	fmt(command, sizeof(command), "%s -O0 -g -o %s %s/variables_fixture.c && %s > %s", cc,
	    facts.path, PS_TEST_SRCDIR, facts.path, out);
	ck_assert_int_eq(system(command), 0);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "inner %lu %ld %ld\n", &facts.inner_pc, &facts.inner_offset,
	                        &facts.inner_value),
	                 3);
	ck_assert_int_eq(fscanf(f, "outer %lu %ld %ld\n", &facts.outer_pc, &facts.outer_offset,
	                        &facts.outer_value),
	                 3);
	ck_assert_int_eq(fscanf(f, "arg %ld %ld\n", &facts.arg_offset, &facts.arg_value), 2);
	ck_assert_int_eq(fscanf(f, "pinned %ld\n", &facts.pinned_value), 1);
	fclose(f);
	facts.ok = true;
}

/* A frame whose CFA is cfa, with a stack copy of 4 KiB below it holding
 * value at cfa + offset for each given pair, a pattern elsewhere. */
#define STACK_BYTES 4096
struct made_frame {
	struct ps_frame_state state;
	uint8_t stack[STACK_BYTES + 64];
};

static void make_frame(struct made_frame *f, uint64_t cfa)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < sizeof(f->stack); i++)
		f->stack[i] = (uint8_t)(0xa5 ^ i);
	f->state.cfa = cfa;
	f->state.has_cfa = true;
	f->state.stack = f->stack;
	f->state.stack_addr = cfa - STACK_BYTES;
	f->state.stack_size = sizeof(f->stack);
	for (unsigned r = 0; r < PS_FRAME_REGS; r++)
		f->state.regs[r] = 0x1000 + r;
	f->state.present = (1u << PS_FRAME_REGS) - 1;
}

static void put_word(struct made_frame *f, long offset, uint64_t value)
{
	uint64_t at = f->state.cfa + (uint64_t)offset - f->state.stack_addr;

	ck_assert_uint_le(at + 8, sizeof(f->stack));
	memcpy(f->stack + at, &value, 8);
}

static const char *const probe_names[] = { "local", "arg", "pinned", "nothing_so_named" };

START_TEST(test_fixture_variables)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts) };
	const struct ps_function_variables *vars, *again;
	struct ps_symbols *symbols;
	struct made_frame frame;
	struct ps_dso *dso;
	uint64_t value;

	build_probe();
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	dso = ps_symbols_dso(symbols, facts.path, NULL, 0);
	ck_assert_int_eq(ps_dso_variables(dso, facts.inner_pc, probe_names, 4, &vars), 0);
	ck_assert(ps_variables_cover(vars, facts.inner_pc));
	ck_assert(ps_variables_cover(vars, facts.outer_pc));
	/* the same table for any address of the function, built once */
	ck_assert_int_eq(ps_dso_variables(dso, facts.outer_pc, probe_names, 4, &again), 0);
	ck_assert_ptr_eq(vars, again);

	make_frame(&frame, 0x7ff000010000ull);
	put_word(&frame, facts.inner_offset, (uint64_t)facts.inner_value);
	put_word(&frame, facts.outer_offset, (uint64_t)facts.outer_value);
	put_word(&frame, facts.arg_offset, (uint64_t)facts.arg_value);
	frame.state.regs[12] = (uint64_t)facts.pinned_value;
	/* the inner block's local hides the outer one there only */
	ck_assert_int_eq(ps_variables_value(vars, 0, facts.inner_pc, &frame.state, &value), 1);
	ck_assert_uint_eq(value, (uint64_t)facts.inner_value);
	ck_assert_int_eq(ps_variables_value(vars, 0, facts.outer_pc, &frame.state, &value), 1);
	ck_assert_uint_eq(value, (uint64_t)facts.outer_value);
	ck_assert_int_eq(ps_variables_value(vars, 1, facts.inner_pc, &frame.state, &value), 1);
	ck_assert_uint_eq(value, (uint64_t)facts.arg_value);
	ck_assert_int_eq(ps_variables_value(vars, 2, facts.outer_pc, &frame.state, &value), 1);
	ck_assert_uint_eq(value, (uint64_t)facts.pinned_value);
	/* what the frame lacks: the register, the CFA, the slot */
	frame.state.present &= ~(1u << 12);
	ck_assert_int_eq(ps_variables_value(vars, 2, facts.outer_pc, &frame.state, &value), 0);
	frame.state.has_cfa = false;
	ck_assert_int_eq(ps_variables_value(vars, 1, facts.inner_pc, &frame.state, &value), 0);
	frame.state.has_cfa = true;
	frame.state.stack_size = STACK_BYTES + (uint64_t)facts.arg_offset + 4;
	ck_assert_int_eq(ps_variables_value(vars, 1, facts.inner_pc, &frame.state, &value), 0);
	/* no such variable, an address outside, a bad index */
	ck_assert_int_eq(ps_variables_value(vars, 3, facts.inner_pc, &frame.state, &value), 0);
	ck_assert_int_eq(ps_variables_value(vars, 0, 0, &frame.state, &value), 0);
	ck_assert_int_eq(ps_variables_value(vars, 4, facts.inner_pc, &frame.state, &value),
	                 -EINVAL);
	ck_assert_int_eq(ps_dso_variables(dso, facts.inner_pc, probe_names, 0, &again), -EINVAL);
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_no_debug_info)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts) };
	const struct ps_function_variables *vars;
	struct ps_symbols *symbols;
	struct ps_dso *dso;
	uint64_t size, addr = fixture_symbol("inl_outer", &size);

	ck_assert(fixture.ok);
	ck_assert_uint_ne(addr, UINT64_MAX);
	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	dso = ps_symbols_dso(symbols, fixture.stripped, NULL, 0);
	ck_assert_int_eq(ps_dso_variables(dso, addr, probe_names, 1, &vars), -ENOENT);
	ck_assert_ptr_null(vars);
	ps_symbols_free(symbols);
}
END_TEST

/* ---- the evaluator ------------------------------------------------------ */

#define OP(a)                                                                                      \
	{                                                                                          \
		.atom = (a)                                                                        \
	}
#define OPN(a, n)                                                                                  \
	{                                                                                          \
		.atom = (a), .number = (uint64_t)(n)                                               \
	}
#define OPNN(a, n, m)                                                                              \
	{                                                                                          \
		.atom = (a), .number = (uint64_t)(n), .number2 = (uint64_t)(m)                     \
	}
#define COUNT(x) (sizeof(x) / sizeof((x)[0]))

static const struct ps_var_op cfa_base[] = { OP(DW_OP_call_frame_cfa) };

static bool eval(const struct ps_var_op *ops, size_t n, struct made_frame *f, uint64_t *value)
{
	return ps_variables_eval(ops, n, cfa_base, 1, &f->state, value);
}

START_TEST(test_expressions)
{
	/* CPython 3.10's next_instr: first_instr + 2 * (int lasti in r15 + 1) */
	static const struct ps_var_op next_instr_310[] = {
		OPN(DW_OP_breg15, 0),   OPN(DW_OP_const1u, 32), OP(DW_OP_shl),
		OPN(DW_OP_const1u, 32), OP(DW_OP_shra),         OPN(DW_OP_plus_uconst, 1),
		OP(DW_OP_lit1),         OP(DW_OP_shl),          OPN(DW_OP_fbreg, -384),
		OP(DW_OP_deref),        OP(DW_OP_plus),         OP(DW_OP_stack_value),
	};
	static const struct ps_var_op in_register[] = { OP(DW_OP_reg14) };
	static const struct ps_var_op in_regx[] = { OPN(DW_OP_regx, 3) };
	static const struct ps_var_op in_slot[] = { OPN(DW_OP_fbreg, -368) };
	static const struct ps_var_op register_plus[] = { OPN(DW_OP_breg10, 2),
		                                          OP(DW_OP_stack_value) };
	static const struct ps_var_op bregx_plus[] = { OPNN(DW_OP_bregx, 6, -8),
		                                       OP(DW_OP_stack_value) };
	static const struct ps_var_op slot_plus[] = { OPN(DW_OP_fbreg, -368), OP(DW_OP_deref),
		                                      OPN(DW_OP_plus_uconst, 2),
		                                      OP(DW_OP_stack_value) };
	static const struct ps_var_op small_read[] = { OPN(DW_OP_fbreg, -368),
		                                       OPN(DW_OP_deref_size, 2),
		                                       OP(DW_OP_stack_value) };
	static const struct ps_var_op arithmetic[] = {
		OPN(DW_OP_constu, 100),
		OPN(DW_OP_consts, -30),
		OP(DW_OP_plus), /* 70 */
		OP(DW_OP_dup),
		OP(DW_OP_mul), /* 4900 */
		OPN(DW_OP_const2u, 900),
		OP(DW_OP_minus), /* 4000 */
		OP(DW_OP_lit8),
		OP(DW_OP_swap),
		OP(DW_OP_over),
		OP(DW_OP_drop), /* 8 4000 */
		OP(DW_OP_shr), /* 8 >> 4000 = 0 */
		OPN(DW_OP_const1s, -1),
		OP(DW_OP_xor),
		OP(DW_OP_not), /* 0 */
		OPN(DW_OP_const4u, 0xf0f0),
		OP(DW_OP_or),
		OPN(DW_OP_const2u, 0xff),
		OP(DW_OP_and),
		OP(DW_OP_neg),
		OP(DW_OP_abs), /* 0xf0 */
		OP(DW_OP_nop),
		OP(DW_OP_stack_value),
	};
	static const struct ps_var_op value_not_last[] = { OP(DW_OP_lit1), OP(DW_OP_stack_value),
		                                           OP(DW_OP_lit2) };
	static const struct ps_var_op register_not_alone[] = { OP(DW_OP_reg3), OP(DW_OP_lit0) };
	static const struct ps_var_op underflow[] = { OP(DW_OP_plus), OP(DW_OP_stack_value) };
	static const struct ps_var_op entry_value[] = { OPN(DW_OP_entry_value, 1),
		                                        OP(DW_OP_stack_value) };
	static const struct ps_var_op empty[] = { OP(DW_OP_nop) };
	struct ps_var_op deep[20];
	struct made_frame f;
	uint64_t value;

	make_frame(&f, 0x7ff000020000ull);
	f.state.regs[15] = 0xffffffff00000004ull; /* lasti 4 in the low half */
	put_word(&f, -384, 0x5000);
	put_word(&f, -368, 0x123456789abcull);
	ck_assert(eval(next_instr_310, COUNT(next_instr_310), &f, &value));
	ck_assert_uint_eq(value, 0x5000 + 2 * 5);
	ck_assert(eval(in_register, 1, &f, &value));
	ck_assert_uint_eq(value, 0x1000 + 14);
	ck_assert(eval(in_regx, 1, &f, &value));
	ck_assert_uint_eq(value, 0x1000 + 3);
	ck_assert(eval(in_slot, 1, &f, &value));
	ck_assert_uint_eq(value, 0x123456789abcull);
	ck_assert(eval(register_plus, 2, &f, &value));
	ck_assert_uint_eq(value, 0x1000 + 10 + 2);
	ck_assert(eval(bregx_plus, 2, &f, &value));
	ck_assert_uint_eq(value, 0x1000 + 6 - 8);
	ck_assert(eval(slot_plus, 4, &f, &value));
	ck_assert_uint_eq(value, 0x123456789abcull + 2);
	ck_assert(eval(small_read, 3, &f, &value));
	ck_assert_uint_eq(value, 0x9abc);
	ck_assert(eval(arithmetic, COUNT(arithmetic), &f, &value));
	ck_assert_uint_eq(value, 0xf0);
	ck_assert(!eval(value_not_last, 3, &f, &value));
	ck_assert(!eval(register_not_alone, 2, &f, &value));
	ck_assert(!eval(underflow, 2, &f, &value));
	ck_assert(!eval(entry_value, 2, &f, &value));
	ck_assert(!eval(empty, 1, &f, &value));
	/* a stack of more than 16 values */
	for (size_t i = 0; i < COUNT(deep); i++)
		deep[i] = (struct ps_var_op)OP(DW_OP_lit1);
	ck_assert(!eval(deep, COUNT(deep), &f, &value));
	/* without the frame base, fbreg cannot be read */
	ck_assert(!ps_variables_eval(in_slot, 1, NULL, 0, &f.state, &value));
	/* registers and memory the frame does not have */
	f.state.present = 0;
	ck_assert(!eval(in_register, 1, &f, &value));
	ck_assert(!eval(next_instr_310, COUNT(next_instr_310), &f, &value));
	f.state.stack_size = 0;
	ck_assert(!eval(in_slot, 1, &f, &value));
	f.state.has_cfa = false;
	ck_assert(!eval(in_slot, 1, &f, &value));
}
END_TEST

Suite *suite_variables(void)
{
	Suite *s = suite_create("variables");
	TCase *tc = tcase_create("variables");

	tcase_add_test(tc, test_fixture_variables);
	tcase_add_test(tc, test_no_debug_info);
	tcase_add_test(tc, test_expressions);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
