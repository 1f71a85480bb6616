/* libFuzzer target for pystitch's line-oriented text formats, each read
 * from a file a capture's user does not control:
 *  - an archive's MANIFEST (ps_manifest_parse);
 *  - a table of symbol answers carried by an archive in place of a debug
 *    file (src/symbols/names.c), every address looked up again;
 *  - kernel symbols as kallsyms text (--kallsyms FILE, or an archive's),
 *    resolved through the symbols module at the addresses of the input's
 *    first lines and around them; and as perf record's copy of the
 *    kernel's own lines, whose index must answer as the table does.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz_text
 * Run:   fuzz/run.sh 60 fuzz_text
 */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

#include "base/message.h"
#include "archive/archive.h"
#include "archive/archive_priv.h"
#include "symbols/symbols.h"
#include "symbols/symbols_priv.h"

#define MAX_ADDRS 8
#define MAX_FRAMES 8

static void manifest(const uint8_t *data, size_t size)
{
	struct ps_archive_limits limits = { .max_entry = 1 << 20, .max_total = 4 << 20 };
	struct ps_manifest m = { 0 };
	char err[PS_MSG_MAX];

	ps_manifest_parse((const char *)data, size, &limits, &m, err, sizeof(err));
	ps_manifest_release(&m);
}

static void names(const char *path)
{
	struct ps_names *table = NULL;
	char err[512];

	if (!ps_names_detect(path) || ps_names_load("fuzz", path, &table, err, sizeof(err)))
		return;
	for (size_t i = 0; i < ps_names_count(table); i++) {
		const struct ps_names_entry *entry = ps_names_entry_at(table, i);
		ps_names_find(table, entry->addr);
		ps_names_find(table, entry->addr + 1);
	}
	ps_names_free(table);
}

/* The hex address that starts each of the first lines. */
static size_t line_addresses(const uint8_t *data, size_t size, uint64_t *addrs)
{
	size_t nr = 0;
	char line[32];

	for (size_t at = 0; at < size && nr < MAX_ADDRS;) {
		size_t len = 0;
		while (at + len < size && data[at + len] != '\n' && len < sizeof(line) - 1)
			len++;
		memcpy(line, data + at, len);
		line[len] = 0;
		addrs[nr++] = strtoull(line, NULL, 16);
		while (at < size && data[at] != '\n')
			at++;
		at++;
	}
	return nr;
}

static void kallsyms(const char *path, const uint8_t *data, size_t size)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .kallsyms = path,
		                        .buildid_dir = "/nonexistent/pystitch-fuzz" };
	struct ps_symbols *symbols = NULL;
	struct ps_frame_name frames[MAX_FRAMES];
	uint64_t addrs[MAX_ADDRS];
	size_t nr = line_addresses(data, size, addrs);
	struct ps_dso *kernel, *module;

	if (ps_symbols_new(&opts, &symbols))
		return;
	kernel = ps_symbols_dso(symbols, "[kernel.kallsyms]", NULL, 0);
	module = ps_symbols_dso(symbols, "[fuzz]", NULL, 0);
	/* a capture from another boot: every symbol moves */
	if (nr)
		ps_symbols_kernel_reloc(symbols, "_text", addrs[0] + 0x200000);
	for (size_t i = 0; i < nr && kernel && module; i++) {
		ps_dso_resolve(kernel, addrs[i] + 0x200000, false, frames, MAX_FRAMES);
		ps_dso_resolve(kernel, addrs[i] + 0x200010, false, frames, MAX_FRAMES);
		ps_dso_resolve(module, addrs[i] + 0x200004, false, frames, MAX_FRAMES);
	}
	ps_symbols_free(symbols);
}

/* The kernel's own lines as perf record's copy gives them
 * (kallsyms_index.c): every answer of the index must be the table's. */
static void kallsyms_core(const char *path, const uint8_t *data, size_t size)
{
	struct ps_kernel_load_result result;
	struct ps_kernel_symbols *lazy = NULL, *table = NULL;
	uint64_t addrs[MAX_ADDRS];
	size_t nr = line_addresses(data, size, addrs);

	if (ps_kernel_symbols_read_core(path, &lazy, &result) == 0 && !memchr(data, '\t', size) &&
	    ps_kernel_symbols_read_kallsyms(path, NULL, &table, &result) == 0) {
		for (size_t i = 0; i < nr; i++)
			for (uint64_t delta = 0; delta < 0x20; delta += 4) {
				uint64_t at_a, at_b;
				const struct ps_sym *a = ps_kernel_symbols_find(
				        table, NULL, addrs[i] + delta, &at_a);
				const struct ps_sym *b =
				        ps_kernel_symbols_find(lazy, NULL, addrs[i] + delta, &at_b);

				if (!a != !b || (a && (strcmp(a->name, b->name) != 0 ||
				                       a->start != b->start || a->end != b->end)))
					abort();
			}
		if (nr && ps_kernel_symbols_reloc(table, "_text", addrs[0]) !=
		                  ps_kernel_symbols_reloc(lazy, "_text", addrs[0]))
			abort();
	}
	ps_kernel_symbols_free(lazy);
	ps_kernel_symbols_free(table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	manifest(data, size);
	names(path);
	kallsyms(path, data, size);
	kallsyms_core(path, data, size);
	close(fd);
	return 0;
}
