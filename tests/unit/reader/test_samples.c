/* PERF_RECORD_SAMPLE decoding: every sample_type bit on its own (with a
 * field after it, so a wrong length shows), read_format and branch
 * variants, and all bits at once, in both byte orders. */
#include "helpers.h"

#include <string.h>

#define CONTEXT_KERNEL 0xffffffffffffff80ULL
#define CONTEXT_USER 0xfffffffffffffe00ULL
#define SAMPLE_ID 0x77
#define REGS_ABI_64 2
#define REGS_DWARF_MASK 0xff0fffULL /* perf --call-graph dwarf on x86_64: 20 registers */
#define REGS_INTR_MASK 0x3ULL

static const uint64_t sample_ids[] = { SAMPLE_ID };

static const uint64_t callchain[] = {
	CONTEXT_KERNEL, 0xffffffff81000010ULL, 0xffffffff81000020ULL, CONTEXT_USER, 0x401000,
	0x402000
};
static const struct bld_read_value read_group[] = {
	{ 1000, SAMPLE_ID, 1 },
	{ 2000, SAMPLE_ID + 1, 2 },
	{ 3000, SAMPLE_ID + 2, 3 },
};
static const struct bld_branch branches[] = {
	{ 0x401000, 0x402000, 0x1f },
	{ 0x403000, 0x404000, 0x2e },
	{ 0x405000, 0x406000, 0x3d },
};
static uint64_t regs_user[20];
static uint64_t regs_intr[2] = { 0xaaaa0000, 0xbbbb0000 };
static uint8_t raw[12] = { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b };
static uint8_t stack[64];
static uint8_t aux[16];

static void init_data(void)
{
	for (unsigned i = 0; i < 20; i++)
		regs_user[i] = 0x1000ULL * (i + 1) + i;
	for (unsigned i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)(0x80 + i);
	for (unsigned i = 0; i < sizeof(aux); i++)
		aux[i] = (uint8_t)(0xc0 + i);
}

/* A sample with every field set to a distinct value. */
static struct bld_sample full_sample(void)
{
	struct bld_sample s = bld_sample_empty();

	init_data();
	s.identifier = SAMPLE_ID;
	s.ip = 0x401abc;
	s.pid = 4242;
	s.tid = 4243;
	s.time = 1234567890123ULL;
	s.addr = 0x7ffd12345678ULL;
	s.id = SAMPLE_ID;
	s.stream_id = 0x5151;
	s.cpu = 3;
	s.cpu_res = 0;
	s.period = 250000;
	s.time_enabled = 9000;
	s.time_running = 8000;
	s.read_nr = 1;
	s.read_values = read_group;
	s.callchain_nr = 6;
	s.callchain = callchain;
	s.raw_size = sizeof(raw);
	s.raw = raw;
	s.branch_nr = 3;
	s.branch_hw_idx = 5;
	s.branches = branches;
	s.regs_user_abi = REGS_ABI_64;
	s.regs_user = regs_user;
	s.stack_size = sizeof(stack);
	s.stack = stack;
	s.stack_dyn_size = 40;
	s.weight = 321;
	s.data_src = 0x68100142ULL;
	s.transaction = 0x4;
	s.regs_intr_abi = REGS_ABI_64;
	s.regs_intr = regs_intr;
	s.phys_addr = 0x123456000ULL;
	s.cgroup = 0xc6c6;
	s.data_page_size = 4096;
	s.code_page_size = 2097152;
	s.aux_size = sizeof(aux);
	s.aux = aux;
	return s;
}

static struct bld_attr sample_attr(uint64_t sample_type)
{
	struct bld_attr a = attr_basic(sample_type);
	a.sample_regs_user = REGS_DWARF_MASK;
	a.sample_stack_user = sizeof(stack);
	a.sample_regs_intr = REGS_INTR_MASK;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	a.ids = sample_ids;
	a.nr_ids = 1;
	return a;
}

static void check_read(const struct ps_read_data *got, uint64_t rf, const struct bld_sample *w)
{
	size_t nr = rf & PERF_FORMAT_GROUP ? w->read_nr : 1;

	ck_assert_uint_eq(got->nr, nr);
	ck_assert_ptr_nonnull(got->values);
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		ck_assert_uint_eq(got->time_enabled, w->time_enabled);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		ck_assert_uint_eq(got->time_running, w->time_running);
	for (size_t i = 0; i < nr; i++) {
		ck_assert_uint_eq(got->values[i].value, w->read_values[i].value);
		if (rf & PERF_FORMAT_ID)
			ck_assert_uint_eq(got->values[i].id, w->read_values[i].id);
		if (rf & PERF_FORMAT_LOST)
			ck_assert_uint_eq(got->values[i].lost, w->read_values[i].lost);
	}
}

