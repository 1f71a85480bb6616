/* The kernel's table of a kallsyms file of the kernel's own lines (perf
 * record's copy, kernel_source.c), made only where it is asked.
 *
 * kallsyms.c builds perf's table from all 120,000 lines: a red-black
 * tree, each symbol ended at the next one's start, duplicates of one
 * address reduced to one (symbols__fixup_duplicate), the entry
 * trampoline dropped. That is 10 ms per run, for the few hundred kernel
 * addresses a capture names. The kernel's lines are in address order, so
 * here one pass keeps each kept line's address, file offset and name
 * hash, and a lookup finds the run of lines at the address below it and
 * applies the same rules to that run alone: each but the last of a run
 * ends at its start, the last at the next run's start (the file's last a
 * page past its own), and the duplicate rules pick one, which the
 * trampoline's name drops. Every answer is the table's; a file whose
 * lines it could not treat so (out of order, cut by a NUL, damaged, a
 * name with '[' that the table's end rule looks at) is left to
 * kallsyms.c. */
#include "symbols/symbols_priv.h"
#include "base/arena.h"
#include "base/array.h"
#include "base/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINES (16u << 20)
#define HASH_SEED 0x6b616c6c73796d73ull

struct made {
	uint32_t first; /* the run's first line, UINT32_MAX: free slot */
	uint32_t kept; /* the line the run keeps */
	const struct ps_sym *sym; /* NULL: the run keeps no symbol */
};

/* ps_kallsyms_index_start()'s last answers: a capture gives its kernel's
 * reference symbol with every kernel MMAP */
#define STARTS_KEPT 4
#define START_NAME_MAX 64

struct start_answer {
	char name[START_NAME_MAX]; /* "": free */
	bool found;
	uint64_t start;
};

struct ps_kallsyms_index {
	int fd;
	size_t nr, cap;
	uint64_t *starts; /* the kept lines', in file (and address) order */
	uint64_t *offsets;
	uint32_t *hashes; /* of their names as the table keeps them */
	struct made *made; /* open addressing by run */
	size_t made_cap, made_nr;
	struct ps_arena arena;
	bool has_extent;
	uint64_t extent_start, extent_end;
	struct start_answer starts_asked[STARTS_KEPT];
	unsigned next_start_slot;
};

static uint32_t name_hash(const char *name, size_t len)
{
	if (len > PS_KSYM_NAME_LEN)
		len = PS_KSYM_NAME_LEN;
	return (uint32_t)ps_hash_bytes(name, len, HASH_SEED);
}

static bool keep_line(struct ps_kallsyms_index *index, uint64_t start, uint64_t offset,
                      uint32_t hash)
{
	if (index->nr == index->cap) {
		size_t cap = index->cap;

		if (index->nr >= MAX_LINES ||
		    !ps_array_reserve((void **)&index->starts, &cap, index->nr + 1,
		                      sizeof(*index->starts), 4096))
			return false;
		cap = index->cap;
		if (!ps_array_reserve((void **)&index->offsets, &cap, index->nr + 1,
		                      sizeof(*index->offsets), 4096))
			return false;
		cap = index->cap;
		if (!ps_array_reserve((void **)&index->hashes, &cap, index->nr + 1,
		                      sizeof(*index->hashes), 4096))
			return false;
		index->cap = cap;
	}
	index->starts[index->nr] = start;
	index->offsets[index->nr] = offset;
	index->hashes[index->nr] = hash;
	index->nr++;
	return true;
}

/* One line at offset; -EILSEQ when the table would read it otherwise,
 * 1 at the first module's line, 0 when taken. */
static int scan_line(struct ps_kallsyms_index *index, const char *line, size_t len, uint64_t offset,
                     bool *any_address)
{
	const char *name;
	size_t name_len;
	uint64_t addr;
	char type;

	if (len == 0)
		return 0;
	if (!ps_kallsyms_parse_line(line, len, &addr, &type, &name, &name_len))
		return -EILSEQ;
	if (memchr(name, '\t', name_len))
		return 1;
	if (!ps_kallsyms_keep_type(type) || (name_len && name[0] == '$'))
		return 0;
	if (memchr(name, '[', name_len) || (index->nr && addr < index->starts[index->nr - 1]))
		return -EILSEQ;
	*any_address |= addr != 0;
	return keep_line(index, addr, offset, name_hash(name, name_len)) ? 0 : -ENOMEM;
}

/* The file's lines as kallsyms.c reads them, up to the first module's.
 * Lines fgets() would cut (over-long, with a NUL, the last without its
 * newline) come in its copy buffer: the index leaves those files to the
 * table. */
