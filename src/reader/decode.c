/* Decoding one framed record into r->event: every kernel record type and
 * perf's own types 64+. Records the reader itself needs (attrs, features,
 * event names, compressed data) also update the reader's state here.
 */
#include "reader/reader_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <string.h>

#include "base/cursor.h"
#include "reader/perf_format_priv.h"

#define MALFORMED(what)                                                                            \
	return ps_reader_fail_at(r, -EINVAL, offset, ev->type, "%s (record size %u)", what,        \
	                         ev->size)

/* A string field that runs to the end of the body. */
static const char *body_string(struct ps_cursor *c)
{
	return ps_cursor_string(c, ps_cursor_left(c), false);
}

static int decode_mmap(struct ps_reader *r, struct ps_event *ev, struct ps_cursor *c,
                       uint64_t offset)
{
	struct ps_record_mmap *m = &ev->u.mmap;

	m->pid = ps_cursor_u32(c);
	m->tid = ps_cursor_u32(c);
	m->start = ps_cursor_u64(c);
	m->len = ps_cursor_u64(c);
	m->pgoff = ps_cursor_u64(c);
	if (ev->type == PERF_RECORD_MMAP2) {
		if (ev->misc & PS_MISC_MMAP_BUILD_ID) {
			m->has_build_id = true;
			m->build_id_size = ps_cursor_u8(c);
			ps_cursor_skip(c, 3);
			const uint8_t *id = ps_cursor_take(c, 20);
			if (id)
				memcpy(m->build_id, id, 20);
			if (m->build_id_size > 20)
				MALFORMED("build-id size over 20");
		} else {
			m->maj = ps_cursor_u32(c);
			m->min = ps_cursor_u32(c);
			m->ino = ps_cursor_u64(c);
			m->ino_generation = ps_cursor_u64(c);
		}
		m->prot = ps_cursor_u32(c);
		m->flags = ps_cursor_u32(c);
		/* perf_event__mmap2_swap() leaves prot and flags as written:
		 * of a capture in the other byte order, perf (its dump, its
		 * maps: an anonymous map is not taken for executable) reads
		 * them swapped, and so they are given here */
		if (r->swap) {
			m->prot = __builtin_bswap32(m->prot);
			m->flags = __builtin_bswap32(m->flags);
		}
	}
	m->filename = body_string(c);
	if (!ps_cursor_ok(c))
		MALFORMED("truncated or unterminated file name");
	return 0;
}

