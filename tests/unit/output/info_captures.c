/* The synthetic captures of test_info (see there): their attrs and
 * feature sections, written with the reader's builder in file or pipe
 * format. */
#define _GNU_SOURCE
#include "info_captures.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pystitch/pystitch.h"

#define NR_FEATS 32

/* A capture's attrs and feature sections, written out in file or pipe
 * format. */
struct synth {
	bool be;
	size_t nr_attrs;
	struct bld_attr attrs[4];
	struct bld_buf feats[NR_FEATS];
	bool has[NR_FEATS];
};

static const uint64_t event_ids[4][2] = { { 11, 12 }, { 13, 14 }, { 15, 16 }, { 17, 18 } };
static const char *const event_names[4] = { "cpu-clock", "task-clock", "page-faults",
	                                    "context-switches" };

static void synth_init(struct synth *s, bool be, size_t nr_attrs)
{
	memset(s, 0, sizeof(*s));
	s->be = be;
	s->nr_attrs = nr_attrs;
	for (size_t i = 0; i < nr_attrs; i++) {
		struct bld_attr *a = &s->attrs[i];

		a->type = PERF_TYPE_SOFTWARE;
		a->size = 128;
		a->config = i;
		a->sample_period = 4000;
		a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		                 PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD;
		a->read_format = PERF_FORMAT_ID;
		/* inherit, freq, sample_id_all; the first also disabled */
		a->flags = 1ull << 1 | 1ull << 10 | 1ull << 18 | (i == 0 ? 1ull : 0);
		a->ids = event_ids[i];
		a->nr_ids = 2;
	}
	for (unsigned bit = 0; bit < NR_FEATS; bit++)
		bld_buf_init(&s->feats[bit], be);
}

static void synth_free(struct synth *s)
{
	for (unsigned bit = 0; bit < NR_FEATS; bit++)
		bld_buf_free(&s->feats[bit]);
}

static struct bld_buf *feat(struct synth *s, unsigned bit)
{
	s->has[bit] = true;
	return &s->feats[bit];
}

/* The image: a file with the features after one FINISHED_ROUND record, or
 * a pipe stream of HEADER_ATTR, HEADER_FEATURE (in bit order, as perf
 * record writes them) and the same record. */
static void synth_image(const struct synth *s, bool pipe, struct bld_buf *out)
{
	size_t pos;

	if (!pipe) {
		struct bld_file f;

		bld_file_init(&f, s->be);
		for (size_t i = 0; i < s->nr_attrs; i++)
			bld_file_add_attr(&f, &s->attrs[i]);
		for (unsigned bit = 0; bit < NR_FEATS; bit++)
			if (s->has[bit])
				bld_bytes(bld_file_feature(&f, bit), s->feats[bit].data,
				          s->feats[bit].len);
		pos = bld_rec_begin(&f.data, PS_RECORD_FINISHED_ROUND, 0);
		bld_rec_end(&f.data, pos);
		bld_file_assemble(&f, out, NULL);
		bld_file_free(&f);
		return;
	}
	bld_buf_init(out, s->be);
	bld_pipe_header(out);
	for (size_t i = 0; i < s->nr_attrs; i++)
		bld_pipe_attr(out, &s->attrs[i]);
	for (unsigned bit = 0; bit < NR_FEATS; bit++)
		if (s->has[bit])
			bld_pipe_feature(out, bit, &s->feats[bit]);
	pos = bld_rec_begin(out, PS_RECORD_FINISHED_ROUND, 0);
	bld_rec_end(out, pos);
}

/* ---- feature sections ------------------------------------------------ */

static void string_list(struct bld_buf *b, size_t nr, const char *const *items)
{
	bld_u32(b, (uint32_t)nr);
	for (size_t i = 0; i < nr; i++)
		bld_header_string(b, items[i]);
}

