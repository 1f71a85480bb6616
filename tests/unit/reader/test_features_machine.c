/* Unit tests of src/reader/features_machine.c and the sanity checks of
 * features.c: the features that describe the recording machine decode in
 * both byte orders, and each count that cannot fit in its section, each
 * impossible value and each cut is a damaged feature (a warning naming
 * it, the feature ignored), never an allocation of its size or a read
 * past the section. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "feature_bytes.h"
#include "reader/perf_format_priv.h"

START_TEST(test_topologies)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(be);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { .be = be };

	put_u32(&b, 2);
	put_u32(&b, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_NRCPUS, &b), 0);
	/* CPU_TOPOLOGY of perf 5.x: siblings, ids, dies, die ids */
	b.len = 0;
	put_u32(&b, 1);
	put_hstring(&b, "0-1");
	put_u32(&b, 1);
	put_hstring(&b, "0-1");
	put_u32(&b, 0);
	put_u32(&b, 0);
	put_u32(&b, 1);
	put_u32(&b, 0);
	put_u32(&b, 1);
	put_hstring(&b, "0-1");
	put_u32(&b, 0);
	put_u32(&b, 0);
	ck_assert_int_eq(decode(r, PS_FEAT_CPU_TOPOLOGY, &b), 0);
	ck_assert_uint_eq(f->nr_cpu_ids, 2);
	ck_assert_int_eq(f->cpu_ids[1].core_id, 1);
	ck_assert_int_eq(f->cpu_ids[1].die_id, 0);
	ck_assert(f->has_die_ids);
	ck_assert_str_eq(f->cpu_topology_sibling_dies.items[0], "0-1");

	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 0);
	put_u64(&b, 24683620);
	put_u64(&b, 1000);
	put_hstring(&b, "0-1");
	ck_assert_int_eq(decode(r, PS_FEAT_NUMA_TOPOLOGY, &b), 0);
	ck_assert_uint_eq(f->nr_numa_nodes, 1);
	ck_assert_uint_eq(f->numa_nodes[0].mem_total_kb, 24683620);
	ck_assert_str_eq(f->numa_nodes[0].cpus, "0-1");

	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 2);
	for (int level = 1; level <= 2; level++) {
		put_u32(&b, (uint32_t)level);
		put_u32(&b, 64);
		put_u32(&b, 64);
		put_u32(&b, 8);
		put_hstring(&b, level == 1 ? "Data" : "Unified");
		put_hstring(&b, level == 1 ? "32K" : "1024K");
		put_hstring(&b, "0");
	}
	ck_assert_int_eq(decode(r, PS_FEAT_CACHE, &b), 0);
	ck_assert_uint_eq(f->nr_cache_levels, 2);
	ck_assert_str_eq(f->cache_levels[1].type, "Unified");
	ck_assert_str_eq(f->cache_levels[1].size, "1024K");

	b.len = 0;
	put_u64(&b, 1);
	put_u64(&b, 0x8000000);
	put_u64(&b, 1);
	put_u64(&b, 0);
	put_u64(&b, 24ull << 30);
	put_u64(&b, 70); /* bits: two words */
	put_u64(&b, 0xffffff);
	put_u64(&b, 0x3f);
	ck_assert_int_eq(decode(r, PS_FEAT_MEM_TOPOLOGY, &b), 0);
	ck_assert_uint_eq(f->memory_block_size, 0x8000000);
	ck_assert_uint_eq(f->memory_nodes[0].nr_bits, 70);
	ck_assert_uint_eq(f->memory_nodes[0].bits[1], 0x3f);

	b.len = 0;
	put_u32(&b, 2);
	put_hstring(&b, "cpu_core");
	put_hstring(&b, "0-7");
	put_hstring(&b, "cpu_atom");
	put_hstring(&b, "8-15");
	ck_assert_int_eq(decode(r, PS_FEAT_HYBRID_TOPOLOGY, &b), 0);
	ck_assert_uint_eq(f->nr_hybrid_nodes, 2);
	ck_assert_str_eq(f->hybrid_nodes[1].pmu, "cpu_atom");
	ck_assert_str_eq(f->hybrid_nodes[1].cpus, "8-15");
	ck_assert_str_eq(last_warning, "");
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

