/* BPF_PROG_INFO and BPF_BTF: the BPF programs loaded while perf recorded
 * and their type information, kept as perf 6.1 keeps them (util/header.c
 * process_bpf_prog_info, process_bpf_btf; util/env.c): one entry per id,
 * the first of several, in the order of their ids. Each program is perf's
 * struct perf_bpil: u32 info_len, u32 data_len, u64 arrays, the kernel's
 * struct bpf_prog_info (info_len bytes of it), then data_len bytes of the
 * arrays it points into, each pointer stored as an offset into them.
 */
#include "reader/feature_section_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* struct bpf_prog_info as perf 6.1 was built with it (Linux 6.1's uapi
 * header): perf refuses a longer one */
#define PROG_INFO_SIZE 232
#define INFO_ID 4
#define INFO_NAME 64
#define INFO_NAME_LEN 16
#define INFO_NR_JITED_KSYMS 104
#define INFO_NR_JITED_FUNC_LENS 108
#define INFO_JITED_KSYMS 112
#define INFO_JITED_FUNC_LENS 120
#define INFO_BTF_ID 128
#define INFO_FUNC_INFO_REC_SIZE 132
#define INFO_FUNC_INFO 136
#define INFO_NR_FUNC_INFO 144
#define INFO_NR_PROG_TAGS 180
#define INFO_PROG_TAGS 184
/* perf's enum perf_bpil_array_desc: which pointers are offsets into data */
#define ARRAY_JITED_KSYMS (1u << 3)
#define ARRAY_JITED_FUNC_LENS (1u << 4)
#define ARRAY_FUNC_INFO (1u << 5)
#define ARRAY_PROG_TAGS (1u << 8)
#define TAG_SIZE 8

struct prog_bytes {
	struct ps_cursor info; /* PROG_INFO_SIZE bytes, zero past info_len */
	struct ps_cursor data;
	uint64_t arrays;
};

static uint32_t info_u32(const struct prog_bytes *p, size_t offset)
{
	uint32_t v = 0;

	ps_cursor_peek_u32(&p->info, offset, &v);
	return v;
}

/* The array whose offset into data is at field, of count entries of size
 * bytes each: a cursor over it, or false when it is not one of the
 * arrays perf stored or does not lie inside data. */
static bool array_of(const struct prog_bytes *p, uint32_t bit, size_t field, uint64_t count,
                     size_t size, struct ps_cursor *out)
{
	uint64_t offset = 0;

	if (!(p->arrays & bit))
		return false;
	ps_cursor_peek_u64(&p->info, field, &offset);
	if (offset > ps_cursor_size(&p->data) || count > SIZE_MAX / size)
		return false;
	return ps_cursor_peek_cursor(&p->data, (size_t)offset, (size_t)(count * size), out);
}

/* The JIT-compiled functions of one program (what perf's
 * __bpf_event__print_bpf_prog_info prints), checked against its data. */
static int read_funcs(struct ps_feature_section *s, const struct prog_bytes *p,
                      struct ps_bpf_prog *prog)
{
	uint32_t nr = info_u32(p, INFO_NR_JITED_KSYMS);
	uint32_t nr_func_info = info_u32(p, INFO_NR_FUNC_INFO);
	uint32_t rec_size = info_u32(p, INFO_FUNC_INFO_REC_SIZE);
	struct ps_cursor ksyms = { 0 }, lens = { 0 }, tags = { 0 }, func_info = { 0 };
	bool have_func_info;
	struct ps_bpf_func *funcs;

	/* perf prints a program only when these agree */
	if (nr != info_u32(p, INFO_NR_JITED_FUNC_LENS) || nr != info_u32(p, INFO_NR_PROG_TAGS))
		return 0;
	if (nr && (!array_of(p, ARRAY_JITED_KSYMS, INFO_JITED_KSYMS, nr, 8, &ksyms) ||
	           !array_of(p, ARRAY_JITED_FUNC_LENS, INFO_JITED_FUNC_LENS, nr, 4, &lens) ||
	           !array_of(p, ARRAY_PROG_TAGS, INFO_PROG_TAGS, nr, TAG_SIZE, &tags)))
		return ps_section_fail(s,
		                       "program %u: the addresses, lengths and tags of its %u "
		                       "functions are not in its %zu bytes of arrays",
		                       prog->id, nr, ps_cursor_size(&p->data));
	/* perf looks each function's BTF type up in func_info; records
	 * shorter than struct bpf_func_info hold none */
	have_func_info = rec_size >= 8 && array_of(p, ARRAY_FUNC_INFO, INFO_FUNC_INFO, nr_func_info,
	                                           rec_size, &func_info);
	funcs = ps_arena_alloc(&s->r->arena, (nr ? nr : 1) * sizeof(*funcs));
	if (!funcs)
		return ps_section_out_of_memory(s);
	for (uint32_t i = 0; i < nr; i++) {
		funcs[i].addr = ps_cursor_u64(&ksyms);
		funcs[i].size = ps_cursor_u32(&lens);
		memcpy(funcs[i].tag, ps_cursor_take(&tags, TAG_SIZE), TAG_SIZE);
		funcs[i].has_btf_type = have_func_info && i < nr_func_info &&
		                        ps_cursor_peek_u32(&func_info, (size_t)i * rec_size + 4,
		                                           &funcs[i].btf_type);
	}
	prog->funcs = funcs;
	prog->nr_funcs = nr;
	prog->funcs_known = true;
	return 0;
}

/* An entry's place in perf's tree: by id, the first of equal ids kept. */
struct ranked {
	uint32_t id, index;
};

