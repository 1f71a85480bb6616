/* kallsyms text, line by line, as perf reads it with fgets(): for
 * kallsyms.c's table and kallsyms_index.c's index of perf record's copy.
 *
 * /proc/kallsyms is read in large blocks: stdio reads it a kilobyte at a
 * time (the st_blksize of procfs), and each read makes the kernel find
 * its place in the symbol list again. The lines come out as fgets() with
 * a PS_KALLSYMS_LINE_MAX buffer cuts them, so damaged input (over-long
 * lines, NUL bytes) is handled as it always was. */
#include "symbols/symbols_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_BLOCK (1u << 20)

int ps_kallsyms_reader_open(struct ps_kallsyms_reader *lr, int fd)
{
	*lr = (struct ps_kallsyms_reader){ .fd = fd, .buf = malloc(READ_BLOCK) };
	return lr->buf ? 0 : -ENOMEM;
}

void ps_kallsyms_reader_close(struct ps_kallsyms_reader *lr)
{
	free(lr->buf);
	close(lr->fd);
}

uint64_t ps_kallsyms_reader_offset(const struct ps_kallsyms_reader *lr)
{
	return lr->base + lr->head;
}

/* Bytes buffered from head on: at least want unless the input ends. */
static size_t reader_fill(struct ps_kallsyms_reader *lr, size_t want)
{
	if (lr->tail - lr->head >= want || lr->eof)
		return lr->tail - lr->head;
	memmove(lr->buf, lr->buf + lr->head, lr->tail - lr->head);
	lr->base += lr->head;
	lr->tail -= lr->head;
	lr->head = 0;
	while (!lr->eof && lr->tail < want) {
		ssize_t n = read(lr->fd, lr->buf + lr->tail, READ_BLOCK - lr->tail);

		if (n < 0 && errno == EINTR)
			continue;
		/* a read error ends the input, as it ends fgets() */
		if (n <= 0)
			lr->eof = true;
		else
			lr->tail += (size_t)n;
	}
	return lr->tail - lr->head;
}

/* What fgets(line, PS_KALLSYMS_LINE_MAX, f) stores: up to
 * PS_KALLSYMS_LINE_MAX - 1 bytes, through the first newline. False at
 * the end of the input. */
static bool reader_chunk(struct ps_kallsyms_reader *lr, char line[PS_KALLSYMS_LINE_MAX])
{
	size_t have = reader_fill(lr, PS_KALLSYMS_LINE_MAX - 1), take;
	const char *newline;

	if (have == 0)
		return false;
	take = have < PS_KALLSYMS_LINE_MAX - 1 ? have : PS_KALLSYMS_LINE_MAX - 1;
	newline = memchr(lr->buf + lr->head, '\n', take);
	if (newline)
		take = (size_t)(newline - (lr->buf + lr->head)) + 1;
	memcpy(line, lr->buf + lr->head, take);
	line[take] = 0;
	lr->head += take;
	return true;
}

/* The rest of an over-long line, through its newline. */
static void reader_skip_line(struct ps_kallsyms_reader *lr)
{
	for (;;) {
		size_t have = reader_fill(lr, 1);
		const char *newline;

		if (have == 0)
			return;
		newline = memchr(lr->buf + lr->head, '\n', have);
		if (newline) {
			lr->head = (size_t)(newline - lr->buf) + 1;
			return;
		}
		lr->head = lr->tail;
	}
}

enum ps_kallsyms_line ps_kallsyms_next_line(struct ps_kallsyms_reader *lr,
                                            char copy[PS_KALLSYMS_LINE_MAX], const char **line,
                                            size_t *len)
{
	size_t have = reader_fill(lr, PS_KALLSYMS_LINE_MAX - 1);
	size_t take = have < PS_KALLSYMS_LINE_MAX - 1 ? have : PS_KALLSYMS_LINE_MAX - 1;
	const char *start = lr->buf + lr->head;
	const char *newline = take ? memchr(start, '\n', take) : NULL;

	if (newline && !memchr(start, 0, (size_t)(newline - start))) {
		*line = start;
		*len = (size_t)(newline - start);
		lr->head += *len + 1;
		return PS_KALLSYMS_LINE;
	}
	if (!reader_chunk(lr, copy))
		return PS_KALLSYMS_END;
	*len = strlen(copy);
	if (*len == PS_KALLSYMS_LINE_MAX - 1 && copy[*len - 1] != '\n') {
		reader_skip_line(lr);
		return PS_KALLSYMS_OVER_LONG;
	}
	if (*len && copy[*len - 1] == '\n')
		copy[--*len] = 0;
	*line = copy;
	return PS_KALLSYMS_LINE;
}