static int decode_kernel(struct ps_reader *r, struct ps_event *ev, struct ps_cursor *c,
                         uint64_t offset)
{
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return decode_mmap(r, ev, c, offset);
	case PERF_RECORD_LOST:
		ev->u.lost.id = ps_cursor_u64(c);
		ev->u.lost.lost = ps_cursor_u64(c);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		ev->u.lost.lost = ps_cursor_u64(c);
		break;
	case PERF_RECORD_COMM:
		ev->u.comm.pid = ps_cursor_u32(c);
		ev->u.comm.tid = ps_cursor_u32(c);
		ev->u.comm.comm = body_string(c);
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		ev->u.fork.pid = ps_cursor_u32(c);
		ev->u.fork.ppid = ps_cursor_u32(c);
		ev->u.fork.tid = ps_cursor_u32(c);
		ev->u.fork.ptid = ps_cursor_u32(c);
		ev->u.fork.time = ps_cursor_u64(c);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		ev->u.throttle.time = ps_cursor_u64(c);
		ev->u.throttle.id = ps_cursor_u64(c);
		ev->u.throttle.stream_id = ps_cursor_u64(c);
		break;
	case PERF_RECORD_READ: {
		ev->u.read.pid = ps_cursor_u32(c);
		ev->u.read.tid = ps_cursor_u32(c);
		int err = ps_read_values_parse(r, c, ev->attr ? ev->attr->read_format : 0,
		                               &ev->u.read.values);
		if (err == -ENOMEM)
			return ps_reader_fail(r, err, "out of memory");
		break;
	}
	case PERF_RECORD_AUX:
		ev->u.aux.aux_offset = ps_cursor_u64(c);
		ev->u.aux.aux_size = ps_cursor_u64(c);
		ev->u.aux.flags = ps_cursor_u64(c);
		break;
	case PERF_RECORD_ITRACE_START:
		ev->u.itrace_start.pid = ps_cursor_u32(c);
		ev->u.itrace_start.tid = ps_cursor_u32(c);
		break;
	case PERF_RECORD_SWITCH:
		ev->u.context_switch.cpu_wide = false;
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		ev->u.context_switch.cpu_wide = true;
		ev->u.context_switch.next_prev_pid = ps_cursor_u32(c);
		ev->u.context_switch.next_prev_tid = ps_cursor_u32(c);
		break;
	case PERF_RECORD_NAMESPACES: {
		struct ps_record_namespaces *ns = &ev->u.namespaces;
		ns->pid = ps_cursor_u32(c);
		ns->tid = ps_cursor_u32(c);
		ns->nr_namespaces = ps_cursor_u64(c);
		int err = ps_scratch_read_u64s(&r->scratch_misc, c, ns->nr_namespaces, 2,
		                               &ns->dev_ino);
		if (err == -ENOMEM)
			return ps_reader_fail(r, err, "out of memory");
		if (err)
			MALFORMED("namespace count runs past the record");
		ns->nr = (size_t)ns->nr_namespaces;
		break;
	}
	case PERF_RECORD_KSYMBOL:
		ev->u.ksymbol.addr = ps_cursor_u64(c);
		ev->u.ksymbol.len = ps_cursor_u32(c);
		ev->u.ksymbol.ksym_type = ps_cursor_u16(c);
		ev->u.ksymbol.flags = ps_cursor_u16(c);
		ev->u.ksymbol.name = body_string(c);
		break;
	case PERF_RECORD_BPF_EVENT: {
		ev->u.bpf_event.type = ps_cursor_u16(c);
		ev->u.bpf_event.flags = ps_cursor_u16(c);
		ev->u.bpf_event.id = ps_cursor_u32(c);
		const uint8_t *tag = ps_cursor_take(c, 8);
		if (tag)
			memcpy(ev->u.bpf_event.tag, tag, 8);
		break;
	}
	case PERF_RECORD_CGROUP:
		ev->u.cgroup.id = ps_cursor_u64(c);
		ev->u.cgroup.path = body_string(c);
		break;
	case PERF_RECORD_TEXT_POKE:
		ev->u.text_poke.addr = ps_cursor_u64(c);
		ev->u.text_poke.old_len = ps_cursor_u16(c);
		ev->u.text_poke.new_len = ps_cursor_u16(c);
		ev->u.text_poke.bytes = ps_cursor_take(c, (size_t)ev->u.text_poke.old_len +
		                                                  ev->u.text_poke.new_len);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		ev->u.aux_output_hw_id.hw_id = ps_cursor_u64(c);
		break;
	case PS_RECORD_CALLCHAIN_DEFERRED: {
		struct ps_record_callchain_deferred *d = &ev->u.callchain_deferred;
		d->cookie = ps_cursor_u64(c);
		uint64_t nr = ps_cursor_u64(c);
		int err = ps_scratch_read_u64s(&r->scratch_callchain, c, nr, 1, &d->ips);
		if (err == -ENOMEM)
			return ps_reader_fail(r, err, "out of memory");
		if (err)
			MALFORMED("callchain runs past the record");
		d->nr = (size_t)nr;
		break;
	}
	default:
		break;
	}
	if (!ps_cursor_ok(c))
		MALFORMED("truncated");
	return 0;
}