static void add_identity(struct synth *s, uint32_t nr_cpus)
{
	static const char *const cmdline[] = { "/usr/bin/perf", "record", "-e", "it's" };

	bld_header_string(feat(s, PS_FEAT_HOSTNAME), "synthetic");
	bld_header_string(feat(s, PS_FEAT_OSRELEASE), "6.1.0-synthetic");
	bld_header_string(feat(s, PS_FEAT_VERSION), "6.1.187");
	bld_header_string(feat(s, PS_FEAT_ARCH), "x86_64");
	bld_u32(feat(s, PS_FEAT_NRCPUS), nr_cpus);
	bld_u32(feat(s, PS_FEAT_NRCPUS), nr_cpus);
	bld_header_string(feat(s, PS_FEAT_CPUDESC), "Synthetic CPU @ 2.00GHz");
	bld_header_string(feat(s, PS_FEAT_CPUID), "GenuineIntel,6,151,2");
	bld_u64(feat(s, PS_FEAT_TOTAL_MEM), 16318428);
	string_list(feat(s, PS_FEAT_CMDLINE), 4, cmdline);
}

static void add_event_desc(struct synth *s)
{
	struct bld_buf *b = feat(s, PS_FEAT_EVENT_DESC);

	bld_u32(b, (uint32_t)s->nr_attrs);
	bld_u32(b, 128);
	for (size_t i = 0; i < s->nr_attrs; i++) {
		bld_attr_bytes(b, &s->attrs[i]);
		bld_u32(b, 2);
		bld_header_string(b, event_names[i]);
		bld_u64(b, event_ids[i][0]);
		bld_u64(b, event_ids[i][1]);
	}
}

/* sockets, threads, then per CPU core and socket ids, then dies */
static void add_cpu_topology(struct synth *s, uint32_t nr_cpus, const uint32_t *sockets, bool dies)
{
	static const char *const all[] = { "0-3" }, *const pairs[] = { "0-1", "2-3" };
	struct bld_buf *b = feat(s, PS_FEAT_CPU_TOPOLOGY);

	string_list(b, 1, all);
	string_list(b, 2, pairs);
	if (!sockets)
		return; /* perf before 4.x */
	for (uint32_t i = 0; i < nr_cpus; i++) {
		bld_u32(b, i / 2);
		bld_u32(b, sockets[i]);
	}
	if (!dies)
		return; /* perf before 5.x */
	string_list(b, 1, all);
	for (uint32_t i = 0; i < nr_cpus; i++)
		bld_u32(b, 0);
}

static void add_numa(struct synth *s)
{
	struct bld_buf *b = feat(s, PS_FEAT_NUMA_TOPOLOGY);
	static const char *const cpus[] = { "0-1", "3,2", "" };

	bld_u32(b, 3);
	for (uint32_t i = 0; i < 3; i++) {
		bld_u32(b, i);
		bld_u64(b, i < 2 ? 8000000 : 0);
		bld_u64(b, i == 0 ? 4000000 : i == 1 ? 100 : 0);
		bld_header_string(b, cpus[i]);
	}
}

static void add_cache(struct synth *s, uint32_t nr)
{
	struct bld_buf *b = feat(s, PS_FEAT_CACHE);
	static const char *const types[] = { "Data", "Instruction", "Unified" };
	static const char *const sizes[] = { "48K", "32K", "2048K" };

	bld_u32(b, 1);
	bld_u32(b, nr);
	for (uint32_t i = 0; i < nr; i++) {
		bld_u32(b, i < 2 ? 1 : 2);
		bld_u32(b, 64);
		bld_u32(b, 64);
		bld_u32(b, 12);
		bld_header_string(b, types[i]);
		bld_header_string(b, sizes[i]);
		bld_header_string(b, i < 2 ? "0-1" : "0-3");
	}
}

/* node 0: blocks 0-23 and 32-199 (24G); node 1: 200-203 and 210 (640M);
 * node 2: every other block of 256, a list longer than perf's buffer */
