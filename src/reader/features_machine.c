/* The features that describe the recording machine: CPU, NUMA, cache and
 * memory topology, hybrid core types, PMU capabilities, event groups, and
 * the AUX-area index (formats as perf's util/header.c writes them; the BPF
 * programs are in features_bpf.c). Every count is checked against what is
 * left of the section before anything is allocated for it, so a damaged
 * count is an error naming the feature, never an allocation of its size.
 */
#include "reader/feature_section_priv.h"

#include "base/cpu_list.h"

#include <errno.h>
#include <string.h>

/* more than any machine Linux runs on (its NR_CPUS tops out at 8192) */
#define MAX_CPUS 65536
/* a memory node's block bitmap: 2^24 blocks are 2 PiB of 128 MiB blocks */
#define MAX_MEMORY_BITS (1u << 24)

/* ---- CPU_TOPOLOGY ------------------------------------------------------- */

/* perf 6.1 takes a socket id above the number of CPUs for a topology
 * newer than itself: it drops every CPU's ids (and the dies after them)
 * and reads no feature after this one, except on s390 and aarch64, whose
 * socket ids are not so bounded. */
static bool socket_id_refused(const struct ps_features *f, uint32_t socket_id, uint32_t nr_cpus)
{
	if (f->arch && (strncmp(f->arch, "s390", 4) == 0 || strncmp(f->arch, "aarch64", 7) == 0))
		return false;
	return socket_id != UINT32_MAX && socket_id > nr_cpus;
}

int ps_decode_cpu_topology(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t nr_cpus = f->has_nrcpus ? f->nr_cpus_available : 0;
	struct ps_cpu_ids *ids;
	int err = ps_section_string_list(s, &f->cpu_topology_sibling_cores);

	if (!err)
		err = ps_section_string_list(s, &f->cpu_topology_sibling_threads);
	if (err)
		return err;
	/* perf before 4.x stopped here; the ids of each CPU follow (perf
	 * reads as many as NRCPUS says are available) */
	if (ps_cursor_left(&s->c) == 0)
		return 0;
	if (nr_cpus > MAX_CPUS)
		return ps_section_fail(s, "ids of %u CPUs, more than %u", nr_cpus, MAX_CPUS);
	ids = ps_section_array(s, nr_cpus, 8, sizeof(*ids), "CPUs' core and socket ids", &err);
	if (!ids)
		return err;
	for (uint32_t i = 0; i < nr_cpus; i++) {
		ids[i].core_id = (int32_t)ps_cursor_u32(&s->c);
		ids[i].socket_id = (int32_t)ps_cursor_u32(&s->c);
		ids[i].die_id = -1;
		if (socket_id_refused(f, (uint32_t)ids[i].socket_id, nr_cpus)) {
			ps_reader_log(s->r, PS_LOG_DEBUG,
			              "feature %s: CPU %u's socket id %u is more than the %u CPUs: "
			              "its ids are not kept, as perf does not keep them",
			              s->name, i, (uint32_t)ids[i].socket_id, nr_cpus);
			ps_features_perf_stops(f, PS_FEAT_CPU_TOPOLOGY);
			return 0;
		}
	}
	f->cpu_ids = ids;
	f->nr_cpu_ids = nr_cpus;
	/* perf 5.x adds the sibling dies and each CPU's die id */
	if (ps_cursor_left(&s->c) == 0)
		return 0;
	err = ps_section_string_list(s, &f->cpu_topology_sibling_dies);
	if (!err)
		err = ps_section_count_fits(s, nr_cpus, 4, "CPUs' die ids");
	if (err)
		return err;
	for (uint32_t i = 0; i < nr_cpus; i++)
		ids[i].die_id = (int32_t)ps_cursor_u32(&s->c);
	f->has_die_ids = true;
	return 0;
}

/* ---- NUMA_TOPOLOGY, CACHE, MEM_TOPOLOGY, HYBRID_TOPOLOGY ------------------ */

