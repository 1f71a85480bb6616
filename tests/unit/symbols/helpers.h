/* Shared plumbing of the symbols tests: the fixture ELF built from
 * fixture.c once per run, temporary directories, reading expected values
 * straight from the fixture's .symtab, and a log callback that records. */
#ifndef PS_TEST_SYMBOLS_HELPERS_H
#define PS_TEST_SYMBOLS_HELPERS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symbols.h"

struct fixture {
	char dir[256]; /* temporary directory of this run */
	char so[512]; /* the fixture, unstripped, with DWARF */
	char stripped[512]; /* the same, stripped (.dynsym only) */
	char debug[512]; /* objcopy --only-keep-debug of it */
	uint8_t build_id[20];
	size_t build_id_size;
	bool ok;
	char why[512]; /* what failed when !ok */
};

/* Built by main() before the suites run (the forked tests share it). */
extern struct fixture fixture;

bool fixture_build(struct fixture *f);
void fixture_remove(struct fixture *f);

/* The file offset of a .symtab symbol of the fixture (st_value moved by
 * its PT_LOAD), as perf converts it; UINT64_MAX when missing. */
uint64_t fixture_symbol(const char *name, uint64_t *size);
/* File offset and size of a section of path. */
bool elf_section(const char *path, const char *name, uint64_t *offset, uint64_t *size,
                 uint64_t *entsize);

/* snprintf that fails the test (or the fixture build) on truncation. */
void fmt(char *buf, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* A fresh directory under the run's directory. */
void make_dir(char *out, size_t size, const char *name);
void copy_file(const char *from, const char *to);
void write_file(const char *path, const char *text);

/* The log callback records here. */
struct log_capture {
	int warnings;
	char last[1024];
	char all[8192];
};

void capture_log(void *ctx, enum ps_log_level level, const char *msg);

/* The frame of ps_dso_resolve without inline frames (perf's symbol). */
struct ps_frame_name resolve_plain(struct ps_dso *dso, uint64_t addr);

Suite *suite_symtab(void);
Suite *suite_lookup(void);
Suite *suite_inline(void);
Suite *suite_addr2line(void);
Suite *suite_die_walk(void);
Suite *suite_inflate(void);
Suite *suite_names(void);
Suite *suite_damage(void);
Suite *suite_kallsyms(void);
Suite *suite_kernel_source(void);
Suite *suite_source(void);
Suite *suite_variables(void);

#endif /* PS_TEST_SYMBOLS_HELPERS_H */
