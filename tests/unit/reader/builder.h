/* Synthetic perf.data builder for the reader's unit tests.
 *
 * Assembles, in memory, file-mode perf.data images (104-byte header, attrs
 * section with ids sections, data section, feature sections after the data)
 * and pipe-mode streams (16-byte header, then HEADER_ATTR, HEADER_FEATURE
 * and other records), in either byte order, and hands them to the reader
 * through a temporary file, a memfd or a pipe.
 *
 * Byte order: a big-endian image is what a big-endian machine writes: every
 * multi-byte field is stored big-endian at its natural offset (so the magic
 * reads as the byte-swapped value on a little-endian host), and the attr
 * bitfield word keeps its byte order but has the bits within each byte
 * reversed, which is what perf's swap_bitfield() undoes.
 */
#ifndef PS_TEST_BUILDER_H
#define PS_TEST_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- growable byte buffer with byte-order aware writers ------------- */

struct bld_buf {
	uint8_t *data;
	size_t len, cap;
	bool be; /* multi-byte values are written big-endian */
};

void bld_buf_init(struct bld_buf *b, bool be);
void bld_buf_free(struct bld_buf *b);
void bld_buf_reset(struct bld_buf *b);

void bld_u8(struct bld_buf *b, uint8_t v);
void bld_u16(struct bld_buf *b, uint16_t v);
void bld_u32(struct bld_buf *b, uint32_t v);
void bld_u64(struct bld_buf *b, uint64_t v);
void bld_bytes(struct bld_buf *b, const void *p, size_t n);
void bld_fill(struct bld_buf *b, uint8_t byte, size_t n);
void bld_zeros(struct bld_buf *b, size_t n);
/* Pad with zeros until len is a multiple of align. */
void bld_align(struct bld_buf *b, size_t align);
/* s, its NUL and zero padding: field_len bytes in all (field_len is
 * rounded up so that it holds the NUL; 0 means strlen + 1 rounded to 8). */
void bld_str(struct bld_buf *b, const char *s, size_t field_len);
/* perf_header_string: u32 len, then s padded to 64 (NAME_ALIGN). */
void bld_header_string(struct bld_buf *b, const char *s);

void bld_put_u16(struct bld_buf *b, size_t pos, uint16_t v);
void bld_put_u32(struct bld_buf *b, size_t pos, uint32_t v);
void bld_put_u64(struct bld_buf *b, size_t pos, uint64_t v);
uint64_t bld_get_u64(const struct bld_buf *b, size_t pos);

/* Byte-order helpers for expected values. */
uint64_t bld_bitfield_be(uint64_t flags_host);

/* ---- records --------------------------------------------------------- */

/* Start a record: writes the 8-byte header with size 0 and returns the
 * position of the record in b. */
size_t bld_rec_begin(struct bld_buf *b, uint32_t type, uint16_t misc);
/* Patch the record's size to cover everything written since begin. */
void bld_rec_end(struct bld_buf *b, size_t start);
/* Overwrite a record's size field (for damaged records). */
void bld_rec_set_size(struct bld_buf *b, size_t start, uint16_t size);

/* perf_event_attr, host values. size is attr.size as stored. */
struct bld_attr {
	uint32_t type;
	uint32_t size;
	uint64_t config;
	uint64_t sample_period;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags; /* the bitfield word, little-endian bit order */
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
	uint8_t tail_fill; /* byte written past offset 136 for sizes > 136 */

	const uint64_t *ids; /* ids section / HEADER_ATTR ids */
	size_t nr_ids;
};

/* Offsets of the perf_event_attr fields. */
#define BLD_ATTR_SIZE_KNOWN 136

/* Write attr->size bytes (64 when size is 0) of the attr image. */
void bld_attr_bytes(struct bld_buf *b, const struct bld_attr *attr);
/* The attr fields as a reader of an attr of this size sees them: fields
 * that do not fit in attr->size are zero. */
struct bld_attr bld_attr_visible(const struct bld_attr *attr);

/* The sample_id trailer of non-sample records. */
struct bld_sid {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu, res;
};
void bld_sample_id(struct bld_buf *b, uint64_t sample_type, const struct bld_sid *sid);
/* Bytes of the trailer for this sample_type. */
size_t bld_sample_id_size(uint64_t sample_type);

struct bld_read_value {
	uint64_t value, id, lost;
};

struct bld_branch {
	uint64_t from, to, flags;
};

/* Every field of a PERF_RECORD_SAMPLE; which ones are written depends on
 * the attr's sample_type, read_format, branch_sample_type and regs masks. */
