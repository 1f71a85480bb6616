/* Files written by `perf inject --jit` (DIR/jitted-PID-N.so) mapped inside
 * another file's module. V8 writes the code of its builtins to its jitdump
 * too, and that code lies in node's own text: perf's maps split node's
 * mapping around each such file, and perf's libunwind looks the frame up
 * in the jitted file (mostly without unwinding information: it guesses
 * with frame pointers). libdwfl cannot hold a module inside another, so
 * such a file is reported to a Dwfl of its own, and its frames are those
 * of a readable ELF file libdwfl could not place
 * (ps_unwind_foreign_enoinfo()). */
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind_priv.h"

/* by the name the capture gives the file (its path may be a copy's in a
 * build-id cache) */
static bool jitted_name(const struct ps_unwind_map *map)
{
	const char *path = map->name ? map->name : map->path;
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *name = slash ? slash + 1 : path;

	return name && strncmp(name, "jitted-", 7) == 0;
}

/* Whether a mapping of a file other than a jitted one touches map's
 * start or end: the binary whose text holds it. */
static bool inside_file(struct ps_unwinder *u, const struct ps_unwind_map *map)
{
	struct ps_unwind_map around = { 0 };

	if (map->start > 0 && u->callbacks.find_map(u->ctx, map->start - 1, &around) &&
	    around.path && !jitted_name(&around) && around.end >= map->start)
		return true;
	memset(&around, 0, sizeof(around));
	return map->end < UINT64_MAX && u->callbacks.find_map(u->ctx, map->end, &around) &&
	       around.path && !jitted_name(&around) && around.start <= map->end;
}

bool ps_unwind_jitted_inside(struct ps_unwinder *u, const struct ps_unwind_map *map)
{
	/* the only kind of mapping looked at further */
	return ps_unwind_map_partial(map) && map->path && jitted_name(map) && inside_file(u, map);
}

static void side_clear(struct ps_unwinder *u)
{
	for (size_t i = 0; i < u->nr_side; i++)
		free(u->side[i].path);
	u->nr_side = 0;
	/* caches keyed by a Dwfl_Module pointer must not meet a freed one */
	u->generation++;
}

void ps_unwind_jitted_destroy(struct ps_unwinder *u)
{
	side_clear(u);
	if (u->side_dwfl)
		dwfl_end(u->side_dwfl);
	u->side_dwfl = NULL;
}

Dwfl_Module *ps_unwind_jitted_module(struct ps_unwinder *u, uint64_t base, const char *name,
                                     const char *path)
{
	Dwfl_Module *mod;
	char *copy;

	/* a file libdwfl refused is remembered as such (mod NULL) */
	for (size_t i = 0; i < u->nr_side; i++)
		if (u->side[i].base == base && strcmp(u->side[i].path, path) == 0)
			return u->side[i].mod;
	if (!u->side_dwfl && !(u->side_dwfl = dwfl_begin(&u->dwfl_callbacks)))
		return NULL;
	if (!(copy = strdup(path)))
		return NULL;
	/* a full table: a fresh Dwfl */
	if (u->nr_side == PS_UNWIND_MAX_JITTED) {
		side_clear(u);
		dwfl_report_begin(u->side_dwfl);
	} else {
		dwfl_report_begin_add(u->side_dwfl);
	}
	mod = dwfl_report_elf(u->side_dwfl, name, path, -1, base, false);
	dwfl_report_end(u->side_dwfl, NULL, NULL);
	if (!mod && u->nr_side) {
		/* over a file reported before (code the JIT moved or freed):
		 * a fresh Dwfl */
		side_clear(u);
		dwfl_report_begin(u->side_dwfl);
		mod = dwfl_report_elf(u->side_dwfl, name, path, -1, base, false);
		dwfl_report_end(u->side_dwfl, NULL, NULL);
	}
	u->side[u->nr_side++] = (struct ps_unwind_jitted){ .path = copy, .base = base, .mod = mod };
	return mod;
}