static void check_regs(const struct ps_regs *got, uint64_t abi, uint64_t mask,
                       const uint64_t *values)
{
	ck_assert_uint_eq(got->abi, abi);
	if (!abi) {
		ck_assert_uint_eq(got->nr, 0);
		return;
	}
	ck_assert_uint_eq(got->mask, mask);
	ck_assert_uint_eq(got->nr, (size_t)__builtin_popcountll(mask));
	ck_assert_ptr_nonnull(got->regs);
	for (size_t i = 0; i < got->nr; i++)
		ck_assert_uint_eq(got->regs[i], values[i]);
}

/* Assert every field the attr's sample_type says is present. */
static void check_sample(const struct ps_sample *got, const struct bld_attr *a,
                         const struct bld_sample *w, bool be)
{
	uint64_t st = a->sample_type;

	ck_assert_uint_eq(got->sample_type, st);
	if (st & PERF_SAMPLE_IDENTIFIER)
		ck_assert_uint_eq(got->identifier, w->identifier);
	if (st & PERF_SAMPLE_IP)
		ck_assert_uint_eq(got->ip, w->ip);
	if (st & PERF_SAMPLE_TID) {
		ck_assert_uint_eq(got->pid, w->pid);
		ck_assert_uint_eq(got->tid, w->tid);
	}
	if (st & PERF_SAMPLE_TIME)
		ck_assert_uint_eq(got->time, w->time);
	if (st & PERF_SAMPLE_ADDR)
		ck_assert_uint_eq(got->addr, w->addr);
	if (st & PERF_SAMPLE_ID)
		ck_assert_uint_eq(got->id, w->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		ck_assert_uint_eq(got->stream_id, w->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		ck_assert_uint_eq(got->cpu, w->cpu);
		ck_assert_uint_eq(got->cpu_res, w->cpu_res);
	}
	if (st & PERF_SAMPLE_PERIOD)
		ck_assert_uint_eq(got->period, w->period);
	else /* perf record -c N: the attr's sample_period, as perf has it */
		ck_assert_uint_eq(got->period, a->sample_period);
	if (st & PERF_SAMPLE_READ)
		check_read(&got->read, a->read_format, w);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		ck_assert_uint_eq(got->callchain_nr, w->callchain_nr);
		if (w->callchain_nr)
			ck_assert_ptr_nonnull(got->callchain);
		for (size_t i = 0; i < w->callchain_nr; i++)
			ck_assert_uint_eq(got->callchain[i], w->callchain[i]);
	}
	if (st & PERF_SAMPLE_RAW) {
		ck_assert_uint_eq(got->raw_size, w->raw_size);
		ck_assert_ptr_nonnull(got->raw);
		ck_assert_mem_eq(got->raw, w->raw, w->raw_size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		bool hw = a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX;
		ck_assert_uint_eq(got->branch_nr, w->branch_nr);
		ck_assert(got->has_branch_hw_idx == hw);
		if (hw)
			ck_assert_uint_eq(got->branch_hw_idx, w->branch_hw_idx);
		ck_assert_ptr_nonnull(got->branches);
		for (size_t i = 0; i < w->branch_nr; i++) {
			ck_assert_uint_eq(got->branches[i].from, w->branches[i].from);
			ck_assert_uint_eq(got->branches[i].to, w->branches[i].to);
			/* the flags bitfield of a big-endian file needs a
			 * bit-level swap whose result the API leaves open */
			if (!be)
				ck_assert_uint_eq(got->branches[i].flags, w->branches[i].flags);
		}
	}
	if (st & PERF_SAMPLE_REGS_USER)
		check_regs(&got->regs_user, w->regs_user_abi, a->sample_regs_user, w->regs_user);
	if (st & PERF_SAMPLE_STACK_USER) {
		ck_assert_uint_eq(got->stack_size, w->stack_size);
		ck_assert_uint_eq(got->stack_dyn_size, w->stack_size ? w->stack_dyn_size : 0);
		if (w->stack_size) {
			ck_assert_ptr_nonnull(got->stack_data);
			ck_assert_mem_eq(got->stack_data, w->stack, w->stack_dyn_size);
		}
	}
	if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
		ck_assert_uint_eq(got->weight, w->weight & 0xffffffffULL);
		ck_assert_uint_eq(got->weight_var2, (w->weight >> 32) & 0xffff);
		ck_assert_uint_eq(got->weight_var3, (w->weight >> 48) & 0xffff);
	} else if (st & PERF_SAMPLE_WEIGHT) {
		ck_assert_uint_eq(got->weight, w->weight);
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		ck_assert_uint_eq(got->data_src, w->data_src);
	if (st & PERF_SAMPLE_TRANSACTION)
		ck_assert_uint_eq(got->transaction, w->transaction);
	if (st & PERF_SAMPLE_REGS_INTR)
		check_regs(&got->regs_intr, w->regs_intr_abi, a->sample_regs_intr, w->regs_intr);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		ck_assert_uint_eq(got->phys_addr, w->phys_addr);
	if (st & PERF_SAMPLE_CGROUP)
		ck_assert_uint_eq(got->cgroup, w->cgroup);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		ck_assert_uint_eq(got->data_page_size, w->data_page_size);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		ck_assert_uint_eq(got->code_page_size, w->code_page_size);
	if (st & PERF_SAMPLE_AUX) {
		ck_assert_uint_eq(got->aux_size, w->aux_size);
		if (w->aux_size) {
			ck_assert_ptr_nonnull(got->aux_data);
			ck_assert_mem_eq(got->aux_data, w->aux, w->aux_size);
		}
	}
}

/* Write two samples (the second with other values, to catch state kept
 * from one sample to the next) in the given variant and check both. */
static void run_sample(int loop_index, const struct bld_attr *a, const struct bld_sample *w)
{
	struct cap c;
	struct bld_buf *b;
	struct bld_sample w2 = *w;
	size_t pos1, pos2;
	const struct ps_event *e;

	w2.ip += 0x10;
	w2.time += 1000;
	w2.period += 1;
	w2.callchain_nr = w->callchain_nr ? w->callchain_nr - 1 : 0;
	w2.branch_nr = w->branch_nr ? w->branch_nr - 1 : 0;
	w2.cgroup += 1;

	cap_init(&c, loop_index);
	cap_attr(&c, a);
	b = cap_body(&c);
	pos1 = bld_sample(b, a, PERF_RECORD_MISC_USER, w);
	pos2 = bld_sample(b, a, PERF_RECORD_MISC_KERNEL, &w2);
	cap_open(&c, NULL);

	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_SAMPLE);
	ck_assert_uint_eq(e->misc, PERF_RECORD_MISC_USER);
	ck_assert_uint_eq(e->offset, cap_offset(&c, pos1));
	ck_assert_uint_eq(e->size, pos2 - pos1);
	ck_assert_ptr_eq(e->attr, ps_reader_attr(c.reader, 0));
	if (a->sample_type & PERF_SAMPLE_TIME)
		ck_assert_uint_eq(e->timestamp, w->time);
	check_sample(&e->u.sample, a, w, c.be);

	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_SAMPLE);
	ck_assert_uint_eq(e->misc, PERF_RECORD_MISC_KERNEL);
	ck_assert_uint_eq(e->offset, cap_offset(&c, pos2));
	check_sample(&e->u.sample, a, &w2, c.be);
	cap_expect_end(&c);
	cap_close(&c);
}

