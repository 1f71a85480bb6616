/* Record type names, spelled as perf spells them in `perf report -D`. */
#include "reader/reader_priv.h"

/* The names with their PERF_RECORD_ prefix, built once at compile time. */
#define N(x) "PERF_RECORD_" x
static const char *const full_kernel[] = {
	[1] = N("MMAP"),
	[2] = N("LOST"),
	[3] = N("COMM"),
	[4] = N("EXIT"),
	[5] = N("THROTTLE"),
	[6] = N("UNTHROTTLE"),
	[7] = N("FORK"),
	[8] = N("READ"),
	[9] = N("SAMPLE"),
	[10] = N("MMAP2"),
	[11] = N("AUX"),
	[12] = N("ITRACE_START"),
	[13] = N("LOST_SAMPLES"),
	[14] = N("SWITCH"),
	[15] = N("SWITCH_CPU_WIDE"),
	[16] = N("NAMESPACES"),
	[17] = N("KSYMBOL"),
	[18] = N("BPF_EVENT"),
	[19] = N("CGROUP"),
	[20] = N("TEXT_POKE"),
	[21] = N("AUX_OUTPUT_HW_ID"),
	[22] = N("CALLCHAIN_DEFERRED"),
};
static const char *const full_user[] = {
	N("ATTR"),           N("EVENT_TYPE"),    N("TRACING_DATA"),     N("BUILD_ID"),
	N("FINISHED_ROUND"), N("ID_INDEX"),      N("AUXTRACE_INFO"),    N("AUXTRACE"),
	N("AUXTRACE_ERROR"), N("THREAD_MAP"),    N("CPU_MAP"),          N("STAT_CONFIG"),
	N("STAT"),           N("STAT_ROUND"),    N("EVENT_UPDATE"),     N("TIME_CONV"),
	N("FEATURE"),        N("COMPRESSED"),    N("FINISHED_INIT"),    N("COMPRESSED2"),
	N("BPF_METADATA"),   N("SCHEDSTAT_CPU"), N("SCHEDSTAT_DOMAIN"),
};
#undef N

const char *ps_record_type_name(uint32_t type)
{
	if (type < sizeof(full_kernel) / sizeof(full_kernel[0]))
		return full_kernel[type];
	if (type >= 64 && type - 64 < sizeof(full_user) / sizeof(full_user[0]))
		return full_user[type - 64];
	return NULL;
}
