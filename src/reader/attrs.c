/* Event attributes: decoding perf_event_attr of any size and byte order,
 * the id -> attr map, and the id positions perf uses to tell which event
 * a record belongs to (evlist__event2evsel in perf).
 */
#include "reader/reader_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/hash.h"
#include "reader/perf_format_priv.h"

static uint8_t reverse_bits(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	b = (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
	return b;
}

int ps_attr_parse(struct ps_reader *r, const uint8_t *data, size_t size, uint64_t offset,
                  uint32_t record_type, struct ps_attr *out, size_t *consumed)
{
	struct ps_cursor c = ps_cursor_make(data, size, r->swap);
	uint8_t known[PS_ATTR_SIZE_KNOWN];
	uint32_t attr_size;

	memset(out, 0, sizeof(*out));
	ps_cursor_u32(&c);
	attr_size = ps_cursor_u32(&c);
	if (!ps_cursor_ok(&c))
		return ps_reader_fail_at(r, -EINVAL, offset, record_type,
		                         "attr: truncated (%zu bytes)", size);
	if (attr_size == 0)
		attr_size = PS_ATTR_SIZE_VER0;
	if (attr_size < PS_ATTR_SIZE_VER0 || attr_size > PS_ATTR_SIZE_MAX || (attr_size & 7))
		return ps_reader_fail_at(r, -EINVAL, offset + 4, record_type,
		                         "attr: size %u is invalid", attr_size);
	if (attr_size > size)
		return ps_reader_fail_at(r, -EINVAL, offset + 4, record_type,
		                         "attr: size %u larger than the %zu bytes that hold it",
		                         attr_size, size);
	/* copy what this reader knows; newer fields stay zero, unknown
	 * trailing fields are skipped. The bytes are the cursor's: attr_size
	 * was checked against size above, and the peek checks it again. */
	memset(known, 0, sizeof(known));
	{
		size_t copied = attr_size < sizeof(known) ? attr_size : sizeof(known);
		const uint8_t *bytes = ps_cursor_peek(&c, 0, copied);

		if (bytes)
			memcpy(known, bytes, copied);
	}
	c = ps_cursor_make(known, sizeof(known), r->swap);

	out->type = ps_cursor_u32(&c);
	out->size = ps_cursor_u32(&c);
	out->config = ps_cursor_u64(&c);
	out->sample_period = ps_cursor_u64(&c);
	out->sample_type = ps_cursor_u64(&c);
	out->read_format = ps_cursor_u64(&c);
	{
		/* The bitfield word: in a file of the other byte order each
		 * byte holds its bits in reverse (perf's swap_bitfield). */
		const uint8_t *b = ps_cursor_take(&c, 8);
		uint64_t flags = 0;
		for (int i = 0; i < 8; i++) {
			uint8_t v = r->swap ? reverse_bits(b[i]) : b[i];
			flags |= (uint64_t)v << (8 * i);
		}
		out->flags = flags;
	}
	out->wakeup_events = ps_cursor_u32(&c);
	out->bp_type = ps_cursor_u32(&c);
	out->config1 = ps_cursor_u64(&c);
	out->config2 = ps_cursor_u64(&c);
	out->branch_sample_type = ps_cursor_u64(&c);
	out->sample_regs_user = ps_cursor_u64(&c);
	out->sample_stack_user = ps_cursor_u32(&c);
	out->clockid = (int32_t)ps_cursor_u32(&c);
	out->sample_regs_intr = ps_cursor_u64(&c);
	out->aux_watermark = ps_cursor_u32(&c);
	out->sample_max_stack = ps_cursor_u16(&c);
	ps_cursor_u16(&c);
	out->aux_sample_size = ps_cursor_u32(&c);
	ps_cursor_u32(&c);
	out->sig_data = ps_cursor_u64(&c);
	out->config3 = ps_cursor_u64(&c);
	out->size = attr_size;
	*consumed = attr_size;
	return 0;
}

/* ---- id map ------------------------------------------------------- */

static size_t id_hash(uint64_t id, size_t cap)
{
	return (size_t)ps_hash_u64(id) & (cap - 1);
}

static int id_map_grow(struct ps_id_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *ids = calloc(cap, sizeof(*ids));
	uint32_t *idx = malloc(cap * sizeof(*idx));
	if (!ids || !idx) {
		free(ids);
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		idx[i] = UINT32_MAX;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->attr_index[i] == UINT32_MAX)
			continue;
		size_t h = id_hash(m->ids[i], cap);
		while (idx[h] != UINT32_MAX)
			h = (h + 1) & (cap - 1);
		ids[h] = m->ids[i];
		idx[h] = m->attr_index[i];
	}
	free(m->ids);
	free(m->attr_index);
	m->ids = ids;
	m->attr_index = idx;
	m->cap = cap;
	return 0;
}

