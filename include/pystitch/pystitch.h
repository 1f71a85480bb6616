/* pystitch: read perf.data captures, unwind and symbolise their stacks.
 *
 * Public API. Conventions (after libbpf):
 *  - every name starts with ps_; handles are opaque;
 *  - options structs start with their own size so the ABI can grow (new
 *    fields are only ever added at the end): make them with PS_OPTS(), or
 *    zero them with memset() and set .sz = sizeof(opts). Every function
 *    taking one checks it alike: NULL means the defaults; a size smaller
 *    than the sz field itself (0 included) is -EINVAL; a struct smaller
 *    than this library's has its missing fields read as zero; a larger
 *    one (from a newer header) is taken only when every byte past the
 *    fields this library knows is zero, else -EINVAL (it asks for an
 *    option this build does not have);
 *  - functions return 0 or a positive count on success and a negative errno
 *    value on failure; the handle keeps a one-line message describing the
 *    last failure (ps_reader_errmsg(), ps_session_errmsg());
 *  - an *_open() that fails returns a negative errno, leaves *out NULL (no
 *    handle to close) and says why in one line through the log callback of
 *    its options, at PS_LOG_ERROR;
 *  - the library never prints and never exits; diagnostics go through the
 *    log callback given in the options;
 *  - a handle comes from *_open() and is freed by *_close(), which takes
 *    NULL; everything else the library returns (strings, structs, arrays)
 *    belongs to the handle: never free it, and do not use it after the
 *    handle is closed, or sooner where the function says so;
 *  - handles share no state: several can be used at once, each from one
 *    thread at a time.
 */
#ifndef PYSTITCH_PYSTITCH_H
#define PYSTITCH_PYSTITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memset, for PS_OPTS() */

#ifdef __cplusplus
extern "C" {
#endif

#define PS_VERSION_STRING "0.1.0"

#if defined(__GNUC__) && defined(PS_BUILDING_LIBRARY)
#define PS_API __attribute__((visibility("default")))
#else
#define PS_API
#endif

/* Declare NAME, an options struct of TYPE (ps_reader_opts,
 * ps_session_opts), with its size set, the fields given set and every
 * other byte zero, padding included (which is what lets a struct from a
 * newer or older header pass the size check):
 *   PS_OPTS(ps_session_opts, opts, .jobs = 2, .log = my_log);
 *   opts.no_inline = true; */
#ifdef __GNUC__
#define PS_OPTS(TYPE, NAME, ...)                                                                   \
	struct TYPE NAME = ({                                                                      \
		memset(&NAME, 0, sizeof(struct TYPE));                                             \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };                           \
	})
#else
/* padding is not cleared: zero the struct with memset() before use */
#define PS_OPTS(TYPE, NAME, ...) struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }
#endif

enum ps_log_level {
	/* Why a call failed where no handle is left to ask (an *_open()):
	 * the message ps_*_errmsg() would have given. */
	PS_LOG_ERROR = -1,
	PS_LOG_WARN = 0,
	PS_LOG_INFO = 1,
	PS_LOG_DEBUG = 2,
};

/* Called on the caller's thread from inside the call that logs, with ctx as
 * given in the options. msg is one line without a newline, valid only
 * during the call. */
typedef void (*ps_log_fn)(void *ctx, enum ps_log_level level, const char *msg);

/* ------------------------------------------------------------------ */
/* perf.data reader                                                    */
/* ------------------------------------------------------------------ */

struct ps_reader;

enum ps_order {
	/* Records in the order they are stored in the file (after
	 * decompression), as `perf report -D` reads them. */
	PS_ORDER_FILE = 0,
	/* perf's delivery order: kernel records are queued and released in
	 * timestamp order at FINISHED_ROUND barriers; perf's own records
	 * (type >= 64) are delivered when read. */
	PS_ORDER_TIME = 1,
};

struct ps_reader_opts {
	size_t sz; /* sizeof(struct ps_reader_opts): see PS_OPTS() */
	enum ps_order order;
	/* Stop at a damaged record without failing: everything before it
	 * is delivered and ps_reader_next() returns 0 (a warning is logged
	 * and ps_reader_stats() records the offset). */
	bool force;
	/* Upper bound on the copies of records the timestamp queue holds,
	 * in bytes (the records of a mapped capture are used where they lie
	 * and do not count); 0 means the default (256 MiB). When it is
	 * exceeded, half of the queue is released early. */
	size_t max_queue_bytes;
	ps_log_fn log;
	void *log_ctx;
};

/* Open a capture. path "-" reads standard input (file or pipe format).
 * Reads the file header, the attrs and the header features; records are
 * read by ps_reader_next(). opts may be NULL (defaults); it is copied, so
 * it need not outlive the call. Returns 0 and sets *out, which the caller
 * frees with ps_reader_close().
 * On failure the return value is a negative errno, *out is NULL and
 * opts->log is told what went wrong at PS_LOG_ERROR: one line starting
 * with the path ("perf.data: offset 0x1a0: ..."). Errors:
 *   -EINVAL     bad options (see PS_OPTS()), path is NULL, not a perf.data
 *               file, or a damaged or truncated header, attr or feature
 *               section;
 *   -ENOTSUP    a version 1 (PERFFILE) capture;
 *   -ESPIPE     a file-mode capture given through a pipe;
 *   -ENOMEM     out of memory;
 *   other       the negative errno of open(2) or read(2) (-ENOENT, ...).
 * path may also name a pystitch archive (`pystitch archive`; recognised by
 * its content, not its name), read in place of the perf.data it holds: it
 * is checked and all of it unpacked at once (up to 4 GiB a file, 32 GiB in
 * all), into files without names under $TMPDIR (else /tmp) that only the
 * reader's descriptors hold, so nothing stays on disk after
 * ps_reader_close() or however the process ends; the session reads them
 * through /proc/self/fd. A damaged or hostile archive fails with -EINVAL
 * (-EFBIG over a size limit) and a message naming the archive, the entry
 * and what was wrong; -ENOSPC when its files do not fit in $TMPDIR, and
 * the errno of open(2) or write(2) (-EACCES, -EMFILE, -EIO, ...) when this
 * machine cannot unpack it. */
PS_API int ps_reader_open(const char *path, const struct ps_reader_opts *opts,
                          struct ps_reader **out);
/* Same, on an already open descriptor; name is used in messages (NULL:
 * "(input)"). A pipe-mode stream is read from fd's current offset; a
 * file-mode capture needs a regular file at offset 0, which the reader
 * seeks (else -ESPIPE). fd must stay open until ps_reader_close(), which
 * does not close it. Archives are read only through ps_reader_open(). */
PS_API int ps_reader_open_fd(int fd, const char *name, const struct ps_reader_opts *opts,
                             struct ps_reader **out);
/* Free the reader and everything it returned. NULL is a no-op. */
PS_API void ps_reader_close(struct ps_reader *reader);
/* The last failure as one line starting with the path ("perf.data: offset
 * 0x1a0: ..."), "" when nothing failed, "out of memory" for a NULL
 * reader. Owned by the reader, valid until ps_reader_close(); it keeps
 * the first failure. */
PS_API const char *ps_reader_errmsg(const struct ps_reader *reader);
/* The path as given to ps_reader_open() ("(stdin)" for "-"), or the name
 * given to ps_reader_open_fd(). Owned by the reader. */
PS_API const char *ps_reader_path(const struct ps_reader *reader);
/* The capture's own path: ps_reader_path(), except for a capture read from
 * a pystitch archive, whose perf.data path is the one it was archived from
 * (as given then), so that what names the input prints as it did there.
 * Owned by the reader. */
PS_API const char *ps_reader_capture_path(const struct ps_reader *reader);
/* The file records are read from now: ps_reader_capture_path(), except in
 * a folder perf record wrote (--threads, --kcore), whose files are read
 * in turns: PATH/data, PATH/data.0, ... Owned by the reader. */
