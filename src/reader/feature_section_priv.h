/* One feature section being decoded (features.c, features_machine.c):
 * the cursor over its bytes and the readers of perf's header strings
 * (feature_section.c). Private to src/reader. */
#ifndef PS_READER_FEATURE_SECTION_PRIV_H
#define PS_READER_FEATURE_SECTION_PRIV_H

#include <stdint.h>

#include "base/cursor.h"
#include "reader/reader_priv.h"

struct ps_feature_section {
	struct ps_reader *r;
	struct ps_cursor c;
	const char *name;
	uint64_t offset; /* input offset of the section's first byte */
};

/* Fail at the cursor's position (-EINVAL): "feature NAME: what". The
 * cursor does not advance on a failed read, so the offset points at the
 * field that did not fit. */
int ps_section_fail(struct ps_feature_section *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
int ps_section_truncated(struct ps_feature_section *s);
int ps_section_out_of_memory(struct ps_feature_section *s);
/* -EINVAL unless count items of at least min_size bytes each fit in what
 * is left of the section ("4294967295 nodes do not fit in 12 bytes"). */
int ps_section_count_fits(struct ps_feature_section *s, uint64_t count, size_t min_size,
                          const char *what);
/* count elements of elem_size bytes from the reader's arena (one at
 * least, so never NULL for 0), once ps_section_count_fits() has found
 * that count items of min_size bytes fit; NULL with *err set otherwise. */
void *ps_section_array(struct ps_feature_section *s, uint64_t count, size_t min_size,
                       size_t elem_size, const char *what, int *err);
/* perf's struct perf_header_string, into the reader's arena. */
int ps_section_string(struct ps_feature_section *s, const char **out);
/* u32 nr, then nr strings. */
int ps_section_string_list(struct ps_feature_section *s, struct ps_string_list *out);

/* perf 6.1 stops reading a capture's features at one it refuses although
 * it is not damaged (ps_features.perf_stops_at): the first such. */
static inline void ps_features_perf_stops(struct ps_features *f, unsigned bit)
{
	if (!f->perf_stops_at)
		f->perf_stops_at = bit;
}

/* The features that describe the recording machine (features_machine.c):
 * the rest of CPU_TOPOLOGY, NUMA_TOPOLOGY, CACHE, MEM_TOPOLOGY,
 * HYBRID_TOPOLOGY, CPU_PMU_CAPS, PMU_CAPS, GROUP_DESC and AUXTRACE; and
 * BPF_PROG_INFO and BPF_BTF (features_bpf.c). 0, -EINVAL for a damaged
 * section, -ENOMEM. */
int ps_decode_cpu_topology(struct ps_feature_section *s);
int ps_decode_numa_topology(struct ps_feature_section *s);
int ps_decode_cache(struct ps_feature_section *s);
int ps_decode_mem_topology(struct ps_feature_section *s);
int ps_decode_hybrid_topology(struct ps_feature_section *s);
int ps_decode_cpu_pmu_caps(struct ps_feature_section *s);
int ps_decode_pmu_caps(struct ps_feature_section *s);
int ps_decode_group_desc(struct ps_feature_section *s);
int ps_decode_bpf_prog_info(struct ps_feature_section *s);
int ps_decode_bpf_btf(struct ps_feature_section *s);
int ps_decode_auxtrace(struct ps_feature_section *s);

#endif /* PS_READER_FEATURE_SECTION_PRIV_H */