static int id_map_put(struct ps_id_map *m, uint64_t id, uint32_t index)
{
	size_t h;
	if ((m->used + 1) * 2 > m->cap && id_map_grow(m))
		return -ENOMEM;
	h = id_hash(id, m->cap);
	while (m->attr_index[h] != UINT32_MAX) {
		if (m->ids[h] == id) {
			m->attr_index[h] = index; /* a later attr claims the id */
			return 0;
		}
		h = (h + 1) & (m->cap - 1);
	}
	m->ids[h] = id;
	m->attr_index[h] = index;
	m->used++;
	return 0;
}

const struct ps_attr *ps_attrs_find_id(const struct ps_reader *r, uint64_t id)
{
	const struct ps_id_map *m = &r->id_map;
	size_t h;
	if (!m->cap)
		return NULL;
	h = id_hash(id, m->cap);
	while (m->attr_index[h] != UINT32_MAX) {
		if (m->ids[h] == id)
			return &r->attrs[m->attr_index[h]];
		h = (h + 1) & (m->cap - 1);
	}
	return NULL;
}

/* ---- names -------------------------------------------------------- */

static const char *const hw_names[] = {
	"cycles",
	"instructions",
	"cache-references",
	"cache-misses",
	"branches",
	"branch-misses",
	"bus-cycles",
	"stalled-cycles-frontend",
	"stalled-cycles-backend",
	"ref-cycles",
};
/* perf 6.1's evsel__sw_names: nothing past "dummy" */
static const char *const sw_names[] = {
	"cpu-clock",    "task-clock",   "page-faults",      "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
};

/* perf_event_attr bits of the flags word */
#define ATTR_EXCLUDE_USER (1ULL << 4)
#define ATTR_EXCLUDE_KERNEL (1ULL << 5)
#define ATTR_EXCLUDE_HV (1ULL << 6)
#define ATTR_PRECISE_SHIFT 15
#define ATTR_EXCLUDE_HOST (1ULL << 19)
#define ATTR_EXCLUDE_GUEST (1ULL << 20)

/* evsel__add_modifiers(): ":" and the letters of what is counted */
static void add_modifiers(char *buf, size_t size, const struct ps_attr *attr)
{
	uint64_t f = attr->flags;
	unsigned precise = (unsigned)((f >> ATTR_PRECISE_SHIFT) & 3);
	bool guest_default = false;
	char mods[16];
	size_t n = 0;

	if (f & (ATTR_EXCLUDE_KERNEL | ATTR_EXCLUDE_USER | ATTR_EXCLUDE_HV)) {
		if (!(f & ATTR_EXCLUDE_KERNEL))
			mods[n++] = 'k';
		if (!(f & ATTR_EXCLUDE_USER))
			mods[n++] = 'u';
		if (!(f & ATTR_EXCLUDE_HV))
			mods[n++] = 'h';
		guest_default = true;
	}
	for (unsigned i = 0; i < precise; i++)
		mods[n++] = 'p';
	if (precise)
		guest_default = true;
	if ((f & ATTR_EXCLUDE_HOST) || !!(f & ATTR_EXCLUDE_GUEST) == guest_default) {
		if (!(f & ATTR_EXCLUDE_HOST))
			mods[n++] = 'H';
		if (!(f & ATTR_EXCLUDE_GUEST))
			mods[n++] = 'G';
	}
	if (n) {
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, ":%.*s", (int)n, mods);
	}
}

/* Legacy hardware events: the low 32 bits of config are the event, the
 * high 32 bits the type of the PMU that counts it (perf 5.13 and later on
 * hybrid CPUs, e.g. cpu_core or cpu_atom). */
#define HW_EVENT_MASK 0xffffffffULL
#define PMU_TYPE_SHIFT 32