static void add_mem_topology(struct synth *s, uint64_t nr)
{
	struct bld_buf *b = feat(s, PS_FEAT_MEM_TOPOLOGY);
	const uint64_t words[3][4] = {
		{ 0xffffffff00ffffffull, ~0ull, ~0ull, 0xff },
		{ 0, 0, 0, 0xf00ull | 1ull << 18 },
		{ 0x5555555555555555ull, 0x5555555555555555ull, 0x5555555555555555ull,
		  0x5555555555555555ull },
	};

	bld_u64(b, 1);
	bld_u64(b, 0x8000000);
	bld_u64(b, nr);
	for (uint64_t i = 0; i < nr; i++) {
		bld_u64(b, i);
		bld_u64(b, 12345); /* perf prints the blocks' size, not this */
		bld_u64(b, 256);
		for (int w = 0; w < 4; w++)
			bld_u64(b, words[i][w]);
	}
}

static void caps(struct bld_buf *b, size_t nr, const char *const *pairs)
{
	bld_u32(b, (uint32_t)nr);
	for (size_t i = 0; i < nr; i++) {
		bld_header_string(b, pairs[2 * i]);
		bld_header_string(b, pairs[2 * i + 1]);
	}
}

static void add_pmus(struct synth *s, bool with_caps)
{
	static const char *const cpu_caps[] = { "branches", "32", "pmu_name", "alderlake_hybrid" };
	static const char *const core_caps[] = { "branches", "32", "max_precise", "3" };
	static const char *const hybrid[] = { "cpu_core", "0-1", "cpu_atom", "2-3" };
	struct bld_buf *b;

	caps(feat(s, PS_FEAT_CPU_PMU_CAPS), with_caps ? 2 : 0, cpu_caps);
	b = feat(s, PS_FEAT_HYBRID_TOPOLOGY);
	bld_u32(b, with_caps ? 2 : 0);
	for (int i = 0; with_caps && i < 4; i++)
		bld_header_string(b, hybrid[i]);
	b = feat(s, PS_FEAT_PMU_CAPS);
	bld_u32(b, with_caps ? 2 : 0);
	if (with_caps) {
		caps(b, 2, core_caps);
		bld_header_string(b, "cpu_core");
		caps(b, 0, NULL);
		bld_header_string(b, "cpu_atom");
	}
}

static void add_misc(struct synth *s)
{
	struct bld_buf *b = feat(s, PS_FEAT_PMU_MAPPINGS);

	bld_u32(b, 3);
	bld_u32(b, 4);
	bld_header_string(b, "cpu_core");
	bld_u32(b, 8);
	bld_header_string(b, "cpu_atom");
	bld_u32(b, 1);
	bld_header_string(b, "software");
	b = feat(s, PS_FEAT_SAMPLE_TIME);
	bld_u64(b, 1170389056123ull);
	bld_u64(b, 1176184250999ull);
	bld_u64(feat(s, PS_FEAT_CLOCKID), 1);
	b = feat(s, PS_FEAT_COMPRESSED);
	bld_u32(b, 0);
	bld_u32(b, 1);
	bld_u32(b, 1);
	bld_u32(b, 4);
	bld_u32(b, 528384);
}

static void add_clock_data(struct synth *s, uint32_t version)
{
	struct bld_buf *b = feat(s, PS_FEAT_CLOCK_DATA);

	bld_u32(b, version);
	bld_u32(b, 1);
	bld_u64(b, 1700000000123456789ull);
	bld_u64(b, 1234567890123ull);
}

static void add_groups(struct synth *s, size_t nr, const uint32_t *leader_members,
                       const char *const *names)
{
	struct bld_buf *b = feat(s, PS_FEAT_GROUP_DESC);

	bld_u32(b, (uint32_t)nr);
	for (size_t i = 0; i < nr; i++) {
		bld_header_string(b, names[i]);
		bld_u32(b, leader_members[2 * i]);
		bld_u32(b, leader_members[2 * i + 1]);
	}
}

/* ---- BPF_PROG_INFO, BPF_BTF ------------------------------------------ */

static const uint8_t tags[2][8] = { { 0x59, 0xf4, 0xa9, 0x31, 0x74, 0x4d, 0xcd, 0xc6 },
	                            { 0x37, 0x65, 0xc0, 0x4b, 0xa0, 0x9f, 0xff, 0x28 } };

struct prog {
	uint32_t id, btf_id, nr_funcs, nr_tags;
	const char *name;
	const uint32_t *btf_types; /* func_info; NULL: none */
};

