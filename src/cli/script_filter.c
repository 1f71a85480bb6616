/* `pystitch script`'s own sample filters, which perf script applies after
 * the session's (pid, tid, comm, CPU, time): -S and --dsos on the sampled
 * address's function and object (machine__resolve()), then --switch-on
 * and --switch-off (perf's evswitch). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int ps_cli_split_list(const char *arg, char **text, const char ***out, size_t *nr)
{
	size_t cap = 0;

	free(*text);
	free(*out);
	*out = NULL;
	*nr = 0;
	*text = strdup(arg);
	if (!*text)
		return -ENOMEM;
	for (char *save = NULL, *t = strtok_r(*text, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (*nr == cap) {
			const char **n;

			cap = cap ? cap * 2 : 8;
			n = realloc(*out, cap * sizeof(**out));
			if (!n)
				return -ENOMEM;
			*out = n;
		}
		(*out)[(*nr)++] = t;
	}
	return 0;
}

/* perf's setup_addrlist(): the -S entries strtoul() reads whole as
 * hexadecimal (trailing spaces allowed) are addresses, not names ("add"
 * and "0x401126" alike). */
int ps_cli_script_filter_symbols(struct ps_cli_script_filter *f, const char *arg)
{
	size_t names = 0;

	if (ps_cli_split_list(arg, &f->symbols_text, &f->symbols, &f->nr_symbols))
		return -ENOMEM;
	free(f->symbol_addrs);
	f->nr_symbol_addrs = 0;
	f->symbol_addrs = calloc(f->nr_symbols ? f->nr_symbols : 1, sizeof(*f->symbol_addrs));
	if (!f->symbol_addrs)
		return -ENOMEM;
	for (size_t i = 0; i < f->nr_symbols; i++) {
		const char *text = f->symbols[i], *end;
		unsigned long value;
		char *sep;

		errno = 0;
		value = strtoul(text, &sep, 16);
		for (end = sep; *end == ' ' || (*end >= '\t' && *end <= '\r'); end++)
			;
		if (errno || sep == text || *end)
			f->symbols[names++] = text;
		else
			f->symbol_addrs[f->nr_symbol_addrs++] = value;
	}
	f->nr_symbols = names;
	f->by_symbol = true;
	return 0;
}

static bool in_names(const char *const *names, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* perf's -S: the sample's function by name; the sampled address itself,
 * when it is mapped, against the entries that read as numbers, or within
 * --addr-range bytes after one. (perf also compares the function's start,
 * as "0x...", with the names, but such an entry is always taken for a
 * number.) */
static bool symbol_wanted(const struct ps_cli_script_filter *filter, const struct ps_frame *f)
{
	if (f->sym && in_names(filter->symbols, filter->nr_symbols, f->sym))
		return true;
	if (!f->dso)
		return false;
	for (size_t i = 0; i < filter->nr_symbol_addrs; i++) {
		uint64_t addr = filter->symbol_addrs[i];

		if (f->ip == addr || (filter->addr_range && f->ip >= addr &&
		                      f->ip < addr + (uint64_t)(int64_t)filter->addr_range))
			return true;
	}
	return false;
}

/* -S and --dsos: perf looks at the symbol and the object of the sampled
 * address (the outermost frame of its inline chain). */
static bool stack_wanted(const struct ps_cli_script_filter *filter, const struct ps_stack *stack)
{
	const struct ps_frame *f = NULL;

	if (!filter->by_symbol && !filter->nr_dsos)
		return true;
	for (size_t i = 0; i < stack->nr_frames && !f; i++)
		if (!stack->frames[i].inlined)
			f = &stack->frames[i];
	if (!f)
		return false;
	if (filter->by_symbol && !symbol_wanted(filter, f))
		return false;
	if (filter->nr_dsos) {
		const char *base;

		if (!f->dso)
			return false;
		/* perf's short name of a file is its base name */
		base = f->dso[0] == '[' || !strrchr(f->dso, '/') ? f->dso
		                                                 : strrchr(f->dso, '/') + 1;
		if (!in_names(filter->dsos, filter->nr_dsos, base) &&
		    !in_names(filter->dsos, filter->nr_dsos, f->dso))
			return false;
	}
	return true;
}

static int find_switch_event(const struct ps_cli *cli, const struct ps_reader *reader,
                             const char *which, const char *name, const struct ps_attr **out)
{
	*out = NULL;
	if (!name)
		return 0;
	/* a pipe's events come later: perf finds none, as here */
	for (size_t i = 0; !ps_reader_is_pipe(reader) && i < ps_reader_nr_attrs(reader); i++)
		if (strcmp(ps_reader_attr(reader, i)->name, name) == 0) {
			*out = ps_reader_attr(reader, i);
			return 0;
		}
	ps_cli_command_error(cli,
	                     "switch-%s event not found (%s): `pystitch info -i FILE` names the "
	                     "capture's events",
	                     which, name);
	return -ENOENT;
}

int ps_cli_script_filter_switches(struct ps_cli_script_filter *f, const struct ps_cli *cli,
                                  const struct ps_reader *reader, const char *on, const char *off)
{
	if (find_switch_event(cli, reader, "on", on, &f->switch_on) ||
	    find_switch_event(cli, reader, "off", off, &f->switch_off))
		return -ENOENT;
	f->discarding = f->switch_on != NULL;
	return 0;
}

/* perf's evswitch__discard(). */
static bool switch_discards(struct ps_cli_script_filter *f, const struct ps_attr *attr)
{
	if (f->switch_on && f->discarding) {
		if (f->switch_on->index != attr->index)
			return true;
		f->discarding = false;
		return !f->show_on_off;
	}
	if (f->switch_off && !f->discarding && f->switch_off->index == attr->index) {
		f->discarding = true;
		return !f->show_on_off;
	}
	return false;
}

bool ps_cli_script_filter_pass(struct ps_cli_script_filter *f, const struct ps_stack *stack)
{
	return stack_wanted(f, stack) && !switch_discards(f, stack->event->attr);
}

void ps_cli_script_filter_release(struct ps_cli_script_filter *f)
{
	free(f->symbols);
	free(f->symbols_text);
	free(f->symbol_addrs);
	free(f->dsos);
	free(f->dsos_text);
}
