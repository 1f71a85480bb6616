/* perf script -F srccode: the source line printed after a sample, unless
 * it is the file and line perf printed last for the sample's thread
 * (thread->srccode_state, which only the samples printed change). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "output/script_priv.h"

struct srccode_seen {
	uint64_t serial; /* 0: an empty slot */
	char *file;
	unsigned line;
};

void ps_script_srccode_release(struct ps_script_srccode *sc)
{
	for (size_t i = 0; i < sc->nr_slots; i++)
		free(sc->slots[i].file);
	free(sc->slots);
	memset(sc, 0, sizeof(*sc));
}

static struct srccode_seen *slot_of(struct srccode_seen *slots, size_t nr_slots, uint64_t serial)
{
	size_t i = ps_hash_u64(serial) & (nr_slots - 1);

	while (slots[i].serial && slots[i].serial != serial)
		i = (i + 1) & (nr_slots - 1);
	return &slots[i];
}

static int grow(struct ps_script_srccode *sc)
{
	size_t nr = sc->nr_slots ? sc->nr_slots * 2 : 64;
	struct srccode_seen *slots = calloc(nr, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < sc->nr_slots; i++)
		if (sc->slots[i].serial)
			*slot_of(slots, nr, sc->slots[i].serial) = sc->slots[i];
	free(sc->slots);
	sc->slots = slots;
	sc->nr_slots = nr;
	return 0;
}

int ps_script_print_source_line(struct ps_strbuf *out, struct ps_script_srccode *sc,
                                uint64_t thread_serial, const char *path, unsigned line,
                                const char *text, size_t len)
{
	struct srccode_seen *seen;
	char *file;

	if (!path)
		return 0;
	if ((sc->used + 1) * 2 > sc->nr_slots && grow(sc))
		return -ENOMEM;
	seen = slot_of(sc->slots, sc->nr_slots, thread_serial ? thread_serial : 1);
	if (seen->serial && seen->line == line && strcmp(seen->file, path) == 0)
		return 0;
	file = strdup(path);
	if (!file)
		return -ENOMEM;
	if (!seen->serial)
		sc->used++;
	seen->serial = thread_serial ? thread_serial : 1;
	free(seen->file);
	seen->file = file;
	seen->line = line;
	/* "|%-8d %.*s" and a newline */
	ps_strbuf_addch(out, '|');
	ps_strbuf_add_int(out, (int32_t)line, -8, false);
	ps_strbuf_addch(out, ' ');
	ps_strbuf_add(out, text, len);
	ps_strbuf_addch(out, '\n');
	return 0;
}

int ps_script_print_srccode(struct ps_strbuf *out, struct ps_script_srccode *sc,
                            const struct ps_stack *stack)
{
	return ps_script_print_source_line(out, sc, stack->thread_serial, stack->srccode_file,
	                                   stack->srccode_line, stack->srccode_text,
	                                   stack->srccode_len);
}