int ps_decode_numa_topology(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t nr = ps_cursor_u32(&s->c);
	struct ps_numa_node *nodes;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* u32 node, u64 total, u64 free, a string of at least its length */
	nodes = ps_section_array(s, nr, 24, sizeof(*nodes), "nodes", &err);
	if (!nodes)
		return err;
	for (uint32_t i = 0; i < nr; i++) {
		nodes[i].node = ps_cursor_u32(&s->c);
		nodes[i].mem_total_kb = ps_cursor_u64(&s->c);
		nodes[i].mem_free_kb = ps_cursor_u64(&s->c);
		if (!ps_cursor_ok(&s->c))
			return ps_section_truncated(s);
		err = ps_section_string(s, &nodes[i].cpus);
		if (err)
			return err;
		/* perf refuses the whole feature over a list it cannot read */
		err = ps_cpu_list_format(nodes[i].cpus, NULL);
		if (err == -ENOMEM)
			return ps_section_out_of_memory(s);
		if (err)
			return ps_section_fail(s, "node %u: a CPU list perf cannot read: \"%.40s\"",
			                       nodes[i].node, nodes[i].cpus);
	}
	f->numa_nodes = nodes;
	f->nr_numa_nodes = nr;
	return 0;
}

int ps_decode_cache(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t version = ps_cursor_u32(&s->c);
	uint32_t nr = ps_cursor_u32(&s->c);
	struct ps_cache_level *levels;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	if (version != 1)
		return ps_section_fail(s, "version %u, not 1", version);
	/* four u32 and three strings */
	levels = ps_section_array(s, nr, 28, sizeof(*levels), "cache levels", &err);
	if (!levels)
		return err;
	for (uint32_t i = 0; i < nr; i++) {
		struct ps_cache_level *l = &levels[i];

		l->level = ps_cursor_u32(&s->c);
		l->line_size = ps_cursor_u32(&s->c);
		l->sets = ps_cursor_u32(&s->c);
		l->ways = ps_cursor_u32(&s->c);
		if (!ps_cursor_ok(&s->c))
			return ps_section_truncated(s);
		err = ps_section_string(s, &l->type);
		if (!err)
			err = ps_section_string(s, &l->size);
		if (!err)
			err = ps_section_string(s, &l->cpus);
		if (err)
			return err;
	}
	f->cache_levels = levels;
	f->nr_cache_levels = nr;
	return 0;
}

int ps_decode_mem_topology(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint64_t version = ps_cursor_u64(&s->c);
	uint64_t block_size = ps_cursor_u64(&s->c);
	uint64_t nr = ps_cursor_u64(&s->c);
	struct ps_memory_node *nodes;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	if (version != 1)
		return ps_section_fail(s, "version %llu, not 1", (unsigned long long)version);
	/* u64 node, u64 size, u64 bitmap size */
	nodes = ps_section_array(s, nr, 24, sizeof(*nodes), "memory nodes", &err);
	if (!nodes)
		return err;
	for (uint64_t i = 0; i < nr; i++) {
		struct ps_memory_node *n = &nodes[i];
		uint64_t nr_bits, words;
		uint64_t *bits;

		n->node = ps_cursor_u64(&s->c);
		n->size = ps_cursor_u64(&s->c);
		nr_bits = ps_cursor_u64(&s->c);
		if (!ps_cursor_ok(&s->c))
			return ps_section_truncated(s);
		if (nr_bits > MAX_MEMORY_BITS)
			return ps_section_fail(s,
			                       "node %llu: a bitmap of %llu blocks, more than %u",
			                       (unsigned long long)n->node,
			                       (unsigned long long)nr_bits, MAX_MEMORY_BITS);
		words = (nr_bits + 63) / 64;
		bits = ps_section_array(s, words, 8, sizeof(*bits), "bitmap words", &err);
		if (!bits)
			return err;
		for (uint64_t w = 0; w < words; w++)
			bits[w] = ps_cursor_u64(&s->c);
		n->nr_bits = (size_t)nr_bits;
		n->bits = bits;
	}
	f->memory_block_size = block_size;
	f->memory_nodes = nodes;
	f->nr_memory_nodes = (size_t)nr;
	return 0;
}

int ps_decode_hybrid_topology(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t nr = ps_cursor_u32(&s->c);
	struct ps_hybrid_node *nodes;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	nodes = ps_section_array(s, nr, 8, sizeof(*nodes), "nodes", &err);
	if (!nodes)
		return err;
	for (uint32_t i = 0; i < nr; i++) {
		err = ps_section_string(s, &nodes[i].pmu);
		if (!err)
			err = ps_section_string(s, &nodes[i].cpus);
		if (err)
			return err;
	}
	f->hybrid_nodes = nodes;
	f->nr_hybrid_nodes = nr;
	return 0;
}

/* ---- CPU_PMU_CAPS, PMU_CAPS ---------------------------------------------- */

