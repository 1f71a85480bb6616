/* libFuzzer target for the whole path of `pystitch script`: every input is
 * a byte of options then a perf.data capture, opened as a session in the
 * --python mode the byte's low two bits select (with -F +srcline when bit 2
 * is set; one mode per input keeps a run fast), and every sample's stack is
 * built (hostile registers and stack copies unwound,
 * frames symbolised, Python frames named and merged) and printed as perf
 * script text. The capture's files are looked up under a --symfs tree of
 * the fuzzer's own (fuzz/session/: the programs the seed captures ran, a
 * small kallsyms, the perf maps of their pids), so nothing of this
 * machine's is read and a run is the same everywhere.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz_session
 * Run:   fuzz/run.sh 60 fuzz_session
 */
#include "fuzz_common.h"

#include <stdlib.h>

#include "output/output.h"
#include "pystitch/pystitch.h"

#ifndef FUZZ_SESSION_DIR
#define FUZZ_SESSION_DIR "fuzz/session"
#endif
/* samples per mode: the rest of a long capture adds little */
#define MAX_SAMPLES 64

static const char *session_dir = FUZZ_SESSION_DIR;
static char symfs[4096], kallsyms[4096];

static void run(const char *path, enum ps_python_mode mode, bool srcline)
{
	PS_OPTS(ps_session_opts, opts, .force = true, .symfs = symfs,
	        .buildid_dir = "/nonexistent/pystitch-fuzz", .kallsyms = kallsyms,
	        .srcline = srcline, .python = mode, .perf_map_dir = session_dir);
	struct ps_session *session = NULL;
	const struct ps_stack *stack;
	struct ps_script_format fmt;
	struct ps_strbuf out = PS_STRBUF_INIT;
	char err[256];

	if (ps_session_open(path, &opts, &session) == 0 &&
	    ps_script_format_init(&fmt, ps_session_reader(session), srcline ? "+srcline" : NULL,
	                          true, false, err, sizeof(err)) == 0)
		for (int i = 0; i < MAX_SAMPLES && ps_session_next(session, &stack) > 0; i++) {
			ps_script_print(&out, &fmt, stack);
			ps_strbuf_reset(&out);
		}
	ps_strbuf_release(&out);
	ps_session_close(session);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ps_python_mode modes[] = { PS_PYTHON_MERGED, PS_PYTHON_ALL,
		                                     PS_PYTHON_NATIVE, PS_PYTHON_ONLY };
	char path[64];
	int fd;

	if (size < 1)
		return 0;
	fd = fuzz_input_file(data + 1, size - 1, path, sizeof(path));
	if (fd < 0)
		return 0;
	run(path, modes[data[0] & 3], data[0] & 4);
	close(fd);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("PYSTITCH_FUZZ_SESSION_DIR");

	if (dir && *dir)
		session_dir = dir;
	snprintf(symfs, sizeof(symfs), "%s/root", session_dir);
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", session_dir);
	return 0;
}