PS_API const char *ps_reader_input_file(const struct ps_reader *reader);
/* The header file: ps_reader_capture_path(), or a folder's PATH/data. */
PS_API const char *ps_reader_header_file(const struct ps_reader *reader);
/* The index-th file of a folder capture in the order it is read: PATH/data,
 * then the data.N files that hold records (once the header is read); NULL
 * past the last, and for a capture that is one file. Owned by the reader. */
PS_API const char *ps_reader_folder_file(const struct ps_reader *reader, size_t index);

/* ---- header facts -------------------------------------------------- */

struct ps_attr {
	/* struct perf_event_attr fields, host byte order */
	uint32_t type;
	uint32_t size; /* attr.size as stored (0 means 64) */
	uint64_t config;
	uint64_t sample_period; /* or sample_freq when freq is set */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags; /* the bitfield word: disabled, inherit, ... */
	uint32_t wakeup_events;
	uint32_t bp_type;
	uint64_t config1;
	uint64_t config2;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint32_t aux_sample_size;
	uint64_t sig_data;
	uint64_t config3;

	/* from the ids section, HEADER_ATTR or EVENT_DESC */
	const char *name; /* event name, e.g. "cpu-clock:ppp"; never NULL */
	size_t nr_ids;
	const uint64_t *ids;

	/* derived */
	unsigned index; /* position in the attr list */
	size_t id_pos; /* u64 index of the id in a sample, or SIZE_MAX */
	size_t is_pos; /* u64 index of the id from the end of a trailer */
	size_t id_hdr_size; /* bytes of the sample_id trailer */

	/* Pipe mode, the first event of its type: perf's own name for it
	 * ("cpu-clock:uH"), which perf script prints instead of an
	 * EVENT_DESC's or the tracing data's name when the samples lack a
	 * field it prints (it named the event in a message first); NULL
	 * otherwise, and once EVENT_UPDATE has named it. */
	const char *fallback_name;
};

/* attr.flags bits we use */
#define PS_ATTR_FREQ (1ULL << 10)
#define PS_ATTR_SAMPLE_ID_ALL (1ULL << 18)
#define PS_ATTR_EXCLUDE_CALLCHAIN_USER (1ULL << 22)
/* Linux 6.19+: the user callchain comes later, in a
 * PS_RECORD_CALLCHAIN_DEFERRED record */
#define PS_ATTR_DEFER_CALLCHAIN (1ULL << 38)

struct ps_build_id {
	uint16_t misc; /* cpumode of the DSO */
	int32_t pid;
	uint8_t size; /* valid bytes of id (20 when not recorded) */
	uint8_t id[20];
	const char *filename;
};

struct ps_string_list {
	size_t nr;
	const char *const *items;
};

/* CPU_TOPOLOGY: one available CPU's ids (-1: not recorded). */
struct ps_cpu_ids {
	int32_t core_id, socket_id, die_id;
};

/* NUMA_TOPOLOGY: one node. */
struct ps_numa_node {
	uint32_t node;
	uint64_t mem_total_kb, mem_free_kb;
	const char *cpus; /* a CPU list such as "0-3,8" */
};

/* CACHE: one cache level of one CPU group, as sysfs describes it. */
struct ps_cache_level {
	uint32_t level, line_size, sets, ways;
	const char *type, *size, *cpus; /* "Data", "32K", "0-1" */
};

/* MEM_TOPOLOGY: one memory node and the memory blocks it holds. */
struct ps_memory_node {
	uint64_t node, size; /* size in bytes */
	size_t nr_bits;
	const uint64_t *bits; /* block bitmap, (nr_bits + 63) / 64 words */
};

/* HYBRID_TOPOLOGY: the CPUs of one core type's PMU. */
struct ps_hybrid_node {
	const char *pmu, *cpus;
};

/* PMU_CAPS: one PMU's capabilities ("name=value" each). */
struct ps_pmu_caps {
	const char *pmu;
	struct ps_string_list caps;
};

/* BPF_PROG_INFO: one JIT-compiled function of a BPF program. */
struct ps_bpf_func {
	uint64_t addr;
	uint32_t size;
	uint8_t tag[8];
	bool has_btf_type; /* the program's func_info names its BTF type */
	uint32_t btf_type; /* a BTF_KIND_FUNC in the BTF of ps_bpf_prog.btf_id */
};

/* BPF_PROG_INFO: one BPF program loaded while perf recorded. */
struct ps_bpf_prog {
	uint32_t id;
	uint32_t btf_id; /* 0: none */
	char name[17]; /* the kernel's name for it, NUL-terminated */
	/* the numbers of JITed addresses, lengths and tags agree (perf
	 * prints nothing for a program where they do not) */
	bool funcs_known;
	size_t nr_funcs;
	const struct ps_bpf_func *funcs;
};

/* BPF_BTF: the type information of BPF programs, as the kernel gave it. */
struct ps_bpf_btf {
	uint32_t id;
	uint32_t size;
	const uint8_t *data;
};

/* GROUP_DESC: one event group. */
struct ps_group_desc {
	const char *name; /* "{anon_group}" for a group without one */
	uint32_t leader_index, nr_members;
};

/* Decoded header features. Strings are NULL when the feature is absent. */
struct ps_features {
	uint64_t present[4]; /* feature bits as in the file */
	const char *hostname;
	const char *osrelease;
	const char *version;
	const char *arch;
	const char *cpudesc;
	const char *cpuid;
	bool has_nrcpus;
	uint32_t nr_cpus_available, nr_cpus_online;
	bool has_total_mem;
	uint64_t total_mem_kb;
	struct ps_string_list cmdline;
	size_t nr_build_ids;
	const struct ps_build_id *build_ids;
	bool has_clockid;
	uint64_t clockid_res_ns;
	bool has_clock_data;
	uint32_t clock_data_version, clock_data_clockid;
	uint64_t clock_wall_ns, clock_clockid_ns;
	bool has_compressed;
	uint32_t comp_version, comp_type, comp_level, comp_ratio, comp_mmap_len;
	bool has_sample_time;
	uint64_t first_sample_time, last_sample_time;
	bool has_tracing_data;
	uint64_t tracing_data_size;
	size_t tracing_nr_events; /* event formats libtraceevent parsed */
	struct ps_string_list cpu_topology_sibling_cores;
	struct ps_string_list cpu_topology_sibling_threads;
	size_t nr_pmu_mappings;
	const uint32_t *pmu_types;
	const char *const *pmu_names;
	bool branch_stack;
	bool is_stat;
	bool has_dir_format;
	uint64_t dir_format_version;
	/* CPU_TOPOLOGY beyond the sibling lists (perf 4.x and later): the
	 * ids of each available CPU, and the sibling dies (perf 5.x) */
	struct ps_string_list cpu_topology_sibling_dies;
	size_t nr_cpu_ids;
	const struct ps_cpu_ids *cpu_ids;
	bool has_die_ids;
	size_t nr_numa_nodes;
	const struct ps_numa_node *numa_nodes;
	size_t nr_cache_levels;
	const struct ps_cache_level *cache_levels;
	uint64_t memory_block_size;
	size_t nr_memory_nodes;
	const struct ps_memory_node *memory_nodes;
	size_t nr_hybrid_nodes;
	const struct ps_hybrid_node *hybrid_nodes;
	struct ps_string_list cpu_pmu_caps; /* "name=value" */
	size_t nr_pmu_caps;
	const struct ps_pmu_caps *pmu_caps;
	size_t nr_groups;
	const struct ps_group_desc *groups;
	size_t nr_bpf_progs, nr_bpf_btfs; /* BPF_PROG_INFO, BPF_BTF entries */
	size_t nr_auxtrace_index; /* AUXTRACE index entries */
	/* Feature bits whose section was damaged: a warning said what was
	 * wrong, and the feature's fields above are as if it were absent
	 * (its bit stays set in present[]). */
	uint64_t damaged[4];
	/* BPF_PROG_INFO and BPF_BTF as perf keeps them: by id, the first of
	 * several with one id (none from a capture of the other byte order,
	 * which perf does not read either) */
	size_t nr_bpf_prog_list, nr_bpf_btf_list;
	const struct ps_bpf_prog *bpf_prog_list;
	const struct ps_bpf_btf *bpf_btf_list;
	/* The feature bit at which perf 6.1 stops reading the features,
	 * refusing one that is not damaged (0: none): DIR_FORMAT, which perf
	 * takes only from a directory capture's header file; a CPU_TOPOLOGY
	 * with a socket id above the number of CPUs (then without its CPUs'
	 * ids, as perf has it); groups that do not fit the events; a
	 * CLOCK_DATA of another version. perf prints a file's later features
	 * as it has them then, empty; in a pipe it stops there. */
	unsigned perf_stops_at;
};

