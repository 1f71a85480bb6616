/* libFuzzer target for the perf.data reader: every input is opened in
 * both delivery orders and every decoded record is printed the way
 * `pystitch dump` prints it, with the machine model that gives samples
 * their thread and DSO, so parsing, printing and the model see hostile
 * bytes.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz_reader
 * Run:   fuzz/fuzz_reader -max_total_time=60 fuzz/corpus
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output/output.h"
#include "pystitch/pystitch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(int fd, enum ps_order order, bool force)
{
	struct ps_reader_opts opts = {
		.sz = sizeof(opts), .order = order, .force = force, .max_queue_bytes = 1 << 20
	};
	struct ps_reader *reader = NULL;
	const struct ps_event *event;
	struct ps_strbuf out = PS_STRBUF_INIT;
	/* an empty kallsyms: kernel samples are looked up without reading
	 * this machine's kernel symbols for every input */
	struct ps_model_opts mopts = { .sz = sizeof(mopts), .kallsyms = "/dev/null" };
	struct ps_model *model = NULL;
	struct ps_dump_state state;

	lseek(fd, 0, SEEK_SET);
	ps_dump_state_init(&state);
	if (ps_reader_open_fd(fd, "fuzz", &opts, &reader) == 0) {
		if (ps_model_open(reader, &mopts, &model) == 0)
			state.model = model;
		ps_dump_begin(&out, reader);
		while (ps_reader_next(reader, &event) > 0) {
			if (ps_dump_event(&out, &state, reader, event))
				break;
			ps_strbuf_reset(&out);
		}
		ps_dump_stats(&out, &state, reader);
		ps_info_print(&out, reader, 0, true, true);
	}
	ps_dump_state_release(&state);
	ps_model_close(model);
	ps_strbuf_release(&out);
	ps_reader_close(reader);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		run(fd, PS_ORDER_FILE, false);
		run(fd, PS_ORDER_TIME, true);
	}
	close(fd);
	return 0;
}
