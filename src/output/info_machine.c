/* `pystitch info`: the features that describe the recording machine and
 * the event groups, as perf 6.1 prints them (util/header.c
 * print_cpu_topology, print_numa_topology, print_cache, print_mem_topology,
 * print_hybrid_topology, print_cpu_pmu_caps, print_pmu_caps,
 * print_group_desc). Fixed-size buffers of perf's that cut a line short
 * are cut at the same length here.
 */
#include "output/info_priv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu_list.h"

static const char *str_or_null(const char *s)
{
	return s ? s : "(null)"; /* what glibc's printf shows for NULL */
}

/* ---- CPU_TOPOLOGY --------------------------------------------------- */

static void print_list(struct ps_strbuf *out, const char *label, const struct ps_string_list *l)
{
	for (size_t i = 0; i < l->nr; i++)
		ps_strbuf_addf(out, "# %s : %s\n", label, l->items[i]);
}

void ps_info_print_cpu_topology(struct ps_strbuf *out, const struct ps_features *f)
{
	/* perf takes the die lines and the die ids' format from the number
	 * of sibling die lists, not from whether die ids were recorded */
	bool dies = f->cpu_topology_sibling_dies.nr != 0;

	print_list(out, "sibling sockets", &f->cpu_topology_sibling_cores);
	print_list(out, "sibling dies   ", &f->cpu_topology_sibling_dies);
	print_list(out, "sibling threads", &f->cpu_topology_sibling_threads);
	if (!f->cpu_ids) {
		ps_strbuf_addstr(out,
		                 dies ? "# Core ID, Die ID and Socket ID information is not "
		                        "available\n"
		                      : "# Core ID and Socket ID information is not available\n");
		return;
	}
	for (size_t i = 0; i < f->nr_cpu_ids; i++) {
		const struct ps_cpu_ids *c = &f->cpu_ids[i];

		if (dies)
			ps_strbuf_addf(out, "# CPU %d: Core ID %d, Die ID %d, Socket ID %d\n",
			               (int)i, c->core_id, c->die_id, c->socket_id);
		else
			ps_strbuf_addf(out, "# CPU %d: Core ID %d, Socket ID %d\n", (int)i,
			               c->core_id, c->socket_id);
	}
}

/* ---- NUMA_TOPOLOGY -------------------------------------------------- */

/* cpu_map__fprintf()'s buffer */
#define CPU_MAP_TEXT_MAX 1023

void ps_info_print_numa_topology(struct ps_strbuf *out, const struct ps_features *f)
{
	for (size_t i = 0; i < f->nr_numa_nodes; i++) {
		const struct ps_numa_node *n = &f->numa_nodes[i];
		struct ps_strbuf cpus = PS_STRBUF_INIT;

		ps_strbuf_addf(
		        out, "# node%u meminfo  : total = %" PRIu64 " kB, free = %" PRIu64 " kB\n",
		        n->node, n->mem_total_kb, n->mem_free_kb);
		ps_strbuf_addf(out, "# node%u cpu list : ", n->node);
		/* the reader took only lists perf reads; perf prints them
		 * back sorted, with runs merged */
		if (ps_cpu_list_format(str_or_null(n->cpus), &cpus) == 0)
			ps_strbuf_add(out, cpus.buf,
			              cpus.len < CPU_MAP_TEXT_MAX ? cpus.len : CPU_MAP_TEXT_MAX);
		else if (ps_strbuf_failed(&cpus))
			out->failed = true;
		ps_strbuf_release(&cpus);
		ps_strbuf_addch(out, '\n');
	}
}

/* ---- CACHE, HYBRID_TOPOLOGY ----------------------------------------- */

void ps_info_print_cache(struct ps_strbuf *out, const struct ps_features *f)
{
	ps_strbuf_addstr(out, "# CPU cache info:\n");
	for (size_t i = 0; i < f->nr_cache_levels; i++) {
		const struct ps_cache_level *c = &f->cache_levels[i];

		ps_strbuf_addf(out, "#  L%d %-15s %8s [%s]\n", (int)c->level, str_or_null(c->type),
		               str_or_null(c->size), str_or_null(c->cpus));
	}
}

void ps_info_print_hybrid_topology(struct ps_strbuf *out, const struct ps_features *f)
{
	ps_strbuf_addstr(out, "# hybrid cpu system:\n");
	for (size_t i = 0; i < f->nr_hybrid_nodes; i++)
		ps_strbuf_addf(out, "# %s cpu list : %s\n", str_or_null(f->hybrid_nodes[i].pmu),
		               str_or_null(f->hybrid_nodes[i].cpus));
}

/* ---- MEM_TOPOLOGY --------------------------------------------------- */

/* memory_node__fprintf()'s buffer for the block list */
#define BLOCK_LIST_MAX 99

static bool bit_set(const struct ps_memory_node *n, size_t bit)
{
	return (n->bits[bit / 64] >> (bit % 64)) & 1;
}

/* perf's unit_number__scnprintf(): 1024-based, at most G, and a number
 * stays in a unit up to twice the next one's size */
static void print_size(struct ps_strbuf *out, uint64_t n)
{
	static const char unit[] = "BKMG";
	int i = 0;

	while (n / 1024 > 1 && i < 3) {
		n /= 1024;
		i++;
	}
	ps_strbuf_addf(out, "%" PRIu64 "%c", n, unit[i]);
}