/* perf's struct perf_bpil of one program: the arrays perf asks for, each
 * pointer an offset into the data after the 232-byte bpf_prog_info */
static void bpf_prog(struct bld_buf *b, const struct prog *p)
{
	struct bld_buf info, data;
	uint64_t arrays = 1u << 3 | 1u << 4 | 1u << 8 | (p->btf_types ? 1u << 5 : 0);
	size_t ksyms, lens, prog_tags, func_info = 0;

	bld_buf_init(&info, b->be);
	bld_buf_init(&data, b->be);
	bld_zeros(&info, 232);
	ksyms = data.len;
	for (uint32_t i = 0; i < p->nr_funcs; i++)
		bld_u64(&data, 0xffffffffc0000658ull + 0x40 * i);
	lens = data.len;
	for (uint32_t i = 0; i < p->nr_funcs; i++)
		bld_u32(&data, 16 + 3 * i);
	bld_align(&data, 8);
	prog_tags = data.len;
	for (uint32_t i = 0; i < p->nr_tags; i++)
		bld_bytes(&data, tags[i % 2], 8);
	if (p->btf_types) {
		func_info = data.len;
		for (uint32_t i = 0; i < p->nr_funcs; i++) {
			bld_u32(&data, 2 * i);
			bld_u32(&data, p->btf_types[i]);
		}
	}
	bld_put_u32(&info, 4, p->id);
	memcpy(info.data + 64, p->name, strlen(p->name));
	bld_put_u32(&info, 104, p->nr_funcs);
	bld_put_u32(&info, 108, p->nr_funcs);
	bld_put_u64(&info, 112, ksyms);
	bld_put_u64(&info, 120, lens);
	bld_put_u32(&info, 128, p->btf_id);
	bld_put_u32(&info, 132, p->btf_types ? 8 : 0);
	bld_put_u64(&info, 136, func_info);
	bld_put_u32(&info, 144, p->btf_types ? p->nr_funcs : 0);
	bld_put_u32(&info, 180, p->nr_tags);
	bld_put_u64(&info, 184, prog_tags);
	bld_u32(b, 232);
	bld_u32(b, (uint32_t)data.len);
	bld_u64(b, arrays);
	bld_bytes(b, info.data, info.len);
	bld_bytes(b, data.data, data.len);
	bld_buf_free(&info);
	bld_buf_free(&data);
}

/* BTF: [1] int, [2] int (void), [3] func ps_main, [4] func ps_leaf */
static void btf_blob(struct bld_buf *b)
{
	static const char strings[] = "\0int\0ps_main\0ps_leaf";
	const uint32_t types[] = { 1,         1u << 24, 4,  1u << 24 | 32, 0, 13u << 24, 1, 5,
		                   12u << 24, 2,        13, 12u << 24,     2 };

	bld_u16(b, 0xeb9f);
	bld_u8(b, 1);
	bld_u8(b, 0);
	bld_u32(b, 24);
	bld_u32(b, 0);
	bld_u32(b, sizeof(types));
	bld_u32(b, sizeof(types));
	bld_u32(b, sizeof(strings));
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		bld_u32(b, types[i]);
	bld_bytes(b, strings, sizeof(strings));
}

enum btf_kind { BTF_NONE, BTF_NATIVE, BTF_SWAPPED };

/* one BTF entry: u32 id, u32 size, the blob (none: no BTF magic, which
 * libbpf refuses; swapped: the other byte order, which libbpf reads) */
static void btf_entry(struct bld_buf *b, uint32_t id, enum btf_kind kind)
{
	struct bld_buf blob;

	bld_buf_init(&blob, kind == BTF_SWAPPED ? !b->be : b->be);
	if (kind == BTF_NONE)
		bld_zeros(&blob, 24);
	else
		btf_blob(&blob);
	bld_u32(b, id);
	bld_u32(b, (uint32_t)blob.len);
	bld_bytes(b, blob.data, blob.len);
	bld_buf_free(&blob);
}

static const uint32_t main_leaf[] = { 3, 4 }, leaf[] = { 4 }, main_only[] = { 3 },
                      void_type[] = { 0 }, past_types[] = { 99 };