START_TEST(test_pmu_caps_and_groups)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(be);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { .be = be };

	put_u32(&b, 2);
	put_hstring(&b, "branches");
	put_hstring(&b, "32");
	put_hstring(&b, "pmu_name");
	put_hstring(&b, "alderlake_hybrid");
	ck_assert_int_eq(decode(r, PS_FEAT_CPU_PMU_CAPS, &b), 0);
	ck_assert_uint_eq(f->cpu_pmu_caps.nr, 2);
	ck_assert_str_eq(f->cpu_pmu_caps.items[0], "branches=32");
	ck_assert_str_eq(f->cpu_pmu_caps.items[1], "pmu_name=alderlake_hybrid");

	b.len = 0;
	put_u32(&b, 2);
	put_u32(&b, 1);
	put_hstring(&b, "branches");
	put_hstring(&b, "32");
	put_hstring(&b, "cpu_core");
	put_u32(&b, 0);
	put_hstring(&b, "cpu_atom");
	ck_assert_int_eq(decode(r, PS_FEAT_PMU_CAPS, &b), 0);
	ck_assert_uint_eq(f->nr_pmu_caps, 2);
	ck_assert_str_eq(f->pmu_caps[0].pmu, "cpu_core");
	ck_assert_str_eq(f->pmu_caps[0].caps.items[0], "branches=32");
	ck_assert_uint_eq(f->pmu_caps[1].caps.nr, 0);

	b.len = 0;
	put_u32(&b, 1);
	put_hstring(&b, "{anon_group}");
	put_u32(&b, 0);
	put_u32(&b, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_GROUP_DESC, &b), 0);
	ck_assert_uint_eq(f->nr_groups, 1);
	ck_assert_uint_eq(f->groups[0].nr_members, 2);

	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 8); /* info_len */
	put_u32(&b, 4); /* data_len */
	put_u64(&b, 0);
	put_zeros(&b, 12);
	ck_assert_int_eq(decode(r, PS_FEAT_BPF_PROG_INFO, &b), 0);
	ck_assert_uint_eq(f->nr_bpf_progs, 1);
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 7);
	put_u32(&b, 3);
	put_zeros(&b, 3);
	ck_assert_int_eq(decode(r, PS_FEAT_BPF_BTF, &b), 0);
	ck_assert_uint_eq(f->nr_bpf_btfs, 1);
	b.len = 0;
	put_u64(&b, 1);
	put_u64(&b, 4096);
	put_u64(&b, 100);
	ck_assert_int_eq(decode(r, PS_FEAT_AUXTRACE, &b), 0);
	ck_assert_uint_eq(f->nr_auxtrace_index, 1);
	ck_assert_str_eq(last_warning, "");
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

/* a section of one u32 count (or u64 for u64_count) and nothing else */
static void put_count(struct buf *b, uint64_t count, bool u64_count)
{
	b->len = 0;
	if (u64_count)
		put_u64(b, count);
	else
		put_u32(b, (uint32_t)count);
	put_zeros(b, 12);
}

