/* `pystitch info`: BPF_PROG_INFO and BPF_BTF as perf 6.1 prints them
 * (util/header.c print_bpf_prog_info, print_bpf_btf; util/bpf-event.c
 * __bpf_event__print_bpf_prog_info, synthesize_bpf_prog_name). A function
 * with BTF is named from it: the BTF blob is read as libbpf's btf__new()
 * reads it (perf links Linux 6.1's tools/lib/bpf), and one that libbpf
 * refuses names nothing, as in perf. Every BTF byte is read through a
 * cursor.
 */
#include "output/info_priv.h"

#include <inttypes.h>
#include <stdlib.h>

#include "base/cursor.h"

/* perf's KSYM_NAME_LEN buffer for a name */
#define NAME_MAX_LEN 511

#define BTF_MAGIC 0xeb9f
#define BTF_HEADER_SIZE 24
#define BTF_TYPE_SIZE 12
#define BTF_MAX_STR_OFFSET 0x7fffffffu

/* One BTF blob as libbpf sees it. */
struct btf {
	struct ps_cursor types, strings;
	uint32_t nr_types;
	uint32_t *offsets; /* of each type in types, by id - 1 */
};

/* libbpf's btf_type_size(): bytes of a type record, 0 for a kind it does
 * not know (it refuses the blob then). */
static size_t type_size(uint32_t info)
{
	size_t vlen = info & 0xffff;

	switch ((info >> 24) & 0x1f) {
	case 7: /* FWD */
	case 10: /* CONST */
	case 9: /* VOLATILE */
	case 11: /* RESTRICT */
	case 2: /* PTR */
	case 8: /* TYPEDEF */
	case 12: /* FUNC */
	case 16: /* FLOAT */
	case 18: /* TYPE_TAG */
		return BTF_TYPE_SIZE;
	case 1: /* INT */
		return BTF_TYPE_SIZE + 4;
	case 6: /* ENUM: name, value */
		return BTF_TYPE_SIZE + vlen * 8;
	case 19: /* ENUM64: name, two halves */
		return BTF_TYPE_SIZE + vlen * 12;
	case 3: /* ARRAY */
		return BTF_TYPE_SIZE + 12;
	case 4: /* STRUCT */
	case 5: /* UNION: members of name, type, offset */
		return BTF_TYPE_SIZE + vlen * 12;
	case 13: /* FUNC_PROTO: parameters of name, type */
		return BTF_TYPE_SIZE + vlen * 8;
	case 14: /* VAR */
		return BTF_TYPE_SIZE + 4;
	case 15: /* DATASEC: type, offset, size */
		return BTF_TYPE_SIZE + vlen * 12;
	case 17: /* DECL_TAG */
		return BTF_TYPE_SIZE + 4;
	default:
		return 0;
	}
}

/* libbpf's btf_parse_hdr(), btf_parse_str_sec() and btf_parse_type_sec():
 * false for a blob it refuses, and when out of memory (*no_memory). */
static bool btf_open(struct btf *btf, const struct ps_bpf_btf *blob, bool *no_memory)
{
	struct ps_cursor raw = ps_cursor_make(blob->data, blob->size, false);
	uint32_t hdr_len, type_off, type_len, str_off, str_len, size;
	uint16_t magic = 0;
	struct ps_cursor types;
	const uint8_t *first, *last;

	*btf = (struct btf){ 0 };
	if (blob->size < BTF_HEADER_SIZE)
		return false;
	magic = ps_cursor_u16(&raw);
	if (magic == __builtin_bswap16(BTF_MAGIC)) {
		raw.swap = true;
		ps_cursor_peek_u32(&raw, 4, &hdr_len);
		/* libbpf swaps only headers of the size it knows */
		if (hdr_len != BTF_HEADER_SIZE)
			return false;
	} else if (magic != BTF_MAGIC) {
		return false;
	}
	ps_cursor_peek_u32(&raw, 4, &hdr_len);
	ps_cursor_peek_u32(&raw, 8, &type_off);
	ps_cursor_peek_u32(&raw, 12, &type_len);
	ps_cursor_peek_u32(&raw, 16, &str_off);
	ps_cursor_peek_u32(&raw, 20, &str_len);
	if (blob->size < hdr_len || (uint64_t)blob->size - hdr_len < (uint64_t)str_off + str_len ||
	    (uint64_t)type_off + type_len > str_off || type_off % 4)
		return false;
	/* inside the blob: the checks above bound both sections */
	ps_cursor_peek_cursor(&raw, (size_t)hdr_len + type_off, type_len, &btf->types);
	ps_cursor_peek_cursor(&raw, (size_t)hdr_len + str_off, str_len, &btf->strings);
	first = ps_cursor_peek(&btf->strings, 0, 1);
	last = ps_cursor_peek(&btf->strings, (size_t)str_len - 1, 1);
	if (!str_len || str_len - 1 > BTF_MAX_STR_OFFSET || !first || !last || *first || *last)
		return false;

	for (size_t pass = 0; pass < 2; pass++) {
		types = btf->types;
		btf->nr_types = 0;
		while (ps_cursor_left(&types) >= BTF_TYPE_SIZE) {
			uint32_t info = 0;

			ps_cursor_peek_u32(&types, ps_cursor_pos(&types) + 4, &info);
			size = (uint32_t)type_size(info);
			if (!size || size > ps_cursor_left(&types))
				return false;
			if (btf->offsets)
				btf->offsets[btf->nr_types] = (uint32_t)ps_cursor_pos(&types);
			ps_cursor_skip(&types, size);
			btf->nr_types++;
		}
		if (ps_cursor_left(&types) != 0)
			return false;
		/* first pass counted, second records where each type is */
		if (pass == 0) {
			btf->offsets =
			        malloc((btf->nr_types ? btf->nr_types : 1) * sizeof(uint32_t));
			if (!btf->offsets) {
				*no_memory = true;
				return false;
			}
		}
	}
	return true;
}