/* x86 perf's arch_evsel__hw_name() (perf 6.1 has it): an event with a
 * PMU type is "PMU/event/", PMU being the name perf knows the event's PMU
 * by. perf sets that name (evsel->pmu_name, since 6.12 evsel->pmu) only
 * when it parses or opens events (perf record, perf stat), never from a
 * capture, not even from its PMU_MAPPINGS: perf script prints "cpu" for
 * cpu_core and cpu_atom alike (perf 6.1 on a synthetic capture). perf
 * built for other architectures prints "unknown-hardware" there. */
static void hw_name(char *buf, size_t size, uint64_t config)
{
	uint64_t event = config & HW_EVENT_MASK;
	const char *name = event < sizeof(hw_names) / sizeof(hw_names[0]) ? hw_names[event]
	                                                                  : "unknown-hardware";

	if (config >> PMU_TYPE_SHIFT)
		snprintf(buf, size, "cpu/%s/", name);
	else
		snprintf(buf, size, "%s", name);
}

/* perf's evsel__hw_cache_name(): config is cache | op << 8 | result << 16
 * (bits 24-31 are not looked at, and a hybrid CPU's PMU type in the high
 * 32 bits does not show in the name). Each part is spelled with the first
 * of perf's aliases for it: an access count is "CACHE-OPs"
 * (L1-dcache-loads, branch-loads), a miss count "CACHE-OP-misses"
 * (L1-dcache-load-misses); a combination the cache does not have is
 * "invalid-cache". */
static const char *const cache_names[] = { "L1-dcache", "L1-icache", "LLC", "dTLB",
	                                   "iTLB",      "branch",    "node" };
static const char *const cache_op_names[][2] = {
	{ "load", "loads" },
	{ "store", "stores" },
	{ "prefetch", "prefetches" },
};
#define CACHE_RESULTS 2 /* access (refs) and miss */
/* the ops each cache has, a bit per op: the L1 instruction cache reads and
 * prefetches, the iTLB and the branch predictor only read */
static const uint8_t cache_ops_of[] = { 7, 5, 7, 7, 1, 1, 7 };

static void hw_cache_name(char *buf, size_t size, uint64_t config)
{
	unsigned cache = (unsigned)(config & 0xff);
	unsigned op = (unsigned)((config >> 8) & 0xff);
	unsigned result = (unsigned)((config >> 16) & 0xff);
	const size_t nr_caches = sizeof(cache_names) / sizeof(cache_names[0]);
	const size_t nr_ops = sizeof(cache_op_names) / sizeof(cache_op_names[0]);

	if (cache >= nr_caches)
		snprintf(buf, size, "unknown-ext-hardware-cache-type");
	else if (op >= nr_ops)
		snprintf(buf, size, "unknown-ext-hardware-cache-op");
	else if (result >= CACHE_RESULTS)
		snprintf(buf, size, "unknown-ext-hardware-cache-result");
	else if (!(cache_ops_of[cache] & (1u << op)))
		snprintf(buf, size, "invalid-cache");
	else if (result)
		snprintf(buf, size, "%s-%s-misses", cache_names[cache], cache_op_names[op][0]);
	else
		snprintf(buf, size, "%s-%s", cache_names[cache], cache_op_names[op][1]);
}

/* The name perf's evsel__name() gives an event that nothing named (no
 * EVENT_DESC, EVENT_UPDATE or tracing data): the event's name, then the
 * modifiers. */
static const char *default_name(struct ps_reader *r, const struct ps_attr *attr)
{
	char buf[128];
	bool modifiers = true;

	switch (attr->type) {
	case PERF_TYPE_HARDWARE:
		hw_name(buf, sizeof(buf), attr->config);
		break;
	case PERF_TYPE_SOFTWARE:
		snprintf(buf, sizeof(buf), "%s",
		         attr->config < sizeof(sw_names) / sizeof(sw_names[0])
		                 ? sw_names[attr->config]
		                 : "unknown-software");
		break;
	case PERF_TYPE_RAW:
		snprintf(buf, sizeof(buf), "raw 0x%" PRIx64, attr->config);
		break;
	case PERF_TYPE_BREAKPOINT:
		/* bp_addr is config1 */
		snprintf(buf, sizeof(buf), "mem:0x%" PRIx64 ":%s%s%s", attr->config1,
		         (attr->bp_type & 1) ? "r" : "", (attr->bp_type & 2) ? "w" : "",
		         (attr->bp_type & 4) ? "x" : "");
		break;
	case PERF_TYPE_TRACEPOINT:
		snprintf(buf, sizeof(buf), "unknown tracepoint");
		modifiers = false;
		break;
	case PERF_TYPE_HW_CACHE:
		hw_cache_name(buf, sizeof(buf), attr->config);
		break;
	default:
		snprintf(buf, sizeof(buf), "unknown attr type: %d", (int)attr->type);
		modifiers = false;
		break;
	}
	if (modifiers)
		add_modifiers(buf, sizeof(buf), attr);
	const char *s = ps_arena_strndup(&r->arena, buf, sizeof(buf));
	return s ? s : "unknown";
}

