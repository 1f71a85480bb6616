/* The names the reader gives events that nothing names (no EVENT_DESC,
 * EVENT_UPDATE or tracing data), as perf's evsel__name() does: hardware
 * events of hybrid CPUs, hardware-cache events, their modifiers; in every
 * format and byte order. */
#include "helpers.h"

#include <string.h>

/* perf_event_attr's bitfield word: exclude_user, _kernel, _hv, precise_ip,
 * exclude_host, _guest */
#define EX_USER (1ull << 4)
#define EX_KERNEL (1ull << 5)
#define EX_HV (1ull << 6)
#define PRECISE(n) ((uint64_t)(n) << 15)
#define EX_HOST (1ull << 19)
#define EX_GUEST (1ull << 20)
#define ONLY_USER (EX_KERNEL | EX_HV | EX_GUEST)
#define PMU(type) ((uint64_t)(type) << 32)
#define CACHE(c, op, result) ((uint64_t)(c) | (uint64_t)(op) << 8 | (uint64_t)(result) << 16)

/* The names perf's evsel__name() gives attrs without EVENT_DESC,
 * EVENT_UPDATE or tracing data: x86's arch_evsel__hw_name() for hardware
 * events (cpu/EVENT/ when a hybrid CPU's PMU type is in config's high
 * bits, whatever PMU that is), evsel__hw_cache_name() for cache events,
 * each followed by evsel__add_modifiers(). */
static const struct {
	uint32_t type;
	uint64_t config, flags;
	const char *name;
} default_names[] = {
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, EX_GUEST, "cycles" },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, ONLY_USER, "ref-cycles:uH" },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES + 1, 0, "unknown-hardware:HG" },
	{ PERF_TYPE_HARDWARE, PMU(4) | PERF_COUNT_HW_CPU_CYCLES, ONLY_USER | PRECISE(3),
	  "cpu/cycles/:upppH" },
	{ PERF_TYPE_HARDWARE, PMU(8) | PERF_COUNT_HW_BRANCH_MISSES, EX_GUEST,
	  "cpu/branch-misses/" },
	{ PERF_TYPE_HARDWARE, PMU(4) | 0x3c, EX_USER | EX_HV, "cpu/unknown-hardware/:k" },
	{ PERF_TYPE_HARDWARE, PMU(0xffffffff) | PERF_COUNT_HW_INSTRUCTIONS, EX_HOST,
	  "cpu/instructions/:G" },
	{ PERF_TYPE_HW_CACHE, CACHE(0, 0, 1), EX_GUEST, "L1-dcache-load-misses" },
	{ PERF_TYPE_HW_CACHE, CACHE(0, 1, 0), ONLY_USER, "L1-dcache-stores:uH" },
	{ PERF_TYPE_HW_CACHE, CACHE(0, 2, 1), EX_GUEST, "L1-dcache-prefetch-misses" },
	{ PERF_TYPE_HW_CACHE, CACHE(1, 0, 0), EX_GUEST, "L1-icache-loads" },
	{ PERF_TYPE_HW_CACHE, CACHE(1, 1, 0), EX_GUEST, "invalid-cache" },
	{ PERF_TYPE_HW_CACHE, CACHE(1, 2, 0), EX_GUEST, "L1-icache-prefetches" },
	{ PERF_TYPE_HW_CACHE, CACHE(2, 0, 0), EX_KERNEL, "LLC-loads:uh" },
	{ PERF_TYPE_HW_CACHE, CACHE(2, 1, 1), EX_GUEST, "LLC-store-misses" },
	{ PERF_TYPE_HW_CACHE, CACHE(3, 0, 1), PRECISE(2), "dTLB-load-misses:pp" },
	{ PERF_TYPE_HW_CACHE, CACHE(4, 0, 1), EX_GUEST, "iTLB-load-misses" },
	{ PERF_TYPE_HW_CACHE, CACHE(4, 1, 0), EX_GUEST, "invalid-cache" },
	{ PERF_TYPE_HW_CACHE, CACHE(5, 0, 0), 0, "branch-loads:HG" },
	{ PERF_TYPE_HW_CACHE, CACHE(5, 2, 1), EX_GUEST, "invalid-cache" },
	{ PERF_TYPE_HW_CACHE, CACHE(6, 2, 1), EX_HOST, "node-prefetch-misses:G" },
	{ PERF_TYPE_HW_CACHE, CACHE(7, 0, 0), EX_GUEST, "unknown-ext-hardware-cache-type" },
	{ PERF_TYPE_HW_CACHE, CACHE(0, 3, 0), EX_GUEST, "unknown-ext-hardware-cache-op" },
	{ PERF_TYPE_HW_CACHE, CACHE(0, 0, 2), ONLY_USER, "unknown-ext-hardware-cache-result:uH" },
	/* bits 24-31 and a PMU type do not show */
	{ PERF_TYPE_HW_CACHE, PMU(8) | CACHE(3, 1, 1) | (0xffull << 24), EX_GUEST,
	  "dTLB-store-misses" },
	{ PERF_TYPE_HW_CACHE, PMU(4) | CACHE(0xff, 0, 0), EX_GUEST,
	  "unknown-ext-hardware-cache-type" },
};
#define NR_DEFAULT_NAMES (sizeof(default_names) / sizeof(default_names[0]))

START_TEST(test_default_names)
{
	static uint64_t ids[NR_DEFAULT_NAMES];
	const int variant = _i;

	/* a capture of up to BLD_MAX_ATTRS attrs at a time */
	for (size_t first = 0; first < NR_DEFAULT_NAMES; first += BLD_MAX_ATTRS) {
		size_t end = first + BLD_MAX_ATTRS < NR_DEFAULT_NAMES ? first + BLD_MAX_ATTRS
		                                                      : NR_DEFAULT_NAMES;
		struct cap c;

		cap_init(&c, variant);
		for (size_t i = first; i < end; i++) {
			struct bld_attr a = attr_basic(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP);

			a.type = default_names[i].type;
			a.config = default_names[i].config;
			a.flags |= default_names[i].flags;
			ids[i] = 40 + i;
			a.ids = &ids[i];
			a.nr_ids = 1;
			cap_attr(&c, &a);
		}
		cap_open(&c, NULL);
		ck_assert_int_eq(cap_drain(&c, NULL), 0);
		ck_assert_uint_eq(ps_reader_nr_attrs(c.reader), end - first);
		for (size_t i = first; i < end; i++)
			ck_assert_msg(strcmp(ps_reader_attr(c.reader, i - first)->name,
			                     default_names[i].name) == 0,
			              "[%s] type %u config %#llx: \"%s\", not \"%s\"",
			              variant_name(variant), default_names[i].type,
			              (unsigned long long)default_names[i].config,
			              ps_reader_attr(c.reader, i - first)->name,
			              default_names[i].name);
		cap_close(&c);
	}
}
END_TEST

Suite *suite_event_names(void)
{
	Suite *s = suite_create("event names");
	TCase *tc = tcase_create("default names");

	tcase_add_loop_test(tc, test_default_names, 0, NR_VARIANTS);
	suite_add_tcase(s, tc);
	return s;
}
