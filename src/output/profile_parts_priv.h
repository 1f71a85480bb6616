/* What the writers of profile formats (pprof, speedscope) share:
 * interning tables, and the parts of a frame's texts they keep apart.
 * Private to src/output. */
#ifndef PS_OUTPUT_PROFILE_PARTS_PRIV_H
#define PS_OUTPUT_PROFILE_PARTS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

/* An interning table: a set of byte strings, each with a dense index in
 * order of first appearance, so that a writer's memory grows with the
 * unique stacks, frames and names it meets, not with the samples.
 * Keys live in the owner's arena, 16-byte aligned and followed by a NUL,
 * so string keys serve as C strings and keys made of u64 (or u32) words
 * can be read in place. */
struct intern_entry {
	uint64_t hash;
	const void *key;
	size_t len;
};

struct intern {
	struct intern_entry *entries;
	size_t nr, cap;
	uint32_t *slots; /* entry index + 1; 0 marks an empty slot */
	size_t nr_slots; /* a power of two, at least twice nr */
};

/* The index of key, added (copied into arena) when new; -ENOMEM. */
int64_t ps_intern_add(struct intern *table, struct ps_arena *arena, const void *key, size_t len);
/* Free the table (not the arena, which holds the keys). */
void ps_intern_release(struct intern *table);

/* The u64 words of a key made of words. */
static inline const uint64_t *key_words(const struct intern *table, size_t index)
{
	return table->entries[index].key;
}

/* A Python frame's name "py::qualname:file" (the "py::" may be missing):
 * the qualname (*name, *name_len) and the file after it (*file, NULL when
 * there is no ':'). The qualname holds no ':' (CPython writes dotted
 * names); the file name may. */
void ps_python_frame_parts(const char *sym, const char **name, size_t *name_len, const char **file);
/* perf's srcline text "file.c:123": its file's length and its line; false
 * for "??:0" and texts without a line number ("libfoo.so[1a2b]"). */
bool ps_srcline_parts(const char *srcline, size_t *file_len, int64_t *line);

#endif /* PS_OUTPUT_PROFILE_PARTS_PRIV_H */
