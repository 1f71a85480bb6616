/* folded: the folded stacks of a capture (what `pystitch collapse` prints)
 * written to a file through libpystitch's writers.
 *
 * Each sample's stack is counted once per unique stack, weighed by its
 * period; the lines go to OUT (or standard output for "-") through the
 * library's safe output file, which replaces a regular OUT only once it is
 * complete. Only the public API is used.
 *
 *   cc folded.c $(pkg-config --cflags --libs pystitch) -o folded
 *   ./folded perf.data out.folded
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pystitch/pystitch.h>

int main(int argc, char **argv)
{
	struct ps_session_opts session_opts = { .sz = sizeof(session_opts) };
	struct ps_collapse_opts collapse_opts = {
		.sz = sizeof(collapse_opts),
		.per = PS_COLLAPSE_PER_COMM,
		.period = true,
	};
	struct ps_session *session = NULL;
	struct ps_collapse *collapse = NULL;
	struct ps_output_file *out = NULL;
	const struct ps_stack *stack;
	int64_t lines;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: folded CAPTURE OUT\n");
		return 2;
	}
	err = ps_session_open(argv[1], &session_opts, &session);
	if (err) {
		fprintf(stderr, "folded: %s\n", ps_session_errmsg(session));
		ps_session_close(session);
		return 1;
	}
	/* open the output before the capture is read, so a bad name fails
	 * at once */
	err = strcmp(argv[2], "-") == 0 ? ps_output_file_open_fd(STDOUT_FILENO, &out)
	                                : ps_output_file_open(argv[2], &out);
	if (!err)
		err = ps_collapse_open(&collapse_opts, &collapse);
	if (err) {
		fprintf(stderr, "folded: %s: %s\n", argv[2], strerror(-err));
		goto fail;
	}
	while ((err = ps_session_next(session, &stack)) > 0)
		if ((err = ps_collapse_add(collapse, stack)) < 0)
			break;
	if (err < 0) {
		fprintf(stderr, "folded: %s\n",
		        *ps_session_errmsg(session) ? ps_session_errmsg(session) : strerror(-err));
		goto fail;
	}
	/* ps_output_file_write is a write callback: the writer hands it the
	 * text in large blocks */
	lines = ps_collapse_write(collapse, ps_output_file_write, out);
	if (lines < 0) {
		fprintf(stderr, "folded: %s: %s\n", argv[2], strerror((int)-lines));
		goto fail;
	}
	/* commit frees the handle, whatever it returns */
	err = ps_output_file_commit(out);
	out = NULL;
	if (err) {
		fprintf(stderr, "folded: %s: %s\n", argv[2], strerror(-err));
		goto fail;
	}
	fprintf(stderr, "folded: %lld stacks\n", (long long)lines);
	ps_collapse_close(collapse);
	ps_session_close(session);
	return 0;
fail:
	ps_output_file_abort(out);
	ps_collapse_close(collapse);
	ps_session_close(session);
	return 1;
}