/* Feature bit numbers as in perf's header.h. */
enum ps_feature {
	PS_FEAT_TRACING_DATA = 1,
	PS_FEAT_BUILD_ID = 2,
	PS_FEAT_HOSTNAME = 3,
	PS_FEAT_OSRELEASE = 4,
	PS_FEAT_VERSION = 5,
	PS_FEAT_ARCH = 6,
	PS_FEAT_NRCPUS = 7,
	PS_FEAT_CPUDESC = 8,
	PS_FEAT_CPUID = 9,
	PS_FEAT_TOTAL_MEM = 10,
	PS_FEAT_CMDLINE = 11,
	PS_FEAT_EVENT_DESC = 12,
	PS_FEAT_CPU_TOPOLOGY = 13,
	PS_FEAT_NUMA_TOPOLOGY = 14,
	PS_FEAT_BRANCH_STACK = 15,
	PS_FEAT_PMU_MAPPINGS = 16,
	PS_FEAT_GROUP_DESC = 17,
	PS_FEAT_AUXTRACE = 18,
	PS_FEAT_STAT = 19,
	PS_FEAT_CACHE = 20,
	PS_FEAT_SAMPLE_TIME = 21,
	PS_FEAT_MEM_TOPOLOGY = 22,
	PS_FEAT_CLOCKID = 23,
	PS_FEAT_DIR_FORMAT = 24,
	PS_FEAT_BPF_PROG_INFO = 25,
	PS_FEAT_BPF_BTF = 26,
	PS_FEAT_COMPRESSED = 27,
	PS_FEAT_CPU_PMU_CAPS = 28,
	PS_FEAT_CLOCK_DATA = 29,
	PS_FEAT_HYBRID_TOPOLOGY = 30,
	PS_FEAT_PMU_CAPS = 31,
	PS_FEAT_LAST = 32,
};
/* The feature's name as perf spells it ("BUILD_ID"), or NULL for an unknown
 * bit. A static string. */
PS_API const char *ps_feature_name(unsigned bit);

/* Header facts; these cannot fail. The reader must not be NULL. */
PS_API bool ps_reader_is_pipe(const struct ps_reader *reader);
/* The capture is a folder perf record wrote (--threads, --kcore). */
PS_API bool ps_reader_is_folder(const struct ps_reader *reader);
/* The order records are delivered in (ps_reader_opts.order). */
PS_API enum ps_order ps_reader_order(const struct ps_reader *reader);
/* The capture was written on a machine of the other byte order. */
PS_API bool ps_reader_is_swapped(const struct ps_reader *reader);
/* The input is a pystitch archive; then *perf_data_mtime (when not NULL)
 * receives the archived perf.data's modification time, in seconds since
 * the epoch. */
PS_API bool ps_reader_is_archive(const struct ps_reader *reader, int64_t *perf_data_mtime);
/* The data section's offset and size in the file (pipe mode: both 0). */
PS_API uint64_t ps_reader_data_offset(const struct ps_reader *reader);
PS_API uint64_t ps_reader_data_size(const struct ps_reader *reader);
/* How far the reader has got: *done is the input bytes consumed so far
 * (records read ahead for ordering count as consumed), *total the input's
 * size as far as it is known: the end of the data section for a file
 * (with a folder's data.N files added), 0 for a pipe. For a progress
 * display; it cannot fail. */
PS_API void ps_reader_progress(const struct ps_reader *reader, uint64_t *done, uint64_t *total);
/* A capture that perf record is still writing to a file, followed by
 * ps_capture_count_growing() (pystitch record's progress line): zero it,
 * then call again as often as wanted. */
struct ps_growing_capture {
	uint64_t next; /* offset of the next record header; 0: header unread */
	uint64_t bytes; /* the file's size at the last call */
	uint64_t samples; /* PERF_RECORD_SAMPLE records so far */
	uint64_t lost_records; /* PERF_RECORD_LOST records so far */
	bool swap;
};
/* Count the records perf appended to path since the last call, up to the
 * last one written whole, reading their headers only. 0 (also while the
 * file or its header is not there yet), -EINVAL when path is not a
 * file-mode perf.data or holds something perf did not write there, or
 * the negative errno of open(2). */
PS_API int ps_capture_count_growing(const char *path, struct ps_growing_capture *state);
/* Attrs known so far; in pipe mode they arrive as records. */
PS_API size_t ps_reader_nr_attrs(const struct ps_reader *reader);
/* The attr at index, or NULL when index >= ps_reader_nr_attrs(). Owned by
 * the reader: valid until ps_reader_close() for a file-mode capture, but
 * in pipe mode only until the next ps_reader_next() (a new attr record
 * can move the list). */
PS_API const struct ps_attr *ps_reader_attr(const struct ps_reader *reader, size_t index);
/* The attr whose ids include id (the last to claim it), or NULL. Owned as
 * ps_reader_attr()'s. */
PS_API const struct ps_attr *ps_reader_attr_of_id(const struct ps_reader *reader, uint64_t id);
/* Features known so far. In pipe mode they arrive as records, so they are
 * complete only once the stream has been read (ps_reader_next() == 0).
 * The struct and its strings are owned by the reader and live until
 * ps_reader_close(); in pipe mode its arrays (build_ids, ...) can be
 * replaced by ps_reader_next(), so read them again after each call. */
PS_API const struct ps_features *ps_reader_features(const struct ps_reader *reader);
/* The libtraceevent handle built from TRACING_DATA (struct tep_handle *),
 * or NULL. Owned by the reader (do not tep_free() it); valid until
 * ps_reader_close(). */
PS_API void *ps_reader_tep(const struct ps_reader *reader);

/* ---- events -------------------------------------------------------- */

/* perf's own record types (type >= 64), as in tools/lib/perf/include/perf/event.h */
enum ps_user_record_type {
	PS_RECORD_HEADER_ATTR = 64,
	PS_RECORD_HEADER_EVENT_TYPE = 65,
	PS_RECORD_HEADER_TRACING_DATA = 66,
	PS_RECORD_HEADER_BUILD_ID = 67,
	PS_RECORD_FINISHED_ROUND = 68,
	PS_RECORD_ID_INDEX = 69,
	PS_RECORD_AUXTRACE_INFO = 70,
	PS_RECORD_AUXTRACE = 71,
	PS_RECORD_AUXTRACE_ERROR = 72,
	PS_RECORD_THREAD_MAP = 73,
	PS_RECORD_CPU_MAP = 74,
	PS_RECORD_STAT_CONFIG = 75,
	PS_RECORD_STAT = 76,
	PS_RECORD_STAT_ROUND = 77,
	PS_RECORD_EVENT_UPDATE = 78,
	PS_RECORD_TIME_CONV = 79,
	PS_RECORD_HEADER_FEATURE = 80,
	PS_RECORD_COMPRESSED = 81,
	PS_RECORD_FINISHED_INIT = 82,
	PS_RECORD_COMPRESSED2 = 83,
	PS_RECORD_BPF_METADATA = 84,
	PS_RECORD_SCHEDSTAT_CPU = 85,
	PS_RECORD_SCHEDSTAT_DOMAIN = 86,
	PS_RECORD_TYPE_MAX = 87,
};
/* Kernel record types newer than Linux 6.1's headers. */
#define PS_RECORD_CALLCHAIN_DEFERRED 22
/* Callchain context of Linux 6.19+: the user part was deferred; the next
 * entry is the cookie of the CALLCHAIN_DEFERRED record that holds it. */
