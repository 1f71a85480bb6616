/* A progress line on stderr for long runs: bytes read, samples per second
 * and time left. It appears only when stderr is a terminal that is not
 * also where the output goes (nor a pipe, which may be a pager's), and
 * only after the first second, so short runs and redirected runs look
 * exactly as before. It is cut to the terminal's width (a line that wraps
 * cannot be redrawn in place), redrawn at most five times a second, and
 * erased before anything else is printed on stderr and when the run ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PROGRESS_DELAY_NS 1000000000ull /* nothing for runs shorter than this */
/* PYSTITCH_PROGRESS_DELAY_MS overrides the delay (the tests set 0) */
#define PROGRESS_DELAY_ENV "PYSTITCH_PROGRESS_DELAY_MS"
#define PROGRESS_REDRAW_NS 200000000ull
#define PROGRESS_BAR_WIDTH 24

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ps_progress_start(struct ps_progress *p, const char *what, bool quiet, bool output_on_stdout)
{
	*p = (struct ps_progress){ .what = what };
	if (quiet || !isatty(STDERR_FILENO))
		return;
	/* a bar between lines of output on the same terminal would garble
	 * them */
	if (output_on_stdout && isatty(STDOUT_FILENO))
		return;
	/* nor over a pager reading the output from a pipe */
	struct stat st;

	if (output_on_stdout && fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode))
		return;
	const char *env = getenv(PROGRESS_DELAY_ENV);
	uint64_t delay = PROGRESS_DELAY_NS;
	char *end;

	if (env && *env) {
		unsigned long ms = strtoul(env, &end, 10);

		if (*end == '\0' && ms < 86400000ul)
			delay = (uint64_t)ms * 1000000ull;
	}
	p->enabled = true;
	p->start_ns = now_ns();
	p->next_ns = p->start_ns + delay;
}

static void format_bytes(char *buf, size_t size, uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, size, "%.2f GB", (double)bytes / (1ull << 30));
	else
		snprintf(buf, size, "%.1f MB", (double)bytes / (1ull << 20));
}

/* The terminal's width, or 80 when it cannot be told. */
static unsigned terminal_columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Draw line in place of the last one, cut to the terminal's width. */
static void put_line(struct ps_progress *p, const char *line, size_t len)
{
	/* a line that wraps could not be redrawn in place by '\r' */
	size_t columns = terminal_columns() - 1;

	if (len > columns)
		len = columns;
	fprintf(stderr, "\r%.*s\033[K", (int)len, line);
	fflush(stderr);
	p->shown = true;
}

static void draw(struct ps_progress *p, uint64_t now, uint64_t done, uint64_t total)
{
	double secs = (double)(now - p->start_ns) / 1e9;
	double rate = secs > 0 ? (double)p->items / secs : 0;
	char done_text[32], total_text[32], bar[PROGRESS_BAR_WIDTH + 1], line[256];
	size_t columns = terminal_columns() - 1, len;

	if (total && done > total)
		done = total; /* all of the data section has been read ahead */
	format_bytes(done_text, sizeof(done_text), done);
	if (total) {
		/* left: the bytes still to read at the rate seen so far */
		double left = secs * (double)(total - done) / (double)(done ? done : 1);
		unsigned left_s = (unsigned)(left + 0.999);
		unsigned filled =
		        (unsigned)((double)PROGRESS_BAR_WIDTH * (double)done / (double)total);
		char tail[160];
		int n;

		for (unsigned i = 0; i < PROGRESS_BAR_WIDTH; i++)
			bar[i] = i < filled ? '#' : '.';
		bar[PROGRESS_BAR_WIDTH] = '\0';
		format_bytes(total_text, sizeof(total_text), total);
		n = snprintf(tail, sizeof(tail), "%3u%%  %s of %s  %.0f %s/s  %u:%02u left",
		             (unsigned)(100.0 * (double)done / (double)total), done_text,
		             total_text, rate, p->what, left_s / 60, left_s % 60);
		/* the bar goes first when the terminal is narrow */
		if (n >= 0 && (size_t)n + PROGRESS_BAR_WIDTH + 3 <= columns)
			n = snprintf(line, sizeof(line), "[%s] %s", bar, tail);
		else
			n = snprintf(line, sizeof(line), "%s", tail);
		len = n < 0 ? 0 : (size_t)n;
	} else {
		/* a pipe: how much has gone by is all there is to say */
		int n = snprintf(line, sizeof(line), "%s read  %.0f %s/s  %u:%02u elapsed",
		                 done_text, rate, p->what, (unsigned)secs / 60,
		                 (unsigned)secs % 60);
		len = n < 0 ? 0 : (size_t)n;
	}
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	put_line(p, line, len);
}

void ps_progress_line(struct ps_progress *p, const char *text)
{
	uint64_t now;

	if (!p->enabled)
		return;
	now = now_ns();
	if (now < p->next_ns)
		return;
	p->next_ns = now + PROGRESS_REDRAW_NS;
	put_line(p, text, strlen(text));
}

void ps_progress_tick(struct ps_progress *p, const struct ps_reader *reader)
{
	uint64_t now, done, total;

	if (!p->enabled)
		return;
	p->items++;
	/* the clock is read once every 64 items: cheap, and often enough */
	if (p->items % 64)
		return;
	now = now_ns();
	if (now < p->next_ns)
		return;
	p->next_ns = now + PROGRESS_REDRAW_NS;
	ps_reader_progress(reader, &done, &total);
	draw(p, now, done, total);
}

void ps_progress_clear(struct ps_progress *p)
{
	if (!p->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->shown = false;
}

void ps_progress_end(struct ps_progress *p)
{
	ps_progress_clear(p);
	p->enabled = false;
}