/* One sample_type bit, with IP before it and CODE_PAGE_SIZE after it
 * (except where the bit is one of those). */
static void run_bit(int loop_index, uint64_t bit)
{
	struct bld_attr a = sample_attr(bit | PERF_SAMPLE_IP | PERF_SAMPLE_CODE_PAGE_SIZE);
	struct bld_sample w = full_sample();
	run_sample(loop_index, &a, &w);
}

#define BIT_TEST(name, bit)                                                                        \
	START_TEST(name)                                                                           \
	{                                                                                          \
		run_bit(_i, bit);                                                                  \
	}                                                                                          \
	END_TEST

BIT_TEST(test_bit_ip, PERF_SAMPLE_IP)
BIT_TEST(test_bit_tid, PERF_SAMPLE_TID)
BIT_TEST(test_bit_time, PERF_SAMPLE_TIME)
BIT_TEST(test_bit_addr, PERF_SAMPLE_ADDR)
BIT_TEST(test_bit_callchain, PERF_SAMPLE_CALLCHAIN)
BIT_TEST(test_bit_id, PERF_SAMPLE_ID)
BIT_TEST(test_bit_cpu, PERF_SAMPLE_CPU)
BIT_TEST(test_bit_period, PERF_SAMPLE_PERIOD)
BIT_TEST(test_bit_stream_id, PERF_SAMPLE_STREAM_ID)
BIT_TEST(test_bit_raw, PERF_SAMPLE_RAW)
BIT_TEST(test_bit_regs_user, PERF_SAMPLE_REGS_USER)
BIT_TEST(test_bit_stack_user, PERF_SAMPLE_STACK_USER)
BIT_TEST(test_bit_weight, PERF_SAMPLE_WEIGHT)
BIT_TEST(test_bit_data_src, PERF_SAMPLE_DATA_SRC)
BIT_TEST(test_bit_identifier, PERF_SAMPLE_IDENTIFIER)
BIT_TEST(test_bit_transaction, PERF_SAMPLE_TRANSACTION)
BIT_TEST(test_bit_regs_intr, PERF_SAMPLE_REGS_INTR)
BIT_TEST(test_bit_phys_addr, PERF_SAMPLE_PHYS_ADDR)
BIT_TEST(test_bit_aux, PERF_SAMPLE_AUX)
BIT_TEST(test_bit_cgroup, PERF_SAMPLE_CGROUP)
BIT_TEST(test_bit_data_page_size, PERF_SAMPLE_DATA_PAGE_SIZE)
BIT_TEST(test_bit_code_page_size, PERF_SAMPLE_CODE_PAGE_SIZE)
BIT_TEST(test_bit_weight_struct, PERF_SAMPLE_WEIGHT_STRUCT)

