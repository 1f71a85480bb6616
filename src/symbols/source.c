/* The text of source files, for perf script -F srccode (util/srccode.c):
 * a line of a file, found as perf finds it. Files are mapped, not read,
 * and kept as perf keeps them: before another file is taken in, the least
 * recently used ones go while more than 64 are kept or more than 32 MiB
 * are mapped. Each file gets an index of the start of every 256th line,
 * so memory stays a small share of the files' size.
 */
#include "symbols/dso_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"

#define MAX_FILES 64
#define MAX_MAPPED (32u << 20)
#define LINES_PER_MARK 256

struct ps_source_file {
	char *path;
	const char *text; /* mapped, size bytes */
	size_t size;
	size_t nr_lines; /* perf's countlines() */
	uint64_t *marks; /* offset of lines 0, 256, 512, ... */
	size_t nr_marks;
	uint64_t used; /* last use, for the least recently used */
};

struct ps_sources {
	struct ps_source_file *files[MAX_FILES + 1];
	size_t nr_files;
	uint64_t mapped, clock;
};

static void file_free(struct ps_source_file *f)
{
	if (!f)
		return;
	if (f->text)
		munmap((void *)f->text, f->size);
	free(f->marks);
	free(f->path);
	free(f);
}

void ps_sources_free(struct ps_sources *sources)
{
	if (!sources)
		return;
	for (size_t i = 0; i < sources->nr_files; i++)
		file_free(sources->files[i]);
	free(sources);
}

static void evict_oldest(struct ps_sources *sources)
{
	size_t oldest = 0;

	for (size_t i = 1; i < sources->nr_files; i++)
		if (sources->files[i]->used < sources->files[oldest]->used)
			oldest = i;
	sources->mapped -= sources->files[oldest]->size;
	file_free(sources->files[oldest]);
	sources->files[oldest] = sources->files[--sources->nr_files];
}

/* perf's countlines(): the newlines, and one more for text after the last. */
static int index_lines(struct ps_source_file *f)
{
	const char *p = f->text, *end = f->text + f->size;
	size_t cap = 0;

	f->nr_lines = 0;
	while (p < end) {
		if (f->nr_lines % LINES_PER_MARK == 0) {
			if (!ps_array_reserve((void **)&f->marks, &cap, f->nr_marks + 1,
			                      sizeof(*f->marks), 64))
				return -ENOMEM;
			f->marks[f->nr_marks++] = (uint64_t)(p - f->text);
		}
		f->nr_lines++;
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			break;
		p++;
	}
	return 0;
}

static struct ps_source_file *open_file(const char *path, const char *file)
{
	struct ps_source_file *f;
	struct stat st;
	void *text;
	int fd;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* perf maps what fstat() says, which an empty file cannot be */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (text == MAP_FAILED)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		munmap(text, (size_t)st.st_size);
		return NULL;
	}
	f->text = text;
	f->size = (size_t)st.st_size;
	if (index_lines(f) < 0) {
		file_free(f);
		return NULL;
	}
	return f;
}

static struct ps_source_file *find_file(struct ps_symbols *symbols, const char *path)
{
	struct ps_sources *sources = symbols->sources;
	struct ps_source_file *f;
	const char *file;

	if (!sources && !(sources = symbols->sources = calloc(1, sizeof(*sources))))
		return NULL;
	for (size_t i = 0; i < sources->nr_files; i++)
		if (strcmp(sources->files[i]->path, path) == 0) {
			sources->files[i]->used = ++sources->clock;
			return sources->files[i];
		}
	/* through the file hooks: a capture read from an archive has only
	 * the sources the archive holds */
	file = ps_file_local(&symbols->files, path);
	if (!file)
		return NULL;
	while (sources->nr_files && (sources->nr_files > MAX_FILES || sources->mapped > MAX_MAPPED))
		evict_oldest(sources);
	if (sources->nr_files == MAX_FILES + 1)
		evict_oldest(sources);
	f = open_file(path, file);
	if (!f)
		return NULL;
	f->used = ++sources->clock;
	sources->mapped += f->size;
	sources->files[sources->nr_files++] = f;
	return f;
}

bool ps_symbols_source_text(struct ps_symbols *symbols, const char *path, unsigned line,
                            const char **text, size_t *len)
{
	struct ps_source_file *f = find_file(symbols, path);
	const char *p, *end, *newline;
	size_t index;

	/* perf counts lines from 1: line 0 wraps around, past the last */
	if (!f || line == 0 || line > f->nr_lines)
		return false;
	index = line - 1;
	p = f->text + f->marks[index / LINES_PER_MARK];
	end = f->text + f->size;
	for (size_t skip = index % LINES_PER_MARK; skip > 0; skip--) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			return false;
		p++;
	}
	/* the last line without a newline: perf prints what follows it, up
	 * to the zeros mapped past the file's end */
	newline = memchr(p, '\n', (size_t)(end - p));
	*text = p;
	*len = (size_t)((newline ? newline : end) - p);
	/* printf's %.*s stops at a NUL */
	newline = memchr(p, 0, *len);
	if (newline)
		*len = (size_t)(newline - p);
	return true;
}