/* Absurd counts and values: a warning each, nothing allocated for them. */
START_TEST(test_absurd_counts)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(be);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { .be = be };

	put_u32(&b, 0xffffffff);
	put_u32(&b, 2);
	ck_assert_damaged(r, PS_FEAT_NRCPUS, decode(r, PS_FEAT_NRCPUS, &b),
	                  "feature NRCPUS: 4294967295 CPUs available and 2 online, more than");
	ck_assert(!f->has_nrcpus);
	b.len = 0;
	put_u64(&b, 0xffffffffffffffull);
	ck_assert_damaged(r, PS_FEAT_TOTAL_MEM, decode(r, PS_FEAT_TOTAL_MEM, &b),
	                  "more than memory can be");
	b.len = 0;
	put_u64(&b, 2000);
	put_u64(&b, 1000);
	ck_assert_damaged(r, PS_FEAT_SAMPLE_TIME, decode(r, PS_FEAT_SAMPLE_TIME, &b),
	                  "first sample at 2000, after the last at 1000");
	ck_assert(!f->has_sample_time);

	put_count(&b, 0xffffffff, false);
	ck_assert_damaged(r, PS_FEAT_NUMA_TOPOLOGY, decode(r, PS_FEAT_NUMA_TOPOLOGY, &b),
	                  "4294967295 nodes do not fit in 12 bytes");
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 0x7fffffff);
	put_zeros(&b, 8);
	ck_assert_damaged(r, PS_FEAT_CACHE, decode(r, PS_FEAT_CACHE, &b),
	                  "2147483647 cache levels do not fit in 8 bytes");
	b.len = 0;
	put_u32(&b, 2);
	put_u32(&b, 0);
	ck_assert_damaged(r, PS_FEAT_CACHE, decode(r, PS_FEAT_CACHE, &b), "version 2, not 1");
	b.len = 0;
	put_u64(&b, 1);
	put_u64(&b, 0x8000000);
	put_u64(&b, 0xffffffffffffull);
	ck_assert_damaged(r, PS_FEAT_MEM_TOPOLOGY, decode(r, PS_FEAT_MEM_TOPOLOGY, &b),
	                  "memory nodes do not fit in 0 bytes");
	b.len = 0;
	put_u64(&b, 1);
	put_u64(&b, 0x8000000);
	put_u64(&b, 1);
	put_u64(&b, 0);
	put_u64(&b, 1);
	put_u64(&b, 1ull << 40);
	ck_assert_damaged(r, PS_FEAT_MEM_TOPOLOGY, decode(r, PS_FEAT_MEM_TOPOLOGY, &b),
	                  "a bitmap of 1099511627776 blocks, more than");
	put_count(&b, 0xffffffff, false);
	ck_assert_damaged(r, PS_FEAT_HYBRID_TOPOLOGY, decode(r, PS_FEAT_HYBRID_TOPOLOGY, &b),
	                  "nodes do not fit");
	put_count(&b, 0xffffffff, false);
	ck_assert_damaged(r, PS_FEAT_CPU_PMU_CAPS, decode(r, PS_FEAT_CPU_PMU_CAPS, &b),
	                  "capabilities do not fit");
	put_count(&b, 0xffffffff, false);
	ck_assert_damaged(r, PS_FEAT_PMU_CAPS, decode(r, PS_FEAT_PMU_CAPS, &b), "PMUs do not fit");
	put_count(&b, 0xffffffff, false);
	ck_assert_damaged(r, PS_FEAT_GROUP_DESC, decode(r, PS_FEAT_GROUP_DESC, &b),
	                  "groups do not fit");
	put_count(&b, 0xffffffff, false);
	ck_assert_damaged(r, PS_FEAT_BPF_PROG_INFO, decode(r, PS_FEAT_BPF_PROG_INFO, &b),
	                  "programs do not fit");
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 0xffffff00);
	put_u32(&b, 0);
	put_u64(&b, 0);
	ck_assert_damaged(r, PS_FEAT_BPF_PROG_INFO, decode(r, PS_FEAT_BPF_PROG_INFO, &b),
	                  "program 0: a bpf_prog_info of 4294967040 bytes, more than the 232");
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 8);
	put_u32(&b, 0xffffff00);
	put_u64(&b, 0);
	put_zeros(&b, 8);
	ck_assert_damaged(r, PS_FEAT_BPF_PROG_INFO, decode(r, PS_FEAT_BPF_PROG_INFO, &b),
	                  "program 0: 8 + 4294967040 bytes pass the section's end");
	put_count(&b, 0xffffffff, false);
	ck_assert_damaged(r, PS_FEAT_BPF_BTF, decode(r, PS_FEAT_BPF_BTF, &b),
	                  "BTF entries do not fit");
	put_count(&b, 0xffffffffffffull, true);
	ck_assert_damaged(r, PS_FEAT_AUXTRACE, decode(r, PS_FEAT_AUXTRACE, &b),
	                  "index entries do not fit");
	/* EVENT_DESC's event types, BUILD_ID's records */
	b.len = 0;
	put_u32(&b, 0xffffffff);
	put_u32(&b, 64);
	ck_assert_damaged(r, PS_FEAT_EVENT_DESC, decode(r, PS_FEAT_EVENT_DESC, &b),
	                  "events, more than");
	/* NRCPUS says more CPUs than CPU_TOPOLOGY holds ids for */
	b.len = 0;
	put_u32(&b, 64);
	put_u32(&b, 64);
	ck_assert_int_eq(decode(r, PS_FEAT_NRCPUS, &b), 0);
	b.len = 0;
	put_u32(&b, 0);
	put_u32(&b, 0);
	put_u32(&b, 1);
	put_u32(&b, 2);
	ck_assert_damaged(r, PS_FEAT_CPU_TOPOLOGY, decode(r, PS_FEAT_CPU_TOPOLOGY, &b),
	                  "64 CPUs' core and socket ids do not fit in 8 bytes");
	ck_assert_uint_eq(f->nr_cpu_ids, 0);
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

