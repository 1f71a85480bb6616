/* libFuzzer target for what CPython processes leave behind: every input is
 * read as a perf map and as a jitdump, every entry is looked up and its
 * .eh_frame (if any) run through the rule decoder, and the input is also
 * decoded as a trampoline template. These are files from the machine the
 * capture came from, so they are hostile input like the capture itself.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz_jit
 * Run:   fuzz/fuzz_jit -max_total_time=60 fuzz/jit-corpus
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "python/python_priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(struct ps_jit_table *table)
{
	size_t n = ps_jit_table_count(table);
	struct ps_jit_symbol sym, found;
	struct ps_unwind_rule rule;

	for (size_t i = 0; i < n; i++) {
		if (!ps_jit_table_at(table, i, &sym))
			continue;
		ps_jit_table_lookup(table, sym.start, &found);
		ps_jit_table_lookup(table, sym.start + sym.size / 2, &found);
		if (sym.eh_frame)
			ps_eh_frame_rule(sym.eh_frame, sym.eh_frame_size, sym.start,
			                 sym.start + sym.size / 2, &rule, NULL, 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ps_jit_limits limits = { .max_entries = 4096,
		                        .max_name_bytes = 1 << 20,
		                        .max_unwind_bytes = 1 << 20 };
	struct ps_trampoline trampoline;
	struct ps_unwind_rule rule;
	struct ps_jit_table *table = NULL;
	char path[64], err[128];
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ps_perf_map_read(path, &limits, &table);
		walk(table);
		ps_jit_table_free(table);
		table = NULL;
		ps_jitdump_read(path, &limits, &table);
		walk(table);
		ps_jit_table_free(table);
		if (ps_trampoline_decode(data, size, &trampoline, err, sizeof(err)) == 0)
			for (uint32_t i = 0; i < trampoline.code_end; i++)
				ps_trampoline_rule_at(&trampoline, i, &rule);
		ps_eh_frame_rule(data, size, 0x1000, 0x1004, &rule, err, sizeof(err));
	}
	close(fd);
	return 0;
}
