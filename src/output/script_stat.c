/* perf script on a `perf stat record` capture: the counts of every event
 * at each STAT_ROUND, as perf 6.1's __process_stat() prints them, after
 * perf_stat_process_counter() made them deltas and scaled them (every
 * aggregation mode but the global one changes the per-CPU, per-thread
 * counts that are printed). The CPU and thread maps come from the first
 * CPU_MAP and THREAD_MAP records (perf ignores later ones); the counts of
 * every event are kept from the first STAT record on. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/message.h"
#include "output/script_priv.h"

/* perf's enum aggr_mode */
enum {
	AGGR_NONE,
	AGGR_GLOBAL,
	AGGR_SOCKET,
	AGGR_DIE,
	AGGR_CORE,
	AGGR_THREAD,
	AGGR_UNSET,
	AGGR_NODE
};

struct stat_count {
	uint64_t val, ena, run;
};

struct ps_script_stat {
	struct ps_record_stat_config config; /* the values given so far */
	int32_t *cpus; /* the CPU map, in the record's order; NULL before it */
	size_t nr_cpus;
	int32_t *pids; /* the thread map; NULL before it */
	size_t nr_threads;
	/* per event (attr index), nr_cpus * nr_threads counts each, and the
	 * raw counts of the last round (perf's prev_raw_counts) */
	struct stat_count *counts, *prev;
	size_t nr_attrs;
	bool header_printed;
};

void ps_script_stat_free(struct ps_script_stat *stat)
{
	if (!stat)
		return;
	free(stat->cpus);
	free(stat->pids);
	free(stat->counts);
	free(stat->prev);
	free(stat);
}

static size_t per_event(const struct ps_script_stat *stat)
{
	return stat->nr_cpus * stat->nr_threads;
}

/* The most counts kept (24 bytes each): perf stat writes a CPU map of
 * one "any CPU" entry per thread, or a thread map of one entry per CPU,
 * so real captures keep about CPUs x events; a hostile capture could ask
 * for 65,536 CPUs x 2,730 threads per event. */
#define MAX_COUNTS (1u << 22)

/* set_maps(): the counts, once both maps are known; made at the first
 * count, so that the maps of a capture without counts (every perf record
 * capture has them) cost nothing and never fail */
static int make_counts(struct ps_script_stat *stat, const struct ps_reader *reader,
                       const struct ps_event *ev, char *errmsg, size_t errmsg_size)
{
	size_t nr;

	if (stat->counts)
		return 0;
	stat->nr_attrs = ps_reader_nr_attrs(reader);
	if (stat->nr_cpus > MAX_COUNTS || stat->nr_threads > MAX_COUNTS ||
	    per_event(stat) > MAX_COUNTS ||
	    (stat->nr_attrs && per_event(stat) > MAX_COUNTS / stat->nr_attrs))
		return ps_fail(errmsg, errmsg_size, -EINVAL,
		               "%s: offset 0x%" PRIx64
		               ": PERF_RECORD_STAT: %zu CPUs x %zu threads x %zu events is more "
		               "counts than %u",
		               ps_reader_path(reader), ev->offset, stat->nr_cpus, stat->nr_threads,
		               stat->nr_attrs, MAX_COUNTS);
	nr = per_event(stat) * stat->nr_attrs;
	stat->counts = calloc(nr ? nr : 1, sizeof(*stat->counts));
	stat->prev = calloc(nr ? nr : 1, sizeof(*stat->prev));
	if (stat->counts && stat->prev)
		return 0;
	free(stat->counts);
	free(stat->prev);
	stat->counts = stat->prev = NULL;
	return -ENOMEM;
}

/* perf_cpu_map__idx(): a binary search, as perf's (the maps perf stat
 * writes are sorted) */
static long cpu_index(const struct ps_script_stat *stat, int32_t cpu)
{
	size_t low = 0, high = stat->nr_cpus;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (stat->cpus[mid] == cpu)
			return (long)mid;
		if (stat->cpus[mid] < cpu)
			low = mid + 1;
		else
			high = mid;
	}
	return -1;
}

