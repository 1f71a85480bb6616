/* CPU lists ("0-3,8") as perf 6.1 reads and prints them back: libperf's
 * perf_cpu_map__new() and perf's cpu_map__snprint(). perf stores the
 * NUMA nodes' CPUs as such text and prints them normalised, sorted and
 * with runs merged. */
#ifndef PS_BASE_CPU_LIST_H
#define PS_BASE_CPU_LIST_H

#include "base/strbuf.h"

/* 0, and when out is not NULL the list appended to it as perf prints it
 * ("-1" for an empty list, perf's map of no CPU); -EINVAL for text perf
 * refuses (a number past INT_MAX, a range running backwards, a CPU named
 * twice, other characters); -ENOMEM. Text after a comma that does not
 * start with a digit is ignored, as perf ignores it. */
int ps_cpu_list_format(const char *list, struct ps_strbuf *out);

#endif /* PS_BASE_CPU_LIST_H */
