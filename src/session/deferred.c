/* Samples whose user callchain the kernel deferred (Linux 6.19+, perf
 * record --call-graph fp,defer).
 *
 * Such a sample's callchain ends in PERF_CONTEXT_USER_DEFERRED and a
 * cookie; the user part arrives later, when the thread returns to user
 * space, as a PERF_RECORD_CALLCHAIN_DEFERRED record carrying the same
 * cookie. perf script (6.19+, --merge-callchains by default) does this
 * with them, and so does the feed through this module:
 *  - a deferred sample is held (evsel__parse_sample marks it when the
 *    attr has defer_callchain and the second-last entry is the marker);
 *  - a CALLCHAIN_DEFERRED record releases every held sample of its tid,
 *    in the order they were held: those with its cookie get the chain
 *    without the cookie followed by the deferred entries, the others are
 *    delivered unmerged (evlist__deliver_deferred_callchain); samples of
 *    other threads keep waiting;
 *  - at the end of the capture what still waits is delivered unmerged
 *    (session__flush_deferred_samples).
 * A held sample is delivered from a copy: the reader's buffers are reused
 * by the next record. perf holds without a limit; here at most
 * PS_DEFERRED_MAX_HELD wait, and past that the oldest is delivered
 * unmerged (ps_deferred_hold says when, for one warning).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "session/session_priv.h"

#include "base/array.h"

struct held {
	struct ps_event ev; /* pointers into buf */
	unsigned attr_index; /* the attr array may move while it waits */
	bool ready;
	uint8_t *buf;
	size_t cap;
};

struct ps_deferred {
	/* in the order held: queue[first..nr), the ready ones nr_ready of
	 * them (the front moves as samples go, so that neither a delivery
	 * nor a look for one costs a pass over 65,536 waiting samples) */
	struct held **queue;
	size_t first, nr, cap, nr_ready;
	struct held **spare; /* slots to reuse, their buffers kept */
	size_t nr_spare, cap_spare;
	size_t slots; /* made so far: spare has room for all of them */
	struct held *current; /* delivered last: valid until the next pop */
};