static int decode_cpu_map(struct ps_reader *r, struct ps_event *ev, struct ps_cursor *c,
                          uint64_t offset)
{
	struct ps_record_cpu_map *m = &ev->u.cpu_map;
	uint32_t *cpus;
	size_t max = 65536;

	m->encoding = ps_cursor_u16(c);
	switch (m->encoding) {
	case 0: { /* PERF_CPU_MAP__CPUS: u16 nr, u16 cpu[nr] */
		uint16_t nr = ps_cursor_u16(c);
		if (!ps_cursor_ok(c) || nr > ps_cursor_left(c) / 2)
			MALFORMED("cpu list runs past the record");
		cpus = ps_scratch_get(&r->scratch_misc, (size_t)(nr ? nr : 1) * 4);
		if (!cpus)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		for (uint16_t i = 0; i < nr; i++) {
			uint16_t cpu = ps_cursor_u16(c);
			/* (u16)-1 is the "any cpu" entry */
			cpus[i] = cpu == UINT16_MAX ? UINT32_MAX : cpu;
		}
		m->nr = nr;
		m->cpus = cpus;
		break;
	}
	case 1: { /* PERF_CPU_MAP__MASK: u16 nr, u16 long_size, masks */
		uint16_t nr = ps_cursor_u16(c);
		uint16_t long_size = ps_cursor_u16(c);
		if (long_size != 4 && long_size != 8)
			MALFORMED("cpu mask long_size is neither 4 nor 8");
		if (long_size == 8)
			ps_cursor_skip(c, 4);
		if (!ps_cursor_ok(c) || nr > ps_cursor_left(c) / long_size)
			MALFORMED("cpu mask runs past the record");
		size_t bits = (size_t)nr * long_size * 8;
		cpus = ps_scratch_get(&r->scratch_misc, (bits < max ? bits : max) * 4 + 4);
		if (!cpus)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		size_t n = 0;
		for (size_t w = 0; w < nr; w++) {
			uint64_t word = long_size == 8 ? ps_cursor_u64(c) : ps_cursor_u32(c);
			for (unsigned b = 0; b < long_size * 8u; b++)
				if ((word >> b) & 1 && n < max)
					cpus[n++] = (uint32_t)(w * long_size * 8 + b);
		}
		m->nr = n;
		m->cpus = cpus;
		break;
	}
	case 2: { /* PERF_CPU_MAP__RANGE_CPUS */
		m->any_cpu = ps_cursor_u8(c);
		ps_cursor_u8(c);
		uint16_t start = ps_cursor_u16(c);
		uint16_t end = ps_cursor_u16(c);
		if (!ps_cursor_ok(c) || end < start)
			MALFORMED("bad cpu range");
		size_t nr = (size_t)(end - start + 1) + m->any_cpu;
		cpus = ps_scratch_get(&r->scratch_misc, nr * 4);
		if (!cpus)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		size_t n = 0;
		if (m->any_cpu)
			cpus[n++] = UINT32_MAX;
		for (uint32_t cpu = start; cpu <= end; cpu++)
			cpus[n++] = cpu;
		m->nr = n;
		m->cpus = cpus;
		break;
	}
	default:
		MALFORMED("unknown cpu map encoding");
	}
	if (!ps_cursor_ok(c))
		MALFORMED("truncated");
	return 0;
}

static int decode_header_attr(struct ps_reader *r, struct ps_event *ev, struct ps_cursor *c,
                              uint64_t offset)
{
	struct ps_attr attr;
	size_t used;
	int err = ps_attr_parse(r, c->p, ps_cursor_left(c), offset + 8, PS_RECORD_HEADER_ATTR,
	                        &attr, &used);
	if (err)
		return err;
	ps_cursor_skip(c, used);
	size_t nr_ids = ps_cursor_left(c) / 8;
	uint64_t *ids = ps_scratch_get(&r->scratch_misc, (nr_ids ? nr_ids : 1) * 8);
	if (!ids)
		return ps_reader_fail(r, -ENOMEM, "out of memory");
	ps_cursor_u64_array(c, ids, nr_ids);
	err = ps_attrs_add(r, &attr, ids, nr_ids, offset);
	if (err)
		return err;
	ev->u.header_attr.attr = &r->attrs[r->nr_attrs - 1];
	ps_attrs_pipe_check(r, &r->attrs[r->nr_attrs - 1]);
	return 0;
}

