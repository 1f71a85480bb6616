/* Timestamp ordering as perf script does it: kernel records wait in a
 * queue and are released in (timestamp, arrival) order up to a limit that
 * FINISHED_ROUND barriers raise. A binary heap keeps insertion O(log n);
 * record copies come from per-size free lists so that steady state does
 * not allocate.
 */
#include "reader/reader_priv.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

static unsigned size_class(size_t size)
{
	unsigned c = 0;
	while (((size_t)64 << c) < size)
		c++;
	return c;
}

static uint8_t *buffer_get(struct ps_order_queue *q, size_t size)
{
	unsigned c = size_class(size);
	uint8_t *b;
	if (c >= sizeof(q->free_lists) / sizeof(q->free_lists[0]))
		return NULL;
	b = q->free_lists[c];
	if (b) {
		/* a free buffer holds the link to the next one */
		// cppcheck-suppress pointerSize
		memcpy(&q->free_lists[c], b, sizeof(uint8_t *));
		return b;
	}
	return malloc((size_t)64 << c);
}

static void buffer_put(struct ps_order_queue *q, uint8_t *b, size_t size)
{
	unsigned c = size_class(size);
	// cppcheck-suppress pointerSize
	memcpy(b, &q->free_lists[c], sizeof(uint8_t *));
	q->free_lists[c] = b;
}

static bool before(const struct ps_queued *a, const struct ps_queued *b)
{
	return a->timestamp < b->timestamp || (a->timestamp == b->timestamp && a->seq < b->seq);
}

static void sift_up(struct ps_queued *h, size_t i)
{
	while (i) {
		size_t parent = (i - 1) / 2;
		if (!before(&h[i], &h[parent]))
			break;
		struct ps_queued t = h[i];
		h[i] = h[parent];
		h[parent] = t;
		i = parent;
	}
}

static void sift_down(struct ps_queued *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct ps_queued t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Memory pressure: release the older half now, as perf's OE_FLUSH__HALF. */
static void flush_half(struct ps_reader *r)
{
	struct ps_order_queue *q = &r->queue;
	uint64_t first = q->heap[0].timestamp;
	uint64_t last = q->max_timestamp;
	q->flushing = true;
	q->flush_limit = first + (last - first) / 2;
}

int ps_queue_push(struct ps_reader *r, const uint8_t *raw, size_t size, uint64_t offset,
                  bool from_compressed, uint64_t timestamp)
{
	struct ps_order_queue *q = &r->queue;
	struct ps_queued *e;

	if (!ps_array_reserve((void **)&q->heap, &q->cap, q->nr + 1, sizeof(*q->heap), 1024))
		return ps_reader_fail(r, -ENOMEM, "out of memory queueing records");
	e = &q->heap[q->nr];
	/* a record of the mapped input stays where it is (raw is then in the
	 * mapping); one from the input buffer or the decompressor is copied */
	e->mapped = !from_compressed && r->in.map != NULL;
	if (e->mapped) {
		e->bytes = (uint8_t *)(uintptr_t)raw;
	} else {
		e->bytes = buffer_get(q, size);
		if (!e->bytes)
			return ps_reader_fail(r, -ENOMEM, "out of memory queueing records");
		memcpy(e->bytes, raw, size);
	}
	e->size = (uint32_t)size;
	e->timestamp = timestamp;
	e->seq = q->seq++;
	e->offset = offset;
	e->from_compressed = from_compressed;
	e->stream = (uint16_t)r->cur_stream;
	if (timestamp < q->last_delivered)
		r->stats.nr_unordered++;
	if (timestamp > q->max_timestamp)
		q->max_timestamp = timestamp;
	/* only copies count against the bound: a mapped record costs its
	 * entry alone, and a folder's records all wait for the end, as in
	 * perf, whose queue has no bound for script */
	if (!e->mapped)
		q->bytes += size;
	sift_up(q->heap, q->nr);
	q->nr++;
	if (q->bytes > r->opts.max_queue_bytes && !q->flushing)
		flush_half(r);
	return 0;
}

bool ps_queue_pop(struct ps_reader *r, struct ps_queued *out)
{
	struct ps_order_queue *q = &r->queue;

	ps_queue_release(r); /* the previous record is done with */
	if (!q->flushing)
		return false;
	if (!q->nr || q->heap[0].timestamp > q->flush_limit) {
		q->flushing = false;
		return false;
	}
	*out = q->heap[0];
	q->nr--;
	if (q->nr) {
		q->heap[0] = q->heap[q->nr];
		sift_down(q->heap, q->nr, 0);
	}
	if (!out->mapped)
		q->bytes -= out->size;
	q->last_delivered = out->timestamp;
	/* the copy stays alive until the caller is done with the event */
	q->in_flight = out->bytes;
	q->in_flight_size = out->size;
	q->in_flight_mapped = out->mapped;
	q->in_flight_offset = out->offset;
	return true;
}

void ps_queue_release(struct ps_reader *r)
{
	struct ps_order_queue *q = &r->queue;
	if (q->in_flight) {
		if (!q->in_flight_mapped)
			buffer_put(q, q->in_flight, q->in_flight_size);
		q->in_flight = NULL;
	}
}

/* The lowest input offset, at most low, of a record of the mapped input
 * that is queued or being delivered. */
uint64_t ps_queue_lowest_mapped(const struct ps_reader *r, uint64_t low)
{
	const struct ps_order_queue *q = &r->queue;

	if (q->in_flight && q->in_flight_mapped && q->in_flight_offset < low)
		low = q->in_flight_offset;
	for (size_t i = 0; i < q->nr; i++)
		if (q->heap[i].mapped && q->heap[i].offset < low)
			low = q->heap[i].offset;
	return low;
}

void ps_queue_free(struct ps_reader *r)
{
	struct ps_order_queue *q = &r->queue;
	ps_queue_release(r);
	for (size_t i = 0; i < q->nr; i++)
		if (!q->heap[i].mapped)
			free(q->heap[i].bytes);
	for (size_t c = 0; c < sizeof(q->free_lists) / sizeof(q->free_lists[0]); c++) {
		uint8_t *b = q->free_lists[c];
		while (b) {
			uint8_t *next;
			memcpy(&next, b, sizeof(next));
			free(b);
			b = next;
		}
	}
	free(q->heap);
	memset(q, 0, sizeof(*q));
}
