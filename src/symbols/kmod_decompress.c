/* Compressed kernel modules (.ko.gz, .ko.xz: the compressions perf 6.1
 * takes a module name in, kmod_path__parse) are decompressed before their
 * symbols or code are read, as perf's dso__decompress_kmodule_fd() does:
 * the compression is the one the module's name ends in, and a candidate
 * file without that compression's magic is read as it is (a module's
 * build-id cache entry may hold it uncompressed). The bytes go to an
 * anonymous memory file, not a temporary file, so nothing is left on disk
 * and a read-only or full /tmp changes nothing.
 *
 * The input is untrusted: its size and the decompressed size are bounded,
 * and a corrupt stream is refused with the file and the input offset where
 * the decoder stopped.
 */
#define _GNU_SOURCE
#include "symbols/dso_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/message.h"

/* far above any module (the largest, with debug information, are a few
 * hundred MiB), far below what would exhaust the machine; and the total
 * of every module one reading decompresses, which stay in memory */
#define KMOD_MAX_SIZE (1ull << 30)
#define KMOD_TOTAL_MAX (4ull << 30)
/* xz's decoder memory: modules use dictionaries of a few MiB */
#define KMOD_XZ_MEMLIMIT (256ull << 20)
#define KMOD_CHUNK 65536

enum ps_kmod_comp ps_kmod_compression(const char *module_path)
{
	if (!module_path)
		return PS_KMOD_PLAIN;
	if (ps_dso_has_suffix(module_path, ".ko.gz"))
		return PS_KMOD_GZIP;
	if (ps_dso_has_suffix(module_path, ".ko.xz"))
		return PS_KMOD_XZ;
	return PS_KMOD_PLAIN;
}

/* perf's gzip_is_compressed() and lzma_is_compressed(): the magic */
static bool has_magic(enum ps_kmod_comp comp, const uint8_t *data, size_t size)
{
	static const uint8_t gz[] = { 0x1f, 0x8b };
	static const uint8_t xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };

	if (comp == PS_KMOD_GZIP)
		return size >= sizeof(gz) && memcmp(data, gz, sizeof(gz)) == 0;
	if (comp == PS_KMOD_XZ)
		return size >= sizeof(xz) && memcmp(data, xz, sizeof(xz)) == 0;
	return false;
}

/* A decoder's output so far: refused past limit, else written out. */
static int emit(const char *path, int out, const uint8_t *buf, size_t n, uint64_t total,
                uint64_t limit, char *err, size_t errsz)
{
	int rc;

	if (total > limit)
		return ps_fail(err, errsz, -EFBIG,
		               "%s: decompresses to more than %llu bytes (modules decompressed are "
		               "kept in memory, at most %llu bytes each, %llu in all)",
		               path, (unsigned long long)limit, KMOD_MAX_SIZE, KMOD_TOTAL_MAX);
	rc = ps_symbols_write_all(out, buf, n);
	return rc < 0 ? ps_fail(err, errsz, rc, "%s: decompressing: %s", path, strerror(-rc)) : 0;
}

static int gunzip(const char *path, const uint8_t *in, size_t size, uint64_t limit, int out,
                  char *err, size_t errsz)
{
	uint8_t buf[KMOD_CHUNK];
	z_stream zs;
	int zrc, rc = 0;

	memset(&zs, 0, sizeof(zs));
	/* 16 + window bits: a gzip header, as perf's gzip_decompress_to_file */
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return ps_fail(err, errsz, -ENOMEM, "%s: cannot start zlib", path);
	zs.next_in = (Bytef *)in;
	do {
		/* zlib's avail_in is 32 bits: feed a large file in parts */
		if (zs.avail_in == 0) {
			size_t left = size - (size_t)((const uint8_t *)zs.next_in - in);
			zs.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
		}
		zs.next_out = buf;
		zs.avail_out = sizeof(buf);
		zrc = inflate(&zs, Z_NO_FLUSH);
		/* input used up before the end: Z_BUF_ERROR, truncated */
		if (zrc != Z_OK && zrc != Z_STREAM_END) {
			rc = ps_fail(err, errsz, -EINVAL, "%s: gzip data bad at offset %zu: %s",
			             path, (size_t)((const uint8_t *)zs.next_in - in),
			             zs.msg ? zs.msg : "truncated");
			break;
		}
		rc = emit(path, out, buf, sizeof(buf) - zs.avail_out, zs.total_out, limit, err,
		          errsz);
		if (rc < 0)
			break;
	} while (zrc != Z_STREAM_END);
	inflateEnd(&zs);
	return rc;
}