#define PS_CONTEXT_USER_DEFERRED ((uint64_t)-640)

/* Record type name as perf spells it ("PERF_RECORD_SAMPLE"), or NULL for
 * an unknown type. A static string. */
PS_API const char *ps_record_type_name(uint32_t type);

/* The sample_id trailer of non-sample records (and the equivalent fields
 * of samples). has_* flags tell which fields were present. */
struct ps_sample_id {
	bool has_tid, has_time, has_id, has_stream_id, has_cpu;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
};

struct ps_read_value {
	uint64_t value;
	uint64_t id;
	uint64_t lost;
};

struct ps_read_data {
	uint64_t time_enabled, time_running;
	size_t nr; /* 1 unless PERF_FORMAT_GROUP */
	const struct ps_read_value *values;
};

struct ps_branch_entry {
	uint64_t from, to, flags;
};

struct ps_regs {
	uint64_t abi; /* 0: no registers */
	uint64_t mask;
	size_t nr;
	const uint64_t *regs; /* host order, in increasing bit order of mask */
};

struct ps_sample {
	uint64_t sample_type;
	uint64_t identifier; /* PERF_SAMPLE_IDENTIFIER */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu, cpu_res;
	/* without PERF_SAMPLE_PERIOD (perf record -c N), the attr's
	 * sample_period (its sample_freq when freq is set), as perf has it */
	uint64_t period;
	struct ps_read_data read;
	size_t callchain_nr;
	const uint64_t *callchain; /* host order */
	uint32_t raw_size;
	const uint8_t *raw; /* tracepoint payload, as recorded */
	size_t branch_nr;
	bool has_branch_hw_idx;
	uint64_t branch_hw_idx;
	const struct ps_branch_entry *branches;
	struct ps_regs regs_user;
	uint64_t stack_size; /* bytes reserved in the record */
	uint64_t stack_dyn_size; /* bytes actually copied, <= stack_size */
	const uint8_t *stack_data; /* starts at the user SP */
	uint64_t weight; /* PERF_SAMPLE_WEIGHT, or WEIGHT_STRUCT's var1 */
	uint16_t weight_var2, weight_var3; /* WEIGHT_STRUCT only */
	uint64_t data_src;
	uint64_t transaction;
	struct ps_regs regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const uint8_t *aux_data;
};

struct ps_record_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	/* MMAP2 only */
	bool has_build_id; /* PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint8_t build_id_size;
	uint8_t build_id[20];
	/* as perf reads them: of a capture in the other byte order, as
	 * written (perf does not swap them) */
	uint32_t prot, flags;
	const char *filename; /* NUL-terminated, within the record */
};

struct ps_record_comm {
	uint32_t pid, tid;
	const char *comm;
};