/* evlist__id2evsel(): the event of the id; the first event when there is
 * one, for id 0, and for an unknown id unless the first event's records
 * carry ids (sample_id_all) */
static const struct ps_attr *attr_of_id(const struct ps_reader *reader, uint64_t id)
{
	size_t nr = ps_reader_nr_attrs(reader);
	const struct ps_attr *first = nr ? ps_reader_attr(reader, 0) : NULL;
	const struct ps_attr *attr;

	if (nr == 1 || !id)
		return first;
	if ((attr = ps_reader_attr_of_id(reader, id)))
		return attr;
	return first && !(first->flags & PS_ATTR_SAMPLE_ID_ALL) ? first : NULL;
}

/* perf_event__process_stat_event() */
static int store_count(struct ps_script_stat *stat, const struct ps_reader *reader,
                       const struct ps_event *ev, char *errmsg, size_t errmsg_size)
{
	const struct ps_record_stat *st = &ev->u.stat;
	const struct ps_attr *attr = attr_of_id(reader, st->id);
	long idx;

	if (!attr)
		return ps_fail(errmsg, errmsg_size, -EINVAL,
		               "%s: offset 0x%" PRIx64
		               ": PERF_RECORD_STAT: no event has id %" PRIu64,
		               ps_reader_path(reader), ev->offset, st->id);
	idx = stat->cpus && stat->pids ? cpu_index(stat, (int32_t)st->cpu) : -1;
	if (idx < 0)
		return ps_fail(
		        errmsg, errmsg_size, -EINVAL,
		        "%s: offset 0x%" PRIx64 ": PERF_RECORD_STAT: invalid CPU %d for event %s",
		        ps_reader_path(reader), ev->offset, (int)(int32_t)st->cpu, attr->name);
	int err = make_counts(stat, reader, ev, errmsg, errmsg_size);
	if (err)
		return err;
	if (attr->index >= stat->nr_attrs)
		return ps_fail(errmsg, errmsg_size, -EINVAL,
		               "%s: offset 0x%" PRIx64
		               ": PERF_RECORD_STAT: event %s arrived after the counts began",
		               ps_reader_path(reader), ev->offset, attr->name);
	if (st->thread >= stat->nr_threads)
		return ps_fail(errmsg, errmsg_size, -EINVAL,
		               "%s: offset 0x%" PRIx64
		               ": PERF_RECORD_STAT: no count for CPU %d thread %d of event %s",
		               ps_reader_path(reader), ev->offset, (int)(int32_t)st->cpu,
		               (int)st->thread, attr->name);
	stat->counts[attr->index * per_event(stat) + st->thread * stat->nr_cpus + (size_t)idx] =
	        (struct stat_count){ st->val, st->ena, st->run };
	return 0;
}

/* process_counter_values() outside the global mode: the delta from the
 * last raw count, scaled by enabled / running time */
static void process_count(const struct ps_script_stat *stat, struct stat_count *count,
                          struct stat_count *prev)
{
	struct stat_count last = *prev;

	*prev = *count;
	count->val -= last.val;
	count->ena -= last.ena;
	count->run -= last.run;
	if (!stat->config.scale)
		return;
	if (count->run == 0)
		count->val = 0;
	else if (count->run < count->ena)
		count->val =
		        (uint64_t)((double)count->val * (double)count->ena / (double)count->run);
}

/* process_stat_round_event(): each event's counts, processed, printed */
static void print_round(struct ps_script_stat *stat, const struct ps_reader *reader,
                        struct ps_strbuf *out, uint64_t time)
{
	/* an enum in perf: its int's value */
	int mode = (int)(uint32_t)stat->config.aggr_mode;
	bool per_count = mode == AGGR_NONE || mode == AGGR_SOCKET || mode == AGGR_DIE ||
	                 mode == AGGR_CORE || mode == AGGR_THREAD || mode == AGGR_NODE;