/* Programs of one function and of two, named through BTF or not; the
 * last only where perf is not asked (it crashes on a type id past the
 * BTF's types). */
static void add_bpf(struct synth *s, bool perf_safe)
{
	const struct prog progs[] = {
		{ 32, 5, 2, 2, "ps_calls_btf", main_leaf },
		{ 30, 0, 1, 1, "ps_plain", NULL },
		{ 31, 0, 2, 2, "ps_calls", NULL },
		{ 32, 0, 1, 1, "ps_dup", NULL }, /* perf keeps the first of an id */
		{ 29, 0, 2, 1, "ps_odd", NULL }, /* counts disagree: not printed */
		{ 33, 5, 1, 1, "ps_leaf_btf", leaf },
		{ 34, 6, 1, 1, "ps_bad_btf", leaf },
		{ 35, 7, 1, 1, "ps_swapped_btf", main_only },
		{ 36, 5, 1, 1, "ps_void_btf", void_type },
		{ 37, 5, 1, 1, "ps_past_btf", past_types },
	};
	size_t nr = sizeof(progs) / sizeof(progs[0]) - (perf_safe ? 1 : 0);
	struct bld_buf *b = feat(s, PS_FEAT_BPF_PROG_INFO);

	bld_u32(b, (uint32_t)nr);
	for (size_t i = 0; i < nr; i++)
		bpf_prog(b, &progs[i]);
	b = feat(s, PS_FEAT_BPF_BTF);
	bld_u32(b, 4);
	btf_entry(b, 6, BTF_NONE);
	btf_entry(b, 5, BTF_NATIVE);
	btf_entry(b, 5, BTF_NONE);
	btf_entry(b, 7, BTF_SWAPPED);
}

/* ---- the captures ------------------------------------------------------- */

static const uint32_t sockets_ok[] = { 0, 0, 0, 0 }, sockets_refused[] = { 0, 5, 0, 0 };

/* Every feature this machine cannot record, with most of what it can. */
static void machine(struct synth *s, bool be, bool perf_safe)
{
	static const uint32_t group[] = { 0, 2 };
	static const char *const anon[] = { "{anon_group}" };

	synth_init(s, be, 2);
	add_identity(s, 4);
	add_event_desc(s);
	add_cpu_topology(s, 4, sockets_ok, true);
	add_numa(s);
	add_misc(s);
	add_groups(s, 1, group, anon);
	add_cache(s, 3);
	add_mem_topology(s, 3);
	add_bpf(s, perf_safe);
	add_pmus(s, true);
	add_clock_data(s, 1);
}

/* Empty lists: no PMU caps at all, no cache levels or memory nodes, and
 * the CPU topology of perf 3.x (sibling lists only). */
static void bare(struct synth *s)
{
	synth_init(s, false, 1);
	add_identity(s, 4);
	add_event_desc(s);
	add_cpu_topology(s, 4, NULL, false);
	add_cache(s, 0);
	add_mem_topology(s, 0);
	add_pmus(s, false);
}

/* CPU ids without dies (perf 4.x) and a named group */
static void nodies(struct synth *s)
{
	static const uint32_t groups[] = { 0, 2, 2, 2 };
	static const char *const names[] = { "{anon_group}", "mygroup" };

	synth_init(s, false, 4);
	add_identity(s, 4);
	add_event_desc(s);
	add_cpu_topology(s, 4, sockets_ok, false);
	add_groups(s, 2, groups, names);
}

/* Features perf refuses although they are sound, each followed by
 * features perf no longer reads: a socket id above the number of CPUs,
 * groups of which one starts inside another, a CLOCK_DATA of version 2,
 * a DIR_FORMAT outside a directory. */