static int decode_event_update(struct ps_reader *r, struct ps_event *ev, struct ps_cursor *c,
                               uint64_t offset)
{
	struct ps_record_event_update *u = &ev->u.event_update;

	u->type = ps_cursor_u64(c);
	u->id = ps_cursor_u64(c);
	if (!ps_cursor_ok(c))
		MALFORMED("truncated");
	switch (u->type) {
	case 0: /* PERF_EVENT_UPDATE__UNIT */
	case 2: /* PERF_EVENT_UPDATE__NAME */
		u->text = body_string(c);
		if (!u->text)
			MALFORMED("unterminated string");
		if (u->type == 2) {
			const struct ps_attr *a = ps_attrs_find_id(r, u->id);
			if (a)
				ps_attrs_set_name(r, &r->attrs[a->index], u->text);
		}
		break;
	case 1: { /* PERF_EVENT_UPDATE__SCALE */
		uint64_t bits = ps_cursor_u64(c);
		memcpy(&u->scale, &bits, 8);
		break;
	}
	default: /* cpus and anything newer: kept as raw bytes */
		break;
	}
	return 0;
}

static int decode_user(struct ps_reader *r, struct ps_event *ev, struct ps_cursor *c,
                       uint64_t offset)
{
	switch (ev->type) {
	case PS_RECORD_HEADER_ATTR:
		return decode_header_attr(r, ev, c, offset);
	case PS_RECORD_HEADER_TRACING_DATA:
		ev->u.tracing_data.size = ps_cursor_u32(c);
		break;
	case PS_RECORD_HEADER_BUILD_ID: {
		struct ps_record_build_id *b = &ev->u.build_id;
		b->pid = (int32_t)ps_cursor_u32(c);
		const uint8_t *id = ps_cursor_take(c, 24);
		if (id) {
			memcpy(b->id, id, 20);
			b->size = (ev->misc & PS_MISC_BUILD_ID_SIZE) ? id[20] : 20;
			if (b->size > 20)
				MALFORMED("build-id size over 20");
		}
		b->filename = body_string(c);
		if (!ps_cursor_ok(c))
			MALFORMED("truncated");
		/* the record is one entry of the BUILD_ID feature's table: keep
		 * it with the others (pipe mode, perf inject -b) */
		return ps_feature_decode(r, PS_FEAT_BUILD_ID, c->start, ev->size, offset);
	}
	case PS_RECORD_ID_INDEX: {
		struct ps_record_id_index *x = &ev->u.id_index;
		x->nr = ps_cursor_u64(c);
		if (!ps_cursor_ok(c) || x->nr > ps_cursor_left(c) / 32)
			MALFORMED("id index count runs past the record");
		struct ps_record_id_index_entry *e =
		        ps_scratch_get(&r->scratch_misc, (size_t)(x->nr ? x->nr : 1) * sizeof(*e));
		if (!e)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		for (uint64_t i = 0; i < x->nr; i++) {
			e[i].id = ps_cursor_u64(c);
			e[i].idx = ps_cursor_u64(c);
			e[i].cpu = ps_cursor_u64(c);
			e[i].tid = ps_cursor_u64(c);
		}
		x->entries = e;
		return 0; /* newer perf appends a second array; it is not needed */
	}
	case PS_RECORD_AUXTRACE_INFO:
		ev->u.auxtrace_info.type = ps_cursor_u32(c);
		return ps_cursor_ok(c)
		               ? 0
		               : ps_reader_fail_at(r, -EINVAL, offset, ev->type, "truncated");
	case PS_RECORD_AUXTRACE:
		ev->u.auxtrace.size = ps_cursor_u64(c);
		ev->u.auxtrace.offset = ps_cursor_u64(c);
		ev->u.auxtrace.reference = ps_cursor_u64(c);
		ev->u.auxtrace.idx = ps_cursor_u32(c);
		ev->u.auxtrace.tid = ps_cursor_u32(c);
		ev->u.auxtrace.cpu = ps_cursor_u32(c);
		break;
	case PS_RECORD_AUXTRACE_ERROR: {
		struct ps_record_auxtrace_error *e = &ev->u.auxtrace_error;
		e->type = ps_cursor_u32(c);
		e->code = ps_cursor_u32(c);
		e->cpu = ps_cursor_u32(c);
		e->pid = ps_cursor_u32(c);
		e->tid = ps_cursor_u32(c);
		e->fmt = ps_cursor_u32(c);
		e->ip = ps_cursor_u64(c);
		if (e->fmt >= 2)
			e->time = ps_cursor_u64(c);
		e->msg = ps_cursor_string(c, 64, true);
		if (e->fmt >= 2 && ps_cursor_left(c) >= 8) {
			e->machine_pid = ps_cursor_u32(c);
			e->vcpu = ps_cursor_u32(c);
		}
		break;
	}
	case PS_RECORD_THREAD_MAP: {
		struct ps_record_thread_map *t = &ev->u.thread_map;
		t->nr = ps_cursor_u64(c);
		if (!ps_cursor_ok(c) || t->nr > ps_cursor_left(c) / 24)
			MALFORMED("thread map count runs past the record");
		struct ps_record_thread_map_entry *e =
		        ps_scratch_get(&r->scratch_misc, (size_t)(t->nr ? t->nr : 1) * sizeof(*e));
		if (!e)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		for (uint64_t i = 0; i < t->nr; i++) {
			e[i].pid = ps_cursor_u64(c);
			const uint8_t *comm = ps_cursor_take(c, 16);
			memcpy(e[i].comm, comm, 16);
			e[i].comm[15] = 0;
		}
		t->entries = e;
		break;
	}
	case PS_RECORD_CPU_MAP:
		return decode_cpu_map(r, ev, c, offset);
	case PS_RECORD_STAT_CONFIG: {
		struct ps_record_stat_config *sc = &ev->u.stat_config;

		memset(sc, 0, sizeof(*sc));
		sc->nr = ps_cursor_u64(c);
		if (ps_cursor_ok(c) && sc->nr > ps_cursor_left(c) / 16)
			MALFORMED("stat config count runs past the record");
		for (uint64_t i = 0; i < sc->nr && ps_cursor_ok(c); i++) {
			uint64_t tag = ps_cursor_u64(c), val = ps_cursor_u64(c);

			if (tag == 0) {
				sc->aggr_mode = val;
				sc->has_aggr_mode = true;
			} else if (tag == 1) {
				sc->interval = val;
				sc->has_interval = true;
			} else if (tag == 2) {
				sc->scale = val;
				sc->has_scale = true;
			}
		}
		break;
	}
	case PS_RECORD_STAT:
		ev->u.stat.id = ps_cursor_u64(c);
		ev->u.stat.cpu = ps_cursor_u32(c);
		ev->u.stat.thread = ps_cursor_u32(c);
		ev->u.stat.val = ps_cursor_u64(c);
		ev->u.stat.ena = ps_cursor_u64(c);
		ev->u.stat.run = ps_cursor_u64(c);
		break;
	case PS_RECORD_STAT_ROUND:
		ev->u.stat_round.type = ps_cursor_u64(c);
		ev->u.stat_round.time = ps_cursor_u64(c);
		break;
	case PS_RECORD_EVENT_UPDATE:
		return decode_event_update(r, ev, c, offset);
	case PS_RECORD_TIME_CONV: {
		struct ps_record_time_conv *t = &ev->u.time_conv;
		t->time_shift = ps_cursor_u64(c);
		t->time_mult = ps_cursor_u64(c);
		t->time_zero = ps_cursor_u64(c);
		if (ps_cursor_ok(c) && ps_cursor_left(c) >= 24) {
			t->has_cycles = true;
			t->time_cycles = ps_cursor_u64(c);
			t->time_mask = ps_cursor_u64(c);
			t->cap_user_time_zero = ps_cursor_u8(c);
			t->cap_user_time_short = ps_cursor_u8(c);
		}
		break;
	}
	case PS_RECORD_HEADER_FEATURE: {
		ev->u.feature.feat_id = ps_cursor_u64(c);
		if (!ps_cursor_ok(c))
			MALFORMED("truncated");
		if (ev->u.feature.feat_id == 0 || ev->u.feature.feat_id >= PS_FEAT_LAST)
			return 0; /* HEADER_LAST_FEATURE end marker or unknown: skipped, as perf
			             does */
		r->features.present[ev->u.feature.feat_id / 64] |= 1ull
		                                                   << (ev->u.feature.feat_id % 64);
		return ps_feature_decode(r, (unsigned)ev->u.feature.feat_id, c->p,
		                         ps_cursor_left(c), offset + 16);
	}
	case PS_RECORD_COMPRESSED:
	case PS_RECORD_COMPRESSED2: {
		size_t n = ps_cursor_left(c);
		if (ev->type == PS_RECORD_COMPRESSED2) {
			/* an explicit size: the record may be padded */
			uint64_t data_size = ps_cursor_u64(c);
			if (!ps_cursor_ok(c) || data_size > ps_cursor_left(c))
				MALFORMED("compressed data size runs past the record");
			n = (size_t)data_size;
		}
		ev->u.compressed.data_size = n;
		return ps_decompress_feed(r, c->p, n, offset);
	}
	default:
		/* FINISHED_ROUND, FINISHED_INIT and EVENT_TYPE carry nothing we
		 * need; STAT details, BPF_METADATA and SCHEDSTAT_* are counted
		 * and skipped by size */
		if (ev->type == PS_RECORD_HEADER_EVENT_TYPE || ev->type >= PS_RECORD_BPF_METADATA)
			r->stats.nr_skipped++;
		return 0;
	}
	if (!ps_cursor_ok(c))
		MALFORMED("truncated");
	return 0;
}