int ps_deferred_new(struct ps_deferred **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void held_free(struct held *h)
{
	if (h) {
		free(h->buf);
		free(h);
	}
}

void ps_deferred_free(struct ps_deferred *d)
{
	if (!d)
		return;
	for (size_t i = d->first; i < d->nr; i++)
		held_free(d->queue[i]);
	for (size_t i = 0; i < d->nr_spare; i++)
		held_free(d->spare[i]);
	held_free(d->current);
	free(d->queue);
	free(d->spare);
	free(d);
}

bool ps_deferred_is_deferred(const struct ps_event *ev)
{
	const struct ps_sample *s = &ev->u.sample;

	return ev->type == PERF_RECORD_SAMPLE && ev->attr &&
	       (ev->attr->flags & PS_ATTR_DEFER_CALLCHAIN) && s->callchain_nr >= 2 &&
	       s->callchain[s->callchain_nr - 2] == PS_CONTEXT_USER_DEFERRED;
}

static struct held *take_slot(struct ps_deferred *d)
{
	struct held *h;

	if (d->nr_spare)
		return d->spare[--d->nr_spare];
	if (!ps_array_reserve((void **)&d->spare, &d->cap_spare, d->slots + 1, sizeof(*d->spare),
	                      16))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (h)
		d->slots++;
	return h;
}

static void give_slot(struct ps_deferred *d, struct held *h)
{
	/* take_slot() made room in spare for every slot */
	d->spare[d->nr_spare++] = h;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static const void *copy_in(struct held *h, size_t *pos, const void *src, size_t n)
{
	void *dst = h->buf + *pos;

	if (n)
		memcpy(dst, src, n);
	*pos += align8(n);
	return n ? dst : NULL;
}

/* The bytes a copy of s needs, with extra callchain entries. */
static size_t copy_size(const struct ps_event *ev, size_t extra)
{
	const struct ps_sample *s = &ev->u.sample;

	return align8(ev->size) + align8((s->callchain_nr + extra) * 8) + align8(s->raw_size) +
	       align8(s->branch_nr * sizeof(*s->branches)) + align8(s->regs_user.nr * 8) +
	       align8(s->regs_intr.nr * 8) + align8((size_t)s->stack_dyn_size) +
	       align8(s->read.nr * sizeof(*s->read.values)) + align8((size_t)s->aux_size);
}

/* Copy ev into h, whose buffer ev does not use: its callchain's first
 * nr_chain entries, then tail[0..nr_tail). */
static int copy_event(struct held *h, const struct ps_event *ev, size_t nr_chain,
                      const uint64_t *tail, size_t nr_tail)
{
	const struct ps_sample *s = &ev->u.sample;
	size_t need = copy_size(ev, nr_tail);
	size_t pos = 0;

	if (need > h->cap) {
		uint8_t *nb = realloc(h->buf, need);
		if (!nb)
			return -ENOMEM;
		h->buf = nb;
		h->cap = need;
	}
	struct ps_event copy = *ev;
	struct ps_sample *c = &copy.u.sample;
	copy.raw = copy_in(h, &pos, ev->raw, ev->size);
	uint64_t *cc = (uint64_t *)(h->buf + pos);
	if (nr_chain)
		memcpy(cc, s->callchain, nr_chain * 8);
	if (nr_tail)
		memcpy(cc + nr_chain, tail, nr_tail * 8);
	pos += align8((nr_chain + nr_tail) * 8);
	c->callchain = (nr_chain + nr_tail) ? cc : NULL;
	c->callchain_nr = nr_chain + nr_tail;
	c->raw = copy_in(h, &pos, s->raw, s->raw_size);
	c->branches = copy_in(h, &pos, s->branches, s->branch_nr * sizeof(*s->branches));
	c->regs_user.regs = copy_in(h, &pos, s->regs_user.regs, s->regs_user.nr * 8);
	c->regs_intr.regs = copy_in(h, &pos, s->regs_intr.regs, s->regs_intr.nr * 8);
	c->stack_data = copy_in(h, &pos, s->stack_data, (size_t)s->stack_dyn_size);
	c->read.values = copy_in(h, &pos, s->read.values, s->read.nr * sizeof(*s->read.values));
	c->aux_data = copy_in(h, &pos, s->aux_data, (size_t)s->aux_size);
	h->ev = copy;
	return 0;
}

int ps_deferred_hold(struct ps_deferred *d, const struct ps_event *ev)
{
	int full = 0;

	if (d->nr - d->first >= PS_DEFERRED_MAX_HELD) {
		/* the oldest waiting sample goes out as it is */
		for (size_t i = d->first; i < d->nr; i++)
			if (!d->queue[i]->ready) {
				d->queue[i]->ready = true;
				d->nr_ready++;
				break;
			}
		full = 1;
	}
	if (d->first && d->first >= d->nr - d->first) {
		/* more gone than waiting: the rest to the start */
		memmove(d->queue, d->queue + d->first, (d->nr - d->first) * sizeof(*d->queue));
		d->nr -= d->first;
		d->first = 0;
	}
	if (!ps_array_reserve((void **)&d->queue, &d->cap, d->nr + 1, sizeof(*d->queue), 16))
		return -ENOMEM;
	struct held *h = take_slot(d);
	if (!h)
		return -ENOMEM;
	if (copy_event(h, ev, ev->u.sample.callchain_nr, NULL, 0)) {
		give_slot(d, h);
		return -ENOMEM;
	}
	h->attr_index = ev->attr->index;
	h->ready = false;
	d->queue[d->nr++] = h;
	return full;
}

int ps_deferred_release(struct ps_deferred *d, const struct ps_event *rec)
{
	const struct ps_record_callchain_deferred *cd = &rec->u.callchain_deferred;
	/* without a TID in its trailer the record's tid is perf's -1, as is
	 * a sample's without PERF_SAMPLE_TID */
	uint32_t tid = rec->sample_id.has_tid ? rec->sample_id.tid : UINT32_MAX;

	for (size_t i = d->first; i < d->nr; i++) {
		struct held *h = d->queue[i];
		struct ps_sample *s = &h->ev.u.sample;

		if (h->ready || s->tid != tid)
			continue;
		h->ready = true;
		d->nr_ready++;
		if (s->callchain[s->callchain_nr - 1] != cd->cookie)
			continue;
		/* the chain up to the marker, then the deferred user part, in
		 * a slot of its own (the copy reads h's buffer) */
		struct held *m = take_slot(d);
		if (!m || copy_event(m, &h->ev, s->callchain_nr - 1, cd->ips, cd->nr)) {
			if (m)
				give_slot(d, m);
			return -ENOMEM;
		}
		m->attr_index = h->attr_index;
		m->ready = true;
		d->queue[i] = m;
		give_slot(d, h);
	}
	return 0;
}

void ps_deferred_flush(struct ps_deferred *d)
{
	for (size_t i = d->first; i < d->nr; i++)
		d->queue[i]->ready = true;
	d->nr_ready = d->nr - d->first;
}

const struct ps_event *ps_deferred_next(struct ps_deferred *d, const struct ps_reader *reader)
{
	if (d->current) {
		give_slot(d, d->current);
		d->current = NULL;
	}
	for (size_t i = d->first; d->nr_ready && i < d->nr; i++) {
		struct held *h = d->queue[i];
		if (!h->ready)
			continue;
		/* the ones before it move up a place: the order is kept */
		memmove(&d->queue[d->first + 1], &d->queue[d->first],
		        (i - d->first) * sizeof(*d->queue));
		d->first++;
		d->nr_ready--;
		if (d->first == d->nr)
			d->first = d->nr = 0;
		d->current = h;
		h->ev.attr = ps_reader_attr(reader, h->attr_index);
		return &h->ev;
	}
	return NULL;
}