static void btf_close(struct btf *btf)
{
	free(btf->offsets);
	btf->offsets = NULL;
}

/* The name of type id (btf__type_by_id(), btf__name_by_offset()), or NULL
 * where libbpf gives none: an id past the last type (perf would crash on
 * it), a name offset past the strings. Type 0 is void, named "". */
static const char *btf_type_name(const struct btf *btf, uint32_t id)
{
	uint32_t name_off = 0;
	const uint8_t *name;

	if (id > btf->nr_types)
		return NULL;
	if (id && !ps_cursor_peek_u32(&btf->types, btf->offsets[id - 1], &name_off))
		return NULL;
	if (name_off >= ps_cursor_size(&btf->strings))
		return NULL;
	/* the string section ends with a NUL, so the name does too */
	name = ps_cursor_peek(&btf->strings, name_off, 1);
	return (const char *)name;
}

static const struct ps_bpf_btf *find_btf(const struct ps_features *f, uint32_t id)
{
	size_t lo = 0, hi = f->nr_bpf_btf_list;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->bpf_btf_list[mid].id == id)
			return &f->bpf_btf_list[mid];
		if (f->bpf_btf_list[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* synthesize_bpf_prog_name(): "bpf_prog_" and the tag in hex, then "_"
 * and the BTF name of the function, or without BTF the program's name
 * for a program of one function and "F" for each of several. */
static void print_name(struct ps_strbuf *out, const struct ps_bpf_prog *prog, const struct btf *btf,
                       size_t index)
{
	const struct ps_bpf_func *func = &prog->funcs[index];
	const char *short_name = NULL;
	size_t start = out->len;

	ps_strbuf_addstr(out, "bpf_prog_");
	for (size_t i = 0; i < sizeof(func->tag); i++)
		ps_strbuf_addf(out, "%02x", func->tag[i]);
	if (btf)
		short_name = func->has_btf_type ? btf_type_name(btf, func->btf_type) : NULL;
	else if (index == 0 && prog->nr_funcs == 1)
		short_name = prog->name[0] ? prog->name : NULL;
	else
		short_name = "F";
	if (short_name)
		ps_strbuf_addf(out, "_%s", short_name);
	if (!out->failed && out->len - start > NAME_MAX_LEN) {
		out->len = start + NAME_MAX_LEN;
		out->buf[out->len] = 0;
	}
}

void ps_info_print_bpf_prog_info(struct ps_strbuf *out, const struct ps_features *f, bool use_btf)
{
	for (size_t i = 0; i < f->nr_bpf_prog_list; i++) {
		const struct ps_bpf_prog *prog = &f->bpf_prog_list[i];
		const struct ps_bpf_btf *blob = NULL;
		struct btf btf = { 0 };
		bool have_btf;

		if (!prog->funcs_known)
			continue;
		if (use_btf && prog->btf_id)
			blob = find_btf(f, prog->btf_id);
		have_btf = blob && btf_open(&btf, blob, &out->failed);
		if (prog->nr_funcs == 1) {
			ps_strbuf_addf(out, "# bpf_prog_info %u: ", prog->id);
			print_name(out, prog, have_btf ? &btf : NULL, 0);
			ps_strbuf_addf(out, " addr 0x%" PRIx64 " size %u\n", prog->funcs[0].addr,
			               prog->funcs[0].size);
		} else {
			ps_strbuf_addf(out, "# bpf_prog_info %u:\n", prog->id);
			for (size_t j = 0; j < prog->nr_funcs; j++) {
				ps_strbuf_addf(out, "# \tsub_prog %u: ", (unsigned)j);
				print_name(out, prog, have_btf ? &btf : NULL, j);
				ps_strbuf_addf(out, " addr 0x%" PRIx64 " size %u\n",
				               prog->funcs[j].addr, prog->funcs[j].size);
			}
		}
		btf_close(&btf);
	}
}

void ps_info_print_bpf_btf(struct ps_strbuf *out, const struct ps_features *f)
{
	for (size_t i = 0; i < f->nr_bpf_btf_list; i++)
		ps_strbuf_addf(out, "# btf info of id %u\n", f->bpf_btf_list[i].id);
}