/* One perf_bpil: bpf_prog_info of 232 bytes with id, name, btf_id and
 * nr functions, then data: JITed addresses, lengths, tags, func_info.
 * ksyms_offset overrides where the addresses are said to be. */
static void put_prog(struct buf *b, uint32_t id, const char *name, uint32_t nr,
                     uint64_t ksyms_offset)
{
	uint8_t info[232] = { 0 };
	struct buf i = { .be = b->be };
	size_t lens = 8 * nr, tags = lens + ((4 * nr + 7) & ~7u), func_info = tags + 8 * nr;

	put_zeros(&i, 4);
	put_u32(&i, id);
	memcpy(info, i.data, 8);
	memcpy(info + 64, name, strlen(name));
	i.len = 0;
	put_u32(&i, nr); /* nr_jited_ksyms, nr_jited_func_lens */
	put_u32(&i, nr);
	put_u64(&i, ksyms_offset);
	put_u64(&i, lens);
	put_u32(&i, 3); /* btf_id */
	put_u32(&i, 8); /* func_info_rec_size */
	put_u64(&i, func_info);
	put_u32(&i, nr); /* nr_func_info */
	memcpy(info + 104, i.data, i.len);
	i.len = 0;
	put_u32(&i, nr); /* nr_prog_tags */
	put_u64(&i, tags);
	memcpy(info + 180, i.data, i.len);
	put_u32(b, 232);
	put_u32(b, (uint32_t)(func_info + 8 * nr));
	put_u64(b, 1u << 3 | 1u << 4 | 1u << 5 | 1u << 8);
	put(b, info, sizeof(info));
	for (uint32_t f = 0; f < nr; f++)
		put_u64(b, 0xffffffffc0000000ull + f);
	for (uint32_t f = 0; f < nr; f++)
		put_u32(b, 16 + f);
	if (nr % 2)
		put_zeros(b, 4);
	for (uint32_t f = 0; f < nr; f++)
		put_u64(b, 0x1122334455667700ull + f);
	for (uint32_t f = 0; f < nr; f++) {
		put_u32(b, 2 * f);
		put_u32(b, 10 + f);
	}
	buf_free(&i);
}

/* Every proper prefix of a well-formed section decodes or is damaged;
 * none reads past (each prefix is a copy of exactly its length). */
static void sweep(unsigned bit, const struct buf *b, bool be)
{
	struct ps_reader *r = pipe_reader(be);

	for (size_t len = 0; len < b->len; len++) {
		uint8_t *copy = malloc(len ? len : 1);

		memcpy(copy, b->data, len);
		ck_assert_int_eq(ps_feature_decode(r, bit, copy, len, 0), 0);
		ck_assert_str_eq(ps_reader_errmsg(r), "");
		free(copy);
	}
	ps_reader_close(r);
}

START_TEST(test_truncations)
{
	bool be = _i;
	struct buf b = { .be = be };

	put_u32(&b, 1);
	put_u32(&b, 0);
	put_u64(&b, 1);
	put_u64(&b, 2);
	put_hstring(&b, "0");
	sweep(PS_FEAT_NUMA_TOPOLOGY, &b, be);
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 1);
	put_u32(&b, 1);
	put_u32(&b, 64);
	put_u32(&b, 64);
	put_u32(&b, 8);
	put_hstring(&b, "Data");
	put_hstring(&b, "32K");
	put_hstring(&b, "0");
	sweep(PS_FEAT_CACHE, &b, be);
	b.len = 0;
	put_u64(&b, 1);
	put_u64(&b, 1);
	put_u64(&b, 1);
	put_u64(&b, 0);
	put_u64(&b, 1);
	put_u64(&b, 64);
	put_u64(&b, 1);
	sweep(PS_FEAT_MEM_TOPOLOGY, &b, be);
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 1);
	put_hstring(&b, "a");
	put_hstring(&b, "1");
	put_hstring(&b, "cpu_core");
	sweep(PS_FEAT_PMU_CAPS, &b, be);
	b.len = 0;
	put_u32(&b, 1);
	put_hstring(&b, "g");
	put_u32(&b, 0);
	put_u32(&b, 2);
	sweep(PS_FEAT_GROUP_DESC, &b, be);
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 1);
	put_u32(&b, 2);
	put_zeros(&b, 2);
	sweep(PS_FEAT_BPF_BTF, &b, be);
	b.len = 0;
	put_u32(&b, 1);
	put_prog(&b, 1, "p", 2, 0);
	sweep(PS_FEAT_BPF_PROG_INFO, &b, be);
	buf_free(&b);
}
END_TEST

