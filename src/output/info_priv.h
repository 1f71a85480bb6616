/* The printers of `pystitch info`'s features that have files of their own
 * (info_machine.c, info_bpf.c), called by info.c in perf's order. Each
 * prints what perf 6.1's util/header.c print_*() function of the feature
 * prints. Private to src/output. */
#ifndef PS_OUTPUT_INFO_PRIV_H
#define PS_OUTPUT_INFO_PRIV_H

#include <stdbool.h>

#include "base/strbuf.h"
#include "pystitch/pystitch.h"

void ps_info_print_cpu_topology(struct ps_strbuf *out, const struct ps_features *f);
void ps_info_print_numa_topology(struct ps_strbuf *out, const struct ps_features *f);
void ps_info_print_cache(struct ps_strbuf *out, const struct ps_features *f);
void ps_info_print_mem_topology(struct ps_strbuf *out, const struct ps_features *f);
void ps_info_print_hybrid_topology(struct ps_strbuf *out, const struct ps_features *f);
void ps_info_print_cpu_pmu_caps(struct ps_strbuf *out, const struct ps_features *f);
void ps_info_print_pmu_caps(struct ps_strbuf *out, const struct ps_features *f);
/* The groups as perf rebuilds them on its events (the reader's attrs). */
void ps_info_print_group_desc(struct ps_strbuf *out, const struct ps_reader *reader,
                              const struct ps_features *f);
/* use_btf: name functions from BPF_BTF (perf has it by then in a file,
 * not in a pipe, where BPF_BTF arrives after BPF_PROG_INFO is printed). */
void ps_info_print_bpf_prog_info(struct ps_strbuf *out, const struct ps_features *f, bool use_btf);
void ps_info_print_bpf_btf(struct ps_strbuf *out, const struct ps_features *f);

#endif /* PS_OUTPUT_INFO_PRIV_H */
