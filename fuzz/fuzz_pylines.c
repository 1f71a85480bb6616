/* libFuzzer target for pystitch_perf's side file (perf-PID.pylines): every
 * input is read as one (src/python/codefile.c), every code object it
 * describes looked up by address, trampoline and name, and its line table
 * decoded at every code unit (src/python/linetable.c). The profiled
 * program writes the file, so it is hostile input like the capture.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz_pylines
 * Run:   fuzz/fuzz_pylines -max_total_time=60 fuzz/corpus/fuzz_pylines
 */
#include <stddef.h>
#include <stdint.h>

#include "python/python_priv.h"

#define MAX_UNITS 4096 /* code units decoded per code object */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ps_py_codes *codes = NULL;
	const struct ps_py_code *found[4];

	if (ps_py_codes_parse("fuzz.pylines", data, size, &codes) == 0) {
		for (size_t i = 0; i < ps_py_codes_count(codes); i++) {
			const struct ps_py_code *code = ps_py_codes_at(codes, i);
			uint64_t time = code->created;

			ps_py_codes_find(codes, code->bytecode + code->bytecode_size / 2, time,
			                 1000, found, 4);
			ps_py_codes_by_trampoline(codes, code->trampoline, time, 1000);
			ps_py_codes_by_name(codes, code->name, code->name_size, code->file,
			                    code->file_size, time, 1000, found, 4);
			for (uint64_t unit = 0; unit < MAX_UNITS && unit * 2 < code->bytecode_size;
			     unit++) {
				int32_t line;

				ps_py_line_at(code->format, code->table, code->table_size,
				              code->first_line, unit * 2, &line);
			}
		}
	}
	ps_py_codes_free(codes);
	return 0;
}