static int scan(struct ps_kallsyms_index *index, int fd)
{
	struct ps_kallsyms_reader reader;
	char copy[PS_KALLSYMS_LINE_MAX];
	bool any_address = false;
	int rc = 0;

	if (ps_kallsyms_reader_open(&reader, fd) < 0) {
		close(fd);
		return -ENOMEM;
	}
	while (rc == 0) {
		uint64_t offset = ps_kallsyms_reader_offset(&reader);
		const char *line;
		size_t len;
		enum ps_kallsyms_line kind = ps_kallsyms_next_line(&reader, copy, &line, &len);

		if (kind == PS_KALLSYMS_END)
			break;
		rc = kind == PS_KALLSYMS_OVER_LONG || line == copy
		             ? -EILSEQ
		             : scan_line(index, line, len, offset, &any_address);
	}
	ps_kallsyms_reader_close(&reader);
	if (rc == 1)
		rc = 0;
	if (rc == 0 && (!index->nr || !any_address))
		rc = -EILSEQ; /* kallsyms.c says why */
	return rc;
}

/* Line i as a symbol (its end set by the caller); NULL when the file no
 * longer holds what the scan saw there. */
static struct ps_sym *make_sym(struct ps_kallsyms_index *index, size_t i)
{
	char line[PS_KALLSYMS_LINE_MAX];
	ssize_t n = pread(index->fd, line, sizeof(line), (off_t)index->offsets[i]);
	const char *newline, *name;
	struct ps_sym *sym;
	size_t name_len;
	uint64_t addr;
	char type;

	if (n <= 0 || !(newline = memchr(line, '\n', (size_t)n)) ||
	    !ps_kallsyms_parse_line(line, (size_t)(newline - line), &addr, &type, &name,
	                            &name_len) ||
	    addr != index->starts[i])
		return NULL;
	sym = ps_arena_alloc(&index->arena, sizeof(*sym));
	if (!sym)
		return NULL;
	*sym = (struct ps_sym){ .start = addr,
		                .end = addr,
		                .name = ps_arena_strndup(
		                        &index->arena, name,
		                        name_len < PS_KSYM_NAME_LEN ? name_len : PS_KSYM_NAME_LEN),
		                .left = PS_SYMTAB_NONE,
		                .right = PS_SYMTAB_NONE,
		                .parent = PS_SYMTAB_NONE,
		                .binding = ps_kallsyms_binding(type),
		                .type = ps_kallsyms_type(type) };
	return sym->name ? sym : NULL;
}

static uint64_t roundup_page(uint64_t x)
{
	return (x + 4095) & ~(uint64_t)4095;
}

/* The run of lines holding line i: [*first, *last]. */
static void run_of(const struct ps_kallsyms_index *index, size_t i, size_t *first, size_t *last)
{
	*first = *last = i;
	while (*first > 0 && index->starts[*first - 1] == index->starts[i])
		--*first;
	while (*last + 1 < index->nr && index->starts[*last + 1] == index->starts[i])
		++*last;
}

/* The symbol the table keeps of the run [first, last], and which line it
 * is: symbols__fixup_end, then symbols__fixup_duplicate's fold, then
 * maps__split_kallsyms dropping the entry trampoline. */
static const struct ps_sym *resolve_run(struct ps_kallsyms_index *index, size_t first, size_t last,
                                        size_t *kept)
{
	struct ps_sym *best = NULL;

	for (size_t i = first; i <= last; i++) {
		struct ps_sym *sym = make_sym(index, i);

		if (!sym)
			return NULL;
		if (i == last)
			sym->end = last + 1 < index->nr ? index->starts[last + 1]
			                                : roundup_page(sym->start) + 4096;
		if (!best || !ps_symbol_prefer_first(best, sym)) {
			best = sym;
			*kept = i;
		}
	}
	if (best && best->name[0] == '_' && strcmp(best->name, PS_ENTRY_TRAMPOLINE_NAME) == 0)
		return NULL;
	return best;
}

static struct made *made_slot(struct ps_kallsyms_index *index, uint32_t first)
{
	size_t mask = index->made_cap - 1, at = ps_hash_u64(first) & mask;

	while (index->made[at].first != UINT32_MAX && index->made[at].first != first)
		at = (at + 1) & mask;
	return &index->made[at];
}

static bool made_grow(struct ps_kallsyms_index *index)
{
	struct made *old = index->made;
	size_t old_cap = index->made_cap, cap = old_cap ? old_cap * 2 : 256;
	struct made *table = malloc(cap * sizeof(*table));

	if (!table)
		return false;
	for (size_t i = 0; i < cap; i++)
		table[i].first = UINT32_MAX;
	index->made = table;
	index->made_cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].first != UINT32_MAX)
			*made_slot(index, old[i].first) = old[i];
	free(old);
	return true;
}

/* The symbol of line i's run, made once (the same pointer every time),
 * and the line it is (*kept; SIZE_MAX when none is kept). */