/* WEIGHT_STRUCT: var1 in the low 32 bits, var2 and var3 above. */
START_TEST(test_weight_struct_fields)
{
	struct bld_attr a =
	        sample_attr(PERF_SAMPLE_IP | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC);
	struct bld_sample w = full_sample();
	w.weight = 0x0003000200000001ULL | (0x1234ULL << 8);
	run_sample(_i, &a, &w);
}
END_TEST

/* READ: each read_format combination, without and with GROUP. */
static const uint64_t read_formats[] = {
	0,
	PERF_FORMAT_TOTAL_TIME_ENABLED,
	PERF_FORMAT_TOTAL_TIME_RUNNING,
	PERF_FORMAT_ID,
	PERF_FORMAT_LOST,
	PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
	        PERF_FORMAT_LOST,
	PERF_FORMAT_GROUP,
	PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED,
	PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID,
	PERF_FORMAT_GROUP | PERF_FORMAT_LOST,
	PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
	        PERF_FORMAT_ID | PERF_FORMAT_LOST,
};
#define NR_READ_FORMATS (int)(sizeof(read_formats) / sizeof(read_formats[0]))

START_TEST(test_read_formats)
{
	uint64_t rf = read_formats[_i / 2];
	struct bld_attr a = sample_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_READ |
	                                PERF_SAMPLE_CALLCHAIN);
	struct bld_sample w = full_sample();

	a.read_format = rf;
	w.read_nr = rf & PERF_FORMAT_GROUP ? 3 : 1;
	run_sample(_i % 2, &a, &w);
}
END_TEST

START_TEST(test_branch_stack_plain)
{
	struct bld_attr a =
	        sample_attr(PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_PERIOD);
	struct bld_sample w = full_sample();
	run_sample(_i, &a, &w);
}
END_TEST

START_TEST(test_branch_stack_hw_index)
{
	struct bld_attr a =
	        sample_attr(PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_PERIOD);
	struct bld_sample w = full_sample();
	a.branch_sample_type |= PERF_SAMPLE_BRANCH_HW_INDEX;
	run_sample(_i, &a, &w);
}
END_TEST

/* User registers with abi 0 (none recorded, e.g. a kernel thread). */
START_TEST(test_regs_user_abi_none)
{
	struct bld_attr a = sample_attr(PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER |
	                                PERF_SAMPLE_STACK_USER | PERF_SAMPLE_PERIOD);
	struct bld_sample w = full_sample();
	w.regs_user_abi = 0;
	w.stack_size = 0;
	run_sample(_i, &a, &w);
}
END_TEST

