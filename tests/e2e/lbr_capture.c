/* lbr_capture: writes the synthetic LBR capture of lbr_capture.h and the
 * kallsyms its kernel addresses belong to. The addresses of deep's
 * functions and call sites come as NAME=HEX arguments (script_lbr.sh reads
 * them from objdump): FUNCTION for a function's start, CALLER>CALLEE for
 * the call site of CALLEE in CALLER, and text_vaddr, text_offset and
 * text_size for the executable segment.
 *
 *   lbr_capture CAPTURE KALLSYMS PROGRAM NAME=HEX...
 *
 * With --branches first, the capture of perf record -b instead, which
 * also maps a library: lib=PATH, and lib_text_vaddr, lib_text_offset,
 * lib_text_size, psw_norm and psw_checksum among the NAME=HEX.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbr_capture.h"

static int argc_left;
static char **argv_left;

static const char *word(const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < argc_left; i++)
		if (strncmp(argv_left[i], name, len) == 0 && argv_left[i][len] == '=')
			return argv_left[i] + len + 1;
	fprintf(stderr, "lbr_capture: no %s\n", name);
	exit(1);
}

static uint64_t address(const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < argc_left; i++)
		if (strncmp(argv_left[i], name, len) == 0 && argv_left[i][len] == '=')
			return strtoull(argv_left[i] + len + 1, NULL, 16);
	fprintf(stderr, "lbr_capture: no address for %s\n", name);
	exit(1);
}

int main(int argc, char **argv)
{
	struct lbr_program prog;
	struct bld_file file;
	struct bld_buf image;
	bool branches = argc > 1 && strcmp(argv[1], "--branches") == 0;
	FILE *out;

	if (branches) {
		argc--;
		argv++;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: lbr_capture CAPTURE KALLSYMS PROGRAM NAME=HEX...\n");
		return 2;
	}
	argc_left = argc - 4;
	argv_left = argv + 4;
	prog = (struct lbr_program){
		.path = argv[3],
		.text_vaddr = address("text_vaddr"),
		.text_offset = address("text_offset"),
		.text_size = address("text_size"),
		.run = address("run"),
		.even = address("descend_even"),
		.odd = address("descend_odd"),
		.bottom = address("bottom"),
		.main_calls_run = address("main>run"),
		.run_calls_even = address("run>descend_even"),
		.even_calls_odd = address("descend_even>descend_odd"),
		.odd_calls_even = address("descend_odd>descend_even"),
		.even_calls_bottom = address("descend_even>bottom"),
		.odd_calls_bottom = address("descend_odd>bottom"),
	};
	if (branches) {
		struct lbr_library lib = {
			.path = word("lib"),
			.text_vaddr = address("lib_text_vaddr"),
			.text_offset = address("lib_text_offset"),
			.text_size = address("lib_text_size"),
			.norm = address("psw_norm"),
			.checksum = address("psw_checksum"),
		};

		lbr_build_branch_capture(&file, &prog, &lib);
	} else {
		lbr_build_capture(&file, &prog);
	}
	bld_buf_init(&image, false);
	bld_file_assemble(&file, &image, NULL);
	out = fopen(argv[1], "wb");
	if (!out || fwrite(image.data, 1, image.len, out) != image.len || fclose(out)) {
		perror(argv[1]);
		return 1;
	}
	out = fopen(argv[2], "w");
	if (!out || fputs(lbr_kallsyms, out) < 0 || fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	bld_buf_free(&image);
	bld_file_free(&file);
	return 0;
}