	if (!stat->counts)
		return;
	for (size_t a = 0; a < stat->nr_attrs; a++) {
		struct stat_count *counts = stat->counts + a * per_event(stat);
		struct stat_count *prev = stat->prev + a * per_event(stat);
		const char *name = ps_reader_attr(reader, a)->name;

		for (size_t i = 0; per_count && i < per_event(stat); i++)
			process_count(stat, &counts[i], &prev[i]);
		if (!stat->header_printed) {
			ps_strbuf_addf(out, "%3s %8s %15s %15s %15s %15s %s\n", "CPU", "THREAD",
			               "VAL", "ENA", "RUN", "TIME", "EVENT");
			stat->header_printed = true;
		}
		for (size_t t = 0; t < stat->nr_threads; t++)
			for (size_t c = 0; c < stat->nr_cpus; c++) {
				const struct stat_count *n = &counts[t * stat->nr_cpus + c];

				ps_strbuf_addf(out,
				               "%3d %8d %15" PRIu64 " %15" PRIu64 " %15" PRIu64
				               " %15" PRIu64 " %s\n",
				               (int)stat->cpus[c], (int)stat->pids[t], n->val,
				               n->ena, n->run, time, name);
			}
	}
}

static void read_config(struct ps_record_stat_config *to, const struct ps_record_stat_config *from)
{
	if (from->has_aggr_mode)
		to->aggr_mode = from->aggr_mode;
	if (from->has_interval)
		to->interval = from->interval;
	if (from->has_scale)
		to->scale = from->scale;
}

bool ps_script_stat_handles(uint32_t record_type)
{
	switch (record_type) {
	case PS_RECORD_THREAD_MAP:
	case PS_RECORD_CPU_MAP:
	case PS_RECORD_STAT_CONFIG:
	case PS_RECORD_STAT:
	case PS_RECORD_STAT_ROUND:
		return true;
	default:
		return false;
	}
}

int ps_script_stat_record(struct ps_script_stat **statp, struct ps_strbuf *out,
                          const struct ps_reader *reader, const struct ps_event *ev, char *errmsg,
                          size_t errmsg_size)
{
	struct ps_script_stat *stat = *statp;

	if (!stat && !(stat = *statp = calloc(1, sizeof(*stat))))
		return -ENOMEM;
	switch (ev->type) {
	case PS_RECORD_STAT_CONFIG:
		read_config(&stat->config, &ev->u.stat_config);
		return 0;
	case PS_RECORD_THREAD_MAP: {
		const struct ps_record_thread_map *tm = &ev->u.thread_map;

		if (stat->pids)
			return 0; /* "Extra thread map event, ignoring." */
		stat->pids = calloc(tm->nr ? tm->nr : 1, sizeof(*stat->pids));
		if (!stat->pids)
			return -ENOMEM;
		for (uint64_t i = 0; i < tm->nr; i++)
			stat->pids[i] = (int32_t)tm->entries[i].pid;
		stat->nr_threads = tm->nr;
		return 0;
	}
	case PS_RECORD_CPU_MAP: {
		const struct ps_record_cpu_map *cm = &ev->u.cpu_map;

		if (stat->cpus)
			return 0; /* "Extra cpu map event, ignoring." */
		stat->cpus = calloc(cm->nr ? cm->nr : 1, sizeof(*stat->cpus));
		if (!stat->cpus)
			return -ENOMEM;
		for (size_t i = 0; i < cm->nr; i++)
			stat->cpus[i] = (int32_t)cm->cpus[i]; /* UINT32_MAX: -1, any CPU */
		stat->nr_cpus = cm->nr;
		return 0;
	}
	case PS_RECORD_STAT:
		return store_count(stat, reader, ev, errmsg, errmsg_size);
	case PS_RECORD_STAT_ROUND:
		print_round(stat, reader, out, ev->u.stat_round.time);
		return 0;
	default:
		return 0;
	}
}