static void name_attr(struct ps_reader *r, struct ps_attr *attr, const char *name)
{
	const char *copy = ps_arena_strndup(&r->arena, name, 4096);
	if (copy) {
		attr->name = copy;
		r->attr_named[attr->index] = true;
	}
}

void ps_attrs_set_name(struct ps_reader *r, struct ps_attr *attr, const char *name)
{
	name_attr(r, attr, name);
	/* EVENT_UPDATE's name is final, for perf script too */
	attr->fallback_name = NULL;
}

void ps_attrs_name_unnamed(struct ps_reader *r, struct ps_attr *attr, const char *name)
{
	if (!r->attr_named[attr->index])
		name_attr(r, attr, name);
}

/* perf script's process_attr() for a HEADER_ATTR (pipe mode) checks the
 * first attr of each type (not a dummy, with a sample_type) against the
 * fields it prints: a field whose sample bit is missing calls
 * evsel__name() for a debug message, which keeps perf's own name from
 * then on, whatever EVENT_DESC or the tracing data say later. Which
 * fields are printed is the script's business: the attr carries the name
 * as fallback_name, for the script to choose. */
void ps_attrs_pipe_check(struct ps_reader *r, struct ps_attr *attr)
{
	if (attr->type >= PERF_TYPE_MAX || attr->sample_type == 0 ||
	    (attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_DUMMY))
		return;
	for (size_t i = 0; i < r->nr_attrs; i++)
		if (&r->attrs[i] != attr && r->attrs[i].type == attr->type)
			return;
	attr->fallback_name = attr->name;
}

/* ---- the attr list ------------------------------------------------ */

int ps_attrs_add(struct ps_reader *r, const struct ps_attr *attr, const uint64_t *ids,
                 size_t nr_ids, uint64_t offset)
{
	struct ps_attr *a;
	uint64_t *copy = NULL;

	if (r->nr_attrs >= PS_MAX_ATTRS)
		return ps_reader_fail_at(r, -EINVAL, offset, 0, "more than %u attrs", PS_MAX_ATTRS);
	if (r->nr_attrs == r->cap_attrs) {
		/* ps_attr pointers handed out stay valid only within one
		 * ps_reader_next() call when attrs arrive as records */
		size_t cap = r->cap_attrs ? r->cap_attrs * 2 : 8;
		struct ps_attr *na = realloc(r->attrs, cap * sizeof(*na));
		if (!na)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		r->attrs = na;
		bool *named = realloc(r->attr_named, cap * sizeof(*named));
		if (!named)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		r->attr_named = named;
		r->cap_attrs = cap;
	}
	if (nr_ids) {
		copy = ps_arena_alloc(&r->arena, nr_ids * sizeof(*copy));
		if (!copy)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		memcpy(copy, ids, nr_ids * sizeof(*copy));
	}
	a = &r->attrs[r->nr_attrs];
	*a = *attr;
	a->index = (unsigned)r->nr_attrs;
	a->ids = copy;
	a->nr_ids = nr_ids;
	a->name = default_name(r, a);
	a->fallback_name = NULL;
	r->attr_named[a->index] = false;
	for (size_t i = 0; i < nr_ids; i++)
		if (id_map_put(&r->id_map, ids[i], a->index))
			return ps_reader_fail(r, -ENOMEM, "out of memory");
	r->nr_attrs++;
	r->attrs_dirty = true;
	return ps_attrs_finish(r, offset);
}