/* u32 nr, then nr pairs of strings, kept as "name=value" as perf keeps
 * (and prints) them. */
static int read_caps(struct ps_feature_section *s, struct ps_string_list *out)
{
	uint32_t nr = ps_cursor_u32(&s->c);
	const char **items;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	items = ps_section_array(s, nr, 8, sizeof(*items), "capabilities", &err);
	if (!items)
		return err;
	for (uint32_t i = 0; i < nr; i++) {
		const char *name, *value;
		size_t name_len, value_len;
		char *pair;

		err = ps_section_string(s, &name);
		if (!err)
			err = ps_section_string(s, &value);
		if (err)
			return err;
		name_len = strlen(name);
		value_len = strlen(value);
		pair = ps_arena_alloc(&s->r->arena, name_len + value_len + 2);
		if (!pair)
			return ps_section_out_of_memory(s);
		memcpy(pair, name, name_len);
		pair[name_len] = '=';
		memcpy(pair + name_len + 1, value, value_len + 1);
		items[i] = pair;
	}
	out->items = items;
	out->nr = nr;
	return 0;
}

int ps_decode_cpu_pmu_caps(struct ps_feature_section *s)
{
	return read_caps(s, &s->r->features.cpu_pmu_caps);
}

int ps_decode_pmu_caps(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t nr = ps_cursor_u32(&s->c);
	struct ps_pmu_caps *pmus;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* u32 number of caps and the PMU's name */
	pmus = ps_section_array(s, nr, 8, sizeof(*pmus), "PMUs", &err);
	if (!pmus)
		return err;
	for (uint32_t i = 0; i < nr; i++) {
		err = read_caps(s, &pmus[i].caps);
		if (!err)
			err = ps_section_string(s, &pmus[i].pmu);
		if (err)
			return err;
	}
	f->pmu_caps = pmus;
	f->nr_pmu_caps = nr;
	return 0;
}

/* ---- GROUP_DESC ---------------------------------------------------------- */

/* perf 6.1's check of the groups against its events (process_group_desc):
 * each group's leader is the event of its index and its members the
 * events after it, no group starts inside another, and every group ends
 * by the last event. perf reads no feature after groups that fail it. */
static bool groups_fit_events(const struct ps_group_desc *groups, uint32_t nr_groups,
                              size_t nr_events)
{
	uint32_t group = 0, left = 0;

	if (!nr_groups)
		return true;
	for (size_t i = 0; i < nr_events; i++) {
		if (group < nr_groups && i == groups[group].leader_index) {
			if (left > 0)
				return false;
			/* perf's u32: a group of no members takes the rest */
			left = groups[group].nr_members - 1;
			group++;
		} else if (left) {
			left--;
		}
	}
	return group == nr_groups && left == 0;
}

int ps_decode_group_desc(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t nr = ps_cursor_u32(&s->c);
	struct ps_group_desc *groups;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* a name, the leader's index and the number of members */
	groups = ps_section_array(s, nr, 12, sizeof(*groups), "groups", &err);
	if (!groups)
		return err;
	for (uint32_t i = 0; i < nr; i++) {
		err = ps_section_string(s, &groups[i].name);
		if (err)
			return err;
		groups[i].leader_index = ps_cursor_u32(&s->c);
		groups[i].nr_members = ps_cursor_u32(&s->c);
		if (!ps_cursor_ok(&s->c))
			return ps_section_truncated(s);
	}
	f->groups = groups;
	f->nr_groups = nr;
	if (!groups_fit_events(groups, nr, s->r->nr_attrs)) {
		ps_reader_log(s->r, PS_LOG_DEBUG,
		              "feature %s: the %u groups do not fit the %zu events, as perf "
		              "finds too",
		              s->name, nr, s->r->nr_attrs);
		ps_features_perf_stops(f, PS_FEAT_GROUP_DESC);
	}
	return 0;
}

/* ---- AUXTRACE: counted and checked ---------------------------------------- */

/* Its entries index AUX-area data that no output here uses, so only
 * their number is checked and kept. */

int ps_decode_auxtrace(struct ps_feature_section *s)
{
	uint64_t nr = ps_cursor_u64(&s->c);
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* struct auxtrace_index_entry: u64 file offset, u64 size */
	err = ps_section_count_fits(s, nr, 16, "index entries");
	if (err)
		return err;
	s->r->features.nr_auxtrace_index = (size_t)nr;
	return 0;
}
