/* PERF_SAMPLE_READ samples as perf delivers them (session.c
 * deliver_sample_group() and deliver_sample_value()): once per read value
 * (one without PERF_FORMAT_GROUP) whose counter moved since its id's last
 * sample, as the event that owns the id, with the difference as its
 * period. The last value of each id is kept in an open-addressed table,
 * with the index of the event that owns it (not a pointer: a pipe's attrs
 * move as more arrive), or none. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "reader/reader.h"

#define NO_OWNER UINT32_MAX

struct read_slot {
	uint64_t id;
	uint64_t last_value;
	uint32_t owner; /* the owning attr's index, or NO_OWNER */
	uint32_t checked; /* the number of attrs when owner was looked for */
	bool used;
};

struct ps_read_tracker {
	struct read_slot *slots;
	size_t cap, used;
	struct ps_sample_delivery *out;
	size_t out_cap;
};

int ps_read_tracker_new(struct ps_read_tracker **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void ps_read_tracker_free(struct ps_read_tracker *tracker)
{
	if (!tracker)
		return;
	free(tracker->slots);
	free(tracker->out);
	free(tracker);
}

static size_t slot_index(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

static bool grow(struct ps_read_tracker *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct read_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].used)
			continue;
		for (j = slot_index(t->slots[i].id, cap); slots[j].used; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return true;
}

static uint32_t owner_of(const struct ps_reader *reader, uint64_t id)
{
	for (size_t a = 0; a < ps_reader_nr_attrs(reader); a++) {
		const struct ps_attr *attr = ps_reader_attr(reader, a);

		for (size_t k = 0; attr && k < attr->nr_ids; k++)
			if (attr->ids[k] == id)
				return (uint32_t)a;
	}
	return NO_OWNER;
}

/* The slot of id, made on first sight (an id no event owns too, so that
 * it is looked for once). -ENOMEM. */
static int slot_of(struct ps_read_tracker *t, const struct ps_reader *reader, uint64_t id,
                   struct read_slot **slot)
{
	uint32_t owner;
	size_t i;

	*slot = NULL;
	if (t->cap)
		for (i = slot_index(id, t->cap); t->slots[i].used; i = (i + 1) & (t->cap - 1))
			if (t->slots[i].id == id) {
				*slot = &t->slots[i];
				/* a pipe's attrs arrive as records: one may own it now */
				if ((*slot)->owner == NO_OWNER &&
				    (*slot)->checked != ps_reader_nr_attrs(reader)) {
					(*slot)->owner = owner_of(reader, id);
					(*slot)->checked = (uint32_t)ps_reader_nr_attrs(reader);
				}
				return 0;
			}
	owner = owner_of(reader, id);
	if ((t->used + 1) * 2 > t->cap && !grow(t))
		return -ENOMEM;
	for (i = slot_index(id, t->cap); t->slots[i].used; i = (i + 1) & (t->cap - 1))
		;
	t->slots[i] =
	        (struct read_slot){ id, 0, owner, (uint32_t)ps_reader_nr_attrs(reader), true };
	t->used++;
	*slot = &t->slots[i];
	return 0;
}

int ps_read_tracker_deliver(struct ps_read_tracker *t, const struct ps_reader *reader,
                            const struct ps_event *ev, const struct ps_sample_delivery **out,
                            size_t *nr)
{
	const struct ps_attr *attr = ev->attr;
	const struct ps_read_data *rd = &ev->u.sample.read;
	size_t n, count = 0;

	*out = NULL;
	*nr = 0;
	if (!attr || !(attr->sample_type & PERF_SAMPLE_READ))
		return 0;
	n = (attr->read_format & PERF_FORMAT_GROUP) ? rd->nr : (rd->nr ? 1 : 0);
	if (n && !ps_array_reserve((void **)&t->out, &t->out_cap, n, sizeof(*t->out), 4))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct read_slot *slot;
		uint64_t delta;
		int err = slot_of(t, reader, rd->values[i].id, &slot);

		if (err)
			return err;
		if (slot->owner == NO_OWNER)
			continue; /* perf counts an unknown id and delivers nothing */
		delta = rd->values[i].value - slot->last_value;
		slot->last_value = rd->values[i].value;
		if (delta)
			t->out[count++] =
			        (struct ps_sample_delivery){ ps_reader_attr(reader, slot->owner),
				                             delta };
	}
	*out = t->out;
	*nr = count;
	return 0;
}