/* bitmap_scnprintf(): the set blocks as ranges, cut at perf's buffer */
static void print_blocks(struct ps_strbuf *out, const struct ps_memory_node *n)
{
	size_t start = out->len;

	for (size_t bit = 0; bit < n->nr_bits; bit++) {
		size_t last = bit;

		if (!bit_set(n, bit))
			continue;
		while (last + 1 < n->nr_bits && bit_set(n, last + 1))
			last++;
		if (out->len > start)
			ps_strbuf_addch(out, ',');
		ps_strbuf_addf(out, "%d", (int)bit);
		if (last > bit)
			ps_strbuf_addf(out, "-%d", (int)last);
		bit = last;
		if (out->len - start >= BLOCK_LIST_MAX)
			break;
	}
	if (!out->failed && out->len - start > BLOCK_LIST_MAX) {
		out->len = start + BLOCK_LIST_MAX;
		out->buf[out->len] = 0;
	}
}

void ps_info_print_mem_topology(struct ps_strbuf *out, const struct ps_features *f)
{
	ps_strbuf_addf(out, "# memory nodes (nr %d, block size 0x%llx):\n", (int)f->nr_memory_nodes,
	               (unsigned long long)f->memory_block_size);
	for (size_t i = 0; i < f->nr_memory_nodes; i++) {
		const struct ps_memory_node *n = &f->memory_nodes[i];
		uint64_t blocks = 0;

		/* the node's size as perf prints it: its blocks, not the
		 * size field it reads and overwrites with the bitmap's */
		for (size_t bit = 0; bit < n->nr_bits; bit++)
			blocks += bit_set(n, bit);
		ps_strbuf_addf(out, "#  %3" PRIu64 " [", n->node);
		print_size(out, f->memory_block_size * blocks);
		ps_strbuf_addstr(out, "]: ");
		print_blocks(out, n);
		ps_strbuf_addch(out, '\n');
	}
}

/* ---- CPU_PMU_CAPS, PMU_CAPS ----------------------------------------- */

static void print_caps(struct ps_strbuf *out, const char *pmu, const struct ps_string_list *caps)
{
	if (!caps->nr) {
		ps_strbuf_addf(out, "# %s pmu capabilities: not available\n", pmu);
		return;
	}
	ps_strbuf_addf(out, "# %s pmu capabilities: ", pmu);
	for (size_t i = 0; i < caps->nr; i++)
		ps_strbuf_addf(out, "%s%s", i ? ", " : "", caps->items[i]);
	ps_strbuf_addch(out, '\n');
}

void ps_info_print_cpu_pmu_caps(struct ps_strbuf *out, const struct ps_features *f)
{
	print_caps(out, "cpu", &f->cpu_pmu_caps);
}

void ps_info_print_pmu_caps(struct ps_strbuf *out, const struct ps_features *f)
{
	/* none at all (a machine whose PMUs have no caps) prints nothing */
	for (size_t i = 0; i < f->nr_pmu_caps; i++)
		print_caps(out, str_or_null(f->pmu_caps[i].pmu), &f->pmu_caps[i].caps);
}

/* ---- GROUP_DESC ----------------------------------------------------- */

/* What perf's process_group_desc() makes of one event. */
struct group_member {
	size_t leader;
	int nr_members;
	const char *group_name;
};

void ps_info_print_group_desc(struct ps_strbuf *out, const struct ps_reader *reader,
                              const struct ps_features *f)
{
	size_t nr_events = ps_reader_nr_attrs(reader), group = 0, leader = 0;
	struct group_member *events;
	uint32_t left = 0;

	if (!f->nr_groups || !nr_events)
		return;
	events = calloc(nr_events, sizeof(*events));
	if (!events) {
		out->failed = true;
		return;
	}
	for (size_t i = 0; i < nr_events; i++)
		events[i].leader = i;
	/* each group's leader is the event of its index, its members the
	 * events after it; perf stops at a group that starts inside the one
	 * before, keeping what it has set (the count is perf's u32, so a
	 * group of 0 members takes every event after its leader) */
	for (size_t i = 0; i < nr_events; i++) {
		if (group < f->nr_groups && i == f->groups[group].leader_index) {
			const char *name = f->groups[group].name;

			events[i].leader = i;
			if (name && strcmp(name, "{anon_group}") != 0)
				events[i].group_name = name;
			events[i].nr_members = (int)f->groups[group].nr_members;
			if (left > 0)
				break;
			leader = i;
			left = (uint32_t)events[i].nr_members - 1;
			group++;
		} else if (left) {
			events[i].leader = leader;
			left--;
		}
	}
	left = 0;
	for (size_t i = 0; i < nr_events; i++) {
		const struct ps_attr *a = ps_reader_attr(reader, i);
		const char *name = str_or_null(a ? a->name : NULL);

		if (events[i].leader == i && events[i].nr_members > 1) {
			ps_strbuf_addf(out, "# group: %s{%s",
			               events[i].group_name ? events[i].group_name : "", name);
			left = (uint32_t)events[i].nr_members - 1;
		} else if (left) {
			ps_strbuf_addf(out, ",%s", name);
			if (--left == 0)
				ps_strbuf_addstr(out, "}\n");
		}
	}
	free(events);
}