static const struct ps_sym *run_symbol(struct ps_kallsyms_index *index, size_t i, size_t *kept)
{
	size_t first, last;
	const struct ps_sym *sym;
	struct made *slot;

	run_of(index, i, &first, &last);
	if (index->made_cap) {
		slot = made_slot(index, (uint32_t)first);
		if (slot->first == first) {
			*kept = slot->sym ? slot->kept : SIZE_MAX;
			return slot->sym;
		}
	}
	*kept = SIZE_MAX;
	sym = resolve_run(index, first, last, kept);
	if (!sym)
		*kept = SIZE_MAX;
	/* made without a slot (no memory): made again when asked again */
	if ((index->made_nr + 1) * 2 > index->made_cap && !made_grow(index))
		return sym;
	slot = made_slot(index, (uint32_t)first);
	slot->first = (uint32_t)first;
	slot->kept = (uint32_t)(*kept == SIZE_MAX ? 0 : *kept);
	slot->sym = sym;
	index->made_nr++;
	return sym;
}

/* set_extent(): the first symbol kept to the end of the last. */
static void find_extent(struct ps_kallsyms_index *index)
{
	const struct ps_sym *first = NULL, *last = NULL;
	size_t kept;

	for (size_t i = 0; i < index->nr && !first; i++)
		first = run_symbol(index, i, &kept);
	for (size_t i = index->nr; i > 0 && !last; i--)
		last = run_symbol(index, i - 1, &kept);
	if (first && last) {
		index->has_extent = true;
		index->extent_start = first->start;
		index->extent_end = last->end;
	}
}

int ps_kallsyms_index_build(const char *path, struct ps_kallsyms_index **out)
{
	struct ps_kallsyms_index *index = calloc(1, sizeof(*index));
	int scan_fd, rc;

	*out = NULL;
	if (!index)
		return -ENOMEM;
	/* the reader moves the file offset and closes its descriptor; the
	 * lookups pread() the lines */
	index->fd = open(path, O_RDONLY | O_CLOEXEC);
	scan_fd = index->fd < 0 ? -1 : fcntl(index->fd, F_DUPFD_CLOEXEC, 0);
	if (scan_fd < 0) {
		rc = -errno;
		if (index->fd >= 0)
			close(index->fd);
		free(index);
		return rc;
	}
	rc = scan(index, scan_fd);
	if (rc < 0) {
		ps_kallsyms_index_free(index);
		return rc;
	}
	find_extent(index);
	*out = index;
	return 0;
}

void ps_kallsyms_index_free(struct ps_kallsyms_index *index)
{
	if (!index)
		return;
	close(index->fd);
	free(index->starts);
	free(index->offsets);
	free(index->hashes);
	free(index->made);
	ps_arena_free(&index->arena);
	free(index);
}

const struct ps_sym *ps_kallsyms_index_find(struct ps_kallsyms_index *index, uint64_t addr)
{
	size_t lo = 0, hi = index->nr, kept;
	const struct ps_sym *sym;

	/* the last line at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (index->starts[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	sym = run_symbol(index, lo - 1, &kept);
	/* symbols__find()'s test: [start, end), or the start of an empty one */
	if (!sym || (addr >= sym->end && !(addr == sym->start && sym->start == sym->end)))
		return NULL;
	return sym;
}

static bool find_start(struct ps_kallsyms_index *index, const char *name, uint64_t *start)
{
	uint32_t hash = name_hash(name, strlen(name));

	for (size_t i = 0; i < index->nr; i++) {
		const struct ps_sym *sym;
		size_t kept;

		if (index->hashes[i] != hash)
			continue;
		sym = run_symbol(index, i, &kept);
		if (sym && kept == i && strcmp(sym->name, name) == 0) {
			*start = sym->start;
			return true;
		}
	}
	return false;
}

bool ps_kallsyms_index_start(struct ps_kallsyms_index *index, const char *name, uint64_t *start)
{
	struct start_answer *answer;

	for (size_t i = 0; i < STARTS_KEPT; i++) {
		answer = &index->starts_asked[i];
		if (answer->name[0] && strcmp(answer->name, name) == 0) {
			*start = answer->start;
			return answer->found;
		}
	}
	if (strlen(name) >= START_NAME_MAX)
		return find_start(index, name, start);
	answer = &index->starts_asked[index->next_start_slot++ % STARTS_KEPT];
	answer->found = find_start(index, name, &answer->start);
	strcpy(answer->name, name);
	*start = answer->start;
	return answer->found;
}

bool ps_kallsyms_index_extent(const struct ps_kallsyms_index *index, uint64_t *start, uint64_t *end)
{
	if (!index->has_extent)
		return false;
	*start = index->extent_start;
	*end = index->extent_end;
	return true;
}