static int compare_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorts ranks (qsort is not stable, hence the index) and keeps the first
 * of each id; returns how many are kept. */
static size_t rank_by_id(struct ranked *ranks, size_t nr)
{
	size_t kept = 0;

	if (nr)
		qsort(ranks, nr, sizeof(*ranks), compare_ranked);
	for (size_t i = 0; i < nr; i++)
		if (kept == 0 || ranks[kept - 1].id != ranks[i].id)
			ranks[kept++] = ranks[i];
	return kept;
}

/* The list of items (of size bytes each, id_of giving their ids) perf's
 * tree would hold, in the reader's arena; NULL when out of memory. */
static void *list_by_id(struct ps_feature_section *s, const void *items, size_t nr, size_t size,
                        uint32_t (*id_of)(const void *item), size_t *kept)
{
	struct ranked *ranks = malloc((nr ? nr : 1) * sizeof(*ranks));
	uint8_t *list;

	if (!ranks)
		return NULL;
	for (size_t i = 0; i < nr; i++)
		ranks[i] = (struct ranked){ id_of((const uint8_t *)items + i * size), (uint32_t)i };
	*kept = rank_by_id(ranks, nr);
	list = ps_arena_alloc(&s->r->arena, (*kept ? *kept : 1) * size);
	for (size_t i = 0; list && i < *kept; i++)
		memcpy(list + i * size, (const uint8_t *)items + ranks[i].index * size, size);
	free(ranks);
	return list;
}

static uint32_t prog_id(const void *item)
{
	return ((const struct ps_bpf_prog *)item)->id;
}

static uint32_t btf_id(const void *item)
{
	return ((const struct ps_bpf_btf *)item)->id;
}

int ps_decode_bpf_prog_info(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t count = ps_cursor_u32(&s->c);
	struct ps_bpf_prog *progs;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	/* u32 info_len, u32 data_len, u64 arrays, then their bytes */
	progs = ps_section_array(s, count, 16, sizeof(*progs), "programs", &err);
	if (!progs)
		return err;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t info[PROG_INFO_SIZE] = { 0 };
		uint32_t info_len = ps_cursor_u32(&s->c);
		uint32_t data_len = ps_cursor_u32(&s->c);
		struct prog_bytes p = { .arrays = ps_cursor_u64(&s->c) };
		const uint8_t *info_bytes, *data_bytes;
		const char *name;

		if (!ps_cursor_ok(&s->c))
			return ps_section_truncated(s);
		if (info_len > PROG_INFO_SIZE)
			return ps_section_fail(s,
			                       "program %u: a bpf_prog_info of %u bytes, more "
			                       "than the %u perf 6.1 knows",
			                       i, info_len, PROG_INFO_SIZE);
		info_bytes = ps_cursor_take(&s->c, info_len);
		data_bytes = info_bytes ? ps_cursor_take(&s->c, data_len) : NULL;
		if (!data_bytes)
			return ps_section_fail(s,
			                       "program %u: %u + %u bytes pass the section's end",
			                       i, info_len, data_len);
		memcpy(info, info_bytes, info_len);
		p.info = ps_cursor_make(info, sizeof(info), s->c.swap);
		p.data = ps_cursor_make(data_bytes, data_len, s->c.swap);
		progs[i].id = info_u32(&p, INFO_ID);
		progs[i].btf_id = info_u32(&p, INFO_BTF_ID);
		name = (const char *)info + INFO_NAME;
		memcpy(progs[i].name, name, strnlen(name, INFO_NAME_LEN));
		/* perf does not read the programs of the other byte order */
		if (!s->c.swap) {
			err = read_funcs(s, &p, &progs[i]);
			if (err)
				return err;
		}
	}
	f->nr_bpf_progs = count;
	if (s->c.swap)
		return 0;
	f->bpf_prog_list =
	        list_by_id(s, progs, count, sizeof(*progs), prog_id, &f->nr_bpf_prog_list);
	if (!f->bpf_prog_list)
		return ps_section_out_of_memory(s);
	return 0;
}

int ps_decode_bpf_btf(struct ps_feature_section *s)
{
	struct ps_features *f = &s->r->features;
	uint32_t count = ps_cursor_u32(&s->c);
	struct ps_bpf_btf *btfs;
	int err;

	if (!ps_cursor_ok(&s->c))
		return ps_section_truncated(s);
	btfs = ps_section_array(s, count, 8, sizeof(*btfs), "BTF entries", &err);
	if (!btfs)
		return err;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t id = ps_cursor_u32(&s->c);
		uint32_t size = ps_cursor_u32(&s->c);
		const uint8_t *data = ps_cursor_ok(&s->c) ? ps_cursor_take(&s->c, size) : NULL;
		uint8_t *copy;

		if (!data)
			return ps_section_fail(s, "BTF id %u: %u bytes pass the section's end", id,
			                       size);
		/* the section's bytes go when it is decoded */
		copy = ps_arena_alloc(&s->r->arena, size ? size : 1);
		if (!copy)
			return ps_section_out_of_memory(s);
		memcpy(copy, data, size);
		btfs[i] = (struct ps_bpf_btf){ .id = id, .size = size, .data = copy };
	}
	f->nr_bpf_btfs = count;
	if (s->c.swap)
		return 0;
	f->bpf_btf_list = list_by_id(s, btfs, count, sizeof(*btfs), btf_id, &f->nr_bpf_btf_list);
	if (!f->bpf_btf_list)
		return ps_section_out_of_memory(s);
	return 0;
}