int ps_decode_record(struct ps_reader *r, const uint8_t *raw, size_t size, uint64_t offset,
                     bool from_compressed, uint64_t payload_size)
{
	struct ps_event *ev = &r->event;
	struct ps_cursor c = ps_cursor_make(raw, size, r->swap);
	int err;

	memset(ev, 0, offsetof(struct ps_event, u));
	ev->type = ps_cursor_u32(&c);
	ev->misc = ps_cursor_u16(&c);
	ev->size = ps_cursor_u16(&c);
	ev->offset = offset;
	ev->from_compressed = from_compressed;
	ev->payload_size = payload_size;
	ev->raw = raw;
	ev->timestamp = UINT64_MAX;

	if (ev->type == PERF_RECORD_SAMPLE) {
		const struct ps_attr *attr = ps_attr_for_sample(r, raw, size);
		if (!attr)
			return ps_reader_fail_at(r, -EINVAL, offset, ev->type,
			                         "sample matches no event of the capture");
		ev->attr = attr;
		err = ps_sample_parse(r, attr, raw, size, offset, &ev->u.sample);
		if (err)
			return err;
		if (attr->sample_type & PERF_SAMPLE_TIME)
			ev->timestamp = ev->u.sample.time;
		return 0;
	}
	memset(&ev->u, 0, sizeof(ev->u));
	if (ev->type >= PS_RECORD_HEADER_ATTR)
		return decode_user(r, ev, &c, offset);

	ev->attr = ps_attr_for_trailer(r, raw, size);
	err = ps_sample_id_parse(r, ev->attr, raw, size, offset, ev->type, &ev->sample_id);
	if (err)
		return err;
	if (ev->sample_id.has_time)
		ev->timestamp = ev->sample_id.time;
	/* the body ends where the trailer starts */
	struct ps_cursor body =
	        ps_cursor_make(raw + 8, size - 8 - (ev->attr ? ev->attr->id_hdr_size : 0), r->swap);
	if (!(ev->attr && (ev->attr->flags & PS_ATTR_SAMPLE_ID_ALL)))
		body = ps_cursor_make(raw + 8, size - 8, r->swap);
	return decode_kernel(r, ev, &body, offset);
}