static void refused(struct synth *s, unsigned which)
{
	static const uint32_t groups[] = { 0, 2, 1, 2 };
	static const char *const names[] = { "{anon_group}", "{anon_group}" };

	synth_init(s, false, which == PS_FEAT_GROUP_DESC ? 3 : 2);
	add_identity(s, 4);
	add_event_desc(s);
	add_cpu_topology(s, 4, which == PS_FEAT_CPU_TOPOLOGY ? sockets_refused : sockets_ok, true);
	if (which == PS_FEAT_GROUP_DESC)
		add_groups(s, 2, groups, names);
	add_numa(s);
	add_misc(s);
	add_mem_topology(s, 2);
	if (which == PS_FEAT_DIR_FORMAT)
		bld_u64(feat(s, PS_FEAT_DIR_FORMAT), 1);
	add_bpf(s, true);
	add_pmus(s, true);
	add_clock_data(s, which == PS_FEAT_CLOCK_DATA ? 2 : 1);
}

/* What perf itself would crash on: a BTF type id past the BTF's types, a
 * NUMA node's CPU list longer than perf's buffer. */
static void beyond(struct synth *s)
{
	struct bld_buf *b;
	char cpus[4096] = "";

	machine(s, false, false);
	for (int cpu = 0; cpu < 2000; cpu += 2)
		snprintf(cpus + strlen(cpus), sizeof(cpus) - strlen(cpus), "%s%d", cpu ? "," : "",
		         cpu);
	b = feat(s, PS_FEAT_NUMA_TOPOLOGY);
	bld_buf_reset(b);
	bld_u32(b, 1);
	bld_u32(b, 0);
	bld_u64(b, 1);
	bld_u64(b, 1);
	bld_header_string(b, cpus);
}

/* NUMA CPU lists in the forms perf's parser takes, each printed back
 * normalised */
static const char *const odd_cpu_lists[] = { "8,0-3,4", "5-7,0-4", "0x10",   "010",   "0-",
	                                     "1-+3",    "1- 3",    "0-3,,5", "0-3,x", "1," };
#define NR_ODD_CPU_LISTS (sizeof(odd_cpu_lists) / sizeof(odd_cpu_lists[0]))

static void cpu_lists(struct synth *s)
{
	struct bld_buf *b;

	synth_init(s, false, 1);
	add_identity(s, 4);
	add_event_desc(s);
	b = feat(s, PS_FEAT_NUMA_TOPOLOGY);
	bld_u32(b, NR_ODD_CPU_LISTS);
	for (uint32_t i = 0; i < NR_ODD_CPU_LISTS; i++) {
		bld_u32(b, i);
		bld_u64(b, 1000 + i);
		bld_u64(b, i);
		bld_header_string(b, odd_cpu_lists[i]);
	}
}

const struct named_capture captures[] = {
	{ "machine", MACHINE, false, false, 0, true },
	{ "machine-be", MACHINE, false, true, 0, true },
	{ "machine-pipe", MACHINE, true, false, 0, true },
	{ "bare", BARE, false, false, 0, true },
	{ "nodies", NODIES, false, false, 0, true },
	{ "refused-cpu", REFUSED, false, false, PS_FEAT_CPU_TOPOLOGY, true },
	{ "refused-cpu-pipe", REFUSED, true, false, PS_FEAT_CPU_TOPOLOGY, true },
	{ "refused-group", REFUSED, false, false, PS_FEAT_GROUP_DESC, true },
	{ "refused-clock", REFUSED, false, false, PS_FEAT_CLOCK_DATA, true },
	{ "refused-dir", REFUSED, false, false, PS_FEAT_DIR_FORMAT, true },
	{ "cpu-lists", CPU_LISTS, false, false, 0, true },
	{ "beyond", BEYOND, false, false, 0, false },
};
const size_t nr_captures = sizeof(captures) / sizeof(captures[0]);

void build_capture(const struct named_capture *c, struct bld_buf *image)
{
	struct synth s;

	switch (c->build) {
	case MACHINE:
		machine(&s, c->be, true);
		break;
	case BARE:
		bare(&s);
		break;
	case NODIES:
		nodies(&s);
		break;
	case REFUSED:
		refused(&s, c->refused);
		break;
	case BEYOND:
		beyond(&s);
		break;
	case CPU_LISTS:
		cpu_lists(&s);
		break;
	}
	synth_image(&s, c->pipe, image);
	synth_free(&s);
}