struct bld_sample {
	uint64_t identifier;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu, cpu_res;
	uint64_t period;
	/* READ */
	uint64_t time_enabled, time_running;
	uint64_t read_nr; /* entries written (1 unless GROUP) */
	uint64_t read_nr_field; /* GROUP: the nr field; 0 means read_nr */
	const struct bld_read_value *read_values;
	/* CALLCHAIN */
	uint64_t callchain_nr; /* entries written */
	uint64_t callchain_nr_field; /* 0 means callchain_nr */
	const uint64_t *callchain;
	/* RAW: raw_size is the u32 size field; raw_len bytes are written
	 * (raw_len 0 means raw_size) */
	uint32_t raw_size;
	size_t raw_len;
	const uint8_t *raw;
	/* BRANCH_STACK */
	uint64_t branch_nr;
	uint64_t branch_nr_field; /* 0 means branch_nr */
	uint64_t branch_hw_idx; /* written when branch_sample_type has HW_INDEX */
	const struct bld_branch *branches;
	/* REGS_USER: abi, then one value per written register */
	uint64_t regs_user_abi;
	size_t regs_user_nr; /* values written; SIZE_MAX means popcount(mask) */
	const uint64_t *regs_user;
	/* STACK_USER: size field, bytes written (stack_len, 0 means size),
	 * dyn_size written when size != 0 */
	uint64_t stack_size;
	size_t stack_len;
	const uint8_t *stack;
	uint64_t stack_dyn_size;
	uint64_t weight; /* WEIGHT, or WEIGHT_STRUCT as one u64 */
	uint64_t data_src;
	uint64_t transaction;
	uint64_t regs_intr_abi;
	size_t regs_intr_nr; /* SIZE_MAX means popcount(mask) */
	const uint64_t *regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const uint8_t *aux;
};

/* A bld_sample with every count at its "unset" value. */
struct bld_sample bld_sample_empty(void);
/* Append a PERF_RECORD_SAMPLE; returns its position in b. */
size_t bld_sample(struct bld_buf *b, const struct bld_attr *attr, uint16_t misc,
                  const struct bld_sample *s);

/* ---- file mode --------------------------------------------------------- */

#define BLD_MAX_ATTRS 8
#define BLD_NR_FEATURES 256

struct bld_file {
	bool be;
	size_t nr_attrs;
	struct bld_attr attrs[BLD_MAX_ATTRS];
	/* attr_size in the header; 0 means the first attr's size + 16 */
	uint64_t attr_size;
	struct bld_buf data; /* the data section's records */
	bool has_feature[BLD_NR_FEATURES];
	struct bld_buf features[BLD_NR_FEATURES];
};

/* Where bld_file_assemble() put things. */
struct bld_layout {
	uint64_t attrs_offset, attrs_size;
	uint64_t ids_offset[BLD_MAX_ATTRS];
	uint64_t data_offset, data_size;
	uint64_t features_offset; /* the {offset,size} table */
	uint64_t feature_offset[BLD_NR_FEATURES];
	uint64_t total;
};

/* Header field positions. */
#define BLD_HDR_MAGIC 0
#define BLD_HDR_SIZE 8
#define BLD_HDR_ATTR_SIZE 16
#define BLD_HDR_ATTRS 24
#define BLD_HDR_DATA 40
#define BLD_HDR_EVENT_TYPES 56
#define BLD_HDR_FEATURES 72
#define BLD_FILE_HEADER_SIZE 104
#define BLD_PIPE_HEADER_SIZE 16

void bld_file_init(struct bld_file *f, bool be);
void bld_file_free(struct bld_file *f);
/* Copies attr (the ids array must outlive the file). */
void bld_file_add_attr(struct bld_file *f, const struct bld_attr *attr);
/* The buffer of a feature section (created empty on first use). */
struct bld_buf *bld_file_feature(struct bld_file *f, unsigned bit);
/* Offset the data section will have, once all attrs are added. */
uint64_t bld_file_data_offset(const struct bld_file *f);
void bld_file_assemble(const struct bld_file *f, struct bld_buf *out, struct bld_layout *layout);

/* ---- pipe mode ---------------------------------------------------------- */

/* The pipe header (magic, size 16) in b's byte order. */
void bld_pipe_header(struct bld_buf *b);
/* PERF_RECORD_HEADER_ATTR: attr, then its ids. */
size_t bld_pipe_attr(struct bld_buf *b, const struct bld_attr *attr);
/* PERF_RECORD_HEADER_FEATURE: feat_id, then the section bytes, unpadded
 * (as perf writes it). */
size_t bld_pipe_feature(struct bld_buf *b, uint64_t feat_id, const struct bld_buf *data);

/* ---- payloads ------------------------------------------------------------ */

/* A minimal tracing-data blob (version 0.6) describing one tracepoint,
 * "pystitch:probe" with id trace_id, in b's byte order. */
void bld_tracing_data(struct bld_buf *b, uint32_t trace_id);

/* Compress src as one zstd stream, the way perf record -z does, into
 * COMPRESSED records appended to out: the input is cut at cuts[] (offsets
 * into src, increasing) and each chunk is flushed into its own record.
 * rec_pos[] (nr_cuts + 1 entries, may be NULL) receives each record's
 * position in out. */
void bld_compressed(struct bld_buf *out, const uint8_t *src, size_t len, const size_t *cuts,
                    size_t nr_cuts, size_t *rec_pos);
/* The same with records of type (81 COMPRESSED, 83 COMPRESSED2: with its
 * data size and padding to 8 bytes). */
void bld_compressed_type(struct bld_buf *out, uint32_t type, const uint8_t *src, size_t len,
                         const size_t *cuts, size_t nr_cuts, size_t *rec_pos);

/* ---- handing images to the reader -------------------------------------- */

/* Write b to a new temporary file; returns its malloc'ed path. */
char *bld_write_temp(const struct bld_buf *b);
/* A memfd holding b, positioned at 0. */
int bld_memfd(const struct bld_buf *b);
/* A pipe whose read end returns b, written by a child process; *writer is
 * its pid (reap with bld_pipe_reap). */
int bld_pipe(const struct bld_buf *b, pid_t *writer);
void bld_pipe_reap(pid_t writer);

#endif /* PS_TEST_BUILDER_H */
