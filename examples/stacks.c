/* stacks: walk the stitched samples of a capture through libpystitch.
 *
 * For each sample it prints "pid/tid comm: N frames, M Python", then that
 * sample's Python frames, outermost (root) first. Only the public API is used.
 *
 *   cc stacks.c $(pkg-config --cflags --libs pystitch) -o stacks
 *   ./stacks perf.data
 */
#include <stdio.h>
#include <string.h>

#include <pystitch/pystitch.h>

/* The library never prints: warnings, and why an open failed, reach the
 * program through this callback, and the program decides where they go. */
static void log_message(void *ctx, enum ps_log_level level, const char *msg)
{
	(void)ctx;
	if (level == PS_LOG_ERROR)
		fprintf(stderr, "stacks: %s\n", msg);
	else if (level == PS_LOG_WARN)
		fprintf(stderr, "stacks: warning: %s\n", msg);
}

/* The handle's one-line message says what failed and where; the errno value
 * is the fallback when there is none. */
static void report(const struct ps_session *session, int err)
{
	const char *msg = ps_session_errmsg(session);
	fprintf(stderr, "stacks: %s\n", *msg ? msg : strerror(-err));
}

static void print_stack(const struct ps_stack *stack)
{
	const struct ps_sample *sample = &stack->event->u.sample;
	size_t nr_python = 0;

	for (size_t i = 0; i < stack->nr_frames; i++)
		if (stack->frames[i].python)
			nr_python++;
	/* comm is the thread's name at the sample's time; the pointer, like
	 * the frames, stays valid only until the next ps_session_next() */
	printf("%u/%u %s: %zu frames, %zu Python\n", sample->pid, sample->tid,
	       stack->comm ? stack->comm : "[unknown]", stack->nr_frames, nr_python);

	/* frames are stored leaf first: walk backwards to print from the root */
	for (size_t i = stack->nr_frames; i-- > 0;) {
		const struct ps_frame *frame = &stack->frames[i];
		if (frame->python)
			printf("\t%s\n", frame->sym); /* "py::qualname:filename" */
	}
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "perf.data";
	/* Options start with their own size, so that a program built against
	 * this header keeps working with a later library: PS_OPTS() sets it.
	 * Fields left zero take their defaults: all samples, perf's limits,
	 * and Python frames merged in place of the interpreter frames that ran
	 * them. */
	PS_OPTS(ps_session_opts, opts, .python = PS_PYTHON_MERGED, .log = log_message);
	struct ps_session *session;
	const struct ps_stack *stack;
	int err;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [perf.data | -]\n", argv[0]);
		return 2;
	}

	/* On failure there is no handle: the log callback was told why. */
	err = ps_session_open(path, &opts, &session);
	if (err < 0)
		return 1;

	/* 1: a sample, 0: the end of the capture, < 0: a negative errno */
	while ((err = ps_session_next(session, &stack)) > 0)
		print_stack(stack);
	if (err < 0)
		report(session, err);

	ps_session_close(session);
	if (fflush(stdout) != 0) {
		perror("stacks: stdout");
		return 1;
	}
	return err < 0 ? 1 : 0;
}