static size_t calc_id_pos(uint64_t t)
{
	size_t idx = 0;
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return SIZE_MAX;
	idx += !!(t & PERF_SAMPLE_IP);
	idx += !!(t & PERF_SAMPLE_TID);
	idx += !!(t & PERF_SAMPLE_TIME);
	idx += !!(t & PERF_SAMPLE_ADDR);
	return idx;
}

static size_t calc_is_pos(uint64_t t)
{
	size_t idx = 1;
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return SIZE_MAX;
	idx += !!(t & PERF_SAMPLE_CPU);
	idx += !!(t & PERF_SAMPLE_STREAM_ID);
	return idx;
}

static size_t calc_id_hdr_size(const struct ps_attr *a)
{
	uint64_t t = a->sample_type;
	size_t n = 0;
	if (!(a->flags & PS_ATTR_SAMPLE_ID_ALL))
		return 0;
	n += (t & PERF_SAMPLE_TID) ? 8 : 0;
	n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (t & PERF_SAMPLE_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

int ps_attrs_finish(struct ps_reader *r, uint64_t offset)
{
	for (size_t i = 0; i < r->nr_attrs; i++) {
		struct ps_attr *a = &r->attrs[i];
		a->id_pos = calc_id_pos(a->sample_type);
		a->is_pos = calc_is_pos(a->sample_type);
		a->id_hdr_size = calc_id_hdr_size(a);
	}
	if (r->nr_attrs) {
		r->common_id_pos = r->attrs[0].id_pos;
		r->common_is_pos = r->attrs[0].is_pos;
	}
	/* perf refuses event lists whose ids sit at different places, since
	 * it could not tell which event a record belongs to */
	for (size_t i = 1; i < r->nr_attrs; i++) {
		const struct ps_attr *a = &r->attrs[i];
		if (a->id_pos != r->common_id_pos || a->is_pos != r->common_is_pos)
			return ps_reader_fail_at(
			        r, -EINVAL, offset, 0,
			        "attr %zu: sample_type %#" PRIx64
			        " puts the event id elsewhere than attr 0's %#" PRIx64,
			        i, a->sample_type, r->attrs[0].sample_type);
	}
	r->attrs_dirty = false;
	return 0;
}

void ps_attrs_free(struct ps_reader *r)
{
	free(r->attrs);
	free(r->attr_named);
	r->attr_named = NULL;
	free(r->id_map.ids);
	free(r->id_map.attr_index);
	r->attrs = NULL;
	r->nr_attrs = r->cap_attrs = 0;
}

/* Which attr a sample belongs to: the id at id_pos, as perf finds it. */
const struct ps_attr *ps_attr_for_sample(const struct ps_reader *r, const uint8_t *raw, size_t size)
{
	struct ps_cursor record = ps_cursor_make(raw, size, r->swap);
	size_t n = (size - 8) / 8;
	uint64_t id;

	if (r->nr_attrs == 0)
		return NULL;
	if (r->nr_attrs == 1)
		return &r->attrs[0];
	if (r->common_id_pos == SIZE_MAX || r->common_id_pos >= n ||
	    !ps_cursor_peek_u64(&record, 8 + r->common_id_pos * 8, &id))
		return NULL;
	if (id == 0) /* synthesized records carry id 0 */
		return &r->attrs[0];
	return ps_attrs_find_id(r, id);
}

/* Which attr a non-sample record belongs to, from its trailer. */
const struct ps_attr *ps_attr_for_trailer(const struct ps_reader *r, const uint8_t *raw,
                                          size_t size)
{
	struct ps_cursor record = ps_cursor_make(raw, size, r->swap);
	size_t n = (size - 8) / 8;
	uint64_t id;

	if (r->nr_attrs == 0)
		return NULL;
	if (r->nr_attrs == 1 || !(r->attrs[0].flags & PS_ATTR_SAMPLE_ID_ALL))
		return &r->attrs[0];
	if (r->common_is_pos == SIZE_MAX)
		return &r->attrs[0];
	if (r->common_is_pos > n ||
	    !ps_cursor_peek_u64(&record, 8 + (n - r->common_is_pos) * 8, &id))
		return NULL;
	/* Synthesized records carry id 0. An id no attr lists still has a
	 * trailer of the common layout (perf requires one), so read it with
	 * the first attr rather than drop the record. */
	const struct ps_attr *a = id ? ps_attrs_find_id(r, id) : NULL;
	return a ? a : &r->attrs[0];
}