/* The DWARF-unwinding layout perf record --call-graph dwarf writes. */
START_TEST(test_dwarf_layout)
{
	struct bld_attr a =
	        sample_attr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
	                    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER |
	                    PERF_SAMPLE_STACK_USER | PERF_SAMPLE_DATA_SRC);
	struct bld_sample w = full_sample();
	w.callchain_nr = 0;
	a.flags |= PS_ATTR_EXCLUDE_CALLCHAIN_USER;
	run_sample(_i, &a, &w);
}
END_TEST

/* Every bit at once (WEIGHT and WEIGHT_STRUCT exclude each other). */
static uint64_t all_bits(bool weight_struct)
{
	return PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
	       PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
	       PERF_SAMPLE_PERIOD | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_RAW |
	       PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
	       (weight_struct ? PERF_SAMPLE_WEIGHT_STRUCT : PERF_SAMPLE_WEIGHT) |
	       PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TRANSACTION |
	       PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_AUX |
	       PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE;
}

START_TEST(test_all_bits)
{
	struct bld_attr a = sample_attr(all_bits(false));
	struct bld_sample w = full_sample();
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
	                PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a.branch_sample_type |= PERF_SAMPLE_BRANCH_HW_INDEX;
	w.read_nr = 3;
	run_sample(_i, &a, &w);
}
END_TEST

START_TEST(test_all_bits_weight_struct)
{
	struct bld_attr a = sample_attr(all_bits(true));
	struct bld_sample w = full_sample();
	a.read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_RUNNING;
	w.weight = 0x0009000800000007ULL;
	run_sample(_i, &a, &w);
}
END_TEST

Suite *suite_samples(void)
{
	Suite *s = suite_create("samples");
	TCase *bits = tcase_create("bits");
	TCase *layouts = tcase_create("layouts");

	tcase_set_timeout(bits, 60);
	tcase_set_timeout(layouts, 60);
	/* _i: 0 little-endian file, 1 big-endian file */
	tcase_add_loop_test(bits, test_bit_ip, 0, 2);
	tcase_add_loop_test(bits, test_bit_tid, 0, 2);
	tcase_add_loop_test(bits, test_bit_time, 0, 2);
	tcase_add_loop_test(bits, test_bit_addr, 0, 2);
	tcase_add_loop_test(bits, test_bit_callchain, 0, 2);
	tcase_add_loop_test(bits, test_bit_id, 0, 2);
	tcase_add_loop_test(bits, test_bit_cpu, 0, 2);
	tcase_add_loop_test(bits, test_bit_period, 0, 2);
	tcase_add_loop_test(bits, test_bit_stream_id, 0, 2);
	tcase_add_loop_test(bits, test_bit_raw, 0, 2);
	tcase_add_loop_test(bits, test_bit_regs_user, 0, 2);
	tcase_add_loop_test(bits, test_bit_stack_user, 0, 2);
	tcase_add_loop_test(bits, test_bit_weight, 0, 2);
	tcase_add_loop_test(bits, test_bit_data_src, 0, 2);
	tcase_add_loop_test(bits, test_bit_identifier, 0, 2);
	tcase_add_loop_test(bits, test_bit_transaction, 0, 2);
	tcase_add_loop_test(bits, test_bit_regs_intr, 0, 2);
	tcase_add_loop_test(bits, test_bit_phys_addr, 0, 2);
	tcase_add_loop_test(bits, test_bit_aux, 0, 2);
	tcase_add_loop_test(bits, test_bit_cgroup, 0, 2);
	tcase_add_loop_test(bits, test_bit_data_page_size, 0, 2);
	tcase_add_loop_test(bits, test_bit_code_page_size, 0, 2);
	tcase_add_loop_test(bits, test_bit_weight_struct, 0, 2);
	tcase_add_loop_test(bits, test_weight_struct_fields, 0, 2);
	tcase_add_loop_test(bits, test_read_formats, 0, 2 * NR_READ_FORMATS);
	tcase_add_loop_test(bits, test_branch_stack_plain, 0, 2);
	tcase_add_loop_test(bits, test_branch_stack_hw_index, 0, 2);
	tcase_add_loop_test(bits, test_regs_user_abi_none, 0, 2);
	suite_add_tcase(s, bits);

	/* _i: all six variants */
	tcase_add_loop_test(layouts, test_dwarf_layout, 0, NR_VARIANTS);
	tcase_add_loop_test(layouts, test_all_bits, 0, NR_VARIANTS);
	tcase_add_loop_test(layouts, test_all_bits_weight_struct, 0, NR_VARIANTS);
	suite_add_tcase(s, layouts);
	return s;
}
