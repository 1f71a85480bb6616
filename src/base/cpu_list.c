/* CPU lists as perf 6.1 reads them (libperf cpumap.c perf_cpu_map__new)
 * and prints them (util/cpumap.c cpu_map__snprint). perf expands each
 * range into its CPUs; here ranges stay ranges, so that "0-2000000000"
 * costs no more than "0-1". */
#include "base/cpu_list.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

struct range {
	unsigned long first, last;
};

static int compare_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* The ranges of list, in its order; -EINVAL where perf's parser fails. */
static int parse(const char *list, struct range *ranges, size_t *nr)
{
	const char *at = list;

	*nr = 0;
	if (!isdigit((unsigned char)*at) && *at != '\0')
		return -EINVAL;
	while (isdigit((unsigned char)*at)) {
		char *end;
		struct range r;

		/* base 0, as perf's: "010" is 8 and "0x10" 16 */
		r.first = strtoul(at, &end, 0);
		if (r.first >= INT_MAX || (*end != '\0' && *end != ',' && *end != '-'))
			return -EINVAL;
		r.last = r.first;
		if (*end == '-') {
			at = end + 1;
			r.last = strtoul(at, &end, 0);
			if (r.last >= INT_MAX || (*end != '\0' && *end != ',') || r.last < r.first)
				return -EINVAL;
		}
		ranges[(*nr)++] = r;
		at = *end ? end + 1 : end;
	}
	return 0;
}

int ps_cpu_list_format(const char *list, struct ps_strbuf *out)
{
	/* every range takes at least one digit and one separator */
	size_t max = strlen(list) / 2 + 1, nr, i;
	struct range *ranges = malloc(max * sizeof(*ranges));
	int err;

	if (!ranges)
		return -ENOMEM;
	err = parse(list, ranges, &nr);
	if (!err) {
		qsort(ranges, nr, sizeof(*ranges), compare_range);
		/* perf refuses a CPU named twice */
		for (i = 1; i < nr; i++)
			if (ranges[i].first <= ranges[i - 1].last)
				err = -EINVAL;
	}
	if (err || !out) {
		free(ranges);
		return err;
	}
	if (nr == 0)
		ps_strbuf_addstr(out, "-1");
	for (i = 0; i < nr;) {
		unsigned long first = ranges[i].first, last = ranges[i].last;

		if (i)
			ps_strbuf_addch(out, ',');
		/* runs of consecutive CPUs print as one range */
		for (i++; i < nr && ranges[i].first == last + 1; i++)
			last = ranges[i].last;
		if (first == last)
			ps_strbuf_addf(out, "%lu", first);
		else
			ps_strbuf_addf(out, "%lu-%lu", first, last);
	}
	free(ranges);
	return ps_strbuf_failed(out) ? -ENOMEM : 0;
}
