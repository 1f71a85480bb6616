/* libFuzzer target for pystitch archives: every input is an archive file
 * (a zstd-compressed tar whose MANIFEST lists the other members), checked
 * and unpacked with small limits; each file the manifest lists is looked up
 * as the session looks it up, tables of symbol answers are read, and an
 * archive that unpacks is opened once more by the reader, as `pystitch -i
 * ARCHIVE` opens it, and its capture read. Unpacked files live under
 * $TMPDIR (else /tmp), without names.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz_archive
 * Run:   fuzz/run.sh 60 fuzz_archive
 */
#include "fuzz_common.h"

#include <string.h>

#include "base/message.h"
#include "archive/archive.h"
#include "pystitch/pystitch.h"
#include "symbols/symbols_priv.h"

/* records read from an archived capture: its parsing is fuzz_reader's */
#define MAX_EVENTS 256

static void read_capture(const char *path)
{
	PS_OPTS(ps_reader_opts, opts, .order = PS_ORDER_TIME);
	struct ps_reader *reader = NULL;
	const struct ps_event *event;

	if (ps_reader_open(path, &opts, &reader) == 0)
		for (int i = 0; i < MAX_EVENTS && ps_reader_next(reader, &event) > 0; i++)
			;
	ps_reader_close(reader);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the default limits are GiBs: a small input must not unpack into
	 * a disk's worth of files */
	struct ps_archive_limits limits = { .max_entry = 1 << 20, .max_total = 4 << 20 };
	struct ps_archive *archive = NULL;
	const struct ps_manifest *manifest;
	char path[64], err[PS_MSG_MAX];
	int fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	if (ps_archive_detect(fd) &&
	    ps_archive_open_fd(fd, path, &limits, &archive, err, sizeof(err)) == 0) {
		manifest = ps_archive_manifest(archive);
		for (size_t i = 0; i < manifest->nr_files; i++) {
			const struct ps_archive_file *file = &manifest->files[i];
			const char *local = ps_archive_resolve(archive, file->path);
			struct ps_names *names = NULL;

			if (local && file->kind == PS_ARCHIVE_NAMES &&
			    ps_names_load(file->path, local, &names, err, sizeof(err)) == 0)
				ps_names_free(names);
		}
		enum ps_archive_kind kind;
		ps_archive_resolve(archive, "/nonexistent");
		ps_archive_kernel(archive, &kind);
		ps_archive_close(archive);
		/* within the limits above: the reader's own unpacking */
		read_capture(path);
	}
	close(fd);
	return 0;
}