struct ps_record_fork { /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct ps_record_lost {
	uint64_t id, lost;
};

struct ps_record_throttle { /* THROTTLE and UNTHROTTLE */
	uint64_t time, id, stream_id;
};

struct ps_record_read {
	uint32_t pid, tid;
	struct ps_read_data values;
};

struct ps_record_aux {
	uint64_t aux_offset, aux_size, flags;
};

struct ps_record_itrace_start {
	uint32_t pid, tid;
};

struct ps_record_switch { /* SWITCH and SWITCH_CPU_WIDE */
	bool cpu_wide;
	uint32_t next_prev_pid, next_prev_tid;
};

struct ps_record_namespaces {
	uint32_t pid, tid;
	uint64_t nr_namespaces;
	size_t nr; /* entries decoded (bounded by the record) */
	const uint64_t *dev_ino; /* nr pairs: dev, inode (host order) */
};

struct ps_record_ksymbol {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type, flags;
	const char *name;
};

struct ps_record_bpf_event {
	uint16_t type, flags;
	uint32_t id;
	uint8_t tag[8];
};

struct ps_record_cgroup {
	uint64_t id;
	const char *path;
};

struct ps_record_text_poke {
	uint64_t addr;
	uint16_t old_len, new_len;
	const uint8_t *bytes; /* old_len + new_len bytes */
};

struct ps_record_aux_output_hw_id {
	uint64_t hw_id;
};

struct ps_record_callchain_deferred {
	uint64_t cookie;
	size_t nr;
	const uint64_t *ips;
};

struct ps_record_id_index_entry {
	uint64_t id, idx, cpu, tid;
};

struct ps_record_id_index {
	uint64_t nr;
	const struct ps_record_id_index_entry *entries;
};

struct ps_record_thread_map_entry {
	uint64_t pid;
	char comm[16];
};

struct ps_record_thread_map {
	uint64_t nr;
	const struct ps_record_thread_map_entry *entries;
};

struct ps_record_cpu_map {
	/* the map as a list of cpus, decoded from any of perf's encodings */
	uint16_t encoding; /* 0 cpus, 1 mask, 2 range */
	size_t nr;
	const uint32_t *cpus;
	bool any_cpu; /* range encoding with the "any cpu" flag */
};

struct ps_record_build_id {
	int32_t pid;
	uint8_t size;
	uint8_t id[20];
	const char *filename;
};

struct ps_record_attr {
	const struct ps_attr *attr; /* the attr as registered */
};

struct ps_record_tracing_data {
	uint32_t size; /* payload bytes that follow the record */
};

struct ps_record_event_update {
	uint64_t type; /* 0 unit, 1 scale, 2 name, 3 cpus */
	uint64_t id;
	const char *text; /* unit or name */
	double scale;
};

struct ps_record_time_conv {
	uint64_t time_shift, time_mult, time_zero;
	bool has_cycles;
	uint64_t time_cycles, time_mask;
	uint8_t cap_user_time_zero, cap_user_time_short;
};

struct ps_record_feature {
	uint64_t feat_id;
};

struct ps_record_auxtrace_info {
	uint32_t type;
};

struct ps_record_auxtrace {
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu;
};

struct ps_record_auxtrace_error {
	uint32_t type, code, cpu, pid, tid, fmt;
	uint64_t ip, time;
	const char *msg;
	uint32_t machine_pid, vcpu;
};

/* perf stat record's settings: its {tag, value} pairs, the last of each
 * known tag kept (perf_event__read_stat_config()); a tag not given keeps
 * perf's default (0) and its has_ flag false. */
struct ps_record_stat_config {
	uint64_t nr;
	uint64_t aggr_mode; /* tag 0: enum aggr_mode (0 none, 1 global, ...) */
	uint64_t interval; /* tag 1: -I, milliseconds */
	uint64_t scale; /* tag 2: whether counts are scaled */
	bool has_aggr_mode, has_interval, has_scale;
};

struct ps_record_stat {
	uint64_t id;
	uint32_t cpu, thread;
	uint64_t val, ena, run;
};

struct ps_record_stat_round {
	uint64_t type, time;
};

struct ps_record_compressed {
	uint64_t data_size; /* compressed bytes in the record */
};

struct ps_event {
	uint32_t type;
	uint16_t misc;
	uint16_t size; /* record size as stored (header included) */
	/* Offset of the record in the input: the file offset in file mode,
	 * the stream offset after the pipe header in pipe mode. A record
	 * that came out of a COMPRESSED record carries the offset of that
	 * COMPRESSED record, as perf reports it, and from_compressed. */
	uint64_t offset;
	bool from_compressed;
	/* Extra payload that followed the record outside its size
	 * (HEADER_TRACING_DATA, AUXTRACE). */
	uint64_t payload_size;
	const uint8_t *raw; /* the record bytes as stored (file byte order) */
	/* The attr the record belongs to (for samples and records with a
	 * sample_id trailer), or NULL when it cannot be told. */
	const struct ps_attr *attr;
	struct ps_sample_id sample_id; /* trailer of non-sample records */
	/* Timestamp used for ordering: sample time, trailer time, or
	 * UINT64_MAX when the record has none. */
	uint64_t timestamp;
	union {
		struct ps_sample sample;
		struct ps_record_mmap mmap; /* MMAP and MMAP2 */
		struct ps_record_comm comm;
		struct ps_record_fork fork; /* FORK and EXIT */
		struct ps_record_lost lost; /* LOST and LOST_SAMPLES (id 0) */
		struct ps_record_throttle throttle;
		struct ps_record_read read;
		struct ps_record_aux aux;
		struct ps_record_itrace_start itrace_start;
		struct ps_record_switch context_switch;
		struct ps_record_namespaces namespaces;
		struct ps_record_ksymbol ksymbol;
		struct ps_record_bpf_event bpf_event;
		struct ps_record_cgroup cgroup;
		struct ps_record_text_poke text_poke;
		struct ps_record_aux_output_hw_id aux_output_hw_id;
		struct ps_record_callchain_deferred callchain_deferred;
		struct ps_record_attr header_attr;
		struct ps_record_tracing_data tracing_data;
		struct ps_record_build_id build_id;
		struct ps_record_id_index id_index;
		struct ps_record_auxtrace_info auxtrace_info;
		struct ps_record_auxtrace auxtrace;
		struct ps_record_auxtrace_error auxtrace_error;
		struct ps_record_thread_map thread_map;
		struct ps_record_cpu_map cpu_map;
		struct ps_record_stat_config stat_config;
		struct ps_record_stat stat;
		struct ps_record_stat_round stat_round;
		struct ps_record_event_update event_update;
		struct ps_record_time_conv time_conv;
		struct ps_record_feature feature;
		struct ps_record_compressed compressed;
	} u;
};

/* Read the next event. Returns 1 and sets *event (valid until the next
 * call), 0 at the end, or a negative errno (message: ps_reader_errmsg()).
 * The event and everything it points to (strings, arrays, sample data)
 * are owned by the reader and reused by the next ps_reader_next() or
 * ps_reader_close(): copy what must outlive it.
 * With PS_ORDER_FILE every record is delivered, COMPRESSED and
 * FINISHED_ROUND included, followed by the records unpacked from each
 * COMPRESSED record. With PS_ORDER_TIME, COMPRESSED records are not
 * delivered (only their contents), as perf script sees them.
 * Errors: -EINVAL for a damaged or truncated record, a record that does
 * not decompress, or too many attrs (with opts.force a damaged record
 * ends the stream with 0 instead); -ENOMEM; the negative errno of read(2).
 * After a failure the reader is spent: later calls return -EINVAL. */
PS_API int ps_reader_next(struct ps_reader *reader, const struct ps_event **event);

struct ps_reader_stats {
	uint64_t nr_records[PS_RECORD_TYPE_MAX]; /* by type, all records read */
	uint64_t nr_unknown_type; /* records of a type this reader does not know */
	uint64_t nr_skipped; /* known but not decoded: counted, skipped by size */
	uint64_t nr_unordered; /* delivered after a later timestamp */
	uint64_t nr_decompressed_bytes;
	bool damaged; /* --force stopped at a damaged record */
	uint64_t damaged_offset;
};
/* Counters of the records read so far. Owned by the reader; the struct
 * stays at the same address and is updated by ps_reader_next() until
 * ps_reader_close(). */
PS_API const struct ps_reader_stats *ps_reader_stats(const struct ps_reader *reader);

/* ------------------------------------------------------------------ */
/* The machine model: threads and address spaces along the records     */
/* ------------------------------------------------------------------ */

/* The threads and maps of a capture as perf keeps them while it delivers
 * the records (COMM, FORK, EXIT, MMAP, MMAP2 and the samples that make
 * threads), for a reader of records (ps_reader_next()) that wants to know
 * what perf knew at each sample: `perf report -D`'s " ... thread:" and
 * " ...... dso:" lines. */
struct ps_model;

struct ps_model_opts {
	size_t sz; /* sizeof(struct ps_model_opts): see PS_OPTS() */
	/* Where kernel symbols come from, as in ps_session_opts; they say
	 * how far the kernel's map reaches once perf has loaded it. A
	 * capture read from an archive uses the archive's instead. */
	const char *symfs;
	const char *buildid_dir;
	const char *kallsyms;
	ps_log_fn log; /* warnings (kernel symbols not found) */
	void *log_ctx;
};

/* A model of reader's capture; reader must outlive it. opts may be NULL.
 * 0 and *out, or -EINVAL (bad opts), -ENOMEM, with the reason told to
 * opts->log at PS_LOG_ERROR. */
PS_API int ps_model_open(const struct ps_reader *reader, const struct ps_model_opts *opts,
                         struct ps_model **out);
PS_API void ps_model_close(struct ps_model *model);
/* Apply one record of reader, in the order ps_reader_next() delivers
 * them (perf's with PS_ORDER_TIME), every record given once. 0 or
 * -ENOMEM. */
PS_API int ps_model_apply(struct ps_model *model, const struct ps_event *event);

/* Where a sample ran, as perf's machine__resolve() finds it. */
struct ps_sample_location {
	const char *comm; /* the thread's name at the sample's time */
	int32_t tid;
	/* The long name of the DSO (the recorded path; "[kernel.kallsyms]",
	 * "[vdso]", "/tmp/perf-PID.map" for JIT code) of the map holding the
	 * sampled IP in the address space its cpumode selects; NULL when no
	 * map holds it. */
	const char *dso;
	/* A cpumode perf does not look up (not the host's kernel or user
	 * space): perf prints "[hypervisor]"; dso is then NULL. */
	bool hypervisor;
};

/* The location of a PERF_RECORD_SAMPLE of the reader, before or after it
 * was applied; a thread not seen before is made, as perf makes it. The
 * strings are valid until the next ps_model_apply(). 0, -EINVAL (not a
 * sample), -ENOMEM. */
PS_API int ps_model_locate(struct ps_model *model, const struct ps_event *sample,
                           struct ps_sample_location *out);
/* The kernel's symbol perf names a TEXT_POKE's address with when it
 * prints the record before applying it (perf report -D): that of the
 * kernel-space map holding addr, once loaded, with its start in *start;
 * NULL when none, and when that load is the first of a kernel module
 * whose .ko perf cannot find (perf's map__load() fails then). Valid
 * until ps_model_close(). model is a struct ps_model (void, to serve as
 * a callback's context). */
PS_API const char *ps_model_text_poke_symbol(void *model, uint64_t addr, uint64_t *start);

/* ------------------------------------------------------------------ */
/* Stacks: samples with their symbolised call stacks                   */
/* ------------------------------------------------------------------ */

struct ps_session;

/* How Python frames of CPython processes appear in stacks. Python frames
 * come from the perf maps (-X perf, 3.12+; the pystitch_perf module,
 * 3.8-3.11) and jitdumps (-X perf_jit, 3.13+) the processes wrote; they
 * are frames named "py::qualname:filename", as in CPython's perf maps. */
enum ps_python_mode {
	/* Python frames replace the interpreter frames that ran them; the
	 * CPython call machinery between Python frames is dropped, C
	 * extension frames stay. Stacks cut off by the stack-copy limit end
	 * with a "[truncated]" frame. The default. */
	PS_PYTHON_MERGED = 0,
	/* Every native frame, Python frames among them. */
	PS_PYTHON_ALL,
	/* What perf script prints: no unwinding through trampolines. */
	PS_PYTHON_NATIVE,
	/* Python frames only. */
	PS_PYTHON_ONLY,
};

/* Which perf's stacks a session reproduces when it unwinds DWARF stacks
 * (--call-graph dwarf). The two perf builds print the same frames but at
 * stacks cut off by the stack-copy limit, and in a few frames without
 * .eh_frame (see the libunwind quirks in src/unwind/unwind.h). */
enum ps_unwind_style {
	/* Debian's perf, linked with libunwind: at a stack cut off by the
	 * stack-copy limit it adds a bogus ffffffffffffffff frame and loses
	 * the last real one. The default. The Python modes (all but
	 * PS_PYTHON_NATIVE) unwind the processes that ran JIT code (CPython's
	 * trampolines) as PS_UNWIND_PERF_LIBDW whatever the style: perf never
	 * prints their stacks. */
	PS_UNWIND_PERF_LIBUNWIND = 0,
	/* perf built with libdw (NO_LIBUNWIND=1). */
	PS_UNWIND_PERF_LIBDW,
};

/* How DWARF stacks are walked. The stacks are the same either way. */
enum ps_unwind_engine {
	/* A table of CFI rows compiled from libdw walks what its simple
	 * rules express and leaves the other frames to libdwfl. The default,
	 * and the faster. */
	PS_UNWIND_ENGINE_TABLE = 0,
	/* libdwfl alone: the reference the table is checked against, and a
	 * way out should they ever differ. */
	PS_UNWIND_ENGINE_LIBDWFL,
};

/* Kinds of files a session reads besides the capture. */
enum ps_file_kind {
	PS_FILE_ELF = 0, /* an object's code and symbols (incl. the build-id cache) */
	PS_FILE_DEBUGINFO, /* a separate debug file (.gnu_debuglink, /usr/lib/debug) */
	PS_FILE_KALLSYMS, /* kernel symbols as text */
	PS_FILE_VMLINUX, /* kernel symbols from an ELF */
	PS_FILE_PERF_MAP, /* perf-PID.map */
	PS_FILE_JITDUMP, /* jit-PID.dump */
	PS_FILE_PY_LINES, /* perf-PID.pylines, pystitch_perf's code objects */
};

/* Called for every file a session reads to symbolise, unwind or name
 * frames, once per lookup (the same file may be told of again for another
 * object or process: callers that list files remove duplicates): path is where it was looked up,
 * file where it was read from (the same, except for an archive's unpacked copy, and for a private
 * copy of pystitch's own vdso, which lives until ps_session_close()). file is NULL for an object
 * whose file was not found anywhere (path is then its recorded name).
 * Both valid only during the call. */
typedef void (*ps_file_used_fn)(void *ctx, const char *path, const char *file,
                                enum ps_file_kind kind);

struct ps_session_opts {
	size_t sz; /* sizeof(struct ps_session_opts): see PS_OPTS() */
	bool force; /* see ps_reader_opts.force */
	const char *symfs; /* look up every recorded path under this directory */
	const char *buildid_dir; /* perf's build-id cache; NULL: $HOME/.debug */
	const char *kallsyms; /* kernel symbols from this file */
	const char *vmlinux; /* kernel symbols from this ELF */
	bool no_inline; /* no inline frames */
	bool srcline; /* fill ps_frame.srcline */
	/* Which perf's stacks DWARF unwinding gives (what the stacks are),
	 * and how it walks them (the stacks are the same either way). */
	enum ps_unwind_style unwind_style;
	enum ps_unwind_engine unwind_engine;
	unsigned max_stack; /* frames per stack part; 0: 127 as perf */
	bool no_callchain; /* only the sampled IP (perf script -G) */
	/* Which samples to deliver; empty lists and a zero range select all.
	 * Filtered samples are not unwound. */
	const int32_t *pids;
	size_t nr_pids;
	const int32_t *tids;
	size_t nr_tids;
	const char *const *comms;
	size_t nr_comms;
	const int32_t *cpus;
	size_t nr_cpus;
	uint64_t time_start, time_end; /* inclusive, ns; 0: open */
	ps_log_fn log;
	void *log_ctx;
	/* Python frames of CPython processes (see enum ps_python_mode). */
	enum ps_python_mode python;
	/* Where perf-PID.map and jit-PID.dump are searched first; then the
	 * capture's directory, then /tmp. NULL: not searched. */
	const char *perf_map_dir;
	/* Told of every file read (how `pystitch archive` learns what to
	 * pack); NULL: not told. */
	ps_file_used_fn file_used;
	void *file_used_ctx;
	/* A time range as fractions of the capture's sample time span (the
	 * SAMPLE_TIME feature: perf script's --time 10%/2 or 0%-25%), used
	 * instead of time_start/time_end when time_percent is set; 0 <=
	 * start <= end <= 1. ps_session_open() fails with -EINVAL when the
	 * capture has no SAMPLE_TIME feature (pipe mode, or perf before 5.x). */
	bool time_percent;
	double time_percent_start, time_percent_end;
	/* Threads to use, the calling thread included (0 or 1: the calling
	 * thread does everything). jobs - 1 workers each read the capture
	 * with their own address-space model and unwind every (jobs - 1)-th
	 * block of samples ahead of ps_session_next(), which names, merges
	 * and delivers the stacks in order on the calling thread: the stacks
	 * are the same for every value. Taken only for a capture in a regular
	 * file (not standard input, a FIFO or an archive); otherwise 1. log
	 * is still called on the calling thread only, and a message that
	 * every worker meets is passed on as often as one session would pass
	 * it on. At most 64. */
	unsigned jobs;
	/* perf script --stitch-lbr: in LBR call graphs (perf record
	 * --call-graph lbr), a stack whose oldest LBR entries are the ones
	 * the thread's previous sample held gets the frames that sample saw
	 * further out, so stacks deeper than the LBR show whole. As perf,
	 * ps_session_open() turns it off, with a warning, unless the
	 * capture's events sample branch stacks without user registers and
	 * stack (and so always in pipe mode, whose events are not known
	 * then). Needs the LBR depth the CPU_PMU_CAPS feature records. */
	bool stitch_lbr;
	/* Told of every record other than a sample, in perf's order, once
	 * the session has applied it to its model of the processes (perf
	 * script's --show-*-events print them); ps_session_comm() names
	 * threads from here. A non-zero return stops ps_session_next(),
	 * which returns it. NULL: not told. Called on the calling thread. */
	int (*record)(void *ctx, const struct ps_event *event);
	void *record_ctx;
	/* Records in the order of the file, not of their timestamps (perf
	 * script --show-round-events reads so); COMPRESSED and
	 * FINISHED_ROUND records reach record then. */
	bool file_order;
	/* srclines with the whole path of the source file, not its base
	 * name (perf script --full-source-path) */
	bool full_source_path;
	/* More directories searched like perf_map_dir, after it
	 * (--perf-map-dir given several times: one per container). The
	 * perf-*.map and jit-*.dump files of any name in perf_map_dir and
	 * these are candidates for every process of the capture; a file is
	 * taken for a process only when its entries account for the
	 * process's sampled JIT addresses (see pystitch(1), PERF MAPS). */
	const char *const *perf_map_dirs;
	size_t nr_perf_map_dirs;
	/* Symbol names as the ELF files and addr2line give them, not
	 * demangled (perf script --no-demangle). */
	bool no_demangle;
	/* Fill ps_stack.insn and insn_len with the sampled instruction as
	 * perf script's -F insn,insnlen has it. */
	bool sample_insn;
	/* Fill ps_stack.srccode_* with the source line of the sampled
	 * address, as perf script's -F srccode finds it. */
	bool srccode;
	/* Fill ps_stack.branches (enum ps_branch_names): perf names the
	 * objects of brstack and brstackoff without loading their symbols,
	 * and the functions of brstacksym by loading them, which changes
	 * what later brstackoff offsets are. */
	int branches;
	/* Frames in kernel modules name the module's file, as its MMAP
	 * recorded it, instead of "[module]" (perf script
	 * --show-kernel-path). */
	bool show_kernel_path;
	/* Fill ps_stack.branch_lines with perf script's -F brstackinsn
	 * listing, of at most max_blocks blocks (perf's --max-blocks; 0: all)
	 * and with srclines when srcline is set. */
	bool branch_listing;
	unsigned max_blocks;
	/* More trees searched like symfs, after it (--symfs given several
	 * times: one exported root file system per container). A file is
	 * read from the first tree whose copy has the build-id the capture
	 * recorded for it (or, none recorded, that holds it). */
	const char *const *symfs_dirs;
	size_t nr_symfs_dirs;
	/* Fill ps_stack.addr_name where perf script -F addr names the
	 * sample's address. */
	bool addr_names;
};

enum ps_branch_names {
	PS_BRANCHES_NONE = 0,
	PS_BRANCHES_OBJECTS, /* dso and offset (-F brstack, brstackoff) */
	PS_BRANCHES_SYMBOLS, /* sym and symoff too (-F brstacksym) */
};

struct ps_frame {
	/* The address as perf script prints it: relative to the object's
	 * file for user code (a return address minus one for callers in
	 * DWARF mode), the raw address for kernel and unmapped code. */
	uint64_t addr;
	/* The address in the process as the frame was looked up: the sampled
	 * IP, a callchain entry, or an unwound PC (a return address minus one
	 * for callers in DWARF mode); the same for every inlined frame of one
	 * address; 0 for the markers ("[truncated]", "[python: unnamed]"). To resymbolise, find the
	 * mapping that held it at the sample's time. */
	uint64_t ip;
	const char *sym; /* NULL: [unknown] */
	uint64_t symoff;
	const char *dso; /* NULL: [unknown] */
	bool inlined;
	bool kernel;
	const char *srcline; /* with opts.srcline, else NULL */
	/* A Python frame: sym is "py::qualname:filename". */
	bool python;
	/* Not a frame: the marker "[truncated]" (sym) that ends a stack cut
	 * off by the stack-copy limit, in the Python modes that merge. */
	bool truncated;
	/* Not a frame of its own: the marker "[python: unnamed]" (sym) that
	 * stands, in the merged and only modes, for an activation of
	 * CPython's eval loop that no trampoline names (Python code run
	 * without perf support, before it was turned on or after it was
	 * turned off, or already running when it was turned on): Python
	 * code ran there, one or more frames whose names the capture does
	 * not hold. addr and ip are 0, dso NULL. */
	bool python_unnamed;
	/* A Python frame's source line in the Python modes that merge, 0
	 * when not known: the line its function was running (in a caller,
	 * the line of the call). Needs pystitch_perf's side file (see
	 * pystitch(1), LINE NUMBERS). It sits in what was the struct's tail
	 * padding: sizeof(struct ps_frame) is the same as before it. */
	uint32_t line;
};

/* One end of a branch of a sample's branch stack, as perf script's -F
 * brstack, brstacksym and brstackoff print it (see
 * ps_session_opts.branches). */
struct ps_branch_end {
	uint64_t addr; /* as recorded */
	/* brstackoff: relative to its mapping (file offset), unless perf has
	 * loaded the object's symbols from an ELF file; addr without a map */
	uint64_t offset;
	const char *sym; /* PS_BRANCHES_SYMBOLS only; NULL: [unknown] */
	uint64_t symoff;
	const char *dso; /* NULL: [unknown] */
};

struct ps_branch {
	struct ps_branch_end from, to;
	uint64_t flags; /* the entry's flags word as recorded */
};

/* One line of perf script's -F brstackinsn listing of a sample's branch
 * stack: the code between each branch and the next, instruction by
 * instruction (see ps_session_opts.branch_listing). */
enum ps_branch_line_kind {
	PS_BRANCH_LINE_SYMBOL, /* "\tsym+off:" where the function changes */
	PS_BRANCH_LINE_INSN, /* an instruction */
	PS_BRANCH_LINE_JUMP, /* a block's branch, with its entry's flags */
	PS_BRANCH_LINE_MISMATCH, /* the block's code does not end at its branch */
	PS_BRANCH_LINE_NOT_REACHING, /* a branch between the last one and the IP */
};

struct ps_branch_line {
	enum ps_branch_line_kind kind;
	uint64_t ip; /* INSN, JUMP */
	/* INSN, JUMP: the instruction's bytes as perf's decoder takes them;
	 * len 0 when it refuses them (perf prints "<bad>") */
	uint8_t len;
	uint8_t code[15];
	/* SYMBOL: the function, its offset (0: none printed), and the
	 * address's srcline (NULL: none) */
	const char *sym;
	int64_t symoff;
	const char *srcline;
	/* JUMP: the branch's flags word, and the instructions of its block
	 * so far (for the IPC; 0: none printed) */
	uint64_t flags;
	unsigned insns;
	/* INSN, JUMP, with srccode asked for (ps_session_opts.srccode): the
	 * source line perf's -F srccode prints after this line, as
	 * ps_stack.srccode_* (srccode_file NULL: none) */
	const char *srccode_file;
	unsigned srccode_line;
	const char *srccode_text;
	size_t srccode_len;
};

/* One delivery of a PERF_SAMPLE_READ sample (ps_stack.deliveries). */
struct ps_sample_delivery {
	const struct ps_attr *attr; /* the read value's event */
	uint64_t period; /* how far its counter moved */
};

struct ps_stack {
	/* The PERF_RECORD_SAMPLE: its sample is event->u.sample, its attr
	 * (event name, sample type) event->attr. */
	const struct ps_event *event;
	const char *comm; /* the thread's name at the sample's time */
	/* The event records call chains (PERF_SAMPLE_CALLCHAIN): frames is
	 * the stack, leaf first. Otherwise frames[0] is the sampled IP
	 * (printed raw). */
	bool has_callchain;
	size_t nr_frames;
	const struct ps_frame *frames;
	/* The program the sampled process runs: the file of its first
	 * executable file mapping since its exec (for a process that ran
	 * before the capture began, its lowest-addressed one), named as
	 * ps_frame.dso names files; NULL when the capture shows none (a
	 * kernel thread). */
	const char *executable;
	/* With ps_session_opts.sample_insn: the sampled instruction as perf
	 * reads it for -F insn (from the file of the map holding the IP, when
	 * the capture was made on a machine of this one's architecture or in
	 * pipe mode) and the length perf's x86 decoder gives it; insn_len 0
	 * when perf has none (kallsyms, JIT code, a missing file, bytes its
	 * decoder refuses). */
	uint8_t insn_len;
	uint8_t insn[16];
	/* Which thread perf holds the sample's (perf's thread object: a tid
	 * used again after perf made its thread anew gets another). */
	uint64_t thread_serial;
	/* With ps_session_opts.srccode: the source of the sampled address
	 * (from addr2line as perf runs it) and the text of that line, which
	 * perf script -F srccode prints unless it printed the same file and
	 * line last for the thread: srccode_file NULL when perf prints
	 * nothing; srccode_text holds srccode_len bytes, no NUL among them.
	 * Valid until the next ps_session_next(). */
	const char *srccode_file;
	unsigned srccode_line;
	const char *srccode_text;
	size_t srccode_len;
	/* With ps_session_opts.branches: the sample's branch stack, each end
	 * named (nr_branches is the sample's branch_nr). */
	size_t nr_branches;
	const struct ps_branch *branches;
	/* With ps_session_opts.branch_listing: the -F brstackinsn listing;
	 * has_branch_listing false when perf prints nothing (no branch). */
	bool has_branch_listing;
	size_t nr_branch_lines;
	const struct ps_branch_line *branch_lines;
	/* An event with PERF_SAMPLE_READ (sample_read true): perf delivers
	 * the sample once for each read value whose counter moved since that
	 * counter's last sample, as the value's event with the difference as
	 * its period (deliver_sample_value()); perf script prints it so,
	 * nr_deliveries times (none: not at all). */
	bool sample_read;
	size_t nr_deliveries;
	const struct ps_sample_delivery *deliveries;
	/* With ps_session_opts.addr_names: the sample's address
	 * (PERF_SAMPLE_ADDR) named as perf script -F addr names it (the
	 * function or data object it lies in, with symbols looked up, and
	 * its object), for the events whose addresses perf takes for places
	 * in the process (page faults); has_addr_name false for others. */
	bool has_addr_name;
	struct ps_branch_end addr_name;
};

/* Open a capture for stacks. Same conventions as ps_reader_open(): 0 and
 * *out, which the caller frees with ps_session_close(), or a negative
 * errno with *out NULL and the reason told to opts->log at PS_LOG_ERROR.
 * Errors are those of ps_reader_open(), -EINVAL for a --time percentage
 * the capture cannot take, -ENOMEM, and the errno of starting the
 * workers (opts.jobs).
 * opts may be NULL (defaults). The struct is copied, but not the strings
 * and arrays it points to (symfs, pids, comms, ...): keep those valid
 * until ps_session_close(). Files named by opts are opened only when
 * needed, so a missing one is a warning through opts.log, not an error.
 * path may name a pystitch archive (see ps_reader_open()): then every
 * file is read from the archive and nothing else, with the symbol options
 * the archive was made with (symfs, buildid_dir, kallsyms, vmlinux and
 * perf_map_dir of opts are ignored), so the stacks are those the original
 * machine gave. */
PS_API int ps_session_open(const char *path, const struct ps_session_opts *opts,
                           struct ps_session **out);
/* Tell the session that the stack ps_session_next() gave last was printed
 * as perf script prints a sample. perf script then reads the sampled
 * instruction of a capture made on a machine of this architecture (-F
 * insn or not), and the first time it does that loads the kernel's
 * symbols, which decides how later kernel addresses resolve (init text
 * past the kernel map perf record recorded; the symbols of a module perf
 * had looked up before: none). Call it after each sample printed to get
 * perf script's frames exactly; other consumers need not. NULL is a
 * no-op. */
PS_API void ps_session_stack_printed(struct ps_session *session);
/* The kernel symbol (function or object, in the kernel or a module)
 * holding addr as the session's kernel symbols give it, its start in
 * *start; NULL when none. Valid until ps_session_close(). session is a
 * struct ps_session *, typed void * to serve as
 * ps_script_opts.kernel_symbol. */
PS_API const char *ps_session_kernel_symbol(void *session, uint64_t addr, uint64_t *start);
/* ps_model_text_poke_symbol() for the session's current record, which
 * the session has applied (perf script prints a TEXT_POKE after its
 * machine has loaded the map the new bytes went into). */
PS_API const char *ps_session_text_poke_symbol(void *session, uint64_t addr, uint64_t *start);
/* Free the session, its reader and everything they returned. NULL is a
 * no-op. */
PS_API void ps_session_close(struct ps_session *session);
/* The last failure of ps_session_next() and the other calls on an open
 * session as one line (a reader failure starts with the path), "" before
 * any failure, "out of memory" for a NULL session. Owned by the
 * session, valid until ps_session_close(); a later failure rewrites it. */
PS_API const char *ps_session_errmsg(const struct ps_session *session);
/* The reader underneath (header facts, features, stats). Owned by the
 * session: do not close it, and do not call ps_reader_next() on it, which
 * would take records from the session. */
PS_API struct ps_reader *ps_session_reader(const struct ps_session *session);
/* The next sample that passes the filters, in perf's order, with its
 * stack. 1, 0 at the end, or -errno. The stack and everything it points
 * to (frames, names, comm, the event) are owned by the session and valid
 * until the next ps_session_next() or ps_session_close(); *stack is NULL
 * unless 1 is returned. Errors: those of ps_reader_next() (message from
 * the reader), and -ENOMEM. Symbols that cannot be found are not errors:
 * their frames have NULL sym or dso. */
PS_API int ps_session_next(struct ps_session *session, const struct ps_stack **stack);

/* The build ids of the files the session's stacks name, in the form of
 * ps_features.build_ids: the capture's own table (its BUILD_ID feature)
 * first, then one entry per file the session has read symbols of (or
 * whose MMAP2 record carried a build id) that the table lacks, with the
 * build id the capture recorded for it or, when it recorded none, the one
 * of the ELF file the session read for it (filename as ps_frame.dso names
 * the file, pid -1). perf record leaves out of its table the files no
 * sampled address fell in, such as a program's executable whose frames
 * only DWARF unwinding found. For ps_pprof_write_opts.build_ids. A
 * query: it reads nothing more. 0 with *ids and *nr (owned by the
 * session, valid until the next call or ps_session_close()), or
 * -ENOMEM. */
PS_API int ps_session_build_ids(struct ps_session *session, const struct ps_build_id **ids,
                                size_t *nr);

/* The name of thread tid of process pid at this point of the reading,
 * as perf names it: a thread not seen yet is taken in with its process's
 * name, or ":TID" (perf's machine__findnew_thread()). NULL when out of
 * memory. Valid until the next call on the session. */
PS_API const char *ps_session_comm(struct ps_session *session, int32_t pid, int32_t tid);

/* A process of the capture that mapped a CPython interpreter or ran JIT
 * code, and what pystitch found to name its Python frames. */
struct ps_python_process {
	int32_t pid;
	const char *comm;
	/* The recorded path of the file that defines the eval loop
	 * (libpython or a static interpreter), found on this machine (or
	 * in the build-id cache); NULL when none was. */
	const char *interpreter;
	int major, minor, micro; /* 0 when unknown */
	/* How the version was read: "Py_Version", "_Py_DebugOffsets",
	 * "version string" or ".rodata"; NULL when unknown. */
	const char *version_source;
	bool dynsym_only; /* the interpreter has no .symtab */
	/* -X perf's trampoline template (3.12+): found in the interpreter,
	 * and decoded into an unwind rule */
	bool has_trampoline, trampoline_decoded;
	/* The file the template is in when it is not the interpreter (the
	 * pystitch_perf module for 3.8-3.11); NULL otherwise. */
	const char *trampoline_file;
	bool jit_code; /* executable anonymous memory was mapped */
	/* The name sources found for the pid, with how many code ranges
	 * each names; NULL when not found. */
	const char *perf_map;
	size_t perf_map_entries;
	const char *jitdump;
	size_t jitdump_entries;
	size_t jitdump_unwind; /* ranges with their own .eh_frame */
	/* Where neither was found ("no perf-1234.map or jit-1234.dump in
	 * /data, /tmp"), or a file that could not be read; NULL otherwise. */
	const char *missing;
	const char *error;
	/* Line numbers: pystitch_perf's side file found for the process
	 * (NULL: none) and the code objects it describes, or why it could
	 * not be read (NULL: it was, or there is none). */
	const char *lines_file;
	size_t lines_codes;
	const char *lines_error;
	/* The Python frames of the stacks ps_session_next() has delivered,
	 * and of them those that have a line, by where its instruction
	 * pointer came from: libpython's DWARF (the eval loop's variable), or
	 * the scan of the frame's registers and stack. */
	uint64_t python_frames, lines_dwarf, lines_scan;
};

/* process and its strings are valid only during the call: copy what
 * must outlive it. */
typedef void (*ps_python_process_fn)(void *ctx, const struct ps_python_process *process);

/* Call fn for every process the session has seen so far that mapped a
 * CPython interpreter or JIT code, in pid order: what the records read by
 * ps_session_next() (or ps_session_read_to_end()) say. A query: it reads
 * nothing and changes nothing; once ps_session_next() has returned 0 it
 * covers the whole capture. 0 or -ENOMEM. */
PS_API int ps_session_python_processes(struct ps_session *session, ps_python_process_fn fn,
                                       void *ctx);

/* Read the rest of the capture without building stacks: its records keep
 * the session's model of the processes up to date, its samples are
 * passed over, so that ps_session_python_processes() then covers the whole
 * capture without the cost of unwinding (but without counts of Python
 * frames). Afterwards ps_session_next() returns 0. 0, or a negative errno
 * when a record could not be read (ps_session_errmsg() says why). */
PS_API int ps_session_read_to_end(struct ps_session *session);

#ifdef __cplusplus
}
#endif

/* The output formats (script text, folded stacks, flame graphs, pprof,
 * archives, ...) and output files. */
#include <pystitch/output.h>

#endif /* PYSTITCH_PYSTITCH_H */