/* BPF programs and BTF: kept by id, the first of each, as perf keeps
 * them; none of the other byte order, which perf does not read; arrays
 * that leave the program's data are damage. */
START_TEST(test_bpf)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(be);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { .be = be };

	put_u32(&b, 3);
	put_prog(&b, 9, "nine", 1, 0);
	put_prog(&b, 7, "seven", 2, 0);
	put_prog(&b, 9, "again", 1, 0);
	ck_assert_int_eq(decode(r, PS_FEAT_BPF_PROG_INFO, &b), 0);
	ck_assert_uint_eq(f->nr_bpf_progs, 3);
	if (be) {
		ck_assert_uint_eq(f->nr_bpf_prog_list, 0);
	} else {
		const struct ps_bpf_prog *p;

		ck_assert_uint_eq(f->nr_bpf_prog_list, 2);
		p = &f->bpf_prog_list[0];
		ck_assert_uint_eq(p->id, 7);
		ck_assert_str_eq(p->name, "seven");
		ck_assert(p->funcs_known);
		ck_assert_uint_eq(p->nr_funcs, 2);
		ck_assert_uint_eq(p->btf_id, 3);
		ck_assert_uint_eq(p->funcs[1].addr, 0xffffffffc0000001ull);
		ck_assert_uint_eq(p->funcs[1].size, 17);
		ck_assert_uint_eq(p->funcs[1].tag[0], 0x01); /* tags are bytes, here LE */
		ck_assert(p->funcs[1].has_btf_type);
		ck_assert_uint_eq(p->funcs[1].btf_type, 11);
		ck_assert_str_eq(f->bpf_prog_list[1].name, "nine");
	}
	/* addresses said to lie past the program's data */
	b.len = 0;
	put_u32(&b, 1);
	put_prog(&b, 9, "far", 1, 4096);
	if (be)
		ck_assert_int_eq(decode(r, PS_FEAT_BPF_PROG_INFO, &b), 0);
	else
		ck_assert_damaged(r, PS_FEAT_BPF_PROG_INFO, decode(r, PS_FEAT_BPF_PROG_INFO, &b),
		                  "program 9: the addresses, lengths and tags of its 1 functions");

	b.len = 0;
	put_u32(&b, 3);
	put_u32(&b, 4);
	put_u32(&b, 2);
	put_zeros(&b, 2);
	put_u32(&b, 2);
	put_u32(&b, 1);
	put_zeros(&b, 1);
	put_u32(&b, 4);
	put_u32(&b, 3);
	put_zeros(&b, 3);
	ck_assert_int_eq(decode(r, PS_FEAT_BPF_BTF, &b), 0);
	ck_assert_uint_eq(f->nr_bpf_btfs, 3);
	ck_assert_uint_eq(f->nr_bpf_btf_list, be ? 0 : 2);
	if (!be) {
		ck_assert_uint_eq(f->bpf_btf_list[0].id, 2);
		ck_assert_uint_eq(f->bpf_btf_list[1].id, 4);
		ck_assert_uint_eq(f->bpf_btf_list[1].size, 2);
	}
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

/* Sound features perf 6.1 refuses, after which it reads no feature:
 * the first such is kept. */
