/* On-disk facts of perf.data that no system header provides: the file
 * header, the pipe header and the limits this reader enforces.
 * (Kernel record types and PERF_SAMPLE_* come from linux/perf_event.h;
 * perf's own record types are in the public header.) Private to
 * src/reader.
 */
#ifndef PS_READER_PERF_FORMAT_PRIV_H
#define PS_READER_PERF_FORMAT_PRIV_H

#include <stdint.h>

/* "PERFILE2" read as a little-endian u64 */
#define PS_PERF_MAGIC2 0x32454c4946524550ULL
#define PS_PERF_MAGIC2_SWAPPED 0x50455246494c4532ULL
/* "PERFFILE", the version 1 magic */
#define PS_PERF_MAGIC1 0x454c494646524550ULL

#define PS_FILE_HEADER_SIZE 104
#define PS_FILE_HEADER_SIZE_NOFEAT 72 /* older headers without feature bits */
#define PS_PIPE_HEADER_SIZE 16

#define PS_ATTR_SIZE_VER0 64
#define PS_ATTR_SIZE_KNOWN 136 /* VER8: config3 */
/* Larger attrs come from newer perf; copy the known part, skip the rest.
 * Anything above this bound is rejected as corrupt. */
#define PS_ATTR_SIZE_MAX 4096

/* Bounds on counts and sizes taken from untrusted input. */
#define PS_MAX_ATTRS 65536
#define PS_MAX_IDS_PER_ATTR (1u << 20)
#define PS_MAX_FEATURE_SIZE (256u << 20) /* one feature section */
#define PS_MAX_STRING_LIST 65536
/* sanity bounds on what NRCPUS and TOTAL_MEM describe: Linux's NR_CPUS
 * tops out at 8192, x86-64's 57-bit physical addresses at 128 PiB */
#define PS_MAX_CPUS 65536
#define PS_MAX_TOTAL_MEM_KB (1ull << 47)
#define PS_MAX_BUILD_IDS (1u << 20)
#define PS_MAX_TRACING_DATA (256u << 20)
#define PS_MAX_DECOMPRESSED_CHUNK (64u << 20)

#define PS_NAME_ALIGN 64

/* PERF_RECORD_MISC bits not in older kernel headers */
#define PS_MISC_CPUMODE_MASK 7
#define PS_MISC_MMAP_DATA (1 << 13)
#define PS_MISC_COMM_EXEC (1 << 13)
#define PS_MISC_SWITCH_OUT (1 << 13)
#define PS_MISC_MMAP_BUILD_ID (1 << 14)
#define PS_MISC_BUILD_ID_SIZE (1 << 15)
#define PS_MISC_EXACT_IP (1 << 14)
#define PS_MISC_SWITCH_OUT_PREEMPT (1 << 14)

#endif /* PS_READER_PERF_FORMAT_PRIV_H */
