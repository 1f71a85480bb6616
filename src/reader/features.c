/* Header features: the section table of a perf.data file and the decoding
 * of each feature section (also used for pipe-mode HEADER_FEATURE records)
 * into the reader's public struct ps_features.
 */
/* cursor.h first: reader.h names struct ps_cursor without declaring it */
#include "base/array.h"
#include "base/cursor.h"
#include "reader/feature_section_priv.h"
#include "reader/perf_format_priv.h"
#include "reader/reader_priv.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* perf's own names (header.c feat_ops), as `perf report --header-only`
 * prints them in "# missing features:". */
static const char *const feature_names[PS_FEAT_LAST] = {
	[PS_FEAT_TRACING_DATA] = "TRACING_DATA",
	[PS_FEAT_BUILD_ID] = "BUILD_ID",
	[PS_FEAT_HOSTNAME] = "HOSTNAME",
	[PS_FEAT_OSRELEASE] = "OSRELEASE",
	[PS_FEAT_VERSION] = "VERSION",
	[PS_FEAT_ARCH] = "ARCH",
	[PS_FEAT_NRCPUS] = "NRCPUS",
	[PS_FEAT_CPUDESC] = "CPUDESC",
	[PS_FEAT_CPUID] = "CPUID",
	[PS_FEAT_TOTAL_MEM] = "TOTAL_MEM",
	[PS_FEAT_CMDLINE] = "CMDLINE",
	[PS_FEAT_EVENT_DESC] = "EVENT_DESC",
	[PS_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
	[PS_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
	[PS_FEAT_BRANCH_STACK] = "BRANCH_STACK",
	[PS_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[PS_FEAT_GROUP_DESC] = "GROUP_DESC",
	[PS_FEAT_AUXTRACE] = "AUXTRACE",
	[PS_FEAT_STAT] = "STAT",
	[PS_FEAT_CACHE] = "CACHE",
	[PS_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
	[PS_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
	[PS_FEAT_CLOCKID] = "CLOCKID",
	[PS_FEAT_DIR_FORMAT] = "DIR_FORMAT",
	[PS_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
	[PS_FEAT_BPF_BTF] = "BPF_BTF",
	[PS_FEAT_COMPRESSED] = "COMPRESSED",
	[PS_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
	[PS_FEAT_CLOCK_DATA] = "CLOCK_DATA",
	[PS_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
	[PS_FEAT_PMU_CAPS] = "PMU_CAPS",
};

const char *ps_feature_name(unsigned bit)
{
	return bit < PS_FEAT_LAST ? feature_names[bit] : NULL;
}

/* Features decoded here: every one perf 6.1 knows. */
static bool feature_decoded(unsigned bit)
{
	return bit > 0 && bit < PS_FEAT_LAST;
}

static int decode_nrcpus(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t available = ps_cursor_u32(&s->c);
	uint32_t online = ps_cursor_u32(&s->c);

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* Linux's NR_CPUS tops out at 8192 */
	if (available > PS_MAX_CPUS || online > PS_MAX_CPUS)
		return ps_section_fail(s, "%u CPUs available and %u online, more than %u",
		                       available, online, PS_MAX_CPUS);
	f->nr_cpus_available = available;
	f->nr_cpus_online = online;
	f->has_nrcpus = true;
	return 0;
}

static int decode_total_mem(struct ps_feature_section *s)
{
	uint64_t kb = ps_cursor_u64(&s->c);

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* x86-64's 57-bit physical addresses hold 128 PiB */
	if (kb > PS_MAX_TOTAL_MEM_KB)
		return ps_section_fail(s, "%llu kB, more than memory can be",
		                       (unsigned long long)kb);
	s->r->features.total_mem_kb = kb;
	s->r->features.has_total_mem = true;
	return 0;
}

/* ---- BUILD_ID ------------------------------------------------------ */

/* struct perf_record_header_build_id: perf_event_header (8), s32 pid,
 * u8 build_id[24] whose byte 20 is the id's size when misc has
 * PERF_RECORD_MISC_BUILD_ID_SIZE, then the NUL-padded filename. */
#define BUILD_ID_RECORD_SIZE 36
/* perf before commit a1645ce1 ("perf kvm", Linux 2.6.34) wrote no pid:
 * the ABI quirk perf still reads. */
#define BUILD_ID_RECORD_SIZE_OLD 32
#define BUILD_ID_FIELD 24
#define BUILD_ID_MAX 20

static int add_build_id(struct ps_feature_section *s, const struct ps_build_id *bid)
{
	struct ps_reader *r = s->r;
	size_t nr = r->features.nr_build_ids;

	/* the caller stops at PS_MAX_BUILD_IDS */
	assert(nr < PS_MAX_BUILD_IDS);
	if (!ps_array_reserve((void **)&r->build_ids, &r->cap_build_ids, nr + 1,
	                      sizeof(*r->build_ids), 16))
		return ps_section_out_of_memory(s);
	r->build_ids[nr] = *bid;
	r->features.build_ids = r->build_ids;
	r->features.nr_build_ids = nr + 1;
	return 0;
}

/* Returns 1 when the table turns out to use the old layout (perf detects
 * it by the kernel's "[kernel.kallsyms]" losing its first four bytes to
 * the pid it does not have); nothing has been stored then. */
static int read_build_ids(struct ps_feature_section *s, bool old_layout)
{
	size_t fixed = old_layout ? BUILD_ID_RECORD_SIZE_OLD : BUILD_ID_RECORD_SIZE;
	size_t first = s->r->features.nr_build_ids;

	while (ps_cursor_left(&s->c) > 0) {
		struct ps_cursor record = s->c;
		struct ps_build_id bid = { 0 };
		const uint8_t *id;
		const uint8_t *name;
		size_t name_len;
		uint16_t misc, size;
		int err;

		ps_cursor_u32(&record); /* type: perf does not check it */
		misc = ps_cursor_u16(&record);
		size = ps_cursor_u16(&record);
		if (!ps_cursor_ok(&record))
			return ps_section_truncated(s);
		if (size < fixed)
			return ps_section_fail(s, "build-id record of %u bytes, less than %zu",
			                       size, fixed);
		if (size > ps_cursor_left(&s->c))
			return ps_section_fail(s, "build-id record of %u bytes past the end", size);
		/* the host kernel (-1), or the default guest for guest modes */
		bid.pid = -1;
		if (!old_layout)
			bid.pid = (int32_t)ps_cursor_u32(&record);
		else if (misc == PERF_RECORD_MISC_GUEST_USER ||
		         misc == PERF_RECORD_MISC_GUEST_KERNEL)
			bid.pid = 0;
		id = ps_cursor_take(&record, BUILD_ID_FIELD);
		name_len = size - fixed;
		name = ps_cursor_take(&record, name_len);
		if (!id || !name)
			return ps_section_truncated(s);
		if (!old_layout && name_len >= 13 && memcmp(name, "nel.kallsyms]", 13) == 0) {
			/* drop what this pass stored; the caller restarts */
			s->r->features.nr_build_ids = first;
			return 1;
		}

		if (s->r->features.nr_build_ids >= PS_MAX_BUILD_IDS) {
			ps_reader_log(s->r, PS_LOG_WARN,
			              "feature %s: more than %u build-ids, ignoring the rest",
			              s->name, PS_MAX_BUILD_IDS);
			return 0;
		}
		bid.misc = misc & PS_MISC_CPUMODE_MASK;
		bid.size = BUILD_ID_MAX;
		if (misc & PS_MISC_BUILD_ID_SIZE)
			bid.size =
			        id[BUILD_ID_MAX] < BUILD_ID_MAX ? id[BUILD_ID_MAX] : BUILD_ID_MAX;
		memcpy(bid.id, id, bid.size);
		bid.filename = ps_arena_strndup(&s->r->arena, (const char *)name, name_len);
		if (!bid.filename)
			return ps_section_out_of_memory(s);

		err = add_build_id(s, &bid);
		if (err)
			return err;
		ps_cursor_skip(&s->c, size);
	}
	return 0;
}

static int decode_build_id(struct ps_feature_section *s)
{
	struct ps_cursor start = s->c;
	int ret = read_build_ids(s, false);

	if (ret == 1) {
		s->c = start;
		ret = read_build_ids(s, true);
	}
	return ret;
}

/* ---- EVENT_DESC ---------------------------------------------------- */

/* The attr a description belongs to: the one owning its first sample id,
 * else the one at the same position (all perf itself looks at). */
static struct ps_attr *described_attr(struct ps_reader *r, size_t index, bool has_id, uint64_t id)
{
	if (has_id) {
		const struct ps_attr *found = ps_attrs_find_id(r, id);

		if (found && found >= r->attrs && found < r->attrs + r->nr_attrs)
			return &r->attrs[found - r->attrs];
	}
	return index < r->nr_attrs ? &r->attrs[index] : NULL;
}

static int decode_event_desc(struct ps_feature_section *s)
{
	uint32_t nr_events = ps_cursor_u32(&s->c);
	uint32_t attr_size = ps_cursor_u32(&s->c);

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	if (nr_events > PS_MAX_ATTRS)
		return ps_section_fail(s, "%u events, more than %u", nr_events, PS_MAX_ATTRS);
	if (nr_events && (attr_size < PS_ATTR_SIZE_VER0 || attr_size > PS_ATTR_SIZE_MAX))
		return ps_section_fail(s, "attr size %u outside [%u, %u]", attr_size,
		                       PS_ATTR_SIZE_VER0, PS_ATTR_SIZE_MAX);

	for (uint32_t i = 0; i < nr_events; i++) {
		const char *name = NULL;
		uint32_t nr_ids;
		uint64_t first_id = 0;
		struct ps_attr *attr;
		int err;

		/* the attr itself is already known from the attrs section
		 * or HEADER_ATTR; only its name is new */
		if (!ps_cursor_skip(&s->c, attr_size))
			return ps_section_truncated(s);
		nr_ids = ps_cursor_u32(&s->c);
		if (!ps_cursor_ok(&s->c))
			return ps_section_truncated(s);
		if (nr_ids > PS_MAX_IDS_PER_ATTR)
			return ps_section_fail(s, "event %u has %u ids, more than %u", i, nr_ids,
			                       PS_MAX_IDS_PER_ATTR);
		err = ps_section_string(s, &name);
		if (err)
			return err;
		if (nr_ids)
			first_id = ps_cursor_u64(&s->c);
		if (nr_ids > 1)
			ps_cursor_skip(&s->c, (size_t)(nr_ids - 1) * 8);
		if (!ps_cursor_ok(&s->c))
			return ps_section_truncated(s);

		attr = described_attr(s->r, i, nr_ids > 0, first_id);
		/* evlist__set_event_name(): only an event not yet named (in
		 * pipe mode EVENT_UPDATE comes later and renames it) */
		if (attr)
			ps_attrs_name_unnamed(s->r, attr, name);
	}
	return 0;
}

/* ---- the rest ------------------------------------------------------ */

static int decode_pmu_mappings(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t nr = ps_cursor_u32(&s->c);
	uint32_t *types;
	const char **names;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* each mapping is at least a u32 type and a u32 length */
	if (nr > ps_cursor_left(&s->c) / 8 || nr > PS_MAX_STRING_LIST)
		return ps_section_fail(s, "%u mappings do not fit in %zu bytes", nr,
		                       ps_cursor_left(&s->c));
	types = ps_arena_alloc(&s->r->arena, nr * sizeof(*types));
	names = ps_arena_alloc(&s->r->arena, nr * sizeof(*names));
	if (!types || !names)
		return ps_section_out_of_memory(s);
	for (uint32_t i = 0; i < nr; i++) {
		int err;

		types[i] = ps_cursor_u32(&s->c);
		err = ps_section_string(s, &names[i]);
		if (err)
			return err;
	}
	f->nr_pmu_mappings = nr;
	f->pmu_types = types;
	f->pmu_names = names;
	return 0;
}

static int decode_sample_time(struct ps_feature_section *s)
{
	uint64_t first = ps_cursor_u64(&s->c);
	uint64_t last = ps_cursor_u64(&s->c);

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	if (first > last)
		return ps_section_fail(s, "first sample at %llu, after the last at %llu",
		                       (unsigned long long)first, (unsigned long long)last);
	s->r->features.first_sample_time = first;
	s->r->features.last_sample_time = last;
	s->r->features.has_sample_time = true;
	return 0;
}

static int decode_u64(struct ps_feature_section *s, uint64_t *out, bool *has)
{
	uint64_t value = ps_cursor_u64(&s->c);

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	*out = value;
	*has = true;
	return 0;
}

static int decode_compressed(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t version = ps_cursor_u32(&s->c);
	uint32_t type = ps_cursor_u32(&s->c);
	uint32_t level = ps_cursor_u32(&s->c);
	uint32_t ratio = ps_cursor_u32(&s->c);
	uint32_t mmap_len = ps_cursor_u32(&s->c);

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	f->comp_version = version;
	f->comp_type = type;
	f->comp_level = level;
	f->comp_ratio = ratio;
	f->comp_mmap_len = mmap_len;
	f->has_compressed = true;
	return 0;
}

static int decode_clock_data(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t version = ps_cursor_u32(&s->c);
	uint32_t clockid = ps_cursor_u32(&s->c);
	uint64_t wall_ns = ps_cursor_u64(&s->c);
	uint64_t clockid_ns = ps_cursor_u64(&s->c);

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	f->clock_data_version = version;
	/* perf 6.1 knows only version 1 and ignores the feature otherwise:
	 * a later version may give these fields other meanings */
	if (version != 1) {
		ps_reader_log(s->r, PS_LOG_WARN, "feature %s: unknown version %u, ignored", s->name,
		              version);
		/* and reads no feature after it */
		ps_features_perf_stops(f, PS_FEAT_CLOCK_DATA);
		return 0;
	}
	f->clock_data_clockid = clockid;
	f->clock_wall_ns = wall_ns;
	f->clock_clockid_ns = clockid_ns;
	f->has_clock_data = true;
	return 0;
}

/* ps_tracing_parse() sets has_tracing_data and the size itself, since
 * pipe mode hands it the payload of a HEADER_TRACING_DATA record. */
static int decode_tracing_data(struct ps_feature_section *s)
{
	return ps_tracing_parse(s->r, s->c.p, ps_cursor_left(&s->c), s->offset);
}

static int decode_section(struct ps_feature_section *s, unsigned bit)
{
	struct ps_features *f = &s->r->features;

	switch (bit) {
	case PS_FEAT_TRACING_DATA:
		return decode_tracing_data(s);
	case PS_FEAT_BUILD_ID:
		return decode_build_id(s);
	case PS_FEAT_HOSTNAME:
		return ps_section_string(s, &f->hostname);
	case PS_FEAT_OSRELEASE:
		return ps_section_string(s, &f->osrelease);
	case PS_FEAT_VERSION:
		return ps_section_string(s, &f->version);
	case PS_FEAT_ARCH:
		return ps_section_string(s, &f->arch);
	case PS_FEAT_NRCPUS:
		return decode_nrcpus(s);
	case PS_FEAT_CPUDESC:
		return ps_section_string(s, &f->cpudesc);
	case PS_FEAT_CPUID:
		return ps_section_string(s, &f->cpuid);
	case PS_FEAT_TOTAL_MEM:
		return decode_total_mem(s);
	case PS_FEAT_CMDLINE:
		return ps_section_string_list(s, &f->cmdline);
	case PS_FEAT_EVENT_DESC:
		return decode_event_desc(s);
	case PS_FEAT_CPU_TOPOLOGY:
		return ps_decode_cpu_topology(s);
	case PS_FEAT_NUMA_TOPOLOGY:
		return ps_decode_numa_topology(s);
	case PS_FEAT_BRANCH_STACK:
		f->branch_stack = true;
		return 0;
	case PS_FEAT_PMU_MAPPINGS:
		return decode_pmu_mappings(s);
	case PS_FEAT_GROUP_DESC:
		return ps_decode_group_desc(s);
	case PS_FEAT_AUXTRACE:
		return ps_decode_auxtrace(s);
	case PS_FEAT_STAT:
		f->is_stat = true;
		return 0;
	case PS_FEAT_CACHE:
		return ps_decode_cache(s);
	case PS_FEAT_SAMPLE_TIME:
		return decode_sample_time(s);
	case PS_FEAT_MEM_TOPOLOGY:
		return ps_decode_mem_topology(s);
	case PS_FEAT_CLOCKID:
		return decode_u64(s, &f->clockid_res_ns, &f->has_clockid);
	case PS_FEAT_DIR_FORMAT:
		/* perf 6.1 takes DIR_FORMAT only from the header file of a
		 * folder (perf record --threads): from a file it refuses it
		 * and reads no feature after it */
		if (!s->r->is_dir)
			ps_features_perf_stops(f, bit);
		return decode_u64(s, &f->dir_format_version, &f->has_dir_format);
	case PS_FEAT_BPF_PROG_INFO:
		return ps_decode_bpf_prog_info(s);
	case PS_FEAT_BPF_BTF:
		return ps_decode_bpf_btf(s);
	case PS_FEAT_COMPRESSED:
		return decode_compressed(s);
	case PS_FEAT_CPU_PMU_CAPS:
		return ps_decode_cpu_pmu_caps(s);
	case PS_FEAT_CLOCK_DATA:
		return decode_clock_data(s);
	case PS_FEAT_HYBRID_TOPOLOGY:
		return ps_decode_hybrid_topology(s);
	case PS_FEAT_PMU_CAPS:
		return ps_decode_pmu_caps(s);
	default:
		return 0;
	}
}

/* Forget what a damaged section left behind: its fields read as if the
 * feature were absent. */
static void forget_feature(struct ps_features *f, unsigned bit)
{
	switch (bit) {
	case PS_FEAT_BUILD_ID:
		break; /* the build-ids read before the damage stay, as in perf */
	case PS_FEAT_HOSTNAME:
		f->hostname = NULL;
		break;
	case PS_FEAT_OSRELEASE:
		f->osrelease = NULL;
		break;
	case PS_FEAT_VERSION:
		f->version = NULL;
		break;
	case PS_FEAT_ARCH:
		f->arch = NULL;
		break;
	case PS_FEAT_NRCPUS:
		f->has_nrcpus = false;
		f->nr_cpus_available = f->nr_cpus_online = 0;
		break;
	case PS_FEAT_CPUDESC:
		f->cpudesc = NULL;
		break;
	case PS_FEAT_CPUID:
		f->cpuid = NULL;
		break;
	case PS_FEAT_TOTAL_MEM:
		f->has_total_mem = false;
		f->total_mem_kb = 0;
		break;
	case PS_FEAT_CMDLINE:
		f->cmdline = (struct ps_string_list){ 0 };
		break;
	case PS_FEAT_CPU_TOPOLOGY:
		f->cpu_topology_sibling_cores = f->cpu_topology_sibling_threads =
		        f->cpu_topology_sibling_dies = (struct ps_string_list){ 0 };
		f->cpu_ids = NULL;
		f->nr_cpu_ids = 0;
		f->has_die_ids = false;
		break;
	case PS_FEAT_NUMA_TOPOLOGY:
		f->numa_nodes = NULL;
		f->nr_numa_nodes = 0;
		break;
	case PS_FEAT_PMU_MAPPINGS:
		f->nr_pmu_mappings = 0;
		f->pmu_types = NULL;
		f->pmu_names = NULL;
		break;
	case PS_FEAT_GROUP_DESC:
		f->groups = NULL;
		f->nr_groups = 0;
		break;
	case PS_FEAT_AUXTRACE:
		f->nr_auxtrace_index = 0;
		break;
	case PS_FEAT_CACHE:
		f->cache_levels = NULL;
		f->nr_cache_levels = 0;
		break;
	case PS_FEAT_SAMPLE_TIME:
		f->has_sample_time = false;
		f->first_sample_time = f->last_sample_time = 0;
		break;
	case PS_FEAT_MEM_TOPOLOGY:
		f->memory_nodes = NULL;
		f->nr_memory_nodes = 0;
		f->memory_block_size = 0;
		break;
	case PS_FEAT_CLOCKID:
		f->has_clockid = false;
		break;
	case PS_FEAT_DIR_FORMAT:
		f->has_dir_format = false;
		break;
	case PS_FEAT_BPF_PROG_INFO:
		f->nr_bpf_progs = f->nr_bpf_prog_list = 0;
		f->bpf_prog_list = NULL;
		break;
	case PS_FEAT_BPF_BTF:
		f->nr_bpf_btfs = f->nr_bpf_btf_list = 0;
		f->bpf_btf_list = NULL;
		break;
	case PS_FEAT_COMPRESSED:
		f->has_compressed = false;
		break;
	case PS_FEAT_CPU_PMU_CAPS:
		f->cpu_pmu_caps = (struct ps_string_list){ 0 };
		break;
	case PS_FEAT_CLOCK_DATA:
		f->has_clock_data = false;
		break;
	case PS_FEAT_HYBRID_TOPOLOGY:
		f->hybrid_nodes = NULL;
		f->nr_hybrid_nodes = 0;
		break;
	case PS_FEAT_PMU_CAPS:
		f->pmu_caps = NULL;
		f->nr_pmu_caps = 0;
		break;
	default:
		break;
	}
}

int ps_feature_decode(struct ps_reader *r, unsigned bit, const uint8_t *data, size_t size,
                      uint64_t offset)
{
	static const uint8_t empty[1];
	struct ps_features *f = &r->features;
	struct ps_feature_section s = {
		.r = r,
		.c = ps_cursor_make(data ? data : empty, data ? size : 0, r->swap),
		.name = ps_feature_name(bit),
		.offset = offset,
	};
	int err;

	if (bit >= 256) {
		ps_reader_log(r, PS_LOG_WARN, "feature %u does not exist, ignored", bit);
		return 0;
	}
	f->present[bit / 64] |= 1ull << (bit % 64);
	if (!feature_decoded(bit)) {
		if (!s.name)
			ps_reader_log(r, PS_LOG_DEBUG, "unknown feature %u, skipped", bit);
		return 0;
	}

	err = decode_section(&s, bit);
	if (err != -EINVAL || bit == PS_FEAT_TRACING_DATA)
		return err; /* perf gives up on damaged tracing data too */
	/* A damaged feature is a warning, as perf has it, and the rest of
	 * the capture is read: the message the section failed with, said
	 * once, and the feature's fields as if it were absent. */
	ps_reader_warn_failure(r, "the feature is ignored");
	forget_feature(f, bit);
	f->damaged[bit / 64] |= 1ull << (bit % 64);
	return 0;
}

/* ------------------------------------------------------------------ */
/* file mode: the section table                                        */
/* ------------------------------------------------------------------ */

#define SECTION_ENTRY_SIZE 16

static int read_at(int fd, void *buf, size_t size, uint64_t offset)
{
	uint8_t *p = buf;

	while (size > 0) {
		ssize_t got = pread(fd, p, size, (off_t)offset);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EIO; /* end of file: the section is cut short */
		p += got;
		size -= (size_t)got;
		offset += (uint64_t)got;
	}
	return 0;
}

/* A section that cannot be read is a damaged feature like one that does
 * not decode (err -EINVAL): a warning, and the rest of the capture. */
static int section_unreadable(struct ps_reader *r, unsigned bit, int err)
{
	if (err != -EINVAL || bit == PS_FEAT_TRACING_DATA)
		return err;
	r->features.damaged[bit / 64] |= 1ull << (bit % 64);
	ps_reader_warn_failure(r, "the feature is ignored");
	return 0;
}

static int read_section(struct ps_reader *r, unsigned bit, uint64_t offset, uint64_t size,
                        uint64_t file_size)
{
	const char *name = ps_feature_name(bit);
	uint8_t *data;
	int err;

	if (offset > file_size || size > file_size - offset)
		return section_unreadable(
		        r, bit,
		        ps_reader_fail_at(r, -EINVAL, offset, 0,
		                          "feature %s: section of %" PRIu64 " bytes at %" PRIu64
		                          " passes the end of the file (%" PRIu64 " bytes)",
		                          name, size, offset, file_size));
	if (!feature_decoded(bit))
		return ps_feature_decode(r, bit, NULL, 0, offset);
	if (size > PS_MAX_FEATURE_SIZE)
		return section_unreadable(r, bit,
		                          ps_reader_fail_at(r, -EINVAL, offset, 0,
		                                            "feature %s: section of %" PRIu64
		                                            " bytes, more than %u",
		                                            name, size, PS_MAX_FEATURE_SIZE));

	data = malloc(size ? size : 1);
	if (!data)
		return ps_reader_fail(r, -ENOMEM, "feature %s: out of memory", name);
	err = read_at(r->in.fd, data, size, offset);
	if (err) {
		free(data);
		return section_unreadable(
		        r, bit,
		        ps_reader_fail_at(r, err == -EIO ? -EINVAL : err, offset, 0,
		                          "feature %s: cannot read %" PRIu64 " bytes: %s", name,
		                          size, err == -EIO ? "file too short" : strerror(-err)));
	}
	err = ps_feature_decode(r, bit, data, size, offset);
	free(data);
	return err;
}

int ps_features_read_file(struct ps_reader *r)
{
	uint8_t table[256 * SECTION_ENTRY_SIZE];
	uint64_t table_offset = r->data_offset + r->data_size;
	uint64_t file_size = UINT64_MAX;
	size_t nr_sections = 0;
	struct ps_cursor c;
	struct stat st;
	int err;

	for (unsigned i = 0; i < 4; i++)
		nr_sections += (size_t)__builtin_popcountll(r->features.present[i]);
	if (nr_sections == 0)
		return 0;
	/* perf writes the table when it finishes; a capture whose perf
	 * record was killed still has the feature bits but a data size of 0
	 * and no table (perf warns and reads on, so do we) */
	if (r->data_size == 0) {
		ps_reader_log(r, PS_LOG_WARN,
		              "data size is 0 (perf record not terminated properly?): "
		              "feature sections not read");
		return 0;
	}
	if (fstat(r->in.fd, &st) == 0 && S_ISREG(st.st_mode))
		file_size = (uint64_t)st.st_size;
	if (table_offset < r->data_offset || table_offset > file_size ||
	    nr_sections * SECTION_ENTRY_SIZE > file_size - table_offset)
		return ps_reader_fail_at(r, -EINVAL, table_offset, 0,
		                         "feature table of %zu sections at %" PRIu64
		                         " passes the end of the file (%" PRIu64 " bytes)",
		                         nr_sections, table_offset, file_size);
	err = read_at(r->in.fd, table, nr_sections * SECTION_ENTRY_SIZE, table_offset);
	if (err)
		return ps_reader_fail_at(r, err == -EIO ? -EINVAL : err, table_offset, 0,
		                         "cannot read the feature table: %s",
		                         err == -EIO ? "file too short" : strerror(-err));

	/* one entry per set bit, in bit order, unknown bits included */
	c = ps_cursor_make(table, nr_sections * SECTION_ENTRY_SIZE, r->swap);
	for (unsigned bit = 0; bit < 256; bit++) {
		uint64_t offset, size;

		if (!(r->features.present[bit / 64] & (1ull << (bit % 64))))
			continue;
		offset = ps_cursor_u64(&c);
		size = ps_cursor_u64(&c);
		/* bit 0 is reserved; bits perf 6.1 does not know are skipped
		 * as perf skips them */
		if (bit == 0 || bit >= PS_FEAT_LAST)
			continue;
		err = read_section(r, bit, offset, size, file_size);
		if (err)
			return err;
	}
	return 0;
}

void ps_features_free(struct ps_reader *r)
{
	free(r->build_ids);
	r->build_ids = NULL;
	r->cap_build_ids = 0;
	r->features.build_ids = NULL;
	r->features.nr_build_ids = 0;
}
