/* pystitch archives: one file holding a capture and every file needed to
 * analyse it elsewhere. A zstd-compressed pax tar written and read through
 * libarchive. The first member, MANIFEST, is a text file listing every
 * other file: its kind, size, SHA-256 and the path the session looked it
 * up under; the other members are named by their SHA-256 (one member per
 * distinct content). Reading trusts nothing in the archive: names become
 * file names only as validated hex digests, inside a private directory.
 *  - manifest.c: the manifest's text format (parse, validate, write);
 *  - extract.c: checking and unpacking an archive, and looking paths up;
 *  - write.c: writing one.
 * This is the module's interface to the others; what its files share is in
 * archive_priv.h.
 */
#ifndef PS_ARCHIVE_ARCHIVE_H
#define PS_ARCHIVE_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pystitch/pystitch.h"

/* 2 added the "names" kind */
#define PS_ARCHIVE_FORMAT_VERSION 3
#define PS_ARCHIVE_MANIFEST_NAME "MANIFEST"
#define PS_ARCHIVE_SHA256_SIZE 32

/* Default limits when reading an archive. */
#define PS_ARCHIVE_MAX_ENTRY (4ULL << 30)
#define PS_ARCHIVE_MAX_TOTAL (32ULL << 30)
#define PS_ARCHIVE_MAX_FILES 100000u

enum ps_archive_kind {
	PS_ARCHIVE_PERF_DATA = 0,
	PS_ARCHIVE_ELF,
	PS_ARCHIVE_DEBUGINFO,
	PS_ARCHIVE_KALLSYMS,
	PS_ARCHIVE_VMLINUX,
	PS_ARCHIVE_PERF_MAP,
	PS_ARCHIVE_JITDUMP,
	/* the symbol answers of a debug file left out, under its path
	 * (src/symbols/names.c) */
	PS_ARCHIVE_NAMES,
	PS_ARCHIVE_KIND_COUNT
};

struct ps_archive_file {
	enum ps_archive_kind kind;
	uint64_t size;
	uint8_t sha256[PS_ARCHIVE_SHA256_SIZE];
	char *path; /* where the session looked it up */
};

/* What the session was opened with when the archive was written; reading
 * opens the session the same way, on the archived files only. */
struct ps_manifest {
	int64_t perf_data_mtime;
	char *perf_data_path; /* the capture's path as given (its directory
	                       * is searched for perf maps) */
	char *symfs, *buildid_dir, *perf_map_dir; /* NULL: not given */
	struct ps_archive_file *files;
	size_t nr_files, cap_files;
};

struct ps_archive_limits {
	uint64_t max_entry; /* bytes of one file; 0: PS_ARCHIVE_MAX_ENTRY */
	uint64_t max_total; /* bytes of all files; 0: PS_ARCHIVE_MAX_TOTAL */
};

/* "elf", "perf-map", ...; NULL for an unknown kind. */
const char *ps_archive_kind_name(enum ps_archive_kind kind);
void ps_manifest_release(struct ps_manifest *manifest);
/* Append a file (path copied; size and digest filled in later). 0 or
 * -ENOMEM. */
int ps_manifest_add(struct ps_manifest *manifest, enum ps_archive_kind kind, const char *path);
/* The capture was a folder: its first perf.data entry is not the
 * perf-data-path itself but PATH/data. */
bool ps_manifest_is_folder(const struct ps_manifest *manifest);

/* ---- reading ------------------------------------------------------- */

struct ps_archive;

/* Whether the file at fd starts like an archive (a zstd frame). Reads
 * with pread, so fd's offset is unchanged. */
bool ps_archive_detect(int fd);
/* Check and unpack the archive at path into files without names on disk
 * (under $TMPDIR, else /tmp). 0, or a negative errno with a one-line
 * message naming the archive, the entry and what was wrong in err; on
 * failure nothing is left behind. limits may be NULL. */
int ps_archive_open(const char *path, const struct ps_archive_limits *limits,
                    struct ps_archive **out, char *err, size_t errsz);
/* The same, reading the archive from fd (from its start; fd stays the
 * caller's), so that what is unpacked is the very file that was checked
 * with ps_archive_detect(); path only names it in messages. */
int ps_archive_open_fd(int fd, const char *path, const struct ps_archive_limits *limits,
                       struct ps_archive **out, char *err, size_t errsz);
/* Remove the unpacked files and the directory. NULL is a no-op. */
void ps_archive_close(struct ps_archive *archive);
const struct ps_manifest *ps_archive_manifest(const struct ps_archive *archive);
/* The unpacked perf.data (a folder's header file PATH/data). */
const char *ps_archive_perf_data(const struct ps_archive *archive);
/* The capture was a folder (perf record --threads, --kcore): its files
 * are the perf.data entries, PATH/data first, then the data.N files in the
 * order they were read where it was packed. */
bool ps_archive_perf_data_is_folder(const struct ps_archive *archive);
/* The unpacked copy of what the session found at path, or NULL when the
 * archive has none (the path did not exist for the session). Fits
 * ps_file_hooks.resolve (ctx is the archive). */
const char *ps_archive_resolve(void *archive, const char *path);
/* The path the index-th archived file was looked up at, NULL past the
 * last (a ps_file_hooks list function). */
const char *ps_archive_path_at(void *archive, size_t index);
/* The kernel symbols file and its kind (KALLSYMS or VMLINUX), or NULL. */
const char *ps_archive_kernel(const struct ps_archive *archive, enum ps_archive_kind *kind);

/* ---- writing ------------------------------------------------------- */

/* Contents kept in memory in place of a file (made while archiving). */
struct ps_archive_blob {
	const void *data; /* NULL: read the file */
	size_t size;
};

/* The file opened for reading without blocking (a FIFO put at a recorded
 * path is not waited on), when it is a regular file: the descriptor, or
 * -errno (-EINVAL: not a regular file). */
int ps_archive_open_regular(const char *file);
/* Write manifest's files to out_path: files[i] is where the contents of
 * manifest->files[i] are read from, unless blobs (may be NULL) gives them
 * in blobs[i] (files[i] then names them in messages). Fills in sizes and
 * digests, stores each distinct content once, and fails (removing
 * out_path) when a file cannot be read or changes while being archived.
 * 0, or a negative errno with a one-line message in err. */
int ps_archive_write(const char *out_path, struct ps_manifest *manifest, const char *const *files,
                     const struct ps_archive_blob *blobs, char *err, size_t errsz);

#endif /* PS_ARCHIVE_ARCHIVE_H */