static int unxz(const char *path, const uint8_t *in, size_t size, uint64_t limit, int out,
                char *err, size_t errsz)
{
	uint8_t buf[KMOD_CHUNK];
	lzma_stream zs = LZMA_STREAM_INIT;
	lzma_ret lrc;
	int rc = 0;

	/* concatenated streams, as perf's lzma_decompress_to_file */
	if (lzma_stream_decoder(&zs, KMOD_XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return ps_fail(err, errsz, -ENOMEM, "%s: cannot start the xz decoder", path);
	zs.next_in = in;
	zs.avail_in = size;
	do {
		zs.next_out = buf;
		zs.avail_out = sizeof(buf);
		/* all the input is there: finish, so a truncated stream fails */
		lrc = lzma_code(&zs, LZMA_FINISH);
		if (lrc != LZMA_OK && lrc != LZMA_STREAM_END) {
			rc = ps_fail(err, errsz, -EINVAL, "%s: xz data bad at offset %llu: %s",
			             path, (unsigned long long)zs.total_in,
			             lrc == LZMA_MEMLIMIT_ERROR ? "needs too much memory"
			             : lrc == LZMA_FORMAT_ERROR ? "not xz"
			             : lrc == LZMA_BUF_ERROR    ? "truncated"
			                                        : "corrupt");
			break;
		}
		rc = emit(path, out, buf, sizeof(buf) - zs.avail_out, zs.total_out, limit, err,
		          errsz);
		if (rc < 0)
			break;
	} while (lrc != LZMA_STREAM_END);
	lzma_end(&zs);
	return rc;
}

int ps_kmod_decompress(const char *path, const char *file, enum ps_kmod_comp comp, uint64_t *budget,
                       int *fd_out, char *err, size_t errsz)
{
	uint64_t limit = KMOD_TOTAL_MAX - (*budget < KMOD_TOTAL_MAX ? *budget : KMOD_TOTAL_MAX);
	struct stat st;
	void *map;
	int in, out, rc;

	if (limit > KMOD_MAX_SIZE)
		limit = KMOD_MAX_SIZE;

	*fd_out = -1;
	if (comp == PS_KMOD_PLAIN)
		return 0;
	in = open(file, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return ps_fail(err, errsz, -errno, "%s: %s", path, strerror(errno));
	if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return ps_fail(err, errsz, -EINVAL, "%s: not a regular file", path);
	}
	if ((unsigned long long)st.st_size > KMOD_MAX_SIZE) {
		close(in);
		return ps_fail(err, errsz, -EFBIG, "%s: %llu bytes, more than a module can be",
		               path, (unsigned long long)st.st_size);
	}
	if (st.st_size == 0) {
		close(in);
		return 0; /* no magic: read as it is (and refused as not ELF) */
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in, 0);
	close(in);
	if (map == MAP_FAILED)
		return ps_fail(err, errsz, -errno, "%s: %s", path, strerror(errno));
	if (!has_magic(comp, map, (size_t)st.st_size)) {
		munmap(map, (size_t)st.st_size);
		return 0;
	}
	out = memfd_create("pystitch-kmod", MFD_CLOEXEC);
	if (out < 0) {
		rc = ps_fail(err, errsz, -errno, "%s: cannot decompress: %s", path,
		             strerror(errno));
	} else if (comp == PS_KMOD_GZIP) {
		rc = gunzip(path, map, (size_t)st.st_size, limit, out, err, errsz);
	} else {
		rc = unxz(path, map, (size_t)st.st_size, limit, out, err, errsz);
	}
	munmap(map, (size_t)st.st_size);
	if (rc < 0) {
		if (out >= 0)
			close(out);
		return rc;
	}
	if (fstat(out, &st) == 0)
		*budget += (uint64_t)st.st_size;
	*fd_out = out;
	return 0;
}