START_TEST(test_perf_stops)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(be);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { .be = be };

	/* a socket id above the number of CPUs: no ids, as in perf */
	put_u32(&b, 2);
	put_u32(&b, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_NRCPUS, &b), 0);
	b.len = 0;
	put_u32(&b, 1);
	put_hstring(&b, "0-1");
	put_u32(&b, 1);
	put_hstring(&b, "0-1");
	put_u32(&b, 0);
	put_u32(&b, 0);
	put_u32(&b, 1);
	put_u32(&b, 5);
	ck_assert_int_eq(decode(r, PS_FEAT_CPU_TOPOLOGY, &b), 0);
	ck_assert_ptr_null(f->cpu_ids);
	ck_assert_uint_eq(f->cpu_topology_sibling_cores.nr, 1);
	ck_assert_uint_eq(f->perf_stops_at, PS_FEAT_CPU_TOPOLOGY);
	/* the first refusal is the one perf stops at */
	b.len = 0;
	put_u64(&b, 1);
	ck_assert_int_eq(decode(r, PS_FEAT_DIR_FORMAT, &b), 0);
	ck_assert_uint_eq(f->perf_stops_at, PS_FEAT_CPU_TOPOLOGY);
	ps_reader_close(r);

	/* on aarch64 socket ids are not bounded by the CPUs */
	r = pipe_reader(be);
	f = ps_reader_features(r);
	b.len = 0;
	put_hstring(&b, "aarch64");
	ck_assert_int_eq(decode(r, PS_FEAT_ARCH, &b), 0);
	b.len = 0;
	put_u32(&b, 2);
	put_u32(&b, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_NRCPUS, &b), 0);
	b.len = 0;
	put_u32(&b, 0);
	put_u32(&b, 0);
	put_u32(&b, 0);
	put_u32(&b, 0);
	put_u32(&b, 1);
	put_u32(&b, 5);
	ck_assert_int_eq(decode(r, PS_FEAT_CPU_TOPOLOGY, &b), 0);
	ck_assert_ptr_nonnull(f->cpu_ids);
	ck_assert_int_eq(f->cpu_ids[1].socket_id, 5);
	ck_assert_uint_eq(f->perf_stops_at, 0);
	/* a group of two with no event to lead */
	b.len = 0;
	put_u32(&b, 1);
	put_hstring(&b, "{anon_group}");
	put_u32(&b, 0);
	put_u32(&b, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_GROUP_DESC, &b), 0);
	ck_assert_uint_eq(f->nr_groups, 1);
	ck_assert_uint_eq(f->perf_stops_at, PS_FEAT_GROUP_DESC);
	ps_reader_close(r);

	r = pipe_reader(be);
	f = ps_reader_features(r);
	b.len = 0;
	put_u32(&b, 2);
	put_u32(&b, 1);
	put_u64(&b, 1);
	put_u64(&b, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_CLOCK_DATA, &b), 0);
	ck_assert(!f->has_clock_data);
	ck_assert_uint_eq(f->perf_stops_at, PS_FEAT_CLOCK_DATA);
	ps_reader_close(r);

	r = pipe_reader(be);
	f = ps_reader_features(r);
	b.len = 0;
	put_u64(&b, 1);
	ck_assert_int_eq(decode(r, PS_FEAT_DIR_FORMAT, &b), 0);
	ck_assert_uint_eq(f->perf_stops_at, PS_FEAT_DIR_FORMAT);
	/* a CPU list perf cannot read is damage, as perf fails on it */
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 0);
	put_u64(&b, 1);
	put_u64(&b, 1);
	put_hstring(&b, "0-3,2");
	ck_assert_damaged(r, PS_FEAT_NUMA_TOPOLOGY, decode(r, PS_FEAT_NUMA_TOPOLOGY, &b),
	                  "node 0: a CPU list perf cannot read: \"0-3,2\"");
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

Suite *features_machine_suite(void)
{
	Suite *s = suite_create("reader machine features");
	TCase *tc = tcase_create("machine");

	tcase_add_loop_test(tc, test_topologies, 0, 2);
	tcase_add_loop_test(tc, test_pmu_caps_and_groups, 0, 2);
	tcase_add_loop_test(tc, test_absurd_counts, 0, 2);
	tcase_add_loop_test(tc, test_truncations, 0, 2);
	tcase_add_loop_test(tc, test_bpf, 0, 2);
	tcase_add_loop_test(tc, test_perf_stops, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
